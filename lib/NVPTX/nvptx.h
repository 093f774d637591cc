/* NVPTX code generation (internal): SIMT IR → LLVM IR → PTX text through the
 * LLVM C API (LLVM 19), for the targets of docs/codegen.md "Targets and PTX versions". */
#ifndef TL_NVPTX_H
#define TL_NVPTX_H

#include "IR/tir.h"
#include "Support/target.h"

/* The target (tl_target, tl_target_lookup) is described in Support/target.h. */

typedef struct tl_codegen_result {
  char *llvm_ir;                             /* malloc'd text of the optimised module (as handed to the
                    * backend); NULL with tl_nvptx_options.skip_llvm_ir */
  char *ptx;                                 /* malloc'd PTX text, NUL-terminated */
  double ms_build, ms_link, ms_opt, ms_emit; /* time of each stage */
} tl_codegen_result;

/* Emits the SIMT module m (already lowered) for target.  libdevice is found
 * from $TL_LIBDEVICE, else the CUDA installation (/usr/local/cuda/nvvm/
 * libdevice/libdevice.10.bc); it is needed only when math intrinsics are
 * used.  Errors (LLVM diagnostics, an intrinsic the target cannot encode)
 * go to d; returns false on error.  Thread-safe for distinct modules. */
bool tl_nvptx_emit(const tl_module *m, const tl_target *target, tl_diag *d, tl_codegen_result *out);
void tl_codegen_result_free(tl_codegen_result *r);

/* Options of tl_nvptx_emit_ex (zero-initialise; NULL means defaults). */
typedef struct tl_nvptx_options {
  const char *libdevice_path; /* overrides $TL_LIBDEVICE and the CUDA default */
  bool skip_opt;              /* skip the optimisation pipeline (debugging) */
  /* Do not print the optimised module: tl_codegen_result.llvm_ir stays NULL
   * (printing costs ~10% of the emission time of a GEMM). */
  bool skip_llvm_ir;
  /* New-pass-manager pipeline text run before the backend (LLVMRunPasses
   * syntax, e.g. "default<O2>"); NULL = $TL_LLVM_PASSES if set, else the
   * default (TL_DEFAULT_PASSES in emit.c, where its choice is explained);
   * "" = none; "default<O3>" = LLVM's standard pipeline. */
  const char *passes;
  /* No source line information: without it (the default) every statement's
   * file:line:col becomes an LLVM debug location and the PTX carries
   * `.file` / `.loc` directives (docs/codegen.md "Line information"). */
  bool no_line_info;
} tl_nvptx_options;
/* The libdevice file code generation links with opts (NULL: defaults):
 * opts->libdevice_path, else $TL_LIBDEVICE, else the CUDA installation's. */
const char *tl_nvptx_libdevice_path(const tl_nvptx_options *opts);
/* The version of the LLVM library linked in (LLVMGetVersion). */
void tl_nvptx_llvm_version(unsigned *major, unsigned *minor, unsigned *patch);
bool tl_nvptx_emit_ex(const tl_module *m, const tl_target *target, const tl_nvptx_options *opts, tl_diag *d,
                      tl_codegen_result *out);

#endif
