/* Elaborator, TileLang's language ops that are not tile ops of
 * their own: the elaborator writes each as the tile IR it means (T.copy
 * tile ops, T.Parallel and serial loops of loads and stores), so that the
 * lowering, the reference evaluator and the SIMT executor need nothing new.
 *
 *  - T.cumsum(src, dst=None, dim=0, reverse=False) (TileLang's scan_op.py):
 *    the inclusive prefix sum of src along dim into dst (src when None), on
 *    shared buffers or regions in place:
 *        for <other dims> in T.Parallel(...):
 *            for k in T.serial(E_dim - 1):
 *                S[.., k+1, ..] = S[.., k+1, ..] + S[.., k, ..]   (reverse: from the end)
 *    each sum rounded to the buffer's dtype, in order along dim.  T.cummax
 *    (the same signature) is the same scan with T.max (NaN as T.max has it).
 *    Their annotations= (TileLang's codegen hints) are accepted and ignored.  A fragment
 *    (or a dst other than src) goes as in TileLang through a shared copy: a
 *    shared buffer src_scan_<line> of src's shape, T.copy(src, it), the
 *    scan, T.copy(it, dst) (dst may be global then); a shared src with another
 *    shared dst is copied to dst first and scanned there.
 *  - T.transpose(src, dst) (TileLang's copy_op.py): dst[.., j, i] =
 *    src[.., i, j] for shared (or fragment) regions of shapes (.., M, N) and
 *    (.., N, M) (leading unit dims of either, as D[1, :, :], ignored): one
 *    T.Parallel over src's extents.
 *
 *  - T.view(src, shape=None, dtype=None) / T.reshape(src, shape)
 *    (TileLang's customize.py): a buffer of the new shape over src's
 *    elements, row-major (same dtype: the number of elements must agree when
 *    both are constant).  It exists only here: an element V[i, ...] is
 *    src[<the same row-major position>] (tl_el_view_remap, used by loads,
 *    stores and augmented stores), and T.copy with a view operand becomes
 *    `for ... in T.Parallel(<the extents>): dst[...] = src[...]` through the
 *    same remapping (tl_el_view_tile).  A view of another whole-byte dtype
 *    (the total bits must agree) is read as its element's bits, little-endian,
 *    from the viewed elements (tl_el_view_load: T.reinterpret to unsigned
 *    ints, shifts and ors); storing through it is "not supported yet", as are
 *    other tile ops on a view.
 *
 *  - T.annotate_layout({B: T.Layout(shape, fn)}) of a global buffer B
 *    (TileLang's flash-attention backward, make_dq_layout): B's memory is
 *    permuted, its element idx lives at the row-major position of fn(*idx) in
 *    the layout's output space (each output's extent: its largest value + 1,
 *    by interval arithmetic over +, -, *, // and % of constants), which must
 *    hold as many elements as B.  B becomes a view of itself whose remapping
 *    is fn (tl_el_global_layout): later loads, stores, T.copy and atomics
 *    of B go through it (a region atomic becomes a T.Parallel of element
 *    atomics, as T.copy of a view); the tile IR holds only the permuted
 *    accesses, so both executors and the lowering agree.
 *
 *  - T.im2col(img, col, nhw_step, c_step, kernel, stride, dilation, pad)
 *    (TileLang's copy_op.py and its SIMT lowering in src/op/copy.cc; also the
 *    deprecated T.c2d_im2col): img an (N, H, W, C) tensor, col's last two
 *    dims an (M, K) tile of the im2col matrix, whose row m = nhw_step*M + i
 *    is the output pixel (n, oh, ow) and column k = c_step*K + j the filter
 *    tap (kh, kw, c), row-major over (KH, KW, C):
 *        for i, j in T.Parallel(M, K):
 *            if <ih = oh*stride + kh*dilation - pad, iw likewise, inside the
 *                image, and m, k inside the matrix>:  col[.., i, j] = img[n, ih, iw, c]
 *            else: col[.., i, j] = 0
 *    with OH = (H + 2*pad - dilation*(kernel - 1) - 1) // stride + 1 (OW alike).
 *
 * All need constant extents (a tile) and report bad operands at their
 * location. */
#include <string.h>

#include "Frontend/elab_impl.h"

const char *const tl_el_lang_op_names[] = {"align_up",   "cumsum", "transpose", "view",          "reshape", "im2col",
                                           "c2d_im2col", "cummax", "print",     "device_assert", NULL};

#define LMAXD 8

static tl_expr *bin(elab *E, tl_loc loc, tl_binop op, tl_expr *a, tl_expr *b);

static bool push(elab *E, stmt_vec *out, tl_stmt *s) {
  if (!s) return false;
  if (!tl_vec_push(out, s)) return oom(E), false;
  return true;
}

/* A loop (T.Parallel when kind says so) over [0, ext[k]) of n fresh int32
 * variables named <stem><k>, whose body the caller sets; vars[k] receives
 * the variables. */
static tl_stmt *new_loop(elab *E, tl_loc loc, tl_loop_kind kind, int n, const int64_t *ext, const char *stem,
                         tl_var **vars) {
  tl_stmt *f = tl_ir_stmt(E->m, loc, TL_STMT_FOR);
  tl_var **vs = malloc_ir(E, sizeof(tl_var *) * (size_t)n);
  tl_expr **mins = malloc_ir(E, sizeof(tl_expr *) * (size_t)n), **exts = malloc_ir(E, sizeof(tl_expr *) * (size_t)n);
  if (!f || !vs || !mins || !exts) return oom(E);
  tl_ir_loop_init(f, kind, n, vs, mins, exts);
  for (int k = 0; k < n; k++) {
    const char *name = n == 1 ? stem : tprintf(E, "%s%d", stem, k);
    if (!name || !(vs[k] = vars[k] = tl_ir_new_var(E->m, loc, intern(E, name), TL_INT32, TL_VAR_LOOP))) return oom(E);
    if (!(mins[k] = lit_int(E, loc, 0)) || !(exts[k] = lit_int(E, loc, ext[k]))) return NULL;
  }
  return f;
}

/* The region operand of value v (a buffer or a buffer region), with constant
 * extents ext[] (ndim: *n); what names the op's argument in messages. */
static bool tile_region(elab *E, val *v, tl_loc loc, const char *fn, const char *what, tl_operand *o, int *n,
                        int64_t *ext) {
  if (v->k != V_BUFFER && v->k != V_BUFREF) {
    err_val(E, loc, v, "%s: %s must be a buffer or a buffer region, got %s", fn, what, describe(E, v));
    return false;
  }
  if (!region_from(E, v, o, loc)) return false;
  *n = o->region.ndim;
  if (*n < 1 || *n > LMAXD) {
    err(E, loc, "%s: %s must have 1 to %d dimensions", fn, what, LMAXD);
    return false;
  }
  for (int k = 0; k < *n; k++)
    if (!tl_expr_is_const_int(o->region.extent[k], &ext[k]) || ext[k] < 1) {
      err(E, loc, "%s: %s needs constant extents (a tile)", fn, what);
      return false;
    }
  return true;
}

/* r.min[k] + i[k] for every dim k (i NULL: the mins). */
static bool region_index(elab *E, tl_loc loc, const tl_region *r, tl_expr *const *i, tl_expr **out) {
  for (int k = 0; k < r->ndim; k++) {
    out[k] = r->min[k];
    if (i && i[k] && !(out[k] = chk(E, tl_ir_binary(E->m, loc, TL_OP_ADD, r->min[k], i[k])))) return false;
  }
  return true;
}

static tl_stmt *store(elab *E, tl_loc loc, tl_buffer *b, int n, tl_expr **idx, tl_expr *value) {
  tl_stmt *s = tl_ir_stmt(E->m, loc, TL_STMT_STORE);
  tl_expr **ix = malloc_ir(E, sizeof(tl_expr *) * (size_t)n);
  if (!s || !ix || !value) return s && ix ? NULL : oom(E);
  memcpy(ix, idx, sizeof(tl_expr *) * (size_t)n);
  s->u.store.buffer = b;
  s->u.store.n = n;
  s->u.store.indices = ix;
  s->u.store.value = value;
  return s;
}

/* T.copy(src, dst) of two region operands. */
static tl_stmt *copy_op(elab *E, tl_loc loc, const tl_operand *src, const tl_operand *dst) {
  tl_stmt *s = tl_ir_stmt(E->m, loc, TL_STMT_TILE);
  tl_operand *args = malloc_ir(E, sizeof(tl_operand) * 2);
  int na = tl_tile_ops[TL_TILE_COPY].nattrs;
  tl_expr **attrs = na ? malloc_ir(E, sizeof(tl_expr *) * (size_t)na) : NULL;
  if (!s || !args || (na && !attrs)) return oom(E);
  if (na) memset(attrs, 0, sizeof(tl_expr *) * (size_t)na);
  args[0] = *src;
  args[1] = *dst;
  s->u.tile.op = TL_TILE_COPY;
  s->u.tile.nargs = 2;
  s->u.tile.args = args;
  s->u.tile.attrs = attrs;
  return s;
}

/* A whole-buffer region operand of b. */
static bool whole(elab *E, tl_loc loc, tl_buffer *b, tl_operand *o) {
  val *bv = mk(E, V_BUFFER);
  if (!bv) return false;
  bv->u.buf = b;
  return region_from(E, bv, o, loc);
}

/* The in-place scan of region r (extents ext, n dims) along dim. */
static tl_stmt *scan_loops(elab *E, tl_loc loc, const tl_region *r, int n, const int64_t *ext, int dim, bool reverse,
                           tl_binop combine) {
  int64_t pext[LMAXD];
  int np = 0;
  for (int k = 0; k < n; k++)
    if (k != dim) pext[np++] = ext[k];
  if (np == 0) pext[np++] = 1; /* 1-D: one thread scans the whole row */
  tl_var *pv[LMAXD], *kv;
  tl_stmt *par = new_loop(E, loc, TL_LOOP_PARALLEL, np, pext, "cs_i", pv);
  int64_t steps = ext[dim] - 1;
  tl_stmt *ser = par ? new_loop(E, loc, TL_LOOP_SERIAL, 1, &steps, "cs_k", &kv) : NULL;
  if (!ser) return NULL;
  tl_expr *cur[LMAXD], *prev[LMAXD], *ic[LMAXD] = {0}, *ip[LMAXD] = {0};
  tl_expr *k = chk(E, tl_ir_var(E->m, loc, kv));
  if (!k) return NULL;
  for (int d = 0, p = 0; d < n; d++) {
    if (d != dim) {
      if (!(ic[d] = ip[d] = chk(E, tl_ir_var(E->m, loc, pv[p++])))) return NULL;
      continue;
    }
    /* forward: cur = k + 1, prev = k; reverse: cur = E - 2 - k, prev = E - 1 - k */
    tl_expr *a = lit_int(E, loc, reverse ? ext[d] - 2 : 1), *b = lit_int(E, loc, reverse ? ext[d] - 1 : 0);
    tl_binop op = reverse ? TL_OP_SUB : TL_OP_ADD;
    if (!a || !b) return NULL;
    ic[d] = reverse ? chk(E, tl_ir_binary(E->m, loc, op, a, k)) : chk(E, tl_ir_binary(E->m, loc, op, k, a));
    ip[d] = reverse ? chk(E, tl_ir_binary(E->m, loc, op, b, k)) : k;
    if (!ic[d] || !ip[d]) return NULL;
  }
  if (!region_index(E, loc, r, ic, cur) || !region_index(E, loc, r, ip, prev)) return NULL;
  tl_buffer *b = r->buffer;
  tl_expr *lc = chk(E, tl_ir_load(E->m, loc, b, n, cur)), *lp = lc ? chk(E, tl_ir_load(E->m, loc, b, n, prev)) : NULL;
  tl_expr *sum = lp ? chk(E, tl_ir_binary(E->m, loc, combine, lc, lp)) : NULL;
  if (!sum) return NULL;
  ser->u.loop.body = store(E, loc, b, n, cur, sum);
  par->u.loop.body = ser;
  return ser->u.loop.body ? par : NULL;
}

static bool is_shared(const tl_buffer *b) { return b->scope == TL_SCOPE_SHARED || b->scope == TL_SCOPE_SHARED_DYN; }

static bool same_region(const tl_region *a, const tl_region *b) {
  if (a->buffer != b->buffer || a->ndim != b->ndim) return false;
  for (int k = 0; k < a->ndim; k++)
    if (!tl_expr_equal(a->min[k], b->min[k]) || !tl_expr_equal(a->extent[k], b->extent[k])) return false;
  return true;
}

static bool cumsum(elab *E, const tl_ast_expr *x, const char *fn, tl_binop combine, tl_loc loc, stmt_vec *out) {
  static const char *const params[] = {"src", "dst", "dim", "reverse", "annotations", NULL};
  const tl_ast_expr *a[5];
  if (!bind_args(E, x, fn, params, 1, a)) return false;
  val *sv = eval(E, a[0]);
  val *dv = sv && a[1] ? eval(E, a[1]) : sv;
  if (!sv || !dv) return false;
  tl_operand so = {0}, dop = {0};
  int n, dn;
  int64_t ext[LMAXD], dext[LMAXD];
  if (!tile_region(E, sv, a[0]->loc, fn, "src", &so, &n, ext)) return false;
  if (!tile_region(E, dv, a[1] ? a[1]->loc : a[0]->loc, fn, "dst", &dop, &dn, dext)) return false;
  int64_t dim = 0, rev = 0;
  if (a[2] && !to_const_int(E, eval(E, a[2]), a[2]->loc, tprintf(E, "the dim of %s", fn), &dim)) return false;
  if (a[3]) {
    val *rv = eval(E, a[3]);
    bool t;
    if (!rv) return false;
    if (is_ir(rv) || !truthy(rv, &t)) {
      err_val(E, a[3]->loc, rv, "%s: reverse must be a constant bool, got %s", fn, describe(E, rv));
      return false;
    }
    rev = t;
  }
  if (dim < -n || dim >= n) {
    err(E, a[2]->loc, "%s: dim %lld is out of range for a %d-dimensional src", fn, (long long)dim, n);
    return false;
  }
  if (dim < 0) dim += n;
  bool same_shape = dn == n;
  for (int k = 0; same_shape && k < n; k++) same_shape = ext[k] == dext[k];
  if (!same_shape) {
    err(E, a[1]->loc, "%s: dst must have src's shape", fn);
    return false;
  }
  const tl_buffer *sb = so.region.buffer, *db = dop.region.buffer;
  if (!is_shared(sb) && sb->scope != TL_SCOPE_FRAGMENT) {
    err(E, a[0]->loc, "%s: src '%s' must be a shared or fragment buffer, but it is %s", fn, sb->name,
        tl_scope_name(sb->scope));
    return false;
  }
  if (is_shared(sb) && same_region(&so.region, &dop.region))
    return push(E, out, scan_loops(E, loc, &so.region, n, ext, (int)dim, rev, combine));
  if (is_shared(sb) && is_shared(db))
    return push(E, out, copy_op(E, loc, &so, &dop)) &&
           push(E, out, scan_loops(E, loc, &dop.region, n, ext, (int)dim, rev, combine));
  /* through a shared copy of src's shape */
  tl_expr **shape = malloc_ir(E, sizeof(tl_expr *) * (size_t)n);
  if (!shape) return false;
  for (int k = 0; k < n; k++)
    if (!(shape[k] = lit_int(E, loc, ext[k]))) return false;
  const char *name = intern(E, tprintf(E, "%s_scan_%d", sb->name, loc.line));
  tl_buffer *w = name ? tl_ir_new_buffer(E->m, loc, name, sb->dtype, TL_SCOPE_SHARED_DYN, n, shape) : NULL;
  tl_stmt *al = w ? tl_ir_stmt(E->m, loc, TL_STMT_ALLOC) : NULL;
  tl_operand wo = {0};
  if (!al) return oom(E), false;
  al->u.alloc.buffer = w;
  return whole(E, loc, w, &wo) && push(E, out, al) && push(E, out, copy_op(E, loc, &so, &wo)) &&
         push(E, out, scan_loops(E, loc, &wo.region, n, ext, (int)dim, rev, combine)) &&
         push(E, out, copy_op(E, loc, &wo, &dop));
}

static bool transpose(elab *E, const tl_ast_expr *x, tl_loc loc, stmt_vec *out) {
  static const char *const params[] = {"src", "dst", "annotations", NULL};
  const char *fn = "T.transpose";
  const tl_ast_expr *a[3];
  if (!bind_args(E, x, fn, params, 2, a)) return false;
  val *sv = eval(E, a[0]);
  val *dv = sv ? eval(E, a[1]) : NULL;
  if (!dv) return false;
  tl_operand so = {0}, dop = {0};
  int n, dn;
  int64_t ext[LMAXD], dext[LMAXD];
  if (!tile_region(E, sv, a[0]->loc, fn, "src", &so, &n, ext) ||
      !tile_region(E, dv, a[1]->loc, fn, "dst", &dop, &dn, dext))
    return false;
  /* leading unit dims of the operand of higher rank (D[1, :, :]) take its mins */
  int m = n < dn ? n : dn, so_ = n - m, do_ = dn - m;
  bool ok = m >= 2 && ext[n - 2] == dext[dn - 1] && ext[n - 1] == dext[dn - 2];
  for (int k = 0; ok && k < m - 2; k++) ok = ext[so_ + k] == dext[do_ + k];
  for (int k = 0; ok && k < so_; k++) ok = ext[k] == 1;
  for (int k = 0; ok && k < do_; k++) ok = dext[k] == 1;
  if (!ok) {
    err(E, x->loc, "%s: src of shape (..., M, N) needs a dst of shape (..., N, M) with at least 2 dimensions", fn);
    return false;
  }
  tl_var *v[LMAXD];
  tl_stmt *par = new_loop(E, loc, TL_LOOP_PARALLEL, m, ext + so_, "tr_i", v);
  if (!par) return false;
  tl_expr *is[LMAXD] = {0}, *id[LMAXD] = {0}, *si[LMAXD], *di[LMAXD];
  for (int k = 0; k < m; k++)
    if (!(is[so_ + k] = id[do_ + k] = chk(E, tl_ir_var(E->m, loc, v[k])))) return false;
  id[dn - 2] = is[n - 1];
  id[dn - 1] = is[n - 2];
  if (!region_index(E, loc, &so.region, is, si) || !region_index(E, loc, &dop.region, id, di)) return false;
  tl_expr *ld = chk(E, tl_ir_load(E->m, loc, so.region.buffer, n, si));
  if (ld && !tl_dtype_eq(ld->dtype, dop.region.buffer->dtype))
    ld = chk(E, tl_ir_cast(E->m, loc, dop.region.buffer->dtype, ld));
  par->u.loop.body = ld ? store(E, loc, dop.region.buffer, dn, di, ld) : NULL;
  return par->u.loop.body && push(E, out, par);
}

/* ---------------------------------------------------------------- views */
typedef struct tl_el_view {
  tl_buffer *view, *base; /* base: a declared buffer (never a view) */
  val *lay_fn;            /* a global layout: view == base, fn its map */
  int lay_n;              /* the layout's output dims and their extents */
  int64_t lay_ext[LMAXD];
  struct tl_el_view *next;
} el_view;

static el_view *view_entry(elab *E, const tl_buffer *b) {
  for (el_view *v = E->views; v; v = v->next)
    if (v->view == b) return v;
  return NULL;
}

static tl_buffer *view_base(elab *E, const tl_buffer *b) {
  el_view *v = view_entry(E, b);
  return v ? v->base : NULL;
}

/* [*lo, *hi] of e with vars[k] in [0, ext[k]); false when e is not made of
 * constants, the variables, +, -, * and floor // and % by positive constants. */
static bool lay_range(const tl_expr *e, int n, tl_var *const *vars, const int64_t *ext, int64_t *lo, int64_t *hi) {
  int64_t c, al, ah, bl, bh;
  if (tl_expr_is_const_int(e, &c)) return *lo = *hi = c, true;
  if (e->kind == TL_EXPR_VAR) {
    for (int k = 0; k < n; k++)
      if (e->u.var == vars[k]) return *lo = 0, *hi = ext[k] - 1, true;
    return false;
  }
  if (e->kind != TL_EXPR_BINARY || !lay_range(e->u.bin.a, n, vars, ext, &al, &ah) ||
      !lay_range(e->u.bin.b, n, vars, ext, &bl, &bh))
    return false;
  const int64_t big = (int64_t)1 << 40; /* layouts index tensors: keep products exact */
  if (al < -big || ah > big || bl < -big || bh > big) return false;
  switch (e->u.bin.op) {
  case TL_OP_ADD: return *lo = al + bl, *hi = ah + bh, true;
  case TL_OP_SUB: return *lo = al - bh, *hi = ah - bl, true;
  case TL_OP_MUL: {
    int64_t p[4] = {al * bl, al * bh, ah * bl, ah * bh};
    *lo = *hi = p[0];
    for (int i = 1; i < 4; i++) *lo = p[i] < *lo ? p[i] : *lo, *hi = p[i] > *hi ? p[i] : *hi;
    return true;
  }
  case TL_OP_FLOORDIV:
    if (bl != bh || bl <= 0) return false;
    *lo = al >= 0 ? al / bl : -((-al + bl - 1) / bl);
    *hi = ah >= 0 ? ah / bl : -((-ah + bl - 1) / bl);
    return true;
  case TL_OP_FLOORMOD:
    if (bl != bh || bl <= 0) return false;
    if (al >= 0 && ah < bl) return *lo = al, *hi = ah, true;
    return *lo = 0, *hi = bl - 1, true;
  default: return false;
  }
}

/* fn(*idx) of a global layout: its outputs as IR expressions (out[lay_n]). */
static bool layout_apply(elab *E, tl_loc loc, const el_view *ev, const char *name, int n, tl_expr *const *idx,
                         tl_expr **out, int *nout) {
  val *args[LMAXD];
  for (int k = 0; k < n; k++)
    if (!(args[k] = mk_expr(E, idx[k]))) return false;
  val *r = tl_el_call_pyfunc_values(E, ev->lay_fn, n, args, loc);
  if (!r) return false;
  if (r->k != V_TUPLE || r->u.tup.n < 1 || r->u.tup.n > LMAXD) {
    err_val(E, loc, r, "the T.Layout of '%s' must give a list of 1 to %d indices, got %s", name, LMAXD, describe(E, r));
    return false;
  }
  for (int k = 0; k < r->u.tup.n; k++)
    if (!(out[k] = to_expr(E, r->u.tup.items[k], loc))) return false;
  *nout = r->u.tup.n;
  return true;
}

/* The row-major position of element idx of a buffer with a global layout. */
static tl_expr *layout_flat(elab *E, tl_loc loc, const el_view *ev, int n, tl_expr *const *idx) {
  tl_expr *o[LMAXD];
  int no;
  if (n != ev->view->ndim) {
    err(E, loc, "'%s' has %d dimensions, indexed with %d", ev->view->name, ev->view->ndim, n);
    return NULL;
  }
  if (!layout_apply(E, loc, ev, ev->view->name, n, idx, o, &no)) return NULL;
  if (no != ev->lay_n) {
    err(E, loc, "the T.Layout of '%s' gave %d indices here, %d where it was annotated", ev->view->name, no, ev->lay_n);
    return NULL;
  }
  tl_expr *flat = lit_int(E, loc, 0);
  for (int k = 0; flat && k < no; k++)
    flat = bin(E, loc, TL_OP_ADD, bin(E, loc, TL_OP_MUL, flat, lit_int(E, loc, ev->lay_ext[k])), o[k]);
  return flat;
}

bool tl_el_global_layout(elab *E, val *kv, const tl_ast_expr *k, const tl_ast_expr *lv) {
  tl_buffer *b = kv->u.buf;
  val *L = eval(E, lv);
  if (!L) return false;
  if (L->k != V_LAYOUT) {
    err_val(E, lv->loc, L,
            "T.annotate_layout: the layout of the global buffer '%s' must be a T.Layout(shape, "
            "forward_fn), got %s",
            b->name, describe(E, L));
    return false;
  }
  for (el_view *v = E->views; v; v = v->next)
    if (v->view == b || v->base == b) {
      err(E, k->loc, "T.annotate_layout: '%s' %s", b->name,
          v->lay_fn ? "already has a layout" : "is a T.view / T.reshape or has one (not supported yet with a layout)");
      return false;
    }
  int n = b->ndim;
  int64_t ext[LMAXD], total = 1, slots = 1;
  const val *sh = L->u.lay.shape;
  bool same = sh->k == V_TUPLE && sh->u.tup.n == n && n >= 1 && n <= LMAXD && !b->strides;
  for (int d = 0; same && d < n; d++) {
    int64_t s;
    same = tl_expr_is_const_int(b->shape[d], &ext[d]) && is_num(sh->u.tup.items[d]) &&
           (s = as_i(sh->u.tup.items[d])) == ext[d] && ext[d] > 0 && !__builtin_mul_overflow(total, ext[d], &total);
  }
  if (!same) {
    err(E, lv->loc,
        "T.annotate_layout: the T.Layout of the global buffer '%s' must have its constant, contiguous "
        "shape (at most %d dims)",
        b->name, LMAXD);
    return false;
  }
  el_view *ev = talloc(E, sizeof *ev);
  tl_var *vars[LMAXD];
  tl_expr *ix[LMAXD], *o[LMAXD];
  if (!ev) return false;
  *ev = (el_view){.view = b, .base = b, .lay_fn = L->u.lay.fn};
  for (int d = 0; d < n; d++) {
    vars[d] = tl_ir_new_var(E->m, lv->loc, intern(E, tprintf(E, "%s_i%d", b->name, d)), TL_INT32, TL_VAR_LOOP);
    if (!vars[d] || !(ix[d] = chk(E, tl_ir_var(E->m, lv->loc, vars[d])))) return oom(E), false;
  }
  if (!layout_apply(E, lv->loc, ev, b->name, n, ix, o, &ev->lay_n)) return false;
  for (int d = 0; d < ev->lay_n; d++) {
    int64_t lo, hi;
    if (!lay_range(o[d], n, vars, ext, &lo, &hi) || lo < 0 || __builtin_mul_overflow(slots, hi + 1, &slots)) {
      err(E, lv->loc,
          "T.annotate_layout: index %d of the T.Layout of '%s' is not a bounded non-negative index "
          "(constants, the buffer's indices, +, -, *, // and %% by positive constants)",
          d, b->name);
      return false;
    }
    ev->lay_ext[d] = hi + 1;
  }
  if (slots != total) {
    err(E, lv->loc,
        "T.annotate_layout: the T.Layout of '%s' maps its %lld elements into %lld places; a global "
        "buffer's layout must be one-to-one",
        b->name, (long long)total, (long long)slots);
    return false;
  }
  ev->next = E->views;
  E->views = ev;
  return true;
}

/* The number of elements of b: a constant (*c, true) or an expression. */
static tl_expr *numel(elab *E, tl_loc loc, const tl_buffer *b, int64_t *c, bool *is_const) {
  tl_expr *p = lit_int(E, loc, 1);
  *c = 1;
  *is_const = true;
  for (int k = 0; p && k < b->ndim; k++) {
    int64_t e;
    if (!tl_expr_is_const_int(b->shape[k], &e)) {
      *is_const = false;
    } else if (e < 0) {
      err(E, loc, "dimension %d of '%s' is negative (%lld)", k, b->name, (long long)e);
      return NULL;
    } else if (__builtin_mul_overflow(*c, e, c)) {
      err(E, loc, "the shape of '%s' has more elements than int64 holds", b->name);
      return NULL;
    }
    p = chk(E, tl_ir_binary(E->m, loc, TL_OP_MUL, p, b->shape[k]));
  }
  return p;
}

val *tl_el_call_view(elab *E, const char *name, const tl_ast_expr *x, const char *fn) {
  static const char *const vparams[] = {"src", "shape", "dtype", NULL};
  bool reshape = !strcmp(name, "reshape");
  const tl_ast_expr *a[3] = {0};
  if (!bind_args(E, x, fn, vparams, reshape ? 2 : 1, a)) return NULL;
  if (reshape && a[2]) {
    err(E, a[2]->loc, "%s takes no dtype (use T.view)", fn);
    return NULL;
  }
  return tl_el_make_view(E, x, a, eval(E, a[0]), fn);
}

val *tl_el_make_view(elab *E, const tl_ast_expr *x, const tl_ast_expr *const a[3], val *sv, const char *fn) {
  if (!sv) return NULL;
  if (sv->k != V_BUFFER || sv->u.buf->scope == TL_SCOPE_LOCAL_VAR) {
    err_val(E, a[0]->loc, sv, "%s: src must be a buffer, got %s", fn, describe(E, sv));
    return NULL;
  }
  tl_buffer *src = sv->u.buf, *base = view_base(E, src);
  if (!base) base = src;
  el_view *sl = view_entry(E, base);
  if (sl && sl->lay_fn) {
    err(E, a[0]->loc, "%s of '%s', which has a T.Layout, is not supported yet", fn, base->name);
    return NULL;
  }
  if (base->strides) {
    err(E, a[0]->loc, "%s of the strided tensor '%s' is not supported yet", fn, base->name);
    return NULL;
  }
  tl_dtype dt = src->dtype;
  if (a[2]) {
    val *dv = eval(E, a[2]);
    if (!dv || (dv->k != V_NONE && !to_dtype(E, dv, a[2]->loc, &dt))) return NULL;
    if (!tl_dtype_eq(dt, base->dtype) &&
        (!tl_reinterpret_ok(dt, (tl_dtype){TL_TYPE_UINT, dt.bits, 1}) ||
         !tl_reinterpret_ok(base->dtype, (tl_dtype){TL_TYPE_UINT, base->dtype.bits, 1}) ||
         (dt.bits % base->dtype.bits && base->dtype.bits % dt.bits))) {
      err(E, a[2]->loc, "%s from %s to %s is not supported yet (whole-byte scalar dtypes only)", fn,
          tl_dtype_name(base->dtype), tl_dtype_name(dt));
      return NULL;
    }
  }
  int ndim = src->ndim;
  tl_expr **shape = src->shape;
  if (a[1]) {
    val *shv = eval(E, a[1]);
    if (!shv) return NULL;
    if (shv->k != V_NONE && !eval_shape(E, a[1], &ndim, &shape)) return NULL;
  }
  tl_buffer *v =
      tl_ir_new_buffer(E->m, x->loc, intern(E, tprintf(E, "%s_view", src->name)), dt, base->scope, ndim, shape);
  el_view *ev = talloc(E, sizeof *ev);
  val *bv = v && ev ? mk(E, V_BUFFER) : NULL;
  if (!bv) return v ? NULL : oom(E);
  int64_t nv, ns;
  bool cv, cs;
  if (!numel(E, x->loc, v, &nv, &cv) || !numel(E, x->loc, base, &ns, &cs)) return NULL;
  int64_t bits_v = 0, bits_s = 0; /* checked: a dim of -2**63 overflowed the product (found by fuzzing) */
  bool ovf = cv && cs &&
             (__builtin_mul_overflow(nv, (int64_t)dt.bits, &bits_v) ||
              __builtin_mul_overflow(ns, (int64_t)base->dtype.bits, &bits_s));
  if (ovf) {
    err(E, (a[1] ? a[1] : x)->loc, "%s: the new shape's size in bits overflows int64 (%lld elements of %d bits)", fn,
        (long long)nv, dt.bits);
    return NULL;
  }
  if (cv && cs && bits_v != bits_s) {
    err(E, (a[1] ? a[1] : x)->loc, "%s: the new shape holds %lld bits, '%s' %lld", fn, (long long)bits_v, src->name,
        (long long)bits_s);
    return NULL;
  }
  ev->view = v;
  ev->base = base;
  ev->next = E->views;
  E->views = ev;
  bv->u.buf = v;
  return bv;
}

/* The row-major position of view b's element idx (n indices). */
static tl_expr *view_flat(elab *E, tl_loc loc, const tl_buffer *b, int n, tl_expr *const *idx) {
  if (n != b->ndim) {
    err(E, loc, "view '%s' has %d dimensions, indexed with %d", b->name, b->ndim, n);
    return NULL;
  }
  tl_expr *flat = lit_int(E, loc, 0);
  for (int k = 0; flat && k < n; k++) flat = bin(E, loc, TL_OP_ADD, bin(E, loc, TL_OP_MUL, flat, b->shape[k]), idx[k]);
  return flat;
}

/* The indices of base's element at row-major position flat (*n, *idx). */
static bool base_indices(elab *E, tl_loc loc, const tl_buffer *base, tl_expr *flat, int *n, tl_expr ***idx) {
  int m = base->ndim;
  tl_expr **out = malloc_ir(E, sizeof(tl_expr *) * (size_t)(m ? m : 1));
  if (!flat || !out) return NULL;
  tl_expr *rest = flat; /* base index k = (flat / prod(shape[k+1:])) % shape[k] */
  for (int k = m - 1; k >= 0; k--) {
    out[k] = k ? chk(E, tl_ir_binary(E->m, loc, TL_OP_FLOORMOD, rest, base->shape[k])) : rest;
    if (k) rest = chk(E, tl_ir_binary(E->m, loc, TL_OP_FLOORDIV, rest, base->shape[k]));
    if (!out[k] || !rest) return NULL;
  }
  *n = m;
  *idx = out;
  return true;
}

tl_buffer *tl_el_view_remap(elab *E, tl_loc loc, tl_buffer *b, int *n, tl_expr ***idx) {
  tl_buffer *base = b ? view_base(E, b) : NULL;
  if (!base) return b;
  if (!tl_dtype_eq(b->dtype, base->dtype)) {
    err(E, loc, "storing through the view '%s' that changes the dtype (%s of %s) is not supported yet", b->name,
        tl_dtype_name(b->dtype), tl_dtype_name(base->dtype));
    return NULL;
  }
  el_view *ev = view_entry(E, b);
  tl_expr *flat = ev->lay_fn ? layout_flat(E, loc, ev, *n, *idx) : view_flat(E, loc, b, *n, *idx);
  return flat && base_indices(E, loc, base, flat, n, idx) ? base : NULL;
}

/* base's element at row-major position flat, as the unsigned int of its width. */
static tl_expr *base_bits(elab *E, tl_loc loc, tl_buffer *base, tl_expr *flat) {
  int n;
  tl_expr **ix;
  if (!base_indices(E, loc, base, flat, &n, &ix)) return NULL;
  tl_expr *ld = chk(E, tl_ir_load(E->m, loc, base, n, ix));
  tl_dtype u = {TL_TYPE_UINT, base->dtype.bits, 1};
  tl_expr *args[2] = {chk(E, tl_ir_string(E->m, loc, tl_dtype_name(u))), ld};
  if (!args[0] || !ld) return NULL;
  return tl_dtype_eq(u, base->dtype) ? ld : chk(E, tl_ir_call(E->m, loc, TL_INTRIN_REINTERPRET, 2, args));
}

tl_expr *tl_el_view_load(elab *E, tl_loc loc, tl_buffer *b, int n, tl_expr **idx) {
  tl_buffer *base = b ? view_base(E, b) : NULL;
  if (!base || tl_dtype_eq(b->dtype, base->dtype)) {
    tl_buffer *lb = tl_el_view_remap(E, loc, b, &n, &idx);
    return lb ? chk(E, tl_ir_load(E->m, loc, lb, n, idx)) : NULL;
  }
  /* a view of another dtype: its element's bits, little-endian, from base's */
  int vb = b->dtype.bits, bb = base->dtype.bits;
  tl_dtype uv = {TL_TYPE_UINT, (uint8_t)vb, 1}, ub = {TL_TYPE_UINT, (uint8_t)bb, 1};
  tl_expr *flat = view_flat(E, loc, b, n, idx), *bits = NULL;
  if (!flat) return NULL;
  if (vb < bb) { /* part f % r of base element f / r */
    tl_expr *r = lit_int(E, loc, bb / vb), *w = lit_int(E, loc, vb);
    tl_expr *word = base_bits(E, loc, base, bin(E, loc, TL_OP_FLOORDIV, flat, r));
    tl_expr *sh = bin(E, loc, TL_OP_MUL, bin(E, loc, TL_OP_FLOORMOD, flat, r), w);
    sh = sh ? chk(E, tl_ir_cast(E->m, loc, ub, sh)) : NULL;
    tl_expr *part = bin(E, loc, TL_OP_SHR, word, sh);
    bits = part ? chk(E, tl_ir_cast(E->m, loc, uv, part)) : NULL;
  } else { /* base elements f*r .. f*r + r-1, the first the lowest bits */
    int r = vb / bb;
    for (int q = 0; q < r; q++) {
      tl_expr *pos = bin(E, loc, TL_OP_ADD, bin(E, loc, TL_OP_MUL, flat, lit_int(E, loc, r)), lit_int(E, loc, q));
      tl_expr *w = base_bits(E, loc, base, pos);
      w = w ? chk(E, tl_ir_cast(E->m, loc, uv, w)) : NULL;
      if (q) w = bin(E, loc, TL_OP_SHL, w, chk(E, tl_ir_int(E->m, loc, uv, (int64_t)q * bb)));
      bits = q ? bin(E, loc, TL_OP_BITOR, bits, w) : w;
      if (!bits) return NULL;
    }
  }
  if (!bits || tl_dtype_eq(uv, b->dtype)) return bits;
  tl_expr *args[2] = {chk(E, tl_ir_string(E->m, loc, tl_dtype_name(b->dtype))), bits};
  return args[0] ? chk(E, tl_ir_call(E->m, loc, TL_INTRIN_REINTERPRET, 2, args)) : NULL;
}

/* T.<op>(db[di], v) of one element (an atomic tile op, attrs its attributes). */
static tl_stmt *element_atomic(elab *E, tl_loc loc, int op, tl_buffer *db, int n, tl_expr **di, tl_expr *v,
                               tl_expr **attrs) {
  tl_stmt *s = tl_ir_stmt(E->m, loc, TL_STMT_TILE);
  tl_operand *a = s ? malloc_ir(E, sizeof(tl_operand) * 2) : NULL;
  tl_expr **ext = a ? malloc_ir(E, sizeof(tl_expr *) * (size_t)(n ? n : 1)) : NULL;
  if (!ext) return s ? NULL : oom(E);
  for (int k = 0; k < n; k++)
    if (!(ext[k] = lit_int(E, loc, 1))) return NULL;
  memset(a, 0, sizeof(tl_operand) * 2);
  a[0].kind = TL_OPND_REGION;
  a[0].loc = loc;
  a[0].region = (tl_region){.buffer = db, .ndim = n, .min = di, .extent = ext};
  a[1].kind = TL_OPND_EXPR;
  a[1].loc = loc;
  a[1].expr = v;
  s->u.tile.op = op;
  s->u.tile.nargs = 2;
  s->u.tile.args = a;
  s->u.tile.attrs = attrs;
  return s;
}

/* The operands of an element atomic on a buffer with a global layout take
 * the element it maps to in place; *vo: the last view operand left. */
static bool layout_elements(elab *E, int op, operand_vec *ops, const tl_operand **vo) {
  bool atomic = op == TL_TILE_ATOMIC_ADD || op == TL_TILE_ATOMIC_MAX || op == TL_TILE_ATOMIC_MIN;
  for (size_t i = 0; i < ops->len; i++) {
    tl_operand *o = &ops->data[i];
    if (o->kind != TL_OPND_REGION || !view_base(E, o->region.buffer)) continue;
    el_view *ev = view_entry(E, o->region.buffer);
    bool unit = atomic && ev->lay_fn;
    for (int k = 0; unit && k < o->region.ndim; k++) {
      int64_t e;
      unit = tl_expr_is_const_int(o->region.extent[k], &e) && e == 1;
    }
    if (!unit) {
      *vo = o;
      continue;
    }
    /* one element of a buffer with a global layout: the element it maps to */
    int n = o->region.ndim;
    tl_expr **ix = malloc_ir(E, sizeof(tl_expr *) * (size_t)(n ? n : 1));
    if (!ix) return false;
    for (int k = 0; k < n; k++) ix[k] = o->region.min[k];
    if (!tl_el_view_remap(E, o->loc, o->region.buffer, &n, &ix)) return false;
    o->region.min = ix;
  }
  return true;
}

bool tl_el_view_tile(elab *E, int op, operand_vec *ops, tl_expr **attrs, tl_loc loc, stmt_vec *out, bool *handled) {
  *handled = false;
  const tl_operand *vo = NULL;
  if (!layout_elements(E, op, ops, &vo)) return false;
  if (!vo) return true;
  *handled = true;
  /* T.atomic_add / _max / _min(dst, src) of regions: as T.copy(src, dst), each element an atomic */
  bool atomic = (op == TL_TILE_ATOMIC_ADD || op == TL_TILE_ATOMIC_MAX || op == TL_TILE_ATOMIC_MIN) && ops->len == 2 &&
                ops->data[1].kind == TL_OPND_REGION;
  if ((op != TL_TILE_COPY && !atomic) || ops->len != 2) {
    if (view_entry(E, vo->region.buffer)->lay_fn)
      err(E, vo->loc,
          "T.%s of a region of '%s', which has a T.Layout, is not supported yet (T.copy, element "
          "accesses and element atomics are)",
          tl_tile_ops[op].name, vo->region.buffer->name);
    else
      err(E, vo->loc,
          "T.%s on the view '%s' (T.view / T.reshape) is not supported yet (T.copy and element "
          "accesses are)",
          tl_tile_ops[op].name, vo->region.buffer->name);
    return false;
  }
  /* the extents of both sides, unit dims dropped, must agree */
  const tl_operand *od[2] = {&ops->data[atomic ? 1 : 0], &ops->data[atomic ? 0 : 1]}; /* source, destination */
  const tl_region *r[2] = {&od[0]->region, &od[1]->region};
  int64_t ext[2][LMAXD];
  int nd[2] = {0, 0};
  for (int s = 0; s < 2; s++)
    for (int k = 0; k < r[s]->ndim; k++) {
      int64_t e;
      if (!tl_expr_is_const_int(r[s]->extent[k], &e) || nd[s] >= LMAXD) {
        err(E, od[s]->loc, "T.copy with a view needs constant extents (at most %d dims)", LMAXD);
        return false;
      }
      if (e != 1) ext[s][nd[s]++] = e;
    }
  bool same = nd[0] == nd[1];
  for (int k = 0; same && k < nd[0]; k++) same = ext[0][k] == ext[1][k];
  if (!same) {
    err(E, loc, "T.copy with a view: the source and destination extents differ");
    return false;
  }
  /* A view of a fragment drives the loop by the fragment's own index space
   * (its layout comes from the T.copy that distributes it): the fragment is
   * indexed by the loop variables, the domain by their row-major position. */
  int fs = -1;
  for (int s = 0; s < 2 && fs < 0; s++) {
    tl_buffer *fb = view_base(E, r[s]->buffer);
    if (fb && fb->scope == TL_SCOPE_FRAGMENT) fs = s;
    if (fb && fb->scope == TL_SCOPE_FRAGMENT && !tl_dtype_eq(fb->dtype, r[s]->buffer->dtype)) {
      err(E, od[s]->loc, "T.copy of the fragment view '%s' that changes the dtype is not supported yet",
          r[s]->buffer->name);
      return false;
    }
  }
  int np = nd[0] ? nd[0] : 1;
  int64_t one = 1, fext[LMAXD];
  tl_buffer *fb = fs >= 0 ? view_base(E, r[fs]->buffer) : NULL;
  if (fb) {
    bool whole_view = fb->ndim <= LMAXD;
    for (int k = 0; whole_view && k < r[fs]->ndim; k++) {
      int64_t mn;
      whole_view = tl_expr_is_const_int(r[fs]->min[k], &mn) && mn == 0 &&
                   tl_expr_equal(r[fs]->extent[k], r[fs]->buffer->shape[k]);
    }
    for (int k = 0; whole_view && k < fb->ndim; k++) whole_view = tl_expr_is_const_int(fb->shape[k], &fext[k]);
    if (!whole_view) {
      err(E, od[fs]->loc, "T.copy of a part of the fragment view '%s' is not supported yet", r[fs]->buffer->name);
      return false;
    }
    np = fb->ndim;
  }
  tl_var *v[LMAXD];
  tl_stmt *par = new_loop(E, loc, TL_LOOP_PARALLEL, np, fb ? fext : nd[0] ? ext[0] : &one, "vw_i", v);
  if (!par) return false;
  tl_expr *dv[LMAXD]; /* the domain indices */
  if (fb) {
    tl_expr *flat = lit_int(E, loc, 0);
    for (int k = 0; flat && k < np; k++)
      flat = chk(E, tl_ir_binary(E->m, loc, TL_OP_ADD, chk(E, tl_ir_binary(E->m, loc, TL_OP_MUL, flat, fb->shape[k])),
                                 chk(E, tl_ir_var(E->m, loc, v[k]))));
    for (int k = nd[0] - 1; flat && k >= 0; k--) {
      tl_expr *e = lit_int(E, loc, ext[0][k]);
      dv[k] = k ? chk(E, tl_ir_binary(E->m, loc, TL_OP_FLOORMOD, flat, e)) : flat;
      if (k) flat = chk(E, tl_ir_binary(E->m, loc, TL_OP_FLOORDIV, flat, e));
      if (!dv[k]) return false;
    }
    if (!flat) return false;
  } else {
    for (int k = 0; k < nd[0]; k++)
      if (!(dv[k] = chk(E, tl_ir_var(E->m, loc, v[k])))) return false;
  }
  tl_expr *ix[2][LMAXD];
  for (int s = 0; s < 2; s++) {
    for (int k = 0, d = 0; k < r[s]->ndim; k++) {
      int64_t e;
      (void)tl_expr_is_const_int(r[s]->extent[k], &e);
      ix[s][k] = r[s]->min[k];
      if (e != 1 && !(ix[s][k] = chk(E, tl_ir_binary(E->m, loc, TL_OP_ADD, r[s]->min[k], dv[d++])))) return false;
    }
  }
  /* a global side stays inside its (view's) shape, as T.copy clips partial tiles */
  tl_expr *cond = NULL;
  for (int s = 0; s < 2; s++) {
    tl_buffer *b = r[s]->buffer, *base = view_base(E, b);
    if ((base ? base : b)->scope != TL_SCOPE_GLOBAL) continue;
    for (int k = 0; k < r[s]->ndim; k++) {
      int64_t mn, e, sh;
      if (tl_expr_is_const_int(r[s]->min[k], &mn) && tl_expr_is_const_int(r[s]->extent[k], &e) &&
          tl_expr_is_const_int(b->shape[k], &sh) && mn >= 0 && mn + e <= sh)
        continue; /* provably inside */
      tl_expr *c = bin(E, loc, TL_OP_LT, ix[s][k], b->shape[k]);
      cond = cond ? bin(E, loc, TL_OP_AND, cond, c) : c;
      if (!cond) return false;
    }
  }
  int nn[2] = {r[0]->ndim, r[1]->ndim};
  tl_expr **xi[2] = {ix[0], ix[1]};
  tl_buffer *bb[2] = {NULL, NULL};
  for (int s = 0; s < 2; s++) {
    if (s == fs) { /* the fragment side by the loop variables */
      nn[s] = np;
      bb[s] = fb;
      if (!(xi[s] = malloc_ir(E, sizeof(tl_expr *) * (size_t)np))) return false;
      for (int k = 0; k < np; k++)
        if (!(xi[s][k] = chk(E, tl_ir_var(E->m, loc, v[k])))) return false;
    } else if (s == 0) { /* loaded below through tl_el_view_load */
      bb[s] = r[s]->buffer;
    } else if (!(bb[s] = tl_el_view_remap(E, loc, r[s]->buffer, &nn[s], &xi[s]))) {
      return false;
    }
  }
  tl_buffer *sb = bb[0], *db = bb[1];
  int ns = nn[0], ndd = nn[1];
  tl_expr **si = xi[0], **di = xi[1];
  tl_expr *ld = fs == 0 ? chk(E, tl_ir_load(E->m, loc, sb, ns, si)) : tl_el_view_load(E, loc, sb, ns, si);
  if (ld && !tl_dtype_eq(ld->dtype, db->dtype)) ld = chk(E, tl_ir_cast(E->m, loc, db->dtype, ld));
  tl_stmt *st =
      ld ? (atomic ? element_atomic(E, loc, op, db, ndd, di, ld, attrs) : store(E, loc, db, ndd, di, ld)) : NULL;
  int64_t always;
  if (st && cond && !(tl_expr_is_const_int(cond, &always) && always)) {
    tl_stmt *g = tl_ir_stmt(E->m, loc, TL_STMT_IF);
    if (!g) return oom(E), false;
    g->u.ifs.cond = cond;
    g->u.ifs.then_s = st;
    st = g;
  }
  par->u.loop.body = st;
  return st && push(E, out, par);
}

static tl_expr *bin(elab *E, tl_loc loc, tl_binop op, tl_expr *a, tl_expr *b) {
  return a && b ? chk(E, tl_ir_binary(E->m, loc, op, a, b)) : NULL;
}

static bool im2col(elab *E, const tl_ast_expr *x, const char *fn, tl_loc loc, stmt_vec *out) {
  static const char *const params[] = {"img",      "col", "nhw_step",        "c_step",      "kernel", "stride",
                                       "dilation", "pad", "eviction_policy", "annotations", NULL};
  const tl_ast_expr *a[10] = {0};
  if (!bind_args(E, x, fn, params, 2, a)) return false;
  for (int k = 2; k < 8; k++)
    if (!a[k]) {
      err(E, x->loc, "%s: missing argument '%s'", fn, params[k]);
      return false;
    }
  val *iv = eval(E, a[0]);
  val *cv = iv ? eval(E, a[1]) : NULL;
  if (!cv) return false;
  if (iv->k != V_BUFFER || iv->u.buf->ndim != 4 || iv->u.buf->scope != TL_SCOPE_GLOBAL) {
    err_val(E, a[0]->loc, iv, "%s: img must be a 4-dimensional (N, H, W, C) global tensor, got %s", fn,
            describe(E, iv));
    return false;
  }
  tl_buffer *img = iv->u.buf;
  tl_operand co = {0};
  int n;
  int64_t ext[LMAXD];
  if (!tile_region(E, cv, a[1]->loc, fn, "col", &co, &n, ext)) return false;
  if (n < 2 || !tl_dtype_eq(co.region.buffer->dtype, img->dtype)) {
    err(E, a[1]->loc, "%s: col must be an (M, K) tile of img's dtype %s", fn, tl_dtype_name(img->dtype));
    return false;
  }
  int64_t kk[4]; /* kernel, stride, dilation, pad */
  for (int k = 0; k < 4; k++)
    if (!to_const_int(E, eval(E, a[4 + k]), a[4 + k]->loc, tprintf(E, "the %s of %s", params[4 + k], fn), &kk[k]))
      return false;
  if (kk[0] < 1 || kk[1] < 1 || kk[2] < 1 || kk[3] < 0) {
    err(E, x->loc, "%s: kernel, stride and dilation must be positive and pad non-negative", fn);
    return false;
  }
  tl_expr *steps[2];
  for (int k = 0; k < 2; k++) {
    val *sv = eval(E, a[2 + k]);
    if (!sv || !(steps[k] = to_int_expr(E, sv, a[2 + k]->loc, tprintf(E, "the %s of %s", params[2 + k], fn))))
      return false;
  }
  tl_var *v[2];
  tl_stmt *par = new_loop(E, loc, TL_LOOP_PARALLEL, 2, ext + n - 2, "ic_i", v);
  if (!par) return false;
  tl_expr *K = lit_int(E, loc, kk[0]), *S = lit_int(E, loc, kk[1]), *D = lit_int(E, loc, kk[2]),
          *P = lit_int(E, loc, kk[3]);
  tl_expr *Hh = img->shape[1], *W = img->shape[2], *C = img->shape[3];
  tl_expr *one = lit_int(E, loc, 1), *zero = lit_int(E, loc, 0);
  /* OH = (H + 2P - D(K-1) - 1) // S + 1 */
  tl_expr *span = lit_int(E, loc, 2 * kk[3] - kk[2] * (kk[0] - 1) - 1);
  tl_expr *OH = bin(E, loc, TL_OP_ADD, bin(E, loc, TL_OP_FLOORDIV, bin(E, loc, TL_OP_ADD, Hh, span), S), one);
  tl_expr *OW = bin(E, loc, TL_OP_ADD, bin(E, loc, TL_OP_FLOORDIV, bin(E, loc, TL_OP_ADD, W, span), S), one);
  tl_expr *OHW = bin(E, loc, TL_OP_MUL, OH, OW);
  tl_expr *m = bin(E, loc, TL_OP_ADD, bin(E, loc, TL_OP_MUL, steps[0], lit_int(E, loc, ext[n - 2])),
                   chk(E, tl_ir_var(E->m, loc, v[0])));
  tl_expr *k = bin(E, loc, TL_OP_ADD, bin(E, loc, TL_OP_MUL, steps[1], lit_int(E, loc, ext[n - 1])),
                   chk(E, tl_ir_var(E->m, loc, v[1])));
  tl_expr *ih = bin(E, loc, TL_OP_SUB,
                    bin(E, loc, TL_OP_ADD,
                        bin(E, loc, TL_OP_MUL, bin(E, loc, TL_OP_FLOORDIV, bin(E, loc, TL_OP_FLOORMOD, m, OHW), OW), S),
                        bin(E, loc, TL_OP_MUL, bin(E, loc, TL_OP_FLOORDIV, k, bin(E, loc, TL_OP_MUL, K, C)), D)),
                    P);
  tl_expr *iw = bin(E, loc, TL_OP_SUB,
                    bin(E, loc, TL_OP_ADD, bin(E, loc, TL_OP_MUL, bin(E, loc, TL_OP_FLOORMOD, m, OW), S),
                        bin(E, loc, TL_OP_MUL, bin(E, loc, TL_OP_FLOORMOD, bin(E, loc, TL_OP_FLOORDIV, k, C), K), D)),
                    P);
  tl_expr *rows = bin(E, loc, TL_OP_MUL, img->shape[0], OHW),
          *cols = bin(E, loc, TL_OP_MUL, bin(E, loc, TL_OP_MUL, K, K), C);
  tl_expr *cond = bin(E, loc, TL_OP_AND, bin(E, loc, TL_OP_LT, m, rows), bin(E, loc, TL_OP_LT, k, cols));
  cond = bin(E, loc, TL_OP_AND, cond,
             bin(E, loc, TL_OP_AND, bin(E, loc, TL_OP_GE, ih, zero), bin(E, loc, TL_OP_LT, ih, Hh)));
  cond = bin(E, loc, TL_OP_AND, cond,
             bin(E, loc, TL_OP_AND, bin(E, loc, TL_OP_GE, iw, zero), bin(E, loc, TL_OP_LT, iw, W)));
  tl_expr *src[4] = {bin(E, loc, TL_OP_FLOORDIV, m, OHW), ih, iw, bin(E, loc, TL_OP_FLOORMOD, k, C)};
  tl_expr *di[LMAXD], *dj[2] = {chk(E, tl_ir_var(E->m, loc, v[0])), chk(E, tl_ir_var(E->m, loc, v[1]))};
  if (!cond || !src[0] || !src[3] || !dj[0] || !dj[1]) return false;
  tl_expr *sel[LMAXD] = {0};
  sel[n - 2] = dj[0];
  sel[n - 1] = dj[1];
  if (!region_index(E, loc, &co.region, sel, di)) return false;
  tl_buffer *cb = co.region.buffer;
  tl_expr *zv = chk(
      E, tl_dtype_is_float(cb->dtype) ? tl_ir_float(E->m, loc, cb->dtype, 0.0) : tl_ir_int(E->m, loc, cb->dtype, 0));
  tl_expr *ld = chk(E, tl_ir_load(E->m, loc, img, 4, src));
  tl_stmt *ifs = zv && ld ? tl_ir_stmt(E->m, loc, TL_STMT_IF) : NULL;
  if (!ifs) return false;
  ifs->u.ifs.cond = cond;
  if (!(ifs->u.ifs.then_s = store(E, loc, cb, n, di, ld)) || !(ifs->u.ifs.else_s = store(E, loc, cb, n, di, zv)))
    return false;
  par->u.loop.body = ifs;
  return push(E, out, par);
}

bool tl_el_lang_stmt(elab *E, const char *name, const tl_ast_expr *x, tl_loc loc, stmt_vec *out, bool *handled) {
  *handled = true;
  if (!strcmp(name, "cumsum")) return cumsum(E, x, "T.cumsum", TL_OP_ADD, loc, out);
  if (!strcmp(name, "cummax")) return cumsum(E, x, "T.cummax", TL_OP_MAX, loc, out);
  if (!strcmp(name, "transpose")) return transpose(E, x, loc, out);
  if (!strcmp(name, "print")) return tl_el_print(E, x, loc, out);
  if (!strcmp(name, "device_assert")) return tl_el_device_assert(E, x, loc, out);
  if (!strcmp(name, "import_source")) return tl_el_import_source(E, x);
  if (!strcmp(name, "call_extern")) return tl_el_call_extern(E, x, loc, out);
  if (!strcmp(name, "im2col") || !strcmp(name, "c2d_im2col")) return im2col(E, x, tprintf(E, "T.%s", name), loc, out);
  *handled = false;
  return true;
}

/* `name = T.make_tensor(ptr, shape, dtype="float32", strides=None)` in a
 * kernel (TileLang's language/proxy.py): a global buffer over the device
 * address ptr, an int64 value (an element of a pointer table, a T.Tensor of
 * T.ptr: the host fills it with data_ptr()s).  The address is evaluated
 * once, where the statement stands (TileLang binds it there); a
 * TL_STMT_ALLOC of a buffer whose data is that expression (lib/IR/tir.h). */
bool tl_el_make_tensor(elab *E, const tl_ast_expr *target, const tl_ast_expr *x, tl_loc loc, stmt_vec *out) {
  const char *fn = "T.make_tensor";
  static const char *const params[] = {"ptr", "shape", "dtype", "strides", NULL};
  const tl_ast_expr *a[4];
  if (target->kind != TL_AST_NAME) {
    err(E, target->loc, "the result of %s must be assigned to a plain name", fn);
    return false;
  }
  if (!bind_args(E, x, fn, params, 2, a)) return false;
  if (!E->in_kernel) {
    err(E, x->loc, "%s is only allowed inside a T.Kernel scope", fn);
    return false;
  }
  val *pv = eval(E, a[0]);
  if (!pv) return false;
  tl_expr *addr = to_expr(E, pv, a[0]->loc);
  if (!addr) return false;
  if (!tl_dtype_is_int(addr->dtype) || addr->dtype.bits != 64 || addr->dtype.lanes > 1) {
    err_val(E, a[0]->loc, pv, "%s: the address must be a scalar int64 (an element of a T.Tensor of T.ptr), got %s", fn,
            tl_dtype_name(addr->dtype));
    return false;
  }
  int ndim = 0, nst = 0;
  tl_expr **dims = NULL, **strides = NULL;
  tl_dtype dt = TL_FLOAT32;
  if (!eval_shape(E, a[1], &ndim, &dims)) return false;
  if (a[2]) {
    val *dv = eval(E, a[2]);
    if (!dv || !to_dtype(E, dv, a[2]->loc, &dt)) return false;
  }
  if (a[3]) {
    val *sv = eval(E, a[3]);
    if (!sv) return false;
    if (sv->k != V_NONE && (!eval_shape(E, a[3], &nst, &strides))) return false;
    if (strides && nst != ndim) {
      err(E, a[3]->loc, "%s: %d strides for a shape of %d dimensions", fn, nst, ndim);
      return false;
    }
  }
  const char *name = target->u.name;
  if (!check_new_name(E, name, target->loc)) return false;
  tl_buffer *b = tl_ir_new_buffer(E->m, target->loc, name, dt, TL_SCOPE_GLOBAL, ndim, dims);
  tl_stmt *s = b ? tl_ir_stmt(E->m, loc, TL_STMT_ALLOC) : NULL;
  val *bv = s ? mk(E, V_BUFFER) : NULL;
  if (!bv) return b && s ? false : (oom(E), false);
  b->data = addr;
  b->strides = strides;
  s->u.alloc.buffer = b;
  bv->u.buf = b;
  return (tl_vec_push(out, s) || (oom(E), false)) && bind(E, E->sc, name, bv, target->loc, BK_ALLOC);
}
