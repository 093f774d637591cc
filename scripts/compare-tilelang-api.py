#!/usr/bin/env python3
"""Compares this package's TileLang host API with the real TileLang's, in one process that imports the real
TileLang first (which must stay in charge of `tilelang`):
  * every tilelang.PassConfigKey of the real TileLang exists here with the same value;
  * the parameters of the host functions TileLang programs call (autotune, AutoTuner.*, do_bench,
    Profiler.*, torch_assert_close, get_tensor_supply, jit, compile) exist here, by name;
  * the public names of the modules programs import (autotuner, profiler, testing, utils.tensor,
    language.fp8, tileop.base, carver.arch, carver.arch.driver, math, layout) exist here;
  * tilelang_ptx.load_file(FILE) compiles with this project (its JITKernel, PTX) and leaves sys.modules'
    `tilelang` the real one.
  PYTHONPATH=<TileLang site>:<this package> scripts/compare-tilelang-api.py [--stub-torch] [FILE]
FILE: a TileLang file with a factory `matmul(M, N, K, block_M, block_N, block_K)` (default: TileLang's
examples/gemm/example_gemm.py shape, from $TL_EXAMPLES).  --stub-torch: a minimal stand-in for PyTorch,
for a machine without it (the real TileLang imports torch).  Exit status: the number of differences."""
import inspect
import os
import sys
import types


def stub_torch():
    from unittest import mock

    class Fake(types.ModuleType):
        def __getattr__(self, name):
            if name.startswith("__"):
                raise AttributeError(name)
            if name[:1].isupper():  # classes (Tensor, Size, ...): real types, for isinstance
                t = type(name, (), {"__init__": lambda self, *a, **k: None})
                setattr(self, name, t)
                return t
            return mock.MagicMock(name=f"{self.__name__}.{name}")

    for n in ("torch torch.nn torch.nn.functional torch.cuda torch.utils torch.utils.cpp_extension torch.distributed "
              "torch.testing torch.autograd torch.profiler torch.backends torch.library torch.utils.dlpack "
              "torch.version torch._C").split():
        m = sys.modules[n] = Fake(n)
        parent, _, leaf = n.rpartition(".")
        if parent:
            setattr(sys.modules[parent], leaf, m)
    sys.modules["torch"].__path__ = []
    sys.modules["torch"].__version__ = "0"
    sys.modules["torch"].cuda.is_available = lambda: False


def main():
    args = [a for a in sys.argv[1:] if a != "--stub-torch"]
    if "--stub-torch" in sys.argv:
        stub_torch()
    import importlib
    import tilelang as real
    import tilelang_ptx as ours
    assert "tilelang_ptx" not in (real.__file__ or ""), "PYTHONPATH must reach the real TileLang first"
    diffs = 0
    keys = {k.name: k.value for k in real.PassConfigKey}
    bad = {k: v for k, v in keys.items() if getattr(ours.PassConfigKey, k, None) != v}
    print(f"PassConfigKey: {len(keys)} keys in TileLang {getattr(real, '__version__', '?')}; missing or "
          f"different here: {bad or 'none'}")
    diffs += len(bad)

    def get(root, path):
        obj = root
        for part in path.split("."):
            obj = getattr(obj, part, None) if not inspect.ismodule(obj) or hasattr(obj, part) else \
                importlib.import_module(f"{obj.__name__}.{part}")
            if obj is None:
                return None
        return obj

    for path in ("autotuner.autotune", "autotuner.AutoTuner.set_compile_args", "autotuner.AutoTuner.set_profile_args",
                 "autotuner.AutoTuner.run", "autotuner.AutoTuner.from_kernel", "profiler.do_bench",
                 "profiler.Profiler.do_bench", "profiler.Profiler.assert_allclose", "profiler.Profiler.run_once",
                 "testing.torch_assert_close", "testing.set_random_seed", "utils.tensor.get_tensor_supply",
                 "utils.tensor.torch_assert_close", "jit", "compile", "language.fp8.determine_fp8_type"):
        a, b = get(real, path), get(ours, path)
        if a is None:
            continue
        if b is None:
            print(f"{path}: missing here")
            diffs += 1
            continue
        try:
            lack = [p for p in inspect.signature(a).parameters if p not in inspect.signature(b).parameters
                    and inspect.signature(a).parameters[p].kind not in (inspect.Parameter.VAR_KEYWORD,
                                                                         inspect.Parameter.VAR_POSITIONAL)]
        except (TypeError, ValueError):
            continue
        if lack and "kwargs" not in inspect.signature(b).parameters and "_ignored" not in inspect.signature(b).parameters:
            print(f"{path}: parameters missing here: {lack}")
            diffs += 1
    for mod in ("autotuner", "profiler", "testing", "utils.tensor", "language.fp8", "tileop.base", "carver.arch",
                "carver.arch.driver", "math", "layout"):
        try:
            a = importlib.import_module(f"tilelang.{mod}")
        except Exception as e:
            print(f"tilelang.{mod}: the real one does not import here ({type(e).__name__})")
            continue
        b = importlib.import_module(f"tilelang_ptx.{mod}")
        names = [n for n in dir(a) if not n.startswith("_") and not inspect.ismodule(getattr(a, n))
                 and getattr(getattr(a, n), "__module__", "").startswith("tilelang")]
        lack = [n for n in names if not hasattr(b, n)]
        print(f"tilelang.{mod}: {len(names)} public names; missing here: {lack or 'none'}")
    path = args[0] if args else os.path.join(os.environ.get("TL_EXAMPLES", "examples"), "gemm", "example_gemm.py")
    if os.path.exists(path):
        k = ours.load_file(path).matmul.compile(M=1024, N=1024, K=1024, block_M=128, block_N=128, block_K=32)
        ok = type(k).__module__ == "tilelang_ptx.kernel" and ".entry" in k.get_kernel_source() and \
            sys.modules["tilelang"] is real
        print(f"load_file({os.path.basename(path)}) with the real TileLang imported first: "
              f"{type(k).__module__}.{type(k).__name__}, PTX {'.entry' in k.get_kernel_source()}, "
              f"sys.modules['tilelang'] still the real one: {sys.modules['tilelang'] is real} -> "
              f"{'PASS' if ok else 'FAIL'}")
        diffs += not ok
    sys.exit(min(diffs, 100))


if __name__ == "__main__":
    main()
