# Kept (check-fail, found by a 20-minute fuzz run, seed 1509): rms_norm.py with A_powsum = T.alloc_fragment ->
# T.alloc_local: T.reduce_sum(A_pow, A_powsum, dim=1) into a per-thread local buffer, on which the reference
# evaluator and the CPU executor disagreed with no diagnostic; now a located error (check_supported.c).
# RMSNorm over the last dimension: y = x / sqrt(mean(x^2) + eps).
import tilelang
import tilelang.language as T


@tilelang.jit(out_idx=-1)
def rms_norm(M=4096, N=4096, block_M=1, dtype="float32", eps=1e-6, threads=128):

    @T.prim_func
    def main(A: T.Tensor((M, N), dtype), B: T.Tensor((M, N), dtype)):
        with T.Kernel(T.ceildiv(M, block_M), threads=threads) as bx:
            A_local = T.alloc_fragment((block_M, N), dtype)
            A_pow = T.alloc_fragment((block_M, N), dtype)
            A_powsum = T.alloc_local((block_M,), dtype)
            T.copy(A[bx * block_M:(bx + 1) * block_M, :], A_local)
            for i, j in T.Parallel(block_M, N):
                A_pow[i, j] = A_local[i, j] * A_local[i, j]
            T.reduce_sum(A_pow, A_powsum, dim=1)
            for i in T.Parallel(block_M):
                A_powsum[i] = T.rsqrt(A_powsum[i] / N + eps)
            for i, j in T.Parallel(block_M, N):
                A_local[i, j] *= A_powsum[i]
            T.copy(A_local, B[bx * block_M:(bx + 1) * block_M, :])

    return main
