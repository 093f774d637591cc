/* Shared-memory layouts (internal to lib/Lower): where each element of a
 * shared tile lives in the flat dynamic shared-memory block.
 *
 * A shared buffer at tile level is 2-D (rows, cols; cols contiguous), or 3-D
 * with a leading pipeline-stage dimension added by the pipelining pass.
 * Layout inference chooses, per buffer, an XOR swizzle over 16-byte chunks
 * (128-, 64- or 32-byte patterns by the contiguous width; padding where none
 * fits; docs/layouts.md "Shared-memory swizzles") so that ldmatrix and the copies are free of
 * bank conflicts.  Lowering replaces every shared buffer by a 1-D buffer
 * (`flat`, same name) and computes element offsets with tl_smem_offset, so
 * the SIMT IR carries the swizzle as explicit integer arithmetic
 * (docs/simt-ir.md).  A swizzle permutes whole 16-byte chunks within a row,
 * so an aligned 16-byte vector stays contiguous. */
#ifndef TL_SMEM_LAYOUT_H
#define TL_SMEM_LAYOUT_H

#include "IR/tir.h"

typedef struct tl_smem_layout {
  tl_buffer *orig; /* the tile-level buffer */
  tl_buffer *flat; /* the 1-D shared.dyn buffer used after lowering */
  int stages;      /* extent of the leading stage dim, 1 when the buffer has none */
  int rows, cols;  /* the 2-D tile: last two dims (a 1-D buffer has rows 1) */
  int elem_bytes;
  int swizzle_bytes;   /* 0 (none), 32, 64 or 128 */
  int row_stride;      /* elements from one row to the next (cols + padding) */
  int64_t stage_elems; /* elements per stage (rows * row_stride) */
  /* The image that TMA writes and wgmma reads (set by the warp-specialize
   * pass, warp_specialize.c): swizzle_bytes is the TMA/wgmma swizzle span,
   * each panel is one TMA box, and smem-plan places the buffer at a
   * 1024-byte aligned offset, so that the XOR keys of the address-based
   * hardware swizzle (docs/hopper.md "The shared-memory image") are row % 8
   * as here. */
  bool wgmma;
} tl_smem_layout;

/* The layout of shared buffer b: the one layout inference attached
 * (b->layout), else a row-major layout without swizzle, created and
 * attached on first use.  NULL on OOM or when b is not a shared buffer. */
tl_smem_layout *tl_smem_layout_get(tl_module *m, tl_buffer *b);

/* Attaches a swizzled layout chosen for a gemm operand (layout inference). */
tl_smem_layout *tl_smem_layout_set(tl_module *m, tl_buffer *b, int swizzle_bytes, int pad_elems);

/* Marks b's layout as a TMA/wgmma image with the given swizzle span
 * (tl_smem_layout.wgmma); NULL when b's shape does not admit the swizzle
 * (the caller checked it) or on OOM. */
tl_smem_layout *tl_smem_layout_set_wgmma(tl_module *m, tl_buffer *b, int swizzle_bytes);

/* Flat element offset of (stage, row, col) in L->flat; stage may be NULL for
 * an unstaged buffer.  Folds when the arguments are constants. */
tl_expr *tl_smem_offset(tl_module *m, tl_loc loc, const tl_smem_layout *L, tl_expr *stage, tl_expr *row, tl_expr *col);

/* Flat offset of (stage, row + rstep*rv, col + cstep*cv) for unrolled loop
 * variables rv in [0, rn), cv in [0, cn), in a form whose unrolled copies
 * share a few per-thread values plus constants (see smem_layout.c).
 * col_chunk_mask: the bits that col's 16-byte chunk index inside a swizzle
 * panel can have (e.g. 1 for col in {0, 8} with 16-bit elements).  NULL when
 * that form does not apply; then use tl_smem_offset. */
tl_expr *tl_smem_offset_unrolled(tl_module *m, tl_loc loc, const tl_smem_layout *L, tl_expr *stage, tl_expr *row,
                                 int64_t rstep, tl_var *rv, int64_t rn, tl_expr *col, int64_t col_chunk_mask,
                                 int64_t cstep, tl_var *cv, int64_t cn);

/* The layout b has, as a value (layout dumps, docs/layouts.md "Seeing the
 * layouts"): the one layout inference attached, re-fitted to b's current
 * shape, else the row-major layout without padding that lowering attaches
 * on first use; nothing is attached.  false when b is not a shared buffer of
 * static shape. */
bool tl_smem_layout_view(const tl_buffer *b, tl_smem_layout *out);

/* The flat element offset of (stage, row, col), as tl_smem_offset computes
 * it in the IR. */
int64_t tl_smem_offset_at(const tl_smem_layout *L, int64_t stage, int64_t row, int64_t col);

#endif
