# RUN: not %tl-opt %s 2>&1 | FileCheck %s
# What T.import_source / T.call_extern refuse (lib/Frontend/elab_extern.c), each at its location: a source
# that is not one of the known ones (this compiler compiles no CUDA C++), a function not in the table of
# known device functions, a known function whose source the prim_func has not imported, operands that are
# not T.access_ptr of a 1-D T.alloc_local buffer of the function's dtypes with room for what it reads and
# writes, an N out of the function's range, T.call_extern as a value and T.call_pure_extern.
import tilelang.language as T

FP4 = "tilelang_ptx.extern:fp4_to_bf16_twiddling"
I4 = "tilelang_ptx.extern:i4_to_f16"


@T.prim_func
def sources(A: T.Tensor((8,), "uint8"), B: T.Tensor((8,), "bfloat16")):
    with T.Kernel(1, threads=32) as bx:
        q = T.alloc_local((4,), "uint8")
        d = T.alloc_local((8,), "bfloat16")
        T.import_source("__device__ void f(){}")
        T.import_source(3)
        T.call_extern("f", T.access_ptr(q, "r"), T.access_ptr(d, "w"), dtype="bfloat16")
        T.call_extern("decode_fp4_to_bf16_twiddling", T.access_ptr(q, "r"), T.access_ptr(d, "w"), 1, dtype="bfloat16")


@T.prim_func
def operands(A: T.Tensor((8,), "uint8"), B: T.Tensor((8,), "bfloat16")):
    with T.Kernel(1, threads=32) as bx:
        T.import_source(FP4)
        T.import_source(I4)
        T.import_source(None)
        q = T.alloc_local((4,), "uint8")
        q2 = T.alloc_local((2,), "uint8")
        d = T.alloc_local((8,), "bfloat16")
        h = T.alloc_local((8,), "float16")
        f = T.alloc_fragment((8,), "bfloat16")
        T.call_extern("decode_fp4_to_bf16_twiddling", q, T.access_ptr(d, "w"), 1, dtype="bfloat16")
        T.call_extern("decode_fp4_to_bf16_twiddling", T.access_ptr(q, "r"), T.access_ptr(h, "w"), 1, dtype="bfloat16")
        T.call_extern("decode_fp4_to_bf16_twiddling", T.access_ptr(q2, "r"), T.access_ptr(d, "w"), 1, dtype="bfloat16")
        T.call_extern("decode_fp4_to_bf16_twiddling", T.access_ptr(q, "r"), T.access_ptr(d[4], "w"), 1, dtype="bfloat16")
        T.call_extern("decode_fp4_to_bf16_twiddling", T.access_ptr(q, "r"), T.access_ptr(f, "w"), 1, dtype="bfloat16")
        T.call_extern("decode_fp4_to_bf16_twiddling", T.access_ptr(q, "r"), T.access_ptr(d, "w"), 0, dtype="bfloat16")
        T.call_extern("decode_i4u_to_f16", T.access_ptr(q, "r"), T.access_ptr(h, "w"), 3, dtype="float16")
        T.call_extern("decode_i4u_to_f16", T.access_ptr(d, "r"), T.access_ptr(h, "w"), dtype="float16")
        x = T.call_extern("decode_i4u_to_f16", T.access_ptr(q, "r"), T.access_ptr(h, "w"), dtype="float16")
        T.call_pure_extern("decode_i4u_to_f16", T.access_ptr(q, "r"), T.access_ptr(h, "w"), dtype="float16")

# CHECK: call_extern_errors.py:18:11: error: T.import_source is not supported for this source: this compiler does not compile CUDA C++; it knows the device functions of TileLang's dequantize helpers (fp4 -> bfloat16 twiddling, int4 -> float16 LOP3), and this text is none of them (fingerprint 0x
# CHECK: call_extern_errors.py:19:25: error: T.import_source takes the source text (a string) or None, got int 3
# CHECK: call_extern_errors.py:20:23: error: T.call_extern('f') is not supported: this compiler does not compile CUDA C++, and 'f' is not one of the device functions it knows (decode_fp4_to_bf16_twiddling, decode_i4u_to_f16, decode_i4s_to_f16)
# CHECK: call_extern_errors.py:21:23: error: T.call_extern('decode_fp4_to_bf16_twiddling'): the prim_func has not imported its source (T.import_source of TileLang's fp4 -> bfloat16 twiddling decode (dequantize_gemm/quantize/mxfp.py)) before the call
# CHECK: call_extern_errors.py:35:55: error: T.call_extern: the source operand must be T.access_ptr(<local buffer>, ...)
# CHECK: call_extern_errors.py:36:77: error: T.call_extern: the destination operand 'h' is float16; it must be bfloat16
# CHECK: call_extern_errors.py:37:55: error: T.call_extern: the source operand 'q2' needs elements 0..3, and it has 2
# CHECK: call_extern_errors.py:38:77: error: T.call_extern: the destination operand 'd' needs elements 4..11, and it has 8
# CHECK: call_extern_errors.py:39:90: error: T.call_extern: the destination operand must be a 1-D T.alloc_local buffer of constant size (or one element of it)
# CHECK: call_extern_errors.py:40:99: error: T.call_extern('decode_fp4_to_bf16_twiddling'): N = 0 is not supported (1..16)
# CHECK: call_extern_errors.py:41:88: error: T.call_extern('decode_i4u_to_f16'): N = 3 is not supported (2..8, even)
# CHECK: call_extern_errors.py:42:44: error: T.call_extern: the source operand 'd' is bfloat16; it must be int8 or uint8
# CHECK: call_extern_errors.py:43:15: error: T.call_extern is not supported yet outside a statement: this compiler does not compile CUDA C++
# CHECK: call_extern_errors.py:44:11: error: T.call_pure_extern is not supported yet
