/* Unit tests of the integer semantics of TIR (issue 15): an int constant that
 * the other operand's dtype cannot hold promotes that operand instead of
 * being truncated (IR constructors, lib/IR/ir.c); kernels using such
 * constants give the exact int64 values on both CPU models (the SIMT
 * executor and the reference evaluator, through tl_kernel_call_on); indices
 * into tensor dims above 2^31 - 1 are computed in int64 (lib/IR/index64.c),
 * checked on a sparse host mapping of a 2^32 + 64 element tensor; a
 * zero-size dynamic dim is an empty call on the CPU.  Expected values are
 * computed here in C (int64 arithmetic with explicit wrapping). */
#include <criterion/criterion.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "IR/tir.h"
#include "tilelang/tilelang.h"

static tl_context *ctx;
static void setup(void) {
  setenv("TL_CUDA_DRIVER", "/nonexistent/libcuda.so.1", 1);
  cr_assert_eq(tl_context_create(&ctx), TL_OK);
}
static void teardown(void) { tl_context_destroy(ctx); }
TestSuite(ints, .init = setup, .fini = teardown);

#define L TL_LOC_NONE

static bool is_cast_of(const tl_expr *e, tl_dtype t, const tl_expr *x) {
  return e->kind == TL_EXPR_CAST && tl_dtype_eq(e->dtype, t) && e->u.cast.value == x;
}

/* The constructors' type rule, node by node. */
Test(ints, constant_promotes_the_narrower_operand) {
  tl_module *m = tl_module_new();
  cr_assert_not_null(m);
  tl_expr *i = tl_ir_var(m, L, tl_ir_new_var(m, L, "i", TL_INT32, TL_VAR_LOOP));
  struct {
    tl_binop op;
    int64_t c;
  } wide[] = {{TL_OP_ADD, INT64_C(4294967296)}, {TL_OP_ADD, INT64_C(2147483648)},  {TL_OP_MUL, INT64_C(4294967296)},
              {TL_OP_ADD, INT64_MAX},           {TL_OP_SUB, INT64_C(-2147483649)}, {TL_OP_LT, INT64_C(8589934592)}};
  for (size_t k = 0; k < sizeof wide / sizeof wide[0]; k++) {
    tl_expr *e = tl_ir_binary(m, L, wide[k].op, i, tl_ir_int(m, L, TL_INT64, wide[k].c));
    cr_assert_eq(e->kind, TL_EXPR_BINARY, "case %zu folded", k);
    cr_assert(is_cast_of(e->u.bin.a, TL_INT64, i), "case %zu: i not widened", k);
    cr_assert_eq(e->u.bin.b->kind, TL_EXPR_INT);
    cr_assert(tl_dtype_eq(e->u.bin.b->dtype, TL_INT64));
    cr_assert_eq(e->u.bin.b->u.ival, wide[k].c, "case %zu: constant %lld", k, (long long)e->u.bin.b->u.ival);
    cr_assert(tl_dtype_eq(e->dtype, wide[k].op == TL_OP_LT ? TL_BOOL : TL_INT64));
  }
  /* 2**63 - 1 + tid is not tid - 1 */
  tl_expr *e = tl_ir_binary(m, L, TL_OP_ADD, tl_ir_int(m, L, TL_INT64, INT64_MAX), i);
  cr_assert(tl_dtype_eq(e->dtype, TL_INT64) && e->u.bin.a->u.ival == INT64_MAX);
  /* constants that fit take the other operand's dtype, as before */
  e = tl_ir_binary(m, L, TL_OP_ADD, i, tl_ir_int(m, L, TL_INT64, 5));
  cr_assert(tl_dtype_eq(e->dtype, TL_INT32) && e->u.bin.a == i && e->u.bin.b->u.ival == 5);
  e = tl_ir_binary(m, L, TL_OP_ADD, i, tl_ir_int(m, L, TL_INT64, INT32_MIN));
  cr_assert(tl_dtype_eq(e->dtype, TL_INT32));
  tl_expr *u = tl_ir_var(m, L, tl_ir_new_var(m, L, "u", TL_DT(TL_TYPE_UINT, 32), TL_VAR_LOOP));
  e = tl_ir_binary(m, L, TL_OP_ADD, u, tl_ir_int(m, L, TL_INT64, INT64_C(4294967295)));
  cr_assert(tl_dtype_eq(e->dtype, TL_DT(TL_TYPE_UINT, 32)));
  e = tl_ir_binary(m, L, TL_OP_ADD, u, tl_ir_int(m, L, TL_INT64, -1)); /* -1 is no uint32 */
  cr_assert(tl_dtype_eq(e->dtype, TL_INT64) && is_cast_of(e->u.bin.a, TL_INT64, u));
  tl_expr *s8 = tl_ir_var(m, L, tl_ir_new_var(m, L, "s", TL_DT(TL_TYPE_INT, 8), TL_VAR_LOOP));
  e = tl_ir_binary(m, L, TL_OP_ADD, s8, tl_ir_int(m, L, TL_INT32, 300));
  cr_assert(tl_dtype_eq(e->dtype, TL_INT32) && e->u.bin.b->u.ival == 300);
  e = tl_ir_binary(m, L, TL_OP_ADD, s8, tl_ir_int(m, L, TL_INT32, -128));
  cr_assert(tl_dtype_eq(e->dtype, TL_DT(TL_TYPE_INT, 8)));
  /* selects and two constants */
  e = tl_ir_select(m, L, tl_ir_binary(m, L, TL_OP_LT, i, tl_ir_int(m, L, TL_INT32, 3)), i,
                   tl_ir_int(m, L, TL_INT64, INT64_C(8589934592)));
  cr_assert(tl_dtype_eq(e->dtype, TL_INT64) && is_cast_of(e->u.sel.t, TL_INT64, i));
  e = tl_ir_binary(m, L, TL_OP_ADD, tl_ir_int(m, L, TL_INT32, 5), tl_ir_int(m, L, TL_INT64, INT64_C(4294967296)));
  cr_assert(e->kind == TL_EXPR_INT && tl_dtype_eq(e->dtype, TL_INT64) && e->u.ival == INT64_C(4294967301));
  /* an int64 fold that overflows keeps the node (never a wrapped constant) */
  e = tl_ir_binary(m, L, TL_OP_ADD, tl_ir_int(m, L, TL_INT64, INT64_MAX), tl_ir_int(m, L, TL_INT64, 1));
  cr_assert_eq(e->kind, TL_EXPR_BINARY);
  tl_module_destroy(m);
}

static const char *const k_consts =
    "import tilelang.language as T\n"
    "@T.prim_func\n"
    "def main(A: T.Tensor((4, 64), \"float32\"), O: T.Tensor((8, 64), \"int64\"),\n"
    "         B: T.Tensor((4, 64), \"float32\"), C: T.Tensor((64,), \"float32\")):\n"
    "    with T.Kernel(1, threads=64) as bx:\n"
    "        A_s = T.alloc_shared((4, 64), \"float32\")\n"
    "        T.copy(A[0, 4294967296], A_s)\n"
    "        T.copy(A_s, B)\n"
    "        for i in T.Parallel(64):\n"
    "            O[0, i] = i + 4294967296\n"
    "            O[1, i] = i + 2**31\n"
    "            O[2, i] = i * 2**32\n"
    "            O[3, i] = 9223372036854775807 + i\n"
    "            O[4, i] = i - 2147483649\n"
    "            O[5, i] = (i + 2**31) // 2**31\n"
    "            O[6, i] = (i * 2**32) >> 32\n"
    "            O[7, i] = i * 2**32 + (i + 2147483648)\n"
    "            C[i] = A[1, i + 4294967296 - 4294967296]\n";

static tl_kernel *compile_text(const char *src) {
  tl_compile_options co = {0};
  co.stop_after = TL_STAGE_SIMT;
  co.out_idx_mode = TL_OUT_IDX_NONE;
  tl_kernel *k = NULL;
  tl_status s = tl_kernel_compile(ctx, src, strlen(src), "ints.py", NULL, 0, &co, &k);
  cr_assert_eq(s, TL_OK, "%s", tl_context_last_error(ctx));
  return k;
}

static DLTensor host(void *data, int ndim, int64_t *shape, uint8_t code, uint8_t bits) {
  DLTensor t;
  memset(&t, 0, sizeof t);
  t.data = data;
  t.device.device_type = kDLCPU;
  t.ndim = ndim;
  t.shape = shape;
  t.dtype.code = code;
  t.dtype.bits = bits;
  t.dtype.lanes = 1;
  return t;
}

/* Exact int64 results and zero padding on both CPU models. */
Test(ints, int64_constants_on_both_executors) {
  tl_kernel *k = compile_text(k_consts);
  static const tl_executor ex[2] = {TL_EXEC_CPU, TL_EXEC_REFERENCE};
  for (int r = 0; r < 2; r++) {
    float A[4 * 64], B[4 * 64], C[64];
    int64_t O[8 * 64];
    for (int j = 0; j < 4 * 64; j++) A[j] = (float)(j + 1);
    memset(B, 0x7F, sizeof B);
    memset(C, 0x7F, sizeof C);
    memset(O, 0x5A, sizeof O);
    int64_t sa[2] = {4, 64}, so[2] = {8, 64}, sc[1] = {64};
    DLTensor ta = host(A, 2, sa, kDLFloat, 32), to = host(O, 2, so, kDLInt, 64), tb = host(B, 2, sa, kDLFloat, 32),
             tc = host(C, 1, sc, kDLFloat, 32);
    tl_arg args[4] = {tl_arg_tensor(&ta), tl_arg_tensor(&to), tl_arg_tensor(&tb), tl_arg_tensor(&tc)};
    cr_assert_eq(tl_kernel_call_on(ctx, k, ex[r], args, 4, NULL, NULL), TL_OK, "%s", tl_context_last_error(ctx));
    for (int64_t i = 0; i < 64; i++) {
      int64_t want[8] = {i + INT64_C(4294967296),
                         i + INT64_C(2147483648),
                         i << 32,
                         (int64_t)((uint64_t)INT64_MAX + (uint64_t)i), /* wraps in int64, as the GPU does */
                         i - INT64_C(2147483649),
                         1,
                         i,
                         (i << 32) + i + INT64_C(2147483648)};
      for (int row = 0; row < 8; row++)
        cr_assert_eq(O[row * 64 + i], want[row], "executor %d: O[%d, %lld] = %lld, expected %lld", r, row, (long long)i,
                     (long long)O[row * 64 + i], (long long)want[row]);
      cr_assert_eq(C[i], A[64 + i], "executor %d: C[%lld]", r, (long long)i);
    }
    for (int j = 0; j < 4 * 64; j++) /* the tile at column 2^32 lies outside A: zeros */
      cr_assert_eq(B[j], 0.0f, "executor %d: B[%d] = %g", r, j, B[j]);
  }
  tl_kernel_destroy(k);
}

/* k * 2147483647 + k + i reaches 2^32 + i: in int32 it would wrap to i
 * (and to a negative index for k = 1).  The tensor has 2^32 + 64 elements;
 * only the three touched windows of the host mapping are ever paged in. */
Test(ints, index_into_a_dim_above_int32_is_int64) {
  tl_kernel *k = compile_text(
      "import tilelang.language as T\n"
      "@T.prim_func\n"
      "def main(A: T.Tensor((4294967360,), \"uint8\"), B: T.Tensor((4294967360,), \"uint8\")):\n"
      "    with T.Kernel(1, threads=32) as bx:\n"
      "        for k in T.serial(3):\n"
      "            for i in T.Parallel(32):\n"
      "                B[k * 2147483647 + k + i] = A[k * 2147483647 + k + i] + T.uint8(k + 1)\n");
  cr_assert(strstr(tl_kernel_simt_ir(k), "T.Cast(\"int64\", k) * T.int64(2147483647)"), "%s", tl_kernel_simt_ir(k));
  size_t n = (size_t)4294967360u;
  static const tl_executor ex[2] = {TL_EXEC_CPU, TL_EXEC_REFERENCE};
  for (int r = 0; r < 2; r++) {
    uint8_t *a = mmap(NULL, n, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    uint8_t *b = mmap(NULL, n, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    cr_assert(a != MAP_FAILED && b != MAP_FAILED);
    for (int64_t kk = 0; kk < 3; kk++)
      for (int64_t i = 0; i < 32; i++) a[kk * INT64_C(2147483648) + i] = (uint8_t)(10 * kk + i);
    int64_t sh[1] = {4294967360};
    DLTensor ta = host(a, 1, sh, kDLUInt, 8), tb = host(b, 1, sh, kDLUInt, 8);
    tl_arg args[2] = {tl_arg_tensor(&ta), tl_arg_tensor(&tb)};
    cr_assert_eq(tl_kernel_call_on(ctx, k, ex[r], args, 2, NULL, NULL), TL_OK, "%s", tl_context_last_error(ctx));
    for (int64_t kk = 0; kk < 3; kk++)
      for (int64_t i = 0; i < 32; i++) {
        int64_t at = kk * INT64_C(2147483648) + i;
        cr_assert_eq(b[at], (uint8_t)(10 * kk + i + kk + 1), "executor %d: B[%lld] = %d", r, (long long)at, b[at]);
      }
    munmap(a, n);
    munmap(b, n);
  }
  tl_kernel_destroy(k);
}

/* A zero-size dynamic dim on the CPU: nothing runs, the output is empty, the
 * inputs may have NULL data. */
Test(ints, zero_size_dynamic_dim_is_an_empty_call) {
  tl_compile_options co = {0};
  co.stop_after = TL_STAGE_SIMT;
  tl_kernel *k = NULL;
  cr_assert_eq(tl_kernel_compile_file(ctx, "examples/elementwise_add_1d.py", NULL, 0, &co, &k), TL_OK, "%s",
               tl_context_last_error(ctx));
  static const tl_executor ex[3] = {TL_EXEC_CPU, TL_EXEC_REFERENCE, TL_EXEC_AUTO};
  for (int r = 0; r < 3; r++) {
    int64_t sh[1] = {0};
    DLTensor ta = host(NULL, 1, sh, kDLFloat, 32), tb = host(NULL, 1, sh, kDLFloat, 32);
    tl_arg args[2] = {tl_arg_tensor(&ta), tl_arg_tensor(&tb)};
    DLManagedTensor *out[1] = {NULL};
    tl_status s =
        r == 2 ? tl_kernel_call(ctx, k, args, 2, NULL, out) : tl_kernel_call_on(ctx, k, ex[r], args, 2, NULL, out);
    cr_assert_eq(s, TL_OK, "executor %d: %s", r, tl_context_last_error(ctx));
    cr_assert_not_null(out[0]);
    cr_assert_eq(out[0]->dl_tensor.ndim, 1);
    cr_assert_eq(out[0]->dl_tensor.shape[0], 0);
    cr_assert_eq(out[0]->dl_tensor.device.device_type, kDLCPU);
    out[0]->deleter(out[0]);
  }
  tl_kernel_destroy(k);
}
