# RUN: not %tl-opt %s 2>&1 | FileCheck %s
# CHECK: {{.*}}shared_out_of_bounds.py:11:25: error: T.copy: region 16:48 of 'S' is out of bounds in dimension 0 (extent 32)
# CHECK-NOT: error:
import tilelang.language as T


@T.prim_func
def main(A: T.Tensor((1024,), "float32")):
    with T.Kernel(8, threads=128) as bx:
        S = T.alloc_shared((32,), "float32")
        T.copy(A[0:32], S[16:48])
