/* Kernels run where their tensors are (issue 18), on the fake driver of
 * benchmarks/launch (fake_cuda.c, TL_FAKE_CUDA_SO) set up with two or more
 * devices: a call with tensors on cuda:1 loads the module on device 1 only
 * (lazily, once per device, also when several threads make their first
 * calls at once), launches in device 1's primary context on the caller's
 * stream and allocates out_idx outputs in device 1's memory; a call mixing
 * cuda:0 and cuda:1 tensors is refused before the driver is asked anything
 * (also with one device, and with no driver at all); a stream or a pointer
 * of another device is refused; a device whose compute capability does not
 * fit the kernel's target is refused with the target that fits it; two
 * threads driving one device each call one kernel object 1,000 times; a
 * persistent Hopper GEMM compiled by the runtime plans its grid for device
 * 0's SM count (114 on an H100 PCIe), not the target's 132. */
#include <dlfcn.h>
#include <pthread.h>
#include <stdint.h>

#include "test_util.h"
#include "tilelang/runtime.h"

static unsigned long long *loads, *launches_on, *bad_launches;
static void *(*fake_stream)(int);
static tl_context *ctx;

/* Points the runtime at the fake driver with ndev devices of the given
 * compute capabilities ("90,80"); before the first driver call of the
 * test's process (each Criterion test runs in its own). */
static void use_fake(int ndev, const char *cc) {
  char n[8];
  snprintf(n, sizeof n, "%d", ndev);
  setenv("TL_CUDA_DRIVER", TL_FAKE_CUDA_SO, 1);
  setenv("TL_FAKE_CUDA_DEVICES", n, 1);
  setenv("TL_FAKE_CUDA_CC", cc, 1);
  void *lib = dlopen(TL_FAKE_CUDA_SO, RTLD_NOW | RTLD_LOCAL); /* the handle the runtime gets too */
  cr_assert_not_null(lib, "%s", dlerror());
  loads = dlsym(lib, "tl_fake_cuda_loads");
  launches_on = dlsym(lib, "tl_fake_cuda_launches_on");
  bad_launches = dlsym(lib, "tl_fake_cuda_bad_launches");
  *(void **)&fake_stream = dlsym(lib, "tl_fake_cuda_stream");
  cr_assert(loads && launches_on && bad_launches && fake_stream);
}

static void setup(void) { cr_assert_eq(tl_context_create(&ctx), TL_OK); }
static void teardown(void) { tl_context_destroy(ctx); }
TestSuite(devices, .init = setup, .fini = teardown);

/* C = alpha * A + B over a dynamic n. */
static const char saxpy_src[] = TL_TEST_SAXPY_SRC;

/* out_idx: -1 → none (C passed), else that index (C allocated by the call). */
static tl_kernel *compile_saxpy(const char *target, int out_idx) {
  tl_kernel *k = NULL;
  tl_compile_options o = {0};
  o.cache = TL_CACHE_USE_OFF;
  o.target = target;
  o.out_idx_mode = out_idx < 0 ? TL_OUT_IDX_NONE : TL_OUT_IDX_LIST;
  o.out_idx = &out_idx;
  o.n_out_idx = out_idx < 0 ? 0 : 1;
  cr_assert_eq(tl_kernel_compile(ctx, saxpy_src, sizeof saxpy_src - 1, "saxpy.py", NULL, 0, &o, &k), TL_OK, "%s",
               tl_context_last_error(ctx));
  return k;
}

/* Memory of fake device d (fake_cuda.c: bits 36-39 hold the device). */
#define MEM(d, off) (0x7f0000000000ull + ((uint64_t)(d) << 36) + (uint64_t)(off))

typedef struct vec {
  DLTensor t;
  int64_t shape[1];
} vec;

static void mkvec(vec *v, int device, uint64_t addr, int64_t n) {
  memset(v, 0, sizeof *v);
  v->shape[0] = n;
  tl_test_cuda_tensor(&v->t, addr, 1, v->shape, kDLFloat, 32);
  v->t.device.device_id = device;
}

static tl_status call3(tl_context *c, tl_kernel *k, vec *a, vec *b, vec *out, void *stream) {
  tl_arg args[4] = {tl_arg_tensor(&a->t), tl_arg_tensor(&b->t), tl_arg_tensor(&out->t), tl_arg_float(2.0)};
  return tl_kernel_call(c, k, args, 4, stream, NULL);
}

static unsigned long long launches(int d) { return __atomic_load_n(&launches_on[d], __ATOMIC_RELAXED); }

Test(devices, a_call_runs_on_its_tensors_device) {
  use_fake(2, "90,90");
  int n = 0;
  cr_assert_eq(tl_device_count(ctx, &n), TL_OK);
  cr_assert_eq(n, 2);
  tl_kernel *k = compile_saxpy(NULL, -1);
  vec a, b, c;
  mkvec(&a, 1, MEM(1, 0), 1000), mkvec(&b, 1, MEM(1, 1 << 20), 1000), mkvec(&c, 1, MEM(1, 2 << 20), 1000);
  void *s1 = fake_stream(1);
  int *last_dev = dlsym(dlopen(TL_FAKE_CUDA_SO, RTLD_NOW | RTLD_LOCAL), "tl_fake_cuda_last_device");
  void **last_stream = dlsym(dlopen(TL_FAKE_CUDA_SO, RTLD_NOW | RTLD_LOCAL), "tl_fake_cuda_last_stream");
  for (int i = 0; i < 3; i++) {
    cr_assert_eq(call3(ctx, k, &a, &b, &c, s1), TL_OK, "%s", tl_context_last_error(ctx));
    cr_assert_eq(*last_dev, 1);
    cr_assert_eq(*last_stream, s1);
  }
  /* device 0 was never touched: no module there (TileLang #2516 loaded device 0's) */
  cr_assert_eq(loads[0], 0);
  cr_assert_eq(loads[1], 1);
  cr_assert_eq(launches(1), 3);
  cr_assert_eq(launches(0), 0);
  /* the same kernel object on device 0 gets a module of its own */
  mkvec(&a, 0, MEM(0, 0), 1000), mkvec(&b, 0, MEM(0, 1 << 20), 1000), mkvec(&c, 0, MEM(0, 2 << 20), 1000);
  cr_assert_eq(call3(ctx, k, &a, &b, &c, NULL), TL_OK, "%s", tl_context_last_error(ctx));
  cr_assert_eq(*last_dev, 0);
  cr_assert_eq(loads[0], 1);
  cr_assert_eq(loads[1], 1);
  cr_assert_eq(*bad_launches, 0);
  tl_kernel_destroy(k);
}

Test(devices, outputs_are_allocated_on_the_inputs_device) {
  use_fake(2, "90,90");
  tl_kernel *k = compile_saxpy(NULL, 2);
  vec a, b;
  mkvec(&a, 1, MEM(1, 0), 1000), mkvec(&b, 1, MEM(1, 1 << 20), 1000);
  tl_arg args[3] = {tl_arg_tensor(&a.t), tl_arg_tensor(&b.t), tl_arg_float(2.0)};
  DLManagedTensor *out = NULL;
  cr_assert_eq(tl_kernel_call(ctx, k, args, 3, fake_stream(1), &out), TL_OK, "%s", tl_context_last_error(ctx));
  cr_assert_not_null(out);
  cr_assert_eq(out->dl_tensor.device.device_type, kDLCUDA);
  cr_assert_eq(out->dl_tensor.device.device_id, 1);
  cr_assert_eq(((uintptr_t)out->dl_tensor.data >> 36) & 0xf, 1, "output at %p: not device 1's memory",
               out->dl_tensor.data);
  cr_assert_eq(out->dl_tensor.shape[0], 1000);
  out->deleter(out);
  cr_assert_eq(loads[0], 0);
  tl_kernel_destroy(k);
}

/* The refusal names the parameter and both devices, launches nothing and
 * loads nothing; ndev 0: no driver at all. */
static void expect_mixed_refused(int ndev) {
  if (ndev) use_fake(ndev, "90,90");
  else setenv("TL_CUDA_DRIVER", "/nonexistent/libcuda.so.1", 1);
  tl_kernel *k = compile_saxpy("sm_90a", -1);
  vec a, b, c;
  mkvec(&a, 0, MEM(0, 0), 1000), mkvec(&b, 1, MEM(1, 1 << 20), 1000), mkvec(&c, 0, MEM(0, 2 << 20), 1000);
  cr_assert_eq(call3(ctx, k, &a, &b, &c, NULL), TL_ERR_INVALID_ARGUMENT);
  cr_assert_str_eq(tl_context_last_error(ctx),
                   "argument 'B' (#1): device: expected cuda:0 (the device of 'A'), got cuda:1");
  if (ndev) {
    cr_assert_eq(loads[0] + loads[1], 0, "a module was loaded");
    cr_assert_eq(launches(0) + launches(1), 0);
  }
  /* C on cuda:1 after A, B on cuda:0: C is named */
  mkvec(&b, 0, MEM(0, 1 << 20), 1000), mkvec(&c, 1, MEM(1, 2 << 20), 1000);
  cr_assert_eq(call3(ctx, k, &a, &b, &c, NULL), TL_ERR_INVALID_ARGUMENT);
  cr_assert_str_eq(tl_context_last_error(ctx),
                   "argument 'C' (#2): device: expected cuda:0 (the device of 'A'), got cuda:1");
  tl_kernel_destroy(k);
}
Test(devices, mixed_devices_are_refused_with_two) { expect_mixed_refused(2); }
Test(devices, mixed_devices_are_refused_with_one) { expect_mixed_refused(1); }
Test(devices, mixed_devices_are_refused_without_a_driver) { expect_mixed_refused(0); }

Test(devices, another_devices_stream_or_memory_is_refused) {
  use_fake(2, "90,90");
  tl_kernel *k = compile_saxpy(NULL, -1);
  vec a, b, c;
  mkvec(&a, 1, MEM(1, 0), 1000), mkvec(&b, 1, MEM(1, 1 << 20), 1000), mkvec(&c, 1, MEM(1, 2 << 20), 1000);
  cr_assert_eq(call3(ctx, k, &a, &b, &c, fake_stream(0)), TL_ERR_INVALID_ARGUMENT);
  cr_assert(strstr(tl_context_last_error(ctx), "stream: expected a stream of the primary context of cuda:1"), "%s",
            tl_context_last_error(ctx));
  /* B claims cuda:1 but its data is device 0's memory */
  b.t.data = (void *)(uintptr_t)MEM(0, 1 << 20);
  cr_assert_eq(call3(ctx, k, &a, &b, &c, fake_stream(1)), TL_ERR_INVALID_ARGUMENT);
  cr_assert_str_eq(tl_context_last_error(ctx),
                   "argument 'B' (#1): data: expected memory of cuda:1, got memory of cuda:0");
  cr_assert_eq(launches(0) + launches(1), 0);
  cr_assert_eq(*bad_launches, 0);
  tl_kernel_destroy(k);
}

Test(devices, an_ordinal_that_does_not_exist) {
  use_fake(2, "90,90");
  tl_kernel *k = compile_saxpy(NULL, -1);
  cr_assert_eq(tl_kernel_load(ctx, k, 2), TL_ERR_INVALID_ARGUMENT);
  cr_assert_str_eq(tl_context_last_error(ctx), "device cuda:2 does not exist (2 CUDA device(s))");
  vec a, b, c;
  mkvec(&a, 5, MEM(0, 0), 64), mkvec(&b, 5, MEM(0, 1 << 20), 64), mkvec(&c, 5, MEM(0, 2 << 20), 64);
  cr_assert_eq(call3(ctx, k, &a, &b, &c, NULL), TL_ERR_INVALID_ARGUMENT);
  cr_assert_str_eq(tl_context_last_error(ctx), "device cuda:5 does not exist (2 CUDA device(s))");
  tl_kernel_destroy(k);
}

Test(devices, targets_follow_each_devices_compute_capability) {
  use_fake(5, "90,80,86,89,100");
  static const char *const want[5] = {"sm_90a", "sm_80", "sm_86", "sm_89", "sm_90"};
  for (int d = 0; d < 5; d++) cr_assert_str_eq(tl_device_target(d), want[d], "device %d", d);
  cr_assert_str_eq(tl_device_target(5), "sm_80");
  cr_assert_str_eq(tl_device_target(-1), "sm_80");
  cr_assert_str_eq(tl_device_default_target(), "sm_90a");
}

Test(devices, a_device_the_target_does_not_fit_is_refused) {
  use_fake(3, "90,80,100");
  tl_kernel *k = compile_saxpy(NULL, -1); /* device 0's target: sm_90a */
  cr_assert_str_eq(tl_kernel_target(k), "sm_90a");
  vec a, b, c;
  mkvec(&a, 1, MEM(1, 0), 1000), mkvec(&b, 1, MEM(1, 1 << 20), 1000), mkvec(&c, 1, MEM(1, 2 << 20), 1000);
  cr_assert_eq(call3(ctx, k, &a, &b, &c, NULL), TL_ERR_UNSUPPORTED);
  cr_assert_str_eq(tl_context_last_error(ctx),
                   "kernel 'main' was compiled for sm_90a, whose PTX runs only on devices of compute capability "
                   "9.0; cuda:1 (Fake GPU 1 (cc 8.0)) has compute capability 8.0: compile the kernel for that "
                   "device (target sm_80: tl_device_target(1)) or pass tensors on a device it fits");
  cr_assert_eq(tl_kernel_load(ctx, k, 2), TL_ERR_UNSUPPORTED); /* sm_90a on 10.0: arch-specific PTX */
  cr_assert(strstr(tl_context_last_error(ctx),
                   "cuda:2 (Fake GPU 2 (cc 10.0)) has compute capability 10.0: "
                   "compile the kernel for that device (target sm_90"),
            "%s", tl_context_last_error(ctx));
  cr_assert_eq(loads[1] + loads[2], 0, "a module was loaded on a device that was refused");
  tl_kernel_destroy(k);
  /* an sm_89 kernel needs 8.9 or newer */
  k = compile_saxpy("sm_89", -1);
  cr_assert_eq(tl_kernel_load(ctx, k, 1), TL_ERR_UNSUPPORTED);
  cr_assert(strstr(tl_context_last_error(ctx),
                   "compiled for sm_89, whose PTX runs only on devices of compute "
                   "capability 8.9 or newer; cuda:1"),
            "%s", tl_context_last_error(ctx));
  cr_assert_eq(tl_kernel_load(ctx, k, 2), TL_OK, "%s", tl_context_last_error(ctx));
  tl_kernel_destroy(k);
  /* compiled for device 1's target: runs there, and on the newer devices (PTX JIT forward) */
  k = compile_saxpy(tl_device_target(1), -1);
  cr_assert_str_eq(tl_kernel_target(k), "sm_80");
  cr_assert_eq(call3(ctx, k, &a, &b, &c, NULL), TL_OK, "%s", tl_context_last_error(ctx));
  for (int d = 0; d < 3; d++) cr_assert_eq(tl_kernel_load(ctx, k, d), TL_OK, "%s", tl_context_last_error(ctx));
  cr_assert_eq(launches(1), 1);
  tl_kernel_destroy(k);
}

/* Threads each driving one device with its own stream and context, calling
 * one kernel object (loaded by none of them beforehand). */
typedef struct worker {
  tl_kernel *k;
  int device, calls, bad;
  pthread_barrier_t *start;
} worker;

static void *work(void *arg) {
  worker *w = arg;
  tl_context *c = NULL;
  void *lib = dlopen(TL_FAKE_CUDA_SO, RTLD_NOW | RTLD_LOCAL);
  int *last_dev = lib ? dlsym(lib, "tl_fake_cuda_last_device") : NULL; /* this thread's */
  void **last_stream = lib ? dlsym(lib, "tl_fake_cuda_last_stream") : NULL;
  if (tl_context_create(&c) != TL_OK || !last_dev || !last_stream) {
    w->bad = -1;
    return NULL;
  }
  void *s = fake_stream(w->device);
  pthread_barrier_wait(w->start);
  for (int i = 0; i < w->calls; i++) {
    int64_t n = 1000 + (i % 3) * 77;
    vec a, b, cc;
    uint64_t base = MEM(w->device, (uint64_t)(i % 2) << 28);
    mkvec(&a, w->device, base, n), mkvec(&b, w->device, base + (1 << 20), n);
    mkvec(&cc, w->device, base + (2 << 20), n);
    if (call3(c, w->k, &a, &b, &cc, s) != TL_OK || *last_dev != w->device || *last_stream != s) w->bad++;
  }
  tl_context_destroy(c);
  return NULL;
}

Test(devices, threads_on_two_devices_share_one_kernel) {
  use_fake(2, "90,90");
  tl_kernel *k = compile_saxpy(NULL, -1);
  enum { NT = 4, CALLS = 1000 }; /* two threads per device: their first calls race for the load */
  worker w[NT];
  pthread_t th[NT];
  pthread_barrier_t start;
  pthread_barrier_init(&start, NULL, NT);
  for (int t = 0; t < NT; t++) {
    w[t] = (worker){k, t % 2, CALLS, 0, &start};
    cr_assert_eq(pthread_create(&th[t], NULL, work, &w[t]), 0);
  }
  for (int t = 0; t < NT; t++) pthread_join(th[t], NULL);
  pthread_barrier_destroy(&start);
  for (int t = 0; t < NT; t++) cr_assert_eq(w[t].bad, 0, "thread %d (cuda:%d): %d bad calls", t, w[t].device, w[t].bad);
  cr_assert_eq(loads[0], 1, "device 0 loaded %llu modules", loads[0]);
  cr_assert_eq(loads[1], 1, "device 1 loaded %llu modules", loads[1]);
  cr_assert_eq(launches(0), NT / 2 * CALLS);
  cr_assert_eq(launches(1), NT / 2 * CALLS);
  cr_assert_eq(*bad_launches, 0);
  tl_kernel_destroy(k);
}

/* The persistent grid of a 4096^3 GEMM (512 tiles of 128x256): min(512,
 * SMs) blocks, the SMs device 0's (the fake reports TL_FAKE_CUDA_SMS), for
 * the default target and for sm_90a named; the SIMT IR's kernel launch
 * shows the count.  tl_compile_options.sms given explicitly wins. */
static void expect_persistent_grid(const char *target, int sms_opt, const char *want) {
  static const char src[] =
      "import tilelang\nimport tilelang.language as T\n\n\n@T.prim_func\n"
      "def gemm(A: T.Tensor((4096, 4096), \"float16\"), B: T.Tensor((4096, 4096), \"float16\"),\n"
      "         C: T.Tensor((4096, 4096), \"float16\")):\n"
      "    with T.Kernel(16, 32, threads=256) as (bx, by):\n"
      "        A_s = T.alloc_shared((128, 64), \"float16\")\n"
      "        B_s = T.alloc_shared((64, 256), \"float16\")\n"
      "        acc = T.alloc_fragment((128, 256), \"float32\")\n"
      "        T.clear(acc)\n"
      "        for k in T.Pipelined(64, num_stages=3):\n"
      "            T.copy(A[by * 128, k * 64], A_s)\n"
      "            T.copy(B[k * 64, bx * 256], B_s)\n"
      "            T.gemm(A_s, B_s, acc)\n"
      "        T.copy(acc, C[by * 128, bx * 256])\n";
  tl_kernel *k = NULL;
  tl_compile_options o = {0};
  o.cache = TL_CACHE_USE_OFF;
  o.target = target;
  o.sms = sms_opt;
  o.stop_after = TL_STAGE_SIMT;
  cr_assert_eq(tl_kernel_compile(ctx, src, sizeof src - 1, "gemm.py", NULL, 0, &o, &k), TL_OK, "%s",
               tl_context_last_error(ctx));
  const char *ir = tl_kernel_simt_ir(k);
  cr_assert(ir && strstr(ir, want), "want '%s' in:\n%.600s", want, ir ? ir : "(null)");
  tl_kernel_destroy(k);
}
Test(devices, a_persistent_grid_plans_for_the_devices_sms) {
  setenv("TL_FAKE_CUDA_SMS", "114", 1);
  use_fake(1, "90");
  expect_persistent_grid(NULL, 0, "T.Kernel(114,");
  expect_persistent_grid("sm_90a", 0, "T.Kernel(114,");
  expect_persistent_grid("sm_90a", 7, "T.Kernel(7,");
}
Test(devices, a_persistent_grid_keeps_132_on_a_132_sm_device) {
  use_fake(1, "90");
  expect_persistent_grid(NULL, 0, "T.Kernel(132,");
}
