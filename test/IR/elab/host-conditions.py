# Module-level host statements (augmented assignments, conditions on host values)
# are not errors; a name set under a host condition is an error only where a
# kernel uses it.
# RUN: %tl-opt --kernel=ok %s | FileCheck %s
# RUN: not %tl-opt --kernel=k %s 2>&1 | FileCheck %s --check-prefix=HOST
# CHECK: def ok(A: T.Tensor((8,), "float32")):
# HOST: host-conditions.py:[[@LINE+17]]:20: error: 'N (set under the host condition on line 17)' cannot be used in a kernel (it is a host value, not TileLang)
import os, sys
import torch
import tilelang.language as T
sys.path += [os.path.dirname(__file__)]
os.environ["CUDA_VISIBLE_DEVICES"] = "0"
torch.backends.cuda.matmul.allow_tf32 = True
counter = 0
counter += 1
missing += 1
if os.environ.get("X") == "1" and undefined_name:
    N = 64
else:
    N = 32
for _ in range(2): counter += 1

@T.prim_func
def k(A: T.Tensor((N,), T.float32)):
    with T.Kernel(1, threads=32) as bx:
        A[0] = 1.0


@T.prim_func
def ok(A: T.Tensor((8,), T.float32)):
    with T.Kernel(1, threads=32) as bx:
        A[0] = 1.0 * counter
