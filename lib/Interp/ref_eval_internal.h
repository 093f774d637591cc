/* Internal interface between the two halves of the tile-level reference
 * evaluator: ref_eval.c (state, values, expressions, statements, the grid)
 * and ref_eval_ops.c (the tile ops T.copy, T.gemm, T.fill, T.reduce_*,
 * T.atomic_add by their definitions).  Nothing here is used outside
 * lib/Interp/ref_eval*.c. */
#ifndef TL_REF_EVAL_INTERNAL_H
#define TL_REF_EVAL_INTERNAL_H

#include "Interp/interp.h"

#define RE_MAX_DIMS 8

/* A scalar value: .f for float dtypes (exactly a value of the dtype, as a
 * double), .i for int/uint/bool (wrapped to the dtype's width: signed values
 * sign-extended, unsigned zero-extended, uint64 as its bit pattern). */
typedef union re_val {
  double f;
  int64_t i;
} re_val;

/* Storage of one buffer.  Global tensors are the caller's memory in the
 * dtype's own encoding (native); every other buffer is an array of doubles
 * (float dtypes) or int64_t (int-like dtypes) owned by the evaluator. */
typedef struct re_buf {
  const tl_buffer *b;
  bool valid;  /* bound (parameter) or allocated in this block */
  bool native; /* caller memory in the dtype's encoding */
  bool isf;    /* float dtype */
  tl_dtype dt;
  int ndim;
  int64_t shape[RE_MAX_DIMS], stride[RE_MAX_DIMS]; /* element strides */
  int64_t size;                                    /* elements addressable from data */
  void *data;
  size_t cap;     /* bytes owned at data (0: not owned) */
  uint64_t epoch; /* block number of the allocation */
  bool workspace; /* a kernel workspace (T.alloc_global): one per launch, all blocks */
} re_buf;

/* One thread's private state: variable values by slot, thread-private
 * buffers (local, local.var, local.fragment) by slot. */
typedef struct re_thread {
  re_val *env;
  re_buf *local;
  int64_t tid;
} re_thread;

typedef struct re_state {
  const tl_module *m;
  const tl_primfunc *f;
  tl_diag *d;
  bool failed;
  tl_map var_slot; /* tl_var* → slot + 1 */
  tl_map buf_slot; /* tl_buffer* → slot + 1 */
  int nvars, nbufs;
  re_buf *bufs;       /* global and shared buffers, by slot */
  re_val *genv;       /* function-level variables (params, dims, block ids) */
  re_thread main;     /* the block as a whole (tile programs) */
  re_thread *threads; /* per-thread contexts (per-thread programs) */
  int64_t nthreads_alloc;
  re_thread *cur;  /* the context statements run in */
  bool per_thread; /* the kernel body runs once per thread */
  /* role scopes whose body uses the thread index (docs/hopper.md "Explicit warp specialisation"): run once
   * per thread of their warpgroup, after the lets of the thread index met before them (tid_lets) */
  const tl_stmt *kbody;
  bool tid_scopes;
  const tl_stmt *tid_lets[8];
  int ntid_lets;
  bool in_kernel;
  int kernels_run;  /* T.Kernel scopes started (the first one makes the workspaces fresh) */
  int64_t nthreads; /* threads of the block (T.Kernel threads=) */
  int64_t block[3];
  uint64_t epoch;        /* blocks started so far */
  int depth;             /* recursion depth (statements + expressions) */
  double *scratch;       /* T.gemm operand copies */
  size_t scratch_cap;    /* doubles */
  bool warned_unwritten; /* a load of an unwritten element was reported (once per run) */
} re_state;

/* The value of a float element that nothing wrote (of a fragment, shared or
 * local buffer): a NaN with a payload of its own, which arithmetic does not
 * produce from numbers, so that a load can tell it from a computed NaN
 * (a read of an unwritten element is a located warning). */
#define RE_UNWRITTEN_BITS UINT64_C(0x7FF8DEAD00000000)
double re_unwritten(void);
bool re_is_unwritten(double v);
/* Reports (a located warning, the first of a run) when v, just read from
 * element off of rb (a fragment, shared or local float buffer), is the
 * unwritten value: a load, or a tile op's source element that it uses. */
void re_note_unwritten(re_state *st, const re_buf *rb, int64_t off, re_val v, tl_loc loc);

/* Reports an error at loc (only the first error of a run is reported) and
 * marks the run failed. */
void re_error(re_state *st, tl_loc loc, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

/* The value of an expression of the current context (scalar dtypes only). */
re_val re_eval(re_state *st, const tl_expr *e);
/* An integer-valued expression as int64 (ints as they are, floats rejected). */
int64_t re_eval_int(re_state *st, const tl_expr *e);

/* The storage of buffer b in the current context; NULL (error reported at
 * loc) when it is not bound or allocated. */
re_buf *re_buf_of(re_state *st, const tl_buffer *b, tl_loc loc);
/* Element at flat element offset off (no bounds check). */
re_val re_buf_get(const re_buf *rb, int64_t off);
/* Stores v (a value of rb's dtype) at flat element offset off. */
void re_buf_set(re_buf *rb, int64_t off, re_val v);

/* v of dtype from converted to dtype to (float rounding to nearest even,
 * float → int truncating and saturating with NaN → 0, ints wrapping). */
re_val re_convert(re_val v, tl_dtype from, tl_dtype to);
/* A double rounded to float dtype t (f32 via the C conversion, f16/bf16/tf32
 * via tl_round_to_dtype, f64 unchanged). */
double re_round(double v, tl_dtype t);
/* An int64 wrapped to int-like dtype t. */
int64_t re_wrap(int64_t v, tl_dtype t);
/* a + b in dtype t (floats in float32 for 16-bit types, rounded after). */
re_val re_add(re_val a, re_val b, tl_dtype t);
/* What atomic intrinsic in (TL_INTRIN_PTX_ATOMIC_ADD/MAX/MIN) stores over
 * old given v, both of dtype t: re_add, or the larger / smaller (floats as
 * fmax / fmin: a NaN operand loses; unsigned ints compared unsigned). */
re_val re_atomic_apply(int in, re_val old, re_val v, tl_dtype t);

/* a op b on int-like dtype t (values wrapped to t); wraps the result;
 * division by zero reported at loc. */
int64_t re_int_arith(re_state *st, tl_binop op, int64_t a, int64_t b, tl_dtype t, tl_loc loc);
/* A value as a condition: non-zero. */
bool re_truthy(re_val v, tl_dtype t);
/* The value of an intrinsic call (ref_eval_call.c). */
re_val re_eval_call(re_state *st, const tl_expr *e);

/* Runs a tile-op statement (ref_eval_ops.c); false on error (reported). */
bool re_tile_op(re_state *st, const tl_stmt *s);

#endif
