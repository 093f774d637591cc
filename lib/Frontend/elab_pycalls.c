/* Elaborator, compile-time Python calls that TileLang's autotune config
 * helpers use (elab_autotune.c evaluates them; see elaborate.c for the
 * algorithm): the list methods append / extend, the dict methods keys /
 * values / items / get, dict(mapping_or_pairs, key=value, **mapping), and
 * itertools.product(*seqs), e.g.
 *     params = dict(block_M=[64, 128], threads=[128, 256])
 *     return [dict(zip(params, v)) for v in itertools.product(*params.values())]
 *     configs = []; for m in ...: configs.append({"block_M": m})
 * Algorithm: eval_call (elab_expr.c) offers obj.NAME(...) calls and calls
 * with keywords or star arguments here first; what is not one of these
 * falls through unchanged.  A list is a value shared by reference (as in
 * Python), so append/extend grow it in place; keys/values/items give
 * lists. */
#include "Frontend/elab_impl.h"

typedef TL_VEC(val *) val_list;

static const char *const kMethods[] = {"append", "extend", "keys", "values", "items", "get", NULL};

/* The items of a list or tuple value; NULL (error at loc) otherwise. */
static val **seq_of(elab *E, val *v, tl_loc loc, int *n) {
  if (v->k == V_TUPLE) {
    *n = v->u.tup.n;
    return v->u.tup.n ? v->u.tup.items : talloc(E, sizeof(val *));
  }
  if (v->k == V_DICT) {
    *n = v->u.dict.n;
    return v->u.dict.n ? v->u.dict.keys : talloc(E, sizeof(val *));
  }
  err_val(E, loc, v, "expected a list, tuple or dict at compile time, got %s", describe(E, v));
  return NULL;
}

/* Appends n items to list l in place. */
static bool grow(elab *E, val *l, val **items, int n, tl_loc loc) {
  if (l->u.tup.n + n > MAX_CONST_LEN) {
    err(E, loc, "list too long at compile time (more than %d items)", MAX_CONST_LEN);
    return false;
  }
  val **a = talloc(E, sizeof(val *) * (size_t)(l->u.tup.n + n + 1));
  if (!a) return false;
  if (l->u.tup.n) memcpy(a, l->u.tup.items, sizeof(val *) * (size_t)l->u.tup.n);
  if (n) memcpy(a + l->u.tup.n, items, sizeof(val *) * (size_t)n);
  l->u.tup.items = a;
  l->u.tup.n += n;
  return true;
}

/* d[key] := v (replacing an equal key). */
static void dict_set(val *d, val *key, val *v, tl_loc loc) {
  int k = 0;
  while (k < d->u.dict.n && !const_equal(d->u.dict.keys[k], key, 0)) k++;
  d->u.dict.keys[k] = key;
  d->u.dict.vals[k] = v;
  d->u.dict.klocs[k] = d->u.dict.vlocs[k] = loc;
  if (k == d->u.dict.n) d->u.dict.n++;
}

static val *dict_method(elab *E, const tl_ast_expr *x, val *d, const char *name) {
  int n = d->u.dict.n;
  if (!strcmp(name, "get")) {
    if (!check_arity(E, x, "get", 1, 2)) return NULL;
    val *key = eval(E, x->u.call.args[0]);
    if (!key) return NULL;
    for (int i = 0; i < n; i++)
      if (const_equal(d->u.dict.keys[i], key, 0)) return d->u.dict.vals[i];
    return x->u.call.nargs == 2 ? eval(E, x->u.call.args[1]) : mk(E, V_NONE);
  }
  if (!check_arity(E, x, name, 0, 0)) return NULL;
  val *r = mk_tuple(E, n, true);
  for (int i = 0; r && i < n; i++) {
    if (!strcmp(name, "keys")) r->u.tup.items[i] = d->u.dict.keys[i];
    else if (!strcmp(name, "values")) r->u.tup.items[i] = d->u.dict.vals[i];
    else {
      val *t = mk_tuple(E, 2, false);
      if (!t) return NULL;
      t->u.tup.items[0] = d->u.dict.keys[i];
      t->u.tup.items[1] = d->u.dict.vals[i];
      r->u.tup.items[i] = t;
    }
  }
  return r;
}

/* Whether evaluating x twice is harmless (a name, attribute or subscript
 * chain without calls): a method call on anything else falls through. */
static bool pure_path(const tl_ast_expr *x, int depth) {
  if (depth > MAX_DEPTH) return false;
  switch (x->kind) {
  case TL_AST_NAME: return true;
  case TL_AST_ATTR: return pure_path(x->u.attr.value, depth + 1);
  case TL_AST_SUBSCRIPT:
    for (int i = 0; i < x->u.sub.n; i++)
      if (x->u.sub.items[i]->kind != TL_AST_INT && x->u.sub.items[i]->kind != TL_AST_STR) return false;
    return pure_path(x->u.sub.value, depth + 1);
  default: return false;
  }
}

val *py_method_call(elab *E, const tl_ast_expr *x, bool *handled) {
  const tl_ast_expr *f = x->u.call.func;
  *handled = false;
  if (f->kind != TL_AST_ATTR || !in_list(kMethods, f->u.attr.name) || E->pf || !pure_path(f->u.attr.value, 0))
    return NULL;
  for (int i = 0; i < x->u.call.nargs; i++)
    if (x->u.call.args[i]->kind == TL_AST_STARRED) return NULL;
  val *obj = eval(E, f->u.attr.value);
  *handled = true;
  if (!obj) return NULL;
  const char *name = f->u.attr.name;
  bool list_method = !strcmp(name, "append") || !strcmp(name, "extend");
  if (obj->k == V_DICT && !list_method) {
    if (!check_kws(E, x, name, NULL)) return NULL;
    return dict_method(E, x, obj, name);
  }
  if (obj->k != V_TUPLE || !obj->is_list || !list_method) {
    *handled = false; /* another object: the usual attribute lookup reports it */
    return NULL;
  }
  if (!check_kws(E, x, name, NULL) || !check_arity(E, x, name, 1, 1)) return NULL;
  val *v = eval(E, x->u.call.args[0]);
  if (!v) return NULL;
  int n = 1;
  val **items = name[0] == 'a' ? &v : seq_of(E, v, x->u.call.args[0]->loc, &n);
  return items && grow(E, obj, items, n, x->loc) ? mk(E, V_NONE) : NULL;
}

/* dict(mapping or pairs, key=value, **mapping). */
static val *dict_call(elab *E, const tl_ast_expr *x) {
  if (!check_arity(E, x, "dict", 0, 1)) return NULL;
  int cap = x->u.call.nkw + 1;
  val *first = x->u.call.nargs ? eval(E, x->u.call.args[0]) : NULL;
  val **maps = talloc(E, sizeof(val *) * (size_t)(x->u.call.nkw + 1));
  if ((x->u.call.nargs && !first) || !maps) return NULL;
  if (first) cap += first->k == V_DICT ? first->u.dict.n : first->k == V_TUPLE ? first->u.tup.n : 0;
  for (int i = 0; i < x->u.call.nkw; i++) {
    if (x->u.call.kw[i].name) continue;
    if (!(maps[i] = eval(E, x->u.call.kw[i].value))) return NULL;
    if (maps[i]->k != V_DICT) {
      err_val(E, x->u.call.kw[i].value->loc, maps[i], "dict(**m) needs a dict, got %s", describe(E, maps[i]));
      return NULL;
    }
    cap += maps[i]->u.dict.n;
  }
  val *d = mk_dict(E, cap);
  if (!d) return NULL;
  if (first && first->k == V_DICT) {
    for (int i = 0; i < first->u.dict.n; i++) dict_set(d, first->u.dict.keys[i], first->u.dict.vals[i], x->loc);
  } else if (first) {
    int n = 0;
    val **items = seq_of(E, first, x->u.call.args[0]->loc, &n);
    if (!items) return NULL;
    for (int i = 0; i < n; i++) {
      if (items[i]->k != V_TUPLE || items[i]->u.tup.n != 2) {
        err_val(E, x->u.call.args[0]->loc, items[i], "dict() needs (key, value) pairs, got %s", describe(E, items[i]));
        return NULL;
      }
      dict_set(d, items[i]->u.tup.items[0], items[i]->u.tup.items[1], x->loc);
    }
  }
  for (int i = 0; i < x->u.call.nkw; i++) {
    const tl_ast_keyword *k = &x->u.call.kw[i];
    if (!k->name) {
      for (int j = 0; j < maps[i]->u.dict.n; j++) dict_set(d, maps[i]->u.dict.keys[j], maps[i]->u.dict.vals[j], k->loc);
      continue;
    }
    val *key = mk_str(E, k->name), *v = eval(E, k->value);
    if (!key || !v) return NULL;
    dict_set(d, key, v, k->loc);
  }
  return d;
}

/* itertools.product with *seq arguments: the arguments spread out. */
static val *product_star(elab *E, const tl_ast_expr *x) {
  if (x->u.call.nkw) {
    err(E, x->u.call.kw[0].loc, "itertools.product takes no keyword arguments at compile time");
    return NULL;
  }
  val_list vals = {0};
  TL_VEC(tl_ast_expr *) where = {0};
  bool ok = true;
  for (int i = 0; ok && i < x->u.call.nargs; i++) {
    tl_ast_expr *a = x->u.call.args[i];
    bool star = a->kind == TL_AST_STARRED;
    val *v = eval(E, star ? a->u.un.x : a);
    int n = 1;
    val **items = !v ? NULL : star ? seq_of(E, v, a->loc, &n) : &v;
    ok = items != NULL;
    for (int j = 0; ok && j < n; j++) ok = tl_vec_push(&vals, items[j]) && tl_vec_push(&where, a);
    if (!ok && items) oom(E);
  }
  val *r = NULL;
  if (ok) {
    tl_ast_expr call = *x; /* itertools_product reads the count and each argument's location */
    call.u.call.nargs = (int)vals.len;
    call.u.call.args = where.data;
    r = itertools_product(E, vals.data ? vals.data : (val *[]){NULL}, &call);
  }
  tl_vec_free(&vals);
  tl_vec_free(&where);
  return r;
}

val *py_extra_call(elab *E, const tl_ast_expr *x, bool *handled) {
  *handled = false;
  if (E->pf) return NULL;
  bool star = false;
  for (int i = 0; i < x->u.call.nargs; i++) star |= x->u.call.args[i]->kind == TL_AST_STARRED;
  for (int i = 0; i < x->u.call.nkw; i++) star |= !x->u.call.kw[i].name;
  const tl_ast_expr *f = x->u.call.func;
  bool maybe_dict = f->kind == TL_AST_NAME && !strcmp(f->u.name, "dict") && x->u.call.nkw;
  bool maybe_product = star && pure_path(f, 0);
  if (!maybe_dict && !maybe_product) return NULL;
  val *fv = eval(E, f);
  *handled = true;
  if (!fv) return NULL;
  if (maybe_dict && fv->k == V_FUNC && fv->builtin && !strcmp(fv->u.fname, "dict")) return dict_call(E, x);
  if (star && fv->k == V_OPAQUE && !strcmp(fv->u.op.desc, "itertools.product")) return product_star(E, x);
  *handled = false;
  return NULL;
}
