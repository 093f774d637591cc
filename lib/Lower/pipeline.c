/* The lowering pipeline (DESIGN §5): tile IR → SIMT IR (docs/simt-ir.md).
 *
 * tl_lower_module runs, for every prim_func, the passes below in this order;
 * each is one file with one entry point:
 *   1. check-supported  (check_supported.c)  reject ops no issue lowers yet
 *      atomic           (lower_atomic.c)     T.atomic_add → T.Parallel of T.ptx_atomic_add
 *   2. pipeline         (pipeline_loop.c)    T.Pipelined → staged shared buffers,
 *                                            prologue + loop, T.async_copy, commit/wait
 *                                            groups and the pipeline's barriers (tile IR)
 *   3. barriers         (barrier.c)          T.sync_threads() between shared writes and
 *                                            reads of other threads (tile IR, so regions
 *                                            and pipeline stages are still visible)
 *      versioning       (versioning.c)       a T.Parallel storing T.if_then_else(c, a, b) with
 *                                            c affine in its variables gets a copy storing a
 *                                            for blocks where c holds everywhere (tile IR)
 *   4. layout-inference (layout_infer.c)     fragment layouts, shared swizzles
 *   5. lower-tile-ops   (lower_tile.c, lower_shared_copy.c, lower_gemm.c)
 *                                            tile ops and T.Parallel → SIMT
 *      atomic-vectorize (lower_atomic.c)     16-bit float atomic pairs → f16x2/bf16x2
 *   5b. frag-pipeline  (frag_pipeline.c)    double-buffered mma fragments across the k-steps
 *                                            of a pipelined GEMM loop (SIMT IR)
 *   6. rasterize        (rasterize.c)        T.use_swizzle → block-index remapping
 *   7. smem-plan        (smem_plan.c)        offsets in the dynamic shared block,
 *                                            reuse, f->smem_bytes, the target's limit
 * Pipelining runs before layout inference (as TileLang's HEAD pipeline does,
 * ../shared/TILELANG.md §3.3), so inference and lowering see the staged
 * shapes; barriers are placed on the tile IR, where the stage indices of the
 * staged regions prove the pipeline's producer and consumer disjoint.
 * Every pass gets opts->target (sm_80 when NULL) as a const tl_target *;
 * opts->pass_configs join each function's own tl_primfunc.pass_configs
 * before the first pass, where passes read them.
 * After every pass the verifier runs when opts->verify_each is set, and
 * opts->after_pass sees the module (for --print-after-all).  The first pass
 * that reports an error stops the pipeline. */
#include "Lower/lower_internal.h"

typedef bool (*lower_pass_fn)(tl_module *, tl_primfunc *, const tl_lower_options *, tl_diag *);

/* Adapters: every pass gets the target. */
#define PASS(fn)                                                                              \
  static bool run_##fn(tl_module *m, tl_primfunc *f, const tl_lower_options *o, tl_diag *d) { \
    return fn(m, f, o->target, d);                                                            \
  }
PASS(tl_lower_check_supported)
PASS(tl_lower_atomic)
PASS(tl_lower_pipeline)
PASS(tl_lower_barriers)
PASS(tl_lower_versioning)
PASS(tl_lower_infer_layouts)
PASS(tl_lower_tile_ops)
PASS(tl_lower_atomic_vectorize)
PASS(tl_lower_frag_pipeline)
PASS(tl_lower_rasterize)
PASS(tl_lower_smem_plan)
#undef PASS

static const struct {
  const char *name;
  lower_pass_fn run;
} passes[] = {
    {"check-supported", run_tl_lower_check_supported},
    {"atomic", run_tl_lower_atomic},
    {"pipeline", run_tl_lower_pipeline},
    {"barriers", run_tl_lower_barriers},
    {"versioning", run_tl_lower_versioning},
    {"layout-inference", run_tl_lower_infer_layouts},
    {"lower-tile-ops", run_tl_lower_tile_ops},
    {"atomic-vectorize", run_tl_lower_atomic_vectorize},
    {"frag-pipeline", run_tl_lower_frag_pipeline},
    {"rasterize", run_tl_lower_rasterize},
    {"smem-plan", run_tl_lower_smem_plan},
};

bool tl_lower_module(tl_module *m, const tl_lower_options *opts, tl_diag *d) {
  if (!m || !d) return false;
  tl_lower_options o = opts ? *opts : (tl_lower_options){0};
  if (!o.target) o.target = tl_target_lookup("sm_80");
  opts = &o;
  /* the caller's pass configs join each function's own */
  for (int i = 0; i < m->nfuncs; i++)
    for (int c = 0; m->funcs[i] && c < TL_PASS_CONFIG_COUNT; c++)
      if (tl_pass_config_get(&o.pass_configs, c)) *tl_pass_config_field(&m->funcs[i]->pass_configs, c) = true;
  for (size_t p = 0; p < sizeof passes / sizeof passes[0]; p++) {
    bool ok = true;
    for (int i = 0; i < m->nfuncs; i++)
      if (m->funcs[i] && !passes[p].run(m, m->funcs[i], opts, d)) ok = false;
    if (!ok) return false;
    if (opts->verify_each && tl_verify_module(m, d) > 0) {
      tl_note(d, TL_LOC_NONE, "the IR is malformed after lowering pass '%s'", passes[p].name);
      return false;
    }
    if (opts->after_pass) opts->after_pass(opts->user, passes[p].name, m);
  }
  return true;
}
