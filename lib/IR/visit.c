/* Read-only pre-order traversal of the IR (see visit.h): a recursive walk
 * over every child of every expression and statement kind, depth-limited so
 * that input can never exhaust the stack. */
#include "IR/visit.h"

static bool enter(tl_visitor *v) {
  if (v->depth_ >= TL_VISIT_MAX_DEPTH) {
    v->too_deep = true;
    return false;
  }
  v->depth_++;
  return true;
}

int tl_expr_operand_slots(tl_expr *e, tl_expr **slots[3]) {
  switch (e->kind) {
  case TL_EXPR_BINARY: slots[0] = &e->u.bin.a, slots[1] = &e->u.bin.b; return 2;
  case TL_EXPR_UNARY: slots[0] = &e->u.un.a; return 1;
  case TL_EXPR_SELECT: slots[0] = &e->u.sel.cond, slots[1] = &e->u.sel.t, slots[2] = &e->u.sel.f; return 3;
  case TL_EXPR_CAST: slots[0] = &e->u.cast.value; return 1;
  case TL_EXPR_RAMP: slots[0] = &e->u.ramp.base, slots[1] = &e->u.ramp.stride; return 2;
  case TL_EXPR_BROADCAST: slots[0] = &e->u.bcast.value; return 1;
  default: return 0;
  }
}

int tl_expr_operands(const tl_expr *e, const tl_expr *ops[3]) {
  tl_expr **slots[3];
  int n = tl_expr_operand_slots((tl_expr *)e, slots); /* only read through */
  for (int i = 0; i < n; i++) ops[i] = *slots[i];
  return n;
}

/* The n expressions of an array (loads' indices, calls' arguments, stores'
 * indices, a grid's dims); NULL entries are skipped. */
static void visit_exprs(tl_visitor *v, int n, tl_expr *const *es) {
  for (int i = 0; es && i < n; i++) tl_visit_expr(v, es[i]);
}

void tl_visit_expr(tl_visitor *v, const tl_expr *e) {
  if (!e || !enter(v)) return;
  if (v->expr) v->expr(v, e);
  const tl_expr *ops[3];
  int n = tl_expr_operands(e, ops);
  for (int i = 0; i < n; i++) tl_visit_expr(v, ops[i]);
  if (e->kind == TL_EXPR_LOAD) visit_exprs(v, e->u.load.n, e->u.load.indices);
  if (e->kind == TL_EXPR_CALL) visit_exprs(v, e->u.call.n, e->u.call.args);
  v->depth_--;
}

static void visit_region(tl_visitor *v, const tl_region *r) {
  if (v->region) v->region(v, r);
  for (int d = 0; d < r->ndim; d++) {
    if (r->min) tl_visit_expr(v, r->min[d]);
    if (r->extent) tl_visit_expr(v, r->extent[d]);
  }
}

void tl_visit_stmt(tl_visitor *v, const tl_stmt *s) {
  if (!s || !enter(v)) return;
  if (v->stmt) v->stmt(v, s);
  switch (s->kind) {
  case TL_STMT_SEQ:
    for (int i = 0; i < s->u.seq.n; i++) tl_visit_stmt(v, s->u.seq.stmts[i]);
    break;
  case TL_STMT_FOR:
    for (int i = 0; i < s->u.loop.nvars; i++) {
      if (s->u.loop.mins) tl_visit_expr(v, s->u.loop.mins[i]);
      if (s->u.loop.extents) tl_visit_expr(v, s->u.loop.extents[i]);
    }
    tl_visit_expr(v, s->u.loop.step);
    tl_visit_stmt(v, s->u.loop.body);
    break;
  case TL_STMT_KERNEL:
    visit_exprs(v, s->u.kernel.ngrid, s->u.kernel.grid);
    tl_visit_expr(v, s->u.kernel.threads);
    tl_visit_stmt(v, s->u.kernel.body);
    break;
  case TL_STMT_ALLOC: {
    const tl_buffer *b = s->u.alloc.buffer;
    for (int i = 0; b && i < b->ndim; i++) tl_visit_expr(v, b->shape[i]);
    if (b) tl_visit_expr(v, b->init);
    break;
  }
  case TL_STMT_STORE:
    visit_exprs(v, s->u.store.n, s->u.store.indices);
    tl_visit_expr(v, s->u.store.value);
    break;
  case TL_STMT_IF:
    tl_visit_expr(v, s->u.ifs.cond);
    tl_visit_stmt(v, s->u.ifs.then_s);
    tl_visit_stmt(v, s->u.ifs.else_s);
    break;
  case TL_STMT_WHILE:
    tl_visit_expr(v, s->u.whiles.cond);
    tl_visit_stmt(v, s->u.whiles.body);
    break;
  case TL_STMT_LET: tl_visit_expr(v, s->u.let.value); break;
  case TL_STMT_EVAL: tl_visit_expr(v, s->u.eval.value); break;
  case TL_STMT_TILE:
    for (int i = 0; i < s->u.tile.nargs; i++) {
      const tl_operand *o = &s->u.tile.args[i];
      if (o->kind == TL_OPND_REGION) visit_region(v, &o->region);
      else tl_visit_expr(v, o->expr);
    }
    for (int i = 0;
         s->u.tile.attrs && s->u.tile.op >= 0 && s->u.tile.op < TL_TILE_NUM_OPS && i < tl_tile_ops[s->u.tile.op].nattrs;
         i++)
      tl_visit_expr(v, s->u.tile.attrs[i]);
    break;
  }
  v->depth_--;
}

typedef struct any_state {
  tl_visitor v; /* first: the callback gets &a->v */
  bool (*pred)(const tl_expr *e, void *user);
  void *user;
  bool found;
} any_state;

static void any_expr(tl_visitor *v, const tl_expr *e) {
  any_state *a = (any_state *)v;
  if (!a->found && a->pred(e, a->user)) a->found = true;
}

bool tl_expr_any(const tl_expr *e, bool (*pred)(const tl_expr *e, void *user), void *user, int max_depth,
                 bool if_too_deep) {
  any_state a = {.v = {.expr = any_expr}, .pred = pred, .user = user};
  /* start deeper, so that the limit falls max_depth levels below e */
  if (max_depth >= 0 && max_depth < TL_VISIT_MAX_DEPTH) a.v.depth_ = TL_VISIT_MAX_DEPTH - (max_depth + 1);
  tl_visit_expr(&a.v, e);
  return a.found || (a.v.too_deep && if_too_deep);
}

/* ------------------------------------------------------ thread index */
static bool tid_node(const tl_expr *e, void *user) {
  const tl_tid_lets *l = user;
  if (e->kind == TL_EXPR_CALL)
    return e->u.call.op == TL_INTRIN_GET_THREAD_BINDING || e->u.call.op == TL_INTRIN_GET_LANE_IDX ||
           e->u.call.op == TL_INTRIN_GET_WARP_IDX;
  for (int i = 0; l && e->kind == TL_EXPR_VAR && i < l->n; i++)
    if (l->vars[i] == e->u.var) return true;
  return false;
}
bool tl_expr_reads_tid(const tl_expr *e, const tl_tid_lets *lets) {
  return tl_expr_any(e, tid_node, (void *)lets, -1, true);
}
static bool tid_call(const tl_expr *e, void *user) {
  (void)user;
  return tid_node(e, NULL);
}
tl_loc tl_expr_tid_at(const tl_expr *e, const tl_tid_lets *lets) {
  if (tl_expr_any(e, tid_call, NULL, -1, false)) return e->loc;
  for (int i = 0; lets && i < lets->n; i++) {
    tl_tid_lets one = {.vars = {lets->vars[i]}, .n = 1};
    if (tl_expr_any(e, tid_node, &one, -1, false)) return lets->at[i];
  }
  return e->loc;
}
bool tl_tid_let(tl_tid_lets *lets, const tl_var *var, const tl_expr *value) {
  if (!tl_expr_reads_tid(value, lets)) return false;
  if (lets->n >= TL_TID_LETS) return true;
  lets->at[lets->n] = tl_expr_tid_at(value, lets);
  lets->vars[lets->n++] = var;
  return false;
}

/* The statement walk of tl_stmt_uses_thread_index: tile-op operands are not
 * walked (tile ops are collective); a let of the thread index joins lets
 * and is a use only once its variable is read. */
static bool tid_expr_use(const tl_expr *e, const tl_tid_lets *l, tl_loc *at) {
  if (!e || !tl_expr_reads_tid(e, l)) return false;
  if (at) *at = tl_expr_tid_at(e, l);
  return true;
}
static bool tid_stmt_use(const tl_stmt *s, tl_tid_lets *l, tl_loc *at, int depth) {
  if (!s) return false;
  if (depth > TL_VISIT_MAX_DEPTH) return true;
  switch (s->kind) {
  case TL_STMT_SEQ:
    for (int i = 0; i < s->u.seq.n; i++)
      if (tid_stmt_use(s->u.seq.stmts[i], l, at, depth + 1)) return true;
    return false;
  case TL_STMT_FOR:
    for (int i = 0; i < s->u.loop.nvars; i++)
      if ((s->u.loop.mins && tid_expr_use(s->u.loop.mins[i], l, at)) ||
          (s->u.loop.extents && tid_expr_use(s->u.loop.extents[i], l, at)))
        return true;
    return tid_expr_use(s->u.loop.step, l, at) || tid_stmt_use(s->u.loop.body, l, at, depth + 1);
  case TL_STMT_ALLOC: return tid_expr_use(s->u.alloc.buffer->init, l, at);
  case TL_STMT_STORE:
    for (int i = 0; i < s->u.store.n; i++)
      if (tid_expr_use(s->u.store.indices[i], l, at)) return true;
    return tid_expr_use(s->u.store.value, l, at);
  case TL_STMT_IF:
    if (tl_stmt_is_ws_scope(s)) return false; /* its own warpgroup's business: tl_ws_scope_uses_thread_index */
    return tid_expr_use(s->u.ifs.cond, l, at) || tid_stmt_use(s->u.ifs.then_s, l, at, depth + 1) ||
           tid_stmt_use(s->u.ifs.else_s, l, at, depth + 1);
  case TL_STMT_WHILE: return tid_expr_use(s->u.whiles.cond, l, at) || tid_stmt_use(s->u.whiles.body, l, at, depth + 1);
  case TL_STMT_LET:
    if (!tl_tid_let(l, s->u.let.var, s->u.let.value)) return false;
    if (at) *at = s->u.let.value->loc;
    return true;
  case TL_STMT_EVAL: return tid_expr_use(s->u.eval.value, l, at);
  default: return false;
  }
}

bool tl_stmt_uses_thread_index(const tl_stmt *s, tl_loc *at) {
  tl_tid_lets lets = {.n = 0};
  return tid_stmt_use(s, &lets, at, 0);
}

bool tl_stmt_is_ws_scope(const tl_stmt *s) {
  const tl_expr *c = s && s->kind == TL_STMT_IF ? s->u.ifs.cond : NULL;
  return c && c->kind == TL_EXPR_CALL && c->u.call.op == TL_INTRIN_WS;
}

/* The walk of tl_ws_scope_uses_thread_index: the lets of the thread index
 * met before `scope` (statements in order, into loops and branches), then
 * scope's body with them. */
static int scope_tid_use(const tl_stmt *s, const tl_stmt *scope, tl_tid_lets *l, tl_loc *at, int depth) {
  if (!s || depth > TL_VISIT_MAX_DEPTH) return s ? 1 : -1;
  if (s == scope) return tid_stmt_use(scope->u.ifs.then_s, l, at, depth + 1) ? 1 : 0;
  int r = -1;
  switch (s->kind) {
  case TL_STMT_SEQ:
    for (int i = 0; i < s->u.seq.n && r < 0; i++) r = scope_tid_use(s->u.seq.stmts[i], scope, l, at, depth + 1);
    return r;
  case TL_STMT_FOR: return scope_tid_use(s->u.loop.body, scope, l, at, depth + 1);
  case TL_STMT_WHILE: return scope_tid_use(s->u.whiles.body, scope, l, at, depth + 1);
  case TL_STMT_IF:
    r = scope_tid_use(s->u.ifs.then_s, scope, l, at, depth + 1);
    return r >= 0 ? r : scope_tid_use(s->u.ifs.else_s, scope, l, at, depth + 1);
  case TL_STMT_LET: (void)tl_tid_let(l, s->u.let.var, s->u.let.value); return -1;
  default: return -1;
  }
}

bool tl_ws_scope_uses_thread_index(const tl_stmt *body, const tl_stmt *scope, tl_loc *at) {
  tl_tid_lets lets = {.n = 0};
  return tl_stmt_is_ws_scope(scope) && scope_tid_use(body, scope, &lets, at, 0) == 1;
}

/* ------------------------------------------------------------- map sets */
void tl_map_visitor_add(tl_map_visitor *mv, const void *key) {
  if (key && !tl_map_put(mv->set, key, (void *)1)) mv->oom = true;
}

/* ------------------------------------------------------ buffer references */
static void bv_expr(tl_visitor *v, const tl_expr *e) {
  tl_buffer_visitor *bv = (tl_buffer_visitor *)v;
  if (e->kind == TL_EXPR_LOAD) bv->buffer(bv, e->u.load.buffer);
  if (e->kind == TL_EXPR_BUFFER) bv->buffer(bv, e->u.buffer);
}
static void bv_stmt(tl_visitor *v, const tl_stmt *s) {
  if (s->kind == TL_STMT_STORE) ((tl_buffer_visitor *)v)->buffer((tl_buffer_visitor *)v, s->u.store.buffer);
}
static void bv_region(tl_visitor *v, const tl_region *r) {
  ((tl_buffer_visitor *)v)->buffer((tl_buffer_visitor *)v, r->buffer);
}

bool tl_visit_buffers(tl_buffer_visitor *bv, const tl_stmt *s) {
  bv->v = (tl_visitor){.expr = bv_expr, .stmt = bv_stmt, .region = bv_region};
  tl_visit_stmt(&bv->v, s);
  return !bv->v.too_deep;
}

static bool may_fault(const tl_expr *e, void *user) {
  (void)user;
  return e->kind == TL_EXPR_LOAD || (e->kind == TL_EXPR_CALL && e->u.call.op >= 0 && e->u.call.op < tl_num_intrinsics &&
                                     (tl_intrinsics[e->u.call.op].effects & TL_EFF_SIDE_EFFECTS));
}

static bool is_convergent(const tl_expr *e, void *user) {
  (void)user;
  return e->kind == TL_EXPR_CALL && e->u.call.op >= 0 && e->u.call.op < tl_num_intrinsics &&
         (tl_intrinsics[e->u.call.op].effects & TL_EFF_CONVERGENT);
}

bool tl_select_one_arm(const tl_expr *cond, const tl_expr *t, const tl_expr *f) {
  if (!cond || cond->dtype.lanes != 1) return false;
  if (!tl_expr_any(t, may_fault, NULL, -1, true) && !tl_expr_any(f, may_fault, NULL, -1, true)) return false;
  return !tl_expr_any(t, is_convergent, NULL, -1, true) && !tl_expr_any(f, is_convergent, NULL, -1, true);
}
