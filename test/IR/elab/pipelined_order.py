# RUN: not %tl-opt %s 2>&1 | FileCheck %s
# Issue 14: order= of T.Pipelined needs stage= (and the reverse); sync= is
# not supported yet.
# CHECK: {{.*}}pipelined_order.py:12:53: error: T.Pipelined: order needs stage= too
# CHECK: {{.*}}pipelined_order.py:14:47: error: 'sync' of T.Pipelined is not supported yet
import tilelang.language as T


@T.prim_func
def main(A: T.Tensor((128,), "float32")):
    with T.Kernel(1, threads=128) as bx:
        for k in T.Pipelined(4, num_stages=2, order=[0, 1]):
            A[k] = 0.0
        for k in T.Pipelined(4, num_stages=2, sync=[0, 1]):
            A[k] = 0.0
