/* SIMT executor: T.ptx_mma's warps for every shape (sx_mma_warps; the
 * m16n8k16 float16/bfloat16 operands are checked in simt_warp.c), and the
 * checks of the shapes beyond m16n8k16 (docs/simt-ir.md "T.ptx_mma"):
 * m16n8k8 with float32/tfloat32 operands
 * (each rounded to tf32 as cvt.rna.tf32.f32, tl_tf32_rna), m16n8k32 with
 * int8/uint8 operands into int32 (wrapping) or float8_e4m3/float8_e5m2
 * operands (either for A and for B) into float32, m16n8k64 with int8/uint8
 * registers holding two .s4/.u4 values per byte (low nibble first: the
 * even k; sign-extended for int8, zero-extended for uint8) into int32,
 * m8n8k4 with float64.  The
 * fragments are gathered from the warp's 32 lanes by the maps of
 * lib/Support/mma.h (tl_mma_a_elem / tl_mma_b_elem; C: c0 c1 at row g,
 * columns 2t, 2t + 1, c2 c3 at row g + 8 for m16n8; m8n8k4 has c0 c1
 * only), and each D element is tl_mma_step_kind (interp.h), the step the
 * reference evaluator's T.gemm chains, so the two agree bit for bit.  The
 * whole warp must be active (the .sync.aligned form). */
#include "Interp/simt_internal.h"

#include <string.h>

#define local_ptr(sb, t, el) sx_elem_ptr((sb), x->tbase + (t), (el))

bool sx_mma_types(sx *x, const tl_expr *e, const uint8_t *mask) {
  const tl_expr *shape = e->u.call.args[6];
  sx_buf *a = sx_buf_arg(x, e, 0, SX_LOCAL, 0, "the A fragment");
  sx_buf *b = a ? sx_buf_arg(x, e, 2, SX_LOCAL, 0, "the B fragment") : NULL;
  sx_buf *c = b ? sx_buf_arg(x, e, 4, SX_LOCAL, 0, "the accumulators") : NULL;
  if (!c) return false;
  tl_mma_info mi = tl_mma_info_of_shape(a->et, c->et, shape->u.str);
  if (!tl_mma_operands_match(a->et, b->et) || mi.kind == TL_MMA_KIND_NONE || mi.kind == TL_MMA_KIND_F16)
    return sx_fail(x, "T.ptx_mma: shape %s with A %s, B %s and C %s is not an mma.sync form", shape->u.str,
                   tl_dtype_name(a->et), tl_dtype_name(b->et), tl_dtype_name(c->et));
  return sx_mma_warps(x, e, mask, a, b, c, &mi);
}

bool sx_mma_warps(sx *x, const tl_expr *e, const uint8_t *mask, sx_buf *a, sx_buf *b, sx_buf *c,
                  const tl_mma_info *mip) {
  tl_mma_info mi = *mip;
  if (!sx_full_warps(x, mask, "mma")) return false;
  sx_val ao, bo, co;
  if (!sx_mma_offsets(x, e, mask, &ao, &bo, &co)) return false;
  bool f64 = mi.kind == TL_MMA_KIND_F64, ints = mi.kind == TL_MMA_KIND_I8 || mi.kind == TL_MMA_KIND_I4;
  int rows = f64 ? 8 : 16, na = f64 ? 1 : mi.a_elems, nb = mi.b_elems, nc = f64 ? 2 : 4;
  int vals = mi.packed ? 2 : 1, K = mi.k * vals; /* k values per register element */
  for (int w = 0; w < x->T; w += 32) {
    if (!mask[w]) continue;
    double A[16][64], B[64][8], C[16][8];
    for (int l = 0; l < 32; l++) {
      int th = w + l, g = l >> 2, t2 = 2 * (l & 3);
      int64_t pa = ao.v[th].i, pb = bo.v[th].i, pc = co.v[th].i;
      if (!sx_local_range(x, a, pa, na, th, "mma A fragment") || !sx_local_range(x, b, pb, nb, th, "mma B fragment") ||
          !sx_local_range(x, c, pc, nc, th, "mma accumulator"))
        return false;
      for (int q = 0; q < na; q++) {
        int r, k;
        tl_mma_a_elem(&mi, l, q, &r, &k);
        sx_el v = sx_el_load(a->et, local_ptr(a, th, pa + q));
        for (int h = 0; h < vals; h++)
          A[r][k * vals + h] = mi.packed                     ? tl_nibble((uint8_t)v.i, h, a->et.code == TL_TYPE_INT)
                               : ints                        ? (double)v.i
                               : mi.kind == TL_MMA_KIND_TF32 ? tl_tf32_rna(v.f)
                                                             : v.f;
      }
      for (int q = 0; q < nb; q++) {
        int k, n;
        tl_mma_b_elem(&mi, l, q, &k, &n);
        sx_el v = sx_el_load(b->et, local_ptr(b, th, pb + q));
        for (int h = 0; h < vals; h++)
          B[k * vals + h][n] = mi.packed                     ? tl_nibble((uint8_t)v.i, h, b->et.code == TL_TYPE_INT)
                               : ints                        ? (double)v.i
                               : mi.kind == TL_MMA_KIND_TF32 ? tl_tf32_rna(v.f)
                                                             : v.f;
      }
      for (int q = 0; q < nc; q++) {
        sx_el v = sx_el_load(c->et, local_ptr(c, th, pc + q));
        C[g + 8 * (q / 2)][t2 + q % 2] = ints ? (double)v.i : v.f;
      }
    }
    double D[16][8];
    for (int i = 0; i < rows; i++)
      for (int j = 0; j < 8; j++) D[i][j] = tl_mma_step_kind(mi.kind, A[i], &B[0][j], 8, K, C[i][j], c->et);
    for (int l = 0; l < 32; l++) {
      int th = w + l, g = l >> 2, t2 = 2 * (l & 3);
      int64_t pc = co.v[th].i;
      for (int q = 0; q < nc; q++) {
        double d = D[g + 8 * (q / 2)][t2 + q % 2];
        sx_el v;
        if (ints) v.i = (int64_t)d;
        else v.f = d;
        sx_el_store(c->et, local_ptr(c, th, pc + q), v);
      }
    }
  }
  return true;
}

/* The metadata rows of one warp's T.ptx_mma_sp: rows[r] = the 8 nibbles of
 * row r for the k-step (group j in bits 4j..4j+3), from the lanes l % 4 < 2
 * (sparsity selector 0): lane l's 32 bits = e's elements at its offset,
 * the first lowest, bits 0-15 row l/4 and 16-31 row l/4 + 8, covering groups
 * 4*(l%2)..+3 (lib/Support/mma.h "2:4 structured sparsity"). */
static bool sp_meta_rows(sx *x, sx_buf *m, const sx_val *eo, int w, uint32_t rows[16]) {
  int per = 32 / m->et.bits;
  memset(rows, 0, sizeof(uint32_t) * 16);
  for (int l = 0; l < 32; l++) {
    if (l % 4 >= 2) continue;
    int th = w + l;
    int64_t pe = eo->v[th].i;
    if (!sx_local_range(x, m, pe, per, th, "mma.sp metadata")) return false;
    uint32_t reg = 0;
    for (int q = 0; q < per; q++) {
      uint64_t v = (uint64_t)sx_el_load(m->et, local_ptr(m, th, pe + q)).i & ((1ull << m->et.bits) - 1);
      reg |= (uint32_t)v << (q * m->et.bits);
    }
    rows[l / 4] |= (reg & 0xffffu) << (16 * (l % 2));
    rows[l / 4 + 8] |= (reg >> 16) << (16 * (l % 2));
  }
  for (int r = 0; r < 16; r++)
    for (int j = 0; j < 8; j++) {
      unsigned nib = (rows[r] >> (4 * j)) & 15u;
      if ((nib & 3u) >= (nib >> 2))
        return sx_fail(x,
                       "T.ptx_mma_sp: the metadata of row %d, group %d (warp at thread %d) is positions (%u, %u): "
                       "not ordered (mma.sp::ordered_metadata needs first < second)",
                       r, j, w, nib & 3u, nib >> 2);
    }
  return true;
}

/* T.ptx_mma_sp(a, a_off, b, b_off, c, c_off, e, e_off, "m16n8k32"): per
 * warp, the dense 16x32 A of the compressed fragment and the metadata,
 * times B (32x8), plus C, each D element one tl_mma_step over the 32 k (the
 * reference evaluator's T.gemm_sp step). */
bool sx_mma_sp(sx *x, const tl_expr *e, const uint8_t *mask) {
  if (e->u.call.n != 9) return sx_fail(x, "T.ptx_mma_sp takes 9 arguments");
  const tl_expr *shape = e->u.call.args[8];
  sx_buf *a = sx_buf_arg(x, e, 0, SX_LOCAL, 0, "the A fragment");
  sx_buf *b = a ? sx_buf_arg(x, e, 2, SX_LOCAL, 0, "the B fragment") : NULL;
  sx_buf *c = b ? sx_buf_arg(x, e, 4, SX_LOCAL, 0, "the accumulators") : NULL;
  sx_buf *m = c ? sx_buf_arg(x, e, 6, SX_LOCAL, 0, "the metadata") : NULL;
  if (!m) return false;
  bool a16 = a->et.bits == 16 && (a->et.code == TL_TYPE_FLOAT || a->et.code == TL_TYPE_BFLOAT);
  if (shape->kind != TL_EXPR_STRING || strcmp(shape->u.str, "m16n8k32") || !a16 || !tl_dtype_eq(a->et, b->et) ||
      c->et.code != TL_TYPE_FLOAT || c->et.bits != 32 || !tl_sparse_e_factor(a->et, m->et))
    return sx_fail(x, "T.ptx_mma_sp: A %s, B %s, C %s, E %s is not an mma.sp m16n8k32 form", tl_dtype_name(a->et),
                   tl_dtype_name(b->et), tl_dtype_name(c->et), tl_dtype_name(m->et));
  if (!sx_full_warps(x, mask, "mma.sp")) return false;
  sx_val ao, bo, co, eo;
  if (!sx_mma_offsets(x, e, mask, &ao, &bo, &co) || !sx_eval_as(x, e->u.call.args[7], TL_INT64, mask, &eo))
    return false;
  tl_mma_info ai = tl_mma_info_of(a->et, c->et), bi = tl_mma_sp_b_info();
  for (int w = 0; w < x->T; w += 32) {
    if (!mask[w]) continue;
    uint32_t rows[16];
    if (!sp_meta_rows(x, m, &eo, w, rows)) return false;
    double A[16][TL_SPARSE_K] = {{0}}, B[TL_SPARSE_K][8], C[16][8];
    for (int l = 0; l < 32; l++) {
      int th = w + l, g = l >> 2, t2 = 2 * (l & 3);
      int64_t pa = ao.v[th].i, pb = bo.v[th].i, pc = co.v[th].i;
      if (!sx_local_range(x, a, pa, 8, th, "mma.sp A fragment") ||
          !sx_local_range(x, b, pb, 8, th, "mma.sp B fragment") ||
          !sx_local_range(x, c, pc, 4, th, "mma.sp accumulator"))
        return false;
      for (int q = 0; q < 8; q++) {
        int r, cc, k, n;
        tl_mma_a_elem(&ai, l, q, &r, &cc);
        A[r][tl_sparse_k_of(rows[r], cc)] = sx_el_load(a->et, local_ptr(a, th, pa + q)).f;
        tl_mma_b_elem(&bi, l, q, &k, &n);
        B[k][n] = sx_el_load(b->et, local_ptr(b, th, pb + q)).f;
      }
      for (int q = 0; q < 4; q++) C[g + 8 * (q / 2)][t2 + q % 2] = sx_el_load(c->et, local_ptr(c, th, pc + q)).f;
    }
    for (int l = 0; l < 32; l++) {
      int th = w + l, g = l >> 2, t2 = 2 * (l & 3);
      for (int q = 0; q < 4; q++) {
        int i = g + 8 * (q / 2), j = t2 + q % 2;
        sx_el v = {.f = tl_mma_step(A[i], &B[0][j], 8, TL_SPARSE_K, C[i][j], c->et)};
        sx_el_store(c->et, local_ptr(c, th, co.v[th].i + q), v);
      }
    }
  }
  return true;
}
