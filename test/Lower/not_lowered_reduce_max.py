# RUN: not %tl-opt --emit=simt %s 2>&1 | FileCheck %s
# A reduction is lowered by a later issue: a clear error at the op.
import tilelang.language as T


@T.prim_func
def main(A: T.Tensor((128, 128), "float32"), B: T.Tensor((128,), "float32")):
    with T.Kernel(1, threads=128) as bx:
        A_f = T.alloc_fragment((128, 128), "float32")
        B_f = T.alloc_fragment((128,), "float32")
        T.copy(A, A_f)
        T.reduce_max(A_f, B_f, dim=1)
        T.copy(B_f, B)

# CHECK: not_lowered_reduce_max.py:12:9: error: T.reduce_max is not lowered yet
# CHECK-NEXT: T.reduce_max(A_f, B_f, dim=1)
# CHECK-NEXT: ^
