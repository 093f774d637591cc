/* GPU acceptance test of T.atomic_add (issue 7, point 3) and GEMV:
 *
 *  1. examples/gemm_splitk.py, 1024^3 f16 inputs, split 4, accumulating into
 *     an f32 C with T.atomic_add (red.global.add.f32).  out_idx is None, so
 *     the test zeroes C itself before the launch.  Every element is checked
 *     against a float64 CPU product of the same inputs.  Tolerance: docs/testing.md "Numeric checks"
 *     for f32 (1e-4 + 1e-4 |ref|) plus a bound on the f32 rounding of the
 *     accumulation, (K/16 + split) * 2^-22 * sum_k |a_ik b_kj| (one
 *     accumulator rounding of at most 2 ulp per mma k-step and per atomic
 *     add, measured relative to the sum of the magnitudes of the products);
 *     a wrong or missing partial product is off by O(1) and fails.  The count
 *     of elements outside the plain dtype tolerance is printed too.
 *  2. The same with f16 and bf16 outputs (the f16x2 / bf16x2 vector atomics
 *     on sm_90; bf16 on sm_80 is a CAS loop): tolerance docs/testing.md "Numeric checks" for the
 *     dtype plus split * 2^-(p) * sum_s |P_s| (each of the `split` atomic adds
 *     rounds once to the output's p-bit significand; P_s the split's partial
 *     product, computed in float64) plus the mma bound of case 1.
 *  3. A second launch of case 1 on a re-zeroed C: the atomics commute only up
 *     to rounding, so the two runs are compared within the same bound (and
 *     the largest difference printed).
 *  4. examples/gemv.py at N = K = 4096 f16 (y = A x, f32 accumulator, f16
 *     output; out_idx -1 so y is allocated by the runtime and poisoned with
 *     NaN), and at N = 4000 (not a multiple of block_N = 128: the guard),
 *     against float64 with the docs/testing.md "Numeric checks" f16 tolerance.
 * One line per case with the worst error and the median time of 20 launches.
 * Kernel files: examples/ ($TL_KERNEL_DIR).  Exit 77 without a GPU. */
#include "gemm_util.h"

static tl_context *ctx;

static tl_kernel *compile(const char *file, const tl_define *defs, size_t ndefs) {
  char path[1024];
  snprintf(path, sizeof path, "%s/%s", kernel_dir(), file);
  tl_compile_options o = {0};
  o.flags = TL_COMPILE_POISON_OUTPUTS;
  tl_kernel *k = NULL;
  if (tl_kernel_compile_file(ctx, path, defs, ndefs, &o, &k) != TL_OK) {
    CHECK(0, "compiling %s: %s", path, tl_context_last_error(ctx));
    return NULL;
  }
  return k;
}

/* |x| of every element, as a new host array of dtype d */
static void *abs_copy(dt_kind d, const void *h, size_t n) {
  void *r = malloc(n * dt_size(d) + 1);
  for (size_t i = 0; i < n; i++) dt_store(d, r, i, fabs(dt_load(d, h, i)));
  return r;
}

/* The (M x Ks) slice [:, k0:k0+Ks] of row-major A (M x K), and the (Ks x N)
 * slice [k0:k0+Ks, :] of B (K x N), host arrays of dtype d. */
static void *slice_cols(dt_kind d, const void *a, int M, int K, int k0, int Ks) {
  void *r = malloc((size_t)M * Ks * dt_size(d) + 1);
  for (int m = 0; m < M; m++)
    for (int k = 0; k < Ks; k++) dt_store(d, r, (size_t)m * Ks + k, dt_load(d, a, (size_t)m * K + k0 + k));
  return r;
}
static const void *slice_rows(dt_kind d, const void *b, int N, int k0) {
  return (const char *)b + (size_t)k0 * N * dt_size(d);
}

typedef struct splitk_launch {
  tl_kernel *k;
  tl_arg args[3];
  dev_tensor *C;
} splitk_launch;
static void launch_splitk(void *p, int i) {
  (void)i;
  splitk_launch *l = p;
  CU(G.cuMemsetD8(l->C->ptr, 0, l->C->bytes));
  if (tl_kernel_call(ctx, l->k, l->args, 3, NULL, NULL) != TL_OK) {
    fprintf(stderr, "call failed: %s\n", tl_context_last_error(ctx));
    exit(1);
  }
}

/* Cases 1-3 for output dtype out. */
static void splitk_case(dt_kind out, bool rerun) {
  const int M = 1024, N = 1024, K = 1024, split = 4;
  char name[96];
  snprintf(name, sizeof name, "split-K 1024^3 f16 -> %s, split %d (atomic_add)", dt_name(out), split);
  tl_define defs[2] = {{"out_dtype", dt_name(out)}, {"split_k", "4"}};
  tl_kernel *k = compile("gemm_splitk.py", defs, 2);
  if (!k) return;
  const char *ptx = tl_kernel_ptx(k);
  if (out == DT_F32)
    CHECK(strstr(ptx, "atom.global.add.f32") || strstr(ptx, "red.global.add.f32"), "%s: no f32 atomic add in the PTX",
          name);
  if (out == DT_F16) CHECK(strstr(ptx, "red.global.add.noftz.f16x2"), "%s: no f16x2 atomic in the PTX", name);
  int before = g_failures;
  int64_t sa[2] = {M, K}, sb[2] = {K, N}, sc[2] = {M, N};
  dev_tensor A, B, C;
  void *ha = dev_random(&A, DT_F16, 2, sa), *hb = dev_random(&B, DT_F16, 2, sb);
  dev_alloc(&C, out, 2, sc);
  splitk_launch l = {k, {tl_arg_tensor(&A.t), tl_arg_tensor(&B.t), tl_arg_tensor(&C.t)}, &C};
  launch_splitk(&l, 0);
  CU(G.cuCtxSynchronize());
  size_t n = (size_t)M * N;
  void *hc = download(C.ptr, C.bytes);
  /* references: the product, sum |a b|, and the per-split partials */
  double *ref = ref_gemm(ha, hb, M, N, K, DT_F16, false, false);
  void *aa = abs_copy(DT_F16, ha, (size_t)M * K), *ab = abs_copy(DT_F16, hb, (size_t)K * N);
  double *mag = ref_gemm(aa, ab, M, N, K, DT_F16, false, false);
  double *psum = calloc(n, sizeof(double));
  if (out != DT_F32) {
    int Ks = K / split;
    for (int s = 0; s < split; s++) {
      void *as = slice_cols(DT_F16, ha, M, K, s * Ks, Ks);
      double *p = ref_gemm(as, slice_rows(DT_F16, hb, N, s * Ks), M, N, Ks, DT_F16, false, false);
      for (size_t i = 0; i < n; i++) psum[i] += fabs(p[i]);
      free(as);
      free(p);
    }
  }
  double atol, rtol;
  dt_tol(out, &atol, &rtol);
  double u_out = out == DT_F32 ? 0x1p-24 : out == DT_F16 ? 0x1p-11 : 0x1p-8;
  double u_mma = (K / 16 + split) * 0x1p-22;
  size_t bad = 0, outside_design = 0, worst = 0;
  double worst_excess = -INFINITY, max_err = 0;
  for (size_t i = 0; i < n; i++) {
    double o = dt_load(out, hc, i), e = fabs(o - ref[i]);
    double design = atol + rtol * fabs(ref[i]);
    double tol = design + u_mma * mag[i] + split * u_out * psum[i];
    if (!isfinite(o)) e = INFINITY;
    if (e > design) outside_design++;
    if (!(e <= tol)) bad++;
    if (e > max_err) max_err = e;
    if (e - tol > worst_excess) worst_excess = e - tol, worst = i;
  }
  CHECK(bad == 0, "%s: %zu of %zu elements outside the bound; worst (%zu, %zu) got %.8g expected %.8g", name, bad, n,
        worst / N, worst % N, dt_load(out, hc, worst), ref[worst]);
  double ms = time_launches(launch_splitk, &l, 3, 20);
  double tflops = 2.0 * M * N * K / (ms * 1e-3) / 1e12;
  printf("  %-4s %s: max |err| %.3g, %zu beyond the tolerance (%.0e/%.0e), %.4f ms (incl. zeroing C), %.1f TFLOP/s\n",
         g_failures == before ? "ok" : "FAIL", name, max_err, outside_design, atol, rtol, ms, tflops);
  if (rerun) { /* 3: run-to-run difference of the atomic order */
    before = g_failures;
    launch_splitk(&l, 0);
    CU(G.cuCtxSynchronize());
    void *h2 = download(C.ptr, C.bytes);
    size_t diff = 0, bad2 = 0;
    double maxd = 0;
    for (size_t i = 0; i < n; i++) {
      double a = dt_load(out, hc, i), b = dt_load(out, h2, i), d = fabs(a - b);
      if (d != 0) diff++;
      if (d > maxd) maxd = d;
      if (!(d <= 2 * (u_mma * mag[i] + split * u_out * psum[i]) + 2 * atol)) bad2++;
    }
    CHECK(bad2 == 0, "%s rerun: %zu elements differ beyond twice the bound", name, bad2);
    printf("  %-4s %s, second run: %zu elements differ in the last bits, max %.3g\n",
           g_failures == before ? "ok" : "FAIL", name, diff, maxd);
    free(h2);
  }
  free(ha), free(hb), free(hc), free(ref), free(aa), free(ab), free(mag), free(psum);
  dev_free(&A), dev_free(&B), dev_free(&C);
  tl_kernel_destroy(k);
}

typedef struct gemv_launch {
  tl_kernel *k;
  tl_arg args[2];
} gemv_launch;
#define MAX_TIMED 64
static DLManagedTensor *timed_out[MAX_TIMED];
static void launch_gemv(void *p, int i) {
  gemv_launch *l = p;
  DLManagedTensor *o[1] = {NULL};
  if (tl_kernel_call(ctx, l->k, l->args, 2, NULL, o) != TL_OK) {
    fprintf(stderr, "call failed: %s\n", tl_context_last_error(ctx));
    exit(1);
  }
  if (i < MAX_TIMED) timed_out[i] = o[0];
  else o[0]->deleter(o[0]);
}

static void gemv_case(int N, int K) {
  char name[96], dn[16], dk[16];
  snprintf(name, sizeof name, "gemv.py N=%d K=%d f16", N, K);
  snprintf(dn, sizeof dn, "%d", N);
  snprintf(dk, sizeof dk, "%d", K);
  tl_define defs[2] = {{"N", dn}, {"K", dk}};
  tl_kernel *k = compile("gemv.py", defs, 2);
  if (!k) return;
  int before = g_failures;
  int64_t sa[2] = {N, K}, sx[1] = {K};
  dev_tensor A, X;
  void *ha = dev_random(&A, DT_F16, 2, sa), *hx = dev_random(&X, DT_F16, 1, sx);
  gemv_launch l = {k, {tl_arg_tensor(&A.t), tl_arg_tensor(&X.t)}};
  DLManagedTensor *o[1] = {NULL};
  if (tl_kernel_call(ctx, k, l.args, 2, NULL, o) != TL_OK) {
    CHECK(0, "%s: call: %s", name, tl_context_last_error(ctx));
  } else {
    CU(G.cuCtxSynchronize());
    DLTensor *Y = &o[0]->dl_tensor;
    CHECK(Y->ndim == 1 && Y->shape[0] == N, "%s: output shape", name);
    void *hy = download((uintptr_t)Y->data, (size_t)N * 2);
    double *ref = malloc(sizeof(double) * (size_t)N);
    for (int i = 0; i < N; i++) {
      double s = 0;
      for (int kk = 0; kk < K; kk++) s += dt_load(DT_F16, ha, (size_t)i * K + kk) * dt_load(DT_F16, hx, (size_t)kk);
      ref[i] = s;
    }
    double atol, rtol;
    dt_tol(DT_F16, &atol, &rtol);
    cmp_result r = compare_out(DT_F16, hy, (size_t)N, ref, NULL, atol, rtol);
    CHECK(r.bad == 0, "%s: %zu of %d elements differ from float64; worst [%zu] got %.6g expected %.6g", name, r.bad, N,
          r.worst, r.worst_got, r.worst_ref);
    o[0]->deleter(o[0]);
    double ms = time_launches(launch_gemv, &l, 3, 20);
    CU(G.cuCtxSynchronize());
    for (int i = 0; i < MAX_TIMED; i++)
      if (timed_out[i]) timed_out[i]->deleter(timed_out[i]), timed_out[i] = NULL;
    double gbs = ((double)N * K * 2 + K * 2 + N * 2) / (ms * 1e-3) / 1e9;
    printf("  %-4s %s: max |err| %.3g, %.4f ms, %.1f GB/s\n", g_failures == before ? "ok" : "FAIL", name, r.max_err, ms,
           gbs);
    free(hy);
    free(ref);
  }
  free(ha), free(hx);
  dev_free(&A), dev_free(&X);
  tl_kernel_destroy(k);
}

int main(void) {
  if (tl_context_create(&ctx) != TL_OK) {
    fprintf(stderr, "tl_context_create failed\n");
    return 1;
  }
  gpu_init(ctx);
  rng_seed(7);
  double t0 = now_ms();
  splitk_case(DT_F32, true);
  splitk_case(DT_F16, false);
  splitk_case(DT_BF16, false);
  gemv_case(4096, 4096);
  gemv_case(4000, 4096);
  printf("test_splitk: %.1f s\n", (now_ms() - t0) / 1e3);
  tl_context_destroy(ctx);
  return finish("test_splitk");
}
