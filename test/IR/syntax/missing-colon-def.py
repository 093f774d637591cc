# RUN: not %tl-opt %s 2>&1 | FileCheck %s
# CHECK: {{.*}}missing-colon-def.py:6:39: error: expected ':'
import tilelang.language as T

@T.prim_func
def main(A: T.Tensor((4,), "float32"))
    with T.Kernel(1, threads=32) as bx:
        A[0] = 1.0
