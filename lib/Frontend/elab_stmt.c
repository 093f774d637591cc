/* Elaborator, part 3 (see elaborate.c for the algorithm): statements of a
 * @T.prim_func — assignments, allocations, loops (T.Parallel, T.Pipelined,
 * T.serial, range), T.Kernel, tile operations, out_idx and function
 * attributes, and statement lists. */
#include "Frontend/elab_impl.h"
#include "IR/out_idx.h"

/* ============================================================ statements */

static bool emit(elab *E, stmt_vec *out, tl_stmt *s) {
  if (!s) return oom(E), false;
  if (!tl_vec_push(out, s)) return oom(E), false;
  return true;
}

tl_stmt *make_seq(elab *E, tl_loc loc, stmt_vec *v) {
  tl_stmt **arr = NULL;
  if (v->len) {
    arr = malloc_ir(E, sizeof(tl_stmt *) * v->len);
    if (!arr) return NULL;
    memcpy(arr, v->data, sizeof(tl_stmt *) * v->len);
  }
  tl_stmt *s = tl_ir_seq(E->m, loc, (int)v->len, arr);
  return s ? s : oom(E);
}

/* Elaborates a nested block in a fresh scope into one statement. */
tl_stmt *tl_el_body(elab *E, const tl_ast_block *b, tl_loc loc) {
  if (!push_scope(E, true)) return NULL;
  scope *s = E->sc;
  stmt_vec v = {0};
  bool ok = elab_block(E, b, &v);
  pop_scope(E, s);
  tl_stmt *r = ok ? make_seq(E, loc, &v) : NULL;
  tl_vec_free(&v);
  return r;
}

/* A new IR name (let, alloc, loop variable) may not hide another IR name of
 * the same prim_func. */
bool check_new_name(elab *E, const char *name, tl_loc loc) {
  scope *where;
  binding *b = lookup(E, name, &where);
  if (!b || !where->in_pf || b->kind == BK_CONST) return true;
  err(E, loc, "redefinition of '%s'", name);
  if (b->loc.file) tl_note(E->d, b->loc, "previous definition of '%s' is here", name);
  return false;
}

/* Marks name as failed so later uses stay silent. */
static void poison(elab *E, const tl_ast_expr *target) {
  if (!target) return;
  if (target->kind == TL_AST_NAME) {
    if (lookup(E, target->u.name, NULL)) return; /* keep an existing definition */
    val *p = mk(E, V_POISON);
    if (p) bind(E, E->sc, target->u.name, p, target->loc, BK_CONST);
  } else if (target->kind == TL_AST_TUPLE || target->kind == TL_AST_LIST) {
    for (int i = 0; i < target->u.list.n; i++) poison(E, target->u.list.items[i]);
  }
}

static tl_expr *store_value(elab *E, tl_buffer *b, tl_expr *v, tl_loc loc) {
  if (tl_dtype_eq(v->dtype, b->dtype) || v->kind == TL_EXPR_STRING) return v;
  tl_dtype t = b->dtype;
  if (v->dtype.lanes > 1) { /* a vector store of the SIMT IR */
    t.lanes = v->dtype.lanes;
    if (tl_dtype_eq(v->dtype, t)) return v;
  }
  return chk(E, tl_ir_cast(E->m, loc, t, v));
}

static bool emit_store(elab *E, stmt_vec *out, tl_loc loc, tl_buffer *b, int n, tl_expr **idx, tl_expr *value) {
  if (!(b = tl_el_view_remap(E, loc, b, &n, &idx))) return false; /* T.view / T.reshape */
  value = store_value(E, b, value, loc);
  if (!value) return false;
  tl_stmt *s = tl_ir_stmt(E->m, loc, TL_STMT_STORE);
  if (!s) return oom(E), false;
  s->u.store.buffer = b;
  s->u.store.n = n;
  s->u.store.indices = idx;
  s->u.store.value = value;
  return emit(E, out, s);
}

/* The indices of a subscript target A[i, j] (no slices). */
static bool target_indices(elab *E, const tl_ast_expr *t, tl_buffer **b, int *n, tl_expr ***idx) {
  val *base = eval(E, t->u.sub.value);
  if (!base) return false;
  if (base->k != V_BUFFER) {
    err_val(E, t->u.sub.value->loc, base, "cannot assign to an item of %s", describe(E, base));
    return false;
  }
  *b = base->u.buf;
  *n = t->u.sub.n;
  *idx = malloc_ir(E, sizeof(tl_expr *) * (size_t)(*n ? *n : 1));
  if (!*idx) return false;
  for (int i = 0; i < *n; i++) {
    const tl_ast_expr *it = t->u.sub.items[i];
    if (it->kind == TL_AST_SLICE) {
      err(E, it->loc, "cannot assign to a slice of buffer '%s'; use T.copy or T.fill", (*b)->name);
      return false;
    }
    if (!((*idx)[i] = eval_int(E, it, "a buffer index"))) return false;
  }
  return true;
}

val *tl_el_let_value(elab *E, const char *name, tl_expr *e, tl_loc loc, stmt_vec *out) {
  tl_var *var = name ? tl_ir_new_var(E->m, loc, name, e->dtype, TL_VAR_LET) : NULL;
  if (!var) return oom(E);
  tl_stmt *s = tl_ir_stmt(E->m, loc, TL_STMT_LET);
  if (!s) return oom(E);
  s->u.let.var = var;
  s->u.let.value = e;
  tl_el_note_tid_let(E, var, e);
  if (E->in_kernel && (e->kind == TL_EXPR_VAR || tl_expr_reads_tid(e, NULL)) && !tl_vec_push(&E->thread_lets, s))
    return oom(E);
  if (!tl_el_note_let_value(E, var, e)) return NULL;
  val *vv = mk_expr(E, chk(E, tl_ir_var(E->m, loc, var)));
  return vv && emit(E, out, s) ? vv : NULL;
}

static bool assign_name(elab *E, const tl_ast_expr *t, val *v, tl_loc vloc, stmt_vec *out, const tl_dtype *annot) {
  const char *name = t->u.name;
  scope *where;
  binding *b = lookup(E, name, &where);
  bool in_pf = E->pf != NULL && !E->helper_depth; /* a plain helper binds values, as Python */
  if (b && where->in_pf) {
    switch (b->kind) {
    case BK_ALLOC:
      if (b->v->k == V_BUFFER && b->v->u.buf->scope == TL_SCOPE_LOCAL_VAR) {
        tl_expr *e = to_expr(E, v, vloc);
        tl_expr *zero = e ? lit_int(E, t->loc, 0) : NULL;
        tl_expr **idx = zero ? malloc_ir(E, sizeof(tl_expr *)) : NULL;
        if (!idx) return false;
        idx[0] = zero;
        return emit_store(E, out, t->loc, b->v->u.buf, 1, idx, e);
      }
      break;
    case BK_PARAM: err(E, t->loc, "cannot assign to scalar parameter '%s'", name); return false;
    case BK_CONST:
      if (!is_ir(v) && !annot) { /* rebinding a compile-time name */
        b->v = v;
        b->loc = t->loc;
        return true;
      }
      break;
    default: break;
    }
    if (b->kind != BK_CONST) {
      err(E, t->loc, "redefinition of '%s'", name);
      if (b->loc.file) tl_note(E->d, b->loc, "previous definition of '%s' is here", name);
      return false;
    }
  }
  if (!in_pf || (!is_ir(v) && !annot)) {
    /* compile-time binding (no IR) */
    return bind(E, E->sc, name, v, t->loc, BK_CONST);
  }
  if (v->k == V_BUFREF && !annot) {
    bool sl = false;
    for (int i = 0; i < v->u.ref.n; i++) sl |= v->u.ref.items[i].is_slice;
    if (sl) return bind(E, E->sc, name, v, t->loc, BK_CONST); /* a region alias */
  }
  if (v->k == V_BUFFER && !annot) return bind(E, E->sc, name, v, t->loc, BK_CONST);
  tl_expr *e = to_expr(E, v, vloc);
  if (!e) return false;
  if (annot && !tl_dtype_eq(*annot, e->dtype) && !(e = chk(E, tl_ir_cast(E->m, vloc, *annot, e)))) return false;
  val *vv = tl_el_let_value(E, name, e, t->loc, out);
  return vv && bind(E, E->sc, name, vv, t->loc, BK_LET);
}

bool assign_target(elab *E, const tl_ast_expr *t, val *v, tl_loc vloc, stmt_vec *out) {
  if (E->depth >= MAX_DEPTH) {
    err(E, t->loc, "assignment target nested too deeply");
    return false;
  }
  switch (t->kind) {
  case TL_AST_NAME: return assign_name(E, t, v, vloc, out, NULL);
  case TL_AST_TUPLE:
  case TL_AST_LIST: {
    if (v->k != V_TUPLE) {
      err_val(E, t->loc, v, "cannot unpack %s into %d names", describe(E, v), t->u.list.n);
      return false;
    }
    if (v->u.tup.n != t->u.list.n) {
      err_val(E, t->loc, v, "expected %d values to unpack, got %d", t->u.list.n, v->u.tup.n);
      return false;
    }
    if (!(v = tl_el_freeze_tuple(E, t, v, vloc, out))) return false;
    E->depth++;
    bool ok = true;
    for (int i = 0; ok && i < t->u.list.n; i++) ok = assign_target(E, t->u.list.items[i], v->u.tup.items[i], vloc, out);
    E->depth--;
    return ok;
  }
  case TL_AST_SUBSCRIPT: {
    if (!E->pf) {
      err(E, t->loc, "item assignment is only supported on buffers inside a @T.prim_func");
      return false;
    }
    tl_buffer *b;
    int n;
    tl_expr **idx;
    if (!target_indices(E, t, &b, &n, &idx)) return false;
    tl_expr *e = to_expr(E, v, vloc);
    return e && emit_store(E, out, t->loc, b, n, idx, e);
  }
  default: err(E, t->loc, "cannot assign to this expression"); return false;
  }
}

bool elab_augassign(elab *E, const tl_ast_stmt *s, stmt_vec *out) {
  const tl_ast_expr *t = s->u.aug.target;
  const char *op = s->u.aug.op;
  if (t->kind == TL_AST_NAME) {
    scope *where;
    binding *b = lookup(E, t->u.name, &where);
    if (!b) {
      err(E, t->loc, "name '%s' is not defined", t->u.name);
      return false;
    }
    if (b->v && b->v->k == V_LAZY && !force(E, b->v, t->loc)) return false;
    if (b->v && b->v->k == V_LAZY) b->v = b->v->u.lazy.cached;
    if (!b->v || b->v->k == V_POISON) return false;
    if (b->kind == BK_PARAM && where->in_pf) {
      err(E, t->loc, "cannot assign to scalar parameter '%s'", t->u.name);
      return false;
    }
    if (b->v->k == V_BUFFER && b->v->u.buf->scope == TL_SCOPE_LOCAL_VAR) {
      val *r = eval(E, s->u.aug.value);
      val *nv = r ? binop(E, op, b->v, r, t->loc) : NULL;
      tl_expr *e = nv ? to_expr(E, nv, t->loc) : NULL;
      tl_expr *zero = e ? lit_int(E, t->loc, 0) : NULL;
      tl_expr **idx = zero ? malloc_ir(E, sizeof(tl_expr *)) : NULL;
      if (!idx) return false;
      idx[0] = zero;
      return emit_store(E, out, t->loc, b->v->u.buf, 1, idx, e);
    }
    if (b->kind == BK_LET || b->kind == BK_LOOP || b->kind == BK_BLOCK) {
      err(E, t->loc, "cannot assign to '%s': it is immutable; use T.alloc_var", t->u.name);
      return false;
    }
    if (b->kind == BK_CONST && (!is_ir(b->v) || E->helper_depth) && b->v->k != V_BUFFER) {
      val *r = eval(E, s->u.aug.value);
      val *nv = r ? binop(E, op, b->v, r, t->loc) : NULL;
      if (!nv) return false;
      if (is_ir(nv) && E->pf && !E->helper_depth) {
        err(E, t->loc, "cannot assign to '%s': it is a compile-time constant; use T.alloc_var", t->u.name);
        return false;
      }
      if (!where->in_pf && E->pf) return bind(E, E->sc, t->u.name, nv, t->loc, BK_CONST);
      b->v = nv;
      return true;
    }
    err(E, t->loc, "cannot assign to '%s'", t->u.name);
    return false;
  }
  if (t->kind == TL_AST_SUBSCRIPT && E->pf) {
    tl_buffer *b;
    int n;
    tl_expr **idx;
    if (!target_indices(E, t, &b, &n, &idx)) return false;
    tl_expr *cur = tl_el_view_load(E, t->loc, b, n, idx); /* through T.view / T.reshape */
    val *cv = mk_expr(E, cur);
    val *r = cv ? eval(E, s->u.aug.value) : NULL;
    val *nv = r ? binop(E, op, cv, r, t->loc) : NULL;
    tl_expr *e = nv ? to_expr(E, nv, t->loc) : NULL;
    return e && emit_store(E, out, t->loc, b, n, idx, e);
  }
  err(E, t->loc, "cannot assign to this expression");
  return false;
}

/* ------------------------------------------------------------- alloc */

/* T.alloc_reducer(shape, dtype, op="sum", replication=None) (TileLang's
 * language/allocate.py): a fragment of shape; op one of "sum", "max", "min";
 * replication None, "all" or "none" (docs/language.md "Reducers"). */
static bool reducer_args(elab *E, const tl_ast_expr *x, const char *fn, int *ndim, tl_expr ***dims, tl_dtype *dt,
                         uint8_t *red, uint8_t *rep) {
  static const char *const params[] = {"shape", "dtype", "op", "replication", NULL};
  const tl_ast_expr *a[4];
  if (!bind_args(E, x, fn, params, 2, a)) return false;
  if (!eval_shape(E, a[0], ndim, dims)) return false;
  val *dv = eval(E, a[1]);
  if (!dv || !to_dtype(E, dv, a[1]->loc, dt)) return false;
  *red = TL_REDUCER_SUM;
  if (a[2]) {
    val *ov = eval(E, a[2]);
    if (!ov) return false;
    static const char *const ops[] = {"sum", "max", "min"};
    int k = -1;
    for (int i = 0; ov->k == V_STR && i < 3; i++)
      if (!strcmp(ov->u.s, ops[i])) k = i;
    if (k < 0) {
      if (ov->k == V_STR && (!strcmp(ov->u.s, "bitand") || !strcmp(ov->u.s, "bitor") || !strcmp(ov->u.s, "bitxor")))
        err_val(E, a[2]->loc, ov, "%s: op=\"%s\" is not supported yet (sum, max, min are)", fn, ov->u.s);
      else err_val(E, a[2]->loc, ov, "%s: op must be \"sum\", \"max\" or \"min\", got %s", fn, describe(E, ov));
      return false;
    }
    *red = (uint8_t)(TL_REDUCER_SUM + k);
  }
  *rep = TL_REDUCER_REP_UNSET;
  if (a[3]) {
    val *rv = eval(E, a[3]);
    if (!rv) return false;
    if (rv->k == V_STR && !strcmp(rv->u.s, "all")) *rep = TL_REDUCER_REP_ALL;
    else if (rv->k == V_STR && !strcmp(rv->u.s, "none")) *rep = TL_REDUCER_REP_NONE;
    else if (rv->k != V_NONE) {
      err_val(E, a[3]->loc, rv, "%s: replication must be \"all\", \"none\" or None, got %s", fn, describe(E, rv));
      return false;
    }
  }
  return true;
}

static bool elab_alloc(elab *E, const tl_ast_expr *target, const char *fname, const tl_ast_expr *x, tl_loc loc,
                       stmt_vec *out) {
  const char *fn = tprintf(E, "T.%s", fname);
  if (target->kind != TL_AST_NAME) {
    err(E, target->loc, "the result of %s must be assigned to a plain name", fn);
    return false;
  }
  tl_scope sc;
  int ndim = 1;
  tl_expr **dims = NULL;
  tl_dtype dt;
  tl_expr *init = NULL;
  bool scratch = false;
  uint8_t red = 0, rep = 0;
  if (!strcmp(fname, "alloc_var")) {
    static const char *const params[] = {"dtype", "init", NULL};
    const tl_ast_expr *a[2];
    if (!bind_args(E, x, fn, params, 1, a)) return false;
    const tl_ast_expr *da = a[0], *ia = a[1];
    val *dv = eval(E, da);
    if (!dv || !to_dtype(E, dv, da->loc, &dt)) return false;
    if (ia) {
      val *iv = eval(E, ia);
      if (!iv || !(init = to_expr(E, iv, ia->loc))) return false;
      if (!tl_dtype_eq(init->dtype, dt) && !(init = chk(E, tl_ir_cast(E->m, ia->loc, dt, init)))) return false;
    }
    sc = TL_SCOPE_LOCAL_VAR;
    if (!(dims = malloc_ir(E, sizeof(tl_expr *))) || !(dims[0] = lit_int(E, loc, 1))) return false;
  } else if (!strcmp(fname, "alloc_reducer")) {
    sc = TL_SCOPE_FRAGMENT;
    if (!reducer_args(E, x, fn, &ndim, &dims, &dt, &red, &rep)) return false;
  } else {
    bool shared = !strcmp(fname, "alloc_shared"), frag = !strcmp(fname, "alloc_fragment");
    /* T.alloc_buffer(shape, dtype, scope="global") in a kernel: a kernel workspace (what stream-K's
     * lowering makes, lib/Lower/Hopper/stream_k.c; the runtime provides it zeroed per stream and keeps it
     * between launches, docs/simt-ir.md "Stream-K"), so that SIMT IR prints and parses back.
     * T.alloc_global(shape, dtype): TileLang's global scratch buffer, one per launch shared by all
     * blocks; a kernel workspace zeroed before every launch (scratch) */
    scratch = !strcmp(fname, "alloc_global");
    bool global = scratch || !strcmp(fname, "alloc_buffer");
    if (!shared && !frag && !global && strcmp(fname, "alloc_local")) {
      err(E, x->loc, "unknown allocation %s", fn);
      return false;
    }
    static const char *const params[] = {"shape", "dtype", "scope", NULL};
    const tl_ast_expr *a[3];
    if (!bind_args(E, x, fn, params, 2, a)) return false;
    const tl_ast_expr *sa = a[0], *da = a[1], *ca = a[2];
    sc = shared ? TL_SCOPE_SHARED_DYN : frag ? TL_SCOPE_FRAGMENT : global ? TL_SCOPE_GLOBAL : TL_SCOPE_LOCAL;
    if (!eval_shape(E, sa, &ndim, &dims)) return false;
    val *dv = eval(E, da);
    if (!dv || !to_dtype(E, dv, da->loc, &dt)) return false;
    if (ca) {
      val *cv = eval(E, ca);
      if (!cv) return false;
      bool regs = sc == TL_SCOPE_FRAGMENT || sc == TL_SCOPE_LOCAL;
      const char *want = shared ? "shared.dyn or shared" : regs ? "local.fragment or local" : tl_scope_name(sc);
      if (cv->k != V_STR) {
        err_val(E, ca->loc, cv, "scope of %s must be a string (%s), got %s", fn, want, describe(E, cv));
        return false;
      }
      /* the scope decides, as in TileLang: T.alloc_fragment(shape, dtype, "local") is a per-thread local
       * buffer, T.alloc_local(shape, dtype, "local.fragment") a fragment */
      if (shared && !strcmp(cv->u.s, "shared")) sc = TL_SCOPE_SHARED;
      else if (regs && !strcmp(cv->u.s, "local")) sc = TL_SCOPE_LOCAL;
      else if (regs && !strcmp(cv->u.s, "local.fragment")) sc = TL_SCOPE_FRAGMENT;
      else if (strcmp(cv->u.s, tl_scope_name(sc))) {
        err_val(E, ca->loc, cv, "unsupported scope '%.100s' for %s (expected %s)", cv->u.s, fn, want);
        return false;
      }
    }
  }
  for (int d = 0; scratch && d < ndim; d++) {
    int64_t v;
    if (!tl_expr_is_const_int(dims[d], &v) || v < 0) {
      err(E, dims[d]->loc, "the shape of %s must be static (a kernel workspace)", fn);
      return false;
    }
  }
  const char *name = target->u.name;
  if (!check_new_name(E, name, target->loc)) return false;
  tl_buffer *b = tl_ir_new_buffer(E->m, target->loc, name, dt, sc, ndim, dims);
  if (!b) return oom(E), false;
  b->init = init;
  b->zero_per_launch = scratch;
  b->reducer = red;
  b->reducer_rep = rep;
  tl_stmt *s = tl_ir_stmt(E->m, loc, TL_STMT_ALLOC);
  if (!s) return oom(E), false;
  s->u.alloc.buffer = b;
  val *bv = mk(E, V_BUFFER);
  if (!bv) return false;
  bv->u.buf = b;
  /* T.alloc_global (before the T.Kernel, as TileLang writes it, or in it) goes to the top of the
   * kernel body, where kernel workspaces live (elab_kernel) */
  if (scratch && !tl_vec_push(&E->global_allocs, s)) return oom(E), false;
  return (scratch || emit(E, out, s)) && bind(E, E->sc, name, bv, target->loc, BK_ALLOC);
}

/* The T.<name> function a call's callee names, without reporting errors
 * for other callees; NULL when the callee is not a T function. */
const char *t_callee(elab *E, const tl_ast_expr *x) {
  if (x->kind != TL_AST_CALL) return NULL;
  const tl_ast_expr *f = x->u.call.func;
  if (f->kind != TL_AST_ATTR) return NULL;
  /* Resolve f.value quietly: a name bound to T, or tilelang.language. */
  const tl_ast_expr *base = f->u.attr.value;
  if (base->kind == TL_AST_NAME) {
    binding *b = lookup(E, base->u.name, NULL);
    if (!b || !b->v || b->v->k != V_NS || b->v->u.ns != NS_T) return NULL;
  } else if (base->kind == TL_AST_ATTR && base->u.attr.value->kind == TL_AST_NAME &&
             !strcmp(base->u.attr.name, "language")) {
    binding *b = lookup(E, base->u.attr.value->u.name, NULL);
    if (!b || !b->v || b->v->k != V_NS || b->v->u.ns != NS_TILELANG) return NULL;
  } else {
    return NULL;
  }
  return f->u.attr.name;
}

/* ------------------------------------------------------------- loops */

/* T.serial's annotations={"num_stages": s}: the serial loop the pipeline
 * pass made of a T.Pipelined loop of s >= 2 stages, as printed
 * (lib/IR/tir.h); *num_stages = s.  No other annotation is taken. */
static bool serial_annotations(elab *E, const tl_ast_keyword *k, const char *fn, int *num_stages) {
  val *d = eval(E, k->value);
  if (!d) return false;
  if (d->k != V_DICT) {
    err(E, k->value->loc, "%s: annotations must be a dict", fn);
    return false;
  }
  for (int i = 0; i < d->u.dict.n; i++) {
    val *key = d->u.dict.keys[i], *v = d->u.dict.vals[i];
    if (key && key->k == V_LAZY) key = force(E, key, k->value->loc);
    if (v && v->k == V_LAZY) v = force(E, v, k->value->loc);
    if (!key || !v) return false;
    if (key->k != V_STR || strcmp(key->u.s, "num_stages")) {
      err(E, k->value->loc, "%s: only the annotation \"num_stages\" is supported", fn);
      return false;
    }
    int64_t ns;
    if (!to_const_int(E, v, k->value->loc, "num_stages", &ns)) return false;
    if (ns < 2 || ns > 1000000) {
      err(E, k->value->loc, "%s: annotation num_stages must be in [2, 1000000], got %lld", fn, (long long)ns);
      return false;
    }
    *num_stages = (int)ns;
  }
  return true;
}

/* The keywords and arity of a non-parallel loop iterator: T.Pipelined's
 * num_stages (into *num_stages), T.serial's annotations (num_stages: a
 * pipelined serial loop), T.thread_binding's thread, and 1 to 3
 * positional bounds otherwise. */
static bool loop_keywords(elab *E, const tl_ast_expr *it, const char *fn, tl_loop_kind lk, int *num_stages) {
  if (lk == TL_LOOP_PIPELINED) {
    static const char *const kws[] = {"num_stages", "order", "stage", "sync", "group", NULL};
    if (!check_kws(E, it, fn, kws)) return false;
    for (int i = 0; i < it->u.call.nkw; i++) {
      const tl_ast_keyword *k = &it->u.call.kw[i];
      if (!strcmp(k->name, "order") || !strcmp(k->name, "stage") || !strcmp(k->name, "group"))
        continue; /* after the body: tl_el_pipelined_schedule */
      if (strcmp(k->name, "num_stages")) {
        err(E, k->loc, "'%s' of T.Pipelined is not supported yet", k->name);
        return false;
      }
      val *nv = eval(E, k->value);
      int64_t ns;
      if (!nv || !to_const_int(E, nv, k->value->loc, "num_stages", &ns)) return false;
      if (ns < 0) {
        err(E, k->value->loc, "T.Pipelined: num_stages must be >= 0, got %lld", (long long)ns);
        return false;
      }
      if (ns > 1000000) {
        err(E, k->value->loc, "T.Pipelined: num_stages %lld is too large", (long long)ns);
        return false;
      }
      *num_stages = (int)ns;
    }
    if (!check_arity(E, it, fn, 1, 2)) return false;
  } else if (lk == TL_LOOP_THREAD) {
    /* T.thread_binding([lo,] ext[, thread="threadIdx.x"]) (SIMT IR) */
    static const char *const kws[] = {"thread", NULL};
    if (!check_kws(E, it, fn, kws) || !check_arity(E, it, fn, 1, 2)) return false;
    const tl_ast_keyword *tk = find_kw(it, "thread");
    if (tk) {
      val *tv = eval(E, tk->value);
      if (!tv) return false;
      if (tv->k != V_STR || strcmp(tv->u.s, "threadIdx.x")) {
        err(E, tk->value->loc, "T.thread_binding: only thread=\"threadIdx.x\" is supported");
        return false;
      }
    }
  } else if (lk == TL_LOOP_SERIAL && strcmp(fn, "range")) {
    static const char *const kws[] = {"annotations", NULL};
    if (!check_kws(E, it, fn, kws) || !check_arity(E, it, fn, 1, 3)) return false;
    const tl_ast_keyword *ak = find_kw(it, "annotations");
    if (ak && !serial_annotations(E, ak, fn, num_stages)) return false;
  } else {
    if (!check_kws(E, it, fn, NULL) || !check_arity(E, it, fn, 1, 3)) return false;
  }
  return true;
}

/* The IR name of a visible loop variable of the prim_func called name, or
 * NULL. */
static const char *shadowed_loop_var(elab *E, const char *name) {
  scope *where;
  binding *b = lookup(E, name, &where);
  if (!b || !where->in_pf || b->kind != BK_LOOP || !b->v || b->v->k != V_EXPR) return NULL;
  return b->v->u.e->kind == TL_EXPR_VAR ? b->v->u.e->u.var->name : NULL;
}

/* A loop variable may rebind the name of an enclosing loop's variable, as in
 * TileLang (each loop's variable lives in the loop's frame; after the inner
 * loop the name is the outer variable again); any other IR name of the
 * prim_func keeps the redefinition error. */
static bool check_loop_name(elab *E, const char *name, tl_loc loc) {
  return shadowed_loop_var(E, name) || check_new_name(E, name, loc);
}

/* The IR name of a loop variable: its Python name, unless a T.dynamic
 * symbol has that name (for k in ...: with K = T.dynamic("k")) or it rebinds
 * an enclosing loop's variable; then name_1, name_2, ... (IR names are unique
 * in a prim_func). */
static const char *loop_var_name(elab *E, const char *name) {
  const char *cand = name, *outer = shadowed_loop_var(E, name);
  for (int n = 1; n < 1000; n++) {
    bool clash = outer && (cand == name || !strcmp(outer, cand) || lookup(E, intern(E, cand), NULL));
    for (size_t i = 0; i < E->dyn.len && !clash; i++)
      clash = E->dyn.data[i]->name && !strcmp(E->dyn.data[i]->name, cand);
    if (!clash) return cand == name ? name : intern(E, cand);
    cand = tprintf(E, "%s_%d", name, n);
  }
  return name;
}

/* The IR name of a new loop variable called name (see check_loop_name and
 * loop_var_name); NULL after a located error. */
const char *tl_el_loop_var_name(elab *E, const char *name, tl_loc loc) {
  return check_loop_name(E, name, loc) ? loop_var_name(E, name) : NULL;
}

/* A TL_STMT_FOR over the (arena-owned) arrays given; NULL on OOM. */
tl_stmt *tl_el_new_for(elab *E, tl_loc loc, tl_loop_kind lk, int nvars, tl_var **vars, tl_expr **mins, tl_expr **exts,
                       tl_expr *step, int num_stages, tl_stmt *body) {
  tl_stmt *f = tl_ir_stmt(E->m, loc, TL_STMT_FOR);
  if (!f) return oom(E), NULL;
  f->u.loop.kind = lk;
  f->u.loop.nvars = nvars;
  f->u.loop.vars = vars;
  f->u.loop.mins = mins;
  f->u.loop.extents = exts;
  f->u.loop.step = step;
  f->u.loop.num_stages = num_stages;
  f->u.loop.body = body;
  return f;
}

static bool elab_for(elab *E, const tl_ast_stmt *s, stmt_vec *out) {
  const tl_ast_expr *it = s->u.loop.iter, *tg = s->u.loop.target;
  if (s->u.loop.is_async || s->u.loop.orelse.n) {
    err(E, s->loc, "%s is not supported in a @T.prim_func",
        s->u.loop.is_async ? "'async for'" : "'else' after a 'for' loop");
    return false;
  }
  const char *kind = NULL;
  bool builtin_range = false;
  if (it->kind == TL_AST_CALL) {
    kind = t_callee(E, it);
    if (!kind && it->u.call.func->kind == TL_AST_NAME && !strcmp(it->u.call.func->u.name, "range") &&
        !lookup(E, "range", NULL)) {
      kind = "serial";
      builtin_range = true;
    }
    if (!kind) {
      val *fv = eval(E, it->u.call.func);
      if (!fv) return false;
      if (fv->k == V_FUNC && !fv->builtin) kind = fv->u.fname;
      else if (fv->k == V_FUNC && !strcmp(fv->u.fname, "range")) kind = "serial", builtin_range = true;
    }
  }
  if (kind && !strcmp(kind, "Persistent")) return tl_el_persistent(E, s, out); /* elab_persistent.c */
  /* T.grid(e0, e1, ...) binds one variable per extent: nested T.serial loops. */
  bool grid = kind && !strcmp(kind, "grid");
  tl_loop_kind lk;
  if (kind && !strcmp(kind, "Parallel")) lk = TL_LOOP_PARALLEL;
  else if (kind && !strcmp(kind, "Pipelined")) lk = TL_LOOP_PIPELINED;
  else if (kind && (!strcmp(kind, "serial") || !strcmp(kind, "Serial") || grid)) lk = TL_LOOP_SERIAL;
  else if (kind && !strcmp(kind, "unroll")) lk = TL_LOOP_UNROLL;
  else if (kind && !strcmp(kind, "vectorized")) lk = TL_LOOP_VECTORIZED;
  else if (kind && !strcmp(kind, "thread_binding")) lk = TL_LOOP_THREAD;
  else if (kind && tilelang_has_name(kind)) {
    err(E, it->loc, "T.%s is not supported yet", kind);
    return false;
  } else {
    err(E, it->loc,
        "unsupported loop iterator; expected T.Parallel, T.Pipelined, T.serial, T.unroll, "
        "T.vectorized, T.grid or range");
    return false;
  }
  const char *fn = builtin_range ? "range" : tprintf(E, "T.%s", kind);
  int nargs = it->u.call.nargs;
  /* Loop variables. */
  int nvars = 1;
  const tl_ast_expr *const *names = &tg;
  if (tg->kind == TL_AST_TUPLE || tg->kind == TL_AST_LIST) {
    nvars = tg->u.list.n;
    names = (const tl_ast_expr *const *)tg->u.list.items;
  }
  for (int i = 0; i < nvars; i++)
    if (names[i]->kind != TL_AST_NAME) {
      err(E, names[i]->loc, "a loop variable must be a plain name");
      return false;
    }
  bool multi = lk == TL_LOOP_PARALLEL || grid; /* one extent per loop variable */
  if (!multi && nvars != 1) {
    err(E, tg->loc, "%s binds one loop variable, got %d", fn, nvars);
    return false;
  }
  int num_stages = -1;
  tl_expr *step = NULL;
  int ne = multi ? nargs : 1;
  tl_expr **mins = malloc_ir(E, sizeof(tl_expr *) * (size_t)(ne ? ne : 1));
  tl_expr **exts = malloc_ir(E, sizeof(tl_expr *) * (size_t)(ne ? ne : 1));
  if (!mins || !exts) return false;
  if (multi) {
    if (!(lk == TL_LOOP_PARALLEL ? tl_el_parallel_hints(E, it, fn) : check_kws(E, it, fn, NULL)) ||
        !check_arity(E, it, fn, 1, -1))
      return false;
    if (nvars != nargs) {
      err(E, tg->loc, "%s has %d extent%s but %d loop variable%s", fn, nargs, nargs == 1 ? "" : "s", nvars,
          nvars == 1 ? "" : "s");
      return false;
    }
    for (int i = 0; i < nargs; i++) {
      if (!(exts[i] = eval_int(E, it->u.call.args[i], "a loop extent"))) return false;
      if (!(mins[i] = lit_int(E, it->u.call.args[i]->loc, 0))) return false;
    }
  } else {
    if (!loop_keywords(E, it, fn, lk, &num_stages)) return false;
    tl_expr *lo, *hi;
    if (nargs == 1) {
      lo = lit_int(E, it->loc, 0);
      hi = eval_int(E, it->u.call.args[0], "a loop extent");
    } else {
      lo = eval_int(E, it->u.call.args[0], "a loop bound");
      hi = lo ? eval_int(E, it->u.call.args[1], "a loop bound") : NULL;
    }
    if (!lo || !hi) return false;
    if (nargs == 3) {
      val *sv = eval(E, it->u.call.args[2]);
      if (!sv || !(step = to_int_expr(E, sv, it->u.call.args[2]->loc, "a loop step"))) return false;
      int64_t c;
      if (tl_expr_is_const_int(step, &c)) {
        if (c == 0) {
          err(E, it->u.call.args[2]->loc, "loop step must not be zero");
          return false;
        }
        if (c == 1) step = NULL;
      }
    }
    mins[0] = lo;
    int64_t c;
    exts[0] = (tl_expr_is_const_int(lo, &c) && c == 0) ? hi : chk(E, tl_ir_binary(E->m, it->loc, TL_OP_SUB, hi, lo));
    if (!exts[0]) return false;
  }
  tl_var **vars = malloc_ir(E, sizeof(tl_var *) * (size_t)nvars);
  if (!vars) return false;
  for (int i = 0; i < nvars; i++) {
    if (!check_loop_name(E, names[i]->u.name, names[i]->loc)) return false;
    for (int j = 0; j < i; j++)
      if (names[j]->u.name == names[i]->u.name) {
        err(E, names[i]->loc, "duplicate loop variable '%s'", names[i]->u.name);
        return false;
      }
    tl_dtype dt = exts[i]->dtype.code == TL_TYPE_INT && exts[i]->dtype.bits == 64 ? TL_INT64 : TL_INT32;
    if (!(vars[i] = tl_ir_new_var(E->m, names[i]->loc, loop_var_name(E, names[i]->u.name), dt, TL_VAR_LOOP)))
      return oom(E), false;
  }
  if (!push_scope(E, true)) return false;
  scope *sc = E->sc;
  bool ok = true;
  for (int i = 0; ok && i < nvars; i++) {
    val *vv = mk_expr(E, chk(E, tl_ir_var(E->m, names[i]->loc, vars[i])));
    ok = vv && bind(E, sc, names[i]->u.name, vv, names[i]->loc, BK_LOOP);
  }
  stmt_vec body = {0};
  if (ok) ok = elab_block(E, &s->u.loop.body, &body);
  pop_scope(E, sc);
  tl_stmt *b = ok ? make_seq(E, s->loc, &body) : NULL;
  tl_vec_free(&body);
  if (!b) return false;
  if (!grid) {
    tl_stmt *f = tl_el_new_for(E, s->loc, lk, nvars, vars, mins, exts, step, num_stages, b);
    if (f && lk == TL_LOOP_PIPELINED && !tl_el_pipelined_schedule(E, it, f)) return false;
    return emit(E, out, f);
  }
  for (int i = nvars - 1; b && i >= 0; i--)
    b = tl_el_new_for(E, s->loc, lk, 1, &vars[i], &mins[i], &exts[i], NULL, -1, b);
  return emit(E, out, b);
}

/* ------------------------------------------------------------ T.Kernel */

/* threads=(x, y[, z]) of T.Kernel (TileLang's thread block dimensions):
 * the kernel gets x*y*z threads (*threads); E->thread_dims keeps them for
 * T.get_thread_binding. */
static bool kernel_thread_dims(elab *E, val *tv, tl_loc loc, tl_expr **threads) {
  int n = tv->u.tup.n;
  if (n < 1 || n > 3) {
    err(E, loc, "threads takes 1 to 3 thread block dimensions, got %d", n);
    return false;
  }
  tl_expr *total = NULL;
  for (int i = 0; i < n; i++) {
    tl_expr *d = to_int_expr(E, tv->u.tup.items[i], loc, "a thread block dimension");
    int64_t c;
    if (!d) return false;
    if (!tl_expr_is_const_int(d, &c) || c < 1) {
      err(E, loc, "thread block dimension %d must be a positive constant integer", i);
      return false;
    }
    E->thread_dims[i] = d;
    total = total ? chk(E, tl_ir_binary(E->m, loc, TL_OP_MUL, total, d)) : d;
    if (!total) return false;
  }
  E->nthread_dims = n;
  *threads = total;
  return true;
}

/* T.get_thread_binding(dim) in a kernel with threads=(x, y[, z]): the
 * coordinate dim of the thread index t = T.get_thread_binding(0) of the
 * kernel's x*y*z threads: t % x, t / x % y, t / (x * y); 0 beyond the
 * given dimensions.  NULL when the kernel's threads are an integer. */
tl_expr *tl_el_thread_coord(elab *E, int64_t dim, tl_loc loc) {
  if (!E->nthread_dims) return NULL;
  if (dim >= E->nthread_dims) return lit_int(E, loc, 0);
  tl_expr *zero = lit_int(E, loc, 0);
  tl_expr *t = zero ? chk(E, tl_ir_call(E->m, loc, TL_INTRIN_GET_THREAD_BINDING, 1, &zero)) : NULL;
  for (int64_t i = 0; t && i < dim; i++) t = chk(E, tl_ir_binary(E->m, loc, TL_OP_FLOORDIV, t, E->thread_dims[i]));
  if (t && dim + 1 < E->nthread_dims) t = chk(E, tl_ir_binary(E->m, loc, TL_OP_FLOORMOD, t, E->thread_dims[dim]));
  return t;
}

static bool elab_kernel(elab *E, const tl_ast_stmt *s, stmt_vec *out) {
  const tl_ast_expr *x = s->u.with.ctx, *tg = s->u.with.target;
  if (E->in_kernel) {
    err(E, s->loc, "nested T.Kernel is not supported");
    return false;
  }
  /* several T.Kernel scopes, one after another, are the stages of one
   * launch sequence (lib/Lower/split_kernels.c); the verifier checks that
   * they are statements of the prim_func's body itself */
  E->nkernels++;
  static const char *const kws[] = {"threads", NULL};
  if (!check_kws(E, x, "T.Kernel", kws)) return false;
  int n = x->u.call.nargs;
  if (n < 1 || n > 3) {
    err(E, x->loc, "T.Kernel takes 1 to 3 grid dimensions, got %d", n);
    return false;
  }
  tl_stmt *k = tl_ir_stmt(E->m, s->loc, TL_STMT_KERNEL);
  if (!k) return oom(E), false;
  k->u.kernel.ngrid = n;
  for (int i = 0; i < n; i++)
    if (!(k->u.kernel.grid[i] = eval_int(E, x->u.call.args[i], "a grid dimension"))) return false;
  const tl_ast_keyword *tk = find_kw(x, "threads");
  if (tk) {
    val *tv = eval(E, tk->value);
    if (!tv) return false;
    if (tv->k == V_TUPLE) {
      if (!kernel_thread_dims(E, tv, tk->value->loc, &k->u.kernel.threads)) return false;
    } else if (!(k->u.kernel.threads = to_int_expr(E, tv, tk->value->loc, "threads"))) {
      return false;
    }
  } else if (!(k->u.kernel.threads = lit_int(E, x->loc, 128))) {
    return false;
  }
  int64_t nt = 0;
  E->kernel_threads = tl_expr_is_const_int(k->u.kernel.threads, &nt) ? nt : 0;
  E->role_lo = 0, E->role_hi = E->kernel_threads;
  E->tid_lets.len = 0;
  E->thread_lets.len = 0;
  static const char *const dflt[3] = {"bx", "by", "bz"};
  const tl_ast_expr *names[3] = {NULL, NULL, NULL};
  if (tg) {
    int nn = 1;
    if (tg->kind == TL_AST_TUPLE || tg->kind == TL_AST_LIST) {
      nn = tg->u.list.n;
      for (int i = 0; i < nn && i < 3; i++) names[i] = tg->u.list.items[i];
    } else {
      names[0] = tg;
    }
    if (nn != n) {
      err(E, tg->loc, "T.Kernel has %d grid dimension%s but 'as' binds %d name%s", n, n == 1 ? "" : "s", nn,
          nn == 1 ? "" : "s");
      return false;
    }
    for (int i = 0; i < n; i++)
      if (names[i]->kind != TL_AST_NAME) {
        err(E, names[i]->loc, "a block index must be bound to a plain name");
        return false;
      }
  }
  for (int i = 0; i < n; i++) {
    const char *nm = names[i] ? names[i]->u.name : intern(E, dflt[i]);
    tl_loc l = names[i] ? names[i]->loc : x->loc;
    if (!nm) return false;
    if (names[i] && !check_new_name(E, nm, l)) return false;
    for (int j = 0; j < i; j++)
      if (names[j] && names[i] && names[j]->u.name == nm) {
        err(E, l, "duplicate block index name '%s'", nm);
        return false;
      }
    if (!(k->u.kernel.block_vars[i] = tl_ir_new_var(E->m, l, nm, TL_INT32, TL_VAR_BLOCK))) return oom(E), false;
  }
  if (!push_scope(E, true)) return false;
  scope *sc = E->sc;
  bool ok = true;
  for (int i = 0; ok && i < n; i++) {
    if (!names[i]) continue;
    val *vv = mk_expr(E, chk(E, tl_ir_var(E->m, names[i]->loc, k->u.kernel.block_vars[i])));
    ok = vv && bind(E, sc, names[i]->u.name, vv, names[i]->loc, BK_BLOCK);
  }
  stmt_vec body = {0};
  E->in_kernel = true;
  if (ok) ok = elab_block(E, &s->u.with.body, &body);
  E->in_kernel = false;
  E->nthread_dims = 0;
  pop_scope(E, sc);
  /* the T.alloc_global allocations first (kernel workspaces: the top of the kernel body) */
  size_t ng = E->global_allocs.len;
  if (ok && ng && !tl_vec_reserve(&body, body.len + ng)) ok = (oom(E), false);
  if (ok && ng) {
    memmove(body.data + ng, body.data, sizeof(tl_stmt *) * body.len);
    memcpy(body.data, E->global_allocs.data, sizeof(tl_stmt *) * ng);
    body.len += ng;
  }
  E->global_allocs.len = 0; /* placed (or the kernel failed: no second error for them) */
  tl_stmt *b = ok ? make_seq(E, s->loc, &body) : NULL;
  tl_vec_free(&body);
  if (!b) return false;
  k->u.kernel.body = b;
  return emit(E, out, k);
}

/* ------------------------------------------------------------ tile ops */

bool region_from(elab *E, val *v, tl_operand *o, tl_loc loc) {
  o->kind = TL_OPND_REGION;
  o->loc = loc;
  tl_region *r = &o->region;
  if (v->k == V_BUFFER) {
    tl_buffer *b = v->u.buf;
    r->buffer = b;
    r->ndim = b->ndim;
    if (b->ndim > 0) {
      r->min = malloc_ir(E, sizeof(tl_expr *) * (size_t)b->ndim);
      r->extent = malloc_ir(E, sizeof(tl_expr *) * (size_t)b->ndim);
      if (!r->min || !r->extent) return false;
      for (int d = 0; d < b->ndim; d++) {
        if (!(r->min[d] = lit_int(E, loc, 0))) return false;
        r->extent[d] = b->shape[d];
      }
    }
    return true;
  }
  int n = v->u.ref.n;
  r->buffer = v->u.ref.buf;
  r->ndim = n;
  r->min = malloc_ir(E, sizeof(tl_expr *) * (size_t)(n ? n : 1));
  r->extent = malloc_ir(E, sizeof(tl_expr *) * (size_t)(n ? n : 1));
  if (!r->min || !r->extent) return false;
  for (int d = 0; d < n; d++) {
    r->min[d] = v->u.ref.items[d].min;
    r->extent[d] = v->u.ref.items[d].extent;
  }
  return true;
}

/* T.annotate_layout({buf: layout, ...}): (region, layout-name) pairs. */
static bool layout_pairs(elab *E, const tl_ast_expr *a, operand_vec *ops) {
  if (a->kind != TL_AST_DICT) {
    err(E, a->loc, "T.annotate_layout expects a dict {buffer: layout}");
    return false;
  }
  for (int i = 0; i < a->u.dict.n; i++) {
    const tl_ast_expr *k = a->u.dict.keys[i], *lv = a->u.dict.values[i];
    val *kv = eval(E, k);
    if (!kv) return false;
    if (kv->k != V_BUFFER) {
      err_val(E, k->loc, kv, "T.annotate_layout keys must be buffers, got %s", describe(E, kv));
      return false;
    }
    if (kv->u.buf->scope == TL_SCOPE_GLOBAL) { /* a T.Layout permutes its memory (elab_lang_ops.c) */
      if (!tl_el_global_layout(E, kv, k, lv)) return false;
      continue;
    }
    tl_operand ko = {0}, vo = {0};
    if (!region_from(E, kv, &ko, k->loc)) return false;
    vo.kind = TL_OPND_EXPR;
    vo.loc = lv->loc;
    const char *lname = NULL;
    if (lv->kind == TL_AST_STR) {
      lname = lv->u.str;
    } else if (lv->kind == TL_AST_CALL) {
      const tl_ast_expr *f = lv->u.call.func;
      lname = f->kind == TL_AST_ATTR ? f->u.attr.name : f->kind == TL_AST_NAME ? f->u.name : NULL;
    }
    if (!lname) {
      err(E, lv->loc,
          "unsupported layout; expected a layout constructor call such as "
          "make_swizzled_layout(buf)");
      return false;
    }
    if (!(vo.expr = chk(E, tl_ir_string(E->m, lv->loc, lname)))) return false;
    if (!tl_vec_push(ops, ko) || !tl_vec_push(ops, vo)) return oom(E), false;
  }
  return true;
}

tl_expr *attr_value(elab *E, int op, int ai, val *v, tl_loc loc) {
  const tl_tile_op_info *info = &tl_tile_ops[op];
  const tl_attr_info *a = &info->attrs[ai];
  switch (a->kind) {
  case TL_ATTR_BOOL:
    if (v->k != V_BOOL) {
      err_val(E, loc, v, "'%s' of T.%s must be True or False, got %s", a->name, info->name, describe(E, v));
      return NULL;
    }
    if (v->u.b == (a->default_int != 0)) return NULL;
    return chk(E, tl_ir_int(E->m, loc, TL_BOOL, v->u.b));
  case TL_ATTR_INT: {
    int64_t i;
    if (v->k != V_INT) {
      err_val(E, loc, v, "'%s' of T.%s must be an integer constant, got %s", a->name, info->name, describe(E, v));
      return NULL;
    }
    i = v->u.i;
    if (i == a->default_int) return NULL;
    return lit_int(E, loc, i);
  }
  case TL_ATTR_POLICY:
    if (v->k != V_POLICY) {
      err_val(E, loc, v, "'%s' of T.%s must be a T.GemmWarpPolicy, got %s", a->name, info->name, describe(E, v));
      return NULL;
    }
    if (v->u.policy == a->default_int) return NULL;
    return lit_int(E, loc, v->u.policy);
  case TL_ATTR_STRING:
    if (v->k != V_STR) {
      err_val(E, loc, v, "'%s' of T.%s must be a string, got %s", a->name, info->name, describe(E, v));
      return NULL;
    }
    if (a->default_str && !strcmp(a->default_str, v->u.s)) return NULL;
    return chk(E, tl_ir_string(E->m, loc, v->u.s));
  default: return to_arg_expr(E, v, loc);
  }
}

/* Keyword names of the positional operands (TileLang's parameter names). */
static const char *operand_name(int op, int i) {
  static const char *const names[TL_TILE_NUM_OPS][4] = {
      [TL_TILE_COPY] = {"src", "dst"},
      [TL_TILE_GEMM] = {"A", "B", "C"},
      [TL_TILE_FILL] = {"buffer", "value"},
      [TL_TILE_CLEAR] = {"buffer"},
      [TL_TILE_REDUCE_MAX] = {"buffer", "out"},
      [TL_TILE_REDUCE_MIN] = {"buffer", "out"},
      [TL_TILE_REDUCE_SUM] = {"buffer", "out"},
      [TL_TILE_REDUCE_ABSSUM] = {"buffer", "out"},
      [TL_TILE_REDUCE_ABSMAX] = {"buffer", "out"},
      [TL_TILE_ATOMIC_ADD] = {"dst", "value"},
      [TL_TILE_USE_SWIZZLE] = {"panel_size"},
      [TL_TILE_ANNOTATE_LAYOUT] = {"layout_map"},
      [TL_TILE_ASYNC_COPY] = {"src", "dst"},
      [TL_TILE_ATOMIC_MAX] = {"dst", "value"},
      [TL_TILE_ATOMIC_MIN] = {"dst", "value"},
      [TL_TILE_ATOMIC_ADDX2] = {"dst", "value"},
      [TL_TILE_ATOMIC_ADDX4] = {"dst", "value"},
      [TL_TILE_FINALIZE_REDUCER] = {"reducer"},
      [TL_TILE_THREAD_ALLREDUCE] = {"dst", "value"},
      [TL_TILE_GEMM_SP] = {"A_sparse", "E", "B", "C"},
  };
  if (op < 0 || op >= TL_TILE_NUM_OPS || i < 0 || i >= 4) return NULL;
  return names[op][i];
}

/* Corner-only operands (all single indices): T.copy (and T.atomic_add /
 * _max / _min with a region value) takes the other operand's extents,
 * right-aligned, leading dims 1; others keep extent 1. */
static void copy_corner_extents(operand_vec *ops, const bool *corner) {
  for (size_t i = 0; i < ops->len && i < 8; i++) {
    if (!corner[i]) continue;
    tl_operand *o = &ops->data[i], *other = NULL;
    for (size_t j = 0; j < ops->len && !other; j++)
      if (j != i && !corner[j] && ops->data[j].kind == TL_OPND_REGION) other = &ops->data[j];
    if (!other) continue;
    int d = o->region.ndim, k = other->region.ndim;
    for (int t = 0; t < d; t++) {
      int src = k - d + t;
      if (src >= 0) o->region.extent[t] = other->region.extent[src];
    }
  }
}

/* T.copy, and T.atomic_add / _max / _min (not addx2/x4): T.atomic_add(C[i0,
 * j0], C_local) (TileLang's split-K form) takes the value region's extents. */
static bool takes_corner_extents(int op) {
  int lanes = 1;
  return op == TL_TILE_COPY || (tl_tile_atomic_intrin(op, &lanes) >= 0 && lanes == 1);
}

/* A tile op's attributes given as positional arguments after its nops
 * operands: attrs[i] and given[i] for each. */
static bool positional_attrs(elab *E, int op, const tl_ast_expr *x, const char *fn, int nops, tl_expr **attrs,
                             bool *given) {
  const tl_tile_op_info *info = &tl_tile_ops[op];
  int nargs = x->u.call.nargs;
  for (int i = nops; i < nargs; i++) {
    const tl_ast_expr *a = x->u.call.args[i];
    int ai = i - nops;
    val *v = eval(E, a);
    if (!v) return false;
    if ((v->k == V_BUFFER || v->k == V_BUFREF) && info->attrs[ai].kind != TL_ATTR_EXPR) {
      err(E, x->loc, "%s takes %d positional argument%s, got %d", fn, nops, nops == 1 ? "" : "s", nargs);
      return false;
    }
    given[ai] = true;
    int before = E->nerr;
    attrs[ai] = attr_value(E, op, ai, v, a->loc);
    if (E->nerr != before) return false;
  }
  return true;
}

bool elab_tile(elab *E, int op, const tl_ast_expr *x, tl_loc loc, stmt_vec *out) {
  const tl_tile_op_info *info = &tl_tile_ops[op];
  const char *fn = tprintf(E, "T.%s", info->name);
  int nops = (int)strlen(info->operands), nargs = x->u.call.nargs, nattrs = info->nattrs;
  bool pairs = info->operands[0] == 'D';
  operand_vec ops = {0};
  tl_expr **attrs = nattrs ? malloc_ir(E, sizeof(tl_expr *) * (size_t)nattrs) : NULL;
  bool *given = nattrs ? talloc(E, sizeof(bool) * (size_t)nattrs) : NULL;
  bool ok = !nattrs || (attrs && given), by_ann[8] = {false}; /* by_ann: set by T.copy's annotations= */
  /* Operands may also be passed by keyword (T.use_swizzle(panel_size=10)). */
  const tl_ast_expr *opnd[8] = {NULL};
  const tl_ast_keyword *opkw[8] = {NULL};
  int nkwops = 0;
  for (int i = 0; i < nops && i < 8; i++) {
    if (i < nargs) {
      opnd[i] = x->u.call.args[i];
      continue;
    }
    const char *on = operand_name(op, i);
    const tl_ast_keyword *k = on ? find_kw(x, on) : NULL;
    if (k) {
      opnd[i] = k->value;
      opkw[i] = k;
      nkwops++;
    }
  }
  if (ok && nargs + nkwops < nops) {
    err(E, x->loc, "%s takes %d positional argument%s, got %d", fn, nops, nops == 1 ? "" : "s", nargs);
    ok = false;
  }
  if (ok && nargs > nops + nattrs) {
    if (nattrs)
      err(E, x->loc, "%s takes at most %d positional arguments (%d operands and %d attributes), got %d", fn,
          nops + nattrs, nops, nattrs, nargs);
    else err(E, x->loc, "%s takes %d positional argument%s, got %d", fn, nops, nops == 1 ? "" : "s", nargs);
    ok = false;
  }
  /* Operands. */
  bool corner[8] = {false};
  if (ok && !pairs && nops > 8) {
    err(E, x->loc, "internal error: %s has too many operands", fn);
    ok = false;
  }
  for (int i = 0; ok && i < nops; i++) {
    const tl_ast_expr *a = opnd[i];
    char c = info->operands[i];
    if (pairs) {
      ok = layout_pairs(E, a, &ops);
      break;
    }
    val *v = eval(E, a);
    if (!v) {
      ok = false;
      break;
    }
    tl_operand o = {0};
    bool region = v->k == V_BUFREF || (v->k == V_BUFFER && v->u.buf->scope != TL_SCOPE_LOCAL_VAR);
    int lanes = 1;
    (void)tl_tile_atomic_intrin(op, &lanes);
    if (c == 'X' && v->k == V_BUFREF && v->u.ref.corner && lanes == 1) region = false;
    if (c == 'R' && v->k == V_BUFFER) region = true;
    if (c == 'E') region = false;
    if (region) {
      ok = region_from(E, v, &o, a->loc);
      corner[i] = v->k == V_BUFREF && v->u.ref.corner;
      /* T.atomic_addx2/x4(B[i, j], A[i, j]): lanes elements from the corner */
      if (ok && corner[i] && lanes > 1 && o.region.ndim > 0)
        ok = (o.region.extent[o.region.ndim - 1] = lit_int(E, a->loc, lanes)) != NULL;
    } else if (c == 'R') {
      err_val(E, a->loc, v, "operand %d of %s must be a buffer or a buffer region, got %s", i + 1, fn, describe(E, v));
      ok = false;
    } else {
      o.kind = TL_OPND_EXPR;
      o.loc = a->loc;
      ok = (o.expr = to_expr(E, v, a->loc)) != NULL;
    }
    if (ok && !tl_vec_push(&ops, o)) {
      oom(E);
      ok = false;
    }
  }
  if (ok && !pairs && takes_corner_extents(op)) copy_corner_extents(&ops, corner);
  /* Attributes: extra positional arguments, then keywords. */
  if (ok) ok = positional_attrs(E, op, x, fn, nops, attrs, given);
  for (int i = 0; ok && i < x->u.call.nkw; i++) {
    const tl_ast_keyword *k = &x->u.call.kw[i];
    bool is_opnd = false;
    for (int j = 0; j < nops && j < 8; j++) is_opnd |= opkw[j] == k;
    if (is_opnd) continue;
    for (int j = 0; j < nargs && j < nops; j++)
      if (k->name && operand_name(op, j) && !strcmp(operand_name(op, j), k->name)) {
        err(E, k->loc, "%s got multiple values for '%s'", fn, k->name);
        ok = false;
      }
    if (!ok) break;
    int ai = k->name ? tl_tile_op_attr_index(op, k->name) : -1;
    if (op == TL_TILE_COPY && k->name && !strcmp(k->name, "annotations")) { /* its values win over keywords */
      ok = tl_el_copy_annotations(E, op, k, fn, attrs, given, by_ann);
      continue;
    }
    if (ai < 0) {
      err(E, k->loc, "unknown keyword '%s' for %s", k->name ? k->name : "**", fn);
      ok = false;
      break;
    }
    if (given[ai] && ai < 8 && by_ann[ai]) continue;
    if (given[ai]) {
      err(E, k->loc, "%s got multiple values for '%s'", fn, k->name);
      ok = false;
      break;
    }
    given[ai] = true;
    val *v = eval(E, k->value);
    if (!v) {
      ok = false;
      break;
    }
    int before = E->nerr;
    attrs[ai] = attr_value(E, op, ai, v, k->value->loc);
    if (E->nerr != before) ok = false;
  }
  if (ok && !pairs) { /* an operand that is a T.view / T.reshape or has a global T.Layout */
    bool handled;
    ok = tl_el_view_tile(E, op, &ops, attrs, loc, out, &handled);
    if (handled || !ok) {
      tl_vec_free(&ops);
      return ok;
    }
  }
  if (!ok) {
    tl_vec_free(&ops);
    return false;
  }
  tl_stmt *s = tl_ir_stmt(E->m, loc, TL_STMT_TILE);
  if (!s) {
    tl_vec_free(&ops);
    return oom(E), false;
  }
  s->u.tile.op = op;
  s->u.tile.nargs = (int)ops.len;
  s->u.tile.args = ops.len ? malloc_ir(E, sizeof(tl_operand) * ops.len) : NULL;
  if (ops.len && !s->u.tile.args) {
    tl_vec_free(&ops);
    return false;
  }
  if (ops.len) memcpy(s->u.tile.args, ops.data, sizeof(tl_operand) * ops.len);
  s->u.tile.attrs = attrs;
  tl_vec_free(&ops);
  return emit(E, out, s);
}

/* ---------------------------------------------------------- out_idx */

/* Sets pf's out_idx from v (int, list of ints, None), normalized by the
 * one rule (tl_out_idx_normalize: range, duplicates, scalar and strided
 * parameters), an error at the refused entry. */
bool set_out_idx(elab *E, tl_primfunc *pf, val *v, const tl_ast_expr *ast) {
  if (!v) return false;
  if (v->k == V_NONE) {
    pf->has_out_idx = false;
    pf->nout = 0;
    pf->out_idx = NULL;
    return true;
  }
  int n = 1;
  val *const *items = &v;
  if (v->k == V_TUPLE) {
    n = v->u.tup.n;
    items = v->u.tup.items;
  } else if (v->k != V_INT) {
    err_val(E, ast->loc, v, "out_idx must be an int, a list of ints or None, got %s", describe(E, v));
    return false;
  }
  int *idx = n ? malloc_ir(E, sizeof(int) * (size_t)n) : NULL;
  int64_t *given = n ? malloc_ir(E, sizeof(int64_t) * (size_t)n) : NULL;
  if (n && (!idx || !given)) return false;
#define OUT_IDX_LOC(i)                                                                                                 \
  ((v->k == V_TUPLE && (ast->kind == TL_AST_LIST || ast->kind == TL_AST_TUPLE) && ast->u.list.n == n)                  \
       ? ast->u.list.items[i]->loc                                                                                     \
       : ast->loc)
  for (int i = 0; i < n; i++) {
    if (items[i]->k != V_INT) {
      err_val(E, OUT_IDX_LOC(i), items[i], "out_idx entries must be integers, got %s", describe(E, items[i]));
      return false;
    }
    given[i] = items[i]->u.i;
  }
  size_t bad = 0;
  char msg[320];
  if (!tl_out_idx_normalize_func(pf, given, (size_t)n, idx, &bad, msg, sizeof msg)) {
    err_val(E, OUT_IDX_LOC(bad), items[bad], "%s", msg);
    return false;
  }
#undef OUT_IDX_LOC
  pf->has_out_idx = n > 0;
  pf->nout = n;
  pf->out_idx = n ? idx : NULL;
  return true;
}

/* A boolean pass config (key "tl.enable_fast_math", "tl.disable_wgmma",
 * ...): v must be a bool (or 0/1); sets *on. */
bool pass_config_value(elab *E, const char *key, val *v, const tl_ast_expr *ast, bool *on) {
  if (!v) return false;
  int row = tl_pass_config_index(key);
  if (row >= 0 && tl_pass_config_table[row].kind == TL_PASS_CONFIG_BITWIDTH) { /* a bit width, not a bool */
    if (v->k != V_INT || (v->u.i != 32 && v->u.i != 64)) {
      err_val(E, ast->loc, v, "\"%s\" must be 32 or 64, got %s", key, describe(E, v));
      return false;
    }
    *on = v->u.i == 64;
    return true;
  }
  if (v->k != V_BOOL && !(v->k == V_INT && (v->u.i == 0 || v->u.i == 1))) {
    err_val(E, ast->loc, v, "\"%s\" must be True or False, got %s", key, describe(E, v));
    return false;
  }
  *on = v->k == V_BOOL ? v->u.b : v->u.i != 0;
  return true;
}

/* The field of *configs that key names (a row of the pass-config table,
 * whose bit in configs->given is set: the caller sets the value); NULL for
 * another key. */
bool *pass_config_slot(const char *key, tl_pass_configs *configs) {
  int i = tl_pass_config_index(key);
  tl_pass_config_mark_given(configs, i);
  return i >= 0 ? tl_pass_config_field(configs, i) : NULL;
}

static bool elab_func_attr(elab *E, const tl_ast_expr *x) {
  if (!check_kws(E, x, "T.func_attr", NULL) || !check_arity(E, x, "T.func_attr", 1, 1)) return false;
  const tl_ast_expr *a = x->u.call.args[0];
  if (a->kind != TL_AST_DICT) {
    err(E, a->loc, "T.func_attr expects a dict of attributes");
    return false;
  }
  for (int i = 0; i < a->u.dict.n; i++) {
    val *k = eval(E, a->u.dict.keys[i]);
    if (!k) return false;
    bool is_out = k->k == V_STR && !strcmp(k->u.s, "out_idx");
    bool *slot = k->k == V_STR ? pass_config_slot(k->u.s, &E->pf->pass_configs) : NULL;
    if (!is_out && !slot) {
      if (k->k == V_STR)
        err(E, a->u.dict.keys[i]->loc, "unsupported function attribute '%.100s' (understood: \"out_idx\", %s)", k->u.s,
            tl_pass_config_key_list(true));
      else err_val(E, a->u.dict.keys[i]->loc, k, "function attribute names must be strings, got %s", describe(E, k));
      return false;
    }
    val *v = eval(E, a->u.dict.values[i]);
    if (slot) {
      if (!pass_config_value(E, k->u.s, v, a->u.dict.values[i], slot)) return false;
    } else if (!v || !set_out_idx(E, E->pf, v, a->u.dict.values[i])) {
      return false;
    }
  }
  return true;
}

/* ------------------------------------------------------ statement list */

bool elab_expr_stmt(elab *E, const tl_ast_stmt *s, stmt_vec *out) {
  const tl_ast_expr *x = s->u.expr;
  if (x->kind == TL_AST_STR) return true; /* docstring */
  if (x->kind == TL_AST_CALL) {
    const char *tn = t_callee(E, x);
    if (tn) {
      int op = tl_tile_op_lookup(tn);
      if (op >= 0) return elab_tile(E, op, x, s->loc, out);
      bool handled;
      bool r = tl_el_lang_stmt(E, tn, x, s->loc, out, &handled);
      if (handled) return r;
      if (!strcmp(tn, "ptx_cp_async") && !(x->u.call.nargs == 6 && x->u.call.nkw == 0)) /* 6: the SIMT form */
        return tl_el_ptx_cp_async(E, x, s->loc, out);
      r = tl_el_ws_stmt(E, tn, x, s->loc, out, &handled);
      if (handled) return r;
      if (!strcmp(tn, "func_attr")) return elab_func_attr(E, x);
    }
    val *v = eval(E, x);
    if (!v) return false;
    if (v->k == V_NONE) return true;
    if (v->k == V_EXPR) {
      tl_stmt *st = tl_ir_stmt(E->m, s->loc, TL_STMT_EVAL);
      if (!st) return oom(E), false;
      st->u.eval.value = v->u.e;
      return emit(E, out, st);
    }
  } else if (!eval(E, x)) {
    return false;
  }
  err(E, x->loc, "this expression statement has no effect");
  return false;
}

static bool elab_if(elab *E, const tl_ast_stmt *s, stmt_vec *out) {
  val *c = eval(E, s->u.ifs.test);
  if (!c) return false;
  bool t;
  if (!is_ir(c) && truthy(c, &t)) /* compile-time condition: only the taken branch */
    return elab_block(E, t ? &s->u.ifs.body : &s->u.ifs.orelse, out);
  tl_expr *ce = to_expr(E, c, s->u.ifs.test->loc);
  if (!ce) return false;
  tl_el_role r; /* a role branch on the thread index: each branch sees its threads */
  bool role = tl_el_role_begin(E, ce, &r);
  if (role) E->role_lo = r.lo, E->role_hi = r.hi;
  tl_stmt *th = tl_el_body(E, &s->u.ifs.body, s->loc), *el = NULL;
  if (role) E->role_lo = r.else_lo, E->role_hi = r.else_hi;
  if (th && s->u.ifs.orelse.n) el = tl_el_body(E, &s->u.ifs.orelse, s->u.ifs.orelse.stmts[0]->loc);
  if (role) E->role_lo = r.outer_lo, E->role_hi = r.outer_hi;
  if (!th || (s->u.ifs.orelse.n && !el)) return false;
  if (role) return tl_el_role_end(E, s, &r, ce, th, el, out);
  tl_stmt *is = tl_ir_stmt(E->m, s->loc, TL_STMT_IF);
  if (!is) return oom(E), false;
  is->u.ifs.cond = ce;
  is->u.ifs.then_s = th;
  is->u.ifs.else_s = el;
  return emit(E, out, is);
}

/* Why statement kind k cannot stand in a @T.prim_func (the message). */
static const char *unsupported_in_prim_func(elab *E, tl_ast_stmt_kind k) {
  switch (k) {
  case TL_AST_RETURN:
    return E->macro_depth ? "'return' in a @T.macro must be its last statement, outside loops and "
                            "conditions"
                          : "'return' is not supported in a @T.prim_func";
  case TL_AST_DEF: return "nested functions are not supported in a @T.prim_func";
  case TL_AST_IMPORT: return "'import' is not supported in a @T.prim_func; import at module level";
  case TL_AST_BREAK: return "'break' is not supported in a @T.prim_func";
  case TL_AST_CONTINUE: return "'continue' is not supported in a @T.prim_func";
  default: return tprintf(E, "%s is not supported in a @T.prim_func", stmt_name(k));
  }
}

static bool elab_stmt_in(elab *E, const tl_ast_stmt *s, stmt_vec *out);

/* One statement; a macro or helper called in it emits into out first. */
static bool elab_stmt(elab *E, const tl_ast_stmt *s, stmt_vec *out) {
  stmt_vec *saved = E->stmt_out;
  int saved_helper = E->helper_depth;
  E->stmt_out = out;
  E->helper_depth = 0;
  bool ok = elab_stmt_in(E, s, out);
  E->stmt_out = saved;
  E->helper_depth = saved_helper;
  return ok;
}

static bool elab_stmt_in(elab *E, const tl_ast_stmt *s, stmt_vec *out) {
  switch (s->kind) {
  case TL_AST_EXPR_STMT: return elab_expr_stmt(E, s, out);
  case TL_AST_ASSIGN: {
    const tl_ast_expr *value = s->u.assign.value;
    const char *tn = t_callee(E, value);
    if (tn && (!strcmp(tn, "alloc_shared") || !strcmp(tn, "alloc_fragment") || !strcmp(tn, "alloc_local") ||
               !strcmp(tn, "alloc_var") || !strcmp(tn, "alloc_buffer") || !strcmp(tn, "alloc_global") ||
               !strcmp(tn, "alloc_reducer") || !strcmp(tn, "alloc_barrier") || !strcmp(tn, "make_tensor"))) {
      if (s->u.assign.ntargets != 1) {
        err(E, s->loc, "the result of T.%s must be assigned to exactly one name", tn);
        return false;
      }
      if (!strcmp(tn, "alloc_barrier")) return tl_el_alloc_barrier(E, s->u.assign.targets[0], value, s->loc, out);
      if (!strcmp(tn, "make_tensor")) return tl_el_make_tensor(E, s->u.assign.targets[0], value, s->loc, out);
      return elab_alloc(E, s->u.assign.targets[0], tn, value, s->loc, out);
    }
    val *v = eval(E, value);
    if (!v) return false;
    for (int i = 0; i < s->u.assign.ntargets; i++)
      if (!assign_target(E, s->u.assign.targets[i], v, value->loc, out)) return false;
    return true;
  }
  case TL_AST_AUGASSIGN: return elab_augassign(E, s, out);
  case TL_AST_ANNASSIGN: {
    const tl_ast_expr *t = s->u.ann.target;
    if (t->kind != TL_AST_NAME) {
      err(E, t->loc, "an annotated assignment needs a plain name");
      return false;
    }
    val *av = eval(E, s->u.ann.annotation);
    tl_dtype dt;
    if (!av || !to_dtype(E, av, s->u.ann.annotation->loc, &dt)) return false;
    if (!s->u.ann.value) {
      err(E, t->loc, "a declaration needs a value; use T.alloc_var for a mutable scalar");
      return false;
    }
    val *v = eval(E, s->u.ann.value);
    return v && assign_name(E, t, v, s->u.ann.value->loc, out, &dt);
  }
  case TL_AST_FOR: return elab_for(E, s, out);
  case TL_AST_WITH: {
    const tl_ast_expr *c = s->u.with.ctx;
    const char *tn = t_callee(E, c);
    if (!tn && c->kind == TL_AST_CALL) {
      val *fv = eval(E, c->u.call.func);
      if (!fv) return false;
      if (fv->k == V_FUNC && !fv->builtin) tn = fv->u.fname;
    }
    if (tn && !strcmp(tn, "ws")) return tl_el_ws_scope(E, s, out);
    if (tn && !strcmp(tn, "attr") && E->in_kernel) return tl_el_thread_allreduce(E, s, out);
    if (!tn || strcmp(tn, "Kernel")) {
      err(E, c->loc, "unsupported 'with' statement; expected T.Kernel(...), T.ws(...) or a thread allreduce");
      return false;
    }
    return elab_kernel(E, s, out);
  }
  case TL_AST_IF: return elab_if(E, s, out);
  case TL_AST_WHILE: return tl_el_while(E, s, out); /* elab_while.c */
  case TL_AST_PASS: return true;
  case TL_AST_ASSERT: return elab_assert(E, s);
  default: err(E, s->loc, "%s", unsupported_in_prim_func(E, s->kind)); return false;
  }
  err(E, s->loc, "unsupported statement");
  return false;
}

void poison_stmt_targets(elab *E, const tl_ast_stmt *s) {
  if (s->kind == TL_AST_ASSIGN)
    for (int i = 0; i < s->u.assign.ntargets; i++) poison(E, s->u.assign.targets[i]);
  else if (s->kind == TL_AST_ANNASSIGN) poison(E, s->u.ann.target);
}

bool elab_block(elab *E, const tl_ast_block *b, stmt_vec *out) {
  if (E->depth >= MAX_DEPTH) {
    if (b->n) err(E, b->stmts[0]->loc, "statements nested too deeply (limit %d)", MAX_DEPTH);
    return false;
  }
  E->depth++;
  bool ok = true;
  for (int i = 0; i < b->n && !E->oom; i++) {
    if (!elab_stmt(E, b->stmts[i], out)) {
      ok = false;
      poison_stmt_targets(E, b->stmts[i]);
    }
  }
  E->depth--;
  return ok && !E->oom;
}
