/* The tile-level reference evaluator (tl_ref_eval of lib/Interp/interp.h):
 * runs a tile program as written, before any lowering, and so defines what
 * the program means.  This file holds the state, values, expressions,
 * statements and the grid; ref_eval_ops.c holds the tile ops and
 * ref_eval_call.c the intrinsic calls.  It shares no
 * code with lib/Lower.
 *
 * Algorithm: a tree-walking interpreter over the tile IR of one prim_func.
 *  - A pre-pass gives every variable and buffer of the function a slot;
 *    variable values live in per-context arrays indexed by slot.
 *  - The grid runs block after block (x fastest, then y, then z).  Shared,
 *    fragment and local buffers are per-block arrays of doubles (float
 *    dtypes) or int64 (int dtypes), poisoned with NaN (floats) or 0 (ints) at
 *    their allocation; a fragment holds its whole tile (what the program
 *    means, not how threads split it).  Global tensors are the caller's
 *    memory in the dtype's encoding (f16/bf16 as 16-bit patterns).
 *  - Loops of every kind (T.Parallel, T.Pipelined, T.serial, T.unroll) run
 *    serially in order; if/else, let, stores and loads as written.
 *  - Arithmetic as the GPU does it: f32 in float, f64 in double, f16/bf16
 *    computed in float32 and rounded to the dtype after each operation (as
 *    TVM/CUDA do for half), ints wrap at their width; T.fma is one fused
 *    operation; casts round to nearest even (float → float), truncate and
 *    saturate with NaN → 0 (float → int, as PTX cvt.rzi.sat, PTX ISA
 *    §9.7.9.21), wrap (int → int).  T.round rounds halves away from zero (as
 *    CUDA's round); floordiv/floormod round toward -inf (TIR).  Math
 *    functions are the C library's (float versions for f32/f16/bf16); the GPU
 *    uses libdevice, so results may differ in the last ulp.
 *  - Per-thread programs: a kernel body that uses T.get_thread_binding (or
 *    T.get_lane_idx / T.get_warp_idx) outside tile ops is run once per thread
 *    index, with local/fragment buffers and variables private to each thread
 *    and shared buffers shared by the block (TileLang's meaning for such
 *    code, e.g. examples/gemv.py).  T.sync_threads() at the top level of the
 *    kernel body splits it into phases: every thread runs a phase before any
 *    thread runs the next one; a top-level T.thread_allreduce (TVM's thread
 *    allreduce) is a phase boundary too: each thread's destination gets its
 *    group's values combined in group order.  A barrier nested in a loop or branch, warp
 *    shuffles, tile ops on shared or global memory and T.Parallel loops in
 *    such code are errors (the lowering gives such a T.Parallel its tile
 *    meaning when every thread reaches it alike: lib/Lower/uniform.c).  In tile programs T.sync_threads() does nothing.
 * Out-of-bounds explicit loads and stores are errors (with the statement's
 * location); tile ops pad out-of-bounds global reads with 0 and skip
 * out-of-bounds global writes (ref_eval_ops.c).  Recursion is bounded. */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "IR/sync_grid.h"
#include "IR/visit.h"
#include "Interp/ref_eval_internal.h"

#define RE_MAX_DEPTH 2000               /* nesting of statements + expressions */
#define RE_MAX_ELEMS (INT64_C(1) << 27) /* elements of one evaluator-owned buffer */
#define RE_MAX_THREADS 4096             /* threads of a per-thread block */

/* ---------------------------------------------------------------- errors */
void re_error(re_state *st, tl_loc loc, const char *fmt, ...) {
  if (st->failed) return;
  st->failed = true;
  va_list ap;
  va_start(ap, fmt);
  tl_diag_vreport(st->d, TL_DIAG_ERROR, loc, fmt, ap);
  va_end(ap);
}

static bool is_private_scope(tl_scope s) {
  return s == TL_SCOPE_LOCAL || s == TL_SCOPE_LOCAL_VAR || s == TL_SCOPE_FRAGMENT;
}

/* ------------------------------------------------------ f16/bf16 encoding */
/* IEEE binary16: 1 sign, 5 exponent (bias 15), 10 mantissa bits. */
static double f16_decode(uint16_t h) {
  int s = h >> 15, e = (h >> 10) & 31, m = h & 1023;
  double v;
  if (e == 0) v = ldexp((double)m, -24);
  else if (e == 31) v = m ? NAN : INFINITY;
  else v = ldexp((double)(1024 + m), e - 25);
  return s ? -v : v;
}
/* v must already be a binary16 value (or inf/NaN). */
static uint16_t f16_encode(double v) {
  if (isnan(v)) return 0x7E00;
  uint16_t s = signbit(v) ? 0x8000 : 0;
  v = fabs(v);
  if (isinf(v) || v >= 65536.0) return s | 0x7C00;
  if (v == 0) return s;
  if (v < ldexp(1.0, -14)) return s | (uint16_t)ldexp(v, 24); /* subnormal */
  int e;
  double f = frexp(v, &e); /* v = f * 2^e, f in [0.5, 1) */
  int m = (int)ldexp(f, 11) - 1024;
  return s | (uint16_t)((e + 14) << 10) | (uint16_t)m;
}
/* bfloat16: the high half of a binary32. */
static double bf16_decode(uint16_t h) {
  uint32_t u = (uint32_t)h << 16;
  float f;
  memcpy(&f, &u, sizeof f);
  return f;
}
static uint16_t bf16_encode(double v) {
  if (isnan(v)) return 0x7FC0;
  float f = (float)v; /* exact: v is a bfloat16 value */
  uint32_t u;
  memcpy(&u, &f, sizeof u);
  return (uint16_t)(u >> 16);
}

/* ---------------------------------------------------------------- values */
double re_round(double v, tl_dtype t) {
  if (t.code == TL_TYPE_FLOAT) {
    if (t.bits == 32) return (double)(float)v; /* the C conversion rounds to nearest even */
    if (t.bits == 64) return v;
  }
  return tl_round_to_dtype(v, t);
}

int64_t re_wrap(int64_t v, tl_dtype t) {
  if (t.code == TL_TYPE_BOOL) return v != 0;
  if (t.bits >= 64 || t.bits == 0) return v;
  uint64_t mask = (UINT64_C(1) << t.bits) - 1;
  uint64_t u = (uint64_t)v & mask;
  if (t.code == TL_TYPE_INT && ((u >> (t.bits - 1)) & 1)) u |= ~mask;
  return (int64_t)u;
}

static bool is_uint64(tl_dtype t) { return t.code == TL_TYPE_UINT && t.bits >= 64; }

/* An int-like value as a double (uint64 as unsigned). */
static double int_to_double(int64_t i, tl_dtype t) { return is_uint64(t) ? (double)(uint64_t)i : (double)i; }

re_val re_convert(re_val v, tl_dtype from, tl_dtype to) {
  re_val r;
  bool ff = tl_dtype_is_float(from), tf = tl_dtype_is_float(to);
  if (ff && tf) {
    r.f = re_round(v.f, to);
  } else if (!ff && tf) {
    if (to.code == TL_TYPE_FLOAT && to.bits == 32)
      r.f = is_uint64(from) ? (double)(float)(uint64_t)v.i : (double)(float)v.i;
    else r.f = re_round(int_to_double(v.i, from), to);
  } else if (ff && !tf) {
    double x = v.f;
    if (to.code == TL_TYPE_BOOL) {
      r.i = x != 0 && !isnan(x) ? 1 : 0;
      return r;
    }
    if (isnan(x)) {
      r.i = 0;
      return r;
    }
    x = trunc(x);
    int bits = to.bits > 64 ? 64 : to.bits;
    if (to.code == TL_TYPE_UINT) {
      double hi = ldexp(1.0, bits);
      if (x <= 0) r.i = 0;
      else if (x >= hi) r.i = bits >= 64 ? (int64_t)UINT64_MAX : (int64_t)((UINT64_C(1) << bits) - 1);
      else r.i = (int64_t)(uint64_t)x;
    } else {
      double hi = ldexp(1.0, bits - 1);
      if (x >= hi) r.i = bits >= 64 ? INT64_MAX : (int64_t)((UINT64_C(1) << (bits - 1)) - 1);
      else if (x < -hi) r.i = bits >= 64 ? INT64_MIN : -(int64_t)(UINT64_C(1) << (bits - 1));
      else r.i = (int64_t)x;
    }
  } else {
    r.i = re_wrap(v.i, to);
  }
  return r;
}

/* ------------------------------------------------------------ buffer data */
double re_unwritten(void) {
  uint64_t u = RE_UNWRITTEN_BITS;
  double v;
  memcpy(&v, &u, sizeof v);
  return v;
}

bool re_is_unwritten(double v) {
  uint64_t u;
  memcpy(&u, &v, sizeof u);
  return u == RE_UNWRITTEN_BITS;
}

void re_note_unwritten(re_state *st, const re_buf *rb, int64_t off, re_val v, tl_loc loc) {
  if (!rb->isf || rb->native || st->warned_unwritten || rb->b->scope == TL_SCOPE_GLOBAL || !re_is_unwritten(v.f))
    return;
  st->warned_unwritten = true;
  tl_diag_report(st->d, TL_DIAG_WARNING, loc,
                 "%s buffer '%s' is read here at element %lld, which nothing wrote: its value is undefined "
                 "(the reference evaluator reads NaN)",
                 tl_scope_name(rb->b->scope), rb->b->name, (long long)off);
}

re_val re_buf_get(const re_buf *rb, int64_t off) {
  re_val v;
  if (!rb->native) {
    if (rb->isf) v.f = ((const double *)rb->data)[off];
    else v.i = ((const int64_t *)rb->data)[off];
    return v;
  }
  const char *p = (const char *)rb->data;
  tl_dtype t = rb->dt;
  switch (t.code) {
  case TL_TYPE_FLOAT:
    if (t.bits == 16) {
      uint16_t h;
      memcpy(&h, p + off * 2, 2);
      v.f = f16_decode(h);
    } else if (t.bits == 32) {
      float f;
      memcpy(&f, p + off * 4, 4);
      v.f = f;
    } else {
      memcpy(&v.f, p + off * 8, 8);
    }
    return v;
  case TL_TYPE_BFLOAT: {
    uint16_t h;
    memcpy(&h, p + off * 2, 2);
    v.f = bf16_decode(h);
    return v;
  }
  case TL_TYPE_TFLOAT: {
    float f;
    memcpy(&f, p + off * 4, 4);
    v.f = tl_round_to_dtype(f, t); /* the low 13 bits are ignored */
    return v;
  }
  case TL_TYPE_BOOL: v.i = p[off] != 0; return v;
  case TL_TYPE_FLOAT8_E4M3:
  case TL_TYPE_FLOAT8_E5M2: v.f = tl_fp8_decode((uint8_t)p[off], t); return v;
  default: break;
  }
  bool s = t.code == TL_TYPE_INT;
  switch (t.bits) {
  case 4: v.i = tl_nibble((uint8_t)p[off / 2], (int)(off % 2), s); break; /* packed, low nibble first */
  case 8: v.i = s ? (int64_t)(int8_t)p[off] : (int64_t)(uint8_t)p[off]; break;
  case 16: {
    uint16_t u;
    memcpy(&u, p + off * 2, 2);
    v.i = s ? (int64_t)(int16_t)u : (int64_t)u;
    break;
  }
  case 32: {
    uint32_t u;
    memcpy(&u, p + off * 4, 4);
    v.i = s ? (int64_t)(int32_t)u : (int64_t)u;
    break;
  }
  default: memcpy(&v.i, p + off * 8, 8); break;
  }
  return v;
}

void re_buf_set(re_buf *rb, int64_t off, re_val v) {
  if (!rb->native) {
    if (rb->isf) ((double *)rb->data)[off] = v.f;
    else ((int64_t *)rb->data)[off] = v.i;
    return;
  }
  char *p = (char *)rb->data;
  tl_dtype t = rb->dt;
  switch (t.code) {
  case TL_TYPE_FLOAT:
    if (t.bits == 16) {
      uint16_t h = f16_encode(v.f);
      memcpy(p + off * 2, &h, 2);
    } else if (t.bits == 32) {
      float f = (float)v.f;
      memcpy(p + off * 4, &f, 4);
    } else {
      memcpy(p + off * 8, &v.f, 8);
    }
    return;
  case TL_TYPE_BFLOAT: {
    uint16_t h = bf16_encode(v.f);
    memcpy(p + off * 2, &h, 2);
    return;
  }
  case TL_TYPE_TFLOAT: {
    float f = (float)v.f;
    memcpy(p + off * 4, &f, 4);
    return;
  }
  case TL_TYPE_BOOL: p[off] = (char)(v.i != 0); return;
  case TL_TYPE_FLOAT8_E4M3:
  case TL_TYPE_FLOAT8_E5M2: p[off] = (char)tl_fp8_encode(v.f, t); return;
  default: break;
  }
  switch (t.bits) {
  case 4: { /* packed: element off is nibble off % 2 of byte off / 2 */
    int sh = 4 * (int)(off % 2);
    p[off / 2] = (char)(((uint8_t)p[off / 2] & ~(0xf << sh)) | (((uint8_t)v.i & 0xf) << sh));
    break;
  }
  case 8: p[off] = (char)(uint8_t)v.i; break;
  case 16: {
    uint16_t u = (uint16_t)v.i;
    memcpy(p + off * 2, &u, 2);
    break;
  }
  case 32: {
    uint32_t u = (uint32_t)v.i;
    memcpy(p + off * 4, &u, 4);
    break;
  }
  default: memcpy(p + off * 8, &v.i, 8); break;
  }
}

/* ------------------------------------------------------------------ slots */
static int var_slot(const re_state *st, const tl_var *v) {
  void *p = v ? tl_map_get(&st->var_slot, v, NULL) : NULL;
  return p ? (int)(uintptr_t)p - 1 : -1;
}
static int buf_slot(const re_state *st, const tl_buffer *b) {
  void *p = b ? tl_map_get(&st->buf_slot, b, NULL) : NULL;
  return p ? (int)(uintptr_t)p - 1 : -1;
}

static bool add_var(re_state *st, const tl_var *v) {
  if (!v || tl_map_get(&st->var_slot, v, NULL)) return true;
  return tl_map_put(&st->var_slot, v, (void *)(uintptr_t)(++st->nvars));
}

/* Slots for every variable and buffer a function mentions, given in one
 * tl_visitor walk (a buffer's shape, strides and initial value included;
 * nesting beyond the visitor's limit is reported when evaluated). */
typedef struct slot_visit {
  tl_visitor v;
  re_state *st;
  bool oom;
} slot_visit;

static void slot_var(slot_visit *u, const tl_var *v) {
  if (!add_var(u->st, v)) u->oom = true;
}

static void slot_buf(slot_visit *u, const tl_buffer *b) {
  re_state *st = u->st;
  if (!b || tl_map_get(&st->buf_slot, b, NULL)) return;
  if (!tl_map_put(&st->buf_slot, b, (void *)(uintptr_t)(++st->nbufs))) {
    u->oom = true;
    return;
  }
  for (int d = 0; d < b->ndim; d++) {
    if (b->shape) tl_visit_expr(&u->v, b->shape[d]);
    if (b->strides) tl_visit_expr(&u->v, b->strides[d]);
  }
  tl_visit_expr(&u->v, b->init);
}

static void slot_expr(tl_visitor *v, const tl_expr *e) {
  slot_visit *u = (slot_visit *)v;
  if (e->kind == TL_EXPR_VAR) slot_var(u, e->u.var);
  else if (e->kind == TL_EXPR_LOAD) slot_buf(u, e->u.load.buffer);
  else if (e->kind == TL_EXPR_BUFFER) slot_buf(u, e->u.buffer);
}

static void slot_region(tl_visitor *v, const tl_region *r) { slot_buf((slot_visit *)v, r->buffer); }

static void slot_stmt(tl_visitor *v, const tl_stmt *s) {
  slot_visit *u = (slot_visit *)v;
  switch (s->kind) {
  case TL_STMT_FOR:
    for (int i = 0; i < s->u.loop.nvars; i++) slot_var(u, s->u.loop.vars[i]);
    return;
  case TL_STMT_KERNEL:
    for (int i = 0; i < s->u.kernel.ngrid && i < 3; i++) slot_var(u, s->u.kernel.block_vars[i]);
    return;
  case TL_STMT_ALLOC: slot_buf(u, s->u.alloc.buffer); return;
  case TL_STMT_STORE: slot_buf(u, s->u.store.buffer); return;
  case TL_STMT_LET: slot_var(u, s->u.let.var); return;
  default: return;
  }
}

/* Slots for buffer b (a parameter) or, with b NULL, for everything in s;
 * false on OOM. */
static bool collect_slots(re_state *st, const tl_buffer *b, const tl_stmt *s) {
  slot_visit u = {.v = {.expr = slot_expr, .stmt = slot_stmt, .region = slot_region}, .st = st};
  if (b) slot_buf(&u, b);
  else tl_visit_stmt(&u.v, s);
  return !u.oom;
}

/* -------------------------------------------------------------- buffers */
re_buf *re_buf_of(re_state *st, const tl_buffer *b, tl_loc loc) {
  int k = buf_slot(st, b);
  if (k < 0) {
    re_error(st, loc, "reference evaluator: unknown buffer '%s'", b ? b->name : "?");
    return NULL;
  }
  re_buf *rb = is_private_scope(b->scope) ? &st->cur->local[k] : &st->bufs[k];
  if (!rb->valid) {
    re_error(st, loc, "buffer '%s' is used before its allocation", b->name);
    return NULL;
  }
  return rb;
}

/* Computes the shape and (compact or given) strides of rb from b; the number
 * of addressable elements goes to rb->size (-1 when it overflows). */
static bool buf_geometry(re_state *st, re_buf *rb, const tl_buffer *b, tl_loc loc) {
  if (b->ndim > RE_MAX_DIMS) {
    re_error(st, loc, "buffer '%s' has %d dimensions; the reference evaluator handles up to %d", b->name, b->ndim,
             RE_MAX_DIMS);
    return false;
  }
  rb->b = b;
  rb->dt = b->dtype;
  rb->isf = tl_dtype_is_float(b->dtype);
  rb->ndim = b->ndim;
  bool empty = false;
  for (int d = 0; d < b->ndim; d++) {
    int64_t n = re_eval_int(st, b->shape[d]);
    if (st->failed) return false;
    if (n < 0) {
      re_error(st, loc, "buffer '%s': dimension %d has negative extent %lld", b->name, d, (long long)n);
      return false;
    }
    rb->shape[d] = n;
    empty |= n == 0;
  }
  if (b->strides) {
    for (int d = 0; d < b->ndim; d++) {
      rb->stride[d] = re_eval_int(st, b->strides[d]);
      if (st->failed) return false;
      if (rb->stride[d] < 0) {
        re_error(st, loc, "buffer '%s': negative stride %lld", b->name, (long long)rb->stride[d]);
        return false;
      }
    }
  } else {
    int64_t s = 1;
    for (int d = b->ndim - 1; d >= 0; d--) {
      rb->stride[d] = s;
      if (rb->shape[d] > 0 && __builtin_mul_overflow(s, rb->shape[d], &s)) {
        rb->size = -1;
        return true;
      }
    }
  }
  int64_t last = 0; /* offset of the last element */
  for (int d = 0; d < b->ndim && !empty; d++) {
    int64_t t;
    if (__builtin_mul_overflow(rb->shape[d] - 1, rb->stride[d], &t) || __builtin_add_overflow(last, t, &last)) {
      rb->size = -1;
      return true;
    }
  }
  rb->size = empty ? 0 : last + 1;
  return true;
}

/* The tensor argument whose memory holds [addr, addr + bytes), or NULL. */
static const re_buf *view_owner(re_state *st, uint64_t addr, int64_t bytes) {
  for (int i = 0; i < st->f->nparams; i++) {
    int k = st->f->params[i].kind == TL_PARAM_TENSOR ? buf_slot(st, st->f->params[i].buffer) : -1;
    const re_buf *p = k >= 0 ? &st->bufs[k] : NULL;
    if (!p || !p->valid || !p->native || !p->data) continue;
    uint64_t lo = (uint64_t)(uintptr_t)p->data, hi = lo + (uint64_t)p->size * tl_dtype_bytes(p->dt);
    if (addr >= lo && addr <= hi && (uint64_t)bytes <= hi - addr) return p;
  }
  return NULL;
}

/* A T.make_tensor view (docs/language.md): its address, evaluated here, must
 * lie in a tensor argument of the launch (host memory on the CPU) of the
 * view's dtype, with every element of the view inside it; the view then
 * reads and writes that tensor's elements.  Anything else is an error. */
static void exec_view(re_state *st, const tl_stmt *s, re_buf *rb) {
  const tl_buffer *b = s->u.alloc.buffer;
  uint64_t addr = (uint64_t)re_eval_int(st, b->data);
  if (st->failed || !buf_geometry(st, rb, b, s->loc)) return;
  int64_t eb = tl_dtype_bytes(b->dtype);
  const re_buf *p = rb->size >= 0 && eb > 0 ? view_owner(st, addr, rb->size * eb) : NULL;
  if (!p) {
    const re_buf *q = view_owner(st, addr, 0);
    if (q)
      re_error(st, s->loc, "T.make_tensor '%s': its %lld elements from address 0x%llx reach past the end of '%s'",
               b->name, (long long)rb->size, (unsigned long long)addr, q->b->name);
    else
      re_error(st, s->loc,
               "T.make_tensor '%s': address 0x%llx points into no tensor argument of this launch (on the CPU a view "
               "may only reach the launch's tensors)",
               b->name, (unsigned long long)addr);
    return;
  }
  uint64_t off = addr - (uint64_t)(uintptr_t)p->data;
  if (!tl_dtype_eq(p->dt, b->dtype) || off % (uint64_t)eb) {
    re_error(st, s->loc, "T.make_tensor '%s' of %s at byte %llu of '%s' of %s: not an element of the same dtype",
             b->name, tl_dtype_name(b->dtype), (unsigned long long)off, p->b->name, tl_dtype_name(p->dt));
    return;
  }
  rb->data = (char *)p->data + off;
  rb->cap = 0;
  rb->native = true;
  rb->valid = true;
  rb->epoch = st->epoch;
  rb->workspace = false;
}

/* Executes an allocation: fresh storage poisoned with NaN (floats) or 0
 * (ints), or the T.alloc_var initial value.  A shared buffer allocated by
 * a per-thread program is allocated once per block (the first thread).  A
 * global one (a kernel workspace: T.alloc_global) once per launch, zeroed,
 * as the runtimes provide it; every block sees the same storage. */
static void exec_alloc(re_state *st, const tl_stmt *s) {
  const tl_buffer *b = s->u.alloc.buffer;
  int k = buf_slot(st, b);
  if (k < 0) {
    re_error(st, s->loc, "reference evaluator: unknown buffer '%s'", b ? b->name : "?");
    return;
  }
  re_buf *rb = is_private_scope(b->scope) ? &st->cur->local[k] : &st->bufs[k];
  if (tl_buffer_is_view(b)) return exec_view(st, s, rb);
  if (b->scope == TL_SCOPE_GLOBAL && rb->valid) return; /* this launch's workspace */
  if (!is_private_scope(b->scope) && st->per_thread && rb->valid && rb->epoch == st->epoch)
    return; /* already allocated by another thread of this block */
  void *data = rb->data;
  size_t cap = rb->cap;
  if (!buf_geometry(st, rb, b, s->loc)) return;
  if (rb->size < 0 || rb->size > RE_MAX_ELEMS) {
    re_error(st, s->loc, "buffer '%s' is too large for the reference evaluator (limit %lld elements)", b->name,
             (long long)RE_MAX_ELEMS);
    return;
  }
  size_t need = (size_t)(rb->size ? rb->size : 1) * 8;
  if (need > cap) {
    void *p = realloc(data, need);
    if (!p) {
      re_error(st, s->loc, "out of memory allocating buffer '%s'", b->name);
      return;
    }
    data = p;
    cap = need;
  }
  rb->data = data;
  rb->cap = cap;
  rb->native = false;
  rb->valid = true;
  rb->epoch = st->epoch;
  rb->workspace = b->scope == TL_SCOPE_GLOBAL;
  if (rb->isf && !rb->workspace) {
    double *p = data, u = re_unwritten();
    for (int64_t i = 0; i < rb->size; i++) p[i] = u;
  } else {
    memset(data, 0, (size_t)rb->size * 8);
  }
  if (b->init && rb->size > 0) {
    re_val v = re_eval(st, b->init);
    if (st->failed) return;
    v = re_convert(v, b->init->dtype, b->dtype);
    for (int64_t i = 0; i < rb->size; i++) re_buf_set(rb, i, v);
  }
}

/* Flat offset of buffer element idx[0..n); errors out of bounds. */
static bool elem_offset(re_state *st, const re_buf *rb, int n, tl_expr *const *idx, tl_loc loc, int64_t *off) {
  if (n != rb->ndim) {
    re_error(st, loc, "buffer '%s' has %d dimension%s but is indexed with %d", rb->b->name, rb->ndim,
             rb->ndim == 1 ? "" : "s", n);
    return false;
  }
  int64_t o = 0;
  for (int d = 0; d < n; d++) {
    int64_t i = re_eval_int(st, idx[d]);
    if (st->failed) return false;
    if (i < 0 || i >= rb->shape[d]) {
      re_error(st, loc, "index %lld is out of bounds for dimension %d of %s buffer '%s' (extent %lld)", (long long)i, d,
               tl_scope_name(rb->b->scope), rb->b->name, (long long)rb->shape[d]);
      return false;
    }
    o += i * rb->stride[d];
  }
  *off = o;
  return true;
}

/* ------------------------------------------------------------ arithmetic */
/* a op b on float dtype t: f64 in double, everything else in float, rounded
 * to t after the operation. */
re_val re_add(re_val a, re_val b, tl_dtype t) {
  re_val r;
  if (tl_dtype_is_float(t)) r.f = tl_float_binop(TL_OP_ADD, a.f, b.f, t);
  else r.i = re_wrap((int64_t)((uint64_t)a.i + (uint64_t)b.i), t);
  return r;
}

static int type_bits(tl_dtype t) { return t.code == TL_TYPE_BOOL ? 8 : t.bits; }

/* a op b on int-like dtype t (values wrapped to t); wraps the result. */
int64_t re_int_arith(re_state *st, tl_binop op, int64_t a, int64_t b, tl_dtype t, tl_loc loc) {
  bool uns = t.code == TL_TYPE_UINT || t.code == TL_TYPE_BOOL;
  uint64_t ua = (uint64_t)a, ub = (uint64_t)b;
  int64_t r;
  switch (op) {
  case TL_OP_ADD: r = (int64_t)(ua + ub); break;
  case TL_OP_SUB: r = (int64_t)(ua - ub); break;
  case TL_OP_MUL: r = (int64_t)(ua * ub); break;
  case TL_OP_DIV:
  case TL_OP_FLOORDIV:
  case TL_OP_FLOORMOD:
    if (b == 0) {
      re_error(st, loc, "integer division by zero");
      return 0;
    }
    if (uns) {
      r = (int64_t)(op == TL_OP_FLOORMOD ? ua % ub : ua / ub);
    } else if (a == INT64_MIN && b == -1) {
      r = op == TL_OP_FLOORMOD ? 0 : a;
    } else if (op == TL_OP_DIV) {
      r = a / b;
    } else {
      int64_t q = a / b, m = a % b;
      if (m != 0 && ((m < 0) != (b < 0))) {
        q--;
        m += b;
      }
      r = op == TL_OP_FLOORDIV ? q : m;
    }
    break;
  case TL_OP_POW: { /* through double, as the GPU code does */
    re_val x = {.f = pow(int_to_double(a, t), int_to_double(b, t))};
    return re_convert(x, TL_DT(TL_TYPE_FLOAT, 64), t).i;
  }
  case TL_OP_MIN: r = uns ? (ua < ub ? a : b) : (a < b ? a : b); break;
  case TL_OP_MAX: r = uns ? (ua > ub ? a : b) : (a > b ? a : b); break;
  case TL_OP_BITAND: r = a & b; break;
  case TL_OP_BITOR: r = a | b; break;
  case TL_OP_BITXOR: r = a ^ b; break;
  case TL_OP_SHL:
  case TL_OP_SHR: {
    int bits = type_bits(t);
    if (b < 0 || b >= bits) {
      re_error(st, loc, "shift by %lld is out of range for %s", (long long)b, tl_dtype_name(t));
      return 0;
    }
    if (op == TL_OP_SHL) r = (int64_t)(ua << b);
    else if (uns) r = (int64_t)(ua >> b);
    else r = a < 0 ? ~(~a >> b) : a >> b;
    break;
  }
  default: re_error(st, loc, "operator is not defined on %s", tl_dtype_name(t)); return 0;
  }
  return re_wrap(r, t);
}

bool re_truthy(re_val v, tl_dtype t) { return tl_dtype_is_float(t) ? v.f != 0 : v.i != 0; }

/* ----------------------------------------------------------- expressions */
static re_val eval_rec(re_state *st, const tl_expr *e) {
  re_val r = {0};
  if (st->failed) return r;
  if (!e) {
    re_error(st, TL_LOC_NONE, "reference evaluator: missing expression");
    return r;
  }
  if (e->dtype.lanes != 1 && e->kind != TL_EXPR_STRING && e->kind != TL_EXPR_BUFFER) {
    re_error(st, e->loc,
             "vector expressions (%s) belong to lowered code; the reference evaluator runs tile "
             "programs",
             tl_dtype_name(e->dtype));
    return r;
  }
  tl_dtype t = e->dtype;
  switch (e->kind) {
  case TL_EXPR_INT:
    if (tl_dtype_is_float(t)) r.f = re_round((double)e->u.ival, t);
    else r.i = re_wrap(e->u.ival, t);
    return r;
  case TL_EXPR_FLOAT:
    if (tl_dtype_is_float(t)) r.f = re_round(e->u.fval, t);
    else r = re_convert((re_val){.f = e->u.fval}, TL_DT(TL_TYPE_FLOAT, 64), t);
    return r;
  case TL_EXPR_VAR: {
    int k = var_slot(st, e->u.var);
    if (k < 0) {
      re_error(st, e->loc, "reference evaluator: unknown variable '%s'", e->u.var ? e->u.var->name : "?");
      return r;
    }
    /* a tile program skips its lets of the thread index (they run in per-thread role scopes): read anywhere
     * else, such a variable would be thread 0's for every thread (a tile op's region, say) */
    for (int i = 0; i < st->ntid_lets && !st->per_thread; i++)
      if (st->tid_lets[i]->u.let.var == e->u.var) {
        re_error(st, e->loc,
                 "the reference evaluator runs tile programs; '%s' (a let of the thread index) has no meaning "
                 "here (a tile op's region that depends on the thread: write it as a loop of loads and stores)",
                 e->u.var->name);
        return r;
      }
    return st->cur->env[k];
  }
  case TL_EXPR_BINARY: {
    tl_binop op = e->u.bin.op;
    const tl_expr *x = e->u.bin.a, *y = e->u.bin.b;
    tl_dtype ot = x->dtype;
    if (op == TL_OP_AND || op == TL_OP_OR) { /* short-circuit */
      re_val a = re_eval(st, x);
      if (st->failed) return r;
      bool av = re_truthy(a, x->dtype);
      if (op == TL_OP_AND ? !av : av) {
        r.i = av;
        return r;
      }
      re_val b = re_eval(st, y);
      r.i = re_truthy(b, y->dtype);
      return r;
    }
    re_val a = re_eval(st, x), b = re_eval(st, y);
    if (st->failed) return r;
    if (!tl_dtype_eq(y->dtype, ot)) b = re_convert(b, y->dtype, ot);
    if (op >= TL_OP_EQ && op <= TL_OP_GE) {
      r.i = tl_dtype_is_float(ot) ? tl_float_compare(op, a.f, b.f)
                                  : tl_int_compare(op, a.i, b.i, ot.code == TL_TYPE_UINT);
      return r;
    }
    if (tl_dtype_is_float(ot)) {
      if (op > TL_OP_MAX) {
        re_error(st, e->loc, "operator is not defined on %s", tl_dtype_name(ot));
        return r;
      }
      r.f = tl_float_binop(op, a.f, b.f, ot);
    } else {
      r.i = re_int_arith(st, op, a.i, b.i, ot, e->loc);
    }
    if (!tl_dtype_eq(t, ot)) r = re_convert(r, ot, t);
    return r;
  }
  case TL_EXPR_UNARY: {
    const tl_expr *x = e->u.un.a;
    re_val a = re_eval(st, x);
    if (st->failed) return r;
    if (e->u.un.op == TL_OP_NOT) {
      r.i = !re_truthy(a, x->dtype);
      return r;
    }
    if (!tl_dtype_eq(x->dtype, t)) a = re_convert(a, x->dtype, t);
    if (tl_dtype_is_float(t)) {
      if (e->u.un.op == TL_OP_BITNOT) {
        re_error(st, e->loc, "operator ~ is not defined on %s", tl_dtype_name(t));
        return r;
      }
      r.f = -a.f;
    } else {
      r.i = re_wrap(e->u.un.op == TL_OP_NEG ? (int64_t)(0 - (uint64_t)a.i) : ~a.i, t);
    }
    return r;
  }
  case TL_EXPR_SELECT: {
    re_val c = re_eval(st, e->u.sel.cond);
    if (st->failed) return r;
    const tl_expr *pick = re_truthy(c, e->u.sel.cond->dtype) ? e->u.sel.t : e->u.sel.f;
    r = re_eval(st, pick); /* only the chosen branch: it may guard a load */
    if (!st->failed && !tl_dtype_eq(pick->dtype, t)) r = re_convert(r, pick->dtype, t);
    return r;
  }
  case TL_EXPR_CAST: {
    const tl_expr *x = e->u.cast.value;
    re_val a = re_eval(st, x);
    if (st->failed) return r;
    if (!tl_dtype_is_float(x->dtype) && !tl_dtype_is_int(x->dtype) && x->dtype.code != TL_TYPE_BOOL) {
      re_error(st, e->loc, "cannot cast %s to %s", tl_dtype_name(x->dtype), tl_dtype_name(t));
      return r;
    }
    return re_convert(a, x->dtype, t);
  }
  case TL_EXPR_LOAD: {
    re_buf *rb = re_buf_of(st, e->u.load.buffer, e->loc);
    int64_t off;
    if (!rb || !elem_offset(st, rb, e->u.load.n, e->u.load.indices, e->loc, &off)) return r;
    r = re_buf_get(rb, off);
    re_note_unwritten(st, rb, off, r, e->loc);
    if (!tl_dtype_eq(rb->dt, t)) r = re_convert(r, rb->dt, t);
    return r;
  }
  case TL_EXPR_CALL: return re_eval_call(st, e);
  case TL_EXPR_STRING: re_error(st, e->loc, "a string is not a value"); return r;
  case TL_EXPR_BUFFER:
    re_error(st, e->loc, "buffer '%s' used as a value", e->u.buffer ? e->u.buffer->name : "?");
    return r;
  default:
    re_error(st, e->loc,
             "this expression (ramp/broadcast) belongs to lowered code; the reference evaluator "
             "runs tile programs");
    return r;
  }
}

re_val re_eval(re_state *st, const tl_expr *e) {
  if (++st->depth > RE_MAX_DEPTH) {
    re_error(st, e ? e->loc : TL_LOC_NONE, "expression nested too deeply (limit %d)", RE_MAX_DEPTH);
    st->depth--;
    return (re_val){0};
  }
  re_val r = eval_rec(st, e);
  st->depth--;
  return r;
}

int64_t re_eval_int(re_state *st, const tl_expr *e) {
  if (st->failed) return 0;
  if (!e) {
    re_error(st, TL_LOC_NONE, "reference evaluator: missing expression");
    return 0;
  }
  if (tl_dtype_is_float(e->dtype)) {
    re_error(st, e->loc, "expected an integer, got a %s value", tl_dtype_name(e->dtype));
    return 0;
  }
  return re_eval(st, e).i;
}

/* ------------------------------------------------------------ statements */
static void exec(re_state *st, const tl_stmt *s);

static void set_var(re_state *st, const tl_var *v, re_val x, tl_loc loc) {
  int k = var_slot(st, v);
  if (k < 0) {
    re_error(st, loc, "reference evaluator: unknown variable '%s'", v ? v->name : "?");
    return;
  }
  st->cur->env[k] = x;
}

/* Loop variable k of s (and the ones after it) over their ranges. */
static void exec_loop(re_state *st, const tl_stmt *s, int k) {
  if (k == s->u.loop.nvars) {
    exec(st, s->u.loop.body);
    return;
  }
  const tl_var *v = s->u.loop.vars[k];
  int64_t lo = s->u.loop.mins && s->u.loop.mins[k] ? re_eval_int(st, s->u.loop.mins[k]) : 0;
  int64_t ext = re_eval_int(st, s->u.loop.extents[k]);
  int64_t step = s->u.loop.step && s->u.loop.nvars == 1 ? re_eval_int(st, s->u.loop.step) : 1;
  if (st->failed) return;
  if (step == 0) {
    re_error(st, s->loc, "loop step must not be zero");
    return;
  }
  int slot = var_slot(st, v);
  if (slot < 0) {
    re_error(st, s->loc, "reference evaluator: unknown loop variable");
    return;
  }
  tl_dtype vt = v->dtype;
  if (step > 0) {
    for (int64_t i = 0; i < ext && !st->failed; i += step) {
      st->cur->env[slot].i = re_wrap(lo + i, vt);
      exec_loop(st, s, k + 1);
    }
  } else { /* range(lo, lo + ext, step) with a negative step */
    for (int64_t i = 0; i > ext && !st->failed; i += step) {
      st->cur->env[slot].i = re_wrap(lo + i, vt);
      exec_loop(st, s, k + 1);
    }
  }
}

/* `while cond: body`: cond before each iteration; a loop still running after
 * TL_INTERP_MAX_WHILE_ITERS iterations is reported (it may never end). */
static void exec_while(re_state *st, const tl_stmt *s) {
  for (int64_t n = 0; !st->failed; n++) {
    re_val c = re_eval(st, s->u.whiles.cond);
    if (st->failed || !re_truthy(c, s->u.whiles.cond->dtype)) return;
    if (n == TL_INTERP_MAX_WHILE_ITERS) {
      re_error(st, s->loc,
               "this 'while' loop ran %lld iterations and its condition still holds (the reference evaluator's "
               "bound): it may never end",
               (long long)n);
      return;
    }
    exec(st, s->u.whiles.body);
  }
}

static bool is_sync(const tl_stmt *s) {
  return s && s->kind == TL_STMT_EVAL && s->u.eval.value && s->u.eval.value->kind == TL_EXPR_CALL &&
         s->u.eval.value->u.call.op == TL_INTRIN_SYNC_THREADS;
}

static void run_kernel(re_state *st, const tl_stmt *s);

static bool is_allreduce(const tl_stmt *s) {
  return s && s->kind == TL_STMT_TILE && s->u.tile.op == TL_TILE_THREAD_ALLREDUCE;
}

static void run_scope_threads(re_state *st, const tl_stmt *s);

static void exec_rec(re_state *st, const tl_stmt *s) {
  switch (s->kind) {
  case TL_STMT_SEQ:
    for (int i = 0; i < s->u.seq.n && !st->failed; i++) exec(st, s->u.seq.stmts[i]);
    return;
  case TL_STMT_FOR:
    if (s->u.loop.kind == TL_LOOP_THREAD) {
      re_error(st, s->loc,
               "thread-bound loops belong to lowered code; the reference evaluator runs tile "
               "programs");
      return;
    }
    if (s->u.loop.kind == TL_LOOP_PARALLEL && st->per_thread) { /* the lowering's meaning: lib/Lower/uniform.c */
      re_error(st, s->loc,
               "T.Parallel in per-thread code: the reference evaluator runs a per-thread kernel one thread at a "
               "time and does not spread this loop over the threads as the lowering does; run the kernel on the "
               "SIMT executor without --check and compare with another reference (NumPy)");
      return;
    }
    if (s->u.loop.nvars < 1 || !s->u.loop.vars || !s->u.loop.extents) {
      re_error(st, s->loc, "malformed loop");
      return;
    }
    exec_loop(st, s, 0);
    return;
  case TL_STMT_KERNEL: run_kernel(st, s); return;
  case TL_STMT_ALLOC: exec_alloc(st, s); return;
  case TL_STMT_STORE: {
    re_buf *rb = re_buf_of(st, s->u.store.buffer, s->loc);
    int64_t off;
    if (!rb || !elem_offset(st, rb, s->u.store.n, s->u.store.indices, s->loc, &off)) return;
    const tl_expr *val = s->u.store.value;
    re_val v = re_eval(st, val);
    if (st->failed) return;
    if (!tl_dtype_eq(val->dtype, rb->dt)) v = re_convert(v, val->dtype, rb->dt);
    re_buf_set(rb, off, v);
    return;
  }
  case TL_STMT_IF: {
    if (!st->per_thread && st->tid_scopes && tl_ws_scope_uses_thread_index(st->kbody, s, NULL)) {
      run_scope_threads(st, s);
      return;
    }
    re_val c = re_eval(st, s->u.ifs.cond);
    if (st->failed) return;
    if (re_truthy(c, s->u.ifs.cond->dtype)) exec(st, s->u.ifs.then_s);
    else if (s->u.ifs.else_s) exec(st, s->u.ifs.else_s);
    return;
  }
  case TL_STMT_WHILE: exec_while(st, s); return;
  case TL_STMT_LET: {
    /* a tile program's let of the thread index is read in per-thread role scopes only: run there */
    if (!st->per_thread && tl_expr_reads_tid(s->u.let.value, NULL)) {
      bool seen = false;
      for (int i = 0; i < st->ntid_lets; i++) seen |= st->tid_lets[i] == s;
      if (!seen && st->ntid_lets == (int)(sizeof st->tid_lets / sizeof st->tid_lets[0]))
        re_error(st, s->loc, "more than %d lets of the thread index", st->ntid_lets);
      else if (!seen) st->tid_lets[st->ntid_lets++] = s;
      return;
    }
    re_val v = re_eval(st, s->u.let.value);
    if (st->failed) return;
    if (s->u.let.var && !tl_dtype_eq(s->u.let.value->dtype, s->u.let.var->dtype))
      v = re_convert(v, s->u.let.value->dtype, s->u.let.var->dtype);
    set_var(st, s->u.let.var, v, s->loc);
    return;
  }
  case TL_STMT_EVAL:
    if (is_sync(s)) {
      if (st->per_thread)
        re_error(st, s->loc,
                 "T.sync_threads() inside a loop or branch of per-thread code: the reference "
                 "evaluator runs threads one after another and needs barriers at the top level "
                 "of the kernel body");
      return; /* a tile program's barrier orders nothing: ops run in order */
    }
    (void)re_eval(st, s->u.eval.value);
    return;
  case TL_STMT_TILE: (void)re_tile_op(st, s); return;
  }
  re_error(st, s->loc, "reference evaluator: unknown statement");
}

static void exec(re_state *st, const tl_stmt *s) {
  if (st->failed || !s) return;
  if (++st->depth > RE_MAX_DEPTH) {
    re_error(st, s->loc, "statements nested too deeply (limit %d)", RE_MAX_DEPTH);
    st->depth--;
    return;
  }
  exec_rec(st, s);
  st->depth--;
}

/* A role scope `if T.ws(g): body` whose body uses the thread index, in a
 * tile program: the body once per thread of warpgroup g (threads 128 g ..
 * 128 g + 127), each after the lets of the thread index met before it, in
 * thread order (its T.sync_threads() is refused as in per-thread code; the
 * program's mbarriers order its scopes, which run in program order here). */
static void invalidate_private(re_state *st, re_thread *t);
static void run_scope_threads(re_state *st, const tl_stmt *s) {
  int64_t g = 0;
  tl_expr_is_const_int(s->u.ifs.cond->u.call.args[0], &g);
  st->per_thread = true;
  for (int64_t t = 128 * g; t < 128 * (g + 1) && t < st->nthreads && !st->failed; t++) {
    re_thread *c = &st->threads[t];
    memcpy(c->env, st->genv, (size_t)st->nvars * sizeof *c->env);
    c->tid = t;
    invalidate_private(st, c);
    st->cur = c;
    for (int i = 0; i < st->ntid_lets && !st->failed; i++) exec(st, st->tid_lets[i]);
    exec(st, s->u.ifs.then_s);
  }
  st->per_thread = false;
  st->cur = &st->main;
}

/* Does the kernel body hold a role scope whose body uses the thread index? */
static bool has_tid_scope(const tl_stmt *body, const tl_stmt *s, int depth) {
  if (!s || depth > 64) return false;
  switch (s->kind) {
  case TL_STMT_SEQ:
    for (int i = 0; i < s->u.seq.n; i++)
      if (has_tid_scope(body, s->u.seq.stmts[i], depth + 1)) return true;
    return false;
  case TL_STMT_FOR: return has_tid_scope(body, s->u.loop.body, depth + 1);
  case TL_STMT_WHILE: return has_tid_scope(body, s->u.whiles.body, depth + 1);
  case TL_STMT_IF:
    return tl_ws_scope_uses_thread_index(body, s, NULL) || has_tid_scope(body, s->u.ifs.then_s, depth + 1) ||
           has_tid_scope(body, s->u.ifs.else_s, depth + 1);
  default: return false;
  }
}

/* ------------------------------------------------------------------ grid */
static bool thread_ctx_init(re_state *st, re_thread *t) {
  t->env = calloc((size_t)st->nvars + 1, sizeof *t->env);
  t->local = calloc((size_t)st->nbufs + 1, sizeof *t->local);
  return t->env && t->local;
}
static void thread_ctx_free(re_state *st, re_thread *t) {
  if (t->local)
    for (int i = 0; i < st->nbufs; i++) free(t->local[i].data);
  free(t->local);
  if (t->env != st->genv) free(t->env);
  t->env = NULL;
  t->local = NULL;
}

static void invalidate_private(re_state *st, re_thread *t) {
  for (int i = 0; i < st->nbufs; i++) t->local[i].valid = false;
}

/* T.thread_allreduce at the top level of a per-thread kernel body (run
 * between two phases): every thread's value, then each thread's dst = the
 * values of its group (threads base + j*S, j < N) combined in j order. */
static void run_allreduce(re_state *st, const tl_stmt *s, int64_t threads) {
  tl_expr *const *at = s->u.tile.attrs;
  const char *op = at && at[0] && at[0]->kind == TL_EXPR_STRING ? at[0]->u.str : "sum";
  int64_t S = 1, N = 1;
  if (at && at[1]) tl_expr_is_const_int(at[1], &S);
  if (at && at[2]) tl_expr_is_const_int(at[2], &N);
  int in = !strcmp(op, "max")   ? TL_INTRIN_PTX_ATOMIC_MAX
           : !strcmp(op, "min") ? TL_INTRIN_PTX_ATOMIC_MIN
                                : TL_INTRIN_PTX_ATOMIC_ADD;
  if (S < 1 || N < 1 || threads % (S * N)) {
    re_error(st, s->loc, "T.thread_allreduce: groups of %lld threads at stride %lld do not tile %lld threads",
             (long long)N, (long long)S, (long long)threads);
    return;
  }
  const tl_region *g = &s->u.tile.args[0].region;
  const tl_expr *ve = s->u.tile.args[1].expr;
  tl_dtype dt = g->buffer->dtype;
  re_val *vals = malloc((size_t)threads * sizeof *vals);
  if (!vals) {
    re_error(st, s->loc, "out of memory");
    return;
  }
  for (int64_t t = 0; t < threads && !st->failed; t++) {
    st->cur = &st->threads[t];
    re_val v = re_eval(st, ve);
    vals[t] = tl_dtype_eq(ve->dtype, dt) ? v : re_convert(v, ve->dtype, dt);
  }
  for (int64_t t = 0; t < threads && !st->failed; t++) {
    int64_t base = t / (S * N) * (S * N) + t % S, off = 0;
    re_val acc = vals[base];
    for (int64_t j = 1; j < N; j++) acc = re_atomic_apply(in, acc, vals[base + j * S], dt);
    st->cur = &st->threads[t];
    re_buf *rb = re_buf_of(st, g->buffer, s->loc);
    if (rb && (g->ndim == 0 || elem_offset(st, rb, g->ndim, g->min, s->loc, &off))) re_buf_set(rb, off, acc);
  }
  free(vals);
}

/* Whether a top-level statement of the kernel body is a thread allreduce
 * (per-thread code even when nothing else reads the thread index). */
static bool has_allreduce(const tl_stmt *body) {
  if (is_allreduce(body)) return true;
  for (int i = 0; body && body->kind == TL_STMT_SEQ && i < body->u.seq.n; i++)
    if (is_allreduce(body->u.seq.stmts[i])) return true;
  return false;
}

/* One side of a kernel's grid barriers (T.sync_grid(); docs/language.md "Grid barrier"): statements
 * list[lo..hi), after those of list[0..lo) that carried marks (the side gets them again). */
typedef struct re_side {
  tl_stmt *const *list;
  int lo, hi;
  const bool *carried; /* NULL: no barrier */
} re_side;

/* The carried statements before side x, then its own statements from list[lo..hi) on. */
static void exec_side(re_state *st, const re_side *x, int lo, int hi) {
  for (int j = 0; j < x->lo && lo == x->lo && x->carried && !st->failed; j++)
    if (x->carried[j]) exec(st, x->list[j]);
  for (int j = lo; j < hi && !st->failed; j++) exec(st, x->list[j]);
}

/* Side x of kernel s for every block of the grid. */
static void run_side(re_state *st, const tl_stmt *s, const int64_t grid[3], int64_t threads, const re_side *x) {
  int ng = s->u.kernel.ngrid;
  for (int64_t bz = 0; bz < grid[2] && !st->failed; bz++)
    for (int64_t by = 0; by < grid[1] && !st->failed; by++)
      for (int64_t bx = 0; bx < grid[0] && !st->failed; bx++) {
        int64_t b3[3] = {bx, by, bz};
        st->epoch++;
        for (int i = 0; i < 3; i++) {
          st->block[i] = b3[i];
          if (i < ng && s->u.kernel.block_vars[i]) {
            const tl_var *v = s->u.kernel.block_vars[i];
            int k = var_slot(st, v);
            if (k >= 0) st->genv[k].i = re_wrap(b3[i], v->dtype);
          }
        }
        for (int i = 0; i < st->nbufs; i++)
          if (st->bufs[i].b && st->bufs[i].b->scope != TL_SCOPE_GLOBAL) st->bufs[i].valid = false;
        if (!st->per_thread) {
          st->cur = &st->main;
          invalidate_private(st, &st->main);
          exec_side(st, x, x->lo, x->hi);
          continue;
        }
        for (int64_t t = 0; t < threads; t++) {
          re_thread *c = &st->threads[t];
          memcpy(c->env, st->genv, (size_t)st->nvars * sizeof *c->env);
          c->tid = t;
          invalidate_private(st, c);
        }
        int start = x->lo;
        for (int k = x->lo; k <= x->hi && !st->failed; k++) {
          if (k < x->hi && !is_sync(x->list[k]) && !is_allreduce(x->list[k])) continue;
          for (int64_t t = 0; t < threads && !st->failed; t++) {
            st->cur = &st->threads[t];
            exec_side(st, x, start, k);
          }
          if (k < x->hi && is_allreduce(x->list[k]) && !st->failed) run_allreduce(st, x->list[k], threads);
          start = k + 1;
        }
      }
}

static void run_kernel(re_state *st, const tl_stmt *s) {
  if (st->in_kernel) {
    re_error(st, s->loc, "T.Kernel inside T.Kernel");
    return;
  }
  int64_t grid[3] = {1, 1, 1};
  int ng = s->u.kernel.ngrid;
  if (ng < 1 || ng > 3) {
    re_error(st, s->loc, "T.Kernel needs 1 to 3 grid dimensions");
    return;
  }
  for (int i = 0; i < ng; i++) {
    grid[i] = re_eval_int(st, s->u.kernel.grid[i]);
    if (st->failed) return;
    if (grid[i] < 0) {
      re_error(st, s->u.kernel.grid[i]->loc, "grid dimension %d is negative (%lld)", i, (long long)grid[i]);
      return;
    }
  }
  int64_t threads = s->u.kernel.threads ? re_eval_int(st, s->u.kernel.threads) : 128;
  if (st->failed) return;
  if (threads <= 0) {
    re_error(st, s->loc, "T.Kernel: threads must be positive, got %lld", (long long)threads);
    return;
  }
  st->nthreads = threads;
  /* a fresh workspace per launch: at the first T.Kernel scope; the later ones of the prim_func (its launch
   * stages, lib/Lower/split_kernels.c) share the first one's */
  for (int i = 0; i < st->nbufs && st->kernels_run == 0; i++)
    if (st->bufs[i].workspace) st->bufs[i].valid = false;
  st->kernels_run++;
  st->per_thread = tl_stmt_uses_thread_index(s->u.kernel.body, NULL) || has_allreduce(s->u.kernel.body);
  st->kbody = s->u.kernel.body;
  st->tid_scopes = !st->per_thread && has_tid_scope(st->kbody, st->kbody, 0);
  st->ntid_lets = 0;
  if (st->per_thread || st->tid_scopes) {
    if (threads > RE_MAX_THREADS) {
      re_error(st, s->loc,
               "per-thread code with %lld threads: the reference evaluator runs up "
               "to %d",
               (long long)threads, RE_MAX_THREADS);
      return;
    }
    if (threads > st->nthreads_alloc) {
      re_thread *p = realloc(st->threads, (size_t)threads * sizeof *p);
      if (!p) {
        re_error(st, s->loc, "out of memory");
        return;
      }
      st->threads = p;
      for (int64_t t = st->nthreads_alloc; t < threads; t++) {
        memset(&p[t], 0, sizeof p[t]);
        st->nthreads_alloc = t + 1;
        if (!thread_ctx_init(st, &p[t])) {
          re_error(st, s->loc, "out of memory");
          return;
        }
      }
    }
  }
  /* The kernel body as a list of top-level statements: its sides (split at T.sync_grid()), each split at
   * barriers (T.sync_threads()) when per-thread */
  tl_stmt *const *list = NULL;
  int n = tl_kernel_top_stmts(s, &list);
  bool *carried = NULL;
  if (tl_kernel_has_sync_grid(s) &&
      (!(carried = calloc((size_t)n, sizeof *carried)) || !tl_sync_grid_carried(list, n, carried))) {
    free(carried);
    re_error(st, s->loc, "out of memory");
    return;
  }
  st->in_kernel = true;
  for (int i = 0, lo = 0; i <= n && !st->failed; i++) /* every block finishes a side before the next starts */
    if (i == n || tl_stmt_is_sync_grid(list[i])) {
      re_side side = {list, lo, i, carried};
      run_side(st, s, grid, threads, &side);
      lo = i + 1;
    }
  free(carried);
  st->cur = &st->main;
  st->in_kernel = false;
  st->per_thread = false;
}

/* ----------------------------------------------------------------- entry */
static bool bind_args(re_state *st, const tl_interp_arg *args, int nargs, const int64_t *dyn, int ndyn) {
  const tl_primfunc *f = st->f;
  if (nargs != f->nparams) {
    re_error(st, f->loc, "'%s' takes %d argument%s, got %d", f->name, f->nparams, f->nparams == 1 ? "" : "s", nargs);
    return false;
  }
  if (ndyn != f->ndynamic) {
    re_error(st, f->loc, "'%s' has %d dynamic dimension%s, got %d value%s", f->name, f->ndynamic,
             f->ndynamic == 1 ? "" : "s", ndyn, ndyn == 1 ? "" : "s");
    return false;
  }
  if (nargs > 0 && !args) {
    re_error(st, f->loc, "no arguments given");
    return false;
  }
  for (int k = 0; k < ndyn; k++) {
    const tl_var *v = f->dynamic[k];
    int s = var_slot(st, v);
    if (s >= 0) st->genv[s].i = re_wrap(dyn[k], v->dtype);
  }
  for (int i = 0; i < nargs; i++) {
    const tl_param *p = &f->params[i];
    const tl_interp_arg *a = &args[i];
    if (p->kind == TL_PARAM_SCALAR) {
      if (a->is_tensor) {
        re_error(st, p->var->loc, "argument %d ('%s') must be a scalar", i, p->var->name);
        return false;
      }
      int s = var_slot(st, p->var);
      if (s < 0) continue; /* unused */
      if (tl_dtype_is_float(p->var->dtype)) st->genv[s].f = re_round(a->f, p->var->dtype);
      else st->genv[s].i = re_wrap(a->i, p->var->dtype);
    }
  }
  for (int i = 0; i < nargs; i++) {
    const tl_param *p = &f->params[i];
    const tl_interp_arg *a = &args[i];
    if (p->kind != TL_PARAM_TENSOR) continue;
    const tl_buffer *b = p->buffer;
    if (!a->is_tensor) {
      re_error(st, b->loc, "argument %d ('%s') must be a tensor", i, b->name);
      return false;
    }
    if (a->ndim != b->ndim) {
      re_error(st, b->loc, "argument %d ('%s') has %d dimension%s, expected %d", i, b->name, a->ndim,
               a->ndim == 1 ? "" : "s", b->ndim);
      return false;
    }
    int s = buf_slot(st, b);
    re_buf tmp = {0}, *rb = s >= 0 ? &st->bufs[s] : &tmp;
    if (!buf_geometry(st, rb, b, b->loc)) return false;
    int per = 1;
    tl_dtype_storage(b->dtype, &per); /* int4: the caller's storage has half the last dim */
    for (int d = 0; d < b->ndim; d++) {
      int64_t want = d == b->ndim - 1 ? rb->shape[d] / per : rb->shape[d];
      if (want * (d == b->ndim - 1 ? per : 1) != rb->shape[d] || want != a->shape[d]) {
        re_error(st, b->loc, "argument %d ('%s'): dimension %d is %lld, expected %lld%s", i, b->name, d,
                 (long long)a->shape[d], (long long)want, per > 1 ? " (int4 stored two per byte)" : "");
        return false;
      }
    }
    if (rb->size < 0) {
      re_error(st, b->loc, "argument %d ('%s') is too large", i, b->name);
      return false;
    }
    if (rb->size > 0 && !a->data && !a->absent) {
      re_error(st, b->loc, "argument %d ('%s') has no data", i, b->name);
      return false;
    }
    rb->data = a->data;
    rb->cap = 0;
    rb->native = true;
    rb->valid = true;
  }
  return true;
}

bool tl_ref_eval(const tl_module *m, int func, const tl_interp_arg *args, int nargs, const int64_t *dyn, int ndyn,
                 tl_diag *d) {
  if (!m || !d) return false;
  if (func < 0 || func >= m->nfuncs || !m->funcs[func]) {
    tl_error(d, TL_LOC_NONE, "reference evaluator: no function %d in the module", func);
    return false;
  }
  re_state st = {0};
  st.m = m;
  st.f = m->funcs[func];
  st.d = d;
  const tl_primfunc *f = st.f;
  tl_map_init(&st.var_slot);
  tl_map_init(&st.buf_slot);
  bool ok = false;
  for (int i = 0; i < f->nparams; i++) {
    if (f->params[i].kind == TL_PARAM_TENSOR && !collect_slots(&st, f->params[i].buffer, NULL)) goto oom;
    if (f->params[i].kind == TL_PARAM_SCALAR && !add_var(&st, f->params[i].var)) goto oom;
  }
  for (int i = 0; i < f->ndynamic; i++)
    if (!add_var(&st, f->dynamic[i])) goto oom;
  if (!collect_slots(&st, NULL, f->body)) goto oom;
  st.genv = calloc((size_t)st.nvars + 1, sizeof *st.genv);
  st.bufs = calloc((size_t)st.nbufs + 1, sizeof *st.bufs);
  st.main.local = calloc((size_t)st.nbufs + 1, sizeof *st.main.local);
  if (!st.genv || !st.bufs || !st.main.local) goto oom;
  st.main.env = st.genv;
  st.cur = &st.main;
  if (bind_args(&st, args, nargs, dyn, ndyn)) exec(&st, f->body);
  ok = !st.failed;
  goto done;
oom:
  tl_error(d, f->loc, "reference evaluator: out of memory");
  ok = false;
done:
  if (st.bufs)
    for (int i = 0; i < st.nbufs; i++)
      if (st.bufs[i].cap) free(st.bufs[i].data);
  free(st.bufs);
  if (st.main.local) thread_ctx_free(&st, &st.main);
  for (int64_t t = 0; t < st.nthreads_alloc; t++) thread_ctx_free(&st, &st.threads[t]);
  free(st.threads);
  free(st.genv);
  free(st.scratch);
  tl_map_free(&st.var_slot);
  tl_map_free(&st.buf_slot);
  return ok;
}
