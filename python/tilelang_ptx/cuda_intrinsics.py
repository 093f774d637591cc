"""tilelang.cuda.intrinsics names that kernels use: TensorCoreIntrinEmitter and get_swizzle_layout.  A kernel
reads them as compile-time Python, which libtilelang runs from its own prelude (lib/Frontend/elab_prelude.c):
the kernel's source is handed over with `from tilelang.cuda.intrinsics import ...` for them.  The Python objects
here only carry that path (and get_swizzle_layout computes the same index triple on the host)."""

_MODULE = "tilelang_ptx.cuda.intrinsics"  # written as tilelang.cuda.intrinsics in the kernel's source


class TensorCoreIntrinEmitter:
    """TileLang's mma.sync macro generator: its methods (ldmatrix_a, ldmatrix_b, mma, stmatrix) expand inside a
    kernel, in libtilelang's prelude; constructed in host Python it only keeps its arguments."""

    IMPORT = "from tilelang.cuda.intrinsics import TensorCoreIntrinEmitter as _tl_TensorCoreIntrinEmitter"

    def __init__(self, *args, **kwargs):
        self._tl_args, self._tl_kwargs = args, kwargs

    def _tl_literal(self, lit):
        """The construction as kernel source (an emitter built in a factory and read by its kernel), each
        argument written by lit; the name is bound by IMPORT."""
        parts = [lit(a) for a in self._tl_args] + [f"{k}={lit(a)}" for k, a in self._tl_kwargs.items()]
        return "_tl_TensorCoreIntrinEmitter(" + ", ".join(parts) + ")"

    def __getattr__(self, name):
        if name.startswith("__"):
            raise AttributeError(name)
        raise NotImplementedError(f"TensorCoreIntrinEmitter.{name}: the emitter expands inside a kernel only")


def get_swizzle_layout(row_idx, col_idx, row_size, dtype, swizzle_bytes=None):
    """(column tile, row, swizzled column) of element (row_idx, col_idx) of a shared tile whose rows hold
    row_size elements of dtype: 16-byte chunks XOR-permuted within groups of swizzle_bytes (at most 128)."""
    from .tvm import DataType
    bits = DataType(str(dtype)).bits
    row_bytes = bits * row_size // 8
    if row_bytes % 32:
        raise ValueError("get_swizzle_layout: a row must be a multiple of 32 bytes")
    if swizzle_bytes is None:
        swizzle_bytes = min(128, row_bytes)
    per16 = 128 // bits
    vecs = int(swizzle_bytes) // 16
    chunk = col_idx // per16
    return chunk // vecs, row_idx, (chunk % vecs ^ row_idx % 8 // (8 // vecs)) * per16 + col_idx % per16


TensorCoreIntrinEmitter.__module__ = _MODULE
get_swizzle_layout.__module__ = _MODULE
