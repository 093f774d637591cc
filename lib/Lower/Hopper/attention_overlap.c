/* The "intra-warpgroup overlap" schedule of the warp-specialized attention
 * form (pass config tl.attention_overlap; FlashAttention-3's second
 * technique), a part of pass "warp-specialize" (warp_specialize.c calls
 * tl_attention_overlap from its consumer loop).
 *
 * Requires: the consumers' loop of the attention form, `for k in
 * T.serial(lo, lo + n)`, whose body (the copies into the staged tiles
 * removed) is: statements before the first T.gemm (pre: the mask or
 * T.clear of S), T.gemm(Q, K, S) (ss), statements (mid: the softmax, the
 * rescale of O, the cast of S into P), T.gemm(P, V, O) (rs), nothing after
 * it; K's barrier group 0 and V's group 1 of the S-stage ring mbar (full
 * barriers of group g at 2Sg + s, empty at 2Sg + S + s).
 * Guarantees: the loop becomes, with r = base + k - lo (base: tl_ao_loop.base,
 * else 0) and each T.gemm's group left in flight (wg_wait
 * TL_GEMM_WG_WAIT_NONE) where it says "no wait":
 *
 *     if n > 0:
 *         <iteration lo in source order, without P·V>          # S0, softmax, P0
 *         for k in T.serial(lo + 1, lo + n):
 *             wait K(r); pre; S = Q·K(r)ᵀ (no wait)
 *             wait V(r-1); O += P·V(r-1) (no wait)
 *             T.ptx_wgmma_wait(1, S)      # Q·Kᵀ complete, P·V may run on
 *             release K(r); mid's early part (the statements that touch neither O nor P)
 *             T.ptx_wgmma_wait(0, O); T.ptx_wgmma_wait(0, P)   # P·V complete; P's registers live until here
 *             release V(r-1); mid's late part (those writing O or P: O *= scale, P = cast(S))
 *         wait V(n-1); O += P·V(n-1); release V(n-1)
 *
 * so that the softmax of block k runs while the tensor cores compute P·V of
 * block k - 1.  The late part may move behind the early statements after
 * it only when no early statement touches O or P or a buffer a late one
 * writes, or writes one a late one reads (checked; otherwise the loop is
 * left as it was and false is returned with *why set).  The results are
 * those of the source order: each statement sees the same values. */
#include "Lower/Hopper/attention_overlap.h"

#include <stdlib.h>
#include <string.h>

#include "IR/rewrite.h"
#include "IR/visit.h"

#define AO_MAX_BUFS 32

typedef struct buf_set {
  tl_buffer_visitor bv;
  const tl_buffer *b[AO_MAX_BUFS];
  int n;
  bool full;
} buf_set;
static void bs_add(tl_buffer_visitor *bv, const tl_buffer *b) {
  buf_set *s = (buf_set *)bv;
  for (int i = 0; i < s->n; i++)
    if (s->b[i] == b) return;
  if (s->n == AO_MAX_BUFS) s->full = true;
  else s->b[s->n++] = b;
}

/* May late statement L move behind the later statement E? */
static bool may_pass(const tl_stmt *L, const tl_stmt *E) {
  buf_set s = {.bv = {.buffer = bs_add}};
  if (!tl_visit_buffers(&s.bv, L) || s.full) return false;
  for (int i = 0; i < s.n; i++) {
    tl_lo_refs l = tl_lo_count_refs(L, s.b[i]), e = tl_lo_count_refs(E, s.b[i]);
    if ((l.writes && (e.reads || e.writes)) || (l.reads && e.writes)) return false;
  }
  return true;
}

static bool touches(const tl_stmt *s, const tl_buffer *b) {
  tl_lo_refs r = tl_lo_count_refs(s, b);
  return r.reads + r.writes > 0;
}

typedef struct ao {
  tl_ao_loop *a;
  tl_module *m;
  tl_loc loc;
  tl_buffer *S, *P, *O;
} ao;

static tl_expr *I(ao *o, int64_t v) { return tl_lo_int(o->m, o->loc, v); }
/* The ring position of relative iteration e (a->base + e). */
static tl_expr *R(ao *o, tl_expr *e) { return o->a->base ? tl_lo_add(o->m, o->loc, o->a->base, e) : e; }

/* The wait for (full) or the release of (empty) stage rel % S of group g. */
static tl_stmt *stage_sync(ao *o, int g, tl_expr *rel, bool full) {
  tl_module *m = o->m;
  int S = o->a->stages;
  tl_expr *st = tl_lo_fmod(m, o->loc, rel, S, NULL);
  tl_expr *idx = tl_lo_add(m, o->loc, st, I(o, 2 * S * g + (full ? 0 : S)));
  if (full) {
    tl_expr *args[3] = {tl_ir_buffer_ref(m, o->loc, o->a->mbar), idx,
                        tl_lo_fmod(m, o->loc, tl_lo_fdiv(m, o->loc, rel, S, NULL), 2, NULL)};
    return tl_lo_eval(m, o->loc, tl_ir_call(m, o->loc, TL_INTRIN_PTX_MBARRIER_WAIT, 3, args));
  }
  tl_expr *args[2] = {tl_ir_buffer_ref(m, o->loc, o->a->mbar), idx};
  tl_expr *lane0 =
      tl_ir_binary(m, o->loc, TL_OP_EQ, tl_lo_fmod(m, o->loc, tl_lo_thread_index(m, o->loc), 32, NULL), I(o, 0));
  tl_stmt *arr = tl_lo_eval(m, o->loc, tl_ir_call(m, o->loc, TL_INTRIN_PTX_MBARRIER_ARRIVE, 2, args));
  return arr ? tl_lo_if(m, o->loc, lane0, arr, NULL) : NULL;
}

/* The elements of fragment X a consumer thread holds (its static size over
 * the consumer threads: one m64 block a warpgroup), or 0. */
static int64_t per_thread(const ao *o, const tl_buffer *X) {
  int64_t n = 1, d;
  for (int i = 0; i < X->ndim; i++)
    if (!tl_expr_is_const_int(X->shape[i], &d)) return 0;
    else n *= d;
  return n % o->a->threads == 0 ? n / o->a->threads : 0;
}

/* T.ptx_wgmma_wait(n, X, 0, <X's elements in a thread>) */
static tl_stmt *wg_wait(ao *o, int n, tl_buffer *X) {
  tl_expr *args[4] = {I(o, n), tl_ir_buffer_ref(o->m, o->loc, X), I(o, 0), I(o, per_thread(o, X))};
  return tl_lo_eval(o->m, o->loc, tl_ir_call(o->m, o->loc, TL_INTRIN_PTX_WGMMA_WAIT, 4, args));
}

/* T.gemm item i on stage rel % S, its group left in flight when !wait. */
static tl_stmt *gemm_at(ao *o, int i, tl_expr *rel, bool wait) {
  tl_stmt *g = o->a->stage_gemm(o->a->ctx, o->a->items[i], tl_lo_fmod(o->m, o->loc, rel, o->a->stages, NULL));
  if (!g || wait) return g;
  int na = tl_tile_ops[TL_TILE_GEMM].nattrs;
  tl_expr **at = tl_arena_alloc(&o->m->arena, sizeof(tl_expr *) * (size_t)na);
  if (!at || na <= 5) return NULL;
  for (int j = 0; j < na; j++) at[j] = g->u.tile.attrs ? g->u.tile.attrs[j] : NULL;
  at[5] = I(o, TL_GEMM_WG_WAIT_NONE);
  g->u.tile.attrs = at;
  return g;
}

static bool push(stmt_list *v, tl_stmt *s) { return s && tl_vec_push(v, s); }

/* Iteration lo in source order without P·V (k replaced by lo). */
static bool prologue(ao *o, stmt_list *v, tl_expr *lo) {
  tl_ao_loop *a = o->a;
  tl_map subst;
  tl_map_init(&subst);
  tl_rewriter rw = {.m = o->m, .subst = &subst, .max_depth = TL_LOWER_MAX_DEPTH};
  bool ok = tl_map_put(&subst, a->loop->u.loop.vars[0], lo);
  for (int i = 0; ok && i < a->g2; i++) {
    if (i == a->g1) {
      ok = push(v, stage_sync(o, 0, R(o, I(o, 0)), true)) && push(v, gemm_at(o, i, R(o, I(o, 0)), true)) &&
           push(v, stage_sync(o, 0, R(o, I(o, 0)), false));
      continue;
    }
    tl_stmt *c = tl_rewrite_stmt(&rw, a->items[i], 1);
    ok = c && !rw.failed && tl_vec_push(v, c);
  }
  tl_map_free(&subst);
  return ok;
}

/* The loop body of iterations lo + 1 .. lo + n - 1 (header comment). */
static tl_stmt *body(ao *o, tl_var *r, tl_expr *k, tl_expr *lo, const bool *late) {
  tl_ao_loop *a = o->a;
  stmt_list v = {0};
  tl_module *m = o->m;
  tl_expr *rv = tl_ir_var(m, o->loc, r);
  tl_expr *rp = tl_ir_binary(m, o->loc, TL_OP_SUB, tl_ir_var(m, o->loc, r), I(o, 1));
  bool ok = push(&v, tl_lo_let(m, o->loc, r, R(o, tl_ir_binary(m, o->loc, TL_OP_SUB, k, lo)))) &&
            push(&v, stage_sync(o, 0, rv, true));
  for (int i = 0; ok && i < a->g1; i++) ok = push(&v, a->items[i]);
  ok = ok && push(&v, gemm_at(o, a->g1, rv, false)) && push(&v, stage_sync(o, 1, rp, true)) &&
       push(&v, gemm_at(o, a->g2, rp, false)) && push(&v, wg_wait(o, 1, o->S)) && push(&v, stage_sync(o, 0, rv, false));
  for (int i = a->g1 + 1; ok && i < a->g2; i++)
    if (!late[i]) ok = push(&v, a->items[i]);
  ok = ok && push(&v, wg_wait(o, 0, o->O)) && push(&v, wg_wait(o, 0, o->P)) && push(&v, stage_sync(o, 1, rp, false));
  for (int i = a->g1 + 1; ok && i < a->g2; i++)
    if (late[i]) ok = push(&v, a->items[i]);
  tl_stmt *s = ok ? tl_ir_seq(m, o->loc, (int)v.len, v.data) : NULL;
  tl_vec_free(&v);
  return s;
}

/* Which mid statements are late; false when the order cannot change. */
static const char *split_mid(ao *o, bool *late) {
  tl_ao_loop *a = o->a;
  for (int i = 0; i < a->g1; i++)
    if (touches(a->items[i], o->O) || touches(a->items[i], o->P)) return "a statement before Q·Kᵀ touches O or P";
  for (int i = a->g1 + 1; i < a->g2; i++)
    late[i] = tl_lo_count_refs(a->items[i], o->O).writes > 0 || tl_lo_count_refs(a->items[i], o->P).writes > 0;
  for (int i = a->g1 + 1; i < a->g2; i++)
    for (int j = i + 1; late[i] && j < a->g2; j++)
      if (!late[j] && (touches(a->items[j], o->O) || touches(a->items[j], o->P) || !may_pass(a->items[i], a->items[j])))
        return "the softmax's statements depend on the rescale of O or on P";
  return NULL;
}

bool tl_attention_overlap(tl_ao_loop *a, const char **why) {
  tl_stmt *loop = a->loop;
  ao o = {.a = a, .m = a->m, .loc = loop->loc};
  *why = NULL;
  if (a->g1 < 0 || a->g2 != a->n - 1 || a->g1 >= a->g2 || loop->u.loop.nvars != 1 || loop->u.loop.step)
    return *why = "the loop body is not [mask, Q·Kᵀ, softmax, P·V]", false;
  o.S = a->items[a->g1]->u.tile.args[2].region.buffer;
  o.P = a->items[a->g2]->u.tile.args[0].region.buffer;
  o.O = a->items[a->g2]->u.tile.args[2].region.buffer;
  if (!o.P || o.P->scope != TL_SCOPE_FRAGMENT || !per_thread(&o, o.S) || per_thread(&o, o.P) % 2 ||
      !per_thread(&o, o.O))
    return *why = "P·V's A is not a fragment", false;
  bool late[TL_AO_MAX_ITEMS] = {false};
  if (a->n > TL_AO_MAX_ITEMS) return *why = "the loop body is too long", false;
  if ((*why = split_mid(&o, late))) return false;
  tl_module *m = a->m;
  tl_expr *lo = loop->u.loop.mins && loop->u.loop.mins[0] ? loop->u.loop.mins[0] : I(&o, 0);
  tl_expr *n = loop->u.loop.extents[0];
  tl_var *k = loop->u.loop.vars[0];
  tl_var *r = tl_names_fresh_var(a->names, o.loc, "ws_r", TL_INT32, TL_VAR_LET);
  tl_stmt *nl = tl_ir_stmt(m, o.loc, TL_STMT_FOR);
  tl_expr **mins = tl_arena_alloc(&m->arena, sizeof(tl_expr *)), **ext = tl_arena_alloc(&m->arena, sizeof(tl_expr *));
  stmt_list v = {0};
  if (!r || !nl || !mins || !ext) return false;
  *nl = *loop;
  nl->u.loop.kind = TL_LOOP_SERIAL;
  nl->u.loop.num_stages = -1;
  nl->u.loop.nsched = 0;
  mins[0] = tl_lo_add(m, o.loc, lo, I(&o, 1));
  ext[0] = tl_ir_binary(m, o.loc, TL_OP_SUB, n, I(&o, 1));
  nl->u.loop.mins = mins;
  nl->u.loop.extents = ext;
  nl->u.loop.body = body(&o, r, tl_ir_var(m, o.loc, k), lo, late);
  tl_expr *last = R(&o, tl_ir_binary(m, o.loc, TL_OP_SUB, n, I(&o, 1)));
  bool ok = nl->u.loop.body && prologue(&o, &v, lo) && push(&v, nl) && (!a->after_qk || push(&v, a->after_qk)) &&
            push(&v, stage_sync(&o, 1, last, true)) && push(&v, gemm_at(&o, a->g2, last, true)) &&
            push(&v, stage_sync(&o, 1, last, false));
  tl_stmt *seq = ok ? tl_ir_seq(m, o.loc, (int)v.len, v.data) : NULL;
  tl_stmt *guard =
      seq ? tl_lo_if(m, o.loc, tl_ir_binary(m, o.loc, TL_OP_GT, n, I(&o, 0)), seq, a->after_qk_empty) : NULL;
  tl_vec_free(&v);
  if (!guard) return false;
  *loop = *guard;
  return true;
}
