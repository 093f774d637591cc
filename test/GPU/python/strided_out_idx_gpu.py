"""GPU check of out_idx with a T.StridedTensor parameter (issue 33), kernel test/GPU/kernels/strided.py:
  1. out_idx naming the strided parameter A is refused before anything runs, with the located error, for a
     constant and a dynamic row stride;
  2. the kernel with its own out_idx (B) runs on a strided torch view of a larger buffer (row stride 96,
     constant and dynamic), and on a contiguous tensor for the dynamic form: B == 2 * A + 1 exactly;
     the buffer around the view keeps its values.
Meant to run under compute-sanitizer memcheck (its summary must say 0 errors):
  compute-sanitizer --tool memcheck python3 test/GPU/python/strided_out_idx_gpu.py
Prints "strided-gpu: <step>: ok" lines and PASS; exit 0 pass, 1 fail, 77 without PyTorch or a GPU.
"""
import os
import sys
import tempfile

try:
    import torch
except ImportError:
    print("strided-gpu: SKIP: no PyTorch")
    sys.exit(77)
if not torch.cuda.is_available():
    print("strided-gpu: SKIP: no CUDA GPU visible to PyTorch")
    sys.exit(77)

import tilelang_ptx as tilelang  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
STRIDED = os.path.join(ROOT, "test", "GPU", "kernels", "strided.py")
fails = 0


def step(name, ok, detail=""):
    global fails
    print(f"strided-gpu: {name}: {'ok' if ok else 'FAIL'} {detail}".rstrip(), flush=True)
    fails += 0 if ok else 1


with tempfile.TemporaryDirectory() as d:
    path = os.path.join(d, "strided_out.py")
    with open(STRIDED) as f:
        open(path, "w").write(f.read().replace("out_idx=[-1]", "out_idx=[-2]"))
    for dyn in (False, True):
        try:
            tilelang.load_file(path).strided(dynamic_ld=dyn)
            step(f"out_idx=[-2] refused (dynamic_ld={dyn})", False, "compiled")
        except (tilelang.ArgumentError, tilelang.CompileError) as e:
            msg = str(e)
            step(f"out_idx=[-2] refused (dynamic_ld={dyn})",
                 "out_idx -2 names 'A', a T.StridedTensor" in msg and "strided_out.py:" in msg, msg.splitlines()[0])

mod = tilelang.load_file(STRIDED)
big = torch.randn(64, 96, device="cuda", dtype=torch.float32)
keep = big.clone()
view = big[:, :64]
for dyn in (False, True):
    k = mod.strided(dynamic_ld=dyn)
    out = k(view)
    torch.cuda.synchronize()
    step(f"strided view (dynamic_ld={dyn})", torch.equal(out, view * 2.0 + 1.0) and torch.equal(big, keep))
k = mod.strided(dynamic_ld=True)
a = torch.randn(64, 64, device="cuda", dtype=torch.float32)
out = k(a)
torch.cuda.synchronize()
step("contiguous A (dynamic_ld=True, ld=64)", torch.equal(out, a * 2.0 + 1.0))
print("strided-gpu:", "PASS" if fails == 0 else f"FAIL ({fails})")
sys.exit(1 if fails else 0)
