/* Kernel workspaces on the GPU (lib/Runtime/kernel.h tl_rt_ws_prepare):
 * the zeroed global scratch memory a kernel's hidden pointer parameters
 * after the tensor maps point to (stream-K's slots and tile counters,
 * lib/Lower/Hopper/stream_k.c; T.alloc_global's buffers; docs/simt-ir.md
 * "Stream-K" and "Kernel workspaces").
 *
 * Algorithm: per device slot, a small list of (stream, allocation); the
 * first launch on a stream allocates every workspace of the kernel in one
 * cuMemAlloc (each at a 256-byte aligned offset) and zeroes it with
 * cuMemsetD8Async on that stream, so the zeroing is ordered before the
 * launch without a host synchronisation.  The kernel leaves its counters
 * at zero when it completes, so later launches on the stream reuse the
 * memory as it is; launches on one stream are ordered, and different
 * streams have their own, so no two launches in flight share one.
 * T.alloc_global's buffers (sig->ws_zero) are zeroed again by a
 * cuMemsetD8Async on the stream before every later launch, so nothing a
 * launch left there reaches the next one (TileLang allocates them per
 * call, uninitialised; zero is the deterministic choice).  A
 * repeated call costs one lock and a compare per list entry (usually one).
 * Caveat: a stream destroyed while the kernel still runs on it and a new
 * stream that gets the same handle would share the workspace. */
#include <stdlib.h>
#include <string.h>

#include "Runtime/kernel.h"
#include "Support/context.h"

static int64_t ws_offset(const tl_rt_sig *sig, int i) {
  int64_t off = 0;
  for (int j = 0; j < i; j++) off += (sig->ws_bytes[j] + 255) & ~(int64_t)255;
  return off;
}

tl_status tl_rt_ws_prepare(tl_context *ctx, const tl_driver *drv, tl_kernel *k, tl_rt_devslot *s, void *stream,
                           tl_rt_binding *b) {
  const tl_rt_sig *sig = &k->sig;
  if (sig->nws <= 0) return TL_OK;
  pthread_mutex_lock(&k->mu);
  tl_CUdeviceptr base = 0;
  for (int i = 0; i < s->nws; i++)
    if (s->ws[i].stream == stream) base = s->ws[i].ptr;
  tl_CUresult r = TL_CUDA_SUCCESS;
  const char *what = NULL;
  bool fresh = !base; /* a new allocation: zeroed whole below */
  if (!base) {
    size_t total = (size_t)ws_offset(sig, sig->nws);
    if (s->nws == s->ws_cap) {
      int cap = s->ws_cap ? 2 * s->ws_cap : 4;
      struct tl_rt_ws *w = realloc(s->ws, sizeof *w * (size_t)cap);
      if (!w) {
        pthread_mutex_unlock(&k->mu);
        return tl_context_fail(ctx, TL_ERR_NO_MEMORY, "out of memory");
      }
      s->ws = w;
      s->ws_cap = cap;
    }
    if ((r = drv->cuMemAlloc(&base, total)) != TL_CUDA_SUCCESS) what = "cuMemAlloc";
    else if ((r = drv->cuMemsetD8Async(base, 0, total, (tl_CUstream)stream)) != TL_CUDA_SUCCESS) {
      drv->cuMemFree(base);
      what = "cuMemsetD8Async";
    } else {
      s->ws[s->nws].stream = stream;
      s->ws[s->nws].ptr = base;
      s->nws++;
    }
  }
  for (int i = 0; !fresh && base && !what && i < sig->nws; i++) /* T.alloc_global: zero per launch */
    if (sig->ws_zero[i] && (r = drv->cuMemsetD8Async(base + (tl_CUdeviceptr)ws_offset(sig, i), 0,
                                                     (size_t)sig->ws_bytes[i], (tl_CUstream)stream)) != TL_CUDA_SUCCESS)
      what = "cuMemsetD8Async";
  pthread_mutex_unlock(&k->mu);
  if (what)
    return tl_driver_fail(ctx, r, "%s of the %lld-byte workspace of kernel '%s'", what,
                          (long long)ws_offset(sig, sig->nws), k->name);
  for (int i = 0; i < sig->nws; i++) b->ws_ptr[i] = (uint64_t)base + (uint64_t)ws_offset(sig, i);
  return TL_OK;
}

void tl_rt_ws_free(const tl_driver *drv, tl_rt_devslot *s) {
  for (int i = 0; i < s->nws; i++) drv->cuMemFree(s->ws[i].ptr);
  s->nws = 0;
}
