# A small GEMM with TileLang's autotune decorator (test/Runtime/tune.test):
# 4 configs, two of which need more shared memory than sm_80 has.
import itertools

import tilelang
import tilelang.language as T


def get_configs():
    return [{"block_M": m, "block_K": k, "num_stages": s}
            for m, k, s in itertools.product([64, 256], [32, 256], [2])]


@tilelang.autotune(configs=get_configs(), warmup=1, rep=3)
@tilelang.jit(out_idx=-1)
def matmul(M=256, N=256, K=256, block_M=64, block_N=128, block_K=32, num_stages=2, threads=128):
    @T.prim_func
    def main(A: T.Tensor((M, K), "float16"), B: T.Tensor((K, N), "float16"), C: T.Tensor((M, N), "float16")):
        with T.Kernel(T.ceildiv(N, block_N), T.ceildiv(M, block_M), threads=threads) as (bx, by):
            A_shared = T.alloc_shared((block_M, block_K), "float16")
            B_shared = T.alloc_shared((block_K, block_N), "float16")
            C_local = T.alloc_fragment((block_M, block_N), "float32")
            T.clear(C_local)
            for ko in T.Pipelined(T.ceildiv(K, block_K), num_stages=num_stages):
                T.copy(A[by * block_M, ko * block_K], A_shared)
                T.copy(B[ko * block_K, bx * block_N], B_shared)
                T.gemm(A_shared, B_shared, C_local)
            T.copy(C_local, C[by * block_M, bx * block_N])

    return main
