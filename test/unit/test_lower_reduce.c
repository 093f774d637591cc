/* Unit tests of the reduction layouts and lowering (issue 7, lib/Lower/
 * lower_reduce.c, layout_infer.c):
 *  - ROWS layouts: (thread, register) injective over every element,
 *    tl_frag_coords inverts tl_frag_owner, every row lives in one group of
 *    whole warps (or one power-of-two lane group) chosen by tl_rows_groups;
 *  - REDUCER layouts of MMA_C and ROWS sources: for every source element
 *    (i, j) its thread holds statistic i (so the per-thread partial and the
 *    broadcast of acc[i, j] * s[i] need no data movement), the owners of
 *    row i are exactly the threads holding row i of the source, and the
 *    docs/layouts.md "Row statistics" formulas hold: tid = 32*(i/WM + m*ρ2) + 4*(i%8) + ρ1,
 *    reg = (i%WM)/8, and C register q pairs with statistic 2*(q/(WN/2)) +
 *    (q/2)%2;
 *  - tl_reducer_fits / tl_reducer_same accept the FlashAttention pairing
 *    (same warp_m) and reject a Square accumulator;
 *  - layout inference on TileLang text: softmax rows get ROWS with a warp
 *    per row; FlashAttention statistics get the REDUCER layout of acc_s;
 *    the lowered code has shuffles and a shared scratch only where rows span
 *    warps. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "IR/tir.h"
#include "Lower/lower.h"
#include "Lower/lower_internal.h"
#include "tilelang/ir.h"

/* ================================================================ ROWS */
static void check_rows(int64_t R, int64_t C, int64_t T, int64_t vec) {
  tl_frag_layout L;
  int64_t shape[2] = {R, C};
  memset(&L, 0, sizeof L);
  L.shape = shape;
  tl_rows_layout_init(&L, 2, R, C, T, vec, 0);
  int64_t g = L.group, G = L.groups;
  cr_assert_eq(g * G, T, "R=%lld C=%lld T=%lld: g=%lld G=%lld", (long long)R, (long long)C, (long long)T, (long long)g,
               (long long)G);
  cr_assert(g >= 32 ? g % 32 == 0 : (g & (g - 1)) == 0);
  cr_assert_eq(R % G, 0);
  char *seen = calloc((size_t)(T * L.nregs), 1);
  for (int64_t i = 0; i < R; i++)
    for (int64_t j = 0; j < C; j++) {
      int64_t idx[2] = {i, j}, tid, reg, back[2];
      tl_frag_owner(&L, idx, &tid, &reg);
      cr_assert(tid >= 0 && tid < T && reg >= 0 && reg < L.nregs);
      cr_assert_eq(seen[tid * L.nregs + reg], 0, "(%lld, %lld) collides", (long long)i, (long long)j);
      seen[tid * L.nregs + reg] = 1;
      cr_assert_eq(tid / g, i % G, "row %lld is not in group %lld", (long long)i, (long long)(i % G));
      cr_assert(tl_frag_coords(&L, tid, reg, back));
      cr_assert(back[0] == i && back[1] == j);
    }
  free(seen);
}

Test(rows, injective_and_inverse) {
  check_rows(4, 4096, 128, 4); /* softmax block: a warp per row */
  check_rows(1, 4096, 128, 4); /* RMSNorm block: a row over 4 warps */
  check_rows(128, 128, 128, 4);
  check_rows(192, 64, 128, 4);
  check_rows(192, 64, 32, 4);
  check_rows(64, 16, 128, 4); /* short rows: 4-lane groups */
  check_rows(3, 100, 64, 4);  /* odd rows, padding columns */
  check_rows(8, 64, 16, 1);   /* fewer threads than a warp */
}

Test(rows, group_choice) {
  cr_assert_eq(tl_rows_groups(4, 4096, 128, 4), 4); /* 32 lanes per row */
  cr_assert_eq(tl_rows_groups(1, 4096, 128, 4), 1); /* 128 lanes per row */
  cr_assert_eq(tl_rows_groups(64, 16, 128, 4), 32); /* 4 column vectors: 4 lanes */
  cr_assert_eq(tl_rows_groups(3, 4096, 128, 4), 1);
}

/* ============================================================== REDUCER */
static void check_reducer_of(const tl_frag_layout *S, int64_t R, int64_t C) {
  tl_frag_layout D;
  int64_t dshape[1] = {R};
  memset(&D, 0, sizeof D);
  cr_assert(tl_reducer_layout_init(&D, S, 1));
  D.shape = dshape;
  cr_assert_eq(D.total, R);
  int64_t T = S->threads;
  for (int64_t i = 0; i < R; i++) {
    /* holders of row i in the source */
    char *row = calloc((size_t)T, 1);
    for (int64_t j = 0; j < C; j++) {
      int64_t idx[2] = {i, j}, tid, reg, sreg;
      tl_frag_owner(S, idx, &tid, &reg);
      row[tid] = 1;
      int64_t di[1] = {i};
      cr_assert(tl_frag_holds(&D, di, tid, &sreg), "thread %lld holds (%lld, %lld) but not statistic %lld",
                (long long)tid, (long long)i, (long long)j, (long long)i);
      if (S->kind == TL_FRAG_MMA_C) {
        int64_t WN = S->warp_tile_n;
        cr_assert_eq(sreg, 2 * (reg / (WN / 2)) + (reg / 2) % 2, "C register %lld of row %lld", (long long)reg,
                     (long long)i);
      }
    }
    for (int64_t t = 0; t < T; t++) {
      int64_t di[1] = {i}, reg, back[1];
      bool holds = tl_frag_holds(&D, di, t, &reg);
      if (S->kind == TL_FRAG_MMA_C) /* ROWS groups may include idle lanes of short rows */
        cr_assert_eq(holds, row[t] != 0, "thread %lld, row %lld", (long long)t, (long long)i);
      else if (row[t]) cr_assert(holds);
      if (holds) {
        cr_assert(tl_frag_coords(&D, t, reg, back));
        cr_assert_eq(back[0], i);
      }
    }
    free(row);
  }
}

Test(reducer, of_mma_c) {
  int64_t shape[2];
  tl_frag_layout S;
  int64_t cfg[][5] = {
      {128, 128, 128, 2, 2}, {128, 64, 128, 4, 1}, {64, 128, 128, 4, 1}, {128, 128, 256, 2, 4}, {64, 64, 128, 1, 4}};
  for (size_t c = 0; c < sizeof cfg / sizeof cfg[0]; c++) {
    memset(&S, 0, sizeof S);
    S.shape = shape;
    tl_mma_c_layout_init(&S, cfg[c][0], cfg[c][1], cfg[c][2], cfg[c][3], cfg[c][4]);
    check_reducer_of(&S, cfg[c][0], cfg[c][1]);
  }
  /* docs/layouts.md "Row statistics": 128x128, (2, 2): row i on 32*(i/64 + 2*ρ2) + 4*(i%8) + ρ1, reg (i%64)/8 */
  memset(&S, 0, sizeof S);
  S.shape = shape;
  tl_mma_c_layout_init(&S, 128, 128, 128, 2, 2);
  tl_frag_layout D;
  int64_t dshape[1] = {128};
  memset(&D, 0, sizeof D);
  tl_reducer_layout_init(&D, &S, 1);
  D.shape = dshape;
  cr_assert_eq(D.nregs, 8);
  for (int64_t i = 0; i < 128; i++)
    for (int64_t r2 = 0; r2 < 2; r2++)
      for (int64_t r1 = 0; r1 < 4; r1++) {
        int64_t di[1] = {i}, reg;
        cr_assert(tl_frag_holds(&D, di, 32 * (i / 64 + 2 * r2) + 4 * (i % 8) + r1, &reg));
        cr_assert_eq(reg, (i % 64) / 8);
      }
}

Test(reducer, of_rows) {
  int64_t cfg[][4] = {{4, 4096, 128, 4}, {1, 4096, 128, 4}, {192, 64, 128, 4}, {3, 100, 64, 4}, {64, 16, 128, 4}};
  for (size_t c = 0; c < sizeof cfg / sizeof cfg[0]; c++) {
    tl_frag_layout S;
    int64_t shape[2] = {cfg[c][0], cfg[c][1]};
    memset(&S, 0, sizeof S);
    S.shape = shape;
    tl_rows_layout_init(&S, 2, cfg[c][0], cfg[c][1], cfg[c][2], cfg[c][3], 0);
    check_reducer_of(&S, cfg[c][0], cfg[c][1]);
  }
}

Test(reducer, fits_and_same) {
  int64_t s1[2], s2[2], s3[2];
  tl_frag_layout acc_s, acc_o, sq;
  memset(&acc_s, 0, sizeof acc_s);
  memset(&acc_o, 0, sizeof acc_o);
  memset(&sq, 0, sizeof sq);
  acc_s.shape = s1;
  acc_o.shape = s2;
  sq.shape = s3;
  tl_mma_c_layout_init(&acc_s, 128, 64, 128, 4, 1);  /* FlashAttention S = Q K^T, FullRow */
  tl_mma_c_layout_init(&acc_o, 128, 128, 128, 4, 1); /* O, FullRow */
  tl_mma_c_layout_init(&sq, 128, 128, 128, 2, 2);    /* O with Square */
  tl_frag_layout D, E;
  memset(&D, 0, sizeof D);
  memset(&E, 0, sizeof E);
  tl_reducer_layout_init(&D, &acc_s, 1);
  tl_reducer_layout_init(&E, &acc_o, 1);
  cr_assert(tl_reducer_fits(&D, &acc_o));
  cr_assert(tl_reducer_same(&D, &E));
  cr_assert_not(tl_reducer_fits(&D, &sq));
}

/* ==================================================== inference + lowering */
static tl_module *lower_text(const char *src, bool expect_ok, char **diag_text) {
  tl_module *m = tl_module_new();
  cr_assert(m);
  tl_diag d;
  tl_diag_init(&d);
  tl_diag_add_source(&d, "t.py", src, strlen(src));
  bool ok = tl_frontend_parse(m, &d, src, strlen(src), "t.py", NULL, 0);
  cr_assert(ok, "parse failed:\n%s", d.out.data ? d.out.data : "");
  tl_lower_options o = {.target = tl_target_lookup("sm_80"), .verify_each = true};
  ok = tl_lower_module(m, &o, &d);
  cr_assert_eq(ok, expect_ok, "%s", d.out.data ? d.out.data : "");
  if (diag_text) *diag_text = strdup(d.out.data ? d.out.data : "");
  tl_diag_free(&d);
  return m;
}

static char *print(tl_module *m) {
  tl_strbuf sb = {0};
  tl_print_module(&sb, m);
  char *s = strdup(sb.data);
  tl_strbuf_free(&sb);
  return s;
}

static const char *softmax_src =
    "import tilelang.language as T\n"
    "@T.prim_func\n"
    "def main(X: T.Tensor((16, 1024), \"float32\"), Y: T.Tensor((16, 1024), \"float32\")):\n"
    "    with T.Kernel(4, threads=128) as bx:\n"
    "        x = T.alloc_fragment((4, 1024), \"float32\")\n"
    "        mx = T.alloc_fragment((4,), \"float32\")\n"
    "        T.copy(X[bx * 4, 0], x)\n"
    "        T.reduce_max(x, mx, dim=1)\n"
    "        for i, j in T.Parallel(4, 1024):\n"
    "            x[i, j] = x[i, j] - mx[i]\n"
    "        T.copy(x, Y[bx * 4, 0])\n";

Test(lower, softmax_rows_use_one_warp_per_row) {
  tl_module *m = lower_text(softmax_src, true, NULL);
  char *s = print(m);
  /* 4 rows over 4 warps: each thread holds 1024/32 = 32 elements and 1 statistic */
  cr_assert(strstr(s, "x = T.alloc_local((32,), \"float32\")"), "%s", s);
  cr_assert(strstr(s, "mx = T.alloc_local((1,), \"float32\")"), "%s", s);
  cr_assert(strstr(s, "T.shfl_xor(red_acc[rk_1], 16, 32)"), "%s", s);
  cr_assert(strstr(s, "T.shfl_xor(red_acc[rk_1], 1, 32)"), "%s", s);
  cr_assert_null(strstr(s, "red_ws"), "a warp per row needs no shared memory:\n%s", s);
  free(s);
  tl_module_destroy(m);
}

Test(lower, row_over_warps_uses_shared_scratch) {
  const char *src =
      "import tilelang.language as T\n"
      "@T.prim_func\n"
      "def main(X: T.Tensor((1, 1024), \"float32\"), Y: T.Tensor((1,), \"float32\")):\n"
      "    with T.Kernel(1, threads=128) as bx:\n"
      "        x = T.alloc_fragment((1, 1024), \"float32\")\n"
      "        s = T.alloc_fragment((1,), \"float32\")\n"
      "        T.copy(X, x)\n"
      "        T.reduce_sum(x, s, dim=1)\n"
      "        T.copy(s, Y)\n";
  tl_module *m = lower_text(src, true, NULL);
  char *s = print(m);
  cr_assert(strstr(s, "red_ws = T.alloc_shared((128,), \"float32\")"), "%s", s);
  cr_assert(strstr(s, "T.sync_threads()"), "%s", s);
  cr_assert(m->funcs[0]->smem_bytes >= 512, "smem_bytes %lld", (long long)m->funcs[0]->smem_bytes);
  free(s);
  tl_module_destroy(m);
}

Test(lower, statistic_conflict_names_buffer_and_ops) {
  /* statistics of a FullRow accumulator read beside a Square one */
  const char *src =
      "import tilelang.language as T\n"
      "@T.prim_func\n"
      "def main(A: T.Tensor((128, 32), \"float16\"), B: T.Tensor((32, 128), \"float16\"), C: T.Tensor((128, 128), "
      "\"float32\")):\n"
      "    with T.Kernel(1, threads=128) as bx:\n"
      "        A_s = T.alloc_shared((128, 32), \"float16\")\n"
      "        B_s = T.alloc_shared((32, 128), \"float16\")\n"
      "        s1 = T.alloc_fragment((128, 128), \"float32\")\n"
      "        s2 = T.alloc_fragment((128, 128), \"float32\")\n"
      "        mx = T.alloc_fragment((128,), \"float32\")\n"
      "        T.copy(A, A_s)\n"
      "        T.copy(B, B_s)\n"
      "        T.gemm(A_s, B_s, s1, clear_accum=True, policy=T.GemmWarpPolicy.FullRow)\n"
      "        T.gemm(A_s, B_s, s2, clear_accum=True, policy=T.GemmWarpPolicy.Square)\n"
      "        T.reduce_max(s1, mx, dim=1)\n"
      "        for i, j in T.Parallel(128, 128):\n"
      "            s2[i, j] = s2[i, j] - mx[i]\n"
      "        T.copy(s2, C)\n";
  char *text = NULL;
  tl_module *m = lower_text(src, false, &text);
  cr_assert(strstr(text, "t.py:15:9: error: layout conflict for fragment 'mx'"), "%s", text);
  cr_assert(strstr(text, "row i of 's2'"), "%s", text);
  cr_assert(strstr(text, "t.py:14:9: note: the T.reduce_max that sets the layout of 'mx' is here"), "%s", text);
  cr_assert(strstr(text, "t.py:13:9: note: the T.gemm that sets the layout of 's2' is here"), "%s", text);
  free(text);
  tl_module_destroy(m);
}
