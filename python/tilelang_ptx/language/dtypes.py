"""tilelang.language.dtypes -- dtype objects of the T namespace and their conversions: dtype(x) turns a
dtype name, a T.<dtype>, a tvm DataType, a NumPy or PyTorch dtype into the T.<dtype> object (a str
subclass, equal to the name); _TORCH_DTYPE_TO_STR maps PyTorch's dtypes (when PyTorch is installed) to
those names."""
from . import DType


# TileLang's C-style dtype names and the dtypes they stand for (tilelang.language.dtypes)
_ALIASES = {"half": "float16", "float": "float32", "double": "float64", "int": "int32", "uint": "uint32",
            "short": "int16", "long": "int64"}


def _canonical(x):
    from .._source import _dtype_name
    if isinstance(x, str):
        return _ALIASES.get(str(x), str(x))
    bits = getattr(x, "dtype_str", None)  # tvm.DataType
    if bits is not None:
        return bits
    name = _dtype_name(x)
    if name is None:
        raise TypeError(f"dtype: cannot make a dtype of {type(x).__name__} {x!r}")
    return name


class dtype(DType):
    """dtype(x): the T.<dtype> object of x (a name, T.float16, DataType, numpy.float16, torch.float16)."""

    def __new__(cls, x):
        return DType(_canonical(x))


def _torch_map():
    try:
        import torch
    except ImportError:
        return {}
    names = ("bool int8 int16 int32 int64 uint8 uint16 uint32 uint64 float16 float32 float64 bfloat16 "
             "float8_e4m3fn float8_e5m2").split()
    return {getattr(torch, n): n for n in names if hasattr(torch, n)}


_TORCH_DTYPE_TO_STR = _torch_map()

from .._unsupported import missing_attribute  # noqa: E402

__getattr__ = missing_attribute(__name__)
