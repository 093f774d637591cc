# GEMM with every knob of T.gemm exposed as a factory parameter, for the GPU
# tests (test/GPU/test_gemm.c) and the benchmark (benchmarks/gemm):
# trans_A (A stored K x M), trans_B (B stored N x K, examples/gemm_bf16_nt.py
# style), policy 0 = Square, 1 = FullRow, 2 = FullCol, swizzle_panel > 0
# adds T.use_swizzle(panel_size=swizzle_panel).  Otherwise the kernel of
# examples/gemm.py.
import tilelang
import tilelang.language as T


@tilelang.jit(out_idx=-1)
def matmul(M=1024, N=1024, K=1024, block_M=128, block_N=128, block_K=32, dtype="float16",
           out_dtype="float16", accum_dtype="float32", num_stages=3, threads=128, trans_A=False,
           trans_B=False, policy=0, swizzle_panel=0):
    if trans_A:
        A_shape = (K, M)
        A_shared_shape = (block_K, block_M)
    else:
        A_shape = (M, K)
        A_shared_shape = (block_M, block_K)
    if trans_B:
        B_shape = (N, K)
        B_shared_shape = (block_N, block_K)
    else:
        B_shape = (K, N)
        B_shared_shape = (block_K, block_N)

    @T.prim_func
    def main(A: T.Tensor(A_shape, dtype), B: T.Tensor(B_shape, dtype), C: T.Tensor((M, N), out_dtype)):
        with T.Kernel(T.ceildiv(N, block_N), T.ceildiv(M, block_M), threads=threads) as (bx, by):
            A_shared = T.alloc_shared(A_shared_shape, dtype)
            B_shared = T.alloc_shared(B_shared_shape, dtype)
            C_local = T.alloc_fragment((block_M, block_N), accum_dtype)
            if swizzle_panel > 0:
                T.use_swizzle(panel_size=swizzle_panel)
            T.clear(C_local)
            for ko in T.Pipelined(T.ceildiv(K, block_K), num_stages=num_stages):
                if trans_A:
                    T.copy(A[ko * block_K, by * block_M], A_shared)
                else:
                    T.copy(A[by * block_M, ko * block_K], A_shared)
                if trans_B:
                    T.copy(B[bx * block_N, ko * block_K], B_shared)
                else:
                    T.copy(B[ko * block_K, bx * block_N], B_shared)
                if policy == 1:
                    T.gemm(A_shared, B_shared, C_local, transpose_A=trans_A, transpose_B=trans_B,
                           policy=T.GemmWarpPolicy.FullRow)
                elif policy == 2:
                    T.gemm(A_shared, B_shared, C_local, transpose_A=trans_A, transpose_B=trans_B,
                           policy=T.GemmWarpPolicy.FullCol)
                else:
                    T.gemm(A_shared, B_shared, C_local, transpose_A=trans_A, transpose_B=trans_B,
                           policy=T.GemmWarpPolicy.Square)
            T.copy(C_local, C[by * block_M, bx * block_N])

    return main
