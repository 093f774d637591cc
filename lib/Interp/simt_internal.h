/* SIMT executor internals (lib/Interp/simt_exec.c, simt_warp.c): the value
 * representation, per-block state and the helpers the warp-collective and
 * asynchronous-copy code shares with the statement/expression executor.
 *
 * A value is a vector over the threads of a gang (simt_sched.c: a warp):
 * element [t * lanes + l] is lane l of the gang's
 * thread t, block thread x->tbase + t.  Integers and bool are int64 normalised to their
 * dtype (sign- or zero-extended; bool 0/1; uint64 as its bit pattern);
 * floats are doubles holding a value exactly representable in the dtype
 * (f16, bf16, tf32, f32 or f64).  Memory (global tensors, shared memory,
 * per-thread local buffers) holds the dtype's encoding as bytes. */
#ifndef TL_SIMT_INTERNAL_H
#define TL_SIMT_INTERNAL_H

#include "Interp/interp.h"

typedef union sx_el {
  int64_t i;
  double f;
} sx_el;

typedef struct sx_val {
  tl_dtype t; /* dtype, lanes included */
  sx_el *v;   /* [thread * lanes + lane]; read-only once produced */
} sx_val;

typedef enum sx_space { SX_GLOBAL, SX_SHARED, SX_LOCAL } sx_space;

#define SX_MAX_DIMS 8

typedef struct sx_buf {
  const tl_buffer *b;
  sx_space space;
  tl_dtype et; /* scalar element dtype */
  int eb;      /* bytes per element */
  int ndim;
  int64_t shape[SX_MAX_DIMS];
  int64_t stride[SX_MAX_DIMS]; /* element strides */
  int64_t elems;               /* addressable elements (flat offsets 0..elems-1) */
  uint8_t *data;               /* global: the tensor; shared: smem + base; local: thread 0's copy */
  int64_t base;                /* shared: byte offset in the block's shared memory; global: a T.make_tensor
                                  view's byte offset in its tensor (simt_view.c), else 0 */
  int64_t pitch;               /* local: bytes per thread */
  struct sx_gel *gsh;          /* global: race state per element for the current launch (simt_grace.c);
                                  NULL when the kernel stores nothing to it (or checks are off) */
} sx_buf;

/* Race-tracking state of one shared-memory byte (simt_race.c).  Clocks are
 * vector-clock entries (sx_blk.vc): a byte was written in the current block
 * when w_clk >= the block's clock base. */
typedef struct sx_byte {
  uint32_t w_clk;   /* the writer unit's clock at the write (cp.async: see w_grp) */
  int16_t w_unit;   /* vector-clock unit of the writer: a gang, or an mbarrier (async-proxy copy) */
  int16_t w_thr;    /* thread of the last write (block thread index) */
  int32_t w_grp;    /* cp.async group of the last write; -1: not a cp.async (SX_GRP_TMA: a TMA load) */
  uint32_t w_fence; /* the writer thread's fence.proxy.async count at the write; SX_ASYNC_WRITE: async proxy */
} sx_byte;
#define SX_MANY (-2)
#define SX_GRP_TMA (-3) /* sx_byte.w_grp of bytes a T.ptx_tma_load wrote */
#define SX_ASYNC_WRITE UINT32_MAX

/* The last read of a byte by one gang: the gang's clock and the thread
 * (SX_MANY when several threads of the gang read at that clock). */
typedef struct sx_rd {
  uint32_t clk;
  int16_t thr;
} sx_rd;

/* cp.async bookkeeping of one thread. */
typedef struct sx_async {
  int32_t committed;    /* groups closed by commit_group; the open group has this index */
  int32_t completed;    /* groups 0..completed-1 are complete */
  uint32_t *done_clk;   /* per group: the waiting gang's clock when its wait completed */
  uint32_t *done_fence; /* per group: the thread's fence.proxy.async count when its wait completed */
  int32_t cap;
  int32_t bulk_committed, bulk_completed; /* cp.async.bulk groups (bulk stores) */
  uint32_t fences;                        /* fence.proxy.async executed so far in this block */
} sx_async;

typedef struct sx_chunk {
  char *data;
  size_t cap, used;
} sx_chunk;
typedef struct sx_mark {
  int chunk;
  size_t used;
} sx_mark;

#define SX_MAX_GANGS 32 /* 1024 threads / 32 */
#define SX_MAX_MBAR 64  /* mbarriers initialised per block */
#define SX_NBAR 16      /* named barriers 0..15 (PTX ISA §9.7.13.1) */

/* A named barrier (bar.sync / bar.arrive) in progress. */
typedef struct sx_nbar {
  int expected;     /* thread count of the current use; 0: idle */
  int arrived;      /* threads arrived so far */
  uint64_t waiting; /* gangs blocked in bar.sync on it (bit per gang) */
  uint32_t *vc;     /* join of the arrivals' clocks */
} sx_nbar;

/* An mbarrier object (PTX ISA §9.7.13.15): a uint64 element of shared memory. */
typedef struct sx_mbar {
  int64_t addr;       /* byte offset in the block's shared memory */
  const tl_buffer *b; /* the buffer and element that hold it (messages) */
  int64_t el;
  uint32_t phase;    /* number of completed phases (the current phase's parity is phase & 1) */
  int expected;      /* the arrival count of init */
  int pending;       /* arrivals the current phase still needs */
  int64_t tx;        /* tx-count of the current phase */
  uint32_t *vc;      /* releases into the current phase */
  uint32_t *done_vc; /* what a wait that observes the last completed phase acquires */
  int init_unit, init_thr;
  uint32_t init_clk;
} sx_mbar;

/* A cp.async.bulk global -> shared copy not yet performed (the async proxy
 * performs it at a scheduling point, then complete_tx on its mbarrier). */
struct sx_tma_box;
typedef struct sx_bulk {
  const struct sx_tma_box *tma; /* a TMA tensor copy (simt_tma.c) instead of src, or NULL */
  const struct sx_buf *dst;
  int64_t dst_byte;   /* byte offset in dst */
  const uint8_t *src; /* global source bytes */
  int64_t bytes;
  int mbar;          /* index in sx_blk.mb */
  int thr;           /* issuing thread */
  const tl_stmt *at; /* issuing statement */
  uint32_t *vc;      /* the issuer's clock at issue */
} sx_bulk;

/* The shared-memory source of a bulk store whose bulk group has not been
 * waited for: the async proxy may still read bytes [lo, hi). */
typedef struct sx_bulk_read {
  int64_t lo, hi; /* byte offsets in the block's shared memory */
  int thr;        /* issuing thread */
  int32_t group;  /* its bulk group */
} sx_bulk_read;

/* The shared bytes [lo, hi) (the byte span of one operand) that a
 * wgmma.mma_async issued by warp `warp` in its wgmma group `group` may read
 * until a T.ptx_wgmma_wait of that warp covers the group (simt_wgmma.c);
 * or, when reg is set, the elements [lo, hi) of the warp's threads' local
 * buffer reg that it reads (rs's A fragment) or writes (acc: the
 * accumulators) until then. */
typedef struct sx_wgmma_read {
  int64_t lo, hi;
  int warp;
  int32_t group;
  const sx_buf *reg;
  bool acc;
} sx_wgmma_read;

struct sx;

/* State of one block shared by its gangs (simt_sched.c runs them). */
typedef struct sx_blk {
  tl_map bufs;     /* allocated tl_buffer* -> sx_buf* */
  tl_map smem_off; /* shared tl_buffer* -> int64_t* byte offset */
  tl_arena arena;  /* lifetime of one block */
  uint8_t *smem;
  sx_byte *sstate; /* [smem_size] */
  sx_rd *rd;       /* [G][smem_size] */
  int64_t smem_size;
  sx_async *async;  /* per thread */
  int T;            /* threads per block */
  int G;            /* gangs: units of scheduling, one per warp */
  int gang_threads; /* threads per gang (32, or T) */
  int NU;           /* vector-clock units: G gangs, then SX_MAX_MBAR mbarriers */
  uint32_t base;    /* clock base of the current block */
  uint32_t *vc;     /* [G][NU] */
  sx_nbar nbar[SX_NBAR];
  sx_mbar mb[SX_MAX_MBAR];
  int nmb;
  sx_bulk *bulk; /* pending bulk copies */
  int nbulk;
  size_t capbulk;
  sx_bulk_read *bread; /* sources of bulk stores not yet waited for */
  int nbread;
  size_t capbread;
  sx_wgmma_read *wgr; /* operands of wgmma.mma_async not yet waited for */
  int nwgr;
  size_t capwgr;
  int32_t wg_committed[SX_MAX_GANGS], wg_completed[SX_MAX_GANGS]; /* wgmma groups per warp */
  struct sx_sched *sched;                                         /* NULL in lockstep mode */
  int64_t grid[3];                                                /* the launch's grid (global race messages) */
  uint32_t blk_id; /* 1 + the linear index of the current block (blockIdx.x fastest) */
} sx_blk;

typedef struct sx {
  const tl_module *m;
  const tl_primfunc *f;
  tl_diag *d;
  bool failed;
  bool check;   /* race / barrier / cp.async / uninitialised checks */
  int T;        /* threads of this gang (the value vectors' length) */
  int tbase;    /* block thread index of the gang's first thread */
  int g;        /* gang index */
  bool in_gang; /* a gang of the warp scheduler, on its own stack (not the root executor) */
  int64_t grid[3], block[3];
  int64_t max_steps, steps;
  int depth;
  const tl_stmt *cur; /* statement being executed (error locations) */
  /* scratch stack for values */
  sx_chunk *chunks;
  int nchunks, chunk;
  size_t scratch_total;
  /* bindings */
  tl_map env;                  /* tl_var* → sx_val* */
  const tl_map *penv;          /* the enclosing (pre-kernel) bindings, or NULL */
  tl_map gbufs;                /* parameter tl_buffer* → sx_buf* */
  tl_map vbufs;                /* the gang's T.make_tensor views: tl_buffer* → sx_buf* (simt_view.c) */
  tl_arena arena;              /* lifetime of the call */
  sx_blk *k;                   /* the block being executed */
  uint64_t schedule_seed;      /* 0: deterministic schedule */
  const tl_simt_options *opts; /* the caller's (NULL: defaults): its progress callback */
  tl_simt_workspaces *ws;      /* workspaces shared with other calls (tl_simt_options.workspaces), or NULL */
} sx;

/* Reports an error at the current statement (block and message); returns false. */
bool sx_fail(sx *x, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Scratch memory (zeroed) released by the enclosing statement; NULL on OOM (reported). */
void *sx_scratch(sx *x, size_t bytes);
/* Evaluates e converted to dtype t under the active mask. */
bool sx_eval_as(sx *x, const tl_expr *e, tl_dtype t, const uint8_t *mask, sx_val *out);
/* The storage of buffer b (a parameter or an allocation in scope); NULL reported. */
sx_buf *sx_buffer(sx *x, const tl_buffer *b);
/* simt_race.c: vector clocks and the shared-memory protocol checks.  t is
 * the block thread index (x->tbase + vector index).  sx_smem_read /
 * sx_smem_write check thread t reading / writing n bytes at byte offset off
 * of buffer sb (group: cp.async group, -1 for an ordinary store): races,
 * reads of pending cp.async or bulk-copy data and of uninitialised bytes;
 * they record the access; false after reporting.  sx_smem_read_async is a
 * read through the async proxy (what_op names the operation; adds the
 * fence.proxy.async rule); sx_smem_write_async stamps the bytes of bulk copy
 * c as written by vector-clock unit `unit` at clock clk. */
bool sx_smem_read(sx *x, const sx_buf *sb, int64_t off, int n, int t);
bool sx_smem_write(sx *x, const sx_buf *sb, int64_t off, int n, int t, int32_t group);
bool sx_smem_read_async(sx *x, const sx_buf *sb, int64_t off, int64_t n, int t, const char *what_op);
bool sx_smem_write_async(sx *x, const sx_bulk *c, int unit, uint32_t clk);
/* Records a read of shared byte `byte` by thread t of x's gang now (no check). */
void sx_smem_note_read(sx *x, int64_t byte, int t);
/* The vector clock of unit u (k->NU entries). */
uint32_t *sx_vc(sx_blk *k, int u);
/* dst = max(dst, src) entrywise. */
void sx_vc_join(const sx_blk *k, uint32_t *dst, const uint32_t *src);
/* A release by x's gang: advances its own clock entry. */
void sx_release(sx *x);
/* Starts the clocks of a new block above every clock used before. */
void sx_clock_block_start(sx_blk *k);
/* Does an access by (unit, clk, thread thr) happen before thread t of x's gang now? */
bool sx_happens_before(const sx *x, int unit, uint32_t clk, int thr, int t);
/* simt_grace.c: global-memory races within one launch.  sx_gsh_launch
 * gives every global tensor that kernel s stores to (a store statement or a
 * T.ptx_atomic_add) fresh race state (false reported on OOM); sx_gsh_free
 * drops it.  sx_gmem_read / sx_gmem_write check and record an access of
 * element f of global buffer sb by block thread t of x's gang (before the
 * store of value v; v NULL: a T.ptx_atomic_add); false after reporting. */
bool sx_gsh_launch(sx *x, const tl_stmt *s);
void sx_gsh_free(sx *x);
bool sx_gmem_read(sx *x, sx_buf *sb, int64_t f, int t);
/* The race state of global buffer sb from its element f on (a view's,
 * simt_view.c), or NULL when sb has none. */
struct sx_gel *sx_gsh_at(const sx_buf *sb, int64_t f);
bool sx_gmem_write(sx *x, sx_buf *sb, int64_t f, int t, const sx_el *v);
/* Lanes of t (1 for a scalar), t's scalar dtype, t with l lanes. */
static inline int lanes_of(tl_dtype t) { return t.lanes ? t.lanes : 1; }
static inline tl_dtype scalar_of(tl_dtype t) {
  t.lanes = 1;
  return t;
}
static inline tl_dtype with_lanes(tl_dtype t, int l) {
  t.lanes = (uint16_t)l;
  return t;
}
/* A value of dtype t (lanes included) on the scratch stack. */
bool sx_alloc_val(sx *x, sx_val *out, tl_dtype t);
/* v rounded to float dtype t / wrapped to integer dtype t, as the executor's arithmetic does (simt_exec.c). */
double sx_round_to(double v, tl_dtype t);
int64_t sx_wrap(tl_dtype t, int64_t v);
/* Dtype classes of the executor's arithmetic. */
static inline bool is_bool(tl_dtype t) { return t.code == TL_TYPE_BOOL; }
static inline bool is_uint(tl_dtype t) { return t.code == TL_TYPE_UINT; }
static inline bool is_fl(tl_dtype t) { return tl_dtype_is_float(t); }
static inline bool is_narrow(tl_dtype t) {
  return (t.code == TL_TYPE_FLOAT && t.bits == 16) || (t.code == TL_TYPE_BFLOAT && t.bits == 16);
}
static inline bool is_f64(tl_dtype t) { return t.code == TL_TYPE_FLOAT && t.bits == 64; }
/* e's value under the active mask (simt_exec.c); v converted to dtype `to`
 * (scalar → vector splats; may share v's storage); v as bool, lanes kept. */
bool sx_eval(sx *x, const tl_expr *e, const uint8_t *mask, sx_val *out);
bool sx_convert(sx *x, const sx_val *v, tl_dtype to, sx_val *out);
bool sx_to_cond(sx *x, const sx_val *v, sx_val *out);
/* out = a op b elementwise on dtype t (a, b already of dtype t). */
bool sx_binop_vals(sx *x, tl_binop op, const sx_val *a, const sx_val *b, tl_dtype t, const uint8_t *mask, sx_val *out);
/* simt_call.c: an intrinsic call's value; cond ? tv : fv per lane in dtype t
 * (a select, T.if_then_else). */
bool sx_eval_call(sx *x, const tl_expr *e, const uint8_t *mask, sx_val *out);
bool sx_eval_select(sx *x, const tl_expr *cond, const tl_expr *tv, const tl_expr *fv, tl_dtype t, const uint8_t *mask,
                    sx_val *out);
/* simt_atomic.c: T.ptx_atomic_add / _max / _min under the active mask. */
bool sx_eval_atomic(sx *x, const tl_expr *e, const uint8_t *mask, sx_val *out);
/* simt_mem.c: a load expression / a store statement under the active mask. */
bool sx_eval_load(sx *x, const tl_expr *e, const uint8_t *mask, sx_val *out);
bool sx_exec_store(sx *x, const tl_stmt *s, const uint8_t *mask);
/* simt_view.c: binds T.make_tensor view b for the gang (its allocation statement). */
bool sx_exec_view(sx *x, const tl_buffer *b, const uint8_t *mask);
/* Element `flat` of buffer sb as block thread tid sees it (local buffers are per thread). */
static inline uint8_t *sx_elem_ptr(const sx_buf *sb, int tid, int64_t flat) {
  if (sb->space == SX_LOCAL) return sb->data + (int64_t)tid * sb->pitch + flat * sb->eb;
  return sb->data + flat * sb->eb;
}
/* Element encoding: loads / stores one scalar of dtype et at p. */
sx_el sx_el_load(tl_dtype et, const uint8_t *p);
void sx_el_store(tl_dtype et, uint8_t *p, sx_el v);
/* Requires that every warp with an active thread has all 32 lanes active. */
bool sx_full_warps(sx *x, const uint8_t *mask, const char *what);
/* T.ptx_mma's a_off, b_off, c_off (arguments 2, 4, 6) as int64 per thread (simt_warp.c). */
bool sx_mma_offsets(sx *x, const tl_expr *e, const uint8_t *mask, sx_val *ao, sx_val *bo, sx_val *co);
/* T.ptx_mma of the m16n8k8 (tf32), m16n8k32 (int8, fp8) and m8n8k4 (f64) shapes (simt_mma.c). */
bool sx_mma_types(sx *x, const tl_expr *e, const uint8_t *mask);
/* T.ptx_mma_sp (simt_mma.c): mma.sp m16n8k32 with 2:4 sparse A and its metadata */
bool sx_mma_sp(sx *x, const tl_expr *e, const uint8_t *mask);
/* Runs mma call e, its operands a, b, c checked to form the mma.sync of
 * kind mi (every kind, m16n8k16 included): each active warp (all 32 lanes
 * active, or an error) gathers its fragments, computes D and stores it over
 * c (simt_mma.c). */
bool sx_mma_warps(sx *x, const tl_expr *e, const uint8_t *mask, sx_buf *a, sx_buf *b, sx_buf *c, const tl_mma_info *mi);

/* simt_warp.c: argument i of call e as a buffer of space `want` (and eb-byte
 * elements unless eb is 0; `what` names it in messages), NULL reported;
 * argument i as a constant (false reported); elements [off, off + n) of the
 * local buffer sb in block thread t + x->tbase in bounds (false reported). */
sx_buf *sx_buf_arg(sx *x, const tl_expr *e, int i, sx_space want, int eb, const char *what);
bool sx_const_arg(sx *x, const tl_expr *e, int i, int64_t *v);
bool sx_local_range(sx *x, const sx_buf *sb, int64_t off, int64_t n, int t, const char *what);
/* simt_warp.c: statements T.ptx_ldmatrix / ptx_mma / ptx_cp_async /
 * ptx_commit_group / ptx_wait_group, and the shuffle expressions. */
bool sx_warp_stmt(sx *x, int op, const tl_expr *call, const uint8_t *mask);
/* Thread t's cp.async groups before upto complete now (this gang's clock). */
bool sx_cp_async_complete(sx *x, int t, int64_t upto);
bool sx_shuffle(sx *x, int op, const tl_expr *call, const uint8_t *mask, sx_val *out);

/* The asynchronous-pipeline statements (named barriers, mbarriers, bulk
 * copies, the proxy fence: TL_INTRIN_CASES_ASYNC_PIPELINE; TMA tensor
 * copies: TL_INTRIN_CASES_TMA). */
static inline bool sx_is_async_op(int op) {
  switch (op) {
  TL_INTRIN_CASES_ASYNC_PIPELINE:
  TL_INTRIN_CASES_TMA:
    return true;
  default: return false;
  }
}

/* The warpgroup statements (TL_INTRIN_CASES_WGMMA). */
static inline bool sx_is_wgmma_op(int op) {
  switch (op) {
  TL_INTRIN_CASES_WGMMA:
    return true;
  default: return false;
  }
}
/* simt_wgmma.c: T.ptx_wgmma_fence / commit / wait / ss / rs and
 * T.ptx_setmaxnreg (sx_is_wgmma_op) for x's gang, per warp of it. */
bool sx_wgmma_stmt(sx *x, int op, const tl_expr *call, const uint8_t *mask);
/* simt_print.c: T.debug_print (T.print): the active threads' lines on stdout. */
bool sx_debug_print(sx *x, const tl_expr *e, const uint8_t *mask);
/* simt_print.c: T.device_assert_at: the first active thread whose condition
 * is false prints the GPU's line and fails the run with the message. */
bool sx_device_assert(sx *x, const tl_expr *e, const uint8_t *mask);
/* A write by thread t of the n bytes at byte offset off of shared buffer sb
 * that a wgmma not yet waited for may still read: false after reporting. */
bool sx_wgmma_check_write(sx *x, const sx_buf *sb, int64_t off, int64_t n, int t);
/* A load (store: false) or store of element flat of local buffer sb by block
 * thread t: an error while a wgmma.mma_async of t's warp not yet covered by
 * a T.ptx_wgmma_wait writes it (its accumulators: their values are
 * undefined until the wait, PTX ISA §9.7.15.5) or, for a store, reads it
 * (rs's A fragment). */
bool sx_wgmma_check_reg(sx *x, const sx_buf *sb, int64_t flat, int t, bool store);

/* simt_mbar.c: named barriers, mbarriers, bulk copies, the proxy fence
 * (sx_is_async_op), under the warp scheduler.
 * sx_bar: x's gang (all lanes active) arrives at barrier id over n threads,
 * and with wait blocks until it completes.  sx_bulk_progress: the async
 * proxy performs pending bulk copies (all; with seeded some at random; with
 * force at least one). */
bool sx_async_stmt(sx *x, int op, const tl_expr *call, const uint8_t *mask);
/* simt_mbar.c, for simt_tma.c: the mbarrier named by argument argi
 * (element off of thread vector index t), its index in k->mb or < 0
 * after reporting; queues copy c (its vc is filled here) for the async
 * proxy. */
int sx_mbar_index(sx *x, const tl_expr *e, int argi, const sx_val *off, int t);
bool sx_bulk_enqueue(sx *x, const sx_bulk *c);
/* simt_tma.c: T.ptx_tma_load / T.ptx_tma_store (issue), and the async
 * proxy's performance of a queued tensor load: the box image into shared
 * memory (race-stamped as bulk copy c by unit/clk), complete_tx after. */
bool sx_tma_stmt(sx *x, int op, const tl_expr *call, const uint8_t *mask);
bool sx_tma_perform(sx *x, const sx_bulk *c, int unit, uint32_t clk);
bool sx_bar(sx *x, int id, int n, bool wait, const uint8_t *mask);
bool sx_bulk_progress(sx *root, bool seeded, bool force);

/* simt_sched.c: the warp scheduler.  sx_sched_create makes k->G gangs
 * (stacks, executor states copied from root); sx_sched_run_block runs the
 * current block's gangs to completion (each sx_exec_gang) or to the first
 * error or a deadlock (reported); sx_block blocks x's gang until the wait
 * (SX_WAIT_BAR id / SX_WAIT_MBAR index with parity) is satisfied (false
 * when the block failed meanwhile); sx_maybe_yield yields at random (seeded
 * schedules); sx_gang_of is the gang executing block thread t; sx_rand
 * draws from the block's schedule generator. */
enum { SX_WAIT_NONE, SX_WAIT_BAR, SX_WAIT_MBAR };
bool sx_sched_create(sx *root, sx_blk *k);
void sx_sched_destroy(sx_blk *k);
bool sx_sched_run_block(sx *root, const tl_stmt *kernel);
bool sx_block(sx *x, int kind, int id, int parity);
void sx_maybe_yield(sx *x);
sx *sx_gang_of(sx_blk *k, int t);
uint64_t sx_rand(sx_blk *k);

/* simt_exec.c: runs the kernel body for gang x of the current block (binds
 * the block variables; all of the gang's threads active). */
bool sx_exec_gang(sx *x, const tl_stmt *kernel);

#endif
