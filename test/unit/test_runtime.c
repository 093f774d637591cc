/* Unit tests of lib/Runtime that need no GPU: out_idx normalization, the
 * launch-expression evaluator, every argument check of tl_kernel_call (they
 * run before the driver is touched), TL_ERR_NO_DEVICE without a driver, and
 * compiling + introspection through the public API (no driver needed).
 * Criterion runs each test in its own process, so TL_CUDA_DRIVER set in a
 * test decides how that process's driver load ends. */
#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

#include "Runtime/kernel.h"
#include "tilelang/tilelang.h"

/* ------------------------------------------------------------ helpers */
static tl_rx_prog prog_sym(int s) {
  tl_rx_prog p;
  p.ops = malloc(sizeof *p.ops);
  p.n = 1;
  p.ops[0] = (tl_rx_op){TL_RX_SYM, 0, s, 0};
  return p;
}
static tl_rx_prog prog_const(int64_t v) {
  tl_rx_prog p;
  cr_assert(tl_rx_const(v, &p));
  return p;
}
/* ceildiv(sym s, c) */
static tl_rx_prog prog_ceildiv(int s, int64_t c) {
  tl_rx_prog p;
  p.ops = malloc(3 * sizeof *p.ops);
  p.n = 3;
  p.ops[0] = (tl_rx_op){TL_RX_SYM, 0, s, 0};
  p.ops[1] = (tl_rx_op){TL_RX_CONST, 0, 0, c};
  p.ops[2] = (tl_rx_op){TL_RX_BIN, TL_RXB_CEILDIV, 0, 0};
  return p;
}

static void add_tensor(tl_rt_sig *s, const char *name, tl_dtype dt, int ndim, const tl_rx_prog *dims) {
  tl_rt_param *p = &s->params[s->nparams++];
  p->name = strdup(name);
  p->is_tensor = true;
  p->dtype = dt;
  p->ndim = ndim;
  p->dims = calloc((size_t)ndim + 1, sizeof *p->dims);
  for (int d = 0; d < ndim; d++) p->dims[d].prog = dims[d];
  p->align = tl_dtype_bytes(dt);
}
static void add_scalar(tl_rt_sig *s, const char *name, tl_dtype dt) {
  tl_rt_param *p = &s->params[s->nparams++];
  p->name = strdup(name);
  p->dtype = dt;
}

/* A(n) f32, B(n) f32, alpha f32, C(n) f32 with out_idx = [-1], grid
 * ceildiv(n, 1024), 128 threads; B needs 16-byte alignment. */
static tl_kernel *make_add_kernel(void) {
  tl_kernel *k = tl_rt_kernel_new();
  cr_assert_not_null(k);
  k->name = strdup("main");
  k->target = strdup("sm_80");
  k->ptx = strdup("// no ptx");
  tl_rt_sig *s = &k->sig;
  s->params = calloc(8, sizeof *s->params);
  s->nsyms = 1;
  s->sym_names = calloc(1, sizeof(char *));
  s->sym_names[0] = strdup("n");
  tl_rx_prog d;
  d = prog_sym(0);
  add_tensor(s, "A", TL_FLOAT32, 1, &d);
  d = prog_sym(0);
  add_tensor(s, "B", TL_FLOAT32, 1, &d);
  s->params[1].align = 16;
  add_scalar(s, "alpha", TL_FLOAT32);
  d = prog_sym(0);
  add_tensor(s, "C", TL_FLOAT32, 1, &d);
  int idx = -1, bp;
  char *err = NULL;
  cr_assert(tl_rt_set_out_idx(s, &idx, 1, &err, &bp), "%s", err ? err : "");
  s->ngrid = 1;
  s->grid[0] = prog_ceildiv(0, 1024);
  s->grid[1] = prog_const(1);
  s->grid[2] = prog_const(1);
  s->threads = prog_const(128);
  return k;
}

typedef struct fake_tensor {
  DLTensor t;
  int64_t shape[4];
  int64_t strides[4];
} fake_tensor;

static void fake(fake_tensor *f, int64_t n, uintptr_t addr) {
  memset(f, 0, sizeof *f);
  f->shape[0] = n;
  f->t.data = (void *)addr;
  f->t.device.device_type = kDLCUDA;
  f->t.device.device_id = 0;
  f->t.ndim = 1;
  f->t.dtype.code = kDLFloat;
  f->t.dtype.bits = 32;
  f->t.dtype.lanes = 1;
  f->t.shape = f->shape;
}

static tl_status call3(tl_context *ctx, tl_kernel *k, fake_tensor *a, fake_tensor *b, tl_arg alpha) {
  tl_arg args[3] = {tl_arg_tensor(&a->t), tl_arg_tensor(&b->t), alpha};
  DLManagedTensor *outs[1] = {NULL};
  tl_status s = tl_kernel_call(ctx, k, args, 3, NULL, outs);
  cr_assert_null(outs[0]);
  return s;
}

static tl_context *ctx;
static void setup(void) {
  setenv("TL_CUDA_DRIVER", "/nonexistent/libcuda.so.1", 1);
  cr_assert_eq(tl_context_create(&ctx), TL_OK);
}
static void teardown(void) { tl_context_destroy(ctx); }

#define EXPECT_ERR(status, substr)                                                                                     \
  do {                                                                                                                 \
    cr_assert_eq((status), TL_ERR_INVALID_ARGUMENT, "status %s: %s", tl_status_name(status),                           \
                 tl_context_last_error(ctx));                                                                          \
    cr_assert(strstr(tl_context_last_error(ctx), (substr)), "message was: %s\nexpected: %s",                           \
              tl_context_last_error(ctx), (substr));                                                                   \
  } while (0)

/* ------------------------------------------------------------ out_idx */
TestSuite(out_idx, .init = setup, .fini = teardown);

Test(out_idx, normalization) {
  tl_kernel *k = make_add_kernel();
  char *err = NULL;
  int n, bp;
  const int *idx = tl_kernel_out_idx(k, &n);
  cr_assert_eq(n, 1);
  cr_assert_eq(idx[0], 3);
  cr_assert(tl_kernel_param_is_output(k, 3));
  cr_assert_not(tl_kernel_param_is_output(k, 0));
  int l1[] = {-4, 1};
  cr_assert(tl_rt_set_out_idx(&k->sig, l1, 2, &err, &bp));
  idx = tl_kernel_out_idx(k, &n);
  cr_assert_eq(n, 2);
  cr_assert_eq(idx[0], 0);
  cr_assert_eq(idx[1], 1);
  cr_assert(tl_rt_set_out_idx(&k->sig, NULL, 0, &err, &bp)); /* none */
  tl_kernel_out_idx(k, &n);
  cr_assert_eq(n, 0);
  int bad_scalar = 2, oor = 4, oor_neg = -5, dup[] = {3, -1};
  cr_assert_not(tl_rt_set_out_idx(&k->sig, &bad_scalar, 1, &err, &bp));
  cr_assert(strstr(err, "out_idx 2 names 'alpha', a scalar parameter"), "%s", err);
  cr_assert_eq(bp, 2);
  free(err);
  cr_assert_not(tl_rt_set_out_idx(&k->sig, &oor, 1, &err, &bp));
  cr_assert(strstr(err, "out of range"), "%s", err);
  free(err);
  cr_assert_not(tl_rt_set_out_idx(&k->sig, &oor_neg, 1, &err, &bp));
  free(err);
  cr_assert_not(tl_rt_set_out_idx(&k->sig, dup, 2, &err, &bp));
  cr_assert(strstr(err, "out_idx -1 names 'C' twice"), "%s", err);
  free(err);
  /* a T.StridedTensor is refused: the call would allocate it compact */
  k->sig.params[0].strides = calloc(1, sizeof *k->sig.params[0].strides);
  k->sig.params[0].strides[0].prog = prog_const(2);
  int strided = -4;
  cr_assert_not(tl_rt_set_out_idx(&k->sig, &strided, 1, &err, &bp));
  cr_assert(strstr(err, "out_idx -4 names 'A', a T.StridedTensor"), "%s", err);
  cr_assert_eq(bp, 0);
  free(err);
  /* the public query (the Python package's) applies the same rule */
  int norm[2] = {9, 9}, ok[] = {-1, 1};
  cr_assert_eq(tl_kernel_normalize_out_idx(ctx, k, ok, 2, norm), TL_OK, "%s", tl_context_last_error(ctx));
  cr_assert(norm[0] == 3 && norm[1] == 1);
  cr_assert_eq(tl_kernel_normalize_out_idx(ctx, k, &strided, 1, norm), TL_ERR_INVALID_ARGUMENT);
  cr_assert(strstr(tl_context_last_error(ctx), "kernel 'main': out_idx -4 names 'A', a T.StridedTensor"), "%s",
            tl_context_last_error(ctx));
  cr_assert_eq(tl_kernel_normalize_out_idx(ctx, k, &oor, 1, norm), TL_ERR_INVALID_ARGUMENT);
  cr_assert(strstr(tl_context_last_error(ctx), "out_idx 4 is out of range for 4 parameters"));
  cr_assert_eq(tl_kernel_normalize_out_idx(ctx, NULL, &oor, 1, norm), TL_ERR_INVALID_ARGUMENT);
  tl_kernel_destroy(k);
}

Test(out_idx, output_symbol_must_be_bound_by_an_input) {
  tl_kernel *k = make_add_kernel();
  char *err = NULL;
  int bp;
  int all[] = {0, 1, 3}; /* every tensor an output: nothing binds n */
  cr_assert(tl_rt_set_out_idx(&k->sig, all, 3, &err, &bp));
  cr_assert_not(tl_rt_check_solvable(&k->sig, &err, &bp));
  cr_assert(strstr(err, "dynamic dim 'n'"), "%s", err);
  cr_assert_eq(bp, 0, "the first output whose dim no input binds: parameter 0, got %d", bp);
  free(err);
  int last = -1;
  cr_assert(tl_rt_set_out_idx(&k->sig, &last, 1, &err, &bp));
  cr_assert(tl_rt_check_solvable(&k->sig, &err, &bp));
  cr_assert_eq(bp, -1);
  tl_kernel_destroy(k);
}

/* ------------------------------------------------------------ expressions */
TestSuite(rx);

Test(rx, division_semantics_and_overflow) {
  tl_rx_op ops[3] = {{TL_RX_CONST, 0, 0, -7}, {TL_RX_CONST, 0, 0, 2}, {TL_RX_BIN, 0, 0, 0}};
  tl_rx_prog p = {ops, 3};
  int64_t v;
  const char *why;
  struct {
    int op;
    int64_t want;
  } cases[] = {{TL_RXB_FLOORDIV, -4}, {TL_RXB_FLOORMOD, 1}, {TL_RXB_DIV, -3},
               {TL_RXB_CEILDIV, -3},  {TL_RXB_MIN, -7},     {TL_RXB_MAX, 2}};
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    ops[2].op = (uint8_t)cases[i].op;
    cr_assert(tl_rx_eval(&p, NULL, NULL, &v, &why));
    cr_assert_eq(v, cases[i].want, "op %d: %lld", cases[i].op, (long long)v);
  }
  ops[0].value = 1000003;
  ops[1].value = 1024;
  ops[2].op = TL_RXB_CEILDIV;
  cr_assert(tl_rx_eval(&p, NULL, NULL, &v, &why));
  cr_assert_eq(v, 977);
  ops[1].value = 0;
  cr_assert_not(tl_rx_eval(&p, NULL, NULL, &v, &why));
  cr_assert_str_eq(why, "division by zero");
  ops[0].value = INT64_MAX;
  ops[1].value = 2;
  ops[2].op = TL_RXB_MUL;
  cr_assert_not(tl_rx_eval(&p, NULL, NULL, &v, &why));
  cr_assert_str_eq(why, "overflow");
  ops[0].value = INT64_MIN;
  ops[1].value = -1;
  ops[2].op = TL_RXB_FLOORDIV;
  cr_assert_not(tl_rx_eval(&p, NULL, NULL, &v, &why));
  tl_rx_op bad[1] = {{TL_RX_BIN, TL_RXB_ADD, 0, 0}};
  tl_rx_prog pb = {bad, 1};
  cr_assert_not(tl_rx_eval(&pb, NULL, NULL, &v, &why));
}

/* ------------------------------------------------------------ call checks */
TestSuite(call, .init = setup, .fini = teardown);

Test(call, good_arguments_reach_the_driver_and_get_no_device) {
  tl_kernel *k = make_add_kernel();
  fake_tensor a, b;
  fake(&a, 1000003, 0x100000);
  fake(&b, 1000003, 0x200000);
  tl_status s = call3(ctx, k, &a, &b, tl_arg_float(2.0));
  cr_assert_eq(s, TL_ERR_NO_DEVICE, "%s: %s", tl_status_name(s), tl_context_last_error(ctx));
  cr_assert(strstr(tl_context_last_error(ctx), "no CUDA driver"), "%s", tl_context_last_error(ctx));
  cr_assert(strstr(tl_context_last_error(ctx), "/nonexistent/libcuda.so.1"));
  cr_assert_eq(tl_device_check(ctx), TL_ERR_NO_DEVICE);
  cr_assert_str_eq(tl_device_default_target(), "sm_80");
  int n = 7;
  cr_assert_eq(tl_device_count(ctx, &n), TL_ERR_NO_DEVICE);
  cr_assert_eq(n, 0);
  tl_kernel_destroy(k);
}

Test(call, binding_solves_symbols_and_grid) {
  tl_kernel *k = make_add_kernel();
  fake_tensor a, b;
  fake(&a, 1000003, 0x100000);
  fake(&b, 1000003, 0x200010);
  tl_arg args[3] = {tl_arg_tensor(&a.t), tl_arg_tensor(&b.t), tl_arg_float(0.5)};
  tl_rt_binding bd;
  cr_assert_eq(tl_rt_bind(ctx, &k->sig, args, 3, &bd), TL_OK, "%s", tl_context_last_error(ctx));
  cr_assert_eq(bd.symv[0], 1000003);
  cr_assert_eq(bd.grid[0], 977u);
  cr_assert_eq(bd.grid[1], 1u);
  cr_assert_eq(bd.block, 128u);
  cr_assert_eq(bd.out_shapes[3][0], 1000003);
  cr_assert_eq(bd.out_bytes[3], (size_t)1000003 * 4);
  cr_assert_eq(bd.slots[0], 0x100000u);
  float f;
  memcpy(&f, &bd.slots[2], 4);
  cr_assert_eq(f, 0.5f);
  cr_assert_eq((uint32_t)bd.slots[4], 1000003u); /* the symbol, after the params */
  tl_rt_binding_free(&bd);
  tl_kernel_destroy(k);
}

Test(call, count) {
  tl_kernel *k = make_add_kernel();
  fake_tensor a;
  fake(&a, 10, 0x100000);
  tl_arg args[1] = {tl_arg_tensor(&a.t)};
  DLManagedTensor *outs[1];
  EXPECT_ERR(tl_kernel_call(ctx, k, args, 1, NULL, outs),
             "argument count: expected 3 (A, B, alpha; out_idx outputs are not passed), got 1");
  tl_kernel_destroy(k);
}

Test(call, dtype) {
  tl_kernel *k = make_add_kernel();
  fake_tensor a, b;
  fake(&a, 10, 0x100000);
  fake(&b, 10, 0x200000);
  b.t.dtype.bits = 16;
  EXPECT_ERR(call3(ctx, k, &a, &b, tl_arg_float(1)), "argument 'B' (#1): dtype: expected float32, got float16");
  tl_kernel_destroy(k);
}

Test(call, ndim) {
  tl_kernel *k = make_add_kernel();
  fake_tensor a, b;
  fake(&a, 10, 0x100000);
  fake(&b, 10, 0x200000);
  a.t.ndim = 2;
  a.shape[1] = 1;
  EXPECT_ERR(call3(ctx, k, &a, &b, tl_arg_float(1)), "argument 'A' (#0): ndim: expected 1, got 2");
  tl_kernel_destroy(k);
}

Test(call, static_dim) {
  tl_kernel *k = make_add_kernel();
  tl_rx_free(&k->sig.params[1].dims[0].prog);
  k->sig.params[1].dims[0].prog = prog_const(64);
  fake_tensor a, b;
  fake(&a, 64, 0x100000);
  fake(&b, 65, 0x200000);
  EXPECT_ERR(call3(ctx, k, &a, &b, tl_arg_float(1)), "argument 'B' (#1): shape[0]: expected 64, got 65");
  tl_kernel_destroy(k);
}

Test(call, inconsistent_dynamic_dims) {
  tl_kernel *k = make_add_kernel();
  fake_tensor a, b;
  fake(&a, 100, 0x100000);
  fake(&b, 99, 0x200000);
  EXPECT_ERR(call3(ctx, k, &a, &b, tl_arg_float(1)),
             "argument 'B' (#1): shape[0]: expected n = 100 (bound by 'A' shape[0]), got 99");
  tl_kernel_destroy(k);
}

Test(call, non_contiguous) {
  tl_kernel *k = make_add_kernel();
  fake_tensor a, b;
  fake(&a, 100, 0x100000);
  fake(&b, 100, 0x200000);
  a.strides[0] = 2;
  a.t.strides = a.strides;
  EXPECT_ERR(call3(ctx, k, &a, &b, tl_arg_float(1)),
             "argument 'A' (#0): strides: expected a contiguous (row-major) tensor with strides [1], got [2]");
  /* compact strides given explicitly are fine, as is any stride of a size-1 dim */
  a.strides[0] = 1;
  cr_assert_eq(call3(ctx, k, &a, &b, tl_arg_float(1)), TL_ERR_NO_DEVICE);
  tl_kernel_destroy(k);
}

Test(call, cpu_tensor) {
  tl_kernel *k = make_add_kernel();
  fake_tensor a, b;
  fake(&a, 100, 0x100000);
  fake(&b, 100, 0x200000);
  b.t.device.device_type = kDLCPU;
  EXPECT_ERR(call3(ctx, k, &a, &b, tl_arg_float(1)), "argument 'B' (#1): device: expected cuda, got cpu");
  tl_kernel_destroy(k);
}

Test(call, two_devices) {
  tl_kernel *k = make_add_kernel();
  fake_tensor a, b;
  fake(&a, 100, 0x100000);
  fake(&b, 100, 0x200000);
  b.t.device.device_id = 1;
  EXPECT_ERR(call3(ctx, k, &a, &b, tl_arg_float(1)),
             "argument 'B' (#1): device: expected cuda:0 (the device of 'A'), got cuda:1");
  tl_kernel_destroy(k);
}

Test(call, null_data) {
  tl_kernel *k = make_add_kernel();
  fake_tensor a, b;
  fake(&a, 100, 0);
  fake(&b, 100, 0x200000);
  EXPECT_ERR(call3(ctx, k, &a, &b, tl_arg_float(1)),
             "argument 'A' (#0): data: expected a non-null device pointer, got NULL");
  tl_kernel_destroy(k);
}

Test(call, misaligned) {
  tl_kernel *k = make_add_kernel();
  fake_tensor a, b;
  fake(&a, 100, 0x100004); /* A needs 4 bytes: fine */
  fake(&b, 100, 0x200000);
  b.t.byte_offset = 4; /* B needs 16 */
  EXPECT_ERR(call3(ctx, k, &a, &b, tl_arg_float(1)),
             "argument 'B' (#1): alignment: expected data + byte_offset aligned to 16 bytes, got 0x200004");
  tl_kernel_destroy(k);
}

Test(call, scalar_kinds) {
  tl_kernel *k = make_add_kernel();
  fake_tensor a, b;
  fake(&a, 100, 0x100000);
  fake(&b, 100, 0x200000);
  tl_arg args[3] = {tl_arg_tensor(&a.t), tl_arg_int(3), tl_arg_tensor(&b.t)};
  DLManagedTensor *outs[1];
  tl_status s = tl_kernel_call(ctx, k, args, 3, NULL, outs);
  EXPECT_ERR(s, "argument 'B' (#1): kind: expected a tensor (float32[n]), got an integer scalar");
  cr_assert(strstr(tl_context_last_error(ctx), "argument 'alpha' (#2): kind: expected a float scalar"));
  /* an int for a float scalar converts */
  cr_assert_eq(call3(ctx, k, &a, &b, tl_arg_int(2)), TL_ERR_NO_DEVICE);
  tl_kernel_destroy(k);
}

Test(call, int_scalar_range) {
  tl_kernel *k = make_add_kernel();
  k->sig.params[2].dtype = (tl_dtype){TL_TYPE_INT, 8, 1};
  fake_tensor a, b;
  fake(&a, 100, 0x100000);
  fake(&b, 100, 0x200000);
  EXPECT_ERR(call3(ctx, k, &a, &b, tl_arg_int(200)),
             "argument 'alpha' (#2): value: expected a value in the range of int8, got 200");
  EXPECT_ERR(call3(ctx, k, &a, &b, tl_arg_float(1.5)), "kind: expected an integer scalar");
  cr_assert_eq(call3(ctx, k, &a, &b, tl_arg_int(-128)), TL_ERR_NO_DEVICE);
  tl_kernel_destroy(k);
}

/* A zero-size dynamic dim (grid.x = ceildiv(0, 1024) = 0) is an empty
 * call: it binds, launches nothing, its output is empty; the tensors may
 * have NULL data (issue 15). */
Test(call, zero_dim_is_an_empty_call) {
  tl_kernel *k = make_add_kernel();
  fake_tensor a, b;
  fake(&a, 0, 0);
  fake(&b, 0, 0x200000);
  tl_arg args[3] = {tl_arg_tensor(&a.t), tl_arg_tensor(&b.t), tl_arg_float(1)};
  tl_rt_binding bd;
  cr_assert_eq(tl_rt_bind(ctx, &k->sig, args, 3, &bd), TL_OK, "%s", tl_context_last_error(ctx));
  cr_assert(bd.empty);
  cr_assert_eq(bd.grid[0], 0);
  cr_assert_eq(bd.out_shapes[3][0], 0);
  cr_assert_eq(bd.out_bytes[3], 0);
  tl_rt_binding_free(&bd);
  /* past the binder: the call only lacks a driver here */
  cr_assert_eq(call3(ctx, k, &a, &b, tl_arg_float(1)), TL_ERR_NO_DEVICE);
  /* NULL data stays an error for a tensor with elements */
  fake(&a, 5, 0);
  fake(&b, 5, 0x200000);
  EXPECT_ERR(call3(ctx, k, &a, &b, tl_arg_float(1)),
             "argument 'A' (#0): data: expected a non-null device pointer, got NULL");
  tl_kernel_destroy(k);
}

/* A grid dim of 0 while no dynamic dim is 0 stays an error; it shows the
 * dims' values. */
Test(call, zero_grid_is_an_error) {
  tl_kernel *k = make_add_kernel();
  tl_rx_free(&k->sig.grid[0]);
  k->sig.grid[0] = prog_const(0);
  fake_tensor a, b;
  fake(&a, 5, 0x100000);
  fake(&b, 5, 0x200000);
  EXPECT_ERR(call3(ctx, k, &a, &b, tl_arg_float(1)),
             "grid.x = 0: expected a value in [1, 2147483647], got 0 (with n = 5)");
  tl_kernel_destroy(k);
}

/* A finite float out of a float parameter's range is an error naming the
 * parameter; inf, nan and the largest finite values pass (issue 15). */
Test(call, float_scalar_range) {
  tl_kernel *k = make_add_kernel();
  fake_tensor a, b;
  fake(&a, 100, 0x100000);
  fake(&b, 100, 0x200000);
  EXPECT_ERR(call3(ctx, k, &a, &b, tl_arg_float(1e300)),
             "argument 'alpha' (#2): value: expected a value in the finite range of float32, got 1e+300");
  EXPECT_ERR(call3(ctx, k, &a, &b, tl_arg_float(-3.5e38)), "got -3.5e+38");
  cr_assert_eq(call3(ctx, k, &a, &b, tl_arg_float(3.4028234663852886e38)), TL_ERR_NO_DEVICE);
  cr_assert_eq(call3(ctx, k, &a, &b, tl_arg_float(-1.0 / 0.0)), TL_ERR_NO_DEVICE);
  cr_assert_eq(call3(ctx, k, &a, &b, tl_arg_float(0.0 / 0.0)), TL_ERR_NO_DEVICE);
  k->sig.params[2].dtype = (tl_dtype){TL_TYPE_FLOAT, 16, 1};
  EXPECT_ERR(call3(ctx, k, &a, &b, tl_arg_float(65520)),
             "value: expected a value in the finite range of float16, got 65520");
  EXPECT_ERR(call3(ctx, k, &a, &b, tl_arg_int(100000)), "float16, got 100000");
  cr_assert_eq(call3(ctx, k, &a, &b, tl_arg_float(65504)), TL_ERR_NO_DEVICE);
  k->sig.params[2].dtype = (tl_dtype){TL_TYPE_BFLOAT, 16, 1};
  cr_assert_eq(call3(ctx, k, &a, &b, tl_arg_float(1e38)), TL_ERR_NO_DEVICE);
  k->sig.params[2].dtype = (tl_dtype){TL_TYPE_FLOAT, 64, 1};
  cr_assert_eq(call3(ctx, k, &a, &b, tl_arg_float(1e300)), TL_ERR_NO_DEVICE);
  tl_kernel_destroy(k);
}

/* An out-of-range tl_arg kind (an uninitialised argument) is named as such,
 * for tensor and scalar parameters alike. */
Test(call, unknown_arg_kind) {
  tl_kernel *k = make_add_kernel();
  fake_tensor a, b;
  fake(&a, 100, 0x100000);
  fake(&b, 100, 0x200000);
  tl_arg bad = tl_arg_int(0);
  bad.kind = (tl_arg_kind)7;
  EXPECT_ERR(call3(ctx, k, &a, &b, bad),
             "argument 'alpha' (#2): kind: expected a float scalar (float32), got an argument of "
             "unknown kind 7 (expected TL_ARG_TENSOR, TL_ARG_INT or TL_ARG_FLOAT)");
  tl_arg args[3] = {bad, tl_arg_tensor(&b.t), tl_arg_float(1)};
  DLManagedTensor *outs[1] = {NULL};
  EXPECT_ERR(tl_kernel_call(ctx, k, args, 3, NULL, outs),
             "argument 'A' (#0): kind: expected a tensor (float32[n]), got an argument of unknown kind 7");
  k->sig.params[2].dtype = (tl_dtype){TL_TYPE_INT, 32, 1};
  EXPECT_ERR(call3(ctx, k, &a, &b, bad), "kind: expected an integer scalar (int32), got an argument of unknown kind 7");
  tl_kernel_destroy(k);
}

/* A tensor whose size in bytes overflows int64 is refused (whatever its
 * strides), never sized with a wrapped product. */
Test(call, tensor_size_overflow) {
  tl_kernel *k = make_add_kernel();
  tl_rx_free(&k->sig.params[0].dims[0].prog);
  k->sig.params[0].dims[0].prog = prog_const(INT64_C(4611686018427387904)); /* 2^62 float32 */
  fake_tensor a, b;
  fake(&a, INT64_C(4611686018427387904), 0x100000);
  fake(&b, 100, 0x200000);
  EXPECT_ERR(call3(ctx, k, &a, &b, tl_arg_float(1)),
             "argument 'A' (#0): shape: the tensor's size in bytes overflows int64");
  tl_kernel_destroy(k);
}

Test(call, null_pointers) {
  tl_kernel *k = make_add_kernel();
  cr_assert_eq(tl_kernel_call(NULL, k, NULL, 0, NULL, NULL), TL_ERR_INVALID_ARGUMENT);
  cr_assert_eq(tl_kernel_call(ctx, NULL, NULL, 0, NULL, NULL), TL_ERR_INVALID_ARGUMENT);
  EXPECT_ERR(tl_kernel_call(ctx, k, NULL, 3, NULL, NULL), "outputs is NULL");
  DLManagedTensor *outs[1];
  EXPECT_ERR(tl_kernel_call(ctx, k, NULL, 3, NULL, outs), "with a NULL args array");
  cr_assert_eq(tl_kernel_load(ctx, k, 0), TL_ERR_NO_DEVICE);
  tl_kernel_destroy(k);
  tl_kernel_destroy(NULL);
}

/* ------------------------------------------------------ compile (public API) */
TestSuite(compile, .init = setup, .fini = teardown);

static const char add_src[] =
    "import tilelang\n"
    "import tilelang.language as T\n"
    "\n"
    "@tilelang.jit(out_idx=-1)\n"
    "def add(block=1024, dtype=\"float32\"):\n"
    "    n = T.dynamic(\"n\")\n"
    "\n"
    "    @T.prim_func\n"
    "    def main(A: T.Tensor((n,), dtype), B: T.Tensor((n,), dtype), C: T.Tensor((n,), dtype)):\n"
    "        with T.Kernel(T.ceildiv(n, block), threads=128) as bx:\n"
    "            A_frag = T.alloc_fragment((block,), dtype)\n"
    "            B_frag = T.alloc_fragment((block,), dtype)\n"
    "            T.copy(A[bx * block], A_frag)\n"
    "            T.copy(B[bx * block], B_frag)\n"
    "            for i in T.Parallel(block):\n"
    "                B_frag[i] = A_frag[i] + B_frag[i]\n"
    "            T.copy(B_frag, C[bx * block])\n"
    "\n"
    "    return main\n";

Test(compile, compiles_without_a_driver_and_introspects) {
  tl_kernel *k = NULL;
  tl_compile_options o = {0};
  o.verify_each = true;
  tl_status s = tl_kernel_compile(ctx, add_src, sizeof add_src - 1, "add.py", NULL, 0, &o, &k);
  cr_assert_eq(s, TL_OK, "%s", tl_context_last_error(ctx));
  cr_assert_str_eq(tl_kernel_target(k), "sm_80"); /* no driver: the default */
  cr_assert_str_eq(tl_kernel_name(k), "main");
  cr_assert(strstr(tl_kernel_ptx(k), ".entry main"), "%s", tl_kernel_ptx(k));
  cr_assert_not_null(tl_kernel_llvm_ir(k));
  cr_assert_not_null(tl_kernel_simt_ir(k));
  cr_assert_eq(tl_kernel_param_count(k), 3);
  cr_assert_str_eq(tl_kernel_param_name(k, 1), "B");
  cr_assert(tl_kernel_param_is_tensor(k, 0));
  cr_assert_eq(tl_kernel_param_ndim(k, 2), 1);
  int64_t v = -1;
  const char *sym = NULL;
  cr_assert_not(tl_kernel_param_dim(k, 0, 0, &v, &sym));
  cr_assert_str_eq(sym, "n");
  cr_assert(tl_kernel_param_is_output(k, 2));
  cr_assert_geq(tl_kernel_param_alignment(k, 0), 4);
  cr_assert_eq(tl_kernel_param_name(k, 3), NULL);
  /* the call checks still run, then the missing driver is reported */
  fake_tensor a, b;
  fake(&a, 1000, 0x100000);
  fake(&b, 1000, 0x200000);
  tl_arg args[2] = {tl_arg_tensor(&a.t), tl_arg_tensor(&b.t)};
  DLManagedTensor *outs[1];
  cr_assert_eq(tl_kernel_call(ctx, k, args, 2, NULL, outs), TL_ERR_NO_DEVICE);
  tl_kernel_destroy(k);
}

Test(compile, out_idx_overrides) {
  tl_kernel *k = NULL;
  tl_compile_options o = {0};
  o.out_idx_mode = TL_OUT_IDX_NONE;
  cr_assert_eq(tl_kernel_compile(ctx, add_src, sizeof add_src - 1, "add.py", NULL, 0, &o, &k), TL_OK, "%s",
               tl_context_last_error(ctx));
  int n = -1;
  tl_kernel_out_idx(k, &n);
  cr_assert_eq(n, 0);
  tl_kernel_destroy(k);
  int list[] = {2};
  o.out_idx_mode = TL_OUT_IDX_LIST;
  o.out_idx = list;
  o.n_out_idx = 1;
  cr_assert_eq(tl_kernel_compile(ctx, add_src, sizeof add_src - 1, "add.py", NULL, 0, &o, &k), TL_OK, "%s",
               tl_context_last_error(ctx));
  const int *idx = tl_kernel_out_idx(k, &n);
  cr_assert_eq(n, 1);
  cr_assert_eq(idx[0], 2);
  tl_kernel_destroy(k);
  int bad[] = {5};
  o.out_idx = bad;
  cr_assert_eq(tl_kernel_compile(ctx, add_src, sizeof add_src - 1, "add.py", NULL, 0, &o, &k), TL_ERR_INVALID_ARGUMENT);
  cr_assert(strstr(tl_context_last_error(ctx), "out of range"));
  cr_assert_null(k);
}

Test(compile, bad_target_and_missing_file) {
  tl_kernel *k = NULL;
  tl_compile_options o = {0};
  o.target = "sm_70";
  cr_assert_eq(tl_kernel_compile(ctx, add_src, sizeof add_src - 1, "add.py", NULL, 0, &o, &k), TL_ERR_INVALID_ARGUMENT);
  cr_assert(strstr(tl_context_last_error(ctx), "unknown target 'sm_70'"));
  cr_assert_eq(tl_kernel_compile_file(ctx, "/nonexistent/k.py", NULL, 0, NULL, &k), TL_ERR_IO);
  cr_assert(strstr(tl_context_last_error(ctx), "/nonexistent/k.py"));
  cr_assert_eq(tl_kernel_compile(ctx, NULL, 0, NULL, NULL, 0, NULL, &k), TL_ERR_INVALID_ARGUMENT);
}

/* TL_COMPILE_KEEP_LLVM_IR (issue 6, compile latency): the optimised LLVM IR
 * is printed only when asked; the PTX does not depend on it. */
Test(compile, llvm_ir_is_kept_only_when_asked) {
  tl_kernel *a = NULL, *b = NULL;
  tl_compile_options o = {0};
  cr_assert_eq(tl_kernel_compile(ctx, add_src, sizeof add_src - 1, "add.py", NULL, 0, &o, &a), TL_OK, "%s",
               tl_context_last_error(ctx));
  cr_assert_str_eq(tl_kernel_llvm_ir(a), "");
  o.flags = TL_COMPILE_KEEP_LLVM_IR;
  cr_assert_eq(tl_kernel_compile(ctx, add_src, sizeof add_src - 1, "add.py", NULL, 0, &o, &b), TL_OK, "%s",
               tl_context_last_error(ctx));
  cr_assert(strstr(tl_kernel_llvm_ir(b), "define ptx_kernel void @main("), "%s", tl_kernel_llvm_ir(b));
  cr_assert_str_eq(tl_kernel_ptx(a), tl_kernel_ptx(b));
  tl_kernel_destroy(a);
  tl_kernel_destroy(b);
}

/* $TL_LLVM_PASSES replaces the optimisation pipeline; a bad one is a
 * compile error, not an abort.  (Criterion runs each test in its own
 * process, so the variable does not leak.) */
Test(compile, llvm_passes_override) {
  tl_kernel *k = NULL;
  setenv("TL_LLVM_PASSES", "no-such-pass", 1);
  cr_assert_eq(tl_kernel_compile(ctx, add_src, sizeof add_src - 1, "add.py", NULL, 0, NULL, &k), TL_ERR_COMPILE);
  cr_assert(strstr(tl_context_last_error(ctx), "LLVM optimisation failed"), "%s", tl_context_last_error(ctx));
  cr_assert_null(k);
  setenv("TL_LLVM_PASSES", "default<O3>", 1);
  cr_assert_eq(tl_kernel_compile(ctx, add_src, sizeof add_src - 1, "add.py", NULL, 0, NULL, &k), TL_OK, "%s",
               tl_context_last_error(ctx));
  cr_assert(strstr(tl_kernel_ptx(k), ".entry main"));
  tl_kernel_destroy(k);
}

/* ------------------------------------------------- output allocator */
static void *no_alloc(void *user, size_t bytes, int device, void *stream) {
  (void)user, (void)bytes, (void)device, (void)stream;
  return NULL;
}
static void no_free(void *user, void *ptr, size_t bytes, int device, void *stream) {
  (void)user, (void)ptr, (void)bytes, (void)device, (void)stream;
}

Test(allocator, set_and_reset_validate_their_arguments) {
  tl_context *ctx;
  cr_assert_eq(tl_context_create(&ctx), TL_OK);
  tl_allocator a = {no_alloc, no_free, NULL};
  cr_assert_eq(tl_context_set_allocator(NULL, &a), TL_ERR_INVALID_ARGUMENT);
  cr_assert_eq(tl_context_set_allocator(ctx, &a), TL_OK);
  cr_assert_str_empty(tl_context_last_error(ctx));
  tl_allocator half = {no_alloc, NULL, NULL};
  cr_assert_eq(tl_context_set_allocator(ctx, &half), TL_ERR_INVALID_ARGUMENT);
  cr_assert(strstr(tl_context_last_error(ctx), "alloc and free must both be given"));
  tl_allocator other = {NULL, no_free, NULL};
  cr_assert_eq(tl_context_set_allocator(ctx, &other), TL_ERR_INVALID_ARGUMENT);
  cr_assert_eq(tl_context_set_allocator(ctx, NULL), TL_OK);
  tl_context_destroy(ctx);
}

/* An int64 dynamic dim (T.dynamic(name, "int64")) takes values above 2^31 - 1
 * and travels as an int64 kernel parameter; an int32 one refuses them. */
Test(call, int64_dynamic_dim) {
  tl_kernel *k = make_add_kernel();
  fake_tensor a, b;
  int64_t n = (INT64_C(1) << 31) + 5;
  fake(&a, n, 0x100000);
  fake(&b, n, 0x200000);
  EXPECT_ERR(call3(ctx, k, &a, &b, tl_arg_float(1)),
             "argument 'A' (#0): shape[0]: expected dynamic dim 'n' in the int32 range, got 2147483653");
  k->sig.sym_int64 = calloc(1, sizeof(bool));
  k->sig.sym_int64[0] = true;
  tl_arg args[3] = {tl_arg_tensor(&a.t), tl_arg_tensor(&b.t), tl_arg_float(1)};
  tl_rt_binding bd;
  cr_assert_eq(tl_rt_bind(ctx, &k->sig, args, 3, &bd), TL_OK, "%s", tl_context_last_error(ctx));
  cr_assert_eq(bd.slots[k->sig.nparams], (uint64_t)n);
  cr_assert_eq(bd.grid[0], (unsigned)((n + 1023) / 1024));
  cr_assert_eq(bd.out_bytes[3], (size_t)n * 4);
  tl_rt_binding_free(&bd);
  tl_kernel_destroy(k);
}

/* ------------------------------------------ kernel workspaces (stream-K) */
/* tl_rt_ws_prepare with a mock driver: one zeroed allocation per stream
 * (cuMemAlloc, then cuMemsetD8Async of all of it to 0 on that stream),
 * reused by later calls on the stream, 256-byte aligned pieces, the
 * binding's workspace pointers set; tl_rt_ws_free frees each. */
static int ws_allocs, ws_memsets, ws_frees;
static size_t ws_bytes_seen;
static void *ws_memset_stream;
static tl_CUdeviceptr ws_next = 0x10000000ull;
static tl_CUresult mock_mem_alloc(tl_CUdeviceptr *p, size_t n) {
  *p = ws_next;
  ws_next += 0x10000000ull;
  ws_allocs++;
  ws_bytes_seen = n;
  return TL_CUDA_SUCCESS;
}
static tl_CUresult mock_memset_async(tl_CUdeviceptr p, unsigned char v, size_t n, tl_CUstream s) {
  cr_expect_eq(v, 0);
  cr_expect_eq(n, ws_bytes_seen);
  cr_expect_eq(p % 0x10000000ull, 0);
  ws_memset_stream = (void *)s;
  ws_memsets++;
  return TL_CUDA_SUCCESS;
}
static tl_CUresult mock_mem_free(tl_CUdeviceptr p) {
  (void)p;
  ws_frees++;
  return TL_CUDA_SUCCESS;
}

/* A driver with the workspace mocks above and the given cuMemsetD8Async. */
static tl_driver mock_ws_driver(tl_CUresult (*memset_async)(tl_CUdeviceptr, unsigned char, size_t, tl_CUstream)) {
  tl_driver drv;
  memset(&drv, 0, sizeof drv);
  drv.cuMemAlloc = mock_mem_alloc;
  drv.cuMemsetD8Async = memset_async;
  drv.cuMemFree = mock_mem_free;
  return drv;
}

Test(runtime, workspace_one_zeroed_allocation_per_stream) {
  tl_kernel *k = make_add_kernel();
  k->sig.nws = 2;
  k->sig.ws_bytes[0] = 1000; /* the slots: the counters start at the next 256-byte boundary */
  k->sig.ws_bytes[1] = 64;
  tl_driver drv = mock_ws_driver(mock_memset_async);
  tl_rt_devslot slot;
  memset(&slot, 0, sizeof slot);
  tl_context *ctx = NULL;
  cr_assert_eq(tl_context_create(&ctx), TL_OK);
  tl_rt_binding b1, b2, b3;
  memset(&b1, 0, sizeof b1), memset(&b2, 0, sizeof b2), memset(&b3, 0, sizeof b3);
  void *s1 = (void *)0x51, *s2 = (void *)0x52;
  cr_assert_eq(tl_rt_ws_prepare(ctx, &drv, k, &slot, s1, &b1), TL_OK);
  cr_expect_eq(ws_allocs, 1);
  cr_expect_eq(ws_memsets, 1);
  cr_expect_eq(ws_bytes_seen, 1024 + 256);
  cr_expect_eq(ws_memset_stream, s1, "the zeroing runs on the call's stream");
  cr_expect_eq(b1.ws_ptr[1] - b1.ws_ptr[0], 1024);
  cr_assert_eq(tl_rt_ws_prepare(ctx, &drv, k, &slot, s1, &b2), TL_OK);
  cr_expect_eq(ws_allocs, 1, "a second call on the stream reuses its workspace");
  cr_expect_eq(ws_memsets, 1);
  cr_expect_eq(b2.ws_ptr[0], b1.ws_ptr[0]);
  cr_assert_eq(tl_rt_ws_prepare(ctx, &drv, k, &slot, s2, &b3), TL_OK);
  cr_expect_eq(ws_allocs, 2, "another stream gets its own");
  cr_expect_eq(ws_memset_stream, s2);
  cr_expect_neq(b3.ws_ptr[0], b1.ws_ptr[0]);
  tl_rt_ws_free(&drv, &slot);
  cr_expect_eq(ws_frees, 2);
  cr_expect_eq(slot.nws, 0);
  free(slot.ws);
  tl_context_destroy(ctx);
  tl_kernel_destroy(k);
}

/* T.alloc_global's workspaces (sig.ws_zero): the first call zeroes the
 * whole allocation once; every later call on the stream zeroes that piece
 * again (its offset and bytes), before the launch on the same stream, and
 * leaves stream-K's pieces as the kernel left them. */
static tl_CUdeviceptr wz_ptr;
static size_t wz_bytes;
static int wz_memsets;
static void *wz_stream;
static tl_CUresult mock_memset_piece(tl_CUdeviceptr p, unsigned char v, size_t n, tl_CUstream s) {
  cr_expect_eq(v, 0);
  wz_ptr = p, wz_bytes = n, wz_stream = (void *)s;
  wz_memsets++;
  return TL_CUDA_SUCCESS;
}

Test(runtime, workspace_alloc_global_zeroed_per_launch) {
  tl_kernel *k = make_add_kernel();
  k->sig.nws = 2;
  k->sig.ws_bytes[0] = 1000; /* kept (stream-K) */
  k->sig.ws_bytes[1] = 300;  /* T.alloc_global: zeroed per launch */
  k->sig.ws_zero[1] = true;
  tl_driver drv = mock_ws_driver(mock_memset_piece);
  tl_rt_devslot slot;
  memset(&slot, 0, sizeof slot);
  tl_context *ctx = NULL;
  cr_assert_eq(tl_context_create(&ctx), TL_OK);
  tl_rt_binding b1, b2;
  memset(&b1, 0, sizeof b1), memset(&b2, 0, sizeof b2);
  void *s1 = (void *)0x61;
  int allocs0 = ws_allocs;
  cr_assert_eq(tl_rt_ws_prepare(ctx, &drv, k, &slot, s1, &b1), TL_OK);
  cr_expect_eq(ws_allocs, allocs0 + 1);
  cr_expect_eq(wz_memsets, 1, "the first call zeroes the new allocation once");
  cr_expect_eq(wz_bytes, 1024 + 512);
  cr_expect_eq(wz_ptr, (tl_CUdeviceptr)b1.ws_ptr[0]);
  for (int call = 2; call <= 3; call++) {
    cr_assert_eq(tl_rt_ws_prepare(ctx, &drv, k, &slot, s1, &b2), TL_OK);
    cr_expect_eq(ws_allocs, allocs0 + 1, "later calls reuse the allocation");
    cr_expect_eq(wz_memsets, call, "each later call zeroes the T.alloc_global piece");
    cr_expect_eq(wz_ptr, (tl_CUdeviceptr)b1.ws_ptr[1]);
    cr_expect_eq(wz_ptr - (tl_CUdeviceptr)b1.ws_ptr[0], 1024);
    cr_expect_eq(wz_bytes, 300);
    cr_expect_eq(wz_stream, s1, "on the call's stream, ordered before its launch");
  }
  tl_rt_ws_free(&drv, &slot);
  free(slot.ws);
  tl_context_destroy(ctx);
  tl_kernel_destroy(k);
}

/* tl_kernel_set_ptx: another build's PTX of the same entry and parameter
 * list replaces the kernel's (parameter names may differ); a missing entry,
 * another parameter count or another parameter declaration is refused naming
 * the difference, and the kernel keeps its own PTX. */
Test(compile, set_ptx_checks_the_entry_and_parameters) {
  tl_kernel *k = NULL;
  tl_compile_options o = {0};
  o.target = "sm_90a";
  cr_assert_eq(tl_kernel_compile_file(ctx, "examples/gemm.py", NULL, 0, &o, &k), TL_OK, "%s",
               tl_context_last_error(ctx));
  char *own = strdup(tl_kernel_ptx(k));
  /* the same text with the parameter names changed, and a comment added */
  size_t n = strlen(own);
  char *renamed = malloc(n + 64);
  strcpy(renamed, "// another build\n");
  const char *p = own;
  char *w = renamed + strlen(renamed);
  for (const char *q; (q = strstr(p, "main_param_")) != NULL; p = q + 11) {
    memcpy(w, p, (size_t)(q - p));
    w += q - p;
    memcpy(w, "other_arg_", 10);
    w += 10;
  }
  strcpy(w, p);
  cr_assert_eq(tl_kernel_set_ptx(ctx, k, renamed), TL_OK, "%s", tl_context_last_error(ctx));
  cr_assert_str_eq(tl_kernel_ptx(k), renamed);
  /* no entry of that name */
  cr_assert_eq(
      tl_kernel_set_ptx(ctx, k, ".version 8.0\n.target sm_90a\n.visible .entry other(\n.param .u64 a\n)\n{ ret; }\n"),
      TL_ERR_INVALID_ARGUMENT);
  cr_assert(strstr(tl_context_last_error(ctx), "no `.entry main(...)`"), "%s", tl_context_last_error(ctx));
  /* one parameter fewer */
  cr_assert_eq(tl_kernel_set_ptx(ctx, k, ".visible .entry main(\n.param .u64 a\n)\n{ ret; }\n"),
               TL_ERR_INVALID_ARGUMENT);
  cr_assert(strstr(tl_context_last_error(ctx), "has 1 parameters, expected 5"), "%s", tl_context_last_error(ctx));
  /* a parameter of another type */
  cr_assert_eq(tl_kernel_set_ptx(ctx, k,
                                 ".visible .entry main(.param .u64 a, .param .u32 b, .param .u64 c, .param .align 128 "
                                 ".b8 d[128], .param .align 128 .b8 e[128])\n{ ret; }\n"),
               TL_ERR_INVALID_ARGUMENT);
  cr_assert(strstr(tl_context_last_error(ctx), "parameter 1 of entry 'main' is `.param .u32`, expected `.param .u64`"),
            "%s", tl_context_last_error(ctx));
  cr_assert_str_eq(tl_kernel_ptx(k), renamed, "a refused text leaves the kernel's PTX");
  cr_assert_eq(tl_kernel_set_ptx(ctx, k, NULL), TL_ERR_INVALID_ARGUMENT);
  cr_assert(strstr(tl_context_last_error(ctx), "argument 'ptx' is NULL"));
  free(renamed);
  free(own);
  tl_kernel_destroy(k);
}

/* tl_pass_config_flag, tl_pass_config_apply: the pass-config table
 * (include/tilelang/pass_configs.def) as tl-run's --pass-config and the
 * Python package read it. */
Test(compile, pass_config_flags_by_key) {
  cr_assert_eq(tl_pass_config_flag("tl.disable_wgmma", 16), TL_COMPILE_DISABLE_WGMMA);
  cr_assert_eq(tl_pass_config_flag("tl.enable_fast_math=True", 19), TL_COMPILE_FAST_MATH);
  cr_assert_eq(tl_pass_config_flag("tl.attention_overlap", 20), TL_COMPILE_ATTENTION_OVERLAP);
  cr_assert_eq(tl_pass_config_flag("tl.disable_wgmm", 15), 0u, "a prefix is not a key");
  cr_assert_eq(tl_pass_config_flag("tl.config_index_bitwidth", 24), TL_COMPILE_INDEX_BITWIDTH_64);
  cr_assert_eq(tl_pass_config_flag(NULL, 0), 0u);
  const char *keys = tl_pass_config_flag_keys();
  cr_assert(strstr(keys, "tl.disable_tma_store") && strstr(keys, "tl.attention_pingpong"), "%s", keys);
  cr_assert_str_eq(keys, tl_pass_config_flag_keys(), "stable text");
  unsigned f = 0, ff = 0;
  cr_assert_eq(tl_pass_config_apply(ctx, "tl.disable_wgmma", NULL, &f, &ff), TL_OK);
  cr_assert_eq(tl_pass_config_apply(ctx, "tl.attention_overlap", "False", &f, &ff), TL_OK);
  cr_assert_eq(tl_pass_config_apply(ctx, "tl.config_index_bitwidth", "64", &f, &ff), TL_OK);
  cr_assert_eq(f, TL_COMPILE_DISABLE_WGMMA | TL_COMPILE_INDEX_BITWIDTH_64);
  cr_assert_eq(ff, TL_COMPILE_ATTENTION_OVERLAP, "a schedule given False");
  cr_assert_eq(tl_pass_config_apply(ctx, "tl.disable_wgmma", "0", &f, &ff), TL_OK);
  cr_assert_eq(tl_pass_config_apply(ctx, "tl.attention_overlap", "true", &f, &ff), TL_OK);
  cr_assert_eq(f, TL_COMPILE_INDEX_BITWIDTH_64 | TL_COMPILE_ATTENTION_OVERLAP);
  cr_assert_eq(ff, 0u, "False of a boolean config is absent; True clears a given False");
  cr_assert_eq(tl_pass_config_apply(ctx, "tl.no_such", NULL, &f, &ff), TL_ERR_INVALID_ARGUMENT);
  cr_assert(strstr(tl_context_last_error(ctx), "unsupported pass config 'tl.no_such' (understood: tl.enable_fast_math"),
            "%s", tl_context_last_error(ctx));
  cr_assert_eq(tl_pass_config_apply(ctx, "tl.config_index_bitwidth", "16", &f, &ff), TL_ERR_INVALID_ARGUMENT);
  cr_assert(strstr(tl_context_last_error(ctx), "expected 32 or 64, got '16'"), "%s", tl_context_last_error(ctx));
  cr_assert_eq(tl_pass_config_apply(ctx, "tl.disable_wgmma", NULL, NULL, &ff), TL_ERR_INVALID_ARGUMENT);
  cr_assert(strstr(tl_context_last_error(ctx), "argument 'flags' is NULL"));
  cr_assert_eq(tl_pass_config_apply(NULL, "tl.disable_wgmma", NULL, &f, &ff), TL_ERR_INVALID_ARGUMENT);
}

/* tl_compile_options.remarks: the lowering's remarks reach
 * tl_context_warnings only when asked for (the option, not a process-wide
 * environment variable set behind the caller's back). */
Test(compile, remarks_option) {
  tl_define d[3] = {{"M", "128"}, {"N", "128"}, {"K", "64"}};
  tl_compile_options o = {0};
  o.target = "sm_90a";
  o.stop_after = TL_STAGE_SIMT;
  o.cache = TL_CACHE_USE_OFF;
  tl_kernel *k = NULL;
  cr_assert_eq(tl_kernel_compile_file(ctx, "examples/gemm.py", d, 3, &o, &k), TL_OK, "%s", tl_context_last_error(ctx));
  cr_assert_null(strstr(tl_context_warnings(ctx), "remark:"), "%s", tl_context_warnings(ctx));
  tl_kernel_destroy(k);
  o.remarks = true;
  cr_assert_eq(tl_kernel_compile_file(ctx, "examples/gemm.py", d, 3, &o, &k), TL_OK, "%s", tl_context_last_error(ctx));
  cr_assert(strstr(tl_context_warnings(ctx), "remark: T.Pipelined GEMM loop takes the Hopper path"), "%s",
            tl_context_warnings(ctx));
  tl_kernel_destroy(k);
}

/* TL_COMPILE_INDEX_BITWIDTH_64 sets "tl.config_index_bitwidth" in the
 * kernel's IR (int64 indices), as the file's pass config would. */
Test(compile, index_bitwidth_flag) {
  tl_compile_options o = {0};
  o.stop_after = TL_STAGE_SIMT;
  o.cache = TL_CACHE_USE_OFF;
  o.flags = TL_COMPILE_INDEX_BITWIDTH_64;
  tl_kernel *k = NULL;
  const char *src =
      "import tilelang.language as T\n"
      "@T.prim_func\n"
      "def f(A: T.Tensor((64,), \"float32\")):\n"
      "    with T.Kernel(1, threads=64) as bx:\n"
      "        A[T.get_thread_binding()] = 1.0\n";
  cr_assert_eq(tl_kernel_compile(ctx, src, strlen(src), "f.py", NULL, 0, &o, &k), TL_OK, "%s",
               tl_context_last_error(ctx));
  cr_assert(strstr(tl_kernel_simt_ir(k), "\"tl.config_index_bitwidth\": 64"), "%s", tl_kernel_simt_ir(k));
  tl_kernel_destroy(k);
}

/* tl_compile_options.flags_false: an attention schedule config given False
 * keeps the default schedule from choosing it (examples/flash_attention.py
 * at (1, 2, 256, 128) on sm_90a: by default the overlap, whose
 * wgmma.wait_group 1 the PTX then has); a bit in both flags and
 * flags_false is refused. */
Test(compile, attention_schedule_given_false) {
  tl_define d[7] = {{"batch", "1"},     {"heads", "2"},     {"seq_len", "256"}, {"block_M", "128"},
                    {"block_N", "128"}, {"threads", "256"}, {"num_stages", "2"}};
  tl_compile_options o = {0};
  o.target = "sm_90a";
  o.stop_after = TL_STAGE_SIMT;
  o.cache = TL_CACHE_USE_OFF;
  tl_kernel *k = NULL;
  cr_assert_eq(tl_kernel_compile_file(ctx, "examples/flash_attention.py", d, 7, &o, &k), TL_OK, "%s",
               tl_context_last_error(ctx));
  cr_assert(strstr(tl_kernel_simt_ir(k), "T.ptx_wgmma_wait(1, acc_s"), "the default schedule overlaps");
  tl_kernel_destroy(k);
  o.flags_false = TL_COMPILE_ATTENTION_OVERLAP;
  cr_assert_eq(tl_kernel_compile_file(ctx, "examples/flash_attention.py", d, 7, &o, &k), TL_OK, "%s",
               tl_context_last_error(ctx));
  cr_assert_null(strstr(tl_kernel_simt_ir(k), "T.ptx_wgmma_wait(1, acc_s"), "given False: no overlap");
  cr_assert(strstr(tl_kernel_simt_ir(k), "\"tl.attention_overlap\": False"), "printed as given");
  tl_kernel_destroy(k);
  o.flags = TL_COMPILE_ATTENTION_OVERLAP;
  EXPECT_ERR(tl_kernel_compile_file(ctx, "examples/flash_attention.py", d, 7, &o, &k),
             "flags and flags_false both have 0x200");
  cr_assert_null(k);
}
