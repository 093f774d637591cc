/* Unit tests of the SIMT executor's warpgroup MMA (lib/Interp/Hopper/simt_wgmma.c,
 * docs/simt-ir.md "wgmma"; issue 12, part W), on the hand-written kernel
 * test/GPU/kernels/wgmma_ss.py (unlowered: its own T.sync_threads() is the
 * only synchronisation):
 *  1. every pair of operand layouts for A and B — K-major and MN-major, each
 *     with swizzle span 0, 32, 64 and 128 bytes (64 pairs, n = 64) — and
 *     n = 8, 24, 256, float16 accumulators, bfloat16 inputs: shared memory
 *     filled by ordinary stores at the swizzled addresses, four
 *     T.ptx_wgmma_ss k-steps (the first with scale_d 0 over accumulators set
 *     to 1000), C compared element for element with a plain float64 product
 *     of the inputs computed here (small integers: every sum is exact, so
 *     equality is required);
 *  2. planted faults, each an error naming what is wrong: no
 *     T.ptx_fence_proxy_async() after the stores (proxy ordering), no
 *     barrier between the stores and the mma (a race), a swizzle span of 48,
 *     an LBO not a multiple of 16, n = 12, a misaligned start address, an
 *     operand read past its buffer, a wait count of 8, setmaxnreg counts,
 *     a warpgroup the block does not contain, a partial warp, an operand
 *     overwritten before the wait (with no wait, and with wait_group 1
 *     leaving the group pending) and after the wait by another warp with no
 *     barrier (a race); with a barrier after the wait the overwrite is fine. */
#include <criterion/criterion.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "IR/tir.h"
#include "Interp/interp.h"
#include "test_util.h"

#define KERNEL "test/GPU/kernels/wgmma_ss.py"

/* 16-bit encodings of small integers (exact in f16 and bf16) and back. */
static uint16_t enc16(double v, bool bf16) {
  float f = (float)v;
  uint32_t u;
  memcpy(&u, &f, 4);
  if (bf16) return (uint16_t)(u >> 16);
  if (f == 0) return (uint16_t)((u >> 16) & 0x8000);
  return (uint16_t)(((u >> 16) & 0x8000) | ((((u >> 23) & 0xFF) - 127 + 15) << 10) | ((u >> 13) & 0x3FF));
}
static double dec_f16(uint16_t h) {
  int e = (h >> 10) & 0x1F, m = h & 0x3FF;
  double v = e ? (1.0 + m / 1024.0) * (double)(1 << e) / (double)(1 << 15) : m / 1024.0 / (double)(1 << 14);
  return h & 0x8000 ? -v : v;
}

typedef struct wg_case {
  int a_mn, a_sw, b_mn, b_sw, n;
  const char *acc, *dtype;
  bool rs; /* wgmma_rs.py (two warpgroups, A from registers; a_mn, a_sw unused) */
} wg_case;

/* Runs src (the kernel, maybe edited) for case c; on success compares C with
 * the float64 product.  Returns the executor's success; diagnostics in *diag. */
static bool run_case(const char *src, const wg_case *c, char **diag) {
  char v[5][16];
  snprintf(v[0], 16, "%d", c->a_mn);
  snprintf(v[1], 16, "%d", c->a_sw);
  snprintf(v[2], 16, "%d", c->b_mn);
  snprintf(v[3], 16, "%d", c->b_sw);
  snprintf(v[4], 16, "%d", c->n);
  tl_define defs[7] = {{"b_mn", v[2]},      {"b_sw", v[3]}, {"n", v[4]},   {"acc", c->acc},
                       {"dtype", c->dtype}, {"a_mn", v[0]}, {"a_sw", v[1]}};
  tl_module *m = tl_module_new();
  tl_diag d;
  tl_diag_init(&d);
  bool ok = tl_frontend_parse(m, &d, src, strlen(src), c->rs ? "wgmma_rs.py" : "wgmma_ss.py", defs, c->rs ? 5 : 7);
  cr_assert(ok, "parse: %s", d.out.data ? d.out.data : "");
  int n = c->n, K = 64, M = c->rs ? 128 : 64;
  bool bf16 = !strcmp(c->dtype, "bfloat16"), c16 = !strcmp(c->acc, "float16");
  uint16_t *A = malloc(2 * (size_t)M * K), *B = malloc(2 * (size_t)n * K);
  double *Ad = malloc(sizeof(double) * (size_t)M * K), *Bd = malloc(sizeof(double) * (size_t)n * K);
  void *C = malloc((size_t)M * n * 4);
  uint64_t s = 0x9E3779B97F4A7C15u ^ (uint64_t)(c->a_mn * 1000 + c->a_sw * 10 + c->b_sw + n);
  for (int i = 0; i < M * K + n * K; i++) {
    s ^= s << 13, s ^= s >> 7, s ^= s << 17;
    double x = (double)(int)(s % 7) - 3; /* -3..3 */
    if (i < M * K) A[i] = enc16(Ad[i] = x, bf16);
    else B[i - M * K] = enc16(Bd[i - M * K] = x, bf16);
  }
  memset(C, 0xFF, (size_t)M * n * 4);
  tl_interp_arg args[3];
  memset(args, 0, sizeof args);
  void *data[3] = {A, B, C};
  int64_t shape[3][2] = {{M, K}, {n, K}, {M, n}};
  for (int i = 0; i < 3; i++) {
    args[i].is_tensor = true;
    args[i].data = data[i];
    args[i].ndim = 2;
    args[i].shape[0] = shape[i][0];
    args[i].shape[1] = shape[i][1];
  }
  tl_simt_options o = {.check_races = true};
  ok = tl_simt_exec(m, 0, args, 3, NULL, 0, &o, &d);
  *diag = strdup(d.out.data ? d.out.data : "");
  for (int i = 0; ok && i < M; i++)
    for (int j = 0; j < n; j++) {
      double want = 0;
      for (int k = 0; k < K; k++) want += Ad[i * K + k] * Bd[j * K + k];
      double got = c16 ? dec_f16(((uint16_t *)C)[i * n + j]) : (double)((float *)C)[i * n + j];
      cr_assert(got == want, "%s a_mn %d a_sw %d b_mn %d b_sw %d n %d %s %s: C[%d, %d] = %g, want %g",
                c->rs ? "rs" : "ss", c->a_mn, c->a_sw, c->b_mn, c->b_sw, n, c->acc, c->dtype, i, j, got, want);
    }
  free(A), free(B), free(Ad), free(Bd), free(C);
  tl_diag_free(&d);
  tl_module_destroy(m);
  return ok;
}

static void good(const wg_case *c) {
  char *src = tl_test_read_file(c->rs ? "test/GPU/kernels/wgmma_rs.py" : KERNEL, NULL), *diag;
  bool ok = run_case(src, c, &diag);
  cr_assert(ok, "a_mn %d a_sw %d b_mn %d b_sw %d n %d: %s", c->a_mn, c->a_sw, c->b_mn, c->b_sw, c->n, diag);
  free(diag);
  free(src);
}

Test(wgmma, every_layout_pair) {
  static const int sw[4] = {0, 32, 64, 128};
  for (int a = 0; a < 8; a++)
    for (int b = 0; b < 8; b++) {
      wg_case c = {a / 4, sw[a % 4], b / 4, sw[b % 4], 64, "float32", "float16", false};
      good(&c);
    }
}

Test(wgmma, n_and_dtypes) {
  static const wg_case cases[] = {
      {0, 128, 0, 128, 256, "float32", "float16", false}, {0, 128, 1, 128, 8, "float32", "float16", false},
      {1, 64, 0, 0, 24, "float32", "float16", false},     {0, 32, 1, 32, 128, "float16", "float16", false},
      {1, 128, 1, 0, 256, "float16", "float16", false},   {0, 128, 0, 64, 96, "float32", "bfloat16", false},
      {1, 0, 1, 128, 40, "float32", "bfloat16", false},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) good(&cases[i]);
}

/* T.ptx_wgmma_rs over two warpgroups: every B layout, n 8..256, both accumulator dtypes, bf16. */
Test(wgmma, rs) {
  static const int sw[4] = {0, 32, 64, 128};
  for (int b = 0; b < 8; b++) {
    wg_case c = {0, 0, b / 4, sw[b % 4], 64, "float32", "float16", true};
    good(&c);
  }
  static const wg_case cases[] = {{0, 0, 0, 128, 256, "float16", "float16", true},
                                  {0, 0, 1, 64, 8, "float32", "bfloat16", true},
                                  {0, 0, 0, 0, 40, "float16", "float16", true}};
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) good(&cases[i]);
}

/* After the wait and a barrier the operands may be overwritten: no error, C unchanged. */
Test(wgmma, overwrite_after_wait_and_barrier) {
  char *src = tl_test_read_file(KERNEL, NULL), *diag;
  char *e = tl_test_replace_first(src, "            T.ptx_wgmma_wait(0, C_local, 0, n // 2)\n",
                                  "            T.ptx_wgmma_wait(0, C_local, 0, n // 2)\n            T.sync_threads()\n"
                                  "            if T.get_thread_binding(0) == 64:\n                S[0] = A[0, 0]\n");
  wg_case c = {0, 128, 1, 64, 64, "float32", "float16", false};
  bool ok = run_case(e, &c, &diag);
  cr_assert(ok, "%s", diag);
  free(diag);
  free(e);
  free(src);
}

/* The kernel with `from` replaced by `to` must fail with an error containing `want`. */
static void fault(const wg_case *c, const char *from, const char *to, const char *want) {
  char *src = tl_test_read_file(KERNEL, NULL), *e = tl_test_replace_first(src, from, to);
  tl_module *m = tl_module_new();
  tl_diag d;
  tl_diag_init(&d);
  char v[4][16];
  snprintf(v[0], 16, "%d", c->a_mn);
  snprintf(v[1], 16, "%d", c->a_sw);
  snprintf(v[2], 16, "%d", c->b_sw);
  snprintf(v[3], 16, "%d", c->n);
  tl_define defs[4] = {{"a_mn", v[0]}, {"a_sw", v[1]}, {"b_sw", v[2]}, {"n", v[3]}};
  cr_assert(tl_frontend_parse(m, &d, e, strlen(e), "wgmma_ss.py", defs, 4), "%s", d.out.data);
  int64_t shapes[3][2] = {{64, 64}, {c->n, 64}, {64, c->n}};
  tl_interp_arg args[3];
  memset(args, 0, sizeof args);
  for (int i = 0; i < 3; i++) {
    args[i].is_tensor = true;
    args[i].data = calloc((size_t)(shapes[i][0] * shapes[i][1]), 4);
    args[i].ndim = 2;
    args[i].shape[0] = shapes[i][0];
    args[i].shape[1] = shapes[i][1];
  }
  tl_simt_options o = {.check_races = true};
  bool ok = tl_simt_exec(m, 0, args, 3, NULL, 0, &o, &d);
  cr_assert(!ok, "'%s' -> '%s' ran without an error", from, to);
  cr_assert(d.out.data && strstr(d.out.data, want), "'%s' -> '%s': expected '%s' in:\n%s", from, to, want,
            d.out.data ? d.out.data : "");
  for (int i = 0; i < 3; i++) free(args[i].data);
  tl_diag_free(&d);
  tl_module_destroy(m);
  free(e);
  free(src);
}

static const wg_case K128 = {0, 128, 0, 128, 64, "float32", "float16", false};

Test(wgmma, faults) {
  fault(&K128, "            T.ptx_fence_proxy_async()\n", "", "proxy ordering: T.ptx_wgmma_ss of thread 0 reads 'S'");
  fault(&K128, "            T.ptx_fence_proxy_async()\n            T.sync_threads()\n",
        "            T.ptx_fence_proxy_async()\n", "data race on shared memory: thread 0 reads 'S'");
  fault(&K128, "b_sw, b_lbo, b_sbo, b_mn, n,", "48, b_lbo, b_sbo, b_mn, n,",
        "T.ptx_wgmma_ss: B's swizzle span must be 0, 32, 64 or 128 (bytes), not 48");
  fault(&K128, "a_sw, a_lbo, a_sbo, a_mn,", "a_sw, 24, a_sbo, a_mn,",
        "T.ptx_wgmma_ss: A's LBO must be a constant multiple of 16 from 0 to 262128, not 24");
  fault(&K128, "b_mn, n, T.min(s, 1))", "b_mn, 12, T.min(s, 1))",
        "T.ptx_wgmma_ss: n must be a constant multiple of 8 from 8 to 256, not 12");
  fault(&K128, "S, a_start // 2,", "S, a_start // 2 + 4,",
        "A's start address (byte 8 of shared memory, element 4 of 'S') is not 16-byte aligned");
  fault(&K128, "S, b_start // 2,", "S, b_start // 2 + 16384,",
        "T.ptx_wgmma_ss: B(0, 0) is at shared byte 40960, outside 'S'");
  fault(&K128, "T.ptx_wgmma_wait(0,", "T.ptx_wgmma_wait(8,",
        "T.ptx_wgmma_wait: n must be a constant from 0 to 7, not 8");
  fault(&K128, "            T.ptx_wgmma_commit()\n",
        "            T.ptx_wgmma_commit()\n            T.ptx_setmaxnreg(20, 1)\n",
        "T.ptx_setmaxnreg: count must be a constant multiple of 8 from 24 to 256, not 20");
  fault(&K128, "            T.ptx_wgmma_commit()\n",
        "            T.ptx_wgmma_commit()\n            T.ptx_setmaxnreg(100, 0)\n", "not 100");
  fault(&K128, "            T.ptx_wgmma_commit()\n", "            T.ptx_wgmma_commit()\n            S[0] = A[0, 0]\n",
        "thread 0 writes 'S'[0] while a wgmma.mma_async of warp 0 (wgmma group 0) may still read it: no "
        "T.ptx_wgmma_wait of that warp covers the group");
  fault(&K128, "            T.ptx_wgmma_wait(0, C_local, 0, n // 2)\n",
        "            T.ptx_wgmma_wait(1, C_local, 0, n // 2)\n            S[4096] = A[0, 0]\n",
        "thread 0 writes 'S'[4096] while a wgmma.mma_async of warp 0 (wgmma group 0) may still read it");
  fault(&K128, "            T.ptx_wgmma_wait(0, C_local, 0, n // 2)\n",
        "            T.ptx_wgmma_wait(0, C_local, 0, n // 2)\n            if T.get_thread_binding(0) == 64:\n"
        "                S[0] = A[0, 0]\n",
        "data race on shared memory: thread 64 writes 'S'[0], which thread 0 read with no synchronisation");
  /* the accumulators are undefined until the wait: reading or writing them before it is an error */
  fault(&K128, "            T.ptx_wgmma_wait(0, C_local, 0, n // 2)\n",
        "            S[4096] = T.Cast(\"float16\", C_local[1])\n            T.ptx_wgmma_wait(0, C_local, 0, n // 2)\n",
        "thread 0 reads 'C_local'[1] while a wgmma.mma_async of its warp (wgmma group 0) writes it (accumulators are "
        "undefined until the wait): no T.ptx_wgmma_wait covers the group yet");
  fault(&K128, "            T.ptx_wgmma_wait(0, C_local, 0, n // 2)\n",
        "            T.ptx_wgmma_wait(1, C_local, 0, n // 2)\n            C_local[2] = 0.0\n",
        "thread 0 writes 'C_local'[2] while a wgmma.mma_async of its warp (wgmma group 0) writes it");
  fault(&K128, "threads=128", "threads=96", "warp 0 belongs to warpgroup 0 (threads 0-127), which the block of 96");
  fault(&K128, "            T.ptx_wgmma_fence()\n",
        "            if T.get_thread_binding(0) < 16:\n                T.ptx_wgmma_fence()\n",
        "ptx_wgmma_fence executed by a partial warp: 16 of 32 lanes of warp 0 are active");
}
