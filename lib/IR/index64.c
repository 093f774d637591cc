/* 64-bit indices into large tensors (lib/IR/tir.h: tl_widen_indices).
 *
 * Role: an index into a dimension of a global tensor that can exceed int32
 * (a constant extent above 2^31 - 1, or an int64 extent expression) must be
 * computed in int64: `A[bx * 1024 + i]` over 2^33 elements wraps in int32
 * silently.  As TileLang's index legalisation does, such an index
 * is rebuilt in int64 throughout: its + - * // % min max, selects, ramps and
 * broadcasts take int64 operands, its other leaves (variables, loads, calls,
 * narrowing casts) are sign-extended (zero-extended when unsigned), so the
 * reference evaluator, the SIMT executor and codegen all compute the same
 * int64 value.  Indices of other dimensions keep their dtype (codegen
 * flattens the dims in i64 anyway), so kernels whose tensors stay small are
 * unchanged.  In a function with such a tensor, a widening cast of signed
 * 32-bit arithmetic (`bx * 1024 + i < N` with N above 2^31 casts the left
 * side) is computed in int64 too, so that bounds guards agree with the
 * indices they guard.  TileLang's pass config "tl.config_index_bitwidth": 64
 * (tl_pass_configs.index_bitwidth_64) treats every global tensor dim so.
 *
 * Requires: a verified tile or SIMT IR module.  Guarantees: every load and
 * store index and every tile-op region min into such a dimension is an int64
 * (or int64-lane) expression; nothing else changes.  Works in place (index
 * arrays of loads, stores and regions are replaced); idempotent. */
#include "IR/tir.h"
#include "IR/visit.h"

/* Whether dimension d of b can hold more than 2^31 - 1 elements, or is
 * global while the function asks for 64-bit indices everywhere (all). */
static bool wide_dim(const tl_buffer *b, int d, bool all) {
  if (!b || b->scope != TL_SCOPE_GLOBAL || d >= b->ndim || !b->shape || !b->shape[d]) return false;
  if (all) return true;
  int64_t v;
  if (tl_expr_is_const_int(b->shape[d], &v)) return v > INT32_MAX;
  return b->shape[d]->dtype.bits > 32;
}

static bool has_wide_dim(const tl_buffer *b, bool all) {
  for (int d = 0; b && d < b->ndim; d++)
    if (wide_dim(b, d, all)) return true;
  return false;
}

/* The binary ops that widen() rebuilds in int64 (+ - * // % / min max): those
 * whose 32-bit result can wrap where the 64-bit one does not. */
static bool widens_op(tl_binop op) {
  switch (op) {
  case TL_OP_ADD:
  case TL_OP_SUB:
  case TL_OP_MUL:
  case TL_OP_FLOORDIV:
  case TL_OP_FLOORMOD:
  case TL_OP_DIV:
  case TL_OP_MIN:
  case TL_OP_MAX: return true;
  default: return false;
  }
}

/* e rebuilt in int64 (lanes kept); NULL on OOM. */
static tl_expr *widen(tl_module *m, tl_expr *e, int depth) {
  if (!e) return NULL;
  tl_dtype t = e->dtype;
  if (!tl_dtype_is_int(t) || t.bits >= 64) return e;
  tl_dtype w = TL_INT64;
  w.lanes = t.lanes;
  bool sgn = t.code == TL_TYPE_INT;
  if (depth < 64 && sgn) {
    switch (e->kind) {
    case TL_EXPR_BINARY:
      if (widens_op(e->u.bin.op))
        return tl_ir_binary(m, e->loc, e->u.bin.op, widen(m, e->u.bin.a, depth + 1), widen(m, e->u.bin.b, depth + 1));
      break;
    case TL_EXPR_UNARY:
      if (e->u.un.op == TL_OP_NEG) return tl_ir_unary(m, e->loc, TL_OP_NEG, widen(m, e->u.un.a, depth + 1));
      break;
    case TL_EXPR_SELECT:
      return tl_ir_select(m, e->loc, e->u.sel.cond, widen(m, e->u.sel.t, depth + 1), widen(m, e->u.sel.f, depth + 1));
    case TL_EXPR_RAMP: {
      tl_expr *r = tl_ir_expr(m, e->loc, TL_EXPR_RAMP, w);
      if (!r) return NULL;
      r->u.ramp.base = widen(m, e->u.ramp.base, depth + 1);
      r->u.ramp.stride = widen(m, e->u.ramp.stride, depth + 1);
      return r->u.ramp.base && r->u.ramp.stride ? r : NULL;
    }
    case TL_EXPR_BROADCAST: {
      tl_expr *r = tl_ir_expr(m, e->loc, TL_EXPR_BROADCAST, w);
      if (!r) return NULL;
      r->u.bcast.value = widen(m, e->u.bcast.value, depth + 1);
      return r->u.bcast.value ? r : NULL;
    }
    case TL_EXPR_CAST: /* a widening cast: widen what it casts */
      if (tl_dtype_is_int(e->u.cast.value->dtype) && e->u.cast.value->dtype.bits <= t.bits &&
          e->u.cast.value->dtype.code == TL_TYPE_INT)
        return widen(m, e->u.cast.value, depth + 1);
      break;
    default: break;
    }
  }
  return tl_ir_cast(m, e->loc, w, e);
}

/* The indices idx[0..n) of an access to b with the wide dims widened, in a
 * new array when any changed (else idx itself); NULL on OOM. */
static tl_expr **widen_indices(tl_module *m, const tl_buffer *b, int n, tl_expr **idx, bool all) {
  tl_expr **out = idx;
  for (int d = 0; d < n && d < b->ndim; d++) {
    if (!wide_dim(b, d, all) || !idx[d]) continue;
    tl_expr *w = widen(m, idx[d], 0);
    if (!w) return NULL;
    if (w == idx[d]) continue;
    if (out == idx) {
      out = tl_arena_alloc(&m->arena, sizeof(tl_expr *) * (size_t)n);
      if (!out) return NULL;
      for (int k = 0; k < n; k++) out[k] = idx[k];
    }
    out[d] = w;
  }
  return out;
}

typedef struct widen_visit {
  tl_visitor v;
  tl_module *m;
  bool all; /* the function has "tl.config_index_bitwidth": 64 */
  bool oom;
} widen_visit;

/* Signed 32-bit (or narrower) + - * // % min max: what a widening cast of it
 * must not compute in 32 bits first. */
static bool narrow_arith(const tl_expr *x) {
  return x->kind == TL_EXPR_BINARY && x->dtype.code == TL_TYPE_INT && x->dtype.bits < 64 && widens_op(x->u.bin.op);
}

static void widen_expr(tl_visitor *v, const tl_expr *e) {
  widen_visit *u = (widen_visit *)v;
  if (e->kind == TL_EXPR_CAST && e->dtype.code == TL_TYPE_INT && e->dtype.bits == 64 && narrow_arith(e->u.cast.value)) {
    /* int64(bx * 1024 + i) beside an int64 extent (a bounds guard `idx < N`):
     * the same value computed in int64, in place (the node keeps its dtype) */
    tl_expr *w = widen(u->m, e->u.cast.value, 0);
    if (!w) u->oom = true;
    else if (tl_dtype_eq(w->dtype, e->dtype)) *(tl_expr *)e = *w;
    return;
  }
  if (e->kind != TL_EXPR_LOAD || !has_wide_dim(e->u.load.buffer, u->all)) return;
  tl_expr *le = (tl_expr *)e; /* in place: an index array belongs to its load */
  tl_expr **ix = widen_indices(u->m, le->u.load.buffer, le->u.load.n, le->u.load.indices, u->all);
  if (ix) le->u.load.indices = ix;
  else u->oom = true;
}

static void widen_stmt(tl_visitor *v, const tl_stmt *s) {
  widen_visit *u = (widen_visit *)v;
  if (s->kind != TL_STMT_STORE || !has_wide_dim(s->u.store.buffer, u->all)) return;
  tl_stmt *ms = (tl_stmt *)s;
  tl_expr **ix = widen_indices(u->m, ms->u.store.buffer, ms->u.store.n, ms->u.store.indices, u->all);
  if (ix) ms->u.store.indices = ix;
  else u->oom = true;
}

static void widen_region(tl_visitor *v, const tl_region *r) {
  widen_visit *u = (widen_visit *)v;
  if (!r->min || !has_wide_dim(r->buffer, u->all)) return;
  tl_region *mr = (tl_region *)r;
  tl_expr **ix = widen_indices(u->m, mr->buffer, mr->ndim, mr->min, u->all);
  if (ix) mr->min = ix;
  else u->oom = true;
}

bool tl_widen_indices(tl_module *m) {
  if (!m) return false;
  widen_visit u = {.v = {.expr = widen_expr, .stmt = widen_stmt, .region = widen_region}, .m = m};
  for (int i = 0; i < m->nfuncs; i++) {
    const tl_primfunc *f = m->funcs[i];
    if (!f) continue;
    u.all = f->pass_configs.index_bitwidth_64;
    bool any = false;
    for (int p = 0; p < f->nparams; p++)
      any |= f->params[p].kind == TL_PARAM_TENSOR && has_wide_dim(f->params[p].buffer, u.all);
    if (any && f->body) tl_visit_stmt(&u.v, f->body);
  }
  return !u.oom && !m->arena.oom;
}
