# RUN: not %tl-opt %s 2>&1 | FileCheck %s
# CHECK: {{.*}}return_undefined.py:14:12: error: name 'mian' is not defined
# CHECK-NOT: error:
import tilelang
import tilelang.language as T


@tilelang.jit(out_idx=-1)
def kernel(N=256):
    @T.prim_func
    def main(A: T.Tensor((N,), "float32"), B: T.Tensor((N,), "float32")):
        with T.Kernel(1, threads=128) as bx:
            T.copy(A, B)
    return mian
