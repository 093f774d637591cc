/* examples/aot/main.c: a C program that runs examples/gemm.py exported ahead of time (docs/aot.md) -- no
 * tilelang-ptx library, no Python: the exported gemm.c and the CUDA driver.
 *
 *   tl-opt --emit=c -D M=256 -D N=256 -D K=256 examples/gemm.py -o /tmp/aot     # writes gemm.h, gemm.c
 *   cc -O2 -I/tmp/aot -I/usr/local/cuda/include /tmp/aot/gemm.c examples/aot/main.c -o /tmp/aot/gemm -lcuda
 *   /tmp/aot/gemm
 *
 * (or CMake: examples/aot/CMakeLists.txt).  It makes A and B (float16, uniform in [-1, 1)), lets the call
 * allocate C, checks every element of C against a float64 CPU GEMM of the same float16 inputs
 * (|C - ref| <= 1e-2 + 1e-2 |ref|, docs/testing.md), shows a refused call's text, and prints PASS or FAIL. */
#include <cuda.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gemm.h"

#define CK(call)                                                                                                       \
  do {                                                                                                                 \
    CUresult r_ = (call);                                                                                              \
    if (r_ != CUDA_SUCCESS) {                                                                                          \
      const char *n_ = "?";                                                                                            \
      cuGetErrorName(r_, &n_);                                                                                         \
      fprintf(stderr, "%s:%d: %s failed: %s\n", __FILE__, __LINE__, #call, n_);                                        \
      exit(1);                                                                                                         \
    }                                                                                                                  \
  } while (0)

/* float <-> IEEE binary16 bits, round to nearest even (normal and subnormal values; |x| < 65520) */
static uint16_t to_half(float f) {
  uint32_t u;
  memcpy(&u, &f, 4);
  uint32_t sign = (u >> 16) & 0x8000u, e = (u >> 23) & 0xff, m = u & 0x7fffffu;
  if (e < 103) return (uint16_t)sign;
  if (e < 113) { /* subnormal half */
    uint32_t sh = 126 - e, full = m | 0x800000u, q = full >> sh, rem = full & ((1u << sh) - 1), half = 1u << (sh - 1);
    q += rem > half || (rem == half && (q & 1));
    return (uint16_t)(sign | q);
  }
  uint32_t q = ((e - 112) << 10) | (m >> 13), rem = m & 0x1fffu;
  q += rem > 0x1000u || (rem == 0x1000u && (q & 1));
  return (uint16_t)(sign | q);
}
static float from_half(uint16_t h) {
  uint32_t sign = (uint32_t)(h & 0x8000u) << 16, e = (h >> 10) & 0x1f, m = h & 0x3ffu;
  float f = e ? ldexpf((float)(m | 0x400u), (int)e - 25) : ldexpf((float)m, -24);
  if (e == 31) f = m ? NAN : INFINITY;
  uint32_t u;
  memcpy(&u, &f, 4);
  u |= sign;
  memcpy(&f, &u, 4);
  return f;
}

static DLTensor device_tensor(CUdeviceptr p, int64_t *shape) {
  DLTensor t;
  memset(&t, 0, sizeof t);
  t.data = (void *)(uintptr_t)p;
  t.device.device_type = kDLCUDA;
  t.device.device_id = 0;
  t.ndim = 2;
  t.shape = shape;
  t.dtype.code = kDLFloat;
  t.dtype.bits = 16;
  t.dtype.lanes = 1;
  return t;
}

int main(void) {
  /* the sizes gemm.c was exported for (its header says them; the call checks them) */
  enum { M = 256, N = 256, K = 256 };
  CUdevice dev;
  CUcontext ctx;
  CK(cuInit(0));
  CK(cuDeviceGet(&dev, 0));
  CK(cuDevicePrimaryCtxRetain(&ctx, dev)); /* the exported kernel runs on the primary context */
  CK(cuCtxPushCurrent(ctx));

  uint16_t *a = malloc(sizeof *a * M * K), *b = malloc(sizeof *b * K * N), *c = malloc(sizeof *c * M * N);
  unsigned long long s = 42;
  for (int i = 0; i < M * K; i++)
    s = s * 6364136223846793005ull + 1442695040888963407ull, a[i] = to_half((float)((s >> 11) * 0x1p-53 * 2 - 1));
  for (int i = 0; i < K * N; i++)
    s = s * 6364136223846793005ull + 1442695040888963407ull, b[i] = to_half((float)((s >> 11) * 0x1p-53 * 2 - 1));
  CUdeviceptr da, db;
  CK(cuMemAlloc(&da, sizeof *a * M * K));
  CK(cuMemAlloc(&db, sizeof *b * K * N));
  CK(cuMemcpyHtoD(da, a, sizeof *a * M * K));
  CK(cuMemcpyHtoD(db, b, sizeof *b * K * N));
  int64_t sa[2] = {M, K}, sb[2] = {K, N}, sc[2];
  DLTensor A = device_tensor(da, sa), B = device_tensor(db, sb), C;
  memset(&C, 0, sizeof C);
  C.shape = sc; /* data NULL: the call allocates C (cuMemAlloc) and describes it here */

  /* a refused call first: B of the wrong dtype -> the text libtilelang gives */
  DLTensor bad = B;
  bad.dtype.bits = 32;
  if (gemm(&A, &bad, &C, NULL) != TLAOT_ERR_INVALID_ARGUMENT) return fprintf(stderr, "expected a refusal\n"), 1;
  printf("refused as expected: %s\n", gemm_last_error());

  if (gemm(&A, &B, &C, NULL) != TLAOT_OK) return fprintf(stderr, "gemm: %s\n", gemm_last_error()), 1;
  CK(cuCtxSynchronize());
  CK(cuMemcpyDtoH(c, (CUdeviceptr)(uintptr_t)C.data, sizeof *c * M * N));

  long bad_elems = 0;
  double worst = 0;
  for (int i = 0; i < M; i++)
    for (int j = 0; j < N; j++) {
      double ref = 0;
      for (int k = 0; k < K; k++) ref += (double)from_half(a[i * K + k]) * from_half(b[k * N + j]);
      double got = from_half(c[i * N + j]), err = fabs(got - ref);
      if (!(err <= 1e-2 + 1e-2 * fabs(ref))) bad_elems++;
      if (err > worst || err != err) worst = err;
    }
  printf(
      "C = A @ B, %dx%dx%d float16: C shape [%lld, %lld], largest error %.3g, %ld of %d elements out of "
      "tolerance\n%s\n",
      M, N, K, (long long)sc[0], (long long)sc[1], worst, bad_elems, M * N, bad_elems ? "FAIL" : "PASS");
  CK(cuMemFree((CUdeviceptr)(uintptr_t)C.data));
  CK(cuMemFree(da));
  CK(cuMemFree(db));
  gemm_unload();
  CK(cuDevicePrimaryCtxRelease(dev));
  free(a), free(b), free(c);
  return bad_elems ? 1 : 0;
}
