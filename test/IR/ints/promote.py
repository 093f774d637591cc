# An int constant that the other operand's dtype cannot hold promotes that
# operand (TVM's rule): the constant is never truncated to int32 (issue 15).
# Constants that fit keep taking the other operand's dtype.
# RUN: %tl-opt %s | FileCheck %s
# CHECK:      O[i] = T.Cast("int64", i) + T.int64(4294967296)
# CHECK-NEXT: O[i] = T.Cast("int64", i) + T.int64(2147483648)
# CHECK-NEXT: O[i] = T.Cast("int64", i) * T.int64(4294967296)
# CHECK-NEXT: O[i] = T.int64(9223372036854775807) + T.Cast("int64", i)
# CHECK-NEXT: O[i] = T.Cast("int64", i) - T.int64(2147483649)
# CHECK-NEXT: O[i] = T.Cast("int64", T.Cast("int64", i) + T.int64(-2147483649) < T.int64(0))
# CHECK-NEXT: O[i] = T.Cast("int64", i + 5)
# CHECK-NEXT: O[i] = T.Cast("int64", i + -2147483648)
# CHECK-NEXT: O[i] = T.int64(4294967301)
# CHECK-NEXT: O[i] = T.if_then_else(i < 3, T.Cast("int64", i), T.int64(8589934592))
# CHECK-NEXT: S[i] = T.Cast("int8", T.Cast("int32", S[i]) + 300)
# CHECK-NEXT: S[i] = S[i] + T.int8(-128)
# CHECK-NEXT: U[i] = U[i] + T.uint32(4294967295)
# CHECK-NEXT: U[i] = T.Cast("uint32", T.Cast("int64", U[i]) + T.int64(-1))
import tilelang.language as T


@T.prim_func
def main(O: T.Tensor((8,), "int64"), S: T.Tensor((8,), "int8"), U: T.Tensor((8,), "uint32")):
    with T.Kernel(1, threads=8) as bx:
        for i in T.Parallel(8):
            O[i] = i + 4294967296
            O[i] = i + 2**31
            O[i] = i * 2**32
            O[i] = 9223372036854775807 + i
            O[i] = i - 2147483649
            O[i] = i + -2147483649 < 0
            O[i] = i + 5
            O[i] = i + -2147483648
            O[i] = 5 + 4294967296
            O[i] = T.if_then_else(i < 3, i, 8589934592)
            S[i] = S[i] + 300
            S[i] = S[i] + -128
            U[i] = U[i] + 4294967295
            U[i] = U[i] + T.int64(-1)
