/* Code generation of the matrix ops of the mma.sync GEMM path (see
 * codegen_internal.h; docs/simt-ir.md "Warp-level and asynchronous
 * intrinsics"): T.ptx_ldmatrix → llvm.nvvm.ldmatrix.sync.aligned.m8n8.
 * x{1,2,4}[.trans].b16 on the shared address of src + src_off, each i32
 * result split into its two 16-bit halves stored to the local dst;
 * T.ptx_mma → llvm.nvvm.mma.m16n8k16.row.col.{f32.f32,f16.f16,bf16} with
 * operands packed from the local buffers (<2 x half> or i32 pairs) and the
 * results stored back into c; T.ptx_stmatrix (sm_90) → inline asm
 * stmatrix.sync.aligned.m8n8, ldmatrix's inverse; all carry the
 * `convergent` call-site attribute (docs/codegen.md "Kernels").  Fragment buffers are accessed at constant
 * offsets once T.unroll loops are unrolled, so SROA turns them into
 * registers (no local memory). */
#include "NVPTX/codegen_internal.h"

#include <stdio.h>
#include <string.h>

/* docs/simt-ir.md "Warp-level and asynchronous intrinsics".  Hardware facts:
 * PTX ISA 8.5 §9.7.14.5.15 (ldmatrix), §9.7.14.5.14 / Figure "MMA .m16n8k16
 * fragment layouts" (mma.sync.aligned.m16n8k16.row.col), §9.7.9.25.3
 * (cp.async: sizes 4, 8, 16; .cg only with 16; src-size < cp-size
 * zero-fills the rest, so src-size 0 reads nothing), §9.7.9.25.4
 * (cp.async.commit_group / wait_group N).  LLVM 19 intrinsic signatures as
 * in docs/codegen.md "Intrinsics and inline PTX" (ldmatrix overloaded on the pointer type; mma
 * f16 operands as <2 x half>, bf16 operands as i32). */

/* The operands of T.ptx_ldmatrix / T.ptx_stmatrix (dst, dst_off, src,
 * src_off, num, trans): the two buffers and the constants num and trans;
 * false after reporting a missing or non-constant one. */
static bool matrix_args(cg *g, const tl_expr *e, const tl_buffer **dst, const tl_buffer **src, int64_t *num,
                        int64_t *trans) {
  *dst = cg_buffer_arg(g, e, 0, "dst");
  *src = *dst ? cg_buffer_arg(g, e, 2, "src") : NULL;
  return *src && cg_const_arg(g, e, 4, "num", num) && cg_const_arg(g, e, 5, "trans", trans);
}

/* The operands of T.ptx_ldmatrix (stmatrix: false) or T.ptx_stmatrix (true)
 * fit the m8n8 b16 matrix instructions: num is 1, 2 or 4; the matrix (src of
 * ldmatrix, dst of stmatrix) is a shared buffer and the registers (the other)
 * a local one, both of a 16-bit dtype.  false after reporting. */
static bool matrix_operands_ok(cg *g, tl_loc loc, bool stmatrix, int64_t num, const tl_buffer *dst,
                               const tl_buffer *src) {
  const char *op = stmatrix ? "T.ptx_stmatrix" : "T.ptx_ldmatrix";
  if (num != 1 && num != 2 && num != 4) {
    cg_error(g, loc, "%s: num must be 1, 2 or 4, not %lld", op, (long long)num);
    return false;
  }
  for (int i = 0; i < 2; i++) {
    const tl_buffer *b = i == 0 ? dst : src;
    bool shared = (i == 0) == stmatrix;
    if ((shared ? is_shared_scope(b->scope) : is_local_scope(b->scope)) && is_16bit(b->dtype)) continue;
    cg_error(g, loc, "%s: %s '%s' must be a %s buffer of a 16-bit dtype (it is %s %s)", op, i == 0 ? "dst" : "src",
             b->name, shared ? "shared" : "local", tl_scope_name(b->scope), tl_dtype_name(b->dtype));
    return false;
  }
  return true;
}

/* T.ptx_ldmatrix(dst, dst_off, src, src_off, num, trans) */
bool cg_gen_ldmatrix(cg *g, const tl_expr *e) {
  tl_loc loc = e->loc;
  const tl_buffer *dst, *src;
  int64_t num, trans;
  if (!matrix_args(g, e, &dst, &src, &num, &trans) || !matrix_operands_ok(g, loc, false, num, dst, src)) return false;
  static const int which[2][3] = {{NV_LDMATRIX_X1, NV_LDMATRIX_X2, NV_LDMATRIX_X4},
                                  {NV_LDMATRIX_X1_T, NV_LDMATRIX_X2_T, NV_LDMATRIX_X4_T}};
  LLVMValueRef addr = cg_elem_addr(g, src, e->u.call.args[3], loc);
  LLVMValueRef doff = addr ? cg_gen_index64(g, e->u.call.args[1], 0) : NULL;
  if (!doff) return false;
  LLVMTypeRef ovl = g->t_ptr3;
  LLVMValueRef r = cg_call_intrinsic(g, which[trans != 0][num == 1 ? 0 : num == 2 ? 1 : 2], &ovl, 1, &addr, 1);
  if (!r) return false;
  cg_set_convergent(g, r);
  buf_info *bi = cg_get_buf(g, dst, loc);
  if (!bi) return false;
  LLVMTypeRef v2 = LLVMVectorType(bi->elem, 2);
  for (int i = 0; i < (int)num; i++) {
    LLVMValueRef reg = num == 1 ? r : LLVMBuildExtractValue(g->B, r, (unsigned)i, "");
    LLVMValueRef pair = LLVMBuildBitCast(g->B, reg, v2, "");
    for (int h = 0; h < 2; h++) { /* low half = lower-indexed element (PTX ISA §9.7.14.5.15) */
      LLVMValueRef p = cg_local_addr(g, dst, doff, 2 * i + h);
      if (!p) return false;
      LLVMValueRef st =
          LLVMBuildStore(g->B, LLVMBuildExtractElement(g->B, pair, LLVMConstInt(g->t_i32, (unsigned)h, 0), ""), p);
      LLVMSetAlignment(st, 2);
    }
  }
  bi->stored = true;
  return true;
}

/* T.ptx_stmatrix(dst, dst_off, src, src_off, num, trans): inline asm
 * `stmatrix.sync.aligned.m8n8.x{num}[.trans].shared.b16 [addr], {r..}`
 * (PTX ISA 8.5 §9.7.14.5.16: sm_90, PTX ISA 7.8; LLVM 19 has no intrinsic
 * for it).  Register i packs src[src_off + 2i] (low half) and
 * src[src_off + 2i + 1]; the address is the lane's row address, a shared
 * pointer under `l` (codegen_hopper.c: LLVM 19's shared pointers are
 * 64-bit shared-window addresses). */
bool cg_gen_stmatrix(cg *g, const tl_expr *e) {
  tl_loc loc = e->loc;
  const tl_buffer *dst, *src;
  int64_t num, trans;
  if (!matrix_args(g, e, &dst, &src, &num, &trans)) return false;
  if (g->target->sm < 90) {
    cg_error(g, loc, "T.ptx_stmatrix needs sm_90 or later (target %s)", g->target->name);
    return false;
  }
  if (g->target->ptx_version < 78) {
    cg_error(g, loc, "T.ptx_stmatrix needs PTX ISA 7.8 or later (target %s emits PTX ISA %d.%d)", g->target->name,
             g->target->ptx_version / 10, g->target->ptx_version % 10);
    return false;
  }
  if (!matrix_operands_ok(g, loc, true, num, dst, src)) return false;
  LLVMValueRef args[5];
  if (!(args[0] = cg_elem_addr(g, dst, e->u.call.args[1], loc))) return false;
  LLVMValueRef soff = cg_gen_index64(g, e->u.call.args[3], 0);
  if (!soff) return false;
  for (int i = 0; i < (int)num; i++)
    if (!(args[1 + i] = cg_load_packed(g, src, soff, 2 * i, 2, g->t_i32))) return false;
  char text[128], cons[40] = "l";
  snprintf(text, sizeof text, "stmatrix.sync.aligned.m8n8.x%d%s.shared.b16 [$0], {%s};", (int)num,
           trans ? ".trans" : "",
           num == 1   ? "$1"
           : num == 2 ? "$1, $2"
                      : "$1, $2, $3, $4");
  for (int i = 0; i < (int)num; i++) strcat(cons, ",r");
  strcat(cons, ",~{memory}");
  LLVMValueRef r = cg_call_asm(g, g->t_void, text, cons, args, (unsigned)(1 + num));
  if (!r) return false;
  cg_set_convergent(g, r);
  return true;
}

LLVMValueRef cg_load_packed(cg *g, const tl_buffer *b, LLVMValueRef base, int k, int n, LLVMTypeRef want) {
  buf_info *bi = cg_get_buf(g, b, b->loc);
  if (!bi) return NULL;
  LLVMTypeRef vn = LLVMVectorType(bi->elem, (unsigned)n);
  LLVMValueRef v = LLVMGetPoison(vn);
  for (int h = 0; h < n; h++) {
    LLVMValueRef p = cg_local_addr(g, b, base, k + h);
    if (!p) return NULL;
    LLVMValueRef x = LLVMBuildLoad2(g->B, bi->elem, p, "");
    LLVMSetAlignment(x, (unsigned)tl_dtype_bytes(b->dtype));
    v = LLVMBuildInsertElement(g->B, v, x, LLVMConstInt(g->t_i32, (unsigned)h, 0), "");
  }
  return want == vn ? v : LLVMBuildBitCast(g->B, v, want, "");
}
static LLVMValueRef load_pair(cg *g, const tl_buffer *b, LLVMValueRef base, int k, LLVMTypeRef want) {
  return cg_load_packed(g, b, base, k, 2, want);
}

/* T.ptx_mma(a, a_off, b, b_off, c, c_off, "m16n8k16") */
bool cg_gen_mma(cg *g, const tl_expr *e) {
  tl_loc loc = e->loc;
  const tl_buffer *a = cg_buffer_arg(g, e, 0, "a"), *b = a ? cg_buffer_arg(g, e, 2, "b") : NULL;
  const tl_buffer *c = b ? cg_buffer_arg(g, e, 4, "c") : NULL;
  if (!c) return false;
  const tl_buffer *bufs[3] = {a, b, c};
  for (int i = 0; i < 3; i++) {
    if (!is_local_scope(bufs[i]->scope) || bufs[i]->dtype.lanes != 1) {
      cg_error(g, loc, "T.ptx_mma: operand '%s' must be a local buffer (it is %s)", bufs[i]->name,
               tl_scope_name(bufs[i]->scope));
      return false;
    }
  }
  const tl_expr *shape = e->u.call.args[6];
  if (shape && shape->kind == TL_EXPR_STRING && strcmp(shape->u.str, "m16n8k16"))
    return cg_gen_mma_types(g, e, a, b, c); /* codegen_mma.c */
  if (!shape || shape->kind != TL_EXPR_STRING || strcmp(shape->u.str, "m16n8k16")) {
    cg_error(g, shape ? shape->loc : loc, "T.ptx_mma: the only supported shape is \"m16n8k16\"");
    return false;
  }
  int which;
  if (!tl_dtype_eq(a->dtype, b->dtype) || !(is_f16(a->dtype) || is_bf16(a->dtype))) {
    cg_error(g, loc, "T.ptx_mma: A and B must both be float16 or both bfloat16 (got %s and %s)",
             tl_dtype_name(a->dtype), tl_dtype_name(b->dtype));
    return false;
  }
  if (c->dtype.code == TL_TYPE_FLOAT && c->dtype.bits == 32)
    which = is_f16(a->dtype) ? NV_MMA_F16_F32 : NV_MMA_BF16_F32;
  else if (is_f16(c->dtype) && is_f16(a->dtype)) which = NV_MMA_F16_F16;
  else {
    cg_error(g, loc,
             "T.ptx_mma: accumulator '%s' of %s with %s inputs (supported: float16 -> float32 "
             "or float16, bfloat16 -> float32)",
             c->name, tl_dtype_name(c->dtype), tl_dtype_name(a->dtype));
    return false;
  }
  LLVMValueRef fn = cg_intrinsic(g, which, NULL, 0);
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
    if (!(offs[i] = cg_gen_index64(g, e->u.call.args[2 * i + 1], 0))) return false;
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
  buf_info *cbi = cg_get_buf(g, c, loc);
  if (!cbi) return false;
  for (unsigned i = 0; i < nc; i++) {
    if (nc == 4) {
      LLVMValueRef p = cg_local_addr(g, c, offs[2], (int)i);
      if (!p) return false;
      LLVMValueRef x = LLVMBuildLoad2(g->B, cbi->elem, p, "");
      LLVMSetAlignment(x, 4);
      args[6 + i] = x;
    } else if (!(args[6 + i] = load_pair(g, c, offs[2], 2 * (int)i, pts[6 + i]))) {
      return false;
    }
  }
  LLVMValueRef r = LLVMBuildCall2(g->B, fty, fn, args, np, "");
  cg_set_convergent(g, r);
  for (unsigned i = 0; i < nc; i++) {
    LLVMValueRef d = LLVMBuildExtractValue(g->B, r, i, "");
    if (nc == 4) {
      LLVMValueRef p = cg_local_addr(g, c, offs[2], (int)i);
      if (!p) return false;
      LLVMSetAlignment(LLVMBuildStore(g->B, d, p), 4);
    } else {
      LLVMTypeRef v2 = LLVMVectorType(cbi->elem, 2);
      if (LLVMTypeOf(d) != v2) d = LLVMBuildBitCast(g->B, d, v2, "");
      for (int h = 0; h < 2; h++) {
        LLVMValueRef p = cg_local_addr(g, c, offs[2], 2 * (int)i + h);
        if (!p) return false;
        LLVMValueRef x = LLVMBuildExtractElement(g->B, d, LLVMConstInt(g->t_i32, (unsigned)h, 0), "");
        LLVMSetAlignment(LLVMBuildStore(g->B, x, p), 2);
      }
    }
  }
  cbi->stored = true;
  return true;
}
