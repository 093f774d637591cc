# SiLU activation y = x * sigmoid(x) = x / (1 + exp(-x)) over a 1-D vector of
# dynamic length, computed in float32 and rounded back to the tensor dtype.
import tilelang
import tilelang.language as T


@tilelang.jit(out_idx=-1)
def silu(block=1024, dtype="float32", threads=128):
    n = T.dynamic("n")

    @T.prim_func
    def main(X: T.Tensor((n,), dtype), Y: T.Tensor((n,), dtype)):
        with T.Kernel(T.ceildiv(n, block), threads=threads) as bx:
            X_frag = T.alloc_fragment((block,), dtype)
            Y_frag = T.alloc_fragment((block,), dtype)
            T.copy(X[bx * block], X_frag)
            for i in T.Parallel(block):
                x = T.Cast("float32", X_frag[i])
                Y_frag[i] = T.Cast(dtype, x / (1.0 + T.exp(-x)))
            T.copy(Y_frag, Y[bx * block])

    return main
