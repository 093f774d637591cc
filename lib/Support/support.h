/* Support library (internal): arena allocation, growable vectors, string
 * interning, an open-addressing hash map, source buffers and the diagnostics
 * engine.  Everything the IR needs that is not about tiles.
 *
 * Allocation failure: arena and vector growth return NULL / false and set the
 * arena's `oom` flag; callers propagate TL_ERR_NO_MEMORY.  Nothing here exits
 * or aborts on user error. */
#ifndef TL_SUPPORT_H
#define TL_SUPPORT_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Evaluates x (an allocation, or a call that fails only when one does); when
 * it is false, sets the flag `failed` and returns `ret` from the calling
 * function.  A file names its short form once:
 *   #define CHECK(x) TL_TRY_ALLOC(x, st->oom, NULL) */
#define TL_TRY_ALLOC(x, failed, ret)                                                                                   \
  do {                                                                                                                 \
    if (!(x)) {                                                                                                        \
      (failed) = true;                                                                                                 \
      return ret;                                                                                                      \
    }                                                                                                                  \
  } while (0)

/* ------------------------------------------------------------------ arena */
/* A bump allocator: many small allocations, freed all at once.  Memory is
 * zero-initialised and aligned to 16 bytes. */
typedef struct tl_arena_chunk tl_arena_chunk;
typedef struct tl_arena {
  tl_arena_chunk *head;
  size_t total; /* bytes handed out so far */
  bool oom;     /* set once an allocation failed */
} tl_arena;

void tl_arena_init(tl_arena *a);
/* Zeroed, 16-byte aligned; NULL (and a->oom = true) when out of memory. */
void *tl_arena_alloc(tl_arena *a, size_t size);
/* Copy of n bytes plus a NUL terminator; NULL on OOM. */
char *tl_arena_strndup(tl_arena *a, const char *s, size_t n);
char *tl_arena_strdup(tl_arena *a, const char *s);
/* printf into the arena. */
char *tl_arena_printf(tl_arena *a, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Frees every chunk; the arena may be reused after tl_arena_init. */
void tl_arena_free(tl_arena *a);

/* ----------------------------------------------------------------- vector */
/* A growable array of any element type, backed by malloc:
 *   TL_VEC(int) v = {0};  if (!tl_vec_push(&v, 3)) ...oom...;  tl_vec_free(&v);
 * Elements live in v.data[0 .. v.len). */
#define TL_VEC(T)                                                                                                      \
  struct {                                                                                                             \
    T *data;                                                                                                           \
    size_t len, cap;                                                                                                   \
  }
bool tl_vec_grow_(void **data, size_t *cap, size_t need, size_t elem_size);
#define tl_vec_reserve(v, n) tl_vec_grow_((void **)&(v)->data, &(v)->cap, (n), sizeof(*(v)->data))
#define tl_vec_push(v, x) (tl_vec_reserve((v), (v)->len + 1) ? ((v)->data[(v)->len++] = (x), true) : false)
#define tl_vec_pop(v) ((v)->data[--(v)->len])
#define tl_vec_last(v) ((v)->data[(v)->len - 1])
#define tl_vec_free(v) (free((v)->data), (v)->data = NULL, (v)->len = (v)->cap = 0)
/* Copies the vector's elements into the arena (so IR nodes own plain arrays);
 * returns NULL for an empty vector or on OOM (check a->oom). */
void *tl_vec_to_arena_(tl_arena *a, const void *data, size_t len, size_t elem_size);
#define tl_vec_to_arena(a, v) tl_vec_to_arena_((a), (v)->data, (v)->len, sizeof(*(v)->data))

/* A growable string (malloc-backed) used by the printer and diagnostics. */
typedef struct tl_strbuf {
  char *data;
  size_t len, cap;
  bool oom;
} tl_strbuf;
void tl_strbuf_append(tl_strbuf *s, const char *str);
void tl_strbuf_appendn(tl_strbuf *s, const char *str, size_t n);
void tl_strbuf_printf(tl_strbuf *s, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void tl_strbuf_vprintf(tl_strbuf *s, const char *fmt, va_list ap);
/* Appends str (NULL: empty) as a double-quoted Python string literal:
 * backslash escapes for '"', '\\', newline, tab and carriage return, \xHH
 * for the other control bytes; other bytes as they are. */
void tl_strbuf_append_quoted(tl_strbuf *s, const char *str);
/* Hands the NUL-terminated buffer to the caller (free with free()); resets s. */
char *tl_strbuf_take(tl_strbuf *s);
void tl_strbuf_free(tl_strbuf *s);

/* --------------------------------------------------------------- hash map */
/* Open addressing, linear probing, keyed by pointer-sized values (interned
 * strings compare by pointer) and mapping to a void*.  Malloc-backed. */
typedef struct tl_map_entry {
  const void *key;
  void *value;
} tl_map_entry;
typedef struct tl_map {
  tl_map_entry *slots;
  size_t cap, len;
} tl_map;
void tl_map_init(tl_map *m);
void tl_map_free(tl_map *m);
/* Inserts or replaces; false on OOM.  key must not be NULL. */
bool tl_map_put(tl_map *m, const void *key, void *value);
/* Value for key, or NULL; *found (if non-NULL) tells a NULL value from absence. */
void *tl_map_get(const tl_map *m, const void *key, bool *found);
bool tl_map_remove(tl_map *m, const void *key);
/* FNV-1a over bytes. */
uint64_t tl_hash_bytes(const void *data, size_t n);

/* ------------------------------------------------------ string interning */
/* Interned strings are unique per table: equal text ⇔ equal pointer.  The
 * text lives in the table's arena and is NUL-terminated. */
typedef struct tl_intern {
  tl_arena *arena;
  char **slots;
  size_t cap, len;
} tl_intern;
void tl_intern_init(tl_intern *t, tl_arena *arena);
void tl_intern_free(tl_intern *t);                              /* frees the table, not the arena */
const char *tl_intern_n(tl_intern *t, const char *s, size_t n); /* NULL on OOM */
const char *tl_intern_str(tl_intern *t, const char *s);

/* --------------------------------------------------- sources and locations */
/* A source location: 1-based line, 1-based byte column; file NULL means
 * "no location" (e.g. the builder API without a name).  The special file
 * name "<command line>" prints without line/column. */
typedef struct tl_loc {
  const char *file;
  int line, col;
} tl_loc;
#define TL_LOC_NONE ((tl_loc){0, 0, 0})

/* ------------------------------------------------------------ diagnostics */
/* Format (docs/tools.md "The contract"):
 *   FILE:LINE:COL: error: message
 *   <the source line>
 *   <spaces>^
 *   FILE:LINE:COL: note: message        (notes follow their error)
 * For file "<command line>":  "<command line>: error: message".
 * For a location without a file: "error: message".
 * The engine knows source text for files registered with
 * tl_diag_add_source; other locations print without the source line. */
/* TL_DIAG_REMARK: what an optimisation decided and why (tl-opt --remarks,
 * LLVM's -Rpass in spirit); printed like warnings, counted apart. */
typedef enum tl_diag_level { TL_DIAG_ERROR, TL_DIAG_WARNING, TL_DIAG_NOTE, TL_DIAG_REMARK } tl_diag_level;

typedef struct tl_diag_source {
  const char *name; /* borrowed; name_len bytes (not NUL-terminated when it points into a text) */
  size_t name_len;
  const char *text; /* the text of lines first_line, first_line + 1, ... */
  size_t len;
  int first_line;
} tl_diag_source;
typedef struct tl_diag {
  TL_VEC(tl_diag_source) sources; /* texts are borrowed, must outlive use */
  tl_strbuf out;                  /* all rendered diagnostics, in order */
  int errors, warnings, remarks;
  tl_loc first_error;  /* location of the first error */
  char *first_message; /* message text of the first error (malloc) */
  int max_errors;      /* stop recording after this many (default 20) */
  /* remarks are wanted (tl_lower_options.remarks, set while each lowering
   * pass runs, tl_lower_run_pass): passes emit them only then */
  bool remarks_on;
} tl_diag;

void tl_diag_init(tl_diag *d);
void tl_diag_free(tl_diag *d);
/* Registers the text of a file for source-line display (borrowed).  A line
 * directive in it (tl_line_directive) starts a part that is another file's
 * text from line N on, registered as such, so diagnostics inside a helper of
 * another file show that file's line.  False when out of memory. */
bool tl_diag_add_source(tl_diag *d, const char *name, const char *text, size_t len);

/* The line directive `#@tl-line N PATH` (at column 1, a line of its own):
 * the next line is line N of file PATH.  The Python package writes it above
 * the compile-time helpers of another file that it appends to a kernel's file
 * (python/tilelang_ptx/_helpers.py); the lexer (lib/Frontend/lexer.c) and
 * tl_diag_add_source read it.  s[0, n): one line without its newline.
 * Returns 0 when the line is not a directive (it does not start with the
 * tag), 1 with *line (>= 1), *path and *path_len (> 0, pointing into s) set,
 * -1 when it starts with the tag but is malformed. */
/* Is a text registered under name (its first line, not a part a directive started)? */
bool tl_diag_has_source(const tl_diag *d, const char *name);
#define TL_LINE_DIRECTIVE_TAG "#@tl-line "
int tl_line_directive(const char *s, size_t n, long *line, const char **path, size_t *path_len);
void tl_diag_report(tl_diag *d, tl_diag_level level, tl_loc loc, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
void tl_diag_vreport(tl_diag *d, tl_diag_level level, tl_loc loc, const char *fmt, va_list ap);
#define tl_error(d, loc, ...) tl_diag_report((d), TL_DIAG_ERROR, (loc), __VA_ARGS__)
#define tl_note(d, loc, ...) tl_diag_report((d), TL_DIAG_NOTE, (loc), __VA_ARGS__)
#define tl_remark(d, loc, ...) tl_diag_report((d), TL_DIAG_REMARK, (loc), __VA_ARGS__)
/* Drops all recorded diagnostics (keeps sources). */
void tl_diag_clear(tl_diag *d);

#endif
