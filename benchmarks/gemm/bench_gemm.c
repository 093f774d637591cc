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
 * The reference: TL_BENCH_REF_CUBIN names a cubin of mma_gemm.cu (nvcc
 * -cubin -arch=sm_90a; scripts/run-gpu.sh builds it on the GPU host); its
 * kernels se_128x256x32_s4 and se_256x128x32_s4 are loaded with the driver
 * API and run on the f16 NN shapes with M and N multiples of 256 and K of
 * 32.  Each is checked against cuBLAS like ours; then cuBLAS, ours and the
 * variants that passed are timed interleaved (time_interleaved: 10 warm-up
 * rounds of one launch each, then rounds of 5 launches of each kernel in
 * turn, the same 50 timed launches per kernel and the same input rotation,
 * median per kernel), so that all of them see the same clocks and power
 * state (the H200 throttles at 700 W); the row reports the faster variant
 * and ours/ref.  Every other shape, and every shape without the variable or
 * when the cubin does not load (one line says why), is timed as above.
 * Arguments: optional substrings selecting shapes ("4096x4096x4096").
 * TL_BENCH_REPS overrides the 50 timed launches; TL_BENCH_DTYPES ("f16",
 * "bf16" or both) and TL_BENCH_LAYOUTS ("NN", "NT") select dtypes and
 * layouts; TL_BENCH_CONFIGS="bm,bn,bk,threads,stages,policy,panel[;...]"
 * replaces the table's candidates: every configuration listed is timed (one
 * row each), for trying tile choices.  Exit 1 when a check fails, ours or
 * the reference's (timing of that configuration, or of that reference
 * variant, is skipped), 77 without GPU or cuBLAS. */
#include "../../test/GPU/gemm_util.h"

#define WARMUP 10
#define L2_BYTES (60.0 * 1024 * 1024)

typedef struct shape { int M, N, K; } shape;
static const shape shapes[] = {{1024, 1024, 1024}, {2048, 2048, 2048}, {4096, 4096, 4096},
                               {8192, 8192, 8192}, {16, 8192, 8192},   {128, 8192, 8192},
                               {4096, 11008, 4096}, {4096, 4096, 14336}};

/* Tile configurations: the built-in table of lib/Runtime/configs.c
 * (tl_gemm_configs), shared with tl-run --tune; the first that compiles is
 * used. */
typedef tl_gemm_config config;

static tl_context *ctx;
static int reps = 50;

typedef struct bench_state {
  tl_kernel *k;
  int nrot;
  dev_tensor A[16], B[16], C[16];
  int M, N, K;
  dt_kind d;
  bool nt;
} bench_state;

static void launch_ours(void *p, int i) {
  bench_state *s = p;
  int r = i % s->nrot;
  tl_arg args[3] = {tl_arg_tensor(&s->A[r].t), tl_arg_tensor(&s->B[r].t), tl_arg_tensor(&s->C[r].t)};
  if (tl_kernel_call(ctx, s->k, args, 3, NULL, NULL) != TL_OK) {
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
  printf("reference: %s (%u threads, %u B dynamic shared memory, %d registers) and %s (%u, %u B, %d) from %s, "
         "on f16 NN shapes with M, N %% 256 == 0 and K %% 32 == 0, timed interleaved with cuBLAS and ours "
         "(rounds of %d launches of each)\n",
         ref_vars[0].name, ref_vars[0].threads, ref_vars[0].smem, ref_vars[0].regs, ref_vars[1].name,
         ref_vars[1].threads, ref_vars[1].smem, ref_vars[1].regs, path, ROUND_LAUNCHES);
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
static CUres ref_launch(const ref_variant *v, unsigned long long A, unsigned long long B, unsigned long long C,
                        int M, int N, int K) {
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
    if (sscanf(e, "%d,%d,%d,%d,%d,%d,%d%n", &c.block_M, &c.block_N, &c.block_K, &c.threads, &c.num_stages,
               &c.policy, &c.swizzle_panel, &used) != 7)
      break;
    user_cfg[n_user_cfg++] = c;
    e += used;
    while (*e == ';' || *e == ' ') e++;
  }
}

static tl_kernel *compile_config(const shape *sh, dt_kind d, bool nt, config *used, double *ms, int user) {
  config cands[16];
  tl_dtype in_dt;
  tl_dtype_parse(dt_name(d), &in_dt);
  size_t nc = tl_gemm_configs(sh->M, sh->N, sh->K, in_dt, cands, 16);
  if (nc > 16) nc = 16;
  if (user >= 0) cands[0] = user_cfg[user], nc = 1;
  char path[1024];
  snprintf(path, sizeof path, "%s/gemm_general.py", gemm_kernels_dir());
  for (size_t i = 0; i < nc; i++) {
    const config *c = &cands[i];
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
    tl_kernel *k = NULL;
    double t0 = now_ms();
    if (tl_kernel_compile_file(ctx, path, defs, 13, &o, &k) == TL_OK && tl_kernel_load(ctx, k, 0) == TL_OK) {
      *ms = now_ms() - t0;
      *used = *c;
      return k;
    }
    char cs[64];
    fprintf(stderr, "  config %s for %dx%dx%d: %s\n", tl_gemm_config_format(c, cs, sizeof cs), sh->M, sh->N,
            sh->K, tl_context_last_error(ctx));
    if (k) tl_kernel_destroy(k);
  }
  return NULL;
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
  snprintf(csv, sizeof csv, "%s/bench_gemm.csv", outdir && *outdir ? outdir : ".");
  FILE *f = fopen(csv, "w");
  if (!f) {
    fprintf(stderr, "cannot write %s\n", csv);
    return 1;
  }
  /* the reference's columns come last, after those of earlier versions */
  fprintf(f, "dtype,layout,M,N,K,config,ours_ms,ours_tflops,cublas_ms,cublas_tflops,ratio,max_err_vs_cublas,"
             "check,compile_ms,rotated_sets,timing,ref_variant,ref_ms,ref_tflops,ours_over_ref");
  for (int i = 0; i < N_REF; i++) fprintf(f, ",ref_%dx%d_tflops", ref_vars[i].BM, ref_vars[i].BN);
  fprintf(f, ",ref_check,ref_max_err_vs_cublas\n");
  printf("bench_gemm: target %s, seed %llu, median of %d launches after %d warm-up\n", tl_device_default_target(),
         (unsigned long long)seed, reps, WARMUP);
  ref_load();
  printf("%-6s %-3s %-17s %-22s %9s %9s %9s %7s %-9s %9s %8s %s\n", "dtype", "lay", "MxNxK", "config", "ours TF",
         "cuBLAS TF", "ratio", "check", "max err", "ref TF", "ours/ref", "ref kernel");
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
        dt_kind d = dts[di];
        bool nt = lay == 1;
        bench_state s;
        memset(&s, 0, sizeof s);
        s.M = sh->M, s.N = sh->N, s.K = sh->K, s.d = d, s.nt = nt;
        config cfg;
        double cms = 0;
        s.k = compile_config(sh, d, nt, &cfg, &cms, uc);
        if (!s.k) {
          printf("%-6s %-3s %-17s %-22s does not compile\n", dt_name(d), nt ? "NT" : "NN", sz, "-");
          fprintf(f, "%s,%s,%d,%d,%d,none,,,,,,,COMPILE_FAIL,,", dt_name(d), nt ? "NT" : "NN", sh->M, sh->N, sh->K);
          for (int i = 0; i < 7 + N_REF; i++) fputc(',', f); /* the empty timing and reference columns */
          fputc('\n', f);
          failures++;
          continue;
        }
        char cfgs[64];
        tl_gemm_config_format(&cfg, cfgs, sizeof cfgs);
        double set_bytes = ((double)sh->M * sh->K + (double)sh->K * sh->N + (double)sh->M * sh->N) * dt_size(d);
        s.nrot = set_bytes >= 2 * L2_BYTES ? 1 : (int)ceil(2 * L2_BYTES / set_bytes);
        if (s.nrot > 16) s.nrot = 16;
        int64_t sa[2] = {sh->M, sh->K}, sb[2] = {nt ? sh->N : sh->K, nt ? sh->K : sh->N}, sc[2] = {sh->M, sh->N};
        /* set 0 random; the rotated sets are copies at other addresses */
        dev_random_fast(&s.A[0], d, 2, sa);
        dev_random_fast(&s.B[0], d, 2, sb);
        dev_alloc(&s.C[0], d, 2, sc);
        for (int r = 1; r < s.nrot; r++) {
          dev_alloc(&s.A[r], d, 2, sa);
          dev_alloc(&s.B[r], d, 2, sb);
          dev_alloc(&s.C[r], d, 2, sc);
          CU(G.cuMemcpyDtoD(s.A[r].ptr, s.A[0].ptr, s.A[0].bytes));
          CU(G.cuMemcpyDtoD(s.B[r].ptr, s.B[0].ptr, s.B[0].bytes));
        }
        /* check: ours (poisoned C) against cuBLAS, per element */
        dev_tensor R;
        dev_alloc(&R, d, 2, sc);
        CU(G.cuMemsetD8(R.ptr, 0xFF, R.bytes));
        CU(G.cuMemsetD8(s.C[0].ptr, 0xFF, s.C[0].bytes));
        launch_ours(&s, 0);
        int st = cublas_gemm(s.A[0].ptr, s.B[0].ptr, R.ptr, s.M, s.N, s.K, d, d, false, nt);
        CU(G.cuCtxSynchronize());
        size_t n = (size_t)sh->M * sh->N;
        void *hc = download(s.C[0].ptr, n * dt_size(d)), *hr = download(R.ptr, n * dt_size(d));
        double atol, rtol;
        dt_tol(d, &atol, &rtol);
        cmp_result cr = compare_out(d, hc, n, NULL, hr, atol, rtol);
        bool ok = st == 0 && cr.bad == 0;
        if (!ok) {
          failures++;
          fprintf(stderr, "CHECK FAILED %s %s %s: %zu of %zu elements differ from cuBLAS; worst [%zu] %.6g vs %.6g\n",
                  dt_name(d), nt ? "NT" : "NN", sz, cr.bad, n, cr.worst, cr.worst_got, cr.worst_ref);
        }
        /* the reference variants, checked the same way (C of set 0 poisoned
         * again); those that pass are timed */
        ref_timed rt[N_REF];
        int nref = 0;
        const char *ref_chk = "";
        double ref_err = 0;
        if (ok && ref_applies(&s)) {
          ref_chk = "PASS";
          for (int i = 0; i < N_REF; i++) {
            const ref_variant *v = &ref_vars[i];
            CU(G.cuMemsetD8(s.C[0].ptr, 0xFF, s.C[0].bytes));
            CUres lr = ref_launch(v, s.A[0].ptr, s.B[0].ptr, s.C[0].ptr, s.M, s.N, s.K);
            if (lr != 0) {
              printf("reference %s on %s: cuLaunchKernel failed: %s; not timed\n", v->name, sz, cu_err_name(lr));
              if (!strcmp(ref_chk, "PASS")) ref_chk = "LAUNCH_FAIL";
              continue;
            }
            CU(G.cuCtxSynchronize());
            void *hx = download(s.C[0].ptr, n * dt_size(d));
            cmp_result rr = compare_out(d, hx, n, NULL, hr, atol, rtol);
            free(hx);
            if (rr.max_err > ref_err) ref_err = rr.max_err;
            if (rr.bad) {
              failures++;
              ref_chk = "FAIL";
              fprintf(stderr, "CHECK FAILED reference %s on %s: %zu of %zu elements differ from cuBLAS; worst [%zu] "
                      "%.6g vs %.6g\n", v->name, sz, rr.bad, n, rr.worst, rr.worst_got, rr.worst_ref);
              continue;
            }
            rt[nref++] = (ref_timed){&s, v};
          }
        }
        free(hc);
        free(hr);
        dev_free(&R);
        double t_cub = 0, t_ours = 0, t_ref[N_REF] = {0};
        if (ok && nref > 0) {
          /* cuBLAS, ours and the reference variants, interleaved */
          void (*fns[2 + N_REF])(void *, int) = {launch_cublas, launch_ours};
          void *fargs[2 + N_REF] = {&s, &s};
          for (int j = 0; j < nref; j++) {
            fns[2 + j] = launch_ref;
            fargs[2 + j] = &rt[j];
          }
          double med[2 + N_REF];
          time_interleaved(2 + nref, fns, fargs, WARMUP, reps, ROUND_LAUNCHES, med);
          t_cub = med[0];
          t_ours = med[1];
          for (int j = 0; j < nref; j++) t_ref[rt[j].v - ref_vars] = med[2 + j];
        } else if (ok) {
          t_cub = time_launches(launch_cublas, &s, WARMUP, reps);
          t_ours = time_launches(launch_ours, &s, WARMUP, reps);
        }
        double flop = 2.0 * sh->M * sh->N * sh->K;
        double tf = ok ? flop / (t_ours * 1e-3) / 1e12 : 0, tfc = ok ? flop / (t_cub * 1e-3) / 1e12 : 0;
        int best = -1; /* the faster reference variant */
        for (int i = 0; i < N_REF; i++)
          if (t_ref[i] > 0 && (best < 0 || t_ref[i] < t_ref[best])) best = i;
        double tfr = best >= 0 ? flop / (t_ref[best] * 1e-3) / 1e12 : 0;
        char rtf[16] = "-", rratio[16] = "-";
        if (best >= 0) {
          snprintf(rtf, sizeof rtf, "%.1f", tfr);
          snprintf(rratio, sizeof rratio, "%.3f", tf / tfr);
        }
        printf("%-6s %-3s %-17s %-22s %9.1f %9.1f %9.3f %7s %-9.3g %9s %8s %s\n", d == DT_F16 ? "f16" : "bf16",
               nt ? "NT" : "NN", sz, cfgs, tf, tfc, ok ? tf / tfc : 0.0, ok ? "PASS" : "FAIL", cr.max_err, rtf,
               rratio, best >= 0 ? ref_vars[best].name : "-");
        fflush(stdout);
        fprintf(f, "%s,%s,%d,%d,%d,%s,%.4f,%.1f,%.4f,%.1f,%.3f,%.3g,%s,%.0f,%d", dt_name(d), nt ? "NT" : "NN",
                sh->M, sh->N, sh->K, cfgs, t_ours, tf, t_cub, tfc, ok ? tf / tfc : 0.0, cr.max_err,
                ok ? "PASS" : "FAIL", cms, s.nrot);
        /* timing,ref_variant,ref_ms,ref_tflops,ours_over_ref,ref_<BM>x<BN>_tflops...,ref_check,ref_max_err */
        fprintf(f, ",%s", !ok ? "" : nref ? "interleaved" : "sequential");
        if (best >= 0)
          fprintf(f, ",%s,%.4f,%.1f,%.3f", ref_vars[best].name, t_ref[best], tfr, tf / tfr);
        else
          fprintf(f, ",,,,");
        for (int i = 0; i < N_REF; i++) {
          if (t_ref[i] > 0) fprintf(f, ",%.1f", flop / (t_ref[i] * 1e-3) / 1e12);
          else fputc(',', f);
        }
        if (*ref_chk) fprintf(f, ",%s,%.3g\n", ref_chk, ref_err);
        else fprintf(f, ",,\n");
        fflush(f);
        for (int r = 0; r < s.nrot; r++) {
          dev_free(&s.A[r]);
          dev_free(&s.B[r]);
          dev_free(&s.C[r]);
        }
        tl_kernel_destroy(s.k);
      }
  fclose(f);
  printf("csv: %s\n", csv);
  if (ref_module) G.cuModuleUnload(ref_module);
  CB.destroy(CB.handle);
  tl_context_destroy(ctx);
  return failures ? 1 : 0;
}
