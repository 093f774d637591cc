# RUN: not %tl-opt %s 2>&1 | FileCheck %s
# CHECK: {{.*}}redefinition.py:13:9: error: redefinition of 'A_shared'
# CHECK: {{.*}}redefinition.py:11:9: note: previous definition of 'A_shared' is here
# CHECK-NOT: error:
import tilelang.language as T


@T.prim_func
def main(A: T.Tensor((64, 64), "float16")):
    with T.Kernel(1, threads=128) as bx:
        A_shared = T.alloc_shared((64, 64), "float16")
        T.copy(A, A_shared)
        A_shared = T.alloc_shared((64, 64), "float16")
        T.copy(A_shared, A)
