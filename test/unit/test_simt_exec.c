/* Unit tests of the SIMT executor (lib/Interp/simt_exec.c, tl_simt_exec):
 *  1. every example that lowers today, at small sizes (including sizes that
 *     are not multiples of the tile), run on the executor after
 *     tl_lower_module, compared with a direct C computation of what the
 *     kernel means (bit-exact where the arithmetic is the same) and with
 *     the tile-level reference evaluator tl_ref_eval (docs/testing.md "Numeric checks" tolerances);
 *  2. divergent control flow (thread-dependent loop bounds, if/else);
 *  3. planted faults, each caught with its statement's line: a missing
 *     barrier between a shared write and another thread's read, a missing
 *     cp.async wait_group, a barrier in a divergent branch, an out-of-bounds
 *     store, a read of uninitialised shared memory, a write-after-read race,
 *     a misaligned vector access, ldmatrix by a partial warp;
 *  4. a 64x64x64 f16 GEMM written in SIMT IR (cp.async + ldmatrix + mma, 128
 *     threads) against a float64 product, and its run time (< 1 s). */
#include <criterion/criterion.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "IR/tir.h"
#include "Interp/interp.h"
#include "Lower/lower.h"
#include "test_util.h"

/* ---------------------------------------------------------- encodings */
static uint16_t h_bits(double v) { /* v already an f16 value */
  if (isnan(v)) return 0x7E00;
  uint16_t s = signbit(v) ? 0x8000 : 0;
  v = fabs(v);
  if (isinf(v)) return s | 0x7C00;
  if (v < ldexp(1, -14)) return (uint16_t)(s | (uint16_t)(v * 16777216.0));
  int e = (int)floor(log2(v));
  if (ldexp(1, e) > v) e--;
  if (ldexp(1, e + 1) <= v) e++;
  int mant = (int)((v / ldexp(1, e) - 1.0) * 1024.0);
  return (uint16_t)(s | ((e + 15) << 10) | mant);
}
static double h_val(uint16_t h) {
  int e = (h >> 10) & 31, m = h & 1023;
  double v = e == 0 ? m * ldexp(1, -24) : e == 31 ? (m ? NAN : INFINITY) : (1024 + m) * ldexp(1, e - 25);
  return (h & 0x8000) ? -v : v;
}
static double bf_val(uint16_t h) {
  uint32_t u = (uint32_t)h << 16;
  float f;
  memcpy(&f, &u, 4);
  return f;
}
static uint16_t bf_bits(double v) { /* v already a bf16 value */
  float f = (float)v;
  uint32_t u;
  memcpy(&u, &f, 4);
  return (uint16_t)(u >> 16);
}

static uint64_t rng = 88172645463325252ull;
static double urand(void) { /* uniform in [-1, 1) */
  rng ^= rng << 13;
  rng ^= rng >> 7;
  rng ^= rng << 17;
  return (double)(rng >> 11) / 9007199254740992.0 * 2.0 - 1.0;
}

/* ------------------------------------------------------------ modules */
/* Parses (and lowers when `lower`) the kernel text; asserts success. */
static tl_module *parse(const char *src, size_t len, const char *name, const tl_define *defs, size_t ndefs,
                        bool lower) {
  tl_module *m = tl_module_new();
  tl_diag d;
  tl_diag_init(&d);
  bool ok = tl_frontend_parse(m, &d, src, len, name, defs, ndefs);
  if (ok && lower) {
    tl_lower_options o = {.target = tl_target_lookup("sm_80"), .verify_each = true};
    ok = tl_lower_module(m, &o, &d);
  }
  cr_assert(ok, "%s: %s", name, d.out.data ? d.out.data : "");
  tl_diag_free(&d);
  return m;
}
static tl_module *parse_example(const char *file, const tl_define *defs, size_t ndefs, bool lower) {
  char path[256];
  snprintf(path, sizeof path, "examples/%s", file);
  size_t len;
  char *src = tl_test_read_file(path, &len);
  tl_module *m = parse(src, len, file, defs, ndefs, lower);
  free(src);
  return m;
}

static tl_interp_arg tensor(void *data, int ndim, int64_t d0, int64_t d1) {
  tl_interp_arg a;
  memset(&a, 0, sizeof a);
  a.is_tensor = true;
  a.data = data;
  a.ndim = ndim;
  a.shape[0] = d0;
  a.shape[1] = d1;
  return a;
}

static void run_simt(const tl_module *m, tl_interp_arg *args, int nargs, const int64_t *dyn, int ndyn) {
  tl_diag d;
  tl_diag_init(&d);
  bool ok = tl_simt_exec(m, 0, args, nargs, dyn, ndyn, NULL, &d);
  cr_assert(ok, "tl_simt_exec failed: %s", d.out.data ? d.out.data : "");
  tl_diag_free(&d);
}
static void run_ref(const tl_module *m, tl_interp_arg *args, int nargs, const int64_t *dyn, int ndyn) {
  tl_diag d;
  tl_diag_init(&d);
  bool ok = tl_ref_eval(m, 0, args, nargs, dyn, ndyn, &d);
  cr_assert(ok, "tl_ref_eval failed: %s", d.out.data ? d.out.data : "");
  tl_diag_free(&d);
}

/* f32 arrays: exact equality with the C result, docs/testing.md "Numeric checks" tolerance with ref. */
static void check_f32(const float *got, const float *want, const float *ref, size_t n, const char *what) {
  for (size_t i = 0; i < n; i++) {
    cr_assert(got[i] == want[i] || (isnan(got[i]) && isnan(want[i])), "%s[%zu]: executor %.9g, C %.9g", what, i,
              (double)got[i], (double)want[i]);
    if (ref)
      cr_assert(fabs((double)got[i] - (double)ref[i]) <= 1e-4 + 1e-4 * fabs((double)ref[i]),
                "%s[%zu]: executor %.9g, reference evaluator %.9g", what, i, (double)got[i], (double)ref[i]);
  }
}

static float *frand(size_t n) {
  float *p = malloc(sizeof(float) * (n ? n : 1));
  for (size_t i = 0; i < n; i++) p[i] = (float)urand();
  return p;
}
static float *fnan(size_t n) {
  float *p = malloc(sizeof(float) * (n ? n : 1));
  for (size_t i = 0; i < n; i++) p[i] = NAN;
  return p;
}

/* ======================================================== 1. examples */
static void elementwise_add_case(int M, int N) {
  char dm[32], dn[32];
  snprintf(dm, sizeof dm, "%d", M);
  snprintf(dn, sizeof dn, "%d", N);
  tl_define defs[2] = {{"M", dm}, {"N", dn}};
  tl_module *lo = parse_example("elementwise_add.py", defs, 2, true);
  tl_module *hi = parse_example("elementwise_add.py", defs, 2, false);
  size_t n = (size_t)M * N;
  float *A = frand(n), *B = frand(n), *C = fnan(n), *R = fnan(n), *W = malloc(sizeof(float) * n);
  for (size_t i = 0; i < n; i++) W[i] = A[i] + B[i];
  tl_interp_arg args[3] = {tensor(A, 2, M, N), tensor(B, 2, M, N), tensor(C, 2, M, N)};
  run_simt(lo, args, 3, NULL, 0);
  args[2].data = R;
  run_ref(hi, args, 3, NULL, 0);
  check_f32(C, W, R, n, "elementwise_add C");
  free(A), free(B), free(C), free(R), free(W);
  tl_module_destroy(lo);
  tl_module_destroy(hi);
}
Test(simt_examples, elementwise_add) {
  elementwise_add_case(64, 256);
  elementwise_add_case(40, 200); /* partial tiles in both dimensions */
  elementwise_add_case(33, 202); /* rows not a multiple of 4: narrower vectors */
  elementwise_add_case(1, 3);
}

static void add_1d_case(int64_t n) {
  tl_module *lo = parse_example("elementwise_add_1d.py", NULL, 0, true);
  tl_module *hi = parse_example("elementwise_add_1d.py", NULL, 0, false);
  float *A = frand((size_t)n), *B = frand((size_t)n), *C = fnan((size_t)n), *R = fnan((size_t)n);
  float *W = malloc(sizeof(float) * (size_t)(n ? n : 1));
  for (int64_t i = 0; i < n; i++) W[i] = A[i] + B[i];
  tl_interp_arg args[3] = {tensor(A, 1, n, 0), tensor(B, 1, n, 0), tensor(C, 1, n, 0)};
  run_simt(lo, args, 3, &n, 1);
  args[2].data = R;
  run_ref(hi, args, 3, &n, 1);
  check_f32(C, W, R, (size_t)n, "elementwise_add_1d C");
  free(A), free(B), free(C), free(R), free(W);
  tl_module_destroy(lo);
  tl_module_destroy(hi);
}
Test(simt_examples, elementwise_add_1d) {
  add_1d_case(2048);
  add_1d_case(1000);
  add_1d_case(2053);
  add_1d_case(5);
}

Test(simt_examples, silu) {
  int64_t sizes[] = {1024, 777, 3};
  for (int s = 0; s < 3; s++) {
    int64_t n = sizes[s];
    tl_module *lo = parse_example("silu.py", NULL, 0, true);
    tl_module *hi = parse_example("silu.py", NULL, 0, false);
    float *X = frand((size_t)n), *Y = fnan((size_t)n), *R = fnan((size_t)n), *W = malloc(sizeof(float) * (size_t)n);
    for (int64_t i = 0; i < n; i++) {
      float x = X[i] * 4.0f, den = 1.0f + expf(-x);
      X[i] = x;
      W[i] = x / den;
    }
    tl_interp_arg args[2] = {tensor(X, 1, n, 0), tensor(Y, 1, n, 0)};
    run_simt(lo, args, 2, &n, 1);
    args[1].data = R;
    run_ref(hi, args, 2, &n, 1);
    check_f32(Y, W, R, (size_t)n, "silu Y");
    free(X), free(Y), free(R), free(W);
    tl_module_destroy(lo);
    tl_module_destroy(hi);
  }
}

Test(simt_examples, elementwise_fma_row) {
  int sizes[][2] = {{64, 128}, {40, 200}};
  for (int s = 0; s < 2; s++) {
    int M = sizes[s][0], N = sizes[s][1];
    char dm[32], dn[32];
    snprintf(dm, sizeof dm, "%d", M);
    snprintf(dn, sizeof dn, "%d", N);
    tl_define defs[2] = {{"M", dm}, {"N", dn}};
    tl_module *lo = parse_example("elementwise_fma_row.py", defs, 2, true);
    tl_module *hi = parse_example("elementwise_fma_row.py", defs, 2, false);
    size_t n = (size_t)M * N;
    float *X = frand(n), *w = frand((size_t)N), *Z = frand(n), *Y = fnan(n), *R = fnan(n);
    float *W = malloc(sizeof(float) * n);
    for (int i = 0; i < M; i++)
      for (int j = 0; j < N; j++) W[(size_t)i * N + j] = fmaf(X[(size_t)i * N + j], w[j], Z[(size_t)i * N + j]);
    tl_interp_arg args[4] = {tensor(X, 2, M, N), tensor(w, 1, N, 0), tensor(Z, 2, M, N), tensor(Y, 2, M, N)};
    run_simt(lo, args, 4, NULL, 0);
    args[3].data = R;
    run_ref(hi, args, 4, NULL, 0);
    check_f32(Y, W, R, n, "fma_row Y");
    free(X), free(w), free(Z), free(Y), free(R), free(W);
    tl_module_destroy(lo);
    tl_module_destroy(hi);
  }
}

Test(simt_examples, cast_copy) {
  int sizes[][2] = {{64, 64}, {70, 90}};
  for (int s = 0; s < 2; s++) {
    int M = sizes[s][0], N = sizes[s][1];
    char dm[32], dn[32];
    snprintf(dm, sizeof dm, "%d", M);
    snprintf(dn, sizeof dn, "%d", N);
    tl_define defs[2] = {{"M", dm}, {"N", dn}};
    tl_module *lo = parse_example("cast_copy.py", defs, 2, true);
    tl_module *hi = parse_example("cast_copy.py", defs, 2, false);
    size_t n = (size_t)M * N;
    float *A = frand(n);
    A[0] = 1.00390625f; /* a tie between two bf16 values: rounds to even (1.0) */
    A[1] = 1.01171875f; /* tie: rounds to even (1.015625) */
    uint16_t *B = malloc(2 * n), *R = malloc(2 * n);
    memset(B, 0xFF, 2 * n);
    memset(R, 0xFF, 2 * n);
    tl_interp_arg args[2] = {tensor(A, 2, M, N), tensor(B, 2, M, N)};
    run_simt(lo, args, 2, NULL, 0);
    args[1].data = R;
    run_ref(hi, args, 2, NULL, 0);
    for (size_t i = 0; i < n; i++) {
      uint16_t want = bf_bits(tl_round_to_dtype(A[i], TL_DT(TL_TYPE_BFLOAT, 16)));
      cr_assert(B[i] == want, "cast_copy B[%zu] = 0x%04x, want 0x%04x (A = %.9g)", i, B[i], want, (double)A[i]);
      cr_assert(R[i] == want, "reference evaluator B[%zu] = 0x%04x, want 0x%04x", i, R[i], want);
    }
    cr_assert(B[0] == 0x3F80 && B[1] == 0x3F82);
    free(A), free(B), free(R);
    tl_module_destroy(lo);
    tl_module_destroy(hi);
  }
}

Test(simt_examples, gemv) {
  int N = 256, K = 96;
  tl_define defs[2] = {{"N", "256"}, {"K", "96"}};
  tl_module *lo = parse_example("gemv.py", defs, 2, true);
  tl_module *hi = parse_example("gemv.py", defs, 2, false);
  uint16_t *A = malloc(2 * (size_t)N * K), *x = malloc(2 * (size_t)K), *y = malloc(2 * (size_t)N),
           *R = malloc(2 * (size_t)N);
  double *Ad = malloc(sizeof(double) * (size_t)N * K), *xd = malloc(sizeof(double) * (size_t)K);
  for (size_t i = 0; i < (size_t)N * K; i++) {
    Ad[i] = tl_round_to_dtype(urand(), TL_FLOAT16);
    A[i] = h_bits(Ad[i]);
  }
  for (int k = 0; k < K; k++) {
    xd[k] = tl_round_to_dtype(urand(), TL_FLOAT16);
    x[k] = h_bits(xd[k]);
  }
  tl_interp_arg args[3] = {tensor(A, 2, N, K), tensor(x, 1, K, 0), tensor(y, 1, N, 0)};
  run_simt(lo, args, 3, NULL, 0);
  args[2].data = R;
  run_ref(hi, args, 3, NULL, 0);
  for (int i = 0; i < N; i++) {
    float acc = 0.0f;
    for (int k = 0; k < K; k++) {
      float p = (float)Ad[(size_t)i * K + k] * (float)xd[k];
      acc = acc + p;
    }
    uint16_t want = h_bits(tl_round_to_dtype(acc, TL_FLOAT16));
    cr_assert(y[i] == want, "gemv y[%d] = %.6g, want %.6g", i, h_val(y[i]), h_val(want));
    cr_assert(fabs(h_val(R[i]) - h_val(want)) <= 1e-2 + 1e-2 * fabs(h_val(want)), "gemv ref y[%d]", i);
  }
  free(A), free(x), free(y), free(R), free(Ad), free(xd);
  tl_module_destroy(lo);
  tl_module_destroy(hi);
}

Test(simt_examples, saxpy) {
  int64_t sizes[] = {512, 1000};
  for (int s = 0; s < 2; s++) {
    int64_t n = sizes[s];
    char dn[32];
    snprintf(dn, sizeof dn, "%lld", (long long)n);
    tl_define defs[1] = {{"N", dn}};
    tl_module *lo = parse_example("saxpy.py", defs, 1, true);
    tl_module *hi = parse_example("saxpy.py", defs, 1, false);
    float *X = frand((size_t)n), *Y = frand((size_t)n), *Y2 = malloc(sizeof(float) * (size_t)n),
          *W = malloc(sizeof(float) * (size_t)n);
    memcpy(Y2, Y, sizeof(float) * (size_t)n);
    float alpha = 0.7f;
    for (int64_t i = 0; i < n; i++) {
      float p = alpha * X[i];
      W[i] = p + Y[i];
    }
    tl_interp_arg args[3] = {tensor(X, 1, n, 0), tensor(Y, 1, n, 0), {0}};
    args[2].f = 0.7;
    run_simt(lo, args, 3, NULL, 0);
    args[1].data = Y2;
    run_ref(hi, args, 3, NULL, 0);
    check_f32(Y, W, Y2, (size_t)n, "saxpy Y");
    free(X), free(Y), free(Y2), free(W);
    tl_module_destroy(lo);
    tl_module_destroy(hi);
  }
}

/* ==================================================== 2. control flow */
static const char *divergent_src =
    "import tilelang.language as T\n"
    "\n"
    "@T.prim_func\n"
    "def main(A: T.Tensor((100,), \"int32\"), B: T.Tensor((100,), \"int32\")):\n"
    "    with T.Kernel(1, threads=100) as bx:\n"
    "        acc = T.alloc_local((1,), \"int32\")\n"
    "        tid = T.get_thread_binding(0)\n"
    "        acc[0] = 0\n"
    "        for i in T.serial(tid % 7):\n"
    "            if i % 2 == 0:\n"
    "                acc[0] = acc[0] + A[tid] * i\n"
    "            else:\n"
    "                acc[0] = acc[0] - 1\n"
    "        B[tid] = acc[0] + T.shfl_xor(tid, 0) - tid\n";

Test(simt_control, divergent_loops) {
  /* threads = 100: the last warp is partial, so the full-warp shuffle errs */
  tl_module *m = parse(divergent_src, strlen(divergent_src), "divergent.py", NULL, 0, false);
  int32_t A[100], B[100];
  for (int i = 0; i < 100; i++) A[i] = i * 3 - 50;
  tl_interp_arg args[2] = {tensor(A, 1, 100, 0), tensor(B, 1, 100, 0)};
  tl_diag d;
  tl_diag_init(&d);
  cr_assert(!tl_simt_exec(m, 0, args, 2, NULL, 0, NULL, &d));
  cr_assert(strstr(d.out.data, "partial warp"), "%s", d.out.data);
  cr_assert_eq(d.first_error.line, 14);
  tl_diag_free(&d);
  tl_module_destroy(m);
  /* without the shuffle */
  char *src = strdup(divergent_src);
  const char *cut = " + T.shfl_xor(tid, 0) - tid";
  char *p = strstr(src, cut);
  cr_assert(p);
  memmove(p, p + strlen(cut), strlen(p + strlen(cut)) + 1);
  m = parse(src, strlen(src), "divergent.py", NULL, 0, false);
  run_simt(m, args, 2, NULL, 0);
  for (int t = 0; t < 100; t++) {
    int acc = 0;
    for (int i = 0; i < t % 7; i++) acc += (i % 2 == 0) ? A[t] * i : -1;
    cr_assert_eq(B[t], acc, "B[%d] = %d, want %d", t, B[t], acc);
  }
  free(src);
  tl_module_destroy(m);
}

/* ===================================================== 3. planted faults */
/* Runs src (a SIMT kernel with A, B: float32[512]); expects failure with
 * `msg` in the diagnostics at line `line`. */
static void expect_fault(const char *src, int line, const char *msg) {
  tl_module *m = parse(src, strlen(src), "fault.py", NULL, 0, false);
  float A[520], B[520];
  for (int i = 0; i < 520; i++) A[i] = (float)i;
  tl_interp_arg args[2] = {tensor(A, 1, 520, 0), tensor(B, 1, 520, 0)};
  tl_diag d;
  tl_diag_init(&d);
  bool ok = tl_simt_exec(m, 0, args, 2, NULL, 0, NULL, &d);
  cr_assert(!ok, "expected a failure with '%s'", msg);
  cr_assert(d.out.data && strstr(d.out.data, msg), "diagnostics lack '%s':\n%s", msg, d.out.data);
  cr_assert_eq(d.first_error.line, line, "error at line %d, expected %d:\n%s", d.first_error.line, line, d.out.data);
  cr_assert(strstr(d.out.data, "fault.py:"), "no file location:\n%s", d.out.data);
  tl_diag_free(&d);
  tl_module_destroy(m);
}
static void expect_ok(const char *src, float *B_out) {
  tl_module *m = parse(src, strlen(src), "ok.py", NULL, 0, false);
  float A[520], B[520];
  for (int i = 0; i < 520; i++) A[i] = (float)i, B[i] = -1;
  tl_interp_arg args[2] = {tensor(A, 1, 520, 0), tensor(B, 1, 520, 0)};
  run_simt(m, args, 2, NULL, 0);
  if (B_out) memcpy(B_out, B, sizeof B);
  tl_module_destroy(m);
}

#define HEAD                                                                                                           \
  "import tilelang.language as T\n"                                                                                    \
  "\n"                                                                                                                 \
  "@T.prim_func\n"                                                                                                     \
  "def main(A: T.Tensor((520,), \"float32\"), B: T.Tensor((520,), \"float32\")):\n"                                    \
  "    with T.Kernel(1, threads=128) as bx:\n"                                                                         \
  "        S = T.alloc_shared((512,), \"float32\")\n"                                                                  \
  "        tid = T.get_thread_binding(0)\n"
/* HEAD is 7 lines; the next line is line 8. */

Test(simt_faults, missing_barrier) {
  expect_fault(HEAD
               "        S[tid] = A[tid]\n"
               "        B[tid] = S[(tid + 1) % 128]\n",
               9, "data race on shared memory: thread 0 reads 'S'[1], written by thread 1");
  float B[520];
  expect_ok(HEAD
            "        S[tid] = A[tid]\n"
            "        T.sync_threads()\n"
            "        B[tid] = S[(tid + 1) % 128]\n",
            B);
  for (int i = 0; i < 128; i++) cr_assert_eq(B[i], (float)((i + 1) % 128));
  /* a thread reading its own write needs no barrier */
  expect_ok(HEAD
            "        S[tid] = A[tid]\n"
            "        B[tid] = S[tid]\n",
            NULL);
}

Test(simt_faults, write_after_read) {
  expect_fault(HEAD
               "        S[tid] = A[tid]\n"
               "        T.sync_threads()\n"
               "        B[tid] = S[(tid + 1) % 128]\n"
               "        S[tid] = 0.0\n",
               11, "data race on shared memory: thread 1 writes 'S'[1], which thread 0 read");
  expect_ok(HEAD
            "        S[tid] = A[tid]\n"
            "        T.sync_threads()\n"
            "        B[tid] = S[(tid + 1) % 128]\n"
            "        T.sync_threads()\n"
            "        S[tid] = 0.0\n",
            NULL);
}

/* Offsets far outside the buffers: bounded before they are scaled to bytes (issue 15's fuzzer: k * -2^63
   in a pipelined copy's index; 2^62 x 4 bytes wrapped to byte 0 and the copy read A[0] without UBSan). */
Test(simt_faults, cp_async_offset_past_int64_bytes) {
  expect_fault(HEAD "        T.ptx_cp_async(S, tid * 4, A, T.int64(4611686018427387904) + tid * 4, 16, True)\n", 8,
               "out-of-bounds cp.async from global buffer 'A': 16 bytes at element 4611686018427387904 of 520 in "
               "thread 0");
  expect_fault(HEAD "        T.ptx_cp_async(S, T.int64(4611686018427387904) + tid * 4, A, tid * 4, 16, True)\n", 8,
               "out-of-bounds cp.async into shared buffer 'S': 16 bytes at element 4611686018427387904 of 512 in "
               "thread 0");
  expect_fault(HEAD "        T.ptx_cp_async(S, tid * 4, A, T.int64(-9223372036854775808) + tid * 4, 16, True)\n", 8,
               "out-of-bounds cp.async from global buffer 'A': 16 bytes at element -9223372036854775808 of 520");
}

Test(simt_faults, missing_wait_group) {
  expect_fault(HEAD
               "        T.ptx_cp_async(S, tid * 4, A, tid * 4, 16, True)\n"
               "        T.ptx_commit_group()\n"
               "        T.sync_threads()\n"
               "        B[tid] = S[tid * 4 + 1]\n",
               11, "before its cp.async completed");
  /* waited for, but read by another thread without a barrier after the wait */
  expect_fault(HEAD
               "        T.ptx_cp_async(S, tid * 4, A, tid * 4, 16, True)\n"
               "        T.ptx_commit_group()\n"
               "        T.sync_threads()\n"
               "        T.ptx_wait_group(0)\n"
               "        B[tid] = S[(tid * 4 + 4) % 512]\n",
               12, "data race");
  /* two groups: wait_group(1) completes only the first */
  expect_fault(HEAD
               "        T.ptx_cp_async(S, tid * 2, A, tid * 2, 8, tid < 64)\n"
               "        T.ptx_commit_group()\n"
               "        T.ptx_cp_async(S, 256 + tid * 2, A, 256 + tid * 2, 8, True)\n"
               "        T.ptx_commit_group()\n"
               "        T.ptx_wait_group(1)\n"
               "        T.sync_threads()\n"
               "        B[tid] = S[(tid * 2 + 2) % 256]\n"
               "        B[tid + 128] = S[256 + tid * 2]\n",
               15, "group 1");
  float B[520];
  expect_ok(HEAD
            "        T.ptx_cp_async(S, tid * 2, A, tid * 2, 8, tid < 64)\n"
            "        T.ptx_commit_group()\n"
            "        T.ptx_cp_async(S, 256 + tid * 2, A, 256 + tid * 2, 8, True)\n"
            "        T.ptx_commit_group()\n"
            "        T.ptx_wait_group(0)\n"
            "        T.sync_threads()\n"
            "        B[tid] = S[(tid * 2 + 2) % 256]\n"
            "        B[tid + 128] = S[256 + tid * 2]\n",
            B);
  for (int t = 0; t < 128; t++) {
    int e = (t * 2 + 2) % 256; /* copied by thread e / 2 when e < 128, zero-filled otherwise */
    cr_assert_eq(B[t], e < 128 ? (float)e : 0.0f, "B[%d] = %g", t, (double)B[t]);
    cr_assert_eq(B[t + 128], (float)(256 + t * 2));
  }
}

Test(simt_faults, divergent_barrier) {
  expect_fault(HEAD
               "        S[tid] = A[tid]\n"
               "        if tid < 64:\n"
               "            T.sync_threads()\n",
               10,
               "deadlock: every warp of the block is blocked: warp 0 (threads 0-31) at fault.py:10 waits on "
               "barrier 0 (T.sync_threads(), 128 threads, 64 arrived)");
}

Test(simt_faults, out_of_bounds_store) {
  expect_fault(HEAD
               "        S[tid] = A[tid]\n"
               "        B[tid * 5] = 1.0\n",
               9, "out-of-bounds store of global buffer 'B': index 520 (size 520) in thread 104");
  expect_fault(HEAD "        S[tid * 4 + 4] = 1.0\n", 8, "out-of-bounds store of shared buffer 'S': index 512");
}

Test(simt_faults, uninitialised_shared) {
  expect_fault(HEAD
               "        if tid < 127:\n"
               "            S[tid] = A[tid]\n"
               "        T.sync_threads()\n"
               "        B[tid] = S[tid]\n",
               11, "read of uninitialised shared memory: thread 127 reads 'S'[127]");
}

Test(simt_faults, misaligned_vector) {
  expect_fault(HEAD
               "        if tid < 100:\n"
               "            B[T.Ramp(tid * 4, 1, 4)] = A[T.Ramp(tid * 4 + 2, 1, 4)]\n",
               9, "misaligned 16-byte vector load of global buffer 'A' at element 2");
  float B[520];
  expect_ok(HEAD
            "        if tid < 100:\n"
            "            B[T.Ramp(tid * 4, 1, 4)] = A[T.Ramp(tid * 4 + 4, 1, 4)]\n",
            B);
  for (int i = 0; i < 400; i++) cr_assert_eq(B[i], (float)(i + 4));
}

Test(simt_faults, partial_warp_ldmatrix) {
  const char *src =
      "import tilelang.language as T\n"
      "\n"
      "@T.prim_func\n"
      "def main(A: T.Tensor((520,), \"float32\"), B: T.Tensor((520,), \"float32\")):\n"
      "    with T.Kernel(1, threads=64) as bx:\n"
      "        S = T.alloc_shared((512,), \"float16\")\n"
      "        R = T.alloc_local((8,), \"float16\")\n"
      "        tid = T.get_thread_binding(0)\n"
      "        for i in T.serial(8):\n"
      "            S[tid * 8 + i] = T.Cast(\"float16\", A[tid])\n"
      "        T.sync_threads()\n"
      "        if tid < 48:\n"
      "            T.ptx_ldmatrix(R, 0, S, tid * 8, 4, False)\n";
  expect_fault(src, 13, "ldmatrix executed by a partial warp");
}

/* ================================================ 4. SIMT GEMM and speed */
static const char *gemm_src =
    "import tilelang.language as T\n"
    "\n"
    "@T.prim_func\n"
    "def main(A: T.Tensor((64, 64), \"float16\"), B: T.Tensor((64, 64), \"float16\"), C: T.Tensor((64, 64), "
    "\"float32\")):\n"
    "    with T.Kernel(1, threads=128) as bx:\n"
    "        As = T.alloc_shared((4096,), \"float16\")\n"
    "        Bs = T.alloc_shared((4096,), \"float16\")\n"
    "        af = T.alloc_local((8,), \"float16\")\n"
    "        bf = T.alloc_local((4,), \"float16\")\n"
    "        acc = T.alloc_local((32,), \"float32\")\n"
    "        tid = T.get_thread_binding(0)\n"
    "        warp = tid // 32\n"
    "        lane = tid % 32\n"
    "        for i in T.serial(32):\n"
    "            acc[i] = 0.0\n"
    "        for c in T.serial(4):\n"
    "            T.ptx_cp_async(As, (c * 128 + tid) * 8, A, (c * 128 + tid) * 8, 16, True)\n"
    "            T.ptx_cp_async(Bs, (c * 128 + tid) * 8, B, (c * 128 + tid) * 8, 16, True)\n"
    "        T.ptx_commit_group()\n"
    "        T.ptx_wait_group(0)\n"
    "        T.sync_threads()\n"
    "        for kk in T.serial(4):\n"
    "            for mi in T.serial(2):\n"
    "                T.ptx_ldmatrix(af, 0, As, (warp // 2 * 32 + mi * 16 + lane % 16) * 64 + kk * 16 + lane // 16 * 8, "
    "4, False)\n"
    "                for ni in T.serial(4):\n"
    "                    T.ptx_ldmatrix(bf, 0, Bs, (kk * 16 + lane % 16) * 64 + warp % 2 * 32 + ni * 8, 2, True)\n"
    "                    T.ptx_mma(af, 0, bf, 0, acc, (mi * 4 + ni) * 4, \"m16n8k16\")\n"
    "        for mo in T.serial(2):\n"
    "            for no in T.serial(4):\n"
    "                for h in T.serial(2):\n"
    "                    for j in T.serial(2):\n"
    "                        C[warp // 2 * 32 + mo * 16 + h * 8 + lane // 4, warp % 2 * 32 + no * 8 + lane % 4 * 2 + "
    "j] = acc[(mo * 4 + no) * 4 + h * 2 + j]\n";

Test(simt_gemm, gemm_64x64x64_cp_async_ldmatrix_mma) {
  tl_module *m = parse(gemm_src, strlen(gemm_src), "gemm_simt.py", NULL, 0, false);
  uint16_t A[64 * 64], B[64 * 64];
  double Ad[64 * 64], Bd[64 * 64];
  float C[64 * 64];
  for (int i = 0; i < 64 * 64; i++) {
    Ad[i] = tl_round_to_dtype(urand(), TL_FLOAT16);
    Bd[i] = tl_round_to_dtype(urand(), TL_FLOAT16);
    A[i] = h_bits(Ad[i]);
    B[i] = h_bits(Bd[i]);
    C[i] = NAN;
  }
  tl_interp_arg args[3] = {tensor(A, 2, 64, 64), tensor(B, 2, 64, 64), tensor(C, 2, 64, 64)};
  struct timespec t0, t1;
  clock_gettime(CLOCK_MONOTONIC, &t0);
  run_simt(m, args, 3, NULL, 0);
  clock_gettime(CLOCK_MONOTONIC, &t1);
  double secs = (double)(t1.tv_sec - t0.tv_sec) + 1e-9 * (double)(t1.tv_nsec - t0.tv_nsec);
  cr_log_info("SIMT gemm 64x64x64 (128 threads): %.4f s", secs);
  printf("SIMT gemm 64x64x64 (128 threads): %.4f s\n", secs);
  cr_assert(secs < 1.0, "the 64x64x64 SIMT gemm took %.3f s", secs);
  double worst = 0;
  for (int i = 0; i < 64; i++)
    for (int j = 0; j < 64; j++) {
      double r = 0;
      for (int k = 0; k < 64; k++) r += Ad[i * 64 + k] * Bd[k * 64 + j];
      double diff = fabs((double)C[i * 64 + j] - r);
      if (diff > worst) worst = diff;
      /* four f32 roundings of k16 partial sums */
      cr_assert(diff <= 4e-7 * (fabs(r) + 1.0), "C[%d][%d] = %.9g, want %.9g", i, j, (double)C[i * 64 + j], r);
    }
  tl_module_destroy(m);
}

Test(simt_gemm, checks_off_still_computes) {
  tl_module *m = parse(gemm_src, strlen(gemm_src), "gemm_simt.py", NULL, 0, false);
  uint16_t A[64 * 64], B[64 * 64];
  float C[64 * 64];
  for (int i = 0; i < 64 * 64; i++) A[i] = h_bits(i % 7 - 3), B[i] = h_bits(i % 5 - 2);
  tl_interp_arg args[3] = {tensor(A, 2, 64, 64), tensor(B, 2, 64, 64), tensor(C, 2, 64, 64)};
  tl_simt_options o = {.check_races = false};
  tl_diag d;
  tl_diag_init(&d);
  cr_assert(tl_simt_exec(m, 0, args, 3, NULL, 0, &o, &d), "%s", d.out.data);
  tl_diag_free(&d);
  for (int i = 0; i < 64; i++)
    for (int j = 0; j < 64; j++) {
      double r = 0;
      for (int k = 0; k < 64; k++) r += (double)((i * 64 + k) % 7 - 3) * (double)((k * 64 + j) % 5 - 2);
      cr_assert_eq((double)C[i * 64 + j], r, "integer-valued gemm must be exact");
    }
  tl_module_destroy(m);
}

/* ===================================================== 5. numerics */
/* Casts saturate with NaN → 0; f16 + and * round once; T.fma on f16 rounds
 * once; f32 a*b+c rounds twice (no contraction); int32 wraps. */
Test(simt_numerics, casts_half_ops_fma_wrap) {
  const char *src =
      "import tilelang.language as T\n"
      "\n"
      "@T.prim_func\n"
      "def main(F: T.Tensor((8,), \"float32\"), H: T.Tensor((3, 64), \"float16\"), I: T.Tensor((2, 8), \"int32\"), U: "
      "T.Tensor((8,), \"uint8\"), HO: T.Tensor((3, 64), \"float16\"), FO: T.Tensor((64,), \"float32\"), W: "
      "T.Tensor((64,), \"int32\")):\n"
      "    with T.Kernel(1, threads=64) as bx:\n"
      "        tid = T.get_thread_binding(0)\n"
      "        if tid < 8:\n"
      "            I[0, tid] = T.Cast(\"int32\", F[tid])\n"
      "            I[1, tid] = T.Cast(\"int32\", T.Cast(\"int8\", tid * 40))\n"
      "            U[tid] = T.Cast(\"uint8\", F[tid])\n"
      "        HO[0, tid] = H[0, tid] + H[1, tid]\n"
      "        HO[1, tid] = H[0, tid] * H[1, tid]\n"
      "        HO[2, tid] = T.fma(H[0, tid], H[1, tid], H[2, tid])\n"
      "        FO[tid] = T.Cast(\"float32\", H[0, tid]) * 1.1 + T.Cast(\"float32\", H[2, tid])\n"
      "        W[tid] = (tid + 1) * 123456789\n";
  tl_module *m = parse(src, strlen(src), "numerics.py", NULL, 0, false);
  float F[8] = {NAN, 3e9f, -3e9f, -2.7f, 2.7f, 255.9f, 300.0f, -0.5f};
  uint16_t H[3 * 64], HO[3 * 64];
  double Hd[3 * 64];
  for (int i = 0; i < 3 * 64; i++) {
    Hd[i] = tl_round_to_dtype(urand() * (i < 64 ? 3.0 : 0.01), TL_FLOAT16);
    H[i] = h_bits(Hd[i]);
  }
  int32_t I[16], W[64];
  uint8_t U[8];
  float FO[64];
  tl_interp_arg args[7] = {tensor(F, 1, 8, 0),   tensor(H, 2, 3, 64),  tensor(I, 2, 2, 8), tensor(U, 1, 8, 0),
                           tensor(HO, 2, 3, 64), tensor(FO, 1, 64, 0), tensor(W, 1, 64, 0)};
  run_simt(m, args, 7, NULL, 0);
  int32_t wi[8] = {0, INT32_MAX, INT32_MIN, -2, 2, 255, 300, 0};
  uint8_t wu[8] = {0, 255, 0, 0, 2, 255, 255, 0};
  for (int t = 0; t < 8; t++) {
    cr_assert_eq(I[t], wi[t], "int32(%g) = %d", (double)F[t], I[t]);
    cr_assert_eq(U[t], wu[t], "uint8(%g) = %d", (double)F[t], U[t]);
    cr_assert_eq(I[8 + t], (int32_t)(int8_t)(uint8_t)(t * 40));
  }
  for (int t = 0; t < 64; t++) {
    double a = Hd[t], b = Hd[64 + t], c = Hd[128 + t];
    cr_assert_eq(HO[t], h_bits(tl_round_to_dtype(a + b, TL_FLOAT16)), "f16 add %d", t);
    cr_assert_eq(HO[64 + t], h_bits(tl_round_to_dtype(a * b, TL_FLOAT16)), "f16 mul %d", t);
    /* a*b + c is exact in double here (22-bit product, close exponents) */
    cr_assert_eq(HO[128 + t], h_bits(tl_round_to_dtype(a * b + c, TL_FLOAT16)), "f16 fma %d", t);
    float p = (float)a * 1.1f;
    cr_assert_eq(FO[t], p + (float)c, "f32 mul+add %d", t);
    cr_assert_eq(W[t], (int32_t)(uint32_t)((uint64_t)(t + 1) * 123456789u), "int32 wrap %d", t);
  }
  tl_module_destroy(m);
}

/* ============================================ 6. lowered GEMM examples */
/* Lowers examples/<file> with defs; NULL (test skipped) while the GEMM
 * lowering is not there yet ("not lowered yet"). */
static tl_module *try_lower_example(const char *file, const tl_define *defs, size_t ndefs) {
  char path[256];
  snprintf(path, sizeof path, "examples/%s", file);
  size_t len;
  char *src = tl_test_read_file(path, &len);
  tl_module *m = tl_module_new();
  tl_diag d;
  tl_diag_init(&d);
  bool ok = tl_frontend_parse(m, &d, src, len, file, defs, ndefs);
  cr_assert(ok, "%s", d.out.data);
  tl_lower_options o = {.target = tl_target_lookup("sm_80"), .verify_each = true};
  ok = tl_lower_module(m, &o, &d);
  free(src);
  if (!ok) {
    bool pending = d.out.data && strstr(d.out.data, "not lowered yet");
    cr_assert(pending, "lowering %s failed: %s", file, d.out.data);
    tl_diag_free(&d);
    tl_module_destroy(m);
    return NULL;
  }
  tl_diag_free(&d);
  return m;
}

/* C = A·B (or A·Bᵀ when nt) at M x N x K, f16 or bf16 in, f32 accumulate,
 * same dtype out; with dyn, M is the dynamic dimension "m". */
static void gemm_example_case(const char *file, int M, int N, int K, bool bf16, bool nt, bool dyn) {
  char dm[16], dn[16], dk[16];
  snprintf(dm, sizeof dm, "%d", M);
  snprintf(dn, sizeof dn, "%d", N);
  snprintf(dk, sizeof dk, "%d", K);
  tl_define defs[3] = {{"N", dn}, {"K", dk}, {"M", dm}};
  size_t nd = dyn ? 2 : 3;
  tl_module *lo = try_lower_example(file, defs, nd);
  if (!lo) cr_skip_test("T.gemm is not lowered yet");
  tl_module *hi = parse_example(file, defs, nd, false);
  tl_dtype dt = bf16 ? TL_DT(TL_TYPE_BFLOAT, 16) : TL_FLOAT16;
  uint16_t *A = malloc(2 * (size_t)M * K), *B = malloc(2 * (size_t)K * N), *C = malloc(2 * (size_t)M * N),
           *R = malloc(2 * (size_t)M * N);
  double *Ad = malloc(sizeof(double) * (size_t)M * K), *Bd = malloc(sizeof(double) * (size_t)K * N);
  for (size_t i = 0; i < (size_t)M * K; i++)
    Ad[i] = tl_round_to_dtype(urand(), dt), A[i] = bf16 ? bf_bits(Ad[i]) : h_bits(Ad[i]);
  for (size_t i = 0; i < (size_t)K * N; i++)
    Bd[i] = tl_round_to_dtype(urand(), dt), B[i] = bf16 ? bf_bits(Bd[i]) : h_bits(Bd[i]);
  memset(C, 0xFF, 2 * (size_t)M * N);
  memset(R, 0xFF, 2 * (size_t)M * N);
  tl_interp_arg args[3] = {tensor(A, 2, M, K), nt ? tensor(B, 2, N, K) : tensor(B, 2, K, N), tensor(C, 2, M, N)};
  int64_t m64 = M;
  run_simt(lo, args, 3, dyn ? &m64 : NULL, dyn ? 1 : 0);
  args[2].data = R;
  run_ref(hi, args, 3, dyn ? &m64 : NULL, dyn ? 1 : 0);
  double tol = bf16 ? 2e-2 : 1e-2;
  for (int i = 0; i < M; i++)
    for (int j = 0; j < N; j++) {
      double r = 0;
      for (int k = 0; k < K; k++) r += Ad[(size_t)i * K + k] * (nt ? Bd[(size_t)j * K + k] : Bd[(size_t)k * N + j]);
      uint16_t cb = C[(size_t)i * N + j], rb = R[(size_t)i * N + j];
      double got = bf16 ? bf_val(cb) : h_val(cb), ref = bf16 ? bf_val(rb) : h_val(rb);
      cr_assert(fabs(got - r) <= tol + tol * fabs(r), "%s C[%d][%d] = %.6g, float64 %.6g", file, i, j, got, r);
      cr_assert(fabs(got - ref) <= tol + tol * fabs(ref), "%s C[%d][%d] = %.6g, reference evaluator %.6g", file, i, j,
                got, ref);
    }
  free(A), free(B), free(C), free(R), free(Ad), free(Bd);
  tl_module_destroy(lo);
  tl_module_destroy(hi);
}
Test(simt_examples, gemm) {
  gemm_example_case("gemm.py", 128, 128, 64, false, false, false);
  gemm_example_case("gemm.py", 128, 256, 128, false, false, false);
}
Test(simt_examples, gemm_bf16_nt) { gemm_example_case("gemm_bf16_nt.py", 128, 256, 64, true, true, false); }
Test(simt_examples, gemm_dynamic_m) {
  gemm_example_case("gemm_dynamic_m.py", 128, 128, 64, false, false, true);
  gemm_example_case("gemm_dynamic_m.py", 100, 128, 96, false, false, true); /* partial M tile */
}

/* examples/gemm.py with a float16 accumulator (M x N x K, 128x128x32 tiles,
 * f16 out): the reference evaluator's T.gemm follows mma.sync m16n8k16 (one
 * f16 rounding per k-chunk of 16, tl_mma_step), so it and the SIMT
 * executor's T.ptx_mma chain agree bit for bit.  The rule matters: the
 * float64 product rounded once to f16 differs from it in many elements. */
Test(simt_examples, gemm_f16_accumulator_bit_exact) {
  enum { M = 256, N = 256, K = 512 };
  tl_define defs[4] = {{"N", "256"}, {"K", "512"}, {"M", "256"}, {"accum_dtype", "float16"}};
  tl_module *lo = try_lower_example("gemm.py", defs, 4);
  if (!lo) cr_skip_test("T.gemm is not lowered yet");
  tl_module *hi = parse_example("gemm.py", defs, 4, false);
  uint16_t *A = malloc(2 * (size_t)M * K), *B = malloc(2 * (size_t)K * N), *C = malloc(2 * (size_t)M * N),
           *R = malloc(2 * (size_t)M * N);
  double *Ad = malloc(sizeof(double) * (size_t)M * K), *Bd = malloc(sizeof(double) * (size_t)K * N);
  for (size_t i = 0; i < (size_t)M * K; i++) Ad[i] = tl_round_to_dtype(urand(), TL_FLOAT16), A[i] = h_bits(Ad[i]);
  for (size_t i = 0; i < (size_t)K * N; i++) Bd[i] = tl_round_to_dtype(urand(), TL_FLOAT16), B[i] = h_bits(Bd[i]);
  memset(C, 0xFF, 2 * (size_t)M * N);
  memset(R, 0xFF, 2 * (size_t)M * N);
  tl_interp_arg args[3] = {tensor(A, 2, M, K), tensor(B, 2, K, N), tensor(C, 2, M, N)};
  run_simt(lo, args, 3, NULL, 0);
  args[2].data = R;
  run_ref(hi, args, 3, NULL, 0);
  int once_differs = 0;
  for (int i = 0; i < M; i++)
    for (int j = 0; j < N; j++) {
      uint16_t cb = C[(size_t)i * N + j], rb = R[(size_t)i * N + j];
      cr_assert_eq(cb, rb, "C[%d][%d]: SIMT executor %.9g (0x%04x), reference evaluator %.9g (0x%04x)", i, j, h_val(cb),
                   cb, h_val(rb), rb);
      double acc = 0, once = 0;
      for (int k0 = 0; k0 < K; k0 += TL_MMA_K)
        acc = tl_mma_step(&Ad[(size_t)i * K + k0], &Bd[(size_t)k0 * N + j], N, TL_MMA_K, acc, TL_FLOAT16);
      for (int k = 0; k < K; k++) once += Ad[(size_t)i * K + k] * Bd[(size_t)k * N + j];
      cr_assert_eq(h_val(rb), acc, "C[%d][%d]: reference %.9g, the k-chunk rule %.9g", i, j, h_val(rb), acc);
      once_differs += h_val(rb) != tl_round_to_dtype(once, TL_FLOAT16);
    }
  cr_log_info("f16-accumulator gemm %dx%dx%d: %d of %d elements differ from the float64 product rounded once", M, N, K,
              once_differs, M * N);
  cr_assert(once_differs > M * N / 4, "only %d of %d elements differ from the float64 product rounded once",
            once_differs, M * N);
  free(A), free(B), free(C), free(R), free(Ad), free(Bd);
  tl_module_destroy(lo);
  tl_module_destroy(hi);
}

/* Faults planted in the lowered examples/gemm.py (printed SIMT text, edited,
 * parsed back): without the barrier after the wait, and with a wait that
 * leaves the needed group pending, the executor reports the fault at the
 * statement that reads the data. */
static char *replace_first(const char *s, const char *from, const char *to) {
  const char *p = strstr(s, from);
  if (!p) return NULL;
  size_t n = strlen(s) - strlen(from) + strlen(to) + 1;
  char *r = malloc(n);
  memcpy(r, s, (size_t)(p - s));
  strcpy(r + (p - s), to);
  strcat(r, p + strlen(from));
  return r;
}
static void gemm_fault_case(const char *from, const char *to, const char *msg) {
  tl_define defs[3] = {{"M", "128"}, {"N", "128"}, {"K", "128"}};
  tl_module *lo = try_lower_example("gemm.py", defs, 3);
  if (!lo) cr_skip_test("T.gemm is not lowered yet");
  tl_strbuf sb = {0};
  tl_print_module(&sb, lo);
  char *text = tl_strbuf_take(&sb);
  char *bad = replace_first(text, from, to);
  cr_assert(bad, "the lowered gemm has no '%s':\n%s", from, text);
  tl_module *m = parse(bad, strlen(bad), "gemm_fault.py", NULL, 0, false);
  static uint16_t A[128 * 128], B[128 * 128], C[128 * 128];
  for (int i = 0; i < 128 * 128; i++) A[i] = h_bits(i % 3), B[i] = h_bits(i % 5);
  tl_interp_arg args[3] = {tensor(A, 2, 128, 128), tensor(B, 2, 128, 128), tensor(C, 2, 128, 128)};
  tl_diag d;
  tl_diag_init(&d);
  cr_assert(!tl_simt_exec(m, 0, args, 3, NULL, 0, NULL, &d), "planted fault not caught");
  cr_assert(strstr(d.out.data, msg), "expected '%s':\n%s", msg, d.out.data);
  /* the error is at the first ldmatrix (the first read of the tiles) */
  const char *ld = strstr(bad, "T.ptx_ldmatrix");
  cr_assert(ld);
  int line = 1;
  for (const char *q = bad; q < ld; q++) line += *q == '\n';
  cr_assert_eq(d.first_error.line, line, "error at line %d, the first ldmatrix is at line %d:\n%s", d.first_error.line,
               line, d.out.data);
  tl_diag_free(&d);
  tl_module_destroy(m);
  tl_module_destroy(lo);
  free(text);
  free(bad);
}
Test(simt_faults, lowered_gemm_missing_barrier) {
  /* the barrier before the first reads (frag_pipeline.c hoists the loop's
   * first wait and barrier in front of the loop) */
  gemm_fault_case("\n        T.sync_threads()\n", "\n", "data race on shared memory");
}
Test(simt_faults, lowered_gemm_missing_wait) {
  gemm_fault_case("T.ptx_wait_group(1)", "T.ptx_wait_group(2)", "before its cp.async completed");
}
