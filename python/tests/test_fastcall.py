"""The C extension tilelang_ptx._fastcall (the hot path of kernel(A, B) with PyTorch tensors) against the
pure-Python path, on the CPU executor: the same outputs (bit for bit) and the same errors, for static and
dynamic output shapes, scalars, several outputs, out_idx None, both output allocations; the calls it
declines go to the pure path.  tests/fake_torch.py stands in for PyTorch where it is missing.
scripts/test-python.sh sets TL_EXPECT_FASTCALL=1: there the extension must have been built and loaded."""
import os
import sys

import numpy as np
import pytest

import tilelang_ptx as tilelang
import tilelang_ptx.kernel as kmod

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from test_jit import add_sub, gemm_dynamic_m, gemm_factory, matmul, saxpy  # noqa: E402


def test_extension_loaded():
    if os.environ.get("TL_EXPECT_FASTCALL") != "1":
        pytest.skip("TL_EXPECT_FASTCALL is not 1 (not the installed package of scripts/test-python.sh)")
    path, _ = kmod.fast_path()
    assert path is not None and path.endswith(".abi3.so"), path
    assert gemm_factory(32, 32, 96, 32, 32, 32, num_stages=1)._fast is not None


needs_ext = pytest.mark.skipif(kmod._fastcall is None, reason="tilelang_ptx._fastcall not built")


@pytest.fixture
def torch(monkeypatch):
    try:
        import torch
    except ImportError:
        import fake_torch as torch
        monkeypatch.setitem(sys.modules, "torch", torch)
    monkeypatch.setattr(kmod, "_torch_tensor", None)
    kmod._use_torch()  # as the first call with a torch tensor does
    return torch


def both(k, *args, **kw):
    """(fast result, pure result, fast-path calls made) of k(*args); each an exception when it raises."""
    def run():
        try:
            return k(*args, **kw)
        except Exception as e:  # noqa: BLE001 - compared below
            return e
    n = kmod._fastcall.calls()
    fast = run()
    used = kmod._fastcall.calls() - n
    plan, k._fast = k._fast, None
    try:
        pure = run()
    finally:
        k._fast = plan
    return fast, pure, used


def same(fast, pure):
    if isinstance(pure, Exception):
        assert type(fast) is type(pure) and str(fast) == str(pure), (fast, pure)
        return
    if pure is None or isinstance(pure, list):
        assert type(fast) is type(pure)
        for f, p in zip(fast or [], pure or []):
            same(f, p)
        return
    assert type(fast) is type(pure) and tuple(fast.shape) == tuple(pure.shape) and fast.dtype == pure.dtype
    np.testing.assert_array_equal(host(fast), host(pure))


def host(x):
    return np.asarray(x.numpy() if hasattr(x, "numpy") else x)


def t(torch, a):
    return torch.from_numpy(np.ascontiguousarray(a))


def strided(torch, a):
    """A non-contiguous torch tensor: every second column of a."""
    return t(torch, a)[:, ::2] if hasattr(torch, "_C") else torch.Tensor(a[:, ::2])


@needs_ext
@pytest.mark.parametrize("alloc", ["empty_like", "new_empty", "empty", "slab"])
def test_fast_equals_pure(torch, alloc):
    prev = kmod.set_output_allocation(alloc)
    try:
        rng = np.random.default_rng(11)
        a = rng.uniform(-1, 1, (32, 96)).astype(np.float16)
        b = rng.uniform(-1, 1, (96, 32)).astype(np.float16)
        k = gemm_factory(32, 32, 96, 32, 32, 32, num_stages=1)  # static output shape
        fast, pure, used = both(k, t(torch, a), t(torch, b))
        same(fast, pure)
        assert used == 1
        np.testing.assert_allclose(fast.numpy().astype(np.float32), a.astype(np.float32) @ b.astype(np.float32),
                                   atol=1e-2, rtol=1e-2)
        # outputs kept across calls stay distinct (no route hands out memory a live output holds)
        kept = [(x, k(t(torch, x), t(torch, b))) for x in (a, -a, 2 * a, a[::-1])]
        assert len({c.data_ptr() for _, c in kept}) == len(kept)
        for x, c in kept:
            np.testing.assert_array_equal(host(c), host(both(k, t(torch, x), t(torch, b))[1]))
        # an output dtype other than the inputs' (new_empty with dtype=)
        k32 = matmul(32, 32, 96, 32, 32, 32, False, False, "float16", "float32", "float32", 1, 128)
        fast, pure, used = both(k32, t(torch, a), t(torch, b))
        same(fast, pure)
        assert used == 1 and fast.dtype == torch.float32
        # a dynamic output dim, bound by input A's dim 0
        kd = gemm_dynamic_m(N=32, K=96, block_M=32, block_N=32, block_K=32, num_stages=2)
        for m in (1, 17, 40):
            fast, pure, used = both(kd, t(torch, a[:1].repeat(m, 0)), t(torch, b))
            same(fast, pure)
            assert used == 1 and tuple(fast.shape) == (m, 32)
        # scalars (Python float and int) between tensors
        x, y = np.arange(1000, dtype=np.float32), np.ones(1000, np.float32)
        ks = saxpy(1000)
        for alpha in (2.5, 3):
            fast, pure, used = both(ks, t(torch, x), t(torch, y), alpha)
            same(fast, pure)
            assert used == 1
        # two outputs (a list), and out_idx None (caller-given outputs, None returned)
        pf = add_sub.func()
        x, y = rng.standard_normal(256).astype(np.float32), rng.standard_normal(256).astype(np.float32)
        fast, pure, used = both(tilelang.compile(pf, out_idx=[2, 3]), t(torch, x), t(torch, y))
        same(fast, pure)
        assert used == 1 and len(fast) == 2
        kn = tilelang.compile(pf, out_idx=None)
        C, D = t(torch, np.zeros(256, np.float32)), t(torch, np.zeros(256, np.float32))
        assert kn(t(torch, x), t(torch, y), C, D) is None
        np.testing.assert_array_equal(C.numpy(), x + y)
        np.testing.assert_array_equal(D.numpy(), x - y)
    finally:
        kmod.set_output_allocation(prev)


@needs_ext
def test_fast_errors_equal_pure(torch):
    k = gemm_factory(32, 32, 96, 32, 32, 32, num_stages=1)
    A = t(torch, np.zeros((32, 96), np.float16))
    B = t(torch, np.zeros((96, 32), np.float16))
    # rejected by tl_kernel_call inside the fast path: the same ArgumentError naming the parameter
    for args in [(A, t(torch, np.zeros((96, 32), np.float32))), (t(torch, np.zeros((16, 96), np.float16)), B),
                 (strided(torch, np.zeros((32, 192), np.float16)), B)]:
        fast, pure, used = both(k, *args)
        assert isinstance(pure, tilelang.ArgumentError), pure
        same(fast, pure)
        assert used == 0
    # declined by the fast path (count, a non-tensor, NumPy, a bad scalar): the pure path's errors/results
    for args in [(A,), (A, B, A), (A, 3), (np.zeros((32, 96), np.float16), B)]:
        fast, pure, used = both(k, *args)
        same(fast, pure)
        assert used == 0
    ks = saxpy(1000)
    x = t(torch, np.ones(1000, np.float32))
    fast, pure, used = both(ks, x, x, "two")
    assert isinstance(pure, tilelang.ArgumentError) and used == 0
    same(fast, pure)
    fast, pure, used = both(ks, x, x, 1.0, stream=None)
    same(fast, pure)
    assert used == 1


@needs_ext
def test_threads(torch):
    """Threads calling one kernel at once (the C path releases the GIL around the CPU executor; a call
    meeting the plan in use takes the pure path): every result right."""
    import threading
    k = saxpy(1000)
    errors = []

    def work(seed):
        rng = np.random.default_rng(seed)
        for _ in range(20):
            x, y = rng.standard_normal(1000).astype(np.float32), rng.standard_normal(1000).astype(np.float32)
            z = k(t(torch, x), t(torch, y), 2.0)
            if not np.allclose(host(z), np.float32(2.0) * x + y, rtol=1e-6, atol=1e-6):
                errors.append(seed)
    threads = [threading.Thread(target=work, args=(s,)) for s in range(4)]
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    assert not errors
