"""T.alloc_reducer / T.finalize_reducer (issue 30) through tilelang_ptx on the CPU SIMT executor with
NumPy: TileLang's reducer use (a per-thread accumulator in T.Parallel, combined at finalize) with
exact integer results for sum, max and min, rows spread over one warp's lanes and over several warps."""
import numpy as np
import pytest

import tilelang_ptx as tilelang
import tilelang_ptx.language as T


@tilelang.jit(out_idx=-1)
def row_reduce(M=8, N=64, threads=128, op="sum"):
    @T.prim_func
    def main(A: T.Tensor((M, N), "int32"), B: T.Tensor((M,), "int32")):
        with T.Kernel(1, threads=threads) as bx:
            A_local = T.alloc_fragment((M, N), "int32")
            R = T.alloc_reducer((M,), "int32", op=op, replication="all")
            T.copy(A, A_local)
            if op == "sum":
                T.clear(R)
            elif op == "max":
                T.fill(R, -2147483648)
            else:
                T.fill(R, 2147483647)
            for i, j in T.Parallel(M, N):
                if op == "sum":
                    R[i] += A_local[i, j]
                elif op == "max":
                    R[i] = T.max(R[i], A_local[i, j])
                else:
                    R[i] = T.min(R[i], A_local[i, j])
            T.finalize_reducer(R)
            T.copy(R, B)

    return main


@pytest.mark.parametrize("M,N,threads", [(8, 64, 128), (2, 512, 256), (4, 32, 32)])
@pytest.mark.parametrize("op", ["sum", "max", "min"])
def test_row_reducer_exact(M, N, threads, op):
    kernel = row_reduce(M, N, threads, op)
    A = ((np.arange(M * N, dtype=np.int64) * 7919) % 1001 - 500).astype(np.int32).reshape(M, N)
    B = kernel(A)
    want = {"sum": A.sum(axis=1), "max": A.max(axis=1), "min": A.min(axis=1)}[op]
    assert B.tolist() == want.tolist()
