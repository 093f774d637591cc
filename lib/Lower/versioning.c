/* Pass "versioning" of lib/Lower (tile IR → tile IR): a T.Parallel loop
 * whose only statement stores T.if_then_else(cond, a, b), with cond an
 * integer comparison affine in the loop variables, gets a second version
 * for the case where cond holds at every iteration:
 *
 *     for i, j in T.Parallel(M, N): X[i, j] = T.if_then_else(c(i, j), a, b)
 *  →
 *     if c(i*, j*):                       (i*, j* the corner where c is tightest)
 *         for i, j in T.Parallel(M, N): X[i, j] = a
 *     else:
 *         for i, j in T.Parallel(M, N): X[i, j] = T.if_then_else(c(i, j), a, b)
 *
 * FlashAttention's causal mask (bx*BM + i >= k*BN + j) is the case in
 * point: it holds everywhere on every key block left of the diagonal, where
 * the per-element compare and select are a sixth of the loop's instructions;
 * FlashAttention-2 likewise masks only the diagonal blocks.  The condition is
 * uniform across the block (it names only the loop's constants and variables
 * bound outside it), so the branch does not diverge.
 *
 * Requires: tile IR after barriers (before layout inference, which sees both
 * loops; they access X alike).  Exact: with e = lhs - rhs = Σ c_v·v + R (R
 * free of the loop variables, tl_expr_lane_coef), e ranges over
 * [R + Σ min(c_v·lo_v, c_v·hi_v), R + Σ max(...)] on the loop's box, so
 * `lhs >= rhs` (or >) at the corner minimising e, and `<=` (or <) at the
 * corner maximising it, holds iff it holds at every iteration.  Loops whose
 * bounds are not constants, or whose condition or indices are not plain
 * integer arithmetic, are left alone. */
#include <string.h>

#include "Lower/lower_internal.h"

typedef struct vs_state {
  tl_module *m;
  const tl_stmt *loop; /* the loop whose variables are being replaced */
  const int64_t *corner;
  bool ok;
} vs_state;

/* A fresh copy of e with the loop's variables replaced by corner values
 * (corner NULL: a plain copy).  Only constants, variables, arithmetic and
 * casts; anything else clears st->ok. */
static tl_expr *copy_expr(vs_state *st, const tl_expr *e, int depth) {
  if (!e || !st->ok || depth > TL_LOWER_MAX_DEPTH) {
    st->ok = false;
    return NULL;
  }
  tl_module *m = st->m;
  switch (e->kind) {
    case TL_EXPR_INT: return tl_ir_int(m, e->loc, e->dtype, e->u.ival);
    case TL_EXPR_FLOAT: return tl_ir_float(m, e->loc, e->dtype, e->u.fval);
    case TL_EXPR_VAR:
      for (int k = 0; st->corner && k < st->loop->u.loop.nvars; k++)
        if (st->loop->u.loop.vars[k] == e->u.var) return tl_ir_int(m, e->loc, e->dtype, st->corner[k]);
      return tl_ir_var(m, e->loc, e->u.var);
    case TL_EXPR_BINARY: {
      tl_expr *a = copy_expr(st, e->u.bin.a, depth + 1), *b = copy_expr(st, e->u.bin.b, depth + 1);
      return a && b ? tl_ir_binary(m, e->loc, e->u.bin.op, a, b) : NULL;
    }
    case TL_EXPR_CAST: {
      tl_expr *v = copy_expr(st, e->u.cast.value, depth + 1);
      return v ? tl_ir_cast(m, e->loc, e->dtype, v) : NULL;
    }
    default: st->ok = false; return NULL;
  }
}

/* The versioned form of T.Parallel loop s, or NULL to leave it. */
static tl_stmt *version(tl_module *m, tl_stmt *s) {
  int nv = s->u.loop.nvars;
  if (s->u.loop.kind != TL_LOOP_PARALLEL || nv < 1 || nv > 8 || s->u.loop.step) return NULL;
  tl_stmt *st = s->u.loop.body;
  if (st && st->kind == TL_STMT_SEQ && st->u.seq.n == 1) st = st->u.seq.stmts[0];
  if (!st || st->kind != TL_STMT_STORE) return NULL;
  const tl_expr *v = st->u.store.value;
  if (!v || v->kind != TL_EXPR_SELECT || !v->u.sel.cond || v->u.sel.cond->kind != TL_EXPR_BINARY) return NULL;
  const tl_expr *c = v->u.sel.cond;
  tl_binop op = c->u.bin.op;
  if (op != TL_OP_GE && op != TL_OP_GT && op != TL_OP_LE && op != TL_OP_LT) return NULL;
  if (!tl_dtype_is_int(c->u.bin.a->dtype) || !tl_dtype_is_int(c->u.bin.b->dtype)) return NULL;
  bool want_min = op == TL_OP_GE || op == TL_OP_GT; /* the tight corner minimises lhs - rhs */
  tl_expr *e = tl_ir_binary(m, c->loc, TL_OP_SUB, c->u.bin.a, c->u.bin.b);
  if (!e) return NULL;
  int64_t corner[8];
  bool any = false;
  for (int k = 0; k < nv; k++) {
    int64_t lo = 0, n = 0, coef = 0;
    if (!tl_expr_is_const_int(s->u.loop.mins[k], &lo) || !tl_expr_is_const_int(s->u.loop.extents[k], &n) ||
        n < 1 || !tl_expr_lane_coef(e, s->u.loop.vars[k], &coef))
      return NULL;
    any |= coef != 0;
    corner[k] = (coef >= 0) == want_min ? lo : lo + n - 1;
  }
  if (!any) return NULL; /* uniform already: nothing to gain */
  vs_state vs = {m, s, corner, true};
  tl_expr *lhs = copy_expr(&vs, c->u.bin.a, 0), *rhs = copy_expr(&vs, c->u.bin.b, 0);
  vs.corner = NULL;
  tl_expr **idx = st->u.store.n ? tl_arena_alloc(&m->arena, sizeof(tl_expr *) * (size_t)st->u.store.n) : NULL;
  for (int k = 0; idx && k < st->u.store.n; k++) idx[k] = copy_expr(&vs, st->u.store.indices[k], 0);
  tl_expr *a = copy_expr(&vs, v->u.sel.t, 0);
  if (!vs.ok || !lhs || !rhs || (st->u.store.n && !idx) || !a) return NULL;
  tl_expr *all = tl_ir_binary(m, c->loc, op, lhs, rhs);
  tl_stmt *store = tl_ir_stmt(m, st->loc, TL_STMT_STORE);
  tl_stmt *fast = tl_ir_stmt(m, s->loc, TL_STMT_FOR);
  if (!all || !store || !fast) return NULL;
  store->u.store = st->u.store;
  store->u.store.indices = idx;
  store->u.store.value = a;
  fast->u.loop = s->u.loop;
  fast->u.loop.body = store;
  return tl_lo_if(m, s->loc, all, fast, s);
}

static tl_stmt *version_loop(void *m, tl_stmt *loop) {
  return loop->u.loop.kind == TL_LOOP_PARALLEL ? version(m, loop) : NULL;
}

bool tl_lower_versioning(tl_module *m, tl_primfunc *f, const tl_target *target, tl_diag *d) {
  (void)target; /* nothing here depends on the target yet */
  (void)d;
  if (!m || !f) return false;
  f->body = tl_lo_rewrite_loops(f->body, version_loop, m);
  return true;
}
