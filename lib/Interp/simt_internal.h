/* SIMT executor internals (lib/Interp/simt_exec.c, simt_warp.c): the value
 * representation, per-block state and the helpers the warp-collective and
 * asynchronous-copy code shares with the statement/expression executor.
 *
 * A value is a vector over the block's threads: element [t * lanes + l] is
 * lane l of thread t.  Integers and bool are int64 normalised to their
 * dtype (sign- or zero-extended; bool 0/1; uint64 as its bit pattern);
 * floats are doubles holding a value exactly representable in the dtype
 * (f16, bf16, tf32, f32 or f64).  Memory (global tensors, shared memory,
 * per-thread local buffers) holds the dtype's encoding as bytes. */
#ifndef TL_SIMT_INTERNAL_H
#define TL_SIMT_INTERNAL_H

#include "Interp/interp.h"

typedef union sx_el { int64_t i; double f; } sx_el;

typedef struct sx_val {
  tl_dtype t;  /* dtype, lanes included */
  sx_el *v;    /* [thread * lanes + lane]; read-only once produced */
} sx_val;

typedef enum sx_space { SX_GLOBAL, SX_SHARED, SX_LOCAL } sx_space;

#define SX_MAX_DIMS 8

typedef struct sx_buf {
  const tl_buffer *b;
  sx_space space;
  tl_dtype et;                 /* scalar element dtype */
  int eb;                      /* bytes per element */
  int ndim;
  int64_t shape[SX_MAX_DIMS];
  int64_t stride[SX_MAX_DIMS]; /* element strides */
  int64_t elems;               /* addressable elements (flat offsets 0..elems-1) */
  uint8_t *data;               /* global: the tensor; shared: smem + base; local: thread 0's copy */
  int64_t base;                /* shared: byte offset in the block's shared memory */
  int64_t pitch;               /* local: bytes per thread */
} sx_buf;

/* Race-tracking state of one shared-memory byte. */
typedef struct sx_byte {
  int32_t w_ep;   /* barrier epoch of the last write; -1: never written */
  int32_t w_grp;  /* cp.async group of the last write; -1: an ordinary store */
  int32_t r_ep;   /* epoch of the last read(s); -1: none */
  int16_t w_thr;  /* thread of the last write */
  int16_t r_thr;  /* thread of the last read; SX_MANY when several threads read */
} sx_byte;
#define SX_MANY (-2)

/* cp.async bookkeeping of one thread. */
typedef struct sx_async {
  int32_t committed;  /* groups closed by commit_group; the open group has this index */
  int32_t completed;  /* groups 0..completed-1 are complete */
  int32_t *done_ep;   /* per group: the barrier epoch at which its wait completed */
  int32_t cap;
} sx_async;

typedef struct sx_chunk { char *data; size_t cap, used; } sx_chunk;
typedef struct sx_mark { int chunk; size_t used; } sx_mark;

typedef struct sx {
  const tl_module *m;
  const tl_primfunc *f;
  tl_diag *d;
  bool failed;
  bool check;              /* race / barrier / cp.async / uninitialised checks */
  int T;                   /* threads per block */
  int64_t grid[3], block[3];
  int64_t max_steps, steps;
  int depth;
  const tl_stmt *cur;      /* statement being executed (error locations) */
  /* scratch stack for values */
  sx_chunk *chunks;
  int nchunks, chunk;
  size_t scratch_total;
  /* bindings */
  tl_map env;              /* tl_var* → sx_val* */
  tl_map gbufs;            /* parameter tl_buffer* → sx_buf* */
  tl_map bufs;             /* allocated tl_buffer* → sx_buf* (per block) */
  tl_map smem_off;         /* shared tl_buffer* → int64_t* byte offset */
  tl_arena arena;          /* lifetime of the call */
  tl_arena block_arena;    /* lifetime of one block */
  /* shared memory of the current block */
  uint8_t *smem;
  sx_byte *sstate;
  int64_t smem_size;
  int32_t epoch;
  sx_async *async;         /* per thread */
  int16_t *tid16;          /* scratch */
} sx;

/* Reports an error at the current statement (block and message); returns false. */
bool sx_fail(sx *x, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Scratch memory (zeroed) released by the enclosing statement; NULL on OOM (reported). */
void *sx_scratch(sx *x, size_t bytes);
/* Evaluates e converted to dtype t under the active mask. */
bool sx_eval_as(sx *x, const tl_expr *e, tl_dtype t, const uint8_t *mask, sx_val *out);
/* The storage of buffer b (a parameter or an allocation in scope); NULL reported. */
sx_buf *sx_buffer(sx *x, const tl_buffer *b);
/* Shared-memory protocol checks for thread t reading / writing n bytes at byte
 * offset off of buffer sb (group: cp.async group, -1 for an ordinary store).
 * They report races, reads of pending cp.async data and of uninitialised
 * bytes, and record the access; false after reporting. */
bool sx_smem_read(sx *x, const sx_buf *sb, int64_t off, int n, int t);
bool sx_smem_write(sx *x, const sx_buf *sb, int64_t off, int n, int t, int32_t group);
/* Element encoding: loads / stores one scalar of dtype et at p. */
sx_el sx_el_load(tl_dtype et, const uint8_t *p);
void sx_el_store(tl_dtype et, uint8_t *p, sx_el v);
/* Requires that every warp with an active thread has all 32 lanes active. */
bool sx_full_warps(sx *x, const uint8_t *mask, const char *what);

/* simt_warp.c: statements T.ptx_ldmatrix / ptx_mma / ptx_cp_async /
 * ptx_commit_group / ptx_wait_group, and the shuffle expressions. */
bool sx_warp_stmt(sx *x, int op, const tl_expr *call, const uint8_t *mask);
bool sx_shuffle(sx *x, int op, const tl_expr *call, const uint8_t *mask, sx_val *out);

#endif
