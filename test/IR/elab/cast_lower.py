# T.cast(value, dtype) and T.cast(value, dtype=...) (TVM's tir.cast, exported by TileLang) are T.Cast(dtype, value).
# RUN: %tl-opt %s | FileCheck %s
# RUN: not %tl-opt -D bad=1 %s 2>&1 | FileCheck %s --check-prefix=ERR
# RUN: not %tl-opt -D bad=2 %s 2>&1 | FileCheck %s --check-prefix=UNROLL
# RUN: not %tl-opt -D bad=3 %s 2>&1 | FileCheck %s --check-prefix=FNUZ
# CHECK: B[bx, 0] = T.Cast("float16", A[bx, 0]) * T.Cast("float16", A[bx, 1])
# ERR: cast_lower.py:[[@LINE+14]]:{{[0-9]+}}: error: unknown dtype 'floaty'
# UNROLL: cast_lower.py:[[@LINE+11]]:22: error: T.Unroll is not supported yet
# FNUZ: cast_lower.py:[[@LINE+12]]:{{[0-9]+}}: error: dtype 'float8_e4m3fnuz' is not supported yet
import tilelang.language as T

bad = 0


@T.prim_func
def main(A: T.Tensor((4, 2), "int8"), B: T.Tensor((4, 1), "float16")):
    with T.Kernel(4, threads=32) as bx:
        if bad == 2:
            for i in T.Unroll(2):
                B[bx, 0] = T.cast(A[bx, i], "float16")
        B[bx, 0] = T.cast(A[bx, 0], "float16") * T.cast(A[bx, 1], dtype="float16" if bad == 0 else "floaty" if bad == 1 else "float8_e4m3fnuz")
