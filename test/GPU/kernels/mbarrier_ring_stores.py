# SIMT-level kernel (docs/simt-ir.md "Asynchronous pipelines"; issue 11,
# acceptance 2): the ring of mbarrier_ring.py, but the producer warp fills a
# stage with ordinary stores and completes the full barrier's transaction
# count itself: B[i] = A[i] * 2 + 1 over 8192 floats, 2 blocks of 96 threads
# (warp 0 produces, warps 1 and 2 consume), 16 chunks of 256 floats per
# block through 3 stages.
#  - full[s] = bars[s] (count 32): each producer lane stores its 8 floats of
#    the chunk, executes fence.proxy.async, then arrive.expect_tx(32) (its
#    release covers its stores) and complete_tx(32).  The phase completes
#    when all 32 lanes have arrived and the tx-count is back to 0.
#    Consumers wait for parity (i // 3) % 2.
#  - empty[s] = bars[3 + s] (count 64): every consumer thread arrives after
#    reading its half of the stage; the producer waits for parity
#    (i // 3 + 1) % 2, which passes at once in the first round.
#  - Consumers write B with ordinary stores.
# Conditions on the thread index call T.get_thread_binding(0) directly, so
# that the barrier pass sees them as per-thread and leaves the branches alone.
# Used by test/unit/test_simt_sched.c (CPU executor) and the GPU test of
# issue 11 (sm_90).
import tilelang.language as T


@T.prim_func
def main(A: T.Tensor((8192,), "float32"), B: T.Tensor((8192,), "float32")):
    with T.Kernel(2, threads=96) as bx:
        A_s = T.alloc_shared((768,), "float32")
        bars = T.alloc_shared((6,), "uint64")
        tx = T.get_thread_binding(0)
        warp = tx // 32
        lane = tx % 32
        if T.get_thread_binding(0) == 0:
            for s in T.serial(3):
                T.ptx_mbarrier_init(bars, s, 32)
                T.ptx_mbarrier_init(bars, 3 + s, 64)
        T.sync_threads()
        if T.get_thread_binding(0) < 32:
            for i in T.serial(16):
                T.ptx_mbarrier_wait(bars, 3 + i % 3, (i // 3 + 1) % 2)
                for j in T.unroll(8):
                    A_s[i % 3 * 256 + j * 32 + lane] = A[bx * 4096 + i * 256 + j * 32 + lane]
                T.ptx_fence_proxy_async()
                T.ptx_mbarrier_arrive_expect_tx(bars, i % 3, 32)
                T.ptx_mbarrier_complete_tx(bars, i % 3, 32)
        else:
            c = warp - 1
            for i in T.serial(16):
                T.ptx_mbarrier_wait(bars, i % 3, i // 3 % 2)
                for j in T.unroll(4):
                    B[bx * 4096 + i * 256 + c * 128 + j * 32 + lane] = A_s[i % 3 * 256 + c * 128 + j * 32 + lane] * T.float32(2) + T.float32(1)
                T.ptx_mbarrier_arrive(bars, 3 + i % 3)
