/* T.gemm on sm_80+ (lib/Lower): the lowering of one T.gemm statement to
 * per-warp ldmatrix + mma.sync.m16n8k16 (the "ss" form: A and B in shared
 * memory, C a fragment).  The warp partition and the C layout it lowers to
 * are frag_layout.c's (tl_gemm_warp_partition, MMA_C); as a reminder:
 *
 * Warp partition (docs/layouts.md "Warp partition", TileLang's
 * ComputeDefaultWarpPartition): (m, n) is valid iff m*n = nwarps,
 * BM % (16m) == 0 and BN % (8n) == 0; FullRow takes the largest valid m,
 * FullCol the largest valid n, Square minimises |n/(2m) - 1| (ties: smaller
 * m).  No valid pair is a compile error stating the rule and the numbers.
 *
 * C layout (docs/layouts.md "The block-tile accumulator"): warp w = wm + m*wn owns the WM x WN
 * warp tile (wm, wn); inside it m16n8 tile (mi, nj) is registers
 * 4*(mi*(WN/8) + nj) .. +3 = c0..c3 of the PTX C fragment (PTX ISA
 * §9.7.14.5.8, Figure "MMA .m16n8k16 fragment layout for accumulator";
 * verified on the GPU, docs/layouts.md).
 *
 * Lowering, per warp (docs/layouts.md "ldmatrix addresses"): registers zeroed if clear_accum; then
 * for each k-step kk of 16: ldmatrix.x4 of A for every m16 tile (.trans when
 * A is stored K x M), ldmatrix.x4 of B for every pair of n8 tiles (.trans when
 * B is stored K x N; .x2 for single n8 tiles when WN % 16 != 0), then one
 * mma per (mi, n8 tile).  The lane's row/column addresses follow the table in
 * docs/layouts.md "ldmatrix addresses"; shared offsets go through tl_smem_offset (the swizzle of the
 * operand, smem_layout.c) on the operand's flat buffer.  The lane, warp-row
 * and warp-column indices are lets computed once; the k-step, m-tile and
 * n-tile loops are T.unroll (the k-step loop only when BK/16 <= 8), so after
 * unrolling every register index is a constant. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "Lower/lower_internal.h"
#include "Lower/smem_layout.h"
#include "Support/Hopper/wgmma.h"

/* ------------------------------------------------------------- lowering */
typedef tl_emitter gm_state;

static void gm_error(gm_state *g, tl_loc loc, const char *msg, const char *a, const char *b) {
  tl_error(g->d, loc, msg, a, b);
  g->failed = true;
}

/* A shared operand: its layout and the (stage, row, col) origin of the region. */
typedef struct operand {
  tl_buffer *buf;
  tl_smem_layout *L;
  tl_expr *stage, *row0, *col0;
  int64_t rows, cols; /* the region's 2-D extents */
} operand;

static bool get_operand(gm_state *g, const tl_region *r, const char *which, operand *o) {
  tl_buffer *b = r->buffer;
  memset(o, 0, sizeof *o);
  o->buf = b;
  if (!b || (b->scope != TL_SCOPE_SHARED && b->scope != TL_SCOPE_SHARED_DYN)) {
    gm_error(g, g->loc,
             "T.gemm with %s '%s' outside shared memory is not lowered yet (stage it through "
             "T.alloc_shared)",
             which, b ? b->name : "?");
    return false;
  }
  if (b->ndim != 2 && b->ndim != 3) {
    gm_error(g, g->loc, "T.gemm with %s '%s' of rank other than 2 or 3 is not lowered yet", which, b->name);
    return false;
  }
  o->L = tl_smem_layout_get(g->m, b);
  if (!o->L) {
    gm_error(g, g->loc, "T.gemm: shared buffer %s '%s' needs a static shape", which, b->name);
    return false;
  }
  int nd = b->ndim;
  tl_expr *mins[3];
  int64_t ext[3];
  for (int k = 0; k < nd; k++) {
    if (r->ndim == 0) {
      mins[k] = tl_emit_int(g, 0);
      if (!tl_expr_is_const_int(b->shape[k], &ext[k])) ext[k] = -1;
    } else {
      mins[k] = r->min[k];
      if (!tl_expr_is_const_int(r->extent[k], &ext[k])) ext[k] = -1;
    }
    if (ext[k] < 1) {
      gm_error(g, g->loc, "T.gemm operand %s '%s' needs constant extents", which, b->name);
      return false;
    }
  }
  if (nd == 3) {
    if (ext[0] != 1) {
      gm_error(g, g->loc, "T.gemm operand %s '%s' must select one stage of its staged buffer", which, b->name);
      return false;
    }
    o->stage = mins[0];
  }
  o->row0 = mins[nd - 2];
  o->col0 = mins[nd - 1];
  o->rows = ext[nd - 2];
  o->cols = ext[nd - 1];
  return true;
}

static bool attr_flag(const tl_stmt *s, int k, int64_t dflt) {
  int64_t v = dflt;
  if (k < tl_tile_ops[TL_TILE_GEMM].nattrs && s->u.tile.attrs && s->u.tile.attrs[k])
    tl_expr_is_const_int(s->u.tile.attrs[k], &v);
  return v != 0;
}

/* Does T.gemm s leave its wgmma group in flight (wg_wait ==
 * TL_GEMM_WG_WAIT_NONE, set only by attention_overlap.c)? */
/* The statements emitted so far as one sequence (copied; g->out freed), or
 * NULL after reporting an out-of-memory error (an earlier failed emit too). */
static tl_stmt *emitted(gm_state *g, tl_diag *d, tl_loc loc) {
  tl_stmt *r = g->failed ? NULL : tl_ir_seq(g->m, loc, (int)g->out.len, g->out.data);
  if (!r) tl_error(d, loc, "out of memory while lowering T.gemm");
  tl_vec_free(&g->out);
  return r;
}

/* Gives up on a T.gemm: reports running out of memory when oom (other errors
 * were reported where they were found) and frees what was emitted; NULL. */
static tl_stmt *abandon(gm_state *g, tl_loc loc, bool oom) {
  if (oom) tl_error(g->d, loc, "out of memory while lowering T.gemm");
  tl_vec_free(&g->out);
  return NULL;
}

/* Emits kloop (the k-step loop of wgmma calls into C) as one wgmma group:
 * the loop, T.ptx_wgmma_commit(), then T.ptx_wgmma_wait(0, C, 0, nregs) when
 * wait (nregs: C's registers a thread). */
static void wg_group(gm_state *g, tl_stmt *kloop, tl_buffer *C, int64_t nregs, bool wait) {
  tl_emit_push(g, kloop);
  tl_emit_push(g, tl_emit_call(g, TL_INTRIN_PTX_WGMMA_COMMIT, 0, NULL));
  tl_expr *wargs[4] = {tl_emit_int(g, 0), tl_ir_buffer_ref(g->m, g->loc, C), tl_emit_int(g, 0), tl_emit_int(g, nregs)};
  if (wait) tl_emit_push(g, tl_emit_call(g, TL_INTRIN_PTX_WGMMA_WAIT, 4, wargs));
}

static bool no_wait(const tl_stmt *s) {
  int64_t v = 0;
  if (5 < tl_tile_ops[TL_TILE_GEMM].nattrs && s->u.tile.attrs && s->u.tile.attrs[5])
    tl_expr_is_const_int(s->u.tile.attrs[5], &v);
  return v == TL_GEMM_WG_WAIT_NONE;
}

/* Offset of logical (row, col) of operand o (relative to its region). */
static tl_expr *op_offset(gm_state *g, const operand *o, tl_expr *row, tl_expr *col) {
  tl_expr *r = tl_lo_add(g->m, g->loc, o->row0, row);
  tl_expr *c = tl_lo_add(g->m, g->loc, o->col0, col);
  if (!r || !c) return NULL;
  return tl_smem_offset(g->m, g->loc, o->L, o->stage, r, c);
}

tl_expr *tl_gemm_b_offset(tl_emitter *e, const tl_smem_layout *L, tl_expr *stage, tl_expr *row0, tl_expr *col0, bool tb,
                          int64_t nd, tl_expr *lane, tl_expr *wn_off, int64_t warp_n, int64_t WN, tl_var *kk,
                          int64_t ksteps, tl_var *nj, int64_t nb, bool compact) {
  tl_module *M = e->m;
  tl_loc loc = e->loc;
  /* lane parts (docs/layouts.md "ldmatrix addresses"): rows l%16 (or 8*(l%16/8) + l%8 transposed),
   * columns 8*(l/16) for an x4 load of two n8 tiles */
  tl_expr *l16 = tl_lo_fmod(M, loc, lane, 16, NULL), *l8 = tl_lo_fmod(M, loc, lane, 8, NULL);
  tl_expr *hi16 = tl_lo_mul(M, loc, tl_lo_fdiv(M, loc, lane, 16, NULL), 8);
  tl_expr *mid8 = tl_lo_mul(M, loc, tl_lo_fdiv(M, loc, l16, 8, NULL), 8);
  tl_expr *nsel = nd == 16 ? hi16 : tl_emit_int(e, 0);
  tl_expr *b_r, *b_c;
  if (!tb) {
    b_r = tl_emit_let(e, "b_row", l16);
    b_c = tl_emit_let(e, "b_col", tl_lo_add(M, loc, wn_off, nsel));
  } else {
    b_r = tl_emit_let(e, "b_row", tl_lo_add(M, loc, tl_lo_add(M, loc, wn_off, nsel), l8));
    b_c = tl_emit_let(e, "b_col", mid8);
  }
  if (!b_r || !b_c || !kk || !nj) return NULL;
  /* compact form: the lane column's chunk is 0 or 1 plus the warp offsets'
   * chunks (mod 8 chunks of 8 16-bit elements); the region must start on a
   * 64-element panel */
  int64_t c0 = 0, mask = tb ? 1 : (nd == 16 ? 1 : 0);
  for (int64_t w = 0; !tb && w < warp_n; w++) mask |= (w * WN / 8) % 8;
  tl_expr *off = NULL;
  if (compact && tl_expr_is_const_int(col0, &c0) && c0 % 64 == 0)
    off = tb ? tl_smem_offset_unrolled(M, loc, L, stage, tl_lo_add(M, loc, row0, b_r), nd, nj, nb,
                                       tl_lo_add(M, loc, col0, b_c), mask, 16, kk, ksteps)
             : tl_smem_offset_unrolled(M, loc, L, stage, tl_lo_add(M, loc, row0, b_r), 16, kk, ksteps,
                                       tl_lo_add(M, loc, col0, b_c), mask, nd, nj, nb);
  if (off) return off;
  tl_expr *kx = tl_lo_mul(M, loc, tl_ir_var(M, loc, kk), 16);
  tl_expr *nx = tl_lo_mul(M, loc, tl_ir_var(M, loc, nj), nd);
  tl_expr *row = tb ? tl_lo_add(M, loc, b_r, nx) : tl_lo_add(M, loc, b_r, kx);
  tl_expr *col = tb ? tl_lo_add(M, loc, b_c, kx) : tl_lo_add(M, loc, b_c, nx);
  return tl_smem_offset(M, loc, L, stage, tl_lo_add(M, loc, row0, row), tl_lo_add(M, loc, col0, col));
}

bool tl_gemm_is_wgmma(const tl_stmt *s) {
  if (!s || s->kind != TL_STMT_TILE || s->u.tile.op != TL_TILE_GEMM || s->u.tile.nargs < 3) return false;
  for (int k = 0; k < 2; k++) {
    const tl_operand *o = &s->u.tile.args[k];
    const tl_buffer *b = o->kind == TL_OPND_REGION ? o->region.buffer : NULL;
    if (k == 0 && b && b->scope == TL_SCOPE_FRAGMENT) continue; /* the rs form (tl_lower_wgmma_rs) */
    if (!b || (b->scope != TL_SCOPE_SHARED && b->scope != TL_SCOPE_SHARED_DYN)) return false;
    const tl_smem_layout *L = b->layout;
    if (!L || !L->wgmma) return false;
  }
  return true;
}

/* The wgmma descriptor operands of operand o (a TMA/wgmma image, smem_layout.h)
 * for the 64 (A) or n (B) M/N indices from i0 and the instruction's k (16,
 * or 32 for 8-bit inputs) from k0
 * (relative to o's region): the element offset of the start address and the
 * layout constants (docs/simt-ir.md "wgmma": the canonical layouts).  The
 * image stores panels of nE = W / eb elements per row (W the swizzle span, eb the element bytes),
 * H rows each, one after another.  K-major (the operand's columns are K):
 * row i at W bytes, 8-row groups at SBO = 8W, k within the panel row.
 * MN-major (the columns are M or N): the k-th row at W bytes, 8-row groups
 * at SBO = 8W, the next panel of nE columns at LBO = H*W. */
static tl_expr *wg_operand(gm_state *g, const operand *o, bool kmajor, tl_expr *i0, tl_expr *k0, tl_expr **args) {
  tl_module *M = g->m;
  tl_loc loc = g->loc;
  const tl_smem_layout *L = o->L;
  int64_t W = L->swizzle_bytes, nE = W / L->elem_bytes, H = L->rows;
  tl_expr *r = tl_lo_add(M, loc, o->row0, kmajor ? i0 : k0);
  tl_expr *c = tl_lo_add(M, loc, o->col0, kmajor ? k0 : i0);
  tl_expr *off = tl_lo_add(M, loc, tl_lo_mul(M, loc, tl_lo_fdiv(M, loc, c, nE, NULL), H * nE),
                           tl_lo_add(M, loc, tl_lo_mul(M, loc, r, nE), tl_lo_fmod(M, loc, c, nE, NULL)));
  if (o->stage) off = tl_lo_add(M, loc, tl_lo_mul(M, loc, o->stage, L->stage_elems), off);
  args[0] = tl_ir_buffer_ref(M, loc, L->flat);
  args[1] = off;
  args[2] = tl_emit_int(g, W);
  args[3] = tl_emit_int(g, kmajor ? 16 : H * W);
  args[4] = tl_emit_int(g, 8 * W);
  args[5] = tl_emit_int(g, kmajor ? 0 : 1);
  return off;
}

/* T.gemm as wgmma (operands in TMA/wgmma images; C's MMA_C layout has
 * warp_m = 4 * wg_m warps along M and 16-row m16 tiles, interleaved when a
 * warpgroup has mt > 1 m64 blocks, so warpgroup q = tid / 128 owns the m64
 * blocks at rows 16*warp_m*mi + 64*(q % wg_m) and columns WN*(q / wg_m) of
 * C, and register mi*WN/2 + i of the layout is d_i of block mi's m64nNk16
 * accumulator map):
 *     T.ptx_wgmma_fence()
 *     for kk in T.unroll(K / KI):          # serial beyond 8 steps
 *         for mi in T.unroll(mt): for nt in T.unroll(WN / NI):
 *             T.ptx_wgmma_ss(C, mi*WN/2 + nt*NI/2, A <rows 16*warp_m*mi + 64*wa, k KI*kk>,
 *                            B <cols WN*wb + NI*nt, k KI*kk>, NI, 1)
 *     T.ptx_wgmma_commit()
 *     T.ptx_wgmma_wait(0, C, 0, nregs)
 * (T.gemm's wg_wait is not honoured: the warp-specialize pass releases a
 * stage only after the group that read it completed; the internal value
 * TL_GEMM_WG_WAIT_NONE, which attention_overlap.c sets, leaves the wait
 * out: that pass places it).
 * clear_accum zeroes C first.  NI: the largest multiple of 8 up to 256
 * dividing WN (and of B's panel width when B is N-contiguous).  KI: the
 * instruction's K for the operands' dtype (lib/Support/Hopper/wgmma.h: 16
 * for float16/bfloat16, 32 for float8_e4m3/e5m2, which are K-major). */
static tl_stmt *lower_wgmma(gm_state *g, const operand *A, const operand *B, tl_buffer *C, const tl_frag_layout *CL,
                            bool ta, bool tb, bool clear, int64_t K, bool wait) {
  tl_module *M = g->m;
  tl_loc loc = g->loc;
  int64_t wg_m = CL->warp_m / 4, WN = CL->warp_tile_n, NI = 8, mt = CL->warp_tile_m / 16;
  int64_t nEB = B->L->swizzle_bytes / B->L->elem_bytes, KI = tl_wgmma_type_of(A->buf->dtype).k;
  for (int64_t d = 8; d <= 256 && d <= WN; d += 8)
    if (WN % d == 0 && (tb || d % nEB == 0)) NI = d;
  if ((mt > 1) != CL->interleaved || CL->warp_m % 4 != 0 || (!tb && NI % nEB != 0) || KI == 0 || K % KI != 0) {
    tl_error(g->d, loc, "internal error: T.gemm as wgmma with an accumulator layout it cannot use");
    return NULL;
  }
  tl_expr *tid = tl_lo_thread_index(M, loc);
  tl_expr *wg = tl_emit_let(g, "wg", tl_lo_fdiv(M, loc, tid, 128, NULL));
  tl_expr *wa = tl_emit_let(g, "wg_m", tl_lo_fmod(M, loc, wg, wg_m, NULL));
  tl_expr *wb = tl_emit_let(g, "wg_n", tl_lo_fdiv(M, loc, wg, wg_m, NULL));
  if (g->failed) return NULL;
  if (clear) tl_emit_zero_fill(g, C, CL->nregs);
  tl_emit_push(g, tl_emit_call(g, TL_INTRIN_PTX_WGMMA_FENCE, 0, NULL));
  tl_var *kk = tl_names_fresh_var(g->names, loc, "kk", TL_INT32, TL_VAR_LOOP);
  tl_var *nt = tl_names_fresh_var(g->names, loc, "nt", TL_INT32, TL_VAR_LOOP);
  tl_var *mi = tl_names_fresh_var(g->names, loc, "mi", TL_INT32, TL_VAR_LOOP);
  if (!kk || !nt || !mi) return NULL;
  tl_expr *k0 = tl_lo_mul(M, loc, tl_ir_var(M, loc, kk), KI);
  tl_expr *ntv = tl_ir_var(M, loc, nt), *miv = tl_ir_var(M, loc, mi);
  tl_expr *args[16];
  /* m64 block mi of this warpgroup: rows 16*warp_m*mi + 64*wa (tl_mma_c_row0);
   * its registers follow the previous blocks' WN/2 */
  args[0] = tl_ir_buffer_ref(M, loc, C);
  args[1] = tl_lo_add(M, loc, tl_lo_mul(M, loc, miv, WN / 2), tl_lo_mul(M, loc, ntv, NI / 2));
  wg_operand(g, A, !ta, tl_lo_add(M, loc, tl_lo_mul(M, loc, wa, 64), tl_lo_mul(M, loc, miv, 16 * CL->warp_m)), k0,
             &args[2]);
  wg_operand(g, B, tb, tl_lo_add(M, loc, tl_lo_mul(M, loc, wb, WN), tl_lo_mul(M, loc, ntv, NI)), k0, &args[8]);
  args[14] = tl_emit_int(g, NI);
  args[15] = tl_emit_int(g, 1);
  tl_stmt *mma =
      tl_emit_for(g, mi, mt, TL_LOOP_UNROLL,
                  tl_emit_for(g, nt, WN / NI, TL_LOOP_UNROLL, tl_emit_call(g, TL_INTRIN_PTX_WGMMA_SS, 16, args)));
  int64_t ksteps = K / KI;
  wg_group(g, tl_emit_for(g, kk, ksteps, ksteps <= 8 ? TL_LOOP_UNROLL : TL_LOOP_SERIAL, mma), C, CL->nregs, wait);
  if (g->failed) return NULL;
  return tl_ir_seq(M, loc, (int)g->out.len, g->out.data);
}

/* The rs form as wgmma (A a fragment whose MMA_C layout has 16-row warp
 * tiles split over warp_m warps and one column of warps: docs/hopper.md "Accumulators"
 * and docs/simt-ir.md "wgmma": registers 8*kk .. 8*kk + 7 of a thread are
 * a0.lo .. a3.hi of the m16n8k16 A map of its warp's 16 rows at k-step kk,
 * which is what wgmma.m64nNk16 reads from registers for the warp's rows of
 * its warpgroup's m64 block; tl_gemm_rs_a_check re-derives the map), B a
 * TMA/wgmma image, C the wgmma accumulator of warpgroups that split only M
 * (one m64 block each: warp_m = 4 * warpgroups, warp tile 16 x BN):
 *     T.ptx_wgmma_fence()
 *     for kk in T.unroll(K / 16): for nt in T.unroll(BN / NI):
 *         T.ptx_wgmma_rs(C, nt*NI/2, A, 8*kk, B <cols NI*nt, k 16*kk>, NI, 1)
 *     T.ptx_wgmma_commit()
 *     T.ptx_wgmma_wait(0, C, 0, nregs)
 * clear_accum zeroes C first.  warp_specialize.c matched the shapes; a
 * layout this cannot use is an error, never a wrong result. */
tl_stmt *tl_lower_wgmma_rs(tl_module *m, const tl_stmt *s, tl_names *names, tl_diag *d) {
  gm_state gs = {.m = m, .d = d, .names = names, .loc = s->loc};
  gm_state *g = &gs;
  tl_loc loc = s->loc;
  bool tb = attr_flag(s, 1, 0), clear = attr_flag(s, 3, 0);
  tl_buffer *A = s->u.tile.args[0].region.buffer, *C = s->u.tile.args[2].region.buffer;
  const tl_frag_layout *AL = tl_frag_layout_of(A), *CL = tl_frag_layout_of(C);
  int64_t bad_i = -1, bad_k = -1;
  if (attr_flag(s, 0, 0) || !AL || !CL || AL->kind != TL_FRAG_MMA_C || CL->kind != TL_FRAG_MMA_C || CL->warp_n != 1 ||
      CL->warp_m % 4 != 0 || CL->warp_tile_m != 16 || CL->interleaved || AL->warp_tile_m != 16 ||
      AL->shape[0] != CL->shape[0] || !tl_gemm_rs_a_check(AL, CL->warp_m, &bad_i, &bad_k)) {
    tl_error(d, loc, "internal error: T.gemm as wgmma with A in fragment '%s' and a layout it cannot use",
             A ? A->name : "?");
    return NULL;
  }
  operand B;
  if (!get_operand(g, &s->u.tile.args[1].region, "B", &B)) goto fail;
  int64_t K = AL->shape[1], WN = CL->warp_tile_n, bk = tb ? B.cols : B.rows, bn = tb ? B.rows : B.cols;
  tl_dtype dA = A->dtype, dC = C->dtype;
  bool ab16 = tl_dtype_eq(dA, B.buf->dtype) && dA.bits == 16 && (dA.code == TL_TYPE_FLOAT || dA.code == TL_TYPE_BFLOAT);
  bool c_ok = (dC.code == TL_TYPE_FLOAT && dC.bits == 32) ||
              (dC.code == TL_TYPE_FLOAT && dC.bits == 16 && dA.code == TL_TYPE_FLOAT);
  if (bk != K || bn != CL->shape[1] || WN != bn || K % 16 != 0 || !ab16 || !c_ok) {
    tl_error(d, loc, "internal error: T.gemm as wgmma with A in fragment '%s': shapes or dtypes it cannot use",
             A->name);
    goto fail;
  }
  int64_t nEB = B.L->swizzle_bytes / B.L->elem_bytes, NI = 8;
  for (int64_t dd = 8; dd <= 256 && dd <= WN; dd += 8)
    if (WN % dd == 0 && (tb || dd % nEB == 0)) NI = dd;
  if (!tb && NI % nEB != 0) {
    tl_error(d, loc, "internal error: T.gemm as wgmma: B's panels do not split into wgmma N chunks");
    goto fail;
  }
  if (clear) tl_emit_zero_fill(g, C, CL->nregs);
  tl_emit_push(g, tl_emit_call(g, TL_INTRIN_PTX_WGMMA_FENCE, 0, NULL));
  tl_var *kk = tl_names_fresh_var(names, loc, "kk", TL_INT32, TL_VAR_LOOP);
  tl_var *nt = tl_names_fresh_var(names, loc, "nt", TL_INT32, TL_VAR_LOOP);
  if (!kk || !nt) goto oom;
  tl_expr *kkv = tl_ir_var(m, loc, kk), *ntv = tl_ir_var(m, loc, nt);
  tl_expr *args[12];
  args[0] = tl_ir_buffer_ref(m, loc, C);
  args[1] = tl_lo_mul(m, loc, ntv, NI / 2);
  args[2] = tl_ir_buffer_ref(m, loc, A);
  args[3] = tl_lo_mul(m, loc, kkv, 8);
  wg_operand(g, &B, tb, tl_lo_mul(m, loc, ntv, NI), tl_lo_mul(m, loc, kkv, 16), &args[4]);
  args[10] = tl_emit_int(g, NI);
  args[11] = tl_emit_int(g, 1);
  tl_stmt *mma = tl_emit_for(g, nt, WN / NI, TL_LOOP_UNROLL, tl_emit_call(g, TL_INTRIN_PTX_WGMMA_RS, 12, args));
  /* k unrolled: A's register index constant */
  wg_group(g, tl_emit_for(g, kk, K / 16, TL_LOOP_UNROLL, mma), C, CL->nregs, !no_wait(s));
  return emitted(g, d, loc);
oom:
  return abandon(g, loc, true);
fail:
  return abandon(g, loc, false);
}

/* The mma.sync instruction of T.gemm s (lib/Support/mma.h; packed_int4:
 * int4/uint4 pairs in int8/uint8 bytes, pack_int4.c) for A, B, C dtypes and
 * K (the operands' K extent: bytes when packed); false after a located error
 * (dtypes without an instruction, K not a multiple of its k-step). */
static bool gemm_instruction(const tl_stmt *s, tl_dtype dA, tl_dtype dB, tl_dtype dC, int64_t K, tl_diag *d,
                             tl_mma_info *out) {
  tl_loc loc = s->loc;
  bool packed = attr_flag(s, 6, 0);
  tl_mma_info mmi = packed ? tl_mma_info_packed4(dA, dC) : tl_mma_info_of(dA, dC);
  *out = mmi;
  if (!tl_mma_operands_match(dA, dB) || mmi.kind == TL_MMA_KIND_NONE || (mmi.packed && !packed)) {
    tl_error(d, loc,
             "T.gemm with A %s, B %s and C %s is not lowered yet (lowered: float16 with float32 or "
             "float16 accumulators, bfloat16 with float32, float32/tfloat32 (as tf32) with float32, "
             "int8/uint8 with int32, float8_e4m3/float8_e5m2 with float32, float64 with float64, "
             "int4/uint4 with int32)",
             tl_dtype_name(dA), tl_dtype_name(dB), tl_dtype_name(dC));
    return false;
  }
  if (packed && K % mmi.k != 0) {
    tl_error(d, loc,
             "T.gemm with int4 operands: K = %lld is not a multiple of 64 (the k-step of mma.sync.m16n8k64); "
             "the tile rule is K %% 64 == 0",
             (long long)K * 2);
    return false;
  }
  if (K % mmi.k != 0) {
    tl_error(d, loc,
             "T.gemm: K = %lld is not a multiple of %d (the k-step of mma.sync.%s); the tile "
             "rule is K %% %d == 0",
             (long long)K, mmi.k, mmi.shape, mmi.k);
    return false;
  }
  return true;
}

tl_stmt *tl_lower_gemm(tl_module *m, const tl_stmt *s, tl_names *names, int64_t threads, bool compact_addresses,
                       tl_diag *d) {
  gm_state gs = {.m = m, .d = d, .names = names, .loc = s->loc};
  gm_state *g = &gs;
  tl_module *M = m;
  tl_loc loc = s->loc;
  if (s->u.tile.nargs < 3) {
    tl_error(d, loc, "T.gemm needs A, B and C");
    return NULL;
  }
  bool ta = attr_flag(s, 0, 0), tb = attr_flag(s, 1, 0), clear = attr_flag(s, 3, 0);
  const tl_region *rc = &s->u.tile.args[2].region;
  tl_buffer *C = rc->buffer;
  tl_frag_layout *CL = tl_frag_layout_of(C);
  if (!CL || CL->kind != TL_FRAG_MMA_C) {
    tl_error(d, loc, "internal error: T.gemm accumulator '%s' has no mma layout", C ? C->name : "?");
    return NULL;
  }
  operand A, B;
  if (!get_operand(g, &s->u.tile.args[0].region, "A", &A) || !get_operand(g, &s->u.tile.args[1].region, "B", &B))
    goto fail;
  int64_t BM = CL->shape[0], BN = CL->shape[1];
  int64_t K = ta ? A.rows : A.cols;
  int64_t am = ta ? A.cols : A.rows, bk = tb ? B.cols : B.rows, bn = tb ? B.rows : B.cols;
  if (am != BM || bn != BN || bk != K) {
    tl_error(d, loc, "T.gemm operand shapes disagree: A gives M=%lld, K=%lld; B gives K=%lld, N=%lld; C is %lldx%lld",
             (long long)am, (long long)K, (long long)bk, (long long)bn, (long long)BM, (long long)BN);
    goto fail;
  }
  tl_dtype dA = A.buf->dtype, dB = B.buf->dtype, dC = C->dtype;
  tl_mma_info mmi;
  if (!gemm_instruction(s, dA, dB, dC, K, d, &mmi)) goto fail;
  if (tl_gemm_is_wgmma(s)) {
    tl_stmt *r = lower_wgmma(g, &A, &B, C, CL, ta, tb, clear, K, !no_wait(s));
    if (!r && g->failed) goto oom;
    if (!r) goto fail;
    tl_vec_free(&g->out);
    return r;
  }
  if (CL->threads != threads || threads % 32 != 0) {
    tl_error(d, loc, "internal error: T.gemm layout of '%s' was made for another thread count", C->name);
    goto fail;
  }
  if (mmi.kind != TL_MMA_KIND_F16) { /* tf32, int8, f64: lower_gemm_types.c */
    tl_gemm_smem_operand oa = {A.buf, A.L, A.stage, A.row0, A.col0}, ob = {B.buf, B.L, B.stage, B.row0, B.col0};
    tl_stmt *r = tl_lower_gemm_types(g, &mmi, &oa, &ob, C, CL, ta, tb, clear, K);
    if (!r) goto oom;
    tl_vec_free(&g->out);
    return r;
  }
  int64_t wmN = CL->warp_m, WM = CL->warp_tile_m, WN = CL->warp_tile_n;
  int64_t mt = WM / 16, nt8 = WN / 8, nd = WN % 16 == 0 ? 16 : 8, nb = WN / nd;
  int64_t bregs = nd == 16 ? 8 : 4; /* 16-bit B elements per ldmatrix */
  int64_t ksteps = K / 16;

  tl_buffer *Ar = tl_emit_local(g, "A_regs", dA, 8 * mt);
  tl_buffer *Br = tl_emit_local(g, "B_regs", dB, bregs * nb);
  if (g->failed) goto oom;
  tl_expr *tid = tl_lo_thread_index(M, loc);
  tl_expr *lane = tl_emit_let(g, "lane", tl_lo_fmod(M, loc, tid, 32, NULL));
  tl_expr *wm = tl_emit_let(g, "warp_m", tl_lo_fmod(M, loc, tl_lo_fdiv(M, loc, tid, 32, NULL), wmN, NULL));
  tl_expr *wn = tl_emit_let(g, "warp_n", tl_lo_fdiv(M, loc, tid, 32 * wmN, NULL));
  if (g->failed) goto oom;
  if (clear) tl_emit_zero_fill(g, C, CL->nregs);
  tl_expr *l16 = tl_lo_fmod(M, loc, lane, 16, NULL), *l8 = tl_lo_fmod(M, loc, lane, 8, NULL);
  tl_expr *hi16 = tl_lo_mul(M, loc, tl_lo_fdiv(M, loc, lane, 16, NULL), 8); /* 8*(l/16) */
  tl_expr *mid8 = tl_lo_mul(M, loc, tl_lo_fdiv(M, loc, l16, 8, NULL), 8);   /* 8*((l%16)/8) */
  tl_expr *wm_off = tl_lo_mul(M, loc, wm, WM), *wn_off = tl_lo_mul(M, loc, wn, WN);
  /* Lane parts of the ldmatrix row/col (docs/layouts.md "ldmatrix addresses"), warp offsets included. */
  tl_expr *a_r, *a_c;
  if (!ta) {
    a_r = tl_emit_let(g, "a_row", tl_lo_add(M, loc, wm_off, l16));
    a_c = tl_emit_let(g, "a_col", hi16);
  } else {
    a_r = tl_emit_let(g, "a_row", tl_lo_add(M, loc, hi16, l8));
    a_c = tl_emit_let(g, "a_col", tl_lo_add(M, loc, wm_off, mid8));
  }
  if (g->failed) goto oom;

  /* for kk: { for mi: ldmatrix A; for nj: ldmatrix B; for mi, q: mma } */
  tl_var *kk = tl_names_fresh_var(names, loc, "kk", TL_INT32, TL_VAR_LOOP);
  tl_var *mi = tl_names_fresh_var(names, loc, "mi", TL_INT32, TL_VAR_LOOP);
  tl_var *nj = tl_names_fresh_var(names, loc, "nj", TL_INT32, TL_VAR_LOOP);
  tl_var *mi2 = tl_names_fresh_var(names, loc, "mi", TL_INT32, TL_VAR_LOOP);
  tl_var *q = tl_names_fresh_var(names, loc, "nq", TL_INT32, TL_VAR_LOOP);
  if (!kk || !mi || !nj || !mi2 || !q) goto oom;
  tl_expr *kx = tl_lo_mul(M, loc, tl_ir_var(M, loc, kk), 16);
  tl_expr *mx = tl_lo_mul(M, loc, tl_ir_var(M, loc, mi), 16);
  /* Compact addresses (tl_smem_offset_unrolled) for A: the lane column part
   * 8*(lane/16) or 8*((lane%16)/8) is chunk 0 or 1, plus the warp offsets'
   * chunks; the region must start on a 64-element panel. */
  int64_t c0A = 0, maskA = 1;
  for (int64_t w = 0; ta && w < wmN; w++) maskA |= (w * WM / 8) % 8;
  tl_expr *offA = NULL;
  if (compact_addresses && tl_expr_is_const_int(A.col0, &c0A) && c0A % 64 == 0)
    offA = ta ? tl_smem_offset_unrolled(M, loc, A.L, A.stage, tl_lo_add(M, loc, A.row0, a_r), 16, kk, ksteps,
                                        tl_lo_add(M, loc, A.col0, a_c), maskA, 16, mi, mt)
              : tl_smem_offset_unrolled(M, loc, A.L, A.stage, tl_lo_add(M, loc, A.row0, a_r), 16, mi, mt,
                                        tl_lo_add(M, loc, A.col0, a_c), maskA, 16, kk, ksteps);
  if (!offA)
    offA = ta ? op_offset(g, &A, tl_lo_add(M, loc, a_r, kx), tl_lo_add(M, loc, a_c, mx))
              : op_offset(g, &A, tl_lo_add(M, loc, a_r, mx), tl_lo_add(M, loc, a_c, kx));
  tl_expr *offB = tl_gemm_b_offset(g, B.L, B.stage, B.row0, B.col0, tb, nd, lane, wn_off, CL->warp_n, WN, kk, ksteps,
                                   nj, nb, compact_addresses);
  tl_expr *argsA[6] = {tl_ir_buffer_ref(M, loc, Ar),
                       tl_lo_mul(M, loc, tl_ir_var(M, loc, mi), 8),
                       tl_ir_buffer_ref(M, loc, A.L->flat),
                       offA,
                       tl_emit_int(g, 4),
                       tl_ir_int(M, loc, TL_BOOL, ta)};
  tl_expr *argsB[6] = {tl_ir_buffer_ref(M, loc, Br),        tl_lo_mul(M, loc, tl_ir_var(M, loc, nj), bregs),
                       tl_ir_buffer_ref(M, loc, B.L->flat), offB,
                       tl_emit_int(g, nd == 16 ? 4 : 2),    tl_ir_int(M, loc, TL_BOOL, !tb)};
  tl_expr *qv = tl_ir_var(M, loc, q), *m2v = tl_ir_var(M, loc, mi2);
  tl_expr *argsM[7] = {
      tl_ir_buffer_ref(M, loc, Ar),    tl_lo_mul(M, loc, m2v, 8),
      tl_ir_buffer_ref(M, loc, Br),    tl_lo_mul(M, loc, qv, 4),
      tl_ir_buffer_ref(M, loc, C),     tl_lo_mul(M, loc, tl_lo_add(M, loc, tl_lo_mul(M, loc, m2v, nt8), qv), 4),
      tl_ir_string(M, loc, "m16n8k16")};
  tl_stmt *ldA = tl_emit_for(g, mi, mt, TL_LOOP_UNROLL, tl_emit_call(g, TL_INTRIN_PTX_LDMATRIX, 6, argsA));
  tl_stmt *ldB = tl_emit_for(g, nj, nb, TL_LOOP_UNROLL, tl_emit_call(g, TL_INTRIN_PTX_LDMATRIX, 6, argsB));
  tl_stmt *mma = tl_emit_for(g, mi2, mt, TL_LOOP_UNROLL,
                             tl_emit_for(g, q, nt8, TL_LOOP_UNROLL, tl_emit_call(g, TL_INTRIN_PTX_MMA, 7, argsM)));
  if (!ldA || !ldB || !mma) goto oom;
  tl_stmt *step[3] = {ldA, ldB, mma};
  tl_stmt *body = tl_ir_seq(M, loc, 3, step);
  tl_emit_push(g, tl_emit_for(g, kk, ksteps, ksteps <= 8 ? TL_LOOP_UNROLL : TL_LOOP_SERIAL, body));
  return emitted(g, d, loc);
oom:
  return abandon(g, loc, true);
fail:
  return abandon(g, loc, false);
}

bool tl_lower_frag_pressure(tl_buffer *const *frags, size_t n) {
  int64_t regs = 0;
  for (size_t i = 0; i < n; i++) {
    const tl_frag_layout *L = tl_frag_layout_of(frags[i]);
    int64_t bytes = tl_dtype_bytes(frags[i]->dtype);
    if (L && bytes > 0) regs += (L->nregs * bytes + 3) / 4;
  }
  return regs > 160;
}
