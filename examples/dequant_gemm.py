# A weight-only quantized GEMM (the W8A16 form of LLM inference): C = A · dequant(W)ᵀ, with
# A float16 activations (M, K), W int8 weights stored as (N, K) (one output channel per row), and a
# float16 scale per output channel.  Each block loads its int8 weight tile into shared memory (half the
# bytes of a float16 tile), dequantizes it there (w · scale[n], exact in float16 for |w| ≤ 127 and a
# power-of-two scale, else rounded once as float16 multiplication rounds), and multiplies with T.gemm on
# the tensor cores (B transposed: B is read as (N, K)), accumulating in float32.
#   tl-run --device=cpu --check -D M=128 -D N=128 -D K=128 examples/dequant_gemm.py
#   tl-run --device=cuda --check examples/dequant_gemm.py
import tilelang
import tilelang.language as T


@tilelang.jit(out_idx=-1)
def dequant_matmul(M=512, N=1024, K=1024, block_M=128, block_N=128, block_K=64,
                   num_stages=3, threads=128,
                   in_dtype="float16", w_dtype="int8", accum_dtype="float32"):
    @T.prim_func
    def main(A: T.Tensor((M, K), in_dtype), W: T.Tensor((N, K), w_dtype),
             Scale: T.Tensor((N,), in_dtype), C: T.Tensor((M, N), in_dtype)):
        with T.Kernel(T.ceildiv(N, block_N), T.ceildiv(M, block_M), threads=threads) as (bx, by):
            A_shared = T.alloc_shared((block_M, block_K), in_dtype)
            W_shared = T.alloc_shared((block_N, block_K), w_dtype)
            B_shared = T.alloc_shared((block_N, block_K), in_dtype)
            C_local = T.alloc_fragment((block_M, block_N), accum_dtype)
            T.clear(C_local)
            for ko in T.Pipelined(T.ceildiv(K, block_K), num_stages=num_stages):
                T.copy(A[by * block_M, ko * block_K], A_shared)
                T.copy(W[bx * block_N, ko * block_K], W_shared)
                for n, k in T.Parallel(block_N, block_K):
                    B_shared[n, k] = T.cast(W_shared[n, k], in_dtype) * Scale[bx * block_N + n]
                T.gemm(A_shared, B_shared, C_local, transpose_B=True)
            T.copy(C_local, C[by * block_M, bx * block_N])

    return main
