# RUN: not %tl-opt %s 2>&1 | FileCheck %s
# CHECK: {{.*}}undefined_name.py:11:27: error: name 'scale' is not defined
# CHECK-NOT: error:
import tilelang.language as T


@T.prim_func
def main(A: T.Tensor((128,), "float32")):
    with T.Kernel(1, threads=128) as bx:
        for i in T.Parallel(128):
            A[i] = A[i] * scale
