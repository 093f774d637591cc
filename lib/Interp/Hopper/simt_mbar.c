/* SIMT executor: named barriers, mbarriers, 1-D bulk copies and the proxy
 * fence (docs/simt-ir.md "Asynchronous pipelines"; PTX ISA 8.x §9.7.13.1
 * bar/barrier, §9.7.13.15 mbarrier, §9.7.9.25.4 cp.async.bulk,
 * §9.7.13.4 fence.proxy.async).  These run only under the warp scheduler
 * (simt_sched.c: one gang per warp); happens-before is simt_race.c's.
 *
 *  - T.ptx_bar_sync(id, n) / T.ptx_bar_arrive(id, n) (id 0..15, n a multiple
 *    of 32; warp-uniform expressions): the warp's threads (all active) count
 *    toward barrier id's n; bar.sync blocks the warp
 *    until n threads have arrived.  Every arrival releases; a completed
 *    barrier gives each bar.sync participant the join of all arrivals.
 *    T.sync_threads() is barrier 0 over the whole block.
 *  - An mbarrier is a uint64 element of a shared buffer, 8-byte aligned.
 *    init(count): phase 0 in progress, count pending arrivals, tx-count 0;
 *    a thread whose use of it does not happen after the init is an error.
 *    arrive: one arrival per active thread (release); expect_tx(b):
 *    tx-count += b; arrive_expect_tx(b): expect_tx then arrive;
 *    complete_tx(b): tx-count -= b (relaxed: releases nothing).  The phase
 *    completes when no arrival is pending and the tx-count is 0: the
 *    pending count resets to the init count and the phase advances.
 *    wait(parity) (try_wait.parity in a loop) returns once the current
 *    phase's parity differs from parity, acquiring the releases of the
 *    last completed phase.  More arrivals than pending is an error.
 *  - T.ptx_cp_async_mbarrier_arrive_noinc (cp.async.mbarrier.arrive.noinc):
 *    every cp.async the thread issued before completes (its open group is
 *    closed and all its groups complete at this clock, so that a reader
 *    acquires them through the mbarrier), then one arrival, counted toward
 *    the init count as an arrive is.  The copies complete at once: one
 *    schedule of those the hardware allows (they may complete any time
 *    before the arrival).
 *  - T.ptx_cp_async_bulk: each active thread issues one copy (bytes a
 *    multiple of 16, both addresses 16-byte aligned); the async proxy
 *    performs it later, at a scheduling point: the bytes land in shared
 *    memory stamped with the mbarrier's phase, then complete_tx(bytes).
 *    Reading them needs a wait that observed that phase complete.
 *  - T.ptx_cp_async_bulk_store: performed at issue (the shared source is
 *    read through the async proxy: every byte written by an ordinary store
 *    needs a T.ptx_fence_proxy_async() of its writer after the write and
 *    the usual happens-before).  Until a bulk wait_group of the issuing
 *    thread covers its group, a write of the source bytes is an error (the
 *    async proxy may still be reading them).
 *  - T.ptx_fence_proxy_async(): counts per thread (simt_race.c). */
#include "Interp/simt_internal.h"

#include <stdlib.h>
#include <string.h>

static const char *iname(const tl_expr *e) { return tl_intrinsics[e->u.call.op].name; }

static bool need_n(sx *x, const tl_expr *e, int n) {
  if (e->u.call.n != n) return sx_fail(x, "T.%s takes %d arguments, got %d", iname(e), n, e->u.call.n);
  return true;
}

static sx_buf *buf_arg(sx *x, const tl_expr *e, int i, sx_space want) {
  const tl_expr *a = e->u.call.args[i];
  if (!a || a->kind != TL_EXPR_BUFFER || !a->u.buffer) {
    sx_fail(x, "T.%s: argument %d must be a buffer", iname(e), i + 1);
    return NULL;
  }
  sx_buf *sb = sx_buffer(x, a->u.buffer);
  if (sb && sb->space != want) {
    sx_fail(x, "T.%s: buffer '%s' must be a %s buffer", iname(e), sb->b->name, want == SX_SHARED ? "shared" : "global");
    return NULL;
  }
  return sb;
}

static bool whole_warps(sx *x, const uint8_t *mask, const char *what) {
  int act = 0;
  for (int t = 0; t < x->T; t++) act += mask[t] != 0;
  if (act != x->T)
    return sx_fail(x, "%s executed by a partial warp: %d of %d lanes of warp %d are active", what, act, x->T, x->g);
  return true;
}

/* ------------------------------------------------------- named barriers */
bool sx_bar(sx *x, int id, int n, bool wait, const uint8_t *mask) {
  sx_blk *k = x->k;
  if (!whole_warps(x, mask, id == 0 && n == k->T ? "T.sync_threads()" : "bar.sync/bar.arrive")) return false;
  sx_nbar *b = &k->nbar[id];
  if (!b->vc) {
    b->vc = tl_arena_alloc(&k->arena, sizeof(uint32_t) * (size_t)k->NU);
    if (!b->vc) return sx_fail(x, "out of memory in the SIMT executor");
  }
  if (b->expected == 0) {
    b->expected = n;
    b->arrived = 0;
    memset(b->vc, 0, sizeof(uint32_t) * (size_t)k->NU);
  } else if (b->expected != n) {
    return sx_fail(x, "barrier %d used with %d threads while a use with %d threads is in progress", id, n, b->expected);
  }
  b->arrived += x->T;
  sx_vc_join(k, b->vc, sx_vc(k, x->g));
  sx_release(x);
  if (b->arrived > b->expected)
    return sx_fail(x, "barrier %d: %d threads arrived, more than its count %d", id, b->arrived, b->expected);
  if (wait) b->waiting |= UINT64_C(1) << x->g;
  if (b->arrived == b->expected) {
    for (int g = 0; g < k->G; g++)
      if (b->waiting & (UINT64_C(1) << g)) sx_vc_join(k, sx_vc(k, g), b->vc);
    b->waiting = 0;
    b->expected = 0;
    /* the released warps restart in scheduler order (not the last arrival first) */
    return !wait || sx_block(x, SX_WAIT_NONE, 0, 0);
  }
  return !wait || sx_block(x, SX_WAIT_BAR, id, 0);
}

/* A warp-uniform int argument (the barrier id or thread count; constants or
 * expressions such as 1 + warp) of the active lanes. */
static bool uniform_arg(sx *x, const tl_expr *e, int i, const uint8_t *mask, int64_t *v) {
  sx_val a;
  if (!sx_eval_as(x, e->u.call.args[i], TL_INT64, mask, &a)) return false;
  bool first = true;
  for (int t = 0; t < x->T; t++) {
    if (!mask[t]) continue;
    if (!first && a.v[t].i != *v)
      return sx_fail(x, "T.%s: argument %d differs between the lanes of warp %d (%lld and %lld)", iname(e), i + 1, x->g,
                     (long long)*v, (long long)a.v[t].i);
    *v = a.v[t].i;
    first = false;
  }
  return true;
}

static bool bar_stmt(sx *x, const tl_expr *e, bool wait, const uint8_t *mask) {
  int64_t id = 0, n = 0;
  if (!need_n(x, e, 2) || !uniform_arg(x, e, 0, mask, &id) || !uniform_arg(x, e, 1, mask, &n)) return false;
  if (id < 0 || id >= SX_NBAR) return sx_fail(x, "T.%s: barrier id %lld is outside 0..15", iname(e), (long long)id);
  if (n <= 0 || n % 32 || n > x->k->T)
    return sx_fail(x, "T.%s: thread count %lld is not a multiple of 32 up to the block's %d threads", iname(e),
                   (long long)n, x->k->T);
  return sx_bar(x, (int)id, (int)n, wait, mask);
}

/* ---------------------------------------------------------- mbarriers */
/* The mbarrier at (bar, off) of thread vector index t: its index in k->mb,
 * or -1 with create (a new one), -2 after reporting. */
static int mbar_at(sx *x, const tl_expr *e, int argi, const sx_val *off, int t, bool create) {
  sx_blk *k = x->k;
  sx_buf *sb = buf_arg(x, e, argi, SX_SHARED);
  if (!sb) return -2;
  if (sb->eb != 8 || sb->et.code == TL_TYPE_FLOAT) {
    sx_fail(x, "T.%s: mbarrier buffer '%s' must have dtype uint64, not %s", iname(e), sb->b->name,
            tl_dtype_name(sb->et));
    return -2;
  }
  int64_t el = off->v[t].i;
  if (el < 0 || el >= sb->elems) {
    sx_fail(x, "T.%s: mbarrier element %lld of '%s' (size %lld) is out of bounds in thread %d", iname(e), (long long)el,
            sb->b->name, (long long)sb->elems, x->tbase + t);
    return -2;
  }
  int64_t addr = sb->base + el * 8;
  if (addr % 8) {
    sx_fail(x, "T.%s: mbarrier '%s'[%lld] is not 8-byte aligned", iname(e), sb->b->name, (long long)el);
    return -2;
  }
  for (int j = 0; j < k->nmb; j++)
    if (k->mb[j].addr == addr) {
      if (create) {
        sx_fail(x, "T.ptx_mbarrier_init: mbarrier '%s'[%lld] is initialised a second time in this block", sb->b->name,
                (long long)el);
        return -2;
      }
      const sx_mbar *m = &k->mb[j];
      if (!sx_happens_before(x, m->init_unit, m->init_clk, m->init_thr, x->tbase + t)) {
        sx_fail(x,
                "T.%s: thread %d uses mbarrier '%s'[%lld] before its initialisation by thread %d is visible "
                "(a T.sync_threads() after T.ptx_mbarrier_init is missing)",
                iname(e), x->tbase + t, sb->b->name, (long long)el, m->init_thr);
        return -2;
      }
      return j;
    }
  if (create) {
    if (k->nmb >= SX_MAX_MBAR) {
      sx_fail(x, "more than %d mbarriers in one block", SX_MAX_MBAR);
      return -2;
    }
    sx_mbar *m = &k->mb[k->nmb];
    memset(m, 0, sizeof *m);
    m->addr = addr;
    m->b = sb->b;
    m->el = el;
    m->vc = tl_arena_alloc(&k->arena, sizeof(uint32_t) * (size_t)k->NU);
    m->done_vc = tl_arena_alloc(&k->arena, sizeof(uint32_t) * (size_t)k->NU);
    if (!m->vc || !m->done_vc) {
      sx_fail(x, "out of memory in the SIMT executor");
      return -2;
    }
    memset(m->vc, 0, sizeof(uint32_t) * (size_t)k->NU);
    memset(m->done_vc, 0, sizeof(uint32_t) * (size_t)k->NU);
    return -1;
  }
  sx_fail(x, "T.%s: '%s'[%lld] is not an initialised mbarrier (T.ptx_mbarrier_init)", iname(e), sb->b->name,
          (long long)el);
  return -2;
}

static void mbar_complete_if_done(sx_blk *k, int j) {
  sx_mbar *m = &k->mb[j];
  if (m->pending != 0 || m->tx != 0) return;
  memcpy(m->done_vc, m->vc, sizeof(uint32_t) * (size_t)k->NU);
  m->phase++;
  m->done_vc[k->G + j] = k->base + m->phase;
  memset(m->vc, 0, sizeof(uint32_t) * (size_t)k->NU);
  m->pending = m->expected;
}

static bool mbar_arrive(sx *x, int j, int t) {
  sx_mbar *m = &x->k->mb[j];
  if (m->pending <= 0)
    return sx_fail(x, "mbarrier '%s'[%lld]: thread %d arrives, but no arrival of phase %u is pending (count %d)",
                   m->b->name, (long long)m->el, x->tbase + t, m->phase, m->expected);
  sx_vc_join(x->k, m->vc, sx_vc(x->k, x->g));
  m->pending--;
  mbar_complete_if_done(x->k, j);
  return true;
}

static bool tx_arg(sx *x, const tl_expr *e, int i, const uint8_t *mask, sx_val *v) {
  if (!sx_eval_as(x, e->u.call.args[i], TL_INT64, mask, v)) return false;
  for (int t = 0; t < x->T; t++)
    if (mask[t] && (v->v[t].i < 0 || v->v[t].i >= (1 << 20)))
      return sx_fail(x, "T.%s: byte count %lld is outside 0..2^20-1", iname(e), (long long)v->v[t].i);
  return true;
}

/* init, arrive, arrive_expect_tx, expect_tx, complete_tx, cp.async's arrive.noinc: per active thread in lane
 * order. */
static bool mbar_op(sx *x, int op, const tl_expr *e, const uint8_t *mask) {
  bool noinc = op == TL_INTRIN_PTX_CP_ASYNC_MBARRIER_ARRIVE_NOINC;
  int nargs = op == TL_INTRIN_PTX_MBARRIER_ARRIVE || noinc ? 2 : 3;
  if (!need_n(x, e, nargs)) return false;
  sx_val off, v;
  if (!sx_eval_as(x, e->u.call.args[1], TL_INT64, mask, &off)) return false;
  if (nargs == 3 && !tx_arg(x, e, 2, mask, &v)) return false;
  sx_blk *k = x->k;
  bool released = false;
  for (int t = 0; t < x->T; t++) {
    if (!mask[t]) continue;
    int j = mbar_at(x, e, 0, &off, t, op == TL_INTRIN_PTX_MBARRIER_INIT);
    if (j == -2) return false;
    if (op == TL_INTRIN_PTX_MBARRIER_INIT) {
      if (v.v[t].i < 1)
        return sx_fail(x, "T.ptx_mbarrier_init: the count must be 1..2^20-1, not %lld", (long long)v.v[t].i);
      sx_mbar *m = &k->mb[k->nmb++];
      m->expected = m->pending = (int)v.v[t].i;
      m->init_unit = x->g;
      m->init_thr = x->tbase + t;
      m->init_clk = sx_vc(k, x->g)[x->g];
      continue;
    }
    sx_mbar *m = &k->mb[j];
    if (op == TL_INTRIN_PTX_MBARRIER_ARRIVE_EXPECT_TX || op == TL_INTRIN_PTX_MBARRIER_EXPECT_TX) m->tx += v.v[t].i;
    if (op == TL_INTRIN_PTX_MBARRIER_COMPLETE_TX) {
      m->tx -= v.v[t].i;
      if (m->pending == 0) mbar_complete_if_done(k, j);
    }
    if (noinc) { /* the thread's copies complete, its open group closed: later copies are a new group */
      sx_async *as = &k->async[x->tbase + t];
      as->committed++;
      if (!sx_cp_async_complete(x, x->tbase + t, as->committed)) return false;
    }
    if (op == TL_INTRIN_PTX_MBARRIER_ARRIVE || op == TL_INTRIN_PTX_MBARRIER_ARRIVE_EXPECT_TX || noinc) {
      if (!mbar_arrive(x, j, t)) return false;
      released = true;
    }
  }
  if (released) sx_release(x);
  return true;
}

static bool mbar_wait(sx *x, const tl_expr *e, const uint8_t *mask) {
  if (!need_n(x, e, 3)) return false;
  sx_val off, par;
  if (!sx_eval_as(x, e->u.call.args[1], TL_INT64, mask, &off) ||
      !sx_eval_as(x, e->u.call.args[2], TL_INT64, mask, &par))
    return false;
  sx_blk *k = x->k;
  for (int t = 0; t < x->T; t++) {
    if (!mask[t]) continue;
    int j = mbar_at(x, e, 0, &off, t, false);
    if (j < 0) return false;
    int p = (int)(par.v[t].i & 1);
    while ((int)(k->mb[j].phase & 1) == p || x->schedule_seed) {
      if (!sx_block(x, SX_WAIT_MBAR, j, p)) return false;
      if (x->schedule_seed && (int)(k->mb[j].phase & 1) != p) break;
    }
    sx_vc_join(k, sx_vc(k, x->g), k->mb[j].done_vc);
  }
  return true;
}

/* ----------------------------------------------------------- bulk copies */
static bool bulk_range(sx *x, const tl_expr *e, const sx_buf *sb, int64_t el, int64_t bytes, int t, const char *what) {
  /* el is bounded by the buffer's size before it is scaled to bytes (an index can be any int64) */
  if (el < 0 || el > sb->elems || bytes > (sb->elems - el) * sb->eb)
    return sx_fail(x, "T.%s: out-of-bounds %s '%s': %lld bytes at element %lld of %lld in thread %d", iname(e), what,
                   sb->b->name, (long long)bytes, (long long)el, (long long)sb->elems, t);
  int64_t b0 = el * sb->eb;
  if (((sb->space == SX_SHARED ? sb->base : 0) + b0) % 16)
    return sx_fail(x, "T.%s: %s '%s' at element %lld is not 16-byte aligned in thread %d", iname(e), what, sb->b->name,
                   (long long)el, t);
  return true;
}

static bool bulk_bytes(sx *x, const tl_expr *e, int i, const uint8_t *mask, sx_val *v) {
  if (!sx_eval_as(x, e->u.call.args[i], TL_INT64, mask, v)) return false;
  for (int t = 0; t < x->T; t++)
    if (mask[t] && (v->v[t].i <= 0 || v->v[t].i % 16))
      return sx_fail(x, "T.%s: the byte count must be a positive multiple of 16, not %lld", iname(e),
                     (long long)v->v[t].i);
  return true;
}

/* The operands both bulk copies start with, T.<op>(dst, dst_off, src,
 * src_off, bytes, ...): dst in space dsp (shared for the load, global for
 * the store), src in the other, offsets and byte counts for the active
 * threads. */
typedef struct bulk_args {
  sx_buf *dst, *src;
  sx_space dsp;
  sx_val doff, soff, nb;
} bulk_args;

static bool bulk_args_of(sx *x, const tl_expr *e, const uint8_t *mask, sx_space dsp, bulk_args *a) {
  a->dsp = dsp;
  a->dst = buf_arg(x, e, 0, dsp);
  a->src = a->dst ? buf_arg(x, e, 2, dsp == SX_SHARED ? SX_GLOBAL : SX_SHARED) : NULL;
  return a->src && sx_eval_as(x, e->u.call.args[1], TL_INT64, mask, &a->doff) &&
         sx_eval_as(x, e->u.call.args[3], TL_INT64, mask, &a->soff) && bulk_bytes(x, e, 4, mask, &a->nb);
}

/* Thread t's bytes lie inside both buffers. */
static bool bulk_ranges(sx *x, const tl_expr *e, const bulk_args *a, int t) {
  bool load = a->dsp == SX_SHARED;
  int64_t bytes = a->nb.v[t].i;
  return bulk_range(x, e, a->dst, a->doff.v[t].i, bytes, x->tbase + t,
                    load ? "copy into shared buffer" : "copy into global buffer") &&
         bulk_range(x, e, a->src, a->soff.v[t].i, bytes, x->tbase + t,
                    load ? "copy from global buffer" : "copy from shared buffer");
}

static bool bulk_copy(sx *x, const tl_expr *e, const uint8_t *mask) {
  if (!need_n(x, e, 7)) return false;
  bulk_args a;
  sx_val boff;
  if (!bulk_args_of(x, e, mask, SX_SHARED, &a) || !sx_eval_as(x, e->u.call.args[6], TL_INT64, mask, &boff))
    return false;
  for (int t = 0; t < x->T; t++) {
    if (!mask[t]) continue;
    int tid = x->tbase + t;
    int64_t bytes = a.nb.v[t].i;
    if (!bulk_ranges(x, e, &a, t)) return false;
    int j = mbar_at(x, e, 5, &boff, t, false);
    if (j < 0) return false;
    sx_bulk c = {.dst = a.dst,
                 .dst_byte = a.doff.v[t].i * a.dst->eb,
                 .src = a.src->data + a.soff.v[t].i * a.src->eb,
                 .bytes = bytes,
                 .mbar = j,
                 .thr = tid};
    if (!sx_bulk_enqueue(x, &c)) return false;
  }
  return true;
}

int sx_mbar_index(sx *x, const tl_expr *e, int argi, const sx_val *off, int t) {
  return mbar_at(x, e, argi, off, t, false);
}

bool sx_bulk_enqueue(sx *x, const sx_bulk *c0) {
  sx_blk *k = x->k;
  if (!tl_vec_grow_((void **)&k->bulk, &k->capbulk, (size_t)k->nbulk + 1, sizeof *k->bulk))
    return sx_fail(x, "out of memory in the SIMT executor");
  sx_bulk *c = &k->bulk[k->nbulk];
  *c = *c0;
  c->at = x->cur;
  c->vc = tl_arena_alloc(&k->arena, sizeof(uint32_t) * (size_t)k->NU);
  if (!c->vc) return sx_fail(x, "out of memory in the SIMT executor");
  memcpy(c->vc, sx_vc(k, x->g), sizeof(uint32_t) * (size_t)k->NU);
  k->nbulk++;
  return true;
}

/* Performs pending bulk copy i (the async proxy): the bytes, then complete_tx on its mbarrier. */
static bool bulk_perform(sx *root, int i) {
  sx_blk *k = root->k;
  sx_bulk c = k->bulk[i];
  k->bulk[i] = k->bulk[--k->nbulk];
  sx *x = sx_gang_of(k, c.thr);
  const tl_stmt *saved = x->cur;
  x->cur = c.at;
  sx_mbar *m = &k->mb[c.mbar];
  bool ok = c.tma ? sx_tma_perform(x, &c, k->G + c.mbar, k->base + m->phase + 1)
                  : sx_smem_write_async(x, &c, k->G + c.mbar, k->base + m->phase + 1);
  x->cur = saved;
  if (!ok) {
    root->failed = true;
    return false;
  }
  if (!c.tma) memcpy(c.dst->data + c.dst_byte, c.src, (size_t)c.bytes);
  m->tx -= c.bytes;
  if (m->pending == 0) mbar_complete_if_done(k, c.mbar);
  return true;
}

bool sx_bulk_progress(sx *root, bool seeded, bool force) {
  sx_blk *k = root->k;
  if (!seeded) {
    while (k->nbulk)
      if (!bulk_perform(root, 0)) return false;
    return true;
  }
  if (force && k->nbulk) return bulk_perform(root, (int)(sx_rand(k) % (uint64_t)k->nbulk));
  for (int i = 0; i < k->nbulk;) {
    if (sx_rand(k) & 1) {
      if (!bulk_perform(root, i)) return false;
    } else {
      i++;
    }
  }
  return true;
}

static bool bulk_store(sx *x, const tl_expr *e, const uint8_t *mask) {
  if (!need_n(x, e, 5)) return false;
  bulk_args a;
  if (!bulk_args_of(x, e, mask, SX_GLOBAL, &a)) return false;
  sx_buf *src = a.src;
  for (int t = 0; t < x->T; t++) {
    if (!mask[t]) continue;
    int tid = x->tbase + t;
    int64_t bytes = a.nb.v[t].i;
    if (!bulk_ranges(x, e, &a, t)) return false;
    int64_t sbyte = a.soff.v[t].i * src->eb;
    if (!sx_smem_read_async(x, src, sbyte, bytes, tid, "T.ptx_cp_async_bulk_store")) return false;
    memcpy(a.dst->data + a.doff.v[t].i * a.dst->eb, src->data + sbyte, (size_t)bytes);
    sx_blk *k = x->k;
    if (!tl_vec_grow_((void **)&k->bread, &k->capbread, (size_t)k->nbread + 1, sizeof *k->bread))
      return sx_fail(x, "out of memory in the SIMT executor");
    k->bread[k->nbread++] =
        (sx_bulk_read){src->base + sbyte, src->base + sbyte + bytes, tid, k->async[tid].bulk_committed};
  }
  return true;
}

static bool bulk_group(sx *x, int op, const tl_expr *e, const uint8_t *mask) {
  int64_t n = 0;
  /* wait_group and wait_group.read (a second argument 1) act alike here: the
   * executor performs a bulk store's global write at issue, so only the
   * reads of its shared source are pending until the wait */
  int64_t rd = 0;
  if (op == TL_INTRIN_PTX_BULK_WAIT_GROUP &&
      (e->u.call.n < 1 || e->u.call.n > 2 || !tl_expr_is_const_int(e->u.call.args[0], &n) || n < 0 ||
       (e->u.call.n == 2 && (!tl_expr_is_const_int(e->u.call.args[1], &rd) || rd < 0 || rd > 1))))
    return sx_fail(x, "T.ptx_bulk_wait_group: the count must be a constant >= 0 (and read 0 or 1)");
  for (int t = 0; t < x->T; t++) {
    if (!mask[t]) continue;
    sx_async *as = &x->k->async[x->tbase + t];
    if (op == TL_INTRIN_PTX_BULK_COMMIT_GROUP) as->bulk_committed++;
    else if (op == TL_INTRIN_PTX_FENCE_PROXY_ASYNC) as->fences++;
    else if (as->bulk_committed - n > as->bulk_completed) as->bulk_completed = as->bulk_committed - (int32_t)n;
  }
  if (op == TL_INTRIN_PTX_BULK_WAIT_GROUP) { /* forget the bulk-store sources that are read by now */
    sx_blk *k = x->k;
    int kept = 0;
    for (int i = 0; i < k->nbread; i++)
      if (k->bread[i].group >= k->async[k->bread[i].thr].bulk_completed) k->bread[kept++] = k->bread[i];
    k->nbread = kept;
  }
  return true;
}

bool sx_async_stmt(sx *x, int op, const tl_expr *e, const uint8_t *mask) {
  if (!x->in_gang) return sx_fail(x, "T.%s outside the kernel's warps", iname(e));
  switch (op) {
  case TL_INTRIN_PTX_BAR_SYNC: return bar_stmt(x, e, true, mask);
  case TL_INTRIN_PTX_BAR_ARRIVE: return bar_stmt(x, e, false, mask);
  case TL_INTRIN_PTX_MBARRIER_INIT:
  case TL_INTRIN_PTX_MBARRIER_ARRIVE:
  case TL_INTRIN_PTX_MBARRIER_ARRIVE_EXPECT_TX:
  case TL_INTRIN_PTX_MBARRIER_EXPECT_TX:
  case TL_INTRIN_PTX_MBARRIER_COMPLETE_TX:
  case TL_INTRIN_PTX_CP_ASYNC_MBARRIER_ARRIVE_NOINC: return mbar_op(x, op, e, mask);
  case TL_INTRIN_PTX_MBARRIER_WAIT: return mbar_wait(x, e, mask);
  case TL_INTRIN_PTX_CP_ASYNC_BULK: return bulk_copy(x, e, mask);
  case TL_INTRIN_PTX_CP_ASYNC_BULK_STORE: return bulk_store(x, e, mask);
  case TL_INTRIN_PTX_BULK_COMMIT_GROUP:
  case TL_INTRIN_PTX_BULK_WAIT_GROUP:
  case TL_INTRIN_PTX_FENCE_PROXY_ASYNC:
    return bulk_group(x, op, e, mask);
  TL_INTRIN_CASES_TMA:
    return sx_tma_stmt(x, op, e, mask);
  case TL_INTRIN_PTX_FENCE_GPU: return true; /* blocks run one after another: every global write is visible */
  default: return sx_fail(x, "internal error: not an asynchronous-pipeline statement");
  }
}
