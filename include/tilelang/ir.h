/* libtilelang tile IR: parse TileLang kernel files into modules, verify,
 * print in canonical form, and build the same IR from C (the builder API).
 *
 * Source language: docs/language.md (a Python-syntax subset: a factory function
 * returning a @T.prim_func, or a bare @T.prim_func with module constants).
 * Canonical text: constants bound and folded, a bare @T.prim_func, comments
 * dropped; printing is a fixed point: print(parse(print(m))) == print(m). */
#ifndef TILELANG_IR_H
#define TILELANG_IR_H

#include <stdbool.h>
#include "tilelang/core.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ------------------------------------------------------------------ dtype */
/* Element types.  The codes are our own (DLPack conversion lives in the
 * runtime): bool is 8-bit storage, tfloat32 is a 32-bit float whose low 13
 * mantissa bits are ignored by the tensor cores (PTX ISA §9.7.14.1);
 * float8_e4m3 (1 sign, 4 exponent bits of bias 7, 3 mantissa bits; no
 * infinity, NaN = 0x7f/0xff, largest finite 448) and float8_e5m2 (5
 * exponent bits of bias 15, 2 mantissa bits, IEEE-like with infinities,
 * largest finite 57344) are the OCP 8-bit floats of PTX ISA §5.2.5 (.e4m3,
 * .e5m2), bits 8.  int4 / uint4 (bits 4, lanes 1 only) are 4-bit integers
 * stored packed: two per byte along a tensor's last dim, the element of even
 * index in the low nibble (TileLang's storage: a T.int4 tensor of shape
 * (M, K) is a torch.int8 tensor of shape (M, K / 2)); see tl_dtype_storage. */
typedef enum tl_type_code {
  TL_TYPE_INT = 0,
  TL_TYPE_UINT = 1,
  TL_TYPE_FLOAT = 2,
  TL_TYPE_HANDLE = 3, /* pointer / opaque */
  TL_TYPE_BFLOAT = 4,
  TL_TYPE_BOOL = 6,
  TL_TYPE_TFLOAT = 7,
  TL_TYPE_FLOAT8_E4M3 = 8,
  TL_TYPE_FLOAT8_E5M2 = 9,
  TL_TYPE_VOID = 15
} tl_type_code;

typedef struct tl_dtype {
  uint8_t code;   /* tl_type_code */
  uint8_t bits;   /* 1..64 (bool: 8) */
  uint16_t lanes; /* 1 for scalars */
} tl_dtype;

/* Parses a dtype spelling: "float16", "half", "float", "double", "bfloat16",
 * "tfloat32", "float8_e4m3" (also "float8_e4m3fn"), "float8_e5m2", "int4", "int8".."int64", "uint4",
 * "uint8".."uint64", "bool", with an optional lane suffix "x2".."x64" (none
 * for int4 / uint4).  Returns false for an unknown name. */
TL_API bool tl_dtype_parse(const char *name, tl_dtype *out);
/* Canonical name ("float16", "int32", "float16x2"), static storage. */
TL_API const char *tl_dtype_name(tl_dtype t);
/* Bytes of one scalar lane (bool: 1; int4 / uint4: 1, a value held alone,
 * while a tensor of them packs two per byte: tl_dtype_storage). */
TL_API int tl_dtype_bytes(tl_dtype t);
/* The dtype a tensor of dtype t is stored as, and *per (if non-NULL) the
 * elements of t per storage element along the tensor's last dim: int4 ->
 * int8 and uint4 -> uint8, 2 per byte, the even-index element in the low
 * nibble; any other dtype is its own storage, 1 per element.  A tensor
 * parameter of logical shape (..., K) binds a storage tensor of shape
 * (..., K / per) (K a multiple of per). */
TL_API tl_dtype tl_dtype_storage(tl_dtype t, int *per);
/* v encoded as float8 dtype t (float8_e4m3 or float8_e5m2) the way
 * cvt.rn.satfinite.{e4m3x2,e5m2x2}.f32 does (PTX ISA §9.7.9.21): round to
 * nearest even; a magnitude beyond the largest finite (448 / 57344), an
 * infinity included, becomes the signed largest finite; NaN becomes 0x7f.
 * v is rounded from its double value directly (the device rounds an f32:
 * identical for every v that is an f32). */
TL_API uint8_t tl_fp8_encode(double v, tl_dtype t);
/* The value of float8 code b of dtype t: e4m3 0x7f/0xff NaN, no infinity;
 * e5m2 exponent field 31 infinity (mantissa 0) or NaN; subnormals kept. */
TL_API double tl_fp8_decode(uint8_t b, tl_dtype t);

/* ----------------------------------------------------------------- module */
/* A parsed (or built) module: one or more PrimFuncs plus the arena that owns
 * all of its IR.  Opaque. */
typedef struct tl_module tl_module;

/* A compile-time definition: binds a factory parameter or a module constant
 * (docs/tools.md, "-D"): value is the text after '=' ("128", "1e-3", "True",
 * "'float16'", "bfloat16").  Both strings are borrowed for the call. */
typedef struct tl_define {
  const char *name;
  const char *value;
} tl_define;

/* Parses TileLang source text into a verified module.
 *   source/len: the text (need not be NUL-terminated), borrowed for the call.
 *   filename:   the name used in diagnostics ("<stdin>" for stdin); NULL → "<input>".
 *   defines:    ndefines bindings applied in order (the last of a name wins).
 * On success *out owns a module (free with tl_module_destroy).
 * Errors: TL_ERR_INVALID_ARGUMENT (ctx/source/out NULL), TL_ERR_COMPILE
 * (diagnostics in tl_context_last_error), TL_ERR_NO_MEMORY. */
TL_API tl_status tl_module_parse(tl_context *ctx, const char *source, size_t len, const char *filename,
                                 const tl_define *defines, size_t ndefines, tl_module **out);
/* As tl_module_parse, building only the kernel (factory or @T.prim_func)
 * whose Python name is `kernel` (--kernel; an error names the file's
 * kernels when none matches).  With kernel NULL: a file with one kernel
 * builds it; a file with several builds every one whose factory
 * parameters all have values (-D or defaults) and warns about each one it
 * skips (tl_context_warnings); it is an error when all are skipped. */
TL_API tl_status tl_module_parse_kernel(tl_context *ctx, const char *source, size_t len, const char *filename,
                                        const char *kernel, const tl_define *defines, size_t ndefines, tl_module **out);
/* As tl_module_parse on the contents of the file at path.  Errors add
 * TL_ERR_IO when the file cannot be read (message names the path and errno text). */
TL_API tl_status tl_module_parse_file(tl_context *ctx, const char *path, const tl_define *defines, size_t ndefines,
                                      tl_module **out);
/* Parses Python source only (no elaboration) and writes its syntax tree into
 * *out_text in the form of CPython 3.11's ast.dump(ast.parse(source)) (node
 * kinds, fields and nesting; no positions), NUL-terminated, free with
 * tl_free.  For checking the parser against CPython (tl-opt --emit=ast).
 * Errors: TL_ERR_INVALID_ARGUMENT, TL_ERR_COMPILE (syntax error, in
 * tl_context_last_error), TL_ERR_NO_MEMORY. */
TL_API tl_status tl_python_ast_dump(tl_context *ctx, const char *source, size_t len, const char *filename,
                                    char **out_text);
/* Runs the IR verifier (parse and the builder already do).  TL_ERR_COMPILE
 * with diagnostics when a rule is broken. */
TL_API tl_status tl_module_verify(tl_context *ctx, const tl_module *m);
/* Prints the module as canonical TileLang text into *out_text (NUL-terminated,
 * free with tl_free).  Errors: TL_ERR_INVALID_ARGUMENT, TL_ERR_NO_MEMORY. */
TL_API tl_status tl_module_print(tl_context *ctx, const tl_module *m, char **out_text);
/* Structural equality (same functions, params, buffers, statements and
 * expressions; variables compared by binding position, not pointer). */
TL_API bool tl_module_equal(const tl_module *a, const tl_module *b);
/* Frees the module and all its IR; NULL is allowed. */
TL_API void tl_module_destroy(tl_module *m);

/* ------------------------------------------------------ autotune space */
/* The configurations of a kernel's TileLang autotune decorator,
 *     @tilelang.autotune(configs=..., warmup=..., rep=...)
 *     @tilelang.jit(out_idx=[-1])
 *     def matmul(M, N, K, block_M=128, ...): ...
 * evaluated at compile time: configs is a list of dicts mapping factory
 * parameter names to constants (int, float, bool, str, dtype, None, a
 * tuple of them), written as a display, a comprehension over
 * itertools.product, dict(zip(...)), a call of a helper function, or a
 * function of no arguments that returns such a list.  Each config is a set
 * of -D bindings (tl_define, values as -D text: "128", "True", "'float16'")
 * applied after the caller's own -D bindings (the config's win).  Opaque;
 * every string it returns lives until tl_tune_space_destroy. */
typedef struct tl_tune_space tl_tune_space;

/* Parses source (as tl_module_parse_kernel: kernel NULL = the first def
 * with the decorator) and evaluates the decorator of that kernel.  *out is
 * NULL with TL_OK when the file has no such decorator (the built-in tables
 * then serve: tl_tune_space_from_defines).  Errors: TL_ERR_INVALID_ARGUMENT
 * (NULL pointers), TL_ERR_COMPILE (located diagnostics: configs missing,
 * empty, not a list of dicts, a key that is not a parameter of the
 * factory, a value that is not a constant, warmup/rep not ints),
 * TL_ERR_NO_MEMORY. */
TL_API tl_status tl_tune_space_parse(tl_context *ctx, const char *source, size_t len, const char *filename,
                                     const char *kernel, const tl_define *defines, size_t ndefines,
                                     tl_tune_space **out);
/* A space of nconfigs configurations given as bindings: config i is
 * nkeys[i] entries of defs[i] (copied).  warmup/rep -1 (the tuner's
 * defaults).  Errors: TL_ERR_INVALID_ARGUMENT (no config, NULL pointers,
 * an empty name), TL_ERR_NO_MEMORY. */
TL_API tl_status tl_tune_space_from_defines(const tl_define *const *defs, const size_t *nkeys, size_t nconfigs,
                                            tl_tune_space **out);
/* The number of configurations (0 for NULL). */
TL_API size_t tl_tune_space_count(const tl_tune_space *s);
/* Config i's bindings (*n of them), or NULL (*n = 0) when i is out of range. */
TL_API const tl_define *tl_tune_space_config(const tl_tune_space *s, size_t i, size_t *n);
/* The decorator's warmup= and rep= (launches), -1 when not given. */
TL_API int tl_tune_space_warmup(const tl_tune_space *s);
TL_API int tl_tune_space_rep(const tl_tune_space *s);
/* The decorated factory's Python name ("" for a space from defines). */
TL_API const char *tl_tune_space_kernel(const tl_tune_space *s);
/* Every config as one line "name=value name=value\n" (what the tune cache
 * hashes). */
TL_API const char *tl_tune_space_text(const tl_tune_space *s);
/* Frees the space; NULL is allowed. */
TL_API void tl_tune_space_destroy(tl_tune_space *s);

/* ----------------------------------------------------------------- passes */
/* One lowering pass of the pipeline (docs/ARCHITECTURE.md "The pipeline of passes", lib/Lower/pipeline.c), as
 * tl-opt --passes names it.  All strings are static. */
typedef struct tl_pass_info {
  const char *name;     /* "layout-inference", "lower-tile-ops", ... */
  const char *ir_level; /* the IR the pass expects: "tile" or "simt" (docs/simt-ir.md) */
  const char *contract; /* one line: what it requires and what it guarantees */
} tl_pass_info;

/* The number of lowering passes, and pass i (0 <= i < count, pipeline
 * order; NULL when i is out of range). */
TL_API size_t tl_pass_count(void);
TL_API const tl_pass_info *tl_pass_at(size_t i);

/* How tl_module_run_passes runs them. */
typedef struct tl_pass_options {
  const char *target; /* "sm_80", "sm_90a", ...; NULL: sm_80 */
  bool verify_each;   /* run the IR verifier after every pass */
  /* If non-NULL, called after every pass with its name and the module
   * printed (the text is borrowed for the call). */
  void (*after_pass)(void *user, const char *pass, const char *text);
  void *user;
  /* remarks: say which path each T.Pipelined loop took and why (tl-opt
   * --remarks), in tl_context_warnings */
  bool remarks;
} tl_pass_options;

/* Runs the passes named in npasses entries of names, in that order, on
 * every prim_func of m, in place; m is tile IR or SIMT IR text parsed by
 * tl_module_parse, at the level each pass expects (a pass given the other
 * level is not detected: it finds nothing to do or reports the constructs
 * it does not know).  opts may be NULL.
 * Errors: TL_ERR_INVALID_ARGUMENT (NULL module/names, an unknown pass
 * name: the message lists the known ones), TL_ERR_COMPILE (a pass or the
 * verifier reported errors: diagnostics at the IR's locations; m is then
 * left as the failing pass made it), TL_ERR_NO_MEMORY. */
TL_API tl_status tl_module_run_passes(tl_context *ctx, tl_module *m, const char *const *names, size_t npasses,
                                      const tl_pass_options *opts);

/* What tl_module_dump_layouts and tl_kernel_dump_layouts (runtime.h) show
 * (docs/layouts.md "Seeing the layouts"). */
typedef struct tl_layout_dump_options {
  /* every element of every buffer (default: a window of each large buffer,
   * 16 x 16 elements of a fragment, 8 rows by up to 128 bytes of a shared
   * tile, beside the rule in words) */
  bool full;
  /* non-NULL: also write one SVG picture per fragment and shared buffer
   * into this directory (created when missing, its parent must exist),
   * named <function>.<buffer>.svg; nothing is created when lowering fails */
  const char *svg_dir;
} tl_layout_dump_options;

/* The layouts layout inference chooses for every buffer of the tile-IR
 * module m (as parsed; m is not changed): a copy lowered for target ("sm_80",
 * "sm_90a", ...; NULL: sm_80, as tl_pass_options.target) up to and including the pass
 * "layout-inference".  *text (free with tl_free) gets, per kernel and
 * buffer, its scope, shape and dtype, the layout and its rule, and the map:
 * for a fragment the thread and register of each element (replica 0, and
 * the replica count), for a shared tile the swizzle and each element's byte
 * offset and bank; then one "svg: PATH" line per file written
 * (opts->svg_dir).  opts NULL: the defaults.  Errors:
 * TL_ERR_INVALID_ARGUMENT (NULL ctx, m or text; an unknown target),
 * TL_ERR_COMPILE (diagnostics: what lowering up to layout-inference
 * reports), TL_ERR_IO (a file that cannot be written, named),
 * TL_ERR_NO_MEMORY. */
TL_API tl_status tl_module_dump_layouts(tl_context *ctx, const tl_module *m, const char *target,
                                        const tl_layout_dump_options *opts, char **text);

/* --------------------------------------------------------------- analysis */
/* The work of one launch of every kernel of a module, counted on its tile IR
 * as parsed (constants bound and folded, not lowered): the numbers of
 * TileLang's tilelang.tools.Analyzer (docs/tools.md "Work analysis").
 * Every count is the amount of one execution of a statement times its
 * executions: the trip counts of all enclosing loops (T.serial, range,
 * T.Pipelined, T.unroll; a T.Parallel's is the product of its extents)
 * times the blocks of its T.Kernel grid, summed over the module's
 * functions and T.Kernel scopes.
 *   - an `if` counts its condition and, per count, the larger of its two
 *     branches, as if it always ran (an upper bound: TileLang's Analyzer
 *     ignores conditions too); both arms of a select (T.if_then_else) count;
 *   - a kernel body that uses the thread index (per-thread code) runs its
 *     scalar statements once per thread; tile ops run once per block. */
typedef struct tl_analysis {
  /* floating-point operations of T.gemm: 2·M·N·K per execution of a T.gemm
   * of an M×K by K×N tile into M×N (a multiply-add is 2); other arithmetic
   * is not counted */
  uint64_t flops;
  /* bytes read from global tensors (scope global: the kernel's tensor
   * parameters and views of them): for each tile op, the elements of each
   * global region it reads (T.copy's source, T.gemm's A and B) times the
   * element size; for each scalar statement (a T.Parallel body, the
   * elementwise copies of a view, T.im2col's gather), the size of each
   * global element it loads */
  uint64_t global_read_bytes;
  /* likewise written: the global region a tile op writes (T.copy's
   * destination, T.atomic_*'s, T.fill's), each global element stored */
  uint64_t global_write_bytes;
  uint64_t global_bytes; /* global_read_bytes + global_write_bytes */
  uint64_t gemms;        /* T.gemm executions */
  uint64_t blocks;       /* thread blocks launched (the grids' sizes, summed) */
} tl_analysis;

/* Counts the work of module m (as tl_module_parse* made it) into *out.
 * dim_names/dim_values (ndims entries, borrowed; NULL when ndims is 0):
 * values of T.dynamic dims and scalar parameters that trip counts, grid
 * sizes or region extents read.
 * Errors: TL_ERR_INVALID_ARGUMENT (ctx, m or out NULL; names or values
 * NULL with ndims > 0), TL_ERR_COMPILE (located diagnostics: a loop whose
 * trip count, a grid dimension or a tile-op region extent that a count
 * needs is not a compile-time constant, naming the loop variable or the
 * operand and the expression; a count past 2^64 - 1; lowered SIMT IR),
 * TL_ERR_NO_MEMORY.  *out is zeroed first and holds the counts only on
 * TL_OK. */
TL_API tl_status tl_module_analyze(tl_context *ctx, const tl_module *m, const char *const *dim_names,
                                   const int64_t *dim_values, size_t ndims, tl_analysis *out);

/* ---------------------------------------------------------------- builder */
/* Builds a module from C.  Handles returned by builder calls (expressions,
 * variables, buffers) are owned by the builder and become the module's on
 * tl_builder_finish; they must not be used after the builder or module is
 * destroyed.  A call made with bad arguments records an error in the
 * builder (reported by tl_builder_finish as TL_ERR_INVALID_ARGUMENT with a
 * message naming the call and argument) and returns NULL; later calls taking
 * NULL handles do nothing, so a sequence can be checked once at the end. */
typedef struct tl_builder tl_builder;
typedef struct tl_expr tl_expr;
typedef struct tl_var tl_var;
typedef struct tl_buffer tl_buffer;

/* Memory scopes (TileLang/TVM names in comments). */
typedef enum tl_scope {
  TL_SCOPE_GLOBAL = 0, /* "global": kernel parameters */
  TL_SCOPE_SHARED_DYN, /* "shared.dyn": T.alloc_shared */
  TL_SCOPE_SHARED,     /* "shared": static shared memory */
  TL_SCOPE_FRAGMENT,   /* "local.fragment": T.alloc_fragment */
  TL_SCOPE_LOCAL,      /* "local": T.alloc_local */
  TL_SCOPE_LOCAL_VAR   /* "local.var": T.alloc_var */
} tl_scope;

/* Binary and unary operators of expressions (TIR semantics: FLOORDIV and
 * FLOORMOD round toward -inf; DIV is true division on floats and truncating
 * division on integers, as Python's / on TVM PrimExprs). */
typedef enum tl_binop {
  TL_OP_ADD,
  TL_OP_SUB,
  TL_OP_MUL,
  TL_OP_DIV,
  TL_OP_FLOORDIV,
  TL_OP_FLOORMOD,
  TL_OP_POW,
  TL_OP_MIN,
  TL_OP_MAX,
  TL_OP_EQ,
  TL_OP_NE,
  TL_OP_LT,
  TL_OP_LE,
  TL_OP_GT,
  TL_OP_GE,
  TL_OP_AND,
  TL_OP_OR, /* logical */
  TL_OP_BITAND,
  TL_OP_BITOR,
  TL_OP_BITXOR,
  TL_OP_SHL,
  TL_OP_SHR
} tl_binop;
typedef enum tl_unop { TL_OP_NEG, TL_OP_NOT, TL_OP_BITNOT } tl_unop;

/* Loop kinds of T.* loops. */
typedef enum tl_loop_kind {
  TL_LOOP_SERIAL = 0, /* range / T.serial */
  TL_LOOP_PARALLEL,   /* T.Parallel (one or more loop variables) */
  TL_LOOP_PIPELINED,  /* T.Pipelined(n, num_stages=) */
  TL_LOOP_UNROLL,     /* T.unroll */
  TL_LOOP_VECTORIZED, /* vectorized (after lowering) */
  TL_LOOP_THREAD      /* bound to a thread index (after lowering) */
} tl_loop_kind;

/* Warp policies of T.gemm (TileLang GemmWarpPolicy). */
typedef enum tl_gemm_policy { TL_POLICY_SQUARE = 0, TL_POLICY_FULL_ROW = 1, TL_POLICY_FULL_COL = 2 } tl_gemm_policy;

/* Creates a builder for one PrimFunc named func_name (NULL → "main").
 * Errors: TL_ERR_INVALID_ARGUMENT, TL_ERR_NO_MEMORY. */
TL_API tl_status tl_builder_create(tl_context *ctx, const char *func_name, tl_builder **out);
/* Destroys an unfinished builder (NULL allowed). */
TL_API void tl_builder_destroy(tl_builder *b);
/* Closes open scopes check, verifies and moves the IR into *out; the builder
 * is destroyed either way.  Errors: TL_ERR_INVALID_ARGUMENT (a recorded
 * builder error, or scopes left open), TL_ERR_COMPILE (verifier). */
TL_API tl_status tl_builder_finish(tl_builder *b, tl_module **out);

/* Sets the function's out_idx (normalized later; negative counts from the
 * end).  n == 0 clears it (out_idx none). */
TL_API void tl_builder_set_out_idx(tl_builder *b, const int *idx, size_t n);

/* Expressions.  int literals are int32 unless made with tl_builder_int_typed. */
TL_API tl_expr *tl_builder_int(tl_builder *b, int64_t v);
TL_API tl_expr *tl_builder_int_typed(tl_builder *b, tl_dtype t, int64_t v);
TL_API tl_expr *tl_builder_float(tl_builder *b, tl_dtype t, double v);
TL_API tl_expr *tl_builder_bool(tl_builder *b, bool v);
/* A string constant, only as a tile-op keyword value (memory_order="relaxed",
 * order="column"); s is copied. */
TL_API tl_expr *tl_builder_string(tl_builder *b, const char *s);
TL_API tl_expr *tl_builder_var_ref(tl_builder *b, tl_var *v);
TL_API tl_expr *tl_builder_binary(tl_builder *b, tl_binop op, tl_expr *l, tl_expr *r);
TL_API tl_expr *tl_builder_unary(tl_builder *b, tl_unop op, tl_expr *x);
TL_API tl_expr *tl_builder_select(tl_builder *b, tl_expr *cond, tl_expr *t, tl_expr *f);
TL_API tl_expr *tl_builder_cast(tl_builder *b, tl_dtype t, tl_expr *x);
TL_API tl_expr *tl_builder_load(tl_builder *b, tl_buffer *buf, tl_expr *const *indices, size_t n);
/* A call of a T.* math intrinsic by its name without "T." ("exp2", "max",
 * "ceildiv", "if_then_else", ...).  Unknown names are a builder error. */
TL_API tl_expr *tl_builder_call(tl_builder *b, const char *name, tl_expr *const *args, size_t n);

/* Parameters, in order. */
TL_API tl_buffer *tl_builder_param_tensor(tl_builder *b, const char *name, tl_dtype t, tl_expr *const *shape,
                                          size_t ndim);
TL_API tl_var *tl_builder_param_scalar(tl_builder *b, const char *name, tl_dtype t);
/* A dynamic dimension symbol (T.dynamic("name")), int32. */
TL_API tl_var *tl_builder_dynamic(tl_builder *b, const char *name);

/* Opens `with T.Kernel(grid..., threads=threads) as (names...)`; the block
 * index variables are returned in vars_out[0..ngrid).  ngrid is 1..3. */
TL_API void tl_builder_kernel_begin(tl_builder *b, tl_expr *const *grid, size_t ngrid, tl_expr *threads,
                                    const char *const *names, tl_var **vars_out);
TL_API void tl_builder_kernel_end(tl_builder *b);

/* Allocations in the current scope: T.alloc_shared / alloc_fragment /
 * alloc_local (scope chooses), named name. */
TL_API tl_buffer *tl_builder_alloc(tl_builder *b, tl_scope scope, const char *name, tl_dtype t, tl_expr *const *shape,
                                   size_t ndim);

/* Opens a loop of kind over nvars variables (only T.Parallel takes more than
 * one): `for names in T.Parallel(extents...)`, `T.Pipelined(extent,
 * num_stages=num_stages)` (num_stages ignored otherwise), T.serial, T.unroll.
 * Loop variables come back in vars_out. */
TL_API void tl_builder_for_begin(tl_builder *b, tl_loop_kind kind, const char *const *names, tl_expr *const *extents,
                                 size_t nvars, int num_stages, tl_var **vars_out);
TL_API void tl_builder_for_end(tl_builder *b);

/* if / else: tl_builder_if_begin(cond) ... [tl_builder_else() ...] tl_builder_if_end(). */
TL_API void tl_builder_if_begin(tl_builder *b, tl_expr *cond);
TL_API void tl_builder_else(tl_builder *b);
TL_API void tl_builder_if_end(tl_builder *b);

/* A[indices] = value */
TL_API void tl_builder_store(tl_builder *b, tl_buffer *buf, tl_expr *const *indices, size_t n, tl_expr *value);

/* Tile-op operands: a region of a buffer (mins/extents of ndim entries;
 * extents NULL means the whole buffer), or a scalar expression. */
typedef struct tl_region_arg {
  tl_buffer *buffer;
  tl_expr *const *mins;    /* NULL: all zero */
  tl_expr *const *extents; /* NULL: the buffer's shape */
  size_t ndim;             /* 0 when mins and extents are NULL */
} tl_region_arg;
typedef struct tl_tile_arg {
  enum { TL_TILE_ARG_REGION, TL_TILE_ARG_EXPR } kind;
  tl_region_arg region;
  tl_expr *expr;
} tl_tile_arg;
/* A keyword argument of a tile op (transpose_B, policy, num_stages, dim, ...).
 * Booleans and integers are given as int expressions; policy as an int of
 * tl_gemm_policy. */
typedef struct tl_tile_kwarg {
  const char *name;
  tl_expr *value;
} tl_tile_kwarg;
/* Emits a tile op by name without "T." ("copy", "gemm", "fill", "clear",
 * "reduce_max", ..., "atomic_add", "use_swizzle").  Unknown op or keyword:
 * builder error. */
TL_API void tl_builder_tile_op(tl_builder *b, const char *op, const tl_tile_arg *args, size_t nargs,
                               const tl_tile_kwarg *kwargs, size_t nkwargs);

#ifdef __cplusplus
}
#endif
#endif
