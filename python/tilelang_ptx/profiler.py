"""tilelang.profiler -- do_bench and kernel.get_profiler(), with TileLang's signatures and units.

do_bench(fn, warmup=25, rep=100, ...) times fn() and returns milliseconds.  warmup and rep are time
budgets in ms (as TileLang's): five calls estimate one call's time, then max(1, warmup / estimate) untimed
and max(1, rep / estimate) timed calls follow, unless _n_warmup / _n_repeat give the counts.
  * With PyTorch and a CUDA GPU: CUDA events around each call, a 256 MB (cache_size) buffer zeroed
    before each call so that L2 starts cold (TileLang's flush), the mean (return_mode) or quantiles.
  * Otherwise (the CPU executor, NumPy): time.perf_counter around each call; the figures are CPU
    times, and the first such call says so once (a ProfilerWarning).
Profiler (kernel.get_profiler(tensor_supply_type=...)): inputs made per TensorSupplyType
(utils/tensor.py: PyTorch CUDA tensors when the kernel has PTX and a GPU is there, NumPy arrays on the
CPU executor), assert_allclose(reference_program, ...), manual_assert_close, assert_consistent,
run_once, do_bench(func=None, ...)."""
import functools
import statistics
import sys
import time
import warnings

from .utils.tensor import TensorSupplyType, get_tensor_supply, torch_assert_close


class ProfilerWarning(UserWarning):
    """do_bench measured on the host: its figures are CPU times, not GPU times."""


_said_cpu = []


def _cuda_torch():
    """torch when it is importable and sees a CUDA GPU, else None."""
    torch = sys.modules.get("torch")
    if torch is None:
        try:
            import torch
        except ImportError:
            return None
    try:
        return torch if torch.cuda.is_available() else None
    except Exception:
        return None


def _aggregate(times, quantiles, return_mode):
    if return_mode not in ("min", "max", "mean", "median"):
        raise ValueError(f"do_bench: return_mode must be min, max, mean or median, got {return_mode!r}")
    if quantiles is not None:
        s = sorted(times)
        vals = []
        for q in quantiles:  # linear interpolation between closest ranks (torch.quantile's default)
            pos = q * (len(s) - 1)
            lo = int(pos)
            hi = min(lo + 1, len(s) - 1)
            vals.append(s[lo] + (s[hi] - s[lo]) * (pos - lo))
        return vals[0] if len(vals) == 1 else vals
    return {"min": min, "max": max, "mean": statistics.fmean, "median": statistics.median}[return_mode](times)


def do_bench(fn, warmup=25, rep=100, _n_warmup=0, _n_repeat=0, quantiles=None, fast_flush=True,
             backend="event", return_mode="mean", device=None, cache_size=256, early_stop_baseline=None,
             on_host=None):
    """Milliseconds per call of fn() (see the module doc).  backend: "event" (also "cupti" and
    "cudagraph" are accepted and time with events); on_host=True forces host timing (the CPU
    executor), None chooses by whether PyTorch sees a GPU."""
    torch = None if on_host else _cuda_torch()
    if torch is None:
        return _bench_host(fn, warmup, rep, _n_warmup, _n_repeat, quantiles, return_mode, early_stop_baseline)
    if device is not None:
        with torch.cuda.device(device):
            return _bench_cuda(torch, fn, warmup, rep, _n_warmup, _n_repeat, quantiles, fast_flush, return_mode,
                               cache_size, early_stop_baseline)
    return _bench_cuda(torch, fn, warmup, rep, _n_warmup, _n_repeat, quantiles, fast_flush, return_mode,
                       cache_size, early_stop_baseline)


def _counts(estimate_ms, warmup, rep, n_warmup, n_repeat):
    est = max(estimate_ms, 1e-6)
    return (n_warmup if n_warmup > 0 else max(1, int(warmup / est)),
            n_repeat if n_repeat > 0 else max(1, int(rep / est)))


def _bench_cuda(torch, fn, warmup, rep, n_warmup, n_repeat, quantiles, fast_flush, return_mode, cache_size,
                early_stop_baseline):
    fn()
    torch.cuda.synchronize()
    nbytes = int(cache_size) * 1024 * 1024
    cache = torch.empty(nbytes // 4 if fast_flush else nbytes, dtype=torch.int32 if fast_flush else torch.int8,
                        device="cuda")
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    start.record()
    for _ in range(5):
        cache.zero_()
        fn()
    end.record()
    end.synchronize()
    estimate = start.elapsed_time(end) / 5
    if early_stop_baseline is not None and estimate > early_stop_baseline:
        return [estimate] * len(quantiles) if quantiles else estimate
    nw, nr = _counts(estimate, warmup, rep, n_warmup, n_repeat)
    for _ in range(nw):
        fn()
    ev = [(torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)) for _ in range(nr)]
    for s, e in ev:
        cache.zero_()
        s.record()
        fn()
        e.record()
    torch.cuda.synchronize()
    return _aggregate([s.elapsed_time(e) for s, e in ev], quantiles, return_mode)


def _bench_host(fn, warmup, rep, n_warmup, n_repeat, quantiles, return_mode, early_stop_baseline):
    if not _said_cpu:
        _said_cpu.append(True)
        warnings.warn(ProfilerWarning("tilelang_ptx.profiler.do_bench: no CUDA GPU (or a CPU-executor kernel): "
                                      "the figures are CPU times of the host executor, not GPU times"),
                      stacklevel=3)
    fn()
    t0 = time.perf_counter()
    for _ in range(5):
        fn()
    estimate = (time.perf_counter() - t0) * 1e3 / 5
    if early_stop_baseline is not None and estimate > early_stop_baseline:
        return [estimate] * len(quantiles) if quantiles else estimate
    nw, nr = _counts(estimate, warmup, rep, n_warmup, n_repeat)
    for _ in range(nw):
        fn()
    times = []
    for _ in range(nr):
        t = time.perf_counter()
        fn()
        times.append((time.perf_counter() - t) * 1e3)
    return _aggregate(times, quantiles, return_mode)


def _as_list(x):
    if x is None:
        return []
    if isinstance(x, (list, tuple)):
        return list(x)
    return [x]


class Profiler:
    """kernel.get_profiler(tensor_supply_type): checks and times `kernel` on generated inputs."""

    def __init__(self, kernel, supply=None):
        self.kernel = kernel
        self.supply_type = supply or TensorSupplyType.Auto
        self.on_gpu = kernel.get_kernel_source() != "" and _cuda_torch() is not None
        self.supply = get_tensor_supply(self.supply_type, on_gpu=self.on_gpu)
        self._inputs = None

    @property
    def params(self):
        return self.kernel.params

    @property
    def result_idx(self):
        return list(self.kernel.out_idx or ())

    @property
    def func(self):
        return self.kernel

    def __call__(self, *args, **kwargs):
        return self.kernel(*args, **kwargs)

    def _get_params(self, with_output=False):
        outs = set(self.result_idx)
        return [p for i, p in enumerate(self.params) if with_output or i not in outs]

    def _get_inputs(self, with_output=False):
        """The kernel's inputs (made once, then reused), per the supply type; with_output: fresh tensors
        for every parameter."""
        if with_output:
            return [self.supply(p) for p in self._get_params(True)]
        if self._inputs is None:
            self._inputs = [self.supply(p) for p in self._get_params(False)]
        return self._inputs

    def _sync(self):
        if self.on_gpu:
            _cuda_torch().cuda.synchronize()

    def _outputs(self, ins):
        """What the kernel returns on ins, as a list (its out_idx outputs; [] for a kernel that writes
        its arguments in place, as TileLang's profiler compares)."""
        out = self.kernel(*ins)
        self._sync()
        return _as_list(out)

    def assert_allclose(self, reference_program, input_tensors=None, atol=1e-2, rtol=1e-2,
                        max_mismatched_ratio=0.01):
        """Runs the kernel and reference_program(*inputs) on the same inputs; every output must agree
        (torch_assert_close with these tolerances; a None reference output is not compared)."""
        ins = self._get_inputs() if input_tensors is None else input_tensors
        ref = _as_list(reference_program(*ins))
        self._sync()
        outs = self._outputs(ins)
        if len(outs) != len(ref):
            raise AssertionError(f"the kernel returned {len(outs)} output(s), the reference {len(ref)}")
        for o, r in zip(outs, ref):
            if o is not None and r is not None:
                torch_assert_close(o, r, atol=atol, rtol=rtol, max_mismatched_ratio=max_mismatched_ratio,
                                   base_name="tilelang", ref_name="ref")

    def manual_assert_close(self, reference_program, input_tensors=None, manual_check_prog=None):
        """manual_check_prog(kernel outputs, reference outputs) decides."""
        ins = self._get_inputs() if input_tensors is None else input_tensors
        ref = _as_list(reference_program(*ins))
        manual_check_prog(self._outputs(ins), ref)

    def assert_consistent(self, repeat=10):
        """Runs the kernel repeat more times on the same inputs: the outputs must not change (races)."""
        import numpy
        from .utils.tensor import _to_numpy
        ins = self._get_inputs()
        first = [_to_numpy(o) for o in self._outputs(ins)]
        for _ in range(repeat):
            for a, b in zip(first, self._outputs(ins)):
                if not numpy.array_equal(a, _to_numpy(b), equal_nan=True):
                    raise AssertionError("the kernel's output changed between runs on the same inputs")

    def run_once(self, func=None):
        return (func or self.kernel)(*self._get_inputs())

    def do_bench(self, func=None, warmup=25, rep=100, n_warmup=0, n_repeat=0, input_tensors=None, backend="event",
                 quantiles=None, return_mode="mean", dynamic_symbolic_constraints=None, device=None,
                 early_stop_baseline=None):
        """Milliseconds per call of func(*inputs) (default: the kernel); module do_bench's semantics."""
        if dynamic_symbolic_constraints:
            raise NotImplementedError("Profiler.do_bench: dynamic_symbolic_constraints is not supported here; "
                                      "pass input_tensors")
        ins = self._get_inputs() if input_tensors is None else input_tensors
        return do_bench(functools.partial(func or self.kernel, *ins), warmup=warmup, rep=rep, _n_warmup=n_warmup,
                        _n_repeat=n_repeat, quantiles=quantiles, backend=backend, return_mode=return_mode,
                        device=device, early_stop_baseline=early_stop_baseline, on_host=not self.on_gpu)


__all__ = ["do_bench", "Profiler", "ProfilerWarning", "TensorSupplyType"]

from ._unsupported import missing_attribute  # noqa: E402

__getattr__ = missing_attribute(__name__)
