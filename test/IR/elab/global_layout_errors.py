# A T.Layout of a global buffer that is not one-to-one, not made of
# bounded index arithmetic, or not a T.Layout; a T.view of a buffer that has
# one: located errors, never a silent permutation.
# RUN: not %tl-opt -D case=0 %s 2>&1 | FileCheck %s --check-prefix=C0
# RUN: not %tl-opt -D case=1 %s 2>&1 | FileCheck %s --check-prefix=C1
# RUN: not %tl-opt -D case=2 %s 2>&1 | FileCheck %s --check-prefix=C2
# RUN: not %tl-opt -D case=3 %s 2>&1 | FileCheck %s --check-prefix=C3
# RUN: not %tl-opt -D case=4 %s 2>&1 | FileCheck %s --check-prefix=C4
# C0: global_layout_errors.py:[[@LINE+15]]:39: error: T.annotate_layout: the T.Layout of 'B' maps its 512 elements into 256 places; a global buffer's layout must be one-to-one
# C1: global_layout_errors.py:[[@LINE+16]]:39: error: T.annotate_layout: index 0 of the T.Layout of 'B' is not a bounded non-negative index
# C2: global_layout_errors.py:[[@LINE+17]]:39: error: T.annotate_layout: the layout of the global buffer 'B' must be a T.Layout(shape, forward_fn), got string 'x'
# C3: global_layout_errors.py:[[@LINE+19]]:28: error: T.view of 'B', which has a T.Layout, is not supported yet
# C4: global_layout_errors.py:[[@LINE+22]]:24: error: T.fill of a region of 'B', which has a T.Layout, is not supported yet (T.copy, element accesses and element atomics are)
import tilelang
import tilelang.language as T


@tilelang.jit
def k(M=16, N=32, case=0):
    @T.prim_func
    def main(A: T.Tensor((M, N), "float32"), B: T.Tensor((M, N), "float32")):
        with T.Kernel(1, threads=128) as bx:
            if case == 0:
                T.annotate_layout({B: T.Layout(B.shape, lambda i, j: [i, j // 2])})
            elif case == 1:
                T.annotate_layout({B: T.Layout(B.shape, lambda i, j: [i ^ j, j])})
            elif case == 2:
                T.annotate_layout({B: T.Layout(B.shape, lambda i, j: [i, j]) if False else "x"})
            elif case == 3:
                T.annotate_layout({B: T.Layout(B.shape, lambda i, j: [j, i])})
                V = T.view(B, (N, M))
                V[0, 0] = 1.0
            else:
                T.annotate_layout({B: T.Layout(B.shape, lambda i, j: [j, i])})
                T.fill(B, 0.0)
            for i, j in T.Parallel(M, N):
                B[i, j] = A[i, j]

    return main
