/* GEMM benchmark of T.gemm's tf32 and int8 mma.sync forms (issue 14,
 * acceptance 2): test/GPU/kernels/gemm_general.py next to cuBLAS in one
 * process, 4096 x 4096 x 4096:
 *  - tf32: float32 A (M x K), B (K x N, "NN") and C; ours computes with
 *    mma.sync m16n8k8 .tf32 (operands rounded by cvt.rna.tf32.f32), cuBLAS
 *    with cublasGemmEx(CUDA_R_32F, CUBLAS_COMPUTE_32F_FAST_TF32);
 *  - int8: int8 A (M x K) and B stored N x K ("NT", the layout cuBLAS's
 *    integer kernels want: column-major op(A) = T), int32 C; ours with
 *    mma.sync m16n8k32 .s8, cuBLAS with cublasGemmEx(CUDA_R_8I, CUDA_R_32I,
 *    CUBLAS_COMPUTE_32I).
 * Method: random inputs (float32 uniform [-1, 1), int8 all of -128..127);
 * before timing each of our configurations is checked against cuBLAS
 * (int32: bit for bit; tf32: the maximum |ours - cuBLAS| and each one's
 * maximum error against a float64 product of 4096 sampled elements are
 * printed, and ours must be within 2x cuBLAS's error plus 1e-3); then ours
 * (each candidate tile configuration that compiles) and cuBLAS are timed
 * interleaved (time_interleaved, gemm_util.h: 10 warm-up rounds, median of
 * TL_BENCH_REPS = 50 launches each, CUDA events on the legacy stream).
 * Output: one line per configuration (time, TFLOP/s, ratio ours / cuBLAS in
 * throughput) and $OUT/bench_gemm_types.csv (or ./): dtype, layout, M, N, K,
 * config, ours_ms, ours_tflops, cublas_ms, cublas_tflops, ratio, check,
 * max_diff_vs_cublas.  Exit 1 when a check fails, 77 without GPU or cuBLAS.
 * The kernel file comes from $TL_GPU_KERNELS (default test/GPU/kernels). */
#include "../../test/GPU/gemm_util.h"

enum { CUDA_R_8I_ = 3, CUDA_R_32I_ = 10 };
enum { CUBLAS_COMPUTE_32F_FAST_TF32_ = 77, CUBLAS_COMPUTE_32I_ = 72 };

static tl_context *ctx;
static int reps = 50;

typedef struct bcase {
  bool i8; /* int8 -> int32 NT, else tf32 NN */
  int M, N, K;
  unsigned long long A, B, C, Cc; /* device buffers: inputs, ours, cuBLAS */
  DLTensor tA, tB, tC;
  int64_t sA[2], sB[2], sC[2];
  tl_kernel *k;
} bcase;

static void launch_ours(void *p, int i) {
  (void)i;
  bcase *c = p;
  tl_arg args[3] = {tl_arg_tensor(&c->tA), tl_arg_tensor(&c->tB), tl_arg_tensor(&c->tC)};
  if (tl_kernel_call(ctx, c->k, args, 3, NULL, NULL) != TL_OK) {
    fprintf(stderr, "call failed: %s\n", tl_context_last_error(ctx));
    exit(1);
  }
}

/* row-major C = A B (tf32: B K x N) or A Bᵀ (int8: B N x K) as the
 * column-major Cᵀ = op(B) Aᵀ (gemm_util.h's convention) */
static int cublas_run(const bcase *c) {
  if (c->i8) {
    int32_t alpha = 1, beta = 0;
    return CB.gemm_ex(CB.handle, CUBLAS_OP_T_, CUBLAS_OP_N_, c->N, c->M, c->K, &alpha, (const void *)(uintptr_t)c->B,
                      CUDA_R_8I_, c->K, (const void *)(uintptr_t)c->A, CUDA_R_8I_, c->K, &beta,
                      (void *)(uintptr_t)c->Cc, CUDA_R_32I_, c->N, CUBLAS_COMPUTE_32I_, CUBLAS_GEMM_DEFAULT_);
  }
  float alpha = 1.0f, beta = 0.0f;
  return CB.gemm_ex(CB.handle, CUBLAS_OP_N_, CUBLAS_OP_N_, c->N, c->M, c->K, &alpha, (const void *)(uintptr_t)c->B,
                    CUDA_R_32F_, c->N, (const void *)(uintptr_t)c->A, CUDA_R_32F_, c->K, &beta,
                    (void *)(uintptr_t)c->Cc, CUDA_R_32F_, c->N, CUBLAS_COMPUTE_32F_FAST_TF32_, CUBLAS_GEMM_DEFAULT_);
}
static void launch_cublas(void *p, int i) {
  (void)i;
  int st = cublas_run(p);
  if (st != 0) {
    fprintf(stderr, "cublasGemmEx failed: status %d\n", st);
    exit(1);
  }
}

static void dev_tensor_of(DLTensor *t, unsigned long long ptr, int64_t *shape, int64_t d0, int64_t d1, DLDataType dt) {
  shape[0] = d0, shape[1] = d1;
  memset(t, 0, sizeof *t);
  t->data = (void *)(uintptr_t)ptr;
  t->device.device_type = kDLCUDA;
  t->ndim = 2;
  t->dtype = dt;
  t->shape = shape;
}

typedef struct cfg {
  int bm, bn, bk, threads, stages;
} cfg;
static const cfg tf32_cfgs[] = {{128, 128, 32, 256, 3}, {128, 128, 32, 256, 4}, {128, 256, 32, 256, 3}};
static const cfg i8_cfgs[] = {{128, 128, 64, 128, 3}, {128, 256, 64, 256, 3}, {256, 128, 64, 256, 3}};

static int bench_case(bool i8, FILE *csv) {
  bcase c;
  memset(&c, 0, sizeof c);
  c.i8 = i8;
  c.M = c.N = c.K = 4096;
  size_t n_in = (size_t)c.M * c.K, eb = i8 ? 1 : 4, n_out = (size_t)c.M * c.N;
  CU(G.cuMemAlloc(&c.A, n_in * eb));
  CU(G.cuMemAlloc(&c.B, n_in * eb));
  CU(G.cuMemAlloc(&c.C, n_out * 4));
  CU(G.cuMemAlloc(&c.Cc, n_out * 4));
  void *hA = malloc(n_in * eb), *hB = malloc(n_in * eb);
  for (int x = 0; x < 2; x++) {
    uint8_t *h = x ? hB : hA;
    for (size_t i = 0; i < n_in; i++) {
      if (i8) h[i] = (uint8_t)(rng_uniform() * 128.0 + 128.0);
      else ((float *)h)[i] = (float)rng_uniform();
    }
  }
  CU(G.cuMemcpyHtoD(c.A, hA, n_in * eb));
  CU(G.cuMemcpyHtoD(c.B, hB, n_in * eb));
  DLDataType din = i8 ? (DLDataType){kDLInt, 8, 1} : (DLDataType){kDLFloat, 32, 1};
  DLDataType dout = i8 ? (DLDataType){kDLInt, 32, 1} : (DLDataType){kDLFloat, 32, 1};
  dev_tensor_of(&c.tA, c.A, c.sA, c.M, c.K, din);
  dev_tensor_of(&c.tB, c.B, c.sB, i8 ? c.N : c.K, i8 ? c.K : c.N, din);
  dev_tensor_of(&c.tC, c.C, c.sC, c.M, c.N, dout);
  const char *dname = i8 ? "int8" : "tf32", *layout = i8 ? "NT" : "NN";
  /* cuBLAS's result once, for the checks */
  launch_cublas(&c, 0);
  CU(G.cuCtxSynchronize());
  void *hcub = download(c.Cc, n_out * 4);
  /* float64 products of sampled elements (tf32) */
  enum { NS = 4096 };
  size_t sidx[NS];
  double sref[NS];
  for (int s = 0; s < NS && !i8; s++) {
    size_t e = (size_t)((rng_uniform() + 1.0) * 0.5 * (double)n_out) % n_out, i = e / (size_t)c.N, j = e % (size_t)c.N;
    double x = 0;
    for (int q = 0; q < c.K; q++) x += (double)((float *)hA)[i * c.K + q] * (double)((float *)hB)[(size_t)q * c.N + j];
    sidx[s] = e, sref[s] = x;
  }
  double cub_err = 0;
  for (int s = 0; s < NS && !i8; s++) {
    double d = fabs(((float *)hcub)[sidx[s]] - sref[s]);
    if (d > cub_err) cub_err = d;
  }
  const cfg *cfgs = i8 ? i8_cfgs : tf32_cfgs;
  int ncfg = 3, fails = 0;
  char path[4096];
  snprintf(path, sizeof path, "%s/gemm_general.py", gemm_kernels_dir());
  for (int ci = 0; ci < ncfg; ci++) {
    const cfg *g = &cfgs[ci];
    char v[5][16];
    snprintf(v[0], 16, "%d", g->bm), snprintf(v[1], 16, "%d", g->bn), snprintf(v[2], 16, "%d", g->bk);
    snprintf(v[3], 16, "%d", g->threads), snprintf(v[4], 16, "%d", g->stages);
    tl_define defs[] = {{"M", "4096"},
                        {"N", "4096"},
                        {"K", "4096"},
                        {"block_M", v[0]},
                        {"block_N", v[1]},
                        {"block_K", v[2]},
                        {"threads", v[3]},
                        {"num_stages", v[4]},
                        {"dtype", i8 ? "int8" : "float32"},
                        {"accum_dtype", i8 ? "int32" : "float32"},
                        {"out_dtype", i8 ? "int32" : "float32"},
                        {"trans_B", i8 ? "True" : "False"}};
    char cname[64];
    snprintf(cname, sizeof cname, "%dx%dx%d/%dt/%ds", g->bm, g->bn, g->bk, g->threads, g->stages);
    tl_compile_options o = {0};
    o.flags = TL_COMPILE_POISON_OUTPUTS;
    o.out_idx_mode = TL_OUT_IDX_NONE; /* C is passed in (cuBLAS compares against it) */
    if (tl_kernel_compile_file(ctx, path, defs, sizeof defs / sizeof defs[0], &o, &c.k) != TL_OK) {
      printf("%s %s 4096^3 %s: does not compile: %s\n", dname, layout, cname, tl_context_last_error(ctx));
      continue;
    }
    launch_ours(&c, 0);
    CU(G.cuCtxSynchronize());
    void *hours = download(c.C, n_out * 4);
    double maxdiff = 0, our_err = 0;
    size_t bad = 0;
    for (size_t e = 0; e < n_out; e++) {
      double a = i8 ? ((int32_t *)hours)[e] : ((float *)hours)[e];
      double b = i8 ? ((int32_t *)hcub)[e] : ((float *)hcub)[e];
      double d = fabs(a - b);
      if (!(d <= maxdiff)) maxdiff = isfinite(d) ? d : INFINITY;
      if (i8 && d != 0) bad++;
    }
    for (int s = 0; s < NS && !i8; s++) {
      double d = fabs(((float *)hours)[sidx[s]] - sref[s]);
      if (!(d <= our_err)) our_err = isfinite(d) ? d : INFINITY;
    }
    bool ok = i8 ? bad == 0 : our_err <= 2 * cub_err + 1e-3;
    if (!ok) fails++;
    if (i8)
      printf("%s %s %s: vs cuBLAS %zu of %zu elements differ (max |diff| %g) -> %s\n", dname, layout, cname, bad, n_out,
             maxdiff, ok ? "PASS" : "FAIL");
    else
      printf("%s %s %s: max |ours - cuBLAS| %.3g; max |err| vs float64 on %d samples: ours %.3g, cuBLAS %.3g -> %s\n",
             dname, layout, cname, maxdiff, NS, our_err, cub_err, ok ? "PASS" : "FAIL");
    free(hours);
    double med[2] = {0, 0};
    if (ok) {
      void (*const fns[2])(void *, int) = {launch_cublas, launch_ours};
      void *const args[2] = {&c, &c};
      time_interleaved(2, fns, args, 10, reps, 5, med);
    }
    double fl = 2.0 * c.M * c.N * c.K;
    double tc = med[0] > 0 ? fl / (med[0] * 1e-3) / 1e12 : 0, to = med[1] > 0 ? fl / (med[1] * 1e-3) / 1e12 : 0;
    if (ok)
      printf("%s %s 4096^3 %s: ours %.3f ms %.1f TFLOP/s, cuBLAS %.3f ms %.1f TFLOP/s, ours/cuBLAS %.3f\n", dname,
             layout, cname, med[1], to, med[0], tc, tc > 0 ? to / tc : 0);
    if (csv)
      fprintf(csv, "%s,%s,%d,%d,%d,%s,%.4f,%.2f,%.4f,%.2f,%.4f,%s,%g\n", dname, layout, c.M, c.N, c.K, cname, med[1],
              to, med[0], tc, tc > 0 ? to / tc : 0, ok ? "PASS" : "FAIL", maxdiff);
    tl_kernel_destroy(c.k);
    c.k = NULL;
  }
  free(hA), free(hB), free(hcub);
  G.cuMemFree(c.A), G.cuMemFree(c.B), G.cuMemFree(c.C), G.cuMemFree(c.Cc);
  return fails;
}

int main(void) {
  if (tl_context_create(&ctx) != TL_OK) return 1;
  gpu_init(ctx);
  if (!cublas_load()) return GPU_SKIP;
  const char *r = getenv("TL_BENCH_REPS");
  if (r && atoi(r) > 0) reps = atoi(r);
  rng_seed(14);
  char csvp[4096];
  const char *od = getenv("OUT");
  snprintf(csvp, sizeof csvp, "%s/bench_gemm_types.csv", od && *od ? od : ".");
  FILE *csv = fopen(csvp, "w");
  if (csv)
    fprintf(csv,
            "dtype,layout,M,N,K,config,ours_ms,ours_tflops,cublas_ms,cublas_tflops,ratio,check,"
            "max_diff_vs_cublas\n");
  int fails = bench_case(false, csv) + bench_case(true, csv);
  if (csv) fclose(csv);
  printf("%s: %d failed check(s); CSV %s\n", fails ? "FAIL" : "PASS", fails, csvp);
  tl_context_destroy(ctx);
  return fails ? 1 : 0;
}
