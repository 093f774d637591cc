# Chained GEMM (issue 19, the rs form of T.gemm on the Hopper path): for each
# block of block_M rows, O = (A · Bᵀ) · C with S = A · Bᵀ accumulated in
# float32 per block of block_N columns, cast to float16 in a fragment (P) and
# fed to the second T.gemm as its A operand from registers -- FlashAttention's
# two GEMMs without the softmax.  A (M x K) is copied once before the loop, B
# (N x K) and C (N x D) once per iteration.  On sm_90a with block_M = 64 x
# (threads / 128) the loop takes warp_specialize.c's attention form: S = A·Bᵀ
# as wgmma (ss), O += P·C as wgmma with P in registers (T.ptx_wgmma_rs), TMA
# loads from a producer warpgroup.  Used by test/Lower/chained-gemm-hopper.test
# (CPU executor against the reference evaluator) and test/GPU/test_attention_hopper.c.
import tilelang
import tilelang.language as T


@tilelang.jit(out_idx=[3])
def chained_gemm(M=256, N=256, K=64, D=64, block_M=128, block_N=64, num_stages=2, threads=256,
                 dtype="float16"):
    @T.prim_func
    def main(A: T.Tensor((M, K), dtype), B: T.Tensor((N, K), dtype), C: T.Tensor((N, D), dtype),
             O: T.Tensor((M, D), "float32")):
        with T.Kernel(T.ceildiv(M, block_M), threads=threads) as bx:
            A_shared = T.alloc_shared((block_M, K), dtype)
            B_shared = T.alloc_shared((block_N, K), dtype)
            C_shared = T.alloc_shared((block_N, D), dtype)
            S = T.alloc_fragment((block_M, block_N), "float32")
            P = T.alloc_fragment((block_M, block_N), dtype)
            acc = T.alloc_fragment((block_M, D), "float32")
            T.copy(A[bx * block_M:(bx + 1) * block_M, :], A_shared)
            T.clear(acc)
            for j in T.Pipelined(T.ceildiv(N, block_N), num_stages=num_stages):
                T.copy(B[j * block_N:(j + 1) * block_N, :], B_shared)
                T.clear(S)
                T.gemm(A_shared, B_shared, S, transpose_B=True, policy=T.GemmWarpPolicy.FullRow)
                T.copy(S, P)
                T.copy(C[j * block_N:(j + 1) * block_N, :], C_shared)
                T.gemm(P, C_shared, acc, policy=T.GemmWarpPolicy.FullRow)
            T.copy(acc, O[bx * block_M:(bx + 1) * block_M, :])

    return main
