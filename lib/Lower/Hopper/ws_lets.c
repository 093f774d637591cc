/* The loop-body LETs of a warp-specialized T.Pipelined loop (part of
 * warp_specialize.c's pass, split out for size): which of them a tile
 * copy's coordinates may use, and their values on the producer warpgroup.
 * Requires: the attention-form match of warp_specialize.c (ws_plan with its
 * loads); guarantees: a load never reads a LET the producer cannot evaluate
 * (reads of fragment, local or shared buffers). */
#include "IR/rewrite.h"
#include "IR/visit.h"
#include "Lower/Hopper/ws_internal.h"
#include "Lower/lower_internal.h"

/* The loop body's LETs (attention form: `actual_k = k + start`).  A tile
 * copy's coordinates may use one whose value reads only global memory and
 * variables bound outside the loop (producer_loads evaluates it again on
 * the producer warpgroup); not one computed from the consumers' fragments,
 * locals or shared memory, which the producer does not have. */
typedef struct var_scan {
  tl_visitor v;
  const tl_var *const *vars; /* NULL: look for non-global buffer reads */
  int nvars;
  bool found;
} var_scan;
static void vs_expr(tl_visitor *v, const tl_expr *e) {
  var_scan *u = (var_scan *)v;
  if (!u->vars) {
    const tl_buffer *b = e->kind == TL_EXPR_LOAD ? e->u.load.buffer : e->kind == TL_EXPR_BUFFER ? e->u.buffer : NULL;
    u->found = u->found || (b && b->scope != TL_SCOPE_GLOBAL);
    return;
  }
  for (int i = 0; e->kind == TL_EXPR_VAR && i < u->nvars; i++) u->found = u->found || e->u.var == u->vars[i];
}
static bool expr_scan(const tl_expr *e, const tl_var *const *vars, int nvars) {
  var_scan u = {.v = {.expr = vs_expr}, .vars = vars, .nvars = nvars};
  if (e) tl_visit_expr(&u.v, e);
  return u.found || u.v.too_deep;
}

/* Is the loop-body LET s one the producer may evaluate?  bad: the LETs
 * before it that it may not (their count in *nbad, at most WS_MAX_LETS). */
static bool let_for_producer(const tl_stmt *s, const tl_var **bad, int *nbad) {
  bool ok = !expr_scan(s->u.let.value, NULL, 0) && !expr_scan(s->u.let.value, bad, *nbad);
  if (!ok && *nbad < WS_MAX_LETS) bad[(*nbad)++] = s->u.let.var;
  return ok;
}

/* A reason when a tile copy of the loop uses a LET the producer may not
 * evaluate (or more LETs than this pass tracks), else NULL. */
const char *tl_ws_check_load_lets(const ws_plan *p) {
  const tl_stmt *lb = p->loop->u.loop.body;
  int n = lb->kind == TL_STMT_SEQ ? lb->u.seq.n : 1;
  tl_stmt *const *items = lb->kind == TL_STMT_SEQ ? lb->u.seq.stmts : &p->loop->u.loop.body;
  const tl_var *bad[WS_MAX_LETS];
  int nbad = 0;
  for (int i = 0; i < n; i++)
    if (items[i] && items[i]->kind == TL_STMT_LET && !let_for_producer(items[i], bad, &nbad) && nbad == WS_MAX_LETS)
      return "the loop computes too many values from fragment or shared data";
  for (int i = 0; nbad && i < p->nloads; i++) {
    const tl_region *r = &p->loads[i].s->u.tile.args[0].region;
    for (int d = 0; d < r->ndim; d++)
      if (expr_scan(r->min[d], bad, nbad) || expr_scan(r->extent[d], bad, nbad))
        return "a tile copy's coordinates use a value the loop computes from fragment, local or shared data";
  }
  return NULL;
}

/* Adds to rw's substitution each loop-body LET the producer evaluates (its
 * value through rw: the loop variable already substituted). */
bool tl_ws_producer_lets(const ws_plan *p, tl_rewriter *rw, tl_map *subst) {
  const tl_stmt *lb = p->loop->u.loop.body;
  int n = lb->kind == TL_STMT_SEQ ? lb->u.seq.n : 1;
  tl_stmt *const *items = lb->kind == TL_STMT_SEQ ? lb->u.seq.stmts : &p->loop->u.loop.body;
  const tl_var *bad[WS_MAX_LETS];
  int nbad = 0;
  for (int i = 0; i < n; i++) {
    if (!items[i] || items[i]->kind != TL_STMT_LET || !let_for_producer(items[i], bad, &nbad)) continue;
    tl_expr *v = tl_rewrite_expr(rw, items[i]->u.let.value, 1);
    if (!v || rw->failed || !tl_map_put(subst, items[i]->u.let.var, v)) return false;
  }
  return true;
}
