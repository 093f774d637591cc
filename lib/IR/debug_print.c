/* The text of T.debug_print (T.print) and of a failed T.device_assert_at:
 * one format per call site,
 * shared by the code generator (the vprintf format string,
 * lib/NVPTX/codegen_print.c) and the SIMT executor (lib/Interp/simt_print.c),
 * so that the GPU and the CPU print the same line.  TileLang's debug.h line
 * (msg='...' BlockIdx=(x, y, z), ThreadIdx=(x, y, z): [buffer=B, index=I, ]
 * dtype=C value=V) behind the call's file:line:
 *
 *   kernel.py:12: msg='hi' BlockIdx=(0, 0, 0), ThreadIdx=(5, 0, 0): dtype=float value=1.500000
 *
 * dtype is the C type TileLang's PrintTraits name (int, uint, half_t,
 * bfloat16_t, ...); floats print with %f from a double, integers of 32 bits
 * or fewer as int (%d) or unsigned (%u), 64-bit ones as long long, bools as
 * true / false.  where, msg and the buffer's name are copied in with every
 * '%' doubled.  A failed T.device_assert_at prints
 *
 *   kernel.py:12: Device assert failed: too many BlockIdx=(0, 0, 0), ThreadIdx=(5, 0, 0)
 */
#include "IR/tir.h"

#include <string.h>

bool tl_debug_print_kind_of(tl_dtype t, tl_debug_print_kind *kind, const char **cname) {
  if (t.lanes != 1) return false;
  const char *n = NULL;
  tl_debug_print_kind k = TL_DEBUG_PRINT_INT;
  switch ((tl_type_code)t.code) {
  case TL_TYPE_BOOL: k = TL_DEBUG_PRINT_BOOL, n = "bool"; break;
  case TL_TYPE_INT:
    k = t.bits == 64 ? TL_DEBUG_PRINT_I64 : TL_DEBUG_PRINT_INT;
    n = t.bits == 8 ? "signed char" : t.bits == 16 ? "short" : t.bits == 32 ? "int" : t.bits == 64 ? "long" : NULL;
    break;
  case TL_TYPE_UINT:
    k = t.bits == 64 ? TL_DEBUG_PRINT_U64 : TL_DEBUG_PRINT_UINT;
    n = t.bits == 8    ? "unsigned char"
        : t.bits == 16 ? "unsigned short"
        : t.bits == 32 ? "uint"
        : t.bits == 64 ? "ulong"
                       : NULL;
    break;
  case TL_TYPE_FLOAT:
    k = TL_DEBUG_PRINT_FLOAT;
    n = t.bits == 16 ? "half_t" : t.bits == 32 ? "float" : t.bits == 64 ? "double" : NULL;
    break;
  case TL_TYPE_BFLOAT: k = TL_DEBUG_PRINT_FLOAT, n = t.bits == 16 ? "bfloat16_t" : NULL; break;
  case TL_TYPE_TFLOAT: k = TL_DEBUG_PRINT_FLOAT, n = "float"; break;
  default: break;
  }
  if (!n) return false;
  if (kind) *kind = k;
  if (cname) *cname = n;
  return true;
}

static void append_escaped(tl_strbuf *sb, const char *s) {
  for (const char *p = s ? s : ""; *p; p++) {
    if (*p == '%') tl_strbuf_append(sb, "%%");
    else tl_strbuf_appendn(sb, p, 1);
  }
}

char *tl_debug_print_format(const char *where, const char *msg, const char *buffer, tl_dtype t) {
  tl_debug_print_kind k;
  const char *cname;
  if (!tl_debug_print_kind_of(t, &k, &cname)) return NULL;
  tl_strbuf sb = {0};
  append_escaped(&sb, where);
  tl_strbuf_append(&sb, ": msg='");
  append_escaped(&sb, msg);
  tl_strbuf_append(&sb, "' BlockIdx=(%d, %d, %d), ThreadIdx=(%d, %d, %d): ");
  if (buffer && *buffer) {
    tl_strbuf_append(&sb, "buffer=");
    append_escaped(&sb, buffer);
    tl_strbuf_append(&sb, ", index=%d, ");
  }
  tl_strbuf_append(&sb, "dtype=");
  tl_strbuf_append(&sb, cname);
  static const char *const spec[] = {
      [TL_DEBUG_PRINT_INT] = "%d",   [TL_DEBUG_PRINT_UINT] = "%u",  [TL_DEBUG_PRINT_I64] = "%lld",
      [TL_DEBUG_PRINT_U64] = "%llu", [TL_DEBUG_PRINT_FLOAT] = "%f", [TL_DEBUG_PRINT_BOOL] = "%s"};
  tl_strbuf_append(&sb, " value=");
  tl_strbuf_append(&sb, spec[k]);
  tl_strbuf_append(&sb, "\n");
  return tl_strbuf_take(&sb);
}

char *tl_device_assert_format(const char *where, const char *msg) {
  tl_strbuf sb = {0};
  if (where && *where) {
    append_escaped(&sb, where);
    tl_strbuf_append(&sb, ": ");
  }
  tl_strbuf_append(&sb, "Device assert failed: ");
  append_escaped(&sb, msg);
  tl_strbuf_append(&sb, " BlockIdx=(%d, %d, %d), ThreadIdx=(%d, %d, %d)\n");
  return tl_strbuf_take(&sb);
}
