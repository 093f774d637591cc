/* tl-run's host inputs for T.StridedTensor parameters (issue 15; strided.h):
 * tl-run allocates each input with the strides the kernel declares, which
 * the runtime's binder checks (lib/Runtime/bind.c), instead of compact ones
 * that it refuses. */
#include "strided.h"

#include <string.h>

static bool sym_value(const tlr_syms *s, const char *name, int64_t *v) {
  for (int i = 0; i < s->n; i++)
    if (!strcmp(s->name[i], name)) {
      *v = s->v[i];
      return true;
    }
  return false;
}

bool tlr_param_strides(const tl_kernel *k, int pi, int ndim, const int64_t *shape, size_t elem_bytes, tlr_syms *syms,
                       int64_t *strides, size_t *span) {
  const char *names[8] = {NULL};
  bool known[8] = {false}, any = false;
  for (int d = 0; d < ndim; d++) {
    known[d] = tl_kernel_param_stride(k, pi, d, &strides[d], &names[d]);
    known[d] = known[d] || (names[d] && sym_value(syms, names[d], &strides[d]));
    any = any || known[d] || names[d];
  }
  if (!any) return false;
  bool ovf = false;
  for (int d = ndim - 1; d >= 0; d--) { /* innermost first: a chosen stride lies beyond the known dims */
    if (!known[d] && names[d] && sym_value(syms, names[d], &strides[d])) known[d] = true; /* (ld, ld) */
    if (known[d]) continue;
    int64_t far = 1;
    for (int e = 0; e < ndim; e++) {
      int64_t x;
      if (e == d || !known[e]) continue;
      ovf |= __builtin_mul_overflow(strides[e], shape[e] > 0 ? shape[e] : 1, &x);
      if (x > far) far = x;
    }
    strides[d] = far;
    known[d] = true;
    if (names[d] && syms->n < 64) syms->name[syms->n] = names[d], syms->v[syms->n++] = far;
  }
  size_t n = 1, bytes;
  bool empty = false;
  for (int d = 0; d < ndim; d++) {
    int64_t x;
    if (shape[d] <= 0) {
      empty = true;
      continue;
    }
    ovf |= __builtin_mul_overflow(shape[d] - 1, strides[d], &x) || __builtin_add_overflow(n, (size_t)x, &n);
  }
  if (empty) n = 0;
  *span = ovf || __builtin_mul_overflow(n, elem_bytes, &bytes) || bytes > SIZE_MAX / 2 ? SIZE_MAX : n;
  return true;
}

/* Copies between the row-major buffer flat and strided t: to flat
 * (gather) or from it. */
static void copy_strided(void *flat, const DLTensor *t, size_t elem_bytes, bool gather) {
  int64_t idx[8] = {0};
  size_t n = 1;
  for (int d = 0; d < t->ndim; d++) n *= t->shape[d] > 0 ? (size_t)t->shape[d] : 0;
  char *base = (char *)t->data + t->byte_offset;
  for (size_t e = 0; e < n; e++) {
    int64_t off = 0;
    for (int d = 0; d < t->ndim; d++) off += idx[d] * t->strides[d];
    char *f = (char *)flat + e * elem_bytes, *s = base + (size_t)off * elem_bytes;
    memcpy(gather ? f : s, gather ? s : f, elem_bytes);
    for (int d = t->ndim - 1; d >= 0 && ++idx[d] == t->shape[d]; d--) idx[d] = 0;
  }
}

void tlr_gather(void *dst, const DLTensor *t, size_t elem_bytes) { copy_strided(dst, t, elem_bytes, true); }

void tlr_scatter(const DLTensor *t, const void *src, size_t elem_bytes) {
  copy_strided((void *)(uintptr_t)src, t, elem_bytes, false);
}
