# RUN: %tl-opt %s | FileCheck %s
# A compile-time helper of another file (Inputs/xfile_quant.py, lines 7-15) as the Python
# package hands it over (python/tilelang_ptx/_helpers.py put_foreign): after the kernel's
# file, below a line directive `#@tl-line LINE PATH` (lib/Frontend/lexer.c) naming its file and
# first line; a second directive gives the lines after it back to this file.  Its body is
# TVM's TIR API as TileLang's dequantize examples use it: tvm.tirx.const, .dtype of a buffer
# element, (expr).astype(dtype), >>, &, *, assert.
import tilelang.language as T
from tilelang import tvm as tvm


@T.prim_func
def main(A: T.Tensor((8,), "uint8"), B: T.Tensor((16,), "float16")):
    with T.Kernel(1, threads=32) as bx:
        for i in T.Parallel(16):
            B[i] = unpack_unsigned("uint", 8)(4, A[i // 2], i % 2, dtype="float16")

# CHECK: B[i] = T.Cast("float16", A[i // 2] >> T.Cast("uint8", i % 2 * 4) & T.uint8(15))
#@tl-line 7 Inputs/xfile_quant.py
def unpack_unsigned(storage_type="uint", storage_nbit=8):
    storage_dtype = storage_type + str(storage_nbit)

    def f_convert(nbit: int, val: tvm.tirx.PrimExpr, pos: tvm.tirx.PrimExpr, dtype: str):
        assert val.dtype == storage_dtype, f"{val.dtype} != {storage_dtype}"
        mask = tvm.tirx.const((1 << nbit) - 1, storage_dtype)
        return ((val >> (pos * nbit).astype(storage_dtype)) & mask).astype(dtype)

    return f_convert
#@tl-line 30 xfile_helper.py
