/* Benchmark (issue 7, acceptance 2): row softmax (examples/softmax.py) and
 * RMSNorm (examples/rms_norm.py) of (4096, 4096) float16 and float32 against
 * the device-to-device copy bandwidth measured in the same run, all as bytes
 * read plus written per second (the kernels read X and write Y: 2 x M x N
 * elements; a copy of M x N elements moves the same).  Each configuration
 * (block_M rows per block, threads) is timed with CUDA events, one launch
 * per event pair after a warm-up, median of 50.  Prints a table, writes CSV
 * to $OUT/bench_norm.csv (or the current directory), and exits 1 when the
 * best configuration of a kernel and dtype reaches < 80% of the copy. */
#include "../../test/GPU/gpu_util.h"

#define REPS 50
#define WARMUP 5

static void *e0, *e1;

static double time_copy(unsigned long long dst, unsigned long long src, size_t bytes) {
  double t[REPS];
  for (int i = 0; i < WARMUP; i++) CU(G.cuMemcpyDtoDAsync(dst, src, bytes, NULL));
  for (int i = 0; i < REPS; i++) {
    float ms;
    CU(G.cuEventRecord(e0, NULL));
    CU(G.cuMemcpyDtoDAsync(dst, src, bytes, NULL));
    CU(G.cuEventRecord(e1, NULL));
    CU(G.cuEventSynchronize(e1));
    CU(G.cuEventElapsedTime(&ms, e0, e1));
    t[i] = ms;
  }
  return median(t, REPS);
}

/* median ms of one launch, or -1 when it does not compile/run */
static double time_kernel(tl_context *ctx, const char *file, dt_kind d, int block_m, int threads, dev_tensor *X,
                          dev_tensor *Y) {
  char path[1024], bm[16], th[16];
  snprintf(path, sizeof path, "%s/%s", kernel_dir(), file);
  snprintf(bm, sizeof bm, "%d", block_m);
  snprintf(th, sizeof th, "%d", threads);
  tl_define defs[] = {{"M", "4096"}, {"N", "4096"}, {"dtype", dt_name(d)}, {"block_M", bm}, {"threads", th}};
  tl_compile_options o = {0};
  o.out_idx_mode = TL_OUT_IDX_NONE;
  tl_kernel *k = NULL;
  if (tl_kernel_compile_file(ctx, path, defs, 5, &o, &k) != TL_OK) {
    fprintf(stderr, "  %s %s block_M=%d threads=%d: compile failed: %s\n", file, dt_name(d), block_m, threads,
            tl_context_last_error(ctx));
    return -1;
  }
  tl_arg args[2] = {tl_arg_tensor(&X->t), tl_arg_tensor(&Y->t)};
  double t[REPS];
  for (int i = 0; i < WARMUP + REPS; i++) {
    float ms;
    CU(G.cuEventRecord(e0, NULL));
    if (tl_kernel_call(ctx, k, args, 2, NULL, NULL) != TL_OK) {
      fprintf(stderr, "  %s: call failed: %s\n", file, tl_context_last_error(ctx));
      tl_kernel_destroy(k);
      return -1;
    }
    CU(G.cuEventRecord(e1, NULL));
    CU(G.cuEventSynchronize(e1));
    CU(G.cuEventElapsedTime(&ms, e0, e1));
    if (i >= WARMUP) t[i - WARMUP] = ms;
  }
  tl_kernel_destroy(k);
  return median(t, REPS);
}

int main(void) {
  tl_context *ctx;
  if (tl_context_create(&ctx) != TL_OK) return 1;
  gpu_init(ctx);
  CU(G.cuEventCreate(&e0, 0));
  CU(G.cuEventCreate(&e1, 0));
  char csv[1024];
  const char *outdir = getenv("OUT");
  snprintf(csv, sizeof csv, "%s/bench_norm.csv", outdir && *outdir ? outdir : ".");
  FILE *f = fopen(csv, "w");
  if (f) fprintf(f, "kernel,dtype,block_M,threads,time_ms,GBps,copy_GBps,ratio\n");
  static const char *const files[2] = {"softmax.py", "rms_norm.py"};
  static const int cfg[][2] = {{1, 128}, {2, 128}, {4, 128}, {8, 256}, {4, 256}, {1, 256}, {1, 512}};
  int64_t shape[2] = {4096, 4096};
  int missed = 0;
  printf("%-12s %-8s %7s %7s %9s %8s %8s %6s\n", "kernel", "dtype", "block_M", "threads", "time_ms", "GB/s", "copyGB/s",
         "ratio");
  for (int di = 0; di < 2; di++) {
    dt_kind d = di ? DT_F32 : DT_F16;
    dev_tensor X, Y;
    void *hx = dev_random(&X, d, 2, shape);
    free(hx);
    dev_alloc(&Y, d, 2, shape);
    size_t bytes = (size_t)(4096 * 4096) * dt_size(d);
    double copy_ms = time_copy(Y.ptr, X.ptr, bytes);
    double copy_bw = 2.0 * (double)bytes / (copy_ms * 1e6);
    for (int fi = 0; fi < 2; fi++) {
      double best = 0;
      for (size_t c = 0; c < sizeof cfg / sizeof cfg[0]; c++) {
        double ms = time_kernel(ctx, files[fi], d, cfg[c][0], cfg[c][1], &X, &Y);
        if (ms <= 0) continue;
        double bw = 2.0 * (double)bytes / (ms * 1e6);
        if (bw / copy_bw > best) best = bw / copy_bw;
        printf("%-12s %-8s %7d %7d %9.4f %8.1f %8.1f %6.3f\n", files[fi], dt_name(d), cfg[c][0], cfg[c][1], ms, bw,
               copy_bw, bw / copy_bw);
        if (f)
          fprintf(f, "%s,%s,%d,%d,%.5f,%.1f,%.1f,%.4f\n", files[fi], dt_name(d), cfg[c][0], cfg[c][1], ms, bw, copy_bw,
                  bw / copy_bw);
      }
      printf("  best %s %s: %.3f of the copy bandwidth (target 0.80)\n", files[fi], dt_name(d), best);
      if (best < 0.80) missed++;
    }
    dev_free(&X);
    dev_free(&Y);
  }
  if (f) fclose(f);
  printf("  csv: %s\n", csv);
  tl_context_destroy(ctx);
  return missed ? 1 : 0;
}
