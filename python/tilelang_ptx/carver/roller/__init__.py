"""tilelang.carver.roller -- the roller's names that kernel files import (rasterization plans)."""

from ..._unsupported import missing_attribute  # noqa: E402

__getattr__ = missing_attribute(__name__)
