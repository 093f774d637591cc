/* Loading and launching (lib/Runtime): tl_kernel_load and tl_kernel_call.
 *
 * Role: after tl_rt_bind has checked a call, run it on the device holding
 * the tensors (each device its own slot: the module is loaded once per
 * device, lazily, by the first call with tensors there).  Algorithm: (1) the
 * kernel's target is checked against the device's compute capability
 * (check_arch: a mismatch is refused before the device is touched), then
 * the kernel's slot for that device is filled once, under the kernel's
 * mutex: cuDevicePrimaryCtxRetain, then
 * cuModuleLoadDataEx on the PTX (or on the cubin nvJitLink made for that
 * device, jitlink.c) with CU_JIT_ERROR_LOG_BUFFER and
 * CU_JIT_INFO_LOG_BUFFER (their text goes into the error message),
 * cuModuleGetFunction(entry), the function's MAX_THREADS_PER_BLOCK and the
 * device's grid limits and opt-in shared memory (cuDeviceGetAttribute);
 * (2) per call: bind the arguments (tl_rt_bind; or, when they repeat the
 * last successful call word for word, from the kernel's call memo, memo.c,
 * with its tensor maps), push the primary context, check the stream belongs to it
 * (cuStreamGetCtx; NULL, CU_STREAM_LEGACY and CU_STREAM_PER_THREAD are the
 * context's own streams), check each tensor pointer is device memory of
 * that device (cuPointerGetAttribute DEVICE_ORDINAL), check limits, raise
 * CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES above 48 KB, allocate
 * outputs (cuMemAlloc_v2, or the context's tl_allocator; optionally poisoned
 * with cuMemsetD8Async 0xFF on the stream), cuLaunchKernel, pop the context.
 * Outputs are returned as DLManagedTensors whose deleter frees the memory
 * (in the primary context, or through the allocator's free) and releases the
 * reference on that context that the allocation took.
 * tl_kernel_call_on picks the executor: calls whose tensors are all host
 * memory go to the CPU executors (cpu.c); tl_kernel_time repeats the launch
 * between CUDA events. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "Runtime/arg_messages.h"
#include "Runtime/kernel.h"
#include "Support/context.h"
#include "Support/target.h"

#define JIT_LOG_BYTES (16 * 1024)

/* ------------------------------------------------------------ outputs */
typedef struct out_tensor {
  DLManagedTensor managed;
  tl_CUdeviceptr ptr;
  tl_CUcontext pctx;
  tl_CUdevice dev;
  tl_allocator alloc; /* the context's allocator when it made ptr; zero: cuMemAlloc_v2 */
  size_t bytes;       /* what alloc was asked for */
  int ordinal;        /* device ordinal and stream given to alloc */
  void *stream;
  int64_t shape[]; /* ndim entries */
} out_tensor;

/* Frees o's memory (the allocator's free, or cuMemFree_v2 in its primary
 * context), then releases the reference on that context which the
 * allocation took (if it got that far). */
static void free_out(out_tensor *o) {
  if (!o) return;
  if (o->ptr && o->alloc.free) {
    o->alloc.free(o->alloc.user, (void *)(uintptr_t)o->ptr, o->bytes, o->ordinal, o->stream);
    o->ptr = 0; /* the allocator's: only the context reference is left */
  }
  tl_driver_free_retained(o->ptr, o->pctx, o->dev);
  free(o);
}

static void out_deleter(DLManagedTensor *self) {
  if (self) free_out((out_tensor *)self->manager_ctx);
}

/* Allocates o's memory for output parameter p: cuMemAlloc_v2, or ctx's
 * allocator (whose pointer is checked against the kernel's alignment). */
static tl_status alloc_output(tl_context *ctx, const tl_driver *drv, out_tensor *o, size_t bytes, int device,
                              void *stream, const tl_rt_param *p, const char *kernel) {
  if (!ctx->allocator.alloc) {
    tl_CUresult r = drv->cuMemAlloc(&o->ptr, bytes);
    if (r == TL_CUDA_SUCCESS) return TL_OK;
    o->ptr = 0;
    return tl_driver_fail(ctx, r, "cuMemAlloc_v2 of %zu bytes for output '%s' of kernel '%s' on cuda:%d", bytes,
                          p->name, kernel, device);
  }
  void *ptr = ctx->allocator.alloc(ctx->allocator.user, bytes, device, stream);
  if (!ptr) return tl_context_fail(ctx, TL_ERR_NO_MEMORY, TL_MSG_ALLOC_NULL, bytes, p->name, device);
  o->ptr = (tl_CUdeviceptr)(uintptr_t)ptr;
  o->alloc = ctx->allocator;
  o->bytes = bytes;
  o->ordinal = device;
  o->stream = stream;
  if (p->align > 1 && (uintptr_t)ptr % (uintptr_t)p->align)
    return tl_context_fail(ctx, TL_ERR_INVALID_ARGUMENT, TL_MSG_ALLOC_ALIGN, ptr, p->name, p->align);
  return TL_OK;
}

tl_status tl_context_set_allocator(tl_context *ctx, const tl_allocator *a) {
  if (!ctx) return TL_ERR_INVALID_ARGUMENT;
  tl_context_begin(ctx);
  if (a && (!a->alloc || !a->free))
    return tl_context_end(ctx, tl_context_fail(ctx, TL_ERR_INVALID_ARGUMENT,
                                               "tl_context_set_allocator: alloc and free must both be given"));
  if (a) ctx->allocator = *a;
  else memset(&ctx->allocator, 0, sizeof ctx->allocator);
  return tl_context_end(ctx, TL_OK);
}

tl_status tl_context_set_progress(tl_context *ctx, tl_progress_fn fn, void *user) {
  if (!ctx) return TL_ERR_INVALID_ARGUMENT;
  ctx->progress = fn;
  ctx->progress_user = fn ? user : NULL;
  return TL_OK;
}

/* ----------------------------------------------------------- loading */
/* Refuses device `device` when k's target does not fit its compute
 * capability (checked before any context or module is made there): PTX for
 * an arch-specific target (sm_90a) runs only on that architecture, other
 * PTX on its architecture and newer ones (the driver's JIT compiles it
 * forward).  Without the check the driver's JIT fails inside
 * cuModuleLoadDataEx with CUDA_ERROR_INVALID_PTX or
 * CUDA_ERROR_NO_BINARY_FOR_GPU and a ptxas log that names no device.  A
 * kernel whose target is not in the table (built by hand) is left to the
 * driver. */
static tl_status check_arch(tl_context *ctx, const tl_kernel *k, int device) {
  const tl_target *t = tl_target_lookup(k->target);
  int major, minor;
  if (!t) return TL_OK;
  tl_CUresult r = tl_driver_device_cc_query(device, &major, &minor);
  if (r != TL_CUDA_SUCCESS)
    return tl_driver_fail(ctx, r, "querying the compute capability of cuda:%d for kernel '%s'", device, k->name);
  int cc = major * 10 + minor;
  if (t->arch_specific ? cc == t->sm : cc >= t->sm) return TL_OK;
  char name[256], named[272] = "";
  tl_driver_device_name(device, name, sizeof name);
  if (name[0]) snprintf(named, sizeof named, " (%s)", name);
  const char *fit = tl_device_target(device);
  const tl_target *ft = tl_target_lookup(fit);
  bool fits = ft && (ft->arch_specific ? cc == ft->sm : cc >= ft->sm);
  char advice[160];
  if (fits)
    snprintf(advice, sizeof advice,
             "compile the kernel for that device (target %s: tl_device_target(%d)) or pass "
             "tensors on a device it fits",
             fit, device);
  else snprintf(advice, sizeof advice, "no target of this library runs there (the oldest is sm_80)");
  return tl_context_fail(ctx, TL_ERR_UNSUPPORTED,
                         "kernel '%s' was compiled for %s, whose PTX runs only on devices of compute capability "
                         "%d.%d%s; cuda:%d%s has compute capability %d.%d: %s",
                         k->name, t->name, t->sm / 10, t->sm % 10, t->arch_specific ? "" : " or newer", device, named,
                         major, minor, advice);
}

/* The launch limits of s's function and device: its MAX_THREADS_PER_BLOCK,
 * the device's grid limits and opt-in shared memory (a driver that cannot
 * say is reported: guessed limits would fail later launches obscurely). */
static tl_status slot_limits(tl_context *ctx, const tl_kernel *k, const tl_driver *drv, tl_rt_devslot *s, int device) {
  int v = 0;
  tl_CUresult r = drv->cuFuncGetAttribute(&v, TL_CU_FUNC_ATTR_MAX_THREADS_PER_BLOCK, s->fn);
  if (r != TL_CUDA_SUCCESS)
    return tl_driver_fail(ctx, r, "cuFuncGetAttribute(MAX_THREADS_PER_BLOCK) of kernel '%s' on cuda:%d", k->name,
                          device);
  s->max_threads = v;
  static const int attr[4] = {TL_CU_DEV_ATTR_MAX_GRID_DIM_X, TL_CU_DEV_ATTR_MAX_GRID_DIM_Y,
                              TL_CU_DEV_ATTR_MAX_GRID_DIM_Z, TL_CU_DEV_ATTR_MAX_SMEM_OPTIN};
  int *dst[4] = {&s->max_grid[0], &s->max_grid[1], &s->max_grid[2], &v};
  for (int a = 0; a < 4; a++)
    if ((r = drv->cuDeviceGetAttribute(dst[a], attr[a], s->dev)) != TL_CUDA_SUCCESS)
      return tl_driver_fail(ctx, r, "cuDeviceGetAttribute(%s) of cuda:%d loading kernel '%s'",
                            a < 3 ? "MAX_GRID_DIM" : "MAX_SHARED_MEMORY_PER_BLOCK_OPTIN", device, k->name);
  s->smem_optin = v;
  return TL_OK;
}

/* The entries of the later launch stages (sig.nstages) in s's module. */
static tl_status stage_functions(tl_context *ctx, const tl_kernel *k, const tl_driver *drv, tl_rt_devslot *s,
                                 int device) {
  if (k->sig.nstages == 0) return TL_OK;
  free(s->stage_fn);
  if (!(s->stage_fn = calloc((size_t)k->sig.nstages, sizeof *s->stage_fn)))
    return tl_context_fail(ctx, TL_ERR_NO_MEMORY, "out of memory");
  for (int i = 0; i < k->sig.nstages; i++) {
    tl_CUresult r = drv->cuModuleGetFunction(&s->stage_fn[i], s->module, k->sig.stages[i].entry);
    if (r != TL_CUDA_SUCCESS)
      return tl_driver_fail(ctx, r, "cuModuleGetFunction of entry '%s' of kernel '%s' on cuda:%d",
                            k->sig.stages[i].entry, k->name, device);
  }
  return TL_OK;
}

static tl_status load_slot(tl_context *ctx, tl_kernel *k, const tl_driver *drv, int device, tl_rt_devslot **out) {
  if (!k->ptx || !*k->ptx)
    return tl_context_fail(ctx, TL_ERR_INVALID_ARGUMENT,
                           "kernel '%s' has no PTX: it was compiled with stop_after = "
                           "TL_STAGE_SIMT",
                           k->name);
  tl_status st = TL_OK;
  int ndev = tl_driver_device_count();
  if (device < 0 || device >= ndev)
    return tl_context_fail(ctx, TL_ERR_INVALID_ARGUMENT, "device cuda:%d does not exist (%d CUDA device(s))", device,
                           ndev);
  /* loaded already: no lock (slots and loaded are published with release
   * stores below, after everything they cover is written) */
  tl_rt_devslot *ls = __atomic_load_n(&k->slots, __ATOMIC_ACQUIRE);
  if (ls && __atomic_load_n(&ls[device].loaded, __ATOMIC_ACQUIRE)) {
    *out = &ls[device];
    return TL_OK;
  }
  if ((st = check_arch(ctx, k, device)) != TL_OK) return st;
  pthread_mutex_lock(&k->mu);
  if (!k->slots) {
    tl_rt_devslot *sl = calloc((size_t)ndev, sizeof *sl);
    if (!sl) {
      st = tl_context_fail(ctx, TL_ERR_NO_MEMORY, "out of memory");
      goto out;
    }
    k->nslots = ndev;
    __atomic_store_n(&k->slots, sl, __ATOMIC_RELEASE);
  }
  tl_rt_devslot *s = &k->slots[device];
  if (s->loaded) {
    *out = s;
    goto out;
  }
  tl_CUresult r;
  if (!s->retained) {
    if ((r = drv->cuDeviceGet(&s->dev, device)) != TL_CUDA_SUCCESS) {
      st = tl_driver_fail(ctx, r, "cuDeviceGet(%d) loading kernel '%s'", device, k->name);
      goto out;
    }
    if ((r = drv->cuDevicePrimaryCtxRetain(&s->pctx, s->dev)) != TL_CUDA_SUCCESS) {
      st = tl_driver_fail(ctx, r, "cuDevicePrimaryCtxRetain of cuda:%d loading kernel '%s'", device, k->name);
      goto out;
    }
    s->retained = true;
  }
  if ((r = drv->cuCtxPushCurrent(s->pctx)) != TL_CUDA_SUCCESS) {
    st = tl_driver_fail(ctx, r, "cuCtxPushCurrent of cuda:%d loading kernel '%s'", device, k->name);
    goto out;
  }
  char *info = calloc(1, JIT_LOG_BYTES), *errlog = calloc(1, JIT_LOG_BYTES);
  if (!info || !errlog) {
    free(info);
    free(errlog);
    st = tl_context_fail(ctx, TL_ERR_NO_MEMORY, "out of memory");
  } else {
    int opts[] = {TL_CU_JIT_INFO_LOG_BUFFER, TL_CU_JIT_INFO_LOG_BUFFER_SIZE_BYTES, TL_CU_JIT_ERROR_LOG_BUFFER,
                  TL_CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES};
    void *vals[] = {info, (void *)(uintptr_t)(JIT_LOG_BYTES - 1), errlog, (void *)(uintptr_t)(JIT_LOG_BYTES - 1)};
    /* a cubin nvJitLink made for this device (jitlink.c), else the PTX */
    const void *image = k->cubin && k->cubin_device == device ? k->cubin : (const void *)k->ptx;
    r = drv->cuModuleLoadDataEx(&s->module, image, 4, opts, vals);
    if (r != TL_CUDA_SUCCESS) {
      const char *name, *text;
      tl_driver_error_text(r, &name, &text);
      st = tl_context_fail(ctx, TL_ERR_CUDA,
                           "cuModuleLoadDataEx failed for kernel '%s' (target %s) on cuda:%d: "
                           "%s (%s)%s%s%s%s%s",
                           k->name, k->target, device, name, text, tl_driver_sticky_advice(r),
                           errlog[0] ? "\nJIT error log:\n" : "", errlog, info[0] ? "\nJIT info log:\n" : "", info);
      s->module = NULL;
    } else if ((r = drv->cuModuleGetFunction(&s->fn, s->module, k->name)) != TL_CUDA_SUCCESS) {
      st = tl_driver_fail(ctx, r, "cuModuleGetFunction of kernel '%s' on cuda:%d", k->name, device);
      drv->cuModuleUnload(s->module);
      s->module = NULL;
    } else if ((st = stage_functions(ctx, k, drv, s, device)) != TL_OK ||
               (st = slot_limits(ctx, k, drv, s, device)) != TL_OK) {
      drv->cuModuleUnload(s->module); /* the next call loads it again */
      s->module = NULL;
    } else {
      s->checked_ptr = calloc((size_t)k->sig.nparams + 1, sizeof *s->checked_ptr); /* NULL: always query */
      __atomic_store_n(&s->loaded, true, __ATOMIC_RELEASE);
      *out = s;
    }
    free(info);
    free(errlog);
  }
  tl_CUcontext dummy;
  drv->cuCtxPopCurrent(&dummy);
out:
  pthread_mutex_unlock(&k->mu);
  return st;
}

static const tl_driver *need_driver(tl_context *ctx, tl_status *st) {
  const char *why = NULL;
  const tl_driver *drv = tl_driver_get(&why);
  if (!drv) *st = tl_context_fail(ctx, TL_ERR_NO_DEVICE, "%s", why);
  return drv;
}

tl_status tl_kernel_load(tl_context *ctx, tl_kernel *k, int device) {
  if (!ctx) return TL_ERR_INVALID_ARGUMENT;
  tl_context_begin(ctx);
  if (!k) return tl_context_null_arg(ctx, "tl_kernel_load", "kernel");
  tl_status st = TL_OK;
  const tl_driver *drv = need_driver(ctx, &st);
  if (!drv) return tl_context_end(ctx, st);
  tl_rt_devslot *s = NULL;
  return tl_context_end(ctx, load_slot(ctx, k, drv, device, &s));
}

/* ------------------------------------------------------------ calling */
/* Timing request of tl_kernel_time: warmup launches, then reps launches
 * each between two events. */
typedef struct bench_req {
  int warmup, reps;
  float *ms_each;
} bench_req;

/* Launches the later stages of a launch sequence (sig.nstages) after the
 * first, in order on cs with b's arguments: each its own grid, block and
 * dynamic shared memory (more than 48 KiB opted into before its launch); a
 * stage with an empty grid launches nothing. */
static tl_status launch_later_stages(tl_context *ctx, const tl_driver *drv, tl_kernel *k, tl_rt_devslot *s,
                                     const tl_rt_binding *b, tl_CUstream cs) {
  for (int i = 1; i <= k->sig.nstages; i++) {
    unsigned grid[3], block, smem;
    const char *why = NULL, *entry = k->sig.stages[i - 1].entry;
    if (!tl_rt_stage_dims(&k->sig, i, b->symv, b->scalarv, grid, &block, &smem, &why))
      return tl_context_fail(ctx, TL_ERR_INVALID_ARGUMENT, "kernel '%s', entry '%s': %s", k->name, entry, why);
    if (!grid[0] || !grid[1] || !grid[2]) continue;
    for (int g = 0; g < 3; g++)
      if (grid[g] > (unsigned)s->max_grid[g])
        return tl_context_fail(ctx, TL_ERR_INVALID_ARGUMENT,
                               "grid.%c of entry '%s': expected at most %d blocks on cuda:%d, got %u", "xyz"[g], entry,
                               s -> max_grid[g], b -> device, grid[g]);
    tl_CUresult r = TL_CUDA_SUCCESS;
    if (smem > 48 * 1024) {
      if ((int64_t)smem > s->smem_optin)
        return tl_context_fail(ctx, TL_ERR_INVALID_ARGUMENT,
                               "shared memory: entry '%s' of kernel '%s' needs %u bytes of dynamic shared memory, "
                               "cuda:%d allows %d per block",
                               entry, k->name, smem, b->device, s->smem_optin);
      r = drv->cuFuncSetAttribute(s->stage_fn[i - 1], TL_CU_FUNC_ATTR_MAX_DYNAMIC_SHARED_SIZE_BYTES, (int)smem);
    }
    if (r == TL_CUDA_SUCCESS)
      r = drv->cuLaunchKernel(s->stage_fn[i - 1], grid[0], grid[1], grid[2], block, 1, 1, smem, cs, b->kargs, NULL);
    if (r != TL_CUDA_SUCCESS)
      return tl_driver_fail(ctx, r,
                            "cuLaunchKernel of entry '%s' of '%s' (grid %u x %u x %u, block %u, %u bytes of "
                            "dynamic shared memory) on cuda:%d",
                            entry, k->name, grid[0], grid[1], grid[2], block, smem, b->device);
  }
  return TL_OK;
}

/* Launches the bound call's stages: the first (unless its grid is empty),
 * then the later ones. */
static tl_status launch_stages(tl_context *ctx, const tl_driver *drv, tl_kernel *k, tl_rt_devslot *s,
                               const tl_rt_binding *b, tl_CUstream cs) {
  if (!b->empty) {
    tl_CUresult r =
        drv->cuLaunchKernel(s->fn, b->grid[0], b->grid[1], b->grid[2], b->block, 1, 1, b->smem, cs, b->kargs, NULL);
    if (r != TL_CUDA_SUCCESS)
      return tl_driver_fail(ctx, r, TL_MSG_LAUNCH, k->name, b->grid[0], b->grid[1], b->grid[2], b->block, b->smem,
                            b->device);
  }
  return launch_later_stages(ctx, drv, k, s, b, cs);
}

/* Times launches of s->fn with b's arguments (bq given). */
static tl_status timed_launches(tl_context *ctx, const tl_driver *drv, tl_kernel *k, tl_rt_devslot *s, tl_rt_binding *b,
                                tl_CUstream cs, const bench_req *bq) {
  if (!drv->cuEventCreate || !drv->cuEventRecord || !drv->cuEventSynchronize || !drv->cuEventElapsedTime ||
      !drv->cuEventDestroy)
    return tl_context_fail(ctx, TL_ERR_UNSUPPORTED, "the CUDA driver has no cuEvent* entry points: cannot time '%s'",
                           k->name);
  tl_CUevent ev[2] = {NULL, NULL};
  tl_CUresult r = TL_CUDA_SUCCESS;
  tl_status st = TL_OK;
  for (int e = 0; e < 2 && r == TL_CUDA_SUCCESS; e++) r = drv->cuEventCreate(&ev[e], 0);
  if (r != TL_CUDA_SUCCESS) st = tl_driver_fail(ctx, r, "cuEventCreate timing kernel '%s'", k->name);
  for (int i = 0; st == TL_OK && i < bq->warmup + bq->reps; i++) {
    bool timed = i >= bq->warmup;
    if (timed && (r = drv->cuEventRecord(ev[0], cs)) != TL_CUDA_SUCCESS) {
      st = tl_driver_fail(ctx, r, "cuEventRecord timing kernel '%s'", k->name);
      break;
    }
    if ((st = launch_stages(ctx, drv, k, s, b, cs)) != TL_OK) break;
    if (!timed) continue;
    if ((r = drv->cuEventRecord(ev[1], cs)) != TL_CUDA_SUCCESS ||
        (r = drv->cuEventSynchronize(ev[1])) != TL_CUDA_SUCCESS ||
        (r = drv->cuEventElapsedTime(&bq->ms_each[i - bq->warmup], ev[0], ev[1])) != TL_CUDA_SUCCESS) {
      st = tl_driver_fail(ctx, r, "timing kernel '%s' with CUDA events", k->name);
      break;
    }
  }
  for (int e = 0; e < 2; e++)
    if (ev[e]) drv->cuEventDestroy(ev[e]);
  return st;
}

/* The kernel's tensor maps into b (tma.c), outs[j] being output j. */
static tl_status fill_tma_maps(tl_context *ctx, const tl_driver *drv, tl_kernel *k, tl_rt_devslot *s,
                               const tl_arg *args, out_tensor *const *outs, tl_rt_binding *b) {
  const DLTensor *od_small[8] = {0}; /* no allocation per call for up to 7 outputs */
  const DLTensor **od = k->sig.nout < 8 ? od_small : calloc((size_t)k->sig.nout + 1, sizeof *od);
  if (!od) return tl_context_fail(ctx, TL_ERR_NO_MEMORY, "out of memory");
  for (int j = 0; j < k->sig.nout; j++) od[j] = &outs[j]->managed.dl_tensor;
  tl_status st = tl_rt_tma_prepare(ctx, k, s, args, od, drv->cuTensorMapEncodeTiled, b);
  if (od != od_small) free(od);
  return st;
}

/* Launches a bound call (timed when bq is given); an empty call (a
 * zero-size dynamic dim) launches nothing and times 0. */
static tl_status launch_bound(tl_context *ctx, const tl_driver *drv, tl_kernel *k, tl_rt_devslot *s, const tl_arg *args,
                              out_tensor *const *outs, tl_rt_binding *b, tl_CUstream cs, const bench_req *bq) {
  tl_status st;
  if (b->empty && k->sig.nstages == 0) {
    for (int i = 0; bq && i < bq->reps; i++) bq->ms_each[i] = 0;
    return TL_OK;
  }
  if (k->sig.ntma > 0 && !b->maps_ready && (st = fill_tma_maps(ctx, drv, k, s, args, outs, b)) != TL_OK) return st;
  if (k->sig.nws > 0 && (st = tl_rt_ws_prepare(ctx, drv, k, s, (void *)cs, b)) != TL_OK) return st;
  if (bq) return timed_launches(ctx, drv, k, s, b, cs, bq);
  return launch_stages(ctx, drv, k, s, b, cs);
}

/* A stream given to a call must belong to the primary context of the
 * tensors' device (the legacy and per-thread default streams always do). */
static tl_status check_stream(tl_context *ctx, const tl_driver *drv, const tl_kernel *k, const tl_rt_devslot *s,
                              tl_CUstream cs, int device) {
  if (!cs || cs == TL_CU_STREAM_LEGACY || cs == TL_CU_STREAM_PER_THREAD) return TL_OK;
  tl_CUcontext sctx = NULL;
  tl_CUresult r = drv->cuStreamGetCtx(cs, &sctx);
  if (r != TL_CUDA_SUCCESS)
    return tl_driver_fail(ctx, r, "cuStreamGetCtx of the stream of a call of kernel '%s' (is the stream valid?)",
                          k->name);
  if (sctx != s->pctx) return tl_context_fail(ctx, TL_ERR_INVALID_ARGUMENT, TL_MSG_STREAM_CTX, device);
  return TL_OK;
}

/* Tensor pointers really are device memory of b's device (a memo hit
 * repeats the pointers of a call that passed this check on this device,
 * which checked_ptr would let through as well: the caller skips it). */
static tl_status check_pointers(tl_context *ctx, const tl_driver *drv, const tl_kernel *k, tl_rt_devslot *s,
                                const tl_rt_binding *b) {
  const tl_rt_sig *sig = &k->sig;
  size_t pos = 0;
  for (int pi = 0; pi < sig->nparams; pi++) {
    const tl_rt_param *p = &sig->params[pi];
    if (p->is_output) continue;
    if (p->is_tensor) {
      int ord = -1;
      tl_CUdeviceptr ptr = (tl_CUdeviceptr)b->slots[pi];
      if (!ptr) { /* an empty tensor without data (the binder allows only those) */
        pos++;
        continue;
      }
      if (s->checked_ptr && ptr && __atomic_load_n(&s->checked_ptr[pi], __ATOMIC_RELAXED) == ptr) {
        pos++;
        continue;
      }
      tl_CUresult r = drv->cuPointerGetAttribute(&ord, TL_CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL, ptr);
      if (r != TL_CUDA_SUCCESS && tl_driver_error_is_sticky(r))
        return tl_driver_fail(ctx, r, "cuPointerGetAttribute of argument '%s' (#%zu) of kernel '%s'", p->name, pos,
                              k->name);
      if (r != TL_CUDA_SUCCESS)
        return tl_context_fail(ctx, TL_ERR_INVALID_ARGUMENT, TL_MSG_PTR_UNKNOWN, p->name, pos, tl_driver_error_name(r));
      if (ord != b->device)
        return tl_context_fail(ctx, TL_ERR_INVALID_ARGUMENT, TL_MSG_PTR_DEVICE, p->name, pos, b->device, ord);
      if (s->checked_ptr) __atomic_store_n(&s->checked_ptr[pi], ptr, __ATOMIC_RELAXED);
    }
    pos++;
  }
  return TL_OK;
}

/* The launch fits the device's limits (threads a block, grid, dynamic
 * shared memory); more than 48 KiB of dynamic shared memory is opted into
 * once per device slot (cuFuncSetAttribute, under k->mu). */
static tl_status check_limits(tl_context *ctx, const tl_driver *drv, tl_kernel *k, tl_rt_devslot *s,
                              const tl_rt_binding *b) {
  if ((int)b->block > s->max_threads)
    return tl_context_fail(ctx, TL_ERR_INVALID_ARGUMENT, TL_MSG_MAX_THREADS, k->name, s->max_threads, b->block);
  for (int g = 0; g < 3; g++)
    if (b->grid[g] > (unsigned)s->max_grid[g])
      return tl_context_fail(ctx, TL_ERR_INVALID_ARGUMENT, TL_MSG_GRID_LIMIT, "xyz"[g], s -> max_grid[g], b -> device,
                             b -> grid[g]);
  if (b->smem <= 48 * 1024) return TL_OK;
  if ((int64_t)b->smem > s->smem_optin)
    return tl_context_fail(ctx, TL_ERR_INVALID_ARGUMENT, TL_MSG_SMEM_LIMIT, k->name, b->smem, b->device, s->smem_optin);
  tl_CUresult r = TL_CUDA_SUCCESS;
  pthread_mutex_lock(&k->mu);
  if (s->smem_set < (int64_t)b->smem) {
    r = drv->cuFuncSetAttribute(s->fn, TL_CU_FUNC_ATTR_MAX_DYNAMIC_SHARED_SIZE_BYTES, (int)b->smem);
    if (r == TL_CUDA_SUCCESS) s->smem_set = b->smem;
  }
  pthread_mutex_unlock(&k->mu);
  if (r != TL_CUDA_SUCCESS)
    return tl_driver_fail(ctx, r, "cuFuncSetAttribute(MAX_DYNAMIC_SHARED_SIZE_BYTES, %u) of kernel '%s'", b->smem,
                          k->name);
  return TL_OK;
}

/* Allocates output parameter pi (b's shape and bytes) on b's device, in
 * stream cs, and points b's slot at it.  *out gets the output as soon as it
 * exists, so that the caller frees it on failure (free_out). */
static tl_status make_output(tl_context *ctx, const tl_driver *drv, const tl_kernel *k, const tl_rt_devslot *s, int pi,
                             tl_rt_binding *b, tl_CUstream cs, out_tensor **out) {
  const tl_rt_param *p = &k->sig.params[pi];
  out_tensor *o = calloc(1, sizeof *o + sizeof(int64_t) * (size_t)(p->ndim + 1));
  if (!o) return tl_context_fail(ctx, TL_ERR_NO_MEMORY, "out of memory");
  *out = o;
  size_t bytes = b->out_bytes[pi];
  tl_status st = alloc_output(ctx, drv, o, bytes ? bytes : 16, b->device, cs, p, k->name);
  if (st != TL_OK) return st;
  /* the output keeps the primary context alive until its deleter runs */
  tl_CUcontext pc;
  tl_CUresult r = drv->cuDevicePrimaryCtxRetain(&pc, s->dev);
  if (r !=
      TL_CUDA_SUCCESS) /* free_out frees o's memory (the allocator's, or cuMemFree_v2 in the context pushed here) */
    return tl_driver_fail(ctx, r, "cuDevicePrimaryCtxRetain of cuda:%d for output '%s' of kernel '%s'", b->device,
                          p->name, k->name);
  o->pctx = pc;
  o->dev = s->dev;
  if ((k->flags & TL_COMPILE_POISON_OUTPUTS) && bytes &&
      (r = drv->cuMemsetD8Async(o->ptr, 0xFF, bytes, cs)) != TL_CUDA_SUCCESS)
    return tl_driver_fail(ctx, r, "cuMemsetD8Async poisoning output '%s' of kernel '%s'", p->name, k->name);
  memcpy(o->shape, b->out_shapes[pi], sizeof(int64_t) * (size_t)p->ndim);
  DLDevice dev = {.device_type = kDLCUDA, .device_id = b->device};
  tl_rt_dl_output(&o->managed, (void *)(uintptr_t)o->ptr, dev, p, o->shape, o, out_deleter);
  b->slots[pi] = (uint64_t)o->ptr;
  return TL_OK;
}

/* The CUDA path of a call (bq NULL) or of tl_kernel_time. */
static tl_status cuda_call(tl_context *ctx, tl_kernel *k, const tl_arg *args, size_t nargs, void *stream,
                           DLManagedTensor **outputs, const bench_req *bq) {
  const tl_rt_sig *sig = &k->sig;
  if (sig->nout > 0 && !outputs)
    return tl_context_fail(ctx, TL_ERR_INVALID_ARGUMENT,
                           "tl_kernel_call: kernel '%s' has %d out_idx output(s) but outputs is NULL", k->name,
                           sig->nout);
  for (int j = 0; outputs && j < sig->nout; j++) outputs[j] = NULL;

  tl_rt_binding b;
  tl_status st = TL_OK;
  /* a call that repeats the last successful one binds from the memo (memo.c) */
  bool memo_hit = tl_rt_memo_lookup(k, args, nargs, &b);
  if (!memo_hit) st = tl_rt_bind(ctx, sig, args, nargs, &b);
  if (st != TL_OK) {
    tl_rt_binding_free(&b);
    return st;
  }
  const tl_driver *drv = need_driver(ctx, &st);
  if (!drv) {
    tl_rt_binding_free(&b);
    return st;
  }
  tl_rt_devslot *s = NULL;
  st = load_slot(ctx, k, drv, b.device, &s);
  if (st != TL_OK) {
    tl_rt_binding_free(&b);
    return st;
  }

  out_tensor *outs_small[8] = {0}; /* no allocation per call for up to 7 outputs */
  out_tensor **outs = sig->nout < 8 ? outs_small : calloc((size_t)sig->nout + 1, sizeof *outs);
  tl_CUresult r;
  tl_CUcontext dummy;
  bool pushed = false;
  if (!outs) {
    st = tl_context_fail(ctx, TL_ERR_NO_MEMORY, "out of memory");
    goto done;
  }
  {
    /* the primary context is usually current already (the caller's runtime
     * made it so, or an earlier call): then no push/pop */
    tl_CUcontext cur = NULL;
    if (!drv->cuCtxGetCurrent || drv->cuCtxGetCurrent(&cur) != TL_CUDA_SUCCESS || cur != s->pctx) {
      if ((r = drv->cuCtxPushCurrent(s->pctx)) != TL_CUDA_SUCCESS) {
        st = tl_driver_fail(ctx, r, "cuCtxPushCurrent of cuda:%d calling kernel '%s'", b.device, k->name);
        goto done;
      }
      pushed = true;
    }
  }

  tl_CUstream cs = (tl_CUstream)stream;
  if ((st = check_stream(ctx, drv, k, s, cs, b.device)) != TL_OK) goto done;
  if (!memo_hit && (st = check_pointers(ctx, drv, k, s, &b)) != TL_OK) goto done;
  if ((st = check_limits(ctx, drv, k, s, &b)) != TL_OK) goto done;
  for (int j = 0; j < sig->nout; j++)
    if ((st = make_output(ctx, drv, k, s, sig->out_idx[j], &b, cs, &outs[j])) != TL_OK) goto done;

  if ((st = launch_bound(ctx, drv, k, s, args, outs, &b, cs, bq)) != TL_OK) goto done;
  if (!memo_hit) tl_rt_memo_store(k, args, nargs, &b, true);
  for (int j = 0; j < sig->nout; j++) {
    outputs[j] = &outs[j]->managed;
    outs[j] = NULL;
  }

done:
  if (outs) {
    /* on failure free what was allocated (nothing was launched that uses it) */
    for (int j = 0; j < sig->nout; j++) free_out(outs[j]);
    if (outs != outs_small) free(outs);
  }
  if (pushed) drv->cuCtxPopCurrent(&dummy);
  tl_rt_binding_free(&b);
  return st;
}

/* Every tensor argument is host memory (and there is one). */
static bool all_host(const tl_arg *args, size_t nargs) {
  size_t ntensors = 0;
  for (size_t i = 0; args && i < nargs; i++) {
    if (args[i].kind != TL_ARG_TENSOR || !args[i].v.tensor) continue;
    if (args[i].v.tensor->device.device_type != kDLCPU) return false;
    ntensors++;
  }
  return ntensors > 0;
}

tl_status tl_kernel_call_on(tl_context *ctx, tl_kernel *k, tl_executor exec, const tl_arg *args, size_t nargs,
                            void *stream, DLManagedTensor **outputs) {
  if (!ctx) return TL_ERR_INVALID_ARGUMENT;
  tl_context_begin(ctx);
  if (!k) return tl_context_null_arg(ctx, "tl_kernel_call", "kernel");
  if (exec == TL_EXEC_AUTO) exec = all_host(args, nargs) ? TL_EXEC_CPU : TL_EXEC_CUDA;
  switch (exec) {
  case TL_EXEC_CUDA: return tl_context_end(ctx, cuda_call(ctx, k, args, nargs, stream, outputs, NULL));
  case TL_EXEC_CPU:
  case TL_EXEC_REFERENCE: {
    size_t nsources = ctx->diag.sources.len;
    tl_status st = tl_context_end(ctx, tl_rt_call_cpu(ctx, k, args, nargs, exec == TL_EXEC_REFERENCE, outputs));
    ctx->diag.sources.len = nsources; /* the kernel's text was registered for the message */
    return st;
  }
  default:
    return tl_context_end(
        ctx, tl_context_fail(ctx, TL_ERR_INVALID_ARGUMENT, "tl_kernel_call_on: unknown executor %d", (int)exec));
  }
}

tl_status tl_kernel_call(tl_context *ctx, tl_kernel *k, const tl_arg *args, size_t nargs, void *stream,
                         DLManagedTensor **outputs) {
  return tl_kernel_call_on(ctx, k, TL_EXEC_AUTO, args, nargs, stream, outputs);
}

tl_status tl_kernel_time(tl_context *ctx, tl_kernel *k, const tl_arg *args, size_t nargs, void *stream, int warmup,
                         int reps, float *ms_each, DLManagedTensor **outputs) {
  if (!ctx) return TL_ERR_INVALID_ARGUMENT;
  tl_context_begin(ctx);
  if (!k || !ms_each || reps < 1 || warmup < 0)
    return tl_context_end(ctx, tl_context_fail(ctx, TL_ERR_INVALID_ARGUMENT, "tl_kernel_time: %s",
                                               !k         ? "kernel is NULL"
                                               : !ms_each ? "ms_each is NULL"
                                                          : "reps must be >= 1 and warmup >= 0"));
  bench_req bq = {warmup, reps, ms_each};
  return tl_context_end(ctx, cuda_call(ctx, k, args, nargs, stream, outputs, &bq));
}
