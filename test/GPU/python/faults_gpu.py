"""GPU check of CUDA errors through the Python package (issue 33), kernels of test/GPU/kernels/faults.py:
  1. fm_big_ws's 1 TiB workspace: the call raises tilelang.KernelError naming CUDA_ERROR_OUT_OF_MEMORY and
     the kernel; nothing ran: every torch tensor keeps its values (the caller's Out included);
  2. the same process then runs a 256^3 float16 GEMM (examples/gemm.py) matching torch.matmul;
  3. fm_oob reading 8 GiB past its input faults: the next call raises KernelError with the driver's sticky
     error and "restart the process"; a GEMM after it fails with an error naming the fault (ours or
     PyTorch's), never a wrong result.
Prints "faults-gpu: <step>: ok ..." lines and PASS; exit 0 pass, 1 fail, 77 without PyTorch or a GPU.
  PYTHONPATH=python TL_LIBRARY=build/libtilelang.so python3 test/GPU/python/faults_gpu.py
"""
import os
import sys
import time

try:
    import torch
except ImportError:
    print("faults-gpu: SKIP: no PyTorch")
    sys.exit(77)
if not torch.cuda.is_available():
    print("faults-gpu: SKIP: no CUDA GPU visible to PyTorch")
    sys.exit(77)

import tilelang_ptx as tilelang  # noqa: E402
from tilelang_ptx import KernelError  # noqa: E402

here = os.path.dirname(os.path.abspath(__file__))
root = os.path.normpath(os.path.join(here, "..", "..", ".."))
faults = tilelang.load_file(os.path.join(here, "..", "kernels", "faults.py"))
big = tilelang.compile(faults.fm_big_ws, target="cuda")
oob = tilelang.compile(faults.fm_oob, target="cuda")
gemm = tilelang.load_file(os.path.join(root, "examples", "gemm.py")).matmul(M=256, N=256, K=256)

torch.manual_seed(33)
A = torch.randn(256, device="cuda")
Out = torch.full((256,), 7.0, device="cuda")
X = torch.randn(256, 256, device="cuda", dtype=torch.float16)
Y = torch.randn(256, 256, device="cuda", dtype=torch.float16)
kept = [t.clone() for t in (A, Out, X, Y)]
failures = 0


def fail(what):
    global failures
    failures += 1
    print(f"faults-gpu: FAIL: {what}", flush=True)


# 1. out of memory for the workspace
try:
    big(A, Out)
    fail("the 1 TiB workspace call returned")
except KernelError as e:
    msg = str(e)
    if "CUDA_ERROR_OUT_OF_MEMORY" in msg and "fm_big_ws" in msg and "sticky" not in msg:
        print(f"faults-gpu: out of memory: ok ({msg.splitlines()[0]})", flush=True)
    else:
        fail(f"out of memory: {msg}")
torch.cuda.synchronize()
if not all(torch.equal(t, k) for t, k in zip((A, Out, X, Y), kept)):
    fail("a tensor changed after the failed call")

# 2. the context is fine
ref = X.float() @ Y.float()
C = gemm(X, Y)
err = (C.float() - ref).abs().max().item()
if err <= 0.05 + 1e-2 * ref.abs().max().item():
    print(f"faults-gpu: GEMM after the error: ok (max abs error {err:.4f})", flush=True)
else:
    fail(f"GEMM after the error: max abs error {err}")

# 3. a kernel that faults
try:
    oob(A, Out, 2 ** 31 - 513)  # asynchronous: the fault shows at the next call
    time.sleep(0.5)
    oob(A, Out, 2 ** 31 - 513)
    fail("two out-of-bounds calls raised nothing")
except KernelError as e:
    msg = str(e)
    if "CUDA_ERROR_" in msg and "sticky" in msg and "restart the process" in msg:
        print(f"faults-gpu: faulting kernel: ok ({msg.splitlines()[0][:300]})", flush=True)
    else:
        fail(f"faulting kernel: {msg}")
try:
    C = gemm(X, Y)
    torch.cuda.synchronize()
    if (C.float() - ref).abs().max().item() > 0.05 + 1e-2 * ref.abs().max().item():
        fail("a GEMM after the fault returned a wrong result")
    else:
        print("faults-gpu: GEMM after the fault: ok (the driver recovered)", flush=True)
except KernelError as e:
    ok = "sticky" in str(e) and "restart the process" in str(e)
    print(f"faults-gpu: GEMM after the fault refused: {'ok' if ok else 'FAIL'} ({str(e)[:200]})", flush=True)
    failures += not ok
except RuntimeError as e:  # PyTorch's allocation of the output met the dead context first
    ok = "illegal" in str(e).lower() or "CUDA error" in str(e)
    print(f"faults-gpu: GEMM after the fault refused by PyTorch: {'ok' if ok else 'FAIL'} ({str(e)[:200]})",
          flush=True)
    failures += not ok
print("faults-gpu: PASS" if not failures else f"faults-gpu: FAIL ({failures})")
sys.exit(1 if failures else 0)
