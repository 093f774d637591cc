/* The work analysis of the tile IR (analyze.h; rules in include/tilelang/ir.h,
 * tl_module_analyze).
 *
 * Algorithm: one bottom-up walk per function.  Each statement yields its
 * counts for one execution (a tile op: its T.gemm FLOPs and the elements of
 * its global regions; a scalar statement: the global elements its
 * expressions load and the one it stores); a loop multiplies its body's
 * counts by its trip count, a T.Kernel by its blocks (and, in a per-thread
 * body, the scalar statements by its threads).  A trip count, grid
 * dimension or extent is evaluated only where the counts below it are not
 * zero, so that a loop of unknown length that does no counted work is no
 * error.  Counts are exact 64-bit integers; an overflow is an error. */
#include "IR/analyze.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "IR/visit.h"

#define AN_MAX_DEPTH 400

typedef struct an_counts {
  uint64_t flops, rd, wr, gemms;
} an_counts;

typedef struct an_let {
  const tl_var *var;
  int64_t value;
} an_let;

typedef struct an_state {
  const tl_analyze_dims *dims;
  bool global;
  tl_diag *d;
  bool failed;
  TL_VEC(an_let) lets; /* the LETs in scope whose values are constants */
  int64_t threads;     /* a per-thread kernel body: its threads (scalar statements run per thread); else 1 */
  uint64_t blocks;     /* the blocks of the T.Kernel scopes counted so far */
} an_state;

static void an_error(an_state *st, tl_loc loc, const char *what, const tl_expr *e) {
  if (st->failed) return; /* the first one: the others follow from it */
  st->failed = true;
  tl_strbuf sb = {0};
  if (e) tl_print_expr(&sb, e);
  tl_error(st->d, e && e->loc.line ? e->loc : loc,
           "analysis: %s is not a compile-time constant%s%s%s; the counts need its value (a symbolic dim: give "
           "it one)",
           what, e ? " (" : "", e && sb.data ? sb.data : "", e ? ")" : "");
  tl_strbuf_free(&sb);
}

static bool mul(an_state *st, uint64_t a, uint64_t b, uint64_t *r, tl_loc loc) {
  if (!__builtin_mul_overflow(a, b, r)) return true;
  if (!st->failed) tl_error(st->d, loc, "analysis: the count exceeds 2^64 - 1 here");
  st->failed = true;
  return false;
}

static bool add(an_state *st, uint64_t *a, uint64_t b, tl_loc loc) {
  if (!__builtin_add_overflow(*a, b, a)) return true;
  if (!st->failed) tl_error(st->d, loc, "analysis: the count exceeds 2^64 - 1 here");
  st->failed = true;
  return false;
}

static bool counts_add(an_state *st, an_counts *a, const an_counts *b, tl_loc loc) {
  return add(st, &a->flops, b->flops, loc) && add(st, &a->rd, b->rd, loc) && add(st, &a->wr, b->wr, loc) &&
         add(st, &a->gemms, b->gemms, loc);
}

static bool counts_scale(an_state *st, an_counts *c, uint64_t k, tl_loc loc) {
  return mul(st, c->flops, k, &c->flops, loc) && mul(st, c->rd, k, &c->rd, loc) && mul(st, c->wr, k, &c->wr, loc) &&
         mul(st, c->gemms, k, &c->gemms, loc);
}

static void counts_max(an_counts *a, const an_counts *b) {
  a->flops = a->flops > b->flops ? a->flops : b->flops;
  a->rd = a->rd > b->rd ? a->rd : b->rd;
  a->wr = a->wr > b->wr ? a->wr : b->wr;
  a->gemms = a->gemms > b->gemms ? a->gemms : b->gemms;
}

static bool counts_zero(const an_counts *c) { return !c->flops && !c->rd && !c->wr && !c->gemms; }

/* ------------------------------------------------------------ constants */
static bool lookup_var(const an_state *st, const tl_var *v, int64_t *out) {
  for (size_t i = st->lets.len; i-- > 0;)
    if (st->lets.data[i].var == v) return *out = st->lets.data[i].value, true;
  if (!st->dims || (v->kind != TL_VAR_DYNAMIC && v->kind != TL_VAR_PARAM) || !v->name) return false;
  for (size_t i = 0; i < st->dims->n; i++)
    if (st->dims->names[i] && !strcmp(v->name, st->dims->names[i])) return *out = st->dims->values[i], true;
  return false;
}

/* e's value when it is an integer constant given the dims and the LETs in scope. */
static bool eval_int(const an_state *st, const tl_expr *e, int64_t *out, int depth) {
  if (!e || depth > AN_MAX_DEPTH) return false;
  int64_t a, b;
  switch (e->kind) {
  case TL_EXPR_INT: *out = e->u.ival; return true;
  case TL_EXPR_VAR: return lookup_var(st, e->u.var, out);
  case TL_EXPR_CAST: return tl_dtype_is_int(e->dtype) && eval_int(st, e->u.cast.value, out, depth + 1);
  case TL_EXPR_BINARY:
    return eval_int(st, e->u.bin.a, &a, depth + 1) && eval_int(st, e->u.bin.b, &b, depth + 1) &&
           tl_int_binop_fold(e->u.bin.op, TL_INT64, a, b, out);
  case TL_EXPR_CALL:
    if (e->u.call.n != 2 || !eval_int(st, e->u.call.args[0], &a, depth + 1) ||
        !eval_int(st, e->u.call.args[1], &b, depth + 1))
      return false;
    switch (e->u.call.op) {
    case TL_INTRIN_CEILDIV:
      if (b <= 0 || a < 0) return false;
      *out = a / b + (a % b != 0);
      return true;
    case TL_INTRIN_MIN: return tl_int_binop_fold(TL_OP_MIN, TL_INT64, a, b, out);
    case TL_INTRIN_MAX: return tl_int_binop_fold(TL_OP_MAX, TL_INT64, a, b, out);
    case TL_INTRIN_FLOORDIV: return tl_int_binop_fold(TL_OP_FLOORDIV, TL_INT64, a, b, out);
    default: return false;
    }
  default: return false;
  }
}

/* e as a count (a negative value counts 0), or an error naming what. */
static bool eval_count(an_state *st, const tl_expr *e, tl_loc loc, const char *what, uint64_t *out) {
  int64_t v;
  if (!eval_int(st, e, &v, 0)) {
    an_error(st, loc, what, e);
    return false;
  }
  *out = v > 0 ? (uint64_t)v : 0;
  return true;
}

/* ---------------------------------------------------------- tile ops */
static bool region_elems(an_state *st, const tl_region *r, const tl_stmt *s, uint64_t *n) {
  int nd = r->ndim ? r->ndim : r->buffer->ndim;
  *n = 1;
  for (int d = 0; d < nd; d++) {
    char what[160];
    snprintf(what, sizeof what, "extent %d of the T.%s region of '%s'", d, tl_tile_ops[s->u.tile.op].name,
             r->buffer->name);
    uint64_t v;
    if (!eval_count(st, r->ndim ? r->extent[d] : r->buffer->shape[d], s->loc, what, &v) || !mul(st, *n, v, n, s->loc))
      return false;
  }
  return true;
}

/* T.gemm(A, B, C): A is M×K, B is K×N, C is M×N in some transposition, so
 * (M·N·K)^2 = |A|·|B|·|C|; M·N·K is found as the integer whose square that
 * is (each operand's elements are a product of its extents). */
static bool gemm_flops(an_state *st, const tl_stmt *s, an_counts *c) {
  uint64_t e[3];
  for (int i = 0; i < 3; i++)
    if (!region_elems(st, &s->u.tile.args[i].region, s, &e[i])) return false;
  if (!e[0] || !e[1] || !e[2]) return true;
  /* M·N·K = sqrt(|A|·|B|·|C|), in integers: |A|·|B| / |C| = K² */
  unsigned __int128 ab = (unsigned __int128)e[0] * e[1];
  if (ab % e[2]) goto odd;
  unsigned __int128 k2 = ab / e[2];
  uint64_t k = (uint64_t)sqrtl((long double)k2);
  while ((unsigned __int128)k * k > k2) k--;
  while ((unsigned __int128)(k + 1) * (k + 1) <= k2) k++;
  if ((unsigned __int128)k * k != k2) goto odd;
  uint64_t mnk;
  c->gemms = 1;
  return mul(st, e[2], k, &mnk, s->loc) && mul(st, mnk, 2, &c->flops, s->loc);
odd:
  tl_error(st->d, s->loc, "analysis: the T.gemm operands (%llu, %llu, %llu elements) are not M×K, K×N and M×N tiles",
           (unsigned long long)e[0], (unsigned long long)e[1], (unsigned long long)e[2]);
  st->failed = true;
  return false;
}

static bool tile_counts(an_state *st, const tl_stmt *s, an_counts *c) {
  int op = s->u.tile.op;
  if (op < 0 || op >= TL_TILE_NUM_OPS) return true;
  if (op == TL_TILE_GEMM && s->u.tile.nargs >= 3 && !gemm_flops(st, s, c)) return false;
  for (int i = 0; st->global && i < s->u.tile.nargs; i++) {
    const tl_operand *o = &s->u.tile.args[i];
    if (o->kind != TL_OPND_REGION || !o->region.buffer || o->region.buffer->scope != TL_SCOPE_GLOBAL) continue;
    uint64_t n, bytes;
    if (!region_elems(st, &o->region, s, &n) ||
        !mul(st, n, (uint64_t)tl_dtype_bytes(o->region.buffer->dtype), &bytes, s->loc) ||
        !add(st, i == tl_tile_ops[op].written ? &c->wr : &c->rd, bytes, s->loc))
      return false;
  }
  return true;
}

/* ------------------------------------------------------- scalar code */
typedef struct load_visit {
  tl_visitor v; /* first */
  uint64_t bytes;
} load_visit;

static uint64_t elem_bytes(const tl_buffer *b, tl_dtype t) {
  return (uint64_t)tl_dtype_bytes(b->dtype) * (t.lanes ? t.lanes : 1);
}

static void count_load(tl_visitor *v, const tl_expr *e) {
  if (e->kind == TL_EXPR_LOAD && e->u.load.buffer && e->u.load.buffer->scope == TL_SCOPE_GLOBAL)
    ((load_visit *)v)->bytes += elem_bytes(e->u.load.buffer, e->dtype);
}

/* The global bytes one execution of scalar statement s (a store, a LET, an
 * expression statement, or an if's condition) reads and writes. */
static void scalar_counts(an_state *st, const tl_stmt *s, const tl_expr *cond, an_counts *c) {
  if (!st->global) return;
  load_visit lv = {.v = {.expr = count_load}};
  if (cond) tl_visit_expr(&lv.v, cond);
  else tl_visit_stmt(&lv.v, s);
  c->rd = lv.bytes;
  if (!cond && s->kind == TL_STMT_STORE && s->u.store.buffer && s->u.store.buffer->scope == TL_SCOPE_GLOBAL)
    c->wr = elem_bytes(s->u.store.buffer, s->u.store.value ? s->u.store.value->dtype : s->u.store.buffer->dtype);
  if (st->threads > 1) (void)counts_scale(st, c, (uint64_t)st->threads, s->loc);
}

/* ------------------------------------------------------------ statements */
static bool stmt_counts(an_state *st, const tl_stmt *s, an_counts *c, int depth);

static bool seq_counts(an_state *st, const tl_stmt *s, an_counts *c, int depth) {
  size_t mark = st->lets.len;
  bool ok = true;
  for (int i = 0; ok && i < s->u.seq.n; i++) {
    an_counts k = {0};
    const tl_stmt *x = s->u.seq.stmts[i];
    ok = stmt_counts(st, x, &k, depth + 1) && counts_add(st, c, &k, x->loc);
    int64_t v;
    if (ok && x->kind == TL_STMT_LET && eval_int(st, x->u.let.value, &v, 0) &&
        !tl_vec_push(&st->lets, ((an_let){x->u.let.var, v}))) {
      tl_error(st->d, x->loc, "analysis: out of memory");
      st->failed = true, ok = false;
    }
  }
  st->lets.len = mark;
  return ok;
}

static bool loop_counts(an_state *st, const tl_stmt *s, an_counts *c, int depth) {
  if (s->u.loop.kind == TL_LOOP_THREAD) {
    tl_error(st->d, s->loc,
             "analysis: a loop bound to the thread index: the analysis counts the tile IR as "
             "written, not lowered SIMT IR");
    st->failed = true;
    return false;
  }
  if (!stmt_counts(st, s->u.loop.body, c, depth + 1)) return false;
  if (counts_zero(c)) return true;
  for (int i = 0; i < s->u.loop.nvars; i++) {
    char what[160];
    snprintf(what, sizeof what, "the trip count of the loop over '%s'",
             s->u.loop.vars && s->u.loop.vars[i] ? s->u.loop.vars[i]->name : "?");
    uint64_t ext, step = 1;
    if (!eval_count(st, s->u.loop.extents[i], s->loc, what, &ext) ||
        (s->u.loop.step && !eval_count(st, s->u.loop.step, s->loc, what, &step)))
      return false;
    if (!counts_scale(st, c, step ? ext / step + (ext % step != 0) : 0, s->loc)) return false;
  }
  return true;
}

static bool kernel_counts(an_state *st, const tl_stmt *s, an_counts *c, int depth) {
  int64_t threads = 1;
  if (tl_stmt_uses_thread_index(s->u.kernel.body, NULL) && !tl_expr_is_const_int(s->u.kernel.threads, &threads))
    threads = 1;
  int64_t saved = st->threads;
  st->threads = threads > 1 ? threads : 1;
  bool ok = stmt_counts(st, s->u.kernel.body, c, depth + 1);
  st->threads = saved;
  if (!ok || (!st->global && counts_zero(c))) return ok; /* FLOPs only: a grid that scales nothing is not needed */
  uint64_t blocks = 1;
  for (int g = 0; ok && g < s->u.kernel.ngrid; g++) {
    char what[64];
    snprintf(what, sizeof what, "grid dimension %d of T.Kernel", g);
    uint64_t v;
    ok = eval_count(st, s->u.kernel.grid[g], s->loc, what, &v) && mul(st, blocks, v, &blocks, s->loc);
  }
  return ok && add(st, &st->blocks, blocks, s->loc) && counts_scale(st, c, blocks, s->loc);
}

static bool stmt_counts(an_state *st, const tl_stmt *s, an_counts *c, int depth) {
  if (!s) return true;
  if (depth > AN_MAX_DEPTH) {
    tl_error(st->d, s->loc, "analysis: statements nested deeper than %d levels", AN_MAX_DEPTH);
    st->failed = true;
    return false;
  }
  switch (s->kind) {
  case TL_STMT_SEQ: return seq_counts(st, s, c, depth);
  case TL_STMT_FOR: return loop_counts(st, s, c, depth);
  case TL_STMT_KERNEL: return kernel_counts(st, s, c, depth);
  case TL_STMT_IF: { /* the condition, and the larger branch as if it always ran: an upper bound */
    an_counts t = {0}, e = {0};
    scalar_counts(st, s, s->u.ifs.cond, c);
    if (st->failed || !stmt_counts(st, s->u.ifs.then_s, &t, depth + 1) ||
        !stmt_counts(st, s->u.ifs.else_s, &e, depth + 1))
      return false;
    counts_max(&t, &e);
    return counts_add(st, c, &t, s->loc);
  }
  case TL_STMT_WHILE: /* counted work in a loop whose trip count only the run knows: no count */
    if (!stmt_counts(st, s->u.whiles.body, c, depth + 1)) return false;
    if (counts_zero(c)) return true;
    tl_error(st->d, s->loc, "analysis: the trip count of a 'while' loop is not known before the run");
    st->failed = true;
    return false;
  case TL_STMT_TILE: return tile_counts(st, s, c);
  case TL_STMT_STORE:
  case TL_STMT_LET:
  case TL_STMT_EVAL: scalar_counts(st, s, NULL, c); return !st->failed;
  case TL_STMT_ALLOC: return true;
  }
  return true;
}

bool tl_analyze_func(const tl_primfunc *f, const tl_analyze_dims *dims, bool global, tl_diag *d, tl_analysis *acc) {
  an_state st = {.dims = dims, .global = global, .d = d, .threads = 1};
  an_counts c = {0};
  bool ok = stmt_counts(&st, f->body, &c, 0);
  uint64_t blocks = st.blocks;
  tl_vec_free(&st.lets);
  if (!ok) return false;
  uint64_t bytes;
  if (__builtin_add_overflow(c.rd, c.wr, &bytes) || __builtin_add_overflow(acc->flops, c.flops, &acc->flops) ||
      __builtin_add_overflow(acc->global_read_bytes, c.rd, &acc->global_read_bytes) ||
      __builtin_add_overflow(acc->global_write_bytes, c.wr, &acc->global_write_bytes) ||
      __builtin_add_overflow(acc->global_bytes, bytes, &acc->global_bytes) ||
      __builtin_add_overflow(acc->gemms, c.gemms, &acc->gemms) ||
      __builtin_add_overflow(acc->blocks, blocks, &acc->blocks)) {
    tl_error(d, f->loc, "analysis: the counts of '%s' exceed 2^64 - 1", f->name);
    return false;
  }
  return true;
}
