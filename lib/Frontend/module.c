/* Module-level public API of the tile IR (include/tilelang/ir.h): parse
 * source text or a file into a verified module, verify, print, analyze
 * (the work counts of IR/analyze.c), destroy.
 *
 * Algorithm: each call brackets its work with tl_context_begin/_end.  The
 * source is copied into the module's arena and registered with the
 * context's diagnostics engine for the duration of the call (so errors show
 * their source line; the registration is dropped before returning because
 * the text dies with the module).  Parsing = the front end
 * (tl_frontend_parse: lexer, parser, elaborator) and then, when it reported
 * no error, the IR verifier.  Files are read in chunks (works for pipes). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "Frontend/ast.h"
#include "IR/analyze.h"
#include "IR/tir.h"
#include "Support/context.h"
#include "Support/file.h"

/* Runs front end + verifier on m (whose source is already set). */
static tl_status parse_into(tl_context *ctx, tl_module *m, size_t len, const tl_define *defs, size_t ndefs,
                            const char *kernel) {
  bool ok = tl_frontend_parse_kernel(m, &ctx->diag, m->source, len, m->filename, defs, ndefs, kernel);
  if (m->arena.oom) return TL_ERR_NO_MEMORY;
  if (!ok || ctx->diag.errors > 0) return TL_ERR_COMPILE;
  if (tl_verify_module(m, &ctx->diag) > 0 || ctx->diag.errors > 0) return TL_ERR_COMPILE;
  if (!tl_widen_indices(m) || m->arena.oom) return TL_ERR_NO_MEMORY;
  return TL_OK;
}

tl_status tl_module_parse(tl_context *ctx, const char *source, size_t len, const char *filename,
                          const tl_define *defines, size_t ndefines, tl_module **out) {
  return tl_module_parse_kernel(ctx, source, len, filename, NULL, defines, ndefines, out);
}

tl_status tl_module_parse_kernel(tl_context *ctx, const char *source, size_t len, const char *filename,
                                 const char *kernel, const tl_define *defines, size_t ndefines, tl_module **out) {
  if (!ctx) return TL_ERR_INVALID_ARGUMENT;
  tl_context_begin(ctx);
  if (out) *out = NULL;
  if (!source || !out) return tl_context_null_arg(ctx, "tl_module_parse", !source ? "source" : "out");
  if (ndefines && !defines) return tl_context_null_arg(ctx, "tl_module_parse", "defines");
  tl_module *m = tl_module_new();
  if (!m) return tl_context_end(ctx, tl_context_fail(ctx, TL_ERR_NO_MEMORY, "out of memory"));
  m->filename = tl_arena_strdup(&m->arena, filename ? filename : "<input>");
  m->source = tl_arena_alloc(&m->arena, len + 1);
  if (!m->filename || !m->source) {
    tl_module_destroy(m);
    return tl_context_end(ctx, tl_context_fail(ctx, TL_ERR_NO_MEMORY, "out of memory"));
  }
  if (len) memcpy(m->source, source, len);
  m->source[len] = '\0';

  size_t nsources = ctx->diag.sources.len;
  tl_status st;
  if (!tl_diag_add_source(&ctx->diag, m->filename, m->source, len)) st = TL_ERR_NO_MEMORY;
  else st = parse_into(ctx, m, len, defines, ndefines, kernel);
  if (st == TL_ERR_NO_MEMORY && !ctx->last_error) tl_context_fail(ctx, st, "out of memory");
  st = tl_context_end(ctx, st);
  ctx->diag.sources.len = nsources; /* the text dies with the module */
  if (st != TL_OK) {
    tl_module_destroy(m);
    return st;
  }
  *out = m;
  return TL_OK;
}

tl_status tl_module_parse_file(tl_context *ctx, const char *path, const tl_define *defines, size_t ndefines,
                               tl_module **out) {
  if (!ctx) return TL_ERR_INVALID_ARGUMENT;
  if (!path || !out) {
    tl_context_begin(ctx);
    if (out) *out = NULL;
    return tl_context_null_arg(ctx, "tl_module_parse_file", !path ? "path" : "out");
  }
  *out = NULL;
  errno = 0;
  char *data = NULL;
  size_t len = 0;
  bool ok = tl_read_file(path, &data, &len);
  int err = errno ? errno : EIO;
  if (!ok) {
    tl_context_begin(ctx);
    tl_status s = err == ENOMEM ? TL_ERR_NO_MEMORY : TL_ERR_IO;
    return tl_context_end(ctx, tl_context_fail(ctx, s, "cannot read '%s': %s", path, strerror(err)));
  }
  tl_status st = tl_module_parse(ctx, data, len, path, defines, ndefines, out);
  free(data);
  return st;
}

tl_status tl_module_verify(tl_context *ctx, const tl_module *m) {
  if (!ctx) return TL_ERR_INVALID_ARGUMENT;
  tl_context_begin(ctx);
  if (!m) return tl_context_null_arg(ctx, "tl_module_verify", "module");
  size_t nsources = ctx->diag.sources.len;
  if (m->source && m->filename) (void)tl_diag_add_source(&ctx->diag, m->filename, m->source, strlen(m->source));
  int n = tl_verify_module(m, &ctx->diag);
  tl_status st = tl_context_end(ctx, n > 0 || ctx->diag.errors > 0 ? TL_ERR_COMPILE : TL_OK);
  ctx->diag.sources.len = nsources;
  return st;
}

tl_status tl_module_analyze(tl_context *ctx, const tl_module *m, const char *const *dim_names,
                            const int64_t *dim_values, size_t ndims, tl_analysis *out) {
  if (!ctx) return TL_ERR_INVALID_ARGUMENT;
  tl_context_begin(ctx);
  if (out) *out = (tl_analysis){0};
  if (!m || !out) return tl_context_null_arg(ctx, "tl_module_analyze", !m ? "module" : "out");
  if (ndims > 0 && (!dim_names || !dim_values))
    return tl_context_null_arg(ctx, "tl_module_analyze", !dim_names ? "dim_names" : "dim_values");
  size_t nsources = ctx->diag.sources.len;
  if (m->source && m->filename) (void)tl_diag_add_source(&ctx->diag, m->filename, m->source, strlen(m->source));
  tl_analyze_dims dims = {dim_names, dim_values, ndims};
  tl_analysis acc = {0};
  bool ok = true;
  for (int i = 0; ok && i < m->nfuncs; i++) ok = tl_analyze_func(m->funcs[i], &dims, true, &ctx->diag, &acc);
  if (ok) *out = acc;
  tl_status st = tl_context_end(ctx, ok && ctx->diag.errors == 0 ? TL_OK : TL_ERR_COMPILE);
  ctx->diag.sources.len = nsources;
  return st;
}

tl_status tl_module_print(tl_context *ctx, const tl_module *m, char **out_text) {
  if (!ctx) return TL_ERR_INVALID_ARGUMENT;
  tl_context_begin(ctx);
  if (out_text) *out_text = NULL;
  if (!m || !out_text) return tl_context_null_arg(ctx, "tl_module_print", !m ? "module" : "out_text");
  tl_strbuf sb = {0};
  tl_print_module(&sb, m);
  if (sb.oom) {
    tl_strbuf_free(&sb);
    return tl_context_end(ctx, tl_context_fail(ctx, TL_ERR_NO_MEMORY, "out of memory"));
  }
  char *text = tl_strbuf_take(&sb);
  if (!text) return tl_context_end(ctx, tl_context_fail(ctx, TL_ERR_NO_MEMORY, "out of memory"));
  *out_text = text;
  return tl_context_end(ctx, TL_OK);
}

tl_status tl_python_ast_dump(tl_context *ctx, const char *source, size_t len, const char *filename, char **out_text) {
  if (!ctx) return TL_ERR_INVALID_ARGUMENT;
  tl_context_begin(ctx);
  if (out_text) *out_text = NULL;
  if (!source || !out_text)
    return tl_context_end(ctx, tl_context_fail(ctx, TL_ERR_INVALID_ARGUMENT, "tl_python_ast_dump: %s is NULL",
                                               !source ? "source" : "out_text"));
  tl_module *m = tl_module_new();
  if (!m) return tl_context_end(ctx, tl_context_fail(ctx, TL_ERR_NO_MEMORY, "out of memory"));
  const char *fname = tl_arena_strdup(&m->arena, filename ? filename : "<input>");
  char *text = tl_arena_alloc(&m->arena, len + 1);
  tl_status st = TL_OK;
  size_t nsources = ctx->diag.sources.len;
  if (!fname || !text) {
    st = TL_ERR_NO_MEMORY;
  } else {
    if (len) memcpy(text, source, len);
    text[len] = '\0';
    tl_ast_module ast;
    if (!tl_diag_add_source(&ctx->diag, fname, text, len)) st = TL_ERR_NO_MEMORY;
    else if (!tl_parse_python(&m->arena, &m->names, &ctx->diag, text, len, fname, &ast))
      st = m->arena.oom ? TL_ERR_NO_MEMORY : TL_ERR_COMPILE;
    if (st == TL_OK) {
      tl_strbuf sb = {0};
      tl_ast_dump_module(&sb, &ast);
      tl_strbuf_append(&sb, "\n");
      *out_text = sb.oom ? NULL : tl_strbuf_take(&sb);
      tl_strbuf_free(&sb);
      if (!*out_text) st = TL_ERR_NO_MEMORY;
    }
  }
  if (st == TL_ERR_NO_MEMORY && !ctx->last_error) tl_context_fail(ctx, st, "out of memory");
  st = tl_context_end(ctx, st);
  ctx->diag.sources.len = nsources;
  tl_module_destroy(m);
  return st;
}
