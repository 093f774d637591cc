/* Pass "gemm-wgmma" of lib/Lower: T.gemm as wgmma outside the
 * warp-specialized path (tile IR → tile IR, sm_90a; docs/hopper.md
 * "cp.async + wgmma").
 *
 * A kernel that warp-specialize left alone (its loop refused, or
 * tl.disable_warp_specialized / tl.disable_tma_lower set) fills its shared
 * tiles with cp.async, T.copy or T.Parallel stores; TileLang still issues
 * its T.gemm as wgmma when M, the threads and the dtypes allow (its
 * src/cuda/op/gemm.cc AllowWgmma).  Here the same: the gemm's shared
 * operand tiles get the wgmma image layout (tl_smem_layout_set_wgmma), so
 * that lower_gemm.c (tl_gemm_is_wgmma) lowers it to wgmma and layout_infer.c
 * gives its accumulator the wgmma partition.  The image is the swizzle that
 * layout inference gives an mma.sync operand of that width (the same
 * tl_smem_offset), 1024-byte aligned by smem-plan, so every other access of
 * the tile (copies, T.Parallel loads and stores, ldmatrix) is unchanged.
 *
 * Requires: a verified tile-IR function after warp-specialize (a kernel
 * that pass rewrote has wgmma images already and is left alone).
 * Guarantees: on a target with wgmma, without tl.disable_wgmma, in a kernel
 * without T.ws / thread-range scopes whose threads are a constant multiple
 * of 128, when some T.gemm of the kernel meets the conditions below, every
 * shared tile such a T.gemm reads has the wgmma image layout, and the
 * function carries this pass's annotation (read by proxy-fence).  A T.gemm
 * that does not (block_M 32 of an attention backward's dQ, as TileLang's
 * AllowWgmma also leaves to mma.sync) stays mma.sync beside them, provided
 * (gw_mixed_ok) it cannot be mistaken for a wgmma one (tl_gemm_is_wgmma:
 * its B, and its A or register A, would carry the image) and no fragment
 * connects the two kinds (an accumulator or register A of one kind in the
 * same T.Parallel loop, tile op or store as one of the other: layout
 * inference would have to give one fragment two partitions); otherwise, as
 * when no T.gemm qualifies, nothing changes.
 *
 * A T.gemm's conditions (gw_gemm_ok; those of warp_specialize.c's match_gemm
 * without the TMA ones): A and B whole tiles of one static 2-D shape each,
 * float16 or bfloat16 alike, B shared, A shared or (the rs form) a whole
 * fragment not transposed; C a whole 2-D fragment of float32 (or float16
 * with float16 inputs); k_pack 1; K % 16 == 0; block_M a multiple of 64 that
 * splits over the warpgroups (threads / 128), for the rs form one m64 block
 * a warpgroup; each warpgroup's N a multiple of 8 (and of B's panel when B
 * is N-contiguous; A's panels fit the 64 M rows when A is M-contiguous); at
 * most 192 accumulator registers a thread (the warp-specialize rule).  A
 * shared tile's conditions (gw_tile_ok): static 2-D, rows a multiple of 8,
 * a contiguous width of 32, 64 or 128 bytes or a multiple of 128 (the
 * 32/64/128-byte swizzle spans), never passed whole to an intrinsic (a raw
 * address: T.ptx_cp_async, atomics, access pointers), not a T.gemm_sp
 * operand (a kernel with T.gemm_sp is left alone). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "IR/visit.h"
#include "Lower/Hopper/ws_internal.h"
#include "Lower/lower_internal.h"
#include "Lower/smem_layout.h"
#include "Support/Hopper/path.h"

static const char gw_annot_key; /* the annotation's key: this object's address */

#define GW_MAX_TILES 32
#define GW_MAX_GEMMS 32
#define GW_MAX_FRAGS 64

typedef struct gw_plan {
  tl_buffer *tiles[GW_MAX_TILES];
  int sw[GW_MAX_TILES];
  int ntiles, ngemms; /* ngemms: the T.gemm that run as wgmma */
  int nother;         /* the T.gemm that stay mma.sync */
  const char *other;  /* why the first of those does */
  int64_t threads;
  int64_t asked_threads; /* the kernel's own threads when the plan runs it on more (gw_plan_of), else 0 */
} gw_plan;

typedef struct gw_scan {
  tl_visitor v;
  gw_plan *p;
  const char *why;        /* a refusal of the whole kernel */
  bool raw[GW_MAX_TILES]; /* the tile is passed whole to an intrinsic */
  const tl_stmt *gemms[GW_MAX_GEMMS];
  bool wg[GW_MAX_GEMMS]; /* gemms[i] runs as wgmma */
  int n;
  int64_t rs_bm; /* block_M of an rs-form T.gemm whose rows are not one m64 block a warpgroup, else 0 */
} gw_scan;

static bool is_shared(const tl_buffer *b) {
  return b && (b->scope == TL_SCOPE_SHARED || b->scope == TL_SCOPE_SHARED_DYN);
}

static bool f16ish(tl_dtype t) {
  return t.lanes <= 1 && t.bits == 16 && (t.code == TL_TYPE_FLOAT || t.code == TL_TYPE_BFLOAT);
}

static int64_t attr_of(const tl_stmt *s, int k, int64_t dflt) {
  int64_t v = dflt;
  if (k < tl_tile_ops[TL_TILE_GEMM].nattrs && s->u.tile.attrs && s->u.tile.attrs[k])
    tl_expr_is_const_int(s->u.tile.attrs[k], &v);
  return v;
}

static bool static_2d(const tl_buffer *b, int64_t *rows, int64_t *cols) {
  return b && b->ndim == 2 && tl_expr_is_const_int(b->shape[0], rows) && tl_expr_is_const_int(b->shape[1], cols);
}

/* The swizzle span of a shared tile's wgmma image, or 0 (with *why). */
static int gw_tile_ok(const tl_buffer *X, const char **why) {
  int64_t rows, cols;
  if (!static_2d(X, &rows, &cols)) return *why = "a T.gemm operand tile is not a static 2-D shared buffer", 0;
  int64_t cb = cols * 2;
  if (rows % 8 != 0) return *why = "a T.gemm operand tile's rows are not a multiple of 8", 0;
  if (cb == 32 || cb == 64 || cb == 128) return (int)cb;
  if (cb > 128 && cb % 128 == 0) return 128;
  *why =
      "a T.gemm operand tile's contiguous width is not 16, 32, 64 or a multiple of 64 elements (the wgmma "
      "swizzle spans)";
  return 0;
}

/* Records shared tile X (of swizzle span sw) in the plan; its index, or -1. */
static int add_tile(gw_scan *sc, tl_buffer *X, int sw) {
  gw_plan *p = sc->p;
  for (int i = 0; i < p->ntiles; i++)
    if (p->tiles[i] == X) return i;
  if (p->ntiles == GW_MAX_TILES) return sc->why = "the kernel's T.gemm read too many shared tiles", -1;
  p->tiles[p->ntiles] = X;
  p->sw[p->ntiles] = sw;
  return p->ntiles++;
}

/* The panel width in elements of a tile of swizzle span sw. */
static int64_t panel(int sw) { return sw / 2; }

/* The wgmma conditions on T.gemm g (see the head comment); NULL when it can
 * run as wgmma (its shared tiles recorded), else the reason. */
static const char *gw_gemm_ok(gw_scan *sc, const tl_stmt *g) {
  if (g->u.tile.nargs < 3) return "a T.gemm has no A, B and C";
  const tl_region *ra = &g->u.tile.args[0].region, *rb = &g->u.tile.args[1].region, *rc = &g->u.tile.args[2].region;
  tl_buffer *A = ra->buffer, *B = rb->buffer, *C = rc->buffer;
  if (!A || !B || !C || !is_shared(B)) return "a T.gemm's B is not a shared tile";
  bool rs = A->scope == TL_SCOPE_FRAGMENT;
  if (!rs && !is_shared(A)) return "a T.gemm's A is neither a shared tile nor a fragment";
  if (!tl_lo_whole_region(ra) || !tl_lo_whole_region(rb)) return "a T.gemm reads part of a tile";
  if (C->scope != TL_SCOPE_FRAGMENT || !tl_lo_whole_region(rc)) return "a T.gemm's C is not a whole fragment";
  int64_t ar, ac, br, bc, BM, BN;
  if (!static_2d(A, &ar, &ac) || !static_2d(B, &br, &bc) || !static_2d(C, &BM, &BN))
    return "a T.gemm operand is not static 2-D";
  tl_dtype da = A->dtype, dc = C->dtype;
  if (!f16ish(da) || !tl_dtype_eq(da, B->dtype)) return "a T.gemm's A and B are not both float16 or bfloat16";
  if (!((dc.code == TL_TYPE_FLOAT && dc.bits == 32) ||
        (dc.code == TL_TYPE_FLOAT && dc.bits == 16 && da.code == TL_TYPE_FLOAT)))
    return "a T.gemm's accumulator is not float32 (or float16 with float16 inputs)";
  if (attr_of(g, 4, 1) != 1) return "a T.gemm has k_pack other than 1";
  bool ta = attr_of(g, 0, 0) != 0, tb = attr_of(g, 1, 0) != 0;
  if (rs && ta) return "an rs-form T.gemm has transpose_A=True";
  int64_t am = ta ? ac : ar, K = ta ? ar : ac, bk = tb ? bc : br, bn = tb ? br : bc;
  if (am != BM || bn != BN || bk != K) return "a T.gemm's operand shapes disagree";
  if (K % 16 != 0) return "a T.gemm's K is not a multiple of 16";
  int64_t WN = 0;
  tl_wg_split sp = tl_wgmma_split(BM, BN, sc->p->threads, &WN);
  if (sp == TL_WG_SPLIT_M)
    return "a T.gemm's block_M is not a multiple of 64 that splits evenly over the warpgroups (threads / 128)";
  if (rs && BM != 64 * (sc->p->threads / 128)) {
    if (!sc->rs_bm) sc->rs_bm = BM;
    return "an rs-form T.gemm's block_M is not 64 x the warpgroups (one m64 block each, as its register A needs)";
  }
  if (sp == TL_WG_SPLIT_REGS) return "a T.gemm's accumulators would take more than 192 registers a thread";
  if (sp == TL_WG_SPLIT_N) return "a T.gemm's warpgroup column split is not a multiple of 8";
  const char *why = NULL;
  int swb = gw_tile_ok(B, &why), swa = rs ? 1 : gw_tile_ok(A, &why);
  if (!swb || !swa) return why;
  if (!tb && WN % panel(swb) != 0) return "a T.gemm's B panels do not split evenly over the warpgroups";
  if (!rs && ta && 64 % panel(swa) != 0 && panel(swa) % 64 != 0) return "a T.gemm's A panels do not split evenly";
  if (add_tile(sc, B, swb) < 0 || (!rs && add_tile(sc, A, swa) < 0)) return sc->why;
  sc->p->ngemms++;
  return NULL;
}

static void gw_stmt(tl_visitor *v, const tl_stmt *s) {
  gw_scan *sc = (gw_scan *)v;
  if (sc->why) return;
  if (s->kind == TL_STMT_TILE && s->u.tile.op == TL_TILE_GEMM_SP) sc->why = "the kernel has a T.gemm_sp";
  if (s->kind != TL_STMT_TILE || s->u.tile.op != TL_TILE_GEMM || sc->why) return;
  if (sc->n == GW_MAX_GEMMS) {
    sc->why = "the kernel has too many T.gemm";
    return;
  }
  const char *no = gw_gemm_ok(sc, s);
  if (sc->why) return; /* the plan's tables are full */
  sc->gemms[sc->n] = s;
  sc->wg[sc->n++] = !no;
  if (no && !sc->p->nother++) sc->p->other = no;
}

/* Fragments that layout inference ties together (gw_mixed_ok): a union-find
 * over the kernel's fragment buffers; full: more than GW_MAX_FRAGS. */
typedef struct gw_frags {
  tl_buffer_visitor bv;
  const tl_buffer *buf[GW_MAX_FRAGS];
  int parent[GW_MAX_FRAGS];
  int n, first; /* first: the unit's first fragment, -1 before it */
  bool full;
} gw_frags;

static int frag_find(gw_frags *fr, int i) {
  while (fr->parent[i] != i) i = fr->parent[i] = fr->parent[fr->parent[i]];
  return i;
}

/* The index of fragment b (added when new), or -1 when the table is full. */
static int frag_index(gw_frags *fr, const tl_buffer *b) {
  for (int i = 0; i < fr->n; i++)
    if (fr->buf[i] == b) return i;
  if (fr->n == GW_MAX_FRAGS) return fr->full = true, -1;
  fr->buf[fr->n] = b;
  fr->parent[fr->n] = fr->n;
  return fr->n++;
}

static void frag_ref(tl_buffer_visitor *bv, const tl_buffer *b) {
  gw_frags *fr = (gw_frags *)bv;
  if (!b || b->scope != TL_SCOPE_FRAGMENT) return;
  int i = frag_index(fr, b);
  if (i < 0) return;
  if (fr->first < 0) fr->first = i;
  else fr->parent[frag_find(fr, i)] = frag_find(fr, fr->first);
}

/* The walk that finds the units of layout inference: a T.Parallel loop, a
 * tile op or a store ties every fragment it reads or writes together. */
typedef struct gw_units {
  tl_visitor v;
  gw_frags *fr;
} gw_units;

static void frag_unit(tl_visitor *v, const tl_stmt *s) {
  gw_frags *fr = ((gw_units *)v)->fr;
  if (!((s->kind == TL_STMT_FOR && s->u.loop.kind == TL_LOOP_PARALLEL) || s->kind == TL_STMT_TILE ||
        s->kind == TL_STMT_STORE))
    return;
  fr->first = -1;
  fr->bv = (tl_buffer_visitor){.buffer = frag_ref};
  if (!tl_visit_buffers(&fr->bv, s)) fr->full = true;
}

/* The fragments a T.gemm partitions: its C, and its A in the rs form. */
static const tl_buffer *gemm_frag(const tl_stmt *g, int k) {
  if (g->u.tile.nargs < 3) return NULL;
  const tl_buffer *b = g->u.tile.args[k == 0 ? 2 : 0].region.buffer;
  return b && b->scope == TL_SCOPE_FRAGMENT ? b : NULL;
}

static bool in_tiles(const gw_plan *p, const tl_buffer *b) {
  for (int i = 0; i < p->ntiles; i++)
    if (p->tiles[i] == b) return true;
  return false;
}

/* Can the T.gemm of sc that stay mma.sync sit beside the wgmma ones (see the
 * head comment)?  NULL when they can, else why not. */
static const char *gw_mixed_ok(gw_scan *sc, const tl_stmt *kbody) {
  for (int i = 0; i < sc->n; i++) {
    if (sc->wg[i]) continue;
    const tl_stmt *g = sc->gemms[i];
    if (g->u.tile.nargs < 3) return "a T.gemm has no A, B and C";
    const tl_buffer *A = g->u.tile.args[0].region.buffer, *B = g->u.tile.args[1].region.buffer;
    if (!A || !B) return "a T.gemm's A or B is not a buffer";
    if (in_tiles(sc->p, B) && (A->scope == TL_SCOPE_FRAGMENT || in_tiles(sc->p, A)))
      return "a T.gemm that cannot run as wgmma reads the tiles of one that can";
  }
  gw_frags *fr = calloc(1, sizeof *fr);
  if (!fr) return "out of memory";
  gw_units u = {.v = {.stmt = frag_unit}, .fr = fr};
  tl_visit_stmt(&u.v, kbody);
  const char *why = NULL;
  if (u.v.too_deep || fr->full) why = "the kernel has too many fragments to check them";
  /* each class of tied fragments: 1 wgmma, 2 mma.sync, 3 both */
  int kind[GW_MAX_FRAGS] = {0};
  for (int i = 0; i < sc->n && !why; i++)
    for (int k = 0; k < 2; k++) {
      const tl_buffer *b = gemm_frag(sc->gemms[i], k);
      int j = b ? frag_index(fr, b) : -1;
      if (j < 0) continue;
      int r = frag_find(fr, j);
      kind[r] |= sc->wg[i] ? 1 : 2;
      if (kind[r] == 3) why = "a fragment ties a T.gemm that can run as wgmma to one that cannot";
    }
  free(fr);
  return why;
}

static void gw_expr(tl_visitor *v, const tl_expr *e) {
  gw_scan *sc = (gw_scan *)v;
  if (e->kind != TL_EXPR_CALL) return;
  for (int a = 0; a < e->u.call.n; a++) {
    const tl_expr *x = e->u.call.args[a];
    if (!x || x->kind != TL_EXPR_BUFFER) continue;
    for (int i = 0; i < sc->p->ntiles; i++)
      if (sc->p->tiles[i] == x->u.buffer) sc->raw[i] = true;
  }
}

/* The plan for kernel k on `threads` threads: NULL when every T.gemm can run as wgmma (p filled;
 * p->ngemms 0 when it has none), else the reason; *rs_bm (rs_bm may be NULL): gw_scan's. */
static const char *gw_plan_at(tl_stmt *k, int64_t threads, gw_plan *p, int64_t *rs_bm) {
  memset(p, 0, sizeof *p);
  p->threads = threads;
  if (rs_bm) *rs_bm = 0;
  gw_scan *sc = calloc(1, sizeof *sc);
  if (!sc) return "out of memory";
  sc->v.stmt = gw_stmt;
  sc->p = p;
  tl_visit_stmt(&sc->v, k->u.kernel.body);
  const char *why = sc->v.too_deep ? "the kernel nests too deeply" : sc->why;
  if (!why && p->nother) why = p->ngemms ? gw_mixed_ok(sc, k->u.kernel.body) : p->other;
  if (rs_bm) *rs_bm = sc->rs_bm;
  free(sc);
  if (why) return why;
  gw_scan raw = {.v = {.expr = gw_expr}, .p = p};
  tl_visit_stmt(&raw.v, k->u.kernel.body);
  for (int i = 0; i < p->ntiles; i++)
    if (raw.raw[i] || raw.v.too_deep) return "a T.gemm operand tile is passed whole to an intrinsic (a raw address)";
  for (int i = 0; i < p->ntiles; i++) {
    const tl_smem_layout *L = p->tiles[i]->layout;
    if (L && L->wgmma) return "the kernel is warp-specialized";
  }
  return NULL;
}

/* The plan for f: NULL when every T.gemm of the kernel can run as wgmma
 * (p filled; p->ngemms 0 when it has none), else the reason.  An rs-form
 * T.gemm whose block_M is 64 x more warpgroups than the kernel's threads
 * give (block_M 128 on 128 threads) runs the kernel on block_M / 64
 * warpgroups (tl_ws_wider_threads; docs/hopper.md "More consumer threads
 * than the kernel asks for") when that plan has fewer T.gemm left on
 * mma.sync. */
static const char *gw_plan_of(const tl_primfunc *f, const tl_target *target, gw_plan *p) {
  memset(p, 0, sizeof *p);
  if (!target || !target->wgmma) return "the target has no wgmma";
  if (f->pass_configs.disable_wgmma) return "tl.disable_wgmma is set";
  tl_stmt *k = tl_ir_find_kernel(f->body);
  if (!k) return "no kernel";
  if (tl_lo_has_call(k->u.kernel.body, TL_INTRIN_WS) || tl_lo_has_call(k->u.kernel.body, TL_INTRIN_THREAD_RANGE))
    return "the kernel has role or thread-range scopes";
  if (tl_ws_producer_threads(f) > 0) return "the kernel is warp-specialized";
  int64_t T = 0, rs_bm = 0;
  if (!tl_expr_is_const_int(k->u.kernel.threads, &T) || T < 128 || T % 128 != 0)
    return p->threads = T, "the threads are not a multiple of 128 (wgmma runs on warpgroups)";
  const char *why = gw_plan_at(k, T, p, &rs_bm);
  int64_t W = why || p->nother ? tl_ws_wider_threads(rs_bm, T, target->max_threads, k->u.kernel.body) : 0;
  if (W) {
    gw_plan q;
    const char *wwhy = gw_plan_at(k, W, &q, NULL);
    if (!wwhy && (why || q.nother < p->nother)) *p = q, p->asked_threads = T, why = NULL;
  }
  return why;
}

/* The refusal that a plan (why = gw_plan_of's answer, p its plan) says:
 * NULL when the kernel's T.gemm run as wgmma, "" when the target, the
 * config or the kernel's form ruled it out before any T.gemm was looked at. */
static const char *refusal_of(const char *why, const gw_plan *p) {
  if (!why) return p->ngemms > 0 ? NULL : "";
  return p->threads > 0 && (p->ngemms > 0 || p->ntiles > 0 || strstr(why, "T.gemm")) ? why : "";
}

const char *tl_gemm_wgmma_refusal(const tl_primfunc *f, const tl_target *target) {
  gw_plan p;
  const char *why = gw_plan_of(f, target, &p);
  return refusal_of(why, &p);
}

void tl_gemm_wgmma_remark(tl_diag *d, tl_loc loc, const tl_primfunc *f, const tl_target *target, const char *why) {
  gw_plan p;
  const char *wg = refusal_of(gw_plan_of(f, target, &p), &p);
  char wide[120] = "";
  if (!wg && p.asked_threads)
    snprintf(wide, sizeof wide,
             "; %lld threads where the kernel asks for %lld: nothing in it depends on its thread count",
             (long long)p.threads, (long long)p.asked_threads);
  if (!wg && p.nother)
    tl_remark(d, loc,
              "T.Pipelined loop takes the cp.async + wgmma path (%d of the kernel's %d T.gemm as wgmma, the others "
              "mma.sync: %s; not warp-specialized: %s%s)",
              p.ngemms, p.ngemms + p.nother, p.other, why, wide);
  else if (!wg)
    tl_remark(d, loc,
              "T.Pipelined loop takes the cp.async + wgmma path (its T.gemm as wgmma, not warp-specialized: %s%s)", why,
              wide);
  else
    tl_remark(d, loc, "T.Pipelined loop stays on the cp.async + mma.sync path: %s%s%s%s", why,
              *wg ? " (T.gemm not as wgmma either: " : "", wg, *wg ? ")" : "");
}

bool tl_gemm_wgmma_marked(const tl_primfunc *f) { return tl_func_annot(f, &gw_annot_key) != NULL; }

bool tl_lower_gemm_wgmma(tl_module *m, tl_primfunc *f, const tl_target *target, tl_diag *d) {
  gw_plan p;
  if (gw_plan_of(f, target, &p) || p.ngemms == 0) return true;
  for (int i = 0; i < p.ntiles; i++)
    if (!tl_smem_layout_set_wgmma(m, p.tiles[i], p.sw[i])) {
      tl_error(d, p.tiles[i]->loc, "internal error: the wgmma image of shared tile '%s' (out of memory?)",
               p.tiles[i]->name);
      return false;
    }
  tl_stmt *k = p.asked_threads ? tl_ir_find_kernel(f->body) : NULL;
  if (!tl_func_annot_add(m, f, &gw_annot_key, 1) || (k && !(k->u.kernel.threads = tl_lo_int(m, k->loc, p.threads)))) {
    tl_error(d, f->loc, "out of memory");
    return false;
  }
  return true;
}
