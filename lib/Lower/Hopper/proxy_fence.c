/* Pass "proxy-fence" of lib/Lower (SIMT IR → SIMT IR, sm_90a): the
 * fence.proxy.async that a wgmma outside the warp-specialized path needs
 * (docs/hopper.md "cp.async + wgmma").
 *
 * wgmma.mma_async reads its shared operands through the async proxy; the
 * threads' stores, stmatrix and cp.async (non-bulk) write them through the
 * generic proxy.  PTX ISA (memory consistency model, "proxies";
 * fence.proxy.async): a generic-proxy write and a later async-proxy access of
 * the same bytes need a proxy fence between them.  Here each writing thread
 * fences after its writes have been performed (a cp.async's once its group
 * completed: after the T.ptx_wait_group that completes it) and before the
 * barrier that publishes them to the warpgroups issuing the wgmma -- the
 * writer-side placement, which the CPU executor checks (simt_race.c: a
 * byte read through the async proxy needs a fence of its writer after the
 * write, after the completion for a cp.async).  TileLang's InjectFenceProxy
 * puts its fence just before the async operation instead; both are orders
 * the memory model allows.
 *
 * The walk tracks, in program order, two sets of the wgmma operand buffers
 * (the flat shared buffers T.ptx_wgmma_ss / _rs name): "pending" (a cp.async
 * into it was issued; T.ptx_wait_group(0) completes them all) and "dirty"
 * (written through the generic proxy since this thread's last fence; every
 * T.ptx_wait_group adds the pending ones, conservatively).  Before a barrier
 * (T.sync_threads, T.ptx_bar_sync) with something dirty it inserts
 * T.ptx_fence_proxy_async() and clears dirty; before a T.ptx_wgmma_fence or a
 * wgmma with something dirty (a write no barrier followed) too.  Branches
 * join (union), loops iterate to a fixed point of their entry state before
 * the inserting walk.
 *
 * Requires: SIMT IR (after lower-tile-ops).  Runs only on functions whose
 * wgmma gemms gemm-wgmma (gemm_wgmma.c) chose; the warp-specialized path
 * fills its tiles by TMA and places its own fences.  Guarantees: every path
 * from a generic write of a wgmma operand buffer to a barrier or wgmma that
 * follows it passes a fence of the writing thread. */
#include <string.h>

#include "IR/visit.h"
#include "Lower/lower_internal.h"

#define PF_MAX 64

typedef struct pf_set {
  uint64_t dirty, pending;
} pf_set;

typedef struct pf_state {
  tl_module *m;
  const tl_buffer *bufs[PF_MAX];
  int n;
  bool oom, too_many;
} pf_state;

static int pf_index(const pf_state *st, const tl_buffer *b) {
  for (int i = 0; i < st->n; i++)
    if (st->bufs[i] == b) return i;
  return -1;
}

static bool is_call(const tl_stmt *s, int op) {
  return s && s->kind == TL_STMT_EVAL && s->u.eval.value && s->u.eval.value->kind == TL_EXPR_CALL &&
         s->u.eval.value->u.call.op == op;
}

/* Collects the shared buffers wgmma calls below s read. */
static void collect(pf_state *st, const tl_stmt *s, int depth) {
  if (!s || depth > TL_LOWER_MAX_DEPTH) return;
  switch (s->kind) {
  case TL_STMT_SEQ:
    for (int i = 0; i < s->u.seq.n; i++) collect(st, s->u.seq.stmts[i], depth + 1);
    return;
  case TL_STMT_FOR: collect(st, s->u.loop.body, depth + 1); return;
  case TL_STMT_WHILE: collect(st, s->u.whiles.body, depth + 1); return;
  case TL_STMT_KERNEL: collect(st, s->u.kernel.body, depth + 1); return;
  case TL_STMT_IF:
    collect(st, s->u.ifs.then_s, depth + 1);
    collect(st, s->u.ifs.else_s, depth + 1);
    return;
  case TL_STMT_EVAL:
    if (is_call(s, TL_INTRIN_PTX_WGMMA_SS) || is_call(s, TL_INTRIN_PTX_WGMMA_RS)) {
      const tl_expr *e = s->u.eval.value;
      for (int a = 0; a < e->u.call.n; a++) {
        const tl_expr *x = e->u.call.args[a];
        const tl_buffer *b = x && x->kind == TL_EXPR_BUFFER ? x->u.buffer : NULL;
        if (!b || (b->scope != TL_SCOPE_SHARED && b->scope != TL_SCOPE_SHARED_DYN) || pf_index(st, b) >= 0) continue;
        if (st->n == PF_MAX) st->too_many = true;
        else st->bufs[st->n++] = b;
      }
    }
    return;
  default: return;
  }
}

/* The tracked buffers that calls inside e (other than the wgmma reads,
 * ldmatrix reads and cp.async, handled apart) may write: any buffer argument
 * counts (conservative). */
static uint64_t call_writes(const pf_state *st, const tl_expr *e, int depth) {
  if (!e || depth > TL_LOWER_MAX_DEPTH) return 0;
  uint64_t w = 0;
  if (e->kind == TL_EXPR_CALL) {
    int op = e->u.call.op;
    bool reads_only = op == TL_INTRIN_PTX_WGMMA_SS || op == TL_INTRIN_PTX_WGMMA_RS || op == TL_INTRIN_PTX_LDMATRIX ||
                      op == TL_INTRIN_PTX_CP_ASYNC;
    for (int a = 0; a < e->u.call.n; a++) {
      const tl_expr *x = e->u.call.args[a];
      int i = x && x->kind == TL_EXPR_BUFFER ? pf_index(st, x->u.buffer) : -1;
      if (i >= 0 && !reads_only) w |= UINT64_C(1) << i;
      w |= call_writes(st, x, depth + 1);
    }
    return w;
  }
  const tl_expr *ops[3];
  int n = tl_expr_operands(e, ops);
  for (int k = 0; k < n; k++) w |= call_writes(st, ops[k], depth + 1);
  if (e->kind == TL_EXPR_LOAD)
    for (int k = 0; k < e->u.load.n; k++) w |= call_writes(st, e->u.load.indices[k], depth + 1);
  return w;
}

/* *slot preceded by T.ptx_fence_proxy_async() (insert mode). */
static void fence_before(pf_state *st, tl_stmt **slot) {
  tl_stmt *f =
      tl_lo_eval(st->m, (*slot)->loc, tl_ir_call(st->m, (*slot)->loc, TL_INTRIN_PTX_FENCE_PROXY_ASYNC, 0, NULL));
  tl_stmt *two[2] = {f, *slot};
  tl_stmt *s = f ? tl_ir_seq(st->m, (*slot)->loc, 2, two) : NULL;
  if (!s) st->oom = true;
  else *slot = s;
}

static pf_set walk(pf_state *st, tl_stmt **slot, pf_set in, bool insert, int depth);

static pf_set walk_loop(pf_state *st, tl_stmt **body, pf_set in, bool insert, int depth) {
  pf_set entry = in;
  for (int it = 0; it < 2 * PF_MAX + 2; it++) { /* the sets only grow */
    pf_set out = walk(st, body, entry, false, depth + 1);
    pf_set next = {entry.dirty | out.dirty, entry.pending | out.pending};
    if (next.dirty == entry.dirty && next.pending == entry.pending) break;
    entry = next;
  }
  pf_set out = walk(st, body, entry, insert, depth + 1);
  return (pf_set){entry.dirty | out.dirty, entry.pending | out.pending}; /* zero iterations: the entry state */
}

static pf_set walk_leaf(pf_state *st, tl_stmt **slot, pf_set s, bool insert) {
  tl_stmt *x = *slot;
  if (x->kind == TL_STMT_STORE) {
    int i = pf_index(st, x->u.store.buffer);
    if (i >= 0) s.dirty |= UINT64_C(1) << i;
    s.dirty |= call_writes(st, x->u.store.value, 0);
    return s;
  }
  if (x->kind == TL_STMT_LET) {
    s.dirty |= call_writes(st, x->u.let.value, 0);
    return s;
  }
  if (x->kind != TL_STMT_EVAL || !x->u.eval.value) return s;
  const tl_expr *e = x->u.eval.value;
  int op = e->kind == TL_EXPR_CALL ? e->u.call.op : -1;
  bool sync = op == TL_INTRIN_SYNC_THREADS || op == TL_INTRIN_PTX_BAR_SYNC;
  bool async_read = op == TL_INTRIN_PTX_WGMMA_FENCE || op == TL_INTRIN_PTX_WGMMA_SS || op == TL_INTRIN_PTX_WGMMA_RS;
  if ((sync || async_read) && s.dirty) {
    if (insert) fence_before(st, slot);
    s.dirty = 0;
  }
  if (op == TL_INTRIN_PTX_CP_ASYNC) {
    const tl_expr *d = e->u.call.n > 0 ? e->u.call.args[0] : NULL;
    int i = d && d->kind == TL_EXPR_BUFFER ? pf_index(st, d->u.buffer) : -1;
    if (i >= 0) s.pending |= UINT64_C(1) << i;
  } else if (op == TL_INTRIN_PTX_WAIT_GROUP) {
    int64_t n = 1;
    s.dirty |= s.pending;
    if (e->u.call.n == 1 && tl_expr_is_const_int(e->u.call.args[0], &n) && n == 0) s.pending = 0;
  }
  s.dirty |= call_writes(st, e, 0);
  return s;
}

static pf_set walk(pf_state *st, tl_stmt **slot, pf_set in, bool insert, int depth) {
  tl_stmt *s = *slot;
  if (!s || depth > TL_LOWER_MAX_DEPTH || st->oom) return in;
  switch (s->kind) {
  case TL_STMT_SEQ:
    for (int i = 0; i < s->u.seq.n; i++) in = walk(st, &s->u.seq.stmts[i], in, insert, depth + 1);
    return in;
  case TL_STMT_FOR: return walk_loop(st, &s->u.loop.body, in, insert, depth);
  case TL_STMT_WHILE: return walk_loop(st, &s->u.whiles.body, in, insert, depth);
  case TL_STMT_KERNEL: return walk(st, &s->u.kernel.body, in, insert, depth + 1);
  case TL_STMT_IF: {
    pf_set a = walk(st, &s->u.ifs.then_s, in, insert, depth + 1);
    pf_set b = s->u.ifs.else_s ? walk(st, &s->u.ifs.else_s, in, insert, depth + 1) : in;
    return (pf_set){a.dirty | b.dirty, a.pending | b.pending};
  }
  default: return walk_leaf(st, slot, in, insert);
  }
}

bool tl_lower_proxy_fence(tl_module *m, tl_primfunc *f, const tl_target *target, tl_diag *d) {
  (void)target;
  if (!tl_gemm_wgmma_marked(f)) return true;
  pf_state st = {.m = m};
  collect(&st, f->body, 0);
  if (st.too_many) {
    tl_error(d, f->loc, "a kernel whose wgmma gemms read more than %d shared buffers is not lowered yet", PF_MAX);
    return false;
  }
  if (!st.n) return true;
  walk(&st, &f->body, (pf_set){0, 0}, true, 0);
  if (st.oom) tl_error(d, f->loc, "out of memory while placing proxy fences");
  return !st.oom;
}
