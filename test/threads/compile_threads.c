/* Concurrent compilation: two threads, each with its own tl_context, compile
 * different kernels (examples/gemm.py and examples/softmax.py, four -D
 * variants each) ITERATIONS times (argv[1], default 200) in one process.
 * The threads start cold (nothing compiled before them in this process), so
 * any lazily initialised state is first touched concurrently.  Every PTX
 * text must equal the one the same variant gives when compiled alone after
 * the threads have finished.  Built and run under ThreadSanitizer by
 * scripts/test.sh (build-tsan/), where any data race in the compiler (a
 * function-static cache, a shared LLVM object) is reported and fails the
 * run; the normal and ASan builds run it with fewer iterations.
 * Run from the repository root (the kernel files are found from there). */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tilelang/tilelang.h"

#define NVAR 4

typedef struct job {
  const char *file;
  tl_define defs[NVAR][2];
  char *first[NVAR]; /* PTX of each variant's first compilation in the thread */
  int iterations;
  int failures;
  char msg[512];
} job;

/* Compiles variant v of j for sm_80; returns the PTX (malloc'd) or NULL with
 * j->msg set. */
static char *compile(tl_context *ctx, job *j, int v) {
  tl_compile_options o = {0};
  o.target = "sm_80";
  tl_kernel *k = NULL;
  if (tl_kernel_compile_file(ctx, j->file, j->defs[v], 2, &o, &k) != TL_OK) {
    snprintf(j->msg, sizeof j->msg, "%s variant %d: %s", j->file, v, tl_context_last_error(ctx));
    return NULL;
  }
  char *ptx = strdup(tl_kernel_ptx(k));
  tl_kernel_destroy(k);
  return ptx;
}

static void *run(void *arg) {
  job *j = arg;
  tl_context *ctx = NULL;
  if (tl_context_create(&ctx) != TL_OK) {
    j->failures = j->iterations;
    return NULL;
  }
  for (int i = 0; i < j->iterations; i++) {
    int v = i % NVAR;
    char *ptx = compile(ctx, j, v);
    if (ptx && !j->first[v]) {
      j->first[v] = ptx;
      continue;
    }
    if (!ptx || strcmp(ptx, j->first[v])) {
      if (ptx) snprintf(j->msg, sizeof j->msg, "%s variant %d: PTX differs at iteration %d", j->file, v, i);
      j->failures++;
    }
    free(ptx);
  }
  tl_context_destroy(ctx);
  return NULL;
}

int main(int argc, char **argv) {
  int iterations = argc > 1 ? atoi(argv[1]) : 200;
  job jobs[2] = {
      {.file = "examples/gemm.py",
       .defs = {{{"M", "256"}, {"num_stages", "3"}},
                {{"M", "512"}, {"num_stages", "2"}},
                {{"M", "384"}, {"dtype", "bfloat16"}},
                {{"M", "128"}, {"num_stages", "0"}}}},
      {.file = "examples/softmax.py",
       .defs = {{{"M", "256"}, {"N", "1024"}},
                {{"M", "512"}, {"N", "2048"}},
                {{"M", "64"}, {"dtype", "float32"}},
                {{"M", "128"}, {"N", "512"}}}},
  };
  pthread_t th[2];
  for (int t = 0; t < 2; t++) {
    jobs[t].iterations = iterations < NVAR ? NVAR : iterations;
    if (pthread_create(&th[t], NULL, run, &jobs[t])) return 1;
  }
  for (int t = 0; t < 2; t++) pthread_join(th[t], NULL);
  /* Each variant compiled alone must give what the threads got. */
  tl_context *ctx = NULL;
  if (tl_context_create(&ctx) != TL_OK) return 1;
  for (int t = 0; t < 2; t++)
    for (int v = 0; v < NVAR; v++) {
      char *alone = compile(ctx, &jobs[t], v);
      if (!alone || !jobs[t].first[v] || strcmp(alone, jobs[t].first[v])) {
        if (alone)
          snprintf(jobs[t].msg, sizeof jobs[t].msg, "%s variant %d: PTX compiled alone differs", jobs[t].file, v);
        jobs[t].failures++;
      }
      free(alone);
    }
  tl_context_destroy(ctx);
  int bad = 0;
  for (int t = 0; t < 2; t++) {
    printf("%s: %d compilations in parallel with the other thread, %d failed%s%s\n", jobs[t].file, jobs[t].iterations,
           jobs[t].failures, jobs[t].failures ? ": " : "", jobs[t].failures ? jobs[t].msg : "");
    bad += jobs[t].failures;
    for (int v = 0; v < NVAR; v++) free(jobs[t].first[v]);
  }
  printf(bad ? "compile_threads: FAIL\n" : "compile_threads: PASS\n");
  return bad ? 1 : 0;
}
