# RUN: not %tl-opt %s 2>&1 | FileCheck %s
# CHECK: {{.*}}parallel_var_count.py:10:13: error: T.Parallel has 2 extents but 1 loop variable
# CHECK-NOT: error:
import tilelang.language as T


@T.prim_func
def main(A: T.Tensor((16, 16), "float32")):
    with T.Kernel(1, threads=128) as bx:
        for i in T.Parallel(16, 16):
            A[i, 0] = 0.0
