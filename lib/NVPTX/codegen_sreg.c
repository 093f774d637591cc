/* Code generation of special-register reads (see codegen_internal.h):
 * block variables and T.get_block_binding(k) read %ctaid.{x,y,z},
 * T.get_thread_binding(k) reads %tid.{x,y,z}, T.get_lane_idx /
 * T.get_warp_idx are %tid.x & 31 and %tid.x >> 5 (PTX ISA §10). */
#include "NVPTX/codegen_internal.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

LLVMValueRef cg_sreg(cg *g, int which) { return cg_call_intrinsic(g, which, NULL, 0, NULL, 0); }

/* T.get_thread_binding / get_block_binding / get_lane_idx / get_warp_idx:
 * %tid.{x,y,z}, %ctaid.{x,y,z}, %tid.x & 31, %tid.x >> 5. */
LLVMValueRef cg_gen_sreg_call(cg *g, const tl_expr *e, tl_intrin op) {
  int n = e->u.call.n;
  if (op == TL_INTRIN_GET_LANE_IDX || op == TL_INTRIN_GET_WARP_IDX) {
    LLVMValueRef t = cg_sreg(g, NV_TID_X);
    if (!t) return NULL;
    LLVMValueRef v = op == TL_INTRIN_GET_LANE_IDX ? LLVMBuildAnd(g->B, t, cint(g->t_i32, 31), "")
                                                  : LLVMBuildLShr(g->B, t, cint(g->t_i32, 5), "");
    return cg_convert(g, v, TL_INT32, e->dtype, e->loc);
  }
  int64_t k = 0;
  if (n > 1 || (n == 1 && !tl_expr_is_const_int(e->u.call.args[0], &k)) || k < 0 || k > 2) {
    cg_error(g, e->loc, "T.%s needs a constant dimension 0, 1 or 2", tl_intrinsics[op].name);
    return NULL;
  }
  bool block = op == TL_INTRIN_GET_BLOCK_BINDING;
  LLVMValueRef v = cg_sreg(g, (block ? NV_CTAID_X : NV_TID_X) + (int)k);
  return v ? cg_convert(g, v, TL_INT32, e->dtype, e->loc) : NULL;
}
