# RUN: %tl-opt --passes=layout-inference %s > %t.li
# RUN: %tl-opt %s | diff - %t.li
# RUN: not %tl-opt --passes=lower-tile-ops %s 2>&1 | FileCheck %s --check-prefix=NOLAYOUT
# RUN: %tl-opt --passes=layout-inference,lower-tile-ops %s | FileCheck %s
# RUN: %tl-opt --dump-layouts -D transpose=1 %s 2>&1 | FileCheck %s --check-prefix=REPLICATED
# Pass "layout-inference" (lib/Lower/layout_infer.c): it changes no
# statement (the output is the parsed tile IR); what it decides is the
# layout attached to each fragment, which lower-tile-ops needs (without it:
# an error at the allocation) and follows.  F (64 x 64 float32, 128 threads)
# gets the T.copy's PLAN layout with vectors of 4: thread t holds rows
# 8q + t // 16, columns 4 * (t % 16) .. + 3, q < 8, in registers 4q .. 4q + 3,
# and the T.Parallel loop, indexing F by its own variables, runs on that
# partition.  Indexed differently (F[j, i]), F, which only the T.copy
# distributes, is REPLICATED instead (test/Lower/layout_conflict.py: the
# conflict when a T.Parallel loop distributes it).
import tilelang
import tilelang.language as T


@tilelang.jit(out_idx=[1])
def kernel(transpose=0):
    @T.prim_func
    def main(A: T.Tensor((64, 64), "float32"), C: T.Tensor((64, 64), "float32")):
        with T.Kernel(1, threads=128) as bx:
            F = T.alloc_fragment((64, 64), "float32")
            T.copy(A, F)
            for i, j in T.Parallel(64, 64):
                if transpose:
                    C[i, j] = F[j, i]
                else:
                    C[i, j] = F[i, j] * 2.0

    return main

# NOLAYOUT: layout-inference.py:25:13: error: fragment 'F' has no layout: lower-tile-ops needs layout-inference

# CHECK: F = T.alloc_local((32,), "float32")
# CHECK-NEXT: for vq in T.unroll(8):
# CHECK-NEXT: F[T.Ramp(vq * 4, 1, 4)] = A[vq * 8 + T.get_thread_binding(0) // 16, T.Ramp(T.get_thread_binding(0) % 16 * 4, 1, 4)]
# CHECK-NEXT: for [[Q:[a-z0-9_]+]] in T.unroll(8):
# CHECK-NEXT: for vi in T.vectorized(4):
# CHECK-NEXT: C{{\[}}[[Q]] * 8 + T.get_thread_binding(0) // 16, T.get_thread_binding(0) % 16 * 4 + vi] = F{{\[}}[[Q]] * 4 + vi] * 2.0

# REPLICATED: buffer F: local.fragment float32[64, 64]
# REPLICATED-NEXT: layout: REPLICATED (every one of the 128 threads holds all 4096 elements)
