# RUN: not %tl-opt %s 2>&1 | FileCheck %s
# CHECK: {{.*}}alloc_shared_shape_twice.py:10:47: error: T.alloc_shared got multiple values for argument 'shape'
# CHECK-NOT: error:
import tilelang.language as T


@T.prim_func
def main(A: T.Tensor((128,), "float32")):
    with T.Kernel(1, threads=128) as bx:
        A_s = T.alloc_shared((4,), "float32", shape=(4,))
        A[bx] = 1.0
