/* The warp-specialize pass's internal interface (lib/Lower/Hopper/warp_specialize.c
 * states the pass; lib/Lower/Hopper/ws_persist.c its persistent grid): the plan of
 * a matched T.Pipelined loop, the statement builder, and the persistent
 * grid's state and functions.  Not a public header. */
#ifndef TL_LOWER_WS_INTERNAL_H
#define TL_LOWER_WS_INTERNAL_H

#include "IR/rewrite.h"
#include "Lower/Hopper/stream_k.h"
#include "Lower/lower_internal.h"

#define WS_MAX_LOADS 8
#define WS_MAX_LETS 8 /* loop-body LETs a tile copy may not use, tracked by the match */
#define WS_MAX_PRE 2
#define WS_MAX_LETS 8

typedef struct ws_load {
  const tl_stmt *s; /* T.copy(src region, X) */
  tl_buffer *src, *X;
  int64_t rows, cols; /* X's static shape */
  int rd;             /* the source dimension of X's rows (the columns are its last) */
  int sw;             /* swizzle span (bytes) */
  int64_t nE;         /* elements of a panel row (a TMA box's inner extent) */
  int eb;             /* element bytes: 2 (float16/bfloat16) or 1 (float8) */
  bool pre;           /* attention: copied once before the loop (no stage dimension) */
  int group;          /* its barrier group (ws_plan.ngroups) */
} ws_load;

typedef TL_VEC(tl_stmt *) stmt_vec;

typedef struct ws_plan {
  tl_stmt *kernel;
  int li; /* the loop's index in the kernel body */
  tl_stmt *loop;
  const tl_stmt *gemm; /* the (first) T.gemm */
  /* the GEMM form: the loop body is `if cond->u.ifs.cond: <copies, T.gemm>`
   * (ws_cond.c), else NULL; cnt: the consumers' count of taken iterations */
  const tl_stmt *cond;
  tl_buffer *cnt;
  bool attn;            /* the attention form (header comment) */
  const tl_stmt *gemm2; /* attention: the second T.gemm, or NULL */
  int nother;           /* attention: the loop's statements other than copies and T.gemm */
  ws_load loads[WS_MAX_LOADS];
  int nloads;
  ws_load pre[WS_MAX_PRE]; /* attention: tiles copied once before the loop (Q) */
  int pre_at[WS_MAX_PRE];  /* their copies' indices in the kernel body */
  int npre;
  /* barrier groups of the loop's tiles: 1, or (attention) 2 when the second
   * T.gemm reads tiles the first does not (V): group g has its own full and
   * empty barriers mbar[2Sg + s], mbar[2Sg + S + s], so that K is released
   * after the first T.gemm and V after the second */
  int ngroups;
  /* attention: a shared tile the statements after the loop stage through
   * (O_shared) that takes the bytes of pre-loop tile j (Q, dead after the
   * loop), or NULL */
  tl_buffer *reuse[WS_MAX_PRE];
  /* the GEMM form's epilogue staged through shared memory (plan_c_stage):
   * T.copy(C fragment, X) at body index epi_at, then T.copy(X, C region), X
   * a shared tile nothing else uses (allocated at body index epi_alloc): the
   * pair becomes T.copy(C fragment, C region), stored by lower-tile-ops'
   * staged or TMA-store epilogue, and X's allocation goes; epi_tile NULL
   * when there is no such pair */
  tl_buffer *epi_tile;
  int epi_at, epi_alloc;
  /* the GEMM form: other statements after the loop use shared memory; each
   * gets the consumers' barrier before it (ws_rewrite) */
  bool epi_shared;
  int stages;
  int64_t threads;
  /* attention: the kernel's own threads when the plan runs it on more consumer warpgroups (block_M = 64 x
   * them; tl_ws_thread_count_free), else 0 */
  int64_t asked_threads;
  /* attention, tl.attention_pingpong, two consumer warpgroups: they take
   * turns at the tensor cores (pp_turn) */
  bool pingpong;
  /* attention, tl.attention_overlap: the consumers' loop takes
   * attention_overlap.c's schedule (overlap), or not, for the reason
   * overlap_why */
  bool overlap;
  const char *overlap_why;
  /* attention, none of tl.attention_overlap / _persistent / _pingpong set:
   * the default schedule (ws_rewrite's auto_schedule) decides both */
  bool auto_sched;
  bool overlap_ok; /* the loop has the overlap schedule's form (as far as the plan can tell) */
  bool q_freed;    /* the overlap schedule releases Q (persistent grid) */
} ws_plan;

/* ------------------------------------------------------------- rewriting */
typedef struct ws_build {
  tl_module *m;
  tl_loc loc;
  tl_names *names;
  bool oom;
} ws_build;

static inline tl_expr *I(ws_build *b, int64_t v) { return tl_lo_int(b->m, b->loc, v); }
static inline tl_expr *V(ws_build *b, tl_var *v) { return tl_ir_var(b->m, b->loc, v); }
static inline tl_expr *BIN(ws_build *b, tl_binop op, tl_expr *x, tl_expr *y) {
  return tl_ir_binary(b->m, b->loc, op, x, y);
}
static inline tl_expr *REF(ws_build *b, tl_buffer *x) { return tl_ir_buffer_ref(b->m, b->loc, x); }
static inline tl_stmt *CALL(ws_build *b, tl_intrin op, int n, tl_expr **args) {
  for (int i = 0; i < n; i++)
    if (!args[i]) return NULL;
  return tl_lo_eval(b->m, b->loc, tl_ir_call(b->m, b->loc, op, n, args));
}
static inline tl_stmt *SEQ(ws_build *b, int n, tl_stmt **s) {
  for (int i = 0; i < n; i++)
    if (!s[i]) return NULL;
  return tl_ir_seq(b->m, b->loc, n, s);
}

/* ------------------------------------------------------- persistent grid */
/* A persistent kernel (docs/hopper.md "Persistent grid and tile order"): the grid becomes min(tiles, the
 * target's SMs) blocks along x, and each block runs output tiles
 * t = blockIdx.x + j * blocks, j = 0, 1, ...: bx, by become LETs of t
 * (through T.use_swizzle's rasterization when the kernel has one), the
 * producer's loop and the consumers' part run once per tile, and the k-tile
 * counter r runs on across tiles (let_rel), so the producer fills the next
 * tile's stages while the consumers store the previous tile (a gain at
 * every size measured: docs/performance.md, "Measurements behind choices
 * in the code").  Kernels with a 3-D grid, or whose LETs before the loop
 * or loop bounds use bx/by, stay one tile per block. */
typedef struct ws_persist {
  bool on;
  tl_var *b;               /* the new block variable (blockIdx.x) */
  tl_var *bx, *by, *bz;    /* the kernel's old block variables, now LETs of the consumers' tile (bz: 3-D grids) */
  tl_var *bxp, *byp, *bzp; /* the producer's copies */
  tl_var *j, *jp;          /* tile-iteration loop variables (consumers, producer) */
  tl_expr *gx, *gy, *gz, *blocks, *count; /* gz: NULL for a 2-D grid */
  /* attention (tl.attention_persistent): the k-loop's extent may depend on
   * the tile (causal), so each role counts the k-tiles of its earlier tiles
   * in a local int32 (kb consumers, kbp producer) instead of tiles * n; lpt:
   * the extent mentions the block variables, and tiles go longest first
   * (tile_loop) */
  bool attn, lpt;
  tl_buffer *kb, *kbp;
  /* attention: the LETs before the loop whose values depend on the tile
   * (causal FlashAttention's loop_range): per tile in the consumers' part,
   * copied (lets_p, in pp->subst) into the producer's */
  const tl_stmt *lets[WS_MAX_LETS];
  tl_var *lets_p[WS_MAX_LETS];
  int nlets;
  const tl_stmt *swz; /* the kernel's T.use_swizzle, or NULL */
  tl_map subst;       /* bx -> bxp, by -> byp for the producer's copies */
  tl_sk sk;           /* stream-K (lib/Lower/Hopper/stream_k.c) when sk.on */
  char sk_why[256];   /* the remark's reason for stream-K or not */
} ws_persist;

/* Can kernel k of plan p run persistently?  Sets up pp when it can (false
 * also with pp->on false); b->oom on OOM (ws_persist.c). */
bool ws_persist_plan(ws_build *b, const tl_primfunc *f, const tl_target *target, const ws_plan *p, ws_persist *pp);
/* for j in T.serial(count): <x, y (, z) = tile j's block indices>; body
 * (stream-K's segment loop when sr); NULL on OOM or a bad T.use_swizzle. */
tl_stmt *ws_tile_loop(ws_build *b, ws_persist *pp, tl_var *j, tl_var *x, tl_var *y, tl_var *z, tl_stmt *body,
                      tl_diag *d, const tl_sk_role *sr);
/* kv -> kp and, on a persistent grid, the block indices -> the producer's
 * copies (bxp, byp, bzp), added to subst; false on OOM. */
bool ws_producer_subst(ws_build *b, tl_var *kv, tl_var *kp, const ws_persist *pp, tl_map *subst);
/* Stream-K: loop's bounds become the segment's k-tiles [lo + ka, lo + kb). */
bool ws_sk_bounds(ws_build *b, tl_stmt *loop, tl_expr *lo, const tl_sk_role *sr);
/* `r = var - lo` (+ tiles * n, + base) as a LET; *rel is r's expression. */
tl_stmt *ws_let_rel(ws_build *b, tl_var *var, tl_expr *lo, tl_expr *tiles, tl_expr *n, tl_expr *base, tl_expr **rel);
/* Persistent attention's k-tile counters: kb[0] as an expression;
 * `kb[0] = kb[0] + n`; `alloc kb (one local int32); kb[0] = 0` pushed to v. */
tl_expr *ws_kb_load(ws_build *b, tl_buffer *kb);
tl_stmt *ws_kb_add(ws_build *b, tl_buffer *kb, tl_expr *n);
tl_buffer *ws_kb_new(ws_build *b, const char *name, stmt_vec *v);
/* The attention form's default schedule: whether the grid stays
 * persistent; sets p->overlap (ws_persist.c states the rule). */
bool ws_auto_schedule(ws_plan *p, const ws_persist *pp, bool persistent, const tl_target *target);

/* ws_load.c: a T.copy(global -> shared tile) the TMA can issue: sets *ld; else a reason. */
const char *tl_ws_match_load(const tl_primfunc *f, const tl_stmt *s, ws_load *ld);
/* The warpgroup split of a wgmma accumulator of BM x BN over `threads` (threads / 128 warpgroups; the
 * partition layout_infer.c gives it): M in 64-row blocks (several a warpgroup when there are more blocks
 * than warpgroups), then N.  Returns TL_WG_SPLIT_OK and *WN (each warpgroup's columns), or which rule
 * fails: block_M not 64-row blocks that split evenly, more than 192 accumulator registers a thread (ptxas
 * spills and it runs slower than mma.sync: docs/performance.md, "Measurements behind choices"), or a column
 * split that is not a multiple of 8.  The warp-specialized path and gemm-wgmma each name the rule. */
typedef enum { TL_WG_SPLIT_OK, TL_WG_SPLIT_M, TL_WG_SPLIT_REGS, TL_WG_SPLIT_N } tl_wg_split;
tl_wg_split tl_wgmma_split(int64_t BM, int64_t BN, int64_t threads, int64_t *WN);

/* ws_lets.c: a reason when a tile copy of p's loop uses a loop-body LET
 * the producer may not evaluate (NULL: none); and each LET it may, added to
 * subst with its value through rw (the loop variable already mapped). */
const char *tl_ws_check_load_lets(const ws_plan *p);
bool tl_ws_producer_lets(const ws_plan *p, tl_rewriter *rw, tl_map *subst);

/* ws_threads.c: the one rule of warp_specialize.c's attention form and gemm_wgmma.c's rs-form T.gemm
 * for running a kernel on more threads than it asks for: block_M / 64 warpgroups when that is more than
 * `threads`, at most 256 threads (two m64 blocks of row statistics) and at most max_threads, and only
 * when nothing in the kernel body can tell how many threads run it (every statement block-level: tile
 * ops, stores inside T.Parallel, block-uniform control; no thread index, no call with a per-thread
 * effect, no local buffers, no fragment element read outside a T.Parallel); 0 otherwise. */
int64_t tl_ws_wider_threads(int64_t block_M, int64_t threads, int64_t max_threads, const tl_stmt *kernel_body);

/* ws_finish.c (tl_ws_finish's walks): T.sync_threads() statements inside s
 * become T.ptx_bar_sync(1, T), the consumers' named barrier; ping-pong
 * (pp_turn in warp_specialize.c, whose first named barrier is WS_PP_BAR):
 * each hand-over after a lowered wgmma T.gemm moves in front of its
 * completion wait.  False on OOM. */
#define WS_PP_BAR 2
bool ws_consumer_syncs(tl_module *m, tl_stmt *s, int64_t T, int depth);
bool ws_pp_hoist(tl_module *m, tl_stmt *s, int depth);

/* ws_cond.c: the conditional GEMM loop (`if COND:` around the copies and
 * the T.gemm).  The `if` that is all of loop body lb, or NULL; NULL when
 * both roles may evaluate cond, else why not (naming what it reads, in
 * why); cond on the producer (kv as kp, the producer's block indices);
 * `r = cnt[0]` as a LET (*rel: r); `if cond: body; cnt[0] += 1`. */
const tl_stmt *ws_cond_if(const tl_stmt *lb);
const char *ws_check_cond(const tl_primfunc *f, const ws_plan *p, const tl_expr *cond, char *why, size_t n);
tl_expr *ws_cond_producer(ws_build *b, const tl_expr *cond, tl_var *kv, tl_var *kp, const ws_persist *pp);
tl_stmt *ws_let_count(ws_build *b, tl_buffer *cnt, tl_expr **rel);
tl_stmt *ws_cond_iter(ws_build *b, tl_expr *cond, tl_buffer *cnt, stmt_vec *body);

#endif
