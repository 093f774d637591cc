# RUN: not %tl-opt %s 2>&1 | FileCheck %s
# CHECK: {{.*}}use_swizzle_panel.py:10:23: error: T.use_swizzle: panel_size must be positive, got 0
# CHECK-NOT: error:
import tilelang.language as T


@T.prim_func
def main(A: T.Tensor((128,), "float32")):
    with T.Kernel(4, threads=128) as bx:
        T.use_swizzle(0)
        A[bx] = 0.0
