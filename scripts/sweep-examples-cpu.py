#!/usr/bin/env python3
"""Compile sweep of TileLang's example programs on a machine WITHOUT a GPU: which kernels of each example
compile here, and the first located error of those that do not.  Not a correctness check.

  scripts/sweep-examples-cpu.py [--target sm_90a] [--jobs N] [--timeout S] [--only REGEX] [--remarks] [--run]
      EXAMPLES_DIR [OUT.jsonl]

Each example runs as `python -m tilelang_ptx FILE` would (its folder on sys.path, `tilelang` meaning this
package), in its own process, with:
  - torch's "cuda" tensors made on the CPU (factory functions, .cuda(), .to("cuda")), torch.cuda's queries
    and tilelang.carver.arch.driver's answering as an sm_90 device with 132 SMs (the driver's clocks and bus
    width unanswered: a RuntimeError, so carver.arch.CUDA's peak figures are None), CUDA events and
    synchronize inert;
  - every compile for --target (default sm_90a: PTX, no driver), every kernel call NOT run: its outputs
    (out_idx) are returned as zero tensors of their shapes;
  - the examples' checks (torch.testing.assert_close, torch.allclose, the profiler's assert_allclose) inert and
    do_bench returning 1.0 ms, so that a program goes on to its next kernel; @tilelang.autotune's candidates
    compiled for --target and "measured" that way (not loaded).
With --run, the kernels are compiled to --target's SIMT stage and RUN on the CPU SIMT executor with the
examples' own checks (torch.testing, the profiler's assert_allclose) live: "compiles" then means the file ran
to its end with its checks passing on the CPU (slow: the examples' full sizes often time out).
A file "compiles" when it ends without an exception; its record counts the kernels compiled.  A file that
fails stops at the first exception (its located `file:line:col: error:` line when there is one).

Needs PyTorch importable (any build: the CPU is enough; a CUDA build without a GPU works) and this package
(PYTHONPATH=python, TL_LIBRARY=<build>/libtilelang.so).  Use it to find the constructs that stop examples
before spending GPU time; the GPU run (scripts/run-tilelang-examples.py) is the verdict.
"""
import argparse
import json
import os
import re
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor

CHILD = r'''
import os, sys, runpy
target = sys.argv[2]
import torch

def _cpu(d):
    return "cpu" if d is not None and "cuda" in str(d) else d

def _wrap(f):
    def w(*a, **kw):
        if "device" in kw:
            kw["device"] = _cpu(kw["device"])
        return f(*a, **kw)
    return w

for _n in ("randn", "rand", "zeros", "ones", "empty", "full", "arange", "tensor", "randint", "randn_like",
           "rand_like", "zeros_like", "ones_like", "empty_like", "full_like", "linspace", "eye", "randperm",
           "empty_strided", "as_tensor", "normal", "rand_like", "randint_like", "from_numpy", "cat", "stack"):
    if hasattr(torch, _n):
        setattr(torch, _n, _wrap(getattr(torch, _n)))
torch.Tensor.cuda = lambda self, *a, **k: self
_to = torch.Tensor.to
def _tensor_to(self, *a, **k):
    a = tuple(_cpu(x) if isinstance(x, (str, torch.device)) else x for x in a)
    if "device" in k:
        k["device"] = _cpu(k["device"])
    return _to(self, *a, **k)
torch.Tensor.to = _tensor_to
_dev = torch.device
class _Device:
    def __new__(cls, *a, **k):
        if a and isinstance(a[0], str) and a[0].startswith("cuda"):
            return _dev("cpu")
        return _dev(*a, **k)
torch.device = _Device

class _Event:
    def __init__(self, *a, **k): pass
    def record(self, *a, **k): pass
    def synchronize(self): pass
    def elapsed_time(self, other): return 1.0
class _Stream:
    cuda_stream = 0
    def synchronize(self): pass
    def wait_stream(self, s): pass
    def __enter__(self): return self
    def __exit__(self, *a): return False
class _Props:
    multi_processor_count = 132
    name = "sweep (no GPU)"
    major, minor = 9, 0
    total_memory = 80 << 30
c = torch.cuda
c.is_available = lambda: True
c.synchronize = lambda *a, **k: None
c.Event = _Event
c.Stream = lambda *a, **k: _Stream()
c.current_stream = lambda *a, **k: _Stream()
c.default_stream = lambda *a, **k: _Stream()
c.stream = lambda s=None: _Stream()
c.get_device_capability = lambda *a, **k: (9, 0)
c.get_device_properties = lambda *a, **k: _Props()
c.get_device_name = lambda *a, **k: _Props.name
c.current_device = lambda: 0
c.device_count = lambda: 1
c.set_device = lambda *a, **k: None
c.manual_seed = lambda *a, **k: None
c.manual_seed_all = lambda *a, **k: None
c.empty_cache = lambda: None
c.max_memory_allocated = lambda *a, **k: 0
c.reset_peak_memory_stats = lambda *a, **k: None
RUN = len(sys.argv) > 4 and sys.argv[4] == "run"
if not RUN:
    torch.testing.assert_close = lambda *a, **k: None

# tilelang.carver.arch.driver asks libcuda: the same sm_90 device with 132 SMs
import importlib
drv = importlib.import_module("tilelang_ptx.carver.arch.driver")
_attrs = {drv._MULTIPROCESSOR_COUNT: _Props.multi_processor_count, drv._COMPUTE_CAPABILITY_MAJOR: _Props.major,
          drv._COMPUTE_CAPABILITY_MINOR: _Props.minor, drv._MAX_SHARED_MEMORY_PER_BLOCK: 48 << 10,
          drv._MAX_SHARED_MEMORY_PER_BLOCK_OPTIN: 227 << 10, drv._MAX_REGISTERS_PER_BLOCK: 65536,
          drv._L2_CACHE_SIZE: 50 << 20, drv._MAX_PERSISTING_L2_CACHE_SIZE: 30 << 20}
def _attribute(attr, device_id=0):
    # what the stub does not answer (the clocks, the bus width: no figures are made up) is the driver's "cannot"
    if int(attr) not in _attrs:
        raise RuntimeError(f"sweep: attribute {int(attr)} not answered (no GPU)")
    return _attrs[int(attr)]
drv.get_device_attribute = _attribute
drv.get_device_name = lambda device_id=0: _Props.name
if not RUN:
    torch.allclose = lambda *a, **k: True

jit = importlib.import_module("tilelang_ptx.jit")
kernel = importlib.import_module("tilelang_ptx.kernel")
profiler = importlib.import_module("tilelang_ptx.profiler")
_lib = jit._lib
def _target(t):
    kind, arch = jit.resolve_target(t)
    if kind == "cpu" or RUN:
        return (None if kind == "cpu" else arch or target), _lib.TL_STAGE_SIMT
    return arch or target, _lib.TL_STAGE_PTX
jit._target = _target
_ct = jit._compile_text
def _compile_text(*a, **k):
    r = _ct(*a, **k)
    print("SWEEP-COMPILED", file=sys.stderr, flush=True)
    return r
jit._compile_text = _compile_text

def _call(self, *args, stream=None, **kw):
    outs = []
    for plan, i in zip(self._out_plan, self._outputs):
        shape = [d if isinstance(d, int) else 1 for d in plan]
        outs.append(torch.zeros(shape, dtype=kernel._torch_dtype(self.params[i].dtype)))
    if not outs:
        return None
    return outs[0] if len(outs) == 1 else outs
if not RUN:
    kernel.JITKernel.__call__ = _call
    kernel.JITKernel._call_py = _call
profiler.do_bench = lambda *a, **k: 1.0
profiler.Profiler.do_bench = lambda self, *a, **k: 1.0
if not RUN:
    profiler.Profiler.assert_allclose = lambda self, *a, **k: None
    profiler.Profiler.manual_assert_close = lambda self, *a, **k: None
    profiler.Profiler.assert_consistent = lambda self, *a, **k: None
# @tilelang.autotune: the candidates compile for the target and are measured by the inert calls above, not
# loaded onto a device (there is none)
importlib.import_module("tilelang_ptx.autotuner")._gpu = lambda: False
try:
    if RUN:
        raise ImportError
    import tilelang_ptx.testing as _t
    for _n in dir(_t):
        if "assert" in _n:
            setattr(_t, _n, lambda *a, **k: None)
except ImportError:
    pass

if len(sys.argv) > 3 and sys.argv[3] == "remarks":
    jit.set_remarks(True)
from tilelang_ptx.files import run_file
run_file(sys.argv[1], [])
'''

LOCATED = re.compile(r"^\S+\.py:\d+:\d+: error: ")
RAISED = re.compile(r"^[\w.]*(Error|Exception|Exit)\b.*:|^[\w.]*(Error|Exception)$")


REMARK = re.compile(r"(\S+\.py:\d+:\d+): remark: (.*)$")


def remarks_of(lines):
    """The distinct remarks of a run ("file:line:col: remark: text" lines), each once: "line:col: text"."""
    seen = []
    for l in lines:
        m = REMARK.search(l.strip())
        if m:
            r = m.group(1).rsplit(":", 2)[-2] + ":" + m.group(1).rsplit(":", 1)[-1] + ": " + m.group(2)
            if r not in seen:
                seen.append(r)
    return seen


def run_one(path, target, timeout, remarks=False, run=False):
    t0 = time.time()
    rec = {"file": path}
    try:
        cp = subprocess.run([sys.executable, "-c", CHILD, path, target, "remarks" if remarks else "-",
                             "run" if run else "-"],
                            cwd=os.path.dirname(path), capture_output=True, text=True, timeout=timeout)
        lines = [l for l in cp.stderr.strip().splitlines() if l.strip()]
        if remarks:
            rec["remarks"] = remarks_of(lines)
        rec["compiles"] = sum(l == "SWEEP-COMPILED" for l in lines)
        lines = [l for l in lines if not l.startswith("SWEEP-COMPILE")]
        if cp.returncode == 0:
            rec["result"] = "pass" if run else "compiles"
        else:
            located = [l for l in lines if LOCATED.search(l)]
            raised = [l for l in lines if RAISED.search(l)]
            rec["result"] = "fail"
            rec["error"] = (located or raised or lines or [f"exit {cp.returncode}"])[-1][:300]
    except subprocess.TimeoutExpired as e:
        err = e.stderr.decode() if isinstance(e.stderr, bytes) else (e.stderr or "")
        if remarks:  # the loops compiled before the limit
            rec["remarks"] = remarks_of([l for l in err.strip().splitlines() if l.strip()])
        rec.update(result="timeout", compiles=err.count("SWEEP-COMPILED\n"),
                   error=f"no end within {timeout} s (the kernels before it compiled)")
    rec["wall"] = round(time.time() - t0, 1)
    return rec


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("examples")
    ap.add_argument("out", nargs="?")
    ap.add_argument("--target", default="sm_90a")
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--timeout", type=float, default=300)
    ap.add_argument("--only", default="")
    ap.add_argument("--remarks", action="store_true",
                    help="compile with remarks on and record each file's distinct remarks (which path each "
                         "T.Pipelined GEMM or attention loop took, and why)")
    ap.add_argument("--run", action="store_true",
                    help="RUN the kernels on the CPU SIMT executor (compiled for --target's lowering, SIMT stage) "
                         "with the examples' own checks live: a correctness sweep of the examples small enough "
                         "for the CPU (the others time out)")
    a = ap.parse_args()
    files = []
    for d, _, fs in os.walk(a.examples):
        files += [os.path.join(d, f) for f in fs if f.startswith("example_") and f.endswith(".py")]
    files = sorted(f for f in files if re.search(a.only, os.path.relpath(f, a.examples)))
    out = open(a.out, "w") if a.out else None
    n = 0
    with ThreadPoolExecutor(a.jobs) as ex:
        for rec in ex.map(lambda p: run_one(os.path.abspath(p), a.target, a.timeout, a.remarks, a.run), files):
            rec["file"] = os.path.relpath(rec["file"], os.path.abspath(a.examples))
            n += rec["result"] in ("compiles", "pass")
            print(f"{rec['file']:70s} {rec['result']:8s} {rec.get('compiles', 0):3d} {rec.get('error', '')}"[:260],
                  flush=True)
            for r in rec.get("remarks", []):
                print(f"    remark {r}"[:400], flush=True)
            if out:
                out.write(json.dumps(rec) + "\n")
    what = "run to their end with their checks passing on the CPU executor" if a.run else \
        "compile every kernel they reach"
    print(f"sweep: {n}/{len(files)} examples {what} ({a.target})")


if __name__ == "__main__":
    main()
