/* Stores to row statistics for pass "layout-inference" (layout_infer.c;
 * docs/layouts.md "Row statistics"): a 1-D fragment D stored as D[i] inside
 * a T.Parallel loop over (i, j, ...) that a fragment F partitions.
 *
 * Iteration (i, j) runs on the thread that holds F[i, j], and a thread
 * updates only its own copy of D[i]; the reference evaluator runs every j in
 * order on one D[i].  The two agree only when row i of F and every copy of
 * D[i] are on one thread, which runs the row's iterations in order.
 *
 * Requires: every fragment's layout (after finish_reducers, finish_cols,
 * resolve_stacks).  Guarantees: any other such store is a located layout
 * conflict naming D, F and the rule; loops that only read D[i], loops over
 * i alone, loops that no fragment partitions (they run row i on every
 * holder of D[i], j serial: check_stat_loops) and T.alloc_reducer buffers
 * (each copy a partial that T.finalize_reducer combines) are untouched. */
#include <stdio.h>
#include <string.h>

#include "Lower/layout_infer.h"

enum { MAX_THREADS = 1024, MAX_DIMS = 8 };

/* The distinct threads that hold a copy of D[i] or an element F[i, ...] of
 * row i (F's first dim is the loop's first variable); 0 when that cannot be
 * told (then the store is refused). */
static int64_t row_threads(const tl_frag_layout *D, const tl_frag_layout *F, int64_t threads, int64_t i) {
  if (threads < 1 || threads > MAX_THREADS || F->ndim < 2 || F->ndim > MAX_DIMS || !F->shape) return 0;
  bool seen[MAX_THREADS];
  memset(seen, 0, sizeof seen);
  int64_t n = 0, reg, rest = 1, idx[MAX_DIMS];
  for (int k = 1; k < F->ndim; k++) rest *= F->shape[k];
  for (int64_t t = 0; t < threads; t++)
    if (tl_frag_holds(D, &i, t, &reg) && !seen[t]) {
      seen[t] = true;
      n++;
    }
  for (int64_t r = 0; r < rest; r++) {
    idx[0] = i;
    for (int64_t k = F->ndim - 1, q = r; k >= 1; q /= F->shape[k], k--) idx[k] = q % F->shape[k];
    int64_t t = -1;
    tl_frag_owner(F, idx, &t, &reg);
    if (t < 0 || t >= threads) return 0;
    if (!seen[t]) {
      seen[t] = true;
      n++;
    }
  }
  return n;
}

/* Checks every store D[i] of a loop over (i, j, ...) partitioned by F
 * (row_stores): reported unless each row is on one thread. */
void tl_li_check_row_stores(li_state *st) {
  for (size_t k = 0; k < st->row_stores.len; k++) {
    const row_link *lk = &st->row_stores.data[k];
    if (lk->f < 0) continue; /* j serial on every holder of D[i] (check_stat_loops) */
    const tl_buffer *db = st->frags.data[lk->d].buf, *fb = st->frags.data[lk->f].buf;
    const tl_frag_layout *D = tl_frag_layout_of(db), *F = tl_frag_layout_of(fb);
    int64_t threads = st->frags.data[lk->f].threads > 0 ? st->frags.data[lk->f].threads : st->threads;
    int64_t rows = D && D->shape ? D->shape[0] : 0, i = 0, n = 0;
    if (!D || !F || db->reducer != TL_REDUCER_NONE) continue; /* T.alloc_reducer: T.finalize_reducer combines */
    for (i = 0; i < rows; i++)
      if ((n = row_threads(D, F, threads, i)) != 1) break;
    if (i == rows) continue;
    char cnt[32] = "an unknown number of";
    if (n > 1) snprintf(cnt, sizeof cnt, "%lld", (long long)n);
    tl_error(st->d, lk->loc,
             "layout conflict for fragment '%s': this store writes the row statistic '%s'[i] inside a "
             "T.Parallel loop over (i, j) partitioned by '%s', whose row %lld is spread over %s threads that "
             "each hold their own copy of '%s'[%lld]; only the threads that run iteration (i, j) would update "
             "theirs, so the copies would diverge; store it in a loop over i alone (for i in T.Parallel(...)) or "
             "compute it with T.reduce",
             db->name, db->name, fb->name, (long long)i, cnt, db->name, (long long)i);
    if (D->set_by) tl_note(st->d, D->set_at, "the %s that sets the layout of '%s' is here", D->set_by, db->name);
    st->errors++;
  }
}
