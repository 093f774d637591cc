# A GEMV without the bounds guard of examples/gemv.py: with N not a multiple
# of block_N the last block reads past A.  test_cpu_device uses it to check
# that an executor error carries the statement's location.  The rows of A
# and y are a dynamic dimension n (the call gives n = N): with constant
# extents the compiler's static bounds check (lib/Lower/static_check.c)
# refuses the kernel before the executor runs.
import tilelang
import tilelang.language as T


@tilelang.jit(out_idx=-1)
def gemv(N=4096, K=4096, block_N=128, dtype="float16", accum_dtype="float32"):

    n = T.dynamic("n")

    @T.prim_func
    def main(A: T.Tensor((n, K), dtype), x: T.Tensor((K,), dtype), y: T.Tensor((n,), dtype)):
        with T.Kernel(T.ceildiv(N, block_N), threads=block_N) as bn:
            acc = T.alloc_local((1,), accum_dtype)
            tn = T.get_thread_binding(0)
            acc[0] = 0.0
            for k in T.serial(K):
                acc[0] += T.Cast(accum_dtype, A[bn * block_N + tn, k]) * T.Cast(accum_dtype, x[k])
            y[bn * block_N + tn] = T.Cast(dtype, acc[0])

    return main
