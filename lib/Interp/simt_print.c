/* T.debug_print (T.print) in the SIMT executor: each active
 * thread of the gang (or only the named thread) prints the call site's line
 * to stdout, with the format the code generator hands to vprintf
 * (tl_debug_print_format, lib/IR/debug_print.c) and the values it passes:
 * the GPU and the CPU print the same text.  Lanes print in thread order. */
#include "Interp/simt_internal.h"

#include <stdio.h>
#include <stdlib.h>

#pragma GCC diagnostic ignored "-Wformat-nonliteral" /* the call site's format (tl_debug_print_format) */

static void print_one(const char *fmt, const int b[6], bool indexed, int index, tl_debug_print_kind k, sx_el v) {
  switch (k) {
  case TL_DEBUG_PRINT_INT:
  case TL_DEBUG_PRINT_UINT: {
    int iv = (int)(uint32_t)(uint64_t)v.i; /* the 32 bits vprintf reads (%u reads them unsigned) */
    if (indexed) printf(fmt, b[0], b[1], b[2], b[3], b[4], b[5], index, iv);
    else printf(fmt, b[0], b[1], b[2], b[3], b[4], b[5], iv);
    break;
  }
  case TL_DEBUG_PRINT_I64:
  case TL_DEBUG_PRINT_U64: {
    long long lv = (long long)v.i;
    if (indexed) printf(fmt, b[0], b[1], b[2], b[3], b[4], b[5], index, lv);
    else printf(fmt, b[0], b[1], b[2], b[3], b[4], b[5], lv);
    break;
  }
  case TL_DEBUG_PRINT_FLOAT:
    if (indexed) printf(fmt, b[0], b[1], b[2], b[3], b[4], b[5], index, v.f);
    else printf(fmt, b[0], b[1], b[2], b[3], b[4], b[5], v.f);
    break;
  case TL_DEBUG_PRINT_BOOL: {
    const char *s = v.i ? "true" : "false";
    if (indexed) printf(fmt, b[0], b[1], b[2], b[3], b[4], b[5], index, s);
    else printf(fmt, b[0], b[1], b[2], b[3], b[4], b[5], s);
    break;
  }
  }
}

bool sx_debug_print(sx *x, const tl_expr *e, const uint8_t *mask) {
  tl_expr *const *a = e->u.call.args;
  if (e->u.call.n != 6 || a[0]->kind != TL_EXPR_STRING || a[1]->kind != TL_EXPR_STRING || a[2]->kind != TL_EXPR_STRING)
    return sx_fail(x, "T.debug_print takes (where, msg, buffer, index, value, thread), the first three strings");
  tl_debug_print_kind k;
  if (!tl_debug_print_kind_of(a[4]->dtype, &k, NULL))
    return sx_fail(x, "T.print of a %s value is not supported", tl_dtype_name(a[4]->dtype));
  int64_t thread;
  if (!tl_expr_is_const_int(a[5], &thread)) return sx_fail(x, "T.debug_print: the thread must be a constant");
  bool indexed = a[2]->u.str[0] != '\0';
  sx_val idx = {0}, val;
  if (indexed && !sx_eval_as(x, a[3], TL_INT32, mask, &idx)) return false;
  if (!sx_eval_as(x, a[4], a[4]->dtype, mask, &val)) return false;
  char *fmt = tl_debug_print_format(a[0]->u.str, a[1]->u.str, a[2]->u.str, a[4]->dtype);
  if (!fmt) return sx_fail(x, "out of memory in the SIMT executor");
  for (int t = 0; t < x->T; t++) {
    if (!mask[t] || (thread >= 0 && x->tbase + t != thread)) continue;
    int b[6] = {(int)x->block[0], (int)x->block[1], (int)x->block[2], x->tbase + t, 0, 0};
    print_one(fmt, b, indexed, indexed ? (int)idx.v[t].i : 0, k, val.v[t]);
  }
  free(fmt);
  return true;
}

bool sx_device_assert(sx *x, const tl_expr *e, const uint8_t *mask) {
  tl_expr *const *a = e->u.call.args;
  if (e->u.call.n != 3 || a[1]->kind != TL_EXPR_STRING || a[2]->kind != TL_EXPR_STRING)
    return sx_fail(x, "T.device_assert_at takes (cond, msg, where), the last two strings");
  sx_val c;
  if (!sx_eval_as(x, a[0], TL_BOOL, mask, &c)) return false;
  for (int t = 0; t < x->T; t++) {
    if (!mask[t] || c.v[t].i) continue;
    char *fmt = tl_device_assert_format(a[2]->u.str, a[1]->u.str);
    if (!fmt) return sx_fail(x, "out of memory in the SIMT executor");
    printf(fmt, (int)x->block[0], (int)x->block[1], (int)x->block[2], x->tbase + t, 0, 0);
    free(fmt);
    return sx_fail(x, "T.device_assert failed: %s (thread %d)", a[1]->u.str, x->tbase + t);
  }
  return true;
}
