# T.gemm with a fragment operand (issue 14, "T.gemm forms"), in the shape of
# TileLang's kernel GEMM tests for gemm_sr / gemm_rs: each k-tile of A and B
# is copied to shared memory, then one of them on into a fragment
# (form="sr": B_local, form="rs": A_local), and T.gemm reads that fragment.
# The sr form, and the rs form whose policy splits N over several warps
# (policy 0 = Square, 2 = FullCol), go through the gemm-stage pass (a shared
# copy of the fragment); the rs form with policy 1 = FullRow reads A from
# registers (lower_frag.c).  Transposes, dtypes, tiles and stages are
# parameters; out_idx = C.
import tilelang
import tilelang.language as T


@tilelang.jit(out_idx=-1)
def matmul(M=512, N=1024, K=768, block_M=128, block_N=128, block_K=32, form="sr", trans_A=False, trans_B=True,
           dtype="float16", out_dtype="float16", accum_dtype="float16", num_stages=0, threads=128, policy=0):
    A_shape = (K, M) if trans_A else (M, K)
    B_shape = (N, K) if trans_B else (K, N)
    A_tile = (block_K, block_M) if trans_A else (block_M, block_K)
    B_tile = (block_N, block_K) if trans_B else (block_K, block_N)
    pol = T.GemmWarpPolicy.FullRow if policy == 1 else T.GemmWarpPolicy.FullCol if policy == 2 else T.GemmWarpPolicy.Square

    @T.prim_func
    def main(A: T.Tensor(A_shape, dtype), B: T.Tensor(B_shape, dtype), C: T.Tensor((M, N), out_dtype)):
        with T.Kernel(T.ceildiv(N, block_N), T.ceildiv(M, block_M), threads=threads) as (bx, by):
            A_s = T.alloc_shared(A_tile, dtype)
            B_s = T.alloc_shared(B_tile, dtype)
            A_f = T.alloc_fragment(A_tile, dtype)
            B_f = T.alloc_fragment(B_tile, dtype)
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
                if form == "sr":
                    T.copy(B_s, B_f)
                    T.gemm(A_s, B_f, acc, trans_A, trans_B, policy=pol)
                else:
                    T.copy(A_s, A_f)
                    T.gemm(A_f, B_s, acc, trans_A, trans_B, policy=pol)
            T.copy(acc, C[by * block_M, bx * block_N])
    return main
