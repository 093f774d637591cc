"""tilelang.autotuner -- TileLang's autotuner: @tilelang.autotune(configs=...) over a @tilelang.jit factory,
and the builder AutoTuner.from_kernel(fn, configs).set_compile_args(...).set_profile_args(...).run().

The search (AutoTuner.run) is libtilelang's tuner, tl_kernel_tune -- the one tl-run --tune uses:
  * each configuration is a dict of factory parameters; the factory runs in Python per configuration
    (the eager style: its bindings) and gives the kernel's file text (_source.build_parts); the
    module constants that differ between configurations become -D bindings of one text, so that one
    tl_kernel_tune call compiles them all on its pool of threads (each with its own tl_context; on a
    GPU the PTX is also loaded in parallel), shows the progress line on stderr, reports each
    configuration that fails to compile or to measure, and keeps the best in the tune cache (the
    kernel cache's directory, off with TL_CACHE=0; keyed by the text, the bindings, target, flags,
    warmup, rep, the device, and this package's description of the call: its arguments -- tensors by
    shape and dtype --, the profile arguments and the check's source): a later search with the same
    key compiles only the best and times nothing.  (Configurations whose texts differ otherwise go to
    one tl_kernel_tune call per text; the best of the calls wins.)
  * the measure callback (this package, on the calling thread, one candidate at a time as they
    finish compiling): inputs from `with set_autotune_inputs(...)`, else supply_prog(params), else
    generated from the kernel's parameters per supply_type (utils.tensor.get_tensor_supply), or for
    an eager-style kernel the call's tensors; the check is ref_prog when given (profiler.assert_allclose
    with rtol/atol/max_mismatched_ratio, or manual_check_prog), else the outputs must agree with those
    of the first candidate measured (same tolerances; generated inputs are reused while the input
    shapes and dtypes stay the same); the time is profiler.do_bench(n_warmup=warmup, n_repeat=rep) in
    ms (CPU times on the CPU executor).
The result (AutotuneResult) and the returned kernel carry .config, .latency and .ref_latency."""
import ctypes
import inspect
import json
import sys
import threading

from . import _lib, _source
from ._source import _LANG_ALIAS
from .jit import JITFactory, _flags, _target, compile as _compile
from .kernel import CKernel, JITKernel
from .language import PrimFunc
from .utils.tensor import TensorSupplyType, torch_assert_close

_inputs_stack = threading.local()


class AutotuneInputsCapture:
    """`with set_autotune_inputs(A, B):` -- the tensors the searches inside the block time on."""

    def __init__(self, tensors):
        self.tensors = tensors

    def __enter__(self):
        stack = getattr(_inputs_stack, "s", None)
        if stack is None:
            stack = _inputs_stack.s = []
        stack.append(self)
        return self

    def __exit__(self, *exc):
        _inputs_stack.s.pop()
        return False


def set_autotune_inputs(*args):
    """A context manager: set_autotune_inputs(a, b, c) or set_autotune_inputs([a, b, c])."""
    tensors = list(args[0]) if len(args) == 1 and isinstance(args[0], (list, tuple)) else list(args)
    return AutotuneInputsCapture(tensors)


def get_autotune_inputs():
    """The tensors of the innermost `with set_autotune_inputs(...)`, or None."""
    stack = getattr(_inputs_stack, "s", None)
    return stack[-1].tensors if stack else None


class AutotuneResult:
    """What AutoTuner.run returns: latency (ms), config (dict), ref_latency, libcode (the kernel's PTX),
    func (its prim_func), kernel (the compiled best), cache_hit (the disk cache answered)."""

    def __init__(self, latency=None, config=None, ref_latency=None, libcode=None, func=None, kernel=None,
                 cache_hit=False):
        self.latency, self.config, self.ref_latency = latency, config, ref_latency
        self.libcode, self.func, self.kernel, self.cache_hit = libcode, func, kernel, cache_hit

    def __repr__(self):
        return f"AutotuneResult(latency={self.latency}, config={self.config})"


def _source_of(obj):
    if obj is None:
        return None
    try:
        return inspect.getsource(obj)
    except (OSError, TypeError):
        return getattr(obj, "__qualname__", repr(type(obj)))


class _Candidate:
    """One configuration, prepared: its file text (the module constants that differ between
    configurations become -D bindings), compile options, and for measuring, what makes its JITKernel."""

    def __init__(self, config, text, consts, defines, filename, tgt, stop, flags, prim, out_idx, returns):
        self.config, self.text, self.consts, self.defines = config, text, consts, defines
        self.filename, self.tgt, self.stop, self.flags = filename, tgt, stop, flags
        self.prim, self.out_idx, self.returns = prim, out_idx, returns

    def const_names(self):
        return [n for n, _ in self.consts]

    def group_key(self):
        """Candidates with equal keys compile from one text (one tl_kernel_tune)."""
        return (self.text, self.filename, self.tgt, self.stop, self.flags, tuple(self.const_names()))

    def kernel(self, ck, source):
        out_idx = self.out_idx
        if self.returns:  # eager style: the outputs are the returned T.empty tensors, by name
            h = ck.handle
            names = [_lib.param_name(h, i).decode() for i in range(_lib.param_count(h))]
            out_idx = [names.index(r) for r in self.returns if r in names]
        return JITKernel(ck, self.prim, out_idx, self.tgt or "auto", source)


def _borrowed(handle):
    """A CKernel over a tl_kernel the tuner owns (the caller sets .handle = None before it dies)."""
    ck = CKernel.__new__(CKernel)
    ck.handle = handle
    return ck


class AutoTuner:
    """AutoTuner(fn, configs): fn(**config) returns a @T.prim_func (or fn is a @tilelang.jit factory);
    configs a list of dicts of fn's parameters (or a function of the call's arguments returning one)."""

    def __init__(self, fn, configs):
        self.fn = fn
        self.configs = configs
        self.compile_args = dict(out_idx=None, target="auto", execution_backend="auto", target_host=None,
                                 verbose=False, pass_configs=None)
        self.profile_args = dict(warmup=25, rep=100, timeout=30, supply_type=TensorSupplyType.Auto, ref_prog=None,
                                 supply_prog=None, rtol=1e-2, atol=1e-2, max_mismatched_ratio=0.01,
                                 skip_check=False, manual_check_prog=None, cache_input_tensors=False,
                                 backend="event")
        self.args, self.kwargs = (), {}
        self.workers = None
        self.inputs = None      # the inputs every candidate runs on, instead of supplied ones

    @classmethod
    def from_kernel(cls, kernel, configs):
        return cls(kernel, configs)

    def set_compile_args(self, out_idx=None, target="auto", execution_backend="auto", target_host=None,
                         verbose=False, pass_configs=None):
        """Compile options of every candidate, as tilelang.compile's."""
        self.compile_args = dict(out_idx=out_idx, target=target if target is not None else "auto",
                                 execution_backend=execution_backend, target_host=target_host,
                                 verbose=bool(verbose), pass_configs=pass_configs)
        return self

    def set_profile_args(self, warmup=25, rep=100, timeout=30, supply_type=TensorSupplyType.Auto, ref_prog=None,
                         supply_prog=None, rtol=1e-2, atol=1e-2, max_mismatched_ratio=0.01, skip_check=False,
                         manual_check_prog=None, cache_input_tensors=False, backend="event"):
        """How candidates are checked and timed (see the module doc)."""
        self.profile_args = dict(warmup=warmup, rep=rep, timeout=timeout, supply_type=supply_type,
                                 ref_prog=ref_prog, supply_prog=supply_prog, rtol=rtol, atol=atol,
                                 max_mismatched_ratio=max_mismatched_ratio, skip_check=skip_check,
                                 manual_check_prog=manual_check_prog, cache_input_tensors=cache_input_tensors,
                                 backend=backend)
        return self

    def set_kernel_parameters(self, args, kwargs):
        """The factory's fixed arguments (the call that tunes): every candidate is fn(*args, **kwargs,
        **config)."""
        self.args, self.kwargs = tuple(args), dict(kwargs)
        return self

    # ------------------------------------------------------------------ one candidate
    def _compile_one(self, config):
        """One configuration compiled on its own (tilelang.compile), outside the search."""
        fn = self.fn
        if isinstance(fn, JITFactory) and fn.eager:
            return fn.compile(*self.args, **self.kwargs, **{k: v for k, v in config.items() if k != "pass_configs"})
        options = dict(self.compile_args)
        if isinstance(fn, JITFactory):
            merged = {k: v for k, v in fn.options.items() if v is not None}
            merged.update({k: v for k, v in options.items() if v not in (None, "auto")})
            options, fn = merged, fn.func
        pcfg = config.get("pass_configs")
        params = {k: v for k, v in config.items() if k != "pass_configs"}
        if pcfg:
            options["pass_configs"] = {**(options.get("pass_configs") or {}), **pcfg}
        r = fn(*self.args, **self.kwargs, **params)
        if isinstance(r, JITKernel):
            return r
        if not isinstance(r, PrimFunc):
            raise TypeError(f"the tuned function returned {type(r).__name__}, not a @T.prim_func")
        return _compile(r, **options)

    def _inputs(self, kernel, profiler, state):
        """The inputs a candidate runs on: captured (set_autotune_inputs), supply_prog's, or generated once
        and reused while the candidates' input parameters have the same shapes and dtypes (so that
        their outputs compare); new ones (and no comparison with the first) when they differ."""
        p = self.profile_args
        captured = state.get("captured") or get_autotune_inputs() or self.inputs
        if captured is not None:
            state["captured"] = captured
            return captured
        if p["supply_prog"] is not None:
            return p["supply_prog"](profiler._get_params(False))
        sig = [(tuple(q.shape or ()), q.dtype) for q in profiler._get_params(False)]
        if state.get("inputs") is None or state.get("signature") != sig:
            if state.get("inputs") is not None:
                state.pop("first_outputs", None)
            state["inputs"], state["signature"] = profiler._get_inputs(), sig
        return state["inputs"]

    def _measure(self, kernel, state, warmup, rep):
        """(ms, None) or (None, why) for one compiled candidate."""
        p = self.profile_args
        profiler = kernel.get_profiler(tensor_supply_type=p["supply_type"])
        ins = self._inputs(kernel, profiler, state)
        tol = dict(atol=p["atol"], rtol=p["rtol"], max_mismatched_ratio=p["max_mismatched_ratio"])
        if not p["skip_check"]:
            if p["ref_prog"] is not None and p["manual_check_prog"] is not None:
                profiler.manual_assert_close(p["ref_prog"], input_tensors=ins, manual_check_prog=p["manual_check_prog"])
            elif p["ref_prog"] is not None:
                profiler.assert_allclose(p["ref_prog"], input_tensors=ins, **tol)
            else:  # against the first candidate that ran (a kernel without out_idx: the arguments it wrote)
                outs = profiler._outputs(ins) or list(ins)
                outs = [_snapshot(o) for o in outs]
                first = state.setdefault("first_outputs", outs)
                if first is not outs:
                    if len(first) != len(outs):
                        raise AssertionError("a different number of outputs than the first configuration's")
                    for a, b in zip(outs, first):
                        torch_assert_close(a, b, base_name="this config", ref_name="first config", **tol)
        return profiler.do_bench(n_warmup=warmup, n_repeat=rep, input_tensors=ins, backend=p["backend"])

    # ------------------------------------------------------------------ the search
    def _configs(self):
        cfgs = self.configs
        if callable(cfgs):
            cfgs = cfgs(*self.args, **self.kwargs)
        cfgs = [dict(c) for c in (cfgs or [])]
        if not cfgs:
            raise ValueError("autotune: no configurations to tune (configs= is empty)")
        fn = self.fn.func if isinstance(self.fn, JITFactory) else self.fn
        try:
            names = set(inspect.signature(fn).parameters)
        except (TypeError, ValueError):
            names = None
        for c in cfgs:
            unused = set(c) - {"pass_configs"} - (names if names is not None else set(c))
            if unused:
                raise ValueError(f"autotune: config keys {sorted(unused)} are not parameters of "
                                 f"'{getattr(fn, '__name__', fn)}'")
        return cfgs

    def _problem(self, warmup, rep):
        """What decides the best configuration besides what libtilelang's tune-cache key already holds
        (the source, the -D bindings, target, flags, warmup, rep, the device): the call's arguments
        (tensors by shape and dtype), the profile arguments and the check's source."""
        fn = self.fn.func if isinstance(self.fn, JITFactory) else self.fn
        p = self.profile_args
        data = {"function": getattr(fn, "__qualname__", "?"), "args": repr(_normalize(self.args)),
                "kwargs": repr(_normalize(sorted(self.kwargs.items()))),
                "profile": repr(sorted((k, repr(v)) for k, v in p.items() if not callable(v))),
                "ref": _source_of(p["ref_prog"]), "supply": _source_of(p["supply_prog"]),
                "check": _source_of(p["manual_check_prog"]), "captured": repr(_normalize(get_autotune_inputs())),
                "inputs": repr(_normalize(self.inputs)) if self.inputs is not None else None}
        return json.dumps(data, sort_keys=True)

    def _prepare(self, config):
        """Config -> _Candidate: the factory runs in Python (the eager style: its binding), its file text
        and compile options; raises what the factory or the capture raises."""
        f = self.fn if isinstance(self.fn, JITFactory) else None
        options = dict(self.compile_args)
        if f is not None:
            merged = {k: v for k, v in f.options.items() if v is not None}
            merged.update({k: v for k, v in options.items() if v not in (None, "auto")})
            options = merged
        pcfg = config.get("pass_configs")
        params = {k: v for k, v in config.items() if k != "pass_configs"}
        if pcfg:
            options["pass_configs"] = {**(options.get("pass_configs") or {}), **pcfg}
        tgt, stop = _target(options.get("target"))
        flags = _flags(options.get("pass_configs"))
        if f is not None and f.eager:
            text, filename = _source.build(f.func, eager=True)
            defines, _ = f._binder().bind(self.args, {**self.kwargs, **params}, partial=True)
            return _Candidate(config, text, [], list(defines), filename, tgt, stop, flags, None, None,
                              f._binder().returns)
        r = (f.func if f is not None else self.fn)(*self.args, **self.kwargs, **params)
        if isinstance(r, JITKernel) and isinstance(r.prim_func, PrimFunc):
            r = r.prim_func
        if not isinstance(r, PrimFunc):
            raise TypeError(f"the tuned function returned {type(r).__name__}, not a @T.prim_func")
        text, consts, filename = _source.build_parts(r.func)
        fixed = [(n, v) for n, v in consts if _LANG_ALIAS in v]  # T.* values: in the text, not -D
        text += "".join(f"{n} = {v}\n" for n, v in fixed)
        plain = [(n, v) for n, v in consts if _LANG_ALIAS not in v]
        return _Candidate(config, text, plain, [], filename, tgt, stop, flags, r, options.get("out_idx"), None)

    def run(self, warmup=25, rep=100, timeout=180, use_pipeline=False, enable_grouped_compile=False,
            group_compile_size=2, benchmark_devices=None, benchmark_multi_gpu=False, early_stop=False,
            early_stop_factor=2.0):
        """Searches the configurations with libtilelang's tuner (tl_kernel_tune: the compile pool, the
        progress line, the tune cache; this package checks and times each candidate in its measure
        callback); returns an AutotuneResult (RuntimeError when no configuration succeeds).  TileLang's
        scheduling options (use_pipeline, grouped compiles, several benchmark GPUs, early stop) are
        accepted: the tuner always compiles in parallel and times on device 0."""
        cfgs = self._configs()
        name = getattr(self.fn, "__name__", "kernel")
        cands, groups = [], {}
        for c in cfgs:
            try:
                cand = self._prepare(c)
            except Exception as e:  # the factory or a capture failed: reported like a compile error
                sys.stderr.write(f"autotune {name}: config {c} skipped: {type(e).__name__}: {_first_line(e)}\n")
                continue
            cands.append(cand)
            groups.setdefault(cand.group_key(), []).append(cand)
        state = {}
        best = None
        problem = self._problem(warmup, rep)
        self.last_run = {"groups": len(groups), "workers": 0, "cache_hit": bool(groups)}
        for group in groups.values():
            found = self._tune_group(group, state, warmup, rep, problem)
            if found is not None and (best is None or found[0] < best[0]):
                best = found
        if best is None:
            raise RuntimeError(f"autotune {name}: no configuration of {len(cfgs)} compiled, ran and passed the check")
        ms, cand, kernel = best
        ref_ms = self._ref_latency(kernel, state, warmup, rep)
        return self._result(kernel, cand.config, ms, ref_ms, cache_hit=self.last_run["cache_hit"])

    def _tune_group(self, group, state, warmup, rep, problem):
        """tl_kernel_tune over the candidates of one text: -D bindings per candidate (the values that
        differ between them).  Returns (ms, candidate, JITKernel) of its best, or None."""
        first = group[0]
        varying = [n for n in first.const_names() if len({dict(c.consts)[n] for c in group}) > 1]
        source = (first.text + "".join(f"{n} = {v}\n" for n, v in first.consts)).encode()
        configs = [[*c.defines, *[(n, dict(c.consts)[n]) for n in varying]] for c in group]
        keep = []  # the ctypes objects the call reads
        arrays = (ctypes.POINTER(_lib.Define) * len(configs))()
        counts = (ctypes.c_size_t * len(configs))()
        for i, defs in enumerate(configs):
            arr = (_lib.Define * max(len(defs), 1))(*[_lib.Define(n.encode(), v.encode()) for n, v in defs])
            keep.append(arr)
            arrays[i] = ctypes.cast(arr, ctypes.POINTER(_lib.Define))
            counts[i] = len(defs)
        space = ctypes.c_void_p()
        rc = _lib.tune_space_from_defines(arrays, counts, len(configs), ctypes.byref(space))
        if rc != _lib.TL_OK:
            raise RuntimeError(f"autotune: tl_tune_space_from_defines failed ({_lib.status_name(rc).decode()})")
        o = _lib.CompileOptions()
        o.target = first.tgt.encode() if first.tgt else None
        o.out_idx_mode = _lib.TL_OUT_IDX_NONE
        o.flags, o.flags_false = first.flags
        o.stop_after = first.stop
        on_gpu = first.stop == _lib.TL_STAGE_PTX and _gpu()

        interrupted = []

        def measure(_user, handle, index, warm, reps, ms_out, why, why_size):
            ck = _borrowed(handle)
            try:
                if interrupted:  # Ctrl-C: the rest is skipped, then re-raised after the tuner returns
                    raise interrupted[0]
                ms_out[0] = self._measure(group[index].kernel(ck, source.decode()), state, warm, reps)
                return _lib.TL_OK
            except BaseException as e:  # the tuner reports it ("skipped: measure: ...") and goes on
                if isinstance(e, KeyboardInterrupt) and not interrupted:
                    interrupted.append(e)
                msg = f"{type(e).__name__}: {_first_line(e)}".encode()[:max(int(why_size) - 1, 0)]
                ctypes.memmove(why, msg + b"\0", len(msg) + 1)
                return _lib.TL_ERR_UNSUPPORTED
            finally:
                ck.handle = None  # the tuner owns it (and destroys it unless it is the best)

        cb = _lib.MEASURE_FN(measure)
        opts = _lib.TuneOptions(compile=ctypes.pointer(o), defines=None, ndefines=0, workers=self.workers or 0,
                                warmup=max(int(warmup), 1), rep=max(int(rep), 1), measure=cb, user=None,
                                problem=problem.encode(), progress=True, load=on_gpu, device=0, cache=0)
        res = _lib.TuneResult()
        ctx = _lib.context()
        try:
            rc = _lib.kernel_tune(ctx, source, len(source), first.filename.encode(), space, ctypes.byref(opts),
                                  ctypes.byref(res))
            if rc != _lib.TL_OK:
                raise RuntimeError(f"autotune: tl_kernel_tune failed: {_lib.last_error(ctx)}")
            if interrupted:
                if res.kernel:
                    _lib.kernel_destroy(res.kernel)
                raise interrupted[0]
            self.last_run["workers"] = max(self.last_run["workers"], res.workers)
            self.last_run["cache_hit"] = self.last_run["cache_hit"] and bool(res.cache_hit)
            if res.best < 0 or not res.kernel:
                return None
            cand = group[res.best]
            return res.best_ms, cand, cand.kernel(CKernel(res.kernel), source.decode())
        finally:
            _lib.tune_result_free(ctypes.byref(res))
            _lib.tune_space_destroy(space)

    def _ref_latency(self, kernel, state, warmup, rep):
        """ref_prog's time on the candidates' inputs (TileLang's ref_latency), or None."""
        ref = self.profile_args["ref_prog"]
        if ref is None:
            return None
        try:
            profiler = kernel.get_profiler(tensor_supply_type=self.profile_args["supply_type"])
            return profiler.do_bench(ref, n_warmup=warmup, n_repeat=rep,
                                     input_tensors=self._inputs(kernel, profiler, state))
        except Exception:
            return None

    def _result(self, kernel, config, latency, ref_latency=None, cache_hit=False):
        kernel.config, kernel.latency, kernel.ref_latency = dict(config), latency, ref_latency
        return AutotuneResult(latency=latency, config=dict(config), ref_latency=ref_latency,
                              libcode=kernel.get_kernel_source(), func=kernel.prim_func, kernel=kernel,
                              cache_hit=cache_hit)

    __call__ = run


def _normalize(v):
    """v with tensors replaced by their shape and dtype (keys of the memo and the disk cache)."""
    if isinstance(v, (list, tuple)):
        return type(v)(_normalize(x) for x in v)
    if isinstance(v, dict):
        return tuple(sorted((k, _normalize(x)) for k, x in v.items()))
    shape = getattr(v, "shape", None)
    if shape is not None and getattr(v, "dtype", None) is not None and not isinstance(v, (int, float)):
        return ("tensor", tuple(int(d) for d in shape), str(v.dtype), str(getattr(v, "device", "cpu")))
    return v


def _gpu():
    from .profiler import _cuda_torch
    return _cuda_torch() is not None


def _snapshot(x):
    """A copy of an output (the next candidate may write the same input buffers)."""
    clone = getattr(x, "clone", None) or getattr(x, "copy", None)
    return clone() if clone is not None else x


def _first_line(e):
    s = str(e).strip()
    return s.splitlines()[0] if s else type(e).__name__


class AutoTuneImpl:
    """@tilelang.autotune(...) over a @tilelang.jit factory: calling it with the tunable parameters left
    out searches them (once per distinct arguments) and returns the best kernel -- for an eager-style
    kernel (its parameters are the tensors), runs it on the call's tensors and returns its outputs, the
    candidates timed on those tensors; passing any of them compiles that configuration directly, as
    TileLang does."""

    def __init__(self, factory, configs, **profile):
        self.factory = factory
        self.configs = configs
        self.autotune_configs = configs
        self.profile = profile
        self._tuned = {}
        self.__name__ = getattr(factory, "__name__", "kernel")
        self.__doc__ = getattr(factory, "__doc__", None)

    @property
    def out_idx(self):
        return self.factory.options.get("out_idx")

    @property
    def func(self):
        return self.factory.func

    def _tunables(self, args, kwargs):
        cfgs = self.configs(*args, **kwargs) if callable(self.configs) else self.configs
        return cfgs, {k for c in cfgs or () for k in c if k != "pass_configs"}

    def __call__(self, *args, **kwargs):
        return self._call(args, kwargs, run=True)

    def _call(self, args, kwargs, run):
        """The best kernel for these arguments (searched once per distinct arguments; tensors count by
        shape and dtype); eager style with run=True: the best kernel run on the call's tensors."""
        f = self.factory
        cfgs, tunables = self._tunables(args, kwargs)
        params = list(inspect.signature(f.func).parameters)
        given = set(kwargs) | set(params[:len(args)])
        if tunables & given:
            return f(*args, **kwargs) if run or not f.eager else f.compile(*args, **kwargs)
        key = (_normalize(args), _normalize(kwargs))
        try:
            hit = self._tuned.get(key)
        except TypeError:
            key, hit = None, None
        if hit is None:
            p = dict(self.profile)
            warmup, rep, timeout = p.pop("warmup"), p.pop("rep"), p.pop("timeout")
            tuner = AutoTuner(f, cfgs).set_kernel_parameters(args, kwargs)
            tuner.set_profile_args(warmup=warmup, rep=rep, timeout=timeout, **p)
            if f.eager:  # the candidates run on the call's tensors, when it gives them all (not .compile(N=...))
                b = f._binder()
                ins = b.bind(args, {**kwargs, **cfgs[0]}, partial=True)[1]
                tuner.inputs = ins if len(ins) == len(b.tensor_params) else None
            r = tuner.run(warmup=warmup, rep=rep, timeout=timeout)
            hit = (r.kernel, r.config)
            if key is not None:
                self._tuned[key] = hit
        kernel, config = hit
        if f.eager and run:
            return kernel(*f._binder().bind(args, {**kwargs, **config})[1])
        return kernel

    def compile(self, *args, **kwargs):
        """The best kernel (eager style: without running it)."""
        return self._call(args, kwargs, run=False)

    def get_tuner(self):
        return AutoTuner(self.factory, self.configs)

    def get_kernel_source(self, *args, **kwargs):
        return self.compile(*args, **kwargs).get_kernel_source()

    def get_profiler(self, *args, tensor_supply_type=None, **kwargs):
        return self.compile(*args, **kwargs).get_profiler(tensor_supply_type=tensor_supply_type)


def autotune(func=None, *, configs=None, warmup=25, rep=100, timeout=100, supply_type=TensorSupplyType.Auto,
             ref_prog=None, supply_prog=None, rtol=1e-2, atol=1e-2, max_mismatched_ratio=0.01, skip_check=False,
             manual_check_prog=None, cache_input_tensors=False, do_not_specialize=None, early_stop=False,
             early_stop_factor=2.0):
    """@tilelang.autotune(configs=..., warmup=, rep=, timeout=, ...) above @tilelang.jit: see AutoTuneImpl."""
    if func is not None:
        raise ValueError("@tilelang.autotune needs configs=...: write @tilelang.autotune(configs=...)")
    if configs is None:
        raise ValueError("@tilelang.autotune: configs= is required")
    profile = dict(warmup=warmup, rep=rep, timeout=timeout, supply_type=supply_type, ref_prog=ref_prog,
                   supply_prog=supply_prog, rtol=rtol, atol=atol, max_mismatched_ratio=max_mismatched_ratio,
                   skip_check=skip_check, manual_check_prog=manual_check_prog,
                   cache_input_tensors=cache_input_tensors)

    def decorator(factory):
        if not isinstance(factory, JITFactory):
            raise TypeError("@tilelang.autotune must be applied above @tilelang.jit (a JITFactory), got "
                            f"{type(factory).__name__}")
        return AutoTuneImpl(factory, configs, **profile)
    return decorator


__all__ = ["autotune", "AutoTuner", "set_autotune_inputs", "get_autotune_inputs", "AutotuneResult"]

from ._unsupported import missing_attribute  # noqa: E402

__getattr__ = missing_attribute(__name__)
