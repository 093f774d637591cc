/* String interning.
 *
 * Role: one copy of each identifier/keyword text per table, so names are
 * compared by pointer throughout the IR.
 * Algorithm: open addressing with linear probing over FNV-1a hashes, table
 * at most 3/4 full, doubling on growth.  Each string is stored in the
 * arena behind a length prefix (so texts with embedded NUL bytes intern
 * correctly); the returned pointer is the NUL-terminated text itself. */
#include "Support/support.h"

#include <stdlib.h>
#include <string.h>

#define TL_INTERN_PREFIX 16u /* keeps the text 16-byte aligned */

static size_t stored_len(const char *s) {
  size_t n;
  memcpy(&n, s - TL_INTERN_PREFIX, sizeof n);
  return n;
}

void tl_intern_init(tl_intern *t, tl_arena *arena) {
  t->arena = arena;
  t->slots = NULL;
  t->cap = t->len = 0;
}

void tl_intern_free(tl_intern *t) {
  free(t->slots);
  t->slots = NULL;
  t->cap = t->len = 0;
}

static size_t probe(char **slots, size_t cap, const char *s, size_t n, uint64_t h) {
  size_t mask = cap - 1;
  size_t i = (size_t)h & mask;
  while (slots[i]) {
    if (stored_len(slots[i]) == n && memcmp(slots[i], s, n) == 0) return i;
    i = (i + 1) & mask;
  }
  return i;
}

static bool intern_grow(tl_intern *t) {
  size_t ncap = t->cap ? t->cap * 2 : 64;
  if (ncap < t->cap || ncap > SIZE_MAX / sizeof(char *)) return false;
  char **ns = calloc(ncap, sizeof *ns);
  if (!ns) return false;
  for (size_t i = 0; i < t->cap; i++) {
    char *s = t->slots[i];
    if (!s) continue;
    size_t n = stored_len(s);
    ns[probe(ns, ncap, s, n, tl_hash_bytes(s, n))] = s;
  }
  free(t->slots);
  t->slots = ns;
  t->cap = ncap;
  return true;
}

const char *tl_intern_n(tl_intern *t, const char *s, size_t n) {
  if (!s && n) return NULL;
  if (t->cap == 0 || t->len + 1 > t->cap / 4 * 3) {
    if (!intern_grow(t)) {
      t->arena->oom = true;
      return NULL;
    }
  }
  uint64_t h = tl_hash_bytes(s, n);
  size_t i = probe(t->slots, t->cap, s ? s : "", n, h);
  if (t->slots[i]) return t->slots[i];
  if (n > SIZE_MAX - TL_INTERN_PREFIX - 1) {
    t->arena->oom = true;
    return NULL;
  }
  char *mem = tl_arena_alloc(t->arena, TL_INTERN_PREFIX + n + 1);
  if (!mem) return NULL;
  memcpy(mem, &n, sizeof n);
  char *text = mem + TL_INTERN_PREFIX;
  if (n) memcpy(text, s, n);
  text[n] = '\0';
  t->slots[i] = text;
  t->len++;
  return text;
}

const char *tl_intern_str(tl_intern *t, const char *s) { return tl_intern_n(t, s, s ? strlen(s) : 0); }
