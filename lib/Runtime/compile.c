/* Kernel compilation (lib/Runtime): tl_kernel_compile and
 * tl_kernel_compile_file.
 *
 * Role: drive the pipeline — tl_module_parse (lib/IR) → tl_lower_module
 * (lib/Lower) → tl_nvptx_emit (lib/NVPTX) — and keep what a call needs.
 * Algorithm: before lowering, copy the first prim_func's signature (params,
 * dtypes, dims as integer programs over the T.dynamic symbols, out_idx from
 * the options or the file, normalized); after lowering, translate the
 * T.Kernel grid and thread expressions into integer programs, take the
 * dynamic shared memory size, and raise each tensor's required alignment
 * from its element size to the widest vector access the SIMT IR makes on it
 * (a load/store whose last index is a T.ramp, or whose value has lanes > 1;
 * docs/simt-ir.md).  The target defaults to the GPU's arch
 * (tl_device_default_target).  The kernel keeps its own copies of what a
 * call needs, plus two IR modules for the CPU executors (cpu.c): the tile IR
 * as parsed (a second parse of the same source, since lowering rewrites the
 * module in place) and the lowered SIMT IR.
 * Stage times (tl_compile_options.times): CLOCK_MONOTONIC stamps around the
 * parses, after every lowering pass (through the pass hook, which is always
 * installed), and around tl_nvptx_emit, whose own stamps split LLVM IR
 * building, O3 and PTX emission. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "IR/visit.h"
#include "Lower/lower.h"
#include "NVPTX/nvptx.h"
#include "Runtime/kernel.h"
#include "Support/context.h"

/* ------------------------------------------------ alignment scan */
typedef struct align_scan {
  tl_visitor v; /* first: the callbacks get &a->v */
  const tl_primfunc *f;
  tl_rt_sig *sig;
} align_scan;

static void note_access(align_scan *a, const tl_buffer *buf, int n, tl_expr *const *idx,
                        tl_dtype value_dtype) {
  if (!buf || buf->scope != TL_SCOPE_GLOBAL) return;
  int lanes = value_dtype.lanes > 1 ? value_dtype.lanes : 1;
  if (n > 0 && idx[n - 1] && idx[n - 1]->kind == TL_EXPR_RAMP && idx[n - 1]->dtype.lanes > lanes)
    lanes = idx[n - 1]->dtype.lanes;
  if (lanes <= 1) return;
  for (int i = 0; i < a->f->nparams; i++) {
    const tl_param *p = &a->f->params[i];
    if (p->kind != TL_PARAM_TENSOR || !p->buffer) continue;
    if (p->buffer != buf && !(p->buffer->name == buf->name ||
                              (p->buffer->name && buf->name && !strcmp(p->buffer->name, buf->name))))
      continue;
    int bytes = tl_dtype_bytes(buf->dtype) * lanes;
    if (bytes > a->sig->params[i].align) a->sig->params[i].align = bytes;
  }
}

/* T.ptx_cp_async(dst, dst_off, src, src_off, bytes, pred) reads `bytes`
 * bytes of the global tensor src at an address aligned to `bytes`
 * (docs/simt-ir.md): src's base pointer must be aligned that much. */
static void note_cp_async(align_scan *a, const tl_expr *e) {
  static int cp = -2;
  if (cp == -2) cp = tl_intrinsic_lookup("ptx_cp_async");
  int64_t bytes;
  if (e->u.call.op != cp || e->u.call.n != 6 || !e->u.call.args[2] || e->u.call.args[2]->kind != TL_EXPR_BUFFER ||
      !tl_expr_is_const_int(e->u.call.args[4], &bytes))
    return;
  const tl_buffer *buf = e->u.call.args[2]->u.buffer;
  for (int i = 0; buf && i < a->f->nparams; i++) {
    const tl_param *p = &a->f->params[i];
    if (p->kind != TL_PARAM_TENSOR || p->buffer != buf) continue;
    if (bytes > a->sig->params[i].align) a->sig->params[i].align = (int)bytes;
  }
}

/* T.ptx_atomic_add(dst, off, value, rp) with a vector value (f16x2 / bf16x2)
 * updates lanes * element bytes at an address aligned that much. */
static void note_atomic(align_scan *a, const tl_expr *e) {
  static int at = -2;
  if (at == -2) at = tl_intrinsic_lookup("ptx_atomic_add");
  if (e->u.call.op != at || e->u.call.n != 4 || !e->u.call.args[0] ||
      e->u.call.args[0]->kind != TL_EXPR_BUFFER || e->dtype.lanes <= 1)
    return;
  const tl_buffer *buf = e->u.call.args[0]->u.buffer;
  int bytes = tl_dtype_bytes(buf->dtype) * e->dtype.lanes;
  for (int i = 0; buf && i < a->f->nparams; i++) {
    const tl_param *p = &a->f->params[i];
    if (p->kind != TL_PARAM_TENSOR || p->buffer != buf) continue;
    if (bytes > a->sig->params[i].align) a->sig->params[i].align = bytes;
  }
}

/* Every load, store and intrinsic call of the SIMT IR: the vector widths
 * that touch each tensor parameter. */
static void scan_expr(tl_visitor *v, const tl_expr *e) {
  align_scan *a = (align_scan *)v;
  if (e->kind == TL_EXPR_LOAD) note_access(a, e->u.load.buffer, e->u.load.n, e->u.load.indices, e->dtype);
  if (e->kind == TL_EXPR_CALL) {
    note_cp_async(a, e);
    note_atomic(a, e);
  }
}

static void scan_stmt(tl_visitor *v, const tl_stmt *s) {
  if (s->kind != TL_STMT_STORE) return;
  tl_dtype vt = s->u.store.value ? s->u.store.value->dtype : (tl_dtype){0, 0, 1};
  note_access((align_scan *)v, s->u.store.buffer, s->u.store.n, s->u.store.indices, vt);
}

/* ------------------------------------------------ signature */
typedef struct var_tables {
  tl_var **syms;
  int nsyms;
  tl_var **scalars;
  int *scalar_param;
  int nscalars;
} var_tables;

static void tables_free(var_tables *t) {
  free(t->scalars);
  free(t->scalar_param);
  memset(t, 0, sizeof *t);
}

static bool tables_init(var_tables *t, const tl_primfunc *f) {
  memset(t, 0, sizeof *t);
  t->syms = f->dynamic;
  t->nsyms = f->ndynamic;
  t->scalars = calloc((size_t)f->nparams + 1, sizeof(tl_var *));
  t->scalar_param = calloc((size_t)f->nparams + 1, sizeof(int));
  if (!t->scalars || !t->scalar_param) {
    tables_free(t);
    return false;
  }
  for (int i = 0; i < f->nparams; i++)
    if (f->params[i].kind == TL_PARAM_SCALAR) {
      t->scalars[t->nscalars] = f->params[i].var;
      t->scalar_param[t->nscalars++] = i;
    }
  return true;
}

static tl_status translate(tl_context *ctx, const tl_expr *e, const var_tables *t,
                           tl_rx_prog *out, const char *what) {
  char *err = NULL;
  if (tl_rx_translate(e, t->syms, t->nsyms, t->scalars, t->scalar_param, t->nscalars, out, &err))
    return TL_OK;
  if (!err) return tl_context_fail(ctx, TL_ERR_NO_MEMORY, "out of memory");
  tl_status s = tl_context_fail(ctx, TL_ERR_UNSUPPORTED, "%s: %s", what, err);
  free(err);
  return s;
}

static tl_status build_signature(tl_context *ctx, const tl_primfunc *f, tl_rt_sig *sig) {
  var_tables t;
  if (!tables_init(&t, f)) return tl_context_fail(ctx, TL_ERR_NO_MEMORY, "out of memory");
  tl_status st = TL_OK;
  sig->params = calloc((size_t)f->nparams + 1, sizeof *sig->params);
  sig->sym_names = calloc((size_t)f->ndynamic + 1, sizeof(char *));
  if (!sig->params || !sig->sym_names) {
    st = tl_context_fail(ctx, TL_ERR_NO_MEMORY, "out of memory");
    goto out;
  }
  sig->nparams = f->nparams;
  sig->nsyms = f->ndynamic;
  for (int s = 0; s < f->ndynamic; s++)
    if (!(sig->sym_names[s] = strdup(f->dynamic[s]->name ? f->dynamic[s]->name : "?"))) {
      st = tl_context_fail(ctx, TL_ERR_NO_MEMORY, "out of memory");
      goto out;
    }
  for (int i = 0; i < f->nparams && st == TL_OK; i++) {
    const tl_param *fp = &f->params[i];
    tl_rt_param *p = &sig->params[i];
    if (fp->kind == TL_PARAM_TENSOR) {
      const tl_buffer *buf = fp->buffer;
      p->is_tensor = true;
      p->name = strdup(buf->name ? buf->name : "?");
      p->dtype = buf->dtype;
      p->ndim = buf->ndim;
      p->align = tl_dtype_bytes(buf->dtype) * (buf->dtype.lanes > 1 ? buf->dtype.lanes : 1);
      if (p->align < 1) p->align = 1;
      p->dims = calloc((size_t)buf->ndim + 1, sizeof *p->dims);
      if (!p->name || !p->dims) {
        st = tl_context_fail(ctx, TL_ERR_NO_MEMORY, "out of memory");
        break;
      }
      for (int d = 0; d < buf->ndim && st == TL_OK; d++) {
        char what[160];
        snprintf(what, sizeof what, "parameter '%s' dim %d", p->name, d);
        st = translate(ctx, buf->shape[d], &t, &p->dims[d].prog, what);
        /* a scalar parameter cannot size a tensor: the binder has no value for it yet */
        for (int o = 0; st == TL_OK && o < p->dims[d].prog.n; o++)
          if (p->dims[d].prog.ops[o].kind == TL_RX_SCALAR)
            st = tl_context_fail(ctx, TL_ERR_UNSUPPORTED,
                                 "%s: a tensor dim may not depend on a scalar parameter", what);
      }
    } else {
      p->is_tensor = false;
      p->name = strdup(fp->var && fp->var->name ? fp->var->name : "?");
      p->dtype = fp->var ? fp->var->dtype : (tl_dtype){TL_TYPE_INT, 32, 1};
      if (!p->name) st = tl_context_fail(ctx, TL_ERR_NO_MEMORY, "out of memory");
    }
  }
out:
  tables_free(&t);
  return st;
}

static tl_status launch_exprs(tl_context *ctx, const tl_primfunc *f, tl_rt_sig *sig) {
  const tl_stmt *ks = tl_ir_find_kernel(f->body);
  if (!ks)
    return tl_context_fail(ctx, TL_ERR_COMPILE, "prim_func '%s' has no T.Kernel scope to launch",
                           f->name ? f->name : "main");
  var_tables t;
  if (!tables_init(&t, f)) return tl_context_fail(ctx, TL_ERR_NO_MEMORY, "out of memory");
  tl_status st = TL_OK;
  static const char *const what[3] = {"T.Kernel grid x", "T.Kernel grid y", "T.Kernel grid z"};
  sig->ngrid = ks->u.kernel.ngrid < 1 ? 1 : ks->u.kernel.ngrid > 3 ? 3 : ks->u.kernel.ngrid;
  for (int g = 0; g < 3 && st == TL_OK; g++) {
    if (g < ks->u.kernel.ngrid && ks->u.kernel.grid[g])
      st = translate(ctx, ks->u.kernel.grid[g], &t, &sig->grid[g], what[g]);
    else if (!tl_rx_const(1, &sig->grid[g]))
      st = tl_context_fail(ctx, TL_ERR_NO_MEMORY, "out of memory");
  }
  if (st == TL_OK) {
    if (ks->u.kernel.threads)
      st = translate(ctx, ks->u.kernel.threads, &t, &sig->threads, "T.Kernel threads");
    else if (!tl_rx_const(128, &sig->threads))
      st = tl_context_fail(ctx, TL_ERR_NO_MEMORY, "out of memory");
  }
  sig->smem_bytes = f->smem_bytes;
  tables_free(&t);
  return st;
}

/* ------------------------------------------------ pipeline */
static tl_status fail_compile_msg(tl_context *ctx, tl_status s, char *err) {
  tl_status r = err ? tl_context_fail(ctx, s, "%s", err)
                    : tl_context_fail(ctx, TL_ERR_NO_MEMORY, "out of memory");
  free(err);
  return r;
}

static bool has_source(const tl_diag *d, const char *name) {
  for (size_t i = 0; i < d->sources.len; i++)
    if (d->sources.data[i].name && name && !strcmp(d->sources.data[i].name, name)) return true;
  return false;
}

static double mono_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

/* --print-after-all support: print the module after a stage and hand the
 * text to the caller's callback.  The same hook stamps the time of each
 * lowering pass into tm (last: the end of the previous pass). */
typedef struct stage_hook {
  tl_context *ctx;
  const tl_compile_options *opts;
  tl_compile_times *tm;
  double last;
  bool simt;  /* lower-tile-ops has run: the passes from there on make SIMT IR */
} stage_hook;

static void emit_stage(tl_context *ctx, const tl_compile_options *opts, const char *stage,
                       const tl_module *m) {
  (void)ctx;
  tl_strbuf sb = {0};
  tl_print_module(&sb, m);
  char *text = tl_strbuf_take(&sb);
  if (text) opts->after_stage(opts->after_stage_user, stage, text);
  free(text);
}

static void after_pass(void *user, const char *pass_name, const tl_module *m) {
  stage_hook *h = user;
  double now = mono_ms();
  /* the passes before lower-tile-ops work on tile IR (tile_passes); it and
   * every pass after it produce SIMT IR (simt) */
  if (pass_name && !strcmp(pass_name, "lower-tile-ops")) h->simt = true;
  if (h->simt) h->tm->simt += now - h->last;
  else h->tm->tile_passes += now - h->last;
  if (h->opts->after_stage) emit_stage(h->ctx, h->opts, pass_name, m);
  h->last = mono_ms(); /* the callback's time stays out of the passes */
}

static tl_status compile_impl(tl_context *ctx, const char *source, size_t len,
                              const char *filename, const tl_define *defines, size_t ndefines,
                              const tl_compile_options *opts, tl_compile_times *tm,
                              tl_kernel **out) {
  tl_compile_options defaults = {0};
  if (!opts) opts = &defaults;
  tl_module *m = NULL;
  tl_kernel *k = NULL;
  tl_module *tile = NULL;
  double t0 = mono_ms();
  tl_status st =
      tl_module_parse_kernel(ctx, source, len, filename, opts->kernel, defines, ndefines, &m);
  if (st != TL_OK) {
    tm->parse = mono_ms() - t0;
    return st;
  }
  /* a second, unlowered copy of the tile IR for the reference evaluator
   * (lowering rewrites m in place; there is no deep copy of a module) */
  st = tl_module_parse_kernel(ctx, source, len, filename, opts->kernel, defines, ndefines, &tile);
  tm->parse = mono_ms() - t0;
  if (st != TL_OK) {
    tl_module_destroy(m);
    return st;
  }
  if (m->source && m->filename && !has_source(&ctx->diag, m->filename))
    tl_diag_add_source(&ctx->diag, m->filename, m->source, strlen(m->source));
  if (m->nfuncs < 1 || !m->funcs[0]) {
    st = tl_context_fail(ctx, TL_ERR_COMPILE, "%s: no @T.prim_func to compile",
                         filename ? filename : "<input>");
    goto fail;
  }
  if (opts->after_stage) emit_stage(ctx, opts, "parse", m);
  tl_primfunc *f = m->funcs[0];
  if (opts->flags & TL_COMPILE_FAST_MATH) {
    f->fast_math = true;
    if (tile->nfuncs > 0 && tile->funcs[0]) tile->funcs[0]->fast_math = true;
  }
  k = tl_rt_kernel_new();
  if (!k || !(k->name = strdup(f->name ? f->name : "main"))) {
    st = tl_context_fail(ctx, TL_ERR_NO_MEMORY, "out of memory");
    goto fail;
  }
  k->flags = opts->flags;

  /* signature and out_idx */
  if ((st = build_signature(ctx, f, &k->sig)) != TL_OK) goto fail;
  {
    char *err = NULL;
    bool ok = true;
    if (opts->out_idx_mode == TL_OUT_IDX_LIST) {
      if (opts->n_out_idx > 0 && !opts->out_idx) {
        st = tl_context_fail(ctx, TL_ERR_INVALID_ARGUMENT,
                             "tl_compile_options: n_out_idx is %zu but out_idx is NULL",
                             opts->n_out_idx);
        goto fail;
      }
      ok = tl_rt_set_out_idx(&k->sig, opts->out_idx, opts->n_out_idx, &err);
    } else if (opts->out_idx_mode == TL_OUT_IDX_FROM_FILE && f->has_out_idx) {
      ok = tl_rt_set_out_idx(&k->sig, f->out_idx, (size_t)(f->nout > 0 ? f->nout : 0), &err);
    } else if (opts->out_idx_mode != TL_OUT_IDX_NONE &&
               opts->out_idx_mode != TL_OUT_IDX_FROM_FILE) {
      st = tl_context_fail(ctx, TL_ERR_INVALID_ARGUMENT,
                           "tl_compile_options: unknown out_idx_mode %d", (int)opts->out_idx_mode);
      goto fail;
    }
    if (ok) ok = tl_rt_check_solvable(&k->sig, &err);
    if (!ok) {
      st = fail_compile_msg(ctx, opts->out_idx_mode == TL_OUT_IDX_LIST
                                     ? TL_ERR_INVALID_ARGUMENT : TL_ERR_UNSUPPORTED, err);
      goto fail;
    }
  }

  /* target */
  const char *tname = opts->target ? opts->target : tl_device_default_target();
  const tl_target *target = tl_target_lookup(tname);
  if (!target) {
    st = tl_context_fail(ctx, TL_ERR_INVALID_ARGUMENT,
                         "unknown target '%s' (expected %s)",
                         tname, tl_target_names());
    goto fail;
  }
  if (!(k->target = strdup(target->name ? target->name : tname))) {
    st = tl_context_fail(ctx, TL_ERR_NO_MEMORY, "out of memory");
    goto fail;
  }

  /* lower */
  tl_lower_options lo = {0};
  lo.target = k->target;
  lo.verify_each = opts->verify_each;
  stage_hook hook = {ctx, opts, tm, mono_ms(), false};
  lo.after_pass = after_pass;
  lo.user = &hook;
  if (!tl_lower_module(m, &lo, &ctx->diag)) {
    st = TL_ERR_COMPILE;
    goto fail;
  }
  f = m->funcs[0];
  if ((st = launch_exprs(ctx, f, &k->sig)) != TL_OK) goto fail;
  {
    align_scan a = {{scan_expr, scan_stmt, NULL, false, 0}, f, &k->sig};
    tl_visit_stmt(&a.v, f->body);
    if (a.v.too_deep) /* could not see every access: assume the widest vector */
      for (int i = 0; i < k->sig.nparams; i++)
        if (k->sig.params[i].is_tensor && k->sig.params[i].align < 16) k->sig.params[i].align = 16;
  }
  {
    tl_strbuf sb = {0};
    tl_print_module(&sb, m);
    k->simt_ir = tl_strbuf_take(&sb);
    if (!k->simt_ir) {
      st = tl_context_fail(ctx, TL_ERR_NO_MEMORY, "out of memory");
      goto fail;
    }
  }

  if (opts->stop_after == TL_STAGE_SIMT) {
    if (!(k->ptx = strdup("")) || !(k->llvm_ir = strdup(""))) {
      st = tl_context_fail(ctx, TL_ERR_NO_MEMORY, "out of memory");
      goto fail;
    }
    k->simt_module = m;
    k->tile_module = tile;
    *out = k;
    return TL_OK;
  }

  /* codegen */
  tl_codegen_result cg = {0};
  double tc = mono_ms();
  /* The optimised LLVM IR is printed only when kept (TL_COMPILE_KEEP_LLVM_IR)
   * or shown (after_stage): printing it costs ~10% of code generation. */
  tl_nvptx_options no = {0};
  no.skip_llvm_ir = !(opts->flags & TL_COMPILE_KEEP_LLVM_IR) && !opts->after_stage;
  bool cg_ok = tl_nvptx_emit_ex(m, target, &no, &ctx->diag, &cg);
  tc = mono_ms() - tc;
  tm->opt = cg.ms_opt;
  tm->ptx = cg.ms_emit;
  tm->llvm_ir = tc - cg.ms_opt - cg.ms_emit;
  if (tm->llvm_ir < 0) tm->llvm_ir = 0;
  if (!cg_ok) {
    tl_codegen_result_free(&cg);
    st = TL_ERR_COMPILE;
    goto fail;
  }
  k->ptx = cg.ptx;
  k->llvm_ir = cg.llvm_ir;
  if (opts->after_stage) {
    if (k->llvm_ir) opts->after_stage(opts->after_stage_user, "llvm", k->llvm_ir);
    if (k->ptx) opts->after_stage(opts->after_stage_user, "ptx", k->ptx);
  }
  if (!k->ptx) {
    free(k->llvm_ir);
    k->llvm_ir = NULL;
    st = tl_context_fail(ctx, TL_ERR_INTERNAL, "code generation returned no PTX");
    goto fail;
  }
  if (!k->llvm_ir && !(k->llvm_ir = strdup(""))) {
    st = tl_context_fail(ctx, TL_ERR_NO_MEMORY, "out of memory");
    goto fail;
  }
  k->simt_module = m;
  k->tile_module = tile;
  *out = k;
  return TL_OK;

fail:
  if (st == TL_OK) st = TL_ERR_INTERNAL;
  tl_kernel_destroy(k);
  tl_module_destroy(m);
  tl_module_destroy(tile);
  return st;
}

/* Completes tm (total since t0, other = the rest) and hands it to opts->times. */
static void finish_times(tl_compile_times *tm, double t0, const tl_compile_options *opts) {
  if (!opts || !opts->times) return;
  tm->total = mono_ms() - t0;
  tm->other = tm->total - (tm->parse + tm->tile_passes + tm->simt + tm->llvm_ir + tm->opt + tm->ptx);
  if (tm->other < 0) tm->other = 0;
  *opts->times = *tm;
}

tl_status tl_kernel_compile(tl_context *ctx, const char *source, size_t len,
                            const char *filename, const tl_define *defines, size_t ndefines,
                            const tl_compile_options *opts, tl_kernel **out) {
  if (!ctx) return TL_ERR_INVALID_ARGUMENT;
  tl_context_begin(ctx);
  if (out) *out = NULL;
  if (!source || !out || (ndefines > 0 && !defines))
    return tl_context_end(ctx, tl_context_fail(ctx, TL_ERR_INVALID_ARGUMENT,
                                               "tl_kernel_compile: %s is NULL",
                                               !source ? "source" : !out ? "out" : "defines"));
  double t0 = mono_ms();
  tl_compile_times tm = {0};
  tl_status st = tl_context_end(ctx, compile_impl(ctx, source, len, filename, defines, ndefines,
                                                  opts, &tm, out));
  ctx->diag.sources.len = 0; /* the registered texts do not outlive this call */
  finish_times(&tm, t0, opts);
  return st;
}

tl_status tl_kernel_compile_file(tl_context *ctx, const char *path, const tl_define *defines,
                                 size_t ndefines, const tl_compile_options *opts,
                                 tl_kernel **out) {
  if (!ctx) return TL_ERR_INVALID_ARGUMENT;
  double t0 = mono_ms();
  tl_compile_times tm = {0};
  tl_context_begin(ctx);
  if (out) *out = NULL;
  if (!path || !out || (ndefines > 0 && !defines))
    return tl_context_end(ctx, tl_context_fail(ctx, TL_ERR_INVALID_ARGUMENT,
                                               "tl_kernel_compile_file: %s is NULL",
                                               !path ? "path" : !out ? "out" : "defines"));
  FILE *fp = fopen(path, "rb");
  if (!fp)
    return tl_context_end(ctx, tl_context_fail(ctx, TL_ERR_IO, "cannot open '%s': %s", path,
                                               strerror(errno)));
  tl_strbuf text = {0};
  char chunk[8192];
  size_t n;
  while ((n = fread(chunk, 1, sizeof chunk, fp)) > 0) tl_strbuf_appendn(&text, chunk, n);
  bool rerr = ferror(fp);
  int e = errno;
  fclose(fp);
  if (rerr) {
    tl_strbuf_free(&text);
    return tl_context_end(ctx, tl_context_fail(ctx, TL_ERR_IO, "cannot read '%s': %s", path,
                                               strerror(e)));
  }
  if (text.oom) {
    tl_strbuf_free(&text);
    return tl_context_end(ctx, tl_context_fail(ctx, TL_ERR_NO_MEMORY, "out of memory reading '%s'",
                                               path));
  }
  size_t len = text.len;
  char *src = tl_strbuf_take(&text);
  if (!src)
    return tl_context_end(ctx, tl_context_fail(ctx, TL_ERR_NO_MEMORY, "out of memory"));
  tl_status st = compile_impl(ctx, src, len, path, defines, ndefines, opts, &tm, out);
  st = tl_context_end(ctx, st);
  /* diagnostics were rendered into last_error by tl_context_end; the source
   * text registered with the diag engine must not outlive this call */
  ctx->diag.sources.len = 0;
  free(src);
  finish_times(&tm, t0, opts);
  return st;
}

/* ------------------------------------------------------------ targets */
/* The table itself lives in lib/NVPTX/target.c (tl_target_lookup). */
bool tl_target_supported(const char *name) { return name && tl_target_lookup(name) != NULL; }

const char *tl_target_list(void) { return tl_target_names(); }
