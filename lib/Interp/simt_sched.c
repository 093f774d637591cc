/* SIMT executor: the warp scheduler.  A block runs as gangs, each its own
 * thread of control: one warp per gang.  The lanes of a gang run in
 * lockstep with divergence masks (simt_exec.c).
 *
 * Algorithm.  Each gang of a multi-gang block runs the statement executor
 * on its own stack (ucontext; 8 MiB of reserved, lazily committed memory
 * with a guard page; the AddressSanitizer fiber hooks announce each
 * switch).  One gang runs at a time; it runs until it blocks (sx_block: at
 * a barrier that has not completed, or an mbarrier wait whose phase has not
 * completed) or finishes, then control returns to the scheduler, which
 * first lets the async proxy perform the pending bulk copies (simt_mbar.c)
 * and then resumes a ready gang: the lowest-numbered one by default
 * (deterministic), a random one (xorshift64* seeded with the schedule seed)
 * otherwise; with a seed a gang also yields after a statement with
 * probability 1/8 and each pending bulk copy is performed with probability
 * 1/2 per scheduling point, so that the interleavings differ from run to
 * run of different seeds and repeat for one seed.  When no gang is ready
 * and no copy is pending, the block has deadlocked: the error names each
 * blocked gang (warp, threads, source line), what it waits for (barrier id
 * and arrivals, or mbarrier buffer, element, byte offset, awaited parity,
 * current phase, pending arrivals and tx-count) and the gangs that have
 * exited. */
#include "Interp/simt_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <ucontext.h>

#if defined(__SANITIZE_ADDRESS__)
#define SX_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define SX_ASAN 1
#endif
#endif
#ifdef SX_ASAN
#include <sanitizer/common_interface_defs.h>
#endif

#define SX_STACK ((size_t)8 << 20)
#define SX_PAGE ((size_t)4096)

enum { SX_G_READY, SX_G_BLOCKED, SX_G_DONE };

typedef struct sx_gang {
  sx x;
  ucontext_t uc;
  void *stack; /* SX_STACK bytes, the lowest page a guard */
  int state;
  int wait_kind; /* SX_WAIT_* */
  int wait_id;   /* barrier id, or mbarrier index */
  int wait_parity;
  const tl_stmt *wait_at;
} sx_gang;

struct sx_sched {
  sx_gang gang[SX_MAX_GANGS];
  int G;
  ucontext_t main_uc;
  const void *main_bottom; /* the scheduler's stack (AddressSanitizer) */
  size_t main_size;
  int running;
  uint64_t rng;
  const tl_stmt *kernel;
  sx *root;
};

static _Thread_local struct sx_sched *tls_sched;

uint64_t sx_rand(sx_blk *k) {
  uint64_t *s = &k->sched->rng;
  *s ^= *s >> 12;
  *s ^= *s << 25;
  *s ^= *s >> 27;
  return *s * UINT64_C(2685821657736338717);
}

/* ------------------------------------------------------------ switching */
static void to_gang(struct sx_sched *s, sx_gang *g) {
#ifdef SX_ASAN
  void *fake = NULL;
  __sanitizer_start_switch_fiber(&fake, (char *)g->stack + SX_PAGE, SX_STACK - SX_PAGE);
  swapcontext(&s->main_uc, &g->uc);
  __sanitizer_finish_switch_fiber(fake, NULL, NULL);
#else
  swapcontext(&s->main_uc, &g->uc);
#endif
}

static void to_scheduler(struct sx_sched *s, sx_gang *g) {
#ifdef SX_ASAN
  void *fake = NULL;
  __sanitizer_start_switch_fiber(&fake, s->main_bottom, s->main_size);
  swapcontext(&g->uc, &s->main_uc);
  __sanitizer_finish_switch_fiber(fake, &s->main_bottom, &s->main_size);
#else
  swapcontext(&g->uc, &s->main_uc);
#endif
}

static void gang_entry(void) {
  struct sx_sched *s = tls_sched;
  sx_gang *g = &s->gang[s->running];
#ifdef SX_ASAN
  __sanitizer_finish_switch_fiber(NULL, &s->main_bottom, &s->main_size);
#endif
  sx_exec_gang(&g->x, s->kernel);
  g->state = SX_G_DONE;
#ifdef SX_ASAN
  __sanitizer_start_switch_fiber(NULL, s->main_bottom, s->main_size);
#endif
  setcontext(&s->main_uc);
}

/* ------------------------------------------------------------- set-up */
bool sx_sched_create(sx *root, sx_blk *k) {
  struct sx_sched *s = calloc(1, sizeof *s);
  if (!s) return sx_fail(root, "out of memory in the SIMT executor");
  k->sched = s;
  s->G = k->G;
  s->root = root;
  for (int i = 0; i < s->G; i++) {
    sx_gang *g = &s->gang[i];
    g->stack = mmap(NULL, SX_STACK, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (g->stack == MAP_FAILED) {
      g->stack = NULL;
      return sx_fail(root, "out of memory in the SIMT executor (warp stacks)");
    }
    mprotect(g->stack, SX_PAGE, PROT_NONE);
    sx *x = &g->x;
    *x = *root;
    x->chunks = NULL;
    x->nchunks = x->chunk = 0;
    x->scratch_total = 0;
    tl_map_init(&x->env);
    tl_map_init(&x->vbufs);
    x->penv = &root->env;
    x->in_gang = true;
    x->g = i;
    x->tbase = i * k->gang_threads;
    x->T = k->T - x->tbase < k->gang_threads ? k->T - x->tbase : k->gang_threads;
  }
  return true;
}

void sx_sched_destroy(sx_blk *k) {
  struct sx_sched *s = k->sched;
  if (!s) return;
  for (int i = 0; i < s->G; i++) {
    sx_gang *g = &s->gang[i];
    if (g->stack) munmap(g->stack, SX_STACK);
    for (int c = 0; c < g->x.nchunks; c++) free(g->x.chunks[c].data);
    free(g->x.chunks);
    tl_map_free(&g->x.env);
    tl_map_free(&g->x.vbufs);
  }
  free(s);
  k->sched = NULL;
}

/* ------------------------------------------------------------ blocking */
static bool wait_ready(const sx_blk *k, const sx_gang *g) {
  switch (g->wait_kind) {
  case SX_WAIT_BAR: return !(k->nbar[g->wait_id].waiting & (UINT64_C(1) << g->x.g));
  case SX_WAIT_MBAR: return (int)(k->mb[g->wait_id].phase & 1) != (g->wait_parity & 1);
  default: return true;
  }
}

bool sx_block(sx *x, int kind, int id, int parity) {
  sx_blk *k = x->k;
  struct sx_sched *s = k->sched;
  if (!s || !x->in_gang) return sx_fail(x, "internal error: a wait outside the warp scheduler");
  sx_gang *g = &s->gang[x->g];
  g->wait_kind = kind;
  g->wait_id = id;
  g->wait_parity = parity;
  g->wait_at = x->cur;
  if (kind != SX_WAIT_NONE && wait_ready(k, g) && !x->schedule_seed) {
    g->wait_kind = SX_WAIT_NONE;
    return true;
  }
  g->state = SX_G_BLOCKED;
  to_scheduler(s, g);
  g->wait_kind = SX_WAIT_NONE;
  return !x->failed;
}

void sx_maybe_yield(sx *x) {
  sx_blk *k = x->k;
  if (!k->sched || !x->in_gang || (sx_rand(k) & 7) != 0) return;
  sx_gang *g = &k->sched->gang[x->g];
  g->state = SX_G_READY;
  to_scheduler(k->sched, g);
}

/* ------------------------------------------------------------ deadlock */
static void loc_text(const tl_stmt *at, char *buf, size_t n) {
  if (at && at->loc.file) snprintf(buf, n, "%s:%d", at->loc.file, at->loc.line);
  else snprintf(buf, n, "?");
}

static void describe_wait(const sx_blk *k, const sx_gang *g, char *buf, size_t n) {
  if (g->wait_kind == SX_WAIT_BAR) {
    const sx_nbar *b = &k->nbar[g->wait_id];
    snprintf(buf, n, "barrier %d (%s%d threads, %d arrived)", g->wait_id, g->wait_id == 0 ? "T.sync_threads(), " : "",
             b->expected, b->arrived);
    return;
  }
  const sx_mbar *m = &k->mb[g->wait_id];
  snprintf(buf, n,
           "mbarrier '%s'[%lld] (shared byte offset %lld) for the phase of parity %d to complete (phase %u "
           "in progress, parity %u: %d of %d arrivals pending, tx-count %lld)",
           m->b->name, (long long)m->el, (long long)m->addr, g->wait_parity & 1, m->phase, m->phase & 1, m->pending,
           m->expected, (long long)m->tx);
}

static void report_deadlock(struct sx_sched *s, sx_blk *k) {
  char msg[8192], part[512], where[256];
  size_t len = 0;
  const sx_gang *first = NULL;
  len += (size_t)snprintf(msg + len, sizeof msg - len, "deadlock: every warp of the block is blocked:");
  for (int i = 0; i < s->G && len < sizeof msg; i++) {
    const sx_gang *g = &s->gang[i];
    const sx *gx = &g->x;
    if (g->state == SX_G_DONE) {
      len += (size_t)snprintf(msg + len, sizeof msg - len, " warp %d (threads %d-%d) has exited;", i, gx->tbase,
                              gx->tbase + gx->T - 1);
      continue;
    }
    if (!first) first = g;
    describe_wait(k, g, part, sizeof part);
    loc_text(g->wait_at, where, sizeof where);
    len += (size_t)snprintf(msg + len, sizeof msg - len, " warp %d (threads %d-%d) at %s waits on %s;", i, gx->tbase,
                            gx->tbase + gx->T - 1, where, part);
  }
  if (len >= sizeof msg) len = sizeof msg - 1;
  if (len && msg[len - 1] == ';') msg[len - 1] = 0;
  sx *x = s->root;
  tl_loc loc = first && first->wait_at ? first->wait_at->loc : x->cur ? x->cur->loc : TL_LOC_NONE;
  tl_error(x->d, loc, "%s (block (%lld, %lld, %lld))", msg, (long long)x->block[0], (long long)x->block[1],
           (long long)x->block[2]);
  for (int i = 0; i < s->G; i++) {
    const sx_gang *g = &s->gang[i];
    if (g->state != SX_G_DONE && g != first && g->wait_at) tl_note(x->d, g->wait_at->loc, "warp %d waits here", i);
  }
  x->failed = true;
}

/* ------------------------------------------------------------ the loop */
static int pick(struct sx_sched *s, sx_blk *k, bool seeded) {
  int ready[SX_MAX_GANGS], n = 0;
  for (int i = 0; i < s->G; i++) {
    sx_gang *g = &s->gang[i];
    if (g->state == SX_G_DONE) continue;
    if (g->state == SX_G_READY || wait_ready(k, g)) ready[n++] = i;
  }
  if (n == 0) return -1;
  return seeded ? ready[sx_rand(k) % (uint64_t)n] : ready[0];
}

/* A fresh context that starts gang_entry on g's stack (kept out of the
 * scheduler loop: getcontext returns twice). */
static __attribute__((noinline)) bool make_gang_context(sx_gang *g) {
  if (getcontext(&g->uc) != 0) return false;
  g->uc.uc_stack.ss_sp = (char *)g->stack + SX_PAGE;
  g->uc.uc_stack.ss_size = SX_STACK - SX_PAGE;
  g->uc.uc_link = NULL;
  makecontext(&g->uc, gang_entry, 0);
  return true;
}

bool sx_sched_run_block(sx *root, const tl_stmt *kernel) {
  sx_blk *k = root->k;
  struct sx_sched *s = k->sched;
  bool seeded = root->schedule_seed != 0;
  s->kernel = kernel;
  s->rng = (root->schedule_seed ^ (uint64_t)(root->block[0] * 7919 + root->block[1] * 104729 + root->block[2])) | 1;
  tls_sched = s;
  for (int i = 0; i < s->G; i++) {
    sx_gang *g = &s->gang[i];
    sx *x = &g->x;
    x->failed = false;
    x->steps = 0;
    x->depth = root->depth;
    x->cur = kernel;
    x->chunk = 0;
    if (x->nchunks) x->chunks[0].used = 0;
    memcpy(x->block, root->block, sizeof x->block);
    tl_map_free(&x->env);
    tl_map_init(&x->env);
    tl_map_free(&x->vbufs); /* views bound in the last block (its arena) */
    tl_map_init(&x->vbufs);
    g->state = SX_G_READY;
    g->wait_kind = SX_WAIT_NONE;
    if (!make_gang_context(g)) return sx_fail(root, "getcontext failed");
  }
  bool ok = true;
  for (;;) {
    if (!sx_bulk_progress(root, seeded, false)) {
      ok = false;
      break;
    }
    int next = pick(s, k, seeded);
    if (next < 0) {
      bool all_done = true;
      for (int i = 0; i < s->G; i++) all_done &= s->gang[i].state == SX_G_DONE;
      if (k->nbulk) {
        if (!sx_bulk_progress(root, seeded, true)) {
          ok = false;
          break;
        }
        continue;
      }
      if (!all_done) {
        report_deadlock(s, k);
        ok = false;
      }
      break;
    }
    sx_gang *g = &s->gang[next];
    g->state = SX_G_READY;
    s->running = next;
    to_gang(s, g);
    if (g->x.failed) {
      ok = false;
      break;
    }
  }
  tls_sched = NULL;
  if (!ok) root->failed = true;
  return ok;
}

sx *sx_gang_of(sx_blk *k, int t) { return &k->sched->gang[t / k->gang_threads].x; }
