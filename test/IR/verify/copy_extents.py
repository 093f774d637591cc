# RUN: not %tl-opt %s 2>&1 | FileCheck %s
# CHECK: {{.*}}copy_extents.py:11:9: error: T.copy: extents disagree: source A[...] has extents (128, 32) but destination A_shared has (64, 32)
# CHECK-NOT: error:
import tilelang.language as T


@T.prim_func
def main(A: T.Tensor((1024, 1024), "float16")):
    with T.Kernel(8, threads=128) as bx:
        A_shared = T.alloc_shared((64, 32), "float16")
        T.copy(A[0:128, 0:32], A_shared)
