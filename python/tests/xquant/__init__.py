"""A helper package beside the tests, as TileLang's dequantize examples have quantize/ beside them
(test_helpers.py: a kernel calls its functions at compile time)."""
from .conversion import unpack_unsigned, bad_helper  # noqa: F401
