/* T.reduce_{max,min,sum,abssum,absmax} → per-thread SIMT code.
 * The fragment layouts row reductions use (ROWS, REDUCER) and their maps
 * are frag_layout.{h,c}'s.
 *
 * Requires: layout inference ran (layout_infer.c gives a reduce's fragment
 * source the MMA_C or ROWS layout and its fragment destination the REDUCER
 * layout of that source).  Called by lower_tile.c for each reduce statement.
 *
 * Algorithm (docs/layouts.md, "Reductions").  A source
 * spread over the threads (MMA_C, ROWS fragment; a shared source is read
 * through a ROWS partition of its region) is reduced along its last dim:
 *   1. per-thread partials: red_acc[k] (one per statistic register k of the
 *      REDUCER layout, accumulator dtype: f32 for f16/bf16 destinations, else
 *      the destination's dtype) starts at the identity (-inf / +inf / the
 *      integer type's min or max / 0) and combines every source element the
 *      thread holds in that row, each converted to the destination's dtype
 *      first (as the reference evaluator does), |x| for abssum/absmax;
 *   2. butterflies over the lanes that share a row: T.shfl_xor with offsets
 *      2, 1 (the quad of an mma C row), or g/2 ... 1 for a ROWS group of g
 *      lanes (16 ... 1 when a group spans whole warps); for blocks of fewer
 *      than 32 threads T.shfl_sync with the mask of the existing lanes;
 *   3. across warps (an mma tile split over warp_n > 1 warp columns, a ROWS
 *      group of more than 32 threads): a shared.dyn scratch buffer of one
 *      slot per (statistic register, thread), allocated here so that
 *      smem_plan.c places it: T.sync_threads(), every thread stores its warp
 *      partial, T.sync_threads(), and every owner combines the partials of
 *      the row's warps in warp order, so all replicas compute bit-identical
 *      values;
 *   4. the result goes to every owner's register (REDUCER destination), is
 *      stored once per row by replica 0 (shared destination), or is
 *      broadcast through a shared scratch row buffer to every thread (a
 *      replicated fragment or local destination); clear=False combines with
 *      the old destination value before rounding to its dtype.
 * Shuffles and barriers stay in uniform control flow: padding rows and
 * columns of a ROWS partition contribute the identity instead of branching.
 * A source every thread holds whole (replicated fragment, local buffer) is
 * reduced by each thread alone, along any dim.  A shared source is reduced
 * along any dim through a virtual ROWS partition whose rows are its other
 * dims (row-major) and whose columns are the reduced dim; a distributed
 * fragment reduced along a dim other than its last (the split-KV combine's
 * dim 0), or a multi-dim distributed destination of such a reduce, is
 * staged through a shared scratch tile by tl_reduce_staging; a 2-D ROWS
 * source reduced along dim 0 into its column statistics (COLS destination)
 * is combined in place across its row groups (lower_cols).
 * batch= (TileLang's rows-per-pass hint) does not change the result and is
 * not used here.
 * Hardware facts: shfl.sync.bfly (PTX ISA §9.7.9.6 "shfl.sync"), bar.sync
 * (§9.7.13.1); the mma.sync C fragment map in docs/layouts.md. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "Lower/lower_internal.h"
#include "Lower/smem_layout.h"

/* =============================================================== lowering */
typedef struct rd {
  tl_lower_env *env;
  tl_module *m;
  tl_loc loc;
  bool oom;
  int op;
  bool clear, is_max, is_min, is_abs;
  const tl_region *src, *dst;
  tl_buffer *sb, *db;
  int sn, dn; /* region ranks (the buffer's rank for a whole-buffer region) */
  int64_t sext[8], dext[8];
  int rdim;
  tl_dtype dt, at;       /* destination and accumulator dtypes (scalar) */
  TL_VEC(tl_stmt *) out; /* emitted statements */
} rd;

#define NEED(x) TL_TRY_ALLOC(x, r->oom, NULL)

static const char *op_spelling(int op) { return op >= 0 && op < TL_TILE_NUM_OPS ? tl_tile_ops[op].name : "reduce"; }

static void rerr(rd *r, const char *msg, const char *a) {
  tl_error(r->env->d, r->loc, "T.%s: %s%s%s", op_spelling(r->op), msg, a ? a : "", a ? "'" : "");
  r->env->errors++;
}

static bool emit(rd *r, tl_stmt *s) {
  if (!s || !tl_vec_push(&r->out, s)) {
    r->oom = true;
    return false;
  }
  return true;
}

static tl_expr *I(rd *r, int64_t v) { return tl_lo_int(r->m, r->loc, v); }
static tl_expr *V(rd *r, tl_var *v) { return tl_ir_var(r->m, r->loc, v); }
static tl_expr *tid_expr(rd *r) { return tl_lo_thread_index(r->m, r->loc); }

static tl_expr *identity(rd *r) {
  tl_dtype t = r->at;
  if (tl_dtype_is_float(t)) {
    double v = r->is_max && !r->is_abs ? -INFINITY : r->is_min ? INFINITY : 0.0;
    return tl_ir_float(r->m, r->loc, t, v);
  }
  bool uns = t.code != TL_TYPE_INT;
  int64_t v = 0;
  if (r->is_max && !r->is_abs) {
    v = uns ? 0 : t.bits >= 64 ? INT64_MIN : -(INT64_C(1) << (t.bits - 1));
  } else if (r->is_min) {
    v = uns            ? (t.bits >= 64 ? -1 : (int64_t)((UINT64_C(1) << t.bits) - 1))
        : t.bits >= 64 ? INT64_MAX
                       : (int64_t)((UINT64_C(1) << (t.bits - 1)) - 1);
  }
  return tl_ir_int(r->m, r->loc, t, v);
}

static tl_expr *combine(rd *r, tl_expr *a, tl_expr *b) {
  if (!a || !b) return NULL;
  tl_binop op = r->is_max ? TL_OP_MAX : r->is_min ? TL_OP_MIN : TL_OP_ADD;
  tl_expr *e = tl_ir_binary(r->m, r->loc, op, a, b);
  if (e && !tl_dtype_eq(e->dtype, r->at)) e = tl_ir_cast(r->m, r->loc, r->at, e);
  return e;
}

/* A source element: converted to the destination dtype, then to the
 * accumulator's, |x| for the abs reductions. */
static tl_expr *conv(rd *r, tl_expr *x) {
  if (!x) return NULL;
  if (!tl_dtype_eq(x->dtype, r->dt)) x = tl_ir_cast(r->m, r->loc, r->dt, x);
  if (x && !tl_dtype_eq(x->dtype, r->at)) x = tl_ir_cast(r->m, r->loc, r->at, x);
  if (x && r->is_abs && !(r->at.code == TL_TYPE_UINT || r->at.code == TL_TYPE_BOOL)) {
    int op = TL_INTRIN_ABS;
    x = op >= 0 ? tl_ir_call(r->m, r->loc, op, 1, &x) : NULL;
  }
  return x;
}

static tl_var *fresh(rd *r, const char *base) {
  return tl_names_fresh_var(r->env->names, r->loc, base, TL_INT32, TL_VAR_LOOP);
}

/* A new buffer allocated by an ALLOC statement appended to the output. */
static tl_buffer *new_buffer(rd *r, const char *base, tl_dtype t, tl_scope scope, int64_t n) {
  tl_var *nm = fresh(r, base);
  tl_expr **shape = tl_arena_alloc(&r->m->arena, sizeof(tl_expr *));
  if (!nm || !shape || !(shape[0] = I(r, n))) {
    r->oom = true;
    return NULL;
  }
  tl_buffer *b = tl_ir_new_buffer(r->m, r->loc, nm->name, t, scope, 1, shape);
  tl_stmt *a = b ? tl_ir_stmt(r->m, r->loc, TL_STMT_ALLOC) : NULL;
  if (!a) {
    r->oom = true;
    return NULL;
  }
  a->u.alloc.buffer = b;
  return emit(r, a) ? b : NULL;
}

static tl_expr *load1(rd *r, tl_buffer *b, tl_expr *i) {
  tl_expr **ix = tl_arena_alloc(&r->m->arena, sizeof(tl_expr *));
  if (!ix || !i) return NULL;
  ix[0] = i;
  return tl_ir_load(r->m, r->loc, b, 1, ix);
}

static tl_stmt *store1(rd *r, tl_buffer *b, tl_expr *i, tl_expr *v) {
  tl_expr **ix = tl_arena_alloc(&r->m->arena, sizeof(tl_expr *));
  if (!ix || !i || !v) return NULL;
  ix[0] = i;
  if (!tl_dtype_eq(v->dtype, b->dtype)) v = tl_ir_cast(r->m, r->loc, b->dtype, v);
  return tl_lo_store(r->m, r->loc, b, 1, ix, v);
}

static tl_stmt *sync_stmt(rd *r) { return tl_lo_sync_threads(r->m, r->loc); }

static tl_stmt *loop(rd *r, tl_loop_kind k, tl_var *v, int64_t n, tl_stmt *body) {
  tl_ranges_unset(r->env->ranges, v);
  if (!body) return NULL;
  if (n == 1) { /* a single iteration: substitute nothing, keep the var bound */
    return tl_lo_for(r->m, r->loc, k, v, I(r, 1), body);
  }
  return tl_lo_for(r->m, r->loc, k, v, I(r, n), body);
}

static tl_var *loop_var(rd *r, const char *base, int64_t n) {
  tl_var *v = fresh(r, base);
  if (!v || !tl_ranges_set(r->env->ranges, v, 0, n - 1)) {
    r->oom = true;
    return NULL;
  }
  return v;
}

/* Element access of a region operand at per-dim offsets off[] (relative to
 * the region start; one per region dim): a load expression, or with value
 * a store statement.  Fragments are accessed through their register index
 * `reg` (distributed) or their flat index (replicated). */
static tl_expr **region_index(rd *r, const tl_region *g, int n, tl_expr **off) {
  tl_expr **ix = tl_arena_alloc(&r->m->arena, sizeof(tl_expr *) * (size_t)(n > 0 ? n : 1));
  if (!ix) return NULL;
  for (int k = 0; k < n; k++) {
    tl_expr *mn = g->ndim ? g->min[k] : NULL;
    ix[k] = mn ? tl_lo_add(r->m, r->loc, mn, off[k]) : off[k];
    if (!ix[k]) return NULL;
  }
  return ix;
}

static tl_buffer *access_target(rd *r, const tl_region *g, int n, tl_expr **off, tl_expr *reg, tl_expr ***ix_out,
                                int *n_out) {
  tl_buffer *b = g->buffer;
  tl_frag_layout *L = tl_frag_layout_of(b);
  tl_expr **ix;
  if (L && L->kind != TL_FRAG_REPLICATED) {
    ix = tl_arena_alloc(&r->m->arena, sizeof(tl_expr *));
    if (!ix || !reg) return NULL;
    ix[0] = reg;
    *ix_out = ix;
    *n_out = 1;
    return b;
  }
  if (!(ix = region_index(r, g, n, off))) return NULL;
  if (L) { /* replicated fragment: flat register */
    tl_expr *f = I(r, 0);
    for (int k = 0; k < n && k < L->ndim; k++)
      f = tl_lo_add(r->m, r->loc, tl_lo_mul(r->m, r->loc, f, L->shape[k]), ix[k]);
    ix[0] = f;
    *ix_out = ix;
    *n_out = 1;
    return f ? b : NULL;
  }
  if (b->scope == TL_SCOPE_SHARED || b->scope == TL_SCOPE_SHARED_DYN) {
    tl_smem_layout *S = tl_smem_layout_get(r->m, b);
    tl_expr *o = S ? tl_lower_smem_index(r->m, r->loc, b, n, ix) : NULL;
    if (!o) return NULL;
    ix[0] = o;
    *ix_out = ix;
    *n_out = 1;
    return S->flat;
  }
  *ix_out = ix;
  *n_out = n;
  return b;
}

static tl_expr *elem_load(rd *r, const tl_region *g, int n, tl_expr **off, tl_expr *reg) {
  tl_expr **ix;
  int nn;
  tl_buffer *b = access_target(r, g, n, off, reg, &ix, &nn);
  if (!b) return NULL;
  tl_expr *e = tl_ir_load(r->m, r->loc, b, nn, ix);
  if (e) e->dtype = g->buffer->dtype;
  return e;
}

static tl_stmt *elem_store(rd *r, const tl_region *g, int n, tl_expr **off, tl_expr *reg, tl_expr *v) {
  tl_expr **ix;
  int nn;
  tl_buffer *b = access_target(r, g, n, off, reg, &ix, &nn);
  if (!b || !v) return NULL;
  if (!tl_dtype_eq(v->dtype, g->buffer->dtype)) v = tl_ir_cast(r->m, r->loc, g->buffer->dtype, v);
  return tl_lo_store(r->m, r->loc, b, nn, ix, v);
}

/* Per-dim offsets of the source row `row` (flat, row-major, over the
 * source's dims other than rdim) with column `col` (the offset along rdim). */
static tl_expr **src_offsets(rd *r, tl_expr *row, tl_expr *col) {
  tl_expr **off = tl_arena_alloc(&r->m->arena, sizeof(tl_expr *) * (size_t)r->sn);
  if (!off) return NULL;
  tl_expr *x = row;
  int first = r->rdim == 0 ? 1 : 0; /* the outermost dim that is not rdim */
  for (int k = r->sn - 1; k >= 0; k--) {
    if (k == r->rdim) continue;
    off[k] = k > first ? tl_lo_fmod(r->m, r->loc, x, r->sext[k], r->env->ranges) : x;
    x = tl_lo_fdiv(r->m, r->loc, x, r->sext[k], r->env->ranges);
    if (!off[k] || !x) return NULL;
  }
  off[r->rdim] = col;
  return off;
}

/* Per-dim offsets of the destination element of source row `row`. */
static tl_expr **dst_offsets(rd *r, tl_expr *row) {
  tl_expr **off = tl_arena_alloc(&r->m->arena, sizeof(tl_expr *) * (size_t)(r->dn > 0 ? r->dn : 1));
  if (!off) return NULL;
  bool kept = r->dn == r->sn;
  int skip = kept ? r->rdim : -1; /* the kept reduced dim (extent 1) */
  if (kept) off[skip] = I(r, 0);
  int first = skip == 0 ? 1 : 0;
  tl_expr *x = row;
  for (int k = r->dn - 1; k >= 0; k--) {
    if (k == skip) continue;
    off[k] = k > first ? tl_lo_fmod(r->m, r->loc, x, r->dext[k], r->env->ranges) : x;
    x = tl_lo_fdiv(r->m, r->loc, x, r->dext[k], r->env->ranges);
    if (!off[k] || !x) return NULL;
  }
  return off;
}

/* value combined with the old destination (clear=False), rounded to dst. */
static tl_expr *finish_value(rd *r, tl_expr *v, tl_expr *old) {
  if (!r->clear) {
    if (!old) return NULL;
    tl_expr *o = tl_dtype_eq(old->dtype, r->at) ? old : tl_ir_cast(r->m, r->loc, r->at, old);
    v = combine(r, o, v);
  }
  return v && !tl_dtype_eq(v->dtype, r->dt) ? tl_ir_cast(r->m, r->loc, r->dt, v) : v;
}

/* ------------------------------------------------- distributed sources */
typedef struct part {
  const tl_frag_layout *P; /* MMA_C or ROWS */
  int64_t nk;              /* statistic registers per thread */
  int64_t lanes;           /* butterfly width inside a warp (4, or g / 32) */
  int64_t xwarps, xstride; /* cross-warp partners and their thread stride (1: none) */
} part;

static tl_stmt *shfl_round(rd *r, tl_buffer *acc, tl_expr *k, int64_t off) {
  tl_expr *cur = load1(r, acc, k);
  tl_expr *other;
  int64_t T = r->env->threads;
  if (T >= 32) {
    int op = TL_INTRIN_SHFL_XOR;
    tl_expr *args[3] = {cur, I(r, off), I(r, 32)};
    other = op >= 0 && cur ? tl_ir_call(r->m, r->loc, op, 3, args) : NULL;
  } else {
    int op = TL_INTRIN_SHFL_SYNC;
    uint64_t mask = (UINT64_C(1) << T) - 1;
    tl_expr *lane = tl_ir_binary(r->m, r->loc, TL_OP_BITXOR, tid_expr(r), I(r, off));
    tl_expr *args[4] = {tl_ir_int(r->m, r->loc, TL_DT(TL_TYPE_UINT, 32), (int64_t)mask), cur, lane, I(r, 32)};
    other = op >= 0 && cur && lane && args[0] ? tl_ir_call(r->m, r->loc, op, 4, args) : NULL;
  }
  if (other && !tl_dtype_eq(other->dtype, r->at)) other = tl_ir_cast(r->m, r->loc, r->at, other);
  return store1(r, acc, k, combine(r, load1(r, acc, k), other));
}

static tl_stmt *seq_of(rd *r, int n, tl_stmt **xs) {
  for (int i = 0; i < n; i++)
    if (!xs[i]) return NULL;
  return tl_ir_seq(r->m, r->loc, n, xs);
}

/* Step 2 of lower_distributed for an MMA_C source: each thread folds the
 * values of its accumulator registers into its row partials acc[k]. */
static bool partials_mma(rd *r, const tl_frag_layout *P, tl_buffer *acc, bool src_frag) {
  tl_module *m = r->m;
  int64_t WM = P->warp_tile_m, WN = P->warp_tile_n;
  tl_var *mi = loop_var(r, "mi", WM / 16), *h = loop_var(r, "h", 2), *nj = loop_var(r, "nj", WN / 8),
         *e = loop_var(r, "e", 2);
  if (!mi || !h || !nj || !e) return false;
  tl_expr *k = tl_lo_add(m, r->loc, tl_lo_mul(m, r->loc, V(r, mi), 2), V(r, h));
  tl_expr *reg = tl_lo_add(
      m, r->loc, tl_lo_mul(m, r->loc, tl_lo_add(m, r->loc, tl_lo_mul(m, r->loc, V(r, mi), WN / 8), V(r, nj)), 4),
      tl_lo_add(m, r->loc, tl_lo_mul(m, r->loc, V(r, h), 2), V(r, e)));
  NEED(k && reg);
  tl_expr *x = src_frag ? elem_load(r, r->src, r->sn, NULL, reg) : NULL;
  if (!src_frag) {
    rerr(r, "internal error: an mma-layout source that is not a fragment", NULL);
    return false;
  }
  tl_stmt *s = store1(r, acc, k, combine(r, load1(r, acc, k), conv(r, x)));
  s = loop(r, TL_LOOP_UNROLL, e, 2, s);
  s = loop(r, TL_LOOP_UNROLL, nj, WN / 8, s);
  s = loop(r, TL_LOOP_UNROLL, h, 2, s);
  s = loop(r, TL_LOOP_UNROLL, mi, WM / 16, s);
  return emit(r, s);
}

/* Step 2 of lower_distributed for a ROWS plan: each thread folds the
 * elements of its rows (vectors of P->vec columns, P->cvg a row) into
 * acc[a], guarded where the groups do not divide the rows or columns. */
static bool partials_rows(rd *r, const tl_frag_layout *P, tl_buffer *acc, tl_expr *tid, bool src_frag) {
  tl_module *m = r->m;
  int64_t G = P->groups, g = P->group, v = P->vec, cvg = P->cvg, R = P->rows, C = P->cols;
  int64_t cv = C / v;
  tl_var *a = loop_var(r, "ra", P->rpt), *b = loop_var(r, "rb", cvg), *l = loop_var(r, "rl", v);
  if (!a || !b || !l) return false;
  tl_expr *row = tl_lo_add(m, r->loc, tl_lo_mul(m, r->loc, V(r, a), G), tl_lo_fdiv(m, r->loc, tid, g, r->env->ranges));
  tl_expr *cvec = tl_lo_add(m, r->loc, tl_lo_mul(m, r->loc, V(r, b), g), tl_lo_fmod(m, r->loc, tid, g, r->env->ranges));
  tl_expr *col = tl_lo_add(m, r->loc, tl_lo_mul(m, r->loc, cvec, v), V(r, l));
  tl_expr *reg = tl_lo_add(
      m, r->loc, tl_lo_mul(m, r->loc, tl_lo_add(m, r->loc, tl_lo_mul(m, r->loc, V(r, a), cvg), V(r, b)), v), V(r, l));
  NEED(row && cvec && col && reg);
  tl_expr **off = src_offsets(r, row, col);
  NEED(off);
  tl_expr *x = elem_load(r, r->src, r->sn, off, reg);
  tl_stmt *s = store1(r, acc, V(r, a), combine(r, load1(r, acc, V(r, a)), conv(r, x)));
  NEED(s);
  tl_expr *cond = NULL;
  if (R % G != 0) cond = tl_ir_binary(m, r->loc, TL_OP_LT, row, I(r, R));
  if (cv % g != 0) {
    tl_expr *c2 = tl_ir_binary(m, r->loc, TL_OP_LT, cvec, I(r, cv));
    cond = cond ? tl_ir_binary(m, r->loc, TL_OP_AND, cond, c2) : c2;
  }
  if (cond) s = tl_lo_if(m, r->loc, cond, s, NULL);
  s = loop(r, TL_LOOP_UNROLL, l, v, s);
  s = loop(r, src_frag || cvg <= 16 ? TL_LOOP_UNROLL : TL_LOOP_SERIAL, b, cvg, s);
  s = loop(r, TL_LOOP_UNROLL, a, P->rpt, s);
  return emit(r, s);
}

/* Step 4 of lower_distributed: the partials of the pt->xwarps warps that
 * share a row meet in shared memory (one slot a thread and register, between
 * two barriers) and every thread combines its partners'. */
static bool across_warps(rd *r, const part *pt, tl_buffer *acc, tl_expr *tid) {
  tl_module *m = r->m;
  int64_t T = r->env->threads;
  const tl_frag_layout *P = pt->P;
  bool mma = P->kind == TL_FRAG_MMA_C;
  tl_buffer *ws = new_buffer(r, "red_ws", r->at, TL_SCOPE_SHARED_DYN, pt->nk * T);
  if (!ws || !emit(r, sync_stmt(r))) return false;
  tl_var *k = loop_var(r, "rk", pt->nk);
  if (!k) return false;
  tl_expr *slot = tl_lo_add(m, r->loc, tl_lo_mul(m, r->loc, V(r, k), T), tid);
  tl_stmt *s = store1(r, ws, slot, load1(r, acc, V(r, k)));
  if (!emit(r, loop(r, TL_LOOP_UNROLL, k, pt->nk, s)) || !emit(r, sync_stmt(r))) return false;
  /* base: this thread's slot in the first partner warp */
  tl_expr *base;
  if (mma) base = tl_lo_fmod(m, r->loc, tid, pt->xstride, r->env->ranges);
  else
    base = tl_lo_add(m, r->loc, tl_lo_mul(m, r->loc, tl_lo_fdiv(m, r->loc, tid, P->group, r->env->ranges), P->group),
                     tl_lo_fmod(m, r->loc, tid, 32, r->env->ranges));
  NEED(base);
  if (!(k = loop_var(r, "rk", pt->nk))) return false;
  tl_expr *kb = tl_lo_add(m, r->loc, tl_lo_mul(m, r->loc, V(r, k), T), base);
  tl_expr *val = load1(r, ws, kb);
  for (int64_t p = 1; p < pt->xwarps; p++)
    val = combine(r, val, load1(r, ws, tl_lo_add(m, r->loc, kb, I(r, p * pt->xstride))));
  s = store1(r, acc, V(r, k), val);
  return emit(r, loop(r, TL_LOOP_UNROLL, k, pt->nk, s));
}

/* Step 5 of lower_distributed: acc[k] (row statistic k of this thread) goes
 * to the destination: a reducer fragment register by register, shared memory
 * by replica 0 of each row, a replicated fragment or local buffer through a
 * shared broadcast. */
static bool store_result(rd *r, const part *pt, tl_buffer *acc, tl_expr *tid) {
  tl_module *m = r->m;
  const tl_frag_layout *P = pt->P;
  bool mma = P->kind == TL_FRAG_MMA_C;
  const tl_frag_layout *DL = tl_frag_layout_of(r->db);
  /* the row of statistic register k in this thread, and whether this thread is replica 0 */
  tl_var *k = loop_var(r, "rk", pt->nk);
  if (!k) return false;
  tl_expr *row, *rep;
  if (mma) {
    row = tl_lo_add(m, r->loc,
                    tl_lo_add(m, r->loc,
                              tl_lo_mul(m, r->loc,
                                        tl_lo_fmod(m, r->loc, tl_lo_fdiv(m, r->loc, tid, 32, r->env->ranges), P->warp_m,
                                                   r->env->ranges),
                                        P->warp_tile_m),
                              tl_lo_mul(m, r->loc, V(r, k), 8)),
                    tl_lo_fdiv(m, r->loc, tl_lo_fmod(m, r->loc, tid, 32, r->env->ranges), 4, r->env->ranges));
    rep = tl_ir_binary(m, r->loc, TL_OP_AND,
                       tl_ir_binary(m, r->loc, TL_OP_EQ, tl_lo_fmod(m, r->loc, tid, 4, r->env->ranges), I(r, 0)),
                       tl_ir_binary(m, r->loc, TL_OP_LT, tid, I(r, 32 * P->warp_m)));
  } else {
    row = tl_lo_add(m, r->loc, tl_lo_mul(m, r->loc, V(r, k), P->groups),
                    tl_lo_fdiv(m, r->loc, tid, P->group, r->env->ranges));
    rep = tl_ir_binary(m, r->loc, TL_OP_EQ, tl_lo_fmod(m, r->loc, tid, P->group, r->env->ranges), I(r, 0));
    int64_t R = P->rows;
    if (R % P->groups != 0)
      rep = tl_ir_binary(m, r->loc, TL_OP_AND, rep, tl_ir_binary(m, r->loc, TL_OP_LT, row, I(r, R)));
  }
  NEED(row && rep);
  if (DL && DL->kind == TL_FRAG_REDUCER) {
    if (!tl_reducer_fits(DL, P)) {
      rerr(r, "internal error: the destination's layout is not the reducer layout of the source '", r->sb->name);
      return false;
    }
    tl_expr *old = r->clear ? NULL : elem_load(r, r->dst, r->dn, NULL, V(r, k));
    tl_stmt *s = elem_store(r, r->dst, r->dn, NULL, V(r, k), finish_value(r, load1(r, acc, V(r, k)), old));
    return emit(r, loop(r, TL_LOOP_UNROLL, k, pt->nk, s));
  }
  if (r->db->scope == TL_SCOPE_SHARED || r->db->scope == TL_SCOPE_SHARED_DYN) {
    tl_expr **off = dst_offsets(r, row);
    NEED(off);
    tl_expr *old = r->clear ? NULL : elem_load(r, r->dst, r->dn, off, NULL);
    tl_stmt *s = elem_store(r, r->dst, r->dn, off, NULL, finish_value(r, load1(r, acc, V(r, k)), old));
    NEED(s);
    s = tl_lo_if(m, r->loc, rep, s, NULL);
    return emit(r, loop(r, TL_LOOP_UNROLL, k, pt->nk, s));
  }
  if (DL && DL->kind != TL_FRAG_REPLICATED) {
    rerr(r,
         "a destination fragment whose layout is not the row-statistics layout of its source is not "
         "lowered yet: '",
         r->db->name);
    return false;
  }
  /* replicated fragment or local: broadcast through shared memory */
  int64_t R = P->kind == TL_FRAG_MMA_C ? P->shape[0] : P->rows;
  tl_buffer *bc = new_buffer(r, "red_bc", r->at, TL_SCOPE_SHARED_DYN, R);
  if (!bc || !emit(r, sync_stmt(r))) return false;
  tl_stmt *s = tl_lo_if(m, r->loc, rep, store1(r, bc, row, load1(r, acc, V(r, k))), NULL);
  if (!emit(r, loop(r, TL_LOOP_UNROLL, k, pt->nk, s)) || !emit(r, sync_stmt(r))) return false;
  tl_var *i = loop_var(r, "ri", R);
  if (!i) return false;
  tl_expr **off = dst_offsets(r, V(r, i));
  NEED(off);
  tl_expr *old = r->clear ? NULL : elem_load(r, r->dst, r->dn, off, NULL);
  s = elem_store(r, r->dst, r->dn, off, NULL, finish_value(r, load1(r, bc, V(r, i)), old));
  return emit(r, loop(r, R <= 64 ? TL_LOOP_UNROLL : TL_LOOP_SERIAL, i, R, s));
}

/* How row layout P spreads a row over threads (*pt): its registers per
 * thread, the lanes of a warp and the warps that share a row; false with
 * an error naming what (reductions, reducers) for a block of threads the
 * shuffles cannot cover. */
static bool partition_of(rd *r, const tl_frag_layout *P, const char *what, part *pt) {
  int64_t T = r->env->threads;
  *pt = (part){P, 0, 1, 1, 1};
  if (P->kind == TL_FRAG_MMA_C) {
    pt->nk = P->warp_tile_m / 8;
    pt->lanes = 4;
    pt->xwarps = P->warp_n;
    pt->xstride = 32 * P->warp_m;
    return true;
  }
  int64_t g = P->group;
  if (!tl_rows_group_ok(g) || (T < 32 && (T & (T - 1)) != 0) || (T > 32 && T % 32 != 0)) {
    char msg[160];
    snprintf(msg, sizeof msg,
             "a block of threads that is neither a power of two below 32 nor whole warps is not "
             "lowered yet for %s",
             what);
    rerr(r, msg, NULL);
    return false;
  }
  pt->nk = P->rpt;
  pt->lanes = g > 32 ? 32 : g;
  pt->xwarps = g > 32 ? g / 32 : 1;
  pt->xstride = 32;
  return true;
}

static bool lower_distributed(rd *r, const tl_frag_layout *P) {
  part pt;
  bool mma = P->kind == TL_FRAG_MMA_C;
  if (!partition_of(r, P, "reductions", &pt)) return false;
  const tl_frag_layout *SL = tl_frag_layout_of(r->sb);
  bool src_frag = SL != NULL;
  tl_buffer *acc = new_buffer(r, "red_acc", r->at, TL_SCOPE_LOCAL, pt.nk);
  if (!acc) return false;
  /* 1. identity */
  {
    tl_var *k = loop_var(r, "rk", pt.nk);
    if (!k) return false;
    tl_stmt *s = store1(r, acc, V(r, k), identity(r));
    if (!emit(r, loop(r, TL_LOOP_UNROLL, k, pt.nk, s))) return false;
  }
  /* 2. per-thread partials */
  tl_expr *tid = tid_expr(r);
  NEED(tid);
  if (!(mma ? partials_mma(r, P, acc, src_frag) : partials_rows(r, P, acc, tid, src_frag))) return false;
  /* 3. butterflies inside the warp */
  if (pt.lanes > 1) {
    tl_var *k = loop_var(r, "rk", pt.nk);
    if (!k) return false;
    tl_stmt *rounds[6];
    int n = 0;
    for (int64_t off = pt.lanes / 2; off >= 1; off /= 2) rounds[n++] = shfl_round(r, acc, V(r, k), off);
    tl_stmt *s = seq_of(r, n, rounds);
    if (!emit(r, loop(r, TL_LOOP_UNROLL, k, pt.nk, s))) return false;
  }
  /* 4. across warps */
  if (pt.xwarps > 1 && !across_warps(r, &pt, acc, tid)) return false;
  /* 5. the destination */
  return store_result(r, &pt, acc, tid);
}

/* ------------------------------------------------- column statistics */
/* A 2-D ROWS source P (R x C, G groups of g threads) reduced along dim 0
 * into its column statistics (COLS destination, frag_layout.h):
 *   1. acc[b*vec + e] (column register) starts at the identity and folds
 *      the thread's rows a*G + tid/g of that column in a order (guarded
 *      where the groups do not divide the rows or columns);
 *   2. the G groups that share the column (threads tid % g alike, at
 *      stride g) combine: butterflies T.shfl_xor g*G/2 ... g when the
 *      block is at most a warp (G*g = threads), else a shared.dyn slot per
 *      (register, thread) between two barriers and every thread combining
 *      the G groups' partials in group order;
 *   3. every thread stores acc to its destination registers (each holder of
 *      column c computes the same bits; the other threads' registers are
 *      never read). */
static bool cols_partials(rd *r, const tl_frag_layout *P, tl_buffer *acc, tl_expr *tid) {
  tl_module *m = r->m;
  int64_t G = P->groups, g = P->group, v = P->vec, cvg = P->cvg, cv = P->cols / P->vec;
  tl_var *a = loop_var(r, "ra", P->rpt), *b = loop_var(r, "rb", cvg), *l = loop_var(r, "rl", v);
  if (!a || !b || !l) return false;
  tl_expr *row = tl_lo_add(m, r->loc, tl_lo_mul(m, r->loc, V(r, a), G), tl_lo_fdiv(m, r->loc, tid, g, r->env->ranges));
  tl_expr *cvec = tl_lo_add(m, r->loc, tl_lo_mul(m, r->loc, V(r, b), g), tl_lo_fmod(m, r->loc, tid, g, r->env->ranges));
  tl_expr *k = tl_lo_add(m, r->loc, tl_lo_mul(m, r->loc, V(r, b), v), V(r, l));
  tl_expr *reg = tl_lo_add(m, r->loc, tl_lo_mul(m, r->loc, V(r, a), cvg * v), k);
  NEED(row && cvec && k && reg);
  tl_expr *x = elem_load(r, r->src, r->sn, NULL, reg);
  tl_stmt *s = store1(r, acc, k, combine(r, load1(r, acc, k), conv(r, x)));
  NEED(s);
  tl_expr *cond = NULL;
  if (P->rows % G != 0) cond = tl_ir_binary(m, r->loc, TL_OP_LT, row, I(r, P->rows));
  if (cv % g != 0) {
    tl_expr *c2 = tl_ir_binary(m, r->loc, TL_OP_LT, cvec, I(r, cv));
    cond = cond ? tl_ir_binary(m, r->loc, TL_OP_AND, cond, c2) : c2;
  }
  if (cond) s = tl_lo_if(m, r->loc, cond, s, NULL);
  s = loop(r, TL_LOOP_UNROLL, l, v, s);
  s = loop(r, TL_LOOP_UNROLL, b, cvg, s);
  s = loop(r, TL_LOOP_UNROLL, a, P->rpt, s);
  return emit(r, s);
}

static bool cols_across_groups(rd *r, const tl_frag_layout *P, tl_buffer *acc, int64_t nk, tl_expr *tid) {
  tl_module *m = r->m;
  int64_t T = r->env->threads, G = P->groups, g = P->group;
  if (G == 1) return true;
  if (T <= 32 && (G & (G - 1)) == 0) {
    tl_var *k = loop_var(r, "rk", nk);
    if (!k) return false;
    tl_stmt *rounds[6];
    int n = 0;
    for (int64_t off = g * G / 2; off >= g && n < 6; off /= 2) rounds[n++] = shfl_round(r, acc, V(r, k), off);
    return emit(r, loop(r, TL_LOOP_UNROLL, k, nk, seq_of(r, n, rounds)));
  }
  tl_buffer *ws = new_buffer(r, "red_ws", r->at, TL_SCOPE_SHARED_DYN, nk * T);
  tl_var *k = loop_var(r, "rk", nk);
  if (!ws || !k || !emit(r, sync_stmt(r))) return false;
  tl_expr *slot = tl_lo_add(m, r->loc, tl_lo_mul(m, r->loc, V(r, k), T), tid);
  if (!emit(r, loop(r, TL_LOOP_UNROLL, k, nk, store1(r, ws, slot, load1(r, acc, V(r, k))))) || !emit(r, sync_stmt(r)))
    return false;
  if (!(k = loop_var(r, "rk", nk))) return false;
  tl_expr *kb = tl_lo_add(m, r->loc, tl_lo_mul(m, r->loc, V(r, k), T), tl_lo_fmod(m, r->loc, tid, g, r->env->ranges));
  NEED(kb);
  tl_expr *val = load1(r, ws, kb);
  for (int64_t h = 1; h < G; h++) val = combine(r, val, load1(r, ws, tl_lo_add(m, r->loc, kb, I(r, h * g))));
  return emit(r, loop(r, TL_LOOP_UNROLL, k, nk, store1(r, acc, V(r, k), val)));
}

static bool lower_cols(rd *r, const tl_frag_layout *P, const tl_frag_layout *D) {
  int64_t nk = D->nregs;
  tl_buffer *acc = new_buffer(r, "red_acc", r->at, TL_SCOPE_LOCAL, nk);
  tl_expr *tid = tid_expr(r);
  tl_var *k = acc && tid ? loop_var(r, "rk", nk) : NULL;
  if (!k || !emit(r, loop(r, TL_LOOP_UNROLL, k, nk, store1(r, acc, V(r, k), identity(r))))) return false;
  if (!cols_partials(r, P, acc, tid) || !cols_across_groups(r, P, acc, nk, tid)) return false;
  if (!(k = loop_var(r, "rk", nk))) return false;
  tl_expr *old = r->clear ? NULL : elem_load(r, r->dst, r->dn, NULL, V(r, k));
  tl_stmt *s = elem_store(r, r->dst, r->dn, NULL, V(r, k), finish_value(r, load1(r, acc, V(r, k)), old));
  return emit(r, loop(r, TL_LOOP_UNROLL, k, nk, s));
}

/* ------------------------------------------------- per-thread sources */
/* Every thread holds the whole source (replicated fragment or local). */
static bool lower_per_thread(rd *r) {
  tl_module *m = r->m;
  const tl_frag_layout *DL = tl_frag_layout_of(r->db);
  bool dshared = r->db->scope == TL_SCOPE_SHARED || r->db->scope == TL_SCOPE_SHARED_DYN;
  if (DL && DL->kind != TL_FRAG_REPLICATED) {
    rerr(r, "a source every thread holds whole reduced into a distributed fragment is not lowered yet: '", r->db->name);
    return false;
  }
  tl_buffer *acc = new_buffer(r, "red_acc", r->at, TL_SCOPE_LOCAL, 1);
  if (!acc) return false;
  tl_var *vars[8];
  tl_expr **soff = tl_arena_alloc(&m->arena, sizeof(tl_expr *) * (size_t)r->sn);
  tl_expr **doff = tl_arena_alloc(&m->arena, sizeof(tl_expr *) * (size_t)(r->dn > 0 ? r->dn : 1));
  NEED(soff && doff);
  for (int d = 0, j = 0; d < r->sn; d++) {
    if (!(vars[d] = loop_var(r, d == r->rdim ? "rr" : "ro", r->sext[d]))) return false;
    soff[d] = V(r, vars[d]);
    if (d == r->rdim) {
      if (r->dn == r->sn) doff[j++] = I(r, 0);
    } else {
      doff[j++] = V(r, vars[d]);
    }
  }
  tl_expr *zero = I(r, 0);
  tl_stmt *init = store1(r, acc, zero, identity(r));
  tl_stmt *step =
      store1(r, acc, zero, combine(r, load1(r, acc, zero), conv(r, elem_load(r, r->src, r->sn, soff, NULL))));
  tl_stmt *inner = loop(r, TL_LOOP_SERIAL, vars[r->rdim], r->sext[r->rdim], step);
  tl_expr *old = r->clear ? NULL : elem_load(r, r->dst, r->dn, doff, NULL);
  tl_stmt *fin = elem_store(r, r->dst, r->dn, doff, NULL, finish_value(r, load1(r, acc, zero), old));
  NEED(init && inner && fin);
  if (dshared) fin = tl_lo_if(m, r->loc, tl_ir_binary(m, r->loc, TL_OP_EQ, tid_expr(r), I(r, 0)), fin, NULL);
  tl_stmt *xs[3] = {init, inner, fin};
  tl_stmt *body = seq_of(r, 3, xs);
  for (int d = r->sn - 1; d >= 0; d--) {
    if (d == r->rdim) continue;
    body = loop(r, TL_LOOP_SERIAL, vars[d], r->sext[d], body);
  }
  if (dshared && !emit(r, sync_stmt(r))) return false;
  return emit(r, body);
}

/* ------------------------------------------------------------ entry */
static int region_ext(const tl_region *g, int64_t *ext) {
  int n = g->ndim ? g->ndim : g->buffer->ndim;
  if (n < 1 || n > 8) return -1;
  for (int k = 0; k < n; k++)
    if (!tl_expr_is_const_int(g->ndim ? g->extent[k] : g->buffer->shape[k], &ext[k]) || ext[k] < 1) return -1;
  return n;
}

/* The state of lowering tile statement s as op (a reduction or T.finalize_reducer). */
static void rd_init(rd *r, tl_lower_env *env, const tl_stmt *s, int op) {
  memset(r, 0, sizeof *r);
  r->env = env;
  r->m = env->m;
  r->loc = s->loc;
  r->op = op;
}

tl_stmt *tl_lower_reduce(tl_lower_env *env, const tl_stmt *s) {
  rd r;
  rd_init(&r, env, s, s->u.tile.op);
  r.is_max = r.op == TL_TILE_REDUCE_MAX || r.op == TL_TILE_REDUCE_ABSMAX;
  r.is_min = r.op == TL_TILE_REDUCE_MIN;
  r.is_abs = r.op == TL_TILE_REDUCE_ABSSUM || r.op == TL_TILE_REDUCE_ABSMAX;
  if (s->u.tile.nargs < 2 || s->u.tile.args[0].kind != TL_OPND_REGION || s->u.tile.args[1].kind != TL_OPND_REGION) {
    rerr(&r, "malformed operands", NULL);
    return NULL;
  }
  r.src = &s->u.tile.args[0].region;
  r.dst = &s->u.tile.args[1].region;
  r.sb = r.src->buffer;
  r.db = r.dst->buffer;
  int64_t dim = -1, clear = 1;
  if (s->u.tile.attrs && s->u.tile.attrs[0]) tl_expr_is_const_int(s->u.tile.attrs[0], &dim);
  if (s->u.tile.attrs && s->u.tile.attrs[1]) tl_expr_is_const_int(s->u.tile.attrs[1], &clear);
  r.clear = clear != 0;
  r.sn = region_ext(r.src, r.sext);
  r.dn = region_ext(r.dst, r.dext);
  if (r.sn < 0 || r.dn < 0) {
    rerr(&r, "operands with non-constant extents are not lowered yet", NULL);
    return NULL;
  }
  r.rdim = (int)(dim < 0 ? dim + r.sn : dim);
  if (r.rdim < 0 || r.rdim >= r.sn) {
    rerr(&r, "dim is out of range", NULL);
    return NULL;
  }
  r.dt = r.db->dtype;
  r.dt.lanes = 1;
  r.at = r.dt;
  if (tl_dtype_is_float(r.dt) && r.dt.bits < 32) r.at = TL_DT(TL_TYPE_FLOAT, 32);
  if ((r.dt.code == TL_TYPE_INT || r.dt.code == TL_TYPE_UINT) && r.dt.bits < 32) r.at = TL_DT(r.dt.code, 32);
  if (r.dt.code == TL_TYPE_BOOL) {
    rerr(&r, "bool destinations are not lowered yet", NULL);
    return NULL;
  }
  const tl_frag_layout *SL = tl_frag_layout_of(r.sb), *DL = tl_frag_layout_of(r.db);
  for (int k = 0; k < 2; k++) {
    const tl_region *g = k ? r.dst : r.src;
    const tl_frag_layout *L = k ? DL : SL;
    if (L && L->kind != TL_FRAG_REPLICATED && g->ndim) {
      int64_t ext[8];
      int n = region_ext(g, ext);
      bool whole = n == g->buffer->ndim;
      for (int d = 0; whole && d < n; d++) {
        int64_t mn = -1, sh = -1;
        whole = tl_expr_is_const_int(g->min[d], &mn) && mn == 0 && tl_expr_is_const_int(g->buffer->shape[d], &sh) &&
                sh == ext[d];
      }
      if (!whole) {
        rerr(&r, "a sub-region of a distributed fragment is not lowered yet: '", g->buffer->name);
        return NULL;
      }
    }
  }
  bool ok;
  const tl_frag_layout *P = NULL;
  tl_frag_layout virt;
  int64_t vshape[2];
  if (DL && DL->kind == TL_FRAG_COLS) {
    if (!tl_cols_fits(DL, SL) || r.rdim != 0 || r.sn != 2) {
      rerr(&r, "internal error: the destination's layout is not the column statistics of the source '", r.sb->name);
      return NULL;
    }
    ok = lower_cols(&r, SL, DL);
    tl_stmt *out = ok && !r.oom ? tl_ir_seq(r.m, r.loc, (int)r.out.len, r.out.data) : NULL;
    tl_vec_free(&r.out);
    return out;
  }
  if (SL && (SL->kind == TL_FRAG_MMA_C || SL->kind == TL_FRAG_ROWS)) {
    P = SL;
    if (r.rdim != r.sn - 1) {
      rerr(&r, "a reduction of a distributed fragment along a dim other than its last is not lowered yet: '",
           r.sb->name);
      return NULL;
    }
  } else if (!SL && (r.sb->scope == TL_SCOPE_SHARED || r.sb->scope == TL_SCOPE_SHARED_DYN)) {
    int64_t R = 1;
    for (int d = 0; d < r.sn; d++)
      if (d != r.rdim) R *= r.sext[d];
    int64_t C = r.sext[r.rdim];
    if (DL && DL->kind == TL_FRAG_REDUCER && DL->src->kind == TL_FRAG_ROWS && DL->src->rows == R &&
        DL->src->cols == C) {
      P = DL->src;
    } else {
      /* the rows of a destination whose statistics a ROWS partition of the
       * same rows reads (layout_infer.c gives both one group count) */
      int64_t G = DL && DL->kind == TL_FRAG_REDUCER && DL->src->kind == TL_FRAG_ROWS && DL->src->rows == R
                      ? DL->src->groups
                      : 0;
      memset(&virt, 0, sizeof virt);
      vshape[0] = R;
      vshape[1] = C;
      virt.shape = vshape;
      tl_rows_layout_init(&virt, 2, R, C, env->threads, 1, G);
      P = &virt;
    }
  } else if (SL && SL->kind != TL_FRAG_REPLICATED) {
    rerr(&r, "internal error: the source's layout is not a row layout: '", r.sb->name);
    return NULL;
  }
  ok = P ? lower_distributed(&r, P) : lower_per_thread(&r);
  tl_stmt *out = NULL;
  if (ok && !r.oom) out = tl_ir_seq(r.m, r.loc, (int)r.out.len, r.out.data);
  tl_vec_free(&r.out);
  return out;
}

/* ------------------------------------------------------- finalize_reducer */
tl_stmt *tl_lower_finalize_reducer(tl_lower_env *env, const tl_stmt *s) {
  rd r;
  rd_init(&r, env, s, TL_TILE_FINALIZE_REDUCER);
  r.clear = true;
  if (s->u.tile.nargs < 1 || s->u.tile.args[0].kind != TL_OPND_REGION || !s->u.tile.args[0].region.buffer) {
    rerr(&r, "malformed operands", NULL);
    return NULL;
  }
  r.dst = &s->u.tile.args[0].region;
  r.db = r.dst->buffer;
  r.dn = r.db->ndim;
  r.is_max = r.db->reducer == TL_REDUCER_MAX;
  r.is_min = r.db->reducer == TL_REDUCER_MIN;
  r.dt = r.db->dtype;
  r.dt.lanes = 1;
  r.at = r.dt; /* the partials are in the reducer's dtype already */
  const tl_frag_layout *L = tl_frag_layout_of(r.db);
  if (!L || L->kind == TL_FRAG_REPLICATED || (L->kind == TL_FRAG_REDUCER && !L->src)) {
    rerr(&r,
         "a reducer whose layout is replicated over every thread (it is accessed irregularly) is not lowered "
         "yet: '",
         r.db->name);
    return NULL;
  }
  if (L->kind == TL_FRAG_REDUCER) {
    const tl_frag_layout *P = L->src;
    part pt;
    if (!partition_of(&r, P, "reducers", &pt)) return NULL;
    if (pt.nk != L->nregs) {
      rerr(&r, "internal error: the reducer's registers do not match its source's rows: '", r.db->name);
      return NULL;
    }
    tl_buffer *acc = new_buffer(&r, "red_acc", r.at, TL_SCOPE_LOCAL, pt.nk);
    tl_var *k = acc ? loop_var(&r, "rk", pt.nk) : NULL;
    if (k)
      emit(&r,
           loop(&r, TL_LOOP_UNROLL, k, pt.nk, store1(&r, acc, V(&r, k), elem_load(&r, r.dst, r.dn, NULL, V(&r, k)))));
    if (k && pt.lanes > 1 && (k = loop_var(&r, "rk", pt.nk))) {
      tl_stmt *rounds[6];
      int n = 0;
      for (int64_t off = pt.lanes / 2; off >= 1; off /= 2) rounds[n++] = shfl_round(&r, acc, V(&r, k), off);
      emit(&r, loop(&r, TL_LOOP_UNROLL, k, pt.nk, seq_of(&r, n, rounds)));
    }
    if (k && pt.xwarps > 1) {
      tl_expr *tid = tid_expr(&r);
      if (!tid || !across_warps(&r, &pt, acc, tid) || !emit(&r, sync_stmt(&r))) k = NULL;
    }
    if (k && (k = loop_var(&r, "rk", pt.nk)))
      emit(&r,
           loop(&r, TL_LOOP_UNROLL, k, pt.nk, elem_store(&r, r.dst, r.dn, NULL, V(&r, k), load1(&r, acc, V(&r, k)))));
    if (!k) r.oom = true;
  }
  /* PLAN, ROWS, MMA_C: every element has one holder, whose partial is the result */
  tl_stmt *out = NULL;
  if (!r.oom && env->errors == 0) out = tl_ir_seq(r.m, r.loc, (int)r.out.len, r.out.data);
  if (out && r.out.len == 0) out = tl_lo_eval(r.m, r.loc, tl_lo_int(r.m, r.loc, 0));
  tl_vec_free(&r.out);
  return out;
}

/* ------------------------------------------------------- thread_allreduce */
static bool is_pow2(int64_t x) { return x > 0 && (x & (x - 1)) == 0; }

/* Shared path: every thread stores its value in slot tid of a scratch
 * buffer, then combines its group's slots base + j*S in j order (base =
 * tid / (S*N) * (S*N) + tid % S), so all threads of a group compute the
 * same value. */
static bool allreduce_shared(rd *r, tl_buffer *acc, int64_t S, int64_t N) {
  tl_module *m = r->m;
  tl_buffer *ws = new_buffer(r, "red_ws", r->at, TL_SCOPE_SHARED_DYN, r->env->threads);
  tl_expr *tid = tid_expr(r), *zero = I(r, 0);
  if (!ws || !tid || !emit(r, sync_stmt(r)) || !emit(r, store1(r, ws, tid, load1(r, acc, zero))) ||
      !emit(r, sync_stmt(r)))
    return false;
  tl_expr *base = tl_lo_add(m, r->loc, tl_lo_mul(m, r->loc, tl_lo_fdiv(m, r->loc, tid, S * N, r->env->ranges), S * N),
                            tl_lo_fmod(m, r->loc, tid, S, r->env->ranges));
  if (!emit(r, store1(r, acc, zero, load1(r, ws, base)))) return false;
  tl_var *j = N > 1 ? loop_var(r, "rj", N - 1) : NULL;
  if (j) {
    tl_expr *slot = tl_lo_add(m, r->loc, base, tl_lo_mul(m, r->loc, tl_lo_add(m, r->loc, V(r, j), I(r, 1)), S));
    tl_stmt *step = store1(r, acc, zero, combine(r, load1(r, acc, zero), load1(r, ws, slot)));
    if (!emit(r, loop(r, TL_LOOP_SERIAL, j, N - 1, step))) return false;
  } else if (N > 1) {
    return false;
  }
  return emit(r, sync_stmt(r)); /* the scratch may be reused after this */
}

tl_stmt *tl_lower_thread_allreduce(tl_lower_env *env, const tl_stmt *s) {
  rd r;
  rd_init(&r, env, s, TL_TILE_THREAD_ALLREDUCE);
  r.clear = true;
  tl_expr *const *at = s->u.tile.attrs;
  const char *op = at && at[0] && at[0]->kind == TL_EXPR_STRING ? at[0]->u.str : "sum";
  int64_t S = 1, N = 1, T = env->threads;
  if (at && at[1]) tl_expr_is_const_int(at[1], &S);
  if (at && at[2]) tl_expr_is_const_int(at[2], &N);
  r.is_max = !strcmp(op, "max");
  r.is_min = !strcmp(op, "min");
  r.dst = &s->u.tile.args[0].region;
  r.db = r.dst->buffer;
  r.dn = r.dst->ndim ? r.dst->ndim : r.db->ndim;
  r.dt = r.db->dtype;
  r.at = r.dt;
  if (S < 1 || N < 1 || T % (S * N) != 0) {
    char msg[160];
    snprintf(msg, sizeof msg, "a group of %lld threads at stride %lld does not tile the block's %lld threads",
             (long long)N, (long long)S, (long long)T);
    rerr(&r, msg, NULL);
    return NULL;
  }
  tl_expr *zero = I(&r, 0);
  tl_buffer *acc = new_buffer(&r, "red_acc", r.at, TL_SCOPE_LOCAL, 1);
  bool ok = acc && emit(&r, store1(&r, acc, zero, conv(&r, s->u.tile.args[1].expr)));
  if (ok && N > 1 && is_pow2(S) && is_pow2(N) && S * N <= 32 && (T < 32 || T % 32 == 0)) {
    for (int64_t off = S * N / 2; ok && off >= S; off /= 2) ok = emit(&r, shfl_round(&r, acc, zero, off));
  } else if (ok && N > 1) {
    ok = allreduce_shared(&r, acc, S, N);
  }
  tl_expr **off = tl_arena_alloc(&r.m->arena, sizeof(tl_expr *) * (size_t)(r.dn > 0 ? r.dn : 1));
  for (int d = 0; off && d < r.dn; d++) off[d] = zero;
  ok = ok && off && emit(&r, elem_store(&r, r.dst, r.dn, off, NULL, load1(&r, acc, zero)));
  tl_stmt *out = ok && !r.oom ? tl_ir_seq(r.m, r.loc, (int)r.out.len, r.out.data) : NULL;
  tl_vec_free(&r.out);
  return out;
}

/* ------------------------------------------------ staging (dim != last) */
/* A shared.dyn scratch tile of region g's shape: its ALLOC into *alloc and
 * its whole-buffer region operand into *o. */
static bool scratch_of(tl_lower_env *env, const tl_region *g, tl_loc loc, tl_stmt **alloc, tl_operand *o) {
  tl_module *m = env->m;
  int64_t ext[8];
  int n = region_ext(g, ext);
  tl_expr **shape = n > 0 ? tl_arena_alloc(&m->arena, sizeof(tl_expr *) * (size_t)n) : NULL;
  tl_var *nm = shape ? tl_names_fresh_var(env->names, loc, "red_stage", TL_INT32, TL_VAR_LOOP) : NULL;
  if (!nm) return false;
  for (int k = 0; k < n; k++)
    if (!(shape[k] = tl_lo_int(m, loc, ext[k]))) return false;
  tl_buffer *b = tl_ir_new_buffer(m, loc, nm->name, g->buffer->dtype, TL_SCOPE_SHARED_DYN, n, shape);
  if (!b || !(*alloc = tl_ir_stmt(m, loc, TL_STMT_ALLOC))) return false;
  (*alloc)->u.alloc.buffer = b;
  memset(o, 0, sizeof *o);
  o->kind = TL_OPND_REGION;
  o->region.buffer = b; /* ndim 0: the whole scratch tile */
  o->loc = loc;
  return true;
}

/* A tile-level T.copy(src, dst). */
static tl_stmt *copy_of(tl_module *m, tl_loc loc, const tl_operand *src, const tl_operand *dst) {
  tl_stmt *c = tl_ir_stmt(m, loc, TL_STMT_TILE);
  tl_operand *args = c ? tl_arena_alloc(&m->arena, 2 * sizeof(tl_operand)) : NULL;
  if (!args) return NULL;
  args[0] = *src;
  args[1] = *dst;
  c->u.tile.op = TL_TILE_COPY;
  c->u.tile.nargs = 2;
  c->u.tile.args = args;
  return c;
}

bool tl_reduce_staging(tl_lower_env *env, const tl_stmt *s, tl_reduce_stage *st) {
  memset(st, 0, sizeof *st);
  if (s->u.tile.nargs < 2 || s->u.tile.args[0].kind != TL_OPND_REGION || s->u.tile.args[1].kind != TL_OPND_REGION)
    return false;
  const tl_region *src = &s->u.tile.args[0].region, *dst = &s->u.tile.args[1].region;
  const tl_frag_layout *SL = tl_frag_layout_of(src->buffer), *DL = tl_frag_layout_of(dst->buffer);
  int64_t ext[8], dim = -1;
  int n = region_ext(src, ext);
  if (n < 1) return false;
  if (s->u.tile.attrs && s->u.tile.attrs[0]) tl_expr_is_const_int(s->u.tile.attrs[0], &dim);
  if (dim < 0) dim += n;
  if (dim < 0 || dim >= n - 1) return false;        /* the last dim: lowered in place */
  if (DL && DL->kind == TL_FRAG_COLS) return false; /* column statistics: lower_cols, in place */
  bool dred = DL && DL->kind == TL_FRAG_REDUCER;
  bool ssrc = SL && (SL->kind != TL_FRAG_REPLICATED || dred);
  bool sdst = DL && DL->kind != TL_FRAG_REPLICATED && !dred;
  if (!ssrc && !sdst) return false;
  tl_module *m = env->m;
  tl_loc loc = s->loc;
  tl_stmt *r = tl_ir_stmt(m, loc, TL_STMT_TILE);
  tl_operand *rargs = r ? tl_arena_alloc(&m->arena, (size_t)s->u.tile.nargs * sizeof(tl_operand)) : NULL;
  if (!rargs) return false;
  memcpy(rargs, s->u.tile.args, (size_t)s->u.tile.nargs * sizeof(tl_operand));
  r->u.tile = s->u.tile;
  r->u.tile.args = rargs;
  if (ssrc && (!scratch_of(env, src, loc, &st->alloc[0], &rargs[0]) ||
               !(st->copy_in[0] = copy_of(m, loc, &s->u.tile.args[0], &rargs[0]))))
    return false;
  if (sdst) {
    int64_t clear = 1;
    if (s->u.tile.attrs && s->u.tile.attrs[1]) tl_expr_is_const_int(s->u.tile.attrs[1], &clear);
    if (!scratch_of(env, dst, loc, &st->alloc[1], &rargs[1]) ||
        !(st->copy_out = copy_of(m, loc, &rargs[1], &s->u.tile.args[1])) ||
        (!clear && !(st->copy_in[1] = copy_of(m, loc, &s->u.tile.args[1], &rargs[1]))))
      return false;
  }
  st->red = r;
  return true;
}
