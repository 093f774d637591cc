"""tilelang.tileop.base -- GemmWarpPolicy: how T.gemm splits a tile among warps.  The members are the
T.GemmWarpPolicy values the compiler reads (T.GemmWarpPolicy.FullRow in a kernel is the same)."""
import enum


class GemmWarpPolicy(enum.IntEnum):
    Square = 0
    FullRow = 1
    FullCol = 2

    def is_square(self):
        return self == GemmWarpPolicy.Square

    def is_full_row(self):
        return self == GemmWarpPolicy.FullRow

    def is_full_col(self):
        return self == GemmWarpPolicy.FullCol

from .._unsupported import missing_attribute  # noqa: E402

__getattr__ = missing_attribute(__name__)
