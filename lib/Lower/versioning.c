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
 * integer arithmetic, are left alone.
 * Guarantees: the same results (the new version runs only where c holds at
 * every iteration, and there stores what the original stores); the
 * original loop is kept, unchanged, as the else branch; nothing else
 * changes. */
#include <string.h>

#include "IR/rewrite.h"
#include "Lower/lower_internal.h"

/* Copies (IR/rewrite.h) of plain integer arithmetic only: constants,
 * variables, arithmetic and casts; anything else fails the copy. */
static tl_expr *arith_only(tl_rewriter *rw, const tl_expr *e, int depth) {
  (void)depth;
  switch (e->kind) {
  case TL_EXPR_INT:
  case TL_EXPR_FLOAT:
  case TL_EXPR_VAR:
  case TL_EXPR_BINARY:
  case TL_EXPR_CAST: return NULL;
  default: rw->failed = true; return NULL;
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
    if (!tl_expr_is_const_int(s->u.loop.mins[k], &lo) || !tl_expr_is_const_int(s->u.loop.extents[k], &n) || n < 1 ||
        !tl_expr_lane_coef(e, s->u.loop.vars[k], &coef))
      return NULL;
    any |= coef != 0;
    corner[k] = (coef >= 0) == want_min ? lo : lo + n - 1;
  }
  if (!any) return NULL; /* uniform already: nothing to gain */
  /* the condition at the corner: the loop's variables := corner values */
  tl_map at;
  tl_map_init(&at);
  bool ok = true;
  for (int k = 0; k < nv; k++) {
    tl_expr *x = tl_ir_int(m, s->loc, s->u.loop.vars[k]->dtype, corner[k]);
    ok = ok && x && tl_map_put(&at, s->u.loop.vars[k], x);
  }
  tl_rewriter rw = {.m = m, .subst = &at, .max_depth = TL_LOWER_MAX_DEPTH, .expr = arith_only};
  tl_expr *lhs = ok ? tl_rewrite_expr(&rw, c->u.bin.a, 0) : NULL;
  tl_expr *rhs = lhs ? tl_rewrite_expr(&rw, c->u.bin.b, 0) : NULL;
  tl_map_free(&at);
  rw.subst = NULL;
  tl_expr **idx = tl_rewrite_exprs(&rw, st->u.store.n, st->u.store.indices, 0, -1);
  tl_expr *a = tl_rewrite_expr(&rw, v->u.sel.t, 0);
  if (!lhs || !rhs || !idx || !a) return NULL;
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
