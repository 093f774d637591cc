/* GEMM tile configurations (lib/Runtime): the one built-in table of
 * candidate tile configurations per dtype and shape class, used by
 * benchmarks/gemm (the first candidate that compiles) and tl-run --tune
 * (times every candidate, keeps the fastest).
 *
 * Algorithm: classify the problem by M (M <= 128: decode-like shapes, where
 * 64-row tiles waste less of each mma.sync m16 row block and leave more
 * blocks for the SMs), then by how many blocks the large tile (256x128)
 * would launch: fewer than ~2 waves of the GPU's SMs (the driver's
 * CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT of device 0; 132 on sm_90a parts,
 * so 264 blocks, e.g. 1024^3 has 32 and 2048^3 has 128) leaves most SMs idle or
 * one partial wave, so
 * smaller tiles (64x128 / 128x128 with 4 warps, several blocks per SM) take
 * the "small" class, and fewer blocks of 128x128 than SMs (less than one
 * wave) the "tiny" class; otherwise the large class.  Without a GPU the
 * count is TL_GEMM_CONFIGS_NO_GPU_SMS (Runtime/kernel.h: that of the part
 * whose measurements made the tables).  Return that class's list,
 * best first.  Only 16-bit inputs (float16, bfloat16) have a table:
 * both use mma.sync.m16n8k16 with f32 accumulation, so the same tiles fit.
 *
 * Two tables: the mma.sync one (tl_gemm_configs, tl_gemm_configs_for, and
 * tl_gemm_configs_target for targets without wgmma or with the Hopper path
 * turned off by a TL_COMPILE_DISABLE_* flag) and the Hopper one (below:
 * tl_gemm_configs_target on a target with wgmma, sm_90a), with the same
 * shape classes.
 *
 * Sources of the hardware facts: the hand-written mma.sync reference GEMM
 * (docs/performance.md: 128x256x32 with 8 warps of 64x64 is its fastest
 * tile, 256x128x32 close behind), the target table (132 SMs, 227 KB of
 * shared memory per block: 128x256x32 f16 with 3 stages uses 72 KB);
 * PTX ISA 8.5 §9.7.14.5.14 (mma.m16n8k16 shapes). */
#include <stdio.h>
#include <string.h>

#include "Runtime/kernel.h"
#include "Support/Hopper/path.h"
#include "Support/target.h"
#include "tilelang/runtime.h"

/* {block_M, block_N, block_K, threads, num_stages, policy, swizzle_panel},
 * best first (benchmarks/gemm takes the first that compiles; the later ones
 * are further candidates for --tune).  Reorder from measurements. */
static const tl_gemm_config large[] = {
    /* in measured order (docs/performance.md, "Measurements behind choices
     * in the code").  4 stages make the stage index a mask; 128x256 over 8
     * warps gives 64x64 warp tiles. */
    {128, 256, 32, 256, 4, 0, 10}, {256, 128, 32, 256, 4, 0, 10}, {128, 256, 32, 256, 3, 0, 10},
    {128, 256, 32, 256, 2, 0, 10}, {128, 128, 32, 128, 3, 0, 8},  {128, 128, 32, 128, 3, 0, 0},
    {256, 128, 32, 256, 3, 0, 10}, {64, 128, 32, 128, 3, 0, 0},
};
/* fewer than ~2 waves of 256x128 blocks (1024^3, 2048^3): 4-warp tiles,
 * several resident blocks per SM */
static const tl_gemm_config small_grid[] = {
    {128, 128, 32, 128, 3, 0, 8}, {64, 128, 32, 128, 4, 0, 8}, {64, 128, 32, 128, 3, 0, 0},
    {128, 128, 32, 128, 4, 0, 8}, {64, 64, 32, 128, 3, 0, 0},  {256, 128, 32, 256, 4, 0, 10},
};
/* fewer than one wave even of 128x128 blocks (1024^3: 64 blocks), in
 * measured order (docs/performance.md). */
static const tl_gemm_config tiny_grid[] = {
    {64, 128, 32, 128, 4, 0, 8},
    {64, 64, 32, 128, 3, 0, 0},
    {128, 128, 32, 128, 3, 0, 8},
    {64, 128, 32, 128, 3, 0, 0},
};
static const tl_gemm_config small_m[] = {
    {64, 128, 64, 128, 4, 0, 0},  {64, 128, 32, 128, 3, 0, 0}, {64, 64, 32, 128, 3, 0, 0},
    {128, 128, 32, 128, 3, 0, 0}, {64, 256, 32, 256, 3, 0, 0},
};

/* ---------------------------------------------------------------- Hopper
 * Candidates for the warp-specialized wgmma path (lib/Lower/Hopper/warp_specialize.c,
 * sm_90a): threads counts the consumer warpgroups (the compiler adds one
 * producer warpgroup of 128 threads, so threads + 128 <= 1024); block_M is a
 * multiple of 64 split over threads / 128 warpgroups (each warpgroup takes
 * whole 64-row blocks: m64nNk16, N = block_N per warpgroup up to 256);
 * block_K 64 (128-byte rows of A, the 128-byte swizzle) or 32.  Shared
 * memory: num_stages x (block_M + block_N) x block_K x 2 bytes of pipeline
 * tiles plus the epilogue's C staging, block_M x (block_N + 8) x 2 bytes for
 * a 16-bit output, under the 227 KB a block may opt in to (232448 bytes,
 * lib/Support/target.c): 128x256x64 with 3 stages needs 147456 + 67584 =
 * 215040 bytes, with 4 it would not fit.  Accumulators: 64 x block_N / 128
 * f32 registers per thread per 64-row block (128 for m64n256), with the
 * consumers' registers raised by setmaxnreg.
 * Order (best first) by reasoning, not yet measured on our kernels:
 * a hand-written TMA + wgmma kernel matched cuBLAS with 128x256x64, 2
 * consumer warpgroups of m64n256k16 and 3 stages, where the 128x128 tile of
 * one warpgroup reached little more than half (docs/hopper.md "GEMM tile
 * configurations"), and TileLang's best tile is the same; cuBLAS itself picks 256x128 with
 * BK 64 at 4096^3 (each of our warpgroups then runs two m64n128 blocks; the
 * same bytes per FLOP); 128x256x32 with 4 stages keeps more loads in
 * flight at the cost of twice the barrier round trips.  The integrator
 * measures and reorders.  The table holds 13 distinct configurations in all
 * (at most 16; test/unit/test_gemm_configs_hopper.c checks
 * both bounds, every rule above and that each lowers to wgmma). */
static const tl_gemm_config hopper_large[] = {
    {128, 256, 64, 256, 3, 0, 10}, {256, 128, 64, 256, 3, 0, 10}, {128, 256, 32, 256, 4, 0, 10},
    {128, 256, 64, 256, 3, 0, 0},  {128, 128, 64, 256, 4, 0, 8},  {64, 256, 64, 128, 4, 0, 8},
    {128, 128, 64, 128, 4, 0, 8},  {128, 256, 64, 256, 2, 0, 10},
};
/* 2048^3: 128 blocks of 128x256 fill 128 of 132 SMs in one wave (one
 * block per SM: 215040 bytes of shared memory); 128x128 makes 256 blocks,
 * two waves of one block per SM (165888 bytes with 4 stages), the second
 * 94% full, with half the work per barrier round trip */
static const tl_gemm_config hopper_small_grid[] = {
    {128, 256, 64, 256, 3, 0, 8}, {128, 128, 64, 256, 4, 0, 8}, {128, 128, 64, 128, 4, 0, 8},
    {64, 256, 64, 128, 4, 0, 8},  {64, 128, 64, 128, 4, 0, 8},
};
/* 1024^3 (64 blocks of 128x128): 64-row tiles give 128 blocks, near one
 * full wave */
static const tl_gemm_config hopper_tiny_grid[] = {
    {64, 128, 64, 128, 4, 0, 8},
    {64, 256, 64, 128, 4, 0, 0},
    {128, 128, 64, 256, 4, 0, 8},
    {64, 64, 64, 128, 6, 0, 0},
};
/* M <= 128 (16 or 128 x 8192 x 8192): these shapes stream B from memory,
 * so the tile must be as tall as M (a 64-row tile reads B twice at
 * M = 128) and narrow enough to give every SM a block (N / 64 = 128 blocks
 * at N = 8192), with the deepest pipeline that fits (8 stages of 24 KB plus
 * the 18 KB C staging: 215040 bytes), in measured order
 * (docs/performance.md, "Measurements behind choices in the code").
 * configs_from moves tiles taller than M
 * (rounded up to 64) behind the others, so M <= 64 takes 64x128 first. */
static const tl_gemm_config hopper_small_m[] = {
    {128, 64, 64, 256, 8, 0, 0}, {64, 128, 64, 128, 6, 0, 0},  {128, 64, 64, 128, 8, 0, 0},
    {64, 64, 64, 128, 6, 0, 0},  {128, 128, 64, 256, 4, 0, 8},
};

/* One path's four lists, by shape class (the order of classify's result). */
typedef struct config_table {
  const tl_gemm_config *list[4];
  size_t n[4];
} config_table;
static const config_table mma_sync_table = {
    {large, small_grid, tiny_grid, small_m},
    {sizeof large / sizeof large[0], sizeof small_grid / sizeof small_grid[0], sizeof tiny_grid / sizeof tiny_grid[0],
     sizeof small_m / sizeof small_m[0]}};
static const config_table hopper_table = {
    {hopper_large, hopper_small_grid, hopper_tiny_grid, hopper_small_m},
    {sizeof hopper_large / sizeof hopper_large[0], sizeof hopper_small_grid / sizeof hopper_small_grid[0],
     sizeof hopper_tiny_grid / sizeof hopper_tiny_grid[0], sizeof hopper_small_m / sizeof hopper_small_m[0]}};

/* The shape class: 0 large, 1 small grid, 2 tiny grid, 3 small M (the
 * header comment's rules; the same for both paths, so that the classes mean
 * the same shapes in both tables). */
static int classify(int sms, int64_t M, int64_t N) {
  /* blocks of 256x128 (the large class's tile of either path), in double to
   * avoid overflow for huge shapes */
  double big_blocks = (double)((M + 255) / 256) * (double)((N + 127) / 128);
  if (M <= 128) return 3;
  if ((double)((M + 127) / 128) * (double)((N + 127) / 128) < sms) return 2;
  if (big_blocks < 2.0 * sms) return 1;
  return 0;
}

static size_t configs_from(const config_table *t, int sms, int64_t M, int64_t N, int64_t K, tl_dtype in,
                           tl_gemm_config *out, size_t cap) {
  if (M <= 0 || N <= 0 || K <= 0 || sms <= 0) return 0;
  if (!((in.code == TL_TYPE_FLOAT || in.code == TL_TYPE_BFLOAT) && in.bits == 16 && in.lanes <= 1)) return 0;
  int c = classify(sms, M, N);
  /* small M: tiles no taller than M rounded up to 64 first (a taller tile
   * computes rows that do not exist), each group in the table's order */
  int64_t tall = M <= 64 ? 64 : 128;
  size_t k = 0;
  for (int pass = 0; pass < 2; pass++)
    for (size_t i = 0; i < t->n[c]; i++) {
      bool fits = c != 3 || t->list[c][i].block_M <= tall;
      if (fits == (pass == 0) && out && k < cap) out[k] = t->list[c][i];
      if (fits == (pass == 0)) k++;
    }
  return t->n[c];
}

static int device_sms(void) {
  int sms = tl_driver_sm_count();
  return sms > 0 ? sms : TL_GEMM_CONFIGS_NO_GPU_SMS;
}

size_t tl_gemm_configs(int64_t M, int64_t N, int64_t K, tl_dtype in, tl_gemm_config *out, size_t cap) {
  return tl_gemm_configs_for(device_sms(), M, N, K, in, out, cap);
}

size_t tl_gemm_configs_for(int sms, int64_t M, int64_t N, int64_t K, tl_dtype in, tl_gemm_config *out, size_t cap) {
  return configs_from(&mma_sync_table, sms, M, N, K, in, out, cap);
}

/* The Hopper table applies where the lowering's own predicate allows the
 * path (lib/Support/Hopper/path.h) for the configs the flags set. */
static bool use_hopper(const tl_target *t, unsigned flags) {
  tl_pass_configs pc = tl_pass_configs_from_flags(flags);
  return t && !tl_hopper_path_refusal(t, &pc);
}

bool tl_gemm_configs_use_hopper(const char *target, unsigned flags) {
  return use_hopper(tl_target_lookup(tl_target_resolve(target)), flags);
}

size_t tl_gemm_configs_target_for(int sms, const char *target, unsigned flags, int64_t M, int64_t N, int64_t K,
                                  tl_dtype in, tl_gemm_config *out, size_t cap) {
  const tl_target *t = tl_target_lookup(tl_target_resolve(target));
  if (!t) return 0;
  return configs_from(use_hopper(t, flags) ? &hopper_table : &mma_sync_table, sms, M, N, K, in, out, cap);
}

size_t tl_gemm_configs_target(const char *target, unsigned flags, int64_t M, int64_t N, int64_t K, tl_dtype in,
                              tl_gemm_config *out, size_t cap) {
  return tl_gemm_configs_target_for(device_sms(), target, flags, M, N, K, in, out, cap);
}

size_t tl_gemm_config_defines(const tl_gemm_config *c, tl_define defs[7], char storage[7][16]) {
  static const char *const names[7] = {"block_M",    "block_N", "block_K",      "threads",
                                       "num_stages", "policy",  "swizzle_panel"};
  if (!c || !defs || !storage) return 0;
  const int v[7] = {c->block_M, c->block_N, c->block_K, c->threads, c->num_stages, c->policy, c->swizzle_panel};
  for (int i = 0; i < 7; i++) {
    snprintf(storage[i], 16, "%d", v[i]);
    defs[i].name = names[i];
    defs[i].value = storage[i];
  }
  return 7;
}

const char *tl_gemm_config_format(const tl_gemm_config *c, char *buf, size_t size) {
  if (!buf || size == 0) return buf;
  if (!c) {
    buf[0] = '\0';
    return buf;
  }
  char pol[16] = "", swz[24] = "";
  if (c->policy) snprintf(pol, sizeof pol, "/p%d", c->policy);
  if (c->swizzle_panel) snprintf(swz, sizeof swz, "/swz%d", c->swizzle_panel);
  snprintf(buf, size, "%dx%dx%d/%dt/s%d%s%s", c->block_M, c->block_N, c->block_K, c->threads, c->num_stages, pol, swz);
  return buf;
}
