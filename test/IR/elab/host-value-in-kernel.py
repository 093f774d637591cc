# A host value that a kernel reaches is an error at the use, naming it.
# RUN: not %tl-opt %s 2>&1 | FileCheck %s
# CHECK: host-value-in-kernel.py:[[@LINE+7]]:19: error: 'torch.cuda.get_device_properties(...).multi_processor_count' cannot be used in a kernel (it is a host value, not TileLang)
import torch
import tilelang.language as T
sm = torch.cuda.get_device_properties(0).multi_processor_count

@T.prim_func
def k(A: T.Tensor((128,), T.float32)):
    with T.Kernel(sm, threads=32) as bx:
        A[bx] = 1.0
