/* T.debug_print (T.print) as CUDA's device printf:
 *   i32 @vprintf(ptr format, ptr args)
 * (the ABI nvcc's printf lowers to; the CUDA driver prints the buffer on the
 * host after the kernel).  The format is the call site's line
 * (tl_debug_print_format, lib/IR/debug_print.c: the SIMT executor prints the
 * same), a constant global in the global address space; the arguments are
 * written into a struct on the thread's stack (an alloca of the entry block)
 * with each one at its natural alignment, as vprintf reads them: the block
 * index x, y, z and thread index x, y, z (i32), the element index (i32, with
 * a buffer name), then the value: i32 (integers of up to 32 bits, sign- or
 * zero-extended), i64, a double (every float dtype), or a pointer to
 * "true" / "false".  With thread >= 0 only that thread of the block prints
 * (a branch on %tid.x).  A failed T.device_assert_at prints its line the
 * same way, then stops the kernel (cg_gen_device_assert). */
#include "NVPTX/codegen_internal.h"

#include <stdlib.h>
#include <string.h>

/* A private constant string in the global address space, as a generic pointer. */
static LLVMValueRef const_str(cg *g, const char *s, const char *name) {
  size_t n = strlen(s) + 1;
  LLVMValueRef init = LLVMConstStringInContext2(g->C, s, n - 1, 0);
  LLVMValueRef gv = LLVMAddGlobalInAddressSpace(g->M, LLVMTypeOf(init), name, 1);
  LLVMSetInitializer(gv, init);
  LLVMSetGlobalConstant(gv, 1);
  LLVMSetLinkage(gv, LLVMPrivateLinkage);
  LLVMSetUnnamedAddress(gv, LLVMGlobalUnnamedAddr);
  LLVMSetAlignment(gv, 1);
  return LLVMConstAddrSpaceCast(gv, g->t_ptr0);
}

static LLVMValueRef vprintf_fn(cg *g, LLVMTypeRef *fty) {
  LLVMTypeRef ps[2] = {g->t_ptr0, g->t_ptr0};
  *fty = LLVMFunctionType(g->t_i32, ps, 2, 0);
  LLVMValueRef f = LLVMGetNamedFunction(g->M, "vprintf");
  return f ? f : LLVMAddFunction(g->M, "vprintf", *fty);
}

/* The block index x, y, z and the thread index x, y, z (i32) into vals[0..5]. */
static bool index_args(cg *g, LLVMValueRef *vals) {
  static const int sregs[6] = {NV_CTAID_X, NV_CTAID_Y, NV_CTAID_Z, NV_TID_X, NV_TID_Y, NV_TID_Z};
  for (int i = 0; i < 6; i++)
    if (!(vals[i] = cg_sreg(g, sregs[i]))) return false;
  return true;
}

/* vprintf(fmt, &{vals[0], ..., vals[n-1]}): the arguments in a struct on the
 * thread's stack (an alloca of the entry block). */
static void call_vprintf(cg *g, LLVMValueRef fmt_ptr, LLVMValueRef *vals, unsigned n) {
  LLVMTypeRef tys[8];
  for (unsigned i = 0; i < n; i++) tys[i] = LLVMTypeOf(vals[i]);
  LLVMTypeRef st = LLVMStructTypeInContext(g->C, tys, n, 0); /* natural alignment: vprintf's layout */
  LLVMBuilderRef ab = LLVMCreateBuilderInContext(g->C);
  LLVMValueRef term = LLVMGetBasicBlockTerminator(g->entry);
  if (term) LLVMPositionBuilderBefore(ab, term);
  else LLVMPositionBuilderAtEnd(ab, g->entry);
  LLVMValueRef buf = LLVMBuildAlloca(ab, st, "print.args");
  LLVMSetAlignment(buf, 8);
  LLVMDisposeBuilder(ab);
  for (unsigned i = 0; i < n; i++) LLVMBuildStore(g->B, vals[i], LLVMBuildStructGEP2(g->B, st, buf, i, ""));
  LLVMTypeRef fty;
  LLVMValueRef fn = vprintf_fn(g, &fty);
  LLVMValueRef args[2] = {fmt_ptr, buf};
  LLVMBuildCall2(g->B, fty, fn, args, 2, "");
}

static const char *str_arg(cg *g, const tl_expr *e, const char *what) {
  if (e->kind == TL_EXPR_STRING) return e->u.str;
  cg_error(g, e->loc, "T.debug_print: %s must be a string literal", what);
  return NULL;
}

/* The value as vprintf takes it (kind: tl_debug_print_kind). */
static LLVMValueRef print_value(cg *g, const tl_expr *e, tl_debug_print_kind k) {
  LLVMValueRef v = cg_gen_expr(g, e);
  if (!v) return NULL;
  switch (k) {
  case TL_DEBUG_PRINT_FLOAT: return cg_convert(g, v, e->dtype, (tl_dtype){TL_TYPE_FLOAT, 64, 1}, e->loc);
  case TL_DEBUG_PRINT_INT: return cg_convert(g, v, e->dtype, TL_INT32, e->loc);
  case TL_DEBUG_PRINT_UINT: return LLVMBuildZExtOrBitCast(g->B, v, g->t_i32, "");
  case TL_DEBUG_PRINT_I64:
  case TL_DEBUG_PRINT_U64: return LLVMBuildIntCast2(g->B, v, g->t_i64, k == TL_DEBUG_PRINT_I64, "");
  case TL_DEBUG_PRINT_BOOL: {
    LLVMValueRef c = cg_to_cond(g, v, e->dtype, e->loc);
    return c ? LLVMBuildSelect(g->B, c, const_str(g, "true", "tl_print_true"), const_str(g, "false", "tl_print_false"),
                               "")
             : NULL;
  }
  }
  return NULL;
}

bool cg_gen_debug_print(cg *g, const tl_expr *e) {
  tl_expr *const *a = e->u.call.args;
  const char *where = str_arg(g, a[0], "where"), *msg = where ? str_arg(g, a[1], "msg") : NULL;
  const char *buffer = msg ? str_arg(g, a[2], "buffer") : NULL;
  if (!buffer) return false;
  tl_debug_print_kind k;
  if (!tl_debug_print_kind_of(a[4]->dtype, &k, NULL)) {
    cg_error(g, a[4]->loc, "T.print of a %s value is not supported", tl_dtype_name(a[4]->dtype));
    return false;
  }
  char *fmt = tl_debug_print_format(where, msg, buffer, a[4]->dtype);
  if (!fmt) {
    cg_error(g, e->loc, "out of memory in code generation");
    return false;
  }
  LLVMValueRef fmt_ptr = const_str(g, fmt, "tl_print_fmt");
  free(fmt);
  int64_t thread = -1;
  if (!tl_expr_is_const_int(a[5], &thread)) {
    cg_error(g, a[5]->loc, "T.debug_print: the thread must be a constant");
    return false;
  }
  LLVMBasicBlockRef done = NULL;
  if (thread >= 0) { /* only that thread prints */
    LLVMValueRef tid = cg_sreg(g, NV_TID_X);
    if (!tid) return false;
    LLVMBasicBlockRef body = LLVMAppendBasicBlockInContext(g->C, g->fn, "print.body");
    done = LLVMAppendBasicBlockInContext(g->C, g->fn, "print.end");
    LLVMBuildCondBr(g->B, LLVMBuildICmp(g->B, LLVMIntEQ, tid, cint(g->t_i32, (uint64_t)thread), ""), body, done);
    LLVMPositionBuilderAtEnd(g->B, body);
  }
  bool indexed = *buffer != '\0';
  LLVMValueRef vals[8];
  unsigned n = 6;
  if (!index_args(g, vals)) return false;
  if (indexed && !(vals[n++] = cg_gen_as(g, a[3], TL_INT32))) return false;
  if (!(vals[n++] = print_value(g, a[4], k))) return false;
  call_vprintf(g, fmt_ptr, vals, n);
  if (done) {
    LLVMBuildBr(g->B, done);
    LLVMPositionBuilderAtEnd(g->B, done);
  }
  return true;
}

/* CUDA's assert: void __assertfail(const char *message, const char *file,
 * unsigned line, const char *function, size_t char_size), the system call
 * nvcc's assert lowers to (the driver prints its line and the host sees
 * CUDA_ERROR_ASSERT). */
static void call_assertfail(cg *g, const char *msg, tl_loc loc) {
  LLVMTypeRef ps[5] = {g->t_ptr0, g->t_ptr0, g->t_i32, g->t_ptr0, g->t_i64};
  LLVMTypeRef fty = LLVMFunctionType(LLVMVoidTypeInContext(g->C), ps, 5, 0);
  LLVMValueRef f = LLVMGetNamedFunction(g->M, "__assertfail");
  if (!f) f = LLVMAddFunction(g->M, "__assertfail", fty);
  size_t fnlen = 0;
  const char *fname = LLVMGetValueName2(g->fn, &fnlen);
  LLVMValueRef args[5] = {const_str(g, msg, "tl_assert_msg"), const_str(g, loc.file ? loc.file : "", "tl_assert_file"),
                          cint(g->t_i32, (uint64_t)(loc.line > 0 ? loc.line : 0)),
                          const_str(g, fname ? fname : "", "tl_assert_fn"), cint(g->t_i64, 1)};
  LLVMBuildCall2(g->B, fty, f, args, 5, "");
}

/* T.device_assert_at(cond, msg, where): when cond is false the thread prints
 * tl_device_assert_format's line (vprintf), calls __assertfail and traps
 * (llvm.trap: PTX trap); the branch to it is the only cost of a passing
 * assert. */
bool cg_gen_device_assert(cg *g, const tl_expr *e) {
  tl_expr *const *a = e->u.call.args;
  if (a[1]->kind != TL_EXPR_STRING || a[2]->kind != TL_EXPR_STRING) {
    cg_error(g, e->loc, "T.device_assert_at: the message and the location must be string literals");
    return false;
  }
  LLVMValueRef c = cg_gen_cond(g, a[0]);
  if (!c) return false;
  char *fmt = tl_device_assert_format(a[2]->u.str, a[1]->u.str);
  if (!fmt) {
    cg_error(g, e->loc, "out of memory in code generation");
    return false;
  }
  LLVMBasicBlockRef fail = LLVMAppendBasicBlockInContext(g->C, g->fn, "assert.fail");
  LLVMBasicBlockRef ok = LLVMAppendBasicBlockInContext(g->C, g->fn, "assert.ok");
  LLVMBuildCondBr(g->B, c, ok, fail);
  LLVMPositionBuilderAtEnd(g->B, fail);
  LLVMValueRef fmt_ptr = const_str(g, fmt, "tl_assert_fmt");
  free(fmt);
  LLVMValueRef vals[6];
  if (!index_args(g, vals)) return false;
  call_vprintf(g, fmt_ptr, vals, 6);
  call_assertfail(g, a[1]->u.str, e->loc);
  if (!cg_call_intrinsic(g, NV_TRAP, NULL, 0, NULL, 0)) return false;
  LLVMBuildUnreachable(g->B);
  LLVMPositionBuilderAtEnd(g->B, ok);
  return true;
}
