/* The AOT export on the fake CUDA driver (issue 32; docs/aot.md, run by test/aot/aot_fake.sh, ctest
 * unit/aot_fake).  Three kernels exported by `tl-opt --emit=c --target=sm_80` and built with the system cc
 * (-std=c99 -pedantic -Werror) are linked here with benchmarks/launch/fake_cuda.c (libtl_fake_cuda.so) in
 * place of libcuda, and with libtilelang, which loads the same fake driver (TL_CUDA_DRIVER), so that every
 * case runs both ways in one process:
 *   - gemm 256^3 (out_idx=-1) and the 1-D add of dynamic length n: the launch (grid, block, dynamic shared
 *     memory, the first parameters) equals what tl_kernel_call launches for the same kernel and arguments;
 *     the output the call allocates (cuMemAlloc_v2 or the allocator callback) is described in the caller's
 *     DLTensor and is the kernel's parameter; the module is loaded once per device, by 8 threads at once;
 *   - every bad-argument class of test/GPU/test_bad_args.c (dtype, ndim, inconsistent dynamic dim,
 *     non-contiguous, CPU tensor, NULL data, misaligned, a NULL tensor, a second device id, a static dim)
 *     and three checks against the device (a pointer of another device, a stream of another device's
 *     context, a failing cuLaunchKernel from TL_FAKE_CUDA_FAULT-style injection) return the runtime's status
 *     with the runtime's text, byte for byte, and launch nothing; a failed call leaves no allocation. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "add1d.h"
#include "add2d.h"
#include "gemm.h"
#include "tilelang/tilelang.h"

/* the fake driver's own entry points (benchmarks/launch/fake_cuda.c) */
extern int cuInit(unsigned);
extern int cuMemAlloc_v2(unsigned long long *, size_t);
extern int cuDevicePrimaryCtxRetain(void **, int);
extern int cuCtxPushCurrent_v2(void *);
extern int cuCtxPopCurrent_v2(void **);
extern unsigned long long tl_fake_cuda_launches, tl_fake_cuda_loads[8];
extern int tl_fake_cuda_record;
extern __thread unsigned tl_fake_cuda_last_launch[5];
extern __thread unsigned long long tl_fake_cuda_last_params[32];
extern void tl_fake_cuda_fault(const char *entry, long nth, int result);
extern long long tl_fake_cuda_live(const char *what);
extern void *tl_fake_cuda_stream(int d);

static int failures, checks;
#define CHECK(cond, ...)                                                                                               \
  do {                                                                                                                 \
    checks++;                                                                                                          \
    if (!(cond)) {                                                                                                     \
      failures++;                                                                                                      \
      printf("FAIL %s:%d: ", __FILE__, __LINE__);                                                                      \
      printf(__VA_ARGS__);                                                                                             \
      printf("\n");                                                                                                    \
    }                                                                                                                  \
  } while (0)

static tl_context *ctx;

static tl_kernel *compile(const char *file, const tl_define *defs, size_t n) {
  tl_compile_options o = {0};
  o.target = "sm_80";
  o.out_idx_mode = TL_OUT_IDX_NONE; /* every parameter passed, numbered as the exported function numbers them */
  tl_kernel *k = NULL;
  if (tl_kernel_compile_file(ctx, file, defs, n, &o, &k) != TL_OK) {
    printf("FAIL compile %s: %s\n", file, tl_context_last_error(ctx));
    exit(1);
  }
  return k;
}

static unsigned long long dev_alloc(size_t bytes, int device) {
  unsigned long long p = 0;
  void *c = NULL;
  cuDevicePrimaryCtxRetain(&c, device);
  cuCtxPushCurrent_v2(c);
  cuMemAlloc_v2(&p, bytes);
  cuCtxPopCurrent_v2(NULL);
  return p;
}

static DLTensor tensor(unsigned long long p, int ndim, int64_t *shape, uint8_t code, uint8_t bits) {
  DLTensor t;
  memset(&t, 0, sizeof t);
  t.data = (void *)(uintptr_t)p;
  t.device.device_type = kDLCUDA;
  t.ndim = ndim;
  t.shape = shape;
  t.dtype.code = code;
  t.dtype.bits = bits;
  t.dtype.lanes = 1;
  return t;
}

/* One bad call both ways: same status (TL_ERR_INVALID_ARGUMENT unless `status`), same text, `detail` in it,
 * nothing launched. */
typedef int (*add_fn)(const DLTensor *, const DLTensor *, DLTensor *, void *);
static void same_refusal(const char *what, add_fn aot, const char *(*aot_err)(void), tl_kernel *k, DLTensor *a,
                         DLTensor *b, DLTensor *c, void *stream, int status, const char *detail) {
  unsigned long long launches = tl_fake_cuda_launches;
  long long mem = tl_fake_cuda_live("mem");
  int rc = aot(a, b, c, stream);
  char mine[8192];
  snprintf(mine, sizeof mine, "%s", aot_err());
  tl_arg args[3] = {tl_arg_tensor(a), tl_arg_tensor(b), tl_arg_tensor(c)};
  tl_status s = tl_kernel_call(ctx, k, args, 3, stream, NULL);
  const char *theirs = tl_context_last_error(ctx);
  CHECK(rc == status && (int)s == status, "%s: status %d (exported) and %d (runtime), expected %d", what, rc, (int)s,
        status);
  CHECK(strcmp(mine, theirs) == 0, "%s: texts differ:\n  exported: %s\n  runtime:  %s", what, mine, theirs);
  CHECK(strstr(mine, detail) != NULL, "%s: '%s' not in: %s", what, detail, mine);
  CHECK(tl_fake_cuda_launches == launches, "%s: something was launched", what);
  CHECK(tl_fake_cuda_live("mem") == mem, "%s: the failed call left %lld allocation(s)", what,
        tl_fake_cuda_live("mem") - mem);
  printf("  ok   %-26s %s\n", what, mine);
}

static void bad_args(void) {
  tl_kernel *k1 = compile("examples/elementwise_add_1d.py", NULL, 0);
  int64_t n = 4099, n1 = n - 1, n2 = 2 * n + 16, sh2[2] = {1, n}, st2[1] = {2};
  DLTensor A = tensor(dev_alloc((size_t)n * 4, 0), 1, &n, kDLFloat, 32);
  DLTensor B = tensor(dev_alloc((size_t)n * 4, 0), 1, &n, kDLFloat, 32);
  DLTensor C = tensor(dev_alloc((size_t)n * 4, 0), 1, &n, kDLFloat, 32);
  DLTensor big = tensor(dev_alloc((size_t)n2 * 4, 0), 1, &n, kDLFloat, 32);
  DLTensor x;
  x = B, x.dtype.bits = 16;
  same_refusal("dtype", add1d, add1d_last_error, k1, &A, &x, &C, NULL, 1,
               "argument 'B' (#1): dtype: expected float32, got float16");
  x = B, x.ndim = 2, x.shape = sh2;
  same_refusal("ndim", add1d, add1d_last_error, k1, &A, &x, &C, NULL, 1, "ndim: expected 1, got 2");
  x = B, x.shape = &n1;
  same_refusal("inconsistent dyn dim", add1d, add1d_last_error, k1, &A, &x, &C, NULL, 1, "expected n = 4099");
  x = big, x.strides = st2;
  same_refusal("non-contiguous", add1d, add1d_last_error, k1, &x, &B, &C, NULL, 1, "argument 'A' (#0): strides");
  float host[16];
  x = A, x.data = host, x.device.device_type = kDLCPU;
  same_refusal("cpu tensor", add1d, add1d_last_error, k1, &x, &B, &C, NULL, 1, "device: expected cuda, got cpu");
  x = B, x.data = NULL;
  same_refusal("null data", add1d, add1d_last_error, k1, &A, &x, &C, NULL, 1,
               "data: expected a non-null device pointer");
  x = big, x.byte_offset = 2;
  same_refusal("misaligned", add1d, add1d_last_error, k1, &x, &B, &C, NULL, 1,
               "alignment: expected data + byte_offset aligned");
  same_refusal("NULL tensor", add1d, add1d_last_error, k1, &A, &B, NULL, NULL, 1,
               "kind: expected a tensor (float32[n]), got a NULL tensor");
  x = B, x.device.device_id = 1;
  same_refusal("second device id", add1d, add1d_last_error, k1, &A, &x, &C, NULL, 1, "device: expected cuda:0");
  x = B, x.data = (void *)(uintptr_t)dev_alloc((size_t)n * 4, 1);
  same_refusal("memory of another device", add1d, add1d_last_error, k1, &A, &x, &C, NULL, 1,
               "data: expected memory of cuda:0, got memory of cuda:1");
  same_refusal("stream of another device", add1d, add1d_last_error, k1, &A, &B, &C, tl_fake_cuda_stream(1), 1,
               "stream: expected a stream of the primary context of cuda:0");
  tl_fake_cuda_fault("cuLaunchKernel", 1, 2); /* the exported call's launch fails: CUDA_ERROR_OUT_OF_MEMORY */
  int rc = add1d(&A, &B, &C, NULL);
  char mine[4096];
  snprintf(mine, sizeof mine, "%s", add1d_last_error());
  tl_fake_cuda_fault("cuLaunchKernel", 1, 2); /* and the runtime's */
  tl_arg args[3] = {tl_arg_tensor(&A), tl_arg_tensor(&B), tl_arg_tensor(&C)};
  tl_status s = tl_kernel_call(ctx, k1, args, 3, NULL, NULL);
  CHECK(rc == 6 && s == TL_ERR_CUDA && strcmp(mine, tl_context_last_error(ctx)) == 0,
        "failing launch: %d %d\n  exported: %s\n  runtime:  %s", rc, (int)s, mine, tl_context_last_error(ctx));
  printf("  ok   %-26s %s\n", "failing cuLaunchKernel", mine);

  /* static dims: the 2-D add at 64 x 128 */
  tl_define defs[] = {{"M", "64"}, {"N", "128"}};
  tl_kernel *k2 = compile("examples/elementwise_add.py", defs, 2);
  int64_t ok2[2] = {64, 128}, bad2[2] = {64, 127};
  DLTensor X = tensor(dev_alloc(64 * 128 * 4, 0), 2, ok2, kDLFloat, 32);
  DLTensor Y = tensor(dev_alloc(64 * 128 * 4, 0), 2, bad2, kDLFloat, 32);
  DLTensor Z = tensor(dev_alloc(64 * 128 * 4, 0), 2, ok2, kDLFloat, 32);
  same_refusal("static dim", add2d, add2d_last_error, k2, &X, &Y, &Z, NULL, 1,
               "argument 'B' (#1): shape[1]: expected 128, got 127");
  Y.shape = ok2, Y.dtype.code = kDLInt, Z.ndim = 3;
  same_refusal("several errors", add2d, add2d_last_error, k2, &X, &Y, &Z, NULL, 1, "\nargument 'C' (#2): ndim");

  /* and a good call of the dynamic kernel: the same launch as the runtime's */
  tl_fake_cuda_record = 4;
  rc = add1d(&A, &B, &C, NULL);
  unsigned mine_l[5];
  unsigned long long mine_p[4];
  memcpy(mine_l, tl_fake_cuda_last_launch, sizeof mine_l);
  memcpy(mine_p, tl_fake_cuda_last_params, sizeof mine_p);
  s = tl_kernel_call(ctx, k1, args, 3, NULL, NULL);
  CHECK(rc == 0 && s == TL_OK, "good 1-D add: %d %s", rc, add1d_last_error());
  CHECK(memcmp(mine_l, tl_fake_cuda_last_launch, sizeof mine_l) == 0 &&
            memcmp(mine_p, tl_fake_cuda_last_params, sizeof mine_p) == 0,
        "1-D add launches differ: grid %u block %u smem %u n=%llu vs grid %u block %u smem %u n=%llu", mine_l[0],
        mine_l[3], mine_l[4], mine_p[3], tl_fake_cuda_last_launch[0], tl_fake_cuda_last_launch[3],
        tl_fake_cuda_last_launch[4], tl_fake_cuda_last_params[3]);
  CHECK(mine_l[0] == 5 && mine_p[3] == 4099 && mine_p[0] == (uintptr_t)A.data,
        "1-D add: grid.x %u (expected ceildiv(4099, 1024) = 5), n %llu", mine_l[0], mine_p[3]);
  printf("  ok   1-D add n=4099: grid %u x %u x %u, block %u, smem %u, params A B C n as the runtime's\n", mine_l[0],
         mine_l[1], mine_l[2], mine_l[3], mine_l[4]);
  tl_fake_cuda_record = 0;
  tl_kernel_destroy(k1);
  tl_kernel_destroy(k2);
}

static int allocs;
static void *my_alloc(void *user, size_t bytes, int device, void *stream) {
  (void)user, (void)stream;
  allocs++;
  return (void *)(uintptr_t)dev_alloc(bytes, device);
}
static void my_free(void *user, void *ptr, size_t bytes, int device, void *stream) {
  (void)user, (void)ptr, (void)bytes, (void)device, (void)stream;
}

static DLTensor gA, gB;
static void *call_gemm(void *arg) {
  int64_t shape[2];
  DLTensor C;
  memset(&C, 0, sizeof C);
  C.shape = shape;
  *(int *)arg = gemm(&gA, &gB, &C, NULL);
  return NULL;
}

static void gemm_calls(void) {
  int64_t s[2] = {256, 256};
  gA = tensor(dev_alloc(256 * 256 * 2, 0), 2, s, kDLFloat, 16);
  gB = tensor(dev_alloc(256 * 256 * 2, 0), 2, s, kDLFloat, 16);
  unsigned long long loads = tl_fake_cuda_loads[0];
  pthread_t th[8];
  int rcs[8];
  for (int i = 0; i < 8; i++) pthread_create(&th[i], NULL, call_gemm, &rcs[i]);
  for (int i = 0; i < 8; i++) pthread_join(th[i], NULL);
  for (int i = 0; i < 8; i++) CHECK(rcs[i] == 0, "gemm from thread %d: %d", i, rcs[i]);
  CHECK(tl_fake_cuda_loads[0] == loads + 1, "8 threads loaded the module %llu times, expected once",
        tl_fake_cuda_loads[0] - loads);
  printf("  ok   8 threads' first calls: one module load on cuda:0\n");

  /* the output allocated by cuMemAlloc_v2, then by the allocator */
  int64_t cs[2] = {0, 0};
  DLTensor C;
  memset(&C, 0, sizeof C);
  C.shape = cs;
  tl_fake_cuda_record = 3;
  int rc = gemm(&gA, &gB, &C, NULL);
  CHECK(rc == 0, "gemm: %s", gemm_last_error());
  CHECK(C.data && cs[0] == 256 && cs[1] == 256 && C.ndim == 2 && C.dtype.code == kDLFloat && C.dtype.bits == 16 &&
            C.device.device_type == kDLCUDA && !C.strides,
        "the allocated output is not described: data %p shape [%lld, %lld]", C.data, (long long)cs[0],
        (long long)cs[1]);
  CHECK(tl_fake_cuda_last_params[0] == (uintptr_t)gA.data && tl_fake_cuda_last_params[1] == (uintptr_t)gB.data &&
            tl_fake_cuda_last_params[2] == (uintptr_t)C.data,
        "gemm's parameters are not A, B and the allocated C");
  unsigned mine_l[5];
  memcpy(mine_l, tl_fake_cuda_last_launch, sizeof mine_l);
  printf("  ok   gemm 256^3: grid %u x %u x %u, block %u, %u bytes of dynamic shared memory; C allocated at %p\n",
         mine_l[0], mine_l[1], mine_l[2], mine_l[3], mine_l[4], C.data);

  tl_define defs[] = {{"M", "256"}, {"N", "256"}, {"K", "256"}};
  tl_compile_options o = {0};
  o.target = "sm_80";
  tl_kernel *k = NULL;
  if (tl_kernel_compile_file(ctx, "examples/gemm.py", defs, 3, &o, &k) != TL_OK) {
    printf("FAIL compile gemm: %s\n", tl_context_last_error(ctx));
    exit(1);
  }
  tl_arg args[2] = {tl_arg_tensor(&gA), tl_arg_tensor(&gB)};
  DLManagedTensor *out = NULL;
  tl_status st = tl_kernel_call(ctx, k, args, 2, NULL, &out);
  CHECK(st == TL_OK, "runtime gemm: %s", tl_context_last_error(ctx));
  CHECK(memcmp(mine_l, tl_fake_cuda_last_launch, sizeof mine_l) == 0,
        "gemm launches differ: exported grid %u x %u block %u smem %u, runtime grid %u x %u block %u smem %u",
        mine_l[0], mine_l[1], mine_l[3], mine_l[4], tl_fake_cuda_last_launch[0], tl_fake_cuda_last_launch[1],
        tl_fake_cuda_last_launch[3], tl_fake_cuda_last_launch[4]);
  CHECK(mine_l[0] == 2 && mine_l[1] == 2 && mine_l[2] == 1 && mine_l[3] == 128, "gemm grid/block");
  if (out) out->deleter(out);
  tl_kernel_destroy(k);

  gemm_set_allocator(my_alloc, my_free, NULL);
  memset(&C, 0, sizeof C);
  C.shape = cs;
  rc = gemm(&gA, &gB, &C, NULL);
  CHECK(rc == 0 && allocs == 1 && tl_fake_cuda_last_params[2] == (uintptr_t)C.data,
        "allocator: rc %d, %d allocations, C %p", rc, allocs, C.data);
  printf("  ok   the allocator callback gave C (%p)\n", C.data);
  /* a caller's output of the wrong shape is refused with the runtime's text (out_idx none: C is an input) */
  int64_t bad[2] = {256, 128};
  C.shape = bad;
  rc = gemm(&gA, &gB, &C, NULL);
  CHECK(rc == 1 && strstr(gemm_last_error(), "argument 'C' (#2): shape[1]: expected 256, got 128"),
        "a caller's C of the wrong shape: %d %s", rc, gemm_last_error());
  printf("  ok   %-26s %s\n", "caller's output", gemm_last_error());
  gemm_set_allocator(NULL, NULL, NULL);
  tl_fake_cuda_record = 0;
  gemm_unload();
}

int main(void) {
  cuInit(0);
  if (tl_context_create(&ctx) != TL_OK) return 1;
  bad_args();
  gemm_calls();
  add1d_unload();
  add2d_unload();
  CHECK(tl_fake_cuda_live("module") == 0, "%lld module(s) still loaded after the unloads", tl_fake_cuda_live("module"));
  tl_context_destroy(ctx);
  printf("aot_fake: %d checks, %d failed\n", checks, failures);
  return failures ? 1 : 0;
}
