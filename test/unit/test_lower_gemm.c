/* Unit tests of the T.gemm path of lib/Lower (issue 5, compute half):
 *  - the MMA_C fragment layout equals the PTX mma.m16n8k16 C layout (docs/layouts.md:
 *    c0 = (g, 2t), c1 = (g, 2t+1), c2 = (g+8, 2t), c3 = (g+8, 2t+1) of each
 *    m16n8 tile, warps tiled over M fastest) for every element of a 16x8 tile
 *    and of 128x128 tiles with 4 warps under each policy; forward/inverse agree;
 *  - the warp partition by policy (docs/layouts.md examples) and the tile rule
 *    error with its exact message (issue 5 point 8: block_M 16, block_N 104,
 *    384 threads);
 *  - the shared-memory swizzles are bijections that keep 16-byte chunks
 *    contiguous, hit 8 distinct bank groups per ldmatrix phase, and give the
 *    worked offsets of docs/layouts.md "Shared-memory swizzles" and "ldmatrix addresses" (4464, 2216, 3440);
 *  - numerics: kernels written in TileLang text are lowered and run by a
 *    lock-step SIMT interpreter (below) that implements ldmatrix and mma.sync
 *    from the PTX fragment maps, independently of the lowering's formulas,
 *    and the result is compared exactly with a plain matrix product. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "IR/tir.h"
#include "Lower/lower.h"
#include "Lower/lower_internal.h"
#include "Lower/smem_layout.h"
#include "tilelang/ir.h"

/* ================================================================ layouts */
static void check_c_layout(int64_t BM, int64_t BN, int64_t threads, int64_t wm, int64_t wn) {
  tl_frag_layout L;
  int64_t shape[2];
  memset(&L, 0, sizeof L);
  L.shape = shape;
  tl_mma_c_layout_init(&L, BM, BN, threads, wm, wn);
  cr_assert_eq(L.nregs, BM * BN / threads);
  int64_t WM = BM / wm, WN = BN / wn;
  char *seen = calloc((size_t)(threads * L.nregs), 1);
  for (int64_t i = 0; i < BM; i++)
    for (int64_t j = 0; j < BN; j++) {
      int64_t tid, reg;
      tl_mma_c_owner(&L, i, j, &tid, &reg);
      /* PTX: the warp tile (i/WM, j/WN) is warp (i/WM) + wm*(j/WN); inside it,
       * m16n8 tile q = ((i%WM)/16)*(WN/8) + (j%WN)/8 holds c0..c3 at 4q.. */
      int64_t warp = (i / WM) + wm * (j / WN);
      int64_t r = i % 16, c = j % 8; /* position inside the m16n8 tile */
      int64_t g = r % 8, t = c / 2;
      int64_t cidx = (r >= 8 ? 2 : 0) + (c % 2); /* c0..c3 */
      int64_t q = ((i % WM) / 16) * (WN / 8) + (j % WN) / 8;
      cr_assert_eq(tid, 32 * warp + 4 * g + t, "(%lld,%lld): tid %lld", (long long)i, (long long)j, (long long)tid);
      cr_assert_eq(reg, 4 * q + cidx, "(%lld,%lld): reg %lld", (long long)i, (long long)j, (long long)reg);
      cr_assert(tid >= 0 && tid < threads && reg >= 0 && reg < L.nregs);
      cr_assert_eq(seen[tid * L.nregs + reg], 0, "not injective at (%lld,%lld)", (long long)i, (long long)j);
      seen[tid * L.nregs + reg] = 1;
      int64_t i2, j2;
      tl_mma_c_coords(&L, tid, reg, &i2, &j2);
      cr_assert(i2 == i && j2 == j, "inverse of (%lld,%lld) gave (%lld,%lld)", (long long)i, (long long)j,
                (long long)i2, (long long)j2);
    }
  free(seen);
}

Test(gemm_layout, c_layout_16x8_one_warp) { check_c_layout(16, 8, 32, 1, 1); }

Test(gemm_layout, c_layout_128x128_4warps_each_policy) {
  tl_module *m = tl_module_new();
  int64_t want[3][2] = {{2, 2}, {4, 1}, {1, 4}};
  for (int p = 0; p < 3; p++) {
    int64_t wm, wn;
    cr_assert(tl_gemm_warp_partition(m, p, 128, 128, 4, &wm, &wn, NULL));
    cr_assert(wm == want[p][0] && wn == want[p][1], "policy %d: (%lld, %lld)", p, (long long)wm, (long long)wn);
    check_c_layout(128, 128, 128, wm, wn);
  }
  tl_module_destroy(m);
}

Test(gemm_layout, worked_examples) {
  tl_frag_layout L;
  int64_t shape[2], tid, reg;
  memset(&L, 0, sizeof L);
  L.shape = shape;
  tl_mma_c_layout_init(&L, 128, 128, 128, 2, 2);
  int64_t ex[5][4] = {{0, 0, 0, 0}, {0, 1, 0, 1}, {8, 0, 0, 2}, {17, 9, 4, 37}, {127, 127, 127, 127}};
  for (int k = 0; k < 5; k++) {
    tl_mma_c_owner(&L, ex[k][0], ex[k][1], &tid, &reg);
    cr_assert(tid == ex[k][2] && reg == ex[k][3], "C[%lld][%lld] -> (%lld, %lld)", (long long)ex[k][0],
              (long long)ex[k][1], (long long)tid, (long long)reg);
  }
}

Test(gemm_layout, partition_policies) {
  tl_module *m = tl_module_new();
  int64_t wm, wn;
  cr_assert(tl_gemm_warp_partition(m, TL_POLICY_SQUARE, 128, 128, 8, &wm, &wn, NULL));
  cr_assert(wm == 2 && wn == 4);
  cr_assert(tl_gemm_warp_partition(m, TL_POLICY_SQUARE, 128, 256, 8, &wm, &wn, NULL));
  cr_assert(wm == 2 && wn == 4);
  cr_assert(tl_gemm_warp_partition(m, TL_POLICY_FULL_ROW, 64, 64, 4, &wm, &wn, NULL));
  cr_assert(wm == 4 && wn == 1);
  cr_assert(tl_gemm_warp_partition(m, TL_POLICY_FULL_COL, 64, 64, 4, &wm, &wn, NULL));
  cr_assert(wm == 1 && wn == 4);
  /* validity restricts the choice: 16 rows leave only m = 1 */
  cr_assert(tl_gemm_warp_partition(m, TL_POLICY_FULL_ROW, 16, 64, 4, &wm, &wn, NULL));
  cr_assert(wm == 1 && wn == 4);
  const char *msg = NULL;
  cr_assert(!tl_gemm_warp_partition(m, TL_POLICY_SQUARE, 16, 104, 12, &wm, &wn, &msg));
  cr_assert_str_eq(msg,
                   "T.gemm cannot split the 16x104 accumulator tile over 12 warps (384 threads): the rule is "
                   "m * n = 12 warps with block_M % (16 * m) == 0 and block_N % (8 * n) == 0, and no (m, n) "
                   "satisfies it: (1, 12): 104 % 96 = 8; (2, 6): 16 % 32 = 16; (3, 4): 16 % 48 = 16; "
                   "(4, 3): 16 % 64 = 16; (6, 2): 16 % 96 = 16; (12, 1): 16 % 192 = 16");
  tl_module_destroy(m);
}

/* ================================================================ swizzles */
static tl_buffer *shared_buf(tl_module *m, const char *name, tl_dtype t, int nd, const int64_t *dims) {
  tl_expr *sh[3];
  for (int k = 0; k < nd; k++) sh[k] = tl_ir_int(m, TL_LOC_NONE, TL_INT32, dims[k]);
  return tl_ir_new_buffer(m, TL_LOC_NONE, name, t, TL_SCOPE_SHARED_DYN, nd, sh);
}

static int64_t off_of(tl_module *m, const tl_smem_layout *L, int64_t s, int64_t i, int64_t j) {
  tl_expr *st = L->stages > 1 ? tl_ir_int(m, TL_LOC_NONE, TL_INT32, s) : NULL;
  tl_expr *e = tl_smem_offset(m, TL_LOC_NONE, L, st, tl_ir_int(m, TL_LOC_NONE, TL_INT32, i),
                              tl_ir_int(m, TL_LOC_NONE, TL_INT32, j));
  int64_t v = -1;
  cr_assert(e && tl_expr_is_const_int(e, &v), "offset does not fold");
  return v;
}

static void check_swizzle(int64_t stages, int64_t H, int64_t W, tl_dtype t, int sw) {
  tl_module *m = tl_module_new();
  int64_t dims[3] = {stages, H, W};
  tl_buffer *b = stages > 1 ? shared_buf(m, "S", t, 3, dims) : shared_buf(m, "S", t, 2, dims + 1);
  tl_smem_layout *L = tl_smem_layout_set(m, b, sw, 0);
  cr_assert(L && L->swizzle_bytes == sw && L->stages == stages && L->rows == H && L->cols == W);
  int64_t flat_n = 0;
  cr_assert(tl_expr_is_const_int(L->flat->shape[0], &flat_n) && flat_n == stages * H * W);
  int64_t E = 16 / tl_dtype_bytes(t);
  char *seen = calloc((size_t)flat_n, 1);
  for (int64_t s = 0; s < stages; s++)
    for (int64_t i = 0; i < H; i++)
      for (int64_t j = 0; j < W; j++) {
        int64_t o = off_of(m, L, s, i, j);
        cr_assert(o >= 0 && o < flat_n);
        /* the layout dumps' integer map (tl_smem_offset_at) is the IR's */
        cr_assert_eq(tl_smem_offset_at(L, s, i, j), o, "dump offset of (%lld,%lld,%lld)", (long long)s, (long long)i,
                     (long long)j);
        cr_assert_eq(seen[o], 0, "collision at (%lld,%lld,%lld)", (long long)s, (long long)i, (long long)j);
        seen[o] = 1;
        /* 16-byte chunks stay contiguous and aligned */
        if (j % E == 0) cr_assert_eq(o % E, 0);
        else cr_assert_eq(o, off_of(m, L, s, i, j - 1) + 1);
      }
  /* ldmatrix phases: 8 rows r0..r0+7 (r0 % 8 == 0) at one chunk: 8 distinct bank groups */
  for (int64_t r0 = 0; r0 < H; r0 += 8)
    for (int64_t j = 0; j < W; j += E) {
      int groups = 0;
      for (int64_t r = r0; r < r0 + 8; r++) {
        int q = (int)((off_of(m, L, 0, r, j) * tl_dtype_bytes(t) / 16) % 8);
        groups |= 1 << q;
      }
      if (sw) cr_assert_eq(groups, 0xff, "rows %lld.. chunk %lld: groups %x", (long long)r0, (long long)j, groups);
    }
  free(seen);
  tl_module_destroy(m);
}

Test(gemm_swizzle, bijection_chunks_banks) {
  check_swizzle(1, 64, 64, TL_FLOAT16, 128);
  check_swizzle(1, 128, 32, TL_FLOAT16, 64);
  check_swizzle(1, 32, 128, TL_FLOAT16, 128);
  check_swizzle(1, 32, 16, TL_FLOAT16, 32);
  check_swizzle(3, 128, 32, TL_FLOAT16, 64);
  check_swizzle(2, 32, 256, TL_DT(TL_TYPE_BFLOAT, 16), 128);
  check_swizzle(1, 16, 32, TL_FLOAT32, 128);
}

/* tl_smem_layout_view: the attached layout as a value, or the row-major one
 * lowering would attach (nothing attached); tl_smem_offset_at agrees with
 * the IR's offsets for a padded tile too. */
Test(gemm_swizzle, layout_view) {
  tl_module *m = tl_module_new();
  int64_t dims[2] = {16, 24};
  tl_buffer *b = shared_buf(m, "P", TL_FLOAT16, 2, dims);
  tl_smem_layout v;
  cr_assert(tl_smem_layout_view(b, &v) && !b->layout);
  cr_assert(v.swizzle_bytes == 0 && v.row_stride == 24 && v.rows == 16 && v.cols == 24 && v.stages == 1);
  tl_smem_layout *L = tl_smem_layout_set(m, b, 0, 8); /* padded rows */
  cr_assert(L && tl_smem_layout_view(b, &v) && v.row_stride == 32);
  for (int64_t i = 0; i < 16; i++)
    for (int64_t j = 0; j < 24; j++) cr_assert_eq(tl_smem_offset_at(&v, 0, i, j), off_of(m, L, 0, i, j));
  tl_module_destroy(m);
}

Test(gemm_swizzle, worked_offsets) {
  tl_module *m = tl_module_new();
  int64_t d1[2] = {128, 64}, d2[2] = {128, 32}, d3[2] = {32, 128}, d4[2] = {64, 128};
  tl_smem_layout *L1 = tl_smem_layout_set(m, shared_buf(m, "A1", TL_FLOAT16, 2, d1), 128, 0);
  cr_assert_eq(off_of(m, L1, 0, 69, 24), 4464);
  tl_smem_layout *L2 = tl_smem_layout_set(m, shared_buf(m, "A2", TL_FLOAT16, 2, d2), 64, 0);
  cr_assert_eq(off_of(m, L2, 0, 69, 24), 2216);
  tl_smem_layout *L3 = tl_smem_layout_set(m, shared_buf(m, "B3", TL_FLOAT16, 2, d3), 128, 0);
  cr_assert_eq(off_of(m, L3, 0, 21, 88), 3440);
  tl_smem_layout *L4 = tl_smem_layout_set(m, shared_buf(m, "B4", TL_FLOAT16, 2, d4), 128, 0);
  cr_assert_eq(off_of(m, L4, 0, 0, 64), 4096);
  cr_assert_eq(off_of(m, L4, 0, 1, 0), 72);
  /* staged: stage s adds s * stage_elems */
  int64_t d5[3] = {3, 128, 32};
  tl_smem_layout *L5 = tl_smem_layout_set(m, shared_buf(m, "S5", TL_FLOAT16, 3, d5), 64, 0);
  cr_assert_eq(L5->stage_elems, 4096);
  cr_assert_eq(off_of(m, L5, 2, 69, 24), 2 * 4096 + 2216);
  /* default: row-major, no swizzle; padding */
  int64_t d6[2] = {8, 24};
  tl_buffer *b6 = shared_buf(m, "P6", TL_FLOAT16, 2, d6);
  tl_smem_layout *L6 = tl_smem_layout_get(m, b6);
  cr_assert(L6 && L6->swizzle_bytes == 0 && L6->row_stride == 24);
  cr_assert_eq(off_of(m, L6, 0, 3, 5), 77);
  cr_assert_eq(tl_smem_layout_get(m, b6), L6);
  tl_smem_layout *L7 = tl_smem_layout_set(m, b6, 0, 8);
  cr_assert(L7->row_stride == 32 && L7->stage_elems == 256);
  cr_assert_eq(off_of(m, L7, 0, 3, 5), 101);
  /* a swizzle that does not fit falls back to row-major */
  tl_smem_layout *L8 = tl_smem_layout_set(m, shared_buf(m, "X8", TL_FLOAT16, 2, d6), 128, 0);
  cr_assert_eq(L8->swizzle_bytes, 0);
  tl_module_destroy(m);
}

/* ======================================================= lock-step SIMT */
/* Runs the lowered kernel for one block at a time with all threads in lock
 * step: every statement is executed by all active threads before the next
 * (so shared-memory writes are visible to the following statement, as a
 * barrier would make them).  ldmatrix and mma.sync are executed per warp from
 * the PTX ISA fragment definitions (docs/layouts.md). */
#define MAXL 16
#define MAXT 1024
typedef struct val {
  int lanes;
  double x[MAXL];
} val;
typedef struct sim {
  tl_map mem;  /* buffer → double* (local: threads × size) */
  tl_map size; /* buffer → element count + 1 (per thread for local) */
  tl_map env;  /* var → double[MAXT] */
  int64_t tid, threads;
  int errors;
  char err[256];
} sim;

static void sim_err(sim *s, const char *what) {
  if (!s->errors) snprintf(s->err, sizeof s->err, "%s", what);
  s->errors++;
}

static int64_t buf_elems(const tl_buffer *b) {
  int64_t n = 1;
  for (int k = 0; k < b->ndim; k++) {
    int64_t d = 1;
    tl_expr_is_const_int(b->shape[k], &d);
    n *= d;
  }
  return n;
}

static bool is_local(const tl_buffer *b) { return b->scope == TL_SCOPE_LOCAL || b->scope == TL_SCOPE_LOCAL_VAR; }

static double *mem_of(sim *s, const tl_buffer *b) {
  double *p = tl_map_get(&s->mem, b, NULL);
  int64_t n = buf_elems(b);
  if (!p) {
    int64_t total = is_local(b) ? n * MAXT : n;
    p = malloc(sizeof(double) * (size_t)(total + 1));
    for (int64_t i = 0; i <= total; i++) p[i] = NAN;
    tl_map_put(&s->mem, b, p);
  }
  return is_local(b) ? p + s->tid * n : p;
}

static val ev(sim *s, const tl_expr *e);

static double rnd(double v, tl_dtype t) {
  if (tl_dtype_is_float(t)) return tl_round_to_dtype(v, t);
  if (t.code == TL_TYPE_BOOL) return v != 0;
  return trunc(v);
}

static int64_t flat(sim *s, const tl_buffer *b, int n, tl_expr **idx, int lane, bool *oob) {
  int64_t f = 0;
  for (int k = 0; k < n; k++) {
    val v = ev(s, idx[k]);
    int64_t d = 1;
    tl_expr_is_const_int(b->shape[k], &d);
    int64_t i = (int64_t)v.x[v.lanes > 1 ? lane : 0];
    if (i < 0 || i >= d) *oob = true;
    f = f * d + i;
  }
  return f;
}

static double *var_slot(sim *s, const tl_var *v) {
  double *p = tl_map_get(&s->env, v, NULL);
  if (!p) {
    p = calloc(MAXT, sizeof(double));
    tl_map_put(&s->env, v, p);
  }
  return p;
}

static val ev(sim *s, const tl_expr *e) {
  val r = {e->dtype.lanes, {0}};
  switch (e->kind) {
  case TL_EXPR_INT: r.x[0] = (double)e->u.ival; return r;
  case TL_EXPR_FLOAT: r.x[0] = e->u.fval; return r;
  case TL_EXPR_VAR: r.x[0] = var_slot(s, e->u.var)[s->tid]; return r;
  case TL_EXPR_CALL:
    if (strcmp(tl_intrinsics[e->u.call.op].name, "get_thread_binding") == 0) {
      r.x[0] = (double)s->tid;
      return r;
    }
    sim_err(s, tl_intrinsics[e->u.call.op].name);
    return r;
  case TL_EXPR_RAMP: {
    val b = ev(s, e->u.ramp.base);
    for (int i = 0; i < r.lanes; i++) r.x[i] = b.x[0] + i;
    return r;
  }
  case TL_EXPR_BROADCAST: {
    val b = ev(s, e->u.bcast.value);
    for (int i = 0; i < r.lanes; i++) r.x[i] = b.x[0];
    return r;
  }
  case TL_EXPR_CAST: {
    val b = ev(s, e->u.cast.value);
    for (int i = 0; i < r.lanes; i++) r.x[i] = rnd(b.x[b.lanes > 1 ? i : 0], e->dtype);
    return r;
  }
  case TL_EXPR_LOAD: {
    double *p = mem_of(s, e->u.load.buffer);
    for (int i = 0; i < r.lanes; i++) {
      bool oob = false;
      int64_t f = flat(s, e->u.load.buffer, e->u.load.n, e->u.load.indices, i, &oob);
      if (oob) sim_err(s, "out-of-bounds load");
      else r.x[i] = p[f];
    }
    return r;
  }
  case TL_EXPR_BINARY: {
    val a = ev(s, e->u.bin.a), b = ev(s, e->u.bin.b);
    for (int i = 0; i < r.lanes; i++) {
      double x = a.x[a.lanes > 1 ? i : 0], y = b.x[b.lanes > 1 ? i : 0], z = 0;
      switch (e->u.bin.op) {
      case TL_OP_ADD: z = x + y; break;
      case TL_OP_SUB: z = x - y; break;
      case TL_OP_MUL: z = x * y; break;
      case TL_OP_DIV: z = tl_dtype_is_float(e->dtype) ? x / y : trunc(x / y); break;
      case TL_OP_FLOORDIV: z = floor(x / y); break;
      case TL_OP_FLOORMOD: z = x - floor(x / y) * y; break;
      case TL_OP_LT: z = x < y; break;
      case TL_OP_LE: z = x <= y; break;
      case TL_OP_GE: z = x >= y; break;
      case TL_OP_GT: z = x > y; break;
      case TL_OP_EQ: z = x == y; break;
      case TL_OP_NE: z = x != y; break;
      case TL_OP_AND: z = x && y; break;
      case TL_OP_OR: z = x || y; break;
      case TL_OP_MIN: z = fmin(x, y); break;
      case TL_OP_MAX: z = fmax(x, y); break;
      case TL_OP_BITXOR: z = (double)((int64_t)x ^ (int64_t)y); break;
      case TL_OP_BITAND: z = (double)((int64_t)x & (int64_t)y); break;
      case TL_OP_BITOR: z = (double)((int64_t)x | (int64_t)y); break;
      case TL_OP_SHL: z = (double)((int64_t)x << (int64_t)y); break;
      case TL_OP_SHR: z = (double)((int64_t)x >> (int64_t)y); break;
      default: sim_err(s, "binary op");
      }
      r.x[i] = tl_dtype_is_float(e->dtype) ? rnd(z, e->dtype) : z;
    }
    return r;
  }
  case TL_EXPR_SELECT: {
    val c = ev(s, e->u.sel.cond), a = ev(s, e->u.sel.t), b = ev(s, e->u.sel.f);
    for (int i = 0; i < r.lanes; i++)
      r.x[i] = c.x[c.lanes > 1 ? i : 0] ? a.x[a.lanes > 1 ? i : 0] : b.x[b.lanes > 1 ? i : 0];
    return r;
  }
  default: sim_err(s, "expression kind"); return r;
  }
}

/* ldmatrix for the warp whose lanes are tids w*32..w*32+31. */
static void do_ldmatrix(sim *s, const tl_expr *call, const bool *mask) {
  tl_expr **a = call->u.call.args;
  const tl_buffer *dst = a[0]->u.buffer, *src = a[2]->u.buffer;
  int64_t num, trans;
  cr_assert(tl_expr_is_const_int(a[4], &num) && tl_expr_is_const_int(a[5], &trans));
  int64_t srcn = buf_elems(src), dstn = buf_elems(dst);
  for (int64_t w = 0; w < s->threads / 32; w++) {
    int64_t addr[32], doff[32];
    int active = 0;
    for (int l = 0; l < 32; l++) {
      s->tid = w * 32 + l;
      active += mask[s->tid];
      addr[l] = (int64_t)ev(s, a[3]).x[0];
      doff[l] = (int64_t)ev(s, a[1]).x[0];
    }
    if (active == 0) continue;
    if (active != 32) {
      sim_err(s, "ldmatrix in a partial warp");
      return;
    }
    double M[4][8][8];
    double *sp = mem_of(s, src);
    for (int i = 0; i < num; i++)
      for (int r = 0; r < 8; r++) {
        int64_t ad = addr[8 * i + r];
        if (ad % 8 != 0 || ad < 0 || ad + 8 > srcn) {
          sim_err(s, "ldmatrix row address misaligned or out of bounds");
          return;
        }
        for (int c = 0; c < 8; c++) M[i][r][c] = sp[ad + c];
      }
    for (int l = 0; l < 32; l++) {
      s->tid = w * 32 + l;
      double *dp = mem_of(s, dst);
      for (int i = 0; i < num; i++) {
        int64_t o = doff[l] + 2 * i;
        if (o < 0 || o + 2 > dstn) {
          sim_err(s, "ldmatrix destination out of bounds");
          return;
        }
        int g = l / 4, t = l % 4;
        dp[o] = trans ? M[i][2 * t][g] : M[i][g][2 * t];
        dp[o + 1] = trans ? M[i][2 * t + 1][g] : M[i][g][2 * t + 1];
      }
    }
  }
}

static void do_mma(sim *s, const tl_expr *call, const bool *mask) {
  tl_expr **a = call->u.call.args;
  const tl_buffer *A = a[0]->u.buffer, *B = a[2]->u.buffer, *C = a[4]->u.buffer;
  for (int64_t w = 0; w < s->threads / 32; w++) {
    double Am[16][16], Bm[16][8], Cm[16][8];
    int active = 0;
    for (int l = 0; l < 32; l++) {
      s->tid = w * 32 + l;
      active += mask[s->tid];
      int g = l / 4, t = l % 4;
      int64_t ao = (int64_t)ev(s, a[1]).x[0], bo = (int64_t)ev(s, a[3]).x[0], co = (int64_t)ev(s, a[5]).x[0];
      if (ao < 0 || ao + 8 > buf_elems(A) || bo < 0 || bo + 4 > buf_elems(B) || co < 0 || co + 4 > buf_elems(C)) {
        sim_err(s, "mma operand out of bounds");
        return;
      }
      double *ap = mem_of(s, A) + ao, *bp = mem_of(s, B) + bo, *cp = mem_of(s, C) + co;
      Am[g][2 * t] = ap[0], Am[g][2 * t + 1] = ap[1];
      Am[g + 8][2 * t] = ap[2], Am[g + 8][2 * t + 1] = ap[3];
      Am[g][2 * t + 8] = ap[4], Am[g][2 * t + 9] = ap[5];
      Am[g + 8][2 * t + 8] = ap[6], Am[g + 8][2 * t + 9] = ap[7];
      Bm[2 * t][g] = bp[0], Bm[2 * t + 1][g] = bp[1];
      Bm[2 * t + 8][g] = bp[2], Bm[2 * t + 9][g] = bp[3];
      Cm[g][2 * t] = cp[0], Cm[g][2 * t + 1] = cp[1];
      Cm[g + 8][2 * t] = cp[2], Cm[g + 8][2 * t + 1] = cp[3];
    }
    if (active == 0) continue;
    if (active != 32) {
      sim_err(s, "mma in a partial warp");
      return;
    }
    for (int l = 0; l < 32; l++) {
      s->tid = w * 32 + l;
      int g = l / 4, t = l % 4;
      int64_t co = (int64_t)ev(s, a[5]).x[0];
      double *cp = mem_of(s, C) + co;
      int rows[4] = {g, g, g + 8, g + 8}, cols[4] = {2 * t, 2 * t + 1, 2 * t, 2 * t + 1};
      for (int k = 0; k < 4; k++) {
        double acc = Cm[rows[k]][cols[k]];
        for (int kk = 0; kk < 16; kk++) acc += Am[rows[k]][kk] * Bm[kk][cols[k]];
        cp[k] = rnd(acc, C->dtype);
      }
    }
  }
}

static void run(sim *s, const tl_stmt *st, const bool *mask, int depth) {
  if (!st || depth > 200) return;
  int64_t T = s->threads;
  switch (st->kind) {
  case TL_STMT_SEQ:
    for (int i = 0; i < st->u.seq.n; i++) run(s, st->u.seq.stmts[i], mask, depth + 1);
    return;
  case TL_STMT_FOR: {
    /* extents are uniform over the active threads (checked) */
    double mn = 0, ext = -1;
    for (int64_t t = 0; t < T; t++) {
      if (!mask[t]) continue;
      s->tid = t;
      double m0 = st->u.loop.mins && st->u.loop.mins[0] ? ev(s, st->u.loop.mins[0]).x[0] : 0;
      double e0 = ev(s, st->u.loop.extents[0]).x[0];
      if (ext >= 0 && (m0 != mn || e0 != ext)) {
        sim_err(s, "non-uniform loop");
        return;
      }
      mn = m0, ext = e0;
    }
    if (ext < 0) return;
    if (st->u.loop.kind == TL_LOOP_VECTORIZED && st->u.loop.body->kind != TL_STMT_STORE) sim_err(s, "vector loop body");
    double *slot = var_slot(s, st->u.loop.vars[0]);
    for (double i = mn; i < mn + ext; i++) {
      for (int64_t t = 0; t < T; t++) slot[t] = i;
      run(s, st->u.loop.body, mask, depth + 1);
    }
    return;
  }
  case TL_STMT_IF: {
    bool *tm = calloc((size_t)T, 1), *fm = calloc((size_t)T, 1);
    for (int64_t t = 0; t < T; t++) {
      if (!mask[t]) continue;
      s->tid = t;
      bool c = ev(s, st->u.ifs.cond).x[0] != 0;
      tm[t] = c, fm[t] = !c;
    }
    run(s, st->u.ifs.then_s, tm, depth + 1);
    run(s, st->u.ifs.else_s, fm, depth + 1);
    free(tm), free(fm);
    return;
  }
  case TL_STMT_LET: {
    double *slot = var_slot(s, st->u.let.var);
    for (int64_t t = 0; t < T; t++)
      if (mask[t]) s->tid = t, slot[t] = ev(s, st->u.let.value).x[0];
    return;
  }
  case TL_STMT_ALLOC: return; /* fresh NaN memory per kernel run */
  case TL_STMT_STORE: {
    int lanes = st->u.store.value->dtype.lanes;
    for (int64_t t = 0; t < T; t++) {
      if (!mask[t]) continue;
      s->tid = t;
      val v = ev(s, st->u.store.value);
      double *p = mem_of(s, st->u.store.buffer);
      for (int i = 0; i < lanes; i++) {
        bool oob = false;
        int64_t f = flat(s, st->u.store.buffer, st->u.store.n, st->u.store.indices, i, &oob);
        if (oob) sim_err(s, "out-of-bounds store");
        else p[f] = rnd(v.x[v.lanes > 1 ? i : 0], st->u.store.buffer->dtype);
      }
    }
    return;
  }
  case TL_STMT_EVAL: {
    const tl_expr *c = st->u.eval.value;
    const char *nm = c->kind == TL_EXPR_CALL ? tl_intrinsics[c->u.call.op].name : "";
    if (!strcmp(nm, "ptx_ldmatrix")) do_ldmatrix(s, c, mask);
    else if (!strcmp(nm, "ptx_mma")) do_mma(s, c, mask);
    else if (!strcmp(nm, "sync_threads")) { /* lock step: nothing to do */ } else
      sim_err(s, nm);
    return;
  }
  default: sim_err(s, "statement kind"); return;
  }
}

static void run_kernel(sim *s, const tl_primfunc *f) {
  const tl_stmt *k = f->body;
  while (k && k->kind == TL_STMT_SEQ && k->u.seq.n == 1) k = k->u.seq.stmts[0];
  cr_assert(k && k->kind == TL_STMT_KERNEL);
  int64_t g[3] = {1, 1, 1}, T = 0;
  for (int i = 0; i < k->u.kernel.ngrid; i++) tl_expr_is_const_int(k->u.kernel.grid[i], &g[i]);
  tl_expr_is_const_int(k->u.kernel.threads, &T);
  cr_assert(T > 0 && T <= MAXT);
  s->threads = T;
  bool *mask = malloc((size_t)T);
  memset(mask, 1, (size_t)T);
  for (int64_t z = 0; z < g[2]; z++)
    for (int64_t y = 0; y < g[1]; y++)
      for (int64_t x = 0; x < g[0]; x++) {
        int64_t bi[3] = {x, y, z};
        for (int i = 0; i < k->u.kernel.ngrid; i++) {
          double *slot = var_slot(s, k->u.kernel.block_vars[i]);
          for (int64_t t = 0; t < T; t++) slot[t] = (double)bi[i];
        }
        run(s, k->u.kernel.body, mask, 0);
      }
  free(mask);
}

static void sim_free(sim *s) {
  for (size_t i = 0; i < s->mem.cap; i++)
    if (s->mem.slots[i].key) free(s->mem.slots[i].value);
  for (size_t i = 0; i < s->env.cap; i++)
    if (s->env.slots[i].key) free(s->env.slots[i].value);
  tl_map_free(&s->mem);
  tl_map_free(&s->env);
  tl_map_free(&s->size);
}

/* ============================================================ gemm kernels */
typedef struct gemm_case {
  int M, N, K, BM, BN, BK, threads;
  const char *policy; /* "Square", "FullRow", "FullCol" */
  bool ta, tb;
  const char *ab, *acc, *out;
  int stages; /* 0: 2-D shared buffers; s > 0: [s, rows, cols] buffers */
} gemm_case;

/* The kernel text: shared tiles filled by T.Parallel (zero outside the
 * matrices), the gemm over a K loop, the accumulator copied out. */
static char *kernel_text(const gemm_case *c) {
  char *buf = malloc(8192);
  char ashape[64], bshape[64], areg[96], breg[96], agl[64], bgl[64];
  int ar = c->ta ? c->BK : c->BM, ac = c->ta ? c->BM : c->BK;
  int br = c->tb ? c->BN : c->BK, bc = c->tb ? c->BK : c->BN;
  if (c->stages) {
    snprintf(ashape, sizeof ashape, "(%d, %d, %d)", c->stages, ar, ac);
    snprintf(bshape, sizeof bshape, "(%d, %d, %d)", c->stages, br, bc);
    snprintf(areg, sizeof areg, "A_s[ko %% %d, 0:%d, 0:%d]", c->stages, ar, ac);
    snprintf(breg, sizeof breg, "B_s[ko %% %d, 0:%d, 0:%d]", c->stages, br, bc);
  } else {
    snprintf(ashape, sizeof ashape, "(%d, %d)", ar, ac);
    snprintf(bshape, sizeof bshape, "(%d, %d)", br, bc);
    snprintf(areg, sizeof areg, "A_s");
    snprintf(breg, sizeof breg, "B_s");
  }
  snprintf(agl, sizeof agl, "(%d, %d)", c->ta ? c->K : c->M, c->ta ? c->M : c->K);
  snprintf(bgl, sizeof bgl, "(%d, %d)", c->tb ? c->N : c->K, c->tb ? c->K : c->N);
  char st[32];
  snprintf(st, sizeof st, "ko %% %d, ", c->stages);
  const char *sidx = c->stages ? st : "";
  /* global row/col of shared element (r, q) */
  char afill[512], bfill[512];
  if (!c->ta)
    snprintf(afill, sizeof afill,
             "            for r, q in T.Parallel(%d, %d):\n"
             "                if by * %d + r < %d and ko * %d + q < %d:\n"
             "                    A_s[%sr, q] = A[by * %d + r, ko * %d + q]\n"
             "                else:\n"
             "                    A_s[%sr, q] = T.Cast(\"%s\", 0)\n",
             ar, ac, c->BM, c->M, c->BK, c->K, sidx, c->BM, c->BK, sidx, c->ab);
  else
    snprintf(afill, sizeof afill,
             "            for r, q in T.Parallel(%d, %d):\n"
             "                if ko * %d + r < %d and by * %d + q < %d:\n"
             "                    A_s[%sr, q] = A[ko * %d + r, by * %d + q]\n"
             "                else:\n"
             "                    A_s[%sr, q] = T.Cast(\"%s\", 0)\n",
             ar, ac, c->BK, c->K, c->BM, c->M, sidx, c->BK, c->BM, sidx, c->ab);
  if (!c->tb)
    snprintf(bfill, sizeof bfill,
             "            for r, q in T.Parallel(%d, %d):\n"
             "                if ko * %d + r < %d and bx * %d + q < %d:\n"
             "                    B_s[%sr, q] = B[ko * %d + r, bx * %d + q]\n"
             "                else:\n"
             "                    B_s[%sr, q] = T.Cast(\"%s\", 0)\n",
             br, bc, c->BK, c->K, c->BN, c->N, sidx, c->BK, c->BN, sidx, c->ab);
  else
    snprintf(bfill, sizeof bfill,
             "            for r, q in T.Parallel(%d, %d):\n"
             "                if bx * %d + r < %d and ko * %d + q < %d:\n"
             "                    B_s[%sr, q] = B[bx * %d + r, ko * %d + q]\n"
             "                else:\n"
             "                    B_s[%sr, q] = T.Cast(\"%s\", 0)\n",
             br, bc, c->BN, c->N, c->BK, c->K, sidx, c->BN, c->BK, sidx, c->ab);
  snprintf(buf, 8192,
           "import tilelang.language as T\n\n\n"
           "@T.prim_func\n"
           "def main(A: T.Tensor(%s, \"%s\"), B: T.Tensor(%s, \"%s\"), C: T.Tensor((%d, %d), \"%s\")):\n"
           "    with T.Kernel(%d, %d, threads=%d) as (bx, by):\n"
           "        A_s = T.alloc_shared(%s, \"%s\")\n"
           "        B_s = T.alloc_shared(%s, \"%s\")\n"
           "        C_f = T.alloc_fragment((%d, %d), \"%s\")\n"
           "        T.clear(C_f)\n"
           "        for ko in T.serial(%d):\n"
           "%s"
           "%s"
           "            T.gemm(%s, %s, C_f, transpose_A=%s, transpose_B=%s, policy=T.GemmWarpPolicy.%s)\n"
           "        T.copy(C_f, C[by * %d, bx * %d])\n",
           agl, c->ab, bgl, c->ab, c->M, c->N, c->out, (c->N + c->BN - 1) / c->BN, (c->M + c->BM - 1) / c->BM,
           c->threads, ashape, c->ab, bshape, c->ab, c->BM, c->BN, c->acc, (c->K + c->BK - 1) / c->BK, afill, bfill,
           areg, breg, c->ta ? "True" : "False", c->tb ? "True" : "False", c->policy, c->BM, c->BN);
  return buf;
}

static tl_module *parse(const char *src, tl_diag *d, bool *ok) {
  tl_module *m = tl_module_new();
  cr_assert(m);
  tl_diag_add_source(d, "k.py", src, strlen(src));
  *ok = tl_frontend_parse(m, d, src, strlen(src), "k.py", NULL, 0);
  return m;
}

static double input_value(int64_t i, int which) {
  /* small integers: every product sum is exact in f32, f16 and bf16 */
  return (double)((i * (which ? 7 : 5) + which * 3) % 5) - 2.0;
}

static void run_gemm_case(const gemm_case *c) {
  char *src = kernel_text(c);
  tl_diag d;
  tl_diag_init(&d);
  bool ok;
  tl_module *m = parse(src, &d, &ok);
  cr_assert(ok, "parse failed:\n%s\n%s", d.out.data ? d.out.data : "", src);
  tl_lower_options o = {.target = tl_target_lookup("sm_80"), .verify_each = true};
  ok = tl_lower_module(m, &o, &d);
  tl_strbuf sb = {0};
  tl_print_module(&sb, m);
  if (getenv("TL_TEST_SHOW")) fprintf(stderr, "%s\n%s\n", src, sb.data);
  cr_assert(ok, "lowering failed:\n%s\n%s", d.out.data ? d.out.data : "", src);
  cr_assert(strstr(sb.data, "T.ptx_ldmatrix") && strstr(sb.data, "T.ptx_mma"), "%s", sb.data);
  tl_primfunc *f = m->funcs[0];
  tl_buffer *A = f->params[0].buffer, *B = f->params[1].buffer, *C = f->params[2].buffer;
  sim s;
  memset(&s, 0, sizeof s);
  tl_map_init(&s.mem);
  tl_map_init(&s.env);
  tl_map_init(&s.size);
  double *a = mem_of(&s, A), *b = mem_of(&s, B), *cc = mem_of(&s, C);
  int64_t na = buf_elems(A), nb = buf_elems(B), nc = buf_elems(C);
  for (int64_t i = 0; i < na; i++) a[i] = input_value(i, 0);
  for (int64_t i = 0; i < nb; i++) b[i] = input_value(i, 1);
  for (int64_t i = 0; i < nc; i++) cc[i] = NAN;
  run_kernel(&s, f);
  cr_assert_eq(s.errors, 0, "simulation error: %s\n%s", s.err, sb.data);
  for (int i = 0; i < c->M; i++)
    for (int j = 0; j < c->N; j++) {
      double want = 0;
      for (int k = 0; k < c->K; k++) {
        double x = c->ta ? a[(int64_t)k * c->M + i] : a[(int64_t)i * c->K + k];
        double y = c->tb ? b[(int64_t)j * c->K + k] : b[(int64_t)k * c->N + j];
        want += x * y;
      }
      double got = cc[(int64_t)i * c->N + j];
      cr_assert(got == want, "C[%d][%d] = %g, want %g (M=%d N=%d K=%d)", i, j, got, want, c->M, c->N, c->K);
    }
  sim_free(&s);
  tl_strbuf_free(&sb);
  tl_diag_free(&d);
  tl_module_destroy(m);
  free(src);
}

Test(gemm_numeric, f16_f32_64x64x64_square) {
  gemm_case c = {64, 64, 64, 64, 64, 32, 128, "Square", false, false, "float16", "float32", "float32", 0};
  run_gemm_case(&c);
}

Test(gemm_numeric, f16_f32_50x70x30_partial_tiles) {
  gemm_case c = {50, 70, 30, 64, 64, 32, 128, "Square", false, false, "float16", "float32", "float32", 0};
  run_gemm_case(&c);
}

Test(gemm_numeric, transpose_B) {
  gemm_case c = {64, 64, 64, 64, 64, 32, 128, "Square", false, true, "float16", "float32", "float32", 0};
  run_gemm_case(&c);
}

Test(gemm_numeric, transpose_A) {
  gemm_case c = {64, 64, 64, 64, 64, 32, 128, "Square", true, false, "float16", "float32", "float32", 0};
  run_gemm_case(&c);
}

Test(gemm_numeric, transpose_both_fullcol) {
  gemm_case c = {64, 64, 32, 64, 64, 32, 128, "FullCol", true, true, "float16", "float32", "float32", 0};
  run_gemm_case(&c);
}

Test(gemm_numeric, bf16_f32_fullrow) {
  gemm_case c = {64, 64, 64, 64, 64, 32, 128, "FullRow", false, false, "bfloat16", "float32", "float32", 0};
  run_gemm_case(&c);
}

Test(gemm_numeric, f16_f16_accumulator) {
  gemm_case c = {64, 64, 64, 64, 64, 32, 128, "Square", false, false, "float16", "float16", "float16", 0};
  run_gemm_case(&c);
}

Test(gemm_numeric, narrow_warp_tile_x2) {
  /* FullCol with 4 warps over N = 32: WN = 8, so B loads are ldmatrix.x2 */
  gemm_case c = {32, 32, 32, 32, 32, 32, 128, "FullCol", false, false, "float16", "float32", "float32", 0};
  run_gemm_case(&c);
}

Test(gemm_numeric, narrow_warp_tile_x2_transpose_B) {
  gemm_case c = {32, 32, 32, 32, 32, 32, 128, "FullCol", false, true, "float16", "float32", "float32", 0};
  run_gemm_case(&c);
}

Test(gemm_numeric, staged_shared_buffers) {
  gemm_case c = {64, 128, 96, 64, 128, 32, 256, "Square", false, false, "float16", "float32", "float32", 3};
  run_gemm_case(&c);
}

Test(gemm_numeric, tile_128x128_8warps) {
  gemm_case c = {128, 128, 32, 128, 128, 32, 256, "Square", false, false, "float16", "float32", "float32", 0};
  run_gemm_case(&c);
}

/* ============================================================ tile rule */
static char *lower_error(const char *src) {
  tl_diag d;
  tl_diag_init(&d);
  bool ok;
  tl_module *m = parse(src, &d, &ok);
  cr_assert(ok, "%s", d.out.data ? d.out.data : "");
  tl_lower_options o = {.target = tl_target_lookup("sm_80"), .verify_each = true};
  ok = tl_lower_module(m, &o, &d);
  cr_assert(!ok, "lowering should fail");
  const char *text = d.out.data ? d.out.data : "";
  char *out = malloc(strlen(text) + 1);
  memcpy(out, text, strlen(text) + 1);
  tl_diag_free(&d);
  tl_module_destroy(m);
  return out;
}

Test(gemm_rule, partition_cannot_cover_tile) {
  const char *src =
      "import tilelang.language as T\n\n\n"
      "@T.prim_func\n"
      "def main(A: T.Tensor((16, 32), \"float16\"), B: T.Tensor((32, 104), \"float16\"), C: T.Tensor((16, 104), "
      "\"float32\")):\n"
      "    with T.Kernel(1, threads=384) as bx:\n"
      "        A_s = T.alloc_shared((16, 32), \"float16\")\n"
      "        B_s = T.alloc_shared((32, 104), \"float16\")\n"
      "        C_f = T.alloc_fragment((16, 104), \"float32\")\n"
      "        T.gemm(A_s, B_s, C_f)\n";
  char *err = lower_error(src);
  cr_assert(strstr(err,
                   "k.py:10:9: error: T.gemm cannot split the 16x104 accumulator tile over 12 warps (384 "
                   "threads): the rule is m * n = 12 warps with block_M % (16 * m) == 0 and block_N % (8 * "
                   "n) == 0, and no (m, n) satisfies it: (1, 12): 104 % 96 = 8; (2, 6): 16 % 32 = 16; (3, "
                   "4): 16 % 48 = 16; (4, 3): 16 % 64 = 16; (6, 2): 16 % 96 = 16; (12, 1): 16 % 192 = 16\n"),
            "%s", err);
  free(err);
}

Test(gemm_rule, k_not_multiple_of_16) {
  const char *src =
      "import tilelang.language as T\n\n\n"
      "@T.prim_func\n"
      "def main(C: T.Tensor((64, 64), \"float32\")):\n"
      "    with T.Kernel(1, threads=128) as bx:\n"
      "        A_s = T.alloc_shared((64, 24), \"float16\")\n"
      "        B_s = T.alloc_shared((24, 64), \"float16\")\n"
      "        C_f = T.alloc_fragment((64, 64), \"float32\")\n"
      "        T.gemm(A_s, B_s, C_f)\n";
  char *err = lower_error(src);
  cr_assert(strstr(err,
                   "error: T.gemm cannot step over K = 24 with mma.sync m16n8k16: the rule is K % 16 == 0 "
                   "(K % 16 = 8)"),
            "%s", err);
  free(err);
}

Test(gemm_rule, two_gemms_conflicting_partitions) {
  const char *src =
      "import tilelang.language as T\n\n\n"
      "@T.prim_func\n"
      "def main(C: T.Tensor((64, 64), \"float32\")):\n"
      "    with T.Kernel(1, threads=128) as bx:\n"
      "        A_s = T.alloc_shared((64, 32), \"float16\")\n"
      "        B_s = T.alloc_shared((32, 64), \"float16\")\n"
      "        C_f = T.alloc_fragment((64, 64), \"float32\")\n"
      "        T.gemm(A_s, B_s, C_f, policy=T.GemmWarpPolicy.FullRow)\n"
      "        T.gemm(A_s, B_s, C_f, policy=T.GemmWarpPolicy.FullCol)\n"
      "        T.copy(C_f, C)\n";
  char *err = lower_error(src);
  cr_assert(strstr(err,
                   "k.py:11:9: error: layout conflict for fragment 'C_f': this T.gemm splits it over 1x4 "
                   "warps, but the T.gemm that set its layout splits it over 4x1 warps"),
            "%s", err);
  cr_assert(strstr(err, "k.py:10:9: note: the T.gemm that sets the layout of 'C_f' is here"), "%s", err);
  free(err);
}

Test(gemm_rule, accumulator_indexed_off_layout) {
  const char *src =
      "import tilelang.language as T\n\n\n"
      "@T.prim_func\n"
      "def main(C: T.Tensor((64, 64), \"float32\")):\n"
      "    with T.Kernel(1, threads=128) as bx:\n"
      "        A_s = T.alloc_shared((64, 32), \"float16\")\n"
      "        B_s = T.alloc_shared((32, 64), \"float16\")\n"
      "        C_f = T.alloc_fragment((64, 64), \"float32\")\n"
      "        T.gemm(A_s, B_s, C_f)\n"
      "        for i, j in T.Parallel(64, 64):\n"
      "            C[i, j] = C_f[j, i]\n";
  char *err = lower_error(src);
  cr_assert(strstr(err,
                   "k.py:11:9: error: layout conflict for fragment 'C_f': this T.Parallel loop indexes it "
                   "differently from the T.gemm that distributes it over the threads"),
            "%s", err);
  free(err);
}

/* ============================================================ staged epilogue */
/* The fragment → global copy of a GEMM goes through a padded shared tile
 * (lower_tile.c, lower_frag_to_global_staged) that reuses the dead pipeline
 * stage buffers: the default large config's shared total stays that of the
 * 4 stages of A and B (4 * (128*32 + 32*256) * 2 bytes), and C is written in
 * 8 x f16 vectors. */
Test(gemm_epilogue, staged_reuses_pipeline_smem) {
  const char *src =
      "import tilelang.language as T\n\n\n"
      "@T.prim_func\n"
      "def main(A: T.Tensor((4096, 4096), \"float16\"), B: T.Tensor((4096, 4096), \"float16\"),\n"
      "         C: T.Tensor((4096, 4096), \"float16\")):\n"
      "    with T.Kernel(16, 32, threads=256) as (bx, by):\n"
      "        A_shared = T.alloc_shared((128, 32), \"float16\")\n"
      "        B_shared = T.alloc_shared((32, 256), \"float16\")\n"
      "        C_local = T.alloc_fragment((128, 256), \"float32\")\n"
      "        T.clear(C_local)\n"
      "        for ko in T.Pipelined(128, num_stages=4):\n"
      "            T.copy(A[by * 128, ko * 32], A_shared)\n"
      "            T.copy(B[ko * 32, bx * 256], B_shared)\n"
      "            T.gemm(A_shared, B_shared, C_local)\n"
      "        T.copy(C_local, C[by * 128, bx * 256])\n";
  tl_diag d;
  tl_diag_init(&d);
  bool ok;
  tl_module *m = parse(src, &d, &ok);
  cr_assert(ok, "%s", d.out.data ? d.out.data : "");
  tl_lower_options o = {.target = tl_target_lookup("sm_80"), .verify_each = true};
  ok = tl_lower_module(m, &o, &d);
  cr_assert(ok, "%s", d.out.data ? d.out.data : "");
  tl_strbuf sb = {0};
  tl_print_module(&sb, m);
  /* 128 rows of 256 + 8 (16 bytes of padding) halves */
  cr_assert(strstr(sb.data, "C_stage = T.alloc_shared((33792,), \"float16\")"), "%s", sb.data);
  cr_assert(strstr(sb.data, ", 1, 8)] = C_stage[T.Ramp("), "%s", sb.data);
  cr_assert_eq(m->funcs[0]->smem_bytes, 4 * (128 * 32 + 32 * 256) * 2);
  tl_strbuf_free(&sb);
  tl_diag_free(&d);
  tl_module_destroy(m);
}

/* Partial M tile (rows guarded) and partial N tile through the staged path,
 * checked numerically by the simulator above. */
Test(gemm_epilogue, staged_partial_tiles_f16_out) {
  gemm_case c = {50, 72, 40, 64, 64, 32, 128, "Square", false, false, "float16", "float32", "float16", 2};
  run_gemm_case(&c);
}

Test(gemm_epilogue, staged_transpose_bf16_out) {
  gemm_case c = {64, 128, 32, 64, 128, 32, 256, "Square", false, true, "bfloat16", "float32", "bfloat16", 2};
  run_gemm_case(&c);
}
