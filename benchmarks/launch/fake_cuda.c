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
 * (cmake/GPU.cmake).
 *
 * Faults (issue 33, test/faults/fault_matrix.c): tl_fake_cuda_fault(entry,
 * nth, result) -- or TL_FAKE_CUDA_FAULT=entry:nth:result in the environment,
 * read by cuInit (result a number or a name such as
 * CUDA_ERROR_OUT_OF_MEMORY) -- makes the nth call of that entry point from
 * then on return result instead of doing anything (once; nth 0 disarms).
 * tl_fake_cuda_calls(entry) counts each entry point's calls.  A sticky
 * result (CUDA_ERROR_ILLEGAL_ADDRESS and the other errors after which the
 * real driver's context is unusable) stays: every later call that needs the
 * context returns it too, until tl_fake_cuda_clear_sticky() (the real
 * driver: a new process).  Leak accounting: tl_fake_cuda_live(what) gives
 * the device allocations, loaded modules, primary-context retains and
 * events not freed, unloaded, released or destroyed yet ("mem", "module",
 * "retain", "event"), and tl_fake_cuda_ctx_depth() the calling thread's
 * pushed contexts. */
#include <pthread.h>
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
API int tl_fake_cuda_record; /* parameters to record per launch (0: none) */
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

/* ------------------------------------------------------- fault injection */
static const struct {
  int code;
  const char *name;
} k_errors[] = {{0, "CUDA_SUCCESS"},
                {1, "CUDA_ERROR_INVALID_VALUE"},
                {2, "CUDA_ERROR_OUT_OF_MEMORY"},
                {3, "CUDA_ERROR_NOT_INITIALIZED"},
                {4, "CUDA_ERROR_DEINITIALIZED"},
                {100, "CUDA_ERROR_NO_DEVICE"},
                {101, "CUDA_ERROR_INVALID_DEVICE"},
                {200, "CUDA_ERROR_INVALID_IMAGE"},
                {201, "CUDA_ERROR_INVALID_CONTEXT"},
                {209, "CUDA_ERROR_NO_BINARY_FOR_GPU"},
                {218, "CUDA_ERROR_INVALID_PTX"},
                {400, "CUDA_ERROR_INVALID_HANDLE"},
                {500, "CUDA_ERROR_NOT_FOUND"},
                {700, "CUDA_ERROR_ILLEGAL_ADDRESS"},
                {701, "CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES"},
                {702, "CUDA_ERROR_LAUNCH_TIMEOUT"},
                {715, "CUDA_ERROR_ILLEGAL_INSTRUCTION"},
                {716, "CUDA_ERROR_MISALIGNED_ADDRESS"},
                {719, "CUDA_ERROR_LAUNCH_FAILED"},
                {999, "CUDA_ERROR_UNKNOWN"}};
/* the errors after which a real context is unusable */
static int is_sticky(int r) { return r == 700 || r == 702 || (r >= 714 && r <= 719) || r == 999; }

static pthread_mutex_t g_fault_mu = PTHREAD_MUTEX_INITIALIZER;
static int g_armed, g_sticky; /* read without the lock first */
static char g_fault_entry[64];
static long g_fault_nth, g_fault_seen;
static int g_fault_result;
API unsigned long long tl_fake_cuda_faults_fired;
enum { NCOUNT = 64 };
static struct {
  const char *entry;
  unsigned long long n;
} g_calls[NCOUNT];
static long long g_live_mem, g_live_mod, g_live_retain, g_live_event;

static int error_code(const char *s) {
  char *end;
  long v = strtol(s, &end, 10);
  if (end != s && !*end) return (int)v;
  for (size_t i = 0; i < sizeof k_errors / sizeof *k_errors; i++)
    if (!strcmp(s, k_errors[i].name)) return k_errors[i].code;
  return 999;
}

/* Arms a fault: the nth call of entry (counted from now) returns result. */
API void tl_fake_cuda_fault(const char *entry, long nth, int result) {
  pthread_mutex_lock(&g_fault_mu);
  snprintf(g_fault_entry, sizeof g_fault_entry, "%s", entry ? entry : "");
  g_fault_nth = entry ? nth : 0;
  g_fault_seen = 0;
  g_fault_result = result;
  __atomic_store_n(&g_armed, g_fault_nth > 0, __ATOMIC_RELEASE);
  pthread_mutex_unlock(&g_fault_mu);
}
API void tl_fake_cuda_clear_sticky(void) { __atomic_store_n(&g_sticky, 0, __ATOMIC_RELEASE); }
API int tl_fake_cuda_error_code(const char *name) { return error_code(name); }

static void fault_env(void) {
  const char *f = getenv("TL_FAKE_CUDA_FAULT");
  char e[64];
  long nth;
  char res[64];
  if (f && sscanf(f, "%63[^:]:%ld:%63s", e, &nth, res) == 3) tl_fake_cuda_fault(e, nth, error_code(res));
}

API unsigned long long tl_fake_cuda_calls(const char *entry) {
  unsigned long long n = 0;
  pthread_mutex_lock(&g_fault_mu);
  for (int i = 0; i < NCOUNT && g_calls[i].entry; i++)
    if (!strcmp(g_calls[i].entry, entry)) n = g_calls[i].n;
  pthread_mutex_unlock(&g_fault_mu);
  return n;
}
API void tl_fake_cuda_reset_calls(void) {
  pthread_mutex_lock(&g_fault_mu);
  for (int i = 0; i < NCOUNT; i++) g_calls[i].n = 0;
  pthread_mutex_unlock(&g_fault_mu);
}
API long long tl_fake_cuda_live(const char *what) {
  return !strcmp(what, "mem")      ? __atomic_load_n(&g_live_mem, __ATOMIC_RELAXED)
         : !strcmp(what, "module") ? __atomic_load_n(&g_live_mod, __ATOMIC_RELAXED)
         : !strcmp(what, "retain") ? __atomic_load_n(&g_live_retain, __ATOMIC_RELAXED)
         : !strcmp(what, "event")  ? __atomic_load_n(&g_live_event, __ATOMIC_RELAXED)
                                   : -1;
}
API int tl_fake_cuda_ctx_depth(void) { return tls_depth; }
/* counting is on while the matrix asks for it (the launch benchmark keeps
 * its call free of locks) */
API int tl_fake_cuda_counting;

/* The result a call of entry gives when a fault or a sticky error decides
 * it (0: run the entry point).  needs_ctx: the entry point fails while the
 * context has a sticky error. */
static int fault(const char *entry, int needs_ctx) {
  int sticky = __atomic_load_n(&g_sticky, __ATOMIC_ACQUIRE);
  if (sticky && needs_ctx) return sticky;
  if (!__atomic_load_n(&g_armed, __ATOMIC_ACQUIRE) && !__atomic_load_n(&tl_fake_cuda_counting, __ATOMIC_RELAXED))
    return 0;
  int r = 0;
  pthread_mutex_lock(&g_fault_mu);
  for (int i = 0; i < NCOUNT; i++)
    if (!g_calls[i].entry || !strcmp(g_calls[i].entry, entry)) {
      g_calls[i].entry = entry;
      g_calls[i].n++;
      break;
    }
  if (g_armed && !strcmp(g_fault_entry, entry) && ++g_fault_seen == g_fault_nth) {
    r = g_fault_result;
    g_armed = 0;
    tl_fake_cuda_faults_fired++;
    if (is_sticky(r)) __atomic_store_n(&g_sticky, r, __ATOMIC_RELEASE);
  }
  pthread_mutex_unlock(&g_fault_mu);
  return r;
}
/* the first statement of an entry point */
#define FAULT(entry, needs_ctx)                                                                                        \
  do {                                                                                                                 \
    int fault_r_ = fault(entry, needs_ctx);                                                                            \
    if (fault_r_) return fault_r_;                                                                                     \
  } while (0)
#define LIVE(x, d) __atomic_fetch_add(&(x), (d), __ATOMIC_RELAXED)

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
  fault_env();
  FAULT("cuInit", 0);
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
API CUresult cuDriverGetVersion(int *v) {
  FAULT("cuDriverGetVersion", 0);
  *v = 13000;
  return 0;
}
API CUresult cuDeviceGetCount(int *n) {
  FAULT("cuDeviceGetCount", 0);
  *n = g_ndev;
  return 0;
}
API CUresult cuDeviceGet(int *d, int o) {
  FAULT("cuDeviceGet", 0);
  if (o < 0 || o >= g_ndev) return INVALID_DEVICE;
  *d = o;
  return 0;
}
API CUresult cuDeviceGetName(char *buf, int n, int d) {
  FAULT("cuDeviceGetName", 0);
  if (d < 0 || d >= g_ndev) return INVALID_DEVICE;
  snprintf(buf, (size_t)n, "Fake GPU %d (cc %d.%d)", d, g_cc[d] / 10, g_cc[d] % 10);
  return 0;
}
API CUresult cuDeviceGetAttribute(int *v, int a, int d) {
  FAULT("cuDeviceGetAttribute", 0);
  if (d < 0 || d >= g_ndev) return INVALID_DEVICE;
  switch (a) {
  case 5: *v = 0x7fffffff; break; /* max grid x */
  case 6:
  case 7: *v = 65535; break;
  case 16: *v = g_sms; break;        /* SMs */
  case 75: *v = g_cc[d] / 10; break; /* CC major */
  case 76: *v = g_cc[d] % 10; break;
  case 97: *v = 232448; break; /* opt-in shared memory */
  default: *v = 0;
  }
  return 0;
}
API CUresult cuDevicePrimaryCtxRetain(void **c, int d) {
  FAULT("cuDevicePrimaryCtxRetain", 0);
  if (d < 0 || d >= g_ndev) return INVALID_DEVICE;
  *c = &g_ctx[d];
  LIVE(g_live_retain, 1);
  return 0;
}
API CUresult cuDevicePrimaryCtxRelease_v2(int d) {
  (void)d;
  FAULT("cuDevicePrimaryCtxRelease_v2", 0);
  LIVE(g_live_retain, -1);
  return 0;
}
API CUresult cuCtxPushCurrent_v2(void *c) {
  FAULT("cuCtxPushCurrent_v2", 0);
  if (tls_depth < 16) tls_stack[tls_depth++] = c;
  return 0;
}
API CUresult cuCtxPopCurrent_v2(void **c) {
  FAULT("cuCtxPopCurrent_v2", 0);
  void *top = current();
  if (tls_depth) tls_depth--;
  if (c) *c = top;
  return 0;
}
API CUresult cuCtxGetCurrent(void **c) {
  FAULT("cuCtxGetCurrent", 0);
  *c = current();
  return 0;
}
API CUresult cuCtxSynchronize(void) {
  FAULT("cuCtxSynchronize", 1);
  return 0;
}
API CUresult cuModuleLoadDataEx(void **m, const void *img, unsigned n, int *o, void **v) {
  (void)img, (void)n, (void)o, (void)v;
  FAULT("cuModuleLoadDataEx", 1);
  int d = ctx_device(current());
  if (d < 0) return INVALID_HANDLE;
  ADD(tl_fake_cuda_loads[d]);
  *m = &g_mod[d];
  LIVE(g_live_mod, 1);
  return 0;
}
API CUresult cuModuleUnload(void *m) {
  (void)m;
  FAULT("cuModuleUnload", 0);
  LIVE(g_live_mod, -1);
  return 0;
}
API CUresult cuModuleGetFunction(void **f, void *m, const char *name) {
  (void)name;
  FAULT("cuModuleGetFunction", 1);
  *f = &g_fn[(int *)m - g_mod];
  return 0;
}
API CUresult cuFuncGetAttribute(int *v, int a, void *f) {
  (void)f;
  FAULT("cuFuncGetAttribute", 1);
  *v = a == 0 ? 1024 : 0;
  return 0;
}
API CUresult cuFuncSetAttribute(void *f, int a, int v) {
  (void)f, (void)a, (void)v;
  FAULT("cuFuncSetAttribute", 1);
  return 0;
}
API CUresult cuLaunchKernel(void *f, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by, unsigned bz,
                            unsigned smem, void *s, void **params, void **extra) {
  (void)f, (void)gx, (void)gy, (void)gz, (void)bx, (void)by, (void)bz, (void)smem, (void)s, (void)extra;
  FAULT("cuLaunchKernel", 1);
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
  FAULT("cuStreamGetCtx", 0);
  *c = &g_ctx[0]; /* any other handle: device 0's */
  for (int i = 0; i < g_ndev; i++)
    if (s == &g_stream[i]) *c = &g_ctx[i];
  return 0;
}
API CUresult cuMemAlloc_v2(unsigned long long *p, size_t n) {
  FAULT("cuMemAlloc_v2", 1);
  int d = ctx_device(current());
  if (d < 0) return INVALID_HANDLE;
  *p = __atomic_fetch_add(&g_next[d], (n + 255) & ~255ull, __ATOMIC_RELAXED);
  LIVE(g_live_mem, 1);
  return 0;
}
API CUresult cuMemFree_v2(unsigned long long p) {
  FAULT("cuMemFree_v2", 0);
  if (p) LIVE(g_live_mem, -1);
  return 0;
}
API CUresult cuMemsetD8Async(unsigned long long p, unsigned char v, size_t n, void *s) {
  (void)p, (void)v, (void)n, (void)s;
  FAULT("cuMemsetD8Async", 1);
  return 0;
}
API CUresult cuMemcpyHtoD_v2(unsigned long long d, const void *h, size_t n) {
  (void)d, (void)h, (void)n;
  FAULT("cuMemcpyHtoD_v2", 1);
  return 0;
}
API CUresult cuMemcpyDtoH_v2(void *h, unsigned long long d, size_t n) {
  (void)d;
  FAULT("cuMemcpyDtoH_v2", 1);
  memset(h, 0, n);
  return 0;
}
API CUresult cuMemcpyDtoD_v2(unsigned long long a, unsigned long long b, size_t n) {
  (void)a, (void)b, (void)n;
  FAULT("cuMemcpyDtoD_v2", 1);
  return 0;
}
API CUresult cuPointerGetAttribute(void *v, int a, unsigned long long p) {
  (void)a;
  FAULT("cuPointerGetAttribute", 0);
  int d = (int)((p >> 36) & 0xf);
  *(int *)v = d < g_ndev ? d : 0;
  return 0;
}
API CUresult cuGetErrorName(CUresult r, const char **s) {
  *s = "CUDA_ERROR_FAKE";
  for (size_t i = 0; i < sizeof k_errors / sizeof *k_errors; i++)
    if (k_errors[i].code == r) *s = k_errors[i].name;
  return 0;
}
API CUresult cuGetErrorString(CUresult r, const char **s) {
  *s = r ? "fake error" : "no error";
  return 0;
}
API CUresult cuEventCreate(void **e, unsigned f) {
  (void)f;
  FAULT("cuEventCreate", 1);
  *e = &g_evt;
  LIVE(g_live_event, 1);
  return 0;
}
API CUresult cuEventRecord(void *e, void *s) {
  (void)e, (void)s;
  FAULT("cuEventRecord", 1);
  return 0;
}
API CUresult cuEventSynchronize(void *e) {
  (void)e;
  FAULT("cuEventSynchronize", 1);
  return 0;
}
API CUresult cuEventElapsedTime(float *ms, void *a, void *b) {
  (void)a, (void)b;
  FAULT("cuEventElapsedTime", 1);
  *ms = 0;
  return 0;
}
API CUresult cuEventDestroy_v2(void *e) {
  (void)e;
  FAULT("cuEventDestroy_v2", 0);
  LIVE(g_live_event, -1);
  return 0;
}
API CUresult cuTensorMapEncodeTiled(void *map, int dt, uint32_t rank, void *addr, const uint64_t *dims,
                                    const uint64_t *strides, const uint32_t *box, const uint32_t *es, int il, int sw,
                                    int l2, int oob) {
  (void)dt, (void)rank, (void)addr, (void)dims, (void)strides, (void)box, (void)es, (void)il, (void)sw, (void)l2,
      (void)oob;
  FAULT("cuTensorMapEncodeTiled", 0);
  memset(map, 0, 128);
  unsigned long long w[3] = {(unsigned long long)(uintptr_t)addr, dims[0], rank > 1 ? dims[1] : 0};
  memcpy(map, w, sizeof w);
  COUNT(tl_fake_cuda_encodes);
  return 0;
}
