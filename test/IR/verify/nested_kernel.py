# RUN: not %tl-opt %s 2>&1 | FileCheck %s
# CHECK: {{.*}}nested_kernel.py:10:9: error: nested T.Kernel is not supported
# CHECK-NOT: error:
import tilelang.language as T


@T.prim_func
def main(A: T.Tensor((128,), "float32")):
    with T.Kernel(1, threads=128) as bx:
        with T.Kernel(2, threads=64) as by:
            A[by] = 0.0
