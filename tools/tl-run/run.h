/* tl-run's state of a run, shared by its files: the kernel's parameters,
 * the run's settings, the host inputs and the results (tl-run.c runs them;
 * runio.c adds issue 32's options).  Used by tools/tl-run only. */
#ifndef TL_RUN_RUN_H
#define TL_RUN_RUN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "runio.h"
#include "tilelang/core.h"
#include "tilelang/runtime.h"

typedef struct param_info {
  const char *name;
  bool is_tensor, is_output;
  tl_dtype dtype;
  int ndim;
  int64_t dims[8];
  int dim_sym[8]; /* symbol index of a dim that is exactly a symbol, else -1 */
} param_info;

typedef struct run_state {
  tl_context *ctx;
  tl_kernel *k;
  int device;  /* DEV_CUDA or DEV_CPU */
  int ordinal; /* the CUDA device (DEV_CUDA) */
  int nparams;
  param_info *p;
  int nsyms;
  const char **syms;
  int64_t *symv;
  tl_arg *scalar_args; /* per param (scalars only) */
  uint64_t seed;
  bool check, bench;
  /* the kernel as given, kept alive after --tune replaced it: p[].name and
   * syms[] point into its signature */
  tl_kernel *given;
  int warmup, reps; /* --bench and --tune timings (BENCH_WARMUP, BENCH_REPS) */
  /* --tune: per param, the CUDA input made by the first run and reused by
   * the later ones (NULL: make inputs each run) */
  DLManagedTensor **keep;
  bool keep_ready;
  /* issue 32: --input (input_of[param]: its entry of inputs, or -1), --int-range (NULL: [-4, 4]),
   * --save DIR and the run's file tag ("n=17" in a --dim list), the progress line (NULL: off) */
  tlr_input *inputs;
  int *input_of;
  const int64_t *int_range;
  const char *save_dir;
  char tag[256];
  tlr_progress *progress;
} run_state;

typedef struct host_tensor {
  void *data;
  size_t elems;
  int64_t shape[8], strides[8]; /* strides: a T.StridedTensor's (strided.h) */
  DLTensor t;
} host_tensor;

/* Host results of one run: per param, the output's data (or NULL). */
typedef struct results {
  void **data; /* malloc'd host copies */
  size_t *elems;
  int64_t (*shape)[8];
  bool *written; /* an input the run changed (kept for --save only: not printed or checked) */
} results;

/* issue 32's options as given: --input, --int-range, --save, --progress. */
typedef struct run_opts {
  tlr_input *inputs;
  size_t ninputs;
  int64_t int_range[2];
  const char *int_range_arg; /* NULL: no --int-range */
  const char *save_dir;
  int progress; /* 1 --progress, -1 --no-progress, 0 on a terminal */
  tlr_progress state;
} run_opts;

/* issue 32's options (their getopt_long codes). */
enum { OPT_INPUT = 512, OPT_SAVE, OPT_INT_RANGE, OPT_PROGRESS, OPT_NO_PROGRESS };

/* Parses one of issue 32's options (code c, value arg) into ro; false with
 * *rc set after a usage error. */
bool tlr_run_option(int c, char *arg, run_opts *ro, int *rc);
/* Binds ro to the kernel's parameters in rs (rs->p read): each --input NAME
 * to its tensor input, --int-range checked against the integer inputs it
 * draws, --save and the progress line (cpu only) set up; false after
 * printing the errors. */
bool tlr_bind_run_options(run_state *rs, run_opts *ro);
/* --save's snapshot of a run's inputs: per non-output tensor of h, its
 * elements in row-major order before the run (snap[i] malloc'd); false
 * when out of memory. */
bool tlr_snapshot_inputs(const run_state *rs, host_tensor *h, void **snap);

#endif
