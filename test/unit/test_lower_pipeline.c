/* Unit tests of the memory half of the GEMM lowering (issue 5): T.Pipelined
 * software pipelining (pipeline_loop.c), global <-> shared copies with
 * vectors and cp.async (lower_shared_copy.c), barrier placement (barrier.c),
 * shared-memory planning (smem_plan.c) and block rasterization
 * (rasterize.c).
 *  1. the pipelined tile IR of examples/gemm.py: staged shapes, prologue,
 *     wait/commit groups, the guarded issue, stage indices;
 *  2. num_stages 0 / 1: a plain loop, synchronous copies, two barriers;
 *  3. what the copies become: 16-byte cp.async for 16-byte aligned rows,
 *     8-byte for K = 764, and for the (503, 1017, 763) shape (f16 rows only
 *     2-byte aligned) scalar synchronous copies and no cp.async;
 *  4. numerics: examples/gemm.py lowered with num_stages 0..3 at sizes that
 *     are and are not multiples of the tile, run on the SIMT executor (its
 *     race checker on) against the tile-level reference evaluator and a
 *     float64 product; outputs poisoned (NaN) first;
 *  5. planted faults: the lowered pipelined GEMM without its barrier, or
 *     without its cp.async wait, is reported by the executor's checker;
 *  6. shared-memory planning: offsets, reuse of dead buffers with the
 *     barrier it needs (and the executor agrees), the target's limit;
 *  7. T.use_swizzle: the block remapping equals an independent C model of
 *     TileLang's rasterization2DRow / 2DColumn and is a bijection. */
#include <criterion/criterion.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "IR/tir.h"
#include "Interp/interp.h"
#include "Lower/lower.h"
#include "Lower/lower_internal.h"
#include "test_util.h"

/* ------------------------------------------------------------ helpers */
typedef enum { NONE, PIPELINE_ONLY, FULL } stage_t;

/* Parses src; runs nothing, the pipelining pass only, or the whole lowering. */
static tl_module *build(const char *src, const char *name, const tl_define *defs, size_t ndefs, stage_t how) {
  tl_module *m = tl_module_new();
  tl_diag d;
  tl_diag_init(&d);
  bool ok = tl_frontend_parse(m, &d, src, strlen(src), name, defs, ndefs);
  if (ok && how == PIPELINE_ONLY)
    ok = tl_lower_pipeline(m, m->funcs[0], tl_target_lookup("sm_80"), &d) && tl_verify_module(m, &d) == 0;
  if (ok && how == FULL) {
    tl_lower_options o = {.target = tl_target_lookup("sm_80"), .verify_each = true};
    ok = tl_lower_module(m, &o, &d);
  }
  cr_assert(ok, "%s: %s", name, d.out.data ? d.out.data : "");
  tl_diag_free(&d);
  return m;
}

static char *gemm_src;
static const char *gemm_text(void) {
  if (!gemm_src) {
    size_t len;
    gemm_src = tl_test_read_file("examples/gemm.py", &len);
  }
  return gemm_src;
}

/* examples/gemm.py with M, N, K, tiles, threads and stages bound. */
static tl_module *gemm(int M, int N, int K, int bm, int bn, int bk, int threads, int stages, stage_t how) {
  static char v[8][32];
  snprintf(v[0], 32, "%d", M), snprintf(v[1], 32, "%d", N), snprintf(v[2], 32, "%d", K);
  snprintf(v[3], 32, "%d", bm), snprintf(v[4], 32, "%d", bn), snprintf(v[5], 32, "%d", bk);
  snprintf(v[6], 32, "%d", threads), snprintf(v[7], 32, "%d", stages);
  tl_define defs[8] = {{"M", v[0]},       {"N", v[1]},       {"K", v[2]},       {"block_M", v[3]},
                       {"block_N", v[4]}, {"block_K", v[5]}, {"threads", v[6]}, {"num_stages", v[7]}};
  return build(gemm_text(), "gemm.py", defs, 8, how);
}

static char *print(const tl_module *m) {
  tl_strbuf sb = {0};
  tl_print_module(&sb, m);
  return tl_strbuf_take(&sb);
}

static int count(const char *hay, const char *needle) {
  int n = 0;
  for (const char *p = strstr(hay, needle); p; p = strstr(p + 1, needle)) n++;
  return n;
}

#define HAS(text, s) cr_assert(strstr(text, s), "missing `%s` in:\n%s", s, text)
#define HASNT(text, s) cr_assert(!strstr(text, s), "unexpected `%s` in:\n%s", s, text)

/* ====================================================== 1. the pipeline */
Test(pipeline, gemm_three_stages_structure) {
  tl_module *m = gemm(256, 256, 128, 128, 128, 32, 128, 3, PIPELINE_ONLY);
  char *t = print(m);
  HAS(t, "A_shared = T.alloc_shared((3, 128, 32), \"float16\")");
  HAS(t, "B_shared = T.alloc_shared((3, 32, 128), \"float16\")");
  /* prologue: stages 0 and 1, one group each */
  HAS(t, "T.async_copy(A[by * 128:by * 128 + 128, 0:32], A_shared[0, 0:128, 0:32])");
  HAS(t, "T.async_copy(B[32:32 + 32, bx * 128:bx * 128 + 128], B_shared[1, 0:32, 0:128])");
  cr_expect_eq(count(t, "T.ptx_commit_group()"), 3);
  /* the loop (its stage count kept for the later passes): wait for iteration ko's group, barrier, issue
   * ko + 2, commit */
  HAS(t,
      "for ko in T.serial(4, annotations={\"num_stages\": 3}):\n"
      "            T.ptx_wait_group(1)\n"
      "            T.sync_threads()\n"
      "            if ko + 2 < 4:\n");
  HAS(t, "A_shared[(ko + 2) % 3, 0:128, 0:32]");
  HAS(t, "T.gemm(A_shared[ko % 3, 0:128, 0:32], B_shared[ko % 3, 0:32, 0:128], C_local)");
  HASNT(t, "T.Pipelined");
  HASNT(t, "T.copy(A");
  free(t);
  tl_module_destroy(m);
}

Test(pipeline, two_stages_and_dynamic_trip_count) {
  /* examples/gemm_dynamic_m.py keeps K static; a dynamic trip count comes
   * from a loop over T.ceildiv of a dynamic dim. */
  const char *src =
      "import tilelang.language as T\n"
      "k = T.dynamic(\"k\")\n"
      "@T.prim_func\n"
      "def main(A: T.Tensor((64, k), \"float16\"), B: T.Tensor((k, 64), \"float16\"), C: T.Tensor((64, 64), "
      "\"float32\")):\n"
      "    with T.Kernel(1, 1, threads=128) as (bx, by):\n"
      "        A_s = T.alloc_shared((64, 32), \"float16\")\n"
      "        B_s = T.alloc_shared((32, 64), \"float16\")\n"
      "        C_l = T.alloc_fragment((64, 64), \"float32\")\n"
      "        T.clear(C_l)\n"
      "        for ko in T.Pipelined(T.ceildiv(k, 32), num_stages=2):\n"
      "            T.copy(A[0, ko * 32], A_s)\n"
      "            T.copy(B[ko * 32, 0], B_s)\n"
      "            T.gemm(A_s, B_s, C_l)\n"
      "        T.copy(C_l, C)\n";
  tl_module *m = build(src, "dyn.py", NULL, 0, PIPELINE_ONLY);
  char *t = print(m);
  HAS(t, "A_s = T.alloc_shared((2, 64, 32), \"float16\")");
  HAS(t, "if 0 < T.ceildiv(k, 32):"); /* the prologue is guarded when the trip count is unknown */
  HAS(t, "T.ptx_wait_group(0)");
  HAS(t, "if ko + 1 < T.ceildiv(k, 32):");
  HAS(t, "A_s[(ko + 1) % 2, 0:64, 0:32]");
  free(t);
  tl_module_destroy(m);
  /* fully lowered: rows of a dynamic K cannot be proven aligned -> no cp.async */
  m = build(src, "dyn.py", NULL, 0, FULL);
  t = print(m);
  HASNT(t, "T.ptx_cp_async(A_s");
  HAS(t, "T.ptx_cp_async(B_s"); /* B's rows are 64 elements: 16-byte vectors */
  free(t);
  tl_module_destroy(m);
}

/* ================================================ 2. plain loops (0, 1) */
Test(pipeline, stages_zero_and_one_are_plain_loops) {
  for (int s = 0; s <= 1; s++) {
    tl_module *m = gemm(256, 256, 128, 128, 128, 32, 128, s, PIPELINE_ONLY);
    char *t = print(m);
    HAS(t, "A_shared = T.alloc_shared((128, 32), \"float16\")");
    HAS(t, "for ko in T.serial(4):");
    HAS(t, "T.copy(A[by * 128:by * 128 + 128, ko * 32:ko * 32 + 32], A_shared)");
    HASNT(t, "async_copy");
    HASNT(t, "ptx_");
    free(t);
    tl_module_destroy(m);
    m = gemm(256, 256, 128, 128, 128, 32, 128, s, FULL);
    t = print(m);
    HASNT(t, "ptx_cp_async");
    HASNT(t, "ptx_wait_group");
    /* barrier before the gemm (RAW) and at the top of the next iteration (WAR) */
    cr_expect_eq(count(t, "T.sync_threads()"), 2, "%s", t);
    HAS(t, "for ko in T.serial(4):\n            T.sync_threads()\n");
    cr_expect_eq(m->funcs[0]->smem_bytes, 2 * 128 * 32 * 2);
    free(t);
    tl_module_destroy(m);
  }
}

/* ======================================================= 3. the copies */
Test(pipeline, copy_widths_follow_alignment) {
  /* 16-byte rows: 16-byte cp.async, unpredicated where in bounds */
  tl_module *m = gemm(512, 1024, 768, 128, 256, 32, 256, 2, FULL);
  char *t = print(m);
  HAS(t, "T.ptx_cp_async(A_shared");
  HAS(t, ", 16, True)");
  HASNT(t, "A_shared[T.Ramp"); /* no synchronous copy into shared memory */
  free(t);
  tl_module_destroy(m);
  /* K = 764: A's rows are 8-byte multiples: 8-byte cp.async */
  m = gemm(512, 1024, 764, 128, 256, 32, 256, 2, FULL);
  t = print(m);
  HAS(t, "T.ptx_cp_async(A_shared");
  HAS(t, ", 8, ");
  free(t);
  tl_module_destroy(m);
  /* (503, 1017, 763): rows only 2-byte aligned: scalar copies, zero fill, no cp.async */
  m = gemm(503, 1017, 763, 128, 256, 32, 256, 2, FULL);
  t = print(m);
  HASNT(t, "ptx_cp_async");
  HAS(t, "= T.float16(0.0)"); /* the zero of out-of-bounds elements */
  cr_expect_eq(count(t, "A_shared[T.Ramp"), 0);
  cr_expect_eq(count(t, "B_shared[T.Ramp"), 0);
  free(t);
  tl_module_destroy(m);
}

/* ========================================================= 4. numerics */
static uint64_t rng = 0x9E3779B97F4A7C15ull;
static double urand(void) {
  rng ^= rng << 13;
  rng ^= rng >> 7;
  rng ^= rng << 17;
  return (double)(rng >> 11) / 9007199254740992.0 * 2.0 - 1.0;
}
static uint16_t f16_bits(double v) { /* v exactly representable or rounded by tl_round_to_dtype */
  v = tl_round_to_dtype(v, TL_FLOAT16);
  if (isnan(v)) return 0x7E00;
  uint16_t s = signbit(v) ? 0x8000 : 0;
  v = fabs(v);
  if (v == 0) return s;
  int e;
  double f = frexp(v, &e); /* v = f * 2^e, f in [0.5, 1) */
  if (e - 1 < -14) return (uint16_t)(s | (uint16_t)llround(v * 16777216.0));
  return (uint16_t)(s | ((e - 1 + 15) << 10) | ((uint16_t)llround((f * 2 - 1) * 1024) & 1023));
}
static double f16_val(uint16_t h) {
  int e = (h >> 10) & 31, m = h & 1023;
  double v = e == 0 ? m * ldexp(1, -24) : e == 31 ? (m ? NAN : INFINITY) : (1024 + m) * ldexp(1, e - 25);
  return (h & 0x8000) ? -v : v;
}

static tl_interp_arg tensor2(void *data, int64_t d0, int64_t d1) {
  tl_interp_arg a;
  memset(&a, 0, sizeof a);
  a.is_tensor = true;
  a.data = data;
  a.ndim = 2;
  a.shape[0] = d0;
  a.shape[1] = d1;
  return a;
}

/* Runs the lowered module on the executor; returns false (with the message
 * in *msg, malloc'd) when it reports an error. */
static bool simt(const tl_module *m, tl_interp_arg *args, int nargs, char **msg) {
  tl_diag d;
  tl_diag_init(&d);
  tl_simt_options o = {.check_races = true};
  bool ok = tl_simt_exec(m, 0, args, nargs, NULL, 0, &o, &d);
  if (msg) *msg = d.out.data ? strdup(d.out.data) : strdup("");
  tl_diag_free(&d);
  return ok;
}

/* C = A (M x K) * B (K x N), f16 in/out, 32x32x32 tiles, 128 threads. */
static void gemm_case(int M, int N, int K, int stages) {
  tl_module *lo = gemm(M, N, K, 32, 32, 32, 128, stages, FULL);
  tl_module *hi = gemm(M, N, K, 32, 32, 32, 128, stages, NONE);
  uint16_t *A = malloc(2 * (size_t)M * K), *B = malloc(2 * (size_t)K * N);
  uint16_t *C = malloc(2 * (size_t)M * N), *R = malloc(2 * (size_t)M * N);
  for (int i = 0; i < M * K; i++) A[i] = f16_bits(urand());
  for (int i = 0; i < K * N; i++) B[i] = f16_bits(urand());
  memset(C, 0xFF, 2 * (size_t)M * N); /* NaN: an unwritten element fails */
  memset(R, 0xFF, 2 * (size_t)M * N);
  tl_interp_arg args[3] = {tensor2(A, M, K), tensor2(B, K, N), tensor2(C, M, N)};
  char *msg = NULL;
  bool ok = simt(lo, args, 3, &msg);
  cr_assert(ok, "%dx%dx%d stages %d: executor: %s", M, N, K, stages, msg);
  free(msg);
  args[2].data = R;
  tl_diag d;
  tl_diag_init(&d);
  cr_assert(tl_ref_eval(hi, 0, args, 3, NULL, 0, &d), "ref: %s", d.out.data ? d.out.data : "");
  tl_diag_free(&d);
  for (int i = 0; i < M; i++)
    for (int j = 0; j < N; j++) {
      double want = 0;
      for (int k = 0; k < K; k++) want += f16_val(A[i * K + k]) * f16_val(B[k * N + j]);
      double got = f16_val(C[i * N + j]), ref = f16_val(R[i * N + j]);
      cr_assert(fabs(got - ref) <= 1e-2 + 1e-2 * fabs(ref), "%dx%dx%d stages %d: C[%d,%d] = %g, reference %g", M, N, K,
                stages, i, j, got, ref);
      cr_assert(fabs(got - want) <= 1e-2 + 1e-2 * fabs(want), "%dx%dx%d stages %d: C[%d,%d] = %g, float64 %g", M, N, K,
                stages, i, j, got, want);
    }
  free(A), free(B), free(C), free(R);
  tl_module_destroy(lo);
  tl_module_destroy(hi);
}

Test(pipeline_numerics, stages_0_to_3_full_tiles) {
  for (int s = 0; s <= 3; s++) gemm_case(64, 64, 128, s);
}
Test(pipeline_numerics, stages_0_to_3_partial_tiles) {
  for (int s = 0; s <= 3; s++) {
    gemm_case(50, 70, 30, s);  /* every dim partial; K = 30: 4-byte rows (cp.async of 4 bytes) */
    gemm_case(33, 40, 100, s); /* K = 100: 8-byte rows */
  }
}
Test(pipeline_numerics, odd_rows_and_short_loops) {
  gemm_case(17, 35, 45, 2); /* 2-byte rows: synchronous scalar copies inside the pipeline */
  gemm_case(1, 64, 64, 3);  /* one row; the trip count (2) is below num_stages - 1 + 1 */
  gemm_case(40, 40, 20, 3); /* a single k iteration with three stages */
}

/* ==================================================== 5. planted faults */
/* Replaces every T.<name>() expression statement inside loops by nothing. */
static int strip_calls(tl_stmt *s, int op, int depth) {
  if (!s || depth > 200) return 0;
  int n = 0;
  switch (s->kind) {
  case TL_STMT_SEQ:
    for (int i = 0; i < s->u.seq.n; i++) {
      tl_stmt *x = s->u.seq.stmts[i];
      if (x->kind == TL_STMT_EVAL && x->u.eval.value->kind == TL_EXPR_CALL && x->u.eval.value->u.call.op == op) {
        x->kind = TL_STMT_SEQ;
        x->u.seq.n = 0;
        x->u.seq.stmts = NULL;
        n++;
      } else {
        n += strip_calls(x, op, depth + 1);
      }
    }
    return n;
  case TL_STMT_FOR: return strip_calls(s->u.loop.body, op, depth + 1);
  case TL_STMT_KERNEL: return strip_calls(s->u.kernel.body, op, depth + 1);
  case TL_STMT_IF: return strip_calls(s->u.ifs.then_s, op, depth + 1) + strip_calls(s->u.ifs.else_s, op, depth + 1);
  default: return 0;
  }
}

static void planted(const char *intrinsic, int stages) {
  tl_module *m = gemm(64, 64, 128, 32, 32, 32, 128, stages, FULL);
  int removed = strip_calls(m->funcs[0]->body, tl_intrinsic_lookup(intrinsic), 0);
  cr_assert(removed > 0, "no T.%s to remove", intrinsic);
  uint16_t *A = calloc(64 * 128, 2), *B = calloc(128 * 64, 2), *C = calloc(64 * 64, 2);
  for (int i = 0; i < 64 * 128; i++) A[i] = f16_bits(urand()), B[i] = f16_bits(urand());
  tl_interp_arg args[3] = {tensor2(A, 64, 128), tensor2(B, 128, 64), tensor2(C, 64, 64)};
  char *msg = NULL;
  bool ok = simt(m, args, 3, &msg);
  cr_expect(!ok, "without T.%s (stages %d) the executor found nothing", intrinsic, stages);
  cr_expect(strstr(msg, "error"), "message: %s", msg);
  free(msg);
  free(A), free(B), free(C);
  tl_module_destroy(m);
}

Test(pipeline_faults, missing_barrier_is_caught) {
  planted("sync_threads", 2);
  planted("sync_threads", 3);
  planted("sync_threads", 0);
}
Test(pipeline_faults, missing_wait_is_caught) {
  planted("ptx_wait_group", 2);
  planted("ptx_wait_group", 3);
}

/* ============================================ 6. shared-memory planning */
static const char *reuse_src =
    "import tilelang.language as T\n"
    "@T.prim_func\n"
    "def main(A: T.Tensor((64, 64), \"float32\"), B: T.Tensor((64, 64), \"float32\"),\n"
    "         C: T.Tensor((64, 64), \"float32\"), D: T.Tensor((64, 64), \"float32\")):\n"
    "    with T.Kernel(1, threads=128) as bx:\n"
    "        S1 = T.alloc_shared((64, 64), \"float32\")\n"
    "        S2 = T.alloc_shared((64, 64), \"float32\")\n"
    "        S3 = T.alloc_shared((8, 8), \"float16\")\n"
    "        T.copy(A, S1)\n"
    "        T.copy(S1[0:8, 0:8], S3)\n"
    "        T.copy(S1, C)\n"
    "        T.copy(B, S2)\n"
    "        for i, j in T.Parallel(64, 64):\n"
    "            D[i, j] = S2[63 - i, j] + T.Cast(\"float32\", S3[i % 8, j % 8])\n";

Test(smem_plan, reuse_offsets_and_barrier) {
  tl_module *m = build(reuse_src, "reuse.py", NULL, 0, FULL);
  const tl_primfunc *f = m->funcs[0];
  /* S1 lives for statements 0..2, S3 for 1..4, S2 for 3..4: S2 reuses S1's bytes */
  tl_buffer *s1 = NULL, *s2 = NULL, *s3 = NULL;
  const tl_stmt *k = f->body->kind == TL_STMT_KERNEL ? f->body : f->body->u.seq.stmts[0];
  const tl_stmt *b = k->u.kernel.body;
  for (int i = 0; i < b->u.seq.n; i++)
    if (b->u.seq.stmts[i]->kind == TL_STMT_ALLOC) {
      tl_buffer *x = b->u.seq.stmts[i]->u.alloc.buffer;
      if (!strcmp(x->name, "S1")) s1 = x;
      if (!strcmp(x->name, "S2")) s2 = x;
      if (!strcmp(x->name, "S3")) s3 = x;
    }
  cr_assert(s1 && s2 && s3);
  cr_assert(s1->smem_planned && s2->smem_planned && s3->smem_planned);
  cr_expect_eq(s1->smem_offset, 0);
  cr_expect_eq(s2->smem_offset, 0, "S2 should reuse S1's bytes, got offset %lld", (long long)s2->smem_offset);
  cr_expect_eq(s3->smem_offset, 16384);
  cr_expect_eq(f->smem_bytes, 16384 + 128);
  char *t = print(m);
  /* RAW S1 (tile barrier pass) and the reuse barrier before S2's first write */
  cr_expect_eq(count(t, "T.sync_threads()"), 3, "%s", t);
  free(t);
  /* it runs correctly, and the executor sees no race on the shared bytes */
  float *A = malloc(64 * 64 * 4), *B = malloc(64 * 64 * 4), *C = malloc(64 * 64 * 4), *D = malloc(64 * 64 * 4);
  for (int i = 0; i < 64 * 64; i++) A[i] = (float)urand(), B[i] = (float)urand(), C[i] = D[i] = NAN;
  tl_interp_arg args[4] = {tensor2(A, 64, 64), tensor2(B, 64, 64), tensor2(C, 64, 64), tensor2(D, 64, 64)};
  char *msg = NULL;
  cr_assert(simt(m, args, 4, &msg), "%s", msg);
  free(msg);
  for (int i = 0; i < 64; i++)
    for (int j = 0; j < 64; j++) {
      cr_assert_eq(C[i * 64 + j], A[i * 64 + j]);
      float s3v = (float)tl_round_to_dtype(A[(i % 8) * 64 + j % 8], TL_FLOAT16);
      cr_assert_eq(D[i * 64 + j], B[(63 - i) * 64 + j] + s3v, "D[%d,%d]", i, j);
    }
  free(A), free(B), free(C), free(D);
  tl_module_destroy(m);
  /* without the reuse barrier the executor reports the race */
  m = build(reuse_src, "reuse.py", NULL, 0, FULL);
  int removed = strip_calls(m->funcs[0]->body, tl_intrinsic_lookup("sync_threads"), 0);
  cr_assert_eq(removed, 3);
  A = calloc(64 * 64, 4), B = calloc(64 * 64, 4), C = calloc(64 * 64, 4), D = calloc(64 * 64, 4);
  tl_interp_arg args2[4] = {tensor2(A, 64, 64), tensor2(B, 64, 64), tensor2(C, 64, 64), tensor2(D, 64, 64)};
  cr_expect(!simt(m, args2, 4, &msg), "no race reported without barriers");
  free(msg);
  free(A), free(B), free(C), free(D);
  tl_module_destroy(m);
}

/* Does s store into a buffer named name? */
static bool stores_to(const tl_stmt *s, const char *name, int depth) {
  if (!s || depth > 200) return false;
  switch (s->kind) {
  case TL_STMT_STORE: return !strcmp(s->u.store.buffer->name, name);
  case TL_STMT_SEQ:
    for (int i = 0; i < s->u.seq.n; i++)
      if (stores_to(s->u.seq.stmts[i], name, depth + 1)) return true;
    return false;
  case TL_STMT_FOR: return stores_to(s->u.loop.body, name, depth + 1);
  case TL_STMT_IF: return stores_to(s->u.ifs.then_s, name, depth + 1) || stores_to(s->u.ifs.else_s, name, depth + 1);
  default: return false;
  }
}

/* The kernel body of a lowered module's first function. */
static tl_stmt *kernel_body(tl_module *m) {
  tl_stmt *k = m->funcs[0]->body;
  if (k->kind != TL_STMT_KERNEL) k = k->u.seq.stmts[0];
  return k->u.kernel.body;
}

/* test/Interp/ops/smem_reuse_loop.py: R and S die inside each iteration of
 * the loop and share bytes (in-loop reuse, smem_reuse.c); the barrier the
 * planner puts between R's last read and S's first write is what keeps the
 * executor from seeing a race on those bytes. */
Test(smem_plan, in_loop_reuse_barrier) {
  size_t len;
  char *src = tl_test_read_file("test/Interp/ops/smem_reuse_loop.py", &len);
  cr_assert(src);
  tl_module *m = build(src, "smem_reuse_loop.py", NULL, 0, FULL);
  const tl_stmt *b = kernel_body(m);
  tl_buffer *keep = NULL, *r = NULL, *s = NULL;
  tl_stmt *loop = NULL;
  for (int i = 0; i < b->u.seq.n; i++) {
    tl_stmt *x = b->u.seq.stmts[i];
    if (x->kind == TL_STMT_FOR) loop = x;
    if (x->kind != TL_STMT_ALLOC) continue;
    if (!strcmp(x->u.alloc.buffer->name, "Keep")) keep = x->u.alloc.buffer;
    if (!strcmp(x->u.alloc.buffer->name, "R")) r = x->u.alloc.buffer;
    if (!strcmp(x->u.alloc.buffer->name, "S")) s = x->u.alloc.buffer;
  }
  cr_assert(keep && r && s && loop);
  cr_expect_eq(keep->smem_offset, 0);
  cr_expect_eq(r->smem_offset, 65536);
  cr_expect_eq(s->smem_offset, 65536, "S should reuse R's bytes, got offset %lld", (long long)s->smem_offset);
  cr_expect_eq(m->funcs[0]->smem_bytes, 131072);
  enum { M = 64, NN = 256, IT = 2 };
  float *A = malloc(sizeof(float) * IT * M * NN), *P = malloc(sizeof(float) * M * NN);
  float *C = malloc(sizeof(float) * IT * M * NN);
  for (int i = 0; i < IT * M * NN; i++) A[i] = (float)urand(), C[i] = NAN;
  for (int i = 0; i < M * NN; i++) P[i] = (float)urand();
  tl_interp_arg args[3] = {tensor2(A, IT * M, NN), tensor2(P, M, NN), tensor2(C, IT * M, NN)};
  char *msg = NULL;
  cr_assert(simt(m, args, 3, &msg), "%s", msg);
  free(msg);
  for (int k = 0; k < IT; k++)
    for (int i = 0; i < M; i++)
      for (int j = 0; j < NN; j++)
        cr_assert_eq(C[(k * M + i) * NN + j], A[(k * M + M - 1 - i) * NN + j] * 2.0f + P[i * NN + (j + 1) % NN],
                     "C[%d,%d]", k * M + i, j);
  /* without the barrier before S's first write the executor reports the race */
  tl_stmt *body = loop->u.loop.body;
  int removed = 0;
  for (int i = 1; i < body->u.seq.n && !removed; i++)
    if (stores_to(body->u.seq.stmts[i], "S", 0)) {
      tl_stmt *x = body->u.seq.stmts[i - 1];
      cr_assert(x->kind == TL_STMT_EVAL && x->u.eval.value->u.call.op == tl_intrinsic_lookup("sync_threads"));
      x->kind = TL_STMT_SEQ;
      x->u.seq.n = 0;
      x->u.seq.stmts = NULL;
      removed = 1;
    }
  cr_assert(removed);
  cr_expect(!simt(m, args, 3, &msg), "no race reported without the reuse barrier");
  cr_expect(strstr(msg, "data race on shared memory"), "%s", msg);
  free(msg);
  free(A), free(P), free(C), free(src);
  tl_module_destroy(m);
}

Test(smem_plan, limit_names_buffers) {
  const char *src =
      "import tilelang.language as T\n"
      "@T.prim_func\n"
      "def main(A: T.Tensor((256, 256), \"float32\"), C: T.Tensor((256, 256), \"float32\")):\n"
      "    with T.Kernel(1, threads=128) as bx:\n"
      "        Big = T.alloc_shared((256, 168), \"float32\")\n"
      "        Small = T.alloc_shared((16, 16), \"float32\")\n"
      "        T.copy(A[0:256, 0:168], Big)\n"
      "        T.copy(A[0:16, 0:16], Small)\n"
      "        T.copy(Big, C[0:256, 0:168])\n"
      "        T.copy(Small, C[0:16, 0:16])\n";
  tl_module *m = tl_module_new();
  tl_diag d;
  tl_diag_init(&d);
  cr_assert(tl_frontend_parse(m, &d, src, strlen(src), "big.py", NULL, 0));
  tl_lower_options o = {.target = tl_target_lookup("sm_80"), .verify_each = true};
  cr_assert(!tl_lower_module(m, &o, &d));
  const char *msg = d.out.data ? d.out.data : "";
  cr_expect(strstr(msg, "big.py:4:"), "%s", msg); /* at the kernel */
  cr_expect(strstr(msg, "exceeds the 166912 bytes a block may use on sm_80"), "%s", msg);
  cr_expect(strstr(msg, "'Big' 172032 bytes at offset 0"), "%s", msg);
  cr_expect(strstr(msg, "'Small' 1024 bytes at offset 172032"), "%s", msg);
  tl_diag_free(&d);
  tl_module_destroy(m);
  /* the same on sm_90a (232448 bytes) compiles */
  m = tl_module_new();
  tl_diag_init(&d);
  cr_assert(tl_frontend_parse(m, &d, src, strlen(src), "big.py", NULL, 0));
  tl_lower_options o2 = {.target = tl_target_lookup("sm_90a"), .verify_each = true};
  cr_expect(tl_lower_module(m, &o2, &d), "%s", d.out.data ? d.out.data : "");
  cr_expect_eq(m->funcs[0]->smem_bytes, 172032 + 1024);
  tl_diag_free(&d);
  tl_module_destroy(m);
}

/* Pass configs forced through tl_lower_options join the function's own
 * (from T.func_attr) and change nothing else: the same SIMT IR as without. */
Test(pipeline, options_pass_configs_reach_functions) {
  const char *src =
      "import tilelang.language as T\n"
      "@T.prim_func\n"
      "def main(A: T.Tensor((128,), \"float32\")):\n"
      "    T.func_attr({\"tl.disable_wgmma\": True})\n"
      "    with T.Kernel(1, threads=128) as bx:\n"
      "        for i in T.Parallel(128):\n"
      "            A[i] = A[i] + 1.0\n";
  char *text[2] = {NULL, NULL};
  for (int k = 0; k < 2; k++) {
    tl_module *m = tl_module_new();
    tl_diag d;
    tl_diag_init(&d);
    cr_assert(tl_frontend_parse(m, &d, src, strlen(src), "cfg.py", NULL, 0));
    cr_assert(m->funcs[0]->pass_configs.disable_wgmma && !m->funcs[0]->pass_configs.disable_tma_lower);
    tl_lower_options o = {.target = tl_target_lookup("sm_90a"), .verify_each = true};
    o.pass_configs.disable_tma_lower = k == 1;
    cr_assert(tl_lower_module(m, &o, &d), "%s", d.out.data ? d.out.data : "");
    cr_expect(m->funcs[0]->pass_configs.disable_wgmma);
    cr_expect_eq(m->funcs[0]->pass_configs.disable_tma_lower, k == 1);
    cr_expect(!m->funcs[0]->pass_configs.disable_warp_specialized);
    tl_strbuf sb = {0};
    tl_print_module(&sb, m);
    text[k] = tl_strbuf_take(&sb);
    tl_diag_free(&d);
    tl_module_destroy(m);
  }
  cr_assert(strstr(text[1], "\"tl.disable_wgmma\": True, \"tl.disable_tma_lower\": True"), "%s", text[1]);
  /* apart from the attribute line, the two lowerings are the same */
  const char *a = strstr(text[0], "})\n"), *b = strstr(text[1], "})\n");
  cr_assert(a && b);
  cr_expect_str_eq(a, b);
  free(text[0]);
  free(text[1]);
}

/* ================================================= 7. rasterization */
/* Independent model of TileLang's rasterization2DRow / 2DColumn. */
static void rast(bool column, int P, int gx, int gy, int x0, int y0, int *x, int *y) {
  int b = x0 + y0 * gx, G = gx * gy;
  int across = column ? gy : gx;
  int psize = P * across, panel = b / psize, off = b % psize;
  int total = (G + psize - 1) / psize;
  int stride = panel + 1 < total ? P : (G - panel * psize) / across;
  int zig = (panel & 1) ? across - 1 - off / stride : off / stride;
  int pos = off % stride + panel * P;
  *x = column ? pos : zig;
  *y = column ? zig : pos;
}

static void rast_case(int gx, int gy, int P, bool column) {
  char src[1024];
  snprintf(src, sizeof src,
           "import tilelang.language as T\n"
           "@T.prim_func\n"
           "def main(O: T.Tensor((%d, %d), \"int32\")):\n"
           "    with T.Kernel(%d, %d, threads=32) as (bx, by):\n"
           "        T.use_swizzle(panel_size=%d, order=\"%s\")\n"
           "        O[by, bx] = T.get_block_binding(1) * %d + T.get_block_binding(0)\n",
           gy, gx, gx, gy, P, column ? "column" : "row", gx);
  tl_module *m = build(src, "rast.py", NULL, 0, FULL);
  char *t = print(m);
  HAS(t, "rz_panel");
  HASNT(t, "use_swizzle");
  free(t);
  int *O = malloc(sizeof(int) * (size_t)(gx * gy));
  for (int i = 0; i < gx * gy; i++) O[i] = -1;
  tl_interp_arg a;
  memset(&a, 0, sizeof a);
  a.is_tensor = true;
  a.data = O;
  a.ndim = 2;
  a.shape[0] = gy;
  a.shape[1] = gx;
  char *msg = NULL;
  cr_assert(simt(m, &a, 1, &msg), "%s", msg);
  free(msg);
  for (int y0 = 0; y0 < gy; y0++)
    for (int x0 = 0; x0 < gx; x0++) {
      int x, y;
      rast(column, P, gx, gy, x0, y0, &x, &y);
      cr_assert(x >= 0 && x < gx && y >= 0 && y < gy);
      cr_assert_eq(O[y * gx + x], y0 * gx + x0, "%s P=%d grid %dx%d: block (%d,%d) -> (%d,%d), got %d",
                   column ? "column" : "row", P, gx, gy, x0, y0, x, y, O[y * gx + x]);
    }
  /* every position written once: the map is a bijection */
  for (int i = 0; i < gx * gy; i++) cr_assert(O[i] >= 0);
  free(O);
  tl_module_destroy(m);
}

Test(rasterize, row_and_column_orders) {
  rast_case(5, 7, 2, false);
  rast_case(5, 7, 2, true);
  rast_case(8, 8, 3, false);
  rast_case(3, 10, 4, true);
  rast_case(4, 4, 10, false); /* panel larger than the grid */
}

Test(rasterize, one_dim_grid_and_disabled) {
  const char *src =
      "import tilelang.language as T\n"
      "@T.prim_func\n"
      "def main(O: T.Tensor((4, 4), \"int32\")):\n"
      "    with T.Kernel(4, 4, threads=32) as (bx, by):\n"
      "        T.use_swizzle(panel_size=2, enable=False)\n"
      "        O[by, bx] = by * 4 + bx\n";
  tl_module *m = build(src, "r.py", NULL, 0, FULL);
  char *t = print(m);
  HASNT(t, "rz_");
  HASNT(t, "use_swizzle");
  HAS(t, "as (bx, by):");
  free(t);
  tl_module_destroy(m);
}
