import tilelang.language as T

@T.prim_func
def main(A: T.Tensor((64,), "float32")):
    with T.Kernel(1, threads=32) as bx:
        a = T.alloc_local((8,), "float32")
        A[T.Ramp(0, 1, 1)] = a[0]
