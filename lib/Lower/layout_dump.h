/* Layout dumps of lib/Lower (internal): the layouts layout inference chose,
 * as text and as SVG pictures (docs/layouts.md "Seeing the layouts";
 * tl-opt --dump-layouts, tl_kernel_dump_layouts, the Python package's
 * kernel.show_layouts).  Read-only: the maps come from frag_layout.h
 * (tl_frag_owner, tl_frag_holds, tl_frag_coords) and smem_layout.h
 * (tl_smem_layout_view, tl_smem_offset_at), so a dump shows what the
 * lowering will do, not a restatement of it.
 *
 * A dump covers every buffer allocated in each prim_func of a module that
 * layout-inference has run on (and lower-tile-ops has not: it replaces the
 * buffers): fragments (the thread and register of each element, and its
 * replicas), shared tiles (the swizzle, and each element's byte offset and
 * bank) and per-thread local buffers (one line).  A buffer is shown as a
 * grid: rows are the flattened leading dimensions, columns the last one (a
 * 1-D buffer of more than 16 elements is cut into rows of 16, labelled by
 * their first index).  Compact dumps show a window of large buffers (16 x 16
 * elements of a fragment; 8 rows, one swizzle period, by up to 128 bytes of
 * columns of a shared tile's first stage), with the rule in words; full
 * dumps show every element. */
#ifndef TL_LAYOUT_DUMP_H
#define TL_LAYOUT_DUMP_H

#include "IR/tir.h"
#include "Lower/frag_layout.h"
#include "Lower/smem_layout.h"

typedef enum {
  TL_LAYOUT_DUMP_SUMMARY, /* the buffer, its layout and rule: two or three lines a buffer */
  TL_LAYOUT_DUMP_COMPACT, /* plus the window of the map */
  TL_LAYOUT_DUMP_FULL     /* plus every element */
} tl_layout_detail;

/* Appends the layouts of every buffer of every function of m to sb; every
 * line starts with prefix ("" or "# " for a comment in printed IR). */
void tl_layout_dump_text(tl_strbuf *sb, const tl_module *m, tl_layout_detail detail, const char *prefix);

/* Makes one SVG picture per fragment and shared buffer of m and hands each
 * to emit with its file name ("<function>.<buffer>.svg"; emit returns false
 * to stop).  full: every element labelled (else the window of the compact
 * dump; the overview of the whole buffer is drawn either way).  False when
 * emit failed or memory ran out. */
typedef bool (*tl_layout_svg_fn)(void *user, const char *file, const char *svg);
bool tl_layout_dump_svg(const tl_module *m, bool full, tl_layout_svg_fn emit, void *user);

/* ------------------------------------------------ shared by the two dumps */
/* One buffer as a grid (layout_dump.c). */
typedef struct tl_layout_view {
  const tl_primfunc *f;
  const tl_buffer *b;
  int64_t threads; /* the block's threads (the consumers' on the Hopper path) */
  int ndim;
  int64_t shape[8];
  int64_t rows, cols;         /* the grid (per stage for shared tiles) */
  const tl_frag_layout *frag; /* fragments with a layout */
  bool shared;                /* smem is valid */
  tl_smem_layout smem;
  int64_t win_rows, win_cols; /* the window a compact dump shows */
} tl_layout_view;

/* The buffers allocated in f, fragments / shared / local (in order of
 * allocation, each once), into views (at most max); returns how many. */
int tl_layout_views(const tl_primfunc *f, tl_layout_view *views, int max);
/* The element at grid cell (r, c) of a fragment view (idx: ndim entries). */
void tl_layout_view_index(const tl_layout_view *v, int64_t r, int64_t c, int64_t *idx);
/* Replica 0 of cell (r, c) of a fragment view: thread and register; the
 * number of threads that hold it (*nrep; the block's threads for
 * REPLICATED). */
void tl_layout_view_owner(const tl_layout_view *v, int64_t r, int64_t c, int64_t *tid, int64_t *reg, int64_t *nrep);
/* Byte offset (in the buffer) and bank of cell (r, c) of stage s of a shared view. */
void tl_layout_view_byte(const tl_layout_view *v, int64_t s, int64_t r, int64_t c, int64_t *byte, int64_t *bank);
/* "local.fragment float32[128, 128]" into sb. */
void tl_layout_view_type(tl_strbuf *sb, const tl_layout_view *v);
/* The layout in one line and its rule in another (no prefix, no newline at the end of the last). */
void tl_layout_view_describe(tl_strbuf *sb, const tl_layout_view *v, const char *prefix);

#endif
