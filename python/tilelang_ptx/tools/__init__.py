"""tilelang.tools -- Analyzer (the work of a kernel: FLOPs, global-memory bytes, an estimated time from the
device's peak figures; Analyzer.py).  plot_layout is not provided: using it raises NotImplementedError
(tl-opt --dump-layouts=svg draws the layouts instead, docs/layouts.md)."""
from .Analyzer import AnalysisResult, Analyzer  # noqa: F401
from .._unsupported import Unsupported as _Unsupported, missing_attribute as _missing_attribute

plot_layout = _Unsupported("tilelang.tools.plot_layout")

__getattr__ = _missing_attribute(__name__)
