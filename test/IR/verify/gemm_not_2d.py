# RUN: not %tl-opt %s 2>&1 | FileCheck %s
# CHECK: {{.*}}gemm_not_2d.py:13:21: error: T.gemm: B must be 2-D, but 'B_s' has shape (2, 32, 64)
# CHECK-NOT: error:
import tilelang.language as T


@T.prim_func
def main(A: T.Tensor((1024, 1024), "float16")):
    with T.Kernel(8, threads=128) as bx:
        A_s = T.alloc_shared((64, 32), "float16")
        B_s = T.alloc_shared((2, 32, 64), "float16")
        C_l = T.alloc_fragment((64, 64), "float32")
        T.gemm(A_s, B_s, C_l)
