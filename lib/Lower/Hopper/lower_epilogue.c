/* The TMA-store epilogue of a warp-specialized GEMM (lib/Lower, called by
 * lower-tile-ops for T.copy(C_frag, C[m0, n0]) when lower_tile.c's staged
 * epilogue qualifies for TMA: a warp-specialized kernel on a TMA target, a
 * 16-bit C tensor parameter, BN a multiple of 64, BM <= 256).
 *
 * Requires: C_frag has the MMA_C layout (here the wgmma accumulator
 * partition, frag_layout.h), the consumer threads are the kernel's own
 * `threads` (a multiple of 32), and the caller checked that a BM x BN
 * staging image fits in the shared memory already allocated.
 * Guarantees: C[m0 .. m0+BM, n0 .. n0+BN) receives cast(C_frag) through a
 * 128-byte-swizzled staging image of 64-column panels
 * (tl_smem_layout_set_wgmma; smem-plan aligns it to 1024 bytes) and TMA
 * tensor stores whose boxes the hardware clips at C's edges.  The issuing
 * thread does not wait for its stores: it waits until they have read the
 * image (cp.async.bulk.wait_group.read 0) at the start of the next
 * epilogue, before the barrier that lets the image be written again, and
 * tl_ws_finish adds a last such wait at the end of the consumers' branch
 * (shared memory must outlive the reads), so both the reads and the global
 * writes overlap the next tile's main loop (docs/hopper.md "The epilogue").
 *
 * Two forms:
 *  - per warpgroup (each consumer warpgroup owns whole 64-row m64 blocks of
 *    WN columns, WN a multiple of 64, i.e. the wgmma partition): warpgroup
 *    q = tid / 128 synchronises only its own 128 threads (named barrier
 *    2 + q; barrier 1 is the consumers' T.sync_threads, warp_specialize.c),
 *    writes its blocks with stmatrix (16 x 16 elements per warp and
 *    instruction instead of 8 two-element stores), fences the async proxy,
 *    synchronises again and has its thread 0 store each 64 x 64 box:
 *        if tid % 128 == 0: wait_group.read 0      (the previous tile's stores)
 *        bar(2+q); stmatrix walk; fence.proxy.async; bar(2+q)
 *        if tid % 128 == 0: tma_store per (m64 block, 64-column panel); commit
 *    The first barrier orders the previous tile's reads of the image (which
 *    only the warpgroup's own issuer waited for) before the new writes.
 *  - otherwise the whole tile: barrier 1 over the consumers, two-element
 *    stores of the MMA_C walk, fence, barrier, thread 0 stores each panel
 *    (box BM x 64).
 * stmatrix: for the m16 tile mi and column pair jp of a warp, registers
 * 4*(mi*WN/8 + 2*jp) .. +7 are c0..c3 of n8 tiles 2jp and 2jp+1 (MMA_C),
 * i.e. the fragments of the four 8x8 matrices (rows 0-7 | 8-15) x (columns
 * 16jp .. +7 | +8 .. +15) in stmatrix's register order; lane l addresses
 * row l % 8 + 8 * ((l / 8) % 2) at column 8 * (l / 16) of that 16 x 16
 * block (PTX ISA §9.7.14.5.16; an 8-element row of the swizzled image is
 * 16 contiguous bytes).  Measured against st.global stores:
 * docs/performance.md, "Measurements behind choices in the code". */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "Lower/lower_internal.h"
#include "Lower/smem_layout.h"

#define EMIT(x)                                                                                                        \
  do {                                                                                                                 \
    if (!(x)) {                                                                                                        \
      e->failed = true;                                                                                                \
      return false;                                                                                                    \
    }                                                                                                                  \
  } while (0)

typedef struct epi {
  tl_emitter *e;
  const tl_frag_layout *L;
  tl_buffer *frag, *C, *S;  /* the accumulator, the tensor, the image's flat buffer */
  const tl_smem_layout *SL; /* the image's layout */
  tl_expr *m0, *n0;         /* the tile's origin in C (int32) */
  int64_t threads, BM, BN;
  bool fault; /* TL_TEST_FAULT=swap_lanes (lower_tile.c): lanes 0 and 1 trade places */
} epi;

static tl_expr *V(epi *p, tl_var *v) { return tl_ir_var(p->e->m, p->e->loc, v); }
static tl_expr *I(epi *p, int64_t v) { return tl_emit_int(p->e, v); }
static tl_expr *ADD(epi *p, tl_expr *a, tl_expr *b) { return a && b ? tl_lo_add(p->e->m, p->e->loc, a, b) : NULL; }
static tl_expr *MUL(epi *p, tl_expr *a, int64_t k) { return a ? tl_lo_mul(p->e->m, p->e->loc, a, k) : NULL; }
static tl_expr *DIV(epi *p, tl_expr *a, int64_t k) { return a ? tl_lo_fdiv(p->e->m, p->e->loc, a, k, NULL) : NULL; }
static tl_expr *MOD(epi *p, tl_expr *a, int64_t k) { return a ? tl_lo_fmod(p->e->m, p->e->loc, a, k, NULL) : NULL; }
static tl_expr *EQ(epi *p, tl_expr *a, int64_t k) {
  return a ? tl_ir_binary(p->e->m, p->e->loc, TL_OP_EQ, a, I(p, k)) : NULL;
}
static tl_stmt *CALL(epi *p, tl_intrin op, int n, tl_expr **a) { return tl_emit_call(p->e, op, n, a); }

/* The first row of m16 tile mi of warp-row wm (tl_mma_c_row0 on expressions). */
static tl_expr *row0(epi *p, tl_expr *wm, tl_expr *mi) {
  const tl_frag_layout *L = p->L;
  return L->interleaved ? MUL(p, ADD(p, MUL(p, mi, L->warp_m), wm), 16)
                        : ADD(p, MUL(p, wm, L->warp_tile_m), MUL(p, mi, 16));
}

/* The lane as the walks use it: under the test fault, lanes 0 and 1 swap
 * (lane < 2 ? 1 - lane : lane), so their elements land in each other's
 * places and `tl-run --check` must fail. */
static tl_expr *fault_lane(epi *p, tl_expr *lane) {
  if (!p->fault || !lane) return lane;
  tl_module *m = p->e->m;
  tl_loc loc = p->e->loc;
  tl_expr *c = tl_ir_binary(m, loc, TL_OP_LT, lane, I(p, 2));
  tl_expr *t = tl_ir_binary(m, loc, TL_OP_SUB, I(p, 1), lane);
  return c && t ? tl_ir_select(m, loc, c, t, lane) : NULL;
}

/* The element offset of image element (row, col) in S. */
static tl_expr *img(epi *p, tl_expr *row, tl_expr *col) {
  return row && col ? tl_smem_offset(p->e->m, p->e->loc, p->SL, NULL, row, col) : NULL;
}

/* tmp[0..8) = cast(frag[base .. base+8)) as four two-lane pieces, then one
 * stmatrix.x4 at this lane's row address. */
static tl_stmt *stmatrix_step(epi *p, tl_buffer *tmp, tl_expr *base, tl_expr *row, tl_expr *col) {
  tl_module *m = p->e->m;
  tl_loc loc = p->e->loc;
  tl_stmt *s[5];
  for (int q = 0; q < 4; q++) {
    tl_expr **rx = tl_arena_alloc(&m->arena, sizeof(tl_expr *)), **tx = tl_arena_alloc(&m->arena, sizeof(tl_expr *));
    if (!rx || !tx || !(rx[0] = tl_lo_ramp(m, loc, ADD(p, base, I(p, 2 * q)), 2)) ||
        !(tx[0] = tl_lo_ramp(m, loc, I(p, 2 * q), 2)))
      return NULL;
    tl_expr *ld = tl_ir_load(m, loc, p->frag, 1, rx);
    if (!ld) return NULL;
    ld->dtype = p->frag->dtype;
    ld->dtype.lanes = 2;
    tl_dtype dt = tmp->dtype;
    dt.lanes = 2;
    if (!(s[q] = tl_lo_store(m, loc, tmp, 1, tx, tl_lo_cast(m, loc, dt, ld)))) return NULL;
  }
  tl_expr *a[6] = {
      tl_ir_buffer_ref(m, loc, p->S), img(p, row, col), tl_ir_buffer_ref(m, loc, tmp), I(p, 0), I(p, 4), I(p, 0)};
  if (!(s[4] = CALL(p, TL_INTRIN_PTX_STMATRIX, 6, a))) return NULL;
  return tl_ir_seq(m, loc, 5, s);
}

/* The stmatrix walk of every warp's registers into the image. */
static bool walk_stmatrix(epi *p) {
  tl_emitter *e = p->e;
  const tl_frag_layout *L = p->L;
  int64_t WN = L->warp_tile_n, mt = L->warp_tile_m / 16;
  tl_expr *tid = tl_lo_thread_index(e->m, e->loc);
  tl_expr *w = tl_emit_let(e, "ep_w", DIV(p, tid, 32)), *lane = tl_emit_let(e, "ep_l", fault_lane(p, MOD(p, tid, 32)));
  tl_expr *wm = tl_emit_let(e, "ep_wm", MOD(p, w, L->warp_m)), *wn = tl_emit_let(e, "ep_wn", DIV(p, w, L->warp_m));
  /* this lane's row / column inside a 16 x 16 block */
  tl_expr *lr = tl_emit_let(e, "ep_r", ADD(p, MOD(p, lane, 8), MUL(p, MOD(p, DIV(p, lane, 8), 2), 8)));
  tl_expr *lc = tl_emit_let(e, "ep_c", ADD(p, MUL(p, wn, WN), MUL(p, DIV(p, lane, 16), 8)));
  tl_buffer *tmp = tl_emit_local(e, "ep_pack", p->C->dtype, 8);
  tl_var *mi = tl_names_fresh_var(e->names, e->loc, "ep_mi", TL_INT32, TL_VAR_LOOP);
  tl_var *jp = tl_names_fresh_var(e->names, e->loc, "ep_jp", TL_INT32, TL_VAR_LOOP);
  if (e->failed || !tmp || !mi || !jp) return false;
  tl_expr *base = ADD(p, MUL(p, V(p, mi), WN / 2), MUL(p, V(p, jp), 8));
  tl_expr *row = ADD(p, row0(p, wm, V(p, mi)), lr), *col = ADD(p, lc, MUL(p, V(p, jp), 16));
  tl_stmt *step = stmatrix_step(p, tmp, base, row, col);
  EMIT(step);
  tl_emit_push(e, tl_emit_for(e, mi, mt, TL_LOOP_UNROLL, tl_emit_for(e, jp, WN / 16, TL_LOOP_UNROLL, step)));
  return !e->failed;
}

/* Named barrier 2 + (tid / 128) over the 128 threads of this warpgroup: one
 * constant-id bar.sync per warpgroup under a warp-uniform test (a run-time
 * id makes ptxas reserve all 16 barriers, docs/hopper.md "Pitfalls the code guards against"). */
static tl_stmt *wg_barrier(epi *p, tl_expr *wg) {
  int64_t nwg = p->threads / 128;
  tl_stmt *s = NULL;
  for (int64_t q = nwg - 1; q >= 0; q--) {
    tl_expr *a[2] = {I(p, 2 + q), I(p, 128)};
    tl_stmt *bar = CALL(p, TL_INTRIN_PTX_BAR_SYNC, 2, a);
    if (!bar) return NULL;
    s = q == nwg - 1 ? bar : tl_lo_if(p->e->m, p->e->loc, EQ(p, wg, q), bar, s);
    if (!s) return NULL;
  }
  return s;
}

/* T.ptx_tma_store(C, S, off, 128, rows, 64, m, n) */
static tl_stmt *tma_store(epi *p, tl_expr *off, int64_t rows, tl_expr *r, tl_expr *c) {
  tl_module *m = p->e->m;
  tl_loc loc = p->e->loc;
  tl_expr *a[8] = {tl_ir_buffer_ref(m, loc, p->C),
                   tl_ir_buffer_ref(m, loc, p->S),
                   off,
                   I(p, 128),
                   I(p, rows),
                   I(p, 64),
                   ADD(p, p->m0, r),
                   ADD(p, p->n0, c)};
  return CALL(p, TL_INTRIN_PTX_TMA_STORE, 8, a);
}

/* `if tid % every == 0: T.ptx_bulk_wait_group(0, 1)`: the issuer waits
 * until its previous tile's stores have read the image, just before the
 * image is written again (warp_specialize.c's tl_ws_finish adds the last
 * wait at the end of the consumers' branch). */
static tl_stmt *wait_read(epi *p, int64_t every) {
  tl_expr *w[2] = {I(p, 0), I(p, 1)};
  tl_stmt *s = CALL(p, TL_INTRIN_PTX_BULK_WAIT_GROUP, 2, w);
  tl_expr *tid = tl_lo_thread_index(p->e->m, p->e->loc);
  return s ? tl_lo_if(p->e->m, p->e->loc, EQ(p, every > 1 ? MOD(p, tid, every) : tid, 0), s, NULL) : NULL;
}

static bool per_warpgroup(epi *p) {
  tl_emitter *e = p->e;
  const tl_frag_layout *L = p->L;
  int64_t wg_m = L->warp_m / 4, WN = L->warp_tile_n, mt = L->warp_tile_m / 16, np = WN / 64;
  tl_expr *tid = tl_lo_thread_index(e->m, e->loc);
  tl_expr *wg = tl_emit_let(e, "ep_wg", DIV(p, tid, 128));
  if (e->failed) return false;
  tl_stmt *bar1 = wg_barrier(p, wg), *bar2 = wg_barrier(p, wg);
  EMIT(bar1 && bar2);
  tl_emit_push(e, wait_read(p, 128));
  tl_emit_push(e, bar1);
  if (!walk_stmatrix(p)) return false;
  tl_emit_push(e, CALL(p, TL_INTRIN_PTX_FENCE_PROXY_ASYNC, 0, NULL));
  tl_emit_push(e, bar2);
  /* the issuer: m64 block mi at rows r0 = row0(4 * (wg % wg_m), mi) (the
   * warpgroup's first warp-row), panel q of its WN columns */
  tl_expr *wm0 = tl_emit_let(e, "ep_wm0", MUL(p, MOD(p, wg, wg_m), 4));
  tl_expr *c0 = tl_emit_let(e, "ep_c0", MUL(p, DIV(p, wg, wg_m), WN));
  if (e->failed) return false;
  int64_t n = mt * np;
  tl_stmt **is = tl_arena_alloc(&e->m->arena, (size_t)(n + 1) * sizeof(tl_stmt *));
  EMIT(is);
  for (int64_t mi = 0; mi < mt; mi++)
    for (int64_t q = 0; q < np; q++) {
      tl_expr *r = row0(p, wm0, I(p, mi));
      tl_expr *c = ADD(p, c0, I(p, 64 * q));
      /* panel (c / 64) of BM rows x 64 columns; row r inside it */
      tl_expr *off = ADD(p, MUL(p, DIV(p, c, 64), p->BM * 64), MUL(p, r, 64));
      EMIT(is[mi * np + q] = tma_store(p, off, 64, r, c));
    }
  EMIT(is[n] = CALL(p, TL_INTRIN_PTX_BULK_COMMIT_GROUP, 0, NULL));
  tl_stmt *body = tl_ir_seq(e->m, e->loc, (int)n + 1, is);
  EMIT(body);
  tl_emit_push(e, tl_lo_if(e->m, e->loc, EQ(p, MOD(p, tid, 128), 0), body, NULL));
  return !e->failed;
}

/* The per-warpgroup form applies: whole warpgroups, each owning 64-row
 * blocks (the wgmma partition: warp_m a multiple of 4 and m16 tiles either
 * interleaved or one per warp) of WN columns, WN a multiple of 64. */
static bool per_warpgroup_ok(const epi *p) {
  const tl_frag_layout *L = p->L;
  return p->threads % 128 == 0 && p->threads / 128 <= 14 && L->warp_m % 4 == 0 && L->warp_tile_n % 64 == 0 &&
         (L->interleaved || L->warp_tile_m == 16);
}

/* The whole-tile form's walk: registers (2q, 2q+1) of every m16n8 tile. */
static bool walk_pairs(epi *p) {
  tl_emitter *e = p->e;
  tl_module *m = e->m;
  tl_loc loc = e->loc;
  const tl_frag_layout *L = p->L;
  int64_t WN = L->warp_tile_n, mt = L->warp_tile_m / 16;
  tl_expr *tid = tl_lo_thread_index(m, loc);
  tl_expr *w = tl_emit_let(e, "ep_w", DIV(p, tid, 32)), *lane = tl_emit_let(e, "ep_l", fault_lane(p, MOD(p, tid, 32)));
  tl_expr *wm = tl_emit_let(e, "ep_wm", MOD(p, w, L->warp_m)), *wn = tl_emit_let(e, "ep_wn", DIV(p, w, L->warp_m));
  tl_expr *g = tl_emit_let(e, "ep_g", DIV(p, lane, 4));
  tl_expr *c2 = tl_emit_let(e, "ep_c", ADD(p, MUL(p, wn, WN), MUL(p, MOD(p, lane, 4), 2)));
  tl_var *mi = tl_names_fresh_var(e->names, loc, "ep_mi", TL_INT32, TL_VAR_LOOP);
  tl_var *nj = tl_names_fresh_var(e->names, loc, "ep_nj", TL_INT32, TL_VAR_LOOP);
  tl_var *h = tl_names_fresh_var(e->names, loc, "ep_h", TL_INT32, TL_VAR_LOOP);
  if (e->failed || !mi || !nj || !h) return false;
  tl_expr *reg = ADD(p, MUL(p, ADD(p, MUL(p, V(p, mi), WN / 8), V(p, nj)), 4), MUL(p, V(p, h), 2));
  tl_expr *row = ADD(p, ADD(p, row0(p, wm, V(p, mi)), g), MUL(p, V(p, h), 8));
  tl_expr *col = ADD(p, c2, MUL(p, V(p, nj), 8));
  tl_stmt *st = tl_lo_store_pair(m, loc, p->S, img(p, row, col), p->frag, reg, p->C->dtype);
  EMIT(st);
  tl_emit_push(e, tl_emit_for(e, mi, mt, TL_LOOP_UNROLL,
                              tl_emit_for(e, nj, WN / 8, TL_LOOP_UNROLL, tl_emit_for(e, h, 2, TL_LOOP_UNROLL, st))));
  return !e->failed;
}

static bool whole_tile(epi *p) {
  tl_emitter *e = p->e;
  tl_emit_push(e, wait_read(p, 1));
  tl_emit_push(e, tl_lo_sync_threads(e->m, e->loc));
  if (!walk_pairs(p)) return false;
  tl_emit_push(e, CALL(p, TL_INTRIN_PTX_FENCE_PROXY_ASYNC, 0, NULL));
  tl_emit_push(e, tl_lo_sync_threads(e->m, e->loc));
  int64_t np = p->BN / 64;
  tl_stmt **is = tl_arena_alloc(&e->m->arena, (size_t)(np + 1) * sizeof(tl_stmt *));
  EMIT(is);
  for (int64_t q = 0; q < np; q++) EMIT(is[q] = tma_store(p, I(p, q * p->BM * 64), p->BM, I(p, 0), I(p, 64 * q)));
  EMIT(is[np] = CALL(p, TL_INTRIN_PTX_BULK_COMMIT_GROUP, 0, NULL));
  tl_stmt *body = tl_ir_seq(e->m, e->loc, (int)np + 1, is);
  EMIT(body);
  tl_emit_push(e, tl_lo_if(e->m, e->loc, EQ(p, tl_lo_thread_index(e->m, e->loc), 0), body, NULL));
  return !e->failed;
}

tl_stmt *tl_lower_tma_epilogue(tl_module *m, tl_names *names, tl_loc loc, tl_buffer *frag, const tl_frag_layout *L,
                               tl_buffer *C, tl_expr *m0, tl_expr *n0, int64_t threads, bool fault) {
  tl_emitter em = {.m = m, .names = names, .loc = loc};
  tl_emitter *e = &em;
  if (!L || L->kind != TL_FRAG_MMA_C || L->ndim != 2) return NULL;
  epi p = {
      .e = e, .L = L, .frag = frag, .C = C, .threads = threads, .BM = L->shape[0], .BN = L->shape[1], .fault = fault};
  if (!tl_dtype_eq(m0->dtype, TL_INT32)) m0 = tl_lo_cast(m, loc, TL_INT32, m0);
  if (!tl_dtype_eq(n0->dtype, TL_INT32)) n0 = tl_lo_cast(m, loc, TL_INT32, n0);
  p.m0 = m0;
  p.n0 = n0;
  tl_var *nm = tl_names_fresh_var(names, loc, "C_stage", C->dtype, TL_VAR_LET);
  tl_expr **shape = tl_arena_alloc(&m->arena, 2 * sizeof(tl_expr *));
  if (!m0 || !n0 || !nm || !shape || !(shape[0] = I(&p, p.BM)) || !(shape[1] = I(&p, p.BN))) return NULL;
  tl_buffer *S2 = tl_ir_new_buffer(m, loc, nm->name, C->dtype, TL_SCOPE_SHARED_DYN, 2, shape);
  p.SL = S2 ? tl_smem_layout_set_wgmma(m, S2, 128) : NULL;
  if (!p.SL || !p.SL->flat) return NULL;
  p.S = p.SL->flat;
  tl_stmt *alloc = tl_ir_stmt(m, loc, TL_STMT_ALLOC);
  if (!alloc) return NULL;
  alloc->u.alloc.buffer = p.S;
  tl_emit_push(e, alloc);
  bool ok = per_warpgroup_ok(&p) && L->warp_tile_n % 16 == 0 ? per_warpgroup(&p) : whole_tile(&p);
  tl_stmt *r = ok && !e->failed ? tl_ir_seq(m, loc, (int)e->out.len, e->out.data) : NULL;
  tl_vec_free(&e->out);
  return r;
}
