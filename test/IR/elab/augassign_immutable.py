# RUN: not %tl-opt %s 2>&1 | FileCheck %s
# CHECK: {{.*}}augassign_immutable.py:11:9: error: cannot assign to 'acc': it is immutable; use T.alloc_var
# CHECK-NOT: error:
import tilelang.language as T


@T.prim_func
def main(A: T.Tensor((128,), "float32")):
    with T.Kernel(1, threads=128) as bx:
        acc = A[bx] * 2.0
        acc += 1.0
        A[bx] = acc
