/* Stream-K for the persistent Hopper GEMM of the warp-specialize pass
 * (lib/Lower/Hopper/stream_k.h; tile IR → tile IR pieces that warp_specialize.c
 * places).
 *
 * Why: a persistent grid of B = min(tiles, SMs) blocks runs
 * ceil(tiles / B) waves of whole tiles; at 4096^3 with 128x256x64 tiles on
 * 132 SMs that is 512 tiles, 3.88 waves run as 4 (the makespan of 4 tiles
 * where 3.88 would do), at 8192^3 2048 tiles, 15.5 waves as 16; fewer
 * tiles than SMs (1024^3 with 128x128 tiles: 64) leave SMs idle.  Stream-K
 * gives every block the same share of the tiles x k-tiles work units.
 *
 * Hybrid schedule (data-parallel waves, then stream-K on the last wave):
 * the first measurement split all of the work evenly (block b took units
 * [b*U/B, (b+1)*U/B) of every tile), which made the 132 blocks work on tiles
 * ~15 apart at once and lost the rasterization's L2 reuse (much slower than
 * the persistent grid: docs/performance.md, "Measurements behind choices in
 * the code").  Now block b first runs whole tiles b + j*B for the
 * W = tiles // B full waves (as the persistent grid does), and only the
 * last R = tiles % B tiles are split, their R*n units evenly over the B
 * blocks, so the blocks work on neighbouring tiles throughout.
 *
 * Requires: the persistent plan of warp_specialize.c (a static grid of
 * `tiles` tiles, a k-loop of constant extent n), a float32 accumulator and at
 * least one full wave (tiles >= B = the SMs; tl_sk_plan says why not).
 * Guarantees (what the pieces compute; B blocks, DP = W * B, U = R * n
 * units, all int32, U * B < 2^31 checked by tl_sk_plan):
 *   per block b:    start = b * U // B, end = (b + 1) * U // B,
 *                   t0 = start // n, nseg = W + ceildiv(end - t0 * n, n)
 *   per segment j < W:  t = b + j * B, ka = 0, kb = n, base = j * n
 *   per segment j >= W: t = DP + t0 + (j - W), t' = t - DP,
 *                   ka = max(start - t' * n, 0), kb = min(n, end - t' * n),
 *                   base = W * n + t' * n - start
 * (base: the block's k-tiles before the segment, the stage/phase counter's
 * offset; ka equals start - t0 * n for j == W and 0 after it.)  Below, for
 * the stream-K segments, "t" and "the blocks' ranges" mean t' and the
 * ranges over the last wave's units, and j means j - W.
 * The fixup after the consumers' k-loop (tl_sk_fixup): a segment with
 * ka > 0 or kb < n stores its accumulator to workspace slot
 * 2 * b + min(j, 1) (a block has at most two partial segments: its first and
 * its last), each consumer thread runs T.ptx_fence_gpu(), the consumers
 * sync, thread 0 fences, adds 1 to count[t] (T.ptx_atomic_add, returning
 * the old value), fences again and broadcasts the old value through shared
 * memory (the consumers sync again); the tile's
 * segments are those of the blocks bf..bl whose ranges meet [t*n, (t+1)*n)
 * (the block holding unit u is ((u + 1) * B - 1) // U), so the segment that
 * sees old == bl - bf is the last: it fences, sums ALL the tile's slots in
 * k order (block bf's slot first: 2*bf + 1 when bf started in an earlier
 * tile, else 2*bf; then 2*b for b in bf+1..bl) into the accumulator, so
 * the sum and its rounding do not depend on which block came last, resets
 * count[t] to 0 (the next launch finds the counters zeroed) and runs the
 * kernel's epilogue; the others skip it.  Whole-tile segments run the
 * epilogue directly.  Nothing waits for another block, so any residency of
 * blocks completes.  Memory model (PTX ISA §8.8, release and acquire
 * patterns): every thread's slot stores happen before thread 0's fence
 * through bar.sync, and thread 0's fence.acq_rel.gpu followed by its
 * relaxed .gpu atomic is a release pattern (fences are cumulative); on the
 * reading side thread 0's atomic followed by its fence is the acquire
 * pattern, and bar.sync orders it before every thread's loads.  The
 * per-thread fences around the barriers (before it on the writing side,
 * after it on the reading side) are the same pattern for each thread.
 *
 * The workspace (slots, count) is two global buffers allocated at the top
 * of the kernel (T.alloc_buffer(..., scope="global")): code generation
 * passes each as a hidden pointer parameter after the tensor maps
 * (docs/simt-ir.md "Stream-K"), the runtime allocates them zeroed once per
 * kernel, device and stream (the counters return to zero after every
 * launch), the CPU executor zeroed per launch. */
#include "Lower/Hopper/stream_k.h"

#include <stdio.h>
#include <string.h>

static tl_expr *I(tl_module *m, tl_loc loc, int64_t v) { return tl_lo_int(m, loc, v); }
static tl_expr *V(tl_module *m, tl_loc loc, tl_var *v) { return v ? tl_ir_var(m, loc, v) : NULL; }
static tl_expr *BIN(tl_module *m, tl_loc loc, tl_binop op, tl_expr *a, tl_expr *b) {
  return a && b ? tl_ir_binary(m, loc, op, a, b) : NULL;
}
static tl_expr *CALL2(tl_module *m, tl_loc loc, tl_intrin op, tl_expr *a, tl_expr *b) {
  tl_expr *args[2] = {a, b};
  return a && b ? tl_ir_call(m, loc, op, 2, args) : NULL;
}
static tl_stmt *SEQ(tl_module *m, tl_loc loc, int n, tl_stmt **s) {
  for (int i = 0; i < n; i++)
    if (!s[i]) return NULL;
  return tl_ir_seq(m, loc, n, s);
}

static bool role_vars(tl_names *names, tl_loc loc, tl_sk_role *r, const char *sfx) {
  static const char *const base[8] = {"sk_start", "sk_end", "sk_t0", "sk_nseg", "sk_tile", "sk_ka", "sk_kb", "sk_base"};
  tl_var **v[8] = {&r->start, &r->end, &r->t0, &r->nseg, &r->t, &r->ka, &r->kb, &r->base};
  for (int i = 0; i < 8; i++) {
    char nm[32];
    snprintf(nm, sizeof nm, "%s%s", base[i], sfx);
    if (!(*v[i] = tl_names_fresh_var(names, loc, nm, TL_INT32, TL_VAR_LET))) return false;
  }
  return true;
}

static tl_buffer *buffer(tl_module *m, tl_loc loc, const char *name, tl_dtype t, tl_scope sc, int64_t d0, int64_t d1) {
  int nd = d1 > 0 ? 2 : 1;
  tl_expr **shape = tl_arena_alloc(&m->arena, sizeof(tl_expr *) * (size_t)nd);
  if (!shape || !(shape[0] = I(m, loc, d0)) || (nd == 2 && !(shape[1] = I(m, loc, d1)))) return NULL;
  return tl_ir_new_buffer(m, loc, name, t, sc, nd, shape);
}

const char *tl_sk_prologue_check(tl_stmt *const *body, int li, const tl_buffer *C) {
  bool cleared = false;
  for (int i = 0; i < li; i++) {
    const tl_stmt *s = body[i];
    if (s->kind == TL_STMT_ALLOC || s->kind == TL_STMT_LET) continue;
    if (s->kind == TL_STMT_TILE && s->u.tile.op == TL_TILE_USE_SWIZZLE) continue;
    bool zero = s->kind == TL_STMT_TILE &&
                (s->u.tile.op == TL_TILE_CLEAR ||
                 (s->u.tile.op == TL_TILE_FILL && s->u.tile.nargs == 2 && s->u.tile.args[1].expr &&
                  ((s->u.tile.args[1].expr->kind == TL_EXPR_FLOAT && s->u.tile.args[1].expr->u.fval == 0) ||
                   (s->u.tile.args[1].expr->kind == TL_EXPR_INT && s->u.tile.args[1].expr->u.ival == 0))));
    if (zero && s->u.tile.args[0].kind == TL_OPND_REGION && s->u.tile.args[0].region.buffer == C &&
        tl_lo_whole_region(&s->u.tile.args[0].region)) {
      cleared = true;
      continue;
    }
    return "a statement before the k-loop other than zeroing the accumulator (each block would run it)";
  }
  return cleared ? NULL : "the accumulator is not zeroed before the k-loop";
}

bool tl_sk_plan(tl_module *m, tl_names *names, tl_loc loc, int sms, bool disabled, int64_t tiles, int64_t n,
                const tl_buffer *C, tl_sk *sk, char *why, size_t whysz) {
  memset(sk, 0, sizeof *sk);
  /* waves of whole tiles on sms SMs: a grid of fewer tiles than SMs is one wave that leaves SMs idle */
  int64_t pb = sms, waves = pb > 0 ? (tiles + pb - 1) / pb : 0;
  int64_t BM = 0, BN = 0;
  int64_t full = pb > 0 ? tiles / pb : 0, rest = pb > 0 ? tiles % pb : 0;
  const char *no = NULL;
  if (disabled)
    no = "off by default (the pass config tl.enable_stream_k turns it on): measured slower than the persistent "
         "grid on the H200, 0.79-0.80x at 4096^3 and 0.97-0.98x at 8192^3 (2026-12-01, same process), cause not "
         "found yet";
  else if (pb < 1 || rest == 0) no = "the tiles fill whole waves of the SMs";
  else if (full < 1)
    no = "fewer tiles than SMs (splitting every tile over blocks measured slower on the H200: 0.62-0.66x "
         "the persistent grid at 128x8192x8192, 2026-12-01)";
  else if ((double)(waves * pb) / (double)tiles <= 1.02) no = "the last wave is less than 2% short";
  else if (n < 4) no = "fewer than 4 k-tiles per tile";
  else if (rest * n < pb) no = "fewer k-tiles in the last wave than SMs";
  else if (C->dtype.code != TL_TYPE_FLOAT || C->dtype.bits != 32 || C->ndim != 2 ||
           !tl_expr_is_const_int(C->shape[0], &BM) || !tl_expr_is_const_int(C->shape[1], &BN))
    no = "the accumulator is not a static float32 tile";
  int64_t units = rest * n, blocks = pb;
  if (!no && (units > INT32_MAX / (blocks > 0 ? blocks : 1) || 2 * blocks * BM > INT32_MAX / 2))
    no = "the work units would overflow int32";
  if (no) {
    snprintf(why, whysz, "%s (%lld tiles on %lld SMs: %.2f waves)", no, (long long)tiles, (long long)pb,
             pb > 0 ? (double)tiles / (double)pb : 0.0);
    return true;
  }
  snprintf(why, whysz,
           "%lld whole waves of %lld tiles, then the last %lld tiles x %lld k-tiles = %lld units over %lld "
           "blocks (%.1f units each); whole tiles on the SMs would run %.2f waves as %lld",
           (long long)full, (long long)blocks, (long long)rest, (long long)n, (long long)units, (long long)blocks,
           (double)units / (double)blocks, (double)tiles / (double)pb, (long long)waves);
  *sk = (tl_sk){
      .tiles = tiles, .n = n, .blocks = blocks, .units = units, .BM = BM, .BN = BN, .waves = full, .dp = full * blocks};
  sk->slots = buffer(m, loc, "sk_slots", TL_DT(TL_TYPE_FLOAT, 32), TL_SCOPE_GLOBAL, 2 * blocks * BM, BN);
  sk->count = buffer(m, loc, "sk_count", TL_INT32, TL_SCOPE_GLOBAL, tiles, 0);
  sk->bc = buffer(m, loc, "sk_bc", TL_INT32, TL_SCOPE_SHARED_DYN, 2, 0);
  sk->go = buffer(m, loc, "sk_go", TL_INT32, TL_SCOPE_LOCAL, 1, 0);
  if (!sk->slots || !sk->count || !sk->bc || !sk->go || !role_vars(names, loc, &sk->cons, "") ||
      !role_vars(names, loc, &sk->prod, "_p"))
    return false;
  sk->on = true;
  return true;
}

bool tl_sk_allocs(tl_module *m, tl_loc loc, const tl_sk *sk, tl_stmt *out[4]) {
  tl_buffer *b[4] = {sk->slots, sk->count, sk->bc, sk->go};
  for (int i = 0; i < 4; i++) {
    if (!(out[i] = tl_ir_stmt(m, loc, TL_STMT_ALLOC))) return false;
    out[i]->u.alloc.buffer = b[i];
  }
  return true;
}

bool tl_sk_block_lets(tl_module *m, tl_loc loc, const tl_sk *sk, const tl_sk_role *r, tl_expr *b, tl_stmt *out[4]) {
  tl_expr *U = I(m, loc, sk->units), *B = I(m, loc, sk->blocks), *n = I(m, loc, sk->n);
  tl_expr *start = BIN(m, loc, TL_OP_FLOORDIV, BIN(m, loc, TL_OP_MUL, b, U), B);
  tl_expr *end = BIN(m, loc, TL_OP_FLOORDIV, BIN(m, loc, TL_OP_MUL, BIN(m, loc, TL_OP_ADD, b, I(m, loc, 1)), U), B);
  tl_expr *t0 = BIN(m, loc, TL_OP_FLOORDIV, V(m, loc, r->start), n);
  tl_expr *rest = BIN(m, loc, TL_OP_SUB, V(m, loc, r->end), BIN(m, loc, TL_OP_MUL, V(m, loc, r->t0), n));
  out[0] = tl_lo_let(m, loc, r->start, start);
  out[1] = tl_lo_let(m, loc, r->end, end);
  out[2] = tl_lo_let(m, loc, r->t0, t0);
  out[3] = tl_lo_let(m, loc, r->nseg,
                     BIN(m, loc, TL_OP_ADD, I(m, loc, sk->waves), CALL2(m, loc, TL_INTRIN_CEILDIV, rest, n)));
  return out[0] && out[1] && out[2] && out[3];
}

bool tl_sk_seg_lets(tl_module *m, tl_loc loc, const tl_sk *sk, const tl_sk_role *r, tl_expr *b, tl_expr *j,
                    tl_stmt *out[4]) {
  tl_expr *n = I(m, loc, sk->n), *W = I(m, loc, sk->waves);
  tl_expr *dp = BIN(m, loc, TL_OP_LT, j, W); /* a whole tile of the data-parallel waves */
  tl_expr *js = BIN(m, loc, TL_OP_SUB, j, W);
  /* the segment's tile among the last wave's (t - dp), times n */
  tl_expr *tn = BIN(m, loc, TL_OP_MUL, BIN(m, loc, TL_OP_SUB, V(m, loc, r->t), I(m, loc, sk->dp)), n);
  tl_expr *t_dp = BIN(m, loc, TL_OP_ADD, b, BIN(m, loc, TL_OP_MUL, j, I(m, loc, sk->blocks)));
  tl_expr *t_sk = BIN(m, loc, TL_OP_ADD, I(m, loc, sk->dp), BIN(m, loc, TL_OP_ADD, V(m, loc, r->t0), js));
  tl_expr *ka = BIN(m, loc, TL_OP_MAX, BIN(m, loc, TL_OP_SUB, V(m, loc, r->start), tn), I(m, loc, 0));
  tl_expr *kb = BIN(m, loc, TL_OP_MIN, n, BIN(m, loc, TL_OP_SUB, V(m, loc, r->end), tn));
  /* k-tiles of the block's earlier segments: j * n in the waves, then waves * n + the units before */
  tl_expr *base_sk =
      BIN(m, loc, TL_OP_SUB, BIN(m, loc, TL_OP_ADD, I(m, loc, sk->waves * sk->n), tn), V(m, loc, r->start));
  tl_expr *base_dp = BIN(m, loc, TL_OP_MUL, j, n);
  if (!dp || !t_dp || !t_sk || !ka || !kb || !base_sk || !base_dp) return false;
  out[0] = tl_lo_let(m, loc, r->t, tl_ir_select(m, loc, dp, t_dp, t_sk));
  out[1] = tl_lo_let(m, loc, r->ka, tl_ir_select(m, loc, dp, I(m, loc, 0), ka));
  out[2] = tl_lo_let(m, loc, r->kb, tl_ir_select(m, loc, dp, I(m, loc, sk->n), kb));
  out[3] = tl_lo_let(m, loc, r->base, tl_ir_select(m, loc, dp, base_dp, base_sk));
  return out[0] && out[1] && out[2] && out[3];
}

/* for i, jj in T.Parallel(BM, BN): one of
 *   STORE:  slots[slot * BM + i, jj] = C[i, jj]
 *   LOAD:   C[i, jj] = slots[slot * BM + i, jj]
 *   ADD:    C[i, jj] = C[i, jj] + slots[slot * BM + i, jj]
 * (register to global directly: a T.copy of the fragment would be staged
 * through shared memory, which the pipeline's stages already fill). */
enum { SLOT_STORE, SLOT_LOAD, SLOT_ADD };
static tl_stmt *slot_loop(tl_module *m, tl_names *names, tl_loc loc, const tl_sk *sk, tl_buffer *C, tl_expr *slot,
                          int what) {
  tl_var *i = tl_names_fresh_var(names, loc, "sk_i", TL_INT32, TL_VAR_LOOP);
  tl_var *jj = tl_names_fresh_var(names, loc, "sk_j", TL_INT32, TL_VAR_LOOP);
  tl_stmt *s = tl_ir_stmt(m, loc, TL_STMT_FOR);
  tl_var **vars = tl_arena_alloc(&m->arena, sizeof(tl_var *) * 2);
  tl_expr **mins = tl_arena_alloc(&m->arena, sizeof(tl_expr *) * 2);
  tl_expr **exts = tl_arena_alloc(&m->arena, sizeof(tl_expr *) * 2);
  if (!slot || !i || !jj || !s || !vars || !mins || !exts) return NULL;
  tl_expr *ci[2] = {V(m, loc, i), V(m, loc, jj)};
  tl_expr *si[2] = {BIN(m, loc, TL_OP_ADD, tl_lo_mul(m, loc, slot, sk->BM), V(m, loc, i)), V(m, loc, jj)};
  if (!ci[0] || !ci[1] || !si[0] || !si[1]) return NULL;
  tl_stmt *st;
  if (what == SLOT_STORE) {
    tl_expr *v = tl_ir_load(m, loc, C, 2, ci);
    st = v ? tl_lo_store(m, loc, sk->slots, 2, si, v) : NULL;
  } else {
    tl_expr *v = tl_ir_load(m, loc, sk->slots, 2, si);
    if (what == SLOT_ADD) v = BIN(m, loc, TL_OP_ADD, tl_ir_load(m, loc, C, 2, ci), v);
    st = v ? tl_lo_store(m, loc, C, 2, ci, v) : NULL;
  }
  if (!st) return NULL;
  vars[0] = i, vars[1] = jj;
  mins[0] = I(m, loc, 0), mins[1] = I(m, loc, 0);
  exts[0] = I(m, loc, sk->BM), exts[1] = I(m, loc, sk->BN);
  tl_ir_loop_init(s, TL_LOOP_PARALLEL, 2, vars, mins, exts);
  s->u.loop.body = st;
  return mins[0] && mins[1] && exts[0] && exts[1] ? s : NULL;
}

static tl_stmt *set_go(tl_module *m, tl_loc loc, const tl_sk *sk, int v) {
  tl_expr *idx[1] = {I(m, loc, 0)};
  return idx[0] ? tl_lo_store(m, loc, sk->go, 1, idx, I(m, loc, v)) : NULL;
}

static tl_stmt *fence(tl_module *m, tl_loc loc) {
  return tl_lo_eval(m, loc, tl_ir_call(m, loc, TL_INTRIN_PTX_FENCE_GPU, 0, NULL));
}

/* The last segment's part: the sum of the tile's slots in k order (first
 * block bf's, then 2 * b for the blocks after it), the counter's reset. */
static tl_stmt *last_part(tl_module *m, tl_names *names, tl_loc loc, const tl_sk *sk, tl_buffer *C, tl_var *bf,
                          tl_var *segs) {
  const tl_sk_role *r = &sk->cons;
  tl_expr *U = I(m, loc, sk->units), *B = I(m, loc, sk->blocks), *n = I(m, loc, sk->n);
  tl_var *q = tl_names_fresh_var(names, loc, "sk_q", TL_INT32, TL_VAR_LOOP);
  if (!q) return NULL;
  /* block bf's slot: 2 * bf + min(t - t0(bf), 1) */
  tl_expr *t0bf =
      BIN(m, loc, TL_OP_FLOORDIV, BIN(m, loc, TL_OP_FLOORDIV, BIN(m, loc, TL_OP_MUL, V(m, loc, bf), U), B), n);
  tl_expr *tw = BIN(m, loc, TL_OP_SUB, V(m, loc, r->t), I(m, loc, sk->dp)); /* the tile among the last wave's */
  tl_expr *first = BIN(m, loc, TL_OP_ADD, tl_lo_mul(m, loc, V(m, loc, bf), 2),
                       BIN(m, loc, TL_OP_MIN, BIN(m, loc, TL_OP_SUB, tw, t0bf), I(m, loc, 1)));
  tl_expr *bq = BIN(m, loc, TL_OP_ADD, BIN(m, loc, TL_OP_ADD, V(m, loc, bf), V(m, loc, q)), I(m, loc, 1));
  tl_expr *slotq = bq ? tl_lo_mul(m, loc, bq, 2) : NULL;
  tl_stmt *sum = slot_loop(m, names, loc, sk, C, slotq, SLOT_ADD);
  tl_stmt *loop = tl_lo_for(m, loc, TL_LOOP_SERIAL, q, BIN(m, loc, TL_OP_SUB, V(m, loc, segs), I(m, loc, 1)), sum);
  tl_expr *ci[1] = {V(m, loc, r->t)};
  tl_stmt *reset = ci[0] ? tl_lo_store(m, loc, sk->count, 1, ci, I(m, loc, 0)) : NULL;
  tl_stmt *reset_if = tl_lo_if(m, loc, BIN(m, loc, TL_OP_EQ, tl_lo_thread_index(m, loc), I(m, loc, 0)), reset, NULL);
  tl_stmt *st[5] = {set_go(m, loc, sk, 1), fence(m, loc), slot_loop(m, names, loc, sk, C, first, SLOT_LOAD), loop,
                    reset_if};
  return SEQ(m, loc, 5, st);
}

tl_stmt *tl_sk_fixup(tl_module *m, tl_names *names, tl_loc loc, const tl_sk *sk, tl_expr *b, tl_expr *j, tl_buffer *C,
                     tl_stmt *epi) {
  const tl_sk_role *r = &sk->cons;
  tl_var *bf = tl_names_fresh_var(names, loc, "sk_bf", TL_INT32, TL_VAR_LET);
  tl_var *segs = tl_names_fresh_var(names, loc, "sk_segs", TL_INT32, TL_VAR_LET);
  if (!bf || !segs) return NULL;
  /* partial segments are the stream-K ones (j >= waves): the block's first of them or a later one */
  tl_expr *x = BIN(m, loc, TL_OP_MIN,
                   BIN(m, loc, TL_OP_MAX, BIN(m, loc, TL_OP_SUB, j, I(m, loc, sk->waves)), I(m, loc, 0)), I(m, loc, 1));
  tl_expr *slot = BIN(m, loc, TL_OP_ADD, tl_lo_mul(m, loc, b, 2), x);
  tl_expr *partial = BIN(m, loc, TL_OP_OR, BIN(m, loc, TL_OP_GT, V(m, loc, r->ka), I(m, loc, 0)),
                         BIN(m, loc, TL_OP_LT, V(m, loc, r->kb), I(m, loc, sk->n)));
  tl_expr *bi[1] = {x};
  tl_expr *tid = tl_lo_thread_index(m, loc);
  tl_expr *aa[4] = {tl_ir_buffer_ref(m, loc, sk->count), V(m, loc, r->t), I(m, loc, 1), tl_ir_int(m, loc, TL_BOOL, 1)};
  tl_expr *old = aa[0] && aa[1] && aa[2] && aa[3] ? tl_ir_call(m, loc, TL_INTRIN_PTX_ATOMIC_ADD, 4, aa) : NULL;
  /* thread 0: fence (after the barrier: releases every consumer's slot stores, cumulatively), the
   * atomic, fence (acquires the other segments' stores before the barrier hands them on) */
  tl_stmt *arr[3] = {fence(m, loc), old && x ? tl_lo_store(m, loc, sk->bc, 1, bi, old) : NULL, fence(m, loc)};
  tl_stmt *arrive_if = tl_lo_if(m, loc, BIN(m, loc, TL_OP_EQ, tid, I(m, loc, 0)), SEQ(m, loc, 3, arr), NULL);
  /* the tile's blocks bf..bl; the block of unit u is ((u + 1) * B - 1) // U */
  tl_expr *U = I(m, loc, sk->units), *B = I(m, loc, sk->blocks), *n = I(m, loc, sk->n);
  tl_expr *tw = BIN(m, loc, TL_OP_SUB, V(m, loc, r->t), I(m, loc, sk->dp)); /* the tile among the last wave's */
  tl_expr *tn = BIN(m, loc, TL_OP_MUL, tw, n);
  tl_expr *vbf =
      BIN(m, loc, TL_OP_FLOORDIV,
          BIN(m, loc, TL_OP_SUB, BIN(m, loc, TL_OP_MUL, BIN(m, loc, TL_OP_ADD, tn, I(m, loc, 1)), B), I(m, loc, 1)), U);
  tl_expr *tn1 = BIN(m, loc, TL_OP_MUL, BIN(m, loc, TL_OP_ADD, tw, I(m, loc, 1)), n);
  tl_expr *vbl = BIN(m, loc, TL_OP_FLOORDIV, BIN(m, loc, TL_OP_SUB, BIN(m, loc, TL_OP_MUL, tn1, B), I(m, loc, 1)), U);
  tl_expr *vsegs = BIN(m, loc, TL_OP_ADD, BIN(m, loc, TL_OP_SUB, vbl, V(m, loc, bf)), I(m, loc, 1));
  tl_expr *bc = x ? tl_ir_load(m, loc, sk->bc, 1, bi) : NULL;
  tl_expr *is_last = BIN(m, loc, TL_OP_EQ, bc, BIN(m, loc, TL_OP_SUB, V(m, loc, segs), I(m, loc, 1)));
  tl_stmt *last = tl_lo_if(m, loc, is_last, last_part(m, names, loc, sk, C, bf, segs), set_go(m, loc, sk, 0));
  tl_stmt *ps[8] = {slot_loop(m, names, loc, sk, C, slot, SLOT_STORE),
                    fence(m, loc),
                    tl_lo_sync_threads(m, loc),
                    arrive_if,
                    tl_lo_sync_threads(m, loc),
                    tl_lo_let(m, loc, bf, vbf),
                    tl_lo_let(m, loc, segs, vsegs),
                    last};
  tl_stmt *part = SEQ(m, loc, 8, ps);
  tl_stmt *fix = tl_lo_if(m, loc, partial, part, set_go(m, loc, sk, 1));
  tl_expr *gi[1] = {I(m, loc, 0)};
  tl_expr *go = gi[0] ? tl_ir_load(m, loc, sk->go, 1, gi) : NULL;
  tl_stmt *run = tl_lo_if(m, loc, BIN(m, loc, TL_OP_EQ, go, I(m, loc, 1)), epi, NULL);
  tl_stmt *all[2] = {fix, run};
  return SEQ(m, loc, 2, all);
}
