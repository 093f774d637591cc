/* GPU test of T.alloc_global (issue 14; docs/simt-ir.md "Kernel workspaces"):
 * the three kernels of test/Interp/ops/alloc_global.py (TileLang's copy
 * through a global buffer, T.atomic_add into one, element stores and loads)
 * run once on the CPU SIMT executor (TL_EXEC_CPU) and CALLS times on the GPU
 * through one compiled kernel on the legacy default stream, so the GPU calls
 * after the first reuse the kernel's workspace; every GPU call's output must
 * equal the executor's bit for bit and the closed forms of the kernel file
 * (copy: B == A; atomic: every Out[b] == 128 * 129 / 2 = 8256, which a
 * workspace not zeroed again before each launch would grow call by call;
 * elements: Out[i] == 3 i + 1).  Prints `ok KERNEL: N calls ...` per kernel,
 * then PASS.  The kernel file is $TL_OPS_DIR/alloc_global.py (default
 * test/Interp/ops, as test_lang_ops).  Exit 0 pass, 1 fail, 77 no
 * driver/GPU. */
#include "gpu_util.h"

#define CALLS 4

/* The closed form of element i of the kernel's output (raw bits), or -1
 * when it is B == A (the copy: compared with the input). */
static int64_t expected(const char *kernel, size_t i) {
  if (!strcmp(kernel, "alloc_global_atomic")) return 8256;
  if (!strcmp(kernel, "alloc_global_elems")) return 3 * (int64_t)i + 1;
  return -1;
}

static void run_kernel(tl_context *ctx, const char *path, const char *kernel) {
  tl_compile_options o = {0};
  o.kernel = kernel;
  tl_kernel *k = NULL;
  if (tl_kernel_compile_file(ctx, path, NULL, 0, &o, &k) != TL_OK) {
    CHECK(0, "compiling %s of %s: %s", kernel, path, tl_context_last_error(ctx));
    return;
  }
  bool copy = !strcmp(kernel, "alloc_global_copy");
  int64_t n_in = 1024;
  uint16_t *a = malloc(sizeof(uint16_t) * (size_t)n_in);
  for (int64_t i = 0; i < n_in; i++) dt_store(DT_F16, a, (size_t)i, rng_uniform()); /* [-1, 1) */
  DLTensor A = {a, {kDLCPU, 0}, 1, {kDLFloat, 16, 1}, &n_in, NULL, 0};
  tl_arg args[1];
  size_t nargs = copy ? 1 : 0;
  if (copy) args[0] = tl_arg_tensor(&A);
  DLManagedTensor *cpu_out[1] = {NULL}, *dev_a = NULL;
  tl_status s = tl_kernel_call_on(ctx, k, TL_EXEC_CPU, args, nargs, NULL, cpu_out);
  CHECK(s == TL_OK, "%s: CPU run: %s", kernel, tl_context_last_error(ctx));
  DLDevice cuda = {kDLCUDA, 0}, cpu = {kDLCPU, 0};
  if (s == TL_OK && copy) {
    s = tl_tensor_alloc(ctx, cuda, 1, &n_in, A.dtype, &dev_a);
    if (s == TL_OK) s = tl_tensor_copy(ctx, &dev_a->dl_tensor, &A);
    CHECK(s == TL_OK, "%s: device input: %s", kernel, tl_context_last_error(ctx));
    args[0] = tl_arg_tensor(&dev_a->dl_tensor);
  }
  int calls = 0;
  size_t bad_total = 0, n = 0;
  for (int c = 0; s == TL_OK && c < CALLS; c++) {
    DLManagedTensor *gpu_out[1] = {NULL}, *host = NULL;
    s = tl_kernel_call_on(ctx, k, TL_EXEC_CUDA, args, nargs, NULL, gpu_out);
    CHECK(s == TL_OK, "%s: GPU call %d: %s", kernel, c, tl_context_last_error(ctx));
    if (s == TL_OK) {
      DLTensor *g = &gpu_out[0]->dl_tensor;
      s = tl_tensor_alloc(ctx, cpu, g->ndim, g->shape, g->dtype, &host);
      if (s == TL_OK) s = tl_tensor_copy(ctx, &host->dl_tensor, g); /* synchronous: after the launch */
      CHECK(s == TL_OK, "%s: copy back: %s", kernel, tl_context_last_error(ctx));
    }
    if (s == TL_OK && cpu_out[0]) {
      DLTensor *h = &host->dl_tensor, *e = &cpu_out[0]->dl_tensor;
      n = 1;
      for (int d = 0; d < h->ndim; d++) n *= (size_t)h->shape[d];
      size_t eb = h->dtype.bits / 8, bad = 0, first = 0;
      for (size_t i = 0; i < n; i++) {
        const uint8_t *gp = (const uint8_t *)h->data + i * eb, *cp = (const uint8_t *)e->data + i * eb;
        int64_t want = expected(kernel, i);
        bool ok = !memcmp(gp, cp, eb);
        if (want < 0) ok = ok && !memcmp(gp, &a[i], eb);
        else ok = ok && ((const int32_t *)h->data)[i] == (int32_t)want;
        if (!ok && bad++ == 0) first = i;
      }
      CHECK(bad == 0,
            "%s: GPU call %d: %zu of %zu elements differ from the CPU executor or the closed form "
            "(first at %zu)",
            kernel, c, bad, n, first);
      bad_total += bad;
      calls++;
    }
    if (host) host->deleter(host);
    if (gpu_out[0]) gpu_out[0]->deleter(gpu_out[0]);
  }
  if (calls == CALLS && bad_total == 0)
    printf("ok %s: %d calls, GPU == CPU SIMT executor == closed form bit for bit (%zu elements)\n", kernel, calls, n);
  if (dev_a) dev_a->deleter(dev_a);
  if (cpu_out[0]) cpu_out[0]->deleter(cpu_out[0]);
  free(a);
  tl_kernel_destroy(k);
}

int main(void) {
  tl_context *ctx = NULL;
  if (tl_context_create(&ctx) != TL_OK) return 1;
  gpu_init(ctx); /* exit 77 without a GPU */
  char path[4096];
  snprintf(path, sizeof path, "%s/alloc_global.py", ops_dir());
  static const char *const kernels[] = {"alloc_global_copy", "alloc_global_atomic", "alloc_global_elems"};
  for (size_t i = 0; i < sizeof kernels / sizeof kernels[0]; i++) run_kernel(ctx, path, kernels[i]);
  tl_context_destroy(ctx);
  printf("%s\n", g_failures ? "FAIL" : "PASS");
  return g_failures ? 1 : 0;
}
