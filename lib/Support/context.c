/* The context object and status names (include/tilelang/core.h,
 * lib/Support/context.h).
 *
 * Role: all mutable library state of one thread of use.  Each public call
 * brackets its work with tl_context_begin / tl_context_end; on failure the
 * rendered diagnostics become the context's last error.  tl_context_fail
 * records a plain message instead (bad arguments, I/O, CUDA errors); that
 * message has no trailing newline, rendered diagnostics end in '\n'.
 * No global state: distinct contexts may be used from distinct threads. */
#include "Support/context.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char *tl_status_name(tl_status s) {
  switch (s) {
  case TL_OK: return "TL_OK";
  case TL_ERR_INVALID_ARGUMENT: return "TL_ERR_INVALID_ARGUMENT";
  case TL_ERR_COMPILE: return "TL_ERR_COMPILE";
  case TL_ERR_IO: return "TL_ERR_IO";
  case TL_ERR_NO_MEMORY: return "TL_ERR_NO_MEMORY";
  case TL_ERR_NO_DEVICE: return "TL_ERR_NO_DEVICE";
  case TL_ERR_CUDA: return "TL_ERR_CUDA";
  case TL_ERR_UNSUPPORTED: return "TL_ERR_UNSUPPORTED";
  case TL_ERR_INTERNAL: return "TL_ERR_INTERNAL";
  }
  return "TL_ERR_UNKNOWN";
}

tl_status tl_context_create(tl_context **out) {
  if (!out) return TL_ERR_INVALID_ARGUMENT;
  *out = NULL;
  tl_context *ctx = calloc(1, sizeof *ctx);
  if (!ctx) return TL_ERR_NO_MEMORY;
  tl_diag_init(&ctx->diag);
  *out = ctx;
  return TL_OK;
}

void tl_context_destroy(tl_context *ctx) {
  if (!ctx) return;
  tl_diag_free(&ctx->diag);
  free(ctx->last_error);
  free(ctx->first_file);
  free(ctx);
}

const char *tl_context_last_error(const tl_context *ctx) {
  if (!ctx || !ctx->last_error) return "";
  return ctx->last_error;
}

int tl_context_error_count(const tl_context *ctx) { return ctx ? ctx->diag.errors : 0; }

void tl_context_first_error_location(const tl_context *ctx, const char **file, int *line, int *col) {
  if (file) *file = ctx ? ctx->first_file : NULL;
  if (line) *line = ctx && ctx->first_file ? ctx->diag.first_error.line : 0;
  if (col) *col = ctx && ctx->first_file ? ctx->diag.first_error.col : 0;
}

const char *tl_context_warnings(const tl_context *ctx) {
  if (!ctx || ctx->last_error || ctx->diag.errors || (!ctx->diag.warnings && !ctx->diag.remarks) || ctx->diag.out.oom ||
      !ctx->diag.out.data)
    return "";
  return ctx->diag.out.data;
}

void tl_context_begin(tl_context *ctx) {
  tl_diag_clear(&ctx->diag);
  ctx->diag.sources.len = 0; /* sources of the previous call are stale */
  free(ctx->last_error);
  free(ctx->first_file);
  ctx->last_error = NULL;
  ctx->first_file = NULL;
}

tl_status tl_context_end(tl_context *ctx, tl_status s) {
  if (s == TL_OK) {
    free(ctx->last_error);
    ctx->last_error = NULL;
    return s;
  }
  if (!ctx->last_error) {
    if (ctx->diag.out.len && !ctx->diag.out.oom) ctx->last_error = strdup(ctx->diag.out.data);
    else if (ctx->diag.first_message) ctx->last_error = strdup(ctx->diag.first_message);
    else ctx->last_error = strdup(tl_status_name(s));
  }
  if (!ctx->first_file && ctx->diag.first_error.file) ctx->first_file = strdup(ctx->diag.first_error.file);
  return s;
}

tl_status tl_context_fail(tl_context *ctx, tl_status s, const char *fmt, ...) {
  tl_strbuf msg = {0};
  va_list ap;
  va_start(ap, fmt);
  tl_strbuf_vprintf(&msg, fmt, ap);
  va_end(ap);
  char *text = tl_strbuf_take(&msg);
  free(ctx->last_error);
  ctx->last_error = text ? text : strdup(tl_status_name(s));
  if (ctx->diag.errors == 0) {
    ctx->diag.errors = 1;
    free(ctx->diag.first_message);
    ctx->diag.first_message = ctx->last_error ? strdup(ctx->last_error) : NULL;
  }
  return s;
}

void tl_free(void *p) { free(p); }

tl_status tl_context_null_arg(tl_context *ctx, const char *func, const char *arg) {
  return tl_context_end(ctx, tl_context_fail(ctx, TL_ERR_INVALID_ARGUMENT, "%s: %s is NULL", func, arg));
}
