/* The tile ops of the reference evaluator (ref_eval.c runs everything
 * else), each by its definition (TileLang's tilelang/language modules):
 *  - T.copy(src, dst): element-wise over the two regions, whose extents
 *    agree after dropping extent-1 dims (so both are walked in row-major
 *    order together); the value is converted to dst's dtype (floats round to
 *    nearest even).  Out-of-bounds global elements (region min + index
 *    outside the tensor's dims) read as 0 and are not written.
 *  - T.gemm(A, B, C): C[i, j] = round_C(C[i, j] + sum_k A(i, k) * B(k, j)),
 *    with op(A), op(B) per transpose_A/B, the sum computed in float64 and
 *    rounded once to C's dtype (ints: exact in float64, then wrapped);
 *    clear_accum takes 0 for the old C.  A float16 C, and a float32 C of
 *    float16/bfloat16 operands, follow the mma.sync instruction instead: k
 *    in chunks of 16 (m16n8k16's K) in increasing order, each chunk's
 *    products summed in float64, added to C and C rounded to its dtype once
 *    per chunk (tl_mma_step, interp.h; the SIMT
 *    executor's T.ptx_mma computes the same steps, so the two agree bit for
 *    bit; docs/simt-ir.md, T.ptx_mma).  float32/tfloat32 (as tf32), int8/
 *    uint8, float8_e4m3/e5m2 and float64 operands follow their instruction likewise (issue
 *    14, gemm_chain): operands rounded to tf32 (cvt.rna), k in chunks of
 *    the instruction's k (8, 32, 4), each chunk tl_mma_step_kind.
 *  - T.fill(region, v) / T.clear(region): every element set to v (0),
 *    converted to the buffer's dtype; out-of-bounds global elements skipped.
 *  - T.reduce_{max,min,sum,abssum,absmax}(src, dst, dim, clear): each dst
 *    element combines the src elements along dim (converted to dst's
 *    dtype) in float64 (int64 for ints), starting from the identity (-inf,
 *    +inf, the int type's min/max, 0 for the sums and absmax) when clear,
 *    else from dst; rounded once to dst's dtype.  max/min ignore NaN (as
 *    fmaxf/fminf and the GPU's max.f32 do).
 *  - T.atomic_add(dst, value) (and T.atomic_max / _min / _addx2 / _addx4,
 *    re_atomic_apply): dst += value (converted to dst's dtype, the
 *    add done in dst's dtype as atomicAdd does), for a scalar value every
 *    element of the dst region, for a region value element-wise as T.copy.
 *  - T.use_swizzle and T.annotate_layout change how, not what: no-ops.
 * Region operands of shared, fragment and local buffers must lie inside the
 * buffer (an error otherwise).  Operands are resolved once per op and the
 * element loops walk precomputed strides; T.gemm copies its operands into
 * contiguous float64 rows (A row-major, B transposed) so that the inner
 * product is a tight loop. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "Interp/ref_eval_internal.h"

typedef struct rregion {
  re_buf *rb;
  int ndim;
  int64_t min[RE_MAX_DIMS], ext[RE_MAX_DIMS];
  int64_t total;
  tl_loc loc;
} rregion;

static const char *op_name(const tl_stmt *s) { return tl_tile_ops[s->u.tile.op].name; }

/* Appends "(e0, e1, ...)" of r's extents to a small buffer. */
static const char *ext_text(const rregion *r, char *buf, size_t n) {
  size_t k = 0;
  k += (size_t)snprintf(buf + k, n - k, "(");
  for (int d = 0; d < r->ndim && k < n; d++)
    k += (size_t)snprintf(buf + k, n - k, "%s%lld", d ? ", " : "", (long long)r->ext[d]);
  if (k < n) snprintf(buf + k, n - k, ")");
  return buf;
}

static bool region_eval(re_state *st, const tl_stmt *s, int i, rregion *r) {
  const tl_operand *o = &s->u.tile.args[i];
  r->loc = o->loc.file ? o->loc : s->loc;
  if (o->kind != TL_OPND_REGION || !o->region.buffer) {
    re_error(st, r->loc, "T.%s: operand %d must be a buffer region", op_name(s), i + 1);
    return false;
  }
  const tl_region *g = &o->region;
  r->rb = re_buf_of(st, g->buffer, r->loc);
  if (!r->rb) return false;
  bool whole = g->ndim == 0 && !g->extent;
  r->ndim = whole ? r->rb->ndim : g->ndim;
  if (r->ndim != r->rb->ndim) {
    re_error(st, r->loc, "T.%s: region of '%s' has %d dimension%s but the buffer has %d", op_name(s), g->buffer->name,
             r->ndim, r->ndim == 1 ? "" : "s", r->rb->ndim);
    return false;
  }
  r->total = 1;
  for (int d = 0; d < r->ndim; d++) {
    r->min[d] = whole || !g->min || !g->min[d] ? 0 : re_eval_int(st, g->min[d]);
    r->ext[d] = whole || !g->extent || !g->extent[d] ? r->rb->shape[d] : re_eval_int(st, g->extent[d]);
    if (st->failed) return false;
    if (r->ext[d] < 0) {
      re_error(st, r->loc, "T.%s: region of '%s' has negative extent %lld in dimension %d", op_name(s), g->buffer->name,
               (long long)r->ext[d], d);
      return false;
    }
    if (__builtin_mul_overflow(r->total, r->ext[d], &r->total)) {
      re_error(st, r->loc, "T.%s: region of '%s' is too large", op_name(s), g->buffer->name);
      return false;
    }
  }
  return true;
}

/* Non-global regions must lie inside their buffer; global ones may stick
 * out (padding) unless must_fit. */
static bool region_fits(re_state *st, const tl_stmt *s, const rregion *r, bool must_fit) {
  if (r->rb->b->scope == TL_SCOPE_GLOBAL && !must_fit) return true;
  if (r->total == 0) return true;
  for (int d = 0; d < r->ndim; d++)
    if (r->min[d] < 0 || r->min[d] > r->rb->shape[d] - r->ext[d]) {
      int64_t end;
      char hi[48];
      if (__builtin_add_overflow(r->min[d], r->ext[d], &end))
        snprintf(hi, sizeof hi, "%lld + %lld", (long long)r->min[d], (long long)r->ext[d]);
      else snprintf(hi, sizeof hi, "%lld", (long long)end);
      re_error(st, r->loc,
               "T.%s: region %lld:%s of dimension %d is out of bounds of %s buffer '%s' "
               "(extent %lld)",
               op_name(s), (long long)r->min[d], hi, d, tl_scope_name(r->rb->b->scope), r->rb->b->name,
               (long long)r->rb->shape[d]);
      return false;
    }
  return true;
}

/* The extents agree after dropping extent-1 dims. */
static bool same_extents(const rregion *a, const rregion *b) {
  if (a->total != b->total) return false;
  int i = 0, j = 0;
  for (;;) {
    while (i < a->ndim && a->ext[i] == 1) i++;
    while (j < b->ndim && b->ext[j] == 1) j++;
    if (i >= a->ndim || j >= b->ndim) return i >= a->ndim && j >= b->ndim;
    if (a->ext[i] != b->ext[j]) return false;
    i++, j++;
  }
}

static bool check_same(re_state *st, const tl_stmt *s, const rregion *a, const rregion *b, const char *an,
                       const char *bn) {
  if (same_extents(a, b)) return true;
  char x[160], y[160];
  re_error(st, s->loc, "T.%s: extents disagree: %s '%s' has %s but %s '%s' has %s", op_name(s), an, a->rb->b->name,
           ext_text(a, x, sizeof x), bn, b->rb->b->name, ext_text(b, y, sizeof y));
  return false;
}

/* Offset of the element at idx (relative to the region's min); false (and
 * offset 0) when it lies outside the buffer, however far (a region at
 * A[0, 2**63 - 1] pads without overflowing). */
static inline bool elem_at(const rregion *r, const int64_t *idx, int64_t *off) {
  const re_buf *rb = r->rb;
  int64_t o = 0;
  *off = 0;
  for (int d = 0; d < r->ndim; d++) {
    int64_t c;
    if (__builtin_add_overflow(r->min[d], idx[d], &c) || c < 0 || c >= rb->shape[d]) return false;
    o += c * rb->stride[d]; /* in bounds: at most the buffer's size */
  }
  *off = o;
  return true;
}

static inline void next_idx(const rregion *r, int64_t *idx) {
  for (int d = r->ndim - 1; d >= 0; d--) {
    if (++idx[d] < r->ext[d]) return;
    idx[d] = 0;
  }
}

/* Integer attribute i of s (its default when absent; strings take the
 * default too). */
static bool attr_int(re_state *st, const tl_stmt *s, int i, int64_t *v) {
  const tl_tile_op_info *info = &tl_tile_ops[s->u.tile.op];
  *v = 0;
  if (i >= info->nattrs) return true;
  const tl_expr *e = s->u.tile.attrs ? s->u.tile.attrs[i] : NULL;
  *v = info->attrs[i].default_int;
  if (!e || e->kind == TL_EXPR_STRING) return true;
  re_val x = re_eval(st, e);
  if (st->failed) return false;
  *v = tl_dtype_is_float(e->dtype) ? (int64_t)x.f : x.i;
  return true;
}

/* ------------------------------------------------------------------ copy */
static bool op_copy(re_state *st, const tl_stmt *s) {
  rregion a, b;
  if (!region_eval(st, s, 0, &a) || !region_eval(st, s, 1, &b)) return false;
  if (!check_same(st, s, &a, &b, "source", "destination")) return false;
  if (!region_fits(st, s, &a, false) || !region_fits(st, s, &b, false)) return false;
  int64_t ia[RE_MAX_DIMS] = {0}, ib[RE_MAX_DIMS] = {0};
  tl_dtype ta = a.rb->dt, tb = b.rb->dt;
  bool same = tl_dtype_eq(ta, tb);
  for (int64_t l = 0; l < a.total; l++) {
    int64_t oa, ob;
    re_val v = {0};
    bool in_a = elem_at(&a, ia, &oa), in_b = elem_at(&b, ib, &ob);
    if (in_a) v = re_buf_get(a.rb, oa);
    if (in_a && in_b) re_note_unwritten(st, a.rb, oa, v, a.loc); /* copied out of bounds: not read */
    if (!same) v = re_convert(v, ta, tb);
    if (in_b) re_buf_set(b.rb, ob, v);
    next_idx(&a, ia);
    next_idx(&b, ib);
  }
  return true;
}

/* ------------------------------------------------------------------ fill */
static bool op_fill(re_state *st, const tl_stmt *s, bool clear) {
  rregion r;
  if (!region_eval(st, s, 0, &r) || !region_fits(st, s, &r, false)) return false;
  re_val v = {0};
  if (!clear) {
    const tl_operand *o = &s->u.tile.args[1];
    if (o->kind != TL_OPND_EXPR || !o->expr) {
      re_error(st, s->loc, "T.fill: the value must be a scalar expression");
      return false;
    }
    v = re_eval(st, o->expr);
    if (st->failed) return false;
    v = re_convert(v, o->expr->dtype, r.rb->dt);
  }
  int64_t idx[RE_MAX_DIMS] = {0};
  for (int64_t l = 0; l < r.total; l++) {
    int64_t off;
    if (elem_at(&r, idx, &off)) re_buf_set(r.rb, off, v);
    next_idx(&r, idx);
  }
  return true;
}

/* ------------------------------------------------------------------ gemm */
typedef struct mat2 {
  int64_t rows, cols, rs, cs, base;
} mat2;

/* The 2-D view of a gemm operand: leading extent-1 dims dropped. */
static bool as_mat(re_state *st, const rregion *r, const char *what, mat2 *m) {
  int first = 0;
  while (r->ndim - first > 2 && r->ext[first] == 1) first++;
  if (r->ndim - first != 2) {
    char x[160];
    re_error(st, r->loc, "T.gemm: %s must be 2-D, but '%s' has extents %s", what, r->rb->b->name,
             ext_text(r, x, sizeof x));
    return false;
  }
  m->base = 0;
  for (int d = 0; d < r->ndim; d++) m->base += r->min[d] * r->rb->stride[d];
  m->rows = r->ext[r->ndim - 2];
  m->cols = r->ext[r->ndim - 1];
  m->rs = r->rb->stride[r->ndim - 2];
  m->cs = r->rb->stride[r->ndim - 1];
  return true;
}

static double *scratch(re_state *st, size_t n) {
  if (n > st->scratch_cap) {
    double *p = realloc(st->scratch, n * sizeof *p);
    if (!p) return NULL;
    st->scratch = p;
    st->scratch_cap = n;
  }
  return st->scratch;
}

/* Operand element as float64 (ints exactly). */
static inline double as_double(const re_buf *rb, int64_t off) {
  if (!rb->native && rb->isf) return ((const double *)rb->data)[off];
  re_val v = re_buf_get(rb, off);
  return rb->isf ? v.f : (double)v.i;
}

/* C (+)= A B for the tf32, int8, fp8 and f64 instructions (lib/Support/mma.h):
 * per element, the k-chunks of the instruction's k in increasing order,
 * each tl_mma_step_kind (interp.h), the step the SIMT executor's T.ptx_mma
 * computes.  am: M rows of K, bm: N rows of K (operands already rounded). */
static bool gemm_chain(re_state *st, const mat2 *c, re_buf *cb, const double *am, const double *bm, int64_t M,
                       int64_t N, int64_t K, const tl_mma_info *mi, bool clear) {
  (void)st;
  bool cf = tl_dtype_is_float(cb->dt);
  for (int64_t i = 0; i < M; i++)
    for (int64_t j = 0; j < N; j++) {
      int64_t off = c->base + i * c->rs + j * c->cs;
      re_val old = {0};
      if (!clear) old = re_buf_get(cb, off);
      double acc = cf ? old.f : (double)old.i;
      for (int64_t k0 = 0; k0 < K; k0 += mi->k) {
        int n = K - k0 < mi->k ? (int)(K - k0) : mi->k;
        acc = tl_mma_step_kind(mi->kind, am + i * K + k0, bm + j * K + k0, 1, n, acc, cb->dt);
      }
      re_val v;
      if (cf) v.f = acc;
      else v.i = (int64_t)acc;
      re_buf_set(cb, off, v);
    }
  return true;
}

/* T.gemm(A, B, C, transpose_B=True, packed_int4=True): A (M, K/2) and B
 * (N, K/2) int8 / uint8, each byte two int4 / uint4 values along K, the
 * even one in the low nibble (the verifier has checked the form). */
static bool gemm_packed4(re_state *st, const tl_stmt *s, const rregion *A, const rregion *B, const rregion *C,
                         const mat2 *a, const mat2 *b, const mat2 *c, bool clear) {
  int64_t M = a->rows, KB = a->cols, N = b->rows, K = 2 * KB;
  if (KB != b->cols || M != c->rows || N != c->cols) {
    re_error(st, s->loc,
             "T.gemm (packed_int4): shapes disagree at run time: A %lld x %lld, B %lld x %lld, C %lld x %lld",
             (long long)M, (long long)KB, (long long)N, (long long)b->cols, (long long)c->rows, (long long)c->cols);
    return false;
  }
  if (M == 0 || N == 0) return true;
  double *am = scratch(st, (size_t)((M + N) * K) + 1);
  if (!am) {
    re_error(st, s->loc, "T.gemm: out of memory");
    return false;
  }
  double *bm = am + M * K;
  bool sa = A->rb->dt.code == TL_TYPE_INT, sb = B->rb->dt.code == TL_TYPE_INT;
  for (int64_t i = 0; i < M; i++)
    for (int64_t k = 0; k < K; k++)
      am[i * K + k] = tl_nibble((uint8_t)re_buf_get(A->rb, a->base + i * a->rs + (k / 2) * a->cs).i, (int)(k % 2), sa);
  for (int64_t j = 0; j < N; j++)
    for (int64_t k = 0; k < K; k++)
      bm[j * K + k] = tl_nibble((uint8_t)re_buf_get(B->rb, b->base + j * b->rs + (k / 2) * b->cs).i, (int)(k % 2), sb);
  tl_mma_info mmi = tl_mma_info_packed4(A->rb->dt, C->rb->dt);
  return gemm_chain(st, c, C->rb, am, bm, M, N, K, &mmi, clear);
}

/* The dense A (M x K, row-major) of T.gemm_sp's A_sparse a and metadata e
 * (lib/Support/mma.h "2:4 structured sparsity"): group g of row i keeps
 * A_sparse (i, 2g) and (i, 2g+1) at K 4g + the nibble's two positions; an
 * unordered nibble (first >= second) is an error. */
static bool sp_dense(re_state *st, const tl_stmt *s, const rregion *A, const rregion *E, const mat2 *a, const mat2 *e,
                     bool tA, bool tE, int ef, int64_t M, int64_t K, double *am) {
  int64_t ars = tA ? a->cs : a->rs, acs = tA ? a->rs : a->cs, ers = tE ? e->cs : e->rs, ecs = tE ? e->rs : e->cs;
  int eb = E->rb->dt.bits;
  memset(am, 0, sizeof *am * (size_t)(M * K));
  for (int64_t i = 0; i < M; i++)
    for (int64_t g = 0; g < K / TL_SPARSE_GROUP; g++) {
      int64_t k = g * TL_SPARSE_GROUP;
      uint64_t w = (uint64_t)re_buf_get(E->rb, e->base + i * ers + (k / ef) * ecs).i & ((1ull << eb) - 1);
      unsigned nib = (unsigned)(w >> (4 * ((k % ef) / TL_SPARSE_GROUP))) & 15u, i0 = nib & 3u, i1 = nib >> 2;
      if (i0 >= i1) {
        re_error(st, s->loc,
                 "T.gemm_sp: the metadata of row %lld, K %lld..%lld is positions (%u, %u): not ordered (2:4 "
                 "metadata names the first kept value's position before the second's, first < second)",
                 (long long)i, (long long)k, (long long)k + 3, i0, i1);
        return false;
      }
      am[i * K + k + i0] = as_double(A->rb, a->base + i * ars + 2 * g * acs);
      am[i * K + k + i1] = as_double(A->rb, a->base + i * ars + (2 * g + 1) * acs);
    }
  return true;
}

/* T.gemm_sp(A_sparse, E, B, C): C (+)= dense(A_sparse, E) @ B, chained over
 * the k-steps of 32 of mma.sp m16n8k32 (tl_mma_step), as the executor's. */
static bool op_gemm_sp(re_state *st, const tl_stmt *s) {
  static const char *const nm[4] = {"A_sparse", "E", "B", "C"};
  rregion R[4];
  mat2 mt[4];
  for (int k = 0; k < 4; k++)
    if (!region_eval(st, s, k, &R[k]) || !region_fits(st, s, &R[k], true) || !as_mat(st, &R[k], nm[k], &mt[k]))
      return false;
  int64_t tA, tE, tB, clear;
  if (!attr_int(st, s, 0, &tA) || !attr_int(st, s, 1, &tE) || !attr_int(st, s, 2, &tB) || !attr_int(st, s, 4, &clear))
    return false;
  const mat2 *a = &mt[0], *e = &mt[1], *b = &mt[2], *c = &mt[3];
  int ef = tl_sparse_e_factor(R[0].rb->dt, R[1].rb->dt);
  int64_t M = tA ? a->cols : a->rows, K = 2 * (tA ? a->rows : a->cols), ME = tE ? e->cols : e->rows;
  int64_t KE = (tE ? e->rows : e->cols) * ef, KB = tB ? b->cols : b->rows, N = tB ? b->rows : b->cols;
  if (!ef || K != KB || K != KE || ME != M || M != c->rows || N != c->cols || K % TL_SPARSE_GROUP) {
    re_error(st, s->loc,
             "T.gemm_sp: shapes disagree at run time: A_sparse gives M=%lld, K=%lld; E gives M=%lld, K=%lld; B gives "
             "K=%lld, N=%lld; C is %lld x %lld",
             (long long)M, (long long)K, (long long)ME, (long long)KE, (long long)KB, (long long)N, (long long)c->rows,
             (long long)c->cols);
    return false;
  }
  if (M == 0 || N == 0) return true;
  double *am = scratch(st, (size_t)(M * K + N * K) + 1);
  if (!am) {
    re_error(st, s->loc, "T.gemm_sp: out of memory");
    return false;
  }
  double *bm = am + M * K;
  if (!sp_dense(st, s, &R[0], &R[1], a, e, tA != 0, tE != 0, ef, M, K, am)) return false;
  int64_t brs = tB ? b->cs : b->rs, bcs = tB ? b->rs : b->cs;
  for (int64_t j = 0; j < N; j++)
    for (int64_t k = 0; k < K; k++) bm[j * K + k] = as_double(R[2].rb, b->base + k * brs + j * bcs);
  tl_mma_info mi = tl_mma_sp_b_info();
  return gemm_chain(st, c, R[3].rb, am, bm, M, N, K, &mi, clear != 0);
}

static bool op_gemm(re_state *st, const tl_stmt *s) {
  rregion A, B, C;
  if (!region_eval(st, s, 0, &A) || !region_eval(st, s, 1, &B) || !region_eval(st, s, 2, &C)) return false;
  if (!region_fits(st, s, &A, true) || !region_fits(st, s, &B, true) || !region_fits(st, s, &C, true)) return false;
  mat2 a, b, c;
  if (!as_mat(st, &A, "A", &a) || !as_mat(st, &B, "B", &b) || !as_mat(st, &C, "C", &c)) return false;
  int64_t tA, tB, clear, packed;
  if (!attr_int(st, s, 0, &tA) || !attr_int(st, s, 1, &tB) || !attr_int(st, s, 3, &clear) ||
      !attr_int(st, s, 6, &packed))
    return false;
  if (packed) return gemm_packed4(st, s, &A, &B, &C, &a, &b, &c, clear != 0);
  int64_t M = tA ? a.cols : a.rows, K = tA ? a.rows : a.cols;
  int64_t KB = tB ? b.cols : b.rows, N = tB ? b.rows : b.cols;
  if (K != KB || M != c.rows || N != c.cols) {
    re_error(st, s->loc,
             "T.gemm: shapes disagree at run time: A gives M=%lld, K=%lld; B gives K=%lld, "
             "N=%lld; C is %lld x %lld",
             (long long)M, (long long)K, (long long)KB, (long long)N, (long long)c.rows, (long long)c.cols);
    return false;
  }
  if (M == 0 || N == 0) return true;
  /* A as M rows of K, B as N rows of K (transposed), contiguous. */
  size_t need = (size_t)(M * K + N * K) + 1;
  double *am = scratch(st, need);
  if (!am) {
    re_error(st, s->loc, "T.gemm: out of memory");
    return false;
  }
  double *bm = am + M * K;
  int64_t ars = tA ? a.cs : a.rs, acs = tA ? a.rs : a.cs; /* A(i, k) = i*ars + k*acs */
  int64_t brs = tB ? b.cs : b.rs, bcs = tB ? b.rs : b.cs; /* B(k, j) = k*brs + j*bcs */
  for (int64_t i = 0; i < M; i++)
    for (int64_t k = 0; k < K; k++) am[i * K + k] = as_double(A.rb, a.base + i * ars + k * acs);
  for (int64_t j = 0; j < N; j++)
    for (int64_t k = 0; k < K; k++) bm[j * K + k] = as_double(B.rb, b.base + k * brs + j * bcs);
  re_buf *cb = C.rb;
  tl_dtype ct = cb->dt;
  bool cf = tl_dtype_is_float(ct);
  /* tf32, int8, fp8 and f64 follow their instruction step by step; so
   * do f16/bf16 operands into a float32 C: rounding C to
   * float32 once per k-chunk, as the executor's mma / wgmma, and not once at
   * the end, keeps the two bit for bit equal -- a one-ulp float32 difference
   * became a one-ulp float16 difference after a cast (FlashAttention's P),
   * and that times V exceeded float32's check tolerance (fa_rs_gemm, BM=512). */
  tl_mma_info mmi = tl_mma_info_of(A.rb->dt, ct);
  bool f16acc = (ct.code == TL_TYPE_FLOAT && ct.bits == 16) ||
                (mmi.kind == TL_MMA_KIND_F16 && ct.code == TL_TYPE_FLOAT && ct.bits == 32);
  if (mmi.kind == TL_MMA_KIND_TF32 || mmi.kind == TL_MMA_KIND_I8 || mmi.kind == TL_MMA_KIND_F64 ||
      mmi.kind == TL_MMA_KIND_FP8 || mmi.kind == TL_MMA_KIND_I4) { /* I4: the int4 values, as they are */
    if (mmi.kind == TL_MMA_KIND_TF32)
      for (int64_t q = 0; q < (M + N) * K; q++) am[q] = tl_tf32_rna(am[q]);
    return gemm_chain(st, &c, cb, am, bm, M, N, K, &mmi, clear != 0);
  }
  for (int64_t i = 0; i < M; i++) {
    const double *ar = am + i * K;
    for (int64_t j = 0; j < N; j++) {
      const double *br = bm + j * K;
      double sum = 0;
      if (!f16acc)
        for (int64_t k = 0; k < K; k++) sum += ar[k] * br[k];
      int64_t off = c.base + i * c.rs + j * c.cs;
      re_val old = {0};
      if (!clear) old = re_buf_get(cb, off);
      re_val v;
      if (f16acc) {
        v.f = old.f;
        for (int64_t k0 = 0; k0 < K; k0 += TL_MMA_K) {
          int n = K - k0 < TL_MMA_K ? (int)(K - k0) : TL_MMA_K;
          v.f = tl_mma_step(ar + k0, br + k0, 1, n, v.f, ct);
        }
      } else if (cf) {
        v.f = re_round(old.f + sum, ct);
      } else {
        int64_t si = isfinite(sum) && fabs(sum) < 9.2e18 ? (int64_t)sum : 0;
        v.i = re_wrap((int64_t)((uint64_t)old.i + (uint64_t)si), ct);
      }
      re_buf_set(cb, off, v);
    }
  }
  return true;
}

/* ---------------------------------------------------------------- reduce */
static bool op_reduce(re_state *st, const tl_stmt *s) {
  int op = s->u.tile.op;
  rregion S, D;
  if (!region_eval(st, s, 0, &S) || !region_eval(st, s, 1, &D)) return false;
  if (!region_fits(st, s, &S, true) || !region_fits(st, s, &D, true)) return false;
  int64_t dim, clear;
  if (!attr_int(st, s, 0, &dim) || !attr_int(st, s, 1, &clear)) return false;
  int nd = S.ndim;
  if (dim < 0) dim += nd;
  if (dim < 0 || dim >= nd) {
    re_error(st, s->loc, "T.%s: dim is out of range for a %d-D source", op_name(s), nd);
    return false;
  }
  bool kept = D.ndim == nd;
  bool ok = kept ? D.ext[dim] == 1 : D.ndim == nd - 1;
  for (int i = 0, j = 0; ok && i < nd; i++) {
    if (i == dim) {
      if (kept) j++;
      continue;
    }
    if (S.ext[i] != D.ext[j++]) ok = false;
  }
  if (!ok) {
    char x[160], y[160];
    re_error(st, s->loc, "T.%s: dst extents %s are not src extents %s with dim %lld removed or kept as 1", op_name(s),
             ext_text(&D, y, sizeof y), ext_text(&S, x, sizeof x), (long long)dim);
    return false;
  }
  tl_dtype st_ = S.rb->dt, dt = D.rb->dt;
  bool df = tl_dtype_is_float(dt);
  bool is_max = op == TL_TILE_REDUCE_MAX || op == TL_TILE_REDUCE_ABSMAX;
  bool is_min = op == TL_TILE_REDUCE_MIN;
  bool is_abs = op == TL_TILE_REDUCE_ABSSUM || op == TL_TILE_REDUCE_ABSMAX;
  int64_t len = S.ext[dim];
  /* Walk the output positions: S's index with idx[dim] = 0. */
  int64_t idx[RE_MAX_DIMS] = {0}, didx[RE_MAX_DIMS] = {0};
  int64_t outs = len ? S.total / len : 0;
  if (len == 0) { /* empty reduction: dst gets the identity (or keeps its value) */
    outs = 1;
    for (int d = 0; d < nd; d++)
      if (d != dim) outs *= S.ext[d];
  }
  for (int64_t o = 0; o < outs; o++) {
    for (int i = 0, j = 0; i < nd; i++) {
      if (i == dim) {
        if (kept) didx[j++] = 0;
        continue;
      }
      didx[j++] = idx[i];
    }
    int64_t doff;
    (void)elem_at(&D, didx, &doff);
    double facc = 0;
    int64_t iacc = 0;
    if (clear) {
      if (df) facc = is_max && !is_abs ? -INFINITY : is_min ? INFINITY : 0;
      else if (is_max && !is_abs)
        iacc = dt.code == TL_TYPE_UINT || dt.code == TL_TYPE_BOOL ? 0
               : dt.bits >= 64                                    ? INT64_MIN
                                                                  : -(int64_t)(UINT64_C(1) << (dt.bits - 1));
      else if (is_min)
        iacc = re_wrap(
            dt.code == TL_TYPE_INT ? (dt.bits >= 64 ? INT64_MAX : (int64_t)((UINT64_C(1) << (dt.bits - 1)) - 1)) : -1,
            dt);
    } else {
      re_val v = re_buf_get(D.rb, doff);
      if (df) facc = v.f;
      else iacc = v.i;
    }
    for (int64_t r = 0; r < len; r++) {
      idx[dim] = r;
      int64_t soff;
      (void)elem_at(&S, idx, &soff);
      re_val v = re_buf_get(S.rb, soff);
      re_note_unwritten(st, S.rb, soff, v, S.loc);
      if (!tl_dtype_eq(st_, dt)) v = re_convert(v, st_, dt);
      if (df) {
        double x = is_abs ? fabs(v.f) : v.f;
        facc = is_max ? fmax(facc, x) : is_min ? fmin(facc, x) : facc + x;
      } else {
        int64_t x = v.i;
        if (is_abs && dt.code == TL_TYPE_INT && x < 0) x = (int64_t)(0 - (uint64_t)x);
        bool uns = dt.code != TL_TYPE_INT;
        if (is_max) iacc = uns ? ((uint64_t)x > (uint64_t)iacc ? x : iacc) : (x > iacc ? x : iacc);
        else if (is_min) iacc = uns ? ((uint64_t)x < (uint64_t)iacc ? x : iacc) : (x < iacc ? x : iacc);
        else iacc = (int64_t)((uint64_t)iacc + (uint64_t)x);
      }
    }
    idx[dim] = 0;
    re_val out;
    if (df) out.f = re_round(facc, dt);
    else out.i = re_wrap(iacc, dt);
    re_buf_set(D.rb, doff, out);
    /* next output position: advance idx over every dim but dim */
    for (int d = nd - 1; d >= 0; d--) {
      if (d == dim) continue;
      if (++idx[d] < S.ext[d]) break;
      idx[d] = 0;
    }
  }
  return true;
}

/* ------------------------------------------------------------ atomic_add */
static bool op_atomic_add(re_state *st, const tl_stmt *s) {
  rregion D;
  if (!region_eval(st, s, 0, &D) || !region_fits(st, s, &D, false)) return false;
  tl_dtype dt = D.rb->dt;
  int in = tl_tile_atomic_intrin(s->u.tile.op, NULL);
  const tl_operand *vo = &s->u.tile.args[1];
  int64_t di[RE_MAX_DIMS] = {0};
  if (vo->kind == TL_OPND_EXPR) {
    re_val v = re_eval(st, vo->expr);
    if (st->failed) return false;
    v = re_convert(v, vo->expr->dtype, dt);
    for (int64_t l = 0; l < D.total; l++) {
      int64_t off;
      if (elem_at(&D, di, &off)) re_buf_set(D.rb, off, re_atomic_apply(in, re_buf_get(D.rb, off), v, dt));
      next_idx(&D, di);
    }
    return true;
  }
  rregion V;
  if (!region_eval(st, s, 1, &V)) return false;
  if (!check_same(st, s, &D, &V, "destination", "value")) return false;
  if (!region_fits(st, s, &V, false)) return false;
  int64_t vi[RE_MAX_DIMS] = {0};
  for (int64_t l = 0; l < D.total; l++) {
    int64_t vo_, off;
    re_val v = {0};
    if (elem_at(&V, vi, &vo_)) v = re_buf_get(V.rb, vo_);
    if (elem_at(&V, vi, &vo_)) re_note_unwritten(st, V.rb, vo_, v, V.loc);
    v = re_convert(v, V.rb->dt, dt);
    if (elem_at(&D, di, &off)) re_buf_set(D.rb, off, re_atomic_apply(in, re_buf_get(D.rb, off), v, dt));
    next_idx(&D, di);
    next_idx(&V, vi);
  }
  return true;
}

/* -------------------------------------------------------------- dispatch */
bool re_tile_op(re_state *st, const tl_stmt *s) {
  int op = s->u.tile.op;
  if (op < 0 || op >= TL_TILE_NUM_OPS) {
    re_error(st, s->loc, "reference evaluator: unknown tile op");
    return false;
  }
  if (op == TL_TILE_USE_SWIZZLE || op == TL_TILE_ANNOTATE_LAYOUT) return true;
  if (st->per_thread) {
    for (int i = 0; i < s->u.tile.nargs; i++) {
      const tl_operand *o = &s->u.tile.args[i];
      if (o->kind != TL_OPND_REGION || !o->region.buffer) continue;
      tl_scope sc = o->region.buffer->scope;
      if (sc != TL_SCOPE_LOCAL && sc != TL_SCOPE_LOCAL_VAR && sc != TL_SCOPE_FRAGMENT) {
        re_error(st, s->loc,
                 "T.%s on %s buffer '%s' in per-thread code (the kernel body uses the thread "
                 "index): the reference evaluator runs it once per thread and cannot give a "
                 "block-wide op a meaning there",
                 op_name(s), tl_scope_name(sc), o->region.buffer->name);
        return false;
      }
    }
  }
  int need = (int)strlen(tl_tile_ops[op].operands);
  if (s->u.tile.nargs < need) {
    re_error(st, s->loc, "T.%s needs %d operands, got %d", op_name(s), need, s->u.tile.nargs);
    return false;
  }
  switch (op) {
  case TL_TILE_COPY: return op_copy(st, s);
  case TL_TILE_GEMM: return op_gemm(st, s);
  case TL_TILE_GEMM_SP: return op_gemm_sp(st, s);
  case TL_TILE_FILL: return op_fill(st, s, false);
  case TL_TILE_CLEAR: return op_fill(st, s, true);
  case TL_TILE_THREAD_ALLREDUCE: /* a top-level one runs between phases (ref_eval.c run_kernel) */
    re_error(st, s->loc,
             "T.thread_allreduce inside a loop or branch: the reference evaluator runs threads one after another "
             "and needs it at the top level of the kernel body");
    return false;
  case TL_TILE_FINALIZE_REDUCER:
    /* the tile program's T.Parallel iterations ran in order into the one
     * reducer, which holds the reduction already (docs/language.md "Reducers") */
    return true;
  case TL_TILE_REDUCE_MAX:
  case TL_TILE_REDUCE_MIN:
  case TL_TILE_REDUCE_SUM:
  case TL_TILE_REDUCE_ABSSUM:
  case TL_TILE_REDUCE_ABSMAX: return op_reduce(st, s);
  case TL_TILE_ATOMIC_ADD:
  case TL_TILE_ATOMIC_MAX:
  case TL_TILE_ATOMIC_MIN:
  case TL_TILE_ATOMIC_ADDX2:
  case TL_TILE_ATOMIC_ADDX4: return op_atomic_add(st, s);
  default: break;
  }
  re_error(st, s->loc, "T.%s is not supported by the reference evaluator", op_name(s));
  return false;
}
