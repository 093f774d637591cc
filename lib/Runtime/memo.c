/* The call memo (lib/Runtime/kernel.h tl_rt_memo): the host-side fast path
 * of tl_kernel_call for a call that repeats the previous one (a few
 * hundred nanoseconds above cuLaunchKernel, also with many arguments and
 * with tensor maps; docs/performance.md).
 *
 * Algorithm: a successful CUDA call records its arguments as a flat key of
 * 64-bit words (key_write: per tensor a header word with the kind and
 * whether strides are given, then data, device, ndim and dtype, byte_offset
 * and the shape and strides values; per scalar its kind and value bits) with what
 * tl_rt_bind made of them (symbols, scalar values, parameter slots, grid,
 * block, shared memory, output shapes) and, when every tensor map is over
 * an input, the encoded maps.  The next call walks its arguments against
 * the key word for word under the kernel's mutex; equal keys mean equal
 * tl_rt_bind inputs (tl_rt_bind reads nothing else but the signature, which
 * does not change), so the binding, every check of it included (dtype,
 * shape, strides, alignment of data + byte_offset, device), is the recorded
 * one.  A difference in any word is a miss: the full binder checks the call
 * and reports its errors as always.  Checks that depend on more than the
 * arguments (the pointers' device ordinal, the stream's context, the
 * limits of the device) are not part of this and still run on each call
 * (call.c). */
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "Runtime/kernel.h"

/* A tensor's device (type and id), and its ndim with its dtype, each as one
 * 64-bit word read straight from the DLTensor (DLPack's ABI lays them out
 * so). */
_Static_assert(sizeof(DLDevice) == 8 && sizeof(DLDataType) == 4 &&
                   offsetof(DLTensor, dtype) == offsetof(DLTensor, ndim) + 4,
               "DLTensor's device, ndim and dtype as 64-bit words");
static inline uint64_t dev_word(const DLTensor *t) {
  uint64_t w;
  memcpy(&w, &t->device, 8);
  return w;
}
static inline uint64_t ndim_dtype_word(const DLTensor *t) {
  uint64_t w;
  memcpy(&w, &t->ndim, 8);
  return w;
}

#define HEAD_NULL_TENSOR (UINT64_C(1) << 32)
#define HEAD_STRIDES (UINT64_C(1) << 33)

/* The key's header word of argument a: its kind; for a tensor whether it
 * is NULL or has strides. */
static inline uint64_t arg_head(const tl_arg *a) {
  uint64_t h = (uint64_t)(uint32_t)a->kind;
  if (a->kind != TL_ARG_TENSOR) return h;
  if (!a->v.tensor) return h | HEAD_NULL_TENSOR;
  return h | (a->v.tensor->strides ? HEAD_STRIDES : 0);
}

/* Writes the key of args into w (w NULL: only counts); returns its length
 * in words, or SIZE_MAX when an argument cannot be keyed (a tensor with a
 * negative ndim or a NULL shape array: the binder reports it).  Per tensor:
 * header, data, device, ndim and dtype, byte_offset, shape, strides; per
 * scalar: header, value bits. */
static size_t key_write(const tl_arg *args, size_t nargs, uint64_t *w) {
  size_t n = 0;
#define PUT(x) (w ? (void)(w[n] = (x)) : (void)0, n++)
  for (size_t i = 0; i < nargs; i++) {
    const tl_arg *a = &args[i];
    PUT(arg_head(a));
    if (a->kind == TL_ARG_INT) {
      PUT((uint64_t)a->v.i);
    } else if (a->kind == TL_ARG_FLOAT) {
      uint64_t bits;
      memcpy(&bits, &a->v.f, sizeof bits);
      PUT(bits);
    } else if (a->kind == TL_ARG_TENSOR && a->v.tensor) {
      const DLTensor *t = a->v.tensor;
      if (t->ndim < 0 || (t->ndim > 0 && !t->shape)) return SIZE_MAX;
      PUT((uint64_t)(uintptr_t)t->data);
      PUT(dev_word(t));
      PUT(ndim_dtype_word(t));
      PUT(t->byte_offset);
      for (int d = 0; d < t->ndim; d++) PUT((uint64_t)t->shape[d]);
      for (int d = 0; t->strides && d < t->ndim; d++) PUT((uint64_t)t->strides[d]);
    }
  }
#undef PUT
  return n;
}

/* Whether args' key is w[0..n) (key_write's words, in the same order). */
static bool key_equal(const tl_arg *args, size_t nargs, const uint64_t *w, size_t n) {
  const uint64_t *end = w + n;
  for (size_t i = 0; i < nargs; i++) {
    const tl_arg *a = &args[i];
    if (a->kind == TL_ARG_TENSOR && a->v.tensor) {
      const DLTensor *t = a->v.tensor;
      if (end - w < 5) return false;
      uint64_t diff = (w[0] ^ arg_head(a)) | (w[1] ^ (uint64_t)(uintptr_t)t->data) | (w[2] ^ dev_word(t)) |
                      (w[3] ^ ndim_dtype_word(t)) | (w[4] ^ t->byte_offset);
      if (diff) return false;
      /* ndim and the strides' presence equal the key's: ndim >= 0 */
      size_t nd = (size_t)t->ndim;
      w += 5;
      if ((size_t)(end - w) < nd * (t->strides ? 2 : 1) || (nd > 0 && !t->shape)) return false;
      for (size_t d = 0; d < nd; d++) diff |= w[d] ^ (uint64_t)t->shape[d];
      w += nd;
      if (t->strides) {
        for (size_t d = 0; d < nd; d++) diff |= w[d] ^ (uint64_t)t->strides[d];
        w += nd;
      }
      if (diff) return false;
    } else {
      if (w == end || *w++ != arg_head(a)) return false;
      if (a->kind == TL_ARG_INT || a->kind == TL_ARG_FLOAT) {
        uint64_t bits;
        memcpy(&bits, a->kind == TL_ARG_INT ? (const void *)&a->v.i : (const void *)&a->v.f, sizeof bits);
        if (w == end || *w++ != bits) return false;
      }
    }
  }
  return w == end;
}

/* The binding's scalar fields the memo keeps (grid is copied beside them). */
#define LAUNCH_FIELDS(X) X(device) X(any_tensor) X(empty) X(block) X(smem)

void tl_rt_memo_free(tl_rt_memo *m) {
  free(m->key);
  free(m->image);
  free(m->maps);
  memset(m, 0, sizeof *m);
}

/* The words of b's block from symv to the end of the kernel's parameter
 * slots (tl_rt_binding_init lays out symv, scalarv, slots one after the
 * other): what a call memo copies in one go. */
static size_t image_words(const tl_rt_sig *sig, const tl_rt_binding *b) {
  return (size_t)((b->slots + sig->nparams + sig->nsyms) - (const uint64_t *)b->symv);
}

/* The memo's arrays for sig and binding layout b: false on OOM. */
static bool memo_alloc(tl_rt_memo *m, const tl_rt_sig *sig, const tl_rt_binding *b) {
  if (m->image) return true;
  size_t np = (size_t)sig->nparams, nod = 0;
  for (int j = 0; j < sig->nout; j++) nod += (size_t)sig->params[sig->out_idx[j]].ndim;
  size_t ni = image_words(sig, b), words = ni + np + nod + 1;
  uint64_t *q = calloc(words, sizeof *q);
  if (!q) return false;
  m->image = q;
  m->nimage = ni;
  m->out_bytes = (size_t *)(q + ni);
  m->out_dims = (int64_t *)(q + ni + np);
  if (sig->ntma > 0 && !(m->maps = malloc((size_t)sig->ntma * 128))) {
    free(m->image);
    m->image = NULL;
    return false;
  }
  return true;
}

void tl_rt_memo_store(tl_kernel *k, const tl_arg *args, size_t nargs, const tl_rt_binding *b, bool maps_ok) {
  const tl_rt_sig *sig = &k->sig;
  size_t n = key_write(args, nargs, NULL);
  pthread_mutex_lock(&k->mu);
  tl_rt_memo *m = &k->memo;
  m->valid = false;
  if (n == SIZE_MAX || !memo_alloc(m, sig, b)) goto out;
  if (n > m->key_cap) {
    uint64_t *key = realloc(m->key, (n + 1) * sizeof *key);
    if (!key) goto out;
    m->key = key;
    m->key_cap = n + 1;
  }
  key_write(args, nargs, m->key);
  m->nkey = n;
  m->nargs = nargs;
#define TO_MEMO(f) m->f = b->f;
  LAUNCH_FIELDS(TO_MEMO)
#undef TO_MEMO
  memcpy(m->grid, b->grid, sizeof m->grid);
  memcpy(m->image, b->symv, sizeof(uint64_t) * m->nimage);
  size_t slot0 = (size_t)(b->slots - (const uint64_t *)b->symv), od = 0;
  for (int j = 0; j < sig->nout; j++) {
    int pi = sig->out_idx[j], nd = sig->params[pi].ndim;
    m->image[slot0 + (size_t)pi] = 0; /* this call's allocation: the next allocates its own */
    m->out_bytes[pi] = b->out_bytes[pi];
    if (nd > 0) memcpy(m->out_dims + od, b->out_shapes[pi], sizeof(int64_t) * (size_t)nd);
    od += (size_t)nd;
  }
  m->maps_valid = false;
  if (sig->ntma > 0 && maps_ok && b->tma_maps) {
    bool inputs_only = true;
    for (int i = 0; i < sig->ntma; i++) inputs_only &= !sig->params[sig->tma[i].param].is_output;
    if (inputs_only) {
      memcpy(m->maps, b->tma_maps, (size_t)sig->ntma * 128);
      m->maps_valid = true;
    }
  }
  m->valid = true;
out:
  pthread_mutex_unlock(&k->mu);
}

bool tl_rt_memo_lookup(tl_kernel *k, const tl_arg *args, size_t nargs, tl_rt_binding *b) {
  const tl_rt_sig *sig = &k->sig;
  if (nargs > 0 && !args) return false;
  if (!tl_rt_binding_init(sig, b, false)) {
    tl_rt_binding_free(b);
    return false;
  }
  pthread_mutex_lock(&k->mu);
  tl_rt_memo *m = &k->memo;
  bool hit = m->valid && m->nargs == nargs && key_equal(args, nargs, m->key, m->nkey);
  if (hit) {
#define TO_BINDING(f) b->f = m->f;
    LAUNCH_FIELDS(TO_BINDING)
#undef TO_BINDING
    memcpy(b->grid, m->grid, sizeof b->grid);
    memcpy(b->symv, m->image, sizeof(uint64_t) * m->nimage); /* symv, scalarv, slots */
    size_t od = 0;
    for (int j = 0; j < sig->nout && hit; j++) {
      int pi = sig->out_idx[j], nd = sig->params[pi].ndim;
      int64_t *shape = calloc((size_t)nd + 1, sizeof(int64_t));
      if (!shape) hit = false;
      else {
        memcpy(shape, m->out_dims + od, sizeof(int64_t) * (size_t)nd);
        b->out_shapes[pi] = shape;
        b->out_bytes[pi] = m->out_bytes[pi];
      }
      od += (size_t)nd;
    }
    if (hit && m->maps_valid) {
      if (!tl_rt_tma_bind_maps(sig, (size_t)(sig->nparams + sig->nsyms), b)) hit = false;
      else {
        memcpy(b->tma_maps, m->maps, (size_t)sig->ntma * 128);
        b->maps_ready = true;
      }
    }
  }
  pthread_mutex_unlock(&k->mu);
  if (!hit) tl_rt_binding_free(b);
  return hit;
}
