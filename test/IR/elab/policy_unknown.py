# RUN: not %tl-opt %s 2>&1 | FileCheck %s
# CHECK: {{.*}}policy_unknown.py:15:55: error: unknown GemmWarpPolicy 'Diagonal' (expected Square, FullRow or FullCol)
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
        T.gemm(A_s, B_s, C_l, policy=T.GemmWarpPolicy.Diagonal)
