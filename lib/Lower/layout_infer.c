/* Pass "layout-inference" of lib/Lower (tile IR → tile IR; pipeline.c's
 * step 6): the thread/register layout of every fragment, and the swizzle of
 * the shared operands of T.gemm.
 *
 * Requires: tile IR that check-supported accepted (constant thread counts;
 * copies, fills, T.gemm, T.reduce_*, T.Parallel loops, T.atomic_add already
 * turned into T.Parallel loops by the atomic pass), after pipelining (the
 * staged shapes) and versioning (both versions of a loop are uses alike).
 * Guarantees (on success): no statement changes but the short T.Parallel
 * loops parallel_extend.c extends; every local.fragment buffer
 * allocated in the function has a static shape and a tl_frag_layout in
 * buffer->layout (PLAN, REPLICATED, MMA_C, ROWS, REDUCER, COLS or STACKED;
 * lower_internal.h gives the maps), consistent with every op that touches
 * it, and every shared A/B operand of a T.gemm has its tl_smem_layout.  A
 * fragment that two ops need laid out differently is an error naming the
 * buffer and both ops (nothing is attached then).
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
 * buffer and both ops; except that one whose identity uses are only T.copy,
 * T.fill or T.clear of it alone (no other fragment, gemm or row statistic in
 * its class) is REPLICATED: each thread copies all of it (replicate()).
 *
 * T.gemm (docs/layouts.md).  The accumulator C of a T.gemm is
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
 * via tl_smem_layout_set; a buffer used by several gemms keeps the first.
 *
 * The rs form (A in a fragment; docs/layouts.md "P·V reuse"): the A
 * fragment is seeded like an accumulator of a BM x K tile split over
 * (warp_m, 1) warps, warp_m being the gemm's own, which requires the gemm's
 * partition to split only M (warp_n == 1, else an error stating the rule);
 * the mma C layout of that partition is exactly mma.sync's A register map
 * (lower_frag.c checks it element by element).  A T.copy from an f32
 * accumulator joins the classes, so the cast copy is per thread; a class
 * whose accumulator is split otherwise is a conflict naming both gemms.
 * Fragment → fragment T.copy joins classes after the scan (link_copies),
 * except between two accumulator classes of different partitions, which keep
 * their layouts (the copy is lowered through shared memory).
 *
 * T.reduce_* (docs/layouts.md "Row statistics").  Both operands are identity
 * uses of their fragments but do not share a layout.  A fragment source
 * that no gemm feeds, and the partition of a 2-D T.Parallel loop that reads
 * a row statistic D[i] (D 1-D, indexed by the loop's first variable: a "row
 * link"), get the ROWS layout (a group of whole warps, or of a power of two
 * of lanes for short rows, per row; lower_internal.h), with one group count
 * for all classes that share statistics.  The class of a reduce destination
 * (or of a linked statistic) gets the REDUCER layout of the reduce's source
 * (an mma C or ROWS fragment, or a virtual ROWS partition of a shared
 * source), else of the linked loop's partition.  Another reduce into the
 * class with other owners, or a loop whose partition puts row i on threads
 * that do not hold D[i] (e.g. a Square accumulator beside FullRow
 * statistics), is a conflict naming the buffer and both ops.  A 1-D
 * fragment written by a dim-0 reduce of a 2-D fragment and read as D[j] by
 * a loop over (i, j) is a column statistic instead: COLS over the source's
 * ROWS layout (layout_cols.c, docs/layouts.md "Column
 * statistics"). */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "IR/visit.h"
#include "Lower/frag_layout.h"
#include "Lower/lower_internal.h"
#include "Lower/smem_layout.h"

#include "Lower/layout_infer.h"

static int frag_index(li_state *st, const tl_buffer *b) {
  if (!b || b->scope != TL_SCOPE_FRAGMENT) return -1;
  void *v = tl_map_get(&st->index, b, NULL);
  if (v) { /* a use: the threads of its region (ws_scope.c keeps every use of a fragment in one region) */
    st->frags.data[(intptr_t)v - 1].threads = st->threads;
    return (int)((intptr_t)v - 1);
  }
  /* a fragment without an allocation statement (malformed input): register */
  frag_info fi = {0};
  fi.buf = (tl_buffer *)b;
  fi.parent = (int)st->frags.len;
  fi.bytes = tl_dtype_bytes(b->dtype);
  fi.threads = st->threads;
  if (!tl_vec_push(&st->frags, fi) || !tl_map_put(&st->index, b, (void *)(intptr_t)st->frags.len)) {
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
  int bytes = st->frags.data[ra].bytes > st->frags.data[rb].bytes ? st->frags.data[ra].bytes : st->frags.data[rb].bytes;
  st->frags.data[rb].parent = ra;
  st->frags.data[ra].bytes = bytes;
}

/* Records the first use of a kind. */
static void first_use(use_site *u, tl_loc loc, const char *by) {
  if (!u->seen) *u = (use_site){true, loc, by};
}

static void use_ident(li_state *st, int i, tl_loc loc, const char *by) {
  first_use(&st->frags.data[i].ident, loc, by);
  st->frags.data[i].strong = true;
}

static void use_other(li_state *st, int i, tl_loc loc, const char *by) { first_use(&st->frags.data[i].other, loc, by); }

int tl_li_find(li_state *st, int i) { return find(st, i); }
void tl_li_use_other(li_state *st, int i, tl_loc loc, const char *by) { use_other(st, i, loc, by); }

/* Is the access D[x] of a 1-D fragment in a loop over (i, j, ...) with x
 * its variable v over D's extent?  v = 0: a row statistic read beside its
 * rows; v = 1 of a 2-D loop: a column statistic. */
static bool stat_access(const tl_stmt *loop, const tl_buffer *b, int n, tl_expr **idx, int v) {
  if (!loop || loop->u.loop.nvars < 2 || n != 1 || b->ndim != 1 || v >= loop->u.loop.nvars) return false;
  int64_t ext, dim, mn = 0;
  if (!idx[0] || idx[0]->kind != TL_EXPR_VAR || idx[0]->u.var != loop->u.loop.vars[v]) return false;
  if (!tl_expr_is_const_int(loop->u.loop.extents[v], &ext)) return false;
  if (!tl_expr_is_const_int(b->shape[0], &dim) || dim != ext) return false;
  if (loop->u.loop.mins && loop->u.loop.mins[v] && (!tl_expr_is_const_int(loop->u.loop.mins[v], &mn) || mn != 0))
    return false;
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
  if (st->loop && stat_access(st->loop, b, n, idx, 0)) {
    row_link lk = {i, -1, at, 0}; /* a store: checked once the loop's partition has its layout */
    if (!tl_vec_push(&st->loop_rows, i) || (st->storing && !tl_vec_push(&st->loop_rstores, lk))) st->oom = true;
    return;
  }
  if (st->loop && !st->storing && st->loop->u.loop.nvars == 2 && stat_access(st->loop, b, n, idx, 1)) {
    /* a read: the loop's rows would each store their own D[j] (a store stays an other use) */
    if (!tl_vec_push(&st->loop_cols, i)) st->oom = true; /* decide_cols: a column statistic, else an other use */
    return;
  }
  int sd = -1;
  if (st->loop && (tl_lo_stacked_access(st->loop, b, n, idx) || tl_lo_split_access(st->loop, b, n, idx, &sd, NULL))) {
    if (!tl_vec_push(&st->loop_stack, i) || !tl_vec_push(&st->loop_split, sd + 1)) st->oom = true;
    return;
  }
  if (st->loop && tl_lo_identity_access(st->loop, b, n, idx)) {
    use_ident(st, i, st->loop->loc, "T.Parallel loop");
    if (!tl_vec_push(&st->loop_ident, i)) st->oom = true;
  } else if (st->loop) {
    use_other(st, i, st->loop->loc, "T.Parallel loop");
  } else {
    use_other(st, i, at, "statement");
  }
}

/* The fragment uses in an expression tree, gathered by a tl_visitor (first
 * member: the callback casts back). */
typedef struct scan_visit {
  tl_visitor v;
  li_state *st;
  tl_loc at;
} scan_visit;

static void scan_node(tl_visitor *v, const tl_expr *e) {
  scan_visit *u = (scan_visit *)v;
  if (e->kind == TL_EXPR_LOAD) {
    scan_access(u->st, e->u.load.buffer, e->u.load.n, e->u.load.indices, u->at);
  } else if (e->kind == TL_EXPR_BUFFER) {
    int i = frag_index(u->st, e->u.buffer);
    if (i >= 0) use_other(u->st, i, u->at, "statement");
  }
}

static void scan_expr(li_state *st, const tl_expr *e, tl_loc at) {
  scan_visit u = {.v = {.expr = scan_node}, .st = st, .at = at};
  tl_visit_expr(&u.v, e);
}

static bool same_shape(const tl_buffer *a, const tl_buffer *b) {
  if (a->ndim != b->ndim) return false;
  for (int k = 0; k < a->ndim; k++) {
    int64_t x, y;
    if (!tl_expr_is_const_int(a->shape[k], &x) || !tl_expr_is_const_int(b->shape[k], &y) || x != y) return false;
  }
  return true;
}

/* Is operand o of T.copy s a sub-region of a fragment whose other operand
 * is global or shared memory?  Such a copy reads or writes each element of
 * the region on a thread that holds it, whatever the layout (lower_tile.c
 * walks the fragment's layout and skips the elements outside the region), so
 * it leaves the layout to the other uses. */
static bool sub_region_to_memory(const tl_operand *o, const tl_stmt *s) {
  if (s->u.tile.op != TL_TILE_COPY || s->u.tile.nargs < 2 || tl_lo_whole_region(&o->region)) return false;
  const tl_buffer *b = o->region.buffer;
  if (!b || o->region.ndim != b->ndim) return false;
  const tl_operand *other = o == &s->u.tile.args[0] ? &s->u.tile.args[1] : &s->u.tile.args[0];
  const tl_buffer *ob = other->kind == TL_OPND_REGION ? other->region.buffer : NULL;
  return ob && (ob->scope == TL_SCOPE_GLOBAL || ob->scope == TL_SCOPE_SHARED || ob->scope == TL_SCOPE_SHARED_DYN);
}

/* A tile op `by` (statement s) on a sub-region of a fragment (operand o):
 * reported, true; false for a whole fragment. */
static bool sub_region_refused(li_state *st, const tl_operand *o, const tl_stmt *s, const char *by) {
  if (tl_lo_whole_region(&o->region)) return false;
  tl_error(st->d, o->loc.file ? o->loc : s->loc, "%s of a sub-region of fragment '%s' is not lowered yet", by,
           o->region.buffer->name);
  st->errors++;
  return true;
}

/* T.copy between a sub-region of fragment F and a whole fragment D
 * (T.copy(lse[k, :], lse_k)): a stacked access of F on the threads of D
 * (resolve_stacks checks it is one row of F over D's layout); D's use is
 * an identity use.  False when s is not such a copy. */
static bool scan_stack_copy(li_state *st, const tl_stmt *s) {
  if (s->u.tile.op != TL_TILE_COPY || s->u.tile.nargs < 2) return false;
  const tl_operand *o[2] = {&s->u.tile.args[0], &s->u.tile.args[1]};
  int fi[2];
  for (int a = 0; a < 2; a++) {
    if (o[a]->kind != TL_OPND_REGION || !o[a]->region.buffer) return false;
    if ((fi[a] = frag_index(st, o[a]->region.buffer)) < 0) return false;
  }
  bool w0 = tl_lo_whole_region(&o[0]->region), w1 = tl_lo_whole_region(&o[1]->region);
  if (w0 == w1) return false;
  int sub = w0 ? 1 : 0, whole = 1 - sub;
  if (o[sub]->region.ndim != o[sub]->region.buffer->ndim) return false;
  for (int k = 0; k < o[sub]->region.ndim; k++) {
    scan_expr(st, o[sub]->region.min[k], s->loc);
    scan_expr(st, o[sub]->region.extent[k], s->loc);
  }
  frag_info *d = &st->frags.data[fi[whole]];
  bool was = d->strong;
  use_ident(st, fi[whole], s->loc, "T.copy");
  d->strong = was;
  add_bytes(st, fi[whole], tl_dtype_bytes(o[sub]->region.buffer->dtype));
  row_link lk = {fi[sub], fi[whole], s->loc, 0};
  if (!tl_vec_push(&st->stacks, lk)) st->oom = true;
  return true;
}

static void scan_tile(li_state *st, const tl_stmt *s) {
  int op = s->u.tile.op;
  if (scan_stack_copy(st, s)) return;
  const char *by = op == TL_TILE_COPY ? "T.copy" : op == TL_TILE_FILL ? "T.fill" : "T.clear";
  int bytes = 1, first = -1;
  for (int a = 0; a < s->u.tile.nargs; a++) {
    const tl_operand *o = &s->u.tile.args[a];
    if (o->kind == TL_OPND_EXPR) {
      scan_expr(st, o->expr, s->loc);
      continue;
    }
    const tl_region *r = &o->region;
    if (!r->buffer) continue;
    int bb = tl_dtype_bytes(r->buffer->dtype);
    if (bb > bytes) bytes = bb;
    for (int k = 0; k < r->ndim; k++) {
      scan_expr(st, r->min[k], s->loc);
      scan_expr(st, r->extent[k], s->loc);
    }
    int i = frag_index(st, r->buffer);
    if (i < 0) continue;
    if (sub_region_to_memory(o, s)) continue;
    if (sub_region_refused(st, o, s, by)) continue;
    bool was = st->frags.data[i].strong;
    use_ident(st, i, s->loc, by);
    st->frags.data[i].strong = was; /* alone: any layout serves (below) */
    if (first >= 0) {
      st->frags.data[i].strong = st->frags.data[first].strong = true;
      if (!same_shape(st->frags.data[first].buf, r->buffer)) {
        tl_error(st->d, s->loc, "T.copy between fragments '%s' and '%s' of different shapes is not lowered yet",
                 st->frags.data[first].buf->name, r->buffer->name);
        st->errors++;
        continue;
      }
      if (op == TL_TILE_COPY) { /* link_copies, once every gemm is known */
        if (!tl_vec_push(&st->copy_links, first) || !tl_vec_push(&st->copy_links, i)) st->oom = true;
      } else {
        unite(st, first, i);
      }
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

/* The gemm-operand swizzle of shared buffer b (docs/layouts.md "Shared-memory swizzles"). */
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

/* T.annotate_layout({buf: layout}): a layout of a shared or fragment buffer
 * moves elements between banks or threads, never changes a value, so it is a
 * hint. A TileLang swizzle constructor on a shared buffer that no T.gemm or
 * TMA image has claimed gets the gemm-operand swizzle; any other layout
 * leaves the choice to this pass (docs/layouts.md "Annotated layouts"). */
static bool swizzle_name(const char *n) {
  static const char *const names[] = {"make_swizzled_layout", "make_full_bank_swizzled_layout",
                                      "make_half_bank_swizzled_layout", "make_quarter_bank_swizzled_layout",
                                      "make_mma_swizzle_layout"};
  for (size_t i = 0; n && i < sizeof names / sizeof names[0]; i++)
    if (!strcmp(n, names[i])) return true;
  return false;
}

static void scan_annotate(li_state *st, const tl_stmt *s) {
  for (int i = 0; i + 1 < s->u.tile.nargs; i += 2) {
    tl_buffer *b = s->u.tile.args[i].region.buffer;
    const tl_expr *l = s->u.tile.args[i + 1].expr;
    if (!b || (b->scope != TL_SCOPE_SHARED_DYN && b->scope != TL_SCOPE_SHARED) || b->layout || !l ||
        l->kind != TL_EXPR_STRING)
      continue;
    if (swizzle_name(l->u.str)) swizzle_operand(st, b);
  }
}

static void gemm_error(li_state *st, tl_loc loc, const char *msg) {
  tl_error(st->d, loc, "%s", msg ? msg : "out of memory");
  st->errors++;
}

static const char *policy_name(int policy) {
  return policy == TL_POLICY_FULL_ROW ? "FullRow" : policy == TL_POLICY_FULL_COL ? "FullCol" : "Square";
}

/* The A operand of a T.gemm in a fragment (the "rs" form; docs/layouts.md "P·V
 * reuse").  mma.sync reads A from registers a0..a3 = (g, 2t|2t+1),
 * (g+8, ...), (g, 2t+8|2t+9), (g+8, ...) of each 16x16 slice (docs/layouts.md),
 * which is exactly the m16n8 accumulator layout of the two n8 tiles 2kk and
 * 2kk+1 of the slice.  So the BM x K fragment must hold the MMA_C layout of
 * a BM x K tile whose warps split only M, into the same warp_m warps as this
 * gemm's C: then the warp that runs the mma for rows i owns every A element
 * of those rows (tl_gemm_rs_a_check in lower_frag.c verifies the map element
 * by element).  It is seeded like an accumulator with partition (wm, 1); a
 * T.copy from a gemm accumulator joins the classes, and a partition that
 * differs is the class conflict reported at the end.  False (reported) when
 * the gemm itself cannot take A from registers. */
static bool scan_gemm_rs_a(li_state *st, const tl_stmt *s, const tl_region *ra, int policy, int64_t wm, int64_t wn,
                           int64_t BM, int64_t BN, bool transpose_a) {
  tl_buffer *A = ra->buffer;
  int i = frag_index(st, A);
  if (i < 0) return false;
  if (transpose_a) {
    tl_error(st->d, s->loc,
             "T.gemm with A in fragment '%s' and transpose_A=True is not lowered yet (the rs "
             "form reads A as M x K registers)",
             A->name);
    st->errors++;
    return false;
  }
  if (!tl_lo_whole_region(ra) || A->ndim != 2) {
    tl_error(st->d, s->loc, "T.gemm with A in a sub-region of fragment '%s' is not lowered yet", A->name);
    st->errors++;
    return false;
  }
  if (A->dtype.bits != 16 || (A->dtype.code != TL_TYPE_FLOAT && A->dtype.code != TL_TYPE_BFLOAT)) {
    tl_error(st->d, s->loc,
             "T.gemm with A in fragment '%s' of type %s is not lowered yet (the rs form takes "
             "float16 or bfloat16 registers; cast with T.copy into a 16-bit fragment first)",
             A->name, tl_dtype_name(A->dtype));
    st->errors++;
    return false;
  }
  if (wn != 1) {
    tl_error(st->d, s->loc,
             "T.gemm with A in fragment '%s' (the rs form) needs its warps to split only M, so that each warp "
             "holds whole rows of A in registers: the rule is warp_n == 1, but policy %s splits the %lldx%lld "
             "accumulator over %lldx%lld warps; use policy=T.GemmWarpPolicy.FullRow or stage A through "
             "T.alloc_shared",
             A->name, policy_name(policy), (long long)BM, (long long)BN, (long long)wm, (long long)wn);
    st->errors++;
    return false;
  }
  frag_info *fi = &st->frags.data[i];
  if (fi->gemm && (fi->gemm_m != wm || fi->gemm_n != 1)) {
    tl_error(st->d, s->loc,
             "layout conflict for fragment '%s': this T.gemm reads it as its A operand (the rs form), which "
             "needs the accumulator layout split over %lldx1 warps, but the T.gemm that set its layout splits "
             "it over %lldx%lld warps",
             A->name, (long long)wm, (long long)fi->gemm_m, (long long)fi->gemm_n);
    tl_note(st->d, fi->gemm_loc, "the T.gemm that sets the layout of '%s' is here", A->name);
    st->errors++;
    return false;
  }
  if (!fi->gemm) {
    fi->gemm = true;
    fi->gemm_as_a = true;
    fi->gemm_loc = s->loc;
    fi->gemm_m = wm;
    fi->gemm_n = 1;
    fi->ident = (use_site){true, s->loc, "T.gemm (A operand)"};
  }
  add_bytes(st, i, tl_dtype_bytes(A->dtype));
  return true;
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
      scan_expr(st, o->region.min[d], s->loc);
      scan_expr(st, o->region.extent[d], s->loc);
    }
    nd[k] = region_dims(&o->region, ext[k]);
  }
  bool bad = false;
  for (int k = 0; k < 2; k++) {
    tl_buffer *b = s->u.tile.args[k].region.buffer;
    if (k == 0 && b->scope == TL_SCOPE_FRAGMENT) {
      continue; /* the rs form: scan_gemm_rs_a below, once the partition is known */
    } else if (b->scope == TL_SCOPE_FRAGMENT) {
      tl_error(st->d, s->loc, "T.gemm is not lowered yet with %s in a fragment ('%s'); stage it through T.alloc_shared",
               opn[k], b->name);
      st->errors++;
      bad = true;
    } else if (b->scope == TL_SCOPE_SHARED || b->scope == TL_SCOPE_SHARED_DYN) {
      const tl_smem_layout *SL = b->layout;
      if (!SL || !SL->wgmma) swizzle_operand(st, b); /* a TMA/wgmma image keeps its layout */
    }
  }
  tl_buffer *C = s->u.tile.args[2].region.buffer;
  int i = frag_index(st, C);
  if (i < 0 || bad) return;
  if (!tl_lo_whole_region(&s->u.tile.args[2].region) || nd[2] != 2 || C->ndim != 2) {
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
    msg = tl_arena_printf(&st->m->arena,
                          "T.gemm needs whole warps: the block has %lld threads, not a "
                          "multiple of 32",
                          (long long)st->threads);
  } else if (BM % 16 != 0 || BN % 8 != 0) {
    msg = tl_arena_printf(&st->m->arena,
                          "T.gemm cannot cover the %lldx%lld accumulator tile with mma.sync "
                          "m16n8k16: the rule is block_M %% 16 == 0 and block_N %% 8 == 0 (block_M %% 16 = %lld, "
                          "block_N %% 8 = %lld)",
                          (long long)BM, (long long)BN, (long long)(BM % 16), (long long)(BN % 8));
  } else if (K < 0 || K % 16 != 0) {
    msg = tl_arena_printf(&st->m->arena,
                          "T.gemm cannot step over K = %lld with mma.sync m16n8k16: the rule "
                          "is K %% 16 == 0 (K %% 16 = %lld)",
                          (long long)K, (long long)(K < 0 ? -1 : K % 16));
  }
  if (msg) {
    gemm_error(st, s->loc, msg);
    return;
  }
  int64_t wm = 0, wn = 0;
  const char *pmsg = NULL;
  if (tl_gemm_is_wgmma(s)) {
    /* wgmma (warp_specialize.c checked the shape): the warpgroups split M
     * in 64-row blocks (then N); warp w of a warpgroup owns rows 16w..16w+15
     * of each m64 block -- the MMA_C layout with 16-row warp tiles, or
     * interleaved when a warpgroup has several m64 blocks (frag_layout.h),
     * is the wgmma accumulator map. */
    int64_t wgs = st->threads / 128, wg_m = BM / 64 >= wgs ? wgs : BM / 64;
    wm = 4 * wg_m;
    wn = wgs / wg_m;
  } else if (!tl_gemm_warp_partition(st->m, (int)policy, BM, BN, st->threads / 32, &wm, &wn, &pmsg)) {
    gemm_error(st, s->loc, pmsg);
    return;
  }
  if (s->u.tile.args[0].region.buffer->scope == TL_SCOPE_FRAGMENT &&
      !scan_gemm_rs_a(st, s, &s->u.tile.args[0].region, (int)policy, wm, wn, BM, BN, tA != 0))
    return;
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
    fi->gemm_wgmma = tl_gemm_is_wgmma(s);
    /* the gemm is the op that distributes C: name it in conflicts */
    fi->ident = (use_site){true, s->loc, "T.gemm"};
  }
  add_bytes(st, i, tl_dtype_bytes(C->dtype));
}

/* T.gemm_sp(A_sparse, E, B, C): C's layout and warp partition are those
 * of the dense T.gemm(A_sparse, B, C) (lower_gemm_sp.c keeps the MMA_C
 * accumulator map; A_sparse's K extent is half the GEMM's, so its K % 16
 * rule is lower_gemm_sp.c's K % 32); E keeps its row-major layout. */
static void scan_gemm_sp(li_state *st, const tl_stmt *s) {
  if (s->u.tile.nargs < 4) return;
  const tl_region *e = &s->u.tile.args[1].region;
  for (int d = 0; d < e->ndim; d++) {
    scan_expr(st, e->min[d], s->loc);
    scan_expr(st, e->extent[d], s->loc);
  }
  int64_t ax[8];
  if (region_dims(&s->u.tile.args[0].region, ax) == 2 && (2 * ax[1]) % 32 != 0) {
    tl_error(st->d, s->loc,
             "T.gemm_sp: K = %lld is not a multiple of 32 (the k-step of mma.sp.m16n8k32); the tile rule is "
             "K %% 32 == 0",
             (long long)(2 * ax[1]));
    st->errors++;
    return;
  }
  int nd = tl_tile_ops[TL_TILE_GEMM].nattrs, pi = tl_tile_op_attr_index(TL_TILE_GEMM, "policy");
  tl_operand ops[3] = {s->u.tile.args[0], s->u.tile.args[2], s->u.tile.args[3]};
  tl_expr *attrs[16] = {0};
  if (nd > 16 || pi < 0) return;
  if (s->u.tile.attrs) {
    attrs[tl_tile_op_attr_index(TL_TILE_GEMM, "transpose_B")] = s->u.tile.attrs[2];
    attrs[pi] = s->u.tile.attrs[3];
  }
  tl_stmt v = *s;
  v.u.tile.op = TL_TILE_GEMM;
  v.u.tile.args = ops;
  v.u.tile.nargs = 3;
  v.u.tile.attrs = attrs;
  scan_gemm(st, &v);
}

/* T.reduce_*(src, dst, dim, clear): both operands are identity
 * uses of their fragments (every element at its own coordinates) but do
 * not share a layout: the destination gets the REDUCER layout of the
 * source's (decide_rows / finish_reducers below). */
static void scan_reduce(li_state *st, const tl_stmt *s) {
  if (s->u.tile.nargs < 2) return;
  const char *by = tl_arena_printf(&st->m->arena, "T.%s", tl_tile_ops[s->u.tile.op].name);
  if (!by) {
    st->oom = true;
    return;
  }
  red_rec rr;
  memset(&rr, 0, sizeof rr);
  rr.src = rr.dst = -1;
  rr.loc = s->loc;
  rr.by = by;
  rr.threads = st->threads;
  int64_t ext[8];
  for (int a = 0; a < 2; a++) {
    const tl_operand *o = &s->u.tile.args[a];
    if (o->kind != TL_OPND_REGION || !o->region.buffer) return;
    const tl_region *r = &o->region;
    for (int k = 0; k < r->ndim; k++) {
      scan_expr(st, r->min[k], s->loc);
      scan_expr(st, r->extent[k], s->loc);
    }
    int i = frag_index(st, r->buffer);
    if (a == 1) {
      int n = r->ndim ? r->ndim : r->buffer->ndim, big = 0;
      for (int k = 0; k < n; k++) {
        int64_t e = 0;
        if (!tl_expr_is_const_int(r->ndim ? r->extent[k] : r->buffer->shape[k], &e) || e > 1) big++;
      }
      rr.dst_multi = big > 1;
    }
    if (a == 0) {
      int n = r->ndim ? r->ndim : r->buffer->ndim;
      if (n < 1 || n > 8) return;
      for (int k = 0; k < n; k++)
        if (!tl_expr_is_const_int(r->ndim ? r->extent[k] : r->buffer->shape[k], &ext[k])) return;
      rr.sn = n;
      int64_t dim = -1;
      if (s->u.tile.attrs && s->u.tile.attrs[0]) tl_expr_is_const_int(s->u.tile.attrs[0], &dim);
      rr.rdim = (int)(dim < 0 ? dim + n : dim);
      if (rr.rdim < 0 || rr.rdim >= n) return;
      rr.R = 1; /* rows: the dims other than rdim, row-major; columns: rdim */
      for (int k = 0; k < n; k++)
        if (k != rr.rdim) rr.R *= ext[k];
      rr.C = ext[rr.rdim];
      rr.src_shared = r->buffer->scope == TL_SCOPE_SHARED || r->buffer->scope == TL_SCOPE_SHARED_DYN;
    }
    if (i < 0) continue;
    if (sub_region_refused(st, o, s, by)) continue;
    use_ident(st, i, s->loc, by);
    add_bytes(st, i, tl_dtype_bytes(r->buffer->dtype));
    if (a == 0) rr.src = i;
    else rr.dst = i;
  }
  if (!tl_vec_push(&st->reds, rr)) st->oom = true;
}

static void scan_stmt(li_state *st, const tl_stmt *s, int depth) {
  if (!s || depth > TL_LOWER_MAX_DEPTH) return;
  switch (s->kind) {
  case TL_STMT_SEQ:
    for (int i = 0; i < s->u.seq.n; i++) scan_stmt(st, s->u.seq.stmts[i], depth + 1);
    return;
  case TL_STMT_FOR: {
    for (int k = 0; k < s->u.loop.nvars; k++) {
      if (s->u.loop.mins) scan_expr(st, s->u.loop.mins[k], s->loc);
      scan_expr(st, s->u.loop.extents[k], s->loc);
    }
    if (s->u.loop.kind != TL_LOOP_PARALLEL || st->loop) {
      scan_stmt(st, s->u.loop.body, depth + 1);
      return;
    }
    st->loop = s;
    st->loop_bytes = 1;
    st->loop_mem = false;
    st->loop_ident.len = 0;
    st->loop_rows.len = 0;
    st->loop_cols.len = 0;
    st->loop_rstores.len = 0;
    st->loop_stack.len = 0;
    st->loop_split.len = 0;
    scan_stmt(st, s->u.loop.body, depth + 1);
    for (size_t k = 0; k < st->loop_ident.len; k++) {
      add_bytes(st, st->loop_ident.data[k], st->loop_bytes);
      st->frags.data[st->loop_ident.data[k]].ident_mem |= st->loop_mem;
      if (k > 0) unite(st, st->loop_ident.data[0], st->loop_ident.data[k]);
    }
    for (size_t k = 0; k < st->loop_rows.len; k++) {
      row_link lk = {st->loop_rows.data[k], st->loop_ident.len ? st->loop_ident.data[0] : -1, s->loc, 0};
      if (!tl_vec_push(&st->links, lk)) st->oom = true;
    }
    for (size_t k = 0; k < st->loop_cols.len; k++) {
      row_link lk = {st->loop_cols.data[k], st->loop_ident.len ? st->loop_ident.data[0] : -1, s->loc, 0};
      if (!tl_vec_push(&st->col_links, lk)) st->oom = true;
    }
    for (size_t k = 0; k < st->loop_rstores.len; k++) {
      row_link lk = st->loop_rstores.data[k];
      lk.f = st->loop_ident.len ? st->loop_ident.data[0] : -1;
      if (!tl_vec_push(&st->row_stores, lk)) st->oom = true;
    }
    for (size_t k = 0; k < st->loop_stack.len; k++) {
      if (!st->loop_ident.len) { /* no partition to stack on: an irregular use, as any other */
        use_other(st, st->loop_stack.data[k], s->loc, "T.Parallel loop");
        continue;
      }
      row_link lk = {st->loop_stack.data[k], st->loop_ident.data[0], s->loc, st->loop_split.data[k]};
      if (!tl_vec_push(&st->stacks, lk)) st->oom = true;
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
    if (b && (b->scope == TL_SCOPE_SHARED || b->scope == TL_SCOPE_SHARED_DYN) && !tl_map_get(&st->swizzled, b, NULL) &&
        !(b->layout && ((tl_smem_layout *)b->layout)->wgmma))
      b->layout = NULL; /* recomputed: a gemm swizzle below, else row-major on first use; a TMA/wgmma
                           * image (warp_specialize.c) keeps its layout */
    if (b && b->scope == TL_SCOPE_FRAGMENT) {
      b->layout = NULL;
      frag_index(st, b);
      for (int k = 0; k < b->ndim; k++)
        if (!tl_expr_is_const_int(b->shape[k], NULL)) {
          tl_error(st->d, s->loc, "fragment '%s' with a non-constant shape is not lowered yet", b->name);
          st->errors++;
          break;
        }
    }
    return;
  }
  case TL_STMT_STORE:
    if (st->loop && s->u.store.buffer && s->u.store.buffer->scope != TL_SCOPE_FRAGMENT &&
        s->u.store.buffer->scope != TL_SCOPE_LOCAL && s->u.store.buffer->scope != TL_SCOPE_LOCAL_VAR)
      st->loop_mem = true;
    st->storing = true;
    scan_access(st, s->u.store.buffer, s->u.store.n, s->u.store.indices, s->loc);
    st->storing = false;
    for (int i = 0; i < s->u.store.n; i++) scan_expr(st, s->u.store.indices[i], s->loc);
    scan_expr(st, s->u.store.value, s->loc);
    return;
  case TL_STMT_IF: {
    int64_t outer = st->threads, n = tl_lo_range_scope_threads(s);
    if (n > 0) st->threads = n; /* a thread-range scope: its tile ops run over its threads */
    scan_expr(st, s->u.ifs.cond, s->loc);
    scan_stmt(st, s->u.ifs.then_s, depth + 1);
    scan_stmt(st, s->u.ifs.else_s, depth + 1);
    st->threads = outer;
    return;
  }
  case TL_STMT_WHILE:
    scan_expr(st, s->u.whiles.cond, s->loc);
    scan_stmt(st, s->u.whiles.body, depth + 1);
    return;
  case TL_STMT_LET: scan_expr(st, s->u.let.value, s->loc); return;
  case TL_STMT_EVAL:
    /* T.ptx_wgmma_wait (attention_overlap.c places it before lowering)
       * names a whole fragment: every register, whatever the layout */
    if (s->u.eval.value && s->u.eval.value->kind == TL_EXPR_CALL &&
        s->u.eval.value->u.call.op == TL_INTRIN_PTX_WGMMA_WAIT)
      return;
    scan_expr(st, s->u.eval.value, s->loc);
    return;
  case TL_STMT_TILE:
    if (s->u.tile.op == TL_TILE_COPY || s->u.tile.op == TL_TILE_FILL || s->u.tile.op == TL_TILE_CLEAR) scan_tile(st, s);
    else if (s->u.tile.op == TL_TILE_GEMM) scan_gemm(st, s);
    else if (s->u.tile.op == TL_TILE_GEMM_SP) scan_gemm_sp(st, s);
    else if (s->u.tile.op >= TL_TILE_REDUCE_MAX && s->u.tile.op <= TL_TILE_REDUCE_ABSMAX) scan_reduce(st, s);
    else if (s->u.tile.op == TL_TILE_ANNOTATE_LAYOUT) scan_annotate(st, s);
    return;
  }
}

static int64_t buf_total(const tl_buffer *b, int64_t *last);

/* The largest 1-D fragment a class of small vectors may hold to be
 * replicated (every thread computes all of it). */
enum { REPLICATE_MAX = 256 };

/* A class of small vectors: every member 1-D, of at most REPLICATE_MAX
 * elements, written by no T.Parallel that also stores to memory (each thread
 * would store its copy). */
static bool small_vectors(li_state *st, int r) {
  for (size_t j = 0; j < st->frags.len; j++) {
    frag_info *fj = &st->frags.data[j];
    if (find(st, (int)j) != r) continue;
    int64_t last = 1;
    if (fj->buf->ndim != 1 || buf_total(fj->buf, &last) > REPLICATE_MAX || fj->ident_mem) return false;
  }
  return true;
}

/* A fragment with identity uses and other uses too (a T.Parallel reading it
 * by other indices: TileLang's D[j] in a loop over (i, j)), in a class with
 * no gemm or rows: REPLICATED serves both (TileLang replicates such a
 * fragment over the threads that read it) when its identity uses are only
 * T.copy (from shared or global), T.fill or T.clear of it alone, or when its
 * class is one of small vectors (the 1-D T.Parallel loops that write them run
 * whole on every thread). */
static bool replicate(li_state *st, int i) {
  frag_info *fi = &st->frags.data[i];
  int r = find(st, i);
  if (st->frags.data[r].cls_gemm || st->frags.data[r].rows || st->frags.data[r].red_cls || st->frags.data[r].col_cls)
    return false;
  bool alone = !fi->strong;
  for (size_t j = 0; j < st->frags.len && alone; j++)
    if ((int)j != i && find(st, (int)j) == r) alone = false;
  return alone || small_vectors(st, r);
}

static bool make_layout(li_state *st, frag_info *fi, int64_t threads, int bytes) {
  tl_buffer *b = fi->buf;
  if (fi->threads > 0) threads = fi->threads; /* a fragment of a thread-range scope */
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
  frag_info *root = &st->frags.data[r];
  if (g < 0 && root->rows && b->ndim >= 1) {
    int64_t C = L->shape[b->ndim - 1];
    int64_t v = 16 / (bytes > 0 && bytes <= 16 ? bytes : 16);
    tl_rows_layout_init(L, b->ndim, total / C, C, threads, v, root->rows_G);
    L->set_at = fi->ident.loc;
    L->set_by = fi->ident.by;
    b->layout = L;
    return true;
  }
  if (g >= 0) {
    frag_info *gi = &st->frags.data[g];
    if (b->ndim != 2 || !same_shape(b, gi->buf)) {
      tl_error(st->d, fi->ident.loc,
               "layout conflict for fragment '%s': this %s gives it the layout of the T.gemm accumulator '%s', "
               "whose shape differs",
               b->name, fi->ident.by, gi->buf->name);
      tl_note(st->d, gi->gemm_loc, "the T.gemm that sets the layout of '%s' is here", gi->buf->name);
      st->errors++;
      return true;
    }
    tl_mma_c_layout_init(L, L->shape[0], L->shape[1], threads, gi->gemm_m, gi->gemm_n);
    L->interleaved = gi->gemm_wgmma && L->warp_tile_m > 16;
    L->set_at = gi->gemm_loc;
    L->set_by = "T.gemm";
    b->layout = L;
    return true;
  }
  if (fi->ident.seen) {
    int64_t v = tl_frag_plan_vec(b->ndim > 0 ? L->shape[b->ndim - 1] : 1, total, threads, bytes);
    L->kind = TL_FRAG_PLAN;
    L->threads = threads;
    L->vec = v;
    L->nvec = (total + threads * v - 1) / (threads * v);
    L->nregs = L->nvec * v;
    L->set_at = fi->ident.loc;
    L->set_by = fi->ident.by;
  } else {
    L->kind = TL_FRAG_REPLICATED;
    L->threads = 1;
    L->vec = 1;
    L->nvec = total;
    L->nregs = total;
    L->set_at = fi->other.seen ? fi->other.loc : b->loc;
    L->set_by = fi->other.seen ? fi->other.by : "allocation";
  }
  b->layout = L;
  return true;
}

/* --------------------------------------------------------- reductions */
static int64_t buf_total(const tl_buffer *b, int64_t *last) {
  int64_t t = 1, v = 1;
  for (int k = 0; k < b->ndim; k++) {
    if (!tl_expr_is_const_int(b->shape[k], &v) || v < 1) return -1;
    t *= v;
  }
  if (last) *last = v;
  return t;
}

/* The classes that hold rows: reduce sources (not gemm accumulators) and the
 * partitions of loops that read row statistics get the ROWS layout; classes
 * that share statistics get one group count (the smallest preferred one),
 * so that a statistic's owners are the threads of its rows everywhere. */
static void decide_rows(li_state *st) {
  for (size_t k = 0; k < st->reds.len; k++) {
    red_rec *rr = &st->reds.data[k];
    if (rr->cols) { /* column statistics (decide_cols): the source holds rows */
      frag_info *root = &st->frags.data[find(st, rr->src)];
      if (root->cls_gemm) {
        tl_error(st->d, rr->loc,
                 "%s of the T.gemm accumulator '%s' along dim 0 into column statistics read beside it is not "
                 "lowered yet (rows of an mma accumulator are reduced along dim 1)",
                 rr->by, st->frags.data[rr->src].buf->name);
        st->errors++;
      }
      root->rows = !root->cls_gemm;
      continue;
    }
    if (rr->dst >= 0) st->frags.data[find(st, rr->dst)].red_cls = true;
    /* a shared source, or a fragment reduced along a dim other than its
     * last (staged through shared memory: tl_reduce_staging) */
    bool staged = rr->src >= 0 && rr->rdim != rr->sn - 1;
    if (rr->src < 0 || staged) {
      /* a multi-dim destination reduced along a dim other than the last is
       * staged too and keeps its own layout */
      bool dst_own = rr->rdim != rr->sn - 1 && rr->dst_multi;
      if (rr->dst >= 0 && (rr->src_shared || staged) && !dst_own) {
        tl_frag_layout *V = tl_arena_alloc(&st->m->arena, sizeof *V);
        int64_t *shape = tl_arena_alloc(&st->m->arena, 2 * sizeof(int64_t));
        if (!V || !shape) {
          st->oom = true;
          return;
        }
        memset(V, 0, sizeof *V);
        shape[0] = rr->R;
        shape[1] = rr->C;
        V->shape = shape;
        tl_rows_layout_init(V, 2, rr->R, rr->C, rr->threads, 1, 0);
        rr->virt = V;
      }
      continue;
    }
    frag_info *root = &st->frags.data[find(st, rr->src)];
    if (root->cls_gemm) {
      if (rr->sn != 2) {
        tl_error(st->d, rr->loc,
                 "%s of the T.gemm accumulator '%s' along dim %d is not lowered yet (rows of an "
                 "mma accumulator are reduced along dim 1)",
                 rr->by, st->frags.data[rr->src].buf->name, rr->rdim);
        st->errors++;
      }
      continue;
    }
    root->rows = true;
  }
  for (size_t k = 0; k < st->links.len; k++) {
    row_link *lk = &st->links.data[k];
    st->frags.data[find(st, lk->d)].red_cls = true;
    if (lk->f < 0) continue; /* check_stat_loops */
    frag_info *root = &st->frags.data[find(st, lk->f)];
    if (!root->cls_gemm) root->rows = true;
  }
  /* preferred group counts */
  for (size_t i = 0; i < st->frags.len; i++) {
    frag_info *fi = &st->frags.data[i];
    if (find(st, (int)i) != (int)i || !fi->rows) continue;
    int64_t C = 1, total = buf_total(fi->buf, &C);
    if (total < 1) {
      fi->rows = false;
      continue;
    }
    int bytes = fi->bytes > 0 && fi->bytes <= 16 ? fi->bytes : 16;
    int64_t v = 16 / bytes;
    while (v > 1 && C % v != 0) v /= 2;
    fi->rows_G = tl_rows_groups(total / C, C, fi->threads, v);
  }
  /* one group count per set of classes linked through a statistic */
  for (int round = 0; round < 8; round++) {
    bool changed = false;
    for (size_t i = 0; i < st->frags.len; i++) {
      if (find(st, (int)i) != (int)i || !st->frags.data[i].red_cls) continue;
      int64_t G = 0;
      for (int pass = 0; pass < 2; pass++) {
        for (size_t k = 0; k < st->reds.len; k++) {
          red_rec *rr = &st->reds.data[k];
          if (rr->dst >= 0 && rr->virt && find(st, rr->dst) == (int)i) {
            /* a staged or shared source's virtual rows take the group count too */
            if (pass == 0 && (G == 0 || rr->virt->groups < G)) G = rr->virt->groups;
            if (pass == 1 && rr->virt->groups != G) {
              tl_rows_layout_init(rr->virt, 2, rr->R, rr->C, rr->threads, 1, G);
              changed = true;
            }
            continue;
          }
          if (rr->dst < 0 || rr->src < 0 || find(st, rr->dst) != (int)i) continue;
          frag_info *sr = &st->frags.data[find(st, rr->src)];
          if (!sr->rows) continue;
          if (pass == 0 && (G == 0 || sr->rows_G < G)) G = sr->rows_G;
          if (pass == 1 && sr->rows_G != G) {
            sr->rows_G = G;
            changed = true;
          }
        }
        for (size_t k = 0; k < st->links.len; k++) {
          row_link *lk = &st->links.data[k];
          if (lk->f < 0 || find(st, lk->d) != (int)i) continue;
          frag_info *fr = &st->frags.data[find(st, lk->f)];
          if (!fr->rows) continue;
          if (pass == 0 && (G == 0 || fr->rows_G < G)) G = fr->rows_G;
          if (pass == 1 && fr->rows_G != G) {
            fr->rows_G = G;
            changed = true;
          }
        }
      }
    }
    if (!changed) break;
  }
}

/* The source layout that defines the statistics of reduce rr. */
static const tl_frag_layout *red_source_layout(li_state *st, const red_rec *rr) {
  if (rr->src >= 0 && !rr->virt) {
    const tl_frag_layout *L = tl_frag_layout_of(st->frags.data[rr->src].buf);
    if (L && L->kind == TL_FRAG_MMA_C && L->interleaved) {
      tl_error(st->d, rr->loc,
               "%s of the wgmma accumulator '%s' (several m64 blocks per warpgroup) is not lowered "
               "yet",
               rr->by, st->frags.data[rr->src].buf->name);
      st->errors++;
      return NULL;
    }
    return L && (L->kind == TL_FRAG_MMA_C || L->kind == TL_FRAG_ROWS) ? L : NULL;
  }
  return rr->virt;
}

/* Gives every statistics class the REDUCER layout of the reduce (else the
 * loop partition) that defines it, and checks the other reduces into it and
 * every loop that reads it beside rows: a mismatch is a layout conflict
 * naming the buffer and both ops. */
/* Row statistics of class r that no T.reduce writes, read as D[i] by loops
 * whose partitions give row i to different threads (a vector written by a
 * 1-D T.Parallel and read beside a gemm accumulator and another fragment),
 * are REPLICATED when the class is one of small vectors: every thread
 * holds every row. def: the layout the first link gives. */
static bool replicate_statistics(li_state *st, int r, const tl_frag_layout *def) {
  for (size_t k = 0; k < st->reds.len; k++)
    if (st->reds.data[k].dst >= 0 && find(st, st->reds.data[k].dst) == r) return false;
  tl_frag_layout D;
  memset(&D, 0, sizeof D);
  tl_reducer_layout_init(&D, def, 1);
  bool fits = true;
  for (size_t k = 0; k < st->links.len && fits; k++) {
    row_link *lk = &st->links.data[k];
    if (lk->f < 0 || find(st, lk->d) != r) continue;
    const tl_frag_layout *F = tl_frag_layout_of(st->frags.data[lk->f].buf);
    fits = F && tl_reducer_fits(&D, F);
  }
  if (fits || !small_vectors(st, r)) return false;
  st->frags.data[r].repl_cls = true;
  return true;
}

static void finish_reducers(li_state *st) {
  for (size_t i = 0; i < st->frags.len; i++) {
    if (find(st, (int)i) != (int)i || !st->frags.data[i].red_cls) continue;
    const tl_frag_layout *def = NULL;
    tl_loc def_loc = TL_LOC_NONE;
    const char *def_by = NULL;
    for (size_t k = 0; k < st->reds.len && !def; k++) {
      red_rec *rr = &st->reds.data[k];
      if (rr->dst < 0 || find(st, rr->dst) != (int)i) continue;
      if ((def = red_source_layout(st, rr))) {
        def_loc = rr->loc;
        def_by = rr->by;
      }
    }
    for (size_t k = 0; k < st->links.len && !def; k++) {
      row_link *lk = &st->links.data[k];
      if (lk->f < 0 || find(st, lk->d) != (int)i) continue;
      const tl_frag_layout *L = tl_frag_layout_of(st->frags.data[lk->f].buf);
      if (L && (L->kind == TL_FRAG_MMA_C || L->kind == TL_FRAG_ROWS)) {
        def = L;
        def_loc = lk->loc;
        def_by = "T.Parallel loop";
      }
    }
    if (def && replicate_statistics(st, (int)i, def)) {
      for (size_t j = 0; j < st->frags.len; j++) {
        frag_info *fj = &st->frags.data[j];
        if (find(st, (int)j) != (int)i) continue;
        fj->ident.seen = false;
        if (!make_layout(st, fj, st->threads, st->frags.data[i].bytes)) st->oom = true;
      }
      continue;
    }
    /* members: their layout */
    for (size_t j = 0; j < st->frags.len; j++) {
      if (find(st, (int)j) != (int)i) continue;
      frag_info *fj = &st->frags.data[j];
      tl_buffer *b = fj->buf;
      if (!def) {
        if (!make_layout(st, fj, st->threads, st->frags.data[i].bytes)) st->oom = true;
        continue;
      }
      tl_frag_layout tmp;
      memset(&tmp, 0, sizeof tmp);
      tl_reducer_layout_init(&tmp, def, b->ndim);
      int64_t last = 1, total = buf_total(b, &last);
      bool shape_ok = total == tmp.total && (b->ndim == 1 || (b->ndim == 2 && last == 1));
      if (!shape_ok) {
        tl_error(st->d, fj->ident.loc.file ? fj->ident.loc : b->loc,
                 "layout conflict for fragment '%s': it shares row statistics with the %s here, whose rows "
                 "number %lld, but its shape is not (%lld,) or (%lld, 1)",
                 b->name, def_by, (long long)tmp.total, (long long)tmp.total, (long long)tmp.total);
        tl_note(st->d, def_loc, "the %s that sets the layout of the statistics is here", def_by);
        st->errors++;
        continue;
      }
      tl_frag_layout *L = tl_arena_alloc(&st->m->arena, sizeof *L);
      int64_t *shape = tl_arena_alloc(&st->m->arena, sizeof(int64_t) * (size_t)b->ndim);
      if (!L || !shape) {
        st->oom = true;
        return;
      }
      *L = tmp;
      for (int k = 0; k < b->ndim; k++) tl_expr_is_const_int(b->shape[k], &shape[k]);
      L->shape = shape;
      L->set_at = def_loc;
      L->set_by = def_by;
      b->layout = L;
    }
    if (!def) continue;
    tl_frag_layout D;
    memset(&D, 0, sizeof D);
    tl_reducer_layout_init(&D, def, 1);
    for (size_t k = 0; k < st->reds.len; k++) {
      red_rec *rr = &st->reds.data[k];
      if (rr->dst < 0 || find(st, rr->dst) != (int)i) continue;
      const tl_frag_layout *S = red_source_layout(st, rr);
      tl_frag_layout E;
      memset(&E, 0, sizeof E);
      if (S && tl_reducer_layout_init(&E, S, 1) && tl_reducer_same(&D, &E)) continue;
      tl_error(st->d, rr->loc,
               "layout conflict for fragment '%s': this %s gives its rows to the threads that hold the rows of "
               "'%s', but the %s that sets its layout gives them to other threads",
               st->frags.data[rr->dst].buf->name, rr->by,
               rr->src >= 0 ? st->frags.data[rr->src].buf->name : "the source", def_by);
      tl_note(st->d, def_loc, "the %s that sets the layout of '%s' is here", def_by, st->frags.data[rr->dst].buf->name);
      st->errors++;
    }
    for (size_t k = 0; k < st->links.len; k++) {
      row_link *lk = &st->links.data[k];
      if (lk->f < 0 || find(st, lk->d) != (int)i) continue;
      const tl_frag_layout *F = tl_frag_layout_of(st->frags.data[lk->f].buf);
      if (F && tl_reducer_fits(&D, F)) continue;
      const char *fby = F && F->set_by ? F->set_by : "op";
      tl_error(st->d, lk->loc,
               "layout conflict for fragment '%s': this T.Parallel loop reads the row statistic '%s'[i] on the "
               "threads that hold row i of '%s' (whose layout the %s sets), but the %s that sets the layout of "
               "'%s' gives row i to other threads; use the same T.gemm warp policy, or stage through shared memory",
               st->frags.data[lk->d].buf->name, st->frags.data[lk->d].buf->name, st->frags.data[lk->f].buf->name, fby,
               def_by, st->frags.data[lk->d].buf->name);
      tl_note(st->d, def_loc, "the %s that sets the layout of '%s' is here", def_by, st->frags.data[lk->d].buf->name);
      if (F)
        tl_note(st->d, F->set_at, "the %s that sets the layout of '%s' is here", fby, st->frags.data[lk->f].buf->name);
      st->errors++;
    }
  }
}

/* Stacked reads (docs/layouts.md "Stacked fragments"): a fragment F read as
 * F[l, n] by a T.Parallel loop partitioned by a fragment P of F's trailing
 * shape (or copied row by row to or from P) is held where P[n] is: the
 * members of F's class get the STACKED layout over P's layout.  Every stacked
 * read of a class must name one base layout; a class whose layout a gemm, a
 * row reduction or row statistics decide, or a base that is replicated or of
 * another shape, is a layout conflict naming both ops.  A REPLICATED F needs
 * nothing (every thread holds it whole). */
static void stack_error(li_state *st, const row_link *lk, const char *why) {
  tl_buffer *F = st->frags.data[lk->d].buf;
  const tl_frag_layout *FL = tl_frag_layout_of(F);
  tl_error(st->d, lk->loc,
           "layout conflict for fragment '%s': this op reads it as %s[l, n] on the threads that hold element n of "
           "%s%s%s, but %s",
           F->name, F->name, lk->f >= 0 ? "'" : "", lk->f >= 0 ? st->frags.data[lk->f].buf->name : "its loop",
           lk->f >= 0 ? "'" : "", why);
  if (FL && FL->set_by) tl_note(st->d, FL->set_at, "the %s that sets the layout of '%s' is here", FL->set_by, F->name);
  st->errors++;
}

/* A base every thread holds whole: F's class is replicated too (each thread
 * computes all of it), unless a loop that writes it also stores to memory
 * (every thread would store).  False when it cannot be. */
static bool replicate_class(li_state *st, int r) {
  for (size_t j = 0; j < st->frags.len; j++)
    if (find(st, (int)j) == r && st->frags.data[j].ident_mem) return false;
  for (size_t j = 0; j < st->frags.len; j++) {
    frag_info *fj = &st->frags.data[j];
    if (find(st, (int)j) != r) continue;
    fj->ident.seen = false;
    if (!make_layout(st, fj, st->threads, st->frags.data[r].bytes)) st->oom = true;
  }
  return true;
}

static void resolve_stacks(li_state *st) {
  for (size_t k = 0; k < st->stacks.len; k++) {
    row_link *lk = &st->stacks.data[k];
    tl_buffer *F = st->frags.data[lk->d].buf;
    const tl_frag_layout *FL = tl_frag_layout_of(F);
    if (!FL || FL->kind == TL_FRAG_REPLICATED) continue;
    if (lk->f < 0) {
      stack_error(st, lk, "the loop indexes no fragment by all its variables; lowering it is not supported yet");
      continue;
    }
    const tl_frag_layout *B = tl_frag_layout_of(st->frags.data[lk->f].buf);
    if (FL->kind == TL_FRAG_STACKED) {
      if (!B || !tl_frag_layout_same(FL->src, B) || FL->split != lk->split)
        stack_error(st, lk, "another op reads it on the threads of a fragment of another layout");
      continue;
    }
    if (FL->kind != TL_FRAG_PLAN) {
      stack_error(st, lk, "its own layout (set by a T.gemm or a row reduction) puts its rows elsewhere");
      continue;
    }
    int r = find(st, lk->d);
    if (B && B->kind == TL_FRAG_REPLICATED && replicate_class(st, r)) continue;
    tl_frag_layout tmp;
    memset(&tmp, 0, sizeof tmp);
    tmp.shape = FL->shape;
    if (!B || B->kind == TL_FRAG_STACKED ||
        !(lk->split ? tl_stacked_split_init(&tmp, lk->split - 1, B) : tl_stacked_layout_init(&tmp, F->ndim, B))) {
      stack_error(st, lk,
                  lk->split ? "that fragment is replicated, or its shape is not this one's with the split dim "
                              "divided; stage it through shared memory"
                            : "that fragment is replicated, or its shape is not the trailing dims of this one's; "
                              "stage it through shared memory");
      continue;
    }
    for (size_t j = 0; j < st->frags.len; j++) {
      if (find(st, (int)j) != r) continue;
      tl_buffer *b = st->frags.data[j].buf;
      tl_frag_layout *L = tl_arena_alloc(&st->m->arena, sizeof *L);
      const tl_frag_layout *old = tl_frag_layout_of(b);
      if (!L || !old) {
        st->oom = true;
        return;
      }
      *L = tmp;
      L->shape = old->shape;
      L->set_at = lk->loc;
      L->set_by = "stacked read";
      b->layout = L;
    }
  }
}

/* A T.Parallel loop that reads row statistics D[i] by its first variable
 * and indexes no fragment of its rows (TileLang's S_shared[h, k] =
 * f(S_shared[h, k], scores_max[h]) over shared memory) runs on the threads of
 * its statistics: row i on the holders of D[i] (only replica 0 when it stores
 * to memory), its other variables serial (lower_tile.c).  That needs D laid
 * out as row statistics (REDUCER), every such statistic of the loop in one
 * layout; a replicated D serves any loop.  Anything else is an error. */
static void check_stat_loops(li_state *st) {
  for (size_t k = 0; k < st->links.len; k++) {
    row_link *lk = &st->links.data[k];
    if (lk->f >= 0) continue;
    const tl_frag_layout *D = tl_frag_layout_of(st->frags.data[lk->d].buf);
    if (D && D->kind == TL_FRAG_REPLICATED) continue;
    bool ok = D && D->kind == TL_FRAG_REDUCER;
    for (size_t j = 0; ok && j < k; j++) {
      row_link *o = &st->links.data[j];
      const tl_frag_layout *E = tl_frag_layout_of(st->frags.data[o->d].buf);
      if (o->f < 0 && !memcmp(&o->loc, &lk->loc, sizeof lk->loc) && E && E->kind != TL_FRAG_REPLICATED)
        ok = tl_frag_layout_same(D, E);
    }
    if (ok) continue;
    tl_error(st->d, lk->loc,
             "this T.Parallel loop reads the row statistic '%s' by its first loop variable but indexes no fragment "
             "of its rows by all its loop variables, and '%s' is not laid out as the row statistics of a "
             "T.reduce (or the loop's statistics are laid out differently); lowering it is not supported yet",
             st->frags.data[lk->d].buf->name, st->frags.data[lk->d].buf->name);
    st->errors++;
  }
}

/* The accumulator partition of a class: the first member that a T.gemm
 * writes as C (not an rs-form A seed); NULL when none. */
static frag_info *class_gemm_c(li_state *st, int root) {
  for (size_t i = 0; i < st->frags.len; i++) {
    frag_info *fi = &st->frags.data[i];
    if (fi->gemm && !fi->gemm_as_a && find(st, (int)i) == root) return fi;
  }
  return NULL;
}

/* Fragment → fragment T.copy joins the two classes (one layout, a per-thread
 * copy with any cast), except between two T.gemm accumulator classes whose
 * warp partitions differ: those keep their layouts and the copy moves the
 * data through shared memory (tl_lower_frag_relayout, lower_frag.c).  An
 * rs-form A operand is never relaid out: its conflict stays an error (the
 * rule of docs/layouts.md, reported by the class check below). */
static void link_copies(li_state *st) {
  for (size_t k = 0; k + 1 < st->copy_links.len; k += 2) {
    int a = st->copy_links.data[k], b = st->copy_links.data[k + 1];
    int ra = find(st, a), rb = find(st, b);
    if (ra == rb) continue;
    frag_info *ga = class_gemm_c(st, ra), *gb = class_gemm_c(st, rb);
    if (ga && gb && (ga->gemm_m != gb->gemm_m || ga->gemm_n != gb->gemm_n) && same_shape(ga->buf, gb->buf))
      continue; /* relayout */
    unite(st, a, b);
  }
}

bool tl_lower_infer_layouts(tl_module *m, tl_primfunc *f, const tl_target *target, tl_diag *d) {
  (void)target;                                /* nothing here depends on the target yet */
  if (!tl_lower_extend_short_parallel(m, f)) { /* parallel_extend.c */
    tl_error(d, f->loc, "out of memory in layout inference");
    return false;
  }
  li_state st = {.m = m, .d = d};
  st.threads = 1;
  tl_map_init(&st.index);
  tl_map_init(&st.swizzled);
  scan_stmt(&st, f->body, 0);
  link_copies(&st);
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
      if (fi->gemm_as_a || other->gemm_as_a) {
        /* the rs form: name the rule (docs/layouts.md, P·V reuse) */
        frag_info *a = fi->gemm_as_a ? fi : other, *c = fi->gemm_as_a ? other : fi;
        tl_error(d, a->gemm_loc,
                 "layout conflict for fragment '%s': this T.gemm reads it as its A operand (the rs form), which "
                 "needs the mma accumulator layout of a T.gemm whose warps split only M (%lldx1 warps, policy "
                 "FullRow) with the same warp rows, but it takes its layout from '%s', which the T.gemm here "
                 "splits over %lldx%lld warps%s; use policy=T.GemmWarpPolicy.FullRow on both gemms or stage A "
                 "through T.alloc_shared",
                 a->buf->name, (long long)a->gemm_m, c->buf->name, (long long)c->gemm_m, (long long)c->gemm_n,
                 same_shape(a->buf, c->buf) ? "" : " (and whose shape differs)");
        tl_note(d, c->gemm_loc, "the T.gemm that sets the layout of '%s' is here", c->buf->name);
        st.errors++;
        continue;
      }
      tl_error(d, fi->gemm_loc,
               "layout conflict for fragment '%s': this T.gemm splits it over %lldx%lld warps, but it shares "
               "its layout with '%s', which the T.gemm here splits over %lldx%lld warps",
               fi->buf->name, (long long)fi->gemm_m, (long long)fi->gemm_n, other->buf->name, (long long)other->gemm_m,
               (long long)other->gemm_n);
      tl_note(d, other->gemm_loc, "the T.gemm that sets the layout of '%s' is here", other->buf->name);
      st.errors++;
    }
  }
  ok = !st.oom && st.errors == 0;
  if (ok) tl_li_decide_cols(&st); /* layout_cols.c */
  if (ok) decide_rows(&st);
  ok = !st.oom && st.errors == 0;
  for (size_t i = 0; ok && i < st.frags.len; i++) {
    frag_info *fi = &st.frags.data[i];
    if (fi->ident.seen && fi->other.seen && replicate(&st, (int)i)) st.frags.data[find(&st, (int)i)].repl_cls = true;
  }
  for (size_t i = 0; ok && i < st.frags.len; i++) {
    frag_info *fi = &st.frags.data[i];
    if (st.frags.data[find(&st, (int)i)].repl_cls) {
      fi->ident.seen = false; /* REPLICATED: each thread copies, fills, clears or computes all of it */
    } else if (fi->ident.seen && fi->other.seen) {
      tl_error(d, fi->other.loc,
               "layout conflict for fragment '%s': this %s indexes it differently from the %s "
               "that distributes it over the threads",
               fi->buf->name, fi->other.by, fi->ident.by);
      tl_note(d, fi->ident.loc, "the %s that sets the layout of '%s' is here", fi->ident.by, fi->buf->name);
      st.errors++;
      continue;
    }
    int r = find(&st, (int)i);
    if (st.frags.data[r].red_cls || st.frags.data[r].col_cls) continue; /* finish_reducers, finish_cols */
    if (!make_layout(&st, fi, st.threads, st.frags.data[r].bytes)) st.oom = true;
  }
  if (!st.oom && st.errors == 0) finish_reducers(&st);
  if (!st.oom && st.errors == 0) tl_li_finish_cols(&st);
  if (!st.oom && st.errors == 0) resolve_stacks(&st);
  if (!st.oom && st.errors == 0) check_stat_loops(&st);
  if (!st.oom && st.errors == 0) tl_li_check_row_stores(&st); /* layout_row_stores.c */
  if (st.oom) tl_error(d, f->loc, "out of memory in layout inference");
  ok = !st.oom && st.errors == 0;
  tl_vec_free(&st.frags);
  tl_vec_free(&st.loop_ident);
  tl_vec_free(&st.loop_rows);
  tl_vec_free(&st.loop_cols);
  tl_vec_free(&st.col_links);
  tl_vec_free(&st.loop_rstores);
  tl_vec_free(&st.row_stores);
  tl_vec_free(&st.loop_stack);
  tl_vec_free(&st.loop_split);
  tl_vec_free(&st.stacks);
  tl_vec_free(&st.reds);
  tl_vec_free(&st.links);
  tl_vec_free(&st.copy_links);
  tl_map_free(&st.index);
  tl_map_free(&st.swizzled);
  return ok;
}
