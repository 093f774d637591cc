# RUN: not %tl-opt %s 2>&1 | FileCheck %s
# CHECK: {{.*}}index_count.py:10:9: error: 'A' has 1 dimension but is indexed with 2 indices
# CHECK-NOT: error:
import tilelang.language as T


@T.prim_func
def main(A: T.Tensor((128,), "float32")):
    with T.Kernel(1, threads=128) as bx:
        A[bx, 0] = 0.0
