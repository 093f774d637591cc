/* Lowering pipeline (internal): tile IR → SIMT IR (docs/simt-ir.md).
 * Each pass is one file with one entry point; tl_lower_module lists them in
 * order (DESIGN §5). */
#ifndef TL_LOWER_H
#define TL_LOWER_H

#include "IR/tir.h"

typedef struct tl_lower_options {
  const tl_target *target;    /* what to lower for (tl_target_lookup); NULL: sm_80 */
  bool verify_each;           /* run tl_verify_module after every pass */
  /* If non-NULL, called after every pass with its name (for --print-after-all). */
  void (*after_pass)(void *user, const char *pass_name, const tl_module *m);
  void *user;
  /* Pass configs forced for every function, beside each function's own
   * (tl_primfunc.pass_configs, from the source): a config true here is set
   * true in every function before the first pass. */
  tl_pass_configs pass_configs;
} tl_lower_options;

/* Lowers every prim_func of m in place (m's arena grows) for opts->target;
 * every pass gets the target as a const tl_target * and reads the pass
 * configs from the function (tl_primfunc.pass_configs).  Errors (an op
 * that is not lowered yet: "T.reduce_max is not lowered yet", layout
 * conflicts, ...) go to d with the op's location; returns false on error. */
bool tl_lower_module(tl_module *m, const tl_lower_options *opts, tl_diag *d);

#endif
