"""tilelang_ptx.testing -- TileLang's test helpers: torch_assert_close (PyTorch tensors or NumPy arrays),
set_random_seed, torch_cuda_available."""
import random


def _to_numpy(x):
    mod = type(x).__module__
    if mod.startswith("torch"):
        return x.detach().float().cpu().numpy() if x.dtype.is_floating_point else x.detach().cpu().numpy()
    import numpy
    return numpy.asarray(x)


def torch_assert_close(tensor_a, tensor_b, rtol=1e-2, atol=1e-3, max_mismatched_ratio=0.001, verbose=False,
                       equal_nan=True, check_device=True, check_dtype=False, base_name="LHS",
                       compare_name="RHS"):
    """Asserts |a - b| <= atol + rtol * |b| elementwise except for at most max_mismatched_ratio of the
    elements (TileLang's semantics); AssertionError says how many, the ratio and the worst element."""
    import numpy
    if check_device and type(tensor_a).__module__.startswith("torch") and \
            type(tensor_b).__module__.startswith("torch") and tensor_a.device != tensor_b.device:
        raise AssertionError(f"device mismatch: {base_name} on {tensor_a.device}, "
                             f"{compare_name} on {tensor_b.device}")
    if check_dtype and getattr(tensor_a, "dtype", None) != getattr(tensor_b, "dtype", None):
        raise AssertionError(f"dtype mismatch: {tensor_a.dtype} vs {tensor_b.dtype}")
    a = _to_numpy(tensor_a).astype(numpy.float64)
    b = _to_numpy(tensor_b).astype(numpy.float64)
    if a.shape != b.shape:
        raise AssertionError(f"shape mismatch: {base_name} {a.shape}, {compare_name} {b.shape}")
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
            f"atol={atol} + rtol={rtol}*|{compare_name}| (allowed: {100.0 * max_mismatched_ratio:.4g}%); "
            f"worst at {tuple(int(i) for i in idx)}: {base_name}={a[idx]!r} {compare_name}={b[idx]!r}")


def set_random_seed(seed=42):
    random.seed(seed)
    try:
        import numpy
        numpy.random.seed(seed)
    except ImportError:
        pass
    try:
        import torch
        torch.manual_seed(seed)
    except ImportError:
        pass


def torch_cuda_available():
    """True when PyTorch is importable and sees a CUDA GPU."""
    try:
        import torch
    except ImportError:
        return False
    return torch.cuda.is_available()
