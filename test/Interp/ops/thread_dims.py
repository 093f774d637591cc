# REQUIRES: tl-run
# T.Kernel(..., threads=(x, y[, z])) and T.get_thread_binding(dim) (TileLang's
# thread block dimensions, the split-K GEMV of its examples): the kernel runs
# x*y*z threads, dimension 0 the fastest; T.get_thread_binding(d) is the
# thread's coordinate d (0 beyond the given dimensions). form=binding writes the
# coordinates as TileLang's dequantize gemv does, TVMScript's frame form
# `tn = T.thread_binding(0, BLOCK_N, thread="threadIdx.x")`: the same coordinate,
# whose extent must be the kernel's (bad=3: a wrong extent is a located error).
# RUN: %tl-run --device=cpu --check %s | FileCheck %s
# RUN: %tl-run --device=cpu --check -D N=96 -D K=160 -D BLOCK_N=8 -D reduce_threads=16 %s | FileCheck %s
# RUN: %tl-run --device=cpu --check --kernel=coords %s | FileCheck %s --check-prefixes=CHECK,SUM
# RUN: %tl-opt %s | FileCheck %s --check-prefix=TIR
# RUN: %tl-run --device=cpu --check -D form=binding %s | FileCheck %s
# RUN: %tl-opt -D form=binding %s | FileCheck %s --check-prefix=TIR
# RUN: not %tl-opt -D form=binding -D bad=3 %s 2>&1 | FileCheck %s --check-prefix=BAD3
# RUN: %tl-opt --kernel=coords %s | FileCheck %s --check-prefix=COORDS
# RUN: not %tl-opt -D bad=1 %s 2>&1 | FileCheck %s --check-prefix=BAD1
# RUN: not %tl-opt -D bad=2 %s 2>&1 | FileCheck %s --check-prefix=BAD2
# the sum of 1000*bx + 100*z + 10*y + x over the 2x8x3x4 coordinates, each written once
# SUM: output O shape=[2,8,3,4] dtype=int32 sum=165408
# CHECK: check: PASS
# TIR: with T.Kernel(8, threads=128) as bn:
# TIR: tn = T.get_thread_binding(0) % 4
# TIR: tk = T.get_thread_binding(0) // 4
# COORDS: with T.Kernel(2, threads=96) as bx:
# COORDS: O[bx, T.get_thread_binding(0) // 4 // 3, T.get_thread_binding(0) // 4 % 3, T.get_thread_binding(0) % 4] = 1000 * bx + 100 * (T.get_thread_binding(0) // 4 // 3) + 10 * (T.get_thread_binding(0) // 4 % 3) + T.get_thread_binding(0) % 4
# BAD1: thread_dims.py:{{[0-9]+}}:{{[0-9]+}}: error: threads takes 1 to 3 thread block dimensions, got 4
# BAD2: thread_dims.py:{{[0-9]+}}:{{[0-9]+}}: error: T.get_thread_binding needs dimension 0, 1 or 2, got 3
# BAD3: thread_dims.py:44:22: error: T.thread_binding(0, 16, thread="threadIdx.y") as a value must span the kernel's threadIdx.y (0, 32)
import tilelang
import tilelang.language as T


@tilelang.jit(out_idx=[2])
def splitk_gemv(N=32, K=96, BLOCK_N=4, reduce_threads=32, bad=0, form="get"):
    dims = (BLOCK_N, reduce_threads, 1, 1) if bad == 1 else (BLOCK_N, reduce_threads)
    TILE_K = T.ceildiv(K, reduce_threads)

    @T.prim_func
    def splitk_gemv(A: T.Tensor((K,), "float32"), B: T.Tensor((N, K), "float32"), C: T.Tensor((N,), "float32")):
        with T.Kernel(T.ceildiv(N, BLOCK_N), threads=dims) as bn:
            if form == "binding":
                tn = T.thread_binding(0, BLOCK_N, thread="threadIdx.x")
                tk = T.thread_binding(0, reduce_threads // (2 if bad == 3 else 1), thread="threadIdx.y")
            else:
                tn = T.get_thread_binding(0)
                tk = T.get_thread_binding(1)
            acc = T.alloc_local((1,), "float32")
            part = T.alloc_shared((BLOCK_N, reduce_threads), "float32")
            acc[0] = 0.0
            for k in T.serial(TILE_K):
                if tk * TILE_K + k < K:
                    acc[0] += A[tk * TILE_K + k] * B[bn * BLOCK_N + tn, tk * TILE_K + k]
            part[tn, tk] = acc[0]
            if bad == 2:
                part[tn, 0] = T.get_thread_binding(3)
            T.sync_threads()
            if tk == 0:
                total = T.alloc_var("float32")
                total = 0.0
                for r in T.serial(reduce_threads):
                    total += part[tn, r]
                C[bn * BLOCK_N + tn] = total

    return splitk_gemv


@tilelang.jit(out_idx=[0])
def coords():
    @T.prim_func
    def coords(O: T.Tensor((2, 8, 3, 4), "int32")):
        with T.Kernel(2, threads=(4, 3, 8)) as bx:
            O[bx, T.get_thread_binding(2), T.get_thread_binding(1), T.get_thread_binding(0)] = (
                1000 * bx + 100 * T.get_thread_binding(2) + 10 * T.get_thread_binding(1) + T.get_thread_binding(0))

    return coords
