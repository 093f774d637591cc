# RUN: not %tl-opt %s 2>&1 | FileCheck %s
# CHECK: {{.*}}grid_zero.py:9:19: error: T.Kernel: grid dimension 0 must be positive, got 0
# CHECK-NOT: error:
import tilelang.language as T


@T.prim_func
def main(A: T.Tensor((128,), "float32")):
    with T.Kernel(0, threads=128) as bx:
        A[bx] = 0.0
