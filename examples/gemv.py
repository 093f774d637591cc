# GEMV y = A x, as TileLang's examples/gemv (naive_gemv) writes it: each
# block computes block_N outputs, one per thread; each thread reduces its
# row of A over K with a per-thread float32 accumulator.  The last block is
# guarded, so N need not be a multiple of block_N.
import tilelang
import tilelang.language as T


@tilelang.jit(out_idx=-1)
def gemv(N=4096, K=4096, block_N=128, dtype="float16", accum_dtype="float32"):

    @T.prim_func
    def main(A: T.Tensor((N, K), dtype), x: T.Tensor((K,), dtype), y: T.Tensor((N,), dtype)):
        with T.Kernel(T.ceildiv(N, block_N), threads=block_N) as bn:
            acc = T.alloc_local((1,), accum_dtype)
            tn = T.get_thread_binding(0)
            if bn * block_N + tn < N:
                acc[0] = 0.0
                for k in T.serial(K):
                    acc[0] += T.Cast(accum_dtype, A[bn * block_N + tn, k]) * T.Cast(accum_dtype, x[k])
                y[bn * block_N + tn] = T.Cast(dtype, acc[0])

    return main
