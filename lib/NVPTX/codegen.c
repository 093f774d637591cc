/* SIMT IR → LLVM IR (LLVM 19 C API), one kernel per prim_func.
 *
 * Role: the first half of lib/NVPTX (emit.c does libdevice, O3 and PTX).
 * Input is the SIMT IR of docs/simt-ir.md: what one thread of a block does.
 *
 * Algorithm: one recursive walk over statements and expressions (depth
 * limited, so deep input reports an error instead of exhausting the stack),
 * building LLVM IR with an LLVMBuilder:
 *  - kernel ABI (docs/simt-ir.md): tensor parameters are `ptr addrspace(1)`
 *    (noalias; readonly when never stored), scalars by value, then one i32
 *    per dynamic dimension.  Kernels use the ptx_kernel calling convention
 *    and carry `maxntid` both as !nvvm.annotations (read by LLVM 19) and as
 *    the "nvvm.maxntid" string attribute (read by LLVM 21+), NVPTX.md §3;
 *  - block variables read %ctaid.{x,y,z}, T.get_thread_binding(k) reads
 *    %tid.{x,y,z};
 *  - loops are phi loops (T.unroll gets llvm.loop.unroll.full metadata);
 *    LET binds an SSA value; local / local.var buffers are allocas in the
 *    entry block (SROA/mem2reg promote them); shared.dyn buffers live at
 *    16-byte aligned offsets of one `extern __shared__` array;
 *  - buffer accesses flatten n-d indices row-major in i64; a last index
 *    T.ramp(b, 1, L) is a vector access of L lanes aligned to L*elem bytes
 *    (capped at 16); other vector indices become per-lane gathers/scatters;
 *  - bool is i1 in registers and i8 in memory;
 *  - float math: f32/f64 directly; f16/bf16 are widened to f32, computed and
 *    rounded back (exact for + - * / sqrt, since 24 >= 2*11+2, and what CUDA
 *    does for transcendental functions), except + - * which use native half
 *    instructions for f16 everywhere and for bf16 on sm_90 (PTX ISA §9.7.4);
 *  - no fast-math flags are ever set, so nothing is contracted into fma:
 *    T.fma is the only fused operation (llvm.fma);
 *  - accurate exp/log/tanh/erf/pow/... are calls of libdevice (__nv_expf,
 *    __nv_exp, ...); fast T.__exp & co. use ex2/lg2/sin/cos.approx;
 *  - the GEMM-path statements (docs/simt-ir.md "Warp-level and asynchronous
 *    intrinsics"): T.ptx_ldmatrix → llvm.nvvm.ldmatrix.sync.aligned.m8n8.
 *    x{1,2,4}[.trans].b16 on the shared address of src + src_off, each i32
 *    result split into its two 16-bit halves stored to the local dst;
 *    T.ptx_mma → llvm.nvvm.mma.m16n8k16.row.col.{f32.f32,f16.f16,bf16}
 *    with operands packed from the local buffers (<2 x half> or i32 pairs)
 *    and the results stored back into c; both carry the `convergent`
 *    call-site attribute (NVPTX.md §9.6).  Fragment buffers are accessed at
 *    constant offsets once T.unroll loops are unrolled, so SROA turns them
 *    into registers (no local memory).  T.ptx_cp_async → llvm.nvvm.cp.async.
 *    {ca,cg}.shared.global.{4,8,16}, in the .s (src-size) form when the
 *    predicate is not constant true: src-size 0 reads nothing and
 *    zero-fills; its global offset is computed in 64 bits.  T.ptx_commit_group
 *    / T.ptx_wait_group(n) → cp.async.commit_group / wait_group n;
 *  - T.ptx_atomic_add → atomicrmw fadd/add monotonic on the global address,
 *    or inline red/atom.global.add.noftz.{f16x2,bf16x2} for 16-bit float
 *    pairs (gen_atomic_add);
 *  - shared.dyn buffers placed by shared-memory planning (smem_planned) use
 *    their smem_offset; the rest follow them; smem_bytes covers both;
 *  - casts: float → int saturate like cvt.rzi (llvm.fpto[su]i.sat, NaN → 0);
 *    float → f16/bf16 round to nearest even; where the target has no direct
 *    conversion to bf16 (sm_80/86/89 from f64 or int), the value is first
 *    rounded to f32 with round-to-odd, which makes the second rounding exact.
 * All LLVM intrinsic names are in one table (nv_names) so another LLVM
 * version can be added later. */
#include "NVPTX/codegen_internal.h"

#include <llvm-c/DebugInfo.h> /* LLVMTemporaryMDNode */

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define TL_CG_MAX_DEPTH 400          /* nesting of statements + expressions */
#define TL_CG_MAX_LOCAL_BYTES (1 << 20) /* per-thread local buffer limit */

/* ------------------------------------------------ intrinsic names (LLVM 19) */
enum {
  NV_TID_X, NV_TID_Y, NV_TID_Z, NV_CTAID_X, NV_CTAID_Y, NV_CTAID_Z,
  NV_NTID_X, NV_LANEID, NV_BARRIER0,
  NV_EX2_APPROX, NV_LG2_APPROX, NV_SIN_APPROX, NV_COS_APPROX, NV_TANH_APPROX,
  NV_EX2_APPROX_FTZ, NV_LG2_APPROX_FTZ, NV_SIN_APPROX_FTZ, NV_COS_APPROX_FTZ, NV_DIV_APPROX_FTZ,
  NV_SQRT, NV_FLOOR, NV_CEIL, NV_TRUNC, NV_ROUND, NV_ROUNDEVEN, NV_FABS, NV_FMA,
  NV_MINNUM, NV_MAXNUM, NV_ABS, NV_FPTOSI_SAT, NV_FPTOUI_SAT,
  NV_SHFL_BFLY, NV_SHFL_DOWN, NV_SHFL_UP, NV_SHFL_IDX,
  /* GEMM path (docs/simt-ir.md "Warp-level and asynchronous intrinsics") */
  NV_LDMATRIX_X1, NV_LDMATRIX_X2, NV_LDMATRIX_X4,
  NV_LDMATRIX_X1_T, NV_LDMATRIX_X2_T, NV_LDMATRIX_X4_T,
  NV_MMA_F16_F32, NV_MMA_F16_F16, NV_MMA_BF16_F32,
  NV_CP_ASYNC_CA4, NV_CP_ASYNC_CA8, NV_CP_ASYNC_CG16,
  NV_CP_ASYNC_CA4_S, NV_CP_ASYNC_CA8_S, NV_CP_ASYNC_CG16_S,
  NV_CP_ASYNC_COMMIT, NV_CP_ASYNC_WAIT,
  NV_NUM
};
static const char *const nv_names[NV_NUM] = {
    [NV_TID_X] = "llvm.nvvm.read.ptx.sreg.tid.x",
    [NV_TID_Y] = "llvm.nvvm.read.ptx.sreg.tid.y",
    [NV_TID_Z] = "llvm.nvvm.read.ptx.sreg.tid.z",
    [NV_CTAID_X] = "llvm.nvvm.read.ptx.sreg.ctaid.x",
    [NV_CTAID_Y] = "llvm.nvvm.read.ptx.sreg.ctaid.y",
    [NV_CTAID_Z] = "llvm.nvvm.read.ptx.sreg.ctaid.z",
    [NV_NTID_X] = "llvm.nvvm.read.ptx.sreg.ntid.x",
    [NV_LANEID] = "llvm.nvvm.read.ptx.sreg.laneid",
    [NV_BARRIER0] = "llvm.nvvm.barrier0",
    [NV_EX2_APPROX] = "llvm.nvvm.ex2.approx.f",
    [NV_LG2_APPROX] = "llvm.nvvm.lg2.approx.f",
    [NV_SIN_APPROX] = "llvm.nvvm.sin.approx.f",
    [NV_COS_APPROX] = "llvm.nvvm.cos.approx.f",
    [NV_TANH_APPROX] = "llvm.nvvm.tanh.approx.f32",
    [NV_EX2_APPROX_FTZ] = "llvm.nvvm.ex2.approx.ftz.f",
    [NV_LG2_APPROX_FTZ] = "llvm.nvvm.lg2.approx.ftz.f",
    [NV_SIN_APPROX_FTZ] = "llvm.nvvm.sin.approx.ftz.f",
    [NV_COS_APPROX_FTZ] = "llvm.nvvm.cos.approx.ftz.f",
    [NV_DIV_APPROX_FTZ] = "llvm.nvvm.div.approx.ftz.f",
    [NV_SQRT] = "llvm.sqrt",
    [NV_FLOOR] = "llvm.floor",
    [NV_CEIL] = "llvm.ceil",
    [NV_TRUNC] = "llvm.trunc",
    [NV_ROUND] = "llvm.round",
    [NV_ROUNDEVEN] = "llvm.roundeven",
    [NV_FABS] = "llvm.fabs",
    [NV_FMA] = "llvm.fma",
    [NV_MINNUM] = "llvm.minnum",
    [NV_MAXNUM] = "llvm.maxnum",
    [NV_ABS] = "llvm.abs",
    [NV_FPTOSI_SAT] = "llvm.fptosi.sat",
    [NV_FPTOUI_SAT] = "llvm.fptoui.sat",
    [NV_SHFL_BFLY] = "llvm.nvvm.shfl.sync.bfly.i32",
    [NV_SHFL_DOWN] = "llvm.nvvm.shfl.sync.down.i32",
    [NV_SHFL_UP] = "llvm.nvvm.shfl.sync.up.i32",
    [NV_SHFL_IDX] = "llvm.nvvm.shfl.sync.idx.i32",
    [NV_LDMATRIX_X1] = "llvm.nvvm.ldmatrix.sync.aligned.m8n8.x1.b16",
    [NV_LDMATRIX_X2] = "llvm.nvvm.ldmatrix.sync.aligned.m8n8.x2.b16",
    [NV_LDMATRIX_X4] = "llvm.nvvm.ldmatrix.sync.aligned.m8n8.x4.b16",
    [NV_LDMATRIX_X1_T] = "llvm.nvvm.ldmatrix.sync.aligned.m8n8.x1.trans.b16",
    [NV_LDMATRIX_X2_T] = "llvm.nvvm.ldmatrix.sync.aligned.m8n8.x2.trans.b16",
    [NV_LDMATRIX_X4_T] = "llvm.nvvm.ldmatrix.sync.aligned.m8n8.x4.trans.b16",
    /* f16 inputs: suffix <D type>.<C type>; bf16 inputs: suffix names the input */
    [NV_MMA_F16_F32] = "llvm.nvvm.mma.m16n8k16.row.col.f32.f32",
    [NV_MMA_F16_F16] = "llvm.nvvm.mma.m16n8k16.row.col.f16.f16",
    [NV_MMA_BF16_F32] = "llvm.nvvm.mma.m16n8k16.row.col.bf16",
    [NV_CP_ASYNC_CA4] = "llvm.nvvm.cp.async.ca.shared.global.4",
    [NV_CP_ASYNC_CA8] = "llvm.nvvm.cp.async.ca.shared.global.8",
    [NV_CP_ASYNC_CG16] = "llvm.nvvm.cp.async.cg.shared.global.16",
    [NV_CP_ASYNC_CA4_S] = "llvm.nvvm.cp.async.ca.shared.global.4.s",
    [NV_CP_ASYNC_CA8_S] = "llvm.nvvm.cp.async.ca.shared.global.8.s",
    [NV_CP_ASYNC_CG16_S] = "llvm.nvvm.cp.async.cg.shared.global.16.s",
    [NV_CP_ASYNC_COMMIT] = "llvm.nvvm.cp.async.commit.group",
    [NV_CP_ASYNC_WAIT] = "llvm.nvvm.cp.async.wait.group",
};

/* ------------------------------------------------------------------ state */
typedef struct var_info { LLVMValueRef v; } var_info;

/* buf_info and cg: codegen_internal.h */

#define cg_error tl_cg_error /* shared with the other files (codegen_internal.h) */
void tl_cg_error(cg *g, tl_loc loc, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  tl_diag_vreport(g->d, TL_DIAG_ERROR, loc, fmt, ap);
  va_end(ap);
  g->failed = true;
}

static bool enter(cg *g, tl_loc loc) {
  if (g->depth >= TL_CG_MAX_DEPTH) {
    if (!g->depth_reported)
      cg_error(g, loc, "code generation: IR nested more than %d levels deep", TL_CG_MAX_DEPTH);
    g->depth_reported = true;
    g->failed = true;
    return false;
  }
  g->depth++;
  return true;
}

/* ------------------------------------------------------------ small helpers */
static bool is_f16(tl_dtype t) { return t.code == TL_TYPE_FLOAT && t.bits == 16; }
static bool is_bf16(tl_dtype t) { return t.code == TL_TYPE_BFLOAT && t.bits == 16; }
static bool is_narrow_float(tl_dtype t) { return is_f16(t) || is_bf16(t); }
static bool is_f64(tl_dtype t) { return t.code == TL_TYPE_FLOAT && t.bits == 64; }
static bool is_bool(tl_dtype t) { return t.code == TL_TYPE_BOOL; }
static bool is_uint(tl_dtype t) { return t.code == TL_TYPE_UINT; }
static tl_dtype with_lanes(tl_dtype t, int lanes) { t.lanes = (uint16_t)lanes; return t; }
static tl_dtype scalar_of(tl_dtype t) { return with_lanes(t, 1); }

/* The LLVM type of a dtype's lane, in registers (bool i1) or memory (i8). */
static LLVMTypeRef lane_type(cg *g, tl_dtype t, bool mem, tl_loc loc) {
  switch ((tl_type_code)t.code) {
  case TL_TYPE_BOOL: return mem ? g->t_i8 : g->t_i1;
  case TL_TYPE_INT:
  case TL_TYPE_UINT:
    if (t.bits == 8 || t.bits == 16 || t.bits == 32 || t.bits == 64)
      return LLVMIntTypeInContext(g->C, t.bits);
    if (t.bits == 1) return mem ? g->t_i8 : g->t_i1;
    break;
  case TL_TYPE_FLOAT:
    if (t.bits == 16) return g->t_f16;
    if (t.bits == 32) return g->t_f32;
    if (t.bits == 64) return g->t_f64;
    break;
  case TL_TYPE_BFLOAT:
    if (t.bits == 16) return g->t_bf16;
    break;
  case TL_TYPE_TFLOAT:
    if (t.bits == 32) return g->t_f32;
    break;
  case TL_TYPE_HANDLE: return g->t_ptr0;
  default: break;
  }
  cg_error(g, loc, "dtype %s is not supported by the NVPTX code generator", tl_dtype_name(t));
  return NULL;
}

static LLVMTypeRef type_of(cg *g, tl_dtype t, bool mem, tl_loc loc) {
  LLVMTypeRef l = lane_type(g, t, mem, loc);
  if (!l) return NULL;
  return t.lanes > 1 ? LLVMVectorType(l, t.lanes) : l;
}

static bool type_is_vector(LLVMTypeRef ty) { return LLVMGetTypeKind(ty) == LLVMVectorTypeKind; }

/* A constant of type ty (scalar or vector, int or float), splatted. */
static LLVMValueRef splat_const(LLVMValueRef c, LLVMTypeRef ty) {
  if (!type_is_vector(ty)) return c;
  unsigned n = LLVMGetVectorSize(ty);
  LLVMValueRef elems[64];
  if (n > 64) n = 64; /* dtypes have at most 64 lanes */
  for (unsigned i = 0; i < n; i++) elems[i] = c;
  return LLVMConstVector(elems, n);
}
static LLVMValueRef cint(LLVMTypeRef ty, uint64_t v) {
  LLVMTypeRef e = type_is_vector(ty) ? LLVMGetElementType(ty) : ty;
  return splat_const(LLVMConstInt(e, v, 0), ty);
}
static LLVMValueRef cfp(LLVMTypeRef ty, double v) {
  LLVMTypeRef e = type_is_vector(ty) ? LLVMGetElementType(ty) : ty;
  return splat_const(LLVMConstReal(e, v), ty);
}
/* The same shape as `like` (scalar or vector of the same lanes) with lane type e. */
static LLVMTypeRef shaped(LLVMTypeRef like, LLVMTypeRef e) {
  return type_is_vector(like) ? LLVMVectorType(e, LLVMGetVectorSize(like)) : e;
}

/* Scalar v replicated to `lanes` lanes. */
static LLVMValueRef splat(cg *g, LLVMValueRef v, int lanes) {
  if (lanes <= 1) return v;
  LLVMTypeRef vt = LLVMVectorType(LLVMTypeOf(v), lanes);
  LLVMValueRef ins = LLVMBuildInsertElement(g->B, LLVMGetPoison(vt), v, LLVMConstInt(g->t_i32, 0, 0), "");
  LLVMValueRef mask = splat_const(LLVMConstInt(g->t_i32, 0, 0), LLVMVectorType(g->t_i32, lanes));
  return LLVMBuildShuffleVector(g->B, ins, LLVMGetPoison(vt), mask, "");
}

LLVMValueRef tl_cg_intrinsic(cg *g, const char *name, LLVMTypeRef *ovl, size_t novl) {
  unsigned id = LLVMLookupIntrinsicID(name, strlen(name));
  if (!id) {
    cg_error(g, TL_LOC_NONE, "internal error: LLVM has no intrinsic %s", name);
    return NULL;
  }
  return LLVMGetIntrinsicDeclaration(g->M, id, ovl, novl);
}
/* Declares intrinsic `which` with the given overload types. */
static LLVMValueRef intrinsic(cg *g, int which, LLVMTypeRef *ovl, size_t novl) {
  return tl_cg_intrinsic(g, nv_names[which], ovl, novl);
}
static LLVMValueRef call_intrinsic(cg *g, int which, LLVMTypeRef *ovl, size_t novl,
                                   LLVMValueRef *args, unsigned nargs) {
  LLVMValueRef fn = intrinsic(g, which, ovl, novl);
  if (!fn) return NULL;
  return LLVMBuildCall2(g->B, LLVMGlobalGetValueType(fn), fn, args, nargs, "");
}
/* Intrinsic overloaded on one type, the type of its first argument. */
static LLVMValueRef call_ovl1(cg *g, int which, LLVMValueRef *args, unsigned nargs) {
  LLVMTypeRef ty = LLVMTypeOf(args[0]);
  return call_intrinsic(g, which, &ty, 1, args, nargs);
}
static LLVMValueRef sreg(cg *g, int which) { return call_intrinsic(g, which, NULL, 0, NULL, 0); }

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
  LLVMValueRef ab = call_ovl1(g, NV_FABS, &back, 1), ad = call_ovl1(g, NV_FABS, &d, 1);
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

/* Converts register value v of dtype `from` to dtype `to` (lanes must match,
 * or from is scalar and gets splatted). */
static LLVMValueRef convert(cg *g, LLVMValueRef v, tl_dtype from, tl_dtype to, tl_loc loc) {
  if (!v) return NULL;
  if (from.lanes == 1 && to.lanes > 1) {
    v = convert(g, v, from, scalar_of(to), loc);
    return v ? splat(g, v, to.lanes) : NULL;
  }
  if (from.lanes != to.lanes) {
    cg_error(g, loc, "cannot convert %s to %s (lane counts differ)", tl_dtype_name(from), tl_dtype_name(to));
    return NULL;
  }
  if (tl_dtype_eq(from, to)) return v;
  LLVMTypeRef tt = type_of(g, to, false, loc);
  if (!tt || !type_of(g, from, false, loc)) return NULL;
  LLVMTypeRef tlane = lane_type(g, to, false, loc);
  if (from.code == TL_TYPE_HANDLE || to.code == TL_TYPE_HANDLE) {
    cg_error(g, loc, "cannot convert %s to %s", tl_dtype_name(from), tl_dtype_name(to));
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
    unsigned fb = LLVMGetIntTypeWidth(lane_type(g, from, false, loc));
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
    return call_intrinsic(g, is_uint(to) ? NV_FPTOUI_SAT : NV_FPTOSI_SAT, ovl, 2, &w, 1);
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
static LLVMValueRef to_cond(cg *g, LLVMValueRef v, tl_dtype t, tl_loc loc) {
  if (!v) return NULL;
  if (is_bool(t)) return v;
  return convert(g, v, t, with_lanes(TL_BOOL, t.lanes), loc);
}

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
  LLVMValueRef fn = intrinsic(g, which, NULL, 0);
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
static LLVMValueRef float_arith(cg *g, tl_binop op, LLVMValueRef a, LLVMValueRef b, tl_dtype t,
                                tl_loc loc) {
  bool native = (op == TL_OP_ADD || op == TL_OP_SUB || op == TL_OP_MUL) &&
                (is_f16(t) || (is_bf16(t) && g->target->native_bf16_arith));
  LLVMTypeRef orig_lane = lane_type(g, t, false, loc);
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
    if (g->f && g->f->fast_math && LLVMTypeOf(a) == g->t_f32) {
      LLVMValueRef fn = intrinsic(g, NV_DIV_APPROX_FTZ, NULL, 0);
      r = fn ? LLVMBuildCall2(g->B, LLVMGlobalGetValueType(fn), fn, args, 2, "") : NULL;
    } else {
      r = LLVMBuildFDiv(g->B, a, b, "");
    }
    break;
  case TL_OP_FLOORDIV: {
    LLVMValueRef q = LLVMBuildFDiv(g->B, a, b, "");
    r = call_ovl1(g, NV_FLOOR, &q, 1);
    break;
  }
  case TL_OP_FLOORMOD: {
    LLVMValueRef q = LLVMBuildFDiv(g->B, a, b, "");
    LLVMValueRef fq = call_ovl1(g, NV_FLOOR, &q, 1);
    if (fq) r = LLVMBuildFSub(g->B, a, LLVMBuildFMul(g->B, fq, b, ""), "");
    break;
  }
  case TL_OP_POW: r = libdevice_call(g, "pow", args, 2); break;
  case TL_OP_MIN: r = call_ovl1(g, NV_MINNUM, args, 2); break;
  case TL_OP_MAX: r = call_ovl1(g, NV_MAXNUM, args, 2); break;
  default:
    cg_error(g, loc, "operator is not defined on %s", tl_dtype_name(t));
    return NULL;
  }
  /* fast math (T.func_attr "tl.enable_fast_math"): a*b+c may become one
   * fma, as nvcc contracts by default and under --use_fast_math */
  if (r && g->f && g->f->fast_math && (op == TL_OP_ADD || op == TL_OP_SUB || op == TL_OP_MUL) &&
      LLVMIsAInstruction(r) && LLVMCanValueUseFastMathFlags(r))
    LLVMSetFastMathFlags(r, LLVMFastMathAllowContract);
  if (r && narrow) r = fptrunc_to(g, r, orig_lane);
  return r;
}

static LLVMValueRef int_arith(cg *g, tl_binop op, LLVMValueRef a, LLVMValueRef b, tl_dtype t,
                              tl_loc loc) {
  bool uns = is_uint(t) || is_bool(t);
  if (is_bool(t) && !(op == TL_OP_BITAND || op == TL_OP_BITOR || op == TL_OP_BITXOR ||
                      op == TL_OP_MIN || op == TL_OP_MAX)) {
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
    LLVMIntPredicate p = op == TL_OP_MIN ? (uns ? LLVMIntULT : LLVMIntSLT)
                                         : (uns ? LLVMIntUGT : LLVMIntSGT);
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
    LLVMValueRef fa = convert(g, a, t, fd, loc), fb = convert(g, b, t, fd, loc);
    if (!fa || !fb) return NULL;
    LLVMValueRef args[2] = {fa, fb};
    return convert(g, libdevice_call(g, "pow", args, 2), fd, t, loc);
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
    LLVMRealPredicate p = op == TL_OP_EQ ? LLVMRealOEQ : op == TL_OP_NE ? LLVMRealUNE
                        : op == TL_OP_LT ? LLVMRealOLT : op == TL_OP_LE ? LLVMRealOLE
                        : op == TL_OP_GT ? LLVMRealOGT : LLVMRealOGE;
    return LLVMBuildFCmp(g->B, p, a, b, "");
  }
  bool uns = is_uint(t) || is_bool(t);
  LLVMIntPredicate p = op == TL_OP_EQ ? LLVMIntEQ : op == TL_OP_NE ? LLVMIntNE
                     : op == TL_OP_LT ? (uns ? LLVMIntULT : LLVMIntSLT)
                     : op == TL_OP_LE ? (uns ? LLVMIntULE : LLVMIntSLE)
                     : op == TL_OP_GT ? (uns ? LLVMIntUGT : LLVMIntSGT)
                                      : (uns ? LLVMIntUGE : LLVMIntSGE);
  return LLVMBuildICmp(g->B, p, a, b, "");
}

/* --------------------------------------------------------- expressions */
static LLVMValueRef gen_expr(cg *g, const tl_expr *e);

/* Generates e converted to dtype t. */
static LLVMValueRef gen_as(cg *g, const tl_expr *e, tl_dtype t) {
  LLVMValueRef v = gen_expr(g, e);
  return v ? convert(g, v, e->dtype, t, e->loc) : NULL;
}

/* The dtype two operands are brought to: the float one if only one is a
 * float, the wider one otherwise, with the larger lane count. */
static tl_dtype common_dtype(tl_dtype a, tl_dtype b) {
  tl_dtype r = a;
  if (tl_dtype_is_float(b) && !tl_dtype_is_float(a)) r = b;
  else if (tl_dtype_is_float(a) == tl_dtype_is_float(b) && b.bits > a.bits) r = b;
  else if (is_bool(a) && !is_bool(b)) r = b;
  r.lanes = a.lanes > b.lanes ? a.lanes : b.lanes;
  return r;
}

static LLVMValueRef gen_binary(cg *g, const tl_expr *e) {
  tl_binop op = e->u.bin.op;
  const tl_expr *ea = e->u.bin.a, *eb = e->u.bin.b;
  if (op == TL_OP_AND || op == TL_OP_OR) {
    tl_dtype bt = with_lanes(TL_BOOL, e->dtype.lanes);
    LLVMValueRef a = gen_expr(g, ea), b = a ? gen_expr(g, eb) : NULL;
    if (!a || !b) return NULL;
    a = convert(g, to_cond(g, a, ea->dtype, ea->loc), with_lanes(TL_BOOL, ea->dtype.lanes), bt, e->loc);
    b = convert(g, to_cond(g, b, eb->dtype, eb->loc), with_lanes(TL_BOOL, eb->dtype.lanes), bt, e->loc);
    if (!a || !b) return NULL;
    return op == TL_OP_AND ? LLVMBuildAnd(g->B, a, b, "") : LLVMBuildOr(g->B, a, b, "");
  }
  bool cmp = op >= TL_OP_EQ && op <= TL_OP_GE;
  tl_dtype t = cmp ? common_dtype(ea->dtype, eb->dtype) : e->dtype;
  if (op == TL_OP_SHL || op == TL_OP_SHR) t = e->dtype;
  LLVMValueRef a = gen_as(g, ea, t), b = a ? gen_as(g, eb, t) : NULL;
  if (!a || !b) return NULL;
  if (cmp) return compare(g, op, a, b, t);
  if (tl_dtype_is_float(t)) return float_arith(g, op, a, b, t, e->loc);
  if (t.code == TL_TYPE_HANDLE) {
    cg_error(g, e->loc, "arithmetic on handles is not supported");
    return NULL;
  }
  return int_arith(g, op, a, b, t, e->loc);
}

static LLVMValueRef gen_unary(cg *g, const tl_expr *e) {
  const tl_expr *x = e->u.un.a;
  switch (e->u.un.op) {
  case TL_OP_NEG: {
    LLVMValueRef v = gen_as(g, x, e->dtype);
    if (!v) return NULL;
    if (tl_dtype_is_float(e->dtype)) return LLVMBuildFNeg(g->B, v, "");
    return LLVMBuildNeg(g->B, v, "");
  }
  case TL_OP_NOT: {
    LLVMValueRef v = gen_expr(g, x);
    v = to_cond(g, v, x->dtype, x->loc);
    return v ? LLVMBuildNot(g->B, v, "") : NULL;
  }
  case TL_OP_BITNOT: {
    LLVMValueRef v = gen_as(g, x, e->dtype);
    return v ? LLVMBuildNot(g->B, v, "") : NULL;
  }
  }
  cg_error(g, e->loc, "unknown unary operator");
  return NULL;
}

/* ------------------------------------------------------------- buffers */
static buf_info *get_buf(cg *g, const tl_buffer *b, tl_loc loc) {
  buf_info *bi = tl_map_get(&g->bufs, b, NULL);
  if (!bi) cg_error(g, loc, "buffer '%s' is used outside its allocation", b->name);
  return bi;
}

static LLVMValueRef to_i64(cg *g, LLVMValueRef v, tl_dtype t) {
  LLVMTypeRef i64t = shaped(LLVMTypeOf(v), g->t_i64);
  unsigned w = LLVMGetIntTypeWidth(type_is_vector(LLVMTypeOf(v)) ? LLVMGetElementType(LLVMTypeOf(v))
                                                                   : LLVMTypeOf(v));
  if (w == 64) return v;
  if (is_uint(t) || is_bool(t)) return LLVMBuildZExt(g->B, v, i64t, "");
  return LLVMBuildSExt(g->B, v, i64t, "");
}

/* Index expression → i64 (scalar or vector) */
static LLVMValueRef gen_index(cg *g, const tl_expr *e) {
  if (!tl_dtype_is_int(e->dtype) && !is_bool(e->dtype)) {
    cg_error(g, e->loc, "buffer index must be an integer, not %s", tl_dtype_name(e->dtype));
    return NULL;
  }
  LLVMValueRef v = gen_expr(g, e);
  return v ? to_i64(g, v, e->dtype) : NULL;
}

typedef struct access {
  LLVMValueRef ptr;     /* contiguous: address of the first lane; scalar: the address */
  LLVMValueRef offs;    /* gather/scatter: <L x i64> element offsets; else NULL */
  int lanes;            /* lanes of the access */
  unsigned align;
  buf_info *bi;
} access;

/* Computes the address(es) of buf[indices] for an access of `lanes` lanes. */
static bool gen_access(cg *g, const tl_buffer *buf, int n, tl_expr *const *idx, int lanes,
                       tl_loc loc, access *out) {
  buf_info *bi = get_buf(g, buf, loc);
  if (!bi) return false;
  if (n != buf->ndim) {
    cg_error(g, loc, "buffer '%s' has %d dimensions but is indexed with %d", buf->name, buf->ndim, n);
    return false;
  }
  if (n == 0) {
    cg_error(g, loc, "buffer '%s' indexed without indices", buf->name);
    return false;
  }
  memset(out, 0, sizeof *out);
  out->bi = bi;
  out->lanes = lanes;
  /* contiguous vector: last index T.ramp(base, 1, lanes), others scalar */
  bool contiguous = lanes > 1;
  const tl_expr *last = idx[n - 1];
  int64_t stride = 0;
  if (contiguous) {
    contiguous = last->kind == TL_EXPR_RAMP && last->dtype.lanes == lanes &&
                 tl_expr_is_const_int(last->u.ramp.stride, &stride) && stride == 1 &&
                 (!buf->strides || (tl_expr_is_const_int(buf->strides[n - 1], &stride) && stride == 1));
    for (int i = 0; contiguous && i < n - 1; i++) contiguous = idx[i]->dtype.lanes == 1;
  }
  if (lanes == 1) {
    for (int i = 0; i < n; i++)
      if (idx[i]->dtype.lanes != 1) {
        cg_error(g, loc, "vector index into buffer '%s' for a scalar access", buf->name);
        return false;
      }
  }
  bool gather = lanes > 1 && !contiguous;
  LLVMTypeRef offt = gather ? LLVMVectorType(g->t_i64, lanes) : g->t_i64;
  LLVMValueRef off = NULL;
  for (int i = 0; i < n; i++) {
    const tl_expr *ie = (contiguous && i == n - 1) ? last->u.ramp.base : idx[i];
    LLVMValueRef iv = gen_index(g, ie);
    if (!iv) return false;
    if (gather && ie->dtype.lanes == 1) iv = splat(g, iv, lanes);
    else if (gather && ie->dtype.lanes != lanes) {
      cg_error(g, loc, "index of %d lanes in a %d-lane access", ie->dtype.lanes, lanes);
      return false;
    }
    if (buf->strides) {
      LLVMValueRef s = gen_index(g, buf->strides[i]);
      if (!s) return false;
      if (gather) s = splat(g, s, lanes);
      LLVMValueRef term = LLVMBuildMul(g->B, iv, s, "");
      off = off ? LLVMBuildAdd(g->B, off, term, "") : term;
    } else {
      if (off) {
        LLVMValueRef s = gen_index(g, buf->shape[i]);
        if (!s) return false;
        if (gather) s = splat(g, s, lanes);
        off = LLVMBuildAdd(g->B, LLVMBuildMul(g->B, off, s, ""), iv, "");
      } else {
        off = iv;
      }
    }
  }
  (void)offt;
  unsigned eb = (unsigned)tl_dtype_bytes(scalar_of(buf->dtype));
  if (eb == 0) eb = 1;
  if (gather) {
    out->offs = off;
    out->align = eb;
    return true;
  }
  out->ptr = LLVMBuildGEP2(g->B, bi->elem, bi->base, &off, 1, "");
  out->align = eb;
  if (contiguous) {
    unsigned vb = eb * (unsigned)lanes;
    if ((vb & (vb - 1)) == 0) out->align = vb > 16 ? 16 : vb;
  }
  return true;
}

/* Memory value (bool as i8) → register value, and back. */
static LLVMValueRef from_mem(cg *g, LLVMValueRef v, tl_dtype t) {
  if (!is_bool(t)) return v;
  return LLVMBuildICmp(g->B, LLVMIntNE, v, cint(LLVMTypeOf(v), 0), "");
}
static LLVMValueRef to_mem(cg *g, LLVMValueRef v, tl_dtype t) {
  if (!is_bool(t)) return v;
  return LLVMBuildZExt(g->B, v, shaped(LLVMTypeOf(v), g->t_i8), "");
}

static LLVMValueRef gen_load(cg *g, const tl_expr *e) {
  const tl_buffer *buf = e->u.load.buffer;
  int lanes = e->dtype.lanes;
  access a;
  if (!gen_access(g, buf, e->u.load.n, e->u.load.indices, lanes, e->loc, &a)) return NULL;
  tl_dtype et = scalar_of(buf->dtype);
  LLVMTypeRef lane_mem = lane_type(g, et, true, e->loc);
  if (!lane_mem) return NULL;
  if (!a.offs) {
    LLVMTypeRef ty = lanes > 1 ? LLVMVectorType(lane_mem, lanes) : lane_mem;
    LLVMValueRef v = LLVMBuildLoad2(g->B, ty, a.ptr, "");
    LLVMSetAlignment(v, a.align);
    return from_mem(g, v, with_lanes(et, lanes));
  }
  LLVMTypeRef vt = LLVMVectorType(lane_mem, lanes);
  LLVMValueRef out = LLVMGetPoison(vt);
  for (int i = 0; i < lanes; i++) {
    LLVMValueRef li = LLVMConstInt(g->t_i32, (unsigned)i, 0);
    LLVMValueRef o = LLVMBuildExtractElement(g->B, a.offs, li, "");
    LLVMValueRef p = LLVMBuildGEP2(g->B, a.bi->elem, a.bi->base, &o, 1, "");
    LLVMValueRef v = LLVMBuildLoad2(g->B, lane_mem, p, "");
    LLVMSetAlignment(v, a.align);
    out = LLVMBuildInsertElement(g->B, out, v, li, "");
  }
  return from_mem(g, out, with_lanes(et, lanes));
}

static bool gen_store(cg *g, const tl_stmt *s) {
  const tl_buffer *buf = s->u.store.buffer;
  const tl_expr *ve = s->u.store.value;
  int lanes = ve->dtype.lanes;
  for (int i = 0; i < s->u.store.n; i++)
    if (s->u.store.indices[i]->dtype.lanes > lanes) lanes = s->u.store.indices[i]->dtype.lanes;
  tl_dtype et = scalar_of(buf->dtype);
  LLVMValueRef v = gen_as(g, ve, with_lanes(et, lanes));
  if (!v) return false;
  access a;
  if (!gen_access(g, buf, s->u.store.n, s->u.store.indices, lanes, s->loc, &a)) return false;
  a.bi->stored = true;
  v = to_mem(g, v, with_lanes(et, lanes));
  if (!a.offs) {
    LLVMValueRef st = LLVMBuildStore(g->B, v, a.ptr);
    LLVMSetAlignment(st, a.align);
    return true;
  }
  LLVMTypeRef lane_mem = lane_type(g, et, true, s->loc);
  (void)lane_mem;
  for (int i = 0; i < lanes; i++) {
    LLVMValueRef li = LLVMConstInt(g->t_i32, (unsigned)i, 0);
    LLVMValueRef o = LLVMBuildExtractElement(g->B, a.offs, li, "");
    LLVMValueRef p = LLVMBuildGEP2(g->B, a.bi->elem, a.bi->base, &o, 1, "");
    LLVMValueRef st = LLVMBuildStore(g->B, LLVMBuildExtractElement(g->B, v, li, ""), p);
    LLVMSetAlignment(st, a.align);
  }
  return true;
}

/* -------------------------------------------------------------- calls */
/* Accurate libdevice math: T.name → __nv_<base>[f]. */
static const struct { const char *name, *base; int nargs; } libm_table[] = {
    {"exp", "exp", 1},     {"exp2", "exp2", 1},   {"exp10", "exp10", 1}, {"expm1", "expm1", 1},
    {"log", "log", 1},     {"log2", "log2", 1},   {"log10", "log10", 1}, {"log1p", "log1p", 1},
    {"tanh", "tanh", 1},   {"sinh", "sinh", 1},   {"cosh", "cosh", 1},   {"erf", "erf", 1},
    {"erfc", "erfc", 1},   {"sin", "sin", 1},     {"cos", "cos", 1},     {"tan", "tan", 1},
    {"asin", "asin", 1},   {"acos", "acos", 1},   {"atan", "atan", 1},   {"asinh", "asinh", 1},
    {"acosh", "acosh", 1}, {"atanh", "atanh", 1}, {"cbrt", "cbrt", 1},   {"rsqrt", "rsqrt", 1},
    {"pow", "pow", 2},     {"fmod", "fmod", 2},   {"atan2", "atan2", 2}, {"hypot", "hypot", 2},
};

/* Float math on dtype t: widen f16/bf16 (and ints, promoted by the IR to a
 * float result dtype) to f32/f64, compute, round back. */
typedef struct fm { LLVMValueRef a[3]; tl_dtype t; LLVMTypeRef lane; bool dbl; } fm;
static bool fm_args(cg *g, const tl_expr *e, fm *m, int n) {
  m->t = e->dtype;
  if (!tl_dtype_is_float(m->t)) {
    cg_error(g, e->loc, "T.%s needs a float argument, not %s", tl_intrinsics[e->u.call.op].name,
             tl_dtype_name(m->t));
    return false;
  }
  m->lane = lane_type(g, m->t, false, e->loc);
  m->dbl = is_f64(m->t);
  for (int i = 0; i < n; i++) {
    LLVMValueRef v = gen_as(g, e->u.call.args[i], m->t);
    if (!v) return false;
    m->a[i] = widen_float(g, v, m->t, m->dbl);
  }
  return true;
}
static LLVMValueRef fm_result(cg *g, fm *m, LLVMValueRef r, tl_loc loc) {
  if (!r) return NULL;
  if (m->t.code == TL_TYPE_TFLOAT) return round_tf32(g, r);
  if (is_narrow_float(m->t)) return convert(g, r, with_lanes(TL_FLOAT32, m->t.lanes), m->t, loc);
  return r;
}

/* One 32-bit warp shuffle (shfl.sync.{bfly,down,up,idx}.b32), marked
 * convergent so no pass moves it into divergent code (NVPTX.md §9.6). */
static LLVMValueRef shfl32(cg *g, int which, LLVMValueRef mask, LLVMValueRef v, LLVMValueRef lane,
                           LLVMValueRef c) {
  LLVMValueRef args[4] = {mask, v, lane, c};
  LLVMValueRef r = call_intrinsic(g, which, NULL, 0, args, 4);
  if (r) {
    unsigned k = LLVMGetEnumAttributeKindForName("convergent", 10);
    LLVMAddCallSiteAttribute(r, LLVMAttributeFunctionIndex, LLVMCreateEnumAttribute(g->C, k, 0));
  }
  return r;
}

/* T.shfl_xor/down/up(value, lane[, width]) and T.shfl_sync(mask, value,
 * lane[, width]) on scalars of 8 to 64 bits (64-bit values as two halves). */
static LLVMValueRef gen_shfl(cg *g, const tl_expr *e, const char *name) {
  int n = e->u.call.n;
  tl_expr *const *args = e->u.call.args;
  bool sync = !strcmp(name, "shfl_sync");
  int first = sync ? 1 : 0;
  int which = sync ? NV_SHFL_IDX : !strcmp(name, "shfl_xor") ? NV_SHFL_BFLY
            : !strcmp(name, "shfl_down") ? NV_SHFL_DOWN : NV_SHFL_UP;
  if (n < first + 2 || n > first + 3) {
    cg_error(g, e->loc, "T.%s takes %d or %d arguments", name, first + 2, first + 3);
    return NULL;
  }
  tl_dtype t = e->dtype;
  if (t.lanes != 1 || t.code == TL_TYPE_HANDLE) {
    cg_error(g, e->loc, "T.%s needs a scalar value, not %s", name, tl_dtype_name(t));
    return NULL;
  }
  int64_t width = 32;
  if (n == first + 3 && (!tl_expr_is_const_int(args[first + 2], &width) || width < 1 || width > 32 ||
                         (width & (width - 1)))) {
    cg_error(g, e->loc, "T.%s: width must be a constant power of two up to 32", name);
    return NULL;
  }
  LLVMValueRef mask = sync ? gen_as(g, args[0], TL_DT(TL_TYPE_UINT, 32)) : cint(g->t_i32, 0xFFFFFFFFu);
  LLVMValueRef v = mask ? gen_as(g, args[first], t) : NULL;
  LLVMValueRef lane = v ? gen_as(g, args[first + 1], TL_INT32) : NULL;
  if (!lane) return NULL;
  uint64_t cv = ((uint64_t)(32 - width) << 8) | (which == NV_SHFL_UP ? 0 : 0x1f);
  LLVMValueRef c = cint(g->t_i32, cv);
  LLVMTypeRef vt = LLVMTypeOf(v);
  unsigned bits = (unsigned)(is_bool(t) ? 1 : t.bits);
  LLVMTypeRef it = LLVMIntTypeInContext(g->C, bits);
  LLVMValueRef iv = bits == 1 ? v : LLVMBuildBitCast(g->B, v, it, "");
  if (bits <= 32) {
    LLVMValueRef w = bits == 32 ? iv : LLVMBuildZExt(g->B, iv, g->t_i32, "");
    LLVMValueRef r = shfl32(g, which, mask, w, lane, c);
    if (!r) return NULL;
    if (bits < 32) r = LLVMBuildTrunc(g->B, r, it, "");
    return bits == 1 ? r : LLVMBuildBitCast(g->B, r, vt, "");
  }
  LLVMValueRef lo = LLVMBuildTrunc(g->B, iv, g->t_i32, "");
  LLVMValueRef hi = LLVMBuildTrunc(g->B, LLVMBuildLShr(g->B, iv, cint(g->t_i64, 32), ""), g->t_i32, "");
  LLVMValueRef rlo = shfl32(g, which, mask, lo, lane, c);
  LLVMValueRef rhi = rlo ? shfl32(g, which, mask, hi, lane, c) : NULL;
  if (!rhi) return NULL;
  LLVMValueRef r = LLVMBuildOr(g->B, LLVMBuildZExt(g->B, rlo, g->t_i64, ""),
                               LLVMBuildShl(g->B, LLVMBuildZExt(g->B, rhi, g->t_i64, ""), cint(g->t_i64, 32), ""), "");
  return LLVMBuildBitCast(g->B, r, vt, "");
}

/* T.infinity / T.max_value / T.min_value of the call's dtype. */
static LLVMValueRef gen_limit(cg *g, const tl_expr *e, const char *name) {
  tl_dtype t = e->dtype;
  LLVMTypeRef ty = type_of(g, t, false, e->loc);
  if (!ty) return NULL;
  bool inf = name[0] == 'i', mx = name[1] == 'a';
  if (tl_dtype_is_float(t)) {
    double big = is_f16(t) ? 65504.0 : is_bf16(t) ? 3.3895313892515355e38
               : is_f64(t) ? 1.7976931348623157e308 : 3.4028234663852886e38;
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

static LLVMValueRef gen_atomic_add(cg *g, const tl_expr *e);

static LLVMValueRef gen_call(cg *g, const tl_expr *e) {
  const char *name = tl_intrinsics[e->u.call.op].name;
  int n = e->u.call.n;
  tl_expr *const *args = e->u.call.args;
  tl_loc loc = e->loc;
#define NEED(k)                                                                      \
  do {                                                                               \
    if (n != (k)) {                                                                  \
      cg_error(g, loc, "T.%s takes %d argument%s, got %d", name, (k), (k) == 1 ? "" : "s", n); \
      return NULL;                                                                   \
    }                                                                                \
  } while (0)

  if (!strcmp(name, "get_thread_binding") || !strcmp(name, "get_block_binding")) {
    int64_t k = 0;
    if (n > 1 || (n == 1 && !tl_expr_is_const_int(args[0], &k)) || k < 0 || k > 2) {
      cg_error(g, loc, "T.%s needs a constant dimension 0, 1 or 2", name);
      return NULL;
    }
    bool block = name[4] == 'b';
    LLVMValueRef v = sreg(g, (block ? NV_CTAID_X : NV_TID_X) + (int)k);
    return v ? convert(g, v, TL_INT32, e->dtype, loc) : NULL;
  }
  if (!strcmp(name, "get_lane_idx") || !strcmp(name, "get_warp_idx")) {
    LLVMValueRef t = sreg(g, NV_TID_X);
    if (!t) return NULL;
    LLVMValueRef v = name[4] == 'l' ? LLVMBuildAnd(g->B, t, cint(g->t_i32, 31), "")
                                    : LLVMBuildLShr(g->B, t, cint(g->t_i32, 5), "");
    return convert(g, v, TL_INT32, e->dtype, loc);
  }
  if (!strncmp(name, "shfl_", 5)) return gen_shfl(g, e, name);
  if (!strcmp(name, "ptx_atomic_add")) return gen_atomic_add(g, e);
  if (!strcmp(name, "infinity") || !strcmp(name, "max_value") || !strcmp(name, "min_value"))
    return gen_limit(g, e, name);
  if (!strcmp(name, "sync_threads")) {
    cg_error(g, loc, "T.sync_threads() has no value");
    return NULL;
  }
  if (!strcmp(name, "if_then_else")) {
    NEED(3);
    LLVMValueRef c = gen_expr(g, args[0]);
    c = to_cond(g, c, args[0]->dtype, args[0]->loc);
    LLVMValueRef a = c ? gen_as(g, args[1], e->dtype) : NULL;
    LLVMValueRef b = a ? gen_as(g, args[2], e->dtype) : NULL;
    if (!b) return NULL;
    if (args[0]->dtype.lanes == 1 && e->dtype.lanes > 1) c = splat(g, c, e->dtype.lanes);
    return LLVMBuildSelect(g->B, c, a, b, "");
  }
  if (!strcmp(name, "min") || !strcmp(name, "max") || !strcmp(name, "floordiv") ||
      !strcmp(name, "floormod") || !strcmp(name, "truncdiv") || !strcmp(name, "truncmod") ||
      !strcmp(name, "ceildiv")) {
    NEED(2);
    tl_dtype t = e->dtype;
    LLVMValueRef a = gen_as(g, args[0], t), b = a ? gen_as(g, args[1], t) : NULL;
    if (!b) return NULL;
    tl_binop op = name[1] == 'i' ? TL_OP_MIN : name[1] == 'a' ? TL_OP_MAX
                : !strcmp(name, "floordiv") ? TL_OP_FLOORDIV : !strcmp(name, "floormod") ? TL_OP_FLOORMOD
                : TL_OP_DIV;
    bool fl = tl_dtype_is_float(t);
    if (!strcmp(name, "truncmod")) {
      if (fl) return libdevice_call(g, "fmod", (LLVMValueRef[]){widen_float(g, a, t, is_f64(t)),
                                                                  widen_float(g, b, t, is_f64(t))}, 2);
      return is_uint(t) ? LLVMBuildURem(g->B, a, b, "") : LLVMBuildSRem(g->B, a, b, "");
    }
    if (!strcmp(name, "ceildiv")) {
      if (fl) {
        LLVMValueRef q = float_arith(g, TL_OP_DIV, a, b, t, loc);
        return q ? call_ovl1(g, NV_CEIL, &q, 1) : NULL;
      }
      /* floordiv(a + b - 1, b), as TileLang defines it */
      LLVMValueRef s = LLVMBuildSub(g->B, LLVMBuildAdd(g->B, a, b, ""), cint(LLVMTypeOf(a), 1), "");
      return int_floordivmod(g, s, b, is_uint(t), false);
    }
    return fl ? float_arith(g, op, a, b, t, loc) : int_arith(g, op, a, b, t, loc);
  }
  if (!strcmp(name, "abs")) {
    NEED(1);
    LLVMValueRef v = gen_as(g, args[0], e->dtype);
    if (!v) return NULL;
    if (tl_dtype_is_float(e->dtype)) {
      if (is_narrow_float(e->dtype)) { /* clear the sign bit */
        LLVMTypeRef it = shaped(LLVMTypeOf(v), g->t_i16);
        LLVMValueRef bits = LLVMBuildAnd(g->B, LLVMBuildBitCast(g->B, v, it, ""), cint(it, 0x7FFF), "");
        return LLVMBuildBitCast(g->B, bits, LLVMTypeOf(v), "");
      }
      return call_ovl1(g, NV_FABS, &v, 1);
    }
    if (is_uint(e->dtype) || is_bool(e->dtype)) return v;
    LLVMValueRef a2[2] = {v, LLVMConstInt(g->t_i1, 0, 0)};
    return call_ovl1(g, NV_ABS, a2, 2);
  }
  if (!strcmp(name, "isnan") || !strcmp(name, "isinf") || !strcmp(name, "isfinite")) {
    NEED(1);
    tl_dtype at = args[0]->dtype;
    LLVMValueRef v = gen_expr(g, args[0]);
    if (!v) return NULL;
    if (!tl_dtype_is_float(at)) {
      LLVMTypeRef bt = shaped(LLVMTypeOf(v), g->t_i1);
      return cint(bt, name[2] == 'f' && name[3] == 'i' ? 1 : 0);
    }
    v = widen_float(g, v, at, is_f64(at));
    if (name[2] == 'n') return LLVMBuildFCmp(g->B, LLVMRealUNO, v, v, "");
    LLVMValueRef av = call_ovl1(g, NV_FABS, &v, 1);
    if (!av) return NULL;
    LLVMValueRef inf = cfp(LLVMTypeOf(v), INFINITY);
    return LLVMBuildFCmp(g->B, name[2] == 'i' ? LLVMRealOEQ : LLVMRealOLT, av, inf, "");
  }
  if (!strcmp(name, "clamp")) {
    NEED(3);
    tl_dtype t = e->dtype;
    LLVMValueRef x = gen_as(g, args[0], t), lo = x ? gen_as(g, args[1], t) : NULL;
    LLVMValueRef hi = lo ? gen_as(g, args[2], t) : NULL;
    if (!hi) return NULL;
    bool fl = tl_dtype_is_float(t);
    LLVMValueRef m = fl ? float_arith(g, TL_OP_MAX, x, lo, t, loc) : int_arith(g, TL_OP_MAX, x, lo, t, loc);
    if (!m) return NULL;
    return fl ? float_arith(g, TL_OP_MIN, m, hi, t, loc) : int_arith(g, TL_OP_MIN, m, hi, t, loc);
  }
  if (!strcmp(name, "fma")) {
    NEED(3);
    tl_dtype t = e->dtype;
    if (!tl_dtype_is_float(t)) { /* integer fma: a*b + c */
      LLVMValueRef a = gen_as(g, args[0], t), b = a ? gen_as(g, args[1], t) : NULL;
      LLVMValueRef c = b ? gen_as(g, args[2], t) : NULL;
      if (!c) return NULL;
      return LLVMBuildAdd(g->B, LLVMBuildMul(g->B, a, b, ""), c, "");
    }
    LLVMValueRef a3[3];
    for (int i = 0; i < 3; i++)
      if (!(a3[i] = gen_as(g, args[i], t))) return NULL;
    LLVMValueRef r = call_ovl1(g, NV_FMA, a3, 3); /* native fma.rn.{f16,bf16,f32,f64} */
    return r && t.code == TL_TYPE_TFLOAT ? round_tf32(g, r) : r;
  }
  /* unary float math implemented with LLVM intrinsics */
  static const struct { const char *name; int which; } llvm_unary[] = {
      {"sqrt", NV_SQRT},   {"floor", NV_FLOOR},         {"ceil", NV_CEIL},
      {"trunc", NV_TRUNC}, {"round", NV_ROUND},         {"nearbyint", NV_ROUNDEVEN},
      {"rint", NV_ROUNDEVEN}, {"fabs", NV_FABS},
  };
  for (size_t i = 0; i < sizeof llvm_unary / sizeof llvm_unary[0]; i++) {
    if (strcmp(name, llvm_unary[i].name)) continue;
    NEED(1);
    fm m;
    if (!fm_args(g, e, &m, 1)) return NULL;
    return fm_result(g, &m, call_ovl1(g, llvm_unary[i].which, m.a, 1), loc);
  }
  if (!strcmp(name, "sigmoid")) {
    NEED(1);
    fm m;
    if (!fm_args(g, e, &m, 1)) return NULL;
    LLVMTypeRef ty = LLVMTypeOf(m.a[0]);
    LLVMValueRef nx = LLVMBuildFNeg(g->B, m.a[0], "");
    LLVMValueRef ex = libdevice_call(g, "exp", &nx, 1);
    LLVMValueRef den = LLVMBuildFAdd(g->B, cfp(ty, 1.0), ex, "");
    return fm_result(g, &m, LLVMBuildFDiv(g->B, cfp(ty, 1.0), den, ""), loc);
  }
  /* fast math: T.__exp & co. always, and exp & co. in a fast-math function
   * (T.func_attr "tl.enable_fast_math"; there with subnormals flushed to
   * zero, as nvcc --use_fast_math does): approximate PTX instructions on
   * f32 (PTX ISA §9.7.3.19-22); f64 uses the accurate functions. */
  bool fast_call = name[0] == '_' && name[1] == '_';
  if (fast_call || (g->f && g->f->fast_math)) {
    const char *base = fast_call ? name + 2 : name;
    int ex2_i = fast_call ? NV_EX2_APPROX : NV_EX2_APPROX_FTZ;
    int lg2_i = fast_call ? NV_LG2_APPROX : NV_LG2_APPROX_FTZ;
    int sin_i = fast_call ? NV_SIN_APPROX : NV_SIN_APPROX_FTZ;
    int cos_i = fast_call ? NV_COS_APPROX : NV_COS_APPROX_FTZ;
    static const char *const fast[] = {"exp", "exp2", "exp10", "log", "log2", "log10",
                                       "sin", "cos", "tan", "tanh", "pow"};
    bool known = false;
    for (size_t i = 0; i < sizeof fast / sizeof fast[0]; i++) known |= !strcmp(base, fast[i]);
    if (known) {
      int want = !strcmp(base, "pow") ? 2 : 1;
      NEED(want);
      fm m;
      if (!fm_args(g, e, &m, n)) return NULL;
      if (m.dbl) return libdevice_call(g, base, m.a, (unsigned)n);
      LLVMTypeRef ty = LLVMTypeOf(m.a[0]);
      LLVMValueRef x = m.a[0], r = NULL;
      if (!strcmp(base, "exp")) {
        r = nvvm_f32_unary(g, ex2_i, LLVMBuildFMul(g->B, x, cfp(ty, 1.4426950408889634), ""));
      } else if (!strcmp(base, "exp2")) {
        r = nvvm_f32_unary(g, ex2_i, x);
      } else if (!strcmp(base, "exp10")) {
        r = nvvm_f32_unary(g, ex2_i, LLVMBuildFMul(g->B, x, cfp(ty, 3.3219280948873622), ""));
      } else if (!strcmp(base, "log") || !strcmp(base, "log10") || !strcmp(base, "log2")) {
        r = nvvm_f32_unary(g, lg2_i, x);
        double k = base[3] == '1' ? 0.30102999566398120 : base[3] == '2' ? 1.0 : 0.69314718055994531;
        if (r && k != 1.0) r = LLVMBuildFMul(g->B, r, cfp(ty, k), "");
      } else if (!strcmp(base, "sin")) {
        r = nvvm_f32_unary(g, sin_i, x);
      } else if (!strcmp(base, "cos")) {
        r = nvvm_f32_unary(g, cos_i, x);
      } else if (!strcmp(base, "tan")) {
        LLVMValueRef s = nvvm_f32_unary(g, sin_i, x), c = s ? nvvm_f32_unary(g, cos_i, x) : NULL;
        if (c) r = LLVMBuildFDiv(g->B, s, c, "");
      } else if (!strcmp(base, "tanh")) {
        r = nvvm_f32_unary(g, NV_TANH_APPROX, x);
      } else { /* pow: 2^(y * log2 x) */
        LLVMValueRef l = nvvm_f32_unary(g, lg2_i, x);
        if (l) r = nvvm_f32_unary(g, ex2_i, LLVMBuildFMul(g->B, m.a[1], l, ""));
      }
      return fm_result(g, &m, r, loc);
    }
  }
  for (size_t i = 0; i < sizeof libm_table / sizeof libm_table[0]; i++) {
    if (strcmp(name, libm_table[i].name)) continue;
    NEED(libm_table[i].nargs);
    fm m;
    if (!fm_args(g, e, &m, n)) return NULL;
    return fm_result(g, &m, libdevice_call(g, libm_table[i].base, m.a, (unsigned)n), loc);
  }
#undef NEED
  cg_error(g, loc, "T.%s is not supported by the NVPTX code generator", name);
  return NULL;
}

static LLVMValueRef gen_var(cg *g, const tl_expr *e) {
  var_info *vi = tl_map_get(&g->vars, e->u.var, NULL);
  if (!vi) {
    cg_error(g, e->loc, "variable '%s' is used outside its scope", e->u.var->name);
    return NULL;
  }
  return convert(g, vi->v, e->u.var->dtype, e->dtype, e->loc);
}

static LLVMValueRef gen_expr_inner(cg *g, const tl_expr *e) {
  switch (e->kind) {
  case TL_EXPR_INT: {
    LLVMTypeRef ty = type_of(g, e->dtype, false, e->loc);
    if (!ty) return NULL;
    if (tl_dtype_is_float(e->dtype)) return cfp(ty, (double)e->u.ival);
    return cint(ty, is_bool(e->dtype) ? (e->u.ival != 0) : (uint64_t)e->u.ival);
  }
  case TL_EXPR_FLOAT: {
    LLVMTypeRef ty = type_of(g, e->dtype, false, e->loc);
    if (!ty) return NULL;
    if (!tl_dtype_is_float(e->dtype)) {
      cg_error(g, e->loc, "float literal of dtype %s", tl_dtype_name(e->dtype));
      return NULL;
    }
    return cfp(ty, e->u.fval);
  }
  case TL_EXPR_STRING:
    cg_error(g, e->loc, "a string is not a value");
    return NULL;
  case TL_EXPR_VAR: return gen_var(g, e);
  case TL_EXPR_BINARY: return gen_binary(g, e);
  case TL_EXPR_UNARY: return gen_unary(g, e);
  case TL_EXPR_SELECT: {
    LLVMValueRef c = gen_expr(g, e->u.sel.cond);
    c = to_cond(g, c, e->u.sel.cond->dtype, e->u.sel.cond->loc);
    LLVMValueRef t = c ? gen_as(g, e->u.sel.t, e->dtype) : NULL;
    LLVMValueRef f = t ? gen_as(g, e->u.sel.f, e->dtype) : NULL;
    if (!f) return NULL;
    if (e->u.sel.cond->dtype.lanes == 1 && e->dtype.lanes > 1) c = splat(g, c, e->dtype.lanes);
    return LLVMBuildSelect(g->B, c, t, f, "");
  }
  case TL_EXPR_CAST: return gen_as(g, e->u.cast.value, e->dtype);
  case TL_EXPR_LOAD: return gen_load(g, e);
  case TL_EXPR_CALL:
    if (e->u.call.op < 0 || e->u.call.op >= tl_num_intrinsics) {
      cg_error(g, e->loc, "internal error: bad intrinsic index %d", e->u.call.op);
      return NULL;
    }
    return gen_call(g, e);
  case TL_EXPR_BUFFER:
    cg_error(g, e->loc, "buffer '%s' used as a value", e->u.buffer->name);
    return NULL;
  case TL_EXPR_RAMP: {
    int lanes = e->dtype.lanes;
    tl_dtype st = scalar_of(e->dtype);
    LLVMValueRef b = gen_as(g, e->u.ramp.base, st), s = b ? gen_as(g, e->u.ramp.stride, st) : NULL;
    if (!s) return NULL;
    LLVMTypeRef lane = LLVMTypeOf(b);
    LLVMValueRef idx[64];
    if (lanes > 64 || lanes < 1) {
      cg_error(g, e->loc, "ramp of %d lanes", lanes);
      return NULL;
    }
    bool fl = tl_dtype_is_float(st);
    for (int i = 0; i < lanes; i++)
      idx[i] = fl ? LLVMConstReal(lane, i) : LLVMConstInt(lane, (unsigned)i, 0);
    LLVMValueRef iv = LLVMConstVector(idx, (unsigned)lanes);
    LLVMValueRef bv = splat(g, b, lanes), sv = splat(g, s, lanes);
    return fl ? LLVMBuildFAdd(g->B, bv, LLVMBuildFMul(g->B, sv, iv, ""), "")
              : LLVMBuildAdd(g->B, bv, LLVMBuildMul(g->B, sv, iv, ""), "");
  }
  case TL_EXPR_BROADCAST: {
    LLVMValueRef v = gen_as(g, e->u.bcast.value, scalar_of(e->dtype));
    return v ? splat(g, v, e->dtype.lanes) : NULL;
  }
  }
  cg_error(g, e->loc, "internal error: unknown expression kind %d", (int)e->kind);
  return NULL;
}

static LLVMValueRef gen_expr(cg *g, const tl_expr *e) {
  if (!e) {
    cg_error(g, TL_LOC_NONE, "internal error: missing expression");
    return NULL;
  }
  if (!enter(g, e->loc)) return NULL;
  LLVMValueRef v = gen_expr_inner(g, e);
  g->depth--;
  return v;
}

/* ------------------------------------------------------------ statements */
static bool gen_stmt(cg *g, const tl_stmt *s);

static bool bind_var(cg *g, tl_var *v, LLVMValueRef val) {
  var_info *vi = tl_arena_alloc(&g->arena, sizeof *vi);
  if (!vi) return false;
  vi->v = val;
  if (!tl_map_put(&g->vars, v, vi)) return false;
  return true;
}

static LLVMBasicBlockRef new_block(cg *g, const char *name) {
  return LLVMAppendBasicBlockInContext(g->C, g->fn, name);
}

/* Loop metadata !{!self, !{"llvm.loop.unroll.full"}} on the back edge. */
static void mark_unroll(cg *g, LLVMValueRef br) {
  LLVMMetadataRef full = LLVMMDStringInContext2(g->C, "llvm.loop.unroll.full", 21);
  LLVMMetadataRef inner = LLVMMDNodeInContext2(g->C, &full, 1);
  LLVMMetadataRef tmp = LLVMTemporaryMDNode(g->C, NULL, 0);
  LLVMMetadataRef ops[2] = {tmp, inner};
  LLVMMetadataRef loop = LLVMMDNodeInContext2(g->C, ops, 2);
  LLVMMetadataReplaceAllUsesWith(tmp, loop);
  unsigned kind = LLVMGetMDKindIDInContext(g->C, "llvm.loop", 9);
  LLVMSetMetadata(br, kind, LLVMMetadataAsValue(g->C, loop));
}

static bool gen_for(cg *g, const tl_stmt *s) {
  tl_loop_kind kind = s->u.loop.kind;
  if (kind == TL_LOOP_PARALLEL || kind == TL_LOOP_PIPELINED) {
    cg_error(g, s->loc, "%s loop reached code generation (it must be lowered first)",
             kind == TL_LOOP_PARALLEL ? "T.Parallel" : "T.Pipelined");
    return false;
  }
  if (s->u.loop.nvars != 1) {
    cg_error(g, s->loc, "internal error: loop with %d variables", s->u.loop.nvars);
    return false;
  }
  tl_var *v = s->u.loop.vars[0];
  tl_dtype vt = v->dtype;
  if (!tl_dtype_is_int(vt) || vt.lanes != 1) {
    cg_error(g, s->loc, "loop variable '%s' must be a scalar integer", v->name);
    return false;
  }
  LLVMValueRef lo = s->u.loop.mins && s->u.loop.mins[0] ? gen_as(g, s->u.loop.mins[0], vt)
                                                         : cint(lane_type(g, vt, false, s->loc), 0);
  LLVMValueRef ext = lo ? gen_as(g, s->u.loop.extents[0], vt) : NULL;
  if (!ext) return false;
  bool uns = is_uint(vt);
  if (kind == TL_LOOP_THREAD) { /* one iteration per thread: v = lo + tid.x if tid.x < extent */
    LLVMValueRef tid = sreg(g, NV_TID_X);
    if (!tid) return false;
    tid = convert(g, tid, TL_INT32, vt, s->loc);
    LLVMValueRef in = LLVMBuildICmp(g->B, LLVMIntULT, tid, ext, "");
    LLVMBasicBlockRef body = new_block(g, "thread.body"), done = new_block(g, "thread.end");
    LLVMBuildCondBr(g->B, in, body, done);
    LLVMPositionBuilderAtEnd(g->B, body);
    if (!bind_var(g, v, LLVMBuildAdd(g->B, lo, tid, ""))) return false;
    if (!gen_stmt(g, s->u.loop.body)) return false;
    LLVMBuildBr(g->B, done);
    LLVMPositionBuilderAtEnd(g->B, done);
    return true;
  }
  LLVMValueRef step = s->u.loop.step ? gen_as(g, s->u.loop.step, vt) : cint(LLVMTypeOf(lo), 1);
  if (!step) return false;
  int64_t stepc = 1;
  bool down = s->u.loop.step && tl_expr_is_const_int(s->u.loop.step, &stepc) && stepc < 0;
  if (s->u.loop.step && stepc == 0) {
    cg_error(g, s->loc, "loop step is zero");
    return false;
  }
  /* TIR's For(min, extent): v runs over [lo, lo + extent) by step. */
  LLVMValueRef end = LLVMBuildAdd(g->B, lo, ext, "");
  LLVMBasicBlockRef pre = LLVMGetInsertBlock(g->B);
  LLVMBasicBlockRef head = new_block(g, "loop.head"), body = new_block(g, "loop.body");
  LLVMBasicBlockRef exit = new_block(g, "loop.end");
  LLVMBuildBr(g->B, head);
  LLVMPositionBuilderAtEnd(g->B, head);
  LLVMValueRef phi = LLVMBuildPhi(g->B, LLVMTypeOf(lo), v->name);
  LLVMIntPredicate p = down ? (uns ? LLVMIntUGT : LLVMIntSGT) : (uns ? LLVMIntULT : LLVMIntSLT);
  if (down) { /* negative step: from lo down to lo + extent (exclusive) */
    p = uns ? LLVMIntUGT : LLVMIntSGT;
  }
  LLVMBuildCondBr(g->B, LLVMBuildICmp(g->B, p, phi, end, ""), body, exit);
  LLVMPositionBuilderAtEnd(g->B, body);
  if (!bind_var(g, v, phi)) return false;
  if (!gen_stmt(g, s->u.loop.body)) return false;
  LLVMValueRef next = LLVMBuildAdd(g->B, phi, step, "");
  LLVMBasicBlockRef latch = LLVMGetInsertBlock(g->B);
  LLVMValueRef br = LLVMBuildBr(g->B, head);
  if (kind == TL_LOOP_UNROLL || kind == TL_LOOP_VECTORIZED) mark_unroll(g, br);
  LLVMValueRef in_vals[2] = {lo, next};
  LLVMBasicBlockRef in_blocks[2] = {pre, latch};
  LLVMAddIncoming(phi, in_vals, in_blocks, 2);
  LLVMPositionBuilderAtEnd(g->B, exit);
  tl_map_remove(&g->vars, v);
  return true;
}

static bool const_elems(cg *g, const tl_buffer *b, int64_t *out) {
  int64_t n = 1;
  for (int i = 0; i < b->ndim; i++) {
    int64_t d;
    if (!tl_expr_is_const_int(b->shape[i], &d) || d < 0) {
      cg_error(g, b->loc, "buffer '%s' (%s) needs a constant shape", b->name, tl_scope_name(b->scope));
      return false;
    }
    if (d != 0 && n > INT64_MAX / 64 / d) {
      cg_error(g, b->loc, "buffer '%s' is too large", b->name);
      return false;
    }
    n *= d;
  }
  *out = n;
  return true;
}

static bool gen_alloc(cg *g, const tl_stmt *s) {
  tl_buffer *b = s->u.alloc.buffer;
  tl_dtype et = scalar_of(b->dtype);
  LLVMTypeRef elem = lane_type(g, et, true, b->loc);
  if (!elem) return false;
  int64_t n;
  if (!const_elems(g, b, &n)) return false;
  int64_t eb = tl_dtype_bytes(et) * (int64_t)b->dtype.lanes;
  if (eb <= 0) eb = 1;
  if (b->dtype.lanes > 1) elem = LLVMVectorType(elem, b->dtype.lanes);
  buf_info *bi = tl_arena_alloc(&g->arena, sizeof *bi);
  if (!bi) return false;
  bi->elem = elem;
  if (n == 0) n = 1;
  switch (b->scope) {
  case TL_SCOPE_LOCAL:
  case TL_SCOPE_LOCAL_VAR:
  case TL_SCOPE_FRAGMENT: {
    if (n * eb > TL_CG_MAX_LOCAL_BYTES) {
      cg_error(g, b->loc, "local buffer '%s' needs %lld bytes per thread (limit %d)", b->name,
               (long long)(n * eb), TL_CG_MAX_LOCAL_BYTES);
      return false;
    }
    LLVMBuilderRef ab = LLVMCreateBuilderInContext(g->C);
    LLVMValueRef term = LLVMGetBasicBlockTerminator(g->entry);
    if (term) LLVMPositionBuilderBefore(ab, term);
    else LLVMPositionBuilderAtEnd(ab, g->entry);
    LLVMValueRef a = LLVMBuildAlloca(ab, LLVMArrayType2(elem, (uint64_t)n), b->name);
    LLVMSetAlignment(a, 16);
    LLVMDisposeBuilder(ab);
    bi->base = a;
    if (b->init) {
      LLVMValueRef v = gen_as(g, b->init, b->dtype);
      if (!v) return false;
      LLVMValueRef st = LLVMBuildStore(g->B, to_mem(g, v, b->dtype), a);
      LLVMSetAlignment(st, (unsigned)(eb < 16 ? eb : 16));
    }
    break;
  }
  case TL_SCOPE_SHARED_DYN: {
    /* planned buffers sit where shared-memory planning put them (lib/Lower);
     * unplanned ones follow at 16-byte aligned offsets after all planned ones */
    int64_t off = b->smem_planned ? b->smem_offset : (g->smem_off + 15) & ~(int64_t)15;
    if (n * eb > (int64_t)1 << 40 || off > ((int64_t)1 << 40) || off < 0) {
      cg_error(g, b->loc, "shared buffer '%s' is too large", b->name);
      return false;
    }
    if (b->smem_planned && off % eb != 0) {
      cg_error(g, b->loc, "shared buffer '%s' planned at byte offset %lld, not a multiple of its %lld-byte element",
               b->name, (long long)off, (long long)eb);
      return false;
    }
    if (b->smem_planned) {
      if (off + n * eb > g->smem_planned_end) g->smem_planned_end = off + n * eb;
    } else {
      g->smem_off = off + n * eb;
    }
    if (!g->smem) {
      g->smem = LLVMGetNamedGlobal(g->M, "tl_smem");
      if (!g->smem) {
        g->smem = LLVMAddGlobalInAddressSpace(g->M, LLVMArrayType2(g->t_i8, 0), "tl_smem", 3);
        LLVMSetLinkage(g->smem, LLVMExternalLinkage);
        LLVMSetAlignment(g->smem, 16);
      }
    }
    LLVMValueRef o = LLVMConstInt(g->t_i64, (uint64_t)off, 0);
    bi->base = LLVMBuildGEP2(g->B, g->t_i8, g->smem, &o, 1, b->name);
    int64_t total = g->smem_off > g->smem_planned_end ? g->smem_off : g->smem_planned_end;
    if (total > g->target->max_smem_per_block) {
      cg_error(g, b->loc, "shared memory of %lld bytes exceeds the %d bytes a block may use on %s",
               (long long)total, g->target->max_smem_per_block, g->target->name);
      return false;
    }
    break;
  }
  case TL_SCOPE_SHARED: {
    char *gname = tl_arena_printf(&g->arena, "%s.%s.shared", g->f->name, b->name);
    if (!gname) return false;
    LLVMTypeRef at = LLVMArrayType2(elem, (uint64_t)n);
    LLVMValueRef gv = LLVMAddGlobalInAddressSpace(g->M, at, gname, 3);
    LLVMSetLinkage(gv, LLVMInternalLinkage);
    LLVMSetInitializer(gv, LLVMGetUndef(at));
    LLVMSetAlignment(gv, 16);
    bi->base = gv;
    break;
  }
  case TL_SCOPE_GLOBAL:
    cg_error(g, b->loc, "global buffer '%s' allocated inside a kernel", b->name);
    return false;
  }
  return tl_map_put(&g->bufs, b, bi);
}

static bool gen_kernel(cg *g, const tl_stmt *s) {
  if (++g->kernels_seen > 1) {
    cg_error(g, s->loc, "a prim_func may contain only one T.Kernel");
    return false;
  }
  int ng = s->u.kernel.ngrid;
  if (ng < 1 || ng > 3) {
    cg_error(g, s->loc, "T.Kernel needs 1 to 3 grid dimensions");
    return false;
  }
  for (int i = 0; i < ng; i++) {
    tl_var *bv = s->u.kernel.block_vars[i];
    if (!bv) continue;
    LLVMValueRef v = sreg(g, NV_CTAID_X + i);
    if (!v || !bind_var(g, bv, convert(g, v, TL_INT32, bv->dtype, s->loc))) return false;
  }
  int64_t threads = 0;
  if (s->u.kernel.threads && tl_expr_is_const_int(s->u.kernel.threads, &threads)) {
    if (threads < 1 || threads > g->target->max_threads) {
      cg_error(g, s->u.kernel.threads->loc, "threads=%lld: a block has 1 to %d threads on %s",
               (long long)threads, g->target->max_threads, g->target->name);
      return false;
    }
    char buf[48];
    snprintf(buf, sizeof buf, "%lld,1,1", (long long)threads);
    LLVMAddAttributeAtIndex(g->fn, LLVMAttributeFunctionIndex,
                            LLVMCreateStringAttribute(g->C, "nvvm.maxntid", 12, buf, (unsigned)strlen(buf)));
    static const char *const keys[3] = {"maxntidx", "maxntidy", "maxntidz"};
    for (int k = 0; k < 3; k++) {
      LLVMMetadataRef ops[3] = {
          LLVMValueAsMetadata(g->fn), LLVMMDStringInContext2(g->C, keys[k], strlen(keys[k])),
          LLVMValueAsMetadata(LLVMConstInt(g->t_i32, k == 0 ? (uint64_t)threads : 1, 0))};
      LLVMAddNamedMetadataOperand(g->M, "nvvm.annotations",
                                  LLVMMetadataAsValue(g->C, LLVMMDNodeInContext2(g->C, ops, 3)));
    }
  }
  return gen_stmt(g, s->u.kernel.body);
}

/* ------------------------------------- warp-level and async intrinsics */
/* docs/simt-ir.md "Warp-level and asynchronous intrinsics".  Hardware facts:
 * PTX ISA 8.5 §9.7.14.5.15 (ldmatrix), §9.7.14.5.14 / Figure "MMA .m16n8k16
 * fragment layouts" (mma.sync.aligned.m16n8k16.row.col), §9.7.9.25.3
 * (cp.async: sizes 4, 8, 16; .cg only with 16; src-size < cp-size
 * zero-fills the rest, so src-size 0 reads nothing), §9.7.9.25.4
 * (cp.async.commit_group / wait_group N).  LLVM 19 intrinsic signatures as
 * in ../shared/NVPTX.md §4 (ldmatrix overloaded on the pointer type; mma
 * f16 operands as <2 x half>, bf16 operands as i32). */

static void set_convergent(cg *g, LLVMValueRef call) {
  unsigned k = LLVMGetEnumAttributeKindForName("convergent", 10);
  if (call && k) LLVMAddCallSiteAttribute(call, LLVMAttributeFunctionIndex, LLVMCreateEnumAttribute(g->C, k, 0));
}

/* An integer index expression evaluated in i64 throughout: + - * of
 * integer operands are computed on 64-bit values (the leaves are
 * sign/zero-extended), so a flat offset into a large tensor does not wrap
 * in 32 bits (docs/simt-ir.md: cp.async src_off uses int64 arithmetic). */
static LLVMValueRef gen_index64(cg *g, const tl_expr *e, int depth) {
  if (!tl_dtype_is_int(e->dtype) && !is_bool(e->dtype)) {
    cg_error(g, e->loc, "offset must be an integer, not %s", tl_dtype_name(e->dtype));
    return NULL;
  }
  if (e->dtype.lanes != 1) {
    cg_error(g, e->loc, "offset must be a scalar");
    return NULL;
  }
  if (e->kind == TL_EXPR_INT) return LLVMConstInt(g->t_i64, (uint64_t)e->u.ival, 1);
  if (e->kind == TL_EXPR_BINARY && depth < 64 && !is_uint(e->dtype) &&
      (e->u.bin.op == TL_OP_ADD || e->u.bin.op == TL_OP_SUB || e->u.bin.op == TL_OP_MUL) &&
      tl_dtype_is_int(e->u.bin.a->dtype) && tl_dtype_is_int(e->u.bin.b->dtype) &&
      !is_uint(e->u.bin.a->dtype) && !is_uint(e->u.bin.b->dtype)) {
    LLVMValueRef a = gen_index64(g, e->u.bin.a, depth + 1);
    LLVMValueRef b = a ? gen_index64(g, e->u.bin.b, depth + 1) : NULL;
    if (!b) return NULL;
    switch (e->u.bin.op) {
    case TL_OP_ADD: return LLVMBuildNSWAdd(g->B, a, b, "");
    case TL_OP_SUB: return LLVMBuildNSWSub(g->B, a, b, "");
    default: return LLVMBuildNSWMul(g->B, a, b, "");
    }
  }
  return gen_index(g, e);
}

/* Argument i of an intrinsic call as a buffer reference. */
static const tl_buffer *buffer_arg(cg *g, const tl_expr *e, int i, const char *what) {
  const tl_expr *a = e->u.call.args[i];
  if (!a || a->kind != TL_EXPR_BUFFER || !a->u.buffer) {
    cg_error(g, a ? a->loc : e->loc, "T.%s: argument %d (%s) must be a buffer",
             tl_intrinsics[e->u.call.op].name, i + 1, what);
    return NULL;
  }
  return a->u.buffer;
}

static bool const_arg(cg *g, const tl_expr *e, int i, const char *what, int64_t *v) {
  const tl_expr *a = e->u.call.args[i];
  if (!a || !tl_expr_is_const_int(a, v)) {
    cg_error(g, a ? a->loc : e->loc, "T.%s: argument %d (%s) must be a constant",
             tl_intrinsics[e->u.call.op].name, i + 1, what);
    return false;
  }
  return true;
}

static bool is_16bit(tl_dtype t) { return t.lanes == 1 && t.bits == 16 && !is_bool(t); }
static bool is_local_scope(tl_scope s) {
  return s == TL_SCOPE_LOCAL || s == TL_SCOPE_FRAGMENT || s == TL_SCOPE_LOCAL_VAR;
}
static bool is_shared_scope(tl_scope s) { return s == TL_SCOPE_SHARED_DYN || s == TL_SCOPE_SHARED; }

/* Address of element `off` (an int expression) of buffer b viewed flat. */
static LLVMValueRef elem_addr(cg *g, const tl_buffer *b, const tl_expr *off, tl_loc loc) {
  buf_info *bi = get_buf(g, b, loc);
  if (!bi) return NULL;
  if (b->dtype.lanes != 1) {
    cg_error(g, loc, "buffer '%s' of vector dtype %s in a warp-level intrinsic", b->name,
             tl_dtype_name(b->dtype));
    return NULL;
  }
  LLVMValueRef o = gen_index64(g, off, 0);
  if (!o) return NULL;
  return LLVMBuildGEP2(g->B, bi->elem, bi->base, &o, 1, "");
}
/* Address of element base + k (k constant) of a local buffer. */
static LLVMValueRef local_addr(cg *g, const tl_buffer *b, LLVMValueRef base_off, int k) {
  buf_info *bi = get_buf(g, b, b->loc);
  if (!bi) return NULL;
  LLVMValueRef o = LLVMBuildAdd(g->B, base_off, LLVMConstInt(g->t_i64, (uint64_t)k, 0), "");
  return LLVMBuildGEP2(g->B, bi->elem, bi->base, &o, 1, "");
}

/* T.ptx_ldmatrix(dst, dst_off, src, src_off, num, trans) */
static bool gen_ldmatrix(cg *g, const tl_expr *e) {
  tl_loc loc = e->loc;
  const tl_buffer *dst = buffer_arg(g, e, 0, "dst"), *src = dst ? buffer_arg(g, e, 2, "src") : NULL;
  int64_t num, trans;
  if (!src || !const_arg(g, e, 4, "num", &num) || !const_arg(g, e, 5, "trans", &trans)) return false;
  if (num != 1 && num != 2 && num != 4) {
    cg_error(g, loc, "T.ptx_ldmatrix: num must be 1, 2 or 4, not %lld", (long long)num);
    return false;
  }
  if (!is_local_scope(dst->scope) || !is_16bit(dst->dtype)) {
    cg_error(g, loc, "T.ptx_ldmatrix: dst '%s' must be a local buffer of a 16-bit dtype (it is %s %s)",
             dst->name, tl_scope_name(dst->scope), tl_dtype_name(dst->dtype));
    return false;
  }
  if (!is_shared_scope(src->scope) || !is_16bit(src->dtype)) {
    cg_error(g, loc, "T.ptx_ldmatrix: src '%s' must be a shared buffer of a 16-bit dtype (it is %s %s)",
             src->name, tl_scope_name(src->scope), tl_dtype_name(src->dtype));
    return false;
  }
  static const int which[2][3] = {{NV_LDMATRIX_X1, NV_LDMATRIX_X2, NV_LDMATRIX_X4},
                                  {NV_LDMATRIX_X1_T, NV_LDMATRIX_X2_T, NV_LDMATRIX_X4_T}};
  LLVMValueRef addr = elem_addr(g, src, e->u.call.args[3], loc);
  LLVMValueRef doff = addr ? gen_index64(g, e->u.call.args[1], 0) : NULL;
  if (!doff) return false;
  LLVMTypeRef ovl = g->t_ptr3;
  LLVMValueRef r = call_intrinsic(g, which[trans != 0][num == 1 ? 0 : num == 2 ? 1 : 2], &ovl, 1, &addr, 1);
  if (!r) return false;
  set_convergent(g, r);
  buf_info *bi = get_buf(g, dst, loc);
  if (!bi) return false;
  LLVMTypeRef v2 = LLVMVectorType(bi->elem, 2);
  for (int i = 0; i < (int)num; i++) {
    LLVMValueRef reg = num == 1 ? r : LLVMBuildExtractValue(g->B, r, (unsigned)i, "");
    LLVMValueRef pair = LLVMBuildBitCast(g->B, reg, v2, "");
    for (int h = 0; h < 2; h++) { /* low half = lower-indexed element (PTX ISA §9.7.14.5.15) */
      LLVMValueRef p = local_addr(g, dst, doff, 2 * i + h);
      if (!p) return false;
      LLVMValueRef st = LLVMBuildStore(g->B, LLVMBuildExtractElement(g->B, pair, LLVMConstInt(g->t_i32, (unsigned)h, 0), ""), p);
      LLVMSetAlignment(st, 2);
    }
  }
  bi->stored = true;
  return true;
}

/* Loads two 16-bit elements of local buffer b at base + k, k + 1 as one
 * operand of type want (<2 x half>, <2 x bfloat> or i32). */
static LLVMValueRef load_pair(cg *g, const tl_buffer *b, LLVMValueRef base, int k, LLVMTypeRef want) {
  buf_info *bi = get_buf(g, b, b->loc);
  if (!bi) return NULL;
  LLVMTypeRef v2 = LLVMVectorType(bi->elem, 2);
  LLVMValueRef v = LLVMGetPoison(v2);
  for (int h = 0; h < 2; h++) {
    LLVMValueRef p = local_addr(g, b, base, k + h);
    if (!p) return NULL;
    LLVMValueRef x = LLVMBuildLoad2(g->B, bi->elem, p, "");
    LLVMSetAlignment(x, 2);
    v = LLVMBuildInsertElement(g->B, v, x, LLVMConstInt(g->t_i32, (unsigned)h, 0), "");
  }
  return want == v2 ? v : LLVMBuildBitCast(g->B, v, want, "");
}

/* T.ptx_mma(a, a_off, b, b_off, c, c_off, "m16n8k16") */
static bool gen_mma(cg *g, const tl_expr *e) {
  tl_loc loc = e->loc;
  const tl_buffer *a = buffer_arg(g, e, 0, "a"), *b = a ? buffer_arg(g, e, 2, "b") : NULL;
  const tl_buffer *c = b ? buffer_arg(g, e, 4, "c") : NULL;
  if (!c) return false;
  const tl_expr *shape = e->u.call.args[6];
  if (!shape || shape->kind != TL_EXPR_STRING || strcmp(shape->u.str, "m16n8k16")) {
    cg_error(g, shape ? shape->loc : loc, "T.ptx_mma: the only supported shape is \"m16n8k16\"");
    return false;
  }
  const tl_buffer *bufs[3] = {a, b, c};
  for (int i = 0; i < 3; i++) {
    if (!is_local_scope(bufs[i]->scope) || bufs[i]->dtype.lanes != 1) {
      cg_error(g, loc, "T.ptx_mma: operand '%s' must be a local buffer (it is %s)", bufs[i]->name,
               tl_scope_name(bufs[i]->scope));
      return false;
    }
  }
  int which;
  if (!tl_dtype_eq(a->dtype, b->dtype) || !(is_f16(a->dtype) || is_bf16(a->dtype))) {
    cg_error(g, loc, "T.ptx_mma: A and B must both be float16 or both bfloat16 (got %s and %s)",
             tl_dtype_name(a->dtype), tl_dtype_name(b->dtype));
    return false;
  }
  if (c->dtype.code == TL_TYPE_FLOAT && c->dtype.bits == 32)
    which = is_f16(a->dtype) ? NV_MMA_F16_F32 : NV_MMA_BF16_F32;
  else if (is_f16(c->dtype) && is_f16(a->dtype))
    which = NV_MMA_F16_F16;
  else {
    cg_error(g, loc, "T.ptx_mma: accumulator '%s' of %s with %s inputs (supported: float16 -> float32 "
             "or float16, bfloat16 -> float32)", c->name, tl_dtype_name(c->dtype), tl_dtype_name(a->dtype));
    return false;
  }
  LLVMValueRef fn = intrinsic(g, which, NULL, 0);
  if (!fn) return false;
  LLVMTypeRef fty = LLVMGlobalGetValueType(fn);
  unsigned np = LLVMCountParamTypes(fty);
  LLVMTypeRef pts[16];
  if (np > 16) {
    cg_error(g, loc, "internal error: mma intrinsic with %u parameters", np);
    return false;
  }
  LLVMGetParamTypes(fty, pts);
  LLVMValueRef offs[3];
  for (int i = 0; i < 3; i++)
    if (!(offs[i] = gen_index64(g, e->u.call.args[2 * i + 1], 0))) return false;
  /* A: 4 regs (8 elements), B: 2 regs (4 elements), C: 4 f32 or 2 x <2 x half> */
  unsigned nc = np - 6;
  if (np < 8 || (nc != 4 && nc != 2)) {
    cg_error(g, loc, "internal error: unexpected mma intrinsic signature");
    return false;
  }
  LLVMValueRef args[16];
  for (unsigned i = 0; i < 6; i++) {
    const tl_buffer *ob = i < 4 ? a : b;
    LLVMValueRef base = i < 4 ? offs[0] : offs[1];
    int k = (int)(i < 4 ? 2 * i : 2 * (i - 4));
    if (!(args[i] = load_pair(g, ob, base, k, pts[i]))) return false;
  }
  buf_info *cbi = get_buf(g, c, loc);
  if (!cbi) return false;
  for (unsigned i = 0; i < nc; i++) {
    if (nc == 4) {
      LLVMValueRef p = local_addr(g, c, offs[2], (int)i);
      if (!p) return false;
      LLVMValueRef x = LLVMBuildLoad2(g->B, cbi->elem, p, "");
      LLVMSetAlignment(x, 4);
      args[6 + i] = x;
    } else if (!(args[6 + i] = load_pair(g, c, offs[2], 2 * (int)i, pts[6 + i]))) {
      return false;
    }
  }
  LLVMValueRef r = LLVMBuildCall2(g->B, fty, fn, args, np, "");
  set_convergent(g, r);
  for (unsigned i = 0; i < nc; i++) {
    LLVMValueRef d = LLVMBuildExtractValue(g->B, r, i, "");
    if (nc == 4) {
      LLVMValueRef p = local_addr(g, c, offs[2], (int)i);
      if (!p) return false;
      LLVMSetAlignment(LLVMBuildStore(g->B, d, p), 4);
    } else {
      LLVMTypeRef v2 = LLVMVectorType(cbi->elem, 2);
      if (LLVMTypeOf(d) != v2) d = LLVMBuildBitCast(g->B, d, v2, "");
      for (int h = 0; h < 2; h++) {
        LLVMValueRef p = local_addr(g, c, offs[2], 2 * (int)i + h);
        if (!p) return false;
        LLVMValueRef x = LLVMBuildExtractElement(g->B, d, LLVMConstInt(g->t_i32, (unsigned)h, 0), "");
        LLVMSetAlignment(LLVMBuildStore(g->B, x, p), 2);
      }
    }
  }
  cbi->stored = true;
  return true;
}

/* T.ptx_cp_async(dst, dst_off, src, src_off, bytes, pred) */
static bool gen_cp_async(cg *g, const tl_expr *e) {
  tl_loc loc = e->loc;
  const tl_buffer *dst = buffer_arg(g, e, 0, "dst"), *src = dst ? buffer_arg(g, e, 2, "src") : NULL;
  int64_t bytes;
  if (!src || !const_arg(g, e, 4, "bytes", &bytes)) return false;
  if (bytes != 4 && bytes != 8 && bytes != 16) {
    cg_error(g, loc, "T.ptx_cp_async: bytes must be 4, 8 or 16, not %lld", (long long)bytes);
    return false;
  }
  if (!is_shared_scope(dst->scope)) {
    cg_error(g, loc, "T.ptx_cp_async: dst '%s' must be a shared buffer (it is %s)", dst->name,
             tl_scope_name(dst->scope));
    return false;
  }
  if (src->scope != TL_SCOPE_GLOBAL) {
    cg_error(g, loc, "T.ptx_cp_async: src '%s' must be a global tensor (it is %s)", src->name,
             tl_scope_name(src->scope));
    return false;
  }
  int64_t db = tl_dtype_bytes(dst->dtype), sb = tl_dtype_bytes(src->dtype);
  if (db != sb || bytes % db != 0 || dst->dtype.lanes != 1 || src->dtype.lanes != 1) {
    cg_error(g, loc, "T.ptx_cp_async: %lld bytes between '%s' (%s) and '%s' (%s): the element sizes "
             "must agree and divide the copy", (long long)bytes, dst->name, tl_dtype_name(dst->dtype),
             src->name, tl_dtype_name(src->dtype));
    return false;
  }
  const tl_expr *pe = e->u.call.args[5];
  int64_t pc = 0;
  bool always = tl_expr_is_const_int(pe, &pc) && pc != 0;
  LLVMValueRef dp = elem_addr(g, dst, e->u.call.args[1], loc);
  LLVMValueRef sp = dp ? elem_addr(g, src, e->u.call.args[3], loc) : NULL;
  if (!sp) return false;
  int k = bytes == 4 ? 0 : bytes == 8 ? 1 : 2;
  LLVMValueRef args[3] = {dp, sp, NULL}, r;
  if (always) {
    static const int plain[3] = {NV_CP_ASYNC_CA4, NV_CP_ASYNC_CA8, NV_CP_ASYNC_CG16};
    r = call_intrinsic(g, plain[k], NULL, 0, args, 2);
  } else {
    static const int zfill[3] = {NV_CP_ASYNC_CA4_S, NV_CP_ASYNC_CA8_S, NV_CP_ASYNC_CG16_S};
    LLVMValueRef p = gen_expr(g, pe);
    p = to_cond(g, p, pe->dtype, pe->loc);
    if (!p) return false;
    if (pe->dtype.lanes != 1) {
      cg_error(g, pe->loc, "T.ptx_cp_async: pred must be a scalar");
      return false;
    }
    /* false: src-size 0, nothing is read and the bytes are zero-filled */
    args[2] = LLVMBuildSelect(g->B, p, LLVMConstInt(g->t_i32, (uint64_t)bytes, 0), LLVMConstInt(g->t_i32, 0, 0), "");
    r = call_intrinsic(g, zfill[k], NULL, 0, args, 3);
  }
  buf_info *bi = get_buf(g, dst, loc);
  if (bi) bi->stored = true;
  return r != NULL;
}

/* T.ptx_atomic_add(dst, off, value, return_prev) (docs/simt-ir.md
 * "Atomics"; PTX ISA §9.7.13.4 atom, §9.7.13.5 red): relaxed atomic adds
 * at element off of the global tensor dst.  Scalars are `atomicrmw
 * fadd/add monotonic` on the addrspace(1) pointer (LLVM 19 selects
 * atom.global.add.{f32,f64,noftz.f16,noftz.bf16 (sm_90)} and expands what
 * the target lacks, bf16 on sm_80 and 8/16-bit integers, into a
 * compare-and-swap loop, so no encoding can make it abort).  A 2-lane
 * float16 value (bfloat16 on sm_90) is one inline
 * `red.global.add.noftz.{f16x2,bf16x2}` (or `atom...` when its value is
 * used: return_prev), since LLVM 19 turns <2 x half> atomicrmw into a CAS
 * loop; the pair is 4-byte aligned (the lowering proves off even).  Other
 * vectors are one scalar atomic per lane.  The value is the old contents. */
static LLVMValueRef gen_atomic_add(cg *g, const tl_expr *e) {
  tl_loc loc = e->loc;
  if (e->u.call.n != 4) {
    cg_error(g, loc, "T.ptx_atomic_add takes 4 arguments, got %d", e->u.call.n);
    return NULL;
  }
  const tl_buffer *b = buffer_arg(g, e, 0, "dst");
  int64_t rp;
  if (!b || !const_arg(g, e, 3, "return_prev", &rp)) return NULL;
  if (b->scope != TL_SCOPE_GLOBAL) {
    cg_error(g, loc, "T.ptx_atomic_add: dst '%s' must be a global tensor (it is %s)", b->name,
             tl_scope_name(b->scope));
    return NULL;
  }
  tl_dtype t = e->dtype, et = scalar_of(t);
  int L = t.lanes ? t.lanes : 1;
  if (!tl_dtype_eq(et, b->dtype) || is_bool(et) || t.code == TL_TYPE_TFLOAT) {
    cg_error(g, loc, "T.ptx_atomic_add: a %s value cannot be added atomically to '%s' of %s",
             tl_dtype_name(t), b->name, tl_dtype_name(b->dtype));
    return NULL;
  }
  LLVMValueRef v = gen_as(g, e->u.call.args[2], t);
  LLVMValueRef p = v ? elem_addr(g, b, e->u.call.args[1], loc) : NULL;
  buf_info *bi = p ? get_buf(g, b, loc) : NULL;
  if (!bi) return NULL;
  bi->stored = true;
  bool fl = tl_dtype_is_float(et);
  unsigned eb = (unsigned)tl_dtype_bytes(et);
  if (L == 2 && (is_f16(et) || (is_bf16(et) && g->target->sm >= 90))) {
    const char *ty = is_f16(et) ? "f16x2" : "bf16x2";
    char text[96];
    snprintf(text, sizeof text, rp ? "atom.global.add.noftz.%s $0, [$1], $2;" : "red.global.add.noftz.%s [$0], $1;", ty);
    const char *cons = rp ? "=r,l,r,~{memory}" : "l,r,~{memory}";
    LLVMValueRef addr = LLVMBuildPtrToInt(g->B, p, g->t_i64, "");
    LLVMValueRef bits = LLVMBuildBitCast(g->B, v, g->t_i32, "");
    LLVMTypeRef pts[2] = {g->t_i64, g->t_i32};
    LLVMTypeRef fty = LLVMFunctionType(rp ? g->t_i32 : g->t_void, pts, 2, 0);
    LLVMValueRef asmv = LLVMGetInlineAsm(fty, text, strlen(text), cons, strlen(cons), 1, 0,
                                         LLVMInlineAsmDialectATT, 0);
    LLVMValueRef args[2] = {addr, bits};
    LLVMValueRef r = LLVMBuildCall2(g->B, fty, asmv, args, 2, "");
    if (!rp) return LLVMGetPoison(LLVMTypeOf(v));
    return LLVMBuildBitCast(g->B, r, LLVMTypeOf(v), "");
  }
  LLVMValueRef out = L > 1 ? LLVMGetPoison(LLVMTypeOf(v)) : NULL;
  for (int l = 0; l < L; l++) {
    LLVMValueRef li = LLVMConstInt(g->t_i32, (unsigned)l, 0);
    LLVMValueRef x = L > 1 ? LLVMBuildExtractElement(g->B, v, li, "") : v;
    LLVMValueRef q = p;
    if (l > 0) {
      LLVMValueRef o = LLVMConstInt(g->t_i64, (unsigned)l, 0);
      q = LLVMBuildGEP2(g->B, bi->elem, p, &o, 1, "");
    }
    LLVMValueRef r = LLVMBuildAtomicRMW(g->B, fl ? LLVMAtomicRMWBinOpFAdd : LLVMAtomicRMWBinOpAdd, q, x,
                                        LLVMAtomicOrderingMonotonic, 0);
    LLVMSetAlignment(r, eb);
    out = L > 1 ? LLVMBuildInsertElement(g->B, out, r, li, "") : r;
  }
  return out;
}

/* codegen.c's helpers for the other code generator files (codegen_internal.h). */
buf_info *tl_cg_buf(cg *g, const tl_buffer *b, tl_loc loc) { return get_buf(g, b, loc); }
const tl_buffer *tl_cg_buffer_arg(cg *g, const tl_expr *e, int i, const char *what) {
  return buffer_arg(g, e, i, what);
}
bool tl_cg_const_arg(cg *g, const tl_expr *e, int i, const char *what, int64_t *v) {
  return const_arg(g, e, i, what, v);
}
LLVMValueRef tl_cg_elem_addr(cg *g, const tl_buffer *b, const tl_expr *off, tl_loc loc) {
  return elem_addr(g, b, off, loc);
}
LLVMValueRef tl_cg_expr_as(cg *g, const tl_expr *e, tl_dtype t) { return gen_as(g, e, t); }
void tl_cg_set_convergent(cg *g, LLVMValueRef call) { set_convergent(g, call); }

static bool gen_eval(cg *g, const tl_stmt *s) {
  const tl_expr *e = s->u.eval.value;
  if (e && e->kind == TL_EXPR_CALL && e->u.call.op >= 0 && e->u.call.op < tl_num_intrinsics) {
    const char *name = tl_intrinsics[e->u.call.op].name;
    int n = e->u.call.n;
    if (!strcmp(name, "sync_threads")) {
      LLVMValueRef c = call_intrinsic(g, NV_BARRIER0, NULL, 0, NULL, 0);
      return c != NULL;
    }
    bool ok;
    if (tl_cg_async_stmt(g, e, &ok)) return ok;
    if (!strncmp(name, "ptx_", 4)) {
      static const struct { const char *name; int nargs; } sig[] = {
          {"ptx_ldmatrix", 6}, {"ptx_mma", 7}, {"ptx_cp_async", 6}, {"ptx_commit_group", 0},
          {"ptx_wait_group", 1}};
      for (size_t i = 0; i < sizeof sig / sizeof sig[0]; i++) {
        if (strcmp(name, sig[i].name)) continue;
        if (n != sig[i].nargs) {
          cg_error(g, e->loc, "T.%s takes %d arguments, got %d", name, sig[i].nargs, n);
          return false;
        }
        switch (i) {
        case 0: return gen_ldmatrix(g, e);
        case 1: return gen_mma(g, e);
        case 2: return gen_cp_async(g, e);
        case 3: return call_intrinsic(g, NV_CP_ASYNC_COMMIT, NULL, 0, NULL, 0) != NULL;
        default: {
          int64_t k;
          if (!const_arg(g, e, 0, "n", &k)) return false;
          if (k < 0 || k > 1000) {
            cg_error(g, e->loc, "T.ptx_wait_group: n must be a constant from 0 to 1000, not %lld", (long long)k);
            return false;
          }
          LLVMValueRef a = LLVMConstInt(g->t_i32, (uint64_t)k, 0);
          return call_intrinsic(g, NV_CP_ASYNC_WAIT, NULL, 0, &a, 1) != NULL;
        }
        }
      }
    }
  }
  return gen_expr(g, e) != NULL;
}

static bool gen_stmt_inner(cg *g, const tl_stmt *s) {
  switch (s->kind) {
  case TL_STMT_SEQ:
    for (int i = 0; i < s->u.seq.n; i++)
      if (!gen_stmt(g, s->u.seq.stmts[i])) return false;
    return true;
  case TL_STMT_FOR: return gen_for(g, s);
  case TL_STMT_KERNEL: return gen_kernel(g, s);
  case TL_STMT_ALLOC: return gen_alloc(g, s);
  case TL_STMT_STORE: return gen_store(g, s);
  case TL_STMT_IF: {
    LLVMValueRef c = gen_expr(g, s->u.ifs.cond);
    c = to_cond(g, c, s->u.ifs.cond->dtype, s->u.ifs.cond->loc);
    if (!c) return false;
    if (s->u.ifs.cond->dtype.lanes != 1) {
      cg_error(g, s->u.ifs.cond->loc, "if condition must be a scalar");
      return false;
    }
    LLVMBasicBlockRef then_b = new_block(g, "if.then"), end_b = new_block(g, "if.end");
    LLVMBasicBlockRef else_b = s->u.ifs.else_s ? new_block(g, "if.else") : end_b;
    LLVMBuildCondBr(g->B, c, then_b, else_b);
    LLVMPositionBuilderAtEnd(g->B, then_b);
    if (!gen_stmt(g, s->u.ifs.then_s)) return false;
    LLVMBuildBr(g->B, end_b);
    if (s->u.ifs.else_s) {
      LLVMPositionBuilderAtEnd(g->B, else_b);
      if (!gen_stmt(g, s->u.ifs.else_s)) return false;
      LLVMBuildBr(g->B, end_b);
    }
    LLVMPositionBuilderAtEnd(g->B, end_b);
    return true;
  }
  case TL_STMT_LET: {
    LLVMValueRef v = gen_as(g, s->u.let.value, s->u.let.var->dtype);
    return v && bind_var(g, s->u.let.var, v);
  }
  case TL_STMT_EVAL: return gen_eval(g, s);
  case TL_STMT_TILE: {
    int op = s->u.tile.op;
    cg_error(g, s->loc, "T.%s reached code generation (it must be lowered first)",
             op >= 0 && op < TL_TILE_NUM_OPS ? tl_tile_ops[op].name : "?");
    return false;
  }
  }
  cg_error(g, s->loc, "internal error: unknown statement kind %d", (int)s->kind);
  return false;
}

static bool gen_stmt(cg *g, const tl_stmt *s) {
  if (!s) return true;
  if (!enter(g, s->loc)) return false;
  bool ok = gen_stmt_inner(g, s);
  g->depth--;
  return ok && !g->failed;
}

/* ------------------------------------------------------------ functions */
/* End (bytes) of the shared.dyn buffers that shared-memory planning placed
 * (smem_planned), over every allocation in s; 0 when none.  Depth-bounded
 * like the code generator itself (deeper input fails there). */
static int64_t planned_smem_end(const tl_stmt *s, int depth) {
  if (!s || depth > TL_CG_MAX_DEPTH) return 0;
  int64_t end = 0, e;
  switch (s->kind) {
  case TL_STMT_SEQ:
    for (int i = 0; i < s->u.seq.n; i++)
      if ((e = planned_smem_end(s->u.seq.stmts[i], depth + 1)) > end) end = e;
    return end;
  case TL_STMT_FOR: return planned_smem_end(s->u.loop.body, depth + 1);
  case TL_STMT_KERNEL: return planned_smem_end(s->u.kernel.body, depth + 1);
  case TL_STMT_IF:
    end = planned_smem_end(s->u.ifs.then_s, depth + 1);
    if ((e = planned_smem_end(s->u.ifs.else_s, depth + 1)) > end) end = e;
    return end;
  case TL_STMT_ALLOC: {
    const tl_buffer *b = s->u.alloc.buffer;
    if (!b || b->scope != TL_SCOPE_SHARED_DYN || !b->smem_planned || b->smem_offset < 0) return 0;
    int64_t n = 1, d;
    for (int i = 0; i < b->ndim; i++) {
      if (!tl_expr_is_const_int(b->shape[i], &d) || d < 0 || (d && n > ((int64_t)1 << 40) / d)) return 0;
      n *= d;
    }
    int64_t eb = (int64_t)tl_dtype_bytes(b->dtype) * (b->dtype.lanes > 1 ? b->dtype.lanes : 1);
    if (n > ((int64_t)1 << 40) / eb || b->smem_offset > ((int64_t)1 << 40)) return 0;
    return b->smem_offset + n * eb;
  }
  default: return 0;
  }
}

static void add_enum_attr(cg *g, LLVMValueRef fn, unsigned idx, const char *name) {
  unsigned k = LLVMGetEnumAttributeKindForName(name, strlen(name));
  if (k) LLVMAddAttributeAtIndex(fn, idx, LLVMCreateEnumAttribute(g->C, k, 0));
}

static bool gen_func(cg *g, tl_primfunc *f) {
  g->f = f;
  g->kernels_seen = 0;
  g->smem_planned_end = planned_smem_end(f->body, 0);
  g->smem_off = g->smem_planned_end;
  tl_map_init(&g->vars);
  tl_map_init(&g->bufs);
  bool ok = false;
  int np = f->nparams + f->ndynamic;
  LLVMTypeRef *pt = calloc((size_t)(np > 0 ? np : 1), sizeof *pt);
  if (!pt) goto done;
  for (int i = 0; i < f->nparams; i++) {
    const tl_param *p = &f->params[i];
    if (p->kind == TL_PARAM_TENSOR) {
      pt[i] = g->t_ptr1;
    } else {
      tl_dtype t = p->var->dtype;
      pt[i] = type_of(g, t, true, p->var->loc); /* bool scalars travel as i8 */
      if (!pt[i]) goto done;
    }
  }
  for (int i = 0; i < f->ndynamic; i++) pt[f->nparams + i] = g->t_i32;
  if (LLVMGetNamedFunction(g->M, f->name)) {
    cg_error(g, f->loc, "two prim_funcs are named '%s'", f->name);
    goto done;
  }
  g->fn = LLVMAddFunction(g->M, f->name, LLVMFunctionType(g->t_void, pt, (unsigned)np, 0));
  LLVMSetFunctionCallConv(g->fn, TL_PTX_KERNEL_CC);
  {
    LLVMMetadataRef ops[3] = {LLVMValueAsMetadata(g->fn), LLVMMDStringInContext2(g->C, "kernel", 6),
                              LLVMValueAsMetadata(LLVMConstInt(g->t_i32, 1, 0))};
    LLVMAddNamedMetadataOperand(g->M, "nvvm.annotations",
                                LLVMMetadataAsValue(g->C, LLVMMDNodeInContext2(g->C, ops, 3)));
  }
  g->entry = LLVMAppendBasicBlockInContext(g->C, g->fn, "entry");
  LLVMBasicBlockRef body = LLVMAppendBasicBlockInContext(g->C, g->fn, "body");
  LLVMPositionBuilderAtEnd(g->B, g->entry);
  for (int i = 0; i < f->nparams; i++) {
    const tl_param *p = &f->params[i];
    LLVMValueRef pv = LLVMGetParam(g->fn, (unsigned)i);
    if (p->kind == TL_PARAM_TENSOR) {
      LLVMSetValueName2(pv, p->buffer->name, strlen(p->buffer->name));
      buf_info *bi = tl_arena_alloc(&g->arena, sizeof *bi);
      if (!bi) goto done;
      bi->base = pv;
      bi->is_param = true;
      bi->param_index = i;
      bi->elem = type_of(g, p->buffer->dtype, true, p->buffer->loc);
      if (!bi->elem || !tl_map_put(&g->bufs, p->buffer, bi)) goto done;
      add_enum_attr(g, g->fn, (unsigned)i + 1, "noalias");
      add_enum_attr(g, g->fn, (unsigned)i + 1, "nocapture");
    } else {
      LLVMSetValueName2(pv, p->var->name, strlen(p->var->name));
      LLVMValueRef v = from_mem(g, pv, p->var->dtype);
      if (!bind_var(g, p->var, v)) goto done;
    }
  }
  for (int i = 0; i < f->ndynamic; i++) {
    LLVMValueRef pv = LLVMGetParam(g->fn, (unsigned)(f->nparams + i));
    LLVMSetValueName2(pv, f->dynamic[i]->name, strlen(f->dynamic[i]->name));
    if (!bind_var(g, f->dynamic[i], convert(g, pv, TL_INT32, f->dynamic[i]->dtype, f->loc))) goto done;
  }
  LLVMBuildBr(g->B, body);
  LLVMPositionBuilderAtEnd(g->B, body);
  if (!gen_stmt(g, f->body) || g->failed) goto done;
  if (g->kernels_seen == 0) {
    cg_error(g, f->loc, "prim_func '%s' has no T.Kernel", f->name);
    goto done;
  }
  LLVMBuildRetVoid(g->B);
  /* readonly for tensors never stored (with noalias: ld.global.nc) */
  for (int i = 0; i < f->nparams; i++) {
    if (f->params[i].kind != TL_PARAM_TENSOR) continue;
    buf_info *bi = tl_map_get(&g->bufs, f->params[i].buffer, NULL);
    if (bi && !bi->stored) add_enum_attr(g, g->fn, (unsigned)i + 1, "readonly");
  }
  if (f->smem_bytes < g->smem_off) f->smem_bytes = g->smem_off;
  if (f->smem_bytes < g->smem_planned_end) f->smem_bytes = g->smem_planned_end;
  ok = true;
done:
  free(pt);
  tl_map_free(&g->vars);
  tl_map_free(&g->bufs);
  if (!ok && !g->failed) cg_error(g, f->loc, "out of memory in code generation");
  return ok;
}

bool tl_nvptx_build(LLVMModuleRef M, const tl_module *m, const tl_target *t, tl_diag *d) {
  cg g;
  memset(&g, 0, sizeof g);
  g.C = LLVMGetModuleContext(M);
  g.M = M;
  g.target = t;
  g.d = d;
  g.B = LLVMCreateBuilderInContext(g.C);
  tl_arena_init(&g.arena);
  g.t_void = LLVMVoidTypeInContext(g.C);
  g.t_i1 = LLVMInt1TypeInContext(g.C);
  g.t_i8 = LLVMInt8TypeInContext(g.C);
  g.t_i16 = LLVMInt16TypeInContext(g.C);
  g.t_i32 = LLVMInt32TypeInContext(g.C);
  g.t_i64 = LLVMInt64TypeInContext(g.C);
  g.t_f16 = LLVMHalfTypeInContext(g.C);
  g.t_bf16 = LLVMBFloatTypeInContext(g.C);
  g.t_f32 = LLVMFloatTypeInContext(g.C);
  g.t_f64 = LLVMDoubleTypeInContext(g.C);
  g.t_ptr0 = LLVMPointerTypeInContext(g.C, 0);
  g.t_ptr1 = LLVMPointerTypeInContext(g.C, 1);
  g.t_ptr3 = LLVMPointerTypeInContext(g.C, 3);
  bool ok = true;
  if (!m || m->nfuncs == 0) {
    cg_error(&g, TL_LOC_NONE, "the module has no prim_func");
    ok = false;
  }
  for (int i = 0; ok && i < m->nfuncs; i++) {
    ok = gen_func(&g, m->funcs[i]);
  }
  LLVMDisposeBuilder(g.B);
  tl_arena_free(&g.arena);
  return ok && !g.failed;
}
