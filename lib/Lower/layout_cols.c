/* Column statistics for pass "layout-inference" (layout_infer.c; docs/layouts.md
 * "Column statistics"): a 1-D fragment written by a dim-0 T.reduce_* of a 2-D
 * fragment and read as D[j] by a T.Parallel over (i, j) takes the COLS layout
 * (frag_layout.h) of the source's ROWS layout.
 *
 * Requires: the scan of layout_infer.c (reduces, column reads in col_links),
 * class gemm seeds; tl_li_finish_cols after every non-statistics class has
 * its layout.  Guarantees: such classes get COLS, or a located layout
 * conflict naming the buffer and both ops; other D[j] reads stay other uses. */
#include <string.h>

#include "Lower/layout_infer.h"

/* Column statistics (docs/layouts.md "Column statistics"): a 2-D fragment
 * reduced along dim 0 into a 1-D fragment D that a 2-D T.Parallel loop reads
 * as D[j] (its second variable) makes D's class column statistics: the
 * source's class takes ROWS (decide_rows) and D's the COLS layout over it
 * (finish_cols), and the reduce combines the groups that hold each column
 * in place (lower_reduce.c) instead of staging through shared memory.  A
 * D[j] read of any other fragment is an other use, as before (REPLICATED
 * where replicate() allows it, else the located conflict). */
void tl_li_decide_cols(li_state *st) {
  for (size_t k = 0; k < st->reds.len; k++) {
    red_rec *rr = &st->reds.data[k];
    if (rr->src < 0 || rr->dst < 0 || rr->sn != 2 || rr->rdim != 0 || st->frags.data[rr->dst].buf->ndim != 1) continue;
    int r = tl_li_find(st, rr->dst);
    for (size_t j = 0; j < st->col_links.len && !rr->cols; j++) rr->cols = tl_li_find(st, st->col_links.data[j].d) == r;
    if (rr->cols) st->frags.data[r].col_cls = true;
  }
  for (size_t j = 0; j < st->col_links.len; j++) {
    row_link *lk = &st->col_links.data[j];
    if (!st->frags.data[tl_li_find(st, lk->d)].col_cls) tl_li_use_other(st, lk->d, lk->loc, "T.Parallel loop");
  }
}

/* A conflict of column statistics D (class root i) at loc: reported. */
static void cols_error(li_state *st, const red_rec *def, tl_loc loc, const char *name, const char *why) {
  tl_error(st->d, loc,
           "layout conflict for fragment '%s': the %s here makes it the column statistics of '%s' (reduced along "
           "dim 0 and read as %s[j] beside it), but %s",
           name, def->by, st->frags.data[def->src].buf->name, name, why);
  tl_note(st->d, def->loc, "the %s that sets the layout of '%s' is here", def->by, name);
  st->errors++;
}

/* The members of column-statistics class i: the COLS layout of S. */
static bool set_cols(li_state *st, int i, const red_rec *def, const tl_frag_layout *S) {
  for (size_t j = 0; j < st->frags.len; j++) {
    if (tl_li_find(st, (int)j) != i) continue;
    tl_buffer *b = st->frags.data[j].buf;
    int64_t n = 0;
    if (b->ndim != 1 || !tl_expr_is_const_int(b->shape[0], &n) || n != S->cols) {
      cols_error(st, def, b->loc, b->name, "its shape is not the source's columns");
      continue;
    }
    tl_frag_layout *L = tl_arena_alloc(&st->m->arena, sizeof *L);
    int64_t *shape = tl_arena_alloc(&st->m->arena, sizeof(int64_t));
    if (!L || !shape) return false;
    memset(L, 0, sizeof *L);
    *shape = n;
    L->shape = shape;
    tl_cols_layout_init(L, S);
    L->set_at = def->loc;
    L->set_by = def->by;
    b->layout = L;
  }
  return true;
}

/* Gives every column-statistics class (decide_cols) the COLS layout of the
 * source of its first dim-0 reduce, and checks the other reduces into it
 * (the same source layout) and every loop that reads it as D[j] (partitioned
 * by that layout); a mismatch, or row statistics in the same class, is a
 * layout conflict naming the buffer and both ops. */
void tl_li_finish_cols(li_state *st) {
  for (size_t i = 0; i < st->frags.len; i++) {
    frag_info *root = &st->frags.data[i];
    if (tl_li_find(st, (int)i) != (int)i || !root->col_cls) continue;
    const red_rec *def = NULL;
    for (size_t k = 0; k < st->reds.len && !def; k++)
      if (st->reds.data[k].cols && tl_li_find(st, st->reds.data[k].dst) == (int)i) def = &st->reds.data[k];
    if (!def) continue;
    const char *dn = st->frags.data[def->dst].buf->name;
    const tl_frag_layout *S = tl_frag_layout_of(st->frags.data[def->src].buf);
    if (root->red_cls) {
      tl_loc at = def->loc;
      for (size_t k = 0; k < st->reds.len; k++)
        if (!st->reds.data[k].cols && st->reds.data[k].dst >= 0 && tl_li_find(st, st->reds.data[k].dst) == (int)i)
          at = st->reds.data[k].loc;
      for (size_t k = 0; k < st->links.len; k++)
        if (tl_li_find(st, st->links.data[k].d) == (int)i) at = st->links.data[k].loc;
      cols_error(st, def, at, dn, "this op reads or writes it as row statistics");
      continue;
    }
    if (!S || S->kind != TL_FRAG_ROWS || S->ndim != 2) {
      cols_error(st, def, def->loc, dn,
                 "the source's layout is not a block of rows (ROWS); lowering it is not "
                 "supported yet");
      continue;
    }
    if (!set_cols(st, (int)i, def, S)) {
      st->oom = true;
      return;
    }
    const tl_frag_layout *D = tl_frag_layout_of(st->frags.data[def->dst].buf);
    for (size_t k = 0; k < st->reds.len; k++) {
      red_rec *rr = &st->reds.data[k];
      if (rr->dst < 0 || tl_li_find(st, rr->dst) != (int)i || rr == def) continue;
      const tl_frag_layout *E = rr->cols ? tl_frag_layout_of(st->frags.data[rr->src].buf) : NULL;
      if (!E || !tl_frag_layout_same(E, S))
        cols_error(st, def, rr->loc, dn, "this reduce gives its elements to other threads");
    }
    for (size_t k = 0; D && k < st->col_links.len; k++) {
      row_link *lk = &st->col_links.data[k];
      if (tl_li_find(st, lk->d) != (int)i) continue;
      const tl_frag_layout *F = lk->f >= 0 ? tl_frag_layout_of(st->frags.data[lk->f].buf) : NULL;
      if (!F)
        cols_error(st, def, lk->loc, dn,
                   "this T.Parallel loop indexes no fragment by all its variables; lowering it "
                   "is not supported yet");
      else if (!tl_cols_fits(D, F))
        cols_error(st, def, lk->loc, dn, "this T.Parallel loop is partitioned by a fragment of another layout");
    }
  }
}
