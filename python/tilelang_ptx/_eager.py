"""_eager.py -- the bindings of one call of an eager-style @tilelang.jit function (TileLang PR #2010):

    @tilelang.jit
    def matmul(A, B, block_M, block_N, block_K, dtype=T.float16):
        M, N, K = T.const("M, N, K")
        A: T.Tensor((M, K), dtype)
        B: T.Tensor((K, N), dtype)
        C = T.empty((M, N), dtype)
        with T.Kernel(...) as (bx, by): ...
        return C

    C = matmul(A, B, 128, 128, 32)                 # T.const M, N, K from A's and B's shapes
    kernel = matmul.compile(M=1024, N=1024, K=1024, block_M=128, block_N=128, block_K=32)

Python runs none of the body.  From the call it computes the `-D` defines libtilelang's eager front end
(lib/Frontend/elab_eager.c) takes: each T.const symbol from the shape of a tensor argument whose annotation in
the body names it as a dim (or from a keyword of that name), and each other parameter given a value that
is not its default (block sizes, dtypes, flags).  A dim may name the symbol through an alias (`KH, KW = K, K`),
and a shape may be a name bound to a display or to `X if cond else Y` between displays: cond is evaluated
with the call's non-tensor parameters (`[b, K, N] if not trans_b else [b, N, K]`); a condition that reads
anything else leaves that tensor's shape unread.  Equal defines are one compilation (jit.JITFactory
memoises on them); `f.get_tir(...)` keeps them with the function (EagerPrimFunc) for tilelang.compile and
tilelang.tools.Analyzer.  A binding two tensors (or a tensor and a keyword) disagree on, a T.const nothing
determines, a tensor given to a parameter without a T.Tensor annotation: ArgumentError naming them.
"""
import inspect

from . import _source
from .kernel import ArgumentError, tensor_shape


class EagerBinder:
    """Maps a call's arguments to (defines, tensors) for eager-style function `func`."""

    def __init__(self, func):
        self.name = func.__name__
        self.sig = _source.eager_signature(func)
        self.pysig = inspect.signature(func)
        self.params = self.pysig.parameters
        # the kernel's inputs, in the order of the function's parameters (as elab_eager.c orders them)
        self.tensor_params = [p for p in self.params if p in self.sig.tensors]
        self.returns = self.sig.returns
        names = list(self.params)
        self._positional = [q.kind in (q.POSITIONAL_ONLY, q.POSITIONAL_OR_KEYWORD) for q in self.params.values()]
        self._tensor_at = [n in self.sig.tensors for n in names]
        self._fast = {}  # positional call's key -> (defines, positions of its tensors)

    def fast_key(self, args):
        """A key for a call with positional arguments only: the tensors' shapes and the other values
        with their types; None when it has none (more arguments than positional parameters)."""
        if len(args) > len(self._positional) or not all(self._positional[:len(args)]):
            return None
        return tuple(tensor_shape(a) if t else (type(a), a) for a, t in zip(args, self._tensor_at))

    def bind_positional(self, args):
        """bind(args, {}) through a cache keyed on fast_key: a call with the shapes and values of an
        earlier one skips the binding (the kernel checks dtypes and layouts itself)."""
        key = self.fast_key(args)
        hit = None
        if key is not None:
            try:
                hit = self._fast.get(key)
            except TypeError:  # a value that cannot be hashed
                key = None
        if hit is not None:
            return hit[0], [args[i] for i in hit[1]]
        defines, tensors = self.bind(args, {})
        if key is not None:
            self._fast[key] = (defines, [i for i, t in enumerate(self._tensor_at[:len(args)]) if t])
        return defines, tensors

    def takes_keyword(self, k):
        return k in self.params or k in self.sig.consts

    def bind(self, args, kwargs, partial=False):
        """(defines, tensors): defines a tuple of (name, value text) pairs for tl_kernel_compile (the
        memoisation key), tensors the tensor arguments in kernel parameter order (partial, for
        .compile(): those given).  Raises ArgumentError."""
        const_kw, param_kw = {}, {}
        for k, v in kwargs.items():
            if k in self.params:
                param_kw[k] = v
            elif k in self.sig.consts:
                const_kw[k] = v
            else:
                raise ArgumentError(f"eager kernel '{self.name}' has no parameter or T.const named '{k}' "
                                    f"(parameters: {', '.join(self.params)}; T.const: "
                                    f"{', '.join(self.sig.consts) or 'none'})")
        try:
            bound = (self.pysig.bind_partial if partial else self.pysig.bind)(*args, **param_kw)
        except TypeError as e:
            raise ArgumentError(f"eager kernel '{self.name}': {e}") from None
        values = {}  # T.const symbol -> (value, where it came from)
        for sym, v in const_kw.items():
            if isinstance(v, bool) or not isinstance(v, int) and not _is_int_like(v):
                raise ArgumentError(f"eager kernel '{self.name}': T.const '{sym}' takes an int, got "
                                    f"{type(v).__name__} ({v!r})")
            values[sym] = (int(v), f"keyword {sym}={int(v)}")
        tensors, scalars = [], None
        for p in self.tensor_params:
            if p not in bound.arguments:
                continue  # partial: a tensor .compile() was not given
            a = bound.arguments[p]
            shape = tensor_shape(a)
            if shape is None:
                raise ArgumentError(f"argument '{p}' of eager kernel '{self.name}': expected a tensor (an "
                                    f"object with .shape or __dlpack__), got {type(a).__name__}")
            tensors.append(a)
            if scalars is None:
                scalars = self._scalars(bound)
            self._bind_dims(p, shape, values, scalars)
        missing = [s for s in self.sig.consts if s not in values]
        if missing:
            s = missing[0]
            raise ArgumentError(f"eager kernel '{self.name}': T.const '{s}' is not determined by the shape of "
                                f"a tensor argument; pass {s}=<int> ({self.name}(..., {s}=...) or "
                                f"{self.name}.compile({s}=...))")
        defines = [(s, str(values[s][0])) for s in self.sig.consts]
        for p, v in bound.arguments.items():
            if p in self.sig.tensors:
                continue
            param = self.params[p]
            if param.kind in (param.VAR_POSITIONAL, param.VAR_KEYWORD):
                raise ArgumentError(f"eager kernel '{self.name}': *{p} / **{p} parameters cannot be bound")
            if tensor_shape(v) is not None:
                raise ArgumentError(f"argument '{p}' of eager kernel '{self.name}' is a tensor, but the body "
                                    f"does not declare it (`{p}: T.Tensor(shape, dtype)` before T.Kernel)")
            if (type(v).__module__ or "").startswith("numpy") and hasattr(v, "item"):
                v = v.item()  # numpy.int64(128) binds as 128
            d = param.default
            if d is not param.empty and type(d) is type(v) and _same(d, v):
                continue  # the default: libtilelang evaluates it itself
            defines.append((p, _source.literal(v, where=f"argument '{p}' of eager kernel '{self.name}'")))
        return tuple(defines), tensors

    def _scalars(self, bound):
        """The call's non-tensor parameters by name (defaults included) that a conditional shape
        (`B_shape = [K, N] if not trans_b else [N, K]`) may read."""
        out = {}
        for p, param in self.params.items():
            if p in self.sig.tensors or param.kind in (param.VAR_POSITIONAL, param.VAR_KEYWORD):
                continue
            if p in bound.arguments:
                v = bound.arguments[p]
            elif param.default is not param.empty:
                v = param.default
            else:
                continue  # partial: not given, no default -- a condition reading it stays unevaluated
            if tensor_shape(v) is None:
                out[p] = v
        return out

    def _bind_dims(self, p, shape, values, scalars):
        dims = _source.resolve_dims(self.sig.tensors[p], scalars)
        if dims is None:
            return  # a shape the package cannot read (or a condition it cannot evaluate): libtilelang checks it
        if len(shape) != len(dims):
            raise ArgumentError(f"argument '{p}' of eager kernel '{self.name}': {len(shape)} dims "
                                f"{list(shape)}, its annotation declares {len(dims)}")
        for i, sym in enumerate(dims):
            if sym is None:
                continue
            got = values.get(sym)
            if got is None:
                values[sym] = (shape[i], f"argument '{p}' (dim {i})")
            elif got[0] != shape[i]:
                raise ArgumentError(f"eager kernel '{self.name}': T.const '{sym}' is {got[0]} from {got[1]} but "
                                    f"{shape[i]} from argument '{p}' (dim {i})")


class EagerPrimFunc:
    """What `f.get_tir(**bindings)` returns for an eager-style kernel f: the function, its source and the -D
    bindings of that call (T.const symbols and parameters, as EagerBinder.bind computes them), not compiled.
    tilelang.compile(it) compiles it; tilelang.tools.Analyzer.analysis(it, device) counts its work
    (tl_module_analyze); source() gives (text, filename, defines) for libtilelang."""

    def __init__(self, func, defines, options=None):
        self.func = func
        self.defines = tuple(defines)
        self.options = dict(options or {})
        self.__name__ = func.__name__
        self.__qualname__ = getattr(func, "__qualname__", func.__name__)

    def source(self):
        """(text, filename, defines): the whole function's source as libtilelang compiles it (decorators
        kept), its file name, and the bindings as (name, value text) pairs."""
        text, filename = _source.build(self.func, eager=True)
        return text, filename, self.defines

    def __repr__(self):
        binds = ", ".join(f"{n}={v}" for n, v in self.defines)
        return f"<eager T.prim_func {self.__qualname__}({binds})>"


def _is_int_like(v):
    """NumPy integer scalars and other objects with __index__."""
    try:
        v.__index__()
        return True
    except (AttributeError, TypeError):
        return False


def _same(a, b):
    try:
        return bool(a == b)
    except Exception:  # noqa: BLE001 - an object whose == is not a bool is not the default
        return False
