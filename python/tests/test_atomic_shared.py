"""T.atomic_add into a shared buffer, and the split-K corner form T.atomic_add(C[i0, j0], region) (issue 30),
through tilelang_ptx on the CPU SIMT executor with NumPy: exact integer results."""
import numpy as np

import tilelang_ptx as tilelang
import tilelang_ptx.language as T


@tilelang.jit(out_idx=-1)
def histogram(N=4096, bins=16):
    @T.prim_func
    def main(A: T.Tensor((N,), "int32"), H: T.Tensor((bins,), "int32")):
        with T.Kernel(1, threads=256) as bx:
            S = T.alloc_shared((bins,), "int32")
            T.clear(S)
            for i in T.Parallel(N):
                T.atomic_add(S[A[i] % bins], 1)
            T.copy(S, H)

    return main


@tilelang.jit
def split_k(M=64, N=32, splits=4):
    @T.prim_func
    def main(A: T.Tensor((splits, M, N), "int32"), C: T.Tensor((M, N), "int32")):
        with T.Kernel(splits, threads=128) as bk:
            F = T.alloc_fragment((M, N), "int32")
            T.copy(A[bk, 0, 0], F)
            T.atomic_add(C[0, 0], F)

    return main


def test_shared_histogram_exact():
    A = ((np.arange(4096, dtype=np.int64) * 2654435761) % 1000).astype(np.int32)
    H = histogram(4096, 16)(A)
    assert H.tolist() == np.bincount(A % 16, minlength=16).tolist()
    assert int(H.sum()) == 4096


def test_corner_region_atomic_exact():
    A = (np.arange(4 * 64 * 32, dtype=np.int32) % 97 - 48).reshape(4, 64, 32)
    C = np.full((64, 32), 5, dtype=np.int32)
    split_k(64, 32, 4)(A, C)
    assert C.tolist() == (A.sum(axis=0) + 5).tolist()
