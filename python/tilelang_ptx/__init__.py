"""tilelang_ptx -- TileLang's Python JIT flow on the tilelang-ptx compiler (libtilelang, via ctypes).

    import tilelang_ptx as tilelang
    import tilelang_ptx.language as T

    @tilelang.jit(out_idx=-1)
    def matmul(M, N, K, ...):
        @T.prim_func
        def main(A: T.Tensor((M, K), dtype), ...): ...
        return main

    C = matmul(1024, 1024, 1024)(A, B)     # torch CUDA tensors on the GPU, NumPy arrays on the CPU

Run a TileLang program unchanged: `python -m tilelang_ptx FILE [ARGS...]` (or run_file); import one:
load_file(path).  Both make `tilelang` mean this package for that file (files.py, _alias.py).

Modules: language (the inert T namespace; fp8, dtypes), jit (jit, compile), kernel (JITKernel),
autotuner (autotune, AutoTuner, set_autotune_inputs), profiler (do_bench, Profiler), testing,
utils.tensor, transform (PassConfigKey), tvm (DataType, target.Target), carver.arch (CUDA, driver),
tileop.base (GemmWarpPolicy), tools (Analyzer), layout, math, env, contrib.nvcc; TileLang modules this
project does not provide (tools.cuda, cuda.intrinsics, rocm, engine.callback) import, and their names raise when used
(_unsupported.py).  libtilelang is found as _lib.py says (TL_LIBRARY overrides).
"""
from . import _lib, _unsupported, language, testing
from ._lib import path as library_path
from .jit import CompileError, CompileWarning, JITFactory, clear_cache, compile, compile_count, jit, set_remarks
from .kernel import ArgumentError, JITKernel, KernelError, KernelParam
from .profiler import Profiler
from .utils.tensor import TensorSupplyType
from ._source import CaptureError
from .files import load_file, run_file
from .transform import PassConfigKey
from .math import cdiv, next_power_of_2
from .tvm import DataType
from .autotuner import autotune
from .env import disable_cache, enable_cache, is_cache_enabled

_unsupported.install()


def device_target(device=0):
    """The compile target of CUDA device ordinal `device` (libtilelang's tl_device_target: "sm_90a" on an H100
    or H200, "sm_80"/"sm_86"/"sm_89" on those architectures, "sm_90" newer; "sm_80" without a driver or for a
    device that does not exist).  target="auto" compiles for device 0's; a kernel whose target does not fit
    the device of its tensors is refused at the call (KernelError naming both), so a job whose ranks run
    on different architectures compiles per rank: tilelang.compile(f, target=tilelang.device_target(rank))."""
    return _lib.device_target(int(device)).decode()


# submodules imported on first use (tilelang.autotuner, ...) and TileLang's modules that are names only here
_SUBMODULES = ("autotuner", "profiler", "testing", "utils", "tileop", "carver", "layout", "transform", "tvm",
               "math", "env", "contrib", "language", "files", "jit", "kernel", "tools")


def __getattr__(name):
    import importlib
    if name in _SUBMODULES:
        return importlib.import_module(f"{__name__}.{name}")
    if name in _unsupported.STUB_MODULES:
        return _unsupported.stub_module(name)
    raise AttributeError(f"module 'tilelang' has no attribute '{name}': "
                         + _unsupported.not_provided(f"tilelang.{name}"))


__version__ = "0.1.0"
__all__ = ["jit", "compile", "language", "testing", "JITKernel", "JITFactory", "KernelParam", "Profiler",
           "TensorSupplyType", "CompileError", "CompileWarning", "ArgumentError", "KernelError", "CaptureError",
           "compile_count", "clear_cache", "library_path", "load_file", "run_file", "PassConfigKey", "autotune",
           "device_target", "cdiv", "next_power_of_2", "DataType", "disable_cache"]
