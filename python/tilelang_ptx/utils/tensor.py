"""tilelang.utils.tensor -- test inputs and comparisons, with TileLang's names and semantics:
TensorSupplyType, get_tensor_supply(supply_type) (a function of a KernelParam that makes a tensor of its
shape and dtype: PyTorch on the current CUDA device, or a NumPy array where there is no GPU -- the CPU
executor), torch_assert_close (PyTorch tensors or NumPy arrays: at most max_mismatched_ratio of the
elements may differ by more than atol + rtol * |ref|), map_torch_type (dtype name -> torch.dtype)."""
import enum


class TensorSupplyType(enum.Enum):
    Integer = 1
    Uniform = 2
    Normal = 3
    Randn = 4
    Zero = 5
    One = 6
    Auto = 7


# int4 / uint4: torch has none; their tensors are int8 / uint8 storage, two values per byte (as TileLang)
_TORCH_NAMES = {"float8_e4m3": "float8_e4m3fn", "half": "float16", "float": "float32", "double": "float64",
                "int4": "int8", "uint4": "uint8"}


def map_torch_type(name):
    """The torch.dtype of dtype name (a str, T.float16, a DataType); AttributeError naming it when
    PyTorch has none."""
    import torch
    s = str(name)
    s = _TORCH_NAMES.get(s, s)
    try:
        return getattr(torch, s)
    except AttributeError:
        raise AttributeError(f"map_torch_type: PyTorch has no dtype {s!r}") from None


def is_float8_dtype(dtype):
    """Whether dtype (a torch.dtype, a name) is one of the float8 formats."""
    return "float8" in str(dtype)


def fp8_remove_negative_zeros_(tensor):
    """Replaces float8 negative zeros (the byte 0x80) by +0 in place (TileLang's helper; PyTorch)."""
    import torch
    bits = tensor.view(torch.uint8)
    bits[bits == 0x80] = 0
    return tensor


def _kind(dtype):
    d = str(dtype)
    if d.startswith("float8"):
        return "float8"
    if d.startswith("float4"):
        return "float4"
    if d == "bool":
        return "bool"
    if d.startswith("uint"):
        return "uint"
    if d.startswith(("float", "bfloat")):
        return "float"
    return "int"


def get_tensor_supply(supply_type=TensorSupplyType.Integer, on_gpu=None):
    """A function param -> tensor (param: a KernelParam with .shape and .dtype, static shape).  on_gpu:
    PyTorch CUDA tensors (True), NumPy arrays (False), or whichever the machine has (None)."""
    if on_gpu is None:
        from ..profiler import _cuda_torch
        on_gpu = _cuda_torch() is not None

    def check(param):
        shape = getattr(param, "shape", None)
        if not shape and shape != []:
            raise ValueError(f"tensor supply: parameter {getattr(param, 'name', '?')!r} has no shape")
        if any(not isinstance(d, int) for d in shape):
            raise ValueError(f"tensor supply: parameter {param.name!r} has a dynamic shape {shape}; pass the "
                             "inputs yourself (input_tensors= / set_autotune_inputs)")
        return list(shape), str(param.dtype)

    def torch_tensor(param):
        import torch
        shape, dt = check(param)
        dtype = map_torch_type(dt)
        kind, st = _kind(dt), supply_type
        dev = "cuda"
        if st == TensorSupplyType.Zero:
            return torch.zeros(shape, device=dev, dtype=dtype)
        if st == TensorSupplyType.One or (dt == "int8" and st in (TensorSupplyType.Uniform, TensorSupplyType.Normal)):
            return torch.ones(shape, device=dev, dtype=dtype)
        if st in (TensorSupplyType.Auto, TensorSupplyType.Integer):
            if kind == "uint":
                return torch.randint(0, 3, shape, device=dev, dtype=dtype)
            if kind == "float8":
                return torch.randint(-128, 128, shape, device=dev, dtype=torch.int8).to(dtype)
            if kind in ("bool", "float4"):
                return torch.randint(0, 2 if kind == "bool" else 16, shape, device=dev, dtype=dtype)
            if st == TensorSupplyType.Auto and dt in ("float16", "float32", "bfloat16"):
                return torch.empty(shape, device=dev, dtype=dtype).uniform_(-1.0, 1.0)
            return torch.randint(-2, 3, shape, device=dev, dtype=dtype)
        if st == TensorSupplyType.Uniform:
            return torch.empty(shape, device=dev, dtype=torch.float32).uniform_(-1.0, 1.0).to(dtype)
        if st == TensorSupplyType.Normal:
            return torch.empty(shape, device=dev, dtype=torch.float32).normal_(-1.0, 1.0).to(dtype)
        if st == TensorSupplyType.Randn:
            return torch.randn(shape, device=dev).to(dtype)
        raise NotImplementedError(st)

    def numpy_array(param):
        import numpy
        shape, dt = check(param)
        kind, st = _kind(dt), supply_type
        np_dt = "uint8" if kind == "float8" else dt  # NumPy has no float8: its bytes
        if kind == "float" and dt not in ("float16", "float32", "float64"):
            raise ValueError(f"tensor supply: NumPy has no dtype {dt!r} (parameter {param.name!r})")
        rng = numpy.random.default_rng()
        if st == TensorSupplyType.Zero:
            return numpy.zeros(shape, dtype=np_dt)
        if st == TensorSupplyType.One or (dt == "int8" and st in (TensorSupplyType.Uniform, TensorSupplyType.Normal)):
            return numpy.ones(shape, dtype=np_dt)
        if st in (TensorSupplyType.Auto, TensorSupplyType.Integer):
            if kind in ("uint", "bool"):
                return rng.integers(0, 2 if kind == "bool" else 3, shape).astype(np_dt)
            if kind == "float8":
                return rng.integers(0, 256, shape).astype(np_dt)
            if st == TensorSupplyType.Auto and kind == "float":
                return rng.uniform(-1.0, 1.0, shape).astype(np_dt)
            return rng.integers(-2, 3, shape).astype(np_dt)
        if st == TensorSupplyType.Uniform:
            return rng.uniform(-1.0, 1.0, shape).astype(np_dt)
        if st == TensorSupplyType.Normal:
            return rng.normal(-1.0, 1.0, shape).astype(np_dt)
        if st == TensorSupplyType.Randn:
            return rng.standard_normal(shape).astype(np_dt)
        raise NotImplementedError(st)

    return torch_tensor if on_gpu else numpy_array


def _to_numpy(x):
    mod = type(x).__module__
    if mod.startswith("torch"):
        x = x.detach()
        if x.dtype.is_floating_point:
            x = x.float()
        return x.cpu().numpy()
    import numpy
    return numpy.asarray(x)


def torch_assert_close(tensor_a, tensor_b, rtol=1e-2, atol=1e-3, max_mismatched_ratio=0.001, verbose=False,
                       equal_nan=True, check_device=True, check_dtype=True, check_layout=True, check_stride=False,
                       base_name="LHS", ref_name="RHS", compare_name=None):
    """Asserts |a - b| <= atol + rtol * |b| elementwise except for at most max_mismatched_ratio of the
    elements (TileLang's semantics); AssertionError says how many, the ratio and the worst element.
    check_device / check_dtype compare two PyTorch tensors' device and dtype (NumPy arrays are compared by
    value only, whatever their dtypes)."""
    import numpy
    ref_name = compare_name or ref_name
    ta = type(tensor_a).__module__.startswith("torch")
    tb = type(tensor_b).__module__.startswith("torch")
    if check_device and ta and tb and tensor_a.device != tensor_b.device:
        raise AssertionError(f"device mismatch: {base_name} on {tensor_a.device}, {ref_name} on {tensor_b.device}")
    if check_dtype and ta and tb and tensor_a.dtype != tensor_b.dtype:
        raise AssertionError(f"dtype mismatch: {base_name} {tensor_a.dtype}, {ref_name} {tensor_b.dtype}")
    a = _to_numpy(tensor_a).astype(numpy.float64)
    b = _to_numpy(tensor_b).astype(numpy.float64)
    if a.shape != b.shape:
        raise AssertionError(f"shape mismatch: {base_name} {a.shape}, {ref_name} {b.shape}")
    diff = numpy.abs(a - b)
    bad = ~(diff <= atol + rtol * numpy.abs(b))
    if equal_nan:
        bad &= ~(numpy.isnan(a) & numpy.isnan(b))
    n_bad, total = int(bad.sum()), max(a.size, 1)
    if verbose:
        print(f"torch_assert_close: {n_bad} of {a.size} elements mismatch")
    if n_bad / total > max_mismatched_ratio:
        idx = numpy.unravel_index(int(numpy.nanargmax(numpy.where(bad, diff, -1))), a.shape) if a.size else ()
        raise AssertionError(
            f"{n_bad} of {a.size} elements ({100.0 * n_bad / total:.4g}%) differ by more than "
            f"atol={atol} + rtol={rtol}*|{ref_name}| (allowed: {100.0 * max_mismatched_ratio:.4g}%); "
            f"worst at {tuple(int(i) for i in idx)}: {base_name}={a[idx]!r} {ref_name}={b[idx]!r}")

from .._unsupported import missing_attribute  # noqa: E402

__getattr__ = missing_attribute(__name__)
