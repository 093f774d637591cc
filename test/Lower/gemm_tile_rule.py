# RUN: not %tl-opt --emit=simt %s 2>&1 | FileCheck %s
# Issue 5 point 8: a 16x104 accumulator over 384 threads (12 warps) has no warp
# partition (m, n) with m*n = 12, 16 % (16m) == 0 and 104 % (8n) == 0: a
# compile error stating the rule and the numbers, never a wrong result.
import tilelang.language as T


@T.prim_func
def main(A: T.Tensor((16, 32), "float16"), B: T.Tensor((32, 104), "float16"), C: T.Tensor((16, 104), "float32")):
    with T.Kernel(1, threads=384) as bx:
        A_s = T.alloc_shared((16, 32), "float16")
        B_s = T.alloc_shared((32, 104), "float16")
        C_f = T.alloc_fragment((16, 104), "float32")
        T.gemm(A_s, B_s, C_f)

# CHECK: gemm_tile_rule.py:14:9: error: T.gemm cannot split the 16x104 accumulator tile over 12 warps (384 threads): the rule is m * n = 12 warps with block_M % (16 * m) == 0 and block_N % (8 * n) == 0, and no (m, n) satisfies it: (1, 12): 104 % 96 = 8; (2, 6): 16 % 32 = 16; (3, 4): 16 % 48 = 16; (4, 3): 16 % 64 = 16; (6, 2): 16 % 96 = 16; (12, 1): 16 % 192 = 16
# CHECK-NOT: error:
