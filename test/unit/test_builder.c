/* Unit tests of the C builder API (include/tilelang/ir.h, lib/IR/builder.c).
 *
 * Builds examples/gemm.py's kernel with the builder and checks that the
 * printed module is byte-for-byte the canonical text of docs/canonical-tir.md;
 * checks that API misuse is reported as TL_ERR_INVALID_ARGUMENT with a
 * message naming the call and the argument; and that a built module that
 * breaks a verifier rule fails tl_builder_finish with TL_ERR_COMPILE. */
#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

#include "tilelang/ir.h"

static const char gemm_canonical[] =
    "import tilelang.language as T\n"
    "\n"
    "@T.prim_func\n"
    "def main(A: T.Tensor((1024, 1024), \"float16\"), B: T.Tensor((1024, 1024), \"float16\"), "
    "C: T.Tensor((1024, 1024), \"float16\")):\n"
    "    T.func_attr({\"out_idx\": [2]})\n"
    "    with T.Kernel(8, 8, threads=128) as (bx, by):\n"
    "        A_shared = T.alloc_shared((128, 32), \"float16\")\n"
    "        B_shared = T.alloc_shared((32, 128), \"float16\")\n"
    "        C_local = T.alloc_fragment((128, 128), \"float32\")\n"
    "        T.clear(C_local)\n"
    "        for ko in T.Pipelined(32, num_stages=3):\n"
    "            T.copy(A[by * 128:by * 128 + 128, ko * 32:ko * 32 + 32], A_shared)\n"
    "            T.copy(B[ko * 32:ko * 32 + 32, bx * 128:bx * 128 + 128], B_shared)\n"
    "            T.gemm(A_shared, B_shared, C_local)\n"
    "        T.copy(C_local, C[by * 128:by * 128 + 128, bx * 128:bx * 128 + 128])\n";

static const tl_dtype f16 = {TL_TYPE_FLOAT, 16, 1};
static const tl_dtype f32 = {TL_TYPE_FLOAT, 32, 1};

static tl_context *ctx;
static void setup(void) { cr_assert_eq(tl_context_create(&ctx), TL_OK); }
static void teardown(void) { tl_context_destroy(ctx); }

static tl_expr *I(tl_builder *b, int64_t v) { return tl_builder_int(b, v); }
static tl_expr *mul(tl_builder *b, tl_expr *x, int64_t c) { return tl_builder_binary(b, TL_OP_MUL, x, I(b, c)); }
static tl_tile_arg whole(tl_buffer *buf) {
  tl_tile_arg a;
  memset(&a, 0, sizeof a);
  a.kind = TL_TILE_ARG_REGION;
  a.region.buffer = buf;
  return a;
}
/* A 2-D region buf[m0 : m0 + e0, m1 : m1 + e1]. */
typedef struct region2 {
  tl_expr *mins[2], *ext[2];
} region2;
static tl_tile_arg region(tl_buffer *buf, region2 *r) {
  tl_tile_arg a = whole(buf);
  a.region.mins = r->mins;
  a.region.extents = r->ext;
  a.region.ndim = 2;
  return a;
}

/* Builds examples/gemm.py (M = N = K = 1024, 128x128x32 tiles, 3 stages). */
static tl_builder *build_gemm(void) {
  tl_builder *b = NULL;
  cr_assert_eq(tl_builder_create(ctx, "main", &b), TL_OK);
  tl_expr *sq[2] = {I(b, 1024), I(b, 1024)};
  tl_buffer *A = tl_builder_param_tensor(b, "A", f16, sq, 2);
  tl_buffer *B = tl_builder_param_tensor(b, "B", f16, sq, 2);
  tl_buffer *C = tl_builder_param_tensor(b, "C", f16, sq, 2);
  int out = -1;
  tl_builder_set_out_idx(b, &out, 1);
  tl_expr *grid[2] = {I(b, 8), I(b, 8)};
  const char *names[2] = {"bx", "by"};
  tl_var *bv[2];
  tl_builder_kernel_begin(b, grid, 2, I(b, 128), names, bv);
  tl_expr *bx = tl_builder_var_ref(b, bv[0]), *by = tl_builder_var_ref(b, bv[1]);
  tl_expr *sa[2] = {I(b, 128), I(b, 32)}, *sb[2] = {I(b, 32), I(b, 128)}, *sc[2] = {I(b, 128), I(b, 128)};
  tl_buffer *As = tl_builder_alloc(b, TL_SCOPE_SHARED_DYN, "A_shared", f16, sa, 2);
  tl_buffer *Bs = tl_builder_alloc(b, TL_SCOPE_SHARED_DYN, "B_shared", f16, sb, 2);
  tl_buffer *Cl = tl_builder_alloc(b, TL_SCOPE_FRAGMENT, "C_local", f32, sc, 2);
  tl_tile_arg clr = whole(Cl);
  tl_builder_tile_op(b, "clear", &clr, 1, NULL, 0);
  const char *kn = "ko";
  tl_expr *kext = I(b, 32);
  tl_var *ko;
  tl_builder_for_begin(b, TL_LOOP_PIPELINED, &kn, &kext, 1, 3, &ko);
  tl_expr *k = tl_builder_var_ref(b, ko);
  region2 ra = {{mul(b, by, 128), mul(b, k, 32)}, {I(b, 128), I(b, 32)}};
  tl_tile_arg c1[2] = {region(A, &ra), whole(As)};
  tl_builder_tile_op(b, "copy", c1, 2, NULL, 0);
  region2 rb = {{mul(b, k, 32), mul(b, bx, 128)}, {I(b, 32), I(b, 128)}};
  tl_tile_arg c2[2] = {region(B, &rb), whole(Bs)};
  tl_builder_tile_op(b, "copy", c2, 2, NULL, 0);
  tl_tile_arg g[3] = {whole(As), whole(Bs), whole(Cl)};
  tl_builder_tile_op(b, "gemm", g, 3, NULL, 0);
  tl_builder_for_end(b);
  region2 rc = {{mul(b, by, 128), mul(b, bx, 128)}, {I(b, 128), I(b, 128)}};
  tl_tile_arg c3[2] = {whole(Cl), region(C, &rc)};
  tl_builder_tile_op(b, "copy", c3, 2, NULL, 0);
  tl_builder_kernel_end(b);
  return b;
}

TestSuite(builder, .init = setup, .fini = teardown);

Test(builder, gemm_prints_canonical_text) {
  tl_builder *b = build_gemm();
  tl_module *m = NULL;
  tl_status st = tl_builder_finish(b, &m);
  cr_assert_eq(st, TL_OK, "finish: %s: %s", tl_status_name(st), tl_context_last_error(ctx));
  char *text = NULL;
  cr_assert_eq(tl_module_print(ctx, m, &text), TL_OK);
  cr_expect_str_eq(text, gemm_canonical);
  cr_assert_eq(tl_module_verify(ctx, m), TL_OK, "%s", tl_context_last_error(ctx));
  tl_free(text);
  tl_module_destroy(m);
}

/* The built module equals the parsed examples/gemm.py (ctest runs in the
 * source directory). */
Test(builder, gemm_equals_parsed_example) {
  tl_module *parsed = NULL, *built = NULL;
  tl_status st = tl_module_parse_file(ctx, "examples/gemm.py", NULL, 0, &parsed);
  cr_assert_eq(st, TL_OK, "%s: %s", tl_status_name(st), tl_context_last_error(ctx));
  cr_assert_eq(tl_builder_finish(build_gemm(), &built), TL_OK, "%s", tl_context_last_error(ctx));
  cr_expect(tl_module_equal(parsed, built));
  tl_module_destroy(parsed);
  tl_module_destroy(built);
}

Test(builder, gemm_attrs_print_in_table_order) {
  tl_builder *b = NULL;
  cr_assert_eq(tl_builder_create(ctx, NULL, &b), TL_OK);
  tl_expr *s[2] = {I(b, 64), I(b, 64)};
  tl_builder_param_tensor(b, "X", f16, s, 2);
  tl_expr *grid = I(b, 1);
  tl_builder_kernel_begin(b, &grid, 1, I(b, 128), NULL, NULL);
  tl_buffer *As = tl_builder_alloc(b, TL_SCOPE_SHARED_DYN, "A_s", f16, s, 2);
  tl_buffer *Bs = tl_builder_alloc(b, TL_SCOPE_SHARED_DYN, "B_s", f16, s, 2);
  tl_buffer *Cl = tl_builder_alloc(b, TL_SCOPE_FRAGMENT, "C_l", f32, s, 2);
  tl_tile_arg g[3] = {whole(As), whole(Bs), whole(Cl)};
  tl_tile_kwarg kw[2] = {{"policy", I(b, TL_POLICY_FULL_ROW)}, {"transpose_B", I(b, 1)}};
  tl_builder_tile_op(b, "gemm", g, 3, kw, 2);
  tl_builder_kernel_end(b);
  tl_module *m = NULL;
  cr_assert_eq(tl_builder_finish(b, &m), TL_OK, "%s", tl_context_last_error(ctx));
  char *text = NULL;
  cr_assert_eq(tl_module_print(ctx, m, &text), TL_OK);
  cr_expect(strstr(text,
                   "        T.gemm(A_s, B_s, C_l, transpose_B=True, "
                   "policy=T.GemmWarpPolicy.FullRow)\n") != NULL,
            "got:\n%s", text);
  cr_expect(strstr(text, "with T.Kernel(1, threads=128) as bx:\n") != NULL, "got:\n%s", text);
  tl_free(text);
  tl_module_destroy(m);
}

/* Expects finish to fail with status st and a message containing want. */
static void expect_fail(tl_builder *b, tl_status st, const char *want) {
  tl_module *m = (tl_module *)1;
  tl_status got = tl_builder_finish(b, &m);
  cr_expect_eq(got, st, "status %s, message: %s", tl_status_name(got), tl_context_last_error(ctx));
  cr_expect_null(m);
  cr_expect(strstr(tl_context_last_error(ctx), want) != NULL, "message '%s' lacks '%s'", tl_context_last_error(ctx),
            want);
}

Test(builder, alloc_bad_ndim) {
  tl_builder *b = NULL;
  cr_assert_eq(tl_builder_create(ctx, "main", &b), TL_OK);
  tl_expr *grid = I(b, 1);
  tl_builder_kernel_begin(b, &grid, 1, I(b, 128), NULL, NULL);
  cr_expect_null(tl_builder_alloc(b, TL_SCOPE_SHARED_DYN, "S", f16, NULL, 0));
  tl_builder_kernel_end(b);
  expect_fail(b, TL_ERR_INVALID_ARGUMENT, "tl_builder_alloc: argument 'ndim': expected 1..8, got 0");
  cr_expect_str_eq(tl_context_last_error(ctx), "tl_builder_alloc: argument 'ndim': expected 1..8, got 0");
}

Test(builder, first_error_wins_and_null_handles_are_quiet) {
  tl_builder *b = NULL;
  cr_assert_eq(tl_builder_create(ctx, "main", &b), TL_OK);
  tl_expr *big = tl_builder_int(b, INT64_C(1) << 40);
  cr_expect_null(big);
  /* Using the NULL result does nothing and records nothing new. */
  cr_expect_null(tl_builder_binary(b, TL_OP_ADD, big, I(b, 1)));
  cr_expect_null(tl_builder_alloc(b, TL_SCOPE_GLOBAL, "G", f16, NULL, 0));
  expect_fail(b, TL_ERR_INVALID_ARGUMENT, "tl_builder_int: argument 'v': expected an int32 value");
}

Test(builder, misuse_messages) {
  struct {
    const char *want;
    int which;
  } cases[] = {
      {"tl_builder_binary: argument 'op': expected a tl_binop", 0},
      {"tl_builder_binary: argument 'r': expected a handle, got NULL", 1},
      {"tl_builder_kernel_begin: argument 'ngrid': expected 1..3, got 4", 2},
      {"tl_builder_kernel_end: no open T.Kernel scope", 3},
      {"tl_builder_tile_op: argument 'op': unknown tile op 'T.cpy'", 4},
      {"tl_builder_tile_op: argument 'kwargs[0].name': T.copy has no keyword 'transpose_A'", 5},
      {"tl_builder_param_tensor: argument 'name': expected an identifier (not a keyword), got '1A'", 6},
      {"tl_builder_alloc: argument 'scope': expected a shared, fragment or local scope (1..5), got 0 (global)", 7},
      {"tl_builder_call: argument 'name': unknown intrinsic 'T.nosuch'", 8},
      {"tl_builder_for_begin: argument 'nvars': only T.Parallel takes more than one variable, got 2", 9},
      {"tl_builder_else: no open if scope", 10},
      {"tl_builder_finish: 1 scope left open (innermost: a for loop)", 11},
      {"tl_builder_set_out_idx: argument 'idx[0]': out_idx 3 is out of range for 1 parameter", 12},
      {"tl_builder_int_typed: argument 'v': 300 does not fit in uint8", 13},
      {"tl_builder_tile_op: argument 'kwargs[1].name': keyword 'dim' is given twice", 14},
      {"tl_builder_call: argument 'n': T.exp2 takes 1 argument, got 2", 15},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    tl_builder *b = NULL;
    cr_assert_eq(tl_builder_create(ctx, "main", &b), TL_OK);
    tl_expr *s2[2] = {I(b, 4), I(b, 4)};
    tl_buffer *A = tl_builder_param_tensor(b, "A", f16, s2, 2);
    tl_tile_arg two[2] = {whole(A), whole(A)};
    const char *ij[2] = {"i", "j"};
    tl_expr *e[2] = {I(b, 1), I(b, 2)};
    switch (cases[i].which) {
    case 0: tl_builder_binary(b, (tl_binop)99, e[0], e[1]); break;
    case 1: tl_builder_binary(b, TL_OP_ADD, e[0], NULL); break;
    case 2: {
      tl_expr *g[4] = {e[0], e[0], e[0], e[0]};
      tl_builder_kernel_begin(b, g, 4, I(b, 128), NULL, NULL);
      break;
    }
    case 3: tl_builder_kernel_end(b); break;
    case 4: tl_builder_tile_op(b, "cpy", two, 2, NULL, 0); break;
    case 5: {
      tl_tile_kwarg kw = {"transpose_A", I(b, 1)};
      tl_builder_tile_op(b, "copy", two, 2, &kw, 1);
      break;
    }
    case 6: tl_builder_param_tensor(b, "1A", f16, s2, 2); break;
    case 7: tl_builder_alloc(b, TL_SCOPE_GLOBAL, "G", f16, s2, 2); break;
    case 8: tl_builder_call(b, "nosuch", e, 1); break;
    case 9: tl_builder_for_begin(b, TL_LOOP_SERIAL, ij, e, 2, 0, NULL); break;
    case 10: tl_builder_else(b); break;
    case 11: tl_builder_for_begin(b, TL_LOOP_SERIAL, ij, e, 1, 0, NULL); break;
    case 12: {
      int idx = 3;
      tl_builder_set_out_idx(b, &idx, 1);
      break;
    }
    case 13: tl_builder_int_typed(b, (tl_dtype){TL_TYPE_UINT, 8, 1}, 300); break;
    case 14: {
      tl_tile_kwarg kw[2] = {{"dim", I(b, 1)}, {"dim", I(b, 0)}};
      tl_builder_tile_op(b, "reduce_sum", two, 2, kw, 2);
      break;
    }
    case 15: tl_builder_call(b, "exp2", e, 2); break;
    }
    expect_fail(b, TL_ERR_INVALID_ARGUMENT, cases[i].want);
  }
}

Test(builder, copy_with_disagreeing_extents_fails_verification) {
  tl_builder *b = NULL;
  cr_assert_eq(tl_builder_create(ctx, "main", &b), TL_OK);
  tl_expr *sa[2] = {I(b, 1024), I(b, 1024)};
  tl_buffer *A = tl_builder_param_tensor(b, "A", f16, sa, 2);
  tl_expr *grid = I(b, 4);
  tl_builder_kernel_begin(b, &grid, 1, I(b, 128), NULL, NULL);
  tl_expr *ss[2] = {I(b, 64), I(b, 32)};
  tl_buffer *As = tl_builder_alloc(b, TL_SCOPE_SHARED_DYN, "A_shared", f16, ss, 2);
  region2 r = {{I(b, 0), I(b, 0)}, {I(b, 128), I(b, 32)}};
  tl_tile_arg c[2] = {region(A, &r), whole(As)};
  tl_builder_tile_op(b, "copy", c, 2, NULL, 0);
  tl_builder_kernel_end(b);
  expect_fail(b, TL_ERR_COMPILE,
              "error: T.copy: extents disagree: source A[...] has extents (128, 32) but "
              "destination A_shared has (64, 32)");
  cr_expect_eq(tl_context_error_count(ctx), 1);
}

Test(builder, if_else_and_store) {
  tl_builder *b = NULL;
  cr_assert_eq(tl_builder_create(ctx, "main", &b), TL_OK);
  tl_expr *s1 = I(b, 256);
  tl_buffer *A = tl_builder_param_tensor(b, "A", f32, &s1, 1);
  tl_var *n = tl_builder_param_scalar(b, "n", (tl_dtype){TL_TYPE_INT, 32, 1});
  tl_expr *grid = I(b, 2);
  tl_var *bx;
  const char *nm = "bx";
  tl_builder_kernel_begin(b, &grid, 1, I(b, 128), &nm, &bx);
  const char *in = "i";
  tl_expr *ext = I(b, 128);
  tl_var *i;
  tl_builder_for_begin(b, TL_LOOP_PARALLEL, &in, &ext, 1, 0, &i);
  tl_expr *idx = tl_builder_binary(b, TL_OP_ADD, mul(b, tl_builder_var_ref(b, bx), 128), tl_builder_var_ref(b, i));
  tl_builder_if_begin(b, tl_builder_binary(b, TL_OP_LT, idx, tl_builder_var_ref(b, n)));
  tl_builder_store(b, A, &idx, 1, tl_builder_float(b, f32, 1.0));
  tl_builder_else(b);
  tl_builder_store(b, A, &idx, 1, tl_builder_float(b, f32, 0.5));
  tl_builder_if_end(b);
  tl_builder_for_end(b);
  tl_builder_kernel_end(b);
  tl_module *m = NULL;
  cr_assert_eq(tl_builder_finish(b, &m), TL_OK, "%s", tl_context_last_error(ctx));
  char *text = NULL;
  cr_assert_eq(tl_module_print(ctx, m, &text), TL_OK);
  cr_expect_str_eq(text,
                   "import tilelang.language as T\n\n@T.prim_func\n"
                   "def main(A: T.Tensor((256,), \"float32\"), n: T.int32):\n"
                   "    with T.Kernel(2, threads=128) as bx:\n"
                   "        for i in T.Parallel(128):\n"
                   "            if bx * 128 + i < n:\n"
                   "                A[bx * 128 + i] = 1.0\n"
                   "            else:\n"
                   "                A[bx * 128 + i] = 0.5\n");
  tl_free(text);
  tl_module_destroy(m);
}

Test(builder, destroy_unfinished_and_nulls) {
  tl_builder *b = build_gemm();
  tl_builder_destroy(b);
  tl_builder_destroy(NULL);
  cr_expect_eq(tl_builder_finish(NULL, NULL), TL_ERR_INVALID_ARGUMENT);
  cr_expect_eq(tl_builder_create(NULL, "main", &b), TL_ERR_INVALID_ARGUMENT);
  cr_expect_eq(tl_builder_create(ctx, "main", NULL), TL_ERR_INVALID_ARGUMENT);
  cr_expect(strstr(tl_context_last_error(ctx), "argument 'out'") != NULL);
  cr_expect_eq(tl_builder_create(ctx, "def", &b), TL_ERR_INVALID_ARGUMENT);
  cr_expect(strstr(tl_context_last_error(ctx), "argument 'func_name'") != NULL);
}
