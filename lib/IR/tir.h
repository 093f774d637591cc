/* The tile IR (internal): node definitions shared by the parser front end,
 * printer, verifier, builder, lowering passes and executors.
 *
 * A tree IR in the style of TVM's TIR.  Every node lives in its module's
 * arena and carries a source location.  Expressions are immutable once
 * built and are constant-folded at construction (tl_ir_* constructors in
 * ir.c), so the IR is always in folded form; variables are shared objects
 * referenced by pointer.  Tile ops (T.copy, T.gemm, ...) are statements whose
 * meaning is given by one op table (tl_tile_ops[]). */
#ifndef TL_TIR_H
#define TL_TIR_H

#include "Support/support.h"
#include "Support/target.h"
#include "tilelang/ir.h"

/* ---------------------------------------------------------------- dtypes */
#define TL_DT(c, b) ((tl_dtype){(uint8_t)(c), (uint8_t)(b), 1})
#define TL_INT32 TL_DT(TL_TYPE_INT, 32)
#define TL_INT64 TL_DT(TL_TYPE_INT, 64)
#define TL_FLOAT32 TL_DT(TL_TYPE_FLOAT, 32)
#define TL_FLOAT16 TL_DT(TL_TYPE_FLOAT, 16)
#define TL_BOOL TL_DT(TL_TYPE_BOOL, 8)
#define TL_VOID TL_DT(TL_TYPE_VOID, 0)
static inline bool tl_dtype_eq(tl_dtype a, tl_dtype b) {
  return a.code == b.code && a.bits == b.bits && a.lanes == b.lanes;
}
static inline bool tl_dtype_is_int(tl_dtype t) { /* int, uint (not bool) */
  return t.code == TL_TYPE_INT || t.code == TL_TYPE_UINT;
}
static inline bool tl_dtype_is_int4(tl_dtype t) { /* int4, uint4: packed two per byte (tl_dtype_storage) */
  return (t.code == TL_TYPE_INT || t.code == TL_TYPE_UINT) && t.bits == 4;
}
static inline bool tl_dtype_is_fp8(tl_dtype t) { /* float8_e4m3, float8_e5m2 */
  return t.code == TL_TYPE_FLOAT8_E4M3 || t.code == TL_TYPE_FLOAT8_E5M2;
}
static inline bool tl_dtype_is_float(tl_dtype t) { /* float, bfloat, tfloat, float8 */
  return t.code == TL_TYPE_FLOAT || t.code == TL_TYPE_BFLOAT || t.code == TL_TYPE_TFLOAT || tl_dtype_is_fp8(t);
}

/* -------------------------------------------------------------- variables */
typedef enum tl_var_kind {
  TL_VAR_LOOP,   /* loop variable of a for */
  TL_VAR_BLOCK,  /* T.Kernel block index (blockIdx.x/y/z) */
  TL_VAR_THREAD, /* thread index (after lowering) */
  TL_VAR_LET,    /* `x = expr` inside the prim_func */
  TL_VAR_PARAM,  /* scalar parameter */
  TL_VAR_DYNAMIC /* T.dynamic / T.symbolic dimension */
} tl_var_kind;

struct tl_var {
  const char *name; /* interned */
  tl_dtype dtype;
  tl_var_kind kind;
  tl_loc loc; /* where it is bound */
};

/* ---------------------------------------------------------------- buffers */
struct tl_buffer {
  const char *name; /* interned */
  tl_dtype dtype;
  tl_scope scope;
  int ndim;
  struct tl_expr **shape;   /* ndim exprs (int32; constants or dynamic vars) */
  struct tl_expr **strides; /* NULL: compact row-major */
  struct tl_expr *init;     /* T.alloc_var initial value, or NULL */
  tl_loc loc;               /* parameter or allocation site */
  void *layout;             /* set by layout inference (lib/Lower) */
  int64_t smem_offset;      /* shared.dyn: byte offset in the dynamic block when smem_planned */
  bool smem_planned;        /* set by shared-memory planning (lib/Lower) */
  /* shared: the first variable of the loop at whose every iteration the
   * buffer's whole contents are written before any read (its value never
   * crosses that loop's back edge), or NULL; set by lower-tile-ops
   * (lib/Lower/smem_renew.c) for the shared-memory planner, never printed */
  const struct tl_var *smem_renewed_in;
  /* scope global in a kernel (a kernel workspace): T.alloc_global, scratch
   * the runtimes zero before every launch; false: a lowering's workspace
   * (stream-K's), zeroed once per (kernel, device, stream) and kept */
  bool zero_per_launch;
  /* T.alloc_reducer (TileLang's language/allocate.py): a fragment whose
   * threads accumulate partial results in T.Parallel loops until
   * T.finalize_reducer combines the replicas of each element; 0 for any
   * other buffer (docs/language.md "Reducers") */
  uint8_t reducer;     /* tl_reducer_op */
  uint8_t reducer_rep; /* tl_reducer_rep: the replication= given */
  /* T.make_tensor(addr, shape, dtype, strides) (TileLang's language/proxy.py):
   * a global buffer over the device address `data` (a scalar int64/uint64
   * expression, typically an element of a pointer table, a T.Tensor of
   * T.ptr), evaluated once where its TL_STMT_ALLOC stands; shape and
   * strides as any tensor's.  NULL for every other buffer.  A tensor view
   * (tl_buffer_is_view): no workspace, no TMA descriptor (its address is
   * known only on the device); docs/language.md "T.make_tensor" */
  struct tl_expr *data;
};
/* A T.make_tensor view (tl_buffer.data set). */
static inline bool tl_buffer_is_view(const struct tl_buffer *b) { return b && b->data; }
typedef enum tl_reducer_op { TL_REDUCER_NONE, TL_REDUCER_SUM, TL_REDUCER_MAX, TL_REDUCER_MIN } tl_reducer_op;
typedef enum tl_reducer_rep { TL_REDUCER_REP_UNSET, TL_REDUCER_REP_ALL, TL_REDUCER_REP_NONE } tl_reducer_rep;
const char *tl_scope_name(tl_scope s); /* "global", "shared.dyn", ... */

/* ------------------------------------------------------------ expressions */
typedef enum tl_expr_kind {
  TL_EXPR_INT,      /* .ival, dtype int/uint/bool */
  TL_EXPR_FLOAT,    /* .fval, dtype float/bfloat/tfloat (inf/nan allowed) */
  TL_EXPR_STRING,   /* .str (interned); only as op attributes */
  TL_EXPR_VAR,      /* .var */
  TL_EXPR_BINARY,   /* .bin */
  TL_EXPR_UNARY,    /* .un */
  TL_EXPR_SELECT,   /* .sel: cond ? t : f (both evaluated: T.if_then_else is SELECT too) */
  TL_EXPR_CAST,     /* .cast.value converted to dtype */
  TL_EXPR_LOAD,     /* .load: buffer[indices] */
  TL_EXPR_CALL,     /* .call: intrinsic by table index */
  TL_EXPR_BUFFER,   /* .buffer: a buffer used as a value (intrinsic arguments) */
  TL_EXPR_RAMP,     /* .ramp: base + i*stride, i < lanes (after vectorization) */
  TL_EXPR_BROADCAST /* .bcast: value replicated to dtype.lanes */
} tl_expr_kind;

typedef struct tl_expr tl_expr;
struct tl_expr {
  tl_expr_kind kind;
  tl_dtype dtype;
  tl_loc loc;
  union {
    int64_t ival;
    double fval;
    const char *str;
    tl_var *var;
    struct {
      tl_binop op;
      tl_expr *a, *b;
    } bin;
    struct {
      tl_unop op;
      tl_expr *a;
    } un;
    struct {
      tl_expr *cond, *t, *f;
    } sel;
    struct {
      tl_expr *value;
    } cast;
    struct {
      tl_buffer *buffer;
      int n;
      tl_expr **indices;
    } load;
    struct {
      int op;
      int n;
      tl_expr **args;
    } call; /* op: a tl_intrin */
    tl_buffer *buffer;
    struct {
      tl_expr *base, *stride;
    } ramp;
    struct {
      tl_expr *value;
    } bcast;
  } u;
};

/* Intrinsics callable as T.name(...) in expressions and statements, defined
 * once in lib/IR/intrinsics.def (name, arity, result rule, unify, effects). */
typedef enum tl_intrin_ret {
  TL_RET_ARG0, /* same dtype as the first argument */
  TL_RET_ARG1, /* same dtype as the second argument (if_then_else) */
  TL_RET_INT32,
  TL_RET_BOOL,
  TL_RET_FLOAT_ARG0, /* float dtype of arg 0 (ints promote to float32) */
  TL_RET_VOID,       /* no value (T.sync_threads) */
  TL_RET_DTYPE_ARG0, /* the dtype named by the string argument 0 (T.infinity("float16")) */
  TL_RET_ARG2        /* same dtype as the third argument (T.ptx_atomic_add's value) */
} tl_intrin_ret;
/* Effects of an intrinsic (bit set). */
enum {
  TL_EFF_NONE = 0,
  TL_EFF_CONVERGENT = 1,   /* warp- or block-collective (bar.sync, shfl.sync, ldmatrix, mma) */
  TL_EFF_SIDE_EFFECTS = 2, /* writes or orders memory */
  TL_EFF_SIMT_LEVEL = 4    /* SIMT IR only: a per-thread or per-warp instruction lowering emits (shuffles,
                            * ldmatrix/mma/cp.async, barriers and copies of docs/simt-ir.md); the tile level
                            * (the reference evaluator, the tile passes) has no meaning for it */
};
/* The intrinsic ids: TL_INTRIN_EXP, ..., TL_INTRIN_PTX_ATOMIC_ADD, in table
 * order (tl_expr.u.call.op holds one).  Consumers switch on tl_intrin with
 * no default case, so that -Wswitch reports a consumer a new id lacks. */
typedef enum tl_intrin {
#define TL_INTRINSIC(id, name, lo, hi, ret, unify, eff) TL_INTRIN_##id,
#include "IR/intrinsics.def"
#undef TL_INTRINSIC
} tl_intrin;
enum {
  TL_INTRIN_COUNT = 0
#define TL_INTRINSIC(id, name, lo, hi, ret, unify, eff) +1
#include "IR/intrinsics.def"
#undef TL_INTRINSIC
};
typedef struct tl_intrinsic {
  const char *name; /* "exp2" (spelled T.exp2) */
  int min_args, max_args;
  tl_intrin_ret ret;
  bool unify;       /* arguments brought to one dtype by tl_ir_call */
  unsigned effects; /* TL_EFF_* bits */
} tl_intrinsic;
/* The case labels of the asynchronous-pipeline statements (named barriers,
 * mbarriers, 1-D bulk copies, the proxy fence; docs/simt-ir.md
 * "Asynchronous pipelines"), for the consumer switches that treat them as
 * one family: `switch (op) { TL_INTRIN_CASES_ASYNC_PIPELINE: ... }`. */
#define TL_INTRIN_CASES_ASYNC_PIPELINE                                                                                 \
  case TL_INTRIN_PTX_BAR_SYNC:                                                                                         \
  case TL_INTRIN_PTX_BAR_ARRIVE:                                                                                       \
  case TL_INTRIN_PTX_MBARRIER_INIT:                                                                                    \
  case TL_INTRIN_PTX_MBARRIER_ARRIVE:                                                                                  \
  case TL_INTRIN_PTX_MBARRIER_ARRIVE_EXPECT_TX:                                                                        \
  case TL_INTRIN_PTX_MBARRIER_EXPECT_TX:                                                                               \
  case TL_INTRIN_PTX_MBARRIER_COMPLETE_TX:                                                                             \
  case TL_INTRIN_PTX_MBARRIER_WAIT:                                                                                    \
  case TL_INTRIN_PTX_CP_ASYNC_MBARRIER_ARRIVE_NOINC:                                                                   \
  case TL_INTRIN_PTX_CP_ASYNC_BULK:                                                                                    \
  case TL_INTRIN_PTX_CP_ASYNC_BULK_STORE:                                                                              \
  case TL_INTRIN_PTX_BULK_COMMIT_GROUP:                                                                                \
  case TL_INTRIN_PTX_BULK_WAIT_GROUP:                                                                                  \
  case TL_INTRIN_PTX_FENCE_PROXY_ASYNC:                                                                                \
  case TL_INTRIN_PTX_FENCE_GPU
/* The case labels of the warpgroup statements (wgmma fence / commit / wait /
 * ss / rs, setmaxnreg; docs/simt-ir.md "wgmma"), likewise. */
#define TL_INTRIN_CASES_WGMMA                                                                                          \
  case TL_INTRIN_PTX_WGMMA_FENCE:                                                                                      \
  case TL_INTRIN_PTX_WGMMA_COMMIT:                                                                                     \
  case TL_INTRIN_PTX_WGMMA_WAIT:                                                                                       \
  case TL_INTRIN_PTX_WGMMA_SS:                                                                                         \
  case TL_INTRIN_PTX_WGMMA_RS:                                                                                         \
  case TL_INTRIN_PTX_SETMAXNREG

/* The case labels of the explicit warp-specialisation intrinsics (tile
 * level; lowered by lib/Lower/ws_scope.c before the SIMT IR). */
#define TL_INTRIN_CASES_WS_SCOPE                                                                                       \
  case TL_INTRIN_WS:                                                                                                   \
  case TL_INTRIN_THREAD_RANGE:                                                                                         \
  case TL_INTRIN_BARRIER_INIT:                                                                                         \
  case TL_INTRIN_BARRIER_ARRIVE:                                                                                       \
  case TL_INTRIN_BARRIER_WAIT:                                                                                         \
  case TL_INTRIN_CP_ASYNC_BARRIER_NOINC:                                                                               \
  case TL_INTRIN_SET_MAX_NREG:                                                                                         \
  case TL_INTRIN_FENCE_PROXY_ASYNC

/* The case labels of the TMA tensor copies (docs/simt-ir.md "TMA tensor
 * copies"; variable arity, decoded by tl_tma_decode). */
#define TL_INTRIN_CASES_TMA                                                                                            \
  case TL_INTRIN_PTX_TMA_LOAD:                                                                                         \
  case TL_INTRIN_PTX_TMA_STORE

/* The case labels of the warp-level tensor-core and cp.async statements
 * (ldmatrix, stmatrix, mma, cp.async and its commit / wait groups;
 * docs/simt-ir.md). */
#define TL_INTRIN_CASES_WARP_MMA                                                                                       \
  case TL_INTRIN_PTX_LDMATRIX:                                                                                         \
  case TL_INTRIN_PTX_STMATRIX:                                                                                         \
  case TL_INTRIN_PTX_MMA:                                                                                              \
  case TL_INTRIN_PTX_MMA_SP:                                                                                           \
  case TL_INTRIN_PTX_CP_ASYNC:                                                                                         \
  case TL_INTRIN_PTX_COMMIT_GROUP:                                                                                     \
  case TL_INTRIN_PTX_WAIT_GROUP

/* The case labels of every SIMT-level statement intrinsic (the four families
 * above): calls that have no value and that only the SIMT IR holds, for the
 * switches that refuse them as values or hand them to the statement path. */
#define TL_INTRIN_CASES_SIMT_STMT                                                                                      \
  TL_INTRIN_CASES_WARP_MMA:                                                                                            \
  TL_INTRIN_CASES_ASYNC_PIPELINE:                                                                                      \
  TL_INTRIN_CASES_TMA:                                                                                                 \
  TL_INTRIN_CASES_WGMMA

/* The case labels of the float-only unary math intrinsics (exp / log
 * families, sqrt, rsqrt, the transcendental and trigonometric functions):
 * one float argument, a float result of its dtype. */
#define TL_INTRIN_CASES_FLOAT_MATH                                                                                     \
  case TL_INTRIN_EXP:                                                                                                  \
  case TL_INTRIN_EXP2:                                                                                                 \
  case TL_INTRIN_EXP10:                                                                                                \
  case TL_INTRIN_LOG:                                                                                                  \
  case TL_INTRIN_LOG2:                                                                                                 \
  case TL_INTRIN_LOG10:                                                                                                \
  case TL_INTRIN_LOG1P:                                                                                                \
  case TL_INTRIN_SQRT:                                                                                                 \
  case TL_INTRIN_RSQRT:                                                                                                \
  case TL_INTRIN_TANH:                                                                                                 \
  case TL_INTRIN_SIGMOID:                                                                                              \
  case TL_INTRIN_ERF:                                                                                                  \
  case TL_INTRIN_SIN:                                                                                                  \
  case TL_INTRIN_COS:                                                                                                  \
  case TL_INTRIN_TAN

/* The case labels of the approximate float math intrinsics (T.__exp and
 * the like: the hardware's approximations, one float argument). */
#define TL_INTRIN_CASES_FAST_MATH                                                                                      \
  case TL_INTRIN_FAST_EXP:                                                                                             \
  case TL_INTRIN_FAST_EXP2:                                                                                            \
  case TL_INTRIN_FAST_LOG:                                                                                             \
  case TL_INTRIN_FAST_LOG2

/* The case labels of the binary arithmetic intrinsics that have an integer
 * and a float form with the tile IR's binop meaning (min, max and the
 * rounding divisions and remainders). */
#define TL_INTRIN_CASES_MINMAX_DIV                                                                                     \
  case TL_INTRIN_MIN:                                                                                                  \
  case TL_INTRIN_MAX:                                                                                                  \
  case TL_INTRIN_FLOORDIV:                                                                                             \
  case TL_INTRIN_FLOORMOD:                                                                                             \
  case TL_INTRIN_TRUNCDIV:                                                                                             \
  case TL_INTRIN_TRUNCMOD:                                                                                             \
  case TL_INTRIN_CEILDIV

extern const tl_intrinsic tl_intrinsics[TL_INTRIN_COUNT]; /* indexed by tl_intrin */
extern const int tl_num_intrinsics;                       /* TL_INTRIN_COUNT */
/* The id of T.name, or -1: name resolution for the parser, the elaborator and
 * the public builder only (everything else names intrinsics by tl_intrin). */
int tl_intrinsic_lookup(const char *name);
/* The name of call op `op` ("?" when out of range), for diagnostics. */
const char *tl_intrinsic_name(int op);

/* ------------------------------------------------------------ statements */
typedef enum tl_stmt_kind {
  TL_STMT_SEQ,    /* .seq */
  TL_STMT_FOR,    /* .loop */
  TL_STMT_KERNEL, /* .kernel: with T.Kernel(...) as (...): */
  TL_STMT_ALLOC,  /* .alloc: declares a buffer for the rest of the enclosing seq */
  TL_STMT_STORE,  /* .store */
  TL_STMT_IF,     /* .ifs */
  TL_STMT_LET,    /* .let: binds an immutable scalar for the rest of the enclosing seq */
  TL_STMT_EVAL,   /* .eval: an expression statement (intrinsic call) */
  TL_STMT_TILE,   /* .tile: a tile op */
  TL_STMT_WHILE   /* .whiles: `while cond: body` (TVM's tir.While); cond is evaluated before each iteration and
                   * must be the same in every thread of the block (lib/Lower/check_supported.c) */
} tl_stmt_kind;

/* A region operand of a tile op: buffer[min[d] : min[d] + extent[d]]. */
typedef struct tl_region {
  tl_buffer *buffer;
  int ndim;
  tl_expr **min, **extent;
} tl_region;

/* A tile-op operand. */
typedef struct tl_operand {
  enum { TL_OPND_REGION, TL_OPND_EXPR } kind;
  tl_region region;
  tl_expr *expr;
  tl_loc loc;
} tl_operand;

typedef struct tl_stmt tl_stmt;
struct tl_stmt {
  tl_stmt_kind kind;
  tl_loc loc;
  union {
    struct {
      int n;
      tl_stmt **stmts;
    } seq;
    struct {
      tl_loop_kind kind;
      int nvars; /* > 1 only for T.Parallel */
      tl_var **vars;
      tl_expr **mins;    /* per var; 0 when written with one bound */
      tl_expr **extents; /* per var */
      tl_expr *step;     /* NULL for 1 (serial/unroll with a step) */
      /* T.Pipelined: the num_stages given, -1 when not given.  T.serial:
       * s >= 2 on the loop the pipeline pass (lib/Lower/pipeline_loop.c)
       * made of a T.Pipelined loop whose staged shared buffers gained a
       * leading dim of s stages, -1 otherwise; the consumers of iteration k
       * read stage (k - lo) % s, the producer copies it issues write stage
       * (k - lo + s - 1) % s (the stage roles, tl_lo_pipeline_stage:
       * lib/Lower/lower_internal.h).  Printed as
       * `annotations={"num_stages": s}`; read by the barriers pass and
       * frag-pipeline, which clears it (SIMT IR after it has none). */
      int num_stages;
      tl_stmt *body;
      /* T.Pipelined's order= / stage= (group= is expanded by the
       * elaborator): nsched > 0 when given, one entry per scheduled
       * statement -- the body's top-level statements other than LETs and
       * allocations, in body order.  order: a permutation of 0..nsched-1,
       * the statement's position in an iteration of the pipelined loop;
       * stage: 0..num_stages-1, how many iterations behind stage 0 the
       * statement runs (docs/canonical-tir.md "T.Pipelined schedules"). */
      int nsched;
      int *order, *stage;
    } loop;
    struct {
      int ngrid; /* 1..3 */
      tl_expr *grid[3];
      tl_var *block_vars[3];
      tl_expr *threads; /* int expr; TileLang's default 128 */
      tl_stmt *body;
    } kernel;
    struct {
      tl_buffer *buffer;
    } alloc;
    struct {
      tl_buffer *buffer;
      int n;
      tl_expr **indices;
      tl_expr *value;
    } store;
    struct {
      tl_expr *cond;
      tl_stmt *then_s, *else_s; /* else_s may be NULL */
    } ifs;
    struct {
      tl_expr *cond; /* bool */
      tl_stmt *body;
    } whiles;
    struct {
      tl_var *var;
      tl_expr *value;
    } let;
    struct {
      tl_expr *value;
    } eval;
    struct {
      int op;    /* index in tl_tile_ops[] */
      int nargs; /* positional operands (after defaults are not added) */
      tl_operand *args;
      tl_expr **attrs; /* per op-table attribute; NULL = default */
    } tile;
  } u;
};

/* ---------------------------------------------------------------- tile ops */
/* The one table of tile ops.  Positional operands are regions or exprs as
 * `operands` says ('R' region, 'E' scalar expression, 'D' dict of buffer →
 * layout for annotate_layout); attributes are keyword parameters that may
 * also be given positionally after the operands, in table order. */
typedef enum tl_attr_kind { TL_ATTR_BOOL, TL_ATTR_INT, TL_ATTR_POLICY, TL_ATTR_STRING, TL_ATTR_EXPR } tl_attr_kind;
typedef struct tl_attr_info {
  const char *name; /* "transpose_A" */
  tl_attr_kind kind;
  int64_t default_int;     /* default for BOOL/INT/POLICY */
  const char *default_str; /* default for STRING (NULL: none) */
} tl_attr_info;

typedef enum tl_tile_op_id {
  TL_TILE_COPY,
  TL_TILE_GEMM,
  TL_TILE_FILL,
  TL_TILE_CLEAR,
  TL_TILE_REDUCE_MAX,
  TL_TILE_REDUCE_MIN,
  TL_TILE_REDUCE_SUM,
  TL_TILE_REDUCE_ABSSUM,
  TL_TILE_REDUCE_ABSMAX,
  TL_TILE_ATOMIC_ADD,
  TL_TILE_USE_SWIZZLE,
  TL_TILE_ANNOTATE_LAYOUT,
  TL_TILE_ASYNC_COPY, /* T.async_copy(src, dst): T.copy from global to shared issued as cp.async
                        * where alignment allows (made by the pipelining pass; no implicit wait) */
  /* T.atomic_max / T.atomic_min (dst, value): as T.atomic_add with max / min;
   * T.atomic_addx2 / x4 (dst, value): T.atomic_add of 2 / 4 consecutive elements along
   * the last dim (the elaborator widens a one-element dst / value to that extent) */
  TL_TILE_ATOMIC_MAX,
  TL_TILE_ATOMIC_MIN,
  TL_TILE_ATOMIC_ADDX2,
  TL_TILE_ATOMIC_ADDX4,
  /* T.finalize_reducer(reducer): combines the replicas of a T.alloc_reducer
   * buffer (its op: sum, max, min), leaving the result in every replica */
  TL_TILE_FINALIZE_REDUCER,
  /* T.thread_allreduce(dst, value, op="sum", stride=S, count=N): TVM's
   * tvm_thread_allreduce (the `with T.attr(T.comm_reducer(...),
   * "reduce_scope", ...)` form, lib/Frontend/elab_allreduce.c): dst (one
   * element of a local buffer) = value combined (sum, max, min) over the N
   * threads t0 + j*S, j < N, that share t0 = tid - ((tid / S) % N) * S; every
   * one of them gets the result */
  TL_TILE_THREAD_ALLREDUCE,
  /* T.gemm_sp(A_sparse, E, B, C, ...): C += decompress(A_sparse, E) @ B
   * with 2:4 structured-sparse A (M, K/2) and its metadata E (M, K /
   * e_factor) (lib/Support/mma.h "2:4 structured sparsity") */
  TL_TILE_GEMM_SP,
  TL_TILE_NUM_OPS
} tl_tile_op_id;

struct tl_verify_ctx;
typedef struct tl_tile_op_info {
  const char *name;     /* "copy"; spelled "T.copy" */
  const char *operands; /* e.g. "RR" for copy, "RE" for fill */
  int written;          /* the operand the op writes (its destination; gemm's C
                             * is read too), -1 when it writes none */
  int nattrs;
  const tl_attr_info *attrs;
  /* Verifier rule of this op (shapes, scopes, dtypes); reports through the
   * context, returns false when it reported an error. */
  bool (*verify)(struct tl_verify_ctx *vc, const tl_stmt *s);
  /* Hooks filled in by later layers (layout inference, lowering,
   * reference evaluation); NULL until those exist. */
  void *infer_layout, *lower, *evaluate;
} tl_tile_op_info;
extern const tl_tile_op_info tl_tile_ops[TL_TILE_NUM_OPS];
int tl_tile_op_lookup(const char *name);             /* index or -1 */
int tl_tile_op_attr_index(int op, const char *attr); /* index or -1 */
/* Region operand i of tile op s: is it read (*rd), written (*wr), or both
 * (T.gemm's C unless clear_accum=True, a reduction's destination with
 * clear=False, T.finalize_reducer's, an atomic's destination)?  Neither for
 * the regions of T.annotate_layout and T.use_swizzle (ops.c). */
void tl_tile_operand_use(const tl_stmt *s, int i, bool *rd, bool *wr);
/* Whether attribute value v (NULL: absent) means the table's default: the
 * printer leaves it out and structural equality treats it as absent. */
bool tl_attr_is_default(const tl_attr_info *ai, const tl_expr *v);
/* The atomic tile ops (T.atomic_add, _max, _min, _addx2, _addx4): the
 * per-element intrinsic (TL_INTRIN_PTX_ATOMIC_ADD/MAX/MIN) of op, -1 for
 * any other op; *lanes (may be NULL): 2 / 4 for addx2 / addx4, else 1. */
int tl_tile_atomic_intrin(int op, int *lanes);
/* May T.reinterpret turn a value of dtype from into dtype to?  Both are
 * bit-holding scalars (not bool, whole bytes) of the same width. */
bool tl_reinterpret_ok(tl_dtype to, tl_dtype from);

/* ------------------------------------------------------------- functions */
typedef struct tl_param {
  enum { TL_PARAM_TENSOR, TL_PARAM_SCALAR } kind;
  tl_buffer *buffer; /* TENSOR */
  tl_var *var;       /* SCALAR */
} tl_param;

typedef struct tl_primfunc {
  const char *name;
  tl_loc loc;
  int nparams;
  tl_param *params;
  int ndynamic; /* T.dynamic symbols used by the function, in declaration order */
  tl_var **dynamic;
  bool has_out_idx; /* false: out_idx none */
  int nout;         /* normalized (0 <= idx < nparams), in given order */
  int *out_idx;
  /* TileLang's pass configs (jit pass_configs, T.func_attr or the
   * TL_COMPILE_* flags; printed as T.func_attr keys): "tl.enable_fast_math"
   * (code generation, lib/NVPTX/codegen_math.c), "tl.disable_wgmma", ...
   * (lowering: the warp-specialize pass takes its Hopper path only when none
   * of the three disable_* is set). */
  tl_pass_configs pass_configs;
  /* Facts a wing of the lowering keeps on the function for its own later
   * passes (the Hopper path's warp specialization: lib/Lower/Hopper/
   * warp_specialize.c): plain bytes only their owner reads, found by its key
   * (tl_func_annot); copied by tl_module_clone, never printed or compared. */
  struct tl_annot *annots;
  tl_stmt *body;
  int64_t smem_bytes; /* dynamic shared memory per block (set by lowering) */
  /* 0: a prim_func as written (or the first stage of one with several
   * T.Kernel scopes); k >= 1: the k-th T.Kernel of the function stage 0 of
   * which stands k places before it in the module (lib/Lower/split_kernels.c:
   * one launch sequence, each stage an entry point with the same kernel ABI,
   * launched in order on one stream) */
  int stage;
} tl_primfunc;

/* One function annotation: size bytes at data (in the module's arena) that
 * the owner of key (the address of a static object of its file) defines. */
typedef struct tl_annot {
  const void *key;
  size_t size;
  void *data;
  struct tl_annot *next;
} tl_annot;
/* f's annotation of key, NULL when it has none. */
void *tl_func_annot(const tl_primfunc *f, const void *key);
/* f's annotation of key, added (size bytes, zeroed, in m's arena) when it
 * has none; NULL on OOM. */
void *tl_func_annot_add(tl_module *m, tl_primfunc *f, const void *key, size_t size);

struct tl_module {
  tl_arena arena;  /* owns every node of the module */
  tl_intern names; /* interned identifiers (in arena) */
  int nfuncs;
  tl_primfunc **funcs;
  char *source; /* the parsed text (arena copy), or NULL */
  const char *filename;
};

/* Creates an empty module (malloc'd struct + arena); NULL on OOM. */
tl_module *tl_module_new(void);
/* A deep copy of m that shares nothing with it (clone.c): the same
 * functions, variables and buffers (one copy each), printed and compared
 * equal; buffer layouts (lowering's) are not copied.  Free with
 * tl_module_destroy; NULL on OOM or for m NULL. */
tl_module *tl_module_clone(const tl_module *m);
/* A copy of statement s inside m itself (clone.c), for a pass that needs
 * the same statements twice with their own variables and buffers: every
 * node, variable and buffer under s is copied once, except those that
 * *done maps already (old → the node to use: map a parameter, a dynamic
 * symbol or a buffer to itself to keep it); names and locations are kept.
 * *done gains every copy made, so that later calls share them.  NULL on
 * OOM. */
tl_stmt *tl_stmt_clone_within(tl_module *m, const tl_stmt *s, tl_map *done);

/* ---------------------------------------------------- node constructors */
/* All constructors allocate in m's arena and return NULL only on OOM.
 * Expression constructors fold constants and simplify trivially
 * (x+0, x*1, x*0 for ints, constant comparisons, casts of constants), and
 * apply TIR's type rules: a constant operand takes the other operand's
 * dtype, except an int constant that dtype cannot hold (`i + 4294967296`:
 * the int32 side is cast to the constant's int64, never the constant
 * truncated); int with float promotes to the float; narrower ints widen. */
tl_expr *tl_ir_int(tl_module *m, tl_loc loc, tl_dtype t, int64_t v);
tl_expr *tl_ir_float(tl_module *m, tl_loc loc, tl_dtype t, double v);
tl_expr *tl_ir_string(tl_module *m, tl_loc loc, const char *s);
tl_expr *tl_ir_var(tl_module *m, tl_loc loc, tl_var *v);
tl_expr *tl_ir_binary(tl_module *m, tl_loc loc, tl_binop op, tl_expr *a, tl_expr *b);
tl_expr *tl_ir_unary(tl_module *m, tl_loc loc, tl_unop op, tl_expr *a);
tl_expr *tl_ir_select(tl_module *m, tl_loc loc, tl_expr *c, tl_expr *t, tl_expr *f);
tl_expr *tl_ir_cast(tl_module *m, tl_loc loc, tl_dtype t, tl_expr *x);
tl_expr *tl_ir_load(tl_module *m, tl_loc loc, tl_buffer *b, int n, tl_expr **idx);
tl_expr *tl_ir_call(tl_module *m, tl_loc loc, int intrin, int n, tl_expr **args);
tl_expr *tl_ir_buffer_ref(tl_module *m, tl_loc loc, tl_buffer *b);
tl_var *tl_ir_new_var(tl_module *m, tl_loc loc, const char *name, tl_dtype t, tl_var_kind kind);
tl_buffer *tl_ir_new_buffer(tl_module *m, tl_loc loc, const char *name, tl_dtype t, tl_scope scope, int ndim,
                            tl_expr **shape);
tl_stmt *tl_ir_stmt(tl_module *m, tl_loc loc, tl_stmt_kind kind); /* zeroed union */
/* Makes s (a TL_STMT_FOR from tl_ir_stmt) the loop over nvars variables
 * vars[k] in [mins[k], mins[k] + extents[k]) of the given kind, with no
 * pipeline stages (num_stages -1); the arrays (nvars entries each, in m's
 * arena) are the loop's from now on; the caller sets the body. */
void tl_ir_loop_init(tl_stmt *s, tl_loop_kind kind, int nvars, tl_var **vars, tl_expr **mins, tl_expr **extents);
/* A bare expression node of kind and dtype t (zeroed union, no folding or
 * type rules: the caller fills in the operands); NULL on OOM. */
tl_expr *tl_ir_expr(tl_module *m, tl_loc loc, tl_expr_kind kind, tl_dtype t);
/* Wraps n statements in a SEQ (returns the single stmt when n == 1). */
tl_stmt *tl_ir_seq(tl_module *m, tl_loc loc, int n, tl_stmt **stmts);
/* An if statement (else_s NULL: none; no folding of a constant condition);
 * NULL on OOM. */
tl_stmt *tl_ir_if(tl_module *m, tl_loc loc, tl_expr *cond, tl_stmt *then_s, tl_stmt *else_s);
tl_stmt *tl_ir_while(tl_module *m, tl_loc loc, tl_expr *cond, tl_stmt *body);
/* The first T.Kernel statement in s (searched through seqs, loops and both
 * branches of ifs, at most 400 levels deep), or NULL. */
tl_stmt *tl_ir_find_kernel(const tl_stmt *s);
/* The end (bytes) of the shared.dyn buffers that shared-memory planning
 * placed (smem_planned, smem_offset >= 0) among the allocations in s: the
 * largest smem_offset + size; an allocation whose size is not constant or
 * exceeds 2^40 bytes counts 0; 0 when none.  Codegen and the SIMT executor
 * size the dynamic shared block from it. */
int64_t tl_ir_planned_smem_end(const tl_stmt *s);

/* Rebuilds in int64 every index (load, store, tile-op region min) into a
 * dimension of a global tensor that can exceed int32 (a constant extent
 * above 2^31 - 1 or an int64 extent), in place, so that the executors and
 * codegen never wrap it in 32 bits (index64.c).  Runs on the verified tile
 * IR after parsing and building, and at the end of lowering.  False on
 * OOM. */
bool tl_widen_indices(tl_module *m);

/* ------------------------------------------------- TMA tensor maps (tma.c) */
/* T.ptx_tma_load / T.ptx_tma_store (docs/simt-ir.md "TMA tensor copies";
 * PTX ISA §9.7.9.27 cp.async.bulk.tensor; CUDA driver API
 * cuTensorMapEncodeTiled).  One tensor map (a 128-byte CUtensorMap) per
 * distinct (tensor parameter, box, swizzle) of a function. */
#define TL_TMA_MAX_RANK 5
typedef struct tl_tma_map {
  const tl_buffer *tensor;  /* a global tensor parameter of the function */
  int param;                /* its index in tl_primfunc.params */
  int rank;                 /* tensor->ndim, 1..TL_TMA_MAX_RANK */
  int box[TL_TMA_MAX_RANK]; /* box extents in elements, outermost first (1..256) */
  int swizzle;              /* swizzle span in bytes: 0 (none), 32, 64, 128 */
} tl_tma_map;

/* One decoded TMA call: its map and its operand expressions (pointers into
 * the call's arguments). */
typedef struct tl_tma_call {
  tl_tma_map map;
  bool is_store;
  const tl_expr *smem, *smem_off;        /* the shared buffer reference and its element offset */
  const tl_expr *bar, *bar_off;          /* load: the mbarrier buffer and element; store: NULL */
  const tl_expr *coord[TL_TMA_MAX_RANK]; /* box origin, outermost first (int32 expressions) */
} tl_tma_call;

/* Decodes and checks call e (op TL_INTRIN_PTX_TMA_LOAD or _STORE) of
 * function f: the arity 6 + 2r (load) / 4 + 2r (store) for the tensor's
 * rank r, the tensor a global tensor parameter of f, the shared buffer of
 * scope shared.dyn / shared and of the tensor's dtype, swizzle a constant
 * 0/32/64/128, each box extent a constant 1..256, the inner box bytes a
 * multiple of 16 and at most the swizzle span when swizzled, integer scalar
 * coordinates.  false with the offending node's location in *loc and the
 * message (without location) in msg. */
bool tl_tma_decode(const tl_primfunc *f, const tl_expr *e, tl_tma_call *out, tl_loc *loc, char *msg, size_t msgsz);
/* Collects the tensor maps of f: one per distinct (tensor parameter, box,
 * swizzle) of its TMA calls, in order of first appearance in the body (a
 * pre-order walk).  *maps is malloc'd (NULL when none); returns the count,
 * or -1 with a located message (a call tl_tma_decode rejects; OOM). */
int tl_tma_collect(const tl_primfunc *f, tl_tma_map **maps, tl_loc *loc, char *msg, size_t msgsz);
/* The index of the map equal to key (same parameter, rank, box, swizzle)
 * in maps[0..n), or -1. */
int tl_tma_find(const tl_tma_map *maps, int n, const tl_tma_map *key);
/* Kernel workspaces (lib/IR/workspace.c): the global buffers allocated at
 * the top level of f's kernel body (stream-K's slots and tile counters,
 * lib/Lower/Hopper/stream_k.c; docs/simt-ir.md "Stream-K"), in order; each is one
 * hidden pointer parameter after the tensor maps, which the runtime points
 * at zeroed device memory it keeps per (kernel, device, stream).  Returns
 * the count (at most max; bufs may be NULL to count only). */
int tl_workspace_collect(const tl_primfunc *f, tl_buffer **bufs, int max);
/* The bytes of workspace buffer b (its static element count times the
 * element size; 0 when the shape is not static). */
int64_t tl_workspace_bytes(const tl_buffer *b);
/* The most workspace buffers a function may have. */
#define TL_WORKSPACE_MAX 4
/* Folding helpers. */
bool tl_expr_is_const_int(const tl_expr *e, int64_t *v);
/* hi - lo as a constant *c when both are affine in the same atoms (sums of
 * constant multiples of subexpressions that are not +, - or * by a
 * constant) and the atoms cancel: (bx + 1) * 128 - bx * 128 is 128. */
bool tl_expr_const_difference(const tl_expr *hi, const tl_expr *lo, int64_t *c);
/* e as a constant by the same rule: a constant, or an affine form whose
 * atoms cancel (512 * s + 64 - 512 * s, a slice extent after its lets were
 * substituted), within int32 for a narrower dtype. */
bool tl_expr_affine_const(const tl_expr *e, int64_t *v);
bool tl_expr_equal(const tl_expr *a, const tl_expr *b); /* structural, vars by pointer */
/* Float rounded to dtype t (f16/bf16 round to nearest even; tf32 to 10-bit
 * mantissa; float8 as tl_fp8_encode), as a double. */
double tl_round_to_dtype(double v, tl_dtype t);
/* The device's result of float binary operator op (+ - * / floordiv floormod
 * pow min max) on values of float dtype t, as a double: f64 in double; every
 * other float dtype in f32 (C float operations, floorf/powf/fminf/fmaxf),
 * then rounded to t (one rounding of the f32 result, which for f16/bf16
 * equals the correct rounding of + - * /: f32 has >= 2p+2 bits).  The
 * arithmetic model shared by the reference evaluator and the SIMT executor
 * (lib/Interp); NaN for any other operator. */
double tl_float_binop(tl_binop op, double a, double b, tl_dtype t);
/* Integer (or bool) fold of a op b with operands of integer dtype t (already
 * wrapped to t; the result is not): true with *r set, false where the value
 * is not a constant of t (division by zero, signed overflow, an out-of-range
 * shift, an op without an integer meaning).  The constant folder of
 * tl_ir_binary, shared by the hosts that evaluate integer expressions. */
bool tl_int_binop_fold(tl_binop op, tl_dtype t, int64_t a, int64_t b, int64_t *r);
/* Whether comparison op (== != < <= > >=; any other op reads as >=) holds
 * for operands in order ord (< 0, 0, > 0: a < b, a == b, a > b). */
bool tl_order_holds(tl_binop op, int ord);
/* Comparison op on two float values as the device compares them (ordered
 * comparisons, and != unordered: with a NaN operand only != holds).  Shared
 * by the reference evaluator and the SIMT executor (lib/Interp). */
bool tl_float_compare(tl_binop op, double a, double b);
/* Comparison op on two integer values, unsigned (as uint64) when
 * is_unsigned, else signed.  Shared like tl_float_compare. */
bool tl_int_compare(tl_binop op, int64_t a, int64_t b, bool is_unsigned);
/* The dtype both operands of a comparison are brought to before comparing,
 * in the code generator and the SIMT executor alike: the float one if only
 * one is a float, else the wider one (a non-bool over a bool), with the
 * larger lane count. */
tl_dtype tl_dtype_compare_common(tl_dtype a, tl_dtype b);

/* ----------------------------------------------- T.debug_print (T.print) */
/* How a T.debug_print value is passed to printf (lib/IR/debug_print.c):
 * INT/UINT as a 32-bit int (%d / %u), I64/U64 as long long, FLOAT as a
 * double (%f), BOOL as the string "true" / "false" (%s). */
typedef enum tl_debug_print_kind {
  TL_DEBUG_PRINT_INT,
  TL_DEBUG_PRINT_UINT,
  TL_DEBUG_PRINT_I64,
  TL_DEBUG_PRINT_U64,
  TL_DEBUG_PRINT_FLOAT,
  TL_DEBUG_PRINT_BOOL
} tl_debug_print_kind;
/* Whether T.print can print a value of dtype t (scalars of every dtype but
 * float8 and handle); its kind and TileLang's C name of the dtype. */
bool tl_debug_print_kind_of(tl_dtype t, tl_debug_print_kind *kind, const char **cname);
/* The printf format of one T.debug_print call site (malloc'd; NULL for a
 * dtype tl_debug_print_kind refuses, or on OOM): its arguments are the
 * block index x, y, z, the thread index x, y, z (int), the element index
 * (int, only when buffer is not ""), then the value as its kind says. */
char *tl_debug_print_format(const char *where, const char *msg, const char *buffer, tl_dtype t);
/* The printf format of a failed T.device_assert_at (malloc'd; NULL on
 * OOM): "WHERE: Device assert failed: MSG BlockIdx=(%d, %d, %d),
 * ThreadIdx=(%d, %d, %d)\n" (TileLang's debug.h words; "WHERE: " left out
 * when where is ""), its arguments the block and thread index as for
 * T.debug_print. */
char *tl_device_assert_format(const char *where, const char *msg);

/* ------------------------------------------------------------- printing */
/* Appends the canonical text of the module / an expression. */
void tl_print_module(tl_strbuf *out, const tl_module *m);
void tl_print_expr(tl_strbuf *out, const tl_expr *e);

/* ------------------------------------------------------------ verifying */
/* Checks every rule of the source language (docs/language.md) that
 * applies at the tile level (tile-op operands: lib/IR/ops.c);
 * reports each violation to d; returns the number of errors. */
int tl_verify_module(const tl_module *m, tl_diag *d);

/* Context passed to op verifier hooks. */
typedef struct tl_verify_ctx {
  const tl_module *module;
  const tl_primfunc *func;
  tl_diag *diag;
  int errors;
} tl_verify_ctx;

/* ------------------------------------------------------------ front end */
/* Parses + elaborates source into m (front end: lexer.c, parser*.c,
 * elab*.c).  Errors go to d; returns false when any was reported. */
bool tl_frontend_parse(tl_module *m, tl_diag *d, const char *source, size_t len, const char *filename,
                       const tl_define *defs, size_t ndefs);
/* As tl_frontend_parse, building only the kernel named `kernel` (the Python
 * name of a factory or prim_func, --kernel) when it is not NULL; see
 * tl_module_parse_kernel for the choice without it. */
bool tl_frontend_parse_kernel(tl_module *m, tl_diag *d, const char *source, size_t len, const char *filename,
                              const tl_define *defs, size_t ndefs, const char *kernel);

#endif
