/* A fake CUDA driver library (issue 16, benchmarks/launch): every entry point
 * lib/Runtime/driver.c resolves, each returning CUDA_SUCCESS at once with
 * plausible values (one device of compute capability 9.0, 132 SMs, 227 KB of
 * opt-in shared memory, 1024 threads per block; every pointer is memory of
 * device 0; cuLaunchKernel and cuTensorMapEncodeTiled do nothing but count;
 * for test/unit/test_launch_memo.c the launch also records its grid, block,
 * shared memory and the first 8 bytes of its first tl_fake_cuda_record
 * parameters, and an encoded map holds its address and dims in words 0-2).
 * Loaded through TL_CUDA_DRIVER by bench_launch_cpu, which measures the host
 * cost of tl_kernel_call above a call of this library's cuLaunchKernel on a
 * machine without a GPU.  Not a test double of the driver's semantics:
 * nothing runs.  Built as gpu-bin/libtl_fake_cuda.so (cmake/GPU.cmake). */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#define API __attribute__((visibility("default")))
typedef int CUresult;

static int g_ctx, g_mod, g_fn, g_evt; /* addresses serve as handles */
API unsigned long long tl_fake_cuda_launches, tl_fake_cuda_encodes;
API int tl_fake_cuda_record;                 /* parameters to record per launch (0: none) */
/* per thread (dlsym gives the calling thread's copy): the last launch's
 * grid x, y, z, block x, shared memory bytes; its first parameters */
API __thread unsigned tl_fake_cuda_last_launch[5];
API __thread unsigned long long tl_fake_cuda_last_params[32];
/* relaxed atomic counting without a locked instruction (a test may launch
 * from several threads; a lost count there does not matter) */
#define COUNT(x) __atomic_store_n(&(x), __atomic_load_n(&(x), __ATOMIC_RELAXED) + 1, __ATOMIC_RELAXED)

API CUresult cuInit(unsigned f) { (void)f; return 0; }
API CUresult cuDriverGetVersion(int *v) { *v = 13000; return 0; }
API CUresult cuDeviceGetCount(int *n) { *n = 1; return 0; }
API CUresult cuDeviceGet(int *d, int o) { *d = o; return 0; }
API CUresult cuDeviceGetAttribute(int *v, int a, int d) {
  (void)d;
  switch (a) {
    case 5: *v = 0x7fffffff; break;   /* max grid x */
    case 6: case 7: *v = 65535; break;
    case 16: *v = 132; break;         /* SMs */
    case 75: *v = 9; break;           /* CC major */
    case 76: *v = 0; break;
    case 97: *v = 232448; break;      /* opt-in shared memory */
    default: *v = 0;
  }
  return 0;
}
API CUresult cuDevicePrimaryCtxRetain(void **c, int d) { (void)d; *c = &g_ctx; return 0; }
API CUresult cuDevicePrimaryCtxRelease_v2(int d) { (void)d; return 0; }
API CUresult cuCtxPushCurrent_v2(void *c) { (void)c; return 0; }
API CUresult cuCtxPopCurrent_v2(void **c) { if (c) *c = &g_ctx; return 0; }
API CUresult cuCtxGetCurrent(void **c) { *c = &g_ctx; return 0; }
API CUresult cuCtxSynchronize(void) { return 0; }
API CUresult cuModuleLoadDataEx(void **m, const void *img, unsigned n, int *o, void **v) {
  (void)img, (void)n, (void)o, (void)v;
  *m = &g_mod;
  return 0;
}
API CUresult cuModuleUnload(void *m) { (void)m; return 0; }
API CUresult cuModuleGetFunction(void **f, void *m, const char *name) { (void)m, (void)name; *f = &g_fn; return 0; }
API CUresult cuFuncGetAttribute(int *v, int a, void *f) { (void)f; *v = a == 0 ? 1024 : 0; return 0; }
API CUresult cuFuncSetAttribute(void *f, int a, int v) { (void)f, (void)a, (void)v; return 0; }
API CUresult cuLaunchKernel(void *f, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by, unsigned bz,
                            unsigned smem, void *s, void **params, void **extra) {
  (void)f, (void)gx, (void)gy, (void)gz, (void)bx, (void)by, (void)bz, (void)smem, (void)s, (void)extra;
  if (params) __asm__ volatile("" : : "r"(params[0]) : "memory"); /* as the driver reads them */
  COUNT(tl_fake_cuda_launches);
  if (__atomic_load_n(&tl_fake_cuda_record, __ATOMIC_RELAXED) > 0) {
    unsigned l[5] = {gx, gy, gz, bx, smem};
    memcpy(tl_fake_cuda_last_launch, l, sizeof l);
    for (int i = 0; i < tl_fake_cuda_record && i < 32; i++) memcpy(&tl_fake_cuda_last_params[i], params[i], 8);
  }
  return 0;
}
API CUresult cuStreamGetCtx(void *s, void **c) { (void)s; *c = &g_ctx; return 0; }
static unsigned long long g_next = 0x7f0000000000ull;
API CUresult cuMemAlloc_v2(unsigned long long *p, size_t n) { *p = g_next; g_next += (n + 255) & ~255ull; return 0; }
API CUresult cuMemFree_v2(unsigned long long p) { (void)p; return 0; }
API CUresult cuMemsetD8Async(unsigned long long p, unsigned char v, size_t n, void *s) { (void)p, (void)v, (void)n, (void)s; return 0; }
API CUresult cuMemcpyHtoD_v2(unsigned long long d, const void *h, size_t n) { (void)d, (void)h, (void)n; return 0; }
API CUresult cuMemcpyDtoH_v2(void *h, unsigned long long d, size_t n) { (void)d; memset(h, 0, n); return 0; }
API CUresult cuMemcpyDtoD_v2(unsigned long long a, unsigned long long b, size_t n) { (void)a, (void)b, (void)n; return 0; }
API CUresult cuPointerGetAttribute(void *v, int a, unsigned long long p) { (void)a, (void)p; *(int *)v = 0; return 0; }
API CUresult cuGetErrorName(CUresult r, const char **s) { *s = r ? "CUDA_ERROR_FAKE" : "CUDA_SUCCESS"; return 0; }
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
