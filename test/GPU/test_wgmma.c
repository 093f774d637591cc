/* GPU test of the warpgroup MMA statements (docs/simt-ir.md "wgmma"; issue
 * 12, part W): the hand-written kernels test/GPU/kernels/wgmma_ss.py (one
 * warpgroup, A and B staged in shared memory by ordinary stores into a
 * canonical layout, T.ptx_fence_proxy_async + barrier, four T.ptx_wgmma_ss
 * k-steps, the first with scale_d 0 over accumulators set to 1000) and
 * wgmma_rs.py (two warpgroups, A from registers) in many layouts (K-major and
 * MN-major, swizzle 0 / 32 / 64 / 128 bytes), n (8..256), accumulator dtypes
 * (f32, f16) and input dtypes (f16, bf16).
 *
 * Each case runs twice:
 *  - integer data (A, B in -3..3: every product and partial sum is exact in
 *    every accumulator dtype): the GPU's C must equal the CPU SIMT
 *    executor's bit for bit AND the float64 product computed here element
 *    for element;
 *  - fractional data (k/1024 for f16, k/128 for bf16, times 2^-e for e in
 *    0..4: exact in the input dtype, with varied exponents so that the
 *    float32 sums round): reported — bit-identical count GPU vs CPU executor, max |GPU -
 *    CPU|, and the distance of each from the exact float64 product (the
 *    tensor cores' internal summation is not specified by PTX, so this
 *    measures the executor's tl_mma_step model) — and fails only beyond a
 *    loose bound (1e-3 for f32, 0.1 for f16 accumulators).
 * Needs an sm_90a device (skips otherwise, and without a driver).  Kernel
 * files from $TL_GPU_KERNELS (default test/GPU/kernels).  Prints one `ok`
 * line per case and run, then PASS. */
#include "gemm_util.h"

typedef struct wcase {
  const char *file; /* wgmma_ss.py or wgmma_rs.py */
  const char *defs; /* factory parameters, "a_mn=1,b_sw=64,n=128" */
} wcase;

static const wcase cases[] = {
    /* every layout for A and for B (the pairs of the 8 layouts run in test/unit/test_simt_wgmma.c on the CPU) */
    {"wgmma_ss.py", "a_mn=0,a_sw=0,b_mn=1,b_sw=128,n=64"},
    {"wgmma_ss.py", "a_mn=0,a_sw=32,b_mn=1,b_sw=64,n=64"},
    {"wgmma_ss.py", "a_mn=0,a_sw=64,b_mn=1,b_sw=32,n=64"},
    {"wgmma_ss.py", "a_mn=0,a_sw=128,b_mn=1,b_sw=0,n=64"},
    {"wgmma_ss.py", "a_mn=1,a_sw=0,b_mn=0,b_sw=128,n=64"},
    {"wgmma_ss.py", "a_mn=1,a_sw=32,b_mn=0,b_sw=64,n=64"},
    {"wgmma_ss.py", "a_mn=1,a_sw=64,b_mn=0,b_sw=32,n=64"},
    {"wgmma_ss.py", "a_mn=1,a_sw=128,b_mn=0,b_sw=0,n=64"},
    /* the Hopper GEMM's shape: K-major 128B, n = 256 (128 f32 accumulators) */
    {"wgmma_ss.py", "n=256"},
    {"wgmma_ss.py", "a_mn=1,b_mn=1,n=256,acc=float16"},
    {"wgmma_ss.py", "a_sw=32,b_sw=0,n=128,acc=float16"},
    {"wgmma_ss.py", "a_sw=64,b_mn=1,b_sw=32,n=96,dtype=bfloat16"},
    {"wgmma_ss.py", "a_mn=1,a_sw=0,b_mn=1,b_sw=128,n=8"},
    {"wgmma_ss.py", "n=24,dtype=bfloat16"},
    {"wgmma_rs.py", "n=64"},
    {"wgmma_rs.py", "b_mn=1,b_sw=0,n=256,acc=float16"},
    {"wgmma_rs.py", "b_mn=1,b_sw=64,n=128,dtype=bfloat16"},
    {"wgmma_rs.py", "b_sw=32,n=40"},
};

static tl_context *ctx;

/* "k=v,k=v" -> defines (pointers into buf); returns the count. */
static int parse_defs(const char *s, char *buf, size_t cap, tl_define *d, int maxd) {
  snprintf(buf, cap, "%s", s);
  int n = 0;
  for (char *p = strtok(buf, ","); p && n < maxd; p = strtok(NULL, ",")) {
    char *eq = strchr(p, '=');
    if (!eq) continue;
    *eq = 0;
    d[n].name = p;
    d[n++].value = eq + 1;
  }
  return n;
}

static const char *def_of(const tl_define *d, int n, const char *name, const char *dflt) {
  for (int i = 0; i < n; i++)
    if (!strcmp(d[i].name, name)) return d[i].value;
  return dflt;
}

/* Runs one case on the CPU executor and the GPU with integer (frac false) or fractional data. */
static void run_case(tl_kernel *k, const wcase *c, int M, int n, bool bf16, bool c16, bool frac) {
  const int K = 64;
  size_t na = (size_t)M * K, nb = (size_t)n * K, nc = (size_t)M * n, cb = c16 ? 2 : 4;
  uint16_t *A = malloc(na * 2), *B = malloc(nb * 2);
  double *Ad = malloc(na * sizeof(double)), *Bd = malloc(nb * sizeof(double));
  uint8_t *Ccpu = malloc(nc * cb), *Cgpu = malloc(nc * cb);
  double scale = bf16 ? 128.0 : 1024.0;
  for (size_t i = 0; i < na + nb; i++) {
    double x = (double)((int)(rng_uniform() * 3.5 + 3.5) - 3); /* -3..3 */
    if (frac) /* k / scale times 2^-e, e in 0..4: normal, exact in the dtype, exponents varied */
      x = ldexp((double)(int64_t)(rng_uniform() * scale) / scale, -(int)((rng_uniform() + 1) * 2.5));
    dt_kind in = bf16 ? DT_BF16 : DT_F16;
    if (i < na) dt_store(in, A, i, Ad[i] = x);
    else dt_store(in, B, i - na, Bd[i - na] = x);
  }
  memset(Ccpu, 0xFF, nc * cb);
  memset(Cgpu, 0xFF, nc * cb);
  int64_t sa[2] = {M, K}, sb[2] = {n, K}, sc[2] = {M, n};
  DLDataType in_t = {bf16 ? kDLBfloat : kDLFloat, 16, 1}, c_t = {kDLFloat, (uint8_t)(cb * 8), 1};
  DLTensor host[3] = {{A, {kDLCPU, 0}, 2, in_t, sa, NULL, 0},
                      {B, {kDLCPU, 0}, 2, in_t, sb, NULL, 0},
                      {Ccpu, {kDLCPU, 0}, 2, c_t, sc, NULL, 0}};
  const char *what = frac ? "fractions" : "integers";
  tl_arg args[3];
  for (int i = 0; i < 3; i++) args[i] = tl_arg_tensor(&host[i]);
  tl_status s = tl_kernel_call_on(ctx, k, TL_EXEC_CPU, args, 3, NULL, NULL);
  CHECK(s == TL_OK, "%s %s (%s): CPU executor: %s", c->file, c->defs, what, tl_context_last_error(ctx));
  DLManagedTensor *dev[3] = {0};
  DLDevice cuda = {kDLCUDA, 0};
  DLTensor gpu_c = host[2];
  gpu_c.data = Cgpu;
  DLTensor *src[3] = {&host[0], &host[1], &gpu_c};
  for (int i = 0; i < 3 && s == TL_OK; i++) {
    s = tl_tensor_alloc(ctx, cuda, 2, src[i]->shape, src[i]->dtype, &dev[i]);
    if (s == TL_OK) s = tl_tensor_copy(ctx, &dev[i]->dl_tensor, src[i]); /* C: 0xFF (NaN) poison */
    CHECK(s == TL_OK, "%s %s: device tensor %d: %s", c->file, c->defs, i, tl_context_last_error(ctx));
    if (s == TL_OK) args[i] = tl_arg_tensor(&dev[i]->dl_tensor);
  }
  if (s == TL_OK) {
    s = tl_kernel_call(ctx, k, args, 3, NULL, NULL);
    CHECK(s == TL_OK, "%s %s (%s): GPU run: %s", c->file, c->defs, what, tl_context_last_error(ctx));
  }
  if (s == TL_OK) {
    s = tl_tensor_copy(ctx, &gpu_c, &dev[2]->dl_tensor);
    CHECK(s == TL_OK, "%s %s: copy back: %s", c->file, c->defs, tl_context_last_error(ctx));
  }
  if (s == TL_OK) {
    size_t same = 0, exact_gpu = 0, first_bad = (size_t)-1;
    double max_gc = 0, max_ge = 0, max_ce = 0;
    for (int i = 0; i < M; i++)
      for (int j = 0; j < n; j++) {
        size_t e = (size_t)i * n + j;
        double want = 0;
        for (int kk = 0; kk < K; kk++) want += Ad[(size_t)i * K + kk] * Bd[(size_t)j * K + kk];
        double g = dt_load(c16 ? DT_F16 : DT_F32, Cgpu, e), cpu = dt_load(c16 ? DT_F16 : DT_F32, Ccpu, e);
        bool bits = !memcmp(Cgpu + e * cb, Ccpu + e * cb, cb);
        same += bits;
        exact_gpu += g == want;
        if ((!bits || g != want) && first_bad == (size_t)-1) first_bad = e;
        if (!(fabs(g - cpu) <= max_gc)) max_gc = fabs(g - cpu);
        if (!(fabs(g - want) <= max_ge)) max_ge = fabs(g - want);
        if (!(fabs(cpu - want) <= max_ce)) max_ce = fabs(cpu - want);
      }
    if (!frac) {
      CHECK(same == nc && exact_gpu == nc,
            "%s %s (integers): %zu of %zu elements bit-identical GPU vs CPU executor, %zu equal to the float64 "
            "product; first difference at C[%zu, %zu]",
            c->file, c->defs, same, nc, exact_gpu, first_bad / (size_t)n, first_bad % (size_t)n);
      if (same == nc && exact_gpu == nc)
        printf("ok %s %s: integers: GPU == CPU executor == float64 product (%zu elements)\n", c->file, c->defs, nc);
    } else {
      double tol = c16 ? 0.1 : 1e-3;
      CHECK(max_gc <= tol, "%s %s (fractions): max |GPU - CPU executor| = %g > %g", c->file, c->defs, max_gc, tol);
      printf(
          "%s %s %s: fractions: %zu of %zu bit-identical GPU vs CPU executor, max |GPU-CPU| %g, "
          "max |GPU-exact| %g, max |CPU-exact| %g\n",
          max_gc <= tol ? "ok" : "FAIL", c->file, c->defs, same, nc, max_gc, max_ge, max_ce);
    }
  }
  for (int i = 0; i < 3; i++)
    if (dev[i]) dev[i]->deleter(dev[i]);
  free(A), free(B), free(Ad), free(Bd), free(Ccpu), free(Cgpu);
}

int main(void) {
  if (tl_context_create(&ctx) != TL_OK) return 1;
  gpu_init(ctx);
  const char *target = tl_device_default_target();
  if (strcmp(target, "sm_90a") != 0) {
    printf("SKIP: wgmma needs sm_90a; this device's target is %s\n", target);
    tl_context_destroy(ctx);
    return GPU_SKIP;
  }
  rng_seed(12);
  printf("test_wgmma (target %s)\n", target);
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    const wcase *c = &cases[i];
    char path[1024], buf[256];
    tl_define d[8];
    int nd = parse_defs(c->defs, buf, sizeof buf, d, 8);
    snprintf(path, sizeof path, "%s/%s", gemm_kernels_dir(), c->file);
    tl_compile_options o = {0};
    o.target = target;
    o.out_idx_mode = TL_OUT_IDX_NONE;
    tl_kernel *k = NULL;
    if (tl_kernel_compile_file(ctx, path, d, (size_t)nd, &o, &k) != TL_OK) {
      CHECK(0, "compiling %s %s: %s", path, c->defs, tl_context_last_error(ctx));
      continue;
    }
    int n = atoi(def_of(d, nd, "n", strstr(c->file, "rs") ? "64" : "256"));
    bool bf16 = !strcmp(def_of(d, nd, "dtype", "float16"), "bfloat16");
    bool c16 = !strcmp(def_of(d, nd, "acc", "float32"), "float16");
    int M = strstr(c->file, "rs") ? 128 : 64;
    run_case(k, c, M, n, bf16, c16, false);
    run_case(k, c, M, n, bf16, c16, true);
    tl_kernel_destroy(k);
  }
  tl_context_destroy(ctx);
  return finish("test_wgmma");
}
