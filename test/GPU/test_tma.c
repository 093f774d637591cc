/* GPU test of the TMA tensor copies (docs/simt-ir.md "TMA tensor copies";
 * issue 12, part T): hand-written SIMT kernels in test/GPU/kernels run on the
 * GPU and on the CPU SIMT executor, outputs compared bit for bit.
 *  - tma_boxes.py: three T.ptx_tma_load per block onto one mbarrier (f16
 *    [100, 200] box 32x64 swizzle 128 over the tensor's edges with negative
 *    and past-the-end coordinates; bf16 [3, 50, 40] box 2x16x32 swizzle 64;
 *    f16 box 8x24 without swizzle), the raw shared images (physical bytes)
 *    copied to three outputs: the GPU's TMA images (swizzle, zero fill)
 *    against the executor's, which test_tma (unit) checks against an
 *    independent formula.
 *  - tma_store.py: O = A through a swizzle-128 load and T.ptx_tma_store of
 *    each 32x64 box (out-of-bounds parts dropped); O's map is over an
 *    out_idx output; O is also compared with A.
 * Each kernel is compiled for the device's target (sm_90 or later, else the
 * test skips) and run RUNS times with fresh random finite inputs in the same
 * tensors (the runtime's map cache serves calls 2..RUNS) and outputs filled
 * with 0xFF bytes first (TL_COMPILE_POISON_OUTPUTS).  Prints `ok FILE: RUNS
 * runs, 0 differing elements` per kernel, then PASS.  Kernel files from
 * $TL_GPU_KERNELS (default test/GPU/kernels).  Exit 0 pass, 1 fail, 77 no
 * driver / GPU or a GPU older than sm_90. */
#include "gpu_util.h"

#define RUNS 5
#define MAX_IN 2
#define MAX_OUT 3

/* A random finite 16-bit float encoding (f16: exponent field < 31; bf16:
 * exponent field < 255), never a NaN, so a copy through the CPU executor's
 * value model keeps its bits. */
static uint16_t finite16(bool bf16) {
  uint16_t v = (uint16_t)((rng_uniform() + 1.0) * 32768.0);
  if (bf16) return (v & 0x7F80) == 0x7F80 ? (uint16_t)(v & 0xBFFF) : v;
  return (v & 0x7C00) == 0x7C00 ? (uint16_t)(v & 0xBFFF) : v;
}

static size_t dl_elems(const DLTensor *t) {
  size_t n = 1;
  for (int d = 0; d < t->ndim; d++) n *= (size_t)t->shape[d];
  return n;
}

typedef struct kcase {
  const char *file;
  int nin, nout;
  int out_idx[MAX_OUT];
  int ndim[MAX_IN];
  int64_t shape[MAX_IN][3];
  bool bf16[MAX_IN];
  bool out_is_input0; /* output 0 must equal input 0 (tma_store.py) */
} kcase;

static void run_case(tl_context *ctx, const kcase *c) {
  char path[1024];
  const char *dir = getenv("TL_GPU_KERNELS");
  snprintf(path, sizeof path, "%s/%s", dir && *dir ? dir : "test/GPU/kernels", c->file);
  tl_compile_options o = {0};
  o.out_idx_mode = TL_OUT_IDX_LIST;
  o.out_idx = c->out_idx;
  o.n_out_idx = (size_t)c->nout;
  o.flags = TL_COMPILE_POISON_OUTPUTS;
  tl_kernel *k = NULL;
  if (tl_kernel_compile_file(ctx, path, NULL, 0, &o, &k) != TL_OK) {
    CHECK(0, "compiling %s: %s", path, tl_context_last_error(ctx));
    return;
  }
  DLDevice cuda = {kDLCUDA, 0}, cpu = {kDLCPU, 0};
  DLManagedTensor *hin[MAX_IN] = {0}, *din[MAX_IN] = {0};
  tl_status s = TL_OK;
  for (int i = 0; i < c->nin && s == TL_OK; i++) {
    DLDataType dt = {c->bf16[i] ? kDLBfloat : kDLFloat, 16, 1};
    s = tl_tensor_alloc(ctx, cpu, c->ndim[i], c->shape[i], dt, &hin[i]);
    if (s == TL_OK) s = tl_tensor_alloc(ctx, cuda, c->ndim[i], c->shape[i], dt, &din[i]);
  }
  CHECK(s == TL_OK, "%s: allocating inputs: %s", c->file, tl_context_last_error(ctx));
  long bad = 0, compared = 0;
  int runs = 0;
  for (int run = 0; run < RUNS && s == TL_OK; run++) {
    tl_arg hargs[MAX_IN], dargs[MAX_IN];
    for (int i = 0; i < c->nin && s == TL_OK; i++) {
      uint16_t *h = hin[i]->dl_tensor.data;
      for (size_t j = 0; j < dl_elems(&hin[i]->dl_tensor); j++) h[j] = finite16(c->bf16[i]);
      s = tl_tensor_copy(ctx, &din[i]->dl_tensor, &hin[i]->dl_tensor);
      hargs[i] = tl_arg_tensor(&hin[i]->dl_tensor);
      dargs[i] = tl_arg_tensor(&din[i]->dl_tensor);
    }
    DLManagedTensor *cout[MAX_OUT] = {0}, *gout[MAX_OUT] = {0}, *back[MAX_OUT] = {0};
    if (s == TL_OK) s = tl_kernel_call_on(ctx, k, TL_EXEC_CPU, hargs, (size_t)c->nin, NULL, cout);
    CHECK(s == TL_OK, "%s run %d: CPU executor: %s", c->file, run, tl_context_last_error(ctx));
    if (s == TL_OK) s = tl_kernel_call(ctx, k, dargs, (size_t)c->nin, NULL, gout);
    CHECK(s == TL_OK, "%s run %d: GPU: %s", c->file, run, tl_context_last_error(ctx));
    for (int j = 0; j < c->nout && s == TL_OK; j++) {
      DLTensor *g = &gout[j]->dl_tensor;
      s = tl_tensor_alloc(ctx, cpu, g->ndim, g->shape, g->dtype, &back[j]);
      if (s == TL_OK) s = tl_tensor_copy(ctx, &back[j]->dl_tensor, g);
      CHECK(s == TL_OK, "%s run %d: copying output %d back: %s", c->file, run, j, tl_context_last_error(ctx));
      if (s != TL_OK) break;
      const uint16_t *gb = back[j]->dl_tensor.data, *cb = cout[j]->dl_tensor.data;
      size_t n = dl_elems(g);
      for (size_t e = 0; e < n; e++) {
        compared++;
        if (gb[e] != cb[e] && bad++ < 5)
          printf("  %s run %d output %d element %zu: GPU 0x%04x, CPU executor 0x%04x\n", c->file, run, j, e, gb[e],
                 cb[e]);
      }
      if (j == 0 && c->out_is_input0) {
        const uint16_t *a = hin[0]->dl_tensor.data;
        for (size_t e = 0; e < n; e++)
          if (gb[e] != a[e] && bad++ < 5)
            printf("  %s run %d: O[%zu] = 0x%04x, A = 0x%04x\n", c->file, run, e, gb[e], a[e]);
      }
    }
    for (int j = 0; j < MAX_OUT; j++) {
      if (cout[j]) cout[j]->deleter(cout[j]);
      if (gout[j]) gout[j]->deleter(gout[j]);
      if (back[j]) back[j]->deleter(back[j]);
    }
    if (s == TL_OK) runs++;
  }
  CHECK(bad == 0, "%s: %ld of %ld compared elements differ", c->file, bad, compared);
  printf("%s %s: %d runs, %ld differing elements of %ld\n", bad || runs < RUNS ? "FAIL" : "ok", c->file, runs, bad,
         compared);
  for (int i = 0; i < MAX_IN; i++) {
    if (hin[i]) hin[i]->deleter(hin[i]);
    if (din[i]) din[i]->deleter(din[i]);
  }
  tl_kernel_destroy(k);
}

int main(void) {
  tl_context *ctx = NULL;
  if (tl_context_create(&ctx) != TL_OK) return 1;
  gpu_init(ctx); /* exits 77 without a driver or GPU */
  const char *target = tl_device_default_target();
  if (strcmp(target, "sm_90") < 0) {
    printf("SKIP: TMA needs sm_90; this device's target is %s\n", target);
    tl_context_destroy(ctx);
    return GPU_SKIP;
  }
  rng_seed(12);
  printf("test_tma (target %s)\n", target);
  static const kcase cases[] = {
      {"tma_boxes.py", 2, 3, {2, 3, 4}, {2, 3}, {{100, 200}, {3, 50, 40}}, {false, true}, false},
      {"tma_store.py", 1, 1, {1}, {2}, {{100, 200}}, {false}, true},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) run_case(ctx, &cases[i]);
  tl_context_destroy(ctx);
  return finish("test_tma");
}
