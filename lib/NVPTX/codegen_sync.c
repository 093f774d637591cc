/* Code generation of synchronisation and warp collectives (see
 * codegen_internal.h): T.sync_threads → bar.sync 0 (llvm.nvvm.barrier0),
 * T.ptx_commit_group / T.ptx_wait_group(n) → cp.async.commit_group /
 * wait_group n (PTX ISA §9.7.9.25.4), T.shfl_* → shfl.sync.{bfly,down,up,idx}
 * (PTX ISA §9.7.8.6), and the `convergent` call-site attribute that keeps
 * warp-collective calls out of divergent code (docs/codegen.md "Kernels"). */
#include "NVPTX/codegen_internal.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

/* One 32-bit warp shuffle (shfl.sync.{bfly,down,up,idx}.b32), marked
 * convergent so no pass moves it into divergent code (docs/codegen.md "Kernels"). */
static LLVMValueRef shfl32(cg *g, int which, LLVMValueRef mask, LLVMValueRef v, LLVMValueRef lane, LLVMValueRef c) {
  LLVMValueRef args[4] = {mask, v, lane, c};
  LLVMValueRef r = cg_call_intrinsic(g, which, NULL, 0, args, 4);
  if (r) {
    unsigned k = LLVMGetEnumAttributeKindForName("convergent", 10);
    LLVMAddCallSiteAttribute(r, LLVMAttributeFunctionIndex, LLVMCreateEnumAttribute(g->C, k, 0));
  }
  return r;
}

/* T.shfl_xor/down/up(value, lane[, width]) and T.shfl_sync(mask, value,
 * lane[, width]) on scalars of 8 to 64 bits (64-bit values as two halves). */
LLVMValueRef cg_gen_shfl(cg *g, const tl_expr *e, tl_intrin op) {
  const char *name = tl_intrinsics[op].name;
  int n = e->u.call.n;
  tl_expr *const *args = e->u.call.args;
  bool sync = op == TL_INTRIN_SHFL_SYNC;
  int first = sync ? 1 : 0;
  int which = sync                        ? NV_SHFL_IDX
              : op == TL_INTRIN_SHFL_XOR  ? NV_SHFL_BFLY
              : op == TL_INTRIN_SHFL_DOWN ? NV_SHFL_DOWN
                                          : NV_SHFL_UP;
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
  if (n == first + 3 &&
      (!tl_expr_is_const_int(args[first + 2], &width) || width < 1 || width > 32 || (width & (width - 1)))) {
    cg_error(g, e->loc, "T.%s: width must be a constant power of two up to 32", name);
    return NULL;
  }
  LLVMValueRef mask = sync ? cg_gen_as(g, args[0], TL_DT(TL_TYPE_UINT, 32)) : cint(g->t_i32, 0xFFFFFFFFu);
  LLVMValueRef v = mask ? cg_gen_as(g, args[first], t) : NULL;
  LLVMValueRef lane = v ? cg_gen_as(g, args[first + 1], TL_INT32) : NULL;
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

/* T.sync_threads(): bar.sync 0 (llvm.nvvm.barrier0, convergent in LLVM). */
bool cg_gen_barrier(cg *g) {
  LLVMValueRef c = cg_call_intrinsic(g, NV_BARRIER0, NULL, 0, NULL, 0);
  return c != NULL;
}

/* T.ptx_commit_group(): cp.async.commit_group (PTX ISA §9.7.9.25.4). */
bool cg_gen_commit_group(cg *g) { return cg_call_intrinsic(g, NV_CP_ASYNC_COMMIT, NULL, 0, NULL, 0) != NULL; }

/* T.ptx_wait_group(n): cp.async.wait_group n, n a constant (PTX ISA §9.7.9.25.4). */
bool cg_gen_wait_group(cg *g, const tl_expr *e) {
  int64_t k;
  if (!cg_const_arg(g, e, 0, "n", &k)) return false;
  if (k < 0 || k > 1000) {
    cg_error(g, e->loc, "T.ptx_wait_group: n must be a constant from 0 to 1000, not %lld", (long long)k);
    return false;
  }
  LLVMValueRef a = LLVMConstInt(g->t_i32, (uint64_t)k, 0);
  return cg_call_intrinsic(g, NV_CP_ASYNC_WAIT, NULL, 0, &a, 1) != NULL;
}

/* Marks a call convergent: no pass may move it into divergent code (docs/codegen.md "Kernels"). */
void cg_set_convergent(cg *g, LLVMValueRef call) {
  unsigned k = LLVMGetEnumAttributeKindForName("convergent", 10);
  if (call && k) LLVMAddCallSiteAttribute(call, LLVMAttributeFunctionIndex, LLVMCreateEnumAttribute(g->C, k, 0));
}
