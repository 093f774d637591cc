/* T.sync_grid(), the grid-wide barrier (sync_grid.h; docs/language.md
 * "Grid barrier"): where it may stand, which statements before it the side
 * after it gets again, and the verifier's rule that nothing else crosses.
 *
 * The rule, per barrier, over the statements after it up to the next one
 * (one pass, in program order, with a set of "written since the barrier"
 * facts): a read of a variable defined before it (a top-level let that
 * tl_sync_grid_carried does not carry) is an error; a read of a buffer
 * allocated before it at the top level (not global) is an error unless a
 * fact covers it.  A fact is a buffer with, per dimension, either every
 * index or one index expression: a store B[i, j] = ... gives B[i, j] (a
 * dimension of extent 1 counts as every index), a tile op's destination
 * region gives every index of the dimensions it covers (a region that
 * covers a dimension only in part gives nothing).  A load is covered by a
 * fact whose every dimension is "every index" or the load's own index
 * (structurally equal).  Facts only grow (a later write does not undo an
 * earlier one); an if keeps those of both branches; a loop keeps the facts
 * of its body when it surely runs (constant extents > 0), with a dimension
 * indexed by one of its own variables that sweeps the whole dimension
 * (from 0, step 1, extent the dimension's) turned into "every index", and
 * drops those that still name its variables.  Conservative: a program the
 * rule refuses may be right (a buffer written in two halves), never the
 * other way round. */
#include "IR/sync_grid.h"
#include "IR/visit.h"

#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#define SG_MAX_DEPTH 1000
#define SG_MAX_DIMS 8

bool tl_stmt_is_sync_grid(const tl_stmt *s) {
  return s && s->kind == TL_STMT_EVAL && s->u.eval.value && s->u.eval.value->kind == TL_EXPR_CALL &&
         s->u.eval.value->u.call.op == TL_INTRIN_SYNC_GRID;
}

int tl_kernel_top_stmts(const tl_stmt *kernel, tl_stmt *const **list) {
  *list = NULL;
  const tl_stmt *b = kernel && kernel->kind == TL_STMT_KERNEL ? kernel->u.kernel.body : NULL;
  if (!b) return 0;
  if (b->kind != TL_STMT_SEQ) { /* the body itself, one statement */
    *list = (tl_stmt *const *)&kernel->u.kernel.body;
    return 1;
  }
  *list = b->u.seq.stmts;
  return b->u.seq.stmts ? b->u.seq.n : 0;
}

bool tl_kernel_has_sync_grid(const tl_stmt *kernel) {
  tl_stmt *const *list;
  int n = tl_kernel_top_stmts(kernel, &list);
  for (int i = 0; i < n; i++)
    if (tl_stmt_is_sync_grid(list[i])) return true;
  return false;
}

/* ------------------------------------------------------------- carried */
static bool is_workspace(const tl_buffer *b) { return b && b->scope == TL_SCOPE_GLOBAL; }

/* A node a carried let may not hold: memory, an effect, a let not carried. */
static bool not_recomputable(const tl_expr *e, void *user) {
  const tl_map *dropped = user;
  bool found = false;
  switch (e->kind) {
  case TL_EXPR_LOAD:
  case TL_EXPR_BUFFER: return true;
  case TL_EXPR_CALL:
    return e->u.call.op < 0 || e->u.call.op >= TL_INTRIN_COUNT ||
           (tl_intrinsics[e->u.call.op].effects & TL_EFF_SIDE_EFFECTS);
  case TL_EXPR_VAR: (void)tl_map_get(dropped, e->u.var, &found); return found;
  default: return false;
  }
}

static bool is_hint(const tl_stmt *s) {
  if (s->kind == TL_STMT_TILE) return s->u.tile.op == TL_TILE_USE_SWIZZLE || s->u.tile.op == TL_TILE_ANNOTATE_LAYOUT;
  return s->kind == TL_STMT_EVAL && s->u.eval.value && s->u.eval.value->kind == TL_EXPR_CALL &&
         s->u.eval.value->u.call.op == TL_INTRIN_NO_SET_MAX_NREG;
}

bool tl_sync_grid_carried(tl_stmt *const *list, int n, bool *carried) {
  tl_map dropped; /* the lets not carried */
  tl_map_init(&dropped);
  bool ok = true;
  for (int i = 0; i < n; i++) {
    const tl_stmt *s = list[i];
    carried[i] = false;
    if (!s) continue;
    if (s->kind == TL_STMT_ALLOC) carried[i] = s->u.alloc.buffer && !is_workspace(s->u.alloc.buffer);
    else if (is_hint(s)) carried[i] = true;
    else if (s->kind == TL_STMT_LET && s->u.let.var) {
      carried[i] = !tl_expr_any(s->u.let.value, not_recomputable, &dropped, -1, true);
      if (!carried[i] && !tl_map_put(&dropped, s->u.let.var, (void *)s)) ok = false;
    }
  }
  tl_map_free(&dropped);
  return ok;
}

/* ------------------------------------------------------------ position */
typedef struct sg_fact {
  const tl_buffer *b;
  int n;
  const tl_expr *ix[SG_MAX_DIMS]; /* NULL: every index */
} sg_fact;

typedef struct sg_state {
  tl_diag *d;
  int errors;
  bool oom;
  const tl_stmt *sync; /* the barrier the statements being checked follow */
  tl_map vars;         /* let var → its LET: defined before the barrier, not carried */
  tl_map bufs;         /* buffer → its ALLOC: allocated before the barrier, contents lost */
  tl_map reported;     /* var or buffer → reported once */
  TL_VEC(sg_fact) facts;
} sg_state;

static void sg_error(sg_state *st, tl_loc loc, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void sg_error(sg_state *st, tl_loc loc, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  tl_diag_vreport(st->d, TL_DIAG_ERROR, loc, fmt, ap);
  va_end(ap);
  st->errors++;
}

static const char *loop_name(tl_loop_kind k) {
  switch (k) {
  case TL_LOOP_SERIAL: return "a T.serial loop";
  case TL_LOOP_PARALLEL: return "a T.Parallel loop";
  case TL_LOOP_PIPELINED: return "a T.Pipelined loop";
  case TL_LOOP_UNROLL: return "a T.unroll loop";
  case TL_LOOP_VECTORIZED: return "a T.vectorized loop";
  case TL_LOOP_THREAD: return "a thread-bound loop";
  }
  return "a loop";
}

static const char *if_name(const tl_stmt *s) {
  const tl_expr *c = s->u.ifs.cond;
  return c && c->kind == TL_EXPR_CALL && c->u.call.op == TL_INTRIN_WS ? "a T.ws scope" : "an if";
}

/* Every T.sync_grid() under s stands at the top level of a kernel body:
 * inside is NULL there, else what encloses it. */
static void check_position(sg_state *st, const tl_stmt *s, const tl_stmt *kernel, const char *inside, int depth) {
  if (!s || depth > SG_MAX_DEPTH) return;
  switch (s->kind) {
  case TL_STMT_SEQ:
    for (int i = 0; i < s->u.seq.n && s->u.seq.stmts; i++)
      check_position(st, s->u.seq.stmts[i], kernel,
                     inside || !kernel || s == kernel->u.kernel.body ? inside : "a nested statement block", depth + 1);
    return;
  case TL_STMT_FOR: check_position(st, s->u.loop.body, kernel, loop_name(s->u.loop.kind), depth + 1); return;
  case TL_STMT_WHILE: check_position(st, s->u.whiles.body, kernel, "a while loop", depth + 1); return;
  case TL_STMT_IF:
    check_position(st, s->u.ifs.then_s, kernel, if_name(s), depth + 1);
    check_position(st, s->u.ifs.else_s, kernel, if_name(s), depth + 1);
    return;
  case TL_STMT_KERNEL: check_position(st, s->u.kernel.body, s, NULL, depth + 1); return;
  case TL_STMT_EVAL:
    if (!tl_stmt_is_sync_grid(s)) return;
    if (!kernel) sg_error(st, s->loc, "T.sync_grid() outside a T.Kernel");
    else if (inside)
      sg_error(st, s->loc,
               "not supported: T.sync_grid inside %s (a grid barrier stands at the top level of a T.Kernel "
               "body, where the kernel is split into two launches)",
               inside);
    return;
  default: return;
  }
}

/* --------------------------------------------------------------- facts */
static bool const_eq(const tl_expr *a, const tl_expr *b) {
  int64_t x, y;
  return tl_expr_equal(a, b) || (tl_expr_is_const_int(a, &x) && tl_expr_is_const_int(b, &y) && x == y);
}

static bool is_const(const tl_expr *e, int64_t v) {
  int64_t x;
  return e && tl_expr_is_const_int(e, &x) && x == v;
}

static void add_fact(sg_state *st, const sg_fact *f) {
  if (!tl_vec_push(&st->facts, *f)) st->oom = true;
}

/* The fact of a write of b at ix[0..n) (ix NULL: all of b). */
static void note_write(sg_state *st, const tl_buffer *b, int n, tl_expr *const *ix) {
  bool found = false;
  (void)tl_map_get(&st->bufs, b, &found);
  if (!found || b->ndim > SG_MAX_DIMS || (ix && n != b->ndim)) return;
  sg_fact f = {.b = b, .n = b->ndim};
  for (int d = 0; d < b->ndim; d++) f.ix[d] = !ix || is_const(b->shape[d], 1) ? NULL : ix[d];
  add_fact(st, &f);
}

/* The fact of a write of region r (nothing for a part of a dimension). */
static void note_region_write(sg_state *st, const tl_region *r) {
  const tl_buffer *b = r->buffer;
  bool found = false;
  (void)tl_map_get(&st->bufs, b, &found);
  if (!found || b->ndim > SG_MAX_DIMS || r->ndim != b->ndim || !r->min || !r->extent) return;
  sg_fact f = {.b = b, .n = b->ndim};
  for (int d = 0; d < b->ndim; d++) {
    if (is_const(r->min[d], 0) && const_eq(r->extent[d], b->shape[d])) f.ix[d] = NULL;
    else if (is_const(r->extent[d], 1)) f.ix[d] = is_const(b->shape[d], 1) ? NULL : r->min[d];
    else return;
  }
  add_fact(st, &f);
}

/* Is element ix (ix NULL: all of b; region: ix the mins of extent-1 dims,
 * whole_dims the others) of b covered by a fact? */
static bool covered(const sg_state *st, const tl_buffer *b, int n, tl_expr *const *ix, const tl_region *r) {
  for (size_t k = 0; k < st->facts.len; k++) {
    const sg_fact *f = &st->facts.data[k];
    if (f->b != b || (ix && n != f->n)) continue;
    bool ok = true;
    for (int d = 0; d < f->n && ok; d++) {
      if (!f->ix[d]) continue;
      if (r) ok = r->extent && r->min && is_const(r->extent[d], 1) && const_eq(r->min[d], f->ix[d]);
      else ok = ix && const_eq(ix[d], f->ix[d]);
    }
    if (ok) return true;
  }
  return false;
}

/* ---------------------------------------------------------------- reads */
static bool first_report(sg_state *st, const void *key) {
  bool found = false;
  (void)tl_map_get(&st->reported, key, &found);
  if (found) return false;
  if (!tl_map_put(&st->reported, key, (void *)1)) st->oom = true;
  return true;
}

static void report_var(sg_state *st, const tl_var *v, tl_loc at) {
  const tl_stmt *def = tl_map_get(&st->vars, v, NULL);
  if (!def || !first_report(st, v)) return;
  sg_error(st, at,
           "'%s' is defined before T.sync_grid() and read after it: the grid barrier splits the kernel into two "
           "launches, and only global memory and lets of block and thread indices, parameters and constants "
           "cross it",
           v->name ? v->name : "?");
  tl_note(st->d, st->sync->loc, "the T.sync_grid() is here");
  tl_note(st->d, def->loc, "'%s' is defined here (its value reads memory)", v->name ? v->name : "?");
}

static void report_buffer(sg_state *st, const tl_buffer *b, tl_loc at) {
  const tl_stmt *alloc = tl_map_get(&st->bufs, b, NULL);
  if (!alloc || !first_report(st, b)) return;
  sg_error(st, at,
           "'%s' (%s) is read after T.sync_grid() before it is written again (a write counts where it covers the "
           "whole buffer or the element read): the grid barrier splits the kernel into two launches, and only "
           "global memory keeps its contents across it",
           b->name ? b->name : "?", tl_scope_name(b->scope));
  tl_note(st->d, st->sync->loc, "the T.sync_grid() is here");
  tl_note(st->d, alloc->loc, "'%s' is allocated here, before the barrier", b->name ? b->name : "?");
}

typedef struct read_ctx {
  sg_state *st;
  tl_loc at;
} read_ctx;

static bool read_node(const tl_expr *e, void *user) {
  read_ctx *c = user;
  tl_loc at = e->loc.file ? e->loc : c->at;
  if (e->kind == TL_EXPR_VAR) report_var(c->st, e->u.var, at);
  else if (e->kind == TL_EXPR_LOAD && tl_map_get(&c->st->bufs, e->u.load.buffer, NULL) &&
           !covered(c->st, e->u.load.buffer, e->u.load.n, e->u.load.indices, NULL))
    report_buffer(c->st, e->u.load.buffer, at);
  else if (e->kind == TL_EXPR_BUFFER && tl_map_get(&c->st->bufs, e->u.buffer, NULL) &&
           !covered(c->st, e->u.buffer, 0, NULL, NULL))
    report_buffer(c->st, e->u.buffer, at);
  return false; /* every node */
}

static void read_expr(sg_state *st, const tl_expr *e, tl_loc at) {
  read_ctx c = {st, at};
  (void)tl_expr_any(e, read_node, &c, -1, false);
}

static void read_exprs(sg_state *st, int n, tl_expr *const *xs, tl_loc at) {
  for (int i = 0; xs && i < n; i++) read_expr(st, xs[i], at);
}

/* --------------------------------------------------------------- walk */
static void walk(sg_state *st, const tl_stmt *s, int depth);

/* Does e name one of loop s's variables? */
static bool names_var(const tl_expr *e, void *user) {
  const tl_stmt *s = user;
  for (int k = 0; e->kind == TL_EXPR_VAR && k < s->u.loop.nvars; k++)
    if (e->u.var == s->u.loop.vars[k]) return true;
  return false;
}

/* Variable k of loop s sweeps [0, extent) with step 1 and extent the
 * dimension's size dim. */
static bool sweeps(const tl_stmt *s, int k, const tl_expr *dim) {
  return (!s->u.loop.mins || !s->u.loop.mins[k] || is_const(s->u.loop.mins[k], 0)) &&
         (!s->u.loop.step || is_const(s->u.loop.step, 1)) && const_eq(s->u.loop.extents[k], dim);
}

/* Fact f of loop s's body as it holds after the loop; false: dropped. */
static bool after_loop(const tl_stmt *s, sg_fact *f) {
  bool used[SG_MAX_DIMS] = {false}; /* per loop variable (up to SG_MAX_DIMS of them) */
  if (s->u.loop.nvars > SG_MAX_DIMS) return false;
  for (int d = 0; d < f->n; d++) {
    const tl_expr *x = f->ix[d];
    if (!x) continue;
    int k = -1;
    for (int j = 0; x->kind == TL_EXPR_VAR && j < s->u.loop.nvars; j++)
      if (x->u.var == s->u.loop.vars[j]) k = j;
    if (k >= 0 && !used[k] && sweeps(s, k, f->b->shape[d])) {
      used[k] = true;
      f->ix[d] = NULL;
    } else if (tl_expr_any(x, names_var, (void *)s, -1, true)) {
      return false;
    }
  }
  for (int k = 0; k < s->u.loop.nvars; k++) { /* the loop surely runs */
    int64_t v = 0;
    if (!used[k] && !(tl_expr_is_const_int(s->u.loop.extents[k], &v) && v > 0)) return false;
  }
  return true;
}

static void walk_loop(sg_state *st, const tl_stmt *s, int depth) {
  for (int k = 0; k < s->u.loop.nvars; k++) {
    if (s->u.loop.mins) read_expr(st, s->u.loop.mins[k], s->loc);
    read_expr(st, s->u.loop.extents[k], s->loc);
  }
  read_expr(st, s->u.loop.step, s->loc);
  size_t mark = st->facts.len, keep = mark;
  walk(st, s->u.loop.body, depth + 1);
  for (size_t k = mark; k < st->facts.len; k++) {
    sg_fact f = st->facts.data[k];
    if (after_loop(s, &f)) st->facts.data[keep++] = f;
  }
  st->facts.len = keep;
}

/* A while loop: its condition and body read; like a loop, what its body
 * writes may not have happened (no iteration), so no write inside it
 * counts after it. */
static void walk_while(sg_state *st, const tl_stmt *s, int depth) {
  read_expr(st, s->u.whiles.cond, s->loc);
  size_t mark = st->facts.len;
  walk(st, s->u.whiles.body, depth + 1);
  st->facts.len = mark;
}

static bool same_fact(const sg_fact *a, const sg_fact *b) {
  if (a->b != b->b || a->n != b->n) return false;
  for (int d = 0; d < a->n; d++)
    if ((a->ix[d] == NULL) != (b->ix[d] == NULL) || (a->ix[d] && !const_eq(a->ix[d], b->ix[d]))) return false;
  return true;
}

static void walk_if(sg_state *st, const tl_stmt *s, int depth) {
  read_expr(st, s->u.ifs.cond, s->loc);
  size_t mark = st->facts.len;
  walk(st, s->u.ifs.then_s, depth + 1);
  size_t nthen = st->facts.len - mark;
  sg_fact *then_f = nthen ? malloc(sizeof *then_f * nthen) : NULL;
  if (nthen && !then_f) {
    st->oom = true;
    return;
  }
  if (nthen) memcpy(then_f, st->facts.data + mark, sizeof *then_f * nthen);
  st->facts.len = mark;
  walk(st, s->u.ifs.else_s, depth + 1); /* NULL: nothing */
  size_t keep = mark;
  for (size_t k = mark; k < st->facts.len; k++) /* the facts of both branches */
    for (size_t j = 0; j < nthen; j++)
      if (same_fact(&st->facts.data[k], &then_f[j])) {
        st->facts.data[keep++] = st->facts.data[k];
        break;
      }
  st->facts.len = keep;
  free(then_f);
}

static void walk_tile(sg_state *st, const tl_stmt *s) {
  for (int i = 0; i < s->u.tile.nargs && s->u.tile.args; i++) {
    const tl_operand *o = &s->u.tile.args[i];
    tl_loc at = o->loc.file ? o->loc : s->loc;
    if (o->kind != TL_OPND_REGION) {
      read_expr(st, o->expr, at);
      continue;
    }
    read_exprs(st, o->region.ndim, o->region.min, at);
    read_exprs(st, o->region.ndim, o->region.extent, at);
    bool rd = false, wr = false;
    tl_tile_operand_use(s, i, &rd, &wr);
    const tl_buffer *b = o->region.buffer;
    if (rd && b && tl_map_get(&st->bufs, b, NULL) && !covered(st, b, 0, NULL, &o->region)) report_buffer(st, b, at);
  }
  int op = s->u.tile.op;
  if (s->u.tile.attrs && op >= 0 && op < TL_TILE_NUM_OPS)
    read_exprs(st, tl_tile_ops[op].nattrs, s->u.tile.attrs, s->loc);
  for (int i = 0; i < s->u.tile.nargs && s->u.tile.args; i++) { /* then the writes */
    bool rd = false, wr = false;
    tl_tile_operand_use(s, i, &rd, &wr);
    if (wr && s->u.tile.args[i].kind == TL_OPND_REGION && s->u.tile.args[i].region.buffer)
      note_region_write(st, &s->u.tile.args[i].region);
  }
}

static void walk(sg_state *st, const tl_stmt *s, int depth) {
  if (!s || depth > SG_MAX_DEPTH || st->oom) return;
  switch (s->kind) {
  case TL_STMT_SEQ:
    for (int i = 0; i < s->u.seq.n && s->u.seq.stmts; i++) walk(st, s->u.seq.stmts[i], depth + 1);
    return;
  case TL_STMT_FOR: walk_loop(st, s, depth); return;
  case TL_STMT_WHILE: walk_while(st, s, depth); return;
  case TL_STMT_IF: walk_if(st, s, depth); return;
  case TL_STMT_ALLOC:
    if (s->u.alloc.buffer) {
      read_exprs(st, s->u.alloc.buffer->ndim, s->u.alloc.buffer->shape, s->loc);
      read_expr(st, s->u.alloc.buffer->init, s->loc);
    }
    return;
  case TL_STMT_STORE:
    read_exprs(st, s->u.store.n, s->u.store.indices, s->loc);
    read_expr(st, s->u.store.value, s->loc);
    if (s->u.store.buffer) note_write(st, s->u.store.buffer, s->u.store.n, s->u.store.indices);
    return;
  case TL_STMT_LET: read_expr(st, s->u.let.value, s->loc); return;
  case TL_STMT_EVAL: read_expr(st, s->u.eval.value, s->loc); return;
  case TL_STMT_TILE: walk_tile(st, s); return;
  case TL_STMT_KERNEL: return; /* nested: the verifier's error */
  }
}

/* ------------------------------------------------------------- kernels */
/* Statement s, before a barrier: what it defines that the side after the
 * barrier may not read (a let not carried; the contents of a buffer). */
static void define(sg_state *st, const tl_stmt *s, bool carried) {
  if (s->kind == TL_STMT_LET && !carried && s->u.let.var && !tl_map_put(&st->vars, s->u.let.var, (void *)s))
    st->oom = true;
  if (s->kind == TL_STMT_ALLOC && s->u.alloc.buffer && !is_workspace(s->u.alloc.buffer) &&
      !tl_map_put(&st->bufs, s->u.alloc.buffer, (void *)s))
    st->oom = true;
}

static void check_kernel(sg_state *st, const tl_stmt *k) {
  tl_stmt *const *list;
  int n = tl_kernel_top_stmts(k, &list);
  bool *carried = n > 0 ? calloc((size_t)n, sizeof *carried) : NULL;
  if (n > 0 && (!carried || !tl_sync_grid_carried(list, n, carried))) {
    st->oom = true;
    free(carried);
    return;
  }
  for (int i = 0, defined = 0; i < n && !st->oom; i++) {
    if (!tl_stmt_is_sync_grid(list[i])) continue;
    for (; defined < i; defined++) define(st, list[defined], carried[defined]);
    st->sync = list[i];
    st->facts.len = 0;
    for (int j = 0; j < i; j++) /* a carried allocation is made again after the barrier: its shape is read there */
      if (carried[j] && list[j]->kind == TL_STMT_ALLOC) walk(st, list[j], 1);
    for (int j = i + 1; j < n && !tl_stmt_is_sync_grid(list[j]); j++) walk(st, list[j], 1);
  }
  free(carried);
}

static void find_kernels(sg_state *st, const tl_stmt *s, int depth) {
  if (!s || depth > SG_MAX_DEPTH) return;
  if (s->kind == TL_STMT_KERNEL) {
    if (tl_kernel_has_sync_grid(s)) check_kernel(st, s);
    return;
  }
  for (int i = 0; s->kind == TL_STMT_SEQ && i < s->u.seq.n && s->u.seq.stmts; i++)
    find_kernels(st, s->u.seq.stmts[i], depth + 1);
}

int tl_verify_sync_grid(const tl_primfunc *f, tl_diag *d) {
  if (!f || !f->body || !d) return 0;
  sg_state st = {.d = d};
  tl_map_init(&st.vars);
  tl_map_init(&st.bufs);
  tl_map_init(&st.reported);
  check_position(&st, f->body, NULL, NULL, 0);
  find_kernels(&st, f->body, 0);
  if (st.oom) sg_error(&st, f->loc, "out of memory checking T.sync_grid()");
  tl_map_free(&st.vars);
  tl_map_free(&st.bufs);
  tl_map_free(&st.reported);
  tl_vec_free(&st.facts);
  return st.errors;
}
