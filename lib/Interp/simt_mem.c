/* SIMT executor: buffer storage lookup and the element accesses of loads
 * and stores (docs/simt-ir.md): flat offsets from n-d indices with bounds
 * checked per dimension, the alignment of contiguous vector accesses
 * (lanes * element bytes, capped at 16 as codegen aligns them), and the
 * shared-memory protocol checks of simt_race.c for every shared byte and
 * the global race checks of simt_grace.c for every global element. */
#include "Interp/simt_internal.h"

#include <string.h>

sx_buf *sx_buffer(sx *x, const tl_buffer *b) {
  sx_buf *sb = tl_buffer_is_view(b) ? tl_map_get(&x->vbufs, b, NULL) : NULL;
  if (!sb && x->k) sb = tl_map_get(&x->k->bufs, b, NULL);
  if (!sb) sb = tl_map_get(&x->gbufs, b, NULL);
  if (!sb) sx_fail(x, "buffer '%s' is used outside its allocation", b->name);
  return sb;
}

static const char *space_name(const sx_buf *sb) {
  return sb->space == SX_GLOBAL ? "global" : sb->space == SX_SHARED ? "shared" : "local";
}

/* Flat element offsets of buf[idx] for an access of `lanes` lanes, one per
 * (thread, lane); -1 for inactive threads.  Checks bounds per dimension and
 * the alignment of contiguous vector accesses. */
static bool compute_access(sx *x, const tl_buffer *buf, int n, tl_expr *const *idx, int lanes, const uint8_t *mask,
                           bool store, sx_buf **psb, int64_t **pflat) {
  sx_buf *sb = sx_buffer(x, buf);
  if (!sb) return false;
  if (n != sb->ndim || n < 1)
    return sx_fail(x, "buffer '%s' has %d dimensions but is indexed with %d", buf->name, sb->ndim, n);
  const tl_expr *last = idx[n - 1];
  int64_t st = 0;
  bool contiguous = lanes > 1 && last->kind == TL_EXPR_RAMP && last->dtype.lanes == lanes &&
                    tl_expr_is_const_int(last->u.ramp.stride, &st) && st == 1 && sb->stride[n - 1] == 1;
  for (int i = 0; contiguous && i < n - 1; i++) contiguous = idx[i]->dtype.lanes <= 1;
  int64_t *flat = sx_scratch(x, sizeof(int64_t) * (size_t)x->T * (size_t)lanes);
  if (!flat) return false;
  for (int i = 0; i < n; i++) {
    sx_val iv;
    tl_dtype it = idx[i]->dtype;
    if (!tl_dtype_is_int(it) && it.code != TL_TYPE_BOOL)
      return sx_fail(x, "buffer index must be an integer, not %s", tl_dtype_name(it));
    int il = lanes_of(it);
    if (lanes == 1 && il != 1) return sx_fail(x, "vector index into buffer '%s' for a scalar access", buf->name);
    if (il != 1 && il != lanes) return sx_fail(x, "index of %d lanes in a %d-lane access", il, lanes);
    if (!sx_eval_as(x, idx[i], with_lanes(TL_INT64, il), mask, &iv)) return false;
    for (int t = 0; t < x->T; t++) {
      if (!mask[t]) continue;
      for (int l = 0; l < lanes; l++) {
        int64_t v = iv.v[(size_t)t * il + (il == 1 ? 0 : l)].i;
        if (v < 0 || v >= sb->shape[i]) {
          if (n == 1)
            return sx_fail(x, "out-of-bounds %s of %s buffer '%s': index %lld (size %lld) in thread %d",
                           store ? "store" : "load", space_name(sb), buf->name, (long long)v, (long long)sb->shape[i],
                           x->tbase + t);
          return sx_fail(x,
                         "out-of-bounds %s of %s buffer '%s': index %lld of dimension %d (size %lld) "
                         "in thread %d",
                         store ? "store" : "load", space_name(sb), buf->name, (long long)v, i, (long long)sb->shape[i],
                         x->tbase + t);
        }
        int64_t *f = &flat[(size_t)t * lanes + l];
        *f = (i == 0 ? 0 : *f) + v * sb->stride[i];
      }
    }
  }
  for (int t = 0; t < x->T; t++) {
    if (!mask[t]) {
      for (int l = 0; l < lanes; l++) flat[(size_t)t * lanes + l] = -1;
      continue;
    }
    for (int l = 0; l < lanes; l++) {
      int64_t f = flat[(size_t)t * lanes + l];
      if (f < 0 || f >= sb->elems)
        return sx_fail(x, "out-of-bounds %s of %s buffer '%s': element %lld of %lld in thread %d",
                       store ? "store" : "load", space_name(sb), buf->name, (long long)f, (long long)sb->elems,
                       x->tbase + t);
    }
    if (contiguous) {
      int64_t vb = (int64_t)sb->eb * lanes;
      if ((vb & (vb - 1)) == 0) {
        int64_t al = vb > 16 ? 16 : vb;
        int64_t addr = (sb->space != SX_LOCAL ? sb->base : 0) + flat[(size_t)t * lanes] * sb->eb;
        if (addr % al)
          return sx_fail(x, "misaligned %lld-byte vector %s of %s buffer '%s' at element %lld in thread %d",
                         (long long)vb, store ? "store" : "load", space_name(sb), buf->name,
                         (long long)flat[(size_t)t * lanes], x->tbase + t);
      }
    }
  }
  *psb = sb;
  *pflat = flat;
  return true;
}

bool sx_eval_load(sx *x, const tl_expr *e, const uint8_t *mask, sx_val *out) {
  const tl_buffer *buf = e->u.load.buffer;
  int lanes = lanes_of(e->dtype);
  sx_buf *sb;
  int64_t *flat;
  if (!compute_access(x, buf, e->u.load.n, e->u.load.indices, lanes, mask, false, &sb, &flat)) return false;
  if (!sx_alloc_val(x, out, with_lanes(sb->et, lanes))) return false;
  for (int t = 0; t < x->T; t++) {
    if (!mask[t]) continue;
    for (int l = 0; l < lanes; l++) {
      int64_t f = flat[(size_t)t * lanes + l];
      if (sb->space == SX_SHARED && !sx_smem_read(x, sb, f * sb->eb, sb->eb, x->tbase + t)) return false;
      if (sb->gsh && !sx_gmem_read(x, sb, f, x->tbase + t)) return false;
      if (x->k && x->k->nwgr && sb->space == SX_LOCAL && !sx_wgmma_check_reg(x, sb, f, t, false)) return false;
      out->v[(size_t)t * lanes + l] = sx_el_load(sb->et, sx_elem_ptr(sb, x->tbase + t, f));
    }
  }
  return true;
}

bool sx_exec_store(sx *x, const tl_stmt *s, const uint8_t *mask) {
  const tl_buffer *buf = s->u.store.buffer;
  const tl_expr *ve = s->u.store.value;
  int lanes = lanes_of(ve->dtype);
  for (int i = 0; i < s->u.store.n; i++)
    if (lanes_of(s->u.store.indices[i]->dtype) > lanes) lanes = lanes_of(s->u.store.indices[i]->dtype);
  sx_val v;
  tl_dtype et = scalar_of(buf->dtype);
  if (!sx_eval_as(x, ve, with_lanes(et, lanes), mask, &v)) return false;
  sx_buf *sb;
  int64_t *flat;
  if (!compute_access(x, buf, s->u.store.n, s->u.store.indices, lanes, mask, true, &sb, &flat)) return false;
  for (int t = 0; t < x->T; t++) {
    if (!mask[t]) continue;
    for (int l = 0; l < lanes; l++) {
      int64_t f = flat[(size_t)t * lanes + l];
      if (sb->space == SX_SHARED && !sx_smem_write(x, sb, f * sb->eb, sb->eb, x->tbase + t, -1)) return false;
      if (sb->gsh && !sx_gmem_write(x, sb, f, x->tbase + t, &v.v[(size_t)t * lanes + l])) return false;
      if (x->k && x->k->nwgr && sb->space == SX_LOCAL && !sx_wgmma_check_reg(x, sb, f, t, true)) return false;
      sx_el_store(sb->et, sx_elem_ptr(sb, x->tbase + t, f), v.v[(size_t)t * lanes + l]);
    }
  }
  return true;
}
