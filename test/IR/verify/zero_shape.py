# RUN: not %tl-opt %s 2>&1 | FileCheck %s
# CHECK: {{.*}}zero_shape.py:10:44: error: shape dimension 2 of 'A_shared' must be positive, got 0
# CHECK-NOT: error:
import tilelang.language as T


@T.prim_func
def main(A: T.Tensor((16, 16), "float16")):
    with T.Kernel(1, threads=128) as bx:
        A_shared = T.alloc_shared((16, 16, 0), "float16")
        T.clear(A)
