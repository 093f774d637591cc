# RUN: not %tl-opt %s 2>&1 | FileCheck %s
# CHECK: {{.*}}factory_param_no_value.py:9:12: error: factory parameter 'M' has no value; pass -D M=<int>
# CHECK-NOT: error:
import tilelang
import tilelang.language as T


@tilelang.jit(out_idx=-1)
def matmul(M, N=128, block_M=64, dtype="float16"):
    @T.prim_func
    def main(A: T.Tensor((M, N), dtype), B: T.Tensor((M, N), dtype)):
        with T.Kernel(T.ceildiv(M, block_M), threads=128) as bx:
            T.copy(A[bx * block_M, 0], B[bx * block_M, 0])
    return main
