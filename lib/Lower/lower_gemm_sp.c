/* T.gemm_sp on sm_80+ (lib/Lower): one 2:4 structured-sparse GEMM statement
 * to per-warp plain shared loads + mma.sp::ordered_metadata m16n8k32
 * (T.ptx_mma_sp), on sm_80 and sm_90a alike (no wgmma.sp).
 *
 * Requires: layout inference gave C the MMA_C layout of the warp partition
 * (layout_infer.c's scan_gemm_sp: the partition of a dense T.gemm of C);
 * A_sparse (M, K/2), E (M, K/e_factor) and B (K, N) (or (N, K) with
 * transpose_B) are shared tiles; A float16/bfloat16, C float32.
 * Guarantees: per warp, for each k-step kk of 32 dense K (16 compressed
 * columns): the lane's compressed A elements of every m16 tile (the
 * m16n8k16 A map over the 16x16 compressed tile), its B elements of every
 * n8 tile (the m16n8k32 B map), its metadata register of every m16 tile
 * (E row wm*WM + 16*mi + l/4 in the low half and + 8 in the high half,
 * E columns (32*kk + 16*(l%2)) / e_factor + 0..16/bits-1; lib/Support/mma.h
 * "2:4 structured sparsity"), then one T.ptx_mma_sp per (m16, n8) tile into
 * registers 4*(mi*(WN/8) + nj) .. +3 of C (the T.gemm accumulator map).
 * Refused with a located error: transpose_A / transpose_E, a float16 C,
 * K not a multiple of 32, operands outside shared memory. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "Lower/lower_internal.h"
#include "Lower/smem_layout.h"

typedef struct sp_operand {
  tl_gemm_smem_operand o;
  int64_t rows, cols;
} sp_operand;

static bool sp_get(tl_emitter *g, const tl_region *r, const char *which, sp_operand *p) {
  tl_buffer *b = r->buffer;
  memset(p, 0, sizeof *p);
  if (!b || (b->scope != TL_SCOPE_SHARED && b->scope != TL_SCOPE_SHARED_DYN) || (b->ndim != 2 && b->ndim != 3)) {
    tl_error(g->d, g->loc,
             "T.gemm_sp with %s '%s' outside a 2-D shared tile is not lowered yet (stage it through "
             "T.alloc_shared)",
             which, b ? b->name : "?");
    return false;
  }
  p->o.buf = b;
  p->o.L = tl_smem_layout_get(g->m, b);
  int nd = b->ndim;
  int64_t ext[3];
  for (int k = 0; k < nd; k++) {
    tl_expr *x = r->ndim == 0 ? b->shape[k] : r->extent[k];
    if (!tl_expr_is_const_int(x, &ext[k]) || ext[k] < 1 || !p->o.L) {
      tl_error(g->d, g->loc, "T.gemm_sp operand %s '%s' needs constant extents", which, b->name);
      return false;
    }
  }
  tl_expr *const *mins = r->ndim == 0 ? NULL : r->min;
  if (nd == 3) {
    if (ext[0] != 1) {
      tl_error(g->d, g->loc, "T.gemm_sp operand %s '%s' must select one stage of its staged buffer", which, b->name);
      return false;
    }
    p->o.stage = mins ? mins[0] : tl_ir_int(g->m, g->loc, TL_INT32, 0);
  }
  p->o.row0 = mins ? mins[nd - 2] : tl_ir_int(g->m, g->loc, TL_INT32, 0);
  p->o.col0 = mins ? mins[nd - 1] : tl_ir_int(g->m, g->loc, TL_INT32, 0);
  p->rows = ext[nd - 2];
  p->cols = ext[nd - 1];
  return true;
}

static int64_t sp_attr(const tl_stmt *s, int k) {
  int64_t v = tl_tile_ops[TL_TILE_GEMM_SP].attrs[k].default_int;
  if (s->u.tile.attrs && s->u.tile.attrs[k]) tl_expr_is_const_int(s->u.tile.attrs[k], &v);
  return v;
}

/* The lane's metadata elements of m16 tile `tile` at k-step kk into
 * regs[tile * per + q] (per = 32 / E's bits). */
static tl_stmt *load_meta(tl_emitter *g, const sp_operand *E, tl_buffer *regs, int per, int ef, tl_var *tile,
                          tl_expr *m_base, tl_var *kk, tl_expr *lane_g, tl_expr *lane_t) {
  tl_module *M = g->m;
  tl_loc loc = g->loc;
  tl_stmt *st[4];
  tl_expr *tv = tl_ir_var(M, loc, tile);
  /* E column of the lane's first element: (32*kk + 16*(t % 2)) / ef */
  tl_expr *k0 = tl_lo_add(M, loc, tl_lo_mul(M, loc, tl_ir_var(M, loc, kk), TL_SPARSE_K),
                          tl_lo_mul(M, loc, tl_lo_fmod(M, loc, lane_t, 2, NULL), 16));
  tl_expr *c0 = tl_lo_fdiv(M, loc, k0, ef, NULL);
  for (int q = 0; q < per; q++) {
    int half = q / (per / 2), i = q % (per / 2);
    tl_expr *row = tl_lo_add(M, loc, tl_lo_add(M, loc, m_base, tl_lo_mul(M, loc, tv, 16)),
                             tl_lo_add(M, loc, lane_g, tl_lo_int(M, loc, 8 * half)));
    tl_expr *col = tl_lo_add(M, loc, c0, tl_lo_int(M, loc, i));
    tl_expr *off = tl_smem_offset(M, loc, E->o.L, E->o.stage, tl_lo_add(M, loc, E->o.row0, row),
                                  tl_lo_add(M, loc, E->o.col0, col));
    tl_expr *val = off ? tl_ir_load(M, loc, E->o.L->flat, 1, &off) : NULL;
    tl_expr *idx = tl_lo_add(M, loc, tl_lo_mul(M, loc, tv, per), tl_lo_int(M, loc, q));
    st[q] = val && idx ? tl_lo_store(M, loc, regs, 1, &idx, val) : NULL;
    if (!st[q]) return NULL;
  }
  return tl_ir_seq(M, loc, per, st);
}

static bool sp_check(tl_emitter *g, const tl_stmt *s, const sp_operand *A, const tl_buffer *C, const tl_frag_layout *CL,
                     int64_t threads) {
  if (sp_attr(s, 0) || sp_attr(s, 1)) {
    tl_error(g->d, s->loc, "T.gemm_sp with transpose_A=True or transpose_E=True is not lowered yet");
    return false;
  }
  if (!CL || CL->kind != TL_FRAG_MMA_C || CL->threads != threads) {
    tl_error(g->d, s->loc, "internal error: T.gemm_sp accumulator '%s' has no mma layout", C->name);
    return false;
  }
  if (C->dtype.bits != 32) {
    tl_error(g->d, s->loc, "T.gemm_sp into a %s accumulator is not lowered yet (float32 is)", tl_dtype_name(C->dtype));
    return false;
  }
  if ((2 * A->cols) % TL_SPARSE_K) {
    tl_error(g->d, s->loc,
             "T.gemm_sp: K = %lld is not a multiple of 32 (the k-step of mma.sp.m16n8k32); the tile rule is "
             "K %% 32 == 0",
             (long long)(2 * A->cols));
    return false;
  }
  return true;
}

tl_stmt *tl_lower_gemm_sp(tl_module *M, const tl_stmt *s, tl_names *names, int64_t threads, tl_diag *d) {
  tl_emitter gs = {.m = M, .d = d, .names = names, .loc = s->loc}, *g = &gs;
  tl_loc loc = s->loc;
  sp_operand A, E, B;
  tl_buffer *C = s->u.tile.args[3].region.buffer;
  const tl_frag_layout *CL = tl_frag_layout_of(C);
  if (!sp_get(g, &s->u.tile.args[0].region, "A_sparse", &A) || !sp_get(g, &s->u.tile.args[1].region, "E", &E) ||
      !sp_get(g, &s->u.tile.args[2].region, "B", &B) || !sp_check(g, s, &A, C, CL, threads))
    return NULL;
  bool tb = sp_attr(s, 2) != 0;
  int ef = tl_sparse_e_factor(A.o.buf->dtype, E.o.buf->dtype), per = 32 / E.o.buf->dtype.bits;
  int64_t wmN = CL->warp_m, WM = CL->warp_tile_m, WN = CL->warp_tile_n, mt = WM / 16, nt8 = WN / 8;
  int64_t ksteps = 2 * A.cols / TL_SPARSE_K;
  tl_mma_info ai = tl_mma_info_of(A.o.buf->dtype, C->dtype), bi = tl_mma_sp_b_info();
  tl_buffer *Ar = tl_emit_local(g, "A_regs", A.o.buf->dtype, 8 * mt);
  tl_buffer *Br = tl_emit_local(g, "B_regs", B.o.buf->dtype, 8 * nt8);
  tl_buffer *Er = tl_emit_local(g, "E_regs", E.o.buf->dtype, per * mt);
  if (g->failed) goto oom;
  tl_mma_lanes L = tl_emit_mma_lanes(g, wmN);
  if (g->failed) goto oom;
  tl_expr *wm = L.warp_m, *wn = L.warp_n, *lg = L.lane_g, *lt = L.lane_t;
  if (sp_attr(s, 4)) tl_emit_zero_fill(g, C, CL->nregs);
  tl_var *kk = tl_names_fresh_var(names, loc, "kk", TL_INT32, TL_VAR_LOOP);
  tl_var *v[5];
  static const char *const vn[5] = {"mi", "nj", "mi", "mi", "nq"};
  for (int i = 0; i < 5; i++)
    if (!(v[i] = tl_names_fresh_var(names, loc, vn[i], TL_INT32, TL_VAR_LOOP))) goto oom;
  if (!kk) goto oom;
  tl_expr *kx = tl_ir_var(M, loc, kk), *wmo = tl_lo_mul(M, loc, wm, WM);
  tl_stmt *ldA = tl_gemm_load_frag(g, &A.o, false, true, &ai, Ar, 8, v[0], wmo, tl_lo_mul(M, loc, kx, 16), lg, lt);
  tl_stmt *ldB = tl_gemm_load_frag(g, &B.o, !tb, false, &bi, Br, 8, v[1], tl_lo_mul(M, loc, wn, WN),
                                   tl_lo_mul(M, loc, kx, TL_SPARSE_K), lg, lt);
  tl_stmt *ldE = load_meta(g, &E, Er, per, ef, v[2], wmo, kk, lg, lt);
  if (!ldA || !ldB || !ldE) goto oom;
  tl_expr *m2 = tl_ir_var(M, loc, v[3]), *qv = tl_ir_var(M, loc, v[4]);
  tl_expr *args[9] = {
      tl_ir_buffer_ref(M, loc, Ar),    tl_lo_mul(M, loc, m2, 8),
      tl_ir_buffer_ref(M, loc, Br),    tl_lo_mul(M, loc, qv, 8),
      tl_ir_buffer_ref(M, loc, C),     tl_lo_mul(M, loc, tl_lo_add(M, loc, tl_lo_mul(M, loc, m2, nt8), qv), 4),
      tl_ir_buffer_ref(M, loc, Er),    tl_lo_mul(M, loc, m2, per),
      tl_ir_string(M, loc, "m16n8k32")};
  tl_stmt *call = tl_emit_call(g, TL_INTRIN_PTX_MMA_SP, 9, args);
  tl_stmt *mma =
      call ? tl_emit_for(g, v[3], mt, TL_LOOP_UNROLL, tl_emit_for(g, v[4], nt8, TL_LOOP_UNROLL, call)) : NULL;
  tl_stmt *step[4] = {tl_emit_for(g, v[0], mt, TL_LOOP_UNROLL, ldA), tl_emit_for(g, v[1], nt8, TL_LOOP_UNROLL, ldB),
                      tl_emit_for(g, v[2], mt, TL_LOOP_UNROLL, ldE), mma};
  if (!step[0] || !step[1] || !step[2] || !mma) goto oom;
  tl_emit_push(g,
               tl_emit_for(g, kk, ksteps, ksteps <= 8 ? TL_LOOP_UNROLL : TL_LOOP_SERIAL, tl_ir_seq(M, loc, 4, step)));
  if (g->failed) goto oom;
  tl_stmt *r = tl_ir_seq(M, loc, (int)g->out.len, g->out.data);
  tl_vec_free(&g->out);
  return r;
oom:
  tl_error(d, loc, "out of memory while lowering T.gemm_sp");
  tl_vec_free(&g->out);
  return NULL;
}
