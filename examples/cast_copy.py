# Copy with a dtype cast: float32 in global memory -> bfloat16, tile by tile,
# through a fragment (T.copy casts element-wise, rounding to nearest even).
import tilelang
import tilelang.language as T


@tilelang.jit(out_idx=-1)
def cast_copy(M=1024, N=1024, block_M=64, block_N=64, in_dtype="float32", out_dtype="bfloat16", threads=128):

    @T.prim_func
    def main(A: T.Tensor((M, N), in_dtype), B: T.Tensor((M, N), out_dtype)):
        with T.Kernel(T.ceildiv(N, block_N), T.ceildiv(M, block_M), threads=threads) as (bx, by):
            tile = T.alloc_fragment((block_M, block_N), out_dtype)
            T.copy(A[by * block_M, bx * block_N], tile)
            T.copy(tile, B[by * block_M, bx * block_N])

    return main
