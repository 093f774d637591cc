# Kernels that fail on purpose (issue 33; test/GPU/test_faults.c, test/GPU/python/faults_gpu.py):
#  - fm_big_ws: a 1 TiB T.alloc_global workspace, so that the runtime's cuMemAlloc of it fails with
#    CUDA_ERROR_OUT_OF_MEMORY before anything is launched (a CUDA error after which the context stays
#    usable); otherwise Out = A + 1 through the workspace.
#  - fm_oob: C[i] = A[off + i] with no bounds check, so that a far `off` reads unmapped memory: the
#    kernel faults (CUDA_ERROR_ILLEGAL_ADDRESS, a sticky error: the context is dead afterwards).
import tilelang.language as T


@T.prim_func
def fm_big_ws(A: T.Tensor((256,), "float32"), Out: T.Tensor((256,), "float32")):
    W = T.alloc_global((524288, 524288), "float32")
    with T.Kernel(1, threads=256) as bx:
        for i in T.Parallel(256):
            W[i, 0] = A[i]
        T.sync_threads()
        for i in T.Parallel(256):
            Out[i] = W[i, 0] + 1.0


@T.prim_func
def fm_oob(A: T.Tensor((256,), "float32"), C: T.Tensor((256,), "float32"), off: T.int32):
    with T.Kernel(1, threads=256) as bx:
        for i in T.Parallel(256):
            C[i] = A[off + i]
