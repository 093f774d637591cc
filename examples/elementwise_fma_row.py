# Y = X * w + Z with a row vector w broadcast over the rows of X (a scale
# followed by a residual add).  X and Z tiles go through fragments; w is read
# straight from global memory, its column clamped into range for the partial
# last tile (those columns are not stored).  T.fma makes the fused
# multiply-add (one rounding) explicit: this compiler never contracts a*b + c
# on its own, so results match C's fmaf bit for bit.
import tilelang
import tilelang.language as T


@tilelang.jit(out_idx=-1)
def fma_row(M=1024, N=1024, block_M=32, block_N=128, dtype="float32", threads=128):

    @T.prim_func
    def main(X: T.Tensor((M, N), dtype), w: T.Tensor((N,), dtype), Z: T.Tensor((M, N), dtype),
             Y: T.Tensor((M, N), dtype)):
        with T.Kernel(T.ceildiv(N, block_N), T.ceildiv(M, block_M), threads=threads) as (bx, by):
            X_frag = T.alloc_fragment((block_M, block_N), dtype)
            Z_frag = T.alloc_fragment((block_M, block_N), dtype)
            T.copy(X[by * block_M, bx * block_N], X_frag)
            T.copy(Z[by * block_M, bx * block_N], Z_frag)
            for i, j in T.Parallel(block_M, block_N):
                Z_frag[i, j] = T.fma(X_frag[i, j], w[T.min(bx * block_N + j, N - 1)], Z_frag[i, j])
            T.copy(Z_frag, Y[by * block_M, bx * block_N])

    return main
