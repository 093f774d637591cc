/* GPU test of the warp-level and asynchronous intrinsics' code generation
 * (docs/simt-ir.md), independent of the GEMM lowering: hand-written SIMT
 * kernels (test/GPU/kernels/simt_*.py, already lowered, compiled through
 * the public API) run on the GPU and are compared with a CPU product.
 *  - simt_mma_tile.py: one warp cp.async's a 16x16 A and a 16x8 B tile
 *    (pieces of 16, 8 or 4 bytes; B rows >= b_rows zero-filled by a false
 *    predicate), waits, ldmatrix (x4 / x2.trans), one mma.sync m16n8k16,
 *    stores D = A @ B + Cin.  Integer-valued inputs in [-4, 4]: the result
 *    is exact in every accumulator dtype, so the check is exact, for f16 ->
 *    f32, bf16 -> f32 and f16 -> f16.
 *  - simt_gemm.py: a 128x128x32-tile, 2-stage cp.async GEMM main loop
 *    written by hand (64 mma per k-tile per warp), 512x384x256: integer
 *    inputs in [-2, 2] (exact: |sums| <= 1024 are f16 integers) and random
 *    inputs in [-1, 1) (f16 tolerance of docs/testing.md "Numeric checks" against float64).
 *  - simt_stmatrix.py (sm_90 devices): stmatrix x1/x2/x4, with and without
 *    .trans, against the closed form of its header.
 * Outputs are poisoned (0xFF bytes, NaN) before each launch.  Kernel files
 * from $TL_GPU_KERNELS (default test/GPU/kernels). */
#include "gemm_util.h"

static tl_context *ctx;

static tl_kernel *compile(const char *file, const tl_define *defs, size_t ndefs) {
  char path[1024];
  snprintf(path, sizeof path, "%s/%s", gemm_kernels_dir(), file);
  tl_compile_options o = {0};
  o.out_idx_mode = TL_OUT_IDX_NONE;
  tl_kernel *k = NULL;
  if (tl_kernel_compile_file(ctx, path, defs, ndefs, &o, &k) != TL_OK) {
    CHECK(0, "compiling %s: %s", path, tl_context_last_error(ctx));
    return NULL;
  }
  return k;
}

static void upload_ints(dev_tensor *t, dt_kind d, int ndim, const int64_t *shape, int lo, int hi, double *host) {
  dev_alloc(t, d, ndim, shape);
  size_t n = numel(shape, ndim);
  void *h = malloc(n * dt_size(d));
  for (size_t i = 0; i < n; i++) {
    double u = rng_uniform(); /* [-1, 1) */
    int v = lo + (int)floor((u + 1.0) / 2.0 * (hi - lo + 1));
    if (v > hi) v = hi;
    host[i] = v;
    dt_store(d, h, i, v);
  }
  CU(G.cuMemcpyHtoD(t->ptr, h, n * dt_size(d)));
  free(h);
}

static void tile_case(const char *in, const char *acc, int copy_bytes, int b_rows) {
  char cb[8], br[8];
  snprintf(cb, sizeof cb, "%d", copy_bytes);
  snprintf(br, sizeof br, "%d", b_rows);
  tl_define defs[4] = {{"in_dtype", in}, {"acc_dtype", acc}, {"copy_bytes", cb}, {"b_rows", br}};
  tl_kernel *k = compile("simt_mma_tile.py", defs, 4);
  if (!k) return;
  dt_kind din = !strcmp(in, "bfloat16") ? DT_BF16 : DT_F16;
  dt_kind dacc = !strcmp(acc, "float16") ? DT_F16 : DT_F32;
  int64_t sa[2] = {16, 16}, sb[2] = {16, 8}, sc[2] = {16, 8};
  double ha[256], hb[128], hc[128];
  dev_tensor A, B, Cin, D;
  upload_ints(&A, din, 2, sa, -4, 4, ha);
  upload_ints(&B, din, 2, sb, -4, 4, hb);
  upload_ints(&Cin, dacc, 2, sc, -4, 4, hc);
  dev_alloc(&D, dacc, 2, sc);
  CU(G.cuMemsetD8(D.ptr, 0xFF, D.bytes));
  tl_arg args[4] = {tl_arg_tensor(&A.t), tl_arg_tensor(&B.t), tl_arg_tensor(&Cin.t), tl_arg_tensor(&D.t)};
  if (tl_kernel_call(ctx, k, args, 4, NULL, NULL) != TL_OK) {
    CHECK(0, "call: %s", tl_context_last_error(ctx));
  } else {
    CU(G.cuCtxSynchronize());
    void *hd = download(D.ptr, D.bytes);
    int bad = 0;
    for (int i = 0; i < 16; i++)
      for (int j = 0; j < 8; j++) {
        double s = hc[i * 8 + j];
        for (int kk = 0; kk < 16; kk++) s += ha[i * 16 + kk] * (kk < b_rows ? hb[kk * 8 + j] : 0.0);
        double got = dt_load(dacc, hd, (size_t)i * 8 + j);
        if (got != s) {
          if (!bad)
            CHECK(0, "tile %s->%s copy %d b_rows %d: D[%d][%d] = %g, expected %g", in, acc, copy_bytes, b_rows, i, j,
                  got, s);
          bad++;
        }
      }
    printf("  %-4s mma tile %-8s -> %-7s cp.async %2d B, zero-fill rows >= %2d: %s\n", bad ? "FAIL" : "ok", in, acc,
           copy_bytes, b_rows, bad ? "mismatch" : "exact (128 elements)");
    free(hd);
  }
  dev_free(&A);
  dev_free(&B);
  dev_free(&Cin);
  dev_free(&D);
  tl_kernel_destroy(k);
}

static void gemm_case(bool integer) {
  const int M = 512, N = 384, K = 256;
  tl_define defs[3] = {{"M", "512"}, {"N", "384"}, {"K", "256"}};
  tl_kernel *k = compile("simt_gemm.py", defs, 3);
  if (!k) return;
  int64_t sa[2] = {M, K}, sb[2] = {K, N}, sc[2] = {M, N};
  dev_tensor A, B, C;
  void *ha, *hb;
  double *da = NULL, *db = NULL;
  if (integer) {
    da = malloc(sizeof(double) * M * K);
    db = malloc(sizeof(double) * K * N);
    upload_ints(&A, DT_F16, 2, sa, -2, 2, da);
    upload_ints(&B, DT_F16, 2, sb, -2, 2, db);
    ha = malloc((size_t)M * K * 2);
    hb = malloc((size_t)K * N * 2);
    for (int i = 0; i < M * K; i++) dt_store(DT_F16, ha, (size_t)i, da[i]);
    for (int i = 0; i < K * N; i++) dt_store(DT_F16, hb, (size_t)i, db[i]);
  } else {
    ha = dev_random(&A, DT_F16, 2, sa);
    hb = dev_random(&B, DT_F16, 2, sb);
  }
  dev_alloc(&C, DT_F16, 2, sc);
  CU(G.cuMemsetD8(C.ptr, 0xFF, C.bytes));
  tl_arg args[3] = {tl_arg_tensor(&A.t), tl_arg_tensor(&B.t), tl_arg_tensor(&C.t)};
  if (tl_kernel_call(ctx, k, args, 3, NULL, NULL) != TL_OK) {
    CHECK(0, "call: %s", tl_context_last_error(ctx));
  } else {
    CU(G.cuCtxSynchronize());
    void *hc = download(C.ptr, C.bytes);
    double *ref = ref_gemm(ha, hb, M, N, K, DT_F16, false, false);
    double atol = 0, rtol = 0;
    if (!integer) dt_tol(DT_F16, &atol, &rtol);
    cmp_result r = compare_out(DT_F16, hc, (size_t)M * N, ref, NULL, atol, rtol);
    CHECK(r.bad == 0, "simt gemm (%s inputs): %zu of %d elements wrong; worst [%zu] got %g expected %g",
          integer ? "integer" : "random", r.bad, M * N, r.worst, r.worst_got, r.worst_ref);
    printf("  %-4s hand-written SIMT GEMM 512x384x256 f16, %s inputs: max |err| %.3g (%s)\n", r.bad ? "FAIL" : "ok",
           integer ? "integer" : "random", r.max_err, integer ? "exact" : "tol 1e-2 + 1e-2|ref|");
    free(hc);
    free(ref);
  }
  free(ha);
  free(hb);
  free(da);
  free(db);
  dev_free(&A);
  dev_free(&B);
  dev_free(&C);
  tl_kernel_destroy(k);
}

/* simt_stmatrix.py: every stmatrix form (x1, x2, x4, .trans or not) on an
 * sm_90 device against the closed form in the kernel's header (exact:
 * small integers in float16); other devices skip it with a line. */
static void stmatrix_case(int num, bool trans) {
  char nb[12];
  snprintf(nb, sizeof nb, "%d", num);
  tl_define defs[2] = {{"num", nb}, {"trans", trans ? "True" : "False"}};
  tl_kernel *k = compile("simt_stmatrix.py", defs, 2);
  if (!k) return;
  int64_t so[1] = {256};
  dev_tensor O;
  dev_alloc(&O, DT_F16, 1, so);
  CU(G.cuMemsetD8(O.ptr, 0xFF, O.bytes));
  tl_arg args[1] = {tl_arg_tensor(&O.t)};
  if (tl_kernel_call(ctx, k, args, 1, NULL, NULL) != TL_OK) {
    CHECK(0, "stmatrix call: %s", tl_context_last_error(ctx));
  } else {
    CU(G.cuCtxSynchronize());
    void *ho = download(O.ptr, O.bytes);
    int bad = 0;
    for (int i = 0; i < 4; i++)
      for (int r = 0; r < 8; r++)
        for (int c = 0; c < 8; c++) {
          int want = i >= num ? 0 : trans ? 8 * (4 * c + r / 2) + 2 * i + r % 2 : 8 * (4 * r + c / 2) + 2 * i + c % 2;
          double got = dt_load(DT_F16, ho, (size_t)(i * 64 + r * 8 + c));
          if (got != want) {
            if (!bad)
              CHECK(0, "stmatrix x%d%s: matrix %d [%d][%d] = %g, expected %d", num, trans ? ".trans" : "", i, r, c, got,
                    want);
            bad++;
          }
        }
    printf("  %-4s stmatrix.x%d%s: %s\n", bad ? "FAIL" : "ok", num, trans ? ".trans" : "",
           bad ? "mismatch" : "exact (256 elements)");
    free(ho);
  }
  dev_free(&O);
  tl_kernel_destroy(k);
}

int main(void) {
  if (tl_context_create(&ctx) != TL_OK) return 1;
  gpu_init(ctx);
  rng_seed((uint64_t)time(NULL));
  printf("test_mma_intrin (default target %s)\n", tl_device_default_target());
  tile_case("float16", "float32", 16, 16);
  tile_case("bfloat16", "float32", 16, 16);
  tile_case("float16", "float16", 16, 16);
  tile_case("float16", "float32", 8, 12);
  tile_case("bfloat16", "float32", 4, 5);
  tile_case("float16", "float16", 4, 0);
  gemm_case(true);
  gemm_case(false);
  if (strncmp(tl_device_default_target(), "sm_90", 5) == 0) {
    for (int n = 1; n <= 4; n *= 2) {
      stmatrix_case(n, false);
      stmatrix_case(n, true);
    }
  } else {
    printf("  skip stmatrix: needs sm_90 (device target %s)\n", tl_device_default_target());
  }
  tl_context_destroy(ctx);
  return finish("test_mma_intrin");
}
