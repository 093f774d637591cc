/* Unit tests of the FlashAttention path of lib/Lower (issue 7): the
 * register-operand T.gemm (rs form), fragment → fragment copies with a cast,
 * math on accumulators in T.Parallel, and FlashAttention itself.
 *  - layout: the A registers that lower_frag.c hands to mma.sync are where
 *    the PTX A fragment map (docs/layouts.md: a0 = (g, 2t..), a1 = (g+8, 2t..),
 *    a2 = (g, 2t+8..), a3 = (g+8, 2t+8..)) and TileLang's A-fragment layout
 *    (docs/layouts.md, thread formula) put them, for every element of several
 *    tiles; partitions that split N are rejected;
 *  - numerics: kernels are parsed, lowered and run by the SIMT executor
 *    (lib/Interp) and compared with plain float64 C code that rounds where
 *    the kernel rounds (P to f16), and with the reference evaluator;
 *  - errors: the rs-form rule and the layout conflict, with exact messages. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "IR/tir.h"
#include "Interp/interp.h"
#include "Lower/lower.h"
#include "Lower/lower_internal.h"
#include "tilelang/ir.h"

/* ================================================================ layouts */
static void init_c(tl_frag_layout *L, int64_t *shape, int64_t bm, int64_t bn, int64_t threads, int64_t wm, int64_t wn) {
  memset(L, 0, sizeof *L);
  L->shape = shape;
  tl_mma_c_layout_init(L, bm, bn, threads, wm, wn);
}

/* Every element of the BM x K fragment against the PTX A map, computed here
 * from the figure (not from the lowering's formula). */
static void check_rs(int64_t BM, int64_t K, int64_t warps) {
  tl_frag_layout L;
  int64_t shape[2];
  init_c(&L, shape, BM, K, 32 * warps, warps, 1);
  int64_t bi = -1, bk = -1;
  cr_assert(tl_gemm_rs_a_check(&L, warps, &bi, &bk), "%lldx%lld over %lld warps: element (%lld, %lld)", (long long)BM,
            (long long)K, (long long)warps, (long long)bi, (long long)bk);
  int64_t WM = BM / warps;
  for (int64_t i = 0; i < BM; i++)
    for (int64_t k = 0; k < K; k++) {
      int64_t tid, reg;
      tl_mma_c_owner(&L, i, k, &tid, &reg);
      /* PTX figure: which a-register and which lane hold A[r][c] of a 16x16 slice */
      int64_t r = i % 16, c = k % 16, g = r % 8, t = (c % 8) / 2;
      int64_t a = (c >= 8 ? 2 : 0) + (r >= 8 ? 1 : 0);
      cr_assert_eq(tid % 32, 4 * g + t);
      cr_assert_eq(tid / 32, i / WM, "warp of row %lld", (long long)i);
      /* T.ptx_mma reads a[off + 0..7] = a0.lo a0.hi a1.lo ... a3.hi with
       * off = 8*(mi*(K/16) + kk) (lower_frag.c) */
      int64_t off = 8 * (((i % WM) / 16) * (K / 16) + k / 16);
      cr_assert_eq(reg, off + 2 * a + (c % 2), "(%lld,%lld): reg %lld", (long long)i, (long long)k, (long long)reg);
      /* TileLang's A fragment (docs/layouts.md, rs form, n = 1): same thread, and
       * the same slot inside the slice's 8 elements */
      int64_t tl_tid = 32 * (i / WM) + 4 * (i % 8) + (k % 8) / 2;
      int64_t tl_elem = 4 * ((k % 16) / 8) + 2 * ((i % 16) / 8) + k % 2;
      cr_assert_eq(tid, tl_tid);
      cr_assert_eq(reg % 8, tl_elem);
    }
}

Test(rs_layout, accumulator_is_the_a_operand) {
  check_rs(16, 16, 1);
  check_rs(64, 32, 4);
  check_rs(64, 64, 4);
  check_rs(64, 48, 2);
  check_rs(128, 64, 8);
  check_rs(128, 128, 4);
  check_rs(256, 32, 8);
}

Test(rs_layout, rejects_other_partitions) {
  tl_frag_layout L;
  int64_t shape[2], bi = -1, bk = -1;
  init_c(&L, shape, 64, 64, 128, 2, 2); /* Square: a warp holds half a row */
  cr_assert(!tl_gemm_rs_a_check(&L, 2, &bi, &bk));
  cr_assert(!tl_gemm_rs_a_check(&L, 4, &bi, &bk));
  init_c(&L, shape, 64, 64, 128, 4, 1);
  cr_assert(!tl_gemm_rs_a_check(&L, 2, &bi, &bk)); /* the gemm's warps cover other rows */
  cr_assert(tl_gemm_rs_a_check(&L, 4, &bi, &bk));
  init_c(&L, shape, 64, 64, 128, 1, 4); /* FullCol */
  cr_assert(!tl_gemm_rs_a_check(&L, 1, &bi, &bk));
  cr_assert(bi == -1 && bk == -1);
}

/* ============================================================== numerics */
static uint16_t f16_bits(double v) {
  uint16_t s = (uint16_t)(signbit(v) ? 0x8000 : 0);
  double a = fabs(v);
  if (isnan(v)) return 0x7E00;
  if (a >= 65520.0) return s | 0x7C00;
  if (a < ldexp(1, -14)) return s | (uint16_t)nearbyint(a * ldexp(1, 24)); /* subnormal (may round to 2^-14) */
  int e;
  double f = frexp(a, &e);                     /* a = f * 2^e, f in [0.5, 1) */
  double mant = nearbyint((f * 2 - 1) * 1024); /* round to nearest even */
  int be = e - 1 + 15;
  if (mant >= 1024) {
    mant = 0;
    be++;
  }
  if (be >= 31) return s | 0x7C00;
  return s | (uint16_t)(be << 10) | (uint16_t)mant;
}
static double f16_val(uint16_t h) {
  int e = (h >> 10) & 31, m = h & 1023;
  double v = e == 0 ? m * ldexp(1, -24) : e == 31 ? (m ? NAN : INFINITY) : (1024 + m) * ldexp(1, e - 25);
  return (h & 0x8000) ? -v : v;
}
static double f16r(double v) { return f16_val(f16_bits(v)); }

static uint64_t rng_state = 1;
static double urand(void) { /* splitmix64 → [-1, 1) */
  uint64_t z = (rng_state += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  z ^= z >> 31;
  return (double)(z >> 11) * ldexp(1, -53) * 2 - 1;
}

static tl_interp_arg tensor(void *data, int nd, const int64_t *shape) {
  tl_interp_arg a;
  memset(&a, 0, sizeof a);
  a.is_tensor = true;
  a.data = data;
  a.ndim = nd;
  for (int k = 0; k < nd; k++) a.shape[k] = shape[k];
  return a;
}

/* Parses src with defines (name=value pairs) and lowers it when lower. */
static tl_module *compile(const char *src, const char *const *defs, int ndefs, bool lower, tl_diag *d, bool *ok) {
  tl_module *m = tl_module_new();
  cr_assert(m);
  tl_diag_add_source(d, "k.py", src, strlen(src));
  tl_define dv[8];
  cr_assert(ndefs <= 8);
  char names[8][32];
  for (int i = 0; i < ndefs; i++) {
    const char *eq = strchr(defs[i], '=');
    cr_assert(eq && eq - defs[i] < 32);
    memcpy(names[i], defs[i], (size_t)(eq - defs[i]));
    names[i][eq - defs[i]] = '\0';
    dv[i].name = names[i];
    dv[i].value = eq + 1;
  }
  *ok = tl_frontend_parse(m, d, src, strlen(src), "k.py", dv, ndefs);
  if (*ok && lower) {
    tl_lower_options o = {.target = tl_target_lookup("sm_80"), .verify_each = true};
    *ok = tl_lower_module(m, &o, d);
  }
  return m;
}

/* Runs src lowered (SIMT executor) and unlowered (reference evaluator) on the
 * same inputs; out is the index of the output argument.  The executor's
 * output goes to args[out].data, the reference's to ref. */
static void run_both(const char *src, const char *const *defs, int ndefs, tl_interp_arg *args, int nargs, int out,
                     void *ref) {
  tl_diag d;
  tl_diag_init(&d);
  bool ok;
  tl_module *lo = compile(src, defs, ndefs, true, &d, &ok);
  cr_assert(ok, "lowering failed:\n%s", d.out.data ? d.out.data : "");
  tl_simt_options so = {.check_races = true};
  ok = tl_simt_exec(lo, 0, args, nargs, NULL, 0, &so, &d);
  cr_assert(ok, "executor: %s", d.out.data ? d.out.data : "");
  tl_module *hi = compile(src, defs, ndefs, false, &d, &ok);
  cr_assert(ok);
  void *got = args[out].data;
  args[out].data = ref;
  ok = tl_ref_eval(hi, 0, args, nargs, NULL, 0, &d);
  cr_assert(ok, "reference: %s", d.out.data ? d.out.data : "");
  args[out].data = got;
  tl_module_destroy(lo);
  tl_module_destroy(hi);
  tl_diag_free(&d);
}

/* S = Q·Kᵀ; P = f16(exp2(S*0.125 - 1)); O = P·V (f32), as in
 * test/Lower/fa_rs_gemm.py; V stored N x K (transpose_B) when vt. */
static const char *rs_src =
    "import tilelang.language as T\n"
    "BM = 64\nBN = 32\nD = 64\nTH = 128\nVT = False\ndtype = \"float16\"\n"
    "@T.prim_func\n"
    "def main(Q: T.Tensor((BM, D), dtype), K: T.Tensor((BN, D), dtype), V: T.Tensor((D, BN) if VT else (BN, D), "
    "dtype),\n"
    "         O: T.Tensor((BM, D), \"float32\")):\n"
    "    with T.Kernel(1, threads=TH) as bx:\n"
    "        Q_s = T.alloc_shared((BM, D), dtype)\n"
    "        K_s = T.alloc_shared((BN, D), dtype)\n"
    "        V_s = T.alloc_shared((D, BN) if VT else (BN, D), dtype)\n"
    "        acc_s = T.alloc_fragment((BM, BN), \"float32\")\n"
    "        acc_s_cast = T.alloc_fragment((BM, BN), dtype)\n"
    "        acc_o = T.alloc_fragment((BM, D), \"float32\")\n"
    "        T.copy(Q, Q_s)\n"
    "        T.copy(K, K_s)\n"
    "        T.copy(V, V_s)\n"
    "        T.gemm(Q_s, K_s, acc_s, transpose_B=True, policy=T.GemmWarpPolicy.FullRow, clear_accum=True)\n"
    "        for i, j in T.Parallel(BM, BN):\n"
    "            acc_s[i, j] = T.exp2(acc_s[i, j] * 0.125 - 1.0)\n"
    "        T.copy(acc_s, acc_s_cast)\n"
    "        T.gemm(acc_s_cast, V_s, acc_o, transpose_B=VT, policy=T.GemmWarpPolicy.FullRow, clear_accum=True)\n"
    "        T.copy(acc_o, O)\n";

static void rs_case(int BM, int BN, int D, int TH, bool vt) {
  char d0[32], d1[32], d2[32], d3[32], d4[32];
  snprintf(d0, sizeof d0, "BM=%d", BM);
  snprintf(d1, sizeof d1, "BN=%d", BN);
  snprintf(d2, sizeof d2, "D=%d", D);
  snprintf(d3, sizeof d3, "TH=%d", TH);
  snprintf(d4, sizeof d4, "VT=%s", vt ? "True" : "False");
  const char *defs[5] = {d0, d1, d2, d3, d4};
  uint16_t *Q = malloc(2 * (size_t)BM * D), *K = malloc(2 * (size_t)BN * D), *V = malloc(2 * (size_t)BN * D);
  float *O = malloc(4 * (size_t)BM * D), *R = malloc(4 * (size_t)BM * D);
  for (int i = 0; i < BM * D; i++) Q[i] = f16_bits(urand());
  for (int i = 0; i < BN * D; i++) K[i] = f16_bits(urand());
  for (int i = 0; i < BN * D; i++) V[i] = f16_bits(urand());
  for (int i = 0; i < BM * D; i++) O[i] = R[i] = NAN;
  int64_t sq[2] = {BM, D}, sk[2] = {BN, D}, sv[2] = {vt ? D : BN, vt ? BN : D};
  tl_interp_arg args[4] = {tensor(Q, 2, sq), tensor(K, 2, sk), tensor(V, 2, sv), tensor(O, 2, sq)};
  run_both(rs_src, defs, 5, args, 4, 3, R);
  double *P = malloc(sizeof(double) * (size_t)BM * BN);
  for (int i = 0; i < BM; i++)
    for (int j = 0; j < BN; j++) {
      double s = 0;
      for (int k = 0; k < D; k++) s += f16_val(Q[i * D + k]) * f16_val(K[j * D + k]);
      P[i * BN + j] = f16r(exp2((double)(float)s * 0.125 - 1.0));
    }
  for (int i = 0; i < BM; i++)
    for (int j = 0; j < D; j++) {
      double want = 0;
      for (int k = 0; k < BN; k++) want += P[i * BN + k] * f16_val(vt ? V[j * BN + k] : V[k * D + j]);
      double got = O[i * D + j], ref = R[i * D + j];
      /* P may round to a neighbouring f16 where S differs in the last f32 bit */
      cr_assert(fabs(got - want) <= 1e-2 + 1e-2 * fabs(want), "O[%d,%d] = %g, float64 %g", i, j, got, want);
      cr_assert(fabs(got - ref) <= 1e-2 + 1e-2 * fabs(ref), "O[%d,%d] = %g, reference %g", i, j, got, ref);
    }
  free(P);
  free(Q);
  free(K);
  free(V);
  free(O);
  free(R);
}

Test(rs_numeric, qk_exp2_cast_pv_4warps) { rs_case(64, 32, 64, 128, false); }
Test(rs_numeric, v_transposed) { rs_case(64, 32, 64, 128, true); }
Test(rs_numeric, k48_8warps) { rs_case(128, 48, 32, 256, false); }
Test(rs_numeric, one_warp_narrow_n) { rs_case(16, 16, 16, 32, true); }

/* ================================================================ errors */
static char *lower_error(const char *src) {
  tl_diag d;
  tl_diag_init(&d);
  bool ok;
  tl_module *m = compile(src, NULL, 0, true, &d, &ok);
  cr_assert(!ok, "lowering should fail");
  const char *text = d.out.data ? d.out.data : "";
  char *out = strdup(text);
  tl_diag_free(&d);
  tl_module_destroy(m);
  return out;
}

Test(rs_rule, policy_splits_n) {
  const char *src =
      "import tilelang.language as T\n"
      "@T.prim_func\n"
      "def main(P: T.Tensor((64, 32), \"float16\"), V: T.Tensor((32, 128), \"float16\")):\n"
      "    with T.Kernel(1, threads=256) as bx:\n"
      "        V_s = T.alloc_shared((32, 128), \"float16\")\n"
      "        P_f = T.alloc_fragment((64, 32), \"float16\")\n"
      "        acc = T.alloc_fragment((64, 128), \"float32\")\n"
      "        T.copy(P, P_f)\n"
      "        T.gemm(P_f, V_s, acc)\n";
  /* issue 14: the gemm-stage pass reads such an A through a shared copy */
  tl_diag d;
  tl_diag_init(&d);
  bool ok;
  tl_module *m = compile(src, NULL, 0, true, &d, &ok);
  cr_assert(ok, "%s", d.out.data ? d.out.data : "");
  tl_strbuf sb = {0};
  tl_print_module(&sb, m);
  char *text = tl_strbuf_take(&sb);
  cr_assert(strstr(text, "P_f_stage = T.alloc_shared((2048,), \"float16\")") &&
                strstr(text, "T.ptx_ldmatrix(A_regs, mi * 8, P_f_stage,"),
            "%s", text);
  free(text);
  tl_diag_free(&d);
  tl_module_destroy(m);
}

Test(rs_rule, transpose_a_not_lowered) {
  const char *src =
      "import tilelang.language as T\n"
      "@T.prim_func\n"
      "def main(P: T.Tensor((32, 64), \"float16\"), V: T.Tensor((32, 64), \"float16\")):\n"
      "    with T.Kernel(1, threads=128) as bx:\n"
      "        V_s = T.alloc_shared((32, 64), \"float16\")\n"
      "        P_f = T.alloc_fragment((32, 64), \"float16\")\n"
      "        acc = T.alloc_fragment((64, 64), \"float32\")\n"
      "        T.copy(P, P_f)\n"
      "        T.gemm(P_f, V_s, acc, transpose_A=True, policy=T.GemmWarpPolicy.FullRow)\n";
  char *err = lower_error(src);
  cr_assert(strstr(err, "k.py:9:9: error: T.gemm with A in fragment 'P_f' and transpose_A=True is not lowered yet"),
            "%s", err);
  free(err);
}

/* ======================================================= FlashAttention */
static char *read_text(const char *path) {
  FILE *f = fopen(path, "rb");
  cr_assert(f, "cannot open %s (ctest runs in the source directory)", path);
  fseek(f, 0, SEEK_END);
  long n = ftell(f);
  fseek(f, 0, SEEK_SET);
  char *s = malloc((size_t)n + 1);
  cr_assert(fread(s, 1, (size_t)n, f) == (size_t)n);
  s[n] = '\0';
  fclose(f);
  return s;
}

/* examples/flash_attention.py on the SIMT executor against a float64
 * softmax(Q·Kᵀ/√d)·V (causal: key j <= query i) and the reference
 * evaluator; every element, f16 tolerance (docs/testing.md "Numeric checks"). */
static void fa_case(int B, int H, int S, int D, bool causal, int bm, int bn, int threads, int stages) {
  char *src = read_text("examples/flash_attention.py");
  char d[9][40];
  snprintf(d[0], 40, "batch=%d", B);
  snprintf(d[1], 40, "heads=%d", H);
  snprintf(d[2], 40, "seq_len=%d", S);
  snprintf(d[3], 40, "dim=%d", D);
  snprintf(d[4], 40, "is_causal=%s", causal ? "True" : "False");
  snprintf(d[5], 40, "block_M=%d", bm);
  snprintf(d[6], 40, "block_N=%d", bn);
  snprintf(d[7], 40, "threads=%d", threads);
  const char *defs[8] = {d[0], d[1], d[2], d[3], d[4], d[5], d[6], d[7]};
  (void)stages;
  size_t n = (size_t)B * H * S * D;
  uint16_t *q = malloc(2 * n), *k = malloc(2 * n), *v = malloc(2 * n), *o = malloc(2 * n), *r = malloc(2 * n);
  for (size_t i = 0; i < n; i++) q[i] = f16_bits(urand() * 2); /* wider scores: a sharper softmax */
  for (size_t i = 0; i < n; i++) k[i] = f16_bits(urand() * 2);
  for (size_t i = 0; i < n; i++) v[i] = f16_bits(urand());
  memset(o, 0xFF, 2 * n);
  memset(r, 0xFF, 2 * n);
  int64_t shape[4] = {B, H, S, D};
  tl_interp_arg args[4] = {tensor(q, 4, shape), tensor(k, 4, shape), tensor(v, 4, shape), tensor(o, 4, shape)};
  run_both(src, defs, 8, args, 4, 3, r);
  double *p = malloc(sizeof(double) * (size_t)S);
  size_t bad_ref = 0, bad_f64 = 0;
  double max_f64 = 0;
  for (int bh = 0; bh < B * H; bh++)
    for (int i = 0; i < S; i++) {
      const uint16_t *qi = q + ((size_t)bh * S + i) * D;
      double mx = -INFINITY, sum = 0;
      int nk = causal ? i + 1 : S;
      for (int j = 0; j < nk; j++) {
        double s = 0;
        for (int x = 0; x < D; x++) s += f16_val(qi[x]) * f16_val(k[((size_t)bh * S + j) * D + x]);
        p[j] = s / sqrt((double)D);
        if (p[j] > mx) mx = p[j];
      }
      for (int j = 0; j < nk; j++) sum += (p[j] = exp(p[j] - mx));
      for (int x = 0; x < D; x++) {
        double want = 0;
        for (int j = 0; j < nk; j++) want += p[j] / sum * f16_val(v[((size_t)bh * S + j) * D + x]);
        size_t at = ((size_t)bh * S + i) * D + x;
        double got = f16_val(o[at]), ref = f16_val(r[at]);
        if (!(fabs(got - want) <= 1e-2 + 1e-2 * fabs(want))) bad_f64++;
        if (!(fabs(got - ref) <= 1e-2 + 1e-2 * fabs(ref))) bad_ref++;
        if (fabs(got - want) > max_f64) max_f64 = fabs(got - want);
      }
    }
  cr_assert(bad_f64 == 0 && bad_ref == 0,
            "(%d,%d,%d,%d) causal %d: %zu elements differ from float64 (max %g), %zu from the reference", B, H, S, D,
            causal, bad_f64, max_f64, bad_ref);
  free(p);
  free(q);
  free(k);
  free(v);
  free(o);
  free(r);
  free(src);
}

Test(fa_numeric, full_4warps) { fa_case(2, 2, 128, 64, false, 64, 32, 128, 2); }
Test(fa_numeric, causal_4warps) { fa_case(2, 2, 128, 64, true, 64, 32, 128, 2); }
Test(fa_numeric, causal_8warps_dim128) { fa_case(1, 1, 256, 128, true, 128, 64, 256, 2); }
Test(fa_numeric, full_1warp_narrow) { fa_case(1, 2, 64, 32, false, 16, 16, 32, 2); }
