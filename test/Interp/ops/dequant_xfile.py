# REQUIRES: tl-run
# A dequantize kernel whose compile-time helper lives in another file (test/IR/elab/Inputs/
# xfile_quant.py, as TileLang's dequantize examples import theirs from quantize/quantization.py),
# in the form the Python package hands it to libtilelang: after the kernel's file, below a
# `#@tl-line LINE PATH` directive naming the helper's file (python/tilelang_ptx/_helpers.py
# put_foreign; python/tests/test_helpers.py runs the same through the package).  Byte v of
# the tile is v = i * 16 + j; output element [i, 2j + k] is its k-th 4-bit field (low first)
# as float16, checked against the reference evaluator and, element by element, in Python.
# RUN: rm -rf %t && mkdir -p %t
# RUN: %tl-run --device=cpu --check --save %t/a %s | FileCheck %s
# RUN: python3 %S/../../IR/tl-run/Inputs/npy_tool.py check %t/a/B.npy '(((i // 2) %% 256) >> (4 * (i %% 2))) & 15' | FileCheck %s --check-prefix=RAW
# CHECK: check: PASS
# RAW: ok 512
import tilelang
import tilelang.language as T
from tilelang import tvm as tvm


@tilelang.jit(out_idx=[0])
def dequant():
    @T.prim_func
    def main(B: T.Tensor((16, 32), "float16")):
        with T.Kernel(1, threads=128) as bx:
            S = T.alloc_shared((16, 16), "uint8")
            for i, j in T.Parallel(16, 16):
                S[i, j] = T.Cast("uint8", i * 16 + j)
            for i, j in T.Parallel(16, 32):
                B[i, j] = unpack_unsigned("uint", 8)(4, S[i, j // 2], j % 2, dtype="float16")

    return main
#@tl-line 7 ../../IR/elab/Inputs/xfile_quant.py
def unpack_unsigned(storage_type="uint", storage_nbit=8):
    storage_dtype = storage_type + str(storage_nbit)

    def f_convert(nbit: int, val: tvm.tirx.PrimExpr, pos: tvm.tirx.PrimExpr, dtype: str):
        assert val.dtype == storage_dtype, f"{val.dtype} != {storage_dtype}"
        mask = tvm.tirx.const((1 << nbit) - 1, storage_dtype)
        return ((val >> (pos * nbit).astype(storage_dtype)) & mask).astype(dtype)

    return f_convert
#@tl-line 40 dequant_xfile.py
