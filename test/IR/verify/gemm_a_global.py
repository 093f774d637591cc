# RUN: not %tl-opt %s 2>&1 | FileCheck %s
# CHECK: {{.*}}gemm_a_global.py:12:16: error: T.gemm: A must be in shared memory (shared.dyn or shared) or a fragment (local.fragment), but 'A' is global
# CHECK-NOT: error:
import tilelang.language as T


@T.prim_func
def main(A: T.Tensor((1024, 1024), "float16")):
    with T.Kernel(8, threads=128) as bx:
        B_s = T.alloc_shared((1024, 64), "float16")
        C_l = T.alloc_fragment((1024, 64), "float32")
        T.gemm(A, B_s, C_l)
