# SIMT-level kernel: a 2-stage ring filled by cp.async and signalled with
# cp.async.mbarrier.arrive.noinc (T.ptx_cp_async_mbarrier_arrive_noinc, the
# lowering of TileLang's T.cp_async_barrier_noinc; docs/simt-ir.md
# "Asynchronous pipelines").  B[i] = A[i] * 2 + 1 over 1024 floats, 2 blocks
# of 64 threads: warp 0 copies 16 bytes a thread per chunk of 128 floats
# into stage i % 2 and arrives on full[i % 2] (count 32) through the noinc
# form, which fires once its copies completed; warp 1 waits on full, reads,
# arrives on empty (count 32).  Used by test/NVPTX/cp-async-noinc.test (PTX
# for sm_90a / sm_86, the CPU executor's values, race and deadlock reports)
# and ptxas/async.
import tilelang.language as T


@T.prim_func
def main(A: T.Tensor((1024,), "float32"), B: T.Tensor((1024,), "float32")):
    with T.Kernel(2, threads=64) as bx:
        S = T.alloc_shared((256,), "float32")
        bars = T.alloc_shared((4,), "uint64")
        tx = T.get_thread_binding(0)
        if T.get_thread_binding(0) == 0:
            for s in T.serial(2):
                T.ptx_mbarrier_init(bars, s, 32)
                T.ptx_mbarrier_init(bars, 2 + s, 32)
        T.sync_threads()
        if T.get_thread_binding(0) < 32:
            for i in T.serial(4):
                T.ptx_mbarrier_wait(bars, 2 + i % 2, (i // 2 + 1) % 2)
                T.ptx_cp_async(S, i % 2 * 128 + tx * 4, A, bx * 512 + i * 128 + tx * 4, 16, True)
                T.ptx_cp_async_mbarrier_arrive_noinc(bars, i % 2)
        else:
            for i in T.serial(4):
                T.ptx_mbarrier_wait(bars, i % 2, i // 2 % 2)
                for j in T.unroll(4):
                    B[bx * 512 + i * 128 + (tx - 32) * 4 + j] = S[i % 2 * 128 + (tx - 32) * 4 + j] * T.float32(2) + T.float32(1)
                T.ptx_mbarrier_arrive(bars, 2 + i % 2)
