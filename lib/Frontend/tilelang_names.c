/* The names TileLang's language module exports (tilelang_names.def): which
 * T.* names are TileLang's, so that those we do not support get "T.x is not
 * supported yet" rather than "unknown name" (elab_expr.c t_member). */
#include <stdlib.h>
#include <string.h>

#include "Frontend/elab_impl.h"

static const char *const tilelang_names[] = {
#define TL_TILELANG_NAME(n) n,
#include "Frontend/tilelang_names.def"
#undef TL_TILELANG_NAME
};

static int cmp_name(const void *key, const void *elem) { return strcmp((const char *)key, *(const char *const *)elem); }

bool tilelang_has_name(const char *name) {
  size_t n = sizeof tilelang_names / sizeof tilelang_names[0];
  return name && bsearch(name, tilelang_names, n, sizeof tilelang_names[0], cmp_name) != NULL;
}
