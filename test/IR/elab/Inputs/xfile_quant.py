# A helper module beside a kernel file, as TileLang's dequantize examples have one
# (quantize/quantization.py): the package hands its functions to libtilelang after the
# kernel's file below a `#@tl-line LINE PATH` directive (test/IR/elab/xfile_helper*.py).
from tilelang import tvm as tvm


def unpack_unsigned(storage_type="uint", storage_nbit=8):
    storage_dtype = storage_type + str(storage_nbit)

    def f_convert(nbit: int, val: tvm.tirx.PrimExpr, pos: tvm.tirx.PrimExpr, dtype: str):
        assert val.dtype == storage_dtype, f"{val.dtype} != {storage_dtype}"
        mask = tvm.tirx.const((1 << nbit) - 1, storage_dtype)
        return ((val >> (pos * nbit).astype(storage_dtype)) & mask).astype(dtype)

    return f_convert
