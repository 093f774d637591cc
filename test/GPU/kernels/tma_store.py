# SIMT-level kernel (docs/simt-ir.md "TMA tensor copies"; issue 12, part T):
# O = A through shared memory with TMA both ways: each of the 16 blocks
# loads the 32 x 64 box of A at (t // 4 * 32, t % 4 * 64) with swizzle 128
# (T.ptx_tma_load onto an mbarrier), waits, and thread 0 stores the image
# back to the same box of O (T.ptx_tma_store through the same swizzle,
# then its bulk group).  A and O are float16 [100, 200]: the 4 x 4 boxes
# cover 128 x 256, so the edge boxes load zeros past the end and the store
# drops those elements.  O's map is over an out_idx output (the runtime
# encodes it after allocating O).  test/GPU/test_tma.c compares O with A
# and with the CPU executor.
import tilelang.language as T


@T.prim_func
def main(A: T.Tensor((100, 200), "float16"), O: T.Tensor((100, 200), "float16")):
    with T.Kernel(16, threads=32) as t:
        S = T.alloc_shared((2048,), "float16")
        bars = T.alloc_shared((1,), "uint64")
        if T.get_thread_binding(0) == 0:
            T.ptx_mbarrier_init(bars, 0, 1)
            T.ptx_fence_proxy_async()
        T.sync_threads()
        if T.get_thread_binding(0) == 0:
            T.ptx_mbarrier_arrive_expect_tx(bars, 0, 4096)
            T.ptx_tma_load(S, 0, bars, 0, A, 128, 32, 64, t // 4 * 32, t % 4 * 64)
            T.ptx_mbarrier_wait(bars, 0, 0)
            T.ptx_tma_store(O, S, 0, 128, 32, 64, t // 4 * 32, t % 4 * 64)
            T.ptx_bulk_commit_group()
            T.ptx_bulk_wait_group(0)
