# RUN: not %tl-opt %s 2>&1 | FileCheck %s
# CHECK: {{.*}}assign_scalar_param.py:10:9: error: cannot assign to scalar parameter 'n'
# CHECK-NOT: error:
import tilelang.language as T


@T.prim_func
def main(A: T.Tensor((128,), "float32"), n: T.int32):
    with T.Kernel(1, threads=128) as bx:
        n = n + 1
        A[bx] = T.Cast("float32", n)
