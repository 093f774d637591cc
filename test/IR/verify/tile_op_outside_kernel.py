# RUN: not %tl-opt %s 2>&1 | FileCheck %s
# CHECK: {{.*}}tile_op_outside_kernel.py:9:5: error: T.clear must be inside a T.Kernel scope
# CHECK-NOT: error:
import tilelang.language as T


@T.prim_func
def main(A: T.Tensor((16, 16), "float32")):
    T.clear(A)
    with T.Kernel(1, threads=128) as bx:
        A[bx, 0] = 1.0
