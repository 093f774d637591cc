/* Pass "frag-pipeline" of lib/Lower (SIMT IR → SIMT IR): double-buffered
 * mma fragments across the k-steps of a pipelined GEMM loop, with the
 * pipeline's barrier moved in front of the last k-step's mma.sync block.
 *
 * Requires: lowered SIMT IR (after lower-tile-ops).  It looks at the serial
 * loops the pipeline pass (pipeline_loop.c) made, those with a stage count
 * s >= 2 in num_stages (the pass's record, lib/IR/tir.h), for the shape that
 * pass and the gemm lowering (lower_gemm.c) produce together:
 *
 *     for ko in T.serial(lo, lo + n, annotations={"num_stages": s}):
 *         T.ptx_wait_group(s - 2); T.sync_threads()      W, S
 *         <copies of stage ko + s - 1, commit>            I  (no fragment / mma use)
 *         <allocs of A_regs, B_regs; lets free of ko>     hoistable
 *         for kk in T.unroll(KS):                          KS even, >= 2
 *             L(kk, ko): ldmatrix A_regs / B_regs         (for mi / for nj)
 *             M(kk):     mma on A_regs, B_regs            (for mi: for nq)
 *
 * and rewrites it (the schedule of the hand-written
 * mma.sync reference GEMM the benchmarks time, docs/performance.md) into
 *
 *     <allocs of A_frag, B_frag (2 buffers each), lets>
 *     W; S; L(0, lo) → buffer 0
 *     for ko in T.serial(lo, lo + n):
 *         L(1, ko) → buffer 1;  I;  M(0) from buffer 0
 *         L(2, ko) → buffer 0;  M(1) from buffer 1         (KS > 2)
 *         ...
 *         W; S; L(0, min(ko + 1, lo + n - 1)) → buffer 0;  M(KS-1) from buffer 1
 *
 * so that the fragments of the next k-step load while the current one's mma
 * run, and after the barrier every warp already holds a whole k-step of
 * fragments: the tensor pipe keeps working across the barrier instead of
 * waiting for ldmatrix latency.
 *
 * Guarantees: no loop has num_stages any more (this pass is the last reader
 * of the pipelines' stage counts; SIMT IR after it never shows them).  A
 * rewritten loop runs the same mma.sync on the same fragment
 * values in the same order (see Correctness), every shared read still
 * follows the wait and barrier that make its stage complete, and no new
 * read of an in-flight stage is added; any loop that does not match the
 * shape above exactly is left unchanged.
 *
 * Correctness (the pipeline pass's argument, pipeline_loop.c, moved by one
 * k-step).  Groups: W of iteration ko now follows that iteration's commit,
 * so (s - 1) + ko + 1 groups are committed and wait_group(s - 2) completes
 * groups 0..ko+1 — the data of tile ko + 1 that the L(0, ko + 1) after it
 * and the L(k, ko + 1) of the next iteration read; the W before the loop
 * completes group 0 (tile lo).  Barrier: the copies I of iteration ko write
 * stage (ko - 1) % s, whose readers L(0, ko - 1) and L(k >= 1, ko - 1) all
 * come before the barrier S of iteration ko - 1, which comes before I; the
 * reads after S of iteration ko touch stage (ko + 1) % s, which no copy
 * issued before the next S writes (s >= 2).  The last iteration's L(0) reads
 * stage (lo + n - 1) % s again (min), written and complete, so no read of
 * uninitialised or in-flight shared memory is added.  The register buffers
 * alternate by k-step parity (KS even keeps that parity across iterations).
 * Anything else in the loop, or a shape that does not match exactly, leaves
 * the loop as it is.
 *
 * Hardware facts: PTX ISA §9.7.14.5.15 (ldmatrix is a synchronous warp-wide
 * shared load into registers), §9.7.13.1 (bar.sync orders prior shared
 * accesses), §9.7.9.25.3/.4 (cp.async groups). */
#include <stdlib.h>
#include <string.h>

#include "IR/rewrite.h"
#include "Lower/lower_internal.h"

typedef struct fp_state {
  tl_module *m;
  tl_diag *d;
  tl_names names;
  bool oom;
} fp_state;

/* The rewriting context of one clone. */
typedef struct fp_rw {
  tl_rewriter rw; /* first: the hooks cast back to fp_rw */
  fp_state *st;
  tl_map subst; /* var → expr */
  tl_buffer *ar, *br, *ar2, *br2;
  int64_t offa, offb; /* register offsets of the chosen buffer */
} fp_rw;

static bool is_call(const tl_stmt *s, int op) {
  return s && s->kind == TL_STMT_EVAL && s->u.eval.value && s->u.eval.value->kind == TL_EXPR_CALL &&
         s->u.eval.value->u.call.op == op;
}

/* Does e mention a call to op, a load, or one of the buffers b1, b2? */
static bool expr_uses(const tl_expr *e, int op, const tl_buffer *b1, const tl_buffer *b2, bool loads, int depth) {
  if (!e) return false;
  if (depth > TL_LOWER_MAX_DEPTH) return true;
  switch (e->kind) {
  case TL_EXPR_BINARY:
    return expr_uses(e->u.bin.a, op, b1, b2, loads, depth + 1) || expr_uses(e->u.bin.b, op, b1, b2, loads, depth + 1);
  case TL_EXPR_UNARY: return expr_uses(e->u.un.a, op, b1, b2, loads, depth + 1);
  case TL_EXPR_SELECT:
    return expr_uses(e->u.sel.cond, op, b1, b2, loads, depth + 1) ||
           expr_uses(e->u.sel.t, op, b1, b2, loads, depth + 1) || expr_uses(e->u.sel.f, op, b1, b2, loads, depth + 1);
  case TL_EXPR_CAST: return expr_uses(e->u.cast.value, op, b1, b2, loads, depth + 1);
  case TL_EXPR_LOAD:
    if (loads || e->u.load.buffer == b1 || e->u.load.buffer == b2) return true;
    for (int i = 0; i < e->u.load.n; i++)
      if (expr_uses(e->u.load.indices[i], op, b1, b2, loads, depth + 1)) return true;
    return false;
  case TL_EXPR_CALL:
    if (e->u.call.op == op) return true;
    for (int i = 0; i < e->u.call.n; i++)
      if (expr_uses(e->u.call.args[i], op, b1, b2, loads, depth + 1)) return true;
    return false;
  case TL_EXPR_BUFFER: return e->u.buffer == b1 || e->u.buffer == b2;
  case TL_EXPR_RAMP:
    return expr_uses(e->u.ramp.base, op, b1, b2, loads, depth + 1) ||
           expr_uses(e->u.ramp.stride, op, b1, b2, loads, depth + 1);
  case TL_EXPR_BROADCAST: return expr_uses(e->u.bcast.value, op, b1, b2, loads, depth + 1);
  default: return false;
  }
}

/* Does statement s (an issue statement) touch anything the rewrite moves:
 * fragments, ldmatrix, mma, barriers, waits, or the register buffers? */
static bool stmt_blocks(const fp_state *st, const tl_stmt *s, const tl_buffer *ar, const tl_buffer *br, int depth) {
  if (!s) return false;
  if (depth > TL_LOWER_MAX_DEPTH) return true;
  static const int ops[4] = {TL_INTRIN_PTX_WAIT_GROUP, TL_INTRIN_SYNC_THREADS, TL_INTRIN_PTX_LDMATRIX,
                             TL_INTRIN_PTX_MMA};
  switch (s->kind) {
  case TL_STMT_SEQ:
    for (int i = 0; i < s->u.seq.n; i++)
      if (stmt_blocks(st, s->u.seq.stmts[i], ar, br, depth + 1)) return true;
    return false;
  case TL_STMT_IF:
    for (int k = 0; k < 4; k++)
      if (expr_uses(s->u.ifs.cond, ops[k], ar, br, false, 0)) return true;
    return stmt_blocks(st, s->u.ifs.then_s, ar, br, depth + 1) || stmt_blocks(st, s->u.ifs.else_s, ar, br, depth + 1);
  case TL_STMT_FOR: return stmt_blocks(st, s->u.loop.body, ar, br, depth + 1);
  case TL_STMT_WHILE:
    for (int k = 0; k < 4; k++)
      if (expr_uses(s->u.whiles.cond, ops[k], ar, br, false, 0)) return true;
    return stmt_blocks(st, s->u.whiles.body, ar, br, depth + 1);
  case TL_STMT_EVAL:
    for (int k = 0; k < 4; k++)
      if (expr_uses(s->u.eval.value, ops[k], ar, br, false, 0)) return true;
    return false;
  case TL_STMT_STORE:
    if (s->u.store.buffer == ar || s->u.store.buffer == br) return true;
    for (int k = 0; k < 4; k++)
      if (expr_uses(s->u.store.value, ops[k], ar, br, false, 0)) return true;
    return false;
  default: return true; /* ALLOC / LET are handled by the caller; others are not expected */
  }
}

/* ------------------------------------------------------------- cloning */
/* Clones go through the IR rewriter (IR/rewrite.h) with these hooks. */

/* The register-buffer operand pair (args[bi], args[bi + 1]) of a fragment
 * call, retargeted to the double buffer. */
static bool retarget(fp_rw *w, tl_expr **args, int n, int bi) {
  if (bi + 1 >= n || !args[bi] || args[bi]->kind != TL_EXPR_BUFFER) return true;
  tl_module *m = w->st->m;
  tl_loc loc = args[bi]->loc;
  tl_buffer *b = args[bi]->u.buffer, *nb = NULL;
  int64_t off = 0;
  if (b == w->ar) nb = w->ar2, off = w->offa;
  else if (b == w->br) nb = w->br2, off = w->offb;
  if (!nb) return true;
  args[bi] = tl_ir_buffer_ref(m, loc, nb);
  args[bi + 1] = tl_lo_add(m, loc, args[bi + 1], tl_lo_int(m, loc, off));
  return args[bi] && args[bi + 1];
}

/* ldmatrix and mma calls name the double buffers. */
static tl_expr *clone_call(tl_rewriter *rw, const tl_expr *e, int n, tl_expr **a) {
  fp_rw *w = (fp_rw *)rw;
  if (e->u.call.op == TL_INTRIN_PTX_LDMATRIX && !retarget(w, a, n, 0)) return NULL;
  if (e->u.call.op == TL_INTRIN_PTX_MMA && (!retarget(w, a, n, 0) || !retarget(w, a, n, 2))) return NULL;
  tl_expr *r = tl_ir_call(w->st->m, e->loc, e->u.call.op, n, a);
  if (r) r->dtype = e->dtype;
  return r;
}

/* Only unit-stride ramps (what the gemm lowering emits) are cloned. */
static tl_expr *clone_expr(tl_rewriter *rw, const tl_expr *e, int depth) {
  (void)depth;
  int64_t stride = 0;
  if (e->kind == TL_EXPR_RAMP && !(tl_expr_is_const_int(e->u.ramp.stride, &stride) && stride == 1)) rw->failed = true;
  return NULL;
}

/* Loops get fresh variables; only the shapes the gemm lowering emits (SEQ,
 * single-variable loops without a step, EVAL) are cloned. */
static tl_stmt *clone_stmt(tl_rewriter *rw, const tl_stmt *s, int depth) {
  fp_rw *w = (fp_rw *)rw;
  tl_module *m = w->st->m;
  if (s->kind == TL_STMT_SEQ || s->kind == TL_STMT_EVAL) return NULL;
  if (s->kind != TL_STMT_FOR || s->u.loop.nvars != 1 || s->u.loop.step) {
    rw->failed = true;
    return NULL;
  }
  tl_stmt *r = tl_ir_stmt(m, s->loc, s->kind);
  if (!r) return NULL;
  *r = *s;
  tl_var *ov = s->u.loop.vars[0];
  tl_var *nv = tl_names_fresh_var(&w->st->names, ov->loc, ov->name, ov->dtype, ov->kind);
  tl_expr *nve = nv ? tl_ir_var(m, ov->loc, nv) : NULL;
  if (!nve || !tl_map_put(&w->subst, ov, nve)) return NULL;
  r->u.loop.vars = tl_arena_alloc(&m->arena, sizeof(tl_var *));
  r->u.loop.mins = tl_arena_alloc(&m->arena, sizeof(tl_expr *));
  if (!r->u.loop.vars || !r->u.loop.mins) return NULL;
  r->u.loop.vars[0] = nv;
  r->u.loop.mins[0] =
      s->u.loop.mins && s->u.loop.mins[0] ? tl_rewrite_expr(rw, s->u.loop.mins[0], 1) : tl_lo_int(m, s->loc, 0);
  r->u.loop.extents = tl_rewrite_exprs(rw, 1, s->u.loop.extents, 0, 0);
  r->u.loop.body = tl_rewrite_stmt(rw, s->u.loop.body, depth + 1);
  tl_map_remove(&w->subst, ov);
  if (!r->u.loop.mins[0] || !r->u.loop.extents || !r->u.loop.body) return NULL;
  return r;
}

/* A clone of s with kk := k, ko := koe, fragments in buffer `buf`. */
static tl_stmt *slice(fp_state *st, const tl_stmt *s, tl_var *kk, int64_t k, tl_var *ko, tl_expr *koe, tl_buffer *ar,
                      tl_buffer *br, tl_buffer *ar2, tl_buffer *br2, int64_t na, int64_t nb, int buf) {
  fp_rw w;
  memset(&w, 0, sizeof w);
  w.st = st;
  tl_map_init(&w.subst);
  w.rw.m = st->m;
  w.rw.subst = &w.subst;
  w.rw.max_depth = TL_LOWER_MAX_DEPTH;
  w.rw.expr = clone_expr;
  w.rw.call = clone_call;
  w.rw.stmt = clone_stmt;
  w.ar = ar, w.br = br, w.ar2 = ar2, w.br2 = br2;
  w.offa = buf * na, w.offb = buf * nb;
  tl_stmt *r = NULL;
  tl_expr *kc = tl_lo_int(st->m, s->loc, k);
  if (kc && tl_map_put(&w.subst, kk, kc) && (!koe || tl_map_put(&w.subst, ko, koe))) r = tl_rewrite_stmt(&w.rw, s, 0);
  tl_map_free(&w.subst);
  if (!r) st->oom = true;
  return r;
}

/* ------------------------------------------------------------ matching */
typedef TL_VEC(tl_stmt *) stmt_vec;

static bool flatten(stmt_vec *out, tl_stmt *s, int depth) {
  if (depth > 8) return false;
  if (s->kind == TL_STMT_SEQ) {
    for (int i = 0; i < s->u.seq.n; i++)
      if (!flatten(out, s->u.seq.stmts[i], depth + 1)) return false;
    return true;
  }
  return tl_vec_push(out, s);
}

/* The only statement of an unroll loop nest of `levels` loops, or NULL. */
static const tl_stmt *nest_leaf(const tl_stmt *s, int levels) {
  for (int i = 0; i < levels; i++) {
    if (!s || s->kind != TL_STMT_FOR || s->u.loop.kind != TL_LOOP_UNROLL || s->u.loop.nvars != 1) return NULL;
    s = s->u.loop.body;
  }
  return s;
}

static tl_buffer *arg_buffer(const tl_stmt *s, int i) {
  const tl_expr *c = s->u.eval.value;
  if (i >= c->u.call.n || !c->u.call.args[i] || c->u.call.args[i]->kind != TL_EXPR_BUFFER) return NULL;
  return c->u.call.args[i]->u.buffer;
}

static int64_t local_size(const tl_buffer *b) {
  int64_t n = 0;
  if (!b || b->scope != TL_SCOPE_LOCAL || b->ndim != 1 || !tl_expr_is_const_int(b->shape[0], &n)) return 0;
  return n;
}

static tl_buffer *double_buffer(fp_state *st, const tl_buffer *b, const char *base, int64_t n) {
  tl_var *nm = tl_names_fresh_var(&st->names, b->loc, base, b->dtype, TL_VAR_LET); /* reserves the name */
  tl_expr **shape = tl_arena_alloc(&st->m->arena, sizeof(tl_expr *));
  if (!nm || !shape || !(shape[0] = tl_lo_int(st->m, b->loc, 2 * n))) return NULL;
  return tl_ir_new_buffer(st->m, b->loc, nm->name, b->dtype, TL_SCOPE_LOCAL, 1, shape);
}

/* The rewrite of serial loop `loop`, or NULL to keep it. */
static tl_stmt *rewrite_loop(fp_state *st, tl_stmt *loop) {
  tl_module *m = st->m;
  tl_loc loc = loop->loc;
  /* only the serial loop of a pipeline (its stage count recorded by pipeline_loop.c) */
  int s = loop->u.loop.num_stages;
  if (loop->u.loop.kind != TL_LOOP_SERIAL || s < 2 || loop->u.loop.nvars != 1 || loop->u.loop.step) return NULL;
  tl_var *ko = loop->u.loop.vars[0];
  tl_expr *lo = loop->u.loop.mins && loop->u.loop.mins[0] ? loop->u.loop.mins[0] : tl_lo_int(m, loc, 0);
  tl_expr *n = loop->u.loop.extents[0];
  stmt_vec b = {0};
  tl_stmt *res = NULL;
  if (!lo || !flatten(&b, loop->u.loop.body, 0) || b.len < 3) goto out;
  tl_stmt *W = b.data[0], *S = b.data[1], *G = b.data[b.len - 1];
  /* W waits for all but the s - 2 newest groups (the pipeline's wait), then S */
  int64_t w = -1;
  if (!is_call(W, TL_INTRIN_PTX_WAIT_GROUP) || !is_call(S, TL_INTRIN_SYNC_THREADS) || W->u.eval.value->u.call.n != 1 ||
      !tl_expr_is_const_int(W->u.eval.value->u.call.args[0], &w) || w != s - 2)
    goto out;
  /* G: for kk in T.unroll(KS): { for mi: ldmatrix A; for nj: ldmatrix B; for mi: for nq: mma } */
  int64_t KS = 0, z = 0;
  if (G->kind != TL_STMT_FOR || G->u.loop.kind != TL_LOOP_UNROLL || G->u.loop.nvars != 1 || G->u.loop.step ||
      !tl_expr_is_const_int(G->u.loop.extents[0], &KS) || KS < 2 || KS % 2 ||
      (G->u.loop.mins && G->u.loop.mins[0] && (!tl_expr_is_const_int(G->u.loop.mins[0], &z) || z)))
    goto out;
  tl_var *kk = G->u.loop.vars[0];
  const tl_stmt *gb = G->u.loop.body;
  if (gb->kind != TL_STMT_SEQ || gb->u.seq.n != 3) goto out;
  const tl_stmt *la = nest_leaf(gb->u.seq.stmts[0], 1), *lb = nest_leaf(gb->u.seq.stmts[1], 1),
                *mm = nest_leaf(gb->u.seq.stmts[2], 2);
  if (!is_call(la, TL_INTRIN_PTX_LDMATRIX) || !is_call(lb, TL_INTRIN_PTX_LDMATRIX) || !is_call(mm, TL_INTRIN_PTX_MMA))
    goto out;
  tl_buffer *ar = arg_buffer(la, 0), *br = arg_buffer(lb, 0);
  if (!ar || !br || ar == br || arg_buffer(mm, 0) != ar || arg_buffer(mm, 2) != br) goto out;
  int64_t na = local_size(ar), nb = local_size(br);
  if (!na || !nb) goto out;
  /* The statements between S and G: allocs of ar/br, hoistable lets, issue statements. */
  stmt_vec hoist = {0}, issue = {0};
  bool ok = true, seen_a = false, seen_b = false;
  for (size_t i = 2; ok && i + 1 < b.len; i++) {
    tl_stmt *s = b.data[i];
    if (s->kind == TL_STMT_ALLOC) {
      if (s->u.alloc.buffer == ar) seen_a = true;
      else if (s->u.alloc.buffer == br) seen_b = true;
      else ok = false;
    } else if (s->kind == TL_STMT_LET) {
      ok = tl_expr_free_of(s->u.let.value, ko) && !expr_uses(s->u.let.value, -1, ar, br, true, 0) &&
           tl_vec_push(&hoist, s);
    } else {
      ok = !stmt_blocks(st, s, ar, br, 0) && tl_vec_push(&issue, s);
    }
  }
  if (ok && seen_a && seen_b) {
    tl_buffer *ar2 = double_buffer(st, ar, "A_frag", na), *br2 = double_buffer(st, br, "B_frag", nb);
    tl_stmt *al[2] = {tl_ir_stmt(m, loc, TL_STMT_ALLOC), tl_ir_stmt(m, loc, TL_STMT_ALLOC)};
    /* next = min(ko + 1, lo + n - 1) */
    tl_expr *kov = tl_ir_var(m, loc, ko);
    tl_expr *last = tl_lo_add(m, loc, tl_lo_add(m, loc, lo, n), tl_lo_int(m, loc, -1));
    tl_expr *next = tl_ir_binary(m, loc, TL_OP_MIN, tl_lo_add(m, loc, kov, tl_lo_int(m, loc, 1)), last);
    if (!ar2 || !br2 || !al[0] || !al[1] || !next) {
      st->oom = true;
    } else {
      al[0]->u.alloc.buffer = ar2;
      al[1]->u.alloc.buffer = br2;
      tl_stmt *ldseq = tl_ir_seq(m, loc, 2, gb->u.seq.stmts);
      const tl_stmt *mma = gb->u.seq.stmts[2];
      stmt_vec body = {0}, outer = {0};
      bool good = ldseq != NULL;
      for (int64_t k = 0; good && k < KS; k++) {
        bool lastk = k == KS - 1;
        if (lastk)
          good = tl_vec_push(&body, slice(st, W, kk, 0, NULL, NULL, ar, br, ar2, br2, na, nb, 0)) &&
                 tl_vec_push(&body, slice(st, S, kk, 0, NULL, NULL, ar, br, ar2, br2, na, nb, 0));
        tl_stmt *l =
            slice(st, ldseq, kk, (k + 1) % KS, ko, lastk ? next : NULL, ar, br, ar2, br2, na, nb, (int)((k + 1) % 2));
        good = good && l && tl_vec_push(&body, l);
        for (size_t i = 0; good && k == 0 && i < issue.len; i++) good = tl_vec_push(&body, issue.data[i]);
        tl_stmt *mk = slice(st, mma, kk, k, NULL, NULL, ar, br, ar2, br2, na, nb, (int)(k % 2));
        good = good && mk && tl_vec_push(&body, mk);
      }
      for (size_t i = 0; good && i < body.len; i++) good = body.data[i] != NULL;
      tl_stmt *nl = good ? tl_ir_stmt(m, loc, TL_STMT_FOR) : NULL;
      tl_stmt *nb_s = good ? tl_ir_seq(m, loc, (int)body.len, body.data) : NULL;
      if (nl && nb_s) {
        *nl = *loop;
        nl->u.loop.body = nb_s;
        good = tl_vec_push(&outer, al[0]) && tl_vec_push(&outer, al[1]);
        for (size_t i = 0; good && i < hoist.len; i++) good = tl_vec_push(&outer, hoist.data[i]);
        tl_stmt *l0 = good ? slice(st, ldseq, kk, 0, ko, lo, ar, br, ar2, br2, na, nb, 0) : NULL;
        good = good && l0 && tl_vec_push(&outer, slice(st, W, kk, 0, NULL, NULL, ar, br, ar2, br2, na, nb, 0)) &&
               tl_vec_push(&outer, slice(st, S, kk, 0, NULL, NULL, ar, br, ar2, br2, na, nb, 0)) &&
               tl_vec_push(&outer, l0) && tl_vec_push(&outer, nl);
        for (size_t i = 0; good && i < outer.len; i++) good = outer.data[i] != NULL;
        if (good) res = tl_ir_seq(m, loc, (int)outer.len, outer.data);
      }
      if (!res) st->oom = true;
      tl_vec_free(&body);
      tl_vec_free(&outer);
    }
  }
  tl_vec_free(&hoist);
  tl_vec_free(&issue);
out:
  tl_vec_free(&b);
  return res;
}

static tl_stmt *rewrite_one(void *st, tl_stmt *loop) { return ((fp_state *)st)->oom ? NULL : rewrite_loop(st, loop); }

/* The last reader of the pipelines' stage counts: every loop drops it. */
static tl_stmt *clear_stages(void *user, tl_stmt *loop) {
  (void)user;
  if (loop->u.loop.kind == TL_LOOP_SERIAL) loop->u.loop.num_stages = -1;
  return NULL;
}

bool tl_lower_frag_pipeline(tl_module *m, tl_primfunc *f, const tl_target *target, tl_diag *d) {
  (void)target; /* nothing here depends on the target yet */
  if (!m || !f || !f->body) return true;
  fp_state st = {.m = m, .d = d};
  if (!tl_names_collect(&st.names, m, f)) {
    tl_error(d, f->loc, "out of memory in the fragment-pipelining pass");
    return false;
  }
  f->body = tl_lo_rewrite_loops(f->body, rewrite_one, &st);
  f->body = tl_lo_rewrite_loops(f->body, clear_stages, NULL);
  tl_names_free(&st.names);
  if (st.oom) {
    tl_error(d, f->loc, "out of memory in the fragment-pipelining pass");
    return false;
  }
  return true;
}
