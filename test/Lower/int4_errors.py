# RUN: not %tl-opt --emit=simt --kernel=elementwise %s 2>&1 | FileCheck %s --check-prefix=ELEM
# RUN: not %tl-opt --emit=simt --kernel=fragment %s 2>&1 | FileCheck %s --check-prefix=FRAG
# RUN: not %tl-opt --emit=simt --kernel=odd_k %s 2>&1 | FileCheck %s --check-prefix=ODD
# RUN: not %tl-opt --emit=simt --kernel=odd_offset %s 2>&1 | FileCheck %s --check-prefix=OFFSET
# RUN: not %tl-opt --emit=simt --kernel=gemm_nn %s 2>&1 | FileCheck %s --check-prefix=NN
# RUN: not %tl-opt --emit=simt --kernel=gemm_k32 %s 2>&1 | FileCheck %s --check-prefix=K32
# RUN: not %tl-opt --emit=simt --kernel=convert %s 2>&1 | FileCheck %s --check-prefix=CONVERT
# RUN: not %tl-opt --emit=simt --kernel=cast %s 2>&1 | FileCheck %s --check-prefix=CAST
# RUN: not %tl-opt --emit=simt --kernel=fill %s 2>&1 | FileCheck %s --check-prefix=FILL
# Uses of int4 (issue 30) that are not lowered: each a located error, never a wrong result.  int4 values
# exist only as packed tiles (two per byte of int8 storage) moved by T.copy and multiplied by T.gemm.
# ELEM: int4_errors.py:31:17: error: a store to an element of int4 buffer 'B' is not supported yet
# ELEM: int4_errors.py:31:35: error: a read of an element of int4 buffer 'A' is not supported yet
# FRAG: int4_errors.py:40:13: error: int4 buffer 'F' is a fragment or local buffer: not supported yet
# ODD: int4_errors.py:48:14: error: int4 buffer 'A': its last dim must be a constant even number
# OFFSET: int4_errors.py:61:20: error: T.copy of int4 buffer 'A': the last-dim offset must be a multiple of 2
# NN: int4_errors.py:75:13: error: T.gemm with int4 operands needs A as (M, K) and B as (N, K): transpose_A=False, transpose_B=True
# K32: int4_errors.py:90:13: error: T.gemm with int4 operands: K = 32 is not a multiple of 64 (the k-step of mma.sync.m16n8k64)
# CONVERT: int4_errors.py:101:13: error: T.copy from int4 'A' to int8 'S': a copy with int4 must have int4 (or uint4) on both sides
# CAST: int4_errors.py:111:24: error: an int4 value in an expression is not supported yet
# FILL: int4_errors.py:121:13: error: T.fill of int4 buffer 'S' is not supported yet
import tilelang
import tilelang.language as T


def elementwise():
    @T.prim_func
    def main(A: T.Tensor((64, 64), "int4"), B: T.Tensor((64, 64), "int4")):
        with T.Kernel(1, threads=128) as bx:
            for i, j in T.Parallel(64, 64):
                B[i, j] = A[i, j] + 1

    return main


def fragment():
    @T.prim_func
    def main(A: T.Tensor((64, 64), "int4")):
        with T.Kernel(1, threads=128) as bx:
            F = T.alloc_fragment((64, 64), T.int4)
            T.copy(A, F)

    return main


def odd_k():
    @T.prim_func
    def main(A: T.Tensor((64, 63), "int4")):
        with T.Kernel(1, threads=128) as bx:
            S = T.alloc_shared((64, 64), T.int4)
            T.copy(A[0, 0], S)

    return main


def odd_offset():
    @T.prim_func
    def main(A: T.Tensor((64, 128), "int4")):
        with T.Kernel(1, threads=128) as bx:
            S = T.alloc_shared((64, 64), T.int4)
            T.copy(A[0, bx * 64 + 1], S)

    return main


def gemm_nn():
    @T.prim_func
    def main(A: T.Tensor((64, 64), "int4"), B: T.Tensor((64, 64), "int4"), C: T.Tensor((64, 64), "int32")):
        with T.Kernel(1, threads=128) as bx:
            As = T.alloc_shared((64, 64), T.int4)
            Bs = T.alloc_shared((64, 64), T.int4)
            Cl = T.alloc_fragment((64, 64), T.int32)
            T.copy(A, As)
            T.copy(B, Bs)
            T.gemm(As, Bs, Cl)
            T.copy(Cl, C)

    return main


def gemm_k32():
    @T.prim_func
    def main(A: T.Tensor((64, 32), "int4"), B: T.Tensor((64, 32), "int4"), C: T.Tensor((64, 64), "int32")):
        with T.Kernel(1, threads=128) as bx:
            As = T.alloc_shared((64, 32), T.int4)
            Bs = T.alloc_shared((64, 32), T.int4)
            Cl = T.alloc_fragment((64, 64), T.int32)
            T.copy(A, As)
            T.copy(B, Bs)
            T.gemm(As, Bs, Cl, transpose_B=True)
            T.copy(Cl, C)

    return main


def convert():
    @T.prim_func
    def main(A: T.Tensor((64, 64), "int4")):
        with T.Kernel(1, threads=128) as bx:
            S = T.alloc_shared((64, 64), T.int8)
            T.copy(A, S)

    return main


def cast():
    @T.prim_func
    def main(X: T.Tensor((64,), "int32"), Y: T.Tensor((64,), "int32")):
        with T.Kernel(1, threads=64) as bx:
            for i in T.Parallel(64):
                Y[i] = T.Cast("int4", X[i])

    return main


def fill():
    @T.prim_func
    def main(A: T.Tensor((64, 64), "int4")):
        with T.Kernel(1, threads=128) as bx:
            S = T.alloc_shared((64, 64), T.int4)
            T.fill(S, 0)
            T.copy(S, A)

    return main
