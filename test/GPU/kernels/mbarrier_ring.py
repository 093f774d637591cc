# SIMT-level kernel (docs/simt-ir.md "Asynchronous pipelines"; issue 11,
# acceptance 2): B[i] = A[i] * 2 + 1 over 8192 floats through a 3-stage ring
# of shared buffers guarded by full/empty mbarriers with phase parity.
# 2 blocks of 96 threads: warp 0 is the producer, warps 1 and 2 consume.
# Each block handles 4096 floats in 16 chunks of 256 (1 KiB); chunk i goes
# to stage i % 3 in round i // 3.  Thread 0 initialises the barriers, then a
# proxy fence (the async proxy's complete_tx will use them) and T.sync_threads().
#  - full[s] = bars[s] (count 1): lane 0 of the producer arrives with
#    expect_tx(1024), then issues the 1-D cp.async.bulk of the chunk, whose
#    complete_tx ends the phase.  Consumers wait for parity (i // 3) % 2.
#  - empty[s] = bars[3 + s] (count 64): every consumer thread arrives once
#    it has read its half of the stage.  The producer waits for parity
#    (i // 3 + 1) % 2: phase 0 is in progress at the start, so its first wait
#    (parity 1) returns at once.
#  - Each consumer warp writes its 128 results to its own part of O_s,
#    fences the generic-proxy stores (fence.proxy.async); the two consumer
#    warps meet at named barrier 1 (64 threads, the producer runs on), and
#    lane 0 of each stores its part with a bulk store (cp.async.bulk shared
#    -> global) and waits for the bulk group; a second bar.sync 1, 64 keeps
#    the lanes from overwriting O_s before that.
# Conditions on the thread index call T.get_thread_binding(0) directly, so
# that the barrier pass sees them as per-thread and leaves the branches alone.
# Used by test/unit/test_simt_sched.c (CPU executor) and the GPU test of
# issue 11 (sm_90).
import tilelang.language as T


@T.prim_func
def main(A: T.Tensor((8192,), "float32"), B: T.Tensor((8192,), "float32")):
    with T.Kernel(2, threads=96) as bx:
        A_s = T.alloc_shared((768,), "float32")
        O_s = T.alloc_shared((256,), "float32")
        bars = T.alloc_shared((6,), "uint64")
        tx = T.get_thread_binding(0)
        warp = tx // 32
        lane = tx % 32
        if T.get_thread_binding(0) == 0:
            for s in T.serial(3):
                T.ptx_mbarrier_init(bars, s, 1)
                T.ptx_mbarrier_init(bars, 3 + s, 64)
            T.ptx_fence_proxy_async()
        T.sync_threads()
        if T.get_thread_binding(0) < 32:
            if T.get_thread_binding(0) == 0:
                for i in T.serial(16):
                    T.ptx_mbarrier_wait(bars, 3 + i % 3, (i // 3 + 1) % 2)
                    T.ptx_mbarrier_arrive_expect_tx(bars, i % 3, 1024)
                    T.ptx_cp_async_bulk(A_s, i % 3 * 256, A, bx * 4096 + i * 256, 1024, bars, i % 3)
        else:
            c = warp - 1
            for i in T.serial(16):
                T.ptx_mbarrier_wait(bars, i % 3, i // 3 % 2)
                for j in T.unroll(4):
                    O_s[c * 128 + j * 32 + lane] = A_s[i % 3 * 256 + c * 128 + j * 32 + lane] * T.float32(2) + T.float32(1)
                T.ptx_mbarrier_arrive(bars, 3 + i % 3)
                T.ptx_fence_proxy_async()
                T.ptx_bar_sync(1, 64)
                if T.get_thread_binding(0) % 32 == 0:
                    T.ptx_cp_async_bulk_store(B, bx * 4096 + i * 256 + c * 128, O_s, c * 128, 512)
                    T.ptx_bulk_commit_group()
                    T.ptx_bulk_wait_group(0)
                T.ptx_bar_sync(1, 64)
