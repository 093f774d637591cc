/* GPU test (issue 14): the forms this issue adds run on the GPU and compute
 * the same bits as the CPU SIMT executor (which runs the same lowered code:
 * the same shuffles, the same order of additions), through the public API.
 *  1. test/GPU/kernels/reduce_dims.py: reductions along a dim other than the
 *     last (the split-KV combine's dim 0 with exp2/log2 after it, columns of
 *     a (64, 64) tile, the middle dim of (2, 8, 16) tiles), fragment and
 *     shared operands, batch= 2 / 4; f32 and int32 data;
 *  2. test/GPU/kernels/pipeline_sched.py: float16 GEMMs whose T.Pipelined
 *     loop has order= / stage= / group= (TileLang's order/stage cases), with
 *     integer-valued inputs in [-4, 4] (every product and partial sum exact
 *     in the float32 accumulator), compared bit for bit and against the
 *     exact product computed here;
 *  3. test/GPU/kernels/parallel_short.py: T.Parallel loops shorter than the
 *     fragment they index (TileLang #1744's broadcast, a short loop before a
 *     full one, a short loop over a T.gemm accumulator's rows with
 *     integer-valued float16 inputs);
 *  4. test/GPU/kernels/strided.py: a T.StridedTensor view with row stride 96
 *     (constant, and a T.dynamic stride bound at the call) on the GPU equals
 *     2 A + 1 exactly, and a view of other strides is refused naming 'A'.
 * The output of each case is the kernel's last parameter (out_idx = [-1]).
 * Kernel files: $TL_GPU_KERNELS (default test/GPU/kernels).
 * Exit 0 pass, 1 fail, 77 no driver/GPU. */
#include "gemm_util.h"
#include "gpu_util.h"

static tl_context *ctx;

static tl_kernel *compile_last_out(const char *file, const tl_define *defs, size_t ndefs) {
  char path[1024];
  snprintf(path, sizeof path, "%s/%s", gemm_kernels_dir(), file);
  static const int last[1] = {-1};
  tl_compile_options o = {0};
  o.out_idx_mode = TL_OUT_IDX_LIST;
  o.out_idx = last;
  o.n_out_idx = 1;
  tl_kernel *k = NULL;
  if (tl_kernel_compile_file(ctx, path, defs, ndefs, &o, &k) != TL_OK) {
    fprintf(stderr, "FAIL compiling %s:\n%s\n", path, tl_context_last_error(ctx));
    g_failures++;
    return NULL;
  }
  return k;
}

/* Runs k on the CPU SIMT executor and on the GPU with the host inputs in[]
 * and compares the outputs byte for byte (rtol > 0, a float32 output: within
 * rtol relative, for kernels whose ex2.approx / lg2.approx the CPU executor
 * models but not bit for bit); *gpu_host (when not NULL) gets the GPU's
 * output on the host (the caller frees it with its deleter). */
static void cpu_vs_gpu(tl_kernel *k, DLTensor *in, int nin, const char *what, double rtol, DLManagedTensor **gpu_host) {
  tl_arg args[4];
  DLManagedTensor *dev[4] = {0}, *cpu_out[1] = {0}, *gpu_out[1] = {0}, *host = NULL;
  for (int i = 0; i < nin; i++) args[i] = tl_arg_tensor(&in[i]);
  tl_status s = tl_kernel_call_on(ctx, k, TL_EXEC_CPU, args, (size_t)nin, NULL, cpu_out);
  CHECK(s == TL_OK, "%s: CPU run: %s", what, tl_context_last_error(ctx));
  DLDevice cuda = {kDLCUDA, 0}, cpu = {kDLCPU, 0};
  for (int i = 0; i < nin && s == TL_OK; i++) {
    s = tl_tensor_alloc(ctx, cuda, in[i].ndim, in[i].shape, in[i].dtype, &dev[i]);
    if (s == TL_OK) s = tl_tensor_copy(ctx, &dev[i]->dl_tensor, &in[i]);
    CHECK(s == TL_OK, "%s: device input %d: %s", what, i, tl_context_last_error(ctx));
    args[i] = tl_arg_tensor(dev[i] ? &dev[i]->dl_tensor : NULL);
  }
  if (s == TL_OK) {
    s = tl_kernel_call(ctx, k, args, (size_t)nin, NULL, gpu_out);
    CHECK(s == TL_OK, "%s: GPU run: %s", what, tl_context_last_error(ctx));
  }
  if (s == TL_OK) {
    DLTensor *g = &gpu_out[0]->dl_tensor;
    s = tl_tensor_alloc(ctx, cpu, g->ndim, g->shape, g->dtype, &host);
    if (s == TL_OK) s = tl_tensor_copy(ctx, &host->dl_tensor, g);
    CHECK(s == TL_OK, "%s: copy back: %s", what, tl_context_last_error(ctx));
  }
  if (s == TL_OK && cpu_out[0]) {
    size_t n = 1, eb = host->dl_tensor.dtype.bits / 8, bad = 0, first = 0;
    for (int d = 0; d < host->dl_tensor.ndim; d++) n *= (size_t)host->dl_tensor.shape[d];
    const uint8_t *a = host->dl_tensor.data, *b = cpu_out[0]->dl_tensor.data;
    for (size_t i = 0; i < n; i++) {
      bool same = memcmp(a + i * eb, b + i * eb, eb) == 0;
      if (!same && rtol > 0 && eb == 4) {
        double x = ((const float *)a)[i], y = ((const float *)b)[i];
        same = fabs(x - y) <= rtol * (1 + fabs(y));
      }
      if (!same && bad++ == 0) first = i;
    }
    if (bad)
      CHECK(0, "%s: %zu of %zu elements differ between the GPU and the CPU executor (first at %zu)", what, bad, n,
            first);
    else
      printf("  ok   %s: GPU == CPU SIMT executor %s (%zu elements)\n", what,
             rtol > 0 ? "within 1e-6 relative" : "bit for bit", n);
  }
  for (int i = 0; i < nin; i++)
    if (dev[i]) dev[i]->deleter(dev[i]);
  if (cpu_out[0]) cpu_out[0]->deleter(cpu_out[0]);
  if (gpu_out[0]) gpu_out[0]->deleter(gpu_out[0]);
  if (host && gpu_host && s == TL_OK) *gpu_host = host;
  else if (host) host->deleter(host);
}

/* ------------------------------------------------------------ reductions */
static void reduce_case(const char *what, const tl_define *defs, size_t ndefs, int ndim, const int64_t *shape,
                        bool i32) {
  bool combine = ndefs > 0 && !strcmp(defs[0].value, "combine"); /* exp2 / log2 after the reduce */
  tl_kernel *k = compile_last_out("reduce_dims.py", defs, ndefs);
  if (!k) return;
  size_t n = 1;
  for (int d = 0; d < ndim; d++) n *= (size_t)shape[d];
  void *a = malloc(n * 4);
  for (size_t i = 0; i < n; i++) {
    double u = rng_uniform();
    if (i32) ((int32_t *)a)[i] = (int32_t)floor((u + 1) * 4.5) - 4;
    else ((float *)a)[i] = (float)(8 * u);
  }
  DLTensor in = {a, {kDLCPU, 0}, ndim, {i32 ? kDLInt : kDLFloat, 32, 1}, (int64_t *)shape, NULL, 0};
  cpu_vs_gpu(k, &in, 1, what, combine ? 1e-6 : 0, NULL);
  free(a);
  tl_kernel_destroy(k);
}

/* Kernel file `file`, one input tensor per entry of dts (shapes[i] of
 * ndims[i] dims, integer values in [-4, 4] so that every product and sum is
 * exact). */
static void int_case(const char *file, const char *what, const tl_define *defs, size_t ndefs, int nin,
                     const dt_kind *dts, const int64_t (*shapes)[2], const int *ndims) {
  tl_kernel *k = compile_last_out(file, defs, ndefs);
  if (!k) return;
  DLTensor in[3];
  void *bufs[3] = {0};
  for (int t = 0; t < nin; t++) {
    size_t n = numel(shapes[t], ndims[t]);
    bufs[t] = malloc(n * dt_size(dts[t]));
    for (size_t i = 0; i < n; i++) dt_store(dts[t], bufs[t], i, floor((rng_uniform() + 1) * 4.5) - 4);
    in[t] = (DLTensor){bufs[t], {kDLCPU, 0}, ndims[t], dt_dl(dts[t]), (int64_t *)shapes[t], NULL, 0};
  }
  cpu_vs_gpu(k, in, nin, what, 0, NULL);
  for (int t = 0; t < nin; t++) free(bufs[t]);
  tl_kernel_destroy(k);
}

static void reductions(void) {
  int64_t lse[3] = {4, 8, 64}, lse4[3] = {4, 4, 128}, cols[2] = {64, 64}, mid[3] = {16, 8, 16};
  tl_define c1[] = {{"kind", "combine"}};
  reduce_case("combine: reduce_max of lse (8, 64) along dim 0", c1, 1, 3, lse, false);
  tl_define c2[] = {{"kind", "combine"}, {"src", "shared"}, {"M", "128"}, {"splits", "4"}};
  reduce_case("combine: shared lse (4, 128)", c2, 4, 3, lse4, false);
  tl_define c3[] = {{"kind", "combine"}, {"threads", "64"}, {"batch", "4"}};
  reduce_case("combine: 64 threads, batch=4", c3, 3, 3, lse, false);
  static const char *const ops[5] = {"sum", "max", "min", "abssum", "absmax"};
  for (int op = 0; op < 5; op++) {
    char what[128];
    tl_define d[] = {{"kind", "cols"}, {"op", ops[op]}, {"batch", op % 2 ? "2" : "1"}};
    snprintf(what, sizeof what, "cols: reduce_%s of (64, 64) along dim 0", ops[op]);
    reduce_case(what, d, 3, 2, cols, false);
  }
  tl_define d1[] = {{"kind", "cols"}, {"src", "shared"}, {"dst", "shared"}, {"threads", "32"}, {"op", "max"}};
  reduce_case("cols: shared -> shared, 32 threads", d1, 5, 2, cols, false);
  tl_define d2[] = {{"kind", "cols"}, {"dtype", "int32"}, {"op", "sum"}};
  reduce_case("cols: int32 sum", d2, 3, 2, cols, true);
  tl_define m1[] = {{"kind", "mid"}, {"op", "sum"}};
  reduce_case("mid: (2, 8, 16) along dim 1 into a (2, 16) fragment", m1, 2, 3, mid, false);
  tl_define m2[] = {{"kind", "mid"}, {"op", "absmax"}, {"src", "shared"}, {"batch", "2"}};
  reduce_case("mid: shared source, absmax, batch=2", m2, 4, 3, mid, false);
  static const int64_t g[2][2] = {{64, 32}, {32, 64}};
  static const int twos[2] = {2, 2};
  static const dt_kind f16[2] = {DT_F16, DT_F16};
  tl_define g1[] = {{"kind", "gemm_cols"}};
  int_case("reduce_dims.py", "gemm_cols: column sums of a T.gemm accumulator", g1, 1, 2, f16, g, twos);
  tl_define g2[] = {{"kind", "gemm_cols"}, {"op", "max"}, {"threads", "64"}};
  int_case("reduce_dims.py", "gemm_cols: column maxima, 64 threads", g2, 3, 2, f16, g, twos);
}

/* ------------------------------------------------------ pipeline schedules */
static void sched_case(const char *order, const char *stage, const char *extra_k, const char *extra_v) {
  tl_define d[] = {{"order", order}, {"stage", stage}, {extra_k ? extra_k : "M", extra_v ? extra_v : "256"}};
  char what[160];
  snprintf(what, sizeof what, "gemm 256^3 order=%s stage=%s%s%s%s", order, stage, extra_k ? " " : "",
           extra_k ? extra_k : "", extra_k ? "=" : "");
  if (extra_k) strncat(what, extra_v, sizeof what - strlen(what) - 1);
  tl_kernel *k = compile_last_out("pipeline_sched.py", d, 3);
  if (!k) return;
  const int64_t n = 256;
  int64_t shape[2] = {n, n};
  uint16_t *a = malloc((size_t)(n * n) * 2), *b = malloc((size_t)(n * n) * 2);
  int *ai = malloc((size_t)(n * n) * sizeof(int)), *bi = malloc((size_t)(n * n) * sizeof(int));
  for (int64_t i = 0; i < n * n; i++) {
    ai[i] = (int)floor((rng_uniform() + 1) * 4.5) - 4;
    bi[i] = (int)floor((rng_uniform() + 1) * 4.5) - 4;
    dt_store(DT_F16, a, (size_t)i, ai[i]);
    dt_store(DT_F16, b, (size_t)i, bi[i]);
  }
  DLTensor in[2] = {{a, {kDLCPU, 0}, 2, {kDLFloat, 16, 1}, shape, NULL, 0},
                    {b, {kDLCPU, 0}, 2, {kDLFloat, 16, 1}, shape, NULL, 0}};
  DLManagedTensor *g = NULL;
  cpu_vs_gpu(k, in, 2, what, 0, &g);
  if (g) { /* C = A B, exact in f32, rounded once to f16 */
    size_t bad = 0;
    const uint16_t *c = g->dl_tensor.data;
    bool ta = extra_k && !strcmp(extra_k, "trans_A");
    for (int64_t i = 0; i < n && bad < 1; i++)
      for (int64_t j = 0; j < n; j++) {
        int64_t acc = 0;
        for (int64_t kk = 0; kk < n; kk++) acc += (int64_t)(ta ? ai[kk * n + i] : ai[i * n + kk]) * bi[kk * n + j];
        if (dt_load(DT_F16, c, (size_t)(i * n + j)) != dt_round(DT_F16, (double)acc)) bad++;
      }
    CHECK(bad == 0, "%s: the GPU's C differs from the exact product", what);
    g->deleter(g);
  }
  free(a);
  free(b);
  free(ai);
  free(bi);
  tl_kernel_destroy(k);
}

/* ------------------------------------------------------ short T.Parallel */
static void short_loops(void) {
  static const int64_t s8[1][2] = {{8, 0}}, a64[1][2] = {{64, 32}}, g[2][2] = {{64, 32}, {32, 64}};
  static const int one[1] = {1}, two[1] = {2}, twos[2] = {2, 2};
  static const dt_kind bf[1] = {DT_BF16}, f32[1] = {DT_F32}, f16[2] = {DT_F16, DT_F16};
  int_case("parallel_short.py", "#1744: T.Parallel(4) over a fragment of 8", NULL, 0, 1, bf, s8, one);
  tl_define d1[] = {{"kind", "short_first"}};
  int_case("parallel_short.py", "short (24, 32) loop before a full (64, 32) one", d1, 1, 1, f32, a64, two);
  tl_define d2[] = {{"kind", "short_first"}, {"cols", "20"}, {"threads", "64"}};
  int_case("parallel_short.py", "short (24, 20) loop, 64 threads", d2, 3, 1, f32, a64, two);
  tl_define d3[] = {{"kind", "gemm"}, {"rows", "40"}};
  int_case("parallel_short.py", "short (40, 64) loop over a T.gemm accumulator", d3, 2, 2, f16, g, twos);
}

/* ------------------------------------------------------- T.StridedTensor */
static void strided_case(bool dyn) {
  tl_define d[] = {{"dynamic_ld", dyn ? "True" : "False"}, {"ld", "96"}};
  tl_kernel *k = compile_last_out("strided.py", d, 2);
  if (!k) return;
  int64_t bshape[2] = {64, 96}, vshape[2] = {64, 64}, vstrides[2] = {96, 1}, bad_strides[2] = {80, 1};
  float *big = malloc(64 * 96 * sizeof(float));
  for (int i = 0; i < 64 * 96; i++) big[i] = (float)(floor((rng_uniform() + 1) * 64) / 8);
  DLTensor hb = {big, {kDLCPU, 0}, 2, {kDLFloat, 32, 1}, bshape, NULL, 0};
  DLManagedTensor *db = NULL, *out[1] = {NULL}, *host = NULL;
  DLDevice cuda = {kDLCUDA, 0}, cpu = {kDLCPU, 0};
  tl_status s = tl_tensor_alloc(ctx, cuda, 2, bshape, hb.dtype, &db);
  if (s == TL_OK) s = tl_tensor_copy(ctx, &db->dl_tensor, &hb);
  CHECK(s == TL_OK, "strided: device buffer: %s", tl_context_last_error(ctx));
  if (s == TL_OK) {
    DLTensor view = {db->dl_tensor.data, db->dl_tensor.device, 2, hb.dtype, vshape, vstrides, 0};
    tl_arg args[1] = {tl_arg_tensor(&view)};
    s = tl_kernel_call(ctx, k, args, 1, NULL, out);
    CHECK(s == TL_OK, "strided%s: GPU run: %s", dyn ? " (dynamic ld)" : "", tl_context_last_error(ctx));
    if (s == TL_OK) {
      s = tl_tensor_alloc(ctx, cpu, 2, vshape, hb.dtype, &host);
      if (s == TL_OK) s = tl_tensor_copy(ctx, &host->dl_tensor, &out[0]->dl_tensor);
      CHECK(s == TL_OK, "strided: copy back: %s", tl_context_last_error(ctx));
      size_t bad = 0;
      for (int i = 0; s == TL_OK && i < 64; i++)
        for (int j = 0; j < 64; j++)
          bad += ((float *)host->dl_tensor.data)[i * 64 + j] != big[i * 96 + j] * 2.0f + 1.0f;
      CHECK(bad == 0, "strided: %zu elements differ from 2 A + 1", bad);
      if (!bad)
        printf("  ok   strided view (row stride 96%s) on the GPU: B = 2 A + 1 exactly\n", dyn ? ", dynamic" : "");
    }
    DLTensor other = {db->dl_tensor.data, db->dl_tensor.device, 2, hb.dtype, vshape, bad_strides, 0};
    tl_arg oargs[1] = {tl_arg_tensor(&other)};
    DLManagedTensor *o2[1] = {NULL};
    tl_status s2 = tl_kernel_call(ctx, k, oargs, 1, NULL, o2);
    if (!dyn)
      CHECK(s2 != TL_OK && strstr(tl_context_last_error(ctx), "argument 'A'"),
            "strided: a view of row stride 80 is not refused naming 'A'");
    if (o2[0]) o2[0]->deleter(o2[0]);
  }
  if (out[0]) out[0]->deleter(out[0]);
  if (host) host->deleter(host);
  if (db) db->deleter(db);
  free(big);
  tl_kernel_destroy(k);
}

/* ------------------------------------------- None for an unused tensor */
/* unused_param.py (C = 2 A + 1, Bias never touched): a NULL tensor (Python's
 * None) for Bias runs on the GPU; for A it is refused naming the argument. */
static void none_case(void) {
  char path[1024];
  snprintf(path, sizeof path, "%s/unused_param.py", gemm_kernels_dir());
  tl_compile_options o = {0};
  tl_kernel *k = NULL;
  if (tl_kernel_compile_file(ctx, path, NULL, 0, &o, &k) != TL_OK) {
    CHECK(0, "compiling %s: %s", path, tl_context_last_error(ctx));
    return;
  }
  int64_t shape[1] = {256};
  float ha[256], hc[256];
  for (int i = 0; i < 256; i++) ha[i] = (float)(floor((rng_uniform() + 1) * 64) / 8);
  DLTensor a = {ha, {kDLCPU, 0}, 1, {kDLFloat, 32, 1}, shape, NULL, 0};
  DLTensor c = {hc, {kDLCPU, 0}, 1, {kDLFloat, 32, 1}, shape, NULL, 0};
  DLManagedTensor *da = NULL, *dc = NULL;
  DLDevice cuda = {kDLCUDA, 0};
  tl_status s = tl_tensor_alloc(ctx, cuda, 1, shape, a.dtype, &da);
  if (s == TL_OK) s = tl_tensor_alloc(ctx, cuda, 1, shape, a.dtype, &dc);
  if (s == TL_OK) s = tl_tensor_copy(ctx, &da->dl_tensor, &a);
  CHECK(s == TL_OK, "None: device buffers: %s", tl_context_last_error(ctx));
  if (s == TL_OK) {
    tl_arg args[3] = {tl_arg_tensor(&da->dl_tensor), tl_arg_tensor(NULL), tl_arg_tensor(&dc->dl_tensor)};
    s = tl_kernel_call(ctx, k, args, 3, NULL, NULL);
    CHECK(s == TL_OK, "None for the unused Bias: GPU run: %s", tl_context_last_error(ctx));
    if (s == TL_OK) s = tl_tensor_copy(ctx, &c, &dc->dl_tensor);
    size_t bad = 0;
    for (int i = 0; s == TL_OK && i < 256; i++) bad += hc[i] != ha[i] * 2.0f + 1.0f;
    CHECK(s == TL_OK && bad == 0, "None: %zu of 256 elements differ from 2 A + 1", bad);
    if (s == TL_OK && !bad) printf("  ok   None (a NULL tensor) for the unused Bias on the GPU: C = 2 A + 1 exactly\n");
    tl_arg bad_args[3] = {tl_arg_tensor(NULL), tl_arg_tensor(&da->dl_tensor), tl_arg_tensor(&dc->dl_tensor)};
    tl_status s2 = tl_kernel_call(ctx, k, bad_args, 3, NULL, NULL);
    CHECK(s2 != TL_OK && strstr(tl_context_last_error(ctx), "argument 'A' (#0)"),
          "None for the used A is not refused naming 'A': %s", tl_context_last_error(ctx));
  }
  if (da) da->deleter(da);
  if (dc) dc->deleter(dc);
  tl_kernel_destroy(k);
}

int main(void) {
  if (tl_context_create(&ctx) != TL_OK) return 1;
  gpu_init(ctx);
  rng_seed(14);
  reductions();
  sched_case("[0,1,2]", "[0,0,1]", NULL, NULL);
  sched_case("[0,1,2]", "[0,0,2]", NULL, NULL);
  sched_case("[1,2,0]", "[0,0,2]", NULL, NULL);
  sched_case("[1,2,0]", "[0,0,1]", NULL, NULL);
  sched_case("[1,0]", "[0,1]", "group", "True");
  sched_case("[0,1,2]", "[0,0,2]", "trans_A", "True");
  sched_case("[0,2,1]", "[1,0,1]", NULL, NULL);
  short_loops();
  strided_case(false);
  strided_case(true);
  none_case();
  tl_context_destroy(ctx);
  return finish("test_issue14_forms");
}
