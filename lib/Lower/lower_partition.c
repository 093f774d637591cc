/* The per-thread iteration spaces of pass "lower-tile-ops"
 * (lower_tile.h): PLAN, MMA_C, ROWS, REDUCER, COLS and STACKED partitions, each
 * walked by the chunks a thread holds (the maps of frag_layout.h; the
 * formulas in lower_tile.c's head comment and below). */
#include "Lower/lower_tile.h"

void lt_plan_for_shape(plan *p, int ndim, const int64_t *shape, int64_t threads, int bytes) {
  int64_t total = 1;
  for (int k = 0; k < ndim; k++) total *= shape[k];
  int64_t v = tl_frag_plan_vec(ndim > 0 ? shape[ndim - 1] : 1, total, threads, bytes);
  p->ndim = ndim;
  p->shape = shape;
  p->total = total;
  p->threads = threads;
  p->vec = v;
  p->nvec = (total + threads * v - 1) / (threads * v);
  p->registers = false;
  p->mma = NULL;
  p->lay = NULL;
  p->rep_guard = false;
}

/* The partition of a distributed fragment layout. */
void lt_plan_for_layout(plan *p, const tl_frag_layout *L) {
  p->ndim = L->ndim;
  p->shape = L->shape;
  p->total = L->total;
  p->threads = L->threads;
  p->vec = L->vec;
  p->nvec = L->nvec;
  p->registers = true;
  p->mma = L->kind == TL_FRAG_MMA_C ? L : NULL;
  p->lay =
      L->kind == TL_FRAG_ROWS || L->kind == TL_FRAG_REDUCER || L->kind == TL_FRAG_STACKED || L->kind == TL_FRAG_COLS
          ? L
          : NULL;
  p->rep_guard = false;
}

/* The MMA_C partition (lower_internal.h; docs/layouts.md): each thread walks
 * its register pairs (2q, 2q+1) = columns (j, j+1) of row i:
 *     for mi in T.unroll(WM/16): for nj in T.unroll(WN/8): for h in T.unroll(2):
 *         i = wm*WM + (tid%32)/4 + 16*mi + 8*h,  j = wn*WN + 2*(tid%4) + 8*nj
 *         reg = 4*(mi*(WN/8) + nj) + 2*h
 * (wm = (tid/32) % warp_m, wn = tid / (32*warp_m)); j is even, so the pair
 * never leaves its row, and the layout covers the tile exactly (no guard). */
static tl_stmt *emit_mma(lt_state *st, tl_loc loc, const plan *p, chunk_fn fn, void *user) {
  tl_module *m = st->w.m;
  const tl_frag_layout *L = p->mma;
  int64_t WM = L->warp_tile_m, WN = L->warp_tile_n, mw = L->warp_m;
  tl_var *vm, *vn, *vh;
  CHECK(vm = tl_names_fresh_var(&st->w.names, loc, "mi", TL_INT32, TL_VAR_LOOP));
  CHECK(vn = tl_names_fresh_var(&st->w.names, loc, "nj", TL_INT32, TL_VAR_LOOP));
  CHECK(vh = tl_names_fresh_var(&st->w.names, loc, "h", TL_INT32, TL_VAR_LOOP));
  CHECK(tl_ranges_set(&st->w.ranges, vm, 0, WM / 16 - 1));
  CHECK(tl_ranges_set(&st->w.ranges, vn, 0, WN / 8 - 1));
  CHECK(tl_ranges_set(&st->w.ranges, vh, 0, 1));
  tl_expr *tid = tl_lo_thread_index(m, loc);
  CHECK(tid);
  tl_expr *warp = tl_lo_fdiv(m, loc, tid, 32, &st->w.ranges);
  tl_expr *lane = tl_lo_fmod(m, loc, tid, 32, &st->w.ranges);
  tl_expr *wm = tl_lo_fmod(m, loc, warp, mw, &st->w.ranges);
  tl_expr *wn = tl_lo_fdiv(m, loc, warp, mw, &st->w.ranges);
  /* row0(wm, mi) (frag_layout.h tl_mma_c_row0) + lane/4 + 8h */
  tl_expr *i = L->interleaved ? tl_lo_mul(m, loc, wm, 16) : tl_lo_mul(m, loc, wm, WM);
  i = tl_lo_add(m, loc, i, tl_lo_fdiv(m, loc, lane, 4, &st->w.ranges));
  i = tl_lo_add(m, loc, i,
                tl_lo_add(m, loc, tl_lo_mul(m, loc, tl_ir_var(m, loc, vm), L->interleaved ? 16 * mw : 16),
                          tl_lo_mul(m, loc, tl_ir_var(m, loc, vh), 8)));
  tl_expr *j =
      tl_lo_add(m, loc, tl_lo_mul(m, loc, wn, WN), tl_lo_mul(m, loc, tl_lo_fmod(m, loc, lane, 4, &st->w.ranges), 2));
  j = tl_lo_add(m, loc, j, tl_lo_mul(m, loc, tl_ir_var(m, loc, vn), 8));
  tl_expr *reg = tl_lo_add(
      m, loc,
      tl_lo_mul(m, loc, tl_lo_add(m, loc, tl_lo_mul(m, loc, tl_ir_var(m, loc, vm), WN / 8), tl_ir_var(m, loc, vn)), 4),
      tl_lo_mul(m, loc, tl_ir_var(m, loc, vh), 2));
  CHECK(i && j && reg);
  tl_expr **idx = tl_arena_alloc(&m->arena, 2 * sizeof(tl_expr *));
  CHECK(idx);
  idx[0] = i;
  idx[1] = j;
  const tl_frag_layout *saved_part = st->part;
  tl_expr *saved_row = st->row_reg;
  st->part = L;
  st->row_reg = tl_lo_add(m, loc, tl_lo_mul(m, loc, tl_ir_var(m, loc, vm), 2), tl_ir_var(m, loc, vh));
  tl_stmt *body = fn(st, user, p, idx, reg);
  st->part = saved_part;
  st->row_reg = saved_row;
  tl_ranges_unset(&st->w.ranges, vm);
  tl_ranges_unset(&st->w.ranges, vn);
  tl_ranges_unset(&st->w.ranges, vh);
  if (!body) return NULL;
  CHECK(body = tl_lo_for(m, loc, TL_LOOP_UNROLL, vh, tl_lo_int(m, loc, 2), body));
  CHECK(body = tl_lo_for(m, loc, TL_LOOP_UNROLL, vn, tl_lo_int(m, loc, WN / 8), body));
  CHECK(body = tl_lo_for(m, loc, TL_LOOP_UNROLL, vm, tl_lo_int(m, loc, WM / 16), body));
  return body;
}

/* Row-major indices of flat row r over the leading dims of shape (the
 * last index is set by the caller). */
static bool row_indices(lt_state *st, tl_loc loc, int ndim, const int64_t *shape, tl_expr *r, tl_expr **idx) {
  tl_expr *x = r;
  for (int k = ndim - 2; k >= 0; k--) {
    idx[k] = k > 0 ? tl_lo_fmod(st->w.m, loc, x, shape[k], &st->w.ranges) : x;
    x = tl_lo_fdiv(st->w.m, loc, x, shape[k], &st->w.ranges);
    if (!idx[k] || !x) return false;
  }
  return true;
}

/* The ROWS partition (lower_internal.h): each thread walks its rows a and
 * column vectors b:
 *     for a in T.unroll(rpt): for b in T.unroll(cvg):
 *         r = a*G + tid/g, cvec = b*g + tid%g      (guarded where not exact)
 *         element (rows of r, cvec*vec), register (a*cvg + b)*vec
 * The row statistic register of a REDUCER of this layout is a. */
static tl_stmt *emit_rows(lt_state *st, tl_loc loc, const plan *p, chunk_fn fn, void *user) {
  tl_module *m = st->w.m;
  const tl_frag_layout *L = p->lay;
  int64_t G = L->groups, g = L->group, v = L->vec, cv = L->cols / L->vec;
  tl_var *va, *vb;
  CHECK(va = tl_names_fresh_var(&st->w.names, loc, "ra", TL_INT32, TL_VAR_LOOP));
  CHECK(vb = tl_names_fresh_var(&st->w.names, loc, "rb", TL_INT32, TL_VAR_LOOP));
  CHECK(tl_ranges_set(&st->w.ranges, va, 0, L->rpt - 1));
  CHECK(tl_ranges_set(&st->w.ranges, vb, 0, L->cvg - 1));
  tl_expr *tid = tl_lo_thread_index(m, loc);
  CHECK(tid);
  tl_expr *a = tl_ir_var(m, loc, va), *b = tl_ir_var(m, loc, vb);
  tl_expr *r = tl_lo_add(m, loc, tl_lo_mul(m, loc, a, G), tl_lo_fdiv(m, loc, tid, g, &st->w.ranges));
  tl_expr *cvec = tl_lo_add(m, loc, tl_lo_mul(m, loc, b, g), tl_lo_fmod(m, loc, tid, g, &st->w.ranges));
  tl_expr *reg = tl_lo_mul(m, loc, tl_lo_add(m, loc, tl_lo_mul(m, loc, a, L->cvg), b), v);
  CHECK(r && cvec && reg);
  tl_expr **idx = tl_arena_alloc(&m->arena, sizeof(tl_expr *) * (size_t)(L->ndim > 0 ? L->ndim : 1));
  CHECK(idx);
  CHECK(row_indices(st, loc, L->ndim, L->shape, r, idx));
  CHECK(idx[L->ndim - 1] = tl_lo_mul(m, loc, cvec, v));
  const tl_frag_layout *saved_part = st->part;
  tl_expr *saved_row = st->row_reg;
  st->part = L;
  st->row_reg = a;
  tl_stmt *body = fn(st, user, p, idx, reg);
  st->part = saved_part;
  st->row_reg = saved_row;
  tl_ranges_unset(&st->w.ranges, va);
  tl_ranges_unset(&st->w.ranges, vb);
  if (!body) return NULL;
  tl_expr *cond = NULL;
  if (L->rows % G != 0) CHECK(cond = tl_ir_binary(m, loc, TL_OP_LT, r, tl_lo_int(m, loc, L->rows)));
  if (cv % g != 0) {
    tl_expr *c2 = tl_ir_binary(m, loc, TL_OP_LT, cvec, tl_lo_int(m, loc, cv));
    CHECK(c2);
    CHECK(cond = cond ? tl_ir_binary(m, loc, TL_OP_AND, cond, c2) : c2);
  }
  if (cond) CHECK(body = tl_lo_if(m, loc, cond, body, NULL));
  CHECK(body = tl_lo_for(m, loc, TL_LOOP_UNROLL, vb, tl_lo_int(m, loc, L->cvg), body));
  CHECK(body = tl_lo_for(m, loc, TL_LOOP_UNROLL, va, tl_lo_int(m, loc, L->rpt), body));
  return body;
}

/* The REDUCER partition: each thread walks its statistic registers k,
 *     i = ((tid/32) % warp_m)*WM + 8*k + (tid%32)/4     (source MMA_C)
 *     i = k*G + tid/g                                   (source ROWS; guarded)
 * every replica runs the body (fragment-only work), or only replica 0 when
 * p->rep_guard (the body stores to memory). */
static tl_stmt *emit_reducer(lt_state *st, tl_loc loc, const plan *p, chunk_fn fn, void *user) {
  tl_module *m = st->w.m;
  const tl_frag_layout *L = p->lay, *S = L->src;
  tl_var *vk;
  CHECK(vk = tl_names_fresh_var(&st->w.names, loc, "rk", TL_INT32, TL_VAR_LOOP));
  CHECK(tl_ranges_set(&st->w.ranges, vk, 0, L->nregs - 1));
  tl_expr *tid = tl_lo_thread_index(m, loc), *k = tl_ir_var(m, loc, vk);
  CHECK(tid && k);
  tl_expr *i, *rep, *cond = NULL;
  if (S->kind == TL_FRAG_MMA_C) {
    tl_expr *wm = tl_lo_fmod(m, loc, tl_lo_fdiv(m, loc, tid, 32, &st->w.ranges), S->warp_m, &st->w.ranges);
    i = tl_lo_add(m, loc, tl_lo_add(m, loc, tl_lo_mul(m, loc, wm, S->warp_tile_m), tl_lo_mul(m, loc, k, 8)),
                  tl_lo_fdiv(m, loc, tl_lo_fmod(m, loc, tid, 32, &st->w.ranges), 4, &st->w.ranges));
    rep = tl_ir_binary(m, loc, TL_OP_AND,
                       tl_ir_binary(m, loc, TL_OP_EQ, tl_lo_fmod(m, loc, tid, 4, &st->w.ranges), tl_lo_int(m, loc, 0)),
                       tl_ir_binary(m, loc, TL_OP_LT, tid, tl_lo_int(m, loc, 32 * S->warp_m)));
  } else {
    i = tl_lo_add(m, loc, tl_lo_mul(m, loc, k, S->groups), tl_lo_fdiv(m, loc, tid, S->group, &st->w.ranges));
    rep = tl_ir_binary(m, loc, TL_OP_EQ, tl_lo_fmod(m, loc, tid, S->group, &st->w.ranges), tl_lo_int(m, loc, 0));
    if (S->rows % S->groups != 0) CHECK(cond = tl_ir_binary(m, loc, TL_OP_LT, i, tl_lo_int(m, loc, S->rows)));
  }
  CHECK(i && rep);
  tl_expr **idx = tl_arena_alloc(&m->arena, sizeof(tl_expr *) * (size_t)(L->ndim > 0 ? L->ndim : 1));
  CHECK(idx);
  if (L->ndim == 2) {
    idx[0] = i;
    CHECK(idx[1] = tl_lo_int(m, loc, 0));
  } else {
    idx[0] = i;
  }
  tl_stmt *body = fn(st, user, p, idx, k);
  tl_ranges_unset(&st->w.ranges, vk);
  if (!body) return NULL;
  if (p->rep_guard) CHECK(cond = cond ? tl_ir_binary(m, loc, TL_OP_AND, cond, rep) : rep);
  if (cond) CHECK(body = tl_lo_if(m, loc, cond, body, NULL));
  return tl_lo_for(m, loc, TL_LOOP_UNROLL, vk, tl_lo_int(m, loc, L->nregs), body);
}

/* The COLS partition (column statistics of a ROWS source: G groups of g
 * threads, vec, cvg): each thread walks its column vectors b,
 *     cvec = b*g + tid%g,  element cvec*vec,  register b*vec
 * in the H = min(G, R) groups that hold rows (guarded where not exact);
 * every replica runs the body, or only group 0 when p->rep_guard. */
static tl_stmt *emit_cols(lt_state *st, tl_loc loc, const plan *p, chunk_fn fn, void *user) {
  tl_module *m = st->w.m;
  const tl_frag_layout *L = p->lay, *S = L->src;
  int64_t g = S->group, v = L->vec, cv = S->cols / v, H = S->rows < S->groups ? S->rows : S->groups;
  tl_var *vb;
  CHECK(vb = tl_names_fresh_var(&st->w.names, loc, "cb", TL_INT32, TL_VAR_LOOP));
  CHECK(tl_ranges_set(&st->w.ranges, vb, 0, S->cvg - 1));
  tl_expr *tid = tl_lo_thread_index(m, loc), *b = tl_ir_var(m, loc, vb);
  CHECK(tid && b);
  tl_expr *cvec = tl_lo_add(m, loc, tl_lo_mul(m, loc, b, g), tl_lo_fmod(m, loc, tid, g, &st->w.ranges));
  tl_expr **idx = tl_arena_alloc(&m->arena, sizeof(tl_expr *));
  CHECK(cvec && idx);
  CHECK(idx[0] = tl_lo_mul(m, loc, cvec, v));
  tl_stmt *body = fn(st, user, p, idx, tl_lo_mul(m, loc, b, v));
  tl_ranges_unset(&st->w.ranges, vb);
  if (!body) return NULL;
  tl_expr *cond = NULL;
  int64_t hmax = p->rep_guard ? 1 : H;
  if (hmax * g < L->threads) CHECK(cond = tl_ir_binary(m, loc, TL_OP_LT, tid, tl_lo_int(m, loc, hmax * g)));
  if (cv % g != 0) {
    tl_expr *c2 = tl_ir_binary(m, loc, TL_OP_LT, cvec, tl_lo_int(m, loc, cv));
    CHECK(c2);
    CHECK(cond = cond ? tl_ir_binary(m, loc, TL_OP_AND, cond, c2) : c2);
  }
  if (cond) CHECK(body = tl_lo_if(m, loc, cond, body, NULL));
  return tl_lo_for(m, loc, TL_LOOP_UNROLL, vb, tl_lo_int(m, loc, S->cvg), body);
}

/* The STACKED partition (frag_layout.h): each thread walks the base's
 * partition once per leading index l,
 *     for sl in T.unroll(lead): <base partition, element (lead(sl), n), register sl*nb + reg_B>
 * (along a split dim d the element is n with n_d + sl * S_d)
 * (every replica of a REDUCER base runs it, or only replica 0 when
 * p->rep_guard). */
typedef struct stack_ctx {
  chunk_fn fn;
  void *user;
  const tl_frag_layout *L;
  tl_expr **lead; /* the leading indices of sl */
  tl_expr *off;   /* sl * nb */
} stack_ctx;

static tl_stmt *stack_chunk(lt_state *st, void *user, const plan *p, tl_expr **idx, tl_expr *reg) {
  stack_ctx *sc = user;
  int a = sc->L->split ? 0 : sc->L->ndim - sc->L->src->ndim;
  tl_expr **full = tl_arena_alloc(&st->w.m->arena, sizeof(tl_expr *) * (size_t)sc->L->ndim);
  CHECK(full);
  for (int k = 0; k < a; k++) full[k] = sc->lead[k];
  for (int k = a; k < sc->L->ndim; k++) full[k] = idx[k - a];
  if (sc->L->split) { /* n_d + sl * S_d */
    int d = sc->L->split - 1;
    CHECK(full[d] = tl_lo_add(st->w.m, sc->L->set_at,
                              tl_lo_mul(st->w.m, sc->L->set_at, sc->lead[0], sc->L->src->shape[d]), idx[d]));
  }
  tl_expr *r = tl_lo_add(st->w.m, sc->L->set_at, sc->off, reg);
  CHECK(r);
  return sc->fn(st, sc->user, p, full, r);
}

static tl_stmt *emit_stacked(lt_state *st, tl_loc loc, const plan *p, chunk_fn fn, void *user) {
  tl_module *m = st->w.m;
  const tl_frag_layout *L = p->lay;
  int a = L->split ? 1 : L->ndim - L->src->ndim; /* split: lead[0] = sl */
  plan b;
  lt_plan_for_layout(&b, L->src);
  b.rep_guard = p->rep_guard;
  tl_var *vl;
  CHECK(vl = tl_names_fresh_var(&st->w.names, loc, "sl", TL_INT32, TL_VAR_LOOP));
  CHECK(tl_ranges_set(&st->w.ranges, vl, 0, L->lead - 1));
  stack_ctx sc = {fn, user, L, NULL, NULL};
  CHECK(sc.lead = tl_arena_alloc(&m->arena, sizeof(tl_expr *) * (size_t)(a + 1)));
  tl_expr *x = tl_ir_var(m, loc, vl);
  for (int k = a - 1; k >= 0 && !L->split; k--) {
    CHECK(sc.lead[k] = k > 0 ? tl_lo_fmod(m, loc, x, L->shape[k], &st->w.ranges) : x);
    CHECK(x = tl_lo_fdiv(m, loc, x, L->shape[k], &st->w.ranges));
  }
  if (L->split) sc.lead[0] = x;
  CHECK(sc.off = tl_lo_mul(m, loc, tl_ir_var(m, loc, vl), L->src->nregs));
  tl_stmt *body = lt_emit_plan(st, loc, &b, stack_chunk, &sc);
  tl_ranges_unset(&st->w.ranges, vl);
  if (!body) return NULL;
  return tl_lo_for(m, loc, TL_LOOP_UNROLL, vl, tl_lo_int(m, loc, L->lead), body);
}

tl_stmt *lt_emit_plan(lt_state *st, tl_loc loc, const plan *p, chunk_fn fn, void *user) {
  tl_module *m = st->w.m;
  if (p->mma) return emit_mma(st, loc, p, fn, user);
  if (p->lay && p->lay->kind == TL_FRAG_STACKED) return emit_stacked(st, loc, p, fn, user);
  if (p->lay && p->lay->kind == TL_FRAG_ROWS) return emit_rows(st, loc, p, fn, user);
  if (p->lay && p->lay->kind == TL_FRAG_REDUCER) return emit_reducer(st, loc, p, fn, user);
  if (p->lay && p->lay->kind == TL_FRAG_COLS) return emit_cols(st, loc, p, fn, user);
  int64_t tv = p->threads * p->vec;
  tl_var *q = NULL;
  tl_expr *qe;
  if (p->nvec > 1) {
    CHECK(q = tl_names_fresh_var(&st->w.names, loc, "vq", TL_INT32, TL_VAR_LOOP));
    CHECK(qe = tl_ir_var(m, loc, q));
    CHECK(tl_ranges_set(&st->w.ranges, q, 0, p->nvec - 1));
  } else {
    CHECK(qe = tl_lo_int(m, loc, 0));
  }
  tl_expr *tid = p->threads > 1 ? tl_lo_thread_index(m, loc) : tl_lo_int(m, loc, 0);
  CHECK(tid);
  tl_expr *f0 = tl_lo_add(m, loc, tl_lo_mul(m, loc, qe, tv), tl_lo_mul(m, loc, tid, p->vec));
  CHECK(f0);
  tl_expr **idx = tl_arena_alloc(&m->arena, sizeof(tl_expr *) * (size_t)(p->ndim > 0 ? p->ndim : 1));
  CHECK(idx);
  int64_t stride = 1;
  for (int k = p->ndim - 1; k >= 0; k--) {
    tl_expr *x = tl_lo_fdiv(m, loc, f0, stride, &st->w.ranges);
    if (k > 0) x = tl_lo_fmod(m, loc, x, p->shape[k], &st->w.ranges);
    CHECK(idx[k] = x);
    stride *= p->shape[k];
  }
  tl_expr *reg = tl_lo_mul(m, loc, qe, p->vec);
  CHECK(reg);
  tl_stmt *body = fn(st, user, p, idx, reg);
  if (!body) return NULL;
  if (p->total % tv != 0) {
    tl_range r;
    if (!(tl_expr_range(&st->w.ranges, f0, &r) && r.hi < p->total)) {
      tl_expr *cond = tl_ir_binary(m, loc, TL_OP_LT, f0, tl_lo_int(m, loc, p->total));
      CHECK(body = tl_lo_if(m, loc, cond, body, NULL));
    }
  }
  if (q) {
    tl_ranges_unset(&st->w.ranges, q);
    tl_loop_kind k = (p->registers || p->nvec <= 8) ? TL_LOOP_UNROLL : TL_LOOP_SERIAL;
    CHECK(body = tl_lo_for(m, loc, k, q, tl_lo_int(m, loc, p->nvec), body));
  }
  return body;
}
