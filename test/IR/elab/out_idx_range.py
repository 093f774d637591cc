# RUN: not %tl-opt %s 2>&1 | FileCheck %s
# CHECK: {{.*}}out_idx_range.py:8:23: error: out_idx -5 is out of range for 3 parameters
# CHECK-NOT: error:
import tilelang
import tilelang.language as T


@tilelang.jit(out_idx=-5)
def kernel(N=128):
    @T.prim_func
    def main(A: T.Tensor((N,), "float32"), B: T.Tensor((N,), "float32"), C: T.Tensor((N,), "float32")):
        with T.Kernel(1, threads=128) as bx:
            for i in T.Parallel(N):
                C[i] = A[i] + B[i]
    return main
