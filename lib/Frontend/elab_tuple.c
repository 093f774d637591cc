/* Elaborator: the tuple assignment `t1, t2, ... = v1, v2, ...` reads every
 * value before its first store, as Python does (docs/language.md "The kernel
 * body"): an item that reads a buffer an earlier target stores into (the
 * swap A[0], A[1] = A[1], A[0] of TileLang's sparse compressor, or over
 * T.alloc_var names) is first bound to a let `tuple_item`
 * (tl_el_let_value); the rest are assigned as they are, so a tuple
 * assignment without such a read makes the IR it always made. */
#include "Frontend/elab_impl.h"
#include "IR/visit.h"

/* The buffer an assignment target stores into (*b): buffer[...] or the name
 * of a T.alloc_var; NULL for a name it binds; *unknown for a nested target.
 * False after a reported error. */
static bool stored_buffer(elab *E, const tl_ast_expr *t, tl_buffer **b, bool *unknown) {
  *b = NULL;
  if (t->kind == TL_AST_SUBSCRIPT) {
    val *base = eval(E, t->u.sub.value);
    if (!base) return false;
    if (base->k == V_BUFFER) *b = base->u.buf; /* other values: target_indices reports them */
  } else if (t->kind == TL_AST_NAME) {
    scope *where;
    binding *bd = lookup(E, t->u.name, &where);
    if (bd && where->in_pf && bd->kind == BK_ALLOC && bd->v && bd->v->k == V_BUFFER &&
        bd->v->u.buf->scope == TL_SCOPE_LOCAL_VAR)
      *b = bd->v->u.buf;
  } else {
    *unknown = true;
  }
  return true;
}

static bool loads_buffer(const tl_expr *e, void *user) {
  return e->kind == TL_EXPR_LOAD && (!user || e->u.load.buffer == user);
}

/* The IR a tuple item reads memory through (a load, an expression of loads,
 * a T.alloc_var); NULL for other values (and for a region). */
static tl_expr *item_reads(elab *E, val *v, tl_loc loc) {
  if (v->k == V_BUFREF) {
    for (int i = 0; i < v->u.ref.n; i++)
      if (v->u.ref.items[i].is_slice) return NULL;
  } else if (!(v->k == V_BUFFER && v->u.buf->scope == TL_SCOPE_LOCAL_VAR) && v->k != V_EXPR) {
    return NULL;
  }
  tl_expr *e = to_expr(E, v, loc);
  return e && tl_expr_any(e, loads_buffer, NULL, -1, true) ? e : NULL;
}

val *tl_el_freeze_tuple(elab *E, const tl_ast_expr *t, val *v, tl_loc vloc, stmt_vec *out) {
  if (!E->pf || E->helper_depth || !E->in_kernel) return v;
  int n = t->u.list.n;
  val *r = v;
  tl_buffer **stored = talloc(E, sizeof(tl_buffer *) * (size_t)n);
  if (!stored) return NULL;
  bool unknown = false;
  for (int k = 0; k < n; k++) {
    if (!stored_buffer(E, t->u.list.items[k], &stored[k], &unknown)) return NULL;
    tl_expr *e = k ? item_reads(E, v->u.tup.items[k], vloc) : NULL;
    bool hazard = false;
    for (int j = 0; e && j < k && !hazard; j++)
      hazard = unknown || (stored[j] && tl_expr_any(e, loads_buffer, stored[j], -1, true));
    if (!hazard) continue;
    if (r == v) {
      if (!(r = mk_tuple(E, n, v->is_list))) return NULL;
      memcpy(r->u.tup.items, v->u.tup.items, sizeof(val *) * (size_t)n);
    }
    if (!(r->u.tup.items[k] = tl_el_let_value(E, intern(E, "tuple_item"), e, vloc, out))) return NULL;
    E->clashing_names = true; /* a second tuple_item is renamed tuple_item_1 (unique_names) */
  }
  return r;
}
