/* Pass "gemm-stage" of lib/Lower (tile IR -> tile IR; after "pipeline",
 * before "barriers"): the T.gemm forms whose fragment operand the mma.sync
 * lowering cannot read from registers go through shared memory.
 *
 * TileLang's meaning of T.gemm does not depend on where A and B live:
 * C (+)= op(A) op(B).  This compiler reads a fragment operand in registers
 * only in the rs form with warps that split M alone (lower_frag.c: the A
 * fragment is the m16n8 accumulator layout of whole warp rows, docs/layouts.md
 * "P·V reuse").  The other forms are staged:
 *   - B in a fragment (the "sr" form, TileLang's gemm_sr);
 *   - A in a fragment when the gemm's warp partition (tl_gemm_warp_partition
 *     for its policy, block tile and warps) splits N over warp_n > 1 warps
 *     (policy Square or FullCol): every warp needs whole rows of A, which
 *     several warps would have to hold at once.
 * Requires: a verified tile-IR function whose kernel has a constant thread
 * count; the fragment operand a whole 2-D fragment of constant shape
 * (anything else is left for layout inference to refuse with its message).
 * Guarantees: such a T.gemm(A, B, C, ...) becomes
 *     T.copy(X_frag, X_stage)          # X = A or B
 *     T.gemm(.., X_stage, .., ...)     # same attributes
 * with X_stage = T.alloc_shared(shape of X_frag, its dtype) declared at the
 * top of the kernel body (one per staged gemm operand), unless X_frag is a
 * copy of a shared buffer already: when an earlier statement of the same
 * sequence is T.copy(X_sh, X_frag) with X_sh a whole shared buffer of X_frag's
 * shape and dtype, and no statement between it and the gemm writes X_sh or
 * X_frag, the gemm reads X_sh itself (TileLang's split-KV decode form
 * `T.copy(acc_s, S_shared); T.copy(S_shared, acc_s_cast); T.gemm(acc_s_cast,
 * ...)`: no second copy of S_shared's bytes, which would not fit beside the
 * others in 227 KB); the barriers pass
 * then orders the copy against the gemm's reads and the next copy against
 * them.  The math is unchanged (the same mma.sync steps in the same k order:
 * the CPU reference is the same T.gemm), only the operand's path differs;
 * with remarks on (tl_lower_options.remarks) a note says which operand was
 * staged and why.  Other statements are left alone. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "Lower/lower_internal.h"

typedef struct gs_state {
  tl_module *m;
  tl_diag *d;
  int64_t threads;
  int nstaged;
  TL_VEC(tl_stmt *) allocs; /* T.alloc_shared of the stage tiles */
  bool oom;
} gs_state;

/* A whole 2-D fragment operand of constant shape? */
static bool whole_frag(const tl_operand *o, int64_t *r, int64_t *c) {
  const tl_buffer *b = o->kind == TL_OPND_REGION ? o->region.buffer : NULL;
  if (!b || b->scope != TL_SCOPE_FRAGMENT || b->ndim != 2 || !tl_lo_whole_region(&o->region)) return false;
  return tl_expr_is_const_int(b->shape[0], r) && tl_expr_is_const_int(b->shape[1], c);
}

static int64_t attr_or_default(const tl_stmt *s, int k) {
  int64_t v = tl_tile_ops[TL_TILE_GEMM].attrs[k].default_int;
  if (k < tl_tile_ops[TL_TILE_GEMM].nattrs && s->u.tile.attrs && s->u.tile.attrs[k])
    tl_expr_is_const_int(s->u.tile.attrs[k], &v);
  return v;
}

/* Which operand (0 A, 1 B) of gemm s to stage, or -1; *why the reason. */
static int stage_which(gs_state *st, const tl_stmt *s, const char **why) {
  int64_t r, c, cm, cn;
  if (s->u.tile.nargs < 3 || !whole_frag(&s->u.tile.args[2], &cm, &cn)) return -1;
  if (tl_gemm_is_wgmma(s)) return -1; /* the rs form as wgmma: warp_specialize.c checked its warpgroups */
  if (whole_frag(&s->u.tile.args[1], &r, &c)) {
    *why = "B is a fragment (the sr form)";
    return 1;
  }
  if (!whole_frag(&s->u.tile.args[0], &r, &c) || st->threads % 32 != 0) return -1;
  int64_t wm = 0, wn = 0;
  int policy = (int)attr_or_default(s, 2);
  if (!tl_gemm_warp_partition(st->m, policy, cm, cn, st->threads / 32, &wm, &wn, NULL) || wn <= 1) return -1;
  *why = tl_arena_printf(&st->m->arena,
                         "A is a fragment and policy %s splits the %lldx%lld accumulator over "
                         "%lldx%lld warps (registers hold A only when warp_n == 1, policy FullRow)",
                         policy == TL_POLICY_FULL_COL ? "FullCol" : "Square", (long long)cm, (long long)cn,
                         (long long)wm, (long long)wn);
  return 0;
}

/* The shared buffer whose whole copy fragment F holds at statement `at` of seq (see the header), or NULL. */
static tl_buffer *copied_from_shared(const tl_stmt *seq, int at, const tl_buffer *F) {
  for (int j = at - 1; seq && j >= 0; j--) {
    const tl_stmt *c = seq->u.seq.stmts[j];
    if (!c || tl_lo_count_refs(c, F).writes == 0) continue;
    const tl_operand *a = c->kind == TL_STMT_TILE && c->u.tile.op == TL_TILE_COPY ? c->u.tile.args : NULL;
    const tl_buffer *src = a && a[0].kind == TL_OPND_REGION ? a[0].region.buffer : NULL;
    if (!src || (src->scope != TL_SCOPE_SHARED && src->scope != TL_SCOPE_SHARED_DYN) || a[1].kind != TL_OPND_REGION ||
        a[1].region.buffer != F || !tl_lo_whole_region(&a[0].region) || !tl_lo_whole_region(&a[1].region) ||
        src->ndim != 2 || !tl_dtype_eq(src->dtype, F->dtype))
      return NULL;
    for (int d = 0; d < 2; d++) {
      int64_t x, y;
      if (!tl_expr_is_const_int(src->shape[d], &x) || !tl_expr_is_const_int(F->shape[d], &y) || x != y) return NULL;
    }
    for (int i = j + 1; i < at; i++)
      if (tl_lo_count_refs(seq->u.seq.stmts[i], src).writes) return NULL;
    return (tl_buffer *)src;
  }
  return NULL;
}

/* The gemm reads shared buffer SH in place of its operand k (a copy of SH). */
static tl_stmt *read_shared(gs_state *st, tl_stmt *s, int k, tl_buffer *SH, const char *why) {
  tl_operand *gargs = tl_arena_alloc(&st->m->arena, (size_t)s->u.tile.nargs * sizeof *gargs);
  if (!gargs) {
    st->oom = true;
    return s;
  }
  memcpy(gargs, s->u.tile.args, (size_t)s->u.tile.nargs * sizeof *gargs);
  const char *fname = gargs[k].region.buffer->name;
  gargs[k] = (tl_operand){.kind = TL_OPND_REGION, .region = {.buffer = SH}, .loc = gargs[k].loc};
  s->u.tile.args = gargs;
  if (st->d->remarks_on)
    tl_remark(st->d, s->loc, "T.gemm reads %s '%s' from '%s', the shared buffer it was copied from: %s", k ? "B" : "A",
              fname, SH->name, why);
  return s;
}

static tl_stmt *stage_gemm(gs_state *st, tl_stmt *s, const tl_stmt *seq, int at) {
  const char *why = NULL;
  int k = stage_which(st, s, &why);
  if (k < 0) return s;
  tl_module *M = st->m;
  tl_loc loc = s->loc;
  tl_buffer *F = s->u.tile.args[k].region.buffer;
  tl_buffer *SH = copied_from_shared(seq, at, F);
  if (SH) return read_shared(st, s, k, SH, why);
  char name[160];
  snprintf(name, sizeof name, "%s_stage", F->name);
  tl_buffer *S = tl_ir_new_buffer(M, loc, name, F->dtype, TL_SCOPE_SHARED_DYN, 2, F->shape);
  tl_stmt *al = S ? tl_ir_stmt(M, loc, TL_STMT_ALLOC) : NULL;
  tl_stmt *cp = tl_ir_stmt(M, loc, TL_STMT_TILE), *g = tl_ir_stmt(M, loc, TL_STMT_TILE);
  int nca = tl_tile_ops[TL_TILE_COPY].nattrs;
  tl_operand *cargs = tl_arena_alloc(&M->arena, 2 * sizeof *cargs);
  tl_operand *gargs = tl_arena_alloc(&M->arena, (size_t)s->u.tile.nargs * sizeof *gargs);
  tl_expr **cattrs = nca ? tl_arena_alloc(&M->arena, (size_t)nca * sizeof *cattrs) : NULL;
  if (!al || !cp || !g || !cargs || !gargs || (nca && !cattrs)) {
    st->oom = true;
    return s;
  }
  al->u.alloc.buffer = S;
  tl_operand whole = {.kind = TL_OPND_REGION, .region = {.buffer = S}, .loc = s->u.tile.args[k].loc};
  cargs[0] = s->u.tile.args[k];
  cargs[1] = whole;
  for (int i = 0; i < nca; i++) cattrs[i] = NULL;
  cp->u.tile.op = TL_TILE_COPY;
  cp->u.tile.nargs = 2;
  cp->u.tile.args = cargs;
  cp->u.tile.attrs = cattrs;
  memcpy(gargs, s->u.tile.args, (size_t)s->u.tile.nargs * sizeof *gargs);
  gargs[k] = whole;
  g->u.tile = s->u.tile;
  g->u.tile.args = gargs;
  if (!tl_vec_push(&st->allocs, al)) {
    st->oom = true;
    return s;
  }
  st->nstaged++;
  if (st->d->remarks_on)
    tl_remark(st->d, loc, "T.gemm reads %s '%s' through shared memory ('%s'): %s", k ? "B" : "A", F->name, S->name,
              why);
  tl_stmt *pair[2] = {cp, g};
  tl_stmt *r = tl_ir_seq(M, loc, 2, pair);
  if (!r) st->oom = true;
  return r ? r : s;
}

static tl_stmt *walk(gs_state *st, tl_stmt *s, int depth, int *errors) {
  if (!s || st->oom || !tl_lo_nesting_ok(st->d, s, depth, errors, true)) return s;
  switch (s->kind) {
  case TL_STMT_SEQ:
    for (int i = 0; i < s->u.seq.n; i++) {
      tl_stmt *c = s->u.seq.stmts[i];
      s->u.seq.stmts[i] = c && c->kind == TL_STMT_TILE && c->u.tile.op == TL_TILE_GEMM ? stage_gemm(st, c, s, i)
                                                                                       : walk(st, c, depth + 1, errors);
    }
    return s;
  case TL_STMT_FOR: s->u.loop.body = walk(st, s->u.loop.body, depth + 1, errors); return s;
  case TL_STMT_WHILE: s->u.whiles.body = walk(st, s->u.whiles.body, depth + 1, errors); return s;
  case TL_STMT_KERNEL: s->u.kernel.body = walk(st, s->u.kernel.body, depth + 1, errors); return s;
  case TL_STMT_IF:
    s->u.ifs.then_s = walk(st, s->u.ifs.then_s, depth + 1, errors);
    s->u.ifs.else_s = walk(st, s->u.ifs.else_s, depth + 1, errors);
    return s;
  case TL_STMT_TILE: return s->u.tile.op == TL_TILE_GEMM ? stage_gemm(st, s, NULL, 0) : s;
  default: return s;
  }
}

bool tl_lower_gemm_stage(tl_module *m, tl_primfunc *f, const tl_target *target, tl_diag *d) {
  (void)target;
  tl_stmt *k = tl_ir_find_kernel(f->body);
  int64_t threads = 0;
  if (!k || !k->u.kernel.threads || !tl_expr_is_const_int(k->u.kernel.threads, &threads)) return true;
  gs_state st = {.m = m, .d = d, .threads = threads};
  int errors = 0;
  k->u.kernel.body = walk(&st, k->u.kernel.body, 0, &errors);
  if (!st.oom && st.nstaged) {
    /* the allocations first, then the old body */
    tl_stmt *b =
        tl_vec_push(&st.allocs, k->u.kernel.body) ? tl_ir_seq(m, k->loc, (int)st.allocs.len, st.allocs.data) : NULL;
    if (!b) st.oom = true;
    else k->u.kernel.body = b;
  }
  tl_vec_free(&st.allocs);
  if (st.oom) {
    tl_error(d, f->loc, "out of memory while staging T.gemm operands");
    return false;
  }
  return errors == 0;
}
