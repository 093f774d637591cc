# Errors of the eager style: a T.const without a value, out_idx given as
# well as returned T.empty outputs, T.empty outside an eager kernel.
# RUN: not %tl-opt --kernel=add %s 2>&1 | FileCheck %s --check-prefix=CONST
# RUN: not %tl-opt --kernel=add -D N=64 -D M=8 %s 2>&1 | FileCheck %s --check-prefix=BOTH
# RUN: not %tl-opt --kernel=stray %s 2>&1 | FileCheck %s --check-prefix=EMPTY
# CONST: eager-errors.py:[[@LINE+9]]:9: error: T.const 'N' has no value; pass -D N=<int> (or call add.compile(...) in the file)
# BOTH: eager-errors.py:[[@LINE+6]]:23: error: out_idx is given and the kernel returns its T.empty outputs; use one or the other
# EMPTY: eager-errors.py:[[@LINE+18]]:9: error: T.empty declares an output of an eager @tilelang.jit kernel
import tilelang
import tilelang.language as T


@tilelang.jit(out_idx=[1])
def add(A, M=4):
    N = T.const("N")
    A: T.Tensor((N,), T.float32)
    B = T.empty((N,), T.float32)
    with T.Kernel(1, threads=32) as bx:
        for i in T.Parallel(N):
            B[i] = A[i] + M
    return B


@tilelang.jit
def stray(n=32):
    C = T.empty((n,), T.float32)

    @T.prim_func
    def k(A: T.Tensor((n,), T.float32)):
        with T.Kernel(1, threads=32) as bx:
            A[0] = 1.0

    return k
