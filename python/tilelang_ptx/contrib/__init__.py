"""tilelang.contrib -- nvcc (compute capability of a target or device)."""

from .._unsupported import missing_attribute  # noqa: E402

__getattr__ = missing_attribute(__name__)
