/* Lowering pipeline (internal): tile IR → SIMT IR (docs/simt-ir.md).
 * Each pass is one file with one entry point; tl_lower_module lists them in
 * order (docs/ARCHITECTURE.md "The pipeline of passes"). */
#ifndef TL_LOWER_H
#define TL_LOWER_H

#include "IR/tir.h"

typedef struct tl_lower_options {
  const tl_target *target; /* what to lower for (tl_target_lookup); NULL: tl_target_default() */
  bool verify_each;        /* run tl_verify_module after every pass */
  /* If non-NULL, called after every pass with its name (for --print-after-all). */
  void (*after_pass)(void *user, const char *pass_name, const tl_module *m);
  void *user;
  /* Pass configs forced for every function, beside each function's own
   * (tl_primfunc.pass_configs, from the source): a config true here is set
   * true in every function before the first pass. */
  tl_pass_configs pass_configs;
  /* remarks: passes say which path a loop took and why (tl_remark), through
   * d->remarks_on while the passes run */
  bool remarks;
  /* NULL, or the name of the last pass to run: tl_lower_module stops after
   * it, before its budget check (layout dumps stop after
   * "layout-inference", Driver/layouts.c) */
  const char *stop_after;
} tl_lower_options;

/* Lowers every prim_func of m in place (m's arena grows) for opts->target;
 * every pass gets the target as a const tl_target * and reads the pass
 * configs from the function (tl_primfunc.pass_configs).  Errors (an op
 * that is not lowered yet: "T.reduce_max is not lowered yet", layout
 * conflicts, ...) go to d with the op's location; returns false on error. */
bool tl_lower_module(tl_module *m, const tl_lower_options *opts, tl_diag *d);

/* ---------------------------------------------------------- pass registry */
/* The IR a pass expects (and produces): tile IR before lower-tile-ops, SIMT
 * IR (docs/simt-ir.md) after it. */
typedef enum { TL_PASS_TILE_IR, TL_PASS_SIMT_IR } tl_pass_level;

/* One lowering pass (passes.c; tl_lower_module runs them in pipeline.c's
 * order, tl-opt --passes by name).  run lowers one prim_func in place; opts
 * may be NULL (no target: the passes' default sm_80).  The public view
 * (include/tilelang/ir.h tl_pass_info) is the first member. */
typedef struct tl_lower_pass {
  tl_pass_info info; /* name, IR level ("tile" / "simt"), one-line contract */
  tl_pass_level level;
  bool (*run)(tl_module *m, tl_primfunc *f, const tl_lower_options *opts, tl_diag *d);
  /* NULL, or a budget tl_lower_module checks after the pass (budget.c):
   * false with an error in d stops the pipeline */
  bool (*then_check)(const tl_module *m, tl_diag *d);
} tl_lower_pass;

/* The registered passes, in pipeline order (the one definition of the
 * order, passes.c); *n gets their number. */
const tl_lower_pass *tl_lower_passes(size_t *n);
/* The pass named name, NULL when there is none. */
const tl_lower_pass *tl_lower_pass_lookup(const char *name);
/* Runs pass p on every prim_func of m, then the verifier when
 * opts->verify_each and opts->after_pass (as tl_lower_module does for each
 * of its passes); false on the first error (diagnostics in d). */
bool tl_lower_run_pass(tl_module *m, const tl_lower_pass *p, const tl_lower_options *opts, tl_diag *d);

#endif
