# A kernel whose grid (n // 64) is 0 for 0 < n < 64 (test/IR/tl-run/empty.test).
import tilelang
import tilelang.language as T


@tilelang.jit(out_idx=-1)
def k():
    n = T.dynamic("n")

    @T.prim_func
    def main(A: T.Tensor((n,), "float32"), B: T.Tensor((n,), "float32")):
        with T.Kernel(n // 64, threads=64) as bx:
            for i in T.Parallel(64):
                B[bx * 64 + i] = A[bx * 64 + i]
    return main
