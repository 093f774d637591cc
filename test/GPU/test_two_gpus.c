/* GPU test (issue 18): kernels run where their tensors are.
 *
 * One GPU (runs on any GPU host):
 *   (1) device 0 named by ordinal through the C API: tensors made with
 *       tl_tensor_alloc on (kDLCUDA, 0), the elementwise add (out_idx none)
 *       and examples/gemm.py at 512^3 (out_idx=-1: C allocated by the call,
 *       on device 0) launched on a stream of device 0's primary context,
 *       checked exactly (add) and against a float64 CPU product (GEMM); an
 *       ordinal the machine lacks is refused naming it and the count.
 *   (2) a call mixing cuda:0 and cuda:1 tensors launches nothing and names
 *       the parameter and both devices.  The device check precedes every
 *       driver call, so on one GPU B is device 0's memory labelled
 *       (kDLCUDA, 1); with two GPUs B is real memory of device 1.  The
 *       poisoned output stays poisoned; the GEMM's out_idx output is not
 *       made.
 * Two GPUs (skipped with a message, exit 77, on fewer; TL_TWO_GPU_REQUIRED=1
 * turns that skip into a failure, for scripts/two-gpu-acceptance.sh):
 *   (3) two threads, one per device, each with its own tl_context and a
 *       non-blocking stream of its device's primary context, call the same
 *       two kernel objects (loaded by neither beforehand) 1,000 times each,
 *       concurrently (a barrier starts them together): the add as a chain
 *       X_{i+1} = X_i + D, whose value after i calls (X_0 + i D, exact in
 *       float32 for small integers) proves that every call ran, in stream
 *       order; the GEMM into a ring of 4 outputs, each poisoned on the
 *       stream before its call, checked against the CPU product of that
 *       device's inputs (each device has its own random inputs) at calls
 *       250, 500, 750 and for the last 4; every 100th call also runs the
 *       out_idx=-1 GEMM object, whose output must be on that device.  Each
 *       thread prints its wall time; the two intervals must overlap.
 * The two devices must share a compile target for one kernel object to
 * serve both (tl_device_target); when they do not, the kernels are compiled
 * for sm_80, whose PTX runs on every supported device, and the refusal of
 * device 0's target on device 1 is checked as well. */
#include <pthread.h>

#include "gemm_util.h"

#define CU_STREAM_NON_BLOCKING 1
#define CALLS 1000
#define RING 4
#define GM 512 /* GEMM M = N = K */
#define EM 256 /* elementwise M x N */
#define EN 512

static tl_kernel *k_add, *k_gemm, *k_gemm_out; /* out_idx none, none, -1 */
static int g_ndev;

static tl_kernel *compile(tl_context *ctx, const char *file, const tl_define *defs, size_t nd, const char *target,
                          bool out_none) {
  char path[1024];
  snprintf(path, sizeof path, "%s/%s", kernel_dir(), file);
  tl_compile_options o = {0};
  o.target = target;
  o.out_idx_mode = out_none ? TL_OUT_IDX_NONE : TL_OUT_IDX_FROM_FILE;
  o.flags = TL_COMPILE_POISON_OUTPUTS;
  tl_kernel *k = NULL;
  if (tl_kernel_compile_file(ctx, path, defs, nd, &o, &k) != TL_OK) {
    fprintf(stderr, "FAIL compile %s: %s\n", file, tl_context_last_error(ctx));
    exit(1);
  }
  return k;
}

/* A compact tensor on (kDLCUDA, device) holding `bytes` of host data (NULL: uninitialised). */
static DLManagedTensor *upload(tl_context *ctx, int device, int ndim, const int64_t *shape, dt_kind d,
                               const void *host) {
  DLDevice dev = {kDLCUDA, device};
  DLManagedTensor *t = NULL;
  if (tl_tensor_alloc(ctx, dev, ndim, shape, dt_dl(d), &t) != TL_OK) {
    fprintf(stderr, "FAIL tl_tensor_alloc on cuda:%d: %s\n", device, tl_context_last_error(ctx));
    exit(1);
  }
  if (host) {
    DLTensor h = {(void *)host, {kDLCPU, 0}, ndim, dt_dl(d), (int64_t *)shape, NULL, 0};
    if (tl_tensor_copy(ctx, &t->dl_tensor, &h) != TL_OK) {
      fprintf(stderr, "FAIL upload to cuda:%d: %s\n", device, tl_context_last_error(ctx));
      exit(1);
    }
  }
  return t;
}

static unsigned long long dptr(const DLManagedTensor *t) { return (uintptr_t)t->dl_tensor.data; }

/* "ok" when no check failed since the count was `before`, else "FAIL". */
static const char *verdict(int before) { return g_failures == before ? "ok" : "FAIL"; }

/* Inputs and references of one device (made on the main thread: the
 * generator is not thread-safe). */
typedef struct dev_inputs {
  float *x0, *d; /* elementwise chain: integers, exact */
  void *ha, *hb; /* GEMM f16 inputs */
  double *ref;   /* A @ B in float64 */
} dev_inputs;

static void make_inputs(dev_inputs *in, uint64_t seed) {
  rng_seed(seed);
  size_t ne = (size_t)EM * EN, ng = (size_t)GM * GM;
  in->x0 = malloc(ne * 4), in->d = malloc(ne * 4);
  for (size_t i = 0; i < ne; i++) {
    in->x0[i] = (float)(int)floor(rng_uniform() * 4.5);
    in->d[i] = (float)(int)floor(rng_uniform() * 2.5);
  }
  in->ha = malloc(ng * 2), in->hb = malloc(ng * 2);
  for (size_t i = 0; i < ng; i++) dt_store(DT_F16, in->ha, i, rng_uniform());
  for (size_t i = 0; i < ng; i++) dt_store(DT_F16, in->hb, i, rng_uniform());
  in->ref = ref_gemm(in->ha, in->hb, GM, GM, GM, DT_F16, false, false);
}

/* The add chain after `calls` adds: X0 + calls * D, compared exactly. */
static size_t chain_errors(const dev_inputs *in, const float *got, int calls) {
  size_t bad = 0;
  for (size_t i = 0; i < (size_t)EM * EN; i++) bad += got[i] != in->x0[i] + (float)calls * in->d[i];
  return bad;
}

static bool gemm_ok(const char *what, const dev_inputs *in, const void *got) {
  double atol, rtol;
  dt_tol(DT_F16, &atol, &rtol);
  cmp_result r = compare_out(DT_F16, got, (size_t)GM * GM, in->ref, NULL, atol, rtol);
  CHECK(r.bad == 0, "%s: %zu of %d GEMM elements wrong (worst [%zu] got %g expected %g)", what, r.bad, GM * GM, r.worst,
        r.worst_got, r.worst_ref);
  return r.bad == 0;
}

/* ------------------------------------------------------------ (1) */
static void device0_by_ordinal(tl_context *ctx, const dev_inputs *in) {
  int f0 = g_failures;
  int64_t es[2] = {EM, EN}, gs[2] = {GM, GM};
  DLManagedTensor *x = upload(ctx, 0, 2, es, DT_F32, in->x0), *d = upload(ctx, 0, 2, es, DT_F32, in->d);
  DLManagedTensor *y = upload(ctx, 0, 2, es, DT_F32, NULL);
  DLManagedTensor *a = upload(ctx, 0, 2, gs, DT_F16, in->ha), *b = upload(ctx, 0, 2, gs, DT_F16, in->hb);
  void *pctx, *s;
  int dev;
  CU(G.cuDeviceGet(&dev, 0));
  CU(G.cuDevicePrimaryCtxRetain(&pctx, dev));
  CU(G.cuCtxSetCurrent(pctx));
  CU(G.cuStreamCreate(&s, CU_STREAM_NON_BLOCKING));
  tl_arg add_args[3] = {tl_arg_tensor(&x->dl_tensor), tl_arg_tensor(&d->dl_tensor), tl_arg_tensor(&y->dl_tensor)};
  tl_arg mm_args[2] = {tl_arg_tensor(&a->dl_tensor), tl_arg_tensor(&b->dl_tensor)};
  DLManagedTensor *c = NULL;
  tl_status s1 = tl_kernel_call(ctx, k_add, add_args, 3, s, NULL);
  CHECK(s1 == TL_OK, "cuda:0 add: %s", tl_context_last_error(ctx));
  tl_status s2 = tl_kernel_call(ctx, k_gemm_out, mm_args, 2, s, &c);
  CHECK(s2 == TL_OK, "cuda:0 gemm: %s", tl_context_last_error(ctx));
  CU(G.cuStreamSynchronize(s));
  if (s1 == TL_OK) {
    float *h = download(dptr(y), (size_t)EM * EN * 4);
    CHECK(chain_errors(in, h, 1) == 0, "cuda:0 add: wrong elements");
    free(h);
  }
  if (s2 == TL_OK) {
    CHECK(c->dl_tensor.device.device_type == kDLCUDA && c->dl_tensor.device.device_id == 0,
          "cuda:0 gemm: output on (%d, %d)", c->dl_tensor.device.device_type, c->dl_tensor.device.device_id);
    void *h = download(dptr(c), (size_t)GM * GM * 2);
    gemm_ok("cuda:0 gemm (out_idx output)", in, h);
    free(h);
    c->deleter(c);
  }
  printf(
      "  %-4s (1) cuda:0 by ordinal on a non-blocking stream: add exact, %dx%dx%d GEMM (out_idx output on "
      "cuda:0) vs float64 CPU\n",
      verdict(f0), GM, GM, GM);
  f0 = g_failures;
  /* an ordinal the machine lacks */
  tl_status sl = tl_kernel_load(ctx, k_add, g_ndev);
  char want[128];
  snprintf(want, sizeof want, "device cuda:%d does not exist (%d CUDA device(s))", g_ndev, g_ndev);
  CHECK(sl == TL_ERR_INVALID_ARGUMENT && !strcmp(tl_context_last_error(ctx), want), "load on cuda:%d: %s: '%s'", g_ndev,
        tl_status_name(sl), tl_context_last_error(ctx));
  printf("  %-4s (1) tl_kernel_load(cuda:%d): %s\n", verdict(f0), g_ndev, tl_context_last_error(ctx));
  CU(G.cuStreamDestroy(s));
  x->deleter(x), d->deleter(d), y->deleter(y), a->deleter(a), b->deleter(b);
}

/* ------------------------------------------------------------ (2) */
static void mixed_devices_refused(tl_context *ctx, const dev_inputs *in) {
  int f0 = g_failures;
  int64_t es[2] = {EM, EN}, gs[2] = {GM, GM};
  DLManagedTensor *x = upload(ctx, 0, 2, es, DT_F32, in->x0), *y = upload(ctx, 0, 2, es, DT_F32, NULL);
  DLManagedTensor *a = upload(ctx, 0, 2, gs, DT_F16, in->ha);
  DLManagedTensor *d1 = NULL, *b1 = NULL;
  DLTensor d_t, b_t; /* B of each call: on cuda:1 */
  if (g_ndev >= 2) {
    d1 = upload(ctx, 1, 2, es, DT_F32, in->d);
    b1 = upload(ctx, 1, 2, gs, DT_F16, in->hb);
    d_t = d1->dl_tensor, b_t = b1->dl_tensor;
  } else { /* device 0's memory labelled cuda:1: the check must come before any pointer is looked at */
    d_t = x->dl_tensor, b_t = a->dl_tensor;
    d_t.device.device_id = 1, b_t.device.device_id = 1;
  }
  CU(G.cuMemsetD8(dptr(y), 0xFF, (size_t)EM * EN * 4));
  CU(G.cuCtxSynchronize());
  tl_arg add_args[3] = {tl_arg_tensor(&x->dl_tensor), tl_arg_tensor(&d_t), tl_arg_tensor(&y->dl_tensor)};
  tl_status st = tl_kernel_call(ctx, k_add, add_args, 3, NULL, NULL);
  const char *want = "argument 'B' (#1): device: expected cuda:0 (the device of 'A'), got cuda:1";
  CHECK(st == TL_ERR_INVALID_ARGUMENT && !strcmp(tl_context_last_error(ctx), want), "mixed add: %s: '%s'",
        tl_status_name(st), tl_context_last_error(ctx));
  printf("  %-4s (2) add with A on cuda:0, B on cuda:1 (%s): %s\n", verdict(f0),
         g_ndev >= 2 ? "real memory of cuda:1" : "cuda:0 memory labelled cuda:1", tl_context_last_error(ctx));
  f0 = g_failures;
  tl_arg mm_args[2] = {tl_arg_tensor(&a->dl_tensor), tl_arg_tensor(&b_t)};
  DLManagedTensor *c = NULL;
  st = tl_kernel_call(ctx, k_gemm_out, mm_args, 2, NULL, &c);
  CHECK(st == TL_ERR_INVALID_ARGUMENT && !strcmp(tl_context_last_error(ctx), want) && !c, "mixed gemm: %s: '%s'",
        tl_status_name(st), tl_context_last_error(ctx));
  printf("  %-4s (2) gemm likewise: %s; no output made: %s\n", verdict(f0), tl_context_last_error(ctx),
         c ? "NO" : "yes");
  f0 = g_failures;
  CU(G.cuCtxSynchronize());
  uint32_t *h = download(dptr(y), (size_t)EM * EN * 4);
  size_t written = 0;
  for (size_t i = 0; i < (size_t)EM * EN; i++) written += h[i] != 0xFFFFFFFFu;
  CHECK(written == 0, "mixed add: %zu output elements written: something was launched", written);
  printf("  %-4s (2) the poisoned output is untouched (%zu elements written)\n", verdict(f0), written);
  free(h);
  x->deleter(x), y->deleter(y), a->deleter(a);
  if (d1) d1->deleter(d1), b1->deleter(b1);
}

/* ------------------------------------------------------------ (3) */
typedef struct worker {
  int device;
  const dev_inputs *in;
  pthread_barrier_t *start;
  double t0, t1;
  int call_errors, failures;
  void *stream;
} worker;

#define WCHECK(w, cond, ...)                                                                                           \
  do {                                                                                                                 \
    if (!(cond)) {                                                                                                     \
      fprintf(stderr, "FAIL cuda:%d: ", (w)->device);                                                                  \
      fprintf(stderr, __VA_ARGS__);                                                                                    \
      fprintf(stderr, "\n");                                                                                           \
      (w)->failures++;                                                                                                 \
    }                                                                                                                  \
  } while (0)

static bool wgemm_ok(worker *w, const char *what, const void *got) {
  double atol, rtol;
  dt_tol(DT_F16, &atol, &rtol);
  cmp_result r = compare_out(DT_F16, got, (size_t)GM * GM, w->in->ref, NULL, atol, rtol);
  WCHECK(w, r.bad == 0, "%s: %zu GEMM elements wrong (worst [%zu] got %g expected %g)", what, r.bad, r.worst,
         r.worst_got, r.worst_ref);
  return r.bad == 0;
}

static void *drive(void *arg) {
  worker *w = arg;
  const dev_inputs *in = w->in;
  tl_context *ctx = NULL;
  if (tl_context_create(&ctx) != TL_OK) {
    w->failures++;
    return NULL;
  }
  int dev;
  void *pctx, *s;
  CU(G.cuDeviceGet(&dev, w->device));
  CU(G.cuDevicePrimaryCtxRetain(&pctx, dev));
  CU(G.cuCtxSetCurrent(pctx)); /* this thread's current context: its device's */
  CU(G.cuStreamCreate(&s, CU_STREAM_NON_BLOCKING));
  w->stream = s;
  int64_t es[2] = {EM, EN}, gs[2] = {GM, GM};
  DLManagedTensor *x[2] = {upload(ctx, w->device, 2, es, DT_F32, in->x0), upload(ctx, w->device, 2, es, DT_F32, NULL)};
  DLManagedTensor *d = upload(ctx, w->device, 2, es, DT_F32, in->d);
  DLManagedTensor *a = upload(ctx, w->device, 2, gs, DT_F16, in->ha),
                  *b = upload(ctx, w->device, 2, gs, DT_F16, in->hb);
  DLManagedTensor *c[RING];
  for (int r = 0; r < RING; r++) c[r] = upload(ctx, w->device, 2, gs, DT_F16, NULL);
  size_t ebytes = (size_t)EM * EN * 4, gbytes = (size_t)GM * GM * 2;
  float *hx = malloc(ebytes);
  void *hc = malloc(gbytes);
  char what[96];
  pthread_barrier_wait(w->start);
  w->t0 = now_ms();
  for (int i = 0; i < CALLS; i++) {
    tl_arg add_args[3] = {tl_arg_tensor(&x[i % 2]->dl_tensor), tl_arg_tensor(&d->dl_tensor),
                          tl_arg_tensor(&x[(i + 1) % 2]->dl_tensor)};
    if (tl_kernel_call(ctx, k_add, add_args, 3, s, NULL) != TL_OK && w->call_errors++ < 3)
      fprintf(stderr, "FAIL cuda:%d add call %d: %s\n", w->device, i, tl_context_last_error(ctx));
    DLManagedTensor *cr = c[i % RING];
    CU(G.cuMemsetD32Async(dptr(cr), 0xFFFFFFFFu, gbytes / 4, s)); /* NaN until the GEMM writes it */
    tl_arg mm_args[3] = {tl_arg_tensor(&a->dl_tensor), tl_arg_tensor(&b->dl_tensor), tl_arg_tensor(&cr->dl_tensor)};
    if (tl_kernel_call(ctx, k_gemm, mm_args, 3, s, NULL) != TL_OK && w->call_errors++ < 3)
      fprintf(stderr, "FAIL cuda:%d gemm call %d: %s\n", w->device, i, tl_context_last_error(ctx));
    if (i % 100 == 50) { /* the out_idx object: its output is allocated on this device */
      DLManagedTensor *o = NULL;
      if (tl_kernel_call(ctx, k_gemm_out, mm_args, 2, s, &o) != TL_OK) {
        if (w->call_errors++ < 3)
          fprintf(stderr, "FAIL cuda:%d out_idx gemm call %d: %s\n", w->device, i, tl_context_last_error(ctx));
      } else {
        WCHECK(w, o->dl_tensor.device.device_type == kDLCUDA && o->dl_tensor.device.device_id == w->device,
               "out_idx output of call %d on (%d, %d)", i, o->dl_tensor.device.device_type,
               o->dl_tensor.device.device_id);
        CU(G.cuStreamSynchronize(s));
        CU(G.cuMemcpyDtoH(hc, dptr(o), gbytes));
        snprintf(what, sizeof what, "out_idx GEMM call %d", i);
        wgemm_ok(w, what, hc);
        o->deleter(o);
      }
    }
    if (i % 250 == 249 && i != CALLS - 1) { /* a checkpoint while the other thread keeps launching */
      CU(G.cuStreamSynchronize(s));
      CU(G.cuMemcpyDtoH(hx, dptr(x[(i + 1) % 2]), ebytes));
      size_t bad = chain_errors(in, hx, i + 1);
      WCHECK(w, bad == 0, "add chain after %d calls: %zu elements wrong", i + 1, bad);
      CU(G.cuMemcpyDtoH(hc, dptr(cr), gbytes));
      snprintf(what, sizeof what, "GEMM call %d", i);
      wgemm_ok(w, what, hc);
    }
  }
  CU(G.cuStreamSynchronize(s));
  w->t1 = now_ms();
  CU(G.cuMemcpyDtoH(hx, dptr(x[CALLS % 2]), ebytes));
  size_t bad = chain_errors(in, hx, CALLS);
  WCHECK(w, bad == 0, "add chain after %d calls: %zu elements wrong", CALLS, bad);
  for (int r = 0; r < RING; r++) {
    CU(G.cuMemcpyDtoH(hc, dptr(c[r]), gbytes));
    snprintf(what, sizeof what, "GEMM ring buffer %d (one of the last %d calls)", r, RING);
    wgemm_ok(w, what, hc);
  }
  free(hx);
  free(hc);
  x[0]->deleter(x[0]), x[1]->deleter(x[1]), d->deleter(d), a->deleter(a), b->deleter(b);
  for (int r = 0; r < RING; r++) c[r]->deleter(c[r]);
  CU(G.cuStreamDestroy(s));
  tl_context_destroy(ctx);
  return NULL;
}

static void two_threads_two_devices(const dev_inputs in[2]) {
  pthread_barrier_t start;
  pthread_barrier_init(&start, NULL, 2);
  worker w[2];
  pthread_t th[2];
  for (int t = 0; t < 2; t++) {
    w[t] = (worker){.device = t, .in = &in[t], .start = &start};
    if (pthread_create(&th[t], NULL, drive, &w[t]) != 0) {
      CHECK(0, "pthread_create");
      return;
    }
  }
  for (int t = 0; t < 2; t++) pthread_join(th[t], NULL);
  pthread_barrier_destroy(&start);
  double base = w[0].t0 < w[1].t0 ? w[0].t0 : w[1].t0;
  for (int t = 0; t < 2; t++) {
    printf(
        "  %-4s (3) cuda:%d thread, stream %p: %d add + %d GEMM (%dx%dx%d) + %d out_idx GEMM calls, "
        "%d call errors, %d check failures; wall %.1f..%.1f ms\n",
        w[t].call_errors || w[t].failures ? "FAIL" : "ok", t, w[t].stream, CALLS, CALLS, GM, GM, GM, CALLS / 100,
        w[t].call_errors, w[t].failures, w[t].t0 - base, w[t].t1 - base);
    g_failures += w[t].failures + w[t].call_errors;
  }
  bool overlap = w[0].t0 < w[1].t1 && w[1].t0 < w[0].t1;
  CHECK(overlap, "the two threads' runs did not overlap in time");
  printf("  %-4s (3) the two threads ran concurrently (their wall-time intervals overlap)\n", overlap ? "ok" : "FAIL");
}

int main(void) {
  tl_context *ctx;
  if (tl_context_create(&ctx) != TL_OK) return 1;
  gpu_init(ctx);
  if (tl_device_count(ctx, &g_ndev) != TL_OK) return 1;
  const char *t0 = tl_device_target(0), *t1 = g_ndev >= 2 ? tl_device_target(1) : t0;
  const char *target = strcmp(t0, t1) ? "sm_80" : t0;
  printf("test_two_gpus: %d CUDA device(s); targets cuda:0 %s%s%s; kernels compiled for %s\n", g_ndev, t0,
         g_ndev >= 2 ? ", cuda:1 " : "", g_ndev >= 2 ? t1 : "", target);
  char m[16], n[16], g[16];
  snprintf(m, sizeof m, "%d", EM), snprintf(n, sizeof n, "%d", EN), snprintf(g, sizeof g, "%d", GM);
  tl_define add_defs[2] = {{"M", m}, {"N", n}}, mm_defs[3] = {{"M", g}, {"N", g}, {"K", g}};
  k_add = compile(ctx, "elementwise_add.py", add_defs, 2, target, true);
  k_gemm = compile(ctx, "gemm.py", mm_defs, 3, target, true);
  k_gemm_out = compile(ctx, "gemm.py", mm_defs, 3, target, false);
  dev_inputs in[2];
  make_inputs(&in[0], 0x5eed0ull + (uint64_t)time(NULL));
  make_inputs(&in[1], 0x5eed1ull + (uint64_t)time(NULL) * 3);

  device0_by_ordinal(ctx, &in[0]);
  mixed_devices_refused(ctx, &in[0]);
  if (g_ndev < 2) {
    bool required = getenv("TL_TWO_GPU_REQUIRED") && !strcmp(getenv("TL_TWO_GPU_REQUIRED"), "1");
    if (g_failures) return finish("test_two_gpus (one-GPU parts)");
    printf("test_two_gpus: one-GPU parts PASS; %s: the two-thread part needs 2 CUDA devices, this machine has %d\n",
           required ? "FAIL (TL_TWO_GPU_REQUIRED=1)" : "SKIP", g_ndev);
    return required ? 1 : GPU_SKIP;
  }
  if (strcmp(t0, t1)) { /* device 0's target on device 1: refused, naming both */
    int f0 = g_failures;
    tl_kernel *k0 = compile(ctx, "elementwise_add.py", add_defs, 2, t0, true);
    tl_status st = tl_kernel_load(ctx, k0, 1);
    CHECK(st == TL_ERR_UNSUPPORTED && strstr(tl_context_last_error(ctx), "cuda:1"), "%s on cuda:1: %s: %s", t0,
          tl_status_name(st), tl_context_last_error(ctx));
    printf("  %-4s %s kernel on cuda:1 refused: %s\n", verdict(f0), t0, tl_context_last_error(ctx));
    tl_kernel_destroy(k0);
  }
  two_threads_two_devices(in);
  tl_kernel_destroy(k_add);
  tl_kernel_destroy(k_gemm);
  tl_kernel_destroy(k_gemm_out);
  tl_context_destroy(ctx);
  return finish("test_two_gpus");
}
