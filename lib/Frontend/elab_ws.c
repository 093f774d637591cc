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
 *  - T.cp_async_barrier_noinc(b): T.cp_async_barrier_noinc(bars, i);
 *  - T.tma_copy(src, dst, barrier=b): T.copy(src, dst).  The copy is
 *    performed by the threads of the scope that runs it; TileLang's
 *    contract (the scope's threads arrive on b after the copy, the readers
 *    wait on b) orders it as the transaction count would.
 * The printed forms (T.barrier_arrive(bars, i), T.barrier_wait(bars, i, p),
 * T.barrier_init, `if T.ws(g):`) parse back through the generic intrinsic
 * call. */
#include "Frontend/elab_impl.h"

const char *const tl_el_ws_names[] = {"alloc_barrier",
                                      "tma_copy",
                                      "mbarrier_arrive",
                                      "mbarrier_wait_parity",
                                      "wgmma_gemm",
                                      "wait_wgmma",
                                      "annotate_producer_reg_dealloc",
                                      "annotate_consumer_reg_alloc",
                                      NULL};

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

/* T.wgmma_gemm's warp partition: wgmma splits M over the four warps of the
 * warpgroup (TileLang's m64 tiles), which is GemmWarpPolicy.FullRow; so its
 * accumulator is the layout a following gemm reads A from in registers. */
static bool wgmma_gemm_one(elab *E, const tl_ast_expr *x, tl_loc loc, stmt_vec *out) {
  size_t from = out->len;
  if (!elab_tile(E, TL_TILE_GEMM, x, loc, out)) return false;
  int pi = tl_tile_op_attr_index(TL_TILE_GEMM, "policy"), na = tl_tile_ops[TL_TILE_GEMM].nattrs;
  for (size_t i = from; i < out->len; i++) {
    tl_stmt *s = out->data[i];
    if (s->kind != TL_STMT_TILE || s->u.tile.op != TL_TILE_GEMM || pi < 0) continue;
    if (!s->u.tile.attrs) {
      if (!(s->u.tile.attrs = malloc_ir(E, sizeof(tl_expr *) * (size_t)na))) return false;
      memset(s->u.tile.attrs, 0, sizeof(tl_expr *) * (size_t)na);
    }
    if (!(s->u.tile.attrs[pi] = lit_int(E, loc, TL_POLICY_FULL_ROW))) return false;
  }
  return true;
}

/* x with its keyword clear_accum=... replaced by the constant b. */
static tl_ast_expr *with_clear(elab *E, const tl_ast_expr *x, int k, bool b) {
  tl_ast_expr *c = talloc(E, sizeof *c), *v = talloc(E, sizeof *v);
  tl_ast_keyword *kw = talloc(E, sizeof *kw * (size_t)x->u.call.nkw);
  if (!c || !v || !kw) return NULL;
  *c = *x;
  *v = *x->u.call.kw[k].value;
  v->kind = b ? TL_AST_TRUE : TL_AST_FALSE;
  memcpy(kw, x->u.call.kw, sizeof *kw * (size_t)x->u.call.nkw);
  kw[k].value = v;
  c->u.call.kw = kw;
  return c;
}

/* T.wgmma_gemm(A, B, C, ..., clear_accum=c): a T.gemm; a run-time c (j == 0
 * in a loop, TileLang's PrimExpr) is `if c:` the clearing gemm `else:` the
 * accumulating one. */
static bool wgmma_gemm(elab *E, const tl_ast_expr *x, tl_loc loc, stmt_vec *out) {
  int k = -1;
  for (int i = 0; i < x->u.call.nkw; i++)
    if (!strcmp(x->u.call.kw[i].name, "clear_accum")) k = i;
  val *cv = k >= 0 ? eval(E, x->u.call.kw[k].value) : NULL;
  if (k >= 0 && !cv) return false;
  if (k < 0 || !is_ir(cv)) return wgmma_gemm_one(E, x, loc, out);
  tl_expr *c = to_expr(E, cv, x->u.call.kw[k].value->loc);
  tl_ast_expr *xt = c ? with_clear(E, x, k, true) : NULL, *xf = xt ? with_clear(E, x, k, false) : NULL;
  if (!xf) return c && !xt ? (oom(E), false) : false;
  stmt_vec t = {0}, f = {0};
  bool ok = wgmma_gemm_one(E, xt, loc, &t) && wgmma_gemm_one(E, xf, loc, &f);
  tl_stmt *ts = ok ? make_seq(E, loc, &t) : NULL, *fs = ts ? make_seq(E, loc, &f) : NULL;
  tl_vec_free(&t);
  tl_vec_free(&f);
  tl_stmt *is = fs ? tl_ir_stmt(E->m, loc, TL_STMT_IF) : NULL;
  if (!is) return fs ? (oom(E), false) : false;
  is->u.ifs.cond = c;
  is->u.ifs.then_s = ts;
  is->u.ifs.else_s = fs;
  return tl_vec_push(out, is) || (oom(E), false);
}

bool tl_el_ws_stmt(elab *E, const char *name, const tl_ast_expr *x, tl_loc loc, stmt_vec *out, bool *handled) {
  *handled = true;
  if (!strcmp(name, "tma_copy")) return tma_copy(E, x, loc, out);
  /* T.wgmma_gemm: TileLang's T.gemm without the wait it implies; ours
   * completes before the next statement (a synchronous T.gemm), so
   * T.wait_wgmma(n), which waits until at most n are in flight, has
   * nothing left to wait for */
  if (!strcmp(name, "wgmma_gemm")) return wgmma_gemm(E, x, loc, out);
  if (!strcmp(name, "wait_wgmma")) {
    static const char *const pw[] = {"id", NULL};
    const tl_ast_expr *a[1];
    int64_t n;
    val *v = bind_args(E, x, "T.wait_wgmma", pw, 1, a) ? eval(E, a[0]) : NULL;
    return v && to_const_int(E, v, a[0]->loc, "the number of wgmma groups left in flight", &n);
  }
  /* T.annotate_producer_reg_dealloc(n = 24) / T.annotate_consumer_reg_alloc(n
   * = 240): the register counts TileLang's automatic warp specialisation
   * gives its producer and consumer warpgroups (its pass
   * annotate_warp_group_reg_alloc; its CUDA codegen emits nothing for the
   * calls themselves).  Our Hopper path chooses its own counts, and in role
   * code TileLang ignores them too: checked (24 to 240, as TileLang's
   * check), no statement. */
  bool producer = !strcmp(name, "annotate_producer_reg_dealloc");
  if (producer || !strcmp(name, "annotate_consumer_reg_alloc")) {
    static const char *const pr[] = {"reg_count", NULL};
    const tl_ast_expr *a[1] = {NULL};
    const char *fn = producer ? "T.annotate_producer_reg_dealloc" : "T.annotate_consumer_reg_alloc";
    if (!bind_args(E, x, fn, pr, 0, a)) return false;
    if (!a[0]) return true;
    int64_t n;
    val *v = eval(E, a[0]);
    if (!v || !to_const_int(E, v, a[0]->loc, "a register count", &n)) return false;
    if (n < 24 || n > 240) {
      err(E, a[0]->loc, "%s: a register count must be 24 to 240, got %lld", fn, (long long)n);
      return false;
    }
    return true;
  }
  /* T.cp_async_barrier_noinc(b) (TileLang's builtin.py): this thread's
   * earlier cp.async copies arrive on b when complete; the printed form
   * T.cp_async_barrier_noinc(bars, i) goes through the generic call */
  if (!strcmp(name, "cp_async_barrier_noinc") && !(x->u.call.nkw == 0 && x->u.call.nargs == 2)) {
    static const char *const pn[] = {"barrier", NULL};
    const tl_ast_expr *a[1] = {NULL};
    tl_expr *args[2];
    if (!bind_args(E, x, "T.cp_async_barrier_noinc", pn, 1, a) ||
        !barrier_ref(E, a[0], "T.cp_async_barrier_noinc", &args[0], &args[1]))
      return false;
    return emit_call(E, x->loc, TL_INTRIN_CP_ASYNC_BARRIER_NOINC, 2, args, out);
  }
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

/* ------------------------------------------------ role branches (TileLang's
 * `tx = T.get_thread_binding(); if tx < 128: ... else: ...`).  T.ws(g) is
 * TileLang's `if 128 g <= tx < 128 (g + 1)` (cuda/language/warpgroup.py),
 * and its tile passes partition a tile op under such an `if` over the
 * threads the condition leaves; so a branch that selects one warpgroup and
 * holds tile work is that warpgroup's T.ws scope, and one that selects
 * another range of threads a T.thread_range scope (docs/language.md). */
#define WG_THREADS 128

void tl_el_note_tid_let(elab *E, tl_var *v, const tl_expr *value) {
  if (E->in_kernel && !E->nthread_dims && value->kind == TL_EXPR_CALL &&
      value->u.call.op == TL_INTRIN_GET_THREAD_BINDING && !tl_vec_push(&E->tid_lets, v))
    oom(E);
}

static bool is_tid(elab *E, const tl_expr *e) {
  if (e->kind == TL_EXPR_CALL && e->u.call.op == TL_INTRIN_GET_THREAD_BINDING) return !E->nthread_dims;
  for (size_t i = 0; e->kind == TL_EXPR_VAR && i < E->tid_lets.len; i++)
    if (E->tid_lets.data[i] == e->u.var) return true;
  return false;
}

/* The threads [*lo, *hi) for which e holds: a comparison of the thread
 * index with a constant, or a conjunction of such. */
static bool tid_range(elab *E, const tl_expr *e, int64_t *lo, int64_t *hi, int depth) {
  if (e->kind != TL_EXPR_BINARY || depth > 16) return false;
  tl_binop op = e->u.bin.op;
  if (op == TL_OP_AND) {
    int64_t l2 = *lo, h2 = *hi;
    if (!tid_range(E, e->u.bin.a, lo, hi, depth + 1) || !tid_range(E, e->u.bin.b, &l2, &h2, depth + 1)) return false;
    *lo = *lo > l2 ? *lo : l2;
    *hi = *hi < h2 ? *hi : h2;
    return true;
  }
  const tl_expr *a = e->u.bin.a, *b = e->u.bin.b;
  int64_t c;
  if (!is_tid(E, a)) { /* c OP tid: tid (OP mirrored) c */
    const tl_expr *t = a;
    a = b, b = t;
    op = op == TL_OP_LT   ? TL_OP_GT
         : op == TL_OP_GT ? TL_OP_LT
         : op == TL_OP_LE ? TL_OP_GE
         : op == TL_OP_GE ? TL_OP_LE
                          : op;
  }
  if (!is_tid(E, a) || !tl_expr_is_const_int(b, &c)) return false;
  switch (op) {
  case TL_OP_LT: *lo = 0, *hi = c; return true;
  case TL_OP_LE: *lo = 0, *hi = c + 1; return true;
  case TL_OP_GT: *lo = c + 1, *hi = INT64_MAX; return true;
  case TL_OP_GE: *lo = c, *hi = INT64_MAX; return true;
  case TL_OP_EQ: *lo = c, *hi = c + 1; return true;
  default: return false;
  }
}

bool tl_el_role_begin(elab *E, const tl_expr *cond, tl_el_role *r) {
  int64_t T = E->kernel_threads, lo = 0, hi = INT64_MAX;
  if (!E->in_kernel || T <= 0 || !tid_range(E, cond, &lo, &hi, 0)) return false;
  r->outer_lo = E->role_lo, r->outer_hi = E->role_hi;
  r->lo = lo > r->outer_lo ? lo : r->outer_lo;
  r->hi = hi < r->outer_hi ? hi : r->outer_hi;
  if (r->hi < r->lo) r->hi = r->lo;
  /* the else branch: the rest of the outer range, when it is one interval */
  r->else_lo = r->hi == r->outer_hi ? r->outer_lo : r->lo == r->outer_lo ? r->hi : -1;
  r->else_hi = r->hi == r->outer_hi ? r->lo : r->lo == r->outer_lo ? r->outer_hi : -1;
  return true;
}

/* Tile work outside T.ws scopes: a tile op, a T.Parallel loop, a barrier
 * statement or a warpgroup-wide register hint. */
static const tl_stmt *tile_work(const tl_stmt *s, int depth) {
  if (!s || depth > 64) return NULL;
  switch (s->kind) {
  case TL_STMT_TILE: return s;
  case TL_STMT_SEQ:
    for (int i = 0; i < s->u.seq.n; i++) {
      const tl_stmt *w = tile_work(s->u.seq.stmts[i], depth + 1);
      if (w) return w;
    }
    return NULL;
  case TL_STMT_FOR: return s->u.loop.kind == TL_LOOP_PARALLEL ? s : tile_work(s->u.loop.body, depth + 1);
  case TL_STMT_WHILE: return tile_work(s->u.whiles.body, depth + 1);
  case TL_STMT_IF: {
    const tl_expr *c = s->u.ifs.cond;
    if (c->kind == TL_EXPR_CALL && (c->u.call.op == TL_INTRIN_WS || c->u.call.op == TL_INTRIN_THREAD_RANGE))
      return NULL;
    const tl_stmt *w = tile_work(s->u.ifs.then_s, depth + 1);
    return w ? w : tile_work(s->u.ifs.else_s, depth + 1);
  }
  case TL_STMT_EVAL: {
    const tl_expr *e = s->u.eval.value;
    int op = e && e->kind == TL_EXPR_CALL ? e->u.call.op : -1;
    return op == TL_INTRIN_BARRIER_ARRIVE || op == TL_INTRIN_BARRIER_WAIT || op == TL_INTRIN_CP_ASYNC_BARRIER_NOINC ||
                   op == TL_INTRIN_SET_MAX_NREG || op == TL_INTRIN_FENCE_PROXY_ASYNC
               ? s
               : NULL;
  }
  default: return NULL;
  }
}

/* Is there a T.ws or thread-range scope below s? */
static bool has_scope(const tl_stmt *s, int depth) {
  if (!s || depth > 64) return false;
  switch (s->kind) {
  case TL_STMT_SEQ:
    for (int i = 0; i < s->u.seq.n; i++)
      if (has_scope(s->u.seq.stmts[i], depth + 1)) return true;
    return false;
  case TL_STMT_FOR: return has_scope(s->u.loop.body, depth + 1);
  case TL_STMT_WHILE: return has_scope(s->u.whiles.body, depth + 1);
  case TL_STMT_IF: {
    const tl_expr *c = s->u.ifs.cond;
    if (c->kind == TL_EXPR_CALL && (c->u.call.op == TL_INTRIN_WS || c->u.call.op == TL_INTRIN_THREAD_RANGE))
      return true;
    return has_scope(s->u.ifs.then_s, depth + 1) || has_scope(s->u.ifs.else_s, depth + 1);
  }
  default: return false;
  }
}

/* Does [lo, hi) select one warpgroup of a kernel of several? */
static bool one_warpgroup(elab *E, int64_t lo, int64_t hi) {
  int64_t T = E->kernel_threads;
  return T > WG_THREADS && T % WG_THREADS == 0 && lo % WG_THREADS == 0 && hi == lo + WG_THREADS;
}

/* Branch b over threads [lo, hi) as role code: T.ws(g) around it when it is
 * warpgroup g's (ws), else T.thread_range(lo, hi) (ws_scope.c checks the
 * range).  A branch without tile work: among T.ws scopes as it is (the
 * finish runs it on warpgroup 0), among thread-range scopes (where work
 * outside runs on every thread) under its condition c, still per-thread
 * code. */
static bool role_part(elab *E, tl_expr *c, tl_stmt *b, int64_t lo, int64_t hi, bool ws, stmt_vec *out) {
  tl_stmt *st = NULL;
  if (!b) return true;
  bool scopes = has_scope(b, 0);
  if (!tile_work(b, 0) && (ws || scopes)) /* an elif's scopes carry their own ranges */
    return tl_vec_push(out, b) || (oom(E), false);
  if (!tile_work(b, 0)) { /* per-thread code of threads lo … hi - 1 */
    tl_expr *z = lit_int(E, c->loc, 0), *h = lit_int(E, c->loc, hi), *l = lit_int(E, c->loc, lo);
    tl_expr *tid = z && h && l ? chk(E, tl_ir_call(E->m, c->loc, TL_INTRIN_GET_THREAD_BINDING, 1, &z)) : NULL;
    c = tid ? chk(E, tl_ir_binary(E->m, c->loc, TL_OP_LT, tid, h)) : NULL;
    tl_expr *ge = c && lo > 0 ? chk(E, tl_ir_binary(E->m, c->loc, TL_OP_GE, tid, l)) : NULL;
    if (ge) c = chk(E, tl_ir_binary(E->m, c->loc, TL_OP_AND, ge, c));
    if (!c || (lo > 0 && !ge)) return false;
  } else {
    tl_expr *a[2] = {lit_int(E, c->loc, ws ? lo / WG_THREADS : lo), ws ? NULL : lit_int(E, c->loc, hi)};
    if (!a[0] || (!ws && !a[1])) return false;
    c = chk(E, tl_ir_call(E->m, c->loc, ws ? TL_INTRIN_WS : TL_INTRIN_THREAD_RANGE, ws ? 1 : 2, a));
  }
  st = c ? tl_ir_stmt(E->m, b->loc, TL_STMT_IF) : NULL;
  if (!st) return c ? (oom(E), false) : false;
  st->u.ifs.cond = c;
  st->u.ifs.then_s = b;
  return tl_vec_push(out, st) || (oom(E), false);
}

/* Does a branch of r with tile work select a range that is not whole warps
 * (per-thread code then: `if tx == 0: T.atomic_add(B[0], v)`; a T.Parallel
 * there is check_supported's located error)? */
static bool part_warps(const tl_el_role *r, const tl_stmt *th, const tl_stmt *el) {
  return (tile_work(th, 0) && (r->lo % 32 || r->hi % 32)) ||
         (tile_work(el, 0) && (r->else_lo < 0 || r->else_lo % 32 || r->else_hi % 32));
}

bool tl_el_role_end(elab *E, const tl_ast_stmt *s, const tl_el_role *r, tl_expr *cond, tl_stmt *th, tl_stmt *el,
                    stmt_vec *out) {
  /* T.ws scopes when every branch with tile work selects one warpgroup */
  bool ws = (!tile_work(th, 0) || one_warpgroup(E, r->lo, r->hi)) &&
            (!tile_work(el, 0) || one_warpgroup(E, r->else_lo, r->else_hi));
  if ((!tile_work(th, 0) && !tile_work(el, 0)) || (!ws && part_warps(r, th, el))) {
    /* per-thread code: the `if` as written */
    tl_stmt *is = tl_ir_stmt(E->m, s->loc, TL_STMT_IF);
    if (!is) return oom(E), false;
    is->u.ifs.cond = cond;
    is->u.ifs.then_s = th;
    is->u.ifs.else_s = el;
    return tl_vec_push(out, is) || (oom(E), false);
  }
  if (el && r->else_lo < 0) {
    err(E, cond->loc, "the else branch of this branch on the thread index is not one range of threads");
    return false;
  }
  return role_part(E, cond, th, r->lo, r->hi, ws, out) &&
         (!el || role_part(E, cond, el, r->else_lo, r->else_hi, ws, out));
}
