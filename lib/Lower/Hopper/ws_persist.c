/* The persistent grid of the warp-specialize pass (lib/Lower/Hopper/warp_specialize.c
 * states the pass): which kernels run on one block per SM looping over their
 * output tiles, the tile order (rasterized for GEMMs, longest first for
 * causal attention), the k-tile counters that carry the mbarrier ring's
 * position across tiles, and the attention form's default schedule.
 * Requires the plan ws_match made; guarantees only the statements the
 * functions build (ws_internal.h states each). */
#include <stdio.h>
#include <string.h>

#include "Lower/Hopper/ws_internal.h"

/* ------------------------------------------------------- persistent grid */

static bool mentions_block_vars(const tl_expr *e, const tl_stmt *k) {
  for (int d = 0; d < k->u.kernel.ngrid && d < 3; d++)
    if (k->u.kernel.block_vars[d] && !tl_expr_free_of(e, k->u.kernel.block_vars[d])) return true;
  return false;
}

/* Does e depend on the tile: a block variable or a LET of pp->lets? */
static bool tile_dep(const ws_persist *pp, const tl_expr *e, const tl_stmt *k) {
  if (mentions_block_vars(e, k)) return true;
  for (int i = 0; i < pp->nlets; i++)
    if (!tl_expr_free_of(e, pp->lets[i]->u.let.var)) return true;
  return false;
}

/* Can kernel k of plan p run persistently?  Sets up pp when it can. */
bool ws_persist_plan(ws_build *b, const tl_primfunc *f, const tl_target *target, const ws_plan *p, ws_persist *pp) {
  tl_stmt *k = p->kernel, *loop = p->loop;
  memset(pp, 0, sizeof *pp);
  tl_map_init(&pp->subst);
  int ng = k->u.kernel.ngrid;
  if (target->sms < 1 || !(ng == 2 || (p->attn && ng == 3))) return false;
  for (int d = 0; d < ng; d++)
    if (!k->u.kernel.block_vars[d]) return false;
  tl_stmt *body = k->u.kernel.body;
  for (int i = 0; i < p->li; i++) {
    const tl_stmt *s = body->u.seq.stmts[i];
    if (s->kind == TL_STMT_LET && tile_dep(pp, s->u.let.value, k)) {
      if (!p->attn || pp->nlets == WS_MAX_LETS) return false;
      pp->lets[pp->nlets++] = s;
    }
    if (s->kind == TL_STMT_TILE && s->u.tile.op == TL_TILE_USE_SWIZZLE) pp->swz = s;
  }
  if (pp->swz && ng == 3) return false; /* T.use_swizzle rasterizes a 2-D grid */
  bool dep = tile_dep(pp, loop->u.loop.extents[0], k) ||
             (loop->u.loop.mins && loop->u.loop.mins[0] && tile_dep(pp, loop->u.loop.mins[0], k));
  if (dep && !p->attn) return false;
  pp->attn = p->attn;
  pp->lpt = dep;
  tl_module *m = b->m;
  pp->bx = k->u.kernel.block_vars[0];
  pp->by = k->u.kernel.block_vars[1];
  pp->b = tl_names_fresh_var(b->names, b->loc, "ws_block", TL_INT32, TL_VAR_BLOCK);
  pp->bxp = tl_names_fresh_var(b->names, b->loc, "bx_p", TL_INT32, TL_VAR_LET);
  pp->byp = tl_names_fresh_var(b->names, b->loc, "by_p", TL_INT32, TL_VAR_LET);
  pp->j = tl_names_fresh_var(b->names, b->loc, "ws_tile", TL_INT32, TL_VAR_LOOP);
  pp->jp = tl_names_fresh_var(b->names, b->loc, "ws_tile_p", TL_INT32, TL_VAR_LOOP);
  pp->gx = tl_lo_cast(m, b->loc, TL_INT32, k->u.kernel.grid[0]);
  pp->gy = tl_lo_cast(m, b->loc, TL_INT32, k->u.kernel.grid[1]);
  if (!pp->b || !pp->bxp || !pp->byp || !pp->j || !pp->jp || !pp->gx || !pp->gy) return false;
  if (ng == 3) {
    pp->bz = k->u.kernel.block_vars[2];
    pp->bzp = tl_names_fresh_var(b->names, b->loc, "bz_p", TL_INT32, TL_VAR_LET);
    pp->gz = tl_lo_cast(m, b->loc, TL_INT32, k->u.kernel.grid[2]);
    if (!pp->bzp || !pp->gz || !tl_map_put(&pp->subst, pp->bz, V(b, pp->bzp))) return false;
  }
  tl_expr *tiles = BIN(b, TL_OP_MUL, pp->gx, pp->gy);
  if (pp->gz) tiles = BIN(b, TL_OP_MUL, tiles, pp->gz);
  tl_expr *mm[2] = {tiles, I(b, target->sms)};
  pp->blocks = tl_ir_call(m, b->loc, TL_INTRIN_MIN, 2, mm);
  /* the block's tiles: ceildiv(tiles - b, blocks) (b < blocks <= tiles);
   * longest first: ceildiv(tiles, blocks) rounds, the last one guarded */
  tl_expr *cd[2] = {pp->lpt ? tiles : BIN(b, TL_OP_SUB, tiles, V(b, pp->b)), pp->blocks};
  pp->count = tl_ir_call(m, b->loc, TL_INTRIN_CEILDIV, 2, cd);
  if (!pp->blocks || !pp->count || !tl_map_put(&pp->subst, pp->bx, V(b, pp->bxp)) ||
      !tl_map_put(&pp->subst, pp->by, V(b, pp->byp)))
    return false;
  for (int i = 0; i < pp->nlets; i++) {
    const tl_var *v = pp->lets[i]->u.let.var;
    pp->lets_p[i] = tl_names_fresh_var(b->names, b->loc, v->name, v->dtype, TL_VAR_LET);
    if (!pp->lets_p[i] || !tl_map_put(&pp->subst, v, V(b, pp->lets_p[i]))) return false;
  }
  pp->on = true;
  if (p->attn) return true; /* no stream-K for attention */
  if (p->cond) {            /* its segments would split k-tiles that may not be taken (ws_cond.c) */
    snprintf(pp->sk_why, sizeof pp->sk_why, "the loop body is conditional (`if COND:`)");
    return true;
  }
  /* stream-K (lib/Lower/Hopper/stream_k.c) for a static grid and k-loop */
  int64_t gx, gy, n;
  const tl_buffer *C = p->gemm->u.tile.args[2].region.buffer;
  const char *pro = tl_sk_prologue_check(body->u.seq.stmts, p->li, C);
  if (pro) snprintf(pp->sk_why, sizeof pp->sk_why, "%s", pro);
  else if (!tl_expr_is_const_int(pp->gx, &gx) || !tl_expr_is_const_int(pp->gy, &gy) ||
           !tl_expr_is_const_int(loop->u.loop.extents[0], &n))
    snprintf(pp->sk_why, sizeof pp->sk_why, "the grid or the k-loop's extent is not static");
  else if (!tl_sk_plan(m, b->names, b->loc, target->sms, !f->pass_configs.enable_stream_k, gx * gy, n, C, &pp->sk,
                       pp->sk_why, sizeof pp->sk_why))
    b->oom = true;
  return true;
}

/* The persistent grid's tile order when the kernel has no T.use_swizzle:
 * TileLang's row rasterization in panels of 10 grid rows (rasterize.c), so
 * that the blocks running together share A and B tiles in L2.  Panels of 4,
 * 10 or 16 rows measured alike, and faster than none (docs/performance.md,
 * "Measurements behind choices in the code"); 10 is what TileLang's
 * examples use. */
#define TL_WS_DEFAULT_PANEL 10

/* for j in T.serial(count): <x, y = tile j's block indices>; body */
/* The tile order of a 3-D grid (attention: M blocks, heads, batch), or of
 * a kernel whose k-loop's extent depends on the tile (lpt, causal
 * attention, where the extent grows with bx): tile t is (x, y, z) with x
 * fastest, so that the blocks running together work on a few heads and
 * share their K and V in L2 (at (8, 32, 1024) reading K and V once per
 * tile from DRAM would take about as long as the kernel); lpt: x runs from
 * the last M block (the longest loop) down, and round j of the block takes
 * t = j * blocks + b on even rounds, j * blocks + blocks - 1 - b on odd
 * ones (snake order), so that a block that got a long tile in one round
 * gets a short one in the next (a static schedule within 3% of the ideal
 * at (8, 32, 1024) and (1, 32, 4096), where round-robin without the snake
 * is 22% and 10% off); the tiles past the grid in the last round are
 * skipped (*guard: t < tiles). */
static bool tile_xyz(ws_build *b, ws_persist *pp, tl_var *j, tl_var *x, tl_var *y, tl_var *z, tl_stmt **st, int *n,
                     tl_expr **guard) {
  tl_module *m = b->m;
  tl_expr *t = BIN(b, TL_OP_ADD, V(b, pp->b), BIN(b, TL_OP_MUL, V(b, j), pp->blocks));
  *guard = NULL;
  if (pp->lpt) {
    tl_var *tv = tl_names_fresh_var(b->names, b->loc, "ws_t", TL_INT32, TL_VAR_LET);
    tl_expr *odd = BIN(b, TL_OP_EQ, tl_lo_fmod(m, b->loc, V(b, j), 2, NULL), I(b, 1));
    tl_expr *back = BIN(b, TL_OP_SUB, BIN(b, TL_OP_SUB, pp->blocks, I(b, 1)), V(b, pp->b));
    tl_expr *pos = odd && back ? tl_ir_select(m, b->loc, odd, back, V(b, pp->b)) : NULL;
    if (!tv || !pos) return false;
    st[(*n)++] = tl_lo_let(m, b->loc, tv, BIN(b, TL_OP_ADD, BIN(b, TL_OP_MUL, V(b, j), pp->blocks), pos));
    t = V(b, tv);
    tl_expr *tiles = BIN(b, TL_OP_MUL, pp->gx, pp->gy);
    if (pp->gz) tiles = BIN(b, TL_OP_MUL, tiles, pp->gz);
    *guard = BIN(b, TL_OP_LT, t, tiles);
    tl_expr *rest = BIN(b, TL_OP_FLOORDIV, t, pp->gx);
    st[(*n)++] = tl_lo_let(m, b->loc, x,
                           BIN(b, TL_OP_SUB, BIN(b, TL_OP_SUB, pp->gx, I(b, 1)), BIN(b, TL_OP_FLOORMOD, t, pp->gx)));
    st[(*n)++] = tl_lo_let(m, b->loc, y, pp->gz ? BIN(b, TL_OP_FLOORMOD, rest, pp->gy) : rest);
    if (pp->gz) st[(*n)++] = tl_lo_let(m, b->loc, z, BIN(b, TL_OP_FLOORDIV, rest, pp->gy));
  } else {
    st[(*n)++] = tl_lo_let(m, b->loc, x, BIN(b, TL_OP_FLOORMOD, t, pp->gx));
    st[(*n)++] = tl_lo_let(m, b->loc, y, BIN(b, TL_OP_FLOORMOD, BIN(b, TL_OP_FLOORDIV, t, pp->gx), pp->gy));
    st[(*n)++] = tl_lo_let(m, b->loc, z, BIN(b, TL_OP_FLOORDIV, t, BIN(b, TL_OP_MUL, pp->gx, pp->gy)));
  }
  for (int i = 0; i < *n; i++)
    if (!st[i]) return false;
  return !pp->lpt || *guard;
}

tl_stmt *ws_tile_loop(ws_build *b, ws_persist *pp, tl_var *j, tl_var *x, tl_var *y, tl_var *z, tl_stmt *body,
                      tl_diag *d, const tl_sk_role *sr) {
  tl_module *m = b->m;
  if (pp->gz || pp->lpt) { /* attention (tile_xyz) */
    tl_stmt *st[6];
    int n = 0;
    tl_expr *guard;
    if (!tile_xyz(b, pp, j, x, y, z, st, &n, &guard)) return NULL;
    st[n++] = guard ? tl_lo_if(m, b->loc, guard, body, NULL) : body;
    tl_stmt *seq = SEQ(b, n, st);
    return seq ? tl_lo_for(m, b->loc, TL_LOOP_SERIAL, j, pp->count, seq) : NULL;
  }
  tl_expr *t = sr ? V(b, sr->t) : BIN(b, TL_OP_ADD, V(b, pp->b), BIN(b, TL_OP_MUL, V(b, j), pp->blocks));
  tl_stmt *st[12];
  int n = 0;
  if (sr) { /* stream-K: segment j's tile and k-tiles */
    if (!tl_sk_seg_lets(m, b->loc, &pp->sk, sr, V(b, pp->b), V(b, j), st)) return NULL;
    n = 4;
  }
  int n0 = n;
  {
    /* T.use_swizzle's rasterization, else the default panel of
     * TL_WS_DEFAULT_PANEL rows (T.use_swizzle(enable=False) turns it off) */
    int64_t P = TL_WS_DEFAULT_PANEL;
    bool enable = true, column = false;
    if (pp->swz && !tl_raster_params(pp->swz, &P, &enable, &column, d)) return NULL;
    if (enable) {
      if (!tl_raster_lets(m, b->names, b->loc, t, pp->gx, pp->gy, P, column, x, y, st + n0)) return NULL;
      n = n0 + 6;
    }
  }
  if (n == n0) {
    st[n++] = tl_lo_let(m, b->loc, x, BIN(b, TL_OP_FLOORMOD, t, pp->gx));
    st[n++] = tl_lo_let(m, b->loc, y, BIN(b, TL_OP_FLOORDIV, t, pp->gx));
  }
  st[n++] = body;
  tl_stmt *seq = SEQ(b, n, st);
  tl_stmt *loop = seq ? tl_lo_for(m, b->loc, TL_LOOP_SERIAL, j, sr ? V(b, sr->nseg) : pp->count, seq) : NULL;
  if (!sr || !loop) return loop;
  tl_stmt *bl[5]; /* stream-K: the block's units first */
  if (!tl_sk_block_lets(m, b->loc, &pp->sk, sr, V(b, pp->b), bl)) return NULL;
  bl[4] = loop;
  return SEQ(b, 5, bl);
}

/* The producer's names: kv -> kp and, on a persistent grid, the block
 * indices -> the producer's copies, added to subst; false on OOM. */
bool ws_producer_subst(ws_build *b, tl_var *kv, tl_var *kp, const ws_persist *pp, tl_map *subst) {
  bool ok = tl_map_put(subst, kv, V(b, kp));
  if (ok && pp->on) ok = tl_map_put(subst, pp->bx, V(b, pp->bxp)) && tl_map_put(subst, pp->by, V(b, pp->byp));
  return ok && (!pp->on || !pp->bz || tl_map_put(subst, pp->bz, V(b, pp->bzp)));
}

/* Stream-K: loop's bounds become the segment's k-tiles [lo + ka, lo + kb). */
bool ws_sk_bounds(ws_build *b, tl_stmt *loop, tl_expr *lo, const tl_sk_role *sr) {
  tl_expr **mn = tl_arena_alloc(&b->m->arena, sizeof(tl_expr *));
  tl_expr **ex = tl_arena_alloc(&b->m->arena, sizeof(tl_expr *));
  if (!mn || !ex) return false;
  mn[0] = tl_lo_add(b->m, b->loc, lo, V(b, sr->ka));
  ex[0] = BIN(b, TL_OP_SUB, V(b, sr->kb), V(b, sr->ka));
  loop->u.loop.mins = mn;
  loop->u.loop.extents = ex;
  return mn[0] && ex[0];
}

/* `r = var - lo` (plus tiles * n in a persistent kernel: the k-tiles of the
 * block's earlier output tiles, so that stages and phases run on across
 * tiles; plus the segment's base under stream-K, tl_sk_seg_lets) as a LET;
 * returns r's expression. */
tl_stmt *ws_let_rel(ws_build *b, tl_var *var, tl_expr *lo, tl_expr *tiles, tl_expr *n, tl_expr *base, tl_expr **rel) {
  tl_var *r = tl_names_fresh_var(b->names, b->loc, "ws_r", TL_INT32, TL_VAR_LET);
  *rel = r ? V(b, r) : NULL;
  tl_expr *v = BIN(b, TL_OP_SUB, V(b, var), lo);
  if (tiles) v = BIN(b, TL_OP_ADD, BIN(b, TL_OP_MUL, tiles, n), v);
  if (base) v = BIN(b, TL_OP_ADD, base, v);
  return r ? tl_lo_let(b->m, b->loc, r, v) : NULL;
}

/* Persistent attention: kb[0] as an expression, and `kb[0] = kb[0] + n`. */
tl_expr *ws_kb_load(ws_build *b, tl_buffer *kb) {
  tl_expr *z = I(b, 0);
  return z ? tl_ir_load(b->m, b->loc, kb, 1, &z) : NULL;
}
tl_stmt *ws_kb_add(ws_build *b, tl_buffer *kb, tl_expr *n) {
  tl_expr *z = I(b, 0);
  tl_expr *v = BIN(b, TL_OP_ADD, ws_kb_load(b, kb), tl_lo_cast(b->m, b->loc, TL_INT32, n));
  return z && v ? tl_lo_store(b->m, b->loc, kb, 1, &z, v) : NULL;
}
/* `alloc kb (one int32, local); kb[0] = 0` pushed to v. */
tl_buffer *ws_kb_new(ws_build *b, const char *name, stmt_vec *v) {
  tl_expr **shape = tl_arena_alloc(&b->m->arena, sizeof(tl_expr *));
  if (!shape || !(shape[0] = I(b, 1))) return NULL;
  tl_buffer *kb = tl_ir_new_buffer(b->m, b->loc, name, TL_INT32, TL_SCOPE_LOCAL, 1, shape);
  tl_stmt *alloc = kb ? tl_ir_stmt(b->m, b->loc, TL_STMT_ALLOC) : NULL;
  tl_expr *z = I(b, 0);
  if (!alloc || !z) return NULL;
  alloc->u.alloc.buffer = kb;
  tl_stmt *init = tl_lo_store(b->m, b->loc, kb, 1, &z, I(b, 0));
  return init && tl_vec_push(v, alloc) && tl_vec_push(v, init) ? kb : NULL;
}

/* The attention form's default schedule (no tl.attention_* pass config
 * given), from same-process measurements (docs/performance.md,
 * "Measurements behind choices in the code"):
 *  - a persistent grid when the static grid has more tiles than SMs (or is
 *    not static) and either the k-loop's extent depends on the tile
 *    (causal: longest tiles first, K and V shared in L2) or the loop runs at
 *    most TL_WS_ATTN_SHORT_LOOP key blocks (the tile's prologue and epilogue
 *    weigh); longer loops run one tile a block (there the persistent grid
 *    measured slower per key block, not yet explained);
 *  - the intra-warpgroup overlap when the extent does not depend on the
 *    tile; on causal loops it was slower.
 * Returns whether the grid stays persistent; sets p->overlap. */
#define TL_WS_ATTN_SHORT_LOOP 16
bool ws_auto_schedule(ws_plan *p, const ws_persist *pp, bool persistent, const tl_target *target) {
  bool dep = persistent && pp->lpt;
  if (persistent) { /* a static grid of at most one tile an SM gains nothing */
    int64_t n = 0, gx = 0, gy = 0, gz = 1;
    bool few = tl_expr_is_const_int(pp->gx, &gx) && tl_expr_is_const_int(pp->gy, &gy) &&
               (!pp->gz || tl_expr_is_const_int(pp->gz, &gz)) && gx * gy * gz <= target->sms;
    bool short_loop = tl_expr_is_const_int(p->loop->u.loop.extents[0], &n) && n <= TL_WS_ATTN_SHORT_LOOP;
    persistent = !few && (dep || short_loop);
  }
  p->overlap = p->overlap_ok && !dep;
  p->overlap_why = p->overlap_ok ? (dep ? "the default schedule: the loop's extent depends on the tile" : NULL)
                                 : "it needs Q·Kᵀ and P·V with P in registers, K and V in their own groups";
  return persistent;
}
