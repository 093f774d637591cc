/* Intrinsic calls of the reference evaluator (ref_eval.c runs everything
 * else): each T.* intrinsic of lib/IR/intrinsics.def by its definition, math
 * in the dtype's precision (f16/bf16 computed in f32 and rounded once),
 * integer division as C's (trunc*) or TileLang's (floordiv, ceildiv);
 * warp-level and SIMT-only intrinsics are errors (the SIMT executor runs
 * them). */
#include <math.h>
#include <stdint.h>
#include <stdio.h>

#include "Interp/ref_eval_internal.h"

/* Unary float math f(x) on float dtype t. */
static double float_math(int id, double x, tl_dtype t) {
  if (t.code == TL_TYPE_FLOAT && t.bits == 64) {
    switch (id) {
    case TL_INTRIN_EXP:
    case TL_INTRIN_FAST_EXP: return exp(x);
    case TL_INTRIN_EXP2:
    case TL_INTRIN_FAST_EXP2: return exp2(x);
    case TL_INTRIN_EXP10: return pow(10.0, x);
    case TL_INTRIN_LOG:
    case TL_INTRIN_FAST_LOG: return log(x);
    case TL_INTRIN_LOG2:
    case TL_INTRIN_FAST_LOG2: return log2(x);
    case TL_INTRIN_LOG10: return log10(x);
    case TL_INTRIN_LOG1P: return log1p(x);
    case TL_INTRIN_SQRT: return sqrt(x);
    case TL_INTRIN_RSQRT: return 1.0 / sqrt(x);
    case TL_INTRIN_TANH: return tanh(x);
    case TL_INTRIN_SIGMOID: return 1.0 / (1.0 + exp(-x));
    case TL_INTRIN_ERF: return erf(x);
    case TL_INTRIN_SIN: return sin(x);
    case TL_INTRIN_COS: return cos(x);
    case TL_INTRIN_TAN: return tan(x);
    case TL_INTRIN_FLOOR: return floor(x);
    case TL_INTRIN_CEIL: return ceil(x);
    case TL_INTRIN_ROUND: return round(x);
    case TL_INTRIN_TRUNC: return trunc(x);
    case TL_INTRIN_ABS: return fabs(x);
    default: return NAN;
    }
  }
  float v = (float)x, r;
  switch (id) {
  case TL_INTRIN_EXP:
  case TL_INTRIN_FAST_EXP: r = expf(v); break;
  case TL_INTRIN_EXP2:
  case TL_INTRIN_FAST_EXP2: r = exp2f(v); break;
  case TL_INTRIN_EXP10: r = powf(10.0f, v); break;
  case TL_INTRIN_LOG:
  case TL_INTRIN_FAST_LOG: r = logf(v); break;
  case TL_INTRIN_LOG2:
  case TL_INTRIN_FAST_LOG2: r = log2f(v); break;
  case TL_INTRIN_LOG10: r = log10f(v); break;
  case TL_INTRIN_LOG1P: r = log1pf(v); break;
  case TL_INTRIN_SQRT: r = sqrtf(v); break;
  case TL_INTRIN_RSQRT: r = 1.0f / sqrtf(v); break;
  case TL_INTRIN_TANH: r = tanhf(v); break;
  case TL_INTRIN_SIGMOID: r = 1.0f / (1.0f + expf(-v)); break;
  case TL_INTRIN_ERF: r = erff(v); break;
  case TL_INTRIN_SIN: r = sinf(v); break;
  case TL_INTRIN_COS: r = cosf(v); break;
  case TL_INTRIN_TAN: r = tanf(v); break;
  case TL_INTRIN_FLOOR: r = floorf(v); break;
  case TL_INTRIN_CEIL: r = ceilf(v); break;
  case TL_INTRIN_ROUND: r = roundf(v); break;
  case TL_INTRIN_TRUNC: r = truncf(v); break;
  case TL_INTRIN_ABS: r = fabsf(v); break;
  default: r = NAN; break;
  }
  return re_round(r, t);
}

/* Largest finite value of float dtype t. */
static double float_max(tl_dtype t) {
  if (t.code == TL_TYPE_FLOAT && t.bits == 16) return 65504.0;
  if (t.code == TL_TYPE_FLOAT && t.bits == 64) return 1.7976931348623157e308;
  if (t.code == TL_TYPE_BFLOAT) return 3.3895313892515355e38;
  if (t.code == TL_TYPE_TFLOAT) return 3.4011621342146535e38; /* 10-bit mantissa */
  if (t.code == TL_TYPE_FLOAT8_E4M3) return 448.0;
  if (t.code == TL_TYPE_FLOAT8_E5M2) return 57344.0;
  return 3.4028234663852886e38;
}
static int64_t int_limit(tl_dtype t, bool max) {
  if (t.code == TL_TYPE_BOOL) return max;
  int bits = t.bits;
  if (t.code == TL_TYPE_UINT) return max ? re_wrap(-1, t) : 0;
  if (bits >= 64) return max ? INT64_MAX : INT64_MIN;
  return max ? (int64_t)((UINT64_C(1) << (bits - 1)) - 1) : -(int64_t)(UINT64_C(1) << (bits - 1));
}

/* Argument i of call e converted to dtype t. */
static re_val arg_as(re_state *st, const tl_expr *e, int i, tl_dtype t) {
  const tl_expr *a = e->u.call.args[i];
  re_val v = re_eval(st, a);
  if (st->failed) return v;
  if (!tl_dtype_eq(a->dtype, t)) v = re_convert(v, a->dtype, t);
  return v;
}

/* T.fmod / truncmod / truncdiv (C's truncating division) and T.ceildiv
 * (TileLang's floordiv(a + b - 1, b)) on dtype t. */
static re_val eval_division(re_state *st, const tl_expr *e, tl_intrin id) {
  tl_dtype t = e->dtype;
  bool fl = tl_dtype_is_float(t);
  const char *name = tl_intrinsics[id].name;
  re_val r = {0}, a = arg_as(st, e, 0, t), b = arg_as(st, e, 1, t);
  if (st->failed) return r;
  if (id == TL_INTRIN_CEILDIV) {
    if (fl) {
      r.f = tl_float_binop(TL_OP_DIV, a.f, b.f, t);
      r.f = float_math(TL_INTRIN_CEIL, r.f, t);
      return r;
    }
    /* floordiv(a + b - 1, b), as TileLang defines it */
    int64_t s = re_int_arith(st, TL_OP_SUB, re_int_arith(st, TL_OP_ADD, a.i, b.i, t, e->loc), 1, t, e->loc);
    r.i = re_int_arith(st, TL_OP_FLOORDIV, s, b.i, t, e->loc);
    return r;
  }
  if (fl) {
    bool dbl = t.bits == 64;
    if (id == TL_INTRIN_TRUNCDIV) r.f = re_round(dbl ? trunc(a.f / b.f) : truncf((float)a.f / (float)b.f), t);
    else r.f = re_round(dbl ? fmod(a.f, b.f) : fmodf((float)a.f, (float)b.f), t);
    return r;
  }
  if (b.i == 0) {
    re_error(st, e->loc, "integer division by zero in T.%s", name);
    return r;
  }
  bool uns = t.code != TL_TYPE_INT;
  if (uns) {
    uint64_t x = (uint64_t)a.i, y = (uint64_t)b.i;
    r.i = (int64_t)(id == TL_INTRIN_TRUNCDIV ? x / y : x % y);
  } else if (a.i == INT64_MIN && b.i == -1) {
    r.i = id == TL_INTRIN_TRUNCDIV ? a.i : 0;
  } else {
    r.i = id == TL_INTRIN_TRUNCDIV ? a.i / b.i : a.i % b.i;
  }
  r.i = re_wrap(r.i, t);
  return r;
}

/* T.get_thread_binding / get_lane_idx / get_warp_idx (per-thread bodies
 * only) and T.get_block_binding. */
/* T.device_assert_at(cond, msg, where): a false cond is a located error
 * with the message, the block and (per-thread code) the thread. */
static void eval_device_assert(re_state *st, const tl_expr *e) {
  const tl_expr *c = e->u.call.args[0], *msg = e->u.call.args[1];
  re_val v = re_eval(st, c);
  if (st->failed || re_truthy(v, c->dtype)) return;
  char thread[48] = "";
  if (st->per_thread && st->cur) snprintf(thread, sizeof thread, ", thread %lld", (long long)st->cur->tid);
  re_error(st, e->loc, "T.device_assert failed: %s (block (%lld, %lld, %lld)%s)",
           msg->kind == TL_EXPR_STRING ? msg->u.str : "", (long long)st->block[0], (long long)st->block[1],
           (long long)st->block[2], thread);
}

static re_val eval_thread_index(re_state *st, const tl_expr *e, tl_intrin id) {
  re_val r = {0};
  int n = e->u.call.n;
  tl_dtype t = e->dtype;
  const char *name = tl_intrinsics[id].name;
  if (id != TL_INTRIN_GET_BLOCK_BINDING) {
    if (!st->per_thread || !st->in_kernel) {
      re_error(st, e->loc, "the reference evaluator runs tile programs; T.%s has no meaning here", name);
      return r;
    }
    int64_t k = id == TL_INTRIN_GET_THREAD_BINDING ? 0 : 32;
    if (n > 1) {
      re_error(st, e->loc, "T.%s takes at most one argument", name);
      return r;
    }
    if (n == 1) {
      k = re_eval_int(st, e->u.call.args[0]);
      if (st->failed) return r;
    }
    int64_t tid = st->cur->tid;
    if (id == TL_INTRIN_GET_THREAD_BINDING) {
      if (k < 0 || k > 2) {
        re_error(st, e->loc, "T.%s needs dimension 0, 1 or 2, got %lld", name, (long long)k);
        return r;
      }
      r.i = k == 0 ? tid : 0;
    } else {
      if (k <= 0) {
        re_error(st, e->loc, "T.%s: warp size must be positive, got %lld", name, (long long)k);
        return r;
      }
      r.i = id == TL_INTRIN_GET_LANE_IDX ? tid % k : tid / k;
    }
    r.i = re_wrap(r.i, t);
    return r;
  }
  int64_t k = 0;
  if (n == 1) k = re_eval_int(st, e->u.call.args[0]);
  if (st->failed) return r;
  if (!st->in_kernel || n > 1 || k < 0 || k > 2) {
    re_error(st, e->loc, "T.%s needs dimension 0, 1 or 2 inside T.Kernel", name);
    return r;
  }
  r.i = re_wrap(st->block[k], t);
  return r;
}

re_val re_atomic_apply(int in, re_val old, re_val v, tl_dtype t) {
  if (in == TL_INTRIN_PTX_ATOMIC_ADD) return re_add(old, v, t);
  bool mx = in == TL_INTRIN_PTX_ATOMIC_MAX;
  re_val r = old;
  if (tl_dtype_is_float(t)) r.f = mx ? fmax(old.f, v.f) : fmin(old.f, v.f);
  else if (t.code == TL_TYPE_UINT) r = ((uint64_t)v.i > (uint64_t)old.i) == mx && v.i != old.i ? v : old;
  else r = (v.i > old.i) == mx && v.i != old.i ? v : old;
  return r;
}

/* T.ptx_atomic_add(dst, off, value, return_prev): dst[off] += value in
 * dst's dtype (as T.atomic_add); the value is the old element.  Also
 * T.ptx_atomic_max / _min (re_atomic_apply). */
static re_val eval_atomic_add(re_state *st, const tl_expr *e) {
  re_val r = {0};
  int n = e->u.call.n;
  tl_dtype t = e->dtype;
  const char *name = tl_intrinsics[e->u.call.op].name;
  const tl_expr *be = n == 4 ? e->u.call.args[0] : NULL;
  if (!be || be->kind != TL_EXPR_BUFFER || !be->u.buffer) {
    re_error(st, e->loc, "T.%s(dst, off, value, return_prev) needs a buffer dst", name);
    return r;
  }
  re_buf *rb = re_buf_of(st, be->u.buffer, e->loc);
  int64_t off = rb ? re_eval_int(st, e->u.call.args[1]) : 0;
  re_val v = rb && !st->failed ? re_eval(st, e->u.call.args[2]) : r;
  if (!rb || st->failed) return r;
  if (off < 0 || off >= rb->size) {
    re_error(st, e->loc, "T.%s: element %lld is outside '%s' (%lld elements)", name, (long long)off, be->u.buffer->name,
             (long long)rb->size);
    return r;
  }
  re_val old = re_buf_get(rb, off);
  re_buf_set(rb, off, re_atomic_apply(e->u.call.op, old, re_convert(v, e->u.call.args[2]->dtype, rb->dt), rb->dt));
  return tl_dtype_eq(rb->dt, t) ? old : re_convert(old, rb->dt, t);
}

/* T.ptx_cp_async(dst, dst_off, src, src_off, bytes, pred) of a tile program
 * (TileLang's T.ptx_cp_async, lib/Frontend/elab_cp_async.c): run by the
 * thread at hand, complete at once (every wait or barrier after it finds it
 * done); a false pred writes zeros.  The two element types must be one. */
static re_val eval_cp_async(re_state *st, const tl_expr *e) {
  re_val r = {0};
  tl_expr *const *a = e->u.call.args;
  if (e->u.call.n != 6 || a[0]->kind != TL_EXPR_BUFFER || a[2]->kind != TL_EXPR_BUFFER) {
    re_error(st, e->loc, "T.ptx_cp_async(dst, dst_off, src, src_off, bytes, pred) needs two buffers");
    return r;
  }
  re_buf *d = re_buf_of(st, a[0]->u.buffer, e->loc), *s = d ? re_buf_of(st, a[2]->u.buffer, e->loc) : NULL;
  int64_t doff = s ? re_eval_int(st, a[1]) : 0, soff = s ? re_eval_int(st, a[3]) : 0;
  int64_t bytes = s ? re_eval_int(st, a[4]) : 0;
  re_val p = s && !st->failed ? re_eval(st, a[5]) : r;
  if (!s || st->failed) return r;
  if (!tl_dtype_eq(d->dt, s->dt)) {
    re_error(st, e->loc, "T.ptx_cp_async from %s into %s: the reference evaluator copies one element type",
             tl_dtype_name(s->dt), tl_dtype_name(d->dt));
    return r;
  }
  int64_t n = bytes * 8 / (d->dt.bits * d->dt.lanes);
  bool pred = re_truthy(p, a[5]->dtype);
  if (doff < 0 || doff + n > d->size || (pred && (soff < 0 || soff + n > s->size))) {
    re_error(st, e->loc,
             "T.ptx_cp_async: %lld elements from element %lld of '%s' (%lld) to element %lld of '%s' (%lld) "
             "are out of bounds",
             (long long)n, (long long)soff, a[2]->u.buffer->name, (long long)s->size, (long long)doff,
             a[0]->u.buffer->name, (long long)d->size);
    return r;
  }
  for (int64_t k = 0; k < n; k++) re_buf_set(d, doff + k, pred ? re_buf_get(s, soff + k) : r);
  return r;
}

/* T.reinterpret(dtype, v): v stored in its dtype's encoding (a one-element
 * native buffer) and read back as dtype (the widths agree). */
static re_val eval_reinterpret(re_state *st, const tl_expr *e) {
  re_val r = {0};
  const tl_expr *a = e->u.call.n == 2 ? e->u.call.args[1] : NULL;
  if (!a || !tl_reinterpret_ok(e->dtype, a->dtype)) {
    re_error(st, e->loc, "T.reinterpret needs a value of the width of %s", tl_dtype_name(e->dtype));
    return r;
  }
  re_val v = re_eval(st, a);
  if (st->failed) return r;
  uint64_t bytes = 0;
  re_buf tmp = {
      .valid = true, .native = true, .isf = tl_dtype_is_float(a->dtype), .dt = a->dtype, .size = 1, .data = &bytes};
  re_buf_set(&tmp, 0, v);
  tmp.dt = e->dtype;
  tmp.isf = tl_dtype_is_float(e->dtype);
  return re_buf_get(&tmp, 0);
}

/* T.infinity / T.max_value / T.min_value of the call's dtype. */
static re_val eval_limit(re_state *st, const tl_expr *e, tl_intrin id) {
  re_val r = {0};
  tl_dtype t = e->dtype;
  if (tl_dtype_is_float(t)) {
    r.f = id == TL_INTRIN_INFINITY ? INFINITY : float_max(t);
    if (id == TL_INTRIN_MIN_VALUE) r.f = -r.f;
  } else if (id == TL_INTRIN_INFINITY) {
    re_error(st, e->loc, "T.infinity of %s: not a float dtype", tl_dtype_name(t));
  } else {
    r.i = int_limit(t, id == TL_INTRIN_MAX_VALUE);
  }
  return r;
}

/* T.isnan / T.isinf / T.isfinite: an integer argument is finite. */
static re_val eval_classify(re_state *st, const tl_expr *e, tl_intrin id) {
  re_val r = {0};
  const tl_expr *a = e->u.call.args[0];
  re_val v = re_eval(st, a);
  if (st->failed) return r;
  if (!tl_dtype_is_float(a->dtype)) r.i = id == TL_INTRIN_ISFINITE;
  else r.i = id == TL_INTRIN_ISNAN ? isnan(v.f) != 0 : id == TL_INTRIN_ISINF ? isinf(v.f) != 0 : isfinite(v.f) != 0;
  return r;
}

/* An intrinsic call: the reference evaluator's hook of every tl_intrin (the
 * switch has no default, so -Wswitch names an intrinsic without one). */
re_val re_eval_call(re_state *st, const tl_expr *e) {
  re_val r = {0};
  tl_intrin id = (tl_intrin)e->u.call.op;
  int n = e->u.call.n;
  const char *name = tl_intrinsic_name(e->u.call.op);
  tl_dtype t = e->dtype;
  bool fl = tl_dtype_is_float(t);
  if (e->u.call.op < 0 || e->u.call.op >= TL_INTRIN_COUNT) {
    re_error(st, e->loc, "internal error: bad intrinsic index %d", e->u.call.op);
    return r;
  }
  const tl_intrinsic *in = &tl_intrinsics[id];
  if (in->min_args == in->max_args && n != in->min_args) { /* the fixed arities of the table */
    re_error(st, e->loc, "T.%s takes %d argument%s, got %d", name, in->min_args, in->min_args == 1 ? "" : "s", n);
    return r;
  }
  /* cp.async's groups, which a tile program commits and waits around
   * T.Parallel(..., prefer_async=True) stores: here every store is complete
   * when it runs, a T.ptx_cp_async too (eval_cp_async) */
  if (id == TL_INTRIN_PTX_COMMIT_GROUP || id == TL_INTRIN_PTX_WAIT_GROUP) return r;
  if (id == TL_INTRIN_PTX_CP_ASYNC) return eval_cp_async(st, e);
  switch (id) {
  TL_INTRIN_CASES_FLOAT_MATH:
  TL_INTRIN_CASES_FAST_MATH:
    if (!fl) {
      re_error(st, e->loc, "T.%s needs a float argument, not %s", name, tl_dtype_name(t));
      return r;
    }
    r = arg_as(st, e, 0, t);
    r.f = float_math(id, r.f, t);
    return r;
  case TL_INTRIN_ABS:
  case TL_INTRIN_FLOOR:
  case TL_INTRIN_CEIL:
  case TL_INTRIN_ROUND:
  case TL_INTRIN_TRUNC:
    r = arg_as(st, e, 0, t);
    if (fl) r.f = float_math(id, r.f, t);
    else if (id == TL_INTRIN_ABS && t.code == TL_TYPE_INT && r.i < 0) r.i = re_wrap((int64_t)(0 - (uint64_t)r.i), t);
    return r;
  case TL_INTRIN_POW:
  case TL_INTRIN_MIN:
  case TL_INTRIN_MAX:
  case TL_INTRIN_FLOORDIV:
  case TL_INTRIN_FLOORMOD: {
    tl_binop op = id == TL_INTRIN_POW        ? TL_OP_POW
                  : id == TL_INTRIN_MIN      ? TL_OP_MIN
                  : id == TL_INTRIN_MAX      ? TL_OP_MAX
                  : id == TL_INTRIN_FLOORDIV ? TL_OP_FLOORDIV
                                             : TL_OP_FLOORMOD;
    re_val a = arg_as(st, e, 0, t), b = arg_as(st, e, 1, t);
    if (st->failed) return r;
    if (fl) r.f = tl_float_binop(op, a.f, b.f, t);
    else r.i = re_int_arith(st, op, a.i, b.i, t, e->loc);
    return r;
  }
  case TL_INTRIN_FMOD:
  case TL_INTRIN_TRUNCMOD:
  case TL_INTRIN_TRUNCDIV:
  case TL_INTRIN_CEILDIV: return eval_division(st, e, id);
  case TL_INTRIN_FMA: {
    re_val a = arg_as(st, e, 0, t), b = arg_as(st, e, 1, t), c = arg_as(st, e, 2, t);
    if (st->failed) return r;
    if (!fl) {
      r.i = re_int_arith(st, TL_OP_ADD, re_int_arith(st, TL_OP_MUL, a.i, b.i, t, e->loc), c.i, t, e->loc);
    } else if (t.code == TL_TYPE_FLOAT && t.bits == 32) {
      r.f = fmaf((float)a.f, (float)b.f, (float)c.f);
    } else {
      r.f = re_round(fma(a.f, b.f, c.f), t); /* one rounding (f64; f16/bf16 via f64) */
    }
    return r;
  }
  case TL_INTRIN_IF_THEN_ELSE: {
    const tl_expr *c = e->u.call.args[0];
    re_val cv = re_eval(st, c);
    if (st->failed) return r;
    return arg_as(st, e, re_truthy(cv, c->dtype) ? 1 : 2, t); /* only the chosen branch */
  }
  case TL_INTRIN_CLAMP: {
    re_val x = arg_as(st, e, 0, t), lo = arg_as(st, e, 1, t), hi = arg_as(st, e, 2, t);
    if (st->failed) return r;
    if (fl) r.f = tl_float_binop(TL_OP_MIN, tl_float_binop(TL_OP_MAX, x.f, lo.f, t), hi.f, t);
    else r.i = re_int_arith(st, TL_OP_MIN, re_int_arith(st, TL_OP_MAX, x.i, lo.i, t, e->loc), hi.i, t, e->loc);
    return r;
  }
  case TL_INTRIN_REINTERPRET: return eval_reinterpret(st, e);
  case TL_INTRIN_INFINITY:
  case TL_INTRIN_MAX_VALUE:
  case TL_INTRIN_MIN_VALUE: return eval_limit(st, e, id);
  case TL_INTRIN_ISNAN:
  case TL_INTRIN_ISINF:
  case TL_INTRIN_ISFINITE: return eval_classify(st, e, id);
  case TL_INTRIN_GET_THREAD_BINDING:
  case TL_INTRIN_GET_LANE_IDX:
  case TL_INTRIN_GET_WARP_IDX:
  case TL_INTRIN_GET_BLOCK_BINDING: return eval_thread_index(st, e, id);
  case TL_INTRIN_SYNC_THREADS: re_error(st, e->loc, "T.sync_threads() has no value"); return r;
  case TL_INTRIN_SYNC_GRID: re_error(st, e->loc, "T.sync_grid() has no value"); return r; /* run_kernel's segments */
  case TL_INTRIN_DEVICE_ASSERT: eval_device_assert(st, e); return r;
  case TL_INTRIN_DEBUG_PRINT:     /* T.print: the device's output; the SIMT executor prints it, the meaning has none */
  case TL_INTRIN_NO_SET_MAX_NREG: /* a register-allocation hint */
  case TL_INTRIN_SET_MAX_NREG:
  case TL_INTRIN_FENCE_PROXY_ASYNC: /* program order already orders the roles' work */ return r;
  case TL_INTRIN_WS:
  case TL_INTRIN_THREAD_RANGE: r.i = 1; return r; /* the block runs every role scope, in program order */
  case TL_INTRIN_BARRIER_INIT:
  case TL_INTRIN_BARRIER_ARRIVE:
  case TL_INTRIN_CP_ASYNC_BARRIER_NOINC: /* every copy is complete when it runs: an arrival */
  case TL_INTRIN_BARRIER_WAIT: /* program order already orders the roles' work */ return r;
  case TL_INTRIN_SHFL_XOR:
  case TL_INTRIN_SHFL_DOWN:
  case TL_INTRIN_SHFL_UP:
  case TL_INTRIN_SHFL_SYNC:
    re_error(st, e->loc,
             "T.%s: warp shuffles need threads in lockstep; the reference evaluator does not run "
             "them (use the SIMT executor)",
             name);
    return r;
  TL_INTRIN_CASES_SIMT_STMT:
    re_error(st, e->loc, "T.%s is a SIMT-level intrinsic; the reference evaluator runs tile programs", name);
    return r;
  case TL_INTRIN_PTX_ATOMIC_ADD:
  case TL_INTRIN_PTX_ATOMIC_MAX:
  case TL_INTRIN_PTX_ATOMIC_MIN: return eval_atomic_add(st, e);
  }
  re_error(st, e->loc, "T.%s is not supported by the reference evaluator", name);
  return r;
}
