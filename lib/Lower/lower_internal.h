/* Internal interface of lib/Lower: the fragment layout record that layout
 * inference attaches to tl_buffer.layout, the entry points of the passes that
 * tl_lower_module (pipeline.c) runs in order, and the small analyses and
 * expression builders they share (util.c). */
#ifndef TL_LOWER_INTERNAL_H
#define TL_LOWER_INTERNAL_H

#include "IR/tir.h"
#include "Lower/lower.h"

/* Nesting limit for the recursive walks of lib/Lower (statements and
 * expressions); deeper input is an error, never a stack overflow. */
#define TL_LOWER_MAX_DEPTH 400

/* --------------------------------------------------------- fragment layouts */
/* PLAN: the fragment (static shape S, E elements, row-major flat index f) is
 * spread over `threads` threads in vectors of `vec` consecutive elements:
 *     thread(f) = (f / vec) % threads
 *     reg(f)    = (f / (vec * threads)) * vec + f % vec
 * Each thread holds nregs = nvec * vec registers, nvec = ceil(E / (vec*threads));
 * the inverse is f = (r / vec) * vec * threads + tid * vec + r % vec, valid iff
 * f < E (vec divides E, so a vector is wholly valid or wholly idle).
 * REPLICATED: every thread holds all E elements; reg(f) = f. */
typedef enum { TL_FRAG_PLAN, TL_FRAG_REPLICATED } tl_frag_kind;

typedef struct tl_frag_layout {
  tl_frag_kind kind;
  int ndim;
  int64_t *shape;       /* the fragment's original static shape */
  int64_t total;        /* E */
  int64_t threads, vec; /* PLAN only (REPLICATED: threads 1, vec 1) */
  int64_t nvec, nregs;  /* per-thread vectors / registers */
  tl_loc set_at;        /* the op that decided the layout */
  const char *set_by;   /* its spelling, e.g. "T.Parallel" */
} tl_frag_layout;

static inline tl_frag_layout *tl_frag_layout_of(const tl_buffer *b) {
  return b && b->scope == TL_SCOPE_FRAGMENT ? (tl_frag_layout *)b->layout : NULL;
}

/* ----------------------------------------------------------------- passes */
/* check_supported.c: rejects ops that no issue has lowered yet. */
bool tl_lower_check_supported(tl_module *m, tl_primfunc *f, tl_diag *d);
/* layout_infer.c: attaches a tl_frag_layout to every fragment buffer. */
bool tl_lower_infer_layouts(tl_module *m, tl_primfunc *f, tl_diag *d);
/* lower_tile.c: tile ops and T.Parallel → per-thread SIMT statements. */
bool tl_lower_tile_ops(tl_module *m, tl_primfunc *f, tl_diag *d);

/* ------------------------------------------------------ shared utilities */
/* Names used in a function (for fresh names that never shadow). */
typedef struct tl_names { tl_map set; tl_module *m; int counter; } tl_names;
bool tl_names_collect(tl_names *n, tl_module *m, const tl_primfunc *f);
void tl_names_free(tl_names *n);
/* A new variable named base (or base_K when taken). NULL on OOM. */
tl_var *tl_names_fresh_var(tl_names *n, tl_loc loc, const char *base, tl_dtype t,
                           tl_var_kind kind);

/* Integer intervals for guard elision: var → [lo, hi]. */
typedef struct tl_range { int64_t lo, hi; } tl_range;
typedef struct tl_ranges { tl_map map; tl_arena *arena; int64_t threads; } tl_ranges;
void tl_ranges_init(tl_ranges *r, tl_arena *arena);
void tl_ranges_free(tl_ranges *r);
bool tl_ranges_set(tl_ranges *r, const tl_var *v, int64_t lo, int64_t hi);
void tl_ranges_unset(tl_ranges *r, const tl_var *v);
/* Bounds of integer expression e; false when unknown. */
bool tl_expr_range(const tl_ranges *r, const tl_expr *e, tl_range *out);

/* True when e is provably a multiple of k (k > 0).  Variables are multiples
 * only of 1, except `lane`, which counts as 0 (its contribution is analysed
 * separately by tl_expr_lane_coef). */
bool tl_expr_divisible(const tl_expr *e, int64_t k, const tl_var *lane);
/* True when e does not mention variable v. */
bool tl_expr_free_of(const tl_expr *e, const tl_var *v);
/* e = c * lane + (terms free of lane)?  Sets *coef; false when not affine. */
bool tl_expr_lane_coef(const tl_expr *e, const tl_var *lane, int64_t *coef);

/* Builders (int32 index math); NULL on OOM. */
tl_expr *tl_lo_int(tl_module *m, tl_loc loc, int64_t v);
tl_expr *tl_lo_add(tl_module *m, tl_loc loc, tl_expr *a, tl_expr *b);
tl_expr *tl_lo_mul(tl_module *m, tl_loc loc, tl_expr *a, int64_t k);
/* floordiv / floormod by a positive constant, simplified exactly. */
tl_expr *tl_lo_fdiv(tl_module *m, tl_loc loc, tl_expr *a, int64_t c, const tl_ranges *r);
tl_expr *tl_lo_fmod(tl_module *m, tl_loc loc, tl_expr *a, int64_t c, const tl_ranges *r);
tl_expr *tl_lo_thread_index(tl_module *m, tl_loc loc);  /* T.get_thread_binding(0) */
tl_expr *tl_lo_ramp(tl_module *m, tl_loc loc, tl_expr *base, int lanes);
tl_expr *tl_lo_broadcast(tl_module *m, tl_loc loc, tl_expr *value, int lanes);
/* The value cast to t (keeping lanes of t); vector casts are built directly. */
tl_expr *tl_lo_cast(tl_module *m, tl_loc loc, tl_dtype t, tl_expr *x);
/* A store statement. */
tl_stmt *tl_lo_store(tl_module *m, tl_loc loc, tl_buffer *b, int n, tl_expr **idx,
                     tl_expr *value);
tl_stmt *tl_lo_if(tl_module *m, tl_loc loc, tl_expr *cond, tl_stmt *then_s, tl_stmt *else_s);
tl_stmt *tl_lo_for(tl_module *m, tl_loc loc, tl_loop_kind kind, tl_var *v, tl_expr *extent,
                   tl_stmt *body);

#endif
