"""_unsupported.py -- TileLang names this project does not provide, made importable so that a TileLang file
imports unchanged; using one raises NotImplementedError naming it.

STUB_MODULES lists the modules of TileLang that kernel files import and this package has no file for
(module path under the package -> the names it holds); stub_module builds one.  An attribute a stub
module does not list raises AttributeError, an unknown submodule ModuleNotFoundError, both naming the
symbol and saying that this project does not provide it."""
import importlib
import importlib.abc
import importlib.machinery
import sys
import types

PKG = __package__


def not_provided(symbol):
    return f"{symbol}: this project (tilelang_ptx) does not provide it"


def missing_attribute(module_name):
    """A module __getattr__ (PEP 562) for a module of this package that stands for a TileLang module: a
    package's submodule is imported on first use; another attribute it lacks raises AttributeError
    naming tilelang.<module>.<name>."""
    rel = module_name[len(PKG) + 1:]

    def __getattr__(name):
        if name.startswith("__"):
            raise AttributeError(name)
        if hasattr(sys.modules.get(module_name), "__path__"):  # a package: its submodule, imported now
            try:
                return importlib.import_module(f"{module_name}.{name}")
            except ModuleNotFoundError as e:
                if e.name != f"{module_name}.{name}":
                    raise
        raise AttributeError(not_provided(f"tilelang.{rel}.{name}"))
    return __getattr__


class Unsupported:
    """A placeholder for a TileLang function or class: calling it (or an attribute of it) raises
    NotImplementedError naming `symbol`."""

    def __init__(self, symbol):
        self._symbol = symbol

    def __call__(self, *args, **kwargs):
        raise NotImplementedError(not_provided(self._symbol))

    def __getattr__(self, name):
        if name.startswith("__"):
            raise AttributeError(name)
        return Unsupported(f"{self._symbol}.{name}")

    def __repr__(self):
        return f"<not provided: {self._symbol}>"


def unsupported_class(symbol):
    """A class whose construction raises NotImplementedError naming symbol (a base class stays usable)."""
    def init(self, *args, **kwargs):
        raise NotImplementedError(not_provided(symbol))
    return type(symbol.rsplit(".", 1)[-1], (), {"__init__": init, "__doc__": not_provided(symbol)})


class StubModule(types.ModuleType):
    def __getattr__(self, name):
        if name.startswith("__"):
            raise AttributeError(name)
        raise AttributeError(not_provided(f"tilelang.{self.__name__[len(PKG) + 1:]}.{name}"))


# module under the package -> the names it holds (a name ending in "()" is a decorator accepted without effect)
STUB_MODULES = {
    "tools.cuda": ("iket",),
    "engine": (),
    "engine.callback": ("register_cuda_postproc_callback()", "register_hip_postproc_callback()",
                        "register_c_postproc_callback()"),
    "cuda": (),
    "cuda.intrinsics": ("get_swizzle_layout", "get_mma_micro_size",
                        "TensorCoreIntrinEmitter"),
    "cuda.intrinsics.layout": (),
    "cuda.intrinsics.layout.mma_layout": ("get_swizzle_layout",
                                          "ldmatrix_32x8_to_shared_16x16_layout"),
    "cuda.intrinsics.layout.utils": ("get_mma_micro_size", "get_ldmatrix_offset"),
    "cuda.intrinsics.macro": (),
    "cuda.intrinsics.macro.mma_macro_generator": ("TensorCoreIntrinEmitter",
                                                  "TensorCoreIntrinEmitterWithLadderTransform",
                                                  "INT4TensorCoreIntrinEmitter"),
    "cuda.intrinsics.sparse_layout": ("make_cutlass_metadata_layout",),
    "rocm": (),
    "rocm.target": ("target_is_gfx950", "target_is_cdna"),
    "rocm.intrinsics": (),
    "rocm.intrinsics.utils": ("get_mma_micro_size",),
    "rocm.intrinsics.mfma_layout": (),
    "rocm.intrinsics.mfma_macro_generator": ("MatrixCoreIntrinEmitter", "MatrixCorePreshuffleIntrinEmitter"),
}


def _accept_decorator(symbol):
    def decorator(func=None, *args, **kwargs):
        import warnings
        warnings.warn(f"{symbol}: has no effect in this project (no CUDA C source is generated)", stacklevel=2)
        return func if callable(func) else (lambda f: f)
    decorator.__name__ = symbol.rsplit(".", 1)[-1]
    return decorator


def _provided(rel):
    """The names a stub module does provide: layout constructors a kernel names in T.annotate_layout (the
    compiler reads them from the source: docs/layouts.md "Annotated layouts"), the compile-time helpers
    libtilelang's prelude runs (TensorCoreIntrinEmitter, get_swizzle_layout: cuda_intrinsics.py) and the 2:4
    sparsity helpers (utils/sparse.py)."""
    from . import layout, cuda_intrinsics as ci
    got = {}
    if rel in ("cuda.intrinsics", "cuda.intrinsics.layout.mma_layout"):
        got.update(make_mma_swizzle_layout=layout.make_mma_swizzle_layout, get_swizzle_layout=ci.get_swizzle_layout)
    if rel in ("cuda.intrinsics", "cuda.intrinsics.macro.mma_macro_generator"):
        got["TensorCoreIntrinEmitter"] = ci.TensorCoreIntrinEmitter  # libtilelang's prelude expands it
    if rel == "cuda.intrinsics.sparse_layout":
        from .utils import sparse
        got.update({n: getattr(sparse, n) for n in ("GROUP_CONFIG", "get_e_factor", "get_e_replicate_factor")})
    return got


def stub_module(rel):
    """The stub module PKG.rel (registered in sys.modules)."""
    full = f"{PKG}.{rel}"
    m = sys.modules.get(full)
    if m is not None:
        return m
    m = StubModule(full, not_provided(f"tilelang.{rel}") + " (its names import; using one raises)")
    m.__path__ = []  # a package: its submodules are found by StubFinder
    m.__package__ = full
    for n in STUB_MODULES[rel]:
        symbol = f"tilelang.{rel}.{n.rstrip('()')}"
        setattr(m, n.rstrip("()"), _accept_decorator(symbol) if n.endswith("()") else Unsupported(symbol))
    for n, obj in _provided(rel).items():
        setattr(m, n, obj)
    sys.modules[full] = m
    parent, _, leaf = full.rpartition(".")
    if parent in sys.modules:
        setattr(sys.modules[parent], leaf, m)
    return m


class _StubLoader(importlib.abc.Loader):
    def create_module(self, spec):
        return stub_module(spec.name[len(PKG) + 1:])

    def exec_module(self, module):
        pass


class StubFinder(importlib.abc.MetaPathFinder):
    """Finds PKG.<rel> for rel in STUB_MODULES; raises ModuleNotFoundError naming any other module under a
    stub module."""

    def find_spec(self, fullname, path=None, target=None):
        if not fullname.startswith(PKG + "."):
            return None
        rel = fullname[len(PKG) + 1:]
        if rel in STUB_MODULES:
            return importlib.machinery.ModuleSpec(fullname, _StubLoader(), is_package=True)
        parent = rel.rpartition(".")[0]
        if parent in STUB_MODULES:
            raise ModuleNotFoundError(f"No module named 'tilelang.{rel}': " + not_provided(f"tilelang.{rel}"),
                                      name=fullname)
        return None


def install():
    if not any(isinstance(f, StubFinder) for f in sys.meta_path):
        sys.meta_path.append(StubFinder())
