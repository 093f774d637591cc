# RUN: %tl-opt --emit=simt %examples/elementwise_add.py | FileCheck %s
# 32x128 f32 fragments over 128 threads: PLAN layout with v = 4 (float4), 8
# vectors per thread; the grid covers 1024x1024 exactly, so no guards; the
# T.Parallel add runs as T.vectorized(4) over the registers.

# CHECK: with T.Kernel(8, 32, threads=128) as (bx, by):
# CHECK-NEXT: A_frag = T.alloc_local((32,), "float32")
# CHECK-NEXT: B_frag = T.alloc_local((32,), "float32")
# CHECK-NEXT: C_frag = T.alloc_local((32,), "float32")
# CHECK-NEXT: for [[Q:vq[_0-9]*]] in T.unroll(8):
# CHECK-NEXT: A_frag[T.Ramp([[Q]] * 4, 1, 4)] = A[by * 32 + ([[Q]] * 4 + T.get_thread_binding(0) // 32), T.Ramp(bx * 128 + T.get_thread_binding(0) % 32 * 4, 1, 4)]
# CHECK: B_frag[T.Ramp(
# CHECK-NEXT: for [[Q2:vq[_0-9]*]] in T.unroll(8):
# CHECK-NEXT: for [[I:vi[_0-9]*]] in T.vectorized(4):
# CHECK-NEXT: C_frag[[[Q2]] * 4 + [[I]]] = A_frag[[[Q2]] * 4 + [[I]]] + B_frag[[[Q2]] * 4 + [[I]]]
# CHECK: for [[Q3:vq[_0-9]*]] in T.unroll(8):
# CHECK-NEXT: C[by * 32 + ([[Q3]] * 4 + T.get_thread_binding(0) // 32), T.Ramp(bx * 128 + T.get_thread_binding(0) % 32 * 4, 1, 4)] = C_frag[T.Ramp([[Q3]] * 4, 1, 4)]
# CHECK-NOT: if
# CHECK-NOT: T.copy
