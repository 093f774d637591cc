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
from . import language, testing
from ._lib import path as library_path
from .jit import CompileError, JITFactory, clear_cache, compile, compile_count, jit
from .kernel import ArgumentError, JITKernel, KernelError, KernelParam
from .profiler import Profiler, TensorSupplyType
from ._source import CaptureError
from .files import load_file

__version__ = "0.1.0"
__all__ = ["jit", "compile", "language", "testing", "JITKernel", "JITFactory", "KernelParam", "Profiler",
           "TensorSupplyType", "CompileError", "ArgumentError", "KernelError", "CaptureError",
           "compile_count", "clear_cache", "library_path", "load_file"]
