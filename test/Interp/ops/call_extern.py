# REQUIRES: tl-run
# The device functions this compiler knows (lib/Frontend/elab_extern.c), called as TileLang's dequantize examples
# call them: T.import_source of their source (here this project's marker, which tilelang_ptx's tilelang.quantize
# returns; TileLang's own texts are recognised by fingerprint), then T.call_extern on per-thread T.alloc_local
# buffers through T.access_ptr. Q holds 1024 bytes (256 groups of 4, each thread n groups per call); the bytes
# cover every fp4 code at every position of the twiddled layout and every nibble of the int4 words. Each output is
# checked against the reference evaluator, and element by element against a decode written here from the
# formats' definitions:
#  - fp4 twiddled (TileLang's mxfp.py, dequantize_utils.torch_convert_bit_twiddling): output o comes from the
#    byte pair c = o // 4 as h = Q[2c] << 8 | Q[2c+1]; bit 15 - t of h is bit y of element x for the t-th pair
#    (x, y) of the layout list below (y: 0 sign, 1-2 exponent, 3 mantissa); element o % 4 is the e2m1 value
#    (-1)^s * (e ? 2^(e-1) * (1 + m/2) : m/2), as bfloat16 bits (the float32's upper half: every value is exact);
#  - int4 -> float16 (TileLang's lop3.py decode_i4u_to_f16 / decode_i4s_to_f16): group g's bytes as the
#    little-endian word w; output 8g + k is the nibble of w at bit 4*(k//2) + 16*(k%2), minus 8 for the s variant.
# RUN: rm -rf %t && mkdir -p %t
# RUN: python3 %S/../../IR/tl-run/Inputs/npy_tool.py write %t/q.npy '|u1' 1024 '(i * i * 37 + i * 101 + 7) %% 251'
# RUN: python3 %S/../../IR/tl-run/Inputs/npy_tool.py write %t/qs.npy '|i1' 1024 '(lambda b: b - 256 if b >= 128 else b)((i * i * 37 + i * 101 + 7) %% 251)'
# RUN: %tl-run --device=cpu --check --input Q=%t/q.npy --input Qs=%t/qs.npy --save %t/a %s | FileCheck %s
# RUN: %tl-run --device=cpu --check --target=sm_90a -D n=2 --input Q=%t/q.npy --input Qs=%t/qs.npy --save %t/b %s | FileCheck %s
# RUN: python3 %S/../../IR/tl-run/Inputs/npy_tool.py check %t/a/D.npy "(lambda i: (lambda Q, L: (lambda h, j: (lambda b: (lambda s, e, m: struct.unpack('<I', struct.pack('<f', (-1.0) ** s * (2.0 ** (e - 1) * (1 + m / 2) if e else m / 2)))[0] >> 16)(b(0), 2 * b(1) + b(2), b(3)))(lambda y: (h >> (15 - L.index((j, y)))) & 1))(Q(2 * (i // 4)) << 8 | Q(2 * (i // 4) + 1), i %% 4))(lambda p: (p * p * 37 + p * 101 + 7) %% 251, [(0, 0), (3, 0), (3, 3), (1, 0), (3, 1), (3, 2), (2, 0), (0, 1), (0, 2), (0, 3), (1, 1), (1, 2), (1, 3), (2, 1), (2, 2), (2, 3)]))(i)" | FileCheck %s --check-prefix=BF
# RUN: cmp %t/a/D.npy %t/b/D.npy
# RUN: cmp %t/a/Hs.npy %t/b/Hs.npy
# RUN: %tl-run --device=cpu --check -D sdtype=uint8 --input Q=%t/q.npy --input Qs=%t/q.npy --save %t/c %s | FileCheck %s
# RUN: cmp %t/a/Hs.npy %t/c/Hs.npy
# RUN: python3 %S/../../IR/tl-run/Inputs/npy_tool.py check %t/a/Hu.npy "(lambda i: (lambda Q: (lambda w, k: (w >> (4 * (k // 2) + 16 * (k %% 2))) & 15)(sum(Q(4 * (i // 8) + b) << (8 * b) for b in range(4)), i %% 8))(lambda p: (p * p * 37 + p * 101 + 7) %% 251))(i)" | FileCheck %s --check-prefix=H
# RUN: python3 %S/../../IR/tl-run/Inputs/npy_tool.py check %t/a/Hs.npy "(lambda i: (lambda Q: (lambda w, k: ((w >> (4 * (k // 2) + 16 * (k %% 2))) & 15) - 8)(sum(Q(4 * (i // 8) + b) << (8 * b) for b in range(4)), i %% 8))(lambda p: (p * p * 37 + p * 101 + 7) %% 251))(i)" | FileCheck %s --check-prefix=H
# RUN: %tl-opt %s | FileCheck %s --check-prefix=TIR
# CHECK: check: PASS
# BF: ok 2048
# H: ok 2048
# The call is its stores: output 0 of the fp4 group reads bits 15, 8, 7, 6 of q[0] << 8 | q[1]; the int4 nibbles
# come from the bytes as uint32.
# TIR: d[0] = T.reinterpret("bfloat16", T.Cast("uint16",
# TIR: hu[7] = T.reinterpret("float16", T.Cast("uint16", (T.Cast("uint32", qs[3]) & T.uint32(255)) >> T.uint32(4) & T.uint32(15) | T.uint32(25600))) - T.float16(1024.0)
import tilelang
import tilelang.language as T

FP4_SOURCE = "tilelang_ptx.extern:fp4_to_bf16_twiddling"
I4_SOURCE = "tilelang_ptx.extern:i4_to_f16"


@tilelang.jit(out_idx=[2, 3, 4])
def decode(n=1, threads=128, sdtype="int8"):
    iters = 256 // (threads * n)

    @T.prim_func
    def main(Q: T.Tensor((1024,), "uint8"), Qs: T.Tensor((1024,), sdtype), D: T.Tensor((2048,), "bfloat16"),
             Hu: T.Tensor((2048,), "float16"), Hs: T.Tensor((2048,), "float16")):
        with T.Kernel(1, threads=threads) as bx:
            T.import_source(FP4_SOURCE)
            T.import_source(I4_SOURCE)
            tx = T.get_thread_binding()
            q = T.alloc_local((4 * n,), "uint8")
            d = T.alloc_local((8 * n,), "bfloat16")
            qs = T.alloc_local((4,), sdtype)
            hu = T.alloc_local((8,), "float16")
            hs = T.alloc_local((8,), "float16")
            for i in T.serial(iters):
                g = (i * threads + tx) * n
                for v in T.vectorized(4 * n):
                    q[v] = Q[g * 4 + v]
                T.call_extern("decode_fp4_to_bf16_twiddling", T.access_ptr(q, "r"), T.access_ptr(d, "w"), n,
                              dtype="bfloat16")
                for v in T.vectorized(8 * n):
                    D[g * 8 + v] = d[v]
                for j in T.serial(n):
                    for v in T.vectorized(4):
                        qs[v] = Qs[(g + j) * 4 + v]
                    T.call_extern("decode_i4u_to_f16", T.access_ptr(qs, "r"), T.access_ptr(hu, "w"), dtype="float16")
                    T.call_extern("decode_i4s_to_f16", T.access_ptr(qs, "r"), T.access_ptr(hs, "w"), dtype="float16")
                    for v in T.vectorized(8):
                        Hu[(g + j) * 8 + v] = hu[v]
                        Hs[(g + j) * 8 + v] = hs[v]

    return main
