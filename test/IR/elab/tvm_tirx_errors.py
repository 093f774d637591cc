# RUN: not %tl-opt %s 2>&1 | FileCheck %s
# What TVM's TIR builders refuse (lib/Frontend/elab_tvm.c), each at its location: a
# constant its dtype cannot hold, a builder not supported yet, a region's dtype (TVM's
# BufferRegion has none), and T.call_extern / T.import_source of CUDA C++ this compiler does
# not know (test/IR/elab/call_extern_errors.py has the rest); bit operations on float
# expressions (the fuzzer's find: the printer wrote them back as text that did not parse).
import tilelang.language as T
from tvm import tirx


@T.prim_func
def main(A: T.Tensor((8,), "uint8"), B: T.Tensor((8,), "float32")):
    with T.Kernel(1, threads=32) as bx:
        B[0] = tirx.const(300, "uint8")
        B[1] = tirx.const(1.5, "int32")
        B[2] = tirx.const("x")
        B[3] = tirx.popcount(A[0])
        B[4] = A[0:4].dtype.bits
        T.import_source("__device__ void f(){}")
        T.call_extern("f", dtype="float32")
        B[5] = tirx.shift_left(tirx.const(2.0), tirx.const(10.0))
        B[6] = tirx.bitwise_and(B[0], 3)
        B[7] = tirx.bitwise_not(tirx.FloatImm("float32", 2.5))
        A[1] = A[0] | (A[2] > 1)

# CHECK: tvm_tirx_errors.py:14:27: error: tirx.const: 300 is not a value of uint8
# CHECK: tvm_tirx_errors.py:15:27: error: tirx.const: the float 1.5 is not a value of int32
# CHECK: tvm_tirx_errors.py:16:27: error: tirx.const expects a number, got string 'x'
# CHECK: tvm_tirx_errors.py:17:16: error: 'tvm.tirx.popcount' (TVM's TIR builder) is not supported yet
# CHECK: tvm_tirx_errors.py:18:23: error: 'BufferRegion' object has no attribute 'dtype'
# CHECK: tvm_tirx_errors.py:19:11: error: T.import_source is not supported for this source: this compiler does not compile CUDA C++
# CHECK: tvm_tirx_errors.py:20:9: error: T.call_extern takes 3 to 4 arguments, got 1
# CHECK: tvm_tirx_errors.py:21:16: error: unsupported operand types for <<: float32 and float32 (bit operations take integers)
# CHECK: tvm_tirx_errors.py:22:16: error: unsupported operand types for &: float32 and int32 (bit operations take integers)
# CHECK: tvm_tirx_errors.py:23:16: error: bad operand type for unary ~: float32 (bit operations take integers)
# CHECK-NOT: error
