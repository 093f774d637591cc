/* Kernel compilation (lib/Runtime): tl_kernel_compile and
 * tl_kernel_compile_file make a kernel object from TileLang source.
 *
 * Role: run the compiler driver (lib/Driver: parse → lower → PTX) and keep
 * what loading, binding and launching a call need.
 * Algorithm: after parsing, copy the first prim_func's signature (params,
 * dtypes, dims as integer programs over the T.dynamic symbols, out_idx from
 * the options or the file, normalized); after lowering, translate the
 * T.Kernel grid and thread expressions into integer programs, take the
 * dynamic shared memory size, and raise each tensor's required alignment
 * from its element size to the widest vector access the SIMT IR makes on it
 * (a load/store whose last index is a T.ramp, or whose value has lanes > 1;
 * docs/simt-ir.md).  The kernel takes the driver's products: the PTX, the
 * texts, and two IR modules for the CPU executors (cpu.c), the tile IR as
 * parsed and the lowered SIMT IR.
 * The disk cache (cache.h): after parsing and the signature, the key of the
 * bound tile IR and the options is looked up; a hit takes the PTX, SIMT
 * text and signature from the entry and skips lowering and code
 * generation (the SIMT module is lowered again only if the CPU SIMT
 * executor asks: tl_rt_kernel_lower_simt); a miss compiles and stores. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "Driver/backend.h"
#include "Driver/compiler.h"
#include "IR/out_idx.h"
#include "IR/visit.h"
#include "Runtime/cache.h"
#include "Runtime/kernel.h"
#include "Support/context.h"

/* ------------------------------------------------ alignment scan */
typedef struct align_scan {
  tl_visitor v; /* first: the callbacks get &a->v */
  const tl_primfunc *f;
  tl_rt_sig *sig;
} align_scan;

static void note_access(align_scan *a, const tl_buffer *buf, int n, tl_expr *const *idx, tl_dtype value_dtype) {
  if (!buf || buf->scope != TL_SCOPE_GLOBAL) return;
  int lanes = value_dtype.lanes > 1 ? value_dtype.lanes : 1;
  if (n > 0 && idx[n - 1] && idx[n - 1]->kind == TL_EXPR_RAMP && idx[n - 1]->dtype.lanes > lanes)
    lanes = idx[n - 1]->dtype.lanes;
  if (lanes <= 1) return;
  for (int i = 0; i < a->f->nparams; i++) {
    const tl_param *p = &a->f->params[i];
    if (p->kind != TL_PARAM_TENSOR || !p->buffer) continue;
    if (p->buffer != buf &&
        !(p->buffer->name == buf->name || (p->buffer->name && buf->name && !strcmp(p->buffer->name, buf->name))))
      continue;
    int bytes = tl_dtype_bytes(buf->dtype) * lanes;
    if (bytes > a->sig->params[i].align) a->sig->params[i].align = bytes;
  }
}

/* T.ptx_cp_async(dst, dst_off, src, src_off, bytes, pred) reads `bytes`
 * bytes of the global tensor src at an address aligned to `bytes`
 * (docs/simt-ir.md): src's base pointer must be aligned that much. */
static void note_cp_async(align_scan *a, const tl_expr *e) {
  int64_t bytes;
  if (e->u.call.op != TL_INTRIN_PTX_CP_ASYNC || e->u.call.n != 6 || !e->u.call.args[2] ||
      e->u.call.args[2]->kind != TL_EXPR_BUFFER || !tl_expr_is_const_int(e->u.call.args[4], &bytes))
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
  if (e->u.call.op != TL_INTRIN_PTX_ATOMIC_ADD || e->u.call.n != 4 || !e->u.call.args[0] ||
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

static tl_status translate(tl_context *ctx, const tl_expr *e, const var_tables *t, tl_rx_prog *out, const char *what) {
  char *err = NULL;
  if (tl_rx_translate(e, t->syms, t->nsyms, t->scalars, t->scalar_param, t->nscalars, out, &err)) return TL_OK;
  if (!err) return tl_context_fail(ctx, TL_ERR_NO_MEMORY, "out of memory");
  tl_status s = tl_context_fail(ctx, TL_ERR_UNSUPPORTED, "%s: %s", what, err);
  free(err);
  return s;
}

/* T.StridedTensor's strides into p->strides: each a constant or
 * one dynamic symbol, which the call binds from the tensor's strides. */
static tl_status take_strides(tl_context *ctx, const tl_buffer *buf, const var_tables *t, tl_rt_param *p) {
  if (!(p->strides = calloc((size_t)buf->ndim + 1, sizeof *p->strides)))
    return tl_context_fail(ctx, TL_ERR_NO_MEMORY, "out of memory");
  tl_status st = TL_OK;
  for (int d = 0; d < buf->ndim && st == TL_OK; d++) {
    char what[160];
    snprintf(what, sizeof what, "parameter '%s' stride %d", p->name, d);
    st = translate(ctx, buf->strides[d], t, &p->strides[d].prog, what);
    if (st == TL_OK && !tl_rx_is_const(&p->strides[d].prog, NULL) && !tl_rx_is_sym(&p->strides[d].prog, NULL))
      st = tl_context_fail(ctx, TL_ERR_UNSUPPORTED,
                           "%s: a stride must be a constant or one T.dynamic symbol (an expression of symbols "
                           "is not supported yet)",
                           what);
  }
  return st;
}

static tl_status build_signature(tl_context *ctx, const tl_primfunc *f, tl_rt_sig *sig) {
  var_tables t;
  if (!tables_init(&t, f)) return tl_context_fail(ctx, TL_ERR_NO_MEMORY, "out of memory");
  tl_status st = TL_OK;
  sig->params = calloc((size_t)f->nparams + 1, sizeof *sig->params);
  sig->sym_names = calloc((size_t)f->ndynamic + 1, sizeof(char *));
  sig->sym_int64 = calloc((size_t)f->ndynamic + 1, sizeof(bool));
  if (!sig->params || !sig->sym_names || !sig->sym_int64) {
    st = tl_context_fail(ctx, TL_ERR_NO_MEMORY, "out of memory");
    goto out;
  }
  sig->nparams = f->nparams;
  sig->nsyms = f->ndynamic;
  for (int s = 0; s < f->ndynamic; s++) sig->sym_int64[s] = f->dynamic[s]->dtype.bits == 64;
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
            st =
                tl_context_fail(ctx, TL_ERR_UNSUPPORTED, "%s: a tensor dim may not depend on a scalar parameter", what);
      }
      if (st == TL_OK && buf->strides) st = take_strides(ctx, buf, &t, p);
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

/* The grid, threads and shared memory of SIMT function f (one T.Kernel). */
static tl_status launch_exprs(tl_context *ctx, const tl_primfunc *f, int *ngrid, tl_rx_prog grid[3],
                              tl_rx_prog *threads, int64_t *smem_bytes) {
  const tl_stmt *ks = tl_ir_find_kernel(f->body);
  if (!ks) { /* located at the prim_func (the fuzzer found it unlocated: test/fuzz/kept) */
    tl_error(&ctx->diag, f->loc, "prim_func '%s' has no T.Kernel scope to launch", f->name ? f->name : "main");
    return TL_ERR_COMPILE;
  }
  var_tables t;
  if (!tables_init(&t, f)) return tl_context_fail(ctx, TL_ERR_NO_MEMORY, "out of memory");
  tl_status st = TL_OK;
  static const char *const what[3] = {"T.Kernel grid x", "T.Kernel grid y", "T.Kernel grid z"};
  *ngrid = ks->u.kernel.ngrid < 1 ? 1 : ks->u.kernel.ngrid > 3 ? 3 : ks->u.kernel.ngrid;
  for (int g = 0; g < 3 && st == TL_OK; g++) {
    if (g < ks->u.kernel.ngrid && ks->u.kernel.grid[g])
      st = translate(ctx, ks->u.kernel.grid[g], &t, &grid[g], what[g]);
    else if (!tl_rx_const(1, &grid[g])) st = tl_context_fail(ctx, TL_ERR_NO_MEMORY, "out of memory");
  }
  if (st == TL_OK) {
    if (ks->u.kernel.threads) st = translate(ctx, ks->u.kernel.threads, &t, threads, "T.Kernel threads");
    else if (!tl_rx_const(128, threads)) st = tl_context_fail(ctx, TL_ERR_NO_MEMORY, "out of memory");
  }
  *smem_bytes = f->smem_bytes;
  tables_free(&t);
  return st;
}

/* ------------------------------------------------ the kernel */
static tl_status fail_compile_msg(tl_context *ctx, tl_status s, char *err) {
  tl_status r = err ? tl_context_fail(ctx, s, "%s", err) : tl_context_fail(ctx, TL_ERR_NO_MEMORY, "out of memory");
  free(err);
  return r;
}

/* ------------------------------------------------ unused tensors */
/* Marks the tensor parameters of tile IR function f that its body never
 * names (no load, store, region operand or buffer reference) and whose dims
 * are all constants (no dynamic symbol to bind from them): sig's unused. */
typedef struct use_scan {
  tl_buffer_visitor bv; /* first */
  const tl_primfunc *f;
  bool *used;
} use_scan;

static void use_buffer(tl_buffer_visitor *bv, const tl_buffer *b) {
  use_scan *u = (use_scan *)bv;
  for (int i = 0; b && i < u->f->nparams; i++) {
    const tl_buffer *pb = u->f->params[i].buffer;
    if (u->f->params[i].kind == TL_PARAM_TENSOR && pb &&
        (pb == b || pb->name == b->name || (pb->name && b->name && !strcmp(pb->name, b->name))))
      u->used[i] = true;
  }
}

static tl_status mark_unused(tl_context *ctx, const tl_primfunc *f, tl_rt_sig *sig) {
  use_scan u = {{.buffer = use_buffer}, f, calloc((size_t)f->nparams + 1, sizeof(bool))};
  if (!u.used) return tl_context_fail(ctx, TL_ERR_NO_MEMORY, "out of memory");
  bool seen_all = tl_visit_buffers(&u.bv, f->body);
  for (int i = 0; i < f->nparams && i < sig->nparams && seen_all; i++) {
    tl_rt_param *p = &sig->params[i];
    bool static_shape = true;
    for (int d = 0; d < p->ndim; d++) static_shape &= tl_rx_is_const(&p->dims[d].prog, NULL);
    p->unused = p->is_tensor && !u.used[i] && static_shape;
  }
  free(u.used);
  return TL_OK;
}

/* The signature and out_idx of tile IR function f into k. */
static tl_status take_signature(tl_context *ctx, const tl_compile_options *opts, const tl_primfunc *f, tl_kernel *k) {
  tl_status st = build_signature(ctx, f, &k->sig);
  if (st == TL_OK) st = mark_unused(ctx, f, &k->sig);
  if (st != TL_OK) return st;
  char *err = NULL;
  bool ok = true;
  int bad_param = -1;
  if (opts->out_idx_mode == TL_OUT_IDX_LIST) {
    if (opts->n_out_idx > 0 && !opts->out_idx)
      return tl_context_fail(ctx, TL_ERR_INVALID_ARGUMENT, "tl_compile_options: n_out_idx is %zu but out_idx is NULL",
                             opts->n_out_idx);
    ok = tl_rt_set_out_idx(&k->sig, opts->out_idx, opts->n_out_idx, &err, &bad_param);
  } else if (opts->out_idx_mode == TL_OUT_IDX_FROM_FILE && f->has_out_idx) {
    ok = tl_rt_set_out_idx(&k->sig, f->out_idx, (size_t)(f->nout > 0 ? f->nout : 0), &err, &bad_param);
  } else if (opts->out_idx_mode != TL_OUT_IDX_NONE && opts->out_idx_mode != TL_OUT_IDX_FROM_FILE) {
    return tl_context_fail(ctx, TL_ERR_INVALID_ARGUMENT, "tl_compile_options: unknown out_idx_mode %d",
                           (int)opts->out_idx_mode);
  }
  if (ok) ok = tl_rt_check_solvable(&k->sig, &err, &bad_param);
  if (!ok && err && bad_param >= 0 && bad_param < f->nparams) { /* at the parameter's declaration */
    tl_loc at = tl_out_idx_param_of(&f->params[bad_param]).loc;
    if (at.file) {
      tl_error(&ctx->diag, at, "%s", err);
      free(err);
      return opts->out_idx_mode == TL_OUT_IDX_LIST ? TL_ERR_INVALID_ARGUMENT : TL_ERR_UNSUPPORTED;
    }
  }
  if (!ok)
    return fail_compile_msg(ctx, opts->out_idx_mode == TL_OUT_IDX_LIST ? TL_ERR_INVALID_ARGUMENT : TL_ERR_UNSUPPORTED,
                            err);
  return TL_OK;
}

/* Launch expressions and tensor alignments of the lowered function f. */
/* The tensor maps of SIMT function f (tl_tma_collect) into sig. */
static tl_status take_tma_maps(tl_context *ctx, const tl_primfunc *f, tl_rt_sig *sig) {
  tl_tma_map *maps = NULL;
  tl_loc loc;
  char msg[256];
  int n = tl_tma_collect(f, &maps, &loc, msg, sizeof msg);
  if (n < 0)
    return tl_context_fail(ctx, TL_ERR_INVALID_ARGUMENT, "%s:%d:%d: error: %s", loc.file ? loc.file : "?", loc.line,
                           loc.col, msg);
  if (n > 0 && !(sig->tma = calloc((size_t)n, sizeof *sig->tma))) {
    free(maps);
    return tl_context_fail(ctx, TL_ERR_NO_MEMORY, "out of memory");
  }
  for (int i = 0; i < n; i++) {
    sig->tma[i].param = maps[i].param;
    sig->tma[i].rank = maps[i].rank;
    sig->tma[i].swizzle = maps[i].swizzle;
    for (int d = 0; d < maps[i].rank; d++) sig->tma[i].box[d] = (uint32_t)maps[i].box[d];
  }
  sig->ntma = n;
  free(maps);
  return TL_OK;
}

/* The vector alignments f's accesses need of sig's tensors. */
static void take_alignments(const tl_primfunc *f, tl_rt_sig *sig) {
  align_scan a = {{scan_expr, scan_stmt, NULL, false, 0}, f, sig};
  tl_visit_stmt(&a.v, f->body);
  if (a.v.too_deep) /* could not see every access: assume the widest vector */
    for (int i = 0; i < sig->nparams; i++)
      if (sig->params[i].is_tensor && sig->params[i].align < 16) sig->params[i].align = 16;
}

/* Stages 1.. of the launch sequence whose first stage is m->funcs[0]
 * (lib/Lower/split_kernels.c) into sig->stages: their entries and launch
 * expressions.  The stages share one kernel ABI: none may take tensor maps,
 * and each has stage 0's workspaces (the T.alloc_global buffers, zeroed once
 * per call); anything else is a located error. */
static tl_status take_stages(tl_context *ctx, const tl_module *m, tl_kernel *k) {
  int n = 0;
  while (1 + n < m->nfuncs && m->funcs[1 + n] && m->funcs[1 + n]->stage == n + 1) n++;
  if (n == 0) return TL_OK;
  if (!(k->sig.stages = calloc((size_t)n, sizeof *k->sig.stages)))
    return tl_context_fail(ctx, TL_ERR_NO_MEMORY, "out of memory");
  k->sig.nstages = n;
  for (int i = 0; i <= n; i++) {
    const tl_primfunc *f = m->funcs[i];
    const tl_stmt *ks = tl_ir_find_kernel(f->body);
    tl_tma_map *maps = NULL;
    tl_loc at;
    char msg[256];
    int nmaps = tl_tma_collect(f, &maps, &at, msg, sizeof msg);
    free(maps);
    /* the workspaces: the T.alloc_global buffers every stage has (split_kernels.c), the same as stage 0's */
    tl_buffer *wsb[TL_WORKSPACE_MAX];
    int nws = tl_workspace_collect(f, wsb, TL_WORKSPACE_MAX);
    bool same_ws = nws == k->sig.nws;
    for (int w = 0; same_ws && w < nws; w++)
      same_ws = tl_workspace_bytes(wsb[w]) == k->sig.ws_bytes[w] && wsb[w]->zero_per_launch && k->sig.ws_zero[w];
    if (!same_ws || nmaps != 0) {
      tl_error(&ctx->diag, ks ? ks->loc : f->loc,
               "this T.Kernel of a prim_func with several T.Kernel scopes needs tensor maps or a stream-K "
               "workspace, which such a prim_func's stages cannot have yet");
      return TL_ERR_UNSUPPORTED;
    }
    if (i == 0) continue;
    tl_rt_stage *s = &k->sig.stages[i - 1];
    if (!(s->entry = strdup(f->name ? f->name : "main")))
      return tl_context_fail(ctx, TL_ERR_NO_MEMORY, "out of memory");
    tl_status st = launch_exprs(ctx, f, &s->ngrid, s->grid, &s->threads, &s->smem_bytes);
    if (st != TL_OK) return st;
    take_alignments(f, &k->sig);
  }
  return TL_OK;
}

static tl_status take_launch(tl_context *ctx, const tl_module *m, tl_kernel *k) {
  const tl_primfunc *f = m->funcs[0];
  tl_status st = launch_exprs(ctx, f, &k->sig.ngrid, k->sig.grid, &k->sig.threads, &k->sig.smem_bytes);
  if (st != TL_OK) return st;
  if ((st = take_tma_maps(ctx, f, &k->sig)) != TL_OK) return st;
  tl_buffer *wsb[TL_WORKSPACE_MAX]; /* kernel workspaces (stream-K, T.alloc_global), after the maps */
  k->sig.nws = tl_workspace_collect(f, wsb, TL_WORKSPACE_MAX);
  for (int i = 0; i < k->sig.nws; i++) {
    k->sig.ws_bytes[i] = tl_workspace_bytes(wsb[i]);
    k->sig.ws_zero[i] = wsb[i]->zero_per_launch;
  }
  take_alignments(f, &k->sig);
  return take_stages(ctx, m, k);
}

/* ------------------------------------------------ the disk cache */
/* The cache of this compile (cache.h): dir NULL when not consulted. */
typedef struct cache_use {
  char *dir;
  tl_cache_key key;
  int warnings; /* ctx's warnings before lowering: more after it, no store */
} cache_use;

/* Whether opts let the cache stand in for the stages (tl_cache_use). */
static bool cache_applies(const tl_compilation *c) {
  const tl_compile_options *opts = c->opts;
  return opts->cache != TL_CACHE_USE_OFF && opts->stop_after == TL_STAGE_PTX && !opts->after_stage &&
         !(opts->flags & TL_COMPILE_KEEP_LLVM_IR) && !c->remarks;
}

/* The key of the parsed compilation c (cache.h lists what it covers). */
static bool cache_key(const tl_compilation *c, tl_cache_key *key) {
  const tl_compile_options *opts = c->opts;
  tl_strbuf ir = {0};
  tl_print_module(&ir, c->tile);
  if (ir.oom) {
    tl_strbuf_free(&ir);
    return false;
  }
  char compiler[800], llvm[64], libdevice[800];
  tl_cache_compiler_identity(compiler, sizeof compiler);
  tl_cache_llvm_identity(llvm, sizeof llvm);
  tl_cache_file_identity(tl_backend_for(c->target)->support_file(), libdevice, sizeof libdevice);
  tl_cache_inputs in = {0};
  in.tile_ir = ir.data;
  in.target = c->target_name;
  in.flags = opts->flags & ~(unsigned)TL_COMPILE_POISON_OUTPUTS; /* a call-time flag */
  in.out_idx_mode = (int)opts->out_idx_mode;
  in.out_idx = opts->out_idx_mode == TL_OUT_IDX_LIST ? opts->out_idx : NULL;
  in.n_out_idx = opts->out_idx_mode == TL_OUT_IDX_LIST ? opts->n_out_idx : 0;
  in.kernel = opts->kernel;
  in.compiler = compiler;
  in.llvm = llvm;
  in.libdevice = libdevice;
  in.passes = getenv("TL_LLVM_PASSES");
  in.sms = opts->sms;
  in.flags_false = opts->flags_false;
  if (!opts->no_line_info) {
    in.line_file = c->tile->filename ? c->tile->filename : "";
    in.line_source = c->tile->source ? c->tile->source : "";
  }
  bool ok = tl_cache_key_of(&in, key);
  tl_strbuf_free(&ir);
  return ok;
}

/* Looks the parsed compilation up: true on a hit, with k's PTX, SIMT text,
 * target and signature taken from the entry (its tile module stays c's). */
static bool cache_lookup(tl_context *ctx, tl_compilation *c, cache_use *cu, tl_kernel *k) {
  k->cache_result = TL_CACHE_RESULT_OFF;
  if (!cache_applies(c) || !(cu->dir = tl_cache_dir()) || !cache_key(c, &cu->key)) {
    free(cu->dir);
    cu->dir = NULL;
    return false;
  }
  tl_cache_key_hex(&cu->key, k->cache_key);
  k->cache_result = TL_CACHE_RESULT_MISS;
  if (c->opts->cache == TL_CACHE_USE_REFRESH) return false;
  tl_kernel *hit = tl_rt_kernel_new();
  const char *why = NULL;
  tl_cache_lookup r = hit ? tl_cache_load(cu->dir, &cu->key, hit, &why) : TL_CACHE_LOOKUP_MISS;
  if (r == TL_CACHE_LOOKUP_CORRUPT) {
    k->cache_result = TL_CACHE_RESULT_CORRUPT;
    tl_diag_report(&ctx->diag, TL_DIAG_WARNING, TL_LOC_NONE,
                   "kernel cache entry '%s/%s.tlk' is unusable (%s): recompiling", cu->dir, k->cache_key, why);
  }
  if (r == TL_CACHE_LOOKUP_HIT) {
    k->cache_result = TL_CACHE_RESULT_HIT;
    tl_rt_sig_free(&k->sig);
    k->sig = hit->sig;
    memset(&hit->sig, 0, sizeof hit->sig);
    free(k->name);
    k->name = hit->name, k->target = hit->target, k->ptx = hit->ptx;
    k->simt_ir = hit->simt_ir, k->llvm_ir = hit->llvm_ir;
    hit->name = hit->target = hit->ptx = hit->simt_ir = hit->llvm_ir = NULL;
  }
  tl_kernel_destroy(hit);
  cu->warnings = ctx->diag.warnings;
  return r == TL_CACHE_LOOKUP_HIT;
}

/* Runs the driver's stages on source, taking the signature between them,
 * and moves the products into a new kernel *out. */
static tl_status compile_impl(tl_context *ctx, tl_compilation *c, const char *source, size_t len, const char *filename,
                              const tl_define *defines, size_t ndefines, tl_kernel **out) {
  const tl_compile_options *opts = c->opts;
  cache_use cu = {0};
  if (opts && (opts->flags & opts->flags_false))
    return tl_context_fail(ctx, TL_ERR_INVALID_ARGUMENT,
                           "tl_compile_options: flags and flags_false both have 0x%x (a pass config is True or False)",
                           opts->flags & opts->flags_false);
  tl_status st = tl_compiler_parse(ctx, c, source, len, filename, defines, ndefines);
  if (st != TL_OK) return st;
  const tl_primfunc *f = c->tile->funcs[0];
  tl_kernel *k = tl_rt_kernel_new();
  if (!k || !(k->name = strdup(f->name ? f->name : "main"))) {
    st = tl_context_fail(ctx, TL_ERR_NO_MEMORY, "out of memory");
    goto fail;
  }
  k->flags = opts->flags;
  k->sms = opts->sms;
  if ((st = take_signature(ctx, opts, f, k)) != TL_OK) goto fail;
  if (cache_lookup(ctx, c, &cu, k)) {
    free(cu.dir);
    k->tile_module = c->tile;
    c->tile = NULL;
    *out = k;
    return TL_OK;
  }
  if ((st = tl_compiler_lower(ctx, c)) != TL_OK) goto fail;
  if (!(k->target = strdup(c->target->name))) {
    st = tl_context_fail(ctx, TL_ERR_NO_MEMORY, "out of memory");
    goto fail;
  }
  if ((st = take_launch(ctx, c->simt, k)) != TL_OK) goto fail;
  if (opts->stop_after != TL_STAGE_SIMT && (st = tl_compiler_codegen(ctx, c)) != TL_OK) goto fail;
  k->ptx = c->ptx ? c->ptx : strdup("");
  k->llvm_ir = c->llvm_ir ? c->llvm_ir : strdup("");
  k->simt_ir = c->simt_ir;
  k->tile_module = c->tile;
  k->simt_module = c->simt;
  c->ptx = c->llvm_ir = c->simt_ir = NULL;
  c->tile = c->simt = NULL;
  if (!k->ptx || !k->llvm_ir) {
    st = tl_context_fail(ctx, TL_ERR_NO_MEMORY, "out of memory");
    goto fail;
  }
  if (cu.dir && ctx->diag.warnings == cu.warnings) /* best-effort: a failed store warns once, no error */
    tl_cache_store_or_warn(ctx, cu.dir, &cu.key, k, tl_cache_max_bytes());
  free(cu.dir);
  *out = k;
  return TL_OK;

fail:
  free(cu.dir);
  if (st == TL_OK) st = TL_ERR_INTERNAL;
  tl_kernel_destroy(k);
  return st;
}

/* The SM count a persistent grid plans for: the caller's opts, or, when
 * they leave sms 0 and compile for device 0's own target (the default
 * target, or that target named), a copy in *buf with sms = device 0's
 * multiprocessor count where it differs from the target's (a part with fewer
 * SMs than the target's largest would otherwise run the extra blocks as a
 * second wave).  Without a driver, opts unchanged. */
static const tl_compile_options *with_device_sms(const tl_compile_options *opts, tl_compile_options *buf) {
  if (opts && opts->sms) return opts;
  const char *dev = tl_device_default_target(), *name = tl_target_resolve(opts ? opts->target : NULL);
  const tl_target *t = tl_target_lookup(name);
  if (!t || t->sms <= 0 || strcmp(name, dev) != 0) return opts;
  int n = tl_driver_sm_count();
  if (n <= 0 || n == t->sms) return opts;
  *buf = opts ? *opts : (tl_compile_options){0};
  buf->sms = n;
  return buf;
}

tl_status tl_kernel_compile(tl_context *ctx, const char *source, size_t len, const char *filename,
                            const tl_define *defines, size_t ndefines, const tl_compile_options *opts,
                            tl_kernel **out) {
  if (!ctx) return TL_ERR_INVALID_ARGUMENT;
  tl_compile_options dev_opts;
  opts = with_device_sms(opts, &dev_opts);
  tl_context_begin(ctx);
  if (out) *out = NULL;
  if (!source || !out || (ndefines > 0 && !defines))
    return tl_context_null_arg(ctx, "tl_kernel_compile", !source ? "source" : !out ? "out" : "defines");
  tl_compilation c;
  tl_compilation_init(&c, opts);
  c.target_name = tl_target_resolve(c.opts->target); /* "auto": the GPU's, handed down */
  c.remarks = c.opts->remarks;
  tl_status st = tl_context_end(ctx, compile_impl(ctx, &c, source, len, filename, defines, ndefines, out));
  ctx->diag.sources.len = 0; /* the registered texts do not outlive this call */
  tl_compilation_report_times(&c);
  tl_compilation_free(&c);
  return st;
}

tl_status tl_kernel_compile_file(tl_context *ctx, const char *path, const tl_define *defines, size_t ndefines,
                                 const tl_compile_options *opts, tl_kernel **out) {
  if (!ctx) return TL_ERR_INVALID_ARGUMENT;
  tl_compile_options dev_opts;
  opts = with_device_sms(opts, &dev_opts);
  tl_compilation c;
  tl_compilation_init(&c, opts);
  c.target_name = tl_target_resolve(c.opts->target); /* "auto": the GPU's, handed down */
  c.remarks = c.opts->remarks;
  tl_context_begin(ctx);
  if (out) *out = NULL;
  if (!path || !out || (ndefines > 0 && !defines))
    return tl_context_null_arg(ctx, "tl_kernel_compile_file", !path ? "path" : !out ? "out" : "defines");
  char *src = NULL;
  size_t len = 0;
  tl_status st = tl_compiler_read_file(ctx, path, &src, &len);
  if (st == TL_OK) st = compile_impl(ctx, &c, src, len, path, defines, ndefines, out);
  st = tl_context_end(ctx, st);
  /* diagnostics were rendered into last_error by tl_context_end; the source
   * text registered with the diag engine must not outlive this call */
  ctx->diag.sources.len = 0;
  free(src);
  if (src) tl_compilation_report_times(&c);
  tl_compilation_free(&c);
  return st;
}

tl_status tl_rt_kernel_lower_simt(tl_context *ctx, tl_kernel *k) {
  tl_status st = TL_OK;
  pthread_mutex_lock(&k->mu);
  if (!k->simt_module && k->tile_module) {
    tl_compile_options o = {0};
    o.target = k->target;
    o.sms = k->sms; /* the persistent grid of the PTX's, not the target's default */
    tl_compilation c;
    tl_compilation_init(&c, &o);
    c.tile = k->tile_module; /* borrowed: lowering works on its copy */
    st = tl_compiler_lower(ctx, &c);
    c.tile = NULL;
    if (st == TL_OK) k->simt_module = c.simt, c.simt = NULL;
    tl_compilation_free(&c);
  }
  pthread_mutex_unlock(&k->mu);
  return st;
}
