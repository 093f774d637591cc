"""tilelang.carver.arch.driver -- properties of a CUDA device read from the CUDA driver (libcuda, ctypes;
no PyTorch needed): SM count, shared memory per block, registers, name, compute capability.  Without a
driver or the device, each raises RuntimeError saying so."""
import ctypes
import threading

# CUdevice_attribute values (cuda.h)
_MAX_REGISTERS_PER_BLOCK = 12
_MULTIPROCESSOR_COUNT = 16
_MAX_SHARED_MEMORY_PER_BLOCK = 8
_L2_CACHE_SIZE = 38
_COMPUTE_CAPABILITY_MAJOR = 75
_COMPUTE_CAPABILITY_MINOR = 76
_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN = 97
_MAX_PERSISTING_L2_CACHE_SIZE = 108
_CLOCK_RATE = 13  # kHz, the SM clock's peak
_MEMORY_CLOCK_RATE = 36  # kHz
_GLOBAL_MEMORY_BUS_WIDTH = 37  # bits

_state = {}
_lock = threading.Lock()


def _cuda():
    with _lock:
        if "lib" not in _state:
            try:
                lib = ctypes.CDLL("libcuda.so.1")
                rc = lib.cuInit(0)
                _state["lib"] = lib if rc == 0 else None
                _state["why"] = f"cuInit returned {rc}" if rc else ""
            except OSError as e:
                _state["lib"], _state["why"] = None, f"no CUDA driver ({e})"
    if _state["lib"] is None:
        raise RuntimeError(f"tilelang.carver.arch.driver: {_state['why']}")
    return _state["lib"]


def _device(device_id):
    lib = _cuda()
    dev = ctypes.c_int()
    rc = lib.cuDeviceGet(ctypes.byref(dev), int(device_id))
    if rc != 0:
        raise RuntimeError(f"tilelang.carver.arch.driver: no CUDA device {device_id} (cuDeviceGet returned {rc})")
    return lib, dev.value


def get_device_attribute(attr, device_id=0):
    """cuDeviceGetAttribute(attr) of device device_id."""
    lib, dev = _device(device_id)
    v = ctypes.c_int()
    rc = lib.cuDeviceGetAttribute(ctypes.byref(v), int(attr), dev)
    if rc != 0:
        raise RuntimeError(f"tilelang.carver.arch.driver: cuDeviceGetAttribute({attr}) returned {rc}")
    return v.value


def _scaled(n, format):
    div = {"bytes": 1, "kb": 1024, "mb": 1024 * 1024}.get(format)
    if div is None:
        raise ValueError(f"format must be bytes, kb or mb, got {format!r}")
    return n // div


def get_device_name(device_id=0):
    lib, dev = _device(device_id)
    buf = ctypes.create_string_buffer(256)
    lib.cuDeviceGetName(buf, 256, dev)
    return buf.value.decode()


def get_num_sms(device_id=0):
    """The number of streaming multiprocessors."""
    return get_device_attribute(_MULTIPROCESSOR_COUNT, device_id)


def get_shared_memory_per_block(device_id=0, format="bytes"):
    """Shared memory a block may use without opting in (48 KB on current GPUs)."""
    return _scaled(get_device_attribute(_MAX_SHARED_MEMORY_PER_BLOCK, device_id), format)


def get_max_dynamic_shared_size_bytes(device_id=0, format="bytes"):
    """Shared memory a block may use when it opts in (227 KB on sm_90)."""
    return _scaled(get_device_attribute(_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN, device_id), format)


def get_registers_per_block(device_id=0):
    return get_device_attribute(_MAX_REGISTERS_PER_BLOCK, device_id)


def get_persisting_l2_cache_max_size(device_id=0):
    return get_device_attribute(_MAX_PERSISTING_L2_CACHE_SIZE, device_id)


def get_l2_cache_size(device_id=0):
    return get_device_attribute(_L2_CACHE_SIZE, device_id)


def get_compute_capability(device_id=0):
    """(major, minor)."""
    return (get_device_attribute(_COMPUTE_CAPABILITY_MAJOR, device_id),
            get_device_attribute(_COMPUTE_CAPABILITY_MINOR, device_id))


def get_clock_rate_khz(device_id=0):
    """The peak SM clock in kHz."""
    return get_device_attribute(_CLOCK_RATE, device_id)


def get_clock_rate_mhz(device_id=0):
    """The peak SM clock in MHz."""
    return get_clock_rate_khz(device_id) / 1000


def get_peak_bandwidth_gbps(device_id=0):
    """The peak DRAM bandwidth in GB/s (10^9 bytes per second): 2 transfers per memory clock (double data
    rate) times the bus width in bytes."""
    khz = get_device_attribute(_MEMORY_CLOCK_RATE, device_id)
    bits = get_device_attribute(_GLOBAL_MEMORY_BUS_WIDTH, device_id)
    return 2 * khz * 1e3 * (bits // 8) / 1e9


def get_cuda_device_properties(device_id=0):
    """A namespace of the properties above (name, multi_processor_count, shared_memory_per_block,
    shared_memory_per_block_optin, regs_per_block, major, minor), or None without the device."""
    import types
    try:
        major, minor = get_compute_capability(device_id)
        return types.SimpleNamespace(
            name=get_device_name(device_id), multi_processor_count=get_num_sms(device_id),
            shared_memory_per_block=get_shared_memory_per_block(device_id),
            shared_memory_per_block_optin=get_max_dynamic_shared_size_bytes(device_id),
            regs_per_block=get_registers_per_block(device_id), major=major, minor=minor)
    except RuntimeError:
        return None

from ..._unsupported import missing_attribute  # noqa: E402

__getattr__ = missing_attribute(__name__)
