/* When a kernel may run on more threads than it asks for (tl_ws_wider_threads,
 * for warp_specialize.c's attention form and gemm_wgmma.c's rs-form T.gemm):
 * both need block_M = 64 x the (consumer) warpgroups; a kernel written with
 * fewer threads (TileLang's example_mha_fwd_bshd: block_M 128 on 128
 * threads) may run on more when nothing in it can tell how many threads run
 * it: its work is all tile ops, T.Parallel loops and block-uniform control.
 * Requires: tile IR (before layout inference, which partitions over the
 * threads).  Guarantees: a count only for a kernel body whose every
 * statement is block-level (docs/hopper.md "More consumer threads than the
 * kernel asks for"); a T.annotate_layout of a fragment (its layout maps
 * elements to the kernel's threads) keeps the count. */
#include "IR/visit.h"
#include "Lower/Hopper/ws_internal.h"
#include "Lower/lower_internal.h"

/* A node that reads the thread index or has an effect per thread: a call
 * with side effects or a collective (T.print, barriers, atomics outside a
 * tile op, shuffles), T.get_thread_binding / lane / warp index, a thread
 * variable. */
static bool per_thread_node(const tl_expr *e, void *user) {
  (void)user;
  if (e->kind == TL_EXPR_VAR) return e->u.var->kind == TL_VAR_THREAD;
  if (e->kind != TL_EXPR_CALL) return false;
  int op = e->u.call.op;
  if (op < 0 || op >= tl_num_intrinsics) return true;
  return op == TL_INTRIN_GET_THREAD_BINDING || op == TL_INTRIN_GET_LANE_IDX || op == TL_INTRIN_GET_WARP_IDX ||
         tl_intrinsics[op].effects != TL_EFF_NONE;
}

typedef struct expr_scan {
  tl_visitor v;
  bool bad;
} expr_scan;
static void scan_expr(tl_visitor *v, const tl_expr *e) {
  expr_scan *x = (expr_scan *)v;
  if (!x->bad && per_thread_node(e, NULL)) x->bad = true;
}

/* The tile ops whose meaning is the block's (they partition their own work
 * over whatever threads run them). */
static bool block_level_op(int op) {
  switch (op) {
  case TL_TILE_COPY:
  case TL_TILE_GEMM:
  case TL_TILE_FILL:
  case TL_TILE_CLEAR:
  case TL_TILE_REDUCE_MAX:
  case TL_TILE_REDUCE_MIN:
  case TL_TILE_REDUCE_SUM:
  case TL_TILE_REDUCE_ABSSUM:
  case TL_TILE_REDUCE_ABSMAX:
  case TL_TILE_USE_SWIZZLE:
  case TL_TILE_ANNOTATE_LAYOUT: return true;
  default: return false;
  }
}

/* A read of a fragment element outside a T.Parallel: the thread's own
 * register, whose element the layout (over the kernel's threads) decides. */
static bool fragment_read(const tl_expr *e, void *user) {
  (void)user;
  return e->kind == TL_EXPR_LOAD && e->u.load.buffer && e->u.load.buffer->scope == TL_SCOPE_FRAGMENT;
}
static bool reads_fragment(const tl_expr *e) { return e && tl_expr_any(e, fragment_read, NULL, -1, true); }

/* Statements: a store only inside a T.Parallel (one element per iteration,
 * whoever runs it); outside one, no fragment element read by a LET, an if's
 * condition or a loop's bounds; no per-thread buffers, no expression
 * statements, no while loops or thread-bound loops. */
static bool block_level(const tl_stmt *s, bool in_par, int depth) {
  if (!s) return true;
  if (depth > 64) return false;
  switch (s->kind) {
  case TL_STMT_SEQ:
    for (int i = 0; i < s->u.seq.n; i++)
      if (!block_level(s->u.seq.stmts[i], in_par, depth + 1)) return false;
    return true;
  case TL_STMT_FOR:
    if (s->u.loop.kind == TL_LOOP_THREAD || s->u.loop.kind == TL_LOOP_VECTORIZED) return false;
    for (int i = 0; !in_par && i < s->u.loop.nvars; i++)
      if (reads_fragment(s->u.loop.mins ? s->u.loop.mins[i] : NULL) || reads_fragment(s->u.loop.extents[i]))
        return false;
    return block_level(s->u.loop.body, in_par || s->u.loop.kind == TL_LOOP_PARALLEL, depth + 1);
  case TL_STMT_IF:
    if (!in_par && reads_fragment(s->u.ifs.cond)) return false;
    return block_level(s->u.ifs.then_s, in_par, depth + 1) && block_level(s->u.ifs.else_s, in_par, depth + 1);
  case TL_STMT_ALLOC: {
    tl_scope sc = s->u.alloc.buffer->scope;
    return sc == TL_SCOPE_SHARED || sc == TL_SCOPE_SHARED_DYN || sc == TL_SCOPE_FRAGMENT || sc == TL_SCOPE_GLOBAL;
  }
  case TL_STMT_STORE: return in_par;
  case TL_STMT_LET: return in_par || !reads_fragment(s->u.let.value);
  case TL_STMT_TILE:
    if (s->u.tile.op == TL_TILE_ANNOTATE_LAYOUT) /* a fragment's T.Fragment layout names its threads */
      for (int i = 0; i < s->u.tile.nargs; i++)
        if (s->u.tile.args[i].kind == TL_OPND_REGION && s->u.tile.args[i].region.buffer &&
            s->u.tile.args[i].region.buffer->scope == TL_SCOPE_FRAGMENT)
          return false;
    return block_level_op(s->u.tile.op);
  default: return false; /* EVAL, WHILE, a nested KERNEL */
  }
}

static bool thread_count_free(const tl_stmt *kernel_body) {
  expr_scan x = {.v = {.expr = scan_expr}};
  tl_visit_stmt(&x.v, kernel_body);
  return !x.bad && !x.v.too_deep && block_level(kernel_body, false, 0);
}

int64_t tl_ws_wider_threads(int64_t block_M, int64_t threads, int64_t max_threads, const tl_stmt *kernel_body) {
  int64_t T = block_M > 0 && block_M % 64 == 0 ? block_M / 64 * 128 : 0;
  return T > threads && T <= 256 && T <= max_threads && thread_count_free(kernel_body) ? T : 0;
}
