/* Elaborator, part 4 (see elaborate.c for the algorithm): the compile-time
 * Python that kernel factories use beyond arithmetic — comprehensions and
 * generator expressions over constant sequences, f-strings, assert,
 * 'is' / 'in', and the builtins range / zip / enumerate / list / tuple /
 * isinstance on constants.
 *
 * Algorithm: a comprehension runs its 'for' clauses as nested loops over
 * the items of a constant sequence (tuple, list, dict keys, string
 * characters), each iteration in a fresh scope binding the clause's target,
 * and collects the element (key: value for dicts) when every 'if' holds; a
 * condition must be a compile-time constant.  A generator expression gives
 * a tuple (it is consumed at once).  An f-string formats each field as
 * Python's str() (repr with !r) or with a printf-compatible format spec
 * (d x X o e E f F g G %, with flags, width and precision).  Sequences are
 * bounded by MAX_CONST_LEN items. */
#include "Frontend/elab_impl.h"

/* The items of a constant sequence (tuple, list, dict keys, string
 * characters); NULL with an error when v is not one. */
static val **seq_items(elab *E, val *v, tl_loc loc, int *n) {
  switch (v->k) {
  case V_TUPLE: *n = v->u.tup.n; return v->u.tup.n ? v->u.tup.items : talloc(E, sizeof(val *));
  case V_DICT: *n = v->u.dict.n; return v->u.dict.n ? v->u.dict.keys : talloc(E, sizeof(val *));
  case V_STR: {
    size_t len = strlen(v->u.s);
    if (len > MAX_CONST_LEN) break;
    val **items = talloc(E, sizeof(val *) * (len ? len : 1));
    for (size_t i = 0; items && i < len; i++)
      if (!(items[i] = mk_str(E, tprintf(E, "%c", v->u.s[i])))) return NULL;
    *n = (int)len;
    return items;
  }
  default: break;
  }
  err_val(E, loc, v,
          "cannot iterate over %s at compile time (a tuple, list, dict, string or "
          "range of constants is needed)",
          describe(E, v));
  return NULL;
}

/* Binds a comprehension target (a name or nested tuple of names) in the
 * current scope. */
static bool bind_target(elab *E, const tl_ast_expr *t, val *v, tl_loc loc) {
  if (t->kind == TL_AST_NAME) return bind(E, E->sc, t->u.name, v, t->loc, BK_CONST);
  if (t->kind == TL_AST_TUPLE || t->kind == TL_AST_LIST) {
    if (v->k != V_TUPLE || v->u.tup.n != t->u.list.n) {
      err_val(E, t->loc, v, "cannot unpack %s into %d names", describe(E, v), t->u.list.n);
      return false;
    }
    for (int i = 0; i < t->u.list.n; i++)
      if (!bind_target(E, t->u.list.items[i], v->u.tup.items[i], loc)) return false;
    return true;
  }
  err(E, t->loc, "a comprehension target must be a name or a tuple of names");
  return false;
}

typedef TL_VEC(val *) val_vec;

/* Runs generator clause g of x and the ones after it, appending elements
 * (and values, for dict comprehensions) to out. */
static bool run_clauses(elab *E, const tl_ast_expr *x, int g, val_vec *out) {
  if (g == x->u.comp.ngens) {
    val *k = eval(E, x->u.comp.elt);
    val *v = k && x->u.comp.value ? eval(E, x->u.comp.value) : NULL;
    if (!k || (x->u.comp.value && !v)) return false;
    if (out->len >= 2 * MAX_CONST_LEN) {
      err(E, x->loc, "comprehension too long (more than %d items)", MAX_CONST_LEN);
      return false;
    }
    if (!tl_vec_push(out, k) || (v && !tl_vec_push(out, v))) return oom(E), false;
    return true;
  }
  const tl_ast_comprehension *c = &x->u.comp.gens[g];
  val *it = eval(E, c->iter);
  int n = 0;
  val **items = it ? seq_items(E, it, c->iter->loc, &n) : NULL;
  if (!items) return false;
  for (int i = 0; i < n; i++) {
    scope *sc = push_scope(E, E->sc && E->sc->in_pf);
    if (!sc) return false;
    bool ok = bind_target(E, c->target, items[i], c->iter->loc), keep = true;
    for (int j = 0; ok && keep && j < c->nifs; j++) {
      val *cv = eval(E, c->ifs[j]);
      if (!cv || is_ir(cv) || !truthy(cv, &keep)) {
        if (cv)
          err_val(E, c->ifs[j]->loc, cv,
                  "a comprehension condition must be a "
                  "compile-time constant, got %s",
                  describe(E, cv));
        ok = false;
      }
    }
    if (ok && keep) ok = run_clauses(E, x, g + 1, out);
    pop_scope(E, sc);
    if (!ok) return false;
  }
  return true;
}

val *eval_comprehension(elab *E, const tl_ast_expr *x) {
  if (x->kind == TL_AST_SETCOMP) {
    err(E, x->loc, "set comprehensions are not supported at compile time; use a list");
    return NULL;
  }
  val_vec items = {0};
  val *r = NULL;
  if (run_clauses(E, x, 0, &items)) {
    if (x->kind == TL_AST_DICTCOMP) {
      int n = (int)(items.len / 2);
      r = mk_dict(E, n);
      if (r) {
        r->u.dict.n = n;
        for (int i = 0; i < n; i++) {
          r->u.dict.keys[i] = items.data[2 * i];
          r->u.dict.vals[i] = items.data[2 * i + 1];
          r->u.dict.klocs[i] = x->u.comp.elt->loc;
          r->u.dict.vlocs[i] = x->u.comp.value->loc;
        }
      }
    } else {
      r = mk_tuple(E, (int)items.len, x->kind == TL_AST_LISTCOMP);
      for (size_t i = 0; r && i < items.len; i++) r->u.tup.items[i] = items.data[i];
    }
  }
  tl_vec_free(&items);
  return r;
}

/* ------------------------------------------------------------ f-strings */

/* Python's str() (repr when repr) of a constant into sb; false when v has
 * no compile-time text. */
static bool py_str(elab *E, tl_strbuf *sb, const val *v, bool repr) {
  switch (v->k) {
  case V_NONE: tl_strbuf_append(sb, "None"); return true;
  case V_BOOL: tl_strbuf_append(sb, v->u.b ? "True" : "False"); return true;
  case V_INT: tl_strbuf_printf(sb, "%lld", (long long)v->u.i); return true;
  case V_FLOAT: tl_ast_print_float(sb, v->u.f); return true;
  case V_STR:
    if (repr) tl_strbuf_printf(sb, "'%s'", v->u.s);
    else tl_strbuf_append(sb, v->u.s);
    return true;
  case V_DTYPE: tl_strbuf_append(sb, tl_dtype_name(v->u.dt)); return true;
  case V_TUPLE:
    tl_strbuf_append(sb, v->is_list ? "[" : "(");
    for (int i = 0; i < v->u.tup.n; i++) {
      if (i) tl_strbuf_append(sb, ", ");
      if (!py_str(E, sb, v->u.tup.items[i], true)) return false;
    }
    tl_strbuf_append(sb, v->is_list ? "]" : v->u.tup.n == 1 ? ",)" : ")");
    return true;
  default: return false;
  }
}

/* A field with a format spec such as "5d", ".3f", ">8", "x", ".2e". */
static bool format_spec(elab *E, tl_strbuf *sb, const val *v, const char *spec, tl_loc loc) {
  size_t n = strlen(spec);
  char conv = n ? spec[n - 1] : 0;
  bool ok_flags = strspn(spec, "0123456789.+- #") >= (n ? n - 1 : 0);
  char fmt[64];
  if (ok_flags && n < 40 && strchr("dxXo", conv) && conv && (v->k == V_INT || v->k == V_BOOL)) {
    snprintf(fmt, sizeof fmt, "%%%.*sll%c", (int)(n - 1), spec, conv);
    tl_strbuf_printf(sb, fmt, (long long)as_i(v));
    return true;
  }
  if (ok_flags && n < 40 && conv && strchr("eEfFgG%", conv) && is_num(v)) {
    double x = as_f(v) * (conv == '%' ? 100.0 : 1.0);
    snprintf(fmt, sizeof fmt, "%%%.*s%c", (int)(n - 1), spec, conv == '%' ? 'f' : conv);
    tl_strbuf_printf(sb, fmt, x);
    if (conv == '%') tl_strbuf_append(sb, "%");
    return true;
  }
  err(E, loc, "f-string format spec '%s' is not supported at compile time", spec);
  return false;
}

val *eval_fstring(elab *E, const tl_ast_expr *x) {
  tl_strbuf sb = {0};
  bool ok = true;
  for (int i = 0; ok && i < x->u.list.n; i++) {
    const tl_ast_expr *part = x->u.list.items[i];
    if (part->kind == TL_AST_STR) {
      tl_strbuf_append(&sb, part->u.str);
      continue;
    }
    val *v = eval(E, part->u.fmt.value);
    if (!v) {
      ok = false;
      break;
    }
    const char *spec = NULL;
    if (part->u.fmt.spec) {
      val *sv = eval_fstring(E, part->u.fmt.spec);
      if (!sv) {
        ok = false;
        break;
      }
      spec = sv->u.s;
    }
    if (spec && *spec) {
      ok = format_spec(E, &sb, v, spec, part->loc);
    } else if (!py_str(E, &sb, v, part->u.fmt.conversion == 'r')) {
      err_val(E, part->u.fmt.value->loc, v, "%s has no compile-time text for an f-string", describe(E, v));
      ok = false;
    }
  }
  val *r = ok && !sb.oom ? mk_str(E, sb.data ? sb.data : "") : NULL;
  if (ok && sb.oom) oom(E);
  tl_strbuf_free(&sb);
  return r;
}

/* ------------------------------------------------------------ assert, is, in */

bool elab_assert(elab *E, const tl_ast_stmt *s) {
  val *c = eval(E, s->u.assert_.test);
  bool t;
  if (!c) return false;
  if (c->k == V_OPAQUE) return true; /* a check of host values: host code, not run */
  if (is_ir(c) || !truthy(c, &t)) {
    err_val(E, s->u.assert_.test->loc, c, "an assert needs a compile-time condition, got %s", describe(E, c));
    return false;
  }
  if (t) return true;
  tl_strbuf sb = {0};
  if (s->u.assert_.msg) {
    val *m = eval(E, s->u.assert_.msg);
    if (!m) return false;
    if (!py_str(E, &sb, m, false)) tl_strbuf_append(&sb, describe(E, m));
  }
  err(E, s->loc, "assertion failed%s%s", sb.len ? ": " : "", sb.data && !sb.oom ? sb.data : "");
  tl_strbuf_free(&sb);
  return false;
}

val *py_identity_or_membership(elab *E, const char *op, val *a, val *b, tl_loc loc) {
  bool neg = !strcmp(op, "is not") || !strcmp(op, "not in");
  bool r;
  if (!strcmp(op, "is") || !strcmp(op, "is not")) {
    if (is_ir(a) || is_ir(b)) r = false; /* an expression is never None/True/False */
    else if (a->k == V_NONE || b->k == V_NONE) r = a->k == b->k;
    else r = a == b || const_equal(a, b, 0);
  } else {
    if (b->k == V_STR && a->k == V_STR) {
      r = strstr(b->u.s, a->u.s) != NULL;
    } else {
      int n = 0;
      val **items = seq_items(E, b, loc, &n);
      if (!items) return NULL;
      r = false;
      for (int i = 0; i < n && !r; i++) r = const_equal(a, items[i], 0);
    }
  }
  return mk_bool(E, r != neg);
}

/* ------------------------------------------------------------ builtins */

/* range(...) of constants as a list; zip, enumerate, list, tuple,
 * isinstance.  NULL with *handled false when fn is none of them. */
val *call_py_builtin(elab *E, const char *fn, val **a, int n, const tl_ast_expr *x, bool *handled) {
  *handled = true;
  if (!strcmp(fn, "range")) {
    if (!check_arity(E, x, fn, 1, 3)) return NULL;
    int64_t v[3] = {0, 0, 1};
    for (int i = 0; i < n; i++) {
      if (a[i]->k != V_INT && a[i]->k != V_BOOL) {
        err_val(E, x->u.call.args[i]->loc, a[i],
                "range() outside a for loop needs integer "
                "constants, got %s",
                describe(E, a[i]));
        return NULL;
      }
      v[n == 1 ? 1 : i] = as_i(a[i]);
    }
    if (v[2] == 0) {
      err(E, x->loc, "range() step must not be zero");
      return NULL;
    }
    int64_t cnt = v[2] > 0 ? (v[1] > v[0] ? (v[1] - v[0] + v[2] - 1) / v[2] : 0)
                           : (v[0] > v[1] ? (v[0] - v[1] - v[2] - 1) / -v[2] : 0);
    if (cnt > MAX_CONST_LEN) {
      err(E, x->loc, "range() of %lld items is too long at compile time", (long long)cnt);
      return NULL;
    }
    val *r = mk_tuple(E, (int)cnt, true);
    for (int64_t i = 0; r && i < cnt; i++)
      if (!(r->u.tup.items[i] = mk_int(E, v[0] + i * v[2]))) return NULL;
    return r;
  }
  if (!strcmp(fn, "zip") || !strcmp(fn, "enumerate")) {
    bool en = fn[0] == 'e';
    if (!check_arity(E, x, fn, 1, en ? 1 : -1)) return NULL;
    int len = -1;
    val ***its = talloc(E, sizeof(val **) * (size_t)n);
    int *lens = talloc(E, sizeof(int) * (size_t)n);
    if (!its || !lens) return NULL;
    for (int i = 0; i < n; i++) {
      if (!(its[i] = seq_items(E, a[i], x->u.call.args[i]->loc, &lens[i]))) return NULL;
      if (len < 0 || lens[i] < len) len = lens[i];
    }
    val *r = mk_tuple(E, len, true);
    for (int k = 0; r && k < len; k++) {
      val *t = mk_tuple(E, en ? 2 : n, false);
      if (!t) return NULL;
      if (en) {
        if (!(t->u.tup.items[0] = mk_int(E, k))) return NULL;
        t->u.tup.items[1] = its[0][k];
      } else {
        for (int i = 0; i < n; i++) t->u.tup.items[i] = its[i][k];
      }
      r->u.tup.items[k] = t;
    }
    return r;
  }
  if (!strcmp(fn, "sum")) { /* sum(iterable, start=0): Python's left fold of + */
    if (!check_arity(E, x, fn, 1, 2)) return NULL;
    int len = 0;
    val **items = seq_items(E, a[0], x->u.call.args[0]->loc, &len);
    val *acc = n == 2 ? a[1] : mk_int(E, 0);
    for (int i = 0; items && acc && i < len; i++) acc = binop(E, "+", acc, items[i], x->loc);
    return items ? acc : NULL;
  }
  if (!strcmp(fn, "list") || !strcmp(fn, "tuple")) {
    if (!check_arity(E, x, fn, 0, 1)) return NULL;
    int len = 0;
    val **items = n ? seq_items(E, a[0], x->u.call.args[0]->loc, &len) : NULL;
    if (n && !items) return NULL;
    val *r = mk_tuple(E, len, fn[0] == 'l');
    for (int i = 0; r && i < len; i++) r->u.tup.items[i] = items[i];
    return r;
  }
  if (!strcmp(fn, "isinstance")) {
    if (!check_arity(E, x, fn, 2, 2)) return NULL;
    int nt = a[1]->k == V_TUPLE ? a[1]->u.tup.n : 1;
    val *const *ts = a[1]->k == V_TUPLE ? a[1]->u.tup.items : &a[1];
    for (int i = 0; i < nt; i++) {
      if (ts[i]->k != V_FUNC || !ts[i]->builtin) {
        err_val(E, x->u.call.args[1]->loc, ts[i],
                "isinstance() needs int, float, bool, str, "
                "list, tuple or dict, got %s",
                describe(E, ts[i]));
        return NULL;
      }
      const char *tn = ts[i]->u.fname;
      const char *vt = type_name(a[0]);
      if (!strcmp(tn, vt) || (!strcmp(tn, "int") && a[0]->k == V_BOOL) ||
          (!strcmp(tn, "float") && a[0]->k == V_EXPR && tl_dtype_is_float(a[0]->u.e->dtype)) ||
          (!strcmp(tn, "int") && a[0]->k == V_EXPR && !tl_dtype_is_float(a[0]->u.e->dtype)))
        return mk_bool(E, true);
    }
    return mk_bool(E, false);
  }
  if (!strcmp(fn, "str")) {
    tl_strbuf sb = {0};
    if (!check_arity(E, x, fn, 1, 1)) return NULL;
    bool ok = py_str(E, &sb, a[0], false);
    val *r = ok && !sb.oom ? mk_str(E, sb.data ? sb.data : "") : NULL;
    tl_strbuf_free(&sb);
    if (!ok) err_val(E, x->u.call.args[0]->loc, a[0], "str() of %s is not known at compile time", describe(E, a[0]));
    return r;
  }
  if (!strcmp(fn, "dict")) { /* dict() or dict(pairs) */
    if (!check_arity(E, x, fn, 0, 1)) return NULL;
    int len = 0;
    val **items = n ? seq_items(E, a[0], x->u.call.args[0]->loc, &len) : NULL;
    if (n && !items) return NULL;
    val *d = mk_dict(E, len);
    if (!d) return NULL;
    for (int i = 0; i < len; i++) {
      val *p = items[i];
      if (p->k != V_TUPLE || p->u.tup.n != 2) {
        err_val(E, x->u.call.args[0]->loc, p, "dict() needs (key, value) pairs, got %s", describe(E, p));
        return NULL;
      }
      int k = 0;
      while (k < d->u.dict.n && !const_equal(d->u.dict.keys[k], p->u.tup.items[0], 0)) k++;
      d->u.dict.keys[k] = p->u.tup.items[0];
      d->u.dict.vals[k] = p->u.tup.items[1];
      d->u.dict.klocs[k] = d->u.dict.vlocs[k] = x->loc;
      if (k == d->u.dict.n) d->u.dict.n++;
    }
    return d;
  }
  *handled = false;
  return NULL;
}

/* ------------------------------------------------------------ functions */

val *mk_pyfunc(elab *E, const tl_ast_stmt *def, const tl_ast_expr *lambda) {
  val *v = mk_val(E, (val){.k = V_PYFUNC, .u.py = {def, lambda, E->sc, def_is_macro(E, def)}});
  if (!v) return NULL;
  for (scope *s = E->sc; s; s = s->parent) s->captured = true;
  return v;
}

static bool run_helper_block(elab *E, const tl_ast_block *b, const char *fname, val **ret);

/* One statement of a compile-time helper; *ret set by 'return'. */
static bool run_helper_stmt(elab *E, const tl_ast_stmt *s, const char *fname, val **ret) {
  stmt_vec none = {0};
  bool ok = true, returned = false;
  switch (s->kind) {
  case TL_AST_RETURN: *ret = s->u.ret ? eval(E, s->u.ret) : mk(E, V_NONE); return *ret != NULL;
  case TL_AST_IF: {
    val *c = eval(E, s->u.ifs.test);
    bool t;
    if (!c) return false;
    if (is_ir(c) || !truthy(c, &t)) {
      err_val(E, s->u.ifs.test->loc, c,
              "a condition in '%s' must be a compile-time constant, "
              "got %s",
              fname, describe(E, c));
      return false;
    }
    return run_helper_block(E, t ? &s->u.ifs.body : &s->u.ifs.orelse, fname, ret);
  }
  case TL_AST_FOR: {
    val *it = eval(E, s->u.loop.iter);
    int n = 0;
    val **items = it ? seq_items(E, it, s->u.loop.iter->loc, &n) : NULL;
    if (!items) return false;
    for (int i = 0; ok && i < n && !*ret; i++) {
      ok = assign_target(E, s->u.loop.target, items[i], s->u.loop.iter->loc, &none) &&
           run_helper_block(E, &s->u.loop.body, fname, ret);
    }
    break;
  }
  case TL_AST_EXPR_STMT:
    if (s->u.expr->kind == TL_AST_STR) break; /* a docstring */
    if (E->pf && E->stmt_out && t_callee(E, s->u.expr)) {
      /* in a prim_func body a helper's tile ops and calls emit IR, as in TileLang */
      ok = elab_expr_stmt(E, s, E->stmt_out);
    } else {
      ok = eval(E, s->u.expr) != NULL;
    }
    break;
  case TL_AST_PASS: break;
  case TL_AST_IMPORT: do_import(E, s); break; /* bound in the helper's scope */
  case TL_AST_ASSIGN:
  case TL_AST_ANNASSIGN:
  case TL_AST_AUGASSIGN:
  case TL_AST_ASSERT:
  case TL_AST_DEF: /* a helper, a macro or a @T.prim_func (a factory's kernel built by a nested function) */
    ok = factory_stmt(E, s, NULL, NULL, NULL, &returned);
    break;
  default: err(E, s->loc, "this statement is not supported in '%s' at compile time", fname); ok = false;
  }
  tl_vec_free(&none);
  return ok;
}

static bool run_helper_block(elab *E, const tl_ast_block *b, const char *fname, val **ret) {
  for (int i = 0; i < b->n && !*ret; i++)
    if (!run_helper_stmt(E, b->stmts[i], fname, ret)) return false;
  return true;
}

/* The evaluated arguments of a call: positional values, then keyword
 * names (interned) and values; *args and **kwargs are expanded. */
typedef struct call_args {
  TL_VEC(val *) pos;
  TL_VEC(const char *) kwn;
  TL_VEC(val *) kwv;
} call_args;

static bool eval_call_args(elab *E, const tl_ast_expr *x, call_args *ca) {
  for (int i = 0; i < x->u.call.nargs; i++) {
    const tl_ast_expr *a = x->u.call.args[i];
    val *v = eval(E, a->kind == TL_AST_STARRED ? a->u.un.x : a);
    if (!v) return false;
    if (a->kind != TL_AST_STARRED) {
      if (!tl_vec_push(&ca->pos, v)) return oom(E), false;
      continue;
    }
    int n = 0;
    val **items = seq_items(E, v, a->loc, &n);
    if (!items) return false;
    for (int k = 0; k < n; k++)
      if (!tl_vec_push(&ca->pos, items[k])) return oom(E), false;
  }
  for (int i = 0; i < x->u.call.nkw; i++) {
    const tl_ast_keyword *kw = &x->u.call.kw[i];
    val *v = eval(E, kw->value);
    if (!v) return false;
    if (kw->name) {
      if (!tl_vec_push(&ca->kwn, kw->name) || !tl_vec_push(&ca->kwv, v)) return oom(E), false;
      continue;
    }
    if (v->k != V_DICT) {
      err_val(E, kw->value->loc, v, "'**' needs a dict at compile time, got %s", describe(E, v));
      return false;
    }
    for (int k = 0; k < v->u.dict.n; k++) {
      val *key = v->u.dict.keys[k];
      if (key->k != V_STR) {
        err_val(E, kw->value->loc, key, "keywords must be strings, got %s", describe(E, key));
        return false;
      }
      const char *nm = tl_intern_str(&E->m->names, key->u.s);
      if (!nm || !tl_vec_push(&ca->kwn, nm) || !tl_vec_push(&ca->kwv, v->u.dict.vals[k])) return oom(E), false;
    }
  }
  return true;
}

/* A dict of the keyword arguments not taken by a parameter (**kwargs). */
static val *extra_kwargs(elab *E, const call_args *ca, const bool *used) {
  int n = 0;
  for (size_t i = 0; i < ca->kwn.len; i++) n += !used[i];
  val *d = mk_dict(E, n);
  if (!d) return NULL;
  for (size_t i = 0; i < ca->kwn.len; i++)
    if (!used[i]) {
      int k = d->u.dict.n++;
      if (!(d->u.dict.keys[k] = mk_str(E, ca->kwn.data[i]))) return NULL;
      d->u.dict.vals[k] = ca->kwv.data[i];
    }
  return d;
}

/* Binds the parameters of a compile-time function in the current scope
 * from the call's evaluated arguments; defaults are evaluated here. */
static bool bind_call_params(elab *E, int np, const tl_ast_param *ps, const call_args *ca, tl_loc loc,
                             const char *fname) {
  bool *used = talloc(E, sizeof(bool) * (ca->kwn.len + 1));
  if (!used) return false;
  size_t k = 0, nargs = ca->pos.len;
  const tl_ast_param *kwarg = NULL;
  for (int i = 0; i < np; i++) {
    const tl_ast_param *p = &ps[i];
    val *v = NULL;
    if (p->pkind == TL_AST_PARAM_VARARG) {
      v = mk_tuple(E, (int)(nargs - k), false);
      for (int j = 0; v && k < nargs; j++) v->u.tup.items[j] = ca->pos.data[k++];
    } else if (p->pkind == TL_AST_PARAM_KWARG) {
      kwarg = p; /* bound after the others took their keywords */
      continue;
    } else {
      size_t kw = ca->kwn.len;
      for (size_t j = 0; j < ca->kwn.len && kw == ca->kwn.len; j++)
        if (ca->kwn.data[j] == p->name) kw = j;
      if (p->pkind != TL_AST_PARAM_KWONLY && k < nargs) v = ca->pos.data[k++];
      else if (kw < ca->kwn.len) v = ca->kwv.data[kw], used[kw] = true;
      else if (p->default_value) v = eval(E, p->default_value);
      else {
        err(E, loc, "%s() missing argument '%s'", fname, p->name);
        return false;
      }
    }
    if (!v || !bind(E, E->sc, p->name, v, p->loc, BK_CONST)) return false;
  }
  if (k < nargs) {
    err(E, loc, "%s() takes %zu positional arguments, got %zu", fname, k, nargs);
    return false;
  }
  if (kwarg) {
    val *d = extra_kwargs(E, ca, used);
    return d && bind(E, E->sc, kwarg->name, d, kwarg->loc, BK_CONST);
  }
  for (size_t i = 0; i < ca->kwn.len; i++)
    if (!used[i]) {
      err(E, loc, "%s() got an unexpected keyword argument '%s'", fname, ca->kwn.data[i]);
      return false;
    }
  return true;
}

/* A parameter of a @T.macro bound to v: an IR expression other than a
 * variable (a load, an arithmetic expression) gets a let, so it is
 * evaluated once where the macro is called, as TileLang binds it. */
static bool bind_macro_param(elab *E, const tl_ast_param *p, val *v) {
  bool let = (v->k == V_EXPR && v->u.e->kind != TL_EXPR_VAR) || v->k == V_BUFREF;
  if (!let) return bind(E, E->sc, p->name, v, p->loc, BK_CONST);
  tl_ast_expr name = {.kind = TL_AST_NAME, .loc = p->loc, .u.name = p->name};
  return assign_target(E, &name, v, p->loc, E->stmt_out);
}

/* T.Ref / T.Var parameters (TileLang passes a load by reference) are not
 * given that meaning here: a located error instead of a copy. */
static bool macro_ref_params(elab *E, int np, const tl_ast_param *ps, const char *fname) {
  for (int i = 0; i < np; i++) {
    const tl_ast_expr *a = ps[i].annotation;
    const char *n = !a ? NULL : a->kind == TL_AST_ATTR ? a->u.attr.name : a->kind == TL_AST_NAME ? a->u.name : NULL;
    if (n && (!strcmp(n, "Ref") || !strcmp(n, "Var"))) {
      err(E, a->loc,
          "T.macro '%s': parameter '%s' annotated T.%s (passed by reference) is not supported; "
          "pass the buffer and its indices",
          fname, ps[i].name, n);
      return false;
    }
  }
  return true;
}

/* The body of macro def inlined into E->stmt_out; *ret its value. */
static bool run_macro_body(elab *E, const tl_ast_stmt *def, val **ret) {
  const tl_ast_block *b = &def->u.def.body;
  int n = b->n;
  bool has_ret = n && b->stmts[n - 1]->kind == TL_AST_RETURN;
  tl_ast_block head = {has_ret ? n - 1 : n, b->stmts};
  E->macro_depth++;
  E->clashing_names = true;
  bool ok = elab_block(E, &head, E->stmt_out);
  E->macro_depth--;
  if (!ok) return false;
  const tl_ast_expr *rx = has_ret ? b->stmts[n - 1]->u.ret : NULL;
  *ret = rx ? eval(E, rx) : mk(E, V_NONE);
  return *ret != NULL;
}

/* Runs fn on the bound arguments ca (call_pyfunc's contract). */
static val *apply_pyfunc(elab *E, val *fn, call_args *ca, tl_loc loc) {
  const tl_ast_stmt *def = fn->u.py.def;
  const char *fname = def ? def->u.def.name : "<lambda>";
  int np = def ? def->u.def.nparams : fn->u.py.lambda->u.lambda.nparams;
  const tl_ast_param *ps = def ? def->u.def.params : fn->u.py.lambda->u.lambda.params;
  bool macro = fn->u.py.macro;
  val *ret = NULL;
  E->depth++;
  scope *saved = E->sc;
  int saved_helper = E->helper_depth;
  E->helper_depth = macro ? 0 : saved_helper + 1;
  E->sc = fn->u.py.closure;
  scope *sc = push_scope(E, macro); /* a macro's names are IR names of the prim_func */
  if (sc) {
    bool ok = bind_call_params(E, np, ps, ca, loc, fname);
    if (ok && macro) {
      for (int i = 0; ok && i < np; i++) {
        binding *b = tl_map_get(&sc->map, ps[i].name, NULL);
        if (b && b->v) {
          tl_map_remove(&sc->map, ps[i].name);
          ok = bind_macro_param(E, &ps[i], b->v);
        }
      }
      ok = ok && run_macro_body(E, def, &ret);
    } else if (ok && def) {
      ok = run_helper_block(E, &def->u.def.body, fname, &ret);
      if (ok && !ret) ret = mk(E, V_NONE);
    } else if (ok) {
      ret = eval(E, fn->u.py.lambda->u.lambda.body);
    }
    if (!ok) ret = NULL;
    pop_scope(E, sc);
  }
  E->sc = saved;
  E->helper_depth = saved_helper;
  E->depth--;
  return ret;
}

val *tl_el_call_pyfunc_values(elab *E, val *fn, int n, val **args, tl_loc loc) {
  if (fn->k != V_PYFUNC || fn->u.py.macro) {
    err_val(E, loc, fn, "expected a function or lambda, got %s", describe(E, fn));
    return NULL;
  }
  if (E->depth >= MAX_DEPTH) {
    err(E, loc, "compile-time calls nested too deeply (limit %d)", MAX_DEPTH);
    return NULL;
  }
  call_args ca = {0};
  val *ret = NULL;
  for (int i = 0; i < n; i++)
    if (!tl_vec_push(&ca.pos, args[i])) goto done;
  ret = apply_pyfunc(E, fn, &ca, loc);
done:
  if (!ret && E->nerr == 0) oom(E);
  tl_vec_free(&ca.pos);
  return ret;
}

val *call_pyfunc(elab *E, val *fn, const tl_ast_expr *x) {
  const tl_ast_stmt *def = fn->u.py.def;
  const char *fname = def ? def->u.def.name : "<lambda>";
  int np = def ? def->u.def.nparams : fn->u.py.lambda->u.lambda.nparams;
  const tl_ast_param *ps = def ? def->u.def.params : fn->u.py.lambda->u.lambda.params;
  bool macro = fn->u.py.macro;
  if (E->depth >= MAX_DEPTH) {
    err(E, x->loc, "compile-time calls nested too deeply (limit %d)", MAX_DEPTH);
    return NULL;
  }
  if (macro && !(E->pf && E->stmt_out)) {
    err(E, x->loc, "T.macro '%s' can only be called inside a @T.prim_func body", fname);
    return NULL;
  }
  if (macro && !macro_ref_params(E, np, ps, fname)) return NULL;
  call_args ca = {0};
  val *ret = NULL;
  int nerr = E->nerr;
  if (eval_call_args(E, x, &ca)) ret = apply_pyfunc(E, fn, &ca, x->loc); /* args in the caller's scope */
  if (!ret && E->nerr > nerr && def && !E->quiet)
    tl_note(E->d, x->loc, "in %s '%s', called here", macro ? "T.macro" : "compile-time function", fname);
  tl_vec_free(&ca.pos);
  tl_vec_free(&ca.kwn);
  tl_vec_free(&ca.kwv);
  return ret;
}

val *eval_define_text(elab *E, const char *name, const char *text) {
  const char *src = tl_arena_printf(&E->m->arena, "%s\n", text);
  tl_ast_module mod;
  if (!src) return oom(E);
  if (!tl_parse_python(&E->m->arena, &E->m->names, E->d, src, strlen(src), "<command line>", &mod)) {
    E->nerr++;
    return NULL;
  }
  if (mod.body.n != 1 || mod.body.stmts[0]->kind != TL_AST_EXPR_STMT) {
    err(E, (tl_loc){"<command line>", 0, 0}, "-D %s=%s: expected one value", name, text);
    return NULL;
  }
  scope *saved = E->sc;
  if (E->module_scope) E->sc = E->module_scope;
  val *v = eval(E, mod.body.stmts[0]->u.expr);
  E->sc = saved;
  return v;
}

val *itertools_product(elab *E, val **a, const tl_ast_expr *x) {
  int n = x->u.call.nargs;
  val ***its = talloc(E, sizeof(val **) * (size_t)(n + 1));
  int *lens = talloc(E, sizeof(int) * (size_t)(n + 1));
  if (!its || !lens) return NULL;
  int64_t total = 1;
  for (int i = 0; i < n; i++) {
    if (!(its[i] = seq_items(E, a[i], x->u.call.args[i]->loc, &lens[i]))) return NULL;
    total *= lens[i];
    if (total > MAX_CONST_LEN) {
      err(E, x->loc, "itertools.product of more than %d items at compile time", MAX_CONST_LEN);
      return NULL;
    }
  }
  val *r = mk_tuple(E, (int)total, true);
  for (int64_t k = 0; r && k < total; k++) {
    val *t = mk_tuple(E, n, false);
    if (!t) return NULL;
    int64_t rem = k;
    for (int i = n - 1; i >= 0; i--) { /* the last sequence varies fastest */
      t->u.tup.items[i] = its[i][rem % lens[i]];
      rem /= lens[i];
    }
    r->u.tup.items[k] = t;
  }
  return r;
}
