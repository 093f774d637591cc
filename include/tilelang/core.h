/* libtilelang core: export macro, status codes, the context object.
 *
 * Every fallible call returns a tl_status.  On failure the human-readable
 * message (diagnostics for bad kernels, "argument X: expected ..., got ..."
 * for bad calls, the driver's error name and JIT log for CUDA failures) is
 * kept in the context and fetched with tl_context_last_error().  The library
 * never exits or aborts on user error. */
#ifndef TILELANG_CORE_H
#define TILELANG_CORE_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#if defined(TL_BUILDING_LIBRARY)
#define TL_API __attribute__((visibility("default")))
#else
#define TL_API
#endif

/* Status codes; the values are part of the ABI. */
typedef enum tl_status {
  TL_OK = 0,
  TL_ERR_INVALID_ARGUMENT = 1, /* a bad argument to a C API call */
  TL_ERR_COMPILE = 2,          /* the kernel source is malformed or cannot be compiled */
  TL_ERR_IO = 3,               /* a file could not be read or written */
  TL_ERR_NO_MEMORY = 4,        /* host allocation failed */
  TL_ERR_NO_DEVICE = 5,        /* no CUDA driver or no GPU */
  TL_ERR_CUDA = 6,             /* a CUDA driver call failed */
  TL_ERR_UNSUPPORTED = 7,      /* valid input that this version cannot handle */
  TL_ERR_INTERNAL = 8          /* a bug in libtilelang */
} tl_status;

/* Name of a status code ("TL_ERR_COMPILE"); never NULL. */
TL_API const char *tl_status_name(tl_status s);

/* A context holds all mutable library state: the last error and the
 * diagnostics of the last call.  Use one context per thread (distinct
 * contexts may be used from distinct threads concurrently). */
typedef struct tl_context tl_context;

/* Creates a context in *out.  Errors: TL_ERR_INVALID_ARGUMENT (out NULL),
 * TL_ERR_NO_MEMORY.  Destroy with tl_context_destroy. */
TL_API tl_status tl_context_create(tl_context **out);
/* Frees the context; NULL is allowed.  Objects created from it (modules,
 * kernels) must be destroyed first. */
TL_API void tl_context_destroy(tl_context *ctx);
/* The message of the last failing call on ctx: the full rendered
 * diagnostics (file:line:col: error: ..., source line, caret, notes),
 * or "" when the last call succeeded.  Owned by ctx; valid until the next
 * call on ctx.  ctx NULL gives "". */
TL_API const char *tl_context_last_error(const tl_context *ctx);
/* The warnings of the last call on ctx when it succeeded (rendered as
 * diagnostics: file:line:col: warning: ..., source line, caret), or "".
 * Owned by ctx; valid until the next call on ctx.  ctx NULL gives "". */
TL_API const char *tl_context_warnings(const tl_context *ctx);
/* Number of errors reported by the last call on ctx. */
TL_API int tl_context_error_count(const tl_context *ctx);
/* Location of the first error of the last failing call: *line and *col
 * (1-based; 0 when it had none) and the file name (owned by ctx).  Any out
 * pointer may be NULL. */
TL_API void tl_context_first_error_location(const tl_context *ctx, const char **file, int *line, int *col);

/* Frees memory that the library returned to the caller (printed text). */
TL_API void tl_free(void *p);

#ifdef __cplusplus
}
#endif
#endif
