"""Compile-time helpers of another file, written as TileLang's quantize/quantization.py writes them."""
from tilelang_ptx import language as T
from tilelang_ptx import tvm as tvm


def unpack_unsigned(storage_type="uint", storage_nbit=8):
    storage_dtype = storage_type + str(storage_nbit)

    def f_convert(nbit: int, val: tvm.tirx.PrimExpr, pos: tvm.tirx.PrimExpr, dtype: str):
        assert val.dtype == storage_dtype, f"{val.dtype} != {storage_dtype}"
        mask = tvm.tirx.const((1 << nbit) - 1, storage_dtype)
        return ((val >> (pos * nbit).astype(storage_dtype)) & mask).astype(dtype)

    return f_convert


def bad_helper(x):
    return x + T.no_such_function(x)
