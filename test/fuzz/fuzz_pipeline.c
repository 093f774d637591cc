/* The libFuzzer target's second stage (issue 15): elaborate → lower → run.
 *
 * For an input that parses, the module (tile IR, elaborated with the
 * factory defaults, or with small shapes bound: M, N, K, ... = 64 where
 * the source names such parameters) is lowered for sm_80 (tl_lower_module,
 * every pass and the compile budgets; LLVM is not linked), and when its
 * kernels are small enough to run fast (each tensor at most
 * FUZZ_MAX_ELEMS elements, at most FUZZ_MAX_BLOCKS blocks of at most
 * FUZZ_MAX_THREADS threads, FUZZ_MAX_STEPS statement executions per warp
 * and block), the CPU SIMT executor runs the SIMT IR on a fixed input
 * pattern.  (The tile-level reference evaluator has no step bound, so a
 * mutated loop extent would make it run past libFuzzer's timeout: it is left
 * to tl-run --check in test/fuzz/mutate.py, which also compares the two.)
 * Errors of any stage are fine (bad input must fail cleanly with a
 * diagnostic); the sanitizers catch crashes, leaks and undefined behaviour
 * on the way.  With TL_FUZZ_TRACE set, each input's furthest stage is
 * printed on stderr ("fuzz_pipeline: parsed|lowered|ran|ran with errors"),
 * to see what a corpus reaches. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "Interp/interp.h"
#include "Lower/lower.h"
#include "fuzz_pipeline.h"

#define FUZZ_MAX_ELEMS (1 << 14)
#define FUZZ_MAX_BLOCKS 8
#define FUZZ_MAX_THREADS 256
#define FUZZ_MAX_STEPS 20000
#define FUZZ_DYN_DIM 16

/* Small values of common factory parameters, bound when the source has the
 * name followed by '=' (a default: "M=1024"); a failing parse with them
 * falls back to the defaults. */
static const tl_define small_shapes[] = {
    {"M", "64"},    {"N", "64"},    {"K", "64"},   {"seq_len", "64"},
    {"batch", "1"}, {"heads", "1"}, {"dim", "64"}, {"split_k", "2"},
};

static bool names_default(const char *src, size_t size, const char *name) {
  size_t n = strlen(name);
  for (size_t i = 0; i + n + 1 < size; i++)
    if (memcmp(src + i, name, n) == 0 && src[i + n] == '=' && src[i + n + 1] != '=' &&
        (i == 0 || src[i - 1] == '(' || src[i - 1] == ' ' || src[i - 1] == ','))
      return true;
  return false;
}

/* Per-dimension extents of tensor b (dynamic dims: FUZZ_DYN_DIM); false when
 * a dim is an expression or the tensor is over FUZZ_MAX_ELEMS elements. */
static bool tensor_shape(const tl_buffer *b, int64_t *shape, int64_t *elems) {
  *elems = 1;
  if (b->ndim > 8) return false;
  for (int i = 0; i < b->ndim; i++) {
    const tl_expr *e = b->shape[i];
    if (e->kind == TL_EXPR_INT) shape[i] = e->u.ival;
    else if (e->kind == TL_EXPR_VAR) shape[i] = FUZZ_DYN_DIM;
    else return false;
    if (shape[i] < 0 || shape[i] > FUZZ_MAX_ELEMS) return false;
    *elems *= shape[i];
    if (*elems > FUZZ_MAX_ELEMS) return false;
  }
  return true;
}

/* Whether every kernel of f has a constant grid of at most FUZZ_MAX_BLOCKS
 * blocks and constant threads <= FUZZ_MAX_THREADS (a dynamic grid: FUZZ_DYN_DIM sized
 * dims keep it small, but it is not evaluated here: skipped). */
static bool small_grid(const tl_stmt *s, int depth) {
  if (!s || depth > 64) return s == NULL;
  switch (s->kind) {
  case TL_STMT_KERNEL: {
    int64_t blocks = 1;
    for (int i = 0; i < s->u.kernel.ngrid; i++) {
      const tl_expr *g = s->u.kernel.grid[i];
      if (!g || g->kind != TL_EXPR_INT || g->u.ival < 0) return false;
      blocks *= g->u.ival;
      if (blocks > FUZZ_MAX_BLOCKS) return false;
    }
    const tl_expr *t = s->u.kernel.threads;
    return !t || (t->kind == TL_EXPR_INT && t->u.ival > 0 && t->u.ival <= FUZZ_MAX_THREADS);
  }
  case TL_STMT_SEQ:
    for (int i = 0; i < s->u.seq.n; i++)
      if (!small_grid(s->u.seq.stmts[i], depth + 1)) return false;
    return true;
  default: return true;
  }
}

/* Runs function 0 of the lowered module (its parameters as in the tile
 * module) on a fixed byte pattern, when it is small enough. */
static void trace(const char *stage) {
  if (getenv("TL_FUZZ_TRACE")) fprintf(stderr, "fuzz_pipeline: %s\n", stage);
}

static void run_small(const tl_module *tile, const tl_module *simt) {
  const tl_primfunc *f = tile->funcs[0];
  if (!f || f->nparams > 16 || !small_grid(simt->funcs[0]->body, 0)) return trace("lowered (not run: too large)");
  tl_interp_arg args[16];
  void *mem[16] = {0};
  int64_t dyn[16];
  if (f->ndynamic > 16) return;
  for (int i = 0; i < f->ndynamic; i++) dyn[i] = FUZZ_DYN_DIM;
  bool ok = true;
  for (int i = 0; i < f->nparams && ok; i++) {
    tl_interp_arg *a = &args[i];
    memset(a, 0, sizeof *a);
    if (f->params[i].kind == TL_PARAM_SCALAR) {
      a->i = 2;
      a->f = 0.5;
      continue;
    }
    const tl_buffer *b = f->params[i].buffer;
    int64_t elems;
    if (!tensor_shape(b, a->shape, &elems)) {
      ok = false;
      break;
    }
    a->is_tensor = true;
    a->ndim = b->ndim;
    size_t bytes = (size_t)elems * (size_t)tl_dtype_bytes(b->dtype) * (b->dtype.lanes ? b->dtype.lanes : 1);
    mem[i] = malloc(bytes ? bytes : 1);
    if (!mem[i]) {
      ok = false;
      break;
    }
    /* 0x3c: 1.0 in float16's high byte, small floats, moderate integers */
    memset(mem[i], 0x3c, bytes);
    a->data = mem[i];
  }
  if (ok) {
    tl_diag d;
    tl_diag_init(&d);
    tl_simt_options so = {.check_races = true, .max_steps = FUZZ_MAX_STEPS};
    bool ran = tl_simt_exec(simt, 0, args, f->nparams, dyn, f->ndynamic, &so, &d);
    trace(ran ? "ran" : "ran with errors");
    tl_diag_free(&d);
  } else trace("lowered (not run: a tensor too large)");
  for (int i = 0; i < f->nparams; i++) free(mem[i]);
}

void fuzz_pipeline(tl_context *ctx, const char *src, size_t size) {
  tl_define defs[sizeof small_shapes / sizeof small_shapes[0]];
  size_t nd = 0;
  for (size_t i = 0; i < sizeof small_shapes / sizeof small_shapes[0]; i++)
    if (names_default(src, size, small_shapes[i].name)) defs[nd++] = small_shapes[i];
  tl_module *tile = NULL;
  if (tl_module_parse(ctx, src, size, "<fuzz>", defs, nd, &tile) != TL_OK) {
    tile = NULL;
    if (nd == 0 || tl_module_parse(ctx, src, size, "<fuzz>", NULL, 0, &tile) != TL_OK) return;
  }
  tl_module *simt = tl_module_clone(tile);
  if (simt) {
    tl_diag d;
    tl_diag_init(&d);
    tl_lower_options lo = {0};
    lo.target = tl_target_lookup("sm_80");
    bool lowered = tl_lower_module(simt, &lo, &d);
    tl_diag_free(&d);
    if (!lowered) trace("parsed");
    if (lowered && tile->nfuncs == 1 && simt->nfuncs == 1) run_small(tile, simt);
    tl_module_destroy(simt);
  }
  tl_module_destroy(tile);
}
