/* T.Pipelined order= / stage= on the mma.sync / cp.async path:
 * the helpers pipeline_loop.c calls for a loop with a schedule (tir.h's
 * loop.nsched/order/stage; the elaborator, elab_pipelined.c, checked it).
 *
 * Meaning (TVM's software pipelining, as TileLang uses it): step t of the
 * pipelined loop runs each statement of stage p for original iteration
 * t - p (when that is one), the statements of a step in the given order; so
 * a statement of stage p runs c - p iterations ahead of those of the last
 * stage c.
 *
 * What the cp.async pipeline (pipeline_loop.c) implements: statements at
 * stage c are the loop's consumers and run in place; statements at a stage
 * p < c must be producer copies (T.copy global -> shared whose shared tile
 * the loop alone writes, pipeline_loop.c's staging rules), all at one stage
 * p: they become T.async_copy issued d = c - p iterations ahead into a tile
 * of d + 1 stages (num_stages d + 1 of the default schedule), each at its
 * own position in the order, the group committed after the last of them;
 * the iteration starts with cp.async.wait_group(d - 1) and a barrier, as the
 * default schedule's does (the data of iteration k was committed d - 1
 * groups before the most recent).  A copy at stage c runs synchronously in
 * place.  With no statement before stage c the body is only reordered.
 * LETs and allocations of the body come first, in body order.  Anything
 * else (a non-copy statement before stage c, producers at two stages, a
 * copy before stage c that cannot be staged) is a located "not supported
 * yet" error at the statement.
 *
 * Requires / guarantees: as pipeline_loop.c (tile IR in and out). */
#include <string.h>

#include "Lower/lower_internal.h"

static bool scheduled(const tl_stmt *x) { return x && x->kind != TL_STMT_LET && x->kind != TL_STMT_ALLOC; }

static int max_stage(const tl_stmt *loop) {
  int c = 0;
  for (int i = 0; i < loop->u.loop.nsched; i++)
    if (loop->u.loop.stage[i] > c) c = loop->u.loop.stage[i];
  return c;
}

void tl_pl_sched_candidates(const tl_stmt *loop, tl_stmt *const *body, int nb, bool *is_prod) {
  int c = max_stage(loop);
  for (int i = 0, k = 0; i < nb && k < loop->u.loop.nsched; i++) {
    if (!scheduled(body[i])) continue;
    if (loop->u.loop.stage[k++] == c) is_prod[i] = false;
  }
}

int tl_pl_sched_stages(tl_diag *d, const tl_stmt *loop, tl_stmt *const *body, int nb, const bool *is_prod,
                       int *errors) {
  int c = max_stage(loop), p = -1, count = 0;
  const tl_stmt *first_p = NULL;
  for (int i = 0; i < nb; i++) count += scheduled(body[i]);
  if (count != loop->u.loop.nsched) {
    tl_error(d, loop->loc,
             "internal error: T.Pipelined's order/stage have %d entries but its body has %d "
             "statements after the earlier passes",
             loop->u.loop.nsched, count);
    (*errors)++;
    return -1;
  }
  for (int i = 0, k = 0; i < nb && k < loop->u.loop.nsched; i++) {
    if (!scheduled(body[i])) continue;
    int sg = loop->u.loop.stage[k++];
    if (sg == c) continue;
    if (!is_prod[i]) {
      tl_error(d, body[i]->loc,
               "T.Pipelined: this statement is at stage %d, ahead of the loop's last stage %d; only a T.copy from "
               "global to shared memory whose shared tile the loop alone writes (at a static 1-D or 2-D shape, "
               "its region computable ahead) runs ahead on the mma.sync path; other statements there are not "
               "supported yet",
               sg, c);
      (*errors)++;
      return -1;
    }
    if (p >= 0 && sg != p) {
      tl_error(d, body[i]->loc,
               "T.Pipelined: copies at stages %d and %d ahead of the last stage %d; one stage for every copy "
               "that runs ahead is supported yet",
               p, sg, c);
      tl_note(d, first_p->loc, "the copy at stage %d is here", p);
      (*errors)++;
      return -1;
    }
    p = sg;
    first_p = body[i];
  }
  return p < 0 ? 1 : c - p + 1;
}

tl_stmt *tl_pl_sched_reorder(tl_module *m, const tl_stmt *loop, tl_stmt *const *items, int nb, const bool *is_prod) {
  int ns = loop->u.loop.nsched;
  tl_stmt **out = tl_arena_alloc(&m->arena, sizeof(tl_stmt *) * (size_t)(nb + 2));
  int *at = tl_arena_alloc(&m->arena, sizeof(int) * (size_t)(ns + 1)); /* position -> body index */
  if (!out || !at) return NULL;
  int n = 0, last_prod = -1;
  for (int i = 0, k = 0; i < nb; i++) {
    if (!scheduled(items[i])) {
      out[n++] = items[i];
      continue;
    }
    if (k < ns) at[loop->u.loop.order[k++]] = i;
  }
  for (int q = 0; q < ns; q++)
    if (is_prod && is_prod[at[q]]) last_prod = q;
  for (int q = 0; q < ns; q++) {
    out[n++] = items[at[q]];
    if (q == last_prod) {
      tl_expr *c = tl_ir_call(m, loop->loc, TL_INTRIN_PTX_COMMIT_GROUP, 0, NULL);
      if (!c || !(out[n++] = tl_lo_eval(m, loop->loc, c))) return NULL;
    }
  }
  return tl_ir_seq(m, loop->u.loop.body->loc, n, out);
}
