/* The tile-op table (lib/IR/tir.h: tl_tile_ops[]) and each op's verifier rule.
 *
 * Role: the one place that says which tile ops exist, what operands they take
 * ('R' region, 'E' scalar expression, 'X' either, 'D' (region, layout) pairs),
 * which keyword attributes they accept with what defaults (matching TileLang,
 * tilelang/language/{copy_op,gemm_op,fill_op,reduce_op,atomic,annotations}.py),
 * and the op-specific verifier rules (shapes, scopes, dtypes).
 *
 * Algorithm: the generic checks (operand count and kinds, attribute kinds,
 * buffers in scope, index counts, integer extents) are done by verify.c before
 * a hook runs, so each hook may assume well-formed operands.  Shapes compare
 * "statically": two extents disagree only when both are integer constants
 * with different values (or, when not constants, never: an unknown extent is
 * accepted).  Messages name the rule and the values; errors are located at
 * the operand or attribute at fault when there is one, else at the statement. */
#include "IR/tir.h"
#include "Support/mma.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ----------------------------------------------------------- attributes */
static const tl_attr_info copy_attrs[] = {
    {"coalesced_width", TL_ATTR_INT, 0, NULL},
    {"disable_tma", TL_ATTR_BOOL, 0, NULL},
};
static const tl_attr_info gemm_attrs[] = {
    {"transpose_A", TL_ATTR_BOOL, 0, NULL},
    {"transpose_B", TL_ATTR_BOOL, 0, NULL},
    {"policy", TL_ATTR_POLICY, TL_POLICY_SQUARE, NULL},
    {"clear_accum", TL_ATTR_BOOL, 0, NULL},
    {"k_pack", TL_ATTR_INT, 1, NULL},
    {"wg_wait", TL_ATTR_INT, 0, NULL},
    /* A and B are int8 / uint8 tiles each byte of which holds two int4 /
     * uint4 values along K, the even one in the low nibble (K = 2 * the
     * tiles' K extent); set by lowering's pack-int4 pass on a T.gemm of
     * T.int4 tiles (lib/Lower/pack_int4.c) */
    {"packed_int4", TL_ATTR_BOOL, 0, NULL},
};
static const tl_attr_info gemm_sp_attrs[] = {
    {"transpose_A", TL_ATTR_BOOL, 0, NULL}, {"transpose_E", TL_ATTR_BOOL, 0, NULL},
    {"transpose_B", TL_ATTR_BOOL, 0, NULL}, {"policy", TL_ATTR_POLICY, TL_POLICY_SQUARE, NULL},
    {"clear_accum", TL_ATTR_BOOL, 0, NULL}, {"k_pack", TL_ATTR_INT, 1, NULL},
    {"wg_wait", TL_ATTR_INT, 0, NULL},
};
static const tl_attr_info reduce_attrs[] = {
    {"dim", TL_ATTR_INT, -1, NULL},
    {"clear", TL_ATTR_BOOL, 1, NULL},
    /* TileLang's batch=: how many rows one pass reduces together, a
     * scheduling hint that does not change the result (rows of one batch
     * are reduced independently); accepted and checked >= 1. */
    {"batch", TL_ATTR_INT, 1, NULL},
};
static const tl_attr_info atomic_attrs[] = {
    {"return_prev", TL_ATTR_BOOL, 0, NULL},
    {"memory_order", TL_ATTR_STRING, 0, NULL},
    /* TileLang's TMA reduce-add of a shared tile (a bulk copy that adds): the
     * same sums as element atomics, which is how it lowers here */
    {"use_tma", TL_ATTR_BOOL, 0, NULL},
};
static const tl_attr_info allreduce_attrs[] = {
    {"op", TL_ATTR_STRING, 0, "sum"}, /* sum, max, min */
    {"stride", TL_ATTR_INT, 1, NULL}, /* thread-index stride between the group's threads */
    {"count", TL_ATTR_INT, 1, NULL},  /* threads of a group */
};
static const tl_attr_info swizzle_attrs[] = {
    {"order", TL_ATTR_STRING, 0, "row"},
    {"enable", TL_ATTR_BOOL, 1, NULL},
};

/* ---------------------------------------------------------------- helpers */
static void verr(tl_verify_ctx *vc, tl_loc loc, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void verr(tl_verify_ctx *vc, tl_loc loc, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  tl_diag_vreport(vc->diag, TL_DIAG_ERROR, loc, fmt, ap);
  va_end(ap);
  vc->errors++;
}

static tl_loc pick_loc(tl_loc preferred, tl_loc fallback) { return preferred.file ? preferred : fallback; }

static const char *op_name(const tl_stmt *s) { return tl_tile_ops[s->u.tile.op].name; }

/* Value of integer-like attribute i of s (the default when not given).
 * Returns false when the attribute is given but not a constant. */
static bool attr_int(const tl_stmt *s, int i, int64_t *v) {
  const tl_tile_op_info *info = &tl_tile_ops[s->u.tile.op];
  const tl_expr *e = s->u.tile.attrs ? s->u.tile.attrs[i] : NULL;
  if (!e) {
    *v = info->attrs[i].default_int;
    return true;
  }
  return tl_expr_is_const_int(e, v);
}

static tl_loc attr_loc(const tl_stmt *s, int i) {
  const tl_expr *e = s->u.tile.attrs ? s->u.tile.attrs[i] : NULL;
  return e ? pick_loc(e->loc, s->loc) : s->loc;
}

/* The extents of a region operand (a region with ndim 0 and no extents is
 * the whole buffer). */
static int region_extents(const tl_region *r, tl_expr *const **ext) {
  if (r->ndim == 0 && !r->extent && r->buffer) {
    *ext = r->buffer->shape;
    return r->buffer->ndim;
  }
  *ext = r->extent;
  return r->ndim;
}

/* False only when a and b are integer constants with different values. */
static bool extents_agree(const tl_expr *a, const tl_expr *b) {
  int64_t x, y;
  if (tl_expr_is_const_int(a, &x) && tl_expr_is_const_int(b, &y)) return x == y;
  return true; /* unknown (or structurally equal): accept */
}

static bool is_const_one(const tl_expr *e) {
  int64_t v;
  return tl_expr_is_const_int(e, &v) && v == 1;
}

/* Appends "(e0, e1, ...)" for n extents. */
static void print_shape(tl_strbuf *out, tl_expr *const *ext, int n) {
  tl_strbuf_append(out, "(");
  for (int i = 0; i < n; i++) {
    if (i) tl_strbuf_append(out, ", ");
    tl_print_expr(out, ext[i]);
  }
  tl_strbuf_append(out, ")");
}

/* Region operands print as the buffer name when whole, else "NAME[...]". */
static bool region_is_whole(const tl_region *r) {
  if (r->ndim == 0 && !r->extent) return true;
  if (!r->buffer || r->ndim != r->buffer->ndim) return false;
  for (int d = 0; d < r->ndim; d++) {
    int64_t v;
    if (r->min && r->min[d] && !(tl_expr_is_const_int(r->min[d], &v) && v == 0)) return false;
    if (!r->extent || !r->extent[d]) continue;
    int64_t x, y;
    if (tl_expr_is_const_int(r->extent[d], &x) && tl_expr_is_const_int(r->buffer->shape[d], &y)) {
      if (x != y) return false;
    } else if (!tl_expr_equal(r->extent[d], r->buffer->shape[d])) {
      return false;
    }
  }
  return true;
}

static void print_region_name(tl_strbuf *out, const tl_region *r) {
  tl_strbuf_append(out, r->buffer->name);
  if (!region_is_whole(r)) tl_strbuf_append(out, "[...]");
}

/* Text helpers returning malloc'd strings (NULL-safe for printf via "?"). */
static char *shape_text(const tl_region *r) {
  tl_strbuf sb = {0};
  tl_expr *const *ext;
  int n = region_extents(r, &ext);
  print_shape(&sb, ext, n);
  return tl_strbuf_take(&sb);
}
static char *name_text(const tl_region *r) {
  tl_strbuf sb = {0};
  print_region_name(&sb, r);
  return tl_strbuf_take(&sb);
}
#define S(p) ((p) ? (p) : "?")

static bool scope_is_shared(tl_scope s) { return s == TL_SCOPE_SHARED_DYN || s == TL_SCOPE_SHARED; }

/* ------------------------------------------------------------------- copy */
/* True when two extent lists are known to disagree: after dropping
 * constant-1 extents, a pair of constants differs, or (all extents being
 * constants) the numbers of remaining dims differ.  Symbolic extents are
 * accepted. */
static bool extents_disagree(tl_expr *const *se, int sn, tl_expr *const *de, int dn) {
  bool all_const = true;
  int64_t x;
  for (int k = 0; k < sn; k++)
    if (!tl_expr_is_const_int(se[k], &x)) all_const = false;
  for (int k = 0; k < dn; k++)
    if (!tl_expr_is_const_int(de[k], &x)) all_const = false;
  int i = 0, j = 0;
  for (;;) {
    while (i < sn && is_const_one(se[i])) i++;
    while (j < dn && is_const_one(de[j])) j++;
    if (i >= sn || j >= dn) return (i < sn || j < dn) && all_const;
    if (!extents_agree(se[i], de[j])) return true;
    i++, j++;
  }
}

/* Extents must agree after dropping extent-1 dims (dtypes may differ: the
 * copy casts element-wise). */
static bool verify_copy(tl_verify_ctx *vc, const tl_stmt *s) {
  const tl_region *src = &s->u.tile.args[0].region, *dst = &s->u.tile.args[1].region;
  tl_expr *const *se, *const *de;
  int sn = region_extents(src, &se), dn = region_extents(dst, &de);
  if (!extents_disagree(se, sn, de, dn)) return true;
  char *a = name_text(src), *b = name_text(dst), *as = shape_text(src), *bs = shape_text(dst);
  verr(vc, s->loc, "T.%s: extents disagree: source %s has extents %s but destination %s has %s", op_name(s), S(a),
       S(as), S(b), S(bs));
  free(a), free(b), free(as), free(bs);
  return false;
}

/* ------------------------------------------------------------------- gemm */
/* Strips leading constant-1 extents while more than two dims remain. */
static int gemm_dims(const tl_region *r, tl_expr *const **ext) {
  int n = region_extents(r, ext);
  while (n > 2 && is_const_one((*ext)[0])) (*ext)++, n--;
  return n;
}

static const struct {
  uint8_t ab_code, ab_bits, c_code, c_bits;
} gemm_ok[] = {
    {TL_TYPE_FLOAT, 16, TL_TYPE_FLOAT, 16},
    {TL_TYPE_FLOAT, 16, TL_TYPE_FLOAT, 32},
    {TL_TYPE_BFLOAT, 16, TL_TYPE_FLOAT, 32},
    {TL_TYPE_INT, 8, TL_TYPE_INT, 32},
    {TL_TYPE_TFLOAT, 32, TL_TYPE_FLOAT, 32},
    /* float32 computed as tf32, uint8, float64 (lib/Support/mma.h) */
    {TL_TYPE_FLOAT, 32, TL_TYPE_FLOAT, 32},
    {TL_TYPE_UINT, 8, TL_TYPE_INT, 32},
    {TL_TYPE_FLOAT, 64, TL_TYPE_FLOAT, 64},
    /* float8 (m16n8k32 .e4m3/.e5m2, sm_89): A and B may be either format */
    {TL_TYPE_FLOAT8_E4M3, 8, TL_TYPE_FLOAT, 32},
    {TL_TYPE_FLOAT8_E5M2, 8, TL_TYPE_FLOAT, 32},
    /* int4 / uint4 (m16n8k64 .s4/.u4 on packed tiles: lib/Lower/pack_int4.c) */
    {TL_TYPE_INT, 4, TL_TYPE_INT, 32},
    {TL_TYPE_UINT, 4, TL_TYPE_INT, 32},
};
#define GEMM_ACCEPTED                                                                                                  \
  "A and B float16 with C float16 or float32, bfloat16 with float32, int8 with int32, "                                \
  "tfloat32 with float32, float32 (computed as tf32) with float32, uint8 with int32, "                                 \
  "float64 with float64, float8_e4m3/float8_e5m2 (either for A and for B) with float32, int4/uint4 with int32"

/* packed_int4=True: int8/uint8 A and B (the packed storage of int4/uint4)
 * with an int32 C, K along the tiles' last dim (A (M, K/2), B (N, K/2)). */
static bool verify_gemm_packed(tl_verify_ctx *vc, const tl_stmt *s, tl_dtype ta, tl_dtype tc, int64_t tA, int64_t tB) {
  int64_t packed = 0;
  if (!attr_int(s, 6, &packed) || !packed) return true;
  bool bytes = ta.bits == 8 && (ta.code == TL_TYPE_INT || ta.code == TL_TYPE_UINT);
  if (!bytes || tc.code != TL_TYPE_INT || tc.bits != 32 || tA || !tB) {
    verr(vc, attr_loc(s, 6),
         "T.gemm: packed_int4=True needs int8/uint8 A and B with an int32 C, transpose_A=False and "
         "transpose_B=True (got A %s, C %s, transpose_A=%s, transpose_B=%s)",
         tl_dtype_name(ta), tl_dtype_name(tc), tA ? "True" : "False", tB ? "True" : "False");
    return false;
  }
  return true;
}

static bool verify_gemm(tl_verify_ctx *vc, const tl_stmt *s) {
  bool ok = true;
  const tl_operand *A = &s->u.tile.args[0], *B = &s->u.tile.args[1], *C = &s->u.tile.args[2];
  const tl_operand *ops[3] = {A, B, C};
  static const char *const opn[3] = {"A", "B", "C"};
  /* Scopes. */
  if (C->region.buffer->scope != TL_SCOPE_FRAGMENT) {
    verr(vc, pick_loc(C->loc, s->loc), "T.gemm: C must be a fragment (local.fragment), but '%s' is %s",
         C->region.buffer->name, tl_scope_name(C->region.buffer->scope));
    ok = false;
  }
  for (int k = 0; k < 2; k++) {
    tl_scope sc = ops[k]->region.buffer->scope;
    if (!scope_is_shared(sc) && sc != TL_SCOPE_FRAGMENT) {
      verr(vc, pick_loc(ops[k]->loc, s->loc),
           "T.gemm: %s must be in shared memory (shared.dyn or shared) or a fragment "
           "(local.fragment), but '%s' is %s",
           opn[k], ops[k]->region.buffer->name, tl_scope_name(sc));
      ok = false;
    }
  }
  /* Ranks. */
  tl_expr *const *ext[3];
  int n[3];
  bool rank_ok = true;
  for (int k = 0; k < 3; k++) {
    n[k] = gemm_dims(&ops[k]->region, &ext[k]);
    if (n[k] != 2) {
      char *sh = shape_text(&ops[k]->region);
      verr(vc, pick_loc(ops[k]->loc, s->loc), "T.gemm: %s must be 2-D, but '%s' has shape %s", opn[k],
           ops[k]->region.buffer->name, S(sh));
      free(sh);
      rank_ok = ok = false;
    }
  }
  /* Dtypes. */
  tl_dtype ta = A->region.buffer->dtype, tb = B->region.buffer->dtype, tc = C->region.buffer->dtype;
  bool dt_ok = (tl_dtype_eq(ta, tb) || (tl_dtype_is_fp8(ta) && tl_dtype_is_fp8(tb))) && ta.lanes == 1 &&
               tb.lanes == 1 && tc.lanes == 1;
  if (dt_ok) {
    dt_ok = false;
    for (size_t k = 0; k < sizeof gemm_ok / sizeof gemm_ok[0]; k++)
      if (ta.code == gemm_ok[k].ab_code && ta.bits == gemm_ok[k].ab_bits && tc.code == gemm_ok[k].c_code &&
          tc.bits == gemm_ok[k].c_bits)
        dt_ok = true;
  }
  if (!dt_ok) {
    verr(vc, s->loc, "T.gemm: unsupported dtypes: A %s, B %s, C %s (accepted: " GEMM_ACCEPTED ")", tl_dtype_name(ta),
         tl_dtype_name(tb), tl_dtype_name(tc));
    ok = false;
  }
  if (!rank_ok) return false;
  /* M, N, K. */
  int64_t tA = 0, tB = 0;
  attr_int(s, 0, &tA);
  attr_int(s, 1, &tB);
  const tl_expr *MA = tA ? ext[0][1] : ext[0][0], *KA = tA ? ext[0][0] : ext[0][1];
  const tl_expr *KB = tB ? ext[1][1] : ext[1][0], *NB = tB ? ext[1][0] : ext[1][1];
  const tl_expr *MC = ext[2][0], *NC = ext[2][1];
  char *sa = shape_text(&A->region), *sb = shape_text(&B->region), *scc = shape_text(&C->region);
  tl_strbuf m1 = {0}, k1 = {0}, n1 = {0}, k2 = {0}, m2 = {0}, n2 = {0};
  tl_print_expr(&m1, MA), tl_print_expr(&k1, KA), tl_print_expr(&k2, KB);
  tl_print_expr(&n1, NB), tl_print_expr(&m2, MC), tl_print_expr(&n2, NC);
  /* Prefix naming the transposes in effect for the operands involved. */
  const char *pre_ab = tA && tB ? "with transpose_A=True, transpose_B=True, "
                       : tA     ? "with transpose_A=True, "
                       : tB     ? "with transpose_B=True, "
                                : "";
  const char *pre_a = tA ? "with transpose_A=True, " : "";
  const char *pre_b = tB ? "with transpose_B=True, " : "";
  if (!extents_agree(KA, KB)) {
    verr(vc, s->loc, "T.gemm: %sA %s gives M=%s, K=%s, but B %s has K=%s", pre_ab, S(sa), S(m1.data), S(k1.data), S(sb),
         S(k2.data));
    ok = false;
  }
  if (!extents_agree(MA, MC)) {
    verr(vc, s->loc, "T.gemm: %sA %s gives M=%s, K=%s, but C %s has M=%s", pre_a, S(sa), S(m1.data), S(k1.data), S(scc),
         S(m2.data));
    ok = false;
  }
  if (!extents_agree(NB, NC)) {
    verr(vc, s->loc, "T.gemm: %sB %s gives K=%s, N=%s, but C %s has N=%s", pre_b, S(sb), S(k2.data), S(n1.data), S(scc),
         S(n2.data));
    ok = false;
  }
  free(sa), free(sb), free(scc);
  tl_strbuf_free(&m1), tl_strbuf_free(&k1), tl_strbuf_free(&n1);
  tl_strbuf_free(&k2), tl_strbuf_free(&m2), tl_strbuf_free(&n2);
  int64_t kp;
  if (attr_int(s, 4, &kp) && kp != 1 && kp != 2) {
    verr(vc, attr_loc(s, 4), "T.gemm: k_pack must be 1 or 2, got %lld", (long long)kp);
    ok = false;
  }
  int64_t wg;
  if (attr_int(s, 5, &wg) && wg < -1) {
    verr(vc, attr_loc(s, 5), "T.gemm: wg_wait must be >= -1, got %lld", (long long)wg);
    ok = false;
  }
  return verify_gemm_packed(vc, s, ta, tc, tA, tB) && ok;
}

/* ---------------------------------------------------------------- gemm_sp */
/* Extent k (0: rows, 1: cols) of 2-D operand i, transposed when t. */
static const tl_expr *sp_ext(tl_expr *const *const *ext, int i, bool t, int k) { return ext[i][t ? 1 - k : k]; }

/* M, K and N of A (M, K/2), E (M, K/e_factor), B (K, N) and C (M, N) agree
 * (each transpose swaps its operand's two extents). */
static bool verify_gemm_sp_shapes(tl_verify_ctx *vc, const tl_stmt *s, tl_expr *const *const *ext, int ef) {
  int64_t t[3] = {0, 0, 0}, m, ka, ke, kb, n, mc, nc, me;
  for (int k = 0; k < 3; k++) attr_int(s, k, &t[k]);
  bool cm = tl_expr_is_const_int(sp_ext(ext, 0, t[0], 0), &m) && tl_expr_is_const_int(sp_ext(ext, 0, t[0], 1), &ka) &&
            tl_expr_is_const_int(sp_ext(ext, 1, t[1], 0), &me) && tl_expr_is_const_int(sp_ext(ext, 1, t[1], 1), &ke) &&
            tl_expr_is_const_int(sp_ext(ext, 2, t[2], 0), &kb) && tl_expr_is_const_int(sp_ext(ext, 2, t[2], 1), &n) &&
            tl_expr_is_const_int(ext[3][0], &mc) && tl_expr_is_const_int(ext[3][1], &nc);
  if (!cm) return true; /* symbolic extents: accepted (statically unknown) */
  if (2 * ka == kb && ke * ef == kb && m == mc && me == mc && n == nc) return true;
  verr(vc, s->loc,
       "T.gemm_sp: shapes disagree: A_sparse gives M=%lld, K=2*%lld=%lld; E gives M=%lld, K=%lld*%d=%lld "
       "(e_factor %d); B gives K=%lld, N=%lld; C is %lldx%lld (the rule: A_sparse (M, K/2), E (M, K/e_factor), "
       "B (K, N), C (M, N))",
       (long long)m, (long long)ka, (long long)(2 * ka), (long long)me, (long long)ke, ef, (long long)(ke * ef), ef,
       (long long)kb, (long long)n, (long long)mc, (long long)nc);
  return false;
}

static bool verify_gemm_sp(tl_verify_ctx *vc, const tl_stmt *s) {
  static const char *const opn[4] = {"A_sparse", "E", "B", "C"};
  tl_expr *const *ext[4];
  bool ok = true;
  for (int k = 0; k < 4; k++) {
    const tl_operand *o = &s->u.tile.args[k];
    tl_scope sc = o->region.buffer->scope;
    bool scope_ok = k == 3 ? sc == TL_SCOPE_FRAGMENT : scope_is_shared(sc) || sc == TL_SCOPE_FRAGMENT;
    if (!scope_ok) {
      verr(vc, pick_loc(o->loc, s->loc), "T.gemm_sp: %s must be %s, but '%s' is %s", opn[k],
           k == 3 ? "a fragment (local.fragment)" : "in shared memory or a fragment", o->region.buffer->name,
           tl_scope_name(sc));
      ok = false;
    }
    if (gemm_dims(&o->region, &ext[k]) != 2) {
      verr(vc, pick_loc(o->loc, s->loc), "T.gemm_sp: %s '%s' must be 2-D", opn[k], o->region.buffer->name);
      return false;
    }
  }
  tl_dtype ta = s->u.tile.args[0].region.buffer->dtype, te = s->u.tile.args[1].region.buffer->dtype;
  tl_dtype tb = s->u.tile.args[2].region.buffer->dtype, tc = s->u.tile.args[3].region.buffer->dtype;
  int ef = tl_sparse_e_factor(ta, te);
  bool cok =
      tc.lanes == 1 && tc.code == TL_TYPE_FLOAT && (tc.bits == 32 || (tc.bits == 16 && ta.code == TL_TYPE_FLOAT));
  if (!ef || !tl_dtype_eq(ta, tb) || !cok) {
    verr(vc, s->loc,
         "T.gemm_sp: unsupported dtypes: A_sparse %s, E %s, B %s, C %s (accepted: A and B float16 with C float16 or "
         "float32, bfloat16 with float32; E int8, uint8, int16 or uint16)",
         tl_dtype_name(ta), tl_dtype_name(te), tl_dtype_name(tb), tl_dtype_name(tc));
    return false;
  }
  return verify_gemm_sp_shapes(vc, s, ext, ef) && ok;
}

/* ------------------------------------------------------------ fill, clear */
static bool verify_fill(tl_verify_ctx *vc, const tl_stmt *s) {
  const tl_operand *v = &s->u.tile.args[1];
  if (v->expr && v->expr->dtype.lanes != 1) {
    verr(vc, pick_loc(v->loc, s->loc), "T.fill: the value must be a scalar, got %s", tl_dtype_name(v->expr->dtype));
    return false;
  }
  return true;
}

static bool verify_clear(tl_verify_ctx *vc, const tl_stmt *s) {
  (void)vc, (void)s;
  return true; /* any scope; the region was checked generically */
}

/* ------------------------------------------------------- finalize_reducer */
static bool verify_finalize_reducer(tl_verify_ctx *vc, const tl_stmt *s) {
  const tl_operand *o = &s->u.tile.args[0];
  const tl_buffer *b = o->kind == TL_OPND_REGION ? o->region.buffer : NULL;
  if (!b || !b->reducer || b->scope != TL_SCOPE_FRAGMENT) {
    verr(vc, pick_loc(o->loc, s->loc), "T.finalize_reducer: '%s' is not a buffer of T.alloc_reducer",
         b && b->name ? b->name : "?");
    return false;
  }
  return true;
}

/* ------------------------------------------------------- thread_allreduce */
static bool verify_thread_allreduce(tl_verify_ctx *vc, const tl_stmt *s) {
  const tl_operand *o = &s->u.tile.args[0], *v = &s->u.tile.args[1];
  const tl_buffer *b = o->kind == TL_OPND_REGION ? o->region.buffer : NULL;
  tl_loc at = pick_loc(o->loc, s->loc);
  if (!b || (b->scope != TL_SCOPE_LOCAL && b->scope != TL_SCOPE_LOCAL_VAR)) {
    verr(vc, at, "T.thread_allreduce: the destination '%s' must be a local buffer (T.alloc_local / T.alloc_var)",
         b && b->name ? b->name : "?");
    return false;
  }
  int nd = o->region.ndim ? o->region.ndim : b->ndim; /* a whole buffer: its shape */
  for (int d = 0; d < nd; d++) {
    int64_t e = 0;
    if (!tl_expr_is_const_int(o->region.ndim ? o->region.extent[d] : b->shape[d], &e) || e != 1) {
      verr(vc, at, "T.thread_allreduce: the destination must be one element of '%s'", b->name);
      return false;
    }
  }
  if (v->kind != TL_OPND_EXPR || !v->expr || v->expr->dtype.lanes != 1 || b->dtype.lanes != 1 ||
      b->dtype.code == TL_TYPE_BOOL) {
    verr(vc, pick_loc(v->loc, s->loc),
         "T.thread_allreduce: the value must be a scalar and the destination a "
         "non-bool scalar type");
    return false;
  }
  const tl_expr *const *at_ = (const tl_expr *const *)s->u.tile.attrs;
  const char *op = at_ && at_[0] && at_[0]->kind == TL_EXPR_STRING ? at_[0]->u.str : "sum";
  if (strcmp(op, "sum") && strcmp(op, "max") && strcmp(op, "min")) {
    verr(vc, s->loc, "T.thread_allreduce: op must be \"sum\", \"max\" or \"min\", got \"%s\"", op);
    return false;
  }
  for (int k = 1; k <= 2; k++) {
    int64_t x = 1;
    if (at_ && at_[k] && (!tl_expr_is_const_int(at_[k], &x) || x < 1 || x > 1024)) {
      verr(vc, s->loc, "T.thread_allreduce: %s must be a constant from 1 to 1024", k == 1 ? "stride" : "count");
      return false;
    }
  }
  return true;
}

/* ----------------------------------------------------------------- reduce */
static bool verify_reduce(tl_verify_ctx *vc, const tl_stmt *s) {
  bool ok = true;
  const char *name = op_name(s);
  const tl_operand *src = &s->u.tile.args[0], *dst = &s->u.tile.args[1];
  const tl_operand *ops[2] = {src, dst};
  static const char *const role[2] = {"src", "dst"};
  for (int k = 0; k < 2; k++) {
    tl_scope sc = ops[k]->region.buffer->scope;
    if (!scope_is_shared(sc) && sc != TL_SCOPE_FRAGMENT && sc != TL_SCOPE_LOCAL) {
      verr(vc, pick_loc(ops[k]->loc, s->loc), "T.%s: %s must be a fragment, shared or local buffer, but '%s' is %s",
           name, role[k], ops[k]->region.buffer->name, tl_scope_name(sc));
      ok = false;
    }
  }
  tl_expr *const *se, *const *de;
  int sn = region_extents(&src->region, &se), dn = region_extents(&dst->region, &de);
  int64_t dim = -1;
  if (!attr_int(s, 0, &dim)) return false; /* reported generically (not a constant) */
  int64_t nd = dim < 0 ? dim + sn : dim;
  if (nd < 0 || nd >= sn) {
    verr(vc, attr_loc(s, 0), "T.%s: dim %lld is out of range for src '%s' with %d dimension%s", name, (long long)dim,
         src->region.buffer->name, sn, sn == 1 ? "" : "s");
    return false;
  }
  int64_t batch = 1;
  if (!attr_int(s, 2, &batch)) return false; /* reported generically (not a constant) */
  if (batch < 1) {
    verr(vc, attr_loc(s, 2), "T.%s: batch must be >= 1, got %lld", name, (long long)batch);
    return false;
  }
  bool match = false;
  if (dn == sn - 1) { /* dim removed */
    match = true;
    for (int i = 0, j = 0; i < sn; i++) {
      if (i == nd) continue;
      if (!extents_agree(se[i], de[j++])) match = false;
    }
  }
  if (!match && dn == sn) { /* dim kept as 1 */
    match = true;
    for (int i = 0; i < sn; i++) {
      if (i == nd) {
        int64_t v;
        if (tl_expr_is_const_int(de[i], &v) && v != 1) match = false;
      } else if (!extents_agree(se[i], de[i])) {
        match = false;
      }
    }
  }
  if (!match) {
    char *ss = shape_text(&src->region), *ds = shape_text(&dst->region);
    verr(vc, s->loc, "T.%s: dst shape %s is not src shape %s with dim %lld removed or kept as 1 (dst '%s', src '%s')",
         name, S(ds), S(ss), (long long)nd, dst->region.buffer->name, src->region.buffer->name);
    free(ss), free(ds);
    ok = false;
  }
  return ok;
}

/* ------------------------------------------------------------- atomic_add */
int tl_tile_atomic_intrin(int op, int *lanes) {
  if (lanes) *lanes = op == TL_TILE_ATOMIC_ADDX2 ? 2 : op == TL_TILE_ATOMIC_ADDX4 ? 4 : 1;
  switch (op) {
  case TL_TILE_ATOMIC_ADD:
  case TL_TILE_ATOMIC_ADDX2:
  case TL_TILE_ATOMIC_ADDX4: return TL_INTRIN_PTX_ATOMIC_ADD;
  case TL_TILE_ATOMIC_MAX: return TL_INTRIN_PTX_ATOMIC_MAX;
  case TL_TILE_ATOMIC_MIN: return TL_INTRIN_PTX_ATOMIC_MIN;
  default: return -1;
  }
}

bool tl_reinterpret_ok(tl_dtype to, tl_dtype from) {
  return to.lanes <= 1 && from.lanes <= 1 && to.code != TL_TYPE_BOOL && from.code != TL_TYPE_BOOL && to.bits >= 8 &&
         to.bits % 8 == 0 && to.bits == from.bits;
}

/* T.atomic_add and its kin (tl_tile_atomic_intrin); the messages name the op. */
static bool verify_atomic_add(tl_verify_ctx *vc, const tl_stmt *s) {
  bool ok = true;
  const char *opn = tl_tile_ops[s->u.tile.op].name;
  int lanes;
  (void)tl_tile_atomic_intrin(s->u.tile.op, &lanes);
  const tl_operand *dst = &s->u.tile.args[0], *val = &s->u.tile.args[1];
  tl_scope dsc = dst->region.buffer->scope;
  if (dsc != TL_SCOPE_GLOBAL && dsc != TL_SCOPE_SHARED && dsc != TL_SCOPE_SHARED_DYN) {
    verr(vc, pick_loc(dst->loc, s->loc), "T.%s: destination '%s' must be a global or shared buffer, but it is %s", opn,
         dst->region.buffer->name, tl_scope_name(dst->region.buffer->scope));
    ok = false;
  }
  if (val->kind == TL_OPND_REGION && dst->kind == TL_OPND_REGION) {
    tl_expr *const *de, *const *ve;
    int dn = region_extents(&dst->region, &de), vn = region_extents(&val->region, &ve);
    if (extents_disagree(de, dn, ve, vn)) {
      char *a = name_text(&dst->region), *b = name_text(&val->region);
      char *as = shape_text(&dst->region), *bs = shape_text(&val->region);
      verr(vc, s->loc, "T.%s: extents disagree: destination %s has extents %s but value %s has %s", opn, S(a), S(as),
           S(b), S(bs));
      free(a), free(b), free(as), free(bs);
      ok = false;
    }
  } else if (val->kind == TL_OPND_EXPR && val->expr && val->expr->dtype.lanes != 1) {
    verr(vc, pick_loc(val->loc, s->loc), "T.%s: the value must be a scalar, got %s", opn,
         tl_dtype_name(val->expr->dtype));
    ok = false;
  }
  for (int k = 0; lanes > 1 && k < 2; k++) { /* addx2 / addx4: L consecutive elements */
    const tl_operand *o = &s->u.tile.args[k];
    int64_t e = 0;
    tl_expr *const *ex;
    int n = o->kind == TL_OPND_REGION ? region_extents(&o->region, &ex) : 0;
    if (o->kind != TL_OPND_REGION || n < 1 || !tl_expr_is_const_int(ex[n - 1], &e) || e != lanes) {
      verr(vc, pick_loc(o->loc, s->loc),
           "T.%s: the %s must be %d consecutive elements of a buffer (X[i, j] or X[i, j:j+%d])", opn,
           k ? "value" : "destination", lanes, lanes);
      ok = false;
    }
  }
  const tl_expr *mo = s->u.tile.attrs && tl_tile_ops[s->u.tile.op].nattrs > 1 ? s->u.tile.attrs[1] : NULL;
  if (mo && mo->kind == TL_EXPR_STRING) {
    static const char *const orders[] = {"relaxed", "consume", "acquire", "release", "acq_rel", "seq_cst"};
    bool found = false;
    for (size_t k = 0; k < sizeof orders / sizeof orders[0]; k++)
      if (mo->u.str && strcmp(mo->u.str, orders[k]) == 0) found = true;
    if (!found) {
      verr(vc, attr_loc(s, 1),
           "T.%s: memory_order must be one of \"relaxed\", \"consume\", \"acquire\", "
           "\"release\", \"acq_rel\", \"seq_cst\", got \"%s\"",
           opn, S(mo->u.str));
      ok = false;
    }
  }
  return ok;
}

/* ------------------------------------------------------------ use_swizzle */
static bool verify_use_swizzle(tl_verify_ctx *vc, const tl_stmt *s) {
  bool ok = true;
  const tl_operand *p = &s->u.tile.args[0];
  int64_t v;
  if (p->expr && !tl_dtype_is_int(p->expr->dtype)) {
    verr(vc, pick_loc(p->loc, s->loc), "T.use_swizzle: panel_size must be an integer, got %s",
         tl_dtype_name(p->expr->dtype));
    ok = false;
  } else if (p->expr && tl_expr_is_const_int(p->expr, &v) && v <= 0) {
    verr(vc, pick_loc(p->loc, s->loc), "T.use_swizzle: panel_size must be positive, got %lld", (long long)v);
    ok = false;
  }
  const tl_expr *o = s->u.tile.attrs ? s->u.tile.attrs[0] : NULL;
  if (o && o->kind == TL_EXPR_STRING && o->u.str && strcmp(o->u.str, "row") != 0 && strcmp(o->u.str, "column") != 0) {
    verr(vc, attr_loc(s, 0), "T.use_swizzle: order must be \"row\" or \"column\", got \"%s\"", o->u.str);
    ok = false;
  }
  return ok;
}

/* -------------------------------------------------------- annotate_layout */
static bool verify_annotate_layout(tl_verify_ctx *vc, const tl_stmt *s) {
  bool ok = true;
  for (int i = 0; i + 1 < s->u.tile.nargs; i += 2) {
    const tl_operand *r = &s->u.tile.args[i];
    if (r->kind != TL_OPND_REGION || !r->region.buffer) continue;
    if (!region_is_whole(&r->region)) {
      verr(vc, pick_loc(r->loc, s->loc), "T.annotate_layout: '%s' must be a whole buffer", r->region.buffer->name);
      ok = false;
    }
    if (r->region.buffer->scope == TL_SCOPE_GLOBAL) {
      verr(vc, pick_loc(r->loc, s->loc),
           "T.annotate_layout: '%s' is a global buffer; layouts annotate shared or fragment "
           "buffers",
           r->region.buffer->name);
      ok = false;
    }
  }
  return ok;
}

/* ------------------------------------------------------------------ table */
#define N(a) ((int)(sizeof(a) / sizeof((a)[0])))
const tl_tile_op_info tl_tile_ops[TL_TILE_NUM_OPS] = {
    [TL_TILE_COPY] = {"copy", "RR", 1, N(copy_attrs), copy_attrs, verify_copy, 0, 0, 0},
    [TL_TILE_GEMM] = {"gemm", "RRR", 2, N(gemm_attrs), gemm_attrs, verify_gemm, 0, 0, 0},
    [TL_TILE_FILL] = {"fill", "RE", 0, 0, NULL, verify_fill, 0, 0, 0},
    [TL_TILE_CLEAR] = {"clear", "R", 0, 0, NULL, verify_clear, 0, 0, 0},
    [TL_TILE_REDUCE_MAX] = {"reduce_max", "RR", 1, N(reduce_attrs), reduce_attrs, verify_reduce, 0, 0, 0},
    [TL_TILE_REDUCE_MIN] = {"reduce_min", "RR", 1, N(reduce_attrs), reduce_attrs, verify_reduce, 0, 0, 0},
    [TL_TILE_REDUCE_SUM] = {"reduce_sum", "RR", 1, N(reduce_attrs), reduce_attrs, verify_reduce, 0, 0, 0},
    [TL_TILE_REDUCE_ABSSUM] = {"reduce_abssum", "RR", 1, N(reduce_attrs), reduce_attrs, verify_reduce, 0, 0, 0},
    [TL_TILE_REDUCE_ABSMAX] = {"reduce_absmax", "RR", 1, N(reduce_attrs), reduce_attrs, verify_reduce, 0, 0, 0},
    [TL_TILE_ATOMIC_ADD] = {"atomic_add", "RX", 0, N(atomic_attrs), atomic_attrs, verify_atomic_add, 0, 0, 0},
    [TL_TILE_USE_SWIZZLE] = {"use_swizzle", "E", -1, N(swizzle_attrs), swizzle_attrs, verify_use_swizzle, 0, 0, 0},
    [TL_TILE_ANNOTATE_LAYOUT] = {"annotate_layout", "D", -1, 0, NULL, verify_annotate_layout, 0, 0, 0},
    [TL_TILE_ASYNC_COPY] = {"async_copy", "RR", 1, 0, NULL, verify_copy, 0, 0, 0},
    [TL_TILE_ATOMIC_MAX] = {"atomic_max", "RX", 0, N(atomic_attrs), atomic_attrs, verify_atomic_add, 0, 0, 0},
    [TL_TILE_ATOMIC_MIN] = {"atomic_min", "RX", 0, N(atomic_attrs), atomic_attrs, verify_atomic_add, 0, 0, 0},
    [TL_TILE_ATOMIC_ADDX2] = {"atomic_addx2", "RX", 0, 1, atomic_attrs, verify_atomic_add, 0, 0, 0},
    [TL_TILE_ATOMIC_ADDX4] = {"atomic_addx4", "RX", 0, 1, atomic_attrs, verify_atomic_add, 0, 0, 0},
    [TL_TILE_FINALIZE_REDUCER] = {"finalize_reducer", "R", 0, 0, NULL, verify_finalize_reducer, 0, 0, 0},
    [TL_TILE_THREAD_ALLREDUCE] = {"thread_allreduce", "RE", 0, N(allreduce_attrs), allreduce_attrs,
                                  verify_thread_allreduce, 0, 0, 0},
    [TL_TILE_GEMM_SP] = {"gemm_sp", "RRRR", 3, N(gemm_sp_attrs), gemm_sp_attrs, verify_gemm_sp, 0, 0, 0},
};

int tl_tile_op_lookup(const char *name) {
  if (!name) return -1;
  for (int i = 0; i < TL_TILE_NUM_OPS; i++)
    if (strcmp(tl_tile_ops[i].name, name) == 0) return i;
  return -1;
}

bool tl_attr_is_default(const tl_attr_info *ai, const tl_expr *v) {
  if (!v) return true;
  int64_t iv;
  switch (ai->kind) {
  case TL_ATTR_BOOL: return tl_expr_is_const_int(v, &iv) && (iv != 0) == (ai->default_int != 0);
  case TL_ATTR_INT:
  case TL_ATTR_POLICY: return tl_expr_is_const_int(v, &iv) && iv == ai->default_int;
  case TL_ATTR_STRING: return ai->default_str && v->kind == TL_EXPR_STRING && !strcmp(v->u.str, ai->default_str);
  default: return false;
  }
}

/* Attribute attr of tile op s as a constant (dflt when absent or not constant). */
static int64_t const_attr(const tl_stmt *s, const char *attr, int64_t dflt) {
  int k = tl_tile_op_attr_index(s->u.tile.op, attr);
  int64_t v = dflt;
  if (k >= 0 && s->u.tile.attrs && s->u.tile.attrs[k] && !tl_expr_is_const_int(s->u.tile.attrs[k], &v)) v = dflt;
  return v;
}

void tl_tile_operand_use(const tl_stmt *s, int i, bool *rd, bool *wr) {
  int op = s->u.tile.op;
  int dst = op >= 0 && op < TL_TILE_NUM_OPS ? tl_tile_ops[op].written : -1;
  *wr = i == dst;
  switch (op) {
  case TL_TILE_USE_SWIZZLE:
  case TL_TILE_ANNOTATE_LAYOUT: *rd = *wr = false; return;
  case TL_TILE_FILL:
  case TL_TILE_CLEAR:
  case TL_TILE_THREAD_ALLREDUCE: *rd = false; return; /* dst only; the value is an expression */
  case TL_TILE_GEMM:
  case TL_TILE_GEMM_SP: *rd = i != dst || !const_attr(s, "clear_accum", 0); return;
  case TL_TILE_REDUCE_MAX:
  case TL_TILE_REDUCE_MIN:
  case TL_TILE_REDUCE_SUM:
  case TL_TILE_REDUCE_ABSSUM:
  case TL_TILE_REDUCE_ABSMAX: *rd = i != dst || !const_attr(s, "clear", 1); return;
  case TL_TILE_COPY:
  case TL_TILE_ASYNC_COPY: *rd = i != dst; return;
  default: *rd = true; return; /* finalize_reducer's operand; the atomics' source and destination */
  }
}

int tl_tile_op_attr_index(int op, const char *attr) {
  if (op < 0 || op >= TL_TILE_NUM_OPS || !attr) return -1;
  const tl_tile_op_info *info = &tl_tile_ops[op];
  for (int i = 0; i < info->nattrs; i++)
    if (strcmp(info->attrs[i].name, attr) == 0) return i;
  return -1;
}
