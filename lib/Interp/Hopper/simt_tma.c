/* SIMT executor: the TMA tensor copies T.ptx_tma_load / T.ptx_tma_store
 * (docs/simt-ir.md "TMA tensor copies"; PTX ISA §9.7.9.27
 * cp.async.bulk.tensor, tile mode; the swizzle modes of the tensor map,
 * CUDA driver API cuTensorMapEncodeTiled).
 *
 * The executor needs no tensor map: it copies from the bound tensor
 * directly.  The image of a box in shared memory: the box's elements dense
 * in row-major order (row pitch = inner box extent x element bytes), each
 * byte at tl_smem_swizzle(its address) where the address is relative
 * to the 1024-aligned dynamic shared block; elements outside the tensor
 * (negative coordinates or past the end) read as zero bytes.
 *  - load: each active thread issues one copy; the async proxy performs it
 *    at a scheduling point (simt_mbar.c's queue of bulk copies, like
 *    T.ptx_cp_async_bulk): the image's bytes land stamped as async-proxy
 *    writes of the mbarrier's phase (simt_race.c), then complete_tx(box
 *    bytes, the zero-filled ones included).
 *  - store: performed at issue, as T.ptx_cp_async_bulk_store: the shared
 *    image is read through the async proxy (the fence.proxy.async rule),
 *    in-bounds elements are written to the tensor, out-of-bounds ones are
 *    dropped, and the source stays reserved until a bulk wait_group of the
 *    issuing thread covers its group.
 * Arguments are decoded and checked by tl_tma_decode (lib/IR/Hopper/tma.c); a
 * tensor whose strides the GPU's tensor map cannot express (not multiples
 * of 16 bytes) is an error here too, so that the CPU run does not pass what
 * the GPU run refuses. */
#include "Interp/simt_internal.h"
#include "Support/Hopper/wgmma.h"

#include <stdio.h>
#include <string.h>

/* A queued tensor load (block arena). */
typedef struct sx_tma_box {
  const sx_buf *src; /* the global tensor */
  int rank, swizzle;
  int box[TL_TMA_MAX_RANK];
  int64_t coord[TL_TMA_MAX_RANK]; /* box origin, outermost first */
  int64_t smem_addr;              /* byte address of the image start in the shared block */
} sx_tma_box;

/* The global element of logical image element `el`, or NULL when outside the tensor. */
static const uint8_t *box_elem(const sx_tma_box *b, int64_t el) {
  int64_t off = 0;
  for (int d = b->rank - 1; d >= 0; d--) {
    int64_t i = el % b->box[d], gi = b->coord[d] + i;
    el /= b->box[d];
    if (gi < 0 || gi >= b->src->shape[d]) return NULL;
    off += gi * b->src->stride[d];
  }
  return b->src->data + off * b->src->eb;
}

static int64_t box_bytes(const sx_tma_box *b) {
  int64_t n = b->src->eb;
  for (int d = 0; d < b->rank; d++) n *= b->box[d];
  return n;
}

/* The byte offset in buffer dst of 16-byte image chunk i (its physical place). */
static int64_t chunk_at(const sx_tma_box *b, const sx_buf *dst, int64_t i) {
  return tl_smem_swizzle(b->smem_addr + 16 * i, b->swizzle) - dst->base;
}

/* Decodes the call and fills the parts common to load and store for thread
 * vector index t; the shared buffer in *dst. */
static bool decode(sx *x, const tl_expr *e, const uint8_t *mask, tl_tma_call *tc, sx_buf **dst, sx_buf **src,
                   sx_val *soff, sx_val *coords) {
  tl_loc loc;
  char msg[256];
  if (!tl_tma_decode(x->f, e, tc, &loc, msg, sizeof msg)) return sx_fail(x, "%s", msg);
  *dst = sx_buffer(x, tc->smem->u.buffer);
  *src = *dst ? sx_buffer(x, tc->map.tensor) : NULL;
  if (!*src) return false;
  if ((*dst)->space != SX_SHARED || (*src)->space != SX_GLOBAL)
    return sx_fail(x, "T.%s: internal error: buffer spaces", tl_intrinsics[e->u.call.op].name);
  /* the tensor-map rule the GPU's encode would refuse (lib/Runtime/Hopper/tma.c): refused here too */
  for (int d = 0; d + 1 < tc->map.rank; d++)
    if ((*src)->stride[d] * (*src)->eb % 16)
      return sx_fail(x,
                     "T.%s: tensor '%s' has a stride of %lld bytes in dimension %d, not a multiple of 16 "
                     "(cuTensorMapEncodeTiled refuses its tensor map)",
                     tl_intrinsics[e->u.call.op].name, tc->map.tensor->name,
                     (long long)((*src)->stride[d] * (*src)->eb), d);
  if (!sx_eval_as(x, tc->smem_off, TL_INT64, mask, soff)) return false;
  for (int d = 0; d < tc->map.rank; d++)
    if (!sx_eval_as(x, tc->coord[d], TL_INT64, mask, &coords[d])) return false;
  return true;
}

/* Thread t's box; checks the image's alignment and that every physical
 * chunk lies in dst. */
static bool make_box(sx *x, const tl_expr *e, const tl_tma_call *tc, const sx_buf *dst, const sx_buf *src,
                     const sx_val *soff, const sx_val *coords, int t, sx_tma_box *b) {
  const char *name = tl_intrinsics[e->u.call.op].name;
  memset(b, 0, sizeof *b);
  b->src = src;
  b->rank = tc->map.rank;
  b->swizzle = tc->map.swizzle;
  memcpy(b->box, tc->map.box, sizeof b->box);
  for (int d = 0; d < b->rank; d++) b->coord[d] = coords[d].v[t].i;
  int64_t el = soff->v[t].i;
  b->smem_addr = dst->base + el * dst->eb;
  if (el < 0 || el >= dst->elems)
    return sx_fail(x, "T.%s: element %lld of shared buffer '%s' (size %lld) is out of bounds in thread %d", name,
                   (long long)el, dst->b->name, (long long)dst->elems, x->tbase + t);
  if (b->smem_addr % 128)
    return sx_fail(x, "T.%s: the shared image at '%s'[%lld] (byte %lld) is not 128-byte aligned", name, dst->b->name,
                   (long long)el, (long long)b->smem_addr);
  /* measured on a GPU (docs/performance.md): an innermost coordinate whose byte
   * offset is not a multiple of 16 (e.g. 8x32 f16 boxes at column 10) makes
   * the copy fault with CUDA_ERROR_ILLEGAL_INSTRUCTION; multiples of 16
   * bytes, negative ones included, work */
  int64_t inner = b->coord[b->rank - 1] * src->eb;
  if (inner % 16 != 0)
    return sx_fail(x,
                   "T.%s: the innermost coordinate %lld of tensor '%s' is %lld bytes from its row start, not a "
                   "multiple of 16 (the GPU faults: illegal instruction) in thread %d",
                   name, (long long)b->coord[b->rank - 1], src->b->name, (long long)inner, x->tbase + t);
  int64_t n = box_bytes(b) / 16, size = dst->elems * dst->eb;
  for (int64_t i = 0; i < n; i++) {
    int64_t at = chunk_at(b, dst, i);
    if (at < 0 || at + 16 > size)
      return sx_fail(x, "T.%s: the %lld-byte box image at '%s'[%lld] runs past the buffer's %lld bytes", name,
                     (long long)(n * 16), dst->b->name, (long long)el, (long long)size);
  }
  return true;
}

static bool tma_load(sx *x, const tl_expr *e, const uint8_t *mask) {
  tl_tma_call tc;
  sx_buf *dst, *src;
  sx_val soff, boff, coords[TL_TMA_MAX_RANK];
  if (!decode(x, e, mask, &tc, &dst, &src, &soff, coords) || !sx_eval_as(x, tc.bar_off, TL_INT64, mask, &boff))
    return false;
  for (int t = 0; t < x->T; t++) {
    if (!mask[t]) continue;
    sx_tma_box *b = tl_arena_alloc(&x->k->arena, sizeof *b);
    if (!b) return sx_fail(x, "out of memory in the SIMT executor");
    if (!make_box(x, e, &tc, dst, src, &soff, coords, t, b)) return false;
    int j = sx_mbar_index(x, e, 2, &boff, t);
    if (j < 0) return false;
    sx_bulk c = {.tma = b,
                 .dst = dst,
                 .dst_byte = b->smem_addr - dst->base,
                 .bytes = box_bytes(b),
                 .mbar = j,
                 .thr = x->tbase + t};
    if (!sx_bulk_enqueue(x, &c)) return false;
  }
  return true;
}

bool sx_tma_perform(sx *x, const sx_bulk *c, int unit, uint32_t clk) {
  const sx_tma_box *b = c->tma;
  int eb = b->src->eb;
  int64_t n = c->bytes / 16;
  for (int64_t i = 0; i < n; i++) {
    sx_bulk piece = *c;
    piece.dst_byte = chunk_at(b, c->dst, i);
    piece.bytes = 16;
    if (!sx_smem_write_async(x, &piece, unit, clk)) return false;
    uint8_t *to = c->dst->data + piece.dst_byte;
    for (int k = 0; k < 16; k += eb) {
      const uint8_t *from = box_elem(b, (16 * i + k) / eb);
      if (from) memcpy(to + k, from, (size_t)eb);
      else memset(to + k, 0, (size_t)eb);
    }
  }
  return true;
}

static bool tma_store(sx *x, const tl_expr *e, const uint8_t *mask) {
  tl_tma_call tc;
  sx_buf *dst, *src; /* dst: the shared image (the source of the copy), src: the tensor */
  sx_val soff, coords[TL_TMA_MAX_RANK];
  if (!decode(x, e, mask, &tc, &dst, &src, &soff, coords)) return false;
  sx_blk *k = x->k;
  for (int t = 0; t < x->T; t++) {
    if (!mask[t]) continue;
    int tid = x->tbase + t;
    sx_tma_box b;
    if (!make_box(x, e, &tc, dst, src, &soff, coords, t, &b)) return false;
    int64_t n = box_bytes(&b) / 16;
    for (int64_t i = 0; i < n; i++) {
      int64_t at = chunk_at(&b, dst, i);
      if (!sx_smem_read_async(x, dst, at, 16, tid, "T.ptx_tma_store")) return false;
      for (int j = 0; j < 16; j += src->eb) {
        uint8_t *to = (uint8_t *)box_elem(&b, (16 * i + j) / src->eb);
        if (to) memcpy(to, dst->data + at + j, (size_t)src->eb);
      }
      if (!tl_vec_grow_((void **)&k->bread, &k->capbread, (size_t)k->nbread + 1, sizeof *k->bread))
        return sx_fail(x, "out of memory in the SIMT executor");
      k->bread[k->nbread++] = (sx_bulk_read){dst->base + at, dst->base + at + 16, tid, k->async[tid].bulk_committed};
    }
  }
  return true;
}

bool sx_tma_stmt(sx *x, int op, const tl_expr *e, const uint8_t *mask) {
  return op == TL_INTRIN_PTX_TMA_STORE ? tma_store(x, e, mask) : tma_load(x, e, mask);
}
