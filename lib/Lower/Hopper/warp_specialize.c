/* Pass "warp-specialize" of lib/Lower: the Hopper GEMM pipeline (tile IR →
 * tile IR), run before "pipeline" on targets with wgmma and TMA.
 *
 * Requires: a verified tile-IR function (check-supported passed).
 * Guarantees: a T.Pipelined loop of the kernel body's top level whose body is
 * only T.copy(global tensor → shared tile) statements and one T.gemm that
 * reads two of those tiles (the GEMM main loop; ws_match below lists every
 * condition) becomes, when the target has wgmma and TMA and none of the pass
 * configs tl.disable_wgmma / tl.disable_tma_lower /
 * tl.disable_warp_specialized is set:
 *
 *     <the kernel's allocations, LETs and T.use_swizzle, in order>
 *     mbar = T.alloc_shared((2 * S,), "uint64")      # full[s] = mbar[s], empty[s] = mbar[S + s]
 *     if tid == 0:
 *         for s: T.ptx_mbarrier_init(mbar, s, 1); T.ptx_mbarrier_init(mbar, S + s, consumer warps)
 *     T.sync_threads()                              # every thread, producer included
 *     if tid >= threads:                            # the producer warpgroup (128 threads added)
 *         T.ptx_setmaxnreg(40, False)               # registers to the consumers (when their
 *                                                   # accumulators take >= 128 registers)
 *         if tid == threads:                        # one thread issues every TMA load
 *             for kp in T.serial(lo, lo + n):
 *                 r = kp - lo
 *                 T.ptx_mbarrier_wait(mbar, S + r % S, (r // S + 1) % 2)   # stage free (round 0: at once)
 *                 T.ptx_mbarrier_arrive_expect_tx(mbar, r % S, <bytes of all the tiles>)
 *                 T.ptx_tma_load(X, (r % S) * |X| + p * rows * nE, mbar, r % S, src, W,
 *                                1.., rows, 1.., nE, <the copy's origin with column + p * nE>)  # per tile, panel p
 *     else:                                         # the consumers: the kernel's own threads
 *         T.ptx_setmaxnreg(R, True)                 # R = min(240, (regs_per_sm - 128*40) / threads)
 *         <the kernel's other statements before the loop>
 *         for k in T.serial(lo, lo + n):
 *             r = k - lo
 *             T.ptx_mbarrier_wait(mbar, r % S, (r // S) % 2)           # stage r % S landed
 *             T.gemm(A[r % S], B[r % S], C)                            # → wgmma (lower_gemm.c)
 *             if tid % 32 == 0: T.ptx_mbarrier_arrive(mbar, S + r % S) # this warp is done with it
 *         <the kernel's statements after the loop>
 *
 * The GEMM form's body may also be one `if COND:` (no else) around the
 * copies and the T.gemm (TileLang's block-sparse GEMM, `if
 * BlockMask[by, bx, k]:`).  Both roles evaluate COND (the producer's with
 * kp and its own block indices), so it may read only global tensors the
 * kernel does not write, scalar parameters, the loop and block indices and
 * the LETs before the loop (else a remark at the `if` names what it reads);
 * each role's loop body becomes `if COND: <as above, r = count[0]>;
 * count[0] += 1`, r counting the taken iterations in a local int32 zeroed
 * before the first tile (ws_cond.c), so the ring advances on taken
 * iterations only, alike in both roles and across a persistent block's
 * tiles.  No stream-K for it.  A tile with no taken iteration stores the
 * accumulator as the statements before the loop left it (T.clear: zeros).
 *
 * When the kernel's grid is 2-D (persist_plan below), the grid becomes
 * min(tiles, target->sms) blocks and both roles loop over the block's output
 * tiles (bx, by become LETs of the tile index, rasterized by the kernel's
 * T.use_swizzle, else in panels of TL_WS_DEFAULT_PANEL grid rows); the k-tile
 * counter r then runs on across tiles.
 *
 * The statements after the loop may use shared memory (the GEMM form's
 * epilogue staging C through a shared tile, TileLang's C_shared): each such
 * statement gets a T.sync_threads() before it, which tl_ws_finish makes the
 * consumers' named barrier (barrier 1 over the kernel's own threads; the
 * producer never reaches it), and the shared tile keeps its own bytes (its
 * allocation stays at the body's top level, live across the role branches,
 * so smem-plan never lays it over the stage ring; the path is taken only
 * when the stages and such tiles fit the block's shared memory).  The
 * common pair `T.copy(C_frag, X); T.copy(X, C[m0, n0])`, X used by nothing
 * else (plan_c_stage), becomes `T.copy(C_frag, C[m0, n0])` instead: the
 * staged or TMA-store epilogue of lower-tile-ops stores it, as for a kernel
 * that copies its fragment to C directly.  Statements before the loop use no
 * shared memory.
 *
 * The box: the source region's extents (1, ..., rows, 1, ..., nE); the
 * tile's rows may be any dimension before the last (tl_ws_match_load, ws_load.c).
 *
 * S = max(num_stages, 1).  Each tile X gains a leading stage dimension of S
 * and the TMA/wgmma image layout (tl_smem_layout_set_wgmma: the 128/64/32-byte
 * swizzle whose span is the tile's contiguous width in bytes, 128-byte panels
 * (64 16-bit or 128 8-bit elements) when wider; smem-plan aligns it to 1024 bytes), which is
 * what a 2-D TMA box of (rows, nE) writes (docs/hopper.md "The shared-memory image"); the T.gemm,
 * whose operands now carry that layout, is lowered to wgmma by lower_gemm.c
 * and its accumulator gets the wgmma partition (layout_infer.c).
 * The function's ws_annot (below) gets producer_threads = 128; lower-tile-ops adds them to
 * the launch (tl_ws_finish).
 * An empty arrival per consumer warp (not per warpgroup) lets each warp
 * release a stage once its own wgmma, which reads the whole B tile, is
 * complete; a warpgroup's wgmma cannot complete before all four warps issued
 * it, so on the GPU one arrival per warpgroup would do, but the CPU executor
 * runs warps one at a time.
 *
 * The attention form (FlashAttention's loop, tried when the GEMM
 * form does not match): the loop body may also hold statements that use no
 * shared memory (fragment compute, T.reduce_*, T.Parallel, fills: the
 * consumers run them in place) and up to two T.gemm: the first of two
 * shared tiles, one of which may be a tile copied once before the loop (Q:
 * the producer loads it first, on mbar[2SG + j] with 1 arrival, and the
 * consumers' copy becomes T.ptx_mbarrier_wait(mbar, 2SG + j, 0)); the second
 * likewise or with A a float16/bfloat16 fragment (the rs form: lowered to
 * T.ptx_wgmma_rs by lower_gemm.c's tl_lower_wgmma_rs).  block_M must be
 * 64 x the consumer warpgroups (one m64 block each, no N split), so that
 * every warp owns 16 whole rows of each accumulator: the row statistics
 * (T.reduce_* over dim 1, per-row T.Parallel) use mma.sync's quad
 * reduction, and the f32 accumulator cast per thread is the rs form's A map.
 * The consumers' loop body is the source body without its copies.  The
 * tiles the first T.gemm reads (K) and those only the second reads (V) are
 * two barrier groups with their own full and empty barriers (group g:
 * mbar[2Sg + s], mbar[2Sg + S + s]; the pre-loop tiles' after them): each
 * consumer waits on a group's full barrier before the first T.gemm reading
 * its tiles and arrives on its empty barrier after the last, so K's stage is
 * released after Q·Kᵀ and V's after P·V; the producer issues a group's
 * tiles together, K before V, each as soon as its stage is free.  A statement after the loop
 * that uses shared memory (FlashAttention's O_shared epilogue) gets a
 * T.sync_threads() (the consumers' named barrier, tl_ws_finish) before it.
 * A persistent grid (tile_xyz, producer_pre, q_free) with
 * tl.attention_persistent or the default schedule (auto_schedule), else one
 * tile per block; setmaxnreg whenever it gives the consumers more registers
 * than the entry count, and no match when that is fewer than 128 a thread
 * (more than 384 consumer threads).
 *
 * Anything else is left unchanged for "pipeline" (the cp.async + mma.sync
 * path); with remarks on (tl_lower_options.remarks), a note says which path
 * each such T.Pipelined loop took and why.
 *
 * PTX facts: mbarrier phases and try_wait.parity (PTX ISA §9.7.13.15),
 * cp.async.bulk.tensor (§9.7.9.27), wgmma (§9.7.15), the protocol of
 * docs/hopper.md "The kernel's shape". */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "IR/rewrite.h"
#include "IR/visit.h"
#include "Lower/Hopper/attention_overlap.h"
#include "Lower/Hopper/stream_k.h"
#include "Lower/Hopper/ws_internal.h"
#include "Lower/lower_internal.h"
#include "Lower/smem_layout.h"
#include "Support/Hopper/path.h"
#include "Support/Hopper/wgmma.h"

/* The warp-specialized kernel's facts for the passes after this one: a
 * function annotation (lib/IR/tir.h, tl_annot) that this file owns; the
 * core reads it through tl_ws_producer_threads / tl_ws_multi_tile. */
typedef struct ws_annot {
  /* Threads added after the kernel's own (the producer warpgroup, 128)
   * while the tile passes still partition work over the kernel's `threads`
   * (the consumers); tl_ws_finish (lower-tile-ops) adds them to the
   * kernel's thread count and resets this to 0, so SIMT IR never has it. */
  int64_t producer_threads;
  /* The kernel is persistent and a block may run more than one output tile
   * (not a static grid of at most the target's SMs tiles).  The TMA-store
   * epilogue (lower_epilogue.c) is taken only then: its stores overlap the
   * block's next tile, while a block with one tile would only wait for them
   * at its end (measured: docs/performance.md, "Measurements behind choices
   * in the code"). */
  bool multi_tile;
} ws_annot;
static const char ws_annot_key; /* the annotation's key is this object's address */

/* ------------------------------------------------------------- matching */
/* References of b in s (tl_lo_count_refs: reads plus writes). */
static int refs_of(const tl_stmt *s, const tl_buffer *b) {
  tl_lo_refs r = tl_lo_count_refs(s, b);
  return r.reads + r.writes;
}

/* Does s touch any shared buffer? */
typedef struct shared_use {
  tl_visitor v;
  bool any, pipe;
} shared_use;
static bool is_shared(const tl_buffer *b) {
  return b && (b->scope == TL_SCOPE_SHARED || b->scope == TL_SCOPE_SHARED_DYN);
}
static void su_expr(tl_visitor *v, const tl_expr *e) {
  shared_use *u = (shared_use *)v;
  if ((e->kind == TL_EXPR_LOAD && is_shared(e->u.load.buffer)) || (e->kind == TL_EXPR_BUFFER && is_shared(e->u.buffer)))
    u->any = true;
}
static void su_stmt(tl_visitor *v, const tl_stmt *s) {
  shared_use *u = (shared_use *)v;
  if (s->kind == TL_STMT_STORE && is_shared(s->u.store.buffer)) u->any = true;
  if (s->kind == TL_STMT_FOR && s->u.loop.kind == TL_LOOP_PIPELINED) u->any = u->pipe = true; /* a second pipeline */
}
static void su_region(tl_visitor *v, const tl_region *g) {
  shared_use *u = (shared_use *)v;
  if (is_shared(g->buffer)) u->any = true;
}
static shared_use shared_use_of(const tl_stmt *s) {
  shared_use u = {.v = {.expr = su_expr, .stmt = su_stmt, .region = su_region}};
  tl_visit_stmt(&u.v, s);
  return u;
}
static bool uses_shared(const tl_stmt *s) { return shared_use_of(s).any; }

static bool attr_true(const tl_stmt *s, int i) {
  int64_t v = 0;
  return s->u.tile.attrs && s->u.tile.attrs[i] && tl_expr_is_const_int(s->u.tile.attrs[i], &v) && v != 0;
}

static bool f16ish(tl_dtype t) {
  return t.lanes <= 1 && t.bits == 16 && (t.code == TL_TYPE_FLOAT || t.code == TL_TYPE_BFLOAT);
}

static const ws_load *load_of(const ws_plan *p, const tl_buffer *b) {
  for (int i = 0; i < p->nloads; i++)
    if (p->loads[i].X == b) return &p->loads[i];
  for (int i = 0; i < p->npre; i++)
    if (p->pre[i].X == b) return &p->pre[i];
  return NULL;
}

tl_wg_split tl_wgmma_split(int64_t BM, int64_t BN, int64_t threads, int64_t *WN) {
  int64_t wgs = threads / 128;
  if (wgs < 1 || BM % 64 != 0 || (BM / 64 >= wgs ? BM % (64 * wgs) != 0 : wgs % (BM / 64) != 0)) return TL_WG_SPLIT_M;
  int64_t wg_m = BM / 64 >= wgs ? wgs : BM / 64, wg_n = wgs / wg_m;
  *WN = BN / wg_n;
  if (BM * BN / threads > 192) return TL_WG_SPLIT_REGS;
  if (BN % wg_n != 0 || *WN % 8 != 0) return TL_WG_SPLIT_N;
  return TL_WG_SPLIT_OK;
}

/* The rs form's A (attention): a whole 2-D float16/bfloat16 fragment of
 * static shape, not transposed; sets *am, *K. */
static const char *match_rs_a(const tl_stmt *g, const ws_load *lb, int64_t *am, int64_t *K) {
  const tl_region *ra = &g->u.tile.args[0].region;
  const tl_buffer *A = ra->buffer;
  if (!lb || lb->pre) return "the rs-form T.gemm's B is not a tile the loop copies";
  if (attr_true(g, 0)) return "the rs-form T.gemm has transpose_A=True";
  if (A->ndim != 2 || !tl_lo_whole_region(ra) || !tl_expr_is_const_int(A->shape[0], am) ||
      !tl_expr_is_const_int(A->shape[1], K))
    return "the rs-form T.gemm's A is not a whole static 2-D fragment";
  if (!f16ish(A->dtype) || !tl_dtype_eq(A->dtype, lb->X->dtype))
    return "the rs-form T.gemm's A is not float16/bfloat16 like B";
  return NULL;
}

/* match_gemm's reason when an attention loop's block_M is not 64 x the consumer warpgroups (ws_match may
 * then widen the block: ws_attn_threads) */
static const char attn_m64_why[] =
    "block_M is not 64 x the consumer warpgroups (threads / 128), one m64 block "
    "each, as the attention loop's row statistics and register A operand need";

/* The wgmma conditions on the T.gemm; NULL when it can run as wgmma.  In
 * the attention form A may also be a tile copied before the loop, or a
 * fragment (the rs form), and the warpgroups must split only M. */
static const char *match_gemm(const ws_plan *p, const tl_stmt *g) {
  const tl_region *ra = &g->u.tile.args[0].region, *rb = &g->u.tile.args[1].region, *rc = &g->u.tile.args[2].region;
  const ws_load *la = load_of(p, ra->buffer), *lb = load_of(p, rb->buffer);
  bool rs = p->attn && ra->buffer && ra->buffer->scope == TL_SCOPE_FRAGMENT;
  int64_t am = 0, K = 0;
  if (rs) {
    const char *w = match_rs_a(g, lb, &am, &K);
    if (w) return w;
  } else if (!la || !lb || la == lb || lb->pre) {
    return "the T.gemm's A and B are not two tiles the loop copies";
  }
  if ((!rs && !tl_lo_whole_region(ra)) || !tl_lo_whole_region(rb)) return "the T.gemm reads part of a tile";
  tl_buffer *C = rc->buffer;
  if (!C || C->scope != TL_SCOPE_FRAGMENT || C->ndim != 2 || !tl_lo_whole_region(rc))
    return "C is not a whole 2-D fragment";
  tl_dtype da = rs ? ra->buffer->dtype : la->X->dtype, dc = C->dtype;
  tl_wgmma_type wt = tl_wgmma_type_of(da);
  if (!tl_wgmma_types_match(da, lb->X->dtype))
    return "A and B differ in dtype (wgmma mixes only float8_e4m3 with float8_e5m2)";
  bool f32c = dc.code == TL_TYPE_FLOAT && dc.bits == 32 && dc.lanes <= 1;
  if (wt.bytes == 1 && !f32c) return "the accumulator of a float8 T.gemm is not float32";
  if (!(f32c || (dc.code == TL_TYPE_FLOAT && dc.bits == 16 && da.code == TL_TYPE_FLOAT)))
    return "the accumulator is not float32 (or float16 with float16 inputs)";
  int64_t kp = 1;
  if (g->u.tile.attrs && g->u.tile.attrs[4]) tl_expr_is_const_int(g->u.tile.attrs[4], &kp);
  if (kp != 1) return "k_pack is not 1";
  bool ta = attr_true(g, 0), tb = attr_true(g, 1);
  /* wgmma reads 8-bit operands only K-major (PTX ISA §9.7.15.5: imm-trans 0) */
  if (wt.kmajor_only && (ta || !tb))
    return "a float8 T.gemm's operands are not both K-major (wgmma reads 8-bit operands K-major only: A as (M, K) "
           "without transpose_A, B as (N, K) with transpose_B=True)";
  int64_t BM, BN;
  if (!tl_expr_is_const_int(C->shape[0], &BM) || !tl_expr_is_const_int(C->shape[1], &BN)) return "C is not static";
  if (!rs) am = ta ? la->cols : la->rows, K = ta ? la->rows : la->cols;
  int64_t bk = tb ? lb->cols : lb->rows, bn = tb ? lb->rows : lb->cols;
  if (am != BM || bn != BN || bk != K) return "the operand shapes disagree";
  if (K % wt.k != 0)
    return wt.k == 16 ? "K is not a multiple of 16" : "K is not a multiple of 32 (wgmma's K for float8)";
  /* the warpgroups split M into 64-row blocks (several per warpgroup when
   * there are more blocks than warpgroups), then N (layout_infer.c) */
  int64_t WN = 0;
  tl_wg_split sp = tl_wgmma_split(BM, BN, p->threads, &WN);
  if (sp == TL_WG_SPLIT_M)
    return "block_M is not a multiple of 64 that splits evenly over the consumer warpgroups (threads / 128)";
  /* attention: the row statistics and the rs form's A registers need each
   * warp to own 16 whole rows (one m64 block per warpgroup, no N split) */
  if (p->attn && BM != 64 * (p->threads / 128)) return attn_m64_why;
  /* 128x256 on one warpgroup (TileLang's JIT test) would need 256 accumulator registers a thread */
  if (sp == TL_WG_SPLIT_REGS)
    return "the accumulators would take more than 192 registers per consumer thread (use more threads)";
  if (sp == TL_WG_SPLIT_N) return "the warpgroups' column split is not a multiple of 8";
  if (!tb && (WN % lb->nE != 0)) return "B's panels do not split evenly over the warpgroups";
  if (!rs && ta && 64 % la->nE != 0 && la->nE % 64 != 0) return "A's panels do not split evenly";
  return NULL;
}

static bool is_gemm(const tl_stmt *s) { return s && s->kind == TL_STMT_TILE && s->u.tile.op == TL_TILE_GEMM; }

/* A T.copy from a global tensor into a shared buffer? */
static bool is_tile_load(const tl_stmt *s) {
  if (!s || s->kind != TL_STMT_TILE || s->u.tile.op != TL_TILE_COPY || s->u.tile.nargs != 2 ||
      s->u.tile.args[0].kind != TL_OPND_REGION || s->u.tile.args[1].kind != TL_OPND_REGION)
    return false;
  const tl_buffer *a = s->u.tile.args[0].region.buffer, *b = s->u.tile.args[1].region.buffer;
  return a && b && a->scope == TL_SCOPE_GLOBAL && is_shared(b);
}

/* The loop body: the T.copy loads, up to two T.gemm and (attention) other
 * statements that use no shared memory; NULL or why not. */
static const char *scan_body(const tl_primfunc *f, ws_plan *p, tl_stmt **items, int n) {
  for (int i = 0; i < n; i++) {
    const tl_stmt *s = items[i];
    if (is_gemm(s)) {
      if (p->gemm2 || (p->gemm && !p->attn))
        return p->attn ? "the loop has more than two T.gemm" : "the loop has two T.gemm";
      if (s->u.tile.nargs != 3 || s->u.tile.args[0].kind != TL_OPND_REGION ||
          s->u.tile.args[1].kind != TL_OPND_REGION || s->u.tile.args[2].kind != TL_OPND_REGION)
        return "the T.gemm has unexpected operands";
      *(p->gemm ? &p->gemm2 : &p->gemm) = s;
      continue;
    }
    if (p->attn && !is_tile_load(s)) {
      /* consumer-private shared memory (TileLang's decode kernels store each key block's row maxima into
       * S_shared[:, k]): the consumers run it, their barriers become the consumers' named barrier
       * (tl_ws_finish); check_uses keeps it off the loaded tiles, match_gemm keeps it out of the T.gemm */
      if (shared_use_of(s).pipe) return "a statement in the loop holds a second T.Pipelined loop";
      p->nother++;
      continue;
    }
    if (p->nloads == WS_MAX_LOADS) return "the loop copies too many tiles";
    const char *w = tl_ws_match_load(f, s, &p->loads[p->nloads]);
    if (w) return w;
    for (int j = 0; j < p->nloads; j++)
      if (p->loads[j].X == p->loads[p->nloads].X) return "a tile is copied twice";
    p->nloads++;
  }
  return p->gemm ? NULL : "the loop has no T.gemm";
}

/* Attention: the tiles copied once before the loop that a T.gemm of the
 * loop reads (Q) become TMA loads of the producer too. */
static const char *scan_pre(const tl_primfunc *f, ws_plan *p, tl_stmt *body) {
  for (int i = 0; i < p->li; i++) {
    const tl_stmt *s = body->u.seq.stmts[i];
    if (!is_tile_load(s)) continue;
    const tl_buffer *X = s->u.tile.args[1].region.buffer;
    bool read = false;
    for (int k = 0; k < 2; k++)
      read = read || p->gemm->u.tile.args[k].region.buffer == X ||
             (p->gemm2 && p->gemm2->u.tile.args[k].region.buffer == X);
    if (!read) continue;
    if (p->npre == WS_MAX_PRE) return "the kernel copies too many tiles before the loop";
    ws_load *ld = &p->pre[p->npre];
    const char *w = tl_ws_match_load(f, s, ld);
    if (w) return w;
    ld->pre = true;
    p->pre_at[p->npre++] = i;
  }
  return NULL;
}

/* Each tile is used only by its copy and the T.gemm that read it, and the
 * statements before the loop (but the pre-loop copies) use no shared
 * memory; those after it may (each gets the consumers' barrier before it:
 * attn_stmt, ws_rewrite) unless they hold a second T.Pipelined loop.  The
 * GEMM form sets p->epi_shared when one does.  A reason naming the
 * statement is written to why (n bytes). */
static const char *check_uses(const tl_primfunc *f, ws_plan *p, char *why, size_t n) {
  const tl_stmt *body = p->kernel->u.kernel.body, *loop = p->loop;
  for (int i = 0; i < p->nloads + p->npre; i++) {
    const ws_load *ld = i < p->nloads ? &p->loads[i] : &p->pre[i - p->nloads];
    int uses = 1;
    for (int k = 0; k < 2; k++)
      uses += (p->gemm->u.tile.args[k].region.buffer == ld->X) +
              (p->gemm2 && p->gemm2->u.tile.args[k].region.buffer == ld->X);
    if (!ld->pre && refs_of(f->body, ld->X) != refs_of(loop, ld->X)) return "a copied tile is used outside the loop";
    if (refs_of(ld->pre ? f->body : loop, ld->X) != uses)
      return "a copied tile is used by something other than its copy and the T.gemm";
  }
  /* The other top-level statements: before the loop no shared memory (the
   * kernel's statements there run on the consumers only, after the
   * producer split, but their barriers would be placed by the barriers
   * pass for all threads). */
  for (int i = 0; i < body->u.seq.n; i++) {
    const tl_stmt *s = body->u.seq.stmts[i];
    bool pre = false;
    for (int j = 0; j < p->npre; j++) pre = pre || p->pre_at[j] == i;
    if (i == p->li || pre || !s || s->kind == TL_STMT_ALLOC) continue;
    if (!p->attn && p->epi_tile && (i == p->epi_at || i == p->epi_at + 1)) continue;
    shared_use u = shared_use_of(s);
    if (!u.any) continue;
    const char *what = i > p->li ? "after" : "before";
    if (u.pipe || i < p->li) {
      snprintf(why, n, "the statement at line %d (%s the loop) %s", s->loc.line, what,
               u.pipe ? "holds a second T.Pipelined loop"
                      : "uses shared memory (only the statements after the "
                        "loop may, on the consumers' named barrier)");
      return why;
    }
    if (!p->attn) p->epi_shared = true;
  }
  return NULL;
}

/* Are a and b static 2-D buffers of one shape? */
static bool same_shape(const tl_buffer *a, const tl_buffer *b) {
  int64_t x, y;
  if (a->ndim != 2 || b->ndim != 2) return false;
  for (int d = 0; d < 2; d++)
    if (!tl_expr_is_const_int(a->shape[d], &x) || !tl_expr_is_const_int(b->shape[d], &y) || x != y) return false;
  return true;
}

/* The two region operands of T.copy s, or false. */
static bool copy_regions(const tl_stmt *s, const tl_region **src, const tl_region **dst) {
  if (!s || s->kind != TL_STMT_TILE || s->u.tile.op != TL_TILE_COPY || s->u.tile.nargs != 2 ||
      s->u.tile.args[0].kind != TL_OPND_REGION || s->u.tile.args[1].kind != TL_OPND_REGION)
    return false;
  *src = &s->u.tile.args[0].region;
  *dst = &s->u.tile.args[1].region;
  return (*src)->buffer && (*dst)->buffer;
}

/* The GEMM form: C staged through shared memory after the loop (TileLang's
 * `T.copy(C_local, C_shared); T.copy(C_shared, C[..])`): two consecutive
 * whole-tile copies, fragment -> X -> a global tensor of X's dtype, X a
 * shared tile of the fragment's shape allocated at the kernel body's top
 * level and used by nothing else.  Sets p->epi_tile, epi_at, epi_alloc. */
static void plan_c_stage(const tl_primfunc *f, ws_plan *p) {
  const tl_stmt *body = p->kernel->u.kernel.body;
  for (int i = p->li + 1; i + 1 < body->u.seq.n; i++) {
    const tl_region *fr, *xw, *xr, *g;
    if (!copy_regions(body->u.seq.stmts[i], &fr, &xw) || !copy_regions(body->u.seq.stmts[i + 1], &xr, &g)) continue;
    tl_buffer *X = xw->buffer;
    if (fr->buffer->scope != TL_SCOPE_FRAGMENT || !is_shared(X) || xr->buffer != X ||
        g->buffer->scope != TL_SCOPE_GLOBAL || !tl_dtype_eq(X->dtype, g->buffer->dtype) || !same_shape(fr->buffer, X) ||
        !tl_lo_whole_region(fr) || !tl_lo_whole_region(xw) || !tl_lo_whole_region(xr) || refs_of(f->body, X) != 2)
      continue;
    for (int a = 0; a < p->li; a++) {
      const tl_stmt *s = body->u.seq.stmts[a];
      if (s && s->kind == TL_STMT_ALLOC && s->u.alloc.buffer == X) {
        p->epi_tile = X;
        p->epi_at = i;
        p->epi_alloc = a;
        return;
      }
    }
  }
}

/* Attention: the shared memory the rewritten kernel would take, counted as
 * smem-plan lays it out on this path (every allocation of the kernel body
 * apart -- the role branches are one top-level position -- but the tile
 * that takes Q's bytes (plan_reuse), each 1024-byte aligned, S stages of the
 * loop's tiles, the mbarriers first); -1 when a shape is not static. */
static int64_t attn_smem_bytes(const ws_plan *p) {
  const tl_stmt *body = p->kernel->u.kernel.body;
  int64_t total = 1024; /* the mbarriers, then the first 1024-aligned tile */
  for (int i = 0; i < body->u.seq.n; i++) {
    const tl_stmt *s = body->u.seq.stmts[i];
    if (!s || s->kind != TL_STMT_ALLOC || !is_shared(s->u.alloc.buffer)) continue;
    const tl_buffer *X = s->u.alloc.buffer;
    bool reused = false;
    for (int j = 0; j < p->npre; j++) reused = reused || p->reuse[j] == X;
    if (reused) continue;
    int64_t bytes = tl_dtype_bytes(X->dtype), e;
    for (int d = 0; d < X->ndim; d++) {
      if (!tl_expr_is_const_int(X->shape[d], &e)) return -1;
      bytes *= e;
    }
    const ws_load *ld = load_of(p, X);
    if (ld && !ld->pre) bytes *= p->stages;
    total += (bytes + 1023) / 1024 * 1024;
  }
  return total;
}

/* Does T.gemm g read tile X? */
static bool gemm_reads(const tl_stmt *g, const tl_buffer *X) {
  return g && (g->u.tile.args[0].region.buffer == X || g->u.tile.args[1].region.buffer == X);
}

/* Does the shape and dtype of a equal b's (static 2-D)? */
static bool same_tile(const tl_buffer *a, const tl_buffer *b) {
  return tl_dtype_eq(a->dtype, b->dtype) && same_shape(a, b);
}

/* Attention: a shared tile allocated before the loop and used only as a
 * whole-tile T.copy operand by the statements after it (FlashAttention's
 * O_shared) takes the bytes of a pre-loop tile of its shape and dtype (Q,
 * which nothing reads after the loop), as FlashAttention-3 stages O through
 * Q's shared memory: smem-plan keeps the role branches' buffers apart (one
 * top-level position), which at head dim 256 would not fit. */
static void plan_reuse(const tl_primfunc *f, ws_plan *p) {
  const tl_stmt *body = p->kernel->u.kernel.body;
  for (int i = 0; i < p->li; i++) {
    const tl_stmt *a = body->u.seq.stmts[i];
    tl_buffer *E = a && a->kind == TL_STMT_ALLOC ? a->u.alloc.buffer : NULL;
    if (!is_shared(E) || load_of(p, E)) continue;
    int j = 0;
    while (j < p->npre && (p->reuse[j] || !same_tile(E, p->pre[j].X))) j++;
    if (j == p->npre) continue;
    int ops = 0, after = 0;
    for (int k = p->li + 1; k < body->u.seq.n; k++) {
      const tl_stmt *s = body->u.seq.stmts[k];
      after += refs_of(s, E);
      for (int o = 0; s && s->kind == TL_STMT_TILE && s->u.tile.op == TL_TILE_COPY && o < s->u.tile.nargs; o++)
        ops += s->u.tile.args[o].kind == TL_OPND_REGION && s->u.tile.args[o].region.buffer == E &&
               tl_lo_whole_region(&s->u.tile.args[o].region);
    }
    if (ops > 0 && ops == after && after == refs_of(f->body, E)) p->reuse[j] = E;
  }
}

/* Attention: the tiles the first T.gemm reads are group 0, those only the
 * second reads group 1 (two groups when both are non-empty). */
static void set_groups(ws_plan *p) {
  bool has[2] = {false, false};
  for (int i = 0; i < p->nloads; i++) {
    p->loads[i].group = gemm_reads(p->gemm, p->loads[i].X) ? 0 : 1;
    has[p->loads[i].group] = true;
  }
  p->ngroups = has[0] && has[1] ? 2 : 1;
  for (int i = 0; i < p->nloads && p->ngroups == 1; i++) p->loads[i].group = 0;
}

/* The loop body's statements (the `if COND:`'s when p->cond); *n of them. */
static tl_stmt **body_items(const ws_plan *p, int *n) {
  tl_stmt **slot = p->cond ? (tl_stmt **)&p->cond->u.ifs.then_s : &p->loop->u.loop.body;
  *n = (*slot)->kind == TL_STMT_SEQ ? (*slot)->u.seq.n : 1;
  return (*slot)->kind == TL_STMT_SEQ ? (*slot)->u.seq.stmts : slot;
}

/* The consumer threads an attention loop whose block_M is 64 x more warpgroups than the kernel asks for
 * may run on instead (tl_ws_wider_threads; the producer's 128 beside them), or 0.  TileLang's
 * example_mha_fwd_bshd (block_M 128 on 128 threads) otherwise stays on mma.sync with 1.5 KB of spills a
 * thread. */
static int64_t ws_attn_threads(const ws_plan *p, const tl_target *target, const tl_stmt *body) {
  const tl_buffer *C = p->gemm ? p->gemm->u.tile.args[2].region.buffer : NULL;
  int64_t BM = 0;
  if (!C || !tl_expr_is_const_int(C->shape[0], &BM)) return 0;
  return tl_ws_wider_threads(BM, p->threads, target->max_threads - 128, body);
}

/* Finds the GEMM main loop of kernel k; *why says why not when false (it
 * may point into why_buf, one buffer per form tried). */
static bool ws_match(const tl_primfunc *f, const tl_target *target, tl_stmt *k, ws_plan *p, const char **why,
                     tl_stmt **loop_out, char why_buf[2][400]) {
  memset(p, 0, sizeof *p);
  *loop_out = NULL;
  tl_stmt *body = k->u.kernel.body;
  if (!body || body->kind != TL_STMT_SEQ) return *why = "the kernel body is not a sequence", false;
  if (tl_lo_find_while(body, NULL)) /* its loops' producer would have to follow the run's trip counts */
    return *why = "the kernel has a 'while' loop (the warp-specialized pipeline is not built around one yet)", false;
  if (tl_lo_has_call(body, TL_INTRIN_THREAD_RANGE)) /* their tile ops run over their own threads */
    return *why = "the kernel has thread-range scopes (branches on the thread index that hold tile work)", false;
  int found = -1;
  for (int i = 0; i < body->u.seq.n; i++) {
    tl_stmt *s = body->u.seq.stmts[i];
    if (s && s->kind == TL_STMT_FOR && s->u.loop.kind == TL_LOOP_PIPELINED) {
      if (found >= 0) return *why = "the kernel has more than one T.Pipelined loop", false;
      found = i;
    }
  }
  if (found < 0) return *why = "no T.Pipelined loop at the kernel's top level", false;
  tl_stmt *loop = body->u.seq.stmts[found];
  *loop_out = loop;
  p->kernel = k;
  p->li = found;
  p->loop = loop;
  if (loop->u.loop.nsched > 0) /* the mma.sync pipeline honours them (pipeline_sched.c) */
    return *why = "the loop has order= / stage= (their Hopper schedule is not implemented yet)", false;
  p->stages = loop->u.loop.num_stages < 1 ? 1 : loop->u.loop.num_stages;
  if (!tl_expr_is_const_int(k->u.kernel.threads, &p->threads) || p->threads % 128 != 0)
    return *why = "the kernel's threads are not whole warpgroups (a multiple of 128)", false;
  if (loop->u.loop.nvars != 1 || loop->u.loop.step) return *why = "the loop has a step", false;
  const tl_stmt *cif = p->cond = ws_cond_if(loop->u.loop.body); /* the GEMM form's may be `if COND:` */
  int n;
  tl_stmt **items = body_items(p, &n);
  /* the GEMM form (only copies and one T.gemm) first; else the attention form */
  const char *w = scan_body(f, p, items, n);
  if (!w) w = match_gemm(p, p->gemm);
  if (!w) plan_c_stage(f, p);
  if (!w) w = check_uses(f, p, why_buf[0], sizeof why_buf[0]);
  if (!w && cif && (w = ws_check_cond(f, p, cif->u.ifs.cond, why_buf[1], sizeof why_buf[1])))
    *loop_out = (tl_stmt *)cif; /* the remark at the `if` */
  if (!w) return p->ngroups = 1, true;
  if (cif) return *why = w, false; /* no conditional attention form */
  const char *gemm_why = w;
  ws_plan keep = *p;
  for (int64_t wide = 0;;) {
    *p = keep;
    memset(p->loads, 0, sizeof p->loads);
    p->nloads = 0;
    p->gemm = p->gemm2 = NULL;
    p->epi_tile = NULL;
    p->epi_shared = false;
    p->attn = true;
    if (wide) p->asked_threads = p->threads, p->threads = wide;
    w = scan_body(f, p, items, n);
    if (!w && !p->gemm2 && p->nother == 0) w = gemm_why; /* nothing the attention form adds */
    if (!w) w = tl_ws_check_load_lets(p);
    if (!w) w = scan_pre(f, p, body);
    if (!w) w = match_gemm(p, p->gemm);
    if (!w && p->gemm2) w = match_gemm(p, p->gemm2);
    if (!w) w = check_uses(f, p, why_buf[1], sizeof why_buf[1]);
    if (w != attn_m64_why || wide || !(wide = ws_attn_threads(p, target, body))) break;
  }
  /* block_M 256 on 512 threads: 112 registers a consumer thread after
   * setmaxnreg, and ptxas spilled 148 bytes (ws_maxnreg) */
  if (!w && (target->regs_per_sm - 128 * 40) / p->threads / 8 * 8 < 128)
    w = "the consumer threads would get fewer than 128 registers each beside a producer warpgroup (use at most "
        "384 threads)";
  if (!w) return set_groups(p), plan_reuse(f, p), true;
  /* the reason the GEMM form gave, unless the attention form got further */
  bool further = p->gemm2 || p->nother > 0;
  *p = keep;
  return *why = further ? w : gemm_why, false;
}

/* ------------------------------------------------------------- rewriting */
static bool tma_loads(ws_build *b, const ws_load *ld, tl_rewriter *rw, tl_expr *stage, tl_expr *mi, tl_buffer *mbar,
                      stmt_vec *out);

/* The producer's TMA loads of iteration var (the copies' regions with the
 * loop variable replaced) into stage `stage`. */
static bool producer_loads(ws_build *b, const ws_plan *p, tl_var *kv, tl_var *kp, tl_expr *stage, tl_expr *full,
                           int group, tl_buffer *mbar, const ws_persist *pp, stmt_vec *out) {
  tl_map subst;
  tl_map_init(&subst);
  tl_rewriter rw = {.m = b->m, .subst = &subst, .max_depth = TL_LOWER_MAX_DEPTH};
  bool ok = ws_producer_subst(b, kv, kp, pp, &subst);
  if (ok && p->attn) ok = tl_ws_producer_lets(p, &rw, &subst);
  for (int i = 0; ok && i < p->nloads; i++)
    if (p->loads[i].group == group) ok = tma_loads(b, &p->loads[i], &rw, stage, full, mbar, out);
  tl_map_free(&subst);
  return ok;
}

/* The TMA loads of tile ld (one per panel), its copy's coordinates through
 * rw, into stage `stage` (NULL: an unstaged tile) on mbarrier mbar[mi]. */
static bool tma_loads(ws_build *b, const ws_load *ld, tl_rewriter *rw, tl_expr *stage, tl_expr *mi, tl_buffer *mbar,
                      stmt_vec *out) {
  bool ok = true;
  const tl_region *sr = &ld->s->u.tile.args[0].region;
  int r = ld->src->ndim;
  for (int64_t pn = 0; ok && pn < ld->cols / ld->nE; pn++) {
    tl_expr *args[16];
    args[0] = REF(b, ld->X);
    args[1] = stage ? tl_lo_add(b->m, b->loc, tl_lo_mul(b->m, b->loc, stage, ld->rows * ld->cols),
                                I(b, pn * ld->rows * ld->nE))
                    : I(b, pn * ld->rows * ld->nE);
    args[2] = REF(b, mbar);
    args[3] = mi;
    args[4] = REF(b, ld->src);
    args[5] = I(b, ld->sw);
    for (int d = 0; d < r; d++) {
      args[6 + d] = I(b, d == r - 1 ? ld->nE : d == ld->rd ? ld->rows : 1);
      tl_expr *c = tl_rewrite_expr(rw, sr->min[d], 1);
      if (c && d == r - 1) c = tl_lo_add(b->m, b->loc, c, I(b, pn * ld->nE));
      if (c && !tl_dtype_eq(c->dtype, TL_INT32)) c = tl_lo_cast(b->m, b->loc, TL_INT32, c);
      args[6 + r + d] = c;
    }
    tl_stmt *s = CALL(b, TL_INTRIN_PTX_TMA_LOAD, 6 + 2 * r, args);
    ok = s && tl_vec_push(out, s);
  }
  return ok;
}

/* The T.gemm reading stage `stage` of its tiles.  Its wg_wait attribute is
 * not honoured: each stage is released only after its wgmma group completed
 * (lower_gemm.c waits with 0 groups in flight; see ws_consumer_loop). */
static tl_stmt *staged_gemm(ws_build *b, const ws_plan *p, const tl_stmt *g, tl_expr *stage) {
  tl_stmt *r = tl_ir_stmt(b->m, g->loc, TL_STMT_TILE);
  tl_operand *args = tl_arena_alloc(&b->m->arena, sizeof(tl_operand) * 3);
  if (!r || !args) return NULL;
  *r = *g;
  for (int i = 0; i < 3; i++) {
    args[i] = g->u.tile.args[i];
    if (i == 2) continue;
    tl_buffer *X = args[i].region.buffer;
    const ws_load *ld = load_of(p, X);
    if (!ld || ld->pre) continue; /* attention: Q (unstaged) or a fragment A */
    tl_expr **mn = tl_arena_alloc(&b->m->arena, sizeof(tl_expr *) * 3);
    tl_expr **ex = tl_arena_alloc(&b->m->arena, sizeof(tl_expr *) * 3);
    if (!mn || !ex) return NULL;
    mn[0] = stage;
    ex[0] = I(b, 1);
    for (int d = 0; d < 2; d++) {
      mn[d + 1] = I(b, 0);
      ex[d + 1] = X->shape[d];
    }
    args[i].region.ndim = 3;
    args[i].region.min = mn;
    args[i].region.extent = ex;
  }
  r->u.tile.args = args;
  return r;
}

/* The mbarriers, their initialisation by thread 0 and the barrier after it. */
static bool ws_barriers(ws_build *b, int S, int G, int npre, int64_t qempty, int64_t T, tl_buffer **mbar,
                        stmt_vec *pre) {
  tl_module *m = b->m;
  tl_expr **shape = tl_arena_alloc(&m->arena, sizeof(tl_expr *));
  if (!shape || !(shape[0] = I(b, 2 * S * G + npre * (qempty ? 2 : 1)))) return false;
  *mbar = tl_ir_new_buffer(m, b->loc, "ws_mbar", TL_DT(TL_TYPE_UINT, 64), TL_SCOPE_SHARED_DYN, 1, shape);
  tl_stmt *alloc = tl_ir_stmt(m, b->loc, TL_STMT_ALLOC);
  if (!*mbar || !alloc) return false;
  alloc->u.alloc.buffer = *mbar;
  stmt_vec init = {0};
  bool ok = true;
  for (int g = 0; g < G; g++)
    for (int s = 0; ok && s < S; s++) {
      tl_expr *a1[3] = {REF(b, *mbar), I(b, 2 * S * g + s), I(b, 1)};
      tl_expr *a2[3] = {REF(b, *mbar), I(b, 2 * S * g + S + s), I(b, T / 32)};
      ok = tl_vec_push(&init, CALL(b, TL_INTRIN_PTX_MBARRIER_INIT, 3, a1)) &&
           tl_vec_push(&init, CALL(b, TL_INTRIN_PTX_MBARRIER_INIT, 3, a2));
    }
  for (int j = 0; ok && j < npre; j++) { /* attention: full[2SG + j] of pre-loop tile j */
    tl_expr *a1[3] = {REF(b, *mbar), I(b, 2 * S * G + j), I(b, 1)};
    ok = tl_vec_push(&init, CALL(b, TL_INTRIN_PTX_MBARRIER_INIT, 3, a1));
  }
  for (int j = 0; ok && qempty && j < npre; j++) { /* persistent attention: pre-loop tile j free, qempty arrivals */
    tl_expr *a1[3] = {REF(b, *mbar), I(b, 2 * S * G + npre + j), I(b, qempty)};
    ok = tl_vec_push(&init, CALL(b, TL_INTRIN_PTX_MBARRIER_INIT, 3, a1));
  }
  tl_expr *tid = tl_lo_thread_index(m, b->loc);
  tl_stmt *init_if =
      ok ? tl_lo_if(m, b->loc, BIN(b, TL_OP_EQ, tid, I(b, 0)), SEQ(b, (int)init.len, init.data), NULL) : NULL;
  tl_vec_free(&init);
  return init_if && tl_vec_push(pre, alloc) && tl_vec_push(pre, init_if) &&
         tl_vec_push(pre, tl_lo_sync_threads(m, b->loc)) && pre->data[pre->len - 1];
}

/* Attention: the producer first arms mbar[2SG + j] (after the G groups'
 * full and empty barriers) and issues the TMA loads of each tile j copied
 * before the loop (Q), then runs its k-loop `rest`.  Persistent (pp on):
 * per output tile, with the tile's block indices (pp->subst), after
 * waiting until the consumers freed tile j (mbar[2SG + npre + j], phase
 * (jp + 1) % 2: at once for the first tile). */
static tl_stmt *producer_pre(ws_build *b, const ws_plan *p, tl_buffer *mbar, const ws_persist *pp, tl_stmt *rest) {
  tl_map none;
  tl_map_init(&none);
  tl_rewriter rw = {.m = b->m, .subst = pp->on ? (tl_map *)&pp->subst : &none, .max_depth = TL_LOWER_MAX_DEPTH};
  stmt_vec v = {0};
  bool ok = true;
  for (int j = 0; ok && j < p->npre; j++) {
    const ws_load *ld = &p->pre[j];
    int mi = 2 * p->stages * p->ngroups + j;
    tl_expr *wa[3] = {REF(b, mbar), I(b, mi + p->npre),
                      pp->on ? tl_lo_fmod(b->m, b->loc, BIN(b, TL_OP_ADD, V(b, pp->jp), I(b, 1)), 2, NULL) : NULL};
    tl_expr *ea[3] = {REF(b, mbar), I(b, mi), I(b, ld->rows * ld->cols * ld->eb)};
    ok = (!pp->on || tl_vec_push(&v, CALL(b, TL_INTRIN_PTX_MBARRIER_WAIT, 3, wa))) &&
         tl_vec_push(&v, CALL(b, TL_INTRIN_PTX_MBARRIER_ARRIVE_EXPECT_TX, 3, ea)) &&
         tma_loads(b, ld, &rw, NULL, I(b, mi), mbar, &v);
  }
  tl_stmt *r = ok && tl_vec_push(&v, rest) ? SEQ(b, (int)v.len, v.data) : NULL;
  tl_vec_free(&v);
  tl_map_free(&none);
  return r;
}

/* The producer: thread T loops over the k-tiles (of each output tile when
 * persistent), waits for the stage to be free, arms it and issues the TMA
 * loads. */
static tl_stmt *ws_producer(ws_build *b, const ws_plan *p, tl_buffer *mbar, ws_persist *pp, tl_diag *d) {
  tl_module *m = b->m;
  tl_stmt *loop = p->loop;
  int S = p->stages;
  tl_var *kv = loop->u.loop.vars[0];
  tl_expr *lo = loop->u.loop.mins && loop->u.loop.mins[0] ? loop->u.loop.mins[0] : I(b, 0);
  tl_var *kp = tl_names_fresh_var(b->names, b->loc, "kp", TL_INT32, TL_VAR_LOOP);
  if (!kp) return NULL;
  tl_expr *prel, *np = loop->u.loop.extents[0];
  const tl_sk_role *sr = pp->sk.on ? &pp->sk.prod : NULL;
  /* persistent attention: the loop's bounds of the producer's tile, the
   * k-tiles of its earlier tiles counted in kbp */
  bool ap = pp->on && pp->attn;
  stmt_vec pfx = {0};
  if (ap) {
    tl_rewriter rw = {.m = m, .subst = &pp->subst, .max_depth = TL_LOWER_MAX_DEPTH};
    lo = tl_rewrite_expr(&rw, lo, 1);
    np = tl_rewrite_expr(&rw, np, 1);
    if (rw.failed || !lo || !np || !(pp->kbp = ws_kb_new(b, "ws_kbase_p", &pfx))) return tl_vec_free(&pfx), NULL;
  }
  /* the conditional loop: r counts the taken iterations (ws_cond.c) */
  tl_buffer *pc = p->cond ? ws_kb_new(b, "ws_count_p", &pfx) : NULL;
  if (p->cond && !pc) return tl_vec_free(&pfx), NULL;
  tl_stmt *plet = pc ? ws_let_count(b, pc, &prel)
                     : ws_let_rel(b, kp, lo,
                                  sr || ap ? NULL
                                  : pp->on ? V(b, pp->jp)
                                           : NULL,
                                  np,
                                  sr   ? V(b, sr->base)
                                  : ap ? ws_kb_load(b, pp->kbp)
                                       : NULL,
                                  &prel);
  tl_expr *pst = tl_lo_fmod(m, b->loc, prel, S, NULL);
  stmt_vec pbody = {0};
  bool ok = tl_vec_push(&pbody, plet);
  for (int g = 0; ok && g < p->ngroups; g++) { /* per group: stage free, armed, loaded */
    int64_t bytes = 0;
    for (int i = 0; i < p->nloads; i++)
      bytes += p->loads[i].group == g ? p->loads[i].rows * p->loads[i].cols * p->loads[i].eb : 0;
    tl_expr *full = g ? tl_lo_add(m, b->loc, pst, I(b, 2 * S * g)) : pst;
    tl_expr *wa[3] = {
        REF(b, mbar), tl_lo_add(m, b->loc, pst, I(b, 2 * S * g + S)),
        tl_lo_fmod(m, b->loc, tl_lo_add(m, b->loc, tl_lo_fdiv(m, b->loc, prel, S, NULL), I(b, 1)), 2, NULL)};
    tl_expr *ea[3] = {REF(b, mbar), full, I(b, bytes)};
    ok = tl_vec_push(&pbody, CALL(b, TL_INTRIN_PTX_MBARRIER_WAIT, 3, wa)) &&
         tl_vec_push(&pbody, CALL(b, TL_INTRIN_PTX_MBARRIER_ARRIVE_EXPECT_TX, 3, ea)) &&
         producer_loads(b, p, kv, kp, pst, full, g, mbar, pp, &pbody);
  }
  tl_stmt *ploop = ok ? tl_ir_stmt(m, b->loc, TL_STMT_FOR) : NULL;
  tl_var **vars = tl_arena_alloc(&m->arena, sizeof(tl_var *));
  tl_expr **pmin = ap ? tl_arena_alloc(&m->arena, sizeof(tl_expr *)) : NULL;
  tl_expr **pext = ap ? tl_arena_alloc(&m->arena, sizeof(tl_expr *)) : NULL;
  if (!ploop || !vars || (ap && (!pmin || !pext))) {
    tl_vec_free(&pbody);
    tl_vec_free(&pfx);
    return NULL;
  }
  *ploop = *loop;
  if (ap) {
    pmin[0] = lo;
    pext[0] = np;
    ploop->u.loop.mins = pmin;
    ploop->u.loop.extents = pext;
  }
  ploop->u.loop.kind = TL_LOOP_SERIAL;
  ploop->u.loop.num_stages = -1;
  vars[0] = kp;
  ploop->u.loop.vars = vars;
  if (sr && !ws_sk_bounds(b, ploop, lo, sr)) return NULL;
  ploop->u.loop.body = pc ? ws_cond_iter(b, ws_cond_producer(b, p->cond->u.ifs.cond, kv, kp, pp), pc, &pbody)
                          : SEQ(b, (int)pbody.len, pbody.data);
  tl_vec_free(&pbody);
  tl_stmt *work = NULL;
  if (!ploop->u.loop.body) {
  } else if (ap) { /* per tile: the LETs of the tile, Q, the k-loop, kbp += its extent */
    tl_stmt *tb[2] = {ploop, ws_kb_add(b, pp->kbp, np)};
    tl_stmt *tile = producer_pre(b, p, mbar, pp, SEQ(b, 2, tb));
    stmt_vec lv = {0};
    tl_rewriter rw = {.m = m, .subst = &pp->subst, .max_depth = TL_LOWER_MAX_DEPTH};
    for (int i = 0; tile && i < pp->nlets; i++) {
      tl_expr *val = tl_rewrite_expr(&rw, pp->lets[i]->u.let.value, 1);
      tl_stmt *l = val && !rw.failed ? tl_lo_let(m, b->loc, pp->lets_p[i], val) : NULL;
      if (!l || !tl_vec_push(&lv, l)) tile = NULL;
    }
    if (tile && pp->nlets && tl_vec_push(&lv, tile)) tile = SEQ(b, (int)lv.len, lv.data);
    tl_vec_free(&lv);
    if (tile && (tile = ws_tile_loop(b, pp, pp->jp, pp->bxp, pp->byp, pp->bzp, tile, d, NULL)) &&
        tl_vec_push(&pfx, tile))
      work = SEQ(b, (int)pfx.len, pfx.data);
  } else {
    work = pp->on ? ws_tile_loop(b, pp, pp->jp, pp->bxp, pp->byp, pp->bzp, ploop, d, sr) : ploop;
    if (work && p->npre > 0) work = producer_pre(b, p, mbar, pp, work);
    if (work && pc) work = tl_vec_push(&pfx, work) ? SEQ(b, (int)pfx.len, pfx.data) : NULL; /* its count first */
  }
  tl_vec_free(&pfx);
  return work ? tl_lo_if(m, b->loc, BIN(b, TL_OP_EQ, tl_lo_thread_index(m, b->loc), I(b, p->threads)), work, NULL)
              : NULL;
}

/* Ping-pong (tl.attention_pingpong): consumer warpgroup w (tid / 128) holds
 * the turn at the tensor cores while named barrier WS_PP_BAR + w is passed;
 * before each T.gemm of the loop it waits for its turn (wait: bar.sync on
 * its own barrier, 256 threads), and once its wgmma are issued it hands the
 * turn to the other (bar.arrive on the other's barrier; tl_ws_finish moves
 * that arrival in front of the gemm's completion wait, so the other
 * warpgroup's wgmma queue behind this one's while this one's softmax runs).
 * The turns alternate strictly: S(w0) S(w1) PV(w0) PV(w1) S(w0) ...;
 * warpgroup 1 arrives on warpgroup 0's barrier once before the loop (w0
 * starts) and warpgroup 0 takes that surplus turn back after the loop, so
 * every barrier phase completes.  Constant ids under a warp-uniform test (a
 * run-time id makes ptxas reserve all 16 barriers, docs/hopper.md "Pitfalls the code guards against").
 * PTX ISA §9.7.13.1 (bar.sync, bar.arrive). */
static tl_stmt *pp_turn(ws_build *b, bool wait, int only_wg) {
  tl_expr *wg = tl_lo_fdiv(b->m, b->loc, tl_lo_thread_index(b->m, b->loc), 128, NULL);
  tl_stmt *s[2];
  for (int w = 0; w < 2; w++) {
    tl_expr *a[2] = {I(b, WS_PP_BAR + (wait ? w : 1 - w)), I(b, 256)};
    s[w] =
        only_wg >= 0 && only_wg != w ? NULL : CALL(b, wait ? TL_INTRIN_PTX_BAR_SYNC : TL_INTRIN_PTX_BAR_ARRIVE, 2, a);
    if (!s[w] && (only_wg < 0 || only_wg == w)) return NULL;
  }
  if (!wg) return NULL;
  return only_wg >= 0 ? tl_lo_if(b->m, b->loc, BIN(b, TL_OP_EQ, wg, I(b, only_wg)), s[only_wg], NULL)
                      : tl_lo_if(b->m, b->loc, BIN(b, TL_OP_EQ, wg, I(b, 0)), s[0], s[1]);
}

/* The consumers' main loop, in place: wait for the stage, the T.gemm on it,
 * one arrival per warp on its empty barrier (each iteration's wgmma group
 * completes before its stage is released; leaving it in flight (TileLang's
 * wg_wait 1) and releasing the previous stage instead was measured slower
 * with the 3 stages that fit beside the epilogue's staging tile:
 * docs/performance.md, "Measurements behind choices in the code"). */
typedef struct ao_ctx {
  ws_build *b;
  const ws_plan *p;
} ao_ctx;
static tl_stmt *ao_stage_gemm(void *ctx, const tl_stmt *g, tl_expr *stage) {
  ao_ctx *c = ctx;
  return staged_gemm(c->b, c->p, g, stage);
}

/* tl.attention_overlap: attention_overlap.c's schedule of the loop, when
 * its body has the form; *done false (p->overlap cleared, its reason
 * kept) when not. */
static bool q_free(ws_build *b, const ws_plan *p, tl_buffer *mbar, stmt_vec *work);
static bool ws_overlap_loop(ws_build *b, ws_plan *p, tl_buffer *mbar, tl_stmt **items, int n, tl_expr *base,
                            bool *done) {
  stmt_list v = {0};
  int g1 = -1, g2 = -1;
  bool ok = true;
  for (int i = 0; ok && i < n; i++) {
    if (load_of(p, is_tile_load(items[i]) ? items[i]->u.tile.args[1].region.buffer : NULL)) continue;
    if (is_gemm(items[i])) *(g1 < 0 ? &g1 : &g2) = (int)v.len;
    ok = tl_vec_push(&v, items[i]);
  }
  ao_ctx c = {b, p};
  tl_ao_loop a = {.m = b->m,
                  .names = b->names,
                  .loop = p->loop,
                  .mbar = mbar,
                  .stages = p->stages,
                  .threads = p->threads,
                  .items = v.data,
                  .n = (int)v.len,
                  .g1 = g1,
                  .g2 = g2,
                  .stage_gemm = ao_stage_gemm,
                  .ctx = &c,
                  .base = base};
  /* a persistent grid whose epilogue does not stage O in Q's bytes frees Q
   * before the trailing P·V (p->q_freed) */
  stmt_vec q1 = {0}, q2 = {0};
  if (ok && base && !p->reuse[0]) {
    ok = q_free(b, p, mbar, &q1) && q_free(b, p, mbar, &q2);
    a.after_qk = ok ? SEQ(b, (int)q1.len, q1.data) : NULL;
    a.after_qk_empty = ok ? SEQ(b, (int)q2.len, q2.data) : NULL;
    ok = a.after_qk && a.after_qk_empty;
  }
  tl_vec_free(&q1);
  tl_vec_free(&q2);
  const char *why = NULL;
  *done = ok && tl_attention_overlap(&a, &why);
  p->q_freed = *done && a.after_qk;
  tl_vec_free(&v);
  if (!*done && why) p->overlap = false, p->overlap_why = why;
  return ok && (*done || why);
}

static bool ws_consumer_loop(ws_build *b, ws_plan *p, tl_buffer *mbar, const ws_persist *pp) {
  tl_module *m = b->m;
  tl_stmt *loop = p->loop;
  int S = p->stages;
  tl_expr *lo = loop->u.loop.mins && loop->u.loop.mins[0] ? loop->u.loop.mins[0] : I(b, 0);
  tl_expr *crel;
  const tl_sk_role *sr = pp->sk.on ? &pp->sk.cons : NULL;
  bool ap = pp->on && pp->attn; /* persistent attention: earlier tiles' k-tiles counted in kb */
  if (p->cond && !p->cnt) return false;
  tl_stmt *clet = p->cnt ? ws_let_count(b, p->cnt, &crel) /* the conditional loop (ws_cond.c) */
                         : ws_let_rel(b, loop->u.loop.vars[0], lo,
                                      sr || ap ? NULL
                                      : pp->on ? V(b, pp->j)
                                               : NULL,
                                      loop->u.loop.extents[0],
                                      sr   ? V(b, sr->base)
                                      : ap ? ws_kb_load(b, pp->kb)
                                           : NULL,
                                      &crel);
  if (sr && !ws_sk_bounds(b, loop, lo, sr)) return false;
  tl_expr *cst = tl_lo_fmod(m, b->loc, crel, S, NULL);
  /* per barrier group g: the wait goes before the first T.gemm reading its
   * tiles, the arrivals after the last (the GEMM form: around its T.gemm;
   * attention: K's stage is released after Q·Kᵀ, V's after P·V) */
  tl_stmt *wait[2] = {NULL, NULL}, *arrive[2] = {NULL, NULL};
  for (int g = 0; g < p->ngroups; g++) {
    tl_expr *full = g ? tl_lo_add(m, b->loc, cst, I(b, 2 * S * g)) : cst;
    tl_expr *wa[3] = {REF(b, mbar), full, tl_lo_fmod(m, b->loc, tl_lo_fdiv(m, b->loc, crel, S, NULL), 2, NULL)};
    tl_expr *ra[2] = {REF(b, mbar), tl_lo_add(m, b->loc, cst, I(b, 2 * S * g + S))};
    tl_expr *tid = tl_lo_thread_index(m, b->loc);
    arrive[g] = tl_lo_if(m, b->loc, BIN(b, TL_OP_EQ, tl_lo_fmod(m, b->loc, tid, 32, NULL), I(b, 0)),
                         CALL(b, TL_INTRIN_PTX_MBARRIER_ARRIVE, 2, ra), NULL);
    wait[g] = CALL(b, TL_INTRIN_PTX_MBARRIER_WAIT, 3, wa);
  }
  int n;
  tl_stmt **items = body_items(p, &n);
  bool done = false;
  if (p->overlap && pp->on && !ap) p->overlap = false, p->overlap_why = "a persistent grid";
  if (p->overlap && (!ws_overlap_loop(b, p, mbar, items, n, ap ? ws_kb_load(b, pp->kb) : NULL, &done) || done))
    return done;
  int first[2] = {-1, -1}, last[2] = {-1, -1};
  for (int i = 0; i < n; i++)
    for (int j = 0; is_gemm(items[i]) && j < p->nloads; j++)
      if (gemm_reads(items[i], p->loads[j].X)) {
        int g = p->loads[j].group;
        last[g] = i;
        first[g] = first[g] < 0 ? i : first[g];
      }
  stmt_vec v = {0};
  bool ok = clet && tl_vec_push(&v, clet);
  for (int g = 0; g < p->ngroups; g++) ok = ok && wait[g] && arrive[g];
  for (int i = 0; ok && i < n; i++) {
    if (load_of(p, is_tile_load(items[i]) ? items[i]->u.tile.args[1].region.buffer : NULL)) continue;
    for (int g = 0; ok && g < p->ngroups; g++)
      if (i == first[g]) ok = tl_vec_push(&v, wait[g]);
    if (ok && p->pingpong && is_gemm(items[i])) ok = tl_vec_push(&v, pp_turn(b, true, -1)) && v.data[v.len - 1];
    if (ok) ok = tl_vec_push(&v, is_gemm(items[i]) ? staged_gemm(b, p, items[i], cst) : items[i]);
    if (ok && p->pingpong && is_gemm(items[i])) ok = tl_vec_push(&v, pp_turn(b, false, -1)) && v.data[v.len - 1];
    for (int g = 0; ok && g < p->ngroups; g++)
      if (i == last[g]) ok = tl_vec_push(&v, arrive[g]);
  }
  loop->u.loop.kind = TL_LOOP_SERIAL;
  loop->u.loop.num_stages = -1;
  loop->u.loop.body = !ok      ? NULL
                      : p->cnt ? ws_cond_iter(b, p->cond->u.ifs.cond, p->cnt, &v)
                               : SEQ(b, (int)v.len, v.data);
  tl_vec_free(&v);
  return loop->u.loop.body != NULL;
}

/* setmaxnreg for the two roles, when the accumulators take 128 or more
 * registers per consumer thread (docs/hopper.md "The kernel's shape"): the producer keeps 40
 * per thread, the consumers share the rest, at most 240.  It gains a few
 * percent on large tiles, whose block has the SM to itself anyway, while
 * smaller tiles (64x64 at M = 128) run several blocks per SM, which the
 * reallocation would prevent (docs/performance.md, "Measurements behind
 * choices in the code").  False
 * on OOM; *dec, *inc stay NULL when not used. */
static bool ws_maxnreg(ws_build *b, const ws_plan *p, const tl_target *target, tl_stmt **dec, tl_stmt **inc) {
  int64_t acc = 0, T = p->threads;
  for (int g = 0; g < 2; g++) {
    const tl_stmt *gs = g ? p->gemm2 : p->gemm;
    tl_buffer *C = gs ? gs->u.tile.args[2].region.buffer : NULL;
    int64_t cm = 0, cn = 0;
    if (!C || (g && C == p->gemm->u.tile.args[2].region.buffer)) continue;
    tl_expr_is_const_int(C->shape[0], &cm);
    tl_expr_is_const_int(C->shape[1], &cn);
    acc += cm * cn / T;
  }
  *dec = *inc = NULL;
  if (tl_lo_has_call(p->kernel, TL_INTRIN_NO_SET_MAX_NREG)) return true; /* T.no_set_max_nreg() */
  int64_t give = (target->regs_per_sm - 128 * 40) / T / 8 * 8;
  if (give > 240) give = 240;
  /* attention: whenever it raises the consumers' share of the register file
   * (the register count at entry is regs_per_sm / all threads): the softmax's
   * fragments come on top of the accumulators (block_M 256 on 512 threads
   * spilled 376 bytes at the 96 registers of the entry count, ptxas 13) */
  int64_t entry = target->regs_per_sm / (T + 128) / 8 * 8;
  if (p->attn ? give <= (entry > 255 ? 255 : entry) : acc < 128) return true;
  tl_expr *pa[2] = {I(b, 40), tl_ir_int(b->m, b->loc, TL_BOOL, 0)};
  tl_expr *ca[2] = {I(b, give), tl_ir_int(b->m, b->loc, TL_BOOL, 1)};
  *dec = CALL(b, TL_INTRIN_PTX_SETMAXNREG, 2, pa);
  *inc = CALL(b, TL_INTRIN_PTX_SETMAXNREG, 2, ca);
  return *dec && *inc;
}

/* The tiles: a stage dimension and the TMA/wgmma image layout. */
static bool ws_stage_tiles(ws_build *b, const ws_plan *p) {
  for (int j = 0; j < p->npre; j++) { /* attention: Q, unstaged */
    tl_buffer *X = p->pre[j].X;
    if (X->scope == TL_SCOPE_SHARED) X->scope = TL_SCOPE_SHARED_DYN;
    if (!tl_smem_layout_set_wgmma(b->m, X, p->pre[j].sw)) return false;
  }
  for (int i = 0; i < p->nloads; i++) {
    tl_buffer *X = p->loads[i].X;
    tl_expr **sh = tl_arena_alloc(&b->m->arena, sizeof(tl_expr *) * 3);
    if (!sh || !(sh[0] = I(b, p->stages))) return false;
    sh[1] = X->shape[0];
    sh[2] = X->shape[1];
    X->shape = sh;
    X->ndim = 3;
    X->strides = NULL;
    if (X->scope == TL_SCOPE_SHARED) X->scope = TL_SCOPE_SHARED_DYN;
    if (!tl_smem_layout_set_wgmma(b->m, X, p->loads[i].sw)) return false;
  }
  return true;
}

/* Stream-K: the workspace allocations join the prefix, and the fixup
 * (tl_sk_fixup) goes after the consumers' k-loop with the statements after
 * the loop (the epilogue) inside it. */
static bool sk_place(ws_build *b, const ws_plan *p, ws_persist *pp, stmt_vec *pre, stmt_vec *work) {
  tl_stmt *al[4];
  if (!tl_sk_allocs(b->m, b->loc, &pp->sk, al)) return false;
  for (int i = 0; i < 4; i++)
    if (!tl_vec_push(pre, al[i])) return false;
  size_t li = 0;
  while (li < work->len && work->data[li] != p->loop) li++;
  if (li == work->len) return false;
  size_t ne = work->len - li - 1;
  tl_stmt *epi = SEQ(b, (int)ne, work->data + li + 1);
  tl_stmt *fix = epi ? tl_sk_fixup(b->m, b->names, b->loc, &pp->sk, V(b, pp->b), V(b, pp->j),
                                   p->gemm->u.tile.args[2].region.buffer, epi)
                     : NULL;
  if (!fix) return false;
  work->data[li + 1] = fix;
  work->len = li + 2;
  return true;
}

/* Persistent attention: each consumer warp arrives on the free barrier of
 * each pre-loop tile (mbar[2SG + npre + j]) after its last use of the
 * tile's bytes, so that the producer may load the next tile's: lane 0 (T /
 * 32 arrivals) when only wgmma read them (their completion waits are
 * warpgroup-wide), every thread (T arrivals) when O_shared's epilogue reads
 * them too (each lane's ld.shared before its own arrival; 256 arrivals on
 * one mbarrier serialize, so not where lane 0 suffices). */
static int64_t q_free_count(const ws_plan *p) { return p->reuse[0] ? p->threads : p->threads / 32; }
static bool q_free(ws_build *b, const ws_plan *p, tl_buffer *mbar, stmt_vec *work) {
  /* O_shared staged in Q's bytes: its generic-proxy writes ordered before
   * the next TMA load's async-proxy writes (PTX ISA §9.7.13.4) */
  tl_stmt *f = p->reuse[0] ? CALL(b, TL_INTRIN_PTX_FENCE_PROXY_ASYNC, 0, NULL) : NULL;
  if (p->reuse[0] && (!f || !tl_vec_push(work, f))) return false;
  for (int j = 0; j < p->npre; j++) {
    tl_expr *ra[2] = {REF(b, mbar), I(b, 2 * p->stages * p->ngroups + p->npre + j)};
    tl_stmt *a = CALL(b, TL_INTRIN_PTX_MBARRIER_ARRIVE, 2, ra);
    if (a && !p->reuse[0])
      a = tl_lo_if(b->m, b->loc,
                   BIN(b, TL_OP_EQ, tl_lo_fmod(b->m, b->loc, tl_lo_thread_index(b->m, b->loc), 32, NULL), I(b, 0)), a,
                   NULL);
    if (!a || !tl_vec_push(work, a)) return false;
  }
  return true;
}

/* Attention, statement i of the kernel body on its way into the consumers'
 * part: a pre-loop tile copy becomes the wait for its TMA load (mbar[2SG + j],
 * phase 0); a statement after the loop that uses shared memory (the
 * epilogue's staging through O_shared) gets a T.sync_threads() before it,
 * which tl_ws_finish makes the consumers' named barrier (the barriers pass
 * does not look inside the role branches). */
static bool attn_stmt(ws_build *b, const ws_plan *p, tl_buffer *mbar, const ws_persist *pp, int i, tl_stmt **s,
                      stmt_vec *work) {
  for (int j = 0; j < p->npre && p->reuse[j]; j++) { /* plan_reuse: O_shared's uses become Q's */
    if ((*s)->kind == TL_STMT_ALLOC && (*s)->u.alloc.buffer == p->reuse[j]) return *s = NULL, true;
    for (int o = 0; i > p->li && (*s)->kind == TL_STMT_TILE && o < (*s)->u.tile.nargs; o++)
      if ((*s)->u.tile.args[o].kind == TL_OPND_REGION && (*s)->u.tile.args[o].region.buffer == p->reuse[j])
        (*s)->u.tile.args[o].region.buffer = p->pre[j].X;
  }
  for (int j = 0; j < p->npre; j++)
    if (p->pre_at[j] == i) {
      /* persistent: tile j's load completes phase j % 2 */
      tl_expr *wa[3] = {REF(b, mbar), I(b, 2 * p->stages * p->ngroups + j),
                        pp->on ? tl_lo_fmod(b->m, b->loc, V(b, pp->j), 2, NULL) : I(b, 0)};
      return (*s = CALL(b, TL_INTRIN_PTX_MBARRIER_WAIT, 3, wa)) != NULL;
    }
  if (i > p->li && uses_shared(*s))
    return tl_vec_push(work, tl_lo_sync_threads(b->m, b->loc)) && work->data[work->len - 1];
  return true;
}

/* plan_c_stage's pair `T.copy(F, X)` (w), `T.copy(X, C[..])` (r) as one
 * `T.copy(F, C[..])` (r's attributes); NULL on OOM. */
static tl_stmt *c_stage_copy(ws_build *b, const tl_stmt *w, const tl_stmt *r) {
  tl_stmt *c = tl_ir_stmt(b->m, w->loc, TL_STMT_TILE);
  tl_operand *args = tl_arena_alloc(&b->m->arena, 2 * sizeof *args);
  if (!c || !args) return NULL;
  *c = *r;
  c->loc = w->loc;
  args[0] = w->u.tile.args[0];
  args[1] = r->u.tile.args[1];
  c->u.tile.args = args;
  return c;
}

static tl_stmt *ws_rewrite(tl_module *m, tl_primfunc *f, ws_plan *p, tl_names *names, const tl_target *target,
                           tl_diag *d, bool *persistent, char *sk_remark, size_t sk_remark_sz) {
  ws_build bb = {.m = m, .loc = p->loop->loc, .names = names}, *b = &bb;
  int64_t T = p->threads;
  ws_persist pp;
  memset(&pp, 0, sizeof pp); /* ws_persist_plan may not run */
  tl_map_init(&pp.subst);
  /* attention runs one tile per block unless tl.attention_persistent or
   * the default schedule says otherwise */
  *persistent =
      (!p->attn || f->pass_configs.attention_persistent || p->auto_sched) && ws_persist_plan(b, f, target, p, &pp);
  if (p->auto_sched) *persistent = ws_auto_schedule(p, &pp, *persistent, target);
  if (!*persistent) {
    tl_map_free(&pp.subst);
    memset(&pp, 0, sizeof pp);
    tl_map_init(&pp.subst);
  }
  if (b->oom) return NULL;
  /* a block may run several output tiles unless the grid is static and
   * has no more tiles than SMs (lower_epilogue.c stores by TMA only then) */
  int64_t gx, gy;
  ws_annot *wa = tl_func_annot_add(m, f, &ws_annot_key, sizeof(ws_annot));
  if (!wa) return NULL;
  wa->multi_tile = *persistent && !p->attn &&
                   !(tl_expr_is_const_int(pp.gx, &gx) && tl_expr_is_const_int(pp.gy, &gy) && gx * gy <= target->sms);
  stmt_vec pre = {0}, cons = {0}, work = {0};
  tl_buffer *mbar = NULL;
  tl_stmt *dec = NULL, *inc = NULL, *producer = NULL, *nb = NULL;
  bool ap = pp.on && p->attn;
  tl_expr *n_loop = p->loop->u.loop.extents[0]; /* before ws_consumer_loop rewrites the loop */
  tl_buffer *reuse0 = p->reuse[0];
  if (ap) { /* O_shared takes its own bytes where they fit, so Q's next load overlaps the epilogue */
    p->reuse[0] = NULL;
    int64_t smem = attn_smem_bytes(p);
    if (smem < 0 || smem > target->max_smem_per_block) p->reuse[0] = reuse0;
    else if (reuse0) { /* its own bytes in Q's image layout (the epilogue's accesses as with reuse) */
      if (reuse0->scope == TL_SCOPE_SHARED) reuse0->scope = TL_SCOPE_SHARED_DYN;
      if (!tl_smem_layout_set_wgmma(m, reuse0, p->pre[0].sw)) return NULL;
    }
  }
  bool ok = ws_barriers(b, p->stages, p->ngroups, p->npre, ap ? q_free_count(p) : 0, T, &mbar, &pre) &&
            (!ap || (pp.kb = ws_kb_new(b, "ws_kbase", &cons))) &&
            (!p->cond || (p->cnt = ws_kb_new(b, "ws_count", &cons))) && (producer = ws_producer(b, p, mbar, &pp, d)) &&
            ws_consumer_loop(b, p, mbar, &pp) && ws_maxnreg(b, p, target, &dec, &inc);
  if (ok && dec) {
    tl_stmt *ps[2] = {dec, producer};
    ok = (producer = SEQ(b, 2, ps)) && tl_vec_push(&cons, inc);
  }
  /* the kernel body: the allocations, LETs and T.use_swizzle before the
   * loop stay in front (persistent: T.use_swizzle is the tile loops'),
   * everything else is the consumers' (per tile when persistent) */
  tl_stmt *body = p->kernel->u.kernel.body;
  for (int i = 0; ok && i < body->u.seq.n; i++) {
    tl_stmt *s = body->u.seq.stmts[i];
    if (p->epi_tile && (i == p->epi_alloc || i == p->epi_at + 1)) continue; /* plan_c_stage: fused */
    if (p->epi_tile && i == p->epi_at && !(s = c_stage_copy(b, body->u.seq.stmts[i], body->u.seq.stmts[i + 1])))
      ok = false;
    if (ok && !p->attn && i > p->li && uses_shared(s)) /* the consumers' barrier (tl_ws_finish) */
      ok = tl_vec_push(&work, tl_lo_sync_threads(m, b->loc)) && work.data[work.len - 1];
    if (!ok) break;
    bool swz = s->kind == TL_STMT_TILE && s->u.tile.op == TL_TILE_USE_SWIZZLE;
    bool prefix = i < p->li && (s->kind == TL_STMT_ALLOC || s->kind == TL_STMT_LET || swz);
    for (int l = 0; ap && l < pp.nlets; l++) prefix = prefix && s != pp.lets[l]; /* per tile */
    if (swz && pp.on) continue;
    if (p->attn) ok = attn_stmt(b, p, mbar, &pp, i, &s, &work);
    if (ok && p->pingpong && i == p->li) ok = tl_vec_push(&work, pp_turn(b, false, 1)) && work.data[work.len - 1];
    if (ok && s) ok = prefix ? tl_vec_push(&pre, s) : tl_vec_push(&work, s);
    if (ok && p->pingpong && i == p->li) ok = tl_vec_push(&work, pp_turn(b, true, 0)) && work.data[work.len - 1];
    if (ok && ap && i == p->li) /* the k-tiles counted; Q free unless O_shared stages in its bytes */
      ok = tl_vec_push(&work, ws_kb_add(b, pp.kb, n_loop)) && work.data[work.len - 1] &&
           (p->reuse[0] || p->q_freed || q_free(b, p, mbar, &work));
  }
  if (ok && ap && p->reuse[0]) ok = q_free(b, p, mbar, &work);
  if (ok && pp.sk.on) ok = sk_place(b, p, &pp, &pre, &work);
  tl_stmt *per_tile = ok ? SEQ(b, (int)work.len, work.data) : NULL;
  if (per_tile && pp.on)
    per_tile = ws_tile_loop(b, &pp, pp.j, pp.bx, pp.by, pp.bz, per_tile, d, pp.sk.on ? &pp.sk.cons : NULL);
  ok = ok && per_tile && tl_vec_push(&cons, per_tile);
  tl_stmt *consumer = ok ? SEQ(b, (int)cons.len, cons.data) : NULL;
  tl_stmt *branch =
      consumer ? tl_lo_if(m, b->loc, BIN(b, TL_OP_GE, tl_lo_thread_index(m, b->loc), I(b, T)), producer, consumer)
               : NULL;
  if (branch && tl_vec_push(&pre, branch)) nb = SEQ(b, (int)pre.len, pre.data);
  tl_vec_free(&pre);
  tl_vec_free(&cons);
  tl_vec_free(&work);
  tl_map_free(&pp.subst);
  if (pp.on) snprintf(sk_remark, sk_remark_sz, "%s%s", pp.sk.on ? "stream-K: " : "no stream-K: ", pp.sk_why);
  if (!nb || !ws_stage_tiles(b, p)) return NULL;
  if (pp.on) { /* the launch: min(tiles, SMs) blocks along x (stream-K: min(units, SMs)) */
    tl_stmt *k = p->kernel;
    if (pp.sk.on) pp.blocks = I(b, pp.sk.blocks);
    pp.bx->kind = TL_VAR_LET;
    pp.by->kind = TL_VAR_LET;
    if (pp.bz) pp.bz->kind = TL_VAR_LET;
    k->u.kernel.ngrid = 1;
    k->u.kernel.grid[0] = pp.blocks;
    k->u.kernel.block_vars[0] = pp.b;
    for (int g = 1; g < 3; g++) {
      k->u.kernel.grid[g] = NULL;
      k->u.kernel.block_vars[g] = NULL;
    }
  }
  wa->producer_threads = 128;
  p->kernel->u.kernel.body = nb;
  return nb;
}

bool tl_lower_warp_specialize(tl_module *m, tl_primfunc *f, const tl_target *target, tl_diag *d) {
  tl_stmt *k = tl_ir_find_kernel(f->body);
  if (!k) return true;
  const char *why = tl_hopper_path_refusal(target, &f->pass_configs);
  ws_plan p = {0}; /* read below (p.attn) even when ws_match fails: zeroed, not indeterminate (UBSan) */
  tl_stmt *loop = NULL;
  char why_buf[2][400];
  bool match = !why && ws_match(f, target, k, &p, &why, &loop, why_buf);
  /* the GEMM form without shared memory after the loop needs no more than
   * the mma.sync path's pipeline */
  int64_t smem = match && (p.attn || p.epi_shared) ? attn_smem_bytes(&p) : 0;
  char smem_why[200];
  const char *form = p.attn ? "attention loop's" : "GEMM loop's";
  if (match && (smem < 0 || smem > target->max_smem_per_block)) {
    match = false;
    snprintf(smem_why, sizeof smem_why,
             "the %s shared tiles would take %lld bytes on this path "
             "(%d stages), more than the %d a block may use",
             form, (long long)smem, p.stages, target->max_smem_per_block);
    if (smem < 0) snprintf(smem_why, sizeof smem_why, "the %s shared tiles are not static", form);
    why = smem_why;
  }
  for (int i = 0; !loop && k->u.kernel.body && k->u.kernel.body->kind == TL_STMT_SEQ && i < k->u.kernel.body->u.seq.n;
       i++) { /* the remark's location when the target or a config ruled the path out */
    tl_stmt *s = k->u.kernel.body->u.seq.stmts[i];
    if (s && s->kind == TL_STMT_FOR && s->u.loop.kind == TL_LOOP_PIPELINED) loop = s;
  }
  if (!loop && !match) tl_lo_find_while(k->u.kernel.body, &loop); /* a T.Pipelined loop inside a while loop */
  if (match && p.threads + 128 > target->max_threads) {
    match = false;
    why = "the kernel's threads plus a producer warpgroup exceed the block limit";
  }
  if (!match) {
    if (loop && d->remarks_on)                            /* kernels without a pipelined loop get no remark */
      tl_gemm_wgmma_remark(d, loop->loc, f, target, why); /* cp.async + wgmma or mma.sync: gemm_wgmma.c */
    return true;
  }
  /* more consumer warpgroups than the kernel asks for (ws_attn_threads): the tile passes after this one
   * partition over the new count */
  if (p.asked_threads && !(k->u.kernel.threads = tl_lo_int(m, k->loc, p.threads))) {
    tl_error(d, f->loc, "out of memory while warp-specializing");
    return false;
  }
  tl_names names;
  if (!tl_names_collect(&names, m, f)) {
    tl_error(d, f->loc, "out of memory while warp-specializing");
    return false;
  }
  p.pingpong = p.attn && f->pass_configs.attention_pingpong && p.threads == 256;
  p.overlap_ok = p.attn && !p.pingpong && p.gemm2 &&
                 p.gemm2->u.tile.args[0].region.buffer->scope == TL_SCOPE_FRAGMENT && p.ngroups == 2;
  p.overlap = p.overlap_ok && f->pass_configs.attention_overlap;
  p.overlap_why = !f->pass_configs.attention_overlap ? NULL
                  : p.pingpong                       ? "tl.attention_pingpong is set"
                               : "it needs Q·Kᵀ and P·V with P in registers, K and V in their own groups";
  {
    const tl_pass_configs *pc = &f->pass_configs;
    p.auto_sched = p.attn && !tl_pass_config_any_schedule_given(pc);
    if (p.attn && !p.auto_sched && p.overlap_ok && !p.overlap)
      p.overlap_why = tl_pass_config_given(pc, TL_PC_ATTENTION_OVERLAP)
                          ? "tl.attention_overlap is False"
                          : "another attention schedule config is given and tl.attention_overlap is not";
  }
  if (p.pingpong) /* docs/performance.md, "Measurements behind choices in the code" */
    tl_diag_report(d, TL_DIAG_WARNING, p.loop->loc,
                   "tl.attention_pingpong is experimental: compute-sanitizer racecheck reports shared-memory hazards "
                   "in its epilogue on the H200 (not yet explained; the outputs were correct) and it measured no "
                   "faster than the default schedule (issue 19)");
  bool persistent = false;
  char sk_remark[300] = "";
  tl_stmt *r = ws_rewrite(m, f, &p, &names, target, d, &persistent, sk_remark, sizeof sk_remark);
  tl_names_free(&names);
  if (!r) {
    tl_error(d, f->loc, "out of memory while warp-specializing");
    return false;
  }
  char widened[160] = "";
  if (p.asked_threads)
    snprintf(widened, sizeof widened,
             " (%lld threads where the kernel asks for %lld: block_M is 64 x the consumer warpgroups, and nothing "
             "in the kernel depends on its thread count)",
             (long long)p.threads, (long long)p.asked_threads);
  if (d->remarks_on && p.attn)
    tl_remark(d, p.loop->loc,
              "T.Pipelined attention loop takes the Hopper path: %d-stage TMA pipeline on mbarriers (%d tile%s a "
              "stage, %s; %d tile%s loaded once before the loop%s%s), a producer warpgroup, "
              "%s over %lld consumer warpgroups of one m64 block each%s%s%s%s%s%s%s",
              p.stages, p.nloads, p.nloads == 1 ? "" : "s",
              p.ngroups == 2 ? "each released after the last T.gemm that reads it" : "released after the last T.gemm",
              p.npre, p.npre == 1 ? "" : "s", p.reuse[0] ? ", whose bytes stage " : "",
              p.reuse[0] ? p.reuse[0]->name : "",
              !p.gemm2                                                            ? "T.gemm as wgmma"
              : p.gemm2->u.tile.args[0].region.buffer->scope == TL_SCOPE_FRAGMENT ? "two T.gemm as wgmma (ss, then rs)"
                                                                                  : "two T.gemm as wgmma (ss)",
              (long long)(p.threads / 128), widened,
              p.pingpong                           ? ", taking turns at the tensor cores (ping-pong)"
              : f->pass_configs.attention_pingpong ? " (no ping-pong: it needs 2 consumer warpgroups)"
                                                   : "",
              p.overlap ? ", the softmax of each key block overlapping its own P·V of the one before (overlap)" : "",
              !p.overlap && p.overlap_why ? " (no overlap: " : "", !p.overlap && p.overlap_why ? p.overlap_why : "",
              !p.overlap && p.overlap_why ? ")" : "",
              persistent ? "; a persistent grid of min(tiles, SMs) blocks, each looping over output tiles" : "");
  else if (d->remarks_on)
    tl_remark(d, p.loop->loc,
              "T.Pipelined GEMM loop takes the Hopper path: %d-stage TMA pipeline on mbarriers, a producer "
              "warpgroup, T.gemm as wgmma over %lld consumer warpgroups%s%s%s%s%s%s%s",
              p.stages, (long long)(p.threads / 128), persistent ? ", a persistent grid of min(tiles, SMs) blocks" : "",
              p.epi_shared ? ""
              : tl_ws_multi_tile(f) && !f->pass_configs.disable_tma_store
                  ? " (several tiles a block: a 16-bit C tile is stored by TMA, stmatrix into shared memory first)"
              : persistent ? " (one tile a block: C is stored with st.global)"
                           : "",
              p.epi_tile ? "; C staged through " : "", p.epi_tile ? p.epi_tile->name : "",
              p.epi_tile     ? " is stored from the fragment as above"
              : p.epi_shared ? "; the statements after the loop that use shared memory synchronize on the consumers' "
                               "named barrier"
                             : "",
              *sk_remark ? "; " : "", sk_remark);
  return true;
}

/* ------------------------------------------------- after lower-tile-ops */
int64_t tl_ws_producer_threads(const tl_primfunc *f) {
  const ws_annot *a = tl_func_annot(f, &ws_annot_key);
  return a ? a->producer_threads : 0;
}

bool tl_ws_multi_tile(const tl_primfunc *f) {
  const ws_annot *a = tl_func_annot(f, &ws_annot_key);
  return a && a->multi_tile;
}

bool tl_ws_finish(tl_module *m, tl_primfunc *f) {
  ws_annot *wa = tl_func_annot(f, &ws_annot_key);
  tl_stmt *k = wa && wa->producer_threads > 0 ? tl_ir_find_kernel(f->body) : NULL;
  if (!k) return true;
  int64_t T = 0;
  if (!tl_expr_is_const_int(k->u.kernel.threads, &T)) return false;
  /* the consumer branch: the else of the top-level `if tid >= T` */
  tl_stmt *body = k->u.kernel.body;
  for (int i = 0; body && body->kind == TL_STMT_SEQ && i < body->u.seq.n; i++) {
    tl_stmt *s = body->u.seq.stmts[i];
    if (s && s->kind == TL_STMT_IF && s->u.ifs.else_s && !ws_consumer_syncs(m, s->u.ifs.else_s, T, 0)) return false;
    if (s && s->kind == TL_STMT_IF && f->pass_configs.attention_pingpong && !ws_pp_hoist(m, s->u.ifs.else_s, 0))
      return false;
    if (s && s->kind == TL_STMT_IF && s->u.ifs.else_s && tl_lo_has_call(s->u.ifs.else_s, TL_INTRIN_PTX_TMA_STORE)) {
      /* the TMA-store epilogue's issuers wait for their last stores' reads
       * of shared memory only here (lower_epilogue.c) */
      tl_expr *w[2] = {tl_lo_int(m, s->loc, 0), tl_lo_int(m, s->loc, 1)};
      tl_stmt *pair[2] = {
          s->u.ifs.else_s,
          w[0] && w[1] ? tl_lo_eval(m, s->loc, tl_ir_call(m, s->loc, TL_INTRIN_PTX_BULK_WAIT_GROUP, 2, w)) : NULL};
      if (!pair[1] || !(s->u.ifs.else_s = tl_ir_seq(m, s->loc, 2, pair))) return false;
    }
  }
  k->u.kernel.threads = tl_lo_int(m, k->loc, T + wa->producer_threads);
  wa->producer_threads = 0;
  return k->u.kernel.threads != NULL;
}
