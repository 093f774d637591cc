/* Shared-memory layouts (lib/Lower, smem_layout.h): the swizzle record of a
 * shared tile and the element offsets of its elements in the flat buffer.
 *
 * Algorithm (docs/layouts.md "Shared-memory swizzles", TileLang's Make{Full,Half,Quarter}Bank-
 * SwizzleLayout2D).  A shared buffer of shape [stages?, H, W] (W contiguous,
 * element size b, E = 16 / b elements per 16-byte chunk) is stored stage
 * after stage, stage_elems = H * row_stride elements each.  Without swizzle
 * an element (i, j) is at i * row_stride + j (row_stride = W + pad).  With a
 * swizzle of n chunks (n = swizzle_bytes / 16: 8, 4 or 2) the tile is cut into
 * column panels of n*E elements stored one after another (each H*n*E
 * elements), and inside a panel the 16-byte chunk c = (j / E) % n of row i
 * moves to chunk c ^ ((i / (8 / n)) % n):
 *     off = (j / nE) * (H * nE) + i * nE + (((j / E) % n) ^ ((i / (8/n)) % n)) * E + j % E
 * which equals docs/layouts.md's p*(H*n*E) + b*(8*n*E) + s*(n*E) + c'*E + v with
 * b = i / 8, s = i % 8 and c' = c ^ (s / (8/n)).  Requirements for a swizzle:
 * W % (n*E) == 0 and H % 8 == 0; tl_smem_layout_set falls back to the
 * row-major layout (plus padding) otherwise.  The map is a bijection of the
 * stage's H*W elements onto [0, H*W), and keeps every aligned 16-byte chunk
 * contiguous (the XOR only permutes whole chunks).  Bank-conflict argument:
 * docs/layouts.md "Shared-memory swizzles"; PTX ISA §9.7.14.5.15 (ldmatrix
 * rows are 16-byte aligned 8-element rows). */
#include <stdint.h>
#include <string.h>

#include "Lower/lower_internal.h"
#include "Lower/smem_layout.h"

static bool is_shared(const tl_buffer *b) {
  return b && (b->scope == TL_SCOPE_SHARED_DYN || b->scope == TL_SCOPE_SHARED);
}

/* Fills the geometry of L from b's static shape; false when the shape is not
 * static, empty, or too large for int32 offsets. */
static bool fill_geometry(tl_smem_layout *L, const tl_buffer *b, int pad) {
  int64_t dims[8];
  if (b->ndim < 1 || b->ndim > 8) return false;
  for (int k = 0; k < b->ndim; k++)
    if (!tl_expr_is_const_int(b->shape[k], &dims[k]) || dims[k] < 1 || dims[k] > INT32_MAX) return false;
  int64_t stages = 1;
  for (int k = 0; k + 2 < b->ndim; k++)
    if (__builtin_mul_overflow(stages, dims[k], &stages) || stages > INT32_MAX) return false;
  int64_t rows = b->ndim >= 2 ? dims[b->ndim - 2] : 1;
  int64_t cols = dims[b->ndim - 1];
  int64_t stride = cols + pad, se, total;
  if (__builtin_mul_overflow(rows, stride, &se) || __builtin_mul_overflow(se, stages, &total) || total > INT32_MAX)
    return false;
  L->orig = (tl_buffer *)b;
  L->stages = (int)stages;
  L->rows = (int)rows;
  L->cols = (int)cols;
  L->elem_bytes = tl_dtype_bytes(b->dtype);
  if (L->elem_bytes < 1) L->elem_bytes = 1;
  L->row_stride = (int)stride;
  L->stage_elems = se;
  return true;
}

static bool make_flat(tl_module *m, tl_smem_layout *L) {
  const tl_buffer *b = L->orig;
  tl_expr **shape = tl_arena_alloc(&m->arena, sizeof(tl_expr *));
  if (!shape) return false;
  shape[0] = tl_ir_int(m, b->loc, TL_INT32, L->stage_elems * L->stages);
  if (!shape[0]) return false;
  L->flat = tl_ir_new_buffer(m, b->loc, b->name, b->dtype, TL_SCOPE_SHARED_DYN, 1, shape);
  return L->flat != NULL;
}

tl_smem_layout *tl_smem_layout_get(tl_module *m, tl_buffer *b) {
  if (!m || !is_shared(b)) return NULL;
  tl_smem_layout *L = b->layout;
  if (!L) return tl_smem_layout_set(m, b, 0, 0);
  /* The buffer's shape changed since the layout was chosen (e.g. the
   * pipelining pass added a stage dimension): the same swizzle, re-fitted. */
  tl_smem_layout now;
  memset(&now, 0, sizeof now);
  int pad = L->row_stride - L->cols;
  if (fill_geometry(&now, b, pad) && (now.stages != L->stages || now.rows != L->rows || now.cols != L->cols))
    return L->wgmma ? tl_smem_layout_set_wgmma(m, b, L->swizzle_bytes)
                    : tl_smem_layout_set(m, b, L->swizzle_bytes, pad);
  return L;
}

tl_smem_layout *tl_smem_layout_set(tl_module *m, tl_buffer *b, int swizzle_bytes, int pad_elems) {
  if (!m || !is_shared(b)) return NULL;
  if (swizzle_bytes != 0 && swizzle_bytes != 32 && swizzle_bytes != 64 && swizzle_bytes != 128) swizzle_bytes = 0;
  if (pad_elems < 0 || swizzle_bytes) pad_elems = 0;
  tl_smem_layout *L = tl_arena_alloc(&m->arena, sizeof *L);
  if (!L) return NULL;
  memset(L, 0, sizeof *L);
  if (!fill_geometry(L, b, pad_elems)) return NULL; /* dynamic, empty or too large */
  if (swizzle_bytes) {
    int E = 16 / L->elem_bytes;
    int n = swizzle_bytes / 16;
    if (E < 1 || L->elem_bytes > 16 || L->cols % (n * E) != 0 || L->rows % 8 != 0) swizzle_bytes = 0;
  }
  L->swizzle_bytes = swizzle_bytes;
  if (!make_flat(m, L)) return NULL;
  b->layout = L;
  return L;
}

tl_smem_layout *tl_smem_layout_set_wgmma(tl_module *m, tl_buffer *b, int swizzle_bytes) {
  tl_smem_layout *L = tl_smem_layout_set(m, b, swizzle_bytes, 0);
  if (!L || L->swizzle_bytes != swizzle_bytes) return NULL;
  L->wgmma = true;
  return L;
}

tl_expr *tl_smem_offset(tl_module *m, tl_loc loc, const tl_smem_layout *L, tl_expr *stage, tl_expr *row, tl_expr *col) {
  if (!m || !L || !row || !col) return NULL;
  tl_expr *off;
  if (!L->swizzle_bytes) {
    off = tl_lo_add(m, loc, tl_lo_mul(m, loc, row, L->row_stride), col);
  } else {
    int64_t E = 16 / L->elem_bytes, n = L->swizzle_bytes / 16, nE = n * E;
    tl_expr *panel = tl_lo_fdiv(m, loc, col, nE, NULL);
    tl_expr *chunk = tl_lo_fmod(m, loc, tl_lo_fdiv(m, loc, col, E, NULL), n, NULL);
    tl_expr *key = tl_lo_fmod(m, loc, tl_lo_fdiv(m, loc, row, 8 / n, NULL), n, NULL);
    tl_expr *sw = tl_ir_binary(m, loc, TL_OP_BITXOR, chunk, key);
    off = tl_lo_add(m, loc, tl_lo_mul(m, loc, panel, (int64_t)L->rows * nE), tl_lo_mul(m, loc, row, nE));
    off = tl_lo_add(m, loc, off, tl_lo_mul(m, loc, sw, E));
    off = tl_lo_add(m, loc, off, tl_lo_fmod(m, loc, col, E, NULL));
  }
  if (stage) off = tl_lo_add(m, loc, tl_lo_mul(m, loc, stage, L->stage_elems), off);
  return off;
}

/* Offset of (row + rstep*rv, col + cstep*cv) for unrolled loop variables rv
 * in [0, rn) and cv in [0, cn), written so that after unrolling each access
 * is one loop-invariant per-thread value plus an immediate: with a swizzle,
 *     (offset(row, col) ^ ((cstep*cv) % nE)) + (cstep*cv / nE) * (H*nE) + rstep*rv*nE
 * (the XOR class takes at most n values per thread, so an unrolled GEMM
 * keeps a few address registers instead of one per fragment: ptxas spilled
 * FlashAttention's otherwise).  Exact when, for every value of rv and cv:
 * rstep*rv % 8 == 0 (the XOR key depends on row % 8 only); cstep*cv is a
 * whole number of chunks whose in-panel chunk index lo = (cstep*cv % nE) / E
 * shares no bit with any in-panel chunk index of col (col_chunk_mask) and
 * lo + col_chunk_mask < n (no carry into the panel index; the mask is taken
 * mod n).  Then the XOR of
 * lo*E touches only the swizzled chunk bits of offset(row, col), every other
 * term of which is a multiple of nE or below E.  Returns NULL when the
 * conditions do not hold (the caller uses tl_smem_offset). */
tl_expr *tl_smem_offset_unrolled(tl_module *m, tl_loc loc, const tl_smem_layout *L, tl_expr *stage, tl_expr *row,
                                 int64_t rstep, tl_var *rv, int64_t rn, tl_expr *col, int64_t col_chunk_mask,
                                 int64_t cstep, tl_var *cv, int64_t cn) {
  if (!m || !L || !row || !col || !rv || !cv || rn < 1 || cn < 1 || rstep < 0 || cstep < 0) return NULL;
  tl_expr *rve = tl_ir_var(m, loc, rv), *cve = tl_ir_var(m, loc, cv);
  tl_expr *base = tl_smem_offset(m, loc, L, NULL, row, col);
  if (!base || !rve || !cve) return NULL;
  tl_expr *off;
  if (!L->swizzle_bytes) {
    off = tl_lo_add(m, loc, base, tl_lo_mul(m, loc, rve, rstep * L->row_stride));
    off = tl_lo_add(m, loc, off, tl_lo_mul(m, loc, cve, cstep));
  } else {
    int64_t E = 16 / L->elem_bytes, n = L->swizzle_bytes / 16, nE = n * E;
    if (rstep % 8 != 0 || cstep % E != 0 || col_chunk_mask < 0) return NULL;
    int64_t mask = col_chunk_mask & (n - 1); /* chunk indices are taken mod n */
    for (int64_t v = 0; v < cn; v++) {
      int64_t lo = (cstep * v % nE) / E;
      if ((lo & mask) != 0 || lo + mask >= n) return NULL;
    }
    tl_expr *cc = tl_lo_mul(m, loc, cve, cstep);
    tl_expr *x = tl_lo_fmod(m, loc, cc, nE, NULL);
    off = tl_ir_binary(m, loc, TL_OP_BITXOR, base, x);
    off = tl_lo_add(m, loc, off, tl_lo_mul(m, loc, tl_lo_fdiv(m, loc, cc, nE, NULL), (int64_t)L->rows * nE));
    off = tl_lo_add(m, loc, off, tl_lo_mul(m, loc, rve, rstep * nE));
  }
  if (off && stage) off = tl_lo_add(m, loc, tl_lo_mul(m, loc, stage, L->stage_elems), off);
  return off;
}

bool tl_smem_layout_view(const tl_buffer *b, tl_smem_layout *out) {
  if (!is_shared(b) || !out) return false;
  memset(out, 0, sizeof *out);
  const tl_smem_layout *L = b->layout;
  if (L) {
    *out = *L;
    /* re-fitted to the buffer's shape as tl_smem_layout_get would (same swizzle and padding) */
    tl_smem_layout now;
    memset(&now, 0, sizeof now);
    if (fill_geometry(&now, b, L->row_stride - L->cols)) {
      now.swizzle_bytes = L->swizzle_bytes, now.wgmma = L->wgmma, now.flat = L->flat;
      *out = now;
    }
    return true;
  }
  return fill_geometry(out, b, 0); /* what lowering attaches on first use: row-major, no padding */
}

int64_t tl_smem_offset_at(const tl_smem_layout *L, int64_t stage, int64_t row, int64_t col) {
  int64_t off;
  if (!L->swizzle_bytes) {
    off = row * L->row_stride + col;
  } else {
    int64_t E = 16 / L->elem_bytes, n = L->swizzle_bytes / 16, nE = n * E;
    off = (col / nE) * ((int64_t)L->rows * nE) + row * nE + (((col / E) % n) ^ ((row / (8 / n)) % n)) * E + col % E;
  }
  return stage * L->stage_elems + off;
}
