/* Hopper shared-memory matrix operands (internal): the swizzle function,
 * the wgmma matrix descriptor and the canonical operand layouts, one
 * definition for the code generator (lib/NVPTX/Hopper/codegen_wgmma.c, which
 * builds the descriptor's constant bits) and the CPU SIMT executor
 * (lib/Interp/Hopper/simt_wgmma.c, which builds, decodes and follows it).
 *
 * Addresses are shared-memory byte addresses relative to the dynamic
 * shared block's base (1024-byte aligned on the GPU; the executor's shared
 * byte array models exactly these), so "address bits" are bits of
 * (buffer's smem_offset + byte offset).  Hardware facts: PTX ISA 8.5
 * §9.7.15.5.1 (wgmma matrix descriptor; "Shared Memory Matrix Layout",
 * the swizzling modes), CUTLASS cute/atom/mma_traits_sm90_gmma.hpp's
 * canonical layouts, checked on a GPU (docs/hopper.md "The shared-memory
 * image" and "The wgmma descriptor"); the contract is docs/simt-ir.md
 * "wgmma". */
#ifndef TL_SUPPORT_WGMMA_H
#define TL_SUPPORT_WGMMA_H

#include <stdbool.h>
#include <stdint.h>

#include "tilelang/ir.h"

/* The wgmma.mma_async input type of an operand dtype (PTX ISA §9.7.15.5,
 * the type table of wgmma.mma_async): its PTX name, the instruction's K
 * (m64nNk16 for .f16/.bf16, m64nNk32 for .e4m3/.e5m2), the element bytes,
 * and whether the operand must be K-major in shared memory (8-bit types:
 * imm-trans-a/b must be 0, so A is M x K and B N x K, K contiguous).  The
 * one table of these facts for the lowering (lib/Lower/lower_gemm.c,
 * Hopper/warp_specialize.c), the code generator and the CPU executor.
 * name NULL: wgmma has no such input type here. */
typedef struct tl_wgmma_type {
  const char *name; /* "f16", "bf16", "e4m3", "e5m2" */
  int k;            /* the instruction's K */
  int bytes;        /* element bytes */
  bool kmajor_only; /* no MN-major (transposed) operand */
} tl_wgmma_type;

static inline tl_wgmma_type tl_wgmma_type_of(tl_dtype t) {
  tl_wgmma_type r = {NULL, 0, 0, false};
  if (t.lanes > 1) return r;
  if (t.code == TL_TYPE_FLOAT && t.bits == 16) r = (tl_wgmma_type){"f16", 16, 2, false};
  else if (t.code == TL_TYPE_BFLOAT && t.bits == 16) r = (tl_wgmma_type){"bf16", 16, 2, false};
  else if (t.code == TL_TYPE_FLOAT8_E4M3) r = (tl_wgmma_type){"e4m3", 32, 1, true};
  else if (t.code == TL_TYPE_FLOAT8_E5M2) r = (tl_wgmma_type){"e5m2", 32, 1, true};
  return r;
}

/* A and B may form one wgmma: the same 16-bit type, or any two 8-bit float
 * types (.e4m3 and .e5m2 mix freely, PTX ISA §9.7.15.5). */
static inline bool tl_wgmma_types_match(tl_dtype a, tl_dtype b) {
  tl_wgmma_type ta = tl_wgmma_type_of(a), tb = tl_wgmma_type_of(b);
  if (!ta.name || !tb.name) return false;
  return ta.bytes == 1 ? tb.bytes == 1 : a.code == b.code && a.bits == b.bits;
}

/* A swizzle span (bytes: 0 = none, 32, 64, 128) is one of those four. */
static inline bool tl_swizzle_span_ok(int64_t span) { return span == 0 || span == 32 || span == 64 || span == 128; }

/* The physical shared byte address of logical address a under swizzle span
 * `span` (0, 32, 64, 128): a ^ (((a >> 7) & M) << 4), M = span/16 - 1
 * (7, 3, 1; 0 for none), i.e. CUTLASS Swizzle<log2(span/16), 4, 3>: what
 * wgmma reads (PTX ISA §9.7.15.5.1) and TMA writes (§9.7.9.27 swizzle
 * modes), address bits relative to the 1024-aligned dynamic block. */
static inline int64_t tl_smem_swizzle(int64_t a, int span) {
  int64_t m = span ? span / 16 - 1 : 0;
  return a ^ (((a >> 7) & m) << 4);
}

/* The descriptor's 2-bit layout code (bits 62-63) of a swizzle span:
 * 1 for 128B, 2 for 64B, 3 for 32B, 0 for none. */
static inline unsigned tl_wgmma_layout_code(int span) {
  return span == 128 ? 1u : span == 64 ? 2u : span == 32 ? 3u : 0u;
}

/* LBO / SBO byte offsets a descriptor can hold: multiples of 16 below 2^18. */
static inline bool tl_wgmma_offset_ok(int64_t v) { return v >= 0 && v < (1 << 18) && v % 16 == 0; }

/* wgmma's N for m64nNk16 / m64nNk32 (all the input types above): a multiple of 8 from 8 to 256. */
static inline bool tl_wgmma_n_ok(int64_t n) { return n >= 8 && n <= 256 && n % 8 == 0; }

/* The 64-bit matrix descriptor: bits 0-13 (start >> 4) & 0x3FFF, 16-29
 * lbo >> 4, 32-45 sbo >> 4, 49-51 base offset 0, 62-63 the layout code.
 * With start 0 it is the constant part the code generator ORs the run-time
 * address field into. */
static inline uint64_t tl_wgmma_desc(uint64_t start, int span, int64_t lbo, int64_t sbo) {
  return ((start >> 4) & 0x3FFFu) | ((uint64_t)(lbo >> 4) & 0x3FFFu) << 16 | ((uint64_t)(sbo >> 4) & 0x3FFFu) << 32 |
         (uint64_t)tl_wgmma_layout_code(span) << 62;
}

/* A descriptor decoded: start address, LBO, SBO (bytes) and swizzle span. */
typedef struct tl_wgmma_operand {
  int64_t start, lbo, sbo;
  int span;
} tl_wgmma_operand;

static inline tl_wgmma_operand tl_wgmma_decode(uint64_t desc) {
  static const int spans[4] = {0, 128, 64, 32};
  tl_wgmma_operand o = {(int64_t)(desc & 0x3FFFu) << 4, (int64_t)((desc >> 16) & 0x3FFFu) << 4,
                        (int64_t)((desc >> 32) & 0x3FFFu) << 4, spans[desc >> 62]};
  return o;
}

/* The logical shared byte address of element (i, k) of an operand (i: row
 * of A, 0..63, or column of B, 0..N-1; k: 0..K-1 of the instruction's K;
 * eb-byte elements, E = 16 / eb per 16-byte core-matrix row) in the
 * canonical layout of o, K-major (mn false) or MN-major (mn true, 2-byte
 * elements only); the bytes read are at tl_smem_swizzle(address, o.span):
 *   K-major,  span W > 0: s + (i/8)*SBO + (i%8)*W + eb*k                 (LBO unused)
 *   K-major,  none:       s + (i/8)*SBO + (k/E)*LBO + (i%8)*16 + eb*(k%E)
 *   MN-major, W > 0:      s + (i/(W/eb))*LBO + eb*(i%(W/eb)) + (k%8)*W + (k/8)*SBO
 *   MN-major, none:       s + (i/8)*SBO + eb*(i%8) + (k%8)*16 + (k/8)*LBO */
static inline int64_t tl_wgmma_elem_addr(tl_wgmma_operand o, bool mn, int eb, int i, int k) {
  int64_t w = o.span, E = 16 / eb;
  if (!mn && w) return o.start + (i / 8) * o.sbo + (i % 8) * w + eb * k;
  if (!mn) return o.start + (i / 8) * o.sbo + (k / E) * o.lbo + (i % 8) * 16 + eb * (k % E);
  if (w) return o.start + (i / (w / eb)) * o.lbo + eb * (i % (w / eb)) + (k % 8) * w + (k / 8) * o.sbo;
  return o.start + (i / 8) * o.sbo + eb * (i % 8) + (k % 8) * 16 + (k / 8) * o.lbo;
}

#endif
