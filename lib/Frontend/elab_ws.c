/* Elaborator: TileLang's explicit warp specialisation (tilelang/language
 * allocate.py alloc_barrier, builtin.py barrier_* / mbarrier_*, copy_op.py
 * tma_copy, cuda/language/warpgroup.py ws), written as the tile-level
 * intrinsics of lib/IR/intrinsics.def (docs/hopper.md "Explicit warp
 * specialisation"):
 *
 *  - bars = T.alloc_barrier(c | [c_0, ...]): a shared uint64 buffer of one
 *    mbarrier per count, then T.barrier_init(bars, c_0, ...);
 *  - with T.ws(g, ...): body  ->  if T.ws(g, ...): body (warpgroups g...);
 *  - T.barrier_arrive(b) / T.mbarrier_arrive(b): T.barrier_arrive(bars, i)
 *    where b is bars[i] (or bars: i = 0);
 *  - T.barrier_wait(b, parity) / T.mbarrier_wait_parity(b, parity):
 *    T.barrier_wait(bars, i, parity);
 *  - T.tma_copy(src, dst, barrier=b): T.copy(src, dst).  The copy is
 *    performed by the threads of the scope that runs it; TileLang's
 *    contract (the scope's threads arrive on b after the copy, the readers
 *    wait on b) orders it as the transaction count would.
 * The printed forms (T.barrier_arrive(bars, i), T.barrier_wait(bars, i, p),
 * T.barrier_init, `if T.ws(g):`) parse back through the generic intrinsic
 * call. */
#include "Frontend/elab_impl.h"

/* b, a barrier: bars[i] of a T.alloc_barrier buffer, or the buffer (i = 0). */
static bool barrier_ref(elab *E, const tl_ast_expr *a, const char *fn, tl_expr **buf, tl_expr **idx) {
  val *v = eval(E, a);
  if (!v) return false;
  tl_buffer *b = NULL;
  tl_expr *i = NULL;
  if (v->k == V_BUFFER) {
    b = v->u.buf;
    i = lit_int(E, a->loc, 0);
  } else if (is_ir(v)) {
    tl_expr *e = to_expr(E, v, a->loc);
    if (!e) return false;
    if (e->kind == TL_EXPR_LOAD && e->u.load.n == 1) {
      b = e->u.load.buffer;
      i = e->u.load.indices[0];
    }
  }
  bool shared = b && (b->scope == TL_SCOPE_SHARED_DYN || b->scope == TL_SCOPE_SHARED);
  if (!shared || b->ndim != 1 || !tl_dtype_eq(b->dtype, TL_DT(TL_TYPE_UINT, 64))) {
    err_val(E, a->loc, v, "%s expects a barrier of T.alloc_barrier (bars or bars[i]), got %s", fn, describe(E, v));
    return false;
  }
  return (*buf = chk(E, tl_ir_buffer_ref(E->m, a->loc, b))) && (*idx = i);
}

static bool emit_call(elab *E, tl_loc loc, int op, int n, tl_expr **args, stmt_vec *out) {
  tl_expr *c = chk(E, tl_ir_call(E->m, loc, op, n, args));
  tl_stmt *s = c ? tl_ir_stmt(E->m, loc, TL_STMT_EVAL) : NULL;
  if (!s) return c ? (oom(E), false) : false;
  s->u.eval.value = c;
  return tl_vec_push(out, s) || (oom(E), false);
}

bool tl_el_alloc_barrier(elab *E, const tl_ast_expr *target, const tl_ast_expr *x, tl_loc loc, stmt_vec *out) {
  const char *fn = "T.alloc_barrier";
  static const char *const params[] = {"arrive_count", NULL};
  const tl_ast_expr *a[1];
  if (target->kind != TL_AST_NAME) {
    err(E, target->loc, "the result of %s must be assigned to a plain name", fn);
    return false;
  }
  if (!bind_args(E, x, fn, params, 1, a)) return false;
  val *cv = eval(E, a[0]);
  if (!cv) return false;
  int n = cv->k == V_TUPLE ? cv->u.tup.n : 1;
  if (n < 1 || n > 32) {
    err_val(E, a[0]->loc, cv, "%s: 1 to 32 barriers per allocation, got %d", fn, n);
    return false;
  }
  tl_expr **args = malloc_ir(E, sizeof(tl_expr *) * (size_t)(n + 1)), **dims = malloc_ir(E, sizeof(tl_expr *));
  if (!args || !dims || !(dims[0] = lit_int(E, loc, n))) return false;
  for (int i = 0; i < n; i++) {
    val *c = cv->k == V_TUPLE ? cv->u.tup.items[i] : cv;
    int64_t k;
    if (!to_const_int(E, c, a[0]->loc, "an arrive count", &k)) return false;
    if (k < 1 || k >= (1 << 20)) {
      err(E, a[0]->loc, "%s: an arrive count must be 1 to 2^20-1, got %lld", fn, (long long)k);
      return false;
    }
    if (!(args[i + 1] = lit_int(E, a[0]->loc, k))) return false;
  }
  const char *name = target->u.name;
  if (!check_new_name(E, name, target->loc)) return false;
  tl_buffer *b = tl_ir_new_buffer(E->m, target->loc, name, TL_DT(TL_TYPE_UINT, 64), TL_SCOPE_SHARED_DYN, 1, dims);
  tl_stmt *s = b ? tl_ir_stmt(E->m, loc, TL_STMT_ALLOC) : NULL;
  val *bv = s ? mk(E, V_BUFFER) : NULL;
  if (!bv) return b && s ? false : (oom(E), false);
  s->u.alloc.buffer = b;
  bv->u.buf = b;
  if (!(args[0] = chk(E, tl_ir_buffer_ref(E->m, loc, b)))) return false;
  return (tl_vec_push(out, s) || (oom(E), false)) && emit_call(E, loc, TL_INTRIN_BARRIER_INIT, n + 1, args, out) &&
         bind(E, E->sc, name, bv, target->loc, BK_ALLOC);
}

bool tl_el_ws_scope(elab *E, const tl_ast_stmt *s, stmt_vec *out) {
  const tl_ast_expr *x = s->u.with.ctx;
  const char *fn = "T.ws";
  if (!check_kws(E, x, fn, NULL) || !check_arity(E, x, fn, 1, 4)) return false;
  if (!E->in_kernel) {
    err(E, x->loc, "%s is only allowed inside a T.Kernel scope", fn);
    return false;
  }
  if (s->u.with.target) {
    err(E, s->u.with.target->loc, "%s binds no name ('as' is not allowed)", fn);
    return false;
  }
  int n = x->u.call.nargs;
  tl_expr **g = malloc_ir(E, sizeof(tl_expr *) * (size_t)n);
  if (!g) return false;
  for (int i = 0; i < n; i++) {
    int64_t k;
    val *v = eval(E, x->u.call.args[i]);
    if (!v || !to_const_int(E, v, x->u.call.args[i]->loc, "a warpgroup index", &k)) return false;
    if (k < 0 || k > 7) {
      err(E, x->u.call.args[i]->loc, "%s: a warpgroup index must be 0 to 7, got %lld", fn, (long long)k);
      return false;
    }
    if (!(g[i] = lit_int(E, x->u.call.args[i]->loc, k))) return false;
  }
  stmt_vec body = {0};
  bool ok = elab_block(E, &s->u.with.body, &body);
  tl_stmt *b = ok ? make_seq(E, s->loc, &body) : NULL;
  tl_vec_free(&body);
  tl_expr *c = b ? chk(E, tl_ir_call(E->m, x->loc, TL_INTRIN_WS, n, g)) : NULL;
  tl_stmt *st = c ? tl_ir_stmt(E->m, s->loc, TL_STMT_IF) : NULL;
  if (!st) return c ? (oom(E), false) : false;
  st->u.ifs.cond = c;
  st->u.ifs.then_s = b;
  return tl_vec_push(out, st) || (oom(E), false);
}

/* T.tma_copy(src, dst, barrier=b): T.copy(src, dst) (see the head comment). */
static bool tma_copy(elab *E, const tl_ast_expr *x, tl_loc loc, stmt_vec *out) {
  static const char *const kws[] = {"barrier", "eviction_policy", NULL};
  if (!check_kws(E, x, "T.tma_copy", kws) || !check_arity(E, x, "T.tma_copy", 2, 2)) return false;
  const tl_ast_keyword *k = find_kw(x, "barrier");
  tl_expr *b, *i;
  if (k && !barrier_ref(E, k->value, "T.tma_copy", &b, &i)) return false;
  tl_ast_expr c = *x;
  c.u.call.nkw = 0;
  c.u.call.kw = NULL;
  return elab_tile(E, TL_TILE_COPY, &c, loc, out);
}

bool tl_el_ws_stmt(elab *E, const char *name, const tl_ast_expr *x, tl_loc loc, stmt_vec *out, bool *handled) {
  *handled = true;
  if (!strcmp(name, "tma_copy")) return tma_copy(E, x, loc, out);
  bool arrive = !strcmp(name, "barrier_arrive") || !strcmp(name, "mbarrier_arrive");
  bool wait = !strcmp(name, "barrier_wait") || !strcmp(name, "mbarrier_wait_parity");
  /* the printed forms T.barrier_arrive(bars, i) / T.barrier_wait(bars, i, p): the generic call */
  if ((!arrive && !wait) || (x->u.call.nkw == 0 && x->u.call.nargs == (arrive ? 2 : 3) && name[0] == 'b')) {
    *handled = false;
    return true;
  }
  const char *fn = tprintf(E, "T.%s", name);
  static const char *const pa[] = {"mbarrier", NULL}, *const pw[] = {"mbarrier", "parity", NULL};
  const tl_ast_expr *a[2] = {NULL, NULL};
  if (!bind_args(E, x, fn, arrive ? pa : pw, arrive ? 1 : 2, a)) return false;
  tl_expr *args[3];
  if (!barrier_ref(E, a[0], fn, &args[0], &args[1])) return false;
  if (wait && !(args[2] = eval_int(E, a[1], "the parity"))) return false;
  return emit_call(E, x->loc, arrive ? TL_INTRIN_BARRIER_ARRIVE : TL_INTRIN_BARRIER_WAIT, arrive ? 2 : 3, args, out);
}
