/* Layout dumps as text (layout_dump.h; docs/layouts.md "Seeing the
 * layouts"), and the buffer views the SVG pictures (layout_svg.c) share.
 *
 * Text form, per function then per buffer (every line after `prefix`):
 *   kernel main: 128 threads
 *   buffer C_local: local.fragment float32[128, 128]
 *     layout: MMA_C (mma.sync m16n8 accumulator) ..., set by T.gemm at gemm.py:18:17
 *     rule: tid = ...; reg = ...
 *     replicas: 1 thread per element
 *     map (i, j) -> thread:register, rows 0..15 of 128, columns 0..15 of 128:
 *       0: T0:r0 T0:r1 T1:r0 ...
 *     thread 0 registers: r0=(0, 0) r1=(0, 1) ...
 * and for a shared tile the map is "byte offset:bank" (b<bank>) of stage 0,
 * e.g. `0: 0:b0 2:b0 4:b1 ...`.  A row's label is its leading indices. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "IR/visit.h"
#include "Lower/layout_dump.h"

/* ------------------------------------------------------------ the views */
typedef struct alloc_walk {
  tl_visitor v;
  const tl_buffer *bufs[256];
  int n;
} alloc_walk;

static void on_stmt(tl_visitor *vis, const tl_stmt *s) {
  alloc_walk *w = (alloc_walk *)vis;
  if (s->kind != TL_STMT_ALLOC || !s->u.alloc.buffer) return;
  const tl_buffer *b = s->u.alloc.buffer;
  for (int i = 0; i < w->n; i++)
    if (w->bufs[i] == b) return;
  if (w->n < (int)(sizeof w->bufs / sizeof *w->bufs)) w->bufs[w->n++] = b;
}

static bool static_shape(const tl_buffer *b, int64_t *shape) {
  if (b->ndim < 1 || b->ndim > 8) return false;
  for (int k = 0; k < b->ndim; k++)
    if (!tl_expr_is_const_int(b->shape[k], &shape[k]) || shape[k] < 1) return false;
  return true;
}

static int64_t min64(int64_t a, int64_t b) { return a < b ? a : b; }

static void fill_view(tl_layout_view *v, const tl_primfunc *f, const tl_buffer *b, int64_t threads) {
  memset(v, 0, sizeof *v);
  v->f = f;
  v->b = b;
  v->threads = threads;
  v->ndim = b->ndim;
  if (!static_shape(b, v->shape)) {
    v->ndim = 0;
    return;
  }
  if (b->scope == TL_SCOPE_SHARED || b->scope == TL_SCOPE_SHARED_DYN) {
    v->shared = tl_smem_layout_view(b, &v->smem);
    v->rows = v->shared ? v->smem.rows : 0;
    v->cols = v->shared ? v->smem.cols : 0;
    /* one swizzle period of rows, up to 128 bytes of columns */
    v->win_rows = min64(v->rows, 8);
    v->win_cols = min64(v->cols, 128 / (v->smem.elem_bytes > 0 ? v->smem.elem_bytes : 1));
    return;
  }
  v->frag = tl_frag_layout_of(b);
  int64_t total = 1;
  for (int k = 0; k < b->ndim; k++) total *= v->shape[k];
  v->cols = v->shape[b->ndim - 1];
  if (b->ndim == 1 && total > 16 && total % 16 == 0) v->cols = 16;
  v->rows = total / v->cols;
  v->win_rows = min64(v->rows, 16);
  v->win_cols = min64(v->cols, 16);
}

int tl_layout_views(const tl_primfunc *f, tl_layout_view *views, int max) {
  alloc_walk w;
  memset(&w, 0, sizeof w);
  w.v.stmt = on_stmt;
  if (!f || !f->body) return 0;
  tl_visit_stmt(&w.v, f->body);
  int64_t threads = 0;
  const tl_stmt *k = tl_ir_find_kernel(f->body);
  if (k && k->u.kernel.threads) (void)tl_expr_is_const_int(k->u.kernel.threads, &threads);
  int n = 0;
  for (int i = 0; i < w.n && n < max; i++) {
    tl_scope s = w.bufs[i]->scope;
    if (s == TL_SCOPE_GLOBAL) continue;
    fill_view(&views[n++], f, w.bufs[i], threads);
  }
  return n;
}

void tl_layout_view_index(const tl_layout_view *v, int64_t r, int64_t c, int64_t *idx) {
  int64_t flat = r * v->cols + c;
  for (int k = v->ndim - 1; k >= 0; k--) {
    idx[k] = flat % v->shape[k];
    flat /= v->shape[k];
  }
}

void tl_layout_view_owner(const tl_layout_view *v, int64_t r, int64_t c, int64_t *tid, int64_t *reg, int64_t *nrep) {
  int64_t idx[8];
  tl_layout_view_index(v, r, c, idx);
  tl_frag_owner(v->frag, idx, tid, reg);
  if (v->frag->kind == TL_FRAG_REPLICATED) {
    *nrep = v->threads;
    return;
  }
  int64_t n = 0, rr;
  for (int64_t t = 0; t < v->threads; t++)
    if (tl_frag_holds(v->frag, idx, t, &rr)) n++;
  *nrep = n;
}

void tl_layout_view_byte(const tl_layout_view *v, int64_t s, int64_t r, int64_t c, int64_t *byte, int64_t *bank) {
  *byte = tl_smem_offset_at(&v->smem, s, r, c) * v->smem.elem_bytes;
  *bank = (*byte / 4) % 32;
}

void tl_layout_view_type(tl_strbuf *sb, const tl_layout_view *v) {
  tl_strbuf_printf(sb, "%s %s[", tl_scope_name(v->b->scope), tl_dtype_name(v->b->dtype));
  for (int k = 0; k < v->ndim; k++) tl_strbuf_printf(sb, "%s%lld", k ? ", " : "", (long long)v->shape[k]);
  if (!v->ndim) tl_strbuf_append(sb, "dynamic");
  tl_strbuf_append(sb, "]");
}

/* ------------------------------------------------------------ descriptions */
static const char *base_name(const char *path) {
  const char *s = path ? strrchr(path, '/') : NULL;
  return s ? s + 1 : path ? path : "<input>";
}

static void describe_frag(tl_strbuf *sb, const tl_frag_layout *L, int64_t T, const char *pre) {
  long long v = (long long)L->vec, nr = (long long)L->nregs;
  switch (L->kind) {
  case TL_FRAG_PLAN:
    tl_strbuf_printf(sb,
                     "layout: PLAN (vectors of %lld consecutive elements round-robin over %lld threads), "
                     "%lld registers per thread",
                     v, (long long)L->threads, nr);
    tl_strbuf_printf(sb,
                     "\n%s  rule: f = row-major flat index; tid = (f / %lld) %% %lld; "
                     "reg = (f / %lld) * %lld + f %% %lld",
                     pre, v, (long long)L->threads, v * (long long)L->threads, v, v);
    break;
  case TL_FRAG_REPLICATED:
    tl_strbuf_printf(sb, "layout: REPLICATED (every one of the %lld threads holds all %lld elements)", (long long)T,
                     (long long)L->total);
    tl_strbuf_printf(sb, "\n%s  rule: reg = f (row-major flat index), in every thread", pre);
    break;
  case TL_FRAG_MMA_C: {
    long long wm = (long long)L->warp_m, wn = (long long)L->warp_n, WM = (long long)L->warp_tile_m,
              WN = (long long)L->warp_tile_n;
    tl_strbuf_printf(sb,
                     "layout: MMA_C (mma.sync m16n8 accumulator%s), warps %lld x %lld along (i, j), "
                     "warp tile %lld x %lld, %lld registers per thread",
                     L->interleaved ? ", wgmma rows interleaved" : "", wm, wn, WM, WN, nr);
    if (L->interleaved)
      tl_strbuf_printf(sb,
                       "\n%s  rule: tid = 32*((i/16)%%%lld + %lld*(j/%lld)) + 4*(i%%8) + (j%%8)/2; "
                       "reg = 4*((i/%lld)*%lld + (j%%%lld)/8) + 2*((i/8)%%2) + j%%2",
                       pre, wm, wm, WN, 16 * wm, WN / 8, WN);
    else
      tl_strbuf_printf(sb,
                       "\n%s  rule: tid = 32*(i/%lld + %lld*(j/%lld)) + 4*(i%%8) + (j%%8)/2; "
                       "reg = 4*(((i%%%lld)/16)*%lld + (j%%%lld)/8) + 2*((i/8)%%2) + j%%2",
                       pre, WM, wm, WN, WM, WN / 8, WN);
    break;
  }
  case TL_FRAG_ROWS: {
    long long G = (long long)L->groups, g = (long long)L->group, cvg = (long long)L->cvg;
    tl_strbuf_printf(sb,
                     "layout: ROWS (%lld rows x %lld columns; %lld groups of %lld threads, row r in "
                     "group r %% %lld, vectors of %lld round-robin over the group), %lld registers per thread",
                     (long long)L->rows, (long long)L->cols, G, g, G, v, nr);
    tl_strbuf_printf(sb,
                     "\n%s  rule: tid = (r %% %lld)*%lld + (c/%lld) %% %lld; "
                     "reg = ((r / %lld)*%lld + (c/%lld) / %lld)*%lld + c %% %lld",
                     pre, G, g, v, g, G, cvg, v, g, v, v);
    break;
  }
  case TL_FRAG_REDUCER: {
    const tl_frag_layout *S = L->src;
    if (S && S->kind == TL_FRAG_MMA_C) {
      tl_strbuf_printf(sb,
                       "layout: REDUCER (row statistics of an MMA_C %lld x %lld accumulator, warps %lld x %lld:"
                       " element i in the 4 lanes of its quad in each of the %lld warp columns), "
                       "%lld registers per thread",
                       (long long)S->shape[0], (long long)S->shape[1], (long long)S->warp_m, (long long)S->warp_n,
                       (long long)S->warp_n, nr);
      tl_strbuf_printf(sb,
                       "\n%s  rule: reg = (i %% %lld)/8; holders 32*(i/%lld + %lld*wn) + 4*(i%%8) + t, "
                       "wn < %lld, t < 4",
                       pre, (long long)S->warp_tile_m, (long long)S->warp_tile_m, (long long)S->warp_m,
                       (long long)S->warp_n);
    } else if (S && S->kind == TL_FRAG_ROWS) {
      tl_strbuf_printf(sb,
                       "layout: REDUCER (row statistics of a ROWS layout of %lld groups of %lld threads:"
                       " element i in every thread of group i %% %lld), %lld registers per thread",
                       (long long)S->groups, (long long)S->group, (long long)S->groups, nr);
      tl_strbuf_printf(sb, "\n%s  rule: reg = i / %lld; holders (i %% %lld)*%lld + [0, %lld)", pre,
                       (long long)S->groups, (long long)S->groups, (long long)S->group, (long long)S->group);
    } else {
      tl_strbuf_printf(sb, "layout: REDUCER, %lld registers per thread", nr);
    }
    break;
  }
  case TL_FRAG_COLS: {
    const tl_frag_layout *S = L->src;
    long long g = (long long)S->group, H = (long long)(S->rows < S->groups ? S->rows : S->groups);
    tl_strbuf_printf(sb,
                     "layout: COLS (column statistics of a ROWS layout of %lld groups of %lld threads: element c "
                     "in thread (c/%lld) %% %lld of each of the %lld groups holding rows), %lld registers per thread",
                     (long long)S->groups, g, v, g, H, nr);
    tl_strbuf_printf(
        sb, "\n%s  rule: reg = ((c/%lld) / %lld)*%lld + c %% %lld; holders h*%lld + (c/%lld) %% %lld, h < %lld", pre, v,
        g, v, v, g, v, g, H);
    break;
  }
  case TL_FRAG_STACKED:
    if (L->split) { /* along a split dim: x[i, l*S + j] beside B[i, j] */
      int d = L->split - 1;
      tl_strbuf_printf(sb,
                       "layout: STACKED (the layout of its shape with dim %d divided by %lld, repeated along dim %d, "
                       "%lld times), %lld registers per thread",
                       d, (long long)L->lead, d, (long long)L->lead, nr);
      tl_strbuf_printf(
          sb,
          "\n%s  rule: the element of index c in dim %d on the threads of the base's element of index c %% %lld "
          "there (base below); reg = (c / %lld)*%lld + its reg",
          pre, d, (long long)L->src->shape[d], (long long)L->src->shape[d], (long long)L->src->nregs);
    } else {
      tl_strbuf_printf(sb,
                       "layout: STACKED (the layout of its last %d dim%s repeated over its first %d, %lld times), "
                       "%lld registers per thread",
                       L->src->ndim, L->src->ndim == 1 ? "" : "s", L->ndim - L->src->ndim, (long long)L->lead, nr);
      tl_strbuf_printf(sb, "\n%s  rule: element (l, n) on the threads of n in the base below; reg = l*%lld + reg(n)",
                       pre, (long long)L->src->nregs);
    }
    tl_strbuf_printf(sb, "\n%s  base: ", pre);
    describe_frag(sb, L->src, T, pre);
    break;
  }
  if (L->set_by)
    tl_strbuf_printf(sb, "\n%s  set by %s at %s:%d:%d", pre, L->set_by, base_name(L->set_at.file), L->set_at.line,
                     L->set_at.col);
}

static void describe_shared(tl_strbuf *sb, const tl_smem_layout *L, const char *pre) {
  long long eb = L->elem_bytes, stage_bytes = (long long)L->stage_elems * eb;
  if (L->swizzle_bytes) {
    long long n = L->swizzle_bytes / 16, E = 16 / eb, per = 8 / n;
    tl_strbuf_printf(sb,
                     "layout: %d-byte swizzle%s (16-byte chunk c of row i moves to c ^ ((i / %lld) %% %lld); "
                     "period 8 rows x %d bytes; panels of %lld columns), %lld stage%s of %lld bytes",
                     L->swizzle_bytes, L->wgmma ? " (TMA/wgmma image, 1024-byte aligned)" : "", per, n,
                     L->swizzle_bytes, n * E, (long long)L->stages, L->stages == 1 ? "" : "s", stage_bytes);
    tl_strbuf_printf(sb,
                     "\n%s  rule: off = (j / %lld)*%lld + i*%lld + (((j / %lld) %% %lld) ^ ((i / %lld) %% %lld))*%lld"
                     " + j %% %lld elements, + stage*%lld; byte = %lld*off; bank = (byte / 4) %% 32",
                     pre, n * E, (long long)L->rows * n * E, n * E, E, n, per, n, E, E, (long long)L->stage_elems, eb);
  } else {
    tl_strbuf_printf(sb, "layout: row-major, no swizzle, row stride %d elements%s, %lld stage%s of %lld bytes",
                     L->row_stride, L->row_stride != L->cols ? " (padded)" : "", (long long)L->stages,
                     L->stages == 1 ? "" : "s", stage_bytes);
    tl_strbuf_printf(sb,
                     "\n%s  rule: off = i*%d + j elements, + stage*%lld; byte = %lld*off; "
                     "bank = (byte / 4) %% 32",
                     pre, L->row_stride, (long long)L->stage_elems, eb);
  }
}

void tl_layout_view_describe(tl_strbuf *sb, const tl_layout_view *v, const char *pre) {
  if (v->shared) describe_shared(sb, &v->smem, pre);
  else if (v->frag) describe_frag(sb, v->frag, v->threads, pre);
  else if (v->b->scope == TL_SCOPE_FRAGMENT) tl_strbuf_append(sb, "layout: none (not laid out)");
  else tl_strbuf_append(sb, "layout: per thread (every thread its own copy)");
}

/* ------------------------------------------------------------ the maps */
static void row_label(tl_strbuf *sb, const tl_layout_view *v, int64_t r) {
  int64_t idx[8];
  tl_layout_view_index(v, r, 0, idx);
  if (v->shared) {
    tl_strbuf_printf(sb, "%lld:", (long long)r);
  } else if (v->ndim == 1) {
    tl_strbuf_printf(sb, "%lld:", (long long)idx[0]);
  } else if (v->ndim == 2) {
    tl_strbuf_printf(sb, "%lld:", (long long)idx[0]);
  } else {
    tl_strbuf_append(sb, "(");
    for (int k = 0; k + 1 < v->ndim; k++) tl_strbuf_printf(sb, "%s%lld", k ? ", " : "", (long long)idx[k]);
    tl_strbuf_append(sb, "):");
  }
}

static void index_names(tl_strbuf *sb, int ndim) {
  static const char *const names = "ijklmnop";
  tl_strbuf_append(sb, "(");
  for (int k = 0; k < ndim; k++) tl_strbuf_printf(sb, "%s%c", k ? ", " : "", names[k]);
  tl_strbuf_append(sb, ")");
}

static void frag_map(tl_strbuf *sb, const tl_layout_view *v, bool full, const char *pre) {
  int64_t R = full ? v->rows : v->win_rows, C = full ? v->cols : v->win_cols;
  /* replicas: over every element */
  int64_t lo = INT64_MAX, hi = 0, tid, reg, nrep;
  for (int64_t r = 0; r < v->rows; r++)
    for (int64_t c = 0; c < v->cols; c++) {
      tl_layout_view_owner(v, r, c, &tid, &reg, &nrep);
      lo = nrep < lo ? nrep : lo;
      hi = nrep > hi ? nrep : hi;
    }
  tl_strbuf_printf(sb, "%s  replicas: ", pre);
  if (lo == hi) tl_strbuf_printf(sb, "%lld thread%s per element", (long long)lo, lo == 1 ? "" : "s");
  else tl_strbuf_printf(sb, "%lld to %lld threads per element", (long long)lo, (long long)hi);
  if (hi > 1 && v->frag->kind != TL_FRAG_REPLICATED) {
    int64_t idx[8], rr;
    tl_layout_view_index(v, 0, 0, idx);
    tl_strbuf_append(sb, " (replica 0 shown; element 0 is in");
    for (int64_t t = 0; t < v->threads; t++)
      if (tl_frag_holds(v->frag, idx, t, &rr)) tl_strbuf_printf(sb, " T%lld:r%lld", (long long)t, (long long)rr);
    tl_strbuf_append(sb, ")");
  }
  tl_strbuf_printf(sb, "\n%s  map ", pre);
  index_names(sb, v->ndim);
  tl_strbuf_printf(sb, " -> thread:register, rows 0..%lld of %lld, columns 0..%lld of %lld%s%s:\n", (long long)R - 1,
                   (long long)v->rows, (long long)C - 1, (long long)v->cols,
                   v->ndim == 1 && v->rows > 1 ? " (rows of 16 elements, labelled by their first i)" : "",
                   R * C < v->rows * v->cols ? " (--dump-layouts-full: all)" : "");
  for (int64_t r = 0; r < R; r++) {
    tl_strbuf_printf(sb, "%s    ", pre);
    row_label(sb, v, r);
    for (int64_t c = 0; c < C; c++) {
      tl_layout_view_owner(v, r, c, &tid, &reg, &nrep);
      if (v->frag->kind == TL_FRAG_REPLICATED) tl_strbuf_printf(sb, " all:r%lld", (long long)reg);
      else tl_strbuf_printf(sb, " T%lld:r%lld", (long long)tid, (long long)reg);
    }
    tl_strbuf_append(sb, "\n");
  }
  if (v->frag->kind == TL_FRAG_REPLICATED) return;
  int64_t nregs = full ? v->frag->nregs : min64(v->frag->nregs, 16), idx[8];
  tl_strbuf_printf(sb, "%s  thread 0 registers (%lld of %lld):", pre, (long long)nregs, (long long)v->frag->nregs);
  for (int64_t r = 0; r < nregs; r++) {
    if (!tl_frag_coords(v->frag, 0, r, idx)) {
      tl_strbuf_printf(sb, " r%lld=-", (long long)r);
      continue;
    }
    tl_strbuf_printf(sb, " r%lld=(", (long long)r);
    for (int k = 0; k < v->ndim; k++) tl_strbuf_printf(sb, "%s%lld", k ? ", " : "", (long long)idx[k]);
    tl_strbuf_append(sb, ")");
  }
  tl_strbuf_append(sb, "\n");
}

static void shared_map(tl_strbuf *sb, const tl_layout_view *v, bool full, const char *pre) {
  int64_t S = full ? v->smem.stages : 1, R = full ? v->rows : v->win_rows, C = full ? v->cols : v->win_cols;
  for (int64_t s = 0; s < S; s++) {
    tl_strbuf_printf(sb,
                     "%s  map (i, j) -> byte offset:bank, stage %lld of %d, rows 0..%lld of %lld, "
                     "columns 0..%lld of %lld%s:\n",
                     pre, (long long)s, v->smem.stages, (long long)R - 1, (long long)v->rows, (long long)C - 1,
                     (long long)v->cols,
                     S * R * C < v->smem.stages * v->rows * v->cols ? " (--dump-layouts-full: all)" : "");
    for (int64_t r = 0; r < R; r++) {
      tl_strbuf_printf(sb, "%s    ", pre);
      row_label(sb, v, r);
      for (int64_t c = 0; c < C; c++) {
        int64_t byte, bank;
        tl_layout_view_byte(v, s, r, c, &byte, &bank);
        tl_strbuf_printf(sb, " %lld:b%lld", (long long)byte, (long long)bank);
      }
      tl_strbuf_append(sb, "\n");
    }
  }
}

void tl_layout_dump_text(tl_strbuf *sb, const tl_module *m, tl_layout_detail detail, const char *pre) {
  if (!m) return;
  enum { MAXV = 256 };
  tl_layout_view *views = calloc(MAXV, sizeof *views);
  if (!views) {
    sb->oom = true;
    return;
  }
  for (int fi = 0; fi < m->nfuncs; fi++) {
    const tl_primfunc *f = m->funcs[fi];
    if (!f) continue;
    int n = tl_layout_views(f, views, MAXV);
    tl_strbuf_printf(sb, "%skernel %s: %lld threads, %d buffer%s\n", pre, f->name ? f->name : "main",
                     n ? (long long)views[0].threads : 0LL, n, n == 1 ? "" : "s");
    for (int i = 0; i < n; i++) {
      const tl_layout_view *v = &views[i];
      tl_strbuf_printf(sb, "%sbuffer %s: ", pre, v->b->name);
      tl_layout_view_type(sb, v);
      tl_strbuf_printf(sb, "\n%s  ", pre);
      tl_layout_view_describe(sb, v, pre);
      tl_strbuf_append(sb, "\n");
      if (detail == TL_LAYOUT_DUMP_SUMMARY || !v->ndim) continue;
      if (v->frag && v->threads > 0) frag_map(sb, v, detail == TL_LAYOUT_DUMP_FULL, pre);
      else if (v->shared) shared_map(sb, v, detail == TL_LAYOUT_DUMP_FULL, pre);
    }
  }
  free(views);
}
