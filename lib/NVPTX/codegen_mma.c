/* Code generation of T.ptx_mma for the shapes beyond m16n8k16
 * (docs/simt-ir.md "T.ptx_mma"): m16n8k8 with float32/tfloat32 operands →
 * llvm.nvvm.mma.m16n8k8.row.col.tf32 (mma.sync.aligned.m16n8k8.row.col.
 * f32.tf32.tf32.f32), each operand first rounded by llvm.nvvm.f2tf32.rna
 * (cvt.rna.tf32.f32); m16n8k32 with int8/uint8 operands → llvm.nvvm.mma.
 * m16n8k32.row.col.{s8,u8} (int32 accumulators), four operand bytes packed
 * into each b32 register, the lowest-indexed element in the lowest byte;
 * m8n8k4 with float64 → llvm.nvvm.mma.m8n8k4.row.col.f64; m16n8k32 with
 * float8_e4m3/float8_e5m2 → inline mma.sync...f32.e4m3.e4m3.f32 (and the
 * e5m2 and mixed forms; sm_89+, PTX 8.4).  The instruction
 * table is lib/Support/mma.h; PTX ISA 8.5 §9.7.14.5 (mma shapes and types,
 * the fragment maps), §9.7.9.21 (cvt .rna .tf32).  The call carries the
 * `convergent` attribute like the m16n8k16 form (codegen_matrix.c). */
#include "NVPTX/codegen_internal.h"

#include <stdio.h>
#include <string.h>

#include "Support/mma.h"

/* Operand register r of local buffer b at base + off0: one element (f64,
 * or tf32 rounded from f32), or `per` 8-bit elements packed into an i32. */
static LLVMValueRef operand_reg(cg *g, const tl_buffer *b, LLVMValueRef base, int off0, int per, bool tf32,
                                LLVMTypeRef want) {
  buf_info *bi = cg_get_buf(g, b, b->loc);
  if (!bi) return NULL;
  if (per == 4) return cg_load_packed(g, b, base, off0, 4, want);
  LLVMValueRef p = cg_local_addr(g, b, base, off0);
  if (!p) return NULL;
  LLVMValueRef x = LLVMBuildLoad2(g->B, bi->elem, p, "");
  LLVMSetAlignment(x, (unsigned)tl_dtype_bytes(b->dtype));
  if (tf32) {
    LLVMValueRef cvt = cg_call_intrinsic(g, NV_F2TF32_RNA, NULL, 0, &x, 1);
    return cvt;
  }
  return x;
}

/* Calls the m16n8 mma asm `text` (constraints cons, n args) that returns the
 * four f32 accumulators and stores them to c's registers at offs[2] + 0..3.
 * The asm is convergent.  false on error. */
static bool mma_f32x4(cg *g, const tl_buffer *c, buf_info *cbi, LLVMValueRef *offs, const char *text, const char *cons,
                      LLVMValueRef *args, int n) {
  LLVMTypeRef f4[4] = {g->t_f32, g->t_f32, g->t_f32, g->t_f32};
  LLVMValueRef r = cg_call_asm(g, LLVMStructTypeInContext(g->C, f4, 4, 0), text, cons, args, n);
  if (!r) return false;
  cg_set_convergent(g, r);
  for (int i = 0; i < 4; i++) {
    LLVMValueRef p = cg_local_addr(g, c, offs[2], i);
    if (!p) return false;
    LLVMSetAlignment(LLVMBuildStore(g->B, LLVMBuildExtractValue(g->B, r, (unsigned)i, ""), p), 4);
  }
  cbi->stored = true;
  return true;
}

/* The fp8 mma.sync (m16n8k32 .e4m3/.e5m2, either for A and for B, f32
 * accumulators; PTX ISA 8.5 §9.7.14.5.14) as inline PTX: LLVM 19 has no
 * intrinsic for it.  Four operand bytes per b32 register as for .s8; the
 * module is marked "tl.ptx_version" = TL_PTX_VERSION_FP8_MMA so that emit.c
 * builds it with PTX 8.4.  The asm has side effects (it stays where the
 * warp is converged, like the convergent intrinsic calls). */
static bool gen_mma_fp8(cg *g, const tl_expr *e, const tl_buffer *a, const tl_buffer *b, const tl_buffer *c,
                        LLVMValueRef *offs) {
  LLVMValueRef args[14];
  for (int i = 0; i < 6; i++) {
    bool isa = i < 4;
    args[i] = cg_load_packed(g, isa ? a : b, isa ? offs[0] : offs[1], (isa ? i : i - 4) * 4, 4, g->t_i32);
    if (!args[i]) return false;
  }
  buf_info *cbi = cg_get_buf(g, c, e->loc);
  if (!cbi) return false;
  for (int i = 0; i < 4; i++) {
    LLVMValueRef p = cg_local_addr(g, c, offs[2], i);
    if (!p) return false;
    args[6 + i] = LLVMBuildLoad2(g->B, cbi->elem, p, "");
    LLVMSetAlignment(args[6 + i], 4);
  }
  char text[256];
  snprintf(text, sizeof text,
           "mma.sync.aligned.m16n8k32.row.col.f32.%s.%s.f32 {$0, $1, $2, $3}, {$4, $5, $6, $7}, {$8, $9}, "
           "{$10, $11, $12, $13};",
           a->dtype.code == TL_TYPE_FLOAT8_E4M3 ? "e4m3" : "e5m2",
           b->dtype.code == TL_TYPE_FLOAT8_E4M3 ? "e4m3" : "e5m2");
  if (!mma_f32x4(g, c, cbi, offs, text, "=f,=f,=f,=f,r,r,r,r,r,r,f,f,f,f", args, 10)) return false;
  cg_mark_fp8_module(g);
  return true;
}

static bool mark_ptx_version(cg *g, int v, tl_loc loc);

void cg_mark_fp8_module(cg *g) { mark_ptx_version(g, TL_PTX_VERSION_FP8_MMA, (tl_loc){0}); }

/* T.ptx_mma(a, a_off, b, b_off, c, c_off, "m16n8k8" | "m16n8k32" | "m16n8k64" | "m8n8k4"); "m16n8k64": int8 /
 * uint8 registers of packed .s4 / .u4 pairs (lib/Support/mma.h), 4 bytes per 32-bit operand register as
 * m16n8k32 .s8 */
bool cg_gen_mma_types(cg *g, const tl_expr *e, const tl_buffer *a, const tl_buffer *b, const tl_buffer *c) {
  tl_loc loc = e->loc;
  const tl_expr *shape = e->u.call.args[6];
  tl_mma_info mi = tl_mma_info_of_shape(a->dtype, c->dtype, shape->u.str);
  if (!tl_mma_operands_match(a->dtype, b->dtype) || mi.kind == TL_MMA_KIND_NONE || mi.kind == TL_MMA_KIND_F16) {
    cg_error(g, shape->loc,
             "T.ptx_mma: shape \"%s\" with A %s, B %s and C %s is not an mma.sync form "
             "(m16n8k16: float16/bfloat16; m16n8k8: float32/tfloat32 with float32; m16n8k32: int8/uint8 "
             "with int32 or float8_e4m3/float8_e5m2 with float32; m16n8k64: int8/uint8 holding packed "
             "int4/uint4 with int32; m8n8k4: float64)",
             shape->u.str, tl_dtype_name(a->dtype), tl_dtype_name(b->dtype), tl_dtype_name(c->dtype));
    return false;
  }
  if (mi.kind == TL_MMA_KIND_FP8) {
    if (!(g->target->mma_shapes & TL_MMA_M16N8K32_E4M3)) {
      cg_error(g, loc, "fp8 mma needs sm_89 or newer (T.ptx_mma with %s and %s; the target is %s)",
               tl_dtype_name(a->dtype), tl_dtype_name(b->dtype), g->target->name);
      return false;
    }
    LLVMValueRef offs[3];
    for (int i = 0; i < 3; i++)
      if (!(offs[i] = cg_gen_index64(g, e->u.call.args[2 * i + 1], 0))) return false;
    return gen_mma_fp8(g, e, a, b, c, offs);
  }
  if (mi.kind == TL_MMA_KIND_I4 && !(g->target->mma_shapes & TL_MMA_M16N8K64_S4)) {
    cg_error(g, loc, "int4 mma (m16n8k64 .s4/.u4) is not available on %s", g->target->name);
    return false;
  }
  bool u = a->dtype.code == TL_TYPE_UINT;
  int which = mi.kind == TL_MMA_KIND_TF32  ? NV_MMA_TF32
              : mi.kind == TL_MMA_KIND_F64 ? NV_MMA_F64
              : mi.kind == TL_MMA_KIND_I4  ? (u ? NV_MMA_U4 : NV_MMA_S4)
              : u                          ? NV_MMA_U8
                                           : NV_MMA_S8;
  LLVMValueRef fn = cg_intrinsic(g, which, NULL, 0);
  if (!fn) return false;
  LLVMTypeRef fty = LLVMGlobalGetValueType(fn);
  unsigned np = LLVMCountParamTypes(fty);
  /* operands: A regs, B regs, C regs (tf32 / s8: 4, 2, 4; f64: 1, 1, 2) */
  unsigned nar = mi.kind == TL_MMA_KIND_F64 ? 1 : 4, nbr = mi.kind == TL_MMA_KIND_F64 ? 1 : 2;
  unsigned ncr = mi.kind == TL_MMA_KIND_F64 ? 2 : 4;
  LLVMTypeRef pts[16];
  if (np != nar + nbr + ncr) {
    cg_error(g, loc, "internal error: unexpected mma intrinsic signature");
    return false;
  }
  LLVMGetParamTypes(fty, pts);
  LLVMValueRef offs[3];
  for (int i = 0; i < 3; i++)
    if (!(offs[i] = cg_gen_index64(g, e->u.call.args[2 * i + 1], 0))) return false;
  int per = mi.kind == TL_MMA_KIND_I8 || mi.kind == TL_MMA_KIND_I4 ? 4 : 1;
  bool tf32 = mi.kind == TL_MMA_KIND_TF32;
  LLVMValueRef args[16];
  for (unsigned i = 0; i < nar + nbr; i++) {
    bool isa = i < nar;
    LLVMValueRef r =
        operand_reg(g, isa ? a : b, isa ? offs[0] : offs[1], (int)(isa ? i : i - nar) * per, per, tf32, pts[i]);
    if (!r) return false;
    args[i] = r;
  }
  buf_info *cbi = cg_get_buf(g, c, loc);
  if (!cbi) return false;
  unsigned cal = (unsigned)tl_dtype_bytes(c->dtype);
  for (unsigned i = 0; i < ncr; i++) {
    LLVMValueRef p = cg_local_addr(g, c, offs[2], (int)i);
    if (!p) return false;
    LLVMValueRef x = LLVMBuildLoad2(g->B, cbi->elem, p, "");
    LLVMSetAlignment(x, cal);
    args[nar + nbr + i] = x;
  }
  LLVMValueRef r = LLVMBuildCall2(g->B, fty, fn, args, np, "");
  cg_set_convergent(g, r);
  for (unsigned i = 0; i < ncr; i++) {
    LLVMValueRef p = cg_local_addr(g, c, offs[2], (int)i);
    if (!p) return false;
    LLVMSetAlignment(LLVMBuildStore(g->B, LLVMBuildExtractValue(g->B, r, i, ""), p), cal);
  }
  cbi->stored = true;
  return true;
}

/* Sets the module's PTX ISA version for an instruction that needs version v
 * (the fp8 mma's 8.4, mma.sp::ordered_metadata's 8.5); a module that asked
 * for v or newer already keeps its version; one that asked for an older one
 * is refused (false after an error: the flag is set once). */
static bool mark_ptx_version(cg *g, int v, tl_loc loc) {
  LLVMMetadataRef md = LLVMGetModuleFlag(g->M, "tl.ptx_version", strlen("tl.ptx_version"));
  if (!md) {
    LLVMAddModuleFlag(g->M, LLVMModuleFlagBehaviorOverride, "tl.ptx_version", strlen("tl.ptx_version"),
                      LLVMValueAsMetadata(LLVMConstInt(g->t_i32, (unsigned)v, 0)));
    return true;
  }
  /* the flag's value is a ConstantAsMetadata: its operand 0 is the constant (emit.c reads it so) */
  LLVMValueRef cv = LLVMGetOperand(LLVMMetadataAsValue(g->C, md), 0);
  int64_t have = cv && LLVMIsAConstantInt(cv) ? LLVMConstIntGetSExtValue(cv) : 0;
  if (have >= v) return true;
  cg_error(g, loc, "a kernel module needs one PTX ISA version: this instruction needs %d.%d, an earlier one %lld.%lld",
           v / 10, v % 10, (long long)have / 10, (long long)have % 10);
  return false;
}

/* T.ptx_mma_sp(a, a_off, b, b_off, c, c_off, e, e_off, "m16n8k32"):
 * mma.sp::ordered_metadata.sync.aligned.m16n8k32.row.col.f32.{f16,bf16}x2.f32
 * (PTX ISA 8.5 §9.7.14.6) as inline PTX (LLVM 19 has no intrinsic): A's 8
 * compressed 16-bit values in 4 registers, B's 8 in 4, 4 float32
 * accumulators, the metadata register packed from e's 32 bits at e_off, the
 * sparsity selector 0 (lib/Support/mma.h "2:4 structured sparsity"). */
bool cg_gen_mma_sp(cg *g, const tl_expr *e) {
  tl_loc loc = e->loc;
  const tl_buffer *a = cg_buffer_arg(g, e, 0, "a"), *b = a ? cg_buffer_arg(g, e, 2, "b") : NULL;
  const tl_buffer *c = b ? cg_buffer_arg(g, e, 4, "c") : NULL, *m = c ? cg_buffer_arg(g, e, 6, "e") : NULL;
  if (!m) return false;
  const tl_expr *shape = e->u.call.args[8];
  bool a16 = a->dtype.bits == 16 && (a->dtype.code == TL_TYPE_FLOAT || a->dtype.code == TL_TYPE_BFLOAT);
  bool c32 = c->dtype.code == TL_TYPE_FLOAT && c->dtype.bits == 32 && c->dtype.lanes == 1;
  if (shape->kind != TL_EXPR_STRING || strcmp(shape->u.str, "m16n8k32") || !a16 || !tl_dtype_eq(a->dtype, b->dtype) ||
      !c32 || !tl_sparse_e_factor(a->dtype, m->dtype)) {
    cg_error(g, loc,
             "T.ptx_mma_sp: only \"m16n8k32\" with float16/bfloat16 A and B, float32 C and int8/uint8/int16/uint16 "
             "metadata is an mma.sp form here (got A %s, B %s, C %s, E %s)",
             tl_dtype_name(a->dtype), tl_dtype_name(b->dtype), tl_dtype_name(c->dtype), tl_dtype_name(m->dtype));
    return false;
  }
  LLVMValueRef offs[4], args[17];
  for (int i = 0; i < 4; i++)
    if (!(offs[i] = cg_gen_index64(g, e->u.call.args[2 * i + 1], 0))) return false;
  for (int i = 0; i < 8; i++)
    if (!(args[i] = cg_load_packed(g, i < 4 ? a : b, offs[i < 4 ? 0 : 1], 2 * (i % 4), 2, g->t_i32))) return false;
  buf_info *cbi = cg_get_buf(g, c, loc);
  if (!cbi) return false;
  for (int i = 0; i < 4; i++) {
    LLVMValueRef p = cg_local_addr(g, c, offs[2], i);
    if (!p) return false;
    args[8 + i] = LLVMBuildLoad2(g->B, cbi->elem, p, "");
    LLVMSetAlignment(args[8 + i], 4);
  }
  if (!(args[12] = cg_load_packed(g, m, offs[3], 0, 32 / m->dtype.bits, g->t_i32))) return false;
  char text[320];
  const char *ty = a->dtype.code == TL_TYPE_BFLOAT ? "bf16" : "f16";
  snprintf(text, sizeof text,
           "mma.sp::ordered_metadata.sync.aligned.m16n8k32.row.col.f32.%s.%s.f32 {$0, $1, $2, $3}, "
           "{$4, $5, $6, $7}, {$8, $9, $10, $11}, {$12, $13, $14, $15}, $16, 0x0;",
           ty, ty);
  if (!mma_f32x4(g, c, cbi, offs, text, "=f,=f,=f,=f,r,r,r,r,r,r,r,r,f,f,f,f,r", args, 13)) return false;
  return mark_ptx_version(g, TL_PTX_VERSION_SPARSE_MMA, loc);
}
