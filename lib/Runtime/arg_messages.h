/* The texts of a call's argument and launch checks (docs/runtime.md "A kernel and a call"): printf formats,
 * one definition for both users of them, lib/Runtime (bind.c, call.c) and the C files `tl-opt --emit=c`
 * writes (lib/Runtime/aot.c copies this header into every exported file; docs/aot.md), so that a kernel
 * exported ahead of time refuses a bad argument with the very text tl_kernel_call gives.
 *
 * A check's line is TL_MSG_ARG (the parameter's name and position) followed by one of the formats below,
 * or a format alone for what is not one parameter's (grid, threads, shared memory, a dynamic dim).
 * Plain C99 (this file is compiled into exported kernels too): string literals and <inttypes.h> macros. */
#ifndef TL_RUNTIME_ARG_MESSAGES_H
#define TL_RUNTIME_ARG_MESSAGES_H

#include <inttypes.h>

#define TL_MSG_ARG "argument '%s' (#%zu): "
#define TL_MSG_MORE_ERRORS "\n(%d more argument errors not shown)"
#define TL_MSG_MAX_REPORTED 20

/* one tensor parameter */
#define TL_MSG_KIND_TENSOR "kind: expected a tensor (%s), got %s"
#define TL_MSG_DEVICE_TYPE "device: expected %s, got %s"
#define TL_MSG_DEVICE_ID "device: expected cuda:%d (the device of '%s'), got cuda:%d"
#define TL_MSG_DTYPE "dtype: expected %s, got %s"
#define TL_MSG_NDIM "ndim: expected %d, got %d"
#define TL_MSG_NULL_SHAPE "shape: expected %d dims, got a NULL shape array"
#define TL_MSG_NEG_DIM "shape[%d]: expected a non-negative size, got %" PRId64
/* what ("shape" or "strides"), d, constant, " (T.StridedTensor)" or "", got */
#define TL_MSG_DIM_CONST "%s[%d]: expected %" PRId64 "%s, got %" PRId64
/* what, d, "stride" or "dynamic dim", symbol, got */
#define TL_MSG_DIM_RANGE "%s[%d]: expected %s '%s' in the int32 range, got %" PRId64
/* what, d, symbol, its value, the parameter that bound it, "shape"/"strides", its dim, got */
#define TL_MSG_DIM_BOUND "%s[%d]: expected %s = %" PRId64 " (bound by '%s' %s[%d]), got %" PRId64
#define TL_MSG_SIZE_OVERFLOW "shape: the tensor's size in bytes overflows int64"
#define TL_MSG_STRIDES "strides: expected a contiguous (row-major) tensor with strides %s, got %s"
#define TL_MSG_NULL_DATA "data: expected a non-null %s pointer, got NULL"
#define TL_MSG_ALIGN                                                                                                   \
  "alignment: expected data + byte_offset aligned to %d bytes, got 0x%" PRIxPTR " (data %p + byte_offset %" PRIu64 ")"
/* dims that are expressions of the dynamic dims, and outputs */
#define TL_MSG_UNBOUND_SYM "dynamic dim '%s': no input tensor has a dim that is exactly '%s'"
#define TL_MSG_DIM_EVAL "shape[%d]: cannot evaluate the dim (%s)"
#define TL_MSG_DIM_EXPR "shape[%d]: expected %s = %" PRId64 ", got %" PRId64
#define TL_MSG_OUT_DIM_NEG "shape[%d]: output dim %s evaluates to %" PRId64
#define TL_MSG_OUT_OVERFLOW "shape: the output's size overflows"
/* scalars */
#define TL_MSG_SCALAR_INT_RANGE "value: expected a value in the range of %s, got %" PRId64
#define TL_MSG_SCALAR_FLOAT_RANGE "value: expected a value in the finite range of %s, got %s"
/* the launch configuration */
#define TL_MSG_GRID_EVAL "grid.%s = %s: cannot evaluate (%s)"
#define TL_MSG_GRID_RANGE "grid.%s = %s: expected a value in [1, 2147483647], got %" PRId64 "%s"
#define TL_MSG_THREADS_EVAL "threads: cannot evaluate (%s)"
#define TL_MSG_THREADS_RANGE "threads: expected a value in [1, 1024], got %" PRId64
#define TL_MSG_SMEM_RANGE "shared memory: %" PRId64 " bytes is out of range"

/* checks against the device (call.c) */
#define TL_MSG_PTR_UNKNOWN TL_MSG_ARG "data: expected CUDA device memory, got a pointer the driver does not know (%s)"
#define TL_MSG_PTR_DEVICE TL_MSG_ARG "data: expected memory of cuda:%d, got memory of cuda:%d"
#define TL_MSG_STREAM_CTX                                                                                              \
  "stream: expected a stream of the primary context of cuda:%d (the tensors' device), got a stream of another context"
#define TL_MSG_MAX_THREADS                                                                                             \
  "threads: kernel '%s' can run at most %d threads per block (CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK), got %u"
#define TL_MSG_GRID_LIMIT "grid.%c: expected at most %d blocks on cuda:%d, got %u"
#define TL_MSG_SMEM_LIMIT                                                                                              \
  "shared memory: kernel '%s' needs %u bytes of dynamic shared memory, cuda:%d allows %d per block"
#define TL_MSG_ALLOC_NULL "the context's allocator returned NULL for %zu bytes of output '%s' on cuda:%d"
#define TL_MSG_ALLOC_ALIGN                                                                                             \
  "the context's allocator returned %p for output '%s', which the kernel needs aligned to %d bytes"
/* a failed driver call: what, the CUresult's name, its text, TL_MSG_STICKY_ADVICE or "" */
#define TL_MSG_DRIVER_FAIL "%s failed: %s (%s)%s"
#define TL_MSG_STICKY_ADVICE                                                                                           \
  "; this error is sticky: a kernel (this launch or an earlier one on the device) faulted, the device's "              \
  "CUDA context is unusable from now on and every later CUDA call in this process fails with it; tensors "             \
  "that kernel wrote may be partly written: save what the job needs from host memory and restart the "                 \
  "process (CUDA_LAUNCH_BLOCKING=1 or compute-sanitizer finds the faulting kernel)"
#define TL_MSG_LAUNCH                                                                                                  \
  "cuLaunchKernel of '%s' (grid %u x %u x %u, block %u, %u bytes of dynamic shared memory) on cuda:%d"

#endif
