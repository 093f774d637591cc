/* The conditional GEMM loop of the warp-specialize pass (part of
 * lib/Lower/Hopper/warp_specialize.c's pass, split out for size):
 * TileLang's block-sparse GEMM writes its main loop's body as one `if COND:`
 * (no else) around the tile copies and the T.gemm, and both roles evaluate
 * COND -- the producer warpgroup to skip the TMA loads, the consumers to
 * skip the wgmma.  So COND may read only what both have alike: global
 * tensors the kernel does not write, scalar parameters and dynamic symbols,
 * the loop variable, the block indices and the LETs of the kernel body's
 * top level before the loop (the prefix both roles run); no shared memory,
 * no fragments or locals, no thread index.
 *
 * The ring's position: each role keeps a count of its taken iterations in a
 * local int32 (ws_count, ws_count_p), zeroed before its first output tile
 * and raised by one at the end of each taken iteration; the stage r % S and
 * phase r / S of a taken iteration come from r = that count (not from
 * k - lo), so the two roles agree on every stage although each iteration
 * may or may not be taken, and the count runs on across the output tiles of
 * a persistent block.
 *
 * Requires: the GEMM-form match of warp_specialize.c; guarantees only what
 * each function states. */
#include <stdio.h>

#include "IR/rewrite.h"
#include "IR/visit.h"
#include "Lower/Hopper/ws_internal.h"

/* The `if COND:` (no else) that is all of loop body lb, or NULL. */
const tl_stmt *ws_cond_if(const tl_stmt *lb) {
  if (lb && lb->kind == TL_STMT_SEQ && lb->u.seq.n == 1) lb = lb->u.seq.stmts[0];
  return lb && lb->kind == TL_STMT_IF && !lb->u.ifs.else_s && lb->u.ifs.then_s ? lb : NULL;
}

typedef struct cond_scan {
  tl_visitor v;
  const tl_primfunc *f;
  const ws_plan *p;
  const tl_var *let; /* cs_bound: the variable looked for */
  bool bound;        /* cs_bound: a LET of it in the kernel body */
  char *why;
  size_t n;
} cond_scan;

static void cs_let(tl_visitor *v, const tl_stmt *s) {
  cond_scan *c = (cond_scan *)v;
  if (s->kind == TL_STMT_LET && s->u.let.var == c->let) c->bound = true;
}

static bool cs_bad(const tl_expr *e, void *user);

/* May both roles read LET variable x: bound at the kernel body's top level
 * before the loop to a value they may read (`tx = T.get_thread_binding()`
 * is not), or not in the kernel body at all (outside the kernel)? */
static bool let_ok(cond_scan *c, const tl_var *x) {
  const tl_stmt *body = c->p->kernel->u.kernel.body;
  for (int i = 0; i < c->p->li; i++) {
    const tl_stmt *s = body->u.seq.stmts[i];
    if (s && s->kind == TL_STMT_LET && s->u.let.var == x) return !tl_expr_any(s->u.let.value, cs_bad, c, -1, true);
  }
  cond_scan b = {.v = {.stmt = cs_let}, .let = x};
  tl_visit_stmt(&b.v, body);
  return !b.bound && !b.v.too_deep;
}

/* Is node e one the producer cannot evaluate as the consumers do?  Writes
 * what it reads to c->why. */
static bool cs_bad(const tl_expr *e, void *user) {
  cond_scan *c = user;
  const tl_stmt *k = c->p->kernel;
  if (e->kind == TL_EXPR_VAR && e->u.var) {
    const tl_var *x = e->u.var;
    bool ok = x->kind == TL_VAR_PARAM || x->kind == TL_VAR_DYNAMIC || x == c->p->loop->u.loop.vars[0];
    for (int d = 0; d < k->u.kernel.ngrid && d < 3; d++) ok = ok || x == k->u.kernel.block_vars[d];
    if (!ok && x->kind == TL_VAR_LET && !(ok = let_ok(c, x)) && *c->why) { /* what its value reads */
      char inner[160];
      snprintf(inner, sizeof inner, "%s", c->why);
      snprintf(c->why, c->n, "'%s', whose value reads %s", x->name, inner);
      return true;
    }
    if (!ok)
      snprintf(c->why, c->n, "'%s', %s", x->name,
               x->kind == TL_VAR_THREAD ? "the thread index" : "a variable bound inside the kernel but not before it");
    return !ok;
  }
  if (e->kind == TL_EXPR_LOAD || e->kind == TL_EXPR_BUFFER) {
    const tl_buffer *b = e->kind == TL_EXPR_LOAD ? e->u.load.buffer : e->u.buffer;
    if (b && b->scope != TL_SCOPE_GLOBAL) snprintf(c->why, c->n, "%s buffer '%s'", tl_scope_name(b->scope), b->name);
    else if (b && tl_lo_count_refs(c->f->body, b).writes > 0)
      snprintf(c->why, c->n, "'%s', a global tensor the kernel writes", b->name);
    else return false;
    return true;
  }
  if (e->kind == TL_EXPR_CALL) {
    int op = e->u.call.op;
    bool idx = op == TL_INTRIN_GET_THREAD_BINDING || op == TL_INTRIN_GET_LANE_IDX || op == TL_INTRIN_GET_WARP_IDX ||
               op == TL_INTRIN_GET_BLOCK_BINDING;
    if (!idx && op >= 0 && op < TL_INTRIN_COUNT && tl_intrinsics[op].effects == TL_EFF_NONE) return false;
    snprintf(c->why, c->n, "T.%s()%s", op >= 0 && op < TL_INTRIN_COUNT ? tl_intrinsics[op].name : "?",
             idx ? ", a thread or block index" : ", which has effects");
    return true;
  }
  return false;
}

/* NULL when both roles may evaluate cond; else why not, naming what it
 * reads (written to why, n bytes). */
const char *ws_check_cond(const tl_primfunc *f, const ws_plan *p, const tl_expr *cond, char *why, size_t n) {
  char what[160] = "";
  cond_scan c = {.f = f, .p = p, .why = what, .n = sizeof what};
  if (!tl_expr_any(cond, cs_bad, &c, -1, true)) return NULL;
  snprintf(why, n,
           "the condition of the loop body's `if` reads %s (the producer warpgroup evaluates it too: it may read "
           "only global tensors the kernel does not write, scalar parameters, the loop and block indices and the "
           "LETs before the loop)",
           *what ? what : "too deep an expression");
  return why;
}

/* cond on the producer: the loop variable kv as kp and, on a persistent
 * grid, the block indices as the producer's (pp->subst); NULL on OOM. */
tl_expr *ws_cond_producer(ws_build *b, const tl_expr *cond, tl_var *kv, tl_var *kp, const ws_persist *pp) {
  tl_map subst;
  tl_map_init(&subst);
  tl_rewriter rw = {.m = b->m, .subst = &subst, .max_depth = TL_LOWER_MAX_DEPTH};
  bool ok = ws_producer_subst(b, kv, kp, pp, &subst);
  tl_expr *r = ok ? tl_rewrite_expr(&rw, cond, 1) : NULL;
  tl_map_free(&subst);
  return rw.failed ? NULL : r;
}

/* `r = cnt[0]` as a LET; *rel is r's expression. */
tl_stmt *ws_let_count(ws_build *b, tl_buffer *cnt, tl_expr **rel) {
  tl_var *r = tl_names_fresh_var(b->names, b->loc, "ws_r", TL_INT32, TL_VAR_LET);
  *rel = r ? V(b, r) : NULL;
  tl_expr *v = ws_kb_load(b, cnt);
  return r && v ? tl_lo_let(b->m, b->loc, r, v) : NULL;
}

/* `if cond: body...; cnt[0] = cnt[0] + 1` (the taken iteration counted);
 * NULL on OOM. */
tl_stmt *ws_cond_iter(ws_build *b, tl_expr *cond, tl_buffer *cnt, stmt_vec *body) {
  tl_stmt *inc = ws_kb_add(b, cnt, I(b, 1));
  if (!cond || !inc || !tl_vec_push(body, inc)) return NULL;
  tl_stmt *s = SEQ(b, (int)body->len, body->data);
  return s ? tl_lo_if(b->m, b->loc, cond, s, NULL) : NULL;
}
