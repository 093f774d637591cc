/* SIMT executor: race checks on global memory within one kernel launch.
 *
 * Model.  The blocks of a launch are unordered (the executor runs them one
 * after another, the GPU in any order or at once), so an element of a
 * global tensor that one block writes and another block reads or writes is
 * a race unless both accesses are atomics.  Threads of one block are
 * ordered as for shared memory (simt_race.c: program order of a thread,
 * barriers and mbarriers through the vector clocks): a write that does not
 * happen before another thread's read or write of the element, or a read
 * that does not happen before another thread's write, is a race.  Two
 * T.ptx_atomic_add on one element never race; an atomic and a plain access
 * race like two writes.  Two plain writes of the same bytes are not
 * reported: every order gives the same result (the plain statements of a
 * kernel that every thread executes, a tile every block recomputes).  A
 * read by a lane of the writer's own warp is taken as ordered before the
 * write (WAR): the lanes of a warp reconverge at its collectives (the
 * shuffles of a reduction between a load of an element and its store),
 * which the vector clocks do not model.
 *
 * State.  Only tensors the kernel stores to (a store statement or a
 * T.ptx_atomic_add names them) carry state: per element, the last write
 * (block, vector-clock unit and clock, thread, source line, atomic or not)
 * and the last plain read (block, unit, clock, thread or SX_MANY when
 * several threads of one gang read it at one clock).  Keeping only the last
 * read can miss a race of an earlier reader; it never reports one that is
 * not there.  Tensors only read have no state and cost one test per access;
 * a tensor whose state cannot be allocated is run unchecked.
 * Not modelled: global accesses of the async proxy (TMA and bulk copies,
 * cp.async sources) and aliasing between two tensor arguments. */
#include "IR/visit.h"
#include "Interp/simt_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct sx_gel {
  uint32_t w_blk; /* 1 + linear block of the last write; 0: not written in this launch */
  uint32_t w_clk; /* the writer gang's clock at the write */
  int16_t w_unit, w_thr;
  int32_t w_line; /* source line of the write; negative: an atomic at line -w_line */
  uint32_t r_blk; /* the last plain read, as above (0: none) */
  uint32_t r_clk;
  int16_t r_unit, r_thr; /* r_thr: SX_MANY when several threads of the gang read at r_clk */
  int32_t r_line;
} sx_gel;

/* ---------------------------------------------------------------- launch */

/* The buffers a kernel stores to or updates atomically, gathered by a
 * tl_map_visitor. */
static const char view_stored; /* key of the set: a store through a T.make_tensor view (into any tensor) */

static void scan_stmt(tl_visitor *v, const tl_stmt *s) {
  if (s->kind != TL_STMT_STORE) return;
  tl_map_visitor_add((tl_map_visitor *)v, s->u.store.buffer);
  if (tl_buffer_is_view(s->u.store.buffer)) tl_map_visitor_add((tl_map_visitor *)v, &view_stored);
}

static void scan_expr(tl_visitor *v, const tl_expr *e) {
  if (e->kind != TL_EXPR_CALL || e->u.call.n < 1 ||
      (e->u.call.op != TL_INTRIN_PTX_ATOMIC_ADD && e->u.call.op != TL_INTRIN_PTX_ATOMIC_MAX &&
       e->u.call.op != TL_INTRIN_PTX_ATOMIC_MIN))
    return;
  const tl_expr *a = e->u.call.args[0];
  if (a && a->kind == TL_EXPR_BUFFER) tl_map_visitor_add((tl_map_visitor *)v, a->u.buffer);
}

void sx_gsh_free(sx *x) {
  for (int i = 0; i < x->f->nparams; i++) {
    if (x->f->params[i].kind == TL_PARAM_SCALAR) continue;
    sx_buf *sb = tl_map_get(&x->gbufs, x->f->params[i].buffer, NULL);
    if (!sb) continue;
    free(sb->gsh);
    sb->gsh = NULL;
  }
}

bool sx_gsh_launch(sx *x, const tl_stmt *s) {
  sx_gsh_free(x);
  if (!x->check) return true;
  tl_map stored;
  tl_map_init(&stored);
  tl_map_visitor sc = {.v = {.stmt = scan_stmt, .expr = scan_expr}, .set = &stored};
  tl_visit_stmt(&sc.v, s->u.kernel.body);
  for (int i = 0; !sc.oom && i < x->f->nparams; i++) {
    if (x->f->params[i].kind == TL_PARAM_SCALAR) continue;
    const tl_buffer *b = x->f->params[i].buffer;
    sx_buf *sb = tl_map_get(&x->gbufs, b, NULL);
    if (!sb || (!tl_map_get(&stored, b, NULL) && !tl_map_get(&stored, &view_stored, NULL)) || sb->elems <= 0) continue;
    /* zero pages cost nothing until touched; a tensor of more than 2^26 elements (2 GiB of state) is
     * run unchecked, as is one whose state cannot be allocated (AddressSanitizer's calloc aborts rather
     * than fail on the 128 GiB a 2^32-element tensor would take) */
    if ((uint64_t)sb->elems > ((uint64_t)1 << 26)) continue;
    sb->gsh = calloc((size_t)sb->elems, sizeof(sx_gel));
  }
  tl_map_free(&stored);
  if (sc.oom) return sx_fail(x, "out of memory in the SIMT executor (global race state)");
  return true;
}

struct sx_gel *sx_gsh_at(const sx_buf *sb, int64_t f) {
  return sb->gsh ? sb->gsh + f : NULL;
}

/* -------------------------------------------------------------- messages */

static void describe_elem(const sx_buf *sb, int64_t f, char *buf, size_t n) {
  int len = snprintf(buf, n, "'%s'[", sb->b->name);
  if (sb->b->strides || sb->ndim < 1) {
    snprintf(buf + len, n - (size_t)len, "element %lld]", (long long)f);
    return;
  }
  int64_t idx[SX_MAX_DIMS], r = f;
  for (int d = sb->ndim - 1; d >= 0; d--) {
    idx[d] = sb->shape[d] ? r % sb->shape[d] : 0;
    r = sb->shape[d] ? r / sb->shape[d] : 0;
  }
  for (int d = 0; d < sb->ndim && len > 0 && (size_t)len < n; d++)
    len += snprintf(buf + len, n - (size_t)len, "%s%lld", d ? ", " : "", (long long)idx[d]);
  if (len > 0 && (size_t)len < n) snprintf(buf + len, n - (size_t)len, "]");
}

/* "thread T of block (x, y, z) (line L)" for an access by thread thr in block blk (1 + linear). */
static void describe_access(const sx_blk *k, uint32_t blk, int thr, int32_t line, char *buf, size_t n) {
  int64_t lin = (int64_t)blk - 1, gx = k->grid[0] ? k->grid[0] : 1, gy = k->grid[1] ? k->grid[1] : 1;
  char who[32];
  if (thr == SX_MANY) snprintf(who, sizeof who, "several threads");
  else snprintf(who, sizeof who, "thread %d", thr);
  snprintf(buf, n, "%s of block (%lld, %lld, %lld) (line %d)", who, (long long)(lin % gx), (long long)(lin / gx % gy),
           (long long)(lin / gx / gy), line < 0 ? -line : line);
}

static int cur_line(const sx *x) { return x->cur ? x->cur->loc.line : 0; }

static bool report(sx *x, const sx_buf *sb, int64_t f, int t, const char *now_op, const char *then_op, uint32_t blk,
                   int thr, int32_t line, bool same_block) {
  char what[200], other[160];
  describe_elem(sb, f, what, sizeof what);
  describe_access(x->k, blk, thr, line, other, sizeof other);
  return sx_fail(x, "data race on global memory: thread %d %s %s (line %d), which %s %s %s; %s", t, now_op, what,
                 cur_line(x), other, then_op, same_block ? "with no synchronisation in between" : "in another block",
                 same_block ? "add a T.sync_threads() between them or give the element one writer"
                            : "blocks are unordered: use T.atomic_add or give each element one writing block");
}

/* --------------------------------------------------------------- checks */

static bool ordered(const sx *x, uint32_t blk, int unit, uint32_t clk, int thr, int t) {
  return blk == x->k->blk_id && (thr == t || sx_happens_before(x, unit, clk, thr, t));
}

bool sx_gmem_read(sx *x, sx_buf *sb, int64_t f, int t) {
  if (!sb->gsh) return true;
  sx_gel *g = &sb->gsh[f];
  if (g->w_blk && !ordered(x, g->w_blk, g->w_unit, g->w_clk, g->w_thr, t))
    return report(x, sb, f, t, "reads", g->w_line < 0 ? "added to atomically" : "wrote", g->w_blk, g->w_thr, g->w_line,
                  g->w_blk == x->k->blk_id);
  uint32_t now = sx_vc(x->k, x->g)[x->g];
  if (g->r_blk == x->k->blk_id && g->r_unit == x->g && g->r_clk == now) {
    if (g->r_thr != t) g->r_thr = SX_MANY;
    return true;
  }
  g->r_blk = x->k->blk_id;
  g->r_unit = (int16_t)x->g;
  g->r_clk = now;
  g->r_thr = (int16_t)t;
  g->r_line = cur_line(x);
  return true;
}

/* Does a plain write of v store the bytes element f holds, which the plain write g records stored? */
static bool same_bytes(const sx_buf *sb, int64_t f, const sx_gel *g, const sx_el *v) {
  uint8_t enc[16];
  if (!v || g->w_line < 0 || sb->eb > (int)sizeof enc) return false;
  sx_el_store(sb->et, enc, *v);
  return memcmp(enc, sb->data + f * sb->eb, (size_t)sb->eb) == 0;
}

bool sx_gmem_write(sx *x, sx_buf *sb, int64_t f, int t, const sx_el *v) {
  if (!sb->gsh) return true;
  sx_gel *g = &sb->gsh[f];
  bool atomic = v == NULL;
  const char *op = atomic ? "adds atomically to" : "writes";
  if (g->w_blk && !(atomic && g->w_line < 0) && !ordered(x, g->w_blk, g->w_unit, g->w_clk, g->w_thr, t) &&
      !same_bytes(sb, f, g, v))
    return report(x, sb, f, t, op, g->w_line < 0 ? "added to atomically" : "also wrote", g->w_blk, g->w_thr, g->w_line,
                  g->w_blk == x->k->blk_id);
  if (g->r_blk && !ordered(x, g->r_blk, g->r_unit, g->r_clk, g->r_thr, t) &&
      !(g->r_blk == x->k->blk_id && g->r_unit == x->g))
    return report(x, sb, f, t, op, "read", g->r_blk, g->r_thr, g->r_line, g->r_blk == x->k->blk_id);
  g->w_blk = x->k->blk_id;
  g->w_unit = (int16_t)x->g;
  g->w_clk = sx_vc(x->k, x->g)[x->g];
  g->w_thr = (int16_t)t;
  g->w_line = atomic ? -cur_line(x) : cur_line(x);
  if (atomic && g->w_line == 0) g->w_line = -1; /* keep "atomic" without a location */
  return true;
}
