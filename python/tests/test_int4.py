"""T.int4 / T.uint4 tensors (issue 30) through tilelang_ptx on the CPU SIMT executor with NumPy: TileLang's
storage (a T.int4 tensor of shape (M, K) is an int8 array of shape (M, K // 2), two values per byte, the
even element in the low nibble, as TileLang's example pack_int4 writes it), the int4 GEMM against an int32
reference computed here, an int4 output allocated by out_idx, and the argument checks' messages."""
import numpy as np
import pytest

import tilelang_ptx as tilelang
import tilelang_ptx.language as T


@tilelang.jit(out_idx=-1)
def gemm_int4(M=64, N=64, K=128, block_M=64, block_N=64, block_K=64, dtype="int4"):
    @T.prim_func
    def main(A: T.Tensor((M, K), dtype), B: T.Tensor((N, K), dtype), C: T.Tensor((M, N), T.int32)):
        with T.Kernel(T.ceildiv(N, block_N), T.ceildiv(M, block_M), threads=128) as (bx, by):
            A_shared = T.alloc_shared((block_M, block_K), dtype)
            B_shared = T.alloc_shared((block_N, block_K), dtype)
            C_local = T.alloc_fragment((block_M, block_N), T.int32)
            T.clear(C_local)
            for ko in T.Pipelined(T.ceildiv(K, block_K), num_stages=2):
                T.copy(A[by * block_M, ko * block_K], A_shared)
                T.copy(B[bx * block_N, ko * block_K], B_shared)
                T.gemm(A_shared, B_shared, C_local, transpose_B=True)
            T.copy(C_local, C[by * block_M, bx * block_N])

    return main


@tilelang.jit(out_idx=-1)
def copy_int4(M=64, K=128):
    @T.prim_func
    def main(A: T.Tensor((M, K), "int4"), B: T.Tensor((M, K), "int4")):
        with T.Kernel(1, threads=128) as bx:
            S = T.alloc_shared((M, K), "int4")
            T.copy(A, S)
            T.copy(S, B)

    return main


def pack(x, signed=True):
    """TileLang's pack_int4: element 2j in the low nibble of byte j, 2j + 1 in the high nibble."""
    x = x.astype(np.int16)
    p = (x[..., ::2] & 0xF) | ((x[..., 1::2] & 0xF) << 4)
    return p.astype(np.uint8).view(np.int8 if signed else np.uint8)


@pytest.mark.parametrize("M,N,K", [(64, 64, 128), (128, 64, 256)])
def test_int4_gemm_exact(M, N, K):
    rng = np.random.default_rng(M + K)
    a = rng.integers(-8, 8, (M, K))
    b = rng.integers(-8, 8, (N, K))
    C = gemm_int4(M, N, K)(pack(a), pack(b))
    assert C.dtype == np.int32
    assert (C == a @ b.T).all()


def test_uint4_gemm_exact():
    rng = np.random.default_rng(3)
    a = rng.integers(0, 16, (64, 128))
    b = rng.integers(0, 16, (64, 128))
    C = gemm_int4(64, 64, 128, dtype="uint4")(pack(a, False), pack(b, False))
    assert (C == a @ b.T).all()


def test_int4_output_allocated_as_storage():
    k = copy_int4(64, 128)
    assert [p.dtype for p in k.params] == ["int4", "int4"]
    a = pack(np.random.default_rng(5).integers(-8, 8, (64, 128)))
    B = k(a)
    assert B.dtype == np.int8 and B.shape == (64, 64)
    assert (B == a).all()


def test_int4_argument_errors():
    k = gemm_int4(64, 64, 128)
    a = pack(np.zeros((64, 128), dtype=np.int64))
    with pytest.raises(tilelang.kernel.ArgumentError, match=r"dtype: expected int8 \(the storage of int4: two "
                                                            r"values per byte\), got float16"):
        k(a.astype(np.float16), a)
    with pytest.raises(tilelang.kernel.ArgumentError, match=r"shape\[1\]: expected 64 \(int4 dim 128, two values "
                                                            r"per byte of int8\), got 128"):
        k(np.zeros((64, 128), dtype=np.int8), a)
    with pytest.raises(tilelang.kernel.ArgumentError, match=r"argument 'B' \(#1\): shape\[1\]: expected 64 \(int4 dim "
                                                            r"128, two values per byte of int8\), got 63"):
        k(a, np.zeros((64, 63), dtype=np.int8))
    with pytest.raises(tilelang.kernel.ArgumentError, match=r"dtype: expected int8 .*, got uint8"):
        k(a, a.view(np.uint8))


def test_int4_output_fast_path(monkeypatch):
    """_fastcall's output allocation (PyTorch tensors): an int4 output is a torch.int8 tensor of half
    the last dim, as on the pure path."""
    import sys
    import tilelang_ptx.kernel as kmod
    if kmod._fastcall is None:
        pytest.skip("tilelang_ptx._fastcall not built")
    try:
        import torch
    except ImportError:
        import os
        sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
        import fake_torch as torch
        monkeypatch.setitem(sys.modules, "torch", torch)
    monkeypatch.setattr(kmod, "_torch_tensor", None)
    kmod._use_torch()
    k = copy_int4(64, 128)
    a = pack(np.random.default_rng(6).integers(-8, 8, (64, 128)))
    n = kmod._fastcall.calls()
    B = k(torch.from_numpy(a))
    assert kmod._fastcall.calls() == n + 1
    assert tuple(B.shape) == (64, 64) and str(B.dtype) == "torch.int8"
    assert (B.cpu().numpy() == a).all()
