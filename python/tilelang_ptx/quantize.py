"""quantize.py -- `tilelang.quantize`: the helpers of TileLang's dequantize examples that name a device function
and its source (get_mxfp_intrin_group, get_lop3_intrin_group), for the functions this compiler knows.

A kernel brings the source in with T.import_source(info["c_source"]) and calls T.call_extern(info["func_name"],
T.access_ptr(src, "r"), T.access_ptr(dst, "w"), ...). This compiler compiles no CUDA C++: the source returned here
is the marker `tilelang_ptx.extern:<key>` that libtilelang recognises, and the function's definition is the
compiler's own (lib/Frontend/elab_extern.c, docs/language.md "Known device functions"). TileLang's own source texts
(its examples' quantize package) are recognised too. Any other combination of arguments is a NotImplementedError
naming what is known."""

_MARKER = "tilelang_ptx.extern:"


def _dt(x):
    """The dtype name of x (a T dtype, a string, torch/numpy dtype)."""
    from . import language as T
    try:
        return str(T.dtype(x))
    except Exception:
        return str(x)


def get_mxfp_intrin_group(out_dtype="bfloat16", source_format="uint", source_bit=4, storage_dtype="uint8",
                          use_twiddling=False, target=None):
    """{"func_name", "c_source"} of the fp4 -> bfloat16 twiddling decode (the one known mxfp function)."""
    out, fmt, storage = _dt(out_dtype), _dt(source_format), _dt(storage_dtype)
    if (out, source_bit, use_twiddling) != ("bfloat16", 4, True) or fmt not in ("int", "uint", "int32", "uint32") or \
            storage not in ("uint8", "int8"):
        raise NotImplementedError(
            f"tilelang.quantize.get_mxfp_intrin_group(out_dtype={out}, source_bit={source_bit}, "
            f"storage_dtype={storage}, use_twiddling={use_twiddling}): this project knows only the fp4 -> bfloat16 "
            "twiddling decode (out_dtype=bfloat16, source_bit=4, storage_dtype=uint8 or int8, use_twiddling=True)")
    return {"func_name": "decode_fp4_to_bf16_twiddling", "c_source": _MARKER + "fp4_to_bf16_twiddling"}


def get_lop3_intrin_group(out_dtype, source_format="uint", source_bit=4, storage_dtype="int8", with_scaling=False,
                          with_zeros=False, zeros_mode="original", storage_scope="local"):
    """{"func_name", "c_source"} of the int4 -> float16 LOP3 decode (decode_i4u_to_f16 / decode_i4s_to_f16)."""
    out, fmt, storage = _dt(out_dtype), _dt(source_format), _dt(storage_dtype)
    sign = {"uint": "u", "uint32": "u", "int": "s", "int32": "s"}.get(fmt)
    if (out, source_bit, with_scaling, with_zeros, storage_scope) != ("float16", 4, False, False, "local") or \
            sign is None or storage not in ("int8", "uint8"):
        raise NotImplementedError(
            f"tilelang.quantize.get_lop3_intrin_group(out_dtype={out}, source_format={fmt}, source_bit={source_bit}, "
            f"storage_dtype={storage}, with_scaling={with_scaling}, with_zeros={with_zeros}): this project knows only "
            "the int4 -> float16 decode without scaling or zeros (out_dtype=float16, source_bit=4, storage_dtype=int8 "
            "or uint8)")
    return {"func_name": f"decode_i4{sign}_to_f16", "c_source": _MARKER + "i4_to_f16"}
