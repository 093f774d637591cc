# RUN: not %tl-opt %s 2>&1 | FileCheck %s
# CHECK: {{.*}}copy_arity.py:11:9: error: T.copy takes 2 positional arguments, got 3
# CHECK-NOT: error:
import tilelang.language as T


@T.prim_func
def main(A: T.Tensor((128,), "float32"), B: T.Tensor((128,), "float32")):
    with T.Kernel(1, threads=128) as bx:
        S = T.alloc_shared((128,), "float32")
        T.copy(A, S, B)
