/* The lowering pipeline (DESIGN §5): tile IR → SIMT IR (docs/simt-ir.md).
 *
 * tl_lower_module runs, for every prim_func, the passes below in this order;
 * each is one file with one entry point:
 *   1. check-supported  (check_supported.c)  reject ops no issue lowers yet
 *   2. layout-inference (layout_infer.c)     fragment layouts (PLAN/REPLICATED)
 *   3. lower-tile-ops   (lower_tile.c)       T.copy/T.fill/T.clear/T.Parallel → SIMT
 * then sets smem_bytes = 0 (shared-memory planning arrives with T.gemm).
 * After every pass the verifier runs when opts->verify_each is set, and
 * opts->after_pass sees the module (for --print-after-all).  The first pass
 * that reports an error stops the pipeline. */
#include "Lower/lower_internal.h"

typedef bool (*lower_pass_fn)(tl_module *, tl_primfunc *, tl_diag *);

static const struct {
  const char *name;
  lower_pass_fn run;
} passes[] = {
    {"check-supported", tl_lower_check_supported},
    {"layout-inference", tl_lower_infer_layouts},
    {"lower-tile-ops", tl_lower_tile_ops},
};

bool tl_lower_module(tl_module *m, const tl_lower_options *opts, tl_diag *d) {
  if (!m || !d) return false;
  for (size_t p = 0; p < sizeof passes / sizeof passes[0]; p++) {
    bool ok = true;
    for (int i = 0; i < m->nfuncs; i++)
      if (m->funcs[i] && !passes[p].run(m, m->funcs[i], d)) ok = false;
    if (!ok) return false;
    if (p + 1 == sizeof passes / sizeof passes[0])
      for (int i = 0; i < m->nfuncs; i++)
        if (m->funcs[i]) m->funcs[i]->smem_bytes = 0;
    if (opts && opts->verify_each && tl_verify_module(m, d) > 0) {
      tl_note(d, TL_LOC_NONE, "the IR is malformed after lowering pass '%s'", passes[p].name);
      return false;
    }
    if (opts && opts->after_pass) opts->after_pass(opts->user, passes[p].name, m);
  }
  return true;
}
