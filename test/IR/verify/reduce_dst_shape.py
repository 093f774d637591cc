# RUN: not %tl-opt %s 2>&1 | FileCheck %s
# CHECK: {{.*}}reduce_dst_shape.py:13:9: error: T.reduce_sum: dst shape (128, 4) is not src shape (128, 64) with dim 1 removed or kept as 1
# CHECK-NOT: error:
import tilelang.language as T


@T.prim_func
def main(A: T.Tensor((128, 64), "float32")):
    with T.Kernel(1, threads=128) as bx:
        S = T.alloc_fragment((128, 64), "float32")
        D = T.alloc_fragment((128, 4), "float32")
        T.copy(A, S)
        T.reduce_sum(S, D, dim=1)
