# Y = X + W, and X doubled in place: out_idx gives only Y, so tl-run --save
# finds X among the inputs the run changed (W it leaves alone).
import tilelang
import tilelang.language as T


@tilelang.jit(out_idx=-1)
def inplace_scale(N=256, block=128):

    @T.prim_func
    def main(X: T.Tensor((N,), "float32"), W: T.Tensor((N,), "float32"), Y: T.Tensor((N,), "float32")):
        with T.Kernel(T.ceildiv(N, block), threads=block) as bx:
            for i in T.Parallel(block):
                Y[bx * block + i] = X[bx * block + i] + W[bx * block + i]
                X[bx * block + i] = X[bx * block + i] * 2.0

    return main
