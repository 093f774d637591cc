/* SIMT executor: happens-before tracking for shared memory (vector clocks)
 * and the shared-memory protocol checks of loads, stores and copies.
 *
 * Units.  The block's gangs (simt_sched.c: the units of scheduling, one warp
 * each) and its mbarriers each own one entry
 * of a vector clock; gang g keeps vc[g][0..NU).  A gang's own entry advances
 * at every release it performs (T.sync_threads(), bar.sync / bar.arrive,
 * mbarrier arrivals, a cp.async wait), so accesses of one gang between two
 * of its synchronisations share one clock value.  Synchronisation joins
 * clocks: a barrier gives each participant the join of all arrivals; an
 * mbarrier phase accumulates the clocks of its releasing arrivals and a wait
 * that observes the phase complete acquires them (PTX ISA §9.7.13.15.4:
 * arrive has release, try_wait acquire semantics; complete_tx is relaxed
 * and releases nothing).  An mbarrier's own entry counts its completed
 * phases; bytes written by the async proxy for a phase carry that count.
 *
 * Happens-before of an access at (unit u, clock c, thread t0) and the
 * current point of thread t of gang g: t0 == t (program order; not for
 * async-proxy writes), or u == g and c < vc[g][g] (the gang synchronised
 * since: lanes of one gang are not ordered by lockstep execution), or
 * u != g and c <= vc[g][u].  Clocks never go back: each block starts at a
 * base above every clock used before (a gang's own entry at base + 1, what
 * the others know of it at base), so the state of earlier blocks reads
 * as "before" and needs no reset (a byte with w_clk < base was not written
 * in this block).
 *
 * Checks: a read of a byte not written in the block; a read of a byte whose
 * write does not happen before it (a race; for a cp.async group, before its
 * wait_group; for a bulk copy, before a wait that observed its mbarrier
 * phase); a write of a byte whose reads (the last read of each gang) do not
 * happen before it, or that a pending cp.async targets or a bulk store not
 * yet waited for (cp.async.bulk.wait_group) may still read; and the proxy rule
 * (PTX ISA §9.7.13.4.x, fence.proxy.async): a byte written by a generic-proxy
 * store and then read by the async proxy needs a fence.proxy.async by the
 * writing thread after the write. */
#include "Interp/simt_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

uint32_t *sx_vc(sx_blk *k, int unit) { return k->vc + (size_t)unit * (size_t)k->NU; }

void sx_vc_join(const sx_blk *k, uint32_t *dst, const uint32_t *src) {
  for (int i = 0; i < k->NU; i++)
    if (src[i] > dst[i]) dst[i] = src[i];
}

void sx_release(sx *x) { sx_vc(x->k, x->g)[x->g]++; }

void sx_clock_block_start(sx_blk *k) {
  uint32_t top = k->base;
  for (size_t i = 0; i < (size_t)k->G * (size_t)k->NU; i++)
    if (k->vc[i] > top) top = k->vc[i];
  for (int j = 0; j < k->nmb; j++)
    if (k->base + k->mb[j].phase > top) top = k->base + k->mb[j].phase;
  if (top > UINT32_C(0xC0000000) || k->base == 0) { /* first block, or clocks near overflow */
    if (k->smem_size) {
      memset(k->sstate, 0, sizeof(sx_byte) * (size_t)k->smem_size);
      memset(k->rd, 0, sizeof(sx_rd) * (size_t)k->smem_size * (size_t)k->G);
    }
    top = 0;
  }
  k->base = top + 1;
  for (size_t i = 0; i < (size_t)k->G * (size_t)k->NU; i++) k->vc[i] = k->base;
  /* a gang's own accesses start one above what the others know of it */
  for (int g = 0; g < k->G; g++) sx_vc(k, g)[g] = k->base + 1;
}

/* Does an access by (unit, clk, thr) happen before the current point of thread t of gang x->g? */
bool sx_happens_before(const sx *x, int unit, uint32_t clk, int thr, int t) {
  const uint32_t *vc = x->k->vc + (size_t)x->g * (size_t)x->k->NU;
  if (unit >= x->k->G) return clk <= vc[unit]; /* async-proxy write: only its mbarrier phase orders it */
  if (thr == t) return true;
  if (unit == x->g) return clk < vc[x->g];
  return clk <= vc[unit];
}

static void describe_byte(const sx_buf *sb, int64_t off, char *buf, size_t n) {
  snprintf(buf, n, "'%s'[%lld]", sb->b->name, (long long)(off / sb->eb));
}

static const char *sync_hint(const sx *x) { return x->k->G == 1 ? "T.sync_threads()" : "synchronisation"; }

static bool check_written(sx *x, const sx_buf *sb, int64_t off, const sx_byte *s, int t) {
  if (s->w_clk >= x->k->base) return true;
  char what[160];
  describe_byte(sb, off, what, sizeof what);
  return sx_fail(x, "read of uninitialised shared memory: thread %d reads %s, which nothing wrote", t, what);
}

/* Read-after-write check of one byte for thread t. */
static bool check_raw(sx *x, const sx_buf *sb, int64_t off, const sx_byte *s, int t) {
  char what[160];
  uint32_t wclk = s->w_clk;
  if (s->w_grp >= 0) {
    sx_async *as = &x->k->async[s->w_thr];
    if (s->w_grp >= as->completed) {
      describe_byte(sb, off, what, sizeof what);
      return sx_fail(x,
                     "read of shared memory before its cp.async completed: thread %d reads %s, copied "
                     "by thread %d in cp.async group %d, with no T.ptx_wait_group covering that group",
                     t, what, s->w_thr, s->w_grp);
    }
    wclk = as->done_clk[s->w_grp];
  }
  if (sx_happens_before(x, s->w_unit, wclk, s->w_thr, t)) return true;
  describe_byte(sb, off, what, sizeof what);
  if (s->w_unit >= x->k->G) {
    const sx_mbar *mb = &x->k->mb[s->w_unit - x->k->G];
    return sx_fail(x,
                   "data race on shared memory: thread %d reads %s, written by the %s of "
                   "thread %d before a wait observed its mbarrier '%s'[%lld] complete phase %u "
                   "(T.ptx_mbarrier_wait)",
                   t, what, s->w_grp == SX_GRP_TMA ? "T.ptx_tma_load" : "T.ptx_cp_async_bulk", s->w_thr, mb->b->name,
                   (long long)mb->el, s->w_clk - x->k->base - 1);
  }
  return sx_fail(x, "data race on shared memory: thread %d reads %s, written by thread %d with no %s in between", t,
                 what, s->w_thr, sync_hint(x));
}

static void record_read(sx *x, int64_t byte, int t) {
  sx_rd *r = &x->k->rd[(size_t)x->g * (size_t)x->k->smem_size + (size_t)byte];
  uint32_t now = sx_vc(x->k, x->g)[x->g];
  if (r->clk != now) {
    r->clk = now;
    r->thr = (int16_t)t;
  } else if (r->thr != t) {
    r->thr = SX_MANY;
  }
}

void sx_smem_note_read(sx *x, int64_t byte, int t) {
  if (x->check) record_read(x, byte, t);
}

bool sx_smem_read(sx *x, const sx_buf *sb, int64_t off, int n, int t) {
  if (!x->check) return true;
  sx_blk *k = x->k;
  const uint32_t *vc = sx_vc(k, x->g);
  uint32_t now = vc[x->g];
  int64_t b0 = sb->base + off;
  const sx_byte *st = k->sstate + b0;
  sx_rd *rd = k->rd + (size_t)x->g * (size_t)k->smem_size + (size_t)b0;
  for (int i = 0; i < n; i++) {
    const sx_byte *s = &st[i];
    /* fast path: a store (or a waited-for cp.async) of this block by a gang, by this thread or ordered
       before by a synchronisation */
    uint32_t wclk = s->w_clk;
    bool fast = wclk >= k->base && s->w_unit < k->G;
    if (fast && s->w_grp >= 0) {
      const sx_async *as = &k->async[s->w_thr];
      fast = s->w_grp < as->completed;
      if (fast) wclk = as->done_clk[s->w_grp];
    }
    fast = fast && (s->w_thr == t || (s->w_unit == x->g ? wclk < now : wclk <= vc[s->w_unit]));
    if (!fast && (!check_written(x, sb, off + i, s, t) || !check_raw(x, sb, off + i, s, t))) return false;
    sx_rd *r = &rd[i];
    if (r->clk != now) {
      r->clk = now;
      r->thr = (int16_t)t;
    } else if (r->thr != t) {
      r->thr = SX_MANY;
    }
  }
  return true;
}

bool sx_smem_read_async(sx *x, const sx_buf *sb, int64_t off, int64_t n, int t, const char *what_op) {
  if (!x->check) return true;
  for (int64_t k = 0; k < n; k++) {
    int64_t byte = sb->base + off + k;
    const sx_byte *s = &x->k->sstate[byte];
    if (!check_written(x, sb, off + k, s, t) || !check_raw(x, sb, off + k, s, t)) return false;
    const sx_async *wa = &x->k->async[s->w_thr];
    if (s->w_fence != SX_ASYNC_WRITE && wa->fences == s->w_fence) {
      char what[160];
      describe_byte(sb, off + k, what, sizeof what);
      return sx_fail(x,
                     "proxy ordering: %s of thread %d reads %s through the async proxy, but thread %d wrote "
                     "it with an ordinary store and executed no T.ptx_fence_proxy_async() after that store",
                     what_op, t, what, s->w_thr);
    }
    /* a cp.async's bytes are performed when its group completes: the fence must follow that */
    if (s->w_fence != SX_ASYNC_WRITE && s->w_grp >= 0 && s->w_clk >= x->k->base && s->w_grp < wa->completed &&
        wa->fences == wa->done_fence[s->w_grp]) {
      char what[160];
      describe_byte(sb, off + k, what, sizeof what);
      return sx_fail(x,
                     "proxy ordering: %s of thread %d reads %s through the async proxy, but thread %d wrote "
                     "it with a cp.async (group %d) and executed no T.ptx_fence_proxy_async() after the "
                     "T.ptx_wait_group that completed it",
                     what_op, t, what, s->w_thr, s->w_grp);
    }
    record_read(x, byte, t);
  }
  return true;
}

/* Write-after-read check of one byte for a write by thread t whose clock is vc (a gang's, wg, or a
 * bulk copy's snapshot, wg -1). */
static bool war_ordered(const sx_blk *k, int64_t byte, int t, const uint32_t *vc, int wg, int *bad) {
  for (int g = 0; g < k->G; g++) {
    const sx_rd *r = &k->rd[(size_t)g * (size_t)k->smem_size + (size_t)byte];
    if (r->clk < k->base || r->thr == t) continue;
    if (g == wg ? r->clk < vc[g] : r->clk <= vc[g]) continue;
    *bad = g;
    return false;
  }
  return true;
}

static bool check_war(sx *x, const sx_buf *sb, int64_t off, int64_t byte, int t, const uint32_t *vc, int wg) {
  int g;
  if (war_ordered(x->k, byte, t, vc, wg, &g)) return true;
  const sx_rd *r = &x->k->rd[(size_t)g * (size_t)x->k->smem_size + (size_t)byte];
  char what[160];
  describe_byte(sb, off, what, sizeof what);
  if (r->thr == SX_MANY)
    return sx_fail(x,
                   "data race on shared memory: thread %d writes %s, which other threads read with "
                   "no %s in between",
                   t, what, sync_hint(x));
  return sx_fail(x, "data race on shared memory: thread %d writes %s, which thread %d read with no %s in between", t,
                 what, r->thr, sync_hint(x));
}

/* A write of bytes [byte, byte + n) that a bulk store not yet waited for may still read. */
static bool check_pending_bulk_read(sx *x, const sx_buf *sb, int64_t off, int64_t n, int t) {
  const sx_blk *k = x->k;
  int64_t lo = sb->base + off, hi = lo + n;
  for (int i = 0; i < k->nbread; i++) {
    const sx_bulk_read *r = &k->bread[i];
    if (r->hi <= lo || hi <= r->lo || r->group < k->async[r->thr].bulk_completed) continue;
    char what[160];
    describe_byte(sb, (r->lo > lo ? r->lo : lo) - sb->base, what, sizeof what);
    return sx_fail(x,
                   "thread %d writes %s while the T.ptx_cp_async_bulk_store of thread %d (bulk group %d) may "
                   "still read it: no T.ptx_bulk_wait_group of that thread covers the group",
                   t, what, r->thr, r->group);
  }
  return true;
}

static bool check_pending_cp_async(sx *x, const sx_buf *sb, int64_t off, const sx_byte *s, int t) {
  if (s->w_clk < x->k->base || s->w_grp < 0 || s->w_grp < x->k->async[s->w_thr].completed) return true;
  char what[160];
  describe_byte(sb, off, what, sizeof what);
  return sx_fail(x, "thread %d writes %s while a cp.async of thread %d (group %d) to it is still pending", t, what,
                 s->w_thr, s->w_grp);
}

bool sx_smem_write(sx *x, const sx_buf *sb, int64_t off, int n, int t, int32_t group) {
  if (!x->check) return true;
  sx_blk *k = x->k;
  const uint32_t *vc = sx_vc(k, x->g);
  if (k->nbread && !check_pending_bulk_read(x, sb, off, n, t)) return false;
  if (k->nwgr && !sx_wgmma_check_write(x, sb, off, n, t)) return false;
  int g_unused;
  uint32_t fences = k->async[t].fences;
  for (int i = 0; i < n; i++) {
    int64_t byte = sb->base + off + i;
    sx_byte *s = &k->sstate[byte];
    bool fast = war_ordered(k, byte, t, vc, x->g, &g_unused) &&
                (s->w_grp < 0 || s->w_clk < k->base || s->w_grp < k->async[s->w_thr].completed);
    if (!fast && (!check_war(x, sb, off + i, byte, t, vc, x->g) || !check_pending_cp_async(x, sb, off + i, s, t)))
      return false;
    s->w_clk = vc[x->g];
    s->w_unit = (int16_t)x->g;
    s->w_thr = (int16_t)t;
    s->w_grp = group;
    s->w_fence = fences;
  }
  return true;
}

bool sx_smem_write_async(sx *x, const sx_bulk *c, int unit, uint32_t clk) {
  if (!x->check) return true;
  sx_blk *k = x->k;
  if (k->nbread && !check_pending_bulk_read(x, c->dst, c->dst_byte, c->bytes, c->thr)) return false;
  if (k->nwgr && !sx_wgmma_check_write(x, c->dst, c->dst_byte, c->bytes, c->thr)) return false;
  for (int64_t i = 0; i < c->bytes; i++) {
    int64_t byte = c->dst->base + c->dst_byte + i;
    sx_byte *s = &k->sstate[byte];
    if (!check_war(x, c->dst, c->dst_byte + i, byte, c->thr, c->vc, -1) ||
        !check_pending_cp_async(x, c->dst, c->dst_byte + i, s, c->thr))
      return false;
    s->w_clk = clk;
    s->w_unit = (int16_t)unit;
    s->w_thr = (int16_t)c->thr;
    s->w_grp = c->tma ? SX_GRP_TMA : -1; /* only names the writer in messages */
    s->w_fence = SX_ASYNC_WRITE;
  }
  return true;
}
