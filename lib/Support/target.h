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
  TL_MMA_M16N8K64_S4 = 1u << 7,   /* .s4/.u4 inputs, m16n8k64: sm_80 (no wgmma form on sm_90a) */
};

/* The PTX ISA version a module with the fp8 mma.sync (.e4m3/.e5m2, PTX ISA
 * 8.5 §9.7.14.5.14 "PTX ISA notes": m16n8k32 .e4m3/.e5m2 with .f32
 * accumulators introduced in PTX ISA 8.4), or with fp8 cvt forms on sm_89
 * (PTX 8.1 there, §9.7.9.21), is emitted with; every other
 * module keeps its target's ptx_version (lib/NVPTX/emit.c). */
#define TL_PTX_VERSION_FP8_MMA 84
/* mma.sp::ordered_metadata (T.gemm_sp): PTX ISA 8.5 */
#define TL_PTX_VERSION_SPARSE_MMA 85

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
  int regs_per_sm;        /* 32-bit registers of an SM, the pool setmaxnreg.inc draws from (65,536 on
                           * compute capability 8.x and 9.0: CUDA C++ Programming Guide, "Technical
                           * Specifications per Compute Capability"); set where setmaxnreg is, whose users
                           * read it: ws-scopes' register-share check, warp-specialize's shares */
  bool clusters;          /* thread block clusters: %cluster_*, barrier.cluster, shared::cluster */
  int sms;                /* SMs of the architecture's largest part, for persistent grids (sm_90a:
                           * 132).  A part with fewer (docs/performance.md) runs the
                           * extra blocks in a second wave: correct, but those blocks' tiles then
                           * finish late (up to twice the time), so the runtime compiles for
                           * device 0's own count when it differs (lib/Runtime/compile.c,
                           * with_device_sms).  0: no persistent grids */
} tl_target;

/* The target compiled for where none is named and no device says otherwise
 * (the table's first entry, sm_80: its PTX runs on every supported
 * architecture).  The one place this default is written. */
const tl_target *tl_target_default(void);
/* Looks up a target by name ("sm_80", ...); NULL for an unknown name or NULL. */
const tl_target *tl_target_lookup(const char *name);
/* The supported names, for messages: "sm_80, sm_86, sm_89, sm_90 or sm_90a". */
const char *tl_target_names(void);

/* TileLang's pass configs (include/tilelang/pass_configs.def: keys, kinds,
 * what each does), as a function of the tile IR holds them (jit
 * pass_configs, T.func_attr, the TL_COMPILE_* flags; printed as T.func_attr
 * keys).  All false by default. */
typedef struct tl_pass_configs {
#define TL_PASS_CONFIG(field, NAME, key, bit, kind, dflt, doc) bool field;
#include "tilelang/pass_configs.def"
  /* bit i: key i of the table, one of kind SCHEDULE, was given, True or
   * False (the attention form's default schedule applies only when none of
   * them was; the printer writes a given False, so that the kernel cache's
   * key tells it from an absent key) */
  unsigned given;
} tl_pass_configs;

/* The row indices of the table, TL_PC_<NAME>, and their count. */
enum {
#define TL_PASS_CONFIG(field, NAME, key, bit, kind, dflt, doc) TL_PC_##NAME,
#include "tilelang/pass_configs.def"
  TL_PASS_CONFIG_COUNT
};

/* How a config's value is written (the table's kind column). */
typedef enum tl_pass_config_kind {
  TL_PASS_CONFIG_BOOL,     /* True or False; False is absent */
  TL_PASS_CONFIG_SCHEDULE, /* True or False; False differs from absent */
  TL_PASS_CONFIG_BITWIDTH  /* 32 or 64; 64 sets the field */
} tl_pass_config_kind;

/* Row i of the table (0 <= i < TL_PASS_CONFIG_COUNT). */
typedef struct tl_pass_config_info {
  const char *key; /* "tl.disable_wgmma" */
  unsigned flag;   /* TL_COMPILE_DISABLE_WGMMA */
  tl_pass_config_kind kind;
  const char *dflt; /* "False", "32", "absent" */
  const char *doc;
} tl_pass_config_info;
extern const tl_pass_config_info tl_pass_config_table[TL_PASS_CONFIG_COUNT];

/* The pass configs the TL_COMPILE_* bits of flags set (given True). */
tl_pass_configs tl_pass_configs_from_flags(unsigned flags);
/* The field of c named by row i (NULL for an index out of range). */
bool *tl_pass_config_field(tl_pass_configs *c, int i);
/* The value of that field (false for an index out of range). */
bool tl_pass_config_get(const tl_pass_configs *c, int i);
/* Index of key in the table, or -1. */
int tl_pass_config_index(const char *key);
/* The value text of row i as the printer writes it: "True"/"False", or
 * "64"/"32" for a BITWIDTH row. */
const char *tl_pass_config_value_text(int i, bool on);
/* Parses value text v for row i (Python literals: True/False/1/0 and
 * true/false for the booleans, 32/64 for a BITWIDTH row) into *on; false
 * for another text. */
bool tl_pass_config_parse_value(int i, const char *v, bool *on);
/* The keys in table order, comma-separated, each in double quotes when
 * quoted ("\"tl.enable_fast_math\", \"tl.disable_wgmma\", ...", for the
 * front end's messages) or bare (tl_pass_config_flag_keys); static. */
const char *tl_pass_config_key_list(bool quoted);
/* Was row i, of kind SCHEDULE, given (True or False)? */
static inline bool tl_pass_config_given(const tl_pass_configs *c, int i) {
  return i >= 0 && i < TL_PASS_CONFIG_COUNT && (c->given >> i & 1u);
}
/* Were any of the SCHEDULE rows given? */
bool tl_pass_config_any_schedule_given(const tl_pass_configs *c);
/* Records that row i was given (a no-op for rows not of kind SCHEDULE). */
void tl_pass_config_mark_given(tl_pass_configs *c, int i);

#endif
