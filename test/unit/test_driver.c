/* Unit tests of the compiler driver (lib/Driver/compiler.h): its three
 * stages on one parse, the tile IR kept as written beside the lowered copy,
 * stage hooks and times, and its errors. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "Driver/compiler.h"
#include "Support/context.h"
#include "tilelang/tilelang.h"

static char *print_text(const tl_module *m) {
  tl_strbuf sb = {0};
  tl_print_module(&sb, m);
  return tl_strbuf_take(&sb);
}

typedef struct stages {
  char names[64][32];
  int n;
} stages;
static void record(void *user, const char *stage, const char *text) {
  stages *s = user;
  (void)text;
  if (s->n < 64) snprintf(s->names[s->n++], 32, "%s", stage);
}

/* parse → lower → codegen: the tile IR stays as the front end made it (the
 * same text as a separate parse), the SIMT IR is a separate module whose
 * text is what tl_kernel_compile keeps, the PTX is for the target asked. */
Test(driver, stages_keep_the_tile_ir_and_lower_a_copy) {
  tl_context *ctx = NULL;
  cr_assert_eq(tl_context_create(&ctx), TL_OK);
  char *src = NULL;
  size_t len = 0;
  cr_assert_eq(tl_compiler_read_file(ctx, "examples/elementwise_add.py", &src, &len), TL_OK);
  cr_assert_eq(strlen(src), len);
  stages seen = {0};
  tl_compile_times tm = {0};
  tl_compile_options o = {0};
  o.target = "sm_90a";
  o.after_stage = record;
  o.after_stage_user = &seen;
  o.times = &tm;
  tl_compilation c;
  tl_compilation_init(&c, &o);
  tl_context_begin(ctx);
  cr_assert_eq(tl_compiler_parse(ctx, &c, src, len, "ew.py", NULL, 0), TL_OK);
  char *tile0 = print_text(c.tile);
  cr_assert_eq(tl_compiler_lower(ctx, &c), TL_OK);
  cr_assert_eq(tl_compiler_codegen(ctx, &c), TL_OK);
  cr_assert_eq(tl_context_end(ctx, TL_OK), TL_OK);
  ctx->diag.sources.len = 0;
  tl_compilation_report_times(&c);
  /* the tile IR is untouched by lowering; the SIMT IR is another module */
  char *tile1 = print_text(c.tile);
  cr_expect_str_eq(tile1, tile0);
  cr_expect(c.simt && c.simt != c.tile && c.simt->funcs[0] != c.tile->funcs[0]);
  cr_expect_str_neq(c.simt_ir, tile0);
  cr_expect(strstr(c.simt_ir, "T.get_thread_binding(0)") && !strstr(tile0, "T.get_thread_binding"), "%s", c.simt_ir);
  cr_expect_str_eq(c.target->name, "sm_90a");
  cr_expect(strstr(c.ptx, ".target sm_90a"), "%s", c.ptx);
  cr_expect(c.llvm_ir && strstr(c.llvm_ir, "nvptx"), "the LLVM IR is printed for after_stage");
  /* stages in order: parse, the 18 passes, llvm, ptx */
  cr_assert_eq(seen.n, 21);
  cr_expect_str_eq(seen.names[0], "parse");
  cr_expect_str_eq(seen.names[1], "split-kernels");
  cr_expect_str_eq(seen.names[2], "check-supported");
  cr_expect_str_eq(seen.names[3], "ws-scopes");
  cr_expect_str_eq(seen.names[18], "smem-plan");
  cr_expect_str_eq(seen.names[19], "llvm");
  cr_expect_str_eq(seen.names[20], "ptx");
  cr_expect_gt(tm.total, 0);
  cr_expect_geq(tm.total + 1e-9, tm.parse + tm.tile_passes + tm.simt + tm.llvm_ir + tm.opt + tm.ptx);
  /* the same SIMT IR as the public compile API's */
  tl_kernel *k = NULL;
  tl_compile_options ko = {0};
  ko.target = "sm_90a";
  ko.stop_after = TL_STAGE_SIMT;
  cr_assert_eq(tl_kernel_compile(ctx, src, len, "ew.py", NULL, 0, &ko, &k), TL_OK);
  cr_expect_str_eq(tl_kernel_simt_ir(k), c.simt_ir);
  tl_kernel_destroy(k);
  free(tile0);
  free(tile1);
  free(src);
  tl_compilation_free(&c);
  tl_compilation_free(&c); /* idempotent */
  tl_context_destroy(ctx);
}

Test(driver, errors) {
  tl_context *ctx = NULL;
  cr_assert_eq(tl_context_create(&ctx), TL_OK);
  char *src = NULL;
  size_t len = 0;
  tl_context_begin(ctx);
  cr_expect_eq(tl_compiler_read_file(ctx, "examples/no_such_file.py", &src, &len), TL_ERR_IO);
  cr_expect_null(src);
  cr_expect(strstr(tl_context_last_error(ctx), "cannot open 'examples/no_such_file.py'"), "%s",
            tl_context_last_error(ctx));
  tl_context_end(ctx, TL_ERR_IO);
  /* an unknown target is an error of the lower stage, after a good parse */
  const char *text =
      "import tilelang.language as T\n"
      "@T.prim_func\n"
      "def main(A: T.Tensor((128,), \"float32\")):\n"
      "    with T.Kernel(1, threads=128) as bx:\n"
      "        for i in T.Parallel(128):\n"
      "            A[i] = 1.0\n";
  tl_compile_options o = {0};
  o.target = "sm_70";
  tl_compilation c;
  tl_compilation_init(&c, &o);
  tl_context_begin(ctx);
  cr_assert_eq(tl_compiler_parse(ctx, &c, text, strlen(text), "t.py", NULL, 0), TL_OK);
  cr_expect_eq(tl_compiler_lower(ctx, &c), TL_ERR_INVALID_ARGUMENT);
  cr_expect(strstr(tl_context_last_error(ctx), "unknown target 'sm_70' (expected sm_80, sm_86"), "%s",
            tl_context_last_error(ctx));
  cr_expect_null(c.simt);
  tl_context_end(ctx, TL_ERR_INVALID_ARGUMENT);
  ctx->diag.sources.len = 0;
  tl_compilation_free(&c);
  /* a file without a prim_func: the front end's error */
  tl_compilation_init(&c, NULL);
  tl_context_begin(ctx);
  cr_expect_eq(tl_compiler_parse(ctx, &c, "x = 1\n", 6, "none.py", NULL, 0), TL_ERR_COMPILE);
  cr_expect(strstr(tl_context_last_error(ctx), "none.py:1:1: error: no kernel found"), "%s",
            tl_context_last_error(ctx));
  tl_context_end(ctx, TL_ERR_COMPILE);
  ctx->diag.sources.len = 0;
  tl_compilation_free(&c);
  tl_context_destroy(ctx);
}
