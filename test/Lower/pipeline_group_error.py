# RUN: not %tl-opt %s 2>&1 | FileCheck %s
# Issue 14: group= of T.Pipelined splits the loop body's statements into
# consecutive runs, in order; anything else is an error at the group.
import tilelang.language as T


@T.prim_func
def main(A: T.Tensor((128, 32), "float16"), B: T.Tensor((128, 32), "float16")):
    with T.Kernel(1, threads=128) as bx:
        A_s = T.alloc_shared((32, 32), "float16")
        for k in T.Pipelined(4, order=[0, 1], stage=[0, 1], group=[[1], [0]]):
            T.copy(A[k * 32, 0], A_s)
            T.copy(A_s, B[k * 32, 0])

# CHECK: pipeline_group_error.py:11:68: error: T.Pipelined: group 0: expected statement 0 next (groups are consecutive runs of the loop body's 2 statements, in order), got 1
