/* elaborate.c — the TileLang front end's elaborator: evaluates a parsed
 * kernel file (lib/Frontend/ast.h) and builds tile IR (lib/IR/tir.h).
 *
 * Role: tl_frontend_parse = tl_parse_python + this.  Everything that needs
 * the source text is checked here: names, arity, keywords, value kinds, -D
 * bindings.  Shapes, scopes, dtypes of tile ops etc. are the verifier's.
 *
 * Algorithm: a small interpreter over compile-time values (`val`: None,
 * bool, int, float, str, dtype, tuple/list, dict, IR expression, buffer,
 * buffer subscript, gemm policy, namespaces such as `T`, opaque host values)
 * with Python semantics for constant arithmetic (int64 with overflow
 * errors, true and floor division), and compile-time Python functions and
 * lambdas.  Names live in a chain of scopes (module → factory → prim_func
 * blocks).  Only what the selected kernels reach is evaluated: the module is
 * processed in two phases: (1) imports, module constants (lazy: a value is
 * evaluated when first used, so host code such as torch calls is never
 * run; overridden by -D), module-level NAME.compile(...) calls (read as
 * bindings) and classification of module-level defs (factory: decorated
 * with tilelang.jit or containing a @T.prim_func; bare @T.prim_func; other
 * defs are helpers, run only when called); (2) the selected kernels
 * (--kernel, else all of them, skipping factories without parameter values
 * when there are several) are built: a factory is run (parameters from -D,
 * compile bindings or defaults) until it returns its prim_func, an eager
 * kernel (elab_eager.c) gets a synthesized prim_func, and each bare
 * prim_func is elaborated.  Inside a prim_func,
 * statements become IR: compile-time values stay values (no IR), other
 * expressions become IR through the folding tl_ir_* constructors.  Values
 * remember the -D definition they came from, so that a wrong-kind value is
 * reported where it is used, with a note naming the -D.
 *
 * Errors: one per faulty statement; a name whose definition failed is
 * bound to a "poison" value, so later uses fail silently instead of
 * cascading.  Recursion over expressions and blocks is limited to depth
 * MAX_DEPTH. */
#include "Frontend/elab_impl.h"
#include "Frontend/tune_space.h"

/* ============================================================ prim_func */

/* Marks the dynamic symbols an IR tree uses. */
typedef struct dyn_uses {
  tl_visitor v;
  tl_map *used;
} dyn_uses;
static void mark_dynamic(tl_visitor *v, const tl_expr *e) {
  if (e->kind == TL_EXPR_VAR && e->u.var && e->u.var->kind == TL_VAR_DYNAMIC)
    tl_map_put(((dyn_uses *)v)->used, e->u.var, (void *)1);
}

static bool collect_dynamic(elab *E, tl_primfunc *pf) {
  tl_map used;
  tl_map_init(&used);
  dyn_uses u = {{mark_dynamic, NULL, NULL, false, 0}, &used};
  for (int i = 0; i < pf->nparams; i++) {
    const tl_buffer *b = pf->params[i].kind == TL_PARAM_TENSOR ? pf->params[i].buffer : NULL;
    for (int d = 0; b && d < b->ndim; d++) tl_visit_expr(&u.v, b->shape[d]);
    for (int d = 0; b && b->strides && d < b->ndim; d++) tl_visit_expr(&u.v, b->strides[d]);
  }
  tl_visit_stmt(&u.v, pf->body);
  int n = 0;
  for (size_t i = 0; i < E->dyn.len; i++)
    if (tl_map_get(&used, E->dyn.data[i], NULL)) n++;
  pf->ndynamic = n;
  pf->dynamic = n ? malloc_ir(E, sizeof(tl_var *) * (size_t)n) : NULL;
  n = 0;
  for (size_t i = 0; pf->dynamic && i < E->dyn.len; i++)
    if (tl_map_get(&used, E->dyn.data[i], NULL)) pf->dynamic[n++] = E->dyn.data[i];
  tl_map_free(&used);
  return !(pf->ndynamic && !pf->dynamic);
}

/* Elaborates a @T.prim_func def in the current scope.  out_idx (with its
 * AST) comes from a tilelang.jit decorator, or NULL. */
val *elab_primfunc(elab *E, const tl_ast_stmt *def, val *out_idx, const tl_ast_expr *out_ast) {
  tl_primfunc *pf = malloc_ir(E, sizeof *pf);
  if (!pf) return NULL;
  pf->name = def->u.def.name;
  pf->loc = def->loc;
  pf->pass_configs = E->jit_configs;
  tl_primfunc *saved_pf = E->pf;
  int saved_nk = E->nkernels;
  bool saved_ik = E->in_kernel;
  stmt_vec *saved_out = E->stmt_out;
  bool saved_mi = E->clashing_names;
  unsigned saved_xs = E->extern_sources;
  E->stmt_out = NULL;
  E->clashing_names = false;
  E->extern_sources = 0;
  E->pf = pf;
  E->nkernels = 0;
  E->in_kernel = false;
  bool params_ok = true;
  scope *sc = push_scope(E, true);
  if (!sc) {
    E->pf = saved_pf;
    E->stmt_out = saved_out;
    E->clashing_names = saved_mi;
    E->extern_sources = saved_xs;
    return NULL;
  }
  int np = def->u.def.nparams;
  pf->params = np ? malloc_ir(E, sizeof(tl_param) * (size_t)np) : NULL;
  for (int i = 0; i < np && !E->oom; i++) {
    const tl_ast_param *p = &def->u.def.params[i];
    bool dup = false;
    for (int j = 0; j < i; j++) dup |= def->u.def.params[j].name == p->name;
    if (dup) {
      err(E, p->loc, "duplicate parameter '%s'", p->name);
      params_ok = false;
      continue;
    }
    if (p->default_value) {
      err(E, p->default_value->loc, "parameters of a @T.prim_func cannot have default values");
      params_ok = false;
    }
    if (!p->annotation) {
      err(E, p->loc,
          "parameter '%s' needs a type annotation: T.Tensor(shape, dtype) or a scalar "
          "dtype such as T.int32",
          p->name);
      params_ok = false;
      bind(E, sc, p->name, mk(E, V_POISON), p->loc, BK_PARAM);
      continue;
    }
    val *av = eval(E, p->annotation);
    tl_dtype dt;
    if (av && av->k == V_TENSORTYPE) {
      tl_buffer *b =
          tl_ir_new_buffer(E->m, p->loc, p->name, av->u.tt.dt, TL_SCOPE_GLOBAL, av->u.tt.ndim, av->u.tt.dims);
      if (b) b->strides = av->u.tt.strides; /* T.StridedTensor */
      val *bv = b ? mk(E, V_BUFFER) : oom(E);
      if (bv) {
        bv->u.buf = b;
        pf->params[pf->nparams].kind = TL_PARAM_TENSOR;
        pf->params[pf->nparams++].buffer = b;
        bind(E, sc, p->name, bv, p->loc, BK_TENSOR);
        continue;
      }
    } else if (av && (av->k == V_DTYPE || av->k == V_STR) && to_dtype(E, av, p->annotation->loc, &dt)) {
      tl_var *var = tl_ir_new_var(E->m, p->loc, p->name, dt, TL_VAR_PARAM);
      val *vv = var ? mk_expr(E, chk(E, tl_ir_var(E->m, p->loc, var))) : oom(E);
      if (vv) {
        pf->params[pf->nparams].kind = TL_PARAM_SCALAR;
        pf->params[pf->nparams++].var = var;
        bind(E, sc, p->name, vv, p->loc, BK_PARAM);
        continue;
      }
    } else if (av && av->k != V_DTYPE && av->k != V_STR) {
      err_val(E, p->annotation->loc, av,
              "parameter annotation must be T.Tensor(shape, dtype), T.Buffer(shape, dtype) or a "
              "scalar dtype, got %s",
              describe(E, av));
    }
    params_ok = false;
    bind(E, sc, p->name, mk(E, V_POISON), p->loc, BK_PARAM);
  }
  if (params_ok && out_idx) set_out_idx(E, pf, out_idx, out_ast);
  stmt_vec body = {0};
  size_t saved_ng = E->global_allocs.len;
  elab_block(E, &def->u.def.body, &body); /* also after parameter errors: independent faults */
  if (E->global_allocs.len > saved_ng)    /* T.alloc_global after the T.Kernel, or without one */
    err(E, E->global_allocs.data[saved_ng]->loc, "T.alloc_global needs a T.Kernel after it in the prim_func");
  E->global_allocs.len = saved_ng;
  pf->body = make_seq(E, def->loc, &body);
  tl_vec_free(&body);
  if (pf->body) collect_dynamic(E, pf);
  if (pf->body && E->clashing_names) unique_names(E, pf);
  E->clashing_names = saved_mi;
  E->extern_sources = saved_xs;
  pop_scope(E, sc);
  E->pf = saved_pf;
  E->stmt_out = saved_out;
  E->nkernels = saved_nk;
  E->in_kernel = saved_ik;
  val *v = mk(E, V_PRIMFUNC);
  if (!v) return NULL;
  v->u.pf = pf;
  v->params_ok = params_ok;
  return v;
}

bool add_func(elab *E, tl_primfunc *pf) {
  for (size_t i = 0; i < E->funcs.len; i++)
    if (E->funcs.data[i] == pf) return true;
  if (!tl_vec_push(&E->funcs, pf)) return oom(E), false;
  return true;
}

/* ============================================================== factory */

/* Guesses what kind of value a factory parameter holds from its uses
 * (for the "pass -D M=<int>" hint).  0 unknown, 1 int, 2 str. */
static int scan_expr(const tl_ast_expr *x, const char *name, int depth);

static bool is_name(const tl_ast_expr *x, const char *name) { return x && x->kind == TL_AST_NAME && x->u.name == name; }

static int scan_call(const tl_ast_expr *x, const char *name, int depth) {
  const tl_ast_expr *f = x->u.call.func;
  const char *fn = f->kind == TL_AST_ATTR ? f->u.attr.name : f->kind == TL_AST_NAME ? f->u.name : "";
  static const char *const shaped[] = {"Tensor",         "Buffer",        "alloc_shared",
                                       "alloc_fragment", "alloc_local",   "alloc_buffer",
                                       "alloc_global",   "alloc_reducer", NULL};
  static const char *const intargs[] = {"Kernel", "ceildiv", "Parallel", "Pipelined", "serial",
                                        "Serial", "grid",    "unroll",   "range",     NULL};
  if (in_list(shaped, fn) && x->u.call.nargs >= 1) {
    const tl_ast_expr *sh = x->u.call.args[0];
    if (is_name(sh, name)) return 1;
    if (sh->kind == TL_AST_TUPLE || sh->kind == TL_AST_LIST)
      for (int i = 0; i < sh->u.list.n; i++)
        if (is_name(sh->u.list.items[i], name)) return 1;
    if (x->u.call.nargs >= 2 && is_name(x->u.call.args[1], name)) return 2;
  }
  if (in_list(intargs, fn))
    for (int i = 0; i < x->u.call.nargs; i++)
      if (is_name(x->u.call.args[i], name)) return 1;
  if ((!strcmp(fn, "alloc_var") || !strcmp(fn, "Cast")) && x->u.call.nargs >= 1 && is_name(x->u.call.args[0], name))
    return 2;
  if (!strcmp(fn, "cast") && x->u.call.nargs >= 2 && is_name(x->u.call.args[1], name)) return 2;
  for (int i = 0; i < x->u.call.nkw; i++)
    if (x->u.call.kw[i].name && !strcmp(x->u.call.kw[i].name, "dtype") && is_name(x->u.call.kw[i].value, name))
      return 2;
  int r = scan_expr(f, name, depth + 1);
  for (int i = 0; !r && i < x->u.call.nargs; i++) r = scan_expr(x->u.call.args[i], name, depth + 1);
  for (int i = 0; !r && i < x->u.call.nkw; i++) r = scan_expr(x->u.call.kw[i].value, name, depth + 1);
  return r;
}

/* The scan of a, else of b; with direct, 1 first when either is the name
 * itself. */
static int scan_pair(const tl_ast_expr *a, const tl_ast_expr *b, const char *name, int depth, bool direct) {
  if (direct && (is_name(a, name) || is_name(b, name))) return 1;
  int r = scan_expr(a, name, depth + 1);
  return r ? r : scan_expr(b, name, depth + 1);
}

static int scan_expr(const tl_ast_expr *x, const char *name, int depth) {
  if (!x || depth > MAX_DEPTH) return 0;
  int r = 0;
  switch (x->kind) {
  case TL_AST_CALL: return scan_call(x, name, depth);
  case TL_AST_BINOP: return scan_pair(x->u.bin.l, x->u.bin.r, name, depth, true);
  case TL_AST_BOOLOP: return scan_pair(x->u.bin.l, x->u.bin.r, name, depth, false);
  case TL_AST_UNARY: return scan_expr(x->u.un.x, name, depth + 1);
  case TL_AST_COMPARE:
    for (int i = 0; !r && i <= x->u.cmp.n; i++) r = scan_expr(x->u.cmp.operands[i], name, depth + 1);
    return r;
  case TL_AST_ATTR: return scan_expr(x->u.attr.value, name, depth + 1);
  case TL_AST_SUBSCRIPT:
    for (int i = 0; !r && i < x->u.sub.n; i++) {
      if (is_name(x->u.sub.items[i], name)) return 1;
      r = scan_expr(x->u.sub.items[i], name, depth + 1);
    }
    return r;
  case TL_AST_SLICE: return scan_pair(x->u.slice.lo, x->u.slice.hi, name, depth, true);
  case TL_AST_IFEXP:
    r = scan_expr(x->u.ifexp.test, name, depth + 1);
    return r ? r : scan_pair(x->u.ifexp.body, x->u.ifexp.orelse, name, depth, false);
  case TL_AST_TUPLE:
  case TL_AST_LIST:
    for (int i = 0; !r && i < x->u.list.n; i++) r = scan_expr(x->u.list.items[i], name, depth + 1);
    return r;
  default: return 0;
  }
}

static int scan_block(const tl_ast_block *b, const char *name, int depth) {
  if (depth > MAX_DEPTH) return 0;
  int r = 0;
  for (int i = 0; !r && i < b->n; i++) {
    const tl_ast_stmt *s = b->stmts[i];
    switch (s->kind) {
    case TL_AST_EXPR_STMT: r = scan_expr(s->u.expr, name, depth + 1); break;
    case TL_AST_ASSIGN: r = scan_expr(s->u.assign.value, name, depth + 1); break;
    case TL_AST_AUGASSIGN: r = scan_expr(s->u.aug.value, name, depth + 1); break;
    case TL_AST_ANNASSIGN: r = scan_expr(s->u.ann.value, name, depth + 1); break;
    case TL_AST_FOR:
      r = scan_expr(s->u.loop.iter, name, depth + 1);
      if (!r) r = scan_block(&s->u.loop.body, name, depth + 1);
      break;
    case TL_AST_WITH:
      r = scan_expr(s->u.with.ctx, name, depth + 1);
      if (!r) r = scan_block(&s->u.with.body, name, depth + 1);
      break;
    case TL_AST_IF:
      r = scan_expr(s->u.ifs.test, name, depth + 1);
      if (!r) r = scan_block(&s->u.ifs.body, name, depth + 1);
      if (!r) r = scan_block(&s->u.ifs.orelse, name, depth + 1);
      break;
    case TL_AST_WHILE: r = scan_block(&s->u.whiles.body, name, depth + 1); break;
    case TL_AST_DEF:
      for (int j = 0; !r && j < s->u.def.nparams; j++) r = scan_expr(s->u.def.params[j].annotation, name, depth + 1);
      if (!r) r = scan_block(&s->u.def.body, name, depth + 1);
      break;
    default: break;
    }
  }
  return r;
}

const char *param_hint(const tl_ast_param *p, const tl_ast_stmt *def) {
  if (p->annotation && p->annotation->kind == TL_AST_NAME) {
    const char *a = p->annotation->u.name;
    if (!strcmp(a, "int")) return "<int>";
    if (!strcmp(a, "float")) return "<float>";
    if (!strcmp(a, "str")) return "<str>";
    if (!strcmp(a, "bool")) return "<bool>";
  }
  int k = scan_block(&def->u.def.body, p->name, 0);
  return k == 1 ? "<int>" : k == 2 ? "<str>" : "<value>";
}

/* Does the decorator name T.prim_func (syntactically)? */
static bool is_primfunc_decorator(const tl_ast_expr *d) {
  if (d->kind == TL_AST_CALL) d = d->u.call.func;
  return (d->kind == TL_AST_ATTR && !strcmp(d->u.attr.name, "prim_func")) ||
         (d->kind == TL_AST_NAME && !strcmp(d->u.name, "prim_func"));
}

static bool block_has_primfunc(const tl_ast_block *b, int depth) {
  if (depth > MAX_DEPTH) return false;
  for (int i = 0; i < b->n; i++) {
    const tl_ast_stmt *s = b->stmts[i];
    if (s->kind == TL_AST_DEF)
      for (int j = 0; j < s->u.def.ndecorators; j++)
        if (is_primfunc_decorator(s->u.def.decorators[j])) return true;
    if (s->kind == TL_AST_IF &&
        (block_has_primfunc(&s->u.ifs.body, depth + 1) || block_has_primfunc(&s->u.ifs.orelse, depth + 1)))
      return true;
  }
  return false;
}

enum { DEC_OTHER, DEC_JIT, DEC_PRIMFUNC, DEC_MACRO };

const char *dotted_name(const tl_ast_expr *d, const char **parts, int max, int *np) {
  const tl_ast_expr *f = d->kind == TL_AST_CALL ? d->u.call.func : d;
  *np = 0;
  while (f->kind == TL_AST_ATTR) {
    if (*np == max) return NULL;
    parts[(*np)++] = f->u.attr.name;
    f = f->u.attr.value;
  }
  return f->kind == TL_AST_NAME ? f->u.name : NULL;
}

/* Classifies a decorator quietly (no errors for unknown decorators). */
static int classify_decorator(elab *E, const tl_ast_expr *d) {
  const char *parts[4];
  int np;
  const char *root = dotted_name(d, parts, 4, &np);
  if (!root) return DEC_OTHER;
  binding *b = lookup(E, root, NULL);
  if (b && b->v && b->v->k == V_OPAQUE && !np && !strcmp(b->v->u.op.desc, "tilelang.language.macro"))
    return DEC_MACRO; /* from tilelang.language import macro */
  if (!b || !b->v || b->v->k != V_NS) return DEC_OTHER;
  int ns = b->v->u.ns;
  /* parts are innermost-last: walk from the root outwards */
  for (int i = np - 1; i >= 0; i--) {
    if (ns == NS_TILELANG && !strcmp(parts[i], "language")) ns = NS_T;
    else if (ns == NS_TILELANG && !strcmp(parts[i], "jit")) ns = NS_JIT;
    else if (ns == NS_T && !strcmp(parts[i], "prim_func") && i == 0) return DEC_PRIMFUNC;
    else if (ns == NS_T && !strcmp(parts[i], "macro") && i == 0) return DEC_MACRO;
    else return DEC_OTHER;
  }
  return ns == NS_JIT ? DEC_JIT : DEC_OTHER;
}

bool def_is_macro(elab *E, const tl_ast_stmt *def) {
  for (int j = 0; def && j < def->u.def.ndecorators; j++)
    if (classify_decorator(E, def->u.def.decorators[j]) == DEC_MACRO) return true;
  return false;
}

/* Runs compile-time statements of a factory body.  Returns true when a
 * `return` was executed. */
static bool factory_block(elab *E, const tl_ast_block *b, const tl_ast_stmt *fdef, val *out_idx,
                          const tl_ast_expr *out_ast, bool *returned);

bool factory_stmt(elab *E, const tl_ast_stmt *s, const tl_ast_stmt *fdef, val *out_idx, const tl_ast_expr *out_ast,
                  bool *returned) {
  /* IR of a store (a helper run in a prim_func body) goes to the statement
   * being elaborated; anywhere else it would be lost: an error below */
  stmt_vec none = {0};
  stmt_vec *out = E->pf && E->stmt_out ? E->stmt_out : &none;
  bool ok = true;
  switch (s->kind) {
  case TL_AST_ASSIGN: {
    val *v = eval(E, s->u.assign.value);
    if (!v) {
      poison_stmt_targets(E, s);
      return false;
    }
    for (int i = 0; ok && i < s->u.assign.ntargets; i++)
      ok = assign_target(E, s->u.assign.targets[i], v, s->u.assign.value->loc, out);
    if (!ok) poison_stmt_targets(E, s);
    break;
  }
  case TL_AST_ANNASSIGN:
    if (s->u.ann.value) {
      val *v = eval(E, s->u.ann.value);
      ok = v && assign_target(E, s->u.ann.target, v, s->u.ann.value->loc, out);
    }
    break;
  case TL_AST_AUGASSIGN: ok = elab_augassign(E, s, out); break;
  case TL_AST_IF: {
    val *c = eval(E, s->u.ifs.test);
    bool t;
    if (!c) return false;
    if (!truthy(c, &t) || is_ir(c)) {
      err_val(E, s->u.ifs.test->loc, c, "a condition in a factory must be a compile-time constant");
      return false;
    }
    return factory_block(E, t ? &s->u.ifs.body : &s->u.ifs.orelse, fdef, out_idx, out_ast, returned);
  }
  case TL_AST_DEF: {
    bool pf = false;
    for (int j = 0; j < s->u.def.ndecorators; j++)
      if (classify_decorator(E, s->u.def.decorators[j]) == DEC_PRIMFUNC) pf = true;
    val *v;
    if (pf) {
      v = elab_primfunc(E, s, NULL, NULL);
    } else {
      v = mk_pyfunc(E, s, NULL); /* a helper, run when called at compile time */
    }
    if (!v) return false;
    return bind(E, E->sc, s->u.def.name, v, s->u.def.name_loc, BK_CONST);
  }
  case TL_AST_RETURN: {
    *returned = true;
    if (!s->u.ret) {
      err(E, s->loc, "factory '%s' must return its @T.prim_func", fdef->u.def.name);
      return false;
    }
    val *v = eval(E, s->u.ret);
    if (!v) return false;
    if (v->k != V_PRIMFUNC) {
      err_val(E, s->u.ret->loc, v, "factory '%s' must return its @T.prim_func, got %s", fdef->u.def.name,
              describe(E, v));
      return false;
    }
    if (out_idx && v->params_ok) set_out_idx(E, v->u.pf, out_idx, out_ast);
    return add_func(E, v->u.pf);
  }
  case TL_AST_IMPORT: break; /* handled like module imports below */
  case TL_AST_ASSERT:
    ok = elab_assert(E, s);
    if (!ok) *returned = true; /* the factory stops at a failed assert */
    break;
  case TL_AST_EXPR_STMT:
  case TL_AST_PASS: break; /* docstrings, host side effects */
  case TL_AST_FOR:
  case TL_AST_WHILE:
  case TL_AST_WITH:
  case TL_AST_BREAK:
  case TL_AST_CONTINUE:
    err(E, s->loc, "this statement is not supported in a factory body (only in a @T.prim_func)");
    return false;
  default: err(E, s->loc, "%s is not supported in a factory body yet", stmt_name(s->kind)); return false;
  }
  if (none.len && ok) {
    err(E, s->loc, "this statement stores into a buffer, which only a @T.prim_func body can do");
    ok = false;
  }
  tl_vec_free(&none);
  return ok;
}

static bool factory_block(elab *E, const tl_ast_block *b, const tl_ast_stmt *fdef, val *out_idx,
                          const tl_ast_expr *out_ast, bool *returned) {
  if (E->depth >= MAX_DEPTH) {
    if (b->n) err(E, b->stmts[0]->loc, "statements nested too deeply (limit %d)", MAX_DEPTH);
    return false;
  }
  E->depth++;
  bool ok = true;
  for (int i = 0; i < b->n && !*returned && !E->oom; i++) {
    if (b->stmts[i]->kind == TL_AST_IMPORT) do_import(E, b->stmts[i]);
    else if (!factory_stmt(E, b->stmts[i], fdef, out_idx, out_ast, returned)) ok = false;
  }
  E->depth--;
  return ok;
}

/* The value of a tilelang.jit(...) decorator's out_idx (evaluated in the
 * module scope), or NULL. */
val *jit_out_idx(elab *E, const tl_ast_expr *jit, const tl_ast_expr **ast) {
  if (!jit || jit->kind != TL_AST_CALL) return NULL;
  const tl_ast_keyword *k = find_kw(jit, "out_idx");
  if (!k) return NULL;
  *ast = k->value;
  return eval(E, k->value);
}

/* A tilelang.jit(...) decorator's pass_configs (a dict, written or computed,
 * evaluated in the module scope): the keys of the pass-config table
 * (include/tilelang/pass_configs.def) set E->jit_configs; other keys are
 * errors. */
void jit_pass_configs(elab *E, const tl_ast_expr *jit) {
  E->jit_configs = (tl_pass_configs){0};
  if (!jit || jit->kind != TL_AST_CALL) return;
  const tl_ast_keyword *k = find_kw(jit, "pass_configs");
  if (!k) return;
  const tl_ast_expr *a = k->value;
  if (a->kind != TL_AST_DICT) { /* an expression giving a dict: TileLang's examples call get_pass_configs() */
    val *d = eval(E, a);
    if (!d) return;
    if (d->k != V_DICT) {
      err_val(E, a->loc, d, "pass_configs must be a dict such as {\"tl.enable_fast_math\": True}, got %s",
              describe(E, d));
      return;
    }
    for (int i = 0; i < d->u.dict.n; i++) {
      val *key = d->u.dict.keys[i], *v = d->u.dict.vals[i];
      if (!key || key->k != V_STR) {
        err_val(E, a->loc, key, "pass_configs keys must be strings, got %s", describe(E, key));
        return;
      }
      bool *slot = pass_config_slot(key->u.s, &E->jit_configs);
      if (!slot) {
        err(E, a->loc, "unsupported pass config '%.100s' (understood: %s)", key->u.s, tl_pass_config_key_list(true));
        return;
      }
      if (!pass_config_value(E, key->u.s, v, a, slot)) return;
    }
    return;
  }
  for (int i = 0; i < a->u.dict.n; i++) {
    val *key = eval(E, a->u.dict.keys[i]);
    if (!key) return;
    if (key->k != V_STR) {
      err_val(E, a->u.dict.keys[i]->loc, key, "pass_configs keys must be strings, got %s", describe(E, key));
      return;
    }
    val *v = eval(E, a->u.dict.values[i]);
    bool *slot = pass_config_slot(key->u.s, &E->jit_configs);
    if (!slot) {
      err(E, a->u.dict.keys[i]->loc, "unsupported pass config '%.100s' (understood: %s)", key->u.s,
          tl_pass_config_key_list(true));
      return;
    }
    if (!pass_config_value(E, key->u.s, v, a->u.dict.values[i], slot)) return;
  }
}

static void elab_factory(elab *E, const tl_ast_stmt *def, const tl_ast_expr *jit) {
  scope *saved = E->sc;
  E->sc = E->module_scope;
  const tl_ast_expr *oast = NULL;
  val *oi = jit_out_idx(E, jit, &oast);
  jit_pass_configs(E, jit);
  int np = def->u.def.nparams;
  val **pv = talloc(E, sizeof(val *) * (size_t)(np ? np : 1));
  if (!pv) {
    E->sc = saved;
    return;
  }
  for (int i = 0; i < np; i++) {
    const tl_ast_param *p = &def->u.def.params[i];
    int di = find_define(E, p->name);
    if (di >= 0) {
      pv[i] = parse_define(E, di);
    } else if ((pv[i] = compile_binding(E, def->u.def.name, p->name)) != NULL) {
      /* from NAME.compile(p=...) in the file */
    } else if (p->default_value) {
      pv[i] = eval(E, p->default_value);
    } else if (p->pkind == TL_AST_PARAM_VARARG) {
      pv[i] = mk_tuple(E, 0, false); /* *args of a factory: () */
    } else if (p->pkind == TL_AST_PARAM_KWARG) {
      pv[i] = mk(E, V_DICT); /* **kwargs: {} */
    } else {
      err(E, p->loc, "factory parameter '%s' has no value; pass -D %s=%s", p->name, p->name, param_hint(p, def));
      pv[i] = NULL;
    }
    if (!pv[i]) pv[i] = mk(E, V_POISON);
  }
  scope *sc = push_scope(E, false);
  if (!sc) {
    E->sc = saved;
    return;
  }
  for (int i = 0; i < np; i++) bind(E, sc, def->u.def.params[i].name, pv[i], def->u.def.params[i].loc, BK_CONST);
  bool returned = false;
  factory_block(E, &def->u.def.body, def, oi, oast, &returned);
  if (!returned && !E->oom)
    err(E, def->u.def.name_loc, "factory '%s' does not return its @T.prim_func", def->u.def.name);
  pop_scope(E, sc);
  E->sc = saved;
  E->jit_configs = (tl_pass_configs){0};
}

/* =============================================================== module */

static val *module_value(elab *E, const char *path) {
  if (!strcmp(path, "tilelang")) return mk_ns(E, NS_TILELANG);
  if (!strcmp(path, "tilelang.language")) return mk_ns(E, NS_T);
  if (!strcmp(path, "tilelang.jit")) return mk_ns(E, NS_JIT);
  val *pre = tl_el_prelude_value(E, path);
  if (pre) return pre;
  const char *dot = strchr(path, '.');
  const char *mod = dot ? tl_arena_strndup(&E->tmp, path, (size_t)(dot - path)) : tl_arena_strdup(&E->tmp, path);
  const char *desc = tl_arena_strdup(&E->tmp, path);
  if (!mod || !desc) return oom(E);
  return mk_opaque(E, desc, mod);
}

void do_import(elab *E, const tl_ast_stmt *s) {
  const char *module = s->u.import.module ? s->u.import.module : "";
  const char *name = s->u.import.name, *alias = s->u.import.alias;
  const char *bindname, *path;
  if (!name) {
    if (alias) {
      bindname = alias;
      path = module;
    } else {
      const char *dot = strchr(module, '.');
      bindname = path = dot ? tl_arena_strndup(&E->tmp, module, (size_t)(dot - module)) : module;
      if (!bindname) return (void)oom(E);
    }
  } else {
    if (!strcmp(name, "*")) return; /* from x import *: nothing we can name */
    bindname = alias ? alias : name;
    path = tprintf(E, "%s.%s", module, name);
  }
  const char *in = intern(E, bindname);
  val *v = in ? module_value(E, path) : NULL;
  if (v) bind(E, E->sc, in, v, s->loc, BK_CONST);
}

typedef struct pending {
  const tl_ast_stmt *def;
  bool factory;
  const tl_ast_expr *jit;
} pending;
typedef TL_VEC(pending) pending_vec;

static bool mentions_dunder_name(const tl_ast_expr *x, int depth) {
  if (!x || depth > MAX_DEPTH) return false;
  switch (x->kind) {
  case TL_AST_NAME: return !strcmp(x->u.name, "__name__");
  case TL_AST_COMPARE:
    for (int i = 0; i <= x->u.cmp.n; i++)
      if (mentions_dunder_name(x->u.cmp.operands[i], depth + 1)) return true;
    return false;
  case TL_AST_BOOLOP: return mentions_dunder_name(x->u.bin.l, depth + 1) || mentions_dunder_name(x->u.bin.r, depth + 1);
  case TL_AST_UNARY: return mentions_dunder_name(x->u.un.x, depth + 1);
  default: return false;
  }
}

static void mark_define(elab *E, const char *name) {
  for (size_t i = 0; i < E->ndefs; i++)
    if (E->defs[i].name && !strcmp(E->defs[i].name, name)) E->def_used[i] = true;
}

/* -D values of the names of T.const("M, N") calls in a factory body are used. */
static void mark_const_defines(elab *E, const tl_ast_block *b) {
  for (int i = 0; i < b->n; i++) {
    const tl_ast_stmt *s = b->stmts[i];
    const tl_ast_expr *v = s->kind == TL_AST_ASSIGN ? s->u.assign.value : NULL;
    if (!v || v->kind != TL_AST_CALL || v->u.call.nargs != 1 || v->u.call.args[0]->kind != TL_AST_STR ||
        v->u.call.func->kind != TL_AST_ATTR || strcmp(v->u.call.func->u.attr.name, "const"))
      continue;
    const char *p = v->u.call.args[0]->u.str;
    while (*p) {
      while (*p == ',' || *p == ' ' || *p == '\t') p++;
      size_t n = strcspn(p, ", \t");
      if (!n) break;
      for (size_t d = 0; d < E->ndefs; d++)
        if (E->defs[d].name && strlen(E->defs[d].name) == n && !strncmp(E->defs[d].name, p, n)) E->def_used[d] = true;
      p += n;
    }
  }
}

static void module_assign_name(elab *E, const tl_ast_expr *t, const tl_ast_expr *value, val *v) {
  int di = find_define(E, t->u.name);
  if (di >= 0) {
    mark_define(E, t->u.name);
    v = parse_define(E, di);
  } else if (!v) {
    v = mk(E, V_LAZY);
    if (v) v->u.lazy.ast = value;
  }
  if (v) bind(E, E->module_scope, t->u.name, v, t->loc, BK_CONST);
}

/* a, b = value at module level: each name gets a lazy item of one lazy
 * value, evaluated (and unpacked) only when a kernel uses a name. */
static void module_assign_tuple(elab *E, const tl_ast_expr *t, const tl_ast_expr *value) {
  val *whole = mk(E, V_LAZY);
  if (!whole) return;
  whole->u.lazy.ast = value;
  whole->u.lazy.index = t->u.list.n; /* a whole value: index holds the target count */
  for (int k = 0; k < t->u.list.n; k++) {
    const tl_ast_expr *it = t->u.list.items[k];
    if (it->kind != TL_AST_NAME) continue; /* nested or starred targets: host code */
    val *item = mk(E, V_LAZY);
    if (!item) return;
    item->u.lazy.from = whole;
    item->u.lazy.index = k;
    module_assign_name(E, it, NULL, find_define(E, it->u.name) >= 0 ? NULL : item);
  }
}

/* Names assigned under a module-level condition on host values: bound to
 * host values that say so (an error only where a kernel uses one). */
static void host_branch_names(elab *E, const tl_ast_block *b, int line) {
  for (int i = 0; i < b->n; i++) {
    const tl_ast_stmt *s = b->stmts[i];
    if (s->kind != TL_AST_ASSIGN) continue;
    for (int j = 0; j < s->u.assign.ntargets; j++) {
      const tl_ast_expr *t = s->u.assign.targets[j];
      if (t->kind != TL_AST_NAME || find_define(E, t->u.name) >= 0) continue;
      val *v = mk_opaque(E, tprintf(E, "%s (set under the host condition on line %d)", t->u.name, line), NULL);
      if (v) bind(E, E->module_scope, t->u.name, v, t->loc, BK_CONST);
    }
  }
}

static void module_block(elab *E, const tl_ast_block *b, pending_vec *defs, int depth) {
  if (depth > MAX_DEPTH) {
    if (b->n) err(E, b->stmts[0]->loc, "statements nested too deeply (limit %d)", MAX_DEPTH);
    return;
  }
  for (int i = 0; i < b->n && !E->oom; i++) {
    const tl_ast_stmt *s = b->stmts[i];
    switch (s->kind) {
    case TL_AST_IMPORT: do_import(E, s); break;
    case TL_AST_EXPR_STMT: note_compile_call(E, s->u.expr); break;
    case TL_AST_ASSIGN:
      note_compile_call(E, s->u.assign.value);
      for (int j = 0; j < s->u.assign.ntargets; j++) {
        const tl_ast_expr *t = s->u.assign.targets[j];
        if (t->kind == TL_AST_NAME) {
          module_assign_name(E, t, s->u.assign.value, NULL);
        } else if (t->kind == TL_AST_TUPLE || t->kind == TL_AST_LIST) {
          module_assign_tuple(E, t, s->u.assign.value);
        }
      }
      break;
    case TL_AST_ANNASSIGN:
      if (s->u.ann.value && s->u.ann.target->kind == TL_AST_NAME)
        module_assign_name(E, s->u.ann.target, s->u.ann.value, NULL);
      break;
    case TL_AST_AUGASSIGN: { /* x op= value: lazy, as assignments; other targets are host code */
      const tl_ast_expr *t = s->u.aug.target;
      binding *prev = t->kind == TL_AST_NAME ? lookup(E, t->u.name, NULL) : NULL;
      val *v = prev && find_define(E, t->u.name) < 0 ? mk(E, V_LAZY) : NULL;
      if (!v) break;
      v->u.lazy.ast = s->u.aug.value;
      v->u.lazy.from = prev->v;
      v->u.lazy.aug_op = s->u.aug.op;
      v->u.lazy.aug_loc = s->loc;
      bind(E, E->module_scope, t->u.name, v, t->loc, BK_CONST);
      break;
    }
    case TL_AST_IF: {
      if (mentions_dunder_name(s->u.ifs.test, 0)) break; /* if __name__ == "__main__": host */
      E->quiet++; /* a condition on host values is not an error unless a kernel needs it */
      E->quiet_failed = false;
      val *c = eval(E, s->u.ifs.test);
      bool failed = E->quiet_failed;
      E->quiet--;
      bool t;
      if (c && !failed && !is_ir(c) && c->k != V_OPAQUE && truthy(c, &t)) {
        module_block(E, t ? &s->u.ifs.body : &s->u.ifs.orelse, defs, depth + 1);
      } else {
        host_branch_names(E, &s->u.ifs.body, s->loc.line);
        host_branch_names(E, &s->u.ifs.orelse, s->loc.line);
      }
      break;
    }
    case TL_AST_DEF: {
      const tl_ast_expr *jit = NULL;
      bool is_pf = false, is_jit = false;
      for (int j = 0; j < s->u.def.ndecorators; j++) {
        int k = classify_decorator(E, s->u.def.decorators[j]);
        if (k == DEC_PRIMFUNC) is_pf = true;
        if (k == DEC_JIT) is_jit = true, jit = s->u.def.decorators[j];
      }
      bool factory = !is_pf && (is_jit || block_has_primfunc(&s->u.def.body, 0));
      /* kernels stay names; other functions are helpers run when called at compile time */
      bind(E, E->module_scope, s->u.def.name,
           is_pf || factory ? mk_opaque(E, tprintf(E, "%s", s->u.def.name), NULL) : mk_pyfunc(E, s, NULL),
           s->u.def.name_loc, BK_CONST);
      if (is_pf || factory) {
        pending p = {s, factory, jit};
        if (!tl_vec_push(defs, p)) oom(E);
        if (factory) {
          for (int j = 0; j < s->u.def.nparams; j++) mark_define(E, s->u.def.params[j].name);
          mark_const_defines(E, &s->u.def.body);
        }
      }
      break;
    }
    default: break; /* host code: loops, expression statements, ... */
    }
  }
}

/* The first parameter of a factory that has no value (no -D, no
 * default), or NULL. */
static const tl_ast_param *unbound_param(elab *E, const tl_ast_stmt *def) {
  for (int i = 0; i < def->u.def.nparams; i++) {
    const tl_ast_param *p = &def->u.def.params[i];
    bool tensor = false; /* an eager kernel's tensor parameter (A: T.Tensor(...) in the body) */
    for (int j = 0; j < def->u.def.body.n; j++) {
      const tl_ast_stmt *s = def->u.def.body.stmts[j];
      tensor |= s->kind == TL_AST_ANNASSIGN && !s->u.ann.value && s->u.ann.target->kind == TL_AST_NAME &&
                s->u.ann.target->u.name == p->name;
    }
    if (!tensor && !p->default_value && find_define(E, p->name) < 0 && !compile_binding(E, def->u.def.name, p->name) &&
        (p->pkind == TL_AST_PARAM_POS || p->pkind == TL_AST_PARAM_POSONLY || p->pkind == TL_AST_PARAM_KWONLY))
      return p;
  }
  return NULL;
}

static void elaborate_pending(elab *E, const pending *p) {
  if (p->factory && is_eager_kernel(E, p->def)) {
    elab_eager(E, p->def, p->jit);
    return;
  }
  if (p->factory) {
    elab_factory(E, p->def, p->jit);
    return;
  }
  E->sc = E->module_scope;
  const tl_ast_expr *oast = NULL;
  val *oi = jit_out_idx(E, p->jit, &oast);
  val *v = elab_primfunc(E, p->def, oi, oast);
  if (v) add_func(E, v->u.pf);
}

/* Which kernels to build: the one named by `kernel` (--kernel); else all
 * of them when there is one, or every one whose parameters all have values
 * (-D or defaults) when there are several, with a warning for each one
 * skipped.  Then elaborates them. */
static void select_and_elaborate(elab *E, pending_vec *pend, const char *kernel, const char *fname) {
  if (kernel) {
    for (size_t i = 0; i < pend->len && !E->oom; i++)
      if (!strcmp(pend->data[i].def->u.def.name, kernel)) {
        elaborate_pending(E, &pend->data[i]);
        return;
      }
    tl_strbuf names = {0};
    for (size_t i = 0; i < pend->len; i++)
      tl_strbuf_printf(&names, "%s'%s'", i ? ", " : "", pend->data[i].def->u.def.name);
    err(E, (tl_loc){fname, 1, 1}, "--kernel=%s: no kernel of that name in this file (%s%s)", kernel,
        pend->len ? "kernels: " : "it has none", names.data && !names.oom ? names.data : "");
    tl_strbuf_free(&names);
    return;
  }
  int skipped = 0;
  for (size_t i = 0; i < pend->len && !E->oom; i++) {
    const pending *p = &pend->data[i];
    const tl_ast_param *u = p->factory && pend->len > 1 ? unbound_param(E, p->def) : NULL;
    if (u) {
      tl_diag_report(E->d, TL_DIAG_WARNING, p->def->u.def.name_loc,
                     "skipped kernel '%s': parameter '%s' has no value (pass -D %s=..., or "
                     "--kernel=%s to compile it alone)",
                     p->def->u.def.name, u->name, u->name, p->def->u.def.name);
      skipped++;
      continue;
    }
    elaborate_pending(E, p);
  }
  if (skipped && !E->nerr && !E->oom && E->funcs.len == 0)
    err(E, (tl_loc){fname, 1, 1},
        "no kernel compiled: all %d kernels of this file lack parameter values (see the "
        "warnings); pass -D values or --kernel=NAME",
        skipped);
}

bool tl_frontend_parse(tl_module *m, tl_diag *d, const char *source, size_t len, const char *filename,
                       const tl_define *defs, size_t ndefs) {
  return tl_frontend_parse_kernel(m, d, source, len, filename, defs, ndefs, NULL);
}

/* tl_frontend_parse_kernel, or with tune the module phase and then the
 * autotune decorator (elab_autotune.c) instead of building kernels. */
static bool frontend(tl_module *m, tl_diag *d, const char *source, size_t len, const char *filename,
                     const tl_define *defs, size_t ndefs, const char *kernel, struct tl_tune_space *tune) {
  if (!m || !d || (!source && len)) return false;
  const char *fname =
      (filename && filename == m->filename) ? m->filename : tl_arena_strdup(&m->arena, filename ? filename : "<input>");
  if (!fname) {
    tl_error(d, TL_LOC_NONE, "out of memory");
    return false;
  }
  if (!m->filename) m->filename = fname;
  const char *text =
      (source && source == m->source) ? m->source : tl_arena_strndup(&m->arena, source ? source : "", len);
  if (!text) {
    tl_error(d, TL_LOC_NONE, "out of memory");
    return false;
  }
  if (!m->source) m->source = (char *)text;
  if (!tl_diag_has_source(d, fname)) tl_diag_add_source(d, fname, text, len);

  tl_ast_module ast;
  memset(&ast, 0, sizeof ast);
  if (!tl_parse_python(&m->arena, &m->names, d, text, len, fname, &ast)) return false;

  elab E = {.m = m, .d = d, .file = fname, .defs = defs, .ndefs = defs ? ndefs : 0};
  tl_arena_init(&E.tmp);
  bool ok = false;
  pending_vec pend = {0};
  if (E.ndefs) {
    E.defvals = talloc(&E, sizeof(val *) * E.ndefs);
    E.def_used = talloc(&E, sizeof(bool) * E.ndefs);
    if (!E.defvals || !E.def_used) goto done;
  }
  scope *ms = push_scope(&E, false);
  if (!ms) goto done;
  E.module_scope = ms;

  /* Phase 1: imports, module constants, classification of defs. */
  module_block(&E, &ast.body, &pend, 0);
  for (size_t i = 0; i < E.ndefs; i++) {
    if (!E.defs[i].name || E.def_used[i] || find_define(&E, E.defs[i].name) != (int)i) continue;
    err(&E, cmdline_loc, "-D %s: no factory parameter named '%s'", E.defs[i].name, E.defs[i].name);
  }
  /* Phase 2: run the selected factories, elaborate bare prim_funcs. */
  if (tune) elab_autotune(&E, &ast.body, kernel, tune);
  else select_and_elaborate(&E, &pend, kernel, fname);
  if (!tune && !E.nerr && !E.oom && E.funcs.len == 0)
    err(&E, (tl_loc){fname, 1, 1}, "no kernel found: expected a @T.prim_func or a factory function returning one");
  if (!E.oom && E.funcs.len) {
    int n0 = m->nfuncs;
    tl_primfunc **arr = malloc_ir(&E, sizeof(tl_primfunc *) * ((size_t)n0 + E.funcs.len));
    if (arr) {
      if (n0) memcpy(arr, m->funcs, sizeof(tl_primfunc *) * (size_t)n0);
      memcpy(arr + n0, E.funcs.data, sizeof(tl_primfunc *) * E.funcs.len);
      m->funcs = arr;
      m->nfuncs = n0 + (int)E.funcs.len;
    }
  }
  ok = E.nerr == 0 && !E.oom;
done:
  while (E.sc) pop_scope(&E, E.sc);
  for (size_t i = 0; i < E.kept.len; i++) tl_map_free(&E.kept.data[i]->map);
  tl_vec_free(&E.kept);
  tl_vec_free(&pend);
  tl_vec_free(&E.dyn);
  tl_vec_free(&E.tid_lets);
  tl_map_free(&E.let_values);
  tl_vec_free(&E.thread_lets);
  tl_vec_free(&E.funcs);
  tl_vec_free(&E.global_allocs);
  tl_vec_free(&E.compile_calls);
  tl_arena_free(&E.tmp);
  return ok;
}

bool tl_frontend_parse_kernel(tl_module *m, tl_diag *d, const char *source, size_t len, const char *filename,
                              const tl_define *defs, size_t ndefs, const char *kernel) {
  return frontend(m, d, source, len, filename, defs, ndefs, kernel, NULL);
}

bool tl_frontend_autotune(tl_module *m, tl_diag *d, const char *source, size_t len, const char *filename,
                          const tl_define *defs, size_t ndefs, const char *kernel, struct tl_tune_space *out) {
  return frontend(m, d, source, len, filename, defs, ndefs, kernel, out);
}
