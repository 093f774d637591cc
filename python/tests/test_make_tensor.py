"""T.make_tensor over a pointer table (issue 30; TileLang's grouped_gemm/example_grouped_gemm_fwd_ptr.py) through
tilelang_ptx on the CPU SIMT executor with NumPy: the host passes the table as an int64 tensor of addresses
(TileLang's T.Tensor((G,), T.ptr), filled with data_ptr()s, here ndarray.ctypes.data); on the CPU a view may
only reach the call's tensor arguments, and an address elsewhere is a located error, never a silent read."""
import numpy as np
import pytest

import tilelang_ptx as tilelang
import tilelang_ptx.language as T


@tilelang.jit
def scale_groups(G=3, N=256):
    @T.prim_func
    def main(X_all: T.Tensor((G, N), "float32"), P: T.Tensor((G,), T.ptr), Y: T.Tensor((G, N), "float32")):
        with T.Kernel(G, threads=128) as bx:
            X = T.make_tensor(P[bx], (N,), "float32")
            for i in T.Parallel(N):
                Y[bx, i] = X[i] * 2.0 + bx

    return main


def table(a, G):
    step = a.nbytes // G
    return np.array([a.ctypes.data + g * step for g in range(G)], dtype=np.int64)


def test_views_read_the_tables_slices():
    X = np.random.default_rng(0).standard_normal((3, 256)).astype(np.float32)
    Y = np.zeros((3, 256), dtype=np.float32)
    P = table(X, 3)[::-1].copy()  # group g reads slice 2 - g
    scale_groups(3, 256)(X, P, Y)
    want = X[::-1] * 2 + np.arange(3, dtype=np.float32)[:, None]
    assert np.array_equal(Y, want)


def test_address_outside_the_arguments_is_an_error():
    X = np.ones((3, 256), dtype=np.float32)
    other = np.ones((3, 256), dtype=np.float32)  # not an argument of the call
    Y = np.zeros((3, 256), dtype=np.float32)
    with pytest.raises(Exception, match="points into no tensor argument"):
        scale_groups(3, 256)(X, table(other, 3), Y)
