/* Internal interface of the SIMT IR → LLVM IR code generator (the first half
 * of lib/NVPTX; emit.c does libdevice, O3 and PTX), split by op family:
 *   codegen.c         core: the LLVM intrinsic-name table (nv_names), types,
 *                     expression dispatch (one hook per tl_intrin in
 *                     gen_call's switch), statements, kernels and the
 *                     module (tl_nvptx_build);
 *   codegen_memory.c  memory and addressing: buffers, loads/stores,
 *                     allocations and shared-memory placement, cp.async,
 *                     atomics;
 *   codegen_sync.c    synchronisation: bar.sync, cp.async groups, warp
 *                     shuffles, the convergent attribute;
 *   codegen_matrix.c  matrix ops: ldmatrix, mma.sync;
 *   codegen_math.c    arithmetic, conversions and math functions (libdevice,
 *                     approximate PTX instructions);
 *   codegen_sreg.c    special registers (%tid, %ctaid, lane, warp);
 *   codegen_hopper.c  the room for Hopper's instructions (TMA,
 *                     mbarrier, bulk copies, fences);
 *   codegen_wgmma.c   Hopper's warpgroup statements (wgmma fence / commit /
 *                     wait / mma_async, setmaxnreg);
 *   codegen_debug.c   line information: debug locations of the statements
 *                     (the PTX's .file / .loc);
 *   codegen_print.c   T.debug_print (T.print) as CUDA's vprintf.
 * Only these files include this header (it needs LLVM's C headers).  All
 * shared functions are prefixed cg_; the per-kernel state is `cg`. */
#ifndef TL_NVPTX_CODEGEN_INTERNAL_H
#define TL_NVPTX_CODEGEN_INTERNAL_H

#include "NVPTX/nvptx_internal.h"

#include <stdint.h>

#include "IR/tir.h"
#include "Support/support.h"

#define TL_CG_MAX_DEPTH 400             /* nesting of statements + expressions */
#define TL_CG_MAX_LOCAL_BYTES (1 << 20) /* per-thread local buffer limit */
#define TL_CG_MAX_ASM_OPERANDS 272      /* cg_call_asm: wgmma passes up to 256 accumulator registers + 6 */
#define TL_CG_MAX_DI_FILES 16           /* distinct source files of one module's locations (codegen_debug.c) */

/* ------------------------------------------------ intrinsic names (LLVM 19) */
enum {
  NV_TID_X,
  NV_TID_Y,
  NV_TID_Z,
  NV_CTAID_X,
  NV_CTAID_Y,
  NV_CTAID_Z,
  NV_NTID_X,
  NV_LANEID,
  NV_BARRIER0,
  NV_EX2_APPROX,
  NV_LG2_APPROX,
  NV_SIN_APPROX,
  NV_COS_APPROX,
  NV_TANH_APPROX,
  NV_EX2_APPROX_FTZ,
  NV_LG2_APPROX_FTZ,
  NV_SIN_APPROX_FTZ,
  NV_COS_APPROX_FTZ,
  NV_DIV_APPROX_FTZ,
  NV_SQRT,
  NV_FLOOR,
  NV_CEIL,
  NV_TRUNC,
  NV_ROUND,
  NV_ROUNDEVEN,
  NV_FABS,
  NV_FMA,
  NV_MINNUM,
  NV_MAXNUM,
  NV_ABS,
  NV_FPTOSI_SAT,
  NV_FPTOUI_SAT,
  NV_SHFL_BFLY,
  NV_SHFL_DOWN,
  NV_SHFL_UP,
  NV_SHFL_IDX,
  NV_TRAP, /* T.device_assert_at (codegen_print.c) */
  /* GEMM path (docs/simt-ir.md "Warp-level and asynchronous intrinsics") */
  NV_LDMATRIX_X1,
  NV_LDMATRIX_X2,
  NV_LDMATRIX_X4,
  NV_LDMATRIX_X1_T,
  NV_LDMATRIX_X2_T,
  NV_LDMATRIX_X4_T,
  NV_MMA_F16_F32,
  NV_MMA_F16_F16,
  NV_MMA_BF16_F32,
  NV_MMA_TF32,
  NV_MMA_S8,
  NV_MMA_U8,
  NV_MMA_S4,
  NV_MMA_U4,
  NV_MMA_F64,
  NV_F2TF32_RNA, /* codegen_mma.c */
  NV_CP_ASYNC_CA4,
  NV_CP_ASYNC_CA8,
  NV_CP_ASYNC_CG16,
  NV_CP_ASYNC_CA4_S,
  NV_CP_ASYNC_CA8_S,
  NV_CP_ASYNC_CG16_S,
  NV_CP_ASYNC_COMMIT,
  NV_CP_ASYNC_WAIT,
  /* Hopper room (codegen_hopper.c): named barriers, mbarriers, bulk copies */
  NV_BARRIER_N_SYNC,
  NV_MBARRIER_INIT,
  NV_MBARRIER_ARRIVE,
  NV_CP_ASYNC_MBARRIER_ARRIVE_NOINC,
  NV_BULK_COMMIT_GROUP,
  NV_BULK_WAIT_GROUP,
  NV_BULK_WAIT_GROUP_READ,
  /* warpgroup statements (codegen_wgmma.c) */
  NV_SETMAXNREG_INC,
  NV_SETMAXNREG_DEC,
  NV_NUM
};

/* ------------------------------------------------------------------ state */
typedef struct var_info {
  LLVMValueRef v;
} var_info;

typedef struct buf_info {
  LLVMValueRef base; /* pointer to element 0 */
  LLVMTypeRef elem;  /* element type in memory (i8 for bool) */
  bool is_param;
  bool stored; /* a store was generated (params: drop readonly) */
  int param_index;
} buf_info;

typedef struct cg {
  LLVMContextRef C;
  LLVMModuleRef M;
  LLVMBuilderRef B;
  const tl_target *target;
  tl_diag *d;
  tl_primfunc *f;
  LLVMValueRef fn;
  LLVMBasicBlockRef entry; /* allocas only; branches to the body at the end */
  tl_map vars;             /* tl_var* → var_info* */
  tl_map bufs;             /* tl_buffer* → buf_info* */
  tl_arena arena;
  int depth;
  bool failed;
  bool has_view; /* a T.make_tensor view was generated: tensor parameters may alias it */
  bool depth_reported;
  int kernels_seen;
  int64_t smem_off;         /* next free byte of the dynamic shared block (unplanned buffers) */
  int64_t smem_planned_end; /* end of the planned buffers (buf->smem_planned) */
  LLVMValueRef smem;        /* the extern __shared__ array */
  tl_tma_map *tma_maps;     /* the function's tensor maps (tl_tma_collect), malloc'd */
  int ntma;
  LLVMValueRef *tma_params; /* [ntma] their byval grid-constant parameters (generic `ptr`) */
  LLVMTypeRef t_void, t_i1, t_i8, t_i16, t_i32, t_i64, t_f16, t_bf16, t_f32, t_f64;
  LLVMTypeRef t_ptr0, t_ptr1, t_ptr3;
  /* line information (codegen_debug.c): on unless tl_nvptx_options.no_line_info */
  bool line_info;
  LLVMDIBuilderRef dib;         /* NULL without line information */
  LLVMMetadataRef di_cu, di_sp; /* the compile unit; the current kernel's subprogram */
  const char *di_sp_path;       /* the file of di_sp */
  tl_loc di_cur;                /* the builder's current location (line 0: none) */
  int di_nfiles;
  const char *di_paths[TL_CG_MAX_DI_FILES];
  LLVMMetadataRef di_files[TL_CG_MAX_DI_FILES], di_scopes[TL_CG_MAX_DI_FILES];
} cg;

/* ------------------------------------------------------------ small helpers */
static inline bool is_f16(tl_dtype t) { return t.code == TL_TYPE_FLOAT && t.bits == 16; }
static inline bool is_bf16(tl_dtype t) { return t.code == TL_TYPE_BFLOAT && t.bits == 16; }
static inline bool is_narrow_float(tl_dtype t) { return is_f16(t) || is_bf16(t); }
static inline bool is_f64(tl_dtype t) { return t.code == TL_TYPE_FLOAT && t.bits == 64; }
static inline bool is_bool(tl_dtype t) { return t.code == TL_TYPE_BOOL; }
static inline bool is_uint(tl_dtype t) { return t.code == TL_TYPE_UINT; }
static inline tl_dtype with_lanes(tl_dtype t, int lanes) {
  t.lanes = (uint16_t)lanes;
  return t;
}
static inline tl_dtype scalar_of(tl_dtype t) { return with_lanes(t, 1); }

static inline bool type_is_vector(LLVMTypeRef ty) { return LLVMGetTypeKind(ty) == LLVMVectorTypeKind; }

/* A constant of type ty (scalar or vector, int or float), splatted. */
static inline LLVMValueRef splat_const(LLVMValueRef c, LLVMTypeRef ty) {
  if (!type_is_vector(ty)) return c;
  unsigned n = LLVMGetVectorSize(ty);
  LLVMValueRef elems[64];
  if (n > 64) n = 64; /* dtypes have at most 64 lanes */
  for (unsigned i = 0; i < n; i++) elems[i] = c;
  return LLVMConstVector(elems, n);
}
static inline LLVMValueRef cint(LLVMTypeRef ty, uint64_t v) {
  LLVMTypeRef e = type_is_vector(ty) ? LLVMGetElementType(ty) : ty;
  return splat_const(LLVMConstInt(e, v, 0), ty);
}
static inline LLVMValueRef cfp(LLVMTypeRef ty, double v) {
  LLVMTypeRef e = type_is_vector(ty) ? LLVMGetElementType(ty) : ty;
  return splat_const(LLVMConstReal(e, v), ty);
}
/* The same shape as `like` (scalar or vector of the same lanes) with lane type e. */
static inline LLVMTypeRef shaped(LLVMTypeRef like, LLVMTypeRef e) {
  return type_is_vector(like) ? LLVMVectorType(e, LLVMGetVectorSize(like)) : e;
}

static inline bool is_16bit(tl_dtype t) { return t.lanes == 1 && t.bits == 16 && !is_bool(t); }
static inline bool is_local_scope(tl_scope s) {
  return s == TL_SCOPE_LOCAL || s == TL_SCOPE_FRAGMENT || s == TL_SCOPE_LOCAL_VAR;
}
static inline bool is_shared_scope(tl_scope s) { return s == TL_SCOPE_SHARED_DYN || s == TL_SCOPE_SHARED; }

/* Functions shared between the files (each one's comment is at its
 * definition). */
/* ---- core (codegen.c): diagnostics, LLVM types and intrinsic declarations, expressions */
void cg_error(cg *g, tl_loc loc, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
LLVMTypeRef cg_lane_type(cg *g, tl_dtype t, bool mem, tl_loc loc);
LLVMTypeRef cg_type_of(cg *g, tl_dtype t, bool mem, tl_loc loc);
LLVMValueRef cg_call_intrinsic(cg *g, int which, LLVMTypeRef *ovl, size_t novl, LLVMValueRef *args, unsigned nargs);
LLVMValueRef cg_call_asm(cg *g, LLVMTypeRef ret, const char *text, const char *cons, LLVMValueRef *args, unsigned n);
/* As cg_call_asm; side_effects false makes the asm pure (LLVM may move,
 * merge or drop it: conversions such as the float8 cvt forms). */
LLVMValueRef cg_call_asm_ex(cg *g, LLVMTypeRef ret, const char *text, const char *cons, LLVMValueRef *args, unsigned n,
                            bool side_effects);
LLVMValueRef cg_call_ovl1(cg *g, int which, LLVMValueRef *args, unsigned nargs);
LLVMValueRef cg_gen_as(cg *g, const tl_expr *e, tl_dtype t);
LLVMValueRef cg_gen_expr(cg *g, const tl_expr *e);
LLVMValueRef cg_intrinsic(cg *g, int which, LLVMTypeRef *ovl, size_t novl);
LLVMValueRef cg_splat(cg *g, LLVMValueRef v, int lanes);

/* ---- memory and addressing (codegen_memory.c) */
LLVMValueRef cg_elem_addr(cg *g, const tl_buffer *b, const tl_expr *off, tl_loc loc);
LLVMValueRef cg_from_mem(cg *g, LLVMValueRef v, tl_dtype t);
LLVMValueRef cg_gen_atomic_add(cg *g, const tl_expr *e);
LLVMValueRef cg_gen_index64(cg *g, const tl_expr *e, int depth);
LLVMValueRef cg_gen_load(cg *g, const tl_expr *e);
LLVMValueRef cg_local_addr(cg *g, const tl_buffer *b, LLVMValueRef base_off, int k);
bool cg_const_arg(cg *g, const tl_expr *e, int i, const char *what, int64_t *v);
bool cg_gen_alloc(cg *g, const tl_stmt *s);
bool cg_gen_cp_async(cg *g, const tl_expr *e);
bool cg_gen_store(cg *g, const tl_stmt *s);
buf_info *cg_get_buf(cg *g, const tl_buffer *b, tl_loc loc);
const tl_buffer *cg_buffer_arg(cg *g, const tl_expr *e, int i, const char *what);

/* ---- synchronisation and warp collectives (codegen_sync.c) */
LLVMValueRef cg_gen_shfl(cg *g, const tl_expr *e, tl_intrin op);
bool cg_gen_barrier(cg *g);
bool cg_gen_commit_group(cg *g);
bool cg_gen_wait_group(cg *g, const tl_expr *e);
void cg_set_convergent(cg *g, LLVMValueRef call);

/* ---- matrix ops (codegen_matrix.c) */
bool cg_gen_ldmatrix(cg *g, const tl_expr *e);
bool cg_gen_stmatrix(cg *g, const tl_expr *e);
/* codegen_hopper.c: named barriers, mbarriers, 1-D bulk copies, the proxy fence */
bool cg_gen_hopper_stmt(cg *g, const tl_expr *e);
/* codegen_wgmma.c: wgmma fence / commit / wait / ss / rs, setmaxnreg */
bool cg_gen_wgmma_stmt(cg *g, const tl_expr *e);
bool cg_gen_mma(cg *g, const tl_expr *e);
/* T.ptx_mma_sp (codegen_mma.c): inline mma.sp::ordered_metadata m16n8k32 .f16/.bf16 -> .f32, PTX 8.5 */
bool cg_gen_mma_sp(cg *g, const tl_expr *e);
/* Loads elements k .. k+n-1 of local buffer b at base as one operand of
 * type want (an <n x elem> vector bitcast to want: <2 x half>, i32, ...),
 * the lowest-indexed element in the lowest lane (codegen_matrix.c). */
LLVMValueRef cg_load_packed(cg *g, const tl_buffer *b, LLVMValueRef base, int k, int n, LLVMTypeRef want);
/* T.ptx_mma of the shapes beyond m16n8k16 (codegen_mma.c): m16n8k8 tf32,
 * m16n8k32 s8/u8, m8n8k4 f64; cg_gen_mma hands them over with the operand
 * buffers a, b, c (local, checked). */
bool cg_gen_mma_types(cg *g, const tl_expr *e, const tl_buffer *a, const tl_buffer *b, const tl_buffer *c);
/* Marks the module for PTX ISA TL_PTX_VERSION_FP8_MMA (emit.c reads the
 * module flag "tl.ptx_version"): the fp8 mma.sync needs PTX 8.4, the fp8
 * cvt forms on sm_89 PTX 8.1 (PTX ISA §9.7.9.21, §9.7.14.5.14). */
void cg_mark_fp8_module(cg *g);

/* ---- arithmetic, conversions and math functions (codegen_math.c) */
LLVMValueRef cg_convert(cg *g, LLVMValueRef v, tl_dtype from, tl_dtype to, tl_loc loc);
LLVMValueRef cg_float_arith(cg *g, tl_binop op, LLVMValueRef a, LLVMValueRef b, tl_dtype t, tl_loc loc);
LLVMValueRef cg_gen_abs(cg *g, const tl_expr *e);
LLVMValueRef cg_gen_clamp(cg *g, const tl_expr *e);
LLVMValueRef cg_gen_binary(cg *g, const tl_expr *e);
LLVMValueRef cg_gen_fast_math(cg *g, const tl_expr *e, tl_intrin op, bool fast_call);
LLVMValueRef cg_gen_float_math(cg *g, const tl_expr *e, tl_intrin op, int llvm_which);
LLVMValueRef cg_gen_fma(cg *g, const tl_expr *e);
LLVMValueRef cg_gen_fpclass(cg *g, const tl_expr *e, tl_intrin op);
LLVMValueRef cg_gen_binop_call(cg *g, const tl_expr *e, tl_intrin op);
LLVMValueRef cg_gen_limit(cg *g, const tl_expr *e, tl_intrin op);
LLVMValueRef cg_gen_reinterpret(cg *g, const tl_expr *e);
LLVMValueRef cg_gen_unary(cg *g, const tl_expr *e);
LLVMValueRef cg_int_arith(cg *g, tl_binop op, LLVMValueRef a, LLVMValueRef b, tl_dtype t, tl_loc loc);
LLVMValueRef cg_to_cond(cg *g, LLVMValueRef v, tl_dtype t, tl_loc loc);
/* e generated and made a condition (cg_to_cond); NULL after an error. */
LLVMValueRef cg_gen_cond(cg *g, const tl_expr *e);

/* ---- T.debug_print (T.print) as vprintf (codegen_print.c) */
bool cg_gen_debug_print(cg *g, const tl_expr *e);
bool cg_gen_device_assert(cg *g, const tl_expr *e);

/* ---- line information (codegen_debug.c): no-ops without g->line_info */
void cg_debug_begin_module(cg *g, const char *filename);
void cg_debug_end_module(cg *g);
void cg_debug_begin_func(cg *g, const tl_primfunc *f);
void cg_debug_end_func(cg *g);
/* Makes loc the builder's debug location (a location without a line keeps
 * the current one); returns the previous one for cg_debug_restore. */
tl_loc cg_debug_set(cg *g, tl_loc loc);
void cg_debug_restore(cg *g, tl_loc prev);

/* ---- special registers (codegen_sreg.c) */
LLVMValueRef cg_gen_sreg_call(cg *g, const tl_expr *e, tl_intrin op);
LLVMValueRef cg_sreg(cg *g, int which);

#endif
