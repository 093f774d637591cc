# T.StridedTensor (issue 14): A is an (M, N) view with row stride ld (in
# elements) of a larger buffer: B = 2 * A + 1, through a shared tile (a
# global -> shared T.copy) and a T.Parallel.
#   dynamic_ld: the row stride is the symbol ld (T.dynamic), bound at the
#     call from the tensor's strides; else the constant ld.
import tilelang
import tilelang.language as T


@tilelang.jit(out_idx=[-1])
def strided(M=64, N=64, ld=96, block=32, dynamic_ld=False, dtype="float32"):
    LD = T.dynamic("ld") if dynamic_ld else ld

    @T.prim_func
    def main(A: T.StridedTensor((M, N), (LD, 1), dtype), B: T.Tensor((M, N), dtype)):
        with T.Kernel(T.ceildiv(M, block), threads=128) as bx:
            A_s = T.alloc_shared((block, N), dtype)
            T.copy(A[bx * block, 0], A_s)
            for i, j in T.Parallel(block, N):
                B[bx * block + i, j] = A_s[i, j] * 2.0 + 1.0

    return main
