/* The CUDA driver table (internal): the few driver types and constants the
 * runtime uses, declared here so that the library builds without cuda.h
 * (values from CUDA 13's cuda.h; they are part of the driver ABI), and the
 * entry points resolved from libcuda.so.1 by their versioned names. */
#ifndef TL_RUNTIME_DRIVER_H
#define TL_RUNTIME_DRIVER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "tilelang/core.h"

typedef int tl_CUresult;
typedef int tl_CUdevice;
typedef struct tl_CUctx_st *tl_CUcontext;
typedef struct tl_CUmod_st *tl_CUmodule;
typedef struct tl_CUfunc_st *tl_CUfunction;
typedef struct tl_CUstream_st *tl_CUstream;
typedef unsigned long long tl_CUdeviceptr;
typedef struct tl_CUevent_st *tl_CUevent;

enum {
  TL_CUDA_SUCCESS = 0,
  TL_CUDA_ERROR_INVALID_VALUE = 1,
  TL_CUDA_ERROR_STUB_LIBRARY = 34,
  TL_CUDA_ERROR_NO_DEVICE = 100,
  /* the errors after which the context is unusable (sticky) */
  TL_CUDA_ERROR_ILLEGAL_ADDRESS = 700,
  TL_CUDA_ERROR_LAUNCH_TIMEOUT = 702,
  TL_CUDA_ERROR_HARDWARE_STACK_ERROR = 714, /* 714..719: stack, instruction, alignment, address space, pc */
  TL_CUDA_ERROR_LAUNCH_FAILED = 719,
  /* CUjit_option */
  TL_CU_JIT_INFO_LOG_BUFFER = 3,
  TL_CU_JIT_INFO_LOG_BUFFER_SIZE_BYTES = 4,
  TL_CU_JIT_ERROR_LOG_BUFFER = 5,
  TL_CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES = 6,
  TL_CU_JIT_LOG_VERBOSE = 12,
  /* CUdevice_attribute */
  TL_CU_DEV_ATTR_MAX_GRID_DIM_X = 5,
  TL_CU_DEV_ATTR_MAX_GRID_DIM_Y = 6,
  TL_CU_DEV_ATTR_MAX_GRID_DIM_Z = 7,
  TL_CU_DEV_ATTR_MULTIPROCESSOR_COUNT = 16,
  TL_CU_DEV_ATTR_CC_MAJOR = 75,
  TL_CU_DEV_ATTR_CC_MINOR = 76,
  TL_CU_DEV_ATTR_MAX_SMEM_OPTIN = 97,
  /* CUfunction_attribute */
  TL_CU_FUNC_ATTR_MAX_THREADS_PER_BLOCK = 0,
  TL_CU_FUNC_ATTR_MAX_DYNAMIC_SHARED_SIZE_BYTES = 8,
  /* CUpointer_attribute */
  TL_CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL = 9
};
/* Special stream handles (cuda.h CU_STREAM_LEGACY / CU_STREAM_PER_THREAD). */
#define TL_CU_STREAM_LEGACY ((tl_CUstream)0x1)
#define TL_CU_STREAM_PER_THREAD ((tl_CUstream)0x2)

typedef struct tl_driver {
  tl_CUresult (*cuInit)(unsigned);
  tl_CUresult (*cuDriverGetVersion)(int *);
  tl_CUresult (*cuDeviceGetCount)(int *);
  tl_CUresult (*cuDeviceGet)(tl_CUdevice *, int);
  tl_CUresult (*cuDeviceGetAttribute)(int *, int, tl_CUdevice);
  tl_CUresult (*cuDevicePrimaryCtxRetain)(tl_CUcontext *, tl_CUdevice);
  tl_CUresult (*cuDevicePrimaryCtxRelease)(tl_CUdevice); /* _v2 */
  tl_CUresult (*cuCtxPushCurrent)(tl_CUcontext);         /* _v2 */
  tl_CUresult (*cuCtxPopCurrent)(tl_CUcontext *);        /* _v2 */
  tl_CUresult (*cuCtxGetCurrent)(tl_CUcontext *);        /* optional (NULL) */
  tl_CUresult (*cuModuleLoadDataEx)(tl_CUmodule *, const void *, unsigned, int *, void **);
  tl_CUresult (*cuModuleUnload)(tl_CUmodule);
  tl_CUresult (*cuModuleGetFunction)(tl_CUfunction *, tl_CUmodule, const char *);
  tl_CUresult (*cuFuncGetAttribute)(int *, int, tl_CUfunction);
  tl_CUresult (*cuFuncSetAttribute)(tl_CUfunction, int, int);
  tl_CUresult (*cuLaunchKernel)(tl_CUfunction, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned,
                                tl_CUstream, void **, void **);
  tl_CUresult (*cuStreamGetCtx)(tl_CUstream, tl_CUcontext *);
  tl_CUresult (*cuMemAlloc)(tl_CUdeviceptr *, size_t); /* _v2 */
  tl_CUresult (*cuMemFree)(tl_CUdeviceptr);            /* _v2 */
  tl_CUresult (*cuMemsetD8Async)(tl_CUdeviceptr, unsigned char, size_t, tl_CUstream);
  tl_CUresult (*cuPointerGetAttribute)(void *, int, tl_CUdeviceptr);
  tl_CUresult (*cuGetErrorName)(tl_CUresult, const char **);
  tl_CUresult (*cuGetErrorString)(tl_CUresult, const char **);
  /* Optional entries (NULL when the driver lacks them; tl-run's copies and
   * timing need them): */
  tl_CUresult (*cuMemcpyHtoD)(tl_CUdeviceptr, const void *, size_t);   /* _v2 */
  tl_CUresult (*cuMemcpyDtoH)(void *, tl_CUdeviceptr, size_t);         /* _v2 */
  tl_CUresult (*cuMemcpyDtoD)(tl_CUdeviceptr, tl_CUdeviceptr, size_t); /* _v2 */
  tl_CUresult (*cuCtxSynchronize)(void);
  tl_CUresult (*cuEventCreate)(tl_CUevent *, unsigned);
  tl_CUresult (*cuEventRecord)(tl_CUevent, tl_CUstream);
  tl_CUresult (*cuEventSynchronize)(tl_CUevent);
  tl_CUresult (*cuEventElapsedTime)(float *, tl_CUevent, tl_CUevent);
  tl_CUresult (*cuEventDestroy)(tl_CUevent); /* _v2 */
  /* cuTensorMapEncodeTiled (CUDA 12+; lib/Runtime/Hopper/tma.c): the enums as int */
  tl_CUresult (*cuTensorMapEncodeTiled)(void *, int, uint32_t, void *, const uint64_t *, const uint64_t *,
                                        const uint32_t *, const uint32_t *, int, int, int, int);
  tl_CUresult (*cuDeviceGetName)(char *, int, tl_CUdevice); /* the tuner's cache key */
} tl_driver;

/* Loads libcuda.so.1 (or $TL_CUDA_DRIVER) once per process (pthread_once),
 * resolves the table and runs cuInit(0) and cuDeviceGetCount.  Returns the
 * table, or NULL with *why set to a static/global message (never NULL) when
 * the driver is missing, a stub, cuInit fails or there is no device.  Safe
 * from any thread. */
const tl_driver *tl_driver_get(const char **why);
/* Number of devices found at load (0 when the driver is unusable). */
int tl_driver_device_count(void);
/* Number of SMs of device 0 (CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, the
 * device tl_device_default_target describes); 0 without a usable driver. */
int tl_driver_sm_count(void);
/* Compute capability of CUDA device `device` in *major, *minor; false (both
 * 0) without a usable driver or for an ordinal that does not exist. */
bool tl_driver_device_cc(int device, int *major, int *minor);
/* The same, returning the driver's result (CUDA_ERROR_INVALID_VALUE for a
 * missing driver or an ordinal that does not exist). */
tl_CUresult tl_driver_device_cc_query(int device, int *major, int *minor);
/* The name of CUDA device `device` (cuDeviceGetName) into buf (n bytes,
 * NUL-terminated); "" when it cannot be had. */
void tl_driver_device_name(int device, char *buf, size_t n);
/* "CUDA_ERROR_OUT_OF_MEMORY: out of memory" for r (static strings). */
void tl_driver_error_text(tl_CUresult r, const char **name, const char **text);

/* The name alone ("CUDA_ERROR_OUT_OF_MEMORY"; a static string). */
const char *tl_driver_error_name(tl_CUresult r);

/* Whether r leaves the context unusable (CUDA_ERROR_ILLEGAL_ADDRESS,
 * _LAUNCH_TIMEOUT, _HARDWARE_STACK_ERROR .. _LAUNCH_FAILED: a kernel
 * faulted; the driver reports it from then on until the process ends). */
bool tl_driver_error_is_sticky(tl_CUresult r);
/* For a sticky r, "; this error is sticky: ..." saying what it means and
 * what the user must do (a static string); "" otherwise. */
const char *tl_driver_sticky_advice(tl_CUresult r);

/* Records a CUDA failure in ctx: "WHAT failed: NAME (text)", WHAT formatted
 * from what_fmt and its arguments (printf), then the sticky advice for a
 * sticky r, and returns TL_ERR_CUDA. */
tl_status tl_driver_fail(tl_context *ctx, tl_CUresult r, const char *what_fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* Frees device memory ptr (none when 0) with primary context pctx current,
 * then releases the reference on device dev's primary context that pctx
 * holds (none when pctx is NULL): the end of a tensor whose allocation
 * retained the primary context.  A no-op without a driver. */
void tl_driver_free_retained(tl_CUdeviceptr ptr, tl_CUcontext pctx, tl_CUdevice dev);

#endif
