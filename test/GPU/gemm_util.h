/* Helpers for the GEMM GPU tests and the GEMM benchmark (header-only, on top
 * of gpu_util.h): cuBLAS loaded with dlopen (libcublas.so.13, then the CUDA
 * installation's copy; nothing links it), cublasGemmEx for row-major
 * operands with optional transposes, a float64 CPU reference product on
 * several threads, and per-element comparison (docs/testing.md "Numeric checks").
 *
 * Row-major C (M x N) = op(A) op(B) is column-major Cᵀ = op(B)ᵀ op(A)ᵀ, so
 * cuBLAS gets B first: A stored K x M (trans_A) is the column-major M x K
 * matrix A itself and needs CUBLAS_OP_T; likewise B stored N x K. */
#ifndef TL_GEMM_UTIL_H
#define TL_GEMM_UTIL_H

#include <pthread.h>
#include <unistd.h>

#include "gpu_util.h"

/* ------------------------------------------------------------ cuBLAS */
enum { CUBLAS_OP_N_ = 0, CUBLAS_OP_T_ = 1 };
enum { CUDA_R_32F_ = 0, CUDA_R_16F_ = 2, CUDA_R_16BF_ = 14 };
enum { CUBLAS_COMPUTE_32F_ = 68, CUBLAS_GEMM_DEFAULT_ = -1 };

typedef struct cublas_api {
  void *lib, *handle;
  int (*create)(void **);
  int (*destroy)(void *);
  int (*set_stream)(void *, void *);
  int (*gemm_ex)(void *, int, int, int, int, int, const void *, const void *, int, int, const void *, int, int,
                 const void *, void *, int, int, int, int);
} cublas_api;

static cublas_api CB;

/* Loads cuBLAS and creates a handle; false (with the reason printed) when
 * it is not available. */
static __attribute__((unused)) bool cublas_load(void) {
  if (CB.handle) return true;
  const char *names[] = {"libcublas.so.13", "/usr/local/cuda/lib64/libcublas.so.13", "libcublas.so.12", "libcublas.so"};
  for (size_t i = 0; i < sizeof names / sizeof names[0] && !CB.lib; i++)
    CB.lib = dlopen(names[i], RTLD_NOW | RTLD_LOCAL);
  if (!CB.lib) {
    printf("note: cuBLAS not found (dlopen libcublas.so.13: %s); cuBLAS comparisons skipped\n", dlerror());
    return false;
  }
  *(void **)&CB.create = dlsym(CB.lib, "cublasCreate_v2");
  *(void **)&CB.destroy = dlsym(CB.lib, "cublasDestroy_v2");
  *(void **)&CB.set_stream = dlsym(CB.lib, "cublasSetStream_v2");
  *(void **)&CB.gemm_ex = dlsym(CB.lib, "cublasGemmEx");
  if (!CB.create || !CB.gemm_ex || !CB.destroy) {
    printf("note: cuBLAS lacks cublasCreate_v2/cublasGemmEx; cuBLAS comparisons skipped\n");
    return false;
  }
  int st = CB.create(&CB.handle);
  if (st != 0) {
    printf("note: cublasCreate failed (status %d); cuBLAS comparisons skipped\n", st);
    CB.handle = NULL;
    return false;
  }
  return true;
}

static __attribute__((unused)) int cuda_type(dt_kind d) {
  return d == DT_F16 ? CUDA_R_16F_ : d == DT_BF16 ? CUDA_R_16BF_ : CUDA_R_32F_;
}

/* C (M x N, out dtype) = A @ B on the legacy default stream, row-major,
 * A stored K x M when ta, B stored N x K when tb; f32 compute. */
static __attribute__((unused)) int cublas_gemm(unsigned long long A, unsigned long long B, unsigned long long C, int M,
                                               int N, int K, dt_kind in, dt_kind out, bool ta, bool tb) {
  float alpha = 1.0f, beta = 0.0f;
  return CB.gemm_ex(CB.handle, tb ? CUBLAS_OP_T_ : CUBLAS_OP_N_, ta ? CUBLAS_OP_T_ : CUBLAS_OP_N_, N, M, K, &alpha,
                    (const void *)(uintptr_t)B, cuda_type(in), tb ? K : N, (const void *)(uintptr_t)A, cuda_type(in),
                    ta ? M : K, &beta, (void *)(uintptr_t)C, cuda_type(out), N, CUBLAS_COMPUTE_32F_,
                    CUBLAS_GEMM_DEFAULT_);
}

/* ------------------------------------------------------- CPU reference */
typedef struct ref_job {
  const double *a; /* M x K row-major */
  const double *b; /* N x K row-major (B transposed) */
  double *c;       /* M x N */
  int M, N, K, row0, row1;
} ref_job;

static void *ref_worker(void *p) {
  ref_job *j = p;
  for (int i = j->row0; i < j->row1; i++) {
    const double *ai = j->a + (size_t)i * j->K;
    for (int n = 0; n < j->N; n++) {
      const double *bn = j->b + (size_t)n * j->K;
      double s0 = 0, s1 = 0, s2 = 0, s3 = 0;
      int k = 0;
      for (; k + 4 <= j->K; k += 4) {
        s0 += ai[k] * bn[k];
        s1 += ai[k + 1] * bn[k + 1];
        s2 += ai[k + 2] * bn[k + 2];
        s3 += ai[k + 3] * bn[k + 3];
      }
      for (; k < j->K; k++) s0 += ai[k] * bn[k];
      j->c[(size_t)i * j->N + n] = (s0 + s1) + (s2 + s3);
    }
  }
  return NULL;
}

/* ref (M x N, malloc'd) = A @ B in float64 from the host copies of the
 * inputs (dtype in; A stored K x M when ta, B stored N x K when tb). */
static __attribute__((unused)) double *ref_gemm(const void *ha, const void *hb, int M, int N, int K, dt_kind in,
                                                bool ta, bool tb) {
  double *a = malloc(sizeof(double) * (size_t)M * K), *b = malloc(sizeof(double) * (size_t)N * K);
  double *c = malloc(sizeof(double) * (size_t)M * N);
  if (!a || !b || !c) {
    fprintf(stderr, "out of memory in the CPU reference\n");
    exit(1);
  }
  for (int m = 0; m < M; m++)
    for (int k = 0; k < K; k++) a[(size_t)m * K + k] = dt_load(in, ha, ta ? (size_t)k * M + m : (size_t)m * K + k);
  for (int n = 0; n < N; n++)
    for (int k = 0; k < K; k++) b[(size_t)n * K + k] = dt_load(in, hb, tb ? (size_t)n * K + k : (size_t)k * N + n);
  long nt = sysconf(_SC_NPROCESSORS_ONLN);
  if (nt < 1) nt = 1;
  if (nt > 64) nt = 64;
  if (nt > M) nt = M;
  pthread_t th[64];
  ref_job jobs[64];
  for (long t = 0; t < nt; t++) {
    jobs[t] = (ref_job){a, b, c, M, N, K, (int)(M * t / nt), (int)(M * (t + 1) / nt)};
    pthread_create(&th[t], NULL, ref_worker, &jobs[t]);
  }
  for (long t = 0; t < nt; t++) pthread_join(th[t], NULL);
  free(a);
  free(b);
  return c;
}

/* Per-element comparison of out (dtype d, n elements) with ref: counts
 * |out - ref| > atol + rtol |ref| and non-finite outputs (the poison of
 * unwritten elements); reports the worst element. */
typedef struct cmp_result {
  size_t bad, first_bad;
  double max_err, worst_ref, worst_got;
  size_t worst;
} cmp_result;

static __attribute__((unused)) cmp_result compare_out(dt_kind d, const void *out, size_t n, const double *ref,
                                                      const void *ref_dt, double atol, double rtol) {
  cmp_result r;
  memset(&r, 0, sizeof r);
  for (size_t i = 0; i < n; i++) {
    double o = dt_load(d, out, i), x = ref ? ref[i] : dt_load(d, ref_dt, i);
    double e = fabs(o - x);
    bool ok = isfinite(o) && e <= atol + rtol * fabs(x);
    if (!isfinite(o)) e = INFINITY;
    if (e > r.max_err || (i == 0 && !ok)) {
      r.max_err = e;
      r.worst = i;
      r.worst_ref = x;
      r.worst_got = o;
    }
    if (!ok) {
      if (!r.bad) r.first_bad = i;
      r.bad++;
    }
  }
  return r;
}

/* Median time in ms of `reps` launches of fn(arg) on the legacy stream,
 * each between two CUDA events, after `warm` untimed launches. */
static __attribute__((unused)) double time_launches(void (*fn)(void *, int), void *arg, int warm, int reps) {
  for (int i = 0; i < warm; i++) fn(arg, i);
  void **ev = malloc(sizeof(void *) * 2 * (size_t)reps);
  double *t = malloc(sizeof(double) * (size_t)reps);
  for (int i = 0; i < 2 * reps; i++) CU(G.cuEventCreate(&ev[i], 0));
  for (int i = 0; i < reps; i++) {
    CU(G.cuEventRecord(ev[2 * i], NULL));
    fn(arg, warm + i);
    CU(G.cuEventRecord(ev[2 * i + 1], NULL));
  }
  CU(G.cuEventSynchronize(ev[2 * reps - 1]));
  for (int i = 0; i < reps; i++) {
    float ms;
    CU(G.cuEventElapsedTime(&ms, ev[2 * i], ev[2 * i + 1]));
    t[i] = ms;
  }
  for (int i = 0; i < 2 * reps; i++) G.cuEventDestroy(ev[i]);
  double m = median(t, reps);
  free(ev);
  free(t);
  return m;
}

/* Interleaved timing of n kernels, so that all of them run under the same
 * clocks and power state: `warm` untimed rounds of one launch of each, then
 * rounds of `burst` launches of each kernel in turn (fewer in the last
 * round; the kernel that opens a round rotates) until each has had `reps`
 * launches, every launch between two CUDA events on the legacy stream.
 * fn[k](arg[k], i) launches kernel k; i counts the launches of this call
 * over all kernels, so that input rotation (i % sets) moves to the next set
 * with every launch, as in time_launches.  med[k] = the median time in ms
 * of kernel k's `reps` launches. */
static __attribute__((unused)) void time_interleaved(int n, void (*const *fn)(void *, int), void *const *arg, int warm,
                                                     int reps, int burst, double *med) {
  int li = 0;
  if (burst < 1) burst = 1;
  for (int w = 0; w < warm; w++)
    for (int k = 0; k < n; k++) fn[k](arg[k], li++);
  size_t nl = (size_t)n * (size_t)reps; /* launch j of kernel k is [k * reps + j] */
  void **ev = malloc(sizeof(void *) * 2 * nl);
  double *t = malloc(sizeof(double) * nl);
  if (!ev || !t) {
    fprintf(stderr, "out of host memory\n");
    exit(1);
  }
  for (size_t i = 0; i < 2 * nl; i++) CU(G.cuEventCreate(&ev[i], 0));
  for (int done = 0, round = 0; done < reps; round++) {
    int b = reps - done < burst ? reps - done : burst;
    for (int q = 0; q < n; q++) {
      int k = (round + q) % n;
      for (int j = done; j < done + b; j++) {
        void **e = ev + 2 * ((size_t)k * reps + j);
        CU(G.cuEventRecord(e[0], NULL));
        fn[k](arg[k], li++);
        CU(G.cuEventRecord(e[1], NULL));
      }
    }
    done += b;
  }
  CU(G.cuCtxSynchronize());
  for (size_t i = 0; i < nl; i++) {
    float ms;
    CU(G.cuEventElapsedTime(&ms, ev[2 * i], ev[2 * i + 1]));
    t[i] = ms;
  }
  for (size_t i = 0; i < 2 * nl; i++) G.cuEventDestroy(ev[i]);
  for (int k = 0; k < n; k++) med[k] = median(t + (size_t)k * reps, reps);
  free(ev);
  free(t);
}

static __attribute__((unused)) const char *gemm_kernels_dir(void) {
  const char *d = getenv("TL_GPU_KERNELS");
  return d && *d ? d : "test/GPU/kernels";
}

#endif
