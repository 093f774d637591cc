/* GPU acceptance test of FlashAttention forward (issue 7, point 4):
 * examples/flash_attention.py (f16, head dim 128, online softmax with exp2,
 * rs-form P·V gemm) compiled through the C API, at (batch 1, 32 heads, 4096
 * tokens) and (batch 8, 32 heads, 1024 tokens), causal and non-causal.
 *  - Correctness against a float64 CPU attention (softmax(Q·Kᵀ/√d)·V from
 *    the same f16 inputs, causal mask j <= i): every row of several whole
 *    heads and 8 rows (first, last, middle, random) of every other head, per
 *    element with the f16 tolerance of docs/testing.md "Numeric checks" (1e-2 + 1e-2·|ref|), zero
 *    mismatches; outputs are poisoned (NaN) before the kernel runs and every
 *    output element must be finite, so an unwritten element fails.
 *  - Correctness against the tile-level reference evaluator (lib/Interp, via
 *    tl_kernel_call_on TL_EXEC_REFERENCE on host copies of the inputs) at
 *    small sizes (1, 2, 256, 128), every element.
 *  - Speed: each tile configuration below is timed with CUDA events
 *    (tl_kernel_time: median of 50 launches after 5 warm-ups); TFLOP/s counts
 *    4·B·H·S²·D (halved when causal, as FlashAttention reports); the best
 *    configuration per case is reported.  Every configuration is checked
 *    before it is timed.
 * With TL_FA_DUMP_DIR set, the inputs and the best configuration's output
 * of each case are written there (q, k, v, o as raw f16, B·H·S·D each, one
 * file per case) with a line per case in cases.txt: name B H S D causal
 * best_ms tflops config.  benchmarks/attention/sdpa.py reads them to compare
 * with PyTorch's scaled_dot_product_attention in the same run.
 * Optional argument: a substring filter on case names.  Exit 77 without a
 * driver/GPU. */
#include "gemm_util.h" /* gpu_util.h, pthread, cmp_result */

static tl_context *ctx;

typedef struct fa_config {
  int block_M, block_N, threads, stages;
  bool fast_math; /* TL_COMPILE_FAST_MATH (FlashAttention-2 is built with nvcc --use_fast_math) */
} fa_config;

static const fa_config configs[] = {
    /* fast math: exp2 as one ex2.approx.ftz, a*b+c contracted, as nvcc
     * --use_fast_math builds FlashAttention-2 (the SDPA flash backend) */
    {128, 64, 128, 2, true},  /* the example's defaults (FlashAttention-2's tile for d = 128) */
    {128, 128, 256, 2, true}, /* 8 warps, each 16 rows */
    {128, 64, 256, 2, true},   {64, 64, 128, 2, true},
    {128, 64, 128, 2, false}, /* without fast math: libdevice exp2f, no contraction */
    {128, 128, 256, 2, false}, {64, 64, 128, 2, false},
};
#define NCONFIGS (sizeof configs / sizeof configs[0])

static char *fmt_int(int v) {
  char *s = malloc(16);
  snprintf(s, 16, "%d", v);
  return s; /* small, kept for the process */
}

static tl_kernel *compile_fa(int B, int H, int S, int D, bool causal, const fa_config *c) {
  char path[1024];
  snprintf(path, sizeof path, "%s/flash_attention.py", kernel_dir());
  tl_define defs[9] = {{"batch", fmt_int(B)},
                       {"heads", fmt_int(H)},
                       {"seq_len", fmt_int(S)},
                       {"dim", fmt_int(D)},
                       {"is_causal", causal ? "True" : "False"},
                       {"block_M", fmt_int(c->block_M)},
                       {"block_N", fmt_int(c->block_N)},
                       {"threads", fmt_int(c->threads)},
                       {"num_stages", fmt_int(c->stages)}};
  tl_compile_options o = {0};
  o.flags = TL_COMPILE_POISON_OUTPUTS | (c->fast_math ? TL_COMPILE_FAST_MATH : 0);
  tl_kernel *k = NULL;
  if (tl_kernel_compile_file(ctx, path, defs, 9, &o, &k) != TL_OK) {
    CHECK(0, "compiling %s (B=%d H=%d S=%d D=%d causal=%d, %dx%d/%d/%d): %s", path, B, H, S, D, causal, c->block_M,
          c->block_N, c->threads, c->stages, tl_context_last_error(ctx));
    return NULL;
  }
  /* sm_90a: the configurations with block_M = 64 x (threads / 128) take the Hopper path (wgmma, TMA,
   * warp_specialize.c's attention form); the others, and sm_80..sm_90, mma.sync */
  const char *ptx = tl_kernel_ptx(k);
  CHECK(strstr(ptx, "mma.sync.aligned.m16n8k16") || strstr(ptx, "wgmma.mma_async"), "PTX has no mma.sync or wgmma");
  return k;
}

/* ------------------------------------------------ float64 CPU reference */
typedef struct fa_job {
  const float *q, *k, *v; /* the f16 inputs, widened (exactly) once */
  int S, D;
  bool causal;
  /* rows to compute: (bh, row) pairs */
  const int64_t *rows;
  size_t nrows;
  double *out; /* nrows x D */
  size_t next;
  pthread_mutex_t lock;
} fa_job;

static void fa_row(const fa_job *j, int64_t bh, int64_t i, double *o, double *p) {
  int S = j->S, D = j->D;
  const float *q = j->q + ((size_t)bh * S + (size_t)i) * D;
  const float *kb = j->k + (size_t)bh * S * D, *vb = j->v + (size_t)bh * S * D;
  double qd[256];
  for (int d = 0; d < D; d++) qd[d] = q[d];
  double scale = 1.0 / sqrt((double)D), mx = -INFINITY;
  int n = j->causal ? (int)i + 1 : S;
  for (int t = 0; t < n; t++) {
    double s = 0;
    const float *kr = kb + (size_t)t * D;
    for (int d = 0; d < D; d++) s += qd[d] * kr[d];
    p[t] = s * scale;
    if (p[t] > mx) mx = p[t];
  }
  double sum = 0;
  for (int t = 0; t < n; t++) sum += (p[t] = exp(p[t] - mx));
  for (int d = 0; d < D; d++) o[d] = 0;
  for (int t = 0; t < n; t++) {
    const float *vr = vb + (size_t)t * D;
    double w = p[t] / sum;
    for (int d = 0; d < D; d++) o[d] += w * vr[d];
  }
}

static void *fa_worker(void *arg) {
  fa_job *j = arg;
  double *p = malloc(sizeof(double) * (size_t)j->S);
  for (;;) {
    pthread_mutex_lock(&j->lock);
    size_t r = j->next;
    j->next += 16;
    pthread_mutex_unlock(&j->lock);
    if (r >= j->nrows) break;
    for (size_t x = r; x < r + 16 && x < j->nrows; x++)
      fa_row(j, j->rows[2 * x], j->rows[2 * x + 1], j->out + x * (size_t)j->D, p);
  }
  free(p);
  return NULL;
}

static void fa_compute(fa_job *j) {
  long nt = sysconf(_SC_NPROCESSORS_ONLN);
  if (nt < 1) nt = 1;
  if (nt > 64) nt = 64;
  pthread_t th[64];
  pthread_mutex_init(&j->lock, NULL);
  j->next = 0;
  for (long t = 0; t < nt; t++) pthread_create(&th[t], NULL, fa_worker, j);
  for (long t = 0; t < nt; t++) pthread_join(th[t], NULL);
  pthread_mutex_destroy(&j->lock);
}

/* The rows checked: all rows of the heads in full[], 8 rows of the others. */
static int64_t *pick_rows(int B, int H, int S, size_t *n) {
  int64_t BH = (int64_t)B * H;
  int64_t full[3] = {0, BH / 2 + 1, BH - 1};
  int64_t *rows = malloc(sizeof(int64_t) * 2 * (size_t)(3 * S + 8 * BH));
  size_t k = 0;
  for (int64_t bh = 0; bh < BH; bh++) {
    bool all = bh == full[0] || bh == full[1] || bh == full[2];
    if (all) {
      for (int64_t i = 0; i < S; i++) rows[2 * k] = bh, rows[2 * k + 1] = i, k++;
      continue;
    }
    int64_t pick[8] = {0, 1, S / 2 + 3, S - 1, 0, 0, 0, 0};
    for (int r = 4; r < 8; r++) pick[r] = (int64_t)((rng_uniform() + 1.0) * 0.5 * S) % S;
    for (int r = 0; r < 8; r++) rows[2 * k] = bh, rows[2 * k + 1] = pick[r], k++;
  }
  *n = k;
  return rows;
}

/* ------------------------------------------------------------ one case */
static int cases_failed;

static void dump(const char *name, int B, int H, int S, int D, bool causal, const void *hq, const void *hk,
                 const void *hv, const void *ho, double ms, double tf, const fa_config *c) {
  const char *dir = getenv("TL_FA_DUMP_DIR");
  if (!dir || !*dir) return;
  char path[1024];
  snprintf(path, sizeof path, "%s/%s.bin", dir, name);
  FILE *f = fopen(path, "wb");
  if (!f) {
    printf("note: cannot write %s\n", path);
    return;
  }
  size_t n = (size_t)B * H * S * D;
  bool ok =
      fwrite(hq, 2, n, f) == n && fwrite(hk, 2, n, f) == n && fwrite(hv, 2, n, f) == n && fwrite(ho, 2, n, f) == n;
  fclose(f);
  if (!ok) {
    printf("note: short write to %s\n", path);
    return;
  }
  snprintf(path, sizeof path, "%s/cases.txt", dir);
  f = fopen(path, "a");
  if (!f) return;
  fprintf(f, "%s %d %d %d %d %d %.6f %.3f %dx%d/t%d/s%d%s\n", name, B, H, S, D, causal ? 1 : 0, ms, tf, c->block_M,
          c->block_N, c->threads, c->stages, c->fast_math ? "/fastmath" : "");
  fclose(f);
}

static void run_case(int B, int H, int S, int D, bool causal) {
  char name[96];
  snprintf(name, sizeof name, "fa_b%d_h%d_s%d_d%d_%s", B, H, S, D, causal ? "causal" : "full");
  int before = g_failures;
  int64_t shape[4] = {B, H, S, D};
  size_t n = (size_t)B * H * S * D;
  dev_tensor Q, K, V;
  void *hq = dev_random(&Q, DT_F16, 4, shape), *hk = dev_random(&K, DT_F16, 4, shape),
       *hv = dev_random(&V, DT_F16, 4, shape);
  double t0 = now_ms();
  fa_job job;
  memset(&job, 0, sizeof job);
  float *wide[3];
  const void *narrow[3] = {hq, hk, hv};
  for (int x = 0; x < 3; x++) {
    wide[x] = malloc(sizeof(float) * n);
    for (size_t i = 0; i < n; i++) wide[x][i] = (float)dt_load(DT_F16, narrow[x], i);
  }
  job.q = wide[0], job.k = wide[1], job.v = wide[2], job.S = S, job.D = D, job.causal = causal;
  job.rows = pick_rows(B, H, S, &job.nrows);
  job.out = malloc(sizeof(double) * job.nrows * (size_t)D);
  fa_compute(&job);
  printf("  .... %s: float64 reference of %zu rows in %.1f s\n", name, job.nrows, (now_ms() - t0) / 1e3);
  double flops = 4.0 * B * H * (double)S * S * D * (causal ? 0.5 : 1.0);
  double best_ms = INFINITY;
  int best = -1;
  void *best_out = NULL;
  for (size_t ci = 0; ci < NCONFIGS; ci++) {
    const fa_config *c = &configs[ci];
    tl_kernel *k = compile_fa(B, H, S, D, causal, c);
    if (!k) continue;
    tl_arg args[3] = {tl_arg_tensor(&Q.t), tl_arg_tensor(&K.t), tl_arg_tensor(&V.t)};
    DLManagedTensor *out[1] = {NULL};
    /* one checked launch on poisoned outputs, then the timing */
    if (tl_kernel_call(ctx, k, args, 3, NULL, out) != TL_OK) {
      CHECK(0, "%s %dx%d/%d: call: %s", name, c->block_M, c->block_N, c->threads, tl_context_last_error(ctx));
      tl_kernel_destroy(k);
      continue;
    }
    CU(G.cuCtxSynchronize());
    void *ho = download((uintptr_t)out[0]->dl_tensor.data, n * 2);
    out[0]->deleter(out[0]);
    size_t bad = 0, worst = 0;
    double max_err = 0, worst_got = 0, worst_ref = 0;
    for (size_t r = 0; r < job.nrows; r++) {
      int64_t bh = job.rows[2 * r], i = job.rows[2 * r + 1];
      for (int d = 0; d < D; d++) {
        double got = dt_load(DT_F16, ho, ((size_t)bh * S + (size_t)i) * D + (size_t)d);
        double want = job.out[r * (size_t)D + (size_t)d];
        double e = isfinite(got) ? fabs(got - want) : INFINITY;
        if (!(e <= 1e-2 + 1e-2 * fabs(want))) bad++;
        if (e > max_err || (r == 0 && d == 0)) {
          max_err = e;
          worst = r * (size_t)D + (size_t)d;
          worst_got = got;
          worst_ref = want;
        }
      }
    }
    size_t nonfinite = 0; /* every element, checked rows or not: written (not the NaN poison) and finite */
    for (size_t x = 0; x < n; x++) nonfinite += !isfinite(dt_load(DT_F16, ho, x));
    CHECK(nonfinite == 0, "%s %dx%d/%d/%d: %zu of %zu output elements are not finite (unwritten?)", name, c->block_M,
          c->block_N, c->threads, c->stages, nonfinite, n);
    bad += nonfinite;
    CHECK(bad == 0,
          "%s %dx%d/%d/%d: %zu of %zu checked elements differ from float64; worst (bh %lld, row %lld, "
          "col %zu) got %.6g expected %.6g",
          name, c->block_M, c->block_N, c->threads, c->stages, bad, job.nrows * (size_t)D,
          (long long)job.rows[2 * (worst / (size_t)D)], (long long)job.rows[2 * (worst / (size_t)D) + 1],
          worst % (size_t)D, worst_got, worst_ref);
    float ms_each[50];
    double ms = NAN;
    if (tl_kernel_time(ctx, k, args, 3, NULL, 5, 50, ms_each, out) == TL_OK) {
      double t[50];
      for (int i = 0; i < 50; i++) t[i] = ms_each[i];
      ms = median(t, 50);
      out[0]->deleter(out[0]);
    } else {
      CHECK(0, "%s: timing: %s", name, tl_context_last_error(ctx));
    }
    printf("  %-4s %-36s %3dx%-3d t%-3d s%d %-3s smem %6lld B  max|err| %.3g  %8.3f ms %7.1f TFLOP/s\n",
           bad ? "FAIL" : "ok", name, c->block_M, c->block_N, c->threads, c->stages, c->fast_math ? "fm" : "",
           (long long)tl_kernel_smem_bytes(k), max_err, ms, flops / (ms * 1e-3) / 1e12);
    fflush(stdout);
    if (bad == 0 && ms < best_ms) {
      best_ms = ms;
      best = (int)ci;
      free(best_out);
      best_out = ho;
    } else {
      free(ho);
    }
    tl_kernel_destroy(k);
  }
  if (best >= 0) {
    double tf = flops / (best_ms * 1e-3) / 1e12;
    printf("  best %-36s %dx%d t%d s%d%s: %.3f ms %.1f TFLOP/s\n", name, configs[best].block_M, configs[best].block_N,
           configs[best].threads, configs[best].stages, configs[best].fast_math ? " fast-math" : "", best_ms, tf);
    dump(name, B, H, S, D, causal, hq, hk, hv, best_out, best_ms, tf, &configs[best]);
  } else {
    CHECK(0, "%s: no configuration ran correctly", name);
  }
  if (g_failures != before) cases_failed++;
  free(best_out);
  free((void *)job.rows);
  free(job.out);
  for (int x = 0; x < 3; x++) free(wide[x]);
  free(hq);
  free(hk);
  free(hv);
  dev_free(&Q);
  dev_free(&K);
  dev_free(&V);
}

/* GPU output vs the tile-level reference evaluator, every element. */
static void run_vs_reference(int B, int H, int S, int D, bool causal) {
  fa_config c = {64, 64, 128, 2, true};
  tl_kernel *k = compile_fa(B, H, S, D, causal, &c);
  if (!k) return;
  int64_t shape[4] = {B, H, S, D};
  size_t n = (size_t)B * H * S * D;
  dev_tensor Q, K, V;
  void *hq = dev_random(&Q, DT_F16, 4, shape), *hk = dev_random(&K, DT_F16, 4, shape),
       *hv = dev_random(&V, DT_F16, 4, shape);
  tl_arg args[3] = {tl_arg_tensor(&Q.t), tl_arg_tensor(&K.t), tl_arg_tensor(&V.t)};
  DLManagedTensor *out[1] = {NULL};
  if (tl_kernel_call(ctx, k, args, 3, NULL, out) != TL_OK) {
    CHECK(0, "reference case: call: %s", tl_context_last_error(ctx));
    goto done;
  }
  CU(G.cuCtxSynchronize());
  void *ho = download((uintptr_t)out[0]->dl_tensor.data, n * 2);
  out[0]->deleter(out[0]);
  DLTensor hQ = Q.t, hK = K.t, hV = V.t;
  hQ.data = hq, hK.data = hk, hV.data = hv;
  hQ.device.device_type = hK.device.device_type = hV.device.device_type = kDLCPU;
  tl_arg hargs[3] = {tl_arg_tensor(&hQ), tl_arg_tensor(&hK), tl_arg_tensor(&hV)};
  DLManagedTensor *rout[1] = {NULL};
  double t0 = now_ms();
  if (tl_kernel_call_on(ctx, k, TL_EXEC_REFERENCE, hargs, 3, NULL, rout) != TL_OK) {
    CHECK(0, "reference evaluator: %s", tl_context_last_error(ctx));
    free(ho);
    goto done;
  }
  cmp_result r;
  memset(&r, 0, sizeof r);
  const void *ref = rout[0]->dl_tensor.data;
  for (size_t i = 0; i < n; i++) {
    double o = dt_load(DT_F16, ho, i), x = dt_load(DT_F16, ref, i), e = isfinite(o) ? fabs(o - x) : INFINITY;
    if (!(e <= 1e-2 + 1e-2 * fabs(x))) r.bad++;
    if (e > r.max_err) {
      r.max_err = e;
      r.worst = i;
      r.worst_got = o;
      r.worst_ref = x;
    }
  }
  CHECK(r.bad == 0,
        "(%d,%d,%d,%d) causal=%d: %zu of %zu elements differ from the reference evaluator; worst [%zu] "
        "got %.6g reference %.6g",
        B, H, S, D, causal, r.bad, n, r.worst, r.worst_got, r.worst_ref);
  printf("  %-4s vs reference evaluator (%d,%d,%d,%d) %-6s: max|err| %.3g over %zu elements (evaluator %.1f s)\n",
         r.bad ? "FAIL" : "ok", B, H, S, D, causal ? "causal" : "full", r.max_err, n, (now_ms() - t0) / 1e3);
  rout[0]->deleter(rout[0]);
  free(ho);
done:
  free(hq);
  free(hk);
  free(hv);
  dev_free(&Q);
  dev_free(&K);
  dev_free(&V);
  tl_kernel_destroy(k);
}

int main(int argc, char **argv) {
  const char *only = argc > 1 ? argv[1] : NULL;
  if (tl_context_create(&ctx) != TL_OK) return 1;
  gpu_init(ctx);
  uint64_t seed = (uint64_t)time(NULL);
  rng_seed(seed);
  printf("test_flash_attention (target %s, seed %llu)\n", tl_device_default_target(), (unsigned long long)seed);
  if (!only || strstr("reference", only)) {
    run_vs_reference(1, 2, 256, 128, false);
    run_vs_reference(1, 2, 256, 128, true);
  }
  static const int shapes[2][4] = {{1, 32, 4096, 128}, {8, 32, 1024, 128}};
  for (int s = 0; s < 2; s++)
    for (int c = 0; c < 2; c++) {
      char name[96];
      snprintf(name, sizeof name, "fa_b%d_h%d_s%d_d%d_%s", shapes[s][0], shapes[s][1], shapes[s][2], shapes[s][3],
               c ? "causal" : "full");
      if (only && !strstr(name, only)) continue;
      run_case(shapes[s][0], shapes[s][1], shapes[s][2], shapes[s][3], c != 0);
    }
  tl_context_destroy(ctx);
  return finish("test_flash_attention");
}
