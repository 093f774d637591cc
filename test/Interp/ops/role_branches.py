# REQUIRES: tl-run
# RUN: %tl-run --device=cpu --check --kernel=rb_pair %s | FileCheck %s --check-prefix=PAIR
# RUN: %tl-run --device=cpu --check --schedule-seed=5 --kernel=rb_pair %s | FileCheck %s --check-prefix=PAIR
# RUN: %tl-run --device=cpu --check --kernel=rb_three %s | FileCheck %s --check-prefix=THREE
# RUN: %tl-run --device=cpu --check --kernel=rb_wgmma %s | FileCheck %s --check-prefix=WGMMA
# RUN: %tl-opt --kernel=rb_three %s | FileCheck %s --check-prefix=TIR
# RUN: %tl-opt --kernel=rb_wgmma %s | FileCheck %s --check-prefix=TIRG
# RUN: %tl-opt --kernel=rb_three %s > %t.tir && %tl-opt %t.tir | diff %t.tir -
# RUN: %tl-opt --emit=simt --target=sm_90a --kernel=rb_three %s | FileCheck %s --check-prefix=SIMT
# RUN: %tl-opt --emit=ptx --target=sm_90a --kernel=rb_three %s | FileCheck %s --check-prefix=PTX
# RUN: not %tl-run --device=cpu --kernel=rb_deadlock %s 2>&1 | FileCheck %s --check-prefix=DEADLOCK
# Role branches on the thread index (TileLang's `tx = T.get_thread_binding();
# if tx < 128: ... else: ...`, the form of its examples flashmla,
# mla_decode_ws and minference): a branch that selects one warpgroup and
# holds tile work is that warpgroup's T.ws scope (docs/hopper.md "Explicit
# warp specialisation"), checked on the CPU SIMT executor (sm_90a lowering)
# against the reference evaluator:
#  - rb_pair: `if tx >= 128:` producer (warpgroup 1, T.tma_copy into a 4-stage
#    shared ring, T.mbarrier_arrive), `else:` consumer (warpgroup 0: a
#    fragment, T.Parallel, T.copy out); int32, exact; also shuffled.  The
#    ring has a stage per tile: the reference evaluator runs the role scopes
#    one after the other, so a producer loop that reuses stages before the
#    consumer loop has read them has no meaning there (the SIMT executor
#    runs both roles at once and gets the right values with 2 stages).
#  - rb_three: 384 threads, `if tx >= 256 / elif tx < 128 / else`, each
#    warpgroup its third of the output, with
#    T.set_max_nreg (setmaxnreg.inc / .dec) and T.fence_proxy_async.
#  - rb_wgmma: T.wgmma_gemm over k-tiles in T.unroll with
#    clear_accum=(j == 0), T.wait_wgmma, and a second T.wgmma_gemm that
#    reads A from the cast accumulator (P.V of attention); float16 inputs.
#  - rb_deadlock: the consumer role waits on a barrier no one arrives on: a
#    located deadlock report, not a hang.
import tilelang
import tilelang.language as T


@tilelang.jit(out_idx=[1])
def rb_pair(M=256, N=32, block_M=64, stages=4):
    @T.prim_func
    def pair_main(A: T.Tensor((M, N), "int32"), B: T.Tensor((M, N), "int32")):
        with T.Kernel(1, threads=256) as bx:
            ring = T.alloc_shared((stages, block_M, N), "int32")
            f = T.alloc_fragment((block_M, N), "int32")
            full = T.alloc_barrier([128] * stages)
            empty = T.alloc_barrier([128] * stages)
            tx = T.get_thread_binding()
            if tx >= 128:
                for k in T.serial(M // block_M):
                    T.mbarrier_wait_parity(mbarrier=empty[k % stages], parity=(k // stages + 1) % 2)
                    T.tma_copy(A[k * block_M : (k + 1) * block_M, :], ring[k % stages, :, :], barrier=full[k % stages])
                    T.mbarrier_arrive(mbarrier=full[k % stages])
            else:
                for k in T.serial(M // block_M):
                    T.mbarrier_wait_parity(mbarrier=full[k % stages], parity=(k // stages) % 2)
                    T.copy(ring[k % stages, :, :], f)
                    T.mbarrier_arrive(mbarrier=empty[k % stages])
                    for i, j in T.Parallel(block_M, N):
                        f[i, j] = f[i, j] * 2 + 1
                    T.copy(f, B[k * block_M : (k + 1) * block_M, :])

    return pair_main


@tilelang.jit(out_idx=[1])
def rb_three(N=64):
    # Register shares 40 + 232 + 232 = 504 a thread of each warpgroup: setmaxnreg.inc waits until the SM's
    # 64K registers (512 x 128) have room, so 240 + 240 + 40 = 520 hung on the H200 (2026-12-07), a
    # deadlock neither CPU model sees (registers are not modelled).
    @T.prim_func
    def three_main(A: T.Tensor((3, N, N), "int32"), B: T.Tensor((3, N, N), "int32")):
        with T.Kernel(1, threads=384) as bx:
            f0 = T.alloc_fragment((N, N), "int32")
            f1 = T.alloc_fragment((N, N), "int32")
            S = T.alloc_shared((N, N), "int32")
            flag = T.alloc_shared((1,), "int32")
            ready = T.alloc_barrier(128)
            tx = T.get_thread_binding()
            if tx >= 256:
                T.set_max_nreg(40, 0)
                T.copy(A[1, :, :], S)
                T.copy(A[2, :, :], B[2, :, :])
                flag[0] = 7
                T.fence_proxy_async()
                T.barrier_arrive(ready)
            elif tx < 128:
                T.set_max_nreg(232, 1)
                T.copy(A[0, :, :], f0)
                for i, j in T.Parallel(N, N):
                    f0[i, j] = f0[i, j] * 3
                T.copy(f0, B[0, :, :])
            else:
                T.set_max_nreg(232, 1)
                T.barrier_wait(ready, 0)
                T.copy(S, f1)
                for i, j in T.Parallel(N, N):
                    f1[i, j] = f1[i, j] - 5 + flag[0]
                T.copy(f1, B[1, :, :])

    return three_main


@tilelang.jit(out_idx=[3])
def rb_wgmma(H=64, N=64, D=64, k_tile=32):
    @T.prim_func
    def wgmma_main(
        Q: T.Tensor((H, D), "float16"), K: T.Tensor((N, D), "float16"), V: T.Tensor((N, D), "float16"),
        O: T.Tensor((H, D), "float32")
    ):
        with T.Kernel(1, threads=256) as bx:
            Q_s = T.alloc_shared((H, D), "float16")
            K_s = T.alloc_shared((N, D), "float16")
            V_s = T.alloc_shared((N, D), "float16")
            acc_s = T.alloc_fragment((H, N), "float32")
            acc_c = T.alloc_fragment((H, N), "float16")
            acc_o = T.alloc_fragment((H, D), "float32")
            loaded = T.alloc_barrier(128)
            tx = T.get_thread_binding()
            if tx >= 128:
                T.tma_copy(Q, Q_s, barrier=loaded)
                T.tma_copy(K, K_s, barrier=loaded)
                T.tma_copy(V, V_s, barrier=loaded)
                T.barrier_arrive(loaded)
            else:
                T.barrier_wait(loaded, 0)
                T.fill(acc_s, 1.0)
                for j in T.unroll(D // k_tile):
                    T.wgmma_gemm(
                        Q_s[:, j * k_tile : (j + 1) * k_tile], K_s[:, j * k_tile : (j + 1) * k_tile], acc_s,
                        transpose_B=True, clear_accum=(j == 0)
                    )
                T.wait_wgmma(0)
                for i, j in T.Parallel(H, N):
                    acc_s[i, j] = acc_s[i, j] * 0.125
                T.copy(acc_s, acc_c)
                T.clear(acc_o)
                T.wgmma_gemm(acc_c, V_s, acc_o)
                T.wait_wgmma(0)
                T.copy(acc_o, O)

    return wgmma_main


@tilelang.jit(out_idx=[1])
def rb_deadlock(N=128):
    @T.prim_func
    def deadlock_main(A: T.Tensor((N,), "float32"), B: T.Tensor((N,), "float32")):
        with T.Kernel(1, threads=256) as bx:
            S = T.alloc_shared((N,), "float32")
            never = T.alloc_barrier(128)
            tx = T.get_thread_binding()
            if tx < 128:
                T.barrier_wait(never, 0)
                T.copy(S, B)
            else:
                T.copy(A, S)

    return deadlock_main


# PAIR: check: PASS
# THREE: check: PASS
# WGMMA: check: PASS
# TIR: tx = T.get_thread_binding()
# TIR-NEXT: if T.ws(2):
# TIR-NEXT: T.set_max_nreg(40, 0)
# TIR: flag[0] = 7
# TIR-NEXT: T.fence_proxy_async()
# TIR: if T.ws(0):
# TIR-NEXT: T.set_max_nreg(232, 1)
# TIR: if T.ws(1):
# TIR-NEXT: T.set_max_nreg(232, 1)
# TIRG: for j in T.unroll(2):
# TIRG-NEXT: if j == 0:
# TIRG-NEXT: T.gemm(Q_s[0:64, j * 32:j * 32 + 32], K_s[0:64, j * 32:j * 32 + 32], acc_s, transpose_B=True, policy=T.GemmWarpPolicy.FullRow, clear_accum=True)
# TIRG-NEXT: else:
# TIRG-NEXT: T.gemm(Q_s[0:64, j * 32:j * 32 + 32], K_s[0:64, j * 32:j * 32 + 32], acc_s, transpose_B=True, policy=T.GemmWarpPolicy.FullRow)
# TIRG: T.gemm(acc_c, V_s, acc_o, policy=T.GemmWarpPolicy.FullRow)
# SIMT: if T.get_thread_binding(0) >= 256 and T.get_thread_binding(0) < 384:
# SIMT-NEXT: T.ptx_setmaxnreg(40, 0)
# SIMT: T.ptx_fence_proxy_async()
# SIMT: if T.get_thread_binding(0) < 128:
# SIMT-NEXT: T.ptx_setmaxnreg(232, 1)
# PTX: setmaxnreg.dec.sync.aligned.u32 40
# PTX: fence.proxy.async.shared::cta
# PTX: setmaxnreg.inc.sync.aligned.u32 232
# DEADLOCK: role_branches.py:{{[0-9]+}}:{{[0-9]+}}: error: deadlock
