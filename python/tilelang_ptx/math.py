"""tilelang.math -- integer helpers of TileLang (also tilelang.cdiv, tilelang.next_power_of_2)."""


def next_power_of_2(x):
    """The smallest power of two >= x (1 for x <= 1)."""
    x = int(x)
    return 1 if x <= 1 else 1 << (x - 1).bit_length()


def cdiv(a, b):
    """ceil(a / b) for integers (b > 0)."""
    return (a + b - 1) // b

from ._unsupported import missing_attribute  # noqa: E402

__getattr__ = missing_attribute(__name__)
