"""tilelang.testing -- TileLang's test helpers: torch_assert_close (PyTorch tensors or NumPy arrays),
set_random_seed, the requires_* decorators (pytest skip marks with the reason: no PyTorch, no CUDA GPU, a
compute capability below the one asked, a missing package; ROCm-only tests always skip here; as under
TileLang, a direct call of a decorated function runs it), main()
(runs the calling file's tests with pytest), torch_cuda_available."""
import importlib.util
import inspect
import random
import sys

from .utils.tensor import torch_assert_close  # noqa: F401


def set_random_seed(seed=42):
    """Seeds Python's, NumPy's and (when installed) PyTorch's generators."""
    random.seed(seed)
    try:
        import numpy
        numpy.random.seed(seed)
    except ImportError:
        pass
    if "torch" in sys.modules or importlib.util.find_spec("torch") is not None:
        import torch
        torch.manual_seed(seed)
        if torch.cuda.is_available():
            torch.cuda.manual_seed_all(seed)


def torch_cuda_available():
    """True when PyTorch is importable and sees a CUDA GPU."""
    from .profiler import _cuda_torch
    return _cuda_torch() is not None


def _compute_capability():
    """(major, minor) of CUDA device 0, or None without a GPU."""
    from .carver.arch import driver
    try:
        return driver.get_compute_capability()
    except RuntimeError:
        return None


def _skip_unless(ok_fn, reason):
    """A decorator as TileLang's (TVM's pytest marks): under pytest the test (function or class) is skipped
    with the reason unless ok_fn() holds at decoration; a direct call (an example's main() calling its own
    test functions) runs it regardless, as it does under TileLang."""
    def deco(func):
        try:
            import pytest
        except ImportError:  # not under pytest: nothing to mark
            return func
        # stored as pytest's own decorator stores a mark (which it does not do for a lambda)
        func.pytestmark = [*getattr(func, "pytestmark", []), pytest.mark.skipif(not ok_fn(), reason=reason).mark]
        return func
    return deco


def requires_cuda(func=None):
    """Skips (pytest) the test unless PyTorch sees a CUDA GPU."""
    deco = _skip_unless(torch_cuda_available, "needs PyTorch with a CUDA GPU")
    return deco(func) if func is not None else deco


def requires_cuda_compute_version(major_version, minor_version=0, mode="ge"):
    """Skips the test unless device 0's compute capability compares to (major, minor) as mode says
    (ge, gt, eq, lt, le)."""
    ops = {"ge": lambda a, b: a >= b, "gt": lambda a, b: a > b, "eq": lambda a, b: a == b,
           "lt": lambda a, b: a < b, "le": lambda a, b: a <= b}
    if mode not in ops:
        raise ValueError(f"requires_cuda_compute_version: mode must be one of {', '.join(ops)}, got {mode!r}")

    def ok():
        cc = _compute_capability()
        return cc is not None and torch_cuda_available() and ops[mode](cc, (major_version, minor_version))
    return _skip_unless(ok, f"needs a CUDA GPU of compute capability {mode} {major_version}.{minor_version}")


def requires_cuda_compute_version_ge(major_version, minor_version=0):
    return requires_cuda_compute_version(major_version, minor_version, "ge")


def requires_cuda_compute_version_gt(major_version, minor_version=0):
    return requires_cuda_compute_version(major_version, minor_version, "gt")


def requires_cuda_compute_version_eq(major_version, minor_version=0):
    return requires_cuda_compute_version(major_version, minor_version, "eq")


def requires_cuda_compute_version_lt(major_version, minor_version=0):
    return requires_cuda_compute_version(major_version, minor_version, "lt")


def requires_cuda_compute_version_le(major_version, minor_version=0):
    return requires_cuda_compute_version(major_version, minor_version, "le")


def requires_package(*packages):
    """Skips the test unless every package is importable."""
    missing = [p for p in packages if importlib.util.find_spec(p) is None]
    return _skip_unless(lambda: not missing, f"needs the package(s) {', '.join(missing)}")


def _never():
    return False


def requires_cdna(func):
    return _skip_unless(_never, "needs an AMD CDNA GPU (this project targets NVIDIA GPUs only)")(func)


def requires_gfx950(func):
    return _skip_unless(_never, "needs an AMD gfx950 GPU (this project targets NVIDIA GPUs only)")(func)


def requires_cuda_or_cdna(func):
    return requires_cuda(func)


def requires_llvm(func):
    return func  # LLVM is inside libtilelang


def target_is_cuda(target):
    from .jit import resolve_target
    return resolve_target(target)[0] == "cuda"


def target_is_cdna(target):
    return False


target_is_gfx950 = target_is_cdna


def main():
    """Runs the tests of the calling file with pytest and exits with its status (TileLang's
    tilelang.testing.main(), called from a test file's __main__)."""
    import pytest
    caller = inspect.stack()[1].filename
    sys.exit(pytest.main([caller] + sys.argv[1:]))

from ._unsupported import missing_attribute  # noqa: E402

__getattr__ = missing_attribute(__name__)
