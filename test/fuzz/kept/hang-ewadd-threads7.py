# C = A + B over 2-D tiles held in fragments.
import tilelang
import tilelang.language as T


@tilelang.jit(out_idx=-1)
def elementwise_add(M=1024, N=1024, block_M=32, block_N=128, dtype="float32", threads=7):

    @T.prim_func
    def main(A: T.Tensor((M, N), dtype), B: T.Tensor((M, N), dtype), C: T.Tensor((M, N), dtype)):
        with T.Kernel(T.ceildiv(N, block_N), T.ceildiv(M, block_M), threads=threads) as (bx, by):
            A_frag = T.alloc_fragment((block_M, block_N), dtype)
            B_frag = T.alloc_fragment((block_M, block_N), dtype)
            C_frag = T.alloc_fragment((block_M, block_N), dtype)
            T.copy(A[by * block_M, bx * block_N], A_frag)
            T.copy(B[by * block_M, bx * block_N], B_frag)
            for i, j in T.Parallel(block_M, block_N):
                C_frag[i, j] = A_frag[i, j] + B_frag[i, j]
            T.copy(C_frag, C[by * block_M, bx * block_N])

    return main
