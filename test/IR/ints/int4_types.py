# REQUIRES: tl-run
# int4 / uint4 (issue 30): T.int4, T.uint4 and the strings parse as 4-bit integer dtypes, print as
# "int4" / "uint4", and the printed text parses back to the same text.  T.gemm's packed_int4 (the form
# lowering's pack-int4 pass writes: int8 / uint8 tiles of packed pairs) prints and round-trips too, and runs
# on both CPU models; so do int4 copies in two T.Kernel stages (whose functions share the parameters).
# RUN: %tl-opt --kernel=types %s > %t.tir && FileCheck %s < %t.tir
# RUN: %tl-opt %t.tir | diff %t.tir -
# RUN: %tl-opt --kernel=packed %s | FileCheck %s --check-prefix=PACKED
# RUN: %tl-run --device=cpu --check --kernel=packed %s | FileCheck %s --check-prefix=RUNPACKED
# RUN: %tl-run --device=cpu --check --kernel=stages %s | FileCheck %s --check-prefix=RUNPACKED
# RUN: not %tl-opt --kernel=packed_f16 %s 2>&1 | FileCheck %s --check-prefix=BADPACK
# RUN: not %tl-opt --kernel=vector %s 2>&1 | FileCheck %s --check-prefix=VECTOR
# CHECK: def main(A: T.Tensor((64, 128), "int4"), B: T.Tensor((64, 128), "uint4"), C: T.Tensor((64, 64), "int32")):
# CHECK: A_s = T.alloc_shared((64, 128), "int4")
# CHECK: B_s = T.alloc_shared((64, 128), "uint4")
# RUNPACKED: check: PASS
# PACKED: T.gemm(A_s, B_s, C_l, transpose_B=True, packed_int4=True)
# BADPACK: int4_types.py:59:65: error: T.gemm: packed_int4=True needs int8/uint8 A and B with an int32 C, transpose_A=False and transpose_B=True (got A float16, C float32, transpose_A=False, transpose_B=True)
# VECTOR: int4_types.py:68:19: error: unknown dtype 'T.int4x2'
import tilelang
import tilelang.language as T


def types():
    @T.prim_func
    def main(A: T.Tensor((64, 128), T.int4), B: T.Tensor((64, 128), "uint4"), C: T.Tensor((64, 64), "int32")):
        with T.Kernel(1, threads=128) as bx:
            A_s = T.alloc_shared((64, 128), "int4")
            B_s = T.alloc_shared((64, 128), T.uint4)
            T.copy(A, A_s)
            T.copy(B, B_s)

    return main


def packed():
    @T.prim_func
    def main(A: T.Tensor((64, 64), "int8"), B: T.Tensor((64, 64), "int8"), C: T.Tensor((64, 64), "int32")):
        with T.Kernel(1, threads=128) as bx:
            A_s = T.alloc_shared((64, 64), "int8")
            B_s = T.alloc_shared((64, 64), "int8")
            C_l = T.alloc_fragment((64, 64), "int32")
            T.copy(A, A_s)
            T.copy(B, B_s)
            T.clear(C_l)
            T.gemm(A_s, B_s, C_l, transpose_B=True, packed_int4=True)
            T.copy(C_l, C)

    return main


def packed_f16():
    @T.prim_func
    def main(A: T.Tensor((64, 64), "float16")):
        with T.Kernel(1, threads=128) as bx:
            A_s = T.alloc_shared((64, 64), "float16")
            C_l = T.alloc_fragment((64, 64), "float32")
            T.copy(A, A_s)
            T.gemm(A_s, A_s, C_l, transpose_B=True, packed_int4=True)

    return main


def vector():
    @T.prim_func
    def main(A: T.Tensor((64,), "int8")):
        with T.Kernel(1, threads=64) as bx:
            x = T.int4x2
            A[0] = 1

    return main


def stages():
    @T.prim_func
    def main(A: T.Tensor((64, 128), "int4"), B: T.Tensor((64, 128), "int4")):
        with T.Kernel(1, threads=128) as bx:
            S = T.alloc_shared((64, 128), "int4")
            T.copy(A, S)
            T.copy(S, B)
        with T.Kernel(1, threads=128) as bx:
            S2 = T.alloc_shared((64, 64), "int4")
            T.copy(B[0, 64], S2)
            T.copy(S2, B[0, 0])

    return main
