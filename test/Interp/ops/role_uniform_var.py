# REQUIRES: tl-run
# RUN: %tl-run --device=cpu --check --target=sm_90a --int-range 0:4 --seed 0 %s | FileCheck %s
# RUN: %tl-run --device=cpu --check --target=sm_90a --int-range 0:4 --seed 3 --schedule-seed=7 %s | FileCheck %s
# RUN: %tl-run --device=cpu --check --target=sm_80 --int-range 0:4 --seed 5 %s | FileCheck %s
# RUN: %tl-run --device=cpu --check --target=sm_90a --kernel=ru_loop_scopes %s | FileCheck %s
# RUN: %tl-opt --emit=simt --target=sm_90a --print-after=barriers %s -o /dev/null 2>&1 | FileCheck %s --check-prefix=BAR
# RUN: %tl-opt --emit=simt --target=sm_90a %s | FileCheck %s --check-prefix=SIMT
# A role-branch kernel in the form of TileLang's minference example
# (example_vertical_slash_sparse_attn.py), checked on the CPU SIMT executor
# against the reference evaluator:
#  - `nblk = Cnt[0]` and `ncol = Cnt[1]`: T.alloc_var scalars stored outside
#    the role scopes from global memory.  Every thread runs such a store
#    (lib/Lower/ws_scope.c all_threads_store), so the producer scope
#    (warpgroup 1) loops over nblk as the consumer (warpgroup 0) does;
#  - `if ncol != 0:` around a T.Parallel store into shared memory and a
#    T.gemm that reads it: ncol is the same on every thread, so the barriers
#    pass places a barrier inside that branch (lib/Lower/barrier.c
#    find_uniform; before it treated the branch as per-thread and placed
#    none: a race the executor reports);
#  - T.Parallel(..., prefer_async=True, annotations={...}) with
#    T.ptx_commit_group / T.ptx_wait_group, and
#    T.annotate_producer_reg_dealloc / T.annotate_consumer_reg_alloc
#    (hints without code).
# ru_loop_scopes (TileLang's warp_specialize/example_warp_specialize_gemm_copy_0_gemm_1.py form): a fragment
# written only inside T.ws(1) scopes, one of them inside a loop outside the scopes, is no write outside them
# (a loop around scopes is walked as tl_ws_scopes_finish walks it).
# --int-range 0:4 keeps the counts and the gathered row indices in range
# (seed 0: 2 blocks and 4 columns; the other seeds other counts).
# CHECK: check: PASS
# BAR: if ncol[0] != 0:
# BAR-NEXT: for i, j in T.Parallel(64, 32):
# BAR: T.ptx_commit_group()
# BAR-NEXT: T.ptx_wait_group(0)
# BAR-NEXT: T.sync_threads()
# BAR-NEXT: T.gemm(Q_s, C_s
# SIMT-NOT: annotate_
import tilelang
import tilelang.language as T


@tilelang.jit(out_idx=[-1])
def ru_sparse(S=256, D=32):
    @T.prim_func
    def ru_sparse_main(
        Q: T.Tensor((64, D), "float16"),
        K: T.Tensor((S, D), "float16"),
        Cnt: T.Tensor((2,), "int32"),
        Idx: T.Tensor((64,), "int32"),
        O: T.Tensor((64, 64), "float32"),
    ):
        with T.Kernel(1, threads=256) as bx:
            Q_s = T.alloc_shared((64, D), "float16")
            K_s = T.alloc_shared((4, 64, D), "float16")
            C_s = T.alloc_shared((1, 64, D), "float16")
            acc = T.alloc_fragment((64, 64), "float32")
            nblk = T.alloc_var("int32")
            ncol = T.alloc_var("int32")
            bars = T.alloc_barrier([128] * 5)
            nblk = Cnt[0]
            ncol = Cnt[1]
            tid = T.get_thread_binding()
            if tid >= 128:
                T.annotate_producer_reg_dealloc()
                T.tma_copy(Q, Q_s, barrier=bars[4])
                T.mbarrier_arrive(mbarrier=bars[4])
                for b in T.serial(nblk):
                    T.tma_copy(K[b * 64 : (b + 1) * 64, :], K_s[b, :, :], barrier=bars[b])
                    T.mbarrier_arrive(mbarrier=bars[b])
            else:
                T.annotate_consumer_reg_alloc(232)
                T.clear(acc)
                T.mbarrier_wait_parity(mbarrier=bars[4], parity=0)
                for b in T.serial(nblk):
                    T.mbarrier_wait_parity(mbarrier=bars[b], parity=0)
                    T.gemm(Q_s, K_s[b, :, :], acc, transpose_B=True)
                if ncol != 0:
                    for i, j in T.Parallel(64, D, prefer_async=True, annotations={"parallel_async_without_async_commit_wait": True}):
                        C_s[0, i, j] = T.if_then_else(i < ncol, K[Idx[i], j], 0)
                    T.ptx_commit_group()
                    T.ptx_wait_group(0)
                    T.gemm(Q_s, C_s[0, :, :], acc, transpose_B=True)
                T.copy(acc, O)

    return ru_sparse_main


@tilelang.jit(out_idx=[-1])
def ru_loop_scopes(K=256):
    @T.prim_func
    def ru_loop_scopes_main(A: T.Tensor((64, K), "float16"), B: T.Tensor((K, 64), "float16"), C: T.Tensor((64, 64), "float32")):
        with T.Kernel(1, threads=256) as bx:
            A_s = T.alloc_shared((64, 64), "float16")
            B_s = T.alloc_shared((64, 64), "float16")
            C_l = T.alloc_fragment((64, 64), "float32")
            ready = T.alloc_barrier(arrive_count=128)
            done = T.alloc_barrier(arrive_count=128)
            with T.ws(1):
                T.clear(C_l)
            for ko in T.serial(K // 64):
                with T.ws(0):
                    T.barrier_wait(done, (ko + 1) % 2)
                    T.tma_copy(A[0, ko * 64], A_s, barrier=ready)
                    T.tma_copy(B[ko * 64, 0], B_s, barrier=ready)
                    T.barrier_arrive(ready)
                with T.ws(1):
                    T.barrier_wait(ready, ko % 2)
                    T.gemm(A_s, B_s, C_l)
                    T.barrier_arrive(done)
            with T.ws(1):
                T.copy(C_l, C)

    return ru_loop_scopes_main
