# RUN: not %tl-opt %s 2>&1 | FileCheck %s
# CHECK: {{.*}}intrinsic_arity.py:11:20: error: T.exp2 takes 1 argument, got 2
# CHECK-NOT: error:
import tilelang.language as T


@T.prim_func
def main(A: T.Tensor((128,), "float32")):
    with T.Kernel(1, threads=128) as bx:
        for i in T.Parallel(128):
            A[i] = T.exp2(A[i], 2.0)
