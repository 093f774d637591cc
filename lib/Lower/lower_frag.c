/* Register-operand T.gemm (lib/Lower): the "rs" form, A in a fragment, B in
 * shared memory, C a fragment, as FlashAttention's P·V product uses it
 * (T.gemm(acc_s_cast, V_shared, acc_o) after T.copy(acc_s, acc_s_cast)).
 *
 * Layout fact (docs/layouts.md "P·V reuse"; PTX ISA §9.7.14.5.8,
 * figures "MMA .m16n8k16 fragment layout for matrix A" and "... for
 * accumulator"; verified on a GPU: docs/layouts.md).  For lane l,
 * g = l/4, t = l%4, one m16n8k16 mma reads A (16 x 16, M x K) from
 *     a0 = A[g][2t, 2t+1]    a1 = A[g+8][2t, 2t+1]
 *     a2 = A[g][2t+8, 2t+9]  a3 = A[g+8][2t+8, 2t+9]
 * and keeps the accumulator of an m16n8 tile in c0, c1 = C[g][2t, 2t+1] and
 * c2, c3 = C[g+8][2t, 2t+1].  Hence the 16 x 16 A slice (mi, kk) is exactly
 * the accumulators of the two n8 tiles 2kk and 2kk+1 of m-tile mi: a0 a1 =
 * c0..c3 of tile 2kk, a2 a3 = c0..c3 of tile 2kk+1.  In the MMA_C layout of a
 * BM x K fragment whose warps split only M (warp_n = 1, warp tile WM x K,
 * lower_internal.h) those are registers 4*(mi*(K/8) + 2kk) .. +7, in the
 * order T.ptx_mma wants (a0.lo, a0.hi, ..., a3.hi; docs/simt-ir.md), held by
 * warp i/WM: the warp that runs the mma for those rows when this gemm's own
 * partition is warp_m x 1 with the same warp_m.  So an f32 accumulator cast
 * element-wise to f16 (T.copy between fragments of one layout, lower_tile.c)
 * is the A operand of the next gemm with no data movement.  Layout inference
 * (layout_infer.c) gives the A fragment that layout; tl_gemm_rs_a_check
 * (frag_layout.c) re-derives the map element by element before lowering, so a wrong
 * assumption is a compile error, never a wrong result.
 *
 * Lowering, per warp: registers zeroed if clear_accum; for each k-step kk of
 * 16 (unrolled, so every A register index is a constant) and each pair of n8
 * tiles nj: one ldmatrix of B (.x4, .trans when B is stored K x N; .x2 for
 * single n8 tiles when WN % 16 != 0; lane addresses as in docs/layouts.md "ldmatrix addresses"), then
 * its mmas for every m-tile mi, with A at register 8*(mi*(K/16) + kk) of the
 * fragment (B registers live only until their mmas: FlashAttention's P·V
 * gemm already holds a large accumulator).  This file keeps its own copy of the B address arithmetic so the
 * ss-form lowering (lower_gemm.c) can change independently. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "Lower/lower_internal.h"
#include "Lower/smem_layout.h"

/* ------------------------------------------------------------- lowering */
typedef tl_emitter rs_state;

static bool attr_flag(const tl_stmt *s, int k) {
  int64_t v = 0;
  if (k < tl_tile_ops[TL_TILE_GEMM].nattrs && s->u.tile.attrs && s->u.tile.attrs[k])
    tl_expr_is_const_int(s->u.tile.attrs[k], &v);
  return v != 0;
}

/* The dtypes the rs form lowers: f16 x f16 into f32 or f16, bf16 x bf16
 * into f32; false after reporting the others. */
static bool rs_dtypes_ok(tl_dtype dA, tl_dtype dB, tl_dtype dC, tl_diag *d, tl_loc loc) {
  bool ab16 = tl_dtype_eq(dA, dB) && dA.bits == 16 && (dA.code == TL_TYPE_FLOAT || dA.code == TL_TYPE_BFLOAT);
  bool c_ok = (dC.code == TL_TYPE_FLOAT && dC.bits == 32) ||
              (dC.code == TL_TYPE_FLOAT && dC.bits == 16 && dA.code == TL_TYPE_FLOAT);
  if (ab16 && c_ok) return true;
  tl_error(d, loc,
           "T.gemm with A %s, B %s and C %s is not lowered yet (lowered: float16 with float32 or "
           "float16 accumulators, bfloat16 with float32)",
           tl_dtype_name(dA), tl_dtype_name(dB), tl_dtype_name(dC));
  return false;
}

tl_stmt *tl_lower_gemm_rs(tl_module *M, const tl_stmt *s, tl_names *names, int64_t threads, bool compact_addresses,
                          tl_diag *d) {
  tl_loc loc = s->loc;
  if (s->u.tile.nargs < 3) {
    tl_error(d, loc, "T.gemm needs A, B and C");
    return NULL;
  }
  if (tl_gemm_is_wgmma(s)) return tl_lower_wgmma_rs(M, s, names, d); /* Hopper: lower_gemm.c */
  const tl_region *ra = &s->u.tile.args[0].region, *rb = &s->u.tile.args[1].region, *rc = &s->u.tile.args[2].region;
  tl_buffer *A = ra->buffer, *B = rb->buffer, *C = rc->buffer;
  tl_frag_layout *AL = tl_frag_layout_of(A), *CL = tl_frag_layout_of(C);
  bool ta = attr_flag(s, 0), tb = attr_flag(s, 1), clear = attr_flag(s, 3);
  if (!CL || CL->kind != TL_FRAG_MMA_C || !AL || AL->kind != TL_FRAG_MMA_C) {
    tl_error(d, loc, "internal error: T.gemm operands '%s' and '%s' have no mma layouts", A ? A->name : "?",
             C ? C->name : "?");
    return NULL;
  }
  if (ta) {
    tl_error(d, loc, "T.gemm with A in fragment '%s' and transpose_A=True is not lowered yet", A->name);
    return NULL;
  }
  if (!B || (B->scope != TL_SCOPE_SHARED && B->scope != TL_SCOPE_SHARED_DYN) || (B->ndim != 2 && B->ndim != 3)) {
    tl_error(d, loc, "T.gemm with A in fragment '%s' needs B '%s' in a 2-D shared buffer (the rs form)", A->name,
             B ? B->name : "?");
    return NULL;
  }
  int64_t BM = CL->shape[0], BN = CL->shape[1], K = AL->shape[1];
  if (AL->shape[0] != BM) {
    tl_error(d, loc, "T.gemm operand shapes disagree: A '%s' has %lld rows, C '%s' has %lld", A->name,
             (long long)AL->shape[0], C->name, (long long)BM);
    return NULL;
  }
  if (CL->warp_n != 1 || CL->threads != threads || threads % 32 != 0) {
    tl_error(d, loc,
             "T.gemm with A in fragment '%s' (the rs form) needs the warps of '%s' to split only M "
             "(warp_n == 1, policy FullRow)",
             A->name, C->name);
    return NULL;
  }
  int64_t bad_i = -1, bad_k = -1;
  if (!tl_gemm_rs_a_check(AL, CL->warp_m, &bad_i, &bad_k)) {
    if (bad_i >= 0)
      tl_error(d, loc,
               "internal error: T.gemm rs form: element (%lld, %lld) of fragment '%s' is not where "
               "mma.sync reads its A operand",
               (long long)bad_i, (long long)bad_k, A->name);
    else
      tl_error(d, loc,
               "layout conflict for fragment '%s': T.gemm reads it as its A operand (the rs form), "
               "which needs the mma accumulator layout split over %lldx1 warps, but it is split over "
               "%lldx%lld warps",
               A->name, (long long)CL->warp_m, (long long)AL->warp_m, (long long)AL->warp_n);
    return NULL;
  }
  /* B: one stage of a (staged) shared buffer, K x N or N x K (transpose_B) */
  tl_smem_layout *BLy = tl_smem_layout_get(M, B);
  if (!BLy) {
    tl_error(d, loc, "T.gemm: shared buffer B '%s' needs a static shape", B->name);
    return NULL;
  }
  int nd = B->ndim;
  tl_expr *bmin[3];
  int64_t bext[3];
  for (int k = 0; k < nd; k++) {
    bmin[k] = rb->ndim ? rb->min[k] : tl_lo_int(M, loc, 0);
    if (!tl_expr_is_const_int(rb->ndim ? rb->extent[k] : B->shape[k], &bext[k]) || bext[k] < 1) {
      tl_error(d, loc, "T.gemm operand B '%s' needs constant extents", B->name);
      return NULL;
    }
    if (!bmin[k]) {
      tl_error(d, loc, "out of memory while lowering T.gemm");
      return NULL;
    }
  }
  if (nd == 3 && bext[0] != 1) {
    tl_error(d, loc, "T.gemm operand B '%s' must select one stage of its staged buffer", B->name);
    return NULL;
  }
  tl_expr *bstage = nd == 3 ? bmin[0] : NULL, *brow0 = bmin[nd - 2], *bcol0 = bmin[nd - 1];
  int64_t bk = tb ? bext[nd - 1] : bext[nd - 2], bn = tb ? bext[nd - 2] : bext[nd - 1];
  if (bk != K || bn != BN) {
    tl_error(d, loc,
             "T.gemm operand shapes disagree: A gives M=%lld, K=%lld; B gives K=%lld, N=%lld; C is "
             "%lldx%lld",
             (long long)BM, (long long)K, (long long)bk, (long long)bn, (long long)BM, (long long)BN);
    return NULL;
  }
  tl_dtype dB = B->dtype;
  if (!rs_dtypes_ok(A->dtype, dB, C->dtype, d, loc)) return NULL;

  rs_state gs = {.m = M, .names = names, .loc = loc};
  rs_state *g = &gs;
  int64_t WM = CL->warp_tile_m, WN = CL->warp_tile_n;
  int64_t mt = WM / 16, nt8 = WN / 8, ndim16 = WN % 16 == 0 ? 16 : 8, nb = WN / ndim16;
  int64_t bregs = ndim16 == 16 ? 8 : 4;
  int64_t ksteps = K / 16, akt = K / 16;
  tl_buffer *Br = tl_emit_local(g, "B_regs", dB, bregs);
  if (!Br) goto oom;
  tl_expr *tid = tl_lo_thread_index(M, loc);
  tl_expr *lane = tl_emit_let(g, "lane", tl_lo_fmod(M, loc, tid, 32, NULL));
  if (g->failed) goto oom;
  if (clear) tl_emit_zero_fill(g, C, CL->nregs);
  tl_var *kk = tl_names_fresh_var(names, loc, "kk", TL_INT32, TL_VAR_LOOP);
  tl_var *nj = tl_names_fresh_var(names, loc, "nj", TL_INT32, TL_VAR_LOOP);
  tl_var *mi = tl_names_fresh_var(names, loc, "mi", TL_INT32, TL_VAR_LOOP);
  tl_var *q = tl_names_fresh_var(names, loc, "nq", TL_INT32, TL_VAR_LOOP);
  if (!kk || !nj || !mi || !q) goto oom;
  int64_t per = ndim16 / 8; /* n8 tiles per ldmatrix */
  /* warp_n == 1: every warp covers all BN columns, so no warp column offset */
  tl_expr *offB = tl_gemm_b_offset(g, BLy, bstage, brow0, bcol0, tb, ndim16, lane, tl_emit_int(g, 0), 1, WN, kk, ksteps,
                                   nj, nb, compact_addresses);
  if (!offB) goto oom;
  tl_expr *argsB[6] = {tl_ir_buffer_ref(M, loc, Br),         tl_emit_int(g, 0),
                       tl_ir_buffer_ref(M, loc, BLy->flat),  offB,
                       tl_emit_int(g, ndim16 == 16 ? 4 : 2), tl_ir_int(M, loc, TL_BOOL, !tb)};
  tl_expr *miv = tl_ir_var(M, loc, mi), *qv = tl_ir_var(M, loc, q), *kkv = tl_ir_var(M, loc, kk);
  tl_expr *njv = tl_ir_var(M, loc, nj);
  /* A slice (mi, kk) = fragment registers 8*(mi*(K/16) + kk) .. +7 */
  tl_expr *aoff = tl_lo_mul(M, loc, tl_lo_add(M, loc, tl_lo_mul(M, loc, miv, akt), kkv), 8);
  /* C n8 tile nj*per + q of m-tile mi */
  tl_expr *ctile = tl_lo_add(M, loc, tl_lo_add(M, loc, tl_lo_mul(M, loc, miv, nt8), tl_lo_mul(M, loc, njv, per)), qv);
  tl_expr *argsM[7] = {tl_ir_buffer_ref(M, loc, A),     aoff,
                       tl_ir_buffer_ref(M, loc, Br),    tl_lo_mul(M, loc, qv, 4),
                       tl_ir_buffer_ref(M, loc, C),     tl_lo_mul(M, loc, ctile, 4),
                       tl_ir_string(M, loc, "m16n8k16")};
  /* for kk: for nj: { ldmatrix B(kk, nj); for mi, q: mma }: the B registers
   * of one ldmatrix live only until its mmas (register pressure: the P·V
   * gemm of FlashAttention holds a large accumulator) */
  tl_stmt *ldB = tl_emit_call(g, TL_INTRIN_PTX_LDMATRIX, 6, argsB);
  tl_stmt *mma = tl_emit_for(g, mi, mt, TL_LOOP_UNROLL,
                             tl_emit_for(g, q, per, TL_LOOP_UNROLL, tl_emit_call(g, TL_INTRIN_PTX_MMA, 7, argsM)));
  if (!ldB || !mma) goto oom;
  tl_stmt *step[2] = {ldB, mma};
  tl_stmt *body = tl_emit_for(g, nj, nb, TL_LOOP_UNROLL, tl_ir_seq(M, loc, 2, step));
  if (!body) goto oom;
  /* unrolled: the A register index must be a constant (registers, not local memory) */
  tl_emit_push(g, tl_emit_for(g, kk, ksteps, ksteps <= 32 ? TL_LOOP_UNROLL : TL_LOOP_SERIAL, body));
  if (g->failed) goto oom;
  {
    tl_stmt *r = tl_ir_seq(M, loc, (int)g->out.len, g->out.data);
    if (!r) goto oom;
    tl_vec_free(&g->out);
    return r;
  }
oom:
  tl_vec_free(&g->out);
  tl_error(d, loc, "out of memory while lowering T.gemm");
  return NULL;
}

/* ------------------------------------------------ relayout through shared */
/* (i, j) of register reg of this thread in MMA_C layout L (the inverse of
 * lower_internal.h's map, as IR; reg is an unrolled loop variable, so the
 * register parts fold to constants). */
static void mma_c_coords_ir(tl_module *M, tl_loc loc, const tl_frag_layout *L, tl_expr *tid, tl_expr *reg, tl_expr **i,
                            tl_expr **j) {
  int64_t WM = L->warp_tile_m, WN = L->warp_tile_n;
  tl_expr *e = tl_lo_fmod(M, loc, reg, 2, NULL);
  tl_expr *h = tl_lo_fmod(M, loc, tl_lo_fdiv(M, loc, reg, 2, NULL), 2, NULL);
  tl_expr *nj = tl_lo_fmod(M, loc, tl_lo_fdiv(M, loc, reg, 4, NULL), WN / 8, NULL);
  tl_expr *mi = tl_lo_fdiv(M, loc, reg, WN / 2, NULL);
  tl_expr *w = tl_lo_fdiv(M, loc, tid, 32, NULL);
  tl_expr *wm = tl_lo_fmod(M, loc, w, L->warp_m, NULL), *wn = tl_lo_fdiv(M, loc, w, L->warp_m, NULL);
  tl_expr *lane = tl_lo_fmod(M, loc, tid, 32, NULL);
  tl_expr *g = tl_lo_fdiv(M, loc, lane, 4, NULL), *t = tl_lo_fmod(M, loc, lane, 4, NULL);
  /* tl_mma_c_row0(wm, mi) + 8h + g */
  tl_expr *row0 = L->interleaved ? tl_lo_add(M, loc, tl_lo_mul(M, loc, wm, 16), tl_lo_mul(M, loc, mi, 16 * L->warp_m))
                                 : tl_lo_add(M, loc, tl_lo_mul(M, loc, wm, WM), tl_lo_mul(M, loc, mi, 16));
  *i = tl_lo_add(M, loc, row0, tl_lo_add(M, loc, tl_lo_mul(M, loc, h, 8), g));
  *j = tl_lo_add(M, loc, tl_lo_add(M, loc, tl_lo_mul(M, loc, wn, WN), tl_lo_mul(M, loc, nj, 8)),
                 tl_lo_add(M, loc, tl_lo_mul(M, loc, t, 2), e));
}

static tl_stmt *sync_threads(tl_module *M, tl_loc loc) {
  int op = TL_INTRIN_SYNC_THREADS;
  tl_expr *c = op >= 0 ? tl_ir_call(M, loc, op, 0, NULL) : NULL;
  tl_stmt *s = c ? tl_ir_stmt(M, loc, TL_STMT_EVAL) : NULL;
  if (s) s->u.eval.value = c;
  return s;
}

tl_stmt *tl_lower_frag_relayout(tl_module *M, tl_loc loc, tl_names *names, tl_buffer *src, tl_buffer *dst, tl_diag *d) {
  const tl_frag_layout *SL = tl_frag_layout_of(src), *DL = tl_frag_layout_of(dst);
  if (!SL || !DL || SL->kind != TL_FRAG_MMA_C || DL->kind != TL_FRAG_MMA_C || SL->shape[0] != DL->shape[0] ||
      SL->shape[1] != DL->shape[1] || SL->threads != DL->threads) {
    tl_error(d, loc,
             "T.copy between fragments '%s' and '%s' of different layouts is not lowered yet (lowered: "
             "two T.gemm accumulators of one shape)",
             src ? src->name : "?", dst ? dst->name : "?");
    return NULL;
  }
  int64_t BN = SL->shape[1], E = SL->total;
  tl_stmt *out[5] = {0};
  /* the scratch tile, row-major, in the destination's dtype (the cast is done on the way in) */
  tl_var *nm = tl_names_fresh_var(names, loc, "relayout", dst->dtype, TL_VAR_LET); /* reserves the name */
  tl_expr **shape = tl_arena_alloc(&M->arena, sizeof(tl_expr *));
  if (!nm || !shape || !(shape[0] = tl_lo_int(M, loc, E))) goto oom;
  tl_buffer *sc = tl_ir_new_buffer(M, loc, nm->name, dst->dtype, TL_SCOPE_SHARED_DYN, 1, shape);
  if (!sc || !(out[0] = tl_ir_stmt(M, loc, TL_STMT_ALLOC))) goto oom;
  out[0]->u.alloc.buffer = sc;
  /* a previous use of this copy (in a loop) may still be reading */
  if (!(out[1] = sync_threads(M, loc)) || !(out[3] = sync_threads(M, loc))) goto oom;
  const tl_frag_layout *lays[2] = {SL, DL};
  for (int side = 0; side < 2; side++) {
    tl_var *r = tl_names_fresh_var(names, loc, "rr", TL_INT32, TL_VAR_LOOP);
    if (!r) goto oom;
    tl_expr *rv = tl_ir_var(M, loc, r), *i, *j;
    mma_c_coords_ir(M, loc, lays[side], tl_lo_thread_index(M, loc), rv, &i, &j);
    tl_expr *flat = tl_lo_add(M, loc, tl_lo_mul(M, loc, i, BN), j);
    tl_expr **fx = tl_arena_alloc(&M->arena, sizeof(tl_expr *)), **rx = tl_arena_alloc(&M->arena, sizeof(tl_expr *));
    if (!flat || !fx || !rx) goto oom;
    fx[0] = flat;
    rx[0] = rv;
    tl_stmt *body;
    if (side == 0) {
      tl_expr *v = tl_ir_load(M, loc, src, 1, rx);
      body = v ? tl_lo_store(M, loc, sc, 1, fx, tl_lo_cast(M, loc, dst->dtype, v)) : NULL;
    } else {
      tl_expr *v = tl_ir_load(M, loc, sc, 1, fx);
      body = v ? tl_lo_store(M, loc, dst, 1, rx, v) : NULL;
    }
    if (!body) goto oom;
    tl_stmt *lp = tl_lo_for(M, loc, TL_LOOP_UNROLL, r, tl_lo_int(M, loc, lays[side]->nregs), body);
    if (!lp) goto oom;
    out[side == 0 ? 2 : 4] = lp;
  }
  tl_stmt *seq = tl_ir_seq(M, loc, 5, out);
  if (seq) return seq;
oom:
  tl_error(d, loc, "out of memory while lowering T.copy");
  return NULL;
}
