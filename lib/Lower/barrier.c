/* Pass "barriers" of lib/Lower: T.sync_threads() between a shared-memory
 * write and a later access of the same bytes by other threads (tile IR →
 * tile IR; runs after pipeline_loop.c, before layout inference).
 *
 * Requires: a verified tile-IR function.
 * Guarantees: along every path of the block's (uniform) control flow, between
 * two tile-level statements A before B that touch overlapping parts of a
 * shared buffer, at least one writing, there is a T.sync_threads() (PTX
 * bar.sync 0, PTX ISA §9.7.13.1: it orders the shared-memory accesses of all
 * threads of the block before it against those after it).  Loop-carried
 * pairs (A late in iteration k, B early in iteration k + 1) count too (WAR on
 * a buffer refilled by the next iteration).  Barriers the pipelining pass
 * placed (or the user wrote) are respected: they clear what is pending.
 *
 * Algorithm (in the style of TVM's ThreadSync, at tile granularity).  Tile ops
 * are block-collective, so any two tile-level statements may run the same
 * bytes on different threads; a statement's accesses are summarised as
 * regions per shared buffer (a load X[i, j] is the region [i:i+1, j:j+1]).
 * Walking a statement list with the set of accesses pending since the last
 * barrier, a statement that reads what is pending-written, or writes what is
 * pending-read or -written, gets a barrier before it, which clears the set.
 * Two regions are disjoint when, in some dim, both extents are constants and
 * the starts are `base + c1`, `base + c2` with the same base and
 * non-overlapping [c, c + extent), or, with extent 1, the consumer and the
 * producer stage of an enclosing pipelined loop: the loop's num_stages and
 * tl_lo_pipeline_stage, what the pipeline pass recorded, say which they are.
 * Loops are walked with the pending set at entry joined with the set at the
 * end of the body until it is stable (at most 4 rounds; otherwise a barrier
 * opens the body).  An `if` whose condition reads no per-thread value (the
 * thread index, a local buffer other than one every thread holds alike
 * (uniform.c: a T.alloc_var or T.alloc_local whose every write stores a
 * uniform value under uniform control, e.g. `count = Counts[bx]`), or a variable bound to either: hand-written
 * SIMT IR names `tx = T.get_thread_binding(0)`) is walked branch by branch; other ifs and T.Parallel loops are single
 * statements (a barrier never goes inside thread-dependent control flow).  A
 * thread-range scope (`if T.thread_range(lo, hi):`) is walked on its own:
 * a block barrier before it when it conflicts with what is pending, its
 * body from nothing pending (its barriers are its threads' own). */
#include <stdlib.h>
#include <string.h>

#include "IR/visit.h"
#include "Lower/lower_internal.h"

typedef struct access {
  const tl_buffer *buf;
  bool write;
  int ndim; /* 0: the whole buffer (unknown part) */
  tl_expr *const *min;
  tl_expr *const *ext;
} access;

typedef TL_VEC(access) access_set;

typedef struct br_state {
  tl_module *m;
  tl_diag *d;
  int errors;
  bool oom;
  TL_VEC(const tl_var *) thread_lets; /* LET variables bound to per-thread values */
  tl_uniformity *uniform;             /* the local buffers every thread holds alike (uniform.c) */
  /* The stage expressions of the pipelined serial loops being walked, two a
   * loop: consumer, producer (tl_lo_pipeline_stage) */
  TL_VEC(const tl_expr *) stages;
} br_state;

static bool is_shared(const tl_buffer *b) {
  return b && (b->scope == TL_SCOPE_SHARED_DYN || b->scope == TL_SCOPE_SHARED);
}

/* ---------------------------------------------------------- disjointness */
/* e = base + c (constant c peeled from additive terms). */
static const tl_expr *split_const(const tl_expr *e, int64_t *c) {
  *c = 0;
  for (int guard = 0; e && guard < 64; guard++) {
    int64_t k;
    if (e->kind == TL_EXPR_INT) {
      *c += e->u.ival;
      return NULL;
    }
    if (e->kind != TL_EXPR_BINARY) return e;
    if (e->u.bin.op == TL_OP_ADD && tl_expr_is_const_int(e->u.bin.b, &k)) {
      *c += k;
      e = e->u.bin.a;
      continue;
    }
    if (e->u.bin.op == TL_OP_ADD && tl_expr_is_const_int(e->u.bin.a, &k)) {
      *c += k;
      e = e->u.bin.b;
      continue;
    }
    if (e->u.bin.op == TL_OP_SUB && tl_expr_is_const_int(e->u.bin.b, &k)) {
      *c -= k;
      e = e->u.bin.a;
      continue;
    }
    return e;
  }
  return e;
}

static bool same_base(const tl_expr *a, const tl_expr *b) {
  if (!a || !b) return a == b;
  return tl_expr_equal(a, b);
}

/* Are m1 and m2 the two stages of an enclosing pipelined loop, one the
 * consumers' and the other the producers' (pipeline_loop.c's record)? */
static bool pipeline_stages(const br_state *st, const tl_expr *m1, const tl_expr *m2) {
  for (size_t i = 0; i + 1 < st->stages.len; i += 2) {
    const tl_expr *c = st->stages.data[i], *p = st->stages.data[i + 1];
    if ((tl_expr_equal(m1, c) && tl_expr_equal(m2, p)) || (tl_expr_equal(m1, p) && tl_expr_equal(m2, c))) return true;
  }
  return false;
}

static bool dim_disjoint(const br_state *st, const tl_expr *m1, const tl_expr *e1, const tl_expr *m2,
                         const tl_expr *e2) {
  int64_t x1, x2, c1, c2;
  if (!m1 || !m2 || !tl_expr_is_const_int(e1, &x1) || !tl_expr_is_const_int(e2, &x2)) return false;
  /* a pipeline's consumer and producer stages, extent 1 */
  if (x1 == 1 && x2 == 1 && pipeline_stages(st, m1, m2)) return true;
  const tl_expr *b1 = split_const(m1, &c1), *b2 = split_const(m2, &c2);
  if (!same_base(b1, b2)) return false;
  return c1 + x1 <= c2 || c2 + x2 <= c1;
}

static bool overlap(const br_state *st, const access *a, const access *b) {
  if (a->buf != b->buf) return false;
  if (a->ndim == 0 || b->ndim == 0 || a->ndim != b->ndim) return true;
  for (int k = 0; k < a->ndim; k++)
    if (dim_disjoint(st, a->min[k], a->ext[k], b->min[k], b->ext[k])) return false;
  return true;
}

static bool access_equal(const access *a, const access *b) {
  if (a->buf != b->buf || a->write != b->write || a->ndim != b->ndim) return false;
  for (int k = 0; k < a->ndim; k++)
    if (!tl_expr_equal(a->min[k], b->min[k]) || !tl_expr_equal(a->ext[k], b->ext[k])) return false;
  return true;
}

static bool set_has(const access_set *s, const access *a) {
  for (size_t i = 0; i < s->len; i++)
    if (access_equal(&s->data[i], a)) return true;
  return false;
}

static bool set_add(br_state *st, access_set *s, const access *a) {
  if (set_has(s, a)) return true;
  if (!tl_vec_push(s, *a)) {
    st->oom = true;
    return false;
  }
  return true;
}

static bool set_union(br_state *st, access_set *dst, const access_set *src) {
  for (size_t i = 0; i < src->len; i++)
    if (!set_add(st, dst, &src->data[i])) return false;
  return true;
}

static bool set_same(const access_set *a, const access_set *b) {
  if (a->len != b->len) return false;
  for (size_t i = 0; i < a->len; i++)
    if (!set_has(b, &a->data[i])) return false;
  return true;
}

/* Does a statement with accesses `acc` conflict with `pending`? */
static bool conflicts(const br_state *st, const access_set *pending, const access_set *acc) {
  for (size_t i = 0; i < acc->len; i++)
    for (size_t j = 0; j < pending->len; j++) {
      const access *a = &acc->data[i], *p = &pending->data[j];
      if ((a->write || p->write) && overlap(st, a, p)) return true;
    }
  return false;
}

/* -------------------------------------------------------- access summaries */
static void sum_load(br_state *st, const tl_buffer *b, int n, tl_expr *const *idx, bool write, access_set *out) {
  if (!is_shared(b)) return;
  tl_expr **ext = tl_arena_alloc(&st->m->arena, sizeof(tl_expr *) * (size_t)(n > 0 ? n : 1));
  if (!ext) {
    st->oom = true;
    return;
  }
  for (int k = 0; k < n; k++)
    if (!(ext[k] = tl_lo_int(st->m, b->loc, 1))) {
      st->oom = true;
      return;
    }
  access a = {b, write, n, idx, ext};
  set_add(st, out, &a);
}

/* The shared accesses of a statement or expression tree, gathered by a
 * tl_visitor (pre-order; every node, nesting limit TL_VISIT_MAX_DEPTH). */
typedef struct sum_visit {
  tl_visitor v;
  br_state *st;
  access_set *out;
} sum_visit;

static void sum_on_expr(tl_visitor *v, const tl_expr *e) {
  sum_visit *u = (sum_visit *)v;
  if (e->kind == TL_EXPR_LOAD) {
    sum_load(u->st, e->u.load.buffer, e->u.load.n, e->u.load.indices, false, u->out);
  } else if (e->kind == TL_EXPR_BUFFER && is_shared(e->u.buffer)) {
    /* passed to an intrinsic: may read and write anything */
    access a = {e->u.buffer, true, 0, NULL, NULL};
    set_add(u->st, u->out, &a);
  }
}

static void sum_on_stmt(tl_visitor *v, const tl_stmt *s) {
  sum_visit *u = (sum_visit *)v;
  if (s->kind == TL_STMT_STORE) {
    sum_load(u->st, s->u.store.buffer, s->u.store.n, s->u.store.indices, true, u->out);
    return;
  }
  if (s->kind != TL_STMT_TILE || s->u.tile.op == TL_TILE_ANNOTATE_LAYOUT) return;
  for (int i = 0; i < s->u.tile.nargs; i++) {
    const tl_operand *o = &s->u.tile.args[i];
    if (o->kind != TL_OPND_REGION || !is_shared(o->region.buffer)) continue;
    const tl_region *r = &o->region;
    access a = {r->buffer, tl_tile_ops[s->u.tile.op].written == i, r->min && r->extent ? r->ndim : 0, r->min,
                r->extent};
    set_add(u->st, u->out, &a);
    if (s->u.tile.op == TL_TILE_GEMM && i == 2) { /* C is read too */
      a.write = false;
      set_add(u->st, u->out, &a);
    }
  }
}

/* All shared accesses of s and everything nested in it. */
static void sum_stmt(br_state *st, const tl_stmt *s, access_set *out) {
  sum_visit u = {.v = {.expr = sum_on_expr, .stmt = sum_on_stmt}, .st = st, .out = out};
  tl_visit_stmt(&u.v, s);
}

/* All shared accesses of e. */
static void sum_expr(br_state *st, const tl_expr *e, access_set *out) {
  sum_visit u = {.v = {.expr = sum_on_expr}, .st = st, .out = out};
  tl_visit_expr(&u.v, e);
}

/* Is e a node whose value differs between threads: a load of a local
 * buffer, the thread index, a thread variable, or a variable bound (LET) to
 * a per-thread value (user: the br_state with its thread_lets)?  A fragment
 * element read here, at tile level (outside T.Parallel), is the same on every
 * thread: layout inference makes a fragment read so REPLICATED (each thread
 * holds all of it) or refuses it as a layout conflict; its index expression
 * is looked at as any other. */
static bool per_thread_node(const tl_expr *e, void *user) {
  const br_state *st = user;
  switch (e->kind) {
  case TL_EXPR_LOAD: {
    tl_scope sc = e->u.load.buffer ? e->u.load.buffer->scope : TL_SCOPE_LOCAL;
    if (tl_uniformity_local(st->uniform, e->u.load.buffer)) return false;
    return sc != TL_SCOPE_GLOBAL && sc != TL_SCOPE_FRAGMENT && !is_shared(e->u.load.buffer);
  }
  case TL_EXPR_CALL: return e->u.call.op == TL_INTRIN_GET_THREAD_BINDING;
  case TL_EXPR_VAR:
    if (e->u.var && e->u.var->kind == TL_VAR_LET)
      for (size_t i = 0; i < st->thread_lets.len; i++)
        if (st->thread_lets.data[i] == e->u.var) return true;
    return e->u.var && e->u.var->kind == TL_VAR_THREAD;
  default: return false;
  }
}

/* Does e read a per-thread value (the thread index, a local or fragment
 * buffer, a variable bound to one)?  Too deep to tell counts as yes. */
static bool per_thread(const br_state *st, const tl_expr *e) {
  return !e || tl_expr_any(e, per_thread_node, (void *)st, TL_LOWER_MAX_DEPTH, true);
}

/* ---------------------------------------------------------------- walk */
static tl_stmt *sync_stmt(br_state *st, tl_loc loc) {
  tl_stmt *s = tl_lo_eval(st->m, loc, tl_ir_call(st->m, loc, TL_INTRIN_SYNC_THREADS, 0, NULL));
  if (!s) st->oom = true;
  return s;
}

static bool is_sync(const tl_stmt *s) {
  return s && s->kind == TL_STMT_EVAL && s->u.eval.value && s->u.eval.value->kind == TL_EXPR_CALL &&
         s->u.eval.value->u.call.op == TL_INTRIN_SYNC_THREADS;
}

static tl_stmt *walk(br_state *st, tl_stmt *s, access_set *pending, int depth);

/* Treats s as one statement: a barrier before it when it conflicts. */
static tl_stmt *leaf(br_state *st, tl_stmt *s, access_set *pending) {
  access_set acc = {0};
  sum_stmt(st, s, &acc);
  tl_stmt *r = s;
  if (conflicts(st, pending, &acc)) {
    tl_stmt *two[2] = {sync_stmt(st, s->loc), s};
    pending->len = 0;
    r = two[0] ? tl_ir_seq(st->m, s->loc, 2, two) : NULL;
    if (!r) st->oom = true;
  }
  set_union(st, pending, &acc);
  tl_vec_free(&acc);
  return r;
}

static tl_stmt *walk_seq(br_state *st, tl_stmt *s, access_set *pending, int depth) {
  TL_VEC(tl_stmt *) out = {0};
  for (int i = 0; i < s->u.seq.n && !st->oom; i++) {
    tl_stmt *x = s->u.seq.stmts[i];
    tl_stmt *y = walk(st, x, pending, depth + 1);
    if (!y) break;
    /* flatten a barrier-prefixed leaf into this list */
    if (y != x && y->kind == TL_STMT_SEQ && y->u.seq.n == 2 && is_sync(y->u.seq.stmts[0]) && x->kind != TL_STMT_SEQ) {
      if (!tl_vec_push(&out, y->u.seq.stmts[0]) || !tl_vec_push(&out, y->u.seq.stmts[1])) st->oom = true;
    } else if (!tl_vec_push(&out, y)) {
      st->oom = true;
    }
  }
  tl_stmt *r = NULL;
  if (!st->oom && st->errors == 0) {
    r = tl_ir_stmt(st->m, s->loc, TL_STMT_SEQ);
    if (r) {
      r->u.seq.n = (int)out.len;
      r->u.seq.stmts = tl_arena_alloc(&st->m->arena, sizeof(tl_stmt *) * (out.len ? out.len : 1));
      if (!r->u.seq.stmts) r = NULL;
      else if (out.len) memcpy(r->u.seq.stmts, out.data, sizeof(tl_stmt *) * out.len);
    }
    if (!r) st->oom = true;
  }
  tl_vec_free(&out);
  return r;
}

/* The body of a loop (its statement s, body b) walked until the pending set
 * at its start is stable; runs: the body runs at least once (else what was
 * pending at entry stays pending after the loop).  NULL on failure. */
static tl_stmt *walk_repeated(br_state *st, const tl_stmt *s, tl_stmt *b, bool runs, access_set *pending, int depth) {
  access_set entry = {0}, in = {0};
  tl_stmt *body = NULL;
  if (!set_union(st, &entry, pending)) goto out;
  if (!set_union(st, &in, pending)) goto out;
  bool stable = false;
  for (int round = 0; round < 4 && !stable && !st->oom; round++) {
    access_set cur = {0};
    if (!set_union(st, &cur, &in)) {
      tl_vec_free(&cur);
      break;
    }
    body = walk(st, b, &cur, depth + 1);
    if (!body) {
      tl_vec_free(&cur);
      break;
    }
    /* next round: what may be pending when the body starts again */
    access_set next = {0};
    set_union(st, &next, &entry);
    set_union(st, &next, &cur);
    stable = set_same(&next, &in);
    tl_vec_free(&in);
    in = next;
    if (stable) {
      pending->len = 0;
      set_union(st, pending, &cur);
      if (!runs) set_union(st, pending, &entry);
    }
    tl_vec_free(&cur);
  }
  if (!stable && !st->oom && body) { /* give up: a barrier opens the body */
    access_set cur = {0};
    body = walk(st, b, &cur, depth + 1);
    tl_stmt *two[2] = {sync_stmt(st, s->loc), body};
    body = body && two[0] ? tl_ir_seq(st->m, s->loc, 2, two) : NULL;
    pending->len = 0;
    set_union(st, pending, &cur);
    set_union(st, pending, &entry);
    tl_vec_free(&cur);
  }
out:
  tl_vec_free(&entry);
  tl_vec_free(&in);
  if (!body && !st->errors) st->oom = true;
  return body;
}

static tl_stmt *walk_loop(br_state *st, tl_stmt *s, access_set *pending, int depth) {
  tl_stmt *body = NULL;
  size_t nstages = st->stages.len;
  if (s->u.loop.kind == TL_LOOP_SERIAL && s->u.loop.num_stages >= 2) { /* a pipeline's stages */
    tl_expr *c = tl_lo_pipeline_stage(st->m, s, TL_PIPE_CONSUMER),
            *p = tl_lo_pipeline_stage(st->m, s, TL_PIPE_PRODUCER);
    if (!c || !p || !tl_vec_push(&st->stages, c) || !tl_vec_push(&st->stages, p)) {
      st->oom = true;
      st->stages.len = nstages;
      return NULL;
    }
  }
  int64_t ext;
  bool runs = s->u.loop.extents && tl_expr_is_const_int(s->u.loop.extents[0], &ext) && ext > 0;
  body = walk_repeated(st, s, s->u.loop.body, runs, pending, depth);
  st->stages.len = nstages;
  if (!body) return NULL;
  tl_stmt *r = tl_ir_stmt(st->m, s->loc, TL_STMT_FOR);
  if (!r) {
    st->oom = true;
    return NULL;
  }
  *r = *s;
  r->u.loop.body = body;
  return r;
}

/* A while loop (its condition uniform: lib/Lower/uniform.c) is a loop that
 * may run no iteration.  A condition that reads shared memory is read before
 * every iteration: a barrier before the loop and at the end of its body then
 * orders it after every write (rare; simple beats tight there). */
static tl_stmt *walk_while(br_state *st, tl_stmt *s, access_set *pending, int depth) {
  access_set cond = {0};
  sum_expr(st, s->u.whiles.cond, &cond);
  bool reads = cond.len > 0;
  if (reads) pending->len = 0;
  set_union(st, pending, &cond);
  tl_stmt *body = walk_repeated(st, s, s->u.whiles.body, false, pending, depth);
  if (body && reads) {
    tl_stmt *two[2] = {body, sync_stmt(st, s->loc)};
    body = two[1] ? tl_ir_seq(st->m, s->loc, 2, two) : NULL;
    pending->len = 0;
    set_union(st, pending, &cond);
  }
  tl_vec_free(&cond);
  tl_stmt *r = body ? tl_ir_while(st->m, s->loc, s->u.whiles.cond, body) : NULL;
  if (r && reads) {
    tl_stmt *two[2] = {sync_stmt(st, s->loc), r};
    r = two[0] ? tl_ir_seq(st->m, s->loc, 2, two) : NULL;
  }
  if (!r && !st->errors) st->oom = true;
  return r;
}

/* A thread-range scope (T.thread_range, ws_scope.c): the barriers inside
 * become a named barrier of its threads only, so what is pending from
 * outside is ordered by a block barrier before the scope, and the walk
 * inside starts with nothing pending; after it the scope's accesses are
 * pending. */
static tl_stmt *walk_range_scope(br_state *st, tl_stmt *s, access_set *pending, int depth) {
  access_set acc = {0}, in = {0};
  sum_stmt(st, s, &acc);
  bool before = conflicts(st, pending, &acc);
  if (before) pending->len = 0;
  set_union(st, pending, &acc);
  tl_vec_free(&acc);
  tl_stmt *body = walk(st, s->u.ifs.then_s, &in, depth + 1);
  tl_vec_free(&in);
  tl_stmt *r = body ? tl_ir_if(st->m, s->loc, s->u.ifs.cond, body, NULL) : NULL;
  tl_stmt *two[2] = {before ? sync_stmt(st, s->loc) : NULL, r};
  if (r && before) r = two[0] ? tl_ir_seq(st->m, s->loc, 2, two) : NULL;
  if (!r && !st->errors) st->oom = true;
  return r;
}

static tl_stmt *walk(br_state *st, tl_stmt *s, access_set *pending, int depth) {
  if (!s) return NULL;
  if (!tl_lo_nesting_ok(st->d, s, depth, &st->errors, !st->errors)) return NULL;
  switch (s->kind) {
  case TL_STMT_SEQ: return walk_seq(st, s, pending, depth);
  case TL_STMT_KERNEL: {
    tl_stmt *b = walk(st, s->u.kernel.body, pending, depth + 1);
    if (!b) return NULL;
    tl_stmt *r = tl_ir_stmt(st->m, s->loc, TL_STMT_KERNEL);
    if (!r) {
      st->oom = true;
      return NULL;
    }
    *r = *s;
    r->u.kernel.body = b;
    return r;
  }
  case TL_STMT_FOR:
    if (s->u.loop.kind == TL_LOOP_PARALLEL) return leaf(st, s, pending);
    return walk_loop(st, s, pending, depth);
  case TL_STMT_WHILE: return walk_while(st, s, pending, depth);
  case TL_STMT_IF: {
    if (tl_lo_range_scope_threads(s) > 0) return walk_range_scope(st, s, pending, depth);
    if (per_thread(st, s->u.ifs.cond)) return leaf(st, s, pending);
    access_set cond = {0}, pe = {0};
    sum_expr(st, s->u.ifs.cond, &cond);
    tl_stmt *r = tl_ir_stmt(st->m, s->loc, TL_STMT_IF);
    if (!r) {
      st->oom = true;
      tl_vec_free(&cond);
      return NULL;
    }
    *r = *s;
    if (conflicts(st, pending, &cond)) { /* the condition itself reads pending data */
      tl_stmt *sy = sync_stmt(st, s->loc);
      pending->len = 0;
      set_union(st, pending, &cond);
      tl_vec_free(&cond);
      if (!sy) return NULL;
      tl_stmt *inner = walk(st, s, pending, depth + 1);
      tl_stmt *two[2] = {sy, inner};
      return inner ? tl_ir_seq(st->m, s->loc, 2, two) : NULL;
    }
    set_union(st, pending, &cond);
    tl_vec_free(&cond);
    set_union(st, &pe, pending);
    r->u.ifs.then_s = walk(st, s->u.ifs.then_s, pending, depth + 1);
    if (s->u.ifs.else_s) r->u.ifs.else_s = walk(st, s->u.ifs.else_s, &pe, depth + 1);
    set_union(st, pending, &pe);
    tl_vec_free(&pe);
    if (!r->u.ifs.then_s || (s->u.ifs.else_s && !r->u.ifs.else_s)) return NULL;
    return r;
  }
  case TL_STMT_EVAL:
    if (is_sync(s)) {
      pending->len = 0;
      return s;
    }
    return leaf(st, s, pending);
  case TL_STMT_ALLOC: return s;
  case TL_STMT_LET:
    if (per_thread(st, s->u.let.value) && !tl_vec_push(&st->thread_lets, s->u.let.var)) st->oom = true;
    return leaf(st, s, pending);
  default: return leaf(st, s, pending);
  }
}

bool tl_lower_barriers(tl_module *m, tl_primfunc *f, const tl_target *target, tl_diag *d) {
  (void)target; /* nothing here depends on the target yet */
  br_state st = {.m = m, .d = d};
  st.uniform = tl_uniformity_new(f->body); /* NULL (out of memory): no local buffer counts as uniform */
  access_set pending = {0};
  tl_stmt *b = walk(&st, f->body, &pending, 0);
  tl_vec_free(&pending);
  tl_vec_free(&st.thread_lets);
  tl_uniformity_free(st.uniform);
  tl_vec_free(&st.stages);
  if (st.oom) {
    tl_error(d, f->loc, "out of memory while placing barriers");
    return false;
  }
  if (!b || st.errors) {
    if (st.errors == 0) tl_error(d, f->loc, "internal error: barrier placement failed");
    return false;
  }
  f->body = b;
  return true;
}
