/* T.gemm on mma.sync for the operand dtypes beyond 16-bit (lib/Lower): float32
 * (and tfloat32) computed as tf32 by m16n8k8, int8/uint8 -> int32 by
 * m16n8k32, float8 by m16n8k32, packed int4/uint4 pairs in int8/uint8 bytes
 * (packed_int4) by m16n8k64 over the bytes exactly as int8 (its info counts
 * bytes), float64 by m8n8k4 (lib/Support/mma.h selects the instruction).
 * Called by tl_lower_gemm (lower_gemm.c) for the ss form once it has
 * checked the operands, shapes and the accumulator's MMA_C layout.
 *
 * Requires: A and B shared tiles (their regions' origins and layouts given),
 * C a fragment with the MMA_C layout of tl_gemm_warp_partition (frag_layout.c),
 * K a multiple of the instruction's k.
 * Guarantees: per warp, the same C registers as the 16-bit path (m16n8 tile
 * (mi, nj) is registers 4*(mi*(WN/8) + nj) .. +3 = c0..c3; for f64, c0 c1
 * are the first m8n8k4's accumulators (rows g) and c2 c3 the second's
 * (rows g + 8)), and for each k-step of the instruction's k, in increasing
 * order: the lane's A elements of every m16 tile and B elements of every n8
 * tile loaded from shared memory with plain loads (tl_mma_a_elem /
 * tl_mma_b_elem give the fragment maps; ld.shared works for every
 * orientation and element width, where ldmatrix has only 16-bit elements):
 * one element at a time, or for a K-contiguous 8-bit operand one 4-byte
 * vector per register),
 * then one T.ptx_mma per (m16, n8) tile (two m8n8k4 for f64).  The k-step
 * loop is T.unroll when it has at most 8 steps, else serial; the tile loops
 * are T.unroll, so every register index is a constant after unrolling.
 * The rounding of float32 operands to tf32 is the mma's (T.ptx_mma's
 * m16n8k8 contract, docs/simt-ir.md), not a separate statement. */
#include <stdint.h>

#include "Lower/lower_internal.h"
#include "Lower/smem_layout.h"

tl_mma_lanes tl_emit_mma_lanes(tl_emitter *g, int64_t warps_m) {
  tl_module *M = g->m;
  tl_loc loc = g->loc;
  tl_mma_lanes L;
  tl_expr *tid = tl_lo_thread_index(M, loc);
  tl_expr *lane = tl_emit_let(g, "lane", tl_lo_fmod(M, loc, tid, 32, NULL));
  L.warp_m = tl_emit_let(g, "warp_m", tl_lo_fmod(M, loc, tl_lo_fdiv(M, loc, tid, 32, NULL), warps_m, NULL));
  L.warp_n = tl_emit_let(g, "warp_n", tl_lo_fdiv(M, loc, tid, 32 * warps_m, NULL));
  L.lane_g = tl_emit_let(g, "lane_g", tl_lo_fdiv(M, loc, lane, 4, NULL));
  L.lane_t = tl_emit_let(g, "lane_t", tl_lo_fmod(M, loc, lane, 4, NULL));
  return L;
}

/* Loads the lane's fragment elements of one operand for m16 tile / n8 tile
 * `tile` (a T.unroll variable) at k-step kk into regs[tile * n + e]:
 * element e's (row-or-n, k) from fn, placed at the operand's (row, col)
 * (swapped when the operand is stored transposed: K rows). */
tl_stmt *tl_gemm_load_frag(tl_emitter *g, const tl_gemm_smem_operand *o, bool k_rows, bool is_a, const tl_mma_info *mi,
                           tl_buffer *regs, int n, tl_var *tile, tl_expr *mn_base, tl_expr *kbase, tl_expr *lane_g,
                           tl_expr *lane_t) {
  tl_module *M = g->m;
  tl_loc loc = g->loc;
  tl_stmt *st[32];
  if (n > 32) return NULL;
  tl_expr *tv = tl_ir_var(M, loc, tile);
  /* K-contiguous 8-bit operand: a register's per_reg elements are adjacent
   * (and 4-byte aligned: k = 4t + 16j, rows of a multiple of 4 elements, a
   * swizzle moves whole 16-byte chunks), so one vector load fills it */
  int vec = !k_rows && mi->per_reg > 1 ? mi->per_reg : 1;
  for (int e = 0; e < n; e += vec) {
    /* the maps for lane 0 give the constant parts; g and t add */
    int r0, k0;
    if (is_a) tl_mma_a_elem(mi, 0, e, &r0, &k0);
    else tl_mma_b_elem(mi, 0, e, &k0, &r0);
    /* A: row g + r0, k p*t + k0; B: n g, k p*t + k0 */
    tl_expr *mn = tl_lo_add(M, loc, tl_lo_add(M, loc, mn_base, tl_lo_mul(M, loc, tv, is_a ? 16 : 8)),
                            tl_lo_add(M, loc, lane_g, tl_lo_int(M, loc, r0)));
    tl_expr *kx =
        tl_lo_add(M, loc, kbase, tl_lo_add(M, loc, tl_lo_mul(M, loc, lane_t, mi->per_reg), tl_lo_int(M, loc, k0)));
    tl_expr *row = k_rows ? kx : mn, *col = k_rows ? mn : kx;
    tl_expr *off =
        tl_smem_offset(M, loc, o->L, o->stage, tl_lo_add(M, loc, o->row0, row), tl_lo_add(M, loc, o->col0, col));
    if (off && vec > 1) off = tl_lo_ramp(M, loc, off, vec);
    tl_expr *val = off ? tl_ir_load(M, loc, o->L->flat, 1, &off) : NULL;
    if (val) val->dtype.lanes = (uint16_t)vec; /* a vector load of vec lanes */
    tl_expr *idx = tl_lo_add(M, loc, tl_lo_mul(M, loc, tv, n), tl_lo_int(M, loc, e));
    if (idx && vec > 1) idx = tl_lo_ramp(M, loc, idx, vec);
    st[e / vec] = val && idx ? tl_lo_store(M, loc, regs, 1, &idx, val) : NULL;
    if (!st[e / vec]) {
      g->failed = true;
      return NULL;
    }
  }
  return n == vec ? st[0] : tl_ir_seq(M, loc, n / vec, st);
}

tl_stmt *tl_lower_gemm_types(tl_emitter *g, const tl_mma_info *mi, const tl_gemm_smem_operand *A,
                             const tl_gemm_smem_operand *B, tl_buffer *C, const tl_frag_layout *CL, bool ta, bool tb,
                             bool clear, int64_t K) {
  tl_module *M = g->m;
  tl_loc loc = g->loc;
  int64_t wmN = CL->warp_m, WM = CL->warp_tile_m, WN = CL->warp_tile_n;
  int64_t mt = WM / 16, nt8 = WN / 8, ksteps = K / mi->k;
  int na = mi->a_elems, nbe = mi->b_elems;
  tl_buffer *Ar = tl_emit_local(g, "A_regs", A->buf->dtype, na * mt);
  tl_buffer *Br = tl_emit_local(g, "B_regs", B->buf->dtype, nbe * nt8);
  if (g->failed) return NULL;
  tl_mma_lanes L = tl_emit_mma_lanes(g, wmN);
  if (g->failed) return NULL;
  tl_expr *wm = L.warp_m, *wn = L.warp_n, *lg = L.lane_g, *lt = L.lane_t;
  if (clear) tl_emit_zero_fill(g, C, CL->nregs);
  tl_var *kk = tl_names_fresh_var(g->names, loc, "kk", TL_INT32, TL_VAR_LOOP);
  tl_var *mv = tl_names_fresh_var(g->names, loc, "mi", TL_INT32, TL_VAR_LOOP);
  tl_var *nv = tl_names_fresh_var(g->names, loc, "nj", TL_INT32, TL_VAR_LOOP);
  tl_var *mv2 = tl_names_fresh_var(g->names, loc, "mi", TL_INT32, TL_VAR_LOOP);
  tl_var *q = tl_names_fresh_var(g->names, loc, "nq", TL_INT32, TL_VAR_LOOP);
  if (!kk || !mv || !nv || !mv2 || !q) return NULL;
  tl_expr *kbase = tl_lo_mul(M, loc, tl_ir_var(M, loc, kk), mi->k);
  tl_stmt *ldA = tl_gemm_load_frag(g, A, ta, true, mi, Ar, na, mv, tl_lo_mul(M, loc, wm, WM), kbase, lg, lt);
  tl_stmt *ldB = tl_gemm_load_frag(g, B, !tb, false, mi, Br, nbe, nv, tl_lo_mul(M, loc, wn, WN), kbase, lg, lt);
  if (!ldA || !ldB) return NULL;
  /* mma per (m16 tile, n8 tile); f64: rows g (a[0], c0 c1) then g + 8 (a[1], c2 c3) */
  tl_expr *qv = tl_ir_var(M, loc, q), *m2v = tl_ir_var(M, loc, mv2);
  tl_expr *cbase = tl_lo_mul(M, loc, tl_lo_add(M, loc, tl_lo_mul(M, loc, m2v, nt8), qv), 4);
  int halves = mi->kind == TL_MMA_KIND_F64 ? 2 : 1;
  tl_stmt *calls[2];
  for (int h = 0; h < halves; h++) {
    tl_expr *args[7] = {
        tl_ir_buffer_ref(M, loc, Ar),   tl_lo_add(M, loc, tl_lo_mul(M, loc, m2v, na), tl_lo_int(M, loc, h)),
        tl_ir_buffer_ref(M, loc, Br),   tl_lo_mul(M, loc, qv, nbe),
        tl_ir_buffer_ref(M, loc, C),    tl_lo_add(M, loc, cbase, tl_lo_int(M, loc, 2 * h)),
        tl_ir_string(M, loc, mi->shape)};
    calls[h] = tl_emit_call(g, TL_INTRIN_PTX_MMA, 7, args);
    if (!calls[h]) return NULL;
  }
  tl_stmt *call = halves == 1 ? calls[0] : tl_ir_seq(M, loc, 2, calls);
  tl_stmt *mma = call ? tl_emit_for(g, mv2, mt, TL_LOOP_UNROLL, tl_emit_for(g, q, nt8, TL_LOOP_UNROLL, call)) : NULL;
  tl_stmt *la = tl_emit_for(g, mv, mt, TL_LOOP_UNROLL, ldA), *lb = tl_emit_for(g, nv, nt8, TL_LOOP_UNROLL, ldB);
  if (!mma || !la || !lb) return NULL;
  tl_stmt *step[3] = {la, lb, mma};
  tl_stmt *body = tl_ir_seq(M, loc, 3, step);
  tl_emit_push(g, tl_emit_for(g, kk, ksteps, ksteps <= 8 ? TL_LOOP_UNROLL : TL_LOOP_SERIAL, body));
  if (g->failed) return NULL;
  return tl_ir_seq(M, loc, (int)g->out.len, g->out.data);
}
