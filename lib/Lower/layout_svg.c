/* Layout dumps as SVG pictures (layout_dump.h; docs/layouts.md "Seeing the
 * layouts"): one self-contained SVG 1.1 file per fragment or shared
 * buffer, written as text here (no library).
 *
 * Picture: a header (the buffer, its layout and rule, as the text dump
 * says them), then the grid of the compact dump's window (every element
 * with full): one <rect class="cell"> per element with its label
 * (fragments: "T<thread>:r<register>" of replica 0, coloured by thread;
 * shared tiles: "b<bank>", coloured by bank, stage 0), row and column
 * indices on the left and top; then an overview of the whole buffer, one
 * <rect class="run"> per horizontal run of equal colour (fragments: by warp,
 * so the warp tiles show; shared tiles: per 16-byte chunk, coloured by the
 * bank of its first byte, so the XOR pattern shows; the first 16 rows,
 * two periods of the pattern).  Colours: thread t has the hue of lane t % 32
 * scrambled (13 * lane mod 32 steps of 11.25 degrees, so neighbouring lanes
 * differ) and a lightness by warp; warp w in the overview the hue 97 w;
 * bank k the hue 11.25 k; replicated fragments grey. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "Lower/layout_dump.h"

enum { HEAD_LINE = 14, MARGIN = 8, LABEL_W = 44, LABEL_H = 14 };

static void xml_textn(tl_strbuf *sb, const char *s, size_t n) {
  for (; n && *s; s++, n--) {
    switch (*s) {
    case '<': tl_strbuf_append(sb, "&lt;"); break;
    case '>': tl_strbuf_append(sb, "&gt;"); break;
    case '&': tl_strbuf_append(sb, "&amp;"); break;
    case '"': tl_strbuf_append(sb, "&quot;"); break;
    default: tl_strbuf_appendn(sb, s, 1);
    }
  }
}

static void xml_text(tl_strbuf *sb, const char *s) { xml_textn(sb, s, strlen(s)); }

/* "#rrggbb" of hue h (degrees), saturation s and lightness l (0..1). */
static void hsl_hex(char out[8], double h, double s, double l) {
  double c = (1 - (2 * l - 1 < 0 ? 1 - 2 * l : 2 * l - 1)) * s;
  double hp = h / 60.0, hm = hp - 2 * (int)(hp / 2);
  double x = c * (1 - (hm - 1 < 0 ? 1 - hm : hm - 1));
  double r = 0, g = 0, b = 0;
  switch ((int)hp % 6) {
  case 0: r = c, g = x; break;
  case 1: r = x, g = c; break;
  case 2: g = c, b = x; break;
  case 3: g = x, b = c; break;
  case 4: r = x, b = c; break;
  default: r = c, b = x; break;
  }
  double m = l - c / 2;
  snprintf(out, 8, "#%02x%02x%02x", (int)((r + m) * 255 + 0.5), (int)((g + m) * 255 + 0.5), (int)((b + m) * 255 + 0.5));
}

static void thread_colour(char out[8], int64_t tid, bool replicated) {
  static const double light[4] = {0.80, 0.68, 0.88, 0.60};
  if (replicated) {
    snprintf(out, 8, "#dddddd");
    return;
  }
  hsl_hex(out, (double)((tid % 32) * 13 % 32) * 11.25, 0.70, light[(tid / 32) % 4]);
}

static void warp_colour(char out[8], int64_t warp) {
  if (warp < 0) snprintf(out, 8, "#dddddd");
  else hsl_hex(out, (double)(warp * 97 % 360), 0.60, 0.72);
}

static void bank_colour(char out[8], int64_t bank) { hsl_hex(out, (double)bank * 11.25, 0.65, 0.75); }

/* Cell (r, c) of the detail grid: label and colour. */
static void cell_of(const tl_layout_view *v, int64_t r, int64_t c, char *label, size_t n, char colour[8]) {
  if (v->shared) {
    int64_t byte, bank;
    tl_layout_view_byte(v, 0, r, c, &byte, &bank);
    snprintf(label, n, "b%lld", (long long)bank);
    bank_colour(colour, bank);
    return;
  }
  int64_t tid, reg, nrep;
  tl_layout_view_owner(v, r, c, &tid, &reg, &nrep);
  bool all = v->frag->kind == TL_FRAG_REPLICATED;
  if (all) snprintf(label, n, "all:r%lld", (long long)reg);
  else snprintf(label, n, "T%lld:r%lld", (long long)tid, (long long)reg);
  thread_colour(colour, tid, all);
}

/* The colour key of overview cell (r, c): the warp, or the 16-byte chunk's bank. */
static int64_t run_key(const tl_layout_view *v, int64_t r, int64_t c, int64_t *chunk) {
  if (v->shared) {
    int64_t byte, bank;
    tl_layout_view_byte(v, 0, r, c, &byte, &bank);
    *chunk = byte / 16;
    return ((byte / 16) * 16 / 4) % 32;
  }
  *chunk = 0;
  if (v->frag->kind == TL_FRAG_REPLICATED) return -1;
  int64_t idx[8], tid, reg;
  tl_layout_view_index(v, r, c, idx);
  tl_frag_owner(v->frag, idx, &tid, &reg);
  return tid / 32;
}

static void header(tl_strbuf *sb, const tl_layout_view *v, int *y) {
  tl_strbuf line = {0};
  tl_strbuf_printf(&line, "%s.%s: ", v->f->name ? v->f->name : "main", v->b->name);
  tl_layout_view_type(&line, v);
  tl_strbuf_append(&line, "\n");
  tl_layout_view_describe(&line, v, "");
  if (v->frag && !v->shared)
    tl_strbuf_printf(&line,
                     "\ncells: element -> T<thread>:r<register> of replica 0, coloured by thread; "
                     "overview: coloured by warp");
  else
    tl_strbuf_printf(&line,
                     "\ncells: element -> b<bank> (32 banks of 4 bytes), stage 0; "
                     "overview: 16-byte chunks coloured by bank");
  char *text = line.data ? line.data : (char *)"";
  for (char *s = text; s && *s;) {
    char *nl = strchr(s, '\n');
    size_t n = nl ? (size_t)(nl - s) : strlen(s);
    while (n && *s == ' ') s++, n--;
    *y += HEAD_LINE;
    tl_strbuf_printf(sb, "<text class=\"head\" x=\"%d\" y=\"%d\">", MARGIN, *y);
    xml_textn(sb, s, n);
    tl_strbuf_append(sb, "</text>\n");
    s = nl ? nl + 1 : NULL;
  }
  tl_strbuf_free(&line);
}

static void detail(tl_strbuf *sb, const tl_layout_view *v, int64_t R, int64_t C, int cw, int ch, int *y) {
  int x0 = MARGIN + LABEL_W, y0 = *y + LABEL_H + 4;
  tl_strbuf_printf(sb, "<g id=\"cells\">\n");
  for (int64_t c = 0; c < C; c++)
    tl_strbuf_printf(sb, "<text class=\"idx\" x=\"%lld\" y=\"%d\">%lld</text>\n", (long long)(x0 + c * cw + cw / 2),
                     y0 - 4, (long long)c);
  for (int64_t r = 0; r < R; r++) {
    tl_strbuf_printf(sb, "<text class=\"row\" x=\"%d\" y=\"%lld\">%lld</text>\n", x0 - 4,
                     (long long)(y0 + r * ch + ch - 4), (long long)r);
    for (int64_t c = 0; c < C; c++) {
      char label[48], colour[8];
      cell_of(v, r, c, label, sizeof label, colour);
      long long x = x0 + c * cw, yy = y0 + r * ch;
      tl_strbuf_printf(sb,
                       "<rect class=\"cell\" x=\"%lld\" y=\"%lld\" width=\"%d\" height=\"%d\" fill=\"%s\"/>"
                       "<text x=\"%lld\" y=\"%lld\">%s</text>\n",
                       x, yy, cw, ch, colour, x + cw / 2, yy + ch - 4, label);
    }
  }
  tl_strbuf_append(sb, "</g>\n");
  *y = y0 + (int)(R * ch);
}

static void overview(tl_strbuf *sb, const tl_layout_view *v, int *y, int *w) {
  int px = (int)(512 / v->cols);
  px = px < 1 ? 1 : px > 8 ? 8 : px;
  int x0 = MARGIN + LABEL_W, y0 = *y + 2 * HEAD_LINE;
  /* a shared tile's pattern repeats every 8 rows: its first 16 rows show it */
  int64_t rows = v->shared && v->rows > 16 ? 16 : v->rows;
  tl_strbuf_printf(sb,
                   "<text class=\"head\" x=\"%d\" y=\"%d\">overview: rows 0..%lld of %lld, all %lld columns%s</text>\n"
                   "<g id=\"overview\">\n",
                   MARGIN, y0 - 6, (long long)rows - 1, (long long)v->rows, (long long)v->cols,
                   v->shared ? " (stage 0)" : "");
  for (int64_t r = 0; r < rows; r++) {
    int64_t start = 0, chunk0, key0 = run_key(v, r, 0, &chunk0);
    for (int64_t c = 1; c <= v->cols; c++) {
      int64_t chunk = chunk0, key = c < v->cols ? run_key(v, r, c, &chunk) : INT64_MIN;
      if (key == key0 && chunk == chunk0) continue;
      char colour[8];
      if (v->shared) bank_colour(colour, key0);
      else warp_colour(colour, key0);
      tl_strbuf_printf(sb, "<rect class=\"run\" x=\"%lld\" y=\"%lld\" width=\"%lld\" height=\"%d\" fill=\"%s\"/>\n",
                       (long long)(x0 + start * px), (long long)(y0 + r * px), (long long)((c - start) * px), px,
                       colour);
      start = c, key0 = key, chunk0 = chunk;
    }
  }
  tl_strbuf_append(sb, "</g>\n");
  *y = y0 + (int)(rows * px);
  int ow = x0 + (int)(v->cols * px) + MARGIN;
  if (ow > *w) *w = ow;
}

/* The SVG of view v into sb. */
static void picture(tl_strbuf *sb, const tl_layout_view *v, bool full) {
  int64_t R = full ? v->rows : v->win_rows, C = full ? v->cols : v->win_cols;
  int cw = v->shared ? 26 : 44, ch = 16;
  tl_strbuf body = {0};
  int y = 0, w = MARGIN + LABEL_W + (int)(C * cw) + MARGIN;
  header(&body, v, &y);
  detail(&body, v, R, C, cw, ch, &y);
  overview(&body, v, &y, &w);
  if (w < 900) w = 900;
  y += MARGIN;
  tl_strbuf_printf(sb,
                   "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
                   "<svg xmlns=\"http://www.w3.org/2000/svg\" version=\"1.1\" width=\"%d\" height=\"%d\" "
                   "viewBox=\"0 0 %d %d\">\n<title>",
                   w, y, w, y);
  xml_text(sb, v->f->name ? v->f->name : "main");
  tl_strbuf_append(sb, ".");
  xml_text(sb, v->b->name);
  tl_strbuf_append(sb,
                   "</title>\n<style>text{font-family:monospace;font-size:8px;text-anchor:middle}"
                   " .head{font-size:11px;text-anchor:start} .idx{fill:#555} .row{fill:#555;text-anchor:end}"
                   " rect.cell{stroke:#fff;stroke-width:0.5}</style>\n"
                   "<rect width=\"100%\" height=\"100%\" fill=\"#ffffff\"/>\n");
  tl_strbuf_appendn(sb, body.data ? body.data : "", body.len);
  if (body.oom) sb->oom = true;
  tl_strbuf_free(&body);
  tl_strbuf_append(sb, "</svg>\n");
}

bool tl_layout_dump_svg(const tl_module *m, bool full, tl_layout_svg_fn emit, void *user) {
  if (!m) return true;
  enum { MAXV = 256 };
  tl_layout_view *views = calloc(MAXV, sizeof *views);
  if (!views) return false;
  bool ok = true;
  for (int fi = 0; ok && fi < m->nfuncs; fi++) {
    const tl_primfunc *f = m->funcs[fi];
    int n = f ? tl_layout_views(f, views, MAXV) : 0;
    for (int i = 0; ok && i < n; i++) {
      const tl_layout_view *v = &views[i];
      if (!v->ndim || !(v->shared || (v->frag && v->threads > 0)) || v->rows < 1 || v->cols < 1) continue;
      tl_strbuf sb = {0}, name = {0};
      picture(&sb, v, full);
      tl_strbuf_printf(&name, "%s.%s.svg", f->name ? f->name : "main", v->b->name);
      ok = !sb.oom && !name.oom && emit(user, name.data, sb.data);
      tl_strbuf_free(&sb);
      tl_strbuf_free(&name);
    }
  }
  free(views);
  return ok;
}
