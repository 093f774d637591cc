/* NVPTX emission: the second half of lib/NVPTX.
 *
 * Role: tl_nvptx_emit turns a lowered SIMT module into PTX text:
 *   1. one LLVM context per call (so distinct calls can run on distinct
 *      threads), with a diagnostic handler that turns LLVM errors into
 *      tl_diag errors (without it a backend error exits the process);
 *   2. a target machine for nvptx64-nvidia-cuda and the target's SM and PTX
 *      version (Support/target.c); the module takes the machine's data layout;
 *   3. codegen*.c build the kernels;
 *   4. if the kernels call libdevice (__nv_* declarations), libdevice.10.bc
 *      is read lazily into the same context with its definitions turned
 *      linkonce_odr, so the linker brings in (and the reader materialises)
 *      only the functions the kernels reach; then every non-kernel definition is internalised and the module flag
 *      nvvm-reflect-ftz = 0 resolves libdevice's __nvvm_reflect branches
 *      (docs/codegen.md "Math and libdevice");
 *   5. LLVMVerifyModule (return-status mode), the optimisation pipeline
 *      (TL_DEFAULT_PASSES below: default<O3> cut down, ~30% less time for
 *      the same or better SASS; or $TL_LLVM_PASSES) with the
 *      target machine, the IR text is printed when asked (it costs ~1 ms
 *      for a GEMM), and LLVMTargetMachineEmitToMemoryBuffer writes PTX
 *      (consuming the module).
 * A target machine is created per call: measured 0.03 ms once LLVM is warm
 * (0.3 ms the first time), and one shared between threads would not be safe
 * (NVPTX's target machine keeps mutable state used while emitting).
 * LLVM's process-global state is touched once: target initialisation and
 * a warm-up compilation of an empty kernel (warm_up_llvm) under pthread_once.  No LLVMParseCommandLineOptions, no fatal-error handler. */
#include "NVPTX/nvptx_internal.h"

#include <llvm-c/Analysis.h>
#include <llvm-c/BitReader.h>
#include <llvm-c/Linker.h>
#include <llvm-c/Target.h>
#include <llvm-c/TargetMachine.h>
#include <llvm-c/Transforms/PassBuilder.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define TL_TRIPLE "nvptx64-nvidia-cuda"
/* The optimisation pipeline (new pass manager text for LLVMRunPasses): the
 * passes of default<O3> (as `opt -passes='default<O3>' -print-pipeline-passes`
 * prints them for LLVM 19), in its order and with its parameters, less every
 * pass whose removal changed neither the registers, nor the spills, nor the
 * SASS instruction count (whole kernel and the largest loop) of any of the 15
 * kernels of examples/ (ptxas -arch=sm_90a -v, nvdisasm), removed one at a
 * time (greedily) and checked against default<O3>: gemm (also 4096^3 with
 * 256x128x32 tiles, 4 stages, 256 threads), flash attention and softmax come
 * out the same or better; it takes ~30% less time (gemm.py: 18 vs 27 ms).
 * What remains is what lowered kernels need: every loop but the pipelined
 * one carries llvm.loop.unroll.full and fragments are allocas, so hoist what
 * is invariant (licm) before full unrolling, unroll, promote the fragments
 * (sroa), remove redundancy (gvn, instcombine).  Gone: the inter-procedural
 * passes (one kernel per module; libdevice's functions are alwaysinline),
 * loop/SLP vectorisation, partial and runtime unrolling, dse, memcpyopt,
 * sccp, jump threading and most repeated cleanups.  ipsccp stays: it
 * propagates the tid/ctaid ranges of nvvm-intr-range into address arithmetic
 * (a variant without it gave elementwise_add.py 106 SASS instructions, not 78).  No pass here can
 * change floating-point results: no fast-math flags are set, so instcombine
 * and reassociate (which then reorders integer expressions only) keep fp
 * semantics.  $TL_LLVM_PASSES="default<O3>" restores LLVM's own pipeline. */
#define TL_SCFG_OPTS                                                                                                   \
  "bonus-inst-threshold=1;no-forward-switch-cond;no-switch-to-lookup;keep-loops;"                                      \
  "speculate-blocks;simplify-cond-branch;no-speculate-unpredictables"
#define TL_ICOMB "instcombine<max-iterations=1;no-use-loop-info;no-verify-fixpoint>"
#define TL_DEFAULT_PASSES                                                                                              \
  "function(nvvm-reflect,nvvm-intr-range,"                                                                             \
  "simplifycfg<" TL_SCFG_OPTS                                                                                          \
  ";no-switch-range-to-icmp;no-hoist-common-insts;"                                                                    \
  "no-sink-common-insts>,early-cse<>),"                                                                                \
  "ipsccp,function(" TL_ICOMB                                                                                          \
  "),always-inline,globaldce,"                                                                                         \
  "function(reassociate,"                                                                                              \
  "loop-mssa(loop-rotate<header-duplication;no-prepare-for-lto>,licm<allowspeculation>),"                              \
  "simplifycfg<" TL_SCFG_OPTS                                                                                          \
  ";switch-range-to-icmp;no-hoist-common-insts;"                                                                       \
  "no-sink-common-insts>," TL_ICOMB                                                                                    \
  ",loop(indvars,loop-unroll-full),sroa<modify-cfg>,"                                                                  \
  "gvn<>,loop-mssa(licm<allowspeculation>),"                                                                           \
  "simplifycfg<" TL_SCFG_OPTS                                                                                          \
  ";switch-range-to-icmp;hoist-common-insts;"                                                                          \
  "sink-common-insts>," TL_ICOMB ")"
#define TL_DEFAULT_LIBDEVICE "/usr/local/cuda/nvvm/libdevice/libdevice.10.bc"
/* The NVPTX backend's optimisation level.  In LLVM 19 the only difference
 * between Default (O2) and Aggressive (O3) in NVPTX's codegen pipeline is
 * addEarlyCSEOrGVNPass (NVPTXTargetMachine.cpp): O3 runs GVN twice (after
 * straight-line strength reduction and after LSR), O2 EarlyCSE.  Our own
 * pipeline above already ran gvn, so those two GVNs find next to nothing
 * (over scripts/baseline-variants.txt one kernel's PTX changed, by one
 * redundant shl.b32) while costing a few percent of a compile
 * (docs/performance.md, "Measurements behind choices in the code"). */
#define TL_CODEGEN_LEVEL LLVMCodeGenLevelDefault

static const char *opt_pipeline(const tl_nvptx_options *opts);

/* A target machine for sm (e.g. "sm_90a") emitting PTX ISA ptx_version (x10),
 * or NULL: with *why set (LLVM's message, freed with LLVMDisposeMessage) when
 * LLVM has no NVPTX target, NULL when it refused the machine. */
static LLVMTargetMachineRef create_tm(const char *sm, int ptx_version, char **why) {
  LLVMTargetRef T = NULL;
  *why = NULL;
  if (LLVMGetTargetFromTriple(TL_TRIPLE, &T, why)) return NULL;
  char features[16]; /* LLVM's PTX-version feature, "+ptx80" */
  snprintf(features, sizeof features, "+ptx%d", ptx_version);
  return LLVMCreateTargetMachine(T, TL_TRIPLE, sm, features, TL_CODEGEN_LEVEL, LLVMRelocDefault, LLVMCodeModelDefault);
}

/* LLVM creates some process-global objects on first use (the timer groups of
 * the pass managers and of code generation, behind ManagedStatic mutexes); its
 * double-checked initialisation is correct, but LLVM is not built for
 * ThreadSanitizer, which then sees two compilations' first uses race.  So the
 * first use happens here, under pthread_once: an empty kernel is optimised
 * with the pipeline and emitted once (well under a millisecond). */
static void warm_up_llvm(void) {
  char *err = NULL;
  LLVMTargetMachineRef TM = create_tm(tl_target_default()->name, tl_target_default()->ptx_version, &err);
  LLVMDisposeMessage(err);
  if (!TM) return; /* the compilation that follows reports it */
  LLVMContextRef C = LLVMContextCreate();
  LLVMModuleRef M = LLVMModuleCreateWithNameInContext("tl_warm_up", C);
  LLVMSetTarget(M, TL_TRIPLE);
  LLVMValueRef f = LLVMAddFunction(M, "tl_warm_up", LLVMFunctionType(LLVMVoidTypeInContext(C), NULL, 0, 0));
  LLVMSetFunctionCallConv(f, TL_PTX_KERNEL_CC);
  LLVMBuilderRef B = LLVMCreateBuilderInContext(C);
  LLVMPositionBuilderAtEnd(B, LLVMAppendBasicBlockInContext(C, f, "entry"));
  LLVMBuildRetVoid(B);
  LLVMDisposeBuilder(B);
  LLVMPassBuilderOptionsRef po = LLVMCreatePassBuilderOptions();
  LLVMErrorRef e = LLVMRunPasses(M, opt_pipeline(NULL), TM, po);
  LLVMDisposePassBuilderOptions(po);
  if (e) LLVMConsumeError(e);
  LLVMMemoryBufferRef buf = NULL;
  char *emsg = NULL;
  if (!LLVMTargetMachineEmitToMemoryBuffer(TM, M, LLVMAssemblyFile, &emsg, &buf) && buf) LLVMDisposeMemoryBuffer(buf);
  LLVMDisposeMessage(emsg);
  LLVMDisposeModule(M);
  LLVMContextDispose(C);
  LLVMDisposeTargetMachine(TM);
}

static pthread_once_t init_once = PTHREAD_ONCE_INIT;
static void init_targets(void) {
  LLVMInitializeNVPTXTargetInfo();
  LLVMInitializeNVPTXTarget();
  LLVMInitializeNVPTXTargetMC();
  LLVMInitializeNVPTXAsmPrinter();
  warm_up_llvm();
}

static double now_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

typedef struct diag_state {
  tl_diag *d;
  int errors;
} diag_state;

/* LLVM diagnostics: errors become ours; warnings and remarks are dropped. */
static void on_llvm_diag(LLVMDiagnosticInfoRef info, void *user) {
  diag_state *st = user;
  if (LLVMGetDiagInfoSeverity(info) != LLVMDSError) return;
  char *msg = LLVMGetDiagInfoDescription(info);
  tl_error(st->d, TL_LOC_NONE, "LLVM: %s", msg ? msg : "(no message)");
  LLVMDisposeMessage(msg);
  st->errors++;
}

void tl_codegen_result_free(tl_codegen_result *r) {
  if (!r) return;
  free(r->llvm_ir);
  free(r->ptx);
  r->llvm_ir = r->ptx = NULL;
}

static char *dup_n(const char *s, size_t n) {
  char *p = malloc(n + 1);
  if (!p) return NULL;
  memcpy(p, s, n);
  p[n] = '\0';
  return p;
}

/* ---------------------------------------------------------- libdevice */
/* Links the libdevice functions that M declares (and what they reach).
 * libdevice is read lazily and its definitions are made linkonce_odr, so the
 * linker moves (and the bitcode reader materialises) only what M
 * references, transitively: parsing all of it cost ~20 ms, this ~1-2 ms. */
static bool link_libdevice(LLVMContextRef C, LLVMModuleRef M, const char *path, const char *dl, tl_diag *d) {
  char *err = NULL;
  LLVMMemoryBufferRef mb = NULL;
  if (LLVMCreateMemoryBufferWithContentsOfFile(path, &mb, &err)) {
    tl_error(d, TL_LOC_NONE, "cannot read libdevice '%s': %s (set TL_LIBDEVICE to the path of libdevice.10.bc)", path,
             err ? err : "unknown error");
    LLVMDisposeMessage(err);
    return false;
  }
  LLVMModuleRef L = NULL;
  if (LLVMGetBitcodeModuleInContext2(C, mb, &L) || !L) { /* takes mb only on success */
    LLVMDisposeMemoryBuffer(mb);
    tl_error(d, TL_LOC_NONE, "libdevice '%s' is not valid LLVM bitcode", path);
    return false;
  }
  for (LLVMValueRef f = LLVMGetFirstFunction(M); f; f = LLVMGetNextFunction(f)) {
    size_t len;
    const char *name = LLVMGetValueName2(f, &len);
    if (!LLVMIsDeclaration(f) || len < 5 || strncmp(name, "__nv_", 5) != 0) continue;
    LLVMValueRef lf = LLVMGetNamedFunction(L, name);
    if (!lf || LLVMIsDeclaration(lf)) {
      tl_error(d, TL_LOC_NONE, "libdevice '%s' has no function %s", path, name);
      LLVMDisposeModule(L);
      return false;
    }
  }
  for (LLVMValueRef f = LLVMGetFirstFunction(L); f; f = LLVMGetNextFunction(f))
    if (!LLVMIsDeclaration(f)) LLVMSetLinkage(f, LLVMLinkOnceODRLinkage);
  LLVMSetTarget(L, TL_TRIPLE);
  LLVMSetDataLayout(L, dl);
  if (LLVMLinkModules2(M, L)) { /* consumes L */
    tl_error(d, TL_LOC_NONE, "linking libdevice '%s' failed", path);
    return false;
  }
  return true;
}

static bool module_calls_libdevice(LLVMModuleRef M) {
  for (LLVMValueRef f = LLVMGetFirstFunction(M); f; f = LLVMGetNextFunction(f)) {
    size_t len;
    const char *name = LLVMGetValueName2(f, &len);
    if (LLVMIsDeclaration(f) && len >= 5 && strncmp(name, "__nv_", 5) == 0) return true;
  }
  return false;
}

void tl_nvptx_llvm_version(unsigned *major, unsigned *minor, unsigned *patch) { LLVMGetVersion(major, minor, patch); }

const char *tl_nvptx_libdevice_path(const tl_nvptx_options *opts) {
  if (opts && opts->libdevice_path && *opts->libdevice_path) return opts->libdevice_path;
  const char *env = getenv("TL_LIBDEVICE");
  if (env && *env) return env;
  return TL_DEFAULT_LIBDEVICE;
}

/* The optimisation pipeline: opts->passes, else $TL_LLVM_PASSES, else the default. */
static const char *opt_pipeline(const tl_nvptx_options *opts) {
  if (opts && opts->passes) return opts->passes;
  const char *env = getenv("TL_LLVM_PASSES");
  if (env) return env;
  return TL_DEFAULT_PASSES;
}

/* The PTX ISA version module M needs: the target's, or the larger one the
 * code generator asked for with the module flag "tl.ptx_version" (an
 * instruction newer than the target's PTX, codegen_mma.c's fp8 mma). */
static int module_ptx_version(LLVMModuleRef M, int dflt) {
  LLVMMetadataRef md = LLVMGetModuleFlag(M, "tl.ptx_version", strlen("tl.ptx_version"));
  if (!md) return dflt;
  /* the flag's value is a ConstantAsMetadata: its operand 0 is the constant */
  LLVMValueRef v = LLVMGetOperand(LLVMMetadataAsValue(LLVMGetModuleContext(M), md), 0);
  long long x = v && LLVMIsAConstantInt(v) ? LLVMConstIntGetSExtValue(v) : 0;
  return x > dflt ? (int)x : dflt;
}

/* --------------------------------------------------------------- emit */
bool tl_nvptx_emit(const tl_module *m, const tl_target *target, tl_diag *d, tl_codegen_result *out) {
  return tl_nvptx_emit_ex(m, target, NULL, d, out);
}

bool tl_nvptx_emit_ex(const tl_module *m, const tl_target *target, const tl_nvptx_options *opts, tl_diag *d,
                      tl_codegen_result *out) {
  if (!out) return false;
  memset(out, 0, sizeof *out);
  if (!m || !target) {
    tl_error(d, TL_LOC_NONE, "internal error: tl_nvptx_emit needs a module and a target");
    return false;
  }
  pthread_once(&init_once, init_targets);
  double t0 = now_ms();

  char *err = NULL;
  LLVMTargetMachineRef TM = create_tm(target->name, target->ptx_version, &err);
  if (!TM) {
    if (err) tl_error(d, TL_LOC_NONE, "LLVM has no NVPTX target: %s", err);
    else tl_error(d, TL_LOC_NONE, "LLVM cannot create a target machine for %s", target->name);
    LLVMDisposeMessage(err);
    return false;
  }
  LLVMContextRef C = LLVMContextCreate();
  /* Without a printed IR nobody reads the names of local values: dropping
   * them (LLVMContextSetDiscardValueNames) spares the passes building and
   * uniquing strings such as "%C_local.sroa.40.36.vec.extract" (~1.5% of a
   * GEMM's compile; the PTX does not depend on them: byte-identical). */
  if (opts && opts->skip_llvm_ir) LLVMContextSetDiscardValueNames(C, 1);
  diag_state ds = {d, 0};
  LLVMContextSetDiagnosticHandler(C, on_llvm_diag, &ds);
  LLVMModuleRef M = LLVMModuleCreateWithNameInContext(m->filename ? m->filename : "tilelang", C);
  LLVMSetTarget(M, TL_TRIPLE);
  LLVMTargetDataRef TD = LLVMCreateTargetDataLayout(TM);
  char *dl = LLVMCopyStringRepOfTargetData(TD);
  LLVMDisposeTargetData(TD);
  LLVMSetDataLayout(M, dl);
  LLVMAddModuleFlag(M, LLVMModuleFlagBehaviorOverride, "nvvm-reflect-ftz", 16,
                    LLVMValueAsMetadata(LLVMConstInt(LLVMInt32TypeInContext(C), 0, 0)));

  bool ok = tl_nvptx_build(M, m, target, !(opts && opts->no_line_info), d);
  int ptxv = module_ptx_version(M, target->ptx_version);
  if (ok && ptxv != target->ptx_version) { /* a newer instruction's PTX ISA version (fp8 mma: 8.4) */
    LLVMDisposeTargetMachine(TM);
    TM = create_tm(target->name, ptxv, &err);
    if (!TM) {
      tl_error(d, TL_LOC_NONE, "LLVM cannot create a target machine for %s with PTX %d.%d", target->name, ptxv / 10,
               ptxv % 10);
      LLVMDisposeMessage(err);
      LLVMDisposeModule(M);
      LLVMContextDispose(C);
      LLVMDisposeMessage(dl);
      return false;
    }
  }
  double t1 = now_ms();
  out->ms_build = t1 - t0;
  if (ok && module_calls_libdevice(M)) ok = link_libdevice(C, M, tl_nvptx_libdevice_path(opts), dl, d);
  if (ok) {
    /* Internalise everything but the kernels so the pipeline drops what is
     * unused, and mark the other functions (libdevice's, already
     * alwaysinline there) alwaysinline: the pipeline inlines with
     * always-inline only. */
    unsigned ai = LLVMGetEnumAttributeKindForName("alwaysinline", 12);
    unsigned ni = LLVMGetEnumAttributeKindForName("noinline", 8);
    for (LLVMValueRef f = LLVMGetFirstFunction(M); f; f = LLVMGetNextFunction(f))
      if (!LLVMIsDeclaration(f) && LLVMGetFunctionCallConv(f) != TL_PTX_KERNEL_CC) {
        LLVMSetLinkage(f, LLVMInternalLinkage);
        if (!LLVMGetEnumAttributeAtIndex(f, LLVMAttributeFunctionIndex, ni) &&
            !LLVMGetEnumAttributeAtIndex(f, LLVMAttributeFunctionIndex, ai))
          LLVMAddAttributeAtIndex(f, LLVMAttributeFunctionIndex, LLVMCreateEnumAttribute(C, ai, 0));
      }
    for (LLVMValueRef gv = LLVMGetFirstGlobal(M); gv; gv = LLVMGetNextGlobal(gv))
      if (!LLVMIsDeclaration(gv)) LLVMSetLinkage(gv, LLVMInternalLinkage);
  }
  double t2 = now_ms();
  out->ms_link = t2 - t1;
  if (ok) {
    char *msg = NULL;
    if (LLVMVerifyModule(M, LLVMReturnStatusAction, &msg)) {
      tl_error(d, TL_LOC_NONE, "internal error: the generated LLVM IR is invalid: %s", msg ? msg : "");
      ok = false;
    }
    LLVMDisposeMessage(msg);
  }
  const char *passes = opt_pipeline(opts);
  if (ok && !(opts && opts->skip_opt) && *passes) {
    LLVMPassBuilderOptionsRef po = LLVMCreatePassBuilderOptions();
    LLVMErrorRef e = LLVMRunPasses(M, passes, TM, po);
    LLVMDisposePassBuilderOptions(po);
    if (e) {
      char *emsg = LLVMGetErrorMessage(e);
      tl_error(d, TL_LOC_NONE, "LLVM optimisation failed: %s", emsg ? emsg : "");
      LLVMDisposeErrorMessage(emsg);
      ok = false;
    }
    if (ds.errors) ok = false;
  }
  double t3 = now_ms();
  out->ms_opt = t3 - t2;
  if (ok && !(opts && opts->skip_llvm_ir)) {
    char *ir = LLVMPrintModuleToString(M);
    out->llvm_ir = ir ? dup_n(ir, strlen(ir)) : NULL;
    LLVMDisposeMessage(ir);
    if (!out->llvm_ir) {
      tl_error(d, TL_LOC_NONE, "out of memory");
      ok = false;
    }
  }
  if (ok) {
    LLVMMemoryBufferRef buf = NULL;
    char *emsg = NULL;
    if (LLVMTargetMachineEmitToMemoryBuffer(TM, M, LLVMAssemblyFile, &emsg, &buf) || ds.errors) {
      if (!ds.errors || emsg)
        tl_error(d, TL_LOC_NONE, "LLVM could not emit PTX for %s: %s", target->name, emsg ? emsg : "(see above)");
      ok = false;
    } else {
      out->ptx = dup_n(LLVMGetBufferStart(buf), LLVMGetBufferSize(buf));
      if (!out->ptx) {
        tl_error(d, TL_LOC_NONE, "out of memory");
        ok = false;
      }
    }
    LLVMDisposeMessage(emsg);
    if (buf) LLVMDisposeMemoryBuffer(buf);
  }
  out->ms_emit = now_ms() - t3;
  LLVMDisposeModule(M);
  LLVMContextDispose(C);
  LLVMDisposeMessage(dl);
  LLVMDisposeTargetMachine(TM);
  if (!ok) tl_codegen_result_free(out);
  return ok;
}
