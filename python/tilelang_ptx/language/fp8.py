"""tilelang.language.fp8 -- which float8 formats this target uses, as TileLang's helpers of the same names
answer them on NVIDIA GPUs (the only kind this project targets): e4m3 is float8_e4m3fn, e5m2 float8_e5m2."""

_FORMATS = {"e4m3": "float8_e4m3fn", "e5m2": "float8_e5m2"}


def determine_fp8_type(fp8_format="e4m3", device=None):
    """The dtype name of float8 format fp8_format ("e4m3" or "e5m2") on an NVIDIA GPU (any device)."""
    try:
        return _FORMATS[fp8_format]
    except KeyError:
        raise ValueError(f"determine_fp8_type: fp8_format must be 'e4m3' or 'e5m2', got {fp8_format!r}") from None


def determine_torch_fp8_type(fp8_format="e4m3", device=None):
    """The torch dtype of determine_fp8_type(fp8_format) (needs PyTorch)."""
    import torch
    return getattr(torch, determine_fp8_type(fp8_format))

from .._unsupported import missing_attribute  # noqa: E402

__getattr__ = missing_attribute(__name__)
