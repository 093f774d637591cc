/* Kernel objects (lib/Runtime): lifetime, text getters, parameter
 * introspection and out_idx over a kernel's signature (the rule itself is
 * lib/IR/out_idx.c's: range, negative indices, duplicates, scalar and
 * T.StridedTensor parameters). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "Runtime/kernel.h"

#include "IR/out_idx.h"
#include "Support/context.h"

tl_kernel *tl_rt_kernel_new(void) {
  tl_kernel *k = calloc(1, sizeof *k);
  if (!k) return NULL;
  if (pthread_mutex_init(&k->mu, NULL) != 0) {
    free(k);
    return NULL;
  }
  return k;
}

void tl_rt_sig_free(tl_rt_sig *s) {
  for (int i = 0; i < s->nparams && s->params; i++) {
    tl_rt_param *p = &s->params[i];
    free(p->name);
    for (int d = 0; d < p->ndim && p->dims; d++) tl_rx_free(&p->dims[d].prog);
    free(p->dims);
    for (int d = 0; d < p->ndim && p->strides; d++) tl_rx_free(&p->strides[d].prog);
    free(p->strides);
  }
  free(s->params);
  free(s->tma);
  for (int i = 0; i < s->nsyms && s->sym_names; i++) free(s->sym_names[i]);
  free(s->sym_names);
  free(s->sym_int64);
  free(s->out_idx);
  for (int g = 0; g < 3; g++) tl_rx_free(&s->grid[g]);
  tl_rx_free(&s->threads);
  for (int i = 0; i < s->nstages && s->stages; i++) {
    free(s->stages[i].entry);
    for (int g = 0; g < 3; g++) tl_rx_free(&s->stages[i].grid[g]);
    tl_rx_free(&s->stages[i].threads);
  }
  free(s->stages);
  memset(s, 0, sizeof *s);
}

bool tl_rt_stage_dims(const tl_rt_sig *sig, int st, const int64_t *symv, const int64_t *scalarv, unsigned grid[3],
                      unsigned *block, unsigned *smem, const char **why) {
  const tl_rt_stage *s = &sig->stages[st - 1];
  int64_t v;
  for (int g = 0; g < 3; g++) {
    if (!tl_rx_eval(&s->grid[g], symv, scalarv, &v, why)) return false;
    if (v < 0 || v > UINT32_MAX) return *why = "a grid dimension out of range", false;
    grid[g] = (unsigned)v;
  }
  if (!tl_rx_eval(&s->threads, symv, scalarv, &v, why)) return false;
  if (v < 1 || v > 1024) return *why = "threads out of range (1 to 1024)", false;
  *block = (unsigned)v;
  if (s->smem_bytes < 0 || s->smem_bytes > UINT32_MAX) return *why = "shared memory out of range", false;
  *smem = (unsigned)s->smem_bytes;
  return true;
}

bool tl_rt_normalize_out_idx(const tl_rt_sig *sig, const int *idx, size_t n, int *norm, char **err, int *bad_param) {
  *err = NULL;
  *bad_param = -1;
  tl_out_idx_param *ps = calloc((size_t)sig->nparams + 1, sizeof *ps);
  int64_t *given = calloc(n + 1, sizeof *given);
  bool ok = ps && given;
  for (int i = 0; ok && i < sig->nparams; i++) {
    const tl_rt_param *p = &sig->params[i];
    ps[i] = (tl_out_idx_param){p->name,
                               !p->is_tensor ? TL_OUT_IDX_SCALAR
                               : p->strides  ? TL_OUT_IDX_STRIDED
                                             : TL_OUT_IDX_TENSOR,
                               TL_LOC_NONE};
  }
  for (size_t j = 0; ok && j < n; j++) given[j] = idx[j];
  size_t bad = 0;
  char msg[320];
  if (ok && !tl_out_idx_normalize(ps, sig->nparams, given, n, norm, &bad, msg, sizeof msg)) {
    int64_t w = given[bad] < 0 ? given[bad] + sig->nparams : given[bad];
    if (w >= 0 && w < sig->nparams) *bad_param = (int)w;
    *err = strdup(msg);
    ok = false;
  }
  free(ps);
  free(given);
  return ok;
}

bool tl_rt_set_out_idx(tl_rt_sig *sig, const int *idx, size_t n, char **err, int *bad_param) {
  *err = NULL;
  *bad_param = -1;
  free(sig->out_idx);
  sig->out_idx = NULL;
  sig->nout = 0;
  for (int i = 0; i < sig->nparams; i++) sig->params[i].is_output = false;
  if (n == 0) return true;
  int *norm = malloc(sizeof(int) * n);
  if (!norm || !tl_rt_normalize_out_idx(sig, idx, n, norm, err, bad_param)) {
    free(norm);
    return false;
  }
  for (size_t j = 0; j < n; j++) sig->params[norm[j]].is_output = true;
  sig->out_idx = norm;
  sig->nout = (int)n;
  return true;
}

bool tl_rt_check_solvable(const tl_rt_sig *sig, char **err, int *bad_param) {
  *err = NULL;
  if (bad_param) *bad_param = -1;
  bool *bound = calloc((size_t)sig->nsyms + 1, sizeof(bool));
  if (!bound) return false;
  for (int i = 0; i < sig->nparams; i++) {
    const tl_rt_param *p = &sig->params[i];
    if (!p->is_tensor || p->is_output) continue;
    for (int d = 0; d < p->ndim; d++) {
      int s;
      if (tl_rx_is_sym(&p->dims[d].prog, &s)) bound[s] = true;
      if (p->strides && tl_rx_is_sym(&p->strides[d].prog, &s)) bound[s] = true;
    }
  }
  bool ok = true;
  for (int i = 0; i < sig->nparams && ok; i++) {
    const tl_rt_param *p = &sig->params[i];
    if (!p->is_tensor || !p->is_output) continue;
    for (int d = 0; d < p->ndim && ok; d++) {
      const tl_rx_prog *pr = &p->dims[d].prog;
      for (int o = 0; o < pr->n; o++)
        if (pr->ops[o].kind == TL_RX_SYM && !bound[pr->ops[o].index]) {
          char buf[512];
          snprintf(buf, sizeof buf,
                   "out_idx: output '%s' dim %d uses dynamic dim '%s', which no input tensor "
                   "binds (pass '%s' as an input: out_idx none or another out_idx)",
                   p->name, d, sig->sym_names[pr->ops[o].index], p->name);
          *err = strdup(buf);
          if (bad_param) *bad_param = i;
          ok = false;
          break;
        }
    }
  }
  free(bound);
  return ok;
}

void tl_kernel_destroy(tl_kernel *k) {
  if (!k) return;
  const tl_driver *drv = tl_driver_get(NULL);
  for (int i = 0; i < k->nslots; i++) {
    tl_rt_devslot *s = &k->slots[i];
    if (!drv) break;
    if (s->loaded && s->module) {
      tl_CUcontext dummy;
      if (drv->cuCtxPushCurrent(s->pctx) == TL_CUDA_SUCCESS) {
        tl_rt_ws_free(drv, s);
        drv->cuModuleUnload(s->module);
        drv->cuCtxPopCurrent(&dummy);
      }
    }
    if (s->retained) drv->cuDevicePrimaryCtxRelease(s->dev);
  }
  for (int i = 0; i < k->nslots; i++) {
    free(k->slots[i].checked_ptr);
    free(k->slots[i].stage_fn);
    free(k->slots[i].ws);
    tl_rt_tma_cache_free(k->slots[i].tma_cache);
  }
  free(k->slots);
  tl_rt_memo_free(&k->memo);
  pthread_mutex_destroy(&k->mu);
  tl_rt_sig_free(&k->sig);
  free(k->name);
  free(k->target);
  free(k->ptx);
  free(k->cubin);
  free(k->llvm_ir);
  free(k->simt_ir);
  tl_module_destroy(k->tile_module);
  tl_module_destroy(k->simt_module);
  free(k);
}

const char *tl_kernel_ptx(const tl_kernel *k) { return k ? k->ptx : NULL; }
const char *tl_kernel_llvm_ir(const tl_kernel *k) { return k ? k->llvm_ir : NULL; }
const char *tl_kernel_simt_ir(const tl_kernel *k) { return k ? k->simt_ir : NULL; }
const char *tl_kernel_target(const tl_kernel *k) { return k ? k->target : NULL; }
tl_cache_result tl_kernel_cache_result(const tl_kernel *k) {
  return k ? (tl_cache_result)k->cache_result : TL_CACHE_RESULT_OFF;
}
const char *tl_kernel_cache_key(const tl_kernel *k) { return k ? k->cache_key : ""; }
const char *tl_kernel_name(const tl_kernel *k) { return k ? k->name : NULL; }

static const tl_rt_param *param(const tl_kernel *k, int i) {
  if (!k || i < 0 || i >= k->sig.nparams) return NULL;
  return &k->sig.params[i];
}

int tl_kernel_param_count(const tl_kernel *k) { return k ? k->sig.nparams : 0; }
const char *tl_kernel_param_name(const tl_kernel *k, int i) {
  const tl_rt_param *p = param(k, i);
  return p ? p->name : NULL;
}
bool tl_kernel_param_is_tensor(const tl_kernel *k, int i) {
  const tl_rt_param *p = param(k, i);
  return p && p->is_tensor;
}
tl_dtype tl_kernel_param_dtype(const tl_kernel *k, int i) {
  const tl_rt_param *p = param(k, i);
  tl_dtype none = {TL_TYPE_VOID, 0, 0};
  return p ? p->dtype : none;
}
int tl_kernel_param_ndim(const tl_kernel *k, int i) {
  const tl_rt_param *p = param(k, i);
  return p && p->is_tensor ? p->ndim : 0;
}
bool tl_kernel_param_dim(const tl_kernel *k, int i, int d, int64_t *value, const char **symbol) {
  const tl_rt_param *p = param(k, i);
  if (symbol) *symbol = NULL;
  if (!p || !p->is_tensor || d < 0 || d >= p->ndim) return false;
  int s;
  if (tl_rx_is_const(&p->dims[d].prog, value)) return true;
  if (symbol && tl_rx_is_sym(&p->dims[d].prog, &s)) *symbol = k->sig.sym_names[s];
  return false;
}
bool tl_kernel_param_stride(const tl_kernel *k, int i, int d, int64_t *value, const char **symbol) {
  const tl_rt_param *p = param(k, i);
  if (symbol) *symbol = NULL;
  if (!p || !p->is_tensor || !p->strides || d < 0 || d >= p->ndim) return false;
  int s;
  if (tl_rx_is_const(&p->strides[d].prog, value)) return true;
  if (symbol && tl_rx_is_sym(&p->strides[d].prog, &s)) *symbol = k->sig.sym_names[s];
  return false;
}
bool tl_kernel_param_is_output(const tl_kernel *k, int i) {
  const tl_rt_param *p = param(k, i);
  return p && p->is_output;
}
const int *tl_kernel_out_idx(const tl_kernel *k, int *n) {
  if (n) *n = k ? k->sig.nout : 0;
  return k ? k->sig.out_idx : NULL;
}
tl_status tl_kernel_normalize_out_idx(tl_context *ctx, const tl_kernel *k, const int *idx, size_t n, int *norm) {
  if (!ctx) return TL_ERR_INVALID_ARGUMENT;
  tl_context_begin(ctx);
  if (!k || (n && (!idx || !norm)))
    return tl_context_end(
        ctx, tl_context_fail(ctx, TL_ERR_INVALID_ARGUMENT, "tl_kernel_normalize_out_idx: argument '%s' is NULL",
                             !k     ? "k"
                             : !idx ? "idx"
                                    : "norm"));
  char *err = NULL;
  int bad_param;
  if (tl_rt_normalize_out_idx(&k->sig, idx, n, norm, &err, &bad_param)) return tl_context_end(ctx, TL_OK);
  tl_status s = err ? tl_context_fail(ctx, TL_ERR_INVALID_ARGUMENT, "kernel '%s': %s", k->name, err)
                    : tl_context_fail(ctx, TL_ERR_NO_MEMORY, "out of memory");
  free(err);
  return tl_context_end(ctx, s);
}
int tl_kernel_param_alignment(const tl_kernel *k, int i) {
  const tl_rt_param *p = param(k, i);
  return p && p->is_tensor ? p->align : 0;
}
int64_t tl_kernel_smem_bytes(const tl_kernel *k) { return k ? k->sig.smem_bytes : 0; }

/* ------------------------------------------------------------ layouts */
tl_status tl_kernel_dump_layouts(tl_context *ctx, tl_kernel *k, const tl_layout_dump_options *opts, char **text) {
  if (!ctx) return TL_ERR_INVALID_ARGUMENT;
  tl_context_begin(ctx);
  if (text) *text = NULL;
  if (!k || !text) return tl_context_null_arg(ctx, "tl_kernel_dump_layouts", !k ? "kernel" : "text");
  if (!k->tile_module)
    return tl_context_end(ctx, tl_context_fail(ctx, TL_ERR_INVALID_ARGUMENT,
                                               "tl_kernel_dump_layouts: the kernel has no tile IR (built by hand)"));
  tl_context_end(ctx, TL_OK);
  return tl_module_dump_layouts(ctx, k->tile_module, k->target, opts, text);
}
