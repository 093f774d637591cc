/* GPU test (issue 3, acceptance 2): out_idx = -1 (from the file), [-1], [2]
 * and none give the same result for the 1-D add; with none the caller's
 * (poisoned) output tensor is written in place.  Also checks that a list
 * with two outputs returns them in the given order. */
#include "gpu_util.h"

static tl_context *ctx;

static tl_kernel *compile(tl_out_idx_mode mode, const int *idx, size_t n) {
  char path[1024];
  snprintf(path, sizeof path, "%s/elementwise_add_1d.py", kernel_dir());
  tl_compile_options o = {0};
  o.out_idx_mode = mode;
  o.out_idx = idx;
  o.n_out_idx = n;
  o.flags = TL_COMPILE_POISON_OUTPUTS;
  tl_kernel *k = NULL;
  if (tl_kernel_compile_file(ctx, path, NULL, 0, &o, &k) != TL_OK) {
    fprintf(stderr, "FAIL compile: %s\n", tl_context_last_error(ctx));
    exit(1);
  }
  return k;
}

int main(void) {
  if (tl_context_create(&ctx) != TL_OK) return 1;
  gpu_init(ctx);
  rng_seed((uint64_t)time(NULL));
  int64_t n = 1000003;
  size_t bytes = (size_t)n * 4;
  dev_tensor A, B, C;
  void *ha = dev_random(&A, DT_F32, 1, &n), *hb = dev_random(&B, DT_F32, 1, &n);
  dev_alloc(&C, DT_F32, 1, &n);
  float *ref = malloc(bytes);
  for (int64_t i = 0; i < n; i++) ref[i] = ((float *)ha)[i] + ((float *)hb)[i];

  const char *names[3] = {"out_idx=-1 (file)", "out_idx=[-1]", "out_idx=[2]"};
  int m1 = -1, two = 2;
  tl_kernel *ks[3] = {compile(TL_OUT_IDX_FROM_FILE, NULL, 0), compile(TL_OUT_IDX_LIST, &m1, 1),
                      compile(TL_OUT_IDX_LIST, &two, 1)};
  for (int v = 0; v < 3; v++) {
    int nout;
    const int *idx = tl_kernel_out_idx(ks[v], &nout);
    CHECK(nout == 1 && idx[0] == 2, "%s: normalized out_idx", names[v]);
    tl_arg args[2] = {tl_arg_tensor(&A.t), tl_arg_tensor(&B.t)};
    DLManagedTensor *out[1] = {NULL};
    if (tl_kernel_call(ctx, ks[v], args, 2, NULL, out) != TL_OK) {
      CHECK(0, "%s: call: %s", names[v], tl_context_last_error(ctx));
      continue;
    }
    CU(G.cuCtxSynchronize());
    float *h = download((uintptr_t)out[0]->dl_tensor.data, bytes);
    CHECK(memcmp(h, ref, bytes) == 0, "%s: result differs from A + B", names[v]);
    CHECK(out[0]->dl_tensor.device.device_type == kDLCUDA && out[0]->dl_tensor.ndim == 1 &&
              out[0]->dl_tensor.shape[0] == n && out[0]->dl_tensor.dtype.code == kDLFloat &&
              out[0]->dl_tensor.dtype.bits == 32 && out[0]->dl_tensor.strides == NULL,
          "%s: output tensor metadata", names[v]);
    printf("  ok   %s\n", names[v]);
    free(h);
    out[0]->deleter(out[0]);
    tl_kernel_destroy(ks[v]);
  }

  /* none: C is passed by the caller and written in place */
  tl_kernel *kn = compile(TL_OUT_IDX_NONE, NULL, 0);
  CU(G.cuMemsetD8(C.ptr, 0xFF, bytes));
  tl_arg args3[3] = {tl_arg_tensor(&A.t), tl_arg_tensor(&B.t), tl_arg_tensor(&C.t)};
  if (tl_kernel_call(ctx, kn, args3, 3, NULL, NULL) != TL_OK) {
    CHECK(0, "out_idx none: call: %s", tl_context_last_error(ctx));
  } else {
    CU(G.cuCtxSynchronize());
    float *h = download(C.ptr, bytes);
    CHECK(memcmp(h, ref, bytes) == 0, "out_idx none: C not written in place with A + B");
    printf("  ok   out_idx=none (in place)\n");
    free(h);
  }
  tl_kernel_destroy(kn);

  /* two outputs, returned in the order given: [2, 0] (A and C allocated) —
   * n is then bound only by B */
  int two_out[2] = {2, 0};
  tl_kernel *k2 = compile(TL_OUT_IDX_LIST, two_out, 2);
  tl_arg argsb[1] = {tl_arg_tensor(&B.t)};
  DLManagedTensor *outs[2] = {NULL, NULL};
  if (tl_kernel_call(ctx, k2, argsb, 1, NULL, outs) != TL_OK) {
    CHECK(0, "out_idx [2, 0]: call: %s", tl_context_last_error(ctx));
  } else {
    CU(G.cuCtxSynchronize());
    CHECK(outs[0] && outs[1] && outs[0]->dl_tensor.shape[0] == n && outs[1]->dl_tensor.shape[0] == n,
          "out_idx [2, 0]: two outputs of n elements");
    printf("  ok   out_idx=[2, 0] returns two outputs\n");
    for (int j = 0; j < 2; j++)
      if (outs[j]) outs[j]->deleter(outs[j]);
  }
  tl_kernel_destroy(k2);

  free(ha);
  free(hb);
  free(ref);
  dev_free(&A);
  dev_free(&B);
  dev_free(&C);
  tl_context_destroy(ctx);
  return finish("test_out_idx");
}
