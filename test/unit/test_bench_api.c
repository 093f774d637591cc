/* Unit tests of the benchmark-facing API of lib/Runtime (issue 6), none of
 * which needs a GPU: the built-in GEMM tile configurations
 * (tl_gemm_configs, tl_gemm_config_defines, tl_gemm_config_format), the
 * per-stage compile times (tl_compile_options.times) and the argument and
 * driver checks of tl_kernel_launch_info.  Criterion runs each test in its
 * own process, so TL_CUDA_DRIVER set in a test only affects that test. */
#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

#include "Runtime/kernel.h"
#include "tilelang/tilelang.h"

static tl_dtype dt(const char *name) {
  tl_dtype t;
  cr_assert(tl_dtype_parse(name, &t), "dtype %s", name);
  return t;
}

/* The table's entries are tuned by whoever measures (lib/Runtime/configs.c);
 * these tests check the contract, not the current favourite. */
Test(gemm_configs, large_class_is_legal) {
  tl_gemm_config c[32];
  size_t n = tl_gemm_configs(4096, 4096, 4096, dt("float16"), c, 32);
  cr_assert_geq(n, 4);
  cr_assert_leq(n, 32);
  /* the large class leads with a large tile (>= 128 x 128 per block) */
  cr_assert_geq(c[0].block_M * c[0].block_N, 128 * 128);
  /* every candidate is a legal mma.sync tiling: multiples of the m16n8k16
   * instruction, a whole number of warps, at least 2 pipeline stages */
  for (size_t i = 0; i < n; i++) {
    cr_assert_eq(c[i].block_M % 16, 0);
    cr_assert_eq(c[i].block_N % 8, 0);
    cr_assert_eq(c[i].block_K % 16, 0);
    cr_assert_eq(c[i].threads % 32, 0);
    cr_assert_geq(c[i].num_stages, 2);
    /* shared memory of A and B tiles in 16-bit, all stages, under 227 KB */
    int smem = (c[i].block_M + c[i].block_N) * c[i].block_K * 2 * c[i].num_stages;
    cr_assert_leq(smem, 227 * 1024, "candidate %zu needs %d bytes", i, smem);
  }
  /* bfloat16 uses the same table */
  tl_gemm_config b[32];
  cr_assert_eq(tl_gemm_configs(4096, 4096, 4096, dt("bfloat16"), b, 32), n);
  cr_assert_eq(memcmp(b, c, n * sizeof *c), 0);
}

/* The wave classes follow the SM count: 2048^3 launches 64 blocks of
 * 256x128 (256 of 128x128): on 132 SMs less than two waves of the first
 * (the small class), on 32 SMs more than two waves (the large class), on
 * 300 SMs less than one wave of 128x128 (the tiny class). */
Test(gemm_configs, classes_follow_sm_count) {
  tl_gemm_config h200[32], few[32], many[32], dflt[32];
  size_t n132 = tl_gemm_configs_for(132, 2048, 2048, 2048, dt("float16"), h200, 32);
  size_t n32 = tl_gemm_configs_for(32, 2048, 2048, 2048, dt("float16"), few, 32);
  size_t n200 = tl_gemm_configs_for(300, 2048, 2048, 2048, dt("float16"), many, 32);
  cr_assert(n132 > 0 && n32 > 0 && n200 > 0);
  cr_expect(h200[0].block_M == 128 && h200[0].block_N == 128 && h200[0].threads == 128); /* small_grid */
  cr_expect(few[0].block_M == 128 && few[0].block_N == 256 && few[0].num_stages == 4);   /* large */
  cr_expect(many[0].block_M == 64 && many[0].block_N == 128 && many[0].num_stages == 4); /* tiny_grid */
  cr_expect_eq(tl_gemm_configs_for(0, 2048, 2048, 2048, dt("float16"), NULL, 0), 0);
  /* without a GPU (as here unless a driver exists) the H200's count */
  if (tl_driver_sm_count() == 0) {
    cr_assert_eq(tl_gemm_configs(2048, 2048, 2048, dt("float16"), dflt, 32), n132);
    cr_expect_eq(memcmp(dflt, h200, n132 * sizeof *dflt), 0);
  }
}

Test(gemm_configs, small_m_class) {
  tl_gemm_config c[32];
  size_t n = tl_gemm_configs(16, 8192, 8192, dt("float16"), c, 32);
  cr_assert_geq(n, 3);
  /* decode-like M leads with 64-row tiles */
  cr_assert_leq(c[0].block_M, 64);
  tl_gemm_config c2[32], big[32];
  cr_assert_eq(tl_gemm_configs(128, 8192, 8192, dt("float16"), c2, 32), n);
  /* the same candidates (M = 16 puts tiles taller than 64 rows last) */
  cr_assert_eq(memcmp(&c[0], &c2[0], sizeof *c), 0);
  for (size_t i = 0; i < n && i < 32; i++) {
    bool found = false;
    for (size_t j = 0; j < n && j < 32; j++) found |= memcmp(&c[i], &c2[j], sizeof *c) == 0;
    cr_assert(found, "candidate %zu of M = 16 is not one of M = 128", i);
    if (i > 0 && c[i - 1].block_M > 64) cr_assert_gt(c[i].block_M, 64, "candidate %zu", i);
  }
  size_t nb = tl_gemm_configs(129, 8192, 8192, dt("float16"), big, 32);
  cr_assert(nb != n || memcmp(c, big, (n < 32 ? n : 32) * sizeof *c) != 0, "M = 129 is the large class");
}

Test(gemm_configs, count_cap_and_unsupported) {
  size_t n = tl_gemm_configs(4096, 4096, 4096, dt("float16"), NULL, 0);
  cr_assert_gt(n, 0);
  tl_gemm_config one[1] = {{0}}, all[64];
  cr_assert_eq(tl_gemm_configs(4096, 4096, 4096, dt("float16"), one, 1), n);
  cr_assert_eq(tl_gemm_configs(4096, 4096, 4096, dt("float16"), all, 64), n);
  cr_assert_eq(memcmp(&one[0], &all[0], sizeof one[0]), 0);
  cr_assert_eq(tl_gemm_configs(4096, 4096, 4096, dt("float32"), one, 1), 0);
  cr_assert_eq(tl_gemm_configs(4096, 4096, 4096, dt("int8"), one, 1), 0);
  cr_assert_eq(tl_gemm_configs(0, 4096, 4096, dt("float16"), one, 1), 0);
  cr_assert_eq(tl_gemm_configs(4096, -1, 4096, dt("float16"), one, 1), 0);
}

Test(gemm_configs, defines_and_format) {
  tl_gemm_config c = {128, 256, 32, 256, 3, 1, 10};
  tl_define d[7];
  char st[7][16];
  cr_assert_eq(tl_gemm_config_defines(&c, d, st), 7);
  const char *names[7] = {"block_M", "block_N", "block_K", "threads", "num_stages", "policy", "swizzle_panel"};
  const char *vals[7] = {"128", "256", "32", "256", "3", "1", "10"};
  for (int i = 0; i < 7; i++) {
    cr_assert_str_eq(d[i].name, names[i]);
    cr_assert_str_eq(d[i].value, vals[i]);
  }
  char buf[64];
  cr_assert_str_eq(tl_gemm_config_format(&c, buf, sizeof buf), "128x256x32/256t/s3/p1/swz10");
  tl_gemm_config p = {64, 128, 64, 128, 4, 0, 0};
  cr_assert_str_eq(tl_gemm_config_format(&p, buf, sizeof buf), "64x128x64/128t/s4");
  char tiny[6];
  cr_assert_str_eq(tl_gemm_config_format(&p, tiny, sizeof tiny), "64x12");
  cr_assert_eq(tl_gemm_config_defines(NULL, d, st), 0);
}

/* The configurations bind the factory of examples/gemm.py: each candidate
 * for 1024^3 (large class) parses and lowers to SIMT IR. */
Test(gemm_configs, candidates_lower_for_gemm_py) {
  setenv("TL_CUDA_DRIVER", "/nonexistent/libcuda.so.1", 1);
  tl_context *ctx;
  cr_assert_eq(tl_context_create(&ctx), TL_OK);
  tl_gemm_config c[32];
  size_t n = tl_gemm_configs(1024, 1024, 1024, dt("float16"), c, 32);
  int ok = 0;
  for (size_t i = 0; i < n && i < 32; i++) {
    tl_define d[7];
    char st[7][16];
    tl_gemm_config_defines(&c[i], d, st);
    tl_compile_options o = {0};
    o.stop_after = TL_STAGE_SIMT;
    o.target = "sm_80";
    tl_kernel *k = NULL;
    /* gemm.py has no policy / swizzle_panel parameters: the first 5 */
    tl_status s = tl_kernel_compile_file(ctx, "examples/gemm.py", d, 5, &o, &k);
    cr_expect_eq(s, TL_OK, "candidate %zu: %s", i, tl_context_last_error(ctx));
    if (s == TL_OK) ok++;
    tl_kernel_destroy(k);
  }
  cr_assert_eq(ok, (int)n);
  tl_context_destroy(ctx);
}

Test(compile_times, stages_partition_the_total) {
  setenv("TL_CUDA_DRIVER", "/nonexistent/libcuda.so.1", 1);
  tl_context *ctx;
  cr_assert_eq(tl_context_create(&ctx), TL_OK);
  tl_compile_times tm;
  memset(&tm, 0xFF, sizeof tm); /* NaN-like garbage: everything must be written */
  tl_compile_options o = {0};
  o.target = "sm_80";
  o.times = &tm;
  tl_kernel *k = NULL;
  cr_assert_eq(tl_kernel_compile_file(ctx, "examples/elementwise_add.py", NULL, 0, &o, &k), TL_OK, "%s",
               tl_context_last_error(ctx));
  double parts[7] = {tm.parse, tm.tile_passes, tm.simt, tm.llvm_ir, tm.opt, tm.ptx, tm.other};
  double sum = 0;
  for (int i = 0; i < 7; i++) {
    cr_assert(parts[i] >= 0 && parts[i] < 60000, "stage %d: %g ms", i, parts[i]);
    sum += parts[i];
  }
  cr_assert_gt(tm.parse, 0);
  cr_assert_gt(tm.opt, 0);
  cr_assert_gt(tm.ptx, 0);
  cr_assert_gt(tm.total, 0);
  cr_assert_float_eq(sum, tm.total, 1e-6 * tm.total + 1e-9, "stages %g vs total %g", sum, tm.total);
  tl_kernel_destroy(k);

  /* up to SIMT only: no LLVM stages */
  o.stop_after = TL_STAGE_SIMT;
  memset(&tm, 0xFF, sizeof tm);
  cr_assert_eq(tl_kernel_compile_file(ctx, "examples/gemm.py", NULL, 0, &o, &k), TL_OK);
  cr_assert_eq(tm.llvm_ir, 0);
  cr_assert_eq(tm.opt, 0);
  cr_assert_eq(tm.ptx, 0);
  cr_assert_gt(tm.tile_passes + tm.simt, 0);
  cr_assert(tm.total >= tm.parse + tm.tile_passes + tm.simt);
  tl_kernel_destroy(k);

  /* a failing compile reports the stages that ran */
  static const char bad[] =
      "import tilelang.language as T\n@T.prim_func\ndef main(A: T.Tensor((4,), \"float32\")):\n    nosuch(A)\n";
  o.stop_after = TL_STAGE_PTX;
  memset(&tm, 0xFF, sizeof tm);
  cr_assert_neq(tl_kernel_compile(ctx, bad, strlen(bad), "bad.py", NULL, 0, &o, &k), TL_OK);
  cr_assert_null(k);
  cr_assert_geq(tm.parse, 0);
  cr_assert_eq(tm.opt, 0);
  cr_assert_geq(tm.total, tm.parse);
  tl_context_destroy(ctx);
}

Test(launch_info, checks_before_the_driver) {
  setenv("TL_CUDA_DRIVER", "/nonexistent/libcuda.so.1", 1);
  tl_context *ctx;
  cr_assert_eq(tl_context_create(&ctx), TL_OK);
  tl_launch_info li;
  cr_assert_eq(tl_kernel_launch_info(ctx, NULL, NULL, 0, &li), TL_ERR_INVALID_ARGUMENT);
  cr_assert_null(li.params);
  tl_compile_options o = {0};
  o.target = "sm_80";
  o.out_idx_mode = TL_OUT_IDX_NONE;
  tl_kernel *k = NULL;
  tl_define d[2] = {{"M", "32"}, {"N", "128"}};
  cr_assert_eq(tl_kernel_compile_file(ctx, "examples/elementwise_add.py", d, 2, &o, &k), TL_OK);
  cr_assert_eq(tl_kernel_launch_info(ctx, k, NULL, 0, NULL), TL_ERR_INVALID_ARGUMENT);
  /* wrong argument count: the binder's message, nothing filled */
  cr_assert_eq(tl_kernel_launch_info(ctx, k, NULL, 0, &li), TL_ERR_INVALID_ARGUMENT);
  cr_assert_eq(li.nparams, 0);
  cr_assert_null(li.function);
  /* right arguments (CUDA tensors), no driver: TL_ERR_NO_DEVICE */
  int64_t shape[2] = {32, 128};
  DLTensor t[3];
  memset(t, 0, sizeof t);
  for (int i = 0; i < 3; i++) {
    t[i].data = (void *)(uintptr_t)(0x10000 * (i + 1));
    t[i].device.device_type = kDLCUDA;
    t[i].ndim = 2;
    t[i].dtype.code = kDLFloat;
    t[i].dtype.bits = 32;
    t[i].dtype.lanes = 1;
    t[i].shape = shape;
  }
  tl_arg a[3] = {tl_arg_tensor(&t[0]), tl_arg_tensor(&t[1]), tl_arg_tensor(&t[2])};
  cr_assert_eq(tl_kernel_launch_info(ctx, k, a, 3, &li), TL_ERR_NO_DEVICE, "%s", tl_context_last_error(ctx));
  cr_assert_null(li.params);
  tl_launch_info_free(&li);
  tl_launch_info_free(NULL);
  tl_kernel_destroy(k);
  tl_context_destroy(ctx);
}

Test(gemm_configs, small_grid_class) {
  /* fewer than 2 waves of 256x128 blocks on 132 SMs: smaller tiles first */
  tl_gemm_config c[32], big[32];
  size_t n = tl_gemm_configs(1024, 1024, 1024, dt("float16"), c, 32);
  cr_assert_geq(n, 2);
  cr_assert_lt(c[0].block_M * c[0].block_N, 256 * 128);
  cr_assert_geq(tl_gemm_configs(2048, 2048, 2048, dt("float16"), c, 32), 2);
  cr_assert_lt(c[0].block_M * c[0].block_N, 256 * 128);
  /* 1024^3 has 64 blocks even of 128x128 tiles: a still smaller first tile */
  tl_gemm_configs(1024, 1024, 1024, dt("float16"), big, 32);
  cr_assert_lt(big[0].block_M * big[0].block_N, c[0].block_M * c[0].block_N);
  /* 4096^3 has 512 blocks of 256x128: the large class (8-warp 32K-element tiles) */
  size_t nb = tl_gemm_configs(4096, 4096, 4096, dt("float16"), big, 32);
  cr_assert_geq(nb, 1);
  cr_assert_eq(big[0].block_M * big[0].block_N, 256 * 128);
}
