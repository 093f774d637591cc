/* Lowering of T.copy / T.async_copy between global and shared memory (and
 * shared → shared) for lower_tile.c, plus the shared-memory addressing that
 * every shared access of the SIMT IR goes through.
 *
 * Requires: constant region extents; shared buffers of static shape (their
 * tl_smem_layout, smem_layout.h, gives the flat buffer and the swizzle).
 * Guarantees: every shared access is to L->flat at tl_smem_offset(...) of
 * the logical (stage, row, col); out-of-bounds global reads are never issued
 * (the shared element is zero-filled instead), out-of-bounds global writes
 * are skipped; a vector access of w lanes is emitted only where the element
 * offsets of both sides are proven multiples of w and every row start keeps
 * that alignment (docs/simt-ir.md).
 *
 * Algorithm.  The copy's domain is the list of its non-unit extents (the
 * same for both operands after dropping extent-1 dims, as the verifier
 * checks); each operand dim maps onto a domain dim or has extent 1.  The
 * vector width w is the largest power of two with w * (widest element) <= 16
 * bytes such that: w divides the last domain extent; the last domain dim is
 * the last dim of both operands; for a global operand, its last dim is a
 * constant multiple of w and the region start in it a proven multiple of w;
 * for a shared operand, the row stride of its layout is a multiple of w and
 * the start column a proven multiple of w (a swizzle moves whole 16-byte
 * chunks, so w <= 16 / element bytes elements stay contiguous and aligned).
 * The E / w vectors ("chunks") are dealt round-robin to the block's threads,
 * consecutive threads taking consecutive chunks of a row (coalesced):
 *     for q in T.unroll(ceil(C / T)):  c = q * T + tid   (if c < C when T does not divide C)
 *         i_last = (c % (D_last / w)) * w,  i_k = (c / P_k) % D_k
 * Because the global row length is a multiple of w and the start column
 * too, a vector is wholly in bounds or wholly out: one predicate per vector.
 * T.async_copy global → shared with equal dtypes and w * bytes in {4, 8, 16}
 * becomes T.ptx_cp_async(dst, off, src, flat_src_off, bytes, pred) (pred
 * false: no global read, the bytes are zero-filled; PTX ISA §9.7.9.25.3.1,
 * cp.async with src-size 0); otherwise a synchronous (vector) load/store with
 * a zero store in the else branch.  Alignment of the global base pointer to
 * the vector / cp.async size is the runtime's check (lib/Runtime/compile.c
 * raises each tensor's alignment from these accesses). */
#include <stdlib.h>
#include <string.h>

#include "Lower/lower_internal.h"
#include "Lower/smem_layout.h"

static bool is_shared(const tl_buffer *b) {
  return b && (b->scope == TL_SCOPE_SHARED_DYN || b->scope == TL_SCOPE_SHARED);
}

/* ------------------------------------------------------ shared addressing */
tl_expr *tl_lower_smem_index(tl_module *m, tl_loc loc, tl_buffer *b, int n, tl_expr **idx) {
  tl_smem_layout *L = tl_smem_layout_get(m, b);
  if (!L || n < 1 || n != b->ndim) return NULL;
  tl_expr *stage = NULL;
  if (n > 2) { /* leading dims flatten into the stage index */
    stage = idx[0];
    for (int k = 1; k + 2 < n; k++) {
      int64_t d;
      if (!tl_expr_is_const_int(b->shape[k], &d)) return NULL;
      stage = tl_lo_add(m, loc, tl_lo_mul(m, loc, stage, d), idx[k]);
    }
  }
  tl_expr *row = n >= 2 ? idx[n - 2] : tl_lo_int(m, loc, 0);
  return tl_smem_offset(m, loc, L, stage, row, idx[n - 1]);
}

bool tl_lower_smem_vec_ok(tl_module *m, tl_buffer *b, int n, tl_expr *const *idx, const tl_var *lane, int64_t w) {
  tl_smem_layout *L = tl_smem_layout_get(m, b);
  if (!L || n < 1 || w < 1) return false;
  if (w == 1) return true;
  if (w * tl_dtype_bytes(b->dtype) > 16 || L->row_stride % w != 0 || L->stage_elems % w != 0) return false;
  for (int k = 0; k + 1 < n; k++)
    if (!tl_expr_free_of(idx[k], lane)) return false;
  int64_t c;
  if (!tl_expr_lane_coef(idx[n - 1], lane, &c) || c != 1) return false;
  return tl_expr_divisible(idx[n - 1], w, lane);
}

/* ------------------------------------------------------------ the copy */
typedef struct cside {
  tl_buffer *buf;
  int ndim;
  tl_expr **min;
  int64_t *ext;
  int *map;          /* operand dim → domain dim, -1 for extent 1 */
  tl_smem_layout *L; /* shared operands */
} cside;

typedef struct sc_state {
  tl_lower_env *env;
  tl_module *m;
  tl_loc loc;
  bool oom;
} sc_state;

static void sc_fail(sc_state *st, const char *fmt, const char *a) {
  tl_error(st->env->d, st->loc, fmt, a);
  st->env->errors++;
}

static bool make_cside(sc_state *st, cside *cs, const tl_region *r, tl_expr **mins, int ndom, const int64_t *dom,
                       const char *opname) {
  tl_buffer *b = r->buffer;
  int n = r->ndim ? r->ndim : b->ndim;
  cs->buf = b;
  cs->ndim = n;
  cs->min = mins;
  cs->ext = tl_arena_alloc(&st->m->arena, sizeof(int64_t) * (size_t)(n > 0 ? n : 1));
  cs->map = tl_arena_alloc(&st->m->arena, sizeof(int) * (size_t)(n > 0 ? n : 1));
  if (!cs->ext || !cs->map) {
    st->oom = true;
    return false;
  }
  cs->L = NULL;
  if (is_shared(b)) {
    if (!(cs->L = tl_smem_layout_get(st->m, b))) {
      sc_fail(st, "shared buffer '%s' needs a static shape of at most 2 dims (plus pipeline stages)", b->name);
      return false;
    }
  }
  int dk = 0;
  for (int k = 0; k < n; k++) {
    if (!mins[k]) {
      st->oom = true;
      return false;
    }
    tl_expr *e = r->ndim ? r->extent[k] : b->shape[k];
    if (!tl_expr_affine_const(e, &cs->ext[k]) || cs->ext[k] < 1) {
      tl_error(st->env->d, st->loc, "%s with a non-constant extent (operand '%s') is not lowered yet", opname, b->name);
      st->env->errors++;
      return false;
    }
    if (cs->ext[k] == 1) {
      cs->map[k] = -1;
      continue;
    }
    while (dk < ndom && dom[dk] == 1) dk++;
    if (dk >= ndom || dom[dk] != cs->ext[k]) {
      tl_error(st->env->d, st->loc, "%s operand '%s' does not match the shape of the other operand", opname, b->name);
      st->env->errors++;
      return false;
    }
    cs->map[k] = dk++;
  }
  while (dk < ndom && dom[dk] == 1) dk++;
  if (dk != ndom) {
    tl_error(st->env->d, st->loc, "%s operand '%s' does not match the shape of the other operand", opname, b->name);
    st->env->errors++;
    return false;
  }
  return true;
}

/* Can side cs carry vectors of w along the last domain dim (ndom - 1)? */
static bool side_vec(sc_state *st, const cside *cs, int ndom, int64_t w) {
  if (w == 1) return true;
  int last = cs->ndim - 1;
  if (last < 0 || cs->map[last] != ndom - 1) return false;
  if (w * tl_dtype_bytes(cs->buf->dtype) > 16) return false;
  if (!tl_expr_divisible(cs->min[last], w, NULL)) return false;
  if (cs->L) return cs->L->row_stride % w == 0 && cs->L->stage_elems % w == 0;
  if (cs->buf->strides || cs->buf->dtype.lanes != 1) return false;
  int64_t dim;
  (void)st;
  return tl_expr_is_const_int(cs->buf->shape[last], &dim) && dim % w == 0;
}

/* Indices of side cs at domain index idx (n-d, logical). */
static tl_expr **side_idx(sc_state *st, const cside *cs, tl_expr **idx) {
  tl_module *m = st->m;
  tl_expr **ix = tl_arena_alloc(&m->arena, sizeof(tl_expr *) * (size_t)(cs->ndim > 0 ? cs->ndim : 1));
  if (!ix) {
    st->oom = true;
    return NULL;
  }
  for (int k = 0; k < cs->ndim; k++) {
    ix[k] = cs->map[k] >= 0 ? tl_lo_add(m, st->loc, cs->min[k], idx[cs->map[k]]) : cs->min[k];
    if (!ix[k]) {
      st->oom = true;
      return NULL;
    }
  }
  return ix;
}

/* In-bounds condition of a global access at ix (the whole vector: the row
 * length and ix[last] are multiples of w).  Provably true parts dropped. */
static tl_expr *in_bounds(sc_state *st, const cside *cs, tl_expr **ix) {
  tl_expr *cond = tl_lo_bounds_cond(st->m, st->loc, st->env->ranges, cs->buf, cs->ndim, ix, 1,
                                    tl_ir_int(st->m, st->loc, TL_BOOL, 1));
  if (!cond) st->oom = true;
  return cond;
}

/* Row-major flat element offset of a global access, in int64 (the
 * buffer's strides when it has them: T.StridedTensor). */
static tl_expr *global_flat(sc_state *st, const cside *cs, tl_expr **ix) {
  tl_module *m = st->m;
  tl_loc loc = st->loc;
  tl_expr *off = tl_ir_int(m, loc, TL_INT64, 0);
  for (int k = 0; cs->buf->strides && k < cs->ndim && off; k++) {
    tl_expr *s = cs->buf->strides[k], *x = ix[k];
    if (!tl_dtype_eq(s->dtype, TL_INT64)) s = tl_ir_cast(m, loc, TL_INT64, s);
    if (!tl_dtype_eq(x->dtype, TL_INT64)) x = tl_ir_cast(m, loc, TL_INT64, x);
    off = tl_ir_binary(m, loc, TL_OP_ADD, off, tl_ir_binary(m, loc, TL_OP_MUL, x, s));
  }
  for (int k = 0; !cs->buf->strides && k < cs->ndim && off; k++) {
    tl_expr *d = cs->buf->shape[k];
    if (!tl_dtype_eq(d->dtype, TL_INT64)) d = tl_ir_cast(m, loc, TL_INT64, d);
    tl_expr *x = ix[k];
    if (!tl_dtype_eq(x->dtype, TL_INT64)) x = tl_ir_cast(m, loc, TL_INT64, x);
    off = tl_ir_binary(m, loc, TL_OP_ADD, tl_ir_binary(m, loc, TL_OP_MUL, off, d), x);
  }
  if (!off) st->oom = true;
  return off;
}

static tl_expr *zero_vec(sc_state *st, tl_dtype t, int64_t w) {
  t.lanes = 1;
  tl_expr *z = tl_dtype_is_float(t) ? tl_ir_float(st->m, st->loc, t, 0.0) : tl_ir_int(st->m, st->loc, t, 0);
  return tl_lo_broadcast(st->m, st->loc, z, (int)w);
}

/* One side's access: the buffer to use and its index list (a flat offset,
 * as a ramp when w > 1, for shared; n-d for global). */
static tl_expr **access(sc_state *st, const cside *cs, tl_expr **ix, int64_t w, int *n_out, tl_buffer **b_out) {
  tl_module *m = st->m;
  tl_expr **out;
  if (cs->L) {
    out = tl_arena_alloc(&m->arena, sizeof(tl_expr *));
    if (!out || !(out[0] = tl_lower_smem_index(m, st->loc, cs->buf, cs->ndim, ix))) {
      st->oom = true;
      return NULL;
    }
    *n_out = 1;
    *b_out = cs->L->flat;
  } else {
    out = tl_arena_alloc(&m->arena, sizeof(tl_expr *) * (size_t)cs->ndim);
    if (!out) {
      st->oom = true;
      return NULL;
    }
    memcpy(out, ix, sizeof(tl_expr *) * (size_t)cs->ndim);
    *n_out = cs->ndim;
    *b_out = cs->buf;
  }
  if (w > 1 && !(out[*n_out - 1] = tl_lo_ramp(m, st->loc, out[*n_out - 1], (int)w))) {
    st->oom = true;
    return NULL;
  }
  return out;
}

typedef struct copy_plan {
  cside src, dst;
  int ndom;
  int64_t *dom;
  int64_t w;
  bool async; /* emit cp.async */
} copy_plan;

static tl_stmt *chunk(sc_state *st, const copy_plan *p, tl_expr **idx) {
  tl_module *m = st->m;
  tl_loc loc = st->loc;
  tl_expr **si = side_idx(st, &p->src, idx), **di = side_idx(st, &p->dst, idx);
  if (!si || !di) return NULL;
  tl_expr *scond = p->src.L ? NULL : in_bounds(st, &p->src, si);
  tl_expr *dcond = p->dst.L ? NULL : in_bounds(st, &p->dst, di);
  if (st->oom) return NULL;
  int ns, nd;
  tl_buffer *sb, *db;
  tl_expr **sa = access(st, &p->src, si, p->w, &ns, &sb);
  tl_expr **da = access(st, &p->dst, di, p->w, &nd, &db);
  if (!sa || !da) return NULL;
  if (p->async) {
    int op = TL_INTRIN_PTX_CP_ASYNC;
    tl_expr *args[6];
    args[0] = tl_ir_buffer_ref(m, loc, db);
    args[1] = tl_lower_smem_index(m, loc, p->dst.buf, p->dst.ndim, di);
    args[2] = tl_ir_buffer_ref(m, loc, p->src.buf);
    args[3] = global_flat(st, &p->src, si);
    args[4] = tl_lo_int(m, loc, p->w * tl_dtype_bytes(p->src.buf->dtype));
    args[5] = scond;
    for (int i = 0; i < 6; i++)
      if (!args[i]) {
        st->oom = true;
        return NULL;
      }
    tl_stmt *s = tl_lo_eval(m, loc, op >= 0 ? tl_ir_call(m, loc, op, 6, args) : NULL);
    if (!s) st->oom = true;
    return s;
  }
  tl_dtype vt = p->dst.buf->dtype, lt = p->src.buf->dtype;
  vt.lanes = (uint16_t)p->w;
  lt.lanes = (uint16_t)p->w;
  tl_expr *ld = tl_ir_load(m, loc, sb, ns, sa);
  if (!ld) {
    st->oom = true;
    return NULL;
  }
  ld->dtype = lt;
  tl_expr *val = tl_lo_cast(m, loc, vt, ld);
  tl_stmt *s = tl_lo_store(m, loc, db, nd, da, val);
  if (!s) {
    st->oom = true;
    return NULL;
  }
  if (scond) {
    tl_stmt *z = tl_lo_store(m, loc, db, nd, da, zero_vec(st, p->dst.buf->dtype, p->w));
    if (!z || !(s = tl_lo_if(m, loc, scond, s, z))) {
      st->oom = true;
      return NULL;
    }
  }
  if (dcond && !(s = tl_lo_if(m, loc, dcond, s, NULL))) {
    st->oom = true;
    return NULL;
  }
  return s;
}

tl_stmt *tl_lower_shared_copy(tl_lower_env *env, const tl_stmt *s, tl_expr **src_min, tl_expr **dst_min) {
  sc_state st = {env, env->m, s->loc, false};
  tl_module *m = env->m;
  tl_loc loc = s->loc;
  bool async_op = s->u.tile.op == TL_TILE_ASYNC_COPY;
  const char *opname = async_op ? "T.async_copy" : "T.copy";
  if (s->u.tile.nargs < 2 || !src_min || !dst_min) return NULL;
  const tl_region *sr = &s->u.tile.args[0].region, *dr = &s->u.tile.args[1].region;
  /* The domain: the shared operand's extents (the destination's if both). */
  const tl_region *domr = is_shared(dr->buffer) ? dr : sr;
  int nd = domr->ndim ? domr->ndim : domr->buffer->ndim;
  copy_plan p;
  memset(&p, 0, sizeof p);
  p.dom = tl_arena_alloc(&m->arena, sizeof(int64_t) * (size_t)(nd > 0 ? nd : 1));
  if (!p.dom) return NULL;
  int ndom = 0;
  int64_t total = 1;
  for (int k = 0; k < nd; k++) {
    int64_t e;
    tl_expr *x = domr->ndim ? domr->extent[k] : domr->buffer->shape[k];
    if (!tl_expr_is_const_int(x, &e) || e < 1 || __builtin_mul_overflow(total, e, &total) || total > INT32_MAX) {
      tl_error(env->d, loc, "%s with a non-constant or empty extent (operand '%s') is not lowered yet", opname,
               domr->buffer->name);
      env->errors++;
      return NULL;
    }
    if (e != 1) p.dom[ndom++] = e;
  }
  if (ndom == 0) p.dom[ndom++] = 1;
  p.ndom = ndom;
  if (!make_cside(&st, &p.src, sr, src_min, ndom, p.dom, opname) ||
      !make_cside(&st, &p.dst, dr, dst_min, ndom, p.dom, opname))
    return NULL;
  /* Vector width. */
  int eb = tl_dtype_bytes(p.src.buf->dtype);
  if (tl_dtype_bytes(p.dst.buf->dtype) > eb) eb = tl_dtype_bytes(p.dst.buf->dtype);
  int64_t w = eb >= 1 && eb <= 16 ? 16 / eb : 1;
  for (; w > 1; w /= 2)
    if (p.dom[ndom - 1] % w == 0 && side_vec(&st, &p.src, ndom, w) && side_vec(&st, &p.dst, ndom, w)) break;
  p.w = w;
  int64_t bytes = w * tl_dtype_bytes(p.src.buf->dtype);
  p.async = async_op && !p.src.L && p.dst.L && tl_dtype_eq(p.src.buf->dtype, p.dst.buf->dtype) &&
            (bytes == 4 || bytes == 8 || bytes == 16);
  /* Chunks dealt to threads. */
  int64_t T = env->threads > 0 ? env->threads : 1;
  int64_t C = total / w, nq = (C + T - 1) / T;
  tl_var *q = NULL;
  tl_expr *qe;
  if (nq > 1) {
    if (!(q = tl_names_fresh_var(env->names, loc, "vq", TL_INT32, TL_VAR_LOOP)) ||
        !tl_ranges_set(env->ranges, q, 0, nq - 1))
      return NULL;
    qe = tl_ir_var(m, loc, q);
  } else {
    qe = tl_lo_int(m, loc, 0);
  }
  tl_expr *tid = T > 1 ? tl_lo_thread_index(m, loc) : tl_lo_int(m, loc, 0);
  tl_expr *c = tl_lo_add(m, loc, tl_lo_mul(m, loc, qe, T), tid);
  if (!c) return NULL;
  tl_expr **idx = tl_arena_alloc(&m->arena, sizeof(tl_expr *) * (size_t)ndom);
  if (!idx) return NULL;
  int64_t stride = 1;
  for (int k = ndom - 1; k >= 0; k--) {
    int64_t dk = k == ndom - 1 ? p.dom[k] / w : p.dom[k];
    tl_expr *x = tl_lo_fdiv(m, loc, c, stride, env->ranges);
    if (k > 0) x = tl_lo_fmod(m, loc, x, dk, env->ranges);
    if (k == ndom - 1) x = tl_lo_mul(m, loc, x, w);
    if (!(idx[k] = x)) return NULL;
    stride *= dk;
  }
  tl_stmt *body = chunk(&st, &p, idx);
  if (!body) {
    if (q) tl_ranges_unset(env->ranges, q);
    return NULL;
  }
  if (C % T != 0) {
    tl_range r;
    if (!(tl_expr_range(env->ranges, c, &r) && r.hi < C)) {
      tl_expr *cond = tl_ir_binary(m, loc, TL_OP_LT, c, tl_lo_int(m, loc, C));
      if (!(body = tl_lo_if(m, loc, cond, body, NULL))) return NULL;
    }
  }
  if (q) {
    tl_ranges_unset(env->ranges, q);
    body = tl_lo_for(m, loc, nq <= 16 ? TL_LOOP_UNROLL : TL_LOOP_SERIAL, q, tl_lo_int(m, loc, nq), body);
  }
  return body;
}
