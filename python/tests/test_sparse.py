"""tilelang.utils.sparse (cuda.intrinsics.sparse_layout): TileLang's 2:4 compressor format, checked against
a NumPy decompression written here from the format's definition (docs/language.md "Sparse GEMM")."""
import os

import numpy as np
import pytest

from tilelang_ptx.utils import sparse


def semi_sparse(m, k, rng, dtype=np.float16):
    a = rng.standard_normal((m, k)).astype(dtype).reshape(m, k // 4, 4)
    for i in range(m):
        for g in range(k // 4):
            keep = rng.choice(4, size=rng.integers(0, 3), replace=False)
            a[i, g, [p for p in range(4) if p not in keep]] = 0
    return a.reshape(m, k)


def decompress_here(sp, e, k):
    m = sp.shape[0]
    bits = e.dtype.itemsize * 8
    w = e.view(f"uint{bits}").astype(np.int64)
    out = np.zeros((m, k), sp.dtype)
    for i in range(m):
        for g in range(k // 4):
            nib = (w[i, g // (bits // 4)] >> (4 * (g % (bits // 4)))) & 15
            p0, p1 = nib & 3, nib >> 2
            assert p0 < p1, "ordered metadata"
            out[i, 4 * g + p0] += sp[i, 2 * g]
            out[i, 4 * g + p1] += sp[i, 2 * g + 1]
    return out


@pytest.mark.parametrize("meta", ["int16", "int8", "uint16"])
def test_compress_roundtrip(meta):
    rng = np.random.default_rng(1)
    a = semi_sparse(16, 64, rng)
    sp, e = sparse.compress(a, meta_dtype=meta)
    assert sp.shape == (16, 32) and e.shape == (16, 64 // sparse.get_e_factor("float16", meta))
    assert str(e.dtype) == meta
    np.testing.assert_array_equal(decompress_here(sp, e, 64), a)
    np.testing.assert_array_equal(sparse.decompress(sp, e), a)


def test_positions_of_short_groups():
    a = np.zeros((1, 16), np.float16)
    a[0, 2] = 1.0   # group 0: one nonzero at 2 -> (0, 2)
    a[0, 4] = 3.0   # group 1: one nonzero at 0 -> (0, 1)
    sp, e = sparse.compress(a)                     # group 2, 3: none -> (0, 1)
    w = int(e.view(np.uint16)[0, 0])
    assert [(w >> (4 * g)) & 15 for g in range(4)] == [0b1000, 0b0100, 0b0100, 0b0100]
    assert list(sp[0, :4]) == [0.0, 1.0, 3.0, 0.0]


def test_helpers_and_errors():
    assert sparse.get_e_factor("float16", "int16") == 16 and sparse.get_e_factor("int8", "int32") == 32
    assert sparse.get_e_replicate_factor("float16") == 2 and sparse.get_e_replicate_factor("int8") == 1
    with pytest.raises(ValueError, match="3 nonzeros"):
        sparse.compress(np.ones((1, 16), np.float16) * np.array([1, 1, 1, 0] * 4, np.float16))


# ---------------------------------------------------------------- the device compressor (issue 30)
# test/Interp/ops/sparse_compress.py: the compressor kernel of TileLang's examples/gemm_sp/sparse_utils.py
# (T.device_assert, a T.alloc_var counter reassigned in T.unroll, a tuple swap of buffer elements, a T.copy
# extent through a let) on the CPU SIMT executor, against the host compressor on inputs with 0, 1 and 2
# nonzeros per group (1 of 2 for float32).
OPS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "test", "Interp", "ops")


@pytest.mark.parametrize("dtype,meta", [("float16", "int16"), ("float16", "int8"), ("int8", "int32"),
                                        ("float32", "int16")])
def test_device_compressor_matches_host(dtype, meta):
    import tilelang_ptx as tilelang
    factory = tilelang.load_file(os.path.join(OPS, "sparse_compress.py")).compress_2to4
    kept, group = sparse.GROUP_CONFIG[dtype]
    rng = np.random.default_rng(7)
    S, D = 32, 512
    a = rng.integers(1, 9, (S, D // group, group))
    for i in range(S):
        for g in range(D // group):
            keep = rng.choice(group, size=rng.integers(0, kept + 1), replace=False)
            a[i, g, [p for p in range(group) if p not in keep]] = 0
    dense = a.reshape(S, D).astype(dtype)
    packed, e = factory(D=D, dtype=dtype, meta=meta)(dense)
    want_sp, want_e = sparse.compress(dense, meta_dtype=meta)
    assert packed.dtype == want_sp.dtype and e.dtype == want_e.dtype
    np.testing.assert_array_equal(packed, want_sp)
    np.testing.assert_array_equal(e, want_e)
