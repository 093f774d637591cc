/* Unit tests of the tile-level reference evaluator (lib/Interp/ref_eval*.c):
 * every example in examples/ (the .py kernels) is parsed at a small size, run by
 * tl_ref_eval on random inputs, and compared with a direct C implementation
 * written here (naive loops, in double unless the comparison emulates the
 * program's own rounding steps to check them exactly).  f16 rounding in the
 * checks uses the compiler's _Float16 and bf16 rounding a bit-level
 * round-to-nearest-even written here, both independent of the evaluator.
 * Tolerances are stated per test.  Small kernels given as text check the
 * remaining semantics (reductions, atomics, integer and float rules,
 * per-thread code with barriers) and the errors. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "IR/tir.h"
#include "Interp/interp.h"
#include "tilelang/ir.h"

/* ------------------------------------------------------------- helpers */
static uint64_t rng_state = 0x9E3779B97F4A7C15ull;
static double urand(void) { /* uniform in [-1, 1) */
  rng_state ^= rng_state << 13;
  rng_state ^= rng_state >> 7;
  rng_state ^= rng_state << 17;
  return (double)(rng_state >> 11) / 4503599627370496.0 - 1.0;
}

static uint16_t h_enc(double x) {
  _Float16 h = (_Float16)x;
  uint16_t u;
  memcpy(&u, &h, 2);
  return u;
}
static double h_dec(uint16_t u) {
  _Float16 h;
  memcpy(&h, &u, 2);
  return (double)h;
}
static double h_round(double x) { return (double)(_Float16)x; }
static double h_ulp(double x) { /* spacing of f16 values at |x| */
  x = fabs(x);
  if (x < 6.103515625e-05) return ldexp(1.0, -24);
  int e;
  frexp(x, &e);
  return ldexp(1.0, e - 11);
}
static uint16_t bf_enc(float f) { /* round to nearest even (no NaN inputs here) */
  uint32_t u;
  memcpy(&u, &f, 4);
  u += 0x7FFFu + ((u >> 16) & 1u);
  return (uint16_t)(u >> 16);
}
static double bf_dec(uint16_t h) {
  uint32_t u = (uint32_t)h << 16;
  float f;
  memcpy(&f, &u, 4);
  return f;
}

static tl_context *ctx;
static void setup(void) { cr_assert_eq(tl_context_create(&ctx), TL_OK); }
static void teardown(void) { tl_context_destroy(ctx); }

/* Parses examples/NAME.py with "name=value" definitions (NULL-terminated). */
static tl_module *parse_example(const char *name, const char *const *defs) {
  tl_define dv[16];
  size_t n = 0;
  char names[16][64];
  for (; defs && defs[n]; n++) {
    const char *eq = strchr(defs[n], '=');
    cr_assert(eq && n < 16);
    snprintf(names[n], sizeof names[n], "%.*s", (int)(eq - defs[n]), defs[n]);
    dv[n].name = names[n];
    dv[n].value = eq + 1;
  }
  char path[256];
  snprintf(path, sizeof path, "examples/%s.py", name);
  tl_module *m = NULL;
  tl_status s = tl_module_parse_file(ctx, path, dv, n, &m);
  cr_assert_eq(s, TL_OK, "parse %s: %s", path, tl_context_last_error(ctx));
  return m;
}

static tl_module *parse_text(const char *src) {
  tl_module *m = NULL;
  tl_status s = tl_module_parse(ctx, src, strlen(src), "test.py", NULL, 0, &m);
  cr_assert_eq(s, TL_OK, "parse: %s", tl_context_last_error(ctx));
  return m;
}

static tl_interp_arg tensor(void *data, int ndim, const int64_t *shape) {
  tl_interp_arg a = {0};
  a.is_tensor = true;
  a.data = data;
  a.ndim = ndim;
  for (int i = 0; i < ndim; i++) a.shape[i] = shape[i];
  return a;
}
#define T1(p, a) tensor((p), 1, (int64_t[]){(a)})
#define T2(p, a, b) tensor((p), 2, (int64_t[]){(a), (b)})
#define T4(p, a, b, c, d) tensor((p), 4, (int64_t[]){(a), (b), (c), (d)})

/* Runs function 0; returns the rendered diagnostics (malloc'd, "" when
 * none) through *msg when msg is given, else asserts success. */
static bool run(tl_module *m, tl_interp_arg *args, int nargs, const int64_t *dyn, int ndyn, char **msg) {
  tl_diag d;
  tl_diag_init(&d);
  bool ok = tl_ref_eval(m, 0, args, nargs, dyn, ndyn, &d);
  const char *out = d.out.data ? d.out.data : "";
  if (msg) *msg = strdup(out);
  else cr_assert(ok, "tl_ref_eval failed:\n%s", out);
  tl_diag_free(&d);
  return ok;
}

static uint16_t *rand_f16(size_t n) {
  uint16_t *p = malloc(n * 2);
  for (size_t i = 0; i < n; i++) p[i] = h_enc(urand());
  return p;
}
static float *rand_f32(size_t n) {
  float *p = malloc(n * 4);
  for (size_t i = 0; i < n; i++) p[i] = (float)(urand() * 4.0);
  return p;
}

/* The gemm program's own arithmetic: per K tile, per k-chunk of 16 in it
 * (mma.sync m16n8k16's K: f16 operands into an f32 accumulator, issue 15) a
 * float64 sum added to the f32 accumulator and rounded to f32 once;
 * out-of-range K is padding 0. */
static double gemm_emulated(const double *A, const double *B, int64_t i, int64_t j, int64_t N, int64_t K, int64_t bk,
                            bool bt) {
  float acc = 0;
  for (int64_t k0 = 0; k0 < K; k0 += bk)
    for (int64_t c0 = k0; c0 < k0 + bk && c0 < K; c0 += 16) {
      double s = 0;
      for (int64_t k = c0; k < c0 + 16 && k < k0 + bk && k < K; k++)
        s += A[i * K + k] * (bt ? B[j * K + k] : B[k * N + j]);
      acc = (float)((double)acc + s);
    }
  return acc;
}

/* f16 gemm example (gemm.py / gemm_dynamic_m.py): exact against the
 * emulation, within 1 f16 ulp of the float64 product. */
static void check_gemm_f16(tl_module *m, int64_t M, int64_t N, int64_t K, int64_t bk, const int64_t *dyn, int ndyn) {
  uint16_t *a = rand_f16((size_t)(M * K)), *b = rand_f16((size_t)(K * N));
  uint16_t *c = calloc((size_t)(M * N), 2);
  double *A = malloc(sizeof(double) * (size_t)(M * K)), *B = malloc(sizeof(double) * (size_t)(K * N));
  for (int64_t i = 0; i < M * K; i++) A[i] = h_dec(a[i]);
  for (int64_t i = 0; i < K * N; i++) B[i] = h_dec(b[i]);
  tl_interp_arg args[3] = {T2(a, M, K), T2(b, K, N), T2(c, M, N)};
  run(m, args, 3, dyn, ndyn, NULL);
  for (int64_t i = 0; i < M; i++)
    for (int64_t j = 0; j < N; j++) {
      double got = h_dec(c[i * N + j]);
      double emu = h_round(gemm_emulated(A, B, i, j, N, K, bk, false));
      double ref = 0;
      for (int64_t k = 0; k < K; k++) ref += A[i * K + k] * B[k * N + j];
      cr_assert_eq(got, emu, "C[%lld,%lld] = %.8g, emulation %.8g", (long long)i, (long long)j, got, emu);
      cr_assert_leq(fabs(got - ref), h_ulp(ref), "C[%lld,%lld] = %.8g, float64 %.8g", (long long)i, (long long)j, got,
                    ref);
    }
  free(a), free(b), free(c), free(A), free(B);
}

TestSuite(ref_eval, .init = setup, .fini = teardown);

/* -------------------------------------------------------------- gemm */
Test(ref_eval, gemm_f16_64) {
  const char *defs[] = {"M=64", "N=64", "K=64", "block_M=32", "block_N=32", "block_K=32", NULL};
  tl_module *m = parse_example("gemm", defs);
  check_gemm_f16(m, 64, 64, 64, 32, NULL, 0);
  tl_module_destroy(m);
}

Test(ref_eval, gemm_f16_oob_50x70x30) {
  const char *defs[] = {"M=50", "N=70", "K=30", "block_M=32", "block_N=32", "block_K=32", NULL};
  tl_module *m = parse_example("gemm", defs);
  check_gemm_f16(m, 50, 70, 30, 32, NULL, 0);
  tl_module_destroy(m);
}

Test(ref_eval, gemm_dynamic_m) {
  const char *defs[] = {"N=64", "K=64", "block_M=32", "block_N=32", "block_K=32", NULL};
  tl_module *m = parse_example("gemm_dynamic_m", defs);
  int64_t dyn[1] = {50};
  check_gemm_f16(m, 50, 64, 64, 32, dyn, 1);
  tl_module_destroy(m);
}

Test(ref_eval, gemm_256_fast) {
  const char *defs[] = {"M=256", "N=256", "K=256", "block_M=32", "block_N=32", "block_K=32", NULL};
  tl_module *m = parse_example("gemm", defs);
  int64_t n = 256;
  uint16_t *a = rand_f16((size_t)(n * n)), *b = rand_f16((size_t)(n * n));
  uint16_t *c = calloc((size_t)(n * n), 2);
  tl_interp_arg args[3] = {T2(a, n, n), T2(b, n, n), T2(c, n, n)};
  struct timespec t0, t1;
  clock_gettime(CLOCK_MONOTONIC, &t0);
  run(m, args, 3, NULL, 0, NULL);
  clock_gettime(CLOCK_MONOTONIC, &t1);
  double sec = (double)(t1.tv_sec - t0.tv_sec) + 1e-9 * (double)(t1.tv_nsec - t0.tv_nsec);
  fprintf(stderr, "ref_eval gemm 256^3 (32x32x32 tiles): %.3f s\n", sec);
  cr_assert_lt(sec, 5.0, "gemm 256^3 took %.3f s", sec); /* well under 1 s in a -O2 build */
  for (int64_t i = 0; i < n; i += 17)
    for (int64_t j = 0; j < n; j += 13) {
      double ref = 0;
      for (int64_t k = 0; k < n; k++) ref += h_dec(a[i * n + k]) * h_dec(b[k * n + j]);
      double got = h_dec(c[i * n + j]);
      cr_assert_leq(fabs(got - ref), h_ulp(ref), "C[%lld,%lld] = %.8g, float64 %.8g", (long long)i, (long long)j, got,
                    ref);
    }
  free(a), free(b), free(c);
  tl_module_destroy(m);
}

Test(ref_eval, gemm_bf16_nt) {
  const char *defs[] = {"M=64", "N=64", "K=64", "block_M=32", "block_N=32", "block_K=32", NULL};
  tl_module *m = parse_example("gemm_bf16_nt", defs);
  int64_t M = 64, N = 64, K = 64;
  uint16_t *a = malloc((size_t)(M * K) * 2), *b = malloc((size_t)(N * K) * 2);
  uint16_t *c = calloc((size_t)(M * N), 2);
  double *A = malloc(sizeof(double) * (size_t)(M * K)), *B = malloc(sizeof(double) * (size_t)(N * K));
  for (int64_t i = 0; i < M * K; i++) A[i] = bf_dec(a[i] = bf_enc((float)urand()));
  for (int64_t i = 0; i < N * K; i++) B[i] = bf_dec(b[i] = bf_enc((float)urand()));
  tl_interp_arg args[3] = {T2(a, M, K), T2(b, N, K), T2(c, M, N)};
  run(m, args, 3, NULL, 0, NULL);
  for (int64_t i = 0; i < M; i++)
    for (int64_t j = 0; j < N; j++) {
      double emu = bf_dec(bf_enc((float)gemm_emulated(A, B, i, j, N, K, 32, true)));
      cr_assert_eq(bf_dec(c[i * N + j]), emu, "C[%lld,%lld]", (long long)i, (long long)j);
    }
  free(a), free(b), free(c), free(A), free(B);
  tl_module_destroy(m);
}

Test(ref_eval, gemm_splitk) {
  const char *defs[] = {"M=64", "N=64", "K=128", "block_M=32", "block_N=32", "block_K=32", "split_k=2", NULL};
  tl_module *m = parse_example("gemm_splitk", defs);
  int64_t M = 64, N = 64, K = 128;
  uint16_t *a = rand_f16((size_t)(M * K)), *b = rand_f16((size_t)(K * N));
  float *c = rand_f32((size_t)(M * N)), *c0 = malloc(sizeof(float) * (size_t)(M * N));
  memcpy(c0, c, sizeof(float) * (size_t)(M * N));
  tl_interp_arg args[3] = {T2(a, M, K), T2(b, K, N), T2(c, M, N)};
  run(m, args, 3, NULL, 0, NULL);
  /* tolerance: f32 roundings of partial sums, |diff| <= 1e-5 * (|ref| + sum |a*b|) */
  for (int64_t i = 0; i < M; i++)
    for (int64_t j = 0; j < N; j++) {
      double ref = c0[i * N + j], mag = fabs(ref);
      for (int64_t k = 0; k < K; k++) {
        double p = h_dec(a[i * K + k]) * h_dec(b[k * N + j]);
        ref += p;
        mag += fabs(p);
      }
      cr_assert_leq(fabs(c[i * N + j] - ref), 1e-5 * mag, "C[%lld,%lld] = %.8g, ref %.8g", (long long)i, (long long)j,
                    c[i * N + j], ref);
    }
  free(a), free(b), free(c), free(c0);
  tl_module_destroy(m);
}

/* -------------------------------------------------------- element-wise */
Test(ref_eval, elementwise_add_2d_partial) {
  const char *defs[] = {"M=70", "N=50", "block_M=32", "block_N=32", NULL};
  tl_module *m = parse_example("elementwise_add", defs);
  int64_t M = 70, N = 50;
  float *a = rand_f32((size_t)(M * N)), *b = rand_f32((size_t)(M * N));
  float *c = calloc((size_t)(M * N), 4);
  tl_interp_arg args[3] = {T2(a, M, N), T2(b, M, N), T2(c, M, N)};
  run(m, args, 3, NULL, 0, NULL);
  for (int64_t i = 0; i < M * N; i++) cr_assert_eq(c[i], a[i] + b[i], "C[%lld]", (long long)i);
  free(a), free(b), free(c);
  tl_module_destroy(m);
}

Test(ref_eval, elementwise_add_1d_dynamic) {
  const char *defs[] = {"block=256", NULL};
  tl_module *m = parse_example("elementwise_add_1d", defs);
  int64_t n = 1000;
  float *a = rand_f32((size_t)n), *b = rand_f32((size_t)n), *c = calloc((size_t)n, 4);
  tl_interp_arg args[3] = {T1(a, n), T1(b, n), T1(c, n)};
  run(m, args, 3, &n, 1, NULL);
  for (int64_t i = 0; i < n; i++) cr_assert_eq(c[i], a[i] + b[i], "C[%lld]", (long long)i);
  free(a), free(b), free(c);
  tl_module_destroy(m);
}

Test(ref_eval, silu) {
  const char *defs[] = {"block=256", NULL};
  tl_module *m = parse_example("silu", defs);
  int64_t n = 1000;
  float *x = rand_f32((size_t)n), *y = calloc((size_t)n, 4);
  tl_interp_arg args[2] = {T1(x, n), T1(y, n)};
  run(m, args, 2, &n, 1, NULL);
  for (int64_t i = 0; i < n; i++) { /* f32 math: |diff| <= 1e-6 |ref| + 1e-7 */
    double ref = x[i] / (1.0 + exp(-(double)x[i]));
    cr_assert_leq(fabs(y[i] - ref), 1e-6 * fabs(ref) + 1e-7, "Y[%lld] = %.9g, ref %.9g", (long long)i, y[i], ref);
  }
  free(x), free(y);
  tl_module_destroy(m);
}

Test(ref_eval, elementwise_fma_row) {
  const char *defs[] = {"M=40", "N=70", "block_M=32", "block_N=32", NULL};
  tl_module *m = parse_example("elementwise_fma_row", defs);
  int64_t M = 40, N = 70;
  float *x = rand_f32((size_t)(M * N)), *w = rand_f32((size_t)N), *z = rand_f32((size_t)(M * N));
  float *y = calloc((size_t)(M * N), 4);
  tl_interp_arg args[4] = {T2(x, M, N), T1(w, N), T2(z, M, N), T2(y, M, N)};
  run(m, args, 4, NULL, 0, NULL);
  for (int64_t i = 0; i < M; i++)
    for (int64_t j = 0; j < N; j++)
      cr_assert_eq(y[i * N + j], fmaf(x[i * N + j], w[j], z[i * N + j]), "Y[%lld,%lld]", (long long)i, (long long)j);
  free(x), free(w), free(z), free(y);
  tl_module_destroy(m);
}

Test(ref_eval, saxpy_scalar_param) {
  const char *defs[] = {"N=1000", "block=256", NULL};
  tl_module *m = parse_example("saxpy", defs);
  int64_t n = 1000;
  float *x = rand_f32((size_t)n), *y = rand_f32((size_t)n), *y0 = malloc((size_t)n * 4);
  memcpy(y0, y, (size_t)n * 4);
  tl_interp_arg args[3] = {T1(x, n), T1(y, n), {0}};
  args[2].f = 1.5;
  run(m, args, 3, NULL, 0, NULL);
  for (int64_t i = 0; i < n; i++) {
    float p = 1.5f * x[i];
    cr_assert_eq(y[i], p + y0[i], "Y[%lld]", (long long)i);
  }
  free(x), free(y), free(y0);
  tl_module_destroy(m);
}

Test(ref_eval, cast_copy_bf16_partial) {
  const char *defs[] = {"M=70", "N=70", "block_M=32", "block_N=32", NULL};
  tl_module *m = parse_example("cast_copy", defs);
  int64_t M = 70, N = 70;
  float *a = rand_f32((size_t)(M * N));
  uint16_t *b = calloc((size_t)(M * N), 2);
  tl_interp_arg args[2] = {T2(a, M, N), T2(b, M, N)};
  run(m, args, 2, NULL, 0, NULL);
  for (int64_t i = 0; i < M * N; i++)
    cr_assert_eq(b[i], bf_enc(a[i]), "B[%lld] = %04x, expected %04x", (long long)i, b[i], bf_enc(a[i]));
  free(a), free(b);
  tl_module_destroy(m);
}

/* ----------------------------------------------------- reductions, norms */
Test(ref_eval, softmax_f16) {
  const char *defs[] = {"M=8", "N=64", "block_M=4", NULL};
  tl_module *m = parse_example("softmax", defs);
  int64_t M = 8, N = 64;
  uint16_t *x = malloc((size_t)(M * N) * 2), *y = calloc((size_t)(M * N), 2);
  for (int64_t i = 0; i < M * N; i++) x[i] = h_enc(urand() * 4);
  tl_interp_arg args[2] = {T2(x, M, N), T2(y, M, N)};
  run(m, args, 2, NULL, 0, NULL);
  for (int64_t i = 0; i < M; i++) { /* f16 output: |diff| <= 1e-3 + 5e-3 |ref| */
    double mx = -INFINITY, s = 0;
    for (int64_t j = 0; j < N; j++) mx = fmax(mx, h_dec(x[i * N + j]));
    for (int64_t j = 0; j < N; j++) s += exp(h_dec(x[i * N + j]) - mx);
    for (int64_t j = 0; j < N; j++) {
      double ref = exp(h_dec(x[i * N + j]) - mx) / s, got = h_dec(y[i * N + j]);
      cr_assert_leq(fabs(got - ref), 1e-3 + 5e-3 * ref, "Y[%lld,%lld] = %g, ref %g", (long long)i, (long long)j, got,
                    ref);
    }
  }
  free(x), free(y);
  tl_module_destroy(m);
}

Test(ref_eval, rms_norm) {
  const char *defs[] = {"M=8", "N=64", "block_M=2", NULL};
  tl_module *m = parse_example("rms_norm", defs);
  int64_t M = 8, N = 64;
  float *a = rand_f32((size_t)(M * N)), *b = calloc((size_t)(M * N), 4);
  tl_interp_arg args[2] = {T2(a, M, N), T2(b, M, N)};
  run(m, args, 2, NULL, 0, NULL);
  for (int64_t i = 0; i < M; i++) { /* f32: |diff| <= 1e-5 |ref| + 1e-6 */
    double ss = 0;
    for (int64_t j = 0; j < N; j++) ss += (double)a[i * N + j] * a[i * N + j];
    double r = 1.0 / sqrt(ss / (double)N + 1e-6);
    for (int64_t j = 0; j < N; j++) {
      double ref = a[i * N + j] * r;
      cr_assert_leq(fabs(b[i * N + j] - ref), 1e-5 * fabs(ref) + 1e-6, "B[%lld,%lld]", (long long)i, (long long)j);
    }
  }
  free(a), free(b);
  tl_module_destroy(m);
}

/* ------------------------------------------------------------------ gemv */
Test(ref_eval, gemv_per_thread) {
  const char *defs[] = {"N=64", "K=64", "block_N=32", NULL};
  tl_module *m = parse_example("gemv", defs);
  int64_t N = 64, K = 64;
  uint16_t *a = rand_f16((size_t)(N * K)), *x = rand_f16((size_t)K), *y = calloc((size_t)N, 2);
  tl_interp_arg args[3] = {T2(a, N, K), T1(x, K), T1(y, N)};
  run(m, args, 3, NULL, 0, NULL);
  for (int64_t i = 0; i < N; i++) { /* exact: the kernel's own f32 accumulation order */
    float acc = 0;
    for (int64_t k = 0; k < K; k++) {
      float p = (float)h_dec(a[i * K + k]) * (float)h_dec(x[k]);
      acc = acc + p;
    }
    cr_assert_eq(h_dec(y[i]), h_round(acc), "y[%lld] = %g, expected %g", (long long)i, h_dec(y[i]), h_round(acc));
  }
  free(a), free(x), free(y);
  tl_module_destroy(m);
}

/* ------------------------------------------------------- flash attention */
static void check_flash(bool causal) {
  const char *defs[] = {"batch=1",
                        "heads=2",
                        "seq_len=64",
                        "dim=32",
                        "block_M=32",
                        "block_N=32",
                        causal ? "is_causal=True" : "is_causal=False",
                        NULL};
  tl_module *m = parse_example("flash_attention", defs);
  int64_t H = 2, S = 64, D = 32, n = H * S * D;
  uint16_t *q = rand_f16((size_t)n), *k = rand_f16((size_t)n), *v = rand_f16((size_t)n);
  uint16_t *o = calloc((size_t)n, 2);
  tl_interp_arg args[4] = {T4(q, 1, H, S, D), T4(k, 1, H, S, D), T4(v, 1, H, S, D), T4(o, 1, H, S, D)};
  run(m, args, 4, NULL, 0, NULL);
  double scale = 1.0 / sqrt((double)D), worst = 0;
  double *p = malloc(sizeof(double) * (size_t)S);
  for (int64_t h = 0; h < H; h++)
    for (int64_t i = 0; i < S; i++) {
      const int64_t base = h * S * D;
      double mx = -INFINITY, sum = 0;
      for (int64_t j = 0; j < S; j++) {
        double dot = 0;
        for (int64_t d = 0; d < D; d++) dot += h_dec(q[base + i * D + d]) * h_dec(k[base + j * D + d]);
        p[j] = causal && j > i ? -INFINITY : dot * scale;
        mx = fmax(mx, p[j]);
      }
      for (int64_t j = 0; j < S; j++) sum += p[j] = exp(p[j] - mx);
      for (int64_t d = 0; d < D; d++) {
        double ref = 0;
        for (int64_t j = 0; j < S; j++) ref += p[j] / sum * h_dec(v[base + j * D + d]);
        double got = h_dec(o[base + i * D + d]);
        worst = fmax(worst, fabs(got - ref));
        cr_assert_leq(fabs(got - ref), 1e-2, "O[%lld,%lld,%lld] = %g, ref %g", (long long)h, (long long)i, (long long)d,
                      got, ref);
      }
    }
  fprintf(stderr, "ref_eval flash attention (causal=%d): max |diff| %.3g\n", causal, worst);
  free(p), free(q), free(k), free(v), free(o);
  tl_module_destroy(m);
}
Test(ref_eval, flash_attention) { check_flash(false); }
Test(ref_eval, flash_attention_causal) { check_flash(true); }

/* ------------------------------------------------- semantics from text */
Test(ref_eval, reductions_all_kinds) {
  tl_module *m = parse_text(
      "import tilelang.language as T\n"
      "@T.prim_func\n"
      "def main(A: T.Tensor((4, 8), \"float32\"), R: T.Tensor((8, 8), \"float32\"),\n"
      "         I: T.Tensor((4, 8), \"int32\"), Q: T.Tensor((2, 4), \"int32\")):\n"
      "    with T.Kernel(1, threads=128) as bx:\n"
      "        a = T.alloc_fragment((4, 8), \"float32\")\n"
      "        r = T.alloc_fragment((4,), \"float32\")\n"
      "        c = T.alloc_fragment((8,), \"float32\")\n"
      "        k = T.alloc_fragment((1, 8), \"float32\")\n"
      "        ia = T.alloc_fragment((4, 8), \"int32\")\n"
      "        ir = T.alloc_fragment((4,), \"int32\")\n"
      "        T.copy(A, a)\n"
      "        T.copy(I, ia)\n"
      "        T.reduce_min(a, r, dim=1)\n"
      "        T.copy(r, R[0, 0:4])\n"
      "        T.reduce_abssum(a, r, dim=1)\n"
      "        T.copy(r, R[1, 0:4])\n"
      "        T.reduce_absmax(a, c, dim=0)\n"
      "        T.copy(c, R[2, 0:8])\n"
      "        T.reduce_sum(a, c, dim=0)\n"
      "        T.copy(c, R[3, 0:8])\n"
      "        T.fill(c, 100.0)\n"
      "        T.reduce_sum(a, c, dim=0, clear=False)\n"
      "        T.copy(c, R[4, 0:8])\n"
      "        T.fill(r, 1.5)\n"
      "        T.reduce_max(a, r, dim=1, clear=False)\n"
      "        T.copy(r, R[5, 0:4])\n"
      "        T.reduce_max(a, k, dim=0)\n"
      "        T.copy(k, R[6:7, 0:8])\n"
      "        T.reduce_max(ia, ir, dim=-1)\n"
      "        T.copy(ir, Q[0, 0:4])\n"
      "        T.reduce_sum(ia, ir, dim=1)\n"
      "        T.copy(ir, Q[1, 0:4])\n");
  float A[32], R[64] = {0};
  int32_t I[32], Q[8];
  for (int i = 0; i < 32; i++) {
    A[i] = (float)(urand() * 2);
    I[i] = (int32_t)(urand() * 1000);
  }
  tl_interp_arg args[4] = {T2(A, 4, 8), T2(R, 8, 8), T2(I, 4, 8), T2(Q, 2, 4)};
  run(m, args, 4, NULL, 0, NULL);
  for (int i = 0; i < 4; i++) {
    double mn = INFINITY, as = 0, mx = 1.5;
    int32_t imx = INT32_MIN, isum = 0;
    for (int j = 0; j < 8; j++) {
      mn = fmin(mn, A[i * 8 + j]);
      as += fabs(A[i * 8 + j]);
      mx = fmax(mx, A[i * 8 + j]);
      imx = I[i * 8 + j] > imx ? I[i * 8 + j] : imx;
      isum += I[i * 8 + j];
    }
    cr_assert_eq(R[0 * 8 + i], (float)mn);
    cr_assert_eq(R[1 * 8 + i], (float)as, "abssum row %d", i);
    cr_assert_eq(R[5 * 8 + i], (float)mx);
    cr_assert_eq(Q[i], imx);
    cr_assert_eq(Q[4 + i], isum);
  }
  for (int j = 0; j < 8; j++) {
    double am = 0, s = 0, mx = -INFINITY;
    for (int i = 0; i < 4; i++) {
      am = fmax(am, fabs(A[i * 8 + j]));
      s += A[i * 8 + j];
      mx = fmax(mx, A[i * 8 + j]);
    }
    cr_assert_eq(R[2 * 8 + j], (float)am);
    cr_assert_eq(R[3 * 8 + j], (float)s, "sum col %d", j);
    cr_assert_eq(R[4 * 8 + j], (float)(100.0 + s), "sum clear=False col %d", j);
    cr_assert_eq(R[6 * 8 + j], (float)mx);
  }
  tl_module_destroy(m);
}

Test(ref_eval, atomic_add_scalar_and_tile) {
  tl_module *m = parse_text(
      "import tilelang.language as T\n"
      "@T.prim_func\n"
      "def main(A: T.Tensor((16,), \"float32\"), S: T.Tensor((1,), \"float32\"),\n"
      "         H: T.Tensor((6,), \"float16\")):\n"
      "    with T.Kernel(16, threads=32) as bx:\n"
      "        T.atomic_add(S[0], A[bx])\n"
      "        f = T.alloc_fragment((8,), \"float32\")\n"
      "        T.fill(f, 0.5)\n"
      "        T.atomic_add(H[bx % 2 * 4:bx % 2 * 4 + 8], f)\n");
  float A[16], S[1] = {10.0f};
  uint16_t H[6] = {0};
  double s = 10.0;
  for (int i = 0; i < 16; i++) {
    A[i] = (float)(int)(urand() * 100); /* integers: every order sums exactly */
    s += A[i];
  }
  tl_interp_arg args[3] = {T1(A, 16), T1(S, 1), T1(H, 6)};
  run(m, args, 3, NULL, 0, NULL);
  cr_assert_eq(S[0], (float)s);
  /* blocks with bx even add to H[0:8] (H[6:8] out of bounds: skipped), odd to H[4:12] */
  for (int i = 0; i < 6; i++) {
    double want = (i < 6 ? 8 * 0.5 : 0) + (i >= 4 ? 8 * 0.5 : 0);
    cr_assert_eq(h_dec(H[i]), want, "H[%d] = %g", i, h_dec(H[i]));
  }
  tl_module_destroy(m);
}

Test(ref_eval, scalar_semantics) {
  tl_module *m = parse_text(
      "import tilelang.language as T\n"
      "@T.prim_func\n"
      "def main(A: T.Tensor((4,), \"int32\"), F: T.Tensor((8,), \"float32\"),\n"
      "         O: T.Tensor((8,), \"int32\"), G: T.Tensor((4,), \"float32\"),\n"
      "         H: T.Tensor((2,), \"float16\")):\n"
      "    with T.Kernel(1, threads=32) as bx:\n"
      "        O[0] = A[0] // A[1]\n"
      "        O[1] = A[0] % A[1]\n"
      "        O[2] = T.truncdiv(A[0], A[1])\n"
      "        O[3] = T.truncmod(A[0], A[1])\n"
      "        O[4] = A[2] + A[3]\n"
      "        O[5] = T.Cast(\"int32\", T.Cast(\"int8\", F[0]))\n"
      "        O[6] = T.Cast(\"int32\", F[1])\n"
      "        O[7] = A[0] >> 1\n"
      "        G[0] = T.round(F[2])\n"
      "        G[1] = T.round(F[3])\n"
      "        G[2] = T.floor(F[3])\n"
      "        G[3] = T.if_then_else(A[1] > 5, F[1], F[2])\n"
      "        H[0] = T.Cast(\"float16\", F[4]) + T.Cast(\"float16\", F[5])\n"
      "        H[1] = T.Cast(\"float16\", F[6])\n");
  int32_t A[4] = {-7, 2, 2147483647, 1}, O[8] = {0};
  float F[8] = {300.7f, NAN, 2.5f, -2.5f, 2048.0f, 1.0f, 1e6f, 0};
  float G[4] = {0};
  uint16_t H[2] = {0};
  tl_interp_arg args[5] = {T1(A, 4), T1(F, 8), T1(O, 8), T1(G, 4), T1(H, 2)};
  run(m, args, 5, NULL, 0, NULL);
  int32_t want[8] = {-4, 1, -3, -1, INT32_MIN, 127, 0, -4};
  for (int i = 0; i < 8; i++) cr_assert_eq(O[i], want[i], "O[%d] = %d, expected %d", i, O[i], want[i]);
  cr_assert_eq(G[0], 3.0f); /* halves away from zero */
  cr_assert_eq(G[1], -3.0f);
  cr_assert_eq(G[2], -3.0f);
  cr_assert_eq(G[3], 2.5f);          /* only the chosen branch */
  cr_assert_eq(h_dec(H[0]), 2048.0); /* 2049 rounds to even in f16 */
  cr_assert(isinf(h_dec(H[1])));     /* overflow to inf */
  tl_module_destroy(m);
}

Test(ref_eval, gemm_variants_loops_math) {
  tl_module *m = parse_text(
      "import tilelang.language as T\n"
      "@T.prim_func\n"
      "def main(A: T.Tensor((32, 16), \"float16\"), B: T.Tensor((32, 16), \"float16\"), C: T.Tensor((16, 16), "
      "\"float16\"),\n"
      "         I: T.Tensor((16, 32), \"int8\"), J: T.Tensor((16, 32), \"int8\"), K: T.Tensor((16, 16), \"int32\"),\n"
      "         F: T.Tensor((8,), \"float32\"), G: T.Tensor((16,), \"float32\"), H: T.Tensor((4,), \"float16\")):\n"
      "    with T.Kernel(1, threads=128) as bx:\n"
      "        a = T.alloc_shared((32, 16), \"float16\")\n"
      "        b = T.alloc_shared((32, 16), \"float16\")\n"
      "        c = T.alloc_fragment((16, 16), \"float16\")\n"
      "        ia = T.alloc_shared((16, 32), \"int8\")\n"
      "        ib = T.alloc_shared((16, 32), \"int8\")\n"
      "        ic = T.alloc_fragment((16, 16), \"int32\")\n"
      "        T.copy(A, a)\n"
      "        T.copy(B, b)\n"
      "        T.fill(c, 100.0)\n"
      "        T.gemm(a, b, c, transpose_A=True, clear_accum=True)\n"
      "        T.copy(c, C)\n"
      "        T.copy(I, ia)\n"
      "        T.copy(J, ib)\n"
      "        T.fill(ic, 7)\n"
      "        T.gemm(ia, ib, ic, transpose_B=True)\n"
      "        T.copy(ic, K)\n"
      "        acc = T.alloc_var(\"float32\", 1.0)\n"
      "        for i in T.unroll(3):\n"
      "            acc = acc * 2.0\n"
      "        for i in T.serial(1, 8, 3):\n"
      "            acc = acc + T.Cast(\"float32\", i)\n"
      "        for i in T.serial(7, 0, -2):\n"
      "            acc = acc + T.Cast(\"float32\", i) * 100.0\n"
      "        G[0] = acc\n"
      "        G[1] = T.exp(F[0])\n"
      "        G[2] = T.log(F[1])\n"
      "        G[3] = T.tanh(F[0])\n"
      "        G[4] = T.erf(F[0])\n"
      "        G[5] = T.sigmoid(F[0])\n"
      "        G[6] = T.rsqrt(F[1])\n"
      "        G[7] = T.pow(F[1], F[0])\n"
      "        G[8] = T.ceil(F[0])\n"
      "        G[9] = T.trunc(-F[0])\n"
      "        G[10] = T.abs(-F[1])\n"
      "        G[11] = T.max(F[0], F[1])\n"
      "        G[12] = T.clamp(F[1], 0.0, 1.0)\n"
      "        G[13] = T.exp2(F[0])\n"
      "        G[14] = T.sqrt(F[1])\n"
      "        G[15] = T.Cast(\"float32\", T.ceildiv(bx + 13, 4))\n"
      "        H[0] = T.exp(T.Cast(\"float16\", F[0]))\n"
      "        H[1] = T.Cast(\"float16\", F[0]) * T.Cast(\"float16\", F[1])\n"
      "        H[2] = T.Cast(\"float16\", F[0]) / T.Cast(\"float16\", F[1])\n"
      "        H[3] = T.fma(T.Cast(\"float16\", F[0]), T.Cast(\"float16\", F[1]), T.Cast(\"float16\", F[2]))\n");
  uint16_t A[32 * 16], B[32 * 16], C[16 * 16], H[4];
  int8_t I[16 * 32], J[16 * 32];
  int32_t K[16 * 16];
  float F[8] = {0.7f, 2.3f, -1.1f, 0, 0, 0, 0, 0}, G[16];
  for (int i = 0; i < 32 * 16; i++) {
    A[i] = h_enc(urand());
    B[i] = h_enc(urand());
    I[i] = (int8_t)(urand() * 128);
    J[i] = (int8_t)(urand() * 128);
  }
  tl_interp_arg args[9] = {T2(A, 32, 16), T2(B, 32, 16), T2(C, 16, 16), T2(I, 16, 32), T2(J, 16, 32),
                           T2(K, 16, 16), T1(F, 8),      T1(G, 16),     T1(H, 4)};
  run(m, args, 9, NULL, 0, NULL);
  for (int i = 0; i < 16; i++)
    for (int j = 0; j < 16; j++) {
      /* transpose_A, clear_accum, f16 accumulator: as mma.sync m16n8k16, k in
       * chunks of 16, the f16 accumulator rounded once per chunk */
      double c = 0, s = 0;
      int32_t is = 7;
      for (int k = 0; k < 32; k++) {
        s += h_dec(A[k * 16 + i]) * h_dec(B[k * 16 + j]);
        if (k % 16 == 15) c = h_round(s + c), s = 0;
        is += I[i * 32 + k] * J[j * 32 + k];
      }
      cr_assert_eq(h_dec(C[i * 16 + j]), c, "C[%d,%d]", i, j);
      cr_assert_eq(K[i * 16 + j], is, "K[%d,%d]", i, j);
    }
  float x = F[0], y = F[1];
  float want[16] = {1620.0f,
                    expf(x),
                    logf(y),
                    tanhf(x),
                    erff(x),
                    1.0f / (1.0f + expf(-x)),
                    1.0f / sqrtf(y),
                    powf(y, x),
                    1.0f,
                    -0.0f,
                    y,
                    y,
                    1.0f,
                    exp2f(x),
                    sqrtf(y),
                    4.0f};
  for (int i = 0; i < 16; i++) cr_assert_eq(G[i], want[i], "G[%d] = %.9g, expected %.9g", i, G[i], want[i]);
  float hx = (float)h_dec(h_enc(x)), hy = (float)h_dec(h_enc(y)), hz = (float)h_dec(h_enc(F[2]));
  cr_assert_eq(h_dec(H[0]), h_round(expf(hx)));
  cr_assert_eq(h_dec(H[1]), h_round(hx * hy));
  cr_assert_eq(h_dec(H[2]), h_round(hx / hy));
  cr_assert_eq(h_dec(H[3]), h_round(fma(hx, hy, hz)));
  tl_module_destroy(m);
}

Test(ref_eval, per_thread_barrier_phases) {
  tl_module *m = parse_text(
      "import tilelang.language as T\n"
      "@T.prim_func\n"
      "def main(O: T.Tensor((64,), \"int32\")):\n"
      "    with T.Kernel(2, threads=32) as bx:\n"
      "        s = T.alloc_shared((32,), \"int32\")\n"
      "        tid = T.get_thread_binding(0)\n"
      "        s[tid] = tid * 10 + bx\n"
      "        T.sync_threads()\n"
      "        O[bx * 32 + tid] = s[(tid + 1) % 32] + T.get_lane_idx() * 0\n");
  int32_t O[64] = {0};
  tl_interp_arg args[1] = {T1(O, 64)};
  run(m, args, 1, NULL, 0, NULL);
  for (int b = 0; b < 2; b++)
    for (int t = 0; t < 32; t++) cr_assert_eq(O[b * 32 + t], ((t + 1) % 32) * 10 + b);
  tl_module_destroy(m);
}

Test(ref_eval, uninitialised_fragment_is_nan) {
  tl_module *m = parse_text(
      "import tilelang.language as T\n"
      "@T.prim_func\n"
      "def main(O: T.Tensor((4,), \"float32\")):\n"
      "    with T.Kernel(1, threads=32) as bx:\n"
      "        f = T.alloc_fragment((4,), \"float32\")\n"
      "        T.copy(f, O)\n");
  float O[4] = {0};
  tl_interp_arg args[1] = {T1(O, 4)};
  run(m, args, 1, NULL, 0, NULL);
  for (int i = 0; i < 4; i++) cr_assert(isnan(O[i]));
  tl_module_destroy(m);
}

/* ---------------------------------------------------------------- errors */
static void expect_error(const char *src, tl_interp_arg *args, int nargs, const char *needle) {
  tl_module *m = parse_text(src);
  char *msg = NULL;
  bool ok = run(m, args, nargs, NULL, 0, &msg);
  cr_assert(!ok, "expected an error containing \"%s\"", needle);
  cr_assert(strstr(msg, needle), "message \"%s\" lacks \"%s\"", msg, needle);
  cr_assert(strstr(msg, "test.py:"), "message \"%s\" has no location", msg);
  free(msg);
  tl_module_destroy(m);
}

Test(ref_eval, error_thread_binding_in_tile_op) {
  float A[64], O[64];
  tl_interp_arg args[2] = {T1(A, 64), T1(O, 64)};
  expect_error(
      "import tilelang.language as T\n"
      "@T.prim_func\n"
      "def main(A: T.Tensor((64,), \"float32\"), O: T.Tensor((64,), \"float32\")):\n"
      "    with T.Kernel(1, threads=32) as bx:\n"
      "        f = T.alloc_fragment((32,), \"float32\")\n"
      "        T.copy(A[T.get_thread_binding(0):T.get_thread_binding(0) + 32], f)\n"
      "        T.copy(f, O[0:32])\n",
      args, 2, "T.get_thread_binding has no meaning here");
}

/* The same through a let of the thread index (the let is skipped in a tile program: its variable read in a
 * tile op's region was thread 0's for every thread, a silent wrong reference; the mutation fuzzer's find) */
Test(ref_eval, error_thread_let_in_tile_op) {
  float A[64], O[64];
  tl_interp_arg args[2] = {T1(A, 64), T1(O, 64)};
  expect_error(
      "import tilelang.language as T\n"
      "@T.prim_func\n"
      "def main(A: T.Tensor((64,), \"float32\"), O: T.Tensor((64,), \"float32\")):\n"
      "    with T.Kernel(1, threads=2) as bx:\n"
      "        t = T.get_thread_binding(0)\n"
      "        L = T.alloc_local((32,), \"float32\")\n"
      "        T.copy(A[t * 32:t * 32 + 32], L)\n"
      "        T.copy(L, O[t * 32:t * 32 + 32])\n",
      args, 2, "'t' (a let of the thread index) has no meaning here");
}

Test(ref_eval, error_block_op_in_per_thread_code) {
  float A[64], O[64];
  tl_interp_arg args[2] = {T1(A, 64), T1(O, 64)};
  expect_error(
      "import tilelang.language as T\n"
      "@T.prim_func\n"
      "def main(A: T.Tensor((64,), \"float32\"), O: T.Tensor((64,), \"float32\")):\n"
      "    with T.Kernel(1, threads=32) as bx:\n"
      "        s = T.alloc_shared((64,), \"float32\")\n"
      "        T.copy(A, s)\n"
      "        tid = T.get_thread_binding(0)\n"
      "        O[tid] = s[tid]\n",
      args, 2, "per-thread code");
}

Test(ref_eval, error_out_of_bounds_store) {
  float O[8];
  tl_interp_arg args[1] = {T1(O, 8)};
  expect_error(
      "import tilelang.language as T\n"
      "@T.prim_func\n"
      "def main(O: T.Tensor((8,), \"float32\")):\n"
      "    with T.Kernel(1, threads=32) as bx:\n"
      "        for i in T.serial(9):\n"
      "            O[i] = 1.0\n",
      args, 1, "index 8 is out of bounds for dimension 0 of global buffer 'O'");
}

/* T.device_assert (docs/language.md "T.device_assert"): a passing assert
 * runs; a failing one is a located error with the message, the block and,
 * in per-thread code, the thread. */
static const char *const device_assert_src =
    "import tilelang.language as T\n"
    "@T.prim_func\n"
    "def main(O: T.Tensor((64,), \"int32\"), lim: T.int32):\n"
    "    with T.Kernel(2, threads=32) as bx:\n"
    "        for i in T.Parallel(32):\n"
    "            T.device_assert(bx * 32 + i < lim, \"past the limit\")\n"
    "            O[bx * 32 + i] = i\n";
static const char *const device_assert_thread_src =
    "import tilelang.language as T\n"
    "@T.prim_func\n"
    "def main(O: T.Tensor((64,), \"int32\"), lim: T.int32):\n"
    "    with T.Kernel(2, threads=32) as bx:\n"
    "        tid = T.get_thread_binding(0)\n"
    "        T.device_assert(tid + bx * 32 < lim, msg=\"per thread\")\n"
    "        O[bx * 32 + tid] = tid\n";

Test(ref_eval, device_assert) {
  int32_t O[64] = {0};
  tl_interp_arg args[2] = {T1(O, 64), {.i = 64}};
  for (int k = 0; k < 2; k++) {
    tl_module *m = parse_text(k ? device_assert_thread_src : device_assert_src);
    memset(O, 0xFF, sizeof O);
    run(m, args, 2, NULL, 0, NULL);
    for (int i = 0; i < 64; i++) cr_assert_eq(O[i], i % 32);
    tl_module_destroy(m);
  }
  args[1].i = 40; /* fails in block 1: at i = 8 of the T.Parallel, at thread 8 */
  expect_error(device_assert_src, args, 2,
               "test.py:6:13: error: T.device_assert failed: past the limit (block (1, 0, 0))");
  expect_error(device_assert_thread_src, args, 2, "T.device_assert failed: per thread (block (1, 0, 0), thread 8)");
}

Test(ref_eval, error_argument_shape) {
  const char *defs[] = {"M=64", "N=64", "K=64", "block_M=32", "block_N=32", "block_K=32", NULL};
  tl_module *m = parse_example("gemm", defs);
  uint16_t a[64 * 64], b[64 * 64], c[64 * 64];
  tl_interp_arg args[3] = {T2(a, 64, 64), T2(b, 32, 64), T2(c, 64, 64)};
  char *msg = NULL;
  cr_assert(!run(m, args, 3, NULL, 0, &msg));
  cr_assert(strstr(msg, "argument 1 ('B'): dimension 0 is 32, expected 64"), "%s", msg);
  free(msg);
  args[1] = T2(b, 64, 64);
  cr_assert(!run(m, args, 2, NULL, 0, &msg));
  cr_assert(strstr(msg, "takes 3 arguments, got 2"), "%s", msg);
  free(msg);
  tl_module_destroy(m);
}
