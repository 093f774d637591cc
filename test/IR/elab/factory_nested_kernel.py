# RUN: %tl-opt %s | FileCheck %s
# RUN: %tl-run --device=cpu --check %s | FileCheck %s --check-prefix=EXEC
# A factory whose @T.prim_func is made by a nested function it calls
# (TileLang's minference example: `def kernel_func(block_M, ...):` holding
# @T.macro helpers and the @T.prim_func, then `return kernel_func(...)`):
# the nested function runs at compile time and its kernel is the factory's.
import tilelang
import tilelang.language as T


@tilelang.jit(out_idx=[-1])
def scaled_copy(N=256, scale=3):
    dtype = "float32"

    def kernel_func(block, threads):
        @T.macro
        def body(A, B, bx):
            for i in T.Parallel(block):
                B[bx * block + i] = A[bx * block + i] * scale

        @T.prim_func
        def nested(A: T.Tensor((N,), dtype), B: T.Tensor((N,), dtype)):
            with T.Kernel(T.ceildiv(N, block), threads=threads) as bx:
                body(A, B, bx)

        return nested

    return kernel_func(64, 64)


# CHECK: def nested(A: T.Tensor((256,), "float32"), B: T.Tensor((256,), "float32")):
# CHECK: with T.Kernel(4, threads=64) as bx:
# CHECK-NEXT: for i in T.Parallel(64):
# CHECK-NEXT: B[bx * 64 + i] = A[bx * 64 + i] * 3.0
# EXEC: check: PASS
