"""tilelang.contrib.nvcc -- get_target_compute_version: "9.0" for sm_90a, from the target given or, without
one, CUDA device 0's (the driver; without a GPU, the compiler's default target)."""


def get_target_compute_version(target=None):
    """The compute capability "major.minor" of target (any TileLang spelling) or of device 0."""
    from ..jit import resolve_target
    from .. import device_target
    arch = resolve_target(target)[1] if target is not None else None
    if arch is None:
        from ..carver.arch import driver
        try:
            major, minor = driver.get_compute_capability(0)
            return f"{major}.{minor}"
        except RuntimeError:
            arch = device_target(0)
    digits = "".join(c for c in arch.split("_", 1)[1] if c.isdigit())
    return f"{digits[:-1]}.{digits[-1]}"


def have_fp16(compute_version):
    return float(compute_version) >= 5.3


def have_bf16(compute_version):
    return float(compute_version) >= 8.0


def have_tensorcore(compute_version=None, target=None):
    return float(compute_version or get_target_compute_version(target)) >= 7.0

from .._unsupported import missing_attribute  # noqa: E402

__getattr__ = missing_attribute(__name__)
