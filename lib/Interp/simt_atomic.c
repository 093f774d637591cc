/* The SIMT executor's atomics on global and shared memory (lib/Interp): T.ptx_atomic_add,
 * T.ptx_atomic_max and T.ptx_atomic_min (docs/simt-ir.md "Atomics"), applied
 * in thread order as the hardware applies one at a time; split from
 * simt_exec.c, whose eval_call dispatches here. */
#include <math.h>

#include "Interp/simt_internal.h"

/* What T.ptx_atomic_max (mx) / _min stores over old given v of dtype t:
 * floats as fmax / fmin (a NaN operand loses, as LLVM's maxnum / minnum
 * compare-and-swap loop), unsigned ints compared unsigned, exact. */
static sx_el atomic_minmax(bool mx, tl_dtype t, sx_el old, sx_el v) {
  if (tl_dtype_is_float(t)) {
    sx_el r = old;
    r.f = mx ? fmax(old.f, v.f) : fmin(old.f, v.f);
    return r;
  }
  bool gt = t.code == TL_TYPE_UINT ? (uint64_t)v.i > (uint64_t)old.i : v.i > old.i;
  return gt == mx && v.i != old.i ? v : old;
}

/* T.ptx_atomic_add(dst, off, value, return_prev) (docs/simt-ir.md
 * "Atomics"), and T.ptx_atomic_max / _min (atomic_minmax): the active threads apply their additions one after another in
 * thread order (lanes in order), each exactly as the hardware does one:
 * old = dst[off + l]; dst[off + l] = old + value[l] rounded once to dst's
 * dtype (red/atom .add.f32 / .noftz.f16 / .noftz.bf16 round to nearest even
 * and keep subnormals; integers wrap).  The value is old per lane. */
bool sx_eval_atomic(sx *x, const tl_expr *e, const uint8_t *mask, sx_val *out) {
  if (e->u.call.n != 4)
    return sx_fail(x, "T.%s takes 4 arguments, got %d", tl_intrinsics[e->u.call.op].name, e->u.call.n);
  tl_expr *const *args = e->u.call.args;
  if (!args[0] || args[0]->kind != TL_EXPR_BUFFER || !args[0]->u.buffer)
    return sx_fail(x, "T.ptx_atomic_add: argument 1 (dst) must be a buffer");
  sx_buf *sb = sx_buffer(x, args[0]->u.buffer);
  if (!sb) return false;
  if (sb->space != SX_GLOBAL && sb->space != SX_SHARED)
    return sx_fail(x, "T.ptx_atomic_add: dst '%s' must be a global tensor or a shared buffer", sb->b->name);
  tl_dtype t = e->dtype;
  int L = lanes_of(t);
  if (!tl_dtype_eq(scalar_of(t), sb->et) || sb->et.code == TL_TYPE_BOOL)
    return sx_fail(x, "T.ptx_atomic_add: a %s value added to '%s' of %s", tl_dtype_name(t), sb->b->name,
                   tl_dtype_name(sb->et));
  sx_val off, v;
  if (!sx_eval_as(x, args[1], TL_INT64, mask, &off) || !sx_eval_as(x, args[2], t, mask, &v) || !sx_alloc_val(x, out, t))
    return false;
  for (int th = 0; th < x->T; th++) {
    if (!mask[th]) continue;
    int64_t base = off.v[th].i;
    if (L > 1 && (base % L) != 0)
      return sx_fail(x, "misaligned %d-lane atomic of global buffer '%s' at element %lld in thread %d", L, sb->b->name,
                     (long long)base, x->tbase + th);
    for (int l = 0; l < L; l++) {
      int64_t f = base + l;
      if (f < 0 || f >= sb->elems)
        return sx_fail(x, "out-of-bounds atomic of global buffer '%s': element %lld of %lld in thread %d", sb->b->name,
                       (long long)f, (long long)sb->elems, x->tbase + th);
      if (sb->gsh && !sx_gmem_write(x, sb, f, x->tbase + th, NULL)) return false;
      /* shared: checked as a read (a plain write of another thread since the last barrier races
       * with it); not recorded as a write, so that the block's atomics do not race each other */
      if (sb->space == SX_SHARED && !sx_smem_read(x, sb, f * sb->eb, sb->eb, x->tbase + th)) return false;
      uint8_t *p = sx_elem_ptr(sb, th, f);
      sx_el old = sx_el_load(sb->et, p), nv, add = v.v[(size_t)th * L + l];
      if (e->u.call.op != TL_INTRIN_PTX_ATOMIC_ADD)
        nv = atomic_minmax(e->u.call.op == TL_INTRIN_PTX_ATOMIC_MAX, sb->et, old, add);
      else if (tl_dtype_is_float(sb->et)) nv.f = sx_round_to(old.f + add.f, sb->et);
      else nv.i = sx_wrap(sb->et, (int64_t)((uint64_t)old.i + (uint64_t)add.i));
      sx_el_store(sb->et, p, nv);
      out->v[(size_t)th * L + l] = old;
    }
  }
  return true;
}
