# REQUIRES: tl-run
# RUN: not %tl-run --device=cpu %s 2>&1 | FileCheck %s
# T.cp_async_barrier_noinc (cp_async_noinc.py): the barrier expects 256
# arrivals, the 128 producer threads give 128 (one noinc each): the CPU SIMT
# executor reports a located deadlock at the consumers' wait, not a hang.
# (A file of its own: every kernel of cp_async_noinc.py passes its check.)
import tilelang
import tilelang.language as T


@tilelang.jit(out_idx=[1])
def cpa_deadlock(M=32, N=64):
    @T.prim_func
    def dead_main(A: T.Tensor((M, N), "float16"), B: T.Tensor((M, N), "float16")):
        with T.Kernel(1, threads=256) as bx:
            S = T.alloc_shared((M, N), "float16")
            full = T.alloc_barrier(256)
            tx = T.get_thread_binding()
            if tx >= 128:
                for r in T.serial(2):
                    T.ptx_cp_async(
                        T.access_ptr(S[r * 16 + (tx - 128) // 8, (tx - 128) % 8 * 8], "w", 8),
                        T.access_ptr(A[r * 16 + (tx - 128) // 8, (tx - 128) % 8 * 8], "r", 8),
                        8,
                    )
                T.cp_async_barrier_noinc(full)
            else:
                T.barrier_wait(full, 0)
                T.copy(S, B)

    return dead_main


# CHECK: cp_async_noinc_deadlock.py:{{[0-9]+}}:17: error: deadlock: every warp of the block is blocked
# CHECK-SAME: 128 of 256 arrivals pending
