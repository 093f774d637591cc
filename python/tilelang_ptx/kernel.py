"""kernel.py -- JITKernel: a compiled kernel called as `kernel(*inputs)` with DLPack tensors.

The C kernel is compiled with out_idx none (every tensor is passed in); this object implements
TileLang's out_idx itself: the outputs are allocated by the inputs' framework (torch.empty on the
inputs' device -- PyTorch's caching allocator, no cuMemAlloc -- or numpy.empty on the host), passed to
tl_kernel_call with the inputs, and returned (one output alone, several as a list, none -> None).
CUDA tensors launch on the current PyTorch stream of their device (or `stream=`, a torch.cuda.Stream
or a raw CUstream int); host tensors run synchronously on libtilelang's CPU SIMT executor.

Arguments are marshalled into a per-thread buffer of DLTensor and tl_arg structs (struct.pack_into,
one call per tensor); PyTorch and NumPy arrays are read directly, other objects through __dlpack__.
When the C extension _fastcall (_fastcall.c, stable ABI) is built, a call whose arguments are plain
torch.Tensors of known dtypes and Python ints/floats, without stream=, runs in it instead (a Plan per
kernel); every other call, and any call the Plan declines (NotImplemented), takes the Python path below,
with the same results and errors.  TL_PY_FASTCALL=0 in the environment turns the extension off;
set_output_allocation (TL_PY_ALLOC) picks how it allocates outputs.
"""
import atexit
import ctypes
import os
import struct
import sys
import threading

from . import _lib

try:
    from . import _fastcall
except ImportError:  # not built (no compiler at install time): the pure-Python path only
    _fastcall = None
if os.environ.get("TL_PY_FASTCALL") == "0":
    _fastcall = None

# DLTensor: data, device{type,id}, ndim, dtype{code,bits,lanes}, shape*, strides*, byte_offset; then the
# shape and strides arrays themselves (_hdr(ndim))
_ARG_TENSOR = struct.Struct("<iiQ")     # tl_arg: kind, pad, DLTensor*
_ARG_INT = struct.Struct("<iiq")
_ARG_FLOAT = struct.Struct("<iid")
MAX_DIMS = 8
_REGION = 48 + 16 * MAX_DIMS            # a DLTensor, then its shape and strides

# torch / numpy dtype name -> DLPack (code, bits); bool crosses as uint8 (DLPack 0.6), and so do
# torch's float8 tensors: their bytes, the float8 format taken from the kernel's parameter
_DL_CODES = {"float16": (2, 16), "float32": (2, 32), "float64": (2, 64), "bfloat16": (4, 16),
             "int8": (0, 8), "int16": (0, 16), "int32": (0, 32), "int64": (0, 64),
             "uint8": (1, 8), "uint16": (1, 16), "uint32": (1, 32), "uint64": (1, 64), "bool": (1, 8),
             "float8_e4m3fn": (1, 8), "float8_e5m2": (1, 8), "int4": (0, 8), "uint4": (1, 8)}
# our float8 names -> torch's (outputs allocated like the inputs); NumPy has none: uint8 bytes.
# int4 / uint4 tensors are int8 / uint8 ones of half the last dim, two values per byte, the even one in
# the low nibble (TileLang's storage; tl_dtype_storage in include/tilelang/ir.h)
_TORCH_NAMES = {"float8_e4m3": "float8_e4m3fn", "int4": "int8", "uint4": "uint8"}
_NUMPY_NAMES = {"float8_e4m3": "uint8", "float8_e5m2": "uint8", "int4": "int8", "uint4": "uint8"}
_PACKED = {"int4": 2, "uint4": 2}  # values per storage element along the last dim


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


_exiting = []
atexit.register(_exiting.append, True)


class CKernel:
    """Owns a tl_kernel handle, destroyed with this object -- except at interpreter exit, where launches
    may still be pending on streams this package does not own (tl_kernel_destroy requires none)."""

    def __init__(self, handle):
        self.handle = handle

    def __del__(self):
        if self.handle and not _exiting and _lib is not None:
            _lib.kernel_destroy(self.handle)
            self.handle = None


class JITKernel(_fastcall.Caller if _fastcall is not None else object):
    """A compiled TileLang kernel.  kernel(*inputs, stream=None) runs it; params, out_idx,
    get_kernel_source() (the PTX), get_profiler().  With the extension, __call__ is _fastcall.Caller's
    (C): the Plan self._fast, else _call_py; without it, _call_py."""

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
        self.out_idx = _normalize_out_idx(h, out_idx)
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
        self._in_list = [(pos, i, self.params[i], self.params[i].is_tensor) for pos, i in enumerate(self._inputs)]
        self._outputs = list(self.out_idx or ())
        self._out_plan = [self._plan_output(i) for i in self._outputs]
        self._out_static = [plan if all(isinstance(d, int) for d in plan) else None for plan in self._out_plan]
        self._out_fixed = [_fixed_layout(shape, self.params[i].dtype) if shape is not None else None
                           for shape, i in zip(self._out_static, self._outputs)]
        self._tls = threading.local()
        self._fast = self._fast_plan()

    def _fast_plan(self):
        """The _fastcall.Plan of this kernel, or None (no extension; an output the C path cannot
        allocate: a dtype without a DLPack code here, a dim no input binds, too many dims)."""
        if _fastcall is None:
            return None
        outs = []
        for j, i in enumerate(self._outputs):
            p, plan = self.params[i], self._out_plan[j]
            if p.dtype not in _DL_CODES or len(plan) > MAX_DIMS or \
                    any(not isinstance(d, int) and d[0] is None for d in plan):
                return None
            name = _TORCH_NAMES[p.dtype] if p.dtype in _PACKED else p.dtype  # int4: torch.int8 storage
            outs.append((i, *_DL_CODES[p.dtype], name, tuple(plan)))
        ins = tuple((i, is_tensor) for _pos, i, _p, is_tensor in self._in_list)
        call = ctypes.cast(_lib.kernel_call, ctypes.c_void_p).value
        return _fastcall.Plan(self._h, call, self._n, ins, tuple(outs))

    # ------------------------------------------------------------------ introspection
    def get_kernel_source(self):
        """The PTX text (\"\" when compiled for the CPU executor only)."""
        return (_lib.kernel_ptx(self._h) or b"").decode()

    def export_ptx(self, path):
        """Writes the PTX (get_kernel_source()) to the file `path`."""
        with open(path, "w") as f:
            f.write(self.get_kernel_source())

    def export(self, directory, name=None, cubin=False):
        """Exports the kernel ahead of time as C (docs/aot.md; what `tl-opt --emit=c` writes): `directory`/NAME.h
        and NAME.c, which embed the PTX (and with cubin=True a cubin from ptxas, when ptxas runs) and check
        and launch the kernel with the CUDA driver alone: `cc NAME.c main.c -lcuda`.  NAME: `name`, else the
        jitted function's name (else the kernel's).  Returns the paths (header, source)."""
        if name is None:
            name = getattr(self.prim_func, "__name__", None) or self.kernel_name
            if name == "main":  # a C program's main
                name = "kernel_main"
        os.makedirs(directory, exist_ok=True)
        h_path = os.path.join(directory, name + ".h")
        c_path = os.path.join(directory, name + ".c")
        outs = list(self.out_idx or ())
        arr = (ctypes.c_int * max(len(outs), 1))(*outs)
        opts = _lib.ExportOptions(name.encode(), None, bool(cubin), False, True, arr, len(outs))
        ctx = _lib.context()
        rc = _lib.kernel_export_c(ctx, self._h, h_path.encode(), c_path.encode(), ctypes.byref(opts))
        if rc != _lib.TL_OK:
            raise KernelError(f"{_lib.status_name(rc).decode()}: {_lib.last_error(ctx)}")
        self.cubin_embedded = bool(opts.cubin_embedded)
        return h_path, c_path

    def get_simt_ir(self):
        return (_lib.kernel_simt_ir(self._h) or b"").decode()

    def show_layouts(self, dir=None, full=False):
        """The layouts layout inference chose for every buffer of the kernel, as the text
        `tl-opt --dump-layouts` prints (docs/layouts.md "Seeing the layouts"): per buffer its scope,
        shape and dtype, the layout and its rule, and the map (fragments: element -> thread and
        register; shared tiles: the swizzle, element -> byte offset and bank).  With dir, also
        writes one SVG per fragment and shared buffer there (created if missing), named
        <kernel>.<buffer>.svg and listed at the end of the text as "svg: PATH" lines.  full: every
        element, not a window of large buffers.  Returns the text."""
        opts = _lib.LayoutDumpOptions(bool(full), None)
        if dir is not None:
            dir = os.fspath(dir)
            os.makedirs(dir, exist_ok=True)
            opts.svg_dir = dir.encode()
        ctx = _lib.context()
        text = ctypes.c_void_p()
        rc = _lib.kernel_dump_layouts(ctx, self._h, ctypes.byref(opts), ctypes.byref(text))
        if rc != _lib.TL_OK:
            raise KernelError(f"{_lib.status_name(rc).decode()}: {_lib.last_error(ctx)}")
        try:
            return ctypes.string_at(text.value).decode()
        finally:
            _lib.free(text)

    @property
    def kernel_name(self):
        return _lib.kernel_name(self._h).decode()

    @property
    def cache_result(self):
        """What the disk kernel cache did for this compile (docs/runtime.md "The kernel cache"): "off", "miss",
        "hit", or "corrupt" (a damaged entry, recompiled and replaced)."""
        r = _lib.kernel_cache_result(self._h)
        return ("off", "miss", "hit", "corrupt")[r] if 0 <= r < 4 else "?"

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
        per = _PACKED.get(_lib.dtype_name(_lib.param_dtype(h, i)).decode(), 1)
        if per > 1 and plan and isinstance(plan[-1], int):  # int4: a constant even last dim (pack-int4)
            plan[-1] //= per
        return plan

    def _buffers(self):
        """The calling thread's marshalling buffer: tl_arg[n] (the tensor entries point at their
        DLTensor once and for all), then per parameter a DLTensor followed by its shape and strides."""
        b = getattr(self._tls, "buf", None)
        if b is None:
            n = max(self._n, 1)
            raw = ctypes.create_string_buffer(n * (_lib.ARG_SIZE + _REGION))
            base = ctypes.addressof(raw)
            regs = []
            for i in range(n):
                off = n * _lib.ARG_SIZE + i * _REGION
                regs.append((off, base + off))
                if i < self._n and self.params[i].is_tensor:
                    _ARG_TENSOR.pack_into(raw, i * _lib.ARG_SIZE, _lib.TL_ARG_TENSOR, 0, base + off)
            b = self._tls.buf = (raw, base, regs)
        return b

    def _call_py(self, *args, stream=None):
        """kernel(*inputs, stream=None) in Python: every kind of argument."""
        if len(args) != len(self._inputs):
            self._count_error(args)
        raw, base, regs = self._buffers()
        params = self.params
        keep = []  # DLPack capsules that must outlive the call
        device = None  # (framework, device id: -1 host) of the first tensor
        nulls = []  # parameters passed as None: their tl_arg points at no DLTensor for this call
        for pos, i, p, is_tensor in self._in_list:
            a = args[pos]
            if not is_tensor:
                _pack_scalar(raw, i, a, p)
                continue
            if a is None:  # accepted by the library for a tensor the kernel never touches
                _ARG_TENSOR.pack_into(raw, i * _lib.ARG_SIZE, _lib.TL_ARG_TENSOR, 0, 0)
                nulls.append(i)
                continue
            if type(a) is _torch_tensor:  # the fast path: a plain torch.Tensor of a known dtype
                shape = a.shape
                nd = len(shape)
                cb = _DL_OF.get(a.dtype)
                hdr = _HDRS.get(nd)
                if cb is not None and hdr is not None:
                    did = a.get_device()
                    off, addr = regs[i]
                    hdr.pack_into(raw, off, a.data_ptr(), 2 if did >= 0 else 1, did if did >= 0 else 0, nd,
                                  cb[0], cb[1], 1, addr + 48, addr + 48 + 8 * nd, 0, *shape, *a.stride())
                    if device is None:
                        device = ("torch", did)
                    continue
            dev = _pack_tensor(raw, regs[i], a, p, keep)
            if device is None:
                device = dev
        outs = ()
        if self._outputs:
            outs = self._allocate(args, device)
            fw, did = device
            for j, i in enumerate(self._outputs):
                fixed = self._out_fixed[j]
                if fixed is None or fw not in ("torch", "numpy"):
                    _pack_tensor(raw, regs[i], outs[j], params[i], keep)
                    continue
                # allocated here, compact, of a static shape: only the pointer is new
                o = outs[j]
                off, addr = regs[i]
                hdr, nd, code, bits, dims = fixed
                ptr = o.data_ptr() if fw == "torch" else o.__array_interface__["data"][0]
                hdr.pack_into(raw, off, ptr, _lib.kDLCUDA if did >= 0 else _lib.kDLCPU, max(did, 0), nd, code,
                              bits, 1, addr + 48, addr + 48 + 8 * nd, 0, *dims)
        if stream is not None:
            s = stream if isinstance(stream, int) else getattr(stream, "cuda_stream", stream)
        elif device is not None and device[0] == "torch" and device[1] >= 0:
            s = _current_stream(device[1])
        else:
            s = None  # host tensors; other frameworks' CUDA tensors: the legacy default stream
        ctx = getattr(_lib._tls, "ctx", None) or _lib.context()
        try:
            rc = _lib.kernel_call(ctx, self._h, base, self._n, s, None)
        finally:
            for i in nulls:
                _ARG_TENSOR.pack_into(raw, i * _lib.ARG_SIZE, _lib.TL_ARG_TENSOR, 0, regs[i][1])
        if rc != _lib.TL_OK:
            _call_failed(ctx, rc)
        del keep
        if not outs:
            return None
        return outs[0] if len(outs) == 1 else outs

    if _fastcall is None:
        __call__ = _call_py

    def _count_error(self, args):
        n_in = len(self._inputs)
        names = ", ".join(self.params[i].name for i in self._inputs)
        if len(args) == self._n and self._outputs:
            raise ArgumentError(f"kernel '{self.kernel_name}' takes {n_in} input(s) ({names}): "
                                f"the out_idx output(s) are allocated and returned, do not pass them")
        raise ArgumentError(f"kernel '{self.kernel_name}' takes {n_in} input(s) ({names}), got {len(args)}")

    def _allocate(self, args, device):
        if device is None:
            raise ArgumentError(f"kernel '{self.kernel_name}': no tensor input to allocate the outputs "
                                "like; pass every tensor with out_idx=None")
        fw, did = device
        outs = []
        for j, i in enumerate(self._outputs):
            p = self.params[i]
            plan = self._out_plan[j]
            shape = self._out_static[j]
            if shape is None:
                shape = []
                for d in plan:
                    if isinstance(d, int):
                        shape.append(d)
                    elif d[0] is None:
                        raise ArgumentError(f"kernel '{self.kernel_name}': the size of {d[1]} is an expression "
                                            "of dynamic dims no input binds; pass it with out_idx=None")
                    else:
                        shape.append(int(args[d[0]].shape[d[1]]))
            if fw == "torch":
                outs.append(sys.modules["torch"].empty(shape, dtype=_torch_dtype(p.dtype),
                                                       device=did if did >= 0 else "cpu"))
            elif fw == "numpy":
                import numpy
                if p.dtype == "bfloat16":
                    raise ArgumentError(f"output '{p.name}': NumPy has no bfloat16; use PyTorch tensors")
                outs.append(numpy.empty(shape, dtype=_NUMPY_NAMES.get(p.dtype, p.dtype)))
            else:
                raise ArgumentError(f"kernel '{self.kernel_name}': cannot allocate output '{p.name}' like a "
                                    f"{fw} tensor (PyTorch and NumPy only); pass it with out_idx=None")
        return outs


def _call_failed(ctx, rc):
    """Raises the exception of a failed tl_kernel_call (status rc, message in context ctx)."""
    msg = _lib.last_error(ctx)
    if rc == _lib.TL_ERR_INVALID_ARGUMENT:
        raise ArgumentError(msg)
    raise KernelError(f"{_lib.status_name(rc).decode()}: {msg}")


def fast_path():
    """(path of the loaded _fastcall extension or None, calls it has completed)."""
    if _fastcall is None:
        return None, 0
    return _fastcall.__file__, _fastcall.calls()


def _fixed_layout(shape, dtype):
    """(header struct, ndim, DLPack code, bits, shape + compact strides) of an output the call
    allocates with a static shape, or None when the dtype has no DLPack code here."""
    if dtype not in _DL_CODES or len(shape) > MAX_DIMS:
        return None
    strides, acc = [], 1
    for d in reversed(shape):
        strides.insert(0, acc)
        acc *= d
    code, bits = _DL_CODES[dtype]
    return (_hdr(len(shape)), len(shape), code, bits, tuple(shape) + tuple(strides))


def _normalize_out_idx(h, out_idx):
    """TileLang's out_idx (None, an int, a list of ints; negative from the end) -> list or None, normalized
    by libtilelang's rule (tl_kernel_normalize_out_idx: range, duplicates, scalar and T.StridedTensor
    parameters) for kernel handle h."""
    if out_idx is None:
        return None
    items = [out_idx] if isinstance(out_idx, int) else list(out_idx)
    for k in items:
        if not isinstance(k, int) or isinstance(k, bool):
            raise ArgumentError(f"out_idx entries must be integers, got {k!r}")
        if not -2**31 <= k < 2**31:
            raise ArgumentError(f"out_idx {k} is out of range for {_lib.param_count(h)} parameters")
    n = len(items)
    given, norm = (ctypes.c_int * max(n, 1))(*items), (ctypes.c_int * max(n, 1))()
    ctx = _lib.context()
    if _lib.kernel_normalize_out_idx(ctx, h, given, n, norm) != _lib.TL_OK:
        raise ArgumentError(_lib.last_error(ctx))
    return list(norm[:n]) or None


_TORCH_DTYPES = {}


def _torch_dtype(name):
    t = _TORCH_DTYPES.get(name)
    if t is None:
        import torch
        t = _TORCH_DTYPES[name] = getattr(torch, _TORCH_NAMES.get(name, name))
    return t


_HDRS = {}   # ndim -> struct of a DLTensor with its shape and strides
_DL_OF = {}  # framework dtype object -> (DLPack code, bits)
_torch_tensor = None  # torch.Tensor, once a torch tensor has been seen (the fast path of __call__)


def _hdr(nd):
    h = _HDRS.get(nd)
    if h is None:
        h = _HDRS[nd] = struct.Struct(f"<QiiiBBHQQQ{nd}q{nd}q")
    return h


def _dl_code(dtype, name):
    c = _DL_OF.get(dtype)
    if c is None:
        c = _DL_OF[dtype] = _DL_CODES.get(name, (255, 0))
    return c


def _pack_tensor(raw, reg, a, p, keep):
    """Writes parameter p's DLTensor (with its shape and strides behind it) for `a` into region
    reg = (offset in raw, address); returns (framework, device id or -1 for the host)."""
    off, addr = reg
    mod = type(a).__module__
    if mod == "torch" or mod == "numpy":
        shape = a.shape
        nd = len(shape)
        if nd > MAX_DIMS:
            raise ArgumentError(f"argument '{p.name}': {nd} dims (at most {MAX_DIMS})")
    if mod == "torch":
        if _torch_tensor is None:
            _use_torch()
        dt = a.dtype
        code, bits = _DL_OF.get(dt) or _dl_code(dt, str(dt)[6:])
        did = a.get_device()  # -1: host
        _hdr(nd).pack_into(raw, off, a.data_ptr(), _lib.kDLCUDA if did >= 0 else _lib.kDLCPU, did if did >= 0 else 0,
                           nd, code, bits, 1, addr + 48, addr + 48 + 8 * nd, 0, *shape, *a.stride())
        if did >= 0 and not a.is_cuda:
            raise ArgumentError(f"argument '{p.name}': device {a.device} is neither cuda nor cpu")
        return ("torch", did)
    if mod == "numpy":
        item = a.itemsize
        dt = a.dtype
        code, bits = _DL_OF.get(dt) or _dl_code(dt, dt.name)
        _hdr(nd).pack_into(raw, off, a.__array_interface__["data"][0], _lib.kDLCPU, 0, nd, code, bits, 1,
                           addr + 48, addr + 48 + 8 * nd, 0, *shape, *[x // item for x in a.strides])
        return ("numpy", -1)
    if hasattr(a, "__dlpack__"):
        cap = a.__dlpack__()
        keep.append(cap)
        get = ctypes.pythonapi.PyCapsule_GetPointer
        get.restype, get.argtypes = ctypes.c_void_p, [ctypes.py_object, ctypes.c_char_p]
        ptr = get(cap, b"dltensor")
        ctypes.memmove(addr, ptr, _lib.DLTENSOR_SIZE)  # the DLTensor is the DLManagedTensor's first field
        dt, did = struct.unpack_from("<ii", raw, off + 8)
        return (mod.split(".")[0], did if dt == _lib.kDLCUDA else -1)
    raise ArgumentError(f"argument '{p.name}': expected a tensor (an object with __dlpack__: PyTorch, NumPy, "
                        f"CuPy, JAX), got {type(a).__name__}")


def tensor_shape(a):
    """The shape (a tuple of ints) of tensor `a`: its .shape (NumPy, PyTorch), else its DLPack
    DLTensor's (an object with __dlpack__); None for a value that is not a tensor (NumPy scalars
    such as numpy.int32(4) included)."""
    if _is_numpy_scalar(a):
        return None
    shape = getattr(a, "shape", None)
    if shape is not None and not callable(shape):
        try:
            return tuple(int(d) for d in shape)
        except (TypeError, ValueError):
            pass
    if not hasattr(a, "__dlpack__"):
        return None
    cap = a.__dlpack__()
    get = ctypes.pythonapi.PyCapsule_GetPointer
    get.restype, get.argtypes = ctypes.c_void_p, [ctypes.py_object, ctypes.c_char_p]
    t = get(cap, b"dltensor")  # DLManagedTensor*: its DLTensor first (ndim at 16, shape* at 24)
    nd = ctypes.c_int32.from_address(t + 16).value
    dims = ctypes.c_void_p.from_address(t + 24).value
    return tuple((ctypes.c_int64 * nd).from_address(dims)) if nd else ()


def _is_numpy_scalar(a):
    return (type(a).__module__ or "").startswith("numpy") and type(a).__name__ != "ndarray" and \
        hasattr(a, "item") and getattr(a, "ndim", None) == 0


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


def _use_torch():
    """Takes up PyTorch once a torch tensor has been seen: torch.Tensor for __call__'s fast path, and
    torch.Tensor, the dtypes of _DL_CODES and the current-stream function for _fastcall."""
    global _torch_tensor
    import torch
    _torch_tensor = torch.Tensor
    if _fastcall is not None:
        dtypes = tuple((getattr(torch, n), *cb) for n, cb in _DL_CODES.items() if hasattr(torch, n))
        _fastcall.set_torch(torch, dtypes, _raw_stream_fn())


def _raw_stream_fn():
    """device id -> the current PyTorch stream of that CUDA device as a CUstream (int)."""
    global _raw_stream
    if _raw_stream is None:
        import torch
        _raw_stream = getattr(getattr(torch, "_C", None), "_cuda_getCurrentRawStream", None) or \
            (lambda idx: torch.cuda.current_stream(idx).cuda_stream)
    return _raw_stream


def _current_stream(device_id):
    """The current PyTorch stream of CUDA device device_id, as a CUstream (int)."""
    return (_raw_stream or _raw_stream_fn())(device_id)


def set_output_allocation(name):
    """How the C path allocates out_idx outputs; returns the previous name (None without the extension):
    "empty_like" (DEFAULT_OUTPUT_ALLOCATION: torch.empty_like of a one-element template expanded to the
    output's static shape; new_empty for dynamic shapes),
    "new_empty" (first_input.new_empty), "empty" (torch.empty, as the pure path), or "slab" (opt-in:
    views of one allocation of up to 64 small outputs per device and stream, sharing its storage).
    TL_PY_ALLOC=<name> in the environment sets it at import."""
    return _fastcall.set_alloc(name) if _fastcall is not None else None


# The C path's output allocation unless TL_PY_ALLOC says otherwise: fresh tensors as torch.empty gives.
DEFAULT_OUTPUT_ALLOCATION = "empty_like"

if _fastcall is not None:
    _fastcall.set_runtime(_lib.context, _call_failed)
    _fastcall.set_alloc(os.environ.get("TL_PY_ALLOC") or DEFAULT_OUTPUT_ALLOCATION)
