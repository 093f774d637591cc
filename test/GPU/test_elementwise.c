/* GPU test (issue 3, acceptance 1): elementwise add (1-D of 1,000,003
 * elements and 2-D 1023x1025), a multiply-add with a broadcast row vector
 * (2-D) and SiLU (1-D), each in float32, float16 and bfloat16, against a CPU
 * reference computed here: add exact in f32 (and exactly the rounded sum in
 * f16/bf16), the multiply-add against fmaf (f16/bf16: the exact a*b+c
 * rounded once), SiLU within 4 ulp of the output dtype of a float64
 * reference.  Outputs are poisoned (TL_COMPILE_POISON_OUTPUTS) so unwritten
 * elements fail.  Kernel files come from $TL_KERNEL_DIR (default
 * "examples"). */
#include "gpu_util.h"

static tl_context *ctx;

static tl_kernel *compile(const char *file, const tl_define *defs, size_t ndefs) {
  char path[1024];
  snprintf(path, sizeof path, "%s/%s", kernel_dir(), file);
  tl_compile_options o = {0};
  o.flags = TL_COMPILE_POISON_OUTPUTS;
  tl_kernel *k = NULL;
  double t0 = now_ms();
  if (tl_kernel_compile_file(ctx, path, defs, ndefs, &o, &k) != TL_OK) {
    fprintf(stderr, "FAIL compiling %s:\n%s\n", path, tl_context_last_error(ctx));
    g_failures++;
    return NULL;
  }
  printf("  compiled %s for %s in %.1f ms\n", file, tl_kernel_target(k), now_ms() - t0);
  return k;
}

/* ulp of v in dtype d */
static double ulp_of(dt_kind d, double v) {
  int mb = d == DT_F32 ? 23 : d == DT_F16 ? 10 : 7;
  int emin = d == DT_F32 ? -126 : d == DT_F16 ? -14 : -126;
  int e;
  frexp(fabs(v), &e);
  e -= 1;
  if (e < emin) e = emin;
  return ldexp(1.0, e - mb);
}

typedef enum { CMP_EXACT, CMP_ULP4 } cmp_mode;

static void compare(const char *what, dt_kind d, const void *out, const double *ref, size_t n, cmp_mode mode) {
  size_t bad = 0, first = 0;
  double worst = 0;
  for (size_t i = 0; i < n; i++) {
    double o = dt_load(d, out, i), r = dt_round(d, ref[i]);
    bool ok;
    if (mode == CMP_EXACT) ok = o == r;
    else ok = fabs(o - ref[i]) <= 4 * ulp_of(d, ref[i]);
    if (!ok || isnan(o)) {
      if (!bad) first = i;
      bad++;
      if (fabs(o - r) > worst || isnan(o)) worst = isnan(o) ? NAN : fabs(o - r);
    }
  }
  if (bad) {
    double o = dt_load(d, out, first);
    CHECK(0, "%s %s: %zu of %zu elements wrong; first at %zu: got %.9g, expected %.9g (worst diff %g)", what,
          dt_name(d), bad, n, first, o, dt_round(d, ref[first]), worst);
  } else {
    printf("  ok   %-28s %-9s %zu elements\n", what, dt_name(d), n);
  }
}

static DLManagedTensor *run(tl_kernel *k, tl_arg *args, size_t nargs) {
  DLManagedTensor *out[1] = {NULL};
  if (tl_kernel_call(ctx, k, args, nargs, NULL, out) != TL_OK) {
    fprintf(stderr, "FAIL call: %s\n", tl_context_last_error(ctx));
    g_failures++;
    return NULL;
  }
  CU(G.cuCtxSynchronize());
  return out[0];
}

static void test_add_1d(dt_kind d) {
  tl_define defs[] = {{"dtype", dt_name(d)}};
  tl_kernel *k = compile("elementwise_add_1d.py", defs, 1);
  if (!k) return;
  int64_t n = 1000003;
  dev_tensor A, B;
  void *ha = dev_random(&A, d, 1, &n), *hb = dev_random(&B, d, 1, &n);
  tl_arg args[2] = {tl_arg_tensor(&A.t), tl_arg_tensor(&B.t)};
  DLManagedTensor *C = run(k, args, 2);
  if (C) {
    CHECK(C->dl_tensor.ndim == 1 && C->dl_tensor.shape[0] == n, "output shape");
    void *hc = download((uintptr_t)C->dl_tensor.data, (size_t)n * dt_size(d));
    double *ref = malloc(sizeof(double) * (size_t)n);
    for (int64_t i = 0; i < n; i++) ref[i] = dt_load(d, ha, i) + dt_load(d, hb, i);
    compare("add 1-D n=1000003", d, hc, ref, (size_t)n, CMP_EXACT);
    free(ref);
    free(hc);
    C->deleter(C);
  }
  free(ha);
  free(hb);
  dev_free(&A);
  dev_free(&B);
  tl_kernel_destroy(k);
}

static void test_add_2d(dt_kind d) {
  tl_define defs[] = {{"M", "1023"}, {"N", "1025"}, {"dtype", dt_name(d)}};
  tl_kernel *k = compile("elementwise_add.py", defs, 3);
  if (!k) return;
  int64_t shape[2] = {1023, 1025};
  size_t n = 1023 * 1025;
  dev_tensor A, B;
  void *ha = dev_random(&A, d, 2, shape), *hb = dev_random(&B, d, 2, shape);
  tl_arg args[2] = {tl_arg_tensor(&A.t), tl_arg_tensor(&B.t)};
  DLManagedTensor *C = run(k, args, 2);
  if (C) {
    void *hc = download((uintptr_t)C->dl_tensor.data, n * dt_size(d));
    double *ref = malloc(sizeof(double) * n);
    for (size_t i = 0; i < n; i++) ref[i] = dt_load(d, ha, i) + dt_load(d, hb, i);
    compare("add 2-D 1023x1025", d, hc, ref, n, CMP_EXACT);
    free(ref);
    free(hc);
    C->deleter(C);
  }
  free(ha);
  free(hb);
  dev_free(&A);
  dev_free(&B);
  tl_kernel_destroy(k);
}

static void test_fma_row(dt_kind d) {
  tl_define defs[] = {{"M", "1023"}, {"N", "1025"}, {"dtype", dt_name(d)}};
  tl_kernel *k = compile("elementwise_fma_row.py", defs, 3);
  if (!k) return;
  int64_t shape[2] = {1023, 1025}, wn = 1025;
  size_t n = 1023 * 1025;
  dev_tensor X, W, Z;
  void *hx = dev_random(&X, d, 2, shape), *hw = dev_random(&W, d, 1, &wn), *hz = dev_random(&Z, d, 2, shape);
  tl_arg args[3] = {tl_arg_tensor(&X.t), tl_arg_tensor(&W.t), tl_arg_tensor(&Z.t)};
  DLManagedTensor *Y = run(k, args, 3);
  if (Y) {
    void *hy = download((uintptr_t)Y->dl_tensor.data, n * dt_size(d));
    double *ref = malloc(sizeof(double) * n);
    for (size_t i = 0; i < n; i++) {
      double x = dt_load(d, hx, i), w = dt_load(d, hw, i % 1025), z = dt_load(d, hz, i);
      /* f32: fmaf; f16/bf16: x*w is exact in double and so is the sum for
       * inputs in [-1, 1), so rounding it once is the fused result */
      ref[i] = d == DT_F32 ? (double)fmaf((float)x, (float)w, (float)z) : x * w + z;
    }
    compare("fma row-broadcast 1023x1025", d, hy, ref, n, CMP_EXACT);
    free(ref);
    free(hy);
    Y->deleter(Y);
  }
  free(hx);
  free(hw);
  free(hz);
  dev_free(&X);
  dev_free(&W);
  dev_free(&Z);
  tl_kernel_destroy(k);
}

static void test_silu(dt_kind d) {
  tl_define defs[] = {{"dtype", dt_name(d)}};
  tl_kernel *k = compile("silu.py", defs, 1);
  if (!k) return;
  int64_t n = 1000003;
  dev_tensor X;
  void *hx = dev_random(&X, d, 1, &n);
  tl_arg args[1] = {tl_arg_tensor(&X.t)};
  DLManagedTensor *Y = run(k, args, 1);
  if (Y) {
    void *hy = download((uintptr_t)Y->dl_tensor.data, (size_t)n * dt_size(d));
    double *ref = malloc(sizeof(double) * (size_t)n);
    for (int64_t i = 0; i < n; i++) {
      double x = dt_load(d, hx, i);
      ref[i] = x / (1.0 + exp(-x));
    }
    compare("silu 1-D n=1000003", d, hy, ref, (size_t)n, CMP_ULP4);
    free(ref);
    free(hy);
    Y->deleter(Y);
  }
  free(hx);
  dev_free(&X);
  tl_kernel_destroy(k);
}

int main(void) {
  if (tl_context_create(&ctx) != TL_OK) return 1;
  gpu_init(ctx);
  rng_seed((uint64_t)time(NULL));
  printf("test_elementwise (default target %s)\n", tl_device_default_target());
  dt_kind dts[3] = {DT_F32, DT_F16, DT_BF16};
  for (int i = 0; i < 3; i++) {
    test_add_1d(dts[i]);
    test_add_2d(dts[i]);
    test_fma_row(dts[i]);
    test_silu(dts[i]);
  }
  tl_context_destroy(ctx);
  return finish("test_elementwise");
}
