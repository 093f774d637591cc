# The host-side names TileLang's programs import (tilelang.*), on the CPU executor with NumPy: each is
# imported under TileLang's module path and asserted on a real value.  Names this project does not provide
# import and raise NotImplementedError / AttributeError / ModuleNotFoundError naming themselves.
import importlib
import os
import warnings

import numpy as np
import pytest

import tilelang_ptx as tilelang
import tilelang_ptx.language as T
from tilelang_ptx import _alias

HERE = os.path.dirname(os.path.abspath(__file__))
EXAMPLES = os.path.join(HERE, "..", "..", "examples")


def tl(name):
    """The module that `import tilelang.<name>` gives a TileLang file run by this package."""
    return _alias.import_ours(f"tilelang.{name}" if name else "tilelang")


@tilelang.jit(out_idx=-1)
def add(M=32, N=64, dtype=T.float32):
    @T.prim_func
    def main(A: T.Tensor((M, N), dtype), B: T.Tensor((M, N), dtype), C: T.Tensor((M, N), dtype)):
        with T.Kernel(T.ceildiv(N, 32), T.ceildiv(M, 32), threads=128) as (bx, by):
            for i, j in T.Parallel(32, 32):
                C[by * 32 + i, bx * 32 + j] = A[by * 32 + i, bx * 32 + j] + B[by * 32 + i, bx * 32 + j]
    return main


def test_top_level_names():
    m = tl("")
    assert m is tilelang
    assert m.cdiv(7, 2) == 4 and m.cdiv(8, 2) == 4
    assert [m.next_power_of_2(x) for x in (0, 1, 3, 64, 65)] == [1, 1, 4, 64, 128]
    assert tl("math").next_power_of_2(100) == 128
    assert m.TensorSupplyType.Randn.value == 4 and m.JITKernel is tilelang.kernel.JITKernel
    with pytest.raises(AttributeError, match="tilelang.no_such_name: this project .* does not provide it"):
        m.no_such_name  # noqa: B018


def test_dtype_objects_wherever_strings():
    """T.float16 (and the other dtype objects) are accepted where a dtype string is: in a factory's
    arguments, in tvm.DataType, in map_torch_type; DataType round-trips its string."""
    A = np.ones((32, 64), dtype=np.float16)
    C = add(32, 64, T.float16)(A, A)
    assert C.dtype == np.float16 and (C == 2).all()
    DataType = tl("tvm").DataType
    assert tilelang.DataType is DataType
    for s, bits, lanes in [("float16", 16, 1), ("int8x4", 8, 4), ("bfloat16", 16, 1), ("float8_e4m3fn", 8, 1),
                           ("uint32", 32, 1), ("bool", 1, 1), ("float32x2", 32, 2)]:
        d = DataType(s)
        assert (str(d), d.bits, d.lanes) == (s, bits, lanes)
    assert DataType(T.float16).bits == 16 and DataType("float16") == T.float16
    assert DataType("half") == "float16"
    with pytest.raises(ValueError, match="cannot parse dtype"):
        DataType("float-16")
    dt = tl("language.dtypes")
    assert dt.dtype("bfloat16") == T.bfloat16 and dt.dtype(np.float32) == "float32"
    assert isinstance(dt._TORCH_DTYPE_TO_STR, dict)
    # T.dtype on the host, as TileLang's dequantize examples check their arguments
    assert T.dtype("bfloat16") in [T.float16, T.bfloat16] and T.dtype(T.int8) == T.int8
    assert T.dtype("float32") not in [T.float16, T.bfloat16]
    assert T.dtype("uint") in [T.int, T.uint] and T.dtype("int") != T.uint and T.dtype("half") == "float16"
    # TileLang's C-style aliases are the dtypes they name: mxfp.py asserts `source_format in [T.int, T.uint]`
    # with source_format=T.uint32
    assert T.uint32 in [T.int, T.uint] and T.int32 == T.int and T.float16 == T.half and T.float64 == T.double
    assert T.float == T.float32 and T.int8 not in [T.int, T.uint]


def test_language_is_a_package():
    fp8 = tl("language.fp8")
    assert fp8.determine_fp8_type() == "float8_e4m3fn" and fp8.determine_fp8_type("e5m2") == "float8_e5m2"
    with pytest.raises(ValueError, match="e4m3"):
        fp8.determine_fp8_type("e3m4")
    assert tl("language").fp8 is fp8


def test_pass_config_keys():
    """Every key of TileLang's PassConfigKey exists; a key without an effect here compiles with one
    CompileWarning naming it (once per process), an unknown key is refused."""
    K = tl("transform").PassConfigKey
    assert tilelang.PassConfigKey is K
    assert K.TL_PTXAS_REGISTER_USAGE_LEVEL == "tl.ptxas_register_usage_level"
    assert K.TL_ENABLE_PTXAS_VERBOSE_OUTPUT == "tl.enable_ptxas_verbose_output"
    assert K.TL_DISABLE_WARP_SPECIALIZED == "tl.disable_warp_specialized"
    assert len([k for k in vars(K) if k.isupper()]) >= 65
    tilelang.clear_cache()
    with pytest.warns(tilelang.CompileWarning, match="'tl.ptxas_register_usage_level' .* has no effect"):
        tilelang.compile(add.func(32, 32), out_idx=-1, pass_configs={K.TL_PTXAS_REGISTER_USAGE_LEVEL: 10})
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # the second time: no warning
        tilelang.compile(add.func(32, 64), out_idx=-1, pass_configs={K.TL_PTXAS_REGISTER_USAGE_LEVEL: 10})
    with pytest.raises(ValueError, match="'tl.bogus'"):
        tilelang.compile(add.func(32, 32), out_idx=-1, pass_configs={"tl.bogus": True})
    assert tl("transform").simplify_prim_func(add.func) is add.func


@pytest.mark.parametrize("spelling", ["auto", "cuda", "nvidia", {"kind": "cuda", "arch": "sm_90a"}, "sm_80",
                                      "cuda -arch=sm_90a", "nvidia/nvidia-h100", "nvidia/nvidia-a100", "TARGET"])
def test_target_spellings(spelling):
    if spelling == "TARGET":
        spelling = tl("tvm").target.Target("cuda -arch=sm_89")
    k = tilelang.compile(add.func(32, 64), out_idx=-1, target=spelling)
    src = k.get_kernel_source()
    assert ".entry" in src
    expect = {"sm_80": "sm_80", "nvidia/nvidia-a100": "sm_80", "nvidia/nvidia-h100": "sm_90a",
              "cuda -arch=sm_90a": "sm_90a"}.get(spelling if isinstance(spelling, str) else "")
    if isinstance(spelling, dict):
        expect = "sm_90a"
    if not isinstance(spelling, (str, dict)):
        expect = "sm_89"
    if expect:
        assert f".target {expect}" in src


def test_bad_targets_name_the_spelling():
    for bad, msg in [({"kind": "hip"}, "kind 'hip'"), ("nvidia/nvidia-x9000", "nvidia-x9000"), ("sm_70", "sm_70")]:
        with pytest.raises(ValueError, match=msg):
            tilelang.compile(add.func(32, 64), out_idx=-1, target=bad)


def test_factory_and_kernel_surface():
    k = add(32, 64)
    assert add.out_idx == -1 and k.out_idx == [2]
    assert [p.name for p in add.params] == ["A", "B", "C"] and add.params[2].is_output
    assert add.get_kernel_source(32, 64) == k.get_kernel_source() and ".entry" in k.get_kernel_source()
    assert add.get_tir(32, 64).__name__ == "main"
    prof = add.get_profiler(32, 64, tensor_supply_type=tilelang.TensorSupplyType.One)
    out = prof.run_once()
    assert (out == 2).all()
    prof.assert_allclose(lambda A, B: A + B, atol=0, rtol=0)
    with pytest.raises(AssertionError, match="differ by more than"):
        prof.assert_allclose(lambda A, B: A - B)
    prof.assert_consistent(repeat=2)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", tilelang.profiler.ProfilerWarning)  # test_autotuner checks it
        ms = prof.do_bench(n_warmup=1, n_repeat=3)
    assert ms > 0
    q = prof.do_bench(n_warmup=1, n_repeat=5, quantiles=[0.2, 0.8])
    assert len(q) == 2 and q[0] <= q[1]


def test_profiler_do_bench_module_function():
    do_bench = tl("profiler").do_bench
    calls = []
    warnings.simplefilter("ignore", tilelang.profiler.ProfilerWarning)
    ms = do_bench(lambda: calls.append(1), _n_warmup=2, _n_repeat=7)
    assert ms >= 0 and len(calls) == 1 + 5 + 2 + 7  # first call, estimate, warm-up, timed
    for mode in ("min", "max", "mean", "median"):
        assert do_bench(lambda: None, _n_warmup=1, _n_repeat=3, return_mode=mode) >= 0
    with pytest.raises(ValueError, match="return_mode"):
        do_bench(lambda: None, return_mode="avg")


def test_tensor_supply_and_assert_close():
    ut = tl("utils.tensor")
    assert tl("utils").torch_assert_close is ut.torch_assert_close
    p = tilelang.KernelParam("A", "float16", [4, 8], True, False)
    for st, check in [(ut.TensorSupplyType.Zero, lambda a: (a == 0).all()),
                      (ut.TensorSupplyType.One, lambda a: (a == 1).all()),
                      (ut.TensorSupplyType.Integer, lambda a: set(np.unique(a)) <= {-2, -1, 0, 1, 2}),
                      (ut.TensorSupplyType.Uniform, lambda a: (abs(a) <= 1).all()),
                      (ut.TensorSupplyType.Auto, lambda a: (abs(a) <= 1).all()),
                      (ut.TensorSupplyType.Randn, lambda a: a.std() > 0.1)]:
        a = ut.get_tensor_supply(st, on_gpu=False)(p)
        assert a.shape == (4, 8) and a.dtype == np.float16 and check(a), st
    with pytest.raises(ValueError, match="dynamic shape"):
        ut.get_tensor_supply(on_gpu=False)(tilelang.KernelParam("A", "float32", ["m", 8], True, False))
    a = np.zeros(1000)
    b = a.copy()
    b[:5] = 1
    ut.torch_assert_close(a, b, atol=1e-3, rtol=0, max_mismatched_ratio=0.005)
    with pytest.raises(AssertionError, match=r"5 of 1000 elements \(0.5%\)"):
        ut.torch_assert_close(a, b, atol=1e-3, rtol=0, max_mismatched_ratio=0.004)
    assert tl("testing").torch_assert_close is ut.torch_assert_close


def test_testing_helpers():
    t = tl("testing")
    t.set_random_seed(7)
    x = np.random.rand()
    t.set_random_seed(7)
    assert np.random.rand() == x
    for deco in (t.requires_cuda, t.requires_cuda_compute_version_ge(8, 0), t.requires_package("numpy"),
                 t.requires_package("no_such_package_xyz"), t.requires_gfx950):
        assert callable(deco(lambda: 1))
    assert t.requires_package("numpy")(lambda: 5)() == 5

    def skip_marks(f):
        return [(m.args[0], m.kwargs.get("reason", "")) for m in getattr(f, "pytestmark", []) if m.name == "skipif"]
    assert skip_marks(t.requires_package("numpy")(lambda: 5)) == [(False, "needs the package(s) ")]
    # pytest skips these; a direct call runs them, as TileLang's (TVM's) marks do (an example's main()
    # calling its bitblas-marked test function that does not use bitblas)
    f = t.requires_package("no_such_package_xyz")(lambda: 5)
    assert f() == 5 and skip_marks(f) == [(True, "needs the package(s) no_such_package_xyz")]
    g = t.requires_gfx950(lambda: 6)
    assert g() == 6 and skip_marks(g)[0][0] is True and "NVIDIA GPUs only" in skip_marks(g)[0][1]
    assert callable(t.main)


def test_layout_tileop_carver_contrib_env():
    assert tl("layout").make_swizzled_layout("A_shared").path == "make_swizzled_layout"
    GemmWarpPolicy = tl("tileop.base").GemmWarpPolicy
    assert GemmWarpPolicy.FullRow == 1 and GemmWarpPolicy.FullRow.is_full_row()
    from tilelang_ptx._source import literal
    assert literal(GemmWarpPolicy.FullCol, "T") == "T.GemmWarpPolicy.FullCol"
    arch = tl("carver.arch")
    driver = arch.driver
    try:
        n = driver.get_num_sms()
    except RuntimeError as e:  # no CUDA driver here: said so
        assert "driver" in str(e) or "device" in str(e)
    else:
        assert n > 0 and driver.get_max_dynamic_shared_size_bytes() >= driver.get_shared_memory_per_block() > 0
        cuda = arch.CUDA("cuda")
        assert cuda.compute_max_core == n and cuda.sm_version >= 70
    with pytest.raises(NotImplementedError, match="NVIDIA GPUs only"):
        arch.CDNA("hip")
    with pytest.raises(NotImplementedError, match="MatmulTemplate: this project"):
        tl("carver.template").MatmulTemplate(M=1, N=1, K=1)
    assert tl("carver.roller.rasterization").NoRasterization is not None
    assert tl("contrib.nvcc").get_target_compute_version({"kind": "cuda", "arch": "sm_90a"}) == "9.0"
    assert tl("contrib.nvcc").get_target_compute_version("sm_86") == "8.6"
    env = tl("env")
    assert env.TILELANG_CACHE_DIR.endswith("tilelang-ptx") or os.environ.get("TL_CACHE_DIR")
    old = os.environ.get("TL_CACHE")
    try:
        tilelang.disable_cache()
        assert os.environ["TL_CACHE"] == "0" and not env.is_cache_enabled()
    finally:
        if old is None:
            os.environ.pop("TL_CACHE", None)
        else:
            os.environ["TL_CACHE"] = old


def test_tvm_namespace():
    tvm = tl("tvm")
    assert tl("").tvm is tvm and _alias.import_ours("tvm") is tvm
    assert tvm.target.Target({"kind": "cuda", "arch": "sm_90a"}).arch == "sm_90a"
    assert str(tvm.target.Target("cuda -arch=sm_80")) == "cuda -arch=sm_80"
    assert tvm.target.Target("llvm").kind.name == "cpu"
    assert tvm.tirx.const(1).path == "tirx.const"
    assert callable(tvm.testing.requires_package("numpy"))
    with pytest.raises(AttributeError, match="tvm.relax: this project .* does not provide it"):
        tvm.relax  # noqa: B018


def test_names_not_provided():
    for mod, name in [("tools", "plot_layout"),
                      ("cuda.intrinsics.macro.mma_macro_generator", "TensorCoreIntrinEmitterWithLadderTransform"),
                      ("cuda.intrinsics", "get_mma_micro_size"),
                      ("rocm.intrinsics.mfma_macro_generator", "MatrixCorePreshuffleIntrinEmitter")]:
        obj = getattr(tl(mod), name)
        with pytest.raises(NotImplementedError, match=f"tilelang.{mod}.{name}.*does not provide it"):
            obj()
    # provided: libtilelang's prelude runs them in kernels (test_mma_emitter.py)
    emitter = tl("cuda.intrinsics.macro.mma_macro_generator").TensorCoreIntrinEmitter
    assert tl("cuda.intrinsics").TensorCoreIntrinEmitter is emitter
    assert tl("cuda.intrinsics").get_swizzle_layout(2, 9, 32, "float16") == (0, 2, 1)
    with pytest.raises(AttributeError, match="tilelang.tools.nothing: this project"):
        tl("tools").nothing  # noqa: B018
    with pytest.raises(ModuleNotFoundError, match="tilelang.cuda.nothing: this project"):
        tl("cuda.nothing")
    with pytest.raises(ModuleNotFoundError, match="tilelang.no_module: this project"):
        tl("no_module")
    with pytest.raises(AttributeError, match="tilelang.testing.regression: this project .* does not provide it"):
        tl("testing").regression  # noqa: B018
    with pytest.raises(ImportError, match="cannot import name 'regression' from 'tilelang.testing': .*does not provide"):
        exec("from tilelang.testing import regression", {"__builtins__": _alias.builtins_for_file()})
    assert tl("carver").arch is tl("carver.arch")  # a package's submodule on first use
    with pytest.warns(UserWarning, match="register_cuda_postproc_callback: has no effect"):
        f = tl("engine.callback").register_cuda_postproc_callback(lambda code, target: code)
    assert callable(f)


def test_autotuner_module_names():
    at = tl("autotuner")
    star = {}
    exec("from tilelang_ptx.autotuner import *", star)
    assert {"autotune", "AutoTuner", "set_autotune_inputs", "get_autotune_inputs"} <= set(star)
    assert tilelang.autotune is at.autotune
    with at.set_autotune_inputs([1, 2]):
        assert at.get_autotune_inputs() == [1, 2]
    assert at.get_autotune_inputs() is None
    mod = tilelang.load_file(os.path.join(EXAMPLES, "tune", "gemm_autotune.py"))
    assert len(mod.matmul.configs) == 288 and mod.matmul.out_idx == [-1]


def test_profiler_in_place_kernel():
    """A kernel without out_idx writes its arguments: the profiler supplies all of them, compares nothing
    it does not return (as TileLang's), and the kernel's writes are there."""
    k = tilelang.compile(add.func(32, 64))
    prof = k.get_profiler(tensor_supply_type=tilelang.TensorSupplyType.One)
    prof.assert_allclose(lambda A, B, C: None)
    A, B, C = prof._get_inputs()
    assert C.shape == (32, 64) and k(A, B, C) is None and (C == 2).all()
