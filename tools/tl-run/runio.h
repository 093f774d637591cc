/* tl-run's inputs from files, saved outputs, integer input ranges and the
 * CPU executor's progress line (issue 32): --input NAME=FILE.npy, --save
 * DIR, --int-range LO:HI, --progress / --no-progress.  Used by tl-run.c
 * only; the .npy format is npy.c's. */
#ifndef TL_RUN_RUNIO_H
#define TL_RUN_RUNIO_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "npy.h"
#include "tilelang/ir.h"

/* --input NAME=FILE: the option's text, the array read from FILE, and the
 * kernel parameter it feeds (-1 until bound). */
typedef struct tlr_input {
  const char *name, *path;
  tlr_npy a;
  int param;
} tlr_input;

/* Splits "NAME=FILE" (in place) into in; false when malformed. */
bool tlr_input_split(char *arg, tlr_input *in);

/* Reads every --input file; returns 0, or the exit status after printing
 * the error: 2 when a file cannot be read ("tl-run: error: cannot read
 * 'FILE': ..."), 1 when it is not an array tl-run takes
 * ("<command line>: error: --input NAME=FILE: ...").  A NAME given twice:
 * the last one wins (the earlier entries are dropped). */
int tlr_inputs_load(tlr_input *in, size_t *n);
void tlr_inputs_free(tlr_input *in, size_t n);

/* Checks the array of in against its parameter (dtype t, shape[0..ndim) as
 * this run binds it); false after printing
 * "<command line>: error: --input NAME=FILE: parameter 'NAME' is float32
 * ('<f4'), the file holds float64 ('<f8')" or "... parameter 'NAME' has
 * shape [64,64], the file holds [3,4]". */
bool tlr_input_check(const tlr_input *in, tl_dtype t, int ndim, const int64_t *shape);

/* --int-range LO:HI (decimal or 0x integers, LO <= HI); false when
 * malformed. */
bool tlr_parse_int_range(const char *arg, int64_t range[2]);
/* Can integer dtype t hold every value of [range[0], range[1]]?  false
 * after printing "<command line>: error: --int-range LO:HI: input 'NAME' is
 * int8, whose values lie in [-128, 127]". */
bool tlr_int_range_check(const int64_t range[2], const char *arg, const char *name, tl_dtype t);

/* --save DIR: writes data (C order) as DIR/NAME.npy, or DIR/NAME.TAG.npy
 * when tag is not empty (a run of a --dim list: "n=17"); creates DIR (one
 * level) when it does not exist.  false after printing the error. */
bool tlr_save(const char *dir, const char *tag, const char *name, tl_dtype t, const int64_t *shape, int ndim,
              const void *data, size_t elems);

/* The progress line of a CPU executor run (tl_context_set_progress's
 * callback): "tl-run: progress: D/T blocks (P%), E s elapsed, ~R s left",
 * from ~2 s into the run on a terminal (rewritten in place, at most 10
 * times a second), or from the first block when forced (--progress; a line
 * each, at most one a second, when stderr is not a terminal); the last
 * block's line ends in "done". */
typedef struct tlr_progress {
  bool forced, tty;
  double start, last; /* monotonic seconds */
  bool open;          /* a line without its newline is on the terminal */
  bool shown;         /* a line was printed in this run */
} tlr_progress;

/* Starts a run's timing. */
void tlr_progress_begin(tlr_progress *p);
/* The tl_progress_fn. */
void tlr_progress_step(void *user, int64_t done, int64_t total);
/* Ends a run: a line left open (a failed run) gets its newline. */
void tlr_progress_end(tlr_progress *p);

#endif
