# y = alpha * x + y, written as a bare @T.prim_func with module constants
# (override them with -D N=... -D block=...); y is updated in place.
import tilelang.language as T

N = 1 << 20
block = 256


@T.prim_func
def main(X: T.Tensor((N,), "float32"), Y: T.Tensor((N,), "float32"), alpha: T.bool):
    with T.Kernel(T.ceildiv(N, block), threads=block) as bx:
        for i in T.Parallel(block):
            if bx * block + i < N:
                Y[bx * block + i] = alpha * X[bx * block + i] + Y[bx * block + i]
