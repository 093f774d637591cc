/* The intra-warpgroup overlap schedule of the warp-specialized attention
 * form (pass config tl.attention_overlap): lib/Lower/Hopper/attention_overlap.c
 * states the form it requires and the schedule it builds. */
#ifndef TL_LOWER_ATTENTION_OVERLAP_H
#define TL_LOWER_ATTENTION_OVERLAP_H

#include "Lower/lower_internal.h"

#define TL_AO_MAX_ITEMS 64

typedef TL_VEC(tl_stmt *) stmt_list;

typedef struct tl_ao_loop {
  tl_module *m;
  tl_names *names;
  tl_stmt *loop;   /* the consumers' loop; replaced in place */
  tl_buffer *mbar; /* the stage ring's mbarriers (K: group 0, V: group 1) */
  int stages;      /* S */
  int64_t threads; /* the consumer threads */
  tl_stmt **items; /* the loop body's statements, the staged copies removed */
  int n;
  int g1, g2; /* the indices of Q·Kᵀ and P·V in items */
  /* T.gemm g reading stage `stage` of its staged tiles (a new statement) */
  tl_stmt *(*stage_gemm)(void *ctx, const tl_stmt *g, tl_expr *stage);
  void *ctx;
  /* the ring position of iteration lo (a persistent grid's k-tiles of the
   * block's earlier tiles), or NULL for 0: iteration k uses stage
   * (base + k - lo) % S at phase (base + k - lo) / S % 2 */
  tl_expr *base;
  /* statements run once Q·Kᵀ of the last key block completed, before the
   * trailing P·V (a persistent grid's release of Q, so that the next tile's
   * Q loads under it), and the same again (other nodes) when the loop runs
   * no key block; NULL for none */
  tl_stmt *after_qk, *after_qk_empty;
} tl_ao_loop;

/* Rewrites a->loop into the overlap schedule; false with *why set (the loop
 * unchanged) when its body does not have the form, false with *why NULL on
 * OOM. */
bool tl_attention_overlap(tl_ao_loop *a, const char **why);

#endif
