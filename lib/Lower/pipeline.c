/* The lowering pipeline (DESIGN §5): tile IR → SIMT IR (docs/simt-ir.md).
 *
 * tl_lower_module runs, for every prim_func, the passes below in this order
 * (the registry, passes.c, knows each by name for tl-opt --passes); each is
 * one file with one entry point:
 *   1. check-supported  (check_supported.c)  reject ops no issue lowers yet; static checks
 *                                            (static_check.c: bounds, unwritten reads, T.Parallel
 *                                            in per-thread code)
 *   2. atomic           (lower_atomic.c)     T.atomic_add → T.Parallel of T.ptx_atomic_add
 *   3. warp-specialize  (warp_specialize.c)  sm_90a: the GEMM main loop → a producer
 *                                            warpgroup issuing TMA loads on an mbarrier
 *                                            ring, consumers running T.gemm as wgmma
 *   3b. pipeline        (pipeline_loop.c)    T.Pipelined → staged shared buffers,
 *                                            prologue + loop, T.async_copy, commit/wait
 *                                            groups and the pipeline's barriers (tile IR)
 *   3c. gemm-stage      (gemm_stage.c)       a T.gemm fragment operand that mma.sync cannot read
 *                                            from registers (sr form; rs with warp_n > 1) goes
 *                                            through a shared copy
 *   4. barriers         (barrier.c)          T.sync_threads() between shared writes and
 *                                            reads of other threads (tile IR, so regions
 *                                            and pipeline stages are still visible)
 *   5. versioning       (versioning.c)       a T.Parallel storing T.if_then_else(c, a, b) with
 *                                            c affine in its variables gets a copy storing a
 *                                            for blocks where c holds everywhere (tile IR)
 *   6. layout-inference (layout_infer.c)     fragment layouts, shared swizzles
 *   7. lower-tile-ops   (lower_tile.c, lower_shared_copy.c, lower_gemm.c,
 *                        lower_reduce.c, lower_frag.c)
 *                                            tile ops and T.Parallel → SIMT
 *   8. atomic-vectorize (lower_atomic.c)     16-bit float atomic pairs → f16x2/bf16x2
 *   9. frag-pipeline    (frag_pipeline.c)    double-buffered mma fragments across the k-steps
 *                                            of a pipelined GEMM loop (SIMT IR)
 *  10. rasterize        (rasterize.c)        T.use_swizzle → block-index remapping
 *  11. smem-plan        (smem_plan.c)        offsets in the dynamic shared block,
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
 * that reports an error stops the pipeline.  The compile budgets (budget.c:
 * per-thread registers after layout-inference, unrolled code size after the
 * last pass) are checked on the way, so LLVM never sees a kernel past them. */
#include "Lower/lower_internal.h"

#include <string.h>

/* The order (names of the registry, passes.c). */
static const char *const pipeline[] = {
    "check-supported",  "atomic",         "warp-specialize",  "pipeline",         "gemm-stage",       "barriers",
    "versioning",       "layout-inference", "lower-tile-ops", "atomic-vectorize",
    "frag-pipeline",    "rasterize",      "smem-plan",
};

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
  for (size_t p = 0; p < sizeof pipeline / sizeof pipeline[0]; p++) {
    const tl_lower_pass *pass = tl_lower_pass_lookup(pipeline[p]);
    if (!pass) {
      tl_error(d, TL_LOC_NONE, "internal error: no lowering pass '%s' is registered", pipeline[p]);
      return false;
    }
    if (!tl_lower_run_pass(m, pass, opts, d)) return false;
    /* per-thread registers of the laid-out fragments stay within LLVM's means (budget.c) */
    if (strcmp(pipeline[p], "layout-inference") == 0 && !tl_lower_check_registers(m, d)) return false;
  }
  /* so does the unrolled code size (budget.c) */
  if (!tl_lower_check_unrolled(m, d)) return false;
  /* indices the lowering derived into wide tensor dims stay int64 (IR/index64.c) */
  if (!tl_widen_indices(m)) {
    tl_error(d, TL_LOC_NONE, "out of memory widening tensor indices");
    return false;
  }
  return true;
}
