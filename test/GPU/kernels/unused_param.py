# A kernel with a tensor parameter it never touches (Bias) beside a used one
# (A): a call may pass None / a NULL tensor for Bias (issue 14), not for A.
import tilelang
import tilelang.language as T


@tilelang.jit(out_idx=None)
def unused_param(N=256):

    @T.prim_func
    def main(A: T.Tensor((N,), "float32"), Bias: T.Tensor((N,), "float32"), C: T.Tensor((N,), "float32")):
        with T.Kernel(T.ceildiv(N, 128), threads=128) as bx:
            for i in T.Parallel(128):
                C[bx * 128 + i] = A[bx * 128 + i] * 2.0 + 1.0

    return main
