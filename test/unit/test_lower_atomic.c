/* Unit tests of T.atomic_add (lib/Lower/lower_atomic.c, the SIMT executor's
 * T.ptx_atomic_add, codegen of it; issue 7):
 *  - numerics: kernels are lowered for sm_80 / sm_90a and run by the SIMT
 *    executor; every destination element is compared EXACTLY with a plain C
 *    computation and with the tile-level reference evaluator.  The inputs are
 *    multiples of 1/8 below 4 in magnitude, so every partial sum is exact in
 *    f16 (and f32) and the result does not depend on the order of the
 *    atomics; the destination starts from non-zero values (atomics add to
 *    what is there);
 *  - forms: tile region from a fragment (T.copy-distributed), from a shared
 *    tile with a partial last block (out-of-bounds rows skipped), a scalar
 *    value added to a region, the scalar form in a T.Parallel loop, the
 *    one-element form outside loops (once per block), f16 values into an f32
 *    destination (converted first), and f16 destinations whose register
 *    pairs become f16x2 atomics (counted in the SIMT IR and in the PTX);
 *  - bf16 destinations: pairs only on sm_90a (bf16x2), scalar on sm_80;
 *  - the value form: a hand-written SIMT kernel uses the old value returned
 *    by T.ptx_atomic_add(..., True): the executor applies the threads in
 *    order, so thread t sees t increments;
 *  - errors: memory_order other than "relaxed" and a region inside a
 *    T.Parallel loop are errors at their lines. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "IR/tir.h"
#include "Interp/interp.h"
#include "Lower/lower.h"
#include "NVPTX/nvptx.h"

/* ------------------------------------------------------------ encodings */
static uint16_t h_bits(double v) { /* v exactly representable in f16, normal or 0 */
  if (v == 0) return signbit(v) ? 0x8000 : 0;
  uint16_t s = v < 0 ? 0x8000 : 0;
  v = fabs(v);
  int e;
  double f = frexp(v, &e); /* v = f 2^e, f in [0.5, 1) */
  int mant = (int)((f * 2.0 - 1.0) * 1024.0);
  return (uint16_t)(s | ((e - 1 + 15) << 10) | mant);
}
static double h_val(uint16_t h) {
  int e = (h >> 10) & 31, m = h & 1023;
  double v = e == 0 ? m * ldexp(1, -24) : (1024 + m) * ldexp(1, e - 25);
  return (h & 0x8000) ? -v : v;
}
static uint16_t bf_bits(double v) {
  float f = (float)v;
  uint32_t u;
  memcpy(&u, &f, 4);
  return (uint16_t)(u >> 16);
}
static double bf_val(uint16_t h) {
  uint32_t u = (uint32_t)h << 16;
  float f;
  memcpy(&f, &u, 4);
  return f;
}

static uint64_t rng = 0x2545F4914F6CDD1Dull;
static double eighths(void) { /* a multiple of 1/8 in [-2, 2) */
  rng ^= rng << 13;
  rng ^= rng >> 7;
  rng ^= rng << 17;
  return (double)((int)(rng >> 40) % 32 - 16) / 8.0;
}

/* ------------------------------------------------------------ modules */
static tl_module *parse(const char *src, bool lower, const char *target) {
  tl_module *m = tl_module_new();
  tl_diag d;
  tl_diag_init(&d);
  bool ok = tl_frontend_parse(m, &d, src, strlen(src), "test.py", NULL, 0);
  if (ok && lower) {
    tl_lower_options o = {.target = tl_target_lookup(target), .verify_each = true};
    ok = tl_lower_module(m, &o, &d);
  }
  cr_assert(ok, "%s", d.out.data ? d.out.data : "");
  tl_diag_free(&d);
  return m;
}

static char *simt_text(const tl_module *m) {
  tl_strbuf b = {0};
  tl_print_module(&b, m);
  return b.data;
}

static int count(const char *hay, const char *needle) {
  int n = 0;
  for (const char *p = hay; (p = strstr(p, needle)); p += strlen(needle)) n++;
  return n;
}

static char *ptx_of(const tl_module *m, const char *target) {
  tl_diag d;
  tl_diag_init(&d);
  tl_codegen_result r;
  memset(&r, 0, sizeof r);
  bool ok = tl_nvptx_emit(m, tl_target_lookup(target), &d, &r);
  cr_assert(ok, "codegen: %s", d.out.data ? d.out.data : "");
  tl_diag_free(&d);
  char *p = strdup(r.ptx);
  tl_codegen_result_free(&r);
  return p;
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

static void run(const tl_module *m, bool simt, tl_interp_arg *args, int nargs) {
  tl_diag d;
  tl_diag_init(&d);
  bool ok = simt ? tl_simt_exec(m, 0, args, nargs, NULL, 0, NULL, &d) : tl_ref_eval(m, 0, args, nargs, NULL, 0, &d);
  cr_assert(ok, "%s failed: %s", simt ? "tl_simt_exec" : "tl_ref_eval", d.out.data ? d.out.data : "");
  tl_diag_free(&d);
}

/* ============================================================ f32 forms */
/* C (37 x 24, f32) += blocks of A (f16) through a shared tile (rows past 37
 * skipped), += 2*A[i, j] in a T.Parallel scalar form, += 0.5 everywhere
 * (scalar value over a region); S[bx] += 1 once per block; F (a
 * T.copy-distributed fragment of B) added to D. */
static const char *forms_src =
    "import tilelang.language as T\n"
    "@T.prim_func\n"
    "def main(A: T.Tensor((37, 24), \"float16\"), B: T.Tensor((32, 16), \"float32\"),\n"
    "         C: T.Tensor((37, 24), \"float32\"), D: T.Tensor((16, 16), \"float32\"),\n"
    "         S: T.Tensor((3,), \"float32\")):\n"
    "    with T.Kernel(3, threads=64) as bx:\n"
    "        A_s = T.alloc_shared((16, 24), \"float16\")\n"
    "        F = T.alloc_fragment((16, 16), \"float32\")\n"
    "        T.copy(A[bx * 16, 0], A_s)\n"
    "        T.atomic_add(C[bx * 16:bx * 16 + 16, 0:24], A_s)\n"
    "        for i, j in T.Parallel(4, 24):\n"
    "            T.atomic_add(C[bx * 4 + i, j], T.Cast(\"float32\", A_s[i, j]) * 2.0)\n"
    "        T.atomic_add(C[bx * 8:bx * 8 + 8, 0:24], 0.5)\n"
    "        T.atomic_add(S[bx], 1.0)\n"
    "        if bx < 2:\n"
    "            T.copy(B[bx * 16, 0], F)\n"
    "            T.atomic_add(D, F)\n";

Test(atomic, forms_f32_exact) {
  tl_module *lo = parse(forms_src, true, "sm_80"), *hi = parse(forms_src, false, NULL);
  char *txt = simt_text(lo);
  cr_assert(!strstr(txt, "T.atomic_add"), "T.atomic_add left in the SIMT IR:\n%s", txt);
  cr_assert(count(txt, "T.ptx_atomic_add(") == 5, "expected 5 atomic sites:\n%s", txt);
  free(txt);
  enum { AM = 37, AN = 24 };
  uint16_t A[AM * AN];
  float B[32 * 16], C0[AM * AN], D0[256], S0[3];
  double Ad[AM * AN];
  for (int i = 0; i < AM * AN; i++) Ad[i] = eighths(), A[i] = h_bits(Ad[i]);
  for (int i = 0; i < 32 * 16; i++) B[i] = (float)eighths();
  for (int i = 0; i < AM * AN; i++) C0[i] = (float)eighths();
  for (int i = 0; i < 256; i++) D0[i] = (float)eighths();
  for (int i = 0; i < 3; i++) S0[i] = (float)i;
  /* the C model */
  double Cw[AM * AN], Dw[256], Sw[3];
  for (int i = 0; i < AM * AN; i++) Cw[i] = C0[i];
  for (int i = 0; i < 256; i++) Dw[i] = D0[i];
  for (int i = 0; i < 3; i++) Sw[i] = S0[i] + 1.0;
  for (int bx = 0; bx < 3; bx++) {
    for (int r = 0; r < 16; r++)
      for (int c = 0; c < AN; c++)
        if (bx * 16 + r < AM) Cw[(bx * 16 + r) * AN + c] += Ad[(bx * 16 + r) * AN + c];
    for (int r = 0; r < 4; r++)
      for (int c = 0; c < AN; c++)
        if (bx * 16 + r < AM) Cw[(bx * 4 + r) * AN + c] += 2.0 * Ad[(bx * 16 + r) * AN + c];
    for (int r = 0; r < 8; r++)
      for (int c = 0; c < AN; c++) Cw[(bx * 8 + r) * AN + c] += 0.5;
    if (bx < 2)
      for (int i = 0; i < 256; i++) Dw[i] += B[bx * 256 + i];
  }
  for (int pass = 0; pass < 2; pass++) {
    float C[AM * AN], D[256], S[3];
    memcpy(C, C0, sizeof C), memcpy(D, D0, sizeof D), memcpy(S, S0, sizeof S);
    tl_interp_arg args[5] = {tensor(A, 2, AM, AN), tensor(B, 2, 32, 16), tensor(C, 2, AM, AN), tensor(D, 2, 16, 16),
                             tensor(S, 1, 3, 0)};
    run(pass ? hi : lo, pass == 0, args, 5);
    const char *who = pass ? "reference evaluator" : "SIMT executor";
    for (int i = 0; i < AM * AN; i++)
      cr_assert(C[i] == (float)Cw[i], "%s: C[%d, %d] = %g, want %g", who, i / AN, i % AN, (double)C[i], Cw[i]);
    for (int i = 0; i < 256; i++)
      cr_assert(D[i] == (float)Dw[i], "%s: D[%d] = %g, want %g", who, i, (double)D[i], Dw[i]);
    for (int i = 0; i < 3; i++) cr_assert(S[i] == (float)Sw[i], "%s: S[%d] = %g, want %g", who, i, (double)S[i], Sw[i]);
  }
  tl_module_destroy(lo);
  tl_module_destroy(hi);
}

/* ====================================================== f16 / bf16 pairs */
/* A fragment accumulated by T.Parallel (f32) added to an f16 / bf16
 * destination: the value is converted to the destination's dtype first;
 * register pairs of consecutive columns become x2 vector atomics. */
static char *pairs_src(const char *dt) {
  static char buf[1024];
  snprintf(buf, sizeof buf,
           "import tilelang.language as T\n"
           "@T.prim_func\n"
           "def main(A: T.Tensor((64, 32), \"float32\"), C: T.Tensor((64, 32), \"%s\")):\n"
           "    with T.Kernel(2, threads=128) as bx:\n"
           "        F = T.alloc_fragment((32, 32), \"float32\")\n"
           "        for i, j in T.Parallel(32, 32):\n"
           "            F[i, j] = A[bx * 32 + i, j] * 2.0\n"
           "        T.atomic_add(C[bx * 32:bx * 32 + 32, 0:32], F)\n"
           "        T.atomic_add(C[bx * 32:bx * 32 + 32, 0:32], F)\n",
           dt);
  return buf;
}

static void pairs_case(const char *dt, bool bf16, const char *target, bool want_pairs) {
  char *src = pairs_src(dt);
  tl_module *lo = parse(src, true, target), *hi = parse(src, false, NULL);
  char *txt = simt_text(lo);
  char vec[32];
  snprintf(vec, sizeof vec, "T.Cast(\"%sx2\"", dt);
  int pairs = count(txt, vec);
  cr_assert(want_pairs ? pairs == 2 : pairs == 0, "%s on %s: %d x2 atomic sites:\n%s", dt, target, pairs, txt);
  free(txt);
  char *ptx = ptx_of(lo, target);
  const char *ins = bf16 ? "red.global.add.noftz.bf16x2" : "red.global.add.noftz.f16x2";
  cr_assert(want_pairs ? count(ptx, ins) > 0 : count(ptx, ins) == 0, "%s on %s: PTX and %s disagree", dt, target, ins);
  free(ptx);
  float A[64 * 32];
  uint16_t C0[64 * 32];
  double Cw[64 * 32];
  for (int i = 0; i < 64 * 32; i++) {
    A[i] = (float)eighths();
    double c = eighths();
    C0[i] = bf16 ? bf_bits(c) : h_bits(c);
    Cw[i] = c + 4.0 * A[i]; /* exact: multiples of 1/8 below 12 */
  }
  for (int pass = 0; pass < 2; pass++) {
    uint16_t C[64 * 32];
    memcpy(C, C0, sizeof C);
    tl_interp_arg args[2] = {tensor(A, 2, 64, 32), tensor(C, 2, 64, 32)};
    run(pass ? hi : lo, pass == 0, args, 2);
    for (int i = 0; i < 64 * 32; i++) {
      double got = bf16 ? bf_val(C[i]) : h_val(C[i]);
      cr_assert(got == Cw[i], "%s %s (%s): C[%d] = %g, want %g", dt, target, pass ? "reference" : "executor", i, got,
                Cw[i]);
    }
  }
  tl_module_destroy(lo);
  tl_module_destroy(hi);
}

Test(atomic, f16_pairs_sm80) { pairs_case("float16", false, "sm_80", true); }
Test(atomic, bf16_scalar_sm80) { pairs_case("bfloat16", true, "sm_80", false); }
Test(atomic, bf16_pairs_sm90a) { pairs_case("bfloat16", true, "sm_90a", true); }

/* ============================================================ value form */
/* SIMT text: every thread adds 1 to C[0] and stores the old value it saw. */
Test(atomic, return_prev_value_in_thread_order) {
  const char *src =
      "import tilelang.language as T\n"
      "@T.prim_func\n"
      "def main(C: T.Tensor((1,), \"int32\"), O: T.Tensor((64,), \"int32\"), H: T.Tensor((2,), \"float16\")):\n"
      "    with T.Kernel(1, threads=64) as bx:\n"
      "        old = T.ptx_atomic_add(C, 0, 1, True)\n"
      "        O[T.get_thread_binding(0)] = old\n"
      "        if T.get_thread_binding(0) < 4:\n"
      "            T.ptx_atomic_add(H, 0, T.Broadcast(T.float16(0.25), 2), False)\n";
  tl_module *m = parse(src, true, "sm_80");
  int32_t C[1] = {100}, O[64];
  uint16_t H[2] = {h_bits(1.0), h_bits(-2.0)};
  tl_interp_arg args[3] = {tensor(C, 1, 1, 0), tensor(O, 1, 64, 0), tensor(H, 1, 2, 0)};
  run(m, true, args, 3);
  cr_assert_eq(C[0], 164);
  for (int t = 0; t < 64; t++) cr_assert_eq(O[t], 100 + t, "thread %d saw %d", t, O[t]);
  cr_assert(h_val(H[0]) == 2.0 && h_val(H[1]) == -1.0, "H = (%g, %g)", h_val(H[0]), h_val(H[1]));
  char *ptx = ptx_of(m, "sm_80");
  cr_assert(strstr(ptx, "atom.global.add.u32") || strstr(ptx, "atom.global.add.s32"), "no integer atom:\n%s", ptx);
  cr_assert(strstr(ptx, "red.global.add.noftz.f16x2"), "no f16x2 red");
  free(ptx);
  tl_module_destroy(m);
}

/* ================================================================ errors */
Test(atomic, errors_name_the_rule) {
  const char *src =
      "import tilelang.language as T\n"
      "@T.prim_func\n"
      "def main(A: T.Tensor((64,), \"float32\"), C: T.Tensor((64,), \"float32\")):\n"
      "    with T.Kernel(1, threads=64) as bx:\n"
      "        T.atomic_add(C[0:64], A, memory_order=\"acquire\")\n"
      "        for i in T.Parallel(4):\n"
      "            T.atomic_add(C[i * 16:i * 16 + 16], A[0:16])\n";
  tl_module *m = tl_module_new();
  tl_diag d;
  tl_diag_init(&d);
  cr_assert(tl_frontend_parse(m, &d, src, strlen(src), "e.py", NULL, 0));
  tl_lower_options o = {.target = tl_target_lookup("sm_80"), .verify_each = true};
  cr_assert(!tl_lower_module(m, &o, &d));
  const char *out = d.out.data ? d.out.data : "";
  cr_assert(strstr(out, "e.py:5:") && strstr(out, "memory_order=\"acquire\" is not lowered yet"), "%s", out);
  cr_assert(strstr(out, "e.py:7:13: error: T.atomic_add of a 16-element region inside a T.Parallel loop"), "%s", out);
  tl_diag_free(&d);
  tl_module_destroy(m);
}
