# T.gemm over the mma.sync instructions beyond f16/bf16 (issue 14): float32
# operands computed as tf32 (m16n8k8, operands rounded by cvt.rna.tf32.f32),
# int8/uint8 into int32 (m16n8k32), float64 (m8n8k4).  The kernel of TileLang's
# kernel GEMM tests (A M x K or K x M, B K x N or N x K, a pipelined k loop of
# shared tiles, a fragment accumulator): in_dtype / accum_dtype / out_dtype and
# the transposes are parameters, so one file covers nn, nt and tn of each type.
# tl-run --check compares the CPU SIMT executor with the reference evaluator,
# which rounds and accumulates as the instruction does (bit for bit).
import tilelang
import tilelang.language as T


@tilelang.jit(out_idx=-1)
def matmul(M=512, N=1024, K=768, block_M=64, block_N=128, block_K=32, trans_A=False, trans_B=False,
           in_dtype="float32", out_dtype="float32", accum_dtype="float32", num_stages=2, threads=128):
    A_shape = (K, M) if trans_A else (M, K)
    B_shape = (N, K) if trans_B else (K, N)
    A_tile = (block_K, block_M) if trans_A else (block_M, block_K)
    B_tile = (block_N, block_K) if trans_B else (block_K, block_N)

    @T.prim_func
    def main(A: T.Tensor(A_shape, in_dtype), B: T.Tensor(B_shape, in_dtype), C: T.Tensor((M, N), out_dtype)):
        with T.Kernel(T.ceildiv(N, block_N), T.ceildiv(M, block_M), threads=threads) as (bx, by):
            A_s = T.alloc_shared(A_tile, in_dtype)
            B_s = T.alloc_shared(B_tile, in_dtype)
            acc = T.alloc_fragment((block_M, block_N), accum_dtype)
            T.clear(acc)
            for k in T.Pipelined(T.ceildiv(K, block_K), num_stages=num_stages):
                if trans_A:
                    T.copy(A[k * block_K, by * block_M], A_s)
                else:
                    T.copy(A[by * block_M, k * block_K], A_s)
                if trans_B:
                    T.copy(B[bx * block_N, k * block_K], B_s)
                else:
                    T.copy(B[k * block_K, bx * block_N], B_s)
                T.gemm(A_s, B_s, acc, trans_A, trans_B)
            T.copy(acc, C[by * block_M, bx * block_N])
    return main
