# RUN: not %tl-opt %s 2>&1 | FileCheck %s
# CHECK: {{.*}}gemm_dtypes.py:13:9: error: T.gemm: unsupported dtypes: A float16, B float16, C int32 (accepted: A and B float16 with C float16 or float32, bfloat16 with float32, int8 with int32, tfloat32 with float32, float32 (computed as tf32) with float32, uint8 with int32, float64 with float64, float8_e4m3/float8_e5m2 (either for A and for B) with float32, int4/uint4 with int32)
# CHECK-NOT: error:
import tilelang.language as T


@T.prim_func
def main(A: T.Tensor((1024, 1024), "float16")):
    with T.Kernel(8, threads=128) as bx:
        A_s = T.alloc_shared((64, 32), "float16")
        B_s = T.alloc_shared((32, 64), "float16")
        C_l = T.alloc_fragment((64, 64), "int32")
        T.gemm(A_s, B_s, C_l)
