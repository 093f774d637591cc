/* Growable vectors and string buffers.
 *
 * Role: the malloc-backed growable arrays behind TL_VEC(T) and tl_strbuf,
 * used while building IR (then copied into the arena) and for text output.
 * Algorithm: geometric growth (doubling, minimum 8 elements / 64 bytes) with
 * overflow-checked size arithmetic; failure leaves the old buffer intact and
 * reports false (vectors) or sets the `oom` flag (string buffers). */
#include "Support/support.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

bool tl_vec_grow_(void **data, size_t *cap, size_t need, size_t elem_size) {
  if (need <= *cap) return true;
  if (elem_size == 0) return false;
  size_t max_elems = SIZE_MAX / elem_size;
  if (need > max_elems) return false;
  size_t ncap = *cap ? *cap : 8;
  while (ncap < need) {
    if (ncap > max_elems / 2) {
      ncap = need;
      break;
    }
    ncap *= 2;
  }
  if (ncap > max_elems) ncap = max_elems;
  void *p = realloc(*data, ncap * elem_size);
  if (!p) return false;
  *data = p;
  *cap = ncap;
  return true;
}

void *tl_vec_to_arena_(tl_arena *a, const void *data, size_t len, size_t elem_size) {
  if (len == 0 || elem_size == 0) return NULL;
  if (len > SIZE_MAX / elem_size) {
    a->oom = true;
    return NULL;
  }
  void *p = tl_arena_alloc(a, len * elem_size);
  if (p) memcpy(p, data, len * elem_size);
  return p;
}

/* Makes room for n more bytes plus the NUL terminator. */
static bool strbuf_reserve(tl_strbuf *s, size_t n) {
  if (s->oom) return false;
  if (n > SIZE_MAX - s->len - 1) {
    s->oom = true;
    return false;
  }
  size_t need = s->len + n + 1;
  if (need <= s->cap) return true;
  size_t ncap = s->cap ? s->cap : 64;
  while (ncap < need) {
    if (ncap > SIZE_MAX / 2) {
      ncap = need;
      break;
    }
    ncap *= 2;
  }
  char *p = realloc(s->data, ncap);
  if (!p) {
    s->oom = true;
    return false;
  }
  s->data = p;
  s->cap = ncap;
  return true;
}

void tl_strbuf_appendn(tl_strbuf *s, const char *str, size_t n) {
  if (!strbuf_reserve(s, n)) return;
  if (n) memcpy(s->data + s->len, str, n);
  s->len += n;
  s->data[s->len] = '\0';
}

void tl_strbuf_append(tl_strbuf *s, const char *str) { tl_strbuf_appendn(s, str, strlen(str)); }

void tl_strbuf_vprintf(tl_strbuf *s, const char *fmt, va_list ap) {
  va_list ap2;
  va_copy(ap2, ap);
  int n = vsnprintf(NULL, 0, fmt, ap2);
  va_end(ap2);
  if (n < 0) {
    s->oom = true;
    return;
  }
  if (!strbuf_reserve(s, (size_t)n)) return;
  vsnprintf(s->data + s->len, (size_t)n + 1, fmt, ap);
  s->len += (size_t)n;
}

void tl_strbuf_printf(tl_strbuf *s, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  tl_strbuf_vprintf(s, fmt, ap);
  va_end(ap);
}

void tl_strbuf_append_quoted(tl_strbuf *s, const char *str) {
  tl_strbuf_append(s, "\"");
  for (const unsigned char *p = (const unsigned char *)(str ? str : ""); *p; p++) {
    switch (*p) {
    case '"': tl_strbuf_append(s, "\\\""); break;
    case '\\': tl_strbuf_append(s, "\\\\"); break;
    case '\n': tl_strbuf_append(s, "\\n"); break;
    case '\t': tl_strbuf_append(s, "\\t"); break;
    case '\r': tl_strbuf_append(s, "\\r"); break;
    default:
      if (*p < 0x20 || *p == 0x7f) tl_strbuf_printf(s, "\\x%02x", *p);
      else tl_strbuf_appendn(s, (const char *)p, 1);
    }
  }
  tl_strbuf_append(s, "\"");
}

char *tl_strbuf_take(tl_strbuf *s) {
  if (s->oom) {
    tl_strbuf_free(s);
    return NULL;
  }
  char *p = s->data;
  if (!p) p = calloc(1, 1);
  s->data = NULL;
  s->len = s->cap = 0;
  s->oom = false;
  return p;
}

void tl_strbuf_free(tl_strbuf *s) {
  free(s->data);
  s->data = NULL;
  s->len = s->cap = 0;
  s->oom = false;
}
