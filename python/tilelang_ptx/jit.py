"""jit.py -- tilelang.jit and tilelang.compile: TileLang's JIT entry points over libtilelang.

Three ways a kernel reaches the compiler, as in TileLang:
  * @tilelang.jit(out_idx=...) on a @T.prim_func inside a factory (TileLang's original JIT test):
    the factory's call returns a compiled JITKernel;
  * @tilelang.jit(out_idx=...) on the factory itself: calling it runs the factory (Python code) to
    get its prim_func, then compiles it; memoised per distinct arguments;
  * tilelang.compile(prim_func, out_idx=...);
  * the eager style (@tilelang.jit on a function whose parameters are the tensors, T.const/T.empty
    in its body, no @T.prim_func inside): `f(A, B, ...)` binds the T.const symbols from the tensors'
    shapes (_eager.py) and compiles the function's whole source with those bindings as -D defines,
    once per distinct binding; `f.compile(M=..., block_M=...)` returns the kernel.
Compiling: _source.build turns the prim_func into a TileLang file (its source and the values it
captures), tl_kernel_compile compiles it (out_idx none: kernel.JITKernel allocates the outputs);
compiled kernels are memoised by (text, target, flags, defines), so a second factory call with the same
arguments compiles nothing (compile_count() counts the real compilations).  Errors raise
CompileError with libtilelang's diagnostics (file:line:col: error:, the source line, the caret); the
warnings of a compile that succeeded (tl_context_warnings: an unwritten read, a register budget, the remarks
that set_remarks(True) or `python -m tilelang_ptx --remarks` turns on) are one CompileWarning through Python's warnings module.
"""
import ctypes
import functools
import os
import sys
import threading
import warnings

from . import _lib, _source
from .kernel import ArgumentError, CKernel, JITKernel
from .language import PrimFunc
from .transform import tilelang_keys


class CompileError(Exception):
    """libtilelang rejected a kernel; str(e) is its rendered diagnostics."""


class CompileWarning(UserWarning):
    """libtilelang compiled a kernel with warnings; str(w) is its rendered diagnostics (file:line:col:
    warning: ..., the source line, the caret)."""


_cache = {}
_cache_lock = threading.Lock()
_stats = {"compiles": 0}

_warned_keys = set()
# the pass configs this compiler reads (tl.enable_fast_math, the sm_90a path's switches, this project's
# attention schedules, ...) are libtilelang's table, applied by tl_pass_config_apply (runtime.h)


def compile_count():
    """Number of kernels libtilelang compiled in this process (memoised calls do not count)."""
    return _stats["compiles"]


def clear_cache():
    """Forgets the compiled kernels; those no JITKernel holds any more are destroyed, so no launch of
    them may still be pending (synchronize first)."""
    with _cache_lock:
        _cache.clear()


# TVM's target tags (tvm.target.Target("nvidia/...")) -> the architecture this project compiles for them
_TAG_ARCH = {"h100": "sm_90a", "h200": "sm_90a", "h800": "sm_90a", "gh200": "sm_90a",
             "a100": "sm_80", "a800": "sm_80", "a10": "sm_86", "a10g": "sm_86", "a30": "sm_80", "a40": "sm_86",
             "l4": "sm_89", "l40": "sm_89", "l40s": "sm_89", "rtx-3090": "sm_86", "rtx-4090": "sm_89"}


def resolve_target(target):
    """Any of TileLang's target spellings -> (kind, arch): kind "cuda" or "cpu", arch a libtilelang
    target name ("sm_90a") or None (the device's: auto).  Accepts None, "auto", "cuda", "nvidia", "cpu",
    "c", "llvm", "sm_80".."sm_90a", "cuda -arch=sm_90a", the dict {"kind": "cuda", "arch": "sm_90a"},
    a tvm.target.Target (or any object with .kind and .attrs / .arch) and tags such as
    "nvidia/nvidia-h100"; ValueError names the spelling otherwise."""
    if target is None:
        return "cuda", None
    if isinstance(target, dict):
        kind = str(target.get("kind", "cuda"))
        arch = target.get("arch")
        if kind in ("cpu", "c", "llvm"):
            return "cpu", None
        if kind != "cuda":
            raise ValueError(f"target {target!r}: kind {kind!r} is not supported (cuda or cpu)")
        return "cuda", _check_arch(str(arch), target) if arch else None
    if not isinstance(target, str):
        kind = getattr(target, "kind_name", None) or str(getattr(getattr(target, "kind", None), "name",
                                                                  getattr(target, "kind", "cuda")))
        attrs = getattr(target, "attrs", None) or {}
        arch = getattr(target, "arch", None) or (attrs.get("arch") if hasattr(attrs, "get") else None)
        return resolve_target({"kind": kind, "arch": str(arch) if arch else None})
    t = target.strip()
    if t in ("auto", "cuda", "nvidia"):
        return "cuda", None
    if t in ("cpu", "c", "llvm"):
        return "cpu", None
    if t.startswith("nvidia/"):
        model = t[len("nvidia/"):]
        for prefix in ("nvidia-", "geforce-", "tesla-"):
            model = model[len(prefix):] if model.startswith(prefix) else model
        if model in _TAG_ARCH:
            return "cuda", _TAG_ARCH[model]
        raise ValueError(f"target tag {target!r} is not known here (known: "
                         f"{', '.join('nvidia/nvidia-' + m for m in _TAG_ARCH)}); pass the arch, e.g. 'sm_90a'")
    if t.startswith("cuda"):
        arch = None
        for part in t.split()[1:]:
            if part.startswith("-arch="):
                arch = part[len("-arch="):]
        return "cuda", _check_arch(arch, target) if arch else None
    return "cuda", _check_arch(t, target)


def _check_arch(arch, spelled):
    if not _lib.target_supported(arch.encode()):
        raise ValueError(f"target {spelled!r} is not supported (auto, cuda, cpu, a dict "
                         f"{{'kind': 'cuda', 'arch': ...}}, or {_lib.target_list().decode()})")
    return arch


def _target(target):
    """TileLang target -> (libtilelang target or None = auto, stop_after)."""
    kind, arch = resolve_target(target)
    if kind == "cpu":
        return None, _lib.TL_STAGE_SIMT  # the CPU executor needs no PTX
    return arch, _lib.TL_STAGE_PTX


def _flags(pass_configs):
    """(flags, flags_false): the TL_COMPILE_* bits of the configs given True, and of the attention schedule
    configs given False (tl_compile_options.flags_false: the default schedule then does not choose them)."""
    flags, flags_false = ctypes.c_uint(0), ctypes.c_uint(0)
    ctx = _lib.context()
    for k, v in (pass_configs or {}).items():
        known = _lib.pass_config_flag_keys().decode()
        if isinstance(k, str) and k in known.split(", "):
            # the value as Python writes it (True, False, 0, 1, 32, 64): the library's rule, as in a file's
            if _lib.pass_config_apply(ctx, k.encode(), str(v).encode(), ctypes.byref(flags),
                                      ctypes.byref(flags_false)) != _lib.TL_OK:
                raise ValueError(_lib.last_error(ctx))
        elif k in tilelang_keys():
            if k not in _warned_keys:  # one warning per key and process
                _warned_keys.add(k)
                warnings.warn(CompileWarning(f"pass config {k!r} (TileLang's) has no effect in this compiler; "
                                             f"the configs it reads: {known}"),
                              stacklevel=_user_stacklevel())
        else:
            raise ValueError(f"unsupported pass config {k!r} (neither TileLang's tilelang.PassConfigKey nor this "
                             f"compiler's: {known})")
    return flags.value, flags_false.value


def compile(func, out_idx=None, target="auto", target_host=None, execution_backend="auto",
            verbose=False, pass_configs=None, line_info=True, **_ignored):
    """Compiles a @T.prim_func; returns a JITKernel.  target: "auto"/"cuda" (the GPU's), "sm_80" ..
    "sm_90a", "cuda -arch=sm_90a", or "cpu" (the CPU executor only: no PTX).  target_host and
    execution_backend are TileLang's and accepted without effect.  line_info=False leaves the source
    lines (.file / .loc) out of the PTX (tl_compile_options.no_line_info; they are in by default)."""
    if isinstance(func, JITKernel):
        return func
    from ._eager import EagerPrimFunc
    if isinstance(func, EagerPrimFunc):  # f.get_tir(...) of an eager kernel: its kernel for those bindings
        options = dict(func.options, out_idx=out_idx, target=target, verbose=verbose, pass_configs=pass_configs,
                       line_info=line_info)
        return JITFactory(func.func, options)._eager_kernel(func.defines)
    if not isinstance(func, PrimFunc):
        raise TypeError(f"tilelang.compile expects a @T.prim_func, got {type(func).__name__}")
    tgt, stop = _target(target)
    flags = _flags(pass_configs)
    text, filename = _source.build(func.func)
    key = (text, filename, tgt, stop, flags, bool(line_info))
    with _cache_lock:
        ck = _cache.get(key)
    if ck is None:
        ck = _compile_text(text, filename, tgt, stop, flags, line_info=line_info)
        with _cache_lock:
            ck = _cache.setdefault(key, ck)
        if verbose:
            print(f"tilelang_ptx: compiled '{func.__name__}' from {filename} for "
                  f"{_lib.kernel_target(ck.handle).decode()}")
    return JITKernel(ck, func, out_idx, tgt or "auto", text)


_remarks = False


def set_remarks(on=True):
    """Remarks on (or off) for the compiles of this process that follow: which path each T.Pipelined GEMM or
    attention loop took and why (tl_compile_options.remarks), as CompileWarnings.  Kernels already compiled
    (and memoised) say nothing again.  `python -m tilelang_ptx --remarks FILE` calls it before FILE runs."""
    global _remarks
    _remarks = bool(on)


def _compile_text(text, filename, tgt, stop, flags, defines=(), line_info=True):
    """Compiles TileLang source `text` with tl_kernel_compile; defines: (name, value text) pairs, the
    `-D` bindings (T.const symbols and parameters of an eager kernel); line_info: the PTX's .file /
    .loc lines (on by default).  Returns a CKernel."""
    o = _lib.CompileOptions()
    o.no_line_info = not line_info
    o.remarks = _remarks
    o.target = tgt.encode() if tgt else None
    o.out_idx_mode = _lib.TL_OUT_IDX_NONE
    o.flags, o.flags_false = flags
    o.stop_after = stop
    data = text.encode()
    defs = (_lib.Define * max(len(defines), 1))(*[_lib.Define(n.encode(), v.encode()) for n, v in defines])
    h = ctypes.c_void_p()
    ctx = _lib.context()
    rc = _lib.kernel_compile(ctx, data, len(data), filename.encode(), defs if defines else None, len(defines),
                             ctypes.byref(o), ctypes.byref(h))
    if rc != _lib.TL_OK:
        msg = _lib.last_error(ctx)
        if rc == _lib.TL_ERR_COMPILE:
            raise CompileError(msg)
        raise CompileError(f"{_lib.status_name(rc).decode()}: {msg}")
    _stats["compiles"] += 1
    w = _lib.warnings_text(ctx)
    if w:
        warnings.warn(CompileWarning(w), stacklevel=_user_stacklevel())
    return CKernel(h.value)


def analyze_text(text, filename, defines=(), dims=None):
    """The work of one launch of the kernel(s) of TileLang source `text` parsed with the -D bindings
    `defines` ((name, value text) pairs), counted by libtilelang on the tile IR (tl_module_analyze, ir.h):
    a dict of flops, global_bytes, global_read_bytes, global_write_bytes, gemms, blocks (ints).  dims: values
    of T.dynamic dims by name.  CompileError with the located diagnostics when the source does not parse
    or a count needs a trip count that is not a compile-time constant."""
    ctx = _lib.context()
    data = text.encode()
    defs = (_lib.Define * max(len(defines), 1))(*[_lib.Define(n.encode(), v.encode()) for n, v in defines])
    m = ctypes.c_void_p()
    rc = _lib.module_parse_kernel(ctx, data, len(data), filename.encode(), None, defs if defines else None,
                                  len(defines), ctypes.byref(m))
    if rc != _lib.TL_OK:
        raise CompileError(_lib.last_error(ctx))
    try:
        dims = dict(dims or {})
        names = (ctypes.c_char_p * max(len(dims), 1))(*[k.encode() for k in dims])
        values = (ctypes.c_int64 * max(len(dims), 1))(*[int(v) for v in dims.values()])
        a = _lib.Analysis()
        rc = _lib.module_analyze(ctx, m, names, values, len(dims), ctypes.byref(a))
        if rc != _lib.TL_OK:
            raise CompileError(_lib.last_error(ctx))
    finally:
        _lib.module_destroy(m)
    return {f: getattr(a, f) for f, _ in _lib.Analysis._fields_}


def _user_stacklevel():
    """The stacklevel of warnings.warn (called by our caller) that names the first frame outside this
    package: the user's call that compiled, so that filters by module and the once-per-location display
    apply to the user's code."""
    pkg = os.path.dirname(os.path.abspath(__file__))
    f, level = sys._getframe(2), 2
    while f is not None and os.path.dirname(os.path.abspath(f.f_code.co_filename)) == pkg:
        f, level = f.f_back, level + 1
    return level


class JITFactory:
    """@tilelang.jit on a Python function: calling it compiles (once per distinct arguments).

    A factory returns its @T.prim_func (or a JITKernel, when the prim_func is itself decorated);
    the result is compiled with this decorator's options."""

    def __init__(self, func, options):
        self.func = func
        self.options = options
        self._memo = {}
        self.eager = _source.is_eager(func)
        self._last = None
        functools.update_wrapper(self, func)

    def __call__(self, *args, **kwargs):
        if self.eager:
            return self._eager_call(*args, **kwargs)
        try:
            key = (args, tuple(sorted(kwargs.items())))
            hash(key)
        except TypeError:
            key = None
        if key is not None:
            k = self._memo.get(key)
            if k is not None:
                return k
        r = self.func(*args, **kwargs)
        if isinstance(r, PrimFunc):
            try:
                r = compile(r, **self.options)
            except ArgumentError as e:  # the jit's out_idx: located at the decorated factory
                if "out_idx" not in str(e):
                    raise
                code = self.func.__code__
                raise ArgumentError(f"{code.co_filename}:{code.co_firstlineno}: error: {e}") from None
        elif not isinstance(r, JITKernel):
            raise TypeError(f"@tilelang.jit function '{self.func.__name__}' returned "
                            f"{type(r).__name__}, not a @T.prim_func")
        if key is not None:
            self._memo[key] = r
        self._last = r
        return r

    def compile(self, *args, **kwargs):
        """The compiled kernel (a JITKernel) for these arguments, as TileLang's `f.compile(...)`.  Eager
        style: T.const symbols and the other parameters as keywords (`matmul.compile(M=1024, N=1024,
        K=1024, block_M=128, ...)`) or tensors to take the shapes of; otherwise the factory's call."""
        if not self.eager:
            return self(*args, **kwargs)
        defines, _ = self._binder().bind(args, kwargs, partial=True)
        return self._eager_kernel(defines)

    # ------------------------------------------------------------------ TileLang's JITImpl surface
    @property
    def out_idx(self):
        return self.options.get("out_idx")

    @property
    def params(self):
        """The parameters (KernelParam) of the kernel this factory compiled last (compiled with the
        factory's defaults when it compiled none yet)."""
        k = self._last or self.compile()
        return k.params

    def get_tir(self, *args, **kwargs):
        """The @T.prim_func the factory returns for these arguments (not compiled).  An eager-style function
        has no prim_func object (its whole source is compiled with the bindings as -D defines): its
        get_tir binds the arguments as compile(...) does (T.const symbols and parameters as keywords,
        or tensors to take the shapes of) and returns an _eager.EagerPrimFunc holding the function and
        those bindings, which tilelang.compile and tilelang.tools.Analyzer accept."""
        if self.eager:
            from ._eager import EagerPrimFunc
            defines, _ = self._binder().bind(args, kwargs, partial=True)
            return EagerPrimFunc(self.func, defines, self.options)
        return self.func(*args, **kwargs)

    def get_kernel_source(self, *args, **kwargs):
        """The PTX of the kernel for these arguments (compiled, or taken from the memo)."""
        return self.compile(*args, **kwargs).get_kernel_source()

    def get_profiler(self, *args, tensor_supply_type=None, **kwargs):
        return self.compile(*args, **kwargs).get_profiler(tensor_supply_type=tensor_supply_type)

    def _binder(self):
        b = self.__dict__.get("_eager_binder")
        if b is None:
            from ._eager import EagerBinder
            b = self._eager_binder = EagerBinder(self.func)
        return b

    def _eager_call(self, *args, **kwargs):
        """The eager style: the function is the kernel and its annotated parameters are the tensors.
        _eager.EagerBinder binds the T.const symbols from the tensors' shapes (and keywords) and the
        other parameters from the arguments; each distinct binding is one compilation of the function's
        whole source (decorators kept) with those -D defines; the kernel runs on the tensors and
        returns the T.empty outputs.  `stream=` (unless a parameter has that name) goes to the launch."""
        b = self._binder()
        stream = kwargs.pop("stream", None) if not b.takes_keyword("stream") else None
        defines, tensors = b.bind(args, kwargs) if kwargs else b.bind_positional(args)
        return self._eager_kernel(defines)(*tensors, stream=stream)

    def _eager_kernel(self, defines):
        k = self._memo.get(defines)
        if k is not None:
            return k
        o = self.options
        tgt, stop = _target(o.get("target"))
        flags = _flags(o.get("pass_configs"))
        text, filename = _source.build(self.func, eager=True)
        line_info = o.get("line_info", True)
        key = (text, filename, tgt, stop, flags, defines, bool(line_info))
        with _cache_lock:
            ck = _cache.get(key)
        if ck is None:
            ck = _compile_text(text, filename, tgt, stop, flags, defines, line_info=line_info)
            with _cache_lock:
                ck = _cache.setdefault(key, ck)
            if o.get("verbose"):
                print(f"tilelang_ptx: compiled eager kernel '{self.func.__name__}' with "
                      f"{', '.join(f'{n}={v}' for n, v in defines) or 'no bindings'} for "
                      f"{_lib.kernel_target(ck.handle).decode()}")
        out_idx = o.get("out_idx")
        returns = self._binder().returns
        if returns:  # `return C, D`: the T.empty outputs, by name among the kernel's parameters
            names = [_lib.param_name(ck.handle, i).decode() for i in range(_lib.param_count(ck.handle))]
            out_idx = [names.index(r) for r in returns if r in names]
        k = self._memo[defines] = JITKernel(ck, None, out_idx, tgt or "auto", text)
        self._last = k
        return k


def jit(func=None, *, out_idx=None, target="auto", target_host=None, execution_backend="auto",
        verbose=False, pass_configs=None, line_info=True, **kwargs):
    """TileLang's decorator: @tilelang.jit or @tilelang.jit(out_idx=..., target=..., pass_configs=...,
    verbose=..., execution_backend=..., target_host=...).  On a @T.prim_func it compiles it now and
    returns a JITKernel; on a factory it returns a JITFactory.  line_info=False (this package's): no
    source lines in the PTX (as compile's)."""
    options = dict(out_idx=out_idx, target=target, target_host=target_host,
                   execution_backend=execution_backend, verbose=verbose, pass_configs=pass_configs,
                   line_info=line_info)
    if func is None:
        return lambda f: jit(f, **options)
    if isinstance(func, PrimFunc):
        return compile(func, **options)
    if callable(func):
        return JITFactory(func, options)
    raise TypeError(f"tilelang.jit expects a function or a @T.prim_func, got {type(func).__name__}")
