/* T.sync_grid() → launch boundaries: the first step of pass split-kernels
 * (split_kernels.c, which then makes one prim_func per T.Kernel scope).
 *
 * A T.Kernel whose body holds T.sync_grid() at its top level (the only
 * place the verifier allows it, lib/IR/sync_grid.c) becomes one T.Kernel per
 * side of its barriers, in order, each with the kernel's grid and threads:
 * the first holds the statements before the first barrier, side k >= 1
 * holds the statements the earlier sides carry (tl_sync_grid_carried: the
 * allocations, lets of indices and parameters, kernel-wide hints, in their
 * order) and then its own.  Every side k >= 1 is a copy (its own block
 * variables, buffers and lets; tl_stmt_clone_within) that keeps the
 * prim_func's parameters, dynamic symbols and T.alloc_global workspaces,
 * and stands at its barrier's location.  A side keeps only the
 * allocations its statements use; a side of no statements (two barriers
 * in a row, one at either end) is no launch.
 *
 * Why here and not in the front end: the tile IR as written keeps the
 * barrier, so the reference evaluator gives it its own meaning (every block
 * finishes one side before any block starts the next; lib/Interp) and the
 * CPU executor's comparison checks this split.  Why it is exact: the
 * launches of one call run in order on one stream, so every block of a side
 * has finished, its global writes visible, before the next side starts
 * (what cooperative_groups::this_grid().sync() guarantees, without its
 * co-residency limit on the grid), and the verifier has made sure the side
 * after a barrier reads nothing of the side before it except through global
 * memory and the carried statements, which mean the same in both launches.
 *
 * Requires: verified tile IR.  Guarantees: no T.sync_grid() remains; a
 * kernel without one is left as it is. */
#include <stdlib.h>

#include "IR/sync_grid.h"
#include "IR/visit.h"
#include "Lower/lower_internal.h"

typedef TL_VEC(tl_stmt *) stmt_vec;

/* The map that keeps what the sides share: the prim_func's parameters and
 * dynamic symbols, the T.alloc_global workspaces at the top of its kernels
 * (of this one, or of an earlier scope, as flash decoding allocates them). */
static bool seed_shared(tl_map *keep, const tl_primfunc *f) {
  bool ok = true;
  const tl_stmt *b = f->body;
  int nk = b && b->kind == TL_STMT_SEQ ? b->u.seq.n : b ? 1 : 0;
  for (int i = 0; i < f->nparams && f->params; i++) {
    if (f->params[i].buffer) ok &= tl_map_put(keep, f->params[i].buffer, f->params[i].buffer);
    if (f->params[i].var) ok &= tl_map_put(keep, f->params[i].var, f->params[i].var);
  }
  for (int i = 0; i < f->ndynamic && f->dynamic; i++)
    if (f->dynamic[i]) ok &= tl_map_put(keep, f->dynamic[i], f->dynamic[i]);
  for (int k = 0; k < nk; k++) {
    tl_stmt *const *list;
    int n = tl_kernel_top_stmts(b->kind == TL_STMT_SEQ ? b->u.seq.stmts[k] : b, &list);
    for (int i = 0; i < n; i++) {
      const tl_buffer *x = list[i]->kind == TL_STMT_ALLOC ? list[i]->u.alloc.buffer : NULL;
      if (x && x->scope == TL_SCOPE_GLOBAL) ok &= tl_map_put(keep, x, (void *)x);
    }
  }
  return ok;
}

/* The kernel of one side: k's launch with body xs[0..nx), at loc; a copy
 * of it (copy) with the shared nodes of f kept.  NULL on OOM. */
static tl_stmt *side_kernel(tl_module *m, const tl_primfunc *f, const tl_stmt *k, stmt_vec *xs, tl_loc loc, bool copy) {
  tl_stmt *r = tl_ir_stmt(m, loc, TL_STMT_KERNEL);
  tl_stmt *body = tl_ir_seq(m, loc, (int)xs->len, xs->data);
  if (!r || !body) return NULL;
  r->u.kernel = k->u.kernel;
  r->u.kernel.body = body;
  if (!copy) return r;
  tl_map keep;
  tl_map_init(&keep);
  tl_stmt *c = seed_shared(&keep, f) ? tl_stmt_clone_within(m, r, &keep) : NULL;
  tl_map_free(&keep);
  return c;
}

typedef struct used_set {
  tl_buffer_visitor bv; /* first */
  tl_map set;
  bool oom;
} used_set;

static void note_used(tl_buffer_visitor *bv, const tl_buffer *b) {
  used_set *u = (used_set *)bv;
  if (!tl_map_put(&u->set, b, (void *)1)) u->oom = true;
}

static bool is_annotate_layout(const tl_stmt *s) {
  return s->kind == TL_STMT_TILE && s->u.tile.op == TL_TILE_ANNOTATE_LAYOUT;
}

static bool kept(const used_set *u, const tl_buffer *b) {
  return !b || b->scope == TL_SCOPE_GLOBAL || tl_map_get(&u->set, b, NULL);
}

/* T.annotate_layout s with only the (buffer, layout) pairs of kept
 * buffers: s itself, a copy, or NULL for none left (*oom on OOM). */
static tl_stmt *kept_layouts(tl_module *m, const used_set *u, tl_stmt *s, bool *oom) {
  int n = s->u.tile.nargs, k = 0;
  tl_operand *args = tl_arena_alloc(&m->arena, sizeof *args * (size_t)(n > 0 ? n : 1));
  tl_stmt *r = tl_ir_stmt(m, s->loc, TL_STMT_TILE);
  if (!args || !r) return *oom = true, NULL;
  for (int i = 0; i + 1 < n; i += 2)
    if (kept(u, s->u.tile.args[i].region.buffer)) {
      args[k++] = s->u.tile.args[i];
      args[k++] = s->u.tile.args[i + 1];
    }
  if (k == n) return s;
  *r = *s;
  r->u.tile.args = args;
  r->u.tile.nargs = k;
  return k ? r : NULL;
}

/* Leaves out of side xs the allocations its other statements never use
 * (before the barrier, the buffers only the side after it uses; after it,
 * the carried ones it does not): layout inference would replicate an unused
 * fragment over every thread, and an unused shared buffer would take its
 * bytes.  False on OOM. */
static bool prune_unused(tl_module *m, stmt_vec *xs) {
  used_set u = {.bv = {.buffer = note_used}};
  tl_map_init(&u.set);
  for (size_t i = 0; i < xs->len; i++)
    if (xs->data[i]->kind != TL_STMT_ALLOC && !is_annotate_layout(xs->data[i]) && !tl_visit_buffers(&u.bv, xs->data[i]))
      u.oom = true; /* too deep to see every use */
  size_t k = 0;
  for (size_t i = 0; i < xs->len && !u.oom; i++) {
    tl_stmt *s = xs->data[i];
    if (s->kind == TL_STMT_ALLOC && !kept(&u, s->u.alloc.buffer)) continue;
    if (is_annotate_layout(s) && !(s = kept_layouts(m, &u, s, &u.oom))) continue;
    xs->data[k++] = s;
  }
  if (!u.oom) xs->len = k;
  tl_map_free(&u.set);
  return !u.oom;
}

/* Kernel k, split at its barriers, appended to out; false on OOM. */
static bool split_kernel(tl_module *m, const tl_primfunc *f, const tl_stmt *k, stmt_vec *out) {
  tl_stmt *const *list;
  int n = tl_kernel_top_stmts(k, &list);
  bool *carried = calloc((size_t)(n > 0 ? n : 1), sizeof *carried);
  stmt_vec xs = {0};
  bool ok = carried && tl_sync_grid_carried(list, n, carried);
  tl_loc loc = k->loc;
  size_t before = out->len;
  for (int i = 0, start = 0; ok && i <= n; i++) {
    if (i < n && !tl_stmt_is_sync_grid(list[i])) continue;
    if (i == start && (i < n || out->len > before)) { /* a side of no statements: no launch */
      if (i < n) loc = list[i]->loc;
      start = i + 1;
      continue;
    }
    xs.len = 0;
    for (int j = 0; j < start && ok; j++) /* what the earlier sides carry */
      if (carried[j]) ok = tl_vec_push(&xs, list[j]);
    for (int j = start; j < i && ok; j++) ok = tl_vec_push(&xs, list[j]);
    ok = ok && prune_unused(m, &xs);
    tl_stmt *side = ok ? side_kernel(m, f, k, &xs, loc, start > 0) : NULL;
    ok = side && tl_vec_push(out, side);
    if (i < n) loc = list[i]->loc; /* the next side stands at its barrier */
    start = i + 1;
  }
  free(carried);
  tl_vec_free(&xs);
  return ok;
}

bool tl_lower_split_sync_grid(tl_module *m, tl_primfunc *f, tl_diag *d) {
  const tl_stmt *b = f->body;
  int n = b && b->kind == TL_STMT_SEQ ? b->u.seq.n : b ? 1 : 0;
  bool any = false;
  for (int i = 0; i < n; i++) any |= tl_kernel_has_sync_grid(b->kind == TL_STMT_SEQ ? b->u.seq.stmts[i] : b);
  if (!any) return true;
  stmt_vec out = {0};
  bool ok = true;
  for (int i = 0; i < n && ok; i++) {
    tl_stmt *s = b->kind == TL_STMT_SEQ ? b->u.seq.stmts[i] : (tl_stmt *)b;
    ok = tl_kernel_has_sync_grid(s) ? split_kernel(m, f, s, &out) : tl_vec_push(&out, s);
  }
  tl_stmt *body = ok ? tl_ir_seq(m, b->loc, (int)out.len, out.data) : NULL;
  tl_vec_free(&out);
  if (!body) {
    tl_error(d, f->loc, "out of memory splitting a T.Kernel at T.sync_grid()");
    return false;
  }
  f->body = body;
  return true;
}
