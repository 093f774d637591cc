/* The substituting copier of the tile/SIMT IR (rewrite.h): defaults for
 * every node kind, with the pass's hooks consulted first (expr, stmt) or on
 * the rebuilt operands (access, call). */
#include "IR/rewrite.h"

static bool deeper(tl_rewriter *rw, tl_loc loc, int depth) {
  if (rw->max_depth <= 0 || depth <= rw->max_depth) return false;
  if (!rw->too_deep) rw->deep_loc = loc;
  rw->too_deep = rw->failed = true;
  return true;
}

static void *alloc(tl_rewriter *rw, size_t size) {
  void *p = tl_arena_alloc(&rw->m->arena, size);
  if (!p) rw->failed = true;
  return p;
}

tl_expr **tl_rewrite_exprs(tl_rewriter *rw, int n, tl_expr *const *xs, int front, int depth) {
  int total = n + front;
  tl_expr **out = alloc(rw, sizeof(tl_expr *) * (size_t)(total > 0 ? total : 1));
  if (!out) return NULL;
  for (int i = 0; i < n; i++)
    if (!(out[front + i] = tl_rewrite_expr(rw, xs[i], depth + 1))) return NULL;
  return out;
}

/* Did every operand come back as itself (share_unchanged)? */
static bool same(const tl_rewriter *rw, int n, tl_expr *const *a, tl_expr *const *b) {
  if (!rw->share_unchanged) return false;
  for (int i = 0; i < n; i++)
    if (a[i] != b[i]) return false;
  return true;
}

static tl_expr *copy_node(tl_rewriter *rw, const tl_expr *e) {
  tl_expr *r = alloc(rw, sizeof *r);
  if (r) *r = *e;
  return r;
}

/* Loads and calls: operands rewritten, then the hooks. */
static tl_expr *rw_load(tl_rewriter *rw, const tl_expr *e, int depth) {
  int n = e->u.load.n;
  tl_expr **ix = tl_rewrite_exprs(rw, n, e->u.load.indices, 0, depth);
  if (!ix) return NULL;
  tl_buffer *b = e->u.load.buffer;
  if (rw->access && !(ix = rw->access(rw, e->loc, &b, &n, ix))) {
    rw->failed = true;
    return NULL;
  }
  if (b == e->u.load.buffer && n == e->u.load.n && same(rw, n, ix, e->u.load.indices)) return (tl_expr *)e;
  tl_expr *r = tl_ir_load(rw->m, e->loc, b, n, ix);
  if (r) r->dtype = e->dtype;
  return r;
}

static tl_expr *rw_call(tl_rewriter *rw, const tl_expr *e, int depth) {
  int n = e->u.call.n;
  tl_expr **a = tl_rewrite_exprs(rw, n, e->u.call.args, 0, depth);
  if (!a) return NULL;
  if (rw->call) {
    tl_expr *r = rw->call(rw, e, n, a);
    if (!r) rw->failed = true;
    return r;
  }
  if (same(rw, n, a, e->u.call.args)) return (tl_expr *)e;
  tl_expr *r = tl_ir_call(rw->m, e->loc, e->u.call.op, n, a);
  if (r && !tl_dtype_eq(r->dtype, e->dtype) && r->dtype.lanes == 1 && e->dtype.lanes == 1 &&
      e->dtype.code != TL_TYPE_VOID)
    r = tl_ir_cast(rw->m, e->loc, e->dtype, r);
  return r;
}

static tl_expr *rw_default(tl_rewriter *rw, const tl_expr *e, int depth) {
  tl_module *m = rw->m;
  switch (e->kind) {
  case TL_EXPR_VAR: {
    tl_expr *x = rw->subst ? tl_map_get(rw->subst, e->u.var, NULL) : NULL;
    return x ? x : (tl_expr *)e;
  }
  case TL_EXPR_BINARY: {
    tl_expr *x[2] = {tl_rewrite_expr(rw, e->u.bin.a, depth + 1), tl_rewrite_expr(rw, e->u.bin.b, depth + 1)};
    if (!x[0] || !x[1]) return NULL;
    tl_expr *const o[2] = {e->u.bin.a, e->u.bin.b};
    return same(rw, 2, x, o) ? (tl_expr *)e : tl_ir_binary(m, e->loc, e->u.bin.op, x[0], x[1]);
  }
  case TL_EXPR_UNARY: {
    tl_expr *x = tl_rewrite_expr(rw, e->u.un.a, depth + 1);
    if (!x) return NULL;
    return same(rw, 1, &x, &e->u.un.a) ? (tl_expr *)e : tl_ir_unary(m, e->loc, e->u.un.op, x);
  }
  case TL_EXPR_SELECT: {
    tl_expr *x[3] = {tl_rewrite_expr(rw, e->u.sel.cond, depth + 1), tl_rewrite_expr(rw, e->u.sel.t, depth + 1),
                     tl_rewrite_expr(rw, e->u.sel.f, depth + 1)};
    if (!x[0] || !x[1] || !x[2]) return NULL;
    tl_expr *const o[3] = {e->u.sel.cond, e->u.sel.t, e->u.sel.f};
    return same(rw, 3, x, o) ? (tl_expr *)e : tl_ir_select(m, e->loc, x[0], x[1], x[2]);
  }
  case TL_EXPR_CAST: {
    tl_expr *x = tl_rewrite_expr(rw, e->u.cast.value, depth + 1);
    if (!x) return NULL;
    return same(rw, 1, &x, &e->u.cast.value) ? (tl_expr *)e : tl_ir_cast(m, e->loc, e->dtype, x);
  }
  case TL_EXPR_LOAD: return rw_load(rw, e, depth);
  case TL_EXPR_CALL: return rw_call(rw, e, depth);
  case TL_EXPR_RAMP: {
    tl_expr *x[2] = {tl_rewrite_expr(rw, e->u.ramp.base, depth + 1), tl_rewrite_expr(rw, e->u.ramp.stride, depth + 1)};
    if (!x[0] || !x[1]) return NULL;
    tl_expr *const o[2] = {e->u.ramp.base, e->u.ramp.stride};
    if (same(rw, 2, x, o)) return (tl_expr *)e;
    tl_expr *r = copy_node(rw, e);
    if (r) r->u.ramp.base = x[0], r->u.ramp.stride = x[1];
    return r;
  }
  case TL_EXPR_BROADCAST: {
    tl_expr *x = tl_rewrite_expr(rw, e->u.bcast.value, depth + 1);
    if (!x) return NULL;
    if (same(rw, 1, &x, &e->u.bcast.value)) return (tl_expr *)e;
    tl_expr *r = copy_node(rw, e);
    if (r) r->u.bcast.value = x;
    return r;
  }
  default: return (tl_expr *)e; /* INT, FLOAT, STRING, BUFFER */
  }
}

/* ---------------------------------------------------------------- stmts */
/* *out = the copy of the optional expression x (NULL stays NULL). */
static bool opt_expr(tl_rewriter *rw, tl_expr **out, const tl_expr *x) {
  *out = x ? tl_rewrite_expr(rw, x, 1) : NULL;
  return !x || *out;
}

static bool rw_region(tl_rewriter *rw, tl_region *r) {
  tl_expr **mn = r->min ? tl_rewrite_exprs(rw, r->ndim, r->min, 0, 0) : NULL;
  tl_expr **ex = r->extent ? tl_rewrite_exprs(rw, r->ndim, r->extent, 0, 0) : NULL;
  if ((r->min && !mn) || (r->extent && !ex)) return false;
  r->min = mn;
  r->extent = ex;
  return true;
}

static bool rw_tile(tl_rewriter *rw, tl_stmt *r) {
  int n = r->u.tile.nargs;
  tl_operand *args = alloc(rw, sizeof(tl_operand) * (size_t)(n > 0 ? n : 1));
  if (!args) return false;
  for (int i = 0; i < n; i++) {
    args[i] = r->u.tile.args[i];
    if (args[i].kind == TL_OPND_REGION ? !rw_region(rw, &args[i].region) : !opt_expr(rw, &args[i].expr, args[i].expr))
      return false;
  }
  r->u.tile.args = args;
  int op = r->u.tile.op;
  if (r->u.tile.attrs && op >= 0 && op < TL_TILE_NUM_OPS && tl_tile_ops[op].nattrs > 0) {
    int na = tl_tile_ops[op].nattrs;
    tl_expr **at = alloc(rw, sizeof(tl_expr *) * (size_t)na);
    if (!at) return false;
    for (int i = 0; i < na; i++)
      if (!opt_expr(rw, &at[i], r->u.tile.attrs[i])) return false;
    r->u.tile.attrs = at;
  }
  return true;
}

static tl_stmt *rw_stmt_default(tl_rewriter *rw, const tl_stmt *s, int depth) {
  if (s->kind == TL_STMT_ALLOC) return (tl_stmt *)s;
  tl_stmt *r = tl_ir_stmt(rw->m, s->loc, s->kind);
  if (!r) return NULL;
  *r = *s;
  switch (s->kind) {
  case TL_STMT_SEQ: {
    int n = s->u.seq.n;
    if (!(r->u.seq.stmts = alloc(rw, sizeof(tl_stmt *) * (size_t)(n > 0 ? n : 1)))) return NULL;
    for (int i = 0; i < n; i++)
      if (!(r->u.seq.stmts[i] = tl_rewrite_stmt(rw, s->u.seq.stmts[i], depth + 1))) return NULL;
    return r;
  }
  case TL_STMT_FOR: {
    int n = s->u.loop.nvars;
    if (s->u.loop.mins) {
      if (!(r->u.loop.mins = alloc(rw, sizeof(tl_expr *) * (size_t)(n > 0 ? n : 1)))) return NULL;
      for (int k = 0; k < n; k++)
        if (!opt_expr(rw, &r->u.loop.mins[k], s->u.loop.mins[k])) return NULL;
    }
    if (!(r->u.loop.extents = tl_rewrite_exprs(rw, n, s->u.loop.extents, 0, 0))) return NULL;
    if (!opt_expr(rw, &r->u.loop.step, s->u.loop.step)) return NULL;
    return (r->u.loop.body = tl_rewrite_stmt(rw, s->u.loop.body, depth + 1)) ? r : NULL;
  }
  case TL_STMT_KERNEL:
    for (int i = 0; i < s->u.kernel.ngrid && i < 3; i++)
      if (!opt_expr(rw, &r->u.kernel.grid[i], s->u.kernel.grid[i])) return NULL;
    if (!opt_expr(rw, &r->u.kernel.threads, s->u.kernel.threads)) return NULL;
    return (r->u.kernel.body = tl_rewrite_stmt(rw, s->u.kernel.body, depth + 1)) ? r : NULL;
  case TL_STMT_STORE: {
    int n = s->u.store.n;
    tl_expr **ix = tl_rewrite_exprs(rw, n, s->u.store.indices, 0, 0);
    if (ix && rw->access && !(ix = rw->access(rw, s->loc, &r->u.store.buffer, &n, ix))) rw->failed = true;
    if (!ix) return NULL;
    r->u.store.indices = ix;
    r->u.store.n = n;
    return opt_expr(rw, &r->u.store.value, s->u.store.value) ? r : NULL;
  }
  case TL_STMT_IF:
    if (!opt_expr(rw, &r->u.ifs.cond, s->u.ifs.cond)) return NULL;
    if (!(r->u.ifs.then_s = tl_rewrite_stmt(rw, s->u.ifs.then_s, depth + 1))) return NULL;
    return !s->u.ifs.else_s || (r->u.ifs.else_s = tl_rewrite_stmt(rw, s->u.ifs.else_s, depth + 1)) ? r : NULL;
  case TL_STMT_WHILE:
    if (!opt_expr(rw, &r->u.whiles.cond, s->u.whiles.cond)) return NULL;
    return (r->u.whiles.body = tl_rewrite_stmt(rw, s->u.whiles.body, depth + 1)) ? r : NULL;
  case TL_STMT_LET: return opt_expr(rw, &r->u.let.value, s->u.let.value) ? r : NULL;
  case TL_STMT_EVAL: return opt_expr(rw, &r->u.eval.value, s->u.eval.value) ? r : NULL;
  case TL_STMT_TILE: return rw_tile(rw, r) ? r : NULL;
  default: return r;
  }
}

/* One node, an expression (is_expr) or a statement: the pre-hook, then,
 * when it declines (NULL without setting failed), the default copy.
 * rw->failed is cleared around the hook so that its verdict is its own. */
static void *rewrite_node(tl_rewriter *rw, const void *node, bool is_expr, int depth) {
  const tl_expr *e = is_expr ? node : NULL;
  const tl_stmt *s = is_expr ? NULL : node;
  if (!node || deeper(rw, e ? e->loc : s->loc, depth)) return NULL;
  bool before = rw->failed;
  rw->failed = false;
  void *r = e ? (rw->expr ? (void *)rw->expr(rw, e, depth) : NULL) : (rw->stmt ? (void *)rw->stmt(rw, s, depth) : NULL);
  if (rw->failed) return NULL;
  rw->failed = before;
  if (!r) r = e ? (void *)rw_default(rw, e, depth) : (void *)rw_stmt_default(rw, s, depth);
  if (!r) rw->failed = true;
  return r;
}

tl_expr *tl_rewrite_expr(tl_rewriter *rw, const tl_expr *e, int depth) { return rewrite_node(rw, e, true, depth); }

tl_stmt *tl_rewrite_stmt(tl_rewriter *rw, const tl_stmt *s, int depth) { return rewrite_node(rw, s, false, depth); }
