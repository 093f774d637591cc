/* Explicit warp specialisation: TileLang's T.ws role scopes and the
 * barriers of T.alloc_barrier (docs/hopper.md "Explicit warp
 * specialisation"; the tile-level intrinsics: lib/IR/intrinsics.def).
 *
 * Two steps around the tile passes:
 *
 * tl_lower_ws_scopes (the tile pass "ws-scopes").  Requires: tile IR.  A
 * kernel without T.ws is left alone.  Otherwise its thread count T must be
 * a multiple of 128 and every scope name one warpgroup g < T / 128 (not
 * nested), and a register buffer written outside the scopes may be used
 * by warpgroup 0's scopes only unless each of those writes is a scalar
 * store every thread runs (all_threads_store), T.set_max_nreg stands in a scope, and where every warpgroup's
 * scope begins with a constant one their sum fits the SM's registers (register_shares); its T.Pipelined loops, and its
 * T.unroll loops around a T.gemm, become T.serial, and on a target with wgmma a T.gemm TileLang issues as
 * wgmma takes wgmma's warp partition, FullRow (takes_wgmma) (the program synchronises
 * its roles itself; neither the automatic warp specialisation nor the
 * cp.async pipeline takes such a kernel).  Guarantees: the kernel counts the
 * threads of one warpgroup (128) until tl_ws_scopes_finish, so that layout
 * inference and the tile lowering partition every tile op over the 128
 * threads of the scope that runs it.
 *
 * tl_ws_scopes_finish (called by lower-tile-ops at its end).  Requires the
 * SIMT IR of such a kernel.  Guarantees: `if T.ws(g)` becomes
 * `if 128 g <= tid < 128 (g + 1)` with the thread index seen inside shifted
 * by -128 g and T.sync_threads() inside become the warpgroup's named
 * barrier (bar.sync 1 + g, 128); statements outside every scope that do
 * work run on warpgroup 0 (likewise, bar.sync 1), between block barriers
 * when they write shared memory, except a scalar store into a T.alloc_var
 * or local buffer of values every thread can compute (all_threads_store),
 * which every thread runs; T.sync_threads() outside
 * the scopes stay block-wide; T.barrier_init becomes T.ptx_mbarrier_init by
 * thread 0 and a block barrier, T.barrier_arrive / T.barrier_wait become
 * T.ptx_mbarrier_arrive / T.ptx_mbarrier_wait, T.set_max_nreg / T.fence_proxy_async
 * T.ptx_setmaxnreg / T.ptx_fence_proxy_async; the kernel counts T threads
 * again.
 *
 * Thread-range scopes (`if T.thread_range(lo, hi):`, branches on the thread
 * index over other ranges; docs/language.md "Branches on the thread
 * index").  The pass requires a constant thread count T and no T.ws beside
 * them, and checks every scope (constant bounds, whole warps within T, not
 * nested, no thread index read inside, at most 15 distinct ranges) and the
 * register buffers (a fragment used in a scope is used nowhere else; a local
 * buffer written in a scope likewise); its T.Pipelined loops become
 * T.serial.  The kernel keeps its T threads: layout inference and the tile
 * lowering partition a scope's tile ops over its hi - lo threads
 * (tl_lo_range_scope_threads), the rest over T.  The finish makes each
 * scope `if lo <= tid < hi` with the thread index inside shifted by -lo and
 * its T.sync_threads() a named barrier of its threads (bar.sync 1 + i,
 * hi - lo; i the range's index among the distinct ranges); work outside the
 * scopes stays every thread's. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "IR/rewrite.h"
#include "IR/visit.h"
#include "Lower/lower_internal.h"

#define WG 128 /* threads of a warpgroup */

static const char ws_scope_key; /* the function annotation's key: its address */
typedef struct ws_scope_annot {
  int64_t threads; /* the kernel's threads as written */
  bool ranges;     /* thread-range scopes (the kernel keeps its threads; work outside runs on every thread) */
} ws_scope_annot;

static bool is_call(const tl_expr *e, int op) { return e && e->kind == TL_EXPR_CALL && e->u.call.op == op; }
static bool is_scope(const tl_stmt *s) { return s && s->kind == TL_STMT_IF && is_call(s->u.ifs.cond, TL_INTRIN_WS); }

typedef struct gemm_find {
  tl_visitor v;
  bool found;
} gemm_find;
static void gemm_stmt(tl_visitor *v, const tl_stmt *s) {
  if (s->kind == TL_STMT_TILE && s->u.tile.op == TL_TILE_GEMM) ((gemm_find *)v)->found = true;
}
static bool has_gemm(const tl_stmt *s) {
  gemm_find g = {.v = {.stmt = gemm_stmt}};
  tl_visit_stmt(&g.v, s);
  return g.found;
}

/* The T.unroll loops around a T.gemm become T.serial: an unroll hint, and
 * each gemm is unrolled code already (the explicit kernels of TileLang's
 * examples unroll their k-tiles around wgmma, four instructions each). */
/* Would TileLang issue this T.gemm as wgmma (its cuda/op/gemm.cc AllowWgmma /
 * CheckWgmma: M >= 64, B in shared memory, 16-bit float inputs with K a
 * multiple of 16, or transposed-B tf32 / float8 / 8-bit integer forms)?  Then
 * its warps split M in groups of four (ComputeWgmmaWarpPartition), which for
 * the 128 threads of a scope is GemmWarpPolicy.FullRow whatever the policy
 * written: the partition the scope's other tile ops must agree with. */
static bool takes_wgmma(const tl_stmt *s) {
  if (s->u.tile.nargs < 3) return false;
  const tl_region *a = &s->u.tile.args[0].region, *b = &s->u.tile.args[1].region, *c = &s->u.tile.args[2].region;
  if (!a->buffer || !b->buffer || !c->buffer || a->ndim < 2 || c->ndim < 2 ||
      (b->buffer->scope != TL_SCOPE_SHARED && b->buffer->scope != TL_SCOPE_SHARED_DYN))
    return false;
  int ta = tl_tile_op_attr_index(TL_TILE_GEMM, "transpose_A"), tb = tl_tile_op_attr_index(TL_TILE_GEMM, "transpose_B");
  int64_t m = 0, k = 0, at = 0, bt = 0;
  if (ta >= 0 && s->u.tile.attrs && s->u.tile.attrs[ta]) tl_expr_is_const_int(s->u.tile.attrs[ta], &at);
  if (tb >= 0 && s->u.tile.attrs && s->u.tile.attrs[tb]) tl_expr_is_const_int(s->u.tile.attrs[tb], &bt);
  if (!tl_expr_is_const_int(c->extent[c->ndim - 2], &m) ||
      !tl_expr_is_const_int(a->extent[at ? a->ndim - 2 : a->ndim - 1], &k) || m < 64)
    return false;
  tl_dtype da = a->buffer->dtype, db = b->buffer->dtype, dc = c->buffer->dtype;
  bool f16 = da.code == TL_TYPE_FLOAT && da.bits == 16, bf16 = da.code == TL_TYPE_BFLOAT && da.bits == 16;
  bool c32 = dc.code == TL_TYPE_FLOAT && dc.bits == 32, c16 = dc.code == TL_TYPE_FLOAT && dc.bits == 16;
  if (!tl_dtype_eq(da, db)) return false;
  if ((f16 && (c32 || c16)) || (bf16 && c32)) return k % 16 == 0;
  bool f8 = da.code == TL_TYPE_FLOAT && da.bits == 8,
       i8 = (da.code == TL_TYPE_INT || da.code == TL_TYPE_UINT) && da.bits == 8;
  bool tf32 = da.code == TL_TYPE_FLOAT && da.bits == 32;
  if (at || !bt) return false;
  return ((f8 && (c32 || c16)) || (i8 && dc.code == TL_TYPE_INT && dc.bits == 32)) ? k % 32 == 0
                                                                                   : tf32 && c32 && k % 8 == 0;
}

/* The kernel's T.unroll loops around a T.gemm become T.serial; with wgmma on
 * the target (sm_90a, tl.disable_wgmma unset), a T.gemm TileLang issues as
 * wgmma gets its FullRow partition (takes_wgmma). */
static bool hopper_gemms(tl_module *m, tl_stmt *s, bool wgmma, int depth) {
  if (!s || depth > TL_LOWER_MAX_DEPTH) return true;
  bool ok = true;
  if (s->kind == TL_STMT_SEQ)
    for (int i = 0; i < s->u.seq.n; i++) ok &= hopper_gemms(m, s->u.seq.stmts[i], wgmma, depth + 1);
  if (s->kind == TL_STMT_IF)
    ok = hopper_gemms(m, s->u.ifs.then_s, wgmma, depth + 1) && hopper_gemms(m, s->u.ifs.else_s, wgmma, depth + 1);
  if (s->kind == TL_STMT_WHILE) ok = hopper_gemms(m, s->u.whiles.body, wgmma, depth + 1);
  if (s->kind == TL_STMT_TILE && s->u.tile.op == TL_TILE_GEMM && wgmma && takes_wgmma(s)) {
    int pi = tl_tile_op_attr_index(TL_TILE_GEMM, "policy"), na = tl_tile_ops[TL_TILE_GEMM].nattrs;
    if (pi < 0) return ok;
    if (!s->u.tile.attrs && (s->u.tile.attrs = tl_arena_alloc(&m->arena, sizeof(tl_expr *) * (size_t)na)))
      memset(s->u.tile.attrs, 0, sizeof(tl_expr *) * (size_t)na);
    return s->u.tile.attrs && (s->u.tile.attrs[pi] = tl_lo_int(m, s->loc, TL_POLICY_FULL_ROW)) != NULL;
  }
  if (s->kind != TL_STMT_FOR) return ok;
  if (s->u.loop.kind == TL_LOOP_UNROLL && has_gemm(s->u.loop.body)) s->u.loop.kind = TL_LOOP_SERIAL;
  return hopper_gemms(m, s->u.loop.body, wgmma, depth + 1);
}

/* A T.Pipelined loop run as T.serial (no cp.async pipeline). */
static void as_serial(tl_stmt *loop) {
  loop->u.loop.kind = TL_LOOP_SERIAL;
  loop->u.loop.num_stages = -1;
  loop->u.loop.nsched = 0;
}
static bool is_register(const tl_buffer *b) {
  return b->scope == TL_SCOPE_FRAGMENT || b->scope == TL_SCOPE_LOCAL || b->scope == TL_SCOPE_LOCAL_VAR;
}

typedef struct scan {
  tl_diag *d;
  int64_t groups;
  bool any, ok;
  TL_VEC(tl_stmt *) scopes; /* every scope */
  TL_VEC(tl_buffer *) regs; /* the register buffers allocated outside the scopes */
} scan;

static void scan_stmt(scan *c, tl_stmt *s, int depth) {
  if (!s || !c->ok || depth > TL_LOWER_MAX_DEPTH) return;
  switch (s->kind) {
  case TL_STMT_SEQ:
    for (int i = 0; i < s->u.seq.n; i++) scan_stmt(c, s->u.seq.stmts[i], depth + 1);
    return;
  case TL_STMT_FOR:
    if (s->u.loop.kind == TL_LOOP_PIPELINED) as_serial(s); /* the program synchronises its roles itself */
    scan_stmt(c, s->u.loop.body, depth + 1);
    return;
  case TL_STMT_ALLOC:
    if (is_register(s->u.alloc.buffer) && !tl_vec_push(&c->regs, s->u.alloc.buffer)) c->ok = false;
    return;
  case TL_STMT_IF:
    if (is_scope(s)) {
      const tl_expr *e = s->u.ifs.cond;
      int64_t g = -1;
      c->any = true;
      if (e->u.call.n != 1 || !tl_expr_is_const_int(e->u.call.args[0], &g)) {
        tl_error(c->d, e->loc, "T.ws over several warpgroups is not supported yet (one warpgroup per scope)");
        c->ok = false;
      } else if (g < 0 || g >= c->groups) {
        tl_error(c->d, e->loc, "T.ws(%lld) needs %lld threads; the kernel has %lld", (long long)g,
                 (long long)((g + 1) * WG), (long long)(c->groups * WG));
        c->ok = false;
      } else if (tl_lo_has_call(s->u.ifs.then_s, TL_INTRIN_WS)) {
        tl_error(c->d, e->loc, "T.ws scopes cannot be nested");
        c->ok = false;
      } else if (!tl_vec_push(&c->scopes, s)) {
        c->ok = false;
      }
      return;
    }
    scan_stmt(c, s->u.ifs.then_s, depth + 1);
    scan_stmt(c, s->u.ifs.else_s, depth + 1);
    return;
  case TL_STMT_EVAL:
    if (is_call(s->u.eval.value, TL_INTRIN_SET_MAX_NREG)) {
      tl_error(c->d, s->loc,
               "T.set_max_nreg outside the role scopes: setmaxnreg is a warpgroup's instruction; call it inside a "
               "T.ws scope (or a branch on the thread index that selects one warpgroup)");
      c->ok = false;
    }
    return;
  default: return;
  }
}

/* The lets of the thread index in s (tl_tid_let), in program order. */
static void tid_lets(const tl_stmt *s, tl_tid_lets *l, int depth) {
  if (!s || depth > TL_LOWER_MAX_DEPTH) return;
  switch (s->kind) {
  case TL_STMT_SEQ:
    for (int i = 0; i < s->u.seq.n; i++) tid_lets(s->u.seq.stmts[i], l, depth + 1);
    return;
  case TL_STMT_FOR: tid_lets(s->u.loop.body, l, depth + 1); return;
  case TL_STMT_WHILE: tid_lets(s->u.whiles.body, l, depth + 1); return;
  case TL_STMT_IF:
    tid_lets(s->u.ifs.then_s, l, depth + 1);
    tid_lets(s->u.ifs.else_s, l, depth + 1);
    return;
  case TL_STMT_LET: tl_tid_let(l, s->u.let.var, s->u.let.value); return;
  default: return;
  }
}

static bool reads_register(const tl_expr *e, void *user) {
  (void)user;
  return e->kind == TL_EXPR_LOAD && is_register(e->u.load.buffer);
}
static bool uniform(const tl_expr *e, const tl_tid_lets *l) {
  return !tl_expr_reads_tid(e, l) && !tl_expr_any(e, reads_register, NULL, -1, true);
}

/* Scalar code that every thread runs outside the scopes, as TileLang runs a
 * kernel's scalar statements: a store into a T.alloc_var or T.alloc_local
 * buffer whose indices and value read neither the thread index (directly
 * or through a let of it: l) nor a register buffer (whose values may
 * differ between threads, or live on warpgroup 0 only).  Every thread then
 * holds the same value, and every scope may read it. */
static bool all_threads_store(const tl_stmt *s, const tl_tid_lets *l) {
  if (!s || s->kind != TL_STMT_STORE) return false;
  tl_scope sc = s->u.store.buffer->scope;
  if (sc != TL_SCOPE_LOCAL && sc != TL_SCOPE_LOCAL_VAR) return false;
  for (int i = 0; i < s->u.store.n; i++)
    if (!uniform(s->u.store.indices[i], l)) return false;
  return uniform(s->u.store.value, l);
}

/* The writes of b that warpgroup 0 runs outside the scopes, as
 * tl_ws_scopes_finish places them: a statement without a scope inside runs
 * on warpgroup 0 whole, except an all_threads_store; one with scopes inside
 * (a sequence, or a loop or branch around scopes) is walked. */
static int warpgroup0_writes(const tl_stmt *s, const tl_buffer *b, const tl_tid_lets *l, int depth) {
  if (!s || is_scope(s)) return 0;
  if (depth > TL_LOWER_MAX_DEPTH) return 1;
  if (s->kind == TL_STMT_STORE && s->u.store.buffer == b && all_threads_store(s, l)) return 0;
  if (s->kind != TL_STMT_SEQ && !tl_lo_has_call(s, TL_INTRIN_WS)) return tl_lo_count_refs(s, b).writes;
  switch (s->kind) {
  case TL_STMT_SEQ: {
    int n = 0;
    for (int i = 0; i < s->u.seq.n; i++) n += warpgroup0_writes(s->u.seq.stmts[i], b, l, depth + 1);
    return n;
  }
  case TL_STMT_IF:
    return warpgroup0_writes(s->u.ifs.then_s, b, l, depth + 1) + warpgroup0_writes(s->u.ifs.else_s, b, l, depth + 1);
  case TL_STMT_FOR: return warpgroup0_writes(s->u.loop.body, b, l, depth + 1);
  case TL_STMT_WHILE: return warpgroup0_writes(s->u.whiles.body, b, l, depth + 1);
  default: return tl_lo_count_refs(s, b).writes;
  }
}

/* Other work outside the scopes runs on warpgroup 0 (tl_ws_scopes_finish):
 * a register buffer it writes must not be used by another warpgroup's
 * scope, whose threads would hold none of those values. */
static bool registers_outside(scan *c, const tl_stmt *body) {
  tl_tid_lets lets = {.n = 0};
  tid_lets(body, &lets, 0);
  for (size_t i = 0; i < c->regs.len; i++) {
    tl_buffer *b = c->regs.data[i];
    if (!warpgroup0_writes(body, b, &lets, 0)) continue; /* written only in scopes or by every thread */
    for (size_t j = 0; j < c->scopes.len; j++) {
      const tl_stmt *s = c->scopes.data[j];
      int64_t g = 0;
      tl_expr_is_const_int(s->u.ifs.cond->u.call.args[0], &g);
      tl_lo_refs r = tl_lo_count_refs(s, b);
      if (g != 0 && (r.reads || r.writes)) {
        tl_error(c->d, s->u.ifs.cond->loc,
                 "'%s' is written outside the T.ws scopes, where warpgroup 0 runs that work, and used by T.ws(%lld): "
                 "write it inside the scope that uses it",
                 b->name, (long long)g);
        return false;
      }
    }
  }
  return true;
}

/* T.set_max_nreg and T.fence_proxy_async belong to role scopes: refused in
 * a kernel without any (located at the first). */
typedef struct hint_find {
  tl_visitor v;
  const tl_expr *at;
} hint_find;
static void hint_expr(tl_visitor *v, const tl_expr *e) {
  hint_find *h = (hint_find *)v;
  if (!h->at && (is_call(e, TL_INTRIN_SET_MAX_NREG) || is_call(e, TL_INTRIN_FENCE_PROXY_ASYNC))) h->at = e;
}
static bool role_hints_outside(const tl_stmt *k, tl_diag *d) {
  hint_find h = {.v = {.expr = hint_expr}};
  tl_visit_stmt(&h.v, k->u.kernel.body);
  if (!h.at) return true;
  tl_error(d, h.at->loc,
           "T.%s in a kernel without role scopes is not supported yet (it is lowered inside T.ws scopes and "
           "branches on the thread index that select one warpgroup)",
           tl_intrinsic_name(h.at->u.call.op));
  return false;
}

/* ------------------------------------------------ thread-range scopes */
static bool range_bounds(const tl_stmt *s, int64_t *lo, int64_t *hi) {
  if (!s || s->kind != TL_STMT_IF || !is_call(s->u.ifs.cond, TL_INTRIN_THREAD_RANGE)) return false;
  const tl_expr *e = s->u.ifs.cond;
  return e->u.call.n == 2 && tl_expr_is_const_int(e->u.call.args[0], lo) &&
         tl_expr_is_const_int(e->u.call.args[1], hi) && *hi > *lo;
}

int64_t tl_lo_range_scope_threads(const tl_stmt *s) {
  int64_t lo = 0, hi = 0;
  return range_bounds(s, &lo, &hi) ? hi - lo : 0;
}

typedef struct rscan {
  tl_diag *d;
  int64_t T;
  bool ok;
  TL_VEC(tl_stmt *) scopes; /* every thread-range scope */
  TL_VEC(tl_buffer *) regs; /* every register buffer */
} rscan;

static bool range_fail(rscan *c, tl_loc loc, const char *msg, int64_t lo, int64_t hi) {
  tl_error(c->d, loc, "thread-range scope over threads %lld to %lld (of the kernel's %lld): %s", (long long)lo,
           (long long)hi - 1, (long long)c->T, msg);
  return c->ok = false;
}

/* The rules of one scope s (docs/language.md "Branches on the thread
 * index"); its T.Pipelined loops become T.serial (the cp.async pipeline's
 * block barriers would not be its threads'). */
static bool range_scope_ok(rscan *c, tl_stmt *s) {
  const tl_expr *e = s->u.ifs.cond;
  int64_t lo = 0, hi = 0;
  if (e->u.call.n != 2 || !tl_expr_is_const_int(e->u.call.args[0], &lo) ||
      !tl_expr_is_const_int(e->u.call.args[1], &hi)) {
    tl_error(c->d, e->loc, "T.thread_range needs constant bounds");
    return c->ok = false;
  }
  if (lo < 0 || hi <= lo || hi > c->T)
    return range_fail(c, e->loc, "the range must be within the kernel's threads", lo, hi);
  if (lo % 32 || (hi - lo) % 32)
    return range_fail(c, e->loc,
                      "its tile work needs whole warps (a range that starts and ends at a multiple of 32 "
                      "threads: warp shuffles and named barriers)",
                      lo, hi);
  if (s->u.ifs.else_s) return range_fail(c, e->loc, "a thread-range scope has no else branch", lo, hi);
  if (tl_lo_has_call(s->u.ifs.then_s, TL_INTRIN_THREAD_RANGE) || tl_lo_has_call(s->u.ifs.then_s, TL_INTRIN_WS))
    return range_fail(c, e->loc, "thread-range scopes cannot be nested", lo, hi);
  if (tl_lo_has_call(s->u.ifs.then_s, TL_INTRIN_GET_THREAD_BINDING) ||
      tl_lo_has_call(s->u.ifs.then_s, TL_INTRIN_GET_WARP_IDX))
    return range_fail(c, e->loc,
                      "reading the thread index inside a branch that holds tile work is not supported yet (bind "
                      "it before the branch: tx = T.get_thread_binding())",
                      lo, hi);
  return tl_vec_push(&c->scopes, s) || (c->ok = false);
}

static void range_scan(rscan *c, tl_stmt *s, bool in_scope, int depth) {
  if (!s || !c->ok || depth > TL_LOWER_MAX_DEPTH) return;
  switch (s->kind) {
  case TL_STMT_SEQ:
    for (int i = 0; i < s->u.seq.n; i++) range_scan(c, s->u.seq.stmts[i], in_scope, depth + 1);
    return;
  case TL_STMT_FOR:
    if (in_scope && s->u.loop.kind == TL_LOOP_PIPELINED) as_serial(s);
    range_scan(c, s->u.loop.body, in_scope, depth + 1);
    return;
  case TL_STMT_WHILE: range_scan(c, s->u.whiles.body, in_scope, depth + 1); return;
  case TL_STMT_ALLOC:
    if (is_register(s->u.alloc.buffer) && !tl_vec_push(&c->regs, s->u.alloc.buffer)) c->ok = false;
    return;
  case TL_STMT_IF:
    if (is_call(s->u.ifs.cond, TL_INTRIN_THREAD_RANGE)) {
      if (range_scope_ok(c, s)) range_scan(c, s->u.ifs.then_s, true, depth + 1);
      return;
    }
    range_scan(c, s->u.ifs.then_s, in_scope, depth + 1);
    range_scan(c, s->u.ifs.else_s, in_scope, depth + 1);
    return;
  default: return;
  }
}

/* A register buffer lives on the threads of one region: a fragment used in
 * a scope is used nowhere else (its layout is for that scope's threads);
 * a local buffer written in a scope is used nowhere else (the other threads
 * never hold its values).  One written outside the scopes only (every
 * thread runs that code) may be read anywhere. */
static bool range_registers(rscan *c, const tl_stmt *body) {
  for (size_t i = 0; i < c->regs.len; i++) {
    tl_buffer *b = c->regs.data[i];
    tl_lo_refs all = tl_lo_count_refs(body, b);
    int used = 0, in = 0, written = 0;
    const tl_stmt *at = NULL;
    for (size_t j = 0; j < c->scopes.len; j++) {
      tl_lo_refs r = tl_lo_count_refs(c->scopes.data[j], b);
      if (!r.reads && !r.writes) continue;
      used++, in += r.reads + r.writes, written += r.writes;
      if (!at) at = c->scopes.data[j];
    }
    bool elsewhere = used > 1 || all.reads + all.writes > in;
    if (!at || !elsewhere || (b->scope != TL_SCOPE_FRAGMENT && !written)) continue;
    tl_error(c->d, at->u.ifs.cond->loc,
             "%s '%s' is used in this branch on the thread index, whose tile work runs on its own threads, and "
             "outside it%s: stage it through T.alloc_shared",
             b->scope == TL_SCOPE_FRAGMENT ? "fragment" : "local buffer", b->name,
             b->scope == TL_SCOPE_FRAGMENT ? " (a fragment's layout is for one set of threads)"
                                           : " (written here, the other threads never hold its values)");
    return false;
  }
  return true;
}

/* At most 15 distinct ranges: each takes a named barrier (bar.sync 1 … 15;
 * PTX has 16, barrier 0 is the block's). */
static bool range_count(rscan *c) {
  int64_t seen[16][2];
  int n = 0;
  for (size_t j = 0; j < c->scopes.len; j++) {
    int64_t lo = 0, hi = 0, i = 0;
    range_bounds(c->scopes.data[j], &lo, &hi);
    while (i < n && (seen[i][0] != lo || seen[i][1] != hi)) i++;
    if (i < n) continue;
    if (n == 15) {
      tl_error(c->d, c->scopes.data[j]->u.ifs.cond->loc,
               "a 16th distinct range of threads that holds tile work: each takes a named barrier, and PTX has 15 "
               "besides the block's");
      return false;
    }
    seen[n][0] = lo, seen[n++][1] = hi;
  }
  return true;
}

/* A kernel with thread-range scopes (and no T.ws): checked, annotated. */
static bool lower_range_scopes(tl_module *m, tl_primfunc *f, tl_stmt *k, tl_diag *d) {
  if (tl_lo_has_call(k->u.kernel.body, TL_INTRIN_WS)) {
    tl_error(d, k->loc,
             "T.ws scopes and branches on the thread index over other ranges than one warpgroup in one "
             "kernel are not supported yet");
    return false;
  }
  int64_t T = 0;
  if (!tl_expr_is_const_int(k->u.kernel.threads, &T)) {
    tl_error(d, k->loc, "a branch on the thread index that holds tile work needs a constant thread count");
    return false;
  }
  rscan c = {.d = d, .T = T, .ok = true};
  range_scan(&c, k->u.kernel.body, false, 0);
  bool ok = c.ok && range_count(&c) && range_registers(&c, k->u.kernel.body) && role_hints_outside(k, d);
  tl_vec_free(&c.scopes);
  tl_vec_free(&c.regs);
  if (!ok) return false;
  ws_scope_annot *a = tl_func_annot_add(m, f, &ws_scope_key, sizeof *a);
  if (!a) {
    tl_error(d, f->loc, "out of memory");
    return false;
  }
  a->threads = T;
  a->ranges = true;
  return true;
}

/* The register shares of the warpgroups: when every warpgroup's scope begins with a constant T.set_max_nreg, their
 * sum times 128 must fit the SM's registers (target->regs_per_sm), or the last setmaxnreg.inc waits forever for
 * registers no warpgroup gives back (a hang on the GPU; neither CPU model holds registers).  Located at the
 * scope of the largest share. */
static const tl_expr *first_nreg(const tl_stmt *s) {
  while (s && s->kind == TL_STMT_SEQ && s->u.seq.n > 0) s = s->u.seq.stmts[0];
  return s && s->kind == TL_STMT_EVAL && is_call(s->u.eval.value, TL_INTRIN_SET_MAX_NREG) ? s->u.eval.value : NULL;
}
static bool register_shares(const scan *c, const tl_target *target, tl_diag *d) {
  if (!target || !target->setmaxnreg || target->regs_per_sm <= 0 || c->groups > 32) return true;
  int64_t share[32] = {0}, sum = 0, most = 0;
  const tl_expr *at = NULL;
  for (size_t i = 0; i < c->scopes.len; i++) {
    const tl_stmt *s = c->scopes.data[i];
    const tl_expr *e = first_nreg(s->u.ifs.then_s);
    int64_t g = -1, n = 0;
    if (!e || e->u.call.n < 1 || !tl_expr_is_const_int(s->u.ifs.cond->u.call.args[0], &g) || g < 0 || g >= c->groups ||
        !tl_expr_is_const_int(e->u.call.args[0], &n))
      continue;
    if (n > share[g]) share[g] = n;
    if (n > most) most = n, at = e;
  }
  for (int64_t g = 0; g < c->groups; g++) {
    if (!share[g]) return true; /* a warpgroup keeps its launch registers: unknown here */
    sum += share[g];
  }
  if (sum * WG <= target->regs_per_sm) return true;
  char parts[256] = "";
  for (int64_t g = 0, n = 0; g < c->groups && n < (int)sizeof parts - 16; g++)
    n += snprintf(parts + n, sizeof parts - (size_t)n, "%s%lld", g ? " + " : "", (long long)share[g]);
  tl_error(d, at->loc,
           "T.set_max_nreg: the warpgroups ask for %s = %lld registers a thread, more than the %lld an SM has "
           "(%d registers / %d threads of a warpgroup): setmaxnreg.inc would wait forever",
           parts, (long long)sum, (long long)(target->regs_per_sm / WG), target->regs_per_sm, WG);
  return false;
}

bool tl_lower_ws_scopes(tl_module *m, tl_primfunc *f, const tl_target *target, tl_diag *d) {
  tl_stmt *k = tl_ir_find_kernel(f->body);
  if (!k) return true;
  if (tl_lo_has_call(k->u.kernel.body, TL_INTRIN_THREAD_RANGE)) return lower_range_scopes(m, f, k, d);
  if (!tl_lo_has_call(k->u.kernel.body, TL_INTRIN_WS)) return role_hints_outside(k, d);
  int64_t T = 0;
  if (!tl_expr_is_const_int(k->u.kernel.threads, &T) || T % WG != 0) {
    tl_error(d, k->loc, "T.ws needs a constant thread count that is a multiple of %d", WG);
    return false;
  }
  scan c = {.d = d, .groups = T / WG, .ok = true};
  scan_stmt(&c, k->u.kernel.body, 0);
  bool wgmma = target && target->wgmma && !f->pass_configs.disable_wgmma;
  bool ok = c.ok && register_shares(&c, target, d) && hopper_gemms(m, k->u.kernel.body, wgmma, 0) &&
            registers_outside(&c, k->u.kernel.body);
  tl_vec_free(&c.scopes);
  tl_vec_free(&c.regs);
  if (!ok) return false;
  ws_scope_annot *a = tl_func_annot_add(m, f, &ws_scope_key, sizeof *a);
  if (!a || !(k->u.kernel.threads = tl_lo_int(m, k->loc, WG))) {
    tl_error(d, f->loc, "out of memory");
    return false;
  }
  a->threads = T;
  return true;
}

/* ------------------------------------------------------------ finishing */
typedef struct fin {
  tl_rewriter rw;
  int64_t g;             /* the warpgroup (or thread-range scope) whose code is being rewritten, -1 outside */
  int64_t off, bar, cnt; /* that scope's first thread, named barrier and thread count */
  bool ranges;           /* thread-range scopes: work outside them runs on every thread */
  int64_t range[15][2];  /* the thread ranges given a named barrier: range i has barrier 1 + i */
  int nrange;
  tl_tid_lets lets; /* the kernel's lets of the thread index */
} fin;

static tl_expr *I(fin *x, tl_loc loc, int64_t v) { return tl_lo_int(x->rw.m, loc, v); }
static tl_stmt *CALL(fin *x, tl_loc loc, int op, int n, tl_expr **args) {
  for (int i = 0; i < n; i++)
    if (!args[i]) return NULL;
  return tl_lo_eval(x->rw.m, loc, tl_ir_call(x->rw.m, loc, op, n, args));
}

static tl_expr *fin_call(tl_rewriter *rw, const tl_expr *e, int n, tl_expr **args) {
  fin *x = (fin *)rw;
  tl_expr *c = tl_ir_call(rw->m, e->loc, e->u.call.op, n, args);
  if (c && x->g >= 0 && x->off > 0 && e->u.call.op == TL_INTRIN_GET_THREAD_BINDING)
    c = tl_ir_binary(rw->m, e->loc, TL_OP_SUB, c, I(x, e->loc, x->off));
  if (c && x->g >= 0 && x->off > 0 && e->u.call.op == TL_INTRIN_GET_WARP_IDX)
    c = tl_ir_binary(rw->m, e->loc, TL_OP_SUB, c, I(x, e->loc, x->off / 32));
  return c;
}

/* s rewritten as the code of the scope of threads off … off + cnt - 1
 * (g >= 0: warpgroup g, or a thread-range scope) with named barrier bar. */
static tl_stmt *as_scope(fin *x, const tl_stmt *s, int64_t g, int64_t off, int64_t bar, int64_t cnt, int depth) {
  int64_t keep[4] = {x->g, x->off, x->bar, x->cnt};
  x->g = g, x->off = off, x->bar = bar, x->cnt = cnt;
  tl_stmt *r = tl_rewrite_stmt(&x->rw, s, depth);
  x->g = keep[0], x->off = keep[1], x->bar = keep[2], x->cnt = keep[3];
  return r;
}
static tl_stmt *as_group(fin *x, const tl_stmt *s, int64_t g, int depth) {
  return as_scope(x, s, g, g * WG, 1 + g, WG, depth);
}

/* `if lo <= tid < hi: body` */
static tl_stmt *in_threads(fin *x, tl_loc loc, int64_t lo, int64_t hi, tl_stmt *body) {
  tl_module *m = x->rw.m;
  tl_expr *tid = tl_lo_thread_index(m, loc), *c = tl_ir_binary(m, loc, TL_OP_LT, tid, I(x, loc, hi));
  if (lo > 0 && c) c = tl_ir_binary(m, loc, TL_OP_AND, tl_ir_binary(m, loc, TL_OP_GE, tid, I(x, loc, lo)), c);
  return c && body ? tl_lo_if(m, loc, c, body, NULL) : NULL;
}
static tl_stmt *in_range(fin *x, tl_loc loc, int64_t g, tl_stmt *body) {
  return in_threads(x, loc, g * WG, (g + 1) * WG, body);
}

/* The named barrier of threads [lo, hi): one per distinct range (1 … 15;
 * 0 is the block's); -1 past 15 ranges. */
static int64_t range_barrier(fin *x, int64_t lo, int64_t hi) {
  for (int i = 0; i < x->nrange; i++)
    if (x->range[i][0] == lo && x->range[i][1] == hi) return 1 + i;
  if (x->nrange == 15) return -1;
  x->range[x->nrange][0] = lo, x->range[x->nrange][1] = hi;
  return 1 + x->nrange++;
}

/* A thread-range scope: its body as the scope's code, under its thread test. */
static tl_stmt *fin_range_scope(fin *x, const tl_stmt *s, int depth) {
  int64_t lo = 0, hi = 0;
  range_bounds(s, &lo, &hi);
  int64_t bar = range_barrier(x, lo, hi); /* at most 15 ranges: lower_range_scopes */
  if (bar < 0) return NULL;
  return in_threads(x, s->loc, lo, hi, as_scope(x, s->u.ifs.then_s, 0, lo, bar, hi - lo, depth + 1));
}

static tl_stmt *barrier_init(fin *x, const tl_stmt *s) {
  const tl_expr *e = s->u.eval.value;
  tl_module *m = x->rw.m;
  int n = e->u.call.n - 1;
  tl_stmt **inits = tl_arena_alloc(&m->arena, sizeof(tl_stmt *) * (size_t)n);
  if (!inits) return NULL;
  for (int i = 0; i < n; i++) {
    tl_expr *a[3] = {e->u.call.args[0], I(x, s->loc, i), e->u.call.args[i + 1]};
    if (!(inits[i] = CALL(x, s->loc, TL_INTRIN_PTX_MBARRIER_INIT, 3, a))) return NULL;
  }
  tl_expr *tid = tl_lo_thread_index(m, s->loc);
  tl_stmt *pair[2] = {tl_lo_if(m, s->loc, tid ? tl_ir_binary(m, s->loc, TL_OP_EQ, tid, I(x, s->loc, 0)) : NULL,
                               tl_ir_seq(m, s->loc, n, inits), NULL),
                      tl_lo_sync_threads(m, s->loc)};
  return pair[0] && pair[1] ? tl_ir_seq(m, s->loc, 2, pair) : NULL;
}

static bool stores_shared(const tl_stmt *s, int depth) {
  if (!s || depth > TL_LOWER_MAX_DEPTH) return false;
  switch (s->kind) {
  case TL_STMT_SEQ:
    for (int i = 0; i < s->u.seq.n; i++)
      if (stores_shared(s->u.seq.stmts[i], depth + 1)) return true;
    return false;
  case TL_STMT_FOR: return stores_shared(s->u.loop.body, depth + 1);
  case TL_STMT_IF: return stores_shared(s->u.ifs.then_s, depth + 1) || stores_shared(s->u.ifs.else_s, depth + 1);
  case TL_STMT_WHILE: return stores_shared(s->u.whiles.body, depth + 1);
  case TL_STMT_STORE:
    return s->u.store.buffer->scope == TL_SCOPE_SHARED || s->u.store.buffer->scope == TL_SCOPE_SHARED_DYN;
  case TL_STMT_EVAL: return true; /* an intrinsic (cp.async, ...) may write shared memory */
  default: return false;
  }
}

/* Work outside the scopes runs on warpgroup 0; when it writes shared
 * memory, block barriers before and after order it with every scope. */
static tl_stmt *outside(fin *x, const tl_stmt *s, int depth) {
  tl_stmt *r = in_range(x, s->loc, 0, as_group(x, s, 0, depth));
  if (!r || !stores_shared(s, 0)) return r;
  tl_stmt *three[3] = {tl_lo_sync_threads(x->rw.m, s->loc), r, tl_lo_sync_threads(x->rw.m, s->loc)};
  return three[0] && three[2] ? tl_ir_seq(x->rw.m, s->loc, 3, three) : NULL;
}

static tl_stmt *fin_stmt(tl_rewriter *rw, const tl_stmt *s, int depth) {
  fin *x = (fin *)rw;
  tl_loc loc = s->loc;
  if (tl_lo_range_scope_threads(s) > 0) {
    tl_stmt *r = fin_range_scope(x, s, depth);
    if (!r) rw->failed = true;
    return r;
  }
  if (is_scope(s)) {
    int64_t g = 0;
    tl_expr_is_const_int(s->u.ifs.cond->u.call.args[0], &g);
    tl_stmt *r = in_range(x, loc, g, as_group(x, s->u.ifs.then_s, g, depth + 1));
    if (!r) rw->failed = true;
    return r;
  }
  const tl_expr *e = s->kind == TL_STMT_EVAL ? s->u.eval.value : NULL;
  int op = e && e->kind == TL_EXPR_CALL ? e->u.call.op : -1;
  tl_stmt *r = NULL;
  if (op == TL_INTRIN_BARRIER_INIT) {
    r = barrier_init(x, s);
  } else if (op == TL_INTRIN_BARRIER_ARRIVE || op == TL_INTRIN_BARRIER_WAIT || op == TL_INTRIN_CP_ASYNC_BARRIER_NOINC) {
    tl_expr **a = tl_rewrite_exprs(rw, e->u.call.n, e->u.call.args, 0, depth + 1);
    int to = op == TL_INTRIN_BARRIER_ARRIVE ? TL_INTRIN_PTX_MBARRIER_ARRIVE
             : op == TL_INTRIN_BARRIER_WAIT ? TL_INTRIN_PTX_MBARRIER_WAIT
                                            : TL_INTRIN_PTX_CP_ASYNC_MBARRIER_ARRIVE_NOINC;
    r = a ? CALL(x, loc, to, e->u.call.n, a) : NULL;
  } else if (op == TL_INTRIN_SET_MAX_NREG) { /* inside a scope (ws-scopes refused it outside) */
    tl_expr **a = tl_rewrite_exprs(rw, 2, e->u.call.args, 0, depth + 1);
    r = a ? CALL(x, loc, TL_INTRIN_PTX_SETMAXNREG, 2, a) : NULL;
  } else if (op == TL_INTRIN_FENCE_PROXY_ASYNC) { /* in a scope its warpgroup's, outside every thread's */
    r = CALL(x, loc, TL_INTRIN_PTX_FENCE_PROXY_ASYNC, 0, NULL);
  } else if (op == TL_INTRIN_SYNC_THREADS) {
    if (x->g < 0) return NULL; /* block-wide: the default copy */
    tl_expr *a[2] = {I(x, loc, x->bar), I(x, loc, x->cnt)};
    r = CALL(x, loc, TL_INTRIN_PTX_BAR_SYNC, 2, a);
  } else if (x->g < 0 && !x->ranges && s->kind != TL_STMT_SEQ && s->kind != TL_STMT_ALLOC && s->kind != TL_STMT_LET &&
             !tl_lo_has_call(s, TL_INTRIN_WS) && !all_threads_store(s, &x->lets)) {
    r = outside(x, s, depth);
  } else {
    return NULL; /* the default copy, its children through this hook */
  }
  if (!r) rw->failed = true;
  return r;
}

bool tl_ws_scopes_finish(tl_module *m, tl_primfunc *f) {
  ws_scope_annot *a = tl_func_annot(f, &ws_scope_key);
  tl_stmt *k = a && a->threads > 0 ? tl_ir_find_kernel(f->body) : NULL;
  if (!k) return true;
  fin x = {.rw = {.m = m, .max_depth = TL_LOWER_MAX_DEPTH, .stmt = fin_stmt, .call = fin_call},
           .g = -1,
           .ranges = a->ranges};
  tid_lets(k->u.kernel.body, &x.lets, 0);
  tl_stmt *body = tl_rewrite_stmt(&x.rw, k->u.kernel.body, 1);
  if (!body || x.rw.failed) return false;
  k->u.kernel.body = body;
  k->u.kernel.threads = tl_lo_int(m, k->loc, a->threads);
  a->threads = 0;
  return k->u.kernel.threads != NULL;
}
