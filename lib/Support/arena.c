/* Arena (bump) allocator.
 *
 * Role: owns the memory of IR nodes, interned strings and other objects
 * that live and die together (a module, a pass's scratch state).
 * Algorithm: a singly linked list of malloc'd chunks; each allocation is
 * rounded up to 16 bytes and carved from the head chunk, or from a fresh
 * chunk (at least 64 KiB, or sized for one large request).  Chunk payloads
 * start on a 16-byte boundary, so every returned pointer is 16-byte aligned.
 * Memory is zeroed (chunks come from calloc).  Freeing releases all chunks. */
#include "Support/support.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define TL_ARENA_ALIGN 16u
#define TL_ARENA_CHUNK (64u * 1024u)

struct tl_arena_chunk {
  tl_arena_chunk *next;
  size_t cap;  /* payload bytes */
  size_t used; /* payload bytes handed out */
};

/* Payload offset: the header rounded up to the alignment. */
#define TL_ARENA_HDR ((sizeof(tl_arena_chunk) + TL_ARENA_ALIGN - 1) & ~(size_t)(TL_ARENA_ALIGN - 1))

static unsigned char *chunk_payload(tl_arena_chunk *c) { return (unsigned char *)c + TL_ARENA_HDR; }

void tl_arena_init(tl_arena *a) {
  a->head = NULL;
  a->total = 0;
  a->oom = false;
}

void *tl_arena_alloc(tl_arena *a, size_t size) {
  if (size == 0) size = 1;
  if (size > SIZE_MAX - TL_ARENA_HDR - TL_ARENA_ALIGN) {
    a->oom = true;
    return NULL;
  }
  size_t rounded = (size + TL_ARENA_ALIGN - 1) & ~(size_t)(TL_ARENA_ALIGN - 1);
  tl_arena_chunk *c = a->head;
  if (!c || c->cap - c->used < rounded) {
    size_t cap = rounded > TL_ARENA_CHUNK ? rounded : TL_ARENA_CHUNK;
    /* calloc returns memory aligned for max_align_t (16 on x86-64/aarch64). */
    tl_arena_chunk *n = calloc(1, TL_ARENA_HDR + cap);
    if (!n) {
      a->oom = true;
      return NULL;
    }
    n->cap = cap;
    n->used = 0;
    if (c && rounded > TL_ARENA_CHUNK && c->cap - c->used >= TL_ARENA_ALIGN) {
      /* A big one-off chunk goes behind the head so the head's free space
       * stays usable for later small allocations. */
      n->next = c->next;
      c->next = n;
    } else {
      n->next = c;
      a->head = n;
    }
    c = n;
  }
  void *p = chunk_payload(c) + c->used;
  c->used += rounded;
  a->total += rounded;
  return p;
}

char *tl_arena_strndup(tl_arena *a, const char *s, size_t n) {
  if (n == SIZE_MAX) {
    a->oom = true;
    return NULL;
  }
  char *p = tl_arena_alloc(a, n + 1);
  if (!p) return NULL;
  if (n) memcpy(p, s, n);
  p[n] = '\0';
  return p;
}

char *tl_arena_strdup(tl_arena *a, const char *s) { return tl_arena_strndup(a, s, strlen(s)); }

char *tl_arena_printf(tl_arena *a, const char *fmt, ...) {
  va_list ap, ap2;
  va_start(ap, fmt);
  va_copy(ap2, ap);
  int n = vsnprintf(NULL, 0, fmt, ap);
  va_end(ap);
  if (n < 0) {
    va_end(ap2);
    return NULL;
  }
  char *p = tl_arena_alloc(a, (size_t)n + 1);
  if (p) vsnprintf(p, (size_t)n + 1, fmt, ap2);
  va_end(ap2);
  return p;
}

void tl_arena_free(tl_arena *a) {
  tl_arena_chunk *c = a->head;
  while (c) {
    tl_arena_chunk *next = c->next;
    free(c);
    c = next;
  }
  a->head = NULL;
  a->total = 0;
}
