/* The compiler driver (internal): TileLang source → tile IR → SIMT IR →
 * LLVM IR → PTX, one stage per call, for the runtime's tl_kernel_compile
 * (lib/Runtime/compile.c, which takes the kernel's signature between the
 * stages), tl-opt and tl-run (through that public API) and the tests.
 *
 * The source is parsed once: the tile IR stays as written
 * (tl_compilation.tile, for the reference evaluator) and lowering rewrites a
 * deep copy of it (tl_module_clone) into tl_compilation.simt.
 * The caller brackets the calls with tl_context_begin/_end; errors go to
 * ctx (diagnostics with their source lines: tl_compiler_parse registers the
 * source text with ctx->diag, and the caller unregisters it before the text
 * dies, ctx->diag.sources.len = 0).
 * Stage times: CLOCK_MONOTONIC stamps around the parse, after every
 * lowering pass and around code generation, into tl_compilation.times. */
#ifndef TL_DRIVER_COMPILER_H
#define TL_DRIVER_COMPILER_H

#include "IR/tir.h"
#include "Support/target.h"
#include "tilelang/runtime.h"

/* One compilation: what the stages have made so far.  Zero-initialise with
 * tl_compilation_init; free with tl_compilation_free. */
typedef struct tl_compilation {
  const tl_compile_options *opts; /* the caller's, or zeroed defaults; not owned */
  tl_compile_options defaults;
  tl_compile_times times; /* ms per stage so far */
  double t0;              /* when tl_compilation_init ran (ms, CLOCK_MONOTONIC) */
  tl_module *tile;        /* after tl_compiler_parse: the tile IR as written */
  tl_module *simt;        /* after tl_compiler_lower: the SIMT IR */
  /* The target's name, resolved by the caller before tl_compiler_lower (the
   * runtime: tl_target_resolve, "auto" to the GPU's); tl_compilation_init
   * sets opts->target, NULL meaning tl_target_default() */
  const char *target_name;
  const tl_target *target; /* after tl_compiler_lower: target_name's entry */
  bool remarks;            /* lowering's remarks: opts->remarks, or the caller's choice */
  tl_target target_sms;    /* that target with opts->sms SMs, when opts->sms > 0 */
  char *simt_ir;           /* after tl_compiler_lower: the SIMT IR's text (malloc'd) */
  char *llvm_ir;           /* after tl_compiler_codegen (malloc'd): the optimised
                                   * module's text, "" unless TL_COMPILE_KEEP_LLVM_IR or
                                   * opts->after_stage */
  char *ptx;               /* after tl_compiler_codegen: the PTX text (malloc'd) */
} tl_compilation;

/* Starts a compilation with options opts (NULL: defaults); stamps t0. */
void tl_compilation_init(tl_compilation *c, const tl_compile_options *opts);
/* Frees what c owns (modules, texts); c may be partly filled. */
void tl_compilation_free(tl_compilation *c);

/* Reads the file at path whole into *text (malloc'd, NUL-terminated; *len
 * bytes).  Errors: TL_ERR_IO ("cannot open 'p': ..."), TL_ERR_NO_MEMORY. */
tl_status tl_compiler_read_file(tl_context *ctx, const char *path, char **text, size_t *len);

/* Stage 1: parses and elaborates source (len bytes, named filename in
 * diagnostics) with the -D defines into c->tile, verified, with at least
 * one prim_func (TL_ERR_COMPILE otherwise); the pass-config flags of
 * opts->flags (and flags_false) set its first function's pass configs.  Registers the module's source with
 * ctx->diag.  opts->after_stage sees stage "parse". */
tl_status tl_compiler_parse(tl_context *ctx, tl_compilation *c, const char *source, size_t len, const char *filename,
                            const tl_define *defines, size_t ndefines);
/* Stage 2: looks up c->target_name (NULL: tl_target_default();
 * TL_ERR_INVALID_ARGUMENT for an unknown name), copies c->tile and lowers
 * the copy into c->simt (tl_lower_module; opts->verify_each, c->remarks), prints it into
 * c->simt_ir.  opts->after_stage sees every pass. */
tl_status tl_compiler_lower(tl_context *ctx, tl_compilation *c);
/* Stage 3: LLVM IR and PTX of c->simt for c->target (tl_nvptx_emit_ex)
 * into c->llvm_ir and c->ptx.  opts->after_stage sees "llvm" (when
 * printed) and "ptx". */
tl_status tl_compiler_codegen(tl_context *ctx, tl_compilation *c);

/* The layouts layout-inference chooses for the tile IR `tile` on target
 * (layouts.c): a copy lowered up to and including that pass, its buffers'
 * layouts as text into *text (malloc'd; opts->full: every element), and
 * one SVG per fragment and shared buffer written into opts->svg_dir when
 * set (created when missing; the files named at the end of the text,
 * "svg: DIR/FILE").  Errors:
 * TL_ERR_COMPILE (diagnostics in ctx->diag), TL_ERR_IO (a file that cannot
 * be written), TL_ERR_NO_MEMORY. */
tl_status tl_compiler_layouts(tl_context *ctx, const tl_module *tile, const tl_target *target,
                              const tl_layout_dump_options *opts, char **text);

/* Completes c->times (total since t0, other = the rest) and copies them to
 * *opts->times when set. */
void tl_compilation_report_times(tl_compilation *c);

#endif
