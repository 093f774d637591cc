/* SIMT executor: runs the SIMT IR (docs/simt-ir.md, the output of
 * tl_lower_module) for the whole grid on the CPU, with race and protocol
 * checks.
 *
 * Algorithm: blocks run one after another (blockIdx.x fastest); a block
 * runs as gangs, one per warp, under the warp scheduler (simt_sched.c), and
 * the threads of a gang (the lanes of a warp) run in lockstep.  Every expression evaluates to a vector over the gang's
 * threads (simt_internal.h) under an active mask: an `if` runs
 * its then-branch with mask & cond and its else-branch with mask & ~cond; a
 * loop whose bounds differ between threads iterates while any active thread
 * continues, each iteration with the mask of the threads still in the loop.
 * Values live on a scratch stack released statement by statement, so the
 * inner loop is array arithmetic with no allocation per thread.
 *
 * Arithmetic is what lib/NVPTX/codegen_math.c generates: f32 in float with no
 * contraction (T.fma is the only fused operation, fmaf); f16/bf16 operations
 * are rounded once to the dtype (the native half instructions and the
 * widen-to-f32-and-round-back sequences agree, since f32 has at least
 * 2p+2 bits for p = 11 and 8, PTX ISA §9.7.4); tf32 arithmetic is f32;
 * casts round to nearest even (tl_round_to_dtype), float → int truncates
 * saturating with NaN → 0 (cvt.rzi, PTX ISA §9.7.9.21); integers wrap.
 * Transcendental functions use the C library in float for f32 (libdevice
 * may differ in the last ulp; the approximate T.__exp & co. more).
 *
 * Memory: tensors are the caller's host arrays; shared buffers live in one
 * byte array per block at the offsets codegen gives them (smem_offset when
 * the planning pass set it, the others 16-byte aligned and consecutive in
 * allocation order after those); local buffers are per-thread byte arrays.  Bounds
 * are checked per dimension, vector accesses for their lanes*elem alignment
 * (capped at 16 bytes, as codegen aligns them).
 *
 * Checks (with check_races; simt_race.c): every shared byte records its
 * last writer (vector-clock unit, clock, thread, cp.async group) and each
 * gang's last read; T.sync_threads() and the other synchronisations order
 * them.  A read of a byte whose write does not happen before it, a write of
 * a byte whose reads do not, a read of bytes whose cp.async group has not
 * been waited for, a read of a byte nothing wrote, and a deadlock (a
 * barrier reached by only part of the block) are errors at the statement's
 * location.  Warp collectives live in simt_warp.c; named barriers,
 * mbarriers and bulk copies in simt_mbar.c. */
#include "IR/visit.h"
#include "Interp/simt_internal.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define SX_MAX_DEPTH 400
#define SX_CHUNK (1u << 20)
#define SX_SCRATCH_LIMIT ((size_t)1 << 31)

static bool exec(sx *x, const tl_stmt *s, const uint8_t *mask);
static bool ev(sx *x, const tl_expr *e, const uint8_t *mask, sx_val *out);

/* ============================================================ utilities */

bool sx_fail(sx *x, const char *fmt, ...) {
  if (x->failed) return false;
  x->failed = true;
  char msg[512];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  tl_loc loc = x->cur ? x->cur->loc : x->f ? x->f->loc : TL_LOC_NONE;
  tl_error(x->d, loc, "%s (block (%lld, %lld, %lld))", msg, (long long)x->block[0], (long long)x->block[1],
           (long long)x->block[2]);
  return false;
}

void *sx_scratch(sx *x, size_t bytes) {
  bytes = (bytes + 15) & ~(size_t)15;
  if (bytes == 0) bytes = 16;
  for (;;) {
    if (x->chunk >= x->nchunks) {
      sx_chunk *nc = realloc(x->chunks, sizeof *nc * (size_t)(x->nchunks + 1));
      if (!nc) break;
      x->chunks = nc;
      memset(&nc[x->nchunks], 0, sizeof *nc);
      x->nchunks++;
    }
    sx_chunk *c = &x->chunks[x->chunk];
    if (c->data && c->cap - c->used >= bytes) {
      void *p = c->data + c->used;
      c->used += bytes;
      memset(p, 0, bytes);
      return p;
    }
    if (c->data && c->used > 0) { /* full: move on to the next chunk */
      x->chunk++;
      if (x->chunk < x->nchunks) x->chunks[x->chunk].used = 0;
      continue;
    }
    /* an unused chunk that is missing or too small: (re)allocate it */
    free(c->data);
    x->scratch_total -= c->cap;
    c->data = NULL;
    c->cap = c->used = 0;
    size_t cap = bytes > SX_CHUNK ? bytes : SX_CHUNK;
    if (x->scratch_total + cap > SX_SCRATCH_LIMIT) break;
    c->data = malloc(cap);
    if (!c->data) break;
    c->cap = cap;
    x->scratch_total += cap;
  }
  sx_fail(x, "out of memory in the SIMT executor");
  return NULL;
}

static sx_mark mark(sx *x) {
  sx_mark k = {x->chunk, x->chunk < x->nchunks ? x->chunks[x->chunk].used : 0};
  return k;
}
static void release(sx *x, sx_mark k) {
  x->chunk = k.chunk;
  if (k.chunk < x->nchunks) x->chunks[k.chunk].used = k.used;
}

static bool alloc_val(sx *x, sx_val *out, tl_dtype t) {
  out->t = t;
  int lanes = t.lanes ? t.lanes : 1;
  out->v = sx_scratch(x, sizeof(sx_el) * (size_t)x->T * (size_t)lanes);
  return out->v != NULL;
}

/* Wraps v to integer dtype t (two's complement; bool → 0/1). */
static int64_t wrap(tl_dtype t, int64_t v) {
  if (t.code == TL_TYPE_BOOL) return v != 0;
  int bits = t.bits;
  if (bits >= 64 || bits <= 0) return v;
  uint64_t mask = (UINT64_C(1) << bits) - 1;
  uint64_t u = (uint64_t)v & mask;
  if (t.code == TL_TYPE_INT && ((u >> (bits - 1)) & 1)) u |= ~mask;
  return (int64_t)u;
}

/* Rounds a float value to float dtype t (f64 exact; tf32 through f32). */
static double round_to(double v, tl_dtype t);
double sx_round_to(double v, tl_dtype t) { return round_to(v, t); }
int64_t sx_wrap(tl_dtype t, int64_t v) { return wrap(t, v); }
static double round_to(double v, tl_dtype t) {
  if (is_f64(t)) return v;
  if (t.code == TL_TYPE_FLOAT && t.bits == 32) return (double)(float)v;
  if (t.code == TL_TYPE_TFLOAT) return tl_round_to_dtype((double)(float)v, t);
  return tl_round_to_dtype(v, t);
}

/* float → int truncating and saturating, NaN → 0 (cvt.rzi.sat). */
static int64_t sat_trunc(double f, tl_dtype to) {
  if (isnan(f)) return 0;
  double t = trunc(f);
  int bits = to.bits > 64 ? 64 : to.bits;
  if (is_uint(to)) {
    if (t <= 0) return 0;
    if (t >= ldexp(1.0, bits)) return bits >= 64 ? -1 : (int64_t)((UINT64_C(1) << bits) - 1);
    return (int64_t)(uint64_t)t;
  }
  double lo = -ldexp(1.0, bits - 1), hi = ldexp(1.0, bits - 1);
  if (t <= lo) return bits >= 64 ? INT64_MIN : -(INT64_C(1) << (bits - 1));
  if (t >= hi) return bits >= 64 ? INT64_MAX : (INT64_C(1) << (bits - 1)) - 1;
  return (int64_t)t;
}

/* ---------------------------------------------------- element encodings */
static uint16_t f16_bits(double v) {
  if (isnan(v)) return 0x7E00;
  v = tl_round_to_dtype(v, TL_FLOAT16);
  uint16_t s = signbit(v) ? 0x8000 : 0;
  double a = fabs(v);
  if (isinf(a)) return s | 0x7C00;
  if (a == 0) return s;
  if (a < ldexp(1.0, -14)) return (uint16_t)(s | (uint16_t)lrint(a * 16777216.0));
  int e;
  double fr = frexp(a, &e); /* a = fr * 2^e, fr in [0.5, 1) */
  int mant = (int)lrint((fr * 2.0 - 1.0) * 1024.0), ex = e - 1 + 15;
  if (mant == 1024) {
    mant = 0;
    ex++;
  }
  if (ex >= 31) return s | 0x7C00;
  return (uint16_t)(s | (ex << 10) | mant);
}
static double f16_value(uint16_t h) {
  int e = (h >> 10) & 31, m = h & 1023;
  double v = e == 0 ? ldexp(m, -24) : e == 31 ? (m ? NAN : INFINITY) : ldexp(m + 1024, e - 25);
  return (h & 0x8000) ? -v : v;
}
static uint16_t bf16_bits(double v) {
  if (isnan(v)) return 0x7FC0;
  float f = (float)tl_round_to_dtype(v, TL_DT(TL_TYPE_BFLOAT, 16));
  uint32_t u;
  memcpy(&u, &f, 4);
  return (uint16_t)(u >> 16);
}
static double bf16_value(uint16_t h) {
  uint32_t u = (uint32_t)h << 16;
  float f;
  memcpy(&f, &u, 4);
  return f;
}

sx_el sx_el_load(tl_dtype et, const uint8_t *p) {
  sx_el r = {0};
  switch (et.code) {
  case TL_TYPE_FLOAT:
    if (et.bits == 16) {
      uint16_t h;
      memcpy(&h, p, 2);
      r.f = f16_value(h);
    } else if (et.bits == 32) {
      float f;
      memcpy(&f, p, 4);
      r.f = f;
    } else {
      double d;
      memcpy(&d, p, 8);
      r.f = d;
    }
    return r;
  case TL_TYPE_TFLOAT: {
    float f;
    memcpy(&f, p, 4);
    r.f = f;
    return r;
  }
  case TL_TYPE_BFLOAT: {
    uint16_t h;
    memcpy(&h, p, 2);
    r.f = bf16_value(h);
    return r;
  }
  case TL_TYPE_BOOL: r.i = p[0] != 0; return r;
  case TL_TYPE_FLOAT8_E4M3:
  case TL_TYPE_FLOAT8_E5M2: r.f = tl_fp8_decode(p[0], et); return r;
  default: {
    int nb = tl_dtype_bytes(et);
    uint64_t u = 0;
    memcpy(&u, p, (size_t)(nb > 8 ? 8 : nb < 1 ? 1 : nb)); /* little-endian host */
    r.i = wrap(et, (int64_t)u);
    return r;
  }
  }
}

void sx_el_store(tl_dtype et, uint8_t *p, sx_el v) {
  switch (et.code) {
  case TL_TYPE_FLOAT:
    if (et.bits == 16) {
      uint16_t h = f16_bits(v.f);
      memcpy(p, &h, 2);
    } else if (et.bits == 32) {
      float f = (float)v.f;
      memcpy(p, &f, 4);
    } else memcpy(p, &v.f, 8);
    return;
  case TL_TYPE_TFLOAT: {
    float f = (float)v.f;
    memcpy(p, &f, 4);
    return;
  }
  case TL_TYPE_BFLOAT: {
    uint16_t h = bf16_bits(v.f);
    memcpy(p, &h, 2);
    return;
  }
  case TL_TYPE_BOOL: p[0] = v.i != 0; return;
  case TL_TYPE_FLOAT8_E4M3:
  case TL_TYPE_FLOAT8_E5M2: p[0] = tl_fp8_encode(v.f, et); return;
  default: {
    int nb = tl_dtype_bytes(et);
    uint64_t u = (uint64_t)v.i;
    memcpy(p, &u, (size_t)(nb > 8 ? 8 : nb < 1 ? 1 : nb));
    return;
  }
  }
}

static int elem_bytes(tl_dtype t) {
  int b = tl_dtype_bytes(scalar_of(t));
  return b < 1 ? 1 : b;
}

/* ========================================================== conversions */
/* One scalar from dtype `from` to dtype `to` (both scalar), as codegen's cg_convert(). */
static sx_el cvt_el(sx_el v, tl_dtype from, tl_dtype to) {
  sx_el r = {0};
  bool ff = is_fl(from), tf = is_fl(to);
  if (is_bool(to)) {
    r.i = ff ? (v.f != 0.0) : (v.i != 0);
    return r;
  }
  if (!tf) {
    r.i = ff ? sat_trunc(v.f, to) : wrap(to, v.i);
    return r;
  }
  if (!ff) {
    bool uns = is_uint(from) || is_bool(from);
    if (to.code == TL_TYPE_FLOAT && to.bits == 32) {
      r.f = uns ? (double)(float)(uint64_t)v.i : (double)(float)v.i;
    } else if (to.code == TL_TYPE_TFLOAT) {
      float f = uns ? (float)(uint64_t)v.i : (float)v.i;
      r.f = tl_round_to_dtype(f, to);
    } else {
      double d = uns ? (double)(uint64_t)v.i : (double)v.i;
      r.f = round_to(d, to);
    }
    return r;
  }
  r.f = round_to(v.f, to);
  return r;
}

/* v converted to dtype `to` (scalar → vector splats).  May share v's storage. */
static bool cv(sx *x, const sx_val *v, tl_dtype to, sx_val *out) {
  tl_dtype from = v->t;
  if (tl_dtype_eq(from, to)) {
    *out = *v;
    return true;
  }
  if (from.code == TL_TYPE_HANDLE || to.code == TL_TYPE_HANDLE || to.code == TL_TYPE_VOID || from.code == TL_TYPE_VOID)
    return sx_fail(x, "cannot convert %s to %s", tl_dtype_name(from), tl_dtype_name(to));
  int fl = lanes_of(from), tlanes = lanes_of(to);
  if (fl != 1 && fl != tlanes)
    return sx_fail(x, "cannot convert %s to %s (lane counts differ)", tl_dtype_name(from), tl_dtype_name(to));
  if (!alloc_val(x, out, to)) return false;
  tl_dtype fs = scalar_of(from), ts = scalar_of(to);
  bool same = tl_dtype_eq(fs, ts);
  for (int t = 0; t < x->T; t++)
    for (int l = 0; l < tlanes; l++) {
      sx_el e = v->v[(size_t)t * fl + (fl == 1 ? 0 : l)];
      out->v[(size_t)t * tlanes + l] = same ? e : cvt_el(e, fs, ts);
    }
  return true;
}

static bool ev_as(sx *x, const tl_expr *e, tl_dtype t, const uint8_t *mask, sx_val *out) {
  sx_val v;
  if (!ev(x, e, mask, &v)) return false;
  return cv(x, &v, t, out);
}
bool sx_eval_as(sx *x, const tl_expr *e, tl_dtype t, const uint8_t *mask, sx_val *out) {
  return ev_as(x, e, t, mask, out);
}
bool sx_alloc_val(sx *x, sx_val *out, tl_dtype t) { return alloc_val(x, out, t); }
bool sx_convert(sx *x, const sx_val *v, tl_dtype to, sx_val *out) { return cv(x, v, to, out); }
bool sx_eval(sx *x, const tl_expr *e, const uint8_t *mask, sx_val *out) { return ev(x, e, mask, out); }

/* Value as bool (lanes kept). */
bool sx_to_cond(sx *x, const sx_val *v, sx_val *out) { return cv(x, v, with_lanes(TL_BOOL, lanes_of(v->t)), out); }

/* ========================================================== arithmetic */
/* Float binary operation on scalar float dtype t (values exact in t). */
/* Integer floor division / modulo (TIR semantics) on wrapped values. */
static int64_t int_floordivmod(int64_t a, int64_t b, bool uns, bool mod, tl_dtype t) {
  if (uns) {
    uint64_t ua = (uint64_t)a, ub = (uint64_t)b;
    return wrap(t, (int64_t)(mod ? ua % ub : ua / ub));
  }
  if (b == -1) return mod ? 0 : wrap(t, (int64_t)(0 - (uint64_t)a));
  int64_t q = a / b, r = a % b;
  bool adj = r != 0 && ((r ^ b) < 0);
  if (mod) return wrap(t, adj ? r + b : r);
  return wrap(t, adj ? q - 1 : q);
}

/* Integer binary op on dtype t; *err set for division by zero. */
static int64_t iop(tl_binop op, int64_t a, int64_t b, tl_dtype t, bool *err) {
  bool uns = is_uint(t) || is_bool(t);
  uint64_t ua = (uint64_t)a, ub = (uint64_t)b;
  int bits = is_bool(t) ? 1 : t.bits;
  switch (op) {
  case TL_OP_ADD: return wrap(t, (int64_t)(ua + ub));
  case TL_OP_SUB: return wrap(t, (int64_t)(ua - ub));
  case TL_OP_MUL: return wrap(t, (int64_t)(ua * ub));
  case TL_OP_DIV:
    if (b == 0) {
      *err = true;
      return 0;
    }
    if (uns) return wrap(t, (int64_t)(ua / ub));
    if (b == -1) return wrap(t, (int64_t)(0 - ua));
    return wrap(t, a / b);
  case TL_OP_FLOORDIV:
  case TL_OP_FLOORMOD:
    if (b == 0) {
      *err = true;
      return 0;
    }
    return int_floordivmod(a, b, uns, op == TL_OP_FLOORMOD, t);
  case TL_OP_MIN: return uns ? (ua < ub ? a : b) : (a < b ? a : b);
  case TL_OP_MAX: return uns ? (ua > ub ? a : b) : (a > b ? a : b);
  case TL_OP_BITAND: return wrap(t, a & b);
  case TL_OP_BITOR: return wrap(t, a | b);
  case TL_OP_BITXOR: return wrap(t, a ^ b);
  case TL_OP_SHL:
    if (ub >= (uint64_t)bits) return 0;
    return wrap(t, (int64_t)(ua << ub));
  case TL_OP_SHR: {
    if (uns) {
      uint64_t m = bits >= 64 ? ~(uint64_t)0 : ((UINT64_C(1) << bits) - 1);
      if (ub >= (uint64_t)bits) return 0;
      return wrap(t, (int64_t)((ua & m) >> ub));
    }
    if (ub >= (uint64_t)bits) return a < 0 ? wrap(t, -1) : 0;
    return wrap(t, a < 0 ? (int64_t) ~(~ua >> ub) : (int64_t)(ua >> ub));
  }
  case TL_OP_POW: {
    double r = pow(uns ? (double)ua : (double)a, uns ? (double)ub : (double)b);
    return sat_trunc(r, t);
  }
  default: return 0;
  }
}

/* out = a op b elementwise on dtype t (a, b already of dtype t). */
bool sx_binop_vals(sx *x, tl_binop op, const sx_val *a, const sx_val *b, tl_dtype t, const uint8_t *mask, sx_val *out) {
  if (!alloc_val(x, out, t)) return false;
  int L = lanes_of(t);
  size_t n = (size_t)x->T * (size_t)L;
  tl_dtype st = scalar_of(t);
  if (is_fl(t)) {
    if (op >= TL_OP_EQ || op == TL_OP_BITAND || op == TL_OP_BITOR || op == TL_OP_BITXOR || op == TL_OP_SHL ||
        op == TL_OP_SHR)
      return sx_fail(x, "operator is not defined on %s", tl_dtype_name(t));
    for (size_t k = 0; k < n; k++) out->v[k].f = tl_float_binop(op, a->v[k].f, b->v[k].f, st);
    return true;
  }
  if (t.code == TL_TYPE_HANDLE) return sx_fail(x, "arithmetic on handles is not supported");
  if (is_bool(t) &&
      !(op == TL_OP_BITAND || op == TL_OP_BITOR || op == TL_OP_BITXOR || op == TL_OP_MIN || op == TL_OP_MAX))
    return sx_fail(x, "arithmetic operator on bool values");
  for (size_t k = 0; k < n; k++) {
    bool err = false;
    out->v[k].i = iop(op, a->v[k].i, b->v[k].i, st, &err);
    if (err && mask[k / (size_t)L])
      return sx_fail(x, "integer division by zero in thread %d", x->tbase + (int)(k / (size_t)L));
  }
  return true;
}

static bool eval_binary(sx *x, const tl_expr *e, const uint8_t *mask, sx_val *out) {
  tl_binop op = e->u.bin.op;
  const tl_expr *ea = e->u.bin.a, *eb = e->u.bin.b;
  sx_val a, b;
  if (op == TL_OP_AND || op == TL_OP_OR) {
    tl_dtype bt = with_lanes(TL_BOOL, lanes_of(e->dtype));
    sx_val a0, b0, a1, b1;
    if (!ev(x, ea, mask, &a0) || !sx_to_cond(x, &a0, &a1) || !cv(x, &a1, bt, &a)) return false;
    if (!ev(x, eb, mask, &b0) || !sx_to_cond(x, &b0, &b1) || !cv(x, &b1, bt, &b)) return false;
    if (!alloc_val(x, out, bt)) return false;
    size_t n = (size_t)x->T * lanes_of(bt);
    for (size_t k = 0; k < n; k++) out->v[k].i = op == TL_OP_AND ? (a.v[k].i && b.v[k].i) : (a.v[k].i || b.v[k].i);
    return true;
  }
  bool cmp = op >= TL_OP_EQ && op <= TL_OP_GE;
  tl_dtype t = cmp ? tl_dtype_compare_common(ea->dtype, eb->dtype) : e->dtype;
  if (!ev_as(x, ea, t, mask, &a) || !ev_as(x, eb, t, mask, &b)) return false;
  if (!cmp) return sx_binop_vals(x, op, &a, &b, t, mask, out);
  if (!alloc_val(x, out, with_lanes(TL_BOOL, lanes_of(t)))) return false;
  size_t n = (size_t)x->T * lanes_of(t);
  bool uns = is_uint(t) || is_bool(t);
  if (is_fl(t))
    for (size_t k = 0; k < n; k++) out->v[k].i = tl_float_compare(op, a.v[k].f, b.v[k].f);
  else
    for (size_t k = 0; k < n; k++) out->v[k].i = tl_int_compare(op, a.v[k].i, b.v[k].i, uns);
  return true;
}

static bool eval_unary(sx *x, const tl_expr *e, const uint8_t *mask, sx_val *out) {
  sx_val v;
  tl_dtype t = e->dtype;
  size_t n = (size_t)x->T * lanes_of(t);
  switch (e->u.un.op) {
  case TL_OP_NEG:
    if (!ev_as(x, e->u.un.a, t, mask, &v) || !alloc_val(x, out, t)) return false;
    for (size_t k = 0; k < n; k++) {
      if (is_fl(t)) out->v[k].f = -v.v[k].f;
      else out->v[k].i = wrap(t, (int64_t)(0 - (uint64_t)v.v[k].i));
    }
    return true;
  case TL_OP_NOT: {
    sx_val c0, c;
    if (!ev(x, e->u.un.a, mask, &c0) || !sx_to_cond(x, &c0, &c)) return false;
    if (!alloc_val(x, out, c.t)) return false;
    n = (size_t)x->T * lanes_of(c.t);
    for (size_t k = 0; k < n; k++) out->v[k].i = !c.v[k].i;
    return true;
  }
  case TL_OP_BITNOT:
    if (is_fl(t)) return sx_fail(x, "~ on %s", tl_dtype_name(t));
    if (!ev_as(x, e->u.un.a, t, mask, &v) || !alloc_val(x, out, t)) return false;
    for (size_t k = 0; k < n; k++) out->v[k].i = wrap(t, ~v.v[k].i);
    return true;
  }
  return sx_fail(x, "unknown unary operator");
}

/* ======================================================== expressions */
/* A literal of float dtype t (codegen builds an LLVM constant of the lane
 * type: tf32 literals are f32 constants). */
static double lit_round(double v, tl_dtype t) { return t.code == TL_TYPE_TFLOAT ? (double)(float)v : round_to(v, t); }

static bool ev_inner(sx *x, const tl_expr *e, const uint8_t *mask, sx_val *out) {
  tl_dtype t = e->dtype;
  int L = lanes_of(t);
  size_t cnt = (size_t)x->T * (size_t)L;
  switch (e->kind) {
  case TL_EXPR_INT:
    if (!alloc_val(x, out, t)) return false;
    for (size_t k = 0; k < cnt; k++) {
      if (is_fl(t)) out->v[k].f = lit_round((double)e->u.ival, scalar_of(t));
      else out->v[k].i = wrap(t, e->u.ival);
    }
    return true;
  case TL_EXPR_FLOAT:
    if (!is_fl(t)) return sx_fail(x, "float literal of dtype %s", tl_dtype_name(t));
    if (!alloc_val(x, out, t)) return false;
    for (size_t k = 0; k < cnt; k++) out->v[k].f = lit_round(e->u.fval, scalar_of(t));
    return true;
  case TL_EXPR_STRING: return sx_fail(x, "a string is not a value");
  case TL_EXPR_VAR: {
    sx_val *v = tl_map_get(&x->env, e->u.var, NULL);
    if (!v && x->penv) v = tl_map_get(x->penv, e->u.var, NULL);
    if (!v) return sx_fail(x, "variable '%s' is used outside its scope", e->u.var->name);
    return cv(x, v, t, out);
  }
  case TL_EXPR_BINARY: return eval_binary(x, e, mask, out);
  case TL_EXPR_UNARY: return eval_unary(x, e, mask, out);
  case TL_EXPR_SELECT: return sx_eval_select(x, e->u.sel.cond, e->u.sel.t, e->u.sel.f, t, mask, out);
  case TL_EXPR_CAST: return ev_as(x, e->u.cast.value, t, mask, out);
  case TL_EXPR_LOAD: {
    sx_val v;
    if (!sx_eval_load(x, e, mask, &v)) return false;
    return cv(x, &v, t, out);
  }
  case TL_EXPR_CALL:
    if (e->u.call.op < 0 || e->u.call.op >= tl_num_intrinsics)
      return sx_fail(x, "internal error: bad intrinsic index %d", e->u.call.op);
    if (sx_is_async_op(e->u.call.op))
      return sx_fail(x, "T.%s is a statement, not a value", tl_intrinsics[e->u.call.op].name);
    return sx_eval_call(x, e, mask, out);
  case TL_EXPR_BUFFER: return sx_fail(x, "buffer '%s' used as a value", e->u.buffer->name);
  case TL_EXPR_RAMP: {
    tl_dtype st = scalar_of(t);
    sx_val b, s;
    if (!ev_as(x, e->u.ramp.base, st, mask, &b) || !ev_as(x, e->u.ramp.stride, st, mask, &s)) return false;
    if (!alloc_val(x, out, t)) return false;
    for (int th = 0; th < x->T; th++)
      for (int l = 0; l < L; l++) {
        sx_el *o = &out->v[(size_t)th * L + l];
        if (is_fl(st)) {
          o->f = tl_float_binop(TL_OP_ADD, b.v[th].f, tl_float_binop(TL_OP_MUL, s.v[th].f, (double)l, st), st);
        } else {
          o->i = wrap(st, (int64_t)((uint64_t)b.v[th].i + (uint64_t)s.v[th].i * (uint64_t)l));
        }
      }
    return true;
  }
  case TL_EXPR_BROADCAST: {
    sx_val v;
    if (!ev_as(x, e->u.bcast.value, scalar_of(t), mask, &v)) return false;
    return cv(x, &v, t, out);
  }
  }
  return sx_fail(x, "internal error: unknown expression kind %d", (int)e->kind);
}

static bool ev(sx *x, const tl_expr *e, const uint8_t *mask, sx_val *out) {
  if (!e) return sx_fail(x, "internal error: missing expression");
  if (x->failed) return false;
  if (x->depth >= SX_MAX_DEPTH) return sx_fail(x, "IR nested more than %d levels deep", SX_MAX_DEPTH);
  x->depth++;
  bool ok = ev_inner(x, e, mask, out);
  x->depth--;
  return ok && !x->failed;
}

/* ========================================================= statements */
static int count_active(const sx *x, const uint8_t *mask) {
  int c = 0;
  for (int t = 0; t < x->T; t++) c += mask[t] != 0;
  return c;
}

bool sx_full_warps(sx *x, const uint8_t *mask, const char *what) {
  for (int w = 0; w < x->T; w += 32) {
    int act = 0, exist = x->T - w < 32 ? x->T - w : 32;
    for (int l = 0; l < exist; l++) act += mask[w + l] != 0;
    if (act == 0) continue;
    if (act != 32)
      return sx_fail(x, "%s executed by a partial warp: %d of 32 lanes of warp %d are active", what, act,
                     (x->tbase + w) / 32);
  }
  return true;
}

static bool bind(sx *x, const tl_var *v, const sx_val *val) {
  sx_val *slot = sx_scratch(x, sizeof *slot);
  if (!slot) return false;
  *slot = *val;
  if (!tl_map_put(&x->env, v, slot)) return sx_fail(x, "out of memory in the SIMT executor");
  return true;
}

/* T.sync_threads(): barrier 0 over the block (simt_mbar.c under the warp
 * scheduler; in lockstep every thread must be active). */
static bool exec_barrier(sx *x, const uint8_t *mask) {
  if (x->in_gang) return sx_bar(x, 0, x->k->T, true, mask);
  int act = count_active(x, mask);
  if (act != x->T)
    return sx_fail(x, "barrier reached by %d of %d threads (T.sync_threads() under a divergent branch)", act, x->T);
  sx_release(x);
  return true;
}

static bool exec_for(sx *x, const tl_stmt *s, const uint8_t *mask) {
  tl_loop_kind kind = s->u.loop.kind;
  if (kind == TL_LOOP_PARALLEL || kind == TL_LOOP_PIPELINED)
    return sx_fail(x, "%s loop reached the SIMT executor (it must be lowered first)",
                   kind == TL_LOOP_PARALLEL ? "T.Parallel" : "T.Pipelined");
  if (s->u.loop.nvars != 1) return sx_fail(x, "internal error: loop with %d variables", s->u.loop.nvars);
  const tl_var *v = s->u.loop.vars[0];
  tl_dtype vt = v->dtype;
  if (!tl_dtype_is_int(vt) || lanes_of(vt) != 1)
    return sx_fail(x, "loop variable '%s' must be a scalar integer", v->name);
  sx_val lo, ext, step;
  if (s->u.loop.mins && s->u.loop.mins[0]) {
    if (!ev_as(x, s->u.loop.mins[0], vt, mask, &lo)) return false;
  } else if (!alloc_val(x, &lo, vt)) {
    return false;
  }
  if (!ev_as(x, s->u.loop.extents[0], vt, mask, &ext)) return false;
  bool uns = is_uint(vt);
  uint8_t *im = sx_scratch(x, (size_t)x->T);
  sx_val cur;
  if (!im || !alloc_val(x, &cur, vt)) return false;
  if (kind == TL_LOOP_THREAD) {
    bool any = false;
    for (int t = 0; t < x->T; t++) {
      im[t] = mask[t] && (uint64_t)t < (uint64_t)ext.v[t].i;
      cur.v[t].i = wrap(vt, lo.v[t].i + t);
      any |= im[t];
    }
    if (!any) return true;
    return bind(x, v, &cur) && exec(x, s->u.loop.body, im);
  }
  int64_t stepc = 1;
  bool const_step = !s->u.loop.step || tl_expr_is_const_int(s->u.loop.step, &stepc);
  if (s->u.loop.step && !ev_as(x, s->u.loop.step, vt, mask, &step)) return false;
  if (const_step && stepc == 0) return sx_fail(x, "loop step is zero");
  bool down = const_step && stepc < 0;
  int64_t *end = sx_scratch(x, sizeof(int64_t) * (size_t)x->T);
  if (!end) return false;
  for (int t = 0; t < x->T; t++) {
    if (mask[t] && s->u.loop.step && step.v[t].i == 0)
      return sx_fail(x, "loop step is zero in thread %d", x->tbase + t);
    cur.v[t].i = lo.v[t].i;
    end[t] = wrap(vt, (int64_t)((uint64_t)lo.v[t].i + (uint64_t)ext.v[t].i));
  }
  for (;;) {
    bool any = false;
    for (int t = 0; t < x->T; t++) {
      bool in = false;
      if (mask[t]) in = tl_int_compare(down ? TL_OP_GT : TL_OP_LT, cur.v[t].i, end[t], uns);
      im[t] = in;
      any |= in;
    }
    if (!any) break;
    sx_mark mk = mark(x);
    sx_val iv;
    if (!alloc_val(x, &iv, vt)) return false;
    memcpy(iv.v, cur.v, sizeof(sx_el) * (size_t)x->T);
    if (!bind(x, v, &iv) || !exec(x, s->u.loop.body, im)) return false;
    release(x, mk);
    for (int t = 0; t < x->T; t++)
      if (im[t]) cur.v[t].i = wrap(vt, (int64_t)((uint64_t)cur.v[t].i + (uint64_t)(s->u.loop.step ? step.v[t].i : 1)));
  }
  tl_map_remove(&x->env, v);
  return true;
}

/* `while cond: body` per thread: a thread stays in the loop while its
 * condition holds; the others of the warp wait masked off (a condition that
 * differs between threads reaches the barrier checks as divergence).  A
 * loop still running after TL_INTERP_MAX_WHILE_ITERS iterations is reported
 * (it may never end). */
static bool exec_while(sx *x, const tl_stmt *s, const uint8_t *mask) {
  uint8_t *im = sx_scratch(x, (size_t)x->T);
  if (!im) return false;
  memcpy(im, mask, (size_t)x->T);
  for (int64_t n = 0;; n++) {
    sx_mark mk = mark(x);
    sx_val c0, c;
    if (!ev(x, s->u.whiles.cond, im, &c0) || !sx_to_cond(x, &c0, &c)) return false;
    if (lanes_of(c.t) != 1) return sx_fail(x, "while condition must be a scalar");
    bool any = false;
    for (int t = 0; t < x->T; t++) {
      im[t] = im[t] && c.v[t].i;
      any |= im[t];
    }
    release(x, mk);
    if (!any) return true;
    if (n == TL_INTERP_MAX_WHILE_ITERS)
      return sx_fail(x,
                     "this 'while' loop ran %lld iterations and its condition still holds (the CPU executor's "
                     "bound): it may never end",
                     (long long)n);
    if (!exec(x, s->u.whiles.body, im)) return false;
    release(x, mk);
  }
}

static bool const_shape(sx *x, const tl_buffer *b, const uint8_t *mask, sx_buf *sb) {
  if (b->ndim > SX_MAX_DIMS || b->ndim < 0)
    return sx_fail(x, "buffer '%s' has %d dimensions (at most %d)", b->name, b->ndim, SX_MAX_DIMS);
  sb->ndim = b->ndim;
  int64_t n = 1;
  for (int i = 0; i < b->ndim; i++) {
    int64_t d;
    if (!tl_expr_is_const_int(b->shape[i], &d)) {
      sx_val v;
      if (!ev_as(x, b->shape[i], TL_INT64, mask, &v)) return false;
      d = v.v[0].i;
    }
    if (d < 0 || (d && n > ((int64_t)1 << 40) / d))
      return sx_fail(x, "buffer '%s' has a bad or too large shape", b->name);
    sb->shape[i] = d;
    n *= d;
  }
  int64_t st = 1;
  for (int i = b->ndim - 1; i >= 0; i--) {
    sb->stride[i] = st;
    st *= sb->shape[i];
  }
  sb->elems = n;
  return true;
}

/* A global buffer allocated in the kernel: a kernel workspace (stream-K's
 * slots and tile counters, lib/Lower/Hopper/stream_k.c; docs/simt-ir.md
 * "Stream-K"), one zeroed allocation per launch that every block shares
 * (the GPU runtime keeps one per stream, which the kernel returns to zero).
 * It is no tensor parameter, so the global race checker (simt_grace.c)
 * does not track it: the blocks hand data through it with fences and an
 * atomic counter, which that checker does not model. */
static bool exec_workspace(sx *x, const tl_buffer *b, const uint8_t *mask) {
  if (tl_map_get(&x->gbufs, b, NULL)) return true;
  sx_buf *sb = tl_arena_alloc(&x->arena, sizeof *sb);
  if (!sb) return sx_fail(x, "out of memory in the SIMT executor");
  memset(sb, 0, sizeof *sb);
  sb->b = b;
  sb->space = SX_GLOBAL;
  sb->et = scalar_of(b->dtype);
  sb->eb = elem_bytes(b->dtype);
  if (lanes_of(b->dtype) != 1) return sx_fail(x, "workspace '%s' has a vector dtype", b->name);
  if (!const_shape(x, b, mask, sb)) return false;
  if (sb->elems * sb->eb > ((int64_t)1 << 32)) return sx_fail(x, "workspace '%s' is too large", b->name);
  int64_t bytes = sb->elems * sb->eb;
  tl_simt_workspaces *w = x->ws;
  for (int i = 0; w && i < w->n && !sb->data; i++) /* the storage an earlier launch stage made */
    if (w->slot[i].bytes == bytes && w->slot[i].name && b->name && !strcmp(w->slot[i].name, b->name))
      sb->data = w->slot[i].data;
  if (!sb->data && w && w->n < TL_SIMT_MAX_WORKSPACES) {
    if (!(w->slot[w->n].data = calloc(1, (size_t)bytes + 16))) return sx_fail(x, "out of memory in the SIMT executor");
    w->slot[w->n].name = b->name;
    w->slot[w->n].bytes = bytes;
    sb->data = w->slot[w->n++].data;
  }
  if (!sb->data) {
    sb->data = tl_arena_alloc(&x->arena, (size_t)bytes + 16);
    if (!sb->data) return sx_fail(x, "out of memory in the SIMT executor");
    memset(sb->data, 0, (size_t)bytes);
  }
  if (!tl_map_put(&x->gbufs, b, sb)) return sx_fail(x, "out of memory in the SIMT executor");
  return true;
}

void tl_simt_workspaces_free(tl_simt_workspaces *w) {
  for (int i = 0; w && i < w->n; i++) free(w->slot[i].data);
  if (w) w->n = 0;
}

static bool exec_alloc(sx *x, const tl_stmt *s, const uint8_t *mask) {
  const tl_buffer *b = s->u.alloc.buffer;
  if (tl_buffer_is_view(b)) return sx_exec_view(x, b, mask);
  if (b->scope == TL_SCOPE_GLOBAL) return exec_workspace(x, b, mask);
  sx_buf *sb = tl_map_get(&x->k->bufs, b, NULL);
  if (!sb) {
    sb = tl_arena_alloc(&x->k->arena, sizeof *sb);
    if (!sb) return sx_fail(x, "out of memory in the SIMT executor");
    sb->b = b;
    sb->et = scalar_of(b->dtype);
    if (lanes_of(b->dtype) != 1)
      return sx_fail(x, "buffer '%s' of vector dtype %s is not supported", b->name, tl_dtype_name(b->dtype));
    sb->eb = elem_bytes(b->dtype);
    if (!const_shape(x, b, mask, sb)) return false;
    switch (b->scope) {
    case TL_SCOPE_LOCAL:
    case TL_SCOPE_LOCAL_VAR:
    case TL_SCOPE_FRAGMENT: {
      sb->space = SX_LOCAL;
      int64_t elems = sb->elems ? sb->elems : 1;
      sb->pitch = (elems * sb->eb + 15) & ~(int64_t)15;
      if (sb->pitch > (1 << 20))
        return sx_fail(x, "local buffer '%s' needs %lld bytes per thread", b->name, (long long)sb->pitch);
      sb->data = tl_arena_alloc(&x->k->arena, (size_t)(sb->pitch * x->k->T));
      if (!sb->data) return sx_fail(x, "out of memory in the SIMT executor");
      break;
    }
    case TL_SCOPE_SHARED_DYN:
    case TL_SCOPE_SHARED: {
      sb->space = SX_SHARED;
      int64_t *off = tl_map_get(&x->k->smem_off, b, NULL);
      if (!off) return sx_fail(x, "internal error: shared buffer '%s' has no offset", b->name);
      sb->base = *off;
      sb->data = x->k->smem + sb->base;
      break;
    }
    case TL_SCOPE_GLOBAL: return sx_fail(x, "global buffer '%s' allocated inside a kernel", b->name);
    }
    if (!tl_map_put(&x->k->bufs, b, sb)) return sx_fail(x, "out of memory in the SIMT executor");
  }
  if (b->init && sb->space == SX_LOCAL) {
    sx_val v;
    if (!ev_as(x, b->init, sb->et, mask, &v)) return false;
    for (int t = 0; t < x->T; t++)
      if (mask[t]) sx_el_store(sb->et, sx_elem_ptr(sb, x->tbase + t, 0), v.v[t]);
  }
  return true;
}

static bool exec_eval(sx *x, const tl_stmt *s, const uint8_t *mask) {
  const tl_expr *e = s->u.eval.value;
  if (e && e->kind == TL_EXPR_CALL && e->u.call.op >= 0 && e->u.call.op < tl_num_intrinsics) {
    int op = e->u.call.op;
    if (op == TL_INTRIN_SYNC_THREADS) return exec_barrier(x, mask);
    if (op == TL_INTRIN_DEBUG_PRINT) return sx_debug_print(x, e, mask);
    if (op == TL_INTRIN_DEVICE_ASSERT) return sx_device_assert(x, e, mask);
    if (op == TL_INTRIN_NO_SET_MAX_NREG) return true; /* a register-allocation hint */
    if (op == TL_INTRIN_PTX_LDMATRIX || op == TL_INTRIN_PTX_STMATRIX || op == TL_INTRIN_PTX_MMA ||
        op == TL_INTRIN_PTX_MMA_SP || op == TL_INTRIN_PTX_CP_ASYNC || op == TL_INTRIN_PTX_COMMIT_GROUP ||
        op == TL_INTRIN_PTX_WAIT_GROUP)
      return sx_warp_stmt(x, op, e, mask);
    if (sx_is_async_op(op)) return sx_async_stmt(x, op, e, mask);
    if (sx_is_wgmma_op(op)) return sx_wgmma_stmt(x, op, e, mask);
  }
  sx_val v;
  return ev(x, e, mask, &v);
}

static bool run_kernel(sx *x, const tl_stmt *s, const uint8_t *mask);

static bool exec_inner(sx *x, const tl_stmt *s, const uint8_t *mask) {
  switch (s->kind) {
  case TL_STMT_SEQ: {
    sx_mark m0 = mark(x);
    for (int i = 0; i < s->u.seq.n; i++) {
      const tl_stmt *c = s->u.seq.stmts[i];
      if (c && c->kind == TL_STMT_LET) {
        if (!exec(x, c, mask)) return false;
        continue;
      }
      sx_mark mk = mark(x);
      if (!exec(x, c, mask)) return false;
      release(x, mk);
    }
    release(x, m0);
    return true;
  }
  case TL_STMT_FOR: return exec_for(x, s, mask);
  case TL_STMT_KERNEL: return run_kernel(x, s, mask);
  case TL_STMT_ALLOC: return exec_alloc(x, s, mask);
  case TL_STMT_STORE: return sx_exec_store(x, s, mask);
  case TL_STMT_IF: {
    sx_val c0, c;
    if (!ev(x, s->u.ifs.cond, mask, &c0) || !sx_to_cond(x, &c0, &c)) return false;
    if (lanes_of(c.t) != 1) return sx_fail(x, "if condition must be a scalar");
    uint8_t *tm = sx_scratch(x, (size_t)x->T), *fm = sx_scratch(x, (size_t)x->T);
    if (!tm || !fm) return false;
    bool anyt = false, anyf = false;
    for (int t = 0; t < x->T; t++) {
      tm[t] = mask[t] && c.v[t].i;
      fm[t] = mask[t] && !c.v[t].i;
      anyt |= tm[t];
      anyf |= fm[t];
    }
    if (anyt && !exec(x, s->u.ifs.then_s, tm)) return false;
    if (anyf && s->u.ifs.else_s && !exec(x, s->u.ifs.else_s, fm)) return false;
    return true;
  }
  case TL_STMT_WHILE: return exec_while(x, s, mask);
  case TL_STMT_LET: {
    sx_val v;
    return ev_as(x, s->u.let.value, s->u.let.var->dtype, mask, &v) && bind(x, s->u.let.var, &v);
  }
  case TL_STMT_EVAL: return exec_eval(x, s, mask);
  case TL_STMT_TILE: {
    int op = s->u.tile.op;
    return sx_fail(x, "T.%s reached the SIMT executor (it must be lowered first)",
                   op >= 0 && op < TL_TILE_NUM_OPS ? tl_tile_ops[op].name : "?");
  }
  }
  return sx_fail(x, "internal error: unknown statement kind %d", (int)s->kind);
}

static bool exec(sx *x, const tl_stmt *s, const uint8_t *mask) {
  if (!s) return true;
  if (x->failed) return false;
  const tl_stmt *saved = x->cur;
  x->cur = s;
  if (++x->steps > x->max_steps)
    return sx_fail(x, "execution exceeded %lld steps in one block", (long long)x->max_steps);
  if (x->schedule_seed && x->in_gang && s->kind != TL_STMT_SEQ) sx_maybe_yield(x);
  if (x->depth >= SX_MAX_DEPTH) return sx_fail(x, "IR nested more than %d levels deep", SX_MAX_DEPTH);
  x->depth++;
  bool ok = exec_inner(x, s, mask);
  x->depth--;
  x->cur = saved;
  return ok && !x->failed;
}

/* ======================================================== grid / setup */
/* Assigns shared buffers their byte offsets as codegen_memory.c's cg_gen_alloc does:
 * smem_offset when shared-memory planning set it; the others in allocation
 * (tree) order at 16-byte aligned consecutive offsets after the planned
 * ones. */
static bool plan_smem(sx *x, const tl_stmt *s, int depth, int64_t *next, int64_t *total) {
  if (!s) return true;
  if (depth > SX_MAX_DEPTH) return sx_fail(x, "IR nested more than %d levels deep", SX_MAX_DEPTH);
  switch (s->kind) {
  case TL_STMT_SEQ:
    for (int i = 0; i < s->u.seq.n; i++)
      if (!plan_smem(x, s->u.seq.stmts[i], depth + 1, next, total)) return false;
    return true;
  case TL_STMT_FOR: return plan_smem(x, s->u.loop.body, depth + 1, next, total);
  case TL_STMT_WHILE: return plan_smem(x, s->u.whiles.body, depth + 1, next, total);
  case TL_STMT_KERNEL: return plan_smem(x, s->u.kernel.body, depth + 1, next, total);
  case TL_STMT_IF:
    return plan_smem(x, s->u.ifs.then_s, depth + 1, next, total) &&
           plan_smem(x, s->u.ifs.else_s, depth + 1, next, total);
  case TL_STMT_ALLOC: {
    const tl_buffer *b = s->u.alloc.buffer;
    if (b->scope != TL_SCOPE_SHARED_DYN && b->scope != TL_SCOPE_SHARED) return true;
    if (tl_map_get(&x->k->smem_off, b, NULL)) return true;
    int64_t n = 1;
    for (int i = 0; i < b->ndim; i++) {
      int64_t d;
      if (!tl_expr_is_const_int(b->shape[i], &d) || d < 0) {
        x->cur = s;
        return sx_fail(x, "shared buffer '%s' needs a constant shape", b->name);
      }
      if (d && n > ((int64_t)1 << 32) / d) {
        x->cur = s;
        return sx_fail(x, "shared buffer '%s' is too large", b->name);
      }
      n *= d;
    }
    int64_t bytes = n * elem_bytes(b->dtype) * lanes_of(b->dtype);
    int64_t *off = tl_arena_alloc(&x->arena, sizeof *off);
    if (!off) return sx_fail(x, "out of memory in the SIMT executor");
    if (b->smem_planned && b->scope == TL_SCOPE_SHARED_DYN && b->smem_offset >= 0) {
      *off = b->smem_offset;
    } else {
      *off = (*next + 15) & ~(int64_t)15;
      *next = *off + bytes;
    }
    if (*off + bytes > *total) *total = *off + bytes;
    if (*total > ((int64_t)1 << 32)) return sx_fail(x, "shared memory is too large");
    return tl_map_put(&x->k->smem_off, b, off) ? true : sx_fail(x, "out of memory in the SIMT executor");
  }
  default: return true;
  }
}

static void reset_block(sx *x) {
  sx_blk *k = x->k;
  if (k->smem_size) memset(k->smem, 0, (size_t)k->smem_size);
  sx_clock_block_start(k);
  for (int t = 0; t < k->T; t++) {
    sx_async *as = &k->async[t];
    as->committed = as->completed = 0;
    as->bulk_committed = as->bulk_completed = 0;
    as->fences = 0;
  }
  memset(k->nbar, 0, sizeof k->nbar);
  k->nmb = 0;
  k->nbulk = 0;
  k->nbread = 0;
  k->nwgr = 0;
  memset(k->wg_committed, 0, sizeof k->wg_committed);
  memset(k->wg_completed, 0, sizeof k->wg_completed);
  tl_map_free(&k->bufs);
  tl_map_init(&k->bufs);
  tl_arena_free(&k->arena);
  tl_arena_init(&k->arena);
  x->steps = 0;
}

bool sx_exec_gang(sx *x, const tl_stmt *kernel) {
  for (int i = 0; i < kernel->u.kernel.ngrid; i++) {
    const tl_var *bv = kernel->u.kernel.block_vars[i];
    if (!bv) continue;
    sx_val v;
    if (!alloc_val(x, &v, bv->dtype)) return false;
    for (int t = 0; t < x->T; t++) v.v[t].i = wrap(bv->dtype, x->block[i]);
    if (!bind(x, bv, &v)) return false;
  }
  uint8_t *mask = sx_scratch(x, (size_t)x->T);
  if (!mask) return false;
  memset(mask, 1, (size_t)x->T);
  return exec(x, kernel->u.kernel.body, mask);
}

/* Allocates the block state for `total` bytes of shared memory and one gang
 * per warp, and the warp scheduler. */
static bool setup_block(sx *x, int64_t total) {
  sx_blk *k = x->k;
  k->smem_size = total;
  k->G = (k->T + 31) / 32;
  k->gang_threads = 32;
  k->NU = k->G + SX_MAX_MBAR;
  if (total) {
    k->smem = malloc((size_t)total);
    k->sstate = malloc(sizeof(sx_byte) * (size_t)total);
    k->rd = malloc(sizeof(sx_rd) * (size_t)total * (size_t)k->G);
  }
  k->vc = calloc((size_t)k->G * (size_t)k->NU, sizeof(uint32_t));
  if ((total && (!k->smem || !k->sstate || !k->rd)) || !k->vc) return sx_fail(x, "out of memory in the SIMT executor");
  k->base = 0;
  return sx_sched_create(x, k);
}

/* Frees one of the block's growable arrays (data, count, capacity) and
 * leaves it empty. */
#define FREE_ARRAY(p, n, cap) (free(p), (p) = NULL, (n) = 0, (cap) = 0)

static void free_block(sx_blk *k) {
  sx_sched_destroy(k);
  FREE_ARRAY(k->wgr, k->nwgr, k->capwgr);
  FREE_ARRAY(k->bread, k->nbread, k->capbread);
  FREE_ARRAY(k->bulk, k->nbulk, k->capbulk);
  free(k->smem);
  free(k->sstate);
  free(k->rd);
  free(k->vc);
  k->smem = NULL;
  k->sstate = NULL;
  k->rd = NULL;
  k->vc = NULL;
}
#undef FREE_ARRAY

static bool run_kernel(sx *x, const tl_stmt *s, const uint8_t *mask) {
  int ng = s->u.kernel.ngrid;
  if (ng < 1 || ng > 3) return sx_fail(x, "T.Kernel needs 1 to 3 grid dimensions");
  int64_t grid[3] = {1, 1, 1};
  for (int i = 0; i < ng; i++) {
    sx_val g;
    if (!ev_as(x, s->u.kernel.grid[i], TL_INT64, mask, &g)) return false;
    grid[i] = g.v[0].i;
    if (grid[i] < 0 || grid[i] > ((int64_t)1 << 31))
      return sx_fail(x, "grid dimension %d is %lld", i, (long long)grid[i]);
  }
  int64_t next = tl_ir_planned_smem_end(s->u.kernel.body), total = next;
  sx_blk *k = x->k;
  free_block(k);
  tl_map_free(&k->smem_off);
  tl_map_init(&k->smem_off);
  if (!plan_smem(x, s->u.kernel.body, 0, &next, &total)) return false;
  if (!setup_block(x, total) || !sx_gsh_launch(x, s)) return false;
  memcpy(k->grid, grid, sizeof grid);
  for (int64_t bz = 0; bz < grid[2]; bz++)
    for (int64_t by = 0; by < grid[1]; by++)
      for (int64_t bx = 0; bx < grid[0]; bx++) {
        x->block[0] = bx;
        x->block[1] = by;
        x->block[2] = bz;
        k->blk_id = (uint32_t)(1 + bx + grid[0] * (by + grid[1] * bz));
        reset_block(x);
        x->cur = s;
        if (k->sched) {
          if (!sx_sched_run_block(x, s)) return false;
        } else {
          sx_mark mk = mark(x);
          if (!sx_exec_gang(x, s)) return false;
          release(x, mk);
        }
        if (x->opts && x->opts->progress)
          x->opts->progress(x->opts->progress_user, 1 + bx + grid[0] * (by + grid[1] * bz),
                            grid[0] * grid[1] * grid[2]);
      }
  return true;
}

/* Binds the parameters: tensors (shape checked against the parameter,
 * dynamic symbols first) and scalars. */
static bool bind_params(sx *x, const tl_interp_arg *args, int nargs, const int64_t *dyn, int ndyn,
                        const uint8_t *mask) {
  const tl_primfunc *f = x->f;
  if (nargs != f->nparams) return sx_fail(x, "'%s' takes %d arguments, got %d", f->name, f->nparams, nargs);
  if (ndyn != f->ndynamic)
    return sx_fail(x, "'%s' has %d dynamic dimensions, got %d values", f->name, f->ndynamic, ndyn);
  for (int i = 0; i < f->ndynamic; i++) {
    sx_val v;
    if (!alloc_val(x, &v, f->dynamic[i]->dtype)) return false;
    for (int t = 0; t < x->T; t++) v.v[t].i = wrap(f->dynamic[i]->dtype, dyn[i]);
    if (!bind(x, f->dynamic[i], &v)) return false;
  }
  for (int i = 0; i < f->nparams; i++) {
    const tl_param *p = &f->params[i];
    const tl_interp_arg *a = &args[i];
    if (p->kind == TL_PARAM_SCALAR) {
      if (a->is_tensor) return sx_fail(x, "argument %d ('%s') must be a scalar", i, p->var->name);
      tl_dtype t = p->var->dtype;
      sx_val v;
      if (!alloc_val(x, &v, t)) return false;
      for (int th = 0; th < x->T; th++) {
        if (is_fl(t)) v.v[th].f = round_to(a->f, scalar_of(t));
        else v.v[th].i = wrap(t, a->i);
      }
      if (!bind(x, p->var, &v)) return false;
      continue;
    }
    const tl_buffer *b = p->buffer;
    if (!a->is_tensor) return sx_fail(x, "argument %d ('%s') must be a tensor", i, b->name);
    if (a->ndim != b->ndim || b->ndim > SX_MAX_DIMS)
      return sx_fail(x, "argument %d ('%s') has %d dimensions, the parameter %d", i, b->name, a->ndim, b->ndim);
    sx_buf *sb = tl_arena_alloc(&x->arena, sizeof *sb);
    if (!sb) return sx_fail(x, "out of memory in the SIMT executor");
    sb->b = b;
    sb->space = SX_GLOBAL;
    sb->et = scalar_of(b->dtype);
    sb->eb = elem_bytes(b->dtype);
    sb->ndim = b->ndim;
    int64_t n = 1;
    for (int k = 0; k < b->ndim; k++) {
      sx_val dv;
      if (!ev_as(x, b->shape[k], TL_INT64, mask, &dv)) return false;
      if (dv.v[0].i != a->shape[k])
        return sx_fail(x, "argument %d ('%s') dimension %d is %lld, the parameter needs %lld", i, b->name, k,
                       (long long)a->shape[k], (long long)dv.v[0].i);
      if (a->shape[k] < 0) return sx_fail(x, "argument %d has a negative dimension", i);
      sb->shape[k] = a->shape[k];
      n *= a->shape[k];
    }
    int64_t st = 1;
    for (int k = b->ndim - 1; k >= 0; k--) {
      sb->stride[k] = st;
      st *= sb->shape[k];
    }
    if (b->strides) {
      for (int k = 0; k < b->ndim; k++) {
        sx_val sv;
        if (!ev_as(x, b->strides[k], TL_INT64, mask, &sv)) return false;
        sb->stride[k] = sv.v[0].i;
      }
      int64_t last = 0; /* strided (T.StridedTensor): the addressable elements */
      for (int k = 0; n > 0 && k < b->ndim; k++) last += (sb->shape[k] - 1) * sb->stride[k];
      if (n > 0) n = last + 1;
    }
    sb->elems = n;
    sb->data = a->data;
    if (n > 0 && !a->data && !a->absent) return sx_fail(x, "argument %d ('%s') has no data", i, b->name);
    if (!tl_map_put(&x->gbufs, b, sb)) return sx_fail(x, "out of memory in the SIMT executor");
  }
  return true;
}

/* Applies map_op and arena_op (their init, or their free) to the maps and
 * arenas of the executor and of its block x->k, set up and torn down
 * together by tl_simt_exec. */
static void exec_storage(sx *x, void (*map_op)(tl_map *), void (*arena_op)(tl_arena *)) {
  tl_map *maps[] = {&x->env, &x->gbufs, &x->vbufs, &x->k->bufs, &x->k->smem_off};
  for (size_t i = 0; i < sizeof maps / sizeof *maps; i++) map_op(maps[i]);
  arena_op(&x->arena);
  arena_op(&x->k->arena);
}

bool tl_simt_exec(const tl_module *m, int func, const tl_interp_arg *args, int nargs, const int64_t *dyn, int ndyn,
                  const tl_simt_options *opts, tl_diag *d) {
  if (!m || !d || func < 0 || func >= m->nfuncs || !m->funcs[func] || (nargs > 0 && !args) || (ndyn > 0 && !dyn)) {
    if (d) tl_error(d, TL_LOC_NONE, "tl_simt_exec: invalid arguments");
    return false;
  }
  sx x;
  sx_blk blk;
  memset(&x, 0, sizeof x);
  memset(&blk, 0, sizeof blk);
  x.k = &blk;
  x.m = m;
  x.f = m->funcs[func];
  x.d = d;
  x.check = opts ? opts->check_races : true;
  x.max_steps = opts && opts->max_steps > 0 ? opts->max_steps : 1000000000;
  x.schedule_seed = opts ? opts->schedule_seed : 0;
  x.opts = opts;
  x.ws = opts ? opts->workspaces : NULL;
  exec_storage(&x, tl_map_init, tl_arena_init);
  bool ok = false;
  uint8_t *mask = NULL;
  const tl_stmt *k = tl_ir_find_kernel(x.f->body);
  int64_t threads = 0;
  if (!k) {
    sx_fail(&x, "prim_func '%s' has no T.Kernel", x.f->name);
    goto done;
  }
  if (!k->u.kernel.threads || !tl_expr_is_const_int(k->u.kernel.threads, &threads) || threads < 1 || threads > 1024) {
    x.cur = k;
    sx_fail(&x, "the SIMT executor needs a constant thread count of 1 to 1024");
    goto done;
  }
  x.T = (int)threads;
  blk.T = x.T;
  blk.G = 1;
  mask = malloc((size_t)x.T);
  blk.async = calloc((size_t)x.T, sizeof *blk.async);
  if (!mask || !blk.async) {
    sx_fail(&x, "out of memory in the SIMT executor");
    goto done;
  }
  memset(mask, 1, (size_t)x.T);
  if (!bind_params(&x, args, nargs, dyn, ndyn, mask)) goto done;
  ok = exec(&x, x.f->body, mask);
done:
  sx_gsh_free(&x);
  if (blk.async)
    for (int t = 0; t < x.T; t++) {
      free(blk.async[t].done_clk);
      free(blk.async[t].done_fence);
    }
  free(blk.async);
  free(mask);
  free_block(&blk);
  for (int i = 0; i < x.nchunks; i++) free(x.chunks[i].data);
  free(x.chunks);
  exec_storage(&x, tl_map_free, tl_arena_free);
  return ok && !x.failed;
}
