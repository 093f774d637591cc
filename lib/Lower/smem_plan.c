/* Pass "smem-plan" of lib/Lower: places every shared.dyn buffer in the one
 * dynamic shared-memory block (SIMT IR → SIMT IR; the last pass).
 *
 * Requires: lowered SIMT IR (shared.dyn buffers are 1-D flat buffers of
 * static size, allocated in the kernel).
 * Guarantees: every shared.dyn buffer allocated in the function has
 * smem_planned = true and a byte offset smem_offset that is a multiple of 16,
 * and of 128 for buffers of 128 bytes or more (a swizzled tile's XOR pattern
 * assumes 128-byte aligned rows: docs/layouts.md "Shared-memory swizzles"); buffers whose
 * lifetimes overlap get disjoint byte ranges (an mbarrier buffer's lifetime
 * is the whole kernel); f->smem_bytes is the end of
 * the highest one (0 without shared memory).  Where a buffer reuses bytes of
 * a buffer that died earlier, a T.sync_threads() separates the last use of
 * the old one from the first use of the new one (unless one already does),
 * so no thread writes the new buffer while another still reads the old.
 * More than the target allows (tl_target.max_smem_per_block) is an error at
 * the kernel naming every buffer with its size and offset.
 *
 * Algorithm: lifetimes are intervals of statement positions at the kernel's
 * top level (a loop counts as one position, so a buffer used in a loop lives
 * for the whole loop): [first, last] position whose statement mentions the
 * buffer (loads, stores, buffer arguments of intrinsics).  Buffers are placed
 * in order of first use by first fit: the lowest aligned offset whose range
 * does not intersect the range of any placed buffer with an overlapping
 * lifetime.  Only when that plan exceeds the target's limit, the plan of
 * smem_reuse.c replaces it (lifetimes that end inside loop iterations, with
 * the barriers it needs; a remark under --remarks gives its offsets), so a
 * kernel that fits keeps the code it had. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "IR/visit.h"
#include "Lower/smem_plan.h"

typedef struct sbuf {
  tl_buffer *buf;
  int64_t bytes, align;
  int first, last; /* top-level positions; first = -1 until used */
  int64_t offset;
  bool placed, mbarrier; /* mbarrier: it holds mbarrier objects (T.ptx_mbarrier_init's buffer) */
} sbuf;

typedef struct sp_state {
  tl_visitor v; /* first: collect_alloc and note_intrinsic_args cast back */
  tl_module *m;
  tl_diag *d;
  TL_VEC(sbuf) bufs;
  int pos; /* the top-level position whose uses are being recorded */
  bool oom, too_deep;
} sp_state;

static int find(sp_state *st, const tl_buffer *b) {
  for (size_t i = 0; i < st->bufs.len; i++)
    if (st->bufs.data[i].buf == b) return (int)i;
  return -1;
}

/* A tl_visitor callback: records every shared.dyn allocation (once). */
static void collect_alloc(tl_visitor *v, const tl_stmt *s) {
  sp_state *st = (sp_state *)v;
  if (s->kind != TL_STMT_ALLOC) return;
  tl_buffer *b = s->u.alloc.buffer;
  if (!b || b->scope != TL_SCOPE_SHARED_DYN || find(st, b) >= 0) return;
  sbuf x;
  memset(&x, 0, sizeof x);
  x.buf = b;
  x.first = x.last = -1;
  x.bytes = tl_dtype_bytes(b->dtype) * (b->dtype.lanes > 1 ? b->dtype.lanes : 1);
  for (int k = 0; k < b->ndim; k++) {
    int64_t d;
    if (!tl_expr_is_const_int(b->shape[k], &d) || d < 0 || __builtin_mul_overflow(x.bytes, d, &x.bytes) ||
        x.bytes > ((int64_t)1 << 40))
      x.bytes = -1;
    if (x.bytes < 0) break;
  }
  x.align = x.bytes >= 128 ? 128 : 16;
  if (!tl_vec_push(&st->bufs, x)) st->oom = true;
}

/* ----------------------------------------------------------------- uses */
static void use(sp_state *st, const tl_buffer *b, int pos) {
  int i = find(st, b);
  if (i < 0) return;
  sbuf *x = &st->bufs.data[i];
  if (x->first < 0 || pos < x->first) x->first = pos;
  if (pos > x->last) x->last = pos;
}

/* Every buffer a top-level statement touches (tl_visit_buffers: loads,
 * stores, buffer arguments of intrinsics, tile-op regions) is used at the
 * position st->pos. */
typedef struct sp_uses {
  tl_buffer_visitor bv; /* first: uses_buffer casts back */
  sp_state *st;
} sp_uses;
static void uses_buffer(tl_buffer_visitor *bv, const tl_buffer *b) {
  sp_state *st = ((sp_uses *)bv)->st;
  use(st, b, st->pos);
}

/* A tl_visitor callback (through st->v), over the intrinsics' buffer
 * arguments:
 *  - TMA and wgmma key their swizzle on shared-address bits 7-9, so the 2-byte
 *    tiles they name start 1024-byte aligned (docs/hopper.md "The
 *    shared-memory image");
 *  - the buffer of a T.ptx_mbarrier_init holds mbarrier objects, whose bytes
 *    no other buffer may take over while the kernel runs (PTX ISA, mbarrier:
 *    an mbarrier object's memory is repurposed only after mbarrier.inval,
 *    which we do not emit): it lives for the whole kernel. */
static void note_intrinsic_args(tl_visitor *v, const tl_expr *e) {
  sp_state *st = (sp_state *)v;
  if (e->kind != TL_EXPR_CALL) return;
  int op = e->u.call.op;
  bool swizzled = op == TL_INTRIN_PTX_TMA_LOAD || op == TL_INTRIN_PTX_TMA_STORE || op == TL_INTRIN_PTX_WGMMA_SS ||
                  op == TL_INTRIN_PTX_WGMMA_RS;
  for (int a = 0; a < e->u.call.n; a++) {
    const tl_expr *x = e->u.call.args[a];
    int i = x && x->kind == TL_EXPR_BUFFER ? find(st, x->u.buffer) : -1;
    if (i < 0) continue;
    if (swizzled && tl_dtype_bytes(x->u.buffer->dtype) == 2) st->bufs.data[i].align = 1024;
    if (op == TL_INTRIN_PTX_MBARRIER_INIT && a == 0) st->bufs.data[i].mbarrier = true;
  }
}

/* Does s begin with a T.sync_threads() (itself, or a sequence whose first
 * statement other than allocations is one, e.g. the staged epilogue of
 * lower_tile.c: alloc; sync; ...)? */
static bool is_sync(const tl_stmt *s, int sync_op) {
  for (int depth = 0; s && s->kind == TL_STMT_SEQ && depth < 8; depth++) {
    const tl_stmt *first = NULL;
    for (int i = 0; i < s->u.seq.n && !first; i++)
      if (s->u.seq.stmts[i] && s->u.seq.stmts[i]->kind != TL_STMT_ALLOC) first = s->u.seq.stmts[i];
    s = first;
  }
  return s && s->kind == TL_STMT_EVAL && s->u.eval.value && s->u.eval.value->kind == TL_EXPR_CALL &&
         s->u.eval.value->u.call.op == sync_op;
}

/* "'name' N bytes at offset O, ..." of every buffer, into sb. */
static void list_buffers(const sp_state *st, tl_strbuf *sb) {
  for (size_t i = 0; i < st->bufs.len; i++) {
    const sbuf *x = &st->bufs.data[i];
    char line[256];
    snprintf(line, sizeof line, "%s'%s' %" PRId64 " bytes at offset %" PRId64, i ? ", " : "", x->buf->name, x->bytes,
             x->offset);
    tl_strbuf_append(sb, line);
  }
}

/* The error of a plan of total bytes over the target's limit, at the
 * kernel, naming every buffer with its size and offset. */
static void report_limit(sp_state *st, const tl_stmt *k, const tl_target *t, int64_t total) {
  tl_strbuf sb = {0};
  list_buffers(st, &sb);
  tl_error(st->d, k->loc, "shared memory of %" PRId64 " bytes exceeds the %d bytes a block may use on %s: %s", total,
           t->max_smem_per_block, t->name, sb.data ? sb.data : "");
  tl_strbuf_free(&sb);
}

/* The plan with lifetimes inside loops (smem_reuse.c) for a kernel that does
 * not fit with whole-statement lifetimes: 1 when it fits (its offsets in
 * st->bufs, *total its size, a remark saying so), 0 when it does not (the
 * smaller of the two plans in st->bufs and *total, for the error), -1 after
 * an error. */
static int plan_in_loops(sp_state *st, tl_stmt *k, const tl_target *t, int64_t *total) {
  size_t n = st->bufs.len;
  tl_smem_buf *bs = calloc(n + 1, sizeof *bs);
  if (!bs) {
    st->oom = true;
    return -1;
  }
  for (size_t i = 0; i < n; i++)
    bs[i] =
        (tl_smem_buf){.buf = st->bufs.data[i].buf, .bytes = st->bufs.data[i].bytes, .align = st->bufs.data[i].align};
  int64_t whole = *total, fine = 0;
  int r = tl_smem_plan_in_loops(st->m, k, bs, (int)n, t->max_smem_per_block, &fine, st->d);
  if (r >= 0 && fine < whole) {
    for (size_t i = 0; i < n; i++) st->bufs.data[i].offset = bs[i].offset;
    *total = fine;
  }
  if (r == 1 && st->d->remarks_on) {
    tl_strbuf sb = {0};
    list_buffers(st, &sb);
    tl_remark(st->d, k->loc,
              "shared memory: %" PRId64
              " bytes with whole-statement lifetimes exceed the %d bytes a block may use on "
              "%s; buffers that die inside loop iterations share bytes: %" PRId64 " bytes: %s",
              whole, t->max_smem_per_block, t->name, fine, sb.data ? sb.data : "");
    tl_strbuf_free(&sb);
  }
  free(bs);
  return r;
}

bool tl_lower_smem_plan(tl_module *m, tl_primfunc *f, const tl_target *target, tl_diag *d) {
  sp_state st = {.v = {.stmt = collect_alloc}, .m = m, .d = d};
  f->smem_bytes = 0;
  tl_stmt *k = tl_ir_find_kernel(f->body);
  if (!k) return true;
  tl_visit_stmt(&st.v, k->u.kernel.body);
  st.too_deep = st.v.too_deep;
  bool ok = !st.oom && !st.too_deep;
  for (size_t i = 0; ok && i < st.bufs.len; i++)
    if (st.bufs.data[i].bytes < 0) {
      tl_error(d, st.bufs.data[i].buf->loc, "shared buffer '%s' needs a static size", st.bufs.data[i].buf->name);
      ok = false;
    }
  /* Top-level positions: the kernel body's statements (a lone statement is one). */
  tl_stmt *body = k->u.kernel.body;
  int n = body->kind == TL_STMT_SEQ ? body->u.seq.n : 1;
  tl_stmt **top = body->kind == TL_STMT_SEQ ? body->u.seq.stmts : &k->u.kernel.body;
  sp_uses u = {.bv = {.buffer = uses_buffer}, .st = &st};
  for (int p = 0; ok && p < n; p++) {
    st.pos = p;
    if (!tl_visit_buffers(&u.bv, top[p])) st.too_deep = true;
  }
  if (ok) {
    st.v = (tl_visitor){.expr = note_intrinsic_args};
    tl_visit_stmt(&st.v, body);
    if (st.v.too_deep) st.too_deep = true;
  }
  if (st.too_deep) {
    tl_error(d, f->loc, "statement nesting exceeds %d levels", TL_LOWER_MAX_DEPTH);
    ok = false;
  }
  /* Unused buffers live at their allocation (they still get space); mbarriers for the whole kernel. */
  for (size_t i = 0; i < st.bufs.len; i++)
    if (st.bufs.data[i].mbarrier) st.bufs.data[i].first = 0, st.bufs.data[i].last = n - 1;
    else if (st.bufs.data[i].first < 0) st.bufs.data[i].first = st.bufs.data[i].last = 0;
  bool *sync_before = ok ? calloc((size_t)n + 1, sizeof(bool)) : NULL;
  if (ok && !sync_before) st.oom = true;
  int64_t total = 0;
  int sync_op = TL_INTRIN_SYNC_THREADS;
  for (size_t done = 0; ok && !st.oom && done < st.bufs.len; done++) {
    /* next: the unplaced buffer used first (allocation order breaks ties) */
    sbuf *x = NULL;
    for (size_t i = 0; i < st.bufs.len; i++) {
      sbuf *c = &st.bufs.data[i];
      if (!c->placed && (!x || c->first < x->first)) x = c;
    }
    int64_t off = 0;
    for (bool moved = true; moved;) {
      moved = false;
      off = (off + x->align - 1) / x->align * x->align;
      for (size_t i = 0; i < st.bufs.len; i++) {
        sbuf *y = &st.bufs.data[i];
        bool live_together = !(y->last < x->first || x->last < y->first);
        if (!y->placed || !live_together) continue;
        if (off < y->offset + y->bytes && y->offset < off + x->bytes) {
          off = y->offset + y->bytes;
          moved = true;
          break;
        }
      }
    }
    x->offset = off;
    x->placed = true;
    if (off + x->bytes > total) total = off + x->bytes;
    /* reusing bytes of a dead buffer: a barrier after its last use */
    for (size_t i = 0; i < st.bufs.len; i++) {
      sbuf *y = &st.bufs.data[i];
      if (y == x || !y->placed || !(y->last < x->first)) continue;
      if (!(off < y->offset + y->bytes && y->offset < off + x->bytes)) continue;
      bool have = false;
      for (int p = y->last + 1; p <= x->first && p < n; p++)
        if (is_sync(top[p], sync_op) || sync_before[p]) have = true;
      if (!have) sync_before[x->first] = true;
    }
  }
  bool in_loops = false; /* planned (and barriers inserted) by smem_reuse.c */
  if (ok && !st.oom && total > target->max_smem_per_block) {
    int r = plan_in_loops(&st, k, target, &total);
    if (r < 0) ok = false;
    in_loops = r == 1;
    if (r == 0) {
      report_limit(&st, k, target, total);
      ok = false;
    }
  }
  if (ok && !st.oom) {
    for (size_t i = 0; i < st.bufs.len; i++) {
      st.bufs.data[i].buf->smem_offset = st.bufs.data[i].offset;
      st.bufs.data[i].buf->smem_planned = true;
    }
    f->smem_bytes = total;
    /* insert the barriers */
    int extra = 0;
    for (int p = 0; p < n && !in_loops; p++) extra += sync_before[p];
    if (extra > 0) {
      tl_stmt **xs = tl_arena_alloc(&m->arena, sizeof(tl_stmt *) * (size_t)(n + extra));
      if (!xs) st.oom = true;
      int j = 0;
      for (int p = 0; xs && p < n; p++) {
        if (sync_before[p]) {
          tl_expr *c = tl_ir_call(m, top[p]->loc, sync_op, 0, NULL);
          tl_stmt *s = c ? tl_ir_stmt(m, top[p]->loc, TL_STMT_EVAL) : NULL;
          if (!s) {
            st.oom = true;
            break;
          }
          s->u.eval.value = c;
          xs[j++] = s;
        }
        xs[j++] = top[p];
      }
      if (!st.oom) {
        tl_stmt *nb = tl_ir_stmt(m, body->loc, TL_STMT_SEQ);
        if (!nb) st.oom = true;
        else {
          nb->u.seq.n = j;
          nb->u.seq.stmts = xs;
          k->u.kernel.body = nb;
        }
      }
    }
  }
  free(sync_before);
  tl_vec_free(&st.bufs);
  if (st.oom) {
    tl_error(d, f->loc, "out of memory while planning shared memory");
    return false;
  }
  return ok;
}
