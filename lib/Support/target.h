/* Target description (internal): what the compiler knows about each GPU
 * architecture it generates code for, and TileLang's pass configs that
 * choose among lowerings.  One constant table (target.c) that lowering
 * (lib/Lower), code generation (lib/NVPTX), the compiler driver and the
 * public target queries (tl_target_supported, tl_target_list) all read.
 *
 * These are facts about the architecture (what PTX can say for it), not
 * about a device: the number of SMs or the shared memory of the GPU at hand
 * come from the CUDA driver at run time (lib/Runtime/driver.c). */
#ifndef TL_SUPPORT_TARGET_H
#define TL_SUPPORT_TARGET_H

#include <stdbool.h>

/* mma.sync shapes and operand types an architecture executes (bit set in
 * tl_target.mma_shapes).  Source: PTX ISA 8.5, "Warp Level Matrix Multiply-
 * Accumulate Instructions: mma", the table of shapes and types and its
 * Target ISA notes. */
enum {
  TL_MMA_M16N8K8_F16 = 1u << 0,   /* .f16 inputs, m16n8k8: sm_75 */
  TL_MMA_M16N8K16_F16 = 1u << 1,  /* .f16 inputs, m16n8k16: sm_80 */
  TL_MMA_M16N8K8_BF16 = 1u << 2,  /* .bf16 inputs, m16n8k8: sm_80 */
  TL_MMA_M16N8K16_BF16 = 1u << 3, /* .bf16 inputs, m16n8k16: sm_80 */
  TL_MMA_M16N8K8_TF32 = 1u << 4,  /* .tf32 inputs, m16n8k8: sm_80 */
  TL_MMA_M16N8K32_S8 = 1u << 5,   /* .s8/.u8 inputs, m16n8k32: sm_80 */
  TL_MMA_M16N8K32_E4M3 = 1u << 6, /* .e4m3/.e5m2 inputs, m16n8k32: sm_89, PTX 8.4 */
};

/* The PTX ISA version a module with the fp8 mma.sync (.e4m3/.e5m2, PTX ISA
 * 8.5 §9.7.14.5.14 "PTX ISA notes": m16n8k32 .e4m3/.e5m2 with .f32
 * accumulators introduced in PTX ISA 8.4), or with fp8 cvt forms on sm_89
 * (PTX 8.1 there, §9.7.9.21), is emitted with; every other
 * module keeps its target's ptx_version (lib/NVPTX/emit.c). */
#define TL_PTX_VERSION_FP8_MMA 84

/* One GPU architecture.  Entries are constant and live for the process. */
typedef struct tl_target {
  const char *name;       /* "sm_80", "sm_90a": the PTX .target and LLVM CPU name */
  int sm;                 /* SM version: 80, 86, 89, 90 */
  bool arch_specific;     /* an "a" target (sm_90a): its PTX runs only on that arch */
  int ptx_version;        /* PTX ISA version emitted, x10 (70 = 7.0) */
  int max_threads;        /* threads per block */
  int max_smem_per_block; /* bytes of dynamic shared memory a block may use (opt-in) */
  int max_smem_per_sm;    /* bytes of shared memory per SM */
  bool native_bf16_arith; /* add/sub/mul.bf16 exist (otherwise only fma.rn.bf16 and cvt) */
  bool atomic_add_bf16x2; /* atom.add.noftz.bf16x2 (red/atom on packed bf16 pairs) */
  bool cp_async;          /* cp.async.ca/cg + commit_group/wait_group */
  bool ldmatrix;          /* ldmatrix.sync.aligned.m8n8.x1/x2/x4[.trans].b16 */
  unsigned mma_shapes;    /* TL_MMA_* bits: the mma.sync shapes and types */
  bool fp8_cvt;           /* cvt.rn.satfinite.{e4m3x2,e5m2x2}.f32 and cvt.rn.f16x2.{e4m3x2,e5m2x2}
                           * (PTX ISA §9.7.9.21: sm_89, PTX 7.8) */
  bool wgmma;             /* wgmma.mma_async (warpgroup MMA) */
  bool tma;               /* cp.async.bulk[.tensor], mbarrier expect_tx/complete_tx */
  bool setmaxnreg;        /* setmaxnreg.inc/dec (per-warpgroup register reallocation) */
  bool clusters;          /* thread block clusters: %cluster_*, barrier.cluster, shared::cluster */
  int sms;                /* SMs of the architecture's largest part, for persistent grids (sm_90a:
                           * 132).  A part with fewer (docs/performance.md) runs the
                           * extra blocks in a second wave: correct, but those blocks' tiles then
                           * finish late (up to twice the time); the runtime's SM count should
                           * replace it (not done yet).  0: no persistent grids */
} tl_target;

/* Looks up a target by name ("sm_80", ...); NULL for an unknown name or NULL. */
const tl_target *tl_target_lookup(const char *name);
/* The supported names, for messages: "sm_80, sm_86, sm_89, sm_90 or sm_90a". */
const char *tl_target_names(void);

/* TileLang's pass configs that choose among lowerings
 * (@tilelang.jit(pass_configs={...}) and T.func_attr, boolean each; all
 * false by default).  Each keeps a GEMM main loop off the sm_90a path of
 * TMA + mbarriers + wgmma + a producer warpgroup (lib/Lower/
 * warp_specialize.c), on cp.async + mma.sync.  ("tl.enable_fast_math", the
 * pass config that acts on code generation, is tl_primfunc.fast_math.) */
typedef struct tl_pass_configs {
  bool disable_wgmma;            /* "tl.disable_wgmma": no wgmma, mma.sync instead */
  bool disable_tma_lower;        /* "tl.disable_tma_lower": no TMA for copies */
  bool disable_warp_specialized; /* "tl.disable_warp_specialized": no producer/consumer warps */
  /* "tl.config_index_bitwidth": 64 (the key's value is the bit width, 32 or
   * 64; set means 64): every global tensor index is computed in int64
   * (lib/IR/index64.c); 32, the default, leaves int32 indices except into
   * dims that can exceed int32. */
  bool index_bitwidth_64;
  /* "tl.enable_stream_k" (this project's; TileLang has no stream-K
   * lowering; off by default): a persistent Hopper GEMM splits the k-tiles
   * of its last wave of tiles over all blocks (lib/Lower/Hopper/stream_k.c)
   * instead of running whole tiles per block. */
  bool enable_stream_k;
  /* "tl.disable_tma_store" (this project's): a warp-specialized GEMM's
   * epilogue stores its tile with st.global from the shared staging tile
   * instead of TMA tensor stores (lib/Lower/lower_tile.c) */
  bool disable_tma_store;
  /* "tl.attention_pingpong" (this project's; off by default): the sm_90a
   * attention form with two consumer warpgroups takes turns at the tensor
   * cores -- each T.gemm of the loop waits for its warpgroup's turn (a named
   * barrier) and hands the turn to the other warpgroup once its wgmma are
   * issued, so one warpgroup's softmax runs under the other's GEMMs
   * (lib/Lower/Hopper/warp_specialize.c, "ping-pong") */
  bool attention_pingpong;
  /* "tl.attention_overlap" (this project's; off by default): the sm_90a
   * attention form overlaps each consumer warpgroup's softmax of key block
   * k with its own wgmma (Q·K_k^T and P·V of block k - 1 in flight while
   * the softmax runs; lib/Lower/Hopper/attention_overlap.c) */
  bool attention_overlap;
  /* "tl.attention_persistent" (this project's; off by default): the sm_90a
   * attention form runs on a persistent grid of min(tiles, SMs) blocks, each
   * looping over output tiles, so that the producer loads the next tile's Q,
   * K and V while the consumers finish the last (lib/Lower/Hopper/warp_specialize.c) */
  bool attention_persistent;
  /* bit i: key i of tl_pass_config_keys, one of TL_PASS_CONFIG_SCHEDULE's,
   * was given, True or False (the attention form's default schedule
   * applies only when none of them was; the printer writes a given False,
   * so that the kernel cache's key tells it from an absent key) */
  unsigned given;
} tl_pass_configs;

/* The pass config keys above, in tl_pass_configs field order, for the
 * front end and the printer: "tl.disable_wgmma", "tl.disable_tma_lower",
 * "tl.disable_warp_specialized", "tl.config_index_bitwidth",
 * "tl.enable_stream_k", "tl.disable_tma_store", "tl.attention_pingpong",
 * "tl.attention_overlap", "tl.attention_persistent". */
#define TL_PASS_CONFIG_COUNT 9
/* The index of "tl.config_index_bitwidth", whose value is 32 or 64 (printed
 * as 64 when set) instead of True/False. */
#define TL_PASS_CONFIG_INDEX_BITWIDTH 3
extern const char *const tl_pass_config_keys[TL_PASS_CONFIG_COUNT];
/* The field of c named by key index i (0 <= i < TL_PASS_CONFIG_COUNT). */
bool *tl_pass_config_field(tl_pass_configs *c, int i);
/* The value of that field (false for an index out of range). */
bool tl_pass_config_get(const tl_pass_configs *c, int i);
/* Index of key in tl_pass_config_keys, or -1. */
int tl_pass_config_index(const char *key);
/* The keys whose absence means "the compiler chooses" (the attention
 * schedules: "tl.attention_pingpong", "tl.attention_overlap",
 * "tl.attention_persistent"), as bits of key indices; for the others False
 * and absent are the same. */
#define TL_PASS_CONFIG_SCHEDULE (7u << 6)
/* Was key index i, one of TL_PASS_CONFIG_SCHEDULE's, given (True or False)? */
static inline bool tl_pass_config_given(const tl_pass_configs *c, int i) {
  return i >= 0 && i < TL_PASS_CONFIG_COUNT && (c->given >> i & 1u);
}
/* Records that key index i was given (a no-op outside TL_PASS_CONFIG_SCHEDULE). */
static inline void tl_pass_config_mark_given(tl_pass_configs *c, int i) {
  if (i >= 0 && i < TL_PASS_CONFIG_COUNT) c->given |= (1u << i) & TL_PASS_CONFIG_SCHEDULE;
}

#endif
