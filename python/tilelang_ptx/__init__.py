"""tilelang_ptx -- TileLang's Python JIT flow on the tilelang-ptx compiler (libtilelang, via ctypes).

    import tilelang_ptx as tilelang
    import tilelang_ptx.language as T

    @tilelang.jit(out_idx=-1)
    def matmul(M, N, K, ...):
        @T.prim_func
        def main(A: T.Tensor((M, K), dtype), ...): ...
        return main

    C = matmul(1024, 1024, 1024)(A, B)     # torch CUDA tensors on the GPU, NumPy arrays on the CPU

Modules: language (the inert T namespace), jit (jit, compile), kernel (JITKernel), profiler,
testing (torch_assert_close), files (load_file: import a kernel file written for
`import tilelang` unchanged).  libtilelang is found as _lib.py says (TL_LIBRARY overrides).
"""
from . import _lib, language, testing
from . import jit as _jit
from ._lib import path as library_path
from .jit import CompileError, CompileWarning, JITFactory, clear_cache, compile, compile_count, jit
from .kernel import ArgumentError, JITKernel, KernelError, KernelParam
from .profiler import Profiler, TensorSupplyType
from ._source import CaptureError
from .files import load_file



class PassConfigKey:
    """TileLang's names for the pass configs (tilelang.PassConfigKey), for pass_configs={...} dicts: the keys
    of libtilelang's pass-config table ("tl.disable_wgmma" as TL_DISABLE_WGMMA, ...) and the ones jit()
    accepts without effect (jit._PASS_CONFIGS_NO_EFFECT)."""


for _key in _lib.pass_config_flag_keys().decode().split(", ") + list(_jit._PASS_CONFIGS_NO_EFFECT):
    setattr(PassConfigKey, "TL_" + _key[len("tl."):].upper(), _key)
del _key


def device_target(device=0):
    """The compile target of CUDA device ordinal `device` (libtilelang's tl_device_target: "sm_90a" on an H100
    or H200, "sm_80"/"sm_86"/"sm_89" on those architectures, "sm_90" newer; "sm_80" without a driver or for a
    device that does not exist).  target="auto" compiles for device 0's; a kernel whose target does not fit
    the device of its tensors is refused at the call (KernelError naming both), so a job whose ranks run
    on different architectures compiles per rank: tilelang.compile(f, target=tilelang.device_target(rank))."""
    return _lib.device_target(int(device)).decode()


def autotune(configs=None, warmup=25, rep=100, **kwargs):
    """Accepts TileLang's @tilelang.autotune(...) above @tilelang.jit so that its kernel files import
    unchanged; the factory is returned as it is (called with explicit arguments it compiles those;
    the search itself is `tl-run --tune FILE` or the C API's tl_kernel_tune, which read the decorator
    from the file's source)."""
    def wrap(factory):
        factory.autotune_configs = configs
        return factory
    return wrap


__version__ = "0.1.0"
__all__ = ["jit", "compile", "language", "testing", "JITKernel", "JITFactory", "KernelParam", "Profiler",
           "TensorSupplyType", "CompileError", "CompileWarning", "ArgumentError", "KernelError", "CaptureError",
           "compile_count", "clear_cache", "library_path", "load_file", "PassConfigKey", "autotune", "device_target"]
