/* Short T.Parallel loops over part of a fragment (TileLang #1744,
 * #2957), for layout inference (layout_infer.c calls it first).
 *
 * A T.Parallel loop whose variables index a fragment F exactly (F[i, j] with
 * the loop's variables in order, loop starts 0) but whose extents are
 * shorter than F's shape in some dim covers only part of F.  Layout inference
 * sees only identity uses (extents equal to the shape) as distributing F, so
 * such a loop beside another op that distributes F (a whole-buffer tile op, a
 * full T.Parallel loop) would be a layout conflict.  This step rewrites the
 * loop to run over F's whole shape with its body under the predicate
 * `i < e0 and j < e1 ...` (the masked elements do nothing), so that it is an
 * identity use of F partitioned like every other.
 *
 * Requires: tile IR, before layout inference.
 * Guarantees: only loops that would otherwise conflict change: constant
 * extents and shapes, no step, every fragment the loop indexes by its
 * variables is such a prefix of one shape (none indexed with exactly the
 * loop's extents), and that fragment has an identity use elsewhere in the
 * function (a whole-buffer tile-op operand or a full T.Parallel loop).  The
 * loop keeps its variables; the reference evaluator runs the original tile
 * IR, which means the same. */
#include <string.h>

#include "IR/visit.h"
#include "Lower/lower_internal.h"

typedef struct px_state {
  tl_visitor v;        /* first: the callbacks cast back */
  const tl_stmt *loop; /* the T.Parallel loop scanned (NULL: the whole-function scan) */
  tl_map ident;        /* fragment -> (void *)1: it has an identity use */
  bool oom;
  /* per loop */
  bool exact, mixed;
  const tl_buffer *prefix; /* the fragment the loop covers part of */
} px_state;

static bool is_frag(const tl_buffer *b) { return b && b->scope == TL_SCOPE_FRAGMENT; }

/* Does b[idx] use the loop's variables in order, with the loop's extents
 * not above b's shape?  *shorter: some extent is below it. */
static bool prefix_access(const tl_stmt *loop, const tl_buffer *b, int n, tl_expr *const *idx, bool *shorter) {
  *shorter = false;
  if (!loop || loop->u.loop.step || n != loop->u.loop.nvars || n != b->ndim) return false;
  for (int k = 0; k < n; k++) {
    int64_t ext, dim, mn = 0;
    if (!idx[k] || idx[k]->kind != TL_EXPR_VAR || idx[k]->u.var != loop->u.loop.vars[k]) return false;
    if (!tl_expr_is_const_int(loop->u.loop.extents[k], &ext) || !tl_expr_is_const_int(b->shape[k], &dim) || ext > dim ||
        ext < 1)
      return false;
    if (loop->u.loop.mins && loop->u.loop.mins[k] && (!tl_expr_is_const_int(loop->u.loop.mins[k], &mn) || mn != 0))
      return false;
    *shorter |= ext < dim;
  }
  return true;
}

static void access(px_state *ps, const tl_buffer *b, int n, tl_expr *const *idx) {
  if (!is_frag(b) || !ps->loop) return;
  bool shorter;
  if (!prefix_access(ps->loop, b, n, idx, &shorter)) return;
  if (!shorter) {
    ps->exact = true;
    if (!tl_map_put(&ps->ident, b, (void *)1)) ps->oom = true;
    return;
  }
  if (ps->prefix && ps->prefix != b) {
    for (int k = 0; k < b->ndim; k++) {
      int64_t x = 0, y = 0;
      tl_expr_is_const_int(b->shape[k], &x);
      tl_expr_is_const_int(ps->prefix->shape[k], &y);
      if (x != y) ps->mixed = true;
    }
  }
  if (!ps->prefix) ps->prefix = b;
}

static void on_expr(tl_visitor *v, const tl_expr *e) {
  if (e->kind == TL_EXPR_LOAD) access((px_state *)v, e->u.load.buffer, e->u.load.n, e->u.load.indices);
}

static void on_stmt(tl_visitor *v, const tl_stmt *s) {
  px_state *ps = (px_state *)v;
  if (s->kind == TL_STMT_STORE) access(ps, s->u.store.buffer, s->u.store.n, s->u.store.indices);
  if (!ps->loop && s->kind == TL_STMT_TILE) /* whole-buffer tile-op operands distribute their fragment */
    for (int a = 0; a < s->u.tile.nargs; a++) {
      const tl_operand *o = &s->u.tile.args[a];
      if (o->kind == TL_OPND_REGION && is_frag(o->region.buffer) && tl_lo_whole_region(&o->region) &&
          !tl_map_put(&ps->ident, o->region.buffer, (void *)1))
        ps->oom = true;
    }
}

/* The loop's prefix fragment, or NULL when the loop is not to be extended. */
static const tl_buffer *scan_loop(px_state *ps, const tl_stmt *loop) {
  ps->loop = loop;
  ps->exact = ps->mixed = false;
  ps->prefix = NULL;
  tl_visit_stmt(&ps->v, loop->u.loop.body);
  ps->loop = NULL;
  return ps->exact || ps->mixed ? NULL : ps->prefix;
}

/* Pass 1: identity uses of every fragment (tile ops, full loops). */
static void scan_all(px_state *ps, const tl_stmt *s, int depth) {
  if (!s || depth > TL_LOWER_MAX_DEPTH) return;
  if (s->kind == TL_STMT_FOR && s->u.loop.kind == TL_LOOP_PARALLEL) {
    scan_loop(ps, s);
    return;
  }
  switch (s->kind) {
  case TL_STMT_SEQ:
    for (int i = 0; i < s->u.seq.n; i++) scan_all(ps, s->u.seq.stmts[i], depth + 1);
    return;
  case TL_STMT_FOR: scan_all(ps, s->u.loop.body, depth + 1); return;
  case TL_STMT_WHILE: scan_all(ps, s->u.whiles.body, depth + 1); return;
  case TL_STMT_KERNEL: scan_all(ps, s->u.kernel.body, depth + 1); return;
  case TL_STMT_IF:
    scan_all(ps, s->u.ifs.then_s, depth + 1);
    scan_all(ps, s->u.ifs.else_s, depth + 1);
    return;
  case TL_STMT_TILE: on_stmt(&ps->v, s); return;
  default: return;
  }
}

/* Loop over F's shape, the body under `v_k < e_k` for the shortened dims. */
static bool extend(tl_module *m, tl_stmt *loop, const tl_buffer *F) {
  tl_loc loc = loop->loc;
  int n = loop->u.loop.nvars;
  tl_expr *cond = NULL;
  tl_expr **ext = tl_arena_alloc(&m->arena, sizeof(tl_expr *) * (size_t)n);
  if (!ext) return false;
  for (int k = 0; k < n; k++) {
    int64_t e = 0, d = 0;
    tl_expr_is_const_int(loop->u.loop.extents[k], &e);
    tl_expr_is_const_int(F->shape[k], &d);
    ext[k] = loop->u.loop.extents[k];
    if (e == d) continue;
    tl_expr *c = tl_ir_binary(m, loc, TL_OP_LT, tl_ir_var(m, loc, loop->u.loop.vars[k]), loop->u.loop.extents[k]);
    cond = cond ? tl_ir_binary(m, loc, TL_OP_AND, cond, c) : c;
    if (!cond || !(ext[k] = tl_lo_int(m, loc, d))) return false;
  }
  tl_stmt *g = tl_lo_if(m, loc, cond, loop->u.loop.body, NULL);
  if (!g) return false;
  loop->u.loop.extents = ext;
  loop->u.loop.body = g;
  return true;
}

/* Pass 2: extend the loops whose prefix fragment has an identity use. */
static bool rewrite(px_state *ps, tl_module *m, tl_stmt *s, int depth) {
  if (!s || depth > TL_LOWER_MAX_DEPTH) return true;
  switch (s->kind) {
  case TL_STMT_SEQ:
    for (int i = 0; i < s->u.seq.n; i++)
      if (!rewrite(ps, m, s->u.seq.stmts[i], depth + 1)) return false;
    return true;
  case TL_STMT_FOR:
    if (s->u.loop.kind == TL_LOOP_PARALLEL) {
      const tl_buffer *F = scan_loop(ps, s);
      if (F && tl_map_get(&ps->ident, F, NULL)) return extend(m, s, F);
      return true;
    }
    return rewrite(ps, m, s->u.loop.body, depth + 1);
  case TL_STMT_KERNEL: return rewrite(ps, m, s->u.kernel.body, depth + 1);
  case TL_STMT_WHILE: return rewrite(ps, m, s->u.whiles.body, depth + 1);
  case TL_STMT_IF: return rewrite(ps, m, s->u.ifs.then_s, depth + 1) && rewrite(ps, m, s->u.ifs.else_s, depth + 1);
  default: return true;
  }
}

bool tl_lower_extend_short_parallel(tl_module *m, tl_primfunc *f) {
  px_state ps;
  memset(&ps, 0, sizeof ps);
  ps.v.expr = on_expr;
  ps.v.stmt = on_stmt;
  tl_map_init(&ps.ident);
  scan_all(&ps, f->body, 0);
  bool ok = !ps.oom && rewrite(&ps, m, f->body, 0) && !ps.oom;
  tl_map_free(&ps.ident);
  return ok;
}
