/* examples/gemm.c: using libtilelang from C, the way a user would.
 *
 *   gemm [-D name=value ...] [--file examples/gemm.py] [--reps N]
 *
 * Compiles a TileLang GEMM kernel file (default examples/gemm.py, found in
 * $TL_KERNEL_DIR or ./examples) with the -D overrides given on the command
 * line (M, N, K, block sizes, dtype, num_stages, threads, ...), reads the
 * problem size and dtype back from the compiled kernel's signature, makes
 * random inputs (uniform [-1, 1)), runs it, checks every element against
 * cuBLAS (cublasGemmEx, f32 compute; tolerance of DESIGN §8 by dtype) and
 * prints the time and TFLOP/s of both and their ratio, all from this run.
 * The CUDA driver and cuBLAS are loaded with dlopen (test/GPU/gemm_util.h),
 * so the program builds without the CUDA toolkit.  Exit 0 on success, 1 on
 * a failed check or error, 77 when no GPU is present.
 *
 * Example: gemm -D M=4096 -D N=4096 -D K=4096 -D block_N=256 -D threads=256 */
#include <getopt.h>

#include "../test/GPU/gemm_util.h"

static tl_context *ctx;

typedef struct run_state {
  tl_kernel *k;
  dev_tensor A, B, C;
  int M, N, K;
  dt_kind d;
} run_state;

static void launch_ours(void *p, int i) {
  (void)i;
  run_state *s = p;
  tl_arg args[3] = {tl_arg_tensor(&s->A.t), tl_arg_tensor(&s->B.t), tl_arg_tensor(&s->C.t)};
  if (tl_kernel_call(ctx, s->k, args, 3, NULL, NULL) != TL_OK) {
    fprintf(stderr, "gemm: call failed: %s\n", tl_context_last_error(ctx));
    exit(1);
  }
}
static void launch_cublas(void *p, int i) {
  (void)i;
  run_state *s = p;
  if (cublas_gemm(s->A.ptr, s->B.ptr, s->C.ptr, s->M, s->N, s->K, s->d, s->d, false, false) != 0) {
    fprintf(stderr, "gemm: cublasGemmEx failed\n");
    exit(1);
  }
}

int main(int argc, char **argv) {
  tl_define defs[64];
  size_t ndefs = 0;
  char file[1024];
  snprintf(file, sizeof file, "%s/gemm.py", kernel_dir());
  int reps = 50;
  static const struct option longopts[] = {{"file", required_argument, NULL, 'f'},
                                           {"reps", required_argument, NULL, 'r'},
                                           {"help", no_argument, NULL, 'h'},
                                           {NULL, 0, NULL, 0}};
  int c;
  while ((c = getopt_long(argc, argv, "D:h", longopts, NULL)) != -1) {
    if (c == 'D') {
      char *eq = strchr(optarg, '=');
      if (!eq || eq == optarg || ndefs == 64) {
        fprintf(stderr, "gemm: -D expects name=value\n");
        return 2;
      }
      *eq = 0;
      defs[ndefs++] = (tl_define){optarg, eq + 1};
    } else if (c == 'f') {
      snprintf(file, sizeof file, "%s", optarg);
    } else if (c == 'r') {
      reps = atoi(optarg);
      if (reps < 1) reps = 1;
    } else {
      fprintf(stderr, "usage: gemm [-D name=value ...] [--file FILE] [--reps N]\n");
      return c == 'h' ? 0 : 2;
    }
  }

  if (tl_context_create(&ctx) != TL_OK) return 1;
  gpu_init(ctx); /* exits 77 without a GPU */
  tl_compile_options o = {0};
  o.out_idx_mode = TL_OUT_IDX_NONE; /* we pass C ourselves, so timing does not allocate */
  run_state s;
  memset(&s, 0, sizeof s);
  double t0 = now_ms();
  if (tl_kernel_compile_file(ctx, file, defs, ndefs, &o, &s.k) != TL_OK) {
    fprintf(stderr, "%s\n", tl_context_last_error(ctx));
    return 1;
  }
  double t_compile = now_ms() - t0;
  /* A (M, K), B (K, N), C (M, N): sizes and dtype from the signature */
  int64_t a0, a1, b1;
  if (tl_kernel_param_count(s.k) != 3 || !tl_kernel_param_dim(s.k, 0, 0, &a0, NULL) ||
      !tl_kernel_param_dim(s.k, 0, 1, &a1, NULL) || !tl_kernel_param_dim(s.k, 1, 1, &b1, NULL)) {
    fprintf(stderr, "gemm: %s is not a static GEMM C = A @ B with A (M, K), B (K, N)\n", file);
    return 1;
  }
  s.M = (int)a0, s.K = (int)a1, s.N = (int)b1;
  tl_dtype dt = tl_kernel_param_dtype(s.k, 0);
  s.d = dt.code == TL_TYPE_BFLOAT ? DT_BF16 : dt.bits == 32 ? DT_F32 : DT_F16;
  printf("gemm: %s, M=%d N=%d K=%d %s, compiled for %s in %.0f ms (%s)\n", file, s.M, s.N, s.K, dt_name(s.d),
         tl_kernel_target(s.k), t_compile,
         strstr(tl_kernel_ptx(s.k), "wgmma.mma_async") ? "Hopper path: TMA + mbarriers + wgmma, producer warpgroup"
                                                       : "cp.async + ldmatrix + mma.sync path");

  rng_seed((uint64_t)time(NULL));
  int64_t sa[2] = {s.M, s.K}, sb[2] = {s.K, s.N}, sc[2] = {s.M, s.N};
  free(dev_random(&s.A, s.d, 2, sa));
  free(dev_random(&s.B, s.d, 2, sb));
  dev_alloc(&s.C, s.d, 2, sc);
  CU(G.cuMemsetD8(s.C.ptr, 0xFF, s.C.bytes)); /* NaN: unwritten elements show */
  launch_ours(&s, 0);
  CU(G.cuCtxSynchronize());
  size_t n = (size_t)s.M * s.N;
  void *hc = download(s.C.ptr, s.C.bytes);
  if (!cublas_load()) {
    printf("gemm: cuBLAS unavailable: no check, no ratio\n");
    double t = time_launches(launch_ours, &s, 10, reps);
    printf("ours: %.3f ms, %.1f TFLOP/s\n", t, 2.0 * s.M * s.N * s.K / (t * 1e-3) / 1e12);
    return 0;
  }
  dev_tensor ours_c = s.C;
  dev_alloc(&s.C, s.d, 2, sc);
  CU(G.cuMemsetD8(s.C.ptr, 0xFF, s.C.bytes));
  launch_cublas(&s, 0);
  CU(G.cuCtxSynchronize());
  void *hr = download(s.C.ptr, s.C.bytes);
  double atol, rtol;
  dt_tol(s.d, &atol, &rtol);
  cmp_result r = compare_out(s.d, hc, n, NULL, hr, atol, rtol);
  printf("check vs cuBLAS: %s (%zu of %zu elements outside %g + %g|ref|; max |diff| %.3g)\n", r.bad ? "FAIL" : "PASS",
         r.bad, n, atol, rtol, r.max_err);
  double t_cub = time_launches(launch_cublas, &s, 10, reps);
  dev_free(&s.C);
  s.C = ours_c;
  double t = time_launches(launch_ours, &s, 10, reps);
  double flop = 2.0 * s.M * s.N * s.K;
  printf("ours:   %.3f ms  %7.1f TFLOP/s\n", t, flop / (t * 1e-3) / 1e12);
  printf("cuBLAS: %.3f ms  %7.1f TFLOP/s\n", t_cub, flop / (t_cub * 1e-3) / 1e12);
  printf("ratio to cuBLAS: %.3f (median of %d launches each)\n", t_cub / t, reps);
  free(hc);
  free(hr);
  dev_free(&s.A);
  dev_free(&s.B);
  dev_free(&s.C);
  tl_kernel_destroy(s.k);
  CB.destroy(CB.handle);
  tl_context_destroy(ctx);
  return r.bad ? 1 : 0;
}
