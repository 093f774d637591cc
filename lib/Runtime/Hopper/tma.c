/* Tensor maps at call time (docs/simt-ir.md "TMA tensor copies", kernel
 * ABI): each map of the kernel (tl_rt_sig.tma, from tl_tma_collect) is
 * encoded with cuTensorMapEncodeTiled from the bound DLPack tensor and
 * passed as a 128-byte kernel parameter after all others.
 *
 * Algorithm: tl_rt_tma_args turns (map, tensor) into the encode arguments
 * (CUDA driver API cuTensorMapEncodeTiled: dims = the shape reversed,
 * innermost first; globalStrides = the byte strides of dims 1..r-1
 * reversed; box reversed; elementStrides 1; INTERLEAVE_NONE; the swizzle;
 * L2_PROMOTION_L2_128B; FLOAT_OOB_FILL_NONE, i.e. zeros) and into a cache
 * key (data pointer, shape, strides, dtype, box, swizzle, device);
 * tl_rt_tma_fill keeps, per map index, the last key and its map, so that a
 * repeated call with the same tensors encodes nothing.  The driver's rules
 * (16-byte aligned address, strides multiples of 16 bytes below 2^40, dims
 * 1..2^32, innermost stride 1, box inner bytes a multiple of 16) are
 * checked here only to name the broken one in the error message. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "Runtime/kernel.h"
#include "Support/context.h"

/* CUtensorMapDataType (cuda.h) of a dtype; -1 when there is none. */
static int map_data_type(tl_dtype t) {
  switch (t.code) {
  case TL_TYPE_FLOAT: return t.bits == 16 ? 6 : t.bits == 32 ? 7 : t.bits == 64 ? 8 : -1;
  case TL_TYPE_BFLOAT: return t.bits == 16 ? 9 : -1;
  case TL_TYPE_UINT: return t.bits == 8 ? 0 : t.bits == 16 ? 1 : t.bits == 32 ? 2 : t.bits == 64 ? 4 : -1;
  case TL_TYPE_INT: return t.bits == 8 ? 0 : t.bits == 16 ? 1 : t.bits == 32 ? 3 : t.bits == 64 ? 5 : -1;
  case TL_TYPE_FLOAT8_E4M3:
  case TL_TYPE_FLOAT8_E5M2: return 0; /* CU_TENSOR_MAP_DATA_TYPE_UINT8: TMA moves bytes */
  default: return -1;
  }
}

bool tl_rt_tma_args(const tl_rt_tma *m, const DLTensor *t, tl_dtype dtype, int device, tl_rt_tma_key *key,
                    tl_rt_tma_encode *enc, const char **rule) {
  memset(key, 0, sizeof *key);
  memset(enc, 0, sizeof *enc);
  *rule = NULL;
  int r = m->rank, eb = tl_dtype_bytes(dtype);
  enc->data_type = map_data_type(dtype);
  if (enc->data_type < 0) {
    *rule = "the dtype has no tensor-map data type";
    return false;
  }
  if (t->ndim != r) {
    *rule = "the tensor's rank differs from the map's";
    return false;
  }
  key->addr = enc->addr = (uint64_t)(uintptr_t)t->data + t->byte_offset;
  key->dtype = dtype;
  key->rank = r;
  key->swizzle = m->swizzle;
  key->device = device;
  enc->rank = (uint32_t)r;
  int64_t compact = 1;
  for (int d = r - 1; d >= 0; d--) {
    key->shape[d] = t->shape[d];
    key->strides[d] = t->strides ? t->strides[d] : compact;
    compact *= t->shape[d];
    key->box[d] = m->box[d];
    int j = r - 1 - d; /* the driver's index: innermost first */
    enc->dims[j] = (uint64_t)t->shape[d];
    enc->box[j] = m->box[d];
    enc->elem_strides[j] = 1;
    if (j > 0) enc->strides[j - 1] = (uint64_t)(key->strides[d] * eb);
  }
  enc->interleave = 0; /* CU_TENSOR_MAP_INTERLEAVE_NONE */
  enc->swizzle = m->swizzle == 128 ? 3 : m->swizzle == 64 ? 2 : m->swizzle == 32 ? 1 : 0;
  enc->l2_promotion = 2; /* CU_TENSOR_MAP_L2_PROMOTION_L2_128B */
  enc->oob_fill = 0;     /* CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE */
  if (enc->addr % 16) *rule = "the tensor's address is not 16-byte aligned";
  for (int d = 0; d < r && !*rule; d++)
    if (t->shape[d] < 1 || (uint64_t)t->shape[d] > (UINT64_C(1) << 32)) *rule = "a dimension is not 1 to 2^32";
  if (!*rule && key->strides[r - 1] != 1) *rule = "the innermost dimension is not contiguous (stride 1)";
  for (int j = 0; j + 1 < r && !*rule; j++)
    if (enc->strides[j] % 16 || enc->strides[j] >= (UINT64_C(1) << 40))
      *rule = "a stride is not a multiple of 16 bytes below 2^40";
  return true;
}

tl_rt_tma_cache *tl_rt_tma_cache_new(int n) {
  tl_rt_tma_cache *c = calloc(1, sizeof *c);
  if (!c) return NULL;
  c->slot = calloc((size_t)(n > 0 ? n : 1), sizeof *c->slot);
  if (!c->slot) {
    free(c);
    return NULL;
  }
  c->n = n;
  return c;
}

void tl_rt_tma_cache_free(tl_rt_tma_cache *c) {
  if (!c) return;
  free(c->slot);
  free(c);
}

static void box_text(char *buf, size_t n, const tl_rt_tma *m) {
  size_t at = 0;
  buf[0] = 0;
  for (int d = 0; d < m->rank && at < n; d++) at += (size_t)snprintf(buf + at, n - at, "%s%u", d ? "x" : "", m->box[d]);
}

tl_status tl_rt_tma_fill(tl_context *ctx, const tl_rt_sig *sig, const DLTensor *const *tensors, int device,
                         tl_rt_tma_cache *cache, tl_rt_tma_encoder enc, uint8_t *maps) {
  for (int i = 0; i < sig->ntma; i++) {
    const tl_rt_tma *m = &sig->tma[i];
    const tl_rt_param *p = &sig->params[m->param];
    char box[64]; /* for the messages only */
    tl_rt_tma_key key;
    tl_rt_tma_encode a;
    const char *rule = NULL;
    if (!tl_rt_tma_args(m, tensors[m->param], p->dtype, device, &key, &a, &rule))
      return box_text(box, sizeof box, m),
             tl_context_fail(ctx, TL_ERR_INVALID_ARGUMENT, "tensor map #%d of argument '%s' (box %s, swizzle %d): %s",
                             i, p->name, box, m->swizzle, rule);
    struct tl_rt_tma_slot *s = cache && i < cache->n ? &cache->slot[i] : NULL;
    if (s && s->valid && memcmp(&s->key, &key, sizeof key) == 0) {
      memcpy(maps + 128 * i, s->map, 128);
      continue;
    }
    if (!enc)
      return tl_context_fail(ctx, TL_ERR_UNSUPPORTED,
                             "tensor map #%d of argument '%s': the CUDA driver has no cuTensorMapEncodeTiled", i,
                             p->name);
    if (cache) cache->encodes++;
    tl_CUresult r = enc(maps + 128 * i, a.data_type, a.rank, (void *)(uintptr_t)a.addr, a.dims, a.strides, a.box,
                        a.elem_strides, a.interleave, a.swizzle, a.l2_promotion, a.oob_fill);
    if (r != TL_CUDA_SUCCESS)
      return box_text(box, sizeof box, m),
             tl_context_fail(ctx, TL_ERR_CUDA,
                             "tensor map #%d of argument '%s' (box %s, swizzle %d): cuTensorMapEncodeTiled failed: "
                             "%s (%s)",
                             i, p->name, box, m->swizzle, tl_driver_error_name(r),
                             rule ? rule : "no rule of the driver's documentation is broken");
    if (s) {
      s->valid = true;
      s->key = key;
      memcpy(s->map, maps + 128 * i, 128);
    }
  }
  return TL_OK;
}

bool tl_rt_tma_bind_maps(const tl_rt_sig *sig, size_t first, tl_rt_binding *b) {
  if (sig->ntma <= 0) return true;
  b->tma_maps = sig->ntma <= TL_RT_BINDING_INLINE_MAPS ? b->inline_maps[0] : aligned_alloc(64, (size_t)sig->ntma * 128);
  if (!b->tma_maps) return false;
  memset(b->tma_maps, 0, (size_t)sig->ntma * 128);
  for (int i = 0; i < sig->ntma; i++) b->kargs[first + (size_t)i] = b->tma_maps + 128 * i;
  return true;
}

tl_status tl_rt_tma_prepare(tl_context *ctx, tl_kernel *k, tl_rt_devslot *s, const tl_arg *args,
                            const DLTensor *const *outputs, tl_rt_tma_encoder enc, tl_rt_binding *b) {
  const tl_rt_sig *sig = &k->sig;
  const DLTensor *small[16] = {0}; /* no allocation per call for up to 15 parameters */
  const DLTensor **tens = sig->nparams < 16 ? small : calloc((size_t)sig->nparams + 1, sizeof *tens);
  if (!tens) return tl_context_fail(ctx, TL_ERR_NO_MEMORY, "out of memory");
  for (int pi = 0, pos = 0; pi < sig->nparams; pi++) {
    if (sig->params[pi].is_output) continue;
    if (sig->params[pi].is_tensor) tens[pi] = args[pos].v.tensor;
    pos++;
  }
  for (int j = 0; outputs && j < sig->nout; j++) tens[sig->out_idx[j]] = outputs[j];
  tl_status st = TL_OK;
  for (int i = 0; i < sig->ntma && st == TL_OK; i++)
    if (!tens[sig->tma[i].param])
      st = tl_context_fail(ctx, TL_ERR_UNSUPPORTED,
                           "tensor map #%d is over the out_idx output '%s', which is not allocated yet "
                           "(tl_kernel_launch_info cannot encode it)",
                           i, sig->params[sig->tma[i].param].name);
  pthread_mutex_lock(&k->mu);
  if (st == TL_OK && (!tl_rt_tma_bind_maps(sig, (size_t)(sig->nparams + sig->nsyms), b) ||
                      (!s->tma_cache && !(s->tma_cache = tl_rt_tma_cache_new(sig->ntma)))))
    st = tl_context_fail(ctx, TL_ERR_NO_MEMORY, "out of memory");
  if (st == TL_OK) st = tl_rt_tma_fill(ctx, sig, tens, b->device, s->tma_cache, enc, b->tma_maps);
  pthread_mutex_unlock(&k->mu);
  if (tens != small) free(tens);
  return st;
}
