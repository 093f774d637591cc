/* The code generator seam of the compiler driver (internal): what
 * tl_compiler_codegen and the kernel cache need of a backend, and the table
 * of backends (backend.c).  The one backend today is NVPTX (lib/NVPTX: SIMT
 * IR → LLVM IR → PTX); a second one (another ISA) is an entry in that table
 * and its adapter in backend.c: nothing else in the Driver or the Runtime
 * names a backend.  docs/ARCHITECTURE.md "lib/Driver". */
#ifndef TL_DRIVER_BACKEND_H
#define TL_DRIVER_BACKEND_H

#include <stddef.h>

#include "IR/tir.h"
#include "Support/target.h"

/* What a caller asks of one emission (zero-initialise). */
typedef struct tl_backend_request {
  bool keep_ir_text; /* also print the optimised IR (tl_backend_result.ir_text); it costs ~10% of a GEMM's emission */
  bool no_line_info; /* no source locations in the code (docs/codegen.md "Line information") */
} tl_backend_request;

/* What one emission made.  Free with tl_backend.result_free. */
typedef struct tl_backend_result {
  char *ir_text;          /* malloc'd text of the optimised IR (LLVM IR); NULL unless keep_ir_text */
  char *code;             /* malloc'd target code (PTX text), NUL-terminated; NULL on error */
  double ms_opt, ms_emit; /* milliseconds in the optimisation pipeline and in the target emission */
} tl_backend_result;

typedef struct tl_backend {
  const char *name; /* "nvptx" */
  /* Code for m, a lowered SIMT module, on target; diagnostics to d; false on
   * error.  Thread-safe for distinct modules.  out is freed by result_free
   * whatever emit returned. */
  bool (*emit)(const tl_module *m, const tl_target *target, const tl_backend_request *req, tl_diag *d,
               tl_backend_result *out);
  void (*result_free)(tl_backend_result *r);
  /* The code generator's version ("LLVM 19.1.7"), written to buf (n bytes,
   * NUL-terminated): part of the kernel cache's key. */
  void (*version)(char *buf, size_t n);
  /* A file the code depends on beside the IR (NVPTX: libdevice), or NULL:
   * its identity (size, time) is part of the kernel cache's key. */
  const char *(*support_file)(void);
} tl_backend;

/* The backend that generates code for target (NULL: the default target's).
 * Never NULL: every target of Support/target.h has one. */
const tl_backend *tl_backend_for(const tl_target *target);

#endif
