"""GPU checks of the Python package tilelang_ptx (issue 17), on a host with PyTorch and a CUDA GPU:
  1. examples/python/{gemm,gemm_eager,elementwise,flash_attention}.py on the GPU, each against PyTorch;
  2. TileLang's original JIT GEMM test (512x1024x768 f16, out_idx=-1), the factory-decorated GEMM
     (1024^3) and the eager-style GEMM (512x1024x768 f16, T.const M, N, K from the tensors' shapes,
     one compilation per binding) against torch.matmul with torch_assert_close;
  3. streams: a kernel launched while a non-default torch.cuda.Stream is current runs on it, ordered
     after work queued there (a torch.cuda._sleep then a fill: a launch elsewhere would read the
     old values); the same with stream= given explicitly;
  4. CUDA graphs: kernel(A, B) captured with torch.cuda.graph replays bit-identically to eager calls
     (after new inputs are copied in);
  5. host overhead: median host time of kernel(A, B) (output allocation included; examples/
     elementwise_add.py at 32x128 f32, one block, the kernel of benchmarks/launch) vs the C call
     tl_kernel_call (bench_launch.csv's tl_call_us when $OUT has it, else tl_kernel_call through
     ctypes with prepared arguments); acceptance <= 5 us.  It says whether the calls went through the C
     extension tilelang_ptx._fastcall, and times kernel(A, B) with its two output allocations and
     without it (the pure-Python path).
Prints one "python-gpu: <check>: PASS|FAIL ..." line per check and "python-gpu: N passed, M failed" last.
Exit 0 when all pass, 1 otherwise, 77 without PyTorch or a GPU.
  python3 test/GPU/python/run_python_gpu.py [--repo DIR]   (DIR holds examples/python; default: found)
"""
import os
import statistics
import subprocess
import sys
import time
import traceback

results = []


def check(name):
    def deco(fn):
        t0 = time.perf_counter()
        try:
            detail = fn() or ""
            results.append((name, True))
            print(f"python-gpu: {name}: PASS {detail} ({time.perf_counter() - t0:.1f} s)", flush=True)
        except Exception as e:  # noqa: BLE001 - every failure is reported, the run goes on
            results.append((name, False))
            traceback.print_exc()
            print(f"python-gpu: {name}: FAIL {type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''}",
                  flush=True)
        return fn
    return deco


try:
    import torch
except ImportError:
    print("python-gpu: SKIP: no PyTorch")
    sys.exit(77)
if not torch.cuda.is_available():
    print("python-gpu: SKIP: no CUDA GPU visible to PyTorch")
    sys.exit(77)

import tilelang_ptx as tilelang  # noqa: E402

here = os.path.dirname(os.path.abspath(__file__))
repo = sys.argv[sys.argv.index("--repo") + 1] if "--repo" in sys.argv else os.path.join(here, "..", "..", "..")
examples = os.path.join(repo, "examples", "python")
print(f"python-gpu: torch {torch.__version__} on {torch.cuda.get_device_name()}, tilelang_ptx from "
      f"{os.path.dirname(tilelang.__file__)}, libtilelang {tilelang.library_path}", flush=True)
sys.path.insert(0, examples)


# ------------------------------------------------------------------ 1. the examples
for ex in ("gemm", "gemm_eager", "elementwise", "flash_attention"):
    @check(f"example {ex}.py")
    def _run(ex=ex):
        r = subprocess.run([sys.executable, os.path.join(examples, ex + ".py")], capture_output=True,
                           text=True, timeout=600)
        sys.stdout.write(r.stdout)
        sys.stderr.write(r.stderr[-4000:])
        if r.returncode != 0 or "PASS" not in r.stdout:
            raise RuntimeError(f"{ex}.py exited {r.returncode}")
        return "; ".join(l for l in r.stdout.splitlines() if "PASS" in l)


# ------------------------------------------------------------------ 2. JIT GEMM flows
from gemm import matmul  # noqa: E402  (examples/python/gemm.py: TileLang's original test, imports changed)


@check("original JIT GEMM test 512x1024x768 f16 (decorator on the prim_func)")
def _orig():
    matmul_kernel = matmul(512, 1024, 768, 128, 256, 32, False, False, "float16", "float16", "float32", 3, 128)
    A = torch.randn(512, 768, dtype=torch.float16, device="cuda")
    B = torch.randn(768, 1024, dtype=torch.float16, device="cuda")
    C = matmul_kernel(A, B)
    ref_C = torch.matmul(A.to(torch.float), B.to(torch.float)).to(torch.half)
    tilelang.testing.torch_assert_close(C, ref_C, atol=1e-2, rtol=1e-2, max_mismatched_ratio=0.05)
    ms = matmul_kernel.get_profiler().do_bench(warmup=10, rep=50)
    return f"({2 * 512 * 1024 * 768 / ms / 1e9:.1f} TFLOP/s, {ms * 1e3:.1f} us)"


# examples/gemm.py and examples/elementwise_add.py: TileLang files written for `import tilelang`, unchanged
gemm_factory = tilelang.load_file(os.path.join(repo, "examples", "gemm.py")).matmul
add = tilelang.load_file(os.path.join(repo, "examples", "elementwise_add.py")).elementwise_add


@check("factory-decorated GEMM 1024^3 f16, memoised")
def _factory():
    k = gemm_factory(1024, 1024, 1024)
    n = tilelang.compile_count()
    assert gemm_factory(1024, 1024, 1024) is k and tilelang.compile_count() == n, "second call compiled"
    A = torch.randn(1024, 1024, dtype=torch.float16, device="cuda")
    B = torch.randn(1024, 1024, dtype=torch.float16, device="cuda")
    tilelang.testing.torch_assert_close(k(A, B), (A.float() @ B.float()).half(), atol=1e-2, rtol=1e-2,
                                        max_mismatched_ratio=0.05)
    return f"(target {k.target}, PTX {len(k.get_kernel_source())} bytes)"


@check("eager-style GEMM 512x1024x768 f16 (T.const M, N, K from the tensors), one compilation per binding")
def _eager():
    from gemm_eager import matmul as matmul_eager  # examples/python/gemm_eager.py
    A = torch.randn(512, 768, dtype=torch.float16, device="cuda")
    B = torch.randn(768, 1024, dtype=torch.float16, device="cuda")
    n = tilelang.compile_count()
    C = matmul_eager(A, B, 128, 256, 32)
    ref_C = torch.matmul(A.to(torch.float), B.to(torch.float)).to(torch.half)
    tilelang.testing.torch_assert_close(C, ref_C, atol=1e-2, rtol=1e-2, max_mismatched_ratio=0.05)
    k = matmul_eager.compile(M=512, N=1024, K=768, block_M=128, block_N=256, block_K=32)
    matmul_eager(A, B, 128, 256, 32)
    compiled = tilelang.compile_count() - n
    assert compiled == 1, f"{compiled} compilations for one binding"
    A2 = torch.randn(256, 768, dtype=torch.float16, device="cuda")  # another M: a second compilation
    tilelang.testing.torch_assert_close(matmul_eager(A2, B, 128, 256, 32),
                                        (A2.float() @ B.float()).half(), atol=1e-2, rtol=1e-2,
                                        max_mismatched_ratio=0.05)
    assert tilelang.compile_count() - n == compiled + 1, "a new M did not compile once"
    ms = k.get_profiler().do_bench(warmup=10, rep=50)
    return f"({2 * 512 * 1024 * 768 / ms / 1e9:.1f} TFLOP/s, {ms * 1e3:.1f} us; target {k.target})"


# ------------------------------------------------------------------ 3. streams
@check("non-default stream: current torch.cuda.Stream, ordered after its queued work")
def _stream():
    k = add(1024, 1024)
    A = torch.ones(1024, 1024, device="cuda")
    B = torch.full((1024, 1024), 3.0, device="cuda")
    k(A, B)
    torch.cuda.synchronize()
    s = torch.cuda.Stream()
    with torch.cuda.stream(s):
        torch.cuda._sleep(200_000_000)  # ~0.1 s of GPU time queued on s before the fill
        A.fill_(2.0)
        C = k(A, B)                       # must run on s, after the fill
        ev = torch.cuda.Event()
        ev.record(s)
    pending = not ev.query()
    torch.cuda.synchronize()
    assert torch.all(C == 5.0), f"C = {C.flatten()[:4].tolist()}...: the kernel did not run after the fill"
    # stream= given explicitly while the default stream is current
    s2 = torch.cuda.Stream()
    with torch.cuda.stream(s2):
        torch.cuda._sleep(200_000_000)
        A.fill_(7.0)
    C2 = k(A, B, stream=s2)
    torch.cuda.synchronize()
    assert torch.all(C2 == 10.0), f"stream=: C = {C2.flatten()[:4].tolist()}..."
    return f"(work still pending on the stream after the call: {pending})"


# ------------------------------------------------------------------ 4. CUDA graphs
@check("CUDA graph capture: replay bit-identical to eager calls")
def _graph():
    k = gemm_factory(1024, 1024, 1024)
    A = torch.randn(1024, 1024, dtype=torch.float16, device="cuda")
    B = torch.randn(1024, 1024, dtype=torch.float16, device="cuda")
    k(A, B)  # loaded before capture
    s = torch.cuda.Stream()
    s.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(s):
        k(A, B)
    torch.cuda.current_stream().wait_stream(s)
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g):
        C = k(A, B)
    for trial in range(3):
        A.copy_(torch.randn_like(A))
        B.copy_(torch.randn_like(B))
        g.replay()
        torch.cuda.synchronize()
        eager = k(A, B)
        torch.cuda.synchronize()
        assert torch.equal(C, eager), f"replay {trial} differs from the eager call"
    tilelang.testing.torch_assert_close(C, (A.float() @ B.float()).half(), atol=1e-2, rtol=1e-2,
                                        max_mismatched_ratio=0.05)
    return "(3 replays with new inputs, torch.equal to eager)"


# ------------------------------------------------------------------ 5. host overhead
def _c_call_us():
    """The C call's host time per launch: bench_launch.csv (tl_kernel_call from C, same kernel and
    size, out_idx none) when the GPU run produced it, else tl_kernel_call through ctypes."""
    out = os.environ.get("OUT")
    csv = os.path.join(out, "bench_launch.csv") if out else None
    if csv and os.path.exists(csv):
        lines = open(csv).read().splitlines()
        hdr, row = lines[0].split(","), lines[1].split(",")
        return float(row[hdr.index("tl_call_us")]), "C (bench_launch.csv)"
    return None, None


def _median_batches(fn, calls=1000, batches=15):
    per = []
    for _ in range(batches):
        torch.cuda.synchronize()
        t0 = time.perf_counter_ns()
        for _ in range(calls):
            fn()
        t1 = time.perf_counter_ns()
        torch.cuda.synchronize()
        per.append((t1 - t0) / calls / 1e3)
    return statistics.median(per)


@check("host overhead of kernel(A, B) vs the C call (<= 5 us above)")
def _overhead():
    from tilelang_ptx import _lib
    k = add(32, 128)
    A = torch.randn(32, 128, device="cuda")
    B = torch.randn(32, 128, device="cuda")
    assert torch.equal(k(A, B), A + B)
    for _ in range(2000):
        k(A, B)
    from tilelang_ptx import kernel as kmod
    fast_so, calls_before = kmod.fast_path()
    py_us = _median_batches(lambda: k(A, B))
    fast_so, calls_after = kmod.fast_path()
    alloc = kmod.set_output_allocation("empty_like")  # the name in use (put back at once)
    if alloc:
        kmod.set_output_allocation(alloc)
    print(f"python-gpu: fast path: {'C extension ' + fast_so if fast_so else 'none (pure Python)'}; "
          f"{calls_after - calls_before} of 15000 timed calls through it; outputs by {alloc}", flush=True)
    # single-call medians too: 1,000 calls, each timed alone
    ts = []
    for _ in range(1000):
        t0 = time.perf_counter_ns()
        k(A, B)
        ts.append((time.perf_counter_ns() - t0) / 1e3)
    torch.cuda.synchronize()
    single_us = statistics.median(ts)
    # tl_kernel_call through ctypes with prepared arguments (the C call plus ctypes' own cost)
    kc = tilelang.compile(k.prim_func, out_idx=None)
    kc._fast = None  # the pure-Python path packs kc's own buffer, read below (the C path has its own)
    C = torch.empty_like(A)
    kc(A, B, C)
    _raw, args_at, _regs = kc._buffers()  # tl_arg[3] at args_at, already packed by kc(A, B, C)
    ctx = _lib.context()
    stream = torch.cuda.current_stream().cuda_stream
    call = _lib.kernel_call
    h = kc._h

    def c_call():
        call(ctx, h, args_at, 3, stream, None)
    ctypes_us = _median_batches(c_call)
    # where the Python side's time goes (for diagnosis; not part of the verdict)
    from tilelang_ptx.kernel import _current_stream
    routes = {}
    if fast_so:  # kernel(A, B) with the other output allocation of _fastcall, and without the extension
        for route in ("empty", "new_empty", "empty_like", "slab"):
            prev = kmod.set_output_allocation(route)
            kept = [k(A, B) for _ in range(100)]  # 100 live outputs: distinct memory, each A + B
            assert len({c.data_ptr() for c in kept}) == 100 and all(torch.equal(c, A + B) for c in kept), route
            routes[route] = _median_batches(lambda: k(A, B))
            print(f"python-gpu: part: kernel(A, B), C path, outputs by {route}: {routes[route]:.2f} us", flush=True)
            kmod.set_output_allocation(prev)
        plan, k._fast = k._fast, None
        print(f"python-gpu: part: kernel(A, B), pure-Python path: {_median_batches(lambda: k(A, B)):.2f} us",
              flush=True)
        k._fast = plan
    parts = {"torch.empty": lambda: torch.empty((32, 128), dtype=torch.float32, device=0),
             "A.new_empty": lambda: A.new_empty((32, 128)),
             "current stream": lambda: _current_stream(0),
             "3x (data_ptr, shape, stride, dtype, get_device)": lambda: [
                 (t.data_ptr(), t.shape, t.stride(), t.dtype, t.get_device()) for t in (A, B, C)]}
    for name, fn in parts.items():
        t0 = time.perf_counter_ns()
        for _ in range(10000):
            fn()
        print(f"python-gpu: part: {name}: {(time.perf_counter_ns() - t0) / 1e7:.2f} us", flush=True)
    c_us, c_from = _c_call_us()
    if c_us is None:
        c_us, c_from = ctypes_us, "tl_kernel_call via ctypes"
    over = py_us - c_us
    print(f"python-gpu: host time per call (median of 15 batches of 1,000): kernel(A, B) {py_us:.2f} us; "
          f"1,000 single calls: median {single_us:.2f} us; tl_kernel_call via ctypes {ctypes_us:.2f} us; "
          f"C call {c_us:.2f} us [{c_from}]; overhead {over:.2f} us", flush=True)
    if routes:
        print("python-gpu: overhead by output allocation (C path): " +
              ", ".join(f"{r} {t - c_us:.2f} us" for r, t in routes.items()), flush=True)
    assert over <= 5.0, f"overhead {over:.2f} us > 5 us"
    return f"(kernel(A, B) {py_us:.2f} us, C {c_us:.2f} us, overhead {over:.2f} us)"


passed = sum(1 for _, ok in results if ok)
failed = len(results) - passed
print(f"python-gpu: {passed} passed, {failed} failed")
sys.exit(0 if failed == 0 else 1)
