# C = A + B over a 1-D vector whose length n is only known at call time:
# each block copies a tile of `block` elements into fragments, adds them and
# copies the sum back; the last tile is partial (out-of-bounds reads pad 0,
# writes are skipped).
import tilelang
import tilelang.language as T


@tilelang.jit(out_idx=-1)
def elementwise_add_1d(block=1024, dtype="float32", threads=128):
    n = T.dynamic("n")

    @T.prim_func
    def main(A: T.Tensor((n,), dtype), B: T.Tensor((n,), dtype), C: T.Tensor((n,), dtype)):
        with T.Kernel(T.ceildiv(n, block), threads=threads) as bx:
            A_frag = T.alloc_fragment((block,), dtype)
            B_frag = T.alloc_fragment((block,), dtype)
            T.copy(A[bx * block], A_frag)
            for i in T.Parallel(block):
                B_frag[i] = A_frag[i] + B_frag[i]
            T.copy(B_frag, C[bx * block])

    return main
