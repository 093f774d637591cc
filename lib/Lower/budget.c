/* Compile budgets of a function, checked by
 * tl_lower_module before LLVM runs: per-thread arrays and fully unrolled
 * loops are what make the LLVM stage take minutes and gigabytes (a
 * 128x128000 fragment: > 300 s), so both are bounded here with a located
 * diagnostic instead.
 *  1. Register estimate (tl_lower_check_registers, right after pass
 *     layout-inference).  Requires: tile IR whose fragments have their
 *     layouts.  Per kernel, the sum over the buffers it allocates of their
 *     per-thread 32-bit registers: a fragment's layout registers (nregs,
 *     frag_layout.h), a `local` buffer's elements, a `local.var` one, each
 *     times ceil(bits * lanes / 32) (16-bit elements packed two per
 *     register).  No liveness: every array counts as live at once; the
 *     lowering's own short-lived operand registers (mma A/B fragments,
 *     reduction scratch) are not counted.  ptxas gives a thread at most 255
 *     registers (the PTX ISA's .maxnreg); beyond them arrays spill to local
 *     memory.  Without liveness the estimate can exceed what the code keeps
 *     live (test/GPU/kernels/reduce_rows.py at M=192 N=64 threads=32: 320
 *     estimated, ptxas used 205 without spills), so the warning comes above
 *     TL_BUDGET_REGS_WARN = 2 * 255; above TL_BUDGET_REGS_MAX an error;
 *     either is located at the largest buffer's allocation, and a note names
 *     each buffer (shape, dtype, registers) at its allocation.
 *  2. Unrolled code size (tl_lower_check_unrolled, after the last pass).
 *     Requires: SIMT IR.  The size of the kernel body once every T.unroll /
 *     T.vectorized loop of constant extent is fully unrolled (codegen marks
 *     both for full unrolling, lib/NVPTX/codegen.c) and serial loops are
 *     kept: one per statement plus one per load and call in it (the memory
 *     accesses, whose count LLVM's time grows with faster than linearly).
 *     Above TL_BUDGET_UNROLLED_MAX an error, located at the unrolled loop of
 *     the largest expansion.
 * Guarantees: nothing is changed.  Both bounds keep the LLVM stage of an
 * accepted kernel in seconds (the 128x16384 f32 fragment, 16384 registers
 * per thread and ~20,000 unrolled statements, took 6 s in LLVM on the
 * development machine). */
#include "IR/visit.h"
#include "Lower/lower_internal.h"

#include <stdlib.h>

#define BUDGET_MAX_DEPTH 2000

typedef struct budget_buf {
  const tl_buffer *b;
  int64_t regs;
} budget_buf;

typedef struct budget_state {
  TL_VEC(budget_buf) bufs;   /* per-thread buffers of the kernel */
  const tl_stmt *worst_loop; /* unrolled loop of the largest expansion */
  int64_t worst_count;
  bool oom;
} budget_state;

static int64_t sat_add(int64_t a, int64_t b) {
  int64_t r;
  return __builtin_add_overflow(a, b, &r) ? INT64_MAX : r;
}
static int64_t sat_mul(int64_t a, int64_t b) {
  int64_t r;
  return __builtin_mul_overflow(a, b, &r) ? INT64_MAX : r;
}

/* Per-thread 32-bit registers of buffer b (0: not per-thread, no layout, or
 * a dim that is not constant). */
static int64_t buffer_regs(const tl_buffer *b) {
  int64_t elems = 1;
  if (b->scope == TL_SCOPE_FRAGMENT) {
    const tl_frag_layout *L = tl_frag_layout_of(b);
    if (!L || L->nregs < 0) return 0;
    elems = L->nregs;
  } else if (b->scope == TL_SCOPE_LOCAL || b->scope == TL_SCOPE_LOCAL_VAR) {
    for (int i = 0; i < b->ndim; i++) {
      const tl_expr *e = b->shape[i];
      if (!e || e->kind != TL_EXPR_INT || e->u.ival < 0) return 0;
      elems = sat_mul(elems, e->u.ival);
    }
  } else {
    return 0;
  }
  int64_t bits = sat_mul(elems, (int64_t)b->dtype.bits * (b->dtype.lanes ? b->dtype.lanes : 1));
  return bits == INT64_MAX ? INT64_MAX : (bits + 31) / 32;
}

/* Loads and calls of an expression or leaf statement: each is an
 * instruction (a memory access, an intrinsic) besides the statement's own. */
typedef struct access_count {
  tl_visitor v;
  int64_t n;
} access_count;
static void count_access(tl_visitor *v, const tl_expr *e) {
  if (e->kind == TL_EXPR_LOAD || e->kind == TL_EXPR_CALL) ((access_count *)v)->n++;
}
static int64_t leaf_cost(const tl_stmt *s, const tl_expr *cond) {
  access_count c = {{.expr = count_access}, 1};
  if (s) tl_visit_stmt(&c.v, s);
  if (cond) tl_visit_expr(&c.v, cond);
  return c.n;
}

/* Statements of s once its unrolled loops are fully unrolled; records the
 * per-thread buffers allocated on the way. */
static int64_t unrolled(budget_state *st, const tl_stmt *s, int depth) {
  if (!s || depth > BUDGET_MAX_DEPTH) return 0;
  switch (s->kind) {
  case TL_STMT_SEQ: {
    int64_t n = 0;
    for (int i = 0; i < s->u.seq.n; i++) n = sat_add(n, unrolled(st, s->u.seq.stmts[i], depth + 1));
    return n;
  }
  case TL_STMT_FOR: {
    int64_t n = unrolled(st, s->u.loop.body, depth + 1);
    bool unroll = s->u.loop.kind == TL_LOOP_UNROLL || s->u.loop.kind == TL_LOOP_VECTORIZED;
    for (int v = 0; unroll && v < s->u.loop.nvars; v++) {
      const tl_expr *x = s->u.loop.extents[v];
      if (x && x->kind == TL_EXPR_INT && x->u.ival > 1) n = sat_mul(n, x->u.ival);
    }
    if (unroll && n > st->worst_count) {
      st->worst_count = n;
      st->worst_loop = s;
    }
    return sat_add(n, 1);
  }
  case TL_STMT_KERNEL: return sat_add(unrolled(st, s->u.kernel.body, depth + 1), 1);
  case TL_STMT_ALLOC: {
    const tl_buffer *b = s->u.alloc.buffer;
    int64_t regs = b ? buffer_regs(b) : 0;
    budget_buf bb = {b, regs};
    if (regs && !tl_vec_push(&st->bufs, bb)) st->oom = true;
    return 1;
  }
  case TL_STMT_IF:
    return sat_add(leaf_cost(NULL, s->u.ifs.cond),
                   sat_add(unrolled(st, s->u.ifs.then_s, depth + 1), unrolled(st, s->u.ifs.else_s, depth + 1)));
  case TL_STMT_WHILE: return sat_add(leaf_cost(NULL, s->u.whiles.cond), unrolled(st, s->u.whiles.body, depth + 1));
  case TL_STMT_STORE:
  case TL_STMT_LET:
  case TL_STMT_EVAL: return leaf_cost(s, NULL);
  case TL_STMT_TILE: return 1;
  }
  return 1;
}

static void shape_text(tl_strbuf *sb, const tl_buffer *b) {
  tl_strbuf_append(sb, "(");
  for (int i = 0; i < b->ndim; i++) {
    const tl_expr *e = b->shape[i];
    if (e && e->kind == TL_EXPR_INT) tl_strbuf_printf(sb, "%s%lld", i ? ", " : "", (long long)e->u.ival);
    else tl_strbuf_printf(sb, "%s?", i ? ", " : "");
  }
  tl_strbuf_append(sb, b->ndim == 1 ? ",)" : ")");
}

/* The register diagnostic of one kernel: false after an error. */
static bool check_registers(budget_state *st, const tl_stmt *kernel, tl_diag *d) {
  int64_t total = 0;
  size_t worst = 0;
  for (size_t i = 0; i < st->bufs.len; i++) {
    total = sat_add(total, st->bufs.data[i].regs);
    if (st->bufs.data[i].regs > st->bufs.data[worst].regs) worst = i;
  }
  if (total <= TL_BUDGET_REGS_WARN) return true;
  bool error = total > TL_BUDGET_REGS_MAX;
  const tl_buffer *wb = st->bufs.data[worst].b;
  tl_loc at = wb->loc.file ? wb->loc : kernel->loc;
  if (error)
    tl_error(d, at,
             "the kernel's per-thread arrays need about %lld 32-bit registers per thread, over the compile budget of "
             "%d: use smaller fragments or more threads",
             (long long)total, TL_BUDGET_REGS_MAX);
  else
    tl_diag_report(d, TL_DIAG_WARNING, at,
                   "the kernel's per-thread arrays need about %lld 32-bit registers per thread, more than twice "
                   "the 255 a thread can hold: expect spills to local memory",
                   (long long)total);
  for (size_t i = 0; i < st->bufs.len; i++) {
    const tl_buffer *b = st->bufs.data[i].b;
    tl_strbuf sb = {0};
    shape_text(&sb, b);
    tl_note(d, b->loc.file ? b->loc : at, "'%s' %s %s (%s): %lld registers per thread", b->name,
            sb.data && !sb.oom ? sb.data : "()", tl_dtype_name(b->dtype), tl_scope_name(b->scope),
            (long long)st->bufs.data[i].regs);
    tl_strbuf_free(&sb);
  }
  return !error;
}

static bool check_unrolled(budget_state *st, const tl_stmt *kernel, int64_t n, tl_diag *d) {
  if (n <= TL_BUDGET_UNROLLED_MAX) return true;
  const tl_stmt *at = st->worst_loop ? st->worst_loop : kernel;
  tl_error(d, at->loc,
           "the kernel unrolls to %lld statements and accesses, over the compile budget of %d; this loop unrolls "
           "to %lld: "
           "make it T.serial or shrink its extent",
           (long long)n, TL_BUDGET_UNROLLED_MAX, (long long)st->worst_count);
  return false;
}

/* Checks one kernel: the register estimate or the unrolled size. */
static bool check_kernel(const tl_stmt *kernel, bool registers, tl_diag *d) {
  budget_state st = {0};
  int64_t n = unrolled(&st, kernel->u.kernel.body, 0);
  bool ok;
  if (st.oom) {
    tl_error(d, kernel->loc, "out of memory checking the kernel's compile budgets");
    ok = false;
  } else {
    ok = registers ? check_registers(&st, kernel, d) : check_unrolled(&st, kernel, n, d);
  }
  tl_vec_free(&st.bufs);
  return ok;
}

/* The kernels of a function body (top-level statements and sequences). */
static bool check_stmt(const tl_stmt *s, bool registers, tl_diag *d, int depth) {
  if (!s || depth > BUDGET_MAX_DEPTH) return true;
  if (s->kind == TL_STMT_KERNEL) return check_kernel(s, registers, d);
  bool ok = true;
  if (s->kind == TL_STMT_SEQ) {
    for (int i = 0; i < s->u.seq.n; i++) ok = check_stmt(s->u.seq.stmts[i], registers, d, depth + 1) && ok;
  } else if (s->kind == TL_STMT_IF) {
    ok = check_stmt(s->u.ifs.then_s, registers, d, depth + 1);
    ok = check_stmt(s->u.ifs.else_s, registers, d, depth + 1) && ok;
  } else if (s->kind == TL_STMT_FOR) {
    ok = check_stmt(s->u.loop.body, registers, d, depth + 1);
  } else if (s->kind == TL_STMT_WHILE) {
    ok = check_stmt(s->u.whiles.body, registers, d, depth + 1);
  }
  return ok;
}

static bool check_module(const tl_module *m, bool registers, tl_diag *d) {
  bool ok = true;
  for (int i = 0; i < m->nfuncs; i++)
    if (m->funcs[i]) ok = check_stmt(m->funcs[i]->body, registers, d, 0) && ok;
  return ok;
}

bool tl_lower_check_registers(const tl_module *m, tl_diag *d) { return check_module(m, true, d); }
bool tl_lower_check_unrolled(const tl_module *m, tl_diag *d) { return check_module(m, false, d); }
