/* TVM's thread allreduce, as TileLang programs write it (examples/gemv's
 * splitk_gemv_vectorized_tvm):
 *
 *   with T.attr(T.comm_reducer(lambda x, y: x + y, [identity]), "reduce_scope",
 *               T.reinterpret(T.uint64(0), dtype="handle")):
 *       T.evaluate(T.tvm_thread_allreduce(T.uint32(1), value, True, dst[i], tk, dtype="handle"))
 *
 * means dst[i] = value combined over the threads that differ only in the
 * thread coordinate tk (T.get_thread_binding(d) of threads=(x, y, z)), every
 * one of them getting the result.  Elaborated into the tile op
 * T.thread_allreduce(dst[i], value, op=..., stride=S, count=N) (lib/IR/tir.h):
 * S is the product of the thread dims before d, N thread dim d.  Recognised:
 * a combiner lambda x, y: x + y (sum), T.max(x, y) / max(x, y) (max), T.min /
 * min (min); one value; condition True; one reduced thread coordinate.
 * Anything else is a located error saying what is not supported yet. */
#include <string.h>

#include "Frontend/elab_impl.h"

static bool is_name(const tl_ast_expr *x, const char *n) {
  return x && x->kind == TL_AST_NAME && !strcmp(x->u.name, n);
}

/* The combiner's op ("sum", "max", "min") or NULL. */
static const char *combiner_op(elab *E, const tl_ast_expr *f) {
  if (!f || f->kind != TL_AST_LAMBDA || f->u.lambda.nparams != 2) return NULL;
  const char *a = f->u.lambda.params[0].name, *b = f->u.lambda.params[1].name;
  const tl_ast_expr *x = f->u.lambda.body, *l = NULL, *r = NULL;
  const char *op = NULL;
  if (x->kind == TL_AST_BINOP && !strcmp(x->u.bin.op, "+")) {
    op = "sum", l = x->u.bin.l, r = x->u.bin.r;
  } else if (x->kind == TL_AST_CALL && x->u.call.nargs == 2 && x->u.call.nkw == 0) {
    const char *tn = t_callee(E, x);
    const tl_ast_expr *fn = x->u.call.func;
    if (!tn && fn->kind == TL_AST_NAME) tn = fn->u.name; /* the builtin max / min */
    if (tn && (!strcmp(tn, "max") || !strcmp(tn, "min"))) op = tn, l = x->u.call.args[0], r = x->u.call.args[1];
  }
  if (!op || !((is_name(l, a) && is_name(r, b)) || (is_name(l, b) && is_name(r, a)))) return NULL;
  return op;
}

/* The thread dim the reduce variable is the coordinate of, or -1 (a let of
 * the kernel, tk = T.get_thread_binding(1), stands for its value). */
static int reduced_dim(elab *E, tl_expr *v, tl_loc loc) {
  for (size_t i = E->thread_lets.len; v->kind == TL_EXPR_VAR && i-- > 0;)
    if (E->thread_lets.data[i]->u.let.var == v->u.var) v = E->thread_lets.data[i]->u.let.value;
  for (int d = 0; d < (E->nthread_dims ? E->nthread_dims : 1); d++) {
    tl_expr *c;
    if (E->nthread_dims) c = tl_el_thread_coord(E, d, loc);
    else {
      tl_expr *zero = lit_int(E, loc, 0);
      c = zero ? chk(E, tl_ir_call(E->m, loc, TL_INTRIN_GET_THREAD_BINDING, 1, &zero)) : NULL;
    }
    if (c && tl_expr_equal(c, v)) return d;
  }
  return -1;
}

/* The T.tvm_thread_allreduce call of the with body, or NULL after an error. */
static const tl_ast_expr *allreduce_call(elab *E, const tl_ast_stmt *s) {
  const tl_ast_block *b = &s->u.with.body;
  const tl_ast_expr *x = b->n == 1 && b->stmts[0]->kind == TL_AST_EXPR_STMT ? b->stmts[0]->u.expr : NULL;
  const char *tn = x ? t_callee(E, x) : NULL;
  if (tn && !strcmp(tn, "evaluate") && x->u.call.nargs == 1) {
    x = x->u.call.args[0];
    tn = t_callee(E, x);
  }
  if (!tn || strcmp(tn, "tvm_thread_allreduce")) {
    err(E, s->loc,
        "with T.attr(T.comm_reducer(...), \"reduce_scope\", ...): the body must be one "
        "T.evaluate(T.tvm_thread_allreduce(...)); other bodies are not supported yet");
    return NULL;
  }
  if (x->u.call.nargs != 5) {
    err(E, x->loc,
        "T.tvm_thread_allreduce: supported yet is (T.uint32(1), value, True, dst, thread_var) with one value and "
        "one reduced thread variable; got %d arguments",
        x->u.call.nargs);
    return NULL;
  }
  return x;
}

static bool check_count_and_cond(elab *E, const tl_ast_expr *x) {
  int64_t n = 0;
  val *nv = eval(E, x->u.call.args[0]);
  if (!nv || !to_const_int(E, nv, x->u.call.args[0]->loc, "the number of reduced values", &n)) return false;
  if (n != 1) {
    err(E, x->u.call.args[0]->loc, "T.tvm_thread_allreduce: %lld values reduced together are not supported yet (1 is)",
        (long long)n);
    return false;
  }
  val *cv = eval(E, x->u.call.args[2]);
  bool t = false;
  if (!cv) return false;
  if (!truthy(cv, &t) || !t) {
    err(E, x->u.call.args[2]->loc, "T.tvm_thread_allreduce: a condition other than True is not supported yet");
    return false;
  }
  return true;
}

/* The group of the reduced thread coordinate: *S (stride) and *N (count). */
static bool thread_group(elab *E, const tl_ast_expr *a, int64_t *S, int64_t *N) {
  val *v = eval(E, a);
  tl_expr *e = v ? to_expr(E, v, a->loc) : NULL;
  if (!e) return false;
  int d = E->in_kernel ? reduced_dim(E, e, a->loc) : -1;
  if (d < 0) {
    err(E, a->loc,
        "T.tvm_thread_allreduce: the reduced variable must be a thread coordinate of the enclosing T.Kernel "
        "(T.get_thread_binding(d)); other variables are not supported yet");
    return false;
  }
  *S = 1;
  for (int i = 0; i <= d && i < E->nthread_dims; i++) {
    int64_t ext = 0;
    if (!tl_expr_is_const_int(E->thread_dims[i], &ext)) {
      err(E, a->loc, "T.tvm_thread_allreduce: the T.Kernel's thread dimension %d must be a constant", i);
      return false;
    }
    if (i < d) *S *= ext;
    else *N = ext;
  }
  if (!E->nthread_dims) {
    *N = E->kernel_threads;
    if (*N < 1) {
      err(E, a->loc, "T.tvm_thread_allreduce: the T.Kernel's thread count must be a constant");
      return false;
    }
  }
  return true;
}

bool tl_el_thread_allreduce(elab *E, const tl_ast_stmt *s, stmt_vec *out) {
  const tl_ast_expr *c = s->u.with.ctx;
  const tl_ast_expr *scope = c->u.call.nargs == 3 ? c->u.call.args[1] : NULL;
  if (!scope || scope->kind != TL_AST_STR || strcmp(scope->u.str, "reduce_scope") || s->u.with.target) {
    err(E, c->loc,
        "T.attr: only TVM's thread allreduce, with T.attr(T.comm_reducer(...), \"reduce_scope\", ...), is "
        "supported yet");
    return false;
  }
  const tl_ast_expr *red = c->u.call.args[0];
  const char *tn = t_callee(E, red);
  if (!tn || strcmp(tn, "comm_reducer") || red->u.call.nargs != 2) {
    err(E, red->loc, "T.attr(..., \"reduce_scope\", ...): expected T.comm_reducer(combiner, [identity])");
    return false;
  }
  const tl_ast_expr *ids = red->u.call.args[1];
  if ((ids->kind != TL_AST_LIST && ids->kind != TL_AST_TUPLE) || ids->u.list.n != 1) {
    err(E, ids->loc, "T.comm_reducer: one identity value is supported yet");
    return false;
  }
  const char *op = combiner_op(E, red->u.call.args[0]);
  if (!op) {
    err(E, red->u.call.args[0]->loc,
        "T.comm_reducer: combiners other than lambda x, y: x + y, T.max(x, y) and T.min(x, y) are not supported yet");
    return false;
  }
  const tl_ast_expr *x = allreduce_call(E, s);
  int64_t S = 1, N = 1;
  if (!x || !check_count_and_cond(E, x) || !thread_group(E, x->u.call.args[4], &S, &N)) return false;
  /* T.thread_allreduce(dst, value), then its attributes */
  tl_ast_expr call = *x;
  tl_ast_expr *args[2] = {x->u.call.args[3], x->u.call.args[1]};
  call.u.call.nargs = 2;
  call.u.call.args = args;
  call.u.call.nkw = 0;
  call.u.call.kw = NULL;
  size_t from = out->len;
  if (!elab_tile(E, TL_TILE_THREAD_ALLREDUCE, &call, s->loc, out)) return false;
  int na = tl_tile_ops[TL_TILE_THREAD_ALLREDUCE].nattrs;
  for (size_t i = from; i < out->len; i++) {
    tl_stmt *t = out->data[i];
    if (t->kind != TL_STMT_TILE || t->u.tile.op != TL_TILE_THREAD_ALLREDUCE) continue;
    if (!(t->u.tile.attrs = malloc_ir(E, sizeof(tl_expr *) * (size_t)na))) return false;
    t->u.tile.attrs[0] = strcmp(op, "sum") ? chk(E, tl_ir_string(E->m, s->loc, op)) : NULL;
    t->u.tile.attrs[1] = S != 1 ? lit_int(E, s->loc, S) : NULL;
    t->u.tile.attrs[2] = N != 1 ? lit_int(E, s->loc, N) : NULL;
  }
  return true;
}
