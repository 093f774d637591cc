# SIMT-level kernel with only the sm_80 intrinsics of docs/simt-ir.md
# "Asynchronous pipelines": named barriers and the mbarrier init /
# arrive / parity wait.  Warp 0 (after an mbarrier init by thread 0) writes a
# chunk of shared memory and arrives (lane 0, after T.ptx_bar_sync(1, 32)
# orders the warp's stores); warp 1 waits on phase 0, copies the chunk out,
# then the two warps meet at barrier 2 (warp 1 arrives, warp 0 syncs).  The
# barrier ids of warp 0's first sync and of warp 1's arrive are warp-uniform
# expressions (registers in the PTX), the others constants.  Used
# by test/NVPTX/async.test: PTX for sm_86 / sm_89 (test_wait.parity loop) and
# sm_90a (try_wait.parity loop), the PTX ISA error on sm_80 (PTX 7.0).
import tilelang.language as T


@T.prim_func
def main(A: T.Tensor((32,), "float32"), B: T.Tensor((32,), "float32")):
    with T.Kernel(1, threads=64) as bx:
        buf = T.alloc_shared((32,), "float32")
        bar = T.alloc_shared((1,), "uint64")
        if T.get_thread_binding(0) == 0:
            T.ptx_mbarrier_init(bar, 0, 1)
        T.sync_threads()
        if T.get_thread_binding(0) < 32:
            buf[T.get_thread_binding(0)] = A[T.get_thread_binding(0)]
            T.ptx_bar_sync(1 + T.get_thread_binding(0) // 32, 32)
            if T.get_thread_binding(0) == 0:
                T.ptx_mbarrier_arrive(bar, 0)
            T.ptx_bar_sync(2, 64)
        else:
            T.ptx_mbarrier_wait(bar, 0, 0)
            B[T.get_thread_binding(0) - 32] = buf[T.get_thread_binding(0) - 32]
            T.ptx_bar_arrive(2 + T.get_thread_binding(0) // 64, 64)
