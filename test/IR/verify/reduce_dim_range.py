# RUN: not %tl-opt %s 2>&1 | FileCheck %s
# CHECK: {{.*}}reduce_dim_range.py:13:32: error: T.reduce_max: dim 2 is out of range for src 'S' with 2 dimensions
# CHECK-NOT: error:
import tilelang.language as T


@T.prim_func
def main(A: T.Tensor((128, 64), "float32")):
    with T.Kernel(1, threads=128) as bx:
        S = T.alloc_fragment((128, 64), "float32")
        D = T.alloc_fragment((128,), "float32")
        T.copy(A, S)
        T.reduce_max(S, D, dim=2)
