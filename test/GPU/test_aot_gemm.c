/* GPU test (issue 32; docs/aot.md): examples/gemm.py at 4096^3 (float16, float32 accumulation) exported ahead
 * of time -- `tl-opt --emit=c --target=sm_80 --export-name=aot_gemm`, built at build time into
 * libtl_aot_gemm.so, which links libcuda and nothing of this library (cmake/GPU.cmake) -- against the same
 * kernel through libtilelang (tl_kernel_compile_file for sm_80: the same PTX):
 *   - the exported call's C equals the runtime's C bit for bit (same PTX, same launch), and 4096 sampled
 *     elements agree with a float64 CPU dot product of the float16 inputs (docs/testing.md tolerances);
 *   - the output the exported call allocates (data NULL) is described and holds the same bits;
 *   - a bad argument is refused with libtilelang's text;
 *   - TFLOP/s of both, timed interleaved in one process: rounds of 20 launches between CUDA events, the
 *     caller's C for both (no allocation), the median of 15 rounds each.
 * Skips (77) without a GPU, and without the module (built only where CUDA's stub libcuda was found). */
#include <dlfcn.h>
#include <limits.h>
#include <unistd.h>

#include "gpu_util.h"

typedef int (*aot_fn)(const DLTensor *, const DLTensor *, DLTensor *, void *);
typedef const char *(*aot_err_fn)(void);
enum { S = 4096, ROUNDS = 15, REPS = 20 };

static void *open_module(void) {
  char exe[PATH_MAX], path[PATH_MAX + 64];
  ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
  if (n <= 0) return NULL;
  exe[n] = 0;
  char *slash = strrchr(exe, '/');
  if (slash) *slash = 0;
  snprintf(path, sizeof path, "%s/libtl_aot_gemm.so", exe);
  void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
  if (!h) printf("SKIP: %s (the exported GEMM is built where CUDA's stub libcuda is found)\n", dlerror());
  return h;
}

/* ms per launch of `reps` launches of f between two events (the caller's C) */
static double time_rounds(void *ev0, void *ev1, int which, aot_fn aot, tl_context *ctx, tl_kernel *k, DLTensor *A,
                          DLTensor *B, DLTensor *C) {
  tl_arg args[3] = {tl_arg_tensor(A), tl_arg_tensor(B), tl_arg_tensor(C)};
  CU(G.cuEventRecord(ev0, NULL));
  for (int i = 0; i < REPS; i++) {
    if (which == 0) {
      if (aot(A, B, C, NULL) != 0) return -1;
    } else if (tl_kernel_call(ctx, k, args, 3, NULL, NULL) != TL_OK) {
      return -1;
    }
  }
  CU(G.cuEventRecord(ev1, NULL));
  CU(G.cuEventSynchronize(ev1));
  float ms = 0;
  CU(G.cuEventElapsedTime(&ms, ev0, ev1));
  return ms / REPS;
}

static void check_values(const dev_tensor *A, const dev_tensor *B, const uint16_t *ha, const uint16_t *hb,
                         const void *mine, const void *theirs) {
  size_t bytes = (size_t)S * S * 2, diff = 0;
  for (size_t i = 0; i < bytes / 2; i++) diff += ((const uint16_t *)mine)[i] != ((const uint16_t *)theirs)[i];
  CHECK(diff == 0, "%zu of %zu elements differ from libtilelang's (same PTX, same launch)", diff, bytes / 2);
  printf("  ok   exported C == libtilelang's C bit for bit (%d x %d)\n", S, S);
  double atol, rtol;
  dt_tol(DT_F16, &atol, &rtol);
  int bad = 0;
  rng_seed(7);
  for (int s = 0; s < 4096; s++) {
    int i = (int)((rng_uniform() + 1) * 0.5 * S) % S, j = (int)((rng_uniform() + 1) * 0.5 * S) % S;
    double ref = 0;
    for (int kk = 0; kk < S; kk++)
      ref += dt_load(DT_F16, ha, (size_t)i * S + kk) * dt_load(DT_F16, hb, (size_t)kk * S + j);
    double got = dt_load(DT_F16, mine, (size_t)i * S + j);
    if (!(fabs(got - ref) <= atol + rtol * fabs(ref))) {
      if (bad++ < 5) fprintf(stderr, "  C[%d, %d] = %g, expected %g\n", i, j, got, ref);
    }
  }
  CHECK(bad == 0, "%d of 4096 sampled elements out of tolerance against the float64 CPU reference", bad);
  printf("  ok   4096 sampled elements within float16 tolerance of a float64 CPU GEMM\n");
  (void)A, (void)B;
}

int main(void) {
  tl_context *ctx;
  if (tl_context_create(&ctx) != TL_OK) return 1;
  gpu_init(ctx);
  void *mod = open_module();
  if (!mod) return GPU_SKIP;
  aot_fn aot = (aot_fn)dlsym(mod, "aot_gemm");
  aot_err_fn aot_err = (aot_err_fn)dlsym(mod, "aot_gemm_last_error");
  if (!aot || !aot_err) return printf("FAIL: libtl_aot_gemm.so lacks aot_gemm\n"), 1;

  char path[1024];
  snprintf(path, sizeof path, "%s/gemm.py", kernel_dir());
  tl_define defs[] = {{"M", "4096"}, {"N", "4096"}, {"K", "4096"}};
  tl_compile_options o = {0};
  o.target = "sm_80";               /* the export's target: the same PTX */
  o.out_idx_mode = TL_OUT_IDX_NONE; /* C passed by the caller, as the exported call is timed */
  tl_kernel *k = NULL;
  if (tl_kernel_compile_file(ctx, path, defs, 3, &o, &k) != TL_OK) {
    printf("FAIL compile %s: %s\n", path, tl_context_last_error(ctx));
    return 1;
  }
  int64_t shape[2] = {S, S};
  dev_tensor A, B, C1, C2;
  rng_seed(1);
  uint16_t *ha = dev_random(&A, DT_F16, 2, shape), *hb = dev_random(&B, DT_F16, 2, shape);
  dev_alloc(&C1, DT_F16, 2, shape);
  dev_alloc(&C2, DT_F16, 2, shape);
  CU(G.cuMemsetD8(C1.ptr, 0xFF, C1.bytes));
  CU(G.cuMemsetD8(C2.ptr, 0xFF, C2.bytes));

  int rc = aot(&A.t, &B.t, &C1.t, NULL);
  CHECK(rc == 0, "exported call: %d %s", rc, aot_err());
  tl_arg args[3] = {tl_arg_tensor(&A.t), tl_arg_tensor(&B.t), tl_arg_tensor(&C2.t)};
  CHECK(tl_kernel_call(ctx, k, args, 3, NULL, NULL) == TL_OK, "runtime call: %s", tl_context_last_error(ctx));
  CU(G.cuCtxSynchronize());
  void *mine = download(C1.ptr, C1.bytes), *theirs = download(C2.ptr, C2.bytes);
  check_values(&A, &B, ha, hb, mine, theirs);

  /* the output the call allocates */
  int64_t cs[2] = {0, 0};
  DLTensor C3;
  memset(&C3, 0, sizeof C3);
  C3.shape = cs;
  rc = aot(&A.t, &B.t, &C3, NULL);
  CU(G.cuCtxSynchronize());
  CHECK(rc == 0 && C3.data && cs[0] == S && cs[1] == S, "allocated output: %d %s", rc, aot_err());
  if (rc == 0 && C3.data) {
    void *h3 = download((unsigned long long)(uintptr_t)C3.data, C1.bytes);
    CHECK(memcmp(h3, mine, C1.bytes) == 0, "the allocated C differs from the caller's C");
    free(h3);
    CU(G.cuMemFree((unsigned long long)(uintptr_t)C3.data));
    printf("  ok   the output allocated by the exported call holds the same bits\n");
  }
  /* a refused call: libtilelang's text */
  DLTensor bad = B.t;
  bad.dtype.bits = 32;
  rc = aot(&A.t, &bad, &C1.t, NULL);
  CHECK(rc == 1 && strstr(aot_err(), "argument 'B' (#1): dtype: expected float16, got float32"), "refusal: %d %s", rc,
        aot_err());

  /* TFLOP/s, interleaved */
  void *ev0, *ev1;
  CU(G.cuEventCreate(&ev0, 0));
  CU(G.cuEventCreate(&ev1, 0));
  double t_aot[ROUNDS], t_rt[ROUNDS];
  for (int w = 0; w < 3; w++) {
    time_rounds(ev0, ev1, 0, aot, ctx, k, &A.t, &B.t, &C1.t);
    time_rounds(ev0, ev1, 1, aot, ctx, k, &A.t, &B.t, &C2.t);
  }
  for (int r = 0; r < ROUNDS; r++) {
    t_aot[r] = time_rounds(ev0, ev1, 0, aot, ctx, k, &A.t, &B.t, &C1.t);
    t_rt[r] = time_rounds(ev0, ev1, 1, aot, ctx, k, &A.t, &B.t, &C2.t);
    CHECK(t_aot[r] > 0 && t_rt[r] > 0, "timing round %d failed: %s / %s", r, aot_err(), tl_context_last_error(ctx));
  }
  double ma = median(t_aot, ROUNDS), mr = median(t_rt, ROUNDS), flop = 2.0 * S * S * S;
  printf(
      "  aot_gemm %dx%dx%d f16 (sm_80 PTX): exported %.3f ms %.1f TFLOP/s | libtilelang %.3f ms %.1f TFLOP/s | "
      "exported/libtilelang %.3f\n",
      S, S, S, ma, flop / ma / 1e9, mr, flop / mr / 1e9, mr / ma);
  printf("RESULT aot_gemm tflops_exported=%.2f tflops_libtilelang=%.2f ratio=%.3f\n", flop / ma / 1e9, flop / mr / 1e9,
         mr / ma);
  CU(G.cuEventDestroy(ev0));
  CU(G.cuEventDestroy(ev1));
  free(mine);
  free(theirs);
  free(ha);
  free(hb);
  dev_free(&A);
  dev_free(&B);
  dev_free(&C1);
  dev_free(&C2);
  tl_kernel_destroy(k);
  tl_context_destroy(ctx);
  return finish("test_aot_gemm");
}
