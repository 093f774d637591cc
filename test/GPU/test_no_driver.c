/* GPU-suite test (issue 3, acceptance 6), runs everywhere: with the driver
 * made unavailable (TL_CUDA_DRIVER names a missing library, set before the
 * library first looks for it) compiling still works and yields PTX, the
 * default target is sm_80, and a call returns TL_ERR_NO_DEVICE with a
 * message saying why — after the argument checks, which still run. */
#include "gpu_util.h"

int main(void) {
  setenv("TL_CUDA_DRIVER", "/nonexistent/libcuda.so.1", 1);
  tl_context *ctx;
  if (tl_context_create(&ctx) != TL_OK) return 1;
  char path[1024];
  snprintf(path, sizeof path, "%s/elementwise_add_1d.py", kernel_dir());
  tl_kernel *k = NULL;
  tl_status s = tl_kernel_compile_file(ctx, path, NULL, 0, NULL, &k);
  CHECK(s == TL_OK, "compile without a driver: %s", tl_context_last_error(ctx));
  if (s != TL_OK) return finish("test_no_driver");
  CHECK(strcmp(tl_kernel_target(k), "sm_80") == 0, "default target %s", tl_kernel_target(k));
  CHECK(strstr(tl_kernel_ptx(k), ".entry main") != NULL, "PTX has no .entry main");
  CHECK(strstr(tl_kernel_ptx(k), ".target sm_80") != NULL, "PTX is not for sm_80");
  printf("  ok   compiled to %zu bytes of PTX without a driver\n", strlen(tl_kernel_ptx(k)));

  int64_t n = 1000;
  int64_t shape[1] = {n};
  DLTensor t = {0};
  t.data = (void *)(uintptr_t)0x7f0000000000ull;
  t.device.device_type = kDLCUDA;
  t.ndim = 1;
  t.dtype.code = kDLFloat;
  t.dtype.bits = 32;
  t.dtype.lanes = 1;
  t.shape = shape;
  tl_arg args[2] = {tl_arg_tensor(&t), tl_arg_tensor(&t)};
  DLManagedTensor *out[1] = {NULL};
  s = tl_kernel_call(ctx, k, args, 2, NULL, out);
  CHECK(s == TL_ERR_NO_DEVICE, "call without a driver: %s", tl_status_name(s));
  CHECK(strstr(tl_context_last_error(ctx), "no CUDA driver") != NULL, "message: %s", tl_context_last_error(ctx));
  CHECK(out[0] == NULL, "an output was returned");
  printf("  ok   call: %s: %s\n", tl_status_name(s), tl_context_last_error(ctx));
  s = tl_kernel_call(ctx, k, args, 1, NULL, out);
  CHECK(s == TL_ERR_INVALID_ARGUMENT, "argument checks run before the driver is needed");
  CHECK(tl_kernel_load(ctx, k, 0) == TL_ERR_NO_DEVICE, "load without a driver");
  tl_kernel_destroy(k);
  tl_context_destroy(ctx);
  return finish("test_no_driver");
}
