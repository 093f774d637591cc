#!/usr/bin/env python3
"""The autotuner on TileLang's examples/gemm/example_gemm_autotune.py, unchanged, on a GPU:
  1. its get_best_config(M, N, K) (AutoTuner.from_kernel(...).run(warmup=3, rep=20)) in a fresh process
     with an empty tune cache: the search (progress line on stderr), its wall time, the chosen config;
  2. every configuration timed separately (compiled, do_bench with 10 warm-up and 100 timed launches,
     interleaved in rounds): the fastest, and how far the chosen one is from it (acceptance: <= 5%);
  3. get_best_config again in a new process: the choice from the disk cache, its wall time (< 1 s).
  scripts/tilelang-autotune-acceptance.py EXAMPLES_DIR [--m 4096 --n 4096 --k 4096] [--rounds 3]
Needs PyTorch with a CUDA GPU and this package importable; exit status 77 without a GPU."""
import argparse
import json
import os
import subprocess
import sys
import tempfile
import time

CHILD = r'''
import json, sys, time
import tilelang_ptx
path, M, N, K = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
mod = tilelang_ptx.load_file(path)
t0 = time.perf_counter()
r = mod.get_best_config(M, N, K)
dt = time.perf_counter() - t0
print("RESULT " + json.dumps({"config": r.config, "latency": r.latency, "seconds": dt,
                              "cache_hit": getattr(r, "cache_hit", None)}))
'''

SWEEP = r'''
import json, sys
import tilelang_ptx
from tilelang_ptx.autotuner import AutoTuner
path, M, N, K, rounds = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4]), int(sys.argv[5])
mod = tilelang_ptx.load_file(path)
configs = mod.get_configs(M, N, K)
# the example's kernel factory is local to get_best_config: run the tuner's compile of each config through
# an AutoTuner built the same way (its _compile_one), then time each with the profiler
tuner = None
orig = AutoTuner.run
def grab(self, *a, **k):
    global tuner
    tuner = self
    raise StopIteration
AutoTuner.run = grab
try:
    mod.get_best_config(M, N, K)
except StopIteration:
    pass
AutoTuner.run = orig
def compile_one(c):
    try:
        return tuner._compile_one(c)
    except Exception:
        return None  # the search reported it; it is not a candidate
from concurrent.futures import ThreadPoolExecutor
import os
with ThreadPoolExecutor(os.cpu_count() or 4) as pool:  # libtilelang compiles in parallel threads
    kernels = {i: k for i, k in enumerate(pool.map(compile_one, configs)) if k is not None}
times = {i: [] for i in kernels}
for _ in range(rounds):
    for i, k in kernels.items():
        try:
            p = k.get_profiler()
            times[i].append(p.do_bench(n_warmup=10, n_repeat=100))
        except Exception:
            times[i].append(float("inf"))
best = {i: min(t) for i, t in times.items()}
print("RESULT " + json.dumps({"timed": len(best), "of": len(configs),
                              "by_config": [[configs[i], ms] for i, ms in sorted(best.items(), key=lambda x: x[1])]}))
'''


def child(code, args, env):
    r = subprocess.run([sys.executable, "-c", code, *map(str, args)], env=env, capture_output=True, text=True)
    sys.stderr.write(r.stderr[-4000:])
    lines = [l for l in r.stdout.splitlines() if l.startswith("RESULT ")]
    if r.returncode != 0 or not lines:
        sys.exit(f"autotune-acceptance: the child failed (exit {r.returncode})")
    return json.loads(lines[-1][7:])


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("examples")
    ap.add_argument("--m", type=int, default=4096)
    ap.add_argument("--n", type=int, default=4096)
    ap.add_argument("--k", type=int, default=4096)
    ap.add_argument("--rounds", type=int, default=3)
    a = ap.parse_args()
    try:
        import torch
        if not torch.cuda.is_available():
            raise ImportError
    except ImportError:
        print("autotune-acceptance: SKIP: needs PyTorch with a CUDA GPU")
        sys.exit(77)
    path = os.path.join(os.path.abspath(a.examples), "gemm", "example_gemm_autotune.py")
    cache = tempfile.mkdtemp(prefix="tl-autotune-")
    env = dict(os.environ, TL_CACHE="1", TL_CACHE_DIR=cache)
    first = child(CHILD, [path, a.m, a.n, a.k], env)
    print(f"1. search: {first['seconds']:.1f} s, chose {first['config']} at {first['latency']:.4f} ms")
    sweep = child(SWEEP, [path, a.m, a.n, a.k, a.rounds], env)
    ranked = sweep["by_config"]
    fastest_cfg, fastest = ranked[0]
    chosen = next(ms for c, ms in ranked if c == first["config"])
    ratio = chosen / fastest
    print(f"2. every config separately ({sweep['timed']} of {sweep['of']} compiled): fastest {fastest_cfg} "
          f"{fastest:.4f} ms; chosen {chosen:.4f} ms = {ratio:.3f}x the fastest "
          f"({'PASS' if ratio <= 1.05 else 'FAIL'}: <= 1.05)")
    second = child(CHILD, [path, a.m, a.n, a.k], env)
    ok3 = second["config"] == first["config"] and second["seconds"] < 1.0
    print(f"3. second process: {second['seconds']:.3f} s, config {second['config']}, cache_hit "
          f"{second['cache_hit']} ({'PASS' if ok3 else 'FAIL'}: same config, < 1 s)")
    sys.exit(0 if ratio <= 1.05 and ok3 else 1)


if __name__ == "__main__":
    main()
