/* PTX → cubin off the driver (lib/Runtime): the autotuner's parallel JIT.
 *
 * Why.  The CUDA driver compiles PTX inside cuModuleLoadDataEx, and worker
 * threads loading tune candidates at once were measured to load one at a
 * time (docs/performance.md, "Measurements behind choices in the code").
 * NVIDIA's nvJitLink library (CUDA 12+, libnvJitLink.so.N of the toolkit)
 * runs the same PTX compiler on independent handles, so candidates compile
 * in parallel, and the driver then only loads a finished cubin.
 *
 * What.  tl_rt_kernel_jitlink compiles k->ptx for the device's architecture
 * into k->cubin; tl_kernel_load (call.c) passes k->cubin to the driver when
 * it is set.  The library is optional: it is dlopen'ed once (pthread_once)
 * from $TL_NVJITLINK, else libnvJitLink.so.13 / .so.12 on the loader's path,
 * else under $CUDA_HOME, $CUDA_PATH and /usr/local/cuda (lib64/); without it,
 * or when it fails on a kernel, the caller keeps the driver's JIT.  Entry
 * points are taken by the versioned names nvJitLink.h maps its API to
 * (__nvJitLinkCreate_13_0, else _12_0): the unversioned exports are the
 * library's compatibility entries.
 * Source of the API: CUDA Toolkit documentation, "nvJitLink" (nvJitLinkCreate
 * with "-arch=sm_XY", nvJitLinkAddData with NVJITLINK_INPUT_PTX = 2,
 * nvJitLinkComplete, nvJitLinkGetLinkedCubin{Size,}, nvJitLinkGetErrorLog);
 * handles are independent, so distinct threads may compile at once. */
#include <dlfcn.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "Runtime/driver.h"
#include "Runtime/kernel.h"
#include "Support/context.h"
#include "tilelang/runtime.h"

typedef struct nvJitLink *tl_jl_handle;
typedef int (*jl_create_fn)(tl_jl_handle *, uint32_t, const char **);
typedef int (*jl_destroy_fn)(tl_jl_handle *);
typedef int (*jl_add_fn)(tl_jl_handle, int, const void *, size_t, const char *);
typedef int (*jl_complete_fn)(tl_jl_handle);
typedef int (*jl_size_fn)(tl_jl_handle, size_t *);
typedef int (*jl_get_fn)(tl_jl_handle, void *);
typedef int (*jl_log_fn)(tl_jl_handle, char *);

enum { JL_INPUT_PTX = 2 };

static pthread_once_t g_once = PTHREAD_ONCE_INIT;
static struct {
  jl_create_fn create;
  jl_destroy_fn destroy;
  jl_add_fn add;
  jl_complete_fn complete;
  jl_size_fn cubin_size, log_size;
  jl_get_fn cubin;
  jl_log_fn log;
  bool ok;
} g_jl;

static void *open_library(void) {
  const char *env = getenv("TL_NVJITLINK");
  if (env && *env) return dlopen(env, RTLD_NOW | RTLD_LOCAL);
  static const char *const names[] = {"libnvJitLink.so.13", "libnvJitLink.so.12"};
  for (size_t i = 0; i < 2; i++) {
    void *h = dlopen(names[i], RTLD_NOW | RTLD_LOCAL);
    if (h) return h;
  }
  const char *roots[] = {getenv("CUDA_HOME"), getenv("CUDA_PATH"), "/usr/local/cuda"};
  for (size_t r = 0; r < 3; r++) {
    if (!roots[r] || !*roots[r]) continue;
    for (size_t i = 0; i < 2; i++) {
      char path[1024];
      snprintf(path, sizeof path, "%s/lib64/%s", roots[r], names[i]);
      void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
      if (h) return h;
    }
  }
  return NULL;
}

/* dlsym of "__<api>_13_0", else "__<api>_12_0". */
static void *entry(void *lib, const char *api) {
  static const char *const vers[] = {"13_0", "12_0"};
  for (size_t i = 0; i < 2; i++) {
    char name[96];
    snprintf(name, sizeof name, "__%s_%s", api, vers[i]);
    void *p = dlsym(lib, name);
    if (p) return p;
  }
  return NULL;
}

static void load_jitlink(void) {
  void *lib = open_library();
  if (!lib) return;
  *(void **)&g_jl.create = entry(lib, "nvJitLinkCreate");
  *(void **)&g_jl.destroy = entry(lib, "nvJitLinkDestroy");
  *(void **)&g_jl.add = entry(lib, "nvJitLinkAddData");
  *(void **)&g_jl.complete = entry(lib, "nvJitLinkComplete");
  *(void **)&g_jl.cubin_size = entry(lib, "nvJitLinkGetLinkedCubinSize");
  *(void **)&g_jl.cubin = entry(lib, "nvJitLinkGetLinkedCubin");
  *(void **)&g_jl.log_size = entry(lib, "nvJitLinkGetErrorLogSize");
  *(void **)&g_jl.log = entry(lib, "nvJitLinkGetErrorLog");
  g_jl.ok = g_jl.create && g_jl.destroy && g_jl.add && g_jl.complete && g_jl.cubin_size && g_jl.cubin &&
            g_jl.log_size && g_jl.log;
  /* the handle stays open for the process, as the driver's does */
}

bool tl_rt_jitlink_available(void) {
  pthread_once(&g_once, load_jitlink);
  return g_jl.ok;
}

/* "sm_XY" of CUDA device `device`, or the kernel's target when that is the
 * architecture-specific form of the same ("sm_90a" on a 9.0 device: PTX of
 * sm_90a runs only there). */
static bool device_arch(const tl_driver *drv, const tl_kernel *k, int device, char *arch, size_t n) {
  tl_CUdevice dev;
  int major = 0, minor = 0;
  if (drv->cuDeviceGet(&dev, device) != TL_CUDA_SUCCESS ||
      drv->cuDeviceGetAttribute(&major, TL_CU_DEV_ATTR_CC_MAJOR, dev) != TL_CUDA_SUCCESS ||
      drv->cuDeviceGetAttribute(&minor, TL_CU_DEV_ATTR_CC_MINOR, dev) != TL_CUDA_SUCCESS)
    return false;
  snprintf(arch, n, "sm_%d%d", major, minor);
  size_t len = strlen(arch);
  if (k->target && strncmp(k->target, arch, len) == 0 && k->target[len] == 'a' && k->target[len + 1] == 0)
    snprintf(arch, n, "%s", k->target);
  return true;
}

tl_status tl_rt_jitlink_compile(tl_context *ctx, const char *ptx, const char *name, const char *arch, void **cubin,
                                size_t *cubin_size) {
  *cubin = NULL;
  *cubin_size = 0;
  if (!ptx || !arch) return tl_context_fail(ctx, TL_ERR_INVALID_ARGUMENT, "no PTX or no architecture");
  if (!tl_rt_jitlink_available()) return tl_context_fail(ctx, TL_ERR_UNSUPPORTED, "nvJitLink is not available");
  char opt[48];
  snprintf(opt, sizeof opt, "-arch=%s", arch);
  const char *opts[] = {opt};
  tl_jl_handle h = NULL;
  int r = g_jl.create(&h, 1, opts);
  if (r != 0) return tl_context_fail(ctx, TL_ERR_CUDA, "nvJitLinkCreate(%s) failed: error %d", opt, r);
  void *image = NULL;
  size_t size = 0;
  r = g_jl.add(h, JL_INPUT_PTX, ptx, strlen(ptx) + 1, name ? name : "kernel");
  if (r == 0) r = g_jl.complete(h);
  if (r == 0) r = g_jl.cubin_size(h, &size);
  if (r == 0 && (image = malloc(size ? size : 1)) == NULL) {
    g_jl.destroy(&h);
    return tl_context_fail(ctx, TL_ERR_NO_MEMORY, "out of memory");
  }
  if (r == 0) r = g_jl.cubin(h, image);
  tl_status st = TL_OK;
  if (r != 0) {
    size_t ln = 0;
    char *log = NULL;
    if (g_jl.log_size(h, &ln) == 0 && ln && (log = calloc(1, ln + 1))) g_jl.log(h, log);
    st = tl_context_fail(ctx, TL_ERR_CUDA, "nvJitLink (%s) failed for kernel '%s': error %d%s%s", opt,
                         name ? name : "kernel", r, log && *log ? "\n" : "", log ? log : "");
    free(log);
    free(image);
    image = NULL;
    size = 0;
  }
  g_jl.destroy(&h);
  *cubin = image;
  *cubin_size = size;
  return st;
}

tl_status tl_rt_kernel_jitlink(tl_context *ctx, tl_kernel *k, int device) {
  if (!k || !k->ptx) return tl_context_fail(ctx, TL_ERR_INVALID_ARGUMENT, "kernel has no PTX");
  if (!tl_rt_jitlink_available()) return tl_context_fail(ctx, TL_ERR_UNSUPPORTED, "nvJitLink is not available");
  const char *why = NULL;
  const tl_driver *drv = tl_driver_get(&why);
  if (!drv) return tl_context_fail(ctx, TL_ERR_NO_DEVICE, "%s", why);
  char arch[32];
  if (!device_arch(drv, k, device, arch, sizeof arch))
    return tl_context_fail(ctx, TL_ERR_CUDA, "cuDeviceGetAttribute failed for cuda:%d", device);
  void *image = NULL;
  size_t size = 0;
  tl_status st = tl_rt_jitlink_compile(ctx, k->ptx, k->name, arch, &image, &size);
  if (st != TL_OK) return st;
  pthread_mutex_lock(&k->mu);
  free(k->cubin);
  k->cubin = image;
  k->cubin_size = size;
  k->cubin_device = device;
  pthread_mutex_unlock(&k->mu);
  return TL_OK;
}
