# RUN: not %tl-opt %s 2>&1 | FileCheck %s
# CHECK: {{.*}}alloc_outside_kernel.py:9:5: error: T.alloc_fragment must be inside a T.Kernel scope
# CHECK-NOT: error:
import tilelang.language as T


@T.prim_func
def main(A: T.Tensor((16, 16), "float32")):
    F = T.alloc_fragment((16, 16), "float32")
    with T.Kernel(1, threads=128) as bx:
        A[bx, 0] = 1.0
