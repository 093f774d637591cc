# RUN: not %tl-opt %s 2>&1 | FileCheck %s
# CHECK: {{.*}}let_redefinition.py:12:9: error: redefinition of 'row'
# CHECK: {{.*}}let_redefinition.py:11:9: note: previous definition of 'row' is here
# CHECK-NOT: error:
import tilelang.language as T


@T.prim_func
def main(A: T.Tensor((128,), "float32")):
    with T.Kernel(1, threads=128) as bx:
        row = bx * 2
        row = bx * 4
        A[row] = 0.0
