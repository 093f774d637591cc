# TMA tensor loads and a store (test/NVPTX/tma.test; ptxas/async in test/CMakeLists.txt)
import tilelang.language as T
@T.prim_func
def main(A: T.Tensor((128, 256), "float16"), B: T.Tensor((4, 64, 64), "bfloat16"), n: T.int32):
    with T.Kernel(2, threads=64) as bx:
        S = T.alloc_shared((8192,), "float16")
        U = T.alloc_shared((4096,), "bfloat16")
        bar = T.alloc_shared((1,), "uint64")
        if T.get_thread_binding(0) == 0:
            T.ptx_mbarrier_init(bar, 0, 1)
        T.sync_threads()
        if T.get_thread_binding(0) == 0:
            T.ptx_mbarrier_arrive_expect_tx(bar, 0, 20480)
            T.ptx_tma_load(S, 0, bar, 0, A, 128, 64, 64, bx * 64, n)
            T.ptx_tma_load(U, 0, bar, 0, B, 64, 2, 32, 32, bx, -3, 7)
            T.ptx_tma_load(S, 4096, bar, 0, A, 0, 16, 32, 5, bx * 32)
            T.ptx_tma_load(S, 6144, bar, 0, A, 128, 64, 64, 64, n)
        T.ptx_mbarrier_wait(bar, 0, 0)
        T.ptx_fence_proxy_async()
        T.sync_threads()
        if T.get_thread_binding(0) == 0:
            T.ptx_tma_store(B, U, 0, 64, 2, 32, 32, 1, 0, n)
            T.ptx_bulk_commit_group()
            T.ptx_bulk_wait_group(0)
