/* GEMM benchmark (issue 6, "Benchmarks", first part): our compiled GEMM
 * (test/GPU/kernels/gemm_general.py, f32 accumulation) next to cuBLAS
 * (cublasGemmEx, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT heuristics, the
 * same row-major layouts) and, where it applies, the hand-written mma.sync
 * reference GEMM (../shared/reference/mma-gemm/mma_gemm.cu) in one
 * process, for float16 and bfloat16, square 1024/2048/4096/8192 and the LLM
 * shapes (16, 8192, 8192), (128, 8192, 8192), (4096, 11008, 4096),
 * (4096, 4096, 14336), NN (B stored K x N) and NT (B stored N x K).
 * Method: random inputs (uniform [-1, 1) rounded to the dtype, a fresh seed
 * per run); before timing, each result is checked per element against
 * cuBLAS (tolerance of DESIGN §8 by dtype, poisoned output first); then
 * CUDA-event timing of each launch after 10 warm-up launches, median of 50,
 * cuBLAS first and ours second; when one set of A, B, C is smaller than
 * 2 x the 60 MB L2, copies of it (up to 16 sets, enough to exceed 120 MB
 * where that fits) are made at other addresses and the launches rotate
 * through them.  The tile configuration comes from a small
 * table by shape class (the first candidate that compiles is used) and is
 * reported.  Output: a table on stdout and $OUT/bench_gemm.csv (or ./).
 * Two of our paths (issue 12): on a device whose default target has wgmma
 * (sm_90a, the H200), "ours" is the default compile, the Hopper path (TMA,
 * mbarrier ring, producer warpgroup, wgmma) with the first candidate of the
 * Hopper table that compiles (tl_gemm_configs_target(NULL, 0, ...)), and a
 * second kernel, "mma", is compiled with TL_COMPILE_DISABLE_WARP_SPECIALIZED
 * and TL_COMPILE_DISABLE_WGMMA (the cp.async + mma.sync path; without the
 * latter it would be cp.async + wgmma) from the mma.sync table; each is checked
 * per element against cuBLAS (poisoned output first), and cuBLAS, ours, mma
 * (and the reference variants) are timed interleaved (time_interleaved,
 * below); the table and CSV give both of ours and their ratios to cuBLAS.
 * Elsewhere ours is the mma.sync path and the mma columns stay empty.  A
 * kernel whose Hopper candidates all fail to compile leaves ours empty
 * (check COMPILE_FAIL, exit 1) and still times mma.
 * CSV columns, in order (later versions append): dtype, layout, M, N, K,
 * config, ours_ms, ours_tflops, cublas_ms, cublas_tflops, ratio (ours /
 * cuBLAS), max_err_vs_cublas, check, compile_ms, rotated_sets, timing
 * (interleaved / sequential), ref_variant, ref_ms, ref_tflops,
 * ours_over_ref, ref_<BM>x<BN>_tflops per variant, ref_check,
 * ref_max_err_vs_cublas; then ours_path (what ours's PTX is: "wgmma" when it
 * has wgmma.mma_async, else "mma.sync"), mma_config, mma_ms, mma_tflops,
 * mma_ratio (mma / cuBLAS), mma_check, mma_max_err_vs_cublas,
 * mma_compile_ms, ours_over_mma.
 * TL_BENCH_SECOND=notmastore: the second kernel is the default compile with
 * TL_COMPILE_DISABLE_TMA_STORE (the epilogue's st.global instead of TMA
 * stores): the "mma" columns are then that A/B in one process.
 * TL_BENCH_SECOND=streamk: the second kernel is instead the default compile
 * with TL_COMPILE_ENABLE_STREAM_K (the Hopper path, same Hopper-table
 * configuration, stream-K where it engages; lib/Lower/Hopper/stream_k.c), so that
 * the "mma" columns and ours_over_mma are the stream-K A/B in one process
 * (ours_over_mma = whole tiles / stream-K).
 * Arguments: optional substrings selecting shapes ("4096x4096x4096").
 * TL_BENCH_KERNEL=c_shared: ours (both paths) is test/GPU/kernels/gemm_c_shared.py
 * instead, the form of TileLang's autotuned GEMM example (C staged through a
 * shared tile, T.use_swizzle(panel_size=10 unless the configuration has
 * another panel)), same configurations, checks and timing; the CSV is
 * bench_gemm_c_shared.csv.
 * TL_BENCH_REPS overrides the 50 timed launches; TL_BENCH_DTYPES ("f16",
 * "bf16" or both) and TL_BENCH_LAYOUTS ("NN", "NT") select dtypes and
 * layouts; TL_BENCH_CONFIGS="bm,bn,bk,threads,stages,policy,panel[;...]"
 * replaces the table's candidates: every configuration listed is timed (one
 * row each, on both of our paths where there are two), for trying tile
 * choices.  Exit 1 when a check fails, ours or
 * the reference's (timing of that configuration, or of that reference
 * variant, is skipped), 77 without GPU or cuBLAS. */
#include "../../test/GPU/gemm_util.h"

#define WARMUP 10
#define L2_BYTES (60.0 * 1024 * 1024)

typedef struct shape {
  int M, N, K;
} shape;
static const shape shapes[] = {{1024, 1024, 1024}, {2048, 2048, 2048}, {4096, 4096, 4096},  {8192, 8192, 8192},
                               {16, 8192, 8192},   {128, 8192, 8192},  {4096, 11008, 4096}, {4096, 4096, 14336}};

/* Tile configurations: the built-in tables of lib/Runtime/configs.c
 * (tl_gemm_configs_target: the Hopper table for the default compile on
 * sm_90a, else the mma.sync table), shared with tl-run --tune; the first
 * that compiles is used. */
typedef tl_gemm_config config;

static tl_context *ctx;
static int reps = 50;

typedef struct bench_state {
  int nrot;
  dev_tensor A[16], B[16], C[16];
  int M, N, K;
  dt_kind d;
  bool nt;
} bench_state;

/* One of our kernels on a shape: the default compile (ours; on sm_90a the
 * Hopper path) or the mma.sync path compiled with
 * TL_COMPILE_DISABLE_WARP_SPECIALIZED (mma). */
typedef struct ours_path {
  unsigned flags; /* tl_compile_options.flags of the compile */
  bench_state *s;
  tl_kernel *k; /* NULL: no candidate compiled */
  config cfg;   /* the candidate used */
  double cms;   /* its compile time, ms */
  bool wgmma;   /* its PTX has wgmma.mma_async */
  bool ok;      /* compiled and matched cuBLAS */
  cmp_result cr;
  double ms; /* median launch time, 0 when not timed */
} ours_path;

static void launch_ours(void *p, int i) {
  ours_path *o = p;
  bench_state *s = o->s;
  int r = i % s->nrot;
  tl_arg args[3] = {tl_arg_tensor(&s->A[r].t), tl_arg_tensor(&s->B[r].t), tl_arg_tensor(&s->C[r].t)};
  if (tl_kernel_call(ctx, o->k, args, 3, NULL, NULL) != TL_OK) {
    fprintf(stderr, "call failed: %s\n", tl_context_last_error(ctx));
    exit(1);
  }
}
static void launch_cublas(void *p, int i) {
  bench_state *s = p;
  int r = i % s->nrot;
  int st = cublas_gemm(s->A[r].ptr, s->B[r].ptr, s->C[r].ptr, s->M, s->N, s->K, s->d, s->d, false, s->nt);
  if (st != 0) {
    fprintf(stderr, "cublasGemmEx failed: status %d\n", st);
    exit(1);
  }
}

/* ------------------------------------------------- the mma.sync reference
 * Two tile variants of mma_gemm.cu's
 *   template <class C> __global__ void gemm_mma(const half *A, const half *B,
 *       half *C, int M, int N, int K, int group_m)
 * with C = Cfg<BM, BN, BK, WM, WN, STAGES, MINB 1, SMEM_EPI true, ASYNC
 * false, PF STAGES-1, SPLIT false>: row-major A (M x K), B (K x N), C
 * (M x N), f32 accumulation; launched as its launch_t does, a 1-D grid of
 * (M/BM)(N/BN) blocks of Cfg::THREADS threads with Cfg::SMEM bytes of
 * dynamic shared memory, group_m 8 (its default). */
typedef struct ref_variant {
  const char *name; /* mma_gemm.cu's name for the variant */
  const char *sym;  /* the kernel's mangled name in the cubin */
  int BM, BN, BK, WM, WN, stages;
  void *fn; /* CUfunction, NULL until loaded */
  unsigned threads, smem;
  int regs;
} ref_variant;

#define N_REF 2
#define REF_GROUP_M 8
#define ROUND_LAUNCHES 5 /* launches of each kernel per interleaved round */
enum { CU_FUNC_ATTRIBUTE_NUM_REGS_ = 4, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES_ = 8 };

static ref_variant ref_vars[N_REF] = {
    {"se_128x256x32_s4", "_Z8gemm_mmaI3CfgILi128ELi256ELi32ELi64ELi64ELi4ELi1ELb1ELb0ELi3ELb0EEEvPK6__halfS4_PS2_iiii",
     128, 256, 32, 64, 64, 4, NULL, 0, 0, 0},
    {"se_256x128x32_s4", "_Z8gemm_mmaI3CfgILi256ELi128ELi32ELi64ELi64ELi4ELi1ELb1ELb0ELi3ELb0EEEvPK6__halfS4_PS2_iiii",
     256, 128, 32, 64, 64, 4, NULL, 0, 0, 0},
};
static void *ref_module; /* CUmodule of TL_BENCH_REF_CUBIN; NULL: the reference is not timed */

/* Cfg::SMEM as mma_gemm.cu computes it for SMEM_EPI = true, ASYNC = false:
 * the larger of the pipeline (STAGES x (A stage + B stage), f16) and the
 * epilogue's per-warp staging (WM rows of WN + 8 halfs per warp); ASYNC's
 * 16 x STAGES bytes of mbarriers do not apply. */
static unsigned ref_smem_bytes(const ref_variant *v) {
  int a_stage = v->BM * v->BK * 2, b_stage = v->BK * v->BN * 2;
  int smem_main = (a_stage + b_stage) * v->stages;
  int warps = (v->BM / v->WM) * (v->BN / v->WN);
  int smem_epi = warps * v->WM * (v->WN + 8) * 2;
  return (unsigned)(smem_main > smem_epi ? smem_main : smem_epi);
}

static const char *cu_err_name(CUres r) {
  const char *n = "?";
  G.cuGetErrorName(r, &n);
  return n;
}

/* Loads TL_BENCH_REF_CUBIN and both variants; prints one line either way
 * (what is timed, or why the reference is not). */
static bool ref_load(void) {
  const char *path = getenv("TL_BENCH_REF_CUBIN");
  if (!path || !*path) {
    printf("reference: not timed (TL_BENCH_REF_CUBIN is not set)\n");
    return false;
  }
  CUres r = G.cuModuleLoad(&ref_module, path);
  if (r != 0) {
    printf("reference: not timed (cuModuleLoad(\"%s\") failed: %s)\n", path, cu_err_name(r));
    ref_module = NULL;
    return false;
  }
  for (int i = 0; i < N_REF; i++) {
    ref_variant *v = &ref_vars[i];
    v->threads = (unsigned)((v->BM / v->WM) * (v->BN / v->WN) * 32);
    v->smem = ref_smem_bytes(v);
    const char *what = "cuModuleGetFunction";
    r = G.cuModuleGetFunction(&v->fn, ref_module, v->sym);
    if (r == 0) {
      what = "cuFuncSetAttribute(MAX_DYNAMIC_SHARED_SIZE_BYTES)";
      r = G.cuFuncSetAttribute(v->fn, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES_, (int)v->smem);
    }
    if (r == 0) {
      what = "cuFuncGetAttribute(NUM_REGS)";
      r = G.cuFuncGetAttribute(&v->regs, CU_FUNC_ATTRIBUTE_NUM_REGS_, v->fn);
    }
    if (r != 0) {
      printf("reference: not timed (%s of %s in %s failed: %s)\n", what, v->name, path, cu_err_name(r));
      for (int j = 0; j < N_REF; j++) ref_vars[j].fn = NULL;
      G.cuModuleUnload(ref_module);
      ref_module = NULL;
      return false;
    }
  }
  printf(
      "reference: %s (%u threads, %u B dynamic shared memory, %d registers) and %s (%u, %u B, %d) from %s, "
      "on f16 NN shapes with M, N %% 256 == 0 and K %% 32 == 0, timed interleaved with cuBLAS and ours "
      "(rounds of %d launches of each)\n",
      ref_vars[0].name, ref_vars[0].threads, ref_vars[0].smem, ref_vars[0].regs, ref_vars[1].name, ref_vars[1].threads,
      ref_vars[1].smem, ref_vars[1].regs, path, ROUND_LAUNCHES);
  return true;
}

/* The reference runs on this shape: f16, NN, and every variant's tiles
 * divide it (M, N multiples of 256, K of 32). */
static bool ref_applies(const bench_state *s) {
  if (!ref_module || s->d != DT_F16 || s->nt) return false;
  for (int i = 0; i < N_REF; i++)
    if (s->M % ref_vars[i].BM || s->N % ref_vars[i].BN || s->K % ref_vars[i].BK) return false;
  return true;
}

/* One launch of variant v on the legacy stream: C = A B (device pointers). */
static CUres ref_launch(const ref_variant *v, unsigned long long A, unsigned long long B, unsigned long long C, int M,
                        int N, int K) {
  unsigned long long a = A, b = B, c = C; /* const half *A, const half *B, half *C */
  int m = M, n = N, k = K, group_m = REF_GROUP_M;
  void *params[7] = {&a, &b, &c, &m, &n, &k, &group_m};
  unsigned grid = (unsigned)((M / v->BM) * (N / v->BN));
  return G.cuLaunchKernel(v->fn, grid, 1, 1, v->threads, 1, 1, v->smem, NULL, params, NULL);
}

typedef struct ref_timed {
  bench_state *s;
  const ref_variant *v;
} ref_timed;

static void launch_ref(void *p, int i) {
  ref_timed *t = p;
  bench_state *s = t->s;
  int r = i % s->nrot;
  CUres st = ref_launch(t->v, s->A[r].ptr, s->B[r].ptr, s->C[r].ptr, s->M, s->N, s->K);
  if (st != 0) {
    fprintf(stderr, "cuLaunchKernel of the reference %s failed: %s\n", t->v->name, cu_err_name(st));
    exit(1);
  }
}

/* Random tensor of dtype d (16-bit) on the device: values are drawn from a
 * table of 65536 uniform [-1, 1) values rounded to d, indexed by a
 * xorshift stream (the full generator of gpu_util.h is too slow for the
 * 10^8-element operands here). */
static void dev_random_fast(dev_tensor *x, dt_kind d, int ndim, const int64_t *shape) {
  static uint16_t lut[2][65536];
  static bool made[2];
  int li = d == DT_BF16;
  if (!made[li]) {
    for (int i = 0; i < 65536; i++) dt_store(d, lut[li], (size_t)i, rng_uniform());
    made[li] = true;
  }
  dev_alloc(x, d, ndim, shape);
  size_t n = numel(shape, ndim);
  uint16_t *h = malloc(n * 2 + 8);
  if (!h) {
    fprintf(stderr, "out of host memory\n");
    exit(1);
  }
  uint64_t st = (uint64_t)((rng_uniform() + 1.0) * 0x1p62) | 1; /* seeded from the run's generator */
  for (size_t i = 0; i < n; i += 4) {
    st ^= st << 13, st ^= st >> 7, st ^= st << 17;
    for (size_t j = 0; j < 4 && i + j < n; j++) h[i + j] = lut[li][(st >> (16 * j)) & 0xFFFF];
  }
  CU(G.cuMemcpyHtoD(x->ptr, h, n * 2));
  free(h);
}

/* TL_BENCH_CONFIGS, parsed once: the configurations to time instead of the
 * table's first that compiles. */
static config user_cfg[16];
static int n_user_cfg;
static void parse_user_configs(void) {
  const char *e = getenv("TL_BENCH_CONFIGS");
  while (e && *e && n_user_cfg < 16) {
    config c;
    int used = 0;
    if (sscanf(e, "%d,%d,%d,%d,%d,%d,%d%n", &c.block_M, &c.block_N, &c.block_K, &c.threads, &c.num_stages, &c.policy,
               &c.swizzle_panel, &used) != 7)
      break;
    user_cfg[n_user_cfg++] = c;
    e += used;
    while (*e == ';' || *e == ' ') e++;
  }
}

/* Compiles gemm_general.py for the shape with compile flags `flags` and the
 * first candidate of the built-in table for that lowering
 * (tl_gemm_configs_target on the device's default target) that compiles, or
 * TL_BENCH_CONFIGS's entry `user` (>= 0). */
static tl_kernel *compile_config(const shape *sh, dt_kind d, bool nt, unsigned flags, config *used, double *ms,
                                 int user) {
  config cands[16];
  tl_dtype in_dt;
  tl_dtype_parse(dt_name(d), &in_dt);
  size_t nc = tl_gemm_configs_target(NULL, flags, sh->M, sh->N, sh->K, in_dt, cands, 16);
  if (nc > 16) nc = 16;
  if (user >= 0) cands[0] = user_cfg[user], nc = 1;
  char path[1024];
  const char *kern = getenv("TL_BENCH_KERNEL");
  bool c_shared = kern && !strcmp(kern, "c_shared");
  snprintf(path, sizeof path, "%s/%s.py", gemm_kernels_dir(), c_shared ? "gemm_c_shared" : "gemm_general");
  for (size_t i = 0; i < nc; i++) {
    config cc = cands[i];
    if (c_shared && cc.swizzle_panel == 0) cc.swizzle_panel = 10; /* the example's T.use_swizzle(10) */
    const config *c = &cc;
    char v[3][16], cv[7][16];
    int vals[3] = {sh->M, sh->N, sh->K};
    for (int j = 0; j < 3; j++) snprintf(v[j], sizeof v[j], "%d", vals[j]);
    tl_define defs[13] = {{"M", v[0]}, {"N", v[1]}, {"K", v[2]}};
    tl_gemm_config_defines(c, defs + 3, cv);
    defs[10] = (tl_define){"dtype", dt_name(d)};
    defs[11] = (tl_define){"out_dtype", dt_name(d)};
    defs[12] = (tl_define){"trans_B", nt ? "True" : "False"};
    tl_compile_options o = {0};
    o.out_idx_mode = TL_OUT_IDX_NONE;
    o.flags = flags;
    tl_kernel *k = NULL;
    double t0 = now_ms();
    if (tl_kernel_compile_file(ctx, path, defs, 13, &o, &k) == TL_OK && tl_kernel_load(ctx, k, 0) == TL_OK) {
      *ms = now_ms() - t0;
      *used = *c;
      return k;
    }
    char cs[64];
    fprintf(stderr, "  config %s for %dx%dx%d: %s\n", tl_gemm_config_format(c, cs, sizeof cs), sh->M, sh->N, sh->K,
            tl_context_last_error(ctx));
    if (k) tl_kernel_destroy(k);
  }
  return NULL;
}

static bool three_way; /* the default target has the Hopper path: ours and mma both */
static unsigned second_flags =
    TL_COMPILE_DISABLE_WARP_SPECIALIZED | TL_COMPILE_DISABLE_WGMMA; /* the second path's (TL_BENCH_SECOND): mma.sync */
static FILE *csv_f;

/* Poisons C of set 0, runs o's kernel on set 0 and compares with cuBLAS's
 * result hr (host copy) per element; sets o->ok and o->cr. */
static void check_path(ours_path *o, const void *hr, const char *sz, const char *what) {
  bench_state *s = o->s;
  size_t n = (size_t)s->M * s->N;
  CU(G.cuMemsetD8(s->C[0].ptr, 0xFF, s->C[0].bytes));
  launch_ours(o, 0);
  CU(G.cuCtxSynchronize());
  void *hc = download(s->C[0].ptr, n * dt_size(s->d));
  double atol, rtol;
  dt_tol(s->d, &atol, &rtol);
  o->cr = compare_out(s->d, hc, n, NULL, hr, atol, rtol);
  free(hc);
  o->ok = o->cr.bad == 0;
  if (!o->ok)
    fprintf(stderr, "CHECK FAILED %s %s %s (%s): %zu of %zu elements differ from cuBLAS; worst [%zu] %.6g vs %.6g\n",
            dt_name(s->d), s->nt ? "NT" : "NN", sz, what, o->cr.bad, n, o->cr.worst, o->cr.worst_got, o->cr.worst_ref);
}

/* The reference variants on s, checked against cuBLAS's result hr like ours
 * (C of set 0 poisoned again); those that pass go to rt.  Returns their
 * number; *chk, *err for the CSV; *failures counts failed checks. */
static int check_refs(bench_state *s, const void *hr, const char *sz, ref_timed *rt, const char **chk, double *err,
                      int *failures) {
  int nref = 0;
  size_t n = (size_t)s->M * s->N;
  double atol, rtol;
  dt_tol(s->d, &atol, &rtol);
  *chk = "PASS";
  for (int i = 0; i < N_REF; i++) {
    const ref_variant *v = &ref_vars[i];
    CU(G.cuMemsetD8(s->C[0].ptr, 0xFF, s->C[0].bytes));
    CUres lr = ref_launch(v, s->A[0].ptr, s->B[0].ptr, s->C[0].ptr, s->M, s->N, s->K);
    if (lr != 0) {
      printf("reference %s on %s: cuLaunchKernel failed: %s; not timed\n", v->name, sz, cu_err_name(lr));
      if (!strcmp(*chk, "PASS")) *chk = "LAUNCH_FAIL";
      continue;
    }
    CU(G.cuCtxSynchronize());
    void *hx = download(s->C[0].ptr, n * dt_size(s->d));
    cmp_result rr = compare_out(s->d, hx, n, NULL, hr, atol, rtol);
    free(hx);
    if (rr.max_err > *err) *err = rr.max_err;
    if (rr.bad) {
      (*failures)++;
      *chk = "FAIL";
      fprintf(stderr,
              "CHECK FAILED reference %s on %s: %zu of %zu elements differ from cuBLAS; worst [%zu] "
              "%.6g vs %.6g\n",
              v->name, sz, rr.bad, n, rr.worst, rr.worst_got, rr.worst_ref);
      continue;
    }
    rt[nref++] = (ref_timed){s, v};
  }
  return nref;
}

/* Allocates set 0 (random A, B) and the rotated copies of s (sizes set). */
static void alloc_sets(bench_state *s) {
  double set_bytes = ((double)s->M * s->K + (double)s->K * s->N + (double)s->M * s->N) * dt_size(s->d);
  s->nrot = set_bytes >= 2 * L2_BYTES ? 1 : (int)ceil(2 * L2_BYTES / set_bytes);
  if (s->nrot > 16) s->nrot = 16;
  int64_t sa[2] = {s->M, s->K}, sb[2] = {s->nt ? s->N : s->K, s->nt ? s->K : s->N}, sc[2] = {s->M, s->N};
  /* set 0 random; the rotated sets are copies at other addresses */
  dev_random_fast(&s->A[0], s->d, 2, sa);
  dev_random_fast(&s->B[0], s->d, 2, sb);
  dev_alloc(&s->C[0], s->d, 2, sc);
  for (int r = 1; r < s->nrot; r++) {
    dev_alloc(&s->A[r], s->d, 2, sa);
    dev_alloc(&s->B[r], s->d, 2, sb);
    dev_alloc(&s->C[r], s->d, 2, sc);
    CU(G.cuMemcpyDtoD(s->A[r].ptr, s->A[0].ptr, s->A[0].bytes));
    CU(G.cuMemcpyDtoD(s->B[r].ptr, s->B[0].ptr, s->B[0].bytes));
  }
}

/* One row's CSV line (the columns of the header comment). */
static void write_csv(const bench_state *s, const ours_path *p, int np, bool cub_ok, double t_cub, const double *t_ref,
                      const char *ref_chk, double ref_err, const char *timing) {
  FILE *f = csv_f;
  double flop = 2.0 * s->M * s->N * s->K;
  const ours_path *o = &p[0];
  char cfgs[64] = "none";
  if (o->k) tl_gemm_config_format(&o->cfg, cfgs, sizeof cfgs);
  double tf = o->ms > 0 ? flop / (o->ms * 1e-3) / 1e12 : 0, tfc = t_cub > 0 ? flop / (t_cub * 1e-3) / 1e12 : 0;
  fprintf(f, "%s,%s,%d,%d,%d,%s", dt_name(s->d), s->nt ? "NT" : "NN", s->M, s->N, s->K, cfgs);
  if (o->ms > 0) fprintf(f, ",%.4f,%.1f", o->ms, tf);
  else fprintf(f, ",,");
  if (t_cub > 0) fprintf(f, ",%.4f,%.1f", t_cub, tfc);
  else fprintf(f, ",,");
  if (o->ms > 0 && t_cub > 0) fprintf(f, ",%.3f", tf / tfc);
  else fprintf(f, ",%s", o->k && cub_ok ? "0.000" : "");
  if (o->k && cub_ok) fprintf(f, ",%.3g,%s,%.0f", o->cr.max_err, o->ok ? "PASS" : "FAIL", o->cms);
  else fprintf(f, ",,%s,", !o->k ? "COMPILE_FAIL" : "FAIL");
  fprintf(f, ",%d,%s", s->nrot, timing);
  int best = -1; /* the faster reference variant */
  for (int i = 0; i < N_REF; i++)
    if (t_ref[i] > 0 && (best < 0 || t_ref[i] < t_ref[best])) best = i;
  if (best >= 0) {
    double tfr = flop / (t_ref[best] * 1e-3) / 1e12;
    fprintf(f, ",%s,%.4f,%.1f,%.3f", ref_vars[best].name, t_ref[best], tfr, tf / tfr);
  } else {
    fprintf(f, ",,,,");
  }
  for (int i = 0; i < N_REF; i++) {
    if (t_ref[i] > 0) fprintf(f, ",%.1f", flop / (t_ref[i] * 1e-3) / 1e12);
    else fputc(',', f);
  }
  if (*ref_chk) fprintf(f, ",%s,%.3g", ref_chk, ref_err);
  else fprintf(f, ",,");
  /* ours_path, mma_config, mma_ms, mma_tflops, mma_ratio, mma_check, mma_max_err_vs_cublas, mma_compile_ms,
   * ours_over_mma */
  fprintf(f, ",%s", o->k ? (o->wgmma ? "wgmma" : "mma.sync") : "");
  if (np > 1 && p[1].k) {
    const ours_path *m = &p[1];
    char mc[64];
    tl_gemm_config_format(&m->cfg, mc, sizeof mc);
    double tm = m->ms > 0 ? flop / (m->ms * 1e-3) / 1e12 : 0;
    fprintf(f, ",%s", mc);
    if (m->ms > 0) fprintf(f, ",%.4f,%.1f,%.3f", m->ms, tm, tfc > 0 ? tm / tfc : 0.0);
    else fprintf(f, ",,,");
    if (cub_ok) fprintf(f, ",%s,%.3g,%.0f", m->ok ? "PASS" : "FAIL", m->cr.max_err, m->cms);
    else fprintf(f, ",FAIL,,%.0f", m->cms);
    if (m->ms > 0 && o->ms > 0) fprintf(f, ",%.3f\n", tf / tm);
    else fprintf(f, ",\n");
  } else if (np > 1) {
    fprintf(f, ",none,,,,COMPILE_FAIL,,,\n");
  } else {
    fprintf(f, ",,,,,,,,\n");
  }
  fflush(f);
}

/* One table row: the times of p[0] (ours) and p[1] (mma, when np > 1) in
 * TFLOP/s and their ratios to cuBLAS; the faster reference variant. */
static void print_row(const bench_state *s, const char *sz, const ours_path *p, int np, double t_cub,
                      const double *t_ref) {
  double flop = 2.0 * s->M * s->N * s->K;
  double tfc = t_cub > 0 ? flop / (t_cub * 1e-3) / 1e12 : 0;
  char cfgs[64] = "-", tf[16] = "-", ratio[16] = "-";
  const ours_path *o = &p[0];
  double tfo = o->ms > 0 ? flop / (o->ms * 1e-3) / 1e12 : 0;
  if (o->k) tl_gemm_config_format(&o->cfg, cfgs, sizeof cfgs);
  if (o->ms > 0) snprintf(tf, sizeof tf, "%.1f", tfo);
  if (o->ms > 0 && tfc > 0) snprintf(ratio, sizeof ratio, "%.3f", tfo / tfc);
  printf("%-6s %-3s %-17s %-24s %9s %9.1f %7s %7s %-9.3g", s->d == DT_F16 ? "f16" : "bf16", s->nt ? "NT" : "NN", sz,
         cfgs, tf, tfc, ratio,
         !o->k   ? "NOCOMP"
         : o->ok ? "PASS"
                 : "FAIL",
         o->cr.max_err);
  if (np > 1) {
    const ours_path *m = &p[1];
    char mc[64] = "-", mtf[16] = "-", mr[16] = "-", om[16] = "-";
    double tm = m->ms > 0 ? flop / (m->ms * 1e-3) / 1e12 : 0;
    if (m->k) tl_gemm_config_format(&m->cfg, mc, sizeof mc);
    if (m->ms > 0) snprintf(mtf, sizeof mtf, "%.1f", tm);
    if (m->ms > 0 && tfc > 0) snprintf(mr, sizeof mr, "%.3f", tm / tfc);
    if (m->ms > 0 && o->ms > 0) snprintf(om, sizeof om, "%.3f", tfo / tm);
    printf(" %-8s | %-24s %9s %7s %7s %8s |", o->k ? (o->wgmma ? "wgmma" : "mma.sync") : "-", mc, mtf, mr,
           !m->k   ? "NOCOMP"
           : m->ok ? "PASS"
                   : "FAIL",
           om);
  }
  int best = -1;
  for (int i = 0; i < N_REF; i++)
    if (t_ref[i] > 0 && (best < 0 || t_ref[i] < t_ref[best])) best = i;
  if (best >= 0) {
    double tfr = flop / (t_ref[best] * 1e-3) / 1e12;
    printf(" %9.1f %8.3f %s\n", tfr, tfo / tfr, ref_vars[best].name);
  } else {
    printf(" %9s %8s %s\n", "-", "-", "-");
  }
  fflush(stdout);
}

/* Compiles, checks and times one shape on our path(s), cuBLAS and the
 * reference; writes its table row and CSV line.  Returns the number of
 * failed checks (a compile failure of a path counts one). */
static int bench_shape(const shape *sh, dt_kind d, bool nt, int uc, const char *sz) {
  int failures = 0;
  bench_state s;
  memset(&s, 0, sizeof s);
  s.M = sh->M, s.N = sh->N, s.K = sh->K, s.d = d, s.nt = nt;
  ours_path p[2];
  memset(p, 0, sizeof p);
  int np = three_way ? 2 : 1;
  p[1].flags = second_flags;
  bool any = false;
  for (int i = 0; i < np; i++) {
    p[i].s = &s;
    p[i].k = compile_config(sh, d, nt, p[i].flags, &p[i].cfg, &p[i].cms, uc);
    if (!p[i].k) {
      failures++;
      continue;
    }
    const char *ptx = tl_kernel_ptx(p[i].k);
    p[i].wgmma = ptx && strstr(ptx, "wgmma.mma_async") != NULL;
    any = true;
  }
  const double no_ref[N_REF] = {0};
  if (!any) {
    printf("%-6s %-3s %-17s %-24s does not compile\n", dt_name(d), nt ? "NT" : "NN", sz, "-");
    write_csv(&s, p, np, false, 0, no_ref, "", 0, "");
    return failures;
  }
  alloc_sets(&s);
  /* check: each of ours (poisoned C) against cuBLAS (poisoned R), per element */
  dev_tensor R;
  int64_t sc[2] = {sh->M, sh->N};
  dev_alloc(&R, d, 2, sc);
  CU(G.cuMemsetD8(R.ptr, 0xFF, R.bytes));
  int st = cublas_gemm(s.A[0].ptr, s.B[0].ptr, R.ptr, s.M, s.N, s.K, d, d, false, nt);
  CU(G.cuCtxSynchronize());
  bool cub_ok = st == 0;
  if (!cub_ok) {
    failures++;
    fprintf(stderr, "CHECK FAILED %s %s %s: cublasGemmEx failed: status %d\n", dt_name(d), nt ? "NT" : "NN", sz, st);
  }
  size_t n = (size_t)sh->M * sh->N;
  void *hr = download(R.ptr, n * dt_size(d));
  ref_timed rt[N_REF];
  int nref = 0;
  const char *ref_chk = "";
  double ref_err = 0;
  if (cub_ok) {
    for (int i = 0; i < np; i++) {
      if (!p[i].k) continue;
      check_path(&p[i], hr, sz, i == 0 ? "ours" : "mma");
      if (!p[i].ok) failures++;
    }
    /* the reference variants, checked the same way; those that pass are timed */
    if (ref_applies(&s)) nref = check_refs(&s, hr, sz, rt, &ref_chk, &ref_err, &failures);
  }
  free(hr);
  dev_free(&R);
  /* cuBLAS, ours that passed, and the reference variants: interleaved when
   * more than two kernels, else one after the other (as before issue 12) */
  void (*fns[3 + N_REF])(void *, int) = {launch_cublas};
  void *fargs[3 + N_REF] = {&s};
  int nf = 1, at[2] = {-1, -1};
  for (int i = 0; i < np; i++)
    if (p[i].ok) {
      at[i] = nf;
      fns[nf] = launch_ours;
      fargs[nf++] = &p[i];
    }
  for (int j = 0; j < nref; j++) {
    fns[nf] = launch_ref;
    fargs[nf++] = &rt[j];
  }
  double t_cub = 0, t_ref[N_REF] = {0}, med[3 + N_REF] = {0};
  const char *timing = "";
  if (nf > 2) {
    time_interleaved(nf, fns, fargs, WARMUP, reps, ROUND_LAUNCHES, med);
    timing = "interleaved";
  } else if (nf == 2) {
    med[0] = time_launches(fns[0], fargs[0], WARMUP, reps);
    med[1] = time_launches(fns[1], fargs[1], WARMUP, reps);
    timing = "sequential";
  }
  if (nf > 1) t_cub = med[0];
  for (int i = 0; i < np; i++)
    if (at[i] > 0) p[i].ms = med[at[i]];
  for (int j = 0; j < nref; j++) t_ref[rt[j].v - ref_vars] = med[nf - nref + j];
  print_row(&s, sz, p, np, t_cub, t_ref);
  write_csv(&s, p, np, cub_ok, t_cub, t_ref, ref_chk, ref_err, timing);
  for (int r = 0; r < s.nrot; r++) {
    dev_free(&s.A[r]);
    dev_free(&s.B[r]);
    dev_free(&s.C[r]);
  }
  for (int i = 0; i < np; i++) tl_kernel_destroy(p[i].k);
  return failures;
}

int main(int argc, char **argv) {
  const char *e = getenv("TL_BENCH_REPS");
  if (e && atoi(e) > 0) reps = atoi(e);
  if (tl_context_create(&ctx) != TL_OK) return 1;
  gpu_init(ctx);
  if (!cublas_load()) {
    printf("SKIP: bench_gemm needs cuBLAS\n");
    return GPU_SKIP;
  }
  uint64_t seed = (uint64_t)time(NULL);
  rng_seed(seed);
  char csv[1024];
  const char *outdir = getenv("OUT");
  const char *kern = getenv("TL_BENCH_KERNEL");
  snprintf(csv, sizeof csv, "%s/bench_gemm%s.csv", outdir && *outdir ? outdir : ".",
           kern && !strcmp(kern, "c_shared") ? "_c_shared" : "");
  FILE *f = fopen(csv, "w");
  if (!f) {
    fprintf(stderr, "cannot write %s\n", csv);
    return 1;
  }
  csv_f = f;
  three_way = tl_gemm_configs_use_hopper(NULL, 0);
  const char *second = getenv("TL_BENCH_SECOND");
  if (second && !strcmp(second, "streamk")) second_flags = TL_COMPILE_ENABLE_STREAM_K;
  if (second && !strcmp(second, "notmastore")) second_flags = TL_COMPILE_DISABLE_TMA_STORE;
  /* the reference's columns come after those of earlier versions, then
   * the second path's (issue 12) */
  fprintf(f,
          "dtype,layout,M,N,K,config,ours_ms,ours_tflops,cublas_ms,cublas_tflops,ratio,max_err_vs_cublas,"
          "check,compile_ms,rotated_sets,timing,ref_variant,ref_ms,ref_tflops,ours_over_ref");
  for (int i = 0; i < N_REF; i++) fprintf(f, ",ref_%dx%d_tflops", ref_vars[i].BM, ref_vars[i].BN);
  fprintf(f,
          ",ref_check,ref_max_err_vs_cublas,ours_path,mma_config,mma_ms,mma_tflops,mma_ratio,mma_check,"
          "mma_max_err_vs_cublas,mma_compile_ms,ours_over_mma\n");
  printf("bench_gemm: target %s, seed %llu, median of %d launches after %d warm-up\n", tl_device_default_target(),
         (unsigned long long)seed, reps, WARMUP);
  if (three_way && second_flags == TL_COMPILE_ENABLE_STREAM_K)
    printf(
        "two of our paths (TL_BENCH_SECOND=streamk): ours = default compile (Hopper path, whole tiles per "
        "block), mma columns = TL_COMPILE_ENABLE_STREAM_K (Hopper path, stream-K where it engages, same "
        "configuration); both timed interleaved with cuBLAS (rounds of %d launches of each)\n",
        ROUND_LAUNCHES);
  else if (three_way && second_flags == TL_COMPILE_DISABLE_TMA_STORE)
    printf(
        "two of our paths (TL_BENCH_SECOND=notmastore): ours = default compile (Hopper path, TMA-store "
        "epilogue), mma columns = TL_COMPILE_DISABLE_TMA_STORE (the same with st.global), same configuration; "
        "both timed interleaved with cuBLAS (rounds of %d launches of each)\n",
        ROUND_LAUNCHES);
  else if (three_way)
    printf(
        "two of our paths: ours = default compile (Hopper path, Hopper table), mma = "
        "TL_COMPILE_DISABLE_WARP_SPECIALIZED + _WGMMA (cp.async + mma.sync, mma.sync table); both timed interleaved "
        "with "
        "cuBLAS (rounds of %d launches of each)\n",
        ROUND_LAUNCHES);
  ref_load();
  printf("%-6s %-3s %-17s %-24s %9s %9s %7s %7s %-9s", "dtype", "lay", "MxNxK", "config", "ours TF", "cuBLAS TF",
         "ratio", "check", "max err");
  if (three_way)
    printf(" %-8s | %-24s %9s %7s %7s %8s |", "ours is", "mma config", "mma TF", "mma/cB", "check", "ours/mma");
  printf(" %9s %8s %s\n", "ref TF", "ours/ref", "ref kernel");
  int failures = 0;
  dt_kind dts[2] = {DT_F16, DT_BF16};
  const char *want_dt = getenv("TL_BENCH_DTYPES"), *want_lay = getenv("TL_BENCH_LAYOUTS");
  parse_user_configs();
  for (int di = 0; di < 2; di++)
    for (int lay = 0; lay < 2; lay++)
      for (size_t si = 0; si < sizeof shapes / sizeof shapes[0]; si++)
        for (int uc = n_user_cfg ? 0 : -1; uc < n_user_cfg; uc++) {
          const shape *sh = &shapes[si];
          if (want_dt && *want_dt) {
            const char *dn = di ? "bf16" : "f16", *hit = strstr(want_dt, dn);
            while (hit && !di && hit > want_dt && hit[-1] == 'b') hit = strstr(hit + 1, dn); /* not in "bf16" */
            if (!hit) continue;
          }
          if (want_lay && *want_lay && !strstr(want_lay, lay ? "NT" : "NN")) continue;
          char sz[48];
          snprintf(sz, sizeof sz, "%dx%dx%d", sh->M, sh->N, sh->K);
          if (argc > 1) {
            bool want = false;
            for (int a = 1; a < argc; a++) want |= strstr(sz, argv[a]) != NULL;
            if (!want) continue;
          }
          failures += bench_shape(sh, dts[di], lay == 1, uc, sz);
        }
  fclose(f);
  printf("csv: %s\n", csv);
  if (ref_module) G.cuModuleUnload(ref_module);
  CB.destroy(CB.handle);
  tl_context_destroy(ctx);
  return failures ? 1 : 0;
}
