/* tl-run's host elements: reading an element of any dtype as a double, the
 * DLPack dtype of a tl_dtype, the check's tolerances, and the random inputs
 * (elems.c).  Used by tl-run.c only. */
#ifndef TL_RUN_ELEMS_H
#define TL_RUN_ELEMS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <dlpack/dlpack.h>
#include "tilelang/ir.h"

/* Element i of data (dtype t, packed: sub-byte types two a byte) as a double. */
double tlr_get_elem(const void *data, tl_dtype t, size_t i);
/* The DLPack dtype of t. */
DLDataType tlr_dl_dtype(tl_dtype t);
/* Is t a floating-point dtype (f16, bf16, f32, f64, fp8)? */
bool tlr_is_float(tl_dtype t);
/* The --check tolerances of an output of dtype t: |got - ref| <= atol + rtol * |ref|; a floating dtype's
 * are --atol / --rtol where given (tlr_set_tolerance), integers are compared exactly. */
void tlr_tolerance(tl_dtype t, double *atol, double *rtol);
/* --atol / --rtol: the tolerances of every floating output (a negative value keeps the dtype's). */
void tlr_set_tolerance(double atol, double rtol);
/* n elements of dtype t at data, uniform random from the splitmix64 stream
 * *state: floats in [-1, 1), bool 0 or 1, integers in [-4, 4] (unsigned
 * [0, 4]), or with int_range (--int-range; NULL: those) in [int_range[0],
 * int_range[1]] as int_range[0] + x mod (int_range[1] - int_range[0] + 1),
 * which t must hold. */
void tlr_fill_random(void *data, tl_dtype t, size_t n, uint64_t *state, const int64_t *int_range);

#endif
