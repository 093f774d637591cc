# A GEMM with TileLang's autotune decorator: 288 tile configurations
# (block_M, block_N in {64, 128, 256}, block_K in {32, 64}, num_stages in
# {2, 3, 4, 5}, threads in {128, 256}, rasterization off or on), the space of
# issue 16's acceptance 4.  `tl-run --tune` compiles them on every CPU core,
# checks each against the given configuration's output, times it with the
# decorator's warmup/rep, and caches the winner per problem and device:
#   tl-run --tune -D M=4096 -D N=4096 -D K=4096 examples/tune/gemm_autotune.py
# Configurations the compiler cannot build (shared memory over the limit:
# 256x256x64 tiles in 5 stages need 320 KB) are reported and skipped.
import itertools

import tilelang
import tilelang.language as T


def get_configs():
    block_M = [64, 128, 256]
    block_N = [64, 128, 256]
    block_K = [32, 64]
    num_stages = [2, 3, 4, 5]
    threads = [128, 256]
    rasterization = [False, True]
    keys = ("block_M", "block_N", "block_K", "num_stages", "threads", "enable_rasterization")
    return [dict(zip(keys, values))
            for values in itertools.product(block_M, block_N, block_K, num_stages, threads, rasterization)]


@tilelang.autotune(configs=get_configs(), warmup=3, rep=10)
@tilelang.jit(out_idx=[-1])
def matmul(M=4096, N=4096, K=4096, block_M=128, block_N=128, block_K=32, num_stages=3, threads=128,
           enable_rasterization=False, dtype="float16", accum_dtype="float32"):
    @T.prim_func
    def main(A: T.Tensor((M, K), dtype), B: T.Tensor((K, N), dtype), C: T.Tensor((M, N), dtype)):
        with T.Kernel(T.ceildiv(N, block_N), T.ceildiv(M, block_M), threads=threads) as (bx, by):
            A_shared = T.alloc_shared((block_M, block_K), dtype)
            B_shared = T.alloc_shared((block_K, block_N), dtype)
            C_local = T.alloc_fragment((block_M, block_N), accum_dtype)
            if enable_rasterization:
                T.use_swizzle(panel_size=10)
            T.clear(C_local)
            for ko in T.Pipelined(T.ceildiv(K, block_K), num_stages=num_stages):
                T.copy(A[by * block_M, ko * block_K], A_shared)
                T.copy(B[ko * block_K, bx * block_N], B_shared)
                T.gemm(A_shared, B_shared, C_local)
            T.copy(C_local, C[by * block_M, bx * block_N])

    return main
