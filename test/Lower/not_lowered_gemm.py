# RUN: not %tl-opt --emit=simt %s 2>&1 | FileCheck %s
# T.gemm with B in a fragment (the "sr" form) is not lowered yet: a clear error
# at the op.  (A in a fragment, the rs form, is lowered: fa_rs_gemm.py.)
import tilelang.language as T


@T.prim_func
def main(A: T.Tensor((64, 64), "float16"), B: T.Tensor((64, 64), "float16"), C: T.Tensor((64, 64), "float32")):
    with T.Kernel(1, threads=128) as bx:
        A_s = T.alloc_shared((64, 64), "float16")
        B_f = T.alloc_fragment((64, 64), "float16")
        C_f = T.alloc_fragment((64, 64), "float32")
        T.clear(C_f)
        T.gemm(A_s, B_f, C_f)
        T.copy(C_f, C)

# CHECK: not_lowered_gemm.py:14:9: error: T.gemm is not lowered yet with B in a fragment
# CHECK-NOT: error:
