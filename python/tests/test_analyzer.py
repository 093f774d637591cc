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
    assert r.device and r.expected_bandwidth_GBps == CUDA("cuda").peak_bandwidth_GBps  # None without a GPU


def test_estimate_from_the_device_figures():
    r = tl("tools").Analyzer.analysis(gemm.get_tir(**BINDINGS), Device())
    assert (r.expected_tflops, r.expected_bandwidth_GBps, r.device) == (100.0, 1000.0, Device.figures)
    assert r.estimated_time == pytest.approx(max(2 * M * N * K / 100e12, GEMM_BYTES / 1000e9))

    class TileLangDevice:  # TileLang's CUDA: bandwidth [low, high] in MB/s, no peak FLOP/s known
        bandwidth = [750, 12080]

    r = tl("tools").Analyzer.analysis(gemm.get_tir(**BINDINGS), TileLangDevice())
    assert r.expected_tflops is None and r.expected_bandwidth_GBps == 12.08
    assert r.estimated_time == pytest.approx(GEMM_BYTES / 12.08e9)


def test_cuda_without_a_device_says_so():
    """No driver or device (this machine, CI): the figures are None and said unknown, never assumed."""
    arch = tl("carver.arch")
    drv = tl("carver.arch.driver")
    try:
        drv.get_num_sms()
        pytest.skip("a CUDA device is here")
    except RuntimeError:
        pass
    cuda = arch.CUDA("sm_90a")
    assert (cuda.sm_version, cuda.compute_capability) == (90, "90")
    assert cuda.peak_tflops is None and cuda.peak_bandwidth_GBps is None and cuda.compute_max_core is None
    assert "no CUDA device" in cuda.figures and "unknown" in cuda.figures and cuda.figures in repr(cuda)
    r = tl("tools").Analyzer.analysis(gemm.get_tir(**BINDINGS), cuda)
    assert r.total_flops == 2 * M * N * K and r.total_global_bytes == GEMM_BYTES
    assert (r.estimated_time, r.expected_tflops, r.expected_bandwidth_GBps) == (None, None, None)
    assert r.device == cuda.figures


# cuDeviceGetAttribute answers like an H100 SXM5's (SMs, capability, shared memory, registers, L2, SM clock and
# memory clock in kHz, bus width in bits)
H100_ATTRS = {16: 132, 75: 9, 76: 0, 97: 232448, 12: 65536, 38: 50 << 20, 13: 1980000, 36: 2619000, 37: 5120}


def fake_driver(monkeypatch, attrs):
    drv = tl("carver.arch.driver")

    def attribute(attr, device_id=0):
        if attr not in attrs:
            raise RuntimeError(f"attribute {attr} not answered")
        return attrs[attr]
    monkeypatch.setattr(drv, "get_device_attribute", attribute)
    monkeypatch.setattr(drv, "get_device_name", lambda device_id=0: "NVIDIA H100 80GB HBM3")


def test_cuda_figures_from_the_driver(monkeypatch):
    """The peaks come from the driver's attributes: SMs x SM clock x 4096 FLOPs per SM per clock (sm_90), and
    2 x memory clock x bus bytes."""
    fake_driver(monkeypatch, H100_ATTRS)
    cuda = tl("carver.arch").CUDA("sm_90a")
    assert (cuda.name, cuda.compute_max_core, cuda.smem_cap, cuda.clock_mhz) == ("NVIDIA H100 80GB HBM3", 132,
                                                                                 232448, 1980.0)
    assert cuda.peak_tflops == round(132 * 1980e6 * 4096 / 1e12, 1) == 1070.5
    assert cuda.peak_bandwidth_GBps == pytest.approx(2 * 2619e6 * 640 / 1e9)  # 3352.3
    assert cuda.bandwidth == [750, int(cuda.peak_bandwidth_GBps * 1000)] and not cuda.unknown
    assert cuda.figures == "NVIDIA H100 80GB HBM3: 132 SMs at 1980 MHz, 3352 GB/s (CUDA driver)"
    r = tl("tools").Analyzer.analysis(gemm.get_tir(**BINDINGS), cuda)
    assert r.estimated_time == pytest.approx(max(2 * M * N * K / 1070.5e12, GEMM_BYTES / (2 * 2619e6 * 640)))


def test_cuda_figure_the_driver_does_not_give(monkeypatch):
    """A driver without the clock attribute: no FLOP rate (None, said why); the estimate is the memory time,
    TileLang's rule when it knows no FLOP rate."""
    fake_driver(monkeypatch, {k: v for k, v in H100_ATTRS.items() if k != 13})
    cuda = tl("carver.arch").CUDA("sm_90a")
    assert cuda.peak_tflops is None and cuda.clock_mhz is None and cuda.compute_max_core == 132
    assert "SM clock unknown" in cuda.figures and "SM clock: attribute 13 not answered" in cuda.figures
    r = tl("tools").Analyzer.analysis(gemm.get_tir(**BINDINGS), cuda)
    assert r.expected_tflops is None
    assert r.estimated_time == pytest.approx(GEMM_BYTES / (2 * 2619e6 * 640))


# A 2-D convolution as an implicit GEMM (NHWC input, KH x KW x C x F weights), the shape of TileLang's
# examples/analyze/example_conv_analyze.py: sizes bound by T.const keywords, the weights and the output read
# and written through flat views, the input gathered by T.im2col.
@tilelang.jit
def conv(x, w, stride, dil, pad, bm, bn, bk, stages, nthreads):
    Nb, Ci, Hi, Wi, Co, R = T.const("Nb, Ci, Hi, Wi, Co, R")
    Ho = (Hi + 2 * pad - dil * (R - 1) - 1) // stride + 1
    Wo = (Wi + 2 * pad - dil * (R - 1) - 1) // stride + 1
    x: T.Tensor((Nb, Hi, Wi, Ci), T.float16)
    w: T.Tensor((R, R, Ci, Co), T.float16)
    y = T.empty((Nb, Ho, Wo, Co), T.float16)
    with T.Kernel(T.ceildiv(Co, bn), T.ceildiv(Nb * Ho * Wo, bm), threads=nthreads) as (bx, by):
        xs = T.alloc_shared((bm, bk), T.float16)
        ws = T.alloc_shared((bk, bn), T.float16)
        acc = T.alloc_fragment((bm, bn), T.float32)
        w2 = T.Tensor((R * R * Ci, Co), T.float16, w.data)
        y2 = T.Tensor((Nb * Ho * Wo, Co), T.float16, y.data)
        T.clear(acc)
        for kk in T.Pipelined(T.ceildiv(R * R * Ci, bk), num_stages=stages):
            T.im2col(x, xs, by, kk, R, stride, dil, pad)
            T.copy(w2[kk * bk, bx * bn], ws)
            T.gemm(xs, ws, acc)
        T.copy(acc, y2[by * bm, bx * bn])
    return y


def test_conv_example_counts():
    """FLOPs: 2 x (output pixels) x F x (KH x KW x C), the GEMM's 2*M*N*K with M = N*OH*OW, K = KH*KW*C.
    Bytes per block and k step: the gathered input tile and the weight tile, then the output tile once."""
    Nb, Ci, Hi, Wi, Co, R = 2, 64, 16, 16, 128, 3
    f = conv.get_tir(Nb=Nb, Ci=Ci, Hi=Hi, Wi=Wi, Co=Co, R=R, stride=1, dil=1, pad=1, bm=64, bn=128, bk=32,
                     stages=3, nthreads=128)
    r = tl("tools").Analyzer.analysis(f, Device())
    Ho = Wo = 16
    assert r.total_flops == 2 * (Nb * Ho * Wo) * Co * (R * R * Ci) == 75497472
    blocks, steps = (Co // 128) * (Nb * Ho * Wo // 64), R * R * Ci // 32
    assert r.total_global_bytes == blocks * (steps * (64 * 32 + 32 * 128) * 2 + 64 * 128 * 2)
    # stride 2: OH = OW = 8, a quarter of the output pixels and of the work
    f2 = conv.get_tir(Nb=Nb, Ci=Ci, Hi=Hi, Wi=Wi, Co=Co, R=R, stride=2, dil=1, pad=1, bm=64, bn=128, bk=32,
                      stages=3, nthreads=128)
    assert tl("tools").Analyzer.analysis(f2, Device()).total_flops == 2 * (Nb * 8 * 8) * Co * (R * R * Ci)


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
