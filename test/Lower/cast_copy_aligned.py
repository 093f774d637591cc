# RUN: %tl-opt --emit=simt -D M=1000 -D N=1024 %examples/cast_copy.py | FileCheck %s
# Rows of 1024 keep every 64-wide tile 16-byte aligned: float4 reads, a
# 4-lane bfloat16 cast and store; only the row bound (1000) is checked.

# CHECK: if by * 64 + ([[Q:vq[_0-9]*]] * 8 + T.get_thread_binding(0) // 16) < 1000:
# CHECK-NEXT: tile[T.Ramp([[Q]] * 4, 1, 4)] = T.Cast("bfloat16x4", A[by * 64 + ([[Q]] * 8 + T.get_thread_binding(0) // 16), T.Ramp(bx * 64 + T.get_thread_binding(0) % 16 * 4, 1, 4)])
# CHECK-NEXT: else:
# CHECK-NEXT: tile[T.Ramp([[Q]] * 4, 1, 4)] = T.Broadcast(T.bfloat16(0.0), 4)
# CHECK: if by * 64 + ([[Q2:vq[_0-9]*]] * 8 + T.get_thread_binding(0) // 16) < 1000:
# CHECK-NEXT: B[by * 64 + ([[Q2]] * 8 + T.get_thread_binding(0) // 16), T.Ramp(bx * 64 + T.get_thread_binding(0) % 16 * 4, 1, 4)] = tile[T.Ramp([[Q2]] * 4, 1, 4)]
