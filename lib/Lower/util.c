/* Shared helpers of the lowering passes (lib/Lower):
 *  - a set of the names a function uses, to make fresh variables that never
 *    shadow a user name (the verifier rejects shadowing);
 *  - interval analysis over int expressions (var → [lo, hi]) used to drop
 *    bounds guards that are provably true;
 *  - divisibility and lane-affinity analyses used to prove that a vector
 *    access is contiguous and aligned, and the vector checks built on them
 *    (which width a T.Parallel body or an access can be issued at);
 *  - int32 index builders, with floordiv/floormod by positive constants
 *    simplified by exact identities only:
 *        (x*k*c + b) // c = x*k + b // c      (x*k*c + b) % c = b % c
 *        (x*k) // (k*c) = x // c              (x*k) % (k*c) = (x % c) * k
 *        a // c = 0, a % c = a              when 0 <= a < c is proven.
 * All arithmetic on constants checks for overflow; on overflow the analysis
 * answers "unknown". */
#include <stdlib.h>
#include <string.h>

#include "IR/visit.h"
#include "Lower/lower_internal.h"

/* ================================================================ names */
static bool add_name(tl_names *n, const char *name) {
  if (!name) return true;
  return tl_map_put(&n->set, name, (void *)1);
}

/* The names a statement tree binds (loop, block and let variables,
 * allocated buffers), gathered into the set by a tl_map_visitor. */
static void names_stmt(tl_visitor *v, const tl_stmt *s) {
  tl_map_visitor *u = (tl_map_visitor *)v;
  switch (s->kind) {
  case TL_STMT_FOR:
    for (int i = 0; i < s->u.loop.nvars; i++)
      if (s->u.loop.vars[i]) tl_map_visitor_add(u, s->u.loop.vars[i]->name);
    return;
  case TL_STMT_KERNEL:
    for (int i = 0; i < s->u.kernel.ngrid; i++)
      if (s->u.kernel.block_vars[i]) tl_map_visitor_add(u, s->u.kernel.block_vars[i]->name);
    return;
  case TL_STMT_ALLOC: tl_map_visitor_add(u, s->u.alloc.buffer ? s->u.alloc.buffer->name : NULL); return;
  case TL_STMT_LET: tl_map_visitor_add(u, s->u.let.var ? s->u.let.var->name : NULL); return;
  default: return;
  }
}

bool tl_names_collect(tl_names *n, tl_module *m, const tl_primfunc *f) {
  tl_map_init(&n->set);
  n->m = m;
  n->counter = 0;
  for (int i = 0; i < f->nparams; i++) {
    const tl_param *p = &f->params[i];
    const char *nm = p->kind == TL_PARAM_TENSOR ? (p->buffer ? p->buffer->name : NULL) : (p->var ? p->var->name : NULL);
    if (!add_name(n, nm)) return false;
  }
  for (int i = 0; i < f->ndynamic; i++)
    if (f->dynamic[i] && !add_name(n, f->dynamic[i]->name)) return false;
  /* T.* and the function name itself are never variable names, but a user
   * could call a variable T: keep it out of fresh names too. */
  if (!add_name(n, tl_intern_str(&m->names, "T"))) return false;
  tl_map_visitor u = {.v = {.stmt = names_stmt}, .set = &n->set};
  tl_visit_stmt(&u.v, f->body);
  return !u.oom;
}

void tl_names_free(tl_names *n) { tl_map_free(&n->set); }

tl_var *tl_names_fresh_var(tl_names *n, tl_loc loc, const char *base, tl_dtype t, tl_var_kind kind) {
  const char *name = tl_intern_str(&n->m->names, base);
  for (int k = 1; name && tl_map_get(&n->set, name, NULL); k++) {
    char *cand = tl_arena_printf(&n->m->arena, "%s_%d", base, k);
    if (!cand) return NULL;
    name = tl_intern_str(&n->m->names, cand);
  }
  if (!name || !add_name(n, name)) return NULL;
  return tl_ir_new_var(n->m, loc, name, t, kind);
}

/* ============================================================= intervals */
void tl_ranges_init(tl_ranges *r, tl_arena *arena) {
  tl_map_init(&r->map);
  r->arena = arena;
  r->threads = 0;
}
void tl_ranges_free(tl_ranges *r) { tl_map_free(&r->map); }

bool tl_ranges_set(tl_ranges *r, const tl_var *v, int64_t lo, int64_t hi) {
  tl_range *x = tl_arena_alloc(r->arena, sizeof *x);
  if (!x) return false;
  x->lo = lo;
  x->hi = hi;
  return tl_map_put(&r->map, v, x);
}

void tl_lower_walk_begin(tl_lower_walk *w, tl_module *m, tl_diag *d, const tl_primfunc *f) {
  *w = (tl_lower_walk){.m = m, .d = d};
  tl_ranges_init(&w->ranges, &m->arena);
  w->oom = !tl_names_collect(&w->names, m, f);
  for (int i = 0; !w->oom && i < f->ndynamic; i++)
    if (f->dynamic[i] && !tl_ranges_set(&w->ranges, f->dynamic[i], 0, INT32_MAX)) w->oom = true;
}

void tl_lower_walk_end(tl_lower_walk *w) {
  tl_names_free(&w->names);
  tl_ranges_free(&w->ranges);
}
void tl_ranges_unset(tl_ranges *r, const tl_var *v) { tl_map_remove(&r->map, v); }

static bool is_tid_call(const tl_expr *e) {
  if (e->kind != TL_EXPR_CALL || e->u.call.op != TL_INTRIN_GET_THREAD_BINDING) return false;
  int64_t k = 0;
  return e->u.call.n == 0 || (tl_expr_is_const_int(e->u.call.args[0], &k) && k == 0);
}

static bool range_rec(const tl_ranges *r, const tl_expr *e, tl_range *out, int depth) {
  if (!e || depth > TL_LOWER_MAX_DEPTH || !tl_dtype_is_int(e->dtype) || e->dtype.lanes != 1) return false;
  tl_range a, b;
  switch (e->kind) {
  case TL_EXPR_INT: out->lo = out->hi = e->u.ival; return true;
  case TL_EXPR_VAR: {
    tl_range *x = tl_map_get(&r->map, e->u.var, NULL);
    if (!x) return false;
    *out = *x;
    return true;
  }
  case TL_EXPR_CALL:
    if (r->threads > 0 && is_tid_call(e)) {
      out->lo = 0;
      out->hi = r->threads - 1;
      return true;
    }
    return false;
  case TL_EXPR_BINARY: {
    if (!range_rec(r, e->u.bin.a, &a, depth + 1) || !range_rec(r, e->u.bin.b, &b, depth + 1)) return false;
    switch (e->u.bin.op) {
    case TL_OP_ADD:
      return !__builtin_add_overflow(a.lo, b.lo, &out->lo) && !__builtin_add_overflow(a.hi, b.hi, &out->hi);
    case TL_OP_SUB:
      return !__builtin_sub_overflow(a.lo, b.hi, &out->lo) && !__builtin_sub_overflow(a.hi, b.lo, &out->hi);
    case TL_OP_MUL: {
      int64_t p[4];
      if (__builtin_mul_overflow(a.lo, b.lo, &p[0]) || __builtin_mul_overflow(a.lo, b.hi, &p[1]) ||
          __builtin_mul_overflow(a.hi, b.lo, &p[2]) || __builtin_mul_overflow(a.hi, b.hi, &p[3]))
        return false;
      out->lo = out->hi = p[0];
      for (int i = 1; i < 4; i++) {
        if (p[i] < out->lo) out->lo = p[i];
        if (p[i] > out->hi) out->hi = p[i];
      }
      return true;
    }
    case TL_OP_FLOORDIV:
      if (b.lo != b.hi || b.lo <= 0 || a.lo < 0) return false;
      out->lo = a.lo / b.lo;
      out->hi = a.hi / b.lo;
      return true;
    case TL_OP_FLOORMOD:
      if (b.lo != b.hi || b.lo <= 0) return false;
      if (a.lo >= 0 && a.hi < b.lo) {
        *out = a;
        return true;
      }
      out->lo = 0;
      out->hi = b.lo - 1;
      return true;
    case TL_OP_MIN:
      out->lo = a.lo < b.lo ? a.lo : b.lo;
      out->hi = a.hi < b.hi ? a.hi : b.hi;
      return true;
    case TL_OP_MAX:
      out->lo = a.lo > b.lo ? a.lo : b.lo;
      out->hi = a.hi > b.hi ? a.hi : b.hi;
      return true;
    default: return false;
    }
  }
  case TL_EXPR_CAST: {
    const tl_expr *x = e->u.cast.value;
    if (!tl_dtype_is_int(x->dtype) || x->dtype.bits > e->dtype.bits) return false;
    if (x->dtype.code == TL_TYPE_UINT && e->dtype.code == TL_TYPE_INT && x->dtype.bits == e->dtype.bits) return false;
    return range_rec(r, x, out, depth + 1);
  }
  default: return false;
  }
}

bool tl_expr_range(const tl_ranges *r, const tl_expr *e, tl_range *out) { return range_rec(r, e, out, 0); }

/* ========================================================== divisibility */
static bool div_rec(const tl_expr *e, int64_t k, const tl_var *lane, int depth) {
  if (k == 1) return true;
  if (!e || depth > TL_LOWER_MAX_DEPTH) return false;
  switch (e->kind) {
  case TL_EXPR_INT: return e->u.ival % k == 0;
  case TL_EXPR_VAR: return lane && e->u.var == lane;
  case TL_EXPR_BINARY: {
    const tl_expr *a = e->u.bin.a, *b = e->u.bin.b;
    int64_t c;
    switch (e->u.bin.op) {
    case TL_OP_ADD:
    case TL_OP_SUB: return div_rec(a, k, lane, depth + 1) && div_rec(b, k, lane, depth + 1);
    case TL_OP_MUL:
      if (tl_expr_is_const_int(b, &c) && c != 0 && c % k == 0) return true;
      if (tl_expr_is_const_int(a, &c) && c != 0 && c % k == 0) return true;
      if (tl_expr_is_const_int(b, &c) && c > 0 && k % c == 0) return div_rec(a, k / c, lane, depth + 1);
      if (tl_expr_is_const_int(a, &c) && c > 0 && k % c == 0) return div_rec(b, k / c, lane, depth + 1);
      return div_rec(a, k, lane, depth + 1) || div_rec(b, k, lane, depth + 1);
    case TL_OP_FLOORMOD: return tl_expr_is_const_int(b, &c) && c > 0 && c % k == 0 && div_rec(a, k, lane, depth + 1);
    default: return false;
    }
  }
  case TL_EXPR_CAST:
    return tl_dtype_is_int(e->u.cast.value->dtype) && e->u.cast.value->dtype.bits <= e->dtype.bits &&
           div_rec(e->u.cast.value, k, lane, depth + 1);
  default: return false;
  }
}

bool tl_expr_divisible(const tl_expr *e, int64_t k, const tl_var *lane) { return k > 0 && div_rec(e, k, lane, 0); }

static bool is_var_node(const tl_expr *e, void *v) { return e->kind == TL_EXPR_VAR && e->u.var == v; }

/* e does not mention v (depth: e's nesting level; too deep counts as a
 * mention). */
static bool free_rec(const tl_expr *e, const tl_var *v, int depth) {
  return !tl_expr_any(e, is_var_node, (void *)v, TL_LOWER_MAX_DEPTH - depth, true);
}

bool tl_expr_free_of(const tl_expr *e, const tl_var *v) { return free_rec(e, v, 0); }

static bool coef_rec(const tl_expr *e, const tl_var *lane, int64_t *coef, int depth) {
  if (depth > TL_LOWER_MAX_DEPTH) return false;
  if (free_rec(e, lane, depth)) {
    *coef = 0;
    return true;
  }
  int64_t ca, cb, c;
  switch (e->kind) {
  case TL_EXPR_VAR: *coef = 1; return true; /* it is the lane (not free) */
  case TL_EXPR_BINARY:
    switch (e->u.bin.op) {
    case TL_OP_ADD:
      return coef_rec(e->u.bin.a, lane, &ca, depth + 1) && coef_rec(e->u.bin.b, lane, &cb, depth + 1) &&
             !__builtin_add_overflow(ca, cb, coef);
    case TL_OP_SUB:
      return coef_rec(e->u.bin.a, lane, &ca, depth + 1) && coef_rec(e->u.bin.b, lane, &cb, depth + 1) &&
             !__builtin_sub_overflow(ca, cb, coef);
    case TL_OP_MUL:
      if (tl_expr_is_const_int(e->u.bin.b, &c))
        return coef_rec(e->u.bin.a, lane, &ca, depth + 1) && !__builtin_mul_overflow(ca, c, coef);
      if (tl_expr_is_const_int(e->u.bin.a, &c))
        return coef_rec(e->u.bin.b, lane, &cb, depth + 1) && !__builtin_mul_overflow(cb, c, coef);
      return false;
    default: return false;
    }
  default: return false;
  }
}

bool tl_expr_lane_coef(const tl_expr *e, const tl_var *lane, int64_t *coef) { return coef_rec(e, lane, coef, 0); }

/* ============================================================== builders */
tl_expr *tl_lo_int(tl_module *m, tl_loc loc, int64_t v) { return tl_ir_int(m, loc, TL_INT32, v); }

tl_expr *tl_lo_add(tl_module *m, tl_loc loc, tl_expr *a, tl_expr *b) { return tl_ir_binary(m, loc, TL_OP_ADD, a, b); }

tl_expr *tl_lo_mul(tl_module *m, tl_loc loc, tl_expr *a, int64_t k) {
  if (!a) return NULL;
  int64_t c;
  /* (x * c) * k → x * (c*k) */
  if (a->kind == TL_EXPR_BINARY && a->u.bin.op == TL_OP_MUL && tl_expr_is_const_int(a->u.bin.b, &c) &&
      !__builtin_mul_overflow(c, k, &c) && c <= INT32_MAX && c >= INT32_MIN)
    return tl_ir_binary(m, loc, TL_OP_MUL, a->u.bin.a, tl_ir_int(m, loc, a->dtype, c));
  return tl_ir_binary(m, loc, TL_OP_MUL, a, tl_ir_int(m, loc, a->dtype, k));
}

/* a = x * k with constant k? */
static bool as_mul_const(const tl_expr *a, tl_expr **x, int64_t *k) {
  if (a->kind != TL_EXPR_BINARY || a->u.bin.op != TL_OP_MUL) return false;
  if (tl_expr_is_const_int(a->u.bin.b, k)) {
    *x = a->u.bin.a;
    return true;
  }
  if (tl_expr_is_const_int(a->u.bin.a, k)) {
    *x = a->u.bin.b;
    return true;
  }
  return false;
}

static bool multiple_of(const tl_expr *a, int64_t c) {
  int64_t k;
  tl_expr *x;
  if (tl_expr_is_const_int(a, &k)) return k % c == 0;
  return as_mul_const(a, &x, &k) && k % c == 0;
}

/* Is a provably in [0, c) (by the ranges r)?  Then a // c is 0, a % c is a. */
static bool below(const tl_ranges *r, const tl_expr *a, int64_t c) {
  tl_range rg;
  return r && tl_expr_range(r, a, &rg) && rg.lo >= 0 && rg.hi < c;
}

static tl_expr *fdiv_rec(tl_module *m, tl_loc loc, tl_expr *a, int64_t c, const tl_ranges *r, int depth) {
  if (!a) return NULL;
  int64_t k;
  tl_expr *x;
  if (c == 1) return a;
  if (depth < 50) {
    if (below(r, a, c)) return tl_ir_int(m, loc, a->dtype, 0);
    if (as_mul_const(a, &x, &k) && k > 0) {
      if (k % c == 0) return tl_lo_mul(m, loc, x, k / c);
      if (c % k == 0) return fdiv_rec(m, loc, x, c / k, r, depth + 1);
    }
    /* (p + q) // c = p // c + q // c when p or q is a multiple of c */
    if (a->kind == TL_EXPR_BINARY && a->u.bin.op == TL_OP_ADD &&
        (multiple_of(a->u.bin.a, c) || multiple_of(a->u.bin.b, c)))
      return tl_lo_add(m, loc, fdiv_rec(m, loc, a->u.bin.a, c, r, depth + 1),
                       fdiv_rec(m, loc, a->u.bin.b, c, r, depth + 1));
  }
  return tl_ir_binary(m, loc, TL_OP_FLOORDIV, a, tl_ir_int(m, loc, a->dtype, c));
}

static tl_expr *fmod_rec(tl_module *m, tl_loc loc, tl_expr *a, int64_t c, const tl_ranges *r, int depth) {
  if (!a) return NULL;
  int64_t k;
  tl_expr *x;
  if (c == 1) return tl_ir_int(m, loc, a->dtype, 0);
  if (depth < 50) {
    if (below(r, a, c)) return a;
    if (multiple_of(a, c)) return tl_ir_int(m, loc, a->dtype, 0);
    if (as_mul_const(a, &x, &k) && k > 0 && c % k == 0)
      return tl_lo_mul(m, loc, fmod_rec(m, loc, x, c / k, r, depth + 1), k);
    if (a->kind == TL_EXPR_BINARY && a->u.bin.op == TL_OP_ADD) {
      if (multiple_of(a->u.bin.a, c)) return fmod_rec(m, loc, a->u.bin.b, c, r, depth + 1);
      if (multiple_of(a->u.bin.b, c)) return fmod_rec(m, loc, a->u.bin.a, c, r, depth + 1);
    }
  }
  return tl_ir_binary(m, loc, TL_OP_FLOORMOD, a, tl_ir_int(m, loc, a->dtype, c));
}

tl_expr *tl_lo_fdiv(tl_module *m, tl_loc loc, tl_expr *a, int64_t c, const tl_ranges *r) {
  return fdiv_rec(m, loc, a, c, r, 0);
}
tl_expr *tl_lo_fmod(tl_module *m, tl_loc loc, tl_expr *a, int64_t c, const tl_ranges *r) {
  return fmod_rec(m, loc, a, c, r, 0);
}

tl_expr *tl_lo_thread_index(tl_module *m, tl_loc loc) {
  tl_expr *zero = tl_lo_int(m, loc, 0);
  return zero ? tl_ir_call(m, loc, TL_INTRIN_GET_THREAD_BINDING, 1, &zero) : NULL;
}

/* A ramp or broadcast node over scalar x, lanes wide; x itself when lanes
 * is 1 (or NULL: an earlier OOM), NULL on OOM. */
static tl_expr *vector_of(tl_module *m, tl_loc loc, tl_expr_kind kind, tl_expr *x, int lanes) {
  if (!x || lanes == 1) return x;
  tl_dtype t = x->dtype;
  t.lanes = (uint16_t)lanes;
  tl_expr *e = tl_ir_expr(m, loc, kind, t);
  if (!e) return NULL;
  if (kind == TL_EXPR_BROADCAST) {
    e->u.bcast.value = x;
    return e;
  }
  e->u.ramp.base = x;
  e->u.ramp.stride = tl_ir_int(m, loc, x->dtype, 1);
  return e->u.ramp.stride ? e : NULL;
}

tl_expr *tl_lo_ramp(tl_module *m, tl_loc loc, tl_expr *base, int lanes) {
  return vector_of(m, loc, TL_EXPR_RAMP, base, lanes);
}

tl_expr *tl_lo_broadcast(tl_module *m, tl_loc loc, tl_expr *value, int lanes) {
  return vector_of(m, loc, TL_EXPR_BROADCAST, value, lanes);
}

tl_expr *tl_lo_cast(tl_module *m, tl_loc loc, tl_dtype t, tl_expr *x) {
  if (!x) return NULL;
  if (tl_dtype_eq(t, x->dtype)) return x;
  if (t.lanes == 1 && x->dtype.lanes == 1) return tl_ir_cast(m, loc, t, x);
  tl_expr *e = tl_ir_expr(m, loc, TL_EXPR_CAST, t);
  if (e) e->u.cast.value = x;
  return e;
}

tl_stmt *tl_lo_store(tl_module *m, tl_loc loc, tl_buffer *b, int n, tl_expr **idx, tl_expr *value) {
  if (!value) return NULL;
  tl_stmt *s = tl_ir_stmt(m, loc, TL_STMT_STORE);
  if (!s) return NULL;
  tl_expr **cp = tl_arena_alloc(&m->arena, sizeof(tl_expr *) * (size_t)(n > 0 ? n : 1));
  if (!cp) return NULL;
  for (int i = 0; i < n; i++) {
    if (!idx[i]) return NULL;
    cp[i] = idx[i];
  }
  s->u.store.buffer = b;
  s->u.store.n = n;
  s->u.store.indices = cp;
  s->u.store.value = value;
  return s;
}

tl_stmt *tl_lo_store_pair(tl_module *m, tl_loc loc, tl_buffer *dst, tl_expr *off, tl_buffer *frag, tl_expr *reg,
                          tl_dtype to) {
  tl_expr *rx = reg ? tl_lo_ramp(m, loc, reg, 2) : NULL, *fx = off ? tl_lo_ramp(m, loc, off, 2) : NULL;
  tl_expr *ld = rx && fx ? tl_ir_load(m, loc, frag, 1, &rx) : NULL;
  if (!ld) return NULL;
  ld->dtype = frag->dtype;
  ld->dtype.lanes = 2;
  to.lanes = 2;
  return tl_lo_store(m, loc, dst, 1, &fx, tl_lo_cast(m, loc, to, ld));
}

tl_stmt *tl_lo_eval(tl_module *m, tl_loc loc, tl_expr *value) {
  tl_stmt *s = value ? tl_ir_stmt(m, loc, TL_STMT_EVAL) : NULL;
  if (s) s->u.eval.value = value;
  return s;
}

tl_stmt *tl_lo_let(tl_module *m, tl_loc loc, tl_var *v, tl_expr *value) {
  tl_stmt *s = value ? tl_ir_stmt(m, loc, TL_STMT_LET) : NULL;
  if (!s) return NULL;
  s->u.let.var = v;
  s->u.let.value = value;
  return s;
}

tl_stmt *tl_lo_sync_threads(tl_module *m, tl_loc loc) {
  return tl_lo_eval(m, loc, tl_ir_call(m, loc, TL_INTRIN_SYNC_THREADS, 0, NULL));
}

tl_stmt *tl_lo_if(tl_module *m, tl_loc loc, tl_expr *cond, tl_stmt *then_s, tl_stmt *else_s) {
  if (!cond || !then_s) return NULL;
  int64_t c;
  if (tl_expr_is_const_int(cond, &c)) {
    if (c) return then_s;
    return else_s ? else_s : tl_ir_seq(m, loc, 0, NULL);
  }
  return tl_ir_if(m, loc, cond, then_s, else_s);
}

tl_stmt *tl_lo_for(tl_module *m, tl_loc loc, tl_loop_kind kind, tl_var *v, tl_expr *extent, tl_stmt *body) {
  if (!v || !extent || !body) return NULL;
  tl_stmt *s = tl_ir_stmt(m, loc, TL_STMT_FOR);
  if (!s) return NULL;
  tl_var **vars = tl_arena_alloc(&m->arena, sizeof(tl_var *));
  tl_expr **exts = tl_arena_alloc(&m->arena, sizeof(tl_expr *)), **mins = tl_arena_alloc(&m->arena, sizeof(tl_expr *));
  if (!vars || !exts || !mins) return NULL;
  vars[0] = v, exts[0] = extent, mins[0] = tl_lo_int(m, loc, 0);
  tl_ir_loop_init(s, kind, 1, vars, mins, exts);
  s->u.loop.body = body;
  return s->u.loop.mins[0] ? s : NULL;
}

static tl_stmt *rewrite_loops_rec(tl_stmt *s, tl_stmt *(*rewrite)(void *, tl_stmt *), void *user, int depth) {
  if (!s || depth > TL_LOWER_MAX_DEPTH) return s;
  switch (s->kind) {
  case TL_STMT_SEQ:
    for (int i = 0; i < s->u.seq.n; i++)
      s->u.seq.stmts[i] = rewrite_loops_rec(s->u.seq.stmts[i], rewrite, user, depth + 1);
    return s;
  case TL_STMT_KERNEL: s->u.kernel.body = rewrite_loops_rec(s->u.kernel.body, rewrite, user, depth + 1); return s;
  case TL_STMT_WHILE: s->u.whiles.body = rewrite_loops_rec(s->u.whiles.body, rewrite, user, depth + 1); return s;
  case TL_STMT_IF:
    s->u.ifs.then_s = rewrite_loops_rec(s->u.ifs.then_s, rewrite, user, depth + 1);
    if (s->u.ifs.else_s) s->u.ifs.else_s = rewrite_loops_rec(s->u.ifs.else_s, rewrite, user, depth + 1);
    return s;
  case TL_STMT_FOR: {
    tl_stmt *r = rewrite(user, s);
    if (r) return r;
    s->u.loop.body = rewrite_loops_rec(s->u.loop.body, rewrite, user, depth + 1);
    return s;
  }
  default: return s;
  }
}

bool tl_lo_nesting_ok(tl_diag *d, const tl_stmt *s, int depth, int *errors, bool report) {
  if (depth <= TL_LOWER_MAX_DEPTH) return true;
  if (report) tl_error(d, s->loc, "statement nesting exceeds %d levels", TL_LOWER_MAX_DEPTH);
  (*errors)++;
  return false;
}

tl_stmt *tl_lo_rewrite_loops(tl_stmt *s, tl_stmt *(*rewrite)(void *user, tl_stmt *loop), void *user) {
  return rewrite_loops_rec(s, rewrite, user, 0);
}

/* ------------------------------------------------------------ tl_emitter */
void tl_emit_push(tl_emitter *e, tl_stmt *s) {
  if (!s || !tl_vec_push(&e->out, s)) e->failed = true;
}

tl_expr *tl_emit_int(tl_emitter *e, int64_t v) { return tl_lo_int(e->m, e->loc, v); }

tl_expr *tl_emit_let(tl_emitter *e, const char *name, tl_expr *value) {
  if (!value) {
    e->failed = true;
    return NULL;
  }
  if (tl_expr_is_const_int(value, NULL)) return value;
  tl_var *v = tl_names_fresh_var(e->names, e->loc, name, TL_INT32, TL_VAR_LET);
  tl_stmt *s = v ? tl_lo_let(e->m, e->loc, v, value) : NULL;
  if (!s) {
    e->failed = true;
    return NULL;
  }
  tl_emit_push(e, s);
  return tl_ir_var(e->m, e->loc, v);
}

tl_buffer *tl_emit_local(tl_emitter *e, const char *base, tl_dtype t, int64_t n) {
  tl_var *nm = tl_names_fresh_var(e->names, e->loc, base, t, TL_VAR_LET); /* reserves the name */
  tl_expr **shape = tl_arena_alloc(&e->m->arena, sizeof(tl_expr *));
  if (!nm || !shape || !(shape[0] = tl_emit_int(e, n))) {
    e->failed = true;
    return NULL;
  }
  tl_buffer *b = tl_ir_new_buffer(e->m, e->loc, nm->name, t, TL_SCOPE_LOCAL, 1, shape);
  tl_stmt *s = tl_ir_stmt(e->m, e->loc, TL_STMT_ALLOC);
  if (!b || !s) {
    e->failed = true;
    return NULL;
  }
  s->u.alloc.buffer = b;
  tl_emit_push(e, s);
  return b;
}

tl_stmt *tl_emit_call(tl_emitter *e, tl_intrin op, int n, tl_expr **args) {
  for (int i = 0; i < n; i++)
    if (!args[i]) return NULL;
  return tl_lo_eval(e->m, e->loc, tl_ir_call(e->m, e->loc, op, n, args));
}

tl_stmt *tl_emit_for(tl_emitter *e, tl_var *v, int64_t n, tl_loop_kind kind, tl_stmt *body) {
  if (!v || !body) return NULL;
  return tl_lo_for(e->m, e->loc, kind, v, tl_emit_int(e, n), body);
}

void tl_emit_zero_fill(tl_emitter *e, tl_buffer *b, int64_t n) {
  tl_var *r = tl_names_fresh_var(e->names, e->loc, "r", TL_INT32, TL_VAR_LOOP);
  tl_expr *idx = r ? tl_ir_var(e->m, e->loc, r) : NULL;
  tl_dtype t = b->dtype;
  tl_expr *zero = tl_dtype_is_float(t) ? tl_ir_float(e->m, e->loc, t, 0.0) : tl_ir_int(e->m, e->loc, t, 0);
  tl_stmt *st = idx && zero ? tl_lo_store(e->m, e->loc, b, 1, &idx, zero) : NULL;
  tl_emit_push(e, tl_emit_for(e, r, n, TL_LOOP_UNROLL, st));
}

bool tl_lo_identity_access(const tl_stmt *loop, const tl_buffer *b, int n, tl_expr **idx) {
  if (!loop || n != loop->u.loop.nvars || n != b->ndim) return false;
  for (int k = 0; k < n; k++) {
    int64_t ext, dim, mn = 0;
    if (!idx[k] || idx[k]->kind != TL_EXPR_VAR || idx[k]->u.var != loop->u.loop.vars[k]) return false;
    if (!tl_expr_is_const_int(loop->u.loop.extents[k], &ext)) return false;
    if (!tl_expr_is_const_int(b->shape[k], &dim) || dim != ext) return false;
    if (loop->u.loop.mins && loop->u.loop.mins[k] && (!tl_expr_is_const_int(loop->u.loop.mins[k], &mn) || mn != 0))
      return false;
  }
  return true;
}

bool tl_lo_stacked_access(const tl_stmt *loop, const tl_buffer *b, int n, tl_expr **idx) {
  if (!loop || n != b->ndim) return false;
  int nv = loop->u.loop.nvars, a = n - nv;
  if (nv < 1 || a < 1) return false;
  for (int k = 0; k < nv; k++) {
    int64_t ext, dim, mn = 0;
    tl_expr *x = idx[a + k];
    if (!x || x->kind != TL_EXPR_VAR || x->u.var != loop->u.loop.vars[k]) return false;
    if (!tl_expr_is_const_int(loop->u.loop.extents[k], &ext)) return false;
    if (!tl_expr_is_const_int(b->shape[a + k], &dim) || dim != ext) return false;
    if (loop->u.loop.mins && loop->u.loop.mins[k] && (!tl_expr_is_const_int(loop->u.loop.mins[k], &mn) || mn != 0))
      return false;
  }
  for (int k = 0; k < a; k++)
    for (int j = 0; j < nv; j++)
      if (!idx[k] || !tl_expr_free_of(idx[k], loop->u.loop.vars[j])) return false;
  return true;
}

/* idx = off + v (either order) with off free of every variable of loop? */
static tl_expr *offset_of_var(const tl_stmt *loop, tl_expr *x, const tl_var *v) {
  if (!x || x->kind != TL_EXPR_BINARY || x->u.bin.op != TL_OP_ADD) return NULL;
  tl_expr *a = x->u.bin.a, *b = x->u.bin.b;
  tl_expr *off = a->kind == TL_EXPR_VAR && a->u.var == v ? b : b->kind == TL_EXPR_VAR && b->u.var == v ? a : NULL;
  for (int j = 0; off && j < loop->u.loop.nvars; j++)
    if (!tl_expr_free_of(off, loop->u.loop.vars[j])) return NULL;
  return off;
}

bool tl_lo_split_access(const tl_stmt *loop, const tl_buffer *b, int n, tl_expr **idx, int *d, tl_expr **off) {
  if (!loop || n != loop->u.loop.nvars || n != b->ndim) return false;
  int split = -1;
  tl_expr *o = NULL;
  for (int k = 0; k < n; k++) {
    int64_t ext, dim, mn = 0;
    const tl_var *v = loop->u.loop.vars[k];
    if (!tl_expr_is_const_int(loop->u.loop.extents[k], &ext) || ext < 1) return false;
    if (!tl_expr_is_const_int(b->shape[k], &dim)) return false;
    if (loop->u.loop.mins && loop->u.loop.mins[k] && (!tl_expr_is_const_int(loop->u.loop.mins[k], &mn) || mn != 0))
      return false;
    if (idx[k] && idx[k]->kind == TL_EXPR_VAR && idx[k]->u.var == v && dim == ext) continue;
    tl_expr *x = offset_of_var(loop, idx[k], v);
    if (split >= 0 || !x || dim <= ext || dim % ext || !tl_expr_divisible(x, ext, NULL)) return false;
    split = k;
    o = x;
  }
  if (split < 0) return false;
  if (d) *d = split;
  if (off) *off = o;
  return true;
}

/* ---------------------------------------------------------- vector checks */
/* (lower_internal.h: tl_lo_access_vec_ok, tl_lo_body_vec_width) */
/* Can the access b[idx] (idx mentioning lane variable l) be issued as one
 * vector of w lanes at l = 0, w, 2w, ...?  Indices before the last must not
 * depend on l; the last is l + (a multiple of w) (or free of l for loads);
 * the row length must keep the row start aligned. */
bool tl_lo_access_vec_ok(const tl_buffer *b, int n, tl_expr *const *idx, const tl_var *l, int64_t w, bool is_store) {
  if (n < 1) return false;
  for (int k = 0; k + 1 < n; k++)
    if (!tl_expr_free_of(idx[k], l)) return false;
  int64_t c;
  if (!tl_expr_lane_coef(idx[n - 1], l, &c)) return false;
  if (c == 0) return !is_store;
  if (c != 1) return false;
  if (w * tl_dtype_bytes(b->dtype) > 16) return false;
  if (b->strides) return false;
  if (!tl_expr_divisible(idx[n - 1], w, l)) return false;
  if (n > 1) {
    int64_t row;
    if (!tl_expr_is_const_int(b->shape[n - 1], &row) || row % w != 0) return false;
  }
  return true;
}

tl_expr *tl_lo_bounds_cond(tl_module *m, tl_loc loc, const tl_ranges *r, const tl_buffer *b, int n, tl_expr *const *ix,
                           int64_t span, tl_expr *cond) {
  for (int k = 0; k < n && cond; k++) {
    tl_expr *x = ix[k];
    if (k == n - 1 && span > 1) x = tl_lo_add(m, loc, x, tl_lo_int(m, loc, span - 1));
    if (!x) return NULL;
    tl_range rg;
    if (!(tl_expr_range(r, ix[k], &rg) && rg.lo >= 0))
      cond = tl_ir_binary(m, loc, TL_OP_AND, cond, tl_ir_binary(m, loc, TL_OP_GE, ix[k], tl_lo_int(m, loc, 0)));
    int64_t dim;
    if (!(tl_expr_is_const_int(b->shape[k], &dim) && tl_expr_range(r, x, &rg) && rg.hi < dim))
      cond = tl_ir_binary(m, loc, TL_OP_AND, cond,
                          tl_ir_binary(m, loc, TL_OP_LT, x, tl_ir_cast(m, loc, x->dtype, b->shape[k])));
  }
  return cond;
}

typedef struct vec_lane {
  const tl_var *l;
  int64_t w;
} vec_lane;

/* Does node e keep an expression from running as a vector of w lanes over
 * lane l (a load that cannot, or a node that is already a vector)? */
static bool not_vec_node(const tl_expr *e, void *user) {
  const vec_lane *vl = user;
  switch (e->kind) {
  case TL_EXPR_LOAD: return !tl_lo_access_vec_ok(e->u.load.buffer, e->u.load.n, e->u.load.indices, vl->l, vl->w, false);
  case TL_EXPR_RAMP:
  case TL_EXPR_BROADCAST:
  case TL_EXPR_BUFFER:
  case TL_EXPR_STRING: return true;
  default: return false;
  }
}

static bool expr_vec_ok(const tl_expr *e, const tl_var *l, int64_t w) {
  vec_lane vl = {l, w};
  return e && !tl_expr_any(e, not_vec_node, &vl, TL_LOWER_MAX_DEPTH, true);
}

/* Largest w dividing v (power of 2) such that `body`, a single store, can run
 * as T.vectorized(w) over lane l. */
int64_t tl_lo_body_vec_width(const tl_stmt *body, const tl_var *l, int64_t v) {
  if (!body || body->kind != TL_STMT_STORE) return 1;
  for (int64_t w = v; w > 1; w /= 2) {
    if (v % w != 0) continue;
    if (!tl_lo_access_vec_ok(body->u.store.buffer, body->u.store.n, body->u.store.indices, l, w, true)) continue;
    bool ok = expr_vec_ok(body->u.store.value, l, w);
    for (int i = 0; ok && i < body->u.store.n; i++) ok = expr_vec_ok(body->u.store.indices[i], l, w);
    if (ok) return w;
  }
  return 1;
}

/* ------------------------------------------------------ buffer references */
typedef struct refs_visit {
  tl_visitor v;
  const tl_buffer *b;
  tl_lo_refs r;
} refs_visit;

static void refs_expr(tl_visitor *v, const tl_expr *e) {
  refs_visit *u = (refs_visit *)v;
  if (e->kind == TL_EXPR_LOAD && e->u.load.buffer == u->b) u->r.reads++;
  if (e->kind == TL_EXPR_BUFFER && e->u.buffer == u->b) u->r.reads++, u->r.writes++;
}

static void refs_stmt(tl_visitor *v, const tl_stmt *s) {
  refs_visit *u = (refs_visit *)v;
  if (s->kind == TL_STMT_STORE && s->u.store.buffer == u->b) u->r.writes++;
  if (s->kind != TL_STMT_TILE) return;
  const tl_tile_op_info *op = &tl_tile_ops[s->u.tile.op];
  for (int i = 0; i < s->u.tile.nargs; i++) {
    const tl_operand *o = &s->u.tile.args[i];
    if (o->kind != TL_OPND_REGION || o->region.buffer != u->b) continue;
    if (s->u.tile.op == TL_TILE_ANNOTATE_LAYOUT) u->r.writes++; /* the layout changes it */
    if (op->written < 0 || op->written == i) u->r.writes++;
    else u->r.reads++;
  }
}

tl_lo_refs tl_lo_count_refs(const tl_stmt *s, const tl_buffer *b) {
  refs_visit u = {.v = {.expr = refs_expr, .stmt = refs_stmt}, .b = b};
  tl_visit_stmt(&u.v, s);
  return u.r;
}

typedef struct {
  tl_visitor v;
  int op;
  bool found;
} call_visit;

static void call_expr(tl_visitor *v, const tl_expr *e) {
  call_visit *u = (call_visit *)v;
  if (e->kind == TL_EXPR_CALL && e->u.call.op == u->op) u->found = true;
}

bool tl_lo_has_call(const tl_stmt *s, int op) {
  call_visit u = {.v = {.expr = call_expr}, .op = op};
  tl_visit_stmt(&u.v, s);
  return u.found;
}

typedef struct while_visit {
  tl_visitor v;
  tl_stmt *whl, *loop;
} while_visit;

static void while_stmt(tl_visitor *v, const tl_stmt *s) {
  while_visit *w = (while_visit *)v;
  if (s->kind == TL_STMT_WHILE && !w->whl) w->whl = (tl_stmt *)s;
}
static void pipelined_stmt(tl_visitor *v, const tl_stmt *s) {
  while_visit *w = (while_visit *)v;
  if (!w->loop && s->kind == TL_STMT_FOR && s->u.loop.kind == TL_LOOP_PIPELINED) w->loop = (tl_stmt *)s;
}

tl_stmt *tl_lo_find_while(tl_stmt *s, tl_stmt **pipelined) {
  while_visit w = {.v = {.stmt = while_stmt}}, p = {.v = {.stmt = pipelined_stmt}};
  tl_visit_stmt(&w.v, s);
  if (pipelined && w.whl) tl_visit_stmt(&p.v, w.whl->u.whiles.body);
  if (pipelined) *pipelined = p.loop;
  return w.whl;
}

bool tl_lo_whole_region(const tl_region *r) {
  const tl_buffer *b = r->buffer;
  if (r->ndim == 0) return true;
  if (!b || r->ndim != b->ndim) return false;
  for (int k = 0; k < r->ndim; k++) {
    int64_t mn, ext, dim;
    if (!tl_expr_is_const_int(r->min[k], &mn) || mn != 0) return false;
    if (!tl_expr_is_const_int(r->extent[k], &ext) || !tl_expr_is_const_int(b->shape[k], &dim) || ext != dim)
      return false;
  }
  return true;
}

bool tl_lo_is_param(const tl_primfunc *f, const tl_buffer *b) {
  for (int i = 0; f && i < f->nparams; i++)
    if (f->params[i].kind == TL_PARAM_TENSOR && f->params[i].buffer == b) return true;
  return false;
}
