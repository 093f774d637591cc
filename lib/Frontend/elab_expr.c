/* Elaborator, part 2 (see elaborate.c for the algorithm): expressions —
 * names, attributes, subscripts of buffers and constants, calls of T.*
 * functions and Python builtins, comparisons, and the dispatch of every
 * AST expression kind (the kinds kernels cannot use are reported at their
 * location). */
#include "Frontend/elab_impl.h"
#include "IR/rewrite.h"

/* ============================================================ expressions */

static val *atomic_add_value(elab *E, const tl_ast_expr *x, const char *fn);
static val *warp_shuffle(elab *E, const tl_ast_expr *x, const char *fn);

static const char *const t_functions[] = {
    "prim_func",    "Tensor",       "Buffer",         "dynamic",      "symbolic",
    "Kernel",       "alloc_shared", "alloc_fragment", "alloc_local",  "alloc_var",
    "alloc_buffer", "alloc_global", "alloc_reducer",  "make_tensor",  "tvm_warp_shuffle",
    "Parallel",     "Pipelined",    "Persistent",     "serial",       "Serial",
    "grid",         "unroll",       "vectorized",     "func_attr",    "Cast",
    "cast",         "infinity",     "ceildiv",        "if_then_else", "Select",
    "max",          "min",          "Ramp",           "Broadcast",    "thread_binding",
    "const",        "empty",        "StridedTensor",  "Layout",       NULL};
static const char *const py_builtins[] = {"min",   "max",        "abs",   "int",  "float",     "bool",
                                          "len",   "range",      "print", "zip",  "enumerate", "list",
                                          "tuple", "isinstance", "str",   "dict", "sum",       NULL};

static val *mk_func(elab *E, const char *name, bool builtin) {
  val *v = mk(E, V_FUNC);
  if (!v) return NULL;
  v->u.fname = name;
  v->builtin = builtin;
  return v;
}

val *mk_ns(elab *E, int ns) {
  val *v = mk(E, V_NS);
  if (v) v->u.ns = ns;
  return v;
}

/* T.<name>, reported at name_loc when unknown. */
static val *t_member(elab *E, const char *name, tl_loc name_loc) {
  tl_dtype dt;
  if (tl_dtype_parse(name, &dt) || (!strcmp(name, "ptr") && (dt = TL_INT64, true))) /* T.ptr: pointer tables' */
    return mk_dtype(E, dt);
  if (!strcmp(name, "GemmWarpPolicy")) return mk_ns(E, NS_POLICY);
  if (!strcmp(name, "disable_warp_group_reg_alloc")) return mk_func(E, "no_set_max_nreg", false); /* TileLang's alias */
  if (in_list(t_functions, name) || in_list(lang_op_names, name) || in_list(tl_el_ws_names, name) ||
      tl_tile_op_lookup(name) >= 0 || tl_intrinsic_lookup(name) >= 0)
    return mk_func(E, name, false);
  if (tl_el_is_bit_op(name)) return mk_func(E, tprintf(E, "tirx.%s", name), false); /* T.bitwise_and: tirx's */
  if (tl_el_refuse_extern(E, name, name_loc)) return NULL;
  if (tilelang_has_name(name)) err(E, name_loc, "T.%s is not supported yet", name);
  else if (dtype_like(name)) err(E, name_loc, "unknown dtype 'T.%s'", name);
  else err(E, name_loc, "unknown name 'T.%s'", name);
  return NULL;
}

/* Item index of the value v of a module-level 'a, b = value' (lazy). */
static val *unpack_item(elab *E, val *v, int index, const val *whole, tl_loc use) {
  if (v->k == V_OPAQUE) return v; /* host values unpack into host values */
  int n = whole->u.lazy.index;    /* the target count */
  if (v->k == V_TUPLE && v->u.tup.n == n) return v->u.tup.items[index];
  err_val(E, use, v, "cannot unpack %s into %d names", describe(E, v), n);
  return NULL;
}

val *force(elab *E, val *lz, tl_loc use) {
  if (lz->u.lazy.cached) return lz->u.lazy.cached->k == V_POISON ? NULL : lz->u.lazy.cached;
  if (lz->u.lazy.busy) {
    err(E, use, "circular definition of a module constant");
    return NULL;
  }
  lz->u.lazy.busy = true;
  scope *sc = E->sc;
  tl_primfunc *pf = E->pf;
  int depth = E->depth;
  E->sc = E->module_scope;
  E->pf = NULL;
  val *v;
  if (lz->u.lazy.aug_op) { /* x op= value: the earlier x, then the value */
    val *a = lz->u.lazy.from;
    if (a && a->k == V_LAZY) a = force(E, a, use);
    val *b = a ? eval(E, lz->u.lazy.ast) : NULL;
    v = b ? binop(E, lz->u.lazy.aug_op, a, b, lz->u.lazy.aug_loc) : NULL;
  } else {
    v = lz->u.lazy.from ? force(E, lz->u.lazy.from, use) : eval(E, lz->u.lazy.ast);
    if (v && lz->u.lazy.from) v = unpack_item(E, v, lz->u.lazy.index, lz->u.lazy.from, use);
  }
  E->sc = sc;
  E->pf = pf;
  E->depth = depth;
  lz->u.lazy.busy = false;
  /* a failure while errors are quiet is not remembered: a kernel's use reports it */
  lz->u.lazy.cached = v ? v : E->quiet ? NULL : mk(E, V_POISON);
  return v;
}

static val *eval_name(elab *E, const tl_ast_expr *x) {
  binding *b = lookup(E, x->u.name, NULL);
  if (b) {
    val *v = b->v;
    if (v && v->k == V_LAZY && !(v = force(E, v, x->loc))) return NULL;
    if (!v || v->k == V_POISON) return NULL;
    if (v->k == V_EXPR && v->u.e->kind == TL_EXPR_VAR) {
      val *c = mk_expr(E, chk(E, tl_ir_var(E->m, x->loc, v->u.e->u.var)));
      if (c) c->origin = v->origin;
      return c;
    }
    return v;
  }
  if (in_list(py_builtins, x->u.name)) return mk_func(E, x->u.name, true);
  err(E, x->loc, "name '%s' is not defined", x->u.name);
  return NULL;
}

static val *get_attr(elab *E, val *v, const char *name, tl_loc name_loc) {
  switch (v->k) {
  case V_NS:
    if (v->u.ns == NS_T) return t_member(E, name, name_loc);
    if (v->u.ns == NS_TILELANG) {
      if (!strcmp(name, "language")) return mk_ns(E, NS_T);
      if (!strcmp(name, "jit")) return mk_ns(E, NS_JIT);
      if (!strcmp(name, "cdiv")) return mk_func(E, "ceildiv", false); /* tilelang.cdiv: T.ceildiv's meaning */
      if (!strcmp(name, "next_power_of_2")) return mk_func(E, "tilelang.next_power_of_2", true);
      return mk_opaque(E, tprintf(E, "tilelang.%s", name), "tilelang");
    }
    if (v->u.ns == NS_POLICY) {
      for (int i = 0; i < 3; i++)
        if (!strcmp(name, policy_names[i])) {
          val *p = mk(E, V_POLICY);
          if (p) p->u.policy = i;
          return p;
        }
      err(E, name_loc, "unknown GemmWarpPolicy '%s' (expected Square, FullRow or FullCol)", name);
      return NULL;
    }
    break;
  case V_OPAQUE: {
    const char *mod = v->u.op.module;
    if (mod && !strcmp(mod, "math") && !strcmp(v->u.op.desc, "math")) {
      if (!strcmp(name, "pi")) return mk_float(E, M_PI);
      if (!strcmp(name, "e")) return mk_float(E, M_E);
      if (!strcmp(name, "tau")) return mk_float(E, 2 * M_PI);
      if (!strcmp(name, "inf")) return mk_float(E, INFINITY);
      if (!strcmp(name, "nan")) return mk_float(E, NAN);
    }
    if (mod && !strcmp(mod, "tilelang") && !strcmp(v->u.op.desc, "tilelang.math")) {
      if (!strcmp(name, "cdiv")) return mk_func(E, "ceildiv", false);
      if (!strcmp(name, "next_power_of_2")) return mk_func(E, "tilelang.next_power_of_2", true);
    }
    if (mod && !strcmp(mod, "tilelang") && !strcmp(v->u.op.desc, "tilelang.PassConfigKey") &&
        !strncmp(name, "TL_", 3)) {
      /* tilelang.PassConfigKey.TL_ENABLE_FAST_MATH is the key "tl.enable_fast_math" */
      char *key = (char *)tprintf(E, "tl.%s", name + 3);
      for (char *c = key + 3; *c; c++) *c = (char)tolower((unsigned char)*c);
      return mk_str(E, key);
    }
    if (tl_el_is_tvm_tir(v)) return tl_el_tirx_member(E, name);
    tl_dtype dt;
    if (mod && !strcmp(mod, "torch") && !strcmp(v->u.op.desc, "torch") && tl_dtype_parse(name, &dt))
      return mk_dtype(E, dt);
    return mk_opaque(E, tprintf(E, "%s.%s", v->u.op.desc, name), mod);
  }
  case V_BUFFER: {
    tl_buffer *b = v->u.buf;
    if (!strcmp(name, "dtype")) return mk_dtype(E, b->dtype);
    if (!strcmp(name, "ndim")) return mk_int(E, b->ndim);
    if (!strcmp(name, "shape")) {
      val *t = mk_tuple(E, b->ndim, false);
      if (!t) return NULL;
      for (int i = 0; i < b->ndim; i++) {
        int64_t c;
        t->u.tup.items[i] = tl_expr_is_const_int(b->shape[i], &c) ? mk_int(E, c) : mk_expr(E, b->shape[i]);
        if (!t->u.tup.items[i]) return NULL;
      }
      return t;
    }
    break;
  }
  case V_EXPR:
    if (!strcmp(name, "dtype")) return mk_dtype(E, v->u.e->dtype);
    break;
  case V_BUFREF: /* an element access (TVM's BufferLoad) has its buffer's dtype; a region has none */
    if (!strcmp(name, "dtype") && v->u.ref.corner) return mk_dtype(E, v->u.ref.buf->dtype);
    break;
  case V_DICT: /* an object of the prelude (TensorCoreIntrinEmitter): its attributes */
    for (int i = 0; v->is_obj && i < v->u.dict.n; i++)
      if (v->u.dict.keys[i]->k == V_STR && !strcmp(v->u.dict.keys[i]->u.s, name)) return v->u.dict.vals[i];
    break;
  case V_DTYPE:
    if (!strcmp(name, "bits")) return mk_int(E, v->u.dt.bits);
    if (!strcmp(name, "lanes")) return mk_int(E, v->u.dt.lanes);
    break;
  default: break;
  }
  err_val(E, name_loc, v, "'%s' object has no attribute '%s'", type_name(v), name);
  return NULL;
}

/* ----------------------------------------------------------- subscripts */

tl_expr *eval_int(elab *E, const tl_ast_expr *x, const char *what) {
  val *v = eval(E, x);
  return v ? to_int_expr(E, v, x->loc, what) : NULL;
}

static tl_expr *extent_sub(elab *E, tl_loc loc, tl_expr *hi, tl_expr *lo);

static val *subscript_buffer(elab *E, tl_buffer *b, const tl_ast_expr *x) {
  int n = x->u.sub.n;
  val *r = mk(E, V_BUFREF);
  if (!r) return NULL;
  r->u.ref.buf = b;
  r->u.ref.n = n;
  r->u.ref.corner = true;
  if (!(r->u.ref.items = talloc(E, sizeof(ritem) * (size_t)(n ? n : 1)))) return NULL;
  for (int d = 0; d < n; d++) {
    const tl_ast_expr *it = x->u.sub.items[d];
    ritem *ri = &r->u.ref.items[d];
    ri->loc = it->loc;
    if (it->kind != TL_AST_SLICE) {
      if (!(ri->min = eval_int(E, it, "a buffer index"))) return NULL;
      if (!(ri->extent = lit_int(E, it->loc, 1))) return NULL;
      continue;
    }
    ri->is_slice = true;
    r->u.ref.corner = false;
    if (it->u.slice.step) {
      err(E, it->u.slice.step->loc, "slices with a step are not supported in buffer regions");
      return NULL;
    }
    tl_expr *lo = it->u.slice.lo ? eval_int(E, it->u.slice.lo, "a slice bound") : lit_int(E, it->loc, 0);
    if (!lo) return NULL;
    ri->min = lo;
    const tl_ast_expr *hi = it->u.slice.hi;
    if (!hi) {
      if (d >= b->ndim) {
        err(E, it->loc, "too many indices for %d-dimensional buffer '%s'", b->ndim, b->name);
        return NULL;
      }
      ri->extent = extent_sub(E, it->loc, b->shape[d], lo);
    } else if (hi->kind == TL_AST_BINOP && !strcmp(hi->u.bin.op, "+")) {
      /* lo:lo + X has extent X when the left operand is lo itself. */
      tl_expr *l = eval_int(E, hi->u.bin.l, "a slice bound");
      if (!l) return NULL;
      tl_expr *rr = eval_int(E, hi->u.bin.r, "a slice bound");
      if (!rr) return NULL;
      if (tl_expr_equal(l, lo)) {
        ri->extent = rr;
      } else {
        tl_expr *h = chk(E, tl_ir_binary(E->m, hi->loc, TL_OP_ADD, l, rr));
        if (!h) return NULL;
        ri->extent = extent_sub(E, hi->loc, h, lo);
      }
    } else {
      tl_expr *h = eval_int(E, hi, "a slice bound");
      if (!h) return NULL;
      ri->extent = extent_sub(E, hi->loc, h, lo);
    }
    if (!ri->extent) return NULL;
  }
  return r;
}

/* hi - lo for slice extents: when both are affine in the same atoms and
 * the difference is a constant ((bx + 1) * 128 - bx * 128), that constant
 * (tl_expr_const_difference); otherwise the folded subtraction. */
static tl_expr *extent_sub(elab *E, tl_loc loc, tl_expr *hi, tl_expr *lo) {
  int64_t c;
  bool same = tl_dtype_eq(hi->dtype, lo->dtype), fits = false;
  if (same && tl_expr_const_difference(hi, lo, &c)) fits = true;
  else if (same && E->let_values.len) { /* k = bx * 128; A[bx * 128 + t : k + t + 4] */
    tl_expr *h = tl_el_let_subst(E, hi), *l = h ? tl_el_let_subst(E, lo) : NULL;
    if (!l && E->oom) return NULL;
    fits = l && (h != hi || l != lo) && tl_expr_const_difference(h, l, &c); /* too deep: not constant */
  }
  if (fits && (hi->dtype.bits == 64 || (c >= INT32_MIN && c <= INT32_MAX)))
    return chk(E, tl_ir_int(E->m, loc, hi->dtype, c));
  return chk(E, tl_ir_binary(E->m, loc, TL_OP_SUB, hi, lo));
}

static bool impure(const tl_expr *e, void *user) {
  (void)user;
  if (e->kind == TL_EXPR_LOAD) return true;
  return e->kind == TL_EXPR_CALL &&
         (e->u.call.op < 0 || e->u.call.op >= tl_num_intrinsics || tl_intrinsics[e->u.call.op].effects != TL_EFF_NONE);
}

bool tl_el_note_let_value(elab *E, tl_var *var, tl_expr *value) {
  if (!E->pf || tl_expr_any(value, impure, NULL, 64, true)) return true;
  tl_expr *v = tl_el_let_subst(E, value);
  if (!v || tl_map_put(&E->let_values, var, v)) return true; /* too deep: not recorded */
  oom(E);
  return false;
}

tl_expr *tl_el_let_subst(elab *E, tl_expr *e) {
  if (!E->let_values.len) return e;
  tl_rewriter rw = {.m = E->m, .subst = &E->let_values, .max_depth = 64, .share_unchanged = true};
  tl_expr *r = tl_rewrite_expr(&rw, e, 1);
  if (!r && !rw.too_deep) oom(E);
  return r;
}

static bool tuple_index(elab *E, const tl_ast_expr *ix, int n, bool clamp, int64_t *out) {
  val *v = eval(E, ix);
  int64_t i;
  if (!v || !to_const_int(E, v, ix->loc, "a tuple index", &i)) return false;
  if (i < 0) i += n;
  if (clamp) {
    if (i < 0) i = 0;
    if (i > n) i = n;
  } else if (i < 0 || i >= n) {
    err(E, ix->loc, "tuple index out of range");
    return false;
  }
  *out = i;
  return true;
}

static val *tensor_type(elab *E, const tl_ast_expr *shape, const tl_ast_expr *dtype, tl_loc loc);

static val *eval_subscript(elab *E, const tl_ast_expr *x) {
  val *base = eval(E, x->u.sub.value);
  if (!base) return NULL;
  int n = x->u.sub.n;
  switch (base->k) {
  case V_BUFFER: return subscript_buffer(E, base->u.buf, x);
  case V_TUPLE: {
    if (n != 1) {
      err(E, x->loc, "a tuple takes one index");
      return NULL;
    }
    const tl_ast_expr *it = x->u.sub.items[0];
    int len = base->u.tup.n;
    if (it->kind == TL_AST_SLICE) {
      if (it->u.slice.step) {
        err(E, it->u.slice.step->loc, "tuple slices with a step are not supported");
        return NULL;
      }
      int64_t lo = 0, hi = len;
      if (it->u.slice.lo && !tuple_index(E, it->u.slice.lo, len, true, &lo)) return NULL;
      if (it->u.slice.hi && !tuple_index(E, it->u.slice.hi, len, true, &hi)) return NULL;
      if (hi < lo) hi = lo;
      val *t = mk_tuple(E, (int)(hi - lo), base->is_list);
      if (t && hi > lo) memcpy(t->u.tup.items, base->u.tup.items + lo, sizeof(val *) * (size_t)(hi - lo));
      return t;
    }
    int64_t i;
    if (!tuple_index(E, it, len, false, &i)) return NULL;
    return base->u.tup.items[i];
  }
  case V_DICT: {
    if (n != 1) break;
    val *k = eval(E, x->u.sub.items[0]);
    if (!k) return NULL;
    for (int i = 0; i < base->u.dict.n; i++)
      if (const_equal(base->u.dict.keys[i], k, 0)) return base->u.dict.vals[i];
    err(E, x->u.sub.items[0]->loc, "key not found in dict");
    return NULL;
  }
  case V_FUNC:
    if (!base->builtin && (!strcmp(base->u.fname, "Tensor") || !strcmp(base->u.fname, "Buffer")) && n == 2 &&
        x->u.sub.items[0]->kind != TL_AST_SLICE)
      return tensor_type(E, x->u.sub.items[0], x->u.sub.items[1], x->loc);
    break;
  case V_OPAQUE:
    if (E->pf) return to_expr(E, base, x->loc) ? NULL : NULL;
    return base;
  default: break;
  }
  err_val(E, x->loc, base, "'%s' object is not subscriptable", type_name(base));
  return NULL;
}

/* ----------------------------------------------------------------- calls */

const tl_ast_keyword *find_kw(const tl_ast_expr *x, const char *name) {
  for (int i = 0; i < x->u.call.nkw; i++)
    if (x->u.call.kw[i].name && !strcmp(x->u.call.kw[i].name, name)) return &x->u.call.kw[i];
  return NULL;
}

/* Every keyword of call x must be in allowed (NULL-terminated). */
bool check_kws(elab *E, const tl_ast_expr *x, const char *fn, const char *const *allowed) {
  for (int i = 0; i < x->u.call.nkw; i++) {
    const tl_ast_keyword *k = &x->u.call.kw[i];
    if (!k->name || !allowed || !in_list(allowed, k->name)) {
      err(E, k->loc, "unknown keyword '%s' for %s", k->name ? k->name : "**", fn);
      return false;
    }
    for (int j = 0; j < i; j++)
      if (x->u.call.kw[j].name && !strcmp(x->u.call.kw[j].name, k->name)) {
        err(E, k->loc, "keyword argument '%s' repeated", k->name);
        return false;
      }
  }
  return true;
}

static const char *takes_text(elab *E, int lo, int hi) {
  if (lo == hi) return tprintf(E, "%d argument%s", lo, lo == 1 ? "" : "s");
  if (hi < 0) return tprintf(E, "at least %d argument%s", lo, lo == 1 ? "" : "s");
  return tprintf(E, "%d to %d arguments", lo, hi);
}

bool check_arity(elab *E, const tl_ast_expr *x, const char *fn, int lo, int hi) {
  int n = x->u.call.nargs;
  if (n < lo || (hi >= 0 && n > hi)) {
    err(E, x->loc, "%s takes %s, got %d", fn, takes_text(E, lo, hi), n);
    return false;
  }
  return true;
}

/* Argument number i (positional) or keyword name; NULL when absent.  *bad is
 * set when both are given. */
const tl_ast_expr *get_arg(elab *E, const tl_ast_expr *x, int i, const char *name, const char *fn, bool *bad) {
  const tl_ast_keyword *k = name ? find_kw(x, name) : NULL;
  if (i >= 0 && i < x->u.call.nargs) {
    if (k) {
      err(E, k->loc, "%s got multiple values for argument '%s'", fn, name);
      *bad = true;
      return NULL;
    }
    return x->u.call.args[i];
  }
  return k ? k->value : NULL;
}

bool bind_args(elab *E, const tl_ast_expr *x, const char *fn, const char *const *names, int need,
               const tl_ast_expr **out) {
  int n = 0;
  while (names[n]) n++;
  if (!check_kws(E, x, fn, names) || !check_arity(E, x, fn, 0, n)) return false;
  bool bad = false;
  for (int i = 0; i < n; i++)
    if (!(out[i] = get_arg(E, x, i, names[i], fn, &bad)) && bad) return false;
  for (int i = 0; i < need; i++)
    if (!out[i]) {
      if (need == 1) err(E, x->loc, "%s needs a %s", fn, names[0]);
      else err(E, x->loc, "%s needs a %s and a %s", fn, names[0], names[1]);
      return false;
    }
  return true;
}

/* A shape: an int, an int expression, or a tuple/list of them. */
bool eval_shape(elab *E, const tl_ast_expr *ast, int *ndim, tl_expr ***dims) {
  const char *what = "shape dimension";
  if (ast->kind == TL_AST_TUPLE || ast->kind == TL_AST_LIST) {
    int n = ast->u.list.n;
    tl_expr **d = malloc_ir(E, sizeof(tl_expr *) * (size_t)(n ? n : 1));
    if (!d) return false;
    for (int i = 0; i < n; i++)
      if (!(d[i] = eval_int(E, ast->u.list.items[i], what))) return false;
    *ndim = n;
    *dims = d;
    return true;
  }
  val *v = eval(E, ast);
  if (!v) return false;
  if (v->k == V_TUPLE) {
    int n = v->u.tup.n;
    tl_expr **d = malloc_ir(E, sizeof(tl_expr *) * (size_t)(n ? n : 1));
    if (!d) return false;
    for (int i = 0; i < n; i++)
      if (!(d[i] = to_int_expr(E, v->u.tup.items[i], ast->loc, what))) return false;
    *ndim = n;
    *dims = d;
    return true;
  }
  tl_expr **d = malloc_ir(E, sizeof(tl_expr *));
  if (!d || !(d[0] = to_int_expr(E, v, ast->loc, what))) return false;
  *ndim = 1;
  *dims = d;
  return true;
}

static val *tensor_type(elab *E, const tl_ast_expr *shape, const tl_ast_expr *dtype, tl_loc loc) {
  val *r = mk(E, V_TENSORTYPE);
  if (!r) return NULL;
  if (!eval_shape(E, shape, &r->u.tt.ndim, &r->u.tt.dims)) return NULL;
  r->u.tt.dt = TL_FLOAT32;
  if (dtype) {
    val *dv = eval(E, dtype);
    if (!dv || !to_dtype(E, dv, dtype->loc, &r->u.tt.dt)) return NULL;
  }
  (void)loc;
  return r;
}

/* Converts an intrinsic / tile-op argument: scalars, buffers, strings. */
tl_expr *to_arg_expr(elab *E, val *v, tl_loc loc) {
  if (!v) return NULL;
  if (v->k == V_BUFFER && v->u.buf->scope != TL_SCOPE_LOCAL_VAR) return chk(E, tl_ir_buffer_ref(E->m, loc, v->u.buf));
  if (v->k == V_STR) return chk(E, tl_ir_string(E->m, loc, v->u.s));
  if (v->k == V_DTYPE) return chk(E, tl_ir_string(E->m, loc, tl_dtype_name(v->u.dt)));
  return to_expr(E, v, loc);
}

static val *call_intrinsic(elab *E, int idx, const tl_ast_expr *x, const char *fn) {
  const tl_intrinsic *in = &tl_intrinsics[idx];
  if (!check_kws(E, x, fn, NULL)) return NULL;
  if (!check_arity(E, x, fn, in->min_args, in->max_args)) return NULL;
  int n = x->u.call.nargs;
  tl_expr **args = malloc_ir(E, sizeof(tl_expr *) * (size_t)(n ? n : 1));
  if (!args) return NULL;
  for (int i = 0; i < n; i++) {
    val *v = eval(E, x->u.call.args[i]);
    if (!v || !(args[i] = to_arg_expr(E, v, x->u.call.args[i]->loc))) return NULL;
  }
  return mk_expr(E, chk(E, tl_ir_call(E->m, x->loc, idx, n, args)));
}

/* Evaluates the positional arguments of x (no keywords allowed). */
static val **eval_args(elab *E, const tl_ast_expr *x, const char *fn) {
  if (!check_kws(E, x, fn, NULL)) return NULL;
  int n = x->u.call.nargs;
  val **a = talloc(E, sizeof(val *) * (size_t)(n ? n : 1));
  if (!a) return NULL;
  for (int i = 0; i < n; i++)
    if (!(a[i] = eval(E, x->u.call.args[i]))) return NULL;
  return a;
}

/* min / max over values (Python semantics on constants, IR otherwise). */
static val *minmax(elab *E, bool is_max, val **a, int n, const tl_ast_expr *x) {
  bool any_ir = false;
  for (int i = 0; i < n; i++) {
    if (a[i]->k == V_OPAQUE) return binop(E, "+", a[i], a[i], x->loc);
    if (is_ir(a[i])) any_ir = true;
    else if (!is_num(a[i])) {
      err_val(E, x->u.call.args[i]->loc, a[i], "%s expects numbers, got %s", is_max ? "max" : "min", describe(E, a[i]));
      return NULL;
    }
  }
  if (!any_ir) {
    val *best = a[0];
    for (int i = 1; i < n; i++) {
      val *c = const_compare(E, is_max ? ">" : "<", a[i], best, x->loc);
      if (!c) return NULL;
      if (c->u.b) best = a[i];
    }
    return best;
  }
  tl_expr *acc = to_expr(E, a[0], x->u.call.args[0]->loc);
  for (int i = 1; acc && i < n; i++) {
    tl_expr *e = to_expr(E, a[i], x->u.call.args[i]->loc);
    if (!e) return NULL;
    acc = chk(E, tl_ir_binary(E->m, x->loc, is_max ? TL_OP_MAX : TL_OP_MIN, acc, e));
  }
  return mk_expr(E, acc);
}

static val *call_builtin(elab *E, const char *fn, const tl_ast_expr *x) {
  val **a = eval_args(E, x, fn);
  if (!a) return NULL;
  int n = x->u.call.nargs;
  bool handled;
  val *r = call_py_builtin(E, fn, a, n, x, &handled);
  if (handled) return r;
  if (!strcmp(fn, "print")) return mk(E, V_NONE);
  if (!strcmp(fn, "min") || !strcmp(fn, "max")) {
    if (n == 1 && a[0]->k == V_TUPLE && a[0]->u.tup.n > 0) {
      /* min(iterable) */
      tl_ast_expr fake = *x;
      fake.u.call.nargs = a[0]->u.tup.n;
      const tl_ast_expr **args = talloc(E, sizeof(tl_ast_expr *) * (size_t)fake.u.call.nargs);
      if (!args) return NULL;
      for (int i = 0; i < fake.u.call.nargs; i++) args[i] = x->u.call.args[0];
      fake.u.call.args = (tl_ast_expr **)args;
      return minmax(E, fn[1] == 'a', a[0]->u.tup.items, a[0]->u.tup.n, &fake);
    }
    if (!check_arity(E, x, fn, 2, -1)) return NULL;
    return minmax(E, fn[1] == 'a', a, n, x);
  }
  if (!check_arity(E, x, fn, 1, 1)) return NULL;
  val *v = a[0];
  tl_loc al = x->u.call.args[0]->loc;
  if (v->k == V_OPAQUE) return binop(E, "+", v, v, x->loc);
  if (!strcmp(fn, "tilelang.next_power_of_2")) { /* tilelang.math: 1 << (x - 1).bit_length() */
    if (v->k != V_INT || v->u.i > ((int64_t)1 << 62)) {
      err_val(E, al, v, "tilelang.next_power_of_2 expects an integer constant up to 2**62, got %s", describe(E, v));
      return NULL;
    }
    int64_t p = 1, m = v->u.i - 1;
    for (m = m < 0 ? -m : m; m > 0; m >>= 1) p <<= 1; /* (-k).bit_length() == k.bit_length() */
    return mk_int(E, p);
  }
  if (!strcmp(fn, "len")) {
    if (v->k == V_TUPLE) return mk_int(E, v->u.tup.n);
    if (v->k == V_STR) return mk_int(E, (int64_t)strlen(v->u.s));
    if (v->k == V_DICT) return mk_int(E, v->u.dict.n);
    if (v->k == V_BUFFER && v->u.buf->ndim > 0) {
      int64_t c;
      if (tl_expr_is_const_int(v->u.buf->shape[0], &c)) return mk_int(E, c);
      return mk_expr(E, v->u.buf->shape[0]);
    }
    err_val(E, al, v, "object of type '%s' has no len()", type_name(v));
    return NULL;
  }
  if (!strcmp(fn, "abs")) {
    if (v->k == V_INT || v->k == V_BOOL) {
      if (as_i(v) == INT64_MIN) return overflow(E, x->loc, v, NULL);
      return mk_int(E, as_i(v) < 0 ? -as_i(v) : as_i(v));
    }
    if (v->k == V_FLOAT) return mk_float(E, fabs(v->u.f));
    tl_expr *e = to_expr(E, v, al);
    if (!e) return NULL;
    return mk_expr(E, chk(E, tl_ir_call(E->m, x->loc, TL_INTRIN_ABS, 1, &e)));
  }
  if (!strcmp(fn, "bool")) {
    bool t;
    if (truthy(v, &t)) return mk_bool(E, t);
    tl_expr *e = to_expr(E, v, al);
    return e ? mk_expr(E, chk(E, tl_ir_cast(E->m, x->loc, TL_BOOL, e))) : NULL;
  }
  if (!strcmp(fn, "int")) {
    if (v->k == V_INT || v->k == V_BOOL) return mk_int(E, as_i(v));
    if (v->k == V_FLOAT) {
      if (!isfinite(v->u.f) || v->u.f >= 9.2233720368547758e18 || v->u.f < -9.2233720368547758e18) {
        err_val(E, al, v, "cannot convert float %g to an integer", v->u.f);
        return NULL;
      }
      return mk_int(E, (int64_t)v->u.f);
    }
    if (v->k == V_STR) {
      char *end = NULL;
      errno = 0;
      long long r = strtoll(v->u.s, &end, 10);
      if (errno || !end || end == v->u.s || *end) {
        err_val(E, al, v, "invalid literal for int(): '%.100s'", v->u.s);
        return NULL;
      }
      return mk_int(E, r);
    }
    tl_expr *e = to_expr(E, v, al);
    return e ? mk_expr(E, chk(E, tl_ir_cast(E->m, x->loc, TL_INT32, e))) : NULL;
  }
  /* float */
  if (is_num(v)) return mk_float(E, as_f(v));
  if (v->k == V_STR) {
    char *end = NULL;
    double f = strtod(v->u.s, &end);
    if (!end || end == v->u.s || *end) {
      err_val(E, al, v, "could not convert string to float: '%.100s'", v->u.s);
      return NULL;
    }
    return mk_float(E, f);
  }
  tl_expr *e = to_expr(E, v, al);
  return e ? mk_expr(E, chk(E, tl_ir_cast(E->m, x->loc, TL_FLOAT32, e))) : NULL;
}

/* math.gcd / math.lcm of integer constants (any count, as Python's: no
 * arguments give 0 / 1; the result is never negative). */
static val *math_gcd_lcm(elab *E, const char *fn, val **a, const tl_ast_expr *x) {
  bool gcd = fn[0] == 'g';
  uint64_t r = gcd ? 0 : 1;
  for (int i = 0; i < x->u.call.nargs; i++) {
    if (a[i]->k != V_INT && a[i]->k != V_BOOL) {
      err_val(E, x->u.call.args[i]->loc, a[i], "math.%s needs integer constants, got %s", fn, describe(E, a[i]));
      return NULL;
    }
    int64_t s = as_i(a[i]);
    uint64_t v = s < 0 ? 0 - (uint64_t)s : (uint64_t)s, p = r, q = v;
    while (q) {
      uint64_t t = p % q;
      p = q;
      q = t;
    }
    if (gcd) r = p;
    else if (r == 0 || v == 0) r = 0;
    else if (r / p > (uint64_t)INT64_MAX / v) {
      err(E, x->loc, "math.lcm result out of range");
      return NULL;
    } else r = r / p * v;
  }
  if (r > (uint64_t)INT64_MAX) {
    err(E, x->loc, "math.%s result out of range", fn);
    return NULL;
  }
  return mk_int(E, (int64_t)r);
}

/* math.<fn>(constants) at compile time. */
static val *call_math(elab *E, const char *fn, const tl_ast_expr *x) {
  val **a = eval_args(E, x, tprintf(E, "math.%s", fn));
  if (!a) return NULL;
  int n = x->u.call.nargs;
  if (!strcmp(fn, "gcd") || !strcmp(fn, "lcm")) return math_gcd_lcm(E, fn, a, x);
  static const char *const one[] = {"sqrt", "log2", "log10", "exp",  "ceil", "floor", "fabs",
                                    "sin",  "cos",  "tan",   "tanh", "exp2", NULL};
  bool unary = in_list(one, fn);
  bool known = unary || !strcmp(fn, "log") || !strcmp(fn, "pow");
  if (!known) {
    if (E->pf) {
      err(E, x->loc, "'math.%s' cannot be used in a kernel", fn);
      return NULL;
    }
    return mk_opaque(E, tprintf(E, "math.%s(...)", fn), "math");
  }
  int lo = unary ? 1 : !strcmp(fn, "log") ? 1 : 2, hi = unary ? 1 : 2;
  if (!check_arity(E, x, tprintf(E, "math.%s", fn), lo, hi)) return NULL;
  for (int i = 0; i < n; i++)
    if (!is_num(a[i])) {
      err_val(E, x->u.call.args[i]->loc, a[i], "math.%s needs a numeric constant, got %s (use T.%s in kernels)", fn,
              describe(E, a[i]), fn);
      return NULL;
    }
  double v = as_f(a[0]), r;
  if (!strcmp(fn, "sqrt")) r = sqrt(v);
  else if (!strcmp(fn, "log2")) r = log2(v);
  else if (!strcmp(fn, "log10")) r = log10(v);
  else if (!strcmp(fn, "exp")) r = exp(v);
  else if (!strcmp(fn, "exp2")) r = exp2(v);
  else if (!strcmp(fn, "fabs")) r = fabs(v);
  else if (!strcmp(fn, "sin")) r = sin(v);
  else if (!strcmp(fn, "cos")) r = cos(v);
  else if (!strcmp(fn, "tan")) r = tan(v);
  else if (!strcmp(fn, "tanh")) r = tanh(v);
  else if (!strcmp(fn, "log")) r = n == 2 ? log(v) / log(as_f(a[1])) : log(v);
  else if (!strcmp(fn, "pow")) r = pow(v, as_f(a[1]));
  else {
    r = !strcmp(fn, "ceil") ? ceil(v) : floor(v);
    if (!isfinite(r) || r >= 9.2233720368547758e18 || r < -9.2233720368547758e18) {
      err(E, x->loc, "math.%s result out of range", fn);
      return NULL;
    }
    return mk_int(E, (int64_t)r);
  }
  return mk_float(E, r);
}

/* T.float16(1.5), T.int64(5), T.float32("nan"), T.float16(x). */
static val *typed_literal(elab *E, tl_dtype dt, const tl_ast_expr *x) {
  const char *fn = tprintf(E, "T.%s", tl_dtype_name(dt));
  if (!check_kws(E, x, fn, NULL) || !check_arity(E, x, fn, 1, 1)) return NULL;
  const tl_ast_expr *ax = x->u.call.args[0];
  val *v = eval(E, ax);
  if (!v) return NULL;
  if (tl_dtype_is_float(dt)) {
    if (is_num(v)) return mk_expr(E, chk(E, tl_ir_float(E->m, x->loc, dt, as_f(v))));
    if (v->k == V_STR) {
      const char *s = v->u.s;
      double f;
      if (!strcmp(s, "nan")) f = NAN;
      else if (!strcmp(s, "inf") || !strcmp(s, "+inf") || !strcmp(s, "infinity")) f = INFINITY;
      else if (!strcmp(s, "-inf") || !strcmp(s, "-infinity")) f = -INFINITY;
      else {
        char *end = NULL;
        f = strtod(s, &end);
        if (!end || end == s || *end) {
          err_val(E, ax->loc, v, "%s expects a number, got %s", fn, describe(E, v));
          return NULL;
        }
      }
      return mk_expr(E, chk(E, tl_ir_float(E->m, x->loc, dt, f)));
    }
  } else if (dt.code == TL_TYPE_BOOL) {
    bool t;
    if (v->k != V_STR && v->k != V_EXPR && truthy(v, &t))
      return mk_expr(E, chk(E, tl_ir_int(E->m, x->loc, TL_BOOL, t)));
  } else if (tl_dtype_is_int(dt) && (v->k == V_INT || v->k == V_BOOL)) {
    int64_t i = as_i(v);
    bool ok;
    if (dt.code == TL_TYPE_UINT) ok = i >= 0 && (dt.bits >= 63 || i < (INT64_C(1) << dt.bits));
    else ok = dt.bits >= 64 || (i >= -(INT64_C(1) << (dt.bits - 1)) && i < (INT64_C(1) << (dt.bits - 1)));
    if (!ok) {
      err_val(E, ax->loc, v, "%lld does not fit in %s", (long long)i, tl_dtype_name(dt));
      return NULL;
    }
    return mk_expr(E, chk(E, tl_ir_int(E->m, x->loc, dt, i)));
  }
  if (v->k == V_STR || v->k == V_NONE || v->k == V_TUPLE || v->k == V_DTYPE) {
    err_val(E, ax->loc, v, "%s expects a number, got %s", fn, describe(E, v));
    return NULL;
  }
  tl_expr *e = to_expr(E, v, ax->loc);
  return e ? mk_expr(E, chk(E, tl_ir_cast(E->m, x->loc, dt, e))) : NULL;
}

/* The dynamic symbol `name` of dtype dt: the one an earlier T.dynamic of that name made, else a new one.
 * One name is one symbol of the module (as one Python object is in TileLang): the package writes a captured
 * T.dynamic symbol as a T.dynamic call at each place a captured value holds it (shape lists), so each call
 * must give the same symbol.  A second call with another dtype is a located error. */
static tl_var *dynamic_var(elab *E, const char *name, tl_dtype dt, const tl_ast_expr *x) {
  for (size_t i = 0; i < E->dyn.len; i++) {
    tl_var *v = E->dyn.data[i];
    if (!v->name || strcmp(v->name, name)) continue;
    if (tl_dtype_eq(v->dtype, dt)) return v;
    err(E, x->loc, "dynamic symbol '%s' is %s here but %s where it was first declared", name, tl_dtype_name(dt),
        tl_dtype_name(v->dtype));
    tl_note(E->d, v->loc, "first declared here");
    return NULL;
  }
  tl_var *var = tl_ir_new_var(E->m, x->loc, name, dt, TL_VAR_DYNAMIC);
  if (!var || !tl_vec_push(&E->dyn, var)) return oom(E);
  return var;
}

static val *call_dynamic(elab *E, const char *fn, const tl_ast_expr *x) {
  static const char *const kws[] = {"dtype", NULL};
  bool bad = false;
  if (!check_kws(E, x, fn, kws) || !check_arity(E, x, fn, 1, 2)) return NULL;
  const tl_ast_expr *dta = get_arg(E, x, 1, "dtype", fn, &bad);
  if (bad) return NULL;
  val *nv = eval(E, x->u.call.args[0]);
  if (!nv) return NULL;
  if (nv->k != V_STR) {
    err_val(E, x->u.call.args[0]->loc, nv, "%s expects a name string, got %s", fn, describe(E, nv));
    return NULL;
  }
  tl_dtype dt = TL_INT32;
  if (dta) {
    val *dv = eval(E, dta);
    if (!dv || !to_dtype(E, dv, dta->loc, &dt)) return NULL;
    if (!tl_dtype_is_int(dt)) {
      err(E, dta->loc, "a dynamic dimension must have an integer dtype, got %s", tl_dtype_name(dt));
      return NULL;
    }
  }
  /* "m, n" declares two symbols. */
  val *names[64];
  int count = 0;
  const char *p = nv->u.s;
  while (*p) {
    while (*p == ',' || isspace((unsigned char)*p)) p++;
    if (!*p) break;
    const char *st = p;
    while (*p && *p != ',' && !isspace((unsigned char)*p)) p++;
    if (count == 64) {
      err(E, x->u.call.args[0]->loc, "too many symbols in one %s call", fn);
      return NULL;
    }
    char *nm = tl_arena_strndup(&E->tmp, st, (size_t)(p - st));
    if (!nm) return oom(E);
    bool okname = isalpha((unsigned char)nm[0]) || nm[0] == '_';
    for (const char *q = nm; *q; q++)
      if (!isalnum((unsigned char)*q) && *q != '_') okname = false;
    if (!okname) {
      err(E, x->u.call.args[0]->loc, "'%s' is not a valid symbol name", nm);
      return NULL;
    }
    const char *in = intern(E, nm);
    if (!in) return NULL;
    tl_var *var = dynamic_var(E, in, dt, x);
    if (!var) return NULL;
    if (!(names[count++] = mk_expr(E, chk(E, tl_ir_var(E->m, x->loc, var))))) return NULL;
  }
  if (count == 0) {
    err(E, x->u.call.args[0]->loc, "%s needs at least one symbol name", fn);
    return NULL;
  }
  if (count == 1) return names[0];
  val *t = mk_tuple(E, count, false);
  if (t) memcpy(t->u.tup.items, names, sizeof(val *) * (size_t)count);
  return t;
}

/* T.Ramp(base, stride, lanes), T.Broadcast(value, lanes): the vector
 * expressions of the SIMT IR (docs/simt-ir.md), as printed. */
static val *call_ramp_broadcast(elab *E, const char *fn, const char *name, const tl_ast_expr *x) {
  /* vector expressions of the SIMT IR (docs/simt-ir.md), as printed:
   * T.Ramp(base, stride, lanes), T.Broadcast(value, lanes) */
  bool ramp = name[0] == 'R';
  if (!check_kws(E, x, fn, NULL) || !check_arity(E, x, fn, ramp ? 3 : 2, ramp ? 3 : 2)) return NULL;
  int nv = ramp ? 2 : 1;
  tl_expr *ops[2] = {NULL, NULL};
  for (int i = 0; i < nv; i++) {
    val *v = eval(E, x->u.call.args[i]);
    if (!v) return NULL;
    ops[i] = ramp ? to_int_expr(E, v, x->u.call.args[i]->loc, i ? "the stride of T.Ramp" : "the base of T.Ramp")
                  : to_expr(E, v, x->u.call.args[i]->loc);
    if (!ops[i]) return NULL;
  }
  val *lv = eval(E, x->u.call.args[nv]);
  int64_t lanes;
  if (!lv || !to_const_int(E, lv, x->u.call.args[nv]->loc, "the lane count", &lanes)) return NULL;
  if (lanes < 2 || lanes > 64 || ops[0]->dtype.lanes != 1) {
    err(E, x->u.call.args[nv]->loc, "%s needs a scalar operand and 2 to 64 lanes, got %lld", fn, (long long)lanes);
    return NULL;
  }
  if (ramp && !tl_dtype_eq(ops[1]->dtype, ops[0]->dtype))
    ops[1] = chk(E, tl_ir_cast(E->m, x->loc, ops[0]->dtype, ops[1]));
  tl_expr *e = malloc_ir(E, sizeof *e);
  if (!e || (ramp && !ops[1])) return NULL;
  memset(e, 0, sizeof *e);
  e->kind = ramp ? TL_EXPR_RAMP : TL_EXPR_BROADCAST;
  e->dtype = ops[0]->dtype;
  e->dtype.lanes = (uint16_t)lanes;
  e->loc = x->loc;
  if (ramp) {
    e->u.ramp.base = ops[0];
    e->u.ramp.stride = ops[1];
  } else {
    e->u.bcast.value = ops[0];
  }
  return mk_expr(E, e);
}

/* T.StridedTensor's strides (r: the tensor type, at: the strides): none is a
 * negative constant (DLPack producers, torch, give none), and the bytes from
 * the first element to the last fit int64, as a tensor's size must (else the
 * host allocation of tl-run and the runtime's offsets overflow) -- the
 * dimensions of constant extent and stride give a lower bound (an empty
 * dimension means no elements).  False after a located error. */
static bool strides_fit(elab *E, const val *r, tl_loc at) {
  int64_t span = 0, n = 0, st = 0, t = 0;
  bool ovf = false;
  for (int d = 0; d < r->u.tt.ndim; d++)
    if (tl_expr_is_const_int(r->u.tt.strides[d], &st) && st < 0) {
      err(E, at, "T.StridedTensor: stride %lld of dimension %d is negative", (long long)st, d);
      return false;
    }
  for (int d = 0; d < r->u.tt.ndim; d++) {
    if (tl_expr_is_const_int(r->u.tt.dims[d], &n) && n <= 0) return true;
    if (!tl_expr_is_const_int(r->u.tt.dims[d], &n) || !tl_expr_is_const_int(r->u.tt.strides[d], &st)) continue;
    ovf = ovf || __builtin_mul_overflow(n - 1, st, &t) || __builtin_add_overflow(span, t, &span);
  }
  int64_t bytes = ((int64_t)r->u.tt.dt.bits * (r->u.tt.dt.lanes ? r->u.tt.dt.lanes : 1) + 7) / 8; /* an element */
  if (!ovf && !__builtin_add_overflow(span, 1, &span) && !__builtin_mul_overflow(span, bytes, &t)) return true;
  err(E, at,
      "T.StridedTensor: the elements these strides reach span more bytes than int64 counts "
      "(the tensor's memory could not be addressed)");
  return false;
}

/* T.Tensor(shape, dtype, X.data) in a prim_func body (TileLang's buffer
 * declared over another buffer's data, e.g. a flattened view of a
 * parameter): the view of X with that shape and dtype (T.view's rules). */
static val *tensor_over_data(elab *E, const tl_ast_expr *x, const tl_ast_expr *a[3], const char *fn) {
  const tl_ast_expr *d = a[2];
  if (d->kind != TL_AST_ATTR || strcmp(d->u.attr.name, "data")) {
    err(E, d->loc, "%s: data must be another buffer's data (X.data)", fn);
    return NULL;
  }
  if (!E->pf || !E->in_kernel) {
    err(E, x->loc, "%s over another buffer's data is only supported inside a T.Kernel", fn);
    return NULL;
  }
  if (!a[1]) {
    err(E, x->loc, "%s over another buffer's data needs its dtype", fn);
    return NULL;
  }
  const tl_ast_expr *va[3] = {d->u.attr.value, a[0], a[1]};
  return tl_el_make_view(E, x, va, eval(E, d->u.attr.value), fn);
}

/* T.get_thread_binding(dim) in a kernel with threads=(x, y, z): coordinate
 * dim of the kernel's one thread index. */
static val *thread_coord(elab *E, const tl_ast_expr *x, const char *fn) {
  static const char *const params[] = {"dim", NULL};
  const tl_ast_expr *a[1];
  int64_t dim = 0;
  if (!bind_args(E, x, fn, params, 0, a)) return NULL;
  if (a[0] && !to_const_int(E, eval(E, a[0]), a[0]->loc, "the thread dimension", &dim)) return NULL;
  if (dim < 0 || dim > 2) {
    err(E, a[0]->loc, "%s needs dimension 0, 1 or 2, got %lld", fn, (long long)dim);
    return NULL;
  }
  return mk_expr(E, tl_el_thread_coord(E, dim, x->loc));
}

/* T.Layout(shape, forward_fn): a value for T.annotate_layout (elab_lang_ops.c). */
static val *call_layout(elab *E, const tl_ast_expr *x, const char *fn) {
  static const char *const lparams[] = {"shape", "forward_fn", NULL};
  const tl_ast_expr *a[2] = {0};
  if (!bind_args(E, x, fn, lparams, 2, a)) return NULL;
  val *shv = eval(E, a[0]), *fv = shv ? eval(E, a[1]) : NULL;
  if (!fv) return NULL;
  if (fv->k != V_PYFUNC || fv->u.py.macro) {
    err_val(E, a[1]->loc, fv, "T.Layout: forward_fn must be a function or lambda, got %s", describe(E, fv));
    return NULL;
  }
  val *lv = mk(E, V_LAYOUT);
  if (lv) lv->u.lay.shape = shv, lv->u.lay.fn = fv;
  return lv;
}

static val *call_t(elab *E, const char *name, const tl_ast_expr *x) {
  const char *fn = tprintf(E, "T.%s", name);
  if (!strcmp(name, "Tensor") || !strcmp(name, "Buffer")) {
    static const char *const params[] = {"shape", "dtype", "data", NULL};
    const tl_ast_expr *a[3];
    if (!bind_args(E, x, fn, params, 1, a)) return NULL;
    if (a[2]) return tensor_over_data(E, x, a, fn);
    return tensor_type(E, a[0], a[1], x->loc);
  }
  if (!strcmp(name, "StridedTensor")) { /* T.StridedTensor(shape, strides, dtype), strides in elements */
    static const char *const params[] = {"shape", "strides", "dtype", NULL};
    const tl_ast_expr *a[3];
    if (!bind_args(E, x, fn, params, 2, a)) return NULL;
    val *r = tensor_type(E, a[0], a[2], x->loc);
    int ns = 0;
    if (!r || !eval_shape(E, a[1], &ns, &r->u.tt.strides)) return NULL;
    if (ns != r->u.tt.ndim) {
      err(E, a[1]->loc, "T.StridedTensor: %d strides for a shape of %d dimension%s", ns, r->u.tt.ndim,
          r->u.tt.ndim == 1 ? "" : "s");
      return NULL;
    }
    if (!strides_fit(E, r, a[1]->loc)) return NULL;
    return r;
  }
  if (!strcmp(name, "dynamic") || !strcmp(name, "symbolic")) return call_dynamic(E, fn, x);
  if (!strcmp(name, "const")) return call_const(E, fn, x);
  if (!strcmp(name, "empty")) {
    err(E, x->loc,
        "T.empty declares an output of an eager @tilelang.jit kernel: assign it to a "
        "name before its T.Kernel and return it");
    return NULL;
  }
  if (!strcmp(name, "Cast") || !strcmp(name, "cast")) {
    /* T.Cast(dtype, value) (TVM's node) and T.cast(value, dtype) (TVM's tir.cast; dtype= may be a keyword) */
    static const char *const cast_kws[] = {"dtype", NULL};
    bool lower = name[0] == 'c';
    bool kw = lower && x->u.call.nkw == 1;
    if (!check_kws(E, x, fn, lower ? cast_kws : NULL) || !check_arity(E, x, fn, kw ? 1 : 2, kw ? 1 : 2)) return NULL;
    int di = lower ? 1 : 0;
    const tl_ast_expr *dx = kw ? x->u.call.kw[0].value : x->u.call.args[di];
    const tl_ast_expr *vx = x->u.call.args[kw ? 0 : 1 - di];
    val *dv = eval(E, dx);
    tl_dtype dt;
    if (!dv || !to_dtype(E, dv, dx->loc, &dt)) return NULL;
    val *v = eval(E, vx);
    tl_expr *e = v ? to_expr(E, v, vx->loc) : NULL;
    return e ? mk_expr(E, chk(E, tl_ir_cast(E->m, x->loc, dt, e))) : NULL;
  }
  if (!strcmp(name, "Ramp") || !strcmp(name, "Broadcast")) return call_ramp_broadcast(E, fn, name, x);
  if (!strcmp(name, "infinity")) {
    if (!check_kws(E, x, fn, NULL) || !check_arity(E, x, fn, 1, 1)) return NULL;
    val *dv = eval(E, x->u.call.args[0]);
    tl_dtype dt;
    if (!dv || !to_dtype(E, dv, x->u.call.args[0]->loc, &dt)) return NULL;
    if (!tl_dtype_is_float(dt)) {
      err(E, x->u.call.args[0]->loc, "T.infinity needs a float dtype, got %s", tl_dtype_name(dt));
      return NULL;
    }
    return mk_expr(E, chk(E, tl_ir_float(E->m, x->loc, dt, INFINITY)));
  }
  if (!strcmp(name, "view") || !strcmp(name, "reshape")) return tl_el_call_view(E, name, x, fn);
  if (!strcmp(name, "align_up")) { /* TileLang: T.ceildiv(x, y) * y */
    val *c = call_t(E, "ceildiv", x);
    val *y = c ? eval(E, x->u.call.args[1]) : NULL;
    return y ? binop(E, "*", c, y, x->loc) : NULL;
  }
  if (!strcmp(name, "Layout")) return call_layout(E, x, fn);
  if (!strcmp(name, "ceildiv")) {
    val **a = eval_args(E, x, fn);
    if (!a || !check_arity(E, x, fn, 2, 2)) return NULL;
    for (int i = 0; i < 2; i++)
      if (!is_ir(a[i]) && a[i]->k != V_INT && a[i]->k != V_BOOL) {
        err_val(E, x->u.call.args[i]->loc, a[i], "T.ceildiv expects integers, got %s", describe(E, a[i]));
        return NULL;
      }
    if (!is_ir(a[0]) && !is_ir(a[1])) {
      int64_t p = as_i(a[0]), q = as_i(a[1]);
      if (q == 0) {
        err(E, x->loc, "T.ceildiv: division by zero");
        return NULL;
      }
      if (p == INT64_MIN && q == -1) return overflow(E, x->loc, a[0], a[1]);
      int64_t r = p / q;
      if (p % q != 0 && ((p > 0) == (q > 0))) r++;
      return mk_int(E, r);
    }
    tl_expr *args[2];
    for (int i = 0; i < 2; i++)
      if (!(args[i] = to_expr(E, a[i], x->u.call.args[i]->loc))) return NULL;
    tl_expr **ar = malloc_ir(E, sizeof args);
    if (!ar) return NULL;
    memcpy(ar, args, sizeof args);
    return mk_expr(E, chk(E, tl_ir_call(E->m, x->loc, TL_INTRIN_CEILDIV, 2, ar)));
  }
  if (!strcmp(name, "max") || !strcmp(name, "min")) {
    val **a = eval_args(E, x, fn);
    if (!a || !check_arity(E, x, fn, 2, -1)) return NULL;
    return minmax(E, name[1] == 'a', a, x->u.call.nargs, x);
  }
  if (!strcmp(name, "if_then_else") || !strcmp(name, "Select")) {
    if (!check_kws(E, x, fn, NULL) || !check_arity(E, x, fn, 3, 3)) return NULL;
    val *c = eval(E, x->u.call.args[0]);
    if (!c) return NULL;
    bool t;
    if (!is_ir(c) && truthy(c, &t)) return eval(E, x->u.call.args[t ? 1 : 2]);
    val *a = eval(E, x->u.call.args[1]);
    val *b = a ? eval(E, x->u.call.args[2]) : NULL;
    if (!b) return NULL;
    tl_expr *ce = to_expr(E, c, x->u.call.args[0]->loc);
    tl_expr *ae = ce ? to_expr(E, a, x->u.call.args[1]->loc) : NULL;
    tl_expr *be = ae ? to_expr(E, b, x->u.call.args[2]->loc) : NULL;
    return be ? mk_expr(E, chk(E, tl_ir_select(E->m, x->loc, ce, ae, be))) : NULL;
  }
  if (!strcmp(name, "Kernel")) {
    err(E, x->loc, "T.Kernel can only be used in a 'with' statement");
    return NULL;
  }
  if (!strcmp(name, "thread_binding")) return tl_el_thread_binding_value(E, x, fn);
  if (!strcmp(name, "Parallel") || !strcmp(name, "Pipelined") || !strcmp(name, "serial") || !strcmp(name, "Serial") ||
      !strcmp(name, "grid") || !strcmp(name, "unroll") || !strcmp(name, "vectorized") || !strcmp(name, "Persistent")) {
    err(E, x->loc, "%s can only be used as the iterator of a for loop", fn);
    return NULL;
  }
  if (!strncmp(name, "alloc_", 6) || !strcmp(name, "make_tensor")) {
    err(E, x->loc, "the result of %s must be assigned to a name", fn);
    return NULL;
  }
  if (!strcmp(name, "func_attr")) {
    err(E, x->loc, "T.func_attr can only be used as a statement");
    return NULL;
  }
  if (!strcmp(name, "prim_func")) {
    err(E, x->loc, "T.prim_func can only be used as a decorator");
    return NULL;
  }
  if (!strcmp(name, "atomic_add") || !strcmp(name, "atomic_max") || !strcmp(name, "atomic_min"))
    return atomic_add_value(E, x, fn);
  if (tl_tile_op_lookup(name) >= 0 || (in_list(lang_op_names, name) && strcmp(name, "align_up"))) {
    err(E, x->loc, "%s is a statement and has no value", fn);
    return NULL;
  }
  if (!strcmp(name, "tvm_warp_shuffle")) return warp_shuffle(E, x, fn);
  int idx = tl_intrinsic_lookup(name);
  if (idx == TL_INTRIN_GET_THREAD_BINDING && E->nthread_dims && E->in_kernel) return thread_coord(E, x, fn);
  if (idx >= 0) return call_intrinsic(E, idx, x, fn);
  err(E, x->loc, "unknown name '%s'", fn);
  return NULL;
}

/* T.tvm_warp_shuffle(mask, value, lane, width, warp_size) (TVM's builtin):
 * T.shfl_sync(mask, value, lane, width), lane taken within width-lane
 * segments of the warp, as CUDA's __shfl_sync; warp_size (TVM's logical
 * warp, read by its allreduce lowering only) must be an integer constant
 * from 1 to 32 and has no other effect. */
static val *warp_shuffle(elab *E, const tl_ast_expr *x, const char *fn) {
  if (!check_kws(E, x, fn, NULL) || !check_arity(E, x, fn, 5, 5)) return NULL;
  val *ws = eval(E, x->u.call.args[4]);
  if (!ws) return NULL;
  if (ws->k != V_INT || ws->u.i < 1 || ws->u.i > 32) {
    err_val(E, x->u.call.args[4]->loc, ws, "%s: warp_size must be an integer constant from 1 to 32, got %s", fn,
            describe(E, ws));
    return NULL;
  }
  tl_ast_expr four = *x;
  four.u.call.nargs = 4;
  return call_intrinsic(E, TL_INTRIN_SHFL_SYNC, &four, "T.shfl_sync");
}

/* T.atomic_add(dst[i, ...], value, return_prev=True) used as a value (and
 * T.atomic_max / T.atomic_min, whose intrinsics take the same operands)
 * (TileLang's scalar form with return_prev): the old contents of one global
 * element.  It becomes the SIMT intrinsic directly (docs/simt-ir.md
 * "Atomics"): T.ptx_atomic_add(dst, flat offset, T.Cast(dst.dtype, value),
 * True).  Without return_prev=True there is no value to use. */
static val *atomic_add_value(elab *E, const tl_ast_expr *x, const char *fn) {
  static const char *const kws[] = {"return_prev", "memory_order", NULL};
  if (!check_kws(E, x, fn, kws) || !check_arity(E, x, fn, 2, 2)) return NULL;
  bool rp = false;
  for (int i = 0; i < x->u.call.nkw; i++) {
    const tl_ast_keyword *k = &x->u.call.kw[i];
    val *v = eval(E, k->value);
    if (!v) return NULL;
    if (!strcmp(k->name, "return_prev")) {
      if (is_ir(v) || !truthy(v, &rp)) {
        err(E, k->loc, "%s: return_prev must be a constant", fn);
        return NULL;
      }
    } else if (v->k != V_STR || strcmp(v->u.s, "relaxed") != 0) {
      err(E, k->loc, "%s: only memory_order=\"relaxed\" is supported for the value form", fn);
      return NULL;
    }
  }
  if (!rp) {
    err(E, x->loc, "%s is a statement and has no value (pass return_prev=True to use the old value)", fn);
    return NULL;
  }
  val *d = eval(E, x->u.call.args[0]);
  val *v = d ? eval(E, x->u.call.args[1]) : NULL;
  if (!v) return NULL;
  tl_expr *de = is_ir(d) ? to_expr(E, d, x->u.call.args[0]->loc) : NULL;
  if (!de || de->kind != TL_EXPR_LOAD || de->dtype.lanes != 1 || de->u.load.buffer->scope != TL_SCOPE_GLOBAL) {
    err(E, x->u.call.args[0]->loc, "%s with return_prev=True needs one element of a global tensor, e.g. C[i, j]", fn);
    return NULL;
  }
  tl_expr *ve = to_expr(E, v, x->u.call.args[1]->loc);
  if (!ve) return NULL;
  if (ve->dtype.lanes != 1) {
    err(E, x->u.call.args[1]->loc, "%s: the value must be a scalar, got %s", fn, tl_dtype_name(ve->dtype));
    return NULL;
  }
  tl_buffer *b = de->u.load.buffer;
  tl_expr *off = tl_el_flat_offset(E, x->loc, b, de->u.load.n, de->u.load.indices);
  if (!off) return NULL;
  tl_dtype et = b->dtype;
  et.lanes = 1;
  tl_expr *args[4] = {chk(E, tl_ir_buffer_ref(E->m, x->loc, b)), off, chk(E, tl_ir_cast(E->m, ve->loc, et, ve)),
                      chk(E, tl_ir_int(E->m, x->loc, TL_BOOL, 1))};
  if (!args[0] || !args[1] || !args[2] || !args[3]) return NULL;
  int in = tl_tile_atomic_intrin(tl_tile_op_lookup(fn + 2), NULL); /* fn is "T.atomic_add/max/min" */
  return in < 0 ? NULL : mk_expr(E, chk(E, tl_ir_call(E->m, x->loc, in, 4, args)));
}

tl_expr *tl_el_flat_offset(elab *E, tl_loc loc, const tl_buffer *b, int n, tl_expr *const *ix) {
  tl_expr *off = NULL;
  for (int k = 0; k < n; k++) {
    if (b->strides && k < b->ndim) {
      tl_expr *t = chk(E, tl_ir_binary(E->m, loc, TL_OP_MUL, ix[k], b->strides[k]));
      off = off && t ? chk(E, tl_ir_binary(E->m, loc, TL_OP_ADD, off, t)) : t;
    } else if (off && k < b->ndim) {
      tl_expr *t = chk(E, tl_ir_binary(E->m, loc, TL_OP_MUL, off, b->shape[k]));
      off = t ? chk(E, tl_ir_binary(E->m, loc, TL_OP_ADD, t, ix[k])) : NULL;
    } else {
      off = ix[k];
    }
    if (!off) return NULL;
  }
  return off ? off : chk(E, tl_ir_int(E->m, loc, TL_INT32, 0));
}

/* What a Python construct that kernels cannot use is called in messages. */
static const char *construct_name(tl_ast_expr_kind k) {
  switch (k) {
  case TL_AST_SET: return "set displays";
  case TL_AST_ELLIPSIS: return "'...'";
  case TL_AST_BYTES: return "bytes literals";
  case TL_AST_IMAG: return "complex literals";
  case TL_AST_BIGINT: return "integer literals of 2**63 or more";
  case TL_AST_FSTRING:
  case TL_AST_FORMATTED: return "f-strings";
  case TL_AST_STARRED: return "star expressions";
  case TL_AST_NAMEDEXPR: return "assignment expressions (':=')";
  case TL_AST_LAMBDA: return "'lambda'";
  case TL_AST_AWAIT: return "'await'";
  case TL_AST_YIELD:
  case TL_AST_YIELD_FROM: return "'yield'";
  case TL_AST_LISTCOMP: return "list comprehensions";
  case TL_AST_SETCOMP: return "set comprehensions";
  case TL_AST_GENEXP: return "generator expressions";
  case TL_AST_DICTCOMP: return "dict comprehensions";
  default: return "this expression";
  }
}

const char *stmt_name(tl_ast_stmt_kind k) {
  switch (k) {
  case TL_AST_CLASS: return "'class'";
  case TL_AST_DELETE: return "'del'";
  case TL_AST_RAISE: return "'raise'";
  case TL_AST_TRY: return "'try'";
  case TL_AST_ASSERT: return "'assert'";
  case TL_AST_GLOBAL: return "'global'";
  case TL_AST_NONLOCAL: return "'nonlocal'";
  case TL_AST_MATCH: return "'match'";
  default: return "this statement";
  }
}

/* Star arguments (f(*a), f(**k)) are not evaluated yet. */
static bool check_plain_args(elab *E, const tl_ast_expr *x) {
  for (int i = 0; i < x->u.call.nargs; i++)
    if (x->u.call.args[i]->kind == TL_AST_STARRED) {
      err(E, x->u.call.args[i]->loc, "star arguments ('*args') are not supported here");
      return false;
    }
  for (int i = 0; i < x->u.call.nkw; i++)
    if (!x->u.call.kw[i].name) {
      err(E, x->u.call.kw[i].loc, "star arguments ('**kwargs') are not supported here");
      return false;
    }
  return true;
}

static val *eval_call(elab *E, const tl_ast_expr *x) {
  const tl_ast_expr *f = x->u.call.func;
  bool py = false; /* list/dict methods, dict(k=v), itertools.product(*seqs): elab_pycalls.c */
  val *pv = py_method_call(E, x, &py);
  if (!py) pv = py_extra_call(E, x, &py);
  if (!py) pv = tl_el_prelude_call(E, x, &py);
  if (py) return pv;
  bool star = false;
  for (int i = 0; i < x->u.call.nargs; i++) star |= x->u.call.args[i]->kind == TL_AST_STARRED;
  for (int i = 0; i < x->u.call.nkw; i++) star |= !x->u.call.kw[i].name;
  if (star) { /* f(*args, **kwargs): forwarded to compile-time functions only */
    val *fv = eval(E, f);
    if (fv && fv->k == V_PYFUNC) return call_pyfunc(E, fv, x);
    if (fv) check_plain_args(E, x);
    return NULL;
  }
  if (f->kind == TL_AST_ATTR && !strcmp(f->u.attr.name, "astype")) {
    val *obj = eval(E, f->u.attr.value);
    if (!obj) return NULL;
    if (is_ir(obj) || is_num(obj)) {
      if (!check_kws(E, x, "astype", NULL) || !check_arity(E, x, "astype", 1, 1)) return NULL;
      val *dv = eval(E, x->u.call.args[0]);
      tl_dtype dt;
      if (!dv || !to_dtype(E, dv, x->u.call.args[0]->loc, &dt)) return NULL;
      tl_expr *e = to_expr(E, obj, f->u.attr.value->loc);
      return e ? mk_expr(E, chk(E, tl_ir_cast(E->m, x->loc, dt, e))) : NULL;
    }
    if (obj->k != V_OPAQUE) {
      err_val(E, f->u.attr.name_loc, obj, "'%s' object has no attribute 'astype'", type_name(obj));
      return NULL;
    }
  }
  val *fv = eval(E, f);
  if (!fv) return NULL;
  switch (fv->k) {
  case V_FUNC:
    if (!fv->builtin && !strncmp(fv->u.fname, "tirx.", 5)) { /* TVM's TIR builders (elab_tvm.c) */
      const char *t = tl_el_tirx_alias(fv->u.fname + 5);
      return t ? call_t(E, t, x) : tl_el_call_tirx(E, fv->u.fname + 5, x);
    }
    return fv->builtin ? call_builtin(E, fv->u.fname, x) : call_t(E, fv->u.fname, x);
  case V_DTYPE: return typed_literal(E, fv->u.dt, x);
  case V_OPAQUE:
    if (fv->u.op.module && !strcmp(fv->u.op.module, "math") && !strncmp(fv->u.op.desc, "math.", 5) &&
        !strchr(fv->u.op.desc + 5, '.') && !strchr(fv->u.op.desc, '('))
      return call_math(E, fv->u.op.desc + 5, x);
    if (!strcmp(fv->u.op.desc, "itertools.product")) {
      val **a = eval_args(E, x, "itertools.product");
      return a ? itertools_product(E, a, x) : NULL;
    }
    if (tl_el_is_tvm_datatype(fv)) return tl_el_call_datatype(E, fv, x);
    if (!strncmp(fv->u.op.desc, "tvm.tir", 7)) {
      err(E, x->loc, "'%s' (TVM's TIR builder) is not supported yet", fv->u.op.desc);
      return NULL;
    }
    if (E->pf) {
      err(E, x->loc, "'%s' cannot be called in a kernel (it is a host function, not TileLang)", fv->u.op.desc);
      return NULL;
    }
    return mk_opaque(E, tprintf(E, "%s(...)", fv->u.op.desc), fv->u.op.module);
  case V_NS:
    if (fv->u.ns == NS_JIT && !E->pf) return mk_opaque(E, "tilelang.jit(...)", "tilelang");
    break;
  case V_PRIMFUNC:
    if (!E->pf) return mk_opaque(E, tprintf(E, "%s(...)", fv->u.pf->name), NULL);
    break;
  case V_PYFUNC: return call_pyfunc(E, fv, x);
  default: break;
  }
  err_val(E, x->loc, fv, "%s is not callable", describe(E, fv));
  return NULL;
}

static val *eval_compare(elab *E, const tl_ast_expr *x) {
  val *acc = NULL;
  val *l = eval(E, x->u.cmp.operands[0]);
  if (!l) return NULL;
  for (int i = 0; i < x->u.cmp.n; i++) {
    val *r = eval(E, x->u.cmp.operands[i + 1]);
    if (!r) return NULL;
    val *c = binop(E, x->u.cmp.ops[i], l, r, x->u.cmp.op_locs[i]);
    if (!c) return NULL;
    if (!acc) {
      acc = c;
    } else {
      bool t;
      if (!is_ir(acc) && truthy(acc, &t)) {
        if (!t) return acc;
        acc = c;
      } else {
        acc = binop(E, "and", acc, c, x->u.cmp.op_locs[i]);
        if (!acc) return NULL;
      }
    }
    if (!is_ir(acc)) {
      bool t;
      if (truthy(acc, &t) && !t) return acc; /* short-circuit a < b < c */
    }
    l = r;
  }
  return acc;
}

static val *eval_inner(elab *E, const tl_ast_expr *x) {
  switch (x->kind) {
  case TL_AST_NAME: return eval_name(E, x);
  case TL_AST_INT: return mk_int(E, x->u.ival);
  case TL_AST_FLOAT: return mk_float(E, x->u.fval);
  case TL_AST_STR: return mk_str(E, x->u.str);
  case TL_AST_TRUE: return mk_bool(E, true);
  case TL_AST_FALSE: return mk_bool(E, false);
  case TL_AST_NONE: return mk(E, V_NONE);
  case TL_AST_ATTR: {
    val *v = eval(E, x->u.attr.value);
    return v ? get_attr(E, v, x->u.attr.name, x->u.attr.name_loc) : NULL;
  }
  case TL_AST_SUBSCRIPT: return eval_subscript(E, x);
  case TL_AST_SLICE: err(E, x->loc, "a slice can only be used inside a subscript"); return NULL;
  case TL_AST_CALL: return eval_call(E, x);
  case TL_AST_BINOP: {
    val *a = eval(E, x->u.bin.l);
    val *b = a ? eval(E, x->u.bin.r) : NULL;
    return b ? binop(E, x->u.bin.op, a, b, x->u.bin.op_loc) : NULL;
  }
  case TL_AST_BOOLOP: {
    bool is_and = !strcmp(x->u.bin.op, "and");
    val *a = eval(E, x->u.bin.l);
    if (!a) return NULL;
    bool t;
    if (!is_ir(a) && a->k != V_OPAQUE && truthy(a, &t)) {
      if (t != is_and) return a; /* Python: the deciding operand */
      return eval(E, x->u.bin.r);
    }
    val *b = eval(E, x->u.bin.r);
    return b ? binop(E, x->u.bin.op, a, b, x->u.bin.op_loc) : NULL;
  }
  case TL_AST_UNARY: {
    val *a = eval(E, x->u.un.x);
    return a ? unop(E, x->u.un.op, a, x->loc) : NULL;
  }
  case TL_AST_COMPARE: return eval_compare(E, x);
  case TL_AST_IFEXP: {
    val *c = eval(E, x->u.ifexp.test);
    if (!c) return NULL;
    bool t;
    if (!is_ir(c) && truthy(c, &t)) return eval(E, t ? x->u.ifexp.body : x->u.ifexp.orelse);
    val *a = eval(E, x->u.ifexp.body);
    val *b = a ? eval(E, x->u.ifexp.orelse) : NULL;
    if (!b) return NULL;
    tl_expr *ce = to_expr(E, c, x->u.ifexp.test->loc);
    tl_expr *ae = ce ? to_expr(E, a, x->u.ifexp.body->loc) : NULL;
    tl_expr *be = ae ? to_expr(E, b, x->u.ifexp.orelse->loc) : NULL;
    return be ? mk_expr(E, chk(E, tl_ir_select(E->m, x->loc, ce, ae, be))) : NULL;
  }
  case TL_AST_TUPLE:
  case TL_AST_LIST: {
    val *t = mk_tuple(E, x->u.list.n, x->kind == TL_AST_LIST);
    if (!t) return NULL;
    for (int i = 0; i < x->u.list.n; i++)
      if (!(t->u.tup.items[i] = eval(E, x->u.list.items[i]))) return NULL;
    return t;
  }
  case TL_AST_DICT: {
    int n = x->u.dict.n;
    for (int i = 0; i < n; i++)
      if (!x->u.dict.keys[i]) {
        err(E, x->u.dict.values[i]->loc, "dictionary unpacking ('**') is not supported here");
        return NULL;
      }
    val *d = mk_dict(E, n);
    if (!d) return NULL;
    d->u.dict.n = n;
    for (int i = 0; i < n; i++) {
      if (!(d->u.dict.keys[i] = eval(E, x->u.dict.keys[i]))) return NULL;
      if (!(d->u.dict.vals[i] = eval(E, x->u.dict.values[i]))) return NULL;
      d->u.dict.klocs[i] = x->u.dict.keys[i]->loc;
      d->u.dict.vlocs[i] = x->u.dict.values[i]->loc;
    }
    return d;
  }
  case TL_AST_LISTCOMP:
  case TL_AST_SETCOMP:
  case TL_AST_GENEXP:
  case TL_AST_DICTCOMP: return eval_comprehension(E, x);
  case TL_AST_FSTRING: return eval_fstring(E, x);
  case TL_AST_LAMBDA: return mk_pyfunc(E, NULL, x);
  default: err(E, x->loc, "%s are not supported here", construct_name(x->kind)); return NULL;
  }
  err(E, x->loc, "unsupported expression");
  return NULL;
}

val *eval(elab *E, const tl_ast_expr *x) {
  if (!x || E->oom) return NULL;
  if (E->depth >= MAX_DEPTH) {
    err(E, x->loc, "expression nested too deeply (limit %d)", MAX_DEPTH);
    return NULL;
  }
  E->depth++;
  val *v = eval_inner(E, x);
  E->depth--;
  if (v && v->k == V_POISON) return NULL;
  return v;
}
