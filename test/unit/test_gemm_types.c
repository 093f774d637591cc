/* Unit tests of T.gemm over the mma.sync instructions beyond f16/bf16 (issue
 * 14): test/GPU/kernels/gemm_general.py (TileLang's kernel GEMM test kernel:
 * transposes and dtypes as parameters) lowered for sm_80 and run on the
 * CPU SIMT executor (T.ptx_mma m16n8k8 tf32, m16n8k32 s8/u8, m8n8k4 f64) and
 * on the reference evaluator, for nn, nt and tn operands:
 *  - the two agree bit for bit;
 *  - both equal a direct C computation of the instruction's arithmetic
 *    written here from the PTX ISA (operands rounded to tf32 by
 *    round-to-nearest-ties-away on the float32 bits, k-chunks of 8 summed in
 *    float64 and rounded to float32; int8 exact with int32 wraparound; f64
 *    fma chains in increasing k; float8_e4m3/e5m2 (m16n8k32 .e4m3/.e5m2,
 *    every finite code) as k-chunks of 32 exact products summed in float64
 *    and rounded to float32 with the accumulator);
 *  - tf32's rounding is visible: an operand 1 + 2^-11 (a tie) counts as
 *    1 + 2^-10, 1 + 2^-12 as 1, and -(1 + 2^-11) as -(1 + 2^-10). */
#include <criterion/criterion.h>

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "IR/tir.h"
#include "Interp/interp.h"
#include "Lower/lower.h"
#include "test_util.h"

static uint64_t rng = 0x9E3779B97F4A7C15ull;
static uint64_t next(void) {
  rng ^= rng << 13;
  rng ^= rng >> 7;
  rng ^= rng << 17;
  return rng;
}

static tl_module *load_file(const char *path, const tl_define *defs, size_t n, bool lower) {
  size_t len;
  char *src = tl_test_read_file(path, &len);
  tl_module *m = tl_module_new();
  tl_diag d;
  tl_diag_init(&d);
  bool ok = tl_frontend_parse(m, &d, src, len, path, defs, n);
  if (ok && lower) {
    const char *sm = "sm_80"; /* fp8 mma needs sm_89 */
    for (size_t i = 0; i < n; i++)
      if (!strncmp(defs[i].value, "float8", 6)) sm = "sm_89";
    tl_lower_options o = {.target = tl_target_lookup(sm), .verify_each = true};
    ok = tl_lower_module(m, &o, &d);
  }
  cr_assert(ok, "%s: %s", path, d.out.data ? d.out.data : "");
  tl_diag_free(&d);
  free(src);
  return m;
}
static tl_module *load(const tl_define *defs, size_t n, bool lower) {
  return load_file("test/GPU/kernels/gemm_general.py", defs, n, lower);
}

static tl_interp_arg tensor(void *data, int64_t d0, int64_t d1) {
  tl_interp_arg a;
  memset(&a, 0, sizeof a);
  a.is_tensor = true;
  a.data = data;
  a.ndim = 2;
  a.shape[0] = d0;
  a.shape[1] = d1;
  return a;
}

static void run(const tl_module *m, bool simt, tl_interp_arg *args) {
  tl_diag d;
  tl_diag_init(&d);
  bool ok = simt ? tl_simt_exec(m, 0, args, 3, NULL, 0, NULL, &d) : tl_ref_eval(m, 0, args, 3, NULL, 0, &d);
  cr_assert(ok, "%s failed: %s", simt ? "tl_simt_exec" : "tl_ref_eval", d.out.data ? d.out.data : "");
  tl_diag_free(&d);
}

/* cvt.rna.tf32.f32, written from the PTX ISA: keep 10 mantissa bits,
 * round the 13 dropped bits to nearest with ties away from zero. */
static double tf32(float f) {
  uint32_t u;
  memcpy(&u, &f, 4);
  uint32_t low = u & 0x1fffu;
  u &= ~0x1fffu;
  if (low >= 0x1000u) u += 0x2000u;
  memcpy(&f, &u, 4);
  return f;
}

enum { KIND_TF32, KIND_S8, KIND_U8, KIND_F64, KIND_E4M3, KIND_E5M2 };
static const char *in_name[] = {"float32", "int8", "uint8", "float64", "float8_e4m3", "float8_e5m2"};
static const char *acc_name[] = {"float32", "int32", "int32", "float64", "float32", "float32"};
static const int esize[] = {4, 1, 1, 8, 1, 1}, csize[] = {4, 4, 4, 8, 4, 4};

/* An 8-bit float code's value from its fields (e4m3: bias 7, 3 mantissa
 * bits; e5m2: bias 15, 2 mantissa bits; subnormals at exponent field 0). */
static double fp8_value(uint8_t b, bool e4) {
  int mb = e4 ? 3 : 2, bias = e4 ? 7 : 15;
  int e = (b & 0x7f) >> mb, m = b & ((1 << mb) - 1);
  double v = e ? ldexp(1.0 + (double)m / (1 << mb), e - bias) : ldexp((double)m / (1 << mb), 1 - bias);
  return b & 0x80 ? -v : v;
}

static double get(int kind, const void *p, size_t i) {
  switch (kind) {
  case KIND_TF32: return ((const float *)p)[i];
  case KIND_S8: return ((const int8_t *)p)[i];
  case KIND_U8: return ((const uint8_t *)p)[i];
  case KIND_E4M3: return fp8_value(((const uint8_t *)p)[i], true);
  case KIND_E5M2: return fp8_value(((const uint8_t *)p)[i], false);
  default: return ((const double *)p)[i];
  }
}

/* The expected C[i][j] of the instruction's arithmetic (see the header). */
static double expect(int kind, const void *A, const void *B, int M, int N, int K, bool ta, bool tb, int i, int j) {
  double acc = 0;
  int64_t iacc = 0;
  bool fp8 = kind == KIND_E4M3 || kind == KIND_E5M2;
  int kc = kind == KIND_TF32 ? 8 : fp8 ? 32 : 4;
  for (int k0 = 0; k0 < K; k0 += kc) {
    double s = 0;
    for (int k = k0; k < k0 + kc; k++) {
      double a = get(kind, A, ta ? (size_t)k * M + i : (size_t)i * K + k);
      double b = get(kind, B, tb ? (size_t)j * K + k : (size_t)k * N + j);
      if (kind == KIND_TF32) s += tf32((float)a) * tf32((float)b);
      else if (fp8) s += a * b; /* exact: 4-bit by 4-bit significands */
      else if (kind == KIND_F64) acc = fma(a, b, acc);
      else iacc += (int64_t)a * (int64_t)b;
    }
    if (kind == KIND_TF32 || fp8) acc = (float)(s + acc);
  }
  return kind == KIND_S8 || kind == KIND_U8 ? (double)(int32_t)(uint32_t)(uint64_t)iacc : acc;
}

static void fill(int kind, void *p, size_t n) {
  for (size_t i = 0; i < n; i++) {
    uint64_t x = next();
    double u = (double)(x >> 11) / 9007199254740992.0 * 2.0 - 1.0;
    switch (kind) {
    case KIND_TF32: ((float *)p)[i] = (float)u; break;
    case KIND_S8: ((int8_t *)p)[i] = (int8_t)(x >> 24); break;   /* all of -128..127 */
    case KIND_U8: ((uint8_t *)p)[i] = (uint8_t)(x >> 24); break; /* all of 0..255 */
    case KIND_E4M3:                                              /* every finite code: not 0x7f/0xff (NaN) */
      ((uint8_t *)p)[i] = (x >> 24 & 0x7f) == 0x7f ? 0x3c : (uint8_t)(x >> 24);
      break;
    case KIND_E5M2: /* every finite code: exponent field 31 is infinity/NaN */
      ((uint8_t *)p)[i] = (x >> 24 & 0x7c) == 0x7c ? 0x3c : (uint8_t)(x >> 24);
      break;
    default: ((double *)p)[i] = u; break;
    }
  }
}

static void gemm_case(int kind, bool ta, bool tb, int M, int N, int K, int bm, int bn, int bk) {
  char sm[16], sn[16], sk[16], sbm[16], sbn[16], sbk[16];
  snprintf(sm, 16, "%d", M), snprintf(sn, 16, "%d", N), snprintf(sk, 16, "%d", K);
  snprintf(sbm, 16, "%d", bm), snprintf(sbn, 16, "%d", bn), snprintf(sbk, 16, "%d", bk);
  tl_define defs[] = {{"M", sm},
                      {"N", sn},
                      {"K", sk},
                      {"block_M", sbm},
                      {"block_N", sbn},
                      {"block_K", sbk},
                      {"trans_A", ta ? "True" : "False"},
                      {"trans_B", tb ? "True" : "False"},
                      {"dtype", in_name[kind]},
                      {"accum_dtype", acc_name[kind]},
                      {"out_dtype", acc_name[kind]}};
  size_t nd = sizeof defs / sizeof defs[0];
  tl_module *lo = load(defs, nd, true), *hi = load(defs, nd, false);
  void *A = malloc((size_t)esize[kind] * M * K), *B = malloc((size_t)esize[kind] * K * N);
  void *C = malloc((size_t)csize[kind] * M * N), *R = malloc((size_t)csize[kind] * M * N);
  fill(kind, A, (size_t)M * K);
  fill(kind, B, (size_t)K * N);
  memset(C, 0xFF, (size_t)csize[kind] * M * N);
  memset(R, 0xEE, (size_t)csize[kind] * M * N);
  tl_interp_arg args[3] = {ta ? tensor(A, K, M) : tensor(A, M, K), tb ? tensor(B, N, K) : tensor(B, K, N),
                           tensor(C, M, N)};
  run(lo, true, args);
  args[2].data = R;
  run(hi, false, args);
  cr_assert(memcmp(C, R, (size_t)csize[kind] * M * N) == 0, "%s ta=%d tb=%d: SIMT executor and reference differ",
            in_name[kind], ta, tb);
  int ck = kind == KIND_TF32 || kind == KIND_E4M3 || kind == KIND_E5M2 ? KIND_TF32 : kind == KIND_F64 ? KIND_F64 : -1;
  for (int i = 0; i < M; i++)
    for (int j = 0; j < N; j++) {
      double want = expect(kind, A, B, M, N, K, ta, tb, i, j);
      double got = ck == KIND_TF32  ? ((float *)C)[(size_t)i * N + j]
                   : ck == KIND_F64 ? ((double *)C)[(size_t)i * N + j]
                                    : ((int32_t *)C)[(size_t)i * N + j];
      cr_assert(got == want, "%s ta=%d tb=%d C[%d][%d]: executor %.17g, instruction model %.17g", in_name[kind], ta, tb,
                i, j, got, want);
    }
  free(A), free(B), free(C), free(R);
  tl_module_destroy(lo);
  tl_module_destroy(hi);
}

Test(gemm_types, tf32_nn) { gemm_case(KIND_TF32, false, false, 128, 128, 96, 64, 128, 32); }
Test(gemm_types, tf32_nt) { gemm_case(KIND_TF32, false, true, 64, 128, 64, 64, 128, 32); }
Test(gemm_types, tf32_tn) { gemm_case(KIND_TF32, true, false, 64, 128, 64, 64, 128, 32); }
Test(gemm_types, s8_nt) { gemm_case(KIND_S8, false, true, 128, 128, 128, 128, 128, 64); }
Test(gemm_types, s8_tn) { gemm_case(KIND_S8, true, false, 128, 128, 128, 128, 128, 64); }
Test(gemm_types, u8_nn) { gemm_case(KIND_U8, false, false, 128, 128, 128, 128, 128, 64); }
Test(gemm_types, f64_nt) { gemm_case(KIND_F64, false, true, 64, 64, 64, 64, 32, 16); }
Test(gemm_types, e4m3_nt) { gemm_case(KIND_E4M3, false, true, 128, 128, 128, 128, 128, 64); }
Test(gemm_types, e4m3_nn) { gemm_case(KIND_E4M3, false, false, 64, 128, 64, 64, 128, 32); }
Test(gemm_types, e5m2_tn) { gemm_case(KIND_E5M2, true, false, 64, 128, 64, 64, 128, 32); }
Test(gemm_types, f64_nn) { gemm_case(KIND_F64, false, false, 64, 64, 32, 64, 32, 16); }

/* The rounding of tf32 operands: A = a constant row, B = 1. */
static float tf32_gemm_of(float a) {
  tl_define defs[] = {{"M", "64"},        {"N", "128"},      {"K", "32"},          {"block_M", "64"},
                      {"block_N", "128"}, {"block_K", "32"}, {"dtype", "float32"}, {"out_dtype", "float32"}};
  tl_module *lo = load(defs, 8, true);
  float *A = malloc(4 * 64 * 32), *B = malloc(4 * 32 * 128), *C = malloc(4 * 64 * 128);
  for (int i = 0; i < 64 * 32; i++) A[i] = i < 32 ? a : 0.0f;      /* row 0: a, other rows 0 */
  for (int i = 0; i < 32 * 128; i++) B[i] = i < 128 ? 1.0f : 0.0f; /* only k = 0 */
  tl_interp_arg args[3] = {tensor(A, 64, 32), tensor(B, 32, 128), tensor(C, 64, 128)};
  run(lo, true, args);
  float r = C[5];
  for (int j = 0; j < 128; j++) cr_assert_eq(C[j], r);
  cr_assert_eq(C[128], 0.0f);
  free(A), free(B), free(C);
  tl_module_destroy(lo);
  return r;
}
Test(gemm_types, tf32_operand_rounding) {
  cr_assert_eq(tf32_gemm_of(1.0f + 0x1p-11f), 1.0f + 0x1p-10f, "a tie rounds away from zero");
  cr_assert_eq(tf32_gemm_of(-(1.0f + 0x1p-11f)), -(1.0f + 0x1p-10f), "a negative tie rounds away from zero");
  cr_assert_eq(tf32_gemm_of(1.0f + 0x1p-12f), 1.0f, "below half an ulp rounds down");
  cr_assert_eq(tf32_gemm_of(1.0f + 0x1p-11f + 0x1p-20f), 1.0f + 0x1p-10f, "above half an ulp rounds up");
  cr_assert_eq(tf32_gemm_of(1.0f + 0x1p-10f), 1.0f + 0x1p-10f, "a tf32 value stays");
}

/* Mixed float8 operands (test/GPU/kernels/gemm_fp8_mixed.py: A e4m3 M x K,
 * B e5m2 N x K, and the other way round): m16n8k32 .e4m3.e5m2 / .e5m2.e4m3,
 * both models bit for bit, and equal to the k-chunks-of-32 model. */
static void mixed_case(bool a_e4) {
  const char *da = a_e4 ? "float8_e4m3" : "float8_e5m2", *db = a_e4 ? "float8_e5m2" : "float8_e4m3";
  tl_define defs[] = {{"M", "128"}, {"N", "128"}, {"K", "128"}, {"dtype_a", da}, {"dtype_b", db}};
  const char *path = "test/GPU/kernels/gemm_fp8_mixed.py";
  tl_module *lo = load_file(path, defs, 5, true), *hi = load_file(path, defs, 5, false);
  int M = 128, N = 128, K = 128, ka = a_e4 ? KIND_E4M3 : KIND_E5M2, kb = a_e4 ? KIND_E5M2 : KIND_E4M3;
  uint8_t *A = malloc((size_t)M * K), *B = malloc((size_t)N * K);
  float *C = malloc(4 * (size_t)M * N), *R = malloc(4 * (size_t)M * N);
  fill(ka, A, (size_t)M * K);
  fill(kb, B, (size_t)N * K);
  tl_interp_arg args[3] = {tensor(A, M, K), tensor(B, N, K), tensor(C, M, N)};
  run(lo, true, args);
  args[2].data = R;
  run(hi, false, args);
  cr_assert(memcmp(C, R, 4 * (size_t)M * N) == 0, "%s x %s: SIMT executor and reference differ", da, db);
  for (int i = 0; i < M; i++)
    for (int j = 0; j < N; j++) {
      double acc = 0;
      for (int k0 = 0; k0 < K; k0 += 32) {
        double s = 0;
        for (int k = k0; k < k0 + 32; k++) s += get(ka, A, (size_t)i * K + k) * get(kb, B, (size_t)j * K + k);
        acc = (float)(s + acc);
      }
      cr_assert(C[(size_t)i * N + j] == acc, "%s x %s C[%d][%d]: %.9g, model %.9g", da, db, i, j, C[(size_t)i * N + j],
                acc);
    }
  free(A), free(B), free(C), free(R);
  tl_module_destroy(lo);
  tl_module_destroy(hi);
}
Test(gemm_types, fp8_mixed_e4m3_e5m2) { mixed_case(true); }
Test(gemm_types, fp8_mixed_e5m2_e4m3) { mixed_case(false); }
