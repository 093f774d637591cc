/* GPU test (issue 7, acceptance 1 and 2): reductions and the row softmax /
 * RMSNorm examples, every element checked against a CPU float64 reference.
 *  1. T.reduce_{sum,max,min,abssum,absmax} of (128, 128) and (192, 64) f32
 *     and int32 tiles along dim 1 with 32 and 128 threads (4 blocks each,
 *     test/GPU/kernels/reduce_rows.py); sum of bf16 (tolerance 1e-1/1e-1);
 *     fragment -> shared and shared -> fragment operands; clear=False
 *     accumulating into the old destination.  The reference converts each
 *     element to the destination dtype, combines in float64 (int64 for
 *     int32) and rounds once, as the reference evaluator does.
 *  2. examples/softmax.py and examples/rms_norm.py at (4096, 4096) in
 *     float16 and float32 against float64 softmax / x * rsqrt(mean(x^2) +
 *     eps) (f32 1e-4/1e-4, f16 1e-2/1e-2; RMSNorm f16 rounds x^2 and the
 *     statistic to f16 as the kernel's dtypes say, so its reference does the
 *     same).
 * Destinations are poisoned (NaN / 0x7f7f7f7f) before each call so that an
 * unwritten element fails.  Kernel files: $TL_KERNEL_DIR (examples) and
 * $TL_GPU_KERNELS (test/GPU/kernels). */
#include "gemm_util.h"
#include "gpu_util.h"

static tl_context *ctx;

static tl_kernel *compile(const char *dir, const char *file, const tl_define *defs, size_t ndefs) {
  char path[1024];
  snprintf(path, sizeof path, "%s/%s", dir, file);
  tl_compile_options o = {0};
  o.flags = TL_COMPILE_POISON_OUTPUTS;
  tl_kernel *k = NULL;
  if (tl_kernel_compile_file(ctx, path, defs, ndefs, &o, &k) != TL_OK) {
    fprintf(stderr, "FAIL compiling %s:\n%s\n", path, tl_context_last_error(ctx));
    g_failures++;
    return NULL;
  }
  return k;
}

/* element kinds of this test: the float dtypes of gpu_util.h, and int32 */
typedef enum { EK_F32, EK_F16, EK_BF16, EK_I32 } ekind;
static const char *ek_name(ekind e) { return e == EK_I32 ? "int32" : dt_name((dt_kind)e); }
static size_t ek_size(ekind e) { return e == EK_I32 ? 4 : dt_size((dt_kind)e); }
static double ek_load(ekind e, const void *b, size_t i) {
  return e == EK_I32 ? (double)((const int32_t *)b)[i] : dt_load((dt_kind)e, b, i);
}
static void ek_store(ekind e, void *b, size_t i, double x) {
  if (e == EK_I32) ((int32_t *)b)[i] = (int32_t)x;
  else dt_store((dt_kind)e, b, i, x);
}
static double ek_round(ekind e, double x) {
  if (e == EK_I32) return (double)(int32_t)(int64_t)x;
  return dt_round((dt_kind)e, x);
}

static void dev_alloc_ek(dev_tensor *x, ekind e, int ndim, const int64_t *shape) {
  dev_alloc(x, e == EK_I32 ? DT_F32 : (dt_kind)e, ndim, shape);
  if (e == EK_I32) {
    x->t.dtype.code = kDLInt;
    x->t.dtype.bits = 32;
  }
}

static const char *const ops[5] = {"sum", "max", "min", "abssum", "absmax"};

/* One reduce_rows.py case: M = 4 * BM rows of N. */
static void reduce_case(int op, int64_t BM, int64_t N, int threads, ekind in, ekind out, const char *src,
                        const char *dst, bool clear) {
  char bm[16], n[16], m[16], th[16];
  int64_t M = 4 * BM;
  snprintf(bm, sizeof bm, "%lld", (long long)BM);
  snprintf(n, sizeof n, "%lld", (long long)N);
  snprintf(m, sizeof m, "%lld", (long long)M);
  snprintf(th, sizeof th, "%d", threads);
  tl_define defs[] = {{"M", m},
                      {"N", n},
                      {"block_M", bm},
                      {"threads", th},
                      {"op", ops[op]},
                      {"dtype", ek_name(in)},
                      {"out_dtype", ek_name(out)},
                      {"src", src},
                      {"dst", dst},
                      {"clear", clear ? "True" : "False"}};
  tl_kernel *k = compile(gemm_kernels_dir(), "reduce_rows.py", defs, sizeof defs / sizeof defs[0]);
  if (!k) return;
  int64_t ashape[2] = {M, N}, bshape[1] = {M};
  size_t na = (size_t)(M * N), nb = (size_t)M;
  dev_tensor A, B;
  dev_alloc_ek(&A, in, 2, ashape);
  dev_alloc_ek(&B, out, 1, bshape);
  void *ha = malloc(na * ek_size(in)), *hb = malloc(nb * ek_size(out));
  for (size_t i = 0; i < na; i++) {
    double u = rng_uniform();
    ek_store(in, ha, i, in == EK_I32 ? (double)((int)floor((u + 1) * 4.5) - 4) : u);
  }
  for (size_t i = 0; i < nb; i++) {
    if (clear) { /* poison */
      if (out == EK_I32) ((int32_t *)hb)[i] = 0x7f7f7f7f;
      else ek_store(out, hb, i, NAN);
    } else {
      double u = rng_uniform();
      ek_store(out, hb, i, out == EK_I32 ? (double)((int)floor((u + 1) * 4.5) - 4) : 8 * u);
    }
  }
  CU(G.cuMemcpyHtoD(A.ptr, ha, na * ek_size(in)));
  CU(G.cuMemcpyHtoD(B.ptr, hb, nb * ek_size(out)));
  tl_arg args[2] = {tl_arg_tensor(&A.t), tl_arg_tensor(&B.t)};
  if (tl_kernel_call(ctx, k, args, 2, NULL, NULL) != TL_OK) {
    CHECK(0, "call: %s", tl_context_last_error(ctx));
  } else {
    CU(G.cuCtxSynchronize());
    void *hr = download(B.ptr, nb * ek_size(out));
    double atol = out == EK_I32 ? 0 : out == EK_F32 ? 1e-4 : 1e-1, rtol = atol;
    size_t bad = 0, first = 0;
    double got0 = 0, want0 = 0;
    for (int64_t i = 0; i < M; i++) {
      double acc = clear ? (op == 1 ? -INFINITY : op == 2 ? INFINITY : 0) : ek_load(out, hb, (size_t)i);
      if (clear && out == EK_I32 && op == 1) acc = -2147483648.0;
      if (clear && out == EK_I32 && op == 2) acc = 2147483647.0;
      for (int64_t j = 0; j < N; j++) {
        double x = ek_round(out, ek_load(in, ha, (size_t)(i * N + j)));
        if (op >= 3) x = fabs(x);
        acc = op == 1 || op == 4 ? fmax(acc, x) : op == 2 ? fmin(acc, x) : acc + x;
      }
      double want = ek_round(out, acc), got = ek_load(out, hr, (size_t)i);
      bool ok = out == EK_I32 ? got == want : fabs(got - want) <= atol + rtol * fabs(want);
      if (!ok || isnan(got)) {
        if (!bad) {
          first = (size_t)i;
          got0 = got;
          want0 = want;
        }
        bad++;
      }
    }
    char what[160];
    snprintf(what, sizeof what, "reduce_%s (%lld,%lld) %s->%s %d thr %s->%s%s", ops[op], (long long)BM, (long long)N,
             ek_name(in), ek_name(out), threads, src, dst, clear ? "" : " clear=False");
    if (bad)
      CHECK(0, "%s: %zu of %lld rows wrong; first row %zu: got %.9g, expected %.9g", what, bad, (long long)M, first,
            got0, want0);
    else printf("  ok   %s\n", what);
    free(hr);
  }
  free(ha);
  free(hb);
  dev_free(&A);
  dev_free(&B);
  tl_kernel_destroy(k);
}

/* ------------------------------------------------ softmax and RMSNorm */
static void norm_case(bool softmax, dt_kind d) {
  const int64_t M = 4096, N = 4096;
  tl_define defs[] = {{"M", "4096"}, {"N", "4096"}, {"dtype", dt_name(d)}};
  tl_kernel *k = compile(kernel_dir(), softmax ? "softmax.py" : "rms_norm.py", defs, 3);
  if (!k) return;
  int64_t shape[2] = {M, N};
  size_t n = (size_t)(M * N);
  dev_tensor X;
  void *hx = dev_random(&X, d, 2, shape);
  tl_arg args[1] = {tl_arg_tensor(&X.t)};
  DLManagedTensor *out[1] = {NULL};
  if (tl_kernel_call(ctx, k, args, 1, NULL, out) != TL_OK || !out[0]) {
    CHECK(0, "call: %s", tl_context_last_error(ctx));
  } else {
    CU(G.cuCtxSynchronize());
    void *hy = download((uintptr_t)out[0]->dl_tensor.data, n * dt_size(d));
    double atol, rtol;
    dt_tol(d, &atol, &rtol);
    size_t bad = 0, first = 0;
    double got0 = 0, want0 = 0;
    double *row = malloc(sizeof(double) * (size_t)N);
    for (int64_t i = 0; i < M; i++) {
      if (softmax) {
        double mx = -INFINITY, sum = 0;
        for (int64_t j = 0; j < N; j++) mx = fmax(mx, dt_load(d, hx, (size_t)(i * N + j)));
        for (int64_t j = 0; j < N; j++) sum += (row[j] = exp(dt_load(d, hx, (size_t)(i * N + j)) - mx));
        for (int64_t j = 0; j < N; j++) row[j] /= sum;
      } else {
        /* the kernel keeps x^2 and the statistic in dtype (f16: rounded) */
        double ss = 0;
        for (int64_t j = 0; j < N; j++) {
          double x = dt_load(d, hx, (size_t)(i * N + j));
          ss += dt_round(d, x * x);
        }
        double r = 1.0 / sqrt(dt_round(d, ss) / (double)N + 1e-6);
        if (d != DT_F32) r = dt_round(d, r);
        for (int64_t j = 0; j < N; j++) row[j] = dt_load(d, hx, (size_t)(i * N + j)) * r;
      }
      for (int64_t j = 0; j < N; j++) {
        double got = dt_load(d, hy, (size_t)(i * N + j)), want = row[j];
        if (!(fabs(got - want) <= atol + rtol * fabs(want))) {
          if (!bad) {
            first = (size_t)(i * N + j);
            got0 = got;
            want0 = want;
          }
          bad++;
        }
      }
    }
    const char *what = softmax ? "softmax (4096,4096)" : "rms_norm (4096,4096)";
    if (bad)
      CHECK(0, "%s %s: %zu of %zu elements wrong; first at %zu: got %.9g, expected %.9g", what, dt_name(d), bad, n,
            first, got0, want0);
    else printf("  ok   %s %s, %zu elements\n", what, dt_name(d), n);
    free(row);
    free(hy);
    out[0]->deleter(out[0]);
  }
  free(hx);
  dev_free(&X);
  tl_kernel_destroy(k);
}

int main(void) {
  if (tl_context_create(&ctx) != TL_OK) {
    fprintf(stderr, "tl_context_create failed\n");
    return 1;
  }
  gpu_init(ctx);
  rng_seed(7);
  printf("reductions (point 1):\n");
  const int64_t shapes[2][2] = {{128, 128}, {192, 64}};
  for (int s = 0; s < 2; s++)
    for (int t = 0; t < 2; t++)
      for (int e = 0; e < 2; e++)
        for (int op = 0; op < 5; op++) {
          ekind k = e ? EK_I32 : EK_F32;
          reduce_case(op, shapes[s][0], shapes[s][1], t ? 128 : 32, k, k, "fragment", "fragment", true);
        }
  reduce_case(0, 128, 128, 128, EK_BF16, EK_BF16, "fragment", "fragment", true);
  reduce_case(0, 192, 64, 32, EK_BF16, EK_BF16, "fragment", "fragment", true);
  for (int op = 0; op < 5; op++) {
    reduce_case(op, 128, 128, 128, EK_F32, EK_F32, "fragment", "shared", true);
    reduce_case(op, 128, 128, 128, EK_F32, EK_F32, "shared", "fragment", true);
    reduce_case(op, 192, 64, 32, EK_I32, EK_I32, "shared", "shared", true);
    reduce_case(op, 128, 128, 128, EK_F32, EK_F32, "fragment", "fragment", false);
    reduce_case(op, 192, 64, 32, EK_I32, EK_I32, "fragment", "fragment", false);
  }
  reduce_case(0, 128, 128, 128, EK_F16, EK_F32, "shared", "shared", false);
  printf("softmax and RMSNorm (point 2):\n");
  norm_case(true, DT_F16);
  norm_case(true, DT_F32);
  norm_case(false, DT_F16);
  norm_case(false, DT_F32);
  int rc = finish("test_reduce");
  tl_context_destroy(ctx);
  return rc;
}
