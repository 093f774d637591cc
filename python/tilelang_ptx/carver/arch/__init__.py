"""tilelang.carver.arch -- CUDA(target): the description of the CUDA device a target runs on (SM count,
shared memory, warp size, compute capability from the driver; the architecture from the target), and
driver (its properties).  CDNA / RDNA / Metal devices are not supported: constructing one raises
NotImplementedError."""
from . import driver  # noqa: F401


class TileDevice:
    """What a device description offers (TileLang's base class)."""
    platform = "unknown"


class CUDA(TileDevice):
    """CUDA(target="cuda", device_id=0): target in any of TileLang's spellings; sm_version the
    architecture's number (90 for sm_90a); compute_max_core the SM count and smem_cap the shared
    memory per block (opt-in) of the device, from the driver (RuntimeError without one)."""

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
        self.name = driver.get_device_name(device_id)
        self.compute_max_core = driver.get_num_sms(device_id)
        self.warp_size = 32
        major, minor = driver.get_compute_capability(device_id)
        self.compute_capability = f"{major}{minor}"
        self.smem_cap = driver.get_max_dynamic_shared_size_bytes(device_id)
        self.max_smem_usage = self.smem_cap
        self.reg_cap = driver.get_registers_per_block(device_id)
        self.l2_cache_size_bytes = driver.get_l2_cache_size(device_id)
        self.sm_partition = 4

    def __repr__(self):
        return f"CUDA({self.arch}, {self.name}, {self.compute_max_core} SMs)"


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
