"""setup.py -- the one build recipe of tilelang_ptx's C extension _fastcall (the hot path of kernel(A, B),
python/tilelang_ptx/_fastcall.c), used by `pip install ./python` (pyproject.toml) and by
scripts/build-device.sh (`setup.py build_ext`).  Stable ABI: Py_LIMITED_API 3.11, so one
_fastcall.abi3.so serves CPython 3.11 and later.  optional=True: without a compiler, the Python headers
or the repository's include/ (tilelang/runtime.h), pip installs the pure-Python package, which works
the same, only slower per call."""
import os

from setuptools import Extension, setup

here = os.path.dirname(os.path.abspath(__file__))
include = os.path.join(here, "..", "include")

setup(ext_modules=[Extension(
    "tilelang_ptx._fastcall", ["tilelang_ptx/_fastcall.c"], include_dirs=[include],
    define_macros=[("Py_LIMITED_API", "0x030B0000")], py_limited_api=True, optional=True,
    extra_compile_args=["-std=c17", "-O2", "-Wall", "-Wextra"])])
