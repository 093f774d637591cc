/* The pass registry of lib/Lower: every lowering pass by name, with the IR
 * level it expects and its contract in one line (each pass file's head
 * comment states it in full), and the adapters that call the passes' entry
 * points with what each needs of the lowering options.  tl_lower_module
 * (pipeline.c) runs them in the pipeline's order; tl_module_run_passes (the
 * public API behind `tl-opt --passes=a,b,...`) runs those named.  A change of
 * the entry points' signatures touches only the adapters below. */
#include <stdlib.h>
#include <string.h>

#include "IR/visit.h"
#include "Lower/layout_dump.h"
#include "Lower/lower_internal.h"
#include "Support/context.h"

/* Adapters: every pass gets the target (tl_lower_module and
 * tl_module_run_passes make sure it is set). */
#define PASS(fn)                                                                                                       \
  static bool run_##fn(tl_module *m, tl_primfunc *f, const tl_lower_options *o, tl_diag *d) {                          \
    return fn(m, f, o->target, d);                                                                                     \
  }
PASS(tl_lower_split_kernels)
PASS(tl_lower_check_supported)
PASS(tl_lower_ws_scopes)
PASS(tl_lower_atomic)
PASS(tl_lower_warp_specialize)
PASS(tl_lower_gemm_wgmma)
PASS(tl_lower_pack_int4)
PASS(tl_lower_pipeline)
PASS(tl_lower_gemm_stage)
PASS(tl_lower_barriers)
PASS(tl_lower_versioning)
PASS(tl_lower_infer_layouts)
PASS(tl_lower_tile_ops)
PASS(tl_lower_proxy_fence)
PASS(tl_lower_atomic_vectorize)
PASS(tl_lower_frag_pipeline)
PASS(tl_lower_rasterize)
PASS(tl_lower_smem_plan)
#undef PASS

/* The pipeline: tl_lower_module runs these in this order, the one place the
 * order is written (each entry: the file(s) of the pass).  Pipelining runs
 * before layout inference (as TileLang's HEAD pipeline does), so inference
 * and lowering see the staged shapes; barriers are placed on the tile IR,
 * where the stage indices of the staged regions prove the pipeline's
 * producer and consumer disjoint. */
#define TILE(name, contract, run, check)                                                                               \
  { {name, "tile", contract}, TL_PASS_TILE_IR, run, check }
#define SIMT(name, contract, run)                                                                                      \
  { {name, "simt", contract}, TL_PASS_SIMT_IR, run, NULL }
static const tl_lower_pass passes[] = {
    /* split_kernels.c */
    TILE("split-kernels",
         "T.sync_grid() splits its T.Kernel; several T.Kernel scopes -> one prim_func per scope, its launch stages",
         run_tl_lower_split_kernels, NULL),
    /* check_supported.c, static_check.c (bounds, unwritten reads, T.Parallel in per-thread code) */
    TILE("check-supported",
         "rejects tile ops no issue lowers yet, nested T.Parallel, bad thread counts; changes nothing",
         run_tl_lower_check_supported, NULL),
    /* ws_scope.c */
    TILE("ws-scopes", "T.ws role scopes: the tile passes partition their tile ops over one warpgroup's 128 threads",
         run_tl_lower_ws_scopes, NULL),
    /* lower_atomic.c */
    TILE("atomic", "T.atomic_add of regions -> T.Parallel loops of scalar T.ptx_atomic_add", run_tl_lower_atomic, NULL),
    /* Hopper/warp_specialize.c, Hopper/ws_lets.c, Hopper/ws_persist.c, Hopper/stream_k.c, Hopper/attention_overlap.c */
    TILE("warp-specialize",
         "sm_90a: a TMA-fed T.Pipelined GEMM loop -> producer warpgroup, mbarrier ring, wgmma T.gemm",
         run_tl_lower_warp_specialize, NULL),
    /* Hopper/gemm_wgmma.c */
    TILE("gemm-wgmma",
         "sm_90a: the T.gemm of a kernel left off the warp-specialized path -> wgmma (their tiles: the wgmma image)",
         run_tl_lower_gemm_wgmma, NULL),
    /* pack_int4.c */
    TILE("pack-int4",
         "int4/uint4 tiles -> their int8/uint8 storage (last dim halved), copies of bytes, T.gemm packed_int4",
         run_tl_lower_pack_int4, NULL),
    /* pipeline_loop.c */
    TILE("pipeline", "T.Pipelined -> T.serial with staged shared buffers, T.async_copy prologue, commit/wait groups",
         run_tl_lower_pipeline, NULL),
    /* gemm_stage.c */
    TILE("gemm-stage",
         "T.gemm with B in a fragment, or A in a fragment split over warp_n > 1 warps, reads it via a shared copy",
         run_tl_lower_gemm_stage, NULL),
    /* barrier.c */
    TILE("barriers", "T.sync_threads() between a shared write and a later access of the same bytes by other threads",
         run_tl_lower_barriers, NULL),
    /* versioning.c */
    TILE("versioning",
         "a T.Parallel storing T.if_then_else(c, a, b), c affine, gets a copy storing a where c always holds",
         run_tl_lower_versioning, NULL),
    /* layout_infer.c; then the per-thread registers of the laid-out fragments stay within LLVM's means */
    TILE("layout-inference", "attaches a thread/register layout to every fragment buffer, or reports the conflict",
         run_tl_lower_infer_layouts, tl_lower_check_registers),
    /* lower_tile.c, lower_shared_copy.c, lower_gemm.c, lower_reduce.c, lower_frag.c */
    TILE("lower-tile-ops", "needs layout-inference; tile ops and T.Parallel -> per-thread SIMT IR",
         run_tl_lower_tile_ops, NULL),
    /* Hopper/proxy_fence.c */
    SIMT("proxy-fence",
         "sm_90a: fence.proxy.async after generic writes of a wgmma operand, before the barrier or wgmma",
         run_tl_lower_proxy_fence),
    /* lower_atomic.c */
    SIMT("atomic-vectorize",
         "adjacent 16-bit float T.ptx_atomic_add pairs -> one f16x2/bf16x2 atomic where the target has it",
         run_tl_lower_atomic_vectorize),
    /* frag_pipeline.c */
    SIMT("frag-pipeline", "double-buffers the ldmatrix fragments across the k-steps of a pipelined mma loop",
         run_tl_lower_frag_pipeline),
    /* rasterize.c */
    SIMT("rasterize", "T.use_swizzle -> LET-remapped block indices (a bijection of the grid); no T.use_swizzle remains",
         run_tl_lower_rasterize),
    /* smem_plan.c */
    SIMT("smem-plan", "offsets of shared.dyn buffers in the dynamic block, reuse across lifetimes, the target's limit",
         run_tl_lower_smem_plan),
};
#undef TILE
#undef SIMT

const tl_lower_pass *tl_lower_passes(size_t *n) {
  *n = sizeof passes / sizeof passes[0];
  return passes;
}

const tl_lower_pass *tl_lower_pass_lookup(const char *name) {
  for (size_t i = 0; name && i < sizeof passes / sizeof passes[0]; i++)
    if (strcmp(passes[i].info.name, name) == 0) return &passes[i];
  return NULL;
}

bool tl_lower_run_pass(tl_module *m, const tl_lower_pass *p, const tl_lower_options *opts, tl_diag *d) {
  bool ok = true, remarks_on = d->remarks_on;
  d->remarks_on = opts && opts->remarks; /* what the passes read (tl_lower_options.remarks) */
  for (int i = 0; i < m->nfuncs; i++)
    if (m->funcs[i] && !p->run(m, m->funcs[i], opts, d)) ok = false;
  d->remarks_on = remarks_on;
  if (!ok) return false;
  if (opts && opts->verify_each && tl_verify_module(m, d) > 0) {
    tl_note(d, TL_LOC_NONE, "the IR is malformed after lowering pass '%s'", p->info.name);
    return false;
  }
  if (opts && opts->after_pass) opts->after_pass(opts->user, p->info.name, m);
  return true;
}

/* ------------------------------------------------------------ public API */
size_t tl_pass_count(void) { return sizeof passes / sizeof passes[0]; }

const tl_pass_info *tl_pass_at(size_t i) { return i < sizeof passes / sizeof passes[0] ? &passes[i].info : NULL; }

/* --------------------------------------------------- the IR level check */
/* The first construct of a module that only one IR level has: a tile op
 * (but T.use_swizzle, which the SIMT pass rasterize removes), a T.Parallel
 * or T.Pipelined loop, or a fragment buffer (tile IR: lowering removes them,
 * docs/simt-ir.md "Guarantees after lowering"); or a call of a SIMT-level
 * intrinsic (TL_EFF_SIMT_LEVEL in intrinsics.def: T.ptx_mma, T.shfl_xor,
 * ...).  A kernel with neither (plain loads, stores, serial loops, the
 * thread index, T.ptx_atomic_add) is both, and every pass may run on it. */
typedef struct level_scan {
  tl_visitor v;
  tl_loc tile_at, simt_at; /* where the first of each was seen */
  const char *tile_what, *simt_what;
} level_scan;
static void level_expr(tl_visitor *v, const tl_expr *e) {
  level_scan *ls = (level_scan *)v;
  if (ls->simt_what || e->kind != TL_EXPR_CALL || e->u.call.op < 0 || e->u.call.op >= TL_INTRIN_COUNT) return;
  const tl_intrinsic *in = &tl_intrinsics[e->u.call.op];
  if (in->effects & TL_EFF_SIMT_LEVEL) {
    ls->simt_what = in->name;
    ls->simt_at = e->loc;
  }
}
static void level_stmt(tl_visitor *v, const tl_stmt *s) {
  level_scan *ls = (level_scan *)v;
  if (ls->tile_what) return;
  const char *what = NULL;
  if (s->kind == TL_STMT_TILE && s->u.tile.op != TL_TILE_USE_SWIZZLE) /* that one lasts until rasterize */
    what = "a tile op";
  else if (s->kind == TL_STMT_FOR && s->u.loop.kind == TL_LOOP_PARALLEL) what = "a T.Parallel loop";
  else if (s->kind == TL_STMT_FOR && s->u.loop.kind == TL_LOOP_PIPELINED) what = "a T.Pipelined loop";
  else if (s->kind == TL_STMT_ALLOC && s->u.alloc.buffer && s->u.alloc.buffer->scope == TL_SCOPE_FRAGMENT)
    what = "a fragment buffer";
  if (what) {
    ls->tile_what = what;
    ls->tile_at = s->loc;
  }
}

/* Refuses pass p on a module of the other IR level (it would change
 * nothing and print its input back): false with an error at the construct
 * that shows the level. */
static bool level_ok(const tl_module *m, const tl_lower_pass *p, tl_diag *d) {
  level_scan ls = {.v = {.expr = level_expr, .stmt = level_stmt}};
  for (int i = 0; i < m->nfuncs; i++)
    if (m->funcs[i]) tl_visit_stmt(&ls.v, m->funcs[i]->body);
  if (p->level == TL_PASS_SIMT_IR && ls.tile_what) {
    tl_error(d, ls.tile_at,
             "pass '%s' runs on SIMT IR, but this is tile IR (%s); run the tile-level passes first, up to "
             "lower-tile-ops",
             p->info.name, ls.tile_what);
    return false;
  }
  if (p->level == TL_PASS_TILE_IR && ls.simt_what && !ls.tile_what) {
    tl_error(d, ls.simt_at, "pass '%s' runs on tile IR, but this is SIMT IR (T.%s)", p->info.name, ls.simt_what);
    return false;
  }
  return true;
}

/* after_pass of tl_lower_options → the public callback with printed text. */
typedef struct print_hook {
  const tl_pass_options *opts;
  bool oom;
} print_hook;

static void print_after(void *user, const char *pass, const tl_module *m) {
  print_hook *h = user;
  tl_strbuf sb = {0};
  tl_print_module(&sb, m);
  /* what layout inference decided is not in the IR text: its summary as comments */
  if (!strcmp(pass, "layout-inference")) tl_layout_dump_text(&sb, m, TL_LAYOUT_DUMP_SUMMARY, "# ");
  char *text = sb.oom ? NULL : tl_strbuf_take(&sb);
  if (!text) {
    tl_strbuf_free(&sb);
    h->oom = true;
    return;
  }
  h->opts->after_pass(h->opts->user, pass, text);
  free(text);
}

tl_status tl_module_run_passes(tl_context *ctx, tl_module *m, const char *const *names, size_t npasses,
                               const tl_pass_options *opts) {
  if (!ctx) return TL_ERR_INVALID_ARGUMENT;
  tl_context_begin(ctx);
  if (!m || (npasses && !names)) return tl_context_null_arg(ctx, "tl_module_run_passes", !m ? "module" : "names");
  for (size_t i = 0; i < npasses; i++) {
    if (tl_lower_pass_lookup(names[i])) continue;
    tl_strbuf known = {0};
    for (size_t k = 0; k < sizeof passes / sizeof passes[0]; k++)
      tl_strbuf_printf(&known, "%s%s", k ? ", " : "", passes[k].info.name);
    tl_status st = tl_context_fail(ctx, TL_ERR_INVALID_ARGUMENT, "unknown pass '%s' (known passes: %s)",
                                   names[i] ? names[i] : "(null)", known.data ? known.data : "");
    tl_strbuf_free(&known);
    return tl_context_end(ctx, st);
  }
  size_t nsources = ctx->diag.sources.len;
  if (m->source && m->filename) (void)tl_diag_add_source(&ctx->diag, m->filename, m->source, strlen(m->source));
  print_hook hook = {opts, false};
  tl_lower_options lo = {0};
  lo.target = opts && opts->target ? tl_target_lookup(opts->target) : tl_target_default();
  if (!lo.target) {
    ctx->diag.sources.len = nsources;
    return tl_context_end(
        ctx, tl_context_fail(ctx, TL_ERR_INVALID_ARGUMENT, "tl_module_run_passes: unknown target '%s'", opts->target));
  }
  lo.verify_each = opts && opts->verify_each;
  lo.remarks = opts && opts->remarks;
  if (opts && opts->after_pass) {
    lo.after_pass = print_after;
    lo.user = &hook;
  }
  tl_status st = TL_OK;
  for (size_t i = 0; i < npasses && st == TL_OK; i++) {
    const tl_lower_pass *p = tl_lower_pass_lookup(names[i]);
    if (!level_ok(m, p, &ctx->diag) || !tl_lower_run_pass(m, p, &lo, &ctx->diag) || ctx->diag.errors > 0)
      st = TL_ERR_COMPILE;
    if (m->arena.oom || hook.oom) st = TL_ERR_NO_MEMORY;
  }
  if (st == TL_ERR_NO_MEMORY && !ctx->last_error) tl_context_fail(ctx, st, "out of memory");
  st = tl_context_end(ctx, st);
  ctx->diag.sources.len = nsources;
  return st;
}
