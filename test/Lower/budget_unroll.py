# RUN: not %tl-opt --emit=ptx -D n=100000 %s 2>&1 | FileCheck %s --check-prefix=BIG
# RUN: not %tl-opt --emit=ptx -D n=64 -D m=1024 %s 2>&1 | FileCheck %s --check-prefix=NESTED
# RUN: %tl-opt --emit=simt -D n=4095 %s 2>&1 >/dev/null | count 0
# RUN: %tl-opt --emit=simt -D n=100000 -D kind=serial %s 2>&1 >/dev/null | count 0
# Issue 15 class 5: the unrolled code-size budget (lib/Lower/budget.c), checked
# after the last lowering pass, before LLVM.  The size counts statements and
# the loads / calls in them: an iteration of j is the store and its load of
# A (2), an iteration of i is its j loop (1) plus m of those.  So the i loop
# unrolls to n * (1 + 2m) and the kernel to one more: n=100000, m=1: 300000
# and 300001.  The budget is 16384 (n = 4095: 12285 + 1, accepted; LLVM took
# 4 s on it).  Nested unrolled loops multiply: n=64, m=1024: 64 * 2049 =
# 131136, located at the outer loop (the largest expansion).  A T.serial loop
# stays a loop: no error at any extent.
# BIG: budget_unroll.py:28:17: error: the kernel unrolls to 300001 statements and accesses, over the compile budget of 16384; this loop unrolls to 300000: make it T.serial or shrink its extent
# BIG-NEXT: for i in T.unroll(n):
# NESTED: budget_unroll.py:28:17: error: the kernel unrolls to 131137 statements and accesses, over the compile budget of 16384; this loop unrolls to 131136
import tilelang
import tilelang.language as T


@tilelang.jit(out_idx=None)
def unrolled(n=32768, m=1, kind="unroll"):

    @T.prim_func
    def main(A: T.Tensor((n * m,), "float32"), B: T.Tensor((n * m,), "float32")):
        with T.Kernel(1, threads=1) as bx:
            if kind == "unroll":
                for i in T.unroll(n):
                    for j in T.unroll(m):
                        B[i * m + j] = A[i * m + j] + 1.0
            else:
                for i in T.serial(n):
                    for j in T.unroll(m):
                        B[i * m + j] = A[i * m + j] + 1.0

    return main
