/* Pass "check-supported" of lib/Lower (tile IR, unchanged; pipeline.c's
 * step 1): reject what no issue has lowered yet.
 *
 * Requires: a verified tile-IR function.
 * Guarantees (on success): the only tile ops left are T.copy, T.async_copy,
 * T.fill, T.clear, T.gemm, T.reduce_*, T.atomic_add and T.use_swizzle (copies and fills
 * of any scope); no T.Parallel nested in a T.Parallel; no tile op inside a
 * T.Parallel but T.atomic_add (its scalar form; lower_atomic.c checks the
 * forms it lowers); no T.gemm with float8 operands on a target without
 * TL_MMA_M16N8K32_E4M3; no T.reduce_* reading or writing a T.alloc_local buffer;
 * every T.Kernel has a constant thread count in [1, 1024] and a grid the
 * launch limits allow (x 2^31 - 1, y and z 65535 blocks); no global
 * allocation but T.alloc_global's (T.alloc_buffer(..., scope="global"), a
 * kernel workspace, is made by lowering only: stream-K's,
 * lib/Lower/Hopper/stream_k.c).  (T.Pipelined
 * loops are accepted: pipeline_loop.c lowers them.)
 * Each rejected construct is one error at its own location, in program
 * order, spelled "T.<op> is not lowered yet" (the pattern tests rely on).
 * No `while` loop inside a T.Parallel; the condition of every other one is
 * the same in all threads of the block where its body needs the block
 * (uniform.c).  Then the static checks of static_check.c (bounds, unwritten
 * reads, T.Parallel in per-thread code). */
#include "Lower/lower_internal.h"

typedef struct cs_state {
  tl_diag *d;
  const tl_target *target;
  int errors;
} cs_state;

/* T.alloc_reducer (docs/language.md "Reducers"): every replica starts from
 * the T.fill value and T.finalize_reducer combines them, so a sum reducer
 * filled with anything but 0 would count it once per replica (TileLang
 * requires 0 too); one error at the T.fill. */
static void check_reducer_fill(cs_state *st, const tl_stmt *s) {
  const tl_operand *o = &s->u.tile.args[0], *v = s->u.tile.nargs > 1 ? &s->u.tile.args[1] : NULL;
  const tl_buffer *b = o->kind == TL_OPND_REGION ? o->region.buffer : NULL;
  if (!b || b->reducer != TL_REDUCER_SUM || !v || !v->expr) return;
  const tl_expr *e = v->expr;
  while (e->kind == TL_EXPR_CAST) e = e->u.cast.value;
  if ((e->kind == TL_EXPR_INT && e->u.ival == 0) || (e->kind == TL_EXPR_FLOAT && e->u.fval == 0.0)) return;
  tl_error(st->d, v->loc.line ? v->loc : s->loc,
           "T.fill of the sum reducer '%s': the value must be 0 (each replica starts from it); add a constant "
           "after T.finalize_reducer instead",
           b->name);
  st->errors++;
}

static const tl_expr *strip_casts(const tl_expr *e) {
  while (e && e->kind == TL_EXPR_CAST) e = e->u.cast.value;
  return e;
}

/* A store to a reducer in a T.Parallel must be its update, R[i] = R[i] + x
 * (op sum), T.max(R[i], x) (max), T.min(R[i], x) (min), either operand
 * order: what each thread accumulates into its replica and
 * T.finalize_reducer combines (TileLang's rule for alloc_reducer). */
static void check_reducer_store(cs_state *st, const tl_stmt *s) {
  const tl_buffer *b = s->u.store.buffer;
  if (!b || !b->reducer) return;
  static const char *const ops[] = {"?", "sum", "max", "min"}, *const forms[] = {"?", "R[...] += x",
                                                                                 "R[...] = T.max(R[...], x)",
                                                                                 "R[...] = T.min(R[...], x)"};
  tl_binop want = b->reducer == TL_REDUCER_SUM ? TL_OP_ADD : b->reducer == TL_REDUCER_MAX ? TL_OP_MAX : TL_OP_MIN;
  const tl_expr *v = strip_casts(s->u.store.value);
  bool ok = false;
  if (v && v->kind == TL_EXPR_BINARY && v->u.bin.op == want)
    for (int k = 0; k < 2 && !ok; k++) {
      const tl_expr *a = strip_casts(k ? v->u.bin.b : v->u.bin.a);
      if (!a || a->kind != TL_EXPR_LOAD || a->u.load.buffer != b || a->u.load.n != s->u.store.n) continue;
      ok = true;
      for (int d = 0; d < s->u.store.n && ok; d++) ok = tl_expr_equal(a->u.load.indices[d], s->u.store.indices[d]);
    }
  if (ok) return;
  int r = b->reducer <= TL_REDUCER_MIN ? b->reducer : 0;
  tl_error(st->d, s->loc, "'%s' is a reducer (op=\"%s\"): a T.Parallel may only update it as %s", b->name, ops[r],
           forms[r]);
  st->errors++;
}

/* A T.reduce_* whose source or destination is a T.alloc_local buffer (one
 * copy per thread, no layout) has no meaning the reference evaluator, the
 * executor and the GPU share (each thread would reduce into its own copy):
 * one error at the operand, as TileLang's layout inference refuses it too
 * (found by the mutation fuzzer: rms_norm.py's A_powsum made local). */
static void check_reduce_scopes(cs_state *st, const tl_stmt *s, const char *name) {
  for (int i = 0; i < 2 && i < s->u.tile.nargs; i++) {
    const tl_operand *o = &s->u.tile.args[i];
    const tl_buffer *b = o->kind == TL_OPND_REGION ? o->region.buffer : NULL;
    if (!b || b->scope != TL_SCOPE_LOCAL) continue;
    tl_error(st->d, o->loc.line ? o->loc : s->loc,
             "T.%s: the %s '%s' is a T.alloc_local buffer (one copy per thread); a tile reduction reads and "
             "writes T.alloc_fragment or shared buffers",
             name, i ? "destination" : "source", b->name);
    st->errors++;
  }
}

/* A T.gemm with a float8 operand needs mma.sync .e4m3/.e5m2 (sm_89 and
 * newer, PTX ISA §9.7.14.5): one error at the T.gemm on older targets. */
static void check_gemm_target(cs_state *st, const tl_stmt *s) {
  for (int k = 0; k < 2 && k < s->u.tile.nargs; k++) {
    const tl_operand *o = &s->u.tile.args[k];
    const tl_buffer *b = o->kind == TL_OPND_REGION ? o->region.buffer : NULL;
    if (b && tl_dtype_is_fp8(b->dtype) && st->target && !(st->target->mma_shapes & TL_MMA_M16N8K32_E4M3)) {
      tl_error(st->d, s->loc, "fp8 mma needs sm_89 or newer (T.gemm with %s operands; the target is %s)",
               tl_dtype_name(b->dtype), st->target->name);
      st->errors++;
      return;
    }
  }
}

/* The largest grid a launch may have: x 2^31 - 1, y and z 65535 blocks
 * (CUDA C++ Programming Guide, Table "Technical Specifications per Compute
 * Capability"; cuLaunchKernel refuses more).  A launch limit, not a rule of
 * the IR: a kernel past it parses (its work can be analyzed,
 * tl_module_analyze) and is refused here, before anything is lowered. */
static void check_grid(cs_state *st, const tl_stmt *s) {
  for (int i = 0; i < s->u.kernel.ngrid && i < 3; i++) {
    const tl_expr *g = s->u.kernel.grid[i];
    int64_t v;
    if (!g || !tl_expr_is_const_int(g, &v) || v <= (i == 0 ? INT32_MAX : 65535)) continue;
    tl_error(st->d, g->loc.line ? g->loc : s->loc,
             "T.Kernel: grid dimension %d is %lld blocks, over the %s of the %s axis", i, (long long)v,
             i == 0 ? "2147483647" : "65535",
             i == 0   ? "x"
             : i == 1 ? "y"
                      : "z");
    st->errors++;
  }
}

/* in_parallel: bit 1 inside a T.Parallel, bit 2 inside an if (IN_IF) */
#define IN_IF 2
static void check(cs_state *st, const tl_stmt *s, int in_parallel, int depth) {
  if (!s) return;
  if (!tl_lo_nesting_ok(st->d, s, depth, &st->errors, true)) return;
  switch (s->kind) {
  case TL_STMT_SEQ:
    for (int i = 0; i < s->u.seq.n; i++) check(st, s->u.seq.stmts[i], in_parallel, depth + 1);
    return;
  case TL_STMT_FOR:
    if (s->u.loop.kind == TL_LOOP_PARALLEL && (in_parallel & 1)) {
      tl_error(st->d, s->loc, "T.Parallel nested in a T.Parallel is not lowered yet");
      st->errors++;
      return;
    }
    check(st, s->u.loop.body, in_parallel | (s->u.loop.kind == TL_LOOP_PARALLEL), depth + 1);
    return;
  case TL_STMT_KERNEL: {
    int64_t t = 0;
    if (!tl_expr_is_const_int(s->u.kernel.threads, &t) || t < 1 || t > 1024) {
      tl_error(st->d, s->u.kernel.threads ? s->u.kernel.threads->loc : s->loc,
               "T.Kernel with a non-constant thread count is not lowered yet");
      st->errors++;
    }
    check_grid(st, s);
    check(st, s->u.kernel.body, in_parallel, depth + 1);
    return;
  }
  case TL_STMT_IF:
    check(st, s->u.ifs.then_s, in_parallel | IN_IF, depth + 1);
    check(st, s->u.ifs.else_s, in_parallel | IN_IF, depth + 1);
    return;
  case TL_STMT_WHILE: /* its condition's uniformity: uniform.c */
    if (in_parallel & 1) {
      tl_error(st->d, s->loc, "a 'while' loop inside a T.Parallel loop is not lowered yet");
      st->errors++;
      return;
    }
    check(st, s->u.whiles.body, in_parallel, depth + 1);
    return;
  case TL_STMT_TILE: {
    int op = s->u.tile.op;
    const char *name = op >= 0 && op < TL_TILE_NUM_OPS ? tl_tile_ops[op].name : "?";
    if (op == TL_TILE_THREAD_ALLREDUCE && (in_parallel & IN_IF)) { /* its shuffles and barriers need every thread */
      tl_error(st->d, s->loc,
               "T.thread_allreduce inside an if is not lowered yet (every thread of the block must reach it)");
      st->errors++;
      return;
    }
    if ((in_parallel & 1) && tl_tile_atomic_intrin(op, NULL) < 0) {
      tl_error(st->d, s->loc, "T.%s inside a T.Parallel loop is not lowered yet", name);
      st->errors++;
      return;
    }
    switch (op) {
    case TL_TILE_COPY:
    case TL_TILE_ASYNC_COPY:
    case TL_TILE_FILL: check_reducer_fill(st, s); return;
    case TL_TILE_CLEAR: return;            /* any scopes, shared included (lower_shared_copy.c) */
    case TL_TILE_FINALIZE_REDUCER: return; /* lower_reduce.c */
    case TL_TILE_THREAD_ALLREDUCE: return; /* lower_reduce.c */
    case TL_TILE_USE_SWIZZLE: return;
    case TL_TILE_ANNOTATE_LAYOUT: return; /* a hint: layout_infer.c (the verifier refuses global buffers) */
    case TL_TILE_ATOMIC_ADD:
    case TL_TILE_ATOMIC_MAX:
    case TL_TILE_ATOMIC_MIN:
    case TL_TILE_ATOMIC_ADDX2:
    case TL_TILE_ATOMIC_ADDX4: return; /* lower_atomic.c */
    case TL_TILE_GEMM: /* forms and tiles checked by layout inference */ check_gemm_target(st, s); return;
    case TL_TILE_GEMM_SP: return; /* forms checked by layout inference and lower_gemm_sp.c */
    case TL_TILE_REDUCE_MAX:
    case TL_TILE_REDUCE_MIN:
    case TL_TILE_REDUCE_SUM:
    case TL_TILE_REDUCE_ABSSUM:
    case TL_TILE_REDUCE_ABSMAX: /* lower_reduce.c */ check_reduce_scopes(st, s, name); return;
    default:
      tl_error(st->d, s->loc, "T.%s is not lowered yet", name);
      st->errors++;
      return;
    }
  }
  case TL_STMT_ALLOC:
    if (s->u.alloc.buffer && s->u.alloc.buffer->scope == TL_SCOPE_GLOBAL && !s->u.alloc.buffer->zero_per_launch &&
        !tl_buffer_is_view(s->u.alloc.buffer)) {
      tl_error(st->d, s->loc, "T.alloc_buffer with scope \"global\" (a kernel workspace) is not lowered yet");
      st->errors++;
    }
    return;
  case TL_STMT_STORE:
    if (in_parallel & 1) check_reducer_store(st, s);
    return;
  default: return;
  }
}

bool tl_lower_check_supported(tl_module *m, tl_primfunc *f, const tl_target *target, tl_diag *d) {
  (void)m;
  cs_state st = {d, target, 0};
  check(&st, f->body, 0, 0);
  if (st.errors || !tl_lower_check_while_uniform(f, d)) return false;
  return tl_lower_static_check(f, d);
}
