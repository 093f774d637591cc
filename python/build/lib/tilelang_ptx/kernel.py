"""kernel.py -- JITKernel: a compiled kernel called as `kernel(*inputs)` with DLPack tensors.

The C kernel is compiled with out_idx none (every tensor is passed in); this object implements
TileLang's out_idx itself: the outputs are allocated by the inputs' framework (torch.empty on the
inputs' device -- PyTorch's caching allocator, no cuMemAlloc -- or numpy.empty on the host), passed to
tl_kernel_call with the inputs, and returned (one output alone, several as a list, none -> None).
CUDA tensors launch on the current PyTorch stream of their device (or `stream=`, a torch.cuda.Stream
or a raw CUstream int); host tensors run synchronously on libtilelang's CPU SIMT executor.

Arguments are marshalled into a per-thread buffer of DLTensor and tl_arg structs (struct.pack_into,
one call per tensor); PyTorch and NumPy arrays are read directly, other objects through __dlpack__.
"""
import ctypes
import struct
import threading

from . import _lib

_DL_HDR = struct.Struct("<QiiiBBHQQQ")   # DLTensor: data, device{type,id}, ndim, dtype, shape*, strides*, offset
_ARG_TENSOR = struct.Struct("<iiQ")     # tl_arg: kind, pad, DLTensor*
_ARG_INT = struct.Struct("<iiq")
_ARG_FLOAT = struct.Struct("<iid")
MAX_DIMS = 8

# torch / numpy dtype name -> DLPack (code, bits); bool crosses as uint8 (DLPack 0.6)
_DL_CODES = {"float16": (2, 16), "float32": (2, 32), "float64": (2, 64), "bfloat16": (4, 16),
             "int8": (0, 8), "int16": (0, 16), "int32": (0, 32), "int64": (0, 64),
             "uint8": (1, 8), "uint16": (1, 16), "uint32": (1, 32), "uint64": (1, 64), "bool": (1, 8)}


class ArgumentError(ValueError):
    """A call's arguments do not fit the kernel's parameters (the message names the parameter)."""


class KernelError(RuntimeError):
    """libtilelang failed to run the kernel (an executor error, a CUDA driver error)."""


class KernelParam:
    """One prim_func parameter: name, dtype (TileLang name), shape (ints; a str for a dynamic dim
    that is exactly one symbol, None for another expression) for tensors, is_output."""

    def __init__(self, name, dtype, shape, is_tensor, is_output):
        self.name, self.dtype, self.shape = name, dtype, shape
        self.is_tensor, self.is_output = is_tensor, is_output

    def __repr__(self):
        kind = f"Tensor({self.shape}, {self.dtype!r})" if self.is_tensor else self.dtype
        return f"KernelParam({self.name}: {kind}{', output' if self.is_output else ''})"


class CKernel:
    """Owns a tl_kernel handle (destroyed with this object)."""

    def __init__(self, handle):
        self.handle = handle

    def __del__(self):
        if self.handle and _lib is not None and _lib.kernel_destroy is not None:
            _lib.kernel_destroy(self.handle)
            self.handle = None


class JITKernel:
    """A compiled TileLang kernel.  kernel(*inputs, stream=None) runs it; params, out_idx,
    get_kernel_source() (the PTX), get_profiler()."""

    def __init__(self, ckernel, prim_func, out_idx, target, source=None):
        self._ck = ckernel
        self._h = ckernel.handle
        self.prim_func = prim_func
        self.target = target
        self.source = source
        h = self._h
        n = _lib.param_count(h)
        names = [_lib.param_name(h, i).decode() for i in range(n)]
        tensor = [bool(_lib.param_is_tensor(h, i)) for i in range(n)]
        self.out_idx = _normalize_out_idx(out_idx, names, tensor)
        outs = set(self.out_idx or ())
        self.params = []
        for i in range(n):
            dt = _lib.dtype_name(_lib.param_dtype(h, i)).decode()
            shape = None
            if tensor[i]:
                shape = []
                for d in range(_lib.param_ndim(h, i)):
                    v, sym = ctypes.c_int64(), ctypes.c_char_p()
                    if _lib.param_dim(h, i, d, ctypes.byref(v), ctypes.byref(sym)):
                        shape.append(v.value)
                        continue
                    shape.append(sym.value.decode() if sym.value else None)
            self.params.append(KernelParam(names[i], dt, shape, tensor[i], i in outs))
        self._n = n
        self._inputs = [i for i in range(n) if i not in outs]
        self._outputs = list(self.out_idx or ())
        self._out_plan = [self._plan_output(i) for i in self._outputs]
        self._tls = threading.local()

    # ------------------------------------------------------------------ introspection
    def get_kernel_source(self):
        """The PTX text (\"\" when compiled for the CPU executor only)."""
        return (_lib.kernel_ptx(self._h) or b"").decode()

    def get_simt_ir(self):
        return (_lib.kernel_simt_ir(self._h) or b"").decode()

    @property
    def kernel_name(self):
        return _lib.kernel_name(self._h).decode()

    def get_profiler(self, tensor_supply_type=None):
        from .profiler import Profiler
        return Profiler(self, tensor_supply_type)

    def __repr__(self):
        return f"<JITKernel {self.kernel_name} {self.params} out_idx={self.out_idx}>"

    # ------------------------------------------------------------------ calling
    def _plan_output(self, i):
        """Per dim of output i: an int, or (input position in the call, dim) that binds its symbol."""
        p_name = _lib.param_name(self._h, i).decode()
        plan = []
        h = self._h
        for d in range(_lib.param_ndim(h, i)):
            v, sym = ctypes.c_int64(), ctypes.c_char_p()
            if _lib.param_dim(h, i, d, ctypes.byref(v), ctypes.byref(sym)):
                plan.append(v.value)
                continue
            src = None
            if sym.value:
                for pos, j in enumerate(self._inputs):
                    if not _lib.param_is_tensor(h, j):
                        continue
                    for e in range(_lib.param_ndim(h, j)):
                        w, s2 = ctypes.c_int64(), ctypes.c_char_p()
                        if not _lib.param_dim(h, j, e, ctypes.byref(w), ctypes.byref(s2)) and \
                                s2.value == sym.value:
                            src = (pos, e)
                            break
                    if src:
                        break
            plan.append(src if src else (None, f"output '{p_name}' dim {d}"))
        return plan

    def _buffers(self):
        b = getattr(self._tls, "buf", None)
        if b is None:
            n = max(self._n, 1)
            size = n * (_lib.ARG_SIZE + _lib.DLTENSOR_SIZE + 16 * MAX_DIMS)
            raw = ctypes.create_string_buffer(size)
            base = ctypes.addressof(raw)
            args_at = base
            dl_at = base + n * _lib.ARG_SIZE
            dims_at = dl_at + n * _lib.DLTENSOR_SIZE
            b = self._tls.buf = (raw, base, args_at, dl_at, dims_at)
        return b

    def __call__(self, *args, stream=None):
        n_in = len(self._inputs)
        if len(args) != n_in:
            names = ", ".join(self.params[i].name for i in self._inputs)
            if len(args) == self._n and self._outputs:
                raise ArgumentError(f"kernel '{self.kernel_name}' takes {n_in} input(s) ({names}): "
                                    f"the out_idx output(s) are allocated and returned, do not pass them")
            raise ArgumentError(f"kernel '{self.kernel_name}' takes {n_in} input(s) ({names}), got {len(args)}")
        raw, base, args_at, dl_at, dims_at = self._buffers()
        full = [None] * self._n
        for pos, i in enumerate(self._inputs):
            full[i] = args[pos]
        keep = []  # DLPack capsules that must outlive the call
        device = None  # (framework, torch device or None, dl device type, id) of the first tensor
        for pos, i in enumerate(self._inputs):
            a = args[pos]
            p = self.params[i]
            if p.is_tensor:
                dev = _pack_tensor(raw, dl_at, dims_at, i, a, p, keep)
                if device is None:
                    device = dev
                _ARG_TENSOR.pack_into(raw, i * _lib.ARG_SIZE, _lib.TL_ARG_TENSOR, 0,
                                      dl_at + i * _lib.DLTENSOR_SIZE)
            else:
                _pack_scalar(raw, i, a, p)
        if self._outputs:
            outs = self._allocate(args, device)
            for j, i in enumerate(self._outputs):
                full[i] = outs[j]
                _pack_tensor(raw, dl_at, dims_at, i, outs[j], self.params[i], keep)
                _ARG_TENSOR.pack_into(raw, i * _lib.ARG_SIZE, _lib.TL_ARG_TENSOR, 0,
                                      dl_at + i * _lib.DLTENSOR_SIZE)
        else:
            outs = ()
        s = _stream_handle(stream, device)
        ctx = _lib.context()
        rc = _lib.kernel_call(ctx, self._h, args_at, self._n, s, None)
        if rc != _lib.TL_OK:
            msg = _lib.last_error(ctx)
            if rc == _lib.TL_ERR_INVALID_ARGUMENT:
                raise ArgumentError(msg)
            raise KernelError(f"{_lib.status_name(rc).decode()}: {msg}")
        del keep
        if not outs:
            return None
        return outs[0] if len(outs) == 1 else list(outs)

    def _allocate(self, args, device):
        if device is None:
            raise ArgumentError(f"kernel '{self.kernel_name}': no tensor input to allocate the outputs "
                                "like; pass every tensor with out_idx=None")
        fw, tdev = device[0], device[1]
        outs = []
        for j, i in enumerate(self._outputs):
            p = self.params[i]
            shape = []
            for d in self._out_plan[j]:
                if isinstance(d, int):
                    shape.append(d)
                elif d[0] is None:
                    raise ArgumentError(f"kernel '{self.kernel_name}': the size of {d[1]} is an expression "
                                        "of dynamic dims no input binds; pass it with out_idx=None")
                else:
                    shape.append(int(args[d[0]].shape[d[1]]))
            if fw == "torch":
                import torch
                outs.append(torch.empty(shape, dtype=_torch_dtype(p.dtype), device=tdev))
            else:
                import numpy
                if p.dtype == "bfloat16":
                    raise ArgumentError(f"output '{p.name}': NumPy has no bfloat16; use PyTorch tensors")
                outs.append(numpy.empty(shape, dtype=p.dtype))
        return outs


def _normalize_out_idx(out_idx, names, tensor):
    """TileLang's out_idx (None, an int, a list of ints; negative from the end) -> list or None."""
    if out_idx is None:
        return None
    n = len(names)
    items = [out_idx] if isinstance(out_idx, int) else list(out_idx)
    res = []
    for k in items:
        if not isinstance(k, int) or isinstance(k, bool):
            raise ArgumentError(f"out_idx entries must be integers, got {k!r}")
        j = k + n if k < 0 else k
        if not 0 <= j < n:
            raise ArgumentError(f"out_idx {k} is out of range for {n} parameters ({', '.join(names)})")
        if not tensor[j]:
            raise ArgumentError(f"out_idx {k} names '{names[j]}', a scalar parameter; outputs are tensors")
        if j in res:
            raise ArgumentError(f"out_idx names '{names[j]}' twice")
        res.append(j)
    return res or None


def _torch_dtype(name):
    import torch
    return getattr(torch, "bool" if name == "bool" else name)


def _pack_tensor(raw, dl_at, dims_at, i, a, p, keep):
    """Writes parameter i's DLTensor for `a`; returns (framework, torch device, dl type, id)."""
    off = dl_at + i * _lib.DLTENSOR_SIZE
    shp_at = dims_at + i * 16 * MAX_DIMS
    base = off - ctypes.addressof(raw)
    mod = type(a).__module__
    if mod.startswith("torch"):
        shape, strides = a.shape, a.stride()
        dev = a.device
        if dev.type == "cuda":
            dt, did = _lib.kDLCUDA, dev.index if dev.index is not None else 0
        elif dev.type == "cpu":
            dt, did = _lib.kDLCPU, 0
        else:
            raise ArgumentError(f"argument '{p.name}': device {dev} is neither cuda nor cpu")
        code, bits = _DL_CODES.get(str(a.dtype)[6:], (255, 0))
        nd = len(shape)
        if nd > MAX_DIMS:
            raise ArgumentError(f"argument '{p.name}': {nd} dims (at most {MAX_DIMS})")
        struct.pack_into(f"<{nd}q{nd}q", raw, shp_at - ctypes.addressof(raw), *shape, *strides)
        _DL_HDR.pack_into(raw, base, a.data_ptr(), dt, did, nd, code, bits, 1, shp_at, shp_at + 8 * nd, 0)
        return ("torch", dev, dt, did)
    if mod == "numpy":
        ai = a.__array_interface__
        shape = a.shape
        item = a.itemsize
        strides = [s // item for s in a.strides]
        nd = len(shape)
        if nd > MAX_DIMS:
            raise ArgumentError(f"argument '{p.name}': {nd} dims (at most {MAX_DIMS})")
        code, bits = _DL_CODES.get(a.dtype.name, (255, 0))
        struct.pack_into(f"<{nd}q{nd}q", raw, shp_at - ctypes.addressof(raw), *shape, *strides)
        _DL_HDR.pack_into(raw, base, ai["data"][0], _lib.kDLCPU, 0, nd, code, bits, 1, shp_at, shp_at + 8 * nd,
                          0)
        return ("numpy", None, _lib.kDLCPU, 0)
    if hasattr(a, "__dlpack__"):
        cap = a.__dlpack__()
        keep.append(cap)
        get = ctypes.pythonapi.PyCapsule_GetPointer
        get.restype, get.argtypes = ctypes.c_void_p, [ctypes.py_object, ctypes.c_char_p]
        ptr = get(cap, b"dltensor")
        ctypes.memmove(off, ptr, _lib.DLTENSOR_SIZE)  # the DLTensor is the DLManagedTensor's first field
        dt, did = struct.unpack_from("<ii", raw, base + 8)
        return (mod.split(".")[0], None, dt, did)
    raise ArgumentError(f"argument '{p.name}': expected a tensor (an object with __dlpack__: PyTorch, NumPy, "
                        f"CuPy, JAX), got {type(a).__name__}")


def _pack_scalar(raw, i, a, p):
    mod = type(a).__module__
    if mod == "numpy" and hasattr(a, "item"):
        a = a.item()
    if isinstance(a, (bool, int)):
        _ARG_INT.pack_into(raw, i * _lib.ARG_SIZE, _lib.TL_ARG_INT, 0, int(a))
    elif isinstance(a, float):
        _ARG_FLOAT.pack_into(raw, i * _lib.ARG_SIZE, _lib.TL_ARG_FLOAT, 0, a)
    else:
        raise ArgumentError(f"argument '{p.name}': expected a {p.dtype} scalar (int or float), "
                            f"got {type(a).__name__}")


_raw_stream = None


def _stream_handle(stream, device):
    """The CUstream for a call: `stream` (torch.cuda.Stream or int), else the current PyTorch stream
    of the tensors' CUDA device; None for host tensors."""
    if stream is not None:
        return stream if isinstance(stream, int) else getattr(stream, "cuda_stream", stream)
    if device is None or device[2] != _lib.kDLCUDA:
        return None
    if device[0] != "torch":
        return None  # legacy default stream
    global _raw_stream
    if _raw_stream is None:
        import torch
        _raw_stream = getattr(torch._C, "_cuda_getCurrentRawStream", None) or \
            (lambda idx: torch.cuda.current_stream(idx).cuda_stream)
    return _raw_stream(device[3])
