/* The tl_context object (internal layout).  All mutable library state lives
 * here: the diagnostics of the last call and its rendered message. */
#ifndef TL_CONTEXT_H
#define TL_CONTEXT_H

#include "Support/support.h"
#include "tilelang/core.h"
#include "tilelang/runtime.h"

struct tl_context {
  tl_diag diag;            /* diagnostics of the current / last call */
  char *last_error;        /* rendered message of the last failing call (malloc) */
  char *first_file;        /* file of the first error (malloc) */
  tl_allocator allocator;  /* CUDA outputs' allocator (tl_context_set_allocator); zero: cuMemAlloc */
  tl_progress_fn progress; /* the CPU SIMT executor's per-block callback (tl_context_set_progress) */
  void *progress_user;
};

/* Starts a new API call: clears diagnostics and the last error. */
void tl_context_begin(tl_context *ctx);
/* Ends a call with status s: on failure copies the rendered diagnostics (or
 * the message given with tl_context_fail) into last_error.  Returns s. */
tl_status tl_context_end(tl_context *ctx, tl_status s);
/* Records a plain message (no location) and returns s: for bad arguments,
 * I/O and CUDA errors. */
tl_status tl_context_fail(tl_context *ctx, tl_status s, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
/* Ends the API call `func` that was given a NULL `arg`: records "func: arg
 * is NULL" and returns tl_context_end(ctx, TL_ERR_INVALID_ARGUMENT). */
tl_status tl_context_null_arg(tl_context *ctx, const char *func, const char *arg);

#endif
