/* Elaborator: TileLang's hand-written cp.async (tilelang/language/tir/op.py
 * ptx_cp_async, which makes tl.ptx_cp_async; builtin.py access_ptr), as
 * mla_decode_ws's producer writes it:
 *
 *   T.ptx_cp_async(T.access_ptr(dst[i, ...], "w", ...),
 *                  T.access_ptr(src[j, ...], "r", ...), num_elems[, predicate])
 *
 * copies num_elems elements — num_elems * element bytes, which TileLang's
 * codegen requires to be 4, 8 or 16 bytes with the same width on both
 * sides — from the global tensor src to the shared buffer dst, by each
 * thread that runs it, asynchronously (T.ptx_commit_group / T.ptx_wait_group
 * or T.cp_async_barrier_noinc make it visible).  A false predicate fills
 * the destination with zeros (cp.async's src-size 0).
 *
 * It becomes the SIMT intrinsic directly (docs/simt-ir.md "Warp-level and
 * asynchronous intrinsics"): T.ptx_cp_async(dst, dst_off, src, src_off,
 * bytes, pred), the offsets flat row-major element offsets of the
 * access_ptr's element (its region's corner for a region, 0 for a buffer)
 * plus its offset=.  lower-tile-ops maps dst_off through dst's shared
 * layout (lower_tile.c); the reference evaluator copies at once. */
#include "Frontend/elab_impl.h"

#include <string.h>

#define CP_MAX_DIMS 8 /* indices of an access_ptr base */

/* T.access_ptr(base, access_type="r", *extents, offset=0, extent=None,
 * ignore_last_ndim=0) of a cp.async operand: the buffer and the flat offset
 * of base (+ offset).  want: the scope class ("shared" or "global"). */
static tl_buffer *cp_ptr(elab *E, const tl_ast_expr *a, const char *role, bool shared, tl_expr **off) {
  const char *fn = "T.ptx_cp_async", *pfn = "T.access_ptr";
  const char *callee = a && a->kind == TL_AST_CALL ? t_callee(E, a) : NULL;
  if (!callee || strcmp(callee, "access_ptr")) {
    err(E, a->loc, "%s: the %s operand must be T.access_ptr(%s[...], \"%s\", ...)", fn, role,
        shared ? "<shared buffer>" : "<global tensor>", shared ? "w" : "r");
    return NULL;
  }
  static const char *const kws[] = {"access_type", "offset", "extent", "ignore_last_ndim", NULL};
  if (!check_kws(E, a, pfn, kws)) return NULL;
  bool bad = false;
  const tl_ast_expr *b = get_arg(E, a, 0, NULL, pfn, &bad), *m = get_arg(E, a, 1, "access_type", pfn, &bad);
  const tl_ast_expr *o = find_kw(a, "offset") ? find_kw(a, "offset")->value : NULL;
  const tl_ast_keyword *ig = find_kw(a, "ignore_last_ndim");
  val *bv = b && !bad ? eval(E, b) : NULL;
  if (!bv) return NULL;
  if (m) { /* "r", "w", "rw" or 1, 2, 3, as TileLang's _rw_mask */
    val *mv = eval(E, m);
    if (!mv) return NULL;
    bool ok = (mv->k == V_STR && (!strcmp(mv->u.s, "r") || !strcmp(mv->u.s, "w") || !strcmp(mv->u.s, "rw"))) ||
              (mv->k == V_INT && mv->u.i >= 1 && mv->u.i <= 3);
    if (!ok) {
      err_val(E, m->loc, mv, "%s: access_type must be \"r\", \"w\" or \"rw\", got %s", pfn, describe(E, mv));
      return NULL;
    }
  }
  if (ig) {
    int64_t k;
    val *iv = eval(E, ig->value);
    if (!iv || !to_const_int(E, iv, ig->value->loc, "ignore_last_ndim", &k)) return NULL;
    if (k) {
      err(E, ig->value->loc, "%s: ignore_last_ndim=%lld is not supported in a T.ptx_cp_async operand", pfn,
          (long long)k);
      return NULL;
    }
  }
  tl_buffer *buf = NULL;
  tl_expr *ix[CP_MAX_DIMS];
  int n = 0;
  if (bv->k == V_BUFFER) {
    buf = bv->u.buf;
  } else if (bv->k == V_BUFREF && bv->u.ref.n <= CP_MAX_DIMS) {
    buf = bv->u.ref.buf;
    n = bv->u.ref.n;
    for (int i = 0; i < n; i++) ix[i] = bv->u.ref.items[i].min;
  }
  bool scope_ok = buf && (shared ? buf->scope == TL_SCOPE_SHARED || buf->scope == TL_SCOPE_SHARED_DYN
                                 : buf->scope == TL_SCOPE_GLOBAL);
  if (!scope_ok) {
    err_val(E, b->loc, bv, "%s: the %s operand must point into %s, got %s", fn, role,
            shared ? "a shared buffer" : "a global tensor", describe(E, bv));
    return NULL;
  }
  *off = tl_el_flat_offset(E, b->loc, buf, n, ix);
  if (*off && o) {
    tl_expr *oe = eval_int(E, o, "T.access_ptr's offset");
    *off = oe ? chk(E, tl_ir_binary(E->m, o->loc, TL_OP_ADD, *off, oe)) : NULL;
  }
  return *off ? buf : NULL;
}

bool tl_el_ptx_cp_async(elab *E, const tl_ast_expr *x, tl_loc loc, stmt_vec *out) {
  const char *fn = "T.ptx_cp_async";
  static const char *const params[] = {"dst_access_ptr", "src_access_ptr", "num_elems", "predicate", NULL};
  const tl_ast_expr *a[4] = {NULL, NULL, NULL, NULL};
  if (!bind_args(E, x, fn, params, 2, a)) return false;
  if (!a[2]) {
    err(E, x->loc, "%s: num_elems (the third argument) is missing", fn);
    return false;
  }
  if (!E->in_kernel) {
    err(E, x->loc, "%s outside a T.Kernel", fn);
    return false;
  }
  tl_expr *args[6] = {NULL};
  tl_buffer *dst = cp_ptr(E, a[0], "destination", true, &args[1]);
  tl_buffer *src = dst ? cp_ptr(E, a[1], "source", false, &args[3]) : NULL;
  int64_t n;
  val *nv = src ? eval(E, a[2]) : NULL;
  if (!nv || !to_const_int(E, nv, a[2]->loc, "num_elems", &n)) return false;
  int64_t db = n * dst->dtype.bits * dst->dtype.lanes, sb = n * src->dtype.bits * src->dtype.lanes;
  if (n <= 0 || db != sb || db % 8 || (db / 8 != 4 && db / 8 != 8 && db / 8 != 16)) {
    err(E, a[2]->loc,
        "%s: num_elems = %lld copies %lld bits into '%s' (%s) and %lld bits from '%s' (%s); cp.async needs the same "
        "4, 8 or 16 bytes on both sides",
        fn, (long long)n, (long long)db, dst->name, tl_dtype_name(dst->dtype), (long long)sb, src->name,
        tl_dtype_name(src->dtype));
    return false;
  }
  args[0] = chk(E, tl_ir_buffer_ref(E->m, a[0]->loc, dst));
  args[2] = chk(E, tl_ir_buffer_ref(E->m, a[1]->loc, src));
  args[4] = chk(E, tl_ir_int(E->m, a[2]->loc, TL_INT32, db / 8));
  if (a[3]) {
    val *pv = eval(E, a[3]);
    tl_expr *pe = pv ? to_expr(E, pv, a[3]->loc) : NULL;
    if (pe && pe->dtype.lanes != 1) {
      err(E, a[3]->loc, "%s: the predicate must be a scalar, got %s", fn, tl_dtype_name(pe->dtype));
      return false;
    }
    args[5] = pe ? chk(E, tl_ir_cast(E->m, a[3]->loc, TL_BOOL, pe)) : NULL;
  } else {
    args[5] = chk(E, tl_ir_int(E->m, loc, TL_BOOL, 1));
  }
  for (int i = 0; i < 6; i++)
    if (!args[i]) return false;
  tl_expr *c = chk(E, tl_ir_call(E->m, loc, TL_INTRIN_PTX_CP_ASYNC, 6, args));
  tl_stmt *s = c ? tl_ir_stmt(E->m, loc, TL_STMT_EVAL) : NULL;
  if (!s) return c ? (oom(E), false) : false;
  s->u.eval.value = c;
  return tl_vec_push(out, s) || (oom(E), false);
}
