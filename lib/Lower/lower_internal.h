/* Internal interface of lib/Lower: the entry points of the passes that
 * tl_lower_module (pipeline.c) runs in order, and the small analyses and
 * expression builders they share (util.c).  The fragment layouts that layout
 * inference attaches to tl_buffer.layout are frag_layout.h's. */
#ifndef TL_LOWER_INTERNAL_H
#define TL_LOWER_INTERNAL_H

#include "IR/tir.h"
#include "Lower/frag_layout.h"
#include "Lower/lower.h"
#include "Support/mma.h"

/* Nesting limit for the recursive walks of lib/Lower (statements and
 * expressions); deeper input is an error, never a stack overflow. */
#define TL_LOWER_MAX_DEPTH 400

/* ----------------------------------------------------------------- passes */
/* Every pass has one signature: it rewrites f (m's arena grows) for target
 * (never NULL; lib/Support/target.h), reads TileLang's pass configs from
 * f->pass_configs, reports errors to d and returns false after one. */
/* check_supported.c: rejects ops that no issue has lowered yet. */
bool tl_lower_check_supported(tl_module *m, tl_primfunc *f, const tl_target *target, tl_diag *d);
/* static_check.c (called by check-supported): per-dimension bounds of constant and affine indices, reads
 * of fragment / shared buffers nothing writes (warnings), T.Parallel in per-thread code; false after an
 * error (warnings do not fail). */
bool tl_lower_static_check(const tl_primfunc *f, tl_diag *d);
/* uniform.c (called by check-supported): the condition of every `while` loop whose body holds tile ops,
 * barriers or shared accesses reads only values that are the same in every thread of the block; false after
 * one located error per loop that breaks it. */
bool tl_lower_check_while_uniform(const tl_primfunc *f, tl_diag *d);
/* uniform.c: the local buffers (T.alloc_local / T.alloc_var) of a tile-IR or SIMT-IR body that every thread holds
 * alike: each write stores a uniform value at uniform indices under uniform control (the while check's
 * fixed point).  tl_uniformity_new: NULL on out of memory; the caller frees it with tl_uniformity_free. */
/* uniform.c (called by static_check.c for a kernel body that reads the thread index): every T.Parallel loop
 * is reached by every thread alike and its iterations read no per-thread value (the thread index, a variable
 * or local buffer computed from it, a fragment element) nor write a local or fragment buffer; else one located
 * error per loop. */
bool tl_lower_check_parallel_per_thread(const tl_stmt *kernel_body, tl_loc tid_at, tl_diag *d);
typedef struct tl_uniformity tl_uniformity;
tl_uniformity *tl_uniformity_new(const tl_stmt *body);
bool tl_uniformity_local(const tl_uniformity *u, const tl_buffer *b);
/* Does expression e (of the body given to tl_uniformity_new) have the same value in every thread of the block
 * wherever it is evaluated under uniform control?  False for NULL u or e. */
bool tl_uniformity_expr(const tl_uniformity *u, const tl_expr *e);
void tl_uniformity_free(tl_uniformity *u);
/* split_kernels.c: a prim_func with several T.Kernel scopes → one prim_func
 * per scope (its stages, inserted after it in m->funcs). */
bool tl_lower_split_kernels(tl_module *m, tl_primfunc *f, const tl_target *target, tl_diag *d);
/* split_grid.c (split-kernels' first step): a T.Kernel with T.sync_grid() at
 * the top level of its body → one T.Kernel per side of its barriers. */
bool tl_lower_split_sync_grid(tl_module *m, tl_primfunc *f, tl_diag *d);
/* layout_infer.c: attaches a tl_frag_layout to every fragment buffer. */
bool tl_lower_infer_layouts(tl_module *m, tl_primfunc *f, const tl_target *target, tl_diag *d);
/* parallel_extend.c: a T.Parallel loop covering only part of a fragment that
 * another op distributes runs over the fragment's shape with its body under
 * `var < extent` predicates (layout inference's first step); false on OOM. */
bool tl_lower_extend_short_parallel(tl_module *m, tl_primfunc *f);
/* lower_tile.c: tile ops and T.Parallel → per-thread SIMT statements. */
bool tl_lower_tile_ops(tl_module *m, tl_primfunc *f, const tl_target *target, tl_diag *d);

/* lower_atomic.c: T.atomic_add → T.Parallel loops of T.ptx_atomic_add (tile
 * IR → tile IR, before layout inference), and the pairing of 16-bit float
 * atomics into f16x2 / bf16x2 vector atomics where target allows (SIMT IR,
 * after lower-tile-ops). */
bool tl_lower_atomic(tl_module *m, tl_primfunc *f, const tl_target *target, tl_diag *d);
bool tl_lower_atomic_vectorize(tl_module *m, tl_primfunc *f, const tl_target *target, tl_diag *d);

/* ------------------------------------------------------ shared utilities */
/* Names used in a function (for fresh names that never shadow). */
typedef struct tl_names {
  tl_map set;
  tl_module *m;
  int counter;
} tl_names;
bool tl_names_collect(tl_names *n, tl_module *m, const tl_primfunc *f);
void tl_names_free(tl_names *n);
/* A new variable named base (or base_K when taken). NULL on OOM. */
tl_var *tl_names_fresh_var(tl_names *n, tl_loc loc, const char *base, tl_dtype t, tl_var_kind kind);

/* Integer intervals for guard elision: var → [lo, hi]. */
typedef struct tl_range {
  int64_t lo, hi;
} tl_range;
typedef struct tl_ranges {
  tl_map map;
  tl_arena *arena;
  int64_t threads;
} tl_ranges;
void tl_ranges_init(tl_ranges *r, tl_arena *arena);
void tl_ranges_free(tl_ranges *r);
bool tl_ranges_set(tl_ranges *r, const tl_var *v, int64_t lo, int64_t hi);
void tl_ranges_unset(tl_ranges *r, const tl_var *v);
/* Bounds of integer expression e; false when unknown. */
bool tl_expr_range(const tl_ranges *r, const tl_expr *e, tl_range *out);

/* What a tile-op lowering walk over a function carries (lower_tile.c,
 * lower_atomic.c): the module, where errors go and how many were reported,
 * an allocation failure, the function's names (for fresh ones) and the
 * ranges of the variables in scope. */
typedef struct tl_lower_walk {
  tl_module *m;
  tl_diag *d;
  int errors; /* errors reported */
  bool oom;   /* an allocation failed (not reported yet) */
  tl_names names;
  tl_ranges ranges;
} tl_lower_walk;
/* Starts a walk over f: f's names collected, the ranges holding f's dynamic
 * dims (each in [0, INT32_MAX]).  Sets w->oom when an allocation fails;
 * tl_lower_walk_end frees w either way. */
void tl_lower_walk_begin(tl_lower_walk *w, tl_module *m, tl_diag *d, const tl_primfunc *f);
void tl_lower_walk_end(tl_lower_walk *w);

/* True when e is provably a multiple of k (k > 0).  Variables are multiples
 * only of 1, except `lane`, which counts as 0 (its contribution is analysed
 * separately by tl_expr_lane_coef). */
bool tl_expr_divisible(const tl_expr *e, int64_t k, const tl_var *lane);
/* True when the indices idx[0..n) of b are exactly the variables of the
 * T.Parallel loop, in order, over a fragment of the loop's shape (mins 0). */
bool tl_lo_identity_access(const tl_stmt *loop, const tl_buffer *b, int n, tl_expr **idx);
/* Is b[idx] a stacked access in T.Parallel `loop` (docs/layouts.md "Stacked
 * fragments"): b has more dims than the loop has variables, its trailing
 * indices are the loop variables in order over its trailing shape (loop
 * starts 0), and its leading indices mention no loop variable (lse[k, j]
 * in a loop over j)? */
bool tl_lo_stacked_access(const tl_stmt *loop, const tl_buffer *b, int n, tl_expr **idx);
/* Is b[idx] a stacked access along a split dim (docs/layouts.md "Stacked
 * fragments"): b has the loop's rank, every index is the loop variable of
 * its dim over b's extent (loop starts 0) except in one dim d, whose index
 * is off + v_d with off a multiple of v_d's extent S free of the loop
 * variables and b's extent a multiple of S (x[i, jj*4 + j] in a loop over
 * (i, j) of extents (R, 4))?  Sets *d and *off (NULL: not wanted). */
bool tl_lo_split_access(const tl_stmt *loop, const tl_buffer *b, int n, tl_expr **idx, int *d, tl_expr **off);
/* True when e does not mention variable v. */
bool tl_expr_free_of(const tl_expr *e, const tl_var *v);
/* e = c * lane + (terms free of lane)?  Sets *coef; false when not affine. */
bool tl_expr_lane_coef(const tl_expr *e, const tl_var *lane, int64_t *coef);
/* Can the access b[idx] (idx mentioning lane variable l) be issued as one
 * vector of w lanes at l = 0, w, 2w, ...?  (Indices before the last free of
 * l, the last l + a multiple of w, or free of l for loads; w * element
 * bytes <= 16; rows keep the alignment.) */
bool tl_lo_access_vec_ok(const tl_buffer *b, int n, tl_expr *const *idx, const tl_var *l, int64_t w, bool is_store);
/* cond AND the in-bounds condition of the access b[ix] (n indices): ix[k]
 * >= 0 and ix[k] < b->shape[k], the last index plus span - 1 for a vector
 * of span elements (span 1: a scalar); a part the ranges r prove is
 * dropped.  NULL on OOM. */
tl_expr *tl_lo_bounds_cond(tl_module *m, tl_loc loc, const tl_ranges *r, const tl_buffer *b, int n, tl_expr *const *ix,
                           int64_t span, tl_expr *cond);
/* The largest power-of-two w dividing v such that `body`, a single store,
 * can run as T.vectorized(w) over lane l (1 when none). */
int64_t tl_lo_body_vec_width(const tl_stmt *body, const tl_var *l, int64_t v);

/* How often statement tree s reads and writes buffer b: loads read, stores
 * write; a tile op's region operand reads or writes as the op table says
 * (tl_tile_op_info.written; an op that writes none, such as
 * T.annotate_layout or T.use_swizzle, counts as a write, and
 * T.annotate_layout's operand as a write too); a buffer passed whole to an
 * intrinsic counts as both.  (Pipelining and warp specialization decide from
 * it which shared buffers only their copies write.) */
typedef struct tl_lo_refs {
  int reads, writes;
} tl_lo_refs;
/* Is region r all of its buffer: no dims given, or mins 0 and extents equal
 * to the buffer's static shape? */
bool tl_lo_whole_region(const tl_region *r);
/* Whether a call of intrinsic op (a tl_intrin) occurs below s. */
bool tl_lo_has_call(const tl_stmt *s, int op);
/* The first `while` loop below s (s included, pre-order), or NULL; with pipelined non-NULL, also the first
 * T.Pipelined loop inside that while loop (NULL when none). */
tl_stmt *tl_lo_find_while(tl_stmt *s, tl_stmt **pipelined);
/* Is b one of f's tensor parameters? */
bool tl_lo_is_param(const tl_primfunc *f, const tl_buffer *b);
tl_lo_refs tl_lo_count_refs(const tl_stmt *s, const tl_buffer *b);

/* A statement emitter for the warp-level lowerings that build a sequence
 * of SIMT statements (lower_gemm.c, lower_frag.c).  Functions taking it
 * return NULL (and set failed) on OOM; every expression argument may be
 * NULL (an earlier OOM), which propagates. */
typedef struct tl_emitter {
  tl_module *m;
  tl_diag *d;
  tl_names *names;       /* fresh names */
  tl_loc loc;            /* of every emitted node */
  bool failed;           /* an allocation failed */
  TL_VEC(tl_stmt *) out; /* the statements emitted so far */
} tl_emitter;
/* Appends s to e->out. */
void tl_emit_push(tl_emitter *e, tl_stmt *s);
/* An int32 constant. */
tl_expr *tl_emit_int(tl_emitter *e, int64_t v);
/* Emits `name = value` (a fresh int32 LET) and returns the variable; a
 * constant value is returned as it is. */
tl_expr *tl_emit_let(tl_emitter *e, const char *name, tl_expr *value);
/* Emits the allocation of a fresh per-thread local buffer of n elements. */
tl_buffer *tl_emit_local(tl_emitter *e, const char *base, tl_dtype t, int64_t n);
/* An evaluation statement of intrinsic `intrin` (not emitted). */
tl_stmt *tl_emit_call(tl_emitter *e, tl_intrin op, int n, tl_expr **args);
/* for v in <kind>(n): body (not emitted). */
tl_stmt *tl_emit_for(tl_emitter *e, tl_var *v, int64_t n, tl_loop_kind kind, tl_stmt *body);
/* Emits `for r in T.unroll(n): b[r] = 0` (a register fragment's clear). */
void tl_emit_zero_fill(tl_emitter *e, tl_buffer *b, int64_t n);

/* The nesting guard of the passes' statement walks: true when a statement
 * at depth (0 at the function body) may be walked.  Deeper than
 * TL_LOWER_MAX_DEPTH: counts one more error in *errors, reports "statement
 * nesting exceeds N levels" at s when report is set, and returns false. */
bool tl_lo_nesting_ok(tl_diag *d, const tl_stmt *s, int depth, int *errors, bool report);

/* Replaces loops in s, pre-order: every FOR is first offered to
 * rewrite(user, loop); a non-NULL result replaces it (and is not walked
 * further), otherwise the loop's body is walked.  SEQ, KERNEL and IF are
 * walked through; s is changed in place and returned.  Deeper than
 * TL_LOWER_MAX_DEPTH is left alone. */
tl_stmt *tl_lo_rewrite_loops(tl_stmt *s, tl_stmt *(*rewrite)(void *user, tl_stmt *loop), void *user);

/* Builders (int32 index math); NULL on OOM. */
tl_expr *tl_lo_int(tl_module *m, tl_loc loc, int64_t v);
tl_expr *tl_lo_add(tl_module *m, tl_loc loc, tl_expr *a, tl_expr *b);
tl_expr *tl_lo_mul(tl_module *m, tl_loc loc, tl_expr *a, int64_t k);
/* floordiv / floormod by a positive constant, simplified exactly. */
tl_expr *tl_lo_fdiv(tl_module *m, tl_loc loc, tl_expr *a, int64_t c, const tl_ranges *r);
tl_expr *tl_lo_fmod(tl_module *m, tl_loc loc, tl_expr *a, int64_t c, const tl_ranges *r);
tl_expr *tl_lo_thread_index(tl_module *m, tl_loc loc); /* T.get_thread_binding(0) */
tl_expr *tl_lo_ramp(tl_module *m, tl_loc loc, tl_expr *base, int lanes);
tl_expr *tl_lo_broadcast(tl_module *m, tl_loc loc, tl_expr *value, int lanes);
/* The value cast to t (keeping lanes of t); vector casts are built directly. */
tl_expr *tl_lo_cast(tl_module *m, tl_loc loc, tl_dtype t, tl_expr *x);
/* A store statement. */
tl_stmt *tl_lo_store(tl_module *m, tl_loc loc, tl_buffer *b, int n, tl_expr **idx, tl_expr *value);
/* dst[off : off + 2] = 2-lane cast to `to` of frag[reg : reg + 2]: two
 * adjacent registers of the 1-D buffer frag stored as one 2-lane vector at
 * flat element offset off of the 1-D buffer dst, converted to scalar dtype
 * `to` on the way (the epilogues' register pairs).  NULL on OOM (or a NULL
 * off / reg). */
tl_stmt *tl_lo_store_pair(tl_module *m, tl_loc loc, tl_buffer *dst, tl_expr *off, tl_buffer *frag, tl_expr *reg,
                          tl_dtype to);
tl_stmt *tl_lo_if(tl_module *m, tl_loc loc, tl_expr *cond, tl_stmt *then_s, tl_stmt *else_s);
/* An evaluate statement of value (a call); NULL when value is NULL or on OOM. */
tl_stmt *tl_lo_eval(tl_module *m, tl_loc loc, tl_expr *value);
/* "let v = value" (the body is what follows it in its sequence); NULL when
 * value is NULL or on OOM. */
tl_stmt *tl_lo_let(tl_module *m, tl_loc loc, tl_var *v, tl_expr *value);
/* T.sync_threads() as a statement; NULL on OOM. */
tl_stmt *tl_lo_sync_threads(tl_module *m, tl_loc loc);
tl_stmt *tl_lo_for(tl_module *m, tl_loc loc, tl_loop_kind kind, tl_var *v, tl_expr *extent, tl_stmt *body);

/* ------------------------------------------------- the TMA-store epilogue */
/* T.copy(frag, C[m0 .. m0+BM, n0 .. n0+BN)) of a warp-specialized kernel
 * through a 128-byte-swizzled shared image and TMA tensor stores
 * (lower_epilogue.c states the form and what it requires): frag is the
 * [BM, BN] accumulator of layout L (MMA_C), C a 2-D 16-bit tensor
 * parameter, m0 / n0 the tile's origin, threads the consumer threads.
 * The caller checked BN % 64 == 0, BM <= 256 and that BM*BN elements of
 * shared memory are free.  fault: TL_TEST_FAULT=swap_lanes's wrong lowering
 * (lanes 0 and 1 trade elements; lower_tile.c).  NULL on OOM (or a layout
 * other than MMA_C). */
tl_stmt *tl_lower_tma_epilogue(tl_module *m, tl_names *names, tl_loc loc, tl_buffer *frag, const tl_frag_layout *L,
                               tl_buffer *C, tl_expr *m0, tl_expr *n0, int64_t threads, bool fault);

/* -------------------------------------------------------------- T.gemm */
/* Lowers one T.gemm statement (layouts inferred) to per-warp ldmatrix +
 * mma.sync; names gives fresh names, threads the block's threads.
 * compact_addresses: write the ldmatrix offsets as a few per-thread values
 * plus constants (tl_smem_offset_unrolled) -- fewer registers, a little
 * more address arithmetic per k-step; for kernels whose fragments already
 * fill most of the register file (tl_lower_frag_pressure).  Errors are
 * reported to d; NULL on error. */
tl_stmt *tl_lower_gemm(tl_module *m, const tl_stmt *s, tl_names *names, int64_t threads, bool compact_addresses,
                       tl_diag *d);
/* Does T.gemm s run as wgmma?  B (and A, unless A is a fragment: the rs
 * form) are shared tiles in the TMA/wgmma image layout that only the warp-specialize pass gives (smem_layout.h
 * tl_smem_layout.wgmma); that pass checked the rest (dtypes, shapes,
 * warpgroups).  Layout inference then gives C the wgmma partition and
 * tl_lower_gemm emits wgmma instead of ldmatrix + mma.sync. */
bool tl_gemm_is_wgmma(const tl_stmt *s);
/* Lowers a T.gemm that runs as wgmma with A in a fragment (the rs form:
 * tl_gemm_is_wgmma with a fragment A, B a TMA/wgmma image; layouts inferred,
 * the warpgroups splitting only M) to T.ptx_wgmma_rs steps (lower_gemm.c).
 * Errors are reported to d; NULL on error. */
tl_stmt *tl_lower_wgmma_rs(tl_module *m, const tl_stmt *s, tl_names *names, tl_diag *d);
/* T.gemm's wg_wait value (attribute 5) that only lib/Lower/Hopper/attention_overlap.c
 * sets (the verifier rejects it in source): the wgmma lowerings then end
 * with the commit, leaving the group in flight for a T.ptx_wgmma_wait that
 * pass placed. */
#define TL_GEMM_WG_WAIT_NONE (-2)
/* True when the fragments allocated so far (frags[0..n)) take more than
 * 160 of a thread's 255 registers (nregs, 16-bit elements two to a
 * register): FlashAttention's accumulators (acc_o, acc_s, P, row statistics)
 * are 244 at 128x64 with 128 threads, a GEMM's 128.  Then every ldmatrix
 * address register counts (ptxas spilled FlashAttention's otherwise), and
 * tl_lower_gemm / tl_lower_gemm_rs use compact addresses.  They are not
 * the default: they slow a large GEMM down, as ptxas then schedules the
 * next k-step's ldmatrix late (docs/performance.md, "Measurements behind
 * choices in the code"). */
bool tl_lower_frag_pressure(tl_buffer *const *frags, size_t n);

struct tl_smem_layout; /* smem_layout.h */
/* The ldmatrix offset in L->flat of this lane's part of B's fragment at
 * k-step kk (of ksteps) and n-tile nj (of nb, nd = 8 or 16 columns each),
 * for a gemm whose B region starts at (stage, row0, col0) and is stored
 * N x K when tb: emits the lane lets b_row, b_col into e (docs/layouts.md "ldmatrix addresses";
 * wn_off = this warp's column offset, warp_n warps of WN columns), then
 * returns tl_smem_offset_unrolled's compact form when compact and it
 * applies, else the plain tl_smem_offset.  Shared by tl_lower_gemm and
 * tl_lower_gemm_rs.  NULL on OOM. */
tl_expr *tl_gemm_b_offset(tl_emitter *e, const struct tl_smem_layout *L, tl_expr *stage, tl_expr *row0, tl_expr *col0,
                          bool tb, int64_t nd, tl_expr *lane, tl_expr *wn_off, int64_t warp_n, int64_t WN, tl_var *kk,
                          int64_t ksteps, tl_var *nj, int64_t nb, bool compact);

/* lower_gemm_types.c: T.gemm (ss form) on mma.sync for float32/tfloat32
 * (as tf32), int8/uint8 and float64 operands, fragments loaded with plain
 * shared loads.  A shared operand: its buffer, layout and the region's
 * (stage, row, col) origin. */
typedef struct tl_gemm_smem_operand {
  tl_buffer *buf;
  struct tl_smem_layout *L;
  tl_expr *stage, *row0, *col0;
} tl_gemm_smem_operand;
/* Emits into g the lowering of C (+)= op(A) * op(B) with instruction mi
 * (mi->kind TF32, I8 or F64; K a multiple of mi->k; C's layout CL the
 * MMA_C one) and returns the sequence of g's statements; NULL on OOM
 * (g->failed). */
/* Loads the lane's A (is_a) or B fragment elements of m16 / n8 tile `tile`
 * (a T.unroll variable) at k offset kbase into regs[tile * n + e]: element
 * e's (row-or-n, k) from mi's maps (tl_mma_a_elem / tl_mma_b_elem) at the
 * operand's (row, col), swapped when k_rows (lower_gemm_types.c). */
tl_stmt *tl_gemm_load_frag(tl_emitter *g, const tl_gemm_smem_operand *o, bool k_rows, bool is_a, const tl_mma_info *mi,
                           tl_buffer *regs, int n, tl_var *tile, tl_expr *mn_base, tl_expr *kbase, tl_expr *lane_g,
                           tl_expr *lane_t);
/* lower_gemm_sp.c: T.gemm_sp (A_sparse, E, B shared; C a fragment with the
 * MMA_C layout) to plain shared loads + T.ptx_mma_sp per m16n8k32 step;
 * NULL after a located error. */
tl_stmt *tl_lower_gemm_sp(tl_module *m, const tl_stmt *s, tl_names *names, int64_t threads, tl_diag *d);
/* The lets of an mma.sync warp tiling over warps_m warps along M, emitted
 * into g in this order: lane = tid % 32, warp_m = (tid / 32) % warps_m,
 * warp_n = tid / (32 warps_m), lane_g = lane / 4, lane_t = lane % 4 (the
 * fragment maps' group and thread-in-group, PTX ISA "Matrix Fragments for
 * mma.m16n8k16"); g->failed on OOM (lower_gemm_types.c). */
typedef struct tl_mma_lanes {
  tl_expr *warp_m, *warp_n, *lane_g, *lane_t;
} tl_mma_lanes;
tl_mma_lanes tl_emit_mma_lanes(tl_emitter *g, int64_t warps_m);
tl_stmt *tl_lower_gemm_types(tl_emitter *g, const tl_mma_info *mi, const tl_gemm_smem_operand *A,
                             const tl_gemm_smem_operand *B, tl_buffer *C, const tl_frag_layout *CL, bool ta, bool tb,
                             bool clear, int64_t K);

/* lower_frag.c: T.gemm with A in a fragment (the "rs" form, FlashAttention's
 * P·V). */
/* Lowers one rs-form T.gemm (A fragment, B shared, C fragment, layouts
 * inferred) to per-warp ldmatrix of B + mma.sync with A read from the
 * fragment's registers.  Errors are reported to d; NULL on error. */
tl_stmt *tl_lower_gemm_rs(tl_module *m, const tl_stmt *s, tl_names *names, int64_t threads, bool compact_addresses,
                          tl_diag *d);
/* T.copy between two fragments whose layouts differ (two T.gemm accumulators
 * of one shape split over different warp partitions; layout_infer.c keeps
 * them apart): every thread stores its source registers (cast to the
 * destination dtype) into a row-major shared.dyn scratch tile, a barrier,
 * then loads its destination registers; a barrier first, as the copy may
 * run in a loop.  Errors are reported to d; NULL on error. */
tl_stmt *tl_lower_frag_relayout(tl_module *m, tl_loc loc, tl_names *names, tl_buffer *src, tl_buffer *dst, tl_diag *d);

/* ------------------------------------ pipelining, shared copies, barriers */
/* warp_specialize.c: on targets with wgmma and TMA, the GEMM main loop →
 * producer warpgroup + mbarrier ring + TMA loads + wgmma (tile IR → tile IR,
 * before pipelining; the file's head comment has the contract). */
bool tl_lower_warp_specialize(tl_module *m, tl_primfunc *f, const tl_target *target, tl_diag *d);
/* Hopper/gemm_wgmma.c: on targets with wgmma, the T.gemm of a kernel that
 * warp-specialize left alone → wgmma (their shared tiles get the wgmma image
 * layout; tile IR → tile IR; the file's head comment has the contract).
 * tl_gemm_wgmma_refusal: NULL when the pass would take f's gemms (it has
 * some, and all qualify), else why not: "" when the target, a pass config or
 * the kernel's form (no T.gemm, role scopes, ...) rules it out, else the
 * T.gemm condition that fails.  tl_gemm_wgmma_marked: did the pass take
 * them (proxy-fence runs then)? */
bool tl_lower_gemm_wgmma(tl_module *m, tl_primfunc *f, const tl_target *target, tl_diag *d);
const char *tl_gemm_wgmma_refusal(const tl_primfunc *f, const tl_target *target);
/* The remark of a T.Pipelined loop at loc that warp-specialize refused for
 * reason why: the cp.async + wgmma path when the pass takes f's gemms, else
 * cp.async + mma.sync (with the T.gemm condition that fails, if one). */
void tl_gemm_wgmma_remark(tl_diag *d, tl_loc loc, const tl_primfunc *f, const tl_target *target, const char *why);
bool tl_gemm_wgmma_marked(const tl_primfunc *f);
/* Hopper/proxy_fence.c: fence.proxy.async between the generic-proxy writes
 * of a wgmma operand and the barrier (or wgmma) after them, in functions
 * gemm-wgmma marked (SIMT IR → SIMT IR). */
bool tl_lower_proxy_fence(tl_module *m, tl_primfunc *f, const tl_target *target, tl_diag *d);
/* pack_int4.c: int4/uint4 tiles -> their packed int8/uint8 storage. */
bool tl_lower_pack_int4(tl_module *m, tl_primfunc *f, const tl_target *target, tl_diag *d);
/* ws_scope.c: explicit warp specialisation (T.ws role scopes, T.alloc_barrier
 * barriers).  The tile pass "ws-scopes", and its finish, called by
 * lower-tile-ops at its end: the scopes become thread-range tests, the
 * barrier statements mbarrier intrinsics (see the file's head comment). */
bool tl_lower_ws_scopes(tl_module *m, tl_primfunc *f, const tl_target *target, tl_diag *d);
bool tl_ws_scopes_finish(tl_module *m, tl_primfunc *f);
/* The threads hi - lo of s when it is a thread-range scope
 * `if T.thread_range(lo, hi):` with constant bounds (whose tile ops layout
 * inference and lower-tile-ops partition over those threads, the thread
 * index counted from lo); else 0. */
int64_t tl_lo_range_scope_threads(const tl_stmt *s);
/* The end of a warp-specialized kernel's tile lowering (lower-tile-ops):
 * the T.sync_threads() that the tile lowering put in the consumer branch
 * become T.ptx_bar_sync(1, threads) (the producer never reaches them), and
 * the kernel's threads gain the producer threads (then 0).  Nothing for
 * other kernels; false on OOM. */
bool tl_ws_finish(tl_module *m, tl_primfunc *f);
/* What the warp-specialize pass recorded on f (its function annotation,
 * owned by warp_specialize.c): the threads of the producer warpgroup that
 * the tile passes leave out of the kernel's threads until tl_ws_finish adds
 * them (0: f is not warp-specialized, or no longer waits for them); whether
 * a block of the persistent kernel may run several output tiles (the
 * TMA-store epilogue is taken only then). */
int64_t tl_ws_producer_threads(const tl_primfunc *f);
bool tl_ws_multi_tile(const tl_primfunc *f);
/* pipeline_loop.c: T.Pipelined → prologue + serial loop with staged shared
 * buffers and T.async_copy (tile IR → tile IR). */
bool tl_lower_pipeline(tl_module *m, tl_primfunc *f, const tl_target *target, tl_diag *d);
/* The stage roles of a pipelined serial loop (num_stages s >= 2, made by
 * pipeline_loop.c; lib/IR/tir.h): in the iteration with loop variable k
 * from lo, the consumers read stage (k - lo) % s of the staged buffers and
 * the producer copies issued in it (for iteration k + s - 1) write stage
 * (k - lo + s - 1) % s.  The two differ (s >= 2), which is what lets the
 * barriers pass leave the issue and the reads of one iteration unordered. */
typedef enum tl_pipe_role { TL_PIPE_CONSUMER, TL_PIPE_PRODUCER } tl_pipe_role;
/* The stage index (leading dim of a staged buffer) that role uses in an
 * iteration of the pipelined serial loop `loop`; NULL on OOM or for a loop
 * without stages.  The one definition of the stage expressions. */
tl_expr *tl_lo_pipeline_stage(tl_module *m, const tl_stmt *loop, tl_pipe_role role);
/* pipeline_sched.c: T.Pipelined order=/stage= for pipeline_loop.c (body:
 * the loop body's nb top-level statements; is_prod: which are producer
 * copies).  _candidates: statements at the last stage are not producers.
 * _stages: the stage count d + 1 of the copies that run d iterations ahead
 * (1: none), or -1 after a located error (*errors incremented).  _reorder:
 * items (one per body statement) as a SEQ: LETs and allocations first, then
 * the scheduled ones in the given order, a T.ptx_commit_group() after the
 * last producer (is_prod NULL: none); NULL on OOM. */
void tl_pl_sched_candidates(const tl_stmt *loop, tl_stmt *const *body, int nb, bool *is_prod);
int tl_pl_sched_stages(tl_diag *d, const tl_stmt *loop, tl_stmt *const *body, int nb, const bool *is_prod, int *errors);
tl_stmt *tl_pl_sched_reorder(tl_module *m, const tl_stmt *loop, tl_stmt *const *items, int nb, const bool *is_prod);
/* barrier.c: T.sync_threads() between shared-memory writes and reads of
 * other threads (tile IR → tile IR, after pipelining). */
bool tl_lower_barriers(tl_module *m, tl_primfunc *f, const tl_target *target, tl_diag *d);
/* gemm_stage.c: a T.gemm whose fragment operand mma.sync cannot read from
 * registers (B in a fragment; A in a fragment with warp_n > 1) reads it
 * through a shared.dyn copy instead (pass "gemm-stage"). */
bool tl_lower_gemm_stage(tl_module *m, tl_primfunc *f, const tl_target *target, tl_diag *d);
/* versioning.c: T.Parallel loops storing T.if_then_else(c, a, b) with c affine in
 * the loop variables get a version for blocks where c holds at every iteration. */
bool tl_lower_versioning(tl_module *m, tl_primfunc *f, const tl_target *target, tl_diag *d);
/* frag_pipeline.c: double-buffered ldmatrix fragments across the k-steps
 * of a pipelined T.gemm loop, the barrier moved before the last k-step's
 * mma (SIMT IR → SIMT IR; loops of any other shape are left as they are). */
bool tl_lower_frag_pipeline(tl_module *m, tl_primfunc *f, const tl_target *target, tl_diag *d);
/* rasterize.c: T.use_swizzle → block-index remapping (SIMT IR). */
bool tl_lower_rasterize(tl_module *m, tl_primfunc *f, const tl_target *target, tl_diag *d);
/* The parameters of T.use_swizzle statement u (panel size P >= 1, enable,
 * column order); false after a located error. */
bool tl_raster_params(const tl_stmt *u, int64_t *P, bool *enable, bool *column, tl_diag *d);
/* The rasterization map (rasterize.c's head comment) of the linear block
 * index b of a gx x gy grid: six LET statements (lets[0..5]) binding fresh
 * temporaries and finally out_x, out_y to the block's remapped (x, y).
 * False on OOM. */
bool tl_raster_lets(tl_module *m, tl_names *names, tl_loc loc, tl_expr *b, tl_expr *gx, tl_expr *gy, int64_t P,
                    bool column, tl_var *out_x, tl_var *out_y, tl_stmt **lets);
/* smem_plan.c: offsets of shared.dyn buffers in the dynamic block, reuse of
 * space between buffers whose lifetimes do not overlap, f->smem_bytes;
 * target->max_smem_per_block is the limit. */
bool tl_lower_smem_plan(tl_module *m, tl_primfunc *f, const tl_target *target, tl_diag *d);
/* smem_renew.c (tile IR, called by lower-tile-ops on its input): sets
 * tl_buffer.smem_renewed_in of f's shared buffers. */
void tl_smem_mark_renewed(tl_primfunc *f);
/* budget.c: compile budgets, checked by tl_lower_module before LLVM runs.
 * tl_lower_check_registers (tile IR, fragment layouts inferred): the
 * per-thread register estimate of each kernel's fragment / local buffers, a
 * warning above TL_BUDGET_REGS_WARN, an error above TL_BUDGET_REGS_MAX.
 * tl_lower_check_unrolled (SIMT IR): the statement count of each kernel body
 * with its unrolled loops fully unrolled, an error above
 * TL_BUDGET_UNROLLED_MAX.  Located diagnostics naming the buffers / the
 * loop; false after an error. */
#define TL_BUDGET_REGS_WARN 510 /* twice ptxas's 255: the estimate has no liveness */
#define TL_BUDGET_REGS_MAX 4096
#define TL_BUDGET_UNROLLED_MAX 16384
bool tl_lower_check_registers(const tl_module *m, tl_diag *d);
bool tl_lower_check_unrolled(const tl_module *m, tl_diag *d);

/* lower_shared_copy.c: what lower_tile.c hands to the shared-copy lowering. */
typedef struct tl_lower_env {
  tl_module *m;
  tl_diag *d;
  tl_names *names;
  tl_ranges *ranges; /* block/loop variable ranges at the statement */
  int64_t threads;   /* the block's threads */
  int errors;        /* incremented per reported error */
} tl_lower_env;
/* Lowers T.copy / T.async_copy s whose two operands are global or shared
 * buffers, at least one shared (global → shared, shared → global, shared →
 * shared).  src_min / dst_min: the region starts (one per region dim, the
 * whole buffer when the region has ndim 0), already rewritten by the caller.
 * NULL on error (reported) or OOM (env->errors unchanged). */
tl_stmt *tl_lower_shared_copy(tl_lower_env *env, const tl_stmt *s, tl_expr **src_min, tl_expr **dst_min);
/* The flat element offset in tl_smem_layout_get(m, b)->flat of element idx
 * (b->ndim logical indices) of shared buffer b; NULL on OOM / unsupported. */
tl_expr *tl_lower_smem_index(tl_module *m, tl_loc loc, tl_buffer *b, int n, tl_expr **idx);
/* Can the w consecutive elements of shared buffer b starting at logical
 * index idx (last index affine in lane with coefficient 1, a proven multiple
 * of w at lane 0) be accessed as one aligned vector of the flat buffer? */
bool tl_lower_smem_vec_ok(tl_module *m, tl_buffer *b, int n, tl_expr *const *idx, const tl_var *lane, int64_t w);

/* ---------------------------------------------------------- T.reduce_* */
/* lower_reduce.c: lowers one T.reduce_{max,min,sum,abssum,absmax} (layouts
 * inferred) to per-thread partials over the source elements each thread
 * holds, T.shfl_xor butterflies over the lanes that share a row, and a
 * shared.dyn scratch buffer (allocated in the returned statement, so that
 * smem_plan.c places it) with T.sync_threads() across warps; the result is
 * replicated to every thread that holds the row (REDUCER dst), stored once
 * per row (shared dst), or broadcast through shared memory (replicated /
 * local dst).  clear=False combines with dst.  NULL on error (reported to
 * env->d, env->errors incremented) or OOM (env->errors unchanged). */
tl_stmt *tl_lower_reduce(tl_lower_env *env, const tl_stmt *s);
/* A reduce along a dim other than the last (the split-KV combine's dim 0)
 * whose source is a distributed fragment (layout inference gave a 1-D
 * destination the REDUCER layout of a virtual ROWS partition of the
 * source's rows), or whose destination is a distributed fragment without
 * that layout (a multi-dim destination), goes through shared memory: such an
 * operand is replaced by a shared.dyn scratch tile of its region's shape
 * (alloc[0] source, alloc[1] destination: their ALLOCs), filled by the
 * tile-level T.copy copy_in[0] (the source) and copy_in[1] (the destination,
 * clear=False only); copy_out copies the destination scratch back.  red is
 * the reduce on the replaced operands (for tl_lower_reduce).  NULL members:
 * not needed.  lower_tile.c lowers the copies and allocations and puts
 * T.sync_threads() between the steps.  Returns false, with red NULL, when
 * s needs no staging, or on OOM. */
typedef struct tl_reduce_stage {
  tl_stmt *alloc[2], *copy_in[2], *red, *copy_out;
} tl_reduce_stage;
bool tl_reduce_staging(tl_lower_env *env, const tl_stmt *s, tl_reduce_stage *st);
/* T.finalize_reducer(R) → per-thread SIMT code (lower_reduce.c): the
 * replicas of every element of the reducer R (its op: sum, max, min) are
 * combined, the result left in every replica.  R's layout decides the
 * replicas: a REDUCER layout (row statistics of a ROWS or MMA_C fragment,
 * which a T.Parallel that accumulates R[i] from a 2-D fragment gives it) is
 * replicated over the threads holding parts of row i, combined as a reduce
 * combines them (butterflies, then across warps through shared memory); a
 * PLAN, ROWS or MMA_C layout has one holder per element (nothing to do).
 * NULL with an error in env (a layout not lowered yet) or on OOM. */
tl_stmt *tl_lower_finalize_reducer(tl_lower_env *env, const tl_stmt *s);
/* T.thread_allreduce(dst, value, op, stride, count) (tir.h) → per-thread
 * SIMT code (lower_reduce.c): xor butterflies when a group of threads lies
 * in one warp, a shared scratch slot per thread otherwise.  NULL with an
 * error in env, or on OOM. */
tl_stmt *tl_lower_thread_allreduce(tl_lower_env *env, const tl_stmt *s);

#endif
