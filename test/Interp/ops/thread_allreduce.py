# REQUIRES: tl-run
# TVM's thread allreduce as TileLang programs write it (examples/gemv's
# splitk_gemv_vectorized_tvm): `with T.attr(T.comm_reducer(...), "reduce_scope",
# ...): T.evaluate(T.tvm_thread_allreduce(T.uint32(1), value, True, dst[0], tk))`
# gives dst[0] the value combined over the threads that differ only in the
# thread coordinate tk, every one of them getting it (T.thread_allreduce,
# lib/Frontend/elab_allreduce.c).  The values are small integers held as
# floats, so every order of summation gives the same, exact result: the SIMT
# executor (shuffles in one warp, shared memory across warps) must match the
# reference evaluator (the group's values in order) bit for bit.
# Groups of 4 (stride 8: one warp), 32 (stride 1: one warp; stride 2: two
# warps), 64 (stride 2 and 1: shared memory), a block of 8 threads (partial warp).
# RUN: %tl-run --device=cpu --check -D X=8 -D Y=4 %s | FileCheck %s --check-prefixes=CHECK,S84
# RUN: %tl-run --device=cpu --check -D X=32 -D Y=4 -D dim=0 %s | FileCheck %s --check-prefixes=CHECK,S324
# RUN: %tl-run --device=cpu --check -D X=2 -D Y=32 %s | FileCheck %s --check-prefixes=CHECK,S232
# RUN: %tl-run --device=cpu --check -D X=2 -D Y=64 %s | FileCheck %s --check-prefixes=CHECK,S264
# RUN: %tl-run --device=cpu --check -D X=64 -D Y=1 -D dim=0 %s | FileCheck %s
# RUN: %tl-run --device=cpu --check -D X=2 -D Y=4 %s | FileCheck %s
# RUN: %tl-run --device=cpu --check -D X=2 -D Y=32 -D op=1 %s | FileCheck %s --check-prefixes=CHECK,MAX
# RUN: %tl-run --device=cpu --check -D X=8 -D Y=4 -D op=2 %s | FileCheck %s --check-prefixes=CHECK,MIN
# RUN: %tl-run --device=cpu --check --kernel=gemv_tvm -D N=64 -D K=512 %s | FileCheck %s
# RUN: %tl-run --device=cpu --check --kernel=gemv_tvm -D N=64 -D K=256 -D BLOCK_N=4 -D reduce_threads=4 %s | FileCheck %s
# the sums of O: over bx < 2 and every thread, its group's sum of 3y + x + 100 bx
# S84: output O shape=[2,4,8] dtype=float32 sum=14848
# S324: output O shape=[2,32,4] dtype=float32 sum=573440
# S232: output O shape=[2,32,2] dtype=float32 sum=397312
# S264: output O shape=[2,64,2] dtype=float32 sum=2.37568e+06
# MAX: output O shape=[2,32,2] dtype=float32 sum=18368
# MIN: output O shape=[2,4,8] dtype=float32 sum=3424
# CHECK: check: PASS
import tilelang
import tilelang.language as T


@tilelang.jit(out_idx=[0])
def allreduce(X=8, Y=4, dim=1, op=0):
    @T.prim_func
    def allreduce(O: T.Tensor((2, Y, X) if dim == 1 else (2, X, Y), "float32")):
        with T.Kernel(2, threads=(X, Y)) as bx:
            tx = T.get_thread_binding(0)
            ty = T.get_thread_binding(1)
            v = T.alloc_local((1,), "float32")
            r = T.alloc_local((1,), "float32")
            v[0] = T.cast(3 * ty + tx + 100 * bx, "float32")
            red = ty if dim == 1 else tx
            if op == 0:
                with T.attr(T.comm_reducer(lambda x, y: x + y, [T.cast(0, "float32")]), "reduce_scope",
                            T.reinterpret(T.uint64(0), dtype="handle")):
                    T.evaluate(T.tvm_thread_allreduce(T.uint32(1), v[0], True, r[0], red, dtype="handle"))
            elif op == 1:
                with T.attr(T.comm_reducer(lambda x, y: T.max(x, y), [T.cast(0, "float32")]), "reduce_scope",
                            T.reinterpret(T.uint64(0), dtype="handle")):
                    T.evaluate(T.tvm_thread_allreduce(T.uint32(1), v[0], True, r[0], red, dtype="handle"))
            else:
                with T.attr(T.comm_reducer(lambda a, b: T.min(b, a), [T.cast(0, "float32")]), "reduce_scope",
                            T.reinterpret(T.uint64(0), dtype="handle")):
                    T.evaluate(T.tvm_thread_allreduce(T.uint32(1), v[0], True, r[0], red, dtype="handle"))
            if dim == 1:
                O[bx, ty, tx] = r[0]
            else:
                O[bx, tx, ty] = r[0]

    return allreduce


# examples/gemv/example_gemv.py's splitk_gemv_vectorized_tvm (float32 here)
@tilelang.jit(out_idx=[2])
def gemv_tvm(N=64, K=512, BLOCK_N=2, reduce_threads=32):
    TILE_K = 4
    BLOCK_K = reduce_threads * TILE_K

    @T.prim_func
    def gemv_tvm(A: T.Tensor((K,), "float32"), B: T.Tensor((N, K), "float32"), C: T.Tensor((N,), "float32")):
        with T.Kernel(T.ceildiv(N, BLOCK_N), threads=(BLOCK_N, reduce_threads)) as bn:
            tn = T.get_thread_binding(0)
            tk = T.get_thread_binding(1)
            A_local = T.alloc_local((TILE_K,), "float32")
            B_local = T.alloc_local((TILE_K,), "float32")
            C_accum = T.alloc_local((1,), "float32")
            T.clear(C_accum)
            for bk in T.serial(T.ceildiv(K, BLOCK_K)):
                for k in T.vectorized(TILE_K):
                    A_local[k] = A[bk * BLOCK_K + tk * TILE_K + k]
                    B_local[k] = B[bn * BLOCK_N + tn, bk * BLOCK_K + tk * TILE_K + k]
                for k in T.serial(TILE_K):
                    C_accum[0] += A_local[k] * B_local[k]
            C_reduced = T.alloc_local((1,), "float32")
            with T.attr(
                T.comm_reducer(lambda x, y: x + y, [T.cast(0, "float32")]),
                "reduce_scope",
                T.reinterpret(T.uint64(0), dtype="handle"),
            ):
                T.evaluate(T.tvm_thread_allreduce(T.uint32(1), C_accum[0], True, C_reduced[0], tk, dtype="handle"))
            C[bn * BLOCK_N + tn] = C_reduced[0]

    return gemv_tvm
