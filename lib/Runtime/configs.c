/* GEMM tile configurations (lib/Runtime): the one built-in table of
 * candidate tile configurations per dtype and shape class, used by
 * benchmarks/gemm (the first candidate that compiles) and tl-run --tune
 * (times every candidate, keeps the fastest).
 *
 * Algorithm: classify the problem by M (M <= 128: decode-like shapes, where
 * 64-row tiles waste less of each mma.sync m16 row block and leave more
 * blocks for the SMs), then by how many blocks the large tile (256x128)
 * would launch: fewer than ~2 waves of the GPU's SMs (the driver's
 * CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT of device 0; the H200 has 132, so
 * 264 blocks, e.g. 1024^3 has 32 and 2048^3 has 128) leaves most SMs idle or
 * one partial wave, so
 * smaller tiles (64x128 / 128x128 with 4 warps, several blocks per SM) take
 * the "small" class, and fewer blocks of 128x128 than SMs (less than one
 * wave) the "tiny" class; otherwise the large class.  Without a GPU the
 * count is TL_GEMM_CONFIGS_NO_GPU_SMS (Runtime/kernel.h: the H200's, whose
 * measurements made the tables).  Return that class's list,
 * best first.  Only 16-bit inputs (float16, bfloat16) have a table:
 * both use mma.sync.m16n8k16 with f32 accumulation, so the same tiles fit.
 *
 * Sources of the hardware facts: ../shared/reference/mma-gemm/REPORT.md
 * (128x256x32 with 8 warps of 64x64 is the fastest mma.sync tile on the
 * H200; 256x128x32 close behind), ../shared/GPU.md (132 SMs, 227 KB of
 * shared memory per block: 128x256x32 f16 with 3 stages uses 72 KB);
 * PTX ISA 8.5 §9.7.14.5.14 (mma.m16n8k16 shapes). */
#include <stdio.h>
#include <string.h>

#include "Runtime/kernel.h"
#include "tilelang/runtime.h"

/* {block_M, block_N, block_K, threads, num_stages, policy, swizzle_panel},
 * best first (benchmarks/gemm takes the first that compiles; the later ones
 * are further candidates for --tune).  Reorder from measurements. */
static const tl_gemm_config large[] = {
    /* measured on the H200 (2026-11-29, one run, f16 NN, TFLOP/s at 4096^3 /
     * 8192^3 / 4096x11008x4096): 128x256/s4 461 / 418 / 392, 256x128/s4
     * 438 / 399 / 368, 128x256/s3 370 / 355 / 317.  4 stages make the stage
     * index a mask; 128x256 over 8 warps gives 64x64 warp tiles. */
    {128, 256, 32, 256, 4, 0, 10}, {256, 128, 32, 256, 4, 0, 10},
    {128, 256, 32, 256, 3, 0, 10}, {128, 256, 32, 256, 2, 0, 10}, {128, 128, 32, 128, 3, 0, 8},
    {128, 128, 32, 128, 3, 0, 0},  {256, 128, 32, 256, 3, 0, 10}, {64, 128, 32, 128, 3, 0, 0},
};
/* fewer than ~2 waves of 256x128 blocks (1024^3, 2048^3): 4-warp tiles,
 * several resident blocks per SM */
static const tl_gemm_config small_grid[] = {
    {128, 128, 32, 128, 3, 0, 8}, {64, 128, 32, 128, 4, 0, 8}, {64, 128, 32, 128, 3, 0, 0},
    {128, 128, 32, 128, 4, 0, 8}, {64, 64, 32, 128, 3, 0, 0},  {256, 128, 32, 256, 4, 0, 10},
};
/* fewer than one wave even of 128x128 blocks (1024^3: 64 blocks): measured
 * 64x128/s4 145, 64x64/s3 125, 128x128/s3 106, 256x128/s4 81 TFLOP/s. */
static const tl_gemm_config tiny_grid[] = {
    {64, 128, 32, 128, 4, 0, 8}, {64, 64, 32, 128, 3, 0, 0}, {128, 128, 32, 128, 3, 0, 8},
    {64, 128, 32, 128, 3, 0, 0},
};
static const tl_gemm_config small_m[] = {
    {64, 128, 64, 128, 4, 0, 0}, {64, 128, 32, 128, 3, 0, 0}, {64, 64, 32, 128, 3, 0, 0},
    {128, 128, 32, 128, 3, 0, 0}, {64, 256, 32, 256, 3, 0, 0},
};

size_t tl_gemm_configs(int64_t M, int64_t N, int64_t K, tl_dtype in, tl_gemm_config *out,
                       size_t cap) {
  int sms = tl_driver_sm_count();
  return tl_gemm_configs_for(sms > 0 ? sms : TL_GEMM_CONFIGS_NO_GPU_SMS, M, N, K, in, out, cap);
}

size_t tl_gemm_configs_for(int sms, int64_t M, int64_t N, int64_t K, tl_dtype in,
                           tl_gemm_config *out, size_t cap) {
  if (M <= 0 || N <= 0 || K <= 0 || sms <= 0) return 0;
  if (!((in.code == TL_TYPE_FLOAT || in.code == TL_TYPE_BFLOAT) && in.bits == 16 && in.lanes <= 1))
    return 0;
  const tl_gemm_config *list = large;
  size_t n = sizeof large / sizeof large[0];
  /* blocks of the large class's first tile (256x128), in double to avoid
   * overflow for huge shapes */
  double big_blocks = (double)((M + 255) / 256) * (double)((N + 127) / 128);
  if (M <= 128) {
    list = small_m;
    n = sizeof small_m / sizeof small_m[0];
  } else if ((double)((M + 127) / 128) * (double)((N + 127) / 128) < sms) {
    list = tiny_grid;
    n = sizeof tiny_grid / sizeof tiny_grid[0];
  } else if (big_blocks < 2.0 * sms) {
    list = small_grid;
    n = sizeof small_grid / sizeof small_grid[0];
  }
  for (size_t i = 0; out && i < n && i < cap; i++) out[i] = list[i];
  return n;
}

size_t tl_gemm_config_defines(const tl_gemm_config *c, tl_define defs[7], char storage[7][16]) {
  static const char *const names[7] = {"block_M",    "block_N", "block_K",      "threads",
                                       "num_stages", "policy",  "swizzle_panel"};
  if (!c || !defs || !storage) return 0;
  const int v[7] = {c->block_M, c->block_N, c->block_K, c->threads,
                    c->num_stages, c->policy, c->swizzle_panel};
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
  snprintf(buf, size, "%dx%dx%d/%dt/s%d%s%s", c->block_M, c->block_N, c->block_K, c->threads,
           c->num_stages, pol, swz);
  return buf;
}
