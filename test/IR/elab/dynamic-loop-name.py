# A loop variable named like a T.dynamic symbol gets a fresh IR name (IR names
# are unique in a prim_func); the Python name still refers to it.
# RUN: %tl-opt %s | FileCheck %s
# CHECK: def g(A: T.Tensor((k,), "float32")):
# CHECK: for k_1 in T.serial(4):
# CHECK-NEXT: A[k_1] = 1.0
import tilelang
import tilelang.language as T

@tilelang.jit
def f(block=32):
    K = T.dynamic("k")
    @T.prim_func
    def g(A: T.Tensor((K,), T.float32)):
        with T.Kernel(1, threads=32) as bx:
            for k in T.serial(4):
                A[k] = 1.0
    return g
