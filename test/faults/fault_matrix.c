/* The fault matrix (scripts/fault-matrix.sh): every CUDA driver entry point
 * the runtime calls (lib/Runtime/driver.h) fails once, at its first call and
 * at a later one, inside a scenario that uses each of them: device tensors
 * (tl_tensor_alloc, tl_tensor_copy both ways and device to device), a call
 * with an out_idx output poisoned on a stream, a timed call, a call above
 * 48 KB of dynamic shared memory, a call with a kernel workspace
 * (T.alloc_global), a call with TMA tensor maps over an output, launch info.
 * Runs on the fake driver of benchmarks/launch (fake_cuda.c, its fault
 * injection and leak counters).
 *
 * Per case: the scenario's steps run with the fault armed.  A fault in an
 * entry point whose failure must be reported has to make its step fail with
 * a tl_status, a message with the driver's error name and the kernel or
 * function it concerned, no output handed out (*out / outputs[j] NULL);
 * then, the fault gone, the same step and the rest of the scenario succeed
 * on the same kernel objects and context ("recovered").  A sticky error
 * (CUDA_ERROR_ILLEGAL_ADDRESS) has to say so and tell the user to restart
 * the process; the next call must fail the same way (the driver's context is
 * dead) until the fake driver forgets it (a new process).  A fault in a
 * cleanup call (cuMemFree_v2, cuModuleUnload, cuCtxPopCurrent_v2,
 * cuDevicePrimaryCtxRelease_v2, cuEventDestroy_v2: nothing to report to) or
 * in cuCtxGetCurrent (the runtime pushes the context instead) must leave
 * every step succeeding.  After each case everything is freed and the fake
 * driver's live allocations, modules, context retains, events and the
 * thread's pushed contexts must be back to zero (except the one resource a
 * failed cleanup call kept); under ASan, LeakSanitizer checks host memory.
 * Driver initialisation (cuInit, cuDeviceGetCount) fails in forked children
 * before the driver is loaded: tl_device_check and tl_kernel_call report it.
 * Not injected: cuDriverGetVersion (the runtime never calls it),
 * cuGetErrorName and cuGetErrorString (called only to word another failure;
 * failing, the name reads CUDA_ERROR_UNKNOWN), cuDeviceGetName (only for a
 * message and the tuner's key; failing, the name is empty).
 *
 * Prints one line per case and then
 *   faults: N injected, N reported, N recovered, 0 leaked, 0 lost
 *   cleanup faults: M injected, M tolerated, 0 leaked
 * and exits 0 only when every case held.  Usage: fault_matrix [-v] (run
 * from the repository root, as ctest does). */
#include <dlfcn.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "tilelang/runtime.h"

static void (*fake_fault)(const char *, long, int);
static unsigned long long (*fake_calls)(const char *);
static void (*fake_reset_calls)(void);
static long long (*fake_live)(const char *);
static int (*fake_ctx_depth)(void);
static void (*fake_clear_sticky)(void);
static int (*fake_code)(const char *);
static void *(*fake_stream)(int);
static int *fake_counting;
static unsigned long long *fake_fired;
static bool verbose;
static long long g_alloc_live; /* allocations of the context's allocator (s_allocator) not freed */

static void load_fake(void) {
  setenv("TL_CUDA_DRIVER", TL_FAKE_CUDA_SO, 1);
  setenv("TL_FAKE_CUDA_DEVICES", "1", 1);
  setenv("TL_FAKE_CUDA_CC", "90", 1);
  void *lib = dlopen(TL_FAKE_CUDA_SO, RTLD_NOW | RTLD_LOCAL); /* the handle the runtime gets too */
  if (!lib) {
    fprintf(stderr, "fault_matrix: %s\n", dlerror());
    exit(2);
  }
  *(void **)&fake_fault = dlsym(lib, "tl_fake_cuda_fault");
  *(void **)&fake_calls = dlsym(lib, "tl_fake_cuda_calls");
  *(void **)&fake_reset_calls = dlsym(lib, "tl_fake_cuda_reset_calls");
  *(void **)&fake_live = dlsym(lib, "tl_fake_cuda_live");
  *(void **)&fake_ctx_depth = dlsym(lib, "tl_fake_cuda_ctx_depth");
  *(void **)&fake_clear_sticky = dlsym(lib, "tl_fake_cuda_clear_sticky");
  *(void **)&fake_code = dlsym(lib, "tl_fake_cuda_error_code");
  *(void **)&fake_stream = dlsym(lib, "tl_fake_cuda_stream");
  fake_counting = dlsym(lib, "tl_fake_cuda_counting");
  fake_fired = dlsym(lib, "tl_fake_cuda_faults_fired");
  if (!fake_fault || !fake_calls || !fake_live || !fake_ctx_depth || !fake_clear_sticky || !fake_code || !fake_stream ||
      !fake_counting || !fake_fired || !fake_reset_calls) {
    fprintf(stderr, "fault_matrix: %s lacks the fault hooks\n", TL_FAKE_CUDA_SO);
    exit(2);
  }
}

/* ------------------------------------------------------------ kernels */
static const char saxpy_src[] =
    "import tilelang.language as T\n"
    "\n"
    "@T.prim_func\n"
    "def fm_saxpy(A: T.Tensor((1000,), \"float32\"), B: T.Tensor((1000,), \"float32\"),\n"
    "             C: T.Tensor((1000,), \"float32\"), alpha: T.float32):\n"
    "    with T.Kernel(8, threads=128) as bx:\n"
    "        for i in T.Parallel(128):\n"
    "            if bx * 128 + i < 1000:\n"
    "                C[bx * 128 + i] = alpha * A[bx * 128 + i] + B[bx * 128 + i]\n";
/* 64 KB of shared memory: above the 48 KB a launch gets without cuFuncSetAttribute */
static const char smem_src[] =
    "import tilelang.language as T\n"
    "\n"
    "@T.prim_func\n"
    "def fm_smem(A: T.Tensor((16384,), \"float32\"), B: T.Tensor((16384,), \"float32\")):\n"
    "    with T.Kernel(1, threads=128) as bx:\n"
    "        S = T.alloc_shared((16384,), \"float32\")\n"
    "        T.copy(A, S)\n"
    "        T.copy(S, B)\n";

typedef struct kernels {
  tl_kernel *saxpy, *smem, *ws, *tma;
} kernels;

static tl_kernel *compile(tl_context *ctx, const char *src, const char *path, const char *name, const char *target,
                          int out_idx, unsigned flags) {
  tl_compile_options o = {0};
  o.target = target;
  o.flags = flags;
  o.kernel = name;
  o.out_idx_mode = out_idx < 0 ? TL_OUT_IDX_NONE : TL_OUT_IDX_LIST;
  o.out_idx = &out_idx;
  o.n_out_idx = out_idx < 0 ? 0 : 1;
  tl_kernel *k = NULL;
  tl_status st = src ? tl_kernel_compile(ctx, src, strlen(src), "fault_matrix.py", NULL, 0, &o, &k)
                     : tl_kernel_compile_file(ctx, path, NULL, 0, &o, &k);
  if (st != TL_OK) {
    fprintf(stderr, "fault_matrix: compiling %s: %s\n",
            name   ? name
            : path ? path
                   : "<source>",
            tl_context_last_error(ctx));
    exit(2);
  }
  return k;
}

static void compile_all(tl_context *ctx, kernels *ks) {
  ks->saxpy = compile(ctx, saxpy_src, NULL, NULL, "sm_90a", 2, TL_COMPILE_POISON_OUTPUTS);
  ks->smem = compile(ctx, smem_src, NULL, NULL, "sm_90a", -1, 0);
  ks->ws = compile(ctx, NULL, "test/Interp/ops/alloc_global.py", "alloc_global_atomic", "sm_90a", 0, 0);
  ks->tma = compile(ctx, NULL, "test/GPU/kernels/tma_store.py", NULL, "sm_90a", 1, 0);
}

static void destroy_all(kernels *ks) {
  tl_kernel_destroy(ks->saxpy);
  tl_kernel_destroy(ks->smem);
  tl_kernel_destroy(ks->ws);
  tl_kernel_destroy(ks->tma);
  memset(ks, 0, sizeof *ks);
}

/* ----------------------------------------------------------- scenario */
enum { NT = 6, NOUT = 8 };
typedef struct world {
  tl_context *ctx;
  kernels ks;
  DLManagedTensor *t[NT];     /* device tensors: A, B (1000 f32), S1, S2 (16384 f32), TA (100x200 f16) */
  DLManagedTensor *out[NOUT]; /* outputs handed out by the steps */
  float host[16384];
} world;

static DLManagedTensor **next_out(world *w) {
  for (int i = 0; i < NOUT; i++)
    if (!w->out[i]) return &w->out[i];
  fprintf(stderr, "fault_matrix: too many outputs\n");
  exit(2);
}

static DLTensor host_of(world *w, int64_t *shape, int ndim, int bits) {
  DLTensor h = {w->host, {kDLCPU, 0}, ndim, {kDLFloat, (uint8_t)bits, 1}, shape, NULL, 0};
  return h;
}

typedef struct step {
  const char *name;
  const char *concerns;                              /* what the message must name (a kernel or the API function) */
  tl_status (*run)(world *w, DLManagedTensor **out); /* *out: what the step hands out (NULL on failure) */
} step;

static const int64_t shape_a[1] = {1000}, shape_s[1] = {16384}, shape_t[2] = {100, 200};

static tl_status alloc_dev(world *w, int i, int ndim, const int64_t *shape, int bits, DLManagedTensor **out) {
  tl_status st =
      tl_tensor_alloc(w->ctx, (DLDevice){kDLCUDA, 0}, ndim, shape, (DLDataType){kDLFloat, (uint8_t)bits, 1}, out);
  if (st == TL_OK) w->t[i] = *out, *out = NULL;
  return st;
}
static tl_status s_alloc(world *w, DLManagedTensor **out) {
  tl_status st = TL_OK;
  if (!w->t[0] && (st = alloc_dev(w, 0, 1, shape_a, 32, out)) != TL_OK) return st;
  if (!w->t[1] && (st = alloc_dev(w, 1, 1, shape_a, 32, out)) != TL_OK) return st;
  if (!w->t[2] && (st = alloc_dev(w, 2, 1, shape_s, 32, out)) != TL_OK) return st;
  if (!w->t[3] && (st = alloc_dev(w, 3, 1, shape_s, 32, out)) != TL_OK) return st;
  if (!w->t[4] && (st = alloc_dev(w, 4, 2, shape_t, 16, out)) != TL_OK) return st;
  return st;
}
static tl_status s_upload(world *w, DLManagedTensor **out) {
  (void)out;
  int64_t sh[1] = {1000};
  DLTensor h = host_of(w, sh, 1, 32);
  return tl_tensor_copy(w->ctx, &w->t[0]->dl_tensor, &h);
}
static tl_status s_call(world *w, DLManagedTensor **out) {
  tl_arg args[3] = {tl_arg_tensor(&w->t[0]->dl_tensor), tl_arg_tensor(&w->t[1]->dl_tensor), tl_arg_float(2.0)};
  return tl_kernel_call(w->ctx, w->ks.saxpy, args, 3, fake_stream(0), out);
}
static tl_status s_download(world *w, DLManagedTensor **out) {
  (void)out;
  int64_t sh[1] = {1000};
  DLTensor h = host_of(w, sh, 1, 32);
  return tl_tensor_copy(w->ctx, &h, &w->t[1]->dl_tensor);
}
static tl_status s_d2d(world *w, DLManagedTensor **out) {
  (void)out;
  return tl_tensor_copy(w->ctx, &w->t[1]->dl_tensor, &w->t[0]->dl_tensor);
}
static tl_status s_time(world *w, DLManagedTensor **out) {
  tl_arg args[3] = {tl_arg_tensor(&w->t[0]->dl_tensor), tl_arg_tensor(&w->t[1]->dl_tensor), tl_arg_float(2.0)};
  float ms[2];
  return tl_kernel_time(w->ctx, w->ks.saxpy, args, 3, NULL, 1, 2, ms, out);
}
static tl_status s_smem(world *w, DLManagedTensor **out) {
  (void)out;
  tl_arg args[2] = {tl_arg_tensor(&w->t[2]->dl_tensor), tl_arg_tensor(&w->t[3]->dl_tensor)};
  return tl_kernel_call(w->ctx, w->ks.smem, args, 2, NULL, NULL);
}
static tl_status s_ws(world *w, DLManagedTensor **out) {
  return tl_kernel_call_on(w->ctx, w->ks.ws, TL_EXEC_CUDA, NULL, 0, NULL, out);
}
static tl_status s_tma(world *w, DLManagedTensor **out) {
  tl_arg args[1] = {tl_arg_tensor(&w->t[4]->dl_tensor)};
  return tl_kernel_call(w->ctx, w->ks.tma, args, 1, NULL, out);
}
/* The context's allocator (tl_context_set_allocator): device-0 addresses of
 * the fake driver's memory, high enough not to meet its own allocations;
 * g_alloc_live counts what it handed out and did not get back. */
static uint64_t g_alloc_next = 0x7f0800000000ull;
static void *fm_alloc(void *user, size_t n, int device, void *stream) {
  (void)user, (void)device, (void)stream;
  g_alloc_live++;
  void *p = (void *)(uintptr_t)g_alloc_next;
  g_alloc_next += (n + 255) & ~(uint64_t)255;
  return p;
}
static void fm_free(void *user, void *p, size_t n, int device, void *stream) {
  (void)user, (void)p, (void)n, (void)device, (void)stream;
  g_alloc_live--;
}
static tl_status s_allocator(world *w, DLManagedTensor **out) {
  tl_allocator a = {fm_alloc, fm_free, NULL};
  tl_context_set_allocator(w->ctx, &a); /* the last step: the context keeps it */
  return s_call(w, out);
}
static tl_status s_info(world *w, DLManagedTensor **out) {
  (void)out;
  tl_arg args[2] = {tl_arg_tensor(&w->t[2]->dl_tensor), tl_arg_tensor(&w->t[3]->dl_tensor)};
  tl_launch_info info;
  tl_status st = tl_kernel_launch_info(w->ctx, w->ks.smem, args, 2, &info);
  tl_launch_info_free(&info);
  return st;
}

static const step k_steps[] = {
    {"allocate device tensors", "tl_tensor_alloc", s_alloc},
    {"copy host -> device", "tl_tensor_copy", s_upload},
    {"call with a poisoned out_idx output on a stream", "fm_saxpy", s_call},
    {"copy device -> host", "tl_tensor_copy", s_download},
    {"copy device -> device", "tl_tensor_copy", s_d2d},
    {"timed call", "fm_saxpy", s_time},
    {"call above 48 KB of shared memory", "fm_smem", s_smem},
    {"call with a kernel workspace", "atomic", s_ws},
    {"call with TMA maps over an output", "main", s_tma},
    {"launch info", "fm_smem", s_info},
    {"call with an output from the context's allocator", "fm_saxpy", s_allocator},
};
enum { NSTEPS = sizeof k_steps / sizeof *k_steps };

static void world_open(world *w) {
  memset(w, 0, sizeof *w);
  if (tl_context_create(&w->ctx) != TL_OK) exit(2);
  compile_all(w->ctx, &w->ks);
}

static void world_close(world *w) {
  for (int i = 0; i < NOUT; i++)
    if (w->out[i]) w->out[i]->deleter(w->out[i]);
  for (int i = 0; i < NT; i++)
    if (w->t[i]) w->t[i]->deleter(w->t[i]);
  destroy_all(&w->ks);
  tl_context_destroy(w->ctx);
  memset(w, 0, sizeof *w);
}

/* ------------------------------------------------------------- matrix */
/* cleanup calls (the resource their failure keeps) and fallbacks */
static const char *cleanup_resource(const char *entry) {
  if (!strcmp(entry, "cuMemFree_v2")) return "mem";
  if (!strcmp(entry, "cuModuleUnload")) return "module";
  if (!strcmp(entry, "cuDevicePrimaryCtxRelease_v2")) return "retain";
  if (!strcmp(entry, "cuEventDestroy_v2")) return "event";
  if (!strcmp(entry, "cuCtxPopCurrent_v2")) return "depth";
  if (!strcmp(entry, "cuCtxGetCurrent")) return ""; /* a fallback: nothing may be kept */
  return NULL;
}

static const char *const k_entries[] = {"cuDeviceGet",
                                        "cuDeviceGetAttribute",
                                        "cuDevicePrimaryCtxRetain",
                                        "cuDevicePrimaryCtxRelease_v2",
                                        "cuCtxPushCurrent_v2",
                                        "cuCtxPopCurrent_v2",
                                        "cuCtxGetCurrent",
                                        "cuModuleLoadDataEx",
                                        "cuModuleUnload",
                                        "cuModuleGetFunction",
                                        "cuFuncGetAttribute",
                                        "cuFuncSetAttribute",
                                        "cuLaunchKernel",
                                        "cuStreamGetCtx",
                                        "cuMemAlloc_v2",
                                        "cuMemFree_v2",
                                        "cuMemsetD8Async",
                                        "cuPointerGetAttribute",
                                        "cuMemcpyHtoD_v2",
                                        "cuMemcpyDtoH_v2",
                                        "cuMemcpyDtoD_v2",
                                        "cuCtxSynchronize",
                                        "cuEventCreate",
                                        "cuEventRecord",
                                        "cuEventSynchronize",
                                        "cuEventElapsedTime",
                                        "cuEventDestroy_v2",
                                        "cuTensorMapEncodeTiled"};
enum { NENTRIES = sizeof k_entries / sizeof *k_entries };

typedef struct tally {
  int injected, reported, recovered, leaked, lost;
  int c_injected, c_tolerated, c_leaked;
} tally;

static int g_case_failed;
static char g_why[8192]; /* the case's failures, printed after its line */
static void bad(const char *fmt, ...) {
  size_t n = strlen(g_why);
  va_list ap;
  va_start(ap, fmt);
  snprintf(g_why + n, sizeof g_why - n, "  FAIL: ");
  n = strlen(g_why);
  vsnprintf(g_why + n, sizeof g_why - n, fmt, ap);
  n = strlen(g_why);
  snprintf(g_why + n, sizeof g_why - n, "\n");
  va_end(ap);
  g_case_failed = 1;
}

/* Leak check after a case: every fake-driver resource back to zero except
 * `kept` (the resource a failed cleanup call kept, or NULL). */
static const char *const k_res[4] = {"mem", "module", "retain", "event"};
static long long g_base[4]; /* the live counts a case starts from (a failed cleanup call of an earlier one keeps one) */
static void take_base(void) {
  g_alloc_live = 0;
  for (int i = 0; i < 4; i++) g_base[i] = fake_live(k_res[i]);
}
static bool leak_free(const char *kept) {
  const char *const *res = k_res;
  bool ok = true;
  for (int i = 0; i < 4; i++) {
    long long n = fake_live(res[i]) - g_base[i];
    if (n != 0 && !(kept && !strcmp(kept, res[i]) && n == 1)) {
      bad("%lld %s not freed", n, res[i]);
      ok = false;
    }
  }
  if (g_alloc_live) {
    bad("%lld allocations of the context's allocator not freed", g_alloc_live);
    ok = false;
  }
  int depth = fake_ctx_depth();
  if (depth != 0 && !(kept && !strcmp(kept, "depth") && depth == 1)) {
    bad("%d contexts left pushed", depth);
    ok = false;
  }
  return ok;
}

/* Undoes what a case left for the next one: a context a failed pop left
 * pushed, the fake driver's count of the resource a failed cleanup kept. */
static void reset_fake(void) {
  while (fake_ctx_depth() > 0) {
    void *c;
    int (*pop)(void **) = (int (*)(void **))dlsym(dlopen(TL_FAKE_CUDA_SO, RTLD_NOW | RTLD_LOCAL), "cuCtxPopCurrent_v2");
    pop(&c);
  }
}

/* Runs the scenario with entry's nth call failing with `code`. */
static void run_case(const char *entry, long nth, const char *code_name, tally *t) {
  int code = fake_code(code_name);
  bool sticky = code == 700;
  const char *cleanup = cleanup_resource(entry);
  world w;
  take_base();
  world_open(&w);
  g_case_failed = 0;
  g_why[0] = 0;
  unsigned long long fired0 = *fake_fired;
  fake_fault(entry, nth, code);
  int failed_at = -1;
  char msg[4096] = "";
  for (int i = 0; i < NSTEPS; i++) {
    DLManagedTensor **out = next_out(&w);
    tl_status st = k_steps[i].run(&w, out);
    if (st == TL_OK) continue;
    if (failed_at >= 0) {
      bad("step '%s' failed after the recovery: %s", k_steps[i].name, tl_context_last_error(w.ctx));
      break;
    }
    failed_at = i;
    snprintf(msg, sizeof msg, "%s", tl_context_last_error(w.ctx));
    if (*out) bad("step '%s' failed but handed out a tensor", k_steps[i].name);
    if (!strstr(msg, code_name)) bad("the message lacks %s: %s", code_name, msg);
    if (!strstr(msg, k_steps[i].concerns) && !strstr(msg, "argument '"))
      bad("the message names neither '%s' nor an argument: %s", k_steps[i].concerns, msg);
    if (sticky) {
      if (!strstr(msg, "sticky") || !strstr(msg, "restart the process"))
        bad("a sticky error's message does not say so: %s", msg);
      /* the context is dead: the next call fails the same way */
      st = k_steps[i].run(&w, out);
      if (st == TL_OK || !strstr(tl_context_last_error(w.ctx), code_name))
        bad("the call after a sticky error did not fail with it: %s", tl_context_last_error(w.ctx));
      fake_clear_sticky(); /* the real driver: a new process */
    }
    if (*fake_fired == fired0) bad("the step failed but the fault did not fire");
    i--; /* the same step again, the fault gone */
  }
  world_close(&w); /* with the fault still armed: cleanup calls fail there */
  bool fired = *fake_fired != fired0;
  fake_fault(NULL, 0, 0);
  bool clean = leak_free(cleanup && *cleanup ? cleanup : NULL);
  reset_fake();
  if (cleanup) {
    t->c_injected++;
    if (!fired) bad("the fault never fired");
    if (failed_at >= 0) bad("a cleanup fault was reported as a failure: %s", msg);
    if (!g_case_failed) t->c_tolerated++;
    if (!clean) t->c_leaked++;
  } else {
    t->injected++;
    if (!fired) bad("the fault never fired");
    bool reported = fired && failed_at >= 0 && strstr(msg, code_name);
    if (reported) t->reported++;
    else if (fired) {
      t->lost++;
      bad("the fault was not reported");
    }
    if (!clean) t->leaked++;
    if (reported && !g_case_failed) t->recovered++;
  }
  printf("%s %s #%ld -> %s: %s%s%s\n", g_case_failed ? "FAIL" : "ok  ", entry, nth, code_name,
         failed_at >= 0 ? "step '"
         : cleanup      ? "tolerated"
                        : "not reported",
         failed_at >= 0 ? k_steps[failed_at].name : "", failed_at >= 0 ? "'" : "");
  if (verbose && failed_at >= 0) printf("      %s\n", msg);
  fputs(g_why, stdout);
}

/* How often each entry point is called by a whole scenario (steps only: *steps; with the teardown: *all). */
static void count_calls(unsigned long long steps[NENTRIES], unsigned long long all[NENTRIES]) {
  world w;
  take_base();
  world_open(&w);
  __atomic_store_n(fake_counting, 1, __ATOMIC_RELAXED);
  fake_reset_calls();
  for (int i = 0; i < NSTEPS; i++)
    if (k_steps[i].run(&w, next_out(&w)) != TL_OK) {
      fprintf(stderr, "fault_matrix: step '%s' fails without a fault: %s\n", k_steps[i].name,
              tl_context_last_error(w.ctx));
      exit(2);
    }
  for (int e = 0; e < NENTRIES; e++) steps[e] = fake_calls(k_entries[e]);
  world_close(&w);
  for (int e = 0; e < NENTRIES; e++) all[e] = fake_calls(k_entries[e]);
  __atomic_store_n(fake_counting, 0, __ATOMIC_RELAXED);
  if (!leak_free(NULL)) exit(2);
}

/* The driver's initialisation failing (a child process each: the driver
 * loads once per process). */
static void init_case(const char *entry, const char *code_name, tally *t) {
  fflush(stdout);
  pid_t pid = fork();
  if (pid == 0) {
    fake_fault(entry, 1, fake_code(code_name));
    tl_context *ctx;
    if (tl_context_create(&ctx) != TL_OK) _exit(3);
    int rc = 0;
    if (tl_device_check(ctx) != TL_ERR_NO_DEVICE) rc = 1;
    const char *m = tl_context_last_error(ctx);
    if (!strstr(m, code_name) || !strstr(m, entry)) rc = 1;
    printf("%s %s #1 -> %s: tl_device_check: %s\n", rc ? "FAIL" : "ok  ", entry, code_name, m);
    tl_kernel *k = compile(ctx, saxpy_src, NULL, NULL, "sm_90a", 2, 0);
    float a[1000] = {0};
    int64_t sh[1] = {1000};
    DLTensor A = {(void *)(uintptr_t)0x7f0000000000ull, {kDLCUDA, 0}, 1, {kDLFloat, 32, 1}, sh, NULL, 0};
    (void)a;
    tl_arg args[3] = {tl_arg_tensor(&A), tl_arg_tensor(&A), tl_arg_float(1.0)};
    DLManagedTensor *out[1] = {NULL};
    if (tl_kernel_call(ctx, k, args, 3, NULL, out) != TL_ERR_NO_DEVICE || out[0] ||
        !strstr(tl_context_last_error(ctx), code_name)) {
      printf("  FAIL: tl_kernel_call after a failed %s: %s\n", entry, tl_context_last_error(ctx));
      rc = 1;
    }
    tl_kernel_destroy(k);
    tl_context_destroy(ctx);
    fflush(stdout);
    _exit(rc);
  }
  int status = 0;
  waitpid(pid, &status, 0);
  bool ok = WIFEXITED(status) && WEXITSTATUS(status) == 0;
  t->injected++;
  if (ok) t->reported++, t->recovered++; /* recovered: the process stays usable on the CPU */
  else {
    t->lost++;
    printf("FAIL %s: the child exited with status %d\n", entry, status);
  }
}

int main(int argc, char **argv) {
  verbose = argc > 1 && !strcmp(argv[1], "-v");
  setvbuf(stdout, NULL, _IOLBF, 0);
  load_fake();
  tally t = {0};
  init_case("cuInit", "CUDA_ERROR_NOT_INITIALIZED", &t);
  init_case("cuDeviceGetCount", "CUDA_ERROR_UNKNOWN", &t);
  unsigned long long steps[NENTRIES], all[NENTRIES];
  count_calls(steps, all);
  for (int e = 0; e < NENTRIES; e++) {
    const char *entry = k_entries[e];
    const char *code = !strcmp(entry, "cuMemAlloc_v2")        ? "CUDA_ERROR_OUT_OF_MEMORY"
                       : !strcmp(entry, "cuModuleLoadDataEx") ? "CUDA_ERROR_INVALID_PTX"
                                                              : "CUDA_ERROR_INVALID_VALUE";
    bool cleanup = cleanup_resource(entry) != NULL;
    unsigned long long n = cleanup ? all[e] : steps[e];
    if (n == 0) {
      printf("FAIL %s: the scenario never calls it\n", entry);
      t.lost++;
      continue;
    }
    run_case(entry, 1, code, &t);
    if (n > 1) run_case(entry, (long)n, code, &t);
  }
  /* sticky errors: a kernel that faulted, seen at its launch and at the next synchronisation */
  run_case("cuLaunchKernel", 1, "CUDA_ERROR_ILLEGAL_ADDRESS", &t);
  run_case("cuCtxSynchronize", 2, "CUDA_ERROR_ILLEGAL_ADDRESS", &t);
  printf("faults: %d injected, %d reported, %d recovered, %d leaked, %d lost\n", t.injected, t.reported, t.recovered,
         t.leaked, t.lost);
  printf("cleanup faults: %d injected, %d tolerated, %d leaked\n", t.c_injected, t.c_tolerated, t.c_leaked);
  bool ok = t.injected == t.reported && t.reported == t.recovered && !t.leaked && !t.lost &&
            t.c_injected == t.c_tolerated && !t.c_leaked;
  return ok ? 0 : 1;
}
