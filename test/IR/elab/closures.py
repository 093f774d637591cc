# Closures: functions and lambdas returned by compile-time helpers keep their
# enclosing scope after it ends.
# RUN: %tl-opt %s | FileCheck %s
# CHECK: def g(A: T.Tensor((32,), "float32"), B: T.Tensor((32,), "float32")):
# CHECK: B[i] = A[i] * 2.0
import tilelang
import tilelang.language as T

def make(k):
    return lambda x: x * k

def adder(base):
    def add(x):
        return x + base
    return add

@tilelang.jit(out_idx=[1])
def f(n=32):
    twice = make(2)
    plus3 = adder(3)
    m = plus3(twice(n)) - 3 - n

    @T.prim_func
    def g(A: T.Tensor((m,), T.float32), B: T.Tensor((m,), T.float32)):
        with T.Kernel(1, threads=32) as bx:
            for i in T.Parallel(m):
                B[i] = twice(A[i])
    return g
