/* GPU test of FlashAttention's Hopper path (issue 19, first step):
 * examples/flash_attention.py compiled for sm_90a with tiles that take
 * lib/Lower/Hopper/warp_specialize.c's attention form (block_M = 64 x consumer
 * warpgroups: TMA loads of Q, K and V from a producer warpgroup on an
 * mbarrier ring, Q·Kᵀ as wgmma with both operands in shared memory, P·V as
 * wgmma with P in registers), and test/GPU/kernels/chained_gemm.py (the rs
 * wgmma alone: O = cast_f16(A·Bᵀ)·C).
 *  - The PTX has both wgmma.mma_async forms (ss: two descriptors; rs: A in
 *    four b32 registers `{%r..}`) and cp.async.bulk.tensor.
 *  - The GPU output (outputs poisoned with NaN before the launch, so an
 *    unwritten element fails) against the tile-level reference evaluator
 *    (lib/Interp, tl_kernel_call_on TL_EXEC_REFERENCE on host copies of the
 *    inputs), every element, with FlashAttention's f16 tolerance
 *    |out - ref| <= 1e-2 + 1e-2 |ref| (docs/testing.md "Numeric checks"; test_flash_attention.c).
 * Cases: (1, 4, 512, 128) and (1, 4, 512, 64), causal and not, 128x128 tiles,
 * 2 stages, 256 threads (two consumer warpgroups), without and with fast
 * math; (1, 4, 512, 128) causal at 64x64/128 threads/1 stage (one consumer
 * warpgroup); head dim 256 at 128x80 ((1, 4, 640, 256): whole tiles) and
 * (causal) 128x64, 256 threads; examples/flash_attention_gqa.py (8 query
 * heads on 2 KV heads) at (1, 8, 512, 128), causal and not; seq_len 1000 (not
 * a tile multiple: partial last tiles, the example's tail mask), causal and
 * not, at head dims 128 (with and without fast math), 64 and 256 (128x64) and
 * GQA (1, 8 on 2, 1000, 128); the ping-pong schedule (TL_COMPILE_ATTENTION_PINGPONG,
 * names ending _pingpong) at (1, 4, 512, 128) with fast math, (1, 4, 1000,
 * 128), (1, 4, 512, 64), GQA at seq_len 1000, causal and not, and head dim 256
 * causal; the overlap schedule (TL_COMPILE_ATTENTION_OVERLAP, names ending
 * _overlap: each consumer's softmax under its own P·V) at the same cases as
 * the ping-pong's and (1, 4, 1000, 64), with and without fast math; the chained GEMM
 * at 512 x 512 x 128 x 128, 128x64/256 threads.
 * Exits 77 without a driver/GPU or when the device is not sm_90a.
 * Optional argument: a substring filter on case names. */
#include "gemm_util.h" /* gpu_util.h, cmp_result */

static tl_context *ctx;

static char *fmt_int(int v) {
  char *s = malloc(16);
  snprintf(s, 16, "%d", v);
  return s; /* small, kept for the process */
}

/* Does the PTX have a wgmma.mma_async line containing pat? */
static bool wgmma_line_has(const char *ptx, const char *pat) {
  for (const char *p = strstr(ptx, "wgmma.mma_async"); p; p = strstr(p + 1, "wgmma.mma_async")) {
    const char *end = strchr(p, '\n');
    size_t len = end ? (size_t)(end - p) : strlen(p);
    const char *q = strstr(p, pat);
    if (q && (size_t)(q - p) < len) return true;
  }
  return false;
}

/* flags: TL_COMPILE_FAST_MATH, TL_COMPILE_ATTENTION_PINGPONG, TL_COMPILE_ATTENTION_OVERLAP,
 * TL_COMPILE_ATTENTION_PERSISTENT (planned for PERSIST_SMS SMs, so that the
 * blocks run several tiles at these sizes), or 0 */
#define PERSIST_SMS 5
static tl_kernel *compile(const char *name, const char *path, tl_define *defs, size_t nd, unsigned flags) {
  tl_compile_options o = {0};
  o.target = "sm_90a";
  o.flags = TL_COMPILE_POISON_OUTPUTS | flags;
  if (flags & TL_COMPILE_ATTENTION_PERSISTENT) o.sms = PERSIST_SMS;
  tl_kernel *k = NULL;
  if (tl_kernel_compile_file(ctx, path, defs, nd, &o, &k) != TL_OK) {
    CHECK(0, "%s: compiling %s: %s", name, path, tl_context_last_error(ctx));
    return NULL;
  }
  const char *ptx = tl_kernel_ptx(k);
  CHECK(wgmma_line_has(ptx, "}, %rd"), "%s: the PTX has no wgmma.mma_async with shared-memory descriptors (ss)", name);
  CHECK(wgmma_line_has(ptx, "}, {%r"), "%s: the PTX has no wgmma.mma_async with A in registers (rs)", name);
  CHECK(strstr(ptx, "cp.async.bulk.tensor") != NULL, "%s: the PTX has no TMA load (cp.async.bulk.tensor)", name);
  if (flags & TL_COMPILE_ATTENTION_PINGPONG) /* the turns: named barriers 2 and 3 (warp_specialize.c pp_turn) */
    CHECK(strstr(ptx, "barrier.arrive.aligned 2, 256;") && strstr(ptx, "barrier.arrive.aligned 3, 256;"),
          "%s: the PTX has no ping-pong hand-over (barrier.arrive.aligned 2|3, 256)", name);
  if (flags & TL_COMPILE_ATTENTION_OVERLAP) /* Q·Kᵀ waited with P·V in flight (attention_overlap.c) */
    CHECK(strstr(ptx, "wgmma.wait_group.sync.aligned 1;") != NULL, "%s: the PTX has no wgmma.wait_group 1", name);
  if (flags & TL_COMPILE_ATTENTION_PERSISTENT) { /* one block along x per SM (warp_specialize.c persist_plan) */
    char want[64];
    snprintf(want, sizeof want, "T.Kernel(%d, threads=", PERSIST_SMS);
    const char *simt = tl_kernel_simt_ir(k);
    CHECK(simt && strstr(simt, want), "%s: the SIMT IR has no persistent grid '%s'", name, want);
  }
  return k;
}

/* Runs k on the GPU and on the reference evaluator with the inputs in[0..nin)
 * (dtype dt_in[i], shape shapes[i]); compares the one output (dtype dt_out,
 * n elements) element by element. */
static void run_vs_reference(const char *name, tl_kernel *k, int nin, const dt_kind *dt_in, const int64_t (*shapes)[4],
                             const int *ndims, dt_kind dt_out, size_t n) {
  dev_tensor X[3];
  void *hx[3];
  tl_arg args[3], hargs[3];
  DLTensor ht[3];
  for (int i = 0; i < nin; i++) {
    hx[i] = dev_random(&X[i], dt_in[i], ndims[i], shapes[i]);
    args[i] = tl_arg_tensor(&X[i].t);
    ht[i] = X[i].t;
    ht[i].data = hx[i];
    ht[i].device.device_type = kDLCPU;
    hargs[i] = tl_arg_tensor(&ht[i]);
  }
  DLManagedTensor *out[1] = {NULL}, *rout[1] = {NULL};
  void *ho = NULL;
  if (tl_kernel_call(ctx, k, args, nin, NULL, out) != TL_OK) {
    CHECK(0, "%s: GPU call: %s", name, tl_context_last_error(ctx));
    goto done;
  }
  CU(G.cuCtxSynchronize());
  ho = download((uintptr_t)out[0]->dl_tensor.data, n * dt_size(dt_out));
  out[0]->deleter(out[0]);
  double t0 = now_ms();
  if (tl_kernel_call_on(ctx, k, TL_EXEC_REFERENCE, hargs, nin, NULL, rout) != TL_OK) {
    CHECK(0, "%s: reference evaluator: %s", name, tl_context_last_error(ctx));
    goto done;
  }
  cmp_result r;
  memset(&r, 0, sizeof r);
  const void *ref = rout[0]->dl_tensor.data;
  for (size_t i = 0; i < n; i++) {
    double o = dt_load(dt_out, ho, i), x = dt_load(dt_out, ref, i), e = isfinite(o) ? fabs(o - x) : INFINITY;
    if (!(e <= 1e-2 + 1e-2 * fabs(x))) r.bad++;
    if (e > r.max_err || i == 0) {
      r.max_err = e;
      r.worst = i;
      r.worst_got = o;
      r.worst_ref = x;
    }
  }
  CHECK(r.bad == 0, "%s: %zu of %zu elements differ from the reference evaluator; worst [%zu] got %.6g reference %.6g",
        name, r.bad, n, r.worst, r.worst_got, r.worst_ref);
  printf("  %-4s %-48s max|err| %.3g over %zu elements (evaluator %.1f s)\n", r.bad ? "FAIL" : "ok", name, r.max_err, n,
         (now_ms() - t0) / 1e3);
  fflush(stdout);
  rout[0]->deleter(rout[0]);
done:
  free(ho);
  for (int i = 0; i < nin; i++) {
    free(hx[i]);
    dev_free(&X[i]);
  }
}

static void fa_case(const char *only, int B, int H, int S, int D, bool causal, int bm, int bn, int threads, int stages,
                    unsigned flags) {
  char name[128];
  snprintf(name, sizeof name, "fa_b%d_h%d_s%d_d%d_%s_%dx%d_t%d_s%d%s%s%s%s", B, H, S, D, causal ? "causal" : "full", bm,
           bn, threads, stages, flags & TL_COMPILE_FAST_MATH ? "_fm" : "",
           flags & TL_COMPILE_ATTENTION_PINGPONG ? "_pingpong" : "",
           flags & TL_COMPILE_ATTENTION_OVERLAP ? "_overlap" : "",
           flags & TL_COMPILE_ATTENTION_PERSISTENT ? "_persist" : "");
  if (only && !strstr(name, only)) return;
  char path[1024];
  snprintf(path, sizeof path, "%s/flash_attention.py", kernel_dir());
  tl_define defs[9] = {{"batch", fmt_int(B)},
                       {"heads", fmt_int(H)},
                       {"seq_len", fmt_int(S)},
                       {"dim", fmt_int(D)},
                       {"is_causal", causal ? "True" : "False"},
                       {"block_M", fmt_int(bm)},
                       {"block_N", fmt_int(bn)},
                       {"threads", fmt_int(threads)},
                       {"num_stages", fmt_int(stages)}};
  tl_kernel *k = compile(name, path, defs, 9, flags);
  if (!k) return;
  const dt_kind dt[3] = {DT_F16, DT_F16, DT_F16};
  const int64_t shapes[3][4] = {{B, H, S, D}, {B, H, S, D}, {B, H, S, D}};
  const int nd[3] = {4, 4, 4};
  run_vs_reference(name, k, 3, dt, shapes, nd, DT_F16, (size_t)B * H * S * D);
  tl_kernel_destroy(k);
}

/* examples/flash_attention_gqa.py at its default tiles (128x128, 2 stages, 256 threads) */
static void gqa_case(const char *only, int B, int H, int HKV, int S, int D, bool causal, unsigned flags) {
  char name[128];
  snprintf(name, sizeof name, "gqa_b%d_h%d_kv%d_s%d_d%d_%s%s%s%s", B, H, HKV, S, D, causal ? "causal" : "full",
           flags & TL_COMPILE_ATTENTION_PINGPONG ? "_pingpong" : "",
           flags & TL_COMPILE_ATTENTION_OVERLAP ? "_overlap" : "",
           flags & TL_COMPILE_ATTENTION_PERSISTENT ? "_persist" : "");
  if (only && !strstr(name, only)) return;
  char path[1024];
  snprintf(path, sizeof path, "%s/flash_attention_gqa.py", kernel_dir());
  tl_define defs[6] = {{"batch", fmt_int(B)},   {"heads", fmt_int(H)}, {"kv_heads", fmt_int(HKV)},
                       {"seq_len", fmt_int(S)}, {"dim", fmt_int(D)},   {"is_causal", causal ? "True" : "False"}};
  tl_kernel *k = compile(name, path, defs, 6, flags);
  if (!k) return;
  const dt_kind dt[3] = {DT_F16, DT_F16, DT_F16};
  const int64_t shapes[3][4] = {{B, H, S, D}, {B, HKV, S, D}, {B, HKV, S, D}};
  const int nd[3] = {4, 4, 4};
  run_vs_reference(name, k, 3, dt, shapes, nd, DT_F16, (size_t)B * H * S * D);
  tl_kernel_destroy(k);
}

static void chained_case(const char *only, int M, int N, int K, int D) {
  char name[128];
  snprintf(name, sizeof name, "chained_gemm_%dx%dx%dx%d_128x64_t256", M, N, K, D);
  if (only && !strstr(name, only)) return;
  char path[1024];
  snprintf(path, sizeof path, "%s/chained_gemm.py", gemm_kernels_dir());
  tl_define defs[4] = {{"M", fmt_int(M)}, {"N", fmt_int(N)}, {"K", fmt_int(K)}, {"D", fmt_int(D)}};
  tl_kernel *k = compile(name, path, defs, 4, 0);
  if (!k) return;
  const dt_kind dt[3] = {DT_F16, DT_F16, DT_F16};
  const int64_t shapes[3][4] = {{M, K}, {N, K}, {N, D}};
  const int nd[3] = {2, 2, 2};
  run_vs_reference(name, k, 3, dt, shapes, nd, DT_F32, (size_t)M * D);
  tl_kernel_destroy(k);
}

int main(int argc, char **argv) {
  const char *only = argc > 1 ? argv[1] : NULL;
  if (tl_context_create(&ctx) != TL_OK) return 1;
  gpu_init(ctx);
  const char *tgt = tl_device_default_target();
  if (!tgt || strcmp(tgt, "sm_90a") != 0) {
    printf("SKIP: the device is %s, not sm_90a\n", tgt ? tgt : "?");
    tl_context_destroy(ctx);
    return GPU_SKIP;
  }
  uint64_t seed = (uint64_t)time(NULL);
  rng_seed(seed);
  printf("test_attention_hopper (seed %llu)\n", (unsigned long long)seed);
  const unsigned FM = TL_COMPILE_FAST_MATH, PP = TL_COMPILE_ATTENTION_PINGPONG, OV = TL_COMPILE_ATTENTION_OVERLAP;
  for (int d = 0; d < 2; d++)
    for (int c = 0; c < 2; c++) fa_case(only, 1, 4, 512, d ? 64 : 128, c != 0, 128, 128, 256, 2, 0);
  fa_case(only, 1, 4, 512, 128, false, 128, 128, 256, 2, FM);
  fa_case(only, 1, 4, 512, 128, true, 128, 128, 256, 2, FM);
  fa_case(only, 1, 4, 512, 128, true, 64, 64, 128, 1, 0);
  fa_case(only, 1, 4, 640, 256, false, 128, 80, 256, 2, 0); /* O staged in Q's shared memory; 640 = 5 x 128 = 8 x 80 */
  fa_case(only, 1, 4, 512, 256, true, 128, 64, 256, 2, 0);
  gqa_case(only, 1, 8, 2, 512, 128, false, 0);
  gqa_case(only, 1, 8, 2, 512, 128, true, 0);
  /* seq_len 1000, not a tile multiple (issue 19 acceptance 2): partial last Q and K/V tiles (TMA zero-fill),
   * the example's tail mask on the last key block, the epilogue's row-clipped stores */
  for (int c = 0; c < 2; c++) {
    fa_case(only, 1, 4, 1000, 128, c != 0, 128, 128, 256, 2, 0);
    fa_case(only, 1, 4, 1000, 128, c != 0, 128, 128, 256, 2, FM);
    fa_case(only, 1, 4, 1000, 64, c != 0, 128, 128, 256, 2, 0);
    fa_case(only, 1, 2, 1000, 256, c != 0, 128, 64, 256, 2, 0);
    gqa_case(only, 1, 8, 2, 1000, 128, c != 0, 0);
  }
  /* the ping-pong schedule (tl.attention_pingpong: the consumer warpgroups take turns at the tensor cores) */
  for (int c = 0; c < 2; c++) {
    fa_case(only, 1, 4, 512, 128, c != 0, 128, 128, 256, 2, FM | PP);
    fa_case(only, 1, 4, 1000, 128, c != 0, 128, 128, 256, 2, PP);
    fa_case(only, 1, 4, 512, 64, c != 0, 128, 128, 256, 2, PP);
    gqa_case(only, 1, 8, 2, 1000, 128, c != 0, PP);
  }
  fa_case(only, 1, 4, 512, 256, true, 128, 64, 256, 2, PP);
  /* the overlap schedule (tl.attention_overlap: the softmax of block k under the warpgroup's own P·V of k - 1) */
  for (int c = 0; c < 2; c++) {
    fa_case(only, 1, 4, 512, 128, c != 0, 128, 128, 256, 2, FM | OV);
    fa_case(only, 1, 4, 512, 128, c != 0, 128, 128, 256, 2, OV);
    fa_case(only, 1, 4, 1000, 128, c != 0, 128, 128, 256, 2, FM | OV);
    fa_case(only, 1, 4, 512, 64, c != 0, 128, 128, 256, 2, FM | OV);
    fa_case(only, 1, 4, 1000, 64, c != 0, 128, 128, 256, 2, OV);
    gqa_case(only, 1, 8, 2, 1000, 128, c != 0, OV);
  }
  fa_case(only, 1, 4, 512, 256, true, 128, 64, 256, 2, OV);
  fa_case(only, 1, 4, 512, 128, true, 64, 64, 128, 1, OV);
  /* the persistent grid (tl.attention_persistent), planned for PERSIST_SMS SMs: each block loops over
   * several (M block, head, batch) tiles -- causal ones longest first, in snake order -- reloading Q per
   * tile after the consumers freed it; O_shared in its own bytes (d 64, 128) or in Q's (d 256) */
  const unsigned PS = TL_COMPILE_ATTENTION_PERSISTENT;
  for (int c = 0; c < 2; c++) {
    fa_case(only, 2, 4, 512, 128, c != 0, 128, 128, 256, 2, FM | PS);
    fa_case(only, 1, 4, 1000, 128, c != 0, 128, 128, 256, 2, PS);
    fa_case(only, 2, 3, 512, 64, c != 0, 128, 128, 256, 2, FM | PS);
    fa_case(only, 1, 2, 1000, 256, c != 0, 128, 64, 256, 2, PS);
    fa_case(only, 2, 4, 512, 128, c != 0, 128, 128, 256, 2, FM | PS | OV);
    fa_case(only, 1, 4, 1000, 128, c != 0, 128, 128, 256, 2, PS | OV);
    gqa_case(only, 1, 8, 2, 1000, 128, c != 0, PS);
    gqa_case(only, 1, 8, 2, 512, 128, c != 0, PS | OV);
  }
  fa_case(only, 1, 4, 512, 128, true, 64, 64, 128, 1, PS);
  chained_case(only, 512, 512, 128, 128);
  tl_context_destroy(ctx);
  return finish("test_attention_hopper");
}
