# RUN: not %tl-opt %s 2>&1 | FileCheck %s
# CHECK: {{.*}}kernel_unknown_keyword.py:9:35: error: unknown keyword 'prelude' for T.Kernel
# CHECK-NOT: error:
import tilelang.language as T


@T.prim_func
def main(A: T.Tensor((128,), "float32")):
    with T.Kernel(1, threads=128, prelude="") as bx:
        A[bx] = 0.0
