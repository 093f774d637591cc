/* The TMA copies of a warp-specialized T.Pipelined loop (part of
 * warp_specialize.c's pass, split out for size): the conditions under which
 * a T.copy(global tensor region -> shared tile) becomes TMA loads of one
 * producer thread, and the box, swizzle span and panels it gets.
 * Requires: a verified tile-IR statement; guarantees: a ws_load whose box
 * and image obey TMA's rules (cuTensorMapEncodeTiled: strides multiples of
 * 16 bytes, the innermost box 16-byte aligned; the 32/64/128-byte swizzle
 * spans, docs/hopper.md "When a loop takes it") for the tile's element size
 * (2 bytes for float16/bfloat16, 1 for float8: lib/Support/Hopper/wgmma.h
 * tl_wgmma_type_of, docs/hopper.md "float8 tiles"), or the reason why not. */
#include <string.h>

#include "Lower/Hopper/ws_internal.h"
#include "Lower/lower_internal.h"
#include "Support/Hopper/wgmma.h"

const char *tl_ws_match_load(const tl_primfunc *f, const tl_stmt *s, ws_load *ld) {
  memset(ld, 0, sizeof *ld);
  if (s->kind != TL_STMT_TILE || s->u.tile.op != TL_TILE_COPY || s->u.tile.nargs != 2)
    return "the loop body has a statement other than T.copy and one T.gemm";
  const tl_region *sr = &s->u.tile.args[0].region, *dr = &s->u.tile.args[1].region;
  if (s->u.tile.args[0].kind != TL_OPND_REGION || s->u.tile.args[1].kind != TL_OPND_REGION || !sr->buffer ||
      !dr->buffer || sr->buffer->scope != TL_SCOPE_GLOBAL ||
      (dr->buffer->scope != TL_SCOPE_SHARED && dr->buffer->scope != TL_SCOPE_SHARED_DYN))
    return "a T.copy in the loop is not global -> shared";
  int64_t no_tma = 0;
  if (s->u.tile.attrs && s->u.tile.attrs[1] && tl_expr_is_const_int(s->u.tile.attrs[1], &no_tma) && no_tma)
    return "a T.copy in the loop has disable_tma=True";
  tl_buffer *src = sr->buffer, *X = dr->buffer;
  if (tl_buffer_is_view(src)) /* its address is in device memory: the host cannot encode a tensor map for it */
    return "a copy's source is a T.make_tensor view, whose address is known only on the device (no TMA descriptor "
           "can be made on the host)";
  if (!tl_lo_is_param(f, src) || src->strides) return "a copy's source is not a contiguous tensor parameter";
  if (tl_dtype_is_int4(X->dtype))
    return "its tiles are int4/uint4, which wgmma has no type for on sm_90a: the GEMM runs on "
           "mma.sync.m16n8k64 .s4/.u4 (lib/Lower/pack_int4.c)";
  if (!tl_dtype_eq(src->dtype, X->dtype) || !tl_wgmma_type_of(X->dtype).name)
    return "a copied tile is not float16/bfloat16/float8_e4m3/float8_e5m2 (wgmma's input types)";
  int eb = tl_wgmma_type_of(X->dtype).bytes, E = 16 / eb; /* elements per 16 bytes */
  int64_t rows, cols;
  if (X->ndim != 2 || !tl_expr_is_const_int(X->shape[0], &rows) || !tl_expr_is_const_int(X->shape[1], &cols))
    return "a copied tile is not a static 2-D shared buffer";
  int r = src->ndim;
  if (r < 2 || r > 5 || sr->ndim != r) return "a copy's source region is not of the tensor's rank 2..5";
  /* The tile's rows are any dimension rd before the last (the outermost
   * of a (rows, 1, ..., 1, cols) tail: BSHD's (1, rows, 1, cols)), its
   * columns the last; every other extent is 1, a box extent of 1. */
  int rd = r - 2;
  for (int k = r - 2; k >= 0; k--) {
    int64_t e;
    if (!tl_expr_is_const_int(sr->extent[k], &e) || e != 1) {
      rd = k;
      break;
    }
  }
  for (int k = 0; k < r; k++) {
    int64_t e;
    if (!tl_expr_is_const_int(sr->extent[k], &e) || e != (k == r - 1 ? cols : k == rd ? rows : 1))
      return "a copy's source region is not (1, ..., rows, 1, ..., cols) of its tile (the columns the tensor's "
             "last dimension, every other extent 1)";
  }
  if (!tl_lo_whole_region(dr)) return "a copy writes part of its tile";
  /* TMA: the innermost coordinate a multiple of 16 bytes (docs/simt-ir.md: else the GPU faults) */
  if (!tl_expr_divisible(sr->min[r - 1], E, NULL))
    return eb == 2 ? "a copy's innermost coordinate is not provably a multiple of 8 elements (TMA's 16-byte rule)"
                   : "a copy's innermost coordinate is not provably a multiple of 16 elements (TMA's 16-byte rule)";
  /* TMA: every stride but the innermost a multiple of 16 bytes (static;
   * cuTensorMapEncodeTiled's rule).  The tensor is contiguous, so each is
   * a multiple of the innermost row's, whichever dimension holds the rows. */
  int64_t stride = eb;
  for (int k = r - 1; k >= 1; k--) {
    int64_t d;
    if (!tl_expr_is_const_int(src->shape[k], &d)) return "a copy's source has a dynamic inner dimension";
    stride *= d;
    if (stride % 16 != 0) return "a copy's source rows are not a multiple of 16 bytes (TMA's stride rule)";
  }
  /* the swizzle span is the row's bytes (32, 64, 128), else 128-byte panels
   * of 128 / eb elements (64 16-bit, 128 8-bit) */
  int64_t cb = cols * eb;
  int sw = 128;
  int64_t nE = 128 / eb;
  if (cb == 32 || cb == 64 || cb == 128) sw = (int)cb, nE = cols;
  else if (cb <= 128 || cb % 128 != 0)
    return eb == 2 ? "a tile's contiguous width is not 16, 32, 64 or a multiple of 64 elements (TMA's 32/64/128-byte "
                     "swizzle spans)"
                   : "a tile's contiguous width is not 32, 64, 128 or a multiple of 128 elements (TMA's 32/64/128-byte "
                     "swizzle spans of 8-bit elements)";
  if (rows % 8 != 0 || rows > 256) return "a tile's rows are not a multiple of 8 up to 256";
  *ld = (ws_load){.s = s, .src = src, .X = X, .rows = rows, .cols = cols, .rd = rd, .sw = sw, .nE = nE, .eb = eb};
  return NULL;
}
