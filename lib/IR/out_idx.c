/* out_idx normalization (lib/IR/out_idx.h): range, negative indices,
 * duplicates, scalar and T.StridedTensor parameters, in one place.
 *
 * Algorithm: one pass over the entries; a repeat is found against the
 * entries normalized before it (out_idx lists are short). */
#include "IR/out_idx.h"

#include <stdio.h>
#include <stdlib.h>

tl_out_idx_param tl_out_idx_param_of(const tl_param *p) {
  tl_out_idx_param d = {"?", TL_OUT_IDX_SCALAR, TL_LOC_NONE};
  if (p->kind == TL_PARAM_TENSOR && p->buffer) {
    d.name = p->buffer->name;
    d.kind = p->buffer->strides ? TL_OUT_IDX_STRIDED : TL_OUT_IDX_TENSOR;
    d.loc = p->buffer->loc;
  } else if (p->var) {
    d.name = p->var->name;
    d.loc = p->var->loc;
  }
  return d;
}

bool tl_out_idx_normalize(const tl_out_idx_param *params, int nparams, const int64_t *idx, size_t n, int *norm,
                          size_t *bad, char *msg, size_t msglen) {
  for (size_t j = 0; j < n; j++) {
    int64_t v = idx[j], w = v < 0 ? v + nparams : v;
    *bad = j;
    if (w < 0 || w >= nparams) {
      snprintf(msg, msglen, "out_idx %lld is out of range for %d parameter%s", (long long)v, nparams,
               nparams == 1 ? "" : "s");
      return false;
    }
    const tl_out_idx_param *p = &params[w];
    for (size_t q = 0; q < j; q++)
      if (norm[q] == (int)w) {
        snprintf(msg, msglen, "out_idx %lld names '%s' twice", (long long)v, p->name);
        return false;
      }
    if (p->kind == TL_OUT_IDX_SCALAR) {
      snprintf(msg, msglen, "out_idx %lld names '%s', a scalar parameter; outputs are tensors", (long long)v, p->name);
      return false;
    }
    if (p->kind == TL_OUT_IDX_STRIDED) {
      snprintf(msg, msglen,
               "out_idx %lld names '%s', a T.StridedTensor: an output is allocated compact (row-major), which "
               "its strides do not address; pass '%s' as an input",
               (long long)v, p->name, p->name);
      return false;
    }
    norm[j] = (int)w;
  }
  return true;
}

bool tl_out_idx_normalize_func(const tl_primfunc *f, const int64_t *idx, size_t n, int *norm, size_t *bad, char *msg,
                               size_t msglen) {
  tl_out_idx_param *ps = calloc((size_t)f->nparams + 1, sizeof *ps);
  if (!ps) {
    *bad = 0;
    snprintf(msg, msglen, "out of memory");
    return false;
  }
  for (int i = 0; i < f->nparams; i++) ps[i] = tl_out_idx_param_of(&f->params[i]);
  bool ok = tl_out_idx_normalize(ps, f->nparams, idx, n, norm, bad, msg, msglen);
  free(ps);
  return ok;
}
