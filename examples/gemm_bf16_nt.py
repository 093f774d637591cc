# GEMM with B stored N x K (transpose_B) in bfloat16, f32 accumulation,
# block rasterization for L2 reuse and a row-wise warp policy.
import tilelang
import tilelang.language as T


@tilelang.jit(out_idx=[2])
def matmul_nt(M=4096, N=4096, K=4096, block_M=128, block_N=256, block_K=32,
              dtype=T.bfloat16, accum_dtype=T.float32, num_stages=2, threads=256):
    @T.prim_func
    def main(
            A: T.Tensor((M, K), dtype),
            B: T.Tensor((N, K), dtype),
            C: T.Tensor((M, N), dtype),
    ):
        with T.Kernel(T.ceildiv(N, block_N), T.ceildiv(M, block_M), threads=threads) as (bx, by):
            A_shared = T.alloc_shared((block_M, block_K), dtype)
            B_shared = T.alloc_shared((block_N, block_K), dtype)
            C_local = T.alloc_fragment((block_M, block_N), accum_dtype)

            T.use_swizzle(panel_size=10)
            T.clear(C_local)
            for k in T.Pipelined(T.ceildiv(K, block_K), num_stages=num_stages):
                T.copy(A[by * block_M, k * block_K], A_shared)
                T.copy(B[bx * block_N, k * block_K], B_shared)
                T.gemm(A_shared, B_shared, C_local, transpose_B=True,
                       policy=T.GemmWarpPolicy.FullRow)
            T.copy(C_local, C[by * block_M, bx * block_N])

    return main
