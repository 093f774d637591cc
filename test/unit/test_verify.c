/* Unit tests of the tile-IR verifier (lib/IR/verify.c, the op rules in
 * lib/IR/ops.c) on builder-made IR: for each rule, the exact message and the
 * number of errors reported.  Built IR has no locations, so each diagnostic
 * renders as "error: MESSAGE". */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "IR/tir.h"
#include "tilelang/ir.h"

static const tl_dtype f16 = {TL_TYPE_FLOAT, 16, 1};
static const tl_dtype f32 = {TL_TYPE_FLOAT, 32, 1};
static const tl_dtype i32 = {TL_TYPE_INT, 32, 1};
static const tl_dtype i8 = {TL_TYPE_INT, 8, 1};

static tl_context *ctx;
static tl_builder *b;
static tl_buffer *A, *G; /* A: (1024, 1024) float16; G: (256,) float32 */

static tl_expr *I(int64_t v) { return tl_builder_int(b, v); }
static tl_expr *V(tl_var *v) { return tl_builder_var_ref(b, v); }
static tl_tile_arg whole(tl_buffer *buf) {
  tl_tile_arg a;
  memset(&a, 0, sizeof a);
  a.kind = TL_TILE_ARG_REGION;
  a.region.buffer = buf;
  return a;
}
static tl_tile_arg scalar(tl_expr *e) {
  tl_tile_arg a;
  memset(&a, 0, sizeof a);
  a.kind = TL_TILE_ARG_EXPR;
  a.expr = e;
  return a;
}
static tl_buffer *alloc2(tl_scope s, const char *name, tl_dtype t, int64_t d0, int64_t d1) {
  tl_expr *sh[2] = {I(d0), I(d1)};
  return tl_builder_alloc(b, s, name, t, sh, 2);
}
static void kernel(void) {
  tl_expr *grid = I(8);
  tl_builder_kernel_begin(b, &grid, 1, I(128), NULL, NULL);
}

static void setup(void) {
  cr_assert_eq(tl_context_create(&ctx), TL_OK);
  cr_assert_eq(tl_builder_create(ctx, "main", &b), TL_OK);
  tl_expr *sa[2] = {I(1024), I(1024)};
  A = tl_builder_param_tensor(b, "A", f16, sa, 2);
  tl_expr *sg = I(256);
  G = tl_builder_param_tensor(b, "G", f32, &sg, 1);
}
static void teardown(void) { tl_context_destroy(ctx); }

/* Finishes b and expects TL_ERR_COMPILE with `count` errors, the first
 * being "error: <msg>". */
static void expect_errors(int count, const char *msg) {
  tl_module *m = NULL;
  tl_status st = tl_builder_finish(b, &m);
  b = NULL;
  const char *text = tl_context_last_error(ctx);
  cr_assert_eq(st, TL_ERR_COMPILE, "status %s: %s", tl_status_name(st), text);
  cr_expect_null(m);
  size_t n = strlen(msg) + 16;
  char *want = malloc(n);
  snprintf(want, n, "error: %s\n", msg);
  cr_expect(strncmp(text, want, strlen(want)) == 0, "got:\n%s\nwanted first:\n%s", text, want);
  free(want);
  cr_expect_eq(tl_context_error_count(ctx), count, "%d errors:\n%s", tl_context_error_count(ctx), text);
}
/* Expects the i-th error line (0-based) to be msg. */
static void expect_line(int i, const char *msg) {
  const char *t = tl_context_last_error(ctx);
  for (int k = 0; k < i && t; k++) {
    t = strstr(t, "\nerror: ");
    if (t) t++;
  }
  cr_assert_not_null(t, "fewer than %d errors", i + 1);
  size_t n = strlen(msg);
  cr_expect(strncmp(t, "error: ", 7) == 0 && strncmp(t + 7, msg, n) == 0 && t[7 + n] == '\n',
            "error %d: got '%.*s', wanted '%s'", i, (int)(strcspn(t, "\n")), t, msg);
}

TestSuite(verify, .init = setup, .fini = teardown);

Test(verify, valid_module_passes) {
  kernel();
  tl_buffer *S = alloc2(TL_SCOPE_SHARED_DYN, "S", f16, 64, 64);
  tl_buffer *F = alloc2(TL_SCOPE_FRAGMENT, "F", f32, 64, 64);
  tl_tile_arg c[2] = {whole(A), whole(S)};
  /* A[0:64, 0:64] -> S: give the region explicitly. */
  tl_expr *mins[2] = {I(0), I(0)}, *ext[2] = {I(64), I(64)};
  c[0].region.mins = mins, c[0].region.extents = ext, c[0].region.ndim = 2;
  tl_builder_tile_op(b, "copy", c, 2, NULL, 0);
  tl_tile_arg g[3] = {whole(S), whole(S), whole(F)};
  tl_builder_tile_op(b, "gemm", g, 3, NULL, 0);
  tl_builder_kernel_end(b);
  tl_module *m = NULL;
  cr_assert_eq(tl_builder_finish(b, &m), TL_OK, "%s", tl_context_last_error(ctx));
  b = NULL;
  /* The verifier on its own, twice (no state kept between runs). */
  tl_diag d;
  tl_diag_init(&d);
  cr_expect_eq(tl_verify_module(m, &d), 0);
  cr_expect_eq(tl_verify_module(m, &d), 0);
  tl_diag_free(&d);
  tl_module_destroy(m);
}

Test(verify, copy_extents_disagree) {
  kernel();
  tl_buffer *S = alloc2(TL_SCOPE_SHARED_DYN, "A_shared", f16, 64, 32);
  tl_expr *mins[2] = {I(0), I(0)}, *ext[2] = {I(128), I(32)};
  tl_tile_arg c[2] = {whole(A), whole(S)};
  c[0].region.mins = mins, c[0].region.extents = ext, c[0].region.ndim = 2;
  tl_builder_tile_op(b, "copy", c, 2, NULL, 0);
  tl_builder_kernel_end(b);
  expect_errors(1,
                "T.copy: extents disagree: source A[...] has extents (128, 32) but "
                "destination A_shared has (64, 32)");
}

Test(verify, copy_unit_dims_and_symbolic_extents_accepted) {
  kernel();
  tl_expr *s3[3] = {I(1), I(64), I(1)};
  tl_buffer *S = tl_builder_alloc(b, TL_SCOPE_SHARED_DYN, "S", f16, s3, 3);
  tl_expr *mins[2] = {I(0), I(0)}, *ext[2] = {I(64), I(1)};
  tl_tile_arg c[2] = {whole(A), whole(S)};
  c[0].region.mins = mins, c[0].region.extents = ext, c[0].region.ndim = 2;
  tl_builder_tile_op(b, "copy", c, 2, NULL, 0);
  tl_builder_kernel_end(b);
  tl_module *m = NULL;
  cr_expect_eq(tl_builder_finish(b, &m), TL_OK, "%s", tl_context_last_error(ctx));
  b = NULL;
  tl_module_destroy(m);
}

Test(verify, gemm_c_not_fragment) {
  kernel();
  tl_buffer *As = alloc2(TL_SCOPE_SHARED_DYN, "A_s", f16, 64, 32);
  tl_buffer *Bs = alloc2(TL_SCOPE_SHARED_DYN, "B_s", f16, 32, 64);
  tl_buffer *Cs = alloc2(TL_SCOPE_SHARED_DYN, "C_s", f32, 64, 64);
  tl_tile_arg g[3] = {whole(As), whole(Bs), whole(Cs)};
  tl_builder_tile_op(b, "gemm", g, 3, NULL, 0);
  tl_builder_kernel_end(b);
  expect_errors(1, "T.gemm: C must be a fragment (local.fragment), but 'C_s' is shared.dyn");
}

Test(verify, gemm_a_global) {
  kernel();
  tl_buffer *Bs = alloc2(TL_SCOPE_SHARED_DYN, "B_s", f16, 1024, 64);
  tl_buffer *C = alloc2(TL_SCOPE_FRAGMENT, "C_l", f32, 1024, 64);
  tl_tile_arg g[3] = {whole(A), whole(Bs), whole(C)};
  tl_builder_tile_op(b, "gemm", g, 3, NULL, 0);
  tl_builder_kernel_end(b);
  expect_errors(1,
                "T.gemm: A must be in shared memory (shared.dyn or shared) or a fragment "
                "(local.fragment), but 'A' is global");
}

Test(verify, gemm_transpose_a_k_mismatch) {
  kernel();
  tl_buffer *As = alloc2(TL_SCOPE_SHARED_DYN, "A_s", f16, 32, 128);
  tl_buffer *Bs = alloc2(TL_SCOPE_SHARED_DYN, "B_s", f16, 64, 128);
  tl_buffer *C = alloc2(TL_SCOPE_FRAGMENT, "C_l", f32, 128, 128);
  tl_tile_arg g[3] = {whole(As), whole(Bs), whole(C)};
  tl_tile_kwarg kw = {"transpose_A", I(1)};
  tl_builder_tile_op(b, "gemm", g, 3, &kw, 1);
  tl_builder_kernel_end(b);
  expect_errors(1,
                "T.gemm: with transpose_A=True, A (32, 128) gives M=128, K=32, but B "
                "(64, 128) has K=64");
}

Test(verify, gemm_m_and_n_mismatch) {
  kernel();
  tl_buffer *As = alloc2(TL_SCOPE_SHARED_DYN, "A_s", f16, 64, 32);
  tl_buffer *Bs = alloc2(TL_SCOPE_SHARED_DYN, "B_s", f16, 64, 32);
  tl_buffer *C = alloc2(TL_SCOPE_FRAGMENT, "C_l", f32, 128, 128);
  tl_tile_arg g[3] = {whole(As), whole(Bs), whole(C)};
  tl_tile_kwarg kw = {"transpose_B", I(1)};
  tl_builder_tile_op(b, "gemm", g, 3, &kw, 1);
  tl_builder_kernel_end(b);
  expect_errors(2, "T.gemm: A (64, 32) gives M=64, K=32, but C (128, 128) has M=128");
  expect_line(1,
              "T.gemm: with transpose_B=True, B (64, 32) gives K=32, N=64, but C (128, "
              "128) has N=128");
}

Test(verify, gemm_bad_dtypes) {
  kernel();
  tl_buffer *As = alloc2(TL_SCOPE_SHARED_DYN, "A_s", f16, 64, 32);
  tl_buffer *Bs = alloc2(TL_SCOPE_SHARED_DYN, "B_s", f16, 32, 64);
  tl_buffer *C = alloc2(TL_SCOPE_FRAGMENT, "C_l", i32, 64, 64);
  tl_tile_arg g[3] = {whole(As), whole(Bs), whole(C)};
  tl_builder_tile_op(b, "gemm", g, 3, NULL, 0);
  tl_builder_kernel_end(b);
  expect_errors(1,
                "T.gemm: unsupported dtypes: A float16, B float16, C int32 (accepted: A and "
                "B float16 with C float16 or float32, bfloat16 with float32, int8 with "
                "int32, tfloat32 with float32, float32 (computed as tf32) with float32, uint8 with int32, "
                "float64 with float64, float8_e4m3/float8_e5m2 (either for A and for B) with float32, int4/uint4 "
                "with int32)");
}

Test(verify, gemm_int8_accepted_and_3d_rejected) {
  kernel();
  tl_buffer *As = alloc2(TL_SCOPE_SHARED_DYN, "A_s", i8, 64, 32);
  tl_expr *s3[3] = {I(2), I(32), I(64)};
  tl_buffer *Bs = tl_builder_alloc(b, TL_SCOPE_SHARED_DYN, "B_s", i8, s3, 3);
  tl_buffer *C = alloc2(TL_SCOPE_FRAGMENT, "C_l", i32, 64, 64);
  tl_tile_arg g[3] = {whole(As), whole(Bs), whole(C)};
  tl_builder_tile_op(b, "gemm", g, 3, NULL, 0);
  tl_builder_kernel_end(b);
  expect_errors(1, "T.gemm: B must be 2-D, but 'B_s' has shape (2, 32, 64)");
}

Test(verify, reduce_dst_shape) {
  kernel();
  tl_buffer *S = alloc2(TL_SCOPE_FRAGMENT, "S", f32, 128, 64);
  tl_buffer *D = alloc2(TL_SCOPE_FRAGMENT, "D", f32, 128, 4);
  tl_tile_arg r[2] = {whole(S), whole(D)};
  tl_tile_kwarg kw = {"dim", I(1)};
  tl_builder_tile_op(b, "reduce_sum", r, 2, &kw, 1);
  tl_builder_kernel_end(b);
  expect_errors(1,
                "T.reduce_sum: dst shape (128, 4) is not src shape (128, 64) with dim 1 "
                "removed or kept as 1 (dst 'D', src 'S')");
}

Test(verify, reduce_shapes_accepted) {
  kernel();
  tl_buffer *S = alloc2(TL_SCOPE_FRAGMENT, "S", f32, 128, 64);
  tl_expr *s1 = I(128);
  tl_buffer *D1 = tl_builder_alloc(b, TL_SCOPE_FRAGMENT, "D1", f32, &s1, 1);
  tl_buffer *D2 = alloc2(TL_SCOPE_FRAGMENT, "D2", f32, 128, 1);
  tl_buffer *D3 = alloc2(TL_SCOPE_SHARED_DYN, "D3", f32, 1, 64);
  tl_tile_arg r1[2] = {whole(S), whole(D1)}, r2[2] = {whole(S), whole(D2)}, r3[2] = {whole(S), whole(D3)};
  tl_builder_tile_op(b, "reduce_max", r1, 2, NULL, 0);    /* dim=-1 removed */
  tl_builder_tile_op(b, "reduce_absmax", r2, 2, NULL, 0); /* kept as 1 */
  tl_tile_kwarg kw[2] = {{"dim", I(0)}, {"clear", I(0)}};
  tl_builder_tile_op(b, "reduce_abssum", r3, 2, kw, 2);
  tl_builder_kernel_end(b);
  tl_module *m = NULL;
  cr_expect_eq(tl_builder_finish(b, &m), TL_OK, "%s", tl_context_last_error(ctx));
  b = NULL;
  tl_module_destroy(m);
}

Test(verify, reduce_dim_out_of_range_and_global_src) {
  kernel();
  tl_buffer *D = alloc2(TL_SCOPE_FRAGMENT, "D", f32, 1024, 1);
  tl_tile_arg r[2] = {whole(A), whole(D)};
  tl_tile_kwarg kw = {"dim", I(-3)};
  tl_builder_tile_op(b, "reduce_min", r, 2, &kw, 1);
  tl_builder_kernel_end(b);
  expect_errors(2,
                "T.reduce_min: src must be a fragment, shared or local buffer, but 'A' is "
                "global");
  expect_line(1, "T.reduce_min: dim -3 is out of range for src 'A' with 2 dimensions");
}

Test(verify, atomic_add_dst_not_global) {
  kernel();
  tl_buffer *F = alloc2(TL_SCOPE_FRAGMENT, "F", f32, 16, 16);
  tl_tile_arg a[2] = {whole(F), scalar(tl_builder_float(b, f32, 1.0))};
  tl_builder_tile_op(b, "atomic_add", a, 2, NULL, 0);
  tl_tile_arg ok[2] = {whole(G), scalar(tl_builder_float(b, f32, 1.0))};
  tl_tile_kwarg kw = {"memory_order", tl_builder_string(b, "sequential")};
  tl_builder_tile_op(b, "atomic_add", ok, 2, &kw, 1);
  tl_builder_kernel_end(b);
  expect_errors(2,
                "T.atomic_add: destination 'F' must be a global or shared buffer, but it is "
                "local.fragment");
  expect_line(1,
              "T.atomic_add: memory_order must be one of \"relaxed\", \"consume\", "
              "\"acquire\", \"release\", \"acq_rel\", \"seq_cst\", got \"sequential\"");
}

Test(verify, fill_clear_swizzle) {
  kernel();
  tl_tile_arg f[2] = {whole(G), scalar(tl_builder_float(b, f32, 0.0))};
  tl_builder_tile_op(b, "fill", f, 2, NULL, 0);
  tl_tile_arg c = whole(G);
  tl_builder_tile_op(b, "clear", &c, 1, NULL, 0);
  tl_tile_arg p = scalar(I(0));
  tl_tile_kwarg kw = {"order", tl_builder_string(b, "diagonal")};
  tl_builder_tile_op(b, "use_swizzle", &p, 1, &kw, 1);
  tl_tile_arg bad[2] = {whole(G), whole(G)};
  tl_builder_tile_op(b, "fill", bad, 2, NULL, 0);
  tl_builder_kernel_end(b);
  expect_errors(3, "T.use_swizzle: panel_size must be positive, got 0");
  expect_line(1, "T.use_swizzle: order must be \"row\" or \"column\", got \"diagonal\"");
  expect_line(2, "T.fill: operand 2 must be a scalar expression, not a buffer region");
}

Test(verify, tile_op_outside_kernel) {
  tl_tile_arg c = whole(G);
  tl_builder_tile_op(b, "clear", &c, 1, NULL, 0);
  expect_errors(1, "T.clear must be inside a T.Kernel scope");
}

Test(verify, alloc_outside_kernel) {
  alloc2(TL_SCOPE_FRAGMENT, "F", f32, 16, 16);
  expect_errors(1, "T.alloc_fragment must be inside a T.Kernel scope");
}

Test(verify, buffer_used_outside_its_kernel) {
  kernel();
  tl_buffer *S = alloc2(TL_SCOPE_SHARED_DYN, "S", f32, 16, 16);
  tl_builder_kernel_end(b);
  kernel();
  tl_expr *ij[2] = {I(0), I(0)}, *z = I(0);
  tl_builder_store(b, G, &z, 1, tl_builder_load(b, S, ij, 2));
  tl_builder_kernel_end(b);
  expect_errors(1, "'S' is used outside the T.Kernel that allocates it"); /* two kernels in a row are allowed */
}

Test(verify, buffer_used_outside_its_scope) {
  kernel();
  const char *in = "i";
  tl_expr *ext = I(4);
  tl_var *i;
  tl_builder_for_begin(b, TL_LOOP_SERIAL, &in, &ext, 1, 0, &i);
  tl_buffer *L = alloc2(TL_SCOPE_LOCAL, "L", f32, 2, 2);
  tl_builder_for_end(b);
  tl_expr *ij[2] = {I(0), I(0)}, *z = I(0);
  tl_builder_store(b, G, &z, 1, tl_builder_load(b, L, ij, 2));
  tl_builder_store(b, G, &z, 1, tl_builder_load(b, L, ij, 2)); /* reported once */
  tl_builder_kernel_end(b);
  expect_errors(1, "'L' is used outside the scope of its allocation");
}

Test(verify, shape_zero_and_float) {
  kernel();
  tl_expr *sh[3] = {I(16), I(16), I(0)};
  tl_builder_alloc(b, TL_SCOPE_SHARED_DYN, "A_shared", f16, sh, 3);
  tl_expr *sf[1] = {tl_builder_float(b, f32, 4.0)};
  tl_builder_alloc(b, TL_SCOPE_LOCAL, "L", f16, sf, 1);
  tl_builder_kernel_end(b);
  expect_errors(2, "shape dimension 2 of 'A_shared' must be positive, got 0");
  expect_line(1, "shape dimension 0 of 'L' must be an int32 or int64 expression, got float32");
}

Test(verify, threads_negative) {
  tl_expr *grid = I(8);
  tl_builder_kernel_begin(b, &grid, 1, I(-32), NULL, NULL);
  tl_builder_kernel_end(b);
  expect_errors(1, "T.Kernel: threads must be positive, got -32");
}

Test(verify, threads_not_constant_grid_zero) {
  tl_var *n = tl_builder_param_scalar(b, "n", i32);
  tl_expr *grid[2] = {I(0), tl_builder_float(b, f32, 2.0)};
  tl_builder_kernel_begin(b, grid, 2, V(n), NULL, NULL);
  tl_builder_kernel_end(b);
  expect_errors(3, "T.Kernel: grid dimension 0 must be positive, got 0");
  expect_line(1, "T.Kernel: grid dimension 1 must be an integer, got float32");
  expect_line(2, "T.Kernel: threads must be a constant integer");
}

Test(verify, nested_kernel) {
  kernel();
  tl_expr *grid = I(2);
  const char *nm = "bz";
  tl_builder_kernel_begin(b, &grid, 1, I(64), &nm, NULL);
  tl_builder_kernel_end(b);
  tl_builder_kernel_end(b);
  expect_errors(1, "nested T.Kernel is not supported");
}

Test(verify, pipelined_num_stages_negative_and_float_extent) {
  kernel();
  const char *kn = "k";
  tl_expr *ext = I(4);
  tl_builder_for_begin(b, TL_LOOP_PIPELINED, &kn, &ext, 1, -2, NULL);
  tl_builder_for_end(b);
  const char *jn = "j";
  tl_expr *fext = tl_builder_float(b, f32, 4.0);
  tl_builder_for_begin(b, TL_LOOP_SERIAL, &jn, &fext, 1, 0, NULL);
  tl_builder_for_end(b);
  tl_builder_kernel_end(b);
  expect_errors(2, "T.Pipelined: num_stages must be >= 0, got -2");
  expect_line(1, "a loop extent must be an integer, got float32");
}

Test(verify, index_counts) {
  kernel();
  tl_expr *two[2] = {I(0), I(1)};
  tl_builder_store(b, G, two, 2, tl_builder_float(b, f32, 0.0));
  tl_builder_store(b, G, two, 1, tl_builder_cast(b, f32, tl_builder_load(b, A, two, 1)));
  tl_builder_kernel_end(b);
  expect_errors(2, "'G' has 1 dimension but is indexed with 2 indices");
  expect_line(1, "'A' has 2 dimensions but is indexed with 1 index");
}

Test(verify, region_index_count_and_bounds) {
  kernel();
  tl_buffer *S = alloc2(TL_SCOPE_SHARED_DYN, "S", f32, 16, 16);
  tl_expr *mins[2] = {I(0), I(8)}, *ext[2] = {I(16), I(16)};
  tl_tile_arg c[2] = {whole(G), whole(S)};
  c[0].region.mins = mins, c[0].region.extents = ext, c[0].region.ndim = 2;
  tl_builder_tile_op(b, "copy", c, 2, NULL, 0);
  tl_tile_arg d[2] = {whole(S), whole(S)};
  d[1].region.mins = mins, d[1].region.extents = ext, d[1].region.ndim = 2;
  tl_builder_tile_op(b, "copy", d, 2, NULL, 0);
  tl_builder_kernel_end(b);
  expect_errors(2, "'G' has 1 dimension but is indexed with 2 indices");
  expect_line(1, "T.copy: region 8:24 of 'S' is out of bounds in dimension 1 (extent 16)");
}

Test(verify, redefinition) {
  kernel();
  alloc2(TL_SCOPE_SHARED_DYN, "A_shared", f16, 16, 16);
  alloc2(TL_SCOPE_SHARED_DYN, "A_shared", f16, 16, 16);
  alloc2(TL_SCOPE_FRAGMENT, "G", f32, 16, 16);
  tl_builder_kernel_end(b);
  expect_errors(2, "redefinition of 'A_shared'");
  cr_expect(strstr(tl_context_last_error(ctx), "note: previous definition of 'A_shared' is here\n") != NULL);
  expect_line(1, "redefinition of 'G'");
}

Test(verify, sibling_loops_may_reuse_names) {
  kernel();
  for (int r = 0; r < 2; r++) {
    const char *in = "i";
    tl_expr *ext = I(4);
    tl_var *i;
    tl_builder_for_begin(b, TL_LOOP_SERIAL, &in, &ext, 1, 0, &i);
    tl_expr *idx = V(i);
    tl_builder_store(b, G, &idx, 1, tl_builder_float(b, f32, 1.0));
    tl_builder_for_end(b);
  }
  tl_builder_kernel_end(b);
  tl_module *m = NULL;
  cr_expect_eq(tl_builder_finish(b, &m), TL_OK, "%s", tl_context_last_error(ctx));
  b = NULL;
  tl_module_destroy(m);
}

Test(verify, var_outside_scope) {
  kernel();
  const char *in = "i";
  tl_expr *ext = I(4);
  tl_var *i;
  tl_builder_for_begin(b, TL_LOOP_SERIAL, &in, &ext, 1, 0, &i);
  tl_builder_for_end(b);
  tl_expr *idx = V(i);
  tl_builder_store(b, G, &idx, 1, tl_builder_float(b, f32, 1.0));
  tl_builder_kernel_end(b);
  expect_errors(1, "variable 'i' is used outside its scope");
}

Test(verify, bad_attribute_values) {
  kernel();
  tl_buffer *As = alloc2(TL_SCOPE_SHARED_DYN, "A_s", f16, 64, 32);
  tl_buffer *Bs = alloc2(TL_SCOPE_SHARED_DYN, "B_s", f16, 32, 64);
  tl_buffer *C = alloc2(TL_SCOPE_FRAGMENT, "C_l", f32, 64, 64);
  tl_tile_arg g[3] = {whole(As), whole(Bs), whole(C)};
  tl_tile_kwarg kw[3] = {{"policy", I(7)}, {"clear_accum", I(2)}, {"k_pack", I(3)}};
  tl_builder_tile_op(b, "gemm", g, 3, kw, 3);
  tl_builder_kernel_end(b);
  expect_errors(2,
                "T.gemm: attribute 'policy' must be a T.GemmWarpPolicy (0 Square, 1 "
                "FullRow, 2 FullCol), got 7");
  expect_line(1, "T.gemm: attribute 'clear_accum' must be True or False, got 2");
}

Test(verify, dynamic_shapes) {
  tl_var *m = tl_builder_dynamic(b, "m");
  tl_expr *sh[2] = {V(m), I(64)};
  tl_buffer *X = tl_builder_param_tensor(b, "X", f16, sh, 2);
  kernel();
  tl_buffer *S = alloc2(TL_SCOPE_SHARED_DYN, "S", f16, 32, 64);
  tl_expr *mins[2] = {I(0), I(0)}, *ext[2] = {V(m), I(64)};
  tl_tile_arg c[2] = {whole(X), whole(S)};
  c[0].region.mins = mins, c[0].region.extents = ext, c[0].region.ndim = 2;
  tl_builder_tile_op(b, "copy", c, 2, NULL, 0); /* symbolic: accepted */
  tl_builder_kernel_end(b);
  tl_module *mod = NULL;
  cr_expect_eq(tl_builder_finish(b, &mod), TL_OK, "%s", tl_context_last_error(ctx));
  b = NULL;
  tl_module_destroy(mod);
}

/* the builder applies the out_idx rule (lib/IR/out_idx.c) before the verifier runs */
Test(verify, out_idx_scalar) {
  tl_builder_param_scalar(b, "n", i32);
  int idx[2] = {-1, 0};
  tl_builder_set_out_idx(b, idx, 2);
  tl_module *m = NULL;
  cr_assert_eq(tl_builder_finish(b, &m), TL_ERR_INVALID_ARGUMENT);
  b = NULL;
  cr_expect_null(m);
  cr_expect(strstr(tl_context_last_error(ctx),
                   "tl_builder_set_out_idx: argument 'idx[0]': out_idx -1 names 'n', a scalar parameter"),
            "%s", tl_context_last_error(ctx));
}

Test(verify, op_table_lookups) {
  cr_expect_eq(tl_tile_op_lookup("gemm"), TL_TILE_GEMM);
  cr_expect_eq(tl_tile_op_lookup("annotate_layout"), TL_TILE_ANNOTATE_LAYOUT);
  cr_expect_eq(tl_tile_op_lookup("nosuch"), -1);
  cr_expect_eq(tl_tile_op_lookup(NULL), -1);
  cr_expect_eq(tl_tile_op_attr_index(TL_TILE_GEMM, "policy"), 2);
  cr_expect_eq(tl_tile_op_attr_index(TL_TILE_GEMM, "wg_wait"), 5);
  cr_expect_eq(tl_tile_op_attr_index(TL_TILE_COPY, "policy"), -1);
  cr_expect_eq(tl_tile_op_attr_index(TL_TILE_NUM_OPS, "dim"), -1);
  cr_expect_str_eq(tl_tile_ops[TL_TILE_ATOMIC_ADD].operands, "RX");
  cr_expect_eq(tl_tile_ops[TL_TILE_REDUCE_SUM].attrs[0].default_int, -1);
  cr_expect_str_eq(tl_tile_ops[TL_TILE_USE_SWIZZLE].attrs[0].default_str, "row");
  tl_builder_destroy(b);
  b = NULL;
}
