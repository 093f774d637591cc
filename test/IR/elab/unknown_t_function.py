# RUN: not %tl-opt %s 2>&1 | FileCheck %s
# CHECK: {{.*}}unknown_t_function.py:11:22: error: unknown name 'T.expp2'
# CHECK-NOT: error:
import tilelang.language as T


@T.prim_func
def main(A: T.Tensor((128,), "float32")):
    with T.Kernel(1, threads=128) as bx:
        for i in T.Parallel(128):
            A[i] = T.expp2(A[i])
