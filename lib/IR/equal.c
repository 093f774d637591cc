/* Structural equality of modules (tl_module_equal).
 *
 * Algorithm: a simultaneous walk of both modules.  Variables and buffers are
 * matched by binding, not by pointer or name: when a definition is met
 * (dynamic symbols, parameters, kernel block variables, loop variables,
 * lets, allocations) the pair (a's object → b's object) is entered in a map
 * after checking dtype/shape/scope; later uses must map to each other.
 * Objects used without a definition (free) must be the same pointer or have
 * the same name and dtype.  Immediates compare exactly (floats bitwise, any
 * NaN equals any NaN).  Tile-op attributes compare by effective value (a
 * NULL attribute equals an explicit default).  Recursion is bounded by
 * EQ_MAX_DEPTH (deeper trees compare unequal). */
#include <math.h>
#include <string.h>

#include "IR/tir.h"

#define EQ_MAX_DEPTH 4096

typedef struct eq_ctx {
  tl_map vars; /* a's tl_var* → b's tl_var* */
  tl_map bufs; /* a's tl_buffer* → b's tl_buffer* */
  bool oom;
} eq_ctx;

static bool expr_eq(eq_ctx *c, const tl_expr *a, const tl_expr *b, int depth);

/* Records that a (in the first tree) stands for b (in the second). */
static bool bind(eq_ctx *c, tl_map *map, const void *a, const void *b) {
  if (tl_map_put(map, a, (void *)b)) return true;
  c->oom = true;
  return false;
}

static bool bind_var(eq_ctx *c, tl_var *a, tl_var *b) {
  if (!a || !b) return a == b;
  if (!tl_dtype_eq(a->dtype, b->dtype) || a->kind != b->kind) return false;
  return bind(c, &c->vars, a, b);
}

/* Does a stand for b by map: 1 yes, 0 no (also when one is NULL and the
 * other not), -1 a is not bound (free). */
static int bound_to(const tl_map *map, const void *a, const void *b) {
  if (!a || !b) return a == b;
  bool found = false;
  void *m = tl_map_get(map, a, &found);
  return found ? m == b : -1;
}

static bool var_eq(eq_ctx *c, const tl_var *a, const tl_var *b) {
  int r = bound_to(&c->vars, a, b);
  if (r >= 0) return r;
  /* free variable: the same object or the same name and dtype (and b free too) */
  if (a == b) return true;
  return !strcmp(a->name, b->name) && tl_dtype_eq(a->dtype, b->dtype);
}

static bool exprs_eq(eq_ctx *c, int n, tl_expr *const *a, tl_expr *const *b, int depth) {
  for (int i = 0; i < n; i++)
    if (!expr_eq(c, a ? a[i] : NULL, b ? b[i] : NULL, depth + 1)) return false;
  return true;
}

/* Buffer definition: dtype, scope, shape, strides, init, data; then maps a → b. */
static bool bind_buffer(eq_ctx *c, tl_buffer *a, tl_buffer *b, int depth) {
  if (!a || !b) return a == b;
  if (!tl_dtype_eq(a->dtype, b->dtype) || a->scope != b->scope || a->ndim != b->ndim || a->reducer != b->reducer ||
      a->reducer_rep != b->reducer_rep)
    return false;
  if (!exprs_eq(c, a->ndim, a->shape, b->shape, depth)) return false;
  if ((a->strides == NULL) != (b->strides == NULL)) return false;
  if (a->strides && !exprs_eq(c, a->ndim, a->strides, b->strides, depth)) return false;
  if (!expr_eq(c, a->init, b->init, depth + 1) || !expr_eq(c, a->data, b->data, depth + 1)) return false;
  return bind(c, &c->bufs, a, b);
}

static bool buffer_eq(eq_ctx *c, const tl_buffer *a, const tl_buffer *b) {
  int r = bound_to(&c->bufs, a, b);
  return r >= 0 ? r : a == b;
}

static bool float_eq(double x, double y) {
  if (isnan(x) && isnan(y)) return true;
  uint64_t u, v;
  memcpy(&u, &x, sizeof u);
  memcpy(&v, &y, sizeof v);
  return u == v;
}

static bool expr_eq(eq_ctx *c, const tl_expr *a, const tl_expr *b, int depth) {
  if (!a || !b) return a == b;
  if (depth > EQ_MAX_DEPTH) return false;
  if (a->kind != b->kind || !tl_dtype_eq(a->dtype, b->dtype)) return false;
  switch (a->kind) {
  case TL_EXPR_INT: return a->u.ival == b->u.ival;
  case TL_EXPR_FLOAT: return float_eq(a->u.fval, b->u.fval);
  case TL_EXPR_STRING: return !strcmp(a->u.str, b->u.str);
  case TL_EXPR_VAR: return var_eq(c, a->u.var, b->u.var);
  case TL_EXPR_BUFFER: return buffer_eq(c, a->u.buffer, b->u.buffer);
  case TL_EXPR_BINARY:
    return a->u.bin.op == b->u.bin.op && expr_eq(c, a->u.bin.a, b->u.bin.a, depth + 1) &&
           expr_eq(c, a->u.bin.b, b->u.bin.b, depth + 1);
  case TL_EXPR_UNARY: return a->u.un.op == b->u.un.op && expr_eq(c, a->u.un.a, b->u.un.a, depth + 1);
  case TL_EXPR_SELECT:
    return expr_eq(c, a->u.sel.cond, b->u.sel.cond, depth + 1) && expr_eq(c, a->u.sel.t, b->u.sel.t, depth + 1) &&
           expr_eq(c, a->u.sel.f, b->u.sel.f, depth + 1);
  case TL_EXPR_CAST: return expr_eq(c, a->u.cast.value, b->u.cast.value, depth + 1);
  case TL_EXPR_LOAD:
    return buffer_eq(c, a->u.load.buffer, b->u.load.buffer) && a->u.load.n == b->u.load.n &&
           exprs_eq(c, a->u.load.n, a->u.load.indices, b->u.load.indices, depth);
  case TL_EXPR_CALL:
    return a->u.call.op == b->u.call.op && a->u.call.n == b->u.call.n &&
           exprs_eq(c, a->u.call.n, a->u.call.args, b->u.call.args, depth);
  case TL_EXPR_RAMP:
    return expr_eq(c, a->u.ramp.base, b->u.ramp.base, depth + 1) &&
           expr_eq(c, a->u.ramp.stride, b->u.ramp.stride, depth + 1);
  case TL_EXPR_BROADCAST: return expr_eq(c, a->u.bcast.value, b->u.bcast.value, depth + 1);
  }
  return false;
}

/* ------------------------------------------------------------- tile ops */

static bool region_eq(eq_ctx *c, const tl_region *a, const tl_region *b, int depth) {
  if (!buffer_eq(c, a->buffer, b->buffer) || a->ndim != b->ndim) return false;
  for (int d = 0; d < a->ndim; d++) {
    const tl_expr *am = a->min ? a->min[d] : NULL, *bm = b->min ? b->min[d] : NULL;
    const tl_expr *ae = a->extent ? a->extent[d] : NULL, *be = b->extent ? b->extent[d] : NULL;
    if (!expr_eq(c, am, bm, depth + 1) || !expr_eq(c, ae, be, depth + 1)) return false;
  }
  return true;
}

/* The attribute's value with NULL meaning the table default. */
static bool attr_eq(eq_ctx *c, const tl_attr_info *ai, const tl_expr *a, const tl_expr *b, int depth) {
  if (a && b) return expr_eq(c, a, b, depth + 1);
  return tl_attr_is_default(ai, a ? a : b); /* both absent, or the one given is the default */
}

static bool tile_eq(eq_ctx *c, const tl_stmt *a, const tl_stmt *b, int depth) {
  int op = a->u.tile.op;
  if (op != b->u.tile.op || a->u.tile.nargs != b->u.tile.nargs) return false;
  for (int i = 0; i < a->u.tile.nargs; i++) {
    const tl_operand *x = &a->u.tile.args[i], *y = &b->u.tile.args[i];
    if (x->kind != y->kind) return false;
    if (x->kind == TL_OPND_REGION ? !region_eq(c, &x->region, &y->region, depth)
                                  : !expr_eq(c, x->expr, y->expr, depth + 1))
      return false;
  }
  if (op < 0 || op >= TL_TILE_NUM_OPS) return true;
  const tl_tile_op_info *info = &tl_tile_ops[op];
  for (int i = 0; i < info->nattrs; i++) {
    const tl_expr *x = a->u.tile.attrs ? a->u.tile.attrs[i] : NULL;
    const tl_expr *y = b->u.tile.attrs ? b->u.tile.attrs[i] : NULL;
    if (!attr_eq(c, &info->attrs[i], x, y, depth)) return false;
  }
  return true;
}

/* ----------------------------------------------------------- statements */

static bool stmt_eq(eq_ctx *c, const tl_stmt *a, const tl_stmt *b, int depth) {
  /* A one-statement SEQ equals its statement. */
  while (a && a->kind == TL_STMT_SEQ && a->u.seq.n == 1) a = a->u.seq.stmts[0];
  while (b && b->kind == TL_STMT_SEQ && b->u.seq.n == 1) b = b->u.seq.stmts[0];
  bool ea = !a || (a->kind == TL_STMT_SEQ && a->u.seq.n == 0);
  bool eb = !b || (b->kind == TL_STMT_SEQ && b->u.seq.n == 0);
  if (ea || eb) return ea && eb;
  if (depth > EQ_MAX_DEPTH || a->kind != b->kind) return false;
  switch (a->kind) {
  case TL_STMT_SEQ:
    if (a->u.seq.n != b->u.seq.n) return false;
    for (int i = 0; i < a->u.seq.n; i++)
      if (!stmt_eq(c, a->u.seq.stmts[i], b->u.seq.stmts[i], depth + 1)) return false;
    return true;
  case TL_STMT_FOR: {
    int n = a->u.loop.nvars;
    if (a->u.loop.kind != b->u.loop.kind || n != b->u.loop.nvars || a->u.loop.num_stages != b->u.loop.num_stages ||
        a->u.loop.nsched != b->u.loop.nsched)
      return false;
    for (int i = 0; i < a->u.loop.nsched; i++)
      if (a->u.loop.order[i] != b->u.loop.order[i] || a->u.loop.stage[i] != b->u.loop.stage[i]) return false;
    for (int i = 0; i < n; i++) {
      const tl_expr *am = a->u.loop.mins ? a->u.loop.mins[i] : NULL;
      const tl_expr *bm = b->u.loop.mins ? b->u.loop.mins[i] : NULL;
      int64_t v;
      bool az = !am || (tl_expr_is_const_int(am, &v) && v == 0);
      bool bz = !bm || (tl_expr_is_const_int(bm, &v) && v == 0);
      if (!(az && bz) && !expr_eq(c, am, bm, depth + 1)) return false;
      if (!expr_eq(c, a->u.loop.extents[i], b->u.loop.extents[i], depth + 1)) return false;
    }
    if (!expr_eq(c, a->u.loop.step, b->u.loop.step, depth + 1)) return false;
    for (int i = 0; i < n; i++)
      if (!bind_var(c, a->u.loop.vars[i], b->u.loop.vars[i])) return false;
    return stmt_eq(c, a->u.loop.body, b->u.loop.body, depth + 1);
  }
  case TL_STMT_KERNEL: {
    int n = a->u.kernel.ngrid;
    if (n != b->u.kernel.ngrid || n < 0 || n > 3) return false;
    if (!exprs_eq(c, n, a->u.kernel.grid, b->u.kernel.grid, depth)) return false;
    if (!expr_eq(c, a->u.kernel.threads, b->u.kernel.threads, depth + 1)) return false;
    for (int i = 0; i < n; i++)
      if (!bind_var(c, a->u.kernel.block_vars[i], b->u.kernel.block_vars[i])) return false;
    return stmt_eq(c, a->u.kernel.body, b->u.kernel.body, depth + 1);
  }
  case TL_STMT_ALLOC: return bind_buffer(c, a->u.alloc.buffer, b->u.alloc.buffer, depth);
  case TL_STMT_STORE:
    return buffer_eq(c, a->u.store.buffer, b->u.store.buffer) && a->u.store.n == b->u.store.n &&
           exprs_eq(c, a->u.store.n, a->u.store.indices, b->u.store.indices, depth) &&
           expr_eq(c, a->u.store.value, b->u.store.value, depth + 1);
  case TL_STMT_IF:
    return expr_eq(c, a->u.ifs.cond, b->u.ifs.cond, depth + 1) &&
           stmt_eq(c, a->u.ifs.then_s, b->u.ifs.then_s, depth + 1) &&
           stmt_eq(c, a->u.ifs.else_s, b->u.ifs.else_s, depth + 1);
  case TL_STMT_WHILE:
    return expr_eq(c, a->u.whiles.cond, b->u.whiles.cond, depth + 1) &&
           stmt_eq(c, a->u.whiles.body, b->u.whiles.body, depth + 1);
  case TL_STMT_LET:
    return expr_eq(c, a->u.let.value, b->u.let.value, depth + 1) && bind_var(c, a->u.let.var, b->u.let.var);
  case TL_STMT_EVAL: return expr_eq(c, a->u.eval.value, b->u.eval.value, depth + 1);
  case TL_STMT_TILE: return tile_eq(c, a, b, depth);
  }
  return false;
}

static bool func_eq(eq_ctx *c, const tl_primfunc *a, const tl_primfunc *b) {
  if (!a || !b) return a == b;
  if (strcmp(a->name ? a->name : "", b->name ? b->name : "")) return false;
  if (a->nparams != b->nparams || a->ndynamic != b->ndynamic) return false;
  if (a->has_out_idx != b->has_out_idx) return false;
  for (int c = 0; c < TL_PASS_CONFIG_COUNT; c++)
    if (tl_pass_config_get(&a->pass_configs, c) != tl_pass_config_get(&b->pass_configs, c) ||
        tl_pass_config_given(&a->pass_configs, c) != tl_pass_config_given(&b->pass_configs, c))
      return false;
  if (a->has_out_idx) {
    if (a->nout != b->nout) return false;
    for (int i = 0; i < a->nout; i++)
      if (a->out_idx[i] != b->out_idx[i]) return false;
  }
  for (int i = 0; i < a->ndynamic; i++)
    if (!bind_var(c, a->dynamic[i], b->dynamic[i])) return false;
  for (int i = 0; i < a->nparams; i++) {
    const tl_param *x = &a->params[i], *y = &b->params[i];
    if (x->kind != y->kind) return false;
    if (x->kind == TL_PARAM_TENSOR ? !bind_buffer(c, x->buffer, y->buffer, 0) : !bind_var(c, x->var, y->var))
      return false;
  }
  return stmt_eq(c, a->body, b->body, 0);
}

bool tl_module_equal(const tl_module *a, const tl_module *b) {
  if (!a || !b) return a == b;
  if (a->nfuncs != b->nfuncs) return false;
  eq_ctx c = {.oom = false};
  tl_map_init(&c.vars);
  tl_map_init(&c.bufs);
  bool ok = true;
  for (int i = 0; i < a->nfuncs && ok; i++) ok = func_eq(&c, a->funcs[i], b->funcs[i]);
  tl_map_free(&c.vars);
  tl_map_free(&c.bufs);
  return ok && !c.oom;
}
