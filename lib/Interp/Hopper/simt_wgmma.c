/* SIMT executor: Hopper's warpgroup statements (docs/simt-ir.md "wgmma"):
 * T.ptx_wgmma_fence / commit / wait / ss / rs and T.ptx_setmaxnreg.
 *
 * A warpgroup is 4 consecutive warps starting at a warp index that is a
 * multiple of 4 (PTX ISA §9.7.15, "warpgroup").  The executor's unit of scheduling is
 * a warp (simt_sched.c), so each warp performs its own quarter of a
 * warpgroup-collective operation: all 32 lanes must be active and the
 * warpgroup must lie inside the block.
 *  - wgmma.mma_async (ss: A and B in shared memory; rs: A in registers) is
 *    performed at issue, each warp computing its 16 rows of the 64 (warp
 *    q = (thread % 128) / 32 of the warpgroup owns rows 16q .. 16q + 15);
 *    wgmma.fence / commit_group / wait_group then have nothing left to do
 *    (wait checks its arguments and the accumulator range).  PTX leaves
 *    the accumulators undefined between the mma and the wait; this model
 *    gives them their final values at once.
 *  - Shared operands (a wgmma input type, lib/Support/Hopper/wgmma.h
 *    tl_wgmma_type_of: float16 / bfloat16, K = 16 per instruction, or
 *    float8_e4m3 / float8_e5m2, K = 32, K-major only, A and B either): the
 *    executor builds each descriptor from the operand's address (buffer
 *    smem offset + element bytes * element offset, 16-byte aligned) and
 *    constants with lib/Support/Hopper/wgmma.h's tl_wgmma_desc, decodes it again
 *    (tl_wgmma_decode: the 14-bit fields as the hardware sees them) and
 *    reads element (i, k) at tl_smem_swizzle(tl_wgmma_elem_addr(...)), the
 *    canonical layouts of PTX ISA §9.7.15.5.1 / CUTLASS.  Every byte read
 *    must lie in the operand's buffer and is checked as an async-proxy read
 *    (simt_race.c's sx_smem_read_async: written by a bulk copy whose phase a
 *    wait observed, or by ordinary stores that the writer followed with
 *    T.ptx_fence_proxy_async() and a synchronisation), like the source of
 *    T.ptx_cp_async_bulk_store.  The reads last until the wait: each
 *    operand's byte span (lowest to highest byte read) stays pending with
 *    the warp's open wgmma group (commit_group closes it; wait_group n
 *    completes all but the n most recent) and any write into a pending span
 *    (a store, a cp.async, a bulk copy landing) is an error; when a wait
 *    completes the group, the span's bytes are recorded as read by lane 0
 *    of the warp at that point, so a later write needs the usual
 *    happens-before with the waiting warp (a write-after-read race
 *    otherwise).  Registers likewise: a wgmma's accumulator elements
 *    (which it writes) and rs's A fragment elements (which it reads) stay
 *    pending with its group; until a wait covers it, a load or store of a
 *    pending accumulator element, or a store into a pending A element, by
 *    a thread of the warp is an error (PTX ISA §9.7.15.5: the accumulators
 *    are undefined until the wait, the A registers must not change).
 *  - Arithmetic: tl_mma_step per element, the model of T.ptx_mma: the K
 *    (16 or 32) products exact in float64 (float8 values decoded exactly), summed in increasing k, plus the old
 *    accumulator (not read when scale_d is 0: D = A·B), rounded once to C's
 *    dtype.  Accumulator register r < n/2 of thread T (g = lane / 4,
 *    t = lane % 4) holds D(16q + g + 8((r >> 1) & 1), 8(r >> 2) + 2t +
 *    (r & 1)) (docs/hopper.md "Accumulators"); f16 accumulators use the same element
 *    map (codegen packs pairs into b32 registers).  rs's A fragment is
 *    A[a_off .. a_off + 8) = a0.lo .. a3.hi of the mma.sync m16n8k16 A map
 *    over the warp's 16 rows (docs/layouts.md).
 *  - setmaxnreg: the arguments are checked (count 24..256, a multiple of 8;
 *    inc a bool constant); nothing else happens (registers are not modelled). */
#include "Interp/simt_internal.h"

#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "Support/Hopper/wgmma.h"

#define WG_KMAX 32 /* the largest K of one wgmma (8-bit inputs) */

static const char *iname(const tl_expr *e) { return tl_intrinsics[e->u.call.op].name; }

/* A constant argument in [lo, hi], a multiple of mult. */
static bool const_in(sx *x, const tl_expr *e, int i, const char *what, int64_t lo, int64_t hi, int64_t mult,
                     int64_t *v) {
  if (!sx_const_arg(x, e, i, v)) return false;
  if (*v < lo || *v > hi || *v % mult != 0)
    return sx_fail(x, "T.%s: %s must be a constant%s from %lld to %lld, not %lld", iname(e), what,
                   mult == 16  ? " multiple of 16"
                   : mult == 8 ? " multiple of 8"
                   : mult == 2 ? " multiple of 2"
                               : "",
                   (long long)lo, (long long)hi, (long long)*v);
  return true;
}

/* Every warp of x's gang with an active thread has all lanes active, and its warpgroup lies in the block. */
static bool warpgroup_ok(sx *x, const tl_expr *e, const uint8_t *mask) {
  if (!sx_full_warps(x, mask, iname(e))) return false;
  for (int w = 0; w < x->T; w += 32) {
    int tb = x->tbase + w;
    if (mask[w] && tb / 128 * 128 + 128 > x->k->T)
      return sx_fail(x,
                     "T.%s: warp %d belongs to warpgroup %d (threads %d-%d), which the block of %d threads does "
                     "not contain",
                     iname(e), tb / 32, tb / 128, tb / 128 * 128, tb / 128 * 128 + 127, x->k->T);
  }
  return true;
}

/* Value v (one per thread) is the same in every lane of the warp starting at w. */
static bool warp_uniform(sx *x, const tl_expr *e, const sx_val *v, int w, const char *what) {
  for (int l = 1; l < 32; l++)
    if (v->v[w + l].i != v->v[w].i)
      return sx_fail(x, "T.%s: %s differs between lanes of warp %d (%lld in thread %d, %lld in thread %d)", iname(e),
                     what, (x->tbase + w) / 32, (long long)v->v[w].i, x->tbase + w, (long long)v->v[w + l].i,
                     x->tbase + w + l);
  return true;
}

/* A shared operand: args[i] buffer (a wgmma input type), args[i+1] offset,
 * then swizzle span, LBO, SBO, MN-major at i+2..i+5. */
typedef struct smem_op {
  sx_buf *b;
  tl_wgmma_type wt;
  sx_val off;
  int64_t sw, lbo, sbo, mn;
} smem_op;

static bool smem_op_arg(sx *x, const tl_expr *e, int i, const char *what, const uint8_t *mask, smem_op *o) {
  if (!(o->b = sx_buf_arg(x, e, i, SX_SHARED, 0, what))) return false;
  o->wt = tl_wgmma_type_of(o->b->et);
  if (!o->wt.name)
    return sx_fail(x, "T.%s: %s '%s' must be float16, bfloat16, float8_e4m3 or float8_e5m2, not %s", iname(e), what,
                   o->b->b->name, tl_dtype_name(o->b->et));
  if (!sx_const_arg(x, e, i + 2, &o->sw)) return false;
  if (!tl_swizzle_span_ok(o->sw))
    return sx_fail(x, "T.%s: %s's swizzle span must be 0, 32, 64 or 128 (bytes), not %lld", iname(e), what,
                   (long long)o->sw);
  char w[3][32];
  snprintf(w[0], sizeof w[0], "%s's LBO", what);
  snprintf(w[1], sizeof w[1], "%s's SBO", what);
  snprintf(w[2], sizeof w[2], "%s's MN-major flag", what);
  if (!const_in(x, e, i + 3, w[0], 0, (1 << 18) - 16, 16, &o->lbo) ||
      !const_in(x, e, i + 4, w[1], 0, (1 << 18) - 16, 16, &o->sbo) || !const_in(x, e, i + 5, w[2], 0, 1, 1, &o->mn))
    return false;
  if (o->mn && o->wt.kmajor_only)
    return sx_fail(x, "T.%s: %s '%s' is %s, which wgmma reads only K-major (MN-major flag 0)", iname(e), what,
                   o->b->b->name, tl_dtype_name(o->b->et));
  return sx_eval_as(x, e->u.call.args[i + 1], TL_INT64, mask, &o->off);
}

/* The shared byte span [lo, hi) an operand read covers (lo > hi: empty). */
typedef struct span {
  int64_t lo, hi;
} span;

/* The descriptor of shared operand o for the warp at w, built from its start
 * address (16-byte aligned) and decoded again as the hardware reads it. */
static bool operand_desc(sx *x, const tl_expr *e, const smem_op *o, int w, const char *what, tl_wgmma_operand *d) {
  int64_t s = o->b->base + o->wt.bytes * o->off.v[w].i;
  if (s % 16)
    return sx_fail(x,
                   "T.%s: %s's start address (byte %lld of shared memory, element %lld of '%s') is not 16-byte "
                   "aligned",
                   iname(e), what, (long long)s, (long long)o->off.v[w].i, o->b->b->name);
  *d = tl_wgmma_decode(tl_wgmma_desc((uint64_t)s, (int)o->sw, o->lbo, o->sbo));
  return true;
}

/* Element (i, k) of shared operand o (descriptor d) for the warp at w; widens *sp by its bytes. */
static bool smem_elem(sx *x, const tl_expr *e, const smem_op *o, tl_wgmma_operand d, int w, int i, int k,
                      const char *what, span *sp, double *v) {
  int eb = o->wt.bytes;
  int64_t a = tl_smem_swizzle(tl_wgmma_elem_addr(d, o->mn != 0, eb, i, k), d.span);
  int64_t rel = a - o->b->base;
  if (rel < 0 || rel + eb > o->b->elems * eb)
    return sx_fail(x, "T.%s: %s(%d, %d) is at shared byte %lld, outside '%s' (bytes %lld..%lld)", iname(e), what, i, k,
                   (long long)a, o->b->b->name, (long long)o->b->base, (long long)(o->b->base + o->b->elems * eb - 1));
  if (x->check) {
    char op[40];
    snprintf(op, sizeof op, "T.%s", iname(e));
    if (!sx_smem_read_async(x, o->b, rel, eb, x->tbase + w, op)) return false;
  }
  *v = sx_el_load(o->b->et, x->k->smem + a).f;
  if (a < sp->lo) sp->lo = a;
  if (a + eb > sp->hi) sp->hi = a + eb;
  return true;
}

/* Operand bytes sp that warp `warp`'s wgmma reads until a wait covers its open wgmma group. */
static bool pend_read(sx *x, int warp, span sp) {
  sx_blk *k = x->k;
  if (!x->check || sp.lo >= sp.hi) return true;
  if (!tl_vec_grow_((void **)&k->wgr, &k->capwgr, (size_t)k->nwgr + 1, sizeof *k->wgr))
    return sx_fail(x, "out of memory in the SIMT executor");
  k->wgr[k->nwgr++] = (sx_wgmma_read){sp.lo, sp.hi, warp, k->wg_committed[warp], NULL, false};
  return true;
}

/* The elements off[lane] .. off[lane] + n of local buffer b that the warp at w
 * reads (acc: writes) until a wait covers its open group. */
static bool pend_reg(sx *x, int w, const sx_buf *b, const sx_val *off, int64_t n, bool acc) {
  sx_blk *k = x->k;
  if (!x->check) return true;
  int64_t lo = INT64_MAX, hi = INT64_MIN;
  for (int l = 0; l < 32; l++) {
    int64_t o = off->v[w + l].i;
    lo = o < lo ? o : lo;
    hi = o + n > hi ? o + n : hi;
  }
  if (!tl_vec_grow_((void **)&k->wgr, &k->capwgr, (size_t)k->nwgr + 1, sizeof *k->wgr))
    return sx_fail(x, "out of memory in the SIMT executor");
  int warp = (x->tbase + w) / 32;
  k->wgr[k->nwgr++] = (sx_wgmma_read){lo, hi, warp, k->wg_committed[warp], b, acc};
  return true;
}

bool sx_wgmma_check_reg(sx *x, const sx_buf *sb, int64_t flat, int t, bool store) {
  const sx_blk *k = x->k;
  int warp = (x->tbase + t) / 32;
  for (int i = 0; i < k->nwgr; i++) {
    const sx_wgmma_read *r = &k->wgr[i];
    if (r->reg != sb || r->warp != warp || flat < r->lo || flat >= r->hi || (!store && !r->acc)) continue;
    return sx_fail(x,
                   "thread %d %s '%s'[%lld] while a wgmma.mma_async of its warp (wgmma group %d) %s: no "
                   "T.ptx_wgmma_wait covers the group yet",
                   x->tbase + t, store ? "writes" : "reads", sb->b->name, (long long)flat, r->group,
                   r->acc ? "writes it (accumulators are undefined until the wait)" : "reads it (rs's A fragment)");
  }
  return true;
}

bool sx_wgmma_check_write(sx *x, const sx_buf *sb, int64_t off, int64_t n, int t) {
  const sx_blk *k = x->k;
  int64_t lo = sb->base + off, hi = lo + n;
  for (int i = 0; i < k->nwgr; i++) {
    const sx_wgmma_read *r = &k->wgr[i];
    if (r->reg || r->hi <= lo || hi <= r->lo) continue;
    int64_t b = r->lo > lo ? r->lo : lo;
    return sx_fail(x,
                   "thread %d writes '%s'[%lld] while a wgmma.mma_async of warp %d (wgmma group %d) may still read "
                   "it: no T.ptx_wgmma_wait of that warp covers the group",
                   t, sb->b->name, (long long)((b - sb->base) / sb->eb), r->warp, r->group);
  }
  return true;
}

/* The accumulators C (args[ci], offset args[ci+1]): local float32, or float16 with float16 inputs (for
 * T.ptx_wgmma_wait, which only passes registers through, any 16-bit float: the rs form's A fragment). */
static bool accum_arg(sx *x, const tl_expr *e, int ci, tl_dtype in, const uint8_t *mask, sx_buf **c, sx_val *off) {
  if (!(*c = sx_buf_arg(x, e, ci, SX_LOCAL, 0, "the accumulators"))) return false;
  tl_dtype t = (*c)->et;
  bool f32 = t.code == TL_TYPE_FLOAT && t.bits == 32, f16 = t.code == TL_TYPE_FLOAT && t.bits == 16;
  if (e->u.call.op == TL_INTRIN_PTX_WGMMA_WAIT && t.code == TL_TYPE_BFLOAT && t.bits == 16) f16 = true;
  bool f16in = in.code == TL_TYPE_FLOAT && in.bits == 16;
  if (!f32 && !(f16 && f16in))
    return sx_fail(x, "T.%s: the accumulators '%s' must be float32%s with %s inputs, not %s", iname(e), (*c)->b->name,
                   f16in ? " or float16" : "", tl_dtype_name(in), tl_dtype_name(t));
  return sx_eval_as(x, e->u.call.args[ci + 1], TL_INT64, mask, off);
}

/* D = A·B (+ C) for the warp at w: A its 16 rows (A[row][k], k < K), B from shared operand bo. */
static bool mma_rows(sx *x, const tl_expr *e, int w, double A[16][WG_KMAX], int K, const smem_op *bo, int n, sx_buf *c,
                     const sx_val *coff, bool accumulate) {
  double(*B)[256] = sx_scratch(x, sizeof(double[WG_KMAX][256])); /* [k][column] */
  if (!B) return false;
  span sp = {INT64_MAX, INT64_MIN};
  tl_wgmma_operand d;
  if (!operand_desc(x, e, bo, w, "B", &d)) return false;
  for (int j = 0; j < n; j++)
    for (int k = 0; k < K; k++)
      if (!smem_elem(x, e, bo, d, w, j, k, "B", &sp, &B[k][j])) return false;
  if (!pend_read(x, (x->tbase + w) / 32, sp)) return false;
  for (int l = 0; l < 32; l++) {
    int th = w + l, g = l >> 2, t = l & 3;
    int64_t pc = coff->v[th].i;
    if (!sx_local_range(x, c, pc, n / 2, th, iname(e))) return false;
    for (int r = 0; r < n / 2; r++) {
      int row = g + 8 * ((r >> 1) & 1), col = 8 * (r >> 2) + 2 * t + (r & 1);
      uint8_t *p = sx_elem_ptr(c, x->tbase + th, pc + r);
      double old = accumulate ? sx_el_load(c->et, p).f : 0.0;
      sx_el d = {.f = tl_mma_step(A[row], &B[0][col], 256, K, old, c->et)};
      sx_el_store(c->et, p, d);
    }
  }
  return true;
}

/* T.ptx_wgmma_ss(C, c_off, A, a_off, a_sw, a_lbo, a_sbo, a_mn, B, b_off, b_sw, b_lbo, b_sbo, b_mn, n, scale_d)
 * and T.ptx_wgmma_rs(C, c_off, A, a_off, B, b_off, b_sw, b_lbo, b_sbo, b_mn, n, scale_d). */
static bool do_wgmma(sx *x, const tl_expr *e, bool rs, const uint8_t *mask) {
  smem_op ao, bo;
  sx_buf *afrag = NULL, *c;
  sx_val aoff, coff, scale;
  int64_t n;
  int bi = rs ? 4 : 8, ni = rs ? 10 : 14;
  if (rs) {
    if (!(afrag = sx_buf_arg(x, e, 2, SX_LOCAL, 2, "the A fragment")) ||
        !sx_eval_as(x, e->u.call.args[3], TL_INT64, mask, &aoff))
      return false;
  } else if (!smem_op_arg(x, e, 2, "A", mask, &ao)) {
    return false;
  }
  if (!smem_op_arg(x, e, bi, "B", mask, &bo) || !const_in(x, e, ni, "n", 8, 256, 8, &n)) return false;
  tl_dtype at = rs ? afrag->et : ao.b->et;
  if (!tl_wgmma_types_match(at, bo.b->et) || (rs && bo.wt.bytes != 2))
    return sx_fail(x, "T.%s: A and B must have one dtype, or both be 8-bit floats in the shared form (got %s and %s)",
                   iname(e), tl_dtype_name(at), tl_dtype_name(bo.b->et));
  int K = bo.wt.k;
  if (!accum_arg(x, e, 0, at, mask, &c, &coff) || !sx_eval_as(x, e->u.call.args[ni + 1], TL_INT32, mask, &scale) ||
      !warpgroup_ok(x, e, mask))
    return false;
  for (int w = 0; w < x->T; w += 32) {
    if (!mask[w]) continue;
    if (!warp_uniform(x, e, &scale, w, "scale_d") || !warp_uniform(x, e, &bo.off, w, "B's offset") ||
        (!rs && !warp_uniform(x, e, &ao.off, w, "A's offset")))
      return false;
    int q = ((x->tbase + w) % 128) / 32;
    double A[16][WG_KMAX];
    for (int l = 0; l < 32 && rs; l++) { /* the mma.sync m16n8k16 A map (docs/layouts.md) */
      int th = w + l, g = l >> 2, t2 = 2 * (l & 3);
      int64_t pa = aoff.v[th].i;
      if (!sx_local_range(x, afrag, pa, 8, th, "wgmma A fragment")) return false;
      static const int dr[8] = {0, 0, 8, 8, 0, 0, 8, 8}, dk[8] = {0, 1, 0, 1, 8, 9, 8, 9};
      for (int r = 0; r < 8; r++)
        A[g + dr[r]][t2 + dk[r]] = sx_el_load(afrag->et, sx_elem_ptr(afrag, x->tbase + th, pa + r)).f;
    }
    span sp = {INT64_MAX, INT64_MIN};
    tl_wgmma_operand d;
    if (!rs && !operand_desc(x, e, &ao, w, "A", &d)) return false;
    for (int i = 0; i < 16 && !rs; i++)
      for (int k = 0; k < K; k++)
        if (!smem_elem(x, e, &ao, d, w, 16 * q + i, k, "A", &sp, &A[i][k])) return false;
    if (!pend_read(x, (x->tbase + w) / 32, sp)) return false;
    if (!mma_rows(x, e, w, A, K, &bo, (int)n, c, &coff, scale.v[w].i != 0)) return false;
    if (!pend_reg(x, w, c, &coff, n / 2, true) || (rs && !pend_reg(x, w, afrag, &aoff, 8, false))) return false;
  }
  return true;
}

/* T.ptx_wgmma_wait(n, C, c_off, count) */
static bool do_wait(sx *x, const tl_expr *e, const uint8_t *mask) {
  int64_t n, count;
  sx_buf *c;
  sx_val coff;
  if (!const_in(x, e, 0, "n", 0, 7, 1, &n) || !accum_arg(x, e, 1, TL_FLOAT16, mask, &c, &coff) ||
      !const_in(x, e, 3, "count", 0, 256, c->eb == 2 ? 2 : 1, &count) || !warpgroup_ok(x, e, mask))
    return false;
  for (int t = 0; t < x->T; t++)
    if (mask[t] && !sx_local_range(x, c, coff.v[t].i, count, t, iname(e))) return false;
  sx_blk *k = x->k;
  for (int w = 0; w < x->T; w += 32) {
    int warp = (x->tbase + w) / 32;
    if (!mask[w] || k->wg_committed[warp] - n <= k->wg_completed[warp]) continue;
    k->wg_completed[warp] = k->wg_committed[warp] - (int32_t)n;
    int kept = 0; /* the groups now complete: their reads end here */
    for (int i = 0; i < k->nwgr; i++) {
      sx_wgmma_read r = k->wgr[i];
      if (r.warp != warp || r.group >= k->wg_completed[warp]) {
        k->wgr[kept++] = r;
        continue;
      }
      for (int64_t b = r.lo; !r.reg && b < r.hi; b++) sx_smem_note_read(x, b, x->tbase + w);
    }
    k->nwgr = kept;
  }
  return true;
}

bool sx_wgmma_stmt(sx *x, int op, const tl_expr *e, const uint8_t *mask) {
  if (e->u.call.n != tl_intrinsics[op].min_args)
    return sx_fail(x, "T.%s takes %d arguments, got %d", iname(e), tl_intrinsics[op].min_args, e->u.call.n);
  int64_t count, inc;
  switch (op) {
  case TL_INTRIN_PTX_WGMMA_FENCE: return warpgroup_ok(x, e, mask);
  case TL_INTRIN_PTX_WGMMA_COMMIT:
    if (!warpgroup_ok(x, e, mask)) return false;
    for (int w = 0; w < x->T; w += 32)
      if (mask[w]) x->k->wg_committed[(x->tbase + w) / 32]++;
    return true;
  case TL_INTRIN_PTX_WGMMA_WAIT: return do_wait(x, e, mask);
  case TL_INTRIN_PTX_WGMMA_SS: return do_wgmma(x, e, false, mask);
  case TL_INTRIN_PTX_WGMMA_RS: return do_wgmma(x, e, true, mask);
  case TL_INTRIN_PTX_SETMAXNREG:
    return const_in(x, e, 0, "count", 24, 256, 8, &count) && const_in(x, e, 1, "inc", 0, 1, 1, &inc) &&
           warpgroup_ok(x, e, mask);
  default: return sx_fail(x, "internal error: T.%s is not a warpgroup statement", iname(e));
  }
}
