import tilelang.language as T


@T.prim_func
def main(A: T.Tensor((128,), "float32"), B: T.Tensor((128,), "float32")):
    with T.Kernel(1, threads=128) as bx:
        C = T.alloc_global((128,), "float32")
        for i in T.Parallel(128):
            C[i] = A[i]
            B[i] = C[i]
    with T.Kernel(1, threads=128) as bx:
        for i in T.Parallel(128):
            B[i] = B[i] + 1.0
