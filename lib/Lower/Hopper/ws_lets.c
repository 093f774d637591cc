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
typedef struct var_set {
  const tl_var *const *vars; /* NULL: the node reads a non-global buffer */
  int n;
} var_set;
static bool scan_node(const tl_expr *e, void *user) {
  const var_set *u = user;
  if (!u->vars) {
    const tl_buffer *b = e->kind == TL_EXPR_LOAD ? e->u.load.buffer : e->kind == TL_EXPR_BUFFER ? e->u.buffer : NULL;
    return b && b->scope != TL_SCOPE_GLOBAL;
  }
  for (int i = 0; e->kind == TL_EXPR_VAR && i < u->n; i++)
    if (e->u.var == u->vars[i]) return true;
  return false;
}
static bool expr_scan(const tl_expr *e, const tl_var *const *vars, int nvars) {
  var_set u = {.vars = vars, .n = nvars};
  return tl_expr_any(e, scan_node, &u, -1, true);
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
