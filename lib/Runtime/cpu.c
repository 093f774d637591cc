/* The CPU device of the C API (lib/Runtime): calls whose tensors are host
 * memory (kDLCPU) run on the CPU executors of lib/Interp instead of a GPU.
 *
 * Role: tl_kernel_call_on(TL_EXEC_CPU / TL_EXEC_REFERENCE), and
 * tl_kernel_call when every tensor argument is on kDLCPU.  Algorithm: the
 * arguments go through the same binder as a GPU call (tl_rt_bind_on with
 * cpu = true: count, kinds, dtypes, ndim, static and dynamic dims,
 * contiguity, non-null data, alignment; "cpu" is the expected device), which
 * also solves the dynamic symbols and the output shapes; out_idx outputs are
 * allocated with aligned_alloc (64 bytes) and, under
 * TL_COMPILE_POISON_OUTPUTS, filled with 0xFF bytes (NaN in every float
 * dtype) like the GPU path; then every parameter becomes a tl_interp_arg
 * (host pointer and actual shape, or the scalar's value) and the kernel's
 * kept IR runs: the lowered SIMT IR on tl_simt_exec (one thread at a time
 * in lockstep, race checks on) or the tile IR as parsed on tl_ref_eval.
 * Both are synchronous.  Their errors carry source locations; the kernel's
 * source text is registered with the diagnostics engine for the call so
 * that the message shows the line and a caret.  No hardware facts here
 * (the executors own the PTX semantics, docs/simt-ir.md). */
#include <stdlib.h>
#include <string.h>

#include "IR/analyze.h"
#include "Interp/interp.h"
#include "Runtime/kernel.h"
#include "Support/context.h"

/* A host output: the DLManagedTensor, its shape and its data in one block
 * of bookkeeping plus one aligned data allocation. */
typedef struct host_out {
  DLManagedTensor managed;
  void *data;
  int64_t shape[];
} host_out;

static void host_out_deleter(DLManagedTensor *self) {
  if (!self) return;
  host_out *o = self->manager_ctx;
  if (!o) return;
  free(o->data);
  free(o);
}

static host_out *host_out_new(const tl_rt_param *p, const int64_t *shape, size_t bytes, bool poison) {
  host_out *o = calloc(1, sizeof *o + sizeof(int64_t) * (size_t)(p->ndim + 1));
  if (!o) return NULL;
  size_t alloc = (bytes + 63) / 64 * 64;
  if (alloc == 0) alloc = 64;
  o->data = aligned_alloc(64, alloc);
  if (!o->data) {
    free(o);
    return NULL;
  }
  memset(o->data, poison ? 0xFF : 0, alloc);
  if (p->ndim > 0) memcpy(o->shape, shape, sizeof(int64_t) * (size_t)p->ndim);
  DLDevice dev = {.device_type = kDLCPU, .device_id = 0};
  tl_rt_dl_output(&o->managed, o->data, dev, p, o->shape, o, host_out_deleter);
  return o;
}

tl_status tl_rt_call_cpu(tl_context *ctx, tl_kernel *k, const tl_arg *args, size_t nargs, bool reference,
                         DLManagedTensor **outputs) {
  const tl_rt_sig *sig = &k->sig;
  if (!reference) { /* a kernel from the disk cache has only its tile IR */
    tl_status ls = tl_rt_kernel_lower_simt(ctx, k);
    if (ls != TL_OK) return ls;
  }
  const tl_module *m = reference ? k->tile_module : k->simt_module;
  const char *what = reference ? "the reference evaluator" : "the CPU SIMT executor";
  if (!m || m->nfuncs < 1)
    return tl_context_fail(ctx, TL_ERR_UNSUPPORTED,
                           "kernel '%s' has no %s IR to run on %s (it was not compiled from "
                           "source)",
                           k->name ? k->name : "?", reference ? "tile" : "SIMT", what);
  if (sig->nout > 0 && !outputs)
    return tl_context_fail(ctx, TL_ERR_INVALID_ARGUMENT,
                           "tl_kernel_call: kernel '%s' has %d out_idx output(s) but outputs is "
                           "NULL",
                           k->name, sig->nout);
  for (int j = 0; outputs && j < sig->nout; j++) outputs[j] = NULL;

  tl_rt_binding b;
  tl_simt_workspaces ws = {0}; /* the launch stages' shared T.alloc_global storage */
  tl_status st = tl_rt_bind_on(ctx, sig, args, nargs, true, &b);
  host_out **outs = NULL;
  tl_interp_arg *iargs = NULL;
  if (st != TL_OK) goto done;
  outs = calloc((size_t)sig->nout + 1, sizeof *outs);
  iargs = calloc((size_t)sig->nparams + 1, sizeof *iargs);
  if (!outs || !iargs) {
    st = tl_context_fail(ctx, TL_ERR_NO_MEMORY, "out of memory");
    goto done;
  }
  for (int j = 0; j < sig->nout; j++) {
    int pi = sig->out_idx[j];
    outs[j] =
        host_out_new(&sig->params[pi], b.out_shapes[pi], b.out_bytes[pi], (k->flags & TL_COMPILE_POISON_OUTPUTS) != 0);
    if (!outs[j]) {
      st = tl_context_fail(ctx, TL_ERR_NO_MEMORY, "out of memory allocating output '%s'", sig->params[pi].name);
      goto done;
    }
  }
  /* parameters in prim_func order */
  {
    size_t pos = 0;
    for (int pi = 0; pi < sig->nparams; pi++) {
      const tl_rt_param *p = &sig->params[pi];
      tl_interp_arg *ia = &iargs[pi];
      ia->is_tensor = p->is_tensor;
      if (p->is_output) {
        host_out *o = NULL;
        for (int j = 0; j < sig->nout; j++)
          if (sig->out_idx[j] == pi) o = outs[j];
        ia->data = o ? o->data : NULL;
        ia->ndim = p->ndim;
        for (int d = 0; d < p->ndim && d < 8; d++) ia->shape[d] = b.out_shapes[pi][d];
        continue;
      }
      const tl_arg *a = &args[pos++];
      if (p->is_tensor) {
        const DLTensor *t = a->v.tensor;
        if (p->ndim > 8) {
          st = tl_context_fail(ctx, TL_ERR_UNSUPPORTED, "argument '%s': the CPU executors take at most 8 dims, got %d",
                               p->name, p->ndim);
          goto done;
        }
        ia->data = (void *)(uintptr_t)b.slots[pi];
        ia->ndim = t ? t->ndim : p->ndim;
        ia->absent = !t;
        for (int d = 0; d < ia->ndim && d < 8; d++) { /* NULL t: an unused tensor of static shape */
          if (t) ia->shape[d] = t->shape[d];
          else if (!tl_rx_is_const(&p->dims[d].prog, &ia->shape[d])) ia->shape[d] = 0;
        }
      } else if (tl_dtype_is_float(p->dtype)) {
        ia->f = a->kind == TL_ARG_FLOAT ? a->v.f : (double)a->v.i;
      } else {
        ia->i = b.scalarv[pi];
      }
    }
  }
  /* register the kernel's text so that executor errors show their line */
  if (m->source && m->filename && !tl_diag_has_source(&ctx->diag, m->filename))
    tl_diag_add_source(&ctx->diag, m->filename, m->source, strlen(m->source));
  /* the tile IR runs as written (its T.Kernel scopes in order); the SIMT IR
   * has one function per launch stage (sig->nstages after the first), run
   * in order, a stage with an empty grid (a zero-size dynamic dim) not at all */
  for (int stage = 0; stage <= (reference ? 0 : sig->nstages); stage++) {
    bool ok = true, empty = stage == 0 && b.empty && !(reference && sig->nstages > 0);
    if (stage > 0 && stage < m->nfuncs) {
      unsigned grid[3], block, smem;
      const char *why = NULL;
      if (!tl_rt_stage_dims(sig, stage, b.symv, b.scalarv, grid, &block, &smem, &why)) {
        st = tl_context_fail(ctx, TL_ERR_INVALID_ARGUMENT, "kernel '%s', entry '%s': %s", k->name,
                             sig->stages[stage - 1].entry, why);
        goto done;
      }
      empty = !grid[0] || !grid[1] || !grid[2];
    } else if (stage >= m->nfuncs) {
      st = tl_context_fail(ctx, TL_ERR_INTERNAL, "kernel '%s': launch stage %d has no SIMT function", k->name, stage);
      goto done;
    }
    if (empty) continue; /* an empty launch (a zero-size dynamic dim) runs nothing */
    if (reference) {
      ok = tl_ref_eval(m, 0, iargs, sig->nparams, b.symv, sig->nsyms, &ctx->diag);
    } else {
      tl_simt_options so = {0};
      so.check_races = true;
      so.workspaces = &ws;                           /* the stages share the call's T.alloc_global buffers */
      const char *seed = getenv("TL_SCHEDULE_SEED"); /* tl-run --schedule-seed; docs/simt-ir.md */
      if (seed && *seed) so.schedule_seed = strtoull(seed, NULL, 0);
      so.progress = ctx->progress;
      so.progress_user = ctx->progress_user;
      ok = tl_simt_exec(m, stage, iargs, sig->nparams, b.symv, sig->nsyms, &so, &ctx->diag);
    }
    if (!ok || ctx->diag.errors > 0) {
      if (ctx->diag.errors == 0) tl_context_fail(ctx, TL_ERR_COMPILE, "kernel '%s' failed on %s", k->name, what);
      st = TL_ERR_COMPILE;
      goto done;
    }
  }
  for (int j = 0; j < sig->nout; j++) {
    outputs[j] = &outs[j]->managed;
    outs[j] = NULL;
  }

done:
  tl_simt_workspaces_free(&ws);
  if (outs)
    for (int j = 0; j < sig->nout; j++)
      if (outs[j]) host_out_deleter(&outs[j]->managed);
  free(outs);
  free(iargs);
  tl_rt_binding_free(&b);
  /* the registered text stays until tl_context_end has rendered the
   * message; tl_kernel_call_on drops it right after */
  return st;
}

/* ------------------------------------------------------- gemm FLOPs */
/* FLOPs of one launch of the kernel's first function, counted by the work
 * analysis (IR/analyze.c) over the dynamic dims given by name. */
tl_status tl_kernel_gemm_flops(tl_context *ctx, const tl_kernel *k, const char *const *names, const int64_t *values,
                               size_t n, double *flops) {
  if (!ctx) return TL_ERR_INVALID_ARGUMENT;
  tl_context_begin(ctx);
  if (!k || !flops || (n > 0 && (!names || !values)))
    return tl_context_end(ctx, tl_context_fail(ctx, TL_ERR_INVALID_ARGUMENT, "tl_kernel_gemm_flops: NULL argument"));
  *flops = 0;
  if (!k->tile_module || k->tile_module->nfuncs < 1)
    return tl_context_end(ctx, tl_context_fail(ctx, TL_ERR_UNSUPPORTED, "kernel '%s' has no tile IR", k->name));
  size_t nsources = ctx->diag.sources.len;
  const tl_module *m = k->tile_module;
  if (m->source && m->filename) (void)tl_diag_add_source(&ctx->diag, m->filename, m->source, strlen(m->source));
  tl_analyze_dims dims = {names, values, n};
  tl_analysis a = {0};
  bool ok = tl_analyze_func(m->funcs[0], &dims, false, &ctx->diag, &a);
  tl_status st = tl_context_end(ctx, ok ? TL_OK : TL_ERR_UNSUPPORTED);
  ctx->diag.sources.len = nsources;
  if (!ok) return st;
  double f = (double)a.flops;
  *flops = f;
  return st;
}
