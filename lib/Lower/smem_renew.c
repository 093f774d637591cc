/* The tile-level half of shared-memory planning: which shared buffers are
 * renewed at every iteration of a loop (their whole contents written before
 * any read), so that their value never crosses the loop's back edge and
 * the planner (smem_plan.c, smem_reuse.c) may end their lifetime inside an
 * iteration instead of at the end of the loop.
 *
 * Requires: tile IR (tile ops still present: the covering writes are
 * recognised there, where a T.copy's region says it writes every element);
 * called by lower-tile-ops on its input, after pipelining and layout
 * inference.  Guarantees: b->smem_renewed_in is the first variable of loop L
 * for a shared buffer b when L is the innermost loop whose body holds every
 * reference of b and the first statement of L's body (looking through
 * nested sequences only, not into loops or branches) that references b is
 * an unconditional covering write of b that does not read b:
 *   T.copy(src, b) or T.fill / T.clear of b over the whole buffer, or
 *   T.Parallel over exactly b's shape storing b[i, j, ...] (its own loop
 *   variables, in order) from a value that does not read b;
 * NULL otherwise.  Every read of b in an iteration of L then reads a value
 * written in that iteration. */
#include "IR/visit.h"
#include "Lower/lower_internal.h"

static int refs(const tl_stmt *s, const tl_buffer *b) {
  tl_lo_refs r = tl_lo_count_refs(s, b);
  return r.reads + r.writes;
}

/* The innermost loop below s (s included) whose body holds all n
 * references of b that s holds, or NULL. */
static const tl_stmt *innermost_loop(const tl_stmt *s, const tl_buffer *b, int n, int depth) {
  if (!s || depth > TL_LOWER_MAX_DEPTH) return NULL;
  const tl_stmt *inner = NULL;
  switch (s->kind) {
  case TL_STMT_SEQ:
    for (int i = 0; i < s->u.seq.n; i++)
      if (refs(s->u.seq.stmts[i], b) == n) return innermost_loop(s->u.seq.stmts[i], b, n, depth + 1);
    return NULL;
  case TL_STMT_IF:
    if (refs(s->u.ifs.then_s, b) == n) return innermost_loop(s->u.ifs.then_s, b, n, depth + 1);
    if (s->u.ifs.else_s && refs(s->u.ifs.else_s, b) == n) return innermost_loop(s->u.ifs.else_s, b, n, depth + 1);
    return NULL;
  case TL_STMT_FOR: inner = innermost_loop(s->u.loop.body, b, n, depth + 1); return inner ? inner : s;
  case TL_STMT_WHILE: return innermost_loop(s->u.whiles.body, b, n, depth + 1); /* a T.serial loop inside, or none */
  default: return NULL;
  }
}

/* Is s a T.Parallel over exactly b's shape whose body stores b[vars...]
 * from a value that does not read b? */
static bool parallel_covers(const tl_stmt *s, const tl_buffer *b) {
  if (s->kind != TL_STMT_FOR || s->u.loop.kind != TL_LOOP_PARALLEL || s->u.loop.nvars != b->ndim || s->u.loop.step)
    return false;
  const tl_stmt *st = s->u.loop.body;
  if (!st || st->kind != TL_STMT_STORE || st->u.store.buffer != b || st->u.store.n != b->ndim) return false;
  for (int k = 0; k < b->ndim; k++) {
    int64_t mn = 0, ext, dim;
    const tl_expr *ix = st->u.store.indices[k];
    if (s->u.loop.mins && s->u.loop.mins[k] && (!tl_expr_is_const_int(s->u.loop.mins[k], &mn) || mn != 0)) return false;
    if (!tl_expr_is_const_int(s->u.loop.extents[k], &ext) || !tl_expr_is_const_int(b->shape[k], &dim) || ext != dim)
      return false;
    if (ix->kind != TL_EXPR_VAR || ix->u.var != s->u.loop.vars[k]) return false;
  }
  return tl_lo_count_refs(st, b).reads == 0;
}

/* Is s an unconditional write of every element of b that does not read b? */
static bool covers(const tl_stmt *s, const tl_buffer *b) {
  if (s->kind == TL_STMT_FOR) return parallel_covers(s, b);
  if (s->kind != TL_STMT_TILE || s->u.tile.nargs < 1) return false;
  const tl_operand *a = s->u.tile.args;
  switch (s->u.tile.op) {
  case TL_TILE_COPY: a += 1; break; /* the destination */
  case TL_TILE_FILL:
  case TL_TILE_CLEAR: break;
  default: return false;
  }
  if (s->u.tile.op == TL_TILE_COPY && s->u.tile.nargs < 2) return false;
  return a->kind == TL_OPND_REGION && a->region.buffer == b && tl_lo_whole_region(&a->region) &&
         tl_lo_count_refs(s, b).reads == 0;
}

/* The first statement of s in execution order that references b, looking
 * through sequences only (NULL when none). */
static const tl_stmt *first_ref(const tl_stmt *s, const tl_buffer *b, int depth) {
  if (!s || depth > TL_LOWER_MAX_DEPTH) return NULL;
  if (s->kind != TL_STMT_SEQ) return refs(s, b) > 0 ? s : NULL;
  for (int i = 0; i < s->u.seq.n; i++) {
    const tl_stmt *x = s->u.seq.stmts[i];
    if (refs(x, b) > 0) return x->kind == TL_STMT_SEQ ? first_ref(x, b, depth + 1) : x;
  }
  return NULL;
}

static void mark(const tl_stmt *kbody, tl_buffer *b) {
  b->smem_renewed_in = NULL;
  int n = refs(kbody, b);
  const tl_stmt *L = n > 0 ? innermost_loop(kbody, b, n, 0) : NULL;
  if (!L || L->u.loop.nvars < 1) return;
  const tl_stmt *s = first_ref(L->u.loop.body, b, 0);
  if (s && covers(s, b)) b->smem_renewed_in = L->u.loop.vars[0];
}

typedef struct renew_state {
  tl_visitor v; /* first: on_alloc casts back */
  const tl_stmt *kbody;
} renew_state;

static void on_alloc(tl_visitor *v, const tl_stmt *s) {
  renew_state *st = (renew_state *)v;
  tl_buffer *b = s->kind == TL_STMT_ALLOC ? s->u.alloc.buffer : NULL;
  if (b && (b->scope == TL_SCOPE_SHARED || b->scope == TL_SCOPE_SHARED_DYN)) mark(st->kbody, b);
}

void tl_smem_mark_renewed(tl_primfunc *f) {
  tl_stmt *k = tl_ir_find_kernel(f->body);
  if (!k) return;
  renew_state st = {.v = {.stmt = on_alloc}, .kbody = k->u.kernel.body};
  tl_visit_stmt(&st.v, k->u.kernel.body);
}
