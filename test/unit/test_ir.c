/* Unit tests of the IR core (Criterion): dtype spellings, constructor
 * folding and type rules, the canonical printer (precedence, float
 * formatting, a hand-built gemm module printed byte for byte as in
 * docs/canonical-tir.md), structural equality with renamed variables, and
 * the module API's argument and I/O errors. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "IR/tir.h"
#include "Support/context.h"

static tl_module *M;
static const tl_loc L = {0, 0, 0};

static void setup(void) { M = tl_module_new(); }
static void teardown(void) { tl_module_destroy(M); }

TestSuite(ir, .init = setup, .fini = teardown);

static tl_expr *I(int64_t v) { return tl_ir_int(M, L, TL_INT32, v); }
static tl_expr *F(double v) { return tl_ir_float(M, L, TL_FLOAT32, v); }
static tl_expr *V(const char *name, tl_dtype t) { return tl_ir_var(M, L, tl_ir_new_var(M, L, name, t, TL_VAR_LET)); }
static tl_expr *B(tl_binop op, tl_expr *a, tl_expr *b) { return tl_ir_binary(M, L, op, a, b); }

/* Prints e into a static buffer. */
static char printed[4096];
static const char *P(const tl_expr *e) {
  tl_strbuf sb = {0};
  tl_print_expr(&sb, e);
  char *s = tl_strbuf_take(&sb);
  cr_assert(s != NULL);
  snprintf(printed, sizeof printed, "%s", s);
  free(s);
  return printed;
}

/* ---------------------------------------------------------------- dtypes */

Test(ir, dtype_spellings) {
  static const struct {
    const char *in, *canon;
  } cases[] = {
      {"float16", "float16"},     {"half", "float16"},        {"bfloat16", "bfloat16"}, {"float32", "float32"},
      {"float", "float32"},       {"float64", "float64"},     {"double", "float64"},    {"tfloat32", "tfloat32"},
      {"int8", "int8"},           {"int16", "int16"},         {"int32", "int32"},       {"int64", "int64"},
      {"uint8", "uint8"},         {"uint16", "uint16"},       {"uint32", "uint32"},     {"uint64", "uint64"},
      {"bool", "bool"},           {"float16x2", "float16x2"}, {"halfx4", "float16x4"},  {"int8x64", "int8x64"},
      {"float32x8", "float32x8"},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    tl_dtype t;
    cr_assert(tl_dtype_parse(cases[i].in, &t), "%s", cases[i].in);
    cr_assert_str_eq(tl_dtype_name(t), cases[i].canon);
  }
  tl_dtype t;
  cr_assert(tl_dtype_parse("float16x2", &t));
  cr_assert_eq(t.code, TL_TYPE_FLOAT);
  cr_assert_eq(t.bits, 16);
  cr_assert_eq(t.lanes, 2);
  cr_assert_eq(tl_dtype_bytes(t), 2);
  cr_assert(tl_dtype_parse("bool", &t));
  cr_assert_eq(tl_dtype_bytes(t), 1);
  static const char *bad[] = {"float19",    "",   "int",     "float16x3", "float16x1", "float16x128",
                              "float16x02", "x2", "Float16", "int32 ",    "uint7",     NULL};
  for (int i = 0; bad[i]; i++) cr_assert(!tl_dtype_parse(bad[i], &t), "'%s' accepted", bad[i]);
  cr_assert(!tl_dtype_parse(NULL, &t));
}

/* float8: the 256 codes of each format against the bit-field definition
 * (OCP 8-bit floats, PTX ISA §5.2.5), decode-then-encode round trips, and
 * encoding checked against a brute-force nearest search over the decoded
 * codes: round to nearest, ties to the even code, saturation to the largest
 * finite (cvt.rn.satfinite), NaN -> 0x7f. */
static double fp8_by_fields(int b, bool e4) {
  int ebits = e4 ? 4 : 5, mbits = 7 - ebits, bias = e4 ? 7 : 15;
  int e = (b >> mbits) & ((1 << ebits) - 1), m = b & ((1 << mbits) - 1);
  double sign = (b & 0x80) ? -1.0 : 1.0;
  if (e4 && e == 15 && m == 7) return NAN;
  if (!e4 && e == 31) return m ? NAN : sign * INFINITY;
  double frac = (double)m / (1 << mbits);
  return sign * (e == 0 ? frac * pow(2.0, 1 - bias) : (1 + frac) * pow(2.0, e - bias));
}

static uint8_t fp8_nearest(double x, tl_dtype t, bool e4) {
  double maxf = e4 ? 448.0 : 57344.0;
  if (isnan(x)) return 0x7f;
  if (x > maxf) x = maxf;
  if (x < -maxf) x = -maxf;
  int best = -1;
  double bd = INFINITY;
  for (int b = 0; b < 256; b++) {
    double v = fp8_by_fields(b, e4);
    if (!isfinite(v) || (signbit(v) != signbit(x))) continue;
    double dd = fabs(v - x);
    if (dd < bd || (dd == bd && (b & 1) == 0)) bd = dd, best = b;
  }
  (void)t;
  return (uint8_t)best;
}

Test(ir, float8_codes) {
  tl_dtype t;
  cr_assert(tl_dtype_parse("float8_e4m3", &t));
  cr_assert_eq(t.code, TL_TYPE_FLOAT8_E4M3);
  cr_assert_eq(tl_dtype_bytes(t), 1);
  cr_assert(tl_dtype_parse("float8_e4m3fn", &t));
  cr_assert_str_eq(tl_dtype_name(t), "float8_e4m3");
  cr_assert(tl_dtype_parse("float8_e5m2x4", &t));
  cr_assert_str_eq(tl_dtype_name(t), "float8_e5m2x4");
  cr_assert(tl_dtype_is_float(t) && tl_dtype_is_fp8(t));
  for (int f = 0; f < 2; f++) {
    bool e4 = f == 0;
    tl_dtype d = TL_DT(e4 ? TL_TYPE_FLOAT8_E4M3 : TL_TYPE_FLOAT8_E5M2, 8);
    double prev = -INFINITY;
    for (int b = 0; b < 256; b++) {
      double want = fp8_by_fields(b, e4), got = tl_fp8_decode((uint8_t)b, d);
      if (isnan(want)) {
        cr_assert(isnan(got), "%s code 0x%02x: %g, want NaN", tl_dtype_name(d), b, got);
        continue;
      }
      cr_assert(got == want && signbit(got) == signbit(want), "%s code 0x%02x: %.17g, want %.17g", tl_dtype_name(d), b,
                got, want);
      if (isfinite(got)) cr_assert_eq(tl_fp8_encode(got, d), b, "%s: 0x%02x does not round-trip", tl_dtype_name(d), b);
      /* every midpoint to the next positive code, and just off it */
      if (b < 0x80 && isfinite(got) && b + 1 < 0x80 && isfinite(fp8_by_fields(b + 1, e4))) {
        double nx = fp8_by_fields(b + 1, e4), mid = (got + nx) / 2;
        cr_assert(got > prev);
        prev = got;
        double probes[6] = {
            mid, -mid, nextafter(mid, 0), nextafter(mid, INFINITY), got + (nx - got) / 4, -(got + 3 * (nx - got) / 4)};
        for (int i = 0; i < 6; i++)
          cr_assert_eq(tl_fp8_encode(probes[i], d), fp8_nearest(probes[i], d, e4), "%s: encode(%.17g) = 0x%02x",
                       tl_dtype_name(d), probes[i], tl_fp8_encode(probes[i], d));
      }
    }
  }
  tl_dtype e4 = TL_DT(TL_TYPE_FLOAT8_E4M3, 8), e5 = TL_DT(TL_TYPE_FLOAT8_E5M2, 8);
  /* ties to even, saturation, NaN, signed zero */
  cr_assert_eq(tl_fp8_encode(0x1p-10, e4), 0x00);     /* half the smallest subnormal: tie to 0 */
  cr_assert_eq(tl_fp8_encode(3 * 0x1p-10, e4), 0x02); /* 1.5 subnormal steps: tie to the even code 2 */
  cr_assert_eq(tl_fp8_encode(1.0625, e4), 0x38);      /* 1 + 1/16 between 1 (0x38) and 1.125: even */
  cr_assert_eq(tl_fp8_encode(1.1875, e4), 0x3a);      /* 1 + 3/16 between 1.125 and 1.25: even 0x3a */
  cr_assert_eq(tl_fp8_encode(464.0, e4), 0x7e);       /* above 448: saturates (no 480) */
  cr_assert_eq(tl_fp8_encode(1e30, e4), 0x7e);
  cr_assert_eq(tl_fp8_encode(-INFINITY, e4), 0xfe);
  cr_assert_eq(tl_fp8_encode(NAN, e4), 0x7f);
  cr_assert_eq(tl_fp8_encode(-0.0, e4), 0x80);
  cr_assert_eq(tl_fp8_encode(INFINITY, e5), 0x7b); /* satfinite: 57344 */
  cr_assert_eq(tl_fp8_encode(61440.0, e5), 0x7b);  /* the tie to the next binade saturates */
  cr_assert_eq(tl_fp8_encode(NAN, e5), 0x7f);
  cr_assert_eq(tl_fp8_encode(0x1p-17, e5), 0x00); /* half of 2^-16: tie to 0 */
  cr_assert_eq(tl_fp8_encode(1.125, e5), 0x3c);   /* between 1 (0x3c) and 1.25: even */
  cr_assert_eq(tl_fp8_encode(1.375, e5), 0x3e);   /* between 1.25 and 1.5: even 0x3e */
  cr_assert_eq(tl_round_to_dtype(0.3, e4), 0.3125);
  cr_assert_eq(tl_round_to_dtype(1000.0, e4), 448.0);
  cr_assert(isnan(tl_fp8_decode(0xff, e4)) && isinf(tl_fp8_decode(0xfc, e5)));
}

Test(ir, scopes_and_intrinsics) {
  cr_assert_str_eq(tl_scope_name(TL_SCOPE_SHARED_DYN), "shared.dyn");
  cr_assert_str_eq(tl_scope_name(TL_SCOPE_FRAGMENT), "local.fragment");
  static const char *names[] = {"exp",
                                "exp2",
                                "log",
                                "sqrt",
                                "rsqrt",
                                "tanh",
                                "sigmoid",
                                "erf",
                                "abs",
                                "floor",
                                "pow",
                                "fma",
                                "min",
                                "max",
                                "ceildiv",
                                "if_then_else",
                                "clamp",
                                "infinity",
                                "max_value",
                                "isnan",
                                "truncdiv",
                                "floormod",
                                "sync_threads",
                                "__exp2",
                                "shfl_xor",
                                "shfl_sync",
                                "get_thread_binding",
                                "get_warp_idx",
                                NULL};
  for (int i = 0; names[i]; i++) {
    int k = tl_intrinsic_lookup(names[i]);
    cr_assert(k >= 0, "%s", names[i]);
    cr_assert_str_eq(tl_intrinsics[k].name, names[i]);
  }
  cr_assert_eq(tl_intrinsic_lookup("nosuch"), -1);
  int st = tl_intrinsic_lookup("sync_threads");
  cr_assert_eq(tl_intrinsics[st].min_args, 0);
  cr_assert_eq(tl_intrinsics[st].max_args, 0);
}

/* lib/IR/intrinsics.def is the one table: every id has an entry whose name
 * resolves back to it, arities are ordered, and the effect bits are set
 * where the hardware needs them. */
Test(ir, intrinsic_table_by_id) {
  cr_assert_eq(tl_num_intrinsics, TL_INTRIN_COUNT);
  for (int i = 0; i < TL_INTRIN_COUNT; i++) {
    cr_assert(tl_intrinsics[i].name && tl_intrinsics[i].name[0], "id %d has no entry", i);
    cr_assert_eq(tl_intrinsic_lookup(tl_intrinsics[i].name), i, "%s", tl_intrinsics[i].name);
    cr_assert(tl_intrinsics[i].min_args <= tl_intrinsics[i].max_args, "%s", tl_intrinsics[i].name);
    cr_assert_str_eq(tl_intrinsic_name(i), tl_intrinsics[i].name);
  }
  cr_assert_str_eq(tl_intrinsic_name(-1), "?");
  cr_assert_str_eq(tl_intrinsic_name(TL_INTRIN_COUNT), "?");
  cr_assert_eq(tl_intrinsic_lookup("exp"), TL_INTRIN_EXP);
  cr_assert_eq(tl_intrinsic_lookup("__exp"), TL_INTRIN_FAST_EXP);
  cr_assert_eq(tl_intrinsic_lookup("ptx_mma"), TL_INTRIN_PTX_MMA);
  cr_assert(tl_intrinsics[TL_INTRIN_POW].unify);
  cr_assert(!tl_intrinsics[TL_INTRIN_IF_THEN_ELSE].unify);
  cr_assert_eq(tl_intrinsics[TL_INTRIN_EXP].effects, TL_EFF_NONE);
  cr_assert_eq(tl_intrinsics[TL_INTRIN_SHFL_XOR].effects, TL_EFF_CONVERGENT | TL_EFF_SIMT_LEVEL);
  cr_assert_eq(tl_intrinsics[TL_INTRIN_SYNC_THREADS].effects, TL_EFF_CONVERGENT | TL_EFF_SIDE_EFFECTS);
  cr_assert_eq(tl_intrinsics[TL_INTRIN_PTX_CP_ASYNC].effects, TL_EFF_SIDE_EFFECTS | TL_EFF_SIMT_LEVEL);
  cr_assert_eq(tl_intrinsics[TL_INTRIN_PTX_ATOMIC_ADD].effects & TL_EFF_SIMT_LEVEL,
               0); /* the atomic pass emits it on tile IR */
  cr_assert_eq(tl_intrinsics[TL_INTRIN_GET_THREAD_BINDING].effects & TL_EFF_SIMT_LEVEL, 0);
  cr_assert_eq(tl_intrinsics[TL_INTRIN_PTX_ATOMIC_ADD].ret, TL_RET_ARG2);
}

/* --------------------------------------------------------------- folding */

/* The comparison model shared by the reference evaluator and the SIMT
 * executor: ordered float comparisons (only != holds with a NaN), signed and
 * unsigned integer order. */
Test(ir, compare_models) {
  cr_assert(tl_float_compare(TL_OP_LT, -1.5, 2.0));
  cr_assert(!tl_float_compare(TL_OP_GT, -1.5, 2.0));
  cr_assert(tl_float_compare(TL_OP_EQ, 0.0, -0.0));
  cr_assert(tl_float_compare(TL_OP_LE, 3.0, 3.0) && tl_float_compare(TL_OP_GE, 3.0, 3.0));
  cr_assert(!tl_float_compare(TL_OP_NE, 3.0, 3.0));
  const tl_binop ops[] = {TL_OP_EQ, TL_OP_LT, TL_OP_LE, TL_OP_GT, TL_OP_GE};
  for (int i = 0; i < 5; i++) {
    cr_assert(!tl_float_compare(ops[i], NAN, 1.0), "op %d with NaN", i);
    cr_assert(!tl_float_compare(ops[i], 1.0, NAN), "op %d with NaN", i);
  }
  cr_assert(tl_float_compare(TL_OP_NE, NAN, NAN));
  cr_assert(tl_int_compare(TL_OP_LT, -1, 1, false));
  cr_assert(!tl_int_compare(TL_OP_LT, -1, 1, true)); /* 0xffff...ffff > 1 unsigned */
  cr_assert(tl_int_compare(TL_OP_GE, INT64_MIN, INT64_MAX, true));
  cr_assert(tl_int_compare(TL_OP_NE, 5, 6, false) && !tl_int_compare(TL_OP_EQ, 5, 6, true));
  cr_assert(tl_order_holds(TL_OP_LE, 0) && tl_order_holds(TL_OP_LE, -1) && !tl_order_holds(TL_OP_LE, 1));
}

Test(ir, fold_identities) {
  tl_expr *x = V("x", TL_INT32);
  cr_assert_eq(B(TL_OP_ADD, x, I(0)), x);
  cr_assert_eq(B(TL_OP_ADD, I(0), x), x);
  cr_assert_eq(B(TL_OP_SUB, x, I(0)), x);
  cr_assert_eq(B(TL_OP_MUL, x, I(1)), x);
  cr_assert_eq(B(TL_OP_MUL, I(1), x), x);
  cr_assert_eq(B(TL_OP_FLOORDIV, x, I(1)), x);
  int64_t v = -1;
  cr_assert(tl_expr_is_const_int(B(TL_OP_MUL, x, I(0)), &v) && v == 0);
  cr_assert(tl_expr_is_const_int(B(TL_OP_FLOORMOD, x, I(1)), &v) && v == 0);
  /* x * 0 is not folded for floats (NaN * 0 is NaN) */
  tl_expr *f = V("f", TL_FLOAT32);
  cr_assert_eq(B(TL_OP_MUL, f, F(0.0))->kind, TL_EXPR_BINARY);
  cr_assert_eq(B(TL_OP_MUL, f, F(1.0)), f);
}

Test(ir, fold_constants) {
  tl_expr *e = B(TL_OP_MUL, I(3), I(4));
  cr_assert_eq(e->kind, TL_EXPR_INT);
  cr_assert_eq(e->u.ival, 12);
  cr_assert(tl_dtype_eq(e->dtype, TL_INT32));
  /* int32 wraps as on the GPU */
  e = B(TL_OP_ADD, I(2147483647), I(1));
  cr_assert_eq(e->kind, TL_EXPR_INT);
  cr_assert_eq(e->u.ival, -2147483648LL);
  e = B(TL_OP_MUL, I(65536), I(65536));
  cr_assert_eq(e->u.ival, 0);
  /* int64 overflow keeps the node */
  e = B(TL_OP_ADD, tl_ir_int(M, L, TL_INT64, INT64_MAX), tl_ir_int(M, L, TL_INT64, 1));
  cr_assert_eq(e->kind, TL_EXPR_BINARY);
  /* division by zero is not folded */
  tl_expr *x = V("x", TL_INT32);
  cr_assert_eq(B(TL_OP_FLOORDIV, x, I(0))->kind, TL_EXPR_BINARY);
  cr_assert_eq(B(TL_OP_FLOORDIV, I(7), I(0))->kind, TL_EXPR_BINARY);
  cr_assert_eq(B(TL_OP_FLOORMOD, I(7), I(0))->kind, TL_EXPR_BINARY);
  /* floor semantics */
  cr_assert_eq(B(TL_OP_FLOORDIV, I(-7), I(2))->u.ival, -4);
  cr_assert_eq(B(TL_OP_FLOORMOD, I(-7), I(2))->u.ival, 1);
  cr_assert_eq(B(TL_OP_FLOORMOD, I(7), I(-2))->u.ival, -1);
  cr_assert_eq(B(TL_OP_DIV, I(-7), I(2))->u.ival, -3);
  cr_assert_eq(B(TL_OP_POW, I(2), I(10))->u.ival, 1024);
  cr_assert_eq(B(TL_OP_SHL, I(1), I(40))->kind, TL_EXPR_BINARY); /* shift >= width */
  cr_assert_eq(B(TL_OP_SHR, I(-8), I(1))->u.ival, -4);
  /* unsigned wraps */
  tl_dtype u8 = TL_DT(TL_TYPE_UINT, 8);
  e = B(TL_OP_SUB, tl_ir_int(M, L, u8, 0), tl_ir_int(M, L, u8, 1));
  cr_assert_eq(e->u.ival, 255);
  /* comparisons */
  e = B(TL_OP_LT, I(3), I(4));
  cr_assert_eq(e->kind, TL_EXPR_INT);
  cr_assert(tl_dtype_eq(e->dtype, TL_BOOL));
  cr_assert_eq(e->u.ival, 1);
  e = B(TL_OP_LT, x, I(4));
  cr_assert(tl_dtype_eq(e->dtype, TL_BOOL));
  cr_assert_eq(B(TL_OP_GE, F(1.0), F(2.0))->u.ival, 0);
  /* floats in double, rounded to the dtype */
  e = B(TL_OP_ADD, F(0.1), F(0.2));
  cr_assert_eq(e->kind, TL_EXPR_FLOAT);
  cr_assert_eq(e->u.fval, (double)(0.1f + 0.2f));
  /* unary, select */
  cr_assert_eq(tl_ir_unary(M, L, TL_OP_NEG, I(5))->u.ival, -5);
  cr_assert_eq(tl_ir_unary(M, L, TL_OP_NEG, F(2.5))->u.fval, -2.5);
  e = tl_ir_unary(M, L, TL_OP_NOT, tl_ir_int(M, L, TL_BOOL, 1));
  cr_assert_eq(e->kind, TL_EXPR_INT);
  cr_assert_eq(e->u.ival, 0);
  tl_expr *y = V("y", TL_INT32);
  cr_assert_eq(tl_ir_select(M, L, tl_ir_int(M, L, TL_BOOL, 1), x, y), x);
  cr_assert_eq(tl_ir_select(M, L, B(TL_OP_GT, I(1), I(2)), x, y), y);
  /* no reassociation: (i + 1) + 128 stays */
  tl_expr *i = V("i", TL_INT32);
  e = B(TL_OP_ADD, B(TL_OP_ADD, i, I(1)), I(128));
  cr_assert_eq(e->kind, TL_EXPR_BINARY);
  cr_assert_eq(e->u.bin.a->kind, TL_EXPR_BINARY);
  cr_assert_str_eq(P(e), "i + 1 + 128");
}

Test(ir, fold_calls) {
  tl_expr *args[3] = {I(1024), I(128)};
  tl_expr *e = tl_ir_call(M, L, tl_intrinsic_lookup("ceildiv"), 2, args);
  cr_assert_eq(e->kind, TL_EXPR_INT);
  cr_assert_eq(e->u.ival, 8);
  args[0] = I(1000);
  cr_assert_eq(tl_ir_call(M, L, tl_intrinsic_lookup("ceildiv"), 2, args)->u.ival, 8);
  args[0] = I(3);
  args[1] = I(7);
  cr_assert_eq(tl_ir_call(M, L, tl_intrinsic_lookup("max"), 2, args)->u.ival, 7);
  cr_assert_eq(tl_ir_call(M, L, tl_intrinsic_lookup("min"), 2, args)->u.ival, 3);
  /* min/max of non-constants print as T.min / T.max */
  args[0] = V("a", TL_INT32);
  e = tl_ir_call(M, L, tl_intrinsic_lookup("max"), 2, args);
  cr_assert_str_eq(P(e), "T.max(a, 7)");
  /* T.infinity("float16") is a constant */
  args[0] = tl_ir_string(M, L, "float16");
  e = tl_ir_call(M, L, tl_intrinsic_lookup("infinity"), 1, args);
  cr_assert_eq(e->kind, TL_EXPR_FLOAT);
  cr_assert(isinf(e->u.fval));
  cr_assert(tl_dtype_eq(e->dtype, TL_FLOAT16));
  cr_assert_str_eq(P(e), "T.infinity(\"float16\")");
  e = tl_ir_call(M, L, tl_intrinsic_lookup("max_value"), 1, args);
  cr_assert_eq(e->u.fval, 65504.0);
  args[0] = tl_ir_string(M, L, "int32");
  e = tl_ir_call(M, L, tl_intrinsic_lookup("min_value"), 1, args);
  cr_assert_eq(e->u.ival, INT32_MIN);
  /* math of an int promotes to float32 */
  args[0] = V("n", TL_INT32);
  e = tl_ir_call(M, L, tl_intrinsic_lookup("exp2"), 1, args);
  cr_assert(tl_dtype_eq(e->dtype, TL_FLOAT32));
  cr_assert_str_eq(P(e), "T.exp2(T.Cast(\"float32\", n))");
  /* if_then_else is a select */
  args[0] = B(TL_OP_LT, V("i", TL_INT32), I(4));
  args[1] = F(1.0);
  args[2] = F(0.0);
  e = tl_ir_call(M, L, tl_intrinsic_lookup("if_then_else"), 3, args);
  cr_assert_eq(e->kind, TL_EXPR_SELECT);
  cr_assert_str_eq(P(e), "T.if_then_else(i < 4, 1.0, 0.0)");
  e = tl_ir_call(M, L, tl_intrinsic_lookup("sync_threads"), 0, NULL);
  cr_assert_eq(e->dtype.code, TL_TYPE_VOID);
  cr_assert_str_eq(P(e), "T.sync_threads()");
}

Test(ir, type_rules) {
  tl_expr *h = V("h", TL_FLOAT16);
  /* a float32 literal beside a float16 expression becomes a float16 literal */
  tl_expr *e = B(TL_OP_MUL, h, F(0.5));
  cr_assert(tl_dtype_eq(e->dtype, TL_FLOAT16));
  cr_assert_eq(e->u.bin.b->kind, TL_EXPR_FLOAT);
  cr_assert(tl_dtype_eq(e->u.bin.b->dtype, TL_FLOAT16));
  cr_assert_str_eq(P(e), "h * T.float16(0.5)");
  /* an int literal with a float expression becomes a float literal */
  e = B(TL_OP_ADD, h, I(3));
  cr_assert_str_eq(P(e), "h + T.float16(3.0)");
  e = B(TL_OP_ADD, I(2), V("f", TL_FLOAT32));
  cr_assert_str_eq(P(e), "2.0 + f");
  /* int expression with float: the int is cast */
  tl_expr *i = V("i", TL_INT32);
  e = B(TL_OP_MUL, i, F(0.5));
  cr_assert(tl_dtype_eq(e->dtype, TL_FLOAT32));
  cr_assert_str_eq(P(e), "T.Cast(\"float32\", i) * 0.5");
  /* int literal takes the int64 var's dtype; two ints widen */
  tl_expr *l = V("l", TL_INT64);
  e = B(TL_OP_ADD, l, I(1));
  cr_assert(tl_dtype_eq(e->dtype, TL_INT64));
  cr_assert_str_eq(P(e), "l + T.int64(1)");
  e = B(TL_OP_ADD, i, l);
  cr_assert(tl_dtype_eq(e->dtype, TL_INT64));
  cr_assert_str_eq(P(e), "T.Cast(\"int64\", i) + l");
  /* logical operators take bools: ints compare != 0 */
  e = B(TL_OP_AND, i, B(TL_OP_LT, i, I(3)));
  cr_assert(tl_dtype_eq(e->dtype, TL_BOOL));
  cr_assert_str_eq(P(e), "i != 0 and i < 3");
  e = B(TL_OP_AND, tl_ir_int(M, L, TL_BOOL, 1), B(TL_OP_LT, i, I(3)));
  cr_assert_str_eq(P(e), "i < 3");
}

Test(ir, casts) {
  tl_expr *e = tl_ir_cast(M, L, TL_INT32, F(1.5));
  cr_assert_eq(e->kind, TL_EXPR_INT);
  cr_assert_eq(e->u.ival, 1);
  cr_assert_eq(tl_ir_cast(M, L, TL_INT32, F(-1.5))->u.ival, -1);
  /* out of range: kept as a cast */
  cr_assert_eq(tl_ir_cast(M, L, TL_INT32, F(1e10))->kind, TL_EXPR_CAST);
  /* round to nearest even, overflow to inf */
  tl_expr *big = tl_ir_float(M, L, TL_DT(TL_TYPE_FLOAT, 64), 65520.0);
  e = tl_ir_cast(M, L, TL_FLOAT16, big);
  cr_assert_eq(e->kind, TL_EXPR_FLOAT);
  cr_assert(isinf(e->u.fval) && e->u.fval > 0);
  cr_assert_eq(tl_round_to_dtype(65519.0, TL_FLOAT16), 65504.0);
  tl_dtype f64 = TL_DT(TL_TYPE_FLOAT, 64);
  double half_ulp = 1.0 + ldexp(1.0, -11), tiny = ldexp(1.0, -30);
  cr_assert_eq(tl_ir_cast(M, L, TL_FLOAT16, tl_ir_float(M, L, f64, half_ulp))->u.fval, 1.0);
  cr_assert_eq(tl_ir_cast(M, L, TL_FLOAT16, tl_ir_float(M, L, f64, half_ulp + tiny))->u.fval, 1.0009765625);
  cr_assert_eq(tl_ir_cast(M, L, TL_FLOAT16, tl_ir_float(M, L, f64, 1.0009765625 + tiny))->u.fval, 1.0009765625);
  cr_assert_eq(tl_ir_cast(M, L, TL_FLOAT16, tl_ir_float(M, L, f64, 1.0009765625 * 3 / 2 + ldexp(1.0, -12)))->u.fval,
               tl_round_to_dtype(1.0009765625 * 3 / 2 + ldexp(1.0, -12), TL_FLOAT16));
  /* subnormal f16 and bf16 */
  cr_assert_eq(tl_round_to_dtype(ldexp(1.0, -24), TL_FLOAT16), ldexp(1.0, -24));
  cr_assert_eq(tl_round_to_dtype(ldexp(1.0, -26), TL_FLOAT16), 0.0);
  cr_assert_eq(tl_round_to_dtype(1.00390625, TL_DT(TL_TYPE_BFLOAT, 16)), 1.0);
  cr_assert_eq(tl_round_to_dtype(1.01171875, TL_DT(TL_TYPE_BFLOAT, 16)), 1.015625);
  cr_assert_eq(tl_round_to_dtype(0.1, TL_FLOAT32), (double)0.1f);
  /* same dtype: the operand itself; int constants re-typed */
  tl_expr *x = V("x", TL_INT32);
  cr_assert_eq(tl_ir_cast(M, L, TL_INT32, x), x);
  e = tl_ir_cast(M, L, TL_DT(TL_TYPE_INT, 8), I(200));
  cr_assert_eq(e->u.ival, -56);
  e = tl_ir_cast(M, L, TL_FLOAT16, I(3));
  cr_assert_str_eq(P(e), "T.float16(3.0)");
}

/* --------------------------------------------------------------- printer */

Test(ir, print_precedence) {
  tl_expr *a = V("a", TL_INT32), *b = V("b", TL_INT32), *c = V("c", TL_INT32);
  cr_assert_str_eq(P(B(TL_OP_SUB, a, B(TL_OP_SUB, b, c))), "a - (b - c)");
  cr_assert_str_eq(P(B(TL_OP_SUB, B(TL_OP_SUB, a, b), c)), "a - b - c");
  cr_assert_str_eq(P(B(TL_OP_MUL, B(TL_OP_ADD, a, b), c)), "(a + b) * c");
  cr_assert_str_eq(P(B(TL_OP_ADD, a, B(TL_OP_MUL, b, c))), "a + b * c");
  cr_assert_str_eq(P(B(TL_OP_FLOORDIV, a, B(TL_OP_FLOORMOD, b, c))), "a // (b % c)");
  cr_assert_str_eq(P(B(TL_OP_POW, a, B(TL_OP_POW, b, c))), "a ** b ** c");
  cr_assert_str_eq(P(B(TL_OP_POW, B(TL_OP_POW, a, b), c)), "(a ** b) ** c");
  cr_assert_str_eq(P(B(TL_OP_POW, I(-1), a)), "(-1) ** a");
  cr_assert_str_eq(P(B(TL_OP_POW, a, I(-1))), "a ** -1");
  cr_assert_str_eq(P(B(TL_OP_MUL, a, I(-1))), "a * -1");
  cr_assert_str_eq(P(tl_ir_unary(M, L, TL_OP_NEG, B(TL_OP_ADD, a, b))), "-(a + b)");
  cr_assert_str_eq(P(tl_ir_unary(M, L, TL_OP_NEG, B(TL_OP_POW, a, b))), "-a ** b");
  cr_assert_str_eq(P(B(TL_OP_POW, tl_ir_unary(M, L, TL_OP_NEG, a), b)), "(-a) ** b");
  cr_assert_str_eq(P(B(TL_OP_EQ, B(TL_OP_LT, a, b), tl_ir_int(M, L, TL_BOOL, 1))), "(a < b) == True");
  tl_expr *p = B(TL_OP_LT, a, b), *q = B(TL_OP_LT, b, c);
  cr_assert_str_eq(P(tl_ir_unary(M, L, TL_OP_NOT, B(TL_OP_AND, p, q))), "not (a < b and b < c)");
  cr_assert_str_eq(P(B(TL_OP_OR, B(TL_OP_AND, p, q), p)), "a < b and b < c or a < b");
  cr_assert_str_eq(P(B(TL_OP_AND, B(TL_OP_OR, p, q), p)), "(a < b or b < c) and a < b");
  cr_assert_str_eq(P(B(TL_OP_BITAND, B(TL_OP_SHL, a, I(2)), I(7))), "a << 2 & 7");
  cr_assert_str_eq(P(B(TL_OP_SHL, B(TL_OP_BITAND, a, I(7)), I(2))), "(a & 7) << 2");
  cr_assert_str_eq(P(tl_ir_cast(M, L, TL_FLOAT16, B(TL_OP_ADD, a, b))), "T.Cast(\"float16\", a + b)");
}

Test(ir, print_literals) {
  cr_assert_str_eq(P(F(0.1)), "0.1");
  cr_assert_str_eq(P(F(1e-10)), "1e-10");
  cr_assert_str_eq(P(F(1.0)), "1.0");
  cr_assert_str_eq(P(F(-2.0)), "-2.0");
  cr_assert_str_eq(P(F(1e20)), "1e+20");
  cr_assert_str_eq(P(F(123456.0)), "123456.0");
  cr_assert_str_eq(P(F(0.001)), "0.001");
  cr_assert_str_eq(P(F(1.0 / 3.0)), "0.33333334");
  cr_assert_str_eq(P(tl_ir_float(M, L, TL_DT(TL_TYPE_FLOAT, 64), 1.0 / 3.0)), "T.float64(0.3333333333333333)");
  cr_assert_str_eq(P(tl_ir_float(M, L, TL_FLOAT16, 3.0)), "T.float16(3.0)");
  cr_assert_str_eq(P(tl_ir_float(M, L, TL_FLOAT16, 0.1)), "T.float16(0.1)");
  cr_assert_str_eq(P(tl_ir_float(M, L, TL_DT(TL_TYPE_BFLOAT, 16), -0.5)), "T.bfloat16(-0.5)");
  cr_assert_str_eq(P(F(INFINITY)), "T.infinity(\"float32\")");
  cr_assert_str_eq(P(tl_ir_float(M, L, TL_FLOAT16, -INFINITY)), "-T.infinity(\"float16\")");
  cr_assert_str_eq(P(F(NAN)), "T.float32(\"nan\")");
  cr_assert_str_eq(P(F(-0.0)), "-0.0");
  cr_assert_str_eq(P(I(-1)), "-1");
  cr_assert_str_eq(P(tl_ir_int(M, L, TL_INT64, 5)), "T.int64(5)");
  cr_assert_str_eq(P(tl_ir_int(M, L, TL_DT(TL_TYPE_UINT, 8), 3)), "T.uint8(3)");
  cr_assert_str_eq(P(tl_ir_int(M, L, TL_DT(TL_TYPE_UINT, 64), -1)), "T.uint64(18446744073709551615)");
  cr_assert_str_eq(P(tl_ir_int(M, L, TL_BOOL, 1)), "True");
  cr_assert_str_eq(P(tl_ir_string(M, L, "a\"b\\c")), "\"a\\\"b\\\\c\"");
  /* a negative float literal as the base of ** */
  cr_assert_str_eq(P(B(TL_OP_POW, F(-2.0), V("f", TL_FLOAT32))), "(-2.0) ** f");
}

/* Builds examples/gemm.py's canonical module, with the given names for the
 * block and loop variables. */
static tl_module *build_gemm(const char *bx_name, const char *by_name, const char *ko_name, int stages) {
  tl_module *m = tl_module_new();
#define MI(v) tl_ir_int(m, L, TL_INT32, (v))
  tl_expr *sh[2] = {MI(1024), MI(1024)};
  tl_buffer *A = tl_ir_new_buffer(m, L, "A", TL_FLOAT16, TL_SCOPE_GLOBAL, 2, sh);
  tl_buffer *Bb = tl_ir_new_buffer(m, L, "B", TL_FLOAT16, TL_SCOPE_GLOBAL, 2, sh);
  tl_buffer *C = tl_ir_new_buffer(m, L, "C", TL_FLOAT16, TL_SCOPE_GLOBAL, 2, sh);
  tl_primfunc *f = tl_arena_alloc(&m->arena, sizeof *f);
  f->name = "main";
  f->nparams = 3;
  f->params = tl_arena_alloc(&m->arena, 3 * sizeof(tl_param));
  tl_buffer *ps[3] = {A, Bb, C};
  for (int i = 0; i < 3; i++) {
    f->params[i].kind = TL_PARAM_TENSOR;
    f->params[i].buffer = ps[i];
  }
  f->has_out_idx = true;
  f->nout = 1;
  f->out_idx = tl_arena_alloc(&m->arena, sizeof(int));
  f->out_idx[0] = 2;

  tl_stmt *k = tl_ir_stmt(m, L, TL_STMT_KERNEL);
  k->u.kernel.ngrid = 2;
  k->u.kernel.grid[0] = MI(8);
  k->u.kernel.grid[1] = MI(8);
  k->u.kernel.threads = MI(128);
  tl_var *bx = tl_ir_new_var(m, L, bx_name, TL_INT32, TL_VAR_BLOCK);
  tl_var *by = tl_ir_new_var(m, L, by_name, TL_INT32, TL_VAR_BLOCK);
  k->u.kernel.block_vars[0] = bx;
  k->u.kernel.block_vars[1] = by;

  tl_expr *s1[2] = {MI(128), MI(32)}, *s2[2] = {MI(32), MI(128)}, *s3[2] = {MI(128), MI(128)};
  tl_buffer *As = tl_ir_new_buffer(m, L, "A_shared", TL_FLOAT16, TL_SCOPE_SHARED_DYN, 2, s1);
  tl_buffer *Bs = tl_ir_new_buffer(m, L, "B_shared", TL_FLOAT16, TL_SCOPE_SHARED_DYN, 2, s2);
  tl_buffer *Cl = tl_ir_new_buffer(m, L, "C_local", TL_FLOAT32, TL_SCOPE_FRAGMENT, 2, s3);
  tl_stmt *body[6];
  tl_buffer *allocs[3] = {As, Bs, Cl};
  for (int i = 0; i < 3; i++) {
    body[i] = tl_ir_stmt(m, L, TL_STMT_ALLOC);
    body[i]->u.alloc.buffer = allocs[i];
  }
  /* whole-buffer region helper */
#define WHOLE(op, buf)                                                                                                 \
  do {                                                                                                                 \
    (op).kind = TL_OPND_REGION;                                                                                        \
    (op).region.buffer = (buf);                                                                                        \
    (op).region.ndim = 2;                                                                                              \
    (op).region.min = tl_arena_alloc(&m->arena, 2 * sizeof(tl_expr *));                                                \
    (op).region.extent = tl_arena_alloc(&m->arena, 2 * sizeof(tl_expr *));                                             \
    for (int d_ = 0; d_ < 2; d_++) {                                                                                   \
      (op).region.min[d_] = MI(0);                                                                                     \
      (op).region.extent[d_] = (buf)->shape[d_];                                                                       \
    }                                                                                                                  \
  } while (0)
#define SLICE(op, buf, lo0, e0, lo1, e1)                                                                               \
  do {                                                                                                                 \
    WHOLE(op, buf);                                                                                                    \
    (op).region.min[0] = (lo0);                                                                                        \
    (op).region.extent[0] = (e0);                                                                                      \
    (op).region.min[1] = (lo1);                                                                                        \
    (op).region.extent[1] = (e1);                                                                                      \
  } while (0)
  tl_stmt *clr = tl_ir_stmt(m, L, TL_STMT_TILE);
  clr->u.tile.op = TL_TILE_CLEAR;
  clr->u.tile.nargs = 1;
  clr->u.tile.args = tl_arena_alloc(&m->arena, sizeof(tl_operand));
  WHOLE(clr->u.tile.args[0], Cl);
  body[3] = clr;

  tl_var *ko = tl_ir_new_var(m, L, ko_name, TL_INT32, TL_VAR_LOOP);
  tl_expr *kov = tl_ir_var(m, L, ko), *bxv = tl_ir_var(m, L, bx), *byv = tl_ir_var(m, L, by);
  tl_stmt *loop_body[3];
  tl_stmt *c1 = tl_ir_stmt(m, L, TL_STMT_TILE);
  c1->u.tile.op = TL_TILE_COPY;
  c1->u.tile.nargs = 2;
  c1->u.tile.args = tl_arena_alloc(&m->arena, 2 * sizeof(tl_operand));
  SLICE(c1->u.tile.args[0], A, tl_ir_binary(m, L, TL_OP_MUL, byv, MI(128)), MI(128),
        tl_ir_binary(m, L, TL_OP_MUL, kov, MI(32)), MI(32));
  WHOLE(c1->u.tile.args[1], As);
  tl_stmt *c2 = tl_ir_stmt(m, L, TL_STMT_TILE);
  c2->u.tile.op = TL_TILE_COPY;
  c2->u.tile.nargs = 2;
  c2->u.tile.args = tl_arena_alloc(&m->arena, 2 * sizeof(tl_operand));
  SLICE(c2->u.tile.args[0], Bb, tl_ir_binary(m, L, TL_OP_MUL, kov, MI(32)), MI(32),
        tl_ir_binary(m, L, TL_OP_MUL, bxv, MI(128)), MI(128));
  WHOLE(c2->u.tile.args[1], Bs);
  tl_stmt *g = tl_ir_stmt(m, L, TL_STMT_TILE);
  g->u.tile.op = TL_TILE_GEMM;
  g->u.tile.nargs = 3;
  g->u.tile.args = tl_arena_alloc(&m->arena, 3 * sizeof(tl_operand));
  WHOLE(g->u.tile.args[0], As);
  WHOLE(g->u.tile.args[1], Bs);
  WHOLE(g->u.tile.args[2], Cl);
  g->u.tile.attrs = tl_arena_alloc(&m->arena, (size_t)tl_tile_ops[TL_TILE_GEMM].nattrs * sizeof(tl_expr *));
  loop_body[0] = c1;
  loop_body[1] = c2;
  loop_body[2] = g;
  tl_stmt *loop = tl_ir_stmt(m, L, TL_STMT_FOR);
  loop->u.loop.kind = TL_LOOP_PIPELINED;
  loop->u.loop.nvars = 1;
  loop->u.loop.vars = tl_arena_alloc(&m->arena, sizeof(tl_var *));
  loop->u.loop.vars[0] = ko;
  loop->u.loop.mins = tl_arena_alloc(&m->arena, sizeof(tl_expr *));
  loop->u.loop.mins[0] = MI(0);
  loop->u.loop.extents = tl_arena_alloc(&m->arena, sizeof(tl_expr *));
  loop->u.loop.extents[0] = MI(32);
  loop->u.loop.num_stages = stages;
  loop->u.loop.body = tl_ir_seq(m, L, 3, loop_body);
  body[4] = loop;
  tl_stmt *c3 = tl_ir_stmt(m, L, TL_STMT_TILE);
  c3->u.tile.op = TL_TILE_COPY;
  c3->u.tile.nargs = 2;
  c3->u.tile.args = tl_arena_alloc(&m->arena, 2 * sizeof(tl_operand));
  WHOLE(c3->u.tile.args[0], Cl);
  SLICE(c3->u.tile.args[1], C, tl_ir_binary(m, L, TL_OP_MUL, byv, MI(128)), MI(128),
        tl_ir_binary(m, L, TL_OP_MUL, bxv, MI(128)), MI(128));
  body[5] = c3;
  k->u.kernel.body = tl_ir_seq(m, L, 6, body);
  f->body = k;
  m->nfuncs = 1;
  m->funcs = tl_arena_alloc(&m->arena, sizeof(tl_primfunc *));
  m->funcs[0] = f;
  cr_assert(!m->arena.oom);
  return m;
#undef MI
#undef WHOLE
#undef SLICE
}

static const char gemm_text[] =
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

Test(ir, print_gemm_module) {
  tl_module *m = build_gemm("bx", "by", "ko", 3);
  tl_context *ctx;
  cr_assert_eq(tl_context_create(&ctx), TL_OK);
  char *text = NULL;
  cr_assert_eq(tl_module_print(ctx, m, &text), TL_OK);
  cr_assert_str_eq(text, gemm_text);
  tl_free(text);
  /* non-default attributes print in table order */
  tl_stmt *loop = m->funcs[0]->body->u.kernel.body->u.seq.stmts[4];
  tl_stmt *g = loop->u.loop.body->u.seq.stmts[2];
  int tb = tl_tile_op_attr_index(TL_TILE_GEMM, "transpose_B");
  int pol = tl_tile_op_attr_index(TL_TILE_GEMM, "policy");
  cr_assert(tb >= 0 && pol >= 0);
  g->u.tile.attrs[tb] = tl_ir_int(m, L, TL_BOOL, 1);
  g->u.tile.attrs[pol] = tl_ir_int(m, L, TL_INT32, TL_POLICY_FULL_ROW);
  tl_strbuf sb = {0};
  tl_print_module(&sb, m);
  char *s = tl_strbuf_take(&sb);
  cr_assert(strstr(s,
                   "T.gemm(A_shared, B_shared, C_local, transpose_B=True, "
                   "policy=T.GemmWarpPolicy.FullRow)\n"),
            "%s", s);
  free(s);
  cr_assert_eq(tl_module_print(ctx, NULL, &text), TL_ERR_INVALID_ARGUMENT);
  tl_context_destroy(ctx);
  tl_module_destroy(m);
}

Test(ir, print_statements) {
  /* if / elif / else, serial loop with a start, stores, let, alloc_var */
  tl_module *m = M;
  tl_expr *sh[1] = {tl_ir_int(m, L, TL_INT32, 16)};
  tl_buffer *A = tl_ir_new_buffer(m, L, "A", TL_FLOAT32, TL_SCOPE_FRAGMENT, 1, sh);
  tl_var *i = tl_ir_new_var(m, L, "i", TL_INT32, TL_VAR_LOOP);
  tl_expr *iv = tl_ir_var(m, L, i);
  tl_stmt *st1 = tl_ir_stmt(m, L, TL_STMT_STORE);
  st1->u.store.buffer = A;
  st1->u.store.n = 1;
  st1->u.store.indices = &iv;
  st1->u.store.value = F(1.0);
  tl_stmt *st2 = tl_ir_stmt(m, L, TL_STMT_STORE);
  *st2 = *st1;
  st2->u.store.value = F(2.0);
  tl_stmt *st3 = tl_ir_stmt(m, L, TL_STMT_STORE);
  *st3 = *st1;
  st3->u.store.value = tl_ir_load(m, L, A, 1, &iv);
  tl_stmt *inner = tl_ir_stmt(m, L, TL_STMT_IF);
  inner->u.ifs.cond = B(TL_OP_LT, iv, I(8));
  inner->u.ifs.then_s = st2;
  inner->u.ifs.else_s = st3;
  tl_stmt *outer = tl_ir_stmt(m, L, TL_STMT_IF);
  outer->u.ifs.cond = B(TL_OP_EQ, iv, I(0));
  outer->u.ifs.then_s = st1;
  outer->u.ifs.else_s = inner;
  tl_stmt *loop = tl_ir_stmt(m, L, TL_STMT_FOR);
  loop->u.loop.kind = TL_LOOP_SERIAL;
  loop->u.loop.nvars = 1;
  loop->u.loop.vars = &i;
  tl_expr *lo = I(2), *ext = I(14);
  loop->u.loop.mins = &lo;
  loop->u.loop.extents = &ext;
  loop->u.loop.num_stages = -1;
  loop->u.loop.body = outer;
  tl_strbuf sb = {0};
  tl_stmt *seq[1] = {loop};
  tl_primfunc f = {.name = "main", .body = tl_ir_seq(m, L, 1, seq)};
  tl_primfunc *fp = &f;
  tl_module mm = *m;
  mm.nfuncs = 1;
  mm.funcs = &fp;
  tl_print_module(&sb, &mm);
  char *s = tl_strbuf_take(&sb);
  cr_assert_str_eq(s,
                   "import tilelang.language as T\n\n"
                   "@T.prim_func\n"
                   "def main():\n"
                   "    for i in T.serial(2, 16):\n"
                   "        if i == 0:\n"
                   "            A[i] = 1.0\n"
                   "        elif i < 8:\n"
                   "            A[i] = 2.0\n"
                   "        else:\n"
                   "            A[i] = A[i]\n");
  free(s);
}

/* -------------------------------------------------------------- equality */

Test(ir, module_equal_renamed) {
  tl_module *a = build_gemm("bx", "by", "ko", 3);
  tl_module *b = build_gemm("x0", "y0", "k", 3);
  tl_module *c = build_gemm("bx", "by", "ko", 2);
  cr_assert(tl_module_equal(a, a));
  cr_assert(tl_module_equal(a, b));
  cr_assert(!tl_module_equal(a, c));
  /* swapping block variables is a difference */
  tl_module *d = build_gemm("by", "bx", "ko", 3);
  cr_assert(tl_module_equal(a, d)); /* names swapped, bindings the same */
  tl_stmt *k = d->funcs[0]->body;
  tl_var *t = k->u.kernel.block_vars[0];
  k->u.kernel.block_vars[0] = k->u.kernel.block_vars[1];
  k->u.kernel.block_vars[1] = t;
  cr_assert(!tl_module_equal(a, d));
  /* a changed constant */
  tl_module *e = build_gemm("bx", "by", "ko", 3);
  e->funcs[0]->body->u.kernel.threads = tl_ir_int(e, L, TL_INT32, 256);
  cr_assert(!tl_module_equal(a, e));
  cr_assert(tl_module_equal(NULL, NULL));
  cr_assert(!tl_module_equal(a, NULL));
  tl_module_destroy(a);
  tl_module_destroy(b);
  tl_module_destroy(c);
  tl_module_destroy(d);
  tl_module_destroy(e);
}

Test(ir, expr_equal) {
  tl_expr *x = V("x", TL_INT32);
  cr_assert(tl_expr_equal(B(TL_OP_ADD, x, I(1)), B(TL_OP_ADD, x, I(1))));
  cr_assert(!tl_expr_equal(B(TL_OP_ADD, x, I(1)), B(TL_OP_ADD, x, I(2))));
  cr_assert(!tl_expr_equal(x, V("x", TL_INT32))); /* vars by pointer */
  cr_assert(tl_expr_equal(F(NAN), F(NAN)));
  cr_assert(!tl_expr_equal(F(0.0), F(-0.0)));
}

/* ------------------------------------------------------------ module API */

Test(ir, module_api_errors) {
  tl_context *ctx;
  cr_assert_eq(tl_context_create(&ctx), TL_OK);
  tl_module *m = (tl_module *)1;
  cr_assert_eq(tl_module_parse_file(ctx, "/nonexistent/dir/k.py", NULL, 0, &m), TL_ERR_IO);
  cr_assert_null(m);
  cr_assert_str_eq(tl_context_last_error(ctx), "cannot read '/nonexistent/dir/k.py': No such file or directory");
  cr_assert_eq(tl_module_parse_file(ctx, "/", NULL, 0, &m), TL_ERR_IO);
  cr_assert(strstr(tl_context_last_error(ctx), "Is a directory"));
  cr_assert_eq(tl_module_parse(ctx, NULL, 0, "x.py", NULL, 0, &m), TL_ERR_INVALID_ARGUMENT);
  cr_assert_eq(tl_module_parse(NULL, "", 0, "x.py", NULL, 0, &m), TL_ERR_INVALID_ARGUMENT);
  cr_assert_eq(tl_module_verify(ctx, NULL), TL_ERR_INVALID_ARGUMENT);
  tl_module_destroy(NULL);
  tl_context_destroy(ctx);
}

Test(ir, print_regions) {
  tl_module *m = M;
  tl_expr *sh[2] = {I(64), I(64)};
  tl_buffer *A = tl_ir_new_buffer(m, L, "A", TL_FLOAT32, TL_SCOPE_GLOBAL, 2, sh);
  tl_expr *i = V("i", TL_INT32);
  tl_expr *mins[2] = {i, I(32)}, *exts[2] = {I(1), I(16)};
  tl_operand op = {.kind = TL_OPND_REGION, .region = {.buffer = A, .ndim = 2, .min = mins, .extent = exts}};
  tl_operand val = {.kind = TL_OPND_EXPR, .expr = F(0.0)};
  tl_operand args[2] = {op, val};
  tl_stmt *s = tl_ir_stmt(m, L, TL_STMT_TILE);
  s->u.tile.op = TL_TILE_FILL;
  s->u.tile.nargs = 2;
  s->u.tile.args = args;
  tl_primfunc f = {.name = "main", .body = s};
  tl_primfunc *fp = &f;
  tl_module mm = *m;
  mm.nfuncs = 1;
  mm.funcs = &fp;
  tl_strbuf sb = {0};
  tl_print_module(&sb, &mm);
  char *t = tl_strbuf_take(&sb);
  cr_assert(strstr(t, "    T.fill(A[i, 32:32 + 16], 0.0)\n"), "%s", t);
  free(t);
  /* all extents 1: slices; lo 0: 0:ext */
  exts[1] = I(1);
  mins[1] = I(0);
  tl_print_module(&sb, &mm);
  t = tl_strbuf_take(&sb);
  cr_assert(strstr(t, "    T.fill(A[i:i + 1, 0:1], 0.0)\n"), "%s", t);
  free(t);
}

/* Every operator over edge values and dtypes: no crash, no UB (run under
 * the sanitizer build), folded ints stay within their dtype. */
Test(ir, fold_edge_values) {
  static const int64_t vals[] = {INT64_MIN, INT64_MIN + 1, INT32_MIN,     -65,      -64, -2, -1, 0, 1, 2, 7, 31, 32, 63,
                                 64,        INT32_MAX,     INT64_MAX - 1, INT64_MAX};
  static const double fvals[] = {-INFINITY, -1e300, -1.5, -0.0, 0.0, 0.5, 65520.0, 1e300, INFINITY, NAN};
  tl_dtype types[] = {TL_DT(TL_TYPE_INT, 8),   TL_INT32, TL_INT64, TL_DT(TL_TYPE_UINT, 8), TL_DT(TL_TYPE_UINT, 32),
                      TL_DT(TL_TYPE_UINT, 64), TL_BOOL};
  size_t nv = sizeof vals / sizeof vals[0], nf = sizeof fvals / sizeof fvals[0];
  for (int op = TL_OP_ADD; op <= TL_OP_SHR; op++) {
    for (size_t ti = 0; ti < sizeof types / sizeof types[0]; ti++)
      for (size_t i = 0; i < nv; i++)
        for (size_t j = 0; j < nv; j++) {
          tl_expr *e = B((tl_binop)op, tl_ir_int(M, L, types[ti], vals[i]), tl_ir_int(M, L, types[ti], vals[j]));
          cr_assert(e != NULL);
          if (e->kind == TL_EXPR_INT && tl_dtype_is_int(e->dtype) && e->dtype.bits < 64 && e->dtype.code == TL_TYPE_INT)
            cr_assert(e->u.ival >= -(INT64_C(1) << (e->dtype.bits - 1)) &&
                      e->u.ival < (INT64_C(1) << (e->dtype.bits - 1)));
        }
    for (size_t i = 0; i < nf; i++)
      for (size_t j = 0; j < nf; j++) {
        cr_assert(B((tl_binop)op, F(fvals[i]), F(fvals[j])) != NULL);
        cr_assert(B((tl_binop)op, tl_ir_float(M, L, TL_FLOAT16, fvals[i]), I((int64_t)j - 3)));
      }
  }
  for (size_t i = 0; i < nf; i++)
    for (size_t ti = 0; ti < sizeof types / sizeof types[0]; ti++) {
      cr_assert(tl_ir_cast(M, L, types[ti], F(fvals[i])) != NULL);
      cr_assert(tl_ir_cast(M, L, types[ti], tl_ir_float(M, L, TL_DT(TL_TYPE_FLOAT, 64), fvals[i])) != NULL);
    }
  for (size_t i = 0; i < nv; i++)
    for (int u = TL_OP_NEG; u <= TL_OP_BITNOT; u++) {
      cr_assert(tl_ir_unary(M, L, (tl_unop)u, tl_ir_int(M, L, TL_INT64, vals[i])) != NULL);
      tl_expr *args[2] = {tl_ir_int(M, L, TL_INT64, vals[i]), tl_ir_int(M, L, TL_INT64, vals[nv - 1 - i])};
      for (int k = 0; k < tl_num_intrinsics; k++)
        if (tl_intrinsics[k].min_args <= 2 && tl_intrinsics[k].max_args >= 2 &&
            tl_intrinsics[k].ret != TL_RET_DTYPE_ARG0)
          cr_assert(tl_ir_call(M, L, k, 2, args) != NULL);
    }
}

/* ------------------------------------------------ tl_module_clone */
#include <dirent.h>

#include "Lower/lower.h"
#include "tilelang/runtime.h"

static char *print_text(const tl_module *m) {
  tl_strbuf sb = {0};
  tl_print_module(&sb, m);
  return tl_strbuf_take(&sb);
}

/* The SIMT IR of m lowered for sm_80, or NULL when lowering fails. */
static char *lowered_text(tl_module *m) {
  tl_diag d;
  tl_diag_init(&d);
  tl_lower_options o = {.target = tl_target_lookup("sm_80"), .verify_each = true};
  bool ok = tl_lower_module(m, &o, &d);
  tl_diag_free(&d);
  return ok ? print_text(m) : NULL;
}

/* One file: the clone prints and compares equal to the original, lives on
 * when the original is gone, and lowers as a second front-end run does (or
 * fails as it does).  Returns false when the file does not parse. */
static bool clone_check(tl_context *ctx, const char *path) {
  tl_module *a = NULL, *b = NULL;
  if (tl_module_parse_file(ctx, path, NULL, 0, &a) != TL_OK) return false;
  cr_assert_eq(tl_module_parse_file(ctx, path, NULL, 0, &b), TL_OK, "%s", path);
  tl_module *c = tl_module_clone(a);
  cr_assert_not_null(c, "%s", path);
  cr_expect(tl_module_equal(a, c), "%s", path);
  cr_expect_str_eq(c->filename, a->filename);
  cr_expect_str_eq(c->source, a->source);
  cr_expect(c->filename != a->filename && (a->nfuncs == 0 || c->funcs[0] != a->funcs[0]));
  for (int f = 0; f < a->nfuncs; f++)
    for (int i = 0; i < a->funcs[f]->nparams; i++)
      if (a->funcs[f]->params[i].buffer) cr_expect(c->funcs[f]->params[i].buffer != a->funcs[f]->params[i].buffer);
  char *ta = print_text(a);
  tl_module_destroy(a);
  char *tc = print_text(c);
  cr_expect_str_eq(tc, ta, "%s", path);
  char *lb = lowered_text(b), *lc = lowered_text(c);
  cr_expect((lb == NULL) == (lc == NULL), "%s: the clone lowers %s", path,
            lc ? "where the original fails" : "with an error");
  if (lb && lc) cr_expect_str_eq(lc, lb, "%s: the clone lowers differently", path);
  free(ta);
  free(tc);
  free(lb);
  free(lc);
  tl_module_destroy(b);
  tl_module_destroy(c);
  return true;
}

/* Every example and every test kernel that parses with its defaults. */
Test(clone, copies_print_compare_and_lower_the_same) {
  static const char *const dirs[] = {"examples",       "test/GPU/kernels", "test/Lower",      "test/IR/elab",
                                     "test/IR/syntax", "test/IR/verify",   "test/unit/Inputs"};
  tl_context *ctx = NULL;
  cr_assert_eq(tl_context_create(&ctx), TL_OK);
  int n = 0;
  for (size_t k = 0; k < sizeof dirs / sizeof dirs[0]; k++) {
    DIR *dir = opendir(dirs[k]);
    cr_assert_not_null(dir, "%s", dirs[k]);
    struct dirent *de;
    while ((de = readdir(dir))) {
      size_t len = strlen(de->d_name);
      if (len < 4 || strcmp(de->d_name + len - 3, ".py")) continue;
      char path[512];
      snprintf(path, sizeof path, "%s/%s", dirs[k], de->d_name);
      n += clone_check(ctx, path);
    }
    closedir(dir);
  }
  tl_context_destroy(ctx);
  cr_expect_geq(n, 40);
  cr_expect_null(tl_module_clone(NULL));
}

/* Function annotations (tl_annot, what a wing keeps on a function): found by
 * their owner's key, added once, zeroed; the clone copies their bytes. */
Test(clone, function_annotations) {
  static const char key_a = 0, key_b = 0;
  tl_module *m = tl_module_new();
  cr_assert_not_null(m);
  tl_primfunc *f = tl_arena_alloc(&m->arena, sizeof *f);
  tl_primfunc **fs = tl_arena_alloc(&m->arena, sizeof *fs);
  cr_assert(f && fs);
  f->name = "k";
  fs[0] = f;
  m->funcs = fs;
  m->nfuncs = 1;
  cr_expect_null(tl_func_annot(f, &key_a));
  int64_t *a = tl_func_annot_add(m, f, &key_a, sizeof(int64_t));
  cr_assert_not_null(a);
  cr_expect_eq(*a, 0);
  *a = 128;
  cr_expect_eq(tl_func_annot_add(m, f, &key_a, sizeof(int64_t)), a, "an existing annotation is returned");
  bool *b = tl_func_annot_add(m, f, &key_b, sizeof(bool));
  cr_assert_not_null(b);
  *b = true;
  cr_expect_eq(tl_func_annot(f, &key_a), a);
  tl_module *c = tl_module_clone(m);
  cr_assert_not_null(c);
  const int64_t *ca = tl_func_annot(c->funcs[0], &key_a);
  const bool *cb = tl_func_annot(c->funcs[0], &key_b);
  cr_assert(ca && cb);
  cr_expect_eq(*ca, 128);
  cr_expect(*cb);
  cr_expect_neq((const void *)ca, (const void *)a, "the clone's own copy");
  tl_module_destroy(c);
  tl_module_destroy(m);
}
