# RUN: not %tl-opt -D block_M=abc %s 2>&1 | FileCheck %s
# CHECK: {{.*}}define_string_shape.py:14:40: error: shape dimension must be an integer, got string 'abc'
# CHECK-NEXT: A_shared = T.alloc_shared((block_M, 32), dtype)
# CHECK: <command line>: note: 'block_M' was set by -D block_M=abc
# CHECK-NOT: error:
import tilelang.language as T


def kernel(block_M=32, dtype="float16"):
    @T.prim_func
    def main(A: T.Tensor((1024, 32), dtype)):
        with T.Kernel(9223372036854775807, threads=128) as bx:
            A_shared = T.alloc_shared((block_M, 32), dtype)
            T.copy(A[bx * 128, 0], A_shared)
    return main
