/* Layout dumps through the driver (docs/layouts.md "Seeing the layouts"):
 * a kernel's tile IR lowered again, on a copy, up to and including the pass
 * "layout-inference", and the layouts it attached shown as text and written
 * as SVG files (lib/Lower/layout_dump.h).  tl_kernel_dump_layouts (the
 * public face, lib/Runtime/kernel.c) and tl-opt --dump-layouts call it. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "Driver/compiler.h"
#include "Lower/layout_dump.h"
#include "Lower/lower.h"
#include "Support/context.h"

typedef struct svg_sink {
  tl_context *ctx;
  const char *dir;
  tl_strbuf *list;
  tl_status st;
  bool made; /* the directory exists */
} svg_sink;

static bool write_svg(void *user, const char *file, const char *svg) {
  svg_sink *s = user;
  if (!s->made && mkdir(s->dir, 0777) != 0 && errno != EEXIST) {
    s->st = tl_context_fail(s->ctx, TL_ERR_IO, "cannot create directory '%s': %s", s->dir, strerror(errno));
    return false;
  }
  s->made = true;
  tl_strbuf path = {0};
  tl_strbuf_printf(&path, "%s/%s", s->dir, file);
  if (path.oom) {
    s->st = tl_context_fail(s->ctx, TL_ERR_NO_MEMORY, "out of memory");
    return false;
  }
  FILE *f = fopen(path.data, "wb");
  size_t n = strlen(svg);
  bool ok = f && fwrite(svg, 1, n, f) == n;
  int e = errno;
  if (f && fclose(f) != 0 && ok) ok = false, e = errno;
  if (!ok) {
    s->st = tl_context_fail(s->ctx, TL_ERR_IO, "cannot write '%s': %s", path.data, strerror(e));
    tl_strbuf_free(&path);
    return false;
  }
  tl_strbuf_printf(s->list, "svg: %s\n", path.data);
  tl_strbuf_free(&path);
  return true;
}

tl_status tl_compiler_layouts(tl_context *ctx, const tl_module *tile, const tl_target *target,
                              const tl_layout_dump_options *opts, char **text) {
  tl_layout_dump_options o = opts ? *opts : (tl_layout_dump_options){0};
  tl_module *m = tl_module_clone(tile);
  if (!m) return tl_context_fail(ctx, TL_ERR_NO_MEMORY, "out of memory");
  tl_lower_options lo = {0};
  lo.target = target;
  lo.stop_after = "layout-inference";
  if (!tl_lower_module(m, &lo, &ctx->diag)) {
    tl_module_destroy(m);
    return TL_ERR_COMPILE;
  }
  tl_strbuf sb = {0};
  tl_layout_dump_text(&sb, m, o.full ? TL_LAYOUT_DUMP_FULL : TL_LAYOUT_DUMP_COMPACT, "");
  svg_sink sink = {ctx, o.svg_dir, &sb, TL_OK, false};
  if (o.svg_dir && !tl_layout_dump_svg(m, o.full, write_svg, &sink) && sink.st == TL_OK)
    sink.st = tl_context_fail(ctx, TL_ERR_NO_MEMORY, "out of memory");
  tl_module_destroy(m);
  if (sink.st != TL_OK) {
    tl_strbuf_free(&sb);
    return sink.st;
  }
  if (sb.oom || !(*text = tl_strbuf_take(&sb))) {
    tl_strbuf_free(&sb);
    return tl_context_fail(ctx, TL_ERR_NO_MEMORY, "out of memory");
  }
  return TL_OK;
}

tl_status tl_module_dump_layouts(tl_context *ctx, const tl_module *m, const char *target,
                                 const tl_layout_dump_options *opts, char **text) {
  if (!ctx) return TL_ERR_INVALID_ARGUMENT;
  tl_context_begin(ctx);
  if (text) *text = NULL;
  if (!m || !text) return tl_context_null_arg(ctx, "tl_module_dump_layouts", !m ? "module" : "text");
  const tl_target *t = target ? tl_target_lookup(target) : tl_target_default();
  if (!t)
    return tl_context_end(ctx, tl_context_fail(ctx, TL_ERR_INVALID_ARGUMENT, "unknown target '%s' (expected %s)",
                                               target, tl_target_names()));
  size_t nsources = ctx->diag.sources.len;
  if (m->source && m->filename) /* lowering's errors show their source lines */
    (void)tl_diag_add_source(&ctx->diag, m->filename, m->source, strlen(m->source));
  tl_status st = tl_context_end(ctx, tl_compiler_layouts(ctx, m, t, opts, text));
  ctx->diag.sources.len = nsources;
  return st;
}
