"""Functions a kernel calls at compile time (python/tilelang_ptx/_helpers.py): module-level helpers,
factory-local helpers and @T.macro functions travel with the kernel's source and are evaluated by
libtilelang (a macro inlined); a helper that needs the host at compile time is a located error naming
it.  CPU executor, NumPy."""
import inspect
import os
import sys

import numpy as np
import pytest

import tilelang_ptx as tilelang
import tilelang_ptx.language as T
from tilelang_ptx.tvm import DataType

SCALE = 3.0


def offset(i, n):
    y = i + n
    return y


@T.macro
def scale_into(src, dst, i, s):
    tmp = src[i] * SCALE
    dst[i] = tmp + s


def host_only(i):
    import os
    if os.path.exists("/"):
        return i
    return 0


@tilelang.jit(out_idx=[1])
def module_helpers(N=64):
    @T.prim_func
    def main(A: T.Tensor((N,), "float32"), B: T.Tensor((N,), "float32")):
        with T.Kernel(1, threads=64) as bx:
            for i in T.Parallel(N):
                scale_into(A, B, offset(i, 0), A[i] + 1.0)

    return main


def test_module_helper_and_macro():
    A = np.arange(64, dtype=np.float32) / 8
    B = module_helpers(64)(A)
    np.testing.assert_array_equal(B, A * 3.0 + (A + 1.0))


@tilelang.jit(out_idx=[1])
def local_macro(N=64, block=32):
    def nblocks(n):
        return (n + block - 1) // block

    @T.macro
    def twice(buf, j):
        buf[j] = buf[j] * 2.0

    @T.prim_func
    def main(A: T.Tensor((N,), "float32"), B: T.Tensor((N,), "float32")):
        with T.Kernel(nblocks(N), threads=block) as bx:
            for i in T.Parallel(block):
                B[bx * block + i] = A[bx * block + i] + 1.0
                twice(B, bx * block + i)

    return main


def test_factory_local_macro_and_helper():
    A = np.linspace(-1, 1, 96).astype(np.float32)
    np.testing.assert_array_equal(local_macro(96, 32)(A), (A + 1.0) * 2.0)


@tilelang.jit(out_idx=[1])
def needs_host(N=64):
    @T.prim_func
    def main(A: T.Tensor((N,), "float32"), B: T.Tensor((N,), "float32")):
        with T.Kernel(1, threads=64) as bx:
            for i in T.Parallel(N):
                B[i] = A[i] * host_only(i)

    return main


def test_host_helper_is_a_located_error():
    with pytest.raises(tilelang.CompileError) as e:
        needs_host(64)
    msg = str(e.value)
    lines, start = inspect.getsourcelines(host_only)
    line = start + next(i for i, l in enumerate(lines) if "os.path.exists" in l)
    assert f"{__file__}:{line}:" in msg and "host_only" in msg, msg
    assert "called here" in msg, msg


# host calls whose arguments are known when the kernel is captured are evaluated by Python (_hostcalls.py)
def device_flag():
    return os.path.isdir("/") and sys.platform.startswith("linux")


def host_count(k):
    return len(os.sep) * k


@tilelang.jit(out_idx=[1])
def host_folded(N=64):
    @T.prim_func
    def main(A: T.Tensor((N,), "float32"), B: T.Tensor((N,), "float32")):
        with T.Kernel(1, threads=64) as bx:
            for i in T.Parallel(N):
                if device_flag():
                    B[i] = A[i] * os.cpu_count() // os.cpu_count() + host_count(N)
                else:
                    B[i] = A[i]

    return main


def test_host_calls_with_constant_arguments_are_folded():
    A = np.arange(64, dtype=np.float32)
    np.testing.assert_array_equal(host_folded(64)(A), A + 64)


@tilelang.jit
def eager_host(A, n):
    A: T.Tensor((n,), T.float32)
    B = T.empty((n,), T.float32)
    blocks = T.ceildiv(n, host_count(8))  # as gemm_persistent's T.ceildiv(tiles, driver.get_num_sms())
    with T.Kernel(blocks, threads=8) as bx:
        for i in T.Parallel(8):
            if bx * 8 + i < n:
                B[bx * 8 + i] = A[bx * 8 + i] + 1.0
    return B


def test_eager_host_call_is_folded():
    A = np.arange(20, dtype=np.float32)
    np.testing.assert_array_equal(eager_host(A, 20), A + 1.0)


@tilelang.jit
def eager_datatype(A, n, dtype: T.dtype = T.float16):
    A: T.Tensor((n,), dtype)
    B = T.empty((n,), dtype)
    vec = 128 // DataType(dtype).bits  # gemv's TILE_K: the captured class, evaluated by libtilelang
    with T.Kernel(T.ceildiv(n, vec), threads=1) as bx:
        for v in T.serial(vec):
            B[bx * vec + v] = A[bx * vec + v] + T.cast(vec, dtype)
    return B


def test_eager_captures_tvm_datatype():
    A = np.arange(32, dtype=np.float16)
    np.testing.assert_array_equal(eager_datatype(A, 32), A + 8)
    A32 = np.arange(32, dtype=np.float32)
    np.testing.assert_array_equal(eager_datatype(A32, 32, "float32"), A32 + 4)


def failing_query():
    raise RuntimeError("no device here")


def failing_query_reads_host():
    return os.sep and failing_query()


@tilelang.jit(out_idx=[1])
def host_raises_via_helper(N=64):
    @T.prim_func
    def main(A: T.Tensor((N,), "float32"), B: T.Tensor((N,), "float32")):
        with T.Kernel(1, threads=64) as bx:
            for i in T.Parallel(N):
                B[i] = A[i] * failing_query_reads_host()

    return main


def test_host_call_that_raises_is_a_capture_error():
    with pytest.raises(tilelang.CaptureError) as e:
        host_raises_via_helper(64)
    msg = str(e.value)
    assert "failing_query_reads_host()" in msg and "RuntimeError: no device here" in msg, msg


@T.macro
def add_one(buf, i):
    buf[i] = buf[i] + 1.0


def is_pow_of_2(n):
    return isinstance(n, int) and n > 0 and (n & (n - 1)) == 0


@tilelang.jit
def eager_macro(A, n):
    A: T.Tensor((n,), T.float32)
    B = T.empty((n,), T.float32)
    assert is_pow_of_2(n), "n must be a power of 2"
    with T.Kernel(1, threads=n) as bx:
        tx = T.get_thread_binding(0)
        B[tx] = A[tx] * 2.0
        add_one(B, tx)
    return B


def test_eager_kernel_with_module_macro_and_helper():
    A = np.arange(32, dtype=np.float32)
    np.testing.assert_array_equal(eager_macro(A, 32), A * 2.0 + 1.0)
    with pytest.raises(tilelang.CompileError, match="n must be a power of 2"):
        eager_macro(np.zeros(24, dtype=np.float32), 24)


def make_nested(N):
    @T.macro
    def nested_twice(buf, i):
        buf[i] = buf[i] * 2.0

    return nested_twice


twice_macro = make_nested(64)


@tilelang.jit(out_idx=[1])
def reads_nested(N=64):
    @T.prim_func
    def main(A: T.Tensor((N,), "float32"), B: T.Tensor((N,), "float32")):
        with T.Kernel(1, threads=N) as bx:
            for i in T.Parallel(N):
                B[i] = A[i]
                twice_macro(B, i)

    return main


def test_macro_nested_in_another_function():
    A = np.arange(64, dtype=np.float32)
    np.testing.assert_array_equal(reads_nested(64)(A), A * 2.0)


from posixpath import join as path_join  # noqa: E402 - a plain function of another file

from tilelang_ptx.tvm import DataType, tirx  # noqa: E402


def int4_at(v, k, dtype):
    # TileLang's dequantize_gemm helpers: TVM's TIR builders on a uint8 element
    assert v.dtype == T.uint8
    x = (v >> (k.astype(T.uint8) * tirx.const(4, T.uint8))) & tirx.const(15, T.uint8)
    bits = DataType(dtype).bits
    return tirx.reinterpret(T.int8, tirx.shift_left(x, tirx.const(8 - 4, T.uint8))) >> tirx.const(bits - 4, dtype)


@tilelang.jit(out_idx=[1])
def unpack_int4(N=64, foreign=False):
    @T.prim_func
    def main(A: T.Tensor((N // 2,), "uint8"), B: T.Tensor((N,), "int8")):
        with T.Kernel(1, threads=64) as bx:
            for i in T.Parallel(N):
                if foreign:
                    B[i] = path_join(i, "b")  # not folded at capture: i is the kernel's
                else:
                    B[i] = int4_at(A[i // 2], i % 2, T.int8)

    return main


def test_tvm_tirx_helper():
    A = np.arange(0, 256, 8, dtype=np.uint8)
    want = np.stack((A & 15, A >> 4), -1).reshape(-1).astype(np.int8)
    np.testing.assert_array_equal(unpack_int4(64)(A), np.where(want >= 8, want - 16, want))


def test_helper_of_another_file_stops_only_where_reached():
    with pytest.raises(tilelang.CompileError) as e:
        unpack_int4(64, True)
    msg = str(e.value)
    assert "function 'join' is defined in" in msg and "of its own file" in msg, msg
    assert "called here" in msg, msg


@tilelang.jit(out_idx=[1])
def dequant_other_file(N=64, nbit=8, bad=False):
    from xquant import bad_helper, unpack_unsigned  # a sibling package, imported in the factory

    @T.prim_func
    def main(A: T.Tensor((N // 2,), "uint8"), B: T.Tensor((N,), "float16")):
        with T.Kernel(1, threads=64) as bx:
            for i in T.Parallel(N):
                if bad:
                    B[i] = bad_helper(i)
                else:
                    B[i] = unpack_unsigned("uint", nbit)(4, A[i // 2], i % 2, dtype="float16")

    return main


def test_helper_of_another_user_file():
    A = np.arange(0, 256, 8, dtype=np.uint8)
    want = np.stack((A & 15, A >> 4), -1).reshape(-1).astype(np.float16)
    np.testing.assert_array_equal(dequant_other_file(64)(A), want)


def test_helper_of_another_user_file_errors_name_its_lines():
    import xquant.conversion as conv
    src = inspect.getsourcefile(conv)
    lines = open(src).read().splitlines()
    with pytest.raises(tilelang.CompileError) as e:
        dequant_other_file(64, 16)  # the helper's assert: a uint8 element, uint16 storage
    line = next(i for i, l in enumerate(lines, 1) if "assert val.dtype" in l)
    msg = str(e.value)
    assert f"{src}:{line}:9: error: assertion failed: uint8 != uint16" in msg, msg
    assert f"{__file__}:" in msg and "called here" in msg, msg
    with pytest.raises(tilelang.CompileError) as e:
        dequant_other_file(64, bad=True)
    line = next(i for i, l in enumerate(lines, 1) if "no_such_function" in l)
    col = lines[line - 1].index("no_such_function") + 1  # the attribute's column
    assert f"{src}:{line}:{col}: error: unknown name 'T.no_such_function'" in str(e.value), str(e.value)


def bad_helper(x):  # the name of a function of xquant too
    return x


@tilelang.jit(out_idx=[0])
def same_name_other_file(N=64):
    from xquant import bad_helper as other_bad

    @T.prim_func
    def main(B: T.Tensor((N,), "float16")):
        with T.Kernel(1, threads=64) as bx:
            for i in T.Parallel(N):
                B[i] = bad_helper(i) + other_bad(i)

    return main


def test_helper_of_another_file_with_a_name_taken_is_refused():
    # its def, after the kernel's file, would replace this file's bad_helper: refused, never a wrong result
    with pytest.raises(TypeError, match="'bad_helper' of .*conversion.py:17.*has the name of another function"):
        same_name_other_file(64)
