# T.ptx_setmaxnreg, T.ptx_wgmma_wait with no accumulators and with float16
# ones, on two warpgroups (test/NVPTX/wgmma.test; ptxas/wgmma).  Warpgroup 0
# gives registers back, warpgroup 1 takes more (docs/hopper.md "The kernel's shape").
import tilelang.language as T


@T.prim_func
def main(A: T.Tensor((256, 8), "float16")):
    with T.Kernel(1, threads=256) as bx:
        C = T.alloc_local((8,), "float16")
        for r in T.unroll(8):
            C[r] = A[T.get_thread_binding(0), r]
        if T.get_thread_binding(0) < 128:
            T.ptx_setmaxnreg(40, 0)
        else:
            T.ptx_setmaxnreg(232, 1)
        T.ptx_wgmma_fence()
        T.ptx_wgmma_commit()
        T.ptx_wgmma_wait(1, C, 0, 0)
        T.ptx_wgmma_wait(0, C, 0, 8)
        for r in T.unroll(8):
            A[T.get_thread_binding(0), r] = C[r]
