/* The uniformity check of `while` loops (called by check-supported, tile
 * IR, unchanged): the condition of a while loop whose body needs the whole
 * block must have the same value in every thread of the block, or threads
 * would leave the loop at different iterations and wait forever at a
 * barrier the others no longer reach (bar.sync in divergent code, PTX ISA
 * §9.7.13.1).
 *
 * Requires: a verified tile-IR function.
 * Guarantees (on success): every TL_STMT_WHILE whose body holds a tile op,
 * a T.Parallel or T.Pipelined loop, a convergent intrinsic (a barrier, a
 * shuffle, ...) or an access of a shared buffer has a condition built from
 * uniform values only:
 *   - constants, parameters, dynamic symbols, block indices;
 *   - loads of global or shared buffers at uniform indices (every thread
 *     reads the same address; the body's barriers order the writes);
 *   - loads of T.alloc_local / T.alloc_var buffers at uniform indices when
 *     every write of the buffer stores a uniform value at uniform indices
 *     outside T.Parallel loops and outside branches and loops of
 *     non-uniform conditions or bounds (what every thread of a tile
 *     program executes alike, e.g. stream-K's `start_iter[0] = end_iter[0]`);
 *   - LET variables bound to uniform values, loop variables of serial loops
 *     with uniform bounds (under uniform control);
 *   - calls of value intrinsics on uniform arguments.
 * Not uniform: the thread index (T.get_thread_binding, lane and warp
 * indices, thread-bound loop variables), T.Parallel loop variables, fragment
 * elements (each thread holds its own part of a fragment), the SIMT IR's
 * per-thread intrinsics (shuffles, ...), and what any of these reach
 * through stores and LETs.  Otherwise one located error per loop at its
 * condition, naming the first non-uniform value it reads, with a note where
 * that value became non-uniform.  A while loop whose body does none of the
 * above (per-thread scalar work) may have any condition.
 *
 * Algorithm: the set of non-uniform variables and local buffers grows to a
 * fixed point over whole-kernel walks (a store or LET is non-uniform when
 * its value, an index or its control is; each round only adds), then each
 * while loop's condition is checked against it.  The same fixed point
 * tells other passes which local buffers every thread holds alike
 * (tl_uniformity_new: the barriers pass, for branches on them) and which
 * branch conditions every thread evaluates alike (tl_uniformity_expr: the
 * shared-memory reuse planner, which may place a barrier inside such a
 * branch).  The rules read only what tile IR and SIMT IR share (the thread
 * index is a thread variable or T.get_thread_binding there, per-thread
 * registers local buffers written from it), so either may be given. */
#include <stdio.h>
#include <stdlib.h>

#include "IR/visit.h"
#include "Lower/lower_internal.h"

typedef struct un_state {
  tl_map bad; /* tl_var * or tl_buffer * -> the statement that made it non-uniform */
  bool changed, oom;
  tl_diag *d;
  int errors;
} un_state;

static bool is_local(const tl_buffer *b) { return b && (b->scope == TL_SCOPE_LOCAL || b->scope == TL_SCOPE_LOCAL_VAR); }
static bool is_shared_buf(const tl_buffer *b) {
  return b && (b->scope == TL_SCOPE_SHARED || b->scope == TL_SCOPE_SHARED_DYN);
}

/* Is node e itself (not its operands) a per-thread value? */
static bool varies_node(const tl_expr *e, void *user) {
  const un_state *st = user;
  switch (e->kind) {
  case TL_EXPR_VAR:
    return e->u.var && (e->u.var->kind == TL_VAR_THREAD || tl_map_get(&st->bad, e->u.var, NULL) != NULL);
  case TL_EXPR_LOAD: {
    const tl_buffer *b = e->u.load.buffer;
    return b && (b->scope == TL_SCOPE_FRAGMENT || tl_map_get(&st->bad, b, NULL) != NULL);
  }
  case TL_EXPR_CALL: {
    int op = e->u.call.op;
    if (op == TL_INTRIN_GET_THREAD_BINDING || op == TL_INTRIN_GET_LANE_IDX || op == TL_INTRIN_GET_WARP_IDX) return true;
    return op >= 0 && op < TL_INTRIN_COUNT && (tl_intrinsics[op].effects & TL_EFF_SIMT_LEVEL);
  }
  default: return false;
  }
}

static bool varies(const un_state *st, const tl_expr *e) {
  return e && tl_expr_any(e, varies_node, (void *)st, TL_LOWER_MAX_DEPTH, true);
}

static void mark(un_state *st, const void *key, const tl_stmt *why) {
  if (!key || tl_map_get(&st->bad, key, NULL)) return;
  if (!tl_map_put(&st->bad, key, (void *)why)) st->oom = true;
  st->changed = true;
}

static bool any_varies(const un_state *st, int n, tl_expr *const *es) {
  for (int i = 0; es && i < n; i++)
    if (varies(st, es[i])) return true;
  return false;
}

/* One round of the fixed point: div says the control reaching s may differ
 * between threads. */
static void grow(un_state *st, const tl_stmt *s, bool div, int depth) {
  if (!s || depth > TL_LOWER_MAX_DEPTH || st->oom) return;
  switch (s->kind) {
  case TL_STMT_SEQ:
    for (int i = 0; i < s->u.seq.n; i++) grow(st, s->u.seq.stmts[i], div, depth + 1);
    return;
  case TL_STMT_KERNEL: grow(st, s->u.kernel.body, div, depth + 1); return;
  case TL_STMT_FOR: {
    const int nv = s->u.loop.nvars;
    bool d = div || s->u.loop.kind == TL_LOOP_PARALLEL || s->u.loop.kind == TL_LOOP_THREAD ||
             any_varies(st, nv, s->u.loop.extents) || any_varies(st, nv, s->u.loop.mins) || varies(st, s->u.loop.step);
    for (int i = 0; d && i < nv; i++) mark(st, s->u.loop.vars[i], s);
    grow(st, s->u.loop.body, d, depth + 1);
    return;
  }
  case TL_STMT_IF: {
    bool d = div || varies(st, s->u.ifs.cond);
    grow(st, s->u.ifs.then_s, d, depth + 1);
    grow(st, s->u.ifs.else_s, d, depth + 1);
    return;
  }
  case TL_STMT_WHILE: grow(st, s->u.whiles.body, div || varies(st, s->u.whiles.cond), depth + 1); return;
  case TL_STMT_LET:
    if (varies(st, s->u.let.value)) mark(st, s->u.let.var, s);
    return;
  case TL_STMT_STORE:
    if (is_local(s->u.store.buffer) &&
        (div || varies(st, s->u.store.value) || any_varies(st, s->u.store.n, s->u.store.indices)))
      mark(st, s->u.store.buffer, s);
    return;
  case TL_STMT_TILE: { /* a local buffer a tile op writes: per-thread parts (conservative) */
    int w = s->u.tile.op >= 0 && s->u.tile.op < TL_TILE_NUM_OPS ? tl_tile_ops[s->u.tile.op].written : -1;
    const tl_operand *o = w >= 0 && w < s->u.tile.nargs ? &s->u.tile.args[w] : NULL;
    if (o && o->kind == TL_OPND_REGION && is_local(o->region.buffer)) mark(st, o->region.buffer, s);
    return;
  }
  case TL_STMT_EVAL: { /* a local buffer an intrinsic is handed may be written per thread */
    const tl_expr *c = s->u.eval.value;
    for (int i = 0; c && c->kind == TL_EXPR_CALL && i < c->u.call.n; i++) {
      const tl_expr *a = c->u.call.args[i];
      if (a && a->kind == TL_EXPR_BUFFER && is_local(a->u.buffer)) mark(st, a->u.buffer, s);
    }
    return;
  }
  default: return;
  }
}

/* ------------------------------------------------- bodies that need the block */
typedef struct block_find {
  tl_visitor v; /* first */
  bool found;
} block_find;
typedef struct shared_find {
  tl_buffer_visitor bv; /* first (tl_visit_buffers sets bv.v) */
  bool found;
} shared_find;

static void bf_buffer(tl_buffer_visitor *bv, const tl_buffer *b) {
  if (is_shared_buf(b)) ((shared_find *)bv)->found = true;
}
static void bf_stmt(tl_visitor *v, const tl_stmt *s) {
  block_find *f = (block_find *)v;
  if (s->kind == TL_STMT_TILE) f->found = true;
  if (s->kind == TL_STMT_FOR && (s->u.loop.kind == TL_LOOP_PARALLEL || s->u.loop.kind == TL_LOOP_PIPELINED))
    f->found = true;
}
static void bf_expr(tl_visitor *v, const tl_expr *e) {
  if (e->kind == TL_EXPR_CALL && e->u.call.op >= 0 && e->u.call.op < TL_INTRIN_COUNT &&
      (tl_intrinsics[e->u.call.op].effects & TL_EFF_CONVERGENT))
    ((block_find *)v)->found = true;
}

/* Does body hold work every thread of the block must reach together? */
static bool needs_block(const tl_stmt *body) {
  block_find f = {.v = {.stmt = bf_stmt, .expr = bf_expr}};
  tl_visit_stmt(&f.v, body);
  shared_find sh = {.bv = {.buffer = bf_buffer}};
  bool complete = tl_visit_buffers(&sh.bv, body);
  return f.found || sh.found || f.v.too_deep || !complete;
}

/* ------------------------------------------------------------- the check */
typedef struct first_bad {
  const un_state *st;
  const tl_expr *at;
  bool direct; /* only the sources themselves: the thread index, fragment elements, per-thread intrinsics */
} first_bad;

static bool fb_node(const tl_expr *e, void *user) {
  first_bad *f = user;
  static const un_state none; /* an empty set: what varies without any store or LET */
  if (!varies_node(e, (void *)(f->direct ? &none : f->st))) return false;
  f->at = e;
  return true;
}

/* What e (a non-uniform node) is, for the message. */
static const char *describe(const un_state *st, const tl_expr *e, const tl_stmt **why) {
  *why = NULL;
  if (e->kind == TL_EXPR_CALL && (tl_intrinsics[e->u.call.op].effects & TL_EFF_SIMT_LEVEL))
    return "a per-thread intrinsic";
  if (e->kind == TL_EXPR_CALL) return "the thread index";
  if (e->kind == TL_EXPR_VAR && e->u.var->kind == TL_VAR_THREAD) return "the thread index";
  const void *key = e->kind == TL_EXPR_VAR ? (const void *)e->u.var : (const void *)e->u.load.buffer;
  if (e->kind == TL_EXPR_LOAD && e->u.load.buffer->scope == TL_SCOPE_FRAGMENT)
    return "a fragment element (each thread holds its own part of a fragment)";
  *why = tl_map_get(&st->bad, key, NULL);
  if (e->kind == TL_EXPR_VAR && *why && (*why)->kind == TL_STMT_FOR)
    return "the variable of a loop that threads run apart";
  if (e->kind == TL_EXPR_VAR) return "a value computed from per-thread data";
  return "a local buffer some thread may write with its own value";
}

static void report(un_state *st, const tl_stmt *w) {
  first_bad f = {.st = st, .direct = true}; /* a source first, then what a source reached */
  if (!tl_expr_any(w->u.whiles.cond, fb_node, &f, TL_LOWER_MAX_DEPTH, false)) {
    f.direct = false;
    tl_expr_any(w->u.whiles.cond, fb_node, &f, TL_LOWER_MAX_DEPTH, true);
  }
  const tl_stmt *why = NULL;
  const char *what = f.at ? describe(st, f.at, &why) : "a value too deep to analyse";
  char call[96];
  const char *name = !f.at                        ? "?"
                     : f.at->kind == TL_EXPR_VAR  ? f.at->u.var->name
                     : f.at->kind == TL_EXPR_LOAD ? f.at->u.load.buffer->name
                                                  : "?";
  if (f.at && f.at->kind == TL_EXPR_CALL) {
    snprintf(call, sizeof call, "T.%s()", tl_intrinsic_name(f.at->u.call.op));
    name = call;
  }
  tl_loc at = f.at && f.at->loc.line ? f.at->loc : w->u.whiles.cond->loc.line ? w->u.whiles.cond->loc : w->loc;
  tl_error(st->d, at,
           "the condition of this 'while' loop may differ between the threads of the block: it reads '%s', %s; "
           "its body holds tile operations or barriers that every thread must reach (build the condition from "
           "block indices, parameters and T.alloc_local / T.alloc_var values assigned alike in every thread)",
           name, what);
  if (why) tl_note(st->d, why->loc, "'%s' takes a per-thread value here", name);
  st->errors++;
}

static void check(un_state *st, const tl_stmt *s, int depth) {
  if (!s || depth > TL_LOWER_MAX_DEPTH) return;
  switch (s->kind) {
  case TL_STMT_SEQ:
    for (int i = 0; i < s->u.seq.n; i++) check(st, s->u.seq.stmts[i], depth + 1);
    return;
  case TL_STMT_KERNEL: check(st, s->u.kernel.body, depth + 1); return;
  case TL_STMT_FOR: check(st, s->u.loop.body, depth + 1); return;
  case TL_STMT_IF:
    check(st, s->u.ifs.then_s, depth + 1);
    check(st, s->u.ifs.else_s, depth + 1);
    return;
  case TL_STMT_WHILE:
    if (varies(st, s->u.whiles.cond) && needs_block(s->u.whiles.body)) report(st, s);
    check(st, s->u.whiles.body, depth + 1);
    return;
  default: return;
  }
}

typedef struct has_while {
  tl_visitor v;
  bool found;
} has_while;
static void hw_stmt(tl_visitor *v, const tl_stmt *s) {
  if (s->kind == TL_STMT_WHILE) ((has_while *)v)->found = true;
}

static void fixed_point(un_state *st, const tl_stmt *body) {
  do { /* each round only adds to a finite set: it ends */
    st->changed = false;
    grow(st, body, false, 0);
  } while (st->changed && !st->oom);
}

bool tl_lower_check_while_uniform(const tl_primfunc *f, tl_diag *d) {
  has_while h = {.v = {.stmt = hw_stmt}};
  tl_visit_stmt(&h.v, f->body);
  if (!h.found) return true;
  un_state st = {.d = d};
  tl_map_init(&st.bad);
  fixed_point(&st, f->body);
  if (st.oom) tl_error(d, f->loc, "out of memory in the uniformity check of 'while' loops");
  else check(&st, f->body, 0);
  tl_map_free(&st.bad);
  return !st.oom && st.errors == 0;
}

/* ------------------------------------------------------ for other passes */
struct tl_uniformity {
  un_state st;
};

tl_uniformity *tl_uniformity_new(const tl_stmt *body) {
  tl_uniformity *u = calloc(1, sizeof *u);
  if (!u) return NULL;
  tl_map_init(&u->st.bad);
  fixed_point(&u->st, body);
  if (u->st.oom) {
    tl_uniformity_free(u);
    return NULL;
  }
  return u;
}

bool tl_uniformity_local(const tl_uniformity *u, const tl_buffer *b) {
  return u && is_local(b) && !tl_map_get((tl_map *)&u->st.bad, b, NULL);
}

bool tl_uniformity_expr(const tl_uniformity *u, const tl_expr *e) { return u && e && !varies(&u->st, e); }

void tl_uniformity_free(tl_uniformity *u) {
  if (!u) return;
  tl_map_free(&u->st.bad);
  free(u);
}

/* ------------------------------------------- T.Parallel in per-thread code */
/* A T.Parallel loop of a per-thread kernel (one whose body reads the thread
 * index) means what it means in a tile program, as in TileLang: the block
 * runs it together, its iterations spread over the threads (lower-tile-ops).
 * That meaning is one only when every thread reaches the loop alike and no
 * iteration reads a value that depends on which thread runs it; otherwise
 * the loop is refused (a thread-dependent T.Parallel has two readings).
 * Fragments are refused in such a loop: per-thread code may write their
 * elements by thread, which layout inference does not see (F[tx] = ...
 * then F[(i + 1) % n] in the loop read what no thread of it wrote). */
typedef struct par_check {
  tl_visitor v; /* first */
  const un_state *st;
  tl_map inner; /* tl_var * bound inside the loop (its own, nested loops', LETs) */
  const tl_expr *bad_e;
  const tl_stmt *bad_s;
  bool collect, oom;
} par_check;

static void pc_stmt(tl_visitor *v, const tl_stmt *s) {
  par_check *p = (par_check *)v;
  if (p->collect) {
    for (int i = 0; s->kind == TL_STMT_FOR && i < s->u.loop.nvars; i++)
      if (!tl_map_put(&p->inner, s->u.loop.vars[i], (void *)s)) p->oom = true;
    if (s->kind == TL_STMT_LET && !tl_map_put(&p->inner, s->u.let.var, (void *)s)) p->oom = true;
    return;
  }
  if (!p->bad_s && s->kind == TL_STMT_STORE &&
      (is_local(s->u.store.buffer) || s->u.store.buffer->scope == TL_SCOPE_FRAGMENT))
    p->bad_s = s;
}

static void pc_expr(tl_visitor *v, const tl_expr *e) {
  par_check *p = (par_check *)v;
  if (p->collect || p->bad_e) return;
  bool bad = false;
  if (e->kind == TL_EXPR_VAR && e->u.var)
    bad = e->u.var->kind == TL_VAR_THREAD ||
          (tl_map_get(&p->st->bad, e->u.var, NULL) && !tl_map_get(&p->inner, e->u.var, NULL));
  else if (e->kind == TL_EXPR_LOAD) /* a local buffer must be uniform; a fragment is not taken here yet */
    bad = e->u.load.buffer->scope == TL_SCOPE_FRAGMENT ||
          (is_local(e->u.load.buffer) && tl_map_get(&p->st->bad, e->u.load.buffer, NULL));
  else if (e->kind == TL_EXPR_CALL) bad = varies_node(e, (void *)p->st);
  if (bad) p->bad_e = e;
}

static void par_report(un_state *st, const tl_stmt *loop, const par_check *p, tl_loc tid_at) {
  if (p->bad_s) {
    const tl_buffer *b = p->bad_s->u.store.buffer;
    tl_error(st->d, p->bad_s->loc,
             "T.Parallel in per-thread code writes the %s buffer '%s': the loop's iterations are spread over the "
             "threads of the block, and each thread holds its own part of '%s' (not supported yet in per-thread "
             "code); write a T.serial loop (each thread runs it whole) or go through a shared buffer",
             tl_scope_name(b->scope), b->name, b->name);
  } else {
    const tl_stmt *why = NULL;
    const char *what = describe(st, p->bad_e, &why);
    const char *name = p->bad_e->kind == TL_EXPR_VAR    ? p->bad_e->u.var->name
                       : p->bad_e->kind == TL_EXPR_LOAD ? p->bad_e->u.load.buffer->name
                                                        : tl_intrinsic_name(p->bad_e->u.call.op);
    tl_error(st->d, p->bad_e->loc.line ? p->bad_e->loc : loop->loc,
             "T.Parallel in per-thread code reads '%s', %s: the loop's iterations are spread over the threads of "
             "the block (as in a tile program), so an iteration must not depend on the thread that runs it; "
             "write T.serial (or T.vectorized) for a loop of each thread",
             name, what);
    if (why) tl_note(st->d, why->loc, "'%s' takes a per-thread value here", name);
  }
  tl_note(st->d, tid_at, "the kernel body uses the thread index here");
  st->errors++;
}

static void par_one(un_state *st, const tl_stmt *loop, tl_loc tid_at) {
  par_check p = {.v = {.stmt = pc_stmt, .expr = pc_expr}, .st = st, .collect = true};
  tl_map_init(&p.inner);
  tl_visit_stmt(&p.v, loop);
  p.collect = false;
  if (!p.oom) tl_visit_stmt(&p.v, loop->u.loop.body);
  if (p.oom) st->oom = true;
  else if (p.bad_s || p.bad_e) par_report(st, loop, &p, tid_at);
  tl_map_free(&p.inner);
}

/* Every T.Parallel of s (not nested in another): div says the control
 * reaching s may differ between threads. */
static void par_walk(un_state *st, const tl_stmt *s, bool div, tl_loc tid_at, int depth) {
  if (!s || depth > TL_LOWER_MAX_DEPTH || st->oom) return;
  switch (s->kind) {
  case TL_STMT_SEQ:
    for (int i = 0; i < s->u.seq.n; i++) par_walk(st, s->u.seq.stmts[i], div, tid_at, depth + 1);
    return;
  case TL_STMT_KERNEL: par_walk(st, s->u.kernel.body, div, tid_at, depth + 1); return;
  case TL_STMT_FOR: {
    const int nv = s->u.loop.nvars;
    if (s->u.loop.kind == TL_LOOP_PARALLEL && div) {
      tl_error(st->d, s->loc,
               "T.Parallel in per-thread code under a branch or loop that the threads may take apart: the "
               "loop's iterations are spread over the threads of the block, so every thread must reach it "
               "(branch on block indices, parameters or values every thread holds alike), or write T.serial "
               "for a loop of each thread");
      tl_note(st->d, tid_at, "the kernel body uses the thread index here");
      st->errors++;
      return;
    }
    if (s->u.loop.kind == TL_LOOP_PARALLEL) return par_one(st, s, tid_at);
    bool d = div || s->u.loop.kind == TL_LOOP_THREAD || any_varies(st, nv, s->u.loop.extents) ||
             any_varies(st, nv, s->u.loop.mins) || varies(st, s->u.loop.step);
    par_walk(st, s->u.loop.body, d, tid_at, depth + 1);
    return;
  }
  case TL_STMT_IF: {
    bool d = div || varies(st, s->u.ifs.cond);
    par_walk(st, s->u.ifs.then_s, d, tid_at, depth + 1);
    par_walk(st, s->u.ifs.else_s, d, tid_at, depth + 1);
    return;
  }
  case TL_STMT_WHILE: par_walk(st, s->u.whiles.body, div || varies(st, s->u.whiles.cond), tid_at, depth + 1); return;
  default: return;
  }
}

bool tl_lower_check_parallel_per_thread(const tl_stmt *kernel_body, tl_loc tid_at, tl_diag *d) {
  un_state st = {.d = d};
  tl_map_init(&st.bad);
  fixed_point(&st, kernel_body);
  if (st.oom) tl_error(d, tid_at, "out of memory in the check of T.Parallel loops in per-thread code");
  else par_walk(&st, kernel_body, false, tid_at, 0);
  tl_map_free(&st.bad);
  return !st.oom && st.errors == 0;
}
