/* Unit tests of the SIMT executor's warp collectives (lib/Interp/simt_warp.c):
 *  - T.ptx_ldmatrix x1/x2/x4, each with and without .trans: fresh random
 *    f16 data in shared memory, each lane addressing a random row; every
 *    delivered register compared bit for bit with the PTX definition
 *    (register i of lane l = matrix i row l/4 cols 2(l%4), 2(l%4)+1, or the
 *    transposed pair), computed here independently;
 *  - T.ptx_mma m16n8k16 with f16 and bf16 inputs, f32 and f16 accumulators:
 *    fragments loaded from global memory by the PTX ISA fragment maps
 *    (plain loads, independent of ldmatrix), D compared with a direct
 *    float64 matrix product (f32: |diff| <= 1e-6 relative; f16: within f16
 *    rounding), over several random tiles;
 *  - shuffles (xor, down with width, up, sync with width; int and float)
 *    against CUDA's definition of each, and a partial-warp shuffle error. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "IR/tir.h"
#include "Interp/interp.h"

static uint64_t rng = 0x9E3779B97F4A7C15ull;
static uint64_t next_u64(void) {
  rng ^= rng << 13;
  rng ^= rng >> 7;
  rng ^= rng << 17;
  return rng;
}
static double urand(void) { return (double)(next_u64() >> 11) / 9007199254740992.0 * 2.0 - 1.0; }

/* f16 / bf16 encodings of values already representable */
static uint16_t h_bits(double v) {
  if (v == 0) return signbit(v) ? 0x8000 : 0;
  uint16_t s = v < 0 ? 0x8000 : 0;
  v = fabs(v);
  if (v < ldexp(1, -14)) return (uint16_t)(s | (uint16_t)(v * 16777216.0));
  int e = 0;
  while (ldexp(1, e + 1) <= v) e++;
  while (ldexp(1, e) > v) e--;
  return (uint16_t)(s | ((e + 15) << 10) | (int)((v / ldexp(1, e) - 1.0) * 1024.0));
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

static tl_module *parse(const char *src) {
  tl_module *m = tl_module_new();
  tl_diag d;
  tl_diag_init(&d);
  bool ok = tl_frontend_parse(m, &d, src, strlen(src), "warp.py", NULL, 0);
  cr_assert(ok, "%s\n%s", d.out.data ? d.out.data : "", src);
  tl_diag_free(&d);
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
static void run(const tl_module *m, tl_interp_arg *args, int nargs) {
  tl_diag d;
  tl_diag_init(&d);
  bool ok = tl_simt_exec(m, 0, args, nargs, NULL, 0, NULL, &d);
  cr_assert(ok, "tl_simt_exec: %s", d.out.data ? d.out.data : "");
  tl_diag_free(&d);
}

/* ------------------------------------------------------------- ldmatrix */
static void ldmatrix_case(int num, bool trans) {
  char src[2048];
  snprintf(src, sizeof src,
           "import tilelang.language as T\n"
           "\n"
           "@T.prim_func\n"
           "def main(A: T.Tensor((512,), \"float16\"), rows: T.Tensor((32,), \"int32\"), O: T.Tensor((32, 8), "
           "\"float16\")):\n"
           "    with T.Kernel(1, threads=32) as bx:\n"
           "        S = T.alloc_shared((512,), \"float16\")\n"
           "        R = T.alloc_local((10,), \"float16\")\n"
           "        tid = T.get_thread_binding(0)\n"
           "        for i in T.serial(16):\n"
           "            S[tid * 16 + i] = A[tid * 16 + i]\n"
           "        T.sync_threads()\n"
           "        T.ptx_ldmatrix(R, 2, S, rows[tid] * 8, %d, %s)\n"
           "        for j in T.serial(%d):\n"
           "            O[tid, j] = R[j + 2]\n",
           num, trans ? "True" : "False", 2 * num);
  tl_module *m = parse(src);
  for (int rep = 0; rep < 3; rep++) {
    uint16_t A[512], O[32 * 8];
    int32_t rows[32];
    for (int i = 0; i < 512; i++) A[i] = h_bits(tl_round_to_dtype(urand() * 8, TL_FLOAT16));
    /* each lane addresses a random row of the 64 in S (distinct rows) */
    int perm[64];
    for (int i = 0; i < 64; i++) perm[i] = i;
    for (int i = 63; i > 0; i--) {
      int j = (int)(next_u64() % (uint64_t)(i + 1)), t = perm[i];
      perm[i] = perm[j];
      perm[j] = t;
    }
    for (int l = 0; l < 32; l++) rows[l] = perm[l];
    memset(O, 0xFF, sizeof O);
    tl_interp_arg args[3] = {tensor(A, 1, 512, 0), tensor(rows, 1, 32, 0), tensor(O, 2, 32, 8)};
    run(m, args, 3);
    for (int l = 0; l < 32; l++)
      for (int i = 0; i < num; i++) {
        int g = l / 4, c = 2 * (l % 4);
        /* M_i[r][k] = S[rows[8i + r] * 8 + k] */
#define MI(r, k) A[rows[8 * i + (r)] * 8 + (k)]
        uint16_t lo = trans ? MI(c, g) : MI(g, c);
        uint16_t hi = trans ? MI(c + 1, g) : MI(g, c + 1);
#undef MI
        cr_assert_eq(O[l * 8 + 2 * i], lo, "x%d%s lane %d reg %d lo: 0x%04x, want 0x%04x", num, trans ? ".trans" : "",
                     l, i, O[l * 8 + 2 * i], lo);
        cr_assert_eq(O[l * 8 + 2 * i + 1], hi, "x%d%s lane %d reg %d hi", num, trans ? ".trans" : "", l, i);
      }
  }
  tl_module_destroy(m);
}
Test(ldmatrix, x1) { ldmatrix_case(1, false); }
Test(ldmatrix, x1_trans) { ldmatrix_case(1, true); }
Test(ldmatrix, x2) { ldmatrix_case(2, false); }
Test(ldmatrix, x2_trans) { ldmatrix_case(2, true); }
Test(ldmatrix, x4) { ldmatrix_case(4, false); }
Test(ldmatrix, x4_trans) { ldmatrix_case(4, true); }

Test(ldmatrix, misaligned_row) {
  const char *src =
      "import tilelang.language as T\n"
      "\n"
      "@T.prim_func\n"
      "def main(A: T.Tensor((512,), \"float16\"), O: T.Tensor((32, 8), \"float16\")):\n"
      "    with T.Kernel(1, threads=32) as bx:\n"
      "        S = T.alloc_shared((512,), \"float16\")\n"
      "        R = T.alloc_local((8,), \"float16\")\n"
      "        tid = T.get_thread_binding(0)\n"
      "        for i in T.serial(16):\n"
      "            S[tid * 16 + i] = A[tid * 16 + i]\n"
      "        T.sync_threads()\n"
      "        T.ptx_ldmatrix(R, 0, S, tid * 8 + 4, 4, False)\n";
  tl_module *m = parse(src);
  uint16_t A[512] = {0}, O[256];
  tl_interp_arg args[2] = {tensor(A, 1, 512, 0), tensor(O, 2, 32, 8)};
  tl_diag d;
  tl_diag_init(&d);
  cr_assert(!tl_simt_exec(m, 0, args, 2, NULL, 0, NULL, &d));
  cr_assert(strstr(d.out.data, "not 16-byte aligned"), "%s", d.out.data);
  cr_assert_eq(d.first_error.line, 12);
  tl_diag_free(&d);
  tl_module_destroy(m);
}

/* ------------------------------------------------------------------ mma */
static void mma_case(bool bf16, bool acc16) {
  const char *in = bf16 ? "bfloat16" : "float16", *acc = acc16 ? "float16" : "float32";
  char src[4096];
  snprintf(src, sizeof src,
           "import tilelang.language as T\n"
           "\n"
           "@T.prim_func\n"
           "def main(A: T.Tensor((2, 16, 16), \"%s\"), B: T.Tensor((2, 16, 8), \"%s\"), C: T.Tensor((2, 16, 8), "
           "\"%s\"), D: T.Tensor((2, 16, 8), \"%s\")):\n"
           "    with T.Kernel(1, threads=64) as bx:\n"
           "        a = T.alloc_local((8,), \"%s\")\n"
           "        b = T.alloc_local((6,), \"%s\")\n"
           "        c = T.alloc_local((5,), \"%s\")\n"
           "        tid = T.get_thread_binding(0)\n"
           "        w = tid // 32\n"
           "        g = tid %% 32 // 4\n"
           "        t = tid %% 4\n"
           "        a[0] = A[w, g, t * 2]\n"
           "        a[1] = A[w, g, t * 2 + 1]\n"
           "        a[2] = A[w, g + 8, t * 2]\n"
           "        a[3] = A[w, g + 8, t * 2 + 1]\n"
           "        a[4] = A[w, g, t * 2 + 8]\n"
           "        a[5] = A[w, g, t * 2 + 9]\n"
           "        a[6] = A[w, g + 8, t * 2 + 8]\n"
           "        a[7] = A[w, g + 8, t * 2 + 9]\n"
           "        b[2] = B[w, t * 2, g]\n"
           "        b[3] = B[w, t * 2 + 1, g]\n"
           "        b[4] = B[w, t * 2 + 8, g]\n"
           "        b[5] = B[w, t * 2 + 9, g]\n"
           "        c[1] = C[w, g, t * 2]\n"
           "        c[2] = C[w, g, t * 2 + 1]\n"
           "        c[3] = C[w, g + 8, t * 2]\n"
           "        c[4] = C[w, g + 8, t * 2 + 1]\n"
           "        T.ptx_mma(a, 0, b, 2, c, 1, \"m16n8k16\")\n"
           "        D[w, g, t * 2] = c[1]\n"
           "        D[w, g, t * 2 + 1] = c[2]\n"
           "        D[w, g + 8, t * 2] = c[3]\n"
           "        D[w, g + 8, t * 2 + 1] = c[4]\n",
           in, in, acc, acc, in, in, acc);
  tl_module *m = parse(src);
  tl_dtype it = bf16 ? TL_DT(TL_TYPE_BFLOAT, 16) : TL_FLOAT16;
  for (int rep = 0; rep < 4; rep++) {
    uint16_t A[2 * 256], B[2 * 128], C16[2 * 128], D16[2 * 128];
    float C32[2 * 128], D32[2 * 128];
    double Ad[2 * 256], Bd[2 * 128], Cd[2 * 128];
    for (int i = 0; i < 2 * 256; i++) {
      Ad[i] = tl_round_to_dtype(urand() * 2, it);
      A[i] = bf16 ? bf_bits(Ad[i]) : h_bits(Ad[i]);
    }
    for (int i = 0; i < 2 * 128; i++) {
      Bd[i] = tl_round_to_dtype(urand() * 2, it);
      B[i] = bf16 ? bf_bits(Bd[i]) : h_bits(Bd[i]);
      Cd[i] = acc16 ? tl_round_to_dtype(urand() * 4, TL_FLOAT16) : (double)(float)(urand() * 4);
      C16[i] = h_bits(acc16 ? Cd[i] : 0);
      C32[i] = (float)Cd[i];
    }
    memset(D16, 0xFF, sizeof D16);
    for (int i = 0; i < 2 * 128; i++) D32[i] = NAN;
    tl_interp_arg args[4] = {tensor(A, 3, 2, 16), tensor(B, 3, 2, 16), tensor(acc16 ? (void *)C16 : C32, 3, 2, 16),
                             tensor(acc16 ? (void *)D16 : D32, 3, 2, 16)};
    args[0].shape[2] = 16;
    args[1].shape[2] = 8;
    args[2].shape[2] = 8;
    args[3].shape[2] = 8;
    run(m, args, 4);
    for (int w = 0; w < 2; w++)
      for (int i = 0; i < 16; i++)
        for (int j = 0; j < 8; j++) {
          double exact = Cd[w * 128 + i * 8 + j];
          for (int k = 0; k < 16; k++) exact += Ad[w * 256 + i * 16 + k] * Bd[w * 128 + k * 8 + j];
          int o = w * 128 + i * 8 + j;
          if (acc16) {
            double got = h_val(D16[o]);
            cr_assert(fabs(got - exact) <= ldexp(fabs(exact), -11) + ldexp(1, -25),
                      "%s->f16 D[%d][%d][%d] = %.9g, exact %.9g", in, w, i, j, got, exact);
          } else {
            double got = D32[o];
            cr_assert(fabs(got - exact) <= 1e-6 * fabs(exact) + 1e-30, "%s->f32 D[%d][%d][%d] = %.9g, exact %.9g", in,
                      w, i, j, got, exact);
          }
        }
  }
  (void)bf_val;
  tl_module_destroy(m);
}
Test(mma, f16_f32acc) { mma_case(false, false); }
Test(mma, f16_f16acc) { mma_case(false, true); }
Test(mma, bf16_f32acc) { mma_case(true, false); }

Test(mma, bf16_with_f16_accumulator_is_rejected) {
  const char *src =
      "import tilelang.language as T\n"
      "\n"
      "@T.prim_func\n"
      "def main(D: T.Tensor((32,), \"float16\")):\n"
      "    with T.Kernel(1, threads=32) as bx:\n"
      "        a = T.alloc_local((8,), \"bfloat16\")\n"
      "        b = T.alloc_local((4,), \"bfloat16\")\n"
      "        c = T.alloc_local((4,), \"float16\")\n"
      "        T.ptx_mma(a, 0, b, 0, c, 0, \"m16n8k16\")\n";
  tl_module *m = parse(src);
  uint16_t D[32];
  tl_interp_arg args[1] = {tensor(D, 1, 32, 0)};
  tl_diag d;
  tl_diag_init(&d);
  cr_assert(!tl_simt_exec(m, 0, args, 1, NULL, 0, NULL, &d));
  cr_assert(strstr(d.out.data, "accumulator dtype float16 is not supported with bfloat16"), "%s", d.out.data);
  cr_assert_eq(d.first_error.line, 9);
  tl_diag_free(&d);
  tl_module_destroy(m);
}

/* ------------------------------------------------------------- shuffles */
Test(shuffle, xor_down_up_sync) {
  const char *src =
      "import tilelang.language as T\n"
      "\n"
      "@T.prim_func\n"
      "def main(X: T.Tensor((64,), \"int32\"), F: T.Tensor((64,), \"float32\"), O: T.Tensor((5, 64), \"int32\"), P: "
      "T.Tensor((64,), \"float32\")):\n"
      "    with T.Kernel(1, threads=64) as bx:\n"
      "        tid = T.get_thread_binding(0)\n"
      "        O[0, tid] = T.shfl_xor(X[tid], 5)\n"
      "        O[1, tid] = T.shfl_down(X[tid], 3, 8)\n"
      "        O[2, tid] = T.shfl_up(X[tid], 2)\n"
      "        O[3, tid] = T.shfl_sync(-1, X[tid], tid * 7 % 32, 16)\n"
      "        O[4, tid] = T.shfl_down(X[tid], 17)\n"
      "        P[tid] = T.shfl_xor(F[tid], 16)\n";
  tl_module *m = parse(src);
  int32_t X[64], O[5 * 64];
  float F[64], P[64];
  for (int i = 0; i < 64; i++) X[i] = (int32_t)(next_u64() % 100000) - 50000, F[i] = (float)urand();
  tl_interp_arg args[4] = {tensor(X, 1, 64, 0), tensor(F, 1, 64, 0), tensor(O, 2, 5, 64), tensor(P, 1, 64, 0)};
  run(m, args, 4);
  for (int t = 0; t < 64; t++) {
    int w = t & ~31, l = t & 31;
    cr_assert_eq(O[t], X[w + (l ^ 5)], "xor lane %d", t);
    int sd = (l % 8) + 3 < 8 ? l + 3 : l; /* down within 8-lane segments */
    cr_assert_eq(O[64 + t], X[w + sd], "down lane %d", t);
    int su = l >= 2 ? l - 2 : l;
    cr_assert_eq(O[128 + t], X[w + su], "up lane %d", t);
    int ss = (l / 16) * 16 + (t * 7 % 32) % 16;
    cr_assert_eq(O[192 + t], X[w + ss], "sync lane %d", t);
    int s17 = l + 17 < 32 ? l + 17 : l;
    cr_assert_eq(O[256 + t], X[w + s17], "down 17 lane %d", t);
    cr_assert_eq(P[t], F[w + (l ^ 16)], "float xor lane %d", t);
  }
  tl_module_destroy(m);
}

Test(shuffle, partial_warp_is_an_error) {
  const char *src =
      "import tilelang.language as T\n"
      "\n"
      "@T.prim_func\n"
      "def main(X: T.Tensor((64,), \"int32\"), O: T.Tensor((64,), \"int32\")):\n"
      "    with T.Kernel(1, threads=64) as bx:\n"
      "        tid = T.get_thread_binding(0)\n"
      "        if tid % 2 == 0:\n"
      "            O[tid] = T.shfl_xor(X[tid], 2)\n";
  tl_module *m = parse(src);
  int32_t X[64] = {0}, O[64];
  tl_interp_arg args[2] = {tensor(X, 1, 64, 0), tensor(O, 1, 64, 0)};
  tl_diag d;
  tl_diag_init(&d);
  cr_assert(!tl_simt_exec(m, 0, args, 2, NULL, 0, NULL, &d));
  cr_assert(strstr(d.out.data, "shfl_xor executed by a partial warp: 16 of 32 lanes"), "%s", d.out.data);
  cr_assert_eq(d.first_error.line, 8);
  tl_diag_free(&d);
  tl_module_destroy(m);
}
