/* Diagnostics engine.
 *
 * Role: renders errors, warnings and notes in the format of docs/tools.md "The contract" into
 * one text buffer, counts them, and remembers the first error (location and
 * message) for tl_context_first_error_location.
 * Format:
 *   FILE:LINE:COL: error: message
 *   <source line, bytes exactly as in the file (tabs kept)>
 *   <the line's bytes before COL, each a space except tabs kept as tabs>^
 * "<command line>" locations print "<command line>: error: message"; a
 * location without a file prints "error: message".  A column past the end
 * of the line puts the caret just after the last character.  Notes render
 * like errors with "note:".  After max_errors errors, further diagnostics
 * (and the notes of suppressed errors) are counted but not rendered;
 * max_errors <= 0 means no limit.
 * Algorithm: the source line is found by a linear scan of the registered
 * text (only rendered diagnostics pay for it, at most max_errors of them). */
#include "Support/support.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define TL_DIAG_DEFAULT_MAX 20

void tl_diag_init(tl_diag *d) {
  memset(d, 0, sizeof *d);
  d->max_errors = TL_DIAG_DEFAULT_MAX;
}

void tl_diag_clear(tl_diag *d) {
  tl_strbuf_free(&d->out);
  free(d->first_message);
  free((char *)d->first_error.file);
  d->first_message = NULL;
  d->first_error = TL_LOC_NONE;
  d->errors = d->warnings = d->remarks = 0;
}

void tl_diag_free(tl_diag *d) {
  tl_diag_clear(d);
  tl_vec_free(&d->sources);
}

int tl_line_directive(const char *s, size_t n, long *line, const char **path, size_t *path_len) {
  size_t t = sizeof TL_LINE_DIRECTIVE_TAG - 1, p = t;
  if (n < t || memcmp(s, TL_LINE_DIRECTIVE_TAG, t) != 0) return 0;
  if (n > t && s[n - 1] == '\r') n--;
  long v = 0;
  while (p < n && s[p] >= '0' && s[p] <= '9' && v < INT32_MAX / 10) v = v * 10 + (s[p++] - '0');
  if (v < 1 || p >= n || s[p] != ' ' || p + 1 >= n) return -1;
  *line = v;
  *path = s + p + 1;
  *path_len = n - p - 1;
  return 1;
}

/* Registers text[0, len) as lines first_line.. of name; a line directive in
 * it ends that part and starts one of the directive's file. */
bool tl_diag_add_source(tl_diag *d, const char *name, const char *text, size_t len) {
  if (!name || (!text && len)) return false;
  tl_diag_source cur = {name, strlen(name), text, len, 1};
  for (size_t pos = 0; pos < len;) {
    const char *nl = memchr(text + pos, '\n', len - pos);
    size_t end = nl ? (size_t)(nl - text) : len, next = nl ? end + 1 : len;
    long line;
    const char *path;
    size_t plen;
    if (tl_line_directive(text + pos, end - pos, &line, &path, &plen) == 1) {
      cur.len = (size_t)(text + pos - cur.text);
      if (!tl_vec_push(&d->sources, cur)) return false;
      cur = (tl_diag_source){path, plen, text + next, len - next, (int)line};
    }
    pos = next;
  }
  return tl_vec_push(&d->sources, cur);
}

bool tl_diag_has_source(const tl_diag *d, const char *name) {
  for (size_t i = 0; name && i < d->sources.len; i++) {
    const tl_diag_source *s = &d->sources.data[i];
    if (s->first_line == 1 && s->name_len == strlen(name) && memcmp(s->name, name, s->name_len) == 0) return true;
  }
  return false;
}

/* The registered text holding line `line` of file name (the last registered
 * wins). */
static const tl_diag_source *find_source(const tl_diag *d, const char *name, int line) {
  size_t n = strlen(name);
  for (size_t i = d->sources.len; i-- > 0;) {
    const tl_diag_source *s = &d->sources.data[i];
    if (s->name_len == n && memcmp(s->name, name, n) == 0 && line >= s->first_line) return s;
  }
  return NULL;
}

/* Finds line `line` (1-based) of src: start and length without "\n"/"\r\n".
 * False when the text has fewer lines. */
static bool find_line(const tl_diag_source *src, int line, const char **start, size_t *len) {
  const char *p = src->text, *end = src->text + src->len;
  if (line < src->first_line || !p) return false;
  for (int l = src->first_line; l < line; l++) {
    const char *nl = memchr(p, '\n', (size_t)(end - p));
    if (!nl) return false;
    p = nl + 1;
  }
  if (p == end && line > src->first_line && end[-1] == '\n') return false; /* past the last line */
  const char *nl = memchr(p, '\n', (size_t)(end - p));
  size_t n = nl ? (size_t)(nl - p) : (size_t)(end - p);
  if (n && p[n - 1] == '\r') n--;
  *start = p;
  *len = n;
  return true;
}

static const char *level_name(tl_diag_level level) {
  switch (level) {
  case TL_DIAG_ERROR: return "error";
  case TL_DIAG_WARNING: return "warning";
  case TL_DIAG_NOTE: return "note";
  case TL_DIAG_REMARK: return "remark";
  }
  return "error";
}

static void render(tl_diag *d, tl_diag_level level, tl_loc loc, const char *msg) {
  tl_strbuf *o = &d->out;
  const char *lv = level_name(level);
  if (!loc.file) {
    tl_strbuf_printf(o, "%s: %s\n", lv, msg);
    return;
  }
  if (strcmp(loc.file, "<command line>") == 0 || loc.line <= 0) {
    tl_strbuf_printf(o, "%s: %s: %s\n", loc.file, lv, msg);
    return;
  }
  if (loc.col > 0) tl_strbuf_printf(o, "%s:%d:%d: %s: %s\n", loc.file, loc.line, loc.col, lv, msg);
  else tl_strbuf_printf(o, "%s:%d: %s: %s\n", loc.file, loc.line, lv, msg);
  const tl_diag_source *src = find_source(d, loc.file, loc.line);
  const char *line;
  size_t len;
  if (!src || !find_line(src, loc.line, &line, &len)) return;
  /* The source line; NUL bytes (binary input) become spaces so that the
   * rendered text stays one C string. */
  for (size_t i = 0; i < len; i++) {
    char c = line[i] ? line[i] : ' ';
    tl_strbuf_appendn(o, &c, 1);
  }
  tl_strbuf_appendn(o, "\n", 1);
  if (loc.col <= 0) return;
  size_t upto = (size_t)loc.col - 1;
  if (upto > len) upto = len;
  for (size_t i = 0; i < upto; i++) tl_strbuf_appendn(o, line[i] == '\t' ? "\t" : " ", 1);
  tl_strbuf_appendn(o, "^\n", 2);
}

void tl_diag_vreport(tl_diag *d, tl_diag_level level, tl_loc loc, const char *fmt, va_list ap) {
  bool unlimited = d->max_errors <= 0;
  if (level == TL_DIAG_ERROR) {
    if (d->errors < INT32_MAX) d->errors++;
  } else if (level == TL_DIAG_WARNING) {
    if (d->warnings < INT32_MAX) d->warnings++;
  } else if (level == TL_DIAG_REMARK) {
    if (d->remarks < INT32_MAX) d->remarks++;
  }
  bool first = level == TL_DIAG_ERROR && d->errors == 1;
  /* Errors beyond the limit, and everything after them, are only counted. */
  bool suppressed = !unlimited && d->errors > d->max_errors;
  if (suppressed && !first) return;

  tl_strbuf msg = {0};
  tl_strbuf_vprintf(&msg, fmt, ap);
  const char *text = msg.data ? msg.data : "";
  if (first) {
    free(d->first_message);
    free((char *)d->first_error.file);
    d->first_message = strdup(text);
    d->first_error = loc;
    d->first_error.file = loc.file ? strdup(loc.file) : NULL;
    if (loc.file && !d->first_error.file) d->first_error = TL_LOC_NONE;
  }
  if (!suppressed) render(d, level, loc, text);
  tl_strbuf_free(&msg);
}

void tl_diag_report(tl_diag *d, tl_diag_level level, tl_loc loc, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  tl_diag_vreport(d, level, loc, fmt, ap);
  va_end(ap);
}
