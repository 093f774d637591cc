/* The face of the in-loop reuse planner (smem_reuse.c) to the pass
 * "smem-plan" (smem_plan.c), which calls it only for a kernel whose shared
 * buffers do not fit the target with whole-statement lifetimes. */
#ifndef TL_LOWER_SMEM_PLAN_H
#define TL_LOWER_SMEM_PLAN_H

#include "Lower/lower_internal.h"

/* A shared.dyn buffer to place: its size and alignment in bytes (given), its
 * byte offset (set by the planner). */
typedef struct tl_smem_buf {
  tl_buffer *buf;
  int64_t bytes, align;
  int64_t offset;
} tl_smem_buf;

/* Places bufs[0..n) in kernel k's dynamic block with lifetimes at statement
 * granularity (smem_reuse.c's head comment).  Returns 1 when they fit in
 * limit bytes: the offsets are set, *total is the block's size and the
 * barriers the reuse needs are in k's body; 0 when they do not: *total and
 * the offsets say how it would be, k is unchanged; -1 after a located error
 * (nesting too deep, out of memory), k unchanged. */
int tl_smem_plan_in_loops(tl_module *m, tl_stmt *k, tl_smem_buf *bufs, int n, int64_t limit, int64_t *total,
                          tl_diag *d);

#endif
