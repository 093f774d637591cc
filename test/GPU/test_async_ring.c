/* GPU test of the named-barrier, mbarrier, 1-D bulk copy and proxy-fence
 * intrinsics (docs/simt-ir.md "Asynchronous pipelines"; issue 11,
 * acceptance 2's GPU run): hand-written SIMT kernels in test/GPU/kernels, each
 * a bare `main(A: float32[8192], B: float32[8192])` computing B[i] = A[i] * 2 + 1
 * (exact in float32: 2a is exact, the add rounds once, and no fma is formed):
 *  - mbarrier_ring.py: one producer warp, two consumer warps, a 3-stage ring
 *    of shared buffers guarded by full/empty mbarriers; stages filled by
 *    T.ptx_cp_async_bulk after T.ptx_mbarrier_arrive_expect_tx;
 *  - mbarrier_ring_stores.py: the same ring filled by ordinary stores, a
 *    proxy fence and T.ptx_mbarrier_complete_tx;
 *  - named_barrier.py: T.ptx_bar_sync(1, 64) over two warps while the others
 *    run on;
 *  - async_ring_all.py: every intrinsic of the family in one kernel (bulk and
 *    store-filled stages, expect_tx / complete_tx, named barrier sync and
 *    arrive, the bulk store out of shared memory with its groups).
 * Each is compiled for the device's target (it needs sm_90: on an older GPU
 * the test skips) and run 20 times, each time with fresh random A in [-1, 1)
 * and B filled with 0xFF bytes (NaN), and every element of B is compared
 * bit for bit.  A launch that has not finished after 10 s (a deadlock) fails
 * the test and exits.  Prints `ok FILE: 20 runs, 0 mismatches` per kernel,
 * then PASS.  Kernel files from $TL_GPU_KERNELS (default test/GPU/kernels). */
#include "gemm_util.h"

#define N_ELEMS 8192
#define RUNS 20
#define HANG_MS 10000.0
#define CUDA_ERROR_NOT_READY_ 600

static tl_context *ctx;

/* Waits for the legacy default stream; a kernel still running after HANG_MS
 * is a deadlock: report and exit (the context cannot be used again). */
static void wait_or_die(const char *file, int run) {
  double t0 = now_ms();
  for (;;) {
    CUres r = G.cuStreamQuery(NULL);
    if (r == 0) return;
    if (r != CUDA_ERROR_NOT_READY_) CU(r);
    if (now_ms() - t0 > HANG_MS) {
      printf("FAIL %s: run %d has not finished after %.0f s (a deadlock?)\n", file, run, HANG_MS / 1000);
      fflush(stdout);
      _exit(1);
    }
    struct timespec ts = {0, 200000};
    nanosleep(&ts, NULL);
  }
}

static void run_kernel(const char *file) {
  char path[1024];
  snprintf(path, sizeof path, "%s/%s", gemm_kernels_dir(), file);
  tl_compile_options o = {0};
  o.out_idx_mode = TL_OUT_IDX_NONE;
  tl_kernel *k = NULL;
  if (tl_kernel_compile_file(ctx, path, NULL, 0, &o, &k) != TL_OK) {
    CHECK(0, "compiling %s: %s", path, tl_context_last_error(ctx));
    return;
  }
  int64_t n = N_ELEMS;
  dev_tensor A, B;
  dev_alloc(&A, DT_F32, 1, &n);
  dev_alloc(&B, DT_F32, 1, &n);
  float *ha = malloc(sizeof(float) * N_ELEMS), *hb = malloc(sizeof(float) * N_ELEMS);
  long mismatches = 0, first_run = -1, first_i = -1;
  float first_got = 0, first_want = 0, first_a = 0;
  int runs = 0;
  for (int run = 0; run < RUNS; run++) {
    for (int i = 0; i < N_ELEMS; i++) ha[i] = (float)rng_uniform();
    CU(G.cuMemcpyHtoD(A.ptr, ha, A.bytes));
    CU(G.cuMemsetD8(B.ptr, 0xFF, B.bytes)); /* NaN: an unwritten element fails */
    CU(G.cuCtxSynchronize());
    tl_arg args[2] = {tl_arg_tensor(&A.t), tl_arg_tensor(&B.t)};
    if (tl_kernel_call(ctx, k, args, 2, NULL, NULL) != TL_OK) {
      CHECK(0, "%s run %d: %s", file, run, tl_context_last_error(ctx));
      break;
    }
    wait_or_die(file, run);
    CU(G.cuMemcpyDtoH(hb, B.ptr, B.bytes));
    runs++;
    for (int i = 0; i < N_ELEMS; i++) {
      float want = ha[i] * 2.0f + 1.0f;
      if (memcmp(&hb[i], &want, sizeof want) != 0) {
        if (!mismatches) {
          first_run = run;
          first_i = i;
          first_got = hb[i];
          first_want = want;
          first_a = ha[i];
        }
        mismatches++;
      }
    }
  }
  if (mismatches)
    CHECK(0, "%s: %ld mismatches in %d runs; first in run %ld at B[%ld]: got %.9g, expected %.9g (A = %.9g)", file,
          mismatches, runs, first_run, first_i, first_got, first_want, first_a);
  printf("%s %s: %d runs, %ld mismatches\n", mismatches || runs < RUNS ? "FAIL" : "ok", file, runs, mismatches);
  free(ha);
  free(hb);
  dev_free(&A);
  dev_free(&B);
  tl_kernel_destroy(k);
}

int main(void) {
  if (tl_context_create(&ctx) != TL_OK) return 1;
  gpu_init(ctx);
  const char *target = tl_device_default_target();
  if (strcmp(target, "sm_90") < 0) { /* sm_80, sm_86, sm_89 */
    printf("SKIP: the kernels need sm_90 (mbarrier tx-count, cp.async.bulk); this device's target is %s\n", target);
    tl_context_destroy(ctx);
    return GPU_SKIP;
  }
  rng_seed((uint64_t)time(NULL));
  printf("test_async_ring (target %s)\n", target);
  static const char *const files[] = {"mbarrier_ring.py", "mbarrier_ring_stores.py", "named_barrier.py",
                                      "async_ring_all.py"};
  for (size_t i = 0; i < sizeof files / sizeof files[0]; i++) run_kernel(files[i]);
  tl_context_destroy(ctx);
  return finish("test_async_ring");
}
