#!/usr/bin/env python3
"""Triton's first call of a GEMM, measured as benchmarks/compile/bench_compile
measures ours (issue 6, "benchmarks/compile"): in a fresh process whose CUDA
context already exists (torch.cuda.init() and a first allocation, inputs
made and synchronized, all before the timer), with CUDA_CACHE_DISABLE=1,
the time from before the first call of the kernel to after
torch.cuda.synchronize().  The kernel is the tutorial-style GEMM of
benchmarks/triton/triton_matmul.py at one fixed configuration (no autotune:
one compilation), C = A @ B, 4096^3 float16 by default, as our first call of
examples/gemm.py at M = N = K = 4096.

Two cases, each the median of RUNS fresh processes (this script re-run with
--child):
  cold:   TRITON_CACHE_DIR is a new empty directory (Triton compiles: its
          front end, MLIR passes, LLVM, ptxas, module load);
  cached: TRITON_CACHE_DIR already holds the kernel (Triton's on-disk cache
          hit: what a second run of the same program sees).
Each child checks its result against torch.matmul after the timer.

Usage: triton_first_call.py [--runs N] [--size M N K]
Output: a table on stdout and $OUT/triton_first_call.csv (or ./).
Exit 0; 1 on a failure; 77 (with a SKIP line) without torch, Triton or a GPU.
"""
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
TRITON_DIR = os.path.join(os.path.dirname(HERE), "triton")
sys.path.insert(0, TRITON_DIR)


def child(M, N, K):
    import torch
    import triton_matmul
    torch_, triton, run = triton_matmul.load(autotune=False)
    t0 = time.perf_counter()
    torch.cuda.init()
    torch.empty(1, device="cuda")
    torch.cuda.synchronize()
    ctx_ms = (time.perf_counter() - t0) * 1e3
    a = (torch.rand((M, K), device="cuda") * 2 - 1).half()
    b = (torch.rand((K, N), device="cuda") * 2 - 1).half()
    torch.cuda.synchronize()
    t0 = time.perf_counter()
    c = run(a, b)
    torch.cuda.synchronize()
    t1 = time.perf_counter()
    ref = a.float() @ b.float()
    err = (c.float() - ref).abs()
    bad = int((~(err <= 1e-2 + 1e-2 * ref.abs())).sum().item())
    print("first_call total_ms=%.3f ctx_ms=%.3f bad=%d" % ((t1 - t0) * 1e3, ctx_ms, bad))
    return 0 if bad == 0 else 1


def main():
    args = sys.argv[1:]
    runs, size = 5, (4096, 4096, 4096)
    if args and args[0] == "--child":
        return child(int(args[1]), int(args[2]), int(args[3]))
    i = 0
    while i < len(args):
        if args[i] == "--runs":
            runs = int(args[i + 1])
            i += 2
        elif args[i] == "--size":
            size = tuple(int(x) for x in args[i + 1:i + 4])
            i += 4
        else:
            print("usage: triton_first_call.py [--runs N] [--size M N K]", file=sys.stderr)
            return 2
    try:
        import torch
        import triton
        import triton_matmul  # noqa: F401
    except Exception as e:
        print("SKIP: triton_first_call needs PyTorch and Triton (%s: %s)" % (type(e).__name__, e))
        return 77
    if not torch.cuda.is_available():
        print("SKIP: triton_first_call: torch.cuda.is_available() is False (no GPU)")
        return 77
    M, N, K = size
    print("triton_first_call: %s, torch %s, triton %s, GEMM %dx%dx%d float16, median of %d "
          "fresh processes" % (torch.cuda.get_device_name(0), torch.__version__, triton.__version__,
                               M, N, K, runs))
    results = {}
    cached_dir = tempfile.mkdtemp(prefix="triton-cache-")
    try:
        for case in ("cold", "cached"):
            totals, ctxs = [], []
            for r in range(runs):
                env = dict(os.environ)
                env["CUDA_CACHE_DISABLE"] = "1"
                if case == "cold":
                    d = tempfile.mkdtemp(prefix="triton-cache-")
                else:
                    d = cached_dir
                env["TRITON_CACHE_DIR"] = d
                p = subprocess.run([sys.executable, os.path.abspath(__file__), "--child", str(M),
                                    str(N), str(K)], env=env, capture_output=True, text=True)
                if case == "cold":
                    # the first cold run fills the directory the cached case reuses
                    if r == 0:
                        shutil.rmtree(cached_dir, ignore_errors=True)
                        shutil.copytree(d, cached_dir)
                    shutil.rmtree(d, ignore_errors=True)
                line = [x for x in p.stdout.splitlines() if x.startswith("first_call ")]
                if p.returncode != 0 or not line:
                    print("child failed (rc %d):\n%s%s" % (p.returncode, p.stdout, p.stderr),
                          file=sys.stderr)
                    return 1
                kv = dict(x.split("=") for x in line[0].split()[1:])
                totals.append(float(kv["total_ms"]))
                ctxs.append(float(kv["ctx_ms"]))
            results[case] = (statistics.median(totals), statistics.median(ctxs), totals)
    finally:
        shutil.rmtree(cached_dir, ignore_errors=True)
    print("%-8s %12s %14s   %s" % ("case", "first call ms", "context ms", "all runs"))
    for case, (tot, ctx, all_) in results.items():
        print("%-8s %12.1f %14.1f   %s" % (case, tot, ctx, " ".join("%.1f" % x for x in all_)))
    out_dir = os.environ.get("OUT") or "."
    path = os.path.join(out_dir, "triton_first_call.csv")
    with open(path, "w") as f:
        f.write("case,M,N,K,first_call_ms,context_ms,runs\n")
        for case, (tot, ctx, _) in results.items():
            f.write("%s,%d,%d,%d,%.3f,%.3f,%d\n" % (case, M, N, K, tot, ctx, runs))
    print("csv: %s" % path)
    return 0


if __name__ == "__main__":
    sys.exit(main())
