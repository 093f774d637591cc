# RUN: not %tl-opt --emit=simt %s 2>&1 | FileCheck %s
# Issue 14: batch= of T.reduce_* is a scheduling hint (the result does not
# depend on it); a value below 1 is an error at the keyword.
import tilelang.language as T


@T.prim_func
def main(A: T.Tensor((128, 128), "float32"), B: T.Tensor((128,), "float32")):
    with T.Kernel(1, threads=128) as bx:
        A_f = T.alloc_fragment((128, 128), "float32")
        B_f = T.alloc_fragment((128,), "float32")
        T.copy(A, A_f)
        T.reduce_max(A_f, B_f, dim=0, batch=0)
        T.copy(B_f, B)

# CHECK: reduce_batch_error.py:13:45: error: T.reduce_max: batch must be >= 1, got 0
