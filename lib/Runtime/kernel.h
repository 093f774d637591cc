/* Compiled kernel objects (internal): the parameter signature, the launch
 * expressions as small integer programs, per-device loaded modules, and the
 * argument binder that checks a call before anything touches the GPU.
 *
 * The signature is copied out of the prim_func at compile time so that the
 * kernel does not keep the IR module alive (and so that unit tests can build
 * one by hand). */
#ifndef TL_RUNTIME_KERNEL_H
#define TL_RUNTIME_KERNEL_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

#include "IR/tir.h"
#include "Runtime/driver.h"
#include "Support/support.h"
#include "tilelang/runtime.h"

/* ------------------------------------------------- integer programs */
/* A postfix program over int64 evaluated at call time: grid, threads and
 * tensor dims as functions of the dynamic symbols and integer scalar
 * parameters.  Built from tl_expr trees (INT, VAR, BINARY add/sub/mul/div/
 * floordiv/floormod/min/max, NEG, CALL ceildiv/min/max, CAST to an int). */
typedef enum tl_rx_kind {
  TL_RX_CONST,  /* push value */
  TL_RX_SYM,    /* push dynamic symbol #index */
  TL_RX_SCALAR, /* push integer scalar parameter #index (param index) */
  TL_RX_NEG,    /* x → -x */
  TL_RX_BIN     /* a b → a op b */
} tl_rx_kind;
typedef enum tl_rx_binop {
  TL_RXB_ADD,
  TL_RXB_SUB,
  TL_RXB_MUL,
  TL_RXB_DIV /* trunc */,
  TL_RXB_FLOORDIV,
  TL_RXB_FLOORMOD,
  TL_RXB_MIN,
  TL_RXB_MAX,
  TL_RXB_CEILDIV
} tl_rx_binop;
typedef struct tl_rx_op {
  uint8_t kind, op;
  int32_t index;
  int64_t value;
} tl_rx_op;
#define TL_RX_MAX_DEPTH 200 /* expression nesting the translator accepts */
typedef struct tl_rx_prog {
  tl_rx_op *ops;
  int n;
} tl_rx_prog;

/* Translates e into *out (ops malloc'd).  Vars: dynamic symbols are looked up
 * in syms[0..nsyms), scalar parameters in scalars[0..nscalars) (giving the
 * parameter index scalar_param[k]).  false with a message in *err (malloc'd)
 * for an unsupported expression or on OOM. */
bool tl_rx_translate(const tl_expr *e, tl_var *const *syms, int nsyms, tl_var *const *scalars, const int *scalar_param,
                     int nscalars, tl_rx_prog *out, char **err);
/* A program that pushes one constant. */
bool tl_rx_const(int64_t v, tl_rx_prog *out);
/* True when p is exactly one constant (*v) / exactly one symbol (*sym). */
/* (inline: the binder asks this of every dim of every tensor on each call) */
static inline bool tl_rx_is_const(const tl_rx_prog *p, int64_t *v) {
  if (p->n != 1 || p->ops[0].kind != TL_RX_CONST) return false;
  if (v) *v = p->ops[0].value;
  return true;
}
static inline bool tl_rx_is_sym(const tl_rx_prog *p, int *sym) {
  if (p->n != 1 || p->ops[0].kind != TL_RX_SYM) return false;
  if (sym) *sym = p->ops[0].index;
  return true;
}
/* Evaluates p.  symv[i]: value of symbol i; scalarv[i]: value of parameter i
 * (only integer scalar slots are read).  false on overflow, division by zero
 * or a malformed program, with a static reason in *why. */
bool tl_rx_eval(const tl_rx_prog *p, const int64_t *symv, const int64_t *scalarv, int64_t *out, const char **why);
/* Renders p as an infix expression (for messages); symbol and parameter
 * names from the signature. */
struct tl_rt_sig;
/* A tensor parameter's declared type as the argument errors print it:
 * "float16[M, 1024]" (dims as tl_rx_print writes them).  bind.c. */
struct tl_rt_param;
void tl_rt_param_shape_text(tl_strbuf *s, const struct tl_rt_param *p, const struct tl_rt_sig *sig);
void tl_rx_print(tl_strbuf *s, const tl_rx_prog *p, const struct tl_rt_sig *sig);
void tl_rx_free(tl_rx_prog *p);

/* ----------------------------------------------------------- signature */
typedef struct tl_rt_dim {
  tl_rx_prog prog; /* constant, one symbol, or an expression of symbols */
} tl_rt_dim;

typedef struct tl_rt_param {
  char *name;
  bool is_tensor;
  tl_dtype dtype; /* element dtype (tensor) or scalar dtype */
  int ndim;
  tl_rt_dim *dims;
  bool is_output;     /* named by out_idx: allocated by the call */
  int align;          /* required alignment of data + byte_offset (bytes) */
  bool unused;        /* a tensor the kernel never reads or writes, of static shape:
                        a call may pass a NULL tensor for it (TileLang's None) */
  tl_rt_dim *strides; /* T.StridedTensor: ndim element strides, each a constant or one
                         symbol (bound from the tensor's strides); NULL: compact row-major */
} tl_rt_param;

/* One tensor map of the kernel (tl_tma_collect's entry; lib/Runtime/Hopper/tma.c):
 * the kernel's parameter nparams + nsyms + i is its 128-byte CUtensorMap. */
typedef struct tl_rt_tma {
  int param;                     /* the tensor parameter */
  int rank;                      /* 1..TL_TMA_MAX_RANK */
  uint32_t box[TL_TMA_MAX_RANK]; /* box extents, outermost first */
  int swizzle;                   /* bytes: 0, 32, 64, 128 */
} tl_rt_tma;

typedef struct tl_rt_sig {
  int ntma; /* tensor maps, passed after the dynamic symbols */
  tl_rt_tma *tma;
  /* kernel workspaces (tl_workspace_collect: stream-K's slots and counters,
   * T.alloc_global's buffers), one device pointer each after the tensor
   * maps, to zeroed memory the runtime keeps per (device, stream)
   * (workspace.c); ws_zero[i]: zeroed again before every launch
   * (T.alloc_global: tl_buffer.zero_per_launch) */
  int nws;
  int64_t ws_bytes[TL_WORKSPACE_MAX];
  bool ws_zero[TL_WORKSPACE_MAX];
  int nparams;
  tl_rt_param *params;
  int nsyms;
  char **sym_names;
  /* [nsyms] the symbol is int64 (T.dynamic(name, "int64")): any
   * non-negative value, passed as an int64 kernel parameter; the others are
   * int32 (values above 2^31 - 1 are refused) */
  bool *sym_int64;
  int nout;
  int *out_idx; /* normalized, given order */
  int ngrid;
  tl_rx_prog grid[3];
  tl_rx_prog threads;
  int64_t smem_bytes;
  /* The launch stages after the first, in launch order: a prim_func with
   * several T.Kernel scopes (lib/Lower/split_kernels.c) is one entry point
   * per scope, each launched after the one before on the call's stream,
   * with the same arguments (the same kernel ABI: no tensor maps or
   * workspaces then) and its own grid, threads and shared memory; the
   * first stage is the entry `name` with grid/threads/smem_bytes above. */
  int nstages;
  struct tl_rt_stage {
    char *entry;
    int ngrid;
    tl_rx_prog grid[3];
    tl_rx_prog threads;
    int64_t smem_bytes;
  } * stages;
} tl_rt_sig;
typedef struct tl_rt_stage tl_rt_stage;

/* The grid, block and dynamic shared memory of stage st (1..nstages) of sig
 * for the symbol and scalar values of a binding (symv, scalarv); false with
 * a static reason in *why (overflow, a value out of the launch's range). */
bool tl_rt_stage_dims(const tl_rt_sig *sig, int st, const int64_t *symv, const int64_t *scalarv, unsigned grid[3],
                      unsigned *block, unsigned *smem, const char **why);

void tl_rt_sig_free(tl_rt_sig *s);

/* Normalizes out_idx into norm[0..n) by the one rule (lib/IR/out_idx.h,
 * over sig's parameters: a T.StridedTensor is one whose strides are set).
 * Errors (index out of range, duplicate, a scalar or strided parameter) →
 * false with a malloc'd message in *err (NULL: out of memory) and, when the
 * refused entry names a parameter, its index in *bad_param (else -1). */
bool tl_rt_normalize_out_idx(const tl_rt_sig *sig, const int *idx, size_t n, int *norm, char **err, int *bad_param);
/* tl_rt_normalize_out_idx, then sets sig's nout/out_idx and the params'
 * is_output. */
bool tl_rt_set_out_idx(tl_rt_sig *sig, const int *idx, size_t n, char **err, int *bad_param);

/* Checks that every output dim can be computed from symbols that input
 * tensors bind.  false with a malloc'd message otherwise, and *bad_param
 * (when not NULL) the index of the output parameter at fault (-1: none). */
bool tl_rt_check_solvable(const tl_rt_sig *sig, char **err, int *bad_param);

/* The DLPack 0.6 dtype a tensor of dtype t crosses the API as (bind.c):
 * bool as uint8 (no bool code), float8_e4m3/float8_e5m2 as uint8 (no
 * float8 code before DLPack 1.x), every other dtype its own code. */
DLDataType tl_rt_dl_dtype(tl_dtype t);
/* The text a call's dtype check gives for a tensor's DLPack dtype d ("float16", or "dlpack(code=.., bits=..,
 * lanes=..)" for one the library has no name for) into buf (bind.c; lib/Runtime/aot.c tabulates it). */
void tl_rt_dl_dtype_text(DLDataType d, char *buf, size_t n);

/* Fills m as the DLPack view of an output the library allocated (bind.c):
 * data on device dev, p's ndim and dtype (tl_rt_dl_dtype), shape (p->ndim
 * entries, owned by the caller's allocation, which must outlive m), compact
 * (no strides, no byte offset); manager_ctx = owner, deleter as given. */
void tl_rt_dl_output(DLManagedTensor *m, void *data, DLDevice dev, const tl_rt_param *p, int64_t *shape, void *owner,
                     void (*deleter)(DLManagedTensor *));

/* ------------------------------------------------------------- binding */
/* Result of checking a call: everything the launch needs. */
#define TL_RT_BINDING_INLINE_WORDS 256
#define TL_RT_BINDING_INLINE_MAPS 4
typedef struct tl_rt_binding {
  int nparams; /* sizes of the per-parameter arrays */
  int device;  /* CUDA device id of the tensors (0 when none) */
  bool any_tensor;
  int64_t *symv;                     /* [nsyms] solved dynamic symbols */
  int64_t *scalarv;                  /* [nparams] integer value of each integer scalar */
  uint64_t *slots;                   /* [nparams + nsyms] kernel parameter storage */
  void **kargs;                      /* [nparams + nsyms + ntma] pointers into slots, then into tma_maps */
  uint8_t *tma_maps;                 /* [ntma][128] the encoded tensor maps (64-byte aligned), or NULL */
  uint64_t ws_ptr[TL_WORKSPACE_MAX]; /* the workspace pointers (kargs after the maps point here) */
  int64_t **out_shapes;              /* [nparams] shape of each output (malloc'd, else NULL) */
  size_t *out_bytes;                 /* [nparams] bytes of each output */
  void *block_mem;                   /* the one allocation holding the arrays above */
  uint64_t *scratch;                 /* [3 * (nsyms + 1)] the binder's own bookkeeping, in block_mem */
  bool has_outputs;                  /* out_shapes may hold allocations (the kernel has out_idx outputs) */
  bool maps_ready;                   /* tma_maps are filled already (from the call memo, memo.c) */
  unsigned grid[3];                  /* 0 only in an empty call (below) */
  bool empty;                        /* a grid dim is 0 because a dynamic dim is 0: launch nothing */
  unsigned block;
  unsigned smem;
  /* Storage for the arrays above when they fit (no allocation per call
   * for usual kernels): block_mem points at inline_words when the
   * arrays take at most TL_RT_BINDING_INLINE_WORDS words, tma_maps at
   * inline_maps for at most TL_RT_BINDING_INLINE_MAPS maps.  Last in the
   * struct: tl_rt_bind and tl_rt_binding_free clear only what precedes them
   * (TL_RT_BINDING_HEAD), and a binding must not be copied (it points into
   * itself). */
  uint8_t inline_maps[TL_RT_BINDING_INLINE_MAPS][128] __attribute__((aligned(64)));
  uint64_t inline_words[TL_RT_BINDING_INLINE_WORDS];
} tl_rt_binding;
/* The bytes of tl_rt_binding before its inline storage. */
#define TL_RT_BINDING_HEAD offsetof(tl_rt_binding, inline_maps)

/* Checks args against sig (docs/runtime.md "A kernel and a call") without touching the driver; fills b
 * (free with tl_rt_binding_free even on failure).  On a failure records
 * "argument 'NAME' (#i): what: expected X, got Y" lines in ctx and returns
 * TL_ERR_INVALID_ARGUMENT (TL_ERR_NO_MEMORY on OOM). */
tl_status tl_rt_bind(tl_context *ctx, const tl_rt_sig *sig, const tl_arg *args, size_t nargs, tl_rt_binding *b);
/* As tl_rt_bind, but the tensors must be host memory (kDLCPU) when cpu is
 * true (the CPU executors), CUDA memory otherwise (tl_rt_bind). */
tl_status tl_rt_bind_on(tl_context *ctx, const tl_rt_sig *sig, const tl_arg *args, size_t nargs, bool cpu,
                        tl_rt_binding *b);
void tl_rt_binding_free(tl_rt_binding *b);
/* Lays out b's arrays for sig (the first step of tl_rt_bind; the call
 * memo fills them itself): kargs[i] points at slots[i] and the workspace
 * entries at ws_ptr; every array zeroed when zero, else only out_shapes
 * (the caller writes symv, scalarv, slots and out_bytes in full).  false on
 * OOM (b still freeable). */
bool tl_rt_binding_init(const tl_rt_sig *sig, tl_rt_binding *b, bool zero);

/* ------------------------------------------------ call memo (memo.c) */
/* The last successful CUDA call of a kernel (the launch path):
 * its arguments as a flat key (each tensor's kind, data, byte_offset,
 * device, dtype, ndim, shape and strides values; each scalar's kind and
 * value bits) and what tl_rt_bind made of them, plus the tensor maps when
 * every map is over an input.  tl_rt_bind is a pure function of (sig,
 * args), so a call whose key is equal word for word gets the same binding
 * without re-checking; anything else takes the full path.  Guarded by the
 * kernel's mutex. */
typedef struct tl_rt_memo {
  bool valid;
  size_t nargs;
  uint64_t *key;
  size_t nkey, key_cap;
  int device;
  bool any_tensor, empty;
  unsigned grid[3], block, smem;
  uint64_t *image; /* the binding's symv, scalarv and slots (outputs' slots 0) */
  size_t nimage;
  size_t *out_bytes; /* [nparams] (outputs only) */
  int64_t *out_dims; /* the outputs' shapes, one after another */
  bool maps_valid;   /* maps hold the call's tensor maps */
  uint8_t *maps;     /* [ntma][128] */
} tl_rt_memo;

struct tl_kernel;
/* When args equal the memo's key: fills b as tl_rt_bind would (b's arrays
 * laid out, output shapes malloc'd, the tensor maps when the memo has
 * them: b->maps_ready) and returns true.  false on a miss or OOM (b then
 * freed and zeroed: bind it the full way). */
bool tl_rt_memo_lookup(struct tl_kernel *k, const tl_arg *args, size_t nargs, tl_rt_binding *b);
/* Records a successful call: args and its binding b (b's maps when
 * maps_ok and the kernel has maps; output slots are not recorded).  Best
 * effort: on OOM the memo is just left invalid. */
void tl_rt_memo_store(struct tl_kernel *k, const tl_arg *args, size_t nargs, const tl_rt_binding *b, bool maps_ok);
void tl_rt_memo_free(tl_rt_memo *m);

/* ------------------------------------------------ tensor maps (tma.c) */
/* The arguments of one cuTensorMapEncodeTiled call (CUDA driver API,
 * "Tensor Map Object Management"), innermost dimension first. */
typedef struct tl_rt_tma_encode {
  int data_type; /* CUtensorMapDataType */
  uint32_t rank;
  uint64_t addr;                                   /* data + byte_offset */
  uint64_t dims[TL_TMA_MAX_RANK];                  /* the tensor's shape reversed */
  uint64_t strides[TL_TMA_MAX_RANK - 1];           /* byte strides of dims 1..r-1 (reversed order) */
  uint32_t box[TL_TMA_MAX_RANK];                   /* the box reversed */
  uint32_t elem_strides[TL_TMA_MAX_RANK];          /* all 1 */
  int interleave, swizzle, l2_promotion, oob_fill; /* NONE, the swizzle, L2_128B, FLOAT_OOB_FILL_NONE */
} tl_rt_tma_encode;

/* What a cached map was encoded from: equal keys give equal maps. */
typedef struct tl_rt_tma_key {
  uint64_t addr;
  int64_t shape[TL_TMA_MAX_RANK], strides[TL_TMA_MAX_RANK]; /* strides in elements */
  tl_dtype dtype;
  uint32_t box[TL_TMA_MAX_RANK];
  int rank, swizzle, device;
} tl_rt_tma_key;

/* Builds the key and the encode arguments of map m for tensor t (its
 * DLPack shape, strides in elements or NULL for compact row-major, data +
 * byte_offset) on `device`.  *rule: NULL, or the first of the driver's
 * rules (cuTensorMapEncodeTiled) the arguments break, a static string for
 * messages ("the address is not 16-byte aligned", "a stride is not a
 * multiple of 16 bytes", ...).  false (with *rule) only when the tensor's
 * dtype has no CUtensorMapDataType or its rank differs from m's. */
bool tl_rt_tma_args(const tl_rt_tma *m, const DLTensor *t, tl_dtype dtype, int device, tl_rt_tma_key *key,
                    tl_rt_tma_encode *enc, const char **rule);

/* Allocates b->tma_maps (sig->ntma maps of 128 bytes, 64-byte aligned,
 * zeroed, freed by tl_rt_binding_free) and points kargs[first + i] at map
 * i (tl_rt_bind leaves room for them in kargs); the launch fills them with
 * tl_rt_tma_fill.  false on OOM. */
bool tl_rt_tma_bind_maps(const tl_rt_sig *sig, size_t first, tl_rt_binding *b);

/* The map cache of one kernel on one device: per map index the last key
 * and its encoded map; `encodes` counts the encoder's calls. */
typedef struct tl_rt_tma_cache {
  int n;
  struct tl_rt_tma_slot {
    bool valid;
    tl_rt_tma_key key;
    uint64_t map[16];
  } * slot;
  uint64_t encodes;
} tl_rt_tma_cache;
tl_rt_tma_cache *tl_rt_tma_cache_new(int n); /* NULL on OOM */
void tl_rt_tma_cache_free(tl_rt_tma_cache *c);

/* The encoder: cuTensorMapEncodeTiled's signature (a mock in unit tests). */
typedef tl_CUresult (*tl_rt_tma_encoder)(void *map, int data_type, uint32_t rank, void *addr, const uint64_t *dims,
                                         const uint64_t *strides, const uint32_t *box, const uint32_t *elem_strides,
                                         int interleave, int swizzle, int l2_promotion, int oob_fill);

/* Fills maps[i * 128 ..] for every tensor map of sig from the tensor of
 * its parameter (tensors[param]: the call's DLTensor, outputs included),
 * from the cache when the key is the one last encoded for that map, else
 * by calling enc and caching.  The caller holds the lock guarding cache.
 * Errors: TL_ERR_CUDA "tensor map #i of argument 'NAME' (box AxB, swizzle
 * S): cuTensorMapEncodeTiled failed: CUresult name (rule)";
 * TL_ERR_INVALID_ARGUMENT for a dtype without a map type. */
tl_status tl_rt_tma_fill(tl_context *ctx, const tl_rt_sig *sig, const DLTensor *const *tensors, int device,
                         tl_rt_tma_cache *cache, tl_rt_tma_encoder enc, uint8_t *maps);

/* The launch's maps: binds b's map storage (tl_rt_tma_bind_maps) and fills
 * it (tl_rt_tma_fill) under k->mu with device slot s's cache, from the
 * call's tensors: args (the inputs, as tl_kernel_call takes them) and
 * outputs[j] for out_idx output j, or outputs NULL when they are not
 * allocated (tl_kernel_launch_info: a map over an output is then an
 * error, TL_ERR_UNSUPPORTED). */
struct tl_rt_devslot;
tl_status tl_rt_tma_prepare(tl_context *ctx, tl_kernel *k, struct tl_rt_devslot *s, const tl_arg *args,
                            const DLTensor *const *outputs, tl_rt_tma_encoder enc, tl_rt_binding *b);

/* ------------------------------------------- workspaces (workspace.c) */
/* Points b->kargs[nparams + nsyms + ntma + i] at workspace i of the call's
 * stream on device slot s: allocated zeroed (cuMemAlloc, then
 * cuMemsetD8Async on that stream, so it is ordered before the launch) the
 * first time the kernel runs on that stream, reused after (the kernel
 * returns its counters to zero; each stream its own, so concurrent calls on
 * different streams do not share one).  The caller has s's context
 * current.  A no-op for kernels without workspaces. */
tl_status tl_rt_ws_prepare(tl_context *ctx, const tl_driver *drv, tl_kernel *k, struct tl_rt_devslot *s, void *stream,
                           tl_rt_binding *b);
/* Frees slot s's workspaces (its context current). */
void tl_rt_ws_free(const tl_driver *drv, struct tl_rt_devslot *s);

/* --------------------------------------------------------------- kernel */
typedef struct tl_rt_devslot {
  bool loaded;
  bool retained; /* primary context retained by this kernel */
  tl_CUdevice dev;
  tl_CUcontext pctx;
  tl_CUmodule module;
  tl_CUfunction fn;
  tl_CUfunction *stage_fn; /* [sig.nstages] the entries of the later launch stages */
  int max_threads;         /* CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK */
  int max_grid[3];
  int smem_optin;   /* device's opt-in maximum of dynamic shared memory */
  int64_t smem_set; /* dynamic smem limit already set on fn (0: default 48 KB) */
  /* [nparams] per tensor parameter, the last pointer that
   * cuPointerGetAttribute(DEVICE_ORDINAL) showed to be memory of this device
   * (0: none); read and written with __atomic builtins, since calls may run
   * on several threads.  A call passing the same pointer again skips the
   * query (a host call costs ~1 us of driver time per query otherwise). */
  uint64_t *checked_ptr;
  struct tl_rt_tma_cache *tma_cache; /* encoded tensor maps of this device (tma.c), under mu */
  /* the kernel workspaces of this device, one allocation per stream that
   * launched the kernel (workspace.c), under mu */
  struct tl_rt_ws {
    void *stream;
    tl_CUdeviceptr ptr;
  } * ws;
  int nws, ws_cap;
} tl_rt_devslot;

struct tl_kernel {
  tl_rt_sig sig;
  char *name; /* entry name = prim_func name */
  char *target;
  int sms; /* tl_compile_options.sms compiled for (0: the target's); a relowering keeps it */
  char *ptx, *llvm_ir, *simt_ir;
  /* The PTX compiled off the driver by nvJitLink for CUDA device
   * cubin_device (jitlink.c; the autotuner's parallel JIT), which
   * tl_kernel_load passes to the driver instead of the PTX on that device;
   * NULL when not made.  Owned; set under mu. */
  void *cubin;
  size_t cubin_size;
  int cubin_device;
  unsigned flags; /* TL_COMPILE_* */
  /* The IR kept for the CPU executors (lib/Runtime/cpu.c): the tile IR as
   * parsed (tl_ref_eval) and the lowered SIMT IR (tl_simt_exec).  Owned;
   * NULL for kernels built by hand. */
  tl_module *tile_module, *simt_module;
  int cache_result;   /* tl_cache_result of the compile */
  char cache_key[33]; /* hex key, "" when the cache was not consulted */
  pthread_mutex_t mu; /* guards slots, memo, and simt_module once compiled */
  tl_rt_memo memo;    /* the last successful CUDA call (memo.c), under mu */
  int nslots;
  tl_rt_devslot *slots;
};

/* Whether nvJitLink could be loaded (jitlink.c: $TL_NVJITLINK, else
 * libnvJitLink.so.13/.12 on the loader's path or under $CUDA_HOME,
 * $CUDA_PATH, /usr/local/cuda); loaded once per process, thread-safe. */
bool tl_rt_jitlink_available(void);

/* Compiles NUL-terminated PTX text with nvJitLink for architecture arch
 * ("sm_90a", "sm_80") into a malloc'd cubin (*cubin, *cubin_size bytes; the
 * caller frees it).  name labels the input in nvJitLink's log.  No driver or
 * GPU is needed.  Errors: TL_ERR_UNSUPPORTED without nvJitLink, TL_ERR_CUDA
 * with nvJitLink's error number and error log (e.g. PTX the compiler
 * rejects); *cubin is then NULL. */
tl_status tl_rt_jitlink_compile(tl_context *ctx, const char *ptx, const char *name, const char *arch, void **cubin,
                                size_t *cubin_size);

/* Compiles k->ptx with nvJitLink for the architecture of CUDA device
 * `device` (sm_XY from its compute capability, or k->target when that is
 * the same architecture's sm_XYa) into k->cubin / k->cubin_size /
 * k->cubin_device, so that a later tl_kernel_load on that device loads the
 * cubin and the driver's own JIT does not run.  Runs without any lock but
 * k->mu at the end, so several kernels compile on several threads at once.
 * Errors: TL_ERR_UNSUPPORTED without nvJitLink, TL_ERR_NO_DEVICE without a
 * driver, TL_ERR_CUDA with nvJitLink's error number and log; k is then
 * unchanged and the driver's JIT still serves. */
tl_status tl_rt_kernel_jitlink(tl_context *ctx, tl_kernel *k, int device);

/* A zeroed kernel with its mutex initialised; NULL on OOM. */
tl_kernel *tl_rt_kernel_new(void);

/* Lowers k->tile_module again into k->simt_module (and nothing else) when
 * k came from the disk cache without it, under k->mu; TL_OK when k has a
 * SIMT module already or no tile module. */
tl_status tl_rt_kernel_lower_simt(tl_context *ctx, tl_kernel *k);

/* Runs a checked call on the CPU (lib/Runtime/cpu.c): the SIMT executor on
 * k->simt_module, or with reference true the tile-level reference evaluator
 * on k->tile_module.  Arguments as tl_kernel_call, tensors on kDLCPU;
 * outputs malloc'd as kDLCPU DLManagedTensors. */
tl_status tl_rt_call_cpu(tl_context *ctx, tl_kernel *k, const tl_arg *args, size_t nargs, bool reference,
                         DLManagedTensor **outputs);

/* ------------------------------------------------- configs.c */
/* tl_gemm_configs for a GPU with sms SMs (tl_gemm_configs passes the
 * driver's count, tl_driver_sm_count, or TL_GEMM_CONFIGS_NO_GPU_SMS without
 * a GPU). */
size_t tl_gemm_configs_for(int sms, int64_t M, int64_t N, int64_t K, tl_dtype in, tl_gemm_config *out, size_t cap);
/* tl_gemm_configs_target for a GPU with sms SMs. */
size_t tl_gemm_configs_target_for(int sms, const char *target, unsigned flags, int64_t M, int64_t N, int64_t K,
                                  tl_dtype in, tl_gemm_config *out, size_t cap);
/* The SM count the tile tables assume without a GPU (the CPU executor):
 * that of the sm_90a part the tables were measured on (132 SMs), so that a
 * machine without a GPU picks the tile that part would; on the CPU executor
 * blocks run one after another and the choice does not change the result. */
#define TL_GEMM_CONFIGS_NO_GPU_SMS 132

#endif
