# RUN: not %tl-opt %s 2>&1 | FileCheck %s
# CHECK: {{.*}}gemm_unknown_keyword.py:15:31: error: unknown keyword 'transpose_C' for T.gemm
# CHECK-NOT: error:
import tilelang.language as T


@T.prim_func
def main(A: T.Tensor((64, 32), "float16"), B: T.Tensor((32, 64), "float16")):
    with T.Kernel(1, threads=128) as bx:
        A_s = T.alloc_shared((64, 32), "float16")
        B_s = T.alloc_shared((32, 64), "float16")
        C_l = T.alloc_fragment((64, 64), "float32")
        T.copy(A, A_s)
        T.copy(B, B_s)
        T.gemm(A_s, B_s, C_l, transpose_C=True)
