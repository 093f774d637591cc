/* GPU test (issue 3, acceptance 4): the launch is ordered on the caller's
 * stream.  A stream created with CU_STREAM_NON_BLOCKING is held busy by
 * cuStreamWaitValue32 on a device flag; the add is launched on it.  While
 * it is held, the legacy default stream is idle (cuStreamQuery succeeds),
 * the held stream reports CUDA_ERROR_NOT_READY, and the output (read through
 * a third stream) is still poisoned.  Writing the flag from the third stream
 * releases it; after cuStreamSynchronize the output is A + B. */
#include <unistd.h>

#include "gpu_util.h"

#define CU_STREAM_NON_BLOCKING 1
#define CU_STREAM_WAIT_VALUE_GEQ 0
#define CUDA_ERROR_NOT_READY 600

int main(void) {
  tl_context *ctx;
  if (tl_context_create(&ctx) != TL_OK) return 1;
  gpu_init(ctx);
  rng_seed((uint64_t)time(NULL));
  char path[1024];
  snprintf(path, sizeof path, "%s/elementwise_add_1d.py", kernel_dir());
  tl_compile_options o = {0};
  o.out_idx_mode = TL_OUT_IDX_NONE;
  tl_kernel *k = NULL;
  if (tl_kernel_compile_file(ctx, path, NULL, 0, &o, &k) != TL_OK) {
    fprintf(stderr, "FAIL compile: %s\n", tl_context_last_error(ctx));
    return 1;
  }
  int64_t n = 1 << 20;
  size_t bytes = (size_t)n * 4;
  dev_tensor A, B, C;
  void *ha = dev_random(&A, DT_F32, 1, &n), *hb = dev_random(&B, DT_F32, 1, &n);
  dev_alloc(&C, DT_F32, 1, &n);
  CU(G.cuMemsetD8(C.ptr, 0xFF, bytes));
  unsigned long long flag;
  CU(G.cuMemAlloc(&flag, 4));
  CU(G.cuMemsetD8(flag, 0, 4));
  /* load the module first so the launch does not wait on the JIT */
  if (tl_kernel_load(ctx, k, 0) != TL_OK) {
    fprintf(stderr, "FAIL load: %s\n", tl_context_last_error(ctx));
    return 1;
  }
  CU(G.cuCtxSynchronize());

  void *s_held, *s_side;
  CU(G.cuStreamCreate(&s_held, CU_STREAM_NON_BLOCKING));
  CU(G.cuStreamCreate(&s_side, CU_STREAM_NON_BLOCKING));
  int r = G.cuStreamWaitValue32(s_held, flag, 1, CU_STREAM_WAIT_VALUE_GEQ);
  if (r != 0) {
    const char *nm = "?";
    G.cuGetErrorName(r, &nm);
    printf("SKIP: cuStreamWaitValue32 is not supported here (%s)\n", nm);
    return GPU_SKIP;
  }
  tl_arg args[3] = {tl_arg_tensor(&A.t), tl_arg_tensor(&B.t), tl_arg_tensor(&C.t)};
  if (tl_kernel_call(ctx, k, args, 3, s_held, NULL) != TL_OK) {
    fprintf(stderr, "FAIL call: %s\n", tl_context_last_error(ctx));
    return 1;
  }
  usleep(100 * 1000);
  CHECK(G.cuStreamQuery(NULL) == 0, "the legacy default stream is busy: the launch went there?");
  CHECK(G.cuStreamQuery(s_held) == CUDA_ERROR_NOT_READY, "the held stream is not busy");
  float *h = malloc(bytes);
  CU(G.cuMemcpyDtoHAsync(h, C.ptr, bytes, s_side));
  CU(G.cuStreamSynchronize(s_side));
  size_t written = 0;
  for (int64_t i = 0; i < n; i++) written += !isnan(h[i]);
  CHECK(written == 0, "%zu output elements written while the stream was held", written);
  printf("  ok   output untouched while the non-blocking stream is held; default stream idle\n");

  CU(G.cuMemsetD32Async(flag, 1, 1, s_side));
  CU(G.cuStreamSynchronize(s_held));
  CU(G.cuMemcpyDtoH(h, C.ptr, bytes));
  size_t bad = 0;
  for (int64_t i = 0; i < n; i++) bad += h[i] != ((float *)ha)[i] + ((float *)hb)[i];
  CHECK(bad == 0, "after release: %zu wrong elements", bad);
  printf("  ok   output written after the stream is released\n");

  CU(G.cuStreamDestroy(s_held));
  CU(G.cuStreamDestroy(s_side));

  free(h);
  free(ha);
  free(hb);
  G.cuMemFree(flag);
  dev_free(&A);
  dev_free(&B);
  dev_free(&C);
  tl_kernel_destroy(k);
  tl_context_destroy(ctx);
  return finish("test_stream");
}
