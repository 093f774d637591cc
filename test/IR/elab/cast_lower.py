# T.cast(value, dtype) (TVM's tir.cast, exported by TileLang) is T.Cast(dtype, value).
# RUN: %tl-opt %s | FileCheck %s
# RUN: not %tl-opt -D bad=1 %s 2>&1 | FileCheck %s --check-prefix=ERR
# CHECK: B[bx, 0] = T.Cast("float16", A[bx, 0]) * T.Cast("float16", A[bx, 1])
# ERR: cast_lower.py:[[@LINE+9]]:{{[0-9]+}}: error: {{.*}}
import tilelang.language as T

bad = 0


@T.prim_func
def main(A: T.Tensor((4, 2), "int8"), B: T.Tensor((4, 1), "float16")):
    with T.Kernel(4, threads=32) as bx:
        B[bx, 0] = T.cast(A[bx, 0], "float16") * T.cast(A[bx, 1], "float16" if bad == 0 else "floaty")
