# tilelang.autotuner on the CPU executor (NumPy): @tilelang.autotune over a @tilelang.jit factory really
# searches (every configuration compiled on a thread pool, checked, timed: the times are CPU times), skips
# configurations that do not compile or whose output differs (reported on stderr), keeps the best in the
# disk cache and takes it from there the second time; AutoTuner.from_kernel(...).run() is the same search.
import os
import sys

import numpy as np
import pytest

import tilelang_ptx as tilelang
import tilelang_ptx.language as T
from tilelang_ptx.autotuner import AutoTuner, autotune, set_autotune_inputs
from tilelang_ptx.jit import jit as bare_jit
from tilelang_ptx.profiler import ProfilerWarning

import test_jit  # noqa: E402  (python/tests: its eager-style kernel)

pytestmark = pytest.mark.filterwarnings("ignore::tilelang_ptx.profiler.ProfilerWarning")

CONFIGS = [{"block_M": bm, "block_N": bn} for bm in (16, 32) for bn in (32, 64)]


@autotune(configs=CONFIGS, warmup=1, rep=2)
@tilelang.jit(out_idx=-1, target="cpu")
def scale_add(M, N, block_M=16, block_N=32, dtype="float32"):
    @T.prim_func
    def main(A: T.Tensor((M, N), dtype), B: T.Tensor((M, N), dtype), C: T.Tensor((M, N), dtype)):
        with T.Kernel(T.ceildiv(N, block_N), T.ceildiv(M, block_M), threads=64) as (bx, by):
            for i, j in T.Parallel(block_M, block_N):
                C[by * block_M + i, bx * block_N + j] = A[by * block_M + i, bx * block_N + j] * 2.0 + \
                    B[by * block_M + i, bx * block_N + j]
    return main


@pytest.fixture
def cache_dir(tmp_path, monkeypatch):
    monkeypatch.setenv("TL_CACHE", "1")
    monkeypatch.setenv("TL_CACHE_DIR", str(tmp_path))
    return tmp_path


def test_autotune_searches_and_caches(cache_dir, capfd):
    tilelang.clear_cache()
    k = scale_add(64, 128)
    err = capfd.readouterr().err
    assert "tune: compiled 4/4, timed 4/4, failed 0, best" in err  # libtilelang's tuner's progress line
    assert k.config in CONFIGS and k.latency > 0
    A = np.random.default_rng(1).standard_normal((64, 128)).astype(np.float32)
    np.testing.assert_allclose(k(A, A), 3 * A, rtol=1e-6)
    entries = [f for f in os.listdir(cache_dir) if f.endswith(".tlt")]  # its tune cache
    assert len(entries) == 1
    # a new decorator instance (as a new process has): the choice comes from the disk cache, nothing timed
    again = autotune(configs=CONFIGS, warmup=1, rep=2)(scale_add.factory)
    k2 = again(64, 128)
    assert capfd.readouterr().err == ""
    assert k2.config == k.config and k2.latency == k.latency
    # other arguments: another search
    again(32, 128)
    assert "compiled 4/4" in capfd.readouterr().err
    assert len([f for f in os.listdir(cache_dir) if f.endswith(".tlt")]) == 2


def test_given_tunables_compile_directly(capfd):
    k = scale_add(64, 128, block_M=32, block_N=64)
    assert capfd.readouterr().err == ""  # no search
    assert not hasattr(k, "config")


def test_failing_configs_are_reported_and_skipped(capfd):
    """A tile larger than the shared memory limit does not compile: that configuration is reported and
    skipped, the search goes on."""
    @tilelang.jit(out_idx=-1, target="cpu")
    def copy(M, N, block_M=16, dtype="float32"):
        @T.prim_func
        def main(A: T.Tensor((M, N), dtype), C: T.Tensor((M, N), dtype)):
            with T.Kernel(T.ceildiv(M, block_M), threads=64) as bx:
                S = T.alloc_shared((block_M, N), dtype)
                T.copy(A[bx * block_M, 0], S)
                T.copy(S, C[bx * block_M, 0])
        return main

    tuner = autotune(configs=[{"block_M": 16}, {"block_M": 1 << 16}], warmup=1, rep=1)(copy)
    k = tuner(64, 1024)
    err = capfd.readouterr().err
    assert "tune: config #1 (block_M=65536) skipped: compile:" in err
    assert "compiled 2/2, timed 1/2, failed 1" in err
    assert k.config == {"block_M": 16}


def test_mismatching_configs_are_skipped(capfd):
    """Without ref_prog, each configuration's output must agree with the first one that ran."""
    @tilelang.jit(out_idx=-1, target="cpu")
    def maybe_wrong(M, wrong=0):
        @T.prim_func
        def main(A: T.Tensor((M,), "float32"), C: T.Tensor((M,), "float32")):
            with T.Kernel(T.ceildiv(M, 32), threads=32) as bx:
                for i in T.Parallel(32):
                    C[bx * 32 + i] = A[bx * 32 + i] + wrong
        return main

    with set_autotune_inputs(np.ones(64, dtype=np.float32)):
        k = autotune(configs=[{"wrong": 0}, {"wrong": 1}, {"wrong": 0.0}], warmup=1, rep=1)(maybe_wrong)(64)
    err = capfd.readouterr().err
    assert "skipped: measure: AssertionError" in err and "timed 2/3, failed 1" in err
    assert k.config["wrong"] == 0


def test_autotuner_builder_with_ref_prog(capfd):
    M, N = 32, 64

    def kernel(block_M=None, block_N=None):
        @T.prim_func
        def main(A: T.Tensor((M, N), "float32"), B: T.Tensor((M, N), "float32"), C: T.Tensor((M, N), "float32")):
            with T.Kernel(T.ceildiv(N, block_N), T.ceildiv(M, block_M), threads=64) as (bx, by):
                for i, j in T.Parallel(block_M, block_N):
                    C[by * block_M + i, bx * block_N + j] = A[by * block_M + i, bx * block_N + j] - \
                        B[by * block_M + i, bx * block_N + j]
        return main

    result = (AutoTuner.from_kernel(kernel=kernel, configs=CONFIGS)
              .set_compile_args(out_idx=[-1], target="cpu")
              .set_profile_args(supply_type=tilelang.TensorSupplyType.Normal, ref_prog=lambda A, B: A - B)
              .run(warmup=1, rep=2))
    assert result.config in CONFIGS and result.latency > 0 and result.kernel.config == result.config
    assert result.ref_latency > 0 and result.kernel.ref_latency == result.ref_latency
    assert "compiled 4/4, timed 4/4, failed 0" in capfd.readouterr().err
    # a reference that disagrees: every configuration fails its check, the search says so
    with pytest.raises(RuntimeError, match="no configuration of 4 compiled, ran and passed the check"):
        (AutoTuner.from_kernel(kernel=kernel, configs=CONFIGS).set_compile_args(out_idx=[-1], target="cpu")
         .set_profile_args(ref_prog=lambda A, B: A + B).run(warmup=1, rep=1))
    assert "differ by more than" in capfd.readouterr().err


def test_compiles_run_on_the_tuners_pool():
    """The candidates compile on libtilelang's pool (tl_kernel_tune) with the workers asked for."""
    tuner = AutoTuner(scale_add.factory, CONFIGS).set_kernel_parameters((64, 128), {})
    tuner.workers = 3
    r = tuner.run(warmup=1, rep=1)
    assert tuner.last_run == {"groups": 1, "workers": 3, "cache_hit": False} and r.config in CONFIGS


def test_config_keys_must_be_parameters():
    with pytest.raises(ValueError, match=r"config keys \['nope'\] are not parameters of 'scale_add'"):
        autotune(configs=[{"nope": 1}])(scale_add.factory)(16, 64)


def test_cpu_times_are_announced(recwarn):
    import tilelang_ptx.profiler as prof
    monkey = prof._said_cpu[:]
    prof._said_cpu.clear()
    try:
        ms = prof.do_bench(lambda: sum(range(1000)), warmup=1, rep=2)
        assert ms > 0
        assert any(issubclass(w.category, ProfilerWarning) and "CPU times" in str(w.message) for w in recwarn)
    finally:
        prof._said_cpu[:] = monkey


# test_jit.py's eager-style kernel (its parameters are the tensors), tuned over its block size
scale_eager = autotune(configs=[{"block": 32}, {"block": 64}, {"block": 128}], warmup=1, rep=2)(
    test_jit.scale_eager)


# examples/gemv's get_autotuned_kernel: an eager kernel under the @autotune decorator, its tunables
# defaulting to None, its T.const sizes given to .compile by keyword (no tensors), @jit read under a bare
# name (`from tilelang import jit`: the kernel's text imports it, it is no helper stub)
@autotune(configs=[{"block": 32}, {"block": 64}], warmup=1, rep=2)
@bare_jit(target="cpu")
def scale_eager_kw(A, block=None):
    N = T.const("N")
    A: T.Tensor((N,), "float32")
    B = T.empty((N,), "float32")
    with T.Kernel(T.ceildiv(N, block), threads=block) as bx:
        for i in T.Parallel(block):
            B[bx * block + i] = A[bx * block + i] * 2.0
    return B


def test_autotune_eager_compile_by_keyword(capfd):
    """.compile(N=...) on an autotuned eager kernel binds the T.const by keyword (TileLang's
    get_autotuned_kernel.compile(N=N, K=K)); the candidates run on generated inputs; the kernel it
    returns carries .config and runs on tensors of that size."""
    k = scale_eager_kw.compile(N=256)
    assert "compiled 2/2, timed 2/2, failed 0" in capfd.readouterr().err
    assert k.config in ({"block": 32}, {"block": 64})
    A = np.arange(256, dtype=np.float32)
    np.testing.assert_array_equal(k(A), 2 * A)
    assert scale_eager_kw.compile(N=256) is k  # remembered


def test_autotune_eager_style(capfd):
    """An eager-style kernel: the call searches its configs on the call's tensors, runs the best and
    returns its outputs; the same shapes again search nothing; .compile gives the kernel."""
    A = np.arange(512, dtype=np.float32)
    np.testing.assert_array_equal(scale_eager(A), 2 * A)
    assert "compiled 3/3, timed 3/3, failed 0" in capfd.readouterr().err
    np.testing.assert_array_equal(scale_eager(A + 1, factor=3.0), 3 * (A + 1))
    assert "compiled 3/3" in capfd.readouterr().err  # factor is not tuned: another search
    np.testing.assert_array_equal(scale_eager(A + 2), 2 * (A + 2))
    assert capfd.readouterr().err == ""  # same shapes and scalars: the choice is remembered
    k = scale_eager.compile(A)
    assert k.config in ([{"block": 32}, {"block": 64}, {"block": 128}]) and k.latency > 0
    np.testing.assert_array_equal(scale_eager(A, block=32), 2 * A)  # a tunable given: no search
    assert capfd.readouterr().err == ""
