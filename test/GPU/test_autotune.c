/* GPU test (issue 16): tl_kernel_tune over the 288-configuration
 * @tilelang.autotune space of examples/tune/gemm_autotune.py at 1024^3
 * float16, with a measure callback that times each candidate
 * (tl_kernel_time, the decorator's warmup/rep) and checks its output
 * against float64 on 256 sampled elements (an independent check, so a wrong
 * configuration cannot win).  Then the same tune again: a tune cache hit
 * (nothing measured, the same winner, at most 1 s), whose kernel computes
 * the right result.  Configurations over the shared memory limit must be
 * skipped with a reason, and at least half of the space must be timed.
 * The caches live in a temporary directory. */
#include <unistd.h>

#include "gpu_util.h"

#define DIM 1024
#define SAMPLES 256

static tl_context *ctx;

typedef struct check_state {
  dev_tensor *A, *B;
  void *ha, *hb;
  int calls;
} check_state;

/* 0 when the sampled elements of C (host, float16) match float64. */
static int bad_samples(const check_state *s, const void *c) {
  int bad = 0;
  for (int q = 0; q < SAMPLES; q++) {
    int64_t i = (q * 7919) % DIM, j = (q * 104729 + 13) % DIM;
    double ref = 0, atol, rtol;
    for (int64_t k = 0; k < DIM; k++)
      ref += dt_load(DT_F16, s->ha, (size_t)(i * DIM + k)) * dt_load(DT_F16, s->hb, (size_t)(k * DIM + j));
    dt_tol(DT_F16, &atol, &rtol);
    if (!(fabs(dt_load(DT_F16, c, (size_t)(i * DIM + j)) - ref) <= atol + rtol * fabs(ref) * 4)) bad++;
  }
  return bad;
}

static tl_status measure(void *user, tl_kernel *k, size_t index, int warmup, int rep, double *ms, char *why,
                         size_t why_size) {
  (void)index;
  check_state *s = user;
  s->calls++;
  tl_arg args[2] = {tl_arg_tensor(&s->A->t), tl_arg_tensor(&s->B->t)};
  DLManagedTensor *out[1] = {NULL};
  float *t = calloc((size_t)rep, sizeof *t);
  tl_status st = t ? tl_kernel_time(ctx, k, args, 2, NULL, warmup, rep, t, out) : TL_ERR_NO_MEMORY;
  if (st != TL_OK) {
    snprintf(why, why_size, "%s", tl_context_last_error(ctx));
    free(t);
    return st;
  }
  double *d = calloc((size_t)rep, sizeof *d);
  for (int i = 0; i < rep; i++) d[i] = t[i];
  *ms = median(d, rep);
  void *c = download((uintptr_t)out[0]->dl_tensor.data, (size_t)DIM * DIM * 2);
  out[0]->deleter(out[0]);
  int bad = bad_samples(s, c);
  free(c), free(d), free(t);
  if (bad) {
    snprintf(why, why_size, "%d of %d sampled elements differ from float64", bad, SAMPLES);
    return TL_ERR_COMPILE;
  }
  return TL_OK;
}

int main(void) {
  if (tl_context_create(&ctx) != TL_OK) return 1;
  gpu_init(ctx);
  char dir[] = "/tmp/tl-gpu-tune-XXXXXX";
  if (!mkdtemp(dir)) return 1;
  setenv("TL_CACHE", "1", 1);
  setenv("TL_CACHE_DIR", dir, 1);
  char path[1024];
  snprintf(path, sizeof path, "%s/tune/gemm_autotune.py", kernel_dir());
  size_t len = 0;
  FILE *f = fopen(path, "rb");
  char *src = malloc(1 << 20);
  if (!f || !src || !(len = fread(src, 1, (1 << 20) - 1, f))) {
    printf("test_autotune: FAIL: cannot read %s\n", path);
    return 1;
  }
  fclose(f);
  tl_define defs[3] = {{"M", "1024"}, {"N", "1024"}, {"K", "1024"}};
  tl_tune_space *space = NULL;
  CHECK(tl_tune_space_parse(ctx, src, len, path, NULL, defs, 3, &space) == TL_OK && space, "parse: %s",
        tl_context_last_error(ctx));
  if (!space) return finish("test_autotune");
  CHECK(tl_tune_space_count(space) == 288, "288 configs, got %zu", tl_tune_space_count(space));
  rng_seed(16);
  int64_t shape[2] = {DIM, DIM};
  dev_tensor A, B;
  check_state s = {&A, &B, NULL, NULL, 0};
  s.ha = dev_random(&A, DT_F16, 2, shape);
  s.hb = dev_random(&B, DT_F16, 2, shape);
  tl_tune_options o = {.defines = defs,
                       .ndefines = 3,
                       .measure = measure,
                       .user = &s,
                       .problem = "A[1024x1024] float16, B[1024x1024] float16",
                       .progress = true,
                       .load = true};
  tl_tune_result r1, r2;
  if (tl_kernel_tune(ctx, src, len, path, space, &o, &r1) != TL_OK) {
    CHECK(0, "tune: %s", tl_context_last_error(ctx));
    return finish("test_autotune");
  }
  printf(
      "  first tune: %zu configs on %d workers, %zu timed, %zu failed to compile, %zu failed the check or run; "
      "compile and load %.0f ms wall (%.1f ms CPU per config; PTX JIT by %s, %.0f ms summed), total %.0f ms; "
      "best #%ld %.4f ms\n",
      r1.nconfigs, r1.workers, r1.timed, r1.compile_failed, r1.measure_failed, r1.compile_wall_ms,
      r1.compile_cpu_ms / (double)r1.nconfigs, r1.jitlink ? "nvJitLink on the workers" : "the driver", r1.load_ms,
      r1.total_ms, r1.best, r1.best_ms);
  CHECK(r1.best >= 0 && r1.kernel, "a winner");
  CHECK(r1.timed >= 144, "at least half the space timed (%zu)", r1.timed);
  for (size_t i = 0; i < r1.nconfigs; i++)
    if (r1.configs[i].outcome == TL_TUNE_COMPILE_FAILED)
      CHECK(r1.configs[i].message && strstr(r1.configs[i].message, "shared memory"),
            "config #%zu skipped for another reason: %s", i, r1.configs[i].message);
  int calls = s.calls;
  if (tl_kernel_tune(ctx, src, len, path, space, &o, &r2) != TL_OK) {
    CHECK(0, "second tune: %s", tl_context_last_error(ctx));
    return finish("test_autotune");
  }
  printf("  second tune: %s, %.1f ms, best #%ld\n", r2.cache_hit ? "tune cache hit" : "MISS", r2.total_ms, r2.best);
  CHECK(r2.cache_hit && s.calls == calls, "the second tune hits the tune cache and measures nothing");
  CHECK(r2.best == r1.best && r2.best_ms == r1.best_ms, "the same winner");
  CHECK(r2.total_ms <= 1000, "the second tune takes %.1f ms (at most 1000)", r2.total_ms);
  double ms = 0;
  char why[512] = "";
  CHECK(r2.kernel && measure(&s, r2.kernel, (size_t)r2.best, 1, 3, &ms, why, sizeof why) == TL_OK,
        "the cached winner computes C = A B: %s", why);
  tl_kernel_destroy(r1.kernel);
  tl_kernel_destroy(r2.kernel);
  tl_tune_result_free(&r1);
  tl_tune_result_free(&r2);
  tl_tune_space_destroy(space);
  free(s.ha), free(s.hb), free(src);
  dev_free(&A), dev_free(&B);
  char cmd[128];
  snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
  if (system(cmd) != 0) fprintf(stderr, "cannot remove %s\n", dir);
  tl_context_destroy(ctx);
  return finish("test_autotune");
}
