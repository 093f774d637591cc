/* SIMT IR → LLVM IR (LLVM 19 C API), one kernel per prim_func: the core of
 * the code generator (lib/NVPTX/codegen_internal.h lists the op-family files).
 *
 * Role: the first half of lib/NVPTX (emit.c does libdevice, O3 and PTX).
 * Input is the SIMT IR of docs/simt-ir.md: what one thread of a block does.
 *
 * Algorithm: one recursive walk over statements and expressions (depth
 * limited, so deep input reports an error instead of exhausting the stack),
 * building LLVM IR with an LLVMBuilder.  This file holds the walk:
 *  - kernel ABI (docs/simt-ir.md): tensor parameters are `ptr addrspace(1)`
 *    (noalias; readonly when never stored), scalars by value, then one i32
 *    per dynamic dimension, then one byval grid-constant 128-byte tensor
 *    map per entry of tl_tma_collect (add_tma_params), then a global pointer
 *    per kernel workspace (tl_workspace_collect: stream-K).  Kernels use the
 *    ptx_kernel calling convention and carry `maxntid` both as !nvvm.annotations (read by LLVM 19) and as
 *    the "nvvm.maxntid" string attribute (read by LLVM 21+), docs/codegen.md "Kernels";
 *  - loops are phi loops (T.unroll gets llvm.loop.unroll.full metadata);
 *    LET binds an SSA value;
 *  - bool is i1 in registers and i8 in memory;
 *  - an intrinsic call is dispatched by its tl_intrin id (gen_call, a
 *    switch with no default: -Wswitch names an intrinsic without a hook;
 *    statement intrinsics in gen_eval) to the op-family files.
 * All LLVM intrinsic names are in one table (nv_names, below) so another
 * LLVM version can be added later. */
#include "IR/visit.h"
#include "NVPTX/codegen_internal.h"

#include <llvm-c/DebugInfo.h> /* LLVMTemporaryMDNode */

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------ intrinsic names (LLVM 19) */
/* The one table of LLVM intrinsic names, indexed by the NV_* ids of
 * codegen_internal.h (declared on first use by cg_intrinsic). */
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
    [NV_TRAP] = "llvm.trap",
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
    [NV_MMA_TF32] = "llvm.nvvm.mma.m16n8k8.row.col.tf32",
    [NV_MMA_S8] = "llvm.nvvm.mma.m16n8k32.row.col.s8",
    [NV_MMA_U8] = "llvm.nvvm.mma.m16n8k32.row.col.u8",
    [NV_MMA_S4] = "llvm.nvvm.mma.m16n8k64.row.col.s4",
    [NV_MMA_U4] = "llvm.nvvm.mma.m16n8k64.row.col.u4",
    [NV_MMA_F64] = "llvm.nvvm.mma.m8n8k4.row.col.f64",
    [NV_F2TF32_RNA] = "llvm.nvvm.f2tf32.rna",
    [NV_CP_ASYNC_CA4] = "llvm.nvvm.cp.async.ca.shared.global.4",
    [NV_CP_ASYNC_CA8] = "llvm.nvvm.cp.async.ca.shared.global.8",
    [NV_CP_ASYNC_CG16] = "llvm.nvvm.cp.async.cg.shared.global.16",
    [NV_CP_ASYNC_CA4_S] = "llvm.nvvm.cp.async.ca.shared.global.4.s",
    [NV_CP_ASYNC_CA8_S] = "llvm.nvvm.cp.async.ca.shared.global.8.s",
    [NV_CP_ASYNC_CG16_S] = "llvm.nvvm.cp.async.cg.shared.global.16.s",
    [NV_CP_ASYNC_COMMIT] = "llvm.nvvm.cp.async.commit.group",
    [NV_CP_ASYNC_WAIT] = "llvm.nvvm.cp.async.wait.group",
    [NV_BARRIER_N_SYNC] = "llvm.nvvm.barrier",
    [NV_MBARRIER_INIT] = "llvm.nvvm.mbarrier.init.shared",
    [NV_MBARRIER_ARRIVE] = "llvm.nvvm.mbarrier.arrive.shared",
    [NV_CP_ASYNC_MBARRIER_ARRIVE_NOINC] = "llvm.nvvm.cp.async.mbarrier.arrive.noinc.shared",
    [NV_BULK_COMMIT_GROUP] = "llvm.nvvm.cp.async.bulk.commit.group",
    [NV_BULK_WAIT_GROUP] = "llvm.nvvm.cp.async.bulk.wait.group",
    [NV_BULK_WAIT_GROUP_READ] = "llvm.nvvm.cp.async.bulk.wait.group.read",
    [NV_SETMAXNREG_INC] = "llvm.nvvm.setmaxnreg.inc.sync.aligned.u32",
    [NV_SETMAXNREG_DEC] = "llvm.nvvm.setmaxnreg.dec.sync.aligned.u32",
};

void cg_error(cg *g, tl_loc loc, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  tl_diag_vreport(g->d, TL_DIAG_ERROR, loc, fmt, ap);
  va_end(ap);
  g->failed = true;
}

static bool enter(cg *g, tl_loc loc) {
  if (g->depth >= TL_CG_MAX_DEPTH) {
    if (!g->depth_reported) cg_error(g, loc, "code generation: IR nested more than %d levels deep", TL_CG_MAX_DEPTH);
    g->depth_reported = true;
    g->failed = true;
    return false;
  }
  g->depth++;
  return true;
}

/* The LLVM type of a dtype's lane, in registers (bool i1) or memory (i8). */
LLVMTypeRef cg_lane_type(cg *g, tl_dtype t, bool mem, tl_loc loc) {
  switch ((tl_type_code)t.code) {
  case TL_TYPE_BOOL: return mem ? g->t_i8 : g->t_i1;
  case TL_TYPE_INT:
  case TL_TYPE_UINT:
    if (t.bits == 8 || t.bits == 16 || t.bits == 32 || t.bits == 64) return LLVMIntTypeInContext(g->C, t.bits);
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
  case TL_TYPE_FLOAT8_E4M3:
  case TL_TYPE_FLOAT8_E5M2: return g->t_i8; /* the bytes; arithmetic is refused (cg_convert, T.gemm only) */
  case TL_TYPE_HANDLE: return g->t_ptr0;
  default: break;
  }
  cg_error(g, loc, "dtype %s is not supported by the NVPTX code generator", tl_dtype_name(t));
  return NULL;
}

LLVMTypeRef cg_type_of(cg *g, tl_dtype t, bool mem, tl_loc loc) {
  LLVMTypeRef l = cg_lane_type(g, t, mem, loc);
  if (!l) return NULL;
  return t.lanes > 1 ? LLVMVectorType(l, t.lanes) : l;
}

/* Scalar v replicated to `lanes` lanes. */
LLVMValueRef cg_splat(cg *g, LLVMValueRef v, int lanes) {
  if (lanes <= 1) return v;
  LLVMTypeRef vt = LLVMVectorType(LLVMTypeOf(v), lanes);
  LLVMValueRef ins = LLVMBuildInsertElement(g->B, LLVMGetPoison(vt), v, LLVMConstInt(g->t_i32, 0, 0), "");
  LLVMValueRef mask = splat_const(LLVMConstInt(g->t_i32, 0, 0), LLVMVectorType(g->t_i32, lanes));
  return LLVMBuildShuffleVector(g->B, ins, LLVMGetPoison(vt), mask, "");
}

/* Declares intrinsic `which` with the given overload types. */
LLVMValueRef cg_intrinsic(cg *g, int which, LLVMTypeRef *ovl, size_t novl) {
  const char *name = nv_names[which];
  unsigned id = LLVMLookupIntrinsicID(name, strlen(name));
  if (!id) {
    cg_error(g, TL_LOC_NONE, "internal error: LLVM has no intrinsic %s", name);
    return NULL;
  }
  return LLVMGetIntrinsicDeclaration(g->M, id, ovl, novl);
}
/* A call of inline PTX `text` with side effects (LLVMGetInlineAsm; operands
 * $0, $1, ... under the constraint string `cons`, docs/codegen.md "Intrinsics and inline PTX")
 * over at most 8 arguments, returning `ret`. */
LLVMValueRef cg_call_asm(cg *g, LLVMTypeRef ret, const char *text, const char *cons, LLVMValueRef *args, unsigned n) {
  return cg_call_asm_ex(g, ret, text, cons, args, n, true);
}
LLVMValueRef cg_call_asm_ex(cg *g, LLVMTypeRef ret, const char *text, const char *cons, LLVMValueRef *args, unsigned n,
                            bool side_effects) {
  LLVMTypeRef tys[TL_CG_MAX_ASM_OPERANDS];
  if (n > TL_CG_MAX_ASM_OPERANDS) {
    cg_error(g, TL_LOC_NONE, "internal error: inline asm with %u operands", n);
    return NULL;
  }
  for (unsigned i = 0; i < n; i++) tys[i] = LLVMTypeOf(args[i]);
  LLVMTypeRef fty = LLVMFunctionType(ret, tys, n, 0);
  LLVMValueRef ia =
      LLVMGetInlineAsm(fty, text, strlen(text), cons, strlen(cons), side_effects, 0, LLVMInlineAsmDialectATT, 0);
  return LLVMBuildCall2(g->B, fty, ia, args, n, "");
}
LLVMValueRef cg_call_intrinsic(cg *g, int which, LLVMTypeRef *ovl, size_t novl, LLVMValueRef *args, unsigned nargs) {
  LLVMValueRef fn = cg_intrinsic(g, which, ovl, novl);
  if (!fn) return NULL;
  return LLVMBuildCall2(g->B, LLVMGlobalGetValueType(fn), fn, args, nargs, "");
}
/* Intrinsic overloaded on one type, the type of its first argument. */
LLVMValueRef cg_call_ovl1(cg *g, int which, LLVMValueRef *args, unsigned nargs) {
  LLVMTypeRef ty = LLVMTypeOf(args[0]);
  return cg_call_intrinsic(g, which, &ty, 1, args, nargs);
}

/* --------------------------------------------------------- expressions */

/* Generates e converted to dtype t. */
LLVMValueRef cg_gen_as(cg *g, const tl_expr *e, tl_dtype t) {
  LLVMValueRef v = cg_gen_expr(g, e);
  return v ? cg_convert(g, v, e->dtype, t, e->loc) : NULL;
}

/* An intrinsic call as a value: the codegen hook of every tl_intrin (the
 * switch has no default, so -Wswitch names an intrinsic without one). */
static LLVMBasicBlockRef new_block(cg *g, const char *name);

/* cond ? te : fe in dtype t (a select, T.if_then_else): where
 * tl_select_one_arm says only the picked arm is evaluated (a condition that
 * guards a load), a branch and a phi (LLVM makes it a predicated load);
 * otherwise both arms and a select. */
static LLVMValueRef gen_select(cg *g, const tl_expr *cond, const tl_expr *te, const tl_expr *fe, tl_dtype t) {
  LLVMValueRef c = cg_gen_cond(g, cond);
  if (!c) return NULL;
  if (!tl_select_one_arm(cond, te, fe)) {
    LLVMValueRef a = cg_gen_as(g, te, t);
    LLVMValueRef b = a ? cg_gen_as(g, fe, t) : NULL;
    if (!b) return NULL;
    if (cond->dtype.lanes == 1 && t.lanes > 1) c = cg_splat(g, c, t.lanes);
    return LLVMBuildSelect(g->B, c, a, b, "");
  }
  LLVMBasicBlockRef tb = new_block(g, "sel.t"), fb = new_block(g, "sel.f"), end = new_block(g, "sel.end");
  LLVMBuildCondBr(g->B, c, tb, fb);
  LLVMPositionBuilderAtEnd(g->B, tb);
  LLVMValueRef v[2];
  LLVMBasicBlockRef from[2];
  if (!(v[0] = cg_gen_as(g, te, t))) return NULL;
  from[0] = LLVMGetInsertBlock(g->B);
  LLVMBuildBr(g->B, end);
  LLVMPositionBuilderAtEnd(g->B, fb);
  if (!(v[1] = cg_gen_as(g, fe, t))) return NULL;
  from[1] = LLVMGetInsertBlock(g->B);
  LLVMBuildBr(g->B, end);
  LLVMPositionBuilderAtEnd(g->B, end);
  LLVMValueRef phi = LLVMBuildPhi(g->B, LLVMTypeOf(v[0]), "");
  LLVMAddIncoming(phi, v, from, 2);
  return phi;
}

static LLVMValueRef gen_call(cg *g, const tl_expr *e) {
  tl_intrin op = (tl_intrin)e->u.call.op;
  const char *name = tl_intrinsics[op].name;
  int n = e->u.call.n;
  tl_expr *const *args = e->u.call.args;
  tl_loc loc = e->loc;
#define NEED(k)                                                                                                        \
  do {                                                                                                                 \
    if (n != (k)) {                                                                                                    \
      cg_error(g, loc, "T.%s takes %d argument%s, got %d", name, (k), (k) == 1 ? "" : "s", n);                         \
      return NULL;                                                                                                     \
    }                                                                                                                  \
  } while (0)
  switch (op) {
  case TL_INTRIN_GET_THREAD_BINDING:
  case TL_INTRIN_GET_BLOCK_BINDING:
  case TL_INTRIN_GET_LANE_IDX:
  case TL_INTRIN_GET_WARP_IDX: return cg_gen_sreg_call(g, e, op);
  case TL_INTRIN_SHFL_XOR:
  case TL_INTRIN_SHFL_DOWN:
  case TL_INTRIN_SHFL_UP:
  case TL_INTRIN_SHFL_SYNC: return cg_gen_shfl(g, e, op);
  case TL_INTRIN_PTX_ATOMIC_ADD:
  case TL_INTRIN_PTX_ATOMIC_MAX:
  case TL_INTRIN_PTX_ATOMIC_MIN: return cg_gen_atomic_add(g, e);
  case TL_INTRIN_INFINITY:
  case TL_INTRIN_MAX_VALUE:
  case TL_INTRIN_MIN_VALUE: return cg_gen_limit(g, e, op);
  case TL_INTRIN_REINTERPRET: NEED(2); return cg_gen_reinterpret(g, e);
  case TL_INTRIN_SYNC_THREADS: cg_error(g, loc, "T.sync_threads() has no value"); return NULL;
  case TL_INTRIN_SYNC_GRID: /* tile IR: split-kernels makes it the boundary of two launches */
    cg_error(g, loc, "T.sync_grid() reached code generation (pass split-kernels splits its kernel)");
    return NULL;
  case TL_INTRIN_DEBUG_PRINT: cg_error(g, loc, "T.debug_print has no value"); return NULL;
  case TL_INTRIN_DEVICE_ASSERT: cg_error(g, loc, "T.device_assert_at has no value"); return NULL;
  case TL_INTRIN_NO_SET_MAX_NREG:
    cg_error(g, loc, "T.no_set_max_nreg() has no value");
    return NULL;
  TL_INTRIN_CASES_WS_SCOPE:
    cg_error(g, loc, "T.%s is tile IR (lib/Lower/ws_scope.c lowers it)", tl_intrinsic_name(op));
    return NULL;
  case TL_INTRIN_IF_THEN_ELSE:
    NEED(3);
    return gen_select(g, args[0], args[1], args[2], e->dtype);
  TL_INTRIN_CASES_MINMAX_DIV:
    NEED(2);
    return cg_gen_binop_call(g, e, op);
  case TL_INTRIN_ABS: NEED(1); return cg_gen_abs(g, e);
  case TL_INTRIN_ISNAN:
  case TL_INTRIN_ISINF:
  case TL_INTRIN_ISFINITE: NEED(1); return cg_gen_fpclass(g, e, op);
  case TL_INTRIN_CLAMP: NEED(3); return cg_gen_clamp(g, e);
  case TL_INTRIN_FMA: NEED(3); return cg_gen_fma(g, e);
  /* unary float math implemented with LLVM intrinsics */
  case TL_INTRIN_SQRT: NEED(1); return cg_gen_float_math(g, e, op, NV_SQRT);
  case TL_INTRIN_FLOOR: NEED(1); return cg_gen_float_math(g, e, op, NV_FLOOR);
  case TL_INTRIN_CEIL: NEED(1); return cg_gen_float_math(g, e, op, NV_CEIL);
  case TL_INTRIN_TRUNC: NEED(1); return cg_gen_float_math(g, e, op, NV_TRUNC);
  case TL_INTRIN_ROUND: NEED(1); return cg_gen_float_math(g, e, op, NV_ROUND);
  case TL_INTRIN_SIGMOID: NEED(1); return cg_gen_float_math(g, e, op, -1);
  case TL_INTRIN_FAST_EXP: NEED(1); return cg_gen_fast_math(g, e, TL_INTRIN_EXP, true);
  case TL_INTRIN_FAST_EXP2: NEED(1); return cg_gen_fast_math(g, e, TL_INTRIN_EXP2, true);
  case TL_INTRIN_FAST_LOG: NEED(1); return cg_gen_fast_math(g, e, TL_INTRIN_LOG, true);
  case TL_INTRIN_FAST_LOG2: NEED(1); return cg_gen_fast_math(g, e, TL_INTRIN_LOG2, true);
  case TL_INTRIN_EXP:
  case TL_INTRIN_EXP2:
  case TL_INTRIN_EXP10:
  case TL_INTRIN_LOG:
  case TL_INTRIN_LOG2:
  case TL_INTRIN_LOG10:
  case TL_INTRIN_SIN:
  case TL_INTRIN_COS:
  case TL_INTRIN_TAN:
  case TL_INTRIN_TANH:
  case TL_INTRIN_POW:
    NEED(tl_intrinsics[op].min_args);
    if (g->f && g->f->pass_configs.fast_math) return cg_gen_fast_math(g, e, op, false);
    return cg_gen_float_math(g, e, op, -1);
  case TL_INTRIN_LOG1P:
  case TL_INTRIN_ERF:
  case TL_INTRIN_RSQRT:
  case TL_INTRIN_FMOD:
    NEED(tl_intrinsics[op].min_args);
    return cg_gen_float_math(g, e, op, -1);
  TL_INTRIN_CASES_SIMT_STMT:
    break; /* statements (gen_eval) */
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
  return cg_convert(g, vi->v, e->u.var->dtype, e->dtype, e->loc);
}

/* Whether e computes with float8 values (a literal, an operator or a call of
 * or on float8): code generation only loads, stores and selects them and
 * feeds them to T.ptx_mma (codegen_mma.c), so these are located errors. */
static bool fp8_arith(const tl_expr *e) {
  switch (e->kind) {
  case TL_EXPR_INT:
  case TL_EXPR_FLOAT:
  case TL_EXPR_CALL: return tl_dtype_is_fp8(e->dtype);
  case TL_EXPR_BINARY:
    return tl_dtype_is_fp8(e->dtype) || tl_dtype_is_fp8(e->u.bin.a->dtype) || tl_dtype_is_fp8(e->u.bin.b->dtype);
  case TL_EXPR_UNARY: return tl_dtype_is_fp8(e->dtype) || tl_dtype_is_fp8(e->u.un.a->dtype);
  default: return false;
  }
}

static LLVMValueRef gen_expr_inner(cg *g, const tl_expr *e) {
  if (fp8_arith(e)) {
    cg_error(g, e->loc,
             "arithmetic on %s values is not supported by the NVPTX code generator yet (float8 "
             "values are loaded, stored and multiplied by T.gemm only)",
             tl_dtype_name(tl_dtype_is_fp8(e->dtype) || e->kind != TL_EXPR_BINARY ? e->dtype : e->u.bin.a->dtype));
    return NULL;
  }
  switch (e->kind) {
  case TL_EXPR_INT: {
    LLVMTypeRef ty = cg_type_of(g, e->dtype, false, e->loc);
    if (!ty) return NULL;
    if (tl_dtype_is_float(e->dtype)) return cfp(ty, (double)e->u.ival);
    return cint(ty, is_bool(e->dtype) ? (e->u.ival != 0) : (uint64_t)e->u.ival);
  }
  case TL_EXPR_FLOAT: {
    LLVMTypeRef ty = cg_type_of(g, e->dtype, false, e->loc);
    if (!ty) return NULL;
    if (!tl_dtype_is_float(e->dtype)) {
      cg_error(g, e->loc, "float literal of dtype %s", tl_dtype_name(e->dtype));
      return NULL;
    }
    return cfp(ty, e->u.fval);
  }
  case TL_EXPR_STRING: cg_error(g, e->loc, "a string is not a value"); return NULL;
  case TL_EXPR_VAR: return gen_var(g, e);
  case TL_EXPR_BINARY: return cg_gen_binary(g, e);
  case TL_EXPR_UNARY: return cg_gen_unary(g, e);
  case TL_EXPR_SELECT: return gen_select(g, e->u.sel.cond, e->u.sel.t, e->u.sel.f, e->dtype);
  case TL_EXPR_CAST: return cg_gen_as(g, e->u.cast.value, e->dtype);
  case TL_EXPR_LOAD: return cg_gen_load(g, e);
  case TL_EXPR_CALL:
    if (e->u.call.op < 0 || e->u.call.op >= tl_num_intrinsics) {
      cg_error(g, e->loc, "internal error: bad intrinsic index %d", e->u.call.op);
      return NULL;
    }
    return gen_call(g, e);
  case TL_EXPR_BUFFER: cg_error(g, e->loc, "buffer '%s' used as a value", e->u.buffer->name); return NULL;
  case TL_EXPR_RAMP: {
    int lanes = e->dtype.lanes;
    tl_dtype st = scalar_of(e->dtype);
    LLVMValueRef b = cg_gen_as(g, e->u.ramp.base, st), s = b ? cg_gen_as(g, e->u.ramp.stride, st) : NULL;
    if (!s) return NULL;
    LLVMTypeRef lane = LLVMTypeOf(b);
    LLVMValueRef idx[64];
    if (lanes > 64 || lanes < 1) {
      cg_error(g, e->loc, "ramp of %d lanes", lanes);
      return NULL;
    }
    bool fl = tl_dtype_is_float(st);
    for (int i = 0; i < lanes; i++) idx[i] = fl ? LLVMConstReal(lane, i) : LLVMConstInt(lane, (unsigned)i, 0);
    LLVMValueRef iv = LLVMConstVector(idx, (unsigned)lanes);
    LLVMValueRef bv = cg_splat(g, b, lanes), sv = cg_splat(g, s, lanes);
    return fl ? LLVMBuildFAdd(g->B, bv, LLVMBuildFMul(g->B, sv, iv, ""), "")
              : LLVMBuildAdd(g->B, bv, LLVMBuildMul(g->B, sv, iv, ""), "");
  }
  case TL_EXPR_BROADCAST: {
    LLVMValueRef v = cg_gen_as(g, e->u.bcast.value, scalar_of(e->dtype));
    return v ? cg_splat(g, v, e->dtype.lanes) : NULL;
  }
  }
  cg_error(g, e->loc, "internal error: unknown expression kind %d", (int)e->kind);
  return NULL;
}

LLVMValueRef cg_gen_expr(cg *g, const tl_expr *e) {
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

static LLVMBasicBlockRef new_block(cg *g, const char *name) { return LLVMAppendBasicBlockInContext(g->C, g->fn, name); }

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

/* `while cond: body`: cond in the loop head, evaluated before each
 * iteration (TVM's While). */
static bool gen_while(cg *g, const tl_stmt *s) {
  if (s->u.whiles.cond->dtype.lanes > 1) {
    cg_error(g, s->u.whiles.cond->loc, "while condition must be a scalar");
    return false;
  }
  LLVMBasicBlockRef head = new_block(g, "while.head"), body = new_block(g, "while.body");
  LLVMBasicBlockRef exit = new_block(g, "while.end");
  LLVMBuildBr(g->B, head);
  LLVMPositionBuilderAtEnd(g->B, head);
  LLVMValueRef c = cg_gen_cond(g, s->u.whiles.cond);
  if (!c) return false;
  LLVMBuildCondBr(g->B, c, body, exit);
  LLVMPositionBuilderAtEnd(g->B, body);
  if (!gen_stmt(g, s->u.whiles.body)) return false;
  LLVMBuildBr(g->B, head);
  LLVMPositionBuilderAtEnd(g->B, exit);
  return true;
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
  LLVMValueRef lo = s->u.loop.mins && s->u.loop.mins[0] ? cg_gen_as(g, s->u.loop.mins[0], vt)
                                                        : cint(cg_lane_type(g, vt, false, s->loc), 0);
  LLVMValueRef ext = lo ? cg_gen_as(g, s->u.loop.extents[0], vt) : NULL;
  if (!ext) return false;
  bool uns = is_uint(vt);
  if (kind == TL_LOOP_THREAD) { /* one iteration per thread: v = lo + tid.x if tid.x < extent */
    LLVMValueRef tid = cg_sreg(g, NV_TID_X);
    if (!tid) return false;
    tid = cg_convert(g, tid, TL_INT32, vt, s->loc);
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
  LLVMValueRef step = s->u.loop.step ? cg_gen_as(g, s->u.loop.step, vt) : cint(LLVMTypeOf(lo), 1);
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
    LLVMValueRef v = cg_sreg(g, NV_CTAID_X + i);
    if (!v || !bind_var(g, bv, cg_convert(g, v, TL_INT32, bv->dtype, s->loc))) return false;
  }
  int64_t threads = 0;
  if (s->u.kernel.threads && tl_expr_is_const_int(s->u.kernel.threads, &threads)) {
    if (threads < 1 || threads > g->target->max_threads) {
      cg_error(g, s->u.kernel.threads->loc, "threads=%lld: a block has 1 to %d threads on %s", (long long)threads,
               g->target->max_threads, g->target->name);
      return false;
    }
    char buf[48];
    snprintf(buf, sizeof buf, "%lld,1,1", (long long)threads);
    LLVMAddAttributeAtIndex(g->fn, LLVMAttributeFunctionIndex,
                            LLVMCreateStringAttribute(g->C, "nvvm.maxntid", 12, buf, (unsigned)strlen(buf)));
    static const char *const keys[3] = {"maxntidx", "maxntidy", "maxntidz"};
    for (int k = 0; k < 3; k++) {
      LLVMMetadataRef ops[3] = {LLVMValueAsMetadata(g->fn), LLVMMDStringInContext2(g->C, keys[k], strlen(keys[k])),
                                LLVMValueAsMetadata(LLVMConstInt(g->t_i32, k == 0 ? (uint64_t)threads : 1, 0))};
      LLVMAddNamedMetadataOperand(g->M, "nvvm.annotations",
                                  LLVMMetadataAsValue(g->C, LLVMMDNodeInContext2(g->C, ops, 3)));
    }
  }
  return gen_stmt(g, s->u.kernel.body);
}

/* A statement intrinsic's argument count against the table's range. */
static bool stmt_arity(cg *g, const tl_expr *e) {
  const tl_intrinsic *in = &tl_intrinsics[e->u.call.op];
  if (e->u.call.n >= in->min_args && (in->max_args < 0 || e->u.call.n <= in->max_args)) return true;
  if (in->min_args == in->max_args)
    cg_error(g, e->loc, "T.%s takes %d arguments, got %d", in->name, in->min_args, e->u.call.n);
  else cg_error(g, e->loc, "T.%s takes %d to %d arguments, got %d", in->name, in->min_args, in->max_args, e->u.call.n);
  return false;
}

/* An expression statement: the statement intrinsics (bar.sync 0, the GEMM
 * path's ldmatrix / mma / cp.async and its groups), else the value of an
 * expression, dropped. */
static bool gen_eval(cg *g, const tl_stmt *s) {
  const tl_expr *e = s->u.eval.value;
  if (!e || e->kind != TL_EXPR_CALL || e->u.call.op < 0 || e->u.call.op >= TL_INTRIN_COUNT)
    return cg_gen_expr(g, e) != NULL;
  switch ((tl_intrin)e->u.call.op) {
  case TL_INTRIN_SYNC_THREADS: return cg_gen_barrier(g);
  case TL_INTRIN_DEBUG_PRINT: return stmt_arity(g, e) && cg_gen_debug_print(g, e);
  case TL_INTRIN_DEVICE_ASSERT: return stmt_arity(g, e) && cg_gen_device_assert(g, e); /* codegen_print.c */
  case TL_INTRIN_NO_SET_MAX_NREG: return true; /* a hint the warp-specialize pass read */
  case TL_INTRIN_PTX_LDMATRIX: return stmt_arity(g, e) && cg_gen_ldmatrix(g, e);
  case TL_INTRIN_PTX_STMATRIX: return stmt_arity(g, e) && cg_gen_stmatrix(g, e);
  case TL_INTRIN_PTX_MMA: return stmt_arity(g, e) && cg_gen_mma(g, e);
  case TL_INTRIN_PTX_MMA_SP: return stmt_arity(g, e) && cg_gen_mma_sp(g, e); /* codegen_mma.c */
  case TL_INTRIN_PTX_CP_ASYNC: return stmt_arity(g, e) && cg_gen_cp_async(g, e);
  case TL_INTRIN_PTX_COMMIT_GROUP: return stmt_arity(g, e) && cg_gen_commit_group(g);
  case TL_INTRIN_PTX_WAIT_GROUP:
    return stmt_arity(g, e) && cg_gen_wait_group(g, e);
  TL_INTRIN_CASES_ASYNC_PIPELINE:
    return stmt_arity(g, e) && cg_gen_hopper_stmt(g, e);
  TL_INTRIN_CASES_TMA:
    return cg_gen_hopper_stmt(g, e); /* variable arity: tl_tma_decode checks it */
  TL_INTRIN_CASES_WGMMA:
    return stmt_arity(g, e) && cg_gen_wgmma_stmt(g, e);
  default: return cg_gen_expr(g, e) != NULL; /* a value, dropped */
  }
}

static bool gen_stmt_inner(cg *g, const tl_stmt *s) {
  switch (s->kind) {
  case TL_STMT_SEQ:
    for (int i = 0; i < s->u.seq.n; i++)
      if (!gen_stmt(g, s->u.seq.stmts[i])) return false;
    return true;
  case TL_STMT_FOR: return gen_for(g, s);
  case TL_STMT_WHILE: return gen_while(g, s);
  case TL_STMT_KERNEL: return gen_kernel(g, s);
  case TL_STMT_ALLOC: return cg_gen_alloc(g, s);
  case TL_STMT_STORE: return cg_gen_store(g, s);
  case TL_STMT_IF: {
    LLVMValueRef c = cg_gen_cond(g, s->u.ifs.cond);
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
    LLVMValueRef v = cg_gen_as(g, s->u.let.value, s->u.let.var->dtype);
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
  tl_loc outer = cg_debug_set(g, s->loc); /* the statement's source line (codegen_debug.c) */
  bool ok = gen_stmt_inner(g, s);
  cg_debug_restore(g, outer);
  g->depth--;
  return ok && !g->failed;
}

/* ------------------------------------------------------------ functions */
static void add_enum_attr(cg *g, LLVMValueRef fn, unsigned idx, const char *name) {
  unsigned k = LLVMGetEnumAttributeKindForName(name, strlen(name));
  if (k) LLVMAddAttributeAtIndex(fn, idx, LLVMCreateEnumAttribute(g->C, k, 0));
}

/* The tensor-map parameters np0.. (docs/simt-ir.md "TMA tensor copies"):
 * each `ptr byval([128 x i8]) align 128`, named after its tensor, listed in
 * the kernel's nvvm "grid_constant" annotation (1-based parameter
 * indices).  LLVM 19's NVPTXLowerArgs then declares `.param .align 128 .b8
 * NAME[128]` and takes the address with cvta.param (what nvcc emits for a
 * `const __grid_constant__ CUtensorMap`); without the annotation it would
 * copy the map to local memory, an address the TMA unit cannot use. */
static bool add_tma_params(cg *g, int np0) {
  LLVMTypeRef map_ty = LLVMArrayType2(g->t_i8, 128);
  unsigned kbyval = LLVMGetEnumAttributeKindForName("byval", 5);
  unsigned kalign = LLVMGetEnumAttributeKindForName("align", 5);
  LLVMMetadataRef *idx = calloc((size_t)g->ntma, sizeof *idx);
  if (!idx) return false;
  for (int i = 0; i < g->ntma; i++) {
    unsigned ai = (unsigned)(np0 + i) + 1;
    LLVMValueRef pv = LLVMGetParam(g->fn, (unsigned)(np0 + i));
    char name[160];
    const tl_tma_map *m = &g->tma_maps[i];
    snprintf(name, sizeof name, "%s_tmap%d", m->tensor->name, i);
    LLVMSetValueName2(pv, name, strlen(name));
    LLVMAddAttributeAtIndex(g->fn, ai, LLVMCreateTypeAttribute(g->C, kbyval, map_ty));
    LLVMAddAttributeAtIndex(g->fn, ai, LLVMCreateEnumAttribute(g->C, kalign, 128));
    g->tma_params[i] = pv;
    idx[i] = LLVMValueAsMetadata(LLVMConstInt(g->t_i32, ai, 0));
  }
  LLVMMetadataRef ops[3] = {LLVMValueAsMetadata(g->fn), LLVMMDStringInContext2(g->C, "grid_constant", 13),
                            LLVMMDNodeInContext2(g->C, idx, (size_t)g->ntma)};
  LLVMAddNamedMetadataOperand(g->M, "nvvm.annotations", LLVMMetadataAsValue(g->C, LLVMMDNodeInContext2(g->C, ops, 3)));
  free(idx);
  return true;
}

static bool gen_func(cg *g, tl_primfunc *f) {
  g->f = f;
  g->kernels_seen = 0;
  g->smem_planned_end = tl_ir_planned_smem_end(f->body);
  g->smem_off = g->smem_planned_end;
  tl_map_init(&g->vars);
  tl_map_init(&g->bufs);
  bool ok = false;
  LLVMTypeRef *pt = NULL;
  int np0 = f->nparams + f->ndynamic, np = np0;
  {
    tl_loc loc;
    char msg[256];
    if ((g->ntma = tl_tma_collect(f, &g->tma_maps, &loc, msg, sizeof msg)) < 0) {
      g->ntma = 0;
      cg_error(g, loc, "%s", msg);
      goto done;
    }
  }
  tl_buffer *wsb[TL_WORKSPACE_MAX];
  int nws = tl_workspace_collect(f, wsb, TL_WORKSPACE_MAX);
  np = np0 + g->ntma + nws; /* the tensor maps, then the workspace pointers (stream-K) */
  pt = calloc((size_t)(np > 0 ? np : 1), sizeof *pt);
  g->tma_params = calloc((size_t)g->ntma + 1, sizeof *g->tma_params);
  if (!pt || !g->tma_params) goto done;
  for (int i = 0; i < f->nparams; i++) {
    const tl_param *p = &f->params[i];
    if (p->kind == TL_PARAM_TENSOR) {
      pt[i] = g->t_ptr1;
    } else {
      tl_dtype t = p->var->dtype;
      pt[i] = cg_type_of(g, t, true, p->var->loc); /* bool scalars travel as i8 */
      if (!pt[i]) goto done;
    }
  }
  for (int i = 0; i < f->ndynamic; i++) /* int32, or int64 for T.dynamic(name, "int64") */
    pt[f->nparams + i] = f->dynamic[i]->dtype.bits == 64 ? g->t_i64 : g->t_i32;
  for (int i = 0; i < g->ntma; i++) pt[np0 + i] = g->t_ptr0;
  for (int i = 0; i < nws; i++) pt[np0 + g->ntma + i] = g->t_ptr1;
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
  if (g->ntma && !add_tma_params(g, np0)) goto done;
  cg_debug_begin_func(g, f);
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
      bi->elem = cg_type_of(g, p->buffer->dtype, true, p->buffer->loc);
      if (!bi->elem || !tl_map_put(&g->bufs, p->buffer, bi)) goto done;
      add_enum_attr(g, g->fn, (unsigned)i + 1, "noalias");
      add_enum_attr(g, g->fn, (unsigned)i + 1, "nocapture");
    } else {
      LLVMSetValueName2(pv, p->var->name, strlen(p->var->name));
      LLVMValueRef v = cg_from_mem(g, pv, p->var->dtype);
      if (!bind_var(g, p->var, v)) goto done;
    }
  }
  for (int i = 0; i < nws; i++) { /* kernel workspaces: their allocation statements find them here */
    LLVMValueRef pv = LLVMGetParam(g->fn, (unsigned)(np0 + g->ntma + i));
    LLVMSetValueName2(pv, wsb[i]->name, strlen(wsb[i]->name));
    buf_info *bi = tl_arena_alloc(&g->arena, sizeof *bi);
    if (!bi) goto done;
    memset(bi, 0, sizeof *bi);
    bi->base = pv;
    bi->elem = cg_type_of(g, wsb[i]->dtype, true, wsb[i]->loc);
    if (!bi->elem || !tl_map_put(&g->bufs, wsb[i], bi)) goto done;
  }
  for (int i = 0; i < f->ndynamic; i++) {
    LLVMValueRef pv = LLVMGetParam(g->fn, (unsigned)(f->nparams + i));
    LLVMSetValueName2(pv, f->dynamic[i]->name, strlen(f->dynamic[i]->name));
    tl_dtype pt_dt = f->dynamic[i]->dtype.bits == 64 ? TL_INT64 : TL_INT32;
    if (!bind_var(g, f->dynamic[i], cg_convert(g, pv, pt_dt, f->dynamic[i]->dtype, f->loc))) goto done;
  }
  LLVMBuildBr(g->B, body);
  LLVMPositionBuilderAtEnd(g->B, body);
  if (!gen_stmt(g, f->body) || g->failed) goto done;
  if (g->kernels_seen == 0) {
    cg_error(g, f->loc, "prim_func '%s' has no T.Kernel", f->name);
    goto done;
  }
  LLVMBuildRetVoid(g->B);
  /* readonly for tensors never stored (with noalias: ld.global.nc); a T.make_tensor view may point into
   * any tensor parameter's memory, so with one no parameter keeps noalias (readonly stays: the function
   * does not write through that pointer, and without noalias its loads are no ld.global.nc) */
  unsigned noalias = LLVMGetEnumAttributeKindForName("noalias", 7);
  for (int i = 0; i < f->nparams; i++) {
    if (f->params[i].kind != TL_PARAM_TENSOR) continue;
    buf_info *bi = tl_map_get(&g->bufs, f->params[i].buffer, NULL);
    if (g->has_view) LLVMRemoveEnumAttributeAtIndex(g->fn, (unsigned)i + 1, noalias);
    if (bi && !bi->stored) add_enum_attr(g, g->fn, (unsigned)i + 1, "readonly");
  }
  if (f->smem_bytes < g->smem_off) f->smem_bytes = g->smem_off;
  if (f->smem_bytes < g->smem_planned_end) f->smem_bytes = g->smem_planned_end;
  ok = true;
done:
  cg_debug_end_func(g);
  free(pt);
  free(g->tma_maps);
  free(g->tma_params);
  g->tma_maps = NULL;
  g->tma_params = NULL;
  g->ntma = 0;
  tl_map_free(&g->vars);
  tl_map_free(&g->bufs);
  if (!ok && !g->failed) cg_error(g, f->loc, "out of memory in code generation");
  return ok;
}

bool tl_nvptx_build(LLVMModuleRef M, const tl_module *m, const tl_target *t, bool line_info, tl_diag *d) {
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
  g.line_info = line_info && ok;
  if (ok) cg_debug_begin_module(&g, m->filename);
  for (int i = 0; ok && i < m->nfuncs; i++) {
    ok = gen_func(&g, m->funcs[i]);
  }
  cg_debug_end_module(&g);
  LLVMDisposeBuilder(g.B);
  tl_arena_free(&g.arena);
  return ok && !g.failed;
}
