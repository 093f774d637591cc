# RUN: not %tl-opt %s 2>&1 | FileCheck %s
# CHECK: {{.*}}tensor_needs_shape.py:10:13: error: T.Tensor needs a shape
# CHECK-NOT: error:
import tilelang.language as T


@T.prim_func
def main(A: T.Tensor((128,), "float32")):
    with T.Kernel(1, threads=128) as bx:
        v = T.Tensor(dtype="float32")
        A[bx] = 1.0
