/* GPU test (test_int4_gemm) of the int4 GEMM (issue 30): the kernel of TileLang's
 * examples/gemm_int4/example_tilelang_gemm_int4.py as test/Interp/ops/gemm_int4.py writes it (A (M, K)
 * and B (N, K) T.int4, C int32, T.gemm(..., transpose_B=True) on mma.sync.m16n8k64 .s4; on sm_90a too,
 * where wgmma has no 4-bit type), at the example's size (1024^3, 128x128x64 tiles, 3 stages), at
 * 512x256x768 with 64x64x64 tiles, and as uint4 (.u4) at 256x256x512.  The inputs cross the API as
 * TileLang's storage: int8 / uint8 tensors of shape (M, K / 2), every byte random (all 16 nibble values
 * in both halves), the even element in the low nibble.  Checks, all exact (integer arithmetic):
 *  - the GPU's C against an int32 reference computed here from the nibbles (sign-extended for int4);
 *  - at the smaller sizes, the CPU SIMT executor's C (tl_kernel_call_on TL_EXEC_CPU) against the same;
 *  - a float16 tensor, and an int8 tensor of the logical shape (M, K), are refused before the launch
 *    with the storage named in the message.
 * Timing: tl_kernel_time median of 20 launches after 3 warm-ups, printed with the TOPS.
 * Kernel file: $TL_OPS_DIR (default test/Interp/ops).  Exit 0 pass, 1 fail, 77 no driver/GPU. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gpu_util.h"

static uint64_t rng = 0x9E3779B97F4A7C15ull;
static uint64_t next_u64(void) { /* splitmix64 */
  uint64_t z = (rng += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

/* element k of a row of packed bytes: nibble k % 2 of byte k / 2 */
static int nib(const uint8_t *row, int k, bool s) {
  int v = (row[k / 2] >> (4 * (k % 2))) & 15;
  return s && v >= 8 ? v - 16 : v;
}

static int cmp_float(const void *a, const void *b) {
  float x = *(const float *)a, y = *(const float *)b;
  return (x > y) - (x < y);
}

typedef struct icase {
  bool u; /* uint4 */
  int M, N, K, bm, bn, bk;
  bool cpu; /* also run the CPU SIMT executor */
} icase;

/* Counts the elements of out (M x N int32) that differ from the reference. */
static size_t mismatches(const icase *c, const uint8_t *A, const uint8_t *B, const int32_t *out, const char *what) {
  size_t bad = 0;
  int kb = c->K / 2;
  for (int i = 0; i < c->M; i++)
    for (int j = 0; j < c->N; j++) {
      int32_t r = 0;
      for (int k = 0; k < c->K; k++) r += nib(A + (size_t)i * kb, k, !c->u) * nib(B + (size_t)j * kb, k, !c->u);
      int32_t g = out[(size_t)i * c->N + j];
      if (g != r && bad++ == 0) printf("  %s: C[%d, %d] = %d, reference %d\n", what, i, j, g, r);
    }
  return bad;
}

static tl_kernel *compile(tl_context *ctx, const char *dir, const icase *c) {
  char path[4096], s[6][16];
  snprintf(path, sizeof path, "%s/gemm_int4.py", dir);
  int v[6] = {c->M, c->N, c->K, c->bm, c->bn, c->bk};
  for (int i = 0; i < 6; i++) snprintf(s[i], 16, "%d", v[i]);
  tl_define defs[] = {{"M", s[0]},
                      {"N", s[1]},
                      {"K", s[2]},
                      {"block_M", s[3]},
                      {"block_N", s[4]},
                      {"block_K", s[5]},
                      {"dtype", c->u ? "uint4" : "int4"}};
  tl_kernel *k = NULL;
  if (tl_kernel_compile_file(ctx, path, defs, sizeof defs / sizeof defs[0], NULL, &k) != TL_OK) return NULL;
  return k;
}

static void run_case(tl_context *ctx, const char *dir, const icase *c) {
  char what[128];
  snprintf(what, sizeof what, "%s %dx%dx%d (%dx%dx%d)", c->u ? "uint4" : "int4", c->M, c->N, c->K, c->bm, c->bn, c->bk);
  tl_kernel *k = compile(ctx, dir, c);
  CHECK(k, "%s: compile: %s", what, tl_context_last_error(ctx));
  if (!k) return;
  size_t na = (size_t)c->M * c->K / 2, nb = (size_t)c->N * c->K / 2;
  uint8_t *A = malloc(na), *B = malloc(nb);
  for (size_t i = 0; i < na; i++) A[i] = (uint8_t)(next_u64() >> 56);
  for (size_t i = 0; i < nb; i++) B[i] = (uint8_t)(next_u64() >> 56);
  DLDataType dl = {c->u ? kDLUInt : kDLInt, 8, 1};
  int64_t sa[2] = {c->M, c->K / 2}, sb[2] = {c->N, c->K / 2};
  DLTensor in[2] = {{A, {kDLCPU, 0}, 2, dl, sa, NULL, 0}, {B, {kDLCPU, 0}, 2, dl, sb, NULL, 0}};
  tl_arg args[2] = {tl_arg_tensor(&in[0]), tl_arg_tensor(&in[1])};
  DLManagedTensor *cpu_out[1] = {NULL}, *gpu_out[1] = {NULL}, *host = NULL, *dev[2] = {NULL, NULL};
  tl_status s = TL_OK;
  if (c->cpu) {
    s = tl_kernel_call_on(ctx, k, TL_EXEC_CPU, args, 2, NULL, cpu_out);
    CHECK(s == TL_OK, "%s: CPU run: %s", what, tl_context_last_error(ctx));
    if (s == TL_OK) CHECK(!mismatches(c, A, B, cpu_out[0]->dl_tensor.data, "cpu"), "%s: CPU executor", what);
  }
  if (s == TL_OK) s = gpu_call_host(ctx, k, in, 2, args, dev, gpu_out, &host, what);
  if (s == TL_OK) {
    size_t bad = mismatches(c, A, B, host->dl_tensor.data, "gpu");
    CHECK(!bad, "%s: %zu elements differ from the int32 reference", what, bad);
    float each[20];
    DLManagedTensor *tout[1] = {NULL};
    if (tl_kernel_time(ctx, k, args, 2, NULL, 3, 20, each, tout) == TL_OK) {
      qsort(each, 20, sizeof each[0], cmp_float);
      double ms = each[10];
      printf("%s %s: %.3f ms (median of 20), %.1f TOPS\n", bad ? "FAIL" : "ok  ", what, ms,
             2.0 * c->M * c->N * c->K / (ms * 1e-3) / 1e12);
    } else {
      printf("%s %s (timing: %s)\n", bad ? "FAIL" : "ok  ", what, tl_context_last_error(ctx));
    }
    if (tout[0]) tout[0]->deleter(tout[0]);
  }
  gpu_release(dev, 2), gpu_release(cpu_out, 1), gpu_release(gpu_out, 1), gpu_release(&host, 1);
  free(A), free(B);
  tl_kernel_destroy(k);
}

/* A float16 tensor and an int8 tensor of the logical shape are refused, naming the storage. */
static void bad_args(tl_context *ctx, const char *dir) {
  icase c = {false, 128, 128, 128, 128, 128, 64, false};
  tl_kernel *k = compile(ctx, dir, &c);
  CHECK(k, "bad args: compile: %s", tl_context_last_error(ctx));
  if (!k) return;
  DLManagedTensor *t[3] = {NULL, NULL, NULL};
  DLDevice cuda = {kDLCUDA, 0};
  int64_t packed[2] = {128, 64}, logical[2] = {128, 128};
  bool ok = tl_tensor_alloc(ctx, cuda, 2, packed, (DLDataType){kDLInt, 8, 1}, &t[0]) == TL_OK &&
            tl_tensor_alloc(ctx, cuda, 2, packed, (DLDataType){kDLFloat, 16, 1}, &t[1]) == TL_OK &&
            tl_tensor_alloc(ctx, cuda, 2, logical, (DLDataType){kDLInt, 8, 1}, &t[2]) == TL_OK;
  CHECK(ok, "bad args: alloc: %s", tl_context_last_error(ctx));
  for (int w = 1; ok && w <= 2; w++) {
    tl_arg args[2] = {tl_arg_tensor(&t[w]->dl_tensor), tl_arg_tensor(&t[0]->dl_tensor)};
    DLManagedTensor *out[1] = {NULL};
    tl_status s = tl_kernel_call(ctx, k, args, 2, NULL, out);
    const char *msg = tl_context_last_error(ctx);
    const char *want = w == 1 ? "expected int8 (the storage of int4: two values per byte), got float16"
                              : "expected 64 (int4 dim 128, two values per byte of int8), got 128";
    CHECK(s == TL_ERR_INVALID_ARGUMENT && msg && strstr(msg, want), "bad args %d: status %d, message %s", w, (int)s,
          msg ? msg : "(none)");
    if (out[0]) out[0]->deleter(out[0]);
  }
  for (int i = 0; i < 3; i++)
    if (t[i]) t[i]->deleter(t[i]);
  tl_kernel_destroy(k);
  printf("%s int4 argument checks\n", g_failures ? "FAIL" : "ok  ");
}

int main(void) {
  tl_context *ctx = NULL;
  if (tl_context_create(&ctx) != TL_OK) return 1;
  gpu_init(ctx); /* exit 77 without a GPU */
  const char *dir = ops_dir();
  static const icase cases[] = {
      {false, 1024, 1024, 1024, 128, 128, 64, false}, /* TileLang's example */
      {false, 512, 256, 768, 64, 64, 64, true},
      {true, 256, 256, 512, 128, 128, 64, true},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) run_case(ctx, dir, &cases[i]);
  bad_args(ctx, dir);
  printf("int4 GEMM: %s\n", g_failures ? "FAIL" : "all pass");
  tl_context_destroy(ctx);
  return g_failures ? 1 : 0;
}
