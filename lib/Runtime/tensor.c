/* Tensor helpers of the C API (lib/Runtime): tl_tensor_alloc and
 * tl_tensor_copy, so that tools and tests can move data between the host
 * and a GPU without linking the CUDA runtime.
 *
 * Algorithm: host tensors are aligned_alloc(64) blocks; CUDA tensors are
 * cuMemAlloc_v2 blocks in the device's primary context, which the tensor
 * retains until its deleter runs (as tl_kernel_call's outputs).  A copy
 * checks that both tensors are compact and hold the same number of bytes,
 * then uses memcpy or cuMemcpy{HtoD,DtoH,DtoD}_v2 after cuCtxSynchronize
 * (these copies are synchronous with respect to the host; the synchronize
 * orders them after kernels launched on other streams of the context).
 * Driver entry points: CUDA driver API, cuda.h of CUDA 13. */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "Runtime/kernel.h"
#include "Support/context.h"

typedef struct tensor_block {
  DLManagedTensor managed;
  void *host;          /* kDLCPU data */
  tl_CUdeviceptr dptr; /* kDLCUDA data */
  tl_CUcontext pctx;   /* retained primary context (CUDA) */
  tl_CUdevice dev;
  int64_t shape[];
} tensor_block;

static void block_free(tensor_block *o) {
  if (!o) return;
  free(o->host);
  tl_driver_free_retained(o->dptr, o->pctx, o->dev);
  free(o);
}

static void block_deleter(DLManagedTensor *self) {
  if (self) block_free((tensor_block *)self->manager_ctx);
}

/* Bytes of a compact tensor; false on overflow or a negative dim. */
static bool tensor_bytes(int ndim, const int64_t *shape, DLDataType dt, size_t *out) {
  uint64_t n = 1;
  for (int d = 0; d < ndim; d++) {
    if (shape[d] < 0 || __builtin_mul_overflow(n, (uint64_t)shape[d], &n)) return false;
  }
  uint64_t elem = ((uint64_t)dt.bits * (dt.lanes ? dt.lanes : 1) + 7) / 8;
  if (__builtin_mul_overflow(n, elem, &n) || n > SIZE_MAX) return false;
  *out = (size_t)n;
  return true;
}

static bool is_compact(const DLTensor *t) {
  if (!t->strides) return true;
  int64_t expect = 1;
  for (int d = t->ndim - 1; d >= 0; d--) {
    if (t->shape[d] != 1 && t->strides[d] != expect) return false;
    expect *= t->shape[d];
  }
  return true;
}

tl_status tl_tensor_alloc(tl_context *ctx, DLDevice device, int ndim, const int64_t *shape, DLDataType dtype,
                          DLManagedTensor **out) {
  if (!ctx) return TL_ERR_INVALID_ARGUMENT;
  tl_context_begin(ctx);
  if (out) *out = NULL;
  size_t bytes = 0;
  if (!out || ndim < 0 || (ndim > 0 && !shape))
    return tl_context_end(ctx, tl_context_fail(ctx, TL_ERR_INVALID_ARGUMENT, "tl_tensor_alloc: %s",
                                               !out       ? "out is NULL"
                                               : ndim < 0 ? "ndim is negative"
                                                          : "shape is NULL"));
  if (!tensor_bytes(ndim, shape, dtype, &bytes))
    return tl_context_end(ctx, tl_context_fail(ctx, TL_ERR_INVALID_ARGUMENT,
                                               "tl_tensor_alloc: a negative dim or a size "
                                               "that overflows"));
  if (device.device_type != kDLCPU && device.device_type != kDLCUDA)
    return tl_context_end(ctx, tl_context_fail(ctx, TL_ERR_INVALID_ARGUMENT,
                                               "tl_tensor_alloc: device type %d is not cpu or "
                                               "cuda",
                                               (int)device.device_type));
  tensor_block *o = calloc(1, sizeof *o + sizeof(int64_t) * (size_t)(ndim + 1));
  if (!o) return tl_context_end(ctx, tl_context_fail(ctx, TL_ERR_NO_MEMORY, "out of memory"));
  tl_status st = TL_OK;
  void *data = NULL;
  if (device.device_type == kDLCPU) {
    size_t alloc = (bytes + 63) / 64 * 64;
    if (!(o->host = aligned_alloc(64, alloc ? alloc : 64))) {
      st = tl_context_fail(ctx, TL_ERR_NO_MEMORY, "out of memory allocating %zu bytes", bytes);
      goto fail;
    }
    data = o->host;
  } else {
    const char *why = NULL;
    const tl_driver *drv = tl_driver_get(&why);
    if (!drv) {
      st = tl_context_fail(ctx, TL_ERR_NO_DEVICE, "%s", why);
      goto fail;
    }
    if (device.device_id < 0 || device.device_id >= tl_driver_device_count()) {
      st = tl_context_fail(ctx, TL_ERR_INVALID_ARGUMENT, "device cuda:%d does not exist", device.device_id);
      goto fail;
    }
    tl_CUresult r;
    int id = device.device_id;
    if ((r = drv->cuDeviceGet(&o->dev, id)) != TL_CUDA_SUCCESS) {
      st = tl_driver_fail(ctx, r, "tl_tensor_alloc: cuDeviceGet(%d)", id);
      goto fail;
    }
    if ((r = drv->cuDevicePrimaryCtxRetain(&o->pctx, o->dev)) != TL_CUDA_SUCCESS) {
      o->pctx = NULL;
      st = tl_driver_fail(ctx, r, "tl_tensor_alloc: cuDevicePrimaryCtxRetain of cuda:%d", id);
      goto fail;
    }
    tl_CUcontext dummy;
    if ((r = drv->cuCtxPushCurrent(o->pctx)) != TL_CUDA_SUCCESS) {
      st = tl_driver_fail(ctx, r, "tl_tensor_alloc: cuCtxPushCurrent of cuda:%d", id);
      goto fail;
    }
    r = drv->cuMemAlloc(&o->dptr, bytes ? bytes : 16);
    drv->cuCtxPopCurrent(&dummy);
    if (r != TL_CUDA_SUCCESS) {
      o->dptr = 0;
      st = tl_driver_fail(ctx, r, "tl_tensor_alloc: cuMemAlloc_v2 of %zu bytes on cuda:%d", bytes, id);
      goto fail;
    }
    data = (void *)(uintptr_t)o->dptr;
  }
  if (ndim > 0) memcpy(o->shape, shape, sizeof(int64_t) * (size_t)ndim);
  DLTensor *t = &o->managed.dl_tensor;
  t->data = data;
  t->device = device;
  t->ndim = ndim;
  t->dtype = dtype;
  t->shape = o->shape;
  t->strides = NULL;
  t->byte_offset = 0;
  o->managed.manager_ctx = o;
  o->managed.deleter = block_deleter;
  *out = &o->managed;
  return tl_context_end(ctx, TL_OK);
fail:
  block_free(o);
  return tl_context_end(ctx, st);
}

tl_status tl_tensor_copy(tl_context *ctx, DLTensor *dst, const DLTensor *src) {
  if (!ctx) return TL_ERR_INVALID_ARGUMENT;
  tl_context_begin(ctx);
  if (!dst || !src || (!dst->data && dst->ndim >= 0) || !src->data)
    return tl_context_end(
        ctx, tl_context_fail(ctx, TL_ERR_INVALID_ARGUMENT, "tl_tensor_copy: a NULL tensor or data pointer"));
  size_t nd = 0, ns = 0;
  if ((dst->ndim > 0 && !dst->shape) || (src->ndim > 0 && !src->shape) ||
      !tensor_bytes(dst->ndim, dst->shape, dst->dtype, &nd) || !tensor_bytes(src->ndim, src->shape, src->dtype, &ns))
    return tl_context_end(ctx, tl_context_fail(ctx, TL_ERR_INVALID_ARGUMENT, "tl_tensor_copy: bad shape"));
  if (nd != ns)
    return tl_context_end(
        ctx, tl_context_fail(ctx, TL_ERR_INVALID_ARGUMENT, "tl_tensor_copy: dst holds %zu bytes, src %zu", nd, ns));
  if (!is_compact(dst) || !is_compact(src))
    return tl_context_end(ctx,
                          tl_context_fail(ctx, TL_ERR_INVALID_ARGUMENT, "tl_tensor_copy: tensors must be compact"));
  int dt = dst->device.device_type, stp = src->device.device_type;
  if ((dt != kDLCPU && dt != kDLCUDA) || (stp != kDLCPU && stp != kDLCUDA))
    return tl_context_end(ctx,
                          tl_context_fail(ctx, TL_ERR_INVALID_ARGUMENT, "tl_tensor_copy: only cpu and cuda tensors"));
  char *dp = (char *)dst->data + dst->byte_offset;
  const char *sp = (const char *)src->data + src->byte_offset;
  if (dt == kDLCPU && stp == kDLCPU) {
    if (nd) memmove(dp, sp, nd);
    return tl_context_end(ctx, TL_OK);
  }
  const char *why = NULL;
  const tl_driver *drv = tl_driver_get(&why);
  if (!drv) return tl_context_end(ctx, tl_context_fail(ctx, TL_ERR_NO_DEVICE, "%s", why));
  if (!drv->cuMemcpyHtoD || !drv->cuMemcpyDtoH || !drv->cuMemcpyDtoD || !drv->cuCtxSynchronize)
    return tl_context_end(ctx,
                          tl_context_fail(ctx, TL_ERR_UNSUPPORTED, "the CUDA driver has no cuMemcpy*_v2 entry points"));
  int devid = dt == kDLCUDA ? dst->device.device_id : src->device.device_id;
  tl_CUdevice dev;
  tl_CUcontext pctx, dummy;
  tl_CUresult r;
  if ((r = drv->cuDeviceGet(&dev, devid)) != TL_CUDA_SUCCESS)
    return tl_context_end(ctx, tl_driver_fail(ctx, r, "tl_tensor_copy: cuDeviceGet(%d)", devid));
  if ((r = drv->cuDevicePrimaryCtxRetain(&pctx, dev)) != TL_CUDA_SUCCESS)
    return tl_context_end(ctx, tl_driver_fail(ctx, r, "tl_tensor_copy: cuDevicePrimaryCtxRetain of cuda:%d", devid));
  tl_status st = TL_OK;
  if ((r = drv->cuCtxPushCurrent(pctx)) != TL_CUDA_SUCCESS) {
    st = tl_driver_fail(ctx, r, "tl_tensor_copy: cuCtxPushCurrent of cuda:%d", devid);
  } else {
    if ((r = drv->cuCtxSynchronize()) != TL_CUDA_SUCCESS)
      st = tl_driver_fail(ctx, r,
                          "tl_tensor_copy: cuCtxSynchronize of cuda:%d before the copy (an earlier launch "
                          "failed?); nothing was copied",
                          devid);
    else if (nd == 0)
      ;
    else if (dt == kDLCUDA && stp == kDLCPU) r = drv->cuMemcpyHtoD((tl_CUdeviceptr)(uintptr_t)dp, sp, nd);
    else if (dt == kDLCPU) r = drv->cuMemcpyDtoH(dp, (tl_CUdeviceptr)(uintptr_t)sp, nd);
    else r = drv->cuMemcpyDtoD((tl_CUdeviceptr)(uintptr_t)dp, (tl_CUdeviceptr)(uintptr_t)sp, nd);
    if (st == TL_OK && r != TL_CUDA_SUCCESS)
      st = tl_driver_fail(ctx, r, "tl_tensor_copy: cuMemcpy%s_v2 of %zu bytes (%s -> %s:%d; dst is left undefined)",
                          dt == kDLCUDA && stp == kDLCPU ? "HtoD"
                          : dt == kDLCPU                 ? "DtoH"
                                                         : "DtoD",
                          nd, stp == kDLCPU ? "cpu" : "cuda", dt == kDLCPU ? "cpu" : "cuda", devid);
    drv->cuCtxPopCurrent(&dummy);
  }
  drv->cuDevicePrimaryCtxRelease(dev);
  return tl_context_end(ctx, st);
}
