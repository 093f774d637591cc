# RUN: not %tl-opt %s 2>&1 | FileCheck %s
# CHECK: {{.*}}alloc_var_needs_dtype.py:10:13: error: T.alloc_var needs a dtype
# CHECK-NOT: error:
import tilelang.language as T


@T.prim_func
def main(A: T.Tensor((128,), "float32")):
    with T.Kernel(1, threads=128) as bx:
        v = T.alloc_var(init=0)
        A[bx] = 1.0
