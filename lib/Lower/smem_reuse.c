/* In-loop reuse of shared memory: the plan of pass "smem-plan" for a kernel
 * whose buffers do not fit the target when a buffer used in a top-level
 * statement lives for all of it (smem_plan.c's plan, kept for every kernel
 * that fits, so their code does not change).
 *
 * Requires: lowered SIMT IR of kernel k (shared.dyn buffers flat, sizes and
 * alignments computed by smem_plan.c); tl_buffer.smem_renewed_in as
 * lower-tile-ops left it (smem_renew.c).
 * Guarantees (when it returns 1): buffers whose lifetimes overlap get
 * disjoint byte ranges, each offset a multiple of its alignment; where a
 * buffer X reuses bytes of a buffer Y, a T.sync_threads() that every thread
 * executes lies between Y's last use and X's first use (and, when both live
 * inside one iteration of a loop, also between X's last use and Y's first
 * use of the next iteration), found in the code or inserted, so no thread
 * writes one while another still reads the other.  The SIMT executor places
 * buffers at these offsets and checks every shared byte for races, so a
 * missing barrier shows there.
 *
 * Lifetimes.  The leaves of the kernel body (statements other than
 * sequences, loops and branches) are numbered in program order; a buffer
 * lives from its first to its last referencing leaf, widened
 *   - to all of a loop or branch that holds some but not all of its uses
 *     (a loop repeats them, the two arms of a branch may run in different
 *     threads at the same time);
 *   - to all of a loop that holds all its uses unless the buffer is fresh in
 *     every iteration: allocated inside the loop (the reductions' red_ws,
 *     a staged epilogue's tile), or renewed there (smem_renew.c: the
 *     iteration's first reference writes all of it); then its value never
 *     crosses the back edge and it dies inside the iteration;
 *   - to the whole top-level statements it is used in when an asynchronous
 *     unit touches it (cp.async, bulk copies, TMA, wgmma: their accesses
 *     complete later than the statement issuing them); sequences nested at
 *     the top (rasterize.c wraps the body in one) are looked through, so a
 *     pipelined loop is such a statement and an epilogue after it another;
 *   - to the whole kernel for an mbarrier's bytes (PTX ISA §9.7.13.15: an
 *     mbarrier object's memory is reused only after mbarrier.inval).
 * Barriers.  A T.sync_threads() counts between leaves a < b when it lies
 * between them and is reached from their common sequence through sequences
 * only (not inside a loop or branch of its own).  Where none does, one is
 * inserted before the statement of that sequence holding b (or at the end of
 * the loop's body for the wrap-around), unless the place is inside a branch
 * whose condition may differ between threads (a barrier there may not be
 * reached by every thread; uniform.c decides, e.g. a persistent kernel's
 * `if bid < batch:` over block indices is uniform): then the two buffers
 * are not placed at overlapping bytes.
 * Placement: in order of first use, each buffer at the lowest aligned offset
 * whose range does not intersect that of a placed buffer it may not share
 * bytes with (first fit, as smem_plan.c). */
#include <stdlib.h>
#include <string.h>

#include "IR/visit.h"
#include "Lower/smem_plan.h"

typedef struct sr_node {
  const tl_stmt *s;
  int parent, depth, child; /* child: index in the parent (a sequence's position) */
  int begin, end;           /* the leaves it holds: [begin, end) */
} sr_node;

typedef struct sr_life {
  int lo, hi;     /* leaf positions */
  int alloc_leaf; /* -1: not seen */
  bool async, whole;
  TL_VEC(int) uses;
} sr_life;

typedef struct sr_ins {
  int node, child; /* before child `child` of sequence `node` (n: at its end); -1: wrap loop `node`'s body */
} sr_ins;

typedef struct sr_state {
  tl_buffer_visitor bv; /* first: on_buffer casts back */
  tl_module *m;
  TL_VEC(sr_node) nodes;
  TL_VEC(int) leaf; /* leaf position -> node */
  tl_smem_buf *bufs;
  sr_life *life;
  int nb, cur;
  bool cur_async, cur_whole, oom, too_deep;
  TL_VEC(sr_ins) ins;
  tl_uniformity *uni; /* which branch conditions every thread evaluates alike (NULL: none known) */
} sr_state;

enum { NO = 0, HAVE = 1, INSERT = 2 };

/* ------------------------------------------------------------ the tree */
static void number(sr_state *st, const tl_stmt *s, int parent, int child, int depth) {
  if (!s || st->oom || st->too_deep) return;
  if (depth > TL_LOWER_MAX_DEPTH) {
    st->too_deep = true;
    return;
  }
  sr_node n = {.s = s, .parent = parent, .depth = depth, .child = child, .begin = (int)st->leaf.len};
  int me = (int)st->nodes.len;
  if (!tl_vec_push(&st->nodes, n)) {
    st->oom = true;
    return;
  }
  if (s->kind == TL_STMT_SEQ)
    for (int i = 0; i < s->u.seq.n; i++) number(st, s->u.seq.stmts[i], me, i, depth + 1);
  else if (s->kind == TL_STMT_FOR) number(st, s->u.loop.body, me, 0, depth + 1);
  else if (s->kind == TL_STMT_IF) {
    number(st, s->u.ifs.then_s, me, 0, depth + 1);
    number(st, s->u.ifs.else_s, me, 1, depth + 1);
  } else if (!tl_vec_push(&st->leaf, me)) st->oom = true;
  st->nodes.data[me].end = (int)st->leaf.len;
}

static const sr_node *N(const sr_state *st, int i) { return &st->nodes.data[i]; }
static bool is_ctrl(const sr_node *n) { return n->s->kind == TL_STMT_FOR || n->s->kind == TL_STMT_IF; }
static bool holds(const sr_node *n, int pos) { return n->begin <= pos && pos < n->end; }

static int lca(const sr_state *st, int a, int b) {
  while (N(st, a)->depth > N(st, b)->depth) a = N(st, a)->parent;
  while (N(st, b)->depth > N(st, a)->depth) b = N(st, b)->parent;
  while (a != b) a = N(st, a)->parent, b = N(st, b)->parent;
  return a;
}

/* Is anc node an ancestor of node n, or n itself? */
static bool is_anc(const sr_state *st, int anc, int n) {
  while (n >= 0 && N(st, n)->depth > N(st, anc)->depth) n = N(st, n)->parent;
  return n == anc;
}

/* Is node n or one of its ancestors a branch that threads of the block may take apart (its condition not
 * uniform.c's uniform: a barrier inside a uniform branch is reached by every thread or by none)? */
static bool under_branch(const sr_state *st, int n) {
  for (; n >= 0; n = N(st, n)->parent)
    if (N(st, n)->s->kind == TL_STMT_IF && !tl_uniformity_expr(st->uni, N(st, n)->s->u.ifs.cond)) return true;
  return false;
}

/* ------------------------------------------------------------- the uses */
static int find(const sr_state *st, const tl_buffer *b) {
  for (int i = 0; i < st->nb; i++)
    if (st->bufs[i].buf == b) return i;
  return -1;
}

static void on_buffer(tl_buffer_visitor *bv, const tl_buffer *b) {
  sr_state *st = (sr_state *)bv;
  int i = find(st, b);
  if (i < 0) return;
  sr_life *L = &st->life[i];
  if ((!L->uses.len || L->uses.data[L->uses.len - 1] != st->cur) && !tl_vec_push(&L->uses, st->cur)) st->oom = true;
  L->async |= st->cur_async;
  L->whole |= st->cur_whole;
}

static const int async_ops[] = {TL_INTRIN_PTX_CP_ASYNC, TL_INTRIN_PTX_CP_ASYNC_BULK, TL_INTRIN_PTX_CP_ASYNC_BULK_STORE,
                                TL_INTRIN_PTX_TMA_LOAD, TL_INTRIN_PTX_TMA_STORE,     TL_INTRIN_PTX_WGMMA_SS,
                                TL_INTRIN_PTX_WGMMA_RS};
static const int mbar_ops[] = {
    TL_INTRIN_PTX_MBARRIER_INIT,      TL_INTRIN_PTX_MBARRIER_ARRIVE,      TL_INTRIN_PTX_MBARRIER_ARRIVE_EXPECT_TX,
    TL_INTRIN_PTX_MBARRIER_EXPECT_TX, TL_INTRIN_PTX_MBARRIER_COMPLETE_TX, TL_INTRIN_PTX_MBARRIER_WAIT};

static bool calls_any(const tl_stmt *s, const int *ops, size_t n) {
  for (size_t i = 0; i < n; i++)
    if (tl_lo_has_call(s, ops[i])) return true;
  return false;
}

static void collect_uses(sr_state *st) {
  for (int p = 0; p < (int)st->leaf.len && !st->oom; p++) {
    const tl_stmt *s = N(st, st->leaf.data[p])->s;
    if (s->kind == TL_STMT_ALLOC) {
      int i = find(st, s->u.alloc.buffer);
      if (i >= 0 && st->life[i].alloc_leaf < 0) st->life[i].alloc_leaf = p;
      continue;
    }
    st->cur = p;
    st->cur_async = calls_any(s, async_ops, sizeof async_ops / sizeof *async_ops);
    st->cur_whole = calls_any(s, mbar_ops, sizeof mbar_ops / sizeof *mbar_ops);
    if (!tl_visit_buffers(&st->bv, s)) st->too_deep = true;
  }
}

/* ------------------------------------------------------------ lifetimes */
static void widen(sr_life *L, const sr_node *n) {
  if (n->begin < L->lo) L->lo = n->begin;
  if (n->end - 1 > L->hi) L->hi = n->end - 1;
}

/* The loop R on the path from node a up whose first variable is v (the
 * renewing loop of smem_renew.c), or -1. */
static int renewing_loop(const sr_state *st, int a, const tl_var *v) {
  for (; v && a >= 0; a = N(st, a)->parent) {
    const tl_stmt *s = N(st, a)->s;
    if (s->kind == TL_STMT_FOR && s->u.loop.nvars > 0 && s->u.loop.vars[0] == v) return a;
  }
  return -1;
}

/* The top-level statement holding node n: the highest statement on its path below the kernel body whose
 * ancestors are all sequences (sequences nested at the top, e.g. rasterize.c's LETs around the old body,
 * are looked through; n itself when every node above it is a sequence). */
static int top_stmt(const sr_state *st, int n) {
  int top = n;
  for (int c = n; c >= 0 && N(st, c)->depth >= 1; c = N(st, c)->parent)
    if (N(st, c)->s->kind != TL_STMT_SEQ) top = c;
  return top;
}

static void lifetime(sr_state *st, int i) {
  sr_life *L = &st->life[i];
  int nl = (int)st->leaf.len;
  if (L->uses.len == 0) {
    L->lo = L->hi = L->alloc_leaf >= 0 ? L->alloc_leaf : 0;
    return;
  }
  int a = st->leaf.data[L->uses.data[0]];
  L->lo = L->hi = L->uses.data[0];
  for (size_t u = 1; u < L->uses.len; u++) {
    a = lca(st, a, st->leaf.data[L->uses.data[u]]);
    if (L->uses.data[u] > L->hi) L->hi = L->uses.data[u];
  }
  int R = renewing_loop(st, a, st->bufs[i].buf->smem_renewed_in);
  for (size_t u = 0; u < L->uses.len; u++)
    for (int c = N(st, st->leaf.data[L->uses.data[u]])->parent; c >= 0; c = N(st, c)->parent) {
      const sr_node *n = N(st, c);
      if (!is_ctrl(n)) continue;
      if (!is_anc(st, c, a)) widen(L, n); /* holds some uses, not all */
      else if (n->s->kind == TL_STMT_FOR && !holds(n, L->alloc_leaf) && !(R >= 0 && is_anc(st, c, R)))
        widen(L, n); /* the value crosses its back edge */
    }
  if (L->async) { /* the top-level statements holding lo and hi */
    int c = top_stmt(st, st->leaf.data[L->lo]), e = top_stmt(st, st->leaf.data[L->hi]);
    L->lo = N(st, c)->begin, L->hi = N(st, e)->end - 1;
  }
  if (L->whole) L->lo = 0, L->hi = nl - 1;
}

/* ------------------------------------------------------------- barriers */
static bool is_sync_leaf(const sr_state *st, int p) {
  const tl_stmt *s = N(st, st->leaf.data[p])->s;
  return s->kind == TL_STMT_EVAL && s->u.eval.value && s->u.eval.value->kind == TL_EXPR_CALL &&
         s->u.eval.value->u.call.op == TL_INTRIN_SYNC_THREADS;
}

/* Is every node strictly between leaf p's node and node top a sequence? */
static bool seq_path(const sr_state *st, int p, int top) {
  for (int c = N(st, st->leaf.data[p])->parent; c >= 0 && c != top; c = N(st, c)->parent)
    if (N(st, c)->s->kind != TL_STMT_SEQ) return false;
  return true;
}

/* A barrier every thread passes between leaf a and leaf b > a. */
static int straight(const sr_state *st, int a, int b, sr_ins *ins) {
  int L = lca(st, st->leaf.data[a], st->leaf.data[b]);
  if (N(st, L)->s->kind != TL_STMT_SEQ) return NO;
  for (int p = a + 1; p < b; p++)
    if (is_sync_leaf(st, p) && seq_path(st, p, L)) return HAVE;
  if (under_branch(st, L)) return NO;
  int c = st->leaf.data[b];
  while (N(st, c)->parent != L) c = N(st, c)->parent;
  *ins = (sr_ins){L, N(st, c)->child};
  return INSERT;
}

/* A barrier between leaf x_hi of an iteration of the innermost loop holding
 * [y_lo, x_hi] and leaf y_lo of the next one. */
static int wrap(const sr_state *st, int y_lo, int x_hi, sr_ins *ins) {
  int F = lca(st, st->leaf.data[y_lo], st->leaf.data[x_hi]);
  while (F >= 0 && N(st, F)->s->kind != TL_STMT_FOR) F = N(st, F)->parent;
  if (F < 0) return HAVE; /* no loop repeats them */
  const sr_node *f = N(st, F);
  for (int p = f->begin; p < f->end; p++)
    if ((p > x_hi || p < y_lo) && is_sync_leaf(st, p) && seq_path(st, p, F)) return HAVE;
  if (under_branch(st, F)) return NO;
  const tl_stmt *body = f->s->u.loop.body;
  int bn = F + 1; /* the body is the loop's first child in numbering order */
  if (body && body->kind == TL_STMT_SEQ && bn < (int)st->nodes.len && N(st, bn)->s == body)
    *ins = (sr_ins){bn, body->u.seq.n};
  else *ins = (sr_ins){F, -1};
  return INSERT;
}

/* May buffers i and j share bytes?  Their lifetimes are disjoint and the
 * barriers between them exist or can be inserted (ins: up to 2 needed). */
static bool compatible(const sr_state *st, int i, int j, sr_ins *ins, int *nins) {
  const sr_life *x = &st->life[i], *y = &st->life[j];
  if (y->lo > x->lo) {
    const sr_life *t = x;
    x = y, y = t;
  }
  *nins = 0;
  if (!(y->hi < x->lo)) return false;
  sr_ins a, b;
  int s = straight(st, y->hi, x->lo, &a);
  int w = s == NO ? NO : wrap(st, y->lo, x->hi, &b);
  if (s == NO || w == NO) return false;
  if (s == INSERT) ins[(*nins)++] = a;
  if (w == INSERT) ins[(*nins)++] = b;
  return true;
}

/* ------------------------------------------------------------ placement */
static bool overlap(const tl_smem_buf *a, int64_t off, int64_t bytes) {
  return off < a->offset + a->bytes && a->offset < off + bytes;
}

static int64_t place(sr_state *st, bool *placed) {
  int64_t total = 0;
  sr_ins ins[2];
  int nins;
  for (int done = 0; done < st->nb; done++) {
    int x = -1;
    for (int i = 0; i < st->nb; i++)
      if (!placed[i] && (x < 0 || st->life[i].lo < st->life[x].lo)) x = i;
    tl_smem_buf *bx = &st->bufs[x];
    int64_t off = 0;
    for (bool moved = true; moved;) {
      moved = false;
      off = (off + bx->align - 1) / bx->align * bx->align;
      for (int j = 0; j < st->nb && !moved; j++)
        if (placed[j] && overlap(&st->bufs[j], off, bx->bytes) && !compatible(st, x, j, ins, &nins)) {
          off = st->bufs[j].offset + st->bufs[j].bytes;
          moved = true;
        }
    }
    bx->offset = off;
    placed[x] = true;
    if (off + bx->bytes > total) total = off + bx->bytes;
  }
  return total;
}

/* The barriers the placement needs, each place once. */
static void needed_barriers(sr_state *st) {
  sr_ins ins[2];
  int nins;
  for (int i = 0; i < st->nb; i++)
    for (int j = i + 1; j < st->nb; j++) {
      if (!overlap(&st->bufs[j], st->bufs[i].offset, st->bufs[i].bytes)) continue;
      if (!compatible(st, i, j, ins, &nins)) continue; /* cannot happen: placed apart */
      for (int k = 0; k < nins; k++) {
        bool dup = false;
        for (size_t q = 0; q < st->ins.len; q++)
          if (st->ins.data[q].node == ins[k].node && st->ins.data[q].child == ins[k].child) dup = true;
        if (!dup && !tl_vec_push(&st->ins, ins[k])) st->oom = true;
      }
    }
}

/* ------------------------------------------------------------ insertion */
static tl_stmt *sync_at(sr_state *st, tl_loc loc) {
  tl_stmt *s = tl_lo_sync_threads(st->m, loc);
  if (!s) st->oom = true;
  return s;
}

/* Rebuilds sequence node `node` with a barrier before each listed child. */
static void insert_in_seq(sr_state *st, int node) {
  tl_stmt *s = (tl_stmt *)N(st, node)->s;
  int n = s->u.seq.n, extra = 0;
  bool *before = calloc((size_t)n + 1, sizeof(bool));
  if (!before) {
    st->oom = true;
    return;
  }
  for (size_t q = 0; q < st->ins.len; q++)
    if (st->ins.data[q].node == node && st->ins.data[q].child >= 0 && !before[st->ins.data[q].child]) {
      before[st->ins.data[q].child] = true;
      extra++;
    }
  tl_stmt **xs = tl_arena_alloc(&st->m->arena, sizeof(tl_stmt *) * (size_t)(n + extra));
  int j = 0;
  for (int i = 0; xs && i <= n && !st->oom; i++) {
    if (before[i]) xs[j++] = sync_at(st, i < n ? s->u.seq.stmts[i]->loc : s->loc);
    if (i < n) xs[j++] = s->u.seq.stmts[i];
  }
  if (!xs) st->oom = true;
  if (!st->oom) s->u.seq.stmts = xs, s->u.seq.n = j;
  free(before);
}

static void insert_barriers(sr_state *st) {
  for (size_t q = 0; q < st->ins.len && !st->oom; q++) {
    sr_ins in = st->ins.data[q];
    bool first = true; /* each sequence rebuilt once */
    for (size_t r = 0; r < q; r++)
      if (st->ins.data[r].node == in.node) first = false;
    if (in.child >= 0 && first) insert_in_seq(st, in.node);
    if (in.child < 0) {
      tl_stmt *f = (tl_stmt *)N(st, in.node)->s;
      tl_stmt *xs[2] = {f->u.loop.body, sync_at(st, f->loc)};
      tl_stmt *b = xs[1] ? tl_ir_seq(st->m, f->loc, 2, xs) : NULL;
      if (!b) st->oom = true;
      else f->u.loop.body = b;
    }
  }
}

int tl_smem_plan_in_loops(tl_module *m, tl_stmt *k, tl_smem_buf *bufs, int n, int64_t limit, int64_t *total,
                          tl_diag *d) {
  sr_state st = {.bv = {.buffer = on_buffer}, .m = m, .bufs = bufs, .nb = n};
  st.life = calloc((size_t)n + 1, sizeof *st.life);
  bool *placed = calloc((size_t)n + 1, sizeof(bool));
  if (!st.life || !placed) st.oom = true;
  for (int i = 0; i < n && !st.oom; i++) st.life[i].alloc_leaf = -1;
  number(&st, k->u.kernel.body, -1, 0, 0);
  st.uni = tl_uniformity_new(k->u.kernel.body); /* NULL (out of memory): every branch counts as divergent */
  if (!st.oom && !st.too_deep) collect_uses(&st);
  int r = -1;
  if (!st.oom && !st.too_deep) {
    for (int i = 0; i < n; i++) lifetime(&st, i);
    *total = place(&st, placed);
    r = *total <= limit;
    if (r == 1) needed_barriers(&st);
    if (r == 1 && !st.oom) insert_barriers(&st);
  }
  if (st.too_deep) tl_error(d, k->loc, "statement nesting exceeds %d levels", TL_LOWER_MAX_DEPTH);
  else if (st.oom) tl_error(d, k->loc, "out of memory while planning shared memory");
  if (st.oom || st.too_deep) r = -1;
  for (int i = 0; st.life && i < n; i++) tl_vec_free(&st.life[i].uses);
  free(st.life);
  free(placed);
  tl_vec_free(&st.nodes);
  tl_vec_free(&st.leaf);
  tl_vec_free(&st.ins);
  tl_uniformity_free(st.uni);
  return r;
}
