/* out_idx normalization (internal): the one rule for TileLang's out_idx,
 * which the front end (a file's out_idx), the IR builder
 * (tl_builder_set_out_idx), the runtime (tl_compile_options.out_idx) and the
 * Python package (through tl_kernel_normalize_out_idx) all apply.
 *
 * out_idx follows TileLang (tilelang/jit/adapter/base.py): a list of
 * parameter indices, negative ones counting from the end (scalars count);
 * the listed parameters are left out of the call and allocated compact
 * (row-major) by it.  Refused: an index out of range, a parameter named
 * twice, a scalar parameter, and a T.StridedTensor parameter (its strides
 * address more than the compact allocation holds). */
#ifndef TL_IR_OUT_IDX_H
#define TL_IR_OUT_IDX_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "IR/tir.h"

/* What out_idx needs to know of a parameter. */
typedef enum tl_out_idx_kind {
  TL_OUT_IDX_TENSOR, /* a compact tensor: may be an output */
  TL_OUT_IDX_SCALAR, /* refused */
  TL_OUT_IDX_STRIDED /* a T.StridedTensor: refused */
} tl_out_idx_kind;

typedef struct tl_out_idx_param {
  const char *name;
  tl_out_idx_kind kind;
  tl_loc loc; /* the declaration, for located errors (TL_LOC_NONE when unknown) */
} tl_out_idx_param;

/* The out_idx description of tile IR parameter p. */
tl_out_idx_param tl_out_idx_param_of(const tl_param *p);

/* Normalizes idx[0..n) against params[0..nparams) into norm[0..n) (each in
 * 0..nparams-1, in the given order).  On failure returns false with *bad =
 * the index into idx of the refused entry and msg (msglen bytes) saying why:
 * "out_idx -5 is out of range for 3 parameters", "out_idx 2 names 'B'
 * twice", "out_idx 1 names 'alpha', a scalar parameter; outputs are
 * tensors", "out_idx -2 names 'A', a T.StridedTensor: ...". */
bool tl_out_idx_normalize(const tl_out_idx_param *params, int nparams, const int64_t *idx, size_t n, int *norm,
                          size_t *bad, char *msg, size_t msglen);

/* tl_out_idx_normalize over the parameters of tile IR function f (false
 * with "out of memory" in msg when the scratch description cannot be
 * allocated). */
bool tl_out_idx_normalize_func(const tl_primfunc *f, const int64_t *idx, size_t n, int *norm, size_t *bad, char *msg,
                               size_t msglen);

#endif
