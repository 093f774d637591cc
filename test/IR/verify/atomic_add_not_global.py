# RUN: not %tl-opt %s 2>&1 | FileCheck %s
# CHECK: {{.*}}atomic_add_not_global.py:12:22: error: T.atomic_add: destination 'F' must be a global or shared buffer, but it is local.fragment
# CHECK-NOT: error:
import tilelang.language as T


@T.prim_func
def main(A: T.Tensor((16, 16), "float32")):
    with T.Kernel(1, threads=128) as bx:
        F = T.alloc_fragment((16, 16), "float32")
        T.clear(F)
        T.atomic_add(F, A)
