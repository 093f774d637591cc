/* Public API of autotune spaces (include/tilelang/ir.h tl_tune_space_*):
 * parse a kernel file's @tilelang.autotune decorator (the front end's
 * tl_frontend_autotune, elab_autotune.c) or build a space from -D bindings,
 * and read it.
 *
 * Algorithm: as tl_module_parse_kernel, the call is bracketed with
 * tl_context_begin/_end and the source is registered with the diagnostics
 * engine for the call; the module that holds the AST is thrown away, the
 * space keeps copies in its own arena. */
#include <stdlib.h>
#include <string.h>

#include "Frontend/tune_space.h"
#include "Support/context.h"

static tl_tune_space *space_new(void) {
  tl_tune_space *s = calloc(1, sizeof *s);
  if (!s) return NULL;
  tl_arena_init(&s->arena);
  s->warmup = s->rep = -1;
  s->kernel = "";
  s->text = "";
  return s;
}

tl_status tl_tune_space_parse(tl_context *ctx, const char *source, size_t len, const char *filename, const char *kernel,
                              const tl_define *defines, size_t ndefines, tl_tune_space **out) {
  if (!ctx) return TL_ERR_INVALID_ARGUMENT;
  tl_context_begin(ctx);
  if (out) *out = NULL;
  if (!source || !out) return tl_context_null_arg(ctx, "tl_tune_space_parse", !source ? "source" : "out");
  if (ndefines && !defines) return tl_context_null_arg(ctx, "tl_tune_space_parse", "defines");
  tl_module *m = tl_module_new();
  tl_tune_space *s = space_new();
  if (m) {
    m->filename = tl_arena_strdup(&m->arena, filename ? filename : "<input>");
    m->source = tl_arena_alloc(&m->arena, len + 1);
  }
  if (!m || !s || !m->filename || !m->source) {
    tl_module_destroy(m);
    tl_tune_space_destroy(s);
    return tl_context_end(ctx, tl_context_fail(ctx, TL_ERR_NO_MEMORY, "out of memory"));
  }
  if (len) memcpy(m->source, source, len);
  m->source[len] = '\0';
  size_t nsources = ctx->diag.sources.len;
  tl_status st = TL_OK;
  if (!tl_diag_add_source(&ctx->diag, m->filename, m->source, len)) st = TL_ERR_NO_MEMORY;
  else if (!tl_frontend_autotune(m, &ctx->diag, m->source, len, m->filename, defines, ndefines, kernel, s) ||
           ctx->diag.errors > 0)
    st = m->arena.oom || s->arena.oom ? TL_ERR_NO_MEMORY : TL_ERR_COMPILE;
  if (st == TL_ERR_NO_MEMORY && !ctx->last_error) tl_context_fail(ctx, st, "out of memory");
  st = tl_context_end(ctx, st);
  ctx->diag.sources.len = nsources; /* the text dies with the module */
  tl_module_destroy(m);
  if (st != TL_OK || !s->found) {
    tl_tune_space_destroy(s);
    return st;
  }
  *out = s;
  return TL_OK;
}

tl_status tl_tune_space_from_defines(const tl_define *const *defs, const size_t *nkeys, size_t nconfigs,
                                     tl_tune_space **out) {
  if (!out) return TL_ERR_INVALID_ARGUMENT;
  *out = NULL;
  if (!nconfigs || !defs || !nkeys) return TL_ERR_INVALID_ARGUMENT;
  tl_tune_space *s = space_new();
  if (!s) return TL_ERR_NO_MEMORY;
  s->found = true;
  s->n = nconfigs;
  s->nkeys = tl_arena_alloc(&s->arena, sizeof(size_t) * nconfigs);
  s->defs = tl_arena_alloc(&s->arena, sizeof(tl_define *) * nconfigs);
  tl_strbuf text = {0};
  tl_status st = s->nkeys && s->defs ? TL_OK : TL_ERR_NO_MEMORY;
  for (size_t i = 0; st == TL_OK && i < nconfigs; i++) {
    if (nkeys[i] && !defs[i]) {
      st = TL_ERR_INVALID_ARGUMENT;
      break;
    }
    s->nkeys[i] = nkeys[i];
    s->defs[i] = tl_arena_alloc(&s->arena, sizeof(tl_define) * (nkeys[i] ? nkeys[i] : 1));
    if (!s->defs[i]) st = TL_ERR_NO_MEMORY;
    for (size_t j = 0; st == TL_OK && j < nkeys[i]; j++) {
      const tl_define *d = &defs[i][j];
      if (!d->name || !*d->name) {
        st = TL_ERR_INVALID_ARGUMENT;
        break;
      }
      s->defs[i][j].name = tl_arena_strdup(&s->arena, d->name);
      s->defs[i][j].value = tl_arena_strdup(&s->arena, d->value ? d->value : "");
      if (!s->defs[i][j].name || !s->defs[i][j].value) st = TL_ERR_NO_MEMORY;
      tl_strbuf_printf(&text, "%s%s=%s", j ? " " : "", d->name, d->value ? d->value : "");
    }
    tl_strbuf_printf(&text, "\n");
  }
  if (st == TL_OK && (text.oom || !(s->text = tl_arena_strdup(&s->arena, text.data ? text.data : ""))))
    st = TL_ERR_NO_MEMORY;
  tl_strbuf_free(&text);
  if (st != TL_OK) {
    tl_tune_space_destroy(s);
    return st;
  }
  *out = s;
  return TL_OK;
}

size_t tl_tune_space_count(const tl_tune_space *s) { return s ? s->n : 0; }

const tl_define *tl_tune_space_config(const tl_tune_space *s, size_t i, size_t *n) {
  if (n) *n = 0;
  if (!s || i >= s->n) return NULL;
  if (n) *n = s->nkeys[i];
  return s->defs[i];
}

int tl_tune_space_warmup(const tl_tune_space *s) { return s ? s->warmup : -1; }
int tl_tune_space_rep(const tl_tune_space *s) { return s ? s->rep : -1; }
const char *tl_tune_space_kernel(const tl_tune_space *s) { return s && s->kernel ? s->kernel : ""; }
const char *tl_tune_space_text(const tl_tune_space *s) { return s && s->text ? s->text : ""; }

void tl_tune_space_destroy(tl_tune_space *s) {
  if (!s) return;
  tl_arena_free(&s->arena);
  free(s);
}
