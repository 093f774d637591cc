/* GPU test (issue 16): a kernel loaded from the disk cache launches like the
 * one compiled fresh.  For the GEMM (on sm_90a the Hopper path: tensor maps,
 * wgmma, dynamic shared memory over 48 KB), the GEMM with a dynamic M (the
 * signature's symbol programs) and the elementwise add, at the default
 * target: a compile that stores (TL_CACHE_USE_REFRESH), one that must hit,
 * both called with the same inputs; the outputs must be equal bit for bit
 * (and the GEMM's close to a float64 reference on sampled elements, so that
 * two equally wrong kernels cannot pass).  The cache lives in a temporary
 * directory. */
#include <unistd.h>

#include "gpu_util.h"

static tl_context *ctx;

typedef struct cache_case {
  const char *file;
  const char *defs; /* one -D NAME=VALUE or "" */
  int64_t m, n, k;  /* GEMM A (m,k) x B (k,n); elementwise: A, B (m,n) with k = 0 */
} cache_case;

static tl_kernel *compile(const cache_case *c, int mode) {
  char path[1024], buf[64];
  snprintf(path, sizeof path, "%s/%s", kernel_dir(), c->file);
  snprintf(buf, sizeof buf, "%s", c->defs);
  tl_define d = {buf, ""};
  char *eq = strchr(buf, '=');
  if (eq) *eq = 0, d.value = eq + 1;
  tl_compile_options o = {0};
  o.cache = mode;
  tl_kernel *k = NULL;
  if (tl_kernel_compile_file(ctx, path, &d, eq ? 1 : 0, &o, &k) != TL_OK) {
    fprintf(stderr, "FAIL compile %s: %s\n", c->file, tl_context_last_error(ctx));
    exit(1);
  }
  return k;
}

/* Runs k on A, B; the output downloaded (malloc'd, *bytes). */
static void *run(tl_kernel *k, dev_tensor *A, dev_tensor *B, size_t *bytes) {
  tl_arg args[2] = {tl_arg_tensor(&A->t), tl_arg_tensor(&B->t)};
  DLManagedTensor *out[1] = {NULL};
  if (tl_kernel_call(ctx, k, args, 2, NULL, out) != TL_OK) {
    CHECK(0, "call: %s", tl_context_last_error(ctx));
    return NULL;
  }
  CU(G.cuCtxSynchronize());
  const DLTensor *t = &out[0]->dl_tensor;
  *bytes = (size_t)t->shape[0] * (size_t)t->shape[1] * (t->dtype.bits / 8u);
  void *h = download((uintptr_t)t->data, *bytes);
  out[0]->deleter(out[0]);
  return h;
}

int main(void) {
  if (tl_context_create(&ctx) != TL_OK) return 1;
  gpu_init(ctx);
  char dir[] = "/tmp/tl-gpu-cache-XXXXXX";
  if (!mkdtemp(dir)) return 1;
  setenv("TL_CACHE", "1", 1);
  setenv("TL_CACHE_DIR", dir, 1);
  rng_seed(16);
  static const cache_case cases[] = {
      {"gemm.py", "", 1024, 1024, 1024},
      {"gemm_dynamic_m.py", "", 777, 1024, 1024},
      {"elementwise_add.py", "M=1000", 1000, 1024, 0},
  };
  for (size_t ci = 0; ci < sizeof cases / sizeof cases[0]; ci++) {
    const cache_case *c = &cases[ci];
    tl_kernel *fresh = compile(c, TL_CACHE_USE_REFRESH);
    tl_kernel *hit = compile(c, TL_CACHE_USE_DEFAULT);
    CHECK(tl_kernel_cache_result(fresh) == TL_CACHE_RESULT_MISS, "%s: the first compile stores", c->file);
    CHECK(tl_kernel_cache_result(hit) == TL_CACHE_RESULT_HIT, "%s: the second compile hits", c->file);
    CHECK(!strcmp(tl_kernel_ptx(fresh), tl_kernel_ptx(hit)), "%s: the same PTX", c->file);
    bool gemm = c->k > 0;
    dt_kind dt = gemm ? DT_F16 : DT_F32;
    int64_t sa[2] = {c->m, gemm ? c->k : c->n}, sb[2] = {gemm ? c->k : c->m, c->n};
    dev_tensor A, B;
    void *ha = dev_random(&A, dt, 2, sa), *hb = dev_random(&B, dt, 2, sb);
    size_t n1 = 0, n2 = 0;
    void *o1 = run(fresh, &A, &B, &n1), *o2 = run(hit, &A, &B, &n2);
    CHECK(o1 && o2 && n1 == n2 && !memcmp(o1, o2, n1), "%s: the cached kernel's output equals the fresh one's",
          c->file);
    /* the fresh kernel is right: sampled elements against float64 */
    for (int s = 0; o1 && s < 64; s++) {
      int64_t i = (s * 7919) % c->m, j = (s * 104729) % c->n;
      double ref = 0;
      if (gemm)
        for (int64_t q = 0; q < c->k; q++)
          ref += dt_load(dt, ha, (size_t)(i * c->k + q)) * dt_load(dt, hb, (size_t)(q * c->n + j));
      else ref = dt_load(dt, ha, (size_t)(i * c->n + j)) + dt_load(dt, hb, (size_t)(i * c->n + j));
      double got = dt_load(dt, o1, (size_t)(i * c->n + j)), atol, rtol;
      dt_tol(dt, &atol, &rtol);
      CHECK(fabs(got - ref) <= atol + rtol * fabs(ref) * (gemm ? 4 : 1), "%s [%lld,%lld]: %g vs %g", c->file,
            (long long)i, (long long)j, got, ref);
    }
    printf("  %s %s (%s): miss then hit, outputs equal\n", g_failures ? "FAIL" : "ok  ", c->file,
           tl_kernel_target(hit));
    free(o1), free(o2), free(ha), free(hb);
    dev_free(&A), dev_free(&B);
    tl_kernel_destroy(fresh);
    tl_kernel_destroy(hit);
  }
  char cmd[128];
  snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
  if (system(cmd) != 0) fprintf(stderr, "cannot remove %s\n", dir);
  tl_context_destroy(ctx);
  return finish("test_kernel_cache");
}
