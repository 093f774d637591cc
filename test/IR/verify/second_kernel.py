# RUN: not %tl-opt %s 2>&1 | FileCheck %s
# CHECK: {{.*}}second_kernel.py:11:5: error: only one T.Kernel per prim_func is supported
# CHECK-NOT: error:
import tilelang.language as T


@T.prim_func
def main(A: T.Tensor((128,), "float32")):
    with T.Kernel(1, threads=128) as bx:
        A[bx] = 0.0
    with T.Kernel(2, threads=128) as by:
        A[by] = 1.0
