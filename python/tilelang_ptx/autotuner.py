"""tilelang.autotuner -- TileLang's autotuner: @tilelang.autotune(configs=...) over a @tilelang.jit factory,
and the builder AutoTuner.from_kernel(fn, configs).set_compile_args(...).set_profile_args(...).run().

The search (AutoTuner.run):
  * each configuration is a dict of factory parameters; the factory runs in Python per configuration
    and its prim_func compiles on a pool of threads (libtilelang is thread-safe and ctypes releases
    the GIL while it compiles: the compiles run in parallel);
  * the calling thread checks and times the compiled candidates in order, one at a time, while the
    others compile: inputs from
    `with set_autotune_inputs(...)`, else supply_prog(params), else generated from the kernel's
    parameters per supply_type (utils.tensor.get_tensor_supply); the check is ref_prog when given
    (profiler.assert_allclose with rtol/atol/max_mismatched_ratio, or manual_check_prog), else the
    outputs must agree with those of the first configuration that ran (same tolerances; the generated
    inputs are reused while the input shapes and dtypes stay the same); the time is
    profiler.do_bench(n_warmup=warmup, n_repeat=rep) in ms (CPU times on the CPU executor);
  * a configuration that fails to compile, to run or the check is reported (one line) and skipped;
  * a progress line on stderr (rewritten in place on a terminal) says compiled / timed / failed of the
    total and the best so far;
  * the best configuration is kept in a disk cache (<kernel cache dir>/autotune/<key>.json, off with
    TL_CACHE=0) keyed by the factory's source, the call's arguments, the configurations, compile and
    profile arguments (the check's source included), the target and the device's name; a later search
    with the same key compiles only that configuration (the kernel cache serves it) and times nothing.
The result (AutotuneResult) and the returned kernel carry .config and .latency.  Why not libtilelang's
tl_kernel_tune (tl-run --tune): it tunes one source over -D bindings, while here each configuration is
the text the Python factory produced for it; see docs/tilelang-users.md."""
import concurrent.futures
import hashlib
import inspect
import json
import os
import sys
import threading
import time

from . import _lib
from .jit import JITFactory, _target, compile as _compile
from .kernel import JITKernel
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


def _cache_dir():
    from .env import _cache_dir as d
    return None if os.environ.get("TL_CACHE") == "0" else os.path.join(d(), "autotune")


def _source_of(obj):
    if obj is None:
        return None
    try:
        return inspect.getsource(obj)
    except (OSError, TypeError):
        return getattr(obj, "__qualname__", repr(type(obj)))


def _device_name(on_gpu):
    if not on_gpu:
        return "cpu-executor"
    from .carver.arch import driver
    try:
        return f"{driver.get_device_name(0)} sm_{''.join(map(str, driver.get_compute_capability(0)))}"
    except RuntimeError as e:
        return f"no-device ({e})"


class _Progress:
    """The one progress line on stderr: rewritten in place on a terminal, else printed at 10% steps."""

    def __init__(self, total, name):
        self.total, self.name, self.tty = total, name, sys.stderr.isatty()
        self.compiled = self.timed = self.failed = 0
        self.best = None
        self._last = -1
        self.t0 = time.perf_counter()

    def show(self, final=False):
        done = self.timed + self.failed
        step = done * 10 // max(self.total, 1)
        if not (self.tty or final or step != self._last):
            return
        self._last = step
        best = f"best {self.best[0]:.4g} ms {self.best[1]}" if self.best else "no best yet"
        line = (f"autotune {self.name}: compiled {self.compiled}/{self.total}, timed {self.timed}, failed "
                f"{self.failed}, {best} ({time.perf_counter() - self.t0:.1f} s)")
        if self.tty and not final:
            sys.stderr.write("\r\033[K" + line)
        else:
            sys.stderr.write(("\r\033[K" if self.tty else "") + line + "\n")
        sys.stderr.flush()

    def note(self, msg):
        sys.stderr.write(("\r\033[K" if self.tty else "") + f"autotune {self.name}: {msg}\n")
        sys.stderr.flush()


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
        self.compile_fn = None  # config -> JITKernel, instead of calling fn (the eager style)
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
        if self.compile_fn is not None:
            return self.compile_fn(config)
        fn = self.fn
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

    def _key(self, cfgs, warmup, rep, on_gpu):
        fn = self.fn.func if isinstance(self.fn, JITFactory) else self.fn
        closure = {}
        for name, cell in zip(fn.__code__.co_freevars, fn.__closure__ or ()):
            try:
                v = cell.cell_contents
            except ValueError:
                continue
            if isinstance(v, (int, float, str, bool, type(None))):
                closure[name] = v
        p = self.profile_args
        data = {"source": _source_of(fn), "closure": closure, "args": repr(_normalize(self.args)),
                "kwargs": repr(_normalize(sorted(self.kwargs.items()))), "configs": repr(cfgs),
                "compile": repr(sorted((k, repr(v)) for k, v in self.compile_args.items())),
                "profile": repr(sorted((k, repr(v)) for k, v in p.items() if not callable(v))),
                "ref": _source_of(p["ref_prog"]), "supply": _source_of(p["supply_prog"]),
                "check": _source_of(p["manual_check_prog"]), "warmup": warmup, "rep": rep,
                "target": repr(_target(self.compile_args.get("target"))), "device": _device_name(on_gpu),
                "library": _lib.path, "captured": get_autotune_inputs() is not None}
        return hashlib.sha256(json.dumps(data, sort_keys=True).encode()).hexdigest()[:32]

    def run(self, warmup=25, rep=100, timeout=180, **_ignored):
        """Searches the configurations; returns an AutotuneResult (RuntimeError when none succeeds)."""
        cfgs = self._configs()
        name = getattr(self.fn, "__name__", "kernel")
        on_gpu = _target(self.compile_args.get("target"))[1] == _lib.TL_STAGE_PTX and _gpu()
        cache = _cache_dir()
        key = self._key(cfgs, warmup, rep, on_gpu)
        if cache:
            hit = _load(cache, key)
            if hit is not None and hit["config"] in cfgs:
                kernel = self._compile_one(hit["config"])
                return self._result(kernel, hit["config"], hit["latency"], hit.get("ref_latency"), cache_hit=True)
        progress = _Progress(len(cfgs), name)
        state = {}
        best = None
        workers = self.workers or min(len(cfgs), os.cpu_count() or 1)
        with concurrent.futures.ThreadPoolExecutor(max_workers=workers) as pool:
            futures = [pool.submit(self._compile_one, c) for c in cfgs]
            for i, fut in enumerate(futures):  # in order: the first configuration is the check's reference
                try:
                    kernel = fut.result()
                except Exception as e:  # reported, not fatal
                    progress.failed += 1
                    progress.note(f"config {cfgs[i]} does not compile: {_first_line(e)}")
                    progress.show()
                    continue
                progress.compiled += 1
                try:
                    ms = self._measure(kernel, state, warmup, rep)
                except Exception as e:
                    progress.failed += 1
                    progress.note(f"config {cfgs[i]} skipped: {type(e).__name__}: {_first_line(e)}")
                    progress.show()
                    continue
                progress.timed += 1
                if best is None or ms < best[0]:
                    best = (ms, i, kernel)
                    progress.best = (ms, cfgs[i])
                progress.show()
        progress.show(final=True)
        if best is None:
            raise RuntimeError(f"autotune {name}: no configuration of {len(cfgs)} compiled, ran and passed the check")
        ms, i, kernel = best
        ref_ms = self._ref_latency(kernel, state, warmup, rep)
        if cache:
            _store(cache, key, {"config": cfgs[i], "latency": ms, "ref_latency": ref_ms})
        return self._result(kernel, cfgs[i], ms, ref_ms)

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


def _load(cache, key):
    try:
        with open(os.path.join(cache, key + ".json")) as f:
            d = json.load(f)
        return d if isinstance(d, dict) and isinstance(d.get("config"), dict) else None
    except (OSError, ValueError):
        return None


def _store(cache, key, data):
    try:
        os.makedirs(cache, exist_ok=True)
        tmp = os.path.join(cache, f".{key}.{os.getpid()}.{threading.get_ident()}.tmp")
        with open(tmp, "w") as f:
            json.dump(data, f)
        os.replace(tmp, os.path.join(cache, key + ".json"))  # atomic: readers see the old or the new entry
    except (OSError, TypeError, ValueError):
        pass  # a cache that cannot be written only costs the next search


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
            if f.eager:  # each config compiled as f.compile(...), run on the call's tensors
                tuner.compile_fn = lambda config: f.compile(*args, **kwargs, **config)
                tuner.inputs = f._binder().bind(args, {**kwargs, **cfgs[0]})[1]
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
