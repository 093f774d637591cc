# RUN: not %tl-opt %s 2>&1 | FileCheck %s
# CHECK: {{.*}}gemm_c_not_fragment.py:13:26: error: T.gemm: C must be a fragment (local.fragment), but 'C_s' is shared.dyn
# CHECK-NOT: error:
import tilelang.language as T


@T.prim_func
def main(A: T.Tensor((1024, 1024), "float16")):
    with T.Kernel(8, threads=128) as bx:
        A_s = T.alloc_shared((64, 32), "float16")
        B_s = T.alloc_shared((32, 64), "float16")
        C_s = T.alloc_shared((64, 64), "float32")
        T.gemm(A_s, B_s, C_s)
