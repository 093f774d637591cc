# REQUIRES: tl-run
# RUN: %tl-run --device=cpu --check --kernel=ws_ring %s | FileCheck %s --check-prefix=RING
# RUN: %tl-run --device=cpu --check --schedule-seed=7 --kernel=ws_ring %s | FileCheck %s --check-prefix=RING
# RUN: %tl-run --device=cpu --check --kernel=ws_halves %s | FileCheck %s --check-prefix=HALVES
# RUN: %tl-run --device=cpu --check --kernel=ws_gemm %s | FileCheck %s --check-prefix=GEMM
# RUN: %tl-opt --kernel=ws_ring %s | FileCheck %s --check-prefix=TIR
# RUN: %tl-opt --kernel=ws_ring %s > %t.tir && %tl-opt %t.tir | diff %t.tir -
# RUN: %tl-opt --emit=simt --target=sm_90a --kernel=ws_ring %s | FileCheck %s --check-prefix=SIMT
# RUN: %tl-opt --emit=ptx --target=sm_90a --kernel=ws_ring %s | FileCheck %s --check-prefix=PTX
# RUN: not %tl-opt --emit=ptx --target=sm_80 --kernel=ws_ring %s 2>&1 | FileCheck %s --check-prefix=SM80
# RUN: not %tl-run --device=cpu --kernel=ws_deadlock %s 2>&1 | FileCheck %s --check-prefix=DEADLOCK
# Explicit warp specialisation (TileLang's T.ws, T.alloc_barrier,
# T.barrier_arrive / T.barrier_wait, T.mbarrier_wait_parity, T.tma_copy;
# docs/hopper.md "Explicit warp specialisation"), checked on the CPU SIMT
# executor against the reference evaluator (which runs the scopes in program
# order):
#  - ws_ring: warpgroup 1 produces tile k of A (64 x 32 int32) into stage
#    k % 2 of a shared ring, full[s] / empty[s] barriers of 128 arrivals;
#    warpgroup 0 consumes it, B = 2 * tile + 1 (int32: the check against the
#    reference evaluator is exact), also under a shuffled schedule.
#  - ws_halves: each of the two warpgroups writes its half of the output
#    (int32: B[0] = 3 * A[0] by group 0, B[1] = A[1] - 5 by group 1) through its own
#    fragment: the thread index inside T.ws(1) is the warpgroup's own.
#  - ws_gemm: TileLang's example_warp_specialize_gemm_copy_1_gemm_0 at 128 x
#    128 x 128 (blocks 64 x 64 x 32): a T.tma_copy producer, a T.gemm consumer.
#  - ws_deadlock: the consumer waits on a barrier no one arrives on: a located
#    deadlock report, not a hang.
import tilelang
import tilelang.language as T


@tilelang.jit(out_idx=[1])
def ws_ring(M=256, N=32, block_M=64, stages=2):
    @T.prim_func
    def ring_main(A: T.Tensor((M, N), "int32"), B: T.Tensor((M, N), "int32")):
        with T.Kernel(1, threads=256) as bx:
            ring = T.alloc_shared((stages, block_M, N), "int32")
            full = T.alloc_barrier([128] * stages)
            empty = T.alloc_barrier([128] * stages)
            for k in T.serial(M // block_M):
                with T.ws(1):
                    T.barrier_wait(empty[k % stages], (k // stages + 1) % 2)
                    T.copy(A[k * block_M, 0], ring[k % stages, :, :])
                    T.barrier_arrive(full[k % stages])
                with T.ws(0):
                    T.mbarrier_wait_parity(mbarrier=full[k % stages], parity=(k // stages) % 2)
                    for i, j in T.Parallel(block_M, N):
                        B[k * block_M + i, j] = ring[k % stages, i, j] * 2 + 1
                    T.mbarrier_arrive(mbarrier=empty[k % stages])

    return ring_main


@tilelang.jit(out_idx=[1])
def ws_halves(N=64):
    @T.prim_func
    def halves_main(A: T.Tensor((2, N, N), "int32"), B: T.Tensor((2, N, N), "int32")):
        with T.Kernel(1, threads=256) as bx:
            f0 = T.alloc_fragment((N, N), "int32")
            f1 = T.alloc_fragment((N, N), "int32")
            with T.ws(0):
                T.copy(A[0, :, :], f0)
                for i, j in T.Parallel(N, N):
                    f0[i, j] = f0[i, j] * 3
                T.copy(f0, B[0, :, :])
            with T.ws(1):
                T.copy(A[1, :, :], f1)
                for i, j in T.Parallel(N, N):
                    f1[i, j] = f1[i, j] - 5
                T.copy(f1, B[1, :, :])

    return halves_main


@tilelang.jit(out_idx=[2])
def ws_gemm(M=128, N=128, K=128, block_M=64, block_N=64, block_K=32, dtype="float16", accum_dtype="float32"):
    @T.prim_func
    def gemm_main(A: T.Tensor((M, K), dtype), B: T.Tensor((K, N), dtype), C: T.Tensor((M, N), dtype)):
        with T.Kernel(T.ceildiv(N, block_N), T.ceildiv(M, block_M), threads=256) as (bx, by):
            A_shared = T.alloc_shared((block_M, block_K), dtype)
            B_shared = T.alloc_shared((block_K, block_N), dtype)
            C_local = T.alloc_fragment((block_M, block_N), accum_dtype)
            data_is_ready = T.alloc_barrier(arrive_count=128)
            compute_is_done = T.alloc_barrier(arrive_count=128)
            with T.ws(0):
                T.clear(C_local)
            for ko in T.Pipelined(T.ceildiv(K, block_K), num_stages=2):
                with T.ws(1):
                    T.barrier_wait(compute_is_done, (ko + 1) % 2)
                    T.tma_copy(A[by * block_M, ko * block_K], A_shared, barrier=data_is_ready)
                    T.tma_copy(B[ko * block_K, bx * block_N], B_shared, barrier=data_is_ready)
                    T.barrier_arrive(data_is_ready)
                with T.ws(0):
                    T.barrier_wait(data_is_ready, ko % 2)
                    T.gemm(A_shared, B_shared, C_local)
                    T.barrier_arrive(compute_is_done)
            with T.ws(0):
                T.copy(C_local, C[by * block_M, bx * block_N])

    return gemm_main


@tilelang.jit(out_idx=[1])
def ws_deadlock(N=128):
    @T.prim_func
    def deadlock_main(A: T.Tensor((N,), "float32"), B: T.Tensor((N,), "float32")):
        with T.Kernel(1, threads=256) as bx:
            S = T.alloc_shared((N,), "float32")
            ready = T.alloc_barrier(128)
            never = T.alloc_barrier(128)
            with T.ws(1):
                T.copy(A, S)
                T.barrier_arrive(ready)
            with T.ws(0):
                T.barrier_wait(ready, 0)
                T.barrier_wait(never, 0)
                T.copy(S, B)

    return deadlock_main


# RING: output B shape=[256,32] dtype=int32 sum=
# RING: check: PASS
# HALVES: check: PASS
# GEMM: check: PASS
# TIR: ring = T.alloc_shared((2, 64, 32), "int32")
# TIR-NEXT: full = T.alloc_shared((2,), "uint64")
# TIR-NEXT: T.barrier_init(full, 128, 128)
# TIR: for k in T.serial(4):
# TIR-NEXT: if T.ws(1):
# TIR-NEXT: T.barrier_wait(empty, k % 2, (k // 2 + 1) % 2)
# TIR: T.barrier_arrive(full, k % 2)
# TIR-NEXT: if T.ws(0):
# TIR-NEXT: T.barrier_wait(full, k % 2, k // 2 % 2)
# SIMT: with T.Kernel(1, threads=256) as bx:
# SIMT: if T.get_thread_binding(0) == 0:
# SIMT-NEXT: T.ptx_mbarrier_init(full, 0, 128)
# SIMT-NEXT: T.ptx_mbarrier_init(full, 1, 128)
# SIMT: if T.get_thread_binding(0) >= 128 and T.get_thread_binding(0) < 256:
# SIMT-NEXT: T.ptx_bar_sync(2, 128)
# SIMT-NEXT: T.ptx_mbarrier_wait(empty, k % 2, (k // 2 + 1) % 2)
# SIMT: (T.get_thread_binding(0) - 128) // 8
# SIMT: T.ptx_mbarrier_arrive(full, k % 2)
# SIMT-NEXT: if T.get_thread_binding(0) < 128:
# SIMT-NEXT: T.ptx_bar_sync(1, 128)
# SIMT-NEXT: T.ptx_mbarrier_wait(full, k % 2, k // 2 % 2)
# PTX: mbarrier.init.shared.b64
# PTX: mbarrier.try_wait.parity.shared::cta.b64
# PTX: mbarrier.arrive.shared.b64
# SM80: warp_specialize.py:42:21: error: T.ptx_mbarrier_wait needs PTX ISA 7.1 or later (target sm_80 emits PTX ISA 7.0)
# DEADLOCK: warp_specialize.py:116:17: error: deadlock
