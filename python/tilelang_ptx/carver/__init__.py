"""tilelang.carver -- the device descriptions of TileLang's carver (arch.CUDA, arch.driver).  Its roller
(template.MatmulTemplate and its recommend_hints) is not provided: using it raises NotImplementedError."""

from .._unsupported import missing_attribute  # noqa: E402

__getattr__ = missing_attribute(__name__)
