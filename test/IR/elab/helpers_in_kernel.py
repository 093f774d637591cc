# Plain compile-time helpers called inside a prim_func body, with Python's
# meaning: names bind expressions (no lets), a store or tile op in the helper
# is emitted where it is called (never dropped); a helper that needs the host
# at compile time is a located error with a note at the call; a store in a
# helper run outside a prim_func body is an error.
# RUN: %tl-opt %s | FileCheck %s
# RUN: %tl-run --device=cpu --check %s | FileCheck %s --check-prefix=EXEC
# RUN: not %tl-opt -D bad=1 %s 2>&1 | FileCheck %s --check-prefix=HOST
# RUN: not %tl-opt -D bad=2 %s 2>&1 | FileCheck %s --check-prefix=STORE
# CHECK: for i in T.Parallel(64):
# CHECK-NEXT: B[(i + 1) % 64] = A[i]
# CHECK-NEXT: T.fill(C, 1.0)
# EXEC: check: PASS
# HOST: helpers_in_kernel.py:{{[0-9]+}}:8: error: a condition in 'check_hopper' must be a compile-time constant, got 'torch.cuda.is_available(...)'
# HOST: helpers_in_kernel.py:{{[0-9]+}}:18: note: in compile-time function 'check_hopper', called here
# STORE: helpers_in_kernel.py:{{[0-9]+}}:5: error: item assignment is only supported on buffers inside a @T.prim_func
# STORE: helpers_in_kernel.py:{{[0-9]+}}:18: note: in compile-time function 'put', called here
import torch
import tilelang
import tilelang.language as T


def wrap(i, n):
    y = i + 1
    y %= n
    return y


def put(buf, i, v):
    buf[i] = v


def ones(buf):
    T.fill(buf, 1.0)


def check_hopper():
    if not torch.cuda.is_available():
        return False
    return True


@tilelang.jit(out_idx=[1, 2])
def helpers_in_kernel(N=64, bad=0):
    if bad == 1:
        hopper = check_hopper()
    if bad == 2:
        unused = put([0], 0, 1)

    @T.prim_func
    def helpers_in_kernel(A: T.Tensor((N,), "float32"), B: T.Tensor((N,), "float32"),
                          C: T.Tensor((N,), "float32")):
        with T.Kernel(1, threads=64) as bx:
            for i in T.Parallel(N):
                put(B, wrap(i, N), A[i])
            ones(C)

    return helpers_in_kernel
