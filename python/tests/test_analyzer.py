"""tilelang.tools.Analyzer and the get_tir of an eager-style kernel (TileLang's examples/analyze): the counts
are libtilelang's work analysis (tl_module_analyze, docs/tools.md "Work analysis"), exact integers; the
estimate uses the device's peak figures (tilelang.carver.arch.CUDA)."""
import numpy as np
import pytest

import tilelang_ptx as tilelang
import tilelang_ptx.language as T
from tilelang_ptx import _alias
from tilelang_ptx._eager import EagerPrimFunc

M = N = K = 1024


def tl(name):
    return _alias.import_ours(f"tilelang.{name}")


# examples/analyze/example_gemm_analyze.py's kernel (module constants M, N, K; everything else a binding)
@tilelang.jit
def gemm(A, B, block_M=None, block_N=None, block_K=None, num_stages=None, thread_num=None, enable_rasteration=None):
    dtype = T.float16
    accum_dtype = T.float32
    A: T.Tensor((M, K), dtype)
    B: T.Tensor((N, K), dtype)
    C = T.empty((M, N), dtype)
    with T.Kernel(T.ceildiv(N, block_N), T.ceildiv(M, block_M), threads=thread_num) as (bx, by):
        A_shared = T.alloc_shared((block_M, block_K), dtype)
        B_shared = T.alloc_shared((block_N, block_K), dtype)
        C_local = T.alloc_fragment((block_M, block_N), accum_dtype)
        C_shared = T.alloc_shared((block_M, block_N), dtype)
        T.use_swizzle(panel_size=10, enable=enable_rasteration)
        T.clear(C_local)
        for k in T.Pipelined(T.ceildiv(K, block_K), num_stages=num_stages):
            T.copy(A[by * block_M, k * block_K], A_shared)
            T.copy(B[bx * block_N, k * block_K], B_shared)
            T.gemm(A_shared, B_shared, C_local, transpose_B=True)
        T.copy(C_local, C_shared)
        T.copy(C_shared, C[by * block_M, bx * block_N])
    return C


BINDINGS = dict(block_M=128, block_N=128, block_K=32, num_stages=3, thread_num=128, enable_rasteration=True)
# A's and B's 128x32 float16 tiles in each of 32 iterations of 64 blocks, and C once
GEMM_BYTES = 2 * (128 * 32 * 2) * 32 * 64 + M * N * 2


class Device:
    """A device description with stated peak figures (as carver.arch.CUDA has them)."""
    peak_tflops = 100.0
    peak_bandwidth_GBps = 1000.0
    figures = "test: 100 TFLOP/s, 1000 GB/s"


def test_gemm_example_counts():
    Analyzer = tl("tools").Analyzer
    CUDA = tl("carver.arch").CUDA
    f = gemm.get_tir(**BINDINGS)
    assert isinstance(f, EagerPrimFunc) and ("block_M", "128") in f.defines
    r = Analyzer.analysis(f, CUDA("cuda"))
    assert r.total_flops == 2 * M * N * K
    assert r.total_global_bytes == GEMM_BYTES
    assert r.expected_bandwidth_GBps > 0 and r.device


def test_estimate_from_the_device_figures():
    r = tl("tools").Analyzer.analysis(gemm.get_tir(**BINDINGS), Device())
    assert (r.expected_tflops, r.expected_bandwidth_GBps, r.device) == (100.0, 1000.0, Device.figures)
    assert r.estimated_time == pytest.approx(max(2 * M * N * K / 100e12, GEMM_BYTES / 1000e9))

    class TileLangDevice:  # TileLang's CUDA: bandwidth [low, high] in MB/s, no peak FLOP/s known
        bandwidth = [750, 12080]

    r = tl("tools").Analyzer.analysis(gemm.get_tir(**BINDINGS), TileLangDevice())
    assert r.expected_tflops is None and r.expected_bandwidth_GBps == 12.08
    assert r.estimated_time == pytest.approx(GEMM_BYTES / 12.08e9)


def test_cuda_device_figures():
    cuda = tl("carver.arch").CUDA("sm_90a")
    assert cuda.sm_version == 90 and cuda.peak_bandwidth_GBps > 0 and cuda.peak_tflops > 0
    if cuda.reference:  # no CUDA device here: the architecture's reference part, said so
        assert "H100" in cuda.figures and "no CUDA device" in cuda.figures
        assert cuda.peak_tflops == 989.4 and cuda.compute_max_core == 132
    assert cuda.bandwidth[1] == int(cuda.peak_bandwidth_GBps * 1000)


@tilelang.jit
def gemm_dyn(A, B, block=64):
    Kd = T.dynamic("Kd")
    A: T.Tensor((128, Kd), T.float16)
    B: T.Tensor((Kd, 128), T.float16)
    C = T.empty((128, 128), T.float16)
    with T.Kernel(128 // block, 128 // block, threads=128) as (bx, by):
        A_s = T.alloc_shared((block, 32), T.float16)
        B_s = T.alloc_shared((32, block), T.float16)
        C_l = T.alloc_fragment((block, block), T.float32)
        T.clear(C_l)
        for k in T.Pipelined(T.ceildiv(Kd, 32), num_stages=2):
            T.copy(A[by * block, k * 32], A_s)
            T.copy(B[k * 32, bx * block], B_s)
            T.gemm(A_s, B_s, C_l)
        T.copy(C_l, C[by * block, bx * block])
    return C


def test_dynamic_trip_count_is_an_error_not_a_number():
    Analyzer = tl("tools").Analyzer
    with pytest.raises(tilelang.CompileError, match=r"trip count of the loop over 'k' is not a compile-time "
                                                     r"constant \(T.ceildiv\(Kd, 32\)\)"):
        Analyzer.analysis(gemm_dyn.get_tir(), Device())
    r = Analyzer.analysis(gemm_dyn.get_tir(), Device(), dims={"Kd": 256})
    assert r.total_flops == 2 * 128 * 128 * 256


@tilelang.jit(out_idx=-1)
def add(M=32, N=64):
    @T.prim_func
    def main(A: T.Tensor((M, N), "float32"), B: T.Tensor((M, N), "float32"), C: T.Tensor((M, N), "float32")):
        with T.Kernel(T.ceildiv(N, 32), T.ceildiv(M, 32), threads=128) as (bx, by):
            for i, j in T.Parallel(32, 32):
                C[by * 32 + i, bx * 32 + j] = A[by * 32 + i, bx * 32 + j] + B[by * 32 + i, bx * 32 + j]
    return main


def test_prim_func_factory():
    r = tl("tools").Analyzer.analysis(add.get_tir(64, 96), Device())
    assert r.total_flops == 0 and r.total_global_bytes == 3 * 64 * 96 * 4


@tilelang.jit
def scale(A, block=32, factor=2.0):
    Nc = T.const("Nc")
    A: T.Tensor((Nc,), "float32")
    B = T.empty((Nc,), "float32")
    with T.Kernel(T.ceildiv(Nc, block), threads=block) as bx:
        for i in T.Parallel(block):
            B[bx * block + i] = A[bx * block + i] * factor
    return B


def test_get_tir_compiles():
    """tilelang.compile takes an eager kernel's get_tir(...): the kernel of those bindings."""
    f = scale.get_tir(Nc=96, factor=3.0)
    assert "Nc=96" in repr(f)
    k = tilelang.compile(f, target="cpu")
    A = np.arange(96, dtype=np.float32)
    np.testing.assert_array_equal(k(A), A * 3)
    with pytest.raises(TypeError, match="Analyzer: expected a @T.prim_func"):
        tl("tools").Analyzer.analysis(k, Device())
