/* Unit tests of the CPU device of the C API (lib/Runtime/cpu.c, tensor.c):
 * tl_kernel_call with host tensors runs the SIMT executor, tl_kernel_call_on
 * picks the executor, the argument checks name "cpu" as the device, outputs
 * are malloc'd kDLCPU tensors (poisoned on request), executor errors carry
 * the kernel's source location, tl_tensor_alloc/copy on the host, and
 * tl_kernel_gemm_flops, the progress callback.  Results are compared with values computed here
 * directly in C (exactly where the kernel does one rounding per element).
 * No GPU: TL_CUDA_DRIVER names a missing library. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "tilelang/tilelang.h"

static tl_context *ctx;
static void setup(void) {
  setenv("TL_CUDA_DRIVER", "/nonexistent/libcuda.so.1", 1);
  cr_assert_eq(tl_context_create(&ctx), TL_OK);
}
static void teardown(void) { tl_context_destroy(ctx); }

TestSuite(cpu_device, .init = setup, .fini = teardown);

/* Compiles an example up to the SIMT IR (no LLVM needed). */
static tl_kernel *compile(const char *path, const tl_define *defs, size_t ndefs, unsigned flags, const int *out_idx,
                          size_t nout) {
  tl_compile_options co = {0};
  co.stop_after = TL_STAGE_SIMT;
  co.flags = flags;
  if (out_idx) {
    co.out_idx_mode = TL_OUT_IDX_LIST;
    co.out_idx = out_idx;
    co.n_out_idx = nout;
  }
  tl_kernel *k = NULL;
  tl_status s = tl_kernel_compile_file(ctx, path, defs, ndefs, &co, &k);
  cr_assert_eq(s, TL_OK, "%s: %s", path, tl_context_last_error(ctx));
  return k;
}

typedef struct host_t {
  DLTensor t;
  int64_t shape[2];
  float *data;
} host_t;

static void host_f32(host_t *h, int ndim, int64_t d0, int64_t d1, unsigned seed) {
  memset(h, 0, sizeof *h);
  h->shape[0] = d0;
  h->shape[1] = d1;
  size_t n = (size_t)d0 * (size_t)(ndim == 2 ? d1 : 1);
  h->data = aligned_alloc(64, (n * 4 + 63) / 64 * 64);
  cr_assert_not_null(h->data);
  for (size_t i = 0; i < n; i++) /* exact binary fractions in [-1, 1) */
    h->data[i] = (float)((int)((i * 2654435761u + seed) % 256) - 128) / 128.0f;
  h->t.data = h->data;
  h->t.device.device_type = kDLCPU;
  h->t.ndim = ndim;
  h->t.dtype.code = kDLFloat;
  h->t.dtype.bits = 32;
  h->t.dtype.lanes = 1;
  h->t.shape = h->shape;
}

Test(cpu_device, elementwise_add_auto_runs_on_cpu) {
  tl_define d[2] = {{"M", "37"}, {"N", "130"}}; /* partial tiles in both dims */
  tl_kernel *k = compile("examples/elementwise_add.py", d, 2, TL_COMPILE_POISON_OUTPUTS, NULL, 0);
  host_t a, b;
  host_f32(&a, 2, 37, 130, 1);
  host_f32(&b, 2, 37, 130, 7);
  tl_arg args[2] = {tl_arg_tensor(&a.t), tl_arg_tensor(&b.t)};
  DLManagedTensor *out[1] = {NULL};
  cr_assert_eq(tl_kernel_call(ctx, k, args, 2, NULL, out), TL_OK, "%s", tl_context_last_error(ctx));
  cr_assert_not_null(out[0]);
  DLTensor *c = &out[0]->dl_tensor;
  cr_assert_eq(c->device.device_type, kDLCPU);
  cr_assert_eq(c->ndim, 2);
  cr_assert_eq(c->shape[0], 37);
  cr_assert_eq(c->shape[1], 130);
  cr_assert_eq(c->dtype.code, kDLFloat);
  cr_assert_eq(c->dtype.bits, 32);
  const float *cv = c->data;
  for (size_t i = 0; i < 37 * 130; i++)
    cr_assert_eq(cv[i], a.data[i] + b.data[i], "element %zu: %g != %g", i, cv[i], a.data[i] + b.data[i]);
  out[0]->deleter(out[0]);

  /* the reference evaluator through the same API gives the same values */
  cr_assert_eq(tl_kernel_call_on(ctx, k, TL_EXEC_REFERENCE, args, 2, NULL, out), TL_OK, "%s",
               tl_context_last_error(ctx));
  cv = out[0]->dl_tensor.data;
  for (size_t i = 0; i < 37 * 130; i++) cr_assert_eq(cv[i], a.data[i] + b.data[i]);
  out[0]->deleter(out[0]);
  free(a.data);
  free(b.data);
  tl_kernel_destroy(k);
}

/* tl_context_set_progress: the CPU SIMT executor reports each block, in
 * order, with the grid's block count; the reference evaluator does not. */
typedef struct progress_log {
  int64_t calls, last, total;
  bool in_order;
} progress_log;
static void log_progress(void *user, int64_t done, int64_t total) {
  progress_log *l = user;
  l->in_order &= done == l->last + 1 && (l->total == 0 || total == l->total);
  l->calls++;
  l->last = done;
  l->total = total;
}

Test(cpu_device, progress_callback_counts_blocks) {
  tl_define d[2] = {{"M", "70"}, {"N", "300"}}; /* blocks of 32 x 128: a grid of 3 x 3 */
  tl_kernel *k = compile("examples/elementwise_add.py", d, 2, 0, NULL, 0);
  host_t a, b;
  host_f32(&a, 2, 70, 300, 1);
  host_f32(&b, 2, 70, 300, 2);
  tl_arg args[2] = {tl_arg_tensor(&a.t), tl_arg_tensor(&b.t)};
  DLManagedTensor *out[1] = {NULL};
  progress_log log = {0, 0, 0, true};
  cr_assert_eq(tl_context_set_progress(ctx, log_progress, &log), TL_OK);
  cr_assert_eq(tl_kernel_call_on(ctx, k, TL_EXEC_CPU, args, 2, NULL, out), TL_OK, "%s", tl_context_last_error(ctx));
  out[0]->deleter(out[0]);
  cr_assert(log.in_order);
  cr_assert_eq(log.calls, 9);
  cr_assert_eq(log.last, 9);
  cr_assert_eq(log.total, 9);
  progress_log ref = {0, 0, 0, true};
  cr_assert_eq(tl_context_set_progress(ctx, log_progress, &ref), TL_OK);
  cr_assert_eq(tl_kernel_call_on(ctx, k, TL_EXEC_REFERENCE, args, 2, NULL, out), TL_OK);
  out[0]->deleter(out[0]);
  cr_assert_eq(ref.calls, 0);
  cr_assert_eq(tl_context_set_progress(ctx, NULL, NULL), TL_OK); /* removed: no more calls */
  cr_assert_eq(tl_kernel_call_on(ctx, k, TL_EXEC_CPU, args, 2, NULL, out), TL_OK);
  out[0]->deleter(out[0]);
  cr_assert_eq(log.calls, 9);
  cr_assert_eq(tl_context_set_progress(NULL, log_progress, &log), TL_ERR_INVALID_ARGUMENT);
  free(a.data);
  free(b.data);
  tl_kernel_destroy(k);
}

Test(cpu_device, dynamic_dim_solved_from_host_tensor) {
  tl_kernel *k = compile("examples/elementwise_add_1d.py", NULL, 0, 0, NULL, 0);
  int64_t sizes[3] = {1, 17, 2049};
  for (int r = 0; r < 3; r++) {
    host_t a, b;
    host_f32(&a, 1, sizes[r], 1, 3);
    host_f32(&b, 1, sizes[r], 1, 5);
    tl_arg args[2] = {tl_arg_tensor(&a.t), tl_arg_tensor(&b.t)};
    DLManagedTensor *out[1] = {NULL};
    cr_assert_eq(tl_kernel_call_on(ctx, k, TL_EXEC_CPU, args, 2, NULL, out), TL_OK, "%s", tl_context_last_error(ctx));
    cr_assert_eq(out[0]->dl_tensor.shape[0], sizes[r]);
    const float *cv = out[0]->dl_tensor.data;
    for (int64_t i = 0; i < sizes[r]; i++) cr_assert_eq(cv[i], a.data[i] + b.data[i]);
    out[0]->deleter(out[0]);
    free(a.data);
    free(b.data);
  }
  tl_kernel_destroy(k);
}

Test(cpu_device, scalar_argument_and_out_idx_none) {
  tl_define d[1] = {{"N", "1000"}};
  tl_kernel *k = compile("examples/saxpy.py", d, 1, 0, NULL, 0);
  host_t x, y;
  host_f32(&x, 1, 1000, 1, 11);
  host_f32(&y, 1, 1000, 1, 13);
  float *y0 = malloc(1000 * sizeof(float));
  memcpy(y0, y.data, 1000 * sizeof(float));
  tl_arg args[3] = {tl_arg_tensor(&x.t), tl_arg_tensor(&y.t), tl_arg_float(2.5)};
  cr_assert_eq(tl_kernel_call(ctx, k, args, 3, NULL, NULL), TL_OK, "%s", tl_context_last_error(ctx));
  for (int i = 0; i < 1000; i++) {
    /* alpha * x is exact here (x has 8 significant bits), so one rounding */
    float want = 2.5f * x.data[i] + y0[i];
    cr_assert_eq(y.data[i], want, "Y[%d] = %g, expected %g", i, y.data[i], want);
  }
  free(y0);
  free(x.data);
  free(y.data);
  tl_kernel_destroy(k);
}

Test(cpu_device, poisoned_outputs_show_unwritten_elements) {
  /* out_idx = [1, 2]: B becomes an output the kernel never writes */
  tl_define d[2] = {{"M", "32"}, {"N", "128"}};
  int oi[2] = {1, 2};
  tl_kernel *k = compile("examples/elementwise_add.py", d, 2, TL_COMPILE_POISON_OUTPUTS, oi, 2);
  host_t a;
  host_f32(&a, 2, 32, 128, 1);
  tl_arg args[1] = {tl_arg_tensor(&a.t)};
  DLManagedTensor *out[2] = {NULL, NULL};
  cr_assert_eq(tl_kernel_call(ctx, k, args, 1, NULL, out), TL_OK, "%s", tl_context_last_error(ctx));
  const uint32_t *bv = out[0]->dl_tensor.data;
  const float *cv = out[1]->dl_tensor.data;
  for (int i = 0; i < 32 * 128; i++) {
    cr_assert_eq(bv[i], 0xFFFFFFFFu);
    cr_assert(isnan(cv[i])); /* A + NaN */
  }
  out[0]->deleter(out[0]);
  out[1]->deleter(out[1]);
  free(a.data);
  tl_kernel_destroy(k);
}

Test(cpu_device, argument_checks_name_the_cpu_device) {
  tl_define d[2] = {{"M", "32"}, {"N", "128"}};
  tl_kernel *k = compile("examples/elementwise_add.py", d, 2, 0, NULL, 0);
  host_t a, b;
  host_f32(&a, 2, 32, 128, 1);
  host_f32(&b, 2, 32, 128, 2);
  tl_arg args[2] = {tl_arg_tensor(&a.t), tl_arg_tensor(&b.t)};
  DLManagedTensor *out[1] = {NULL};

  /* explicit CPU with a CUDA tensor */
  b.t.device.device_type = kDLCUDA;
  cr_assert_eq(tl_kernel_call_on(ctx, k, TL_EXEC_CPU, args, 2, NULL, out), TL_ERR_INVALID_ARGUMENT);
  cr_assert(strstr(tl_context_last_error(ctx), "argument 'B' (#1): device: expected cpu, got cuda"), "%s",
            tl_context_last_error(ctx));
  cr_assert_null(out[0]);
  /* mixed host and CUDA tensors: auto picks CUDA and reports the host one */
  cr_assert_eq(tl_kernel_call(ctx, k, args, 2, NULL, out), TL_ERR_INVALID_ARGUMENT);
  cr_assert(strstr(tl_context_last_error(ctx), "argument 'A' (#0): device: expected cuda, got cpu"), "%s",
            tl_context_last_error(ctx));
  b.t.device.device_type = kDLCPU;

  /* the usual checks still apply */
  b.shape[1] = 64;
  cr_assert_eq(tl_kernel_call(ctx, k, args, 2, NULL, out), TL_ERR_INVALID_ARGUMENT);
  cr_assert(strstr(tl_context_last_error(ctx), "argument 'B' (#1): shape[1]: expected 128, got 64"), "%s",
            tl_context_last_error(ctx));
  b.shape[1] = 128;
  b.t.data = NULL;
  cr_assert_eq(tl_kernel_call(ctx, k, args, 2, NULL, out), TL_ERR_INVALID_ARGUMENT);
  cr_assert(strstr(tl_context_last_error(ctx), "data: expected a non-null host pointer"), "%s",
            tl_context_last_error(ctx));
  b.t.data = b.data;
  cr_assert_eq(tl_kernel_call(ctx, k, args, 1, NULL, out), TL_ERR_INVALID_ARGUMENT);
  cr_assert(strstr(tl_context_last_error(ctx), "argument count: expected 2"), "%s", tl_context_last_error(ctx));
  cr_assert_eq(tl_kernel_call(ctx, k, args, 2, NULL, NULL), TL_ERR_INVALID_ARGUMENT);
  cr_assert_eq(tl_kernel_call_on(ctx, k, (tl_executor)42, args, 2, NULL, out), TL_ERR_INVALID_ARGUMENT);
  /* and a good call after all that */
  cr_assert_eq(tl_kernel_call(ctx, k, args, 2, NULL, out), TL_OK, "%s", tl_context_last_error(ctx));
  out[0]->deleter(out[0]);
  free(a.data);
  free(b.data);
  tl_kernel_destroy(k);
}

Test(cpu_device, executor_error_has_a_location) {
  /* a gemv without a bounds guard: N = 100 with block_N = 128 reads past A */
  tl_define d[2] = {{"N", "100"}, {"K", "64"}};
  tl_kernel *k = compile("test/unit/Inputs/gemv_unguarded.py", d, 2, 0, NULL, 0);
  uint16_t *A = calloc(100 * 64, 2), *x = calloc(64, 2);
  int64_t sa[2] = {100, 64}, sx[1] = {64};
  DLTensor ta = {A, {kDLCPU, 0}, 2, {kDLFloat, 16, 1}, sa, NULL, 0};
  DLTensor tx = {x, {kDLCPU, 0}, 1, {kDLFloat, 16, 1}, sx, NULL, 0};
  tl_arg args[2] = {tl_arg_tensor(&ta), tl_arg_tensor(&tx)};
  DLManagedTensor *out[1] = {NULL};
  cr_assert_eq(tl_kernel_call(ctx, k, args, 2, NULL, out), TL_ERR_COMPILE);
  const char *msg = tl_context_last_error(ctx);
  cr_assert(strstr(msg, "gemv_unguarded.py:"), "%s", msg);
  cr_assert(strstr(msg, "out-of-bounds"), "%s", msg);
  cr_assert_null(out[0]);
  free(A);
  free(x);
  tl_kernel_destroy(k);
}

Test(cpu_device, tensor_alloc_and_copy_on_the_host) {
  int64_t shape[2] = {3, 5};
  DLDevice cpu = {kDLCPU, 0};
  DLDataType f32 = {kDLFloat, 32, 1};
  DLManagedTensor *a = NULL, *b = NULL;
  cr_assert_eq(tl_tensor_alloc(ctx, cpu, 2, shape, f32, &a), TL_OK);
  cr_assert_eq(tl_tensor_alloc(ctx, cpu, 2, shape, f32, &b), TL_OK);
  cr_assert_eq((uintptr_t)a->dl_tensor.data % 64, 0);
  float *av = a->dl_tensor.data;
  for (int i = 0; i < 15; i++) av[i] = (float)i;
  cr_assert_eq(tl_tensor_copy(ctx, &b->dl_tensor, &a->dl_tensor), TL_OK);
  cr_assert_eq(memcmp(a->dl_tensor.data, b->dl_tensor.data, 60), 0);
  /* sizes must agree */
  int64_t small[1] = {4};
  DLTensor s = {av, cpu, 1, f32, small, NULL, 0};
  cr_assert_eq(tl_tensor_copy(ctx, &b->dl_tensor, &s), TL_ERR_INVALID_ARGUMENT);
  /* no driver: CUDA memory is unavailable */
  DLDevice cuda = {kDLCUDA, 0};
  DLManagedTensor *g = NULL;
  cr_assert_eq(tl_tensor_alloc(ctx, cuda, 2, shape, f32, &g), TL_ERR_NO_DEVICE);
  cr_assert_null(g);
  int64_t neg[1] = {-1};
  cr_assert_eq(tl_tensor_alloc(ctx, cpu, 1, neg, f32, &g), TL_ERR_INVALID_ARGUMENT);
  a->deleter(a);
  b->deleter(b);
}

Test(cpu_device, gemm_flops_from_the_tile_ir) {
  tl_define d[3] = {{"M", "256"}, {"N", "512"}, {"K", "128"}};
  tl_kernel *k = compile("examples/gemm.py", d, 3, 0, NULL, 0);
  double f = -1;
  cr_assert_eq(tl_kernel_gemm_flops(ctx, k, NULL, NULL, 0, &f), TL_OK, "%s", tl_context_last_error(ctx));
  cr_assert_eq(f, 2.0 * 256 * 512 * 128);
  tl_kernel_destroy(k);

  k = compile("examples/elementwise_add.py", NULL, 0, 0, NULL, 0);
  cr_assert_eq(tl_kernel_gemm_flops(ctx, k, NULL, NULL, 0, &f), TL_OK);
  cr_assert_eq(f, 0);
  tl_kernel_destroy(k);
}

/* Issue 14: a NULL tensor (Python's None) for a tensor parameter the kernel
 * never touches is accepted on both CPU executors; for a used one it is an
 * error naming the argument. */
Test(cpu_device, null_tensor_for_unused_parameter) {
  tl_kernel *k = compile("test/GPU/kernels/unused_param.py", NULL, 0, 0, NULL, 0);
  host_t a, c;
  host_f32(&a, 1, 256, 1, 3);
  host_f32(&c, 1, 256, 1, 5);
  for (int e = 0; e < 2; e++) {
    tl_executor ex = e ? TL_EXEC_REFERENCE : TL_EXEC_CPU;
    memset(c.data, 0, 256 * sizeof(float));
    tl_arg args[3] = {tl_arg_tensor(&a.t), tl_arg_tensor(NULL), tl_arg_tensor(&c.t)};
    cr_assert_eq(tl_kernel_call_on(ctx, k, ex, args, 3, NULL, NULL), TL_OK, "%s", tl_context_last_error(ctx));
    for (int i = 0; i < 256; i++) cr_assert_eq(c.data[i], a.data[i] * 2.0f + 1.0f, "element %d", i);
    tl_arg bad[3] = {tl_arg_tensor(NULL), tl_arg_tensor(&a.t), tl_arg_tensor(&c.t)};
    cr_assert_neq(tl_kernel_call_on(ctx, k, ex, bad, 3, NULL, NULL), TL_OK);
    cr_assert_not_null(strstr(tl_context_last_error(ctx), "argument 'A' (#0): kind: expected a tensor"), "%s",
                       tl_context_last_error(ctx));
  }
  free(a.data);
  free(c.data);
  tl_kernel_destroy(k);
}

/* Issue 14: T.StridedTensor((M, N), (ld, 1)) takes a view of rows ld
 * elements apart (test/GPU/kernels/strided.py: B = 2 A + 1), with ld a
 * constant (the tensor's strides must equal it) or a T.dynamic symbol bound
 * from the tensor's strides at the call; a tensor of other strides is an
 * error naming the argument.  Both CPU executors. */
Test(cpu_device, strided_tensor_parameter) {
  float *big = aligned_alloc(64, 64 * 128 * sizeof(float));
  cr_assert_not_null(big);
  for (int i = 0; i < 64 * 128; i++) big[i] = (float)((i * 37) % 101 - 50) / 8.0f;
  for (int dyn = 0; dyn < 2; dyn++) {
    tl_define d[2] = {{"dynamic_ld", dyn ? "True" : "False"}, {"ld", "96"}};
    int out_idx[1] = {1};
    tl_kernel *k = compile("test/GPU/kernels/strided.py", d, 2, 0, out_idx, 1);
    for (int e = 0; e < 2; e++) {
      tl_executor ex = e ? TL_EXEC_REFERENCE : TL_EXEC_CPU;
      for (int ld = 64; ld <= 128; ld += 32) {
        int64_t shape[2] = {64, 64}, strides[2] = {ld, 1};
        DLTensor a = {big, {kDLCPU, 0}, 2, {kDLFloat, 32, 1}, shape, strides, 0};
        tl_arg args[1] = {tl_arg_tensor(&a)};
        DLManagedTensor *out[1] = {NULL};
        tl_status s = tl_kernel_call_on(ctx, k, ex, args, 1, NULL, out);
        if (!dyn && ld != 96) { /* compiled for ld = 96 */
          cr_assert_neq(s, TL_OK);
          cr_assert_not_null(strstr(tl_context_last_error(ctx),
                                    "argument 'A' (#0): strides[0]: expected 96 "
                                    "(T.StridedTensor), got"),
                             "%s", tl_context_last_error(ctx));
          continue;
        }
        cr_assert_eq(s, TL_OK, "ld %d: %s", ld, tl_context_last_error(ctx));
        const float *b = out[0]->dl_tensor.data;
        for (int i = 0; i < 64; i++)
          for (int j = 0; j < 64; j++)
            cr_assert_eq(b[i * 64 + j], big[i * ld + j] * 2.0f + 1.0f, "ld %d (%d, %d)", ld, i, j);
        out[0]->deleter(out[0]);
      }
    }
    tl_kernel_destroy(k);
  }
  free(big);
}

/* Issue 14: float8 tensors cross the C API as 8-bit integer DLPack tensors
 * holding the codes (runtime.h): gemm_general.py with float8_e4m3 operands
 * (sm_89) runs on the CPU executor from kDLUInt / kDLInt 8-bit tensors, the
 * product of codes 0x38 (1.0) and 0x40 (2.0) over K = 64 is 128 exactly;
 * a kDLFloat 8-bit tensor and a 16-bit integer tensor are refused. */
Test(cpu_device, float8_tensors_cross_as_bytes) {
  tl_define d[] = {{"M", "64"},
                   {"N", "64"},
                   {"K", "64"},
                   {"block_M", "64"},
                   {"block_N", "64"},
                   {"block_K", "64"},
                   {"dtype", "float8_e4m3"},
                   {"accum_dtype", "float32"},
                   {"out_dtype", "float32"}};
  tl_compile_options co = {0};
  co.stop_after = TL_STAGE_SIMT;
  co.target = "sm_89";
  tl_kernel *k = NULL;
  cr_assert_eq(tl_kernel_compile_file(ctx, "test/GPU/kernels/gemm_general.py", d, 9, &co, &k), TL_OK, "%s",
               tl_context_last_error(ctx));
  static uint8_t A[64 * 64], B[64 * 64];
  memset(A, 0x38, sizeof A);
  memset(B, 0x40, sizeof B);
  int64_t shape[2] = {64, 64};
  DLTensor ta = {A, {kDLCPU, 0}, 2, {kDLUInt, 8, 1}, shape, NULL, 0};
  DLTensor tb = {B, {kDLCPU, 0}, 2, {kDLInt, 8, 1}, shape, NULL, 0};
  tl_arg args[2] = {tl_arg_tensor(&ta), tl_arg_tensor(&tb)};
  DLManagedTensor *out[1] = {NULL};
  cr_assert_eq(tl_kernel_call(ctx, k, args, 2, NULL, out), TL_OK, "%s", tl_context_last_error(ctx));
  cr_assert_eq(out[0]->dl_tensor.dtype.code, kDLFloat);
  const float *c = out[0]->dl_tensor.data;
  for (int i = 0; i < 64 * 64; i++) cr_assert_eq(c[i], 128.0f, "C[%d] = %g", i, c[i]);
  out[0]->deleter(out[0]);
  out[0] = NULL;
  DLTensor bad = {B, {kDLCPU, 0}, 2, {kDLFloat, 8, 1}, shape, NULL, 0};
  args[1] = tl_arg_tensor(&bad);
  cr_assert_neq(tl_kernel_call(ctx, k, args, 2, NULL, out), TL_OK);
  cr_assert(strstr(tl_context_last_error(ctx), "float8_e4m3"), "%s", tl_context_last_error(ctx));
  tl_kernel_destroy(k);
}

/* T.ptx_stmatrix on the executor (test/GPU/kernels/simt_stmatrix.py): every
 * form (x1, x2, x4, with and without .trans) gives the closed form of the
 * kernel's header, the inverse of ldmatrix's fragment map. */
Test(cpu_device, stmatrix_all_forms) {
  static const char *const nums[3] = {"1", "2", "4"};
  for (int q = 0; q < 3; q++)
    for (int tr = 0; tr < 2; tr++) {
      tl_define d[2] = {{"num", nums[q]}, {"trans", tr ? "True" : "False"}};
      tl_compile_options co = {0};
      co.stop_after = TL_STAGE_SIMT;
      co.target = "sm_90a";
      int oi[1] = {0};
      co.out_idx_mode = TL_OUT_IDX_LIST;
      co.out_idx = oi;
      co.n_out_idx = 1;
      tl_kernel *k = NULL;
      cr_assert_eq(tl_kernel_compile_file(ctx, "test/GPU/kernels/simt_stmatrix.py", d, 2, &co, &k), TL_OK, "%s",
                   tl_context_last_error(ctx));
      DLManagedTensor *out[1] = {NULL};
      cr_assert_eq(tl_kernel_call_on(ctx, k, TL_EXEC_CPU, NULL, 0, NULL, out), TL_OK, "%s", tl_context_last_error(ctx));
      const uint16_t *o = out[0]->dl_tensor.data;
      int num = 1 << q;
      for (int i = 0; i < 4; i++)
        for (int r = 0; r < 8; r++)
          for (int c = 0; c < 8; c++) {
            int want = i >= num ? 0 : tr ? 8 * (4 * c + r / 2) + 2 * i + r % 2 : 8 * (4 * r + c / 2) + 2 * i + c % 2;
            /* small non-negative integers in float16: exponent and mantissa from the value */
            uint16_t h = o[i * 64 + r * 8 + c];
            int e = (h >> 10) & 31, m = h & 1023;
            double v = e == 0 ? m / 16777216.0 : (1.0 + m / 1024.0) * ldexp(1.0, e - 15);
            cr_assert_eq(v, (double)want, "x%d%s matrix %d row %d col %d: %g, expected %d", num, tr ? ".trans" : "", i,
                         r, c, v, want);
          }
      out[0]->deleter(out[0]);
      tl_kernel_destroy(k);
    }
}
