/* Elaborator, TileLang's language ops of issue 14 that are not tile ops of
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
 *    each sum rounded to the buffer's dtype, in order along dim.  A fragment
 *    (or a dst other than src) goes as in TileLang through a shared copy: a
 *    shared buffer src_scan_<line> of src's shape, T.copy(src, it), the
 *    scan, T.copy(it, dst) (dst may be global then); a shared src with another
 *    shared dst is copied to dst first and scanned there.
 *  - T.transpose(src, dst) (TileLang's copy_op.py): dst[.., j, i] =
 *    src[.., i, j] for shared (or fragment) regions of shapes (.., M, N) and
 *    (.., N, M) (leading unit dims of either, as D[1, :, :], ignored): one
 *    T.Parallel over src's extents.
 *
 * Both need constant extents (a tile) and report bad operands at their
 * location. */
#include <string.h>

#include "IR/elab_impl.h"

const char *const tl_el_lang_op_names[] = {"align_up", "cumsum", "transpose", NULL};

#define LMAXD 8

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
  f->u.loop.kind = kind;
  f->u.loop.nvars = n;
  f->u.loop.vars = vs;
  f->u.loop.mins = mins;
  f->u.loop.extents = exts;
  f->u.loop.num_stages = -1;
  for (int k = 0; k < n; k++) {
    const char *name = n == 1 ? stem : tprintf(E, "%s%d", stem, k);
    if (!name || !(vs[k] = vars[k] = tl_ir_new_var(E->m, loc, intern(E, name), TL_INT32, TL_VAR_LOOP)))
      return oom(E);
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
static tl_stmt *scan_loops(elab *E, tl_loc loc, const tl_region *r, int n, const int64_t *ext, int dim, bool reverse) {
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
  tl_expr *sum = lp ? chk(E, tl_ir_binary(E->m, loc, TL_OP_ADD, lc, lp)) : NULL;
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

static bool cumsum(elab *E, const tl_ast_expr *x, tl_loc loc, stmt_vec *out) {
  static const char *const params[] = {"src", "dst", "dim", "reverse", NULL};
  const char *fn = "T.cumsum";
  const tl_ast_expr *a[4];
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
  if (a[2] && !to_const_int(E, eval(E, a[2]), a[2]->loc, "the dim of T.cumsum", &dim)) return false;
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
    return push(E, out, scan_loops(E, loc, &so.region, n, ext, (int)dim, rev));
  if (is_shared(sb) && is_shared(db))
    return push(E, out, copy_op(E, loc, &so, &dop)) &&
           push(E, out, scan_loops(E, loc, &dop.region, n, ext, (int)dim, rev));
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
         push(E, out, scan_loops(E, loc, &wo.region, n, ext, (int)dim, rev)) &&
         push(E, out, copy_op(E, loc, &wo, &dop));
}

static bool transpose(elab *E, const tl_ast_expr *x, tl_loc loc, stmt_vec *out) {
  static const char *const params[] = {"src", "dst", NULL};
  const char *fn = "T.transpose";
  const tl_ast_expr *a[2];
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

bool tl_el_lang_stmt(elab *E, const char *name, const tl_ast_expr *x, tl_loc loc, stmt_vec *out, bool *handled) {
  *handled = true;
  if (!strcmp(name, "cumsum")) return cumsum(E, x, loc, out);
  if (!strcmp(name, "transpose")) return transpose(E, x, loc, out);
  *handled = false;
  return true;
}
