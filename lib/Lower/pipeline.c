/* The lowering pipeline (docs/ARCHITECTURE.md "The pipeline of passes"):
 * tile IR → SIMT IR (docs/simt-ir.md).
 *
 * tl_lower_module runs, for every prim_func, the registered passes in the
 * registry's order (passes.c: the order, each pass's files and contract;
 * the registry also serves tl-opt --passes).
 * Every pass gets opts->target (tl_target_default() when NULL) as a const
 * tl_target *; opts->pass_configs join each function's own
 * tl_primfunc.pass_configs before the first pass, where passes read them.
 * After every pass the verifier runs when opts->verify_each is set, and
 * opts->after_pass sees the module (for --print-after-all).  The first pass
 * that reports an error stops the pipeline.  The compile budgets (budget.c:
 * a pass's then_check, the per-thread registers after layout-inference, and
 * the unrolled code size after the last pass) are checked on the way, so
 * LLVM never sees a kernel past them. */
#include <string.h>

#include "Lower/lower_internal.h"

bool tl_lower_module(tl_module *m, const tl_lower_options *opts, tl_diag *d) {
  if (!m || !d) return false;
  tl_lower_options o = opts ? *opts : (tl_lower_options){0};
  if (!o.target) o.target = tl_target_default();
  opts = &o;
  /* the caller's pass configs join each function's own */
  for (int i = 0; i < m->nfuncs; i++)
    for (int c = 0; m->funcs[i] && c < TL_PASS_CONFIG_COUNT; c++)
      if (tl_pass_config_get(&o.pass_configs, c)) {
        *tl_pass_config_field(&m->funcs[i]->pass_configs, c) = true;
        tl_pass_config_mark_given(&m->funcs[i]->pass_configs, c);
      }
  size_t npasses = 0;
  const tl_lower_pass *passes = tl_lower_passes(&npasses);
  for (size_t p = 0; p < npasses; p++) {
    if (!tl_lower_run_pass(m, &passes[p], opts, d)) return false;
    if (o.stop_after && !strcmp(o.stop_after, passes[p].info.name)) return true;
    if (passes[p].then_check && !passes[p].then_check(m, d)) return false;
  }
  /* the unrolled code size stays within LLVM's means (budget.c) */
  if (!tl_lower_check_unrolled(m, d)) return false;
  /* indices the lowering derived into wide tensor dims stay int64 (IR/index64.c) */
  if (!tl_widen_indices(m)) {
    tl_error(d, TL_LOC_NONE, "out of memory widening tensor indices");
    return false;
  }
  return true;
}
