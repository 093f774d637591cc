"""tilelang.quantize (python/tilelang_ptx/quantize.py): the helpers of TileLang's dequantize examples name a device
function this compiler knows and return its marker source; a kernel that imports it and calls the function through
T.call_extern on per-thread local buffers runs on the CPU executor (docs/language.md "Known device functions").
Checked against a NumPy decode written from the formats' definitions.  CPU executor, NumPy."""
import numpy as np
import pytest

import tilelang_ptx as tilelang
import tilelang_ptx.language as T
from tilelang_ptx.quantize import get_lop3_intrin_group, get_mxfp_intrin_group


def test_known_groups_and_refusals():
    assert get_mxfp_intrin_group(out_dtype=T.bfloat16, source_format=T.uint32, source_bit=4, storage_dtype=T.uint8,
                                 use_twiddling=True) == {"func_name": "decode_fp4_to_bf16_twiddling",
                                                         "c_source": "tilelang_ptx.extern:fp4_to_bf16_twiddling"}
    assert get_lop3_intrin_group(out_dtype="float16", source_format="int")["func_name"] == "decode_i4s_to_f16"
    with pytest.raises(NotImplementedError, match="only the fp4 -> bfloat16 twiddling decode"):
        get_mxfp_intrin_group(out_dtype=T.float16, use_twiddling=True)
    with pytest.raises(NotImplementedError, match="without scaling or zeros"):
        get_lop3_intrin_group(out_dtype=T.float16, with_scaling=True)


INFO = get_lop3_intrin_group(out_dtype=T.float16, source_format="uint", source_bit=4, storage_dtype=T.int8)
SOURCE, FUNC = INFO["c_source"], INFO["func_name"]


@tilelang.jit(out_idx=[1])
def decode_i4(groups=64):
    @T.prim_func
    def main(Q: T.Tensor((groups * 4,), "int8"), H: T.Tensor((groups * 8,), "float16")):
        with T.Kernel(1, threads=groups) as bx:
            T.import_source(SOURCE)
            tx = T.get_thread_binding()
            q = T.alloc_local((4,), "int8")
            h = T.alloc_local((8,), "float16")
            for v in T.vectorized(4):
                q[v] = Q[tx * 4 + v]
            T.call_extern(FUNC, T.access_ptr(q, "r"), T.access_ptr(h, "w"), dtype="float16")
            for v in T.vectorized(8):
                H[tx * 8 + v] = h[v]

    return main


def test_int4_decode_through_quantize_helper():
    q = np.random.default_rng(0).integers(-128, 128, 256).astype(np.int8)
    w = q.view(np.uint32)  # each thread's 4 bytes, little-endian
    shifts = np.array([4 * (k // 2) + 16 * (k % 2) for k in range(8)], dtype=np.uint32)
    want = ((w[:, None] >> shifts[None, :]) & 15).reshape(-1).astype(np.float16)
    np.testing.assert_array_equal(decode_i4(64)(q), want)
