/* Unit tests of the Hopper GEMM tile table (issue 12, "Tuning"; no GPU):
 * which table tl_gemm_configs_target picks by target and compile flags, that
 * every Hopper candidate obeys the rules of the warp-specialize pass and
 * fits the shared memory of a block, that the table holds at most 16
 * configurations, and that each one really lowers through the
 * warp-specialized wgmma path on sm_90a (examples/gemm.py and
 * test/GPU/kernels/gemm_general.py NN and NT, SIMT IR).  Criterion runs each
 * test in its own process, so TL_CUDA_DRIVER set in a test only affects
 * that test. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "Runtime/kernel.h"
#include "tilelang/tilelang.h"

static tl_dtype dt(const char *name) {
  tl_dtype t;
  cr_assert(tl_dtype_parse(name, &t), "dtype %s", name);
  return t;
}

/* one shape per class on the H200's 132 SMs: large, small grid, tiny grid,
 * small M (the classes of lib/Runtime/configs.c) */
static const int64_t class_shapes[4][3] = {
    {4096, 4096, 4096}, {2048, 2048, 2048}, {1024, 1024, 1024}, {16, 8192, 8192}};

static size_t hopper(int c, tl_gemm_config *out) {
  const int64_t *s = class_shapes[c];
  return tl_gemm_configs_target_for(132, "sm_90a", 0, s[0], s[1], s[2], dt("float16"), out, 32);
}

/* The rules of lib/Lower/Hopper/warp_specialize.c and the shared-memory budget:
 * pipeline tiles num_stages x (block_M + block_N) x block_K x 2 bytes plus
 * the epilogue's C staging block_M x (block_N + 8) x 2 bytes (16-bit out)
 * within 232448 bytes (sm_90a's opt-in limit, lib/Support/target.c). */
static void check_rules(const tl_gemm_config *c, const char *what) {
  char name[64];
  tl_gemm_config_format(c, name, sizeof name);
  cr_assert_eq(c->threads % 128, 0, "%s %s: threads not whole warpgroups", what, name);
  cr_assert_leq(c->threads + 128, 1024, "%s %s: no room for the producer warpgroup", what, name);
  int wgs = c->threads / 128, blocks = c->block_M / 64;
  cr_assert_eq(c->block_M % 64, 0, "%s %s", what, name);
  cr_assert(blocks >= wgs ? blocks % wgs == 0 : wgs % blocks == 0, "%s %s: M split", what, name);
  int wg_m = blocks >= wgs ? wgs : blocks, wn = c->block_N / (wgs / wg_m);
  cr_assert(wn % 8 == 0 && wn <= 256 && wn >= 8, "%s %s: per-warpgroup N %d", what, name, wn);
  cr_assert_eq(c->block_K % 16, 0, "%s %s", what, name);
  int row = c->block_K * 2; /* bytes of one row of the K-contiguous tiles */
  cr_assert(row == 32 || row == 64 || row % 128 == 0, "%s %s: tile row of %d bytes", what, name, row);
  cr_assert(c->num_stages >= 2 && c->num_stages <= 8, "%s %s", what, name);
  long smem =
      (long)c->num_stages * (c->block_M + c->block_N) * c->block_K * 2 + (long)c->block_M * (c->block_N + 8) * 2;
  cr_assert_leq(smem, 232448, "%s %s needs %ld bytes of shared memory", what, name, smem);
  /* accumulators per consumer thread: at most 128 f32 (m64n256) */
  cr_assert_leq(c->block_M * c->block_N / c->threads, 128, "%s %s: accumulator registers", what, name);
  cr_assert(c->policy >= 0 && c->policy <= 2 && c->swizzle_panel >= 0, "%s %s", what, name);
}

Test(gemm_configs_hopper, every_candidate_follows_the_rules) {
  tl_gemm_config all[64];
  size_t nall = 0;
  for (int c = 0; c < 4; c++) {
    tl_gemm_config l[32];
    size_t n = hopper(c, l);
    cr_assert(n >= 3 && n <= 16, "class %d has %zu candidates", c, n);
    for (size_t i = 0; i < n; i++) {
      check_rules(&l[i], "hopper");
      bool seen = false;
      for (size_t j = 0; j < nall; j++) seen |= memcmp(&all[j], &l[i], sizeof l[i]) == 0;
      if (!seen) all[nall++] = l[i];
    }
  }
  /* the bound on built-in configurations */
  cr_assert_leq(nall, 16, "%zu distinct Hopper configurations", nall);
}

/* The first candidates are the ones measured best: 128x256x64 over 2
 * consumer warpgroups (m64n256k16), 3 stages, for the large class
 * (docs/hopper.md "GEMM tile configurations"); for M <= 128 a tile as tall as M rounded up
 * to 64 (128x64x64 with 8 stages at M = 128, 64x128x64 at M = 16; the
 * measurements are in lib/Runtime/configs.c). */
Test(gemm_configs_hopper, order) {
  tl_gemm_config l[32];
  cr_assert_geq(hopper(0, l), 1);
  cr_assert(l[0].block_M == 128 && l[0].block_N == 256 && l[0].block_K == 64 && l[0].threads == 256 &&
            l[0].num_stages == 3);
  cr_assert_geq(hopper(3, l), 1);
  cr_assert(l[0].block_M == 64 && l[0].block_N == 128 && l[0].threads == 128, "class 3 (M = %lld)",
            (long long)class_shapes[3][0]);
  tl_gemm_config m16[32], m64[32];
  size_t n16 = tl_gemm_configs_target_for(132, "sm_90a", 0, 16, 8192, 8192, dt("float16"), m16, 32);
  size_t n64 = tl_gemm_configs_target_for(132, "sm_90a", 0, 64, 8192, 8192, dt("float16"), m64, 32);
  cr_assert(n16 == n64 && n16 >= 3 && m16[0].block_M == 64 && m16[0].block_N == 128 && m16[0].threads == 128);
  cr_assert_eq(memcmp(m16, m64, n16 * sizeof *m16), 0);
  /* every candidate is still there, the 128-row ones behind the 64-row ones */
  bool tall = false;
  for (size_t i = 0; i < n16; i++) {
    if (m16[i].block_M > 64) tall = true;
    else cr_assert(!tall, "a 64-row candidate (%zu) after a 128-row one", i);
  }
  cr_assert(tall);
  /* bf16 uses the same table; M = 128 is still small-M, 129 is not */
  tl_gemm_config b[32], m128[32], m129[32];
  size_t nf = tl_gemm_configs_target_for(132, "sm_90a", 0, 4096, 4096, 4096, dt("float16"), l, 32);
  cr_assert_eq(tl_gemm_configs_target_for(132, "sm_90a", 0, 4096, 4096, 4096, dt("bfloat16"), b, 32), nf);
  cr_assert_eq(memcmp(l, b, nf * sizeof *l), 0);
  size_t n128 = tl_gemm_configs_target_for(132, "sm_90a", 0, 128, 8192, 8192, dt("float16"), m128, 32);
  size_t n129 = tl_gemm_configs_target_for(132, "sm_90a", 0, 129, 8192, 8192, dt("float16"), m129, 32);
  cr_assert(m128[0].block_M == 128 && m128[0].block_N == 64 && m128[0].threads == 256 && m128[0].num_stages == 8);
  cr_assert(n128 != n129 || memcmp(m128, m129, n128 * sizeof *m128) != 0);
}

/* The Hopper table exactly where the warp-specialized path is on: sm_90a
 * without the three TL_COMPILE_DISABLE_* flags; the mma.sync table
 * (tl_gemm_configs_for) for other targets and under each flag. */
Test(gemm_configs_hopper, selection_by_target_and_flags) {
  const unsigned off[3] = {TL_COMPILE_DISABLE_WGMMA, TL_COMPILE_DISABLE_TMA_LOWER, TL_COMPILE_DISABLE_WARP_SPECIALIZED};
  for (int c = 0; c < 4; c++) {
    const int64_t *s = class_shapes[c];
    tl_gemm_config mma[32], h[32], got[32];
    size_t nm = tl_gemm_configs_for(132, s[0], s[1], s[2], dt("float16"), mma, 32);
    size_t nh = hopper(c, h);
    cr_assert(nm > 0 && nh > 0);
    /* the two tables differ in every class (block_K 64 vs 32, threads) */
    cr_assert(nm != nh || memcmp(mma, h, nm * sizeof *mma) != 0, "class %d", c);
    cr_assert(tl_gemm_configs_use_hopper("sm_90a", 0));
    cr_assert(tl_gemm_configs_use_hopper("sm_90a", TL_COMPILE_POISON_OUTPUTS | TL_COMPILE_FAST_MATH));
    cr_assert_eq(
        tl_gemm_configs_target_for(132, "sm_90a", TL_COMPILE_POISON_OUTPUTS, s[0], s[1], s[2], dt("float16"), got, 32),
        nh);
    cr_assert_eq(memcmp(got, h, nh * sizeof *h), 0);
    for (int f = 0; f < 3; f++) {
      cr_assert_not(tl_gemm_configs_use_hopper("sm_90a", off[f]));
      cr_assert_eq(tl_gemm_configs_target_for(132, "sm_90a", off[f], s[0], s[1], s[2], dt("float16"), got, 32), nm);
      cr_assert_eq(memcmp(got, mma, nm * sizeof *mma), 0);
    }
    const char *older[4] = {"sm_80", "sm_86", "sm_89", "sm_90"}; /* sm_90: TMA but no wgmma */
    for (int t = 0; t < 4; t++) {
      cr_assert_not(tl_gemm_configs_use_hopper(older[t], 0));
      cr_assert_eq(tl_gemm_configs_target_for(132, older[t], 0, s[0], s[1], s[2], dt("float16"), got, 32), nm);
      cr_assert_eq(memcmp(got, mma, nm * sizeof *mma), 0);
    }
  }
  /* unknown target, unsupported dtype, bad sizes: no candidates */
  cr_assert_not(tl_gemm_configs_use_hopper("sm_70", 0));
  cr_assert_eq(tl_gemm_configs_target("sm_70", 0, 4096, 4096, 4096, dt("float16"), NULL, 0), 0);
  cr_assert_eq(tl_gemm_configs_target("sm_90a", 0, 4096, 4096, 4096, dt("float32"), NULL, 0), 0);
  cr_assert_eq(tl_gemm_configs_target("sm_90a", 0, 0, 4096, 4096, dt("float16"), NULL, 0), 0);
  /* the cap: count returned, min(n, cap) copied */
  tl_gemm_config one[1], h[32];
  size_t nh = tl_gemm_configs_target("sm_90a", 0, 4096, 4096, 4096, dt("float16"), h, 32);
  cr_assert_eq(tl_gemm_configs_target("sm_90a", 0, 4096, 4096, 4096, dt("float16"), one, 1), nh);
  cr_assert_eq(memcmp(one, h, sizeof one[0]), 0);
}

/* target NULL: the device default, sm_80 without a driver: the mma.sync
 * table, the same as tl_gemm_configs. */
Test(gemm_configs_hopper, null_target_is_the_device_default) {
  setenv("TL_CUDA_DRIVER", "/nonexistent/libcuda.so.1", 1);
  cr_assert_str_eq(tl_device_default_target(), "sm_80");
  tl_gemm_config a[32], b[32];
  size_t na = tl_gemm_configs_target(NULL, 0, 4096, 4096, 4096, dt("float16"), a, 32);
  size_t nb = tl_gemm_configs(4096, 4096, 4096, dt("float16"), b, 32);
  cr_assert(na > 0 && na == nb);
  cr_assert_eq(memcmp(a, b, na * sizeof *a), 0);
  cr_assert_not(tl_gemm_configs_use_hopper(NULL, 0));
}

/* Compiles file to SIMT IR on sm_90a with c's bindings (n of them) and the
 * extra ones; asserts that the result is the warp-specialized
 * path: T.gemm as wgmma, and the launch of threads + 128 (the producer). */
static void lowers_to_hopper(tl_context *ctx, const char *file, const tl_gemm_config *c, size_t n,
                             const tl_define *extra, size_t nextra) {
  tl_define d[16];
  char st[7][16];
  tl_gemm_config_defines(c, d, st);
  for (size_t i = 0; i < nextra; i++) d[n + i] = extra[i];
  tl_compile_options o = {0};
  o.stop_after = TL_STAGE_SIMT;
  o.target = "sm_90a";
  tl_kernel *k = NULL;
  char name[64];
  tl_gemm_config_format(c, name, sizeof name);
  tl_status s = tl_kernel_compile_file(ctx, file, d, n + nextra, &o, &k);
  cr_assert_eq(s, TL_OK, "%s %s: %s", file, name, tl_context_last_error(ctx));
  const char *ir = tl_kernel_simt_ir(k);
  cr_assert(ir && strstr(ir, "T.ptx_wgmma_ss("), "%s %s: no wgmma in the SIMT IR", file, name);
  cr_assert(strstr(ir, "T.ptx_tma_load("), "%s %s: no TMA load", file, name);
  char threads[32];
  snprintf(threads, sizeof threads, "threads=%d)", c->threads + 128);
  cr_assert(strstr(ir, threads), "%s %s: the launch is not %s", file, name, threads);
  tl_kernel_destroy(k);
}

Test(gemm_configs_hopper, every_candidate_lowers_to_wgmma) {
  setenv("TL_CUDA_DRIVER", "/nonexistent/libcuda.so.1", 1);
  tl_context *ctx;
  cr_assert_eq(tl_context_create(&ctx), TL_OK);
  int checked = 0;
  for (int c = 0; c < 4; c++) {
    tl_gemm_config l[32];
    size_t n = hopper(c, l);
    for (size_t i = 0; i < n && i < 32; i++) {
      /* examples/gemm.py (no policy / swizzle_panel parameters: the first 5) */
      lowers_to_hopper(ctx, "examples/gemm.py", &l[i], 5, NULL, 0);
      /* the benchmark's kernel, f16 NN and bf16 NT at the class's shape */
      char v[3][24];
      for (int j = 0; j < 3; j++) snprintf(v[j], sizeof v[j], "%lld", (long long)class_shapes[c][j]);
      tl_define nn[4] = {{"M", v[0]}, {"N", v[1]}, {"K", v[2]}, {"trans_B", "False"}};
      lowers_to_hopper(ctx, "test/GPU/kernels/gemm_general.py", &l[i], 7, nn, 4);
      tl_define nt[6] = {{"M", v[0]},         {"N", v[1]},           {"K", v[2]},
                         {"trans_B", "True"}, {"dtype", "bfloat16"}, {"out_dtype", "bfloat16"}};
      lowers_to_hopper(ctx, "test/GPU/kernels/gemm_general.py", &l[i], 7, nt, 6);
      checked++;
    }
  }
  cr_assert_geq(checked, 12);
  tl_context_destroy(ctx);
}
