# RUN: not %tl-opt %s 2>&1 | FileCheck %s
# CHECK: {{.*}}gemm_transpose_a.py:13:9: error: T.gemm: with transpose_A=True, A (32, 128) gives M=128, K=32, but B (64, 128) has K=64
# CHECK-NOT: error:
import tilelang.language as T


@T.prim_func
def main(A: T.Tensor((1024, 1024), "float16")):
    with T.Kernel(8, threads=128) as bx:
        A_s = T.alloc_shared((32, 128), "float16")
        B_s = T.alloc_shared((64, 128), "float16")
        C_l = T.alloc_fragment((128, 128), "float32")
        T.gemm(A_s, B_s, C_l, transpose_A=True)
