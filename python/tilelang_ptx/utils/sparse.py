"""tilelang.utils.sparse (also tilelang.cuda.intrinsics.sparse_layout) -- host helpers of 2:4 structured
sparsity for T.gemm_sp: the group shape of each dtype, how many A elements one metadata element indexes
(get_e_factor), a host compressor (dense -> kept values + metadata, TileLang's ordered-metadata format),
its inverse, and random 2:4 sparse tensors.

The metadata format (docs/language.md "Sparse GEMM"): row-major E[m, k // e_factor]; for 16- and 8-bit A
each group of 4 consecutive K elements keeps 2 and owns one 4-bit nibble, bits [1:0] the position (0..3)
of the first kept element, bits [3:2] of the second, first < second; nibbles are packed little-endian (group
g of a row in nibble g % (bits/4) of element g // (bits/4)). A group with fewer than 2 nonzeros keeps
positions (0, p) or (0, 1). For 32-bit A each group of 2 keeps 1: nibble 0b0100 (position 0) or 0b1110
(position 1)."""
import numpy as np

# dtype name -> (kept, group) of its structured sparsity
GROUP_CONFIG = {"float32": (1, 2), "float16": (2, 4), "bfloat16": (2, 4), "int8": (2, 4), "uint8": (2, 4),
                "float8_e4m3": (2, 4), "float8_e5m2": (2, 4), "float8_e4m3fn": (2, 4)}
_NIBBLE_BITS = 4


def _name(dt):
    from ..language.dtypes import dtype
    if isinstance(dt, np.dtype):
        dt = dt.name
    return str(dtype(dt))


def _bits(dt):
    from ..tvm import DataType
    return DataType(_name(dt)).bits


def _group(a_dtype):
    name = _name(a_dtype)
    if name not in GROUP_CONFIG:
        raise ValueError(f"2:4 sparsity: no group shape for dtype {name} (known: {', '.join(GROUP_CONFIG)})")
    return GROUP_CONFIG[name]


def get_e_factor(a_dtype, meta_dtype):
    """How many a_dtype elements (dense K positions) one meta_dtype element indexes."""
    return (_bits(meta_dtype) // _NIBBLE_BITS) * _group(a_dtype)[1]


def get_e_replicate_factor(a_dtype):
    """How many consecutive lanes of an mma.sp quad hold the same metadata (TileLang's helper)."""
    return 1 if _bits(a_dtype) <= 8 else 2


def _is_torch(x):
    return type(x).__module__.startswith("torch")


def _default_meta(a_name):
    return "int32" if a_name == "int8" else "int16"


def _positions(nz):
    """The kept positions (idx0, idx1) of each group of 4 from its nonzero mask (..., 4), as TileLang's
    compressor picks them."""
    count = nz.sum(-1)
    if (count > 2).any():
        r = np.argwhere(count > 2)[0]
        raise ValueError(f"2:4 sparsity: group {tuple(int(v) for v in r)} has {int(count[tuple(r)])} nonzeros")
    first = nz.argmax(-1)
    last = 3 - nz[..., ::-1].argmax(-1)
    idx0 = np.where(count == 2, first, 0)
    idx1 = np.where(count == 2, last, np.where((count == 1) & (first != 0), first, 1))
    return idx0, idx1


def _pack(nibbles, meta_name, e_factor, group):
    """Nibbles (S, K // group) -> metadata (S, K // e_factor) of meta_name, little-endian."""
    per = e_factor // group
    s, g = nibbles.shape
    n = nibbles.reshape(s, g // per, per).astype(np.uint64)
    word = np.zeros((s, g // per), np.uint64)
    for i in range(per):
        word |= n[:, :, i] << np.uint64(_NIBBLE_BITS * i)
    bits = int(meta_name[-2:]) if meta_name[-2:].isdigit() else 8
    return word.astype(f"uint{bits}").view(meta_name)


def compress(A, meta_dtype=None, block_m=None, block_k=None):
    """(A_sparse, E) of a 2D 2:4 sparse A (NumPy array or torch tensor, on any device): A_sparse (S, D/2)
    the kept values, E (S, D // e_factor) the metadata (module docstring). block_m/block_k are TileLang's
    tiling arguments, accepted without effect."""
    if A.ndim != 2:
        raise ValueError(f"compress: A must be 2D, got {A.ndim}D")
    a_name = _name(A.dtype)
    meta_name = _name(meta_dtype) if meta_dtype is not None else _default_meta(a_name)
    kept, group = _group(a_name)
    e_factor = get_e_factor(a_name, meta_name)
    S, D = A.shape
    if D % e_factor:
        raise ValueError(f"compress: the last dim {D} must be a multiple of e_factor {e_factor} "
                         f"({a_name} with {meta_name} metadata)")
    nz = ((A != 0).cpu().numpy() if _is_torch(A) else np.asarray(A) != 0).reshape(S, D // group, group)
    if kept == 1:
        if (nz.sum(-1) > 1).any():
            raise ValueError("2:4 sparsity: a group of 2 float32 has 2 nonzeros")
        pos = nz.argmax(-1)[..., None]
        nibbles = np.where(pos[..., 0] == 0, 0b0100, 0b1110)
    else:
        idx0, idx1 = _positions(nz)
        pos = np.stack([idx0, idx1], -1)
        nibbles = idx0 | (idx1 << 2)
    E = _pack(nibbles, meta_name, e_factor, group)
    if _is_torch(A):
        import torch
        idx = torch.from_numpy(pos.astype(np.int64)).to(A.device)
        sp = torch.gather(A.reshape(S, D // group, group), -1, idx).reshape(S, D * kept // group)
        return sp.contiguous(), torch.from_numpy(np.ascontiguousarray(E)).to(A.device)
    sp = np.take_along_axis(np.asarray(A).reshape(S, D // group, group), pos, -1).reshape(S, D * kept // group)
    return np.ascontiguousarray(sp), np.ascontiguousarray(E)


def decompress(A_sparse, E, a_dtype=None):
    """The dense matrix (NumPy) of compress's (A_sparse, E): the inverse the tests check it by."""
    sp = np.asarray(A_sparse.cpu() if _is_torch(A_sparse) else A_sparse)
    e = np.asarray(E.cpu() if _is_torch(E) else E)
    kept, group = _group(_name(a_dtype or sp.dtype))
    S, half = sp.shape
    D = half * group // kept
    per = e.dtype.itemsize * 8 // _NIBBLE_BITS
    word = e.view(f"uint{e.dtype.itemsize * 8}").astype(np.uint64)
    nib = np.stack([(word >> np.uint64(_NIBBLE_BITS * i)) & np.uint64(15) for i in range(per)], -1)
    nib = nib.reshape(S, D // group).astype(np.int64)
    out = np.zeros((S, D // group, group), sp.dtype)
    vals = sp.reshape(S, D // group, kept)
    if kept == 1:
        np.put_along_axis(out, ((nib >> 1) & 1)[..., None], vals, -1)
    else:
        np.put_along_axis(out, np.stack([nib & 3, (nib >> 2) & 3], -1), vals, -1)
    return out.reshape(S, D)


def randn_semi_sparse(M, K, dtype="float16", device="cuda", transposed=False):
    """A random (M, K) torch tensor with 2:4 sparsity along K (the 2 of each 4 kept are random)."""
    import torch
    kept, group = _group(_name(dtype))
    t = torch.randn((M, K), dtype=torch.float, device=device).view(M, -1, group)
    t.scatter_(-1, t.topk(group - kept, dim=-1).indices, 0)
    t = t.view(M, K)
    if transposed:
        t = t.t().contiguous()
    return t.to(dtype if not isinstance(dtype, str) else getattr(torch, _name(dtype)))
