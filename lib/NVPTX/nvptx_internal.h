/* Internal interface between the two halves of lib/NVPTX: the code generator
 * codegen*.c (SIMT IR → LLVM IR; its own internal header is codegen_internal.h)
 * and emit.c (libdevice, verification, O3, PTX).  Only files
 * under lib/NVPTX include it (it needs LLVM's C headers). */
#ifndef TL_NVPTX_INTERNAL_H
#define TL_NVPTX_INTERNAL_H

#include <llvm-c/Core.h>

#include "NVPTX/nvptx.h"

/* Calling convention of PTX kernels (.entry): llvm::CallingConv::PTX_Kernel. */
#define TL_PTX_KERNEL_CC 71

/* Builds one kernel per prim_func of m into M (whose target triple and data
 * layout are already set).  Math that LLVM's NVPTX backend cannot lower is
 * emitted as calls of libdevice functions (__nv_*), left as declarations
 * for emit.c to link.  Sets each prim_func's smem_bytes to at least the
 * dynamic shared memory its shared.dyn buffers need.  Errors (with the
 * IR's source locations) go to d; returns false when any was reported.
 * line_info: debug locations from the statements' source locations
 * (codegen_debug.c; the PTX gets .file/.loc). */
bool tl_nvptx_build(LLVMModuleRef M, const tl_module *m, const tl_target *t, bool line_info, tl_diag *d);

#endif
