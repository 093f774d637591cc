/* GPU test (issue 3, acceptance 3): every wrong argument — count, dtype,
 * ndim, a static dim, inconsistent dynamic dims, non-contiguous, a CPU
 * tensor, null data, a misaligned pointer — returns TL_ERR_INVALID_ARGUMENT
 * with a message naming the parameter, "expected" and "got", and the
 * caller's poisoned output is unchanged afterwards (nothing ran).  Uses the
 * 1-D add (dynamic n) and the 2-D add (static 64x128) with out_idx none so
 * that the output C is the caller's. */
#include "gpu_util.h"

static tl_context *ctx;

static tl_kernel *compile(const char *file, const tl_define *defs, size_t ndefs) {
  char path[1024];
  snprintf(path, sizeof path, "%s/%s", kernel_dir(), file);
  tl_compile_options o = {0};
  o.out_idx_mode = TL_OUT_IDX_NONE;
  tl_kernel *k = NULL;
  if (tl_kernel_compile_file(ctx, path, defs, ndefs, &o, &k) != TL_OK) {
    fprintf(stderr, "FAIL compile %s: %s\n", path, tl_context_last_error(ctx));
    exit(1);
  }
  return k;
}

static dev_tensor C; /* poisoned output */
static size_t cbytes;

static void poison(void) { CU(G.cuMemsetD8(C.ptr, 0xA5, cbytes)); }

static void expect_rejected(const char *what, tl_kernel *k, tl_arg *args, size_t nargs, const char *param,
                            const char *detail) {
  poison();
  tl_status s = tl_kernel_call(ctx, k, args, nargs, NULL, NULL);
  CU(G.cuCtxSynchronize());
  const char *msg = tl_context_last_error(ctx);
  CHECK(s == TL_ERR_INVALID_ARGUMENT, "%s: status %s (%s)", what, tl_status_name(s), msg);
  char name[128];
  snprintf(name, sizeof name, "'%s'", param);
  CHECK(!param[0] || strstr(msg, name), "%s: message does not name %s: %s", what, name, msg);
  CHECK(strstr(msg, "expected") && (strstr(msg, "got") || strstr(msg, "Got")), "%s: message lacks expected/got: %s",
        what, msg);
  CHECK(strstr(msg, detail), "%s: message lacks '%s': %s", what, detail, msg);
  unsigned char *h = download(C.ptr, cbytes);
  size_t changed = 0;
  for (size_t i = 0; i < cbytes; i++) changed += h[i] != 0xA5;
  CHECK(changed == 0, "%s: poisoned output changed (%zu bytes) although the call failed", what, changed);
  free(h);
  printf("  ok   %-22s %s\n", what, msg);
}

int main(void) {
  if (tl_context_create(&ctx) != TL_OK) return 1;
  gpu_init(ctx);
  rng_seed(1);
  tl_kernel *k1 = compile("elementwise_add_1d.py", NULL, 0);
  int64_t n = 4099;
  cbytes = (size_t)n * 4;
  dev_tensor A, B, A16, Abig;
  void *ha = dev_random(&A, DT_F32, 1, &n), *hb = dev_random(&B, DT_F32, 1, &n);
  dev_alloc(&C, DT_F32, 1, &n);
  dev_alloc(&A16, DT_F16, 1, &n);
  int64_t n2 = 2 * n + 16;
  dev_alloc(&Abig, DT_F32, 1, &n2);

  tl_arg good[3] = {tl_arg_tensor(&A.t), tl_arg_tensor(&B.t), tl_arg_tensor(&C.t)};
  tl_arg a[3];

  expect_rejected("count", k1, good, 2, "", "argument count: expected 3");

  memcpy(a, good, sizeof a);
  a[1] = tl_arg_tensor(&A16.t);
  expect_rejected("dtype", k1, a, 3, "B", "dtype: expected float32, got float16");

  DLTensor nd = B.t;
  int64_t nd_shape[2] = {1, n};
  nd.ndim = 2;
  nd.shape = nd_shape;
  memcpy(a, good, sizeof a);
  a[1] = tl_arg_tensor(&nd);
  expect_rejected("ndim", k1, a, 3, "B", "ndim: expected 1, got 2");

  DLTensor shortB = B.t;
  int64_t short_shape[1] = {n - 1};
  shortB.shape = short_shape;
  memcpy(a, good, sizeof a);
  a[1] = tl_arg_tensor(&shortB);
  expect_rejected("inconsistent dyn dim", k1, a, 3, "B", "expected n = 4099");

  DLTensor strided = Abig.t;
  int64_t st_shape[1] = {n}, st_strides[1] = {2};
  strided.shape = st_shape;
  strided.strides = st_strides;
  memcpy(a, good, sizeof a);
  a[0] = tl_arg_tensor(&strided);
  expect_rejected("non-contiguous", k1, a, 3, "A", "strides");

  float *host = calloc((size_t)n, 4);
  DLTensor cpu = A.t;
  cpu.data = host;
  cpu.device.device_type = kDLCPU;
  memcpy(a, good, sizeof a);
  a[0] = tl_arg_tensor(&cpu);
  expect_rejected("cpu tensor", k1, a, 3, "A", "device: expected cuda, got cpu");

  DLTensor null_t = B.t;
  null_t.data = NULL;
  memcpy(a, good, sizeof a);
  a[1] = tl_arg_tensor(&null_t);
  expect_rejected("null data", k1, a, 3, "B", "data: expected a non-null device pointer");

  DLTensor mis = Abig.t;
  int64_t mis_shape[1] = {n};
  mis.shape = mis_shape;
  mis.byte_offset = 2; /* never a multiple of the f32 element size */
  memcpy(a, good, sizeof a);
  a[0] = tl_arg_tensor(&mis);
  expect_rejected("misaligned", k1, a, 3, "A", "alignment: expected data + byte_offset aligned");
  int al = tl_kernel_param_alignment(k1, 0);
  if (al > 4) {
    mis.byte_offset = 4; /* element-aligned but not vector-aligned */
    expect_rejected("misaligned (vector)", k1, a, 3, "A", "alignment");
  }
  printf("  note A needs %d-byte alignment\n", al);

  memcpy(a, good, sizeof a);
  a[2] = tl_arg_int(3);
  expect_rejected("scalar for a tensor", k1, a, 3, "C", "kind: expected a tensor");

  DLTensor dev1 = B.t;
  dev1.device.device_id = 1;
  memcpy(a, good, sizeof a);
  a[1] = tl_arg_tensor(&dev1);
  expect_rejected("second device id", k1, a, 3, "B", "device: expected cuda:0");

  /* static dims: the 2-D add compiled for 64 x 128, with its own output */
  tl_define defs[] = {{"M", "64"}, {"N", "128"}};
  tl_kernel *k2 = compile("elementwise_add.py", defs, 2);
  int64_t s_ok[2] = {64, 128}, s_bad[2] = {64, 127};
  dev_tensor X, Y;
  dev_alloc(&X, DT_F32, 2, s_ok);
  dev_alloc(&Y, DT_F32, 2, s_bad);
  dev_tensor saveC = C;
  size_t savebytes = cbytes;
  dev_alloc(&C, DT_F32, 2, s_ok);
  cbytes = 64 * 128 * 4;
  tl_arg a2[3] = {tl_arg_tensor(&X.t), tl_arg_tensor(&Y.t), tl_arg_tensor(&C.t)};
  expect_rejected("static dim", k2, a2, 3, "B", "shape[1]: expected 128, got 127");
  dev_free(&C);
  C = saveC;
  C.t.shape = C.shape;
  cbytes = savebytes;

  /* finally the good call runs */
  poison();
  if (tl_kernel_call(ctx, k1, good, 3, NULL, NULL) != TL_OK) {
    CHECK(0, "good call failed: %s", tl_context_last_error(ctx));
  } else {
    CU(G.cuCtxSynchronize());
    float *h = download(C.ptr, cbytes);
    size_t bad = 0;
    for (int64_t i = 0; i < n; i++) bad += h[i] != ((float *)ha)[i] + ((float *)hb)[i];
    CHECK(bad == 0, "good call: %zu wrong elements", bad);
    free(h);
    printf("  ok   good call after the rejected ones\n");
  }

  free(host);
  free(ha);
  free(hb);
  dev_free(&A);
  dev_free(&B);
  dev_free(&C);
  dev_free(&A16);
  dev_free(&Abig);
  dev_free(&X);
  dev_free(&Y);
  tl_kernel_destroy(k1);
  tl_kernel_destroy(k2);
  tl_context_destroy(ctx);
  return finish("test_bad_args");
}
