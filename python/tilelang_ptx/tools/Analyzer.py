"""tilelang.tools.Analyzer -- TileLang's performance model of a kernel, on libtilelang's work analysis:

    func = matmul.get_tir(block_M=128, block_N=128, block_K=32, ...)   # an eager kernel's bindings, or a
    result = Analyzer.analysis(func, CUDA("cuda"))                      # @T.prim_func
    result.total_flops, result.total_global_bytes, result.estimated_time, ...

The counts come from tl_module_analyze (include/tilelang/ir.h; docs/tools.md "Work analysis"), over the tile
IR of the kernel as written with its constants bound: total_flops is 2*M*N*K of each T.gemm times its
executions (the trip counts of the loops around it times the grid's blocks); total_global_bytes the bytes
of global tensors its tile ops and element loops read and write, counted the same way.  A trip count the
counts need that is not a compile-time constant is a CompileError naming the loop, never a wrong number.
The device's peak figures (tilelang.carver.arch.CUDA: peak_tflops, the dense float16 tensor-core rate, and
peak_bandwidth_GBps, the DRAM's, both from the CUDA driver) turn them into the estimate: estimated_time =
max(flops / peak FLOP/s, bytes / peak bytes/s), the roofline bound of one launch, over the figures that are
known (TileLang's rule: its Analyzer knows no FLOP rate for sm_90 and takes the memory time alone); None when
neither is (no CUDA device).  result.device states the figures used and which are unknown.
"""
from dataclasses import dataclass
from typing import Optional

from .. import _source
from .._eager import EagerPrimFunc
from ..jit import analyze_text
from ..language import PrimFunc


@dataclass(frozen=True)
class AnalysisResult:
    """TileLang's fields: total_flops (floating-point operations of one launch), total_global_bytes (bytes
    read and written in global memory), estimated_time (seconds), expected_tflops (the device's peak
    TFLOP/s), expected_bandwidth_GBps (its peak GB/s), each of the last three None when not known; and
    device: the figures used."""

    total_flops: int
    total_global_bytes: int
    estimated_time: Optional[float]
    expected_tflops: Optional[float]
    expected_bandwidth_GBps: Optional[float]
    device: str = ""


def _source_of(fn):
    """(text, filename, defines) of an eager kernel's get_tir(...) or a @T.prim_func."""
    if isinstance(fn, EagerPrimFunc):
        return fn.source()
    if isinstance(fn, PrimFunc):
        text, filename = _source.build(fn.func)
        return text, filename, ()
    raise TypeError(f"Analyzer: expected a @T.prim_func or the get_tir(...) of a @tilelang.jit kernel, got "
                    f"{type(fn).__name__}")


def _peaks(device):
    """(peak TFLOP/s, peak GB/s, the figures in words) of a carver.arch device, None for a figure it does not
    know; a device object without peak_bandwidth_GBps is read as TileLang's (bandwidth[1] in MB/s)."""
    tflops = getattr(device, "peak_tflops", None)
    if hasattr(device, "peak_bandwidth_GBps"):
        gbps = device.peak_bandwidth_GBps
    else:
        gbps = device.bandwidth[1] / 1000
    return tflops, float(gbps) if gbps else None, getattr(device, "figures", repr(device))


class Analyzer:
    """Analyzer(fn, device).ir_pass().calculate(), or Analyzer.analysis(fn, device): fn a @T.prim_func or an
    eager kernel's get_tir(...); device a tilelang.carver.arch.CUDA."""

    def __init__(self, fn, device, dims=None):
        self.fn = fn
        self.device = device
        self.dims = dims  # values of T.dynamic dims by name, for kernels whose trip counts read them
        self.total_flops = 0
        self.total_global_bytes = 0
        self.counts = {}

    def ir_pass(self):
        """Counts the kernel's work (libtilelang's tl_module_analyze); CompileError when it cannot."""
        text, filename, defines = _source_of(self.fn)
        self.counts = analyze_text(text, filename, defines, self.dims)
        self.total_flops = self.counts["flops"]
        self.total_global_bytes = self.counts["global_bytes"]
        return self

    def calculate(self):
        tflops, gbps, figures = _peaks(self.device)
        times = [t for t in (self.total_global_bytes / (gbps * 1e9) if gbps else None,
                             self.total_flops / (tflops * 1e12) if tflops else None) if t is not None]
        return AnalysisResult(total_flops=self.total_flops, total_global_bytes=self.total_global_bytes,
                              estimated_time=max(times) if times else None, expected_tflops=tflops,
                              expected_bandwidth_GBps=gbps, device=figures)

    @classmethod
    def analysis(cls, fn, device, dims=None):
        return cls(fn, device, dims).ir_pass().calculate()
