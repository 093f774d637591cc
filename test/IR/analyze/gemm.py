# RUN: %tl-opt --analyze %s | FileCheck %s
# RUN: %tl-opt --analyze -D M=256 -D N=512 -D K=96 -D block_K=32 %s | FileCheck %s --check-prefix=SMALL
# RUN: not %tl-opt --analyze --emit=simt %s 2>&1 | FileCheck %s --check-prefix=USAGE
# The work analysis (tl_module_analyze, docs/tools.md "Work analysis") of the
# GEMM of TileLang's examples/analyze/example_gemm_analyze.py, M = N = K = 1024
# with 128x128x32 tiles: a grid of 8 x 8 = 64 blocks, 32 iterations of the
# pipelined loop each.
#   flops: one 128x32 by 32x128 T.gemm per iteration, 2*128*128*32 = 1048576,
#          x 32 x 64 = 2147483648 = 2*M*N*K
#   reads: A's and B's 128x32 float16 tiles, 2 * 8192 bytes per iteration,
#          x 32 x 64 = 33554432 (each A row is read N/block_N = 8 times)
#   writes: C once, 1024*1024*2 = 2097152 (the fragment and shared copies of
#           C_local count nothing: they are not global)
# CHECK: flops=2147483648
# CHECK-NEXT: global_bytes=35651584
# CHECK-NEXT: global_read_bytes=33554432
# CHECK-NEXT: global_write_bytes=2097152
# CHECK-NEXT: gemms=2048
# CHECK-NEXT: blocks=64
# 256x512x96 with block_K 32: 2 x 4 = 8 blocks, 3 iterations; flops 2*256*512*96 = 25165824;
# reads 8 x 3 x (128*32 + 128*32) * 2 = 393216; writes 256*512*2 = 262144.
# SMALL: flops=25165824
# SMALL-NEXT: global_bytes=655360
# SMALL-NEXT: global_read_bytes=393216
# SMALL-NEXT: global_write_bytes=262144
# SMALL-NEXT: gemms=24
# SMALL-NEXT: blocks=8
# USAGE: tl-opt: error: --analyze prints the work counts instead of the IR: it takes no --passes, --emit or --dump-layouts
import tilelang.language as T


def matmul(M=1024, N=1024, K=1024, block_M=128, block_N=128, block_K=32, dtype="float16", accum_dtype="float"):
    @T.prim_func
    def main(A: T.Tensor((M, K), dtype), B: T.Tensor((N, K), dtype), C: T.Tensor((M, N), dtype)):
        with T.Kernel(T.ceildiv(N, block_N), T.ceildiv(M, block_M), threads=128) as (bx, by):
            A_shared = T.alloc_shared((block_M, block_K), dtype)
            B_shared = T.alloc_shared((block_N, block_K), dtype)
            C_local = T.alloc_fragment((block_M, block_N), accum_dtype)
            C_shared = T.alloc_shared((block_M, block_N), dtype)
            T.clear(C_local)
            for k in T.Pipelined(T.ceildiv(K, block_K), num_stages=3):
                T.copy(A[by * block_M, k * block_K], A_shared)
                T.copy(B[bx * block_N, k * block_K], B_shared)
                T.gemm(A_shared, B_shared, C_local, transpose_B=True)
            T.copy(C_local, C_shared)
            T.copy(C_shared, C[by * block_M, bx * block_N])

    return main
