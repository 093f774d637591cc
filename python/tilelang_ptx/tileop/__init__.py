"""tilelang.tileop -- tile operator helpers kernel files import (base.GemmWarpPolicy)."""
from .base import GemmWarpPolicy  # noqa: F401
