"""tilelang.carver.arch -- CUDA(target): the description of the CUDA device a target runs on (SM count,
shared memory, warp size, compute capability and the peak figures tilelang.tools.Analyzer uses, each read from
the CUDA driver; the architecture from the target), and driver (its properties).  A figure the driver cannot
give (no driver, no device, an attribute it does not answer) is None, and .figures and the repr say which and
why: nothing is assumed about a device that is not there.  CDNA / RDNA / Metal devices are not supported:
constructing one raises NotImplementedError."""
from . import driver  # noqa: F401


class TileDevice:
    """What a device description offers (TileLang's base class)."""
    platform = "unknown"


# Dense float16 / bfloat16 tensor-core FLOPs (a multiply-add is 2) per SM per clock, by SM version: NVIDIA's
# architecture whitepapers give A100 312 TFLOPS = 108 SMs x 1410 MHz x 2048, A10 (GA102) 125 TFLOPS =
# 72 x 1695 MHz x 1024, L40S (AD102) 362 TFLOPS ~ 142 x 2520 MHz x 1024, H100 SXM5 989 TFLOPS = 132 x 1830 MHz
# x 4096 (GeForce parts of sm_86 / sm_89 accumulate float32 at half the rate).
_TENSOR_FLOPS_PER_SM_CLOCK = {80: 2048, 86: 1024, 89: 1024, 90: 4096}

# (attribute, the driver's query (a function of driver, looked up at each call), its words in .figures) of
# each figure read from the device
_DRIVER_FIGURES = (
    ("name", "get_device_name", "name"),
    ("compute_max_core", "get_num_sms", "SM count"),
    ("smem_cap", "get_max_dynamic_shared_size_bytes", "shared memory per block"),
    ("reg_cap", "get_registers_per_block", "registers per block"),
    ("l2_cache_size_bytes", "get_l2_cache_size", "L2 size"),
    ("clock_mhz", "get_clock_rate_mhz", "SM clock"),
    ("peak_bandwidth_GBps", "get_peak_bandwidth_gbps", "DRAM bandwidth"),
)


class CUDA(TileDevice):
    """CUDA(target="cuda", device_id=0): target in any of TileLang's spellings; sm_version the
    architecture's number (90 for sm_90a); compute_max_core the SM count and smem_cap the shared
    memory per block (opt-in) of the device, from the driver.  Peak figures (tilelang.tools.Analyzer's):
    peak_tflops, the dense float16 tensor-core rate (SMs x the SM clock the driver reports x the
    architecture's FLOPs per SM per clock), and peak_bandwidth_GBps, the DRAM's (2 x memory clock x bus
    width).  A figure the driver does not give is None (unknown maps it to why; figures says so)."""

    def __init__(self, target="cuda", device_id=0):
        from ...jit import resolve_target
        from ... import device_target
        kind, arch = resolve_target(target)
        if kind != "cuda":
            raise ValueError(f"carver.arch.CUDA: target {target!r} is not a CUDA target")
        self.target = target
        self.arch = arch or device_target(device_id)
        self.sm_version = int("".join(c for c in self.arch.split("_", 1)[1] if c.isdigit()))
        self.device_id = device_id
        self.platform = "CUDA"
        self.warp_size = 32
        self.sm_partition = 4
        self.transaction_size = [32, 128]
        self._read_driver(device_id)
        self.max_smem_usage = self.smem_cap
        per_clock = _TENSOR_FLOPS_PER_SM_CLOCK.get(self.sm_version)
        known = None not in (self.compute_max_core, self.clock_mhz, per_clock)
        self.peak_tflops = round(self.compute_max_core * self.clock_mhz * 1e6 * per_clock / 1e12, 1) if known else None
        if per_clock is None:
            self.unknown["peak_tflops"] = f"no tensor-core rate known for sm_{self.sm_version}"
        # TileLang's field (MB/s, read by its carver as [low, high]); TileDevice's [0, 0] when not known
        gbps = self.peak_bandwidth_GBps
        self.bandwidth = [750, int(gbps * 1000)] if gbps is not None else [0, 0]
        self.figures = self._describe()

    def _read_driver(self, device_id):
        """Each figure of _DRIVER_FIGURES from the driver, or None with the driver's reason in unknown."""
        self.unknown = {}
        for attr, query, _ in _DRIVER_FIGURES:
            try:
                setattr(self, attr, getattr(driver, query)(device_id))
            except RuntimeError as e:
                setattr(self, attr, None)
                self.unknown[attr] = str(e)
        try:
            major, minor = driver.get_compute_capability(device_id)
            self.compute_capability = f"{major}{minor}"
        except RuntimeError:  # the architecture of the target
            self.compute_capability = f"{self.sm_version // 10}{self.sm_version % 10}"

    def _describe(self):
        """The figures in words, with their source; what is unknown, and why."""
        if self.compute_max_core is None and self.clock_mhz is None and self.peak_bandwidth_GBps is None:
            why = next(iter(self.unknown.values()))
            return f"{self.arch}: no CUDA device ({why}); its SM count, clock and bandwidth are unknown"
        sms = f"{self.compute_max_core} SMs" if self.compute_max_core is not None else "SM count unknown"
        clock = f"{self.clock_mhz:.0f} MHz" if self.clock_mhz is not None else "SM clock unknown"
        gbps = (f"{self.peak_bandwidth_GBps:.0f} GB/s" if self.peak_bandwidth_GBps is not None
                else "DRAM bandwidth unknown")
        text = f"{self.name or self.arch}: {sms} at {clock}, {gbps} (CUDA driver)"
        words = {attr: w for attr, _, w in _DRIVER_FIGURES}
        missing = [f"{words.get(a, a)}: {why}" for a, why in self.unknown.items()]
        return text + ("; " + "; ".join(missing) if missing else "")

    def __repr__(self):
        return f"CUDA({self.arch}, {self.figures})"


def _unsupported_device(kind):
    class Unsupported(TileDevice):
        def __init__(self, *args, **kwargs):
            raise NotImplementedError(f"tilelang.carver.arch.{kind}: this project (tilelang_ptx) targets NVIDIA "
                                      "GPUs only and does not provide it")
    Unsupported.__name__ = Unsupported.__qualname__ = kind
    return Unsupported


CDNA = _unsupported_device("CDNA")
RDNA = _unsupported_device("RDNA")
METAL = _unsupported_device("METAL")


def get_arch(target="cuda"):
    """The device description of target (CUDA targets only)."""
    return CUDA(target)


def auto_infer_current_arch():
    return CUDA("cuda")


def has_mma_support(arch):
    return isinstance(arch, CUDA) and arch.sm_version >= 80


def is_volta_arch(arch):
    return isinstance(arch, CUDA) and arch.sm_version == 70


def is_cdna_arch(arch):
    return False


is_rdna_arch = is_metal_arch = is_cpu_arch = is_cdna_arch
CPU = _unsupported_device("CPU")


def is_cuda_arch(arch):
    return isinstance(arch, CUDA)


def is_hopper_arch(arch):
    return isinstance(arch, CUDA) and arch.sm_version == 90


def is_ampere_arch(arch):
    return isinstance(arch, CUDA) and 80 <= arch.sm_version < 89


def is_ada_arch(arch):
    return isinstance(arch, CUDA) and arch.sm_version == 89

from ..._unsupported import missing_attribute  # noqa: E402

__getattr__ = missing_attribute(__name__)
