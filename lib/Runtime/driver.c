/* CUDA driver loader (lib/Runtime).
 *
 * Role: the only process-global state of the library (docs/runtime.md "A kernel and a call"): the table
 * of driver entry points, loaded once with pthread_once.  Algorithm:
 * dlopen("libcuda.so.1") (or $TL_CUDA_DRIVER), dlsym each entry point by its
 * versioned exported name (cuda.h defines the plain names as macros for
 * these, e.g. cuMemAlloc → cuMemAlloc_v2; dlsym("cuMemAlloc") would find the
 * old 32-bit entry), cuInit(0), cuDeviceGetCount.  A missing library or
 * symbol, the toolkit's stub library (cuInit returns
 * CUDA_ERROR_STUB_LIBRARY), a failing cuInit or zero devices leave the
 * table unusable with a message; callers turn that into TL_ERR_NO_DEVICE.
 * The library handle is never closed (the table lives for the process). */
#include "Runtime/driver.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "Runtime/arg_messages.h"
#include "Support/context.h"
#include "Support/target.h"
#include "tilelang/runtime.h"

static pthread_once_t g_once = PTHREAD_ONCE_INIT;
static tl_driver g_drv;
static bool g_ok;
static int g_ndev;
static char g_why[512];

static void *sym(void *lib, const char *name, bool *missing) {
  void *p = dlsym(lib, name);
  if (!p && !*missing) {
    *missing = true;
    snprintf(g_why, sizeof g_why, "CUDA driver: entry point %s not found in the driver library (driver too old?)",
             name);
  }
  return p;
}

static void load_driver(void) {
  const char *path = getenv("TL_CUDA_DRIVER");
  if (!path || !*path) path = "libcuda.so.1";
  void *lib = dlopen(path, RTLD_NOW | RTLD_LOCAL);
  if (!lib) {
    const char *e = dlerror();
    snprintf(g_why, sizeof g_why, "no CUDA driver: dlopen(\"%s\") failed: %s (no NVIDIA driver installed?)", path,
             e ? e : "unknown error");
    return;
  }
  bool miss = false;
#define LOAD(field, name) *(void **)(&g_drv.field) = sym(lib, name, &miss)
  LOAD(cuInit, "cuInit");
  LOAD(cuDriverGetVersion, "cuDriverGetVersion");
  LOAD(cuDeviceGetCount, "cuDeviceGetCount");
  LOAD(cuDeviceGet, "cuDeviceGet");
  LOAD(cuDeviceGetAttribute, "cuDeviceGetAttribute");
  LOAD(cuDevicePrimaryCtxRetain, "cuDevicePrimaryCtxRetain");
  LOAD(cuDevicePrimaryCtxRelease, "cuDevicePrimaryCtxRelease_v2");
  LOAD(cuCtxPushCurrent, "cuCtxPushCurrent_v2");
  LOAD(cuCtxPopCurrent, "cuCtxPopCurrent_v2");
  LOAD(cuModuleLoadDataEx, "cuModuleLoadDataEx");
  LOAD(cuModuleUnload, "cuModuleUnload");
  LOAD(cuModuleGetFunction, "cuModuleGetFunction");
  LOAD(cuFuncGetAttribute, "cuFuncGetAttribute");
  LOAD(cuFuncSetAttribute, "cuFuncSetAttribute");
  LOAD(cuLaunchKernel, "cuLaunchKernel");
  LOAD(cuStreamGetCtx, "cuStreamGetCtx");
  LOAD(cuMemAlloc, "cuMemAlloc_v2");
  LOAD(cuMemFree, "cuMemFree_v2");
  LOAD(cuMemsetD8Async, "cuMemsetD8Async");
  LOAD(cuPointerGetAttribute, "cuPointerGetAttribute");
  LOAD(cuGetErrorName, "cuGetErrorName");
  LOAD(cuGetErrorString, "cuGetErrorString");
#undef LOAD
  if (miss) return;
#define OPTIONAL(field, name) *(void **)(&g_drv.field) = dlsym(lib, name)
  OPTIONAL(cuMemcpyHtoD, "cuMemcpyHtoD_v2");
  OPTIONAL(cuMemcpyDtoH, "cuMemcpyDtoH_v2");
  OPTIONAL(cuMemcpyDtoD, "cuMemcpyDtoD_v2");
  OPTIONAL(cuCtxSynchronize, "cuCtxSynchronize");
  OPTIONAL(cuEventCreate, "cuEventCreate");
  OPTIONAL(cuEventRecord, "cuEventRecord");
  OPTIONAL(cuEventSynchronize, "cuEventSynchronize");
  OPTIONAL(cuEventElapsedTime, "cuEventElapsedTime");
  OPTIONAL(cuEventDestroy, "cuEventDestroy_v2");
  OPTIONAL(cuCtxGetCurrent, "cuCtxGetCurrent");
  OPTIONAL(cuTensorMapEncodeTiled, "cuTensorMapEncodeTiled");
  OPTIONAL(cuDeviceGetName, "cuDeviceGetName");
#undef OPTIONAL
  tl_CUresult r = g_drv.cuInit(0);
  if (r != TL_CUDA_SUCCESS) {
    const char *name = NULL, *text = NULL;
    tl_driver_error_text(r, &name, &text);
    if (r == TL_CUDA_ERROR_STUB_LIBRARY)
      snprintf(g_why, sizeof g_why, "no CUDA driver: %s is the CUDA toolkit's stub library (cuInit: %s)", path, name);
    else snprintf(g_why, sizeof g_why, "no usable CUDA driver: cuInit failed: %s (%s)", name, text);
    return;
  }
  int n = 0;
  r = g_drv.cuDeviceGetCount(&n);
  if (r != TL_CUDA_SUCCESS) {
    const char *name = NULL, *text = NULL;
    tl_driver_error_text(r, &name, &text);
    snprintf(g_why, sizeof g_why, "no usable CUDA driver: cuDeviceGetCount failed: %s (%s)", name, text);
    return;
  }
  if (n <= 0) {
    snprintf(g_why, sizeof g_why, "no CUDA device: cuDeviceGetCount found %d device(s)", n);
    return;
  }
  g_ndev = n;
  g_ok = true;
}

const tl_driver *tl_driver_get(const char **why) {
  pthread_once(&g_once, load_driver);
  if (g_ok) return &g_drv;
  if (why) *why = g_why[0] ? g_why : "no CUDA driver";
  return NULL;
}

int tl_driver_device_count(void) {
  pthread_once(&g_once, load_driver);
  return g_ok ? g_ndev : 0;
}

void tl_driver_error_text(tl_CUresult r, const char **name, const char **text) {
  *name = NULL;
  *text = NULL;
  if (g_drv.cuGetErrorName) g_drv.cuGetErrorName(r, name);
  if (g_drv.cuGetErrorString) g_drv.cuGetErrorString(r, text);
  if (!*name && r == TL_CUDA_ERROR_INVALID_VALUE) *name = "CUDA_ERROR_INVALID_VALUE"; /* without a driver */
  if (!*name) *name = "CUDA_ERROR_UNKNOWN";
  if (!*text) *text = "unknown error";
}

const char *tl_driver_error_name(tl_CUresult r) {
  const char *name, *text;
  tl_driver_error_text(r, &name, &text);
  return name;
}

tl_status tl_driver_fail(tl_context *ctx, tl_CUresult r, const char *what_fmt, ...) {
  const char *name, *text;
  tl_driver_error_text(r, &name, &text);
  tl_strbuf what = {0};
  va_list ap;
  va_start(ap, what_fmt);
  tl_strbuf_vprintf(&what, what_fmt, ap);
  va_end(ap);
  const char *w = !what.oom && what.data ? what.data : what_fmt;
  tl_status st = tl_context_fail(ctx, TL_ERR_CUDA, TL_MSG_DRIVER_FAIL, w, name, text, tl_driver_sticky_advice(r));
  tl_strbuf_free(&what);
  return st;
}

bool tl_driver_error_is_sticky(tl_CUresult r) {
  return r == TL_CUDA_ERROR_ILLEGAL_ADDRESS || r == TL_CUDA_ERROR_LAUNCH_TIMEOUT ||
         (r >= TL_CUDA_ERROR_HARDWARE_STACK_ERROR && r <= TL_CUDA_ERROR_LAUNCH_FAILED);
}

const char *tl_driver_sticky_advice(tl_CUresult r) {
  if (!tl_driver_error_is_sticky(r)) return "";
  return TL_MSG_STICKY_ADVICE;
}

void tl_driver_free_retained(tl_CUdeviceptr ptr, tl_CUcontext pctx, tl_CUdevice dev) {
  const tl_driver *drv = tl_driver_get(NULL);
  if (!drv) return;
  if (ptr) {
    tl_CUcontext dummy;
    bool pushed = pctx && drv->cuCtxPushCurrent(pctx) == TL_CUDA_SUCCESS;
    drv->cuMemFree(ptr);
    if (pushed) drv->cuCtxPopCurrent(&dummy);
  }
  if (pctx) drv->cuDevicePrimaryCtxRelease(dev);
}

/* ------------------------------------------------------- public: device */
tl_status tl_device_check(tl_context *ctx) {
  if (ctx) tl_context_begin(ctx);
  const char *why = NULL;
  if (tl_driver_get(&why)) return ctx ? tl_context_end(ctx, TL_OK) : TL_OK;
  if (!ctx) return TL_ERR_NO_DEVICE;
  return tl_context_end(ctx, tl_context_fail(ctx, TL_ERR_NO_DEVICE, "%s", why));
}

tl_status tl_device_count(tl_context *ctx, int *count) {
  if (count) *count = 0;
  tl_status s = tl_device_check(ctx);
  if (s != TL_OK) return s;
  if (!count) {
    if (!ctx) return TL_ERR_INVALID_ARGUMENT;
    return tl_context_null_arg(ctx, "tl_device_count", "count");
  }
  *count = tl_driver_device_count();
  return TL_OK;
}

int tl_driver_sm_count(void) {
  const tl_driver *d = tl_driver_get(NULL);
  tl_CUdevice dev;
  int n = 0;
  if (!d || d->cuDeviceGet(&dev, 0) != TL_CUDA_SUCCESS ||
      d->cuDeviceGetAttribute(&n, TL_CU_DEV_ATTR_MULTIPROCESSOR_COUNT, dev) != TL_CUDA_SUCCESS)
    return 0;
  return n > 0 ? n : 0;
}

tl_CUresult tl_driver_device_cc_query(int device, int *major, int *minor) {
  *major = *minor = 0;
  const tl_driver *d = tl_driver_get(NULL);
  tl_CUdevice dev;
  tl_CUresult r = TL_CUDA_ERROR_INVALID_VALUE;
  if (!d || device < 0 || device >= g_ndev || (r = d->cuDeviceGet(&dev, device)) != TL_CUDA_SUCCESS ||
      (r = d->cuDeviceGetAttribute(major, TL_CU_DEV_ATTR_CC_MAJOR, dev)) != TL_CUDA_SUCCESS ||
      (r = d->cuDeviceGetAttribute(minor, TL_CU_DEV_ATTR_CC_MINOR, dev)) != TL_CUDA_SUCCESS) {
    *major = *minor = 0;
    return r;
  }
  return TL_CUDA_SUCCESS;
}

bool tl_driver_device_cc(int device, int *major, int *minor) {
  return tl_driver_device_cc_query(device, major, minor) == TL_CUDA_SUCCESS;
}

void tl_driver_device_name(int device, char *buf, size_t n) {
  const tl_driver *d = tl_driver_get(NULL);
  tl_CUdevice dev;
  if (n) buf[0] = '\0';
  if (!d || !d->cuDeviceGetName || n < 2 || device < 0 || device >= g_ndev ||
      d->cuDeviceGet(&dev, device) != TL_CUDA_SUCCESS || d->cuDeviceGetName(buf, (int)n - 1, dev) != TL_CUDA_SUCCESS)
    buf[0] = '\0';
  buf[n - 1] = '\0';
}

const char *tl_device_target(int device) {
  int major, minor;
  if (!tl_driver_device_cc(device, &major, &minor)) return tl_target_default()->name;
  int cc = major * 10 + minor;
  if (cc == 90) return "sm_90a";
  if (cc == 86) return "sm_86";
  if (cc == 89) return "sm_89";
  if (cc > 90) return "sm_90";
  return tl_target_default()->name;
}

const char *tl_device_default_target(void) { return tl_device_target(0); }

const char *tl_target_resolve(const char *target) { return target ? target : tl_device_default_target(); }
