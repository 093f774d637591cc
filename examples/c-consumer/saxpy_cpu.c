/* examples/c-consumer/saxpy_cpu.c: a C program built against an INSTALLED
 * libtilelang (find_package(tilelang) or pkg-config; see CMakeLists.txt and
 * build-pkgconfig.sh here, and docs/runtime.md "Installing for C").
 *
 *   saxpy_cpu [KERNEL_FILE]        (default: elementwise.py next to the source)
 *
 * Compiles a TileLang kernel file, C = A * alpha + B (alpha a module
 * constant bound with a define, N a factory parameter), runs it on the CPU
 * SIMT executor with host tensors and checks every element.  Needs no GPU.
 * Exit 0 and "c-consumer: PASS (N elements)" on success, 1 otherwise. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <tilelang/tilelang.h>

#ifndef KERNEL_FILE
#define KERNEL_FILE "elementwise.py"
#endif

static int fail(tl_context *ctx, const char *what) {
  fprintf(stderr, "c-consumer: %s failed: %s\n", what, tl_context_last_error(ctx));
  return 1;
}

int main(int argc, char **argv) {
  const char *file = argc > 1 ? argv[1] : KERNEL_FILE;
  tl_context *ctx;
  if (tl_context_create(&ctx) != TL_OK) return 1;
  tl_define defs[] = {{"N", "1000"}, {"alpha", "2.5"}};
  tl_compile_options o = {0};
  o.out_idx_mode = TL_OUT_IDX_FROM_FILE; /* the file's out_idx=-1: C is returned */
  o.stop_after = TL_STAGE_SIMT;          /* the CPU executor needs no PTX (nor LLVM) */
  tl_kernel *k;
  if (tl_kernel_compile_file(ctx, file, defs, 2, &o, &k) != TL_OK) return fail(ctx, "compile");

  enum { N = 1000 };
  static float a[N], b[N];
  for (int i = 0; i < N; i++) a[i] = (float)i * 0.5f, b[i] = 1.0f - (float)i;
  int64_t shape[1] = {N};
  DLTensor A = {a, {kDLCPU, 0}, 1, {kDLFloat, 32, 1}, shape, NULL, 0};
  DLTensor B = {b, {kDLCPU, 0}, 1, {kDLFloat, 32, 1}, shape, NULL, 0};
  tl_arg args[2] = {tl_arg_tensor(&A), tl_arg_tensor(&B)};
  DLManagedTensor *out[1] = {NULL};
  if (tl_kernel_call_on(ctx, k, TL_EXEC_CPU, args, 2, NULL, out) != TL_OK) return fail(ctx, "call");

  const float *c = out[0]->dl_tensor.data;
  int bad = 0;
  for (int i = 0; i < N; i++)
    if (fabsf(c[i] - (a[i] * 2.5f + b[i])) > 1e-5f) {
      if (!bad) fprintf(stderr, "c-consumer: C[%d] = %g, expected %g\n", i, c[i], a[i] * 2.5f + b[i]);
      bad++;
    }
  out[0]->deleter(out[0]);
  tl_kernel_destroy(k);
  tl_context_destroy(ctx);
  printf("c-consumer: %s (%d elements, %d wrong)\n", bad ? "FAIL" : "PASS", N, bad);
  return bad ? 1 : 0;
}
