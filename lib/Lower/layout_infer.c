/* Pass 2 of lib/Lower: layout inference for fragments that no T.gemm touches.
 *
 * Requires: tl_lower_check_supported succeeded (only copy/fill/clear tile ops,
 * constant thread counts).
 * Guarantees (on success): every local.fragment buffer has a static shape and
 * a tl_frag_layout in buffer->layout (lower_internal.h gives the maps).
 *
 * Algorithm.  An "identity use" of a fragment F is an op that touches every
 * element of F at its own coordinates: T.copy / T.fill / T.clear on the whole
 * of F, or a T.Parallel whose extents equal F's shape and that indexes F with
 * exactly its loop variables in order (loop starts 0).  Any other access
 * (other indices, a sub-region, a plain statement outside T.Parallel) is an
 * "other use".  Fragments used together in one identity op (a loop or a
 * fragment→fragment copy) must share one layout, so they are merged with
 * union-find; each class has one shape (checked) and takes the vector width
 *     v = 16 bytes / (largest element size of any buffer its ops touch),
 * halved until v divides the innermost extent and the element count E, and
 * then halved while E < threads * v (fewer elements than one vector per
 * thread; with v = 1 the threads >= E stay idle).  Such fragments get the
 * PLAN layout (threads = the block's threads).  A fragment with only other
 * uses is REPLICATED (each thread holds all of it, as a T.alloc_local would).
 * A fragment with both kinds of use is a layout conflict: the error names the
 * buffer and both ops. */
#include <stdint.h>
#include <stdlib.h>

#include "Lower/lower_internal.h"

typedef struct frag_info {
  tl_buffer *buf;
  int parent;
  int bytes;               /* largest element size seen by its class */
  bool ident, other;
  tl_loc ident_loc, other_loc;
  const char *ident_by, *other_by;
} frag_info;

typedef struct li_state {
  tl_module *m;
  tl_diag *d;
  int errors;
  int64_t threads;
  TL_VEC(frag_info) frags;
  tl_map index;            /* buffer → index + 1 */
  bool oom;
  /* the T.Parallel being scanned */
  const tl_stmt *loop;
  int loop_bytes;
  TL_VEC(int) loop_ident;
} li_state;

static int frag_index(li_state *st, const tl_buffer *b) {
  if (!b || b->scope != TL_SCOPE_FRAGMENT) return -1;
  void *v = tl_map_get(&st->index, b, NULL);
  if (v) return (int)((intptr_t)v - 1);
  /* a fragment without an allocation statement (malformed input): register */
  frag_info fi = {0};
  fi.buf = (tl_buffer *)b;
  fi.parent = (int)st->frags.len;
  fi.bytes = tl_dtype_bytes(b->dtype);
  if (!tl_vec_push(&st->frags, fi) ||
      !tl_map_put(&st->index, b, (void *)(intptr_t)st->frags.len)) {
    st->oom = true;
    return -1;
  }
  return (int)st->frags.len - 1;
}

static int find(li_state *st, int i) {
  while (st->frags.data[i].parent != i) {
    st->frags.data[i].parent = st->frags.data[st->frags.data[i].parent].parent;
    i = st->frags.data[i].parent;
  }
  return i;
}

static void add_bytes(li_state *st, int i, int bytes) {
  int r = find(st, i);
  if (bytes > st->frags.data[r].bytes) st->frags.data[r].bytes = bytes;
}

static void unite(li_state *st, int a, int b) {
  int ra = find(st, a), rb = find(st, b);
  if (ra == rb) return;
  int bytes = st->frags.data[ra].bytes > st->frags.data[rb].bytes ? st->frags.data[ra].bytes
                                                                  : st->frags.data[rb].bytes;
  st->frags.data[rb].parent = ra;
  st->frags.data[ra].bytes = bytes;
}

static void use_ident(li_state *st, int i, tl_loc loc, const char *by) {
  frag_info *fi = &st->frags.data[i];
  if (!fi->ident) {
    fi->ident = true;
    fi->ident_loc = loc;
    fi->ident_by = by;
  }
}

static void use_other(li_state *st, int i, tl_loc loc, const char *by) {
  frag_info *fi = &st->frags.data[i];
  if (!fi->other) {
    fi->other = true;
    fi->other_loc = loc;
    fi->other_by = by;
  }
}

/* Is `indices` exactly the loop's variables over a fragment of the loop's shape? */
static bool identity_access(const tl_stmt *loop, const tl_buffer *b, int n, tl_expr **idx) {
  if (!loop || n != loop->u.loop.nvars || n != b->ndim) return false;
  for (int k = 0; k < n; k++) {
    int64_t ext, dim, mn = 0;
    if (!idx[k] || idx[k]->kind != TL_EXPR_VAR || idx[k]->u.var != loop->u.loop.vars[k]) return false;
    if (!tl_expr_is_const_int(loop->u.loop.extents[k], &ext)) return false;
    if (!tl_expr_is_const_int(b->shape[k], &dim) || dim != ext) return false;
    if (loop->u.loop.mins && loop->u.loop.mins[k] &&
        (!tl_expr_is_const_int(loop->u.loop.mins[k], &mn) || mn != 0))
      return false;
  }
  return true;
}

static void scan_access(li_state *st, const tl_buffer *b, int n, tl_expr **idx, tl_loc at) {
  if (!b) return;
  if (st->loop) {
    int bytes = tl_dtype_bytes(b->dtype);
    if (bytes > st->loop_bytes) st->loop_bytes = bytes;
  }
  int i = frag_index(st, b);
  if (i < 0) return;
  if (st->loop && identity_access(st->loop, b, n, idx)) {
    use_ident(st, i, st->loop->loc, "T.Parallel loop");
    if (!tl_vec_push(&st->loop_ident, i)) st->oom = true;
  } else if (st->loop) {
    use_other(st, i, st->loop->loc, "T.Parallel loop");
  } else {
    use_other(st, i, at, "statement");
  }
}

static void scan_expr(li_state *st, const tl_expr *e, tl_loc at, int depth) {
  if (!e || depth > TL_LOWER_MAX_DEPTH) return;
  switch (e->kind) {
    case TL_EXPR_BINARY:
      scan_expr(st, e->u.bin.a, at, depth + 1);
      scan_expr(st, e->u.bin.b, at, depth + 1);
      return;
    case TL_EXPR_UNARY: scan_expr(st, e->u.un.a, at, depth + 1); return;
    case TL_EXPR_SELECT:
      scan_expr(st, e->u.sel.cond, at, depth + 1);
      scan_expr(st, e->u.sel.t, at, depth + 1);
      scan_expr(st, e->u.sel.f, at, depth + 1);
      return;
    case TL_EXPR_CAST: scan_expr(st, e->u.cast.value, at, depth + 1); return;
    case TL_EXPR_LOAD:
      scan_access(st, e->u.load.buffer, e->u.load.n, e->u.load.indices, at);
      for (int i = 0; i < e->u.load.n; i++) scan_expr(st, e->u.load.indices[i], at, depth + 1);
      return;
    case TL_EXPR_CALL:
      for (int i = 0; i < e->u.call.n; i++) scan_expr(st, e->u.call.args[i], at, depth + 1);
      return;
    case TL_EXPR_BUFFER: {
      int i = frag_index(st, e->u.buffer);
      if (i >= 0) use_other(st, i, at, "statement");
      return;
    }
    case TL_EXPR_RAMP: scan_expr(st, e->u.ramp.base, at, depth + 1); return;
    case TL_EXPR_BROADCAST: scan_expr(st, e->u.bcast.value, at, depth + 1); return;
    default: return;
  }
}

static bool whole_region(const tl_region *r) {
  const tl_buffer *b = r->buffer;
  if (r->ndim == 0) return true;
  if (r->ndim != b->ndim) return false;
  for (int k = 0; k < r->ndim; k++) {
    int64_t mn, ext, dim;
    if (!tl_expr_is_const_int(r->min[k], &mn) || mn != 0) return false;
    if (!tl_expr_is_const_int(r->extent[k], &ext) || !tl_expr_is_const_int(b->shape[k], &dim) ||
        ext != dim)
      return false;
  }
  return true;
}

static bool same_shape(const tl_buffer *a, const tl_buffer *b) {
  if (a->ndim != b->ndim) return false;
  for (int k = 0; k < a->ndim; k++) {
    int64_t x, y;
    if (!tl_expr_is_const_int(a->shape[k], &x) || !tl_expr_is_const_int(b->shape[k], &y) || x != y)
      return false;
  }
  return true;
}

static void scan_tile(li_state *st, const tl_stmt *s) {
  int op = s->u.tile.op;
  const char *by = op == TL_TILE_COPY ? "T.copy" : op == TL_TILE_FILL ? "T.fill" : "T.clear";
  int bytes = 1, first = -1;
  for (int a = 0; a < s->u.tile.nargs; a++) {
    const tl_operand *o = &s->u.tile.args[a];
    if (o->kind == TL_OPND_EXPR) {
      scan_expr(st, o->expr, s->loc, 0);
      continue;
    }
    const tl_region *r = &o->region;
    if (!r->buffer) continue;
    int bb = tl_dtype_bytes(r->buffer->dtype);
    if (bb > bytes) bytes = bb;
    for (int k = 0; k < r->ndim; k++) {
      scan_expr(st, r->min[k], s->loc, 0);
      scan_expr(st, r->extent[k], s->loc, 0);
    }
    int i = frag_index(st, r->buffer);
    if (i < 0) continue;
    if (!whole_region(r)) {
      tl_error(st->d, o->loc.file ? o->loc : s->loc,
               "%s of a sub-region of fragment '%s' is not lowered yet", by, r->buffer->name);
      st->errors++;
      continue;
    }
    use_ident(st, i, s->loc, by);
    if (first >= 0) {
      if (!same_shape(st->frags.data[first].buf, r->buffer)) {
        tl_error(st->d, s->loc, "T.copy between fragments '%s' and '%s' of different shapes is not lowered yet",
                 st->frags.data[first].buf->name, r->buffer->name);
        st->errors++;
        continue;
      }
      unite(st, first, i);
    } else {
      first = i;
    }
  }
  for (int a = 0; a < s->u.tile.nargs; a++) {
    const tl_operand *o = &s->u.tile.args[a];
    if (o->kind != TL_OPND_REGION) continue;
    int i = frag_index(st, o->region.buffer);
    if (i >= 0) add_bytes(st, i, bytes);
  }
}

static void scan_stmt(li_state *st, const tl_stmt *s, int depth) {
  if (!s || depth > TL_LOWER_MAX_DEPTH) return;
  switch (s->kind) {
    case TL_STMT_SEQ:
      for (int i = 0; i < s->u.seq.n; i++) scan_stmt(st, s->u.seq.stmts[i], depth + 1);
      return;
    case TL_STMT_FOR: {
      for (int k = 0; k < s->u.loop.nvars; k++) {
        if (s->u.loop.mins) scan_expr(st, s->u.loop.mins[k], s->loc, 0);
        scan_expr(st, s->u.loop.extents[k], s->loc, 0);
      }
      if (s->u.loop.kind != TL_LOOP_PARALLEL || st->loop) {
        scan_stmt(st, s->u.loop.body, depth + 1);
        return;
      }
      st->loop = s;
      st->loop_bytes = 1;
      st->loop_ident.len = 0;
      scan_stmt(st, s->u.loop.body, depth + 1);
      for (size_t k = 0; k < st->loop_ident.len; k++) {
        add_bytes(st, st->loop_ident.data[k], st->loop_bytes);
        if (k > 0) unite(st, st->loop_ident.data[0], st->loop_ident.data[k]);
      }
      st->loop = NULL;
      return;
    }
    case TL_STMT_KERNEL: {
      int64_t t = 1;
      tl_expr_is_const_int(s->u.kernel.threads, &t);
      st->threads = t;
      scan_stmt(st, s->u.kernel.body, depth + 1);
      return;
    }
    case TL_STMT_ALLOC: {
      tl_buffer *b = s->u.alloc.buffer;
      if (b && b->scope == TL_SCOPE_FRAGMENT) {
        b->layout = NULL;
        frag_index(st, b);
        for (int k = 0; k < b->ndim; k++)
          if (!tl_expr_is_const_int(b->shape[k], NULL)) {
            tl_error(st->d, s->loc, "fragment '%s' with a non-constant shape is not lowered yet",
                     b->name);
            st->errors++;
            break;
          }
      }
      return;
    }
    case TL_STMT_STORE:
      scan_access(st, s->u.store.buffer, s->u.store.n, s->u.store.indices, s->loc);
      for (int i = 0; i < s->u.store.n; i++) scan_expr(st, s->u.store.indices[i], s->loc, 0);
      scan_expr(st, s->u.store.value, s->loc, 0);
      return;
    case TL_STMT_IF:
      scan_expr(st, s->u.ifs.cond, s->loc, 0);
      scan_stmt(st, s->u.ifs.then_s, depth + 1);
      scan_stmt(st, s->u.ifs.else_s, depth + 1);
      return;
    case TL_STMT_LET: scan_expr(st, s->u.let.value, s->loc, 0); return;
    case TL_STMT_EVAL: scan_expr(st, s->u.eval.value, s->loc, 0); return;
    case TL_STMT_TILE:
      if (s->u.tile.op == TL_TILE_COPY || s->u.tile.op == TL_TILE_FILL || s->u.tile.op == TL_TILE_CLEAR)
        scan_tile(st, s);
      return;
  }
}

static bool make_layout(li_state *st, frag_info *fi, int64_t threads, int bytes) {
  tl_buffer *b = fi->buf;
  tl_frag_layout *L = tl_arena_alloc(&st->m->arena, sizeof *L);
  if (!L) return false;
  L->ndim = b->ndim;
  L->shape = tl_arena_alloc(&st->m->arena, sizeof(int64_t) * (size_t)(b->ndim > 0 ? b->ndim : 1));
  if (!L->shape) return false;
  int64_t total = 1;
  for (int k = 0; k < b->ndim; k++) {
    int64_t v = 0;
    tl_expr_is_const_int(b->shape[k], &v);
    if (v < 1 || __builtin_mul_overflow(total, v, &total) || total > (INT64_C(1) << 24)) {
      tl_error(st->d, b->loc, "fragment '%s' is too large or empty to lower", b->name);
      st->errors++;
      return true;
    }
    L->shape[k] = v;
  }
  L->total = total;
  if (fi->ident) {
    int64_t inner = b->ndim > 0 ? L->shape[b->ndim - 1] : 1;
    int64_t v = 16 / (bytes > 0 && bytes <= 16 ? bytes : 16);
    if (v < 1) v = 1;
    while (v > 1 && (inner % v != 0 || total % v != 0)) v /= 2;
    while (v > 1 && total < threads * v) v /= 2;
    L->kind = TL_FRAG_PLAN;
    L->threads = threads;
    L->vec = v;
    L->nvec = (total + threads * v - 1) / (threads * v);
    L->nregs = L->nvec * v;
    L->set_at = fi->ident_loc;
    L->set_by = fi->ident_by;
  } else {
    L->kind = TL_FRAG_REPLICATED;
    L->threads = 1;
    L->vec = 1;
    L->nvec = total;
    L->nregs = total;
    L->set_at = fi->other ? fi->other_loc : b->loc;
    L->set_by = fi->other ? fi->other_by : "allocation";
  }
  b->layout = L;
  return true;
}

bool tl_lower_infer_layouts(tl_module *m, tl_primfunc *f, tl_diag *d) {
  li_state st = {0};
  st.m = m;
  st.d = d;
  st.threads = 1;
  tl_map_init(&st.index);
  scan_stmt(&st, f->body, 0);
  bool ok = !st.oom && st.errors == 0;
  for (size_t i = 0; ok && i < st.frags.len; i++) {
    frag_info *fi = &st.frags.data[i];
    if (fi->ident && fi->other) {
      tl_error(d, fi->other_loc,
               "layout conflict for fragment '%s': this %s indexes it differently from the %s "
               "that distributes it over the threads",
               fi->buf->name, fi->other_by, fi->ident_by);
      tl_note(d, fi->ident_loc, "the %s that sets the layout of '%s' is here", fi->ident_by,
              fi->buf->name);
      st.errors++;
      continue;
    }
    int r = find(&st, (int)i);
    if (!make_layout(&st, fi, st.threads, st.frags.data[r].bytes)) st.oom = true;
  }
  if (st.oom) tl_error(d, f->loc, "out of memory in layout inference");
  ok = !st.oom && st.errors == 0;
  tl_vec_free(&st.frags);
  tl_vec_free(&st.loop_ident);
  tl_map_free(&st.index);
  return ok;
}
