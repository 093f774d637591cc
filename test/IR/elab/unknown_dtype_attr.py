# RUN: not %tl-opt %s 2>&1 | FileCheck %s
# CHECK: {{.*}}unknown_dtype_attr.py:10:40: error: unknown dtype 'T.float19'
# CHECK-NOT: error:
import tilelang.language as T


@T.prim_func
def main(A: T.Tensor((128,), "float32")):
    with T.Kernel(1, threads=128) as bx:
        X = T.alloc_fragment((128,), T.float19)
        T.copy(A, X)
