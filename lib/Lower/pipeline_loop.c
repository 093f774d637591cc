/* Pass "pipeline" of lib/Lower: software pipelining of T.Pipelined loops on
 * the tile IR (tile IR → tile IR).
 *
 * Requires: a verified tile-IR function (tl_lower_check_supported passed).
 * Guarantees (on success): the allocations at the top of a T.Pipelined
 * body stand before the loop (hoist_allocs); no T.Pipelined loop remains (each became a
 * T.serial loop, kind SERIAL).  The serial loop of a pipeline with staged
 * buffers keeps its stage count s >= 2 in num_stages (printed
 * `T.serial(..., annotations={"num_stages": s})`), and its staged accesses
 * use the stage expressions of tl_lo_pipeline_stage (lower_internal.h): the
 * barriers and frag-pipeline passes read the stages there instead of
 * recovering them from the loop's shape; every other loop made here has
 * num_stages -1.  For num_stages s >= 2, every
 * shared buffer X that is written in the loop only by top-level
 * `T.copy(global region, X region)` statements, read by no statement of the
 * body before the first of them (such a read sees the previous iteration's
 * tile), and referenced nowhere else in the function but its allocation and
 * inside the loop, is "staged":
 *   - X's shape gains a leading dimension of s (the allocation is rewritten in
 *     place, X stays the same buffer object);
 *   - every region of X inside the loop gets a leading dim (min = stage,
 *     extent 1), every load X[i, j] becomes X[stage, i, j];
 *   - the producer copies become T.async_copy (op "async_copy") issued s - 1
 *     iterations ahead: for the loop `for k in T.Pipelined(lo, lo + n, s)`
 *
 *         for i in 0 .. s-2 (emitted i by i, the prologue):
 *             if i < n: T.async_copy(src[k := lo + i], X[i, ...]) ...
 *             T.ptx_commit_group()
 *         for k in T.serial(lo, lo + n):
 *             T.ptx_wait_group(s - 2)      # this thread's copies of iteration k landed
 *             T.sync_threads()             # ... and every thread's; also: every thread
 *                                          # finished iteration k-1, which read stage (k-1) % s
 *             if k + (s - 1) < lo + n:     # the epilogue: the last s-1 iterations issue nothing
 *                 T.async_copy(src[k := k + s - 1], X[(k - lo + s - 1) % s, ...]) ...
 *             T.ptx_commit_group()         # one group per iteration, empty ones too
 *             (the rest of the body, reading stage (k - lo) % s)
 *
 *     Group counting: before the wait of iteration k, (s - 1) + k groups were
 *     committed (one per prologue step and one per earlier iteration), group k
 *     holds iteration k's data, and wait_group(s - 2) completes all but the
 *     s - 2 most recent, i.e. groups 0..k.  The issue in iteration k writes
 *     stage (k + s - 1) % s = (k - 1) % s, which only iteration k - 1 read;
 *     the barrier before it orders those reads first.  Iteration k reads
 *     stage k % s != (k - 1) % s (s >= 2), so reads and the in-flight writes
 *     never touch the same stage.  With dynamic n (or n < s - 1) the guards
 *     keep the schedule exact; the epilogue is the same loop with its issue
 *     predicated off, so the consumer code is emitted once.
 *   - statements that prepare a copy (top-level `x = expr` before it whose
 *     value depends only on the loop variable and on values bound outside the
 *     loop) are inlined into the hoisted copy; a copy whose region needs
 *     anything else (a fragment value, a local buffer the body writes, a variable of an inner loop)
 *     stays a synchronous T.copy in place.
 * s = 0 or 1 (or nothing to stage): a plain serial loop with synchronous
 * copies; the barrier pass (barrier.c) adds the barriers such a loop needs.
 *
 * PTX facts: cp.async.commit_group / cp.async.wait_group N (PTX ISA
 * §9.7.9.25.3, .4): wait_group N waits until at most N of the executing
 * thread's most recent groups are pending; an empty group is complete at
 * once; completion is per thread, so a bar.sync (§9.7.13.1) must follow
 * before other threads read the data (docs/simt-ir.md). */
#include <stdlib.h>
#include <string.h>

#include "IR/rewrite.h"
#include "IR/visit.h"
#include "Lower/lower_internal.h"

typedef struct staged {
  tl_buffer *buf;
  int old_ndim;
  tl_expr **old_shape;
} staged;

typedef struct pl_state {
  tl_rewriter rw; /* first: the copies' hooks cast back to pl_state */
  tl_module *m;
  tl_diag *d;
  tl_primfunc *f;
  int errors;
  bool oom;
  /* expression rewriting context */
  tl_map subst;    /* var → replacement expr */
  tl_map stage_of; /* staged buffer → stage expr for its accesses */
} pl_state;

#define OOM_IF(x)                                                                                                      \
  do {                                                                                                                 \
    if (!(x)) {                                                                                                        \
      st->oom = true;                                                                                                  \
      return NULL;                                                                                                     \
    }                                                                                                                  \
  } while (0)

/* -------------------------------------------------------- buffer references */
/* --------------------------------------------------------- hoistability */
/* Variables bound inside a statement (LET and loop variables) and the
 * buffers it may write (stores, tile-op destinations, intrinsic buffer
 * arguments), a tl_visitor. */
typedef struct bound_visit {
  tl_visitor v;
  tl_map *set;
  bool oom;
} bound_visit;

static void bound_put(bound_visit *u, const void *key) {
  if (key && !tl_map_put(u->set, key, (void *)1)) u->oom = true;
}
static void bound_expr(tl_visitor *v, const tl_expr *e) {
  if (e->kind == TL_EXPR_BUFFER) bound_put((bound_visit *)v, e->u.buffer); /* an intrinsic may write it */
}
static void bound_stmt(tl_visitor *v, const tl_stmt *s) {
  bound_visit *u = (bound_visit *)v;
  if (s->kind == TL_STMT_LET) bound_put(u, s->u.let.var);
  if (s->kind == TL_STMT_STORE) bound_put(u, s->u.store.buffer);
  if (s->kind == TL_STMT_TILE) {
    int w = s->u.tile.op >= 0 && s->u.tile.op < TL_TILE_NUM_OPS ? tl_tile_ops[s->u.tile.op].written : -1;
    if (w >= 0 && w < s->u.tile.nargs && s->u.tile.args[w].kind == TL_OPND_REGION)
      bound_put(u, s->u.tile.args[w].region.buffer);
  }
  if (s->kind != TL_STMT_FOR) return;
  for (int k = 0; k < s->u.loop.nvars; k++)
    if (!tl_map_put(u->set, s->u.loop.vars[k], (void *)1)) u->oom = true;
}

/* false on OOM */
static bool bound_vars(const tl_stmt *s, tl_map *set) {
  bound_visit u = {.v = {.stmt = bound_stmt, .expr = bound_expr}, .set = set};
  tl_visit_stmt(&u.v, s);
  return !u.oom;
}

typedef struct hoist_maps {
  const tl_map *inner, *hoisted;
} hoist_maps;

static bool not_hoistable_node(const tl_expr *e, void *user) {
  const hoist_maps *hm = user;
  switch (e->kind) {
  case TL_EXPR_VAR: {
    bool in = false, h = false;
    tl_map_get(hm->inner, e->u.var, &in);
    if (!in) return false;
    tl_map_get(hm->hoisted, e->u.var, &h);
    return !h;
  }
  case TL_EXPR_LOAD: { /* a global tensor, or a per-thread buffer the body does not write (stream-K's start_iter[0]) */
    const tl_buffer *b = e->u.load.buffer;
    bool written = false;
    if (b && (b->scope == TL_SCOPE_LOCAL || b->scope == TL_SCOPE_LOCAL_VAR)) tl_map_get(hm->inner, b, &written);
    else return !b || b->scope != TL_SCOPE_GLOBAL;
    return written;
  }
  case TL_EXPR_BINARY:
  case TL_EXPR_UNARY:
  case TL_EXPR_SELECT:
  case TL_EXPR_CAST:
  case TL_EXPR_CALL:
  case TL_EXPR_INT:
  case TL_EXPR_FLOAT:
  case TL_EXPR_STRING: return false;
  default: return true;
  }
}

/* May e be evaluated ahead of its iteration?  Variables bound in the body
 * must be hoisted LETs (in `hoisted`); loads only of global buffers and of
 * local buffers the body does not write (inner holds those it writes). */
static bool hoistable(const tl_expr *e, const tl_map *inner, const tl_map *hoisted) {
  hoist_maps hm = {inner, hoisted};
  return !tl_expr_any(e, not_hoistable_node, &hm, TL_LOWER_MAX_DEPTH, true);
}

static bool region_hoistable(const tl_region *r, const tl_map *inner, const tl_map *hoisted) {
  for (int k = 0; k < r->ndim; k++) {
    if (r->min && !hoistable(r->min[k], inner, hoisted)) return false;
    if (r->extent && !hoistable(r->extent[k], inner, hoisted)) return false;
  }
  return true;
}

/* ------------------------------------------------------------- rewriting */
/* Copies go through the IR rewriter (IR/rewrite.h) with the substitution
 * st->subst; accesses of a staged buffer get its stage index first. */
static tl_expr **stage_access(tl_rewriter *rw, tl_loc loc, tl_buffer **b, int *n, tl_expr **ix) {
  pl_state *st = (pl_state *)rw;
  (void)loc;
  tl_expr *stage = tl_map_get(&st->stage_of, *b, NULL);
  if (!stage) return ix;
  tl_expr **out = tl_arena_alloc(&st->m->arena, sizeof(tl_expr *) * (size_t)(*n + 1));
  if (!out) return NULL;
  out[0] = stage;
  for (int i = 0; i < *n; i++) out[i + 1] = ix[i];
  (*n)++;
  return out;
}

/* After a failed copy: nesting too deep is an error (reported once). */
static void copy_failed(pl_state *st) {
  if (!st->rw.too_deep) return;
  if (!st->errors) tl_error(st->d, st->rw.deep_loc, "nesting exceeds %d levels", TL_LOWER_MAX_DEPTH);
  st->errors++;
  st->rw.too_deep = false;
}

/* e with the substitution applied and staged loads given their stage index. */
static tl_expr *rw_expr(pl_state *st, const tl_expr *e, int depth) {
  tl_expr *r = tl_rewrite_expr(&st->rw, e, depth);
  if (!r && e) copy_failed(st);
  return r;
}

/* A region with the substitution applied; staged buffers get the leading
 * stage dim (a whole-buffer region is spelled out first). */
static bool rw_region(pl_state *st, const tl_region *in, tl_region *out) {
  tl_module *m = st->m;
  tl_expr *stage = tl_map_get(&st->stage_of, in->buffer, NULL);
  *out = *in;
  int n = in->ndim;
  tl_expr *const *mins = in->min, *const *exts = in->extent;
  if (n == 0 && !in->extent && in->buffer) { /* whole buffer (shape before staging) */
    if (!stage) return true;
    n = in->buffer->ndim;
    exts = in->buffer->shape;
    mins = NULL;
  }
  int add = stage ? 1 : 0;
  tl_expr **mn = tl_arena_alloc(&m->arena, sizeof(tl_expr *) * (size_t)(n + add + 1));
  tl_expr **ex = tl_arena_alloc(&m->arena, sizeof(tl_expr *) * (size_t)(n + add + 1));
  if (!mn || !ex) {
    st->oom = true;
    return false;
  }
  if (stage) {
    mn[0] = stage;
    if (!(ex[0] = tl_lo_int(m, in->buffer->loc, 1))) {
      st->oom = true;
      return false;
    }
  }
  for (int k = 0; k < n; k++) {
    tl_expr *x = mins && mins[k] ? rw_expr(st, mins[k], 1) : tl_lo_int(m, in->buffer->loc, 0);
    tl_expr *y = rw_expr(st, exts[k], 1);
    if (!x || !y) {
      st->oom = st->oom || !st->errors;
      return false;
    }
    mn[add + k] = x;
    ex[add + k] = y;
  }
  out->ndim = n + add;
  out->min = mn;
  out->extent = ex;
  return true;
}

/* ------------------------------------------------------- statement rewrite */
static tl_stmt *copy_stmt(pl_state *st, const tl_stmt *s) {
  tl_stmt *r = tl_ir_stmt(st->m, s->loc, s->kind);
  OOM_IF(r);
  *r = *s;
  return r;
}

static tl_stmt *rw_tile(pl_state *st, const tl_stmt *s, int op) {
  tl_stmt *r = copy_stmt(st, s);
  if (!r) return NULL;
  r->u.tile.op = op;
  int n = s->u.tile.nargs;
  tl_operand *args = tl_arena_alloc(&st->m->arena, sizeof(tl_operand) * (size_t)(n > 0 ? n : 1));
  OOM_IF(args);
  for (int i = 0; i < n; i++) {
    args[i] = s->u.tile.args[i];
    if (args[i].kind == TL_OPND_REGION) {
      if (!rw_region(st, &s->u.tile.args[i].region, &args[i].region)) return NULL;
    } else if (args[i].expr) {
      if (!(args[i].expr = rw_expr(st, s->u.tile.args[i].expr, 1))) return NULL;
    }
  }
  r->u.tile.args = args;
  if (op != s->u.tile.op) { /* T.async_copy has no attributes */
    r->u.tile.attrs = NULL;
  } else if (s->u.tile.attrs && tl_tile_ops[op].nattrs > 0) {
    int na = tl_tile_ops[op].nattrs;
    tl_expr **at = tl_arena_alloc(&st->m->arena, sizeof(tl_expr *) * (size_t)na);
    OOM_IF(at);
    for (int i = 0; i < na; i++) at[i] = s->u.tile.attrs[i] ? rw_expr(st, s->u.tile.attrs[i], 1) : NULL;
    r->u.tile.attrs = at;
    /* a reduction's dim counts the source region's dimensions: a staged source gained a leading one */
    int64_t dim;
    bool reduce = op >= TL_TILE_REDUCE_MAX && op <= TL_TILE_REDUCE_ABSMAX;
    if (reduce && n > 0 && args[0].kind == TL_OPND_REGION && tl_map_get(&st->stage_of, args[0].region.buffer, NULL) &&
        at[0] && tl_expr_is_const_int(at[0], &dim) && dim >= 0)
      OOM_IF(at[0] = tl_lo_int(st->m, at[0]->loc, dim + 1));
  }
  return r;
}

/* Tile ops keep their own copy (staged regions, T.async_copy); everything
 * else is the rewriter's default. */
static tl_stmt *tile_stmt(tl_rewriter *rw, const tl_stmt *s, int depth) {
  (void)depth;
  if (s->kind != TL_STMT_TILE) return NULL;
  tl_stmt *r = rw_tile((pl_state *)rw, s, s->u.tile.op);
  if (!r) rw->failed = true;
  return r;
}

static tl_stmt *rw_stmt(pl_state *st, const tl_stmt *s, int depth) {
  tl_stmt *r = tl_rewrite_stmt(&st->rw, s, depth);
  if (!r && s) copy_failed(st);
  return r;
}

/* ------------------------------------------------------------- the pass */
static tl_stmt *eval_call(pl_state *st, tl_loc loc, tl_intrin op, int n, tl_expr **args) {
  tl_expr *c = tl_ir_call(st->m, loc, op, n, args);
  OOM_IF(c);
  tl_stmt *s = tl_ir_stmt(st->m, loc, TL_STMT_EVAL);
  OOM_IF(s);
  s->u.eval.value = c;
  return s;
}

static bool is_shared_scope(tl_scope s) { return s == TL_SCOPE_SHARED_DYN || s == TL_SCOPE_SHARED; }

/* Is top-level statement s a producer candidate: T.copy(global → shared)? */
static bool is_producer_copy(const tl_stmt *s) {
  if (s->kind != TL_STMT_TILE || s->u.tile.op != TL_TILE_COPY || s->u.tile.nargs < 2) return false;
  const tl_operand *a = &s->u.tile.args[0], *b = &s->u.tile.args[1];
  return a->kind == TL_OPND_REGION && b->kind == TL_OPND_REGION && a->region.buffer && b->region.buffer &&
         a->region.buffer->scope == TL_SCOPE_GLOBAL && is_shared_scope(b->region.buffer->scope) &&
         a->region.buffer->dtype.lanes == 1;
}

static bool static_shape(const tl_buffer *b) {
  int64_t v;
  for (int k = 0; k < b->ndim; k++)
    if (!tl_expr_is_const_int(b->shape[k], &v)) return false;
  return b->ndim >= 1 && b->ndim <= 2;
}

/* May X, the destination of producer copies of the loop (is_prod marks them
 * among its nb top-level statements), be staged?  Its shape is static, the
 * producers are its only writes and nothing outside the loop uses it. */
static bool stageable(pl_state *st, const tl_stmt *loop, tl_stmt *const *body, int nb, const bool *is_prod,
                      const tl_buffer *X) {
  bool ok = static_shape(X);
  tl_lo_refs in_loop = tl_lo_count_refs(loop->u.loop.body, X), all = tl_lo_count_refs(st->f->body, X), prod = {0};
  for (int j = 0; j < nb; j++)
    if (is_prod[j] && body[j]->u.tile.args[1].region.buffer == X) prod.writes++;
  /* reads of X inside the producers' own regions would be odd: refuse */
  if (in_loop.writes != prod.writes || all.reads != in_loop.reads || all.writes != in_loop.writes) ok = false;
  /* a read of X before its first producer reads the previous iteration's tile (a loop-carried
   * use); staged, it would get this iteration's: X stays unstaged */
  for (int j = 0; j < nb && ok && !(is_prod[j] && body[j]->u.tile.args[1].region.buffer == X); j++)
    if (tl_lo_count_refs(body[j], X).reads) ok = false;
  return ok;
}

/* Staged buffers: written in the loop only by candidates, used nowhere
 * outside it but in their allocation; the candidates writing another buffer
 * stop being producers.  Returns their count (in stg). */
static int find_staged(pl_state *st, const tl_stmt *loop, tl_stmt *const *body, int nb, bool *is_prod, staged *stg) {
  int nstg = 0;
  for (int i = 0; i < nb; i++) {
    if (!is_prod[i]) continue;
    tl_buffer *X = body[i]->u.tile.args[1].region.buffer;
    bool seen = false;
    for (int j = 0; j < nstg; j++)
      if (stg[j].buf == X) seen = true;
    if (seen) continue;
    bool ok = stageable(st, loop, body, nb, is_prod, X);
    if (!ok) {
      for (int j = 0; j < nb; j++)
        if (is_prod[j] && body[j]->u.tile.args[1].region.buffer == X) is_prod[j] = false;
      continue;
    }
    stg[nstg].buf = X;
    stg[nstg].old_ndim = X->ndim;
    stg[nstg].old_shape = X->shape;
    nstg++;
  }
  return nstg;
}

/* The staged buffers gain a leading dim of s stages; false on OOM. */
static bool add_stage_dim(tl_module *m, const staged *stg, int nstg, int s) {
  for (int j = 0; j < nstg; j++) {
    tl_buffer *X = stg[j].buf;
    tl_expr **shape = tl_arena_alloc(&m->arena, sizeof(tl_expr *) * (size_t)(X->ndim + 1));
    if (!shape || !(shape[0] = tl_lo_int(m, X->loc, s))) return false;
    for (int k = 0; k < X->ndim; k++) shape[k + 1] = X->shape[k];
    X->shape = shape;
    X->ndim++;
    X->strides = NULL;
  }
  return true;
}

/* Marks the producer candidates of a loop body (top-level copies global →
 * shared whose regions can be computed before the loop) in is_prod, and
 * collects in hoisted the LET values that only use what exists before the
 * loop (inner: the variables the body binds).  false on OOM. */
static bool find_candidates(tl_stmt *const *body, int nb, const tl_map *inner, tl_map *hoisted, bool *is_prod) {
  for (int i = 0; i < nb; i++) {
    const tl_stmt *x = body[i];
    is_prod[i] = false;
    if (x->kind == TL_STMT_LET) {
      if (hoistable(x->u.let.value, inner, hoisted) && !tl_map_put(hoisted, x->u.let.var, (void *)x->u.let.value))
        return false;
      continue;
    }
    if (!is_producer_copy(x)) continue;
    if (!region_hoistable(&x->u.tile.args[0].region, inner, hoisted) ||
        !region_hoistable(&x->u.tile.args[1].region, inner, hoisted))
      continue;
    is_prod[i] = true;
  }
  return true;
}

/* The producers of a loop body (loop variable from lo) issued for the
 * iteration whose loop variable is kval, into stage `stage`: each producer copy as a T.async_copy (issue[],
 * nb entries of room), with the hoisted LET values it uses inlined; the
 * sequence of them.  own_guarded (order= / stage= loops, steady state): each
 * copy also stored in own[i], guarded alone by kval < lo + n, for its own
 * position.  NULL on error (reported) or OOM (st->oom). */
static tl_stmt *issue_group(pl_state *st, const tl_stmt *loop, tl_expr *lo, tl_stmt *const *body, int nb,
                            const bool *is_prod, const tl_map *hoisted, tl_expr *kval, tl_expr *stage, bool own_guarded,
                            tl_stmt **issue, tl_stmt **own) {
  tl_module *m = st->m;
  tl_loc loc = loop->loc;
  tl_var *kv = loop->u.loop.vars[0];
  tl_expr *n = loop->u.loop.extents[0];
  int ni = 0;
  for (int i = 0; i < nb; i++) {
    const tl_stmt *x = body[i];
    if (x->kind == TL_STMT_LET) {
      void *hv = tl_map_get(hoisted, x->u.let.var, NULL);
      if (hv) {
        tl_map_remove(&st->subst, kv);
        OOM_IF(tl_map_put(&st->subst, kv, kval));
        tl_expr *v = rw_expr(st, (tl_expr *)hv, 0);
        if (!v || !tl_map_put(&st->subst, x->u.let.var, v)) {
          st->oom = st->oom || !st->errors;
          return NULL;
        }
      }
      continue;
    }
    if (!is_prod[i]) continue;
    tl_buffer *X = x->u.tile.args[1].region.buffer;
    OOM_IF(tl_map_put(&st->subst, kv, kval) && tl_map_put(&st->stage_of, X, stage));
    tl_stmt *c = rw_tile(st, x, TL_TILE_ASYNC_COPY);
    tl_map_remove(&st->stage_of, X);
    if (!c) return NULL;
    if (own_guarded) { /* at its own position: guarded alone */
      tl_expr *gd = tl_ir_binary(m, loc, TL_OP_LT, kval, tl_lo_add(m, loc, lo, n));
      OOM_IF(own[i] = tl_lo_if(m, loc, gd, c, NULL));
    }
    issue[ni++] = c;
  }
  tl_map_free(&st->subst);
  tl_map_init(&st->subst);
  tl_stmt *grp = tl_ir_seq(m, loc, ni, issue);
  OOM_IF(grp);
  return grp;
}

tl_expr *tl_lo_pipeline_stage(tl_module *m, const tl_stmt *loop, tl_pipe_role role) {
  int s = loop->u.loop.num_stages;
  if (loop->kind != TL_STMT_FOR || loop->u.loop.kind != TL_LOOP_SERIAL || s < 2 || loop->u.loop.nvars != 1) return NULL;
  tl_loc loc = loop->loc;
  tl_expr *lo = loop->u.loop.mins && loop->u.loop.mins[0] ? loop->u.loop.mins[0] : tl_lo_int(m, loc, 0);
  tl_expr *rel = tl_ir_binary(m, loc, TL_OP_SUB, tl_ir_var(m, loc, loop->u.loop.vars[0]), lo); /* k - lo */
  if (role == TL_PIPE_PRODUCER) rel = tl_lo_add(m, loc, rel, tl_lo_int(m, loc, s - 1));
  return tl_ir_binary(m, loc, TL_OP_FLOORMOD, rel, tl_lo_int(m, loc, s));
}

/* Transforms one T.Pipelined loop (its body already transformed). */
static tl_stmt *pipeline_loop(pl_state *st, tl_stmt *loop) {
  tl_module *m = st->m;
  tl_loc loc = loop->loc;
  int s = loop->u.loop.num_stages;
  bool sched = loop->u.loop.nsched > 0; /* order= / stage= (pipeline_sched.c) */
  loop->u.loop.kind = TL_LOOP_SERIAL;
  loop->u.loop.num_stages = -1;
  if (sched && (loop->u.loop.nvars != 1 || loop->u.loop.step)) {
    tl_error(st->d, loop->loc, "T.Pipelined: order= and stage= on a loop with a step are not supported yet");
    st->errors++;
    return NULL;
  }
  if (!sched && (s < 2 || loop->u.loop.nvars != 1 || loop->u.loop.step)) return loop;
  tl_var *kv = loop->u.loop.vars[0];
  tl_expr *lo = loop->u.loop.mins && loop->u.loop.mins[0] ? loop->u.loop.mins[0] : tl_lo_int(m, loc, 0);
  tl_expr *n = loop->u.loop.extents[0];
  OOM_IF(lo);
  int nb = loop->u.loop.body->kind == TL_STMT_SEQ ? loop->u.loop.body->u.seq.n : 1;
  tl_stmt **body = loop->u.loop.body->kind == TL_STMT_SEQ ? loop->u.loop.body->u.seq.stmts : &loop->u.loop.body;

  /* Candidates: top-level copies global → shared with hoistable regions. */
  tl_map inner, hoisted;
  tl_map_init(&inner);
  tl_map_init(&hoisted);
  bool *is_prod = tl_arena_alloc(&m->arena, sizeof(bool) * (size_t)(nb > 0 ? nb : 1));
  staged *stg = tl_arena_alloc(&m->arena, sizeof(staged) * (size_t)(nb > 0 ? nb : 1));
  int nstg = 0;
  tl_stmt *result = loop;
  if (!is_prod || !stg || !bound_vars(loop->u.loop.body, &inner) ||
      !find_candidates(body, nb, &inner, &hoisted, is_prod)) {
    goto oom;
  }
  if (sched) tl_pl_sched_candidates(loop, body, nb, is_prod);
  nstg = find_staged(st, loop, body, nb, is_prod, stg);
  if (sched) { /* the stages say which copies run ahead, and how far */
    s = tl_pl_sched_stages(st->d, loop, body, nb, is_prod, &st->errors);
    if (s < 0) {
      goto fail;
    }
    if (s < 2) { /* nothing runs ahead: the body in the given order */
      result = tl_pl_sched_reorder(m, loop, body, nb, NULL);
      if (!result) goto oom;
      loop->u.loop.body = result;
      result = loop;
      goto done;
    }
  }
  if (nstg == 0) goto done;

  /* The loop records its stages; the stage expressions follow from them. */
  loop->u.loop.num_stages = s;
  tl_expr *cons_stage = tl_lo_pipeline_stage(m, loop, TL_PIPE_CONSUMER);
  tl_expr *prod_stage = tl_lo_pipeline_stage(m, loop, TL_PIPE_PRODUCER);
  tl_expr *ahead = tl_lo_add(m, loc, tl_ir_var(m, loc, kv), tl_lo_int(m, loc, s - 1));
  if (!cons_stage || !prod_stage || !ahead) {
    goto oom;
  }

  /* Producers: for the first s - 1 iterations before the loop (the prologue),
   * then s - 1 iterations ahead in its body (issue_group). */
  tl_stmt **issue = tl_arena_alloc(&m->arena, sizeof(tl_stmt *) * (size_t)(nb + 1));
  tl_stmt **pro = tl_arena_alloc(&m->arena, sizeof(tl_stmt *) * (size_t)(2 * s + 2));
  tl_stmt **nbody = tl_arena_alloc(&m->arena, sizeof(tl_stmt *) * (size_t)(nb + 4));
  tl_stmt **own = tl_arena_alloc(&m->arena, sizeof(tl_stmt *) * (size_t)(nb + 1)); /* sched: per statement */
  if (!issue || !pro || !nbody || !own) {
    goto oom;
  }
  int npro = 0;
  for (int it = 0; it <= s - 1; it++) {
    bool steady = it == s - 1;
    tl_expr *kval = steady ? ahead : tl_lo_add(m, loc, lo, tl_lo_int(m, loc, it));
    tl_expr *stage = steady ? prod_stage : tl_lo_int(m, loc, it);
    if (!kval || !stage) {
      goto oom;
    }
    tl_stmt *grp = issue_group(st, loop, lo, body, nb, is_prod, &hoisted, kval, stage, sched && steady, issue, own);
    if (!grp) {
      goto fail;
    }
    tl_expr *guard = steady ? tl_ir_binary(m, loc, TL_OP_LT, ahead, tl_lo_add(m, loc, lo, n))
                            : tl_ir_binary(m, loc, TL_OP_LT, tl_lo_int(m, loc, it), n);
    tl_stmt *g = tl_lo_if(m, loc, guard, grp, NULL);
    tl_stmt *commit = eval_call(st, loc, TL_INTRIN_PTX_COMMIT_GROUP, 0, NULL);
    if (!g || !commit) {
      st->oom = st->oom || !st->errors;
      goto fail;
    }
    if (!steady) {
      pro[npro++] = g;
      pro[npro++] = commit;
    } else {
      tl_expr *k = tl_lo_int(m, loc, s - 2);
      tl_stmt *wait = eval_call(st, loc, TL_INTRIN_PTX_WAIT_GROUP, 1, &k);
      tl_stmt *sync = eval_call(st, loc, TL_INTRIN_SYNC_THREADS, 0, NULL);
      if (!wait || !sync) {
        goto fail;
      }
      nbody[0] = wait;
      nbody[1] = sync;
      nbody[2] = g;
      nbody[3] = commit;
    }
  }
  /* Consumers: the body without the producers, staged accesses at stage (k - lo) % s. */
  for (int j = 0; j < nstg; j++)
    if (!tl_map_put(&st->stage_of, stg[j].buf, cons_stage)) {
      goto oom;
    }
  int nn = 4;
  for (int i = 0; i < nb; i++) {
    if (is_prod[i]) continue;
    tl_stmt *x = rw_stmt(st, body[i], 1);
    if (!x) {
      st->oom = st->oom || !st->errors;
      goto fail;
    }
    nbody[nn++] = own[i] = x;
  }
  tl_map_free(&st->stage_of);
  tl_map_init(&st->stage_of);
  tl_stmt *nb_s;
  if (sched) { /* wait, barrier, then the statements in order; the commit after the last issue */
    tl_stmt *ord = tl_pl_sched_reorder(m, loop, own, nb, is_prod);
    tl_stmt *head[3] = {nbody[0], nbody[1], ord};
    if (!ord) goto oom;
    nb_s = tl_ir_seq(m, loop->u.loop.body->loc, 3, head);
  } else {
    nb_s = tl_ir_seq(m, loop->u.loop.body->loc, nn, nbody);
  }
  if (!nb_s) goto oom;
  loop->u.loop.body = nb_s;
  /* The staged buffers gain their leading stage dim. */
  if (!add_stage_dim(m, stg, nstg, s)) goto oom;
  pro[npro++] = loop;
  result = tl_ir_seq(m, loc, npro, pro);
  if (result) goto done;
oom:
  st->oom = true;
fail:
  result = NULL;
done:
  tl_map_free(&inner);
  tl_map_free(&hoisted);
  tl_map_free(&st->subst);
  tl_map_init(&st->subst);
  tl_map_free(&st->stage_of);
  tl_map_init(&st->stage_of);
  return result;
}

/* The allocations at the top level of T.Pipelined loop's body (TileLang
 * allows them there: a tile per iteration) move before the loop, so that the
 * copies the pipeline issues ahead, before and across iterations, stay in
 * their scope; a buffer allocated fresh each iteration holds nothing from
 * the last one, so this keeps the meaning.  T.alloc_var with an initial
 * value stays (its initialisation is per iteration).  Returns a sequence of
 * the moved allocations with a last slot for the loop, or NULL when none
 * moved (st->oom on OOM). */
static tl_stmt *hoist_allocs(pl_state *st, tl_stmt *loop) {
  tl_stmt *b = loop->u.loop.body;
  if (!b || b->kind != TL_STMT_SEQ) return NULL;
  int n = 0;
  for (int i = 0; i < b->u.seq.n; i++) {
    const tl_stmt *x = b->u.seq.stmts[i];
    if (x && x->kind == TL_STMT_ALLOC && !x->u.alloc.buffer->init && x->u.alloc.buffer->scope != TL_SCOPE_GLOBAL) n++;
  }
  if (n == 0) return NULL;
  tl_stmt **moved = tl_arena_alloc(&st->m->arena, sizeof(tl_stmt *) * (size_t)(n + 1));
  if (!moved) return st->oom = true, NULL;
  int k = 0, kept = 0;
  for (int i = 0; i < b->u.seq.n; i++) {
    tl_stmt *x = b->u.seq.stmts[i];
    if (x && x->kind == TL_STMT_ALLOC && !x->u.alloc.buffer->init && x->u.alloc.buffer->scope != TL_SCOPE_GLOBAL)
      moved[k++] = x;
    else b->u.seq.stmts[kept++] = x;
  }
  b->u.seq.n = kept;
  moved[n] = loop; /* replaced by the pipelined form */
  tl_stmt *seq = tl_ir_seq(st->m, loop->loc, n + 1, moved);
  if (!seq) st->oom = true;
  return seq;
}

/* Walks s, transforming T.Pipelined loops innermost first; returns the
 * statement to put in s's place. */
static tl_stmt *walk(pl_state *st, tl_stmt *s, int depth) {
  if (!s) return s;
  if (!tl_lo_nesting_ok(st->d, s, depth, &st->errors, !st->errors)) return NULL;
  switch (s->kind) {
  case TL_STMT_SEQ:
    for (int i = 0; i < s->u.seq.n; i++)
      if (!(s->u.seq.stmts[i] = walk(st, s->u.seq.stmts[i], depth + 1))) return NULL;
    return s;
  case TL_STMT_FOR: {
    if (!(s->u.loop.body = walk(st, s->u.loop.body, depth + 1))) return NULL;
    if (s->u.loop.kind != TL_LOOP_PIPELINED) return s;
    tl_stmt *allocs = hoist_allocs(st, s);
    if (st->oom) return NULL;
    tl_stmt *p = pipeline_loop(st, s);
    if (!p || !allocs) return p;
    allocs->u.seq.stmts[allocs->u.seq.n - 1] = p;
    return allocs;
  }
  case TL_STMT_KERNEL:
    if (!(s->u.kernel.body = walk(st, s->u.kernel.body, depth + 1))) return NULL;
    return s;
  case TL_STMT_WHILE: return (s->u.whiles.body = walk(st, s->u.whiles.body, depth + 1)) ? s : NULL;
  case TL_STMT_IF:
    if (!(s->u.ifs.then_s = walk(st, s->u.ifs.then_s, depth + 1))) return NULL;
    if (s->u.ifs.else_s && !(s->u.ifs.else_s = walk(st, s->u.ifs.else_s, depth + 1))) return NULL;
    return s;
  default: return s;
  }
}

bool tl_lower_pipeline(tl_module *m, tl_primfunc *f, const tl_target *target, tl_diag *d) {
  (void)target; /* nothing here depends on the target yet */
  pl_state st = {.m = m, .d = d, .f = f};
  tl_map_init(&st.subst);
  tl_map_init(&st.stage_of);
  st.rw.m = m;
  st.rw.subst = &st.subst;
  st.rw.max_depth = TL_LOWER_MAX_DEPTH;
  st.rw.access = stage_access;
  st.rw.stmt = tile_stmt;
  tl_stmt *b = walk(&st, f->body, 0);
  if (b) f->body = b;
  tl_map_free(&st.subst);
  tl_map_free(&st.stage_of);
  if (st.oom) {
    tl_error(d, f->loc, "out of memory while pipelining");
    return false;
  }
  if (!b && st.errors == 0) {
    tl_error(d, f->loc, "internal error: pipelining failed");
    return false;
  }
  return b != NULL && st.errors == 0;
}
