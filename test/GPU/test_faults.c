/* GPU test of driver faults (issue 33), kernels of test/GPU/kernels/faults.py:
 *  1. a CUDA error the context survives: fm_big_ws's 1 TiB workspace makes the
 *     runtime's cuMemAlloc fail; the call returns TL_ERR_CUDA naming
 *     CUDA_ERROR_OUT_OF_MEMORY and the kernel, nothing is launched (the
 *     caller's Out keeps its poison pattern, the GEMM's inputs their values);
 *  2. the same process then runs a 256^3 float16 GEMM (examples/gemm.py,
 *     out_idx none) correctly against a float64 CPU reference, and fm_oob
 *     with an in-bounds offset gives C == A;
 *  3. a kernel that faults: fm_oob reading 8 GiB past (or before) its input;
 *     the fault is reported with the driver's error (at the launch or at the
 *     next synchronisation, tl_tensor_copy's), as sticky with "restart the
 *     process"; a GEMM call after it fails the same way (or, should the
 *     driver have recovered, computes correctly).
 * Prints one line per step and PASS/FAIL; exit 0 pass, 1 fail, 77 without a
 * driver or GPU.  Run from the repository root: build/gpu-bin/test_faults
 * (ctest -L gpu -R faults; scripts/run-gpu.sh in the bundle). */
#include <unistd.h>

#include "gpu_util.h"

static tl_context *ctx;

static tl_kernel *compile(const char *path, const char *kernel, const tl_define *defs, size_t ndefs) {
  tl_compile_options o = {0};
  o.out_idx_mode = TL_OUT_IDX_NONE;
  o.kernel = kernel;
  tl_kernel *k = NULL;
  if (tl_kernel_compile_file(ctx, path, defs, ndefs, &o, &k) != TL_OK) {
    fprintf(stderr, "FAIL compile %s %s: %s\n", path, kernel ? kernel : "", tl_context_last_error(ctx));
    exit(1);
  }
  return k;
}

/* The faults.py kernels sit beside the other test kernels: $TL_KERNEL_DIR/../test/GPU/kernels in the
 * repository, or the bundle's test/GPU/kernels. */
static void faults_path(char *buf, size_t n) {
  snprintf(buf, n, "%s/../test/GPU/kernels/faults.py", kernel_dir());
  if (access(buf, R_OK) != 0) snprintf(buf, n, "test/GPU/kernels/faults.py");
}

#define GM 256
typedef struct gemm {
  tl_kernel *k;
  dev_tensor A, B, C;
  void *ha, *hb;
} gemm;

/* Runs the GEMM; returns the call's status (TL_OK: checked against the CPU). */
static tl_status run_gemm(gemm *g, const char *when) {
  tl_arg args[3] = {tl_arg_tensor(&g->A.t), tl_arg_tensor(&g->B.t), tl_arg_tensor(&g->C.t)};
  tl_status s = tl_kernel_call(ctx, g->k, args, 3, NULL, NULL);
  if (s != TL_OK) return s;
  uint16_t *hc = malloc(sizeof(uint16_t) * GM * GM);
  DLTensor host = g->C.t;
  host.data = hc;
  host.device.device_type = kDLCPU;
  s = tl_tensor_copy(ctx, &host, &g->C.t);
  if (s != TL_OK) {
    free(hc);
    return s;
  }
  double atol, rtol;
  dt_tol(DT_F16, &atol, &rtol);
  size_t bad = 0;
  for (int i = 0; i < GM; i++)
    for (int j = 0; j < GM; j++) {
      double ref = 0;
      for (int kk = 0; kk < GM; kk++)
        ref += dt_load(DT_F16, g->ha, (size_t)i * GM + kk) * dt_load(DT_F16, g->hb, (size_t)kk * GM + j);
      double got = dt_load(DT_F16, hc, (size_t)i * GM + j);
      if (fabs(got - ref) > atol + rtol * fabs(ref) * 4 + 0.05) bad++;
    }
  CHECK(bad == 0, "%s: GEMM: %zu of %d elements differ from the CPU reference", when, bad, GM * GM);
  if (bad == 0) printf("ok   %s: GEMM %dx%dx%d float16 matches the CPU reference\n", when, GM, GM, GM);
  free(hc);
  return TL_OK;
}

static bool inputs_intact(gemm *g) {
  void *a = download(g->A.ptr, g->A.bytes), *b = download(g->B.ptr, g->B.bytes);
  bool ok = !memcmp(a, g->ha, g->A.bytes) && !memcmp(b, g->hb, g->B.bytes);
  free(a);
  free(b);
  return ok;
}

int main(void) {
  if (tl_context_create(&ctx) != TL_OK) return 1;
  gpu_init(ctx);
  char fpath[1200], gpath[1200];
  faults_path(fpath, sizeof fpath);
  snprintf(gpath, sizeof gpath, "%s/gemm.py", kernel_dir());
  tl_define gd[3] = {{"M", "256"}, {"N", "256"}, {"K", "256"}};
  gemm g;
  memset(&g, 0, sizeof g);
  g.k = compile(gpath, NULL, gd, 3);
  int64_t gs[2] = {GM, GM}, vs[1] = {256};
  rng_seed(33);
  g.ha = dev_random(&g.A, DT_F16, 2, gs);
  g.hb = dev_random(&g.B, DT_F16, 2, gs);
  dev_alloc(&g.C, DT_F16, 2, gs);
  tl_kernel *big = compile(fpath, "fm_big_ws", NULL, 0), *oob = compile(fpath, "fm_oob", NULL, 0);
  dev_tensor A, Out;
  float *ha = dev_random(&A, DT_F32, 1, vs);
  dev_alloc(&Out, DT_F32, 1, vs);

  /* 1. out of memory for the workspace: reported, nothing ran */
  CU(G.cuMemsetD8(Out.ptr, 0xA5, Out.bytes));
  tl_arg bargs[2] = {tl_arg_tensor(&A.t), tl_arg_tensor(&Out.t)};
  tl_status s = tl_kernel_call(ctx, big, bargs, 2, NULL, NULL);
  const char *msg = tl_context_last_error(ctx);
  CU(G.cuCtxSynchronize());
  CHECK(
      s == TL_ERR_CUDA && strstr(msg, "CUDA_ERROR_OUT_OF_MEMORY") && strstr(msg, "fm_big_ws") && !strstr(msg, "sticky"),
      "1 TiB workspace: status %s: %s", tl_status_name(s), msg);
  unsigned char *ho = download(Out.ptr, Out.bytes);
  size_t touched = 0;
  for (size_t i = 0; i < Out.bytes; i++) touched += ho[i] != 0xA5;
  free(ho);
  CHECK(touched == 0, "the failed call wrote %zu bytes of Out", touched);
  CHECK(inputs_intact(&g), "the failed call changed the GEMM's inputs");
  if (s == TL_ERR_CUDA) printf("ok   out of memory reported: %s\n", msg);

  /* 2. the context is fine: a GEMM and an in-bounds fm_oob */
  s = run_gemm(&g, "after the out-of-memory error");
  CHECK(s == TL_OK, "GEMM after the out-of-memory error: %s", tl_context_last_error(ctx));
  tl_arg oargs[3] = {tl_arg_tensor(&A.t), tl_arg_tensor(&Out.t), tl_arg_int(0)};
  s = tl_kernel_call(ctx, oob, oargs, 3, NULL, NULL);
  CHECK(s == TL_OK, "fm_oob in bounds: %s", tl_context_last_error(ctx));
  float *hout = download(Out.ptr, Out.bytes);
  CHECK(!memcmp(hout, ha, Out.bytes), "fm_oob with off 0: C != A");
  free(hout);

  /* 3. a kernel that faults; the error is sticky */
  long offs[2] = {2147483647L - 512, -2147483647L};
  bool faulted = false;
  for (int t = 0; t < 2 && !faulted; t++) {
    oargs[2] = tl_arg_int(offs[t]);
    s = tl_kernel_call(ctx, oob, oargs, 3, NULL, NULL);
    if (s == TL_OK) { /* the launch is asynchronous: the fault shows at the next synchronisation */
      float *h = malloc(Out.bytes);
      DLTensor host = Out.t;
      host.data = h;
      host.device.device_type = kDLCPU;
      s = tl_tensor_copy(ctx, &host, &Out.t);
      free(h);
    }
    msg = tl_context_last_error(ctx);
    faulted = s != TL_OK;
    if (faulted) {
      CHECK(
          s == TL_ERR_CUDA && strstr(msg, "CUDA_ERROR_") && strstr(msg, "sticky") && strstr(msg, "restart the process"),
          "the fault: status %s: %s", tl_status_name(s), msg);
      printf("ok   the faulting kernel (offset %ld) reported: %s\n", offs[t], msg);
    }
  }
  CHECK(faulted, "fm_oob reading 8 GiB away did not fault (memory mapped there?)");
  if (faulted) {
    s = run_gemm(&g, "after the sticky error");
    msg = tl_context_last_error(ctx);
    CHECK(s == TL_OK || (s == TL_ERR_CUDA && strstr(msg, "sticky") && strstr(msg, "restart the process")),
          "GEMM after the fault: status %s without the sticky advice: %s", tl_status_name(s), msg);
    if (s != TL_OK) printf("ok   a GEMM after the fault is refused: %s\n", msg);
  }
  /* the context is dead: no driver frees (they would fail); the process ends */
  free(ha);
  free(g.ha);
  free(g.hb);
  tl_kernel_destroy(big);
  tl_kernel_destroy(oob);
  tl_kernel_destroy(g.k);
  tl_context_destroy(ctx);
  return finish("test_faults");
}
