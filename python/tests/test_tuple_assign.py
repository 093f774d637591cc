"""Tuple assignment in a kernel (issue 30; TileLang's test_swap_logic): every value is read before the first
store, so `a, b = b, a` over T.alloc_var names and `A[0], A[1] = A[1], A[0]` over buffer elements swap, on the
CPU SIMT executor with NumPy."""
import numpy as np

import tilelang_ptx as tilelang
import tilelang_ptx.language as T


@tilelang.jit
def swaps(rotate=False):
    @T.prim_func
    def main(A: T.Tensor((4,), "float32")):
        with T.Kernel(1, threads=1) as _:
            a = T.alloc_var(T.float32, A[0])
            b = T.alloc_var(T.float32, A[1])
            a, b = b, a
            A[0], A[1] = a, b
            if rotate:
                A[1], A[2], A[3] = A[2], A[3], A[1]
            else:
                A[2], A[3] = A[3], A[2]

    return main


def test_swaps():
    data = np.array([1.0, 2.0, 3.0, 4.0], np.float32)
    swaps()(data)
    assert data.tolist() == [2.0, 1.0, 4.0, 3.0]
    data = np.array([1.0, 2.0, 3.0, 4.0], np.float32)
    swaps(rotate=True)(data)
    assert data.tolist() == [2.0, 3.0, 4.0, 1.0]
