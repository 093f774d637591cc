/* Target table: the facts lowering, code generation and the public target
 * queries need about each supported GPU architecture (lib/Support/target.h),
 * and the rows of the pass-config table (include/tilelang/pass_configs.def)
 * with their value texts.
 *
 * Algorithm: a constant table searched by name.
 * Sources (PTX ISA 8.5 unless said; each instruction's "Target ISA notes"
 * give the sm and "PTX ISA notes" the PTX version that introduced it):
 *  - "PTX ISA version" release-notes table: sm_80 needs PTX 7.0, sm_86 PTX
 *    7.1, sm_89 PTX 7.8, sm_90 PTX 7.8, sm_90a PTX 8.0; the Hopper
 *    instructions (wgmma, cp.async.bulk, mbarrier tx-count, setmaxnreg,
 *    elect) need PTX 8.0, so sm_90 is built with PTX 8.0 too
 *    (docs/codegen.md "Targets and PTX versions").
 *  - CUDA C++ Programming Guide, "Technical Specifications per Compute
 *    Capability": maximum shared memory per block (opt-in) 163 KB on 8.0,
 *    99 KB on 8.6 and 8.9, 227 KB on 9.0; per SM 164 KB / 100 KB / 100 KB /
 *    228 KB; 1024 threads per block.
 *  - §9.7.3 half precision arithmetic (add/sub/mul): .f16 from sm_53;
 *    .bf16 from sm_90 (sm_80 has only fma.rn.bf16 and cvt).
 *  - atom: .bf16x2 with .add.noftz from sm_90 (PTX 7.8); .f16x2 from sm_60.
 *  - cp.async (data movement, asynchronous copy): sm_80, PTX 7.0.
 *  - ldmatrix (warp-level matrix load): sm_75, PTX 6.5.
 *  - mma (warp-level matrix multiply-accumulate, the shape/type table):
 *    m16n8k8 .f16 from sm_75; m16n8k16 .f16/.bf16, m16n8k8 .bf16/.tf32,
 *    m16n8k32 .s8/.u8 from sm_80; m16n8k32 .e4m3/.e5m2 from sm_89 with PTX
 *    8.4: sm_89, sm_90 and sm_90a have TL_MMA_M16N8K32_E4M3, and a module
 *    that uses it is emitted with PTX 8.4 (TL_PTX_VERSION_FP8_MMA; the
 *    others keep the entry's ptx_version).
 *  - wgmma.mma_async (asynchronous warpgroup matrix multiply-accumulate):
 *    sm_90a only, PTX 8.0.
 *  - cp.async.bulk / cp.async.bulk.tensor (TMA) and mbarrier expect_tx /
 *    complete_tx: sm_90, PTX 8.0.
 *  - setmaxnreg: sm_90a only, PTX 8.0.
 *  - clusters (%clusterid, %cluster_ctarank, barrier.cluster, the
 *    .shared::cluster state space): sm_90, PTX 7.8. */
#include "Support/target.h"

#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include "tilelang/runtime.h" /* the TL_COMPILE_* flags of the pass configs */

/* the table reads as one entry a target: */
/* clang-format off */
/* the mma.sync shapes every sm_8x/sm_90 entry has */
#define MMA_SM80                                                                                    \
  (TL_MMA_M16N8K8_F16 | TL_MMA_M16N8K16_F16 | TL_MMA_M16N8K8_BF16 | TL_MMA_M16N8K16_BF16 |          \
   TL_MMA_M16N8K8_TF32 | TL_MMA_M16N8K32_S8 | TL_MMA_M16N8K64_S4)
/* sm_89 and newer: the fp8 mma.sync too */
#define MMA_SM89 (MMA_SM80 | TL_MMA_M16N8K32_E4M3)

static const tl_target targets[] = {
    {.name = "sm_80", .sm = 80, .ptx_version = 70, .max_threads = 1024,
     .max_smem_per_block = 166912, .max_smem_per_sm = 167936,
     .cp_async = true, .ldmatrix = true, .mma_shapes = MMA_SM80},
    {.name = "sm_86", .sm = 86, .ptx_version = 71, .max_threads = 1024,
     .max_smem_per_block = 101376, .max_smem_per_sm = 102400,
     .cp_async = true, .ldmatrix = true, .mma_shapes = MMA_SM80},
    {.name = "sm_89", .sm = 89, .ptx_version = 78, .max_threads = 1024,
     .max_smem_per_block = 101376, .max_smem_per_sm = 102400,
     .cp_async = true, .ldmatrix = true, .mma_shapes = MMA_SM89, .fp8_cvt = true},
    {.name = "sm_90", .sm = 90, .ptx_version = 80, .max_threads = 1024,
     .max_smem_per_block = 232448, .max_smem_per_sm = 233472,
     .native_bf16_arith = true, .atomic_add_bf16x2 = true,
     .cp_async = true, .ldmatrix = true, .mma_shapes = MMA_SM89, .fp8_cvt = true,
     .tma = true, .clusters = true},
    {.name = "sm_90a", .sm = 90, .arch_specific = true, .ptx_version = 80, .max_threads = 1024,
     .max_smem_per_block = 232448, .max_smem_per_sm = 233472,
     .native_bf16_arith = true, .atomic_add_bf16x2 = true,
     .cp_async = true, .ldmatrix = true, .mma_shapes = MMA_SM89, .fp8_cvt = true,
     .wgmma = true, .tma = true, .setmaxnreg = true, .regs_per_sm = 65536, .clusters = true, .sms = 132},
};

/* clang-format on */
const tl_target *tl_target_default(void) { return &targets[0]; }

const tl_target *tl_target_lookup(const char *name) {
  if (!name) return NULL;
  for (size_t i = 0; i < sizeof targets / sizeof targets[0]; i++) {
    if (strcmp(targets[i].name, name) == 0) return &targets[i];
  }
  return NULL;
}

/* "sm_80, sm_86, sm_89, sm_90 or sm_90a", from the table, made once */
static char names_text[128];
static pthread_once_t names_once = PTHREAD_ONCE_INIT;

static void make_names(void) {
  size_t n = sizeof targets / sizeof targets[0], at = 0;
  for (size_t i = 0; i < n && at < sizeof names_text; i++)
    at += (size_t)snprintf(names_text + at, sizeof names_text - at, "%s%s",
                           i == 0       ? ""
                           : i + 1 == n ? " or "
                                        : ", ",
                           targets[i].name);
}

const char *tl_target_names(void) {
  pthread_once(&names_once, make_names);
  return names_text;
}

/* ------------------------------------------------------------ pass configs */
/* X-macro expansions: */
/* clang-format off */
const tl_pass_config_info tl_pass_config_table[TL_PASS_CONFIG_COUNT] = {
#define TL_PASS_CONFIG(field, NAME, key, bit, kind, dflt, doc) {key, TL_COMPILE_##NAME, TL_PASS_CONFIG_##kind, dflt, doc},
#include "tilelang/pass_configs.def"
};

bool *tl_pass_config_field(tl_pass_configs *c, int i) {
  switch (i) {
#define TL_PASS_CONFIG(field, NAME, key, bit, kind, dflt, doc) \
  case TL_PC_##NAME: return &c->field;
#include "tilelang/pass_configs.def"
    default: return NULL;
  }
}
/* clang-format on */

tl_pass_configs tl_pass_configs_from_flags(unsigned flags) {
  tl_pass_configs c = {0};
  for (int i = 0; i < TL_PASS_CONFIG_COUNT; i++)
    if (flags & tl_pass_config_table[i].flag) {
      *tl_pass_config_field(&c, i) = true;
      tl_pass_config_mark_given(&c, i);
    }
  return c;
}

bool tl_pass_config_get(const tl_pass_configs *c, int i) {
  tl_pass_configs copy = *c;
  bool *field = tl_pass_config_field(&copy, i);
  return field && *field;
}

int tl_pass_config_index(const char *key) {
  for (int i = 0; key && i < TL_PASS_CONFIG_COUNT; i++)
    if (!strcmp(key, tl_pass_config_table[i].key)) return i;
  return -1;
}

const char *tl_pass_config_value_text(int i, bool on) {
  if (i >= 0 && i < TL_PASS_CONFIG_COUNT && tl_pass_config_table[i].kind == TL_PASS_CONFIG_BITWIDTH)
    return on ? "64" : "32";
  return on ? "True" : "False";
}

bool tl_pass_config_parse_value(int i, const char *v, bool *on) {
  if (i < 0 || i >= TL_PASS_CONFIG_COUNT || !v) return false;
  static const char *const texts[][3] = {{"True", "true", "1"}, {"False", "false", "0"}};
  static const char *const widths[] = {"64", "32"};
  for (int b = 0; b < 2; b++) {
    bool hit = false;
    if (tl_pass_config_table[i].kind == TL_PASS_CONFIG_BITWIDTH) hit = !strcmp(v, widths[b]);
    else
      for (int t = 0; t < 3; t++) hit |= !strcmp(v, texts[b][t]);
    if (hit) {
      *on = b == 0;
      return true;
    }
  }
  return false;
}

static char key_lists[2][512];
static pthread_once_t key_lists_once = PTHREAD_ONCE_INIT;

static void make_key_lists(void) {
  for (int q = 0; q < 2; q++)
    for (int i = 0, at = 0; i < TL_PASS_CONFIG_COUNT && at < (int)sizeof key_lists[q]; i++)
      at += snprintf(key_lists[q] + at, sizeof key_lists[q] - (size_t)at, "%s%s%s%s", i ? ", " : "", q ? "\"" : "",
                     tl_pass_config_table[i].key, q ? "\"" : "");
}

const char *tl_pass_config_key_list(bool quoted) {
  pthread_once(&key_lists_once, make_key_lists);
  return key_lists[quoted];
}

bool tl_pass_config_any_schedule_given(const tl_pass_configs *c) {
  for (int i = 0; i < TL_PASS_CONFIG_COUNT; i++)
    if (tl_pass_config_table[i].kind == TL_PASS_CONFIG_SCHEDULE && tl_pass_config_given(c, i)) return true;
  return false;
}

void tl_pass_config_mark_given(tl_pass_configs *c, int i) {
  if (i >= 0 && i < TL_PASS_CONFIG_COUNT && tl_pass_config_table[i].kind == TL_PASS_CONFIG_SCHEDULE)
    c->given |= 1u << i;
}
