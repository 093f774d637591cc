/* T.atomic_add lowering (two passes of lib/Lower).
 *
 * Role: turns every T.atomic_add tile op into per-element calls of the SIMT
 * intrinsic T.ptx_atomic_add(dst, flat_off, value, return_prev)
 * (docs/simt-ir.md "Atomics"), then fuses pairs of 16-bit float atomics into
 * one f16x2 / bf16x2 vector atomic where the target has it.
 *
 * Pass "atomic" (tl_lower_atomic; tile IR → tile IR, before pipelining,
 * barriers and layout inference).  Requires: a verified function accepted by
 * check_supported.c.  Guarantees: no T.atomic_add remains.
 *   - Tile-region form T.atomic_add(C[r0:r0+M, c0:c0+N], src) becomes
 *         for i, j in T.Parallel(M', N'):            (the source's shape when
 *             if <C element in bounds>:               it is not global, else
 *                 T.ptx_atomic_add(C, flat(C idx),    the destination's)
 *                                  T.Cast(C.dtype, src[i, j]), False)
 *     so that the ordinary T.Parallel machinery partitions the elements over
 *     the threads: a fragment source by its own layout (every thread adds the
 *     elements it owns, the accumulator of a T.gemm included), a shared or
 *     global source by a plan over the block's threads (barrier.c orders the
 *     shared reads after their writes).  Unit dimensions of either side are
 *     skipped when matching extents, as T.copy does.  Out-of-bounds elements
 *     of a partial tile are skipped (the guard is dropped where the ranges of
 *     the block and loop variables prove it).  A scalar value is added to
 *     every element.  The value is converted to the destination's dtype first
 *     (an f32 destination with f16/bf16 values adds exactly the f16 value).
 *   - Scalar form T.atomic_add(C[i, j], v) inside a T.Parallel loop becomes the
 *     guarded call itself (one atomic per iteration).  Outside a T.Parallel, a
 *     one-element destination is updated once per block (by thread 0, through
 *     a T.Parallel of extent 1), as the reference evaluator defines it, except
 *     in kernels that use the thread index (per-thread code, as
 *     examples/gemv.py), where every thread performs its own atomic, as in
 *     TileLang.
 *   - return_prev=True on the statement form has no observable value and is
 *     lowered like False.  The value form `x = T.atomic_add(C[i], v,
 *     return_prev=True)` never reaches this pass: the elaborator builds the
 *     T.ptx_atomic_add(..., True) expression directly.  memory_order other than "relaxed" is reported as
 *     not lowered yet (all our atomics are relaxed, PTX's default .relaxed
 *     semantics at .gpu scope).
 *
 * Pass "atomic-vectorize" (tl_lower_atomic_vectorize; SIMT IR, after the
 * tile ops are lowered).  A T.unroll loop of even extent whose body is a
 * (guarded) scalar float16 / bfloat16 T.ptx_atomic_add whose offset has
 * coefficient 1 in the loop variable becomes a loop over pairs:
 *         if cond(2p) and cond(2p+1):
 *             T.ptx_atomic_add(C, off(2p), <2-lane value>, False)
 *         else:
 *             for l in T.unroll(2): if cond(2p+l): <scalar atomic at 2p+l>
 * when off(2p) is provably even (4-byte alignment of the pair, given a
 * 4-byte-aligned base pointer, which the runtime checks).  Hardware facts:
 * PTX ISA §9.7.13.5 (red) and §9.7.13.4 (atom): red/atom .add.noftz.f16x2
 * need sm_60, .add.noftz.bf16x2 need sm_90 (so on sm_80 bfloat16 atomics stay
 * scalar; LLVM expands those into a compare-and-swap loop); .add.noftz.f16 needs
 * sm_70 and .add.noftz.bf16 sm_90; .add.f32 all targets.
 * Requires: SIMT IR (after lower-tile-ops); the target (NULL: sm_80).
 * Guarantees: the same additions to the same addresses, two lanes per
 * atomic where the target has the vector form and the pair is provably
 * 4-byte aligned; every other statement unchanged. */
#include <string.h>

#include "IR/rewrite.h"
#include "IR/visit.h"
#include "Lower/lower_internal.h"

#define MAXD 8

typedef struct at_state {
  tl_lower_walk w;    /* module, diagnostics, names, ranges */
  bool per_thread;    /* the kernel body uses the thread index */
  int intrin;         /* the op's per-element intrinsic (tl_tile_atomic_intrin) */
  int lanes;          /* 2 / 4 for T.atomic_addx2 / x4, else 1 */
  const char *opname; /* the op being lowered, for messages ("atomic_add") */
} at_state;

#define CHECK(x) TL_TRY_ALLOC(x, st->w.oom, NULL)

static tl_loc pick(tl_loc a, tl_loc b) { return a.file ? a : b; }

/* ----------------------------------------------------- thread-index use */

/* ------------------------------------------------------------ operands */
/* One side of the op: a region (whole buffer when ndim 0) mapped onto the
 * iteration domain (map[k]: domain dim of buffer dim k, -1 for extent 1). */
typedef struct side {
  tl_buffer *buf;
  int n;
  tl_expr *min[MAXD];
  int64_t ext[MAXD];
  int map[MAXD];
} side;

static bool side_init(at_state *st, side *sd, const tl_region *r, tl_loc loc) {
  tl_buffer *b = r->buffer;
  sd->buf = b;
  sd->n = r->ndim ? r->ndim : b->ndim;
  if (sd->n > MAXD) {
    tl_error(st->w.d, loc, "T.%s on a %d-dimensional region is not lowered yet", st->opname, sd->n);
    st->w.errors++;
    return false;
  }
  for (int k = 0; k < sd->n; k++) {
    sd->min[k] = r->ndim ? r->min[k] : tl_lo_int(st->w.m, loc, 0);
    if (!sd->min[k]) {
      st->w.oom = true;
      return false;
    }
    const tl_expr *e = r->ndim ? r->extent[k] : b->shape[k];
    if (!tl_expr_is_const_int(e, &sd->ext[k]) || sd->ext[k] < 1) {
      tl_error(st->w.d, loc, "T.%s with a non-constant extent (operand '%s') is not lowered yet", st->opname, b->name);
      st->w.errors++;
      return false;
    }
  }
  return true;
}

/* Maps sd's non-unit dims in order onto the domain's non-unit dims. */
static bool side_map(at_state *st, side *sd, int ndom, const int64_t *dom, tl_loc loc) {
  int dk = 0;
  for (int k = 0; k < sd->n; k++) {
    if (sd->ext[k] == 1) {
      sd->map[k] = -1;
      continue;
    }
    while (dk < ndom && dom[dk] == 1) dk++;
    if (dk >= ndom || dom[dk] != sd->ext[k]) goto bad;
    sd->map[k] = dk++;
  }
  while (dk < ndom && dom[dk] == 1) dk++;
  if (dk == ndom) return true;
bad:
  tl_error(st->w.d, loc, "T.%s: operand '%s' does not match the shape of the other operand", st->opname, sd->buf->name);
  st->w.errors++;
  return false;
}

/* Indices of sd at domain element idx (NULL: the region's first element). */
static bool side_indices(at_state *st, const side *sd, tl_expr *const *idx, tl_loc loc, tl_expr **out) {
  for (int k = 0; k < sd->n; k++) {
    tl_expr *x = sd->min[k];
    if (idx && sd->map[k] >= 0) x = tl_lo_add(st->w.m, loc, x, idx[sd->map[k]]);
    if (!(out[k] = x)) {
      st->w.oom = true;
      return false;
    }
  }
  return true;
}

/* Row-major (or strided) flat element offset of b[ix]. */
static tl_expr *flat_offset(at_state *st, const tl_buffer *b, int n, tl_expr **ix, tl_loc loc) {
  tl_module *m = st->w.m;
  tl_expr *off = NULL;
  for (int k = 0; k < n; k++) {
    tl_expr *x = ix[k];
    if (b->strides) {
      tl_expr *t = tl_ir_binary(m, loc, TL_OP_MUL, x, b->strides[k]);
      off = off ? tl_ir_binary(m, loc, TL_OP_ADD, off, t) : t;
    } else {
      off = off ? tl_ir_binary(m, loc, TL_OP_ADD, tl_ir_binary(m, loc, TL_OP_MUL, off, b->shape[k]), x) : x;
    }
    if (!off) return NULL;
  }
  return off ? off : tl_lo_int(m, loc, 0);
}

/* The guarded T.ptx_atomic_add of one domain element (idx: domain indices,
 * NULL for the first element). */
static tl_stmt *element(at_state *st, const tl_stmt *s, const side *dst, const side *val, tl_expr *val_expr,
                        tl_expr *const *idx) {
  tl_module *m = st->w.m;
  tl_loc loc = s->loc;
  tl_expr *di[MAXD] = {0}, *vi[MAXD] = {0};
  if (!side_indices(st, dst, idx, loc, di)) return NULL;
  tl_expr *cond = tl_ir_int(m, loc, TL_BOOL, 1);
  CHECK(cond = tl_lo_bounds_cond(m, loc, &st->w.ranges, dst->buf, dst->n, di, 1, cond));
  tl_expr *v = val_expr;
  if (val) {
    if (!side_indices(st, val, idx, loc, vi)) return NULL;
    if (val->buf->scope == TL_SCOPE_GLOBAL)
      CHECK(cond = tl_lo_bounds_cond(m, loc, &st->w.ranges, val->buf, val->n, vi, 1, cond));
    CHECK(v = tl_ir_load(m, loc, val->buf, val->n, vi));
  }
  tl_dtype et = dst->buf->dtype;
  et.lanes = 1;
  CHECK(v = tl_ir_cast(m, pick(v->loc, loc), et, v));
  tl_expr *args[4];
  CHECK(args[0] = tl_ir_buffer_ref(m, loc, dst->buf));
  CHECK(args[1] = flat_offset(st, dst->buf, dst->n, di, loc));
  args[2] = v;
  CHECK(args[3] = tl_ir_int(m, loc, TL_BOOL, 0));
  tl_stmt *ev = tl_ir_stmt(m, loc, TL_STMT_EVAL);
  CHECK(ev);
  CHECK(ev->u.eval.value = tl_ir_call(m, loc, st->intrin, 4, args));
  int64_t c;
  if (tl_expr_is_const_int(cond, &c) && c) return ev;
  return tl_lo_if(m, loc, cond, ev, NULL);
}

/* A loop of one variable over [0, extent) of the given kind around body
 * (NULL: none yet; *var receives the variable). */
static tl_stmt *loop1(at_state *st, tl_loc loc, tl_loop_kind kind, int64_t extent, const char *name, tl_var **var) {
  tl_module *m = st->w.m;
  tl_stmt *p = tl_ir_stmt(m, loc, TL_STMT_FOR);
  CHECK(p);
  p->u.loop.kind = kind;
  p->u.loop.nvars = 1;
  p->u.loop.num_stages = -1;
  CHECK(p->u.loop.vars = tl_arena_alloc(&m->arena, sizeof(tl_var *)));
  CHECK(p->u.loop.mins = tl_arena_alloc(&m->arena, sizeof(tl_expr *)));
  CHECK(p->u.loop.extents = tl_arena_alloc(&m->arena, sizeof(tl_expr *)));
  CHECK(*var = p->u.loop.vars[0] = tl_names_fresh_var(&st->w.names, loc, name, TL_INT32, TL_VAR_LOOP));
  CHECK(p->u.loop.mins[0] = tl_lo_int(m, loc, 0));
  CHECK(p->u.loop.extents[0] = tl_lo_int(m, loc, extent));
  return p;
}

/* T.atomic_addx2 / x4 (lanes L): `for l in T.unroll(L): <guarded atomic of
 * element l along the last dim>`, which atomic-vectorize turns into f16x2 /
 * bf16x2 pair atomics where it can; outside a T.Parallel in a kernel that is
 * not per-thread, once per block (inside a T.Parallel of extent 1), as a
 * scalar T.atomic_add there. */
static tl_stmt *lanes_loop(at_state *st, const tl_stmt *s, const side *dst, const side *val, int ndom,
                           bool per_thread) {
  tl_loc loc = s->loc;
  tl_var *l, *p0;
  tl_stmt *u = loop1(st, loc, TL_LOOP_UNROLL, st->lanes, "l", &l);
  if (!u) return NULL;
  tl_expr *idx[MAXD] = {0};
  for (int k = 0; k < ndom; k++)
    CHECK(idx[k] = k == ndom - 1 ? tl_ir_var(st->w.m, loc, l) : tl_lo_int(st->w.m, loc, 0));
  CHECK(tl_ranges_set(&st->w.ranges, l, 0, st->lanes - 1));
  u->u.loop.body = element(st, s, dst, val, NULL, idx);
  tl_ranges_unset(&st->w.ranges, l);
  if (!u->u.loop.body) return NULL;
  if (per_thread) return u;
  tl_stmt *p = loop1(st, loc, TL_LOOP_PARALLEL, 1, "i", &p0);
  if (p) p->u.loop.body = u;
  return p;
}

static tl_stmt *lower_one(at_state *st, const tl_stmt *s, bool in_parallel) {
  tl_module *m = st->w.m;
  tl_loc loc = s->loc;
  const tl_expr *mo = s->u.tile.attrs && tl_tile_ops[s->u.tile.op].nattrs > 1 ? s->u.tile.attrs[1] : NULL;
  if (mo && mo->kind == TL_EXPR_STRING && mo->u.str && strcmp(mo->u.str, "relaxed") != 0) {
    tl_error(st->w.d, pick(mo->loc, loc), "T.%s with memory_order=\"%s\" is not lowered yet (only \"relaxed\")",
             st->opname, mo->u.str);
    st->w.errors++;
    return NULL;
  }
  if (s->u.tile.nargs < 2 || s->u.tile.args[0].kind != TL_OPND_REGION) {
    tl_error(st->w.d, loc, "internal error: malformed T.%s", st->opname);
    st->w.errors++;
    return NULL;
  }
  side dst, val;
  bool has_val_region = s->u.tile.args[1].kind == TL_OPND_REGION;
  if (!side_init(st, &dst, &s->u.tile.args[0].region, loc)) return NULL;
  if (has_val_region && !side_init(st, &val, &s->u.tile.args[1].region, loc)) return NULL;
  /* the domain: a non-global source's full shape (fragments are indexed by
   * their own loop variables), else the destination's */
  const side *dom_side = has_val_region && val.buf->scope != TL_SCOPE_GLOBAL ? &val : &dst;
  int ndom = dom_side->n;
  int64_t dom[MAXD], total = 1;
  for (int k = 0; k < ndom; k++) {
    dom[k] = dom_side->ext[k];
    if (__builtin_mul_overflow(total, dom[k], &total) || total > INT32_MAX) {
      tl_error(st->w.d, loc, "T.%s over more than 2^31 elements is not lowered yet", st->opname);
      st->w.errors++;
      return NULL;
    }
  }
  if (!side_map(st, &dst, ndom, dom, loc)) return NULL;
  if (has_val_region && !side_map(st, &val, ndom, dom, loc)) return NULL;
  tl_expr *vexpr = has_val_region ? NULL : s->u.tile.args[1].expr;
  const side *vp = has_val_region ? &val : NULL;
  if (st->lanes > 1) return lanes_loop(st, s, &dst, vp, ndom, in_parallel || st->per_thread);
  if (in_parallel || (total == 1 && st->per_thread)) {
    if (total != 1) {
      tl_error(st->w.d, loc,
               "T.%s of a %lld-element region inside a T.Parallel loop is not lowered yet "
               "(use the scalar form C[i, j] or move it out of the loop)",
               st->opname, (long long)total);
      st->w.errors++;
      return NULL;
    }
    return element(st, s, &dst, vp, vexpr, NULL);
  }
  /* for v0, v1, ... in T.Parallel(domain): element */
  if (ndom == 0) { /* a 0-d region: one element */
    ndom = 1;
    dom[0] = 1;
  }
  tl_stmt *p = tl_ir_stmt(m, loc, TL_STMT_FOR);
  CHECK(p);
  p->u.loop.kind = TL_LOOP_PARALLEL;
  p->u.loop.nvars = ndom;
  p->u.loop.num_stages = -1;
  CHECK(p->u.loop.vars = tl_arena_alloc(&m->arena, sizeof(tl_var *) * (size_t)ndom));
  CHECK(p->u.loop.mins = tl_arena_alloc(&m->arena, sizeof(tl_expr *) * (size_t)ndom));
  CHECK(p->u.loop.extents = tl_arena_alloc(&m->arena, sizeof(tl_expr *) * (size_t)ndom));
  tl_expr *idx[MAXD] = {0};
  static const char *const names[MAXD] = {"i", "j", "k", "l", "i4", "i5", "i6", "i7"};
  for (int k = 0; k < ndom; k++) {
    tl_var *v;
    CHECK(v = tl_names_fresh_var(&st->w.names, loc, names[k], TL_INT32, TL_VAR_LOOP));
    p->u.loop.vars[k] = v;
    CHECK(p->u.loop.mins[k] = tl_lo_int(m, loc, 0));
    CHECK(p->u.loop.extents[k] = tl_lo_int(m, loc, dom[k]));
    CHECK(idx[k] = tl_ir_var(m, loc, v));
    CHECK(tl_ranges_set(&st->w.ranges, v, 0, dom[k] - 1));
  }
  tl_stmt *body = element(st, s, &dst, vp, vexpr, idx);
  for (int k = 0; k < ndom; k++) tl_ranges_unset(&st->w.ranges, p->u.loop.vars[k]);
  if (!body) return NULL;
  p->u.loop.body = body;
  return p;
}

/* ---------------------------------------------------------------- walk */
static bool set_loop_ranges(at_state *st, const tl_stmt *s) {
  if (s->u.loop.step) return true;
  for (int k = 0; k < s->u.loop.nvars; k++) {
    int64_t mn = 0, ext;
    if (!tl_expr_is_const_int(s->u.loop.extents[k], &ext) || ext < 1 || ext > INT32_MAX) continue;
    if (s->u.loop.mins && s->u.loop.mins[k] && !tl_expr_is_const_int(s->u.loop.mins[k], &mn)) continue;
    if (mn < INT32_MIN || mn > INT32_MAX) continue;
    if (!tl_ranges_set(&st->w.ranges, s->u.loop.vars[k], mn, mn + ext - 1)) return false;
  }
  return true;
}

static tl_stmt *walk(at_state *st, tl_stmt *s, bool in_par, int depth) {
  if (!s) return s;
  if (!tl_lo_nesting_ok(st->w.d, s, depth, &st->w.errors, true)) return NULL;
  switch (s->kind) {
  case TL_STMT_SEQ:
    for (int i = 0; i < s->u.seq.n; i++) {
      tl_stmt *c = walk(st, s->u.seq.stmts[i], in_par, depth + 1);
      if (!c) return NULL;
      s->u.seq.stmts[i] = c;
    }
    return s;
  case TL_STMT_FOR: {
    CHECK(set_loop_ranges(st, s));
    tl_stmt *b = walk(st, s->u.loop.body, in_par || s->u.loop.kind == TL_LOOP_PARALLEL, depth + 1);
    for (int k = 0; k < s->u.loop.nvars; k++) tl_ranges_unset(&st->w.ranges, s->u.loop.vars[k]);
    if (!b) return NULL;
    s->u.loop.body = b;
    return s;
  }
  case TL_STMT_KERNEL: {
    for (int i = 0; i < s->u.kernel.ngrid; i++) {
      int64_t g;
      if (!s->u.kernel.block_vars[i]) continue;
      if (tl_expr_is_const_int(s->u.kernel.grid[i], &g) && g >= 1 && g <= INT32_MAX)
        CHECK(tl_ranges_set(&st->w.ranges, s->u.kernel.block_vars[i], 0, g - 1));
      else CHECK(tl_ranges_set(&st->w.ranges, s->u.kernel.block_vars[i], 0, INT32_MAX - 1));
    }
    bool saved = st->per_thread;
    st->per_thread = tl_stmt_uses_thread_index(s->u.kernel.body, NULL);
    tl_stmt *b = walk(st, s->u.kernel.body, in_par, depth + 1);
    st->per_thread = saved;
    if (!b) return NULL;
    s->u.kernel.body = b;
    return s;
  }
  case TL_STMT_IF: {
    tl_stmt *t = walk(st, s->u.ifs.then_s, in_par, depth + 1);
    if (!t) return NULL;
    s->u.ifs.then_s = t;
    if (s->u.ifs.else_s) {
      tl_stmt *e = walk(st, s->u.ifs.else_s, in_par, depth + 1);
      if (!e) return NULL;
      s->u.ifs.else_s = e;
    }
    return s;
  }
  case TL_STMT_WHILE: return (s->u.whiles.body = walk(st, s->u.whiles.body, in_par, depth + 1)) ? s : NULL;
  case TL_STMT_LET: {
    tl_range r;
    if (tl_expr_range(&st->w.ranges, s->u.let.value, &r)) CHECK(tl_ranges_set(&st->w.ranges, s->u.let.var, r.lo, r.hi));
    return s;
  }
  case TL_STMT_TILE:
    if (tl_tile_atomic_intrin(s->u.tile.op, &st->lanes) >= 0) {
      st->intrin = tl_tile_atomic_intrin(s->u.tile.op, NULL);
      st->opname = tl_tile_ops[s->u.tile.op].name;
      int before = st->w.errors;
      tl_stmt *r = lower_one(st, s, in_par);
      /* after a reported error, keep walking to report the others */
      if (!r && !st->w.oom && st->w.errors > before) return s;
      return r;
    }
    return s;
  default: return s;
  }
}

bool tl_lower_atomic(tl_module *m, tl_primfunc *f, const tl_target *target, tl_diag *d) {
  (void)target; /* nothing here depends on the target yet */
  at_state st = {.intrin = TL_INTRIN_PTX_ATOMIC_ADD};
  tl_lower_walk_begin(&st.w, m, d, f);
  tl_stmt *b = st.w.oom ? NULL : walk(&st, f->body, false, 0);
  bool ok = b && !st.w.oom && st.w.errors == 0;
  if (ok) f->body = b;
  if (st.w.oom) tl_error(d, f->loc, "out of memory while lowering T.atomic_add");
  else if (!ok && st.w.errors == 0) tl_error(d, f->loc, "internal error: T.atomic_add lowering failed");
  tl_lower_walk_end(&st.w);
  return ok;
}

/* ====================================================== pair vectorization */
typedef struct av_state {
  tl_module *m;
  tl_diag *d;
  bool oom;
  int intrin;
  bool bf16x2; /* the target has red.add.noftz.bf16x2 (sm_90) */
  tl_names names;
} av_state;

#undef CHECK
#define CHECK(x) TL_TRY_ALLOC(x, st->oom, NULL)

/* e with variable v replaced by r (IR/rewrite.h: rebuilt through the
 * folding constructors; subtrees free of v are shared). */
static tl_expr *subst(tl_module *m, const tl_expr *e, const tl_var *v, tl_expr *r, int depth) {
  tl_map one;
  tl_map_init(&one);
  tl_expr *x = NULL;
  if (tl_map_put(&one, v, r)) {
    tl_rewriter rw = {.m = m, .subst = &one, .max_depth = TL_LOWER_MAX_DEPTH, .share_unchanged = true};
    x = tl_rewrite_expr(&rw, e, depth);
  }
  tl_map_free(&one);
  return x;
}

/* The 2-lane value of scalar e at lanes v = base, base + 1; NULL when e has
 * no simple vector form (loads contiguous in v, casts, arithmetic, values
 * free of v).  *fail is set when it cannot be formed (as opposed to OOM). */
static tl_expr *vec2(av_state *st, const tl_expr *e, const tl_var *v, tl_expr *base, bool *fail, int depth) {
  tl_module *m = st->m;
  if (!e || depth > TL_LOWER_MAX_DEPTH || e->dtype.lanes != 1) {
    *fail = true;
    return NULL;
  }
  if (tl_expr_free_of(e, v)) {
    tl_expr *b = tl_lo_broadcast(m, e->loc, (tl_expr *)e, 2);
    CHECK(b);
    return b;
  }
  switch (e->kind) {
  case TL_EXPR_CAST: {
    tl_expr *x = vec2(st, e->u.cast.value, v, base, fail, depth + 1);
    if (!x) return NULL;
    tl_dtype t = e->dtype;
    t.lanes = 2;
    tl_expr *c = tl_lo_cast(m, e->loc, t, x);
    CHECK(c);
    return c;
  }
  case TL_EXPR_BINARY: {
    tl_binop op = e->u.bin.op;
    if (op != TL_OP_ADD && op != TL_OP_SUB && op != TL_OP_MUL) {
      *fail = true;
      return NULL;
    }
    tl_expr *a = vec2(st, e->u.bin.a, v, base, fail, depth + 1);
    tl_expr *b = a ? vec2(st, e->u.bin.b, v, base, fail, depth + 1) : NULL;
    if (!b) return NULL;
    tl_expr *r = tl_ir_binary(m, e->loc, op, a, b);
    CHECK(r);
    return r;
  }
  case TL_EXPR_LOAD: {
    int n = e->u.load.n;
    const tl_buffer *b = e->u.load.buffer;
    int64_t c;
    if (n < 1 || b->strides || b->dtype.lanes != 1) {
      *fail = true;
      return NULL;
    }
    for (int i = 0; i + 1 < n; i++)
      if (!tl_expr_free_of(e->u.load.indices[i], v)) {
        *fail = true;
        return NULL;
      }
    if (!tl_expr_lane_coef(e->u.load.indices[n - 1], v, &c) || c != 1) {
      *fail = true;
      return NULL;
    }
    if (n > 1) {
      int64_t row;
      if (!tl_expr_is_const_int(b->shape[n - 1], &row) || row % 2) {
        *fail = true;
        return NULL;
      }
    }
    tl_expr *first = subst(m, e->u.load.indices[n - 1], v, base, 0);
    CHECK(first);
    if (!tl_expr_divisible(first, 2, NULL)) {
      *fail = true;
      return NULL;
    }
    tl_expr **ix = tl_arena_alloc(&m->arena, sizeof(tl_expr *) * (size_t)n);
    CHECK(ix);
    for (int i = 0; i + 1 < n; i++) ix[i] = e->u.load.indices[i];
    CHECK(ix[n - 1] = tl_lo_ramp(m, e->loc, first, 2));
    tl_expr *ld = tl_ir_load(m, e->loc, (tl_buffer *)b, n, ix);
    CHECK(ld);
    ld->dtype = e->dtype;
    ld->dtype.lanes = 2;
    return ld;
  }
  default: *fail = true; return NULL;
  }
}

static bool is_atomic_call(const av_state *st, const tl_expr *e) {
  return e && e->kind == TL_EXPR_CALL && e->u.call.op == st->intrin && e->u.call.n == 4;
}

static tl_stmt *eval_of(av_state *st, tl_loc loc, tl_expr *call) {
  tl_stmt *s = tl_lo_eval(st->m, loc, call);
  CHECK(s);
  return s;
}

/* Tries to fuse `for v in T.unroll(E): [if cond:] atomic(off(v), val(v))`;
 * returns the fused loop, s itself when it does not apply, NULL on OOM. */
static tl_stmt *fuse(av_state *st, tl_stmt *s) {
  tl_module *m = st->m;
  int64_t E;
  if (s->kind != TL_STMT_FOR || s->u.loop.nvars != 1 || s->u.loop.step ||
      (s->u.loop.kind != TL_LOOP_UNROLL && s->u.loop.kind != TL_LOOP_SERIAL) ||
      !tl_expr_is_const_int(s->u.loop.extents[0], &E) || E < 2 || E % 2)
    return s;
  int64_t mn = 0;
  if (s->u.loop.mins && s->u.loop.mins[0] && !tl_expr_is_const_int(s->u.loop.mins[0], &mn)) return s;
  if (mn != 0) return s;
  tl_var *v = s->u.loop.vars[0];
  const tl_stmt *b = s->u.loop.body;
  const tl_expr *cond = NULL;
  if (b->kind == TL_STMT_IF && !b->u.ifs.else_s) {
    cond = b->u.ifs.cond;
    b = b->u.ifs.then_s;
  }
  if (b->kind != TL_STMT_EVAL || !is_atomic_call(st, b->u.eval.value)) return s;
  const tl_expr *call = b->u.eval.value;
  tl_expr *const *a = call->u.call.args;
  int64_t rp;
  if (!a[0] || a[0]->kind != TL_EXPR_BUFFER || a[0]->u.buffer->scope != TL_SCOPE_GLOBAL) return s;
  if (!tl_expr_is_const_int(a[3], &rp) || rp) return s;
  tl_dtype t = a[2]->dtype;
  bool f16 = t.code == TL_TYPE_FLOAT && t.bits == 16, bf16 = t.code == TL_TYPE_BFLOAT && t.bits == 16;
  if (t.lanes != 1 || !(f16 || (bf16 && st->bf16x2))) return s;
  if (!tl_dtype_eq(a[2]->dtype, (tl_dtype){a[0]->u.buffer->dtype.code, a[0]->u.buffer->dtype.bits, 1})) return s;
  int64_t c;
  if (!tl_expr_lane_coef(a[1], v, &c) || c != 1) return s;
  /* base lane: 2p (p a new unrolled variable) or 0 */
  tl_var *p = NULL;
  tl_expr *base;
  tl_loc loc = s->loc;
  if (E > 2) {
    CHECK(p = tl_names_fresh_var(&st->names, loc, "vp", TL_INT32, TL_VAR_LOOP));
    CHECK(base = tl_lo_mul(m, loc, tl_ir_var(m, loc, p), 2));
  } else {
    CHECK(base = tl_lo_int(m, loc, 0));
  }
  tl_expr *off0 = subst(m, a[1], v, base, 0);
  CHECK(off0);
  if (!tl_expr_divisible(off0, 2, NULL)) return s;
  bool fail = false;
  tl_expr *val = vec2(st, a[2], v, base, &fail, 0);
  if (!val) {
    if (fail) return s;
    st->oom = true;
    return NULL;
  }
  tl_expr *args[4] = {a[0], off0, val, a[3]};
  tl_stmt *vec = eval_of(st, loc, tl_ir_call(m, loc, st->intrin, 4, args));
  if (!vec) return NULL;
  tl_stmt *body = vec;
  if (cond) {
    tl_expr *b1 = tl_lo_add(m, loc, base, tl_lo_int(m, loc, 1));
    CHECK(b1);
    tl_expr *c0 = subst(m, cond, v, base, 0), *c1 = subst(m, cond, v, b1, 0);
    CHECK(c0 && c1);
    tl_expr *both = tl_ir_binary(m, loc, TL_OP_AND, c0, c1);
    CHECK(both);
    /* else: each lane on its own (lane l of the pair = the original body at base + l) */
    tl_var *l;
    CHECK(l = tl_names_fresh_var(&st->names, loc, "vl", TL_INT32, TL_VAR_LOOP));
    tl_expr *bl = tl_lo_add(m, loc, base, tl_ir_var(m, loc, l));
    CHECK(bl);
    tl_expr *cl = subst(m, cond, v, bl, 0);
    tl_expr *la[4] = {a[0], subst(m, a[1], v, bl, 0), subst(m, a[2], v, bl, 0), a[3]};
    CHECK(cl && la[1] && la[2]);
    tl_stmt *one = eval_of(st, loc, tl_ir_call(m, loc, st->intrin, 4, la));
    CHECK(one);
    CHECK(one = tl_lo_if(m, loc, cl, one, NULL));
    CHECK(one = tl_lo_for(m, loc, TL_LOOP_UNROLL, l, tl_lo_int(m, loc, 2), one));
    CHECK(body = tl_lo_if(m, loc, both, vec, one));
  }
  if (p) CHECK(body = tl_lo_for(m, loc, TL_LOOP_UNROLL, p, tl_lo_int(m, loc, E / 2), body));
  return body;
}

static tl_stmt *vwalk(av_state *st, tl_stmt *s, int depth) {
  if (!s || depth > TL_LOWER_MAX_DEPTH) return s;
  switch (s->kind) {
  case TL_STMT_SEQ:
    for (int i = 0; i < s->u.seq.n; i++) {
      tl_stmt *c = vwalk(st, s->u.seq.stmts[i], depth + 1);
      if (!c) return NULL;
      s->u.seq.stmts[i] = c;
    }
    return s;
  case TL_STMT_FOR: {
    tl_stmt *b = vwalk(st, s->u.loop.body, depth + 1);
    if (!b) return NULL;
    s->u.loop.body = b;
    return fuse(st, s);
  }
  case TL_STMT_WHILE: return (s->u.whiles.body = vwalk(st, s->u.whiles.body, depth + 1)) ? s : NULL;
  case TL_STMT_KERNEL: {
    tl_stmt *b = vwalk(st, s->u.kernel.body, depth + 1);
    if (!b) return NULL;
    s->u.kernel.body = b;
    return s;
  }
  case TL_STMT_IF: {
    tl_stmt *t = vwalk(st, s->u.ifs.then_s, depth + 1);
    if (!t) return NULL;
    s->u.ifs.then_s = t;
    if (s->u.ifs.else_s) {
      tl_stmt *e = vwalk(st, s->u.ifs.else_s, depth + 1);
      if (!e) return NULL;
      s->u.ifs.else_s = e;
    }
    return s;
  }
  default: return s;
  }
}

bool tl_lower_atomic_vectorize(tl_module *m, tl_primfunc *f, const tl_target *target, tl_diag *d) {
  av_state st = {.m = m, .d = d};
  st.intrin = TL_INTRIN_PTX_ATOMIC_ADD;
  st.bf16x2 = target->atomic_add_bf16x2;
  if (st.intrin < 0) return true;
  if (!tl_names_collect(&st.names, m, f)) {
    tl_error(d, f->loc, "out of memory while vectorizing atomics");
    return false;
  }
  tl_stmt *b = vwalk(&st, f->body, 0);
  tl_names_free(&st.names);
  if (!b || st.oom) {
    tl_error(d, f->loc, "out of memory while vectorizing atomics");
    return false;
  }
  f->body = b;
  return true;
}
