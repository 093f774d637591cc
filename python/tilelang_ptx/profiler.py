"""profiler.py -- kernel.get_profiler(): assert_allclose against a reference program and do_bench
(CUDA events: warm-up launches, then the median of timed launches; on the host, perf_counter).
Inputs are generated per TensorSupplyType: PyTorch CUDA tensors when PyTorch and a GPU are present
and the kernel was not compiled for the CPU, else NumPy arrays (the CPU executor)."""
import enum
import statistics
import time


class TensorSupplyType(enum.Enum):
    Integer = 1
    Uniform = 2
    Normal = 3
    Randn = 4
    Zero = 5
    One = 6
    Auto = 7


def _use_torch(kernel):
    if kernel.get_kernel_source() == "":
        return False  # compiled for the CPU executor only
    try:
        import torch
        return torch.cuda.is_available()
    except ImportError:
        return False


class Profiler:
    def __init__(self, kernel, supply=None):
        self.kernel = kernel
        self.supply = supply or TensorSupplyType.Auto
        self.torch = _use_torch(kernel)
        self._inputs = None

    def _make(self, p):
        if not p.is_tensor:
            raise ValueError(f"profiler: parameter '{p.name}' is a scalar; call the kernel yourself")
        if any(not isinstance(d, int) for d in p.shape):
            raise ValueError(f"profiler: parameter '{p.name}' has dynamic dims {p.shape}")
        st = self.supply
        is_float = p.dtype.startswith(("float", "bfloat"))
        if self.torch:
            import torch
            dt = getattr(torch, p.dtype)
            if st == TensorSupplyType.Zero:
                return torch.zeros(p.shape, dtype=dt, device="cuda")
            if st == TensorSupplyType.One:
                return torch.ones(p.shape, dtype=dt, device="cuda")
            if not is_float or st == TensorSupplyType.Integer:
                return torch.randint(-2, 3, p.shape, device="cuda").to(dt)
            if st == TensorSupplyType.Uniform:
                return torch.empty(p.shape, dtype=dt, device="cuda").uniform_(-1, 1)
            return torch.randn(p.shape, device="cuda").to(dt)
        import numpy
        rng = numpy.random.default_rng(0)
        if st == TensorSupplyType.Zero:
            return numpy.zeros(p.shape, dtype=p.dtype)
        if st == TensorSupplyType.One:
            return numpy.ones(p.shape, dtype=p.dtype)
        if not is_float or st == TensorSupplyType.Integer:
            return rng.integers(-2, 3, p.shape).astype(p.dtype)
        if st == TensorSupplyType.Uniform:
            return rng.uniform(-1, 1, p.shape).astype(p.dtype)
        return rng.standard_normal(p.shape).astype(p.dtype)

    def _get_inputs(self):
        if self._inputs is None:
            self._inputs = [self._make(self.kernel.params[i]) for i in self.kernel._inputs]
        return self._inputs

    def assert_allclose(self, reference_program, atol=1e-2, rtol=1e-2, max_mismatched_ratio=0.01):
        """Runs the kernel and reference_program(*inputs) on the same inputs; compares every output."""
        from .testing import torch_assert_close
        ins = self._get_inputs()
        out = self.kernel(*ins)
        ref = reference_program(*ins)
        outs = out if isinstance(out, list) else [out] if out is not None else list(ins)
        refs = list(ref) if isinstance(ref, (list, tuple)) else [ref]
        for o, r in zip(outs, refs):
            torch_assert_close(o, r, atol=atol, rtol=rtol, max_mismatched_ratio=max_mismatched_ratio)

    def do_bench(self, func=None, warmup=25, rep=100, n_warmup=None, n_repeat=None, input_tensors=None,
                 **_ignored):
        """Median time in ms of func(*inputs) (default: the kernel) over `rep` timed calls after
        `warmup` untimed ones; CUDA events around each call on the current stream."""
        fn = func or self.kernel
        ins = input_tensors or self._get_inputs()
        warmup = n_warmup if n_warmup is not None else warmup
        rep = max(1, n_repeat if n_repeat is not None else rep)
        for _ in range(warmup):
            fn(*ins)
        if self.torch:
            import torch
            ev = [(torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True))
                  for _ in range(rep)]
            torch.cuda.synchronize()
            for s, e in ev:
                s.record()
                fn(*ins)
                e.record()
            torch.cuda.synchronize()
            return statistics.median(s.elapsed_time(e) for s, e in ev)
        ts = []
        for _ in range(rep):
            t0 = time.perf_counter()
            fn(*ins)
            ts.append((time.perf_counter() - t0) * 1e3)
        return statistics.median(ts)
