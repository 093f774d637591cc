/* Unit tests of the fragment-layout module (lib/Lower/frag_layout.{c,h}):
 *  - the one-warp mma.sync m16n8k16 maps of A, B and C against the table of
 *    ../shared/NVPTX.md §6 (PTX ISA §9.7.14.5.8), element by element, and
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

Test(mma_tile, a_map_matches_the_ptx_table) {
  bool seen[32][8] = {{false}};
  for (int64_t r = 0; r < 16; r++)
    for (int64_t c = 0; c < 16; c++) {
      int64_t lane, idx;
      tl_mma_a_lane(r, c, &lane, &idx);
      int64_t g = r % 8, t = (c % 8) / 2;
      /* a0 = A[g][2t..], a1 = A[g+8][2t..], a2 = A[g][2t+8..], a3 = A[g+8][2t+8..] */
      int64_t want_reg = (c >= 8 ? 2 : 0) + (r >= 8 ? 1 : 0);
      cr_expect_eq(lane, 4 * g + t, "A[%lld][%lld]", (long long)r, (long long)c);
      cr_expect_eq(idx, 2 * want_reg + c % 2, "A[%lld][%lld]", (long long)r, (long long)c);
      cr_assert(lane >= 0 && lane < 32 && idx >= 0 && idx < 8);
      cr_expect_not(seen[lane][idx]);
      seen[lane][idx] = true;
    }
}

Test(mma_tile, b_map_matches_the_ptx_table) {
  bool seen[32][4] = {{false}};
  for (int64_t k = 0; k < 16; k++)
    for (int64_t n = 0; n < 8; n++) {
      int64_t lane, idx;
      tl_mma_b_lane(k, n, &lane, &idx);
      /* b0 = B[2t, 2t+1][g], b1 = B[2t+8, 2t+9][g]: lane 4g + t */
      cr_expect_eq(lane, 4 * n + (k % 8) / 2);
      cr_expect_eq(idx / 2, k / 8);
      cr_expect_eq(idx % 2, k % 2);
      cr_assert(lane >= 0 && lane < 32 && idx >= 0 && idx < 4);
      cr_expect_not(seen[lane][idx]);
      seen[lane][idx] = true;
    }
  int64_t lane, idx;
  tl_mma_b_lane(9, 5, &lane, &idx); /* B[2t+9][g] with g = 5, t = 0: b1 high half */
  cr_expect_eq(lane, 20);
  cr_expect_eq(idx, 3);
}

Test(mma_tile, c_map_matches_the_ptx_table) {
  bool seen[32][4] = {{false}};
  for (int64_t r = 0; r < 16; r++)
    for (int64_t c = 0; c < 8; c++) {
      int64_t lane, idx;
      tl_mma_c_lane(r, c, &lane, &idx);
      /* c0, c1 = C[g][2t, 2t+1], c2, c3 = C[g+8][2t, 2t+1] */
      cr_expect_eq(lane, 4 * (r % 8) + c / 2);
      cr_expect_eq(idx, (r >= 8 ? 2 : 0) + c % 2);
      cr_expect_not(seen[lane][idx]);
      seen[lane][idx] = true;
    }
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
      cr_expect(ii == i && jj == j, "(%lld, %lld) -> (%lld, %lld)", (long long)i, (long long)j,
                (long long)ii, (long long)jj);
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
  A.warp_n = 1, A.warp_tile_n = 32, A.warp_m = 2; /* a wrong map that claims warp_n = 1 */
  A.warp_tile_m = 16;
  cr_expect_not(tl_gemm_rs_a_check(&A, 2, &bi, &bk));
  cr_expect(bi >= 0 && bk >= 0);
}
