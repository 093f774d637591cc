# @T.macro (TileLang's eager macro): a module-level and a factory-local macro
# inlined where a prim_func calls them; an argument that is an IR expression
# other than a variable gets a let (evaluated once); names the macro declares
# that would shadow the caller's are renamed NAME_N; a last top-level return
# gives the call's value; plain helpers bind names as Python does.
# RUN: %tl-opt %s | FileCheck %s
# RUN: %tl-run --device=cpu --check %s | FileCheck %s --check-prefix=EXEC
# RUN: not %tl-opt -D bad=1 %s 2>&1 | FileCheck %s --check-prefix=RET
# RUN: not %tl-opt -D bad=2 %s 2>&1 | FileCheck %s --check-prefix=OUTSIDE
# RUN: not %tl-opt -D bad=3 %s 2>&1 | FileCheck %s --check-prefix=REF
# CHECK: with T.Kernel(2, threads=32) as bx:
# CHECK-NEXT: for i in T.Parallel(32):
# CHECK-NEXT: tmp = A[bx * 32 + i] + 1.0
# CHECK-NEXT: r = bx * 32 + i
# CHECK-NEXT: s = A[bx * 32 + i] * 0.5
# CHECK-NEXT: tmp_1 = A[r] * 3.0
# CHECK-NEXT: for j in T.serial(2):
# CHECK-NEXT: B[r, j] = tmp_1 + s * T.Cast("float32", j) + tmp
# CHECK-NEXT: r_1 = bx * 32 + i
# CHECK-NEXT: B[r_1, 2] = B[r_1, 2] + 1.0
# CHECK-NEXT: x = A[bx * 32 + i]
# CHECK-NEXT: B[bx * 32 + i, 3] = x * 2.0
# EXEC: check: PASS
# RET: macro.py:{{[0-9]+}}:9: error: 'return' in a @T.macro must be its last statement, outside loops and conditions
# RET: macro.py:{{[0-9]+}}:31: note: in T.macro 'early', called here
# OUTSIDE: macro.py:{{[0-9]+}}:18: error: T.macro 'twice' can only be called inside a @T.prim_func body
# REF: macro.py:{{[0-9]+}}:15: error: T.macro 'by_ref': parameter 'x' annotated T.Ref (passed by reference) is not supported
import tilelang
import tilelang.language as T


def row(bx, i, block):
    r = bx * block  # a plain helper: r is the expression, no let
    return r + i


@T.macro
def scale_row(src, dst, r, s, extra):
    tmp = src[r] * 3.0
    for j in T.serial(2):
        dst[r, j] = tmp + s * j + extra


@T.macro
def twice(x):
    return x * 2


@T.macro
def early(x):
    if x > 0:
        return x
    return x


@T.macro
def by_ref(x: T.Ref):
    x = 1.0


@tilelang.jit(out_idx=[1])
def macros(N=64, block=32, bad=0):
    @T.macro
    def bump(buf, r):
        buf[r, 2] = buf[r, 2] + 1.0

    if bad == 2:
        unused = twice(3)

    @T.prim_func
    def macros(A: T.Tensor((N,), "float32"), B: T.Tensor((N, 4), "float32")):
        with T.Kernel(N // block, threads=block) as bx:
            for i in T.Parallel(block):
                tmp = A[row(bx, i, block)] + 1.0
                scale_row(A, B, row(bx, i, block), A[row(bx, i, block)] * 0.5, tmp)
                bump(B, row(bx, i, block))
                B[row(bx, i, block), 3] = twice(A[row(bx, i, block)])
                if bad == 1:
                    B[0, 0] = early(A[0])
                if bad == 3:
                    by_ref(B[0, 0])

    return macros
