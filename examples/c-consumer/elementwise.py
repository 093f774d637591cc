# C = A * alpha + B over a 1-D tensor: the kernel of examples/c-consumer.
import tilelang
import tilelang.language as T

alpha = 1.0  # module constant: the C program binds it with a define


@tilelang.jit(out_idx=-1)
def axpb(N=4096, block=256, dtype="float32"):

    @T.prim_func
    def main(A: T.Tensor((N,), dtype), B: T.Tensor((N,), dtype), C: T.Tensor((N,), dtype)):
        with T.Kernel(T.ceildiv(N, block), threads=block) as bx:
            for i in T.Parallel(block):
                if bx * block + i < N:
                    C[bx * block + i] = A[bx * block + i] * alpha + B[bx * block + i]

    return main
