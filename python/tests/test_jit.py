"""TileLang's JIT flow on the CPU SIMT executor with NumPy (python/tests, run by scripts/test.sh):
the original JIT GEMM test, the factory-decorated style, out_idx forms, argument and capture errors,
compile errors with line and caret, memoisation, dynamic dims, scalars, the profiler."""
import inspect
import os
import sys
import warnings

import numpy as np
import pytest

import tilelang_ptx as tilelang
import tilelang_ptx.language as T


def ref_matmul(A, B, trans_A=False, trans_B=False):
    a = A.astype(np.float32).T if trans_A else A.astype(np.float32)
    b = B.astype(np.float32).T if trans_B else B.astype(np.float32)
    return a @ b


# ---------------------------------------------------------------- TileLang's original JIT test
# examples/python/gemm.py is that test with its imports changed; examples/gemm.py and
# examples/gemm_dynamic_m.py are TileLang files written for `import tilelang`, imported unchanged.
EXAMPLES = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "examples")
sys.path.insert(0, os.path.join(EXAMPLES, "python"))
from gemm import matmul  # noqa: E402

gemm_factory = tilelang.load_file(os.path.join(EXAMPLES, "gemm.py")).matmul
gemm_dynamic_m = tilelang.load_file(os.path.join(EXAMPLES, "gemm_dynamic_m.py")).matmul_dynamic_m


@pytest.mark.parametrize("trans_A,trans_B", [(False, False), (False, True), (True, False)])
def test_original_jit_gemm(trans_A, trans_B):
    M, N, K = 64, 64, 96
    kernel = matmul(M, N, K, 32, 32, 32, trans_A, trans_B, "float16", "float16", "float32", 2, 128)
    rng = np.random.default_rng(1)
    A = rng.uniform(-1, 1, (K, M) if trans_A else (M, K)).astype(np.float16)
    B = rng.uniform(-1, 1, (N, K) if trans_B else (K, N)).astype(np.float16)
    C = kernel(A, B)
    assert C.shape == (M, N) and C.dtype == np.float16
    tilelang.testing.torch_assert_close(C, ref_matmul(A, B, trans_A, trans_B).astype(np.float16),
                                        atol=1e-2, rtol=1e-2, max_mismatched_ratio=0.05)
    assert kernel.out_idx == [2]
    assert [p.name for p in kernel.params] == ["A", "B", "C"]
    assert ".entry" in kernel.get_kernel_source()


# ---------------------------------------------------------------- factory-decorated style
def test_factory_decorated_gemm():
    kernel = gemm_factory(64, 32, 64, 32, 32, 32, num_stages=2)
    rng = np.random.default_rng(2)
    A = rng.uniform(-1, 1, (64, 64)).astype(np.float16)
    B = rng.uniform(-1, 1, (64, 32)).astype(np.float16)
    tilelang.testing.torch_assert_close(kernel(A, B), ref_matmul(A, B), atol=1e-2, rtol=1e-2)


# ---------------------------------------------------------------- line information (issue 32)
def test_line_info_names_the_lines_of_this_file():
    """The PTX's .loc lines name the statements' lines of the file the kernel is written in, its .file that file;
    line_info=False (tl_compile_options.no_line_info) leaves them out, and is another compile."""
    @T.prim_func
    def add_one(A: T.Tensor((128,), "float32"), B: T.Tensor((128,), "float32")):
        with T.Kernel(1, threads=128) as bx:
            for i in T.Parallel(128):
                B[i] = A[i] + 1.0
    store_line = inspect.currentframe().f_lineno - 1
    src = tilelang.compile(add_one, out_idx=-1, target="sm_80").get_kernel_source()
    assert f".loc\t1 {store_line} " in src
    assert [ln for ln in src.splitlines() if ln.startswith("\t.file\t1 ")][0].endswith(
        os.path.basename(__file__) + '"')
    bare = tilelang.compile(add_one, out_idx=-1, target="sm_80", line_info=False).get_kernel_source()
    assert ".loc" not in bare and ".file" not in bare and ".entry" in bare


# ---------------------------------------------------------------- memoisation
def test_memoisation_factory():
    first = gemm_factory(32, 32, 32, 32, 32, 32, num_stages=1)
    n = tilelang.compile_count()
    again = gemm_factory(32, 32, 32, 32, 32, 32, num_stages=1)
    assert again is first and tilelang.compile_count() == n
    gemm_factory(32, 32, 64, 32, 32, 32, num_stages=1)  # different arguments: one more compilation
    assert tilelang.compile_count() == n + 1


def test_memoisation_seed_style():
    args = (32, 32, 32, 32, 32, 32, False, False, "float16", "float16", "float32", 1, 128)
    matmul(*args)
    n = tilelang.compile_count()
    k = matmul(*args)  # the factory runs again; the same text compiles nothing
    assert tilelang.compile_count() == n
    A = np.ones((32, 32), np.float16)
    assert np.all(k(A, A) == 32)


# ---------------------------------------------------------------- out_idx forms
@tilelang.jit
def add_sub(N=256, block=128, out_idx_dummy=0):
    @T.prim_func
    def main(A: T.Tensor((N,), "float32"), B: T.Tensor((N,), "float32"),
             C: T.Tensor((N,), "float32"), D: T.Tensor((N,), "float32")):
        with T.Kernel(T.ceildiv(N, block), threads=block) as bx:
            for i in T.Parallel(block):
                C[bx * block + i] = A[bx * block + i] + B[bx * block + i]
                D[bx * block + i] = A[bx * block + i] - B[bx * block + i]

    return main


def _ab(n=256):
    rng = np.random.default_rng(3)
    return rng.standard_normal(n).astype(np.float32), rng.standard_normal(n).astype(np.float32)


def test_out_idx_forms():
    pf = add_sub.func()  # the factory's prim_func, compiled below with each out_idx
    A, B = _ab()
    k = tilelang.compile(pf, out_idx=3)  # int
    assert k.out_idx == [3]
    C = np.zeros(256, np.float32)
    D = k(A, B, C)
    assert isinstance(D, np.ndarray) and np.allclose(D, A - B) and np.allclose(C, A + B)

    k = tilelang.compile(pf, out_idx=-2)  # negative: C
    D = np.zeros(256, np.float32)
    C = k(A, B, D)
    assert np.allclose(C, A + B) and np.allclose(D, A - B)

    k = tilelang.compile(pf, out_idx=[2, 3])  # list: both, returned as a list
    C, D = k(A, B)
    assert np.allclose(C, A + B) and np.allclose(D, A - B)

    k = tilelang.compile(pf, out_idx=None)  # none: the caller passes the outputs
    C, D = np.zeros(256, np.float32), np.zeros(256, np.float32)
    assert k(A, B, C, D) is None
    assert np.allclose(C, A + B) and np.allclose(D, A - B)

    k = add_sub()  # bare @tilelang.jit: out_idx None
    assert k.out_idx is None


def test_out_idx_errors():
    pf = add_sub.func()
    with pytest.raises(tilelang.ArgumentError, match="out of range for 4 parameters"):
        tilelang.compile(pf, out_idx=4)
    with pytest.raises(tilelang.ArgumentError, match="twice"):
        tilelang.compile(pf, out_idx=[2, -2])


# ---------------------------------------------------------------- argument errors
def test_argument_errors_name_the_parameter():
    k = gemm_factory(32, 32, 32, 32, 32, 32, num_stages=1)
    A = np.zeros((32, 32), np.float16)
    with pytest.raises(tilelang.ArgumentError, match=r"takes 2 input\(s\) \(A, B\), got 1"):
        k(A)
    with pytest.raises(tilelang.ArgumentError, match="do not pass them"):
        k(A, A, A)
    with pytest.raises(tilelang.ArgumentError, match="argument 'B' .*dtype: expected float16, got float32"):
        k(A, np.zeros((32, 32), np.float32))
    with pytest.raises(tilelang.ArgumentError, match="argument 'A' .*expected 32, got 16|argument 'A'"):
        k(np.zeros((16, 32), np.float16), A)
    with pytest.raises(tilelang.ArgumentError, match="argument 'B': expected a tensor .*got int"):
        k(A, 3)
    with pytest.raises(tilelang.ArgumentError, match="argument 'A' .*contiguous"):
        k(np.zeros((32, 64), np.float16)[:, ::2], A)


@tilelang.jit(out_idx=[-1])
def scale_unused_bias(N=256, block=128):
    @T.prim_func
    def main(A: T.Tensor((N,), "float32"), Bias: T.Tensor((N,), "float32"), C: T.Tensor((N,), "float32")):
        with T.Kernel(T.ceildiv(N, block), threads=block) as bx:
            for i in T.Parallel(block):
                C[bx * block + i] = A[bx * block + i] * 2.0 + 1.0

    return main


def test_none_for_an_unused_tensor():
    """None for a tensor parameter the kernel never touches is accepted (issue 14); for a used one
    it is an error naming the argument; the next call with a real tensor still works."""
    k = scale_unused_bias()
    A, B = _ab()
    assert np.array_equal(k(A, None), A * np.float32(2) + np.float32(1))
    with pytest.raises(tilelang.ArgumentError, match="argument 'A' .*expected a tensor .*got a NULL tensor"):
        k(None, B)
    assert np.array_equal(k(A, B), A * np.float32(2) + np.float32(1))


STRIDED = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "test", "GPU", "kernels",
                       "strided.py")


def test_strided_tensor_takes_a_view():
    """T.StridedTensor (issue 14): a NumPy view with row stride 96 elements; with a T.dynamic row stride the
    same kernel takes any; a view whose strides differ from the compiled ones names the argument."""
    strided = tilelang.load_file(STRIDED).strided
    big = np.arange(64 * 128, dtype=np.float32).reshape(64, 128) / np.float32(64)
    k = strided(ld=96)
    view = big.reshape(-1)[:64 * 96].reshape(64, 96)[:, :64]
    assert np.array_equal(k(view), view * np.float32(2) + np.float32(1))
    with pytest.raises(tilelang.ArgumentError, match=r"argument 'A' .*strides\[0\]: expected 96"):
        k(big[:, :64])
    kd = strided(dynamic_ld=True)
    for v in (big[:, :64], view, np.ascontiguousarray(big[:, :64])):
        assert np.array_equal(kd(v), v * np.float32(2) + np.float32(1))


def test_strided_tensor_is_no_out_idx_output(tmp_path):
    """out_idx naming a T.StridedTensor is refused before anything runs (the library's rule): the package
    would allocate it compact while the kernel addresses it with its row stride."""
    src = open(STRIDED).read().replace("out_idx=[-1]", "out_idx=[-2]")
    (tmp_path / "strided_out.py").write_text(src)
    for dynamic_ld in (False, True):
        with pytest.raises((tilelang.ArgumentError, tilelang.CompileError),
                           match="out_idx -2 names 'A', a T.StridedTensor") as ei:
            tilelang.load_file(str(tmp_path / "strided_out.py")).strided(dynamic_ld=dynamic_ld)
        # located at the decorated factory (@tilelang.jit(out_idx=[-2]) on line 10)
        assert str(ei.value).startswith(f"{tmp_path / 'strided_out.py'}:10: error: "), str(ei.value)
    k = tilelang.load_file(STRIDED).strided(ld=96)  # the same compiled kernel with another out_idx
    with pytest.raises(tilelang.ArgumentError, match="out_idx 0 names 'A', a T.StridedTensor"):
        tilelang.JITKernel(k._ck, None, [0], "auto")
    assert tilelang.JITKernel(k._ck, None, [-1], "auto").out_idx == [1]


# ---------------------------------------------------------------- compile errors
def test_syntax_error_has_line_and_caret():
    @tilelang.jit(out_idx=-1)
    def broken(N=64):
        @T.prim_func
        def main(A: T.Tensor((N,), "float32"), B: T.Tensor((N,), "float32")):
            with T.Kernel(1, threads=32) as bx:
                T.no_such_op(A)  # not TileLang: the front end's error, located
                for i in T.Parallel(N):
                    B[i] = A[i]

        return main

    with pytest.raises(tilelang.CompileError) as e:
        broken()
    msg = str(e.value)
    lines, start = inspect.getsourcelines(broken.func)
    line = start + next(i for i, l in enumerate(lines) if "no_such_op" in l)
    col = lines[line - start].index("no_such_op") + 1
    assert f"{__file__}:{line}:{col}: error:" in msg, msg
    assert "T.no_such_op(A)" in msg, msg
    caret_line = [l for l in msg.splitlines() if l.strip() == "^"][0]
    assert caret_line.index("^") == col - 1, msg


def test_semantic_error_names_file_line():
    @tilelang.jit(out_idx=-1)
    def unknown_op(N=64):
        @T.prim_func
        def main(A: T.Tensor((N,), "float32"), B: T.Tensor((N,), "float32")):
            with T.Kernel(1, threads=32) as bx:
                for i in T.Parallel(N):
                    B[i] = T.no_such_op(A[i])

        return main

    with pytest.raises(tilelang.CompileError, match=r"test_jit.py:\d+:\d+: error:.*no_such_op"):
        unknown_op()


def test_capture_error_names_the_value():
    helper = object()

    @tilelang.jit(out_idx=-1)
    def captures(N=64):
        @T.prim_func
        def main(A: T.Tensor((N,), "float32"), B: T.Tensor((N,), "float32")):
            with T.Kernel(1, threads=32) as bx:
                for i in T.Parallel(N):
                    B[i] = A[i] * helper

        return main

    with pytest.raises(tilelang.CaptureError, match="kernel 'main' reads 'helper'.*builtins.object"):
        captures()


def test_prim_func_is_not_callable():
    with pytest.raises(TypeError, match="not a Python function"):
        add_sub.func()(1, 2)


# ---------------------------------------------------------------- dynamic dims, scalars, module constants
def test_dynamic_m_output_shape():
    k = gemm_dynamic_m(N=32, K=64, block_M=32, block_N=32, block_K=32, num_stages=2)
    assert k.params[0].shape == ["m", 64]
    rng = np.random.default_rng(4)
    B = rng.uniform(-1, 1, (64, 32)).astype(np.float16)
    for m in (1, 17, 40):
        A = rng.uniform(-1, 1, (m, 64)).astype(np.float16)
        C = k(A, B)
        assert C.shape == (m, 32)
        tilelang.testing.torch_assert_close(C, ref_matmul(A, B), atol=1e-2, rtol=1e-2)


SAXPY_BLOCK = 128  # a module global the kernel reads


@tilelang.jit(out_idx=-1, target="cpu")
def saxpy(N):
    @T.prim_func
    def main(X: T.Tensor((N,), "float32"), Y: T.Tensor((N,), "float32"), alpha: T.float32,
             Z: T.Tensor((N,), "float32")):
        with T.Kernel(T.ceildiv(N, SAXPY_BLOCK), threads=SAXPY_BLOCK) as bx:
            for i in T.Parallel(SAXPY_BLOCK):
                if bx * SAXPY_BLOCK + i < N:
                    Z[bx * SAXPY_BLOCK + i] = alpha * X[bx * SAXPY_BLOCK + i] + Y[bx * SAXPY_BLOCK + i]

    return main


def test_scalar_argument_and_cpu_target():
    k = saxpy(1000)
    assert k.get_kernel_source() == ""  # target="cpu": no PTX
    X, Y = np.arange(1000, dtype=np.float32), np.ones(1000, np.float32)
    np.testing.assert_allclose(k(X, Y, 2.5), 2.5 * X + Y)
    np.testing.assert_allclose(k(X, Y, np.float32(0.5)), 0.5 * X + Y)
    with pytest.raises(tilelang.ArgumentError, match="argument 'alpha': expected a float32 scalar"):
        k(X, Y, "two")


def test_unsupported_pass_config_and_target():
    with pytest.raises(ValueError, match="unsupported pass config 'tl.no_such'"):
        tilelang.compile(add_sub.func(), pass_configs={"tl.no_such": True})
    with pytest.raises(ValueError, match="target 'sm_70' is not supported"):
        tilelang.compile(add_sub.func(), target="sm_70")
    k = tilelang.compile(add_sub.func(), out_idx=[2, 3], pass_configs={"tl.enable_fast_math": True},
                         target="sm_80")
    assert "sm_80" in k.get_kernel_source()


def test_compile_warning():
    # libtilelang's warnings reach Python's warnings module (CompileWarning), with the location and caret
    @tilelang.jit(out_idx=[1])
    def unwritten(n=64):
        @T.prim_func
        def main(A: T.Tensor((n,), T.float32), B: T.Tensor((n,), T.float32)):
            with T.Kernel(1, threads=64) as bx:
                S = T.alloc_fragment((n,), T.float32)
                for i in T.Parallel(n):
                    B[i] = S[i] + A[i]
        return main

    with pytest.warns(tilelang.CompileWarning) as rec:
        unwritten(64)
    assert rec[0].filename == __file__  # reported at the user's call, not inside the package
    text = str(rec[0].message)
    assert "warning: local.fragment buffer 'S' is read here, but no write of it reaches this read" in text
    assert "B[i] = S[i] + A[i]" in text and "^" in text


def test_attention_schedule_config_given_false():
    # an attention schedule config given False is not the same as absent: the sm_90a default schedule
    # overlaps FlashAttention's softmax with its wgmma (wgmma.wait_group 1), False keeps it from doing so
    fa = tilelang.load_file(os.path.join(EXAMPLES, "flash_attention.py")).flashattn
    func = fa.func(1, 2, 256, 128, False, block_M=128, block_N=128, num_stages=2, threads=256)
    dflt = tilelang.compile(func, out_idx=[3], target="sm_90a")
    off = tilelang.compile(func, out_idx=[3], target="sm_90a", pass_configs={"tl.attention_overlap": False})
    assert "wgmma.wait_group.sync.aligned 1;" in dflt.get_kernel_source()
    assert "wgmma.wait_group.sync.aligned 1;" not in off.get_kernel_source()


def test_pass_config_keys_are_the_librarys():
    # the package takes its keys from libtilelang's table (tl_pass_config_apply): tl.disable_tma_store, which
    # a copy of the table in the package once lacked, keeps the sm_90a GEMM's epilogue off TMA stores
    g = gemm_factory.func(4096, 4096, 256, 128, 128, 64, num_stages=3, threads=256)
    dflt = tilelang.compile(g, out_idx=[2], target="sm_90a")
    off = tilelang.compile(g, out_idx=[2], target="sm_90a", pass_configs={"tl.disable_tma_store": True})
    assert "cp.async.bulk.tensor.2d.global.shared::cta" in dflt.get_kernel_source()
    assert "cp.async.bulk.tensor.2d.global.shared::cta" not in off.get_kernel_source()
    with pytest.raises(ValueError, match="tl.attention_persistent"):  # the message lists the library's keys
        tilelang.compile(g, pass_configs={"tl.disable_tma_stores": True})
    # the library's value rule: tl.config_index_bitwidth takes 32 or 64; PassConfigKey has every key
    with pytest.raises(ValueError, match="'tl.config_index_bitwidth': expected 32 or 64, got '16'"):
        tilelang.compile(g, pass_configs={tilelang.PassConfigKey.TL_CONFIG_INDEX_BITWIDTH: 16})
    assert tilelang.PassConfigKey.TL_ENABLE_STREAM_K == "tl.enable_stream_k"


# ---------------------------------------------------------------- profiler, testing helpers
def test_profiler_on_cpu():
    k = gemm_factory(32, 32, 32, 32, 32, 32, num_stages=1)
    prof = k.get_profiler(tensor_supply_type=tilelang.TensorSupplyType.Normal)
    prof.assert_allclose(lambda A, B: ref_matmul(A, B), atol=1e-2, rtol=1e-2)
    assert prof.do_bench(warmup=1, rep=3) > 0
    with pytest.raises(AssertionError, match="elements"):
        prof.assert_allclose(lambda A, B: ref_matmul(A, B) + 1, atol=1e-2, rtol=1e-2)


def test_torch_assert_close_ratio():
    a = np.zeros(100, np.float32)
    b = a.copy()
    b[:3] = 1
    tilelang.testing.torch_assert_close(a, b, atol=1e-3, rtol=0, max_mismatched_ratio=0.05)
    with pytest.raises(AssertionError, match="3 of 100 elements"):
        tilelang.testing.torch_assert_close(a, b, atol=1e-3, rtol=0, max_mismatched_ratio=0.01)


# ---------------------------------------------------------------- other DLPack producers, the T namespace
class DLPackOnly:
    """A tensor known only through __dlpack__ (as CuPy or JAX arrays are to this package)."""

    def __init__(self, a):
        self.a = a

    def __dlpack__(self, stream=None):
        return self.a.__dlpack__()

    def __dlpack_device__(self):
        return self.a.__dlpack_device__()


def test_generic_dlpack_tensors():
    k = tilelang.compile(add_sub.func(), out_idx=None)
    A, B = _ab()
    C, D = np.zeros(256, np.float32), np.zeros(256, np.float32)
    assert k(DLPackOnly(A), DLPackOnly(B), DLPackOnly(C), DLPackOnly(D)) is None
    assert np.allclose(C, A + B) and np.allclose(D, A - B)
    k = tilelang.compile(add_sub.func(), out_idx=-1)
    with pytest.raises(tilelang.ArgumentError, match="cannot allocate output 'D' like a"):
        k(DLPackOnly(A), DLPackOnly(B), C)


def test_language_names_are_inert():
    assert T.float16 == "float16" and isinstance(T.bfloat16, str)
    t = T.Tensor((4, 8), "float16")
    assert t.args == ((4, 8), "float16")
    assert repr(T.GemmWarpPolicy.FullRow) == "T.GemmWarpPolicy.FullRow"
    assert T.some_future_intrinsic(1, x=2).kwargs == {"x": 2}  # any T.name resolves
    assert tilelang.language is T


def test_annotation_only_values():
    def factory(M):
        shape = (M * 2,)  # a factory local used only in annotations: from __annotations__
        n = M * 2

        @T.prim_func
        def main(A: T.Tensor(shape, "float32"), B: T.Tensor((n + 0,), "float32")):  # an expression: replaced
            with T.Kernel(1, threads=64) as bx:
                for i in T.Parallel(64):
                    B[i] = A[i] + 1.0

        return main

    k = tilelang.compile(factory(32), out_idx=-1)
    assert k.params[0].shape == [64] and k.params[1].shape == [64]
    A = np.arange(64, dtype=np.float32)
    np.testing.assert_array_equal(k(A), A + 1)


# ---------------------------------------------------------------- the eager style
@tilelang.jit
def add_eager(A, B, block=128):
    N = T.const("N")
    A: T.Tensor((N,), "float32")
    B: T.Tensor((N,), "float32")
    C = T.empty((N,), "float32")
    with T.Kernel(T.ceildiv(N, block), threads=block) as bx:
        for i in T.Parallel(block):
            C[bx * block + i] = A[bx * block + i] + B[bx * block + i]
    return C


def test_eager_style_source_goes_to_libtilelang():
    """The eager style: detected, never run by Python, its whole source handed to libtilelang, whose
    front end binds T.const N from the call's tensors' shapes and returns the T.empty output."""
    assert add_eager.eager and not gemm_factory.eager
    A = np.arange(256, dtype=np.float32)
    C = add_eager(A, A)
    np.testing.assert_array_equal(C, A + A)


def test_eager_one_compilation_per_binding():
    """Each distinct T.const binding compiles once; the same shapes again compile nothing."""
    n = tilelang.compile_count()
    A = np.arange(384, dtype=np.float32)
    B = np.ones(384, np.float32)
    np.testing.assert_array_equal(add_eager(A, B), A + 1)
    assert tilelang.compile_count() == n + 1
    a, b = A[:128].copy(), B[:128].copy()
    np.testing.assert_array_equal(add_eager(a, b), a + 1)  # another N: a second compilation
    assert tilelang.compile_count() == n + 2
    np.testing.assert_array_equal(add_eager(b, a), a + 1)  # N = 128 again: none
    np.testing.assert_array_equal(add_eager(A, A), A + A)  # N = 384 again: none
    assert tilelang.compile_count() == n + 2
    with pytest.raises(tilelang.ArgumentError, match="argument 'B' .*dtype: expected float32, got float64"):
        add_eager(A, A.astype(np.float64))  # a known binding (the cached path): the kernel checks the rest
    k = add_eager.compile(N=128)  # .compile(): the kernel object of that binding, compiled already
    assert tilelang.compile_count() == n + 2 and isinstance(k, tilelang.JITKernel)
    assert [p.name for p in k.params] == ["A", "B", "C"] and k.out_idx == [2]
    assert k.params[0].shape == [128]
    np.testing.assert_array_equal(k(a, a), a + a)
    add_eager(a, b, block=64)  # a parameter given another value: another binding
    assert tilelang.compile_count() == n + 3
    add_eager(a, b, block=128)  # its default: the binding of the call without it
    add_eager(a, b, np.int64(64))  # a NumPy scalar: as the int
    assert tilelang.compile_count() == n + 3


# examples/python/gemm_eager.py: the GEMM in the eager style (M, N, K = T.const("M, N, K")).
from gemm_eager import matmul as gemm_eager  # noqa: E402


def test_eager_gemm_mnk():
    """`M, N, K = T.const("M, N, K")`: all three from A's and B's shapes; f16 against NumPy's matmul."""
    rng = np.random.default_rng(6)
    A = rng.uniform(-1, 1, (64, 96)).astype(np.float16)
    B = rng.uniform(-1, 1, (96, 32)).astype(np.float16)
    C = gemm_eager(A, B, 32, 32, 32)
    assert C.shape == (64, 32) and C.dtype == np.float16
    tilelang.testing.torch_assert_close(C, ref_matmul(A, B).astype(np.float16), atol=1e-2, rtol=1e-2,
                                        max_mismatched_ratio=0.05)
    n = tilelang.compile_count()
    k = gemm_eager.compile(M=64, N=32, K=96, block_M=32, block_N=32, block_K=32)  # TileLang's form
    assert tilelang.compile_count() == n, "compile() with the call's binding compiled again"
    assert [p.shape for p in k.params] == [[64, 96], [96, 32], [64, 32]]
    np.testing.assert_array_equal(k(A, B), C)
    C2 = gemm_eager(A, B, block_M=32, block_N=32, block_K=32)  # keywords: the same binding
    assert tilelang.compile_count() == n
    np.testing.assert_array_equal(C2, C)
    A2 = rng.uniform(-1, 1, (32, 64)).astype(np.float16)
    B2 = rng.uniform(-1, 1, (64, 64)).astype(np.float16)
    tilelang.testing.torch_assert_close(gemm_eager(A2, B2, 32, 32, 32), ref_matmul(A2, B2).astype(np.float16),
                                        atol=1e-2, rtol=1e-2, max_mismatched_ratio=0.05)
    assert tilelang.compile_count() == n + 1
    k = gemm_eager.compile(M=32, N=64, K=64, block_M=32, block_N=32, block_K=32, dtype="bfloat16")
    assert k.params[0].dtype == "bfloat16" and k.params[2].dtype == "bfloat16" and tilelang.compile_count() == n + 2


def test_eager_gemm_example():
    """examples/python/gemm_eager.py: the GEMM of gemm.py in the eager style."""
    from gemm_eager import run_gemm
    k = run_gemm(64, 64, 64, 32, 32, 32, gpu=False)
    assert k.out_idx == [2]


def test_eager_inconsistent_shapes():
    A = np.zeros(256, np.float32)
    with pytest.raises(tilelang.ArgumentError, match=r"T.const 'N' is 256 from argument 'A' \(dim 0\) but 128 "
                       r"from argument 'B' \(dim 0\)"):
        add_eager(A, np.zeros(128, np.float32))
    with pytest.raises(tilelang.ArgumentError, match=r"T.const 'K' is 96 from argument 'A' \(dim 1\) but 64 "
                       r"from argument 'B' \(dim 0\)"):
        gemm_eager(np.zeros((32, 96), np.float16), np.zeros((64, 32), np.float16), 32, 32, 32)
    with pytest.raises(tilelang.ArgumentError, match=r"T.const 'N' is 128 from keyword N=128 but 256 from "
                       r"argument 'A' \(dim 0\)"):
        add_eager(A, A, N=128)
    with pytest.raises(tilelang.ArgumentError, match=r"argument 'A' of eager kernel 'add_eager': 2 dims "
                       r"\[16, 16\], its annotation declares 1"):
        add_eager(np.zeros((16, 16), np.float32), A)


# issue 29: a T.const symbol reaching a tensor's annotation through an alias
@tilelang.jit
def sym_square(A):
    K = T.const("K")
    KH, KW = K, K  # a tuple alias: both dims are K
    A: T.Tensor((KH, KW), "float32")
    C = T.empty((KH, KW), "float32")
    with T.Kernel(1, threads=128) as bx:
        for i, j in T.Parallel(KH, KW):
            C[i, j] = A[i, j] * 2.0 + A[j, i]
    return C


@tilelang.jit
def row_scale(A, B, trans=False):
    M, N = T.const("M, N")
    B_shape = [M, N] if not trans else [N, M]  # N: only B's shape gives it, through the condition
    A: T.Tensor((M,), "float32")
    B: T.Tensor(B_shape, "float32")
    C = T.empty([M, N], "float32")
    with T.Kernel(1, threads=128) as bx:
        for i, j in T.Parallel(M, N):
            if trans:
                C[i, j] = B[j, i] * A[i]
            else:
                C[i, j] = B[i, j] * A[i]
    return C


@tilelang.jit
def row_scale_opaque(A, B, trans=False):
    M, N = T.const("M, N")
    B_shape = [M, N] if M > 0 else [N, M]  # reads a T.const: Python cannot evaluate it
    A: T.Tensor((M,), "float32")
    B: T.Tensor(B_shape, "float32")
    C = T.empty([M, N], "float32")
    with T.Kernel(1, threads=128) as bx:
        for i, j in T.Parallel(M, N):
            C[i, j] = B[i, j] * A[i]
    return C


def test_eager_const_through_tuple_alias():
    """`KH, KW = K, K`, then `A: T.Tensor((KH, KW), ...)`: K from A's shape, both dims."""
    rng = np.random.default_rng(29)
    A = rng.uniform(-1, 1, (12, 12)).astype(np.float32)
    C = sym_square(A)
    assert C.shape == (12, 12)
    np.testing.assert_allclose(C, A * 2 + A.T, rtol=1e-6, atol=1e-6)
    k = sym_square.compile(K=12)  # the same binding: compiled already
    np.testing.assert_allclose(k(A), A * 2 + A.T, rtol=1e-6, atol=1e-6)
    with pytest.raises(tilelang.ArgumentError, match=r"T.const 'K' is 3 from argument 'A' \(dim 0\) but 4 from "
                       r"argument 'A' \(dim 1\)"):
        sym_square(np.zeros((3, 4), np.float32))


@pytest.mark.parametrize("trans", [False, True])
def test_eager_const_through_conditional_shape(trans):
    """`B_shape = [M, N] if not trans else [N, M]`: the condition evaluated with the call's `trans`."""
    rng = np.random.default_rng(30)
    A = rng.uniform(-1, 1, 8).astype(np.float32)
    Bmn = rng.uniform(-1, 1, (8, 16)).astype(np.float32)
    B = Bmn.T.copy() if trans else Bmn
    C = row_scale(A, B, trans=trans) if trans else row_scale(A, B)
    assert C.shape == (8, 16)
    np.testing.assert_allclose(C, Bmn * A[:, None], rtol=1e-6, atol=1e-6)
    # the shape the other layout declares: M from A (8) and B (16) disagree
    other = Bmn if trans else Bmn.T.copy()
    dim = 1 if trans else 0
    with pytest.raises(tilelang.ArgumentError, match=rf"T.const 'M' is 8 from argument 'A' \(dim 0\) but 16 from "
                       rf"argument 'B' \(dim {dim}\)"):
        row_scale(A, other, trans)


def test_eager_conditional_shape_not_evaluable():
    """A condition Python cannot evaluate (it reads a T.const) leaves the shape unknown: today's error."""
    A = np.zeros(8, np.float32)
    with pytest.raises(tilelang.ArgumentError, match=r"eager kernel 'row_scale_opaque': T.const 'N' is not "
                       r"determined by the shape of a tensor argument"):
        row_scale_opaque(A, np.zeros((8, 16), np.float32))
    with pytest.raises(tilelang.ArgumentError, match="T.const 'N' is not determined"):
        row_scale.compile(M=8)  # no tensor given: nothing determines N


@tilelang.jit
def tile_rows(A, block=64):
    N, R = T.const("N, R")  # R: no tensor's shape gives it
    A: T.Tensor((N,), "float32")
    C = T.empty((R, N), "float32")
    with T.Kernel(T.ceildiv(N, block), threads=block) as bx:
        for r, i in T.Parallel(R, block):
            if bx * block + i < N:
                C[r, bx * block + i] = A[bx * block + i] * (r + 1)
    return C


def test_eager_const_without_value():
    A = np.arange(100, dtype=np.float32)
    with pytest.raises(tilelang.ArgumentError, match=r"eager kernel 'tile_rows': T.const 'R' is not "
                       r"determined by the shape of a tensor argument; pass R=<int>"):
        tile_rows(A)
    C = tile_rows(A, R=3)  # a keyword binds it
    assert C.shape == (3, 100)
    np.testing.assert_array_equal(C, np.stack([A, 2 * A, 3 * A]))
    with pytest.raises(tilelang.ArgumentError, match="T.const 'R' is not determined"):
        tile_rows.compile(N=100)


def test_eager_argument_errors():
    A = np.zeros(128, np.float32)
    with pytest.raises(tilelang.ArgumentError, match="has no parameter or T.const named 'M'"):
        add_eager(A, A, M=4)
    with pytest.raises(tilelang.ArgumentError, match="eager kernel 'add_eager': missing a required argument: 'B'"):
        add_eager(A)
    with pytest.raises(tilelang.ArgumentError, match="argument 'B' of eager kernel 'add_eager': expected a "
                       "tensor .*got int"):
        add_eager(A, 3)
    with pytest.raises(tilelang.ArgumentError, match="argument 'block' of eager kernel 'add_eager' is a tensor, "
                       "but the body does not declare it"):
        add_eager(A, A, A)
    with pytest.raises(tilelang.ArgumentError, match="T.const 'N' takes an int, got float"):
        add_eager.compile(N=2.5)
    with pytest.raises(tilelang.CaptureError, match="argument 'block' of eager kernel 'add_eager' is "
                       "builtins.object"):
        add_eager(A, A, block=object())


def test_eager_dlpack_tensors():
    """Shapes of objects known only through __dlpack__ bind T.const symbols too."""
    A = np.arange(640, dtype=np.float32)  # N = 640: no other test's binding
    n = tilelang.compile_count()
    k = add_eager.compile(DLPackOnly(A), DLPackOnly(A))  # .compile() takes tensors as well
    assert k.params[0].shape == [640] and tilelang.compile_count() == n + 1
    with pytest.raises(tilelang.ArgumentError, match="cannot allocate output 'C' like a"):
        add_eager(DLPackOnly(A), DLPackOnly(A))  # outputs are allocated like NumPy/PyTorch inputs only
    np.testing.assert_array_equal(add_eager(A, A), A + A)
    assert tilelang.compile_count() == n + 1


# ---------------------------------------------------------------- the PyTorch path (host tensors)
def test_torch_path(monkeypatch):
    """kernel(A, B) with PyTorch tensors: the fast path, torch.empty outputs.  CPU tensors here (the
    CI machine has no GPU); without PyTorch, tests/fake_torch.py stands in for it."""
    try:
        import torch
    except ImportError:
        import fake_torch as torch
        monkeypatch.setitem(sys.modules, "torch", torch)
    import tilelang_ptx.kernel as kmod
    monkeypatch.setattr(kmod, "_torch_tensor", None)  # a fake from an earlier test must not stay
    k = gemm_factory(32, 32, 64, 32, 32, 32, num_stages=1)
    rng = np.random.default_rng(5)
    a = rng.uniform(-1, 1, (32, 64)).astype(np.float16)
    b = rng.uniform(-1, 1, (64, 32)).astype(np.float16)
    A, B = torch.from_numpy(a), torch.from_numpy(b)
    monkeypatch.setattr(kmod, "_fastcall", None)  # the pure-Python path first (test_fastcall.py: the C one)
    monkeypatch.setattr(k, "_fast", None)
    for _ in range(3):  # the first call takes the general path, the next ones the fast path
        C = k(A, B)
        assert type(C).__module__.startswith("torch") and tuple(C.shape) == (32, 32)
        tilelang.testing.torch_assert_close(C, ref_matmul(a, b), atol=1e-2, rtol=1e-2)
    assert kmod._torch_tensor is type(A)
    slow = []
    monkeypatch.setattr(kmod, "_pack_tensor", lambda *a: slow.append(a))
    k(A, B)
    assert not slow, "the fast path was not taken"
    monkeypatch.undo()
    monkeypatch.setitem(sys.modules, "torch", torch)
    with pytest.raises(tilelang.ArgumentError, match="argument 'B' .*dtype: expected float16, got float32"):
        k(A, torch.from_numpy(b.astype(np.float32)))
    x = np.arange(256, dtype=np.float32)  # the eager style: N from a PyTorch tensor's shape
    C = add_eager(torch.from_numpy(x), torch.from_numpy(x))
    assert type(C).__module__.startswith("torch") and tuple(C.shape) == (256,)
    np.testing.assert_array_equal(C.numpy(), x + x)


@tilelang.jit
def scale_eager(A, block: int = 64, factor: float = 2.0):
    N = T.const("N")
    A: T.Tensor((N,), "float32")
    B = T.empty((N,), "float32")
    with T.Kernel(T.ceildiv(N, block), threads=block) as bx:
        for i in T.Parallel(block):
            B[bx * block + i] = A[bx * block + i] * factor
    return B


def test_eager_builtin_annotations():
    """Plain type hints on an eager kernel's scalar parameters (int, float) are not captures."""
    A = np.arange(128, dtype=np.float32)
    np.testing.assert_array_equal(scale_eager(A), A * 2)


def test_load_file_with_autotune_and_pass_config_key():
    """TileLang files with @tilelang.autotune and tilelang.PassConfigKey import unchanged (the search
    itself: test_autotuner.py)."""
    mod = tilelang.load_file(os.path.join(EXAMPLES, "tune", "gemm_autotune.py"))
    assert len(mod.matmul.autotune_configs) == 288
    assert tilelang.PassConfigKey.TL_DISABLE_TMA_LOWER == "tl.disable_tma_lower"


def test_device_target():
    """tilelang.device_target(N) is libtilelang's tl_device_target: a supported target for any ordinal,
    sm_80 (which runs everywhere) for one that does not exist."""
    names = tilelang._lib.target_list().decode()
    assert tilelang.device_target(0) in names
    assert tilelang.device_target() == tilelang.device_target(0) == tilelang._lib.default_target().decode()
    assert tilelang.device_target(4096) == "sm_80"


def test_remarks_are_a_compile_option():
    # remarks (which path a T.Pipelined GEMM took) only when asked for, by set_remarks (python -m tilelang_ptx
    # --remarks); an environment variable does not turn them on
    gemm = tilelang.load_file(os.path.join(EXAMPLES, "gemm.py")).matmul
    func = gemm.func(256, 256, 256, 128, 128, 32)
    os.environ["TL_REMARKS"] = "1"
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("error", tilelang.CompileWarning)
            tilelang.compile(func, target="sm_90a")  # no remark: a CompileWarning would raise here
    finally:
        del os.environ["TL_REMARKS"]
    tilelang.clear_cache()
    tilelang.set_remarks(True)
    try:
        with pytest.warns(tilelang.CompileWarning, match="remark: T.Pipelined GEMM loop takes the Hopper path"):
            tilelang.compile(func, target="sm_90a")
    finally:
        tilelang.set_remarks(False)
        tilelang.clear_cache()


def test_get_tir():
    # a factory's get_tir is its prim_func for those arguments; an eager-style function's is the function with
    # the bindings of those arguments (test_analyzer.py analyzes and compiles it); a bad binding is refused
    f = gemm_factory.get_tir(128, 128, 64)
    assert type(f).__name__ == "PrimFunc"
    e = add_eager.get_tir(N=1024, block=64)  # a parameter given its default binds nothing
    assert type(e).__name__ == "EagerPrimFunc" and e.defines == (("N", "1024"), ("block", "64"))
    assert add_eager.get_tir(N=1024, block=128).defines == (("N", "1024"),)
    with pytest.raises(tilelang.ArgumentError, match="no parameter or T.const named 'nothing'"):
        add_eager.get_tir(nothing=1)


@tilelang.jit(pass_configs={tilelang.PassConfigKey.TL_DISABLE_WARP_SPECIALIZED: True,
                            tilelang.PassConfigKey.TL_PTXAS_REGISTER_USAGE_LEVEL: 10})
def eager_with_tilelang_configs(A, n):
    A: T.Tensor((n,), T.float32)
    B = T.empty((n,), T.float32)
    with T.Kernel(1, threads=n) as bx:
        tx = T.get_thread_binding(0)
        B[tx] = A[tx] + 2.0
    return B


def test_eager_decorator_pass_configs_are_the_packages():
    """An eager function's @tilelang.jit(pass_configs=...) is applied by the package (its keys as flags,
    TileLang's without an effect here as a warning), as for a factory; libtilelang does not refuse the
    TileLang keys it does not read (deepseek_mhc/example_mhc_post.py's TL_PTXAS_REGISTER_USAGE_LEVEL)."""
    A = np.arange(32, dtype=np.float32)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", tilelang.CompileWarning)
        np.testing.assert_array_equal(eager_with_tilelang_configs(A, 32), A + 2.0)
