/* The SIMT executor's value of an intrinsic call (T.exp, T.max, T.fma,
 * T.if_then_else, thread indices, ...) and of a select: per thread, per lane,
 * with the rounding the GPU's code has (f32 math in float, f16/bf16 results
 * rounded once).  Its switch over tl_intrin has no default: -Wswitch names an
 * intrinsic without a hook.  The statements among the intrinsics (cp.async,
 * mma, TMA, wgmma) run in simt_exec.c and the files beside it. */
#include "IR/visit.h"
#include "Interp/simt_internal.h"

#include <math.h>

static double limit_value(tl_dtype t, bool mx, bool inf) {
  double big = (t.code == TL_TYPE_FLOAT && t.bits == 16) ? 65504.0
               : (t.code == TL_TYPE_BFLOAT)              ? 3.3895313892515355e38
               : is_f64(t)                               ? 1.7976931348623157e308
                                                         : 3.4028234663852886e38;
  if (inf) big = INFINITY;
  return mx || inf ? big : -big;
}

/* The unary float math intrinsics: the C library function in float (f32
 * and narrower dtypes) and in double (f64). */
static float rsqrt32(float a) { return (float)(1.0 / sqrt((double)a)); }
static double rsqrt64(double a) { return 1.0 / sqrt(a); }
static float sigmoid32(float a) {
  float ex = expf(-a);
  float den = 1.0f + ex;
  return 1.0f / den;
}
static double sigmoid64(double a) { return 1.0 / (1.0 + exp(-a)); }
typedef struct fmath_fns {
  float (*f32)(float);
  double (*f64)(double);
} fmath_fns;
static const fmath_fns fmath_table[TL_INTRIN_COUNT] = {
    [TL_INTRIN_EXP] = {expf, exp},
    [TL_INTRIN_FAST_EXP] = {expf, exp},
    [TL_INTRIN_EXP2] = {exp2f, exp2},
    [TL_INTRIN_FAST_EXP2] = {exp2f, exp2},
    [TL_INTRIN_EXP10] = {exp10f, exp10},
    [TL_INTRIN_LOG] = {logf, log},
    [TL_INTRIN_FAST_LOG] = {logf, log},
    [TL_INTRIN_LOG2] = {log2f, log2},
    [TL_INTRIN_FAST_LOG2] = {log2f, log2},
    [TL_INTRIN_LOG10] = {log10f, log10},
    [TL_INTRIN_LOG1P] = {log1pf, log1p},
    [TL_INTRIN_SQRT] = {sqrtf, sqrt},
    [TL_INTRIN_RSQRT] = {rsqrt32, rsqrt64},
    [TL_INTRIN_TANH] = {tanhf, tanh},
    [TL_INTRIN_SIGMOID] = {sigmoid32, sigmoid64},
    [TL_INTRIN_ERF] = {erff, erf},
    [TL_INTRIN_SIN] = {sinf, sin},
    [TL_INTRIN_COS] = {cosf, cos},
    [TL_INTRIN_TAN] = {tanf, tan},
    [TL_INTRIN_FLOOR] = {floorf, floor},
    [TL_INTRIN_CEIL] = {ceilf, ceil},
    [TL_INTRIN_ROUND] = {roundf, round},
    [TL_INTRIN_TRUNC] = {truncf, trunc},
};
/* Math intrinsic op on a: in double when f64, else in float; a itself (in
 * the precision) for an op without a table entry. */
static double fmath(int op, double a, bool f64) {
  const fmath_fns *fn = op >= 0 && op < TL_INTRIN_COUNT ? &fmath_table[op] : NULL;
  if (f64) return fn && fn->f64 ? fn->f64(a) : a;
  float x = (float)a;
  return fn && fn->f32 ? (double)fn->f32(x) : (double)x;
}

/* Single rounding of the exact a*b+c to narrow dtype t: the double fma is
 * rounded once; when it was inexact, nudging it one double ulp toward the
 * exact value keeps a tie from being broken the wrong way. */
static double fma_narrow(double a, double b, double c, tl_dtype t) {
  double s = fma(a, b, c);
  if (!isfinite(s)) return tl_round_to_dtype(s, t);
  /* exact residual of s: p = a*b is exact in double for 16-bit inputs */
  double p = a * b;
  double bb = s - p, err = (p - (s - bb)) + (c - bb); /* TwoSum(p, c) - s */
  if (err != 0) s = nextafter(s, err > 0 ? INFINITY : -INFINITY);
  return tl_round_to_dtype(s, t);
}

static bool need_args(sx *x, const tl_expr *e, int k) {
  if (e->u.call.n != k)
    return sx_fail(x, "T.%s takes %d argument%s, got %d", tl_intrinsics[e->u.call.op].name, k, k == 1 ? "" : "s",
                   e->u.call.n);
  return true;
}

/* cond ? tv : fv per lane in dtype t (Select and T.if_then_else); a scalar
 * condition chooses for all lanes of its thread.  Where tl_select_one_arm
 * says so (a condition guarding a load), each arm runs only for the threads
 * that pick it, as on the GPU; otherwise both arms for every active thread. */
bool sx_eval_select(sx *x, const tl_expr *cond, const tl_expr *tv, const tl_expr *fv, tl_dtype t, const uint8_t *mask,
                    sx_val *out) {
  int L = lanes_of(t);
  size_t cnt = (size_t)x->T * (size_t)L;
  sx_val c0, c, a, b;
  if (!sx_eval(x, cond, mask, &c0) || !sx_to_cond(x, &c0, &c)) return false;
  const uint8_t *tm = mask, *fm = mask;
  if (tl_select_one_arm(cond, tv, fv) && lanes_of(c.t) == 1) {
    uint8_t *m1 = sx_scratch(x, (size_t)x->T), *m0 = sx_scratch(x, (size_t)x->T);
    if (!m1 || !m0) return false;
    for (int th = 0; th < x->T; th++) {
      m1[th] = mask[th] && c.v[th].i;
      m0[th] = mask[th] && !c.v[th].i;
    }
    tm = m1, fm = m0;
  }
  if (!sx_eval_as(x, tv, t, tm, &a) || !sx_eval_as(x, fv, t, fm, &b)) return false;
  if (!sx_alloc_val(x, out, t)) return false;
  int cl = lanes_of(c.t);
  for (size_t k = 0; k < cnt; k++) {
    size_t th = k / (size_t)L, l = k % (size_t)L;
    out->v[k] = c.v[th * (size_t)cl + (cl == 1 ? 0 : l)].i ? a.v[k] : b.v[k];
  }
  return true;
}

/* T.reinterpret(dtype, v): each thread's v stored in its dtype's encoding and
 * loaded back as dtype (the widths agree: tl_reinterpret_ok). */
static bool eval_reinterpret(sx *x, const tl_expr *e, const uint8_t *mask, sx_val *out) {
  if (!need_args(x, e, 2)) return false;
  const tl_expr *a = e->u.call.args[1];
  if (!tl_reinterpret_ok(e->dtype, a->dtype))
    return sx_fail(x, "T.reinterpret of %s as %s: the widths differ", tl_dtype_name(a->dtype), tl_dtype_name(e->dtype));
  sx_val v;
  if (!sx_eval(x, a, mask, &v) || !sx_alloc_val(x, out, e->dtype)) return false;
  for (int th = 0; th < x->T; th++) {
    uint8_t bytes[8];
    sx_el_store(a->dtype, bytes, v.v[th]);
    out->v[th] = sx_el_load(e->dtype, bytes);
  }
  return true;
}

/* T.get_thread_binding / get_block_binding / get_lane_idx / get_warp_idx. */
static bool eval_thread_index(sx *x, const tl_expr *e, sx_val *out) {
  tl_intrin op = (tl_intrin)e->u.call.op;
  const char *name = tl_intrinsic_name(e->u.call.op);
  int n = e->u.call.n;
  tl_expr *const *args = e->u.call.args;
  tl_dtype t = e->dtype;
  int64_t k = 0;
  if (n > 1 || (n == 1 && !tl_expr_is_const_int(args[0], &k)) || k < 0 || k > 2) {
    if (op == TL_INTRIN_GET_THREAD_BINDING || op == TL_INTRIN_GET_BLOCK_BINDING)
      return sx_fail(x, "T.%s needs a constant dimension 0, 1 or 2", name);
  }
  sx_val r;
  if (!sx_alloc_val(x, &r, TL_INT32)) return false;
  for (int th = 0; th < x->T; th++) {
    int64_t v = op == TL_INTRIN_GET_THREAD_BINDING  ? (k == 0 ? x->tbase + th : 0)
                : op == TL_INTRIN_GET_BLOCK_BINDING ? x->block[k]
                : op == TL_INTRIN_GET_LANE_IDX      ? ((x->tbase + th) & 31)
                                                    : ((x->tbase + th) >> 5);
    r.v[th].i = v;
  }
  return sx_convert(x, &r, t, out);
}

/* T.infinity / T.max_value / T.min_value of the call's dtype. */
static bool eval_limit(sx *x, const tl_expr *e, sx_val *out) {
  tl_intrin op = (tl_intrin)e->u.call.op;
  tl_dtype t = e->dtype;
  int L = lanes_of(t);
  size_t cnt = (size_t)x->T * (size_t)L;
  if (!sx_alloc_val(x, out, t)) return false;
  bool inf = op == TL_INTRIN_INFINITY, mx = op == TL_INTRIN_MAX_VALUE;
  if (is_fl(t)) {
    double v = limit_value(t, mx, inf);
    for (size_t k = 0; k < cnt; k++) out->v[k].f = v;
    return true;
  }
  if (inf) return sx_fail(x, "T.infinity of %s: not a float dtype", tl_dtype_name(t));
  int64_t v;
  if (is_bool(t)) v = mx;
  else if (is_uint(t)) v = mx ? sx_wrap(t, -1) : 0;
  else
    v = mx ? sx_wrap(t, (int64_t)(~(uint64_t)0 >> (65 - t.bits))) : sx_wrap(t, (int64_t)(UINT64_C(1) << (t.bits - 1)));
  for (size_t k = 0; k < cnt; k++) out->v[k].i = v;
  return true;
}

/* T.min / max / floordiv / floormod / truncdiv / truncmod / ceildiv. */
static bool eval_division(sx *x, const tl_expr *e, const uint8_t *mask, sx_val *out) {
  tl_intrin op = (tl_intrin)e->u.call.op;
  tl_expr *const *args = e->u.call.args;
  tl_dtype t = e->dtype;
  int L = lanes_of(t);
  size_t cnt = (size_t)x->T * (size_t)L;
  if (!need_args(x, e, 2)) return false;
  sx_val a, b;
  if (!sx_eval_as(x, args[0], t, mask, &a) || !sx_eval_as(x, args[1], t, mask, &b)) return false;
  bool fl = is_fl(t);
  tl_dtype st = scalar_of(t);
  if (op == TL_INTRIN_TRUNCMOD) {
    if (!sx_alloc_val(x, out, t)) return false;
    for (size_t k = 0; k < cnt; k++) {
      if (fl) {
        out->v[k].f = is_f64(t) ? fmod(a.v[k].f, b.v[k].f) : sx_round_to(fmodf((float)a.v[k].f, (float)b.v[k].f), st);
      } else {
        if (b.v[k].i == 0) {
          if (mask[k / (size_t)L]) return sx_fail(x, "integer division by zero in thread %d", x->tbase + (int)(k / L));
          continue;
        }
        if (is_uint(t)) out->v[k].i = sx_wrap(st, (int64_t)((uint64_t)a.v[k].i % (uint64_t)b.v[k].i));
        else out->v[k].i = b.v[k].i == -1 ? 0 : sx_wrap(st, a.v[k].i % b.v[k].i);
      }
    }
    return true;
  }
  if (op == TL_INTRIN_CEILDIV) {
    if (fl) {
      if (!sx_binop_vals(x, TL_OP_DIV, &a, &b, t, mask, out)) return false;
      for (size_t k = 0; k < cnt; k++) out->v[k].f = ceil(out->v[k].f);
      return true;
    }
    sx_val s;
    if (!sx_alloc_val(x, &s, t)) return false;
    for (size_t k = 0; k < cnt; k++) s.v[k].i = sx_wrap(st, (int64_t)((uint64_t)a.v[k].i + (uint64_t)b.v[k].i - 1));
    return sx_binop_vals(x, TL_OP_FLOORDIV, &s, &b, t, mask, out);
  }
  tl_binop bop = op == TL_INTRIN_MIN        ? TL_OP_MIN
                 : op == TL_INTRIN_MAX      ? TL_OP_MAX
                 : op == TL_INTRIN_FLOORDIV ? TL_OP_FLOORDIV
                 : op == TL_INTRIN_FLOORMOD ? TL_OP_FLOORMOD
                                            : TL_OP_DIV;
  return sx_binop_vals(x, bop, &a, &b, t, mask, out);
}

/* T.isnan / T.isinf / T.isfinite (an integer is finite). */
static bool eval_classify(sx *x, const tl_expr *e, const uint8_t *mask, sx_val *out) {
  tl_intrin op = (tl_intrin)e->u.call.op;
  tl_expr *const *args = e->u.call.args;
  if (!need_args(x, e, 1)) return false;
  sx_val v;
  if (!sx_eval(x, args[0], mask, &v)) return false;
  int vl = lanes_of(v.t);
  if (!sx_alloc_val(x, out, with_lanes(TL_BOOL, vl))) return false;
  size_t nn = (size_t)x->T * (size_t)vl;
  bool fl = is_fl(v.t);
  for (size_t k = 0; k < nn; k++) {
    double f = fl ? v.v[k].f : 0.0;
    out->v[k].i = op == TL_INTRIN_ISNAN   ? (fl && isnan(f))
                  : op == TL_INTRIN_ISINF ? (fl && isinf(f))
                                          : (!fl || isfinite(f));
  }
  return true;
}

bool sx_eval_call(sx *x, const tl_expr *e, const uint8_t *mask, sx_val *out) {
  tl_intrin op = (tl_intrin)e->u.call.op;
  const char *name = tl_intrinsic_name(e->u.call.op);
  tl_expr *const *args = e->u.call.args;
  tl_dtype t = e->dtype;
  int L = lanes_of(t);
  size_t cnt = (size_t)x->T * (size_t)L;
  switch (op) {
  case TL_INTRIN_GET_THREAD_BINDING:
  case TL_INTRIN_GET_BLOCK_BINDING:
  case TL_INTRIN_GET_LANE_IDX:
  case TL_INTRIN_GET_WARP_IDX: return eval_thread_index(x, e, out);
  case TL_INTRIN_SHFL_XOR:
  case TL_INTRIN_SHFL_DOWN:
  case TL_INTRIN_SHFL_UP:
  case TL_INTRIN_SHFL_SYNC: return sx_shuffle(x, op, e, mask, out);
  case TL_INTRIN_REINTERPRET: return eval_reinterpret(x, e, mask, out);
  case TL_INTRIN_INFINITY:
  case TL_INTRIN_MAX_VALUE:
  case TL_INTRIN_MIN_VALUE: return eval_limit(x, e, out);
  case TL_INTRIN_SYNC_THREADS:
  case TL_INTRIN_DEBUG_PRINT:
  case TL_INTRIN_DEVICE_ASSERT:
  case TL_INTRIN_NO_SET_MAX_NREG:
  TL_INTRIN_CASES_WS_SCOPE:
    return sx_fail(x, "T.%s%s has no value", name, op == TL_INTRIN_SYNC_THREADS ? "()" : "");
  case TL_INTRIN_SYNC_GRID: /* tile IR: split-kernels makes it the boundary of two launches */
    return sx_fail(x, "T.sync_grid() in SIMT IR (pass split-kernels splits its kernel)");
  case TL_INTRIN_IF_THEN_ELSE:
    return need_args(x, e, 3) && sx_eval_select(x, args[0], args[1], args[2], t, mask, out);
  TL_INTRIN_CASES_MINMAX_DIV:
    return eval_division(x, e, mask, out);
  case TL_INTRIN_ABS: {
    if (!need_args(x, e, 1)) return false;
    sx_val v;
    if (!sx_eval_as(x, args[0], t, mask, &v) || !sx_alloc_val(x, out, t)) return false;
    for (size_t k = 0; k < cnt; k++) {
      if (is_fl(t)) out->v[k].f = fabs(v.v[k].f);
      else if (is_uint(t) || is_bool(t)) out->v[k].i = v.v[k].i;
      else out->v[k].i = sx_wrap(t, v.v[k].i < 0 ? (int64_t)(0 - (uint64_t)v.v[k].i) : v.v[k].i);
    }
    return true;
  }
  case TL_INTRIN_ISNAN:
  case TL_INTRIN_ISINF:
  case TL_INTRIN_ISFINITE: return eval_classify(x, e, mask, out);
  case TL_INTRIN_CLAMP: {
    if (!need_args(x, e, 3)) return false;
    sx_val v, lo, hi, m1;
    if (!sx_eval_as(x, args[0], t, mask, &v) || !sx_eval_as(x, args[1], t, mask, &lo) ||
        !sx_eval_as(x, args[2], t, mask, &hi))
      return false;
    return sx_binop_vals(x, TL_OP_MAX, &v, &lo, t, mask, &m1) && sx_binop_vals(x, TL_OP_MIN, &m1, &hi, t, mask, out);
  }
  case TL_INTRIN_FMA: {
    if (!need_args(x, e, 3)) return false;
    sx_val a, b, c;
    if (!sx_eval_as(x, args[0], t, mask, &a) || !sx_eval_as(x, args[1], t, mask, &b) ||
        !sx_eval_as(x, args[2], t, mask, &c) || !sx_alloc_val(x, out, t))
      return false;
    tl_dtype st = scalar_of(t);
    for (size_t k = 0; k < cnt; k++) {
      if (!is_fl(t)) {
        out->v[k].i = sx_wrap(st, (int64_t)((uint64_t)a.v[k].i * (uint64_t)b.v[k].i + (uint64_t)c.v[k].i));
      } else if (is_f64(t)) {
        out->v[k].f = fma(a.v[k].f, b.v[k].f, c.v[k].f);
      } else if (is_narrow(t)) {
        out->v[k].f = fma_narrow(a.v[k].f, b.v[k].f, c.v[k].f, st);
      } else {
        float r = fmaf((float)a.v[k].f, (float)b.v[k].f, (float)c.v[k].f);
        out->v[k].f = t.code == TL_TYPE_TFLOAT ? tl_round_to_dtype(r, st) : (double)r;
      }
    }
    return true;
  }
  case TL_INTRIN_POW:
  case TL_INTRIN_FMOD: {
    if (!need_args(x, e, 2)) return false;
    if (!is_fl(t)) return sx_fail(x, "T.%s needs a float argument, not %s", name, tl_dtype_name(t));
    sx_val a, b;
    if (!sx_eval_as(x, args[0], t, mask, &a) || !sx_eval_as(x, args[1], t, mask, &b) || !sx_alloc_val(x, out, t))
      return false;
    tl_dtype st = scalar_of(t);
    for (size_t k = 0; k < cnt; k++) {
      double r;
      if (is_f64(t)) r = op == TL_INTRIN_POW ? pow(a.v[k].f, b.v[k].f) : fmod(a.v[k].f, b.v[k].f);
      else r = op == TL_INTRIN_POW ? powf((float)a.v[k].f, (float)b.v[k].f) : fmodf((float)a.v[k].f, (float)b.v[k].f);
      out->v[k].f = sx_round_to(r, st);
    }
    return true;
  }
  TL_INTRIN_CASES_FLOAT_MATH:
  TL_INTRIN_CASES_FAST_MATH:
  case TL_INTRIN_FLOOR:
  case TL_INTRIN_CEIL:
  case TL_INTRIN_ROUND:
  case TL_INTRIN_TRUNC: {
    if (!need_args(x, e, 1)) return false;
    if (!is_fl(t)) return sx_fail(x, "T.%s needs a float argument, not %s", name, tl_dtype_name(t));
    sx_val a;
    if (!sx_eval_as(x, args[0], t, mask, &a) || !sx_alloc_val(x, out, t)) return false;
    tl_dtype st = scalar_of(t);
    for (size_t k = 0; k < cnt; k++) {
      double r = fmath(op, a.v[k].f, is_f64(t));
      out->v[k].f = sx_round_to(r, st);
    }
    return true;
  }
  TL_INTRIN_CASES_SIMT_STMT:
    return sx_fail(x, "T.%s is a statement, not a value", name);
  case TL_INTRIN_PTX_ATOMIC_ADD:
  case TL_INTRIN_PTX_ATOMIC_MAX:
  case TL_INTRIN_PTX_ATOMIC_MIN: return sx_eval_atomic(x, e, mask, out);
  }
  return sx_fail(x, "T.%s is not supported by the SIMT executor", name);
}
