# Faults through the Python package (issue 33), each in a child process:
#  - a CUDA error in a kernel call raises tilelang.KernelError with the driver's error name and the kernel's
#    name (the C fast path and the pure path alike), returns nothing, leaves the tensors it did not write
#    as they were, and the next call works; a sticky error (CUDA_ERROR_ILLEGAL_ADDRESS) says so and that
#    the process must restart, and the next call fails with it too.  On the fake CUDA driver of
#    benchmarks/launch (its fault injection, test/faults/fault_matrix.c) with tests/fake_torch.py's CUDA
#    tensors: nothing runs there, so "left as they were" is checked for real by test/GPU/test_faults.c.
#  - KeyboardInterrupt (SIGINT) in the middle of a loop compiling many configurations (a hand-written
#    autotune) ends the process with KeyboardInterrupt, not a crash, and leaves the kernel cache consistent:
#    every configuration then compiles from it (or, if its store was cut short, compiles afresh) with PTX
#    identical to a compile without the cache, and no entry is reported corrupt.
import os
import signal
import subprocess
import sys
import time

import pytest

import tilelang_ptx as tilelang

HERE = os.path.dirname(os.path.abspath(__file__))


def _env(**kw):
    """The environment of a child process: this one's, with the imported tilelang_ptx importable."""
    pkg = os.path.dirname(os.path.dirname(os.path.abspath(tilelang.__file__)))
    path = os.pathsep.join(p for p in (pkg, os.environ.get("PYTHONPATH")) if p)
    return dict(os.environ, PYTHONPATH=path, **kw)


def _fake_driver():
    for p in (os.environ.get("TL_FAKE_CUDA_SO"),
              os.path.join(os.path.dirname(tilelang.library_path), "gpu-bin", "libtl_fake_cuda.so")):
        if p and os.path.exists(p):
            return p
    return None


CALL_SCRIPT = r'''
import ctypes, os, sys
import numpy as np
sys.path.insert(0, sys.argv[1])
import fake_torch
sys.modules["torch"] = fake_torch
import tilelang_ptx as tilelang
import tilelang_ptx.language as T
from tilelang_ptx import KernelError

fake = ctypes.CDLL(os.environ["TL_CUDA_DRIVER"])  # the runtime's handle: the same library
fake.tl_fake_cuda_fault.argtypes = [ctypes.c_char_p, ctypes.c_long, ctypes.c_int]
fake.tl_fake_cuda_error_code.argtypes = [ctypes.c_char_p]
code = lambda name: fake.tl_fake_cuda_error_code(name.encode())


@T.prim_func
def fm_scale(A: T.Tensor((1000,), "float32"), B: T.Tensor((1000,), "float32"),
             C: T.Tensor((1000,), "float32")):
    with T.Kernel(8, threads=128) as bx:
        for i in T.Parallel(128):
            if bx * 128 + i < 1000:
                C[bx * 128 + i] = 2.0 * A[bx * 128 + i] + B[bx * 128 + i]


k_out = tilelang.compile(fm_scale, out_idx=[2], target="cuda")
k_inplace = tilelang.compile(fm_scale, target="cuda")
a = fake_torch.cuda_tensor(np.arange(1000, dtype=np.float32))
b = fake_torch.cuda_tensor(np.ones(1000, dtype=np.float32))
c = fake_torch.cuda_tensor(np.full(1000, 7, dtype=np.float32))
shadow = [t.a.copy() for t in (a, b, c)]

calls = {"out_idx, C path": lambda: k_out(a, b), "out_idx, pure path": lambda: k_out._call_py(a, b),
         "in place": lambda: k_inplace(a, b, c)}
for what, call in calls.items():
    call()  # works
    for error in ("CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES", "CUDA_ERROR_ILLEGAL_ADDRESS"):
        fake.tl_fake_cuda_fault(b"cuLaunchKernel", 1, code(error))
        try:
            got = call()
            sys.exit(f"{what}: {error}: no exception, returned {got!r}")
        except KernelError as e:
            msg = str(e)
        assert error in msg and "fm_scale" in msg, (what, msg)
        assert all((t.a == s).all() for t, s in zip((a, b, c), shadow)), what
        if error == "CUDA_ERROR_ILLEGAL_ADDRESS":
            assert "sticky" in msg and "restart the process" in msg, msg
            try:  # the context is dead: the next call fails the same way
                call()
                sys.exit(f"{what}: the call after a sticky error worked")
            except KernelError as e:
                assert error in str(e), str(e)
            fake.tl_fake_cuda_clear_sticky()  # the real driver: a new process
        out = call()  # the fault gone: the same kernel object works
        assert (out is None) == (what == "in place"), (what, out)
print("ok")
'''


def test_cuda_error_in_a_call_raises_and_the_next_call_works(tmp_path):
    so = _fake_driver()
    if so is None:
        pytest.skip("the fake CUDA driver (gpu-bin/libtl_fake_cuda.so) is not built beside libtilelang")
    script = tmp_path / "call_faults.py"
    script.write_text(CALL_SCRIPT)
    env = _env(TL_CUDA_DRIVER=so, TL_FAKE_CUDA_DEVICES="1", TL_FAKE_CUDA_CC="90", TL_CACHE="0")
    r = subprocess.run([sys.executable, str(script), HERE], env=env, capture_output=True, text=True, timeout=300)
    assert r.returncode == 0 and r.stdout.strip().endswith("ok"), r.stdout + r.stderr


TUNE_SCRIPT = r'''
import sys
import tilelang_ptx as tilelang
import tilelang_ptx.language as T

CONFIGS = [(bm, bn) for bm in (16, 32, 64) for bn in (32, 64, 128, 256)]


@tilelang.jit(out_idx=-1, target="sm_80")
def scale(M=256, N=1024, block_M=32, block_N=128):
    @T.prim_func
    def main(A: T.Tensor((M, N), "float32"), B: T.Tensor((M, N), "float32")):
        with T.Kernel(T.ceildiv(N, block_N), T.ceildiv(M, block_M), threads=128) as (bx, by):
            F = T.alloc_fragment((block_M, block_N), "float32")
            T.copy(A[by * block_M, bx * block_N], F)
            for i, j in T.Parallel(block_M, block_N):
                F[i, j] = F[i, j] * 3.0 + 1.0
            T.copy(F, B[by * block_M, bx * block_N])
    return main


if sys.argv[1] == "tune":  # a long search, until interrupted
    print("started", flush=True)
    for rnd in range(10 ** 6):
        for bm, bn in CONFIGS:
            tilelang.clear_cache()
            scale(M=256 + 32 * (rnd % 64), block_M=bm, block_N=bn)
else:  # check: every configuration the search got to, from the cache and without it
    import os
    bad = 0
    for rnd in range(int(sys.argv[2])):
        for bm, bn in CONFIGS:
            tilelang.clear_cache()
            os.environ["TL_CACHE"] = "1"
            k = scale(M=256 + 32 * rnd, block_M=bm, block_N=bn)
            tilelang.clear_cache()
            os.environ["TL_CACHE"] = "0"
            ref = scale(M=256 + 32 * rnd, block_M=bm, block_N=bn)
            if k.cache_result not in ("hit", "miss") or k.get_kernel_source() != ref.get_kernel_source():
                bad += 1
                print("bad", rnd, bm, bn, k.cache_result)
    print("checked", bad)
'''


def test_keyboard_interrupt_in_a_tuning_loop_leaves_the_cache_consistent(tmp_path):
    script = tmp_path / "tune.py"
    script.write_text(TUNE_SCRIPT)
    cache = tmp_path / "cache"
    env = _env(TL_CACHE="1", TL_CACHE_DIR=str(cache))
    # Ctrl-C's disposition in the child whatever this process inherited: a shell's background job (`cmd &`,
    # nohup) ignores SIGINT, and Python then keeps it ignored, so the search would run to its end (exit 0)
    p = subprocess.Popen([sys.executable, str(script), "tune"], env=env, stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, text=True,
                         preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    assert p.stdout.readline().strip() == "started"
    def stored():
        return len([f for f in os.listdir(cache) if f.endswith(".tlk")]) if cache.exists() else 0
    deadline = time.time() + 60
    while time.time() < deadline and stored() < 8:
        time.sleep(0.05)
    p.send_signal(signal.SIGINT)  # as Ctrl-C: KeyboardInterrupt at the next bytecode
    _, err = p.communicate(timeout=120)
    # an uncaught KeyboardInterrupt ends Python with SIGINT after the traceback (no crash: no other signal)
    assert p.returncode in (1, -signal.SIGINT) and err.rstrip().endswith("KeyboardInterrupt"), \
        (p.returncode, err[-2000:])
    entries = [f for f in os.listdir(cache) if f.endswith(".tlk")]
    assert len(entries) >= 8
    rounds = len(entries) // 12 + 2  # the configurations the search may have reached
    r = subprocess.run([sys.executable, str(script), "check", str(rounds)], env=env, capture_output=True,
                       text=True, timeout=600)
    assert r.returncode == 0 and r.stdout.strip().endswith("checked 0"), r.stdout + r.stderr
    assert "cache" not in r.stderr, r.stderr  # no entry reported corrupt
