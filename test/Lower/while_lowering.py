# RUN: %tl-opt --emit=simt --kernel=staged %s | FileCheck %s --check-prefix=STAGED
# RUN: %tl-opt --emit=simt --kernel=shared_cond %s | FileCheck %s --check-prefix=SHCOND
# RUN: %tl-opt --emit=simt --kernel=pipelined %s | FileCheck %s --check-prefix=PIPE
# RUN: %tl-opt --emit=ptx --kernel=pipelined %s | FileCheck %s --check-prefix=PTX
# RUN: %tl-run --device=cpu --check --out-idx=none --kernel=shared_cond %s | FileCheck %s --check-prefix=OK
# RUN: %tl-run --device=cpu --check --out-idx=none --kernel=pipelined %s | FileCheck %s --check-prefix=OK
# Lowering of `while` loops (a loop whose trip count only the run knows):
#  - staged: the barrier pass walks the body as a loop body that may run
#    again: the write of S at the top of an iteration waits for the reads of
#    the previous one (a T.sync_threads() opens the body).
#  - shared_cond: a condition that reads shared memory is read before every
#    iteration: a barrier before the loop and at the end of its body.
#  - pipelined: a T.Pipelined loop of a run-time trip count inside the while
#    keeps its cp.async pipeline (its copies read a local buffer the pipelined
#    loop does not write); the PTX has the loop's back edge.
import tilelang
import tilelang.language as T


@tilelang.jit
def staged(N=256):
    @T.prim_func
    def staged_main(A: T.Tensor((N,), "float32"), B: T.Tensor((N,), "float32")):
        with T.Kernel(2, threads=64) as bx:
            S = T.alloc_shared((32,), "float32")
            i = T.alloc_local((1,), "int32")
            i[0] = bx * 4
            # STAGED: while i[0] < bx * 4 + 3:
            # STAGED-NEXT: T.sync_threads()
            # STAGED: T.sync_threads()
            # STAGED: B[i[0] * 32 + T.get_thread_binding(0)] = S[T.get_thread_binding(0)] * 2.0
            # STAGED-NEXT: i[0] = i[0] + 1
            while i[0] < bx * 4 + 3:
                T.copy(A[i[0] * 32], S)
                for j in T.Parallel(32):
                    B[i[0] * 32 + j] = S[j] * 2.0
                i[0] = i[0] + 1

    return staged_main


@tilelang.jit
def shared_cond(N=64):
    @T.prim_func
    def shared_cond_main(A: T.Tensor((N,), "int32"), B: T.Tensor((N,), "int32")):
        with T.Kernel(1, threads=32) as bx:
            S = T.alloc_shared((N,), "int32")
            T.copy(A, S)
            # SHCOND: T.sync_threads()
            # SHCOND-NEXT: while S[0] < 40:
            # SHCOND-NEXT: T.sync_threads()
            # SHCOND: S[T.get_thread_binding(0) * 2 + vi] = S[T.get_thread_binding(0) * 2 + vi] + 7
            # SHCOND-NEXT: T.sync_threads()
            # SHCOND-NEXT: if T.get_thread_binding(0) < 16:
            while S[0] < 40:
                for j in T.Parallel(N):
                    S[j] = S[j] + 7
            T.copy(S, B)

    return shared_cond_main


@tilelang.jit
def pipelined(M=32, K=256, block_K=32):
    @T.prim_func
    def pipelined_main(A: T.Tensor((M, K), "float16"), B: T.Tensor((M, 32), "float32")):
        with T.Kernel(1, threads=128) as bx:
            S = T.alloc_shared((M, block_K), "float16")
            acc = T.alloc_fragment((M, block_K), "float32")
            start = T.alloc_local((1,), "int32")
            stop = T.alloc_local((1,), "int32")
            T.clear(acc)
            start[0] = 0
            # PIPE: while start[0] < 8:
            # PIPE-NEXT: stop[0] = T.min(start[0] + 3, 8)
            # (start and stop are the same in every thread: the barrier goes inside the prologue's guard)
            # PIPE-NEXT: if 0 < stop[0] - start[0]:
            # PIPE-NEXT: T.sync_threads()
            # PIPE: T.ptx_cp_async(S,
            # PIPE: T.ptx_commit_group()
            # PIPE: for k in T.serial(stop[0] - start[0]):
            # PIPE: T.ptx_wait_group(0)
            # PIPE: T.ptx_cp_async(S, (k + 1) % 2 *
            # PIPE: start[0] = stop[0]
            # PTX: cp.async.cg.shared.global
            # PTX: cp.async.wait_group 0;
            while start[0] < K // block_K:
                stop[0] = T.min(start[0] + 3, K // block_K)
                for k in T.Pipelined(stop[0] - start[0], num_stages=2):
                    T.copy(A[0, (start[0] + k) * block_K], S)
                    for i, j in T.Parallel(M, block_K):
                        acc[i, j] = acc[i, j] + S[i, j]
                start[0] = stop[0]
            T.copy(acc, B)

    return pipelined_main
# OK: check: PASS
