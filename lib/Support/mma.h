/* The mma.sync instruction a T.gemm's operand dtypes select (internal): one
 * definition of the shape, the k-step and the per-lane fragment sizes for
 * the lowering (lib/Lower/lower_gemm.c, lower_gemm_types.c), the code
 * generator (lib/NVPTX/codegen_mma.c) and both CPU models (lib/Interp), plus
 * the operand rounding the instruction implies (tf32).
 *
 * Hardware facts: PTX ISA 8.5 §9.7.14.5 "Matrix multiply-accumulate
 * operation using mma instruction" (the shape/type table: m16n8k16
 * .f16/.bf16, m16n8k8 .tf32, m16n8k32 .s8/.u8 and .e4m3/.e5m2 (sm_89,
 * PTX 8.4), m16n8k64 .s4/.u4, m8n8k4 .f64; §9.7.14.5.8-5.11 the fragment
 * maps (m16n8k64 .s4's A and B maps in bytes are m16n8k32 .s8's: register
 * i's 8 nibbles are the k values of its 4 bytes, the lower nibble first,
 * restated in docs/simt-ir.md "T.ptx_mma"), restated for
 * this code in docs/simt-ir.md "T.ptx_mma"), §9.7.9.21 cvt (cvt.rna.tf32.f32:
 * round to nearest, ties away from zero, to a 10-bit mantissa). */
#ifndef TL_SUPPORT_MMA_H
#define TL_SUPPORT_MMA_H

#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "tilelang/ir.h"

typedef enum tl_mma_kind {
  TL_MMA_KIND_NONE = 0,
  TL_MMA_KIND_F16,  /* m16n8k16 .f16/.bf16 (lower_gemm.c's ldmatrix path) */
  TL_MMA_KIND_TF32, /* m16n8k8 .tf32 (float32/tfloat32 operands rounded with cvt.rna.tf32.f32) -> .f32 */
  TL_MMA_KIND_I8,   /* m16n8k32 .s8/.u8 -> .s32 (wraps modulo 2^32) */
  TL_MMA_KIND_F64,  /* m8n8k4 .f64 -> .f64, two per m16n8 tile */
  TL_MMA_KIND_FP8,  /* m16n8k32 .e4m3/.e5m2 (either for A and B) -> .f32: sm_89, PTX 8.4 */
  TL_MMA_KIND_I4,   /* m16n8k64 .s4/.u4 -> .s32 (wraps): operands two 4-bit ints per byte */
} tl_mma_kind;

/* The instruction of one T.gemm: operands A/B of dtype ab, accumulator c. */
typedef struct tl_mma_info {
  tl_mma_kind kind;
  const char *shape; /* the T.ptx_mma shape string: "m16n8k16", "m16n8k8", "m16n8k32", "m8n8k4" */
  int k;             /* the instruction's K: the k-step of the lowering and the CPU models' k-chunk */
  int per_reg;       /* A/B elements per 32-bit register (1 for tf32 and f64) */
  int a_elems;       /* A elements of one lane per m16 tile and k-step (f64: 2, one per m8n8k4) */
  int b_elems;       /* B elements of one lane per n8 tile and k-step */
  /* I4: k, per_reg, a_elems and b_elems count operand bytes (int8 / uint8
   * storage), each byte two k values, the even one in the low nibble; the
   * instruction's K is 2 * k.  0 for the other kinds. */
  int packed;
} tl_mma_info;

/* The instruction for A/B dtype ab and accumulator dtype c (lanes 1), or
 * kind NONE when mma.sync has none.  float32 operands are computed as tf32
 * (as TileLang does; tfloat32 operands too).  A and B have the same dtype,
 * except that float8 A and B may differ (tl_mma_operands_match). */
static inline tl_mma_info tl_mma_info_of(tl_dtype ab, tl_dtype c) {
  tl_mma_info r = {TL_MMA_KIND_NONE, NULL, 0, 0, 0, 0, 0};
  if (ab.lanes > 1 || c.lanes > 1) return r;
  bool cf32 = c.code == TL_TYPE_FLOAT && c.bits == 32;
  if (ab.bits == 16 && (ab.code == TL_TYPE_FLOAT || ab.code == TL_TYPE_BFLOAT) &&
      (cf32 || (c.code == TL_TYPE_FLOAT && c.bits == 16 && ab.code == TL_TYPE_FLOAT)))
    r = (tl_mma_info){TL_MMA_KIND_F16, "m16n8k16", 16, 2, 8, 4, 0};
  else if (ab.bits == 32 && (ab.code == TL_TYPE_FLOAT || ab.code == TL_TYPE_TFLOAT) && cf32)
    r = (tl_mma_info){TL_MMA_KIND_TF32, "m16n8k8", 8, 1, 4, 2, 0};
  else if (ab.bits == 8 && (ab.code == TL_TYPE_INT || ab.code == TL_TYPE_UINT) && c.code == TL_TYPE_INT && c.bits == 32)
    r = (tl_mma_info){TL_MMA_KIND_I8, "m16n8k32", 32, 4, 16, 8, 0};
  else if ((ab.code == TL_TYPE_FLOAT8_E4M3 || ab.code == TL_TYPE_FLOAT8_E5M2) && cf32)
    r = (tl_mma_info){TL_MMA_KIND_FP8, "m16n8k32", 32, 4, 16, 8, 0};
  else if (ab.bits == 64 && ab.code == TL_TYPE_FLOAT && c.code == TL_TYPE_FLOAT && c.bits == 64)
    r = (tl_mma_info){TL_MMA_KIND_F64, "m8n8k4", 4, 1, 2, 1, 0};
  else if (ab.bits == 4 && (ab.code == TL_TYPE_INT || ab.code == TL_TYPE_UINT) && c.code == TL_TYPE_INT && c.bits == 32)
    r = (tl_mma_info){TL_MMA_KIND_I4, "m16n8k64", 32, 4, 16, 8, 1};
  return r;
}

/* The instruction of a T.gemm whose int8 / uint8 operands hold packed
 * int4 / uint4 pairs (T.gemm's packed_int4, set by the pack-int4 pass):
 * m16n8k64 .s4 / .u4 with C int32, the I4 entry in bytes; kind NONE for
 * other dtypes.  Also how T.ptx_mma's "m16n8k64" reads its int8 / uint8
 * registers. */
static inline tl_mma_info tl_mma_info_packed4(tl_dtype storage, tl_dtype c) {
  tl_mma_info r = {TL_MMA_KIND_NONE, NULL, 0, 0, 0, 0, 0};
  if (storage.lanes == 1 && storage.bits == 8 && (storage.code == TL_TYPE_INT || storage.code == TL_TYPE_UINT) &&
      c.lanes == 1 && c.code == TL_TYPE_INT && c.bits == 32)
    r = (tl_mma_info){TL_MMA_KIND_I4, "m16n8k64", 32, 4, 16, 8, 1};
  return r;
}

/* The instruction T.ptx_mma's shape string names for A dtype ab and C dtype
 * c (the SIMT level: "m16n8k64" means packed 4-bit operands in int8 /
 * uint8 registers), kind NONE when the shape does not match the dtypes. */
static inline tl_mma_info tl_mma_info_of_shape(tl_dtype ab, tl_dtype c, const char *shape) {
  tl_mma_info r = !strcmp(shape, "m16n8k64") ? tl_mma_info_packed4(ab, c) : tl_mma_info_of(ab, c);
  if (r.kind != TL_MMA_KIND_NONE && strcmp(r.shape, shape)) r.kind = TL_MMA_KIND_NONE;
  return r;
}

/* The value of nibble h (0: bits 0-3, 1: bits 4-7) of byte b as a 4-bit
 * integer: sign-extended for .s4 (int8 storage), zero-extended for .u4. */
static inline int tl_nibble(uint8_t b, int h, bool is_signed) {
  int v = (b >> (4 * h)) & 0xf;
  return is_signed && v >= 8 ? v - 16 : v;
}

/* Whether A dtype a and B dtype b may meet in one mma.sync: equal, or two
 * float8 dtypes (.e4m3.e5m2 and .e5m2.e4m3 exist, PTX ISA §9.7.14.5). */
static inline bool tl_mma_operands_match(tl_dtype a, tl_dtype b) {
  bool fa = a.code == TL_TYPE_FLOAT8_E4M3 || a.code == TL_TYPE_FLOAT8_E5M2;
  bool fb = b.code == TL_TYPE_FLOAT8_E4M3 || b.code == TL_TYPE_FLOAT8_E5M2;
  return (a.code == b.code && a.bits == b.bits && a.lanes == b.lanes) || (fa && fb && a.lanes == b.lanes);
}

/* Lane l's A fragment element e (0 <= e < a_elems) of an m16 tile and
 * k-step: its row (0..15) and k (0..K-1).  Registers i = e / per_reg hold
 * rows g + 8*(i % 2) and k = per_reg*t + e % per_reg + 4*per_reg*(i / 2),
 * g = l / 4, t = l % 4 (PTX ISA §9.7.14.5.8-5.10: the same map in 32-bit
 * words for .f16, .tf32, .s8 and .e4m3/.e5m2; f64's two m8n8k4 A elements are rows g
 * and g + 8 at k = t, §9.7.14.5.11). */
static inline void tl_mma_a_elem(const tl_mma_info *mi, int l, int e, int *row, int *k) {
  int p = mi->per_reg, i = e / p, g = l / 4, t = l % 4;
  *row = g + 8 * (i % 2);
  *k = p * t + e % p + 4 * p * (i / 2);
}

/* Lane l's B fragment element e (0 <= e < b_elems) of an n8 tile: its k
 * and column n (0..7): register i = e / per_reg holds k = per_reg*t +
 * e % per_reg + 4*per_reg*i, n = l / 4. */
static inline void tl_mma_b_elem(const tl_mma_info *mi, int l, int e, int *k, int *n) {
  int p = mi->per_reg, i = e / p;
  *k = p * (l % 4) + e % p + 4 * p * i;
  *n = l / 4;
}

/* x rounded to tf32 as cvt.rna.tf32.f32 does: x is first a float32; the
 * 13 low mantissa bits are rounded to nearest, ties away from zero (a
 * carry may reach the exponent, up to infinity); NaN and infinities stay. */
static inline double tl_tf32_rna(double x) {
  float f = (float)x;
  if (!isfinite(f)) return f;
  uint32_t u;
  memcpy(&u, &f, 4);
  u = (u + 0x1000u) & ~0x1fffu;
  memcpy(&f, &u, 4);
  return f;
}

/* 2:4 structured sparsity (T.gemm_sp; mma.sp::ordered_metadata.sync.aligned
 * .m16n8k32.row.col with .f16/.bf16 operands, PTX ISA 8.5 §9.7.14.6 "Sparse
 * matrix multiply-accumulate": §9.7.14.6.1 the sparse A storage, each group of
 * 4 consecutive K values keeps 2 with a 4-bit metadata nibble, bits 1:0 the
 * position of the first kept value and bits 3:2 of the second, first <
 * second for ordered metadata).  The metadata tensor E of T.gemm_sp holds
 * the nibbles row-major, each E element of b bits the b/4 groups of
 * consecutive K, the first in the lowest nibble (TileLang's
 * examples/gemm_sp/sparse_utils.py compressor), so one E element indexes
 * e_factor = 4 * (b/4) = b K values.  The instruction's metadata register of
 * lane l (sparsity selector 0: lanes with l % 4 < 2 supply it) holds for
 * k-step kk the nibbles of row l/4 in bits 0-15 and of row l/4 + 8 in bits
 * 16-31, each covering K [kk*32 + 16*(l%2), +16) (§9.7.14.6.2, the m16n8k32
 * .f16 metadata figure; TileLang's mma_sp_layout.py reads E the same way).
 * The A fragment is the m16n8k16 A map over the compressed 16x16 tile
 * (tl_mma_a_elem with TL_MMA_KIND_F16's info), the B fragment the m16n8k32
 * map over 32x8 with two 16-bit values per register (tl_mma_sp_b_info). */
enum { TL_SPARSE_GROUP = 4, TL_SPARSE_KEPT = 2, TL_SPARSE_K = 32 };

/* The K values one E element of dtype e indexes for A dtype a, 0 when
 * T.gemm_sp has no form for them (A float16/bfloat16; E int8/uint8/
 * int16/uint16). */
static inline int tl_sparse_e_factor(tl_dtype a, tl_dtype e) {
  bool a16 = a.lanes == 1 && a.bits == 16 && (a.code == TL_TYPE_FLOAT || a.code == TL_TYPE_BFLOAT);
  bool eok = e.lanes == 1 && (e.code == TL_TYPE_INT || e.code == TL_TYPE_UINT) && (e.bits == 8 || e.bits == 16);
  return a16 && eok ? e.bits : 0;
}

/* The B operand of mma.sp m16n8k32 .f16/.bf16: eight 16-bit values a lane
 * (four registers), register i holding k = 2t + e%2 + 8i (tl_mma_b_elem). */
static inline tl_mma_info tl_mma_sp_b_info(void) {
  return (tl_mma_info){TL_MMA_KIND_F16, "m16n8k32", TL_SPARSE_K, 2, 8, 8, 0};
}

/* Dense K position (0..31) within the k-step of compressed column cc
 * (0..15) of a row whose metadata nibbles for the k-step are `nib` (nibble
 * j of group j, K 4j..4j+3). */
static inline int tl_sparse_k_of(uint32_t nib, int cc) {
  int grp = cc / TL_SPARSE_KEPT, which = cc % TL_SPARSE_KEPT;
  return TL_SPARSE_GROUP * grp + (int)((nib >> (4 * grp + 2 * which)) & 3u);
}

#endif
