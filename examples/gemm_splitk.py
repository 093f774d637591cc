# Split-K GEMM: the K loop is divided among split_k blocks along z, each
# accumulating its partial product into C (float32) with T.atomic_add.
import tilelang
import tilelang.language as T


@tilelang.jit(out_idx=None)
def matmul_splitk(M=1024, N=1024, K=1024, block_M=128, block_N=128, block_K=32, split_k=4,
                  dtype="float16", accum_dtype="float32", out_dtype="float32", num_stages=2, threads=128):
    splitK = K // split_k

    @T.prim_func
    def main(A: T.Tensor((M, K), dtype), B: T.Tensor((K, N), dtype), C: T.Tensor((M, N), out_dtype)):
        with T.Kernel(T.ceildiv(N, block_N), T.ceildiv(M, block_M), split_k, threads=threads) as (bx, by, bz):
            A_shared = T.alloc_shared((block_M, block_K), dtype)
            B_shared = T.alloc_shared((block_K, block_N), dtype)
            C_local = T.alloc_fragment((block_M, block_N), accum_dtype)
            T.clear(C_local)
            for ko in T.Pipelined(T.ceildiv(splitK, block_K), num_stages=num_stages):
                T.copy(A[by * block_M, bz * splitK + ko * block_K], A_shared)
                T.copy(B[bz * splitK + ko * block_K, bx * block_N], B_shared)
                T.gemm(A_shared, B_shared, C_local)
            T.atomic_add(C[by * block_M:(by + 1) * block_M, bx * block_N:(bx + 1) * block_N], C_local)

    return main
