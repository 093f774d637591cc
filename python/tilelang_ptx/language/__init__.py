"""tilelang_ptx.language -- the `T` namespace of TileLang kernel files, inert (a package: its submodules
fp8 and dtypes are TileLang's host-side helpers of the same names).

`import tilelang_ptx.language as T` makes files written for TileLang import: Python evaluates the
decorators and parameter annotations (`T.Tensor((M, K), dtype)`) when it defines a kernel, so every
`T.*` name here is an inert value that records what it was called with and computes nothing.  The
body of a `@T.prim_func` is never run by Python: T.prim_func wraps the function in a PrimFunc, and
tilelang_ptx.jit hands its source to libtilelang (tilelang_ptx/_source.py).  Any name not listed
below also resolves (module __getattr__), to an inert value of that name.
"""


class Inert:
    """A T.* value: remembers its dotted name and, once called or subscripted, the arguments.

    `path` is the name under T ("Tensor", "GemmWarpPolicy.FullRow"); `args`/`kwargs` are what it was
    called with (None when not called); `items` what it was subscripted with (T.Tensor[...])."""

    __slots__ = ("path", "args", "kwargs", "items")

    def __init__(self, path, args=None, kwargs=None, items=None):
        self.path, self.args, self.kwargs, self.items = path, args, kwargs, items

    def __call__(self, *args, **kwargs):
        return Inert(self.path, args, kwargs)

    def __getitem__(self, items):
        return Inert(self.path, None, None, items if isinstance(items, tuple) else (items,))

    def __getattr__(self, name):
        if name.startswith("__"):
            raise AttributeError(name)
        return Inert(f"{self.path}.{name}")

    def __iter__(self):  # `with T.Kernel(...) as (bx, by)` is never run, but keep unpacking harmless
        return iter(())

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False

    def __repr__(self):
        from .._source import literal  # the spelling libtilelang reads back
        return literal(self, "T")

    def __eq__(self, other):
        return isinstance(other, Inert) and (self.path, self.args, self.kwargs, self.items) == \
            (other.path, other.args, other.kwargs, other.items)

    def __hash__(self):
        return hash(self.path)


class DType(str):
    """T.float16 and friends: a str subclass (equal to "float16"), callable like T.float16(x); .bits,
    .lanes (tvm.DataType's) and .as_torch() (the torch.dtype) on the host."""

    def __call__(self, *args, **kwargs):
        return Inert(str(self), args, kwargs)

    @property
    def bits(self):
        from ..tvm import DataType
        return DataType(str(self)).bits

    @property
    def lanes(self):
        from ..tvm import DataType
        return DataType(str(self)).lanes

    def as_torch(self):
        from ..utils.tensor import map_torch_type
        return map_torch_type(str(self))


class PrimFunc:
    """What @T.prim_func returns: the Python function, never called.  `func` is it; `__name__` and
    `__annotations__` are its own (the evaluated parameter annotations)."""

    def __init__(self, func):
        self.func = func
        self.__name__ = func.__name__
        self.__qualname__ = getattr(func, "__qualname__", func.__name__)
        self.__doc__ = func.__doc__
        self.__wrapped__ = func

    @property
    def __annotations__(self):
        return self.func.__annotations__

    def __call__(self, *args, **kwargs):
        raise TypeError(f"T.prim_func '{self.__name__}' is not a Python function: compile it with "
                        "tilelang.compile(func, out_idx=...) or decorate it with @tilelang.jit")

    def __repr__(self):
        return f"<T.prim_func {self.__qualname__}>"


def prim_func(func=None, **kwargs):
    """@T.prim_func (also @T.prim_func(private=...)): marks a TileLang kernel; returns a PrimFunc."""
    if func is None:
        return lambda f: PrimFunc(f)
    return PrimFunc(func)


def macro(func=None, **kwargs):
    """@T.macro: accepted so that files import (libtilelang reads the macro from the source)."""
    return func if func is not None else (lambda f: f)


_DTYPES = ("bool int8 int16 int32 int64 uint8 uint16 uint32 uint64 float16 float32 float64 bfloat16 "
           "float8_e4m3 float8_e5m2 float8_e4m3fn tfloat32 int4 uint4").split()
for _n in _DTYPES:
    globals()[_n] = DType(_n)
# TileLang's C-style aliases are the dtypes they name (T.uint == T.uint32, as in tilelang.language.dtypes)
for _n, _d in (("half", "float16"), ("float", "float32"), ("double", "float64"), ("int", "int32"),
               ("uint", "uint32"), ("short", "int16"), ("long", "int64")):
    globals()[_n] = DType(_d)
del _n, _d

# The names TileLang kernel files use most (listed so that editors resolve them).
for _n in ("Buffer Tensor StridedTensor Kernel ceildiv alloc_shared alloc_fragment alloc_local alloc_var clear "
           "fill copy gemm Pipelined Parallel Serial serial vectorized unroll use_swizzle reduce_max "
           "reduce_sum reduce_min reduce_abssum reduce_absmax cumsum exp exp2 log log2 sqrt rsqrt abs max "
           "min if_then_else infinity cast atomic_add annotate_layout GemmWarpPolicy dynamic symbolic "
           "const empty float8 sin cos tanh sigmoid floor ceil round Select any all call_extern "
           "FragmentBuffer SharedBuffer LocalBuffer Fragment Layout annotate_l2_hit_ratio no_set_max_nreg "
           "launch_thread thread_binding get_thread_binding where truncdiv truncmod floordiv floormod "
           "shfl_xor shfl_down shfl_up sync_threads pow").split():
    globals()[_n] = Inert(_n)
del _n


_SUBMODULES = ("fp8", "dtypes")

# T.dtype(x) on the host: the T.<dtype> of a name, T.<dtype>, DataType, NumPy or PyTorch dtype (TileLang's
# examples compare it with T.float16 and friends: `T.dtype(out_dtype) in [T.float16, T.bfloat16]`).
from .dtypes import dtype  # noqa: E402


def __getattr__(name):  # PEP 562: every other T.name is inert too (the submodules are imported)
    if name.startswith("__"):
        raise AttributeError(name)
    if name in _SUBMODULES:
        import importlib
        return importlib.import_module(f"{__name__}.{name}")
    return Inert(name)
