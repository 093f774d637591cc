/* The warp-specialized kernel after lower-tile-ops (part of
 * lib/Lower/Hopper/warp_specialize.c's tl_ws_finish, split out for size):
 * the consumers' block barriers become their named barrier, and ping-pong's
 * hand-over moves in front of the wgmma completion wait.  Requires the
 * SIMT IR of a kernel warp_specialize.c rewrote; guarantees what each
 * function states. */
#include "Lower/Hopper/ws_internal.h"

/* T.sync_threads() statements inside s → T.ptx_bar_sync(1, T). */
bool ws_consumer_syncs(tl_module *m, tl_stmt *s, int64_t T, int depth) {
  if (!s || depth > TL_LOWER_MAX_DEPTH) return s == NULL;
  switch (s->kind) {
  case TL_STMT_SEQ:
    for (int i = 0; i < s->u.seq.n; i++)
      if (!ws_consumer_syncs(m, s->u.seq.stmts[i], T, depth + 1)) return false;
    return true;
  case TL_STMT_FOR: return ws_consumer_syncs(m, s->u.loop.body, T, depth + 1);
  case TL_STMT_WHILE: return ws_consumer_syncs(m, s->u.whiles.body, T, depth + 1);
  case TL_STMT_IF:
    return ws_consumer_syncs(m, s->u.ifs.then_s, T, depth + 1) && ws_consumer_syncs(m, s->u.ifs.else_s, T, depth + 1);
  case TL_STMT_EVAL: {
    tl_expr *v = s->u.eval.value;
    if (!v || v->kind != TL_EXPR_CALL || v->u.call.op != TL_INTRIN_SYNC_THREADS) return true;
    tl_expr *args[2] = {tl_lo_int(m, s->loc, 1), tl_lo_int(m, s->loc, T)};
    tl_expr *c = args[0] && args[1] ? tl_ir_call(m, s->loc, TL_INTRIN_PTX_BAR_SYNC, 2, args) : NULL;
    if (!c) return false;
    s->u.eval.value = c;
    return true;
  }
  default: return true;
  }
}

/* Is s pp_turn's hand-over (`if wg == 0: T.ptx_bar_arrive(WS_PP_BAR + 1, ..)
 * else: T.ptx_bar_arrive(WS_PP_BAR, ..)`)? */
static bool is_pp_arrive(const tl_stmt *s) {
  if (!s || s->kind != TL_STMT_IF || !s->u.ifs.else_s) return false;
  const tl_stmt *t = s->u.ifs.then_s;
  if (t && t->kind == TL_STMT_SEQ && t->u.seq.n == 1) t = t->u.seq.stmts[0];
  const tl_expr *c = t && t->kind == TL_STMT_EVAL ? t->u.eval.value : NULL;
  int64_t id = -1;
  return c && c->kind == TL_EXPR_CALL && c->u.call.op == TL_INTRIN_PTX_BAR_ARRIVE && c->u.call.n == 2 &&
         tl_expr_is_const_int(c->u.call.args[0], &id) && id == WS_PP_BAR + 1;
}

/* The slot of s's last statement, through nested sequences. */
static tl_stmt **last_slot(tl_stmt **s, int depth) {
  if (!*s || depth > TL_LOWER_MAX_DEPTH) return NULL;
  if ((*s)->kind != TL_STMT_SEQ) return s;
  return (*s)->u.seq.n > 0 ? last_slot(&(*s)->u.seq.stmts[(*s)->u.seq.n - 1], depth + 1) : NULL;
}

/* Ping-pong: each hand-over that follows a lowered wgmma T.gemm (whose last
 * statement is its T.ptx_wgmma_wait) moves in front of that wait, so the
 * other warpgroup may issue as soon as this one's wgmma are committed. */
bool ws_pp_hoist(tl_module *m, tl_stmt *s, int depth) {
  if (!s || depth > TL_LOWER_MAX_DEPTH) return s == NULL;
  switch (s->kind) {
  case TL_STMT_SEQ:
    for (int i = 0; i < s->u.seq.n; i++) {
      tl_stmt **w = i > 0 && is_pp_arrive(s->u.seq.stmts[i]) ? last_slot(&s->u.seq.stmts[i - 1], 0) : NULL;
      const tl_expr *c = w && (*w)->kind == TL_STMT_EVAL ? (*w)->u.eval.value : NULL;
      if (c && c->kind == TL_EXPR_CALL && c->u.call.op == TL_INTRIN_PTX_WGMMA_WAIT) {
        tl_stmt *pair[2] = {s->u.seq.stmts[i], *w};
        if (!(*w = tl_ir_seq(m, s->loc, 2, pair))) return false;
        memmove(&s->u.seq.stmts[i], &s->u.seq.stmts[i + 1], sizeof(tl_stmt *) * (size_t)(s->u.seq.n - i - 1));
        s->u.seq.n--;
        i--;
        continue;
      }
      if (!ws_pp_hoist(m, s->u.seq.stmts[i], depth + 1)) return false;
    }
    return true;
  case TL_STMT_FOR: return ws_pp_hoist(m, s->u.loop.body, depth + 1);
  case TL_STMT_WHILE: return ws_pp_hoist(m, s->u.whiles.body, depth + 1);
  case TL_STMT_IF: return ws_pp_hoist(m, s->u.ifs.then_s, depth + 1) && ws_pp_hoist(m, s->u.ifs.else_s, depth + 1);
  default: return true;
  }
}
