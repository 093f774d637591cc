# RUN: %tl-opt --emit=simt -D M=1023 -D N=1025 %examples/cast_copy.py | FileCheck %s
# 1023x1025 is not a multiple of the 64x64 tile: every global access is
# predicated (reads pad 0, writes skipped).  Rows of 1025 floats are not
# 16-byte aligned, so the accesses are scalar (no T.Ramp).

# CHECK: with T.Kernel(17, 16, threads=128) as (bx, by):
# CHECK-NEXT: tile = T.alloc_local((32,), "bfloat16")
# CHECK-NEXT: for [[Q:vq[_0-9]*]] in T.unroll(8):
# CHECK-NEXT: for [[L:vo[_0-9]*]] in T.unroll(4):
# CHECK-NEXT: if by * 64 + ([[Q]] * 8 + T.get_thread_binding(0) // 16) < 1023 and bx * 64 + (T.get_thread_binding(0) % 16 * 4 + [[L]]) < 1025:
# CHECK-NEXT: tile[[[Q]] * 4 + [[L]]] = T.Cast("bfloat16", A[by * 64 + ([[Q]] * 8 + T.get_thread_binding(0) // 16), bx * 64 + (T.get_thread_binding(0) % 16 * 4 + [[L]])])
# CHECK-NEXT: else:
# CHECK-NEXT: tile[[[Q]] * 4 + [[L]]] = T.bfloat16(0.0)
# CHECK: for [[Q2:vq[_0-9]*]] in T.unroll(8):
# CHECK-NEXT: for [[L2:vo[_0-9]*]] in T.unroll(4):
# CHECK-NEXT: if by * 64 + ([[Q2]] * 8 + T.get_thread_binding(0) // 16) < 1023 and bx * 64 + (T.get_thread_binding(0) % 16 * 4 + [[L2]]) < 1025:
# CHECK-NEXT: B[by * 64 + ([[Q2]] * 8 + T.get_thread_binding(0) // 16), bx * 64 + (T.get_thread_binding(0) % 16 * 4 + [[L2]])] = tile[[[Q2]] * 4 + [[L2]]]
# CHECK-NOT: else:
# CHECK-NOT: T.Ramp
