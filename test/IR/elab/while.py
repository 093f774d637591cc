# RUN: %tl-opt --kernel=loops %s | FileCheck %s
# RUN: %tl-opt --kernel=loops %s > %t.tir && %tl-opt %t.tir | diff %t.tir -
# RUN: not %tl-opt --kernel=always %s 2>&1 | FileCheck %s --check-prefix=ALWAYS
# RUN: not %tl-opt --kernel=with_else %s 2>&1 | FileCheck %s --check-prefix=ELSE
# RUN: not %tl-opt --kernel=float_cond %s 2>&1 | FileCheck %s --check-prefix=FLOAT
# `while COND:` in a kernel body (TVMScript's T.While, tir.While): printed as
# written and parsed back; an integer condition compares != 0; a
# compile-time false condition makes no statement, a compile-time true one
# is an error (no 'break': the loop would never end), and so is 'else'.
# T.alloc_fragment(shape, dtype, "local") is a per-thread local buffer, as in
# TileLang (the scope decides).
import tilelang
import tilelang.language as T


@tilelang.jit
def loops(N=64):
    @T.prim_func
    def loops_main(A: T.Tensor((N,), "int32"), B: T.Tensor((N,), "int32")):
        with T.Kernel(2, threads=32) as bx:
            # CHECK: start = T.alloc_local((1,), "int32")
            start = T.alloc_fragment((1,), T.int32, "local")
            n = T.alloc_var("int32")
            start[0] = bx * 4
            n = A[bx]
            # CHECK: while start[0] < bx * 4 + 4:
            # CHECK-NEXT: B[start[0]] = start[0]
            # CHECK-NEXT: start[0] = start[0] + 1
            while start[0] < bx * 4 + 4:
                B[start[0]] = start[0]
                start[0] = start[0] + 1
            # CHECK: while n[0] != 0:
            # CHECK-NEXT: n[0] = n[0] - 1
            # CHECK-NEXT: while n[0] > 4:
            while n:
                n = n - 1
                while n > 4:
                    n = n - 2
            # CHECK-NOT: while
            while N < 0:
                B[0] = 1

    return loops_main


@tilelang.jit
def always(N=64):
    @T.prim_func
    def always_main(A: T.Tensor((N,), "int32")):
        with T.Kernel(1, threads=32) as bx:
            # ALWAYS: while.py:[[@LINE+1]]:19: error: the condition of this 'while' loop is always true ('break' is not supported): the loop would never end
            while N > 0:
                A[0] = 1

    return always_main


@tilelang.jit
def with_else(N=64):
    @T.prim_func
    def with_else_main(A: T.Tensor((N,), "int32")):
        with T.Kernel(1, threads=32) as bx:
            i = T.alloc_var("int32")
            while i < 3:
                i = i + 1
            else:
                # ELSE: while.py:[[@LINE+1]]:17: error: 'else' after a 'while' loop is not supported in a @T.prim_func
                A[0] = 1

    return with_else_main


@tilelang.jit
def float_cond(N=64):
    @T.prim_func
    def float_main(A: T.Tensor((N,), "float32")):
        with T.Kernel(1, threads=32) as bx:
            # FLOAT: while.py:[[@LINE+1]]:19: error: the condition of a 'while' loop must be a bool or an integer, got float32
            while A[0]:
                A[0] = A[0] - 1.0

    return float_main
