# RUN: not %tl-opt %s 2>&1 | FileCheck %s
# CHECK: {{.*}}num_stages_negative.py:10:44: error: T.Pipelined: num_stages must be >= 0, got -1
# CHECK-NOT: error:
import tilelang.language as T


@T.prim_func
def main(A: T.Tensor((128,), "float32")):
    with T.Kernel(1, threads=128) as bx:
        for k in T.Pipelined(4, num_stages=-1):
            A[k] = 0.0
