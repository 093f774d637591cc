# RUN: not %tl-opt %s 2>&1 | FileCheck %s
# CHECK: {{.*}}second_kernel_factory.py:14:9: error: only one T.Kernel per prim_func is supported
# CHECK-NOT: error:
import tilelang
import tilelang.language as T


@tilelang.jit
def kernel(N=128):
    @T.prim_func
    def main(A: T.Tensor((N,), "float32")):
        with T.Kernel(1, threads=128) as bx:
            A[bx] = 0.0
        with T.Kernel(1, threads=128) as bx:
            A[bx] = 1.0
    return main
