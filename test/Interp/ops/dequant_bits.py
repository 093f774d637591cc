# REQUIRES: tl-run
# Bit-level dequantization as TileLang's dequantize_gemm examples write it, in
# compile-time helpers built from TVM's TIR builders (`from tvm import tirx`:
# tirx.const, tirx.reinterpret, operators on uint8/uint16/int8 expressions,
# x.astype, T.min, BufferLoad.dtype): the 4-bit fields of every byte 0..255
# (byte i // 2 of the flat output index i, low nibble first) as fp4 e2m1 ->
# float16 (exponent + 14), fp4 e2m1 -> bfloat16 (exponent + 126 + scale,
# clamped to 255) and int4 -> int8 (sign-extended by << 4 then an arithmetic
# >> 4 in int8). Each output is checked against the reference evaluator and,
# element by element, against the value computed here in Python from the
# nibble f (npy_tool.py; bfloat16 as its raw bits). W = byte << tirx.const(4, uint16):
# the uint8 byte is widened to uint16 first, as TVM does, and keeps its high bits. The clamp to 255 makes an
# infinity or a NaN, whose sign and payload the CPU executors do not keep
# (they hold values as doubles), so scale=100 checks the scale's addition only.
# RUN: rm -rf %t && mkdir -p %t
# RUN: %tl-run --device=cpu --check --save %t/a %s | FileCheck %s
# RUN: python3 %S/../../IR/tl-run/Inputs/npy_tool.py check %t/a/H.npy '(lambda f: (-1.0 if f >> 3 else 1.0) * 2.0 ** (((f >> 1) & 3) - 1) * (1 + (f & 1) / 2))(((i // 2) >> (4 * (i %% 2))) & 15)' | FileCheck %s --check-prefix=RAW
# RUN: python3 %S/../../IR/tl-run/Inputs/npy_tool.py check %t/a/Bf.npy '(lambda f: (f >> 3) << 15 | (((f >> 1) & 3) + 126) << 7 | (f & 1) << 6)(((i // 2) >> (4 * (i %% 2))) & 15)' | FileCheck %s --check-prefix=RAW
# RUN: python3 %S/../../IR/tl-run/Inputs/npy_tool.py check %t/a/I.npy '(lambda f: f - 16 if f >= 8 else f)(((i // 2) >> (4 * (i %% 2))) & 15)' | FileCheck %s --check-prefix=RAW
# RUN: python3 %S/../../IR/tl-run/Inputs/npy_tool.py check %t/a/W.npy '(i %% 256) << 4' | FileCheck %s --check-prefix=WIDE
# RUN: %tl-run --device=cpu --check --target=sm_90a -D scale=100 --save %t/b %s | FileCheck %s
# RUN: python3 %S/../../IR/tl-run/Inputs/npy_tool.py check %t/b/Bf.npy '(lambda f: (f >> 3) << 15 | (((f >> 1) & 3) + 226) << 7 | (f & 1) << 6)(((i // 2) >> (4 * (i %% 2))) & 15)' | FileCheck %s --check-prefix=RAW
# RUN: %tl-opt %s | FileCheck %s --check-prefix=TIR
# CHECK: check: PASS
# RAW: ok 512
# WIDE: ok 256
# TIR: H_f[i, j] = T.reinterpret("float16", {{.*}}T.Cast("uint16", F[i, j // 2]) >> T.Cast("uint16", j % 2) * T.uint16(4) & T.uint16(15)
# TIR: I_f[i, j] = T.reinterpret("int8", (F[i, j // 2] >> T.Cast("uint8", j % 2) * T.uint8(4) & T.uint8(15)) << T.uint8(4)) >> T.int8(4)
import tilelang
import tilelang.language as T
from tvm import tirx


def nibble(v, k, t):  # the k-th 4-bit field of byte v, computed in dtype t
    assert v.dtype == T.uint8
    return (v >> (k.astype(t) * tirx.const(4, t))) & tirx.const(15, t)


def fp4_to_half(v, k):
    f = nibble(v, k, T.uint16)
    sign = f >> tirx.const(3, T.uint16)
    e = ((f & tirx.const(6, T.uint16)) >> tirx.const(1, T.uint16)) + tirx.const(14, T.uint16)
    m = f & tirx.const(1, T.uint16)
    bits = (((sign << tirx.const(5, T.uint16)) | e) << tirx.const(10, T.uint16)) | (m << tirx.const(9, T.uint16))
    return tirx.reinterpret(T.float16, bits.astype(T.uint16))


def fp4_to_bf16(v, k, scale):
    f = nibble(v, k, T.uint16)
    sign = f >> tirx.const(3, T.uint16)
    e = ((f & tirx.const(6, T.uint16)) >> tirx.const(1, T.uint16)) + tirx.const(126, T.uint16)
    e = T.min(e + scale, tirx.const(255, T.uint16))
    m = f & tirx.const(1, T.uint16)
    bits = tirx.bitwise_or(((sign << tirx.const(8, T.uint16)) | e) << tirx.const(7, T.uint16),
                           T.shift_left(m, tirx.const(6, T.uint16)))
    return tirx.reinterpret(T.bfloat16, bits)


def int4_to_int8(v, k):
    x = nibble(v, k, T.uint8)
    return tirx.reinterpret(T.int8, x << tirx.const(4, T.uint8)) >> tirx.const(4, T.int8)


@tilelang.jit(out_idx=[0, 1, 2, 3])
def dequant(scale=0):
    @T.prim_func
    def main(H: T.Tensor((16, 32), "float16"), Bf: T.Tensor((16, 32), "bfloat16"), I: T.Tensor((16, 32), "int8"),
             W: T.Tensor((16, 16), "uint16")):
        with T.Kernel(1, threads=128) as bx:
            S = T.alloc_shared((16, 16), "uint8")
            F = T.alloc_fragment((16, 16), "uint8")
            H_f = T.alloc_fragment((16, 32), "float16")
            Bf_f = T.alloc_fragment((16, 32), "bfloat16")
            I_f = T.alloc_fragment((16, 32), "int8")
            for i, j in T.Parallel(16, 16):
                S[i, j] = T.Cast("uint8", i * 16 + j)
            T.copy(S, F)
            for i, j in T.Parallel(16, 16):
                W[i, j] = S[i, j] << tirx.const(4, T.uint16)
            for i, j in T.Parallel(16, 32):
                H_f[i, j] = fp4_to_half(F[i, j // 2], j % 2)
                Bf_f[i, j] = fp4_to_bf16(F[i, j // 2], j % 2, scale)
                I_f[i, j] = int4_to_int8(F[i, j // 2], j % 2)
            T.copy(H_f, H)
            T.copy(Bf_f, Bf)
            T.copy(I_f, I)

    return main
