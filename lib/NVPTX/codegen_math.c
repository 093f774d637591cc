/* Code generation of arithmetic, conversions and math functions (see
 * codegen_internal.h):
 *  - float math: f32/f64 directly; f16/bf16 are widened to f32, computed and
 *    rounded back (exact for + - * / sqrt, since 24 >= 2*11+2, and what CUDA
 *    does for transcendental functions), except + - * which use native half
 *    instructions for f16 everywhere and for bf16 on sm_90 (PTX ISA §9.7.4);
 *  - no fast-math flags are ever set, so nothing is contracted into fma:
 *    T.fma is the only fused operation (llvm.fma);
 *  - accurate exp/log/tanh/erf/pow/... are calls of libdevice (__nv_expf,
 *    __nv_exp, ...); fast T.__exp & co. use ex2/lg2/sin/cos.approx;
 *  - casts: float → int saturate like cvt.rzi (llvm.fpto[su]i.sat, NaN → 0);
 *    float → f16/bf16 round to nearest even; where the target has no direct
 *    conversion to bf16 (sm_80/86/89 from f64 or int), the value is first
 *    rounded to f32 with round-to-odd, which makes the second rounding exact. */
#include "NVPTX/codegen_internal.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

static LLVMValueRef fpext_to(cg *g, LLVMValueRef v, LLVMTypeRef lane) {
  return LLVMBuildFPExt(g->B, v, shaped(LLVMTypeOf(v), lane), "");
}
static LLVMValueRef fptrunc_to(cg *g, LLVMValueRef v, LLVMTypeRef lane) {
  return LLVMBuildFPTrunc(g->B, v, shaped(LLVMTypeOf(v), lane), "");
}

/* ------------------------------------------------------------ conversions */
/* f64 (scalar or vector) → f32 rounded to odd: truncate toward zero and set
 * the last bit when inexact.  A following rounding to a format with at most
 * 22 significand bits is then exactly the direct rounding of the f64. */
static LLVMValueRef f64_to_f32_odd(cg *g, LLVMValueRef d) {
  LLVMTypeRef f32t = shaped(LLVMTypeOf(d), g->t_f32), i32t = shaped(LLVMTypeOf(d), g->t_i32);
  LLVMValueRef f = LLVMBuildFPTrunc(g->B, d, f32t, "");
  LLVMValueRef back = LLVMBuildFPExt(g->B, f, LLVMTypeOf(d), "");
  LLVMValueRef inexact = LLVMBuildFCmp(g->B, LLVMRealONE, back, d, "");
  LLVMValueRef ab = cg_call_ovl1(g, NV_FABS, &back, 1), ad = cg_call_ovl1(g, NV_FABS, &d, 1);
  if (!ab || !ad) return NULL;
  LLVMValueRef away = LLVMBuildFCmp(g->B, LLVMRealOGT, ab, ad, "");
  LLVMValueRef bits = LLVMBuildBitCast(g->B, f, i32t, "");
  LLVMValueRef tz = LLVMBuildSelect(g->B, away, LLVMBuildSub(g->B, bits, cint(i32t, 1), ""), bits, "");
  LLVMValueRef odd = LLVMBuildOr(g->B, tz, cint(i32t, 1), "");
  LLVMValueRef res = LLVMBuildSelect(g->B, inexact, odd, bits, "");
  return LLVMBuildBitCast(g->B, res, f32t, "");
}

/* f32 value rounded to tfloat32 (10-bit mantissa, nearest even); NaN/inf kept. */
static LLVMValueRef round_tf32(cg *g, LLVMValueRef f) {
  LLVMTypeRef i32t = shaped(LLVMTypeOf(f), g->t_i32);
  LLVMValueRef bits = LLVMBuildBitCast(g->B, f, i32t, "");
  LLVMValueRef exp = LLVMBuildAnd(g->B, bits, cint(i32t, 0x7F800000u), "");
  LLVMValueRef special = LLVMBuildICmp(g->B, LLVMIntEQ, exp, cint(i32t, 0x7F800000u), "");
  LLVMValueRef lsb = LLVMBuildAnd(g->B, LLVMBuildLShr(g->B, bits, cint(i32t, 13), ""), cint(i32t, 1), "");
  LLVMValueRef r = LLVMBuildAdd(g->B, bits, LLVMBuildAdd(g->B, lsb, cint(i32t, 0xFFF), ""), "");
  r = LLVMBuildAnd(g->B, r, cint(i32t, ~(uint64_t)0x1FFF & 0xFFFFFFFFu), "");
  r = LLVMBuildSelect(g->B, special, bits, r, "");
  return LLVMBuildBitCast(g->B, r, LLVMTypeOf(f), "");
}

/* Any float register value (f16, bf16, f32, f64; scalar or vector) as f32 or f64. */
static LLVMValueRef widen_float(cg *g, LLVMValueRef v, tl_dtype from, bool to_f64) {
  if (is_f64(from)) return to_f64 ? v : LLVMBuildFPTrunc(g->B, v, shaped(LLVMTypeOf(v), g->t_f32), "");
  if (is_narrow_float(from)) v = fpext_to(g, v, g->t_f32);
  if (to_f64) v = fpext_to(g, v, g->t_f64);
  return v;
}

/* Conversions from and to float8_e4m3 / float8_e5m2 (values held as i8):
 * fp8 → float16 exactly with cvt.rn.f16x2.{e4m3x2,e5m2x2} (the byte in the
 * low half), then on as from float16; float32 (and f16, bf16, ints through
 * float32) → fp8 with cvt.rn.satfinite.{e4m3x2,e5m2x2}.f32: round to nearest
 * even, beyond the largest finite to it, NaN to NaN (PTX ISA §9.7.9.21;
 * sm_89, PTX 7.8: tl_target.fp8_cvt), which is tl_fp8_encode, the CPU
 * models' rounding, for every float32 value.  float64 sources are refused:
 * rounding them through float32 could round twice.  Vectors lane by lane. */
static LLVMValueRef convert_fp8(cg *g, LLVMValueRef v, tl_dtype from, tl_dtype to, tl_loc loc) {
  if (!g->target->fp8_cvt) {
    cg_error(g, loc, "conversion from %s to %s needs sm_89 or newer (cvt with .e4m3x2/.e5m2x2; the target is %s)",
             tl_dtype_name(from), tl_dtype_name(to), g->target->name);
    return NULL;
  }
  if (from.lanes > 1) {
    LLVMTypeRef tt = cg_type_of(g, to, false, loc);
    if (!tt) return NULL;
    LLVMValueRef r = LLVMGetUndef(tt);
    for (unsigned i = 0; i < from.lanes; i++) {
      LLVMValueRef idx = cint(g->t_i32, i);
      LLVMValueRef x = convert_fp8(g, LLVMBuildExtractElement(g->B, v, idx, ""), scalar_of(from), scalar_of(to), loc);
      if (!x) return NULL;
      r = LLVMBuildInsertElement(g->B, r, x, idx, "");
    }
    return r;
  }
  if (g->target->sm < 90) cg_mark_fp8_module(g); /* sm_89: PTX 8.1 for these cvt forms */
  if (tl_dtype_is_fp8(from)) {
    const char *text = from.code == TL_TYPE_FLOAT8_E4M3 ? "cvt.rn.f16x2.e4m3x2 $0, $1;" : "cvt.rn.f16x2.e5m2x2 $0, $1;";
    LLVMValueRef pair =
        cg_call_asm_ex(g, g->t_i32, text, "=r,h", (LLVMValueRef[]){LLVMBuildZExt(g->B, v, g->t_i16, "")}, 1, false);
    LLVMValueRef h = LLVMBuildBitCast(g->B, LLVMBuildTrunc(g->B, pair, g->t_i16, ""), g->t_f16, "");
    if (!tl_dtype_is_fp8(to)) return cg_convert(g, h, TL_FLOAT16, to, loc);
    v = fpext_to(g, h, g->t_f32); /* fp8 → other fp8: exact in float32, rounded once below */
    from = TL_FLOAT32;
  }
  if (is_f64(from)) {
    cg_error(g, loc,
             "conversion from float64 to %s is not supported by the NVPTX code generator (it would round "
             "twice, through float32): convert to float32 first",
             tl_dtype_name(to));
    return NULL;
  }
  LLVMValueRef f = cg_convert(g, v, from, TL_FLOAT32, loc);
  if (!f) return NULL;
  char text[64];
  snprintf(text, sizeof text, "cvt.rn.satfinite.%s.f32 $0, $1, $1;",
           to.code == TL_TYPE_FLOAT8_E4M3 ? "e4m3x2" : "e5m2x2");
  LLVMValueRef pair = cg_call_asm_ex(g, g->t_i16, text, "=h,f", &f, 1, false);
  return LLVMBuildTrunc(g->B, pair, g->t_i8, "");
}

/* Converts register value v of dtype `from` to dtype `to` (lanes must match,
 * or from is scalar and gets splatted). */
LLVMValueRef cg_convert(cg *g, LLVMValueRef v, tl_dtype from, tl_dtype to, tl_loc loc) {
  if (!v) return NULL;
  if (from.lanes == 1 && to.lanes > 1) {
    v = cg_convert(g, v, from, scalar_of(to), loc);
    return v ? cg_splat(g, v, to.lanes) : NULL;
  }
  if (from.lanes != to.lanes) {
    cg_error(g, loc, "cannot cg_convert %s to %s (lane counts differ)", tl_dtype_name(from), tl_dtype_name(to));
    return NULL;
  }
  if (tl_dtype_eq(from, to)) return v;
  if (tl_dtype_is_fp8(from) || tl_dtype_is_fp8(to)) return convert_fp8(g, v, from, to, loc);
  LLVMTypeRef tt = cg_type_of(g, to, false, loc);
  if (!tt || !cg_type_of(g, from, false, loc)) return NULL;
  LLVMTypeRef tlane = cg_lane_type(g, to, false, loc);
  if (from.code == TL_TYPE_HANDLE || to.code == TL_TYPE_HANDLE) {
    cg_error(g, loc, "cannot cg_convert %s to %s", tl_dtype_name(from), tl_dtype_name(to));
    return NULL;
  }
  bool ffloat = tl_dtype_is_float(from), tfloat = tl_dtype_is_float(to);
  /* → bool */
  if (is_bool(to)) {
    if (ffloat) return LLVMBuildFCmp(g->B, LLVMRealUNE, v, cfp(LLVMTypeOf(v), 0.0), "");
    return LLVMBuildICmp(g->B, LLVMIntNE, v, cint(LLVMTypeOf(v), 0), "");
  }
  /* int/bool → int */
  if (!ffloat && !tfloat) {
    unsigned fb = LLVMGetIntTypeWidth(cg_lane_type(g, from, false, loc));
    unsigned tb = LLVMGetIntTypeWidth(tlane);
    if (fb == tb) return v;
    if (fb > tb) return LLVMBuildTrunc(g->B, v, tt, "");
    if (is_uint(from) || is_bool(from)) return LLVMBuildZExt(g->B, v, tt, "");
    return LLVMBuildSExt(g->B, v, tt, "");
  }
  /* float → int (saturating, NaN → 0, like cvt.rzi) */
  if (ffloat && !tfloat) {
    LLVMValueRef w = is_f64(from) ? v : widen_float(g, v, from, false);
    LLVMTypeRef ovl[2] = {tt, LLVMTypeOf(w)};
    return cg_call_intrinsic(g, is_uint(to) ? NV_FPTOUI_SAT : NV_FPTOSI_SAT, ovl, 2, &w, 1);
  }
  /* int/bool → float */
  if (!ffloat && tfloat) {
    bool uns = is_uint(from) || is_bool(from);
    if (is_bf16(to) && !g->target->native_bf16_arith) {
      /* No direct int → bf16 conversion before sm_90: via f64 (exact for
       * ints up to 32 bits) and a round-to-odd f32. */
      LLVMTypeRef dt = shaped(LLVMTypeOf(v), g->t_f64);
      LLVMValueRef d = uns ? LLVMBuildUIToFP(g->B, v, dt, "") : LLVMBuildSIToFP(g->B, v, dt, "");
      LLVMValueRef o = f64_to_f32_odd(g, d);
      return o ? fptrunc_to(g, o, g->t_bf16) : NULL;
    }
    LLVMValueRef r = uns ? LLVMBuildUIToFP(g->B, v, tt, "") : LLVMBuildSIToFP(g->B, v, tt, "");
    if (to.code == TL_TYPE_TFLOAT) r = round_tf32(g, r);
    return r;
  }
  /* float → float */
  if (to.code == TL_TYPE_TFLOAT) {
    LLVMValueRef f = is_f64(from) ? fptrunc_to(g, v, g->t_f32) : widen_float(g, v, from, false);
    return round_tf32(g, f);
  }
  if (from.code == TL_TYPE_TFLOAT) from = with_lanes(TL_FLOAT32, from.lanes);
  if (tl_dtype_eq(from, to)) return v;
  if (to.bits > from.bits || (to.bits == 32 && is_narrow_float(from))) {
    /* widening: exact */
    if (is_bf16(from)) v = fpext_to(g, v, g->t_f32);
    if (LLVMTypeOf(v) == tt) return v;
    return LLVMBuildFPExt(g->B, v, tt, "");
  }
  if (is_narrow_float(from) && is_narrow_float(to)) /* f16 <-> bf16 via f32 */
    return fptrunc_to(g, fpext_to(g, v, g->t_f32), tlane);
  if (is_bf16(to) && is_f64(from) && !g->target->native_bf16_arith) {
    LLVMValueRef o = f64_to_f32_odd(g, v);
    return o ? fptrunc_to(g, o, g->t_bf16) : NULL;
  }
  return LLVMBuildFPTrunc(g->B, v, tt, "");
}

/* Register value → i1 (scalar or vector) for conditions. */
LLVMValueRef cg_to_cond(cg *g, LLVMValueRef v, tl_dtype t, tl_loc loc) {
  if (!v) return NULL;
  if (is_bool(t)) return v;
  return cg_convert(g, v, t, with_lanes(TL_BOOL, t.lanes), loc);
}

LLVMValueRef cg_gen_cond(cg *g, const tl_expr *e) { return cg_to_cond(g, cg_gen_expr(g, e), e->dtype, e->loc); }

/* ------------------------------------------------------------- libdevice */
/* Calls __nv_<base>f (f32) or __nv_<base> (f64) lane by lane; args are
 * already f32/f64 values of the same shape. */
static LLVMValueRef libdevice_call(cg *g, const char *base, LLVMValueRef *args, unsigned n) {
  LLVMTypeRef ty = LLVMTypeOf(args[0]);
  LLVMTypeRef lane = type_is_vector(ty) ? LLVMGetElementType(ty) : ty;
  bool dbl = lane == g->t_f64;
  char name[64];
  snprintf(name, sizeof name, "__nv_%s%s", base, dbl ? "" : "f");
  LLVMTypeRef params[3] = {lane, lane, lane};
  LLVMTypeRef fty = LLVMFunctionType(lane, params, n, 0);
  LLVMValueRef fn = LLVMGetNamedFunction(g->M, name);
  if (!fn) {
    fn = LLVMAddFunction(g->M, name, fty);
    LLVMSetLinkage(fn, LLVMExternalLinkage);
  }
  if (!type_is_vector(ty)) return LLVMBuildCall2(g->B, fty, fn, args, n, "");
  unsigned lanes = LLVMGetVectorSize(ty);
  LLVMValueRef out = LLVMGetPoison(ty);
  for (unsigned i = 0; i < lanes; i++) {
    LLVMValueRef idx = LLVMConstInt(g->t_i32, i, 0), a[3];
    for (unsigned k = 0; k < n; k++) a[k] = LLVMBuildExtractElement(g->B, args[k], idx, "");
    LLVMValueRef r = LLVMBuildCall2(g->B, fty, fn, a, n, "");
    out = LLVMBuildInsertElement(g->B, out, r, idx, "");
  }
  return out;
}

/* A scalar-only nvvm intrinsic (f32 → f32) applied lane by lane. */
static LLVMValueRef nvvm_f32_unary(cg *g, int which, LLVMValueRef x) {
  LLVMValueRef fn = cg_intrinsic(g, which, NULL, 0);
  if (!fn) return NULL;
  LLVMTypeRef fty = LLVMGlobalGetValueType(fn);
  LLVMTypeRef ty = LLVMTypeOf(x);
  if (!type_is_vector(ty)) return LLVMBuildCall2(g->B, fty, fn, &x, 1, "");
  LLVMValueRef out = LLVMGetPoison(ty);
  for (unsigned i = 0; i < LLVMGetVectorSize(ty); i++) {
    LLVMValueRef idx = LLVMConstInt(g->t_i32, i, 0);
    LLVMValueRef a = LLVMBuildExtractElement(g->B, x, idx, "");
    out = LLVMBuildInsertElement(g->B, out, LLVMBuildCall2(g->B, fty, fn, &a, 1, ""), idx, "");
  }
  return out;
}

/* ------------------------------------------------------------ arithmetic */
static LLVMValueRef int_floordivmod(cg *g, LLVMValueRef a, LLVMValueRef b, bool uns, bool mod) {
  if (uns) return mod ? LLVMBuildURem(g->B, a, b, "") : LLVMBuildUDiv(g->B, a, b, "");
  LLVMTypeRef ty = LLVMTypeOf(a);
  LLVMValueRef q = LLVMBuildSDiv(g->B, a, b, ""), r = LLVMBuildSRem(g->B, a, b, "");
  LLVMValueRef nz = LLVMBuildICmp(g->B, LLVMIntNE, r, cint(ty, 0), "");
  LLVMValueRef diff = LLVMBuildICmp(g->B, LLVMIntSLT, LLVMBuildXor(g->B, r, b, ""), cint(ty, 0), "");
  LLVMValueRef adj = LLVMBuildAnd(g->B, nz, diff, "");
  if (mod) return LLVMBuildSelect(g->B, adj, LLVMBuildAdd(g->B, r, b, ""), r, "");
  return LLVMBuildSelect(g->B, adj, LLVMBuildSub(g->B, q, cint(ty, 1), ""), q, "");
}

/* Float binary arithmetic (not comparisons) on values of dtype t. */
LLVMValueRef cg_float_arith(cg *g, tl_binop op, LLVMValueRef a, LLVMValueRef b, tl_dtype t, tl_loc loc) {
  bool native = (op == TL_OP_ADD || op == TL_OP_SUB || op == TL_OP_MUL) &&
                (is_f16(t) || (is_bf16(t) && g->target->native_bf16_arith));
  LLVMTypeRef orig_lane = cg_lane_type(g, t, false, loc);
  bool narrow = is_narrow_float(t) && !native;
  if (narrow) {
    a = fpext_to(g, a, g->t_f32);
    b = fpext_to(g, b, g->t_f32);
  }
  LLVMValueRef r = NULL, args[2] = {a, b};
  switch (op) {
  case TL_OP_ADD: r = LLVMBuildFAdd(g->B, a, b, ""); break;
  case TL_OP_SUB: r = LLVMBuildFSub(g->B, a, b, ""); break;
  case TL_OP_MUL: r = LLVMBuildFMul(g->B, a, b, ""); break;
  case TL_OP_DIV:
    /* fast math: div.approx.ftz.f32 (PTX ISA §9.7.3.8, max 2 ulp), as
     * nvcc --use_fast_math (-prec-div=false) divides */
    if (g->f && g->f->pass_configs.fast_math && LLVMTypeOf(a) == g->t_f32) {
      LLVMValueRef fn = cg_intrinsic(g, NV_DIV_APPROX_FTZ, NULL, 0);
      r = fn ? LLVMBuildCall2(g->B, LLVMGlobalGetValueType(fn), fn, args, 2, "") : NULL;
    } else {
      r = LLVMBuildFDiv(g->B, a, b, "");
    }
    break;
  case TL_OP_FLOORDIV: {
    LLVMValueRef q = LLVMBuildFDiv(g->B, a, b, "");
    r = cg_call_ovl1(g, NV_FLOOR, &q, 1);
    break;
  }
  case TL_OP_FLOORMOD: {
    LLVMValueRef q = LLVMBuildFDiv(g->B, a, b, "");
    LLVMValueRef fq = cg_call_ovl1(g, NV_FLOOR, &q, 1);
    if (fq) r = LLVMBuildFSub(g->B, a, LLVMBuildFMul(g->B, fq, b, ""), "");
    break;
  }
  case TL_OP_POW: r = libdevice_call(g, "pow", args, 2); break;
  case TL_OP_MIN: r = cg_call_ovl1(g, NV_MINNUM, args, 2); break;
  case TL_OP_MAX: r = cg_call_ovl1(g, NV_MAXNUM, args, 2); break;
  default: cg_error(g, loc, "operator is not defined on %s", tl_dtype_name(t)); return NULL;
  }
  /* fast math (T.func_attr "tl.enable_fast_math"): a*b+c may become one
   * fma, as nvcc contracts by default and under --use_fast_math */
  if (r && g->f && g->f->pass_configs.fast_math && (op == TL_OP_ADD || op == TL_OP_SUB || op == TL_OP_MUL) &&
      LLVMIsAInstruction(r) && LLVMCanValueUseFastMathFlags(r))
    LLVMSetFastMathFlags(r, LLVMFastMathAllowContract);
  if (r && narrow) r = fptrunc_to(g, r, orig_lane);
  return r;
}

LLVMValueRef cg_int_arith(cg *g, tl_binop op, LLVMValueRef a, LLVMValueRef b, tl_dtype t, tl_loc loc) {
  bool uns = is_uint(t) || is_bool(t);
  if (is_bool(t) &&
      !(op == TL_OP_BITAND || op == TL_OP_BITOR || op == TL_OP_BITXOR || op == TL_OP_MIN || op == TL_OP_MAX)) {
    cg_error(g, loc, "arithmetic operator on bool values");
    return NULL;
  }
  switch (op) {
  /* signed overflow is undefined, as in the CUDA C++ TileLang generates:
   * nsw lets LLVM move constant offsets out of index arithmetic and its
   * sign extension, so shared-memory addresses become base + immediate */
  case TL_OP_ADD: return uns ? LLVMBuildAdd(g->B, a, b, "") : LLVMBuildNSWAdd(g->B, a, b, "");
  case TL_OP_SUB: return uns ? LLVMBuildSub(g->B, a, b, "") : LLVMBuildNSWSub(g->B, a, b, "");
  case TL_OP_MUL: return uns ? LLVMBuildMul(g->B, a, b, "") : LLVMBuildNSWMul(g->B, a, b, "");
  case TL_OP_DIV: return uns ? LLVMBuildUDiv(g->B, a, b, "") : LLVMBuildSDiv(g->B, a, b, "");
  case TL_OP_FLOORDIV: return int_floordivmod(g, a, b, uns, false);
  case TL_OP_FLOORMOD: return int_floordivmod(g, a, b, uns, true);
  case TL_OP_MIN:
  case TL_OP_MAX: {
    LLVMIntPredicate p = op == TL_OP_MIN ? (uns ? LLVMIntULT : LLVMIntSLT) : (uns ? LLVMIntUGT : LLVMIntSGT);
    return LLVMBuildSelect(g->B, LLVMBuildICmp(g->B, p, a, b, ""), a, b, "");
  }
  case TL_OP_BITAND: return LLVMBuildAnd(g->B, a, b, "");
  case TL_OP_BITOR: return LLVMBuildOr(g->B, a, b, "");
  case TL_OP_BITXOR: return LLVMBuildXor(g->B, a, b, "");
  case TL_OP_SHL: return LLVMBuildShl(g->B, a, b, "");
  case TL_OP_SHR: return uns ? LLVMBuildLShr(g->B, a, b, "") : LLVMBuildAShr(g->B, a, b, "");
  case TL_OP_POW: {
    /* integer power through f64 (exact up to 2^53), saturated back */
    tl_dtype fd = with_lanes(TL_DT(TL_TYPE_FLOAT, 64), t.lanes);
    LLVMValueRef fa = cg_convert(g, a, t, fd, loc), fb = cg_convert(g, b, t, fd, loc);
    if (!fa || !fb) return NULL;
    LLVMValueRef args[2] = {fa, fb};
    return cg_convert(g, libdevice_call(g, "pow", args, 2), fd, t, loc);
  }
  default: break;
  }
  cg_error(g, loc, "operator is not defined on %s", tl_dtype_name(t));
  return NULL;
}

static LLVMValueRef compare(cg *g, tl_binop op, LLVMValueRef a, LLVMValueRef b, tl_dtype t) {
  if (tl_dtype_is_float(t)) {
    if (is_narrow_float(t)) {
      a = fpext_to(g, a, g->t_f32);
      b = fpext_to(g, b, g->t_f32);
    }
    LLVMRealPredicate p = op == TL_OP_EQ   ? LLVMRealOEQ
                          : op == TL_OP_NE ? LLVMRealUNE
                          : op == TL_OP_LT ? LLVMRealOLT
                          : op == TL_OP_LE ? LLVMRealOLE
                          : op == TL_OP_GT ? LLVMRealOGT
                                           : LLVMRealOGE;
    return LLVMBuildFCmp(g->B, p, a, b, "");
  }
  bool uns = is_uint(t) || is_bool(t);
  LLVMIntPredicate p = op == TL_OP_EQ   ? LLVMIntEQ
                       : op == TL_OP_NE ? LLVMIntNE
                       : op == TL_OP_LT ? (uns ? LLVMIntULT : LLVMIntSLT)
                       : op == TL_OP_LE ? (uns ? LLVMIntULE : LLVMIntSLE)
                       : op == TL_OP_GT ? (uns ? LLVMIntUGT : LLVMIntSGT)
                                        : (uns ? LLVMIntUGE : LLVMIntSGE);
  return LLVMBuildICmp(g->B, p, a, b, "");
}

LLVMValueRef cg_gen_binary(cg *g, const tl_expr *e) {
  tl_binop op = e->u.bin.op;
  const tl_expr *ea = e->u.bin.a, *eb = e->u.bin.b;
  if (op == TL_OP_AND || op == TL_OP_OR) {
    tl_dtype bt = with_lanes(TL_BOOL, e->dtype.lanes);
    LLVMValueRef a = cg_gen_expr(g, ea), b = a ? cg_gen_expr(g, eb) : NULL;
    if (!a || !b) return NULL;
    a = cg_convert(g, cg_to_cond(g, a, ea->dtype, ea->loc), with_lanes(TL_BOOL, ea->dtype.lanes), bt, e->loc);
    b = cg_convert(g, cg_to_cond(g, b, eb->dtype, eb->loc), with_lanes(TL_BOOL, eb->dtype.lanes), bt, e->loc);
    if (!a || !b) return NULL;
    return op == TL_OP_AND ? LLVMBuildAnd(g->B, a, b, "") : LLVMBuildOr(g->B, a, b, "");
  }
  bool cmp = op >= TL_OP_EQ && op <= TL_OP_GE;
  tl_dtype t = cmp ? tl_dtype_compare_common(ea->dtype, eb->dtype) : e->dtype;
  if (op == TL_OP_SHL || op == TL_OP_SHR) t = e->dtype;
  LLVMValueRef a = cg_gen_as(g, ea, t), b = a ? cg_gen_as(g, eb, t) : NULL;
  if (!a || !b) return NULL;
  if (cmp) return compare(g, op, a, b, t);
  if (tl_dtype_is_float(t)) return cg_float_arith(g, op, a, b, t, e->loc);
  if (t.code == TL_TYPE_HANDLE) {
    cg_error(g, e->loc, "arithmetic on handles is not supported");
    return NULL;
  }
  return cg_int_arith(g, op, a, b, t, e->loc);
}

LLVMValueRef cg_gen_unary(cg *g, const tl_expr *e) {
  const tl_expr *x = e->u.un.a;
  switch (e->u.un.op) {
  case TL_OP_NEG: {
    LLVMValueRef v = cg_gen_as(g, x, e->dtype);
    if (!v) return NULL;
    if (tl_dtype_is_float(e->dtype)) return LLVMBuildFNeg(g->B, v, "");
    return LLVMBuildNeg(g->B, v, "");
  }
  case TL_OP_NOT: {
    LLVMValueRef v = cg_gen_cond(g, x);
    return v ? LLVMBuildNot(g->B, v, "") : NULL;
  }
  case TL_OP_BITNOT: {
    LLVMValueRef v = cg_gen_as(g, x, e->dtype);
    return v ? LLVMBuildNot(g->B, v, "") : NULL;
  }
  }
  cg_error(g, e->loc, "unknown unary operator");
  return NULL;
}

/* -------------------------------------------------------------- calls */
/* Accurate libdevice math: the base of __nv_<base>[f] for each cg_intrinsic
 * computed by a libdevice call (NULL for the others). */
static const char *const libm_base[TL_INTRIN_COUNT] = {
    [TL_INTRIN_EXP] = "exp",     [TL_INTRIN_EXP2] = "exp2",   [TL_INTRIN_EXP10] = "exp10", [TL_INTRIN_LOG] = "log",
    [TL_INTRIN_LOG2] = "log2",   [TL_INTRIN_LOG10] = "log10", [TL_INTRIN_LOG1P] = "log1p", [TL_INTRIN_TANH] = "tanh",
    [TL_INTRIN_ERF] = "erf",     [TL_INTRIN_SIN] = "sin",     [TL_INTRIN_COS] = "cos",     [TL_INTRIN_TAN] = "tan",
    [TL_INTRIN_RSQRT] = "rsqrt", [TL_INTRIN_POW] = "pow",     [TL_INTRIN_FMOD] = "fmod",
};

/* Float math on dtype t: widen f16/bf16 (and ints, promoted by the IR to a
 * float result dtype) to f32/f64, compute, round back. */
typedef struct fm {
  LLVMValueRef a[3];
  tl_dtype t;
  LLVMTypeRef lane;
  bool dbl;
} fm;
static bool fm_args(cg *g, const tl_expr *e, fm *m, int n) {
  m->t = e->dtype;
  if (!tl_dtype_is_float(m->t)) {
    cg_error(g, e->loc, "T.%s needs a float argument, not %s", tl_intrinsics[e->u.call.op].name, tl_dtype_name(m->t));
    return false;
  }
  m->lane = cg_lane_type(g, m->t, false, e->loc);
  m->dbl = is_f64(m->t);
  for (int i = 0; i < n; i++) {
    LLVMValueRef v = cg_gen_as(g, e->u.call.args[i], m->t);
    if (!v) return false;
    m->a[i] = widen_float(g, v, m->t, m->dbl);
  }
  return true;
}
static LLVMValueRef fm_result(cg *g, fm *m, LLVMValueRef r, tl_loc loc) {
  if (!r) return NULL;
  if (m->t.code == TL_TYPE_TFLOAT) return round_tf32(g, r);
  if (is_narrow_float(m->t)) return cg_convert(g, r, with_lanes(TL_FLOAT32, m->t.lanes), m->t, loc);
  return r;
}

/* T.infinity / T.max_value / T.min_value of the call's dtype. */
LLVMValueRef cg_gen_limit(cg *g, const tl_expr *e, tl_intrin op) {
  tl_dtype t = e->dtype;
  LLVMTypeRef ty = cg_type_of(g, t, false, e->loc);
  if (!ty) return NULL;
  bool inf = op == TL_INTRIN_INFINITY, mx = op == TL_INTRIN_MAX_VALUE;
  if (tl_dtype_is_float(t)) {
    double big = is_f16(t)    ? 65504.0
                 : is_bf16(t) ? 3.3895313892515355e38
                 : is_f64(t)  ? 1.7976931348623157e308
                              : 3.4028234663852886e38;
    if (inf) big = INFINITY;
    return cfp(ty, mx || inf ? big : -big);
  }
  if (inf) {
    cg_error(g, e->loc, "T.infinity of %s: not a float dtype", tl_dtype_name(t));
    return NULL;
  }
  if (is_bool(t)) return cint(ty, mx ? 1 : 0);
  unsigned bits = t.bits;
  uint64_t all = bits >= 64 ? ~(uint64_t)0 : (((uint64_t)1 << bits) - 1);
  if (is_uint(t)) return cint(ty, mx ? all : 0);
  uint64_t smax = all >> 1;
  return cint(ty, mx ? smax : (~smax & all));
}

/* T.min/max/floordiv/floormod/truncdiv/truncmod/ceildiv(a, b). */
LLVMValueRef cg_gen_binop_call(cg *g, const tl_expr *e, tl_intrin op) {
  tl_expr *const *args = e->u.call.args;
  tl_loc loc = e->loc;
  tl_dtype t = e->dtype;
  LLVMValueRef a = cg_gen_as(g, args[0], t), b = a ? cg_gen_as(g, args[1], t) : NULL;
  if (!b) return NULL;
  tl_binop bop = op == TL_INTRIN_MIN        ? TL_OP_MIN
                 : op == TL_INTRIN_MAX      ? TL_OP_MAX
                 : op == TL_INTRIN_FLOORDIV ? TL_OP_FLOORDIV
                 : op == TL_INTRIN_FLOORMOD ? TL_OP_FLOORMOD
                                            : TL_OP_DIV;
  bool fl = tl_dtype_is_float(t);
  if (op == TL_INTRIN_TRUNCMOD) {
    if (fl)
      return libdevice_call(g, "fmod",
                            (LLVMValueRef[]){widen_float(g, a, t, is_f64(t)), widen_float(g, b, t, is_f64(t))}, 2);
    return is_uint(t) ? LLVMBuildURem(g->B, a, b, "") : LLVMBuildSRem(g->B, a, b, "");
  }
  if (op == TL_INTRIN_CEILDIV) {
    if (fl) {
      LLVMValueRef q = cg_float_arith(g, TL_OP_DIV, a, b, t, loc);
      return q ? cg_call_ovl1(g, NV_CEIL, &q, 1) : NULL;
    }
    /* floordiv(a + b - 1, b), as TileLang defines it */
    LLVMValueRef s = LLVMBuildSub(g->B, LLVMBuildAdd(g->B, a, b, ""), cint(LLVMTypeOf(a), 1), "");
    return int_floordivmod(g, s, b, is_uint(t), false);
  }
  return fl ? cg_float_arith(g, bop, a, b, t, loc) : cg_int_arith(g, bop, a, b, t, loc);
}

/* T.abs(x): the sign bit cleared (floats), llvm.abs (signed integers). */
LLVMValueRef cg_gen_abs(cg *g, const tl_expr *e) {
  LLVMValueRef v = cg_gen_as(g, e->u.call.args[0], e->dtype);
  if (!v) return NULL;
  if (tl_dtype_is_float(e->dtype)) {
    if (is_narrow_float(e->dtype)) { /* clear the sign bit */
      LLVMTypeRef it = shaped(LLVMTypeOf(v), g->t_i16);
      LLVMValueRef bits = LLVMBuildAnd(g->B, LLVMBuildBitCast(g->B, v, it, ""), cint(it, 0x7FFF), "");
      return LLVMBuildBitCast(g->B, bits, LLVMTypeOf(v), "");
    }
    return cg_call_ovl1(g, NV_FABS, &v, 1);
  }
  if (is_uint(e->dtype) || is_bool(e->dtype)) return v;
  LLVMValueRef a2[2] = {v, LLVMConstInt(g->t_i1, 0, 0)};
  return cg_call_ovl1(g, NV_ABS, a2, 2);
}

/* T.isnan/isinf/isfinite(x). */
LLVMValueRef cg_gen_fpclass(cg *g, const tl_expr *e, tl_intrin op) {
  const tl_expr *arg = e->u.call.args[0];
  tl_dtype at = arg->dtype;
  LLVMValueRef v = cg_gen_expr(g, arg);
  if (!v) return NULL;
  if (!tl_dtype_is_float(at)) {
    LLVMTypeRef bt = shaped(LLVMTypeOf(v), g->t_i1);
    return cint(bt, op == TL_INTRIN_ISFINITE ? 1 : 0);
  }
  v = widen_float(g, v, at, is_f64(at));
  if (op == TL_INTRIN_ISNAN) return LLVMBuildFCmp(g->B, LLVMRealUNO, v, v, "");
  LLVMValueRef av = cg_call_ovl1(g, NV_FABS, &v, 1);
  if (!av) return NULL;
  LLVMValueRef inf = cfp(LLVMTypeOf(v), INFINITY);
  return LLVMBuildFCmp(g->B, op == TL_INTRIN_ISINF ? LLVMRealOEQ : LLVMRealOLT, av, inf, "");
}

/* T.clamp(x, lo, hi) = min(max(x, lo), hi). */
LLVMValueRef cg_gen_clamp(cg *g, const tl_expr *e) {
  tl_expr *const *args = e->u.call.args;
  tl_loc loc = e->loc;
  tl_dtype t = e->dtype;
  LLVMValueRef x = cg_gen_as(g, args[0], t), lo = x ? cg_gen_as(g, args[1], t) : NULL;
  LLVMValueRef hi = lo ? cg_gen_as(g, args[2], t) : NULL;
  if (!hi) return NULL;
  bool fl = tl_dtype_is_float(t);
  LLVMValueRef m = fl ? cg_float_arith(g, TL_OP_MAX, x, lo, t, loc) : cg_int_arith(g, TL_OP_MAX, x, lo, t, loc);
  if (!m) return NULL;
  return fl ? cg_float_arith(g, TL_OP_MIN, m, hi, t, loc) : cg_int_arith(g, TL_OP_MIN, m, hi, t, loc);
}

/* T.fma(a, b, c): llvm.fma on floats (native fma.rn.{f16,bf16,f32,f64}),
 * a*b + c on integers. */
LLVMValueRef cg_gen_fma(cg *g, const tl_expr *e) {
  tl_expr *const *args = e->u.call.args;
  tl_dtype t = e->dtype;
  if (!tl_dtype_is_float(t)) { /* integer fma: a*b + c */
    LLVMValueRef a = cg_gen_as(g, args[0], t), b = a ? cg_gen_as(g, args[1], t) : NULL;
    LLVMValueRef c = b ? cg_gen_as(g, args[2], t) : NULL;
    if (!c) return NULL;
    return LLVMBuildAdd(g->B, LLVMBuildMul(g->B, a, b, ""), c, "");
  }
  LLVMValueRef a3[3];
  for (int i = 0; i < 3; i++)
    if (!(a3[i] = cg_gen_as(g, args[i], t))) return NULL;
  LLVMValueRef r = cg_call_ovl1(g, NV_FMA, a3, 3);
  return r && t.code == TL_TYPE_TFLOAT ? round_tf32(g, r) : r;
}

/* Fast math: T.__exp & co. always (fast_call), and exp & co. in a fast-math
 * function (T.func_attr "tl.enable_fast_math"; there with subnormals flushed
 * to zero, as nvcc --use_fast_math does): approximate PTX instructions on
 * f32 (PTX ISA §9.7.3.19-22); f64 uses the accurate functions.  op is the
 * accurate intrinsic (TL_INTRIN_EXP for T.__exp). */
LLVMValueRef cg_gen_fast_math(cg *g, const tl_expr *e, tl_intrin op, bool fast_call) {
  int n = e->u.call.n;
  int ex2_i = fast_call ? NV_EX2_APPROX : NV_EX2_APPROX_FTZ;
  int lg2_i = fast_call ? NV_LG2_APPROX : NV_LG2_APPROX_FTZ;
  int sin_i = fast_call ? NV_SIN_APPROX : NV_SIN_APPROX_FTZ;
  int cos_i = fast_call ? NV_COS_APPROX : NV_COS_APPROX_FTZ;
  fm m;
  if (!fm_args(g, e, &m, n)) return NULL;
  if (m.dbl) return libdevice_call(g, libm_base[op], m.a, (unsigned)n);
  LLVMTypeRef ty = LLVMTypeOf(m.a[0]);
  LLVMValueRef x = m.a[0], r = NULL;
  switch (op) {
  case TL_INTRIN_EXP: r = nvvm_f32_unary(g, ex2_i, LLVMBuildFMul(g->B, x, cfp(ty, 1.4426950408889634), "")); break;
  case TL_INTRIN_EXP2: r = nvvm_f32_unary(g, ex2_i, x); break;
  case TL_INTRIN_EXP10: r = nvvm_f32_unary(g, ex2_i, LLVMBuildFMul(g->B, x, cfp(ty, 3.3219280948873622), "")); break;
  case TL_INTRIN_LOG:
  case TL_INTRIN_LOG10:
  case TL_INTRIN_LOG2: {
    r = nvvm_f32_unary(g, lg2_i, x);
    double k = op == TL_INTRIN_LOG10 ? 0.30102999566398120 : op == TL_INTRIN_LOG2 ? 1.0 : 0.69314718055994531;
    if (r && k != 1.0) r = LLVMBuildFMul(g->B, r, cfp(ty, k), "");
    break;
  }
  case TL_INTRIN_SIN: r = nvvm_f32_unary(g, sin_i, x); break;
  case TL_INTRIN_COS: r = nvvm_f32_unary(g, cos_i, x); break;
  case TL_INTRIN_TAN: {
    LLVMValueRef s = nvvm_f32_unary(g, sin_i, x), c = s ? nvvm_f32_unary(g, cos_i, x) : NULL;
    if (c) r = LLVMBuildFDiv(g->B, s, c, "");
    break;
  }
  case TL_INTRIN_TANH: r = nvvm_f32_unary(g, NV_TANH_APPROX, x); break;
  default: { /* pow: 2^(y * log2 x) */
    LLVMValueRef l = nvvm_f32_unary(g, lg2_i, x);
    if (l) r = nvvm_f32_unary(g, ex2_i, LLVMBuildFMul(g->B, m.a[1], l, ""));
    break;
  }
  }
  return fm_result(g, &m, r, e->loc);
}

/* A float math intrinsic computed in f32/f64 (fm_args): an LLVM cg_intrinsic
 * (llvm_which >= 0), sigmoid, or a libdevice call. */
LLVMValueRef cg_gen_float_math(cg *g, const tl_expr *e, tl_intrin op, int llvm_which) {
  fm m;
  if (!fm_args(g, e, &m, e->u.call.n)) return NULL;
  if (llvm_which >= 0) return fm_result(g, &m, cg_call_ovl1(g, llvm_which, m.a, 1), e->loc);
  if (op == TL_INTRIN_SIGMOID) {
    LLVMTypeRef ty = LLVMTypeOf(m.a[0]);
    LLVMValueRef nx = LLVMBuildFNeg(g->B, m.a[0], "");
    LLVMValueRef ex = libdevice_call(g, "exp", &nx, 1);
    LLVMValueRef den = LLVMBuildFAdd(g->B, cfp(ty, 1.0), ex, "");
    return fm_result(g, &m, LLVMBuildFDiv(g->B, cfp(ty, 1.0), den, ""), e->loc);
  }
  return fm_result(g, &m, libdevice_call(g, libm_base[op], m.a, (unsigned)e->u.call.n), e->loc);
}

/* T.reinterpret(dtype, x): the bits of x as dtype (an LLVM bitcast; the
 * verifier checks that the widths agree). */
LLVMValueRef cg_gen_reinterpret(cg *g, const tl_expr *e) {
  const tl_expr *x = e->u.call.args[1];
  if (!tl_reinterpret_ok(e->dtype, x->dtype)) {
    cg_error(g, e->loc, "T.reinterpret of %s as %s: the widths differ", tl_dtype_name(x->dtype),
             tl_dtype_name(e->dtype));
    return NULL;
  }
  LLVMValueRef v = cg_gen_expr(g, x);
  LLVMTypeRef t = v ? cg_type_of(g, e->dtype, false, e->loc) : NULL;
  return t ? LLVMBuildBitCast(g->B, v, t, "") : NULL;
}
