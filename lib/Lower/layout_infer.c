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
 * buffer and both ops.
 *
 * T.gemm (../shared/LAYOUT.md §2, §3, §5).  The accumulator C of a T.gemm is
 * an identity use whose class takes the MMA_C layout (the mma.sync m16n8 C
 * layout, warps split by the op's policy through tl_gemm_warp_partition)
 * instead of PLAN; every fragment joined to it by T.copy / T.Parallel gets the
 * same layout.  Two T.gemm in one class with different partitions, or a
 * member of another shape, is a conflict naming the buffer and both ops.  A
 * tile the partition cannot cover (block_M % (16 m), block_N % (8 n)) or with
 * K % 16 != 0 is an error stating the rule and the numbers.  Shared A/B
 * operands get the XOR swizzle chosen by their contiguous width W and element
 * size (W % 8E: 128 B, W % 4E: 64 B, W % 2E: 32 B, E = 16 / element bytes;
 * rows % 8 required; else padding of E when a row is a multiple of 32 bytes)
 * via tl_smem_layout_set; a buffer used by several gemms keeps the first. */
#include <stdint.h>
#include <stdlib.h>

#include "Lower/lower_internal.h"
#include "Lower/smem_layout.h"

typedef struct frag_info {
  tl_buffer *buf;
  int parent;
  int bytes;               /* largest element size seen by its class */
  bool ident, other;
  tl_loc ident_loc, other_loc;
  const char *ident_by, *other_by;
  /* T.gemm accumulator use (the first one) */
  bool gemm;
  tl_loc gemm_loc;
  int64_t gemm_m, gemm_n;
  /* class root only: the gemm that decides the class's layout */
  int cls_gemm;            /* frag index + 1 of the member holding it, 0: none */
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
  tl_map swizzled;         /* shared buffers given a gemm swizzle by this pass */
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

/* Constant extents of a region (the buffer's shape when it has none),
 * leading unit extents stripped down to 2; returns the count, -1 when not
 * constant. */
static int region_dims(const tl_region *r, int64_t out[8]) {
  const tl_buffer *b = r->buffer;
  int n = r->ndim ? r->ndim : b->ndim;
  if (n < 1 || n > 8) return -1;
  for (int k = 0; k < n; k++)
    if (!tl_expr_is_const_int(r->ndim ? r->extent[k] : b->shape[k], &out[k])) return -1;
  int skip = 0;
  while (n - skip > 2 && out[skip] == 1) skip++;
  for (int k = 0; k + skip < n; k++) out[k] = out[k + skip];
  return n - skip;
}

/* The gemm-operand swizzle of shared buffer b (LAYOUT.md §3). */
static void swizzle_operand(li_state *st, tl_buffer *b) {
  if (tl_map_get(&st->swizzled, b, NULL)) return;
  int64_t dims[8];
  if (b->ndim < 1 || b->ndim > 8) return;
  for (int k = 0; k < b->ndim; k++)
    if (!tl_expr_is_const_int(b->shape[k], &dims[k])) return; /* left row-major */
  int64_t W = dims[b->ndim - 1], H = b->ndim >= 2 ? dims[b->ndim - 2] : 1;
  int bytes = tl_dtype_bytes(b->dtype);
  if (bytes < 1 || bytes > 16) return;
  int64_t E = 16 / bytes;
  int sw = 0, pad = 0;
  if (H % 8 == 0 && W % (8 * E) == 0) sw = 128;
  else if (H % 8 == 0 && W % (4 * E) == 0) sw = 64;
  else if (H % 8 == 0 && W % (2 * E) == 0) sw = 32;
  else if ((W * bytes) % 32 == 0) pad = (int)E;
  if (!tl_smem_layout_set(st->m, b, sw, pad) || !tl_map_put(&st->swizzled, b, b)) st->oom = true;
}

static void gemm_error(li_state *st, tl_loc loc, const char *msg) {
  tl_error(st->d, loc, "%s", msg ? msg : "out of memory");
  st->errors++;
}

static void scan_gemm(li_state *st, const tl_stmt *s) {
  if (s->u.tile.nargs < 3) return;
  static const char *const opn[3] = {"A", "B", "C"};
  int64_t ext[3][8];
  int nd[3];
  for (int k = 0; k < 3; k++) {
    const tl_operand *o = &s->u.tile.args[k];
    if (o->kind != TL_OPND_REGION || !o->region.buffer) return;
    for (int d = 0; d < o->region.ndim; d++) {
      scan_expr(st, o->region.min[d], s->loc, 0);
      scan_expr(st, o->region.extent[d], s->loc, 0);
    }
    nd[k] = region_dims(&o->region, ext[k]);
  }
  bool bad = false;
  for (int k = 0; k < 2; k++) {
    tl_buffer *b = s->u.tile.args[k].region.buffer;
    if (b->scope == TL_SCOPE_FRAGMENT) {
      tl_error(st->d, s->loc,
               "T.gemm is not lowered yet with %s in a fragment ('%s'); stage it through T.alloc_shared",
               opn[k], b->name);
      st->errors++;
      bad = true;
    } else if (b->scope == TL_SCOPE_SHARED || b->scope == TL_SCOPE_SHARED_DYN) {
      swizzle_operand(st, b);
    }
  }
  tl_buffer *C = s->u.tile.args[2].region.buffer;
  int i = frag_index(st, C);
  if (i < 0 || bad) return;
  if (!whole_region(&s->u.tile.args[2].region) || nd[2] != 2 || C->ndim != 2) {
    tl_error(st->d, s->loc, "T.gemm into a sub-region of fragment '%s' is not lowered yet", C->name);
    st->errors++;
    return;
  }
  int64_t tA = 0;
  if (s->u.tile.attrs && s->u.tile.attrs[0]) tl_expr_is_const_int(s->u.tile.attrs[0], &tA);
  int64_t policy = TL_POLICY_SQUARE;
  if (s->u.tile.attrs && s->u.tile.attrs[2]) tl_expr_is_const_int(s->u.tile.attrs[2], &policy);
  int64_t BM = ext[2][0], BN = ext[2][1];
  int64_t K = nd[0] == 2 ? (tA ? ext[0][0] : ext[0][1]) : -1;
  char *msg = NULL;
  if (st->threads % 32 != 0) {
    msg = tl_arena_printf(&st->m->arena, "T.gemm needs whole warps: the block has %lld threads, not a "
                          "multiple of 32", (long long)st->threads);
  } else if (BM % 16 != 0 || BN % 8 != 0) {
    msg = tl_arena_printf(&st->m->arena, "T.gemm cannot cover the %lldx%lld accumulator tile with mma.sync "
                          "m16n8k16: the rule is block_M %% 16 == 0 and block_N %% 8 == 0 (block_M %% 16 = %lld, "
                          "block_N %% 8 = %lld)", (long long)BM, (long long)BN, (long long)(BM % 16),
                          (long long)(BN % 8));
  } else if (K < 0 || K % 16 != 0) {
    msg = tl_arena_printf(&st->m->arena, "T.gemm cannot step over K = %lld with mma.sync m16n8k16: the rule "
                          "is K %% 16 == 0 (K %% 16 = %lld)", (long long)K, (long long)(K < 0 ? -1 : K % 16));
  }
  if (msg) {
    gemm_error(st, s->loc, msg);
    return;
  }
  int64_t wm = 0, wn = 0;
  const char *pmsg = NULL;
  if (!tl_gemm_warp_partition(st->m, (int)policy, BM, BN, st->threads / 32, &wm, &wn, &pmsg)) {
    gemm_error(st, s->loc, pmsg);
    return;
  }
  frag_info *fi = &st->frags.data[i];
  if (fi->gemm && (fi->gemm_m != wm || fi->gemm_n != wn)) {
    tl_error(st->d, s->loc,
             "layout conflict for fragment '%s': this T.gemm splits it over %lldx%lld warps, but the T.gemm "
             "that set its layout splits it over %lldx%lld warps",
             C->name, (long long)wm, (long long)wn, (long long)fi->gemm_m, (long long)fi->gemm_n);
    tl_note(st->d, fi->gemm_loc, "the T.gemm that sets the layout of '%s' is here", C->name);
    st->errors++;
    return;
  }
  if (!fi->gemm) {
    fi->gemm = true;
    fi->gemm_loc = s->loc;
    fi->gemm_m = wm;
    fi->gemm_n = wn;
    /* the gemm is the op that distributes C: name it in conflicts */
    fi->ident = true;
    fi->ident_loc = s->loc;
    fi->ident_by = "T.gemm";
  }
  add_bytes(st, i, tl_dtype_bytes(C->dtype));
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
      if (b && (b->scope == TL_SCOPE_SHARED || b->scope == TL_SCOPE_SHARED_DYN) &&
          !tl_map_get(&st->swizzled, b, NULL))
        b->layout = NULL; /* recomputed: a gemm swizzle below, else row-major on first use */
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
      else if (s->u.tile.op == TL_TILE_GEMM)
        scan_gemm(st, s);
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
  int r = find(st, (int)(fi - st->frags.data));
  int g = st->frags.data[r].cls_gemm - 1;
  if (g >= 0) {
    frag_info *gi = &st->frags.data[g];
    if (b->ndim != 2 || !same_shape(b, gi->buf)) {
      tl_error(st->d, fi->ident_loc,
               "layout conflict for fragment '%s': this %s gives it the layout of the T.gemm accumulator '%s', "
               "whose shape differs", b->name, fi->ident_by, gi->buf->name);
      tl_note(st->d, gi->gemm_loc, "the T.gemm that sets the layout of '%s' is here", gi->buf->name);
      st->errors++;
      return true;
    }
    tl_mma_c_layout_init(L, L->shape[0], L->shape[1], threads, gi->gemm_m, gi->gemm_n);
    L->set_at = gi->gemm_loc;
    L->set_by = "T.gemm";
    b->layout = L;
    return true;
  }
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
  tl_map_init(&st.swizzled);
  scan_stmt(&st, f->body, 0);
  bool ok = !st.oom && st.errors == 0;
  for (size_t i = 0; ok && i < st.frags.len; i++) {
    frag_info *fi = &st.frags.data[i];
    if (!fi->gemm) continue;
    frag_info *root = &st.frags.data[find(&st, (int)i)];
    if (!root->cls_gemm) {
      root->cls_gemm = (int)i + 1;
      continue;
    }
    frag_info *other = &st.frags.data[root->cls_gemm - 1];
    if (other->gemm_m != fi->gemm_m || other->gemm_n != fi->gemm_n || !same_shape(other->buf, fi->buf)) {
      tl_error(d, fi->gemm_loc,
               "layout conflict for fragment '%s': this T.gemm splits it over %lldx%lld warps, but it shares "
               "its layout with '%s', which the T.gemm here splits over %lldx%lld warps",
               fi->buf->name, (long long)fi->gemm_m, (long long)fi->gemm_n, other->buf->name,
               (long long)other->gemm_m, (long long)other->gemm_n);
      tl_note(d, other->gemm_loc, "the T.gemm that sets the layout of '%s' is here", other->buf->name);
      st.errors++;
    }
  }
  ok = !st.oom && st.errors == 0;
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
  tl_map_free(&st.swizzled);
  return ok;
}
