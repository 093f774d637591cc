# RUN: not %tl-opt %s 2>&1 | FileCheck %s
# CHECK: {{.*}}slice_step.py:11:24: error: slices with a step are not supported in buffer regions
# CHECK-NOT: error:
import tilelang.language as T


@T.prim_func
def main(A: T.Tensor((128,), "float32")):
    with T.Kernel(1, threads=128) as bx:
        S = T.alloc_shared((64,), "float32")
        T.copy(A[0:128:2], S)
