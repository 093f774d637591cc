"""tilelang.tileop -- tile operator helpers kernel files import (base.GemmWarpPolicy)."""
from .base import GemmWarpPolicy  # noqa: F401

from .._unsupported import missing_attribute  # noqa: E402

__getattr__ = missing_attribute(__name__)
