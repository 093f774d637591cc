/* SIMT executor: T.make_tensor views (lib/IR/tir.h tl_buffer.data;
 * docs/language.md "T.make_tensor").  On the CPU a device address is a
 * host address, and the only memory a launch may reach is its tensor
 * arguments: a view's allocation statement evaluates the address in every
 * active thread of the gang, and binds the view, for that gang until its
 * next execution, to the elements of the one tensor argument that holds
 * all of the view's elements (the view's element i at the tensor's element
 * off + i, so bounds, the global race checks of simt_grace.c and cp.async
 * see the tensor's memory).  An address outside every tensor argument, a
 * view reaching past its tensor's end, a misaligned address, a view of
 * another dtype than its tensor's, or threads of one gang holding different
 * addresses are located errors, never a silent read of other memory. */
#include "Interp/simt_internal.h"

#include <inttypes.h>
#include <string.h>

/* The address the gang's active threads hold for view b (all the same). */
static bool view_address(sx *x, const tl_buffer *b, const uint8_t *mask, uint64_t *addr) {
  sx_val v;
  if (!sx_eval_as(x, b->data, TL_INT64, mask, &v)) return false;
  int first = -1;
  for (int t = 0; t < x->T; t++) {
    if (!mask[t]) continue;
    if (first < 0) first = t;
    else if (v.v[t].i != v.v[first].i)
      return sx_fail(x,
                     "T.make_tensor '%s': threads %d and %d of one warp hold different addresses (0x%" PRIx64
                     " and 0x%" PRIx64 "); the CPU executor needs one address per warp",
                     b->name, x->tbase + first, x->tbase + t, (uint64_t)v.v[first].i, (uint64_t)v.v[t].i);
  }
  *addr = first < 0 ? 0 : (uint64_t)v.v[first].i;
  return first >= 0 || sx_fail(x, "T.make_tensor '%s' executed by no thread", b->name);
}

/* The view's shape and element strides (its own, or compact row-major);
 * *span: 1 + its last element's offset (0 when empty). */
static bool view_geometry(sx *x, const tl_buffer *b, const uint8_t *mask, sx_buf *sb, int64_t *span) {
  if (b->ndim < 1 || b->ndim > SX_MAX_DIMS)
    return sx_fail(x, "T.make_tensor '%s' has %d dimensions (1 to %d)", b->name, b->ndim, SX_MAX_DIMS);
  sb->ndim = b->ndim;
  int64_t st = 1, last = 0;
  bool empty = false;
  for (int i = b->ndim - 1; i >= 0; i--) {
    sx_val d, s;
    if (!sx_eval_as(x, b->shape[i], TL_INT64, mask, &d)) return false;
    if (b->strides && !sx_eval_as(x, b->strides[i], TL_INT64, mask, &s)) return false;
    int64_t n = d.v[0].i, stride = b->strides ? s.v[0].i : st;
    if (n < 0 || n > ((int64_t)1 << 40) || stride < 0 || stride > ((int64_t)1 << 40))
      return sx_fail(x, "T.make_tensor '%s': dimension %d of size %lld and stride %lld", b->name, i, (long long)n,
                     (long long)stride);
    sb->shape[i] = n;
    sb->stride[i] = stride;
    empty |= n == 0;
    last += (n > 0 ? n - 1 : 0) * stride;
    st *= n > 0 ? n : 1;
  }
  *span = empty ? 0 : last + 1;
  return true;
}

/* The tensor argument whose bytes hold [addr, addr + bytes), or NULL. */
static sx_buf *owner_of(sx *x, uint64_t addr, int64_t bytes) {
  for (int i = 0; i < x->f->nparams; i++) {
    if (x->f->params[i].kind != TL_PARAM_TENSOR) continue;
    sx_buf *p = tl_map_get(&x->gbufs, x->f->params[i].buffer, NULL);
    if (!p || !p->data) continue;
    uint64_t lo = (uint64_t)(uintptr_t)p->data, hi = lo + (uint64_t)(p->elems * p->eb);
    if (addr >= lo && addr <= hi && (uint64_t)bytes <= hi - addr) return p;
  }
  return NULL;
}

bool sx_exec_view(sx *x, const tl_buffer *b, const uint8_t *mask) {
  uint64_t addr = 0;
  sx_buf *sb = tl_arena_alloc(&x->k->arena, sizeof *sb); /* the block's: the binding lives until the block ends */
  if (!sb) return sx_fail(x, "out of memory in the SIMT executor");
  memset(sb, 0, sizeof *sb);
  sb->b = b;
  sb->space = SX_GLOBAL;
  sb->et = scalar_of(b->dtype);
  sb->eb = (int)tl_dtype_bytes(sb->et);
  int64_t span = 0;
  if (lanes_of(b->dtype) != 1 || sb->eb < 1)
    return sx_fail(x, "T.make_tensor '%s' of dtype %s is not supported by the CPU executor", b->name,
                   tl_dtype_name(b->dtype));
  if (!view_address(x, b, mask, &addr) || !view_geometry(x, b, mask, sb, &span)) return false;
  sx_buf *p = owner_of(x, addr, span * sb->eb);
  if (!p) {
    if (owner_of(x, addr, 0))
      return sx_fail(x, "T.make_tensor '%s': its %lld elements from address 0x%" PRIx64 " reach past the end of '%s'",
                     b->name, (long long)span, addr, owner_of(x, addr, 0)->b->name);
    return sx_fail(x,
                   "T.make_tensor '%s': address 0x%" PRIx64
                   " (thread %d) points into no tensor argument of this "
                   "launch (on the CPU a view may only reach the launch's tensors)",
                   b->name, addr, x->tbase);
  }
  int64_t off = (int64_t)(addr - (uint64_t)(uintptr_t)p->data);
  if (!tl_dtype_eq(p->et, sb->et))
    return sx_fail(x, "T.make_tensor '%s' of %s points into '%s' of %s: the CPU executor does not reinterpret", b->name,
                   tl_dtype_name(sb->et), p->b->name, tl_dtype_name(p->et));
  if (off % sb->eb)
    return sx_fail(x, "T.make_tensor '%s': address 0x%" PRIx64 " is not a multiple of its %d-byte element in '%s'",
                   b->name, addr, sb->eb, p->b->name);
  sb->elems = span;
  sb->base = off; /* the alignment checks of vector accesses and cp.async count it */
  sb->data = p->data + off;
  sb->gsh = sx_gsh_at(p, off / sb->eb);
  return tl_map_put(&x->vbufs, b, sb) || sx_fail(x, "out of memory in the SIMT executor");
}
