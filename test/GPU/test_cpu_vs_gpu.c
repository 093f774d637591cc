/* GPU test: the GPU and the CPU SIMT executor compute the same bits, through
 * the public API tl-run uses (tl_tensor_alloc, tl_tensor_copy,
 * tl_kernel_call_on, tl_kernel_time).
 *
 * For each case the kernel is compiled once, run on the CPU SIMT executor
 * (host tensors) and on the GPU (device tensors made with tl_tensor_alloc and
 * filled with tl_tensor_copy), and the outputs are compared bit for bit:
 * elementwise add (one float32 rounding per element) at non-multiple sizes,
 * T.fma with a broadcast row, a multiply followed by a conversion to f16 and
 * bf16, conversions f32 -> f16 / bf16 (each one correctly rounded operation),
 * and GEMM with integer-valued float16 inputs in [-4, 4] (every product and
 * partial sum is exact in the float32 accumulator; the final float16 rounding
 * is the same conversion on both).  tl_kernel_time must return positive
 * times.  Kernel files come from $TL_KERNEL_DIR (default ./examples).
 * Exit 0 pass, 1 fail, 77 no driver/GPU. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gpu_util.h"

static char path_buf[4096];
static const char *kernel_path(const char *name) {
  const char *dir = getenv("TL_KERNEL_DIR");
  snprintf(path_buf, sizeof path_buf, "%s/%s", dir && *dir ? dir : "examples", name);
  return path_buf;
}

static uint64_t rng = 12345;
static uint64_t next_u64(void) {
  uint64_t z = (rng += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

/* Runs kernel k on both executors with the given host inputs (ninputs
 * tensors, all parameters before the single out_idx output) and compares the
 * output bytes. */
static void run_both(tl_context *ctx, tl_kernel *k, DLTensor *inputs, int ninputs, const char *what) {
  tl_arg args[8];
  DLManagedTensor *dev[8] = {0};
  for (int i = 0; i < ninputs; i++) args[i] = tl_arg_tensor(&inputs[i]);
  DLManagedTensor *cpu_out[1] = {NULL}, *gpu_out[1] = {NULL}, *host[1] = {NULL};
  tl_status s = tl_kernel_call_on(ctx, k, TL_EXEC_CPU, args, (size_t)ninputs, NULL, cpu_out);
  CHECK(s == TL_OK, "%s: CPU run: %s", what, tl_context_last_error(ctx));
  if (s == TL_OK) s = gpu_call_host(ctx, k, inputs, ninputs, args, dev, gpu_out, &host[0], what);
  if (s == TL_OK && cpu_out[0]) {
    size_t n = 1;
    for (int d = 0; d < host[0]->dl_tensor.ndim; d++) n *= (size_t)host[0]->dl_tensor.shape[d];
    size_t eb = host[0]->dl_tensor.dtype.bits / 8, bad = 0, first = 0;
    const uint8_t *a = host[0]->dl_tensor.data, *b = cpu_out[0]->dl_tensor.data;
    for (size_t i = 0; i < n; i++)
      if (memcmp(a + i * eb, b + i * eb, eb) != 0 && bad++ == 0) first = i;
    CHECK(bad == 0, "%s: %zu of %zu elements differ between GPU and CPU (first at %zu)", what, bad, n, first);
    if (bad == 0) printf("ok %s: GPU == CPU SIMT executor bit for bit (%zu elements)\n", what, n);
  }
  /* timing */
  if (s == TL_OK) {
    float ms[20];
    DLManagedTensor *t_out[1] = {NULL};
    s = tl_kernel_time(ctx, k, args, (size_t)ninputs, NULL, 3, 20, ms, t_out);
    CHECK(s == TL_OK, "%s: tl_kernel_time: %s", what, tl_context_last_error(ctx));
    for (int i = 0; s == TL_OK && i < 20; i++) CHECK(ms[i] > 0, "%s: time %d = %g", what, i, ms[i]);
    if (s == TL_OK) printf("ok %s: tl_kernel_time first=%.4f ms\n", what, ms[0]);
    if (t_out[0]) t_out[0]->deleter(t_out[0]);
  }
  gpu_release(dev, ninputs), gpu_release(cpu_out, 1), gpu_release(gpu_out, 1), gpu_release(host, 1);
}

static uint16_t small_int_f16(int v) { /* exact float16 encodings of -4..4 */
  if (v == 0) return 0;
  uint16_t sign = v < 0 ? 0x8000 : 0;
  int a = v < 0 ? -v : v, e = 0;
  while ((a >> e) > 1) e++;
  uint16_t mant = (uint16_t)(((a << 10) >> e) & 0x3ff);
  return sign | (uint16_t)((e + 15) << 10) | mant;
}

int main(void) {
  tl_context *ctx = NULL;
  if (tl_context_create(&ctx) != TL_OK) return 1;
  if (tl_device_check(ctx) != TL_OK) {
    printf("SKIP: %s\n", tl_context_last_error(ctx));
    tl_context_destroy(ctx);
    return 77;
  }
  /* elementwise add at sizes that are not multiples of the tile */
  {
    tl_define d[2] = {{"M", "1000"}, {"N", "1030"}};
    tl_kernel *k = NULL;
    tl_status s = tl_kernel_compile_file(ctx, kernel_path("elementwise_add.py"), d, 2, NULL, &k);
    CHECK(s == TL_OK, "compile elementwise_add: %s", tl_context_last_error(ctx));
    if (s == TL_OK) {
      int64_t shape[2] = {1000, 1030};
      size_t n = 1000 * 1030;
      float *a = malloc(n * 4), *b = malloc(n * 4);
      for (size_t i = 0; i < n; i++) {
        a[i] = (float)((double)(next_u64() >> 11) * 0x1p-53 * 2 - 1);
        b[i] = (float)((double)(next_u64() >> 11) * 0x1p-53 * 2 - 1);
      }
      DLTensor in[2] = {{a, {kDLCPU, 0}, 2, {kDLFloat, 32, 1}, shape, NULL, 0},
                        {b, {kDLCPU, 0}, 2, {kDLFloat, 32, 1}, shape, NULL, 0}};
      run_both(ctx, k, in, 2, "elementwise_add 1000x1030");
      free(a);
      free(b);
    }
    tl_kernel_destroy(k);
  }
  /* fma with a broadcast row (T.fma: one rounding on both), a multiply with a
   * conversion to f16 and bf16, and conversions f32 -> bf16 / f16, on random
   * floats: every one of these is a single correctly rounded operation, so
   * the bits must agree. */
  {
    const int M = 1000, N = 1030;
    size_t n = (size_t)M * N;
    int64_t shape[2] = {M, N}, wshape[1] = {N};
    float *x = malloc(n * 4), *z = malloc(n * 4), *w = malloc((size_t)N * 4);
    for (size_t i = 0; i < n; i++) {
      x[i] = (float)((double)(next_u64() >> 11) * 0x1p-53 * 2 - 1);
      z[i] = (float)((double)(next_u64() >> 11) * 0x1p-53 * 2 - 1);
    }
    for (int i = 0; i < N; i++) w[i] = (float)((double)(next_u64() >> 11) * 0x1p-53 * 4 - 2);
    DLTensor X = {x, {kDLCPU, 0}, 2, {kDLFloat, 32, 1}, shape, NULL, 0};
    DLTensor W = {w, {kDLCPU, 0}, 1, {kDLFloat, 32, 1}, wshape, NULL, 0};
    DLTensor Z = {z, {kDLCPU, 0}, 2, {kDLFloat, 32, 1}, shape, NULL, 0};
    struct {
      const char *file, *what;
      tl_define defs[4];
      int ndefs, ninputs;
      DLTensor in[3];
    } cases[] = {
        {"elementwise_fma_row.py", "fma row-broadcast f32 1000x1030", {{"M", "1000"}, {"N", "1030"}}, 2, 3, {X, W, Z}},
        {"../test/GPU/kernels/mul_cast.py", "mul f32 -> cast f16 1000x1030", {{"out_dtype", "float16"}}, 1, 2, {X, Z}},
        {"../test/GPU/kernels/mul_cast.py",
         "mul f32 -> cast bf16 1000x1030",
         {{"out_dtype", "bfloat16"}},
         1,
         2,
         {X, Z}},
        {"cast_copy.py",
         "convert f32 -> bf16 1000x1030",
         {{"M", "1000"}, {"N", "1030"}, {"out_dtype", "bfloat16"}},
         3,
         1,
         {X}},
        {"cast_copy.py",
         "convert f32 -> f16 1000x1030",
         {{"M", "1000"}, {"N", "1030"}, {"out_dtype", "float16"}},
         3,
         1,
         {X}},
    };
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
      tl_kernel *k = NULL;
      tl_status s =
          tl_kernel_compile_file(ctx, kernel_path(cases[c].file), cases[c].defs, (size_t)cases[c].ndefs, NULL, &k);
      CHECK(s == TL_OK, "compile %s: %s", cases[c].file, tl_context_last_error(ctx));
      if (s == TL_OK) run_both(ctx, k, cases[c].in, cases[c].ninputs, cases[c].what);
      tl_kernel_destroy(k);
    }
    free(x);
    free(z);
    free(w);
  }
  /* GEMM with integer-valued inputs */
  {
    tl_define d[3] = {{"M", "256"}, {"N", "256"}, {"K", "256"}};
    tl_kernel *k = NULL;
    tl_status s = tl_kernel_compile_file(ctx, kernel_path("gemm.py"), d, 3, NULL, &k);
    CHECK(s == TL_OK, "compile gemm: %s", tl_context_last_error(ctx));
    if (s == TL_OK) {
      int64_t shape[2] = {256, 256};
      uint16_t *a = malloc(256 * 256 * 2), *b = malloc(256 * 256 * 2);
      for (int i = 0; i < 256 * 256; i++) {
        a[i] = small_int_f16((int)(next_u64() % 9) - 4);
        b[i] = small_int_f16((int)(next_u64() % 9) - 4);
      }
      DLTensor in[2] = {{a, {kDLCPU, 0}, 2, {kDLFloat, 16, 1}, shape, NULL, 0},
                        {b, {kDLCPU, 0}, 2, {kDLFloat, 16, 1}, shape, NULL, 0}};
      run_both(ctx, k, in, 2, "gemm 256x256x256 f16 (integer inputs)");
      free(a);
      free(b);
    }
    tl_kernel_destroy(k);
  }
  tl_context_destroy(ctx);
  printf("%s (%d failure%s)\n", g_failures ? "FAIL" : "PASS", g_failures, g_failures == 1 ? "" : "s");
  return g_failures ? 1 : 0;
}
