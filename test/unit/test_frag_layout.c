/* Unit tests of the fragment-layout module (lib/Lower/frag_layout.{c,h}):
 *  - the one-warp mma.sync m16n8k16 maps of A, B and C against the table of
 *    docs/layouts.md (PTX ISA §9.7.14.5.8), element by element, and
 *    that each is a bijection onto (lane, register half) of the right size;
 *  - MMA_C (a 64 x 64 block tile over 2 x 2 warps): tl_mma_c_coords inverts
 *    tl_mma_c_owner, and each warp's m16n8 tiles follow the one-warp C map;
 *  - the rs-form identity: a BM x K accumulator split only along M is
 *    exactly the A operand of the next mma (tl_gemm_rs_a_check), and split
 *    along N it is not (with the first element that differs). */
#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

#include "Lower/frag_layout.h"

typedef void (*tile_map)(int64_t row, int64_t col, int64_t *lane, int64_t *idx);

/* map against the table (want) on every element of a rows x cols tile, and
 * a bijection onto 32 lanes x halves register halves. */
static void check_tile(const char *name, int64_t rows, int64_t cols, int64_t halves, tile_map map, tile_map want) {
  bool seen[32][8] = {{false}};
  for (int64_t r = 0; r < rows; r++)
    for (int64_t c = 0; c < cols; c++) {
      int64_t lane, idx, wl, wi;
      map(r, c, &lane, &idx);
      want(r, c, &wl, &wi);
      cr_expect(lane == wl && idx == wi, "%s[%lld][%lld]: lane %lld half %lld, want %lld %lld", name, (long long)r,
                (long long)c, (long long)lane, (long long)idx, (long long)wl, (long long)wi);
      cr_assert(lane >= 0 && lane < 32 && idx >= 0 && idx < halves);
      cr_expect_not(seen[lane][idx]);
      seen[lane][idx] = true;
    }
}

/* docs/layouts.md with g = lane / 4, t = lane % 4: a0 = A[g][2t, 2t+1],
 * a1 = A[g+8][2t, 2t+1], a2 = A[g][2t+8, 2t+9], a3 = A[g+8][2t+8, 2t+9]. */
static void a_table(int64_t r, int64_t c, int64_t *lane, int64_t *idx) {
  *lane = 4 * (r % 8) + (c % 8) / 2;
  *idx = 2 * ((c >= 8 ? 2 : 0) + (r >= 8 ? 1 : 0)) + c % 2;
}
/* b0 = B[2t, 2t+1][g], b1 = B[2t+8, 2t+9][g]. */
static void b_table(int64_t k, int64_t n, int64_t *lane, int64_t *idx) {
  *lane = 4 * n + (k % 8) / 2;
  *idx = 2 * (k >= 8 ? 1 : 0) + k % 2;
}
/* c0, c1 = C[g][2t, 2t+1], c2, c3 = C[g+8][2t, 2t+1]. */
static void c_table(int64_t r, int64_t c, int64_t *lane, int64_t *idx) {
  *lane = 4 * (r % 8) + c / 2;
  *idx = (r >= 8 ? 2 : 0) + c % 2;
}

Test(mma_tile, maps_match_the_ptx_table) {
  check_tile("A", 16, 16, 8, tl_mma_a_lane, a_table);
  check_tile("B", 16, 8, 4, tl_mma_b_lane, b_table);
  check_tile("C", 16, 8, 4, tl_mma_c_lane, c_table);
  int64_t lane, idx;
  tl_mma_b_lane(9, 5, &lane, &idx); /* B[2t+9][g], g = 5, t = 0: b1's high half */
  cr_expect(lane == 20 && idx == 3);
  tl_mma_a_lane(15, 9, &lane, &idx); /* A[g+8][2t+9], g = 7, t = 0: a3's high half */
  cr_expect(lane == 28 && idx == 7);
}

Test(mma_c_block, owner_and_coords_are_inverse) {
  int64_t shape[2];
  tl_frag_layout L;
  memset(&L, 0, sizeof L);
  L.shape = shape;
  tl_mma_c_layout_init(&L, 64, 64, 128, 2, 2);
  cr_assert_eq(L.nregs, 32);
  cr_assert_eq(L.warp_tile_m, 32);
  for (int64_t i = 0; i < 64; i++)
    for (int64_t j = 0; j < 64; j++) {
      int64_t tid, reg, ii, jj, lane, c;
      tl_mma_c_owner(&L, i, j, &tid, &reg);
      cr_assert(tid >= 0 && tid < 128 && reg >= 0 && reg < 32);
      tl_mma_c_coords(&L, tid, reg, &ii, &jj);
      cr_expect(ii == i && jj == j, "(%lld, %lld) -> (%lld, %lld)", (long long)i, (long long)j, (long long)ii,
                (long long)jj);
      /* warp (i/32) + 2*(j/32); inside the warp the one-warp C map of tile (mi, nj) */
      tl_mma_c_lane(i % 16, j % 8, &lane, &c);
      cr_expect_eq(tid, 32 * (i / 32 + 2 * (j / 32)) + lane);
      cr_expect_eq(reg, 4 * (((i % 32) / 16) * 4 + (j % 32) / 8) + c);
    }
}

Test(mma_c_block, rs_form_a_operand) {
  int64_t shape[2];
  tl_frag_layout A;
  memset(&A, 0, sizeof A);
  A.shape = shape;
  tl_mma_c_layout_init(&A, 64, 32, 128, 4, 1); /* 4 warps along M: the P·V case */
  cr_expect(tl_gemm_rs_a_check(&A, 4, NULL, NULL));
  int64_t bi = -1, bk = -1;
  cr_expect_not(tl_gemm_rs_a_check(&A, 2, &bi, &bk)); /* another partition: not even checked */
  cr_expect_eq(bi, -1);
  tl_mma_c_layout_init(&A, 64, 32, 128, 2, 2);
  cr_expect_not(tl_gemm_rs_a_check(&A, 2, &bi, &bk)); /* split along N */
  A.warp_n = 1, A.warp_tile_n = 32, A.warp_m = 2;     /* a wrong map that claims warp_n = 1 */
  A.warp_tile_m = 16;
  cr_expect_not(tl_gemm_rs_a_check(&A, 2, &bi, &bk));
  cr_expect(bi >= 0 && bk >= 0);
}

/* STACKED along a split dim (docs/layouts.md "Stacked fragments"): F (64,
 * 256) over the MMA_C base (64, 64) of 2 x 2 warps, dim 1 split 4 ways:
 * F[i, c] on the owner of B[i, c % 64] in register (c / 64) * B.nregs +
 * reg_B, tl_frag_coords its inverse, every (thread, register) used once. */
Test(stacked, split_dim_owner_coords_bijection) {
  int64_t bshape[2] = {64, 64}, fshape[2] = {64, 256};
  tl_frag_layout B, F;
  memset(&B, 0, sizeof B);
  memset(&F, 0, sizeof F);
  B.shape = bshape;
  tl_mma_c_layout_init(&B, 64, 64, 128, 2, 2);
  F.shape = fshape;
  cr_assert(tl_stacked_split_init(&F, 1, &B));
  cr_assert_eq(F.nregs, 4 * B.nregs);
  fshape[1] = 250; /* not a multiple of the base's 64 */
  cr_assert_not(tl_stacked_split_init(&F, 1, &B));
  fshape[1] = 256;
  char *seen = calloc((size_t)(128 * F.nregs), 1);
  cr_assert(seen);
  for (int64_t i = 0; i < 64; i++)
    for (int64_t c = 0; c < 256; c++) {
      int64_t idx[2] = {i, c}, bidx[2] = {i, c % 64}, tid, reg, tb, rb, back[2], r2;
      tl_frag_owner(&F, idx, &tid, &reg);
      tl_frag_owner(&B, bidx, &tb, &rb);
      cr_assert(tid == tb && reg == (c / 64) * B.nregs + rb, "(%lld, %lld)", (long long)i, (long long)c);
      cr_assert(tl_frag_holds(&F, idx, tid, &r2) && r2 == reg);
      cr_assert(tl_frag_coords(&F, tid, reg, back) && back[0] == i && back[1] == c);
      cr_assert_not(seen[tid * F.nregs + reg]);
      seen[tid * F.nregs + reg] = 1;
    }
  free(seen);
}

/* COLS (docs/layouts.md "Column statistics"): the column statistics of a
 * ROWS source R x C hold element c on every thread that holds an element of
 * column c of the source (one per row group), in the register a loop over
 * the source finds it in (its register modulo cvg*vec); tl_frag_holds and
 * tl_frag_coords agree with that on every (thread, register), and the
 * 16-element case over 32 threads (TileLang's mhc_pre 4x4) has 4 replicas. */
static void check_cols(int64_t R, int64_t C, int64_t threads, int64_t vec, int64_t want_replicas) {
  int64_t sshape[2] = {R, C}, dshape[1] = {C};
  tl_frag_layout S, D;
  memset(&S, 0, sizeof S);
  memset(&D, 0, sizeof D);
  S.shape = sshape;
  tl_rows_layout_init(&S, 2, R, C, threads, vec, 0);
  D.shape = dshape;
  cr_assert(tl_cols_layout_init(&D, &S));
  cr_assert(tl_cols_fits(&D, &S));
  for (int64_t c = 0; c < C; c++) {
    int64_t n = 0, idx[1] = {c}, t0, r0;
    tl_frag_owner(&D, idx, &t0, &r0);
    cr_assert(tl_frag_holds(&D, idx, t0, &r0));
    for (int64_t r = 0; r < R; r++) { /* the source's holder of (r, c) holds D[c] in its register % nregs */
      int64_t sidx[2] = {r, c}, ts, rs, rd;
      tl_frag_owner(&S, sidx, &ts, &rs);
      cr_assert(tl_frag_holds(&D, idx, ts, &rd) && rd == rs % D.nregs, "%lldx%lld (%lld, %lld)", (long long)R,
                (long long)C, (long long)r, (long long)c);
    }
    for (int64_t t = 0; t < threads; t++) {
      int64_t rd, back[1];
      if (!tl_frag_holds(&D, idx, t, &rd)) continue;
      n++;
      cr_assert(tl_frag_coords(&D, t, rd, back) && back[0] == c);
    }
    cr_expect_eq(n, want_replicas, "%lldx%lld column %lld: %lld replicas", (long long)R, (long long)C, (long long)c,
                 (long long)n);
  }
  for (int64_t t = 0; t < threads; t++) /* every (thread, register) slot names an element it holds, or none */
    for (int64_t reg = 0; reg < D.nregs; reg++) {
      int64_t back[1], rd;
      if (tl_frag_coords(&D, t, reg, back)) cr_assert(tl_frag_holds(&D, back, t, &rd) && rd == reg);
    }
}

Test(cols, owner_holds_coords_agree_with_the_rows_source) {
  check_cols(4, 4, 32, 4, 4);     /* 4 groups of 8 threads */
  check_cols(64, 32, 128, 4, 16); /* 16 groups of 8, 4 rows a thread */
  check_cols(16, 12, 64, 4, 16);  /* padding column vectors */
  check_cols(16, 64, 96, 4, 1);   /* one group of 96 threads */
  check_cols(6, 4, 32, 4, 2);     /* 3 rows a thread */
}
