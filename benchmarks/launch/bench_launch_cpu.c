/* Host cost of the launch path without a GPU (issue 16, acceptance 5):
 * tl_kernel_call against a bare cuLaunchKernel of the same function and
 * parameters, both calling the fake driver libtl_fake_cuda.so
 * (benchmarks/launch/fake_cuda.c, loaded through TL_CUDA_DRIVER, set here
 * before the runtime first looks for a driver), whose cuLaunchKernel returns
 * at once.  So the difference is exactly our launch path: argument checks
 * and marshalling (tl_rt_bind), the device-pointer checks, the tensor-map
 * cache (lib/Runtime/Hopper/tma.c) and the driver calls other than the launch (each
 * a function call here, a few ns; the real driver's cost for them is what
 * bench_launch on a GPU adds).
 * Cases (the tensors are DLTensors of kDLCUDA device 0 at fake addresses;
 * nothing is dereferenced):
 *   0 arguments    benchmarks/launch/launch_kernels.py launch0
 *   3 arguments    examples/elementwise_add.py, 32 x 128 float32, out_idx none
 *   19 arguments   benchmarks/launch/launch_kernels.py launch19, N = 128
 *   tensor maps    examples/gemm.py for sm_90a (TMA + wgmma: 2 tensor maps;
 *                  at 4096^3 float16, out_idx none), the maps cached per
 *                  pointer and shape after the first call
 * Method: WARM calls of each kind, then BATCHES alternating batches (tl,
 * bare, tl, ...) of CALLS calls between two CLOCK_MONOTONIC stamps; the
 * figure is the median over batches of the time per call, in ns.
 * With TL_BENCH_CALLS=N: batches of N calls, 3 of them (for a run under
 * valgrind --tool=callgrind --toggle-collect=tl_kernel_call, whose
 * instruction count per call does not depend on the machine's load).
 * Output: a table; exit 0 when every overhead is under LIMIT_NS (500 ns,
 * the acceptance figure, which is over a real driver's launch), 1 otherwise
 * or on a failure.  Usage: bench_launch_cpu [FAKE_DRIVER_SO] (default: the
 * libtl_fake_cuda.so beside this program, i.e. in gpu-bin/). */
#include <dlfcn.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "tilelang/runtime.h"

static int CALLS = 20000, BATCHES = 21, WARM = 2000; /* $TL_BENCH_CALLS sets CALLS (and WARM = CALLS / 10) */
#define LIMIT_NS 500.0

typedef int (*launch_fn)(void *f, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by, unsigned bz,
                         unsigned smem, void *stream, void **params, void **extra);

static double now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

static int cmp_d(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

typedef struct lcase {
  const char *name;
  const char *file;   /* relative to the repository root (or $TL_SOURCE_DIR) */
  const char *kernel; /* --kernel, or NULL */
  const char *target; /* NULL: the default */
  tl_define defs[3];
  int ndefs;
  int ntensors; /* tensor arguments, all of shape dims[0..ndim) */
  int ndim;
  int64_t dims[2];
  DLDataType dtype;
} lcase;

static const lcase cases[] = {
    {"0 args", "benchmarks/launch/launch_kernels.py", "launch0", NULL, {{0}}, 0, 0, 0, {0}, {kDLFloat, 32, 1}},
    {"3 args",
     "examples/elementwise_add.py",
     NULL,
     NULL,
     {{"M", "32"}, {"N", "128"}},
     2,
     3,
     2,
     {32, 128},
     {kDLFloat, 32, 1}},
    {"19 args", "benchmarks/launch/launch_kernels.py", "launch19", NULL, {{0}}, 0, 19, 1, {128}, {kDLFloat, 32, 1}},
    {"gemm sm_90a, tensor maps",
     "examples/gemm.py",
     NULL,
     "sm_90a",
     {{"M", "4096"}, {"N", "4096"}, {"K", "4096"}},
     3,
     3,
     2,
     {4096, 4096},
     {kDLFloat, 16, 1}},
};

/* One case: median ns per call of tl_kernel_call and of the bare launch. */
static int run_case(tl_context *ctx, const lcase *c, launch_fn bare, double *tl_ns, double *bare_ns, int *nparams) {
  char path[PATH_MAX];
  const char *src = getenv("TL_SOURCE_DIR");
  snprintf(path, sizeof path, "%s/%s", src && *src ? src : ".", c->file);
  tl_compile_options o = {0};
  o.out_idx_mode = TL_OUT_IDX_NONE;
  o.kernel = c->kernel;
  o.target = c->target;
  o.cache = TL_CACHE_USE_OFF;
  tl_kernel *k = NULL;
  if (tl_kernel_compile_file(ctx, path, c->defs, (size_t)c->ndefs, &o, &k) != TL_OK) {
    fprintf(stderr, "%s: compile failed: %s\n", c->name, tl_context_last_error(ctx));
    return 1;
  }
  DLTensor t[19];
  int64_t strides[2] = {c->ndim == 2 ? c->dims[1] : 1, 1};
  tl_arg args[19];
  for (int i = 0; i < c->ntensors; i++) {
    memset(&t[i], 0, sizeof t[i]);
    t[i].data = (void *)(uintptr_t)(0x7f0000000000ull + ((uint64_t)i << 32));
    t[i].device.device_type = kDLCUDA;
    t[i].ndim = c->ndim;
    t[i].dtype = c->dtype;
    t[i].shape = (int64_t *)c->dims;
    t[i].strides = i % 2 ? strides : NULL; /* both forms DLPack allows for a compact tensor */
    args[i] = tl_arg_tensor(&t[i]);
  }
  tl_launch_info li;
  if (tl_kernel_launch_info(ctx, k, args, (size_t)c->ntensors, &li) != TL_OK) {
    fprintf(stderr, "%s: tl_kernel_launch_info failed: %s\n", c->name, tl_context_last_error(ctx));
    tl_kernel_destroy(k);
    return 1;
  }
  *nparams = li.nparams;
  for (int i = 0; i < WARM; i++) {
    if (tl_kernel_call(ctx, k, args, (size_t)c->ntensors, NULL, NULL) != TL_OK) {
      fprintf(stderr, "%s: call failed: %s\n", c->name, tl_context_last_error(ctx));
      tl_kernel_destroy(k);
      return 1;
    }
    bare(li.function, li.grid[0], li.grid[1], li.grid[2], li.block, 1, 1, li.smem, NULL, li.params, NULL);
  }
  double a[64], b[64];
  for (int r = 0; r < BATCHES; r++) {
    double t0 = now_ns();
    for (int i = 0; i < CALLS; i++) tl_kernel_call(ctx, k, args, (size_t)c->ntensors, NULL, NULL);
    double t1 = now_ns();
    for (int i = 0; i < CALLS; i++)
      bare(li.function, li.grid[0], li.grid[1], li.grid[2], li.block, 1, 1, li.smem, NULL, li.params, NULL);
    double t2 = now_ns();
    a[r] = (t1 - t0) / CALLS;
    b[r] = (t2 - t1) / CALLS;
  }
  qsort(a, BATCHES, sizeof a[0], cmp_d);
  qsort(b, BATCHES, sizeof b[0], cmp_d);
  *tl_ns = a[BATCHES / 2];
  *bare_ns = b[BATCHES / 2];
  tl_launch_info_free(&li);
  tl_kernel_destroy(k);
  return 0;
}

int main(int argc, char **argv) {
  char so[PATH_MAX + 32];
  if (argc > 1) snprintf(so, sizeof so, "%s", argv[1]);
  else {
    char self[PATH_MAX];
    ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
    if (n <= 0) return 1;
    self[n] = '\0';
    char *slash = strrchr(self, '/');
    if (slash) *slash = '\0';
    snprintf(so, sizeof so, "%s/libtl_fake_cuda.so", self);
  }
  const char *calls = getenv("TL_BENCH_CALLS");
  if (calls && atoi(calls) > 0) CALLS = atoi(calls), WARM = CALLS / 10, BATCHES = 3;
  setenv("TL_CUDA_DRIVER", so, 1); /* before the runtime's first look for a driver */
  void *lib = dlopen(so, RTLD_NOW | RTLD_LOCAL);
  launch_fn bare = NULL;
  if (lib) *(void **)&bare = dlsym(lib, "cuLaunchKernel");
  if (!bare) {
    fprintf(stderr, "bench_launch_cpu: cannot load the fake driver %s\n", so);
    return 1;
  }
  tl_context *ctx;
  if (tl_context_create(&ctx) != TL_OK) return 1;
  printf("bench_launch_cpu: host ns per call, fake driver %s; median of %d alternating batches of %d\n", so, BATCHES,
         CALLS);
  printf("%-26s %7s %12s %12s %12s\n", "case", "params", "tl_call_ns", "bare_ns", "overhead_ns");
  int fails = 0;
  const char *only = getenv("TL_BENCH_CASE"); /* one case, by its index in cases[] */
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    if (only && *only && (size_t)atoi(only) != i) continue;
    double tl = 0, bare_ns = 0;
    int np = 0;
    if (run_case(ctx, &cases[i], bare, &tl, &bare_ns, &np)) {
      fails++;
      continue;
    }
    double over = tl - bare_ns;
    printf("%-26s %7d %12.1f %12.1f %12.1f%s\n", cases[i].name, np, tl, bare_ns, over,
           over <= LIMIT_NS ? "" : "   OVER the 500 ns limit");
    fails += over > LIMIT_NS;
  }
  tl_context_destroy(ctx);
  return fails ? 1 : 0;
}
