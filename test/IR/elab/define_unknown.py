# RUN: not %tl-opt -D nosuch=1 %s 2>&1 | FileCheck %s
# CHECK: <command line>: error: -D nosuch: no factory parameter named 'nosuch'
# CHECK-NOT: error:
import tilelang
import tilelang.language as T

N = 256


@T.prim_func
def main(A: T.Tensor((N,), "float32")):
    with T.Kernel(1, threads=128) as bx:
        A[bx] = 0.0
