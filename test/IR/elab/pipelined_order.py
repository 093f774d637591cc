# RUN: not %tl-opt %s 2>&1 | FileCheck %s
# CHECK: {{.*}}pipelined_order.py:10:47: error: 'order' of T.Pipelined is not supported yet
# CHECK-NOT: error:
import tilelang.language as T


@T.prim_func
def main(A: T.Tensor((128,), "float32")):
    with T.Kernel(1, threads=128) as bx:
        for k in T.Pipelined(4, num_stages=2, order=[0, 1]):
            A[k] = 0.0
