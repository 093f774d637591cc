# A float8 -> float32 conversion (an implicit cast on the store): cvt.rn.f16x2.e4m3x2 from sm_89
# (mma-types.test), a located error before.
import tilelang.language as T


@T.prim_func
def main(A: T.Tensor((128,), "float8_e4m3"), B: T.Tensor((128,), "float32")):
    with T.Kernel(1, threads=128) as bx:
        for i in T.Parallel(128):
            B[i] = A[i]
