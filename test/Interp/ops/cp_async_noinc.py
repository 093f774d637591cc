# REQUIRES: tl-run
# RUN: %tl-run --device=cpu --check --kernel=cpa_ring %s | FileCheck %s --check-prefix=RING
# RUN: %tl-run --device=cpu --check --schedule-seed=5 --kernel=cpa_ring %s | FileCheck %s --check-prefix=RING
# RUN: %tl-run --device=cpu --check --kernel=cpa_gemm %s | FileCheck %s --check-prefix=GEMM
# RUN: %tl-opt --kernel=cpa_ring %s | FileCheck %s --check-prefix=TIR
# RUN: %tl-opt --kernel=cpa_ring %s > %t.tir && %tl-opt %t.tir | diff %t.tir -
# RUN: %tl-opt --emit=simt --target=sm_90a --kernel=cpa_ring %s | FileCheck %s --check-prefix=SIMT
# TileLang's hand-written cp.async producer (its mla_decode_ws example):
# T.ptx_cp_async(T.access_ptr(dst[...], "w", n), T.access_ptr(src[...], "r",
# n), n) copies n elements per thread, and T.cp_async_barrier_noinc(bar)
# arrives on bar once this thread's copies completed (docs/language.md;
# docs/hopper.md "Explicit warp specialisation").  Checked on the CPU SIMT
# executor (sm_90a lowering) against the reference evaluator, which runs a
# role scope that uses the thread index once per thread of its warpgroup:
#  - cpa_ring: producer warpgroup 1 copies 32x64 float16 tiles, 16 bytes a
#    copy, two per thread, into a ring (a stage per tile: the reference runs
#    the scopes one after the other), tile 1 with a false predicate (zeros);
#    the consumer waits on the noinc barrier, B = 2 A + 1; also shuffled.
#  - cpa_gemm: the consumer reads the ring with T.gemm, which gives it a
#    swizzled layout: the copies' offsets go through it (lower_tile.c).
# (cp_async_noinc_deadlock.py: a missing arrival is a located deadlock.)
import tilelang
import tilelang.language as T


@tilelang.jit(out_idx=[1])
def cpa_ring(M=128, N=64, block_M=32, stages=4):
    @T.prim_func
    def ring_main(A: T.Tensor((M, N), "float16"), B: T.Tensor((M, N), "float16")):
        with T.Kernel(1, threads=256) as bx:
            ring = T.alloc_shared((stages, block_M, N), "float16")
            f = T.alloc_fragment((block_M, N), "float16")
            full = T.alloc_barrier([128] * stages)
            empty = T.alloc_barrier([128] * stages)
            tx = T.get_thread_binding()
            if tx >= 128:
                for k in T.serial(M // block_M):
                    T.barrier_wait(empty[k % stages], (k // stages + 1) % 2)
                    for r in T.serial(2):
                        T.ptx_cp_async(
                            T.access_ptr(ring[k % stages, r * 16 + (tx - 128) // 8, (tx - 128) % 8 * 8], "w", 8),
                            T.access_ptr(A[k * block_M + r * 16 + (tx - 128) // 8, (tx - 128) % 8 * 8], "r", 8),
                            8,
                            k != 1,
                        )
                    T.cp_async_barrier_noinc(full[k % stages])
            else:
                for k in T.serial(M // block_M):
                    T.barrier_wait(full[k % stages], (k // stages) % 2)
                    T.copy(ring[k % stages, :, :], f)
                    T.barrier_arrive(empty[k % stages])
                    for i, j in T.Parallel(block_M, N):
                        f[i, j] = f[i, j] * 2 + 1
                    T.copy(f, B[k * block_M : (k + 1) * block_M, :])

    return ring_main


@tilelang.jit(out_idx=[2])
def cpa_gemm(M=128, N=64, K=64, block_M=64, stages=2):
    @T.prim_func
    def gemm_main(A: T.Tensor((M, K), "float16"), W: T.Tensor((K, N), "float16"), C: T.Tensor((M, N), "float32")):
        with T.Kernel(1, threads=256) as bx:
            ring = T.alloc_shared((stages, block_M, K), "float16")
            W_s = T.alloc_shared((K, N), "float16")
            acc = T.alloc_fragment((block_M, N), "float32")
            full = T.alloc_barrier([128] * stages)
            tx = T.get_thread_binding()
            if tx >= 128:
                for k in T.serial(M // block_M):
                    for r in T.serial(4):
                        T.ptx_cp_async(
                            T.access_ptr(ring[k % stages, r * 16 + (tx - 128) // 8, (tx - 128) % 8 * 8], "w", 8),
                            T.access_ptr(A[k * block_M + r * 16 + (tx - 128) // 8, (tx - 128) % 8 * 8], "r", 8),
                            8,
                        )
                    T.cp_async_barrier_noinc(full[k % stages])
            else:
                T.copy(W, W_s)
                for k in T.serial(M // block_M):
                    T.barrier_wait(full[k % stages], (k // stages) % 2)
                    T.clear(acc)
                    T.gemm(ring[k % stages, :, :], W_s, acc)
                    T.copy(acc, C[k * block_M : (k + 1) * block_M, :])

    return gemm_main


# RING: check: PASS
# GEMM: check: PASS
# TIR: T.ptx_cp_async(ring, (k % 4 * 32 + (r * 16 + (tx - 128) // 8)) * 64 + (tx - 128) % 8 * 8, A, (k * 32 + r * 16 + (tx - 128) // 8) * 64 + (tx - 128) % 8 * 8, 16, k != 1)
# TIR: T.cp_async_barrier_noinc(full, k % 4)
# SIMT: T.ptx_cp_async_mbarrier_arrive_noinc(
