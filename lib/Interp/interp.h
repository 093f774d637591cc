/* CPU executors (internal): the tile-level reference evaluator and the SIMT
 * executor.  Both run one prim_func over its whole grid on host memory.
 *
 * Tensors are contiguous row-major host arrays of the parameter's dtype
 * (f16/bf16 as their 16-bit encodings, bool as one byte).  Arguments come in
 * the prim_func's parameter order; dynamic dimension symbols take the values
 * in dyn[] in tl_primfunc.dynamic order.  Errors (an out-of-bounds access, a
 * race, an op the evaluator cannot run) go to d with the statement's
 * source location; both return false on error. */
#ifndef TL_INTERP_H
#define TL_INTERP_H

#include <math.h>

#include "IR/tir.h"
#include "Support/mma.h"

typedef struct tl_interp_arg {
  bool is_tensor;
  void *data;       /* tensor: host memory, contiguous */
  int ndim;         /* tensor: must match the parameter */
  int64_t shape[8]; /* tensor: actual dims (checked against the parameter) */
  int64_t i;        /* scalar of int/uint/bool dtype */
  double f;         /* scalar of float dtype */
  bool absent;      /* tensor: None for a parameter the kernel never touches
                          (data NULL, shape the parameter's static one) */
} tl_interp_arg;

/* Runs the TILE IR function (not lowered) by the definition of each tile op
 * (T.copy with casts and zero padding out of bounds, T.gemm as a float64
 * product accumulated into the accumulator dtype -- a float16 one once per
 * k-chunk of TL_MMA_K, as tl_mma_step; tf32, int8 and float64 operands
 * as their instruction, tl_mma_step_kind -- T.reduce, T.Parallel
 * loops in order, ...), block after block.  Shares no code with lib/Lower. */
bool tl_ref_eval(const tl_module *m, int func, const tl_interp_arg *args, int nargs, const int64_t *dyn, int ndyn,
                 tl_diag *d);

/* Kernel workspaces (T.alloc_global) shared by several tl_simt_exec calls:
 * the launch stages of one kernel call (several T.Kernel scopes,
 * lib/Lower/split_kernels.c), each a SIMT function with the same workspace
 * allocations.  A workspace takes the slot of its name and byte size,
 * created zeroed by the first call that allocates it; the caller zero-
 * initialises the struct and frees it with tl_simt_workspaces_free. */
#define TL_SIMT_MAX_WORKSPACES 8

/* The iterations one execution of a `while` loop may run on either CPU
 * model before it is reported as a loop that may never end (a GPU has no
 * such bound; a kernel sized for the CPU models stays far below it). */
#define TL_INTERP_MAX_WHILE_ITERS (INT64_C(1) << 16)
typedef struct tl_simt_workspaces {
  int n;
  struct {
    const char *name;
    uint8_t *data;
    int64_t bytes;
  } slot[TL_SIMT_MAX_WORKSPACES];
} tl_simt_workspaces;
void tl_simt_workspaces_free(tl_simt_workspaces *w);

typedef struct tl_simt_options {
  bool check_races;       /* shared-memory race / barrier / cp.async protocol checks (default on) */
  int64_t max_steps;      /* abort after this many statement executions per warp and block (0 = 1e9) */
  uint64_t schedule_seed; /* 0: the deterministic schedule; else every warp is scheduled on its own and
                             the seed shuffles which ready warp runs, where warps yield and when bulk
                             copies land (simt_sched.c) */
  /* If non-NULL, called after each block with the blocks run and the grid's total (tl_context_set_progress) */
  void (*progress)(void *user, int64_t done, int64_t total);
  void *progress_user;
  tl_simt_workspaces *workspaces; /* NULL: this call's workspaces are its own, zeroed */
} tl_simt_options;

/* The K of one mma.sync.aligned.m16n8k16 (PTX ISA §9.7.14.5.14): the k-chunk
 * by which both CPU models accumulate into a float16 accumulator. */
#define TL_MMA_K 16

/* One accumulation step of mma.sync as both CPU models compute it
 * (docs/simt-ir.md, T.ptx_mma): the n products a[k] * b[k * bs], k = 0..n-1
 * in increasing order (n <= TL_MMA_K), summed in float64, then the old
 * accumulator c added, and the result rounded once to the accumulator dtype
 * ct (float32 or float16, round to nearest even).  The operands are f16/bf16
 * values held as doubles, so each product is exact in float64.  The
 * reference evaluator's T.gemm of f16/bf16 operands (float16 or float32 accumulator) is a chain of these
 * steps over k-chunks of TL_MMA_K in increasing k, which is what the SIMT
 * executor's T.ptx_mma does for each instruction, so the two agree bit for
 * bit. */
static inline double tl_mma_step(const double *a, const double *b, int64_t bs, int n, double c, tl_dtype ct) {
  double s = 0;
  for (int k = 0; k < n; k++) s += a[k] * b[k * bs];
  s += c;
  return ct.code == TL_TYPE_FLOAT && ct.bits == 32 ? (double)(float)s : tl_round_to_dtype(s, ct);
}

/* One k-step of the mma.sync instruction of kind `kind` (lib/Support/mma.h)
 * as both CPU models compute it, the n products a[k] * b[k * bs]
 * in increasing k added to the accumulator c:
 *  - TF32 (m16n8k8): the operands are already tf32 (tl_tf32_rna: the
 *    instruction's cvt.rna.tf32.f32), each product exact in float64, the
 *    sum and c added in float64, rounded once to float32 (tl_mma_step);
 *  - I8 (m16n8k32 .s8/.u8) and I4 (m16n8k64 .s4/.u4, the nibbles' values):
 *    the exact integer sum plus c, wrapped modulo 2^32 to int32 (the
 *    instruction's .s32 accumulate without .satfinite);
 *  - F64 (m8n8k4): a chain of fused multiply-adds in increasing k starting
 *    from c (each product rounded once with its addition);
 *  - FP8 (m16n8k32 .e4m3/.e5m2 -> .f32): as TF32 with k-chunks of 32: the
 *    operands are float8 values (exact in float64, and so are their
 *    products), the 32 products summed in float64 with c, rounded once to
 *    float32.  This is a model, not a measured fact: the PTX ISA does not
 *    specify the order or width of mma's internal accumulation (§9.7.14.5);
 *    the GPU test (test_mma_types) reports how far the device is from it;
 *  - F16 (m16n8k16): tl_mma_step.
 * Both models chain it over the k-chunks of the instruction's k, so they
 * agree bit for bit. */
static inline double tl_mma_step_kind(int kind, const double *a, const double *b, int64_t bs, int n, double c,
                                      tl_dtype ct) {
  if (kind == TL_MMA_KIND_I8 || kind == TL_MMA_KIND_I4) {
    int64_t s = (int64_t)c;
    for (int k = 0; k < n; k++) s += (int64_t)a[k] * (int64_t)b[k * bs];
    return (double)(int32_t)(uint32_t)(uint64_t)s;
  }
  if (kind == TL_MMA_KIND_F64) {
    double s = c;
    for (int k = 0; k < n; k++) s = fma(a[k], b[k * bs], s);
    return s;
  }
  return tl_mma_step(a, b, bs, n, c, ct);
}

/* Runs the SIMT IR function (after tl_lower_module) for the whole grid:
 * blocks one after another, a block's warps each its own thread of control
 * under a scheduler (deterministic, or shuffled by opts->schedule_seed), the
 * lanes of a warp in lockstep with an active mask; warp-collective intrinsics per the PTX ISA (docs/simt-ir.md);
 * arithmetic and conversions rounded as the GPU does. */
bool tl_simt_exec(const tl_module *m, int func, const tl_interp_arg *args, int nargs, const int64_t *dyn, int ndyn,
                  const tl_simt_options *opts, tl_diag *d);

#endif
