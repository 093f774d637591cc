/* A fake CUDA driver library (issue 16, benchmarks/launch): every entry point
 * lib/Runtime/driver.c resolves, each returning CUDA_SUCCESS at once with
 * plausible values (by default one device of compute capability 9.0, 132
 * SMs, 227 KB of opt-in shared memory, 1024 threads per block;
 * cuLaunchKernel and cuTensorMapEncodeTiled do nothing but count; for
 * test/unit/test_launch_memo.c the launch also records its grid, block,
 * shared memory and the first 8 bytes of its first tl_fake_cuda_record
 * parameters, and an encoded map holds its address and dims in words 0-2).
 * Loaded through TL_CUDA_DRIVER by bench_launch_cpu, which measures the host
 * cost of tl_kernel_call above a call of this library's cuLaunchKernel on a
 * machine without a GPU.
 *
 * Several devices (issue 18, test/unit/test_multi_device.c): the environment
 * at cuInit gives TL_FAKE_CUDA_DEVICES (1..8, default 1) and TL_FAKE_CUDA_CC,
 * a comma-separated compute capability per device as major*10+minor
 * ("90,80"; default 90); TL_FAKE_CUDA_SMS, every device's multiprocessor count
 * (default 132).  Each device has its own primary context, module,
 * function and one stream (tl_fake_cuda_stream(d)); the current context is
 * a per-thread stack (cuCtxPushCurrent/PopCurrent; empty: device 0's, as in
 * a process that made device 0 current).  Memory of device d lies at
 * 0x7f0000000000 + (d << 36) onward (cuMemAlloc in the current context
 * allocates there; cuPointerGetAttribute(DEVICE_ORDINAL) reads d back from
 * bits 36-39).  A module loads into the current context (counted per device
 * in tl_fake_cuda_loads); a launch whose function is not of the current
 * context's module, or whose stream is another device's, fails with
 * CUDA_ERROR_INVALID_HANDLE as the real driver's would (counted in
 * tl_fake_cuda_bad_launches); a good one counts in
 * tl_fake_cuda_launches_on[d] and records, per thread, its device
 * (tl_fake_cuda_last_device) and stream (tl_fake_cuda_last_stream).
 * Not a test double of the driver's semantics beyond that: nothing runs,
 * copies move no data.  Built as gpu-bin/libtl_fake_cuda.so
 * (cmake/GPU.cmake). */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define API __attribute__((visibility("default")))
typedef int CUresult;
enum { MAXDEV = 8, INVALID_HANDLE = 400, INVALID_DEVICE = 101 };

static int g_ndev = 1, g_cc[MAXDEV];
static int g_ctx[MAXDEV], g_mod[MAXDEV], g_fn[MAXDEV], g_stream[MAXDEV], g_evt; /* addresses serve as handles */
static unsigned long long g_next[MAXDEV];
API unsigned long long tl_fake_cuda_launches, tl_fake_cuda_encodes;
API unsigned long long tl_fake_cuda_loads[MAXDEV], tl_fake_cuda_launches_on[MAXDEV], tl_fake_cuda_bad_launches;
API int tl_fake_cuda_record;                 /* parameters to record per launch (0: none) */
/* per thread (dlsym gives the calling thread's copy): the last launch's
 * grid x, y, z, block x, shared memory bytes; its first parameters; its
 * device and stream */
API __thread unsigned tl_fake_cuda_last_launch[5];
API __thread unsigned long long tl_fake_cuda_last_params[32];
API __thread int tl_fake_cuda_last_device = -1;
API __thread void *tl_fake_cuda_last_stream;
static __thread void *tls_stack[16];
static __thread int tls_depth;
/* relaxed atomic counting without a locked instruction (a test may launch
 * from several threads; a lost count there does not matter) */
#define COUNT(x) __atomic_store_n(&(x), __atomic_load_n(&(x), __ATOMIC_RELAXED) + 1, __ATOMIC_RELAXED)
/* exact counting (the multi-device test compares the counts) */
#define ADD(x) __atomic_fetch_add(&(x), 1, __ATOMIC_RELAXED)

/* The stream handle of device d (a test passes it to tl_kernel_call). */
API void *tl_fake_cuda_stream(int d) { return d >= 0 && d < MAXDEV ? (void *)&g_stream[d] : NULL; }

static void *current(void) { return tls_depth ? tls_stack[tls_depth - 1] : (void *)&g_ctx[0]; }
static int ctx_device(const void *c) {
  for (int d = 0; d < g_ndev; d++)
    if (c == &g_ctx[d]) return d;
  return -1;
}

static int g_sms = 132;
API CUresult cuInit(unsigned f) {
  (void)f;
  const char *n = getenv("TL_FAKE_CUDA_DEVICES"), *cc = getenv("TL_FAKE_CUDA_CC"), *sms = getenv("TL_FAKE_CUDA_SMS");
  g_sms = sms && atoi(sms) > 0 ? atoi(sms) : 132;
  if (n && atoi(n) >= 1) g_ndev = atoi(n) > MAXDEV ? MAXDEV : atoi(n);
  for (int d = 0; d < MAXDEV; d++) {
    g_cc[d] = 90;
    g_next[d] = 0x7f0000000000ull + ((unsigned long long)d << 36);
  }
  for (int d = 0; cc && *cc && d < MAXDEV; d++) {
    char *end;
    long v = strtol(cc, &end, 10);
    if (end != cc) g_cc[d] = (int)v;
    cc = *end == ',' ? end + 1 : end;
  }
  return 0;
}
API CUresult cuDriverGetVersion(int *v) { *v = 13000; return 0; }
API CUresult cuDeviceGetCount(int *n) { *n = g_ndev; return 0; }
API CUresult cuDeviceGet(int *d, int o) {
  if (o < 0 || o >= g_ndev) return INVALID_DEVICE;
  *d = o;
  return 0;
}
API CUresult cuDeviceGetName(char *buf, int n, int d) {
  if (d < 0 || d >= g_ndev) return INVALID_DEVICE;
  snprintf(buf, (size_t)n, "Fake GPU %d (cc %d.%d)", d, g_cc[d] / 10, g_cc[d] % 10);
  return 0;
}
API CUresult cuDeviceGetAttribute(int *v, int a, int d) {
  if (d < 0 || d >= g_ndev) return INVALID_DEVICE;
  switch (a) {
    case 5: *v = 0x7fffffff; break;   /* max grid x */
    case 6: case 7: *v = 65535; break;
    case 16: *v = g_sms; break;       /* SMs */
    case 75: *v = g_cc[d] / 10; break; /* CC major */
    case 76: *v = g_cc[d] % 10; break;
    case 97: *v = 232448; break;      /* opt-in shared memory */
    default: *v = 0;
  }
  return 0;
}
API CUresult cuDevicePrimaryCtxRetain(void **c, int d) {
  if (d < 0 || d >= g_ndev) return INVALID_DEVICE;
  *c = &g_ctx[d];
  return 0;
}
API CUresult cuDevicePrimaryCtxRelease_v2(int d) { (void)d; return 0; }
API CUresult cuCtxPushCurrent_v2(void *c) {
  if (tls_depth < 16) tls_stack[tls_depth++] = c;
  return 0;
}
API CUresult cuCtxPopCurrent_v2(void **c) {
  void *top = current();
  if (tls_depth) tls_depth--;
  if (c) *c = top;
  return 0;
}
API CUresult cuCtxGetCurrent(void **c) { *c = current(); return 0; }
API CUresult cuCtxSynchronize(void) { return 0; }
API CUresult cuModuleLoadDataEx(void **m, const void *img, unsigned n, int *o, void **v) {
  (void)img, (void)n, (void)o, (void)v;
  int d = ctx_device(current());
  if (d < 0) return INVALID_HANDLE;
  ADD(tl_fake_cuda_loads[d]);
  *m = &g_mod[d];
  return 0;
}
API CUresult cuModuleUnload(void *m) { (void)m; return 0; }
API CUresult cuModuleGetFunction(void **f, void *m, const char *name) {
  (void)name;
  *f = &g_fn[(int *)m - g_mod];
  return 0;
}
API CUresult cuFuncGetAttribute(int *v, int a, void *f) { (void)f; *v = a == 0 ? 1024 : 0; return 0; }
API CUresult cuFuncSetAttribute(void *f, int a, int v) { (void)f, (void)a, (void)v; return 0; }
API CUresult cuLaunchKernel(void *f, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by, unsigned bz,
                            unsigned smem, void *s, void **params, void **extra) {
  (void)f, (void)gx, (void)gy, (void)gz, (void)bx, (void)by, (void)bz, (void)smem, (void)s, (void)extra;
  if (params) __asm__ volatile("" : : "r"(params[0]) : "memory"); /* as the driver reads them */
  int d = ctx_device(current());
  int sd = -1; /* the device of a stream of this library's */
  for (int i = 0; i < g_ndev; i++)
    if (s == &g_stream[i]) sd = i;
  if (d < 0 || f != &g_fn[d] || (sd >= 0 && sd != d)) {
    ADD(tl_fake_cuda_bad_launches);
    return INVALID_HANDLE;
  }
  COUNT(tl_fake_cuda_launches);
  if (g_ndev > 1) ADD(tl_fake_cuda_launches_on[d]);
  tl_fake_cuda_last_device = d;
  tl_fake_cuda_last_stream = s;
  if (__atomic_load_n(&tl_fake_cuda_record, __ATOMIC_RELAXED) > 0) {
    unsigned l[5] = {gx, gy, gz, bx, smem};
    memcpy(tl_fake_cuda_last_launch, l, sizeof l);
    for (int i = 0; i < tl_fake_cuda_record && i < 32; i++) memcpy(&tl_fake_cuda_last_params[i], params[i], 8);
  }
  return 0;
}
API CUresult cuStreamGetCtx(void *s, void **c) {
  *c = &g_ctx[0]; /* any other handle: device 0's */
  for (int i = 0; i < g_ndev; i++)
    if (s == &g_stream[i]) *c = &g_ctx[i];
  return 0;
}
API CUresult cuMemAlloc_v2(unsigned long long *p, size_t n) {
  int d = ctx_device(current());
  if (d < 0) return INVALID_HANDLE;
  *p = __atomic_fetch_add(&g_next[d], (n + 255) & ~255ull, __ATOMIC_RELAXED);
  return 0;
}
API CUresult cuMemFree_v2(unsigned long long p) { (void)p; return 0; }
API CUresult cuMemsetD8Async(unsigned long long p, unsigned char v, size_t n, void *s) { (void)p, (void)v, (void)n, (void)s; return 0; }
API CUresult cuMemcpyHtoD_v2(unsigned long long d, const void *h, size_t n) { (void)d, (void)h, (void)n; return 0; }
API CUresult cuMemcpyDtoH_v2(void *h, unsigned long long d, size_t n) { (void)d; memset(h, 0, n); return 0; }
API CUresult cuMemcpyDtoD_v2(unsigned long long a, unsigned long long b, size_t n) { (void)a, (void)b, (void)n; return 0; }
API CUresult cuPointerGetAttribute(void *v, int a, unsigned long long p) {
  (void)a;
  int d = (int)((p >> 36) & 0xf);
  *(int *)v = d < g_ndev ? d : 0;
  return 0;
}
API CUresult cuGetErrorName(CUresult r, const char **s) {
  *s = r == INVALID_HANDLE ? "CUDA_ERROR_INVALID_HANDLE" : r == INVALID_DEVICE ? "CUDA_ERROR_INVALID_DEVICE"
       : r ? "CUDA_ERROR_FAKE" : "CUDA_SUCCESS";
  return 0;
}
API CUresult cuGetErrorString(CUresult r, const char **s) { *s = r ? "fake error" : "no error"; return 0; }
API CUresult cuEventCreate(void **e, unsigned f) { (void)f; *e = &g_evt; return 0; }
API CUresult cuEventRecord(void *e, void *s) { (void)e, (void)s; return 0; }
API CUresult cuEventSynchronize(void *e) { (void)e; return 0; }
API CUresult cuEventElapsedTime(float *ms, void *a, void *b) { (void)a, (void)b; *ms = 0; return 0; }
API CUresult cuEventDestroy_v2(void *e) { (void)e; return 0; }
API CUresult cuTensorMapEncodeTiled(void *map, int dt, uint32_t rank, void *addr, const uint64_t *dims,
                                    const uint64_t *strides, const uint32_t *box, const uint32_t *es, int il,
                                    int sw, int l2, int oob) {
  (void)dt, (void)rank, (void)addr, (void)dims, (void)strides, (void)box, (void)es, (void)il, (void)sw, (void)l2,
      (void)oob;
  memset(map, 0, 128);
  unsigned long long w[3] = {(unsigned long long)(uintptr_t)addr, dims[0], rank > 1 ? dims[1] : 0};
  memcpy(map, w, sizeof w);
  COUNT(tl_fake_cuda_encodes);
  return 0;
}
