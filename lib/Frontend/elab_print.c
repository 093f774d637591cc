/* Elaborator: TileLang's T.print (tilelang/language/print.py),
 * written as T.debug_print statements (lib/IR/intrinsics.def), which the
 * code generator lowers to CUDA's vprintf and the SIMT executor prints the
 * same way (docs/language.md "T.print"):
 *
 *  - T.print(expr, msg="") of a scalar (an expression, a variable, a buffer
 *    element, a T.alloc_var): every thread that runs it prints one line;
 *    msg defaults to "expr<TEXT>" with the expression's canonical text (the
 *    variable's name for a T.alloc_var);
 *  - T.print(buffer, msg="", warp_group_id=0, warp_id=0) of a whole buffer:
 *        for i in T.serial(<elements>):
 *            T.debug_print(where, msg, "<name>", i, buffer[<row-major i>], thread)
 *    a local buffer (T.alloc_local / T.alloc_var) and a global tensor are
 *    printed by every thread (thread -1, as TileLang's condition True), a
 *    shared buffer by thread warp_group_id * 128 + warp_id * 32 only; a
 *    fragment is first copied to a shared buffer <name>_print_<line> of its
 *    shape (T.copy; the barriers pass adds the sync) and printed from there
 *    under the fragment's name, as TileLang does.  msg defaults to
 *    "buffer<NAME, DTYPE>" (to "" for a global tensor, as in TileLang).
 * `where` is the call's file:line.  What else T.print is given (a buffer
 * region, a host value, a float8 or vector dtype) is a located error. */
#include "Frontend/elab_impl.h"

static tl_expr *str_expr(elab *E, tl_loc loc, const char *s) { return chk(E, tl_ir_string(E->m, loc, intern(E, s))); }

/* The T.debug_print statement of one value. */
static tl_stmt *print_stmt(elab *E, tl_loc loc, const char *msg, const char *buffer, tl_expr *index, tl_expr *value,
                           int64_t thread) {
  tl_expr *args[6] = {str_expr(E, loc, tprintf(E, "%s:%d", loc.file ? loc.file : "<unknown>", loc.line)),
                      str_expr(E, loc, msg),
                      str_expr(E, loc, buffer),
                      index ? index : lit_int(E, loc, -1),
                      value,
                      lit_int(E, loc, thread)};
  for (int i = 0; i < 6; i++)
    if (!args[i]) return NULL;
  tl_expr *call = chk(E, tl_ir_call(E->m, loc, TL_INTRIN_DEBUG_PRINT, 6, args));
  tl_stmt *s = call ? tl_ir_stmt(E->m, loc, TL_STMT_EVAL) : NULL;
  if (!s) return call ? oom(E) : NULL;
  s->u.eval.value = call;
  return s;
}

static bool printable(elab *E, tl_loc loc, tl_dtype t) {
  if (tl_debug_print_kind_of(t, NULL, NULL)) return true;
  err(E, loc, "T.print of a %s value is not supported yet", tl_dtype_name(t));
  return false;
}

/* A fragment's shared copy <name>_print_<line> (allocation and T.copy into out). */
static tl_buffer *shared_copy(elab *E, tl_loc loc, tl_buffer *frag, stmt_vec *out) {
  const char *name = intern(E, tprintf(E, "%s_print_%d", frag->name, loc.line));
  tl_buffer *w =
      name ? tl_ir_new_buffer(E->m, loc, name, frag->dtype, TL_SCOPE_SHARED_DYN, frag->ndim, frag->shape) : NULL;
  tl_stmt *al = w ? tl_ir_stmt(E->m, loc, TL_STMT_ALLOC) : NULL;
  tl_stmt *cp = al ? tl_ir_stmt(E->m, loc, TL_STMT_TILE) : NULL;
  tl_operand *ops = cp ? malloc_ir(E, sizeof(tl_operand) * 2) : NULL;
  int na = tl_tile_ops[TL_TILE_COPY].nattrs;
  tl_expr **attrs = ops && na ? malloc_ir(E, sizeof(tl_expr *) * (size_t)na) : NULL;
  if (!ops || (na && !attrs)) return oom(E);
  if (na) memset(attrs, 0, sizeof(tl_expr *) * (size_t)na);
  al->u.alloc.buffer = w;
  val *fv = mk(E, V_BUFFER), *wv = mk(E, V_BUFFER);
  if (!fv || !wv) return NULL;
  fv->u.buf = frag;
  wv->u.buf = w;
  if (!region_from(E, fv, &ops[0], loc) || !region_from(E, wv, &ops[1], loc)) return NULL;
  cp->u.tile.op = TL_TILE_COPY;
  cp->u.tile.nargs = 2;
  cp->u.tile.args = ops;
  cp->u.tile.attrs = attrs;
  if (!tl_vec_push(out, al) || !tl_vec_push(out, cp)) return oom(E);
  return w;
}

/* for i in T.serial(<elements of b>): T.debug_print(..., name, i, b[<i row-major>], thread) */
static bool print_buffer(elab *E, tl_loc loc, tl_buffer *b, const char *name, const char *msg, int64_t thread,
                         stmt_vec *out) {
  tl_expr *total = lit_int(E, loc, 1);
  for (int k = 0; k < b->ndim && total; k++) total = chk(E, tl_ir_binary(E->m, loc, TL_OP_MUL, total, b->shape[k]));
  tl_stmt *f = tl_ir_stmt(E->m, loc, TL_STMT_FOR);
  tl_var **vs = malloc_ir(E, sizeof(tl_var *));
  tl_expr **mins = malloc_ir(E, sizeof(tl_expr *)), **exts = malloc_ir(E, sizeof(tl_expr *));
  tl_expr **idx = malloc_ir(E, sizeof(tl_expr *) * (size_t)(b->ndim > 0 ? b->ndim : 1));
  if (!total) return false;
  if (!f || !vs || !mins || !exts || !idx) return oom(E), false;
  tl_var *i = tl_ir_new_var(E->m, loc, intern(E, tprintf(E, "print_i_%d", loc.line)), TL_INT32, TL_VAR_LOOP);
  tl_expr *iv = i ? chk(E, tl_ir_var(E->m, loc, i)) : NULL;
  if (!iv || !(mins[0] = lit_int(E, loc, 0))) return i ? false : (oom(E), false);
  vs[0] = i;
  exts[0] = total;
  tl_ir_loop_init(f, TL_LOOP_SERIAL, 1, vs, mins, exts);
  tl_expr *stride = lit_int(E, loc, 1); /* row-major: idx[k] = i // stride_k % shape_k */
  for (int k = b->ndim - 1; k >= 0 && stride; k--) {
    tl_expr *q = chk(E, tl_ir_binary(E->m, loc, TL_OP_FLOORDIV, iv, stride));
    idx[k] = k == 0 ? q : q ? chk(E, tl_ir_binary(E->m, loc, TL_OP_FLOORMOD, q, b->shape[k])) : NULL;
    if (!idx[k]) return false;
    stride = chk(E, tl_ir_binary(E->m, loc, TL_OP_MUL, stride, b->shape[k]));
  }
  if (!stride) return false;
  tl_expr *ld = chk(E, tl_ir_load(E->m, loc, b, b->ndim, idx));
  if (!ld || !(f->u.loop.body = print_stmt(E, loc, msg, name, iv, ld, thread))) return false;
  if (!tl_vec_push(out, f)) return oom(E), false;
  return true;
}

bool tl_el_print(elab *E, const tl_ast_expr *x, tl_loc loc, stmt_vec *out) {
  static const char *const params[] = {"obj", "msg", "warp_group_id", "warp_id", NULL};
  const tl_ast_expr *a[4] = {0};
  if (!bind_args(E, x, "T.print", params, 1, a)) return false;
  if (!E->in_kernel) {
    err(E, x->loc, "T.print must be inside a T.Kernel (it prints from the device)");
    return false;
  }
  val *ov = eval(E, a[0]);
  if (!ov) return false;
  const char *msg = NULL;
  if (a[1]) {
    val *mv = eval(E, a[1]);
    if (!mv) return false;
    if (mv->k != V_STR) {
      err_val(E, a[1]->loc, mv, "T.print: msg must be a string, got %s", describe(E, mv));
      return false;
    }
    msg = mv->u.s;
  }
  int64_t wg = 0, w = 0;
  if (a[2] && !to_const_int(E, eval(E, a[2]), a[2]->loc, "the warp_group_id of T.print", &wg)) return false;
  if (a[3] && !to_const_int(E, eval(E, a[3]), a[3]->loc, "the warp_id of T.print", &w)) return false;
  if (ov->k == V_BUFFER && ov->u.buf->scope == TL_SCOPE_LOCAL_VAR) { /* T.alloc_var: its value */
    tl_buffer *b = ov->u.buf;
    tl_expr *zero = lit_int(E, loc, 0);
    tl_expr *ld = zero ? chk(E, tl_ir_load(E->m, a[0]->loc, b, 1, &zero)) : NULL;
    if (!ld || !printable(E, a[0]->loc, b->dtype)) return false;
    tl_stmt *s = print_stmt(E, loc, msg ? msg : tprintf(E, "expr<%s>", b->name), "", NULL, ld, -1);
    if (!s) return false;
    if (!tl_vec_push(out, s)) return oom(E), false;
    return true;
  }
  if (ov->k == V_BUFFER) {
    tl_buffer *b = ov->u.buf;
    if (!printable(E, a[0]->loc, b->dtype)) return false;
    const char *dmsg =
        b->scope == TL_SCOPE_GLOBAL ? "" : tprintf(E, "buffer<%s, %s>", b->name, tl_dtype_name(b->dtype));
    if (!msg) msg = dmsg;
    int64_t lane = wg * 128 + w * 32;
    switch (b->scope) {
    case TL_SCOPE_LOCAL:
    case TL_SCOPE_LOCAL_VAR: /* (above) */
    case TL_SCOPE_GLOBAL: return print_buffer(E, loc, b, b->name, msg, -1, out);
    case TL_SCOPE_SHARED:
    case TL_SCOPE_SHARED_DYN: return print_buffer(E, loc, b, b->name, msg, lane, out);
    case TL_SCOPE_FRAGMENT: {
      tl_buffer *s = shared_copy(E, loc, b, out);
      return s && print_buffer(E, loc, s, b->name, msg, lane, out);
    }
    }
    err(E, a[0]->loc, "T.print of a %s buffer is not supported", tl_scope_name(b->scope));
    return false;
  }
  if (ov->k == V_BUFREF && !ov->u.ref.corner) {
    bool region = false;
    for (int k = 0; k < ov->u.ref.n; k++) region = region || ov->u.ref.items[k].is_slice;
    if (region) {
      err(E, a[0]->loc, "T.print of a buffer region is not supported (print the buffer, or an element)");
      return false;
    }
  }
  if (!is_ir(ov) && !is_num(ov) && ov->k != V_BOOL && ov->k != V_BUFREF) {
    err_val(E, a[0]->loc, ov, "T.print prints a buffer or a scalar expression, got %s", describe(E, ov));
    return false;
  }
  tl_expr *e = to_expr(E, ov, a[0]->loc);
  if (!e || !printable(E, a[0]->loc, e->dtype)) return false;
  if (!msg) {
    tl_strbuf sb = {0};
    tl_print_expr(&sb, e);
    msg = sb.oom ? NULL : tprintf(E, "expr<%s>", sb.data ? sb.data : "");
    tl_strbuf_free(&sb);
    if (!msg) return oom(E), false;
  }
  tl_stmt *s = print_stmt(E, loc, msg, "", NULL, e, -1);
  if (!s) return false;
  if (!tl_vec_push(out, s)) return oom(E), false;
  return true;
}

/* TileLang's T.device_assert(condition, msg="", no_stack_info=False)
 * (tilelang/cuda/debug.py): a statement T.device_assert_at(cond, msg, where)
 * (lib/IR/intrinsics.def), where the call's file:line ("" with
 * no_stack_info=True, as TileLang then leaves its "at file:line" out).  A
 * condition that is not a bool is compared with 0, as C's assert does. */
bool tl_el_device_assert(elab *E, const tl_ast_expr *x, tl_loc loc, stmt_vec *out) {
  static const char *const params[] = {"condition", "msg", "no_stack_info", NULL};
  const tl_ast_expr *a[3] = {0};
  if (!bind_args(E, x, "T.device_assert", params, 1, a)) return false;
  if (!E->in_kernel) {
    err(E, x->loc, "T.device_assert must be inside a T.Kernel (it checks on the device)");
    return false;
  }
  val *cv = eval(E, a[0]);
  if (!cv) return false;
  if (!is_ir(cv) && !is_num(cv) && cv->k != V_BOOL && cv->k != V_BUFREF) {
    err_val(E, a[0]->loc, cv, "T.device_assert: the condition must be a scalar expression, got %s", describe(E, cv));
    return false;
  }
  const char *msg = "";
  if (a[1]) {
    val *mv = eval(E, a[1]);
    if (!mv) return false;
    if (mv->k != V_STR) {
      err_val(E, a[1]->loc, mv, "T.device_assert: msg must be a string, got %s", describe(E, mv));
      return false;
    }
    msg = mv->u.s;
  }
  bool no_stack = false;
  if (a[2]) {
    val *nv = eval(E, a[2]);
    if (!nv || !truthy(nv, &no_stack)) {
      if (nv) err(E, a[2]->loc, "T.device_assert: no_stack_info must be a compile-time bool");
      return false;
    }
  }
  tl_expr *c = to_expr(E, cv, a[0]->loc);
  if (!c) return false;
  if (c->dtype.lanes != 1) {
    err(E, a[0]->loc, "T.device_assert: the condition must be a scalar, got %s", tl_dtype_name(c->dtype));
    return false;
  }
  if (c->dtype.code != TL_TYPE_BOOL) {
    tl_expr *zero = lit_int(E, loc, 0);
    if (!zero || !(c = chk(E, tl_ir_binary(E->m, a[0]->loc, TL_OP_NE, c, zero)))) return false;
  }
  const char *where = no_stack ? "" : tprintf(E, "%s:%d", loc.file ? loc.file : "<unknown>", loc.line);
  tl_expr *args[3] = {c, str_expr(E, loc, msg), where ? str_expr(E, loc, where) : NULL};
  if (!args[1] || !args[2]) return false;
  tl_expr *call = chk(E, tl_ir_call(E->m, loc, TL_INTRIN_DEVICE_ASSERT, 3, args));
  tl_stmt *s = call ? tl_ir_stmt(E->m, loc, TL_STMT_EVAL) : NULL;
  if (!s) return call ? oom(E), false : false;
  s->u.eval.value = call;
  if (!tl_vec_push(out, s)) return oom(E), false;
  return true;
}
