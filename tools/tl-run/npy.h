/* tl-run's NumPy .npy files (issue 32): reading an array for --input and
 * writing one for --save, and the .npy dtype of each tl_dtype.  Used by
 * tl-run.c only.
 *
 * The format (NumPy's "NEP 1", numpy/lib/format.py): the magic "\x93NUMPY",
 * a major and a minor version byte, the header length (2 bytes little-endian
 * in version 1, 4 bytes in versions 2 and 3), then the header: a Python dict
 * literal {'descr': '<f4', 'fortran_order': False, 'shape': (3, 4), }
 * padded with spaces and ended by '\n' so that the data starts at a multiple
 * of 64 bytes; the data follows, prod(shape) elements in C order (or in
 * Fortran order when fortran_order is True). */
#ifndef TL_RUN_NPY_H
#define TL_RUN_NPY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "tilelang/ir.h"

#define TLR_NPY_MAX_DIMS 32

/* An array read from a .npy file. */
typedef struct tlr_npy {
  char descr[16]; /* the header's descr, e.g. "<f4" */
  int ndim;
  int64_t shape[TLR_NPY_MAX_DIMS];
  size_t elems; /* prod(shape) */
  void *data;   /* malloc'd, elems * itemsize bytes, C order */
} tlr_npy;

/* Reads the .npy file at path into *a (a->data malloc'd; tlr_npy_free).  On
 * failure returns false with a one-line reason in why[0..why_size), and
 * *unreadable set when the file could not be opened or read at all (as
 * opposed to a file that is not a .npy array tl-run takes: a bad magic or
 * header, a structured or object dtype, Fortran order with 2 or more dims,
 * a data size that is not prod(shape) * itemsize). */
bool tlr_npy_read(const char *path, tlr_npy *a, bool *unreadable, char *why, size_t why_size);
void tlr_npy_free(tlr_npy *a);

/* The .npy descr tl-run reads and writes for dtype t (lanes 1): '<f2',
 * '<f4' (also tfloat32), '<f8', '|i1'..'<i8', '|u1'..'<u8', '|b1';
 * bfloat16 as its raw bits '<u2' and float8_e4m3 / float8_e5m2 as '|u1'
 * (NumPy has neither; ml_dtypes' .view() reads them), or NULL when t has
 * none (a sub-byte or vector dtype). */
const char *tlr_npy_descr(tl_dtype t);

/* Does descr (from a file) hold elements of dtype t: its tlr_npy_descr,
 * with '=' (native, little-endian here) and, for one-byte items, '<' and
 * '|' taken as the same; for bfloat16 and the float8 types also the
 * '<V2' / '|V1' that ml_dtypes' arrays are saved with. */
bool tlr_npy_descr_matches(tl_dtype t, const char *descr);

/* A readable name of descr for messages: "float32 ('<f4')", "'>f8'". */
void tlr_npy_describe(const char *descr, char *out, size_t out_size);

/* Writes a version 1.0 .npy file at path (TLR_NPY_MAX_DIMS dims fit its header):
 * descr, C order, shape[0..ndim), then bytes of data.  false with errno set
 * when the file cannot be written. */
bool tlr_npy_write(const char *path, const char *descr, const int64_t *shape, int ndim, const void *data, size_t bytes);

#endif
