# `python -m tilelang_ptx FILE ARGS...`, tilelang_ptx.run_file and load_file bind a TileLang file to this
# package: also in a process that imported another `tilelang` first (here a fake one on sys.path, standing
# for the real TileLang), whose modules are left as they were.  The kernels are this package's JITKernel
# and their source is PTX from libtilelang.
import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import tilelang_ptx

PKG_PARENT = os.path.dirname(os.path.dirname(os.path.abspath(tilelang_ptx.__file__)))

PROGRAM = textwrap.dedent('''
    import sys
    import tilelang
    import tilelang.language as T
    from tilelang.autotuner import *          # TileLang's star import: autotune, AutoTuner, ...
    from tilelang.profiler import do_bench
    from tilelang import tvm as tvm
    import numpy as np
    import helper_sibling                     # a sibling file that imports tilelang too


    @tilelang.jit(out_idx=-1)
    def add(M=64, N=128, block_M=32, block_N=64, dtype=T.float32):
        @T.prim_func
        def main(A: T.Tensor((M, N), dtype), B: T.Tensor((M, N), dtype), C: T.Tensor((M, N), dtype)):
            with T.Kernel(T.ceildiv(N, block_N), T.ceildiv(M, block_M), threads=128) as (bx, by):
                for i, j in T.Parallel(block_M, block_N):
                    C[by * block_M + i, bx * block_N + j] = A[by * block_M + i, bx * block_N + j] + \\
                        B[by * block_M + i, bx * block_N + j]
        return main


    def main():
        import tilelang.testing                 # an import made after the file was loaded
        k = add()
        A = np.arange(64 * 128, dtype=np.float32).reshape(64, 128)
        C = k(A, A)
        tilelang.testing.torch_assert_close(C, 2 * A, atol=0, rtol=0, max_mismatched_ratio=0)
        src = k.get_kernel_source()
        print("RESULT", type(k).__module__, type(k).__name__, tilelang.__name__, helper_sibling.NAME,
              tvm.DataType("float16").bits, ".entry" in src and ".version" in src, sys.argv[1:])
        return k


    if __name__ == "__main__":
        main()
''')


@pytest.fixture
def program(tmp_path):
    (tmp_path / "prog.py").write_text(PROGRAM)
    (tmp_path / "helper_sibling.py").write_text("import tilelang\nNAME = tilelang.__name__\n")
    fake = tmp_path / "fake" / "tilelang"
    fake.mkdir(parents=True)
    (fake / "__init__.py").write_text("FAKE = True\n\ndef jit(*a, **k):\n    raise RuntimeError('fake tilelang')\n")
    (fake / "language.py").write_text("FAKE = True\n")
    return tmp_path


@pytest.fixture
def fake_first(program, monkeypatch):
    """The fake `tilelang` imported first, as a process that imported the real TileLang has it."""
    monkeypatch.syspath_prepend(str(program / "fake"))
    saved = {k: sys.modules.pop(k) for k in list(sys.modules) if k == "tilelang" or k.startswith("tilelang.")}
    import tilelang
    assert tilelang.FAKE
    yield tilelang
    for k in [k for k in sys.modules if k == "tilelang" or k.startswith("tilelang.") or k == "helper_sibling"]:
        del sys.modules[k]
    sys.modules.update(saved)


def test_load_file_binds_to_this_package(program, fake_first):
    mod = tilelang_ptx.load_file(str(program / "prog.py"))
    k = mod.main()  # main() imports tilelang.testing after load_file returned
    assert isinstance(k, tilelang_ptx.JITKernel)
    src = k.get_kernel_source()
    assert ".entry" in src and ".target sm_" in src
    assert mod.tilelang is tilelang_ptx
    assert sys.modules["tilelang"] is fake_first  # the process's own tilelang, as it was
    assert not any(k.startswith("tilelang.") for k in sys.modules if k != "tilelang.language")
    assert sys.modules.get("tilelang.language") is None or sys.modules["tilelang.language"].FAKE


def test_run_file_in_process(program, fake_first, capsys, monkeypatch):
    argv = sys.argv[:]
    g = tilelang_ptx.run_file(str(program / "prog.py"), ["--x", "1"])
    out = capsys.readouterr().out
    assert "RESULT tilelang_ptx.kernel JITKernel tilelang_ptx tilelang_ptx 16 True ['--x', '1']" in out
    assert g["tilelang"] is tilelang_ptx
    assert sys.argv == argv and sys.modules["tilelang"] is fake_first


def test_python_m_runs_the_file_as_main(program):
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(program / "fake"), PKG_PARENT]))
    # the fake tilelang imported first, then `python -m tilelang_ptx prog.py a b`
    code = ("import runpy, sys, tilelang; assert tilelang.FAKE; sys.argv = ['tilelang_ptx', sys.argv[1], 'a', 'b']; "
            "runpy.run_module('tilelang_ptx', run_name='__main__', alter_sys=True)")
    r = subprocess.run([sys.executable, "-c", code, str(program / "prog.py")], env=env, capture_output=True,
                       text=True, cwd=str(program.parent))
    assert r.returncode == 0, r.stderr
    assert "RESULT tilelang_ptx.kernel JITKernel tilelang_ptx tilelang_ptx 16 True ['a', 'b']" in r.stdout
    # and plainly, as users type it
    r = subprocess.run([sys.executable, "-m", "tilelang_ptx", str(program / "prog.py")], env=env,
                       capture_output=True, text=True, cwd=str(program.parent))
    assert r.returncode == 0, r.stderr
    assert "RESULT tilelang_ptx.kernel JITKernel" in r.stdout


def test_python_m_exit_status_and_missing_names(program):
    (program / "bad.py").write_text("import tilelang.autotuner.nothing_here\n")
    env = dict(os.environ, PYTHONPATH=PKG_PARENT)
    r = subprocess.run([sys.executable, "-m", "tilelang_ptx", str(program / "bad.py")], env=env,
                       capture_output=True, text=True)
    assert r.returncode == 1
    assert "tilelang.autotuner.nothing_here" in r.stderr and "does not provide it" in r.stderr
    r = subprocess.run([sys.executable, "-m", "tilelang_ptx"], env=env, capture_output=True, text=True)
    assert r.returncode == 2 and "usage: python -m tilelang_ptx [--remarks] FILE" in r.stdout
