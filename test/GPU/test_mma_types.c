/* GPU test (test_mma_types) of T.gemm's tf32, int8/uint8, float8 and float64 mma.sync forms (issue
 * 14; float8_e4m3 512x1024x768 nt and 512^3 nn, float8_e5m2 512^3 tn with 128x128x64 tiles, inputs
 * uniform [-1, 1) rounded to the format; GPU vs CPU within 2^-10 sum |a b|, errors reported): test/GPU/kernels/gemm_general.py at the sizes of TileLang's kernel GEMM
 * tests (float32 operands computed as tf32 512x1024x768 with 64x128x32
 * tiles, nn/nt/tn; int8 -> int32 512x1024x768 with 128x128x64, nt/tn;
 * uint8 512x512x512 nn; float64 512x512x512 with 64x32x16, nt/nn), and the
 * T.gemm forms of test/GPU/kernels/gemm_forms.py (sr nt and rs tn with the
 * Square policy, both through the gemm-stage pass, and rs nt with FullRow,
 * in registers; 512x1024x768, 128x128x32, float16 inputs holding -4..4,
 * float32 accumulators: exact, so GPU == CPU bit for bit), compiled
 * once per case through the public API and run on the GPU and on the CPU
 * SIMT executor (tl_kernel_call_on TL_EXEC_CPU) on the same random inputs
 * (float32: uniform [-1, 1) with all 23 mantissa bits, so tf32's rounding
 * matters; int8: all of -128..127; uint8: all of 0..255; float64 uniform
 * [-1, 1)).  Checks:
 *  - int32 outputs: GPU == CPU bit for bit (integer arithmetic is exact);
 *  - float outputs: every element within 1e-4 + 1e-4 |cpu| of the CPU
 *    executor (the float32/float64 rule of docs/testing.md "Numeric checks"; the summation inside one
 *    mma step is not specified by PTX), and the line reports how many are
 *    bit-identical, the largest |GPU - CPU|, and the largest error of the GPU
 *    and of the CPU model against the float64 product of the operands as the
 *    instruction sees them (tf32-rounded by cvt.rna for float32).
 * Timing: tl_kernel_time median of 20 launches after 3 warm-ups, printed.
 * Kernel file: $TL_GPU_KERNELS (default test/GPU/kernels).  Exit 0 pass,
 * 1 fail, 77 no driver/GPU. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gpu_util.h"

static uint64_t rng = 0x2545F4914F6CDD1Dull;
static uint64_t next_u64(void) { /* splitmix64 */
  uint64_t z = (rng += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

/* cvt.rna.tf32.f32 (PTX ISA §9.7.9.21): 10 mantissa bits, ties away from zero */
static double tf32(float f) {
  uint32_t u;
  memcpy(&u, &f, 4);
  if (((u >> 23) & 0xff) == 0xff) return f;
  u = (u + 0x1000u) & ~0x1fffu;
  memcpy(&f, &u, 4);
  return f;
}

/* T_F16: the forms cases (gemm_forms.py): float16 inputs holding the
 * integers -4..4, float32 accumulate and output, so every product and
 * partial sum is exact and GPU == CPU bit for bit */
/* T_E4M3 / T_E5M2: float8 operands (sm_89+), crossing the API as uint8
 * tensors of their codes (runtime.h) */
enum { T_TF32, T_S8, T_U8, T_F64, T_F16, T_E4M3, T_E5M2 };
static const char *in_name[] = {"float32", "int8", "uint8", "float64", "float16", "float8_e4m3", "float8_e5m2"};
static const char *acc_name[] = {"float32", "int32", "int32", "float64", "float32", "float32", "float32"};
static const DLDataType in_dl[] = {{kDLFloat, 32, 1}, {kDLInt, 8, 1},  {kDLUInt, 8, 1}, {kDLFloat, 64, 1},
                                   {kDLFloat, 16, 1}, {kDLUInt, 8, 1}, {kDLUInt, 8, 1}};
static bool is_fp8(int t) { return t == T_E4M3 || t == T_E5M2; }
static tl_dtype fp8_dtype(int t) {
  tl_dtype d = {t == T_E4M3 ? TL_TYPE_FLOAT8_E4M3 : TL_TYPE_FLOAT8_E5M2, 8, 1};
  return d;
}

static uint16_t small_int_f16(int v) { /* exact float16 encodings of -4..4 */
  if (v == 0) return 0;
  uint16_t sign = v < 0 ? 0x8000 : 0;
  int a = v < 0 ? -v : v, e = 0;
  while ((a >> e) > 1) e++;
  return sign | (uint16_t)((e + 15) << 10) | (uint16_t)(((a << 10) >> e) & 0x3ff);
}

static double in_val(int t, const void *p, size_t i) {
  switch (t) {
  case T_TF32: return tf32(((const float *)p)[i]);
  case T_S8: return ((const int8_t *)p)[i];
  case T_U8: return ((const uint8_t *)p)[i];
  case T_E4M3:
  case T_E5M2: return tl_fp8_decode(((const uint8_t *)p)[i], fp8_dtype(t));
  default: return ((const double *)p)[i];
  }
}
static double out_val(int t, const void *p, size_t i) {
  return t == T_TF32 || t == T_F16 || is_fp8(t) ? ((const float *)p)[i]
         : t == T_F64                           ? ((const double *)p)[i]
                                                : ((const int32_t *)p)[i];
}

typedef struct gcase {
  int t;
  int M, N, K, bm, bn, bk;
  bool ta, tb;
  const char *form; /* NULL: gemm_general.py; "sr" / "rs": gemm_forms.py with this policy */
  int policy;
} gcase;

static void run_case(tl_context *ctx, const char *dir, const gcase *c) {
  char what[160], sm[16], sn[16], sk[16], sbm[16], sbn[16], sbk[16], pol[16], path[4096];
  snprintf(what, sizeof what, "%s%s%s %s%s %dx%dx%d (%dx%dx%d)", c->form ? c->form : "", c->form ? " form " : "",
           in_name[c->t], c->ta ? "t" : "n", c->tb ? "t" : "n", c->M, c->N, c->K, c->bm, c->bn, c->bk);
  snprintf(path, sizeof path, "%s/%s", dir, c->form ? "gemm_forms.py" : "gemm_general.py");
  snprintf(pol, 16, "%d", c->policy);
  snprintf(sm, 16, "%d", c->M), snprintf(sn, 16, "%d", c->N), snprintf(sk, 16, "%d", c->K);
  snprintf(sbm, 16, "%d", c->bm), snprintf(sbn, 16, "%d", c->bn), snprintf(sbk, 16, "%d", c->bk);
  tl_define defs[] = {{"M", sm},
                      {"N", sn},
                      {"K", sk},
                      {"block_M", sbm},
                      {"block_N", sbn},
                      {"block_K", sbk},
                      {"trans_A", c->ta ? "True" : "False"},
                      {"trans_B", c->tb ? "True" : "False"},
                      {"dtype", in_name[c->t]},
                      {"accum_dtype", acc_name[c->t]},
                      {"out_dtype", acc_name[c->t]},
                      {"form", c->form ? c->form : "sr"},
                      {"policy", pol}};
  size_t nd = sizeof defs / sizeof defs[0] - (c->form ? 0 : 2);
  tl_kernel *k = NULL;
  tl_status s = tl_kernel_compile_file(ctx, path, defs, nd, NULL, &k);
  CHECK(s == TL_OK, "%s: compile: %s", what, tl_context_last_error(ctx));
  if (s != TL_OK) return;
  int M = c->M, N = c->N, K = c->K;
  size_t eb = in_dl[c->t].bits / 8, na = (size_t)M * K, nb = (size_t)K * N;
  uint8_t *A = malloc(na * eb), *B = malloc(nb * eb);
  for (int x = 0; x < 2; x++) {
    uint8_t *p = x ? B : A;
    size_t n = x ? nb : na;
    for (size_t i = 0; i < n; i++) {
      uint64_t r = next_u64();
      double u = (double)(r >> 11) * 0x1p-53 * 2 - 1;
      if (c->t == T_TF32) ((float *)p)[i] = (float)u;
      else if (c->t == T_F64) ((double *)p)[i] = u;
      else if (c->t == T_F16) ((uint16_t *)p)[i] = small_int_f16((int)(r % 9) - 4);
      else if (is_fp8(c->t)) p[i] = tl_fp8_encode(u, fp8_dtype(c->t)); /* uniform [-1, 1), rounded */
      else p[i] = (uint8_t)(r >> 56);
    }
  }
  int64_t sa[2] = {c->ta ? K : M, c->ta ? M : K}, sb[2] = {c->tb ? N : K, c->tb ? K : N};
  DLTensor in[2] = {{A, {kDLCPU, 0}, 2, in_dl[c->t], sa, NULL, 0}, {B, {kDLCPU, 0}, 2, in_dl[c->t], sb, NULL, 0}};
  tl_arg args[2] = {tl_arg_tensor(&in[0]), tl_arg_tensor(&in[1])};
  DLManagedTensor *cpu_out[1] = {NULL}, *gpu_out[1] = {NULL}, *host = NULL, *dev[2] = {NULL, NULL};
  s = tl_kernel_call_on(ctx, k, TL_EXEC_CPU, args, 2, NULL, cpu_out);
  CHECK(s == TL_OK, "%s: CPU run: %s", what, tl_context_last_error(ctx));
  if (s == TL_OK) s = gpu_call_host(ctx, k, in, 2, args, dev, gpu_out, &host, what);
  if (s == TL_OK) {
    const void *gp = host->dl_tensor.data, *cp = cpu_out[0]->dl_tensor.data;
    size_t n = (size_t)M * N, same = 0, beyond = 0, first = 0;
    double maxdiff = 0, gerr = 0, cerr = 0;
    size_t ob = c->t == T_F64 ? 8 : 4;
    for (size_t e = 0; e < n; e++) {
      double gv = out_val(c->t, gp, e), cv = out_val(c->t, cp, e);
      if (!memcmp((const uint8_t *)gp + e * ob, (const uint8_t *)cp + e * ob, ob)) same++;
      double d = fabs(gv - cv);
      bool ok =
          (c->t == T_S8 || c->t == T_U8 || c->t == T_F16) ? d == 0 : (isfinite(gv) && d <= 1e-4 + 1e-4 * fabs(cv));
      if (c->t == T_TF32 || c->t == T_F64 ||
          is_fp8(c->t)) { /* against the float64 product of the instruction's operands */
        size_t i = e / (size_t)N, j = e % (size_t)N;
        double x = 0, xa = 0;
        for (int q = 0; q < K; q++) {
          double pr = in_val(c->t, A, c->ta ? (size_t)q * M + i : i * K + q) *
                      in_val(c->t, B, c->tb ? j * K + q : (size_t)q * N + j);
          x += pr, xa += fabs(pr);
        }
        if (fabs(gv - x) > gerr) gerr = fabs(gv - x);
        if (fabs(cv - x) > cerr) cerr = fabs(cv - x);
        /* fp8: the PTX ISA leaves the width of mma's internal accumulation open (Hopper's fp8 tensor
         * cores are reported to keep fewer bits than float32): within 2^-10 of sum |a b| */
        if (is_fp8(c->t)) ok = isfinite(gv) && d <= 0x1p-10 * xa + 1e-6;
      }
      if (!ok && beyond++ == 0) first = e;
      if (d > maxdiff || !isfinite(d)) maxdiff = d;
    }
    CHECK(beyond == 0, "%s: %zu of %zu elements beyond the tolerance (first at %zu: GPU %.9g, CPU %.9g)", what, beyond,
          n, first, out_val(c->t, gp, first), out_val(c->t, cp, first));
    printf("%s %s: GPU vs CPU SIMT executor: %zu of %zu bit-identical, max |diff| %.3g", beyond ? "FAIL" : "ok", what,
           same, n, maxdiff);
    if (c->t == T_TF32 || c->t == T_F64 || is_fp8(c->t))
      printf("; max |err| vs the float64 product of the %s operands: GPU %.3g, CPU model %.3g",
             c->t == T_TF32 ? "tf32-rounded"
             : is_fp8(c->t) ? "float8"
                            : "float64",
             gerr, cerr);
    printf("\n");
    float ms[20];
    DLManagedTensor *t_out[1] = {NULL};
    s = tl_kernel_time(ctx, k, args, 2, NULL, 3, 20, ms, t_out);
    CHECK(s == TL_OK, "%s: tl_kernel_time: %s", what, tl_context_last_error(ctx));
    if (s == TL_OK) {
      float v[20];
      memcpy(v, ms, sizeof v);
      for (int a = 1; a < 20; a++)
        for (int b = a; b > 0 && v[b] < v[b - 1]; b--) {
          float tmp = v[b];
          v[b] = v[b - 1], v[b - 1] = tmp;
        }
      double med = v[10];
      printf("   %s: %.4f ms, %.1f TFLOP/s\n", what, med, 2.0 * M * N * K / (med * 1e-3) / 1e12);
    }
    if (t_out[0]) t_out[0]->deleter(t_out[0]);
  }
  gpu_release(dev, 2), gpu_release(cpu_out, 1), gpu_release(gpu_out, 1), gpu_release(&host, 1);
  free(A), free(B);
  tl_kernel_destroy(k);
}

int main(void) {
  tl_context *ctx = NULL;
  if (tl_context_create(&ctx) != TL_OK) return 1;
  if (tl_device_check(ctx) != TL_OK) {
    printf("SKIP: %s\n", tl_context_last_error(ctx));
    tl_context_destroy(ctx);
    return 77;
  }
  const char *dir = getenv("TL_GPU_KERNELS");
  if (!dir || !*dir) dir = "test/GPU/kernels";
  static const gcase cases[] = {
      {T_TF32, 512, 1024, 768, 64, 128, 32, false, false, NULL, 0},
      {T_TF32, 512, 1024, 768, 64, 128, 32, false, true, NULL, 0},
      {T_TF32, 512, 1024, 768, 64, 128, 32, true, false, NULL, 0},
      {T_S8, 512, 1024, 768, 128, 128, 64, false, true, NULL, 0},
      {T_S8, 512, 1024, 768, 128, 128, 64, true, false, NULL, 0},
      {T_U8, 512, 512, 512, 128, 128, 64, false, false, NULL, 0},
      {T_F64, 512, 512, 512, 64, 32, 16, false, true, NULL, 0},
      {T_F64, 256, 256, 256, 64, 32, 16, false, false, NULL, 0},
      /* the forms, TileLang's gemm_sr (nt) and gemm_rs (tn) cases, and rs with FullRow (registers) */
      {T_F16, 512, 1024, 768, 128, 128, 32, false, true, "sr", 0},
      {T_F16, 512, 1024, 768, 128, 128, 32, true, false, "rs", 0},
      {T_F16, 512, 1024, 768, 128, 128, 32, false, true, "rs", 1},
      /* float8 (m16n8k32 .e4m3/.e5m2 on sm_89+; PTX 8.4) */
      {T_E4M3, 512, 1024, 768, 128, 128, 64, false, true, NULL, 0},
      {T_E4M3, 512, 512, 512, 128, 128, 64, false, false, NULL, 0},
      {T_E5M2, 512, 512, 512, 128, 128, 64, true, false, NULL, 0},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) run_case(ctx, dir, &cases[i]);
  tl_context_destroy(ctx);
  printf("%s: %d failure(s)\n", g_failures ? "FAIL" : "PASS", g_failures);
  return g_failures ? 1 : 0;
}
