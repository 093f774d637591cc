/* Hash map from pointer-sized keys to void* values.
 *
 * Role: symbol tables and IR node maps (keys are interned strings or node
 * pointers, compared by identity).
 * Algorithm: open addressing with linear probing in a power-of-two table,
 * kept at most 3/4 full; the key pointer is hashed with a 64-bit finalizer
 * (splitmix64) so aligned pointers spread over the table.  Removal uses
 * backward-shift deletion, so there are no tombstones and lookups stay short.
 * tl_hash_bytes is 64-bit FNV-1a. */
#include "Support/support.h"

#include <stdlib.h>
#include <string.h>

static uint64_t hash_ptr(const void *p) {
  uint64_t x = (uint64_t)(uintptr_t)p;
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

uint64_t tl_hash_bytes(const void *data, size_t n) {
  const unsigned char *p = data;
  uint64_t h = 0xcbf29ce484222325ull;
  for (size_t i = 0; i < n; i++) {
    h ^= p[i];
    h *= 0x100000001b3ull;
  }
  return h;
}

void tl_map_init(tl_map *m) {
  m->slots = NULL;
  m->cap = m->len = 0;
}

void tl_map_free(tl_map *m) {
  free(m->slots);
  tl_map_init(m);
}

/* Index of key's slot, or of the empty slot where it would go. */
static size_t find_slot(const tl_map *m, const void *key) {
  size_t mask = m->cap - 1;
  size_t i = (size_t)hash_ptr(key) & mask;
  while (m->slots[i].key && m->slots[i].key != key) i = (i + 1) & mask;
  return i;
}

static bool map_resize(tl_map *m, size_t ncap) {
  if (ncap > SIZE_MAX / sizeof(tl_map_entry)) return false;
  tl_map_entry *old = m->slots;
  size_t ocap = m->cap;
  tl_map_entry *ns = calloc(ncap, sizeof *ns);
  if (!ns) return false;
  m->slots = ns;
  m->cap = ncap;
  for (size_t i = 0; i < ocap; i++) {
    if (old[i].key) m->slots[find_slot(m, old[i].key)] = old[i];
  }
  free(old);
  return true;
}

bool tl_map_put(tl_map *m, const void *key, void *value) {
  if (!key) return false;
  if (m->cap == 0 || (m->len + 1) > m->cap / 4 * 3) {
    if (m->cap > SIZE_MAX / 2) return false;
    if (!map_resize(m, m->cap ? m->cap * 2 : 16)) return false;
  }
  size_t i = find_slot(m, key);
  if (!m->slots[i].key) {
    m->slots[i].key = key;
    m->len++;
  }
  m->slots[i].value = value;
  return true;
}

void *tl_map_get(const tl_map *m, const void *key, bool *found) {
  if (found) *found = false;
  if (!key || m->cap == 0) return NULL;
  size_t i = find_slot(m, key);
  if (!m->slots[i].key) return NULL;
  if (found) *found = true;
  return m->slots[i].value;
}

bool tl_map_remove(tl_map *m, const void *key) {
  if (!key || m->cap == 0) return false;
  size_t mask = m->cap - 1;
  size_t i = find_slot(m, key);
  if (!m->slots[i].key) return false;
  /* Backward-shift: move later entries of the probe run into the hole when
   * their home slot does not lie cyclically in (hole, j]. */
  size_t j = i;
  for (;;) {
    j = (j + 1) & mask;
    if (!m->slots[j].key) break;
    size_t home = (size_t)hash_ptr(m->slots[j].key) & mask;
    bool stays = (i <= j) ? (i < home && home <= j) : (i < home || home <= j);
    if (!stays) {
      m->slots[i] = m->slots[j];
      i = j;
    }
  }
  m->slots[i].key = NULL;
  m->slots[i].value = NULL;
  m->len--;
  return true;
}
