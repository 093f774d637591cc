# fp8 GEMM with A and B of different float8 formats (issue 14): A (M x K) in
# dtype_a, B stored N x K in dtype_b, float32 accumulate and output -- the
# mixed mma.sync forms m16n8k32 .f32.e4m3.e5m2.f32 / .e5m2.e4m3 (sm_89+,
# PTX ISA 8.4).  For the unit test test_gemm_types (both CPU models), the
# lit test NVPTX/mma-types.test and ptxas/gemm_types.
import tilelang
import tilelang.language as T


@tilelang.jit(out_idx=-1)
def matmul(M=256, N=256, K=256, block_M=128, block_N=128, block_K=64, dtype_a="float8_e4m3",
           dtype_b="float8_e5m2", num_stages=2, threads=128):

    @T.prim_func
    def main(A: T.Tensor((M, K), dtype_a), B: T.Tensor((N, K), dtype_b), C: T.Tensor((M, N), "float32")):
        with T.Kernel(T.ceildiv(N, block_N), T.ceildiv(M, block_M), threads=threads) as (bx, by):
            A_shared = T.alloc_shared((block_M, block_K), dtype_a)
            B_shared = T.alloc_shared((block_N, block_K), dtype_b)
            C_local = T.alloc_fragment((block_M, block_N), "float32")
            T.clear(C_local)
            for ko in T.Pipelined(T.ceildiv(K, block_K), num_stages=num_stages):
                T.copy(A[by * block_M, ko * block_K], A_shared)
                T.copy(B[bx * block_N, ko * block_K], B_shared)
                T.gemm(A_shared, B_shared, C_local, transpose_B=True)
            T.copy(C_local, C[by * block_M, bx * block_N])

    return main
