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
  int *ptr_of; /* --ptr-table (ptrs.c): per param, the tensor its table points into, or -1; NULL: none */
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

#define TLR_MAX_PTR_TABLES 16 /* ptrs.c says 16 in its message */
/* issue 32's options as given: --input, --int-range, --save, --progress. */
typedef struct run_opts {
  tlr_input *inputs;
  size_t ninputs;
  int64_t int_range[2];
  const char *int_range_arg; /* NULL: no --int-range */
  const char *save_dir;
  int progress; /* 1 --progress, -1 --no-progress, 0 on a terminal */
  /* --ptr-table NAME=TENSOR (ptrs.c): the pointer tables to fill */
  struct {
    const char *name, *tensor;
  } ptrs[TLR_MAX_PTR_TABLES];
  int nptrs;
  tlr_progress state;
} run_opts;

/* issue 32's options and --ptr-table (their getopt_long codes). */
enum { OPT_INPUT = 512, OPT_SAVE, OPT_INT_RANGE, OPT_PROGRESS, OPT_NO_PROGRESS, OPT_PTR_TABLE, OPT_ATOL, OPT_RTOL };

/* Parses one of issue 32's options, --ptr-table, --atol or --rtol (code c, value arg) into
 * ro; false with *rc set after a usage error. */
bool tlr_run_option(int c, char *arg, run_opts *ro, int *rc);
/* Binds ro to the kernel's parameters in rs (rs->p read): each --input NAME
 * to its tensor input, --int-range checked against the integer inputs it
 * draws, --save and the progress line (cpu only) set up, the --ptr-table
 * tables bound (tlr_bind_ptr_tables); false after printing the errors. */
bool tlr_bind_run_options(run_state *rs, run_opts *ro);
/* --save's snapshot of a run's inputs: per non-output tensor of h, its
 * elements in row-major order before the run (snap[i] malloc'd); false
 * when out of memory. */
bool tlr_snapshot_inputs(const run_state *rs, host_tensor *h, void **snap);

/* ptrs.c: --ptr-table NAME=TENSOR (T.make_tensor's pointer tables).  The
 * option parsed into ro (false with *rc set after a usage error); bound to
 * the parameters (rs->ptr_of: per parameter the tensor whose slices its
 * table points to, or -1; false after printing the error); and, per run,
 * each table filled with the addresses of its tensor's G equal slices
 * along the first dimension (G: the table's length), host addresses for
 * the CPU executors, the device copies' for CUDA (dev), after the inputs
 * were made (and uploaded); false after printing the error. */
bool tlr_ptr_option(char *arg, run_opts *ro, int *rc);
bool tlr_bind_ptr_tables(run_state *rs, const run_opts *ro);
bool tlr_fill_ptr_tables(const run_state *rs, host_tensor *h, DLManagedTensor **dev, bool cuda);
static inline bool tlr_is_ptr_table(const run_state *rs, int i) { return rs->ptr_of && rs->ptr_of[i] >= 0; }

#endif
