# SIMT-level kernel (already lowered) that uses every intrinsic of
# docs/simt-ir.md "Asynchronous pipelines": B[i] = A[i] * 2 + 1
# over 8192 float32 elements, 8 blocks of 96 threads, 1024 elements a block in
# 8 chunks of 128.  Warp 0 produces into a 3-stage ring of shared buffers
# guarded by full (bars[0..2], 32 arrivals: every producer lane) and empty
# (bars[3..5], 64 arrivals) mbarriers with phase parity: even chunks by one
# T.ptx_cp_async_bulk after lane 0's T.ptx_mbarrier_arrive_expect_tx (the
# other lanes arrive plainly), odd chunks by ordinary stores of the 32 lanes,
# each completing its 16 bytes of the transaction count that lane 0 announced
# with T.ptx_mbarrier_expect_tx, then arriving itself (release: each lane's
# arrive orders its own stores; complete_tx is relaxed).  The lanes fence the
# async proxy after their stores, since the stage is next written by a bulk
# copy (async proxy).
# Warps 1 and 2 consume: wait for the chunk, read it, release the stage, and
# write 2x+1 into one of two output slots that thread 32 stores to B with
# T.ptx_cp_async_bulk_store (generic writes, T.ptx_fence_proxy_async, warp 2
# T.ptx_bar_arrive(3, 64) while warp 1 T.ptx_bar_sync(3, 64) waits; the slot
# is reused after T.ptx_bulk_wait_group(1) and T.ptx_bar_sync(2, 64)).
# Conditions on the thread index are written with T.get_thread_binding(0) itself
# (not a variable bound to it), so that the barrier pass (lib/Lower/barrier.c)
# sees them as per-thread and puts no T.sync_threads() inside.  Needs sm_90.  Used by test/NVPTX/async.test (PTX, ptxas) and
# test/GPU/test_async_ring.c (the GPU; compute-sanitizer racecheck flagged the
# earlier form, whose lanes were ordered before lane 0's single arrive only by
# T.ptx_bar_sync(1, 32)).
import tilelang.language as T


@T.prim_func
def main(A: T.Tensor((8192,), "float32"), B: T.Tensor((8192,), "float32")):
    with T.Kernel(8, threads=96) as bx:
        ring = T.alloc_shared((384,), "float32")
        outs = T.alloc_shared((256,), "float32")
        bars = T.alloc_shared((6,), "uint64")
        tx = T.get_thread_binding(0)
        lane = tx % 32
        if T.get_thread_binding(0) == 0:
            for s in T.serial(3):
                T.ptx_mbarrier_init(bars, s, 32)
                T.ptx_mbarrier_init(bars, s + 3, 64)
        T.sync_threads()
        if T.get_thread_binding(0) < 32:
            for k in T.serial(8):
                T.ptx_mbarrier_wait(bars, k % 3 + 3, (k // 3 + 1) % 2)
                if k % 2 == 0:
                    if T.get_thread_binding(0) % 32 == 0:
                        T.ptx_mbarrier_arrive_expect_tx(bars, k % 3, 512)
                        T.ptx_cp_async_bulk(ring, k % 3 * 128, A, bx * 1024 + k * 128, 512, bars, k % 3)
                    else:
                        T.ptx_mbarrier_arrive(bars, k % 3)
                else:
                    if T.get_thread_binding(0) % 32 == 0:
                        T.ptx_mbarrier_expect_tx(bars, k % 3, 512)
                    for v in T.serial(4):
                        ring[k % 3 * 128 + v * 32 + lane] = A[bx * 1024 + k * 128 + v * 32 + lane]
                    T.ptx_fence_proxy_async()
                    T.ptx_mbarrier_complete_tx(bars, k % 3, 16)
                    T.ptx_mbarrier_arrive(bars, k % 3)
        else:
            c = tx - 32
            for k in T.serial(8):
                T.ptx_mbarrier_wait(bars, k % 3, k // 3 % 2)
                x0 = ring[k % 3 * 128 + c]
                x1 = ring[k % 3 * 128 + c + 64]
                T.ptx_mbarrier_arrive(bars, k % 3 + 3)
                if T.get_thread_binding(0) == 32:
                    T.ptx_bulk_wait_group(1)
                T.ptx_bar_sync(2, 64)
                outs[k % 2 * 128 + c] = x0 * T.float32(2) + T.float32(1)
                outs[k % 2 * 128 + c + 64] = x1 * T.float32(2) + T.float32(1)
                T.ptx_fence_proxy_async()
                if T.get_thread_binding(0) < 64:
                    T.ptx_bar_sync(3, 64)
                else:
                    T.ptx_bar_arrive(3, 64)
                if T.get_thread_binding(0) == 32:
                    T.ptx_cp_async_bulk_store(B, bx * 1024 + k * 128, outs, k % 2 * 128, 512)
                    T.ptx_bulk_commit_group()
            if T.get_thread_binding(0) == 32:
                T.ptx_bulk_wait_group(0)
