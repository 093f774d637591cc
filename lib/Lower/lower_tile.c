/* Pass "lower-tile-ops" of lib/Lower (tile IR → SIMT IR; pipeline.c's step
 * 7): tile ops and T.Parallel → per-thread SIMT statements.
 *
 * Requires: check-supported and layout-inference succeeded (every fragment
 * has a tl_frag_layout — one without is an error at its allocation —, every
 * shared buffer a static shape; the tile ops left are T.copy, T.async_copy,
 * T.fill, T.clear, T.gemm (lower_gemm.c, lower_frag.c), T.reduce_*
 * (lower_reduce.c) and T.use_swizzle; constant thread counts).
 * Guarantees (on success), as docs/simt-ir.md states: no TL_STMT_TILE but
 * T.use_swizzle (kept for the rasterize pass) and no T.Parallel loop remain;
 * shared buffers are flat 1-D buffers in their smem_layout (swizzled or
 * padded); every fragment became a per-thread `local` buffer of
 * nregs registers; the thread index is T.get_thread_binding(0); vector
 * accesses are loads/stores whose last index is T.ramp(base, 1, w) with base a
 * proven multiple of w and (for n-d buffers) a row length that is a static
 * multiple of w, w * element bytes <= 16; T.vectorized loops have a single
 * store as their body and pass the same checks for every access; no
 * out-of-bounds global access is issued by T.copy / T.fill (reads pad 0,
 * writes are skipped).  Every new statement carries the location of the op it
 * came from.
 *
 * Iteration spaces.  A PLAN partition (lower_internal.h) over a static domain
 * S with E elements, T threads and vector width v is emitted as
 *     for q in T.unroll(nvec):                    (omitted when nvec = 1)
 *         f0 = q*T*v + tid*v                      (a multiple of v)
 *         if f0 < E:                              (only when T*v does not divide E)
 *             i_k = (f0 // P_k) % S_k, i_last = f0 % S_last   (P_k = prod S[k+1:])
 *             for lo in T.unroll(v / w):
 *                 [for li in T.vectorized(w):]  element (i_0, ..., i_last + lo*w + li),
 *                                               fragment register q*v + lo*w + li
 * which visits every element exactly once over all threads: f = f0 + l runs
 * over [0, E) as (q, tid, l) runs over its box, and since v divides S_last the
 * v elements of a vector share one row.  T.copy and T.fill use the partition of
 * their fragment operand, or T = 1 (each thread does all elements) when a
 * side is per-thread (local buffer, replicated fragment), or the block's
 * threads for global-only work.  T.Parallel uses the PLAN layout of the
 * fragment it indexes by its loop variables, or a plan computed for its own
 * extents (16 / largest element size), or a strided loop over threads when the
 * extents are dynamic.  A T.Parallel that writes a replicated fragment runs
 * every iteration in every thread (serial loops).  ROWS and REDUCER
 * fragments are walked by emit_rows / emit_reducer; a row
 * statistic D[i] read in a loop partitioned by an MMA_C or ROWS fragment is
 * register 2*mi + h, or the row iteration; a REDUCER partition that stores
 * to memory runs only in replica 0.  T.reduce_* goes to lower_reduce.c. */
#include <stdlib.h>
#include <string.h>

#include "IR/visit.h"
#include "Lower/lower_tile.h"
#include "Lower/smem_layout.h"

static void fail(lt_state *st, tl_loc loc, const char *fmt, const char *a, const char *b) {
  tl_error(st->w.d, loc, fmt, a, b);
  st->w.errors++;
}

/* ---------------------------------------------------------------- helpers */
/* A fragment spread over the threads (PLAN or the T.gemm MMA_C layout):
 * accessed through a partition's register index. */
static bool frag_distributed(const tl_frag_layout *L) { return L && L->kind != TL_FRAG_REPLICATED; }

/* Is every element of L held by several threads (a REDUCER or COLS, or a
 * STACKED layout over one), so that only replica 0 may store it to memory? */
static bool frag_replicas(const tl_frag_layout *L) {
  while (L && L->kind == TL_FRAG_STACKED) L = L->src;
  return L && (L->kind == TL_FRAG_REDUCER || L->kind == TL_FRAG_COLS);
}

static tl_expr *flat_index(lt_state *st, tl_loc loc, const tl_frag_layout *L, int n, tl_expr **idx) {
  tl_expr *f = tl_lo_int(st->w.m, loc, 0);
  for (int k = 0; k < n && k < L->ndim; k++) {
    f = tl_lo_mul(st->w.m, loc, f, L->shape[k]);
    f = tl_lo_add(st->w.m, loc, f, idx[k]);
  }
  return f;
}

static tl_expr *zero_of(lt_state *st, tl_loc loc, tl_dtype t) {
  t.lanes = 1;
  if (tl_dtype_is_float(t)) return tl_ir_float(st->w.m, loc, t, 0.0);
  return tl_ir_int(st->w.m, loc, t, 0);
}

/* ------------------------------------------------------- expression rewrite */
/* Expressions are copied by the IR rewriter (IR/rewrite.h) with the
 * substitution st->subst (T.Parallel variables) and lower_expr below for
 * fragment and shared-memory accesses and vector casts. */
static void copy_failed(lt_state *st) {
  if (st->rw.too_deep) {
    tl_error(st->w.d, st->rw.deep_loc, "expression nesting exceeds %d levels", TL_LOWER_MAX_DEPTH);
    st->w.errors++;
    st->rw.too_deep = false;
  }
  if (st->w.m->arena.oom) st->w.oom = true;
}

static tl_expr *rw_expr(lt_state *st, const tl_expr *e, int depth) {
  tl_expr *r = tl_rewrite_expr(&st->rw, e, depth);
  if (!r && e) copy_failed(st);
  return r;
}

static tl_expr **rw_list(lt_state *st, int n, tl_expr *const *xs, int depth) {
  tl_expr **r = tl_rewrite_exprs(&st->rw, n, xs, 0, depth);
  if (!r) copy_failed(st);
  return r;
}

/* The register of F[lead..., n] (F STACKED) at the base register reg:
 * flat(lead) * base nregs + reg; lead rewritten. */
static tl_expr *stacked_reg(lt_state *st, tl_loc loc, const tl_frag_layout *L, tl_expr *const *lead, tl_expr *reg,
                            int depth) {
  int a = L->ndim - L->src->ndim;
  tl_expr **lx = rw_list(st, a, lead, depth);
  tl_expr *f = lx ? flat_index(st, loc, L, a, lx) : NULL;
  return f ? tl_lo_add(st->w.m, loc, tl_lo_mul(st->w.m, loc, f, L->src->nregs), reg) : NULL;
}

/* The register of F[.., off + n_d, ..] (F STACKED along split dim d, the
 * access of tl_lo_split_access) at the base register reg: (off / S_d) *
 * base nregs + reg; off rewritten. */
static tl_expr *split_reg(lt_state *st, tl_loc loc, const tl_frag_layout *L, tl_expr *off, tl_expr *reg, int depth) {
  tl_expr *o = rw_expr(st, off, depth);
  tl_expr *l = o ? tl_lo_fdiv(st->w.m, loc, o, L->src->shape[L->split - 1], &st->w.ranges) : NULL;
  return l ? tl_lo_add(st->w.m, loc, tl_lo_mul(st->w.m, loc, l, L->src->nregs), reg) : NULL;
}

/* New index list of an access to b (fragment accesses become register indices). */
static tl_expr **rw_access(lt_state *st, tl_loc loc, const tl_buffer *b, int n, tl_expr *const *idx, int *n_out,
                           int depth) {
  tl_frag_layout *L = tl_frag_layout_of(b);
  *n_out = n;
  if (!L) return rw_list(st, n, idx, depth);
  tl_expr **one = tl_arena_alloc(&st->w.m->arena, sizeof(tl_expr *));
  if (!one) {
    st->w.oom = true;
    return NULL;
  }
  *n_out = 1;
  if (L->kind == TL_FRAG_REDUCER && st->loop && !tl_lo_identity_access(st->loop, b, n, (tl_expr **)idx)) {
    /* a row statistic D[i] read beside its rows (layout_infer.c row_access) */
    if (n == 1 && idx[0] && idx[0]->kind == TL_EXPR_VAR && st->loop->u.loop.nvars >= 2 &&
        idx[0]->u.var == st->loop->u.loop.vars[0] && st->row_reg && tl_reducer_fits(L, st->part)) {
      one[0] = st->row_reg;
      return one;
    }
    tl_error(st->w.d, loc, "internal error: row statistic '%s' read off the threads of its rows", b->name);
    st->w.errors++;
    return NULL;
  }
  if (L->kind == TL_FRAG_COLS && st->loop && !tl_lo_identity_access(st->loop, b, n, (tl_expr **)idx)) {
    /* a column statistic D[j] read in a loop over (i, j) partitioned by its
     * source (layout_infer.c finish_cols): the partition's register modulo
     * D's (frag_layout.h COLS) */
    if (n == 1 && idx[0] && idx[0]->kind == TL_EXPR_VAR && st->loop->u.loop.nvars == 2 &&
        idx[0]->u.var == st->loop->u.loop.vars[1] && st->reg && tl_cols_fits(L, st->loop_part) &&
        (one[0] = tl_lo_fmod(st->w.m, loc, st->reg, L->nregs, &st->w.ranges)))
      return one;
    tl_error(st->w.d, loc, "internal error: column statistic '%s' read off the threads of its columns", b->name);
    st->w.errors++;
    return NULL;
  }
  if (L->kind == TL_FRAG_STACKED && st->loop && st->reg && !tl_lo_identity_access(st->loop, b, n, (tl_expr **)idx)) {
    /* F[l, n] (or F[.., l*S + n_d, ..]) read in a loop partitioned by F's base (layout_infer.c stack links) */
    int sd = -1;
    tl_expr *off = NULL;
    bool ok = L->split ? tl_lo_split_access(st->loop, b, n, (tl_expr **)idx, &sd, &off) && sd == L->split - 1
                       : tl_lo_stacked_access(st->loop, b, n, (tl_expr **)idx);
    if (!ok || !st->loop_part || !tl_frag_layout_same(L->src, st->loop_part)) {
      tl_error(st->w.d, loc, "internal error: stacked fragment '%s' read off the threads of its base", b->name);
      st->w.errors++;
      return NULL;
    }
    one[0] = L->split ? split_reg(st, loc, L, off, st->reg, depth) : stacked_reg(st, loc, L, idx, st->reg, depth);
    return one[0] ? one : NULL;
  }
  if (frag_distributed(L)) {
    if (!st->reg || !tl_lo_identity_access(st->loop, b, n, (tl_expr **)idx)) {
      tl_error(st->w.d, loc, "internal error: fragment '%s' accessed off its layout", b->name);
      st->w.errors++;
      return NULL;
    }
    one[0] = st->reg;
    return one;
  }
  tl_expr **ix = rw_list(st, n, idx, depth);
  if (!ix) return NULL;
  one[0] = flat_index(st, loc, L, n, ix);
  return one[0] ? one : NULL;
}

/* Shared buffers live in their flat 1-D buffer (smem_layout.h): an access
 * b[(stage,) row, col] (indices already rewritten) becomes
 * flat[tl_smem_offset(stage, row, col)]; leading dims beyond the stage are
 * folded into it row-major.  Returns the flat buffer and sets ix[0]; NULL
 * (b itself untouched) when b is not shared. */
static tl_buffer *shared_access(lt_state *st, tl_loc loc, tl_buffer *b, int *n, tl_expr **ix) {
  if (!b || (b->scope != TL_SCOPE_SHARED && b->scope != TL_SCOPE_SHARED_DYN) || *n != b->ndim || *n < 1) return NULL;
  tl_smem_layout *L = tl_smem_layout_get(st->w.m, b);
  if (!L) return NULL;
  tl_module *m = st->w.m;
  int k = *n;
  tl_expr *col = ix[k - 1], *row = k >= 2 ? ix[k - 2] : tl_lo_int(m, loc, 0), *stage = NULL;
  for (int d = 0; d + 2 < k; d++) {
    int64_t dim = 1;
    tl_expr_is_const_int(b->shape[d], &dim);
    stage = stage ? tl_lo_add(m, loc, tl_lo_mul(m, loc, stage, dim), ix[d]) : ix[d];
  }
  tl_expr *off = tl_smem_offset(m, loc, L, stage, row, col);
  if (!off) {
    st->w.oom = true;
    return NULL;
  }
  ix[0] = off;
  *n = 1;
  return L->flat;
}

/* T.ptx_cp_async(dst, off, src, src_off, bytes, pred) written in the tile
 * program (TileLang's T.ptx_cp_async, lib/Frontend/elab_cp_async.c): off
 * is dst's row-major element offset; the flat buffer's is the layout's
 * offset of the same element, (stage, row, col) = off split by dst's last
 * two dims.  A copy (4, 8 or 16 bytes, aligned to its size: the executor
 * and the hardware check it) then lies inside one 16-byte unit of a row,
 * which the swizzles move whole, provided rows are a whole number of 16-byte
 * units; otherwise refused.  NULL: the default copy (a plain layout). */
static tl_expr *cp_async_call(lt_state *st, const tl_expr *e, int depth) {
  tl_module *m = st->w.m;
  const tl_expr *d = e->u.call.n == 6 ? e->u.call.args[0] : NULL;
  tl_buffer *b = d && d->kind == TL_EXPR_BUFFER ? d->u.buffer : NULL;
  if (!b || (b->scope != TL_SCOPE_SHARED && b->scope != TL_SCOPE_SHARED_DYN)) return NULL;
  tl_smem_layout *L = tl_smem_layout_get(m, b);
  if (!L) {
    st->w.oom = st->rw.failed = true;
    return NULL;
  }
  if (!L->swizzle_bytes && !L->wgmma && L->row_stride == L->cols) return NULL;
  if ((L->cols * L->elem_bytes) % 16 || (L->row_stride * L->elem_bytes) % 16) {
    tl_error(st->w.d, e->loc,
             "T.ptx_cp_async into the shared buffer '%s' (rows of %d bytes, a swizzled or padded layout): rows that "
             "are not a whole number of 16-byte units are not lowered yet",
             b->name, L->cols * L->elem_bytes);
    st->w.errors++;
    st->rw.failed = true;
    return NULL;
  }
  tl_expr **a = tl_rewrite_exprs(&st->rw, 6, e->u.call.args, 0, depth + 1);
  if (!a) return NULL;
  tl_loc loc = e->loc;
  tl_expr *off = a[1];
  tl_expr *col = tl_ir_binary(m, loc, TL_OP_FLOORMOD, off, tl_lo_int(m, loc, L->cols));
  tl_expr *rows = off && L->rows > 1 ? tl_ir_binary(m, loc, TL_OP_FLOORDIV, off, tl_lo_int(m, loc, L->cols)) : NULL;
  tl_expr *row = rows ? tl_ir_binary(m, loc, TL_OP_FLOORMOD, rows, tl_lo_int(m, loc, L->rows)) : tl_lo_int(m, loc, 0);
  tl_expr *stage =
      b->ndim > 2 ? tl_ir_binary(m, loc, TL_OP_FLOORDIV, off, tl_lo_int(m, loc, (int64_t)L->rows * L->cols)) : NULL;
  a[1] = col && row && (stage || b->ndim <= 2) ? tl_smem_offset(m, loc, L, stage, row, col) : NULL;
  tl_expr *c = a[1] ? tl_ir_call(m, loc, TL_INTRIN_PTX_CP_ASYNC, 6, a) : NULL;
  if (!c) st->w.oom = st->rw.failed = true;
  return c;
}

/* The rewriter's hook: loads (fragment registers, flat shared buffers),
 * shared buffer operands and vector casts; NULL: the default copy. */
static tl_expr *lower_expr(tl_rewriter *rw, const tl_expr *e, int depth) {
  lt_state *st = (lt_state *)rw;
  tl_module *m = st->w.m;
  switch (e->kind) {
  case TL_EXPR_CAST: {
    tl_expr *x = rw_expr(st, e->u.cast.value, depth + 1);
    tl_expr *r = x ? tl_lo_cast(m, e->loc, e->dtype, x) : NULL;
    if (!r) rw->failed = true;
    return r;
  }
  case TL_EXPR_LOAD: {
    int n;
    tl_expr **ix = rw_access(st, e->loc, e->u.load.buffer, e->u.load.n, e->u.load.indices, &n, depth);
    tl_buffer *fb = ix ? shared_access(st, e->loc, e->u.load.buffer, &n, ix) : NULL;
    tl_expr *ld = ix && !st->w.oom ? tl_ir_load(m, e->loc, fb ? fb : e->u.load.buffer, n, ix) : NULL;
    if (ld && fb && e->dtype.lanes == 1) ld->dtype = e->dtype;
    if (!ld) rw->failed = true;
    return ld;
  }
  case TL_EXPR_BUFFER: {
    /* A shared buffer passed to an intrinsic (T.ptx_cp_async, T.ptx_ldmatrix
       * in hand-written SIMT input) names the flat buffer that replaces it. */
    tl_buffer *b = e->u.buffer;
    if (b && (b->scope == TL_SCOPE_SHARED || b->scope == TL_SCOPE_SHARED_DYN)) {
      tl_smem_layout *L = tl_smem_layout_get(m, b);
      if (!L) {
        st->w.oom = rw->failed = true;
        return NULL;
      }
      if (L->flat != b) return tl_ir_buffer_ref(m, e->loc, L->flat);
    }
    return NULL;
  }
  case TL_EXPR_CALL: {
    if (e->u.call.op == TL_INTRIN_PTX_CP_ASYNC) return cp_async_call(st, e, depth);
    /* T.ptx_atomic_add / _max / _min into a shared buffer: its offset is the row-major one
       * (lower_atomic.c), which the flat buffer keeps only without a swizzle or padding */
    int op = e->u.call.op;
    const tl_expr *d = e->u.call.n >= 1 ? e->u.call.args[0] : NULL;
    if ((op != TL_INTRIN_PTX_ATOMIC_ADD && op != TL_INTRIN_PTX_ATOMIC_MAX && op != TL_INTRIN_PTX_ATOMIC_MIN) || !d ||
        d->kind != TL_EXPR_BUFFER || !d->u.buffer ||
        (d->u.buffer->scope != TL_SCOPE_SHARED && d->u.buffer->scope != TL_SCOPE_SHARED_DYN))
      return NULL;
    tl_smem_layout *L = tl_smem_layout_get(m, d->u.buffer);
    if (!L) {
      st->w.oom = rw->failed = true;
      return NULL;
    }
    if (L->swizzle_bytes || L->wgmma || L->row_stride != L->cols) {
      tl_error(st->w.d, e->loc,
               "an atomic into the shared buffer '%s', which a T.gemm reads through a swizzled layout, is not "
               "lowered yet",
               d->u.buffer->name);
      st->w.errors++;
      rw->failed = true;
    }
    return NULL;
  }
  default: return NULL;
  }
}

/* -------------------------------------------------------------- T.Parallel */
typedef struct par_ctx {
  const tl_stmt *loop;
  tl_var *lane; /* analysis lane variable */
} par_ctx;

static tl_stmt *rw_stmt(lt_state *st, const tl_stmt *s, int depth);

/* The loop body with loop var k := min_k + idx[k] (+ lane for the last) and
 * the register index reg + lane. */
static tl_stmt *par_body(lt_state *st, const tl_stmt *loop, tl_expr **idx, tl_expr *reg, tl_expr *lane) {
  tl_module *m = st->w.m;
  int n = loop->u.loop.nvars;
  tl_loc loc = loop->loc;
  for (int k = 0; k < n; k++) {
    tl_expr *x = idx[k];
    if (k == n - 1 && lane) x = tl_lo_add(m, loc, x, lane);
    if (loop->u.loop.mins && loop->u.loop.mins[k]) x = tl_lo_add(m, loc, rw_expr(st, loop->u.loop.mins[k], 0), x);
    CHECK(x);
    CHECK(tl_map_put(&st->subst, loop->u.loop.vars[k], x));
  }
  const tl_stmt *saved_loop = st->loop;
  tl_expr *saved_reg = st->reg;
  st->loop = loop;
  st->reg = lane ? tl_lo_add(m, loc, reg, lane) : reg;
  tl_stmt *b = rw_stmt(st, loop->u.loop.body, 1);
  st->loop = saved_loop;
  st->reg = saved_reg;
  for (int k = 0; k < n; k++) tl_map_remove(&st->subst, loop->u.loop.vars[k]);
  return b;
}

/* Emits the lanes of one chunk: v lanes, vectorized by w where proven. */
static tl_stmt *par_chunk(lt_state *st, void *user, const plan *p, tl_expr **idx, tl_expr *reg) {
  const tl_stmt *loop = user;
  tl_module *m = st->w.m;
  tl_loc loc = loop->loc;
  int64_t v = p->vec;
  if (v == 1) return par_body(st, loop, idx, reg, NULL);
  tl_var *l;
  CHECK(l = tl_names_fresh_var(&st->w.names, loc, "vl", TL_INT32, TL_VAR_LOOP));
  CHECK(tl_ranges_set(&st->w.ranges, l, 0, v - 1));
  tl_stmt *probe = par_body(st, loop, idx, reg, tl_ir_var(m, loc, l));
  tl_ranges_unset(&st->w.ranges, l);
  if (!probe) return NULL;
  int64_t w = tl_lo_body_vec_width(probe, l, v);
  tl_var *lo = NULL, *li = NULL;
  tl_expr *lane = NULL;
  if (v / w > 1) {
    CHECK(lo = tl_names_fresh_var(&st->w.names, loc, "vo", TL_INT32, TL_VAR_LOOP));
    CHECK(tl_ranges_set(&st->w.ranges, lo, 0, v / w - 1));
    lane = tl_lo_mul(m, loc, tl_ir_var(m, loc, lo), w);
  }
  if (w > 1) {
    CHECK(li = tl_names_fresh_var(&st->w.names, loc, "vi", TL_INT32, TL_VAR_LOOP));
    CHECK(tl_ranges_set(&st->w.ranges, li, 0, w - 1));
    tl_expr *x = tl_ir_var(m, loc, li);
    lane = lane ? tl_lo_add(m, loc, lane, x) : x;
  }
  CHECK(lane);
  tl_stmt *body = par_body(st, loop, idx, reg, lane);
  if (!body) return NULL;
  if (li) {
    tl_ranges_unset(&st->w.ranges, li);
    CHECK(body = tl_lo_for(m, loc, TL_LOOP_VECTORIZED, li, tl_lo_int(m, loc, w), body));
  }
  if (lo) {
    tl_ranges_unset(&st->w.ranges, lo);
    CHECK(body = tl_lo_for(m, loc, TL_LOOP_UNROLL, lo, tl_lo_int(m, loc, v / w), body));
  }
  return body;
}

/* What lower_parallel needs to know of a T.Parallel body, gathered by a
 * tl_visitor (pre-order, so "first" is in program order). */
typedef struct par_scan {
  tl_visitor v; /* first: the callbacks get &ps->v */
  const tl_stmt *loop;
  tl_buffer *plan_frag;    /* a PLAN fragment indexed by the loop variables */
  tl_buffer *repl_written; /* a REPLICATED fragment the loop stores to */
  tl_buffer *stat;         /* a REDUCER fragment read as D[first loop variable] (row statistics) */
  int bytes;               /* the widest element accessed */
  /* it stores to a buffer that is not a fragment or per-thread (global or
   * shared memory): then only replica 0 of a replicated partition runs it */
  bool stores_memory;
} par_scan;

static void scan_access(par_scan *ps, const tl_buffer *b, int n, tl_expr **idx, bool store) {
  int bb = tl_dtype_bytes(b->dtype);
  if (bb > ps->bytes) ps->bytes = bb;
  tl_frag_layout *L = tl_frag_layout_of(b);
  if (!L) return;
  if (frag_distributed(L) && !ps->plan_frag && tl_lo_identity_access(ps->loop, b, n, idx))
    ps->plan_frag = (tl_buffer *)b;
  if (L->kind == TL_FRAG_REPLICATED && store && !ps->repl_written) ps->repl_written = (tl_buffer *)b;
  if (L->kind == TL_FRAG_REDUCER && !store && !ps->stat && n == 1 && idx[0] && idx[0]->kind == TL_EXPR_VAR &&
      ps->loop->u.loop.nvars >= 2 && idx[0]->u.var == ps->loop->u.loop.vars[0])
    ps->stat = (tl_buffer *)b;
}

static void scan_expr(tl_visitor *v, const tl_expr *e) {
  if (e->kind == TL_EXPR_LOAD) scan_access((par_scan *)v, e->u.load.buffer, e->u.load.n, e->u.load.indices, false);
}

static void scan_stmt(tl_visitor *v, const tl_stmt *s) {
  par_scan *ps = (par_scan *)v;
  if (s->kind != TL_STMT_STORE) return;
  scan_access(ps, s->u.store.buffer, s->u.store.n, s->u.store.indices, true);
  tl_scope sc = s->u.store.buffer ? s->u.store.buffer->scope : TL_SCOPE_LOCAL;
  if (sc == TL_SCOPE_GLOBAL || sc == TL_SCOPE_SHARED || sc == TL_SCOPE_SHARED_DYN) ps->stores_memory = true;
}

/* Every thread runs every iteration (the loop writes a replicated fragment). */
static tl_stmt *par_all(lt_state *st, const tl_stmt *loop) {
  tl_module *m = st->w.m;
  tl_loc loc = loop->loc;
  tl_stmt *body = rw_stmt(st, loop->u.loop.body, 1);
  if (!body) return NULL;
  for (int k = loop->u.loop.nvars - 1; k >= 0; k--) {
    tl_stmt *f = tl_lo_for(m, loc, TL_LOOP_SERIAL, loop->u.loop.vars[k], rw_expr(st, loop->u.loop.extents[k], 0), body);
    CHECK(f);
    if (loop->u.loop.mins && loop->u.loop.mins[k]) CHECK(f->u.loop.mins[0] = rw_expr(st, loop->u.loop.mins[k], 0));
    body = f;
  }
  return body;
}

/* A loop over (i, j...) that reads row statistics D[i] and indexes no
 * fragment of its rows (layout_infer.c check_stat_loops): D's REDUCER
 * partition gives row i (the statistic register is the row register), the
 * other variables run serially:
 *     <REDUCER walk: i, register rk>  for j... in T.serial: body
 * only replica 0 runs it when it stores to memory. */
static tl_stmt *stat_chunk(lt_state *st, void *user, const plan *p, tl_expr **idx, tl_expr *reg) {
  const tl_stmt *loop = user;
  tl_module *m = st->w.m;
  tl_loc loc = loop->loc;
  tl_expr *i = idx[0];
  if (loop->u.loop.mins && loop->u.loop.mins[0]) CHECK(i = tl_lo_add(m, loc, rw_expr(st, loop->u.loop.mins[0], 0), i));
  CHECK(tl_map_put(&st->subst, loop->u.loop.vars[0], i));
  const tl_frag_layout *saved_part = st->part;
  tl_expr *saved_row = st->row_reg;
  const tl_stmt *saved_loop = st->loop;
  st->part = p->lay->src;
  st->row_reg = reg;
  st->loop = loop;
  tl_stmt *body = rw_stmt(st, loop->u.loop.body, 1);
  st->part = saved_part;
  st->row_reg = saved_row;
  st->loop = saved_loop;
  tl_map_remove(&st->subst, loop->u.loop.vars[0]);
  if (!body) return NULL;
  for (int k = loop->u.loop.nvars - 1; k >= 1; k--) {
    tl_stmt *f = tl_lo_for(m, loc, TL_LOOP_SERIAL, loop->u.loop.vars[k], rw_expr(st, loop->u.loop.extents[k], 0), body);
    CHECK(f);
    if (loop->u.loop.mins && loop->u.loop.mins[k]) CHECK(f->u.loop.mins[0] = rw_expr(st, loop->u.loop.mins[k], 0));
    body = f;
  }
  return body;
}

/* Dynamic extents: for q in ceildiv(E, T): f = q*T + tid; if f < E: body. */
static tl_stmt *par_dynamic(lt_state *st, const tl_stmt *loop) {
  tl_module *m = st->w.m;
  tl_loc loc = loop->loc;
  int n = loop->u.loop.nvars;
  tl_expr **ext = rw_list(st, n, loop->u.loop.extents, 0);
  if (!ext) return NULL;
  tl_expr *total = tl_lo_int(m, loc, 1);
  for (int k = 0; k < n; k++) total = tl_ir_binary(m, loc, TL_OP_MUL, total, ext[k]);
  CHECK(total);
  tl_var *q;
  CHECK(q = tl_names_fresh_var(&st->w.names, loc, "vq", TL_INT32, TL_VAR_LOOP));
  int cd = TL_INTRIN_CEILDIV;
  tl_expr *args[2] = {total, tl_lo_int(m, loc, st->threads)};
  tl_expr *trips = cd >= 0 ? tl_ir_call(m, loc, cd, 2, args) : NULL;
  CHECK(trips);
  tl_expr *f = tl_lo_add(m, loc, tl_lo_mul(m, loc, tl_ir_var(m, loc, q), st->threads), tl_lo_thread_index(m, loc));
  CHECK(f);
  tl_expr **idx = tl_arena_alloc(&m->arena, sizeof(tl_expr *) * (size_t)n);
  CHECK(idx);
  tl_expr *stride = tl_lo_int(m, loc, 1);
  for (int k = n - 1; k >= 0; k--) {
    tl_expr *x = tl_ir_binary(m, loc, TL_OP_FLOORDIV, f, stride);
    if (k > 0) x = tl_ir_binary(m, loc, TL_OP_FLOORMOD, x, ext[k]);
    CHECK(idx[k] = x);
    CHECK(stride = tl_ir_binary(m, loc, TL_OP_MUL, stride, ext[k]));
  }
  tl_stmt *body = par_body(st, loop, idx, NULL, NULL);
  if (!body) return NULL;
  CHECK(body = tl_lo_if(m, loc, tl_ir_binary(m, loc, TL_OP_LT, f, total), body, NULL));
  return tl_lo_for(m, loc, TL_LOOP_SERIAL, q, trips, body);
}

static tl_stmt *lower_parallel(lt_state *st, const tl_stmt *loop) {
  par_scan ps = {.v = {.expr = scan_expr, .stmt = scan_stmt}, .loop = loop, .bytes = 1};
  tl_visit_stmt(&ps.v, loop->u.loop.body);
  if (ps.plan_frag && ps.repl_written) {
    tl_error(st->w.d, loop->loc,
             "layout conflict in T.Parallel loop: it is partitioned over the threads by fragment '%s' "
             "but writes fragment '%s', which every thread holds whole",
             ps.plan_frag->name, ps.repl_written->name);
    st->w.errors++;
    return NULL;
  }
  if (ps.repl_written) return par_all(st, loop);
  plan p;
  if (!ps.plan_frag && ps.stat) {
    lt_plan_for_layout(&p, tl_frag_layout_of(ps.stat));
    p.rep_guard = ps.stores_memory;
    return lt_emit_plan(st, loop->loc, &p, stat_chunk, (void *)loop);
  }
  if (ps.plan_frag) {
    lt_plan_for_layout(&p, tl_frag_layout_of(ps.plan_frag));
    p.rep_guard = frag_replicas(p.lay) && ps.stores_memory;
  } else {
    int n = loop->u.loop.nvars;
    int64_t *shape = tl_arena_alloc(&st->w.m->arena, sizeof(int64_t) * (size_t)n);
    CHECK(shape);
    int64_t total = 1;
    for (int k = 0; k < n; k++) {
      if (!tl_expr_is_const_int(loop->u.loop.extents[k], &shape[k]) || shape[k] < 1 ||
          __builtin_mul_overflow(total, shape[k], &total) || total > INT32_MAX)
        return par_dynamic(st, loop);
    }
    lt_plan_for_shape(&p, n, shape, st->threads, ps.bytes);
  }
  const tl_frag_layout *saved = st->loop_part;
  st->loop_part = ps.plan_frag ? tl_frag_layout_of(ps.plan_frag) : NULL;
  tl_stmt *r = lt_emit_plan(st, loop->loc, &p, par_chunk, (void *)loop);
  st->loop_part = saved;
  return r;
}

/* ------------------------------------------------------ T.copy and T.fill */
/* SIDE_SHARED: a shared buffer, addressed through its flat buffer
 * (tl_lower_smem_index; lower_shared_copy.c). */
/* SIDE_STACK: one row F[l, :] of a STACKED fragment copied to or from a
 * fragment of its base layout: register value + reg (value = l * base nregs). */
typedef enum { SIDE_GLOBAL, SIDE_LOCAL, SIDE_PLAN, SIDE_CONST, SIDE_SHARED, SIDE_STACK } side_kind;

typedef struct side {
  side_kind kind;
  tl_buffer *buf;
  int ndim;
  tl_expr **min;     /* per buffer dim (rewritten) */
  int *map;          /* buffer dim → domain dim, or -1 (extent 1) */
  tl_frag_layout *L; /* fragments */
  tl_expr *value;    /* SIDE_CONST (scalar, rewritten); SIDE_STACK: the register offset */
  int64_t *ext;      /* per buffer dim: the region's extents */
} side;

/* sub: a distributed fragment side that is a sub-region of its fragment
 * (acc_o[:h, :] → shared): the walk covers the fragment's whole layout, the
 * domain is the region (domain index = fragment index − region start) and
 * the elements outside it are skipped (sub_cond). */
typedef struct copy_ctx {
  tl_loc loc;
  side src, dst;
  int ndom;
  const side *sub;
} copy_ctx;

/* Region extents as constants (whole buffer when ndim == 0). */
static bool region_extents(const tl_region *r, int *n, int64_t **ext, tl_arena *a) {
  const tl_buffer *b = r->buffer;
  *n = r->ndim ? r->ndim : b->ndim;
  *ext = tl_arena_alloc(a, sizeof(int64_t) * (size_t)(*n > 0 ? *n : 1));
  if (!*ext) return false;
  for (int k = 0; k < *n; k++) {
    tl_expr *e = r->ndim ? r->extent[k] : b->shape[k];
    if (!tl_expr_affine_const(e, &(*ext)[k])) (*ext)[k] = -1;
  }
  return true;
}

/* Sets up a side over region r; maps its non-unit dims onto the domain's. */
static bool make_side(lt_state *st, side *sd, const tl_region *r, int ndom, const int64_t *dom, tl_loc loc,
                      const char *opname) {
  tl_buffer *b = r->buffer;
  int n;
  int64_t *ext;
  if (!region_extents(r, &n, &ext, &st->w.m->arena)) {
    st->w.oom = true;
    return false;
  }
  sd->buf = b;
  sd->ndim = n;
  sd->ext = ext;
  sd->L = tl_frag_layout_of(b);
  sd->kind = b->scope == TL_SCOPE_GLOBAL                                        ? SIDE_GLOBAL
             : (b->scope == TL_SCOPE_SHARED || b->scope == TL_SCOPE_SHARED_DYN) ? SIDE_SHARED
             : frag_distributed(sd->L)                                          ? SIDE_PLAN
                                                                                : SIDE_LOCAL;
  sd->min = tl_arena_alloc(&st->w.m->arena, sizeof(tl_expr *) * (size_t)(n > 0 ? n : 1));
  sd->map = tl_arena_alloc(&st->w.m->arena, sizeof(int) * (size_t)(n > 0 ? n : 1));
  if (!sd->min || !sd->map) {
    st->w.oom = true;
    return false;
  }
  int dk = 0;
  for (int k = 0; k < n; k++) {
    sd->min[k] = r->ndim ? rw_expr(st, r->min[k], 0) : tl_lo_int(st->w.m, loc, 0);
    if (!sd->min[k]) {
      st->w.oom = true;
      return false;
    }
    if (ext[k] < 0) {
      fail(st, loc, "%s with a non-constant extent (operand '%s') is not lowered yet", opname, b->name);
      return false;
    }
    if (ext[k] == 1) {
      sd->map[k] = -1;
      continue;
    }
    while (dk < ndom && dom[dk] == 1) dk++;
    if (dk >= ndom || dom[dk] != ext[k]) {
      fail(st, loc, "%s operand '%s' does not match the shape of the other operand", opname, b->name);
      return false;
    }
    sd->map[k] = dk++;
  }
  while (dk < ndom && dom[dk] == 1) dk++;
  if (dk != ndom) {
    fail(st, loc, "%s operand '%s' does not match the shape of the other operand", opname, b->name);
    return false;
  }
  return true;
}

/* The indices of side sd at domain element idx (last domain index + lane). */
static tl_expr **side_indices(lt_state *st, const side *sd, int ndom, tl_expr **idx, tl_expr *reg, tl_expr *lane,
                              tl_loc loc, int *n_out) {
  tl_module *m = st->w.m;
  if (sd->kind == SIDE_PLAN || sd->kind == SIDE_STACK) {
    tl_expr **one = tl_arena_alloc(&m->arena, sizeof(tl_expr *));
    if (!one) return NULL;
    one[0] = lane ? tl_lo_add(m, loc, reg, lane) : reg;
    if (sd->kind == SIDE_STACK && one[0]) one[0] = tl_lo_add(m, loc, sd->value, one[0]);
    *n_out = 1;
    return one[0] ? one : NULL;
  }
  tl_expr **ix = tl_arena_alloc(&m->arena, sizeof(tl_expr *) * (size_t)(sd->ndim > 0 ? sd->ndim : 1));
  if (!ix) return NULL;
  for (int k = 0; k < sd->ndim; k++) {
    tl_expr *x = sd->min[k];
    if (sd->map[k] >= 0) {
      tl_expr *d = idx[sd->map[k]];
      if (sd->map[k] == ndom - 1 && lane) d = tl_lo_add(m, loc, d, lane);
      x = tl_lo_add(m, loc, x, d);
    }
    if (!(ix[k] = x)) return NULL;
  }
  *n_out = sd->ndim;
  if (sd->kind == SIDE_SHARED) { /* flat offset in the shared block */
    tl_expr **one = tl_arena_alloc(&m->arena, sizeof(tl_expr *));
    if (!one || !(one[0] = tl_lower_smem_index(m, loc, sd->buf, sd->ndim, ix))) return NULL;
    *n_out = 1;
    return one;
  }
  if (sd->L) { /* replicated fragment: flat register index */
    tl_expr **one = tl_arena_alloc(&m->arena, sizeof(tl_expr *));
    if (!one || !(one[0] = flat_index(st, loc, sd->L, sd->ndim, ix))) return NULL;
    *n_out = 1;
    return one;
  }
  return ix;
}

/* In-bounds condition of a global access (first lane; `span` lanes when the
 * whole vector must be in bounds).  Provably true parts are dropped. */
static tl_expr *bounds_cond(lt_state *st, const tl_buffer *b, int n, tl_expr **ix, int64_t span, tl_loc loc) {
  return tl_lo_bounds_cond(st->w.m, loc, &st->w.ranges, b, n, ix, span, tl_ir_int(st->w.m, loc, TL_BOOL, 1));
}

/* TEST HOOK, not a feature: with the environment variable
 * TL_TEST_FAULT=swap_lanes, fragment → global copies are lowered wrongly on
 * purpose: threads 0 and 1 exchange the global positions they store to (the
 * thread index t in the destination indices becomes t < 2 ? 1 - t : t), so
 * every element is still written but two threads' elements trade places.
 * tests/IR/tl-run uses it to show that `tl-run --check` catches a wrong
 * lowering.  (The GEMM lowering may add other faults under the same
 * variable, e.g. swapped mma C fragment lanes.) */
static bool fault_swap_lanes(void) {
  const char *f = getenv("TL_TEST_FAULT");
  return f && strcmp(f, "swap_lanes") == 0;
}

static tl_expr *swap_tid_rec(tl_module *m, tl_expr *e, int depth) {
  if (!e || depth > 200) return e;
  tl_loc loc = e->loc;
  switch (e->kind) {
  case TL_EXPR_CALL:
    if (e->u.call.op == TL_INTRIN_GET_THREAD_BINDING && e->u.call.n == 1 && e->u.call.args[0]->kind == TL_EXPR_INT &&
        e->u.call.args[0]->u.ival == 0) {
      tl_expr *two = tl_lo_int(m, loc, 2), *one = tl_lo_int(m, loc, 1);
      if (!two || !one) return NULL;
      tl_expr *c = tl_ir_binary(m, loc, TL_OP_LT, e, two);
      tl_expr *t = tl_ir_binary(m, loc, TL_OP_SUB, one, e);
      return c && t ? tl_ir_select(m, loc, c, t, e) : NULL;
    }
    return e;
  case TL_EXPR_BINARY: {
    tl_expr *a = swap_tid_rec(m, e->u.bin.a, depth + 1), *b = swap_tid_rec(m, e->u.bin.b, depth + 1);
    if (!a || !b) return NULL;
    return a == e->u.bin.a && b == e->u.bin.b ? e : tl_ir_binary(m, loc, e->u.bin.op, a, b);
  }
  case TL_EXPR_CAST: {
    tl_expr *v = swap_tid_rec(m, e->u.cast.value, depth + 1);
    return !v || v == e->u.cast.value ? v ? e : NULL : tl_ir_cast(m, loc, e->dtype, v);
  }
  default: return e;
  }
}

/* The buffer a side's accesses use (the flat buffer of a shared side). */
static tl_buffer *side_buffer(lt_state *st, const side *sd) {
  if (sd->kind != SIDE_SHARED) return sd->buf;
  tl_smem_layout *L = tl_smem_layout_get(st->w.m, sd->buf);
  return L ? L->flat : NULL;
}

/* The condition that domain element idx (+ lane .. + lane + w - 1 in the
 * last dim) lies inside the sub-region c->sub (domain indices are fragment
 * indices minus the region's start), in *out; the parts the ranges prove
 * are dropped (*out NULL when all are).  False when out of memory. */
static bool sub_cond(lt_state *st, const copy_ctx *c, tl_expr **idx, tl_expr *lane, int64_t w, tl_expr **out) {
  tl_module *m = st->w.m;
  tl_loc loc = c->loc;
  *out = NULL;
  for (int k = 0; k < c->ndom; k++) {
    tl_expr *d = idx[k];
    if (k == c->ndom - 1 && lane) d = tl_lo_add(m, loc, d, lane);
    if (!d) return false;
    int64_t hi = c->sub->ext[k] - (k == c->ndom - 1 ? w : 1);
    tl_range r;
    bool known = tl_expr_range(&st->w.ranges, d, &r);
    tl_expr *parts[2] = {NULL, NULL};
    if (!(known && r.lo >= 0) && !(parts[0] = tl_ir_binary(m, loc, TL_OP_GE, d, tl_lo_int(m, loc, 0)))) return false;
    if (!(known && r.hi <= hi) && !(parts[1] = tl_ir_binary(m, loc, TL_OP_LE, d, tl_lo_int(m, loc, hi)))) return false;
    for (int i = 0; i < 2; i++) {
      if (!parts[i]) continue;
      *out = *out ? tl_ir_binary(m, loc, TL_OP_AND, *out, parts[i]) : parts[i];
      if (!*out) return false;
    }
  }
  return true;
}

/* One piece of w lanes starting at lane offset `lane` (NULL: 0).  checked:
 * emit bounds guards (false inside a proven full-vector branch). */
static tl_stmt *copy_piece(lt_state *st, copy_ctx *c, tl_expr **idx, tl_expr *reg, tl_expr *lane, int64_t w,
                           bool checked) {
  tl_module *m = st->w.m;
  tl_loc loc = c->loc;
  int nd, ns = 0;
  tl_expr **di = side_indices(st, &c->dst, c->ndom, idx, reg, lane, loc, &nd);
  CHECK(di);
  if (c->dst.kind == SIDE_GLOBAL && c->src.kind == SIDE_PLAN && fault_swap_lanes())
    for (int k = 0; k < nd; k++) CHECK(di[k] = swap_tid_rec(m, di[k], 0));
  tl_expr **si = NULL;
  if (c->src.kind != SIDE_CONST) CHECK(si = side_indices(st, &c->src, c->ndom, idx, reg, lane, loc, &ns));
  tl_expr *dcond = NULL, *scond = NULL;
  if (checked && c->dst.kind == SIDE_GLOBAL) CHECK(dcond = bounds_cond(st, c->dst.buf, nd, di, 1, loc));
  if (checked && c->src.kind == SIDE_GLOBAL) CHECK(scond = bounds_cond(st, c->src.buf, ns, si, 1, loc));
  tl_dtype dt = c->dst.buf->dtype;
  dt.lanes = (uint16_t)w;
  tl_expr *val;
  if (c->src.kind == SIDE_CONST) {
    tl_dtype s1 = dt;
    s1.lanes = 1;
    val = tl_lo_broadcast(m, loc, tl_ir_cast(m, loc, s1, c->src.value), (int)w);
  } else {
    tl_dtype st_t = c->src.buf->dtype;
    st_t.lanes = (uint16_t)w;
    if (w > 1) CHECK(si[ns - 1] = tl_lo_ramp(m, loc, si[ns - 1], (int)w));
    tl_expr *ld = tl_ir_load(m, loc, side_buffer(st, &c->src), ns, si);
    CHECK(ld);
    ld->dtype = st_t;
    val = tl_lo_cast(m, loc, dt, ld);
  }
  CHECK(val);
  tl_expr **dix = tl_arena_alloc(&m->arena, sizeof(tl_expr *) * (size_t)nd);
  CHECK(dix);
  memcpy(dix, di, sizeof(tl_expr *) * (size_t)nd);
  if (w > 1) CHECK(dix[nd - 1] = tl_lo_ramp(m, loc, dix[nd - 1], (int)w));
  tl_stmt *s = tl_lo_store(m, loc, side_buffer(st, &c->dst), nd, dix, val);
  CHECK(s);
  if (scond) {
    tl_stmt *z =
        tl_lo_store(m, loc, side_buffer(st, &c->dst), nd, dix, tl_lo_broadcast(m, loc, zero_of(st, loc, dt), (int)w));
    CHECK(z);
    CHECK(s = tl_lo_if(m, loc, scond, s, z));
  }
  if (dcond) CHECK(s = tl_lo_if(m, loc, dcond, s, NULL));
  tl_expr *in = NULL;
  if (c->sub) {
    CHECK(sub_cond(st, c, idx, lane, w, &in));
    if (in) CHECK(s = tl_lo_if(m, loc, in, s, NULL));
  }
  return s;
}

/* May a global side's vector of w lanes straddle the end of its last dim? */
static bool side_tail(const side *sd, int64_t w) {
  if (sd->kind != SIDE_GLOBAL || w == 1) return false;
  int64_t dim;
  return !(tl_expr_is_const_int(sd->buf->shape[sd->ndim - 1], &dim) && dim % w == 0);
}

static bool side_vec_ok(lt_state *st, copy_ctx *c, const side *sd, tl_expr **idx, tl_expr *reg, tl_var *l, int64_t w) {
  if (sd->kind == SIDE_CONST) return true;
  if (sd->kind == SIDE_PLAN || sd->kind == SIDE_STACK) return w * tl_dtype_bytes(sd->buf->dtype) <= 16;
  if (sd->kind == SIDE_SHARED) { /* judged on the logical indices */
    side lg = *sd;
    lg.kind = SIDE_GLOBAL;
    int nl;
    tl_expr **lx = side_indices(st, &lg, c->ndom, idx, reg, tl_ir_var(st->w.m, c->loc, l), c->loc, &nl);
    if (!lx) {
      st->w.oom = true;
      return false;
    }
    return tl_lower_smem_vec_ok(st->w.m, sd->buf, nl, lx, l, w);
  }
  int n;
  tl_expr **ix = side_indices(st, sd, c->ndom, idx, reg, tl_ir_var(st->w.m, c->loc, l), c->loc, &n);
  if (!ix) {
    st->w.oom = true;
    return false;
  }
  return tl_lo_access_vec_ok(sd->buf, n, ix, l, w, false);
}

/* May a vector of w lanes of a sub-region copy be wholly inside or wholly
 * outside the region (its start and extent in the last dim multiples of w)? */
static bool sub_vec_ok(const copy_ctx *c, int64_t w) {
  if (!c->sub) return true;
  int k = c->sub->ndim - 1;
  return c->sub->ext[k] % w == 0 && tl_expr_divisible(c->sub->min[k], w, NULL);
}

static tl_stmt *copy_chunk(lt_state *st, void *user, const plan *p, tl_expr **idx, tl_expr *reg) {
  copy_ctx *c = user;
  tl_module *m = st->w.m;
  tl_loc loc = c->loc;
  if (c->sub) { /* fragment indices → domain indices */
    tl_expr **d = tl_arena_alloc(&m->arena, sizeof(tl_expr *) * (size_t)c->ndom);
    CHECK(d);
    for (int k = 0; k < c->ndom; k++) CHECK(d[k] = tl_ir_binary(m, loc, TL_OP_SUB, idx[k], c->sub->min[k]));
    idx = d;
  }
  int64_t v = p->vec, w = 1;
  if (v > 1) {
    tl_var *l;
    CHECK(l = tl_names_fresh_var(&st->w.names, loc, "vl", TL_INT32, TL_VAR_LOOP));
    for (w = v; w > 1; w /= 2)
      if (sub_vec_ok(c, w) && side_vec_ok(st, c, &c->src, idx, reg, l, w) &&
          side_vec_ok(st, c, &c->dst, idx, reg, l, w))
        break;
    if (st->w.oom) return NULL;
  }
  tl_var *lo = NULL;
  tl_expr *lane = NULL;
  if (v / w > 1) {
    CHECK(lo = tl_names_fresh_var(&st->w.names, loc, "vo", TL_INT32, TL_VAR_LOOP));
    CHECK(tl_ranges_set(&st->w.ranges, lo, 0, v / w - 1));
    CHECK(lane = tl_lo_mul(m, loc, tl_ir_var(m, loc, lo), w));
  }
  tl_stmt *body;
  if (side_tail(&c->src, w) || side_tail(&c->dst, w)) {
    /* full vector in bounds → vector; else per-lane guarded scalars */
    tl_expr *full = tl_ir_int(m, loc, TL_BOOL, 1);
    const side *sides[2] = {&c->src, &c->dst};
    for (int i = 0; i < 2; i++) {
      if (sides[i]->kind != SIDE_GLOBAL) continue;
      int n;
      tl_expr **ix = side_indices(st, sides[i], c->ndom, idx, reg, lane, loc, &n);
      CHECK(ix);
      CHECK(full = tl_ir_binary(m, loc, TL_OP_AND, full, bounds_cond(st, sides[i]->buf, n, ix, w, loc)));
    }
    tl_stmt *vec = copy_piece(st, c, idx, reg, lane, w, false);
    tl_var *li;
    CHECK(li = tl_names_fresh_var(&st->w.names, loc, "vi", TL_INT32, TL_VAR_LOOP));
    CHECK(tl_ranges_set(&st->w.ranges, li, 0, w - 1));
    tl_expr *sl = tl_ir_var(m, loc, li);
    if (lane) sl = tl_lo_add(m, loc, lane, sl);
    tl_stmt *sc = copy_piece(st, c, idx, reg, sl, 1, true);
    tl_ranges_unset(&st->w.ranges, li);
    CHECK(vec && sc);
    CHECK(sc = tl_lo_for(m, loc, TL_LOOP_UNROLL, li, tl_lo_int(m, loc, w), sc));
    CHECK(body = tl_lo_if(m, loc, full, vec, sc));
  } else {
    body = copy_piece(st, c, idx, reg, lane, w, true);
    if (!body) return NULL;
  }
  if (lo) {
    tl_ranges_unset(&st->w.ranges, lo);
    CHECK(body = tl_lo_for(m, loc, TL_LOOP_UNROLL, lo, tl_lo_int(m, loc, v / w), body));
  }
  return body;
}

/* ------------------------------------------- staged fragment → global copy */
static tl_stmt *block_sync(lt_state *st, tl_loc loc) { return tl_lo_sync_threads(st->w.m, loc); }

typedef struct stage_ctx {
  tl_buffer *src, *scratch;
  int64_t ld; /* scratch row length in elements (BN + 16 bytes of padding) */
} stage_ctx;

/* Phase 1 chunk (MMA_C partition): registers (reg, reg+1) = columns (j, j+1)
 * of row i → scratch[i*ld + j .. +1], converted to the output dtype. */
static tl_stmt *stage_chunk(lt_state *st, void *user, const plan *p, tl_expr **idx, tl_expr *reg) {
  (void)p;
  stage_ctx *sc = user;
  tl_module *m = st->w.m;
  tl_loc loc = sc->scratch->loc;
  tl_expr *at = tl_lo_add(m, loc, tl_lo_mul(m, loc, idx[0], sc->ld), idx[1]);
  tl_stmt *s;
  CHECK(s = tl_lo_store_pair(m, loc, sc->scratch, at, sc->src, reg, sc->scratch->dtype));
  return s;
}

/* T.copy(C_frag, C[m0, n0]) with C_frag of the mma C layout (MMA_C) and C a
 * 2-D global tensor whose rows are 16-byte aligned: the epilogue of a GEMM,
 * staged through shared memory so that the global stores are 16-byte
 * vectors, 8 lanes per 128-byte row segment (coalesced), instead of the
 * per-thread 2-element stores of the MMA_C partition (the "se" variant of the
 * hand-written mma.sync reference GEMM, docs/performance.md):
 *     alloc S: shared.dyn [BM * LD] of C's dtype, LD = BN + 16/bytes (the pad
 *              makes the 8 rows x 4 column pairs of one mma C store hit 32
 *              different banks: row stride = 4 banks mod 32)
 *     T.sync_threads()            (other warps may still read the pipeline's
 *                                  stage buffers, which S may reuse)
 *     MMA_C walk: S[i*LD + j : +2] = cast(C_frag[reg : +2])
 *     T.sync_threads()            (lanes read what other lanes of the warp wrote;
 *                                  the IR has no warp-level barrier)
 *     for it in T.unroll(WM*WN/(w*32)):      (w = 16 / bytes, one 16-byte vector)
 *         v = it*32 + lane, r = wm*WM + v / (WN/w), c = wn*WN + (v % (WN/w))*w
 *         if m0 + r < M and n0 + c + w - 1 < N:  C[m0 + r, n0 + c : +w] = S[r*LD + c : +w]
 * Each warp reads back only its own WM x WN sub-tile (8 lanes read 128
 * contiguous bytes of one row: no bank conflict).  Since N and n0 are
 * multiples of w, a vector is wholly in or out of bounds.  S is allocated
 * here, after the k loop, so smem_plan.c lets it reuse the dead stage
 * buffers; it is used only when it is no larger than the shared memory the
 * kernel allocated before the copy (the total never grows).  NULL without an
 * error (and st->w.oom unset) when the copy does not qualify: dynamic or
 * unaligned N, an n0 not provably a multiple of w, a warp tile whose vectors
 * do not split evenly over 32 lanes, or too little shared memory to reuse. */
static tl_stmt *lower_frag_to_global_staged(lt_state *st, const copy_ctx *c) {
  tl_module *m = st->w.m;
  tl_loc loc = c->loc;
  const tl_frag_layout *L = c->src.L;
  tl_buffer *C = c->dst.buf;
  if (c->ndom != 2 || L->ndim != 2 || C->ndim != 2 || C->strides || c->dst.ndim != 2 || c->dst.map[0] != 0 ||
      c->dst.map[1] != 1 || L->threads != st->threads || L->threads % 32 != 0)
    return NULL;
  int64_t bytes = tl_dtype_bytes(C->dtype), N;
  if (bytes < 1 || bytes > 8 || 16 % bytes != 0 || C->dtype.lanes != 1) return NULL;
  int64_t w = 16 / bytes, BM = L->shape[0], BN = L->shape[1], WM = L->warp_tile_m, WN = L->warp_tile_n;
  int64_t cpr = WN / w, ld = BN + w;
  if (WN % w != 0 || (WM * cpr) % 32 != 0) return NULL;
  if (!tl_expr_is_const_int(C->shape[1], &N) || N % w != 0) return NULL;
  if (!tl_expr_divisible(c->dst.min[1], w, NULL)) return NULL;
  if (st->ws && tl_ws_multi_tile(st->f) && st->target && st->target->tma && !st->f->pass_configs.disable_tma_store &&
      bytes == 2 && BN % 64 == 0 && BM <= 256 && tl_lo_is_param(st->f, C) && BM * BN * bytes <= st->smem_seen) {
    tl_stmt *r = tl_lower_tma_epilogue(m, &st->w.names, loc, c->src.buf, L, C, c->dst.min[0], c->dst.min[1],
                                       st->threads, fault_swap_lanes());
    CHECK(r);
    return r;
  }
  if (BM * ld * bytes > st->smem_seen) return NULL;
  tl_stmt *out[5] = {0};
  tl_var *nm;
  tl_expr **shape = tl_arena_alloc(&m->arena, sizeof(tl_expr *));
  CHECK(shape && (nm = tl_names_fresh_var(&st->w.names, loc, "C_stage", C->dtype, TL_VAR_LET)));
  CHECK(shape[0] = tl_lo_int(m, loc, BM * ld));
  tl_buffer *S = tl_ir_new_buffer(m, loc, nm->name, C->dtype, TL_SCOPE_SHARED_DYN, 1, shape);
  CHECK(S && (out[0] = tl_ir_stmt(m, loc, TL_STMT_ALLOC)));
  out[0]->u.alloc.buffer = S;
  CHECK(out[1] = block_sync(st, loc));
  CHECK(out[3] = block_sync(st, loc));
  /* phase 1: the MMA_C walk into S */
  stage_ctx sc = {c->src.buf, S, ld};
  plan p;
  lt_plan_for_layout(&p, L);
  if (!(out[2] = lt_emit_plan(st, loc, &p, stage_chunk, &sc))) return NULL;
  /* phase 2: each warp's sub-tile, 16-byte vectors */
  tl_var *vit;
  CHECK(vit = tl_names_fresh_var(&st->w.names, loc, "ei", TL_INT32, TL_VAR_LOOP));
  int64_t nit = WM * cpr / 32;
  CHECK(tl_ranges_set(&st->w.ranges, vit, 0, nit - 1));
  tl_expr *tid = tl_lo_thread_index(m, loc);
  CHECK(tid);
  tl_expr *warp = tl_lo_fdiv(m, loc, tid, 32, &st->w.ranges), *lane = tl_lo_fmod(m, loc, tid, 32, &st->w.ranges);
  tl_expr *wm = tl_lo_fmod(m, loc, warp, L->warp_m, &st->w.ranges),
          *wn = tl_lo_fdiv(m, loc, warp, L->warp_m, &st->w.ranges);
  tl_expr *v = tl_lo_add(m, loc, tl_lo_mul(m, loc, tl_ir_var(m, loc, vit), 32), lane);
  tl_expr *r = tl_lo_add(m, loc, tl_lo_mul(m, loc, wm, WM), tl_lo_fdiv(m, loc, v, cpr, &st->w.ranges));
  tl_expr *col =
      tl_lo_add(m, loc, tl_lo_mul(m, loc, wn, WN), tl_lo_mul(m, loc, tl_lo_fmod(m, loc, v, cpr, &st->w.ranges), w));
  CHECK(r && col);
  tl_expr **sx = tl_arena_alloc(&m->arena, sizeof(tl_expr *)), **di = tl_arena_alloc(&m->arena, 2 * sizeof(tl_expr *));
  CHECK(sx && di);
  CHECK(sx[0] = tl_lo_ramp(m, loc, tl_lo_add(m, loc, tl_lo_mul(m, loc, r, ld), col), (int)w));
  CHECK(di[0] = tl_lo_add(m, loc, c->dst.min[0], r));
  CHECK(di[1] = tl_lo_add(m, loc, c->dst.min[1], col));
  if (fault_swap_lanes())
    for (int k = 0; k < 2; k++) CHECK(di[k] = swap_tid_rec(m, di[k], 0));
  tl_expr *cond = bounds_cond(st, C, 2, di, w, loc);
  CHECK(cond);
  tl_expr **dv = tl_arena_alloc(&m->arena, 2 * sizeof(tl_expr *));
  CHECK(dv);
  dv[0] = di[0];
  CHECK(dv[1] = tl_lo_ramp(m, loc, di[1], (int)w));
  tl_expr *val = tl_ir_load(m, loc, S, 1, sx);
  CHECK(val);
  val->dtype = C->dtype;
  val->dtype.lanes = (uint16_t)w;
  tl_stmt *body = tl_lo_store(m, loc, C, 2, dv, val);
  CHECK(body);
  CHECK(body = tl_lo_if(m, loc, cond, body, NULL));
  tl_ranges_unset(&st->w.ranges, vit);
  CHECK(out[4] = tl_lo_for(m, loc, TL_LOOP_UNROLL, vit, tl_lo_int(m, loc, nit), body));
  return tl_ir_seq(m, loc, 5, out);
}

/* T.copy / T.async_copy between global and shared buffers (at least one
 * shared): lower_shared_copy.c.  NULL without an error when the operands are
 * of other scopes (the generic path below handles them). */
static tl_stmt *lower_global_shared_copy(lt_state *st, const tl_stmt *s) {
  const tl_region *r[2] = {&s->u.tile.args[0].region, &s->u.tile.args[1].region};
  bool any_shared = false;
  for (int i = 0; i < 2; i++) {
    tl_scope sc = r[i]->buffer ? r[i]->buffer->scope : TL_SCOPE_LOCAL;
    bool sh = sc == TL_SCOPE_SHARED || sc == TL_SCOPE_SHARED_DYN;
    if (!sh && sc != TL_SCOPE_GLOBAL) return NULL;
    any_shared = any_shared || sh;
  }
  if (!any_shared) return NULL;
  tl_expr **mins[2];
  for (int i = 0; i < 2; i++) {
    int n = r[i]->ndim ? r[i]->ndim : r[i]->buffer->ndim;
    CHECK(mins[i] = tl_arena_alloc(&st->w.m->arena, sizeof(tl_expr *) * (size_t)(n > 0 ? n : 1)));
    for (int k = 0; k < n; k++)
      if (!(mins[i][k] = r[i]->ndim ? rw_expr(st, r[i]->min[k], 0) : tl_lo_int(st->w.m, s->loc, 0))) return NULL;
  }
  tl_lower_env env = {st->w.m, st->w.d, &st->w.names, &st->w.ranges, st->threads, 0};
  tl_stmt *out = tl_lower_shared_copy(&env, s, mins[0], mins[1]);
  st->w.errors += env.errors;
  if (!out && env.errors == 0) st->w.oom = true;
  return out;
}

/* Makes sd (a sub-region of a STACKED fragment) a SIDE_STACK when it is one
 * row F[l..., :] (leading extents 1, the base dims whole) and the other side
 * o is a fragment of F's base layout; false otherwise. */
static bool stack_side(lt_state *st, side *sd, const side *o, tl_loc loc) {
  const tl_frag_layout *L = sd->L;
  if (!L || L->kind != TL_FRAG_STACKED || L->split || !tl_frag_layout_same(L->src, o->L)) return false;
  int a = L->ndim - L->src->ndim;
  for (int k = 0; k < sd->ndim; k++) {
    int64_t mn = -1;
    if (k < a ? sd->ext[k] != 1 : sd->ext[k] != L->shape[k] || !tl_expr_is_const_int(sd->min[k], &mn) || mn != 0)
      return false;
  }
  tl_expr *f = flat_index(st, loc, L, a, sd->min);
  if (!f || !(sd->value = tl_lo_mul(st->w.m, loc, f, L->src->nregs))) {
    st->w.oom = true;
    return false;
  }
  sd->kind = SIDE_STACK;
  return true;
}

static tl_stmt *lower_copy(lt_state *st, const tl_stmt *s) {
  tl_module *m = st->w.m;
  int op = s->u.tile.op;
  const char *opname = op == TL_TILE_COPY         ? "T.copy"
                       : op == TL_TILE_ASYNC_COPY ? "T.async_copy"
                       : op == TL_TILE_FILL       ? "T.fill"
                                                  : "T.clear";
  if ((op == TL_TILE_COPY || op == TL_TILE_ASYNC_COPY) && s->u.tile.nargs >= 2) {
    int before = st->w.errors;
    tl_stmt *r = lower_global_shared_copy(st, s);
    if (r || st->w.oom || st->w.errors != before) return r;
  }
  copy_ctx c;
  memset(&c, 0, sizeof c);
  c.loc = s->loc;
  const tl_region *dst_r = NULL, *src_r = NULL;
  if (op == TL_TILE_COPY || op == TL_TILE_ASYNC_COPY) {
    if (s->u.tile.nargs < 2) return NULL;
    src_r = &s->u.tile.args[0].region;
    dst_r = &s->u.tile.args[1].region;
  } else {
    if (s->u.tile.nargs < 1) return NULL;
    dst_r = &s->u.tile.args[0].region;
  }
  /* The domain: the per-thread/fragment side's extents, else dst's; a
   * distributed fragment's sub-region (copy_ctx.sub) gives its own. */
  const tl_region *dom_r = dst_r;
  if (src_r && src_r->buffer->scope != TL_SCOPE_GLOBAL) dom_r = src_r;
  if (dst_r->buffer->scope != TL_SCOPE_GLOBAL) dom_r = dst_r;
  const tl_region *sub_r = NULL;
  for (int i = 0; i < 2 && (op == TL_TILE_COPY || op == TL_TILE_ASYNC_COPY); i++) {
    const tl_region *r = i == 0 ? src_r : dst_r;
    if (frag_distributed(tl_frag_layout_of(r->buffer)) && !tl_lo_whole_region(r) && r->ndim == r->buffer->ndim)
      dom_r = sub_r = r;
  }
  int ndom;
  int64_t *dom;
  CHECK(region_extents(dom_r, &ndom, &dom, &m->arena));
  int64_t total = 1;
  for (int k = 0; k < ndom; k++)
    if (dom[k] < 1 || __builtin_mul_overflow(total, dom[k], &total) || total > INT32_MAX) {
      fail(st, s->loc, "%s with a non-constant or empty extent (operand '%s') is not lowered yet", opname,
           dom_r->buffer->name);
      return NULL;
    }
  c.ndom = ndom;
  if (!make_side(st, &c.dst, dst_r, ndom, dom, s->loc, opname)) return NULL;
  if (src_r) {
    if (!make_side(st, &c.src, src_r, ndom, dom, s->loc, opname)) return NULL;
  } else {
    c.src.kind = SIDE_CONST;
    if (op == TL_TILE_FILL && s->u.tile.nargs >= 2 && s->u.tile.args[1].kind == TL_OPND_EXPR)
      c.src.value = rw_expr(st, s->u.tile.args[1].expr, 0);
    else c.src.value = zero_of(st, s->loc, dst_r->buffer->dtype);
    if (!c.src.value) return NULL;
  }
  if (sub_r) {
    side *sd = sub_r == src_r ? &c.src : &c.dst;
    const side *o = sub_r == src_r ? &c.dst : &c.src;
    if (o->kind != SIDE_PLAN) {
      c.sub = sd;
    } else if (!stack_side(st, sd, o, s->loc)) {
      if (st->w.oom) return NULL;
      fail(st, s->loc,
           "%s between a sub-region of fragment '%s' and another distributed fragment is not lowered yet (only "
           "a row F[l, :] of a stacked fragment and a fragment of its base layout are)",
           opname, sub_r->buffer->name);
      return NULL;
    }
  }
  if (op == TL_TILE_COPY && !c.sub && c.src.kind == SIDE_PLAN && c.src.L->kind == TL_FRAG_MMA_C &&
      c.dst.kind == SIDE_GLOBAL) {
    tl_stmt *r = lower_frag_to_global_staged(st, &c);
    if (r || st->w.oom) return r;
  }
  plan p;
  const side *planner = c.dst.kind == SIDE_PLAN ? &c.dst : c.src.kind == SIDE_PLAN ? &c.src : NULL;
  if (planner) {
    lt_plan_for_layout(&p, planner->L);
    if (frag_replicas(p.lay) && planner == &c.src && (c.dst.kind == SIDE_GLOBAL || c.dst.kind == SIDE_SHARED))
      p.rep_guard = true;
    if (c.dst.kind == SIDE_PLAN && c.src.kind == SIDE_PLAN && !tl_frag_layout_same(c.dst.L, c.src.L)) {
      if (op == TL_TILE_COPY && c.src.L->kind == TL_FRAG_MMA_C && c.dst.L->kind == TL_FRAG_MMA_C) {
        /* two gemm accumulators of different partitions: through shared memory (lower_frag.c) */
        tl_stmt *r = tl_lower_frag_relayout(m, s->loc, &st->w.names, c.src.buf, c.dst.buf, st->w.d);
        if (!r) st->w.errors++;
        return r;
      }
      fail(st, s->loc, "layout conflict in %s between fragments '%s' and the source", opname, c.dst.buf->name);
      return NULL;
    }
  } else {
    int bytes = tl_dtype_bytes(c.dst.buf->dtype);
    if (c.src.kind != SIDE_CONST && tl_dtype_bytes(c.src.buf->dtype) > bytes) bytes = tl_dtype_bytes(c.src.buf->dtype);
    bool per_thread = c.dst.kind == SIDE_LOCAL || c.src.kind == SIDE_LOCAL;
    lt_plan_for_shape(&p, ndom, dom, per_thread ? 1 : st->threads, bytes);
    p.registers = per_thread && total <= 256;
  }
  return lt_emit_plan(st, s->loc, &p, copy_chunk, &c);
}

/* ------------------------------------------------------- statement rewrite */
/* An allocation: fragments are collected (they become register arrays at
 * the end), shared buffers are replaced by their flat 1-D buffer. */
static tl_stmt *lower_alloc(lt_state *st, const tl_stmt *s) {
  tl_module *m = st->w.m;
  tl_buffer *b = s->u.alloc.buffer;
  if (b && b->scope == TL_SCOPE_FRAGMENT && !b->layout) {
    /* the pass's input contract: layout-inference ran (tl-opt --passes) */
    fail(st, s->loc, "fragment '%s' has no layout: lower-tile-ops needs layout-inference%s", b->name, "");
    return NULL;
  }
  if (tl_frag_layout_of(b)) CHECK(tl_vec_push(&st->frags, b));
  if (b && (b->scope == TL_SCOPE_SHARED || b->scope == TL_SCOPE_SHARED_DYN)) {
    /* the 1-D flat buffer replaces the tile-level one (smem_layout.h) */
    tl_smem_layout *L = tl_smem_layout_get(m, b);
    if (!L) {
      fail(st, s->loc, "shared buffer '%s' needs a static shape%s", b->name, "");
      return NULL;
    }
    tl_stmt *r = tl_ir_stmt(m, s->loc, TL_STMT_ALLOC);
    CHECK(r);
    r->u.alloc.buffer = L->flat;
    L->flat->smem_renewed_in = b->smem_renewed_in;
    int64_t fn;
    if (L->flat->ndim == 1 && tl_expr_is_const_int(L->flat->shape[0], &fn) && fn > 0)
      st->smem_seen += fn * tl_dtype_bytes(L->flat->dtype);
    return r;
  }
  return (tl_stmt *)s;
}

/* A reduce staged through shared memory (tl_reduce_staging): allocations,
 * barrier, copies in, barrier, the reduce, barrier, copy out. */
static tl_stmt *lower_reduce_staged(lt_state *st, tl_lower_env *env, const tl_reduce_stage *sg) {
  tl_stmt *xs[9];
  int n = 0;
  for (int k = 0; k < 2; k++)
    if (sg->alloc[k] && !(xs[n++] = lower_alloc(st, sg->alloc[k]))) return NULL;
  CHECK(xs[n++] = tl_lo_sync_threads(st->w.m, sg->red->loc));
  for (int k = 0; k < 2; k++)
    if (sg->copy_in[k] && !(xs[n++] = lower_copy(st, sg->copy_in[k]))) return NULL;
  CHECK(xs[n++] = tl_lo_sync_threads(st->w.m, sg->red->loc));
  xs[n] = tl_lower_reduce(env, sg->red);
  st->w.errors += env->errors;
  if (!xs[n++]) {
    if (env->errors == 0) st->w.oom = true;
    return NULL;
  }
  if (sg->copy_out) {
    CHECK(xs[n++] = tl_lo_sync_threads(st->w.m, sg->red->loc));
    if (!(xs[n++] = lower_copy(st, sg->copy_out))) return NULL;
  }
  return tl_ir_seq(st->w.m, sg->red->loc, n, xs);
}

/* A tile op of rw_stmt: its lowering (NULL after an error). */
static tl_stmt *rw_tile(lt_state *st, const tl_stmt *s) {
  tl_module *m = st->w.m;
  switch (s->u.tile.op) {
  case TL_TILE_COPY:
  case TL_TILE_FILL:
  case TL_TILE_CLEAR: return lower_copy(st, s);
  case TL_TILE_GEMM: {
    bool rs = s->u.tile.nargs >= 3 && s->u.tile.args[0].kind == TL_OPND_REGION &&
              tl_frag_layout_of(s->u.tile.args[0].region.buffer); /* A in registers: lower_frag.c */
    bool compact = tl_lower_frag_pressure(st->frags.data, st->frags.len);
    tl_stmt *g = rs ? tl_lower_gemm_rs(m, s, &st->w.names, st->threads, compact, st->w.d)
                    : tl_lower_gemm(m, s, &st->w.names, st->threads, compact, st->w.d);
    if (!g) st->w.errors++;
    return g;
  }
  case TL_TILE_GEMM_SP: { /* lower_gemm_sp.c */
    tl_stmt *g = tl_lower_gemm_sp(m, s, &st->w.names, st->threads, st->w.d);
    if (!g) st->w.errors++;
    return g;
  }
  case TL_TILE_ASYNC_COPY: return lower_copy(st, s);
  case TL_TILE_REDUCE_MAX:
  case TL_TILE_REDUCE_MIN:
  case TL_TILE_REDUCE_SUM:
  case TL_TILE_REDUCE_ABSSUM:
  case TL_TILE_REDUCE_ABSMAX: { /* lower_reduce.c */
    tl_lower_env env = {st->w.m, st->w.d, &st->w.names, &st->w.ranges, st->threads, 0};
    tl_reduce_stage sg;
    if (tl_reduce_staging(&env, s, &sg)) return lower_reduce_staged(st, &env, &sg);
    tl_stmt *r = tl_lower_reduce(&env, s);
    st->w.errors += env.errors;
    if (!r && env.errors == 0) st->w.oom = true;
    return r;
  }
  case TL_TILE_FINALIZE_REDUCER:
  case TL_TILE_THREAD_ALLREDUCE: { /* lower_reduce.c */
    tl_lower_env env = {st->w.m, st->w.d, &st->w.names, &st->w.ranges, st->threads, 0};
    tl_stmt *r = s->u.tile.op == TL_TILE_THREAD_ALLREDUCE ? tl_lower_thread_allreduce(&env, s)
                                                          : tl_lower_finalize_reducer(&env, s);
    st->w.errors += env.errors;
    if (!r && env.errors == 0) st->w.oom = true;
    return r;
  }
  case TL_TILE_USE_SWIZZLE: /* kept for the rasterize pass (rasterize.c) */ return (tl_stmt *)s;
  case TL_TILE_ANNOTATE_LAYOUT: /* taken by layout inference; no code */ return tl_ir_seq(st->w.m, s->loc, 0, NULL);
  default:
    tl_error(st->w.d, s->loc, "T.%s is not lowered yet", tl_tile_ops[s->u.tile.op].name);
    st->w.errors++;
    return NULL;
  }
  return NULL;
}

static tl_stmt *rw_stmt(lt_state *st, const tl_stmt *s, int depth) {
  if (!s) return NULL;
  tl_module *m = st->w.m;
  if (!tl_lo_nesting_ok(st->w.d, s, depth, &st->w.errors, true)) return NULL;
  switch (s->kind) {
  case TL_STMT_SEQ: {
    tl_stmt **xs = tl_arena_alloc(&m->arena, sizeof(tl_stmt *) * (size_t)(s->u.seq.n > 0 ? s->u.seq.n : 1));
    CHECK(xs);
    for (int i = 0; i < s->u.seq.n; i++)
      if (!(xs[i] = rw_stmt(st, s->u.seq.stmts[i], depth + 1))) return NULL;
    tl_stmt *r = tl_ir_stmt(m, s->loc, TL_STMT_SEQ);
    CHECK(r);
    r->u.seq.n = s->u.seq.n;
    r->u.seq.stmts = xs;
    return r;
  }
  case TL_STMT_FOR: {
    if (s->u.loop.kind == TL_LOOP_PARALLEL) return lower_parallel(st, s);
    tl_stmt *r = tl_ir_stmt(m, s->loc, TL_STMT_FOR);
    CHECK(r);
    r->u.loop = s->u.loop;
    int n = s->u.loop.nvars;
    if (s->u.loop.mins) {
      r->u.loop.mins = tl_arena_alloc(&m->arena, sizeof(tl_expr *) * (size_t)n);
      CHECK(r->u.loop.mins);
      for (int k = 0; k < n; k++) r->u.loop.mins[k] = s->u.loop.mins[k] ? rw_expr(st, s->u.loop.mins[k], 0) : NULL;
    }
    if (!(r->u.loop.extents = rw_list(st, n, s->u.loop.extents, 0))) return NULL;
    if (s->u.loop.step && !(r->u.loop.step = rw_expr(st, s->u.loop.step, 0))) return NULL;
    int64_t mn = 0, ext;
    bool ranged = !s->u.loop.step && n == 1 && tl_expr_is_const_int(r->u.loop.extents[0], &ext) && ext > 0 &&
                  (!r->u.loop.mins || !r->u.loop.mins[0] || tl_expr_is_const_int(r->u.loop.mins[0], &mn)) &&
                  mn >= INT32_MIN && mn <= INT32_MAX && ext <= INT32_MAX;
    if (ranged) CHECK(tl_ranges_set(&st->w.ranges, s->u.loop.vars[0], mn, mn + ext - 1));
    r->u.loop.body = rw_stmt(st, s->u.loop.body, depth + 1);
    if (ranged) tl_ranges_unset(&st->w.ranges, s->u.loop.vars[0]);
    return r->u.loop.body ? r : NULL;
  }
  case TL_STMT_KERNEL: {
    tl_stmt *r = tl_ir_stmt(m, s->loc, TL_STMT_KERNEL);
    CHECK(r);
    r->u.kernel = s->u.kernel;
    int64_t t = 1;
    tl_expr_is_const_int(s->u.kernel.threads, &t);
    st->threads = t;
    st->w.ranges.threads = t;
    for (int i = 0; i < s->u.kernel.ngrid; i++) {
      int64_t g;
      if (!s->u.kernel.block_vars[i]) continue;
      if (tl_expr_is_const_int(s->u.kernel.grid[i], &g) && g >= 1)
        CHECK(tl_ranges_set(&st->w.ranges, s->u.kernel.block_vars[i], 0, g - 1));
      else CHECK(tl_ranges_set(&st->w.ranges, s->u.kernel.block_vars[i], 0, INT32_MAX - 1));
    }
    r->u.kernel.body = rw_stmt(st, s->u.kernel.body, depth + 1);
    return r->u.kernel.body ? r : NULL;
  }
  case TL_STMT_ALLOC: return lower_alloc(st, s);
  case TL_STMT_STORE: {
    int n;
    tl_expr **ix = rw_access(st, s->loc, s->u.store.buffer, s->u.store.n, s->u.store.indices, &n, 0);
    if (!ix) return NULL;
    tl_buffer *fb = shared_access(st, s->loc, s->u.store.buffer, &n, ix);
    if (st->w.oom) return NULL;
    tl_expr *v = rw_expr(st, s->u.store.value, 0);
    if (!v) return NULL;
    return tl_lo_store(m, s->loc, fb ? fb : s->u.store.buffer, n, ix, v);
  }
  case TL_STMT_IF: {
    int64_t outer = st->threads, n = tl_lo_range_scope_threads(s);
    if (n > 0) st->threads = st->w.ranges.threads = n; /* a thread-range scope: tile ops over its threads */
    tl_expr *c = rw_expr(st, s->u.ifs.cond, 0);
    tl_stmt *t = rw_stmt(st, s->u.ifs.then_s, depth + 1);
    st->threads = st->w.ranges.threads = outer;
    tl_stmt *e = s->u.ifs.else_s ? rw_stmt(st, s->u.ifs.else_s, depth + 1) : NULL;
    if (!c || !t || (s->u.ifs.else_s && !e)) return NULL;
    tl_stmt *r = tl_ir_if(m, s->loc, c, t, e);
    CHECK(r);
    return r;
  }
  case TL_STMT_WHILE: {
    tl_expr *c = rw_expr(st, s->u.whiles.cond, 0);
    tl_stmt *b = rw_stmt(st, s->u.whiles.body, depth + 1);
    if (!c || !b) return NULL;
    tl_stmt *r = tl_ir_while(m, s->loc, c, b);
    CHECK(r);
    return r;
  }
  case TL_STMT_LET: {
    tl_expr *v = rw_expr(st, s->u.let.value, 0);
    if (!v) return NULL;
    tl_stmt *r = tl_lo_let(m, s->loc, s->u.let.var, v);
    CHECK(r);
    tl_range rg;
    if (tl_expr_range(&st->w.ranges, v, &rg)) CHECK(tl_ranges_set(&st->w.ranges, s->u.let.var, rg.lo, rg.hi));
    return r;
  }
  case TL_STMT_EVAL: {
    tl_expr *v = rw_expr(st, s->u.eval.value, 0);
    if (!v) return NULL;
    tl_stmt *r = tl_lo_eval(m, s->loc, v);
    CHECK(r);
    return r;
  }
  case TL_STMT_TILE: return rw_tile(st, s);
  default: break;
  }
  return NULL;
}

bool tl_lower_tile_ops(tl_module *m, tl_primfunc *f, const tl_target *target, tl_diag *d) {
  lt_state st = {.target = target, .f = f, .ws = tl_ws_producer_threads(f) > 0};
  st.threads = 1;
  tl_map_init(&st.subst);
  st.rw.m = m;
  st.rw.subst = &st.subst;
  st.rw.max_depth = TL_LOWER_MAX_DEPTH;
  st.rw.expr = lower_expr;
  tl_lower_walk_begin(&st.w, m, d, f);
  bool ok = !st.w.oom;
  if (ok) {
    tl_smem_mark_renewed(f);
    tl_stmt *body = rw_stmt(&st, f->body, 0);
    ok = body && !st.w.oom && st.w.errors == 0;
    if (ok) {
      f->body = body;
      /* Fragments become per-thread register arrays. */
      for (size_t i = 0; i < st.frags.len; i++) {
        tl_buffer *b = st.frags.data[i];
        tl_frag_layout *L = tl_frag_layout_of(b);
        if (!L) continue;
        tl_expr **shape = tl_arena_alloc(&m->arena, sizeof(tl_expr *));
        if (!shape || !(shape[0] = tl_lo_int(m, b->loc, L->nregs))) {
          st.w.oom = true;
          ok = false;
          break;
        }
        b->scope = TL_SCOPE_LOCAL;
        b->ndim = 1;
        b->shape = shape;
        b->strides = NULL;
      }
      /* A warp-specialized kernel launches its producer warpgroup too. */
      if (!tl_ws_finish(m, f)) st.w.oom = true, ok = false;
      /* T.ws role scopes: thread ranges, mbarriers (ws_scope.c) */
      if (ok && !tl_ws_scopes_finish(m, f)) st.w.oom = true, ok = false;
    }
  }
  if (st.w.oom) {
    tl_error(d, f->loc, "out of memory while lowering");
    ok = false;
  } else if (!ok && st.w.errors == 0) {
    tl_error(d, f->loc, "internal error: lowering failed");
    ok = false;
  }
  tl_lower_walk_end(&st.w);
  tl_map_free(&st.subst);
  tl_vec_free(&st.frags);
  return ok;
}
