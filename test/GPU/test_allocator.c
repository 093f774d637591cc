/* GPU test (issue 17): the per-context output allocator (tl_context_set_allocator).
 * With an allocator set, tl_kernel_call's out_idx output comes from its alloc
 * callback (one call, the output's bytes, device 0, the call's stream) and the
 * output's deleter hands it to its free callback (nothing through cuMemAlloc);
 * the result is A + B.  An allocator returning NULL fails the call with
 * TL_ERR_NO_MEMORY naming the output; a misaligned pointer fails it with
 * TL_ERR_INVALID_ARGUMENT and is freed again; set back to NULL, the default
 * cuMemAlloc path is used again. */
#include "gpu_util.h"

static tl_context *ctx;

typedef struct pool {
  int allocs, frees;
  size_t last_bytes;
  int last_device;
  void *last_stream;
  int mode; /* 0 normal, 1 NULL, 2 misaligned by 2 bytes (no float32 access allows it) */
} pool;

static void *pool_alloc(void *user, size_t bytes, int device, void *stream) {
  pool *p = user;
  if (p->mode == 1) return NULL;
  unsigned long long ptr = 0;
  if (G.cuMemAlloc(&ptr, bytes + 256) != 0) return NULL;
  p->allocs++;
  p->last_bytes = bytes;
  p->last_device = device;
  p->last_stream = stream;
  return (void *)(uintptr_t)(ptr + (p->mode == 2 ? 2 : 0));
}

static void pool_free(void *user, void *ptr, size_t bytes, int device, void *stream) {
  pool *p = user;
  (void)bytes, (void)device, (void)stream;
  p->frees++;
  G.cuMemFree((unsigned long long)(uintptr_t)ptr - (p->mode == 2 ? 2 : 0));
}

int main(void) {
  if (tl_context_create(&ctx) != TL_OK) return 1;
  gpu_init(ctx);
  rng_seed(17);
  char path[1024];
  snprintf(path, sizeof path, "%s/elementwise_add_1d.py", kernel_dir());
  tl_kernel *k = NULL;
  if (tl_kernel_compile_file(ctx, path, NULL, 0, NULL, &k) != TL_OK) { /* the file's out_idx=-1 */
    fprintf(stderr, "FAIL compile: %s\n", tl_context_last_error(ctx));
    return 1;
  }
  int64_t n = 100003;
  size_t bytes = (size_t)n * 4;
  dev_tensor A, B;
  float *ha = dev_random(&A, DT_F32, 1, &n), *hb = dev_random(&B, DT_F32, 1, &n);
  tl_arg args[2] = {tl_arg_tensor(&A.t), tl_arg_tensor(&B.t)};

  pool p = {0};
  tl_allocator a = {pool_alloc, pool_free, &p};
  CHECK(tl_context_set_allocator(ctx, &a) == TL_OK, "set_allocator: %s", tl_context_last_error(ctx));
  DLManagedTensor *out[1] = {NULL};
  tl_status s = tl_kernel_call(ctx, k, args, 2, NULL, out);
  CHECK(s == TL_OK, "call with the allocator: %s", tl_context_last_error(ctx));
  if (s == TL_OK) {
    CU(G.cuCtxSynchronize());
    CHECK(p.allocs == 1 && p.frees == 0 && p.last_bytes == bytes && p.last_device == 0 && p.last_stream == NULL,
          "alloc callback: %d allocs, %zu bytes, device %d", p.allocs, p.last_bytes, p.last_device);
    float *h = download((uintptr_t)out[0]->dl_tensor.data, bytes);
    size_t bad = 0;
    for (int64_t i = 0; i < n; i++) bad += h[i] != ha[i] + hb[i];
    CHECK(bad == 0, "%zu elements of the allocator's output differ from A + B", bad);
    free(h);
    out[0]->deleter(out[0]);
    CHECK(p.frees == 1, "the deleter did not call free (%d frees)", p.frees);
    printf("  ok   output from the allocator, freed by the deleter\n");
  }

  p.mode = 1;
  s = tl_kernel_call(ctx, k, args, 2, NULL, out);
  CHECK(s == TL_ERR_NO_MEMORY && strstr(tl_context_last_error(ctx), "'C'"), "NULL from alloc: %s: %s",
        tl_status_name(s), tl_context_last_error(ctx));
  printf("  ok   NULL from alloc: %s\n", tl_context_last_error(ctx));

  p.mode = 2;
  int frees = p.frees;
  s = tl_kernel_call(ctx, k, args, 2, NULL, out);
  CHECK(s == TL_ERR_INVALID_ARGUMENT && strstr(tl_context_last_error(ctx), "aligned") && p.frees == frees + 1,
        "misaligned: %s: %s (%d frees)", tl_status_name(s), tl_context_last_error(ctx), p.frees - frees);
  printf("  ok   misaligned pointer: %s\n", tl_context_last_error(ctx));

  tl_allocator half = {pool_alloc, NULL, &p};
  CHECK(tl_context_set_allocator(ctx, &half) == TL_ERR_INVALID_ARGUMENT, "alloc without free accepted");
  CHECK(tl_context_set_allocator(ctx, NULL) == TL_OK, "reset");
  p.mode = 0;
  int allocs = p.allocs;
  s = tl_kernel_call(ctx, k, args, 2, NULL, out);
  CHECK(s == TL_OK && p.allocs == allocs, "default path after reset: %s", tl_context_last_error(ctx));
  if (s == TL_OK) out[0]->deleter(out[0]);

  dev_free(&A);
  dev_free(&B);
  free(ha);
  free(hb);
  tl_kernel_destroy(k);
  tl_context_destroy(ctx);
  return finish("test_allocator");
}
