/* Internal interface among the files of the SIMT IR → LLVM IR code generator:
 * codegen.c (the walk over statements and expressions, kernels, buffers,
 * math, the GEMM-path intrinsics) and codegen_async.c (the Hopper room:
 * named barriers, mbarriers, 1-D bulk copies, the async-proxy fence).  Holds
 * the generator's state and the few helpers of codegen.c that the other
 * files call.  Only files under lib/NVPTX include it (it needs LLVM's C
 * headers). */
#ifndef TL_NVPTX_CODEGEN_INTERNAL_H
#define TL_NVPTX_CODEGEN_INTERNAL_H

#include "NVPTX/nvptx_internal.h"

/* One buffer in scope: where its element 0 is and how elements are stored. */
typedef struct buf_info {
  LLVMValueRef base;     /* pointer to element 0 */
  LLVMTypeRef elem;      /* element type in memory (i8 for bool) */
  bool is_param;
  bool stored;           /* a store was generated (params: drop readonly) */
  int param_index;
} buf_info;

/* The state of one tl_nvptx_build: the module being built, the function
 * being built and its symbol tables. */
typedef struct cg {
  LLVMContextRef C;
  LLVMModuleRef M;
  LLVMBuilderRef B;
  const tl_target *target;
  tl_diag *d;
  tl_primfunc *f;
  LLVMValueRef fn;
  LLVMBasicBlockRef entry;   /* allocas only; branches to the body at the end */
  tl_map vars;               /* tl_var* → var_info* */
  tl_map bufs;               /* tl_buffer* → buf_info* */
  tl_arena arena;
  int depth;
  bool failed;
  bool depth_reported;
  int kernels_seen;
  int64_t smem_off;          /* next free byte of the dynamic shared block (unplanned buffers) */
  int64_t smem_planned_end;  /* end of the planned buffers (buf->smem_planned) */
  LLVMValueRef smem;         /* the extern __shared__ array */
  LLVMTypeRef t_void, t_i1, t_i8, t_i16, t_i32, t_i64, t_f16, t_bf16, t_f32, t_f64;
  LLVMTypeRef t_ptr0, t_ptr1, t_ptr3;
} cg;

/* codegen.c helpers for the other files.  Errors are located diagnostics in
 * g->d and set g->failed; functions returning a value return NULL / false
 * after reporting one. */
void tl_cg_error(cg *g, tl_loc loc, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
/* The buffer in scope for b (NULL, reported, when b is used outside its allocation). */
buf_info *tl_cg_buf(cg *g, const tl_buffer *b, tl_loc loc);
/* Argument i of the intrinsic call e as a buffer reference / an integer constant
 * (`what` names the argument in the message). */
const tl_buffer *tl_cg_buffer_arg(cg *g, const tl_expr *e, int i, const char *what);
bool tl_cg_const_arg(cg *g, const tl_expr *e, int i, const char *what, int64_t *v);
/* The address of element `off` (an integer expression, computed in i64) of b
 * viewed as a flat array: `ptr addrspace(3)` for shared buffers, `ptr
 * addrspace(1)` for global tensors. */
LLVMValueRef tl_cg_elem_addr(cg *g, const tl_buffer *b, const tl_expr *off, tl_loc loc);
/* The value of e converted to dtype t. */
LLVMValueRef tl_cg_expr_as(cg *g, const tl_expr *e, tl_dtype t);
/* The declaration of the LLVM intrinsic `name` (with its overload types). */
LLVMValueRef tl_cg_intrinsic(cg *g, const char *name, LLVMTypeRef *ovl, size_t novl);
/* Adds the `convergent` call-site attribute (warp-collective operations,
 * ../shared/NVPTX.md §9.6). */
void tl_cg_set_convergent(cg *g, LLVMValueRef call);

/* codegen_async.c: the statement form of the named-barrier, mbarrier, bulk
 * copy and proxy fence intrinsics (docs/simt-ir.md "Asynchronous
 * pipelines").  Returns false when e is not one of them (the caller goes
 * on); otherwise generates it and sets *ok (false after a located error). */
bool tl_cg_async_stmt(cg *g, const tl_expr *e, bool *ok);

#endif
