/* libtilelang runtime: compile a TileLang kernel file to PTX, load it with
 * the CUDA driver, bind DLPack tensors and scalars, allocate out_idx
 * outputs and launch on the caller's stream.
 *
 * The CUDA driver (libcuda.so.1) is loaded with dlopen on first use; the
 * library does not link it.  Everything except loading and launching works
 * without a driver or GPU (compiling, reading the PTX, introspection); calls
 * that need the GPU then fail with TL_ERR_NO_DEVICE and a message saying why
 * (library missing, stub library, cuInit failed, no device).
 *
 * Tensors cross the API as DLPack 0.6 DLTensors (bool as uint8/int8: DLPack
 * 0.6 has no bool code; float8_e4m3 and float8_e5m2 as 8-bit integer tensors
 * (kDLUInt or kDLInt, bits 8) holding the float8 codes, the format taken
 * from the kernel's parameter dtype: DLPack 0.6 has no float8 code, and the
 * header used, /usr/include/dlpack/dlpack.h, is 0.6; outputs the library
 * allocates are kDLUInt 8).  Ownership is stated on every call; nothing here
 * exits or aborts on bad input.  Messages go to tl_context_last_error. */
#ifndef TILELANG_RUNTIME_H
#define TILELANG_RUNTIME_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <dlpack/dlpack.h>

#include "tilelang/core.h"
#include "tilelang/ir.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ------------------------------------------------------------- device */
/* Checks that the CUDA driver loads, cuInit(0) succeeds and at least one
 * device exists.  TL_OK, or TL_ERR_NO_DEVICE with the reason in
 * tl_context_last_error (ctx may be NULL: then only the status).  The
 * driver is loaded once per process (thread-safe); the environment
 * variable TL_CUDA_DRIVER may name another library file to dlopen instead
 * of "libcuda.so.1" (for tests). */
TL_API tl_status tl_device_check(tl_context *ctx);

/* Number of CUDA devices (cuDeviceGetCount) in *count; 0 and
 * TL_ERR_NO_DEVICE when no driver is usable. */
TL_API tl_status tl_device_count(tl_context *ctx, int *count);

/* The compile target for CUDA device ordinal `device`, from its compute
 * capability (cuDeviceGetAttribute COMPUTE_CAPABILITY_MAJOR/MINOR): 9.0 →
 * "sm_90a", 8.0/8.6/8.9 → "sm_80"/"sm_86"/"sm_89", other 8.x → "sm_80",
 * newer than 9.0 → "sm_90" (PTX JIT-compiled forward); without a driver, or
 * for an ordinal that does not exist → "sm_80" (whose PTX also runs on
 * Hopper).  Static string.  A kernel runs on a device only when its target
 * fits that device's compute capability (tl_kernel_load): compile with
 * tl_device_target(N) for a kernel meant for device N. */
TL_API const char *tl_device_target(int device);

/* The compile target the runtime picks when none is given:
 * tl_device_target(0). */
TL_API const char *tl_device_default_target(void);

/* The target a compile with tl_compile_options.target = target uses: target
 * itself (not checked: tl_target_supported), or tl_device_default_target()
 * when NULL (auto).  The one resolution of "auto": tl_kernel_compile, the
 * tuner, tl_gemm_configs_target and the tools use it.  Static or the
 * caller's string. */
TL_API const char *tl_target_resolve(const char *target);

/* True when name is a compile target this library supports ("sm_80",
 * "sm_86", "sm_89", "sm_90", "sm_90a"; docs/codegen.md "Targets and PTX versions").  NULL gives false. */
TL_API bool tl_target_supported(const char *name);
/* The supported target names for messages ("sm_80, sm_86, sm_89, sm_90 or
 * sm_90a"); static. */
TL_API const char *tl_target_list(void);

/* ------------------------------------------------------------ compile */
/* How out_idx is chosen (TileLang semantics, docs/language.md "out_idx"). */
typedef enum tl_out_idx_mode {
  TL_OUT_IDX_FROM_FILE = 0, /* the file's @tilelang.jit(out_idx=...) (none if absent) */
  TL_OUT_IDX_NONE = 1,      /* out_idx none: the caller passes every tensor */
  TL_OUT_IDX_LIST = 2       /* the list in tl_compile_options.out_idx */
} tl_out_idx_mode;

/* tl_compile_options.flags */
enum {
  /* Fill every newly allocated output with 0xFF bytes before the launch (a
   * NaN in every float dtype, all-ones in integers), on the call's stream, so
   * that elements the kernel does not write show. */
  TL_COMPILE_POISON_OUTPUTS = 1u << 0,
  /* Keep the optimised LLVM IR text for tl_kernel_llvm_ir (what
   * `tl-opt --emit=llvm` prints).  Off by default: printing the module costs
   * a few milliseconds per GEMM, and without the flag tl_kernel_llvm_ir
   * returns "" (it is also kept when tl_compile_options.after_stage is set). */
  TL_COMPILE_KEEP_LLVM_IR = 1u << 1,
/* The pass configs, one flag each (include/tilelang/pass_configs.def has
   * the keys, their bits and what each does): TL_COMPILE_FAST_MATH
   * ("tl.enable_fast_math", as nvcc --use_fast_math; the CPU executors
   * compute exactly either way), TL_COMPILE_DISABLE_WGMMA,
   * TL_COMPILE_DISABLE_TMA_LOWER, TL_COMPILE_DISABLE_WARP_SPECIALIZED (each
   * keeps an sm_90a GEMM main loop on cp.async + mma.sync),
   * TL_COMPILE_INDEX_BITWIDTH_64 ("tl.config_index_bitwidth" = 64),
   * TL_COMPILE_ENABLE_STREAM_K, TL_COMPILE_DISABLE_TMA_STORE,
   * TL_COMPILE_ATTENTION_PINGPONG, TL_COMPILE_ATTENTION_OVERLAP,
   * TL_COMPILE_ATTENTION_PERSISTENT (docs/simt-ir.md).  A flag sets its
   * config whether or not the file does. */
#define TL_PASS_CONFIG(field, NAME, key, bit, kind, dflt, doc) TL_COMPILE_##NAME = 1u << (bit),
#include "tilelang/pass_configs.def"
  /* The configs of kind SCHEDULE (the attention schedules): the only pass
   * configs whose False differs from absent (tl_compile_options.flags_false
   * takes these bits; tl_pass_config_false_flags returns this mask for
   * bindings that cannot read enums). */
  TL_COMPILE_ATTENTION_SCHEDULE = 0u
#define TL_PASS_CONFIG_KIND_BOOL 0u
#define TL_PASS_CONFIG_KIND_BITWIDTH 0u
#define TL_PASS_CONFIG_KIND_SCHEDULE 1u
#define TL_PASS_CONFIG(field, NAME, key, bit, kind, dflt, doc) | (TL_PASS_CONFIG_KIND_##kind << (bit))
#include "tilelang/pass_configs.def"
#undef TL_PASS_CONFIG_KIND_BOOL
#undef TL_PASS_CONFIG_KIND_BITWIDTH
#undef TL_PASS_CONFIG_KIND_SCHEDULE
};

/* Compilation stages, for tl_compile_options.stop_after. */
typedef enum tl_stage {
  TL_STAGE_PTX = 0, /* everything: parse, lower, LLVM IR, PTX */
  TL_STAGE_SIMT = 1 /* parse and lower only (SIMT IR, docs/simt-ir.md) */
} tl_stage;

/* Wall-clock time of each compilation stage, in milliseconds
 * (CLOCK_MONOTONIC), filled when tl_compile_options.times is non-NULL.
 * The stages partition the call: total is the whole tl_kernel_compile(_file)
 * (reading the file included) and other is what the named stages leave out
 * (file reading, the signature and alignment scans, printing the SIMT IR,
 * after_stage callbacks).
 * With stop_after = TL_STAGE_SIMT the LLVM stages are 0. */
typedef struct tl_compile_times {
  /* tl_module_parse: lexing, parsing, elaboration of the factory, folding,
   * verification (once), and the deep copy of the tile IR that lowering
   * rewrites (the reference evaluator keeps the original) */
  double parse;
  /* the lowering passes before lower-tile-ops, on tile IR (check-supported,
   * pipeline, barriers, layout-inference, ...; lib/Lower/pipeline.c) */
  double tile_passes;
  /* lower-tile-ops and every lowering pass after it (rasterize, smem-plan,
   * ...): the passes that produce and refine SIMT IR */
  double simt;
  /* SIMT IR → LLVM IR: LLVM target set-up, building the module, linking
   * libdevice when math calls need it */
  double llvm_ir;
  /* LLVMVerifyModule and the optimisation pipeline (default<O3>'s function
   * simplification cut down to what lowered kernels need; lib/NVPTX/emit.c) */
  double opt;
  /* printing the optimised LLVM IR (only when kept: TL_COMPILE_KEEP_LLVM_IR
   * or after_stage) and the NVPTX backend writing PTX */
  double ptx;
  double other;
  double total;
} tl_compile_times;

/* tl_compile_options.cache.  The disk cache keeps the PTX and launch
 * metadata of full compiles (stop_after = TL_STAGE_PTX) under a hash of the
 * canonical tile IR after binding (comments, whitespace, host code and the
 * file's path do not count, except with line information, the default:
 * then the file's name and text do, as the PTX's .file/.loc name them), the target, the flags, out_idx, the kernel
 * option, the compiler's version and binary, LLVM's version, the libdevice
 * file and $TL_LLVM_PASSES (lib/Runtime/cache.h has the entry format).
 * Directory: $TL_CACHE_DIR, else $XDG_CACHE_HOME/tilelang-ptx, else
 * ~/.cache/tilelang-ptx; $TL_CACHE=0 turns it off for the process.  Size
 * cap: $TL_CACHE_MAX_MB mebibytes (default 1024); past it the least
 * recently used entries are deleted down to 3/4 of the cap.  Not consulted
 * (TL_CACHE_RESULT_OFF) for stop_after = TL_STAGE_SIMT, an after_stage
 * callback, TL_COMPILE_KEEP_LLVM_IR or remarks (those want the
 * stages to run); a compile that warned during lowering or code generation
 * is not stored (its warnings would be lost on a hit).  A kernel loaded from
 * the cache has no SIMT module until the CPU SIMT executor first needs it
 * (it is lowered again then); its tl_kernel_llvm_ir is "". */
typedef enum tl_cache_use {
  TL_CACHE_USE_DEFAULT = 0, /* read and write the cache (unless $TL_CACHE=0) */
  TL_CACHE_USE_OFF = 1,     /* neither read nor write it in this call */
  TL_CACHE_USE_REFRESH = 2  /* do not read it: compile and store over the entry */
} tl_cache_use;

/* What the cache did for a kernel's compile (tl_kernel_cache_result). */
typedef enum tl_cache_result {
  TL_CACHE_RESULT_OFF = 0,  /* not consulted (see tl_cache_use) */
  TL_CACHE_RESULT_MISS = 1, /* no entry: compiled, and stored (best effort: a failed store, e.g. a full or
                               * read-only directory, adds one warning per process and is no error) */
  TL_CACHE_RESULT_HIT = 2,  /* loaded from the cache: nothing was lowered */
  /* the entry was truncated or corrupt (checksum): compiled, stored over
   * it, and a warning in tl_context_warnings */
  TL_CACHE_RESULT_CORRUPT = 3
} tl_cache_result;

typedef struct tl_compile_options {
  /* "sm_80", "sm_86", "sm_89", "sm_90", "sm_90a"; NULL = auto
   * (tl_device_default_target). */
  const char *target;
  tl_out_idx_mode out_idx_mode;
  /* For TL_OUT_IDX_LIST: n_out_idx indices into the prim_func's parameter
   * list (scalars count); negative values count from the end (-1 = last).
   * Each must name a distinct tensor parameter.  Borrowed for the call. */
  const int *out_idx;
  size_t n_out_idx;
  unsigned flags;   /* TL_COMPILE_* */
  bool verify_each; /* run the IR verifier after every lowering pass */
  /* Last stage to run: TL_STAGE_PTX (the default, 0) compiles fully; with
   * TL_STAGE_SIMT code generation is skipped, so the kernel has only its SIMT
   * IR text (tl_kernel_ptx returns "" and calls fail with
   * TL_ERR_INVALID_ARGUMENT). */
  tl_stage stop_after;
  /* If non-NULL, called after every stage with its name ("parse", then each
   * lowering pass by name, "llvm", "ptx") and its printed text (borrowed for
   * the call): what `tl-opt --print-after-all` shows. */
  void (*after_stage)(void *user, const char *stage, const char *text);
  void *after_stage_user;
  /* If non-NULL, receives the time of each stage (also when compilation
   * fails: the stages that ran; not written when the arguments are invalid
   * or the file cannot be read).  Time spent in after_stage callbacks
   * (printing each stage's text included) counts in `other`. */
  tl_compile_times *times;
  /* The Python name of the factory or @T.prim_func to compile (as
   * tl_module_parse_kernel); NULL: the file's first kernel. */
  const char *kernel;
  /* The disk cache of compiled kernels for this call (0 =
   * TL_CACHE_USE_DEFAULT). */
  tl_cache_use cache;
  /* The SM count persistent Hopper GEMMs plan their grid for (min(tiles,
   * sms) blocks, stream-K's split of the work): 0 = device 0's
   * multiprocessor count when compiling for its own target (the default
   * target, or that target named) and a driver is present, else the
   * target's (132 on sm_90a, the H200's).  Tests use small counts so that small shapes run
   * several tiles per block or tiles over several blocks on the CPU
   * executor (tl-run / tl-opt --sms=N).  Part of the cache key. */
  int sms;
  /* Pass configs given as False: TL_COMPILE_ATTENTION_SCHEDULE's bits
   * (others are ignored).  Unlike an absent config, one given False keeps
   * the sm_90a attention form's default schedule from choosing it (the
   * default applies only when none of the three is given either way;
   * docs/hopper.md "FlashAttention").  A bit also in flags is an error
   * (TL_ERR_INVALID_ARGUMENT).  Part of the cache key. */
  unsigned flags_false;
  /* Remarks: the lowering says which path each T.Pipelined GEMM or
   * attention loop took and why (tl-opt --remarks), in
   * tl_context_warnings (the option is the only switch: no environment
   * variable turns them on).  The cache is not consulted then (the remarks
   * come from the stages). */
  bool remarks;
  /* No source line information in the PTX (tl-opt / tl-run --no-line-info,
   * -g0).  By default every statement's file:line:col of the kernel file
   * becomes a `.loc` directive (with the file's `.file`, named as the file
   * was given), which ptxas turns into the cubin's line table (what
   * compute-sanitizer, cuda-gdb and Nsight Compute show) without changing
   * the machine code (docs/codegen.md "Line information").  Part of the
   * cache key; with line information the key also covers the file's name
   * and its text (the lines move with comments). */
  bool no_line_info;
} tl_compile_options;

/* A compiled kernel: the PTX (and intermediate texts), the parameter
 * signature, out_idx, the launch expressions and, once used on a device, a
 * loaded CUDA module per device.  Opaque; may be called from several
 * threads at once, each with its own tl_context. */
typedef struct tl_kernel tl_kernel;

/* The TL_COMPILE_* flag of a pass config, by its key as TileLang spells it
 * (the keys of include/tilelang/pass_configs.def: "tl.enable_fast_math",
 * "tl.disable_wgmma", ...); the first len bytes of key are compared.
 * Returns the flag, or 0 for a key that is none of these. */
TL_API unsigned tl_pass_config_flag(const char *key, size_t len);
/* The pass-config keys, comma-separated in table order (static storage). */
TL_API const char *tl_pass_config_flag_keys(void);
/* TL_COMPILE_ATTENTION_SCHEDULE: the flags of the pass configs that may be
 * given False (tl_compile_options.flags_false), for language bindings. */
TL_API unsigned tl_pass_config_false_flags(void);
/* Applies pass config key = value (value as Python writes it: "True",
 * "False" (also "true", "false", "1", "0") for the boolean configs, "32" or
 * "64" for "tl.config_index_bitwidth"; NULL means "True") to *flags and
 * *flags_false: True (64) sets the config's flag in *flags and clears it in
 * *flags_false; False (32) clears it in *flags and, for the attention
 * schedules (TL_COMPILE_ATTENTION_SCHEDULE), sets it in *flags_false.
 * What tl-run --pass-config and the Python package's pass_configs use.
 * Errors: TL_ERR_INVALID_ARGUMENT with a message in ctx naming the key and
 * the known keys (an unknown key) or the value and the expected ones; NULL
 * ctx, key, flags or flags_false. */
TL_API tl_status tl_pass_config_apply(tl_context *ctx, const char *key, const char *value, unsigned *flags,
                                      unsigned *flags_false);

/* Compiles TileLang source: parse (tl_module_parse) → lower → LLVM → PTX.
 *   source/len, filename, defines/ndefines: as tl_module_parse (borrowed).
 *   opts: NULL = all defaults (auto target, out_idx from the file).
 * The first @T.prim_func of the file is compiled.  No GPU is needed; the
 * PTX is loaded on first call (or tl_kernel_load).  On success *out owns the
 * kernel (tl_kernel_destroy).  Errors: TL_ERR_INVALID_ARGUMENT (NULL
 * pointers, unknown target, bad out_idx: out of range, duplicate, a scalar),
 * TL_ERR_COMPILE (diagnostics), TL_ERR_UNSUPPORTED (a grid/shape expression
 * the runtime cannot evaluate, an output dim no input binds),
 * TL_ERR_NO_MEMORY. */
TL_API tl_status tl_kernel_compile(tl_context *ctx, const char *source, size_t len, const char *filename,
                                   const tl_define *defines, size_t ndefines, const tl_compile_options *opts,
                                   tl_kernel **out);
/* As tl_kernel_compile on the file at path (TL_ERR_IO if unreadable). */
TL_API tl_status tl_kernel_compile_file(tl_context *ctx, const char *path, const tl_define *defines, size_t ndefines,
                                        const tl_compile_options *opts, tl_kernel **out);
/* Unloads the kernel's modules, releases the primary contexts it retained
 * and frees it.  NULL is allowed.  No launch of it may still be pending
 * (synchronize its streams first). */
TL_API void tl_kernel_destroy(tl_kernel *k);

/* Texts owned by the kernel (valid until tl_kernel_destroy), NUL-terminated:
 * the PTX handed to cuModuleLoadDataEx, the optimised LLVM IR (as given to
 * the backend; "" unless compiled with TL_COMPILE_KEEP_LLVM_IR or an
 * after_stage callback, and "" with stop_after = TL_STAGE_SIMT), the SIMT IR
 * (tl-opt --emit=simt).  NULL for NULL k. */
TL_API const char *tl_kernel_ptx(const tl_kernel *k);
TL_API const char *tl_kernel_llvm_ir(const tl_kernel *k);
TL_API const char *tl_kernel_simt_ir(const tl_kernel *k);
/* What the disk cache did when k was compiled (TL_CACHE_RESULT_OFF for NULL
 * k or a kernel built by hand). */
TL_API tl_cache_result tl_kernel_cache_result(const tl_kernel *k);
/* The cache key of k as 32 hex digits (the entry is
 * <cache dir>/<key>.tlk), or "" when the cache was not consulted.  Owned by
 * k. */
TL_API const char *tl_kernel_cache_key(const tl_kernel *k);
/* The target the kernel was compiled for ("sm_90a") and its entry name. */
TL_API const char *tl_kernel_target(const tl_kernel *k);
TL_API const char *tl_kernel_name(const tl_kernel *k);

/* The layouts layout inference chose for every buffer of k's kernel, as
 * tl_module_dump_layouts (ir.h) on k's tile IR for k's target.  Errors as
 * there, and TL_ERR_INVALID_ARGUMENT for a kernel without tile IR (built by
 * hand). */
TL_API tl_status tl_kernel_dump_layouts(tl_context *ctx, tl_kernel *k, const tl_layout_dump_options *opts, char **text);

/* Ahead-of-time export (docs/aot.md): writes compiled kernel k as a C header (h_path) and a C source (c_path)
 * that embed its PTX (and, with opts->cubin, a cubin ptxas made for k's target, tried first on a device of
 * that architecture, the PTX kept as the fallback) and run it with the CUDA driver API alone: a program
 * built with `cc NAME.c app.c -lcuda` calls the kernel without this library.  The exported function takes
 * every parameter in the kernel's order (tensors as DLTensor pointers, scalars as int64_t or double) and a
 * CUstream, checks the arguments as tl_kernel_call does, with the same texts (lib/Runtime/arg_messages.h),
 * and launches; out_idx outputs are the caller's tensors or allocated by the call.  The header's comment is
 * its contract.  opts->name is the C prefix of the exported names (an identifier; NULL: the kernel's
 * entry name); opts->source names the kernel file in the header's comment (may be NULL).
 * Errors: TL_ERR_INVALID_ARGUMENT (NULL k or path, a name that is no C identifier, a kernel without PTX),
 * TL_ERR_UNSUPPORTED (a kernel with tensor maps or workspaces, sm_90a's TMA and stream-K: not exported
 * yet; a scalar of a dtype the export does not encode), TL_ERR_IO (a file could not be written). */
typedef struct tl_export_options {
  const char *name;    /* C prefix of the exported API (NULL: tl_kernel_name) */
  const char *source;  /* the kernel's file, for the header's comment (NULL: none) */
  bool cubin;          /* also embed a cubin from ptxas ($TL_PTXAS, else ptxas on $PATH, else
                           /usr/local/cuda/bin/ptxas); when ptxas is missing or fails, PTX alone */
  bool cubin_embedded; /* out: whether a cubin was embedded */
  /* the outputs, when not k's own out_idx (the Python package keeps out_idx itself): n_out_idx parameter
   * indices (negative from the end) when has_out_idx, normalized as tl_kernel_normalize_out_idx does */
  bool has_out_idx;
  const int *out_idx;
  size_t n_out_idx;
} tl_export_options;
TL_API tl_status tl_kernel_export_c(tl_context *ctx, const tl_kernel *k, const char *h_path, const char *c_path,
                                    tl_export_options *opts);

/* Replaces the PTX of compiled kernel k with a copy of ptx (NUL-terminated):
 * another build of the same kernel, e.g. an older compiler's or a hand-edited
 * one, for timing two builds of one kernel in one process (what Triton's
 * TRITON_KERNEL_OVERRIDE serves).  Everything else of k (launch geometry,
 * parameters, tensor maps, out_idx) stays; so the text must declare
 * `.entry <tl_kernel_name(k)>(` with the same parameter list as k's own PTX
 * (each parameter's state space, type, alignment and array size; names may
 * differ).  Checked: TL_ERR_INVALID_ARGUMENT naming the first difference
 * (no such entry, a parameter count, parameter i's declaration), or when k
 * was already loaded on a device (tl_kernel_load or a call: replace before
 * the first) or has no PTX (stop_after = TL_STAGE_SIMT).  Semantics beyond
 * the signature (what the kernel computes, its shared memory needs within
 * the launch's dynamic size) are the caller's responsibility.  Thread-safe
 * against nothing: call it before k is shared. */
TL_API tl_status tl_kernel_set_ptx(tl_context *ctx, tl_kernel *k, const char *ptx);

/* --------------------------------------------------------- introspection */
/* Parameters in prim_func order (outputs included).  Indices 0..count-1;
 * out-of-range indices give 0 / NULL / false. */
TL_API int tl_kernel_param_count(const tl_kernel *k);
TL_API const char *tl_kernel_param_name(const tl_kernel *k, int i);
TL_API bool tl_kernel_param_is_tensor(const tl_kernel *k, int i);
/* Element dtype of a tensor, dtype of a scalar. */
TL_API tl_dtype tl_kernel_param_dtype(const tl_kernel *k, int i);
/* Number of dims of a tensor (0 for scalars). */
TL_API int tl_kernel_param_ndim(const tl_kernel *k, int i);
/* Dim d of tensor i: returns true with *value set when it is a constant;
 * false when it depends on dynamic symbols, with *symbol (if non-NULL) set to
 * the symbol's name when the dim is exactly one symbol, else to NULL. */
TL_API bool tl_kernel_param_dim(const tl_kernel *k, int i, int d, int64_t *value, const char **symbol);
/* Element stride d of a T.StridedTensor parameter i: true with *value set
 * when the declared stride is a constant; false otherwise, with *symbol (if
 * non-NULL) set to the stride's T.dynamic symbol name when it is exactly one
 * symbol, else to NULL -- also for a compact (row-major) parameter, which
 * declares no strides. */
TL_API bool tl_kernel_param_stride(const tl_kernel *k, int i, int d, int64_t *value, const char **symbol);
/* True when parameter i is an output of out_idx (allocated by the call). */
TL_API bool tl_kernel_param_is_output(const tl_kernel *k, int i);
/* Normalized out_idx (0 <= idx < count, given order); *n = 0 for none. */
TL_API const int *tl_kernel_out_idx(const tl_kernel *k, int *n);
/* out_idx idx[0..n) (as tl_compile_options.out_idx: negative counts from
 * the end, scalars count) normalized against k's parameters by the rule
 * tl_kernel_compile applies, into norm[0..n) (0 <= norm[j] < param count,
 * given order); for bindings that allocate outputs themselves (the Python
 * package).  Errors: TL_ERR_INVALID_ARGUMENT naming the entry and why (out
 * of range, a parameter named twice, a scalar parameter, a T.StridedTensor
 * parameter: an output is allocated compact, which its strides do not
 * address); NULL k, or NULL idx/norm with n > 0. */
TL_API tl_status tl_kernel_normalize_out_idx(tl_context *ctx, const tl_kernel *k, const int *idx, size_t n, int *norm);
/* Required alignment in bytes of data + byte_offset of tensor i (its
 * element size, raised to the widest vector access the kernel makes). */
TL_API int tl_kernel_param_alignment(const tl_kernel *k, int i);
/* Dynamic shared memory per block in bytes. */
TL_API int64_t tl_kernel_smem_bytes(const tl_kernel *k);

/* --------------------------------------------------------------- calling */
typedef enum tl_arg_kind { TL_ARG_TENSOR = 0, TL_ARG_INT = 1, TL_ARG_FLOAT = 2 } tl_arg_kind;
/* One call argument: a DLTensor (borrowed; must stay alive until the launch
 * completes on the stream), an integer or a float scalar. */
typedef struct tl_arg {
  tl_arg_kind kind;
  union {
    DLTensor *tensor;
    int64_t i;
    double f;
  } v;
} tl_arg;
static inline tl_arg tl_arg_tensor(DLTensor *t) {
  tl_arg a;
  a.kind = TL_ARG_TENSOR;
  a.v.tensor = t;
  return a;
}
static inline tl_arg tl_arg_int(int64_t i) {
  tl_arg a;
  a.kind = TL_ARG_INT;
  a.v.i = i;
  return a;
}
static inline tl_arg tl_arg_float(double f) {
  tl_arg a;
  a.kind = TL_ARG_FLOAT;
  a.v.f = f;
  return a;
}

/* Loads the kernel's PTX on CUDA device `device` (cuModuleLoadDataEx in the
 * device's primary context) unless already loaded; tl_kernel_call does this
 * lazily for the device of its tensors.  Each device gets its own module,
 * loaded once (thread-safe: concurrent first calls on one device load it
 * once).  Errors: TL_ERR_NO_DEVICE, TL_ERR_INVALID_ARGUMENT (an ordinal
 * that does not exist: "device cuda:3 does not exist (2 CUDA device(s))"),
 * TL_ERR_UNSUPPORTED (the kernel's target does not fit the device's compute
 * capability: an sm_90a kernel runs only on 9.0, another target's on its
 * architecture and newer ones; the message names the kernel, its target,
 * the device, its compute capability and the target that fits it,
 * tl_device_target), TL_ERR_CUDA (the driver's error name and string plus
 * the JIT error and info logs). */
TL_API tl_status tl_kernel_load(tl_context *ctx, tl_kernel *k, int device);

/* Launches the kernel.
 *   args/nargs: the parameters in prim_func order WITHOUT the out_idx outputs
 *     (as TileLang's call): a tensor parameter takes TL_ARG_TENSOR, an
 *     integer/bool scalar TL_ARG_INT (range-checked against its dtype), a
 *     float scalar TL_ARG_FLOAT or TL_ARG_INT.  A tensor parameter that the
 *     kernel never reads or writes and whose shape is static may take a NULL
 *     tensor (tl_arg_tensor(NULL), TileLang's None): it is not checked and
 *     the kernel gets a null pointer; NULL for any other tensor parameter is
 *     an error naming the argument ("kind: expected a tensor ..., got a NULL
 *     tensor").  A T.StridedTensor(shape, strides, dtype) parameter takes a
 *     tensor whose element strides (DLTensor.strides; NULL: compact) equal
 *     the declared ones; a stride declared as a T.dynamic symbol is bound
 *     from the tensor at the call (and passed to the kernel like a dynamic
 *     dim); other strides are an error naming the argument ("strides[0]:
 *     expected 96 (T.StridedTensor), got 64").  Other tensor parameters must
 *     be contiguous (row-major).
 *   stream: a CUstream of the tensors' device's primary context (checked with
 *     cuStreamGetCtx), or NULL for the legacy default stream.
 *   outputs: room for tl_kernel_out_idx's n pointers (NULL allowed when n is
 *     0); on success outputs[j] is a new DLManagedTensor for out_idx[j],
 *     allocated with cuMemAlloc_v2 (or the context's tl_allocator) on the inputs' device (compact, shapes
 *     from the solved dynamic dims).  The caller frees each with
 *     t->deleter(t) after the kernel is done with it (the deleter frees
 *     the memory and releases the primary context it retained).
 * Before anything is launched or allocated, every argument is checked
 * (count, kind, device type and id, dtype, ndim, static dims, dynamic dims
 * bound consistently — a symbol is solved from the first tensor dim that is
 * exactly that symbol —, contiguity, a size in bytes within int64, non-null
 * data except for a tensor with no elements, alignment of data +
 * byte_offset, scalars within their dtype's range: an integer or a finite
 * float out of a float parameter's finite range is an error, inf and nan
 * pass); a failure launches nothing and names the parameter
 * with expected and actual ("argument 'B' (#1): dtype: expected float16, got
 * float32").  Grid, block and shared memory come from the kernel's
 * expressions evaluated on the solved symbols and scalar arguments.  A
 * call whose grid has a dim of 0 because a dynamic dim is 0 (a zero-size
 * tensor) is an empty call: it succeeds, launches nothing and returns the
 * (empty) outputs; a grid dim of 0 otherwise is an error that shows the
 * dynamic dims' values.
 * The launch is asynchronous on stream.  The device is implied by the
 * tensors: every CUDA tensor must be on one device (a call mixing cuda:0 and
 * cuda:1 launches nothing, "argument 'B' (#1): device: expected cuda:0 (the
 * device of 'A'), got cuda:1", found before the driver is asked anything);
 * the kernel is loaded there (tl_kernel_load, with its errors), launched
 * in that device's primary context, and the outputs are allocated there.
 * When there is at least one tensor argument and every one is host
 * memory (kDLCPU), the call runs synchronously on the CPU SIMT executor
 * instead, with host outputs (tl_kernel_call_on, TL_EXEC_AUTO).
 * Kernel workspaces (docs/simt-ir.md "Kernel workspaces"): the global
 * buffers a kernel allocates itself (T.alloc_global; stream-K's slots and
 * counters) live in one device allocation per (kernel, device, stream),
 * made (cuMemAlloc) and zeroed (cuMemsetD8Async on stream) by the first
 * call on that stream and kept until tl_kernel_destroy.  A T.alloc_global
 * buffer is zeroed again on stream before every later launch, so a call
 * never sees what an earlier call left there (TileLang gives uninitialised
 * per-call memory; zero is the stronger, deterministic choice, and the CPU
 * executors do the same); stream-K's are not (the kernel leaves them
 * zeroed).  Calls on one stream share the memory in stream order; calls on
 * different streams have their own.
 * Errors: TL_ERR_INVALID_ARGUMENT,
 * TL_ERR_NO_DEVICE, TL_ERR_UNSUPPORTED (the device's architecture, as
 * tl_kernel_load), TL_ERR_CUDA (driver error name and string),
 * TL_ERR_NO_MEMORY. */
TL_API tl_status tl_kernel_call(tl_context *ctx, tl_kernel *k, const tl_arg *args, size_t nargs, void *stream,
                                DLManagedTensor **outputs);

/* ---------------------------------------------------- output allocator */
/* Where the out_idx outputs of tl_kernel_call and tl_kernel_time on CUDA
 * come from, per context: by default cuMemAlloc_v2 / cuMemFree_v2; with an
 * allocator (a framework's caching allocator, a memory pool) its callbacks,
 * so that a call allocates no device memory of its own.  Host outputs (the
 * CPU executors) are always malloc'd. */
typedef struct tl_allocator {
  /* Returns `bytes` (>= 1) of device memory on CUDA device ordinal `device`,
   * usable by work queued on `stream` (the call's CUstream; NULL = the
   * legacy default stream) and aligned to at least 256 bytes (what
   * cuMemAlloc gives; the call checks the kernel's own requirement,
   * tl_kernel_param_alignment), or NULL on failure, when the call fails with
   * TL_ERR_NO_MEMORY naming the output.  Called on the calling thread with
   * the device's primary context current. */
  void *(*alloc)(void *user, size_t bytes, int device, void *stream);
  /* Releases ptr, which alloc returned with these bytes, device and stream:
   * from the output's deleter (on whichever thread runs it), or from the
   * failing call that allocated it.  Must not fail. */
  void (*free)(void *user, void *ptr, size_t bytes, int device, void *stream);
  void *user; /* passed to both callbacks; borrowed: must outlive every output it allocated */
} tl_allocator;

/* Sets ctx's output allocator to a copy of *a, or back to cuMemAlloc_v2 /
 * cuMemFree_v2 when a is NULL.  Outputs allocated before keep the allocator
 * they came from.  Errors: TL_ERR_INVALID_ARGUMENT (ctx NULL, a callback
 * NULL). */
TL_API tl_status tl_context_set_allocator(tl_context *ctx, const tl_allocator *a);

/* ------------------------------------------------------------- progress */
/* A progress callback of ctx's CPU SIMT executor runs (tl_kernel_call_on
 * with TL_EXEC_CPU, and tl_kernel_call with host tensors): called on the
 * calling thread after each block of the grid, with the blocks run so far
 * (1..total) and the grid's block count; not called by the reference
 * evaluator or on CUDA.  tl-run's progress line comes from it.  fn NULL
 * removes it.  Errors: TL_ERR_INVALID_ARGUMENT (ctx NULL). */
typedef void (*tl_progress_fn)(void *user, int64_t done, int64_t total);
TL_API tl_status tl_context_set_progress(tl_context *ctx, tl_progress_fn fn, void *user);

/* ------------------------------------------------ choosing the executor */
/* Where a call runs.  tl_kernel_call uses TL_EXEC_AUTO: the device is
 * implied by the tensors. */
typedef enum tl_executor {
  /* the CPU SIMT executor when there is at least one tensor argument and
   * every tensor argument is host memory (kDLCPU); otherwise CUDA (a mix of
   * host and CUDA tensors is then reported on the host tensors) */
  TL_EXEC_AUTO = 0,
  TL_EXEC_CUDA = 1, /* the GPU, tensors on one CUDA device */
  /* the CPU SIMT executor: runs the lowered SIMT IR (what the GPU would run)
   * thread by thread, with shared-memory race and protocol checks; tensors
   * on kDLCPU; no driver needed */
  TL_EXEC_CPU = 2,
  /* the tile-level reference evaluator: runs the tile IR as written (what
   * the program means), no lowering involved; tensors on kDLCPU */
  TL_EXEC_REFERENCE = 3
} tl_executor;

/* As tl_kernel_call on the chosen executor.  With TL_EXEC_CPU and
 * TL_EXEC_REFERENCE the call is synchronous (stream is ignored), the same
 * argument checks apply with "cpu" as the expected device, and outputs are
 * malloc'd host tensors (kDLCPU, device_id 0; poisoned with 0xFF bytes under
 * TL_COMPILE_POISON_OUTPUTS) that the caller frees with t->deleter(t).
 * Errors of the executors (an out-of-bounds access, a shared-memory race, an
 * op the evaluator cannot run) are TL_ERR_COMPILE with the statement's
 * source location in the message; kernels built without the IR (by hand)
 * give TL_ERR_UNSUPPORTED. */
TL_API tl_status tl_kernel_call_on(tl_context *ctx, tl_kernel *k, tl_executor exec, const tl_arg *args, size_t nargs,
                                   void *stream, DLManagedTensor **outputs);

/* Times the kernel on the GPU: checks and binds the arguments as
 * tl_kernel_call (CUDA tensors), allocates the out_idx outputs once, launches
 * `warmup` times, then `reps` times (>= 1) each between two CUDA events on
 * stream, synchronizes, and stores each launch's time in ms_each[0..reps)
 * (caller's array).  The outputs are returned as by tl_kernel_call (holding
 * the last launch's result).  Errors as tl_kernel_call. */
TL_API tl_status tl_kernel_time(tl_context *ctx, tl_kernel *k, const tl_arg *args, size_t nargs, void *stream,
                                int warmup, int reps, float *ms_each, DLManagedTensor **outputs);

/* Floating-point operations of one launch counted from the kernel's T.gemm
 * ops (2·M·N·K per T.gemm execution; executions = trip counts of the
 * enclosing loops times the grid's blocks), with the dynamic dims given by
 * name (names[i] = values[i], borrowed).  *flops = 0 when the kernel has no
 * T.gemm.  Errors: TL_ERR_INVALID_ARGUMENT, TL_ERR_UNSUPPORTED (a trip
 * count or extent that these dims do not determine). */
TL_API tl_status tl_kernel_gemm_flops(tl_context *ctx, const tl_kernel *k, const char *const *names,
                                      const int64_t *values, size_t n, double *flops);

/* ------------------------------------------- launch details (benchmarks) */
/* What a launch of k with these arguments uses, for code that launches the
 * function itself (benchmarks/launch compares tl_kernel_call with a bare
 * cuLaunchKernel of the same function).  Not needed to call a kernel. */
typedef struct tl_launch_info {
  void *function;   /* the CUfunction, owned by the kernel (valid until tl_kernel_destroy) */
  void *context;    /* the CUcontext (the device's primary context) it was loaded in */
  unsigned grid[3]; /* 0 in an empty call (a zero-size dynamic dim; tl_kernel_call): launch nothing */
  unsigned block;   /* threads per block (blockDim.x; y = z = 1) */
  unsigned smem;    /* dynamic shared memory in bytes (set on function when > 48 KB) */
  /* The kernel's parameters, the kernelParams of cuLaunchKernel: in
   * prim_func order each tensor's data + byte_offset (a 64-bit device
   * pointer) and each scalar's value in its dtype, then each dynamic
   * symbol as an int32 (an int64 for T.dynamic(name, "int64")).  out_idx outputs are NOT allocated: their slots
   * hold 0 and the caller stores device pointers into param_slots[i] for
   * output parameter i before launching.  A kernel with TMA tensor copies
   * then takes one 128-byte CUtensorMap per map (docs/simt-ir.md "TMA
   * tensor copies"): params[nslots + i] points at map i, encoded from the
   * bound tensors, stored in param_slots after the 8-byte slots (a map
   * over an out_idx output is an error here).  A kernel with workspaces
   * (T.alloc_global, stream-K; tl_kernel_call) then takes one device
   * pointer per workspace: the legacy default stream's allocation (made
   * and zeroed here when it does not exist yet; T.alloc_global's zeroed
   * again each time info is made); launches through info do not zero it. */
  int nparams;   /* entries of params (slots, then tensor maps) */
  void **params; /* params[i] = &param_slots[i] */
  uint64_t *param_slots;
} tl_launch_info;

/* Checks and binds args as tl_kernel_call does (CUDA tensors, the same
 * messages), loads the kernel on the tensors' device (tl_kernel_load),
 * raises the function's dynamic shared memory limit when the launch needs
 * more than 48 KB, and fills *info.  Nothing is launched or allocated on
 * the device.  Free with tl_launch_info_free.  Errors as tl_kernel_call. */
TL_API tl_status tl_kernel_launch_info(tl_context *ctx, tl_kernel *k, const tl_arg *args, size_t nargs,
                                       tl_launch_info *info);
/* Frees what tl_kernel_launch_info allocated (not the function); NULL and
 * a zeroed info are allowed. */
TL_API void tl_launch_info_free(tl_launch_info *info);

/* ------------------------------------------- GEMM tile configurations */
/* One tile configuration of a GEMM kernel written as examples/gemm.py: the
 * values of its factory parameters of the same names (policy and
 * swizzle_panel exist in test/GPU/kernels/gemm_general.py). */
typedef struct tl_gemm_config {
  int block_M, block_N, block_K;
  int threads;
  int num_stages;
  int policy;        /* T.GemmWarpPolicy: 0 Square, 1 FullRow, 2 FullCol */
  int swizzle_panel; /* T.use_swizzle(panel_size=); 0 = no rasterization */
} tl_gemm_config;

/* The built-in candidate tile configurations for C[M, N] = A[M, K] B[K, N]
 * with inputs of dtype in for the cp.async + mma.sync lowering (any target;
 * tl_gemm_configs_target picks the Hopper table where it applies;
 * benchmarks/gemm uses the first that compiles, tl-run --tune times them
 * all), best first,
 * by shape class: M <= 128 (decode-like: 64-row tiles waste less), then
 * grids of less than one or two waves on the GPU's SMs (the driver's SM
 * count of device 0; without a GPU that of the H200 the tables were
 * measured on, 132), else the large class.  Copies min(n, cap) candidates into out (out may be
 * NULL when cap is 0) and returns n, the number of candidates; 0 for input
 * dtypes other than float16 and bfloat16 (no built-in table yet) or
 * non-positive sizes. */
TL_API size_t tl_gemm_configs(int64_t M, int64_t N, int64_t K, tl_dtype in, tl_gemm_config *out, size_t cap);
/* The built-in candidates for the lowering that a kernel compiled for
 * target with tl_compile_options.flags = flags takes (target NULL: the
 * device default, tl_device_default_target; names as
 * tl_compile_options.target).  On a target with wgmma (sm_90a) and none of
 * TL_COMPILE_DISABLE_WGMMA, _TMA_LOWER, _WARP_SPECIALIZED in flags: the
 * Hopper table (at most 16 configurations in all), configurations the
 * warp-specialized TMA + wgmma lowering accepts: threads counts the
 * consumer warpgroups (the compiler adds 128 producer threads), block_M a
 * multiple of 64 per warpgroup, block_K 64 or 32, pipeline tiles plus the
 * shared-memory staging of the epilogue within 227 KB.  Otherwise the
 * mma.sync table, the same as tl_gemm_configs.  Same shape classes, copy
 * and return conventions as tl_gemm_configs; 0 also for an unknown target
 * name.  tl-run --tune searches this list for its --target and flags. */
TL_API size_t tl_gemm_configs_target(const char *target, unsigned flags, int64_t M, int64_t N, int64_t K, tl_dtype in,
                                     tl_gemm_config *out, size_t cap);
/* Whether tl_gemm_configs_target(target, flags, ...) returns the Hopper
 * table: target (NULL: tl_device_default_target) has wgmma (sm_90a) and
 * flags has none of TL_COMPILE_DISABLE_WGMMA, _TMA_LOWER,
 * _WARP_SPECIALIZED.  false for an unknown target name.  (Whether a given
 * kernel then takes the Hopper path is the lowering's decision: the remarks
 * of tl-opt --remarks say, and its PTX has wgmma.mma_async.) */
TL_API bool tl_gemm_configs_use_hopper(const char *target, unsigned flags);

/* The factory -D bindings of c: names "block_M", "block_N", "block_K",
 * "threads", "num_stages" (the first five), then "policy", "swizzle_panel";
 * values are written into storage (decimal text) and defs[i].value points
 * there.  Returns 7.  Kernels without policy/swizzle_panel parameters take
 * the first 5. */
TL_API size_t tl_gemm_config_defines(const tl_gemm_config *c, tl_define defs[7], char storage[7][16]);
/* Prints c as "128x256x32/256t/s3[/pN][/swzP]" into buf (snprintf semantics);
 * returns buf. */
TL_API const char *tl_gemm_config_format(const tl_gemm_config *c, char *buf, size_t size);

/* ------------------------------------------------------------- tuning */
/* The caller's check and timing of one compiled candidate (config index of
 * the space), run on the thread that called tl_kernel_tune, one candidate
 * at a time, while the other candidates compile: launch k on the caller's
 * inputs, compare its outputs with a trusted result, time it with `warmup`
 * untimed and `rep` timed launches (tl_kernel_time).  Returns TL_OK with
 * *ms (> 0) the candidate's time, or another status with a one-line reason
 * in why (why_size bytes, NUL-terminated) for a candidate that failed to
 * load, launch or check: it is reported and skipped, the search goes on. */
typedef tl_status (*tl_tune_measure_fn)(void *user, tl_kernel *k, size_t index, int warmup, int rep, double *ms,
                                        char *why, size_t why_size);

/* tl_kernel_tune options (zero-initialise, then set what you need). */
typedef struct tl_tune_options {
  const tl_compile_options *compile; /* every candidate's compile (NULL: defaults); kernel, target, flags, out_idx */
  const tl_define *defines;          /* bindings before each config's (borrowed) */
  size_t ndefines;
  int workers;     /* compile threads (one tl_context each); 0: the online CPUs (sysconf) */
  int warmup, rep; /* <= 0: the space's (decorator), else 25 and 100 (TileLang's defaults) */
  /* NULL: compile only (a dry run: nothing timed, no best, no tune cache) */
  tl_tune_measure_fn measure;
  void *user;
  /* What else decides the best config: the caller's description of the
   * arguments (names, shapes, dtypes, scalar values); hashed into the tune
   * cache's key with the device's name.  NULL: "". */
  const char *problem;
  bool progress; /* a progress line on stderr (rewritten in place on a terminal) */
  /* Also load each compiled kernel on CUDA device `device` in its worker
   * (tl_kernel_load: the driver's JIT of the PTX then runs in parallel
   * too); a load failure is a TL_TUNE_MEASURE_FAILED config ("load: ..."). */
  bool load;
  int device;
  tl_cache_use cache; /* the tune cache (DEFAULT: read and write, unless $TL_CACHE=0) */
} tl_tune_options;

/* Outcome of one configuration (tl_tune_result.configs[i]). */
typedef enum tl_tune_outcome {
  TL_TUNE_PENDING = 0,        /* not reached (a cache hit times nothing) */
  TL_TUNE_COMPILED = 1,       /* compiled; not timed (dry run) */
  TL_TUNE_TIMED = 2,          /* compiled, checked and timed: ms */
  TL_TUNE_COMPILE_FAILED = 3, /* message: the first line of the compiler's error */
  TL_TUNE_MEASURE_FAILED = 4  /* load, launch or check failed: message from the measure callback */
} tl_tune_outcome;

typedef struct tl_tune_config_result {
  tl_tune_outcome outcome;
  double ms;             /* TL_TUNE_TIMED: the measured time */
  double compile_ms;     /* wall-clock time of its compile on its worker */
  double compile_cpu_ms; /* CPU time of that compile (CLOCK_THREAD_CPUTIME_ID of the worker) */
  double load_ms;        /* wall-clock time of its load (tl_tune_options.load), else 0 */
  char *message;         /* failures: why (owned by the result), else NULL */
} tl_tune_config_result;

typedef struct tl_tune_result {
  size_t nconfigs;
  tl_tune_config_result *configs; /* nconfigs entries, owned */
  long best;                      /* index of the fastest timed config, -1 when none */
  double best_ms;
  tl_kernel *kernel;  /* the best config's kernel (the caller owns it: tl_kernel_destroy), or NULL */
  bool cache_hit;     /* the tune cache answered: only the best config was compiled */
  char cache_key[33]; /* the tune cache entry <cache dir>/<key>.tlt ("" when not consulted) */
  int workers;        /* compile threads used */
  size_t compiled, compile_failed, timed, measure_failed;
  double compile_wall_ms; /* first compile started to last compile (and load) finished */
  double load_ms;         /* sum of the per-config load times (load_ms) */
  double compile_cpu_ms;  /* sum of the per-config compile CPU times (compile_cpu_ms) */
  double total_ms;        /* the whole call */
  /* With opts->load: the PTX of each config was compiled by NVIDIA's
   * nvJitLink on its worker thread (in parallel; the driver then loaded the
   * cubin) rather than by the driver's JIT inside cuModuleLoadDataEx, which
   * ran one module at a time on the H200 host (driver 580).  False without
   * libnvJitLink (CUDA toolkit 12/13) or with $TL_TUNE_JIT=driver. */
  bool jitlink;
} tl_tune_result;

/* Tunes the kernel of source over the configurations of space
 * (tl_tune_space_parse or _from_defines): compiles every configuration on
 * a pool of opts->workers threads (each with its own tl_context; the
 * kernel cache serves repeated configs), and, as each finishes, has
 * opts->measure check and time it on the calling thread; the fastest timed
 * configuration wins.  A config that fails to compile or to measure is
 * recorded in out->configs with its reason and skipped.  With
 * opts->progress a line on stderr shows configs compiled and timed of the
 * total, failures, the best so far and an estimate of the time left.
 * The tune cache: the winner is stored as <cache dir>/<key>.tlt (the kernel
 * cache's directory, TL_CACHE_DIR etc., atomic write) under an XXH3-128 key
 * of the source text, the kernel option, the space's text, opts->defines,
 * the resolved target, the compile flags and out_idx, warmup and rep,
 * opts->problem, device opts->device's name (cuDeviceGetName), compute
 * capability and SM count, and the
 * compiler's identity; a later call with the same key compiles only the
 * winner (a kernel cache hit) and measures nothing (out->cache_hit).
 * Only tunes with a winner are stored.  On TL_OK *out is filled (free
 * with tl_tune_result_free), also when no config succeeded (best = -1).
 * Errors: TL_ERR_INVALID_ARGUMENT (NULL pointers, an empty space),
 * TL_ERR_NO_MEMORY (also when no worker thread could start). */
TL_API tl_status tl_kernel_tune(tl_context *ctx, const char *source, size_t len, const char *filename,
                                const tl_tune_space *space, const tl_tune_options *opts, tl_tune_result *out);
/* Frees what tl_kernel_tune put in *r (not r->kernel, which the caller
 * owns); zeroes it.  NULL allowed. */
TL_API void tl_tune_result_free(tl_tune_result *r);

/* ------------------------------------------------------------ tensors */
/* Allocates a compact tensor on `device` (kDLCPU: malloc, 64-byte aligned;
 * kDLCUDA: cuMemAlloc_v2 in the device's primary context) with the given
 * shape (copied) and dtype; contents undefined.  *out is freed with
 * (*out)->deleter(*out).  Errors: TL_ERR_INVALID_ARGUMENT (bad device type,
 * negative dim, size overflow), TL_ERR_NO_DEVICE, TL_ERR_CUDA,
 * TL_ERR_NO_MEMORY. */
TL_API tl_status tl_tensor_alloc(tl_context *ctx, DLDevice device, int ndim, const int64_t *shape, DLDataType dtype,
                                 DLManagedTensor **out);

/* Copies src into dst, synchronously (cuMemcpyHtoD_v2 / DtoH_v2 / DtoD_v2
 * after synchronizing the device's primary context, or memcpy between host
 * tensors).  Both must be compact with the same number of bytes (dtype size
 * times elements; shapes may differ); kDLCPU and kDLCUDA in any
 * combination.  Errors: TL_ERR_INVALID_ARGUMENT, TL_ERR_NO_DEVICE,
 * TL_ERR_CUDA. */
TL_API tl_status tl_tensor_copy(tl_context *ctx, DLTensor *dst, const DLTensor *src);

#ifdef __cplusplus
}
#endif
#endif
