# Compile-time helper functions and lambdas: called from a factory (on
# constants) and from a kernel (on expressions); keyword-only and default
# parameters, *args, nested defs, loops over constants.
# RUN: %tl-opt %s | FileCheck %s
# RUN: %tl-run --device=cpu --check %s | FileCheck %s --check-prefix=EXEC
# RUN: not %tl-opt -D use_bad=True %s 2>&1 | FileCheck %s --check-prefix=BAD
# CHECK: def axpb(A: T.Tensor((96,), "float32"), B: T.Tensor((96,), "float32")):
# CHECK: with T.Kernel(3, threads=32) as bx:
# CHECK: B[i] = A[i] * 2.0 + 6.0
# EXEC: check: PASS
# BAD: helpers.py:[[@LINE+21]]:5: error: this statement is not supported in 'bad' at compile time
import tilelang
import tilelang.language as T


def cdiv(a, b):
    """ceil(a / b) for ints"""
    return (a + b - 1) // b


def total(*xs, start=0):
    for x in xs:
        start += x
    return start


def forward(*args, **kwargs):
    return total(*args, **kwargs)


def bad(n):
    while n > 0:
        n -= 1
    return n


@tilelang.jit(out_idx=[1])
def axpb(n=96, block=32, use_bad=False):
    scale = lambda x, s=2.0: x * s
    if use_bad:
        unused = bad(3)

    def shift(x, *, by):
        return x + by

    nblocks = cdiv(n, block)
    offset = forward(1, *[2], **{"start": 3})

    @T.prim_func
    def axpb(A: T.Tensor((n,), T.float32), B: T.Tensor((n,), T.float32)):
        with T.Kernel(nblocks, threads=block) as bx:
            for i in T.Parallel(n):
                B[i] = shift(scale(A[i]), by=float(offset))

    return axpb
