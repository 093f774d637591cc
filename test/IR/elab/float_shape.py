# RUN: not %tl-opt %s 2>&1 | FileCheck %s
# CHECK: {{.*}}float_shape.py:15:33: error: shape dimension must be an integer, got float 64.5
# CHECK-NOT: error:
import tilelang
import tilelang.language as T


@tilelang.jit
def kernel(N=128):
    tile = N / 2 + 0.5

    @T.prim_func
    def main(A: T.Tensor((N,), "float32")):
        with T.Kernel(1, threads=128) as bx:
            S = T.alloc_shared((tile,), "float32")
            T.copy(A[0], S)
    return main
