# RUN: not %tl-opt %s 2>&1 | FileCheck %s
# CHECK: {{.*}}threads_negative.py:9:30: error: T.Kernel: threads must be positive, got -32
# CHECK-NOT: error:
import tilelang.language as T


@T.prim_func
def main(A: T.Tensor((128,), "float32")):
    with T.Kernel(1, threads=-32) as bx:
        A[bx] = 0.0
