/* tl-run's host inputs for T.StridedTensor parameters (issue 15): the element
 * strides to allocate them with, and the row-major copy of a strided tensor's
 * elements.  Used by tl-run.c only. */
#ifndef TL_RUN_STRIDED_H
#define TL_RUN_STRIDED_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "tilelang/runtime.h"

/* Values of the T.dynamic symbols that strides use, by name (the names point
 * into the kernel's signature): the dynamic dims' values first, then each
 * stride symbol as tlr_param_strides chooses it. */
typedef struct tlr_syms {
  const char *name[64];
  int64_t v[64];
  int n;
} tlr_syms;

/* Element strides of tensor parameter pi of k for shape[0..ndim) (ndim <= 8,
 * no dim negative): false (and nothing set) for a parameter without declared
 * strides (compact).  Else strides[] holds each declared constant; a stride
 * that is a T.dynamic symbol takes that symbol's value in syms, and when it
 * has none (added to syms) the span of the dims with known strides, so that
 * the dim lies beyond them (the compact stride when the others are compact).
 * *span: the elements to allocate, 1 + sum (shape[d] - 1) * strides[d] (0
 * for an empty tensor), SIZE_MAX when that or its size in bytes (elem_bytes
 * each) overflows. */
bool tlr_param_strides(const tl_kernel *k, int pi, int ndim, const int64_t *shape, size_t elem_bytes, tlr_syms *syms,
                       int64_t *strides, size_t *span);

/* Copies the elements of host tensor t (shape and strides, elem_bytes each)
 * to dst in row-major order. */
void tlr_gather(void *dst, const DLTensor *t, size_t elem_bytes);
/* The inverse: the row-major elements at src into host tensor t's strided
 * places (--input of a T.StridedTensor parameter). */
void tlr_scatter(const DLTensor *t, const void *src, size_t elem_bytes);

#endif
