# RUN: not %tl-opt %s 2>&1 | FileCheck %s
# T.atomic_addx2 / x4 need L consecutive elements on both sides, and a global
# destination that is global or shared as T.atomic_add does (the messages name the op).
import tilelang.language as T


@T.prim_func
def main(A: T.Tensor((8, 8), "float16"), B: T.Tensor((8, 8), "float16")):
    with T.Kernel(1, threads=32) as bx:
        S = T.alloc_fragment((8, 8), "float16")
        for i, j in T.Parallel(8, 4):
            T.atomic_addx2(B[i, j * 2], 1.0)
            T.atomic_addx4(B[i, 0:2], A[i, 0:2])
            T.atomic_max(S[i, j], A[i, j])

# CHECK: atomic_addx_errors.py:12:41: error: T.atomic_addx2: the value must be 2 consecutive elements of a buffer (X[i, j] or X[i, j:j+2])
# CHECK: atomic_addx_errors.py:13:28: error: T.atomic_addx4: the destination must be 4 consecutive elements of a buffer (X[i, j] or X[i, j:j+4])
# CHECK: atomic_addx_errors.py:13:39: error: T.atomic_addx4: the value must be 4 consecutive elements
# CHECK: atomic_addx_errors.py:14:26: error: T.atomic_max: destination 'S' must be a global or shared buffer, but it is local.fragment
