/* Static checks of a tile-IR function as written, run by
 * pass "check-supported" (pipeline.c's step 1) before anything is lowered.
 *
 * Requires: a verified tile-IR function.  Guarantees: nothing is changed;
 * each finding is one located diagnostic:
 *  1. Per-dimension bounds.  An explicit load or store whose index into a
 *     dimension of constant extent is a constant outside [0, extent) is an
 *     error wherever it stands (any scope: a local buffer included).  An
 *     index that is an affine function of loop variables (constant bounds),
 *     block indices (constant grid) and the thread index, each variable
 *     occurring once, has an exact range; when the access is reached for
 *     every value of those variables (no enclosing T.if / if_then_else) and
 *     the range leaves [0, extent), the error names the dimension and the
 *     range.  The flat offset of such an access may stay inside the buffer
 *     and read another row: the executors do not see it.  Tile-op regions
 *     are not checked (T.copy pads out-of-bounds global reads); loads in a
 *     tile op's scalar operands (T.atomic_add's value) are, and so is the
 *     element destination of an atomic's scalar form (T.atomic_add(C[i, j],
 *     v): the lowering emits an unguarded T.ptx_atomic_add there).
 *  2. A read of a fragment or shared buffer (a load, or the source operand
 *     of a tile op) that no write reaches (a store, a tile op destination,
 *     an intrinsic that takes the buffer) gets a warning: its value is
 *     undefined.  A write reaches a read when it comes first in program
 *     order or, later, inside the same outermost serial loop (its next
 *     iteration) when the read is guarded (under a T.if: `if k > 0:`); an
 *     unguarded read reads the unwritten value in the first iteration, and
 *     the iterations of a T.Parallel carry nothing.  Both branches of a T.if
 *     count as taken.
 *  3. A T.Parallel loop in a kernel whose body uses the thread index
 *     (T.get_thread_binding / get_lane_idx / get_warp_idx outside tile-op
 *     operands: a per-thread program) keeps its tile meaning, spread over
 *     the threads (TileLang's GEMM from TensorCoreIntrinEmitter macros loads
 *     shared tiles so), when every thread reaches it alike and no iteration
 *     reads a per-thread value (uniform.c,
 *     tl_lower_check_parallel_per_thread); otherwise it has two readings
 *     (B[tn, k] = A[tn, k] became B[tn, tn] = A[tn, tn]) and is an error:
 *     T.serial or T.vectorized say "per thread".
 *  4. A fragment or shared buffer that is written only in part: an
 *     unguarded load whose index takes, in some dimension, a value outside
 *     the range of every write of the buffer in the kernel (stores with
 *     exact index ranges; a tile op or intrinsic writes it all) reads an
 *     element nothing writes: a warning naming the index and the range the
 *     writes cover (a T.Parallel(32, 63) filling a (32, 64) fragment, then a
 *     loop reading all 64 columns).  The reference evaluator reads NaN there
 *     and the executor a register's stale value.
 *  5. Signed int32 arithmetic that overflows: an unguarded +, -, * or << of
 *     int32 type whose operands have exact ranges inside int32 and whose
 *     result's exact range leaves it (k * 2147483647 + j with k in [0, 3])
 *     is an error at that operation.  The GPU wraps the result, the
 *     reference evaluator computes it exactly: left alone, they disagree
 *     silently (a comparison flips).  Indices that may pass int32 are
 *     already int64 (lib/IR/index64.c); what remains is the kernel's own
 *     arithmetic, which a cast of one operand to int64 widens.  A shift
 *     whose amount takes a value outside [0, bits) is an error too (the PTX
 *     shift clamps it, the reference evaluator refuses it at run time). */
#include "IR/visit.h"
#include "Lower/lower_internal.h"

#include <stdlib.h>
#include <string.h>

#define SC_MAX_BIND 256
#define SC_MAX_DEPTH 500
#define SC_BOX_DIMS 8
#define SC_MAX_PREADS 256

/* Range of an integer expression: exact when ok (unlike tl_expr_range's
 * bounds, which contain the values and suffice to drop a guard, these are
 * taken, which proving an access wrong needs): lo and hi are taken for
 * some assignment of the variables in `vars` (a bit set). */
typedef struct sc_range {
  int64_t lo, hi;
  uint64_t vars;
  bool ok;
  bool dense; /* every integer of [lo, hi] is taken */
} sc_range;

typedef struct sc_bind {
  const tl_var *v;
  sc_range r;
} sc_bind;

/* A fragment or shared buffer of the kernel: `unreached` is the first read
 * that no write preceded in program order, until a later write inside the
 * same outermost loop (whose next iteration reaches the read) cancels it. */
typedef struct sc_use {
  const tl_buffer *b;
  tl_loc read_at;
  const tl_stmt *read_loop; /* outermost loop around that read, or NULL */
  bool unreached, written;
  bool read_guarded; /* that read is under a T.if / if_then_else */
  /* Box that contains every element any write of the kernel may write (check
   * 4): per dimension [wlo, whi], or the whole dimension when !wbox[dim]. */
  bool wbox[SC_BOX_DIMS];
  int64_t wlo[SC_BOX_DIMS], whi[SC_BOX_DIMS];
} sc_use;

/* An unguarded load whose every index has an exact range (check 4). */
typedef struct sc_pread {
  const tl_buffer *b;
  tl_loc at[SC_BOX_DIMS]; /* each index's location */
  int64_t lo[SC_BOX_DIMS], hi[SC_BOX_DIMS];
} sc_pread;

typedef struct sc_state {
  tl_diag *d;
  int errors;
  sc_bind bind[SC_MAX_BIND];
  int nbind;
  int nbits; /* variable bits handed out (bit 0: the thread index) */
  int64_t threads;
  bool per_thread;                /* the kernel body uses the thread index */
  tl_loc tid_at;                  /* its first use */
  TL_VEC(sc_use) uses;            /* fragment / shared buffers of the kernel */
  sc_pread preads[SC_MAX_PREADS]; /* check 4's candidates */
  int npreads;
  const tl_stmt *outer_loop; /* outermost loop being walked, or NULL */
  bool oom;
} sc_state;

static const sc_range SC_UNKNOWN = {0, 0, 0, false, false};

static sc_range var_range(sc_state *st, int64_t lo, int64_t hi) {
  sc_range r = {lo, hi, 0, true, true};
  if (st->nbits >= 64) return SC_UNKNOWN;
  r.vars = (uint64_t)1 << st->nbits++;
  return r;
}

static void push(sc_state *st, const tl_var *v, sc_range r) {
  if (st->nbind < SC_MAX_BIND) st->bind[st->nbind++] = (sc_bind){v, r};
}

static sc_range lookup(const sc_state *st, const tl_var *v) {
  for (int i = st->nbind - 1; i >= 0; i--)
    if (st->bind[i].v == v) return st->bind[i].r;
  return SC_UNKNOWN;
}

static int64_t floordiv64(int64_t a, int64_t c) { return a / c - ((a % c != 0) && ((a < 0) != (c < 0))); }

static sc_range eval_bin(sc_state *st, const tl_expr *e, int depth);

static sc_range eval(sc_state *st, const tl_expr *e, int depth) {
  if (!e || depth > SC_MAX_DEPTH || e->dtype.lanes > 1) return SC_UNKNOWN;
  switch (e->kind) {
  case TL_EXPR_INT: return (sc_range){e->u.ival, e->u.ival, 0, true, true};
  case TL_EXPR_VAR: return lookup(st, e->u.var);
  case TL_EXPR_CAST: return tl_dtype_is_int(e->dtype) ? eval(st, e->u.cast.value, depth + 1) : SC_UNKNOWN;
  case TL_EXPR_CALL: {
    int op = e->u.call.op;
    int64_t k = -1;
    if (op == TL_INTRIN_GET_THREAD_BINDING && e->u.call.n >= 1 && tl_expr_is_const_int(e->u.call.args[0], &k) &&
        k == 0 && st->threads > 0)
      return (sc_range){0, st->threads - 1, 1, true, true};
    return SC_UNKNOWN;
  }
  case TL_EXPR_BINARY: return eval_bin(st, e, depth);
  default: return SC_UNKNOWN;
  }
}

/* The range of v * c (r: v's variables, set by the caller). */
static sc_range eval_bin_mul(sc_range v, int64_t c, sc_range r) {
  int64_t x, y;
  if (__builtin_mul_overflow(v.lo, c, &x) || __builtin_mul_overflow(v.hi, c, &y)) return SC_UNKNOWN;
  r.lo = x < y ? x : y;
  r.hi = x < y ? y : x;
  r.dense = v.dense && (c == 1 || c == -1 || v.lo == v.hi);
  r.ok = true;
  return r;
}

static sc_range eval_bin(sc_state *st, const tl_expr *e, int depth) {
  sc_range a = eval(st, e->u.bin.a, depth + 1), b = eval(st, e->u.bin.b, depth + 1), r = {0, 0, 0, false, false};
  if (!a.ok || !b.ok || (a.vars & b.vars)) return SC_UNKNOWN;
  r.vars = a.vars | b.vars;
  r.dense = a.dense && b.dense;
  bool bconst = b.vars == 0 && b.lo == b.hi, aconst = a.vars == 0 && a.lo == a.hi;
  switch (e->u.bin.op) {
  case TL_OP_ADD:
    r.ok = !__builtin_add_overflow(a.lo, b.lo, &r.lo) && !__builtin_add_overflow(a.hi, b.hi, &r.hi);
    return r;
  case TL_OP_SUB:
    r.ok = !__builtin_sub_overflow(a.lo, b.hi, &r.lo) && !__builtin_sub_overflow(a.hi, b.lo, &r.hi);
    return r;
  case TL_OP_MUL:
    if (!aconst && !bconst) return SC_UNKNOWN;
    return eval_bin_mul(aconst ? b : a, aconst ? a.lo : b.lo, r);
  case TL_OP_SHL: /* a << c is a * 2^c (for an amount in range: check 5 reports the others) */
    if (!bconst || b.lo < 0 || b.lo > 62) return SC_UNKNOWN;
    return eval_bin_mul(a, (int64_t)1 << b.lo, r);
  case TL_OP_SHR: /* a >> c is floor(a / 2^c), arithmetic for signed a */
    if (!bconst || b.lo < 0 || b.lo > 62) return SC_UNKNOWN;
    r.lo = floordiv64(a.lo, (int64_t)1 << b.lo);
    r.hi = floordiv64(a.hi, (int64_t)1 << b.lo);
    r.dense = a.dense && b.lo == 0;
    r.ok = true;
    return r;
  case TL_OP_DIV: /* truncation is floor division for non-negative operands */
  case TL_OP_FLOORDIV:
    if (!bconst || b.lo <= 0 || (e->u.bin.op == TL_OP_DIV && a.lo < 0)) return SC_UNKNOWN;
    r.lo = floordiv64(a.lo, b.lo);
    r.hi = floordiv64(a.hi, b.lo);
    r.ok = true;
    return r;
  case TL_OP_FLOORMOD: {
    if (!bconst || b.lo <= 0) return SC_UNKNOWN;
    int64_t c = b.lo;
    if (a.dense && a.hi - a.lo + 1 >= c) {
      r.lo = 0;
      r.hi = c - 1;
    } else if (floordiv64(a.lo, c) == floordiv64(a.hi, c)) {
      r.lo = a.lo - floordiv64(a.lo, c) * c;
      r.hi = a.hi - floordiv64(a.hi, c) * c;
      r.dense = a.dense;
    } else {
      return SC_UNKNOWN;
    }
    r.ok = true;
    return r;
  }
  default: return SC_UNKNOWN;
  }
}

/* ------------------------------------------------------------ buffer uses */

static sc_use *use_of(sc_state *st, const tl_buffer *b) {
  if (!b || (b->scope != TL_SCOPE_FRAGMENT && b->scope != TL_SCOPE_SHARED && b->scope != TL_SCOPE_SHARED_DYN))
    return NULL;
  for (size_t i = 0; i < st->uses.len; i++)
    if (st->uses.data[i].b == b) return &st->uses.data[i];
  sc_use u = {b, TL_LOC_NONE, NULL, false, false, false, {false}, {0}, {0}};
  for (int d = 0; d < SC_BOX_DIMS; d++) { /* empty until a write widens it */
    u.wbox[d] = true;
    u.wlo[d] = INT64_MAX;
    u.whi[d] = INT64_MIN;
  }
  if (!tl_vec_push(&st->uses, u)) {
    st->oom = true;
    return NULL;
  }
  return &st->uses.data[st->uses.len - 1];
}

static void note_read(sc_state *st, const tl_buffer *b, tl_loc at, bool guarded) {
  sc_use *u = use_of(st, b);
  if (u && !u->written && !u->unreached) {
    u->unreached = true;
    u->read_at = at;
    u->read_loop = st->outer_loop;
    u->read_guarded = guarded;
  }
}

/* A write of b: at indices idx[0..n) (their ranges widen the write box), or
 * anywhere in b when idx is NULL (a tile op's destination, an intrinsic). */
static void note_write(sc_state *st, const tl_buffer *b, int n, tl_expr *const *idx) {
  sc_use *u = use_of(st, b);
  if (!u) return;
  for (int d = 0; d < SC_BOX_DIMS; d++) {
    sc_range r = idx && n == b->ndim && n <= SC_BOX_DIMS && d < n ? eval(st, idx[d], 0) : SC_UNKNOWN;
    if (!r.ok) {
      u->wbox[d] = false;
      continue;
    }
    if (r.lo < u->wlo[d]) u->wlo[d] = r.lo;
    if (r.hi > u->whi[d]) u->whi[d] = r.hi;
  }
  u->written = true;
  if (u->unreached && u->read_guarded && u->read_loop && u->read_loop == st->outer_loop &&
      u->read_loop->u.loop.kind != TL_LOOP_PARALLEL)
    u->unreached = false;
}

/* ----------------------------------------------------------------- checks */

static void check_access(sc_state *st, const tl_buffer *b, int n, tl_expr *const *idx, bool guarded, tl_loc at) {
  if (!b || n != b->ndim || !b->shape) return;
  for (int i = 0; i < n; i++) {
    int64_t ext = 0;
    if (!tl_expr_is_const_int(b->shape[i], &ext)) continue;
    sc_range r = eval(st, idx[i], 0);
    if (!r.ok || (r.lo >= 0 && r.hi < ext)) continue;
    tl_loc loc = idx[i]->loc.line ? idx[i]->loc : at;
    if (r.vars == 0) {
      tl_error(st->d, loc, "index %lld of dimension %d of %s buffer '%s' is out of bounds (extent %lld)",
               (long long)r.lo, i, tl_scope_name(b->scope), b->name, (long long)ext);
      st->errors++;
      return;
    }
    if (guarded) continue;
    bool wraps = idx[i]->dtype.bits <= 32 && (r.lo < INT32_MIN || r.hi > INT32_MAX);
    tl_error(st->d, loc,
             "index of dimension %d of %s buffer '%s' takes the values %lld to %lld, outside its extent %lld "
             "(%s)",
             i, tl_scope_name(b->scope), b->name, (long long)r.lo, (long long)r.hi, (long long)ext,
             wraps ? "its int32 arithmetic overflows, and the wrapped offset would reach another element"
                   : "the flat offset would reach another row or another buffer");
    st->errors++;
    return;
  }
}

/* An unguarded load of b at idx: a candidate of check 4 when every index has an exact range. */
static void note_exact_read(sc_state *st, const tl_buffer *b, int n, tl_expr *const *idx, tl_loc at) {
  if (!use_of(st, b) || n != b->ndim || n > SC_BOX_DIMS || st->npreads >= SC_MAX_PREADS) return;
  sc_pread p = {b, {TL_LOC_NONE}, {0}, {0}};
  for (int d = 0; d < n; d++) {
    sc_range r = eval(st, idx[d], 0);
    if (!r.ok) return;
    p.at[d] = idx[d]->loc.line ? idx[d]->loc : at;
    p.lo[d] = r.lo;
    p.hi[d] = r.hi;
  }
  st->preads[st->npreads++] = p;
}

/* Check 4: a read whose index takes, in some dimension, a value outside the box of every write. */
static void check_partial_reads(sc_state *st) {
  for (int i = 0; i < st->npreads; i++) {
    const sc_pread *p = &st->preads[i];
    const sc_use *u = use_of(st, p->b);
    if (!u || !u->written) continue; /* check 2 reports it */
    for (int d = 0; d < p->b->ndim; d++) {
      if (!u->wbox[d] || (p->lo[d] >= u->wlo[d] && p->hi[d] <= u->whi[d])) continue;
      int64_t v = p->lo[d] < u->wlo[d] ? p->lo[d] : p->hi[d];
      tl_diag_report(st->d, TL_DIAG_WARNING, p->at[d],
                     "%s buffer '%s' is read here at index %lld of dimension %d, but its writes only cover %lld to "
                     "%lld there: that element's value is undefined",
                     tl_scope_name(p->b->scope), p->b->name, (long long)v, d, (long long)u->wlo[d],
                     (long long)u->whi[d]);
      break;
    }
  }
}

/* Check 5: the int32 operation e overflows for some value of its variables;
 * a shift of any integer type by an amount outside [0, bits) for some value. */
static void check_int32_overflow(sc_state *st, const tl_expr *e) {
  int op = e->u.bin.op;
  if ((op == TL_OP_SHL || op == TL_OP_SHR) && tl_dtype_is_int(e->dtype) && e->dtype.lanes == 1) {
    sc_range n = eval(st, e->u.bin.b, 0);
    if (n.ok && (n.lo < 0 || n.hi >= e->dtype.bits)) {
      tl_error(st->d, e->loc, "shift by %lld is out of range for %s (the amount must be 0 to %d)",
               (long long)(n.lo < 0 ? n.lo : n.hi), tl_dtype_name(e->dtype), e->dtype.bits - 1);
      st->errors++;
      return;
    }
  }
  if (e->dtype.code != TL_TYPE_INT || e->dtype.bits != 32 || e->dtype.lanes != 1) return;
  if (op != TL_OP_ADD && op != TL_OP_SUB && op != TL_OP_MUL && op != TL_OP_SHL) return;
  sc_range a = eval(st, e->u.bin.a, 0), b = eval(st, e->u.bin.b, 0);
  if (!a.ok || !b.ok || a.lo < INT32_MIN || a.hi > INT32_MAX || b.lo < INT32_MIN || b.hi > INT32_MAX) return;
  sc_range r = eval(st, e, 0);
  if (!r.ok || (r.lo >= INT32_MIN && r.hi <= INT32_MAX)) return;
  tl_error(st->d, e->loc,
           "int32 arithmetic overflows: this %s takes the values %lld to %lld, outside int32 (the GPU would wrap "
           "the result); cast an operand to int64 (T.Cast(\"int64\", ...)) to compute it wider",
           op == TL_OP_ADD   ? "sum"
           : op == TL_OP_SUB ? "difference"
           : op == TL_OP_MUL ? "product"
                             : "left shift",
           (long long)r.lo, (long long)r.hi);
  st->errors++;
}

static void walk_expr(sc_state *st, const tl_expr *e, bool guarded, int depth) {
  if (!e || depth > SC_MAX_DEPTH) return;
  switch (e->kind) {
  case TL_EXPR_LOAD:
    note_read(st, e->u.load.buffer, e->loc, guarded);
    if (!guarded) note_exact_read(st, e->u.load.buffer, e->u.load.n, e->u.load.indices, e->loc);
    check_access(st, e->u.load.buffer, e->u.load.n, e->u.load.indices, guarded, e->loc);
    for (int i = 0; i < e->u.load.n; i++) walk_expr(st, e->u.load.indices[i], guarded, depth + 1);
    return;
  case TL_EXPR_BINARY:
  case TL_EXPR_UNARY:
  case TL_EXPR_CAST:
  case TL_EXPR_SELECT: {
    const tl_expr *ops[3];
    int n = tl_expr_operands(e, ops);
    for (int i = 0; i < n; i++) /* a select's arms are guarded by its condition */
      walk_expr(st, ops[i], guarded || (e->kind == TL_EXPR_SELECT && i > 0), depth + 1);
    if (e->kind == TL_EXPR_BINARY && !guarded) check_int32_overflow(st, e);
    return;
  }
  case TL_EXPR_CALL:
    for (int i = 0; i < e->u.call.n; i++) {
      const tl_expr *a = e->u.call.args[i];
      if (a && a->kind == TL_EXPR_BUFFER) note_write(st, a->u.buffer, 0, NULL); /* conservatively: may write it */
      else walk_expr(st, a, guarded || e->u.call.op == TL_INTRIN_IF_THEN_ELSE, depth + 1);
    }
    return;
  default: return;
  }
}

static void walk_stmt(sc_state *st, const tl_stmt *s, bool guarded, int depth);

static void walk_loop(sc_state *st, const tl_stmt *s, bool guarded, int depth) {
  int mark = st->nbind;
  bool runs = true;
  for (int i = 0; i < s->u.loop.nvars; i++) {
    sc_range mn =
        s->u.loop.mins && s->u.loop.mins[i] ? eval(st, s->u.loop.mins[i], 0) : (sc_range){0, 0, 0, true, true};
    int64_t ext = 0;
    bool known = s->u.loop.extents && tl_expr_is_const_int(s->u.loop.extents[i], &ext) && !s->u.loop.step && mn.ok &&
                 mn.vars == 0;
    if (known && ext <= 0) runs = false;
    push(st, s->u.loop.vars[i], known && ext > 0 ? var_range(st, mn.lo, mn.lo + ext - 1) : SC_UNKNOWN);
  }
  const tl_stmt *outer = st->outer_loop;
  if (!outer) st->outer_loop = s;
  if (runs) walk_stmt(st, s->u.loop.body, guarded, depth + 1);
  st->outer_loop = outer;
  st->nbind = mark;
}

/* T.atomic_add(C[i, j], value) and the other atomics' scalar form: the
 * destination is one element (every extent 1), written as a store writes it
 * (the lowering emits no bounds guard for it: T.ptx_atomic_add at the flat
 * offset), so check 1 applies to its indices. */
static void check_atomic_element(sc_state *st, const tl_stmt *s, bool guarded) {
  int in = tl_tile_atomic_intrin(s->u.tile.op, NULL);
  if (in < 0 || s->u.tile.nargs < 2 || s->u.tile.args[0].kind != TL_OPND_REGION ||
      s->u.tile.args[1].kind != TL_OPND_EXPR)
    return;
  const tl_region *r = &s->u.tile.args[0].region;
  if (!r->buffer || !r->min || r->ndim != r->buffer->ndim) return;
  for (int d = 0; d < r->ndim; d++) {
    int64_t e = 0;
    if (!r->extent || !tl_expr_is_const_int(r->extent[d], &e) || e != 1) return;
  }
  check_access(st, r->buffer, r->ndim, r->min, guarded, s->u.tile.args[0].loc.line ? s->u.tile.args[0].loc : s->loc);
}

static void walk_tile(sc_state *st, const tl_stmt *s, bool guarded) {
  check_atomic_element(st, s, guarded);
  for (int i = 0; i < s->u.tile.nargs; i++) {
    const tl_operand *o = &s->u.tile.args[i];
    if (o->kind != TL_OPND_REGION || !o->region.buffer) continue;
    bool rd = false, wr = false;
    tl_tile_operand_use(s, i, &rd, &wr);
    if (rd) note_read(st, o->region.buffer, o->loc.line ? o->loc : s->loc, guarded);
    if (wr) note_write(st, o->region.buffer, 0, NULL);
  }
}

static void walk_stmt(sc_state *st, const tl_stmt *s, bool guarded, int depth) {
  if (!s || depth > SC_MAX_DEPTH) return;
  switch (s->kind) {
  case TL_STMT_SEQ: {
    int mark = st->nbind;
    for (int i = 0; i < s->u.seq.n; i++) walk_stmt(st, s->u.seq.stmts[i], guarded, depth + 1);
    st->nbind = mark;
    return;
  }
  case TL_STMT_FOR: walk_loop(st, s, guarded, depth); return;
  case TL_STMT_WHILE: { /* a loop whose body may not run: guarded, and repeated as a loop's */
    walk_expr(st, s->u.whiles.cond, guarded, depth + 1);
    int mark = st->nbind;
    const tl_stmt *outer = st->outer_loop;
    if (!outer) st->outer_loop = s;
    walk_stmt(st, s->u.whiles.body, true, depth + 1);
    st->outer_loop = outer;
    st->nbind = mark;
    return;
  }
  case TL_STMT_LET: {
    walk_expr(st, s->u.let.value, guarded, depth + 1);
    sc_range r = tl_dtype_is_int(s->u.let.var->dtype) ? eval(st, s->u.let.value, 0) : SC_UNKNOWN;
    push(st, s->u.let.var, r);
    return;
  }
  case TL_STMT_STORE: /* the value and indices are read before the store writes */
    check_access(st, s->u.store.buffer, s->u.store.n, s->u.store.indices, guarded, s->loc);
    for (int i = 0; i < s->u.store.n; i++) walk_expr(st, s->u.store.indices[i], guarded, depth + 1);
    walk_expr(st, s->u.store.value, guarded, depth + 1);
    note_write(st, s->u.store.buffer, s->u.store.n, s->u.store.indices);
    return;
  case TL_STMT_IF:
    walk_expr(st, s->u.ifs.cond, guarded, depth + 1);
    walk_stmt(st, s->u.ifs.then_s, true, depth + 1);
    walk_stmt(st, s->u.ifs.else_s, true, depth + 1);
    return;
  case TL_STMT_EVAL: walk_expr(st, s->u.eval.value, guarded, depth + 1); return;
  case TL_STMT_TILE: {
    int before = st->errors;
    walk_tile(st, s, guarded);
    for (int i = 0; i < s->u.tile.nargs; i++) { /* loads in scalar operands (T.atomic_add's value) */
      const tl_operand *o = &s->u.tile.args[i];
      if (o->kind == TL_OPND_EXPR) walk_expr(st, o->expr, guarded, depth + 1);
      else if (st->errors == before) /* a region's corner (A[by * 128, ko >> 32]): its arithmetic (check 5),
                                        its loads; not again after the atomic element's bounds error */
        for (int d = 0; o->region.min && d < o->region.ndim; d++) walk_expr(st, o->region.min[d], guarded, depth + 1);
    }
    return;
  }
  case TL_STMT_KERNEL: return; /* nested kernels are the verifier's business */
  default: return;
  }
}

static void check_kernel(sc_state *st, const tl_stmt *k) {
  st->nbind = 0;
  st->nbits = 1; /* bit 0: the thread index */
  st->uses.len = 0;
  st->npreads = 0;
  st->outer_loop = NULL;
  int64_t t = 0;
  st->threads = tl_expr_is_const_int(k->u.kernel.threads, &t) ? t : 0;
  st->tid_at = k->loc;
  st->per_thread = tl_stmt_uses_thread_index(k->u.kernel.body, &st->tid_at);
  if (st->tid_at.line == 0) st->tid_at = k->loc;
  for (int i = 0; i < k->u.kernel.ngrid; i++) {
    int64_t g = 0;
    bool known = tl_expr_is_const_int(k->u.kernel.grid[i], &g);
    if (known && g <= 0) return; /* no block runs */
    if (k->u.kernel.block_vars[i]) push(st, k->u.kernel.block_vars[i], known ? var_range(st, 0, g - 1) : SC_UNKNOWN);
  }
  if (st->per_thread && !tl_lower_check_parallel_per_thread(k->u.kernel.body, st->tid_at, st->d)) st->errors++;
  walk_stmt(st, k->u.kernel.body, false, 0);
  for (size_t i = 0; i < st->uses.len; i++) {
    const sc_use *u = &st->uses.data[i];
    if (u->unreached)
      tl_diag_report(st->d, TL_DIAG_WARNING, u->read_at,
                     "%s buffer '%s' is read here, but no write of it reaches this read: its value is undefined",
                     tl_scope_name(u->b->scope), u->b->name);
  }
  check_partial_reads(st);
}

static void find_kernels(sc_state *st, const tl_stmt *s, int depth) {
  if (!s || depth > SC_MAX_DEPTH) return;
  switch (s->kind) {
  case TL_STMT_KERNEL: check_kernel(st, s); return;
  case TL_STMT_SEQ:
    for (int i = 0; i < s->u.seq.n; i++) find_kernels(st, s->u.seq.stmts[i], depth + 1);
    return;
  case TL_STMT_FOR: find_kernels(st, s->u.loop.body, depth + 1); return;
  case TL_STMT_WHILE: find_kernels(st, s->u.whiles.body, depth + 1); return;
  case TL_STMT_IF:
    find_kernels(st, s->u.ifs.then_s, depth + 1);
    find_kernels(st, s->u.ifs.else_s, depth + 1);
    return;
  default: return;
  }
}

bool tl_lower_static_check(const tl_primfunc *f, tl_diag *d) {
  sc_state *st = calloc(1, sizeof *st);
  if (!st) return false;
  st->d = d;
  find_kernels(st, f->body, 0);
  bool ok = st->errors == 0 && !st->oom;
  tl_vec_free(&st->uses);
  free(st);
  return ok;
}
