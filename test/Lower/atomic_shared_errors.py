# RUN: not %tl-opt --emit=simt %s 2>&1 | FileCheck %s
# An atomic into a shared buffer that a T.gemm reads (a swizzled layout) is
# refused at the atomic (the atomic's offset is the row-major one).
# CHECK: atomic_shared_errors.py:20:17: error: an atomic into the shared buffer 'As', which a T.gemm reads through a swizzled layout, is not lowered yet
import tilelang
import tilelang.language as T


@tilelang.jit(out_idx=-1)
def swizzled(M=64, N=64, K=32):
    @T.prim_func
    def swz(A: T.Tensor((M, K), "float16"), Bm: T.Tensor((K, N), "float16"), O: T.Tensor((M, N), "float32")):
        with T.Kernel(1, threads=128) as bx:
            As = T.alloc_shared((M, K), "float16")
            Bs = T.alloc_shared((K, N), "float16")
            C = T.alloc_fragment((M, N), "float32")
            T.copy(A, As)
            T.copy(Bm, Bs)
            for i, j in T.Parallel(M, K):
                T.atomic_add(As[i, j], 1.0)
            T.clear(C)
            T.gemm(As, Bs, C)
            T.copy(C, O)

    return swz
