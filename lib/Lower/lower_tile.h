/* The shared face of pass "lower-tile-ops" (lib/Lower, internal): the
 * state of the tile-op lowering (lower_tile.c) and the per-thread iteration
 * spaces of its partitions (lower_partition.c), which T.Parallel, T.copy,
 * T.fill and the staged epilogue walk. */
#ifndef TL_LOWER_TILE_H
#define TL_LOWER_TILE_H

#include "IR/rewrite.h"
#include "Lower/lower_internal.h"

typedef struct lt_state {
  tl_rewriter rw;                  /* first: rw_expr's hook casts back to lt_state */
  tl_lower_walk w;                 /* module, diagnostics, names, ranges */
  int64_t threads;                 /* the block's threads */
  tl_map subst;                    /* var → replacement expression (T.Parallel lowering) */
  const tl_stmt *loop;             /* the T.Parallel being lowered (identity fragment accesses) */
  tl_expr *reg;                    /* its register index for identity accesses of PLAN fragments */
  const tl_frag_layout *part;      /* the 2-D MMA_C / ROWS partition being emitted */
  const tl_frag_layout *loop_part; /* the layout partitioning the T.Parallel being lowered (NULL: none) */
  tl_expr *row_reg;                /* its row statistic register (2*mi + h, or the ROWS row iteration) */
  TL_VEC(tl_buffer *) frags;
  int64_t smem_seen; /* bytes of the shared buffers allocated so far (the staged epilogue's budget) */
  const tl_target *target;
  tl_primfunc *f;
  bool ws; /* the kernel is warp-specialized (warp_specialize.c): its epilogue may store by TMA */
} lt_state;

#define CHECK(x) TL_TRY_ALLOC(x, st->w.oom, NULL)

/* ------------------------------------------------------------- partitions */
typedef struct plan {
  int ndim;
  const int64_t *shape;
  int64_t total, threads, vec, nvec;
  bool registers;            /* touches fragment registers: unroll the vector loop */
  const tl_frag_layout *mma; /* non-NULL: iterate the MMA_C layout instead (vec 2) */
  const tl_frag_layout *lay; /* non-NULL: iterate this ROWS / REDUCER layout (emit_rows, emit_reducer) */
  bool rep_guard;            /* REDUCER: only replica 0 runs the body (it stores to memory) */
} plan;

/* A PLAN partition of a static domain over `threads` threads (vector width
 * from the widest element of `bytes` bytes), or the partition of a
 * distributed fragment layout (lower_partition.c). */
void lt_plan_for_shape(plan *p, int ndim, const int64_t *shape, int64_t threads, int bytes);
void lt_plan_for_layout(plan *p, const tl_frag_layout *L);

/* Per-chunk callback: idx[k] the domain indices of the chunk's first element
 * (idx[last] a multiple of vec), reg the register index of that element. */
typedef tl_stmt *(*chunk_fn)(lt_state *st, void *user, const plan *p, tl_expr **idx, tl_expr *reg);

/* Emits partition p: fn once per chunk (vector of p->vec elements, or an
 * MMA_C pair, a ROWS vector, a REDUCER statistic, a STACKED row of the
 * base), inside the loops over the thread's chunks; NULL on failure. */
tl_stmt *lt_emit_plan(lt_state *st, tl_loc loc, const plan *p, chunk_fn fn, void *user);

#endif
