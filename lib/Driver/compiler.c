/* The compiler driver (lib/Driver/compiler.h): source → tile IR
 * (tl_module_parse_kernel, lib/IR) → SIMT IR (tl_lower_module, lib/Lower) → LLVM
 * IR and PTX (the target's backend: Driver/backend.h, lib/NVPTX), one stage per call, and the
 * public target queries.
 *
 * Algorithm: the front end runs once; lowering works on a deep copy of the
 * tile IR (tl_module_clone), so that the tile IR as written stays for the
 * reference evaluator.  The lowering pass hook (always installed) stamps
 * the time of each pass and hands its output to opts->after_stage (tl-opt
 * --print-after-all); code generation's own stamps split LLVM IR building,
 * optimisation and PTX emission. */
#include "Driver/compiler.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "Driver/backend.h"
#include "Lower/layout_dump.h"
#include "Lower/lower.h"
#include "Support/context.h"
#include "Support/file.h"

/* ------------------------------------------------------------ pass configs */
/* The public lookups over the pass-config table (lib/Support/target.h's
 * tl_pass_config_table, from include/tilelang/pass_configs.def). */
TL_API unsigned tl_pass_config_flag(const char *key, size_t len) {
  for (int i = 0; key && i < TL_PASS_CONFIG_COUNT; i++)
    if (strlen(tl_pass_config_table[i].key) == len && strncmp(key, tl_pass_config_table[i].key, len) == 0)
      return tl_pass_config_table[i].flag;
  return 0;
}

TL_API const char *tl_pass_config_flag_keys(void) { return tl_pass_config_key_list(false); }

TL_API unsigned tl_pass_config_false_flags(void) { return TL_COMPILE_ATTENTION_SCHEDULE; }

TL_API tl_status tl_pass_config_apply(tl_context *ctx, const char *key, const char *value, unsigned *flags,
                                      unsigned *flags_false) {
  if (!ctx) return TL_ERR_INVALID_ARGUMENT;
  if (!key || !flags || !flags_false)
    return tl_context_fail(ctx, TL_ERR_INVALID_ARGUMENT, "tl_pass_config_apply: argument '%s' is NULL",
                           !key     ? "key"
                           : !flags ? "flags"
                                    : "flags_false");
  int i = tl_pass_config_index(key);
  if (i < 0)
    return tl_context_fail(ctx, TL_ERR_INVALID_ARGUMENT, "unsupported pass config '%.200s' (understood: %s)", key,
                           tl_pass_config_flag_keys());
  const tl_pass_config_info *row = &tl_pass_config_table[i];
  bool on = true;
  if (value && !tl_pass_config_parse_value(i, value, &on))
    return tl_context_fail(ctx, TL_ERR_INVALID_ARGUMENT, "pass config '%s': expected %s, got '%.200s'", key,
                           row->kind == TL_PASS_CONFIG_BITWIDTH ? "32 or 64" : "True or False", value);
  if (on) {
    *flags |= row->flag;
    *flags_false &= ~row->flag;
  } else {
    *flags &= ~row->flag;
    if (row->kind == TL_PASS_CONFIG_SCHEDULE) *flags_false |= row->flag;
  }
  return TL_OK;
}

static double mono_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

void tl_compilation_init(tl_compilation *c, const tl_compile_options *opts) {
  memset(c, 0, sizeof *c);
  c->opts = opts ? opts : &c->defaults;
  c->target_name = c->opts->target;
  c->remarks = c->opts->remarks;
  c->t0 = mono_ms();
}

void tl_compilation_free(tl_compilation *c) {
  tl_module_destroy(c->tile);
  tl_module_destroy(c->simt);
  free(c->simt_ir);
  free(c->llvm_ir);
  free(c->ptx);
  c->tile = c->simt = NULL;
  c->simt_ir = c->llvm_ir = c->ptx = NULL;
}

void tl_compilation_report_times(tl_compilation *c) {
  tl_compile_times *tm = &c->times;
  tm->total = mono_ms() - c->t0;
  tm->other = tm->total - (tm->parse + tm->tile_passes + tm->simt + tm->llvm_ir + tm->opt + tm->ptx);
  if (tm->other < 0) tm->other = 0;
  if (c->opts->times) *c->opts->times = *tm;
}

tl_status tl_compiler_read_file(tl_context *ctx, const char *path, char **text, size_t *len) {
  *text = NULL;
  *len = 0;
  int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return tl_context_fail(ctx, TL_ERR_IO, "cannot open '%s': %s", path, strerror(errno));
  bool ok = tl_read_fd(fd, text, len);
  int e = errno;
  close(fd);
  if (ok) return TL_OK;
  if (e == ENOMEM) return tl_context_fail(ctx, TL_ERR_NO_MEMORY, "out of memory reading '%s'", path);
  return tl_context_fail(ctx, TL_ERR_IO, "cannot read '%s': %s", path, strerror(e));
}

/* ------------------------------------------------------------ stages */
/* Prints m and hands the text to opts->after_stage as stage `stage`. */
static void emit_stage(const tl_compile_options *opts, const char *stage, const tl_module *m) {
  tl_strbuf sb = {0};
  tl_print_module(&sb, m);
  /* what layout inference decided is not in the IR text: its summary as comments */
  if (!strcmp(stage, "layout-inference")) tl_layout_dump_text(&sb, m, TL_LAYOUT_DUMP_SUMMARY, "# ");
  char *text = tl_strbuf_take(&sb);
  if (text) opts->after_stage(opts->after_stage_user, stage, text);
  free(text);
}

tl_status tl_compiler_parse(tl_context *ctx, tl_compilation *c, const char *source, size_t len, const char *filename,
                            const tl_define *defines, size_t ndefines) {
  double t0 = mono_ms();
  tl_status st = tl_module_parse_kernel(ctx, source, len, filename, c->opts->kernel, defines, ndefines, &c->tile);
  c->times.parse = mono_ms() - t0;
  if (st != TL_OK) return st;
  tl_module *m = c->tile;
  /* lowering's and code generation's errors show their source lines */
  if (m->source && m->filename && !tl_diag_has_source(&ctx->diag, m->filename))
    tl_diag_add_source(&ctx->diag, m->filename, m->source, strlen(m->source));
  if (m->nfuncs < 1 || !m->funcs[0])
    return tl_context_fail(ctx, TL_ERR_COMPILE, "%s: no @T.prim_func to compile", filename ? filename : "<input>");
  if (c->opts->after_stage) emit_stage(c->opts, "parse", m);
  tl_pass_configs *pc = &m->funcs[0]->pass_configs;
  for (int i = 0; i < TL_PASS_CONFIG_COUNT; i++) {
    bool *field = tl_pass_config_field(pc, i);
    if (c->opts->flags & tl_pass_config_table[i].flag) {
      *field = true;
      tl_pass_config_mark_given(pc, i);
    } else if ((c->opts->flags_false & tl_pass_config_table[i].flag) &&
               tl_pass_config_table[i].kind == TL_PASS_CONFIG_SCHEDULE) { /* given False */
      *field = false;
      tl_pass_config_mark_given(pc, i);
    }
  }
  return TL_OK;
}

/* The lowering pass hook: stamps the pass's time into tile_passes (the
 * passes before lower-tile-ops work on tile IR) or simt (lower-tile-ops and
 * every pass after it make SIMT IR), and shows its output. */
typedef struct stage_hook {
  tl_compilation *c;
  double last; /* the end of the previous pass */
  bool simt;
} stage_hook;

static void after_pass(void *user, const char *pass_name, const tl_module *m) {
  stage_hook *h = user;
  double now = mono_ms();
  if (pass_name && !strcmp(pass_name, "lower-tile-ops")) h->simt = true;
  if (h->simt) h->c->times.simt += now - h->last;
  else h->c->times.tile_passes += now - h->last;
  if (h->c->opts->after_stage) emit_stage(h->c->opts, pass_name, m);
  h->last = mono_ms(); /* the callback's time stays out of the passes */
}

tl_status tl_compiler_lower(tl_context *ctx, tl_compilation *c) {
  const tl_compile_options *opts = c->opts;
  c->target = c->target_name ? tl_target_lookup(c->target_name) : tl_target_default();
  if (!c->target)
    return tl_context_fail(ctx, TL_ERR_INVALID_ARGUMENT, "unknown target '%s' (expected %s)", c->target_name,
                           tl_target_names());
  if (opts->sms < 0 || opts->sms > 100000)
    return tl_context_fail(ctx, TL_ERR_INVALID_ARGUMENT, "SM count %d out of range (1..100000, or 0)", opts->sms);
  if (opts->sms > 0 && c->target->sms > 0) { /* the persistent grid's SM count (tl_compile_options.sms) */
    c->target_sms = *c->target;
    c->target_sms.sms = opts->sms;
    c->target = &c->target_sms;
  }
  double t0 = mono_ms();
  if (!(c->simt = tl_module_clone(c->tile))) return tl_context_fail(ctx, TL_ERR_NO_MEMORY, "out of memory");
  stage_hook hook = {c, 0, false};
  c->times.parse += mono_ms() - t0; /* the copy stands in for the second parse it replaces */
  hook.last = mono_ms();
  tl_lower_options lo = {0};
  lo.target = c->target;
  lo.verify_each = opts->verify_each;
  lo.remarks = c->remarks;
  lo.after_pass = after_pass;
  lo.user = &hook;
  if (!tl_lower_module(c->simt, &lo, &ctx->diag)) return TL_ERR_COMPILE;
  tl_strbuf sb = {0};
  tl_print_module(&sb, c->simt);
  if (!(c->simt_ir = tl_strbuf_take(&sb))) return tl_context_fail(ctx, TL_ERR_NO_MEMORY, "out of memory");
  return TL_OK;
}

tl_status tl_compiler_codegen(tl_context *ctx, tl_compilation *c) {
  const tl_compile_options *opts = c->opts;
  const tl_backend *be = tl_backend_for(c->target);
  tl_backend_result cg = {0};
  double tc = mono_ms();
  /* The optimised LLVM IR is printed only when kept (TL_COMPILE_KEEP_LLVM_IR)
   * or shown (after_stage): printing it costs ~10% of code generation. */
  tl_backend_request req = {0};
  req.keep_ir_text = (opts->flags & TL_COMPILE_KEEP_LLVM_IR) || opts->after_stage;
  req.no_line_info = opts->no_line_info;
  bool ok = be->emit(c->simt, c->target, &req, &ctx->diag, &cg);
  tc = mono_ms() - tc;
  c->times.opt = cg.ms_opt;
  c->times.ptx = cg.ms_emit;
  c->times.llvm_ir = tc - cg.ms_opt - cg.ms_emit;
  if (c->times.llvm_ir < 0) c->times.llvm_ir = 0;
  if (!ok) {
    be->result_free(&cg);
    return TL_ERR_COMPILE;
  }
  c->ptx = cg.code;
  c->llvm_ir = cg.ir_text;
  if (opts->after_stage) {
    if (c->llvm_ir) opts->after_stage(opts->after_stage_user, "llvm", c->llvm_ir);
    if (c->ptx) opts->after_stage(opts->after_stage_user, "ptx", c->ptx);
  }
  if (!c->ptx) return tl_context_fail(ctx, TL_ERR_INTERNAL, "code generation returned no PTX");
  if (!c->llvm_ir && !(c->llvm_ir = strdup(""))) return tl_context_fail(ctx, TL_ERR_NO_MEMORY, "out of memory");
  return TL_OK;
}

/* ------------------------------------------------------------ targets */
/* The table itself lives in lib/Support/target.c (tl_target_lookup). */
bool tl_target_supported(const char *name) { return name && tl_target_lookup(name) != NULL; }

const char *tl_target_list(void) { return tl_target_names(); }
