/* Elaborator, part 5 (see elaborate.c for the algorithm): the eager JIT
 * style of TileLang (PR #2010), where the @tilelang.jit function is the
 * kernel itself:
 *
 *     @tilelang.jit
 *     def matmul(A, B, block_M, ...):
 *         M, N, K = T.const("M, N, K")
 *         A: T.Tensor((M, K), dtype)
 *         C = T.empty((M, N), dtype)
 *         with T.Kernel(...) as (bx, by): ...
 *         return C
 *     kernel = matmul.compile(M=1024, N=1024, K=1024, block_M=128, ...)
 *
 * Algorithm: the body is split at its first `with T.Kernel`.  Before it,
 * annotations of parameters (A: T.Tensor(...)) declare tensor parameters
 * and `X = T.empty(shape, dtype)` declares output tensors; every other
 * statement runs as compile-time factory code (T.const symbols, dtypes,
 * asserts).  The other parameters take -D values, else the keywords of a
 * module-level `NAME.compile(...)` call (read, never run), else their
 * defaults.  The kernel statements become the body of a synthesized
 * @T.prim_func named after the function, whose parameters are the tensor
 * parameters in order and then the outputs; the returned outputs give its
 * out_idx (an explicit out_idx as well is an error, as in TileLang). */
#include "Frontend/elab_impl.h"

/* The with-statement's callee is T.Kernel. */
static bool is_kernel_with(elab *E, const tl_ast_stmt *s) {
  if (s->kind != TL_AST_WITH) return false;
  const char *tn = t_callee(E, s->u.with.ctx);
  return tn && !strcmp(tn, "Kernel");
}

static bool has_nested_primfunc(const tl_ast_block *b) {
  for (int i = 0; i < b->n; i++)
    if (b->stmts[i]->kind == TL_AST_DEF && b->stmts[i]->u.def.ndecorators) return true;
  return false;
}

bool is_eager_kernel(elab *E, const tl_ast_stmt *def) {
  if (has_nested_primfunc(&def->u.def.body)) return false;
  for (int i = 0; i < def->u.def.body.n; i++)
    if (is_kernel_with(E, def->u.def.body.stmts[i])) return true;
  return false;
}

void note_compile_call(elab *E, const tl_ast_expr *v) {
  if (!v || v->kind != TL_AST_CALL) return;
  const tl_ast_expr *f = v->u.call.func;
  if (f->kind != TL_AST_ATTR || strcmp(f->u.attr.name, "compile") || f->u.attr.value->kind != TL_AST_NAME) return;
  if (!tl_vec_push(&E->compile_calls, v)) oom(E);
}

val *compile_binding(elab *E, const char *kernel, const char *name) {
  for (size_t i = 0; kernel && i < E->compile_calls.len; i++) {
    const tl_ast_expr *c = E->compile_calls.data[i];
    if (strcmp(c->u.call.func->u.attr.value->u.name, kernel)) continue;
    for (int k = 0; k < c->u.call.nkw; k++)
      if (c->u.call.kw[k].name && !strcmp(c->u.call.kw[k].name, name)) {
        scope *saved = E->sc;
        E->sc = E->module_scope;
        val *v = eval(E, c->u.call.kw[k].value);
        E->sc = saved;
        return v;
      }
  }
  return NULL;
}

val *call_const(elab *E, const char *fn, const tl_ast_expr *x) {
  if (!check_arity(E, x, fn, 1, 1)) return NULL;
  val *sv = eval(E, x->u.call.args[0]);
  if (!sv) return NULL;
  if (sv->k != V_STR) {
    err_val(E, x->u.call.args[0]->loc, sv,
            "T.const takes a string of names such as \"M, N\", "
            "got %s",
            describe(E, sv));
    return NULL;
  }
  TL_VEC(val *) vals = {0};
  const char *p = sv->u.s;
  bool ok = true;
  while (ok && *p) {
    while (*p == ',' || *p == ' ' || *p == '\t') p++;
    size_t n = strcspn(p, ", \t");
    if (!n) break;
    const char *name = tl_intern_n(&E->m->names, p, n);
    p += n;
    int di = name ? find_define(E, name) : -1;
    val *v = di >= 0 ? parse_define(E, di) : name ? compile_binding(E, E->eager_kernel, name) : NULL;
    if (!v) {
      err(E, x->loc, "T.const '%s' has no value; pass -D %s=<int>%s%s%s", name ? name : "?", name ? name : "?",
          E->eager_kernel ? " (or call " : "", E->eager_kernel ? E->eager_kernel : "",
          E->eager_kernel ? ".compile(...) in the file)" : "");
      ok = false;
    } else if (!tl_vec_push(&vals, v)) {
      ok = false;
      oom(E);
    }
  }
  val *r = NULL;
  if (ok && vals.len == 1) {
    r = vals.data[0];
  } else if (ok) {
    r = mk_tuple(E, (int)vals.len, false);
    for (size_t i = 0; r && i < vals.len; i++) r->u.tup.items[i] = vals.data[i];
  }
  tl_vec_free(&vals);
  return r;
}

/* The annotation declaring parameter `name` in the body (A: T.Tensor(...)). */
static const tl_ast_expr *param_annotation(const tl_ast_stmt *def, const char *name, int end) {
  for (int i = 0; i < end; i++) {
    const tl_ast_stmt *s = def->u.def.body.stmts[i];
    if (s->kind == TL_AST_ANNASSIGN && !s->u.ann.value && s->u.ann.target->kind == TL_AST_NAME &&
        s->u.ann.target->u.name == name)
      return s->u.ann.annotation;
  }
  return NULL;
}

/* X = T.empty(shape, dtype): the call, or NULL. */
static const tl_ast_expr *empty_call(elab *E, const tl_ast_stmt *s) {
  if (s->kind != TL_AST_ASSIGN || s->u.assign.ntargets != 1 || s->u.assign.targets[0]->kind != TL_AST_NAME) return NULL;
  const char *tn = t_callee(E, s->u.assign.value);
  return tn && !strcmp(tn, "empty") ? s->u.assign.value : NULL;
}

/* T.Tensor(shape, dtype) with the arguments of a T.empty(...) call. */
static tl_ast_expr *tensor_type_of(elab *E, const tl_ast_expr *empty) {
  tl_ast_expr *call = tl_arena_alloc(&E->m->arena, sizeof *call);
  tl_ast_expr *attr = tl_arena_alloc(&E->m->arena, sizeof *attr);
  if (!call || !attr) return oom(E);
  *call = *empty;
  *attr = *empty->u.call.func;
  attr->u.attr.name = tl_intern_str(&E->m->names, "Tensor");
  call->u.call.func = attr;
  return attr->u.attr.name ? call : oom(E);
}

/* Binds the non-tensor parameters of an eager kernel in the current scope. */
static bool bind_scalar_params(elab *E, const tl_ast_stmt *def, int kstart) {
  bool ok = true;
  for (int i = 0; i < def->u.def.nparams; i++) {
    const tl_ast_param *p = &def->u.def.params[i];
    if (param_annotation(def, p->name, kstart)) continue;
    int di = find_define(E, p->name);
    val *v = di >= 0 ? parse_define(E, di) : compile_binding(E, def->u.def.name, p->name);
    if (!v && p->default_value) v = eval(E, p->default_value);
    if (!v) {
      err(E, p->loc,
          "kernel parameter '%s' has no value; pass -D %s=%s (or call %s.compile(%s=...) "
          "in the file)",
          p->name, p->name, param_hint(p, def), def->u.def.name, p->name);
      ok = false;
      v = mk(E, V_POISON);
    }
    if (v && !bind(E, E->sc, p->name, v, p->loc, BK_CONST)) ok = false;
  }
  return ok;
}

/* The synthesized prim_func's parameters: the annotated tensor parameters,
 * then the T.empty outputs (names in outs, calls in out_calls). */
static tl_ast_param *eager_params(elab *E, const tl_ast_stmt *def, int kstart, const tl_ast_stmt **outs, int nout,
                                  int *np) {
  tl_ast_param *ps = tl_arena_alloc(&E->m->arena, sizeof(tl_ast_param) * (size_t)(def->u.def.nparams + nout + 1));
  if (!ps) return oom(E);
  int n = 0;
  for (int i = 0; i < def->u.def.nparams; i++) {
    const tl_ast_expr *ann = param_annotation(def, def->u.def.params[i].name, kstart);
    if (!ann) continue;
    ps[n] = def->u.def.params[i];
    ps[n].annotation = (tl_ast_expr *)ann;
    ps[n].default_value = NULL;
    ps[n++].pkind = TL_AST_PARAM_POS;
  }
  for (int i = 0; i < nout; i++) {
    const tl_ast_expr *t = outs[i]->u.assign.targets[0];
    tl_ast_expr *ty = tensor_type_of(E, outs[i]->u.assign.value);
    if (!ty) return NULL;
    ps[n] = (tl_ast_param){t->u.name, t->loc, ty, NULL, TL_AST_PARAM_POS};
    n++;
  }
  *np = n;
  return ps;
}

/* out_idx from `return C` / `return C, D`: positions among the params. */
static val *returned_out_idx(elab *E, const tl_ast_expr *ret, const tl_ast_param *ps, int np) {
  int n = ret->kind == TL_AST_TUPLE ? ret->u.list.n : 1;
  tl_ast_expr *const *items = ret->kind == TL_AST_TUPLE ? ret->u.list.items : (tl_ast_expr *const *)&ret;
  val *r = mk_tuple(E, n, true);
  for (int i = 0; r && i < n; i++) {
    int k = -1;
    for (int j = 0; j < np && items[i]->kind == TL_AST_NAME; j++)
      if (ps[j].name == items[i]->u.name) k = j;
    if (k < 0) {
      err(E, items[i]->loc, "an eager kernel returns its T.empty outputs; this is not one");
      return NULL;
    }
    if (!(r->u.tup.items[i] = mk_int(E, k))) return NULL;
  }
  return r;
}

/* The body statements before `with T.Kernel`: compile-time code, parameter
 * annotations and T.empty outputs (collected into outs). */
static bool eager_prologue(elab *E, const tl_ast_stmt *def, int kstart, const tl_ast_stmt **outs, int *nout) {
  bool ok = true, returned = false;
  for (int i = 0; i < kstart && !returned; i++) {
    const tl_ast_stmt *s = def->u.def.body.stmts[i];
    if (s->kind == TL_AST_ANNASSIGN && !s->u.ann.value && s->u.ann.target->kind == TL_AST_NAME)
      continue; /* a tensor parameter's declaration */
    if (empty_call(E, s)) {
      outs[(*nout)++] = s;
      continue;
    }
    if (!factory_stmt(E, s, def, NULL, NULL, &returned)) ok = false;
  }
  if (returned) {
    err(E, def->loc, "eager kernel '%s' returns before its T.Kernel", def->u.def.name);
    ok = false;
  }
  return ok;
}

void elab_eager(elab *E, const tl_ast_stmt *def, const tl_ast_expr *jit) {
  const tl_ast_block *b = &def->u.def.body;
  int kstart = 0;
  while (kstart < b->n && !is_kernel_with(E, b->stmts[kstart])) kstart++;
  scope *saved = E->sc;
  const char *saved_k = E->eager_kernel;
  E->sc = E->module_scope;
  E->eager_kernel = def->u.def.name;
  const tl_ast_expr *oast = NULL;
  val *jit_oi = jit_out_idx(E, jit, &oast);
  jit_pass_configs(E, jit);
  scope *sc = push_scope(E, false);
  const tl_ast_stmt **outs = talloc(E, sizeof(tl_ast_stmt *) * (size_t)(kstart + 1));
  int nout = 0, np = 0;
  bool ok = sc && outs && bind_scalar_params(E, def, kstart) && eager_prologue(E, def, kstart, outs, &nout);
  tl_ast_param *ps = ok ? eager_params(E, def, kstart, outs, nout, &np) : NULL;
  /* the kernel statements, without the final return */
  tl_ast_stmt synth = *def;
  synth.u.def.params = ps;
  synth.u.def.nparams = np;
  synth.u.def.ndecorators = 0;
  synth.u.def.body.stmts = b->stmts + kstart;
  synth.u.def.body.n = b->n - kstart;
  const tl_ast_expr *ret = NULL;
  for (int i = kstart; ok && i < b->n; i++)
    if (b->stmts[i]->kind == TL_AST_RETURN) {
      ret = b->stmts[i]->u.ret;
      synth.u.def.body.n = i - kstart;
      break;
    }
  val *oi = jit_oi;
  if (ok && ret) {
    if (jit_oi) {
      err(E, oast ? oast->loc : def->loc,
          "out_idx is given and the kernel returns its "
          "T.empty outputs; use one or the other");
      ok = false;
    }
    oast = ret;
    oi = ok ? returned_out_idx(E, ret, ps, np) : NULL;
    ok = oi != NULL;
  }
  val *v = ok ? elab_primfunc(E, &synth, oi, oast) : NULL;
  if (v) add_func(E, v->u.pf);
  if (sc) pop_scope(E, sc);
  E->sc = saved;
  E->eager_kernel = saved_k;
  E->jit_configs = (tl_pass_configs){0};
}
