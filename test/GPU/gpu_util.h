/* Helpers shared by the GPU tests and benchmarks (header-only, each test is
 * one executable): the CUDA driver calls the tests themselves need (copies,
 * streams, events, stream memory operations, and modules and launches for
 * bench_gemm's CUDA reference GEMM cubin), loaded with dlopen like the
 * library does so that nothing links libcuda; DLPack tensors in device
 * memory; float16/bfloat16 conversions (round to nearest even); a seeded
 * generator; per-element comparison as docs/testing.md "Numeric checks".
 * Exit code 77 means "skipped" (no driver or GPU). */
#ifndef TL_GPU_UTIL_H
#define TL_GPU_UTIL_H

#include <dlfcn.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "tilelang/tilelang.h"

#define GPU_SKIP 77

typedef int CUres;
typedef struct gpu_api {
  CUres (*cuInit)(unsigned);
  CUres (*cuDeviceGet)(int *, int);
  CUres (*cuDeviceGetAttribute)(int *, int, int);
  CUres (*cuDevicePrimaryCtxRetain)(void **, int);
  CUres (*cuCtxSetCurrent)(void *);
  CUres (*cuCtxSynchronize)(void);
  CUres (*cuMemAlloc)(unsigned long long *, size_t);
  CUres (*cuMemFree)(unsigned long long);
  CUres (*cuMemcpyHtoD)(unsigned long long, const void *, size_t);
  CUres (*cuMemcpyDtoH)(void *, unsigned long long, size_t);
  CUres (*cuMemcpyDtoD)(unsigned long long, unsigned long long, size_t);
  CUres (*cuMemcpyDtoDAsync)(unsigned long long, unsigned long long, size_t, void *);
  CUres (*cuMemcpyDtoHAsync)(void *, unsigned long long, size_t, void *);
  CUres (*cuMemsetD8)(unsigned long long, unsigned char, size_t);
  CUres (*cuMemsetD32Async)(unsigned long long, unsigned, size_t, void *);
  CUres (*cuStreamCreate)(void **, unsigned);
  CUres (*cuStreamDestroy)(void *);
  CUres (*cuStreamSynchronize)(void *);
  CUres (*cuStreamQuery)(void *);
  CUres (*cuStreamWaitValue32)(void *, unsigned long long, unsigned, unsigned);
  CUres (*cuEventCreate)(void **, unsigned);
  CUres (*cuEventDestroy)(void *);
  CUres (*cuEventRecord)(void *, void *);
  CUres (*cuEventSynchronize)(void *);
  CUres (*cuEventElapsedTime)(float *, void *, void *);
  CUres (*cuGetErrorName)(CUres, const char **);
  CUres (*cuModuleLoad)(void **, const char *);
  CUres (*cuModuleUnload)(void *);
  CUres (*cuModuleGetFunction)(void **, void *, const char *);
  CUres (*cuFuncGetAttribute)(int *, int, void *);
  CUres (*cuFuncSetAttribute)(void *, int, int);
  CUres (*cuLaunchKernel)(void *, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, void *, void **,
                          void **);
} gpu_api;

static gpu_api G;
static int g_failures __attribute__((unused));

#define CU(call)                                                                                                       \
  do {                                                                                                                 \
    CUres r_ = (call);                                                                                                 \
    if (r_ != 0) {                                                                                                     \
      const char *n_ = "?";                                                                                            \
      if (G.cuGetErrorName) G.cuGetErrorName(r_, &n_);                                                                 \
      fprintf(stderr, "%s:%d: %s failed: %s\n", __FILE__, __LINE__, #call, n_);                                        \
      exit(1);                                                                                                         \
    }                                                                                                                  \
  } while (0)

#define CHECK(cond, ...)                                                                                               \
  do {                                                                                                                 \
    if (!(cond)) {                                                                                                     \
      fprintf(stderr, "FAIL %s:%d: ", __FILE__, __LINE__);                                                             \
      fprintf(stderr, __VA_ARGS__);                                                                                    \
      fprintf(stderr, "\n");                                                                                           \
      g_failures++;                                                                                                    \
    }                                                                                                                  \
  } while (0)

static __attribute__((unused)) void *gpu_sym(void *lib, const char *name) {
  void *p = dlsym(lib, name);
  if (!p) {
    fprintf(stderr, "missing driver entry point %s\n", name);
    exit(1);
  }
  return p;
}

/* The driver library gpu_init opened (for entry points its table lacks: dlsym(g_driver, name)). */
static void *g_driver __attribute__((unused));

/* Skips (exit 77) without a driver/GPU; otherwise loads the test's driver
 * table and makes device 0's primary context current. */
static __attribute__((unused)) void gpu_init(tl_context *ctx) {
  if (tl_device_check(ctx) != TL_OK) {
    printf("SKIP: %s\n", tl_context_last_error(ctx));
    exit(GPU_SKIP);
  }
  void *lib = g_driver =
      dlopen(getenv("TL_CUDA_DRIVER") && *getenv("TL_CUDA_DRIVER") ? getenv("TL_CUDA_DRIVER") : "libcuda.so.1",
             RTLD_NOW | RTLD_LOCAL);
  if (!lib) {
    printf("SKIP: dlopen libcuda.so.1 failed\n");
    exit(GPU_SKIP);
  }
#define S(f, n) *(void **)(&G.f) = gpu_sym(lib, n)
  S(cuInit, "cuInit");
  S(cuDeviceGet, "cuDeviceGet");
  S(cuDeviceGetAttribute, "cuDeviceGetAttribute");
  S(cuDevicePrimaryCtxRetain, "cuDevicePrimaryCtxRetain");
  S(cuCtxSetCurrent, "cuCtxSetCurrent");
  S(cuCtxSynchronize, "cuCtxSynchronize");
  S(cuMemAlloc, "cuMemAlloc_v2");
  S(cuMemFree, "cuMemFree_v2");
  S(cuMemcpyHtoD, "cuMemcpyHtoD_v2");
  S(cuMemcpyDtoH, "cuMemcpyDtoH_v2");
  S(cuMemcpyDtoD, "cuMemcpyDtoD_v2");
  S(cuMemcpyDtoDAsync, "cuMemcpyDtoDAsync_v2");
  S(cuMemcpyDtoHAsync, "cuMemcpyDtoHAsync_v2");
  S(cuMemsetD8, "cuMemsetD8_v2");
  S(cuMemsetD32Async, "cuMemsetD32Async");
  S(cuStreamCreate, "cuStreamCreate");
  S(cuStreamDestroy, "cuStreamDestroy_v2");
  S(cuStreamSynchronize, "cuStreamSynchronize");
  S(cuStreamQuery, "cuStreamQuery");
  S(cuStreamWaitValue32, "cuStreamWaitValue32_v2");
  S(cuEventCreate, "cuEventCreate");
  S(cuEventDestroy, "cuEventDestroy_v2");
  S(cuEventRecord, "cuEventRecord");
  S(cuEventSynchronize, "cuEventSynchronize");
  S(cuEventElapsedTime, "cuEventElapsedTime");
  S(cuGetErrorName, "cuGetErrorName");
  S(cuModuleLoad, "cuModuleLoad");
  S(cuModuleUnload, "cuModuleUnload");
  S(cuModuleGetFunction, "cuModuleGetFunction");
  S(cuFuncGetAttribute, "cuFuncGetAttribute");
  S(cuFuncSetAttribute, "cuFuncSetAttribute");
  S(cuLaunchKernel, "cuLaunchKernel");
#undef S
  CU(G.cuInit(0));
  int dev;
  void *pctx;
  CU(G.cuDeviceGet(&dev, 0));
  CU(G.cuDevicePrimaryCtxRetain(&pctx, dev));
  CU(G.cuCtxSetCurrent(pctx));
}

/* ------------------------------------------------------------ dtypes */
typedef enum { DT_F32, DT_F16, DT_BF16 } dt_kind;
static __attribute__((unused)) const char *dt_name(dt_kind d) {
  return d == DT_F32 ? "float32" : d == DT_F16 ? "float16" : "bfloat16";
}
static __attribute__((unused)) size_t dt_size(dt_kind d) { return d == DT_F32 ? 4 : 2; }
static __attribute__((unused)) DLDataType dt_dl(dt_kind d) {
  DLDataType t;
  t.code = d == DT_BF16 ? kDLBfloat : kDLFloat;
  t.bits = (uint8_t)(dt_size(d) * 8);
  t.lanes = 1;
  return t;
}

/* double → binary float bits with mbits mantissa and ebits exponent bits,
 * round to nearest even (gradual underflow, overflow to inf). */
static __attribute__((unused)) uint32_t to_small_float(double x, int mbits, int ebits) {
  uint32_t sign = signbit(x) ? 1u << (mbits + ebits) : 0;
  uint32_t inf = ((1u << ebits) - 1) << mbits;
  if (isnan(x)) return inf | (1u << (mbits - 1));
  x = fabs(x);
  int bias = (1 << (ebits - 1)) - 1;
  if (isinf(x)) return sign | inf;
  if (x < ldexp(1.0, 1 - bias)) return sign | (uint32_t)nearbyint(ldexp(x, bias - 1 + mbits));
  int e;
  double m = frexp(x, &e);
  double q = nearbyint(ldexp(m, mbits + 1));
  int E = e - 1 + bias;
  if (q >= ldexp(1.0, mbits + 1)) {
    q = ldexp(1.0, mbits);
    E++;
  }
  if (E >= (1 << ebits) - 1) return sign | inf;
  return sign | ((uint32_t)E << mbits) | ((uint32_t)q - (1u << mbits));
}
static __attribute__((unused)) double from_small_float(uint32_t b, int mbits, int ebits) {
  int bias = (1 << (ebits - 1)) - 1;
  uint32_t m = b & ((1u << mbits) - 1), E = (b >> mbits) & ((1u << ebits) - 1);
  double s = (b >> (mbits + ebits)) & 1 ? -1.0 : 1.0;
  if (E == (1u << ebits) - 1) return m ? NAN : s * INFINITY;
  if (E == 0) return s * ldexp((double)m, 1 - bias - mbits);
  return s * ldexp((double)(m | (1u << mbits)), (int)E - bias - mbits);
}
/* value rounded to dtype d, as a double */
static __attribute__((unused)) double dt_round(dt_kind d, double x) {
  if (d == DT_F32) return (double)(float)x;
  if (d == DT_F16) return from_small_float(to_small_float(x, 10, 5), 10, 5);
  return from_small_float(to_small_float(x, 7, 8), 7, 8);
}
static __attribute__((unused)) void dt_store(dt_kind d, void *buf, size_t i, double x) {
  if (d == DT_F32) ((float *)buf)[i] = (float)x;
  else if (d == DT_F16) ((uint16_t *)buf)[i] = (uint16_t)to_small_float(x, 10, 5);
  else ((uint16_t *)buf)[i] = (uint16_t)to_small_float(x, 7, 8);
}
static __attribute__((unused)) double dt_load(dt_kind d, const void *buf, size_t i) {
  if (d == DT_F32) return ((const float *)buf)[i];
  if (d == DT_F16) return from_small_float(((const uint16_t *)buf)[i], 10, 5);
  return from_small_float(((const uint16_t *)buf)[i], 7, 8);
}
static __attribute__((unused)) void dt_tol(dt_kind d, double *atol, double *rtol) {
  *atol = *rtol = d == DT_F32 ? 1e-4 : d == DT_F16 ? 1e-2 : 2e-2;
}

/* ------------------------------------------------------------ random */
static uint64_t g_rng = 0x9E3779B97F4A7C15ull;
static __attribute__((unused)) void rng_seed(uint64_t s) { g_rng = s * 0x9E3779B97F4A7C15ull + 1; }
static __attribute__((unused)) double rng_uniform(void) { /* [-1, 1) */
  g_rng ^= g_rng << 13;
  g_rng ^= g_rng >> 7;
  g_rng ^= g_rng << 17;
  return (double)(g_rng >> 11) * 0x1p-52 - 1.0;
}

/* ------------------------------------------------------------ tensors */
typedef struct dev_tensor {
  DLTensor t;
  int64_t shape[4];
  unsigned long long ptr;
  size_t bytes;
} dev_tensor;

static __attribute__((unused)) size_t numel(const int64_t *shape, int ndim) {
  size_t n = 1;
  for (int d = 0; d < ndim; d++) n *= (size_t)shape[d];
  return n;
}
static __attribute__((unused)) void dev_alloc(dev_tensor *x, dt_kind d, int ndim, const int64_t *shape) {
  memset(x, 0, sizeof *x);
  memcpy(x->shape, shape, sizeof(int64_t) * (size_t)ndim);
  x->bytes = numel(shape, ndim) * dt_size(d);
  CU(G.cuMemAlloc(&x->ptr, x->bytes ? x->bytes : 16));
  x->t.data = (void *)(uintptr_t)x->ptr;
  x->t.device.device_type = kDLCUDA;
  x->t.device.device_id = 0;
  x->t.ndim = ndim;
  x->t.dtype = dt_dl(d);
  x->t.shape = x->shape;
}
static __attribute__((unused)) void dev_free(dev_tensor *x) {
  if (x->ptr) G.cuMemFree(x->ptr);
  x->ptr = 0;
}
/* host buffer of random values of dtype d, uploaded */
static __attribute__((unused)) void *dev_random(dev_tensor *x, dt_kind d, int ndim, const int64_t *shape) {
  dev_alloc(x, d, ndim, shape);
  size_t n = numel(shape, ndim);
  void *h = malloc(n * dt_size(d) + 1);
  for (size_t i = 0; i < n; i++) dt_store(d, h, i, rng_uniform());
  CU(G.cuMemcpyHtoD(x->ptr, h, n * dt_size(d)));
  return h;
}
static __attribute__((unused)) void *download(unsigned long long ptr, size_t bytes) {
  void *h = malloc(bytes + 1);
  CU(G.cuMemcpyDtoH(h, ptr, bytes));
  return h;
}
static __attribute__((unused)) double now_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}
static __attribute__((unused)) int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}
static __attribute__((unused)) double median(double *v, int n) {
  qsort(v, (size_t)n, sizeof *v, cmp_double);
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}
static __attribute__((unused)) const char *kernel_dir(void) {
  const char *d = getenv("TL_KERNEL_DIR");
  return d && *d ? d : "examples";
}
/* The folder of the kernel files under test/Interp/ops: $TL_OPS_DIR, default test/Interp/ops. */
static __attribute__((unused)) const char *ops_dir(void) {
  const char *d = getenv("TL_OPS_DIR");
  return d && *d ? d : "test/Interp/ops";
}
static __attribute__((unused)) int finish(const char *name) {
  if (g_failures) {
    printf("%s: FAIL (%d failures)\n", name, g_failures);
    return 1;
  }
  printf("%s: PASS\n", name);
  return 0;
}
/* The GPU half of a test that holds its inputs on the host, through the library alone: copies the n
 * (at most 8) host tensors in[] into device tensors dev[0..n) (tl_tensor_alloc + tl_tensor_copy; args[]
 * then name them, for a later tl_kernel_time), calls k on them (its out_idx output allocated by the
 * library into gpu_out[0], which must be on the GPU) and copies that output into a host tensor *host.
 * Each failing step is a CHECK failure naming `what` and the library's message; returns the status of
 * the first failing step (TL_OK when all ran). The caller frees dev[], gpu_out[0] and *host
 * (gpu_release). */
static __attribute__((unused)) tl_status gpu_call_host(tl_context *ctx, tl_kernel *k, const DLTensor *in, int n,
                                                       tl_arg *args, DLManagedTensor **dev, DLManagedTensor **gpu_out,
                                                       DLManagedTensor **host, const char *what) {
  DLDevice cuda = {kDLCUDA, 0}, cpu = {kDLCPU, 0};
  tl_status s = TL_OK;
  for (int i = 0; i < n && s == TL_OK; i++) {
    s = tl_tensor_alloc(ctx, cuda, in[i].ndim, in[i].shape, in[i].dtype, &dev[i]);
    if (s == TL_OK) s = tl_tensor_copy(ctx, &dev[i]->dl_tensor, &in[i]);
    CHECK(s == TL_OK, "%s: device input %d: %s", what, i, tl_context_last_error(ctx));
    args[i] = tl_arg_tensor(&dev[i]->dl_tensor);
  }
  if (s == TL_OK) {
    s = tl_kernel_call(ctx, k, args, (size_t)n, NULL, gpu_out);
    CHECK(s == TL_OK, "%s: GPU run: %s", what, tl_context_last_error(ctx));
  }
  if (s == TL_OK) {
    DLTensor *g = &gpu_out[0]->dl_tensor;
    CHECK(g->device.device_type == kDLCUDA, "%s: output not on the GPU", what);
    s = tl_tensor_alloc(ctx, cpu, g->ndim, g->shape, g->dtype, host);
    if (s == TL_OK) s = tl_tensor_copy(ctx, &(*host)->dl_tensor, g);
    CHECK(s == TL_OK, "%s: copy back: %s", what, tl_context_last_error(ctx));
  }
  return s;
}

/* Frees the n managed tensors of t[] that are set (by their deleters) and clears them. */
static __attribute__((unused)) void gpu_release(DLManagedTensor **t, int n) {
  for (int i = 0; i < n; i++)
    if (t[i]) t[i]->deleter(t[i]), t[i] = NULL;
}
#endif
