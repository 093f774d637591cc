# Module-level host code is parsed and never run: torch calls, argparse,
# loops, with/try/del, tuple assignments (unpacked lazily, only when a kernel
# uses a name).
# RUN: %tl-opt %s | FileCheck %s
# CHECK: def k(A: T.Tensor((64,), "float32")):
# CHECK: def k2(A: T.Tensor((16, 8), "float32")):
# CHECK: A[i, j] = 4.0
import torch
import tilelang
import tilelang.language as T
import argparse

a, b = torch.randn(2), 3
counter = 0
counter += torch.cuda.device_count()
if torch.cuda.is_available():
    dev = "cuda"
else:
    dev = "cpu"
for i in range(3):
    pass
while False:
    pass
with torch.no_grad():
    x = torch.zeros(3)
try:
    import triton
except ImportError:
    triton = None
del x
parser = argparse.ArgumentParser()
parser.add_argument("--m", type=int, default=128)
args, _ = parser.parse_known_args()
N = 64
props = torch.cuda.get_device_properties(0)

@T.prim_func
def k(A: T.Tensor((N,), T.float32)):
    with T.Kernel(1, threads=32) as bx:
        for i in T.Parallel(N):
            A[i] = 1.0

M, (P, Q) = 16, (1, 2)
K2, L2 = 8, 4

@T.prim_func
def k2(A: T.Tensor((M, K2), T.float32)):
    with T.Kernel(1, threads=32) as bx:
        for i, j in T.Parallel(M, K2):
            A[i, j] = 1.0 * L2
