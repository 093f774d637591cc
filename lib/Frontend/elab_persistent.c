/* T.Persistent, TileLang's persistent tile loop, for the elaborator's loops
 * (elab_stmt.c hands `for v0, ..., vn-1 in T.Persistent(...)` here):
 *
 *     for bx, by in T.Persistent([m_tiles, n_tiles], wave_size, block_id, group_size=8):
 *         body
 *
 * Meaning (TileLang's src/ir.cc PersistentFor): the tiles of the domain are
 * visited in grouped order -- the last dimension is cut into groups of
 * g = max(1, min(group_size, last extent)) columns, and the grouped domain is
 * (ceildiv(last, g), d0, ..., dn-2, g), row-major -- and block `index` takes
 * the tiles index, index + wave_size, index + 2 * wave_size, ... of it.
 * Elaborated into constructs that exist already:
 *
 *     for w in T.serial(ceildiv(padded, wave_size)):    padded = the grouped domain's size
 *         rem = w * wave_size + index                   (not bound: inlined)
 *         vn-1 = (rem // (d0 * ... * g)) * g + rem % g  (LET)
 *         vi = rem // (di+1 * ... * g) % di             (LET, i < n-1)
 *         if vn-1 < last extent:
 *             body
 *
 * TileLang also breaks out of the loop once rem passes the padded domain;
 * the guard is false there (vn-1 >= ceildiv(last, g) * g), so the break is
 * an optimisation this form does without. */
#include "Frontend/elab_impl.h"

#define MAX_PERSISTENT_DIMS 8

static tl_expr *bin(elab *E, tl_loc loc, tl_binop op, tl_expr *a, tl_expr *b) {
  return a && b ? chk(E, tl_ir_binary(E->m, loc, op, a, b)) : NULL;
}

/* The domain's extents (a list or tuple of integers); 0 after an error. */
static int persistent_domain(elab *E, const tl_ast_expr *x, tl_expr **dom) {
  val *v = eval(E, x);
  if (!v) return 0;
  if (v->k != V_TUPLE || v->u.tup.n < 1 || v->u.tup.n > MAX_PERSISTENT_DIMS) {
    err_val(E, x->loc, v, "T.Persistent: the domain must be a list of 1 to %d extents, got %s", MAX_PERSISTENT_DIMS,
            describe(E, v));
    return 0;
  }
  for (int i = 0; i < v->u.tup.n; i++)
    if (!(dom[i] = to_int_expr(E, v->u.tup.items[i], x->loc, "a T.Persistent extent"))) return 0;
  return v->u.tup.n;
}

/* A name for the wave loop's variable that nothing visible uses. */
static const char *wave_name(elab *E) {
  const char *cand = "w";
  for (int n = 1; n < 1000 && lookup(E, intern(E, cand), NULL); n++) cand = tprintf(E, "w_%d", n);
  return intern(E, cand);
}

/* Binds loop variable `name` to a LET of value (emitted into out). */
static bool bind_coord(elab *E, const tl_ast_expr *name, tl_expr *value, stmt_vec *out) {
  const char *ir = tl_el_loop_var_name(E, name->u.name, name->loc);
  if (!ir || !value) return false;
  tl_var *var = tl_ir_new_var(E->m, name->loc, ir, value->dtype, TL_VAR_LET);
  tl_stmt *s = var ? tl_ir_stmt(E->m, name->loc, TL_STMT_LET) : NULL;
  if (!s || !tl_vec_push(out, s)) return oom(E), false;
  s->u.let.var = var;
  s->u.let.value = value;
  val *vv = mk_expr(E, chk(E, tl_ir_var(E->m, name->loc, var)));
  return vv && bind(E, E->sc, name->u.name, vv, name->loc, BK_LOOP);
}

/* The arguments: domain extents into dom (their count into *n), wave size,
 * index and the clamped group size. */
static bool persistent_args(elab *E, const tl_ast_expr *it, tl_expr **dom, int *n, tl_expr **wave, tl_expr **index,
                            tl_expr **group) {
  static const char *const kws[] = {"domain", "wave_size", "index", "group_size", NULL};
  const char *fn = "T.Persistent";
  if (!check_kws(E, it, fn, kws) || !check_arity(E, it, fn, 0, 4)) return false;
  bool bad = false;
  const tl_ast_expr *a[4];
  for (int i = 0; i < 4; i++) a[i] = get_arg(E, it, i, kws[i], fn, &bad);
  if (bad) return false;
  for (int i = 0; i < 3; i++)
    if (!a[i]) {
      err(E, it->loc, "T.Persistent needs its '%s' argument", kws[i]);
      return false;
    }
  if (!(*n = persistent_domain(E, a[0], dom))) return false;
  *wave = eval_int(E, a[1], "the T.Persistent wave size");
  *index = *wave ? eval_int(E, a[2], "the T.Persistent index") : NULL;
  tl_expr *g = a[3] ? eval_int(E, a[3], "the T.Persistent group size") : lit_int(E, it->loc, 8);
  if (!*index || !g) return false;
  *group = bin(E, it->loc, TL_OP_MAX, lit_int(E, it->loc, 1), bin(E, it->loc, TL_OP_MIN, g, dom[*n - 1]));
  return *group != NULL;
}

/* The loop's variables (plain, distinct names) into names; 0 after an error. */
static int persistent_names(elab *E, const tl_ast_expr *tg, const tl_ast_expr **names) {
  int n = 1;
  const tl_ast_expr *const *items = &tg;
  if (tg->kind == TL_AST_TUPLE || tg->kind == TL_AST_LIST) {
    n = tg->u.list.n;
    items = (const tl_ast_expr *const *)tg->u.list.items;
  }
  if (n < 1 || n > MAX_PERSISTENT_DIMS) {
    err(E, tg->loc, "T.Persistent binds 1 to %d loop variables, got %d", MAX_PERSISTENT_DIMS, n);
    return 0;
  }
  for (int i = 0; i < n; i++) {
    names[i] = items[i];
    if (items[i]->kind != TL_AST_NAME) {
      err(E, items[i]->loc, "a loop variable must be a plain name");
      return 0;
    }
    for (int j = 0; j < i; j++)
      if (!strcmp(items[j]->u.name, items[i]->u.name)) {
        err(E, items[i]->loc, "duplicate loop variable '%s'", items[i]->u.name);
        return 0;
      }
  }
  return n;
}

bool tl_el_persistent(elab *E, const tl_ast_stmt *s, stmt_vec *out) {
  const tl_ast_expr *it = s->u.loop.iter;
  tl_loc loc = it->loc;
  const tl_ast_expr *names[MAX_PERSISTENT_DIMS];
  int nvars = persistent_names(E, s->u.loop.target, names);
  if (!nvars) return false;
  tl_expr *dom[MAX_PERSISTENT_DIMS], *wave, *index, *g;
  int n = 0;
  if (!persistent_args(E, it, dom, &n, &wave, &index, &g)) return false;
  if (nvars != n) {
    err(E, s->u.loop.target->loc, "T.Persistent has %d extent%s but %d loop variable%s", n, n == 1 ? "" : "s", nvars,
        nvars == 1 ? "" : "s");
    return false;
  }
  /* the grouped domain (ceildiv(last, g), d0, ..., dn-2, g); strides[i]: the
   * product of the dimensions after i */
  tl_expr *gd[MAX_PERSISTENT_DIMS + 1], *strides[MAX_PERSISTENT_DIMS + 1];
  tl_expr *ce[2] = {dom[n - 1], g};
  gd[0] = chk(E, tl_ir_call(E->m, loc, TL_INTRIN_CEILDIV, 2, ce));
  for (int i = 0; i < n - 1; i++) gd[i + 1] = dom[i];
  gd[n] = g;
  strides[n] = lit_int(E, loc, 1);
  for (int i = n - 1; i >= 0; i--) strides[i] = bin(E, loc, TL_OP_MUL, strides[i + 1], gd[i + 1]);
  tl_expr *padded = bin(E, loc, TL_OP_MUL, strides[0], gd[0]);
  tl_expr *cw[2] = {padded, wave};
  tl_expr *waves = padded ? chk(E, tl_ir_call(E->m, loc, TL_INTRIN_CEILDIV, 2, cw)) : NULL;
  if (!waves) return false;
  tl_var *w = tl_ir_new_var(E->m, loc, wave_name(E), waves->dtype.bits == 64 ? TL_INT64 : TL_INT32, TL_VAR_LOOP);
  if (!w) return oom(E), false;
  tl_expr *rem = bin(E, loc, TL_OP_ADD, bin(E, loc, TL_OP_MUL, chk(E, tl_ir_var(E->m, loc, w)), wave), index);
  if (!push_scope(E, true)) return false;
  scope *sc = E->sc;
  stmt_vec body = {0};
  tl_expr *last = bin(E, loc, TL_OP_ADD, bin(E, loc, TL_OP_MUL, bin(E, loc, TL_OP_FLOORDIV, rem, strides[0]), g),
                      bin(E, loc, TL_OP_FLOORMOD, rem, g));
  bool ok = bind_coord(E, names[n - 1], last, &body);
  for (int i = 0; ok && i < n - 1; i++)
    ok = bind_coord(E, names[i],
                    bin(E, loc, TL_OP_FLOORMOD, bin(E, loc, TL_OP_FLOORDIV, rem, strides[i + 1]), gd[i + 1]), &body);
  stmt_vec inner = {0};
  tl_stmt *guard = NULL;
  if (ok && elab_block(E, &s->u.loop.body, &inner)) {
    tl_stmt *is = tl_ir_stmt(E->m, s->loc, TL_STMT_IF);
    tl_expr *cond =
        bin(E, loc, TL_OP_LT, chk(E, tl_ir_var(E->m, names[n - 1]->loc, body.data[0]->u.let.var)), dom[n - 1]);
    if (is && cond && (is->u.ifs.then_s = make_seq(E, s->loc, &inner))) {
      is->u.ifs.cond = cond;
      guard = is;
    } else if (!is) oom(E);
  }
  tl_vec_free(&inner);
  pop_scope(E, sc);
  tl_stmt *b = guard && tl_vec_push(&body, guard) ? make_seq(E, s->loc, &body) : NULL;
  tl_vec_free(&body);
  if (!b) return false;
  tl_var **vars = malloc_ir(E, sizeof(tl_var *));
  tl_expr **mins = malloc_ir(E, sizeof(tl_expr *)), **exts = malloc_ir(E, sizeof(tl_expr *));
  if (!vars || !mins || !exts || !(mins[0] = lit_int(E, loc, 0))) return false;
  vars[0] = w;
  exts[0] = waves;
  tl_stmt *f = tl_el_new_for(E, s->loc, TL_LOOP_SERIAL, 1, vars, mins, exts, NULL, -1, b);
  return f && tl_vec_push(out, f) ? true : (oom(E), false);
}
