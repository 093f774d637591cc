/* Elaborator, autotune part (see elaborate.c for the algorithm and
 * tune_space.h for the result): TileLang's @tilelang.autotune(configs=...,
 * warmup=..., rep=...) decorator above @tilelang.jit, evaluated at compile
 * time into -D bindings per configuration.
 *
 * Algorithm: after the module phase (imports and module constants bound,
 * lazily), find the top-level def carrying the decorator (spelled
 * tilelang.autotune, tilelang.autotuner.autotune, or a name imported from
 * tilelang.autotuner, also by `import *`); evaluate configs= in the module scope as
 * compile-time Python (list displays, comprehensions, itertools.product,
 * dict(zip(...)), helper functions: elab_python.c); a function value is
 * called with no arguments.  Each item must be a dict whose keys name
 * parameters of the factory and whose values are constants; they are
 * printed as -D value texts.  TileLang's other keywords (timeout,
 * ref_prog, supply_prog, rtol, atol, skip_check, early_stop, ...) are host
 * values and are not evaluated. */
#include "Frontend/elab_impl.h"
#include "Frontend/tune_space.h"

static const char *const kAutotuneKeywords[] = {"configs",
                                                "warmup",
                                                "rep",
                                                "timeout",
                                                "supply_type",
                                                "ref_prog",
                                                "supply_prog",
                                                "rtol",
                                                "atol",
                                                "max_mismatched_ratio",
                                                "skip_check",
                                                "manual_check_prog",
                                                "cache_input_tensors",
                                                "early_stop",
                                                "early_stop_factor",
                                                NULL};

/* v itself, or a lazy module constant's value; NULL for a poisoned one. */
static val *settle(elab *E, val *v, tl_loc loc) {
  if (v && v->k == V_LAZY) return force(E, v, loc);
  return v && v->k != V_POISON ? v : NULL;
}

/* Whether decorator d names TileLang's autotune (star_import: the module
 * has `from tilelang.autotuner import *`, so a bare unbound `autotune` is
 * it). */
static bool is_autotune(elab *E, const tl_ast_expr *d, bool star_import) {
  const char *parts[3] = {NULL, NULL, NULL}; /* initialised: GCC -O3 warns (falsely) otherwise */
  int np;
  const char *root = dotted_name(d, parts, 3, &np);
  if (!root) return false;
  binding *b = lookup(E, root, NULL);
  if (!b && star_import && np == 0 && !strcmp(root, "autotune")) return true;
  if (!b || !b->v) return false;
  const val *v = b->v;
  /* parts are innermost-last: parts[np - 1] is the first attribute */
  if (v->k == V_NS && v->u.ns == NS_TILELANG)
    return (np == 1 && !strcmp(parts[0], "autotune")) ||
           (np == 2 && !strcmp(parts[1], "autotuner") && !strcmp(parts[0], "autotune"));
  if (v->k != V_OPAQUE || !v->u.op.desc) return false;
  if (np == 0)
    return !strcmp(v->u.op.desc, "tilelang.autotuner.autotune") || !strcmp(v->u.op.desc, "tilelang.autotune");
  return np == 1 && !strcmp(v->u.op.desc, "tilelang.autotuner") && !strcmp(parts[0], "autotune");
}

/* Appends the -D text of constant v to b; false (with an error) when v
 * has no such text. */
static bool value_text(elab *E, val *v, tl_strbuf *b, tl_loc loc, const char *what, int depth) {
  switch (v->k) {
  case V_BOOL: tl_strbuf_printf(b, "%s", v->u.b ? "True" : "False"); return true;
  case V_NONE: tl_strbuf_printf(b, "None"); return true;
  case V_INT: tl_strbuf_printf(b, "%lld", (long long)v->u.i); return true;
  case V_FLOAT: {
    if (!isfinite(v->u.f)) break;
    char t[40];
    snprintf(t, sizeof t, "%.17g", v->u.f);
    tl_strbuf_printf(b, "%s%s", t, strpbrk(t, ".e") ? "" : ".0");
    return true;
  }
  case V_STR:
    if (strchr(v->u.s, '\'') && strchr(v->u.s, '"')) break;
    tl_strbuf_printf(b, strchr(v->u.s, '\'') ? "\"%s\"" : "'%s'", v->u.s);
    return true;
  case V_DTYPE: tl_strbuf_printf(b, "'%s'", tl_dtype_name(v->u.dt)); return true;
  case V_TUPLE:
    if (depth > 0) break;
    tl_strbuf_printf(b, v->is_list ? "[" : "(");
    for (int i = 0; i < v->u.tup.n; i++) {
      val *it = settle(E, v->u.tup.items[i], loc);
      if (!it) return false;
      if (i) tl_strbuf_printf(b, ", ");
      if (!value_text(E, it, b, loc, what, depth + 1)) return false;
    }
    tl_strbuf_printf(b, v->is_list ? "]" : (v->u.tup.n == 1 ? ",)" : ")"));
    return true;
  default: break;
  }
  err_val(E, loc, v,
          "%s is %s; a config value must be a constant (int, float, bool, str, dtype, "
          "None, or a tuple of them)",
          what, describe(E, v));
  return false;
}

/* Whether the factory def has a parameter called name (or **kwargs). */
static bool has_param(const tl_ast_stmt *def, const char *name) {
  for (int i = 0; i < def->u.def.nparams; i++) {
    const tl_ast_param *p = &def->u.def.params[i];
    if (p->pkind == TL_AST_PARAM_KWARG || !strcmp(p->name, name)) return true;
  }
  return false;
}

/* An int keyword of the decorator (warmup, rep), -1 when absent. */
static int int_keyword(elab *E, const tl_ast_expr *dec, const char *name, int lo) {
  const tl_ast_keyword *k = find_kw(dec, name);
  if (!k) return -1;
  val *v = eval(E, k->value);
  if (!v) return -1;
  if (v->k != V_INT || v->u.i < lo || v->u.i > 1000000) {
    err_val(E, k->value->loc, v, "@autotune %s= must be an int in [%d, 1000000], got %s", name, lo, describe(E, v));
    return -1;
  }
  return (int)v->u.i;
}

/* Copies config c (a dict) of the list into out: bindings and a text line. */
static bool take_config(elab *E, const tl_ast_stmt *def, val *c, int index, tl_loc loc, struct tl_tune_space *out,
                        tl_strbuf *text) {
  if (c->k != V_DICT) {
    err_val(E, loc, c,
            "@autotune configs: config #%d is %s; each config must be a dict of "
            "factory parameter values",
            index, describe(E, c));
    return false;
  }
  int n = c->u.dict.n;
  tl_define *defs = tl_arena_alloc(&out->arena, sizeof(tl_define) * (size_t)(n ? n : 1));
  if (!defs) return oom(E), false;
  for (int i = 0; i < n; i++) {
    val *k = settle(E, c->u.dict.keys[i], loc), *v = settle(E, c->u.dict.vals[i], loc);
    if (!k || !v) return false;
    if (k->k != V_STR) {
      err_val(E, loc, k,
              "@autotune configs: config #%d has the key %s; keys must be parameter "
              "names (str)",
              index, describe(E, k));
      return false;
    }
    if (!has_param(def, k->u.s)) {
      err(E, loc,
          "@autotune configs: config #%d sets '%s', which is not a parameter of factory "
          "'%s'",
          index, k->u.s, def->u.def.name);
      return false;
    }
    tl_strbuf vt = {0};
    bool ok = value_text(E, v, &vt, loc, tprintf(E, "@autotune configs: config #%d value of '%s'", index, k->u.s), 0);
    if (ok && vt.oom) ok = (oom(E), false);
    defs[i].name = ok ? tl_arena_strdup(&out->arena, k->u.s) : NULL;
    defs[i].value = ok ? tl_arena_strdup(&out->arena, vt.data ? vt.data : "") : NULL;
    tl_strbuf_free(&vt);
    if (!ok) return false;
    if (!defs[i].name || !defs[i].value) return oom(E), false;
    tl_strbuf_printf(text, "%s%s=%s", i ? " " : "", defs[i].name, defs[i].value);
  }
  tl_strbuf_printf(text, "\n");
  out->defs[index] = defs;
  out->nkeys[index] = (size_t)n;
  return true;
}

/* Evaluates configs= of decorator dec on factory def into out. */
static bool take_configs(elab *E, const tl_ast_stmt *def, const tl_ast_expr *dec, struct tl_tune_space *out) {
  const tl_ast_keyword *ck = find_kw(dec, "configs");
  if (!ck) {
    err(E, dec->loc, "@autotune on '%s' needs configs= (a list of dicts of parameter values)", def->u.def.name);
    return false;
  }
  tl_loc loc = ck->value->loc;
  val *list = eval(E, ck->value);
  if (list && list->k == V_PYFUNC) { /* configs=get_configs: called with no arguments */
    tl_ast_expr call;
    memset(&call, 0, sizeof call);
    call.kind = TL_AST_CALL;
    call.loc = loc;
    call.u.call.func = ck->value;
    list = call_pyfunc(E, list, &call);
  }
  if (!list) return false;
  if (list->k != V_TUPLE) {
    err_val(E, loc, list,
            "@autotune configs= must be a list of dicts (or a function returning "
            "one), got %s",
            describe(E, list));
    return false;
  }
  int n = list->u.tup.n;
  if (n == 0) {
    err(E, loc, "@autotune configs= is empty: nothing to tune");
    return false;
  }
  out->n = (size_t)n;
  out->nkeys = tl_arena_alloc(&out->arena, sizeof(size_t) * (size_t)n);
  out->defs = tl_arena_alloc(&out->arena, sizeof(tl_define *) * (size_t)n);
  if (!out->nkeys || !out->defs) return oom(E), false;
  tl_strbuf text = {0};
  bool ok = true;
  for (int i = 0; ok && i < n; i++) {
    val *c = settle(E, list->u.tup.items[i], loc);
    ok = c && take_config(E, def, c, i, loc, out, &text);
  }
  if (ok && text.oom) ok = (oom(E), false);
  if (ok && !(out->text = tl_arena_strdup(&out->arena, text.data ? text.data : ""))) ok = (oom(E), false);
  tl_strbuf_free(&text);
  return ok;
}

void elab_autotune(elab *E, const tl_ast_block *body, const char *kernel, struct tl_tune_space *out) {
  E->sc = E->module_scope;
  bool star_import = false;
  for (int i = 0; i < body->n; i++) {
    const tl_ast_stmt *s = body->stmts[i];
    star_import |= s->kind == TL_AST_IMPORT && s->u.import.module && s->u.import.name &&
                   !strcmp(s->u.import.module, "tilelang.autotuner") && !strcmp(s->u.import.name, "*");
  }
  for (int i = 0; i < body->n && !E->oom; i++) {
    const tl_ast_stmt *s = body->stmts[i];
    if (s->kind != TL_AST_DEF || (kernel && strcmp(s->u.def.name, kernel))) continue;
    for (int j = 0; j < s->u.def.ndecorators; j++) {
      const tl_ast_expr *dec = s->u.def.decorators[j];
      if (!is_autotune(E, dec, star_import)) continue;
      out->found = true;
      out->kernel = tl_arena_strdup(&out->arena, s->u.def.name);
      out->warmup = out->rep = -1;
      if (!out->kernel) return (void)oom(E);
      if (dec->kind != TL_AST_CALL) {
        err(E, dec->loc, "@autotune on '%s' needs arguments: @tilelang.autotune(configs=...)", s->u.def.name);
        return;
      }
      if (dec->u.call.nargs) {
        err(E, dec->u.call.args[0]->loc,
            "@autotune takes keyword arguments only (configs=, "
            "warmup=, rep=, ...)");
        return;
      }
      if (!check_kws(E, dec, "autotune", kAutotuneKeywords)) return;
      out->warmup = int_keyword(E, dec, "warmup", 0);
      out->rep = int_keyword(E, dec, "rep", 1);
      take_configs(E, s, dec, out);
      return;
    }
  }
}
