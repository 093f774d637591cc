/* The call memo of tl_kernel_call (lib/Runtime/memo.c, issue 16): a call
 * repeating the last successful one's arguments binds from the memo; any
 * change (pointer, shape, strides, dtype, device, a scalar, a tensor map's
 * tensor) must be bound again, or rejected with the message an uncached
 * call gets.  The CUDA path runs on the fake driver (benchmarks/launch/
 * fake_cuda.c, TL_FAKE_CUDA_SO), which records each launch's grid and
 * parameters. */
#include <dlfcn.h>
#include <pthread.h>
#include <stdint.h>

#include "test_util.h"
#include "tilelang/runtime.h"

static unsigned long long *launches, *encodes, *last_params;
static unsigned *last_launch;
static int *record;
static tl_context *ctx;

static void setup(void) {
  setenv("TL_CUDA_DRIVER", TL_FAKE_CUDA_SO, 1);
  void *lib = dlopen(TL_FAKE_CUDA_SO, RTLD_NOW | RTLD_LOCAL); /* the handle the runtime gets too */
  cr_assert_not_null(lib, "%s", dlerror());
  launches = dlsym(lib, "tl_fake_cuda_launches");
  encodes = dlsym(lib, "tl_fake_cuda_encodes");
  last_params = dlsym(lib, "tl_fake_cuda_last_params");
  last_launch = dlsym(lib, "tl_fake_cuda_last_launch");
  record = dlsym(lib, "tl_fake_cuda_record");
  cr_assert(launches && encodes && last_params && last_launch && record);
  *record = 5; /* both kernels here have 5 parameters (the fake reads no more than asked) */
  cr_assert_eq(tl_context_create(&ctx), TL_OK);
}
static void teardown(void) { tl_context_destroy(ctx); }

TestSuite(memo, .init = setup, .fini = teardown);

/* C = alpha * A + B over a dynamic n; out_idx none (C is passed). */
static const char saxpy_src[] = TL_TEST_SAXPY_SRC;

typedef struct vec {
  DLTensor t;
  int64_t shape[2], strides[2];
} vec;

static void mkvec(vec *v, uint64_t addr, int64_t n) {
  memset(v, 0, sizeof *v);
  v->shape[0] = n;
  tl_test_cuda_tensor(&v->t, addr, 1, v->shape, kDLFloat, 32);
}

static tl_kernel *compile_saxpy(void) {
  tl_kernel *k = NULL;
  tl_compile_options o = {0};
  o.cache = TL_CACHE_USE_OFF;
  cr_assert_eq(tl_kernel_compile(ctx, saxpy_src, sizeof saxpy_src - 1, "saxpy.py", NULL, 0, &o, &k), TL_OK, "%s",
               tl_context_last_error(ctx));
  return k;
}

static tl_status call4(tl_kernel *k, vec *a, vec *b, vec *c, double alpha) {
  tl_arg args[4] = {tl_arg_tensor(&a->t), tl_arg_tensor(&b->t), tl_arg_tensor(&c->t), tl_arg_float(alpha)};
  return tl_kernel_call(ctx, k, args, 4, NULL, NULL);
}

/* The last launch: grid x, parameters A, B, C, alpha's float bits, n. */
static void expect_launch(unsigned grid, uint64_t a, uint64_t b, uint64_t c, float alpha, int64_t n) {
  uint32_t abits;
  memcpy(&abits, &alpha, 4);
  cr_assert_eq(last_launch[0], grid);
  cr_assert_eq(last_params[0], a);
  cr_assert_eq(last_params[1], b);
  cr_assert_eq(last_params[2], c);
  cr_assert_eq((uint32_t)last_params[3], abits);
  cr_assert_eq((uint32_t)last_params[4], (uint32_t)n);
}

#define A0 0x7f0000000000ull
#define B0 0x7f0100000000ull
#define C0 0x7f0200000000ull

Test(memo, repeated_and_changed_calls_bind_again) {
  tl_kernel *k = compile_saxpy();
  vec a, b, c;
  mkvec(&a, A0, 1000), mkvec(&b, B0, 1000), mkvec(&c, C0, 1000);
  for (int i = 0; i < 3; i++) { /* the first binds fully, the others from the memo */
    unsigned long long before = *launches;
    cr_assert_eq(call4(k, &a, &b, &c, 2.0), TL_OK, "%s", tl_context_last_error(ctx));
    cr_assert_eq(*launches, before + 1);
    expect_launch(8, A0, B0, C0, 2.0f, 1000);
  }
  /* a new n (the shape arrays' values change, not the pointers) */
  a.shape[0] = b.shape[0] = c.shape[0] = 3000;
  cr_assert_eq(call4(k, &a, &b, &c, 2.0), TL_OK, "%s", tl_context_last_error(ctx));
  expect_launch(24, A0, B0, C0, 2.0f, 3000);
  /* a new pointer, a new byte_offset */
  a.t.data = (void *)(uintptr_t)(A0 + 4096);
  cr_assert_eq(call4(k, &a, &b, &c, 2.0), TL_OK);
  expect_launch(24, A0 + 4096, B0, C0, 2.0f, 3000);
  b.t.byte_offset = 256;
  cr_assert_eq(call4(k, &a, &b, &c, 2.0), TL_OK);
  expect_launch(24, A0 + 4096, B0 + 256, C0, 2.0f, 3000);
  /* a new scalar */
  cr_assert_eq(call4(k, &a, &b, &c, -0.5), TL_OK);
  expect_launch(24, A0 + 4096, B0 + 256, C0, -0.5f, 3000);
  /* explicit compact strides instead of NULL: the same binding */
  c.strides[0] = 1;
  c.t.strides = c.strides;
  cr_assert_eq(call4(k, &a, &b, &c, -0.5), TL_OK);
  expect_launch(24, A0 + 4096, B0 + 256, C0, -0.5f, 3000);
  tl_kernel_destroy(k);
}

/* Each bad call after a good one: rejected with exactly the message a fresh
 * kernel (no memo) gives, and the good call still binds as before. */
Test(memo, changed_calls_are_checked) {
  tl_kernel *k = compile_saxpy(), *fresh = compile_saxpy();
  enum { DTYPE, SHAPE, STRIDE, ALIGN, DEVICE, NULL_SHAPE, NDIM, NULL_DATA, SCALAR_KIND, NCASES };
  for (int bad = 0; bad < NCASES; bad++) {
    vec a, b, c;
    mkvec(&a, A0, 1000), mkvec(&b, B0, 1000), mkvec(&c, C0, 1000);
    cr_assert_eq(call4(k, &a, &b, &c, 2.0), TL_OK, "%s", tl_context_last_error(ctx));
    cr_assert_eq(call4(k, &a, &b, &c, 2.0), TL_OK); /* the memo holds this call */
    vec *v = &b;
    tl_arg args[4] = {tl_arg_tensor(&a.t), tl_arg_tensor(&b.t), tl_arg_tensor(&c.t), tl_arg_float(2.0)};
    switch (bad) {
    case DTYPE: v->t.dtype.bits = 16; break;
    case SHAPE: v->shape[0] = 999; break;
    case STRIDE: v->strides[0] = 2, v->t.strides = v->strides; break;
    case ALIGN: v->t.byte_offset = 2; break;
    case DEVICE: v->t.device.device_type = kDLCPU; break;
    case NULL_SHAPE: v->t.shape = NULL; break;
    case NDIM: v->t.ndim = 2, v->shape[1] = 1; break;
    case NULL_DATA: v->t.data = NULL; break;
    case SCALAR_KIND: args[3] = tl_arg_tensor(&c.t); break;
    }
    unsigned long long before = *launches;
    tl_status s = tl_kernel_call(ctx, k, args, 4, NULL, NULL);
    cr_assert_eq(s, TL_ERR_INVALID_ARGUMENT, "case %d: %s", bad, tl_status_name(s));
    char *msg = strdup(tl_context_last_error(ctx));
    cr_assert_eq(tl_kernel_call(ctx, fresh, args, 4, NULL, NULL), TL_ERR_INVALID_ARGUMENT);
    cr_assert_str_eq(msg, tl_context_last_error(ctx), "case %d", bad);
    cr_assert(strstr(msg, "argument '"), "case %d: %s", bad, msg);
    free(msg);
    cr_assert_eq(*launches, before, "case %d launched", bad);
    mkvec(&b, B0, 1000);
    cr_assert_eq(call4(k, &a, &b, &c, 2.0), TL_OK, "case %d: %s", bad, tl_context_last_error(ctx));
    expect_launch(8, A0, B0, C0, 2.0f, 1000);
  }
  tl_kernel_destroy(k);
  tl_kernel_destroy(fresh);
}

/* The Hopper GEMM's two tensor maps (over A and B): a repeated call reuses
 * the maps, a new pointer or shape encodes again and passes the new map. */
Test(memo, tensor_maps_follow_the_tensors) {
  tl_kernel *k = NULL;
  tl_compile_options o = {0};
  o.out_idx_mode = TL_OUT_IDX_NONE;
  o.target = "sm_90a";
  o.cache = TL_CACHE_USE_OFF;
  tl_define defs[3] = {{"M", "256"}, {"N", "256"}, {"K", "256"}};
  cr_assert_eq(tl_kernel_compile_file(ctx, "examples/gemm.py", defs, 3, &o, &k), TL_OK, "%s",
               tl_context_last_error(ctx));
  DLTensor t[3];
  int64_t shape[2] = {256, 256};
  for (int i = 0; i < 3; i++) tl_test_cuda_tensor(&t[i], A0 + ((uint64_t)i << 32), 2, shape, kDLFloat, 16);
  tl_arg args[3] = {tl_arg_tensor(&t[0]), tl_arg_tensor(&t[1]), tl_arg_tensor(&t[2])};
  cr_assert_eq(tl_kernel_call(ctx, k, args, 3, NULL, NULL), TL_OK, "%s", tl_context_last_error(ctx));
  unsigned long long enc = *encodes;
  cr_assert_eq(last_params[3], A0); /* map 0's first word: A's address (the fake encoder's) */
  cr_assert_eq(last_params[4], A0 + (1ull << 32));
  for (int i = 0; i < 3; i++) {
    cr_assert_eq(tl_kernel_call(ctx, k, args, 3, NULL, NULL), TL_OK);
    cr_assert_eq(last_params[3], A0);
    cr_assert_eq(last_params[4], A0 + (1ull << 32));
  }
  cr_assert_eq(*encodes, enc, "a repeated call encoded a map");
  t[0].data = (void *)(uintptr_t)(A0 + 65536);
  cr_assert_eq(tl_kernel_call(ctx, k, args, 3, NULL, NULL), TL_OK);
  cr_assert_eq(last_params[3], A0 + 65536);
  cr_assert_eq(last_params[4], A0 + (1ull << 32));
  cr_assert_gt(*encodes, enc);
  /* a misaligned A after cached calls: rejected, nothing launched */
  unsigned long long before = *launches;
  t[0].byte_offset = 1; /* (2 would pass the binder: the real driver refuses its map) */
  cr_assert_eq(tl_kernel_call(ctx, k, args, 3, NULL, NULL), TL_ERR_INVALID_ARGUMENT);
  cr_assert(strstr(tl_context_last_error(ctx), "alignment"), "%s", tl_context_last_error(ctx));
  cr_assert_eq(*launches, before);
  tl_kernel_destroy(k);
}

/* Several threads calling one kernel, each with its own contexts and two
 * argument sets of its own in turn (so the memo changes hands all the
 * time): every launch a thread makes carries that thread's arguments (the
 * fake driver records per thread). */
typedef struct worker {
  tl_kernel *k;
  int id, bad;
} worker;

static void *work(void *arg) {
  worker *w = arg;
  tl_context *c = NULL;
  if (tl_context_create(&c) != TL_OK) {
    w->bad = -1;
    return NULL;
  }
  void *lib = dlopen(TL_FAKE_CUDA_SO, RTLD_NOW | RTLD_LOCAL);
  unsigned long long *params = lib ? dlsym(lib, "tl_fake_cuda_last_params") : NULL; /* this thread's */
  unsigned *launch = lib ? dlsym(lib, "tl_fake_cuda_last_launch") : NULL;
  if (!params || !launch) {
    w->bad = -1;
    return NULL;
  }
  for (int i = 0; i < 400; i++) {
    int64_t n = 128 * (1 + w->id) + (i % 2) * 4096;
    uint64_t base = A0 + ((uint64_t)w->id << 24) + (uint64_t)(i % 2) * 65536;
    vec a, b, cc;
    mkvec(&a, base, n), mkvec(&b, base + (1 << 20), n), mkvec(&cc, base + (2 << 20), n);
    tl_arg args[4] = {tl_arg_tensor(&a.t), tl_arg_tensor(&b.t), tl_arg_tensor(&cc.t), tl_arg_float(w->id)};
    if (tl_kernel_call(c, w->k, args, 4, NULL, NULL) != TL_OK || launch[0] != (unsigned)((n + 127) / 128) ||
        params[0] != base || params[1] != base + (1 << 20) || params[2] != base + (2 << 20) ||
        (uint32_t)params[4] != (uint32_t)n)
      w->bad++;
    float f = (float)w->id;
    uint32_t fb;
    memcpy(&fb, &f, 4);
    if ((uint32_t)params[3] != fb) w->bad++;
  }
  tl_context_destroy(c);
  return NULL;
}

Test(memo, threads_get_their_own_bindings) {
  tl_kernel *k = compile_saxpy();
  enum { NT = 4 };
  worker w[NT];
  pthread_t th[NT];
  for (int t = 0; t < NT; t++) {
    w[t] = (worker){k, t, 0};
    cr_assert_eq(pthread_create(&th[t], NULL, work, &w[t]), 0);
  }
  for (int t = 0; t < NT; t++) pthread_join(th[t], NULL);
  for (int t = 0; t < NT; t++) cr_assert_eq(w[t].bad, 0, "thread %d: %d wrong launches", t, w[t].bad);
  tl_kernel_destroy(k);
}

/* Several T.Kernel scopes (issue 30): one call launches every entry, in
 * order, with the same parameters, each stage with its own grid and block
 * (stage 1 seen last); a repeated call (the memo) does the same. */
static const char two_stage_src[] =
    "import tilelang.language as T\n"
    "n = T.dynamic(\"n\")\n"
    "@T.prim_func\n"
    "def main(A: T.Tensor((n,), \"float32\"), B: T.Tensor((n,), \"float32\"), C: T.Tensor((n,), \"float32\")):\n"
    "    with T.Kernel(T.ceildiv(n, 128), threads=128) as bx:\n"
    "        for i in T.Parallel(128):\n"
    "            if bx * 128 + i < n:\n"
    "                B[bx * 128 + i] = A[bx * 128 + i] * 2.0\n"
    "    with T.Kernel(T.ceildiv(n, 256), threads=256) as bx:\n"
    "        for i in T.Parallel(256):\n"
    "            if bx * 256 + i < n:\n"
    "                C[bx * 256 + i] = B[bx * 256 + i] + 1.0\n";

Test(memo, launch_stages_in_order) {
  void *lib = dlopen(TL_FAKE_CUDA_SO, RTLD_NOW | RTLD_LOCAL);
  unsigned long long (*calls)(const char *) =
      lib ? (unsigned long long (*)(const char *))dlsym(lib, "tl_fake_cuda_calls") : NULL;
  int *counting = lib ? dlsym(lib, "tl_fake_cuda_counting") : NULL;
  cr_assert(calls && counting);
  *counting = 1; /* the fake counts entry-point calls only when asked */
  *record = 4;   /* A, B, C, n */
  tl_kernel *k = NULL;
  tl_compile_options o = {0};
  o.cache = TL_CACHE_USE_OFF;
  cr_assert_eq(tl_kernel_compile(ctx, two_stage_src, sizeof two_stage_src - 1, "two.py", NULL, 0, &o, &k), TL_OK, "%s",
               tl_context_last_error(ctx));
  vec a, b, c;
  mkvec(&a, A0, 1000), mkvec(&b, B0, 1000), mkvec(&c, C0, 1000);
  unsigned long long get0 = calls("cuModuleGetFunction");
  for (int i = 0; i < 2; i++) {
    unsigned long long before = *launches;
    tl_arg args[3] = {tl_arg_tensor(&a.t), tl_arg_tensor(&b.t), tl_arg_tensor(&c.t)};
    cr_assert_eq(tl_kernel_call(ctx, k, args, 3, NULL, NULL), TL_OK, "%s", tl_context_last_error(ctx));
    cr_assert_eq(*launches, before + 2, "one launch per T.Kernel scope");
    cr_expect_eq(last_launch[0], 4); /* the second scope: ceildiv(1000, 256) blocks of 256 threads */
    cr_expect_eq(last_launch[1], 1);
    cr_expect_eq(last_launch[3], 256);
    cr_expect_eq(last_params[0], A0);
    cr_expect_eq(last_params[1], B0);
    cr_expect_eq(last_params[2], C0);
    cr_expect_eq((uint32_t)last_params[3], 1000u);
  }
  cr_expect_eq(calls("cuModuleGetFunction") - get0, 2, "both entries looked up once, at load");
  tl_launch_info info;
  cr_expect_eq(tl_kernel_launch_info(ctx, k, (tl_arg[]){tl_arg_tensor(&a.t), tl_arg_tensor(&b.t), tl_arg_tensor(&c.t)},
                                     3, &info),
               TL_ERR_UNSUPPORTED);
  cr_expect(strstr(tl_context_last_error(ctx), "is 2 launches"), "%s", tl_context_last_error(ctx));
  *record = 5;
  *counting = 0;
  tl_kernel_destroy(k);
}
