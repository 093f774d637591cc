"""tilelang.carver.roller.rasterization -- the rasterization plan classes, as names to compare hints
against (the roller itself is not provided)."""


class Rasterization:
    panel_width_ = None


class NoRasterization(Rasterization):
    pass


class Rasterization2DRow(Rasterization):
    def __init__(self, panel_width=8):
        self.panel_width_ = panel_width


class Rasterization2DColumn(Rasterization):
    def __init__(self, panel_width=8):
        self.panel_width_ = panel_width

from ..._unsupported import missing_attribute  # noqa: E402

__getattr__ = missing_attribute(__name__)
