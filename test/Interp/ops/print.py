# REQUIRES: tl-run
# RUN: %tl-run --device=cpu --check %s | FileCheck %s
# RUN: %tl-opt --emit=llvm %s | FileCheck %s --check-prefix=IR
# RUN: %tl-opt %s | FileCheck %s --check-prefix=TIR
# T.print (issue 30; TileLang's tilelang/language/print.py), lowered to
# T.debug_print statements: on the GPU CUDA's vprintf, on the CPU SIMT
# executor the same text on stdout (docs/language.md "T.print"), each line
# naming the call's file:line.  A scalar (a T.alloc_var, an expression: every
# thread prints it; msg defaults to expr<...>), a bool (true/false), an int64,
# a shared buffer (thread 0 prints every element, row-major), a fragment
# (copied to shared, printed by thread 0 under its own name), a local buffer
# (every thread), a '%' in msg printed as is.  Two blocks of 4 threads; the
# output is checked line by line for block 0, in program order and thread
# order, and spot-checked for block 1; B is checked against the reference
# evaluator (which prints nothing).  ptxas accepts the PTX (label ptxas:
# ptxas/lang_ops), whose LLVM IR calls vprintf with the same format text.
import tilelang
import tilelang.language as T


@tilelang.jit(out_idx=-1)
def print_demo(N=4):

    @T.prim_func
    def main(B: T.Tensor((2, N), "int32")):
        with T.Kernel(2, threads=4) as bx:
            S = T.alloc_shared((N,), "float32")
            F = T.alloc_fragment((N,), "int32")
            L = T.alloc_local((2,), "float16")
            v = T.alloc_var("int32")
            for i in T.Parallel(N):
                S[i] = i * 0.5
            for i in T.Parallel(N):
                F[i] = i * 3 + bx
            L[0] = 1.5
            L[1] = -2.0
            v = bx * 10 + 7
# CHECK:      print.py:[[#@LINE+5]]: msg='expr<v>' BlockIdx=(0, 0, 0), ThreadIdx=(0, 0, 0): dtype=int value=7
# CHECK-NEXT: print.py:[[#@LINE+4]]: msg='expr<v>' BlockIdx=(0, 0, 0), ThreadIdx=(1, 0, 0): dtype=int value=7
# CHECK-NEXT: print.py:[[#@LINE+3]]: msg='expr<v>' BlockIdx=(0, 0, 0), ThreadIdx=(2, 0, 0): dtype=int value=7
# CHECK-NEXT: print.py:[[#@LINE+2]]: msg='expr<v>' BlockIdx=(0, 0, 0), ThreadIdx=(3, 0, 0): dtype=int value=7
# CHECK-NOT:  expr<v>
            T.print(v)
# CHECK-NEXT: print.py:[[#@LINE+2]]: msg='odd' BlockIdx=(0, 0, 0), ThreadIdx=(0, 0, 0): dtype=bool value=true
# CHECK:      print.py:[[#@LINE+1]]: msg='odd' BlockIdx=(0, 0, 0), ThreadIdx=(3, 0, 0): dtype=bool value=true
            T.print(v % 2 == 1, msg="odd")
# CHECK-NEXT: print.py:[[#@LINE+2]]: msg='i64' BlockIdx=(0, 0, 0), ThreadIdx=(0, 0, 0): dtype=long value=-5000000000
# CHECK:      print.py:[[#@LINE+1]]: msg='i64' BlockIdx=(0, 0, 0), ThreadIdx=(3, 0, 0): dtype=long value=-5000000000
            T.print(T.cast(bx, "int64") - 5000000000, msg="i64")
# CHECK-NEXT: print.py:[[#@LINE+5]]: msg='buffer<S, float32>' BlockIdx=(0, 0, 0), ThreadIdx=(0, 0, 0): buffer=S, index=0, dtype=float value=0.000000
# CHECK-NEXT: print.py:[[#@LINE+4]]: msg='buffer<S, float32>' BlockIdx=(0, 0, 0), ThreadIdx=(0, 0, 0): buffer=S, index=1, dtype=float value=0.500000
# CHECK-NEXT: print.py:[[#@LINE+3]]: msg='buffer<S, float32>' BlockIdx=(0, 0, 0), ThreadIdx=(0, 0, 0): buffer=S, index=2, dtype=float value=1.000000
# CHECK-NEXT: print.py:[[#@LINE+2]]: msg='buffer<S, float32>' BlockIdx=(0, 0, 0), ThreadIdx=(0, 0, 0): buffer=S, index=3, dtype=float value=1.500000
# CHECK-NOT:  buffer=S
            T.print(S)
# CHECK-NEXT: print.py:[[#@LINE+5]]: msg='frag 100%' BlockIdx=(0, 0, 0), ThreadIdx=(0, 0, 0): buffer=F, index=0, dtype=int value=0
# CHECK-NEXT: print.py:[[#@LINE+4]]: msg='frag 100%' BlockIdx=(0, 0, 0), ThreadIdx=(0, 0, 0): buffer=F, index=1, dtype=int value=3
# CHECK-NEXT: print.py:[[#@LINE+3]]: msg='frag 100%' BlockIdx=(0, 0, 0), ThreadIdx=(0, 0, 0): buffer=F, index=2, dtype=int value=6
# CHECK-NEXT: print.py:[[#@LINE+2]]: msg='frag 100%' BlockIdx=(0, 0, 0), ThreadIdx=(0, 0, 0): buffer=F, index=3, dtype=int value=9
# CHECK-NOT:  buffer=F
            T.print(F, msg="frag 100%")
# CHECK-NEXT: print.py:[[#@LINE+3]]: msg='buffer<L, float16>' BlockIdx=(0, 0, 0), ThreadIdx=(0, 0, 0): buffer=L, index=0, dtype=half_t value=1.500000
# CHECK:      print.py:[[#@LINE+2]]: msg='buffer<L, float16>' BlockIdx=(0, 0, 0), ThreadIdx=(3, 0, 0): buffer=L, index=0, dtype=half_t value=1.500000
# CHECK:      print.py:[[#@LINE+1]]: msg='buffer<L, float16>' BlockIdx=(0, 0, 0), ThreadIdx=(3, 0, 0): buffer=L, index=1, dtype=half_t value=-2.000000
            T.print(L)
            for i in T.Parallel(N):
                B[bx, i] = F[i]

    return main

# Block 1 after block 0:
# CHECK:      msg='expr<v>' BlockIdx=(1, 0, 0), ThreadIdx=(0, 0, 0): dtype=int value=17
# CHECK:      msg='odd' BlockIdx=(1, 0, 0), ThreadIdx=(0, 0, 0): dtype=bool value=true
# CHECK:      msg='i64' BlockIdx=(1, 0, 0), ThreadIdx=(0, 0, 0): dtype=long value=-4999999999
# CHECK:      msg='frag 100%' BlockIdx=(1, 0, 0), ThreadIdx=(0, 0, 0): buffer=F, index=3, dtype=int value=10
# CHECK-NOT:  BlockIdx=(2
# CHECK:      check: PASS

# TIR: T.debug_print("{{.*}}print.py:[[#]]", "expr<v>", "", -1, v[0], -1)
# TIR: for print_i_[[#]] in T.serial(4):
# TIR:     T.debug_print("{{.*}}print.py:[[#]]", "buffer<S, float32>", "S", print_i_[[#]], S[print_i_[[#]]], 0)
# TIR: F_print_[[#]] = T.alloc_shared((4,), "int32")
# TIR: T.copy(F, F_print_[[#]])

# IR: @tl_print_fmt{{[0-9]*}} = {{private|internal}} unnamed_addr addrspace(1) constant [{{[0-9]+}} x i8] c"{{.*}}print.py:[[#]]: msg='frag 100%%' BlockIdx=(%d, %d, %d), ThreadIdx=(%d, %d, %d): buffer=F, index=%d, dtype=int value=%d\0A\00"
# IR: call i32 @vprintf(ptr
