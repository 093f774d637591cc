# RUN: not %tl-opt %s 2>&1 | FileCheck %s
# An error inside a helper of another file (Inputs/xfile_quant.py, handed over below a
# `#@tl-line` directive as in xfile_helper.py) names that file's line and column and shows
# that line (the diagnostics engine maps the directive too, lib/Support/diag.c), with a note
# at the kernel's call: here the helper's assert fails (a uint8 element, the helper built for
# uint16 storage).
import tilelang.language as T
from tilelang import tvm as tvm


@T.prim_func
def main(A: T.Tensor((8,), "uint8"), B: T.Tensor((16,), "float16")):
    with T.Kernel(1, threads=32) as bx:
        for i in T.Parallel(16):
            B[i] = unpack_unsigned("uint", 16)(4, A[i // 2], i % 2, dtype="float16")

# CHECK: Inputs/xfile_quant.py:11:9: error: assertion failed: uint8 != uint16
# CHECK-NEXT: {{^}}        assert val.dtype == storage_dtype, f"{val.dtype} != {storage_dtype}"
# CHECK-NEXT: {{^}}        ^
# CHECK: xfile_helper_errors.py:15:20: note: in compile-time function 'f_convert', called here
#@tl-line 7 Inputs/xfile_quant.py
def unpack_unsigned(storage_type="uint", storage_nbit=8):
    storage_dtype = storage_type + str(storage_nbit)

    def f_convert(nbit: int, val: tvm.tirx.PrimExpr, pos: tvm.tirx.PrimExpr, dtype: str):
        assert val.dtype == storage_dtype, f"{val.dtype} != {storage_dtype}"
        mask = tvm.tirx.const((1 << nbit) - 1, storage_dtype)
        return ((val >> (pos * nbit).astype(storage_dtype)) & mask).astype(dtype)

    return f_convert
#@tl-line 32 xfile_helper_errors.py
