/* The TMA tensor copies' one decoder and the function's tensor-map list
 * (docs/simt-ir.md "TMA tensor copies").
 *
 * Role: T.ptx_tma_load / T.ptx_tma_store have a variable arity (their
 * tensor's rank) and constant box / swizzle arguments; tl_tma_decode is the
 * one place that reads and checks them, for the code generator
 * (lib/NVPTX/Hopper/codegen_hopper.c), the SIMT executor (lib/Interp/Hopper/simt_tma.c)
 * and tl_tma_collect.  tl_tma_collect lists the function's tensor maps (one
 * per distinct tensor parameter, box, swizzle, in order of first appearance)
 * for the kernel ABI (codegen: one 128-byte grid-constant parameter each,
 * after all others) and the runtime (lib/Runtime/Hopper/tma.c encodes them).
 * Requires: SIMT IR (or any IR) of a prim_func.  Guarantees: maps in
 * pre-order of the calls in the body; the same list every time for the
 * same function.
 * Hardware facts: PTX ISA §9.7.9.27 (cp.async.bulk.tensor, ranks 1..5) and
 * the CUDA driver API cuTensorMapEncodeTiled (box extents 1..256, inner box
 * bytes a multiple of 16, at most the swizzle span when swizzled). */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "IR/tir.h"
#include "IR/visit.h"

static bool fail(tl_loc *loc, char *msg, size_t msgsz, tl_loc at, const char *fmt, ...)
    __attribute__((format(printf, 5, 6)));
static bool fail(tl_loc *loc, char *msg, size_t msgsz, tl_loc at, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  if (msg && msgsz) vsnprintf(msg, msgsz, fmt, ap);
  va_end(ap);
  if (loc) *loc = at;
  return false;
}

static const tl_buffer *buffer_of(const tl_expr *a) { return a && a->kind == TL_EXPR_BUFFER ? a->u.buffer : NULL; }

static bool is_int_scalar(const tl_expr *a) {
  return a && (a->dtype.code == TL_TYPE_INT || a->dtype.code == TL_TYPE_UINT) && a->dtype.lanes <= 1;
}

bool tl_tma_decode(const tl_primfunc *f, const tl_expr *e, tl_tma_call *out, tl_loc *loc, char *msg, size_t msgsz) {
  memset(out, 0, sizeof *out);
  bool store = e->u.call.op == TL_INTRIN_PTX_TMA_STORE;
  const char *name = store ? "ptx_tma_store" : "ptx_tma_load";
  int n = e->u.call.n, ti = store ? 0 : 4, si = store ? 1 : 0;
  tl_expr *const *a = e->u.call.args;
  out->is_store = store;
  if (n <= ti || n <= si)
    return fail(loc, msg, msgsz, e->loc, "T.%s takes %s, got %d arguments", name,
                store ? "4 + 2r arguments (r: the tensor's rank)" : "6 + 2r arguments (r: the tensor's rank)", n);
  const tl_buffer *t = buffer_of(a[ti]);
  int pi = -1;
  for (int i = 0; t && f && i < f->nparams; i++)
    if (f->params[i].kind == TL_PARAM_TENSOR && f->params[i].buffer == t) pi = i;
  if (!t || t->scope != TL_SCOPE_GLOBAL || pi < 0)
    return fail(loc, msg, msgsz, a[ti]->loc, "T.%s: argument %d must be a global tensor parameter of '%s'", name,
                ti + 1, f ? f->name : "?");
  int r = t->ndim;
  if (r < 1 || r > TL_TMA_MAX_RANK)
    return fail(loc, msg, msgsz, a[ti]->loc, "T.%s: tensor '%s' has rank %d; TMA copies take ranks 1 to %d", name,
                t->name, r, TL_TMA_MAX_RANK);
  int fixed = store ? 4 : 6;
  if (n != fixed + 2 * r)
    return fail(loc, msg, msgsz, e->loc, "T.%s of the rank-%d tensor '%s' takes %d arguments (%d + 2 x %d), got %d",
                name, r, t->name, fixed + 2 * r, fixed, r, n);
  const tl_buffer *s = buffer_of(a[si]);
  if (!s || (s->scope != TL_SCOPE_SHARED_DYN && s->scope != TL_SCOPE_SHARED))
    return fail(loc, msg, msgsz, a[si]->loc, "T.%s: argument %d must be a shared buffer", name, si + 1);
  if (s->dtype.code != t->dtype.code || s->dtype.bits != t->dtype.bits || s->dtype.lanes != t->dtype.lanes)
    return fail(loc, msg, msgsz, a[si]->loc, "T.%s: shared buffer '%s' (%s) and tensor '%s' (%s) differ in dtype", name,
                s->name, tl_dtype_name(s->dtype), t->name, tl_dtype_name(t->dtype));
  out->smem = a[si];
  out->smem_off = a[si + 1];
  if (!store) {
    out->bar = a[2];
    out->bar_off = a[3];
  }
  int swi = store ? 3 : 5;
  int64_t v;
  if (!tl_expr_is_const_int(a[swi], &v) || (v != 0 && v != 32 && v != 64 && v != 128))
    return fail(loc, msg, msgsz, a[swi]->loc, "T.%s: the swizzle must be a constant 0, 32, 64 or 128", name);
  out->map.swizzle = (int)v;
  for (int i = 0; i < r; i++) {
    const tl_expr *b = a[swi + 1 + i];
    if (!tl_expr_is_const_int(b, &v) || v < 1 || v > 256)
      return fail(loc, msg, msgsz, b->loc, "T.%s: box extent %d must be a constant from 1 to 256", name, i);
    out->map.box[i] = (int)v;
    const tl_expr *c = a[swi + 1 + r + i];
    if (!is_int_scalar(c))
      return fail(loc, msg, msgsz, c->loc, "T.%s: coordinate %d must be a scalar integer, not %s", name, i,
                  tl_dtype_name(c->dtype));
    out->coord[i] = c;
  }
  int64_t inner = (int64_t)out->map.box[r - 1] * tl_dtype_bytes(t->dtype);
  const tl_expr *ib = a[swi + r];
  if (inner % 16)
    return fail(loc, msg, msgsz, ib->loc, "T.%s: the inner box extent is %lld bytes, not a multiple of 16", name,
                (long long)inner);
  if (out->map.swizzle && inner > out->map.swizzle)
    return fail(loc, msg, msgsz, ib->loc, "T.%s: the inner box extent is %lld bytes, more than the %d-byte swizzle",
                name, (long long)inner, out->map.swizzle);
  out->map.tensor = t;
  out->map.param = pi;
  out->map.rank = r;
  return true;
}

int tl_tma_find(const tl_tma_map *maps, int n, const tl_tma_map *key) {
  for (int i = 0; i < n; i++)
    if (maps[i].param == key->param && maps[i].rank == key->rank && maps[i].swizzle == key->swizzle &&
        memcmp(maps[i].box, key->box, sizeof(int) * (size_t)key->rank) == 0)
      return i;
  return -1;
}

typedef struct collect {
  tl_visitor v;
  const tl_primfunc *f;
  tl_tma_map *maps;
  int n, cap;
  bool failed;
  tl_loc *loc;
  char *msg;
  size_t msgsz;
} collect;

static void on_expr(tl_visitor *v, const tl_expr *e) {
  collect *c = (collect *)v;
  if (c->failed || e->kind != TL_EXPR_CALL ||
      (e->u.call.op != TL_INTRIN_PTX_TMA_LOAD && e->u.call.op != TL_INTRIN_PTX_TMA_STORE))
    return;
  tl_tma_call tc;
  if (!tl_tma_decode(c->f, e, &tc, c->loc, c->msg, c->msgsz)) {
    c->failed = true;
    return;
  }
  if (tl_tma_find(c->maps, c->n, &tc.map) >= 0) return;
  if (c->n == c->cap) {
    int cap = c->cap ? 2 * c->cap : 4;
    tl_tma_map *m = realloc(c->maps, sizeof *m * (size_t)cap);
    if (!m) {
      c->failed = true;
      fail(c->loc, c->msg, c->msgsz, e->loc, "out of memory");
      return;
    }
    c->maps = m;
    c->cap = cap;
  }
  c->maps[c->n++] = tc.map;
}

int tl_tma_collect(const tl_primfunc *f, tl_tma_map **maps, tl_loc *loc, char *msg, size_t msgsz) {
  collect c;
  memset(&c, 0, sizeof c);
  c.v.expr = on_expr;
  c.f = f;
  c.loc = loc;
  c.msg = msg;
  c.msgsz = msgsz;
  *maps = NULL;
  if (f && f->body) tl_visit_stmt(&c.v, f->body);
  if (!c.failed && c.v.too_deep) c.failed = !fail(loc, msg, msgsz, f->loc, "the function nests too deeply");
  if (c.failed) {
    free(c.maps);
    return -1;
  }
  *maps = c.maps;
  return c.n;
}
