/* Launch details for code that launches a kernel's function itself
 * (lib/Runtime): tl_kernel_launch_info and tl_launch_info_free.
 *
 * Role: benchmarks/launch measures the host time of tl_kernel_call above a
 * bare cuLaunchKernel of the same CUfunction with the same grid, block,
 * shared memory and parameters; this file hands out exactly what
 * tl_kernel_call would launch.  Algorithm: tl_rt_bind checks the arguments
 * and evaluates grid/block/shared memory and the parameter slots (bind.c);
 * tl_kernel_load loads the module on the tensors' device (call.c); the
 * function's dynamic shared memory limit is raised as call.c does for
 * launches above 48 KB (CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
 * CUDA Driver API §6.12 cuFuncSetAttribute); the slots are copied into the
 * caller's info (parameter i of the kernel is slot i; dynamic symbols
 * follow as int32 (int64 symbols as int64), as bind.c lays them out; then the 128-byte tensor maps,
 * encoded by tma.c; then the kernel workspace pointers of the default stream, workspace.c). */
#include <stdlib.h>
#include <string.h>

#include "Runtime/kernel.h"
#include "Support/context.h"

void tl_launch_info_free(tl_launch_info *info) {
  if (!info) return;
  free(info->params);
  free(info->param_slots);
  memset(info, 0, sizeof *info);
}

static tl_status launch_info_impl(tl_context *ctx, tl_kernel *k, const tl_arg *args, size_t nargs,
                                  tl_launch_info *info) {
  if (k->sig.nstages > 0) /* one launch described; a launch sequence is several */
    return tl_context_fail(ctx, TL_ERR_UNSUPPORTED,
                           "kernel '%s' is %d launches (a prim_func with several T.Kernel scopes): "
                           "tl_kernel_launch_info describes one; call it with tl_kernel_call",
                           k->name, k->sig.nstages + 1);
  tl_rt_binding b;
  tl_status st = tl_rt_bind(ctx, &k->sig, args, nargs, &b);
  if (st != TL_OK) {
    tl_rt_binding_free(&b);
    return st;
  }
  const char *why = NULL;
  const tl_driver *drv = tl_driver_get(&why);
  if (!drv) {
    tl_rt_binding_free(&b);
    return tl_context_fail(ctx, TL_ERR_NO_DEVICE, "%s", why ? why : "no CUDA driver");
  }
  if ((st = tl_kernel_load(ctx, k, b.device)) != TL_OK) {
    tl_rt_binding_free(&b);
    return st;
  }
  pthread_mutex_lock(&k->mu);
  tl_rt_devslot *s = &k->slots[b.device];
  tl_CUresult r = TL_CUDA_SUCCESS;
  if (b.smem > 48 * 1024 && s->smem_set < (int64_t)b.smem) {
    if ((int64_t)b.smem > s->smem_optin) {
      pthread_mutex_unlock(&k->mu);
      tl_rt_binding_free(&b);
      return tl_context_fail(ctx, TL_ERR_INVALID_ARGUMENT,
                             "shared memory: kernel '%s' needs %u bytes of dynamic shared memory, "
                             "cuda:%d allows %d per block",
                             k->name, b.smem, b.device, s->smem_optin);
    }
    tl_CUcontext dummy;
    if ((r = drv->cuCtxPushCurrent(s->pctx)) == TL_CUDA_SUCCESS) {
      r = drv->cuFuncSetAttribute(s->fn, TL_CU_FUNC_ATTR_MAX_DYNAMIC_SHARED_SIZE_BYTES, (int)b.smem);
      if (r == TL_CUDA_SUCCESS) s->smem_set = b.smem;
      drv->cuCtxPopCurrent(&dummy);
    }
  }
  info->function = s->fn;
  info->context = s->pctx;
  pthread_mutex_unlock(&k->mu);
  if (r != TL_CUDA_SUCCESS) {
    tl_rt_binding_free(&b);
    return tl_driver_fail(ctx, r, "cuFuncSetAttribute(MAX_DYNAMIC_SHARED_SIZE_BYTES)");
  }
  int n = k->sig.nparams + k->sig.nsyms, nt = k->sig.ntma;
  if (nt > 0 && !b.empty && (st = tl_rt_tma_prepare(ctx, k, s, args, NULL, drv->cuTensorMapEncodeTiled, &b)) != TL_OK) {
    tl_rt_binding_free(&b);
    return st;
  }
  int nw = k->sig.nws; /* kernel workspaces (stream-K): the default stream's */
  if (nw > 0 && !b.empty) {
    tl_CUcontext dummy;
    if ((r = drv->cuCtxPushCurrent(s->pctx)) != TL_CUDA_SUCCESS) {
      tl_rt_binding_free(&b);
      return tl_driver_fail(ctx, r, "cuCtxPushCurrent");
    }
    st = tl_rt_ws_prepare(ctx, drv, k, s, NULL, &b);
    drv->cuCtxPopCurrent(&dummy);
    if (st != TL_OK) {
      tl_rt_binding_free(&b);
      return st;
    }
  }
  /* the tensor maps (128 bytes each) follow the 8-byte slots in param_slots, then the workspace pointers */
  info->param_slots = calloc((size_t)n + 16 * (size_t)nt + (size_t)nw + 1, sizeof(uint64_t));
  info->params = calloc((size_t)(n + nt + nw) + 1, sizeof(void *));
  if (!info->param_slots || !info->params) {
    tl_rt_binding_free(&b);
    return tl_context_fail(ctx, TL_ERR_NO_MEMORY, "out of memory");
  }
  memcpy(info->param_slots, b.slots, sizeof(uint64_t) * (size_t)n);
  for (int i = 0; i < n; i++) info->params[i] = &info->param_slots[i];
  for (int i = 0; i < nt; i++) {
    info->params[n + i] = &info->param_slots[n + 16 * i];
    memcpy(info->params[n + i], b.tma_maps + 128 * i, 128);
  }
  for (int i = 0; i < nw; i++) {
    info->params[n + nt + i] = &info->param_slots[n + 16 * nt + i];
    info->param_slots[n + 16 * nt + i] = b.ws_ptr[i];
  }
  info->nparams = n + nt + nw;
  memcpy(info->grid, b.grid, sizeof info->grid);
  info->block = b.block;
  info->smem = b.smem;
  tl_rt_binding_free(&b);
  return TL_OK;
}

tl_status tl_kernel_launch_info(tl_context *ctx, tl_kernel *k, const tl_arg *args, size_t nargs, tl_launch_info *info) {
  if (!ctx) return TL_ERR_INVALID_ARGUMENT;
  tl_context_begin(ctx);
  if (info) memset(info, 0, sizeof *info);
  if (!k || !info) return tl_context_null_arg(ctx, "tl_kernel_launch_info", !k ? "kernel" : "info");
  tl_status st = launch_info_impl(ctx, k, args, nargs, info);
  if (st != TL_OK) tl_launch_info_free(info);
  return tl_context_end(ctx, st);
}
