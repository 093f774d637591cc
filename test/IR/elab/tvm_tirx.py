# RUN: %tl-opt %s | FileCheck %s
# TVM's TIR builders as TileLang's dequantize helpers call them (lib/Frontend/elab_tvm.c):
# tirx.const / IntImm / FloatImm are typed literals (an int without a dtype is int32, a
# float float32), reinterpret / Cast / Select / max / min mean the T functions, the bit
# operations (tirx.* and T.bitwise_* / T.shift_*) the operators; tvm.DataType(dtype) is
# the dtype (.bits); a buffer element has its buffer's .dtype; a uint8 value beside a
# uint16 one (a typed constant too) is widened first, a Python int takes the other's dtype.
import tilelang
import tilelang.language as T
from tilelang import tvm as tvm
from tvm import DataType
from tvm import tirx

BITS = DataType("bfloat16").bits


def fields(v, k):
    assert v.dtype == T.uint8 and BITS == 16
    f = (v >> (k.astype(T.uint16) * tirx.const(4, T.uint16))) & tirx.const(15, T.uint16)
    return tirx.reinterpret(T.float16, tirx.shift_left(f, tirx.const(10, T.uint16)))


@T.prim_func
def main(A: T.Tensor((8,), "uint8"), B: T.Tensor((16,), "float16"), C: T.Tensor((8,), "int32")):
    with T.Kernel(1, threads=32) as bx:
        for i in T.Parallel(16):
            B[i] = fields(A[i // 2], i % 2)
        for i in T.Parallel(8):
            C[i] = tirx.bitwise_and(T.Cast("int32", A[i]), tirx.const(7)) + T.bitwise_xor(tirx.IntImm("int32", 5), 3)
        C[0] = tirx.Select(A[0] > tirx.const(1, "uint8"), tirx.max(C[1], C[2]), T.shift_right(C[3], 1))
        C[1] = T.Cast("int32", tirx.FloatImm("float32", 2.5) * tirx.const(2.0)) + tirx.bitwise_not(C[4])
        C[2] = tirx.Cast("int32", tirx.min(A[1], tirx.const(9, "uint8"))) | T.bitwise_or(C[5], 1) << 2
        C[3] = T.Cast("int32", A[2] << tirx.const(4, "uint16")) + T.Cast("int32", A[3] << 4)

# CHECK:      for i in T.Parallel(16):
# CHECK-NEXT:   B[i] = T.reinterpret("float16", (T.Cast("uint16", A[i // 2]) >> T.Cast("uint16", i % 2) * T.uint16(4) & T.uint16(15)) << T.uint16(10))
# CHECK:        C[i] = (T.Cast("int32", A[i]) & 7) + 6
# CHECK:      C[0] = T.if_then_else(A[0] > T.uint8(1), T.max(C[1], C[2]), C[3] >> 1)
# CHECK-NEXT: C[1] = 5 + ~C[4]
# CHECK-NEXT: C[2] = T.Cast("int32", T.min(A[1], T.uint8(9))) | (C[5] | 1) << 2
# CHECK-NEXT: C[3] = T.Cast("int32", T.Cast("uint16", A[2]) << T.uint16(4)) + T.Cast("int32", A[3] << T.uint8(4))
