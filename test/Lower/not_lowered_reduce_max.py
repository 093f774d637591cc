# RUN: not %tl-opt --emit=simt %s 2>&1 | FileCheck %s
# Reductions of a fragment along a dim other than its last are not lowered
# yet (issue 7 lowers row reductions): a clear error at the op.
import tilelang.language as T


@T.prim_func
def main(A: T.Tensor((128, 128), "float32"), B: T.Tensor((128,), "float32")):
    with T.Kernel(1, threads=128) as bx:
        A_f = T.alloc_fragment((128, 128), "float32")
        B_f = T.alloc_fragment((128,), "float32")
        T.copy(A, A_f)
        T.reduce_max(A_f, B_f, dim=0)
        T.copy(B_f, B)

# CHECK: not_lowered_reduce_max.py:13:9: error: T.reduce_max of fragment 'A_f' along dim 0 is not lowered yet
# CHECK-NEXT: T.reduce_max(A_f, B_f, dim=0)
# CHECK-NEXT: ^
