# RUN: not %tl-opt %s 2>&1 | FileCheck %s
# CHECK: {{.*}}alloc_shared_needs_dtype.py:10:15: error: T.alloc_shared needs a shape and a dtype
# CHECK-NOT: error:
import tilelang.language as T


@T.prim_func
def main(A: T.Tensor((128,), "float32")):
    with T.Kernel(1, threads=128) as bx:
        A_s = T.alloc_shared((4,))
        A[bx] = 1.0
