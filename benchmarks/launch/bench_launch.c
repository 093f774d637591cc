/* Launch-overhead benchmark (issue 6, "benchmarks/launch"; acceptance 3: a
 * tl call costs under 2 us of host time above a bare cuLaunchKernel).
 *
 * Method: examples/elementwise_add.py at M = 32, N = 128 (one block of 128
 * threads, ~2 us on the GPU, so the host, not the GPU, sets the pace) with
 * out_idx none (the caller passes C: no allocation per call), float32.
 * tl_kernel_launch_info gives the CUfunction, grid, block, shared memory
 * and parameter array that tl_kernel_call launches; the bare loop calls
 * cuLaunchKernel with exactly those.  Each batch is CALLS asynchronous
 * launches on the legacy default stream between two CLOCK_MONOTONIC stamps
 * (the stream is synchronized before and after, outside the interval);
 * BATCHES batches of each kind alternate (tl, bare, tl, ...) so that clock
 * and driver drift hit both; the figure is the median over batches of the
 * host time per launch.  The result of the tl launches is checked (C = A + B
 * exactly, every element) before anything is timed.
 * Output: a table on stdout and $OUT/bench_launch.csv (or ./).  Exit 0 when
 * the overhead is under 2 us, 1 otherwise or on a failure, 77 without a GPU. */
#include "../../test/GPU/gpu_util.h"

#define CALLS 1000
#define BATCHES 25
#define WARM 200

typedef CUres (*launch_fn)(void *f, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by,
                           unsigned bz, unsigned smem, void *stream, void **params, void **extra);

int main(void) {
  tl_context *ctx;
  if (tl_context_create(&ctx) != TL_OK) return 1;
  gpu_init(ctx);
  void *lib = dlopen(getenv("TL_CUDA_DRIVER") && *getenv("TL_CUDA_DRIVER") ? getenv("TL_CUDA_DRIVER")
                                                                          : "libcuda.so.1",
                     RTLD_NOW | RTLD_LOCAL);
  launch_fn cuLaunchKernel = NULL;
  if (lib) *(void **)&cuLaunchKernel = dlsym(lib, "cuLaunchKernel");
  if (!cuLaunchKernel) {
    printf("SKIP: no cuLaunchKernel in the driver\n");
    return GPU_SKIP;
  }
  char path[1024];
  snprintf(path, sizeof path, "%s/elementwise_add.py", kernel_dir());
  tl_define defs[2] = {{"M", "32"}, {"N", "128"}};
  tl_compile_options o = {0};
  o.out_idx_mode = TL_OUT_IDX_NONE;
  tl_kernel *k = NULL;
  if (tl_kernel_compile_file(ctx, path, defs, 2, &o, &k) != TL_OK) {
    fprintf(stderr, "compile failed: %s\n", tl_context_last_error(ctx));
    return 1;
  }
  int64_t shape[2] = {32, 128};
  dev_tensor A, B, C;
  float *ha = dev_random(&A, DT_F32, 2, shape), *hb = dev_random(&B, DT_F32, 2, shape);
  dev_alloc(&C, DT_F32, 2, shape);
  CU(G.cuMemsetD8(C.ptr, 0xFF, C.bytes));
  tl_arg args[3] = {tl_arg_tensor(&A.t), tl_arg_tensor(&B.t), tl_arg_tensor(&C.t)};
  tl_launch_info li;
  if (tl_kernel_launch_info(ctx, k, args, 3, &li) != TL_OK) {
    fprintf(stderr, "tl_kernel_launch_info failed: %s\n", tl_context_last_error(ctx));
    return 1;
  }
  printf("bench_launch: %s at 32x128 float32: grid %u x %u x %u, block %u, smem %u, %d parameters\n", path,
         li.grid[0], li.grid[1], li.grid[2], li.block, li.smem, li.nparams);

  /* check the tl launch first */
  if (tl_kernel_call(ctx, k, args, 3, NULL, NULL) != TL_OK) {
    fprintf(stderr, "call failed: %s\n", tl_context_last_error(ctx));
    return 1;
  }
  CU(G.cuCtxSynchronize());
  float *hc = download(C.ptr, C.bytes);
  size_t n = 32 * 128, bad = 0;
  for (size_t i = 0; i < n; i++) bad += hc[i] != ha[i] + hb[i];
  /* and the bare launch of the same function and parameters */
  CU(G.cuMemsetD8(C.ptr, 0xFF, C.bytes));
  CU(cuLaunchKernel(li.function, li.grid[0], li.grid[1], li.grid[2], li.block, 1, 1, li.smem, NULL, li.params,
                    NULL));
  CU(G.cuCtxSynchronize());
  free(hc);
  hc = download(C.ptr, C.bytes);
  for (size_t i = 0; i < n; i++) bad += hc[i] != ha[i] + hb[i];
  free(hc);
  if (bad) {
    fprintf(stderr, "CHECK FAILED: %zu elements of C != A + B\n", bad);
    return 1;
  }

  for (int i = 0; i < WARM; i++) {
    if (tl_kernel_call(ctx, k, args, 3, NULL, NULL) != TL_OK) return 1;
    CU(cuLaunchKernel(li.function, li.grid[0], li.grid[1], li.grid[2], li.block, 1, 1, li.smem, NULL, li.params,
                      NULL));
  }
  CU(G.cuCtxSynchronize());
  double t_tl[BATCHES], t_bare[BATCHES];
  for (int b = 0; b < BATCHES; b++) {
    double t0 = now_ms();
    for (int i = 0; i < CALLS; i++)
      if (tl_kernel_call(ctx, k, args, 3, NULL, NULL) != TL_OK) {
        fprintf(stderr, "call failed: %s\n", tl_context_last_error(ctx));
        return 1;
      }
    t_tl[b] = (now_ms() - t0) * 1e3 / CALLS;
    CU(G.cuCtxSynchronize());
    t0 = now_ms();
    for (int i = 0; i < CALLS; i++)
      CU(cuLaunchKernel(li.function, li.grid[0], li.grid[1], li.grid[2], li.block, 1, 1, li.smem, NULL,
                        li.params, NULL));
    t_bare[b] = (now_ms() - t0) * 1e3 / CALLS;
    CU(G.cuCtxSynchronize());
  }
  double mt = median(t_tl, BATCHES), mb = median(t_bare, BATCHES);
  double over = mt - mb;
  bool ok = over < 2.0;
  printf("%-28s %10s\n", "host time per launch", "us");
  printf("%-28s %10.3f\n", "tl_kernel_call", mt);
  printf("%-28s %10.3f\n", "bare cuLaunchKernel", mb);
  printf("%-28s %10.3f   (acceptance: < 2 us: %s)\n", "overhead", over, ok ? "PASS" : "FAIL");
  printf("(median over %d batches of %d asynchronous launches each, alternating)\n", BATCHES, CALLS);
  char csv[1024];
  const char *outdir = getenv("OUT");
  snprintf(csv, sizeof csv, "%s/bench_launch.csv", outdir && *outdir ? outdir : ".");
  FILE *f = fopen(csv, "w");
  if (f) {
    fprintf(f, "kernel,grid,block,tl_call_us,bare_launch_us,overhead_us,calls_per_batch,batches\n");
    fprintf(f, "elementwise_add_32x128_f32,%u,%u,%.3f,%.3f,%.3f,%d,%d\n", li.grid[0] * li.grid[1] * li.grid[2],
            li.block, mt, mb, over, CALLS, BATCHES);
    fclose(f);
    printf("csv: %s\n", csv);
  }
  tl_launch_info_free(&li);
  dev_free(&A);
  dev_free(&B);
  dev_free(&C);
  free(ha);
  free(hb);
  tl_kernel_destroy(k);
  tl_context_destroy(ctx);
  return ok ? 0 : 1;
}
