"""tilelang.carver.template -- TileLang's roller templates (MatmulTemplate ...): not provided here; the
names import, constructing one raises NotImplementedError.  Tune with @tilelang.autotune(configs=...)."""
from .._unsupported import unsupported_class

MatmulTemplate = unsupported_class("tilelang.carver.template.MatmulTemplate")
GEMVTemplate = unsupported_class("tilelang.carver.template.GEMVTemplate")
ElementwiseTemplate = unsupported_class("tilelang.carver.template.ElementwiseTemplate")
GeneralReductionTemplate = unsupported_class("tilelang.carver.template.GeneralReductionTemplate")
FlashAttentionTemplate = unsupported_class("tilelang.carver.template.FlashAttentionTemplate")
ConvTemplate = unsupported_class("tilelang.carver.template.ConvTemplate")

from .._unsupported import missing_attribute  # noqa: E402

__getattr__ = missing_attribute(__name__)
