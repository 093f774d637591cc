"""tilelang.carver.arch -- CUDA(target): the description of the CUDA device a target runs on (SM count,
shared memory, warp size, compute capability and the peak figures tilelang.tools.Analyzer uses, from the
driver; the architecture from the target), and driver (its properties).  Without a CUDA driver or device,
CUDA describes the reference part of the target's architecture (the figures of _REFERENCE, stated in
.figures and its repr).  CDNA / RDNA / Metal devices are not supported: constructing one raises
NotImplementedError."""
from . import driver  # noqa: F401


class TileDevice:
    """What a device description offers (TileLang's base class)."""
    platform = "unknown"


# Dense float16 / bfloat16 tensor-core FLOPs (a multiply-add is 2) per SM per clock, by SM version: NVIDIA's
# architecture whitepapers give A100 312 TFLOPS = 108 SMs x 1410 MHz x 2048, A10 (GA102) 125 TFLOPS =
# 72 x 1695 MHz x 1024, L40S (AD102) 362 TFLOPS ~ 142 x 2520 MHz x 1024, H100 SXM5 989 TFLOPS = 132 x 1830 MHz
# x 4096 (GeForce parts of sm_86 / sm_89 accumulate float32 at half the rate).
_TENSOR_FLOPS_PER_SM_CLOCK = {80: 2048, 86: 1024, 89: 1024, 90: 4096}

# Without a device: each architecture's reference part -- name, SMs, boost clock (MHz), DRAM bandwidth
# (GB/s), shared memory per block (opt-in bytes), L2 bytes (the datasheets).
_REFERENCE = {
    80: ("NVIDIA A100-SXM4-80GB", 108, 1410, 2039, 166912, 40 << 20),
    86: ("NVIDIA A10", 72, 1695, 600, 101376, 6 << 20),
    89: ("NVIDIA L40S", 142, 2520, 864, 101376, 96 << 20),
    90: ("NVIDIA H100 80GB HBM3", 132, 1830, 3352, 232448, 50 << 20),
}


class CUDA(TileDevice):
    """CUDA(target="cuda", device_id=0): target in any of TileLang's spellings; sm_version the
    architecture's number (90 for sm_90a); compute_max_core the SM count and smem_cap the shared
    memory per block (opt-in) of the device, from the driver.  Peak figures (tilelang.tools.Analyzer's):
    peak_tflops, the dense float16 tensor-core rate (SMs x SM clock x the architecture's FLOPs per SM
    per clock), and peak_bandwidth_GBps, the DRAM's (memory clock x 2 x bus width).  Without a driver or
    device: the reference part of the architecture (reference True, figures says which)."""

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
        try:
            self._from_driver(device_id)
        except RuntimeError as e:
            self._from_reference(str(e))
        per_clock = _TENSOR_FLOPS_PER_SM_CLOCK.get(self.sm_version, 0)
        self.peak_tflops = round(self.compute_max_core * self.clock_mhz * 1e6 * per_clock / 1e12, 1) or None
        # TileLang's field (MB/s, read by its carver as [low, high])
        self.bandwidth = [750, int(self.peak_bandwidth_GBps * 1000)]

    def _from_driver(self, device_id):
        self.name = driver.get_device_name(device_id)
        self.compute_max_core = driver.get_num_sms(device_id)
        major, minor = driver.get_compute_capability(device_id)
        self.compute_capability = f"{major}{minor}"
        self.smem_cap = driver.get_max_dynamic_shared_size_bytes(device_id)
        self.reg_cap = driver.get_registers_per_block(device_id)
        self.l2_cache_size_bytes = driver.get_l2_cache_size(device_id)
        self.clock_mhz = driver.get_clock_rate_khz(device_id) / 1000
        self.peak_bandwidth_GBps = driver.get_peak_bandwidth_gbps(device_id)
        self.max_smem_usage = self.smem_cap
        self.reference = False
        self.figures = (f"{self.name}: {self.compute_max_core} SMs at {self.clock_mhz:.0f} MHz, "
                        f"{self.peak_bandwidth_GBps:.0f} GB/s (CUDA driver)")

    def _from_reference(self, why):
        ref = _REFERENCE.get(self.sm_version) or _REFERENCE[max(k for k in _REFERENCE if k <= self.sm_version)]
        name, sms, mhz, gbps, smem, l2 = ref
        self.name, self.compute_max_core, self.clock_mhz, self.peak_bandwidth_GBps = name, sms, mhz, float(gbps)
        self.compute_capability = f"{self.sm_version // 10}{self.sm_version % 10}"
        self.smem_cap = self.max_smem_usage = smem
        self.reg_cap = 65536
        self.l2_cache_size_bytes = l2
        self.reference = True
        self.figures = (f"reference {name} for {self.arch}: {sms} SMs at {mhz} MHz, {gbps} GB/s (no CUDA device: "
                        f"{why})")

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
