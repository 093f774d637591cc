# RUN: not %tl-opt --analyze --kernel=gemm_dyn %s 2>&1 | FileCheck %s
# RUN: %tl-opt --analyze --kernel=fill_dyn %s | FileCheck %s --check-prefix=FILL
# RUN: not %tl-opt --analyze --kernel=grid_dyn %s 2>&1 | FileCheck %s --check-prefix=GRID
# A trip count the counts need that is not a compile-time constant (a
# T.dynamic dim) is a located error naming the loop and its extent, never a
# wrong number; a loop of unknown length that does no counted work (a
# fragment fill) needs none.
# CHECK: dynamic.py:[[@LINE+18]]:34: error: analysis: the trip count of the loop over 'k' is not a compile-time constant (T.ceildiv(K, 32)); the counts need its value (a symbolic dim: give it one)
# FILL: flops=0
# FILL-NEXT: global_bytes=0
# FILL: blocks=4
# GRID: dynamic.py:[[@LINE+41]]:23: error: analysis: grid dimension 0 of T.Kernel is not a compile-time constant (T.ceildiv(n, 128))
import tilelang.language as T


def gemm_dyn(M=256, N=256, block=64, dtype="float16", accum_dtype="float"):
    K = T.dynamic("K")

    @T.prim_func
    def main(A: T.Tensor((M, K), dtype), B: T.Tensor((K, N), dtype), C: T.Tensor((M, N), dtype)):
        with T.Kernel(N // block, M // block, threads=128) as (bx, by):
            A_s = T.alloc_shared((block, 32), dtype)
            B_s = T.alloc_shared((32, block), dtype)
            C_l = T.alloc_fragment((block, block), accum_dtype)
            T.clear(C_l)
            for k in T.Pipelined(T.ceildiv(K, 32), num_stages=2):
                T.copy(A[by * block, k * 32], A_s)
                T.copy(B[k * 32, bx * block], B_s)
                T.gemm(A_s, B_s, C_l)
            T.copy(C_l, C[by * block, bx * block])

    return main


def fill_dyn(dtype="float32"):
    n = T.dynamic("n")

    @T.prim_func
    def main(A: T.Tensor((n,), dtype)):
        with T.Kernel(4, threads=128) as bx:
            F = T.alloc_fragment((128,), dtype)
            for i in T.serial(n):
                T.fill(F, 1.0)

    return main


def grid_dyn(dtype="float32"):
    n = T.dynamic("n")

    @T.prim_func
    def main(A: T.Tensor((n,), dtype)):
        with T.Kernel(T.ceildiv(n, 128), threads=128) as bx:
            for i in T.Parallel(128):
                A[bx * 128 + i] = 0.0

    return main
