# GEMM kernels for benchmarks/tilelang_side.py, written in the TileLang language so that the same file
# compiles under the real TileLang (imported as a module) and under tilelang_ptx (load_file):
#   matmul     C = A @ B, A (M, K), B (K, N): the shape of TileLang's documented GEMM (a pipelined k-loop
#              of shared-memory tiles into a float32 fragment, stored straight to global memory)
#   matmul_nt  C = A @ B^T, B (N, K): the form of TileLang's autotuned GEMM example -- block
#              rasterization (T.use_swizzle, panel 10) and C staged through shared memory
import tilelang
import tilelang.language as T


@tilelang.jit(out_idx=[-1])
def matmul(M, N, K, block_M=128, block_N=256, block_K=64, dtype="float16", accum_dtype="float32", num_stages=3,
           threads=256):
    @T.prim_func
    def gemm_nn(
        A: T.Tensor((M, K), dtype),
        B: T.Tensor((K, N), dtype),
        C: T.Tensor((M, N), dtype),
    ):
        with T.Kernel(T.ceildiv(N, block_N), T.ceildiv(M, block_M), threads=threads) as (bx, by):
            A_tile = T.alloc_shared((block_M, block_K), dtype)
            B_tile = T.alloc_shared((block_K, block_N), dtype)
            acc = T.alloc_fragment((block_M, block_N), accum_dtype)
            T.clear(acc)
            for ko in T.Pipelined(T.ceildiv(K, block_K), num_stages=num_stages):
                T.copy(A[by * block_M, ko * block_K], A_tile)
                T.copy(B[ko * block_K, bx * block_N], B_tile)
                T.gemm(A_tile, B_tile, acc)
            T.copy(acc, C[by * block_M, bx * block_N])

    return gemm_nn


@tilelang.jit(out_idx=[-1])
def matmul_nt(M, N, K, block_M=128, block_N=256, block_K=64, num_stages=3, threads=256, rasterize=True,
              dtype="float16", accum_dtype="float32"):
    @T.prim_func
    def gemm_nt(
        A: T.Tensor((M, K), dtype),
        B: T.Tensor((N, K), dtype),
        C: T.Tensor((M, N), dtype),
    ):
        with T.Kernel(T.ceildiv(N, block_N), T.ceildiv(M, block_M), threads=threads) as (bx, by):
            A_tile = T.alloc_shared((block_M, block_K), dtype)
            B_tile = T.alloc_shared((block_N, block_K), dtype)
            acc = T.alloc_fragment((block_M, block_N), accum_dtype)
            C_tile = T.alloc_shared((block_M, block_N), dtype)
            T.use_swizzle(panel_size=10, enable=rasterize)
            T.clear(acc)
            for ko in T.Pipelined(T.ceildiv(K, block_K), num_stages=num_stages):
                T.copy(A[by * block_M, ko * block_K], A_tile)
                T.copy(B[bx * block_N, ko * block_K], B_tile)
                T.gemm(A_tile, B_tile, acc, transpose_B=True)
            T.copy(acc, C_tile)
            T.copy(C_tile, C[by * block_M, bx * block_N])

    return gemm_nt
