/* Launch-overhead benchmark (issue 6, "benchmarks/launch"; issue 16,
 * acceptance 5: a tl call costs at most 0.5 us of host time above a bare
 * cuLaunchKernel, at 0 and at 19 arguments, also for a Hopper kernel with
 * tensor maps).
 *
 * Cases (each kernel's GPU time is a few us at most, so that the host, not
 * the GPU, sets the pace; out_idx none everywhere: the caller passes the
 * output, no allocation per call):
 *   3 args     examples/elementwise_add.py at M = 32, N = 128 float32 (one
 *              block of 128 threads); its result is checked (C = A + B
 *              exactly, every element, for the tl launch and the bare one)
 *   0 args     benchmarks/launch/launch_kernels.py launch0 (one block of 32)
 *   19 args    launch_kernels.py launch19 at N = 128: 19 float32 tensors,
 *              out = A0 + ... + A17 (checked exactly: the same additions in
 *              the same order on the host)
 *   tma        examples/gemm.py at M = N = 128, K = 64 float16 for sm_90a
 *              (TMA + wgmma: 3 pointers and 2 tensor maps, which the runtime
 *              caches per pointer, shape and box after the first call); only
 *              when the default target is sm_90a; fewer calls per batch
 *              (TMA_CALLS) so that the launch queue never fills
 * tl_kernel_launch_info gives the CUfunction, grid, block, shared memory and
 * parameter array (tensor maps included) that tl_kernel_call launches; the
 * bare loop calls cuLaunchKernel with exactly those.  Each batch is CALLS
 * asynchronous launches on the legacy default stream between two
 * CLOCK_MONOTONIC stamps (the stream is synchronized before and after,
 * outside the interval); BATCHES batches of each kind alternate (tl, bare,
 * tl, ...) so that clock and driver drift hit both; the figure is the median
 * over batches of the host time per launch.
 * Output: a table on stdout and $OUT/bench_launch.csv (or ./).  Exit 0 when
 * every overhead is at most 0.5 us, 1 otherwise or on a failure, 77 without
 * a GPU.  The same cases without a GPU (a fake driver): bench_launch_cpu. */
#include "../../test/GPU/gpu_util.h"

#define CALLS 1000
#define TMA_CALLS 200
#define BATCHES 25
#define WARM 200
#define LIMIT_US 0.5

typedef CUres (*launch_fn)(void *f, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by, unsigned bz,
                           unsigned smem, void *stream, void **params, void **extra);

/* Median host us per launch of tl_kernel_call and of the bare launch
 * (alternating batches of calls launches); false when a call failed. */
static bool measure(tl_context *ctx, tl_kernel *k, const tl_arg *args, size_t nargs, const tl_launch_info *li,
                    launch_fn bare, int calls, double *tl_us, double *bare_us) {
  for (int i = 0; i < WARM; i++) {
    if (tl_kernel_call(ctx, k, args, nargs, NULL, NULL) != TL_OK) {
      fprintf(stderr, "call failed: %s\n", tl_context_last_error(ctx));
      return false;
    }
    CU(bare(li->function, li->grid[0], li->grid[1], li->grid[2], li->block, 1, 1, li->smem, NULL, li->params, NULL));
  }
  CU(G.cuCtxSynchronize());
  double t_tl[BATCHES], t_bare[BATCHES];
  for (int b = 0; b < BATCHES; b++) {
    double t0 = now_ms();
    for (int i = 0; i < calls; i++)
      if (tl_kernel_call(ctx, k, args, nargs, NULL, NULL) != TL_OK) {
        fprintf(stderr, "call failed: %s\n", tl_context_last_error(ctx));
        return false;
      }
    t_tl[b] = (now_ms() - t0) * 1e3 / calls;
    CU(G.cuCtxSynchronize());
    t0 = now_ms();
    for (int i = 0; i < calls; i++)
      CU(bare(li->function, li->grid[0], li->grid[1], li->grid[2], li->block, 1, 1, li->smem, NULL, li->params, NULL));
    t_bare[b] = (now_ms() - t0) * 1e3 / calls;
    CU(G.cuCtxSynchronize());
  }
  *tl_us = median(t_tl, BATCHES);
  *bare_us = median(t_bare, BATCHES);
  return true;
}

/* A compile with out_idx none (and the kernel cache off); NULL on failure. */
static tl_kernel *compile(tl_context *ctx, const char *path, const char *kernel, const char *tgt, const tl_define *defs,
                          size_t nd) {
  tl_compile_options o = {0};
  o.out_idx_mode = TL_OUT_IDX_NONE;
  o.kernel = kernel;
  o.target = tgt;
  o.cache = TL_CACHE_USE_OFF;
  tl_kernel *k = NULL;
  if (tl_kernel_compile_file(ctx, path, defs, nd, &o, &k) != TL_OK) {
    fprintf(stderr, "compile of %s failed: %s\n", path, tl_context_last_error(ctx));
    return NULL;
  }
  return k;
}

/* Runs one case: launch info, the optional check (check(user) after one tl
 * call and after one bare launch; false = wrong), the measurement, a table
 * row and a CSV row.  Returns 0 when within the limit, 1 otherwise. */
typedef bool (*check_fn)(void *user);
static int run_case(tl_context *ctx, FILE *csv, const char *name, tl_kernel *k, const tl_arg *args, size_t nargs,
                    launch_fn bare, int calls, check_fn check, void (*reset)(void *), void *user) {
  if (!k) return 1;
  tl_launch_info li;
  if (tl_kernel_launch_info(ctx, k, args, nargs, &li) != TL_OK) {
    fprintf(stderr, "%s: tl_kernel_launch_info failed: %s\n", name, tl_context_last_error(ctx));
    return 1;
  }
  int rc = 0;
  if (check) {
    reset(user);
    if (tl_kernel_call(ctx, k, args, nargs, NULL, NULL) != TL_OK) {
      fprintf(stderr, "%s: call failed: %s\n", name, tl_context_last_error(ctx));
      rc = 1;
    }
    CU(G.cuCtxSynchronize());
    if (!rc && !check(user)) {
      fprintf(stderr, "%s: CHECK FAILED after tl_kernel_call\n", name);
      rc = 1;
    }
    reset(user);
    CU(bare(li.function, li.grid[0], li.grid[1], li.grid[2], li.block, 1, 1, li.smem, NULL, li.params, NULL));
    CU(G.cuCtxSynchronize());
    if (!rc && !check(user)) {
      fprintf(stderr, "%s: CHECK FAILED after the bare launch\n", name);
      rc = 1;
    }
  }
  double mt = 0, mb = 0;
  if (!rc && !measure(ctx, k, args, nargs, &li, bare, calls, &mt, &mb)) rc = 1;
  if (!rc) {
    double over = mt - mb;
    printf("%-10s %6d %12.3f %12.3f %12.3f   %s\n", name, li.nparams, mt, mb, over, over <= LIMIT_US ? "PASS" : "FAIL");
    fprintf(csv, "%s,%d,%u,%u,%.3f,%.3f,%.3f,%d,%d\n", name, li.nparams, li.grid[0] * li.grid[1] * li.grid[2], li.block,
            mt, mb, over, calls, BATCHES);
    rc = over <= LIMIT_US ? 0 : 1;
  }
  tl_launch_info_free(&li);
  return rc;
}

/* ------------------------------------------------------------- checks */
typedef struct sum_case {
  dev_tensor *in; /* nin inputs */
  int nin;
  dev_tensor *out;
  float **host_in; /* their host values */
  size_t n;
} sum_case;

static void sum_reset(void *u) {
  sum_case *c = u;
  CU(G.cuMemsetD8(c->out->ptr, 0xFF, c->out->bytes));
}

/* out == in[0] + in[1] + ... (float32, left to right) for every element */
static bool sum_check(void *u) {
  sum_case *c = u;
  float *h = download(c->out->ptr, c->out->bytes);
  size_t bad = 0;
  for (size_t i = 0; i < c->n; i++) {
    float s = c->host_in[0][i];
    for (int j = 1; j < c->nin; j++) s = s + c->host_in[j][i];
    bad += h[i] != s;
  }
  free(h);
  if (bad) fprintf(stderr, "%zu of %zu elements differ\n", bad, c->n);
  return bad == 0;
}

int main(void) {
  tl_context *ctx;
  if (tl_context_create(&ctx) != TL_OK) return 1;
  gpu_init(ctx);
  launch_fn bare = NULL;
  *(void **)&bare = dlsym(g_driver, "cuLaunchKernel");
  if (!bare) {
    printf("SKIP: no cuLaunchKernel in the driver\n");
    return GPU_SKIP;
  }
  char csvp[1024];
  const char *outdir = getenv("OUT");
  snprintf(csvp, sizeof csvp, "%s/bench_launch.csv", outdir && *outdir ? outdir : ".");
  FILE *csv = fopen(csvp, "w");
  if (!csv) {
    fprintf(stderr, "cannot write %s\n", csvp);
    return 1;
  }
  fprintf(csv, "case,params,grid,block,tl_call_us,bare_launch_us,overhead_us,calls_per_batch,batches\n");
  printf("bench_launch: host time per launch, us (median over %d alternating batches; limit %.1f us)\n", BATCHES,
         LIMIT_US);
  printf("%-10s %6s %12s %12s %12s\n", "case", "params", "tl_call", "bare", "overhead");
  int fails = 0;
  char path[1024];

  /* 3 args: elementwise_add.py, checked */
  {
    snprintf(path, sizeof path, "%s/elementwise_add.py", kernel_dir());
    tl_define defs[2] = {{"M", "32"}, {"N", "128"}};
    tl_kernel *k = compile(ctx, path, NULL, NULL, defs, 2);
    int64_t shape[2] = {32, 128};
    dev_tensor t[3];
    float *h[2] = {dev_random(&t[0], DT_F32, 2, shape), dev_random(&t[1], DT_F32, 2, shape)};
    dev_alloc(&t[2], DT_F32, 2, shape);
    tl_arg args[3] = {tl_arg_tensor(&t[0].t), tl_arg_tensor(&t[1].t), tl_arg_tensor(&t[2].t)};
    sum_case sc = {t, 2, &t[2], h, 32 * 128};
    fails += run_case(ctx, csv, "3 args", k, args, 3, bare, CALLS, sum_check, sum_reset, &sc);
    for (int i = 0; i < 3; i++) dev_free(&t[i]);
    free(h[0]);
    free(h[1]);
    tl_kernel_destroy(k);
  }
  /* 0 args */
  {
    tl_kernel *k = compile(ctx, "benchmarks/launch/launch_kernels.py", "launch0", NULL, NULL, 0);
    fails += run_case(ctx, csv, "0 args", k, NULL, 0, bare, CALLS, NULL, NULL, NULL);
    tl_kernel_destroy(k);
  }
  /* 19 args, checked */
  {
    tl_kernel *k = compile(ctx, "benchmarks/launch/launch_kernels.py", "launch19", NULL, NULL, 0);
    int64_t shape[1] = {128};
    dev_tensor t[19];
    float *h[18];
    tl_arg args[19];
    for (int i = 0; i < 18; i++) h[i] = dev_random(&t[i], DT_F32, 1, shape);
    dev_alloc(&t[18], DT_F32, 1, shape);
    for (int i = 0; i < 19; i++) args[i] = tl_arg_tensor(&t[i].t);
    sum_case sc = {t, 18, &t[18], h, 128};
    fails += run_case(ctx, csv, "19 args", k, args, 19, bare, CALLS, sum_check, sum_reset, &sc);
    for (int i = 0; i < 19; i++) dev_free(&t[i]);
    for (int i = 0; i < 18; i++) free(h[i]);
    tl_kernel_destroy(k);
  }
  /* tensor maps: gemm.py on sm_90a */
  if (!strncmp(tl_device_default_target(), "sm_90", 5)) {
    snprintf(path, sizeof path, "%s/gemm.py", kernel_dir());
    tl_define defs[3] = {{"M", "128"}, {"N", "128"}, {"K", "64"}};
    tl_kernel *k = compile(ctx, path, NULL, "sm_90a", defs, 3);
    int64_t sa[2] = {128, 64}, sb[2] = {64, 128}, sc[2] = {128, 128};
    dev_tensor t[3];
    free(dev_random(&t[0], DT_F16, 2, sa));
    free(dev_random(&t[1], DT_F16, 2, sb));
    dev_alloc(&t[2], DT_F16, 2, sc);
    tl_arg args[3] = {tl_arg_tensor(&t[0].t), tl_arg_tensor(&t[1].t), tl_arg_tensor(&t[2].t)};
    fails += run_case(ctx, csv, "tma", k, args, 3, bare, TMA_CALLS, NULL, NULL, NULL);
    for (int i = 0; i < 3; i++) dev_free(&t[i]);
    tl_kernel_destroy(k);
  } else {
    printf("SKIP: tma (the default target is %s, not sm_90a)\n", tl_device_default_target());
  }
  fclose(csv);
  printf("csv: %s\n", csvp);
  tl_context_destroy(ctx);
  return fails ? 1 : 0;
}
