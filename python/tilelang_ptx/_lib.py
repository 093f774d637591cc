"""_lib.py -- loading libtilelang with ctypes and the C declarations the package uses.

Where the library comes from, first found wins:
  1. $TL_LIBRARY (a path to libtilelang.so[.0]);
  2. inside the package: <pkg>/lib (the wheel of scripts/build-wheel.sh);
  3. next to the package: <pkg>/../lib (the GPU bundle build-device/python -> build-device/lib),
     <pkg>/../../lib and <pkg>/../../../lib (an install prefix: P/lib/python3.X/site-packages/tilelang_ptx);
  4. the lib directory of an install prefix whose bin/ holds the tl-opt found on PATH;
  5. the build tree of a source checkout (<repo>/build, <repo>/build-test);
  6. the dynamic loader's search path (libtilelang.so.0, then libtilelang.so).
Mirrors of include/tilelang/{core,ir,runtime}.h: keep field order and types in step with them.
"""
import ctypes
import os
import shutil
import threading

_HERE = os.path.dirname(os.path.abspath(__file__))
_NAMES = ("libtilelang.so.0", "libtilelang.so")


def _candidates():
    env = os.environ.get("TL_LIBRARY")
    if env:
        yield env
        return
    dirs = [os.path.join(_HERE, *([".."] * up), "lib") for up in (0, 1, 2, 3, 4)]
    tool = shutil.which("tl-opt")
    if tool:
        dirs.append(os.path.join(os.path.dirname(os.path.realpath(tool)), "..", "lib"))
    repo = os.path.join(_HERE, "..", "..")
    dirs += [os.path.join(repo, "build"), os.path.join(repo, "build-test")]
    for d in dirs:
        for n in _NAMES:
            p = os.path.normpath(os.path.join(d, n))
            if os.path.exists(p):
                yield p
    yield from _NAMES


def _load():
    errors = []
    for path in _candidates():
        try:
            return ctypes.CDLL(path), path
        except OSError as e:
            errors.append(f"{path}: {e}")
    raise ImportError("tilelang_ptx: cannot load libtilelang (set TL_LIBRARY to its path):\n  " +
                      "\n  ".join(errors))


lib, path = _load()

# ------------------------------------------------------------------ types (runtime.h, dlpack.h)
c_void_p, c_int, c_size_t, c_char_p = ctypes.c_void_p, ctypes.c_int, ctypes.c_size_t, ctypes.c_char_p


class DLDataType(ctypes.Structure):
    _fields_ = [("code", ctypes.c_uint8), ("bits", ctypes.c_uint8), ("lanes", ctypes.c_uint16)]


class TLDType(ctypes.Structure):  # tl_dtype
    _fields_ = [("code", ctypes.c_uint8), ("bits", ctypes.c_uint8), ("lanes", ctypes.c_uint16)]


class CompileOptions(ctypes.Structure):  # tl_compile_options
    _fields_ = [("target", c_char_p), ("out_idx_mode", c_int), ("out_idx", ctypes.POINTER(c_int)),
                ("n_out_idx", c_size_t), ("flags", ctypes.c_uint), ("verify_each", ctypes.c_bool),
                ("stop_after", c_int), ("after_stage", c_void_p), ("after_stage_user", c_void_p),
                ("times", c_void_p), ("kernel", c_char_p), ("cache", c_int), ("sms", c_int),
                ("flags_false", ctypes.c_uint), ("remarks", ctypes.c_bool), ("no_line_info", ctypes.c_bool)]


class Define(ctypes.Structure):  # tl_define (ir.h): a -D NAME=VALUE binding, VALUE as Python literal text
    _fields_ = [("name", c_char_p), ("value", c_char_p)]


TL_OK, TL_ERR_INVALID_ARGUMENT, TL_ERR_COMPILE = 0, 1, 2
TL_OUT_IDX_NONE = 1
TL_STAGE_PTX, TL_STAGE_SIMT = 0, 1
TL_ARG_TENSOR, TL_ARG_INT, TL_ARG_FLOAT = 0, 1, 2
# DLPack device types and type codes (dlpack.h)
kDLCPU, kDLCUDA, kDLCUDAHost = 1, 2, 3
kDLInt, kDLUInt, kDLFloat, kDLBfloat = 0, 1, 2, 4
DLTENSOR_SIZE = 48   # sizeof(DLTensor): data, device, ndim, dtype, shape, strides, byte_offset
ARG_SIZE = 16        # sizeof(tl_arg): kind, then an 8-byte union


def _decl(name, restype, *argtypes):
    f = getattr(lib, name)
    f.restype = restype
    f.argtypes = list(argtypes)
    return f


P = c_void_p
context_create = _decl("tl_context_create", c_int, ctypes.POINTER(c_void_p))
context_destroy = _decl("tl_context_destroy", None, P)
context_last_error = _decl("tl_context_last_error", c_char_p, P)
context_warnings = _decl("tl_context_warnings", c_char_p, P)
status_name = _decl("tl_status_name", c_char_p, c_int)
kernel_compile = _decl("tl_kernel_compile", c_int, P, c_char_p, c_size_t, c_char_p, P, c_size_t,
                       ctypes.POINTER(CompileOptions), ctypes.POINTER(c_void_p))
kernel_destroy = _decl("tl_kernel_destroy", None, P)
kernel_ptx = _decl("tl_kernel_ptx", c_char_p, P)
kernel_simt_ir = _decl("tl_kernel_simt_ir", c_char_p, P)
kernel_target = _decl("tl_kernel_target", c_char_p, P)


class LayoutDumpOptions(ctypes.Structure):  # tl_layout_dump_options (ir.h)
    _fields_ = [("full", ctypes.c_bool), ("svg_dir", c_char_p)]


# the layouts layout inference chose (docs/layouts.md "Seeing the layouts"); *text is freed with tl_free
kernel_dump_layouts = _decl("tl_kernel_dump_layouts", c_int, P, P, ctypes.POINTER(LayoutDumpOptions),
                            ctypes.POINTER(c_void_p))
free = _decl("tl_free", None, c_void_p)
# the disk cache (runtime.h tl_cache_result: 0 off, 1 miss, 2 hit, 3 corrupt entry recompiled)
kernel_cache_result = _decl("tl_kernel_cache_result", c_int, P)
kernel_name = _decl("tl_kernel_name", c_char_p, P)


class ExportOptions(ctypes.Structure):
    """tl_export_options (runtime.h): the ahead-of-time export's name, source, cubin request and result."""
    _fields_ = [("name", c_char_p), ("source", c_char_p), ("cubin", ctypes.c_bool), ("cubin_embedded", ctypes.c_bool),
                ("has_out_idx", ctypes.c_bool), ("out_idx", ctypes.POINTER(ctypes.c_int)), ("n_out_idx", c_size_t)]


kernel_export_c = _decl("tl_kernel_export_c", c_int, P, P, c_char_p, c_char_p, ctypes.POINTER(ExportOptions))
param_count = _decl("tl_kernel_param_count", c_int, P)
param_name = _decl("tl_kernel_param_name", c_char_p, P, c_int)
param_is_tensor = _decl("tl_kernel_param_is_tensor", ctypes.c_bool, P, c_int)
param_dtype = _decl("tl_kernel_param_dtype", TLDType, P, c_int)
param_ndim = _decl("tl_kernel_param_ndim", c_int, P, c_int)
param_dim = _decl("tl_kernel_param_dim", ctypes.c_bool, P, c_int, c_int,
                  ctypes.POINTER(ctypes.c_int64), ctypes.POINTER(c_char_p))
dtype_name = _decl("tl_dtype_name", c_char_p, TLDType)
# out_idx normalized by the library's rule (range, negatives, duplicates, scalar and strided parameters)
kernel_normalize_out_idx = _decl("tl_kernel_normalize_out_idx", c_int, P, P, ctypes.POINTER(c_int), c_size_t,
                                 ctypes.POINTER(c_int))
kernel_call = _decl("tl_kernel_call", c_int, P, P, P, c_size_t, P, P)
# the pass-config table (include/tilelang/pass_configs.def): its keys, and key = value text applied to
# (flags, flags_false) by the library's rule
pass_config_flag_keys = _decl("tl_pass_config_flag_keys", c_char_p)
pass_config_apply = _decl("tl_pass_config_apply", c_int, P, c_char_p, c_char_p, ctypes.POINTER(ctypes.c_uint),
                          ctypes.POINTER(ctypes.c_uint))
target_supported = _decl("tl_target_supported", ctypes.c_bool, c_char_p)
target_list = _decl("tl_target_list", c_char_p)
default_target = _decl("tl_device_default_target", c_char_p)
device_target = _decl("tl_device_target", c_char_p, c_int)

# tile-IR modules (ir.h): parse a kernel file with -D bindings, count its work (tl_module_analyze), free it
module_parse_kernel = _decl("tl_module_parse_kernel", c_int, P, c_char_p, c_size_t, c_char_p, c_char_p, P, c_size_t,
                            ctypes.POINTER(c_void_p))
module_destroy = _decl("tl_module_destroy", None, P)


class Analysis(ctypes.Structure):  # tl_analysis (ir.h)
    _fields_ = [("flops", ctypes.c_uint64), ("global_read_bytes", ctypes.c_uint64),
                ("global_write_bytes", ctypes.c_uint64), ("global_bytes", ctypes.c_uint64),
                ("gemms", ctypes.c_uint64), ("blocks", ctypes.c_uint64)]


module_analyze = _decl("tl_module_analyze", c_int, P, P, ctypes.POINTER(c_char_p), ctypes.POINTER(ctypes.c_int64),
                       c_size_t, ctypes.POINTER(Analysis))

_tls = threading.local()


def context():
    """The calling thread's tl_context (libtilelang wants one per thread), created on first use."""
    ctx = getattr(_tls, "ctx", None)
    if ctx is None:
        h = c_void_p()
        if context_create(ctypes.byref(h)) != TL_OK:
            raise MemoryError("tl_context_create failed")
        ctx = _tls.ctx = h.value
    return ctx


def last_error(ctx):
    return (context_last_error(ctx) or b"").decode("utf-8", "replace")


def warnings_text(ctx):
    """The rendered warnings of the last call on ctx when it succeeded, or ""."""
    return (context_warnings(ctx) or b"").decode("utf-8", "replace")

# ------------------------------------------------------------------ the tuner (runtime.h tl_kernel_tune, ir.h spaces)
# tl_tune_measure_fn: (user, kernel, config index, warmup, rep, double *ms, char *why, size_t why_size) -> tl_status
MEASURE_FN = ctypes.CFUNCTYPE(c_int, c_void_p, c_void_p, c_size_t, c_int, c_int, ctypes.POINTER(ctypes.c_double),
                              c_void_p, c_size_t)


class TuneOptions(ctypes.Structure):  # tl_tune_options
    _fields_ = [("compile", ctypes.POINTER(CompileOptions)), ("defines", ctypes.POINTER(Define)),
                ("ndefines", c_size_t), ("workers", c_int), ("warmup", c_int), ("rep", c_int),
                ("measure", MEASURE_FN), ("user", c_void_p), ("problem", c_char_p), ("progress", ctypes.c_bool),
                ("load", ctypes.c_bool), ("device", c_int), ("cache", c_int)]


class TuneConfigResult(ctypes.Structure):  # tl_tune_config_result
    _fields_ = [("outcome", c_int), ("ms", ctypes.c_double), ("compile_ms", ctypes.c_double),
                ("compile_cpu_ms", ctypes.c_double), ("load_ms", ctypes.c_double), ("message", c_char_p)]


class TuneResult(ctypes.Structure):  # tl_tune_result
    _fields_ = [("nconfigs", c_size_t), ("configs", ctypes.POINTER(TuneConfigResult)), ("best", ctypes.c_long),
                ("best_ms", ctypes.c_double), ("kernel", c_void_p), ("cache_hit", ctypes.c_bool),
                ("cache_key", ctypes.c_char * 33), ("workers", c_int), ("compiled", c_size_t),
                ("compile_failed", c_size_t), ("timed", c_size_t), ("measure_failed", c_size_t),
                ("compile_wall_ms", ctypes.c_double), ("load_ms", ctypes.c_double),
                ("compile_cpu_ms", ctypes.c_double), ("total_ms", ctypes.c_double), ("jitlink", ctypes.c_bool)]


TL_TUNE_TIMED, TL_TUNE_COMPILE_FAILED, TL_TUNE_MEASURE_FAILED = 2, 3, 4
TL_ERR_UNSUPPORTED = 7
tune_space_from_defines = _decl("tl_tune_space_from_defines", c_int, ctypes.POINTER(ctypes.POINTER(Define)),
                                ctypes.POINTER(c_size_t), c_size_t, ctypes.POINTER(c_void_p))
tune_space_destroy = _decl("tl_tune_space_destroy", None, P)
kernel_tune = _decl("tl_kernel_tune", c_int, P, c_char_p, c_size_t, c_char_p, P, ctypes.POINTER(TuneOptions),
                    ctypes.POINTER(TuneResult))
tune_result_free = _decl("tl_tune_result_free", None, ctypes.POINTER(TuneResult))
