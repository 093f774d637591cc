/* The table of code generators behind lib/Driver/backend.h, with the NVPTX
 * adapter: the only place above lib/NVPTX that names its functions. */
#include "Driver/backend.h"

#include <stdio.h>

#include "NVPTX/nvptx.h"

static bool nvptx_emit(const tl_module *m, const tl_target *target, const tl_backend_request *req, tl_diag *d,
                       tl_backend_result *out) {
  tl_nvptx_options no = {0};
  no.skip_llvm_ir = !req->keep_ir_text;
  no.no_line_info = req->no_line_info;
  tl_codegen_result cg = {0};
  bool ok = tl_nvptx_emit_ex(m, target, &no, d, &cg);
  out->ir_text = cg.llvm_ir;
  out->code = cg.ptx;
  out->ms_opt = cg.ms_opt;
  out->ms_emit = cg.ms_emit;
  return ok;
}

static void nvptx_result_free(tl_backend_result *r) {
  tl_codegen_result cg = {0};
  cg.llvm_ir = r->ir_text;
  cg.ptx = r->code;
  tl_codegen_result_free(&cg);
  r->ir_text = r->code = NULL;
}

static void nvptx_version(char *buf, size_t n) {
  unsigned major = 0, minor = 0, patch = 0;
  tl_nvptx_llvm_version(&major, &minor, &patch);
  snprintf(buf, n, "LLVM %u.%u.%u", major, minor, patch);
}

static const char *nvptx_support_file(void) { return tl_nvptx_libdevice_path(NULL); }

static const tl_backend nvptx = {"nvptx", nvptx_emit, nvptx_result_free, nvptx_version, nvptx_support_file};

const tl_backend *tl_backend_for(const tl_target *target) {
  (void)target; /* every target of Support/target.h is an NVPTX target */
  return &nvptx;
}
