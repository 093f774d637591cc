"""tilelang.utils -- TileLang's host utilities that kernel files import: tensor (TensorSupplyType,
get_tensor_supply, torch_assert_close, map_torch_type)."""
from .tensor import TensorSupplyType, map_torch_type, torch_assert_close  # noqa: F401

from .._unsupported import missing_attribute  # noqa: E402

__getattr__ = missing_attribute(__name__)
