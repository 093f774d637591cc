/* GPU test of `while` loops in a kernel body (issue 30; docs/language.md):
 * the stream-K GEMM of test/Interp/ops/while_loop.py (TileLang's
 * examples/gemm_streamk: each program walks its share of the k-iterations
 * with `while start_iter[0] < last_iter:`, a T.Pipelined loop of a run-time
 * trip count, T.gemm and T.atomic_add of partial tiles in the body), at the
 * file's small sizes and at the example's (M=256, N=1024, K=512, 108
 * programs, 16x128x32 tiles), on the GPU's own target (sm_90a on an H100:
 * the loops stay on the cp.async + mma.sync path).  C starts at zero; the
 * GPU's C must match C = A B^T computed in float64 (|err| <= 1e-3 +
 * 1e-3 |ref|: float32 accumulation, partial tiles summed by atomics in any
 * order), and so must the CPU SIMT executor's at the small size.  Prints
 * `ok SIZE: ...` per size, then PASS.  The kernel file is
 * $TL_OPS_DIR/while_loop.py (default test/Interp/ops, as test_lang_ops).
 * Exit 0 pass, 1 fail, 77 no driver/GPU. */
#include <math.h>

#include "gpu_util.h"

typedef struct sk_size {
  const char *name;
  int64_t m, n, k;
  tl_define defs[5];
  size_t ndefs;
} sk_size;

/* Runs the kernel on exec with A, B (host, float16) and a zero C; returns C (float32, m*n) or NULL. */
static float *run(tl_context *ctx, tl_kernel *k, tl_executor exec, const sk_size *z, uint16_t *a, uint16_t *b) {
  int64_t sa[2] = {z->m, z->k}, sb[2] = {z->n, z->k}, sc[2] = {z->m, z->n};
  float *c = calloc((size_t)(z->m * z->n), sizeof(float));
  DLTensor A = {a, {kDLCPU, 0}, 2, {kDLFloat, 16, 1}, sa, NULL, 0};
  DLTensor B = {b, {kDLCPU, 0}, 2, {kDLFloat, 16, 1}, sb, NULL, 0};
  DLTensor C = {c, {kDLCPU, 0}, 2, {kDLFloat, 32, 1}, sc, NULL, 0};
  DLTensor *host[3] = {&A, &B, &C};
  DLManagedTensor *dev[3] = {NULL, NULL, NULL};
  tl_arg args[3];
  tl_status s = TL_OK;
  for (int i = 0; i < 3; i++) {
    if (exec == TL_EXEC_CPU) {
      args[i] = tl_arg_tensor(host[i]);
      continue;
    }
    DLDevice cuda = {kDLCUDA, 0};
    if (s == TL_OK) s = tl_tensor_alloc(ctx, cuda, 2, host[i]->shape, host[i]->dtype, &dev[i]);
    if (s == TL_OK) s = tl_tensor_copy(ctx, &dev[i]->dl_tensor, host[i]);
    if (s == TL_OK) args[i] = tl_arg_tensor(&dev[i]->dl_tensor);
  }
  if (s == TL_OK) s = tl_kernel_call_on(ctx, k, exec, args, 3, NULL, NULL);
  if (s == TL_OK && exec != TL_EXEC_CPU) s = tl_tensor_copy(ctx, &C, &dev[2]->dl_tensor); /* after the launch */
  CHECK(s == TL_OK, "%s: %s run: %s", z->name, exec == TL_EXEC_CPU ? "CPU" : "GPU", tl_context_last_error(ctx));
  for (int i = 0; i < 3; i++)
    if (dev[i]) dev[i]->deleter(dev[i]);
  if (s != TL_OK) {
    free(c);
    return NULL;
  }
  return c;
}

/* Elements of c off A B^T by more than the tolerance (the first one printed). */
static size_t compare(const sk_size *z, const char *who, const float *c, const uint16_t *a, const uint16_t *b) {
  size_t bad = 0;
  for (int64_t i = 0; i < z->m; i++)
    for (int64_t j = 0; j < z->n; j++) {
      double ref = 0;
      for (int64_t l = 0; l < z->k; l++)
        ref += dt_load(DT_F16, a, (size_t)(i * z->k + l)) * dt_load(DT_F16, b, (size_t)(j * z->k + l));
      double got = c[i * z->n + j];
      if (fabs(got - ref) <= 1e-3 + 1e-3 * fabs(ref)) continue;
      if (bad++ == 0)
        printf("%s %s: C[%lld, %lld] = %g, want %g\n", z->name, who, (long long)i, (long long)j, got, ref);
    }
  return bad;
}

static void run_size(tl_context *ctx, const char *path, const sk_size *z, bool cpu) {
  tl_compile_options o = {0};
  o.kernel = "while_streamk";
  tl_kernel *k = NULL;
  if (tl_kernel_compile_file(ctx, path, z->defs, z->ndefs, &o, &k) != TL_OK) {
    CHECK(0, "compiling %s of %s: %s", z->name, path, tl_context_last_error(ctx));
    return;
  }
  uint16_t *a = malloc(sizeof(uint16_t) * (size_t)(z->m * z->k)), *b = malloc(sizeof(uint16_t) * (size_t)(z->n * z->k));
  for (int64_t i = 0; i < z->m * z->k; i++) dt_store(DT_F16, a, (size_t)i, rng_uniform());
  for (int64_t i = 0; i < z->n * z->k; i++) dt_store(DT_F16, b, (size_t)i, rng_uniform());
  float *g = run(ctx, k, TL_EXEC_CUDA, z, a, b);
  float *c = cpu ? run(ctx, k, TL_EXEC_CPU, z, a, b) : NULL;
  size_t bg = g ? compare(z, "GPU", g, a, b) : 1, bc = c ? compare(z, "CPU executor", c, a, b) : 0;
  CHECK(bg == 0 && bc == 0, "%s: %zu GPU and %zu CPU-executor elements off A B^T", z->name, bg, bc);
  if (g && bg == 0 && bc == 0)
    printf("ok %s: %lldx%lldx%lld, GPU%s == A B^T (float64) within 1e-3\n", z->name, (long long)z->m, (long long)z->n,
           (long long)z->k, cpu ? " and CPU executor" : "");
  free(g);
  free(c);
  free(a);
  free(b);
  tl_kernel_destroy(k);
}

int main(void) {
  tl_context *ctx = NULL;
  if (tl_context_create(&ctx) != TL_OK) return 1;
  gpu_init(ctx); /* exit 77 without a GPU */
  char path[4096];
  snprintf(path, sizeof path, "%s/while_loop.py", ops_dir());
  static const sk_size small = {"small", 48, 64, 160, {{0}}, 0};
  static const sk_size example = {
      "example",
      256,
      1024,
      512,
      {{"total_sm", "108"}, {"m", "256"}, {"n", "1024"}, {"k", "512"}, {"BLOCK_SIZE_N", "128"}},
      5};
  run_size(ctx, path, &small, true);
  run_size(ctx, path, &example, false);
  tl_context_destroy(ctx);
  printf("%s\n", g_failures ? "FAIL" : "PASS");
  return g_failures ? 1 : 0;
}
