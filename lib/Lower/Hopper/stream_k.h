/* Stream-K scheduling of the persistent Hopper GEMM (internal to lib/Lower;
 * lib/Lower/Hopper/stream_k.c, used by warp_specialize.c).
 *
 * A persistent kernel of `tiles` output tiles, each n k-tiles long, runs
 * tiles // blocks whole waves of tiles, then the last wave's tiles have
 * units = (tiles % blocks) * n work units; stream-K gives block b of
 * `blocks` the units [b * units / blocks, (b + 1) * units / blocks), so
 * every block does the same work whatever tiles % blocks is.  A block's units form
 * segments, one per output tile it touches; segment j is tile t = t0 + j
 * (t0 = start / n), k-tiles [ka, kb).  A segment that covers part of its
 * tile hands its accumulator to the tile's last-arriving segment through a
 * global workspace (the fixup, tl_sk_fixup). */
#ifndef TL_LOWER_STREAM_K_H
#define TL_LOWER_STREAM_K_H

#include "Lower/lower_internal.h"

/* One role's variables (the consumers' or the producer's copies). */
typedef struct tl_sk_role {
  tl_var *start, *end, *t0, *nseg; /* per block: its units [start, end), first tile, segments */
  tl_var *t, *ka, *kb;             /* per segment: the tile and its k-tiles [ka, kb) */
  tl_var *base;                    /* per segment: the block's k-tiles before it (stage/phase counter) */
} tl_sk_role;

typedef struct tl_sk {
  bool on;
  int64_t tiles, n, blocks, units, BM, BN;
  int64_t waves;    /* whole waves of data-parallel tiles before the stream-K part: tiles / blocks */
  int64_t dp;       /* waves * blocks: the tiles run whole (tile b + j * blocks in block b's segment j) */
  tl_buffer *slots; /* global f32 [2 * blocks * BM, BN]: slot s is rows [s * BM, (s + 1) * BM) */
  tl_buffer *count; /* global int32 [tiles]: segments of each tile that have stored their slot */
  tl_buffer *bc;    /* shared int32 [2]: the counter's old value, broadcast to the consumers */
  tl_buffer *go;    /* local int32 [1]: whether this segment runs the kernel's epilogue */
  tl_sk_role cons, prod;
} tl_sk;

/* Decides whether a persistent kernel of `tiles` tiles of n k-tiles with
 * accumulator C (static 2-D) runs stream-K on `sms` blocks, and when it does
 * creates sk's buffers and variables (sk->on).  The rule: not `disabled`
 * (the pass config tl.enable_stream_k unset), C float32, n >= 4, at least
 * one full wave, whole tiles on the sms SMs leave the last wave partly
 * empty, by more than 2% (tiles % sms != 0 and ceil(tiles / sms) * sms /
 * tiles > 1.02), the last wave's k-tiles at least the SMs, and units * blocks < 2^31 (the int32 unit arithmetic cannot
 * overflow).  The blocks: sms.
 * why (size whysz) gets the remark's reason either way.  false on OOM. */
bool tl_sk_plan(tl_module *m, tl_names *names, tl_loc loc, int sms, bool disabled, int64_t tiles, int64_t n,
                const tl_buffer *C, tl_sk *sk, char *why, size_t whysz);

/* Whether the statements before the GEMM loop (body[0..li) of the kernel
 * body) suit stream-K, which runs them once per segment, i.e. possibly
 * several times per tile, and adds the segments' accumulators: only
 * allocations, LETs, T.use_swizzle and a T.clear (or T.fill with 0) of the
 * whole accumulator C, which must be there.  NULL when they do, else the
 * reason. */
const char *tl_sk_prologue_check(tl_stmt *const *body, int li, const tl_buffer *C);

/* The allocations of the workspace and the fixup's buffers (4 statements),
 * for the kernel body's prefix. */
bool tl_sk_allocs(tl_module *m, tl_loc loc, const tl_sk *sk, tl_stmt *out[4]);

/* The role's per-block LETs for block index b (start, end, t0, nseg). */
bool tl_sk_block_lets(tl_module *m, tl_loc loc, const tl_sk *sk, const tl_sk_role *r, tl_expr *b, tl_stmt *out[4]);

/* The role's per-segment LETs for segment index j of block b (t, ka, kb,
 * base). */
bool tl_sk_seg_lets(tl_module *m, tl_loc loc, const tl_sk *sk, const tl_sk_role *r, tl_expr *b, tl_expr *j,
                    tl_stmt *out[4]);

/* The consumers' fixup after the k-loop of segment j of block b, followed
 * by the kernel's epilogue statements (epi, run when the segment covers its
 * whole tile or is the tile's last to arrive); accumulator C.  NULL on OOM. */
tl_stmt *tl_sk_fixup(tl_module *m, tl_names *names, tl_loc loc, const tl_sk *sk, tl_expr *b, tl_expr *j, tl_buffer *C,
                     tl_stmt *epi);

#endif
