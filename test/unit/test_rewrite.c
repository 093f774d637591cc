/* Unit tests of the IR rewriter (lib/IR/rewrite.{c,h}), the one substituting
 * copier the lowering passes share, and of the pass registry's public face
 * (tl_pass_count / tl_pass_at / tl_module_run_passes, lib/Lower/passes.c):
 *  - substitution: a loop variable replaced by a constant folds through the
 *    constructors; the original tree is untouched (a copy, not an edit);
 *  - sharing: without share_unchanged every inner node is new, with it a
 *    tree that mentions no substituted variable comes back as itself;
 *  - hooks: the access hook sees loads and stores (a leading index added to
 *    both), the call hook builds calls, an expr hook replaces a node kind, a
 *    stmt hook replaces a statement kind, a hook's failure stops the copy;
 *  - nesting deeper than max_depth fails with too_deep at the deep node;
 *  - KERNEL and tile-op statements: grid, regions and operands substituted;
 *  - the registry lists the pipeline's passes in order, runs named ones and
 *    rejects an unknown name with the list of known ones. */
#include <criterion/criterion.h>
#include <string.h>

#include "IR/rewrite.h"
#include "IR/visit.h"
#include "Lower/lower.h"
#include "tilelang/ir.h"

static const char *SRC =
    "import tilelang.language as T\n"
    "\n"
    "@T.prim_func\n"
    "def main(A: T.Tensor((64,), \"float32\"), B: T.Tensor((8, 64), \"float32\")):\n"
    "    with T.Kernel(2, threads=64) as bx:\n"
    "        for i in T.serial(8):\n"
    "            A[i * 4 + bx] = A[i] + T.exp(B[i, bx])\n";

static tl_module *parse(void) {
  tl_module *m = tl_module_new();
  tl_diag d;
  tl_diag_init(&d);
  bool ok = tl_frontend_parse(m, &d, SRC, strlen(SRC), "test.py", NULL, 0);
  cr_assert(ok, "%s", d.out.data ? d.out.data : "");
  tl_diag_free(&d);
  return m;
}

/* The first FOR statement of m's function. */
typedef struct find_for {
  tl_visitor v;
  const tl_stmt *loop;
} find_for;
static void on_stmt(tl_visitor *v, const tl_stmt *s) {
  find_for *f = (find_for *)v;
  if (!f->loop && s->kind == TL_STMT_FOR) f->loop = s;
}
static const tl_stmt *first_loop(const tl_module *m) {
  find_for f = {{NULL, on_stmt, NULL, false, 0}, NULL};
  tl_visit_stmt(&f.v, m->funcs[0]->body);
  cr_assert(f.loop);
  return f.loop;
}

static char *text(const tl_expr *e) {
  tl_strbuf b = {0};
  tl_print_expr(&b, e);
  return b.data;
}

static char *module_text(const tl_module *m) {
  tl_strbuf b = {0};
  tl_print_module(&b, m);
  return b.data;
}

Test(rewrite, substitutes_and_folds_without_touching_the_original) {
  tl_module *m = parse();
  const tl_stmt *loop = first_loop(m);
  const tl_stmt *store = loop->u.loop.body;
  if (store->kind == TL_STMT_SEQ) store = store->u.seq.stmts[0];
  cr_assert_eq(store->kind, TL_STMT_STORE);
  char *before = module_text(m);
  tl_map sub;
  tl_map_init(&sub);
  cr_assert(tl_map_put(&sub, loop->u.loop.vars[0], tl_ir_int(m, loop->loc, loop->u.loop.vars[0]->dtype, 3)));
  tl_rewriter rw = {.m = m, .subst = &sub, .max_depth = 100};
  tl_stmt *c = tl_rewrite_stmt(&rw, store, 0);
  cr_assert(c && !rw.failed);
  cr_assert_neq(c, store);
  char *ix = text(c->u.store.indices[0]), *val = text(c->u.store.value);
  cr_expect_str_eq(ix, "12 + bx");
  cr_expect_str_eq(val, "A[3] + T.exp(B[3, bx])");
  char *after = module_text(m);
  cr_expect_str_eq(before, after, "the original changed:\n%s", after);
  free(ix), free(val), free(before), free(after);
  tl_map_free(&sub);
  tl_module_destroy(m);
}

Test(rewrite, shares_unchanged_subtrees_only_when_asked) {
  tl_module *m = parse();
  const tl_stmt *loop = first_loop(m);
  const tl_stmt *store = loop->u.loop.body;
  if (store->kind == TL_STMT_SEQ) store = store->u.seq.stmts[0];
  const tl_expr *v = store->u.store.value; /* A[i] + T.exp(B[i, bx]) */
  tl_rewriter copy = {.m = m};
  tl_expr *c = tl_rewrite_expr(&copy, v, 1);
  cr_assert(c);
  cr_expect_neq(c, v);
  cr_expect_neq(c->u.bin.a, v->u.bin.a);
  cr_expect(tl_expr_equal(c, v));
  tl_rewriter share = {.m = m, .share_unchanged = true};
  cr_expect_eq(tl_rewrite_expr(&share, v, 1), v);
  /* substituting bx only: A[i] is shared, the call rebuilt */
  tl_map sub;
  tl_map_init(&sub);
  const tl_var *bx = v->u.bin.b->u.call.args[0]->u.load.indices[1]->u.var;
  cr_assert(tl_map_put(&sub, bx, tl_ir_int(m, v->loc, bx->dtype, 1)));
  share.subst = &sub;
  tl_expr *s = tl_rewrite_expr(&share, v, 1);
  cr_assert(s);
  cr_expect_eq(s->u.bin.a, v->u.bin.a);
  cr_expect_neq(s->u.bin.b, v->u.bin.b);
  char *t = text(s);
  cr_expect_str_eq(t, "A[i] + T.exp(B[i, 1])");
  free(t);
  tl_map_free(&sub);
  tl_module_destroy(m);
}

/* access hook: every load and store of A gets a leading index 7. */
static tl_expr **lead7(tl_rewriter *rw, tl_loc loc, tl_buffer **b, int *n, tl_expr **ix) {
  if (strcmp((*b)->name, "A") != 0) return ix;
  tl_expr **out = tl_arena_alloc(&rw->m->arena, sizeof(tl_expr *) * (size_t)(*n + 1));
  if (!out) return NULL;
  out[0] = tl_ir_int(rw->m, loc, ix[0]->dtype, 7);
  for (int i = 0; i < *n; i++) out[i + 1] = ix[i];
  (*n)++;
  return out;
}
/* expr hook: float constants become 2.5; calls go to the call hook. */
static tl_expr *floats(tl_rewriter *rw, const tl_expr *e, int depth) {
  (void)depth;
  return e->kind == TL_EXPR_FLOAT ? tl_ir_float(rw->m, e->loc, e->dtype, 2.5) : NULL;
}
static int calls_seen;
static tl_expr *count_calls(tl_rewriter *rw, const tl_expr *e, int n, tl_expr **args) {
  calls_seen++;
  return tl_ir_call(rw->m, e->loc, e->u.call.op, n, args);
}
/* stmt hook: a store becomes its value evaluated (T.evaluate). */
static tl_stmt *store_to_eval(tl_rewriter *rw, const tl_stmt *s, int depth) {
  (void)depth;
  if (s->kind != TL_STMT_STORE) return NULL;
  tl_stmt *r = tl_ir_stmt(rw->m, s->loc, TL_STMT_EVAL);
  if (r) r->u.eval.value = tl_rewrite_expr(rw, s->u.store.value, 1);
  return r && r->u.eval.value ? r : NULL;
}

Test(rewrite, hooks) {
  tl_module *m = parse();
  const tl_stmt *loop = first_loop(m);
  tl_rewriter rw = {.m = m, .max_depth = 100, .access = lead7, .call = count_calls};
  calls_seen = 0;
  tl_stmt *c = tl_rewrite_stmt(&rw, loop, 0);
  cr_assert(c && !rw.failed);
  cr_expect_eq(c->u.loop.vars[0], loop->u.loop.vars[0]);
  cr_expect_eq(calls_seen, 1);
  const tl_stmt *st = c->u.loop.body->kind == TL_STMT_SEQ ? c->u.loop.body->u.seq.stmts[0] : c->u.loop.body;
  cr_assert_eq(st->u.store.n, 2);
  char *ix = text(st->u.store.indices[0]), *val = text(st->u.store.value);
  cr_expect_str_eq(ix, "7");
  cr_expect_str_eq(val, "A[7, i] + T.exp(B[i, bx])");
  free(ix), free(val);

  /* a one-element store of a constant: the expr hook replaces the float */
  tl_expr *one = tl_ir_float(m, loop->loc, (tl_dtype){TL_TYPE_FLOAT, 32, 1}, 1.0);
  tl_rewriter fr = {.m = m, .expr = floats};
  char *t = text(tl_rewrite_expr(&fr, one, 1));
  cr_expect_str_eq(t, "2.5");
  free(t);

  tl_rewriter ev = {.m = m, .stmt = store_to_eval};
  tl_stmt *e = tl_rewrite_stmt(&ev, loop, 0);
  cr_assert(e);
  const tl_stmt *b = e->u.loop.body->kind == TL_STMT_SEQ ? e->u.loop.body->u.seq.stmts[0] : e->u.loop.body;
  cr_expect_eq(b->kind, TL_STMT_EVAL);
  tl_module_destroy(m);
}

static tl_expr *no_loads(tl_rewriter *rw, const tl_expr *e, int depth) {
  (void)depth;
  if (e->kind == TL_EXPR_LOAD) rw->failed = true;
  return NULL;
}

Test(rewrite, failures_and_depth) {
  tl_module *m = parse();
  const tl_stmt *loop = first_loop(m);
  tl_rewriter rw = {.m = m, .expr = no_loads};
  cr_expect_null(tl_rewrite_stmt(&rw, loop, 0));
  cr_expect(rw.failed);
  cr_expect_not(rw.too_deep);

  /* (((i + i) + i) + ...): 50 levels, level d from the top at line 51 - d */
  tl_expr *i0 = tl_ir_var(m, loop->loc, loop->u.loop.vars[0]), *e = i0;
  for (int i = 0; i < 50; i++) e = tl_ir_binary(m, (tl_loc){0, i + 1, 1}, TL_OP_ADD, e, i0);
  tl_rewriter deep = {.m = m, .max_depth = 20};
  cr_expect_null(tl_rewrite_expr(&deep, e, 1));
  cr_expect(deep.too_deep && deep.failed);
  cr_expect_eq(deep.deep_loc.line, 30); /* level 21 from the top, at line 50 - 20 */
  tl_rewriter ok = {.m = m, .max_depth = 60};
  cr_expect(tl_expr_equal(tl_rewrite_expr(&ok, e, 1), e));
  tl_module_destroy(m);
}

Test(passes, registry_and_run) {
  static const char *const order[] = {
      "split-kernels",  "check-supported", "ws-scopes",        "atomic",        "warp-specialize", "gemm-wgmma",
      "pack-int4",      "pipeline",        "gemm-stage",       "barriers",      "versioning",      "layout-inference",
      "lower-tile-ops", "proxy-fence",     "atomic-vectorize", "frag-pipeline", "rasterize",       "smem-plan"};
  cr_assert_eq(tl_pass_count(), sizeof order / sizeof order[0]);
  for (size_t i = 0; i < tl_pass_count(); i++) {
    cr_expect_str_eq(tl_pass_at(i)->name, order[i]);
    cr_expect_str_eq(tl_pass_at(i)->ir_level, i < 13 ? "tile" : "simt");
    cr_expect(strlen(tl_pass_at(i)->contract) > 20);
    cr_expect_eq(&tl_lower_pass_lookup(order[i])->info, tl_pass_at(i));
  }
  cr_expect_null(tl_pass_at(tl_pass_count()));

  tl_context *ctx = NULL;
  cr_assert_eq(tl_context_create(&ctx), TL_OK);
  static const char *par =
      "import tilelang.language as T\n"
      "\n"
      "@T.prim_func\n"
      "def main(A: T.Tensor((64,), \"float32\")):\n"
      "    with T.Kernel(1, threads=64) as bx:\n"
      "        for i in T.Parallel(64):\n"
      "            A[i] = A[i] * 2.0\n";
  tl_module *m = NULL;
  cr_assert_eq(tl_module_parse(ctx, par, strlen(par), "t.py", NULL, 0, &m), TL_OK);
  const char *bad[] = {"pipeline", "nope"};
  cr_expect_eq(tl_module_run_passes(ctx, m, bad, 2, NULL), TL_ERR_INVALID_ARGUMENT);
  cr_expect(strstr(tl_context_last_error(ctx),
                   "unknown pass 'nope' (known passes: split-kernels, check-supported, ws-scopes, atomic,"));
  const char *good[] = {"check-supported", "atomic",     "warp-specialize",  "pipeline",
                        "barriers",        "versioning", "layout-inference", "lower-tile-ops"};
  tl_pass_options po = {.target = "sm_80", .verify_each = true};
  cr_expect_eq(tl_module_run_passes(ctx, m, good, 8, &po), TL_OK, "%s", tl_context_last_error(ctx));
  char *t = NULL;
  cr_assert_eq(tl_module_print(ctx, m, &t), TL_OK);
  cr_expect(strstr(t, "A[T.get_thread_binding(0)] = A[T.get_thread_binding(0)] * 2.0"), "%s", t);
  cr_expect_null(strstr(t, "T.Parallel"), "%s", t);
  tl_free(t);
  tl_module_destroy(m);
  tl_context_destroy(ctx);
}

Test(rewrite, kernel_and_tile_ops) {
  static const char *src =
      "import tilelang.language as T\n"
      "\n"
      "@T.prim_func\n"
      "def main(A: T.Tensor((64,), \"float32\")):\n"
      "    with T.Kernel(4, threads=64) as bx:\n"
      "        S = T.alloc_shared((16,), \"float32\")\n"
      "        T.copy(A[bx * 16:bx * 16 + 16], S)\n"
      "        T.fill(S, T.Cast(\"float32\", bx))\n";
  tl_module *m = tl_module_new();
  tl_diag d;
  tl_diag_init(&d);
  cr_assert(tl_frontend_parse(m, &d, src, strlen(src), "k.py", NULL, 0), "%s", d.out.data);
  tl_diag_free(&d);
  tl_stmt *k = m->funcs[0]->body;
  while (k->kind == TL_STMT_SEQ) k = k->u.seq.stmts[0];
  cr_assert_eq(k->kind, TL_STMT_KERNEL);
  tl_map sub;
  tl_map_init(&sub);
  cr_assert(tl_map_put(&sub, k->u.kernel.block_vars[0], tl_ir_int(m, k->loc, k->u.kernel.block_vars[0]->dtype, 2)));
  tl_rewriter rw = {.m = m, .subst = &sub, .max_depth = 100};
  tl_stmt *c = tl_rewrite_stmt(&rw, m->funcs[0]->body, 0);
  cr_assert(c && !rw.failed);
  tl_stmt *old = m->funcs[0]->body;
  m->funcs[0]->body = c;
  char *t = module_text(m);
  cr_expect(strstr(t, "with T.Kernel(4, threads=64) as bx:"), "%s", t);
  cr_expect(strstr(t, "T.copy(A[32:32 + 16], S)"), "%s", t); /* min 32, extent 16 */
  cr_expect(strstr(t, "T.fill(S, 2.0)"), "%s", t);
  m->funcs[0]->body = old;
  char *o = module_text(m);
  cr_expect(strstr(o, "T.copy(A[bx * 16:bx * 16 + 16], S)"), "%s", o);
  free(t), free(o);
  tl_map_free(&sub);
  tl_module_destroy(m);
}
