/* GPU test (issue 15, acceptance 2): B = A + 1 over uint8 tensors of more
 * than 2^31 elements, every element checked.  test/GPU/kernels/add_one_u8.py:
 * add_one_1d over 2^33 + 77 elements (indices computed in int64 by the
 * compiler, lib/IR/index64.c; the +77 exercises the bounds guard of the last
 * block, beyond 2^33) and add_one_2d over (65536, 131072) = 2^33 elements
 * (each dim fits int32, the flat offset is 64-bit in codegen); and
 * add_f16_dyn64, a float16 C = A + B over 2^31 + 77 elements whose size is a
 * T.dynamic("n", "int64") dim.  For the uint8 cases A is a
 * pattern that depends on the high bits of the index (so that a wrapped
 * 32-bit index reads or writes the wrong element), uploaded; the output is
 * poisoned (TL_COMPILE_POISON_OUTPUTS) so unwritten elements fail; the
 * comparison runs on the host over the downloaded B against the formula.
 * Needs about 17 GiB of device memory and 17 GiB of host memory.  Kernel
 * files from $TL_GPU_KERNELS (default test/GPU/kernels). */
#include "gemm_util.h"
#include "gpu_util.h"

static tl_context *ctx;

/* The input pattern: mixes bits 0-7, 24-31 and 32-39 of the index. */
static uint8_t pattern(uint64_t i) { return (uint8_t)(i * 7u + (i >> 24) * 13u + (i >> 32) * 101u); }

static void run_case(const char *kernel, const tl_define *defs, size_t ndefs, int ndim, const int64_t *shape) {
  char path[1024];
  snprintf(path, sizeof path, "%s/add_one_u8.py", gemm_kernels_dir());
  tl_compile_options o = {0};
  o.flags = TL_COMPILE_POISON_OUTPUTS;
  o.kernel = kernel;
  tl_kernel *k = NULL;
  if (tl_kernel_compile_file(ctx, path, defs, ndefs, &o, &k) != TL_OK) {
    fprintf(stderr, "FAIL compiling %s (%s):\n%s\n", path, kernel, tl_context_last_error(ctx));
    g_failures++;
    return;
  }
  size_t n = 1;
  for (int d = 0; d < ndim; d++) n *= (size_t)shape[d];
  uint8_t *h = malloc(n);
  if (!h) {
    fprintf(stderr, "FAIL %s: cannot allocate %zu host bytes\n", kernel, n);
    g_failures++;
    tl_kernel_destroy(k);
    return;
  }
  for (size_t i = 0; i < n; i++) h[i] = pattern(i);
  dev_tensor A;
  memset(&A, 0, sizeof A);
  memcpy(A.shape, shape, sizeof(int64_t) * (size_t)ndim);
  CU(G.cuMemAlloc(&A.ptr, n));
  CU(G.cuMemcpyHtoD(A.ptr, h, n));
  A.t.data = (void *)(uintptr_t)A.ptr;
  A.t.device.device_type = kDLCUDA;
  A.t.ndim = ndim;
  A.t.dtype.code = kDLUInt;
  A.t.dtype.bits = 8;
  A.t.dtype.lanes = 1;
  A.t.shape = A.shape;
  tl_arg args[1] = {tl_arg_tensor(&A.t)};
  DLManagedTensor *out[1] = {NULL};
  double t0 = now_ms();
  if (tl_kernel_call(ctx, k, args, 1, NULL, out) != TL_OK) {
    fprintf(stderr, "FAIL %s call: %s\n", kernel, tl_context_last_error(ctx));
    g_failures++;
  } else {
    CU(G.cuCtxSynchronize());
    double ms = now_ms() - t0;
    CU(G.cuMemcpyDtoH(h, (unsigned long long)(uintptr_t)out[0]->dl_tensor.data, n));
    size_t bad = 0, first = 0, bad_high = 0;
    for (size_t i = 0; i < n; i++)
      if (h[i] != (uint8_t)(pattern(i) + 1)) {
        if (!bad) first = i;
        bad++;
        bad_high += i >= ((size_t)1 << 31);
      }
    if (bad)
      CHECK(0, "%s: %zu of %zu elements wrong (%zu at index >= 2^31); first at %zu: got %u, expected %u", kernel, bad,
            n, bad_high, first, h[first], (uint8_t)(pattern(first) + 1));
    else printf("  ok   %-12s %zu elements (%.1f ms incl. launch)\n", kernel, n, ms);
    out[0]->deleter(out[0]);
  }
  G.cuMemFree(A.ptr);
  free(h);
  tl_kernel_destroy(k);
}

/* add_f16_dyn64 over n = 2^31 + 77 float16 elements, n an int64 dynamic dim
 * (an int64 kernel parameter): A[i] = i mod 1024, B[i] = bits 21-29 and 31 of
 * i, both exact small integers, so C[i] = A[i] + B[i] <= 2046 is exact in
 * float16 and depends on the index's high bits. */
static uint16_t f16_int(unsigned v) { return (uint16_t)to_small_float((double)v, 10, 5); }
static unsigned pat_a(uint64_t i) { return (unsigned)(i & 1023u); }
static unsigned pat_b(uint64_t i) { return (unsigned)(((i >> 21) & 511u) + ((i >> 31) & 1u) * 512u); }

static void run_dynamic_f16(void) {
  char path[1024];
  snprintf(path, sizeof path, "%s/add_one_u8.py", gemm_kernels_dir());
  tl_compile_options o = {0};
  o.flags = TL_COMPILE_POISON_OUTPUTS;
  o.kernel = "add_f16_dyn64";
  tl_kernel *k = NULL;
  if (tl_kernel_compile_file(ctx, path, NULL, 0, &o, &k) != TL_OK) {
    fprintf(stderr, "FAIL compiling %s (add_f16_dyn64):\n%s\n", path, tl_context_last_error(ctx));
    g_failures++;
    return;
  }
  int64_t n = (INT64_C(1) << 31) + 77;
  uint16_t table[2048];
  for (unsigned v = 0; v < 2048; v++) table[v] = f16_int(v);
  uint16_t *h = malloc((size_t)n * 2);
  dev_tensor T[2];
  for (int t = 0; t < 2; t++) {
    for (int64_t i = 0; i < n; i++) h[i] = table[t ? pat_b((uint64_t)i) : pat_a((uint64_t)i)];
    dev_alloc(&T[t], DT_F16, 1, &n);
    CU(G.cuMemcpyHtoD(T[t].ptr, h, (size_t)n * 2));
  }
  tl_arg args[2] = {tl_arg_tensor(&T[0].t), tl_arg_tensor(&T[1].t)};
  DLManagedTensor *out[1] = {NULL};
  if (tl_kernel_call(ctx, k, args, 2, NULL, out) != TL_OK) {
    fprintf(stderr, "FAIL add_f16_dyn64 call: %s\n", tl_context_last_error(ctx));
    g_failures++;
  } else {
    CU(G.cuCtxSynchronize());
    CU(G.cuMemcpyDtoH(h, (unsigned long long)(uintptr_t)out[0]->dl_tensor.data, (size_t)n * 2));
    size_t bad = 0, first = 0;
    for (int64_t i = 0; i < n; i++)
      if (h[i] != table[pat_a((uint64_t)i) + pat_b((uint64_t)i)]) {
        if (!bad) first = (size_t)i;
        bad++;
      }
    if (bad)
      CHECK(0, "add_f16_dyn64: %zu of %lld elements wrong; first at %zu: got 0x%04x, expected 0x%04x", bad,
            (long long)n, first, h[first], table[pat_a(first) + pat_b(first)]);
    else printf("  ok   %-12s %lld elements (int64 dynamic dim)\n", "add_f16_dyn64", (long long)n);
    out[0]->deleter(out[0]);
  }
  dev_free(&T[0]);
  dev_free(&T[1]);
  free(h);
  tl_kernel_destroy(k);
}

int main(void) {
  if (tl_context_create(&ctx) != TL_OK) return 1;
  gpu_init(ctx);
  printf("test_wide_index (default target %s)\n", tl_device_default_target());
  tl_define d1[] = {{"N", "8589934669"}}; /* 2^33 + 77 */
  int64_t s1[1] = {INT64_C(8589934669)};
  run_case("add_one_1d", d1, 1, 1, s1);
  int64_t s2[2] = {65536, 131072};
  run_case("add_one_2d", NULL, 0, 2, s2);
  run_dynamic_f16();
  tl_context_destroy(ctx);
  return finish("test_wide_index");
}
