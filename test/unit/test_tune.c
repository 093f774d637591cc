/* Unit tests of the autotuner: the @tilelang.autotune decorator read at
 * compile time (tl_tune_space_parse: list displays, itertools.product
 * comprehensions, helper calls, a function value, the tilelang.autotuner
 * import; located errors for bad configs) and tl_kernel_tune without a GPU
 * (a fake measure callback: the worker pool compiles every config, a config
 * that does not compile and one whose measure fails are skipped with their
 * reasons, the fastest wins; the tune cache answers a second call at once
 * and misses when the problem changes; a dry run compiles only).  Every
 * tune test works in its own mkdtemp directory (TL_CACHE_DIR). */
#include <criterion/criterion.h>
#include <dirent.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "Runtime/kernel.h"
#include "test_util.h"
#include "tilelang/tilelang.h"

static tl_context *ctx;
static char dir[64];

static void setup(void) {
  tl_test_cache_dir(dir, sizeof dir, "tl-tune-test");
  cr_assert_eq(tl_context_create(&ctx), TL_OK);
}
static void teardown(void) {
  tl_context_destroy(ctx);
  tl_test_remove_dir(dir);
}

TestSuite(tune_space, .init = setup, .fini = teardown);
TestSuite(tune, .init = setup, .fini = teardown);

#define HEAD "import itertools\nimport tilelang\nimport tilelang.language as T\n"
#define BODY                                                                                                           \
  "@tilelang.jit(out_idx=-1)\n"                                                                                        \
  "def add(M=64, N=256, block_M=32, block_N=128, threads=128, fast=False, dtype=\"float32\"):\n"                       \
  "    @T.prim_func\n"                                                                                                 \
  "    def main(A: T.Tensor((M, N), dtype), B: T.Tensor((M, N), dtype), C: T.Tensor((M, N), dtype)):\n"                \
  "        with T.Kernel(T.ceildiv(N, block_N), T.ceildiv(M, block_M), threads=threads) as (bx, by):\n"                \
  "            A_frag = T.alloc_fragment((block_M, block_N), dtype)\n"                                                 \
  "            B_frag = T.alloc_fragment((block_M, block_N), dtype)\n"                                                 \
  "            T.copy(A[by * block_M, bx * block_N], A_frag)\n"                                                        \
  "            T.copy(B[by * block_M, bx * block_N], B_frag)\n"                                                        \
  "            for i, j in T.Parallel(block_M, block_N):\n"                                                            \
  "                A_frag[i, j] = A_frag[i, j] + B_frag[i, j]\n"                                                       \
  "            T.copy(A_frag, C[by * block_M, bx * block_N])\n"                                                        \
  "    return main\n"

static tl_tune_space *parse_ok(const char *src) {
  tl_tune_space *s = NULL;
  tl_status st = tl_tune_space_parse(ctx, src, strlen(src), "k.py", NULL, NULL, 0, &s);
  cr_assert_eq(st, TL_OK, "%s", tl_context_last_error(ctx));
  cr_assert_not_null(s);
  return s;
}

/* The value of name in config i of s (asserted present). */
static const char *value_of(const tl_tune_space *s, size_t i, const char *name) {
  size_t n = 0;
  const tl_define *d = tl_tune_space_config(s, i, &n);
  for (size_t j = 0; j < n; j++)
    if (!strcmp(d[j].name, name)) return d[j].value;
  cr_assert_fail("config %zu has no %s", i, name);
  return NULL;
}

Test(tune_space, list_of_dicts) {
  tl_tune_space *s =
      parse_ok(HEAD
               "@tilelang.autotune(configs=[{'block_M': 16, 'threads': 64}, {'block_M': 32, 'fast': True,\n"
               "                    'dtype': T.float16, 'block_N': 64}], warmup=3, rep=7)\n" BODY);
  cr_assert_eq(tl_tune_space_count(s), 2);
  cr_assert_eq(tl_tune_space_warmup(s), 3);
  cr_assert_eq(tl_tune_space_rep(s), 7);
  cr_assert_str_eq(tl_tune_space_kernel(s), "add");
  cr_assert_str_eq(tl_tune_space_text(s), "block_M=16 threads=64\nblock_M=32 fast=True dtype='float16' block_N=64\n");
  cr_assert_str_eq(value_of(s, 1, "dtype"), "'float16'");
  size_t n = 9;
  cr_assert_null(tl_tune_space_config(s, 2, &n));
  cr_assert_eq(n, 0);
  tl_tune_space_destroy(s);
}

Test(tune_space, itertools_product_helper) {
  tl_tune_space *s = parse_ok(
      HEAD
      "def get_configs():\n"
      "    keys = ('block_M', 'block_N', 'threads', 'fast')\n"
      "    return [dict(zip(keys, v)) for v in itertools.product([16, 32, 64], [64, 128], [64, 128], [False, True])]\n"
      "@tilelang.autotune(configs=get_configs())\n" BODY);
  cr_assert_eq(tl_tune_space_count(s), 24);
  cr_assert_eq(tl_tune_space_warmup(s), -1);
  cr_assert_eq(tl_tune_space_rep(s), -1);
  /* product order: the last list varies fastest */
  cr_assert_str_eq(value_of(s, 0, "block_M"), "16");
  cr_assert_str_eq(value_of(s, 1, "fast"), "True");
  cr_assert_str_eq(value_of(s, 2, "threads"), "128");
  cr_assert_str_eq(value_of(s, 23, "block_M"), "64");
  cr_assert_str_eq(value_of(s, 23, "block_N"), "128");
  tl_tune_space_destroy(s);
}

Test(tune_space, function_value_and_autotuner_import) {
  tl_tune_space *s = parse_ok(
      "import itertools\nimport tilelang\nimport tilelang.language as T\n"
      "from tilelang.autotuner import autotune\n"
      "BMS = [16, 32]\n"
      "def get_configs():\n"
      "    return [{'block_M': m, 'threads': t} for m, t in itertools.product(BMS, [64, 128, 256])]\n"
      "@autotune(configs=get_configs, warmup=0, rep=1, timeout=30, skip_check=True)\n" BODY);
  cr_assert_eq(tl_tune_space_count(s), 6);
  cr_assert_eq(tl_tune_space_warmup(s), 0);
  cr_assert_str_eq(value_of(s, 5, "block_M"), "32");
  cr_assert_str_eq(value_of(s, 5, "threads"), "256");
  tl_tune_space_destroy(s);
}

/* The forms of TileLang's own examples: dict(k=[...]) with
 * itertools.product(*d.values()), a loop appending dicts, `from
 * tilelang.autotuner import *` with a bare @autotune. */
Test(tune_space, tilelang_example_forms) {
  tl_tune_space *s =
      parse_ok(HEAD
               "def get_configs():\n"
               "    iter_params = dict(block_M=[16, 32, 64], threads=[64, 128])\n"
               "    return [dict(zip(iter_params, values)) for values in itertools.product(*iter_params.values())]\n"
               "@tilelang.autotune(configs=get_configs())\n" BODY);
  cr_assert_eq(tl_tune_space_count(s), 6);
  cr_assert_str_eq(value_of(s, 5, "block_M"), "64");
  cr_assert_str_eq(value_of(s, 5, "threads"), "128");
  tl_tune_space_destroy(s);
  s = parse_ok(
      "import tilelang\nimport tilelang.language as T\nfrom tilelang.autotuner import *\n"
      "def get_configs():\n"
      "    configs = []\n"
      "    for m in [16, 32]:\n"
      "        for t in [64, 128]:\n"
      "            configs.append({'block_M': m, 'threads': t})\n"
      "    return configs\n"
      "@autotune(configs=get_configs(), warmup=10, rep=10)\n" BODY);
  cr_assert_eq(tl_tune_space_count(s), 4);
  cr_assert_str_eq(tl_tune_space_text(s),
                   "block_M=16 threads=64\nblock_M=16 threads=128\nblock_M=32 threads=64\n"
                   "block_M=32 threads=128\n");
  tl_tune_space_destroy(s);
}

Test(tune_space, none_without_decorator) {
  tl_tune_space *s = (tl_tune_space *)1;
  const char *src = HEAD BODY;
  cr_assert_eq(tl_tune_space_parse(ctx, src, strlen(src), "k.py", NULL, NULL, 0, &s), TL_OK);
  cr_assert_null(s);
}

/* The error of a bad decorator line (line 4 of the file), with its location. */
static void expect_error(const char *decorator, const char *want) {
  char *src = malloc(strlen(HEAD) + strlen(decorator) + strlen(BODY) + 1);
  strcpy(src, HEAD);
  strcat(src, decorator);
  strcat(src, BODY);
  tl_tune_space *s = NULL;
  tl_status st = tl_tune_space_parse(ctx, src, strlen(src), "k.py", NULL, NULL, 0, &s);
  cr_assert_eq(st, TL_ERR_COMPILE, "%s: %s", decorator, tl_status_name(st));
  cr_assert_null(s);
  cr_assert(strstr(tl_context_last_error(ctx), want), "%s: expected '%s' in:\n%s", decorator, want,
            tl_context_last_error(ctx));
  free(src);
}

Test(tune_space, located_errors) {
  expect_error(
      "@tilelang.autotune(configs=[{'block_M': 16}, {'bogus': 1}])\n",
      "k.py:4:28: error: @autotune configs: config #1 sets 'bogus', which is not a parameter of factory 'add'");
  expect_error("@tilelang.autotune(configs=5)\n", "k.py:4:28: error: @autotune configs= must be a list of dicts");
  expect_error("@tilelang.autotune(configs=[{'block_M': 16}, 3])\n",
               "k.py:4:28: error: @autotune configs: config #1 is int");
  expect_error("@tilelang.autotune(configs=[])\n", "k.py:4:28: error: @autotune configs= is empty");
  expect_error("@tilelang.autotune(warmup=3)\n", "k.py:4:2: error: @autotune on 'add' needs configs=");
  expect_error("@tilelang.autotune(configs=[{'block_M': lambda x: x}])\n",
               "k.py:4:28: error: @autotune configs: config #0 value of 'block_M' is");
  expect_error("@tilelang.autotune(configs=[{1: 2}])\n", "config #0 has the key int");
  expect_error("@tilelang.autotune(configs=[{'block_M': 16}], rep=0)\n",
               "k.py:4:51: error: @autotune rep= must be an int in [1, 1000000]");
  expect_error("@tilelang.autotune(configs=[{'block_M': 16}], wramup=3)\n", "wramup");
  expect_error("@tilelang.autotune([{'block_M': 16}])\n", "k.py:4:20: error: @autotune takes keyword arguments only");
  expect_error("@tilelang.autotune\n", "needs arguments");
}

/* ------------------------------------------------------- tl_kernel_tune */
typedef struct fake {
  pthread_t caller;
  int calls;
  bool wrong_thread;
} fake;

/* Fake timer: ms = 1000 / (block_M * block_N) * (threads == 64 ? 2 : 1);
 * config #1's check "fails". */
static tl_status fake_measure(void *user, tl_kernel *k, size_t index, int warmup, int rep, double *ms, char *why,
                              size_t why_size) {
  fake *f = user;
  f->calls++;
  if (!pthread_equal(pthread_self(), f->caller)) f->wrong_thread = true;
  cr_assert_eq(warmup, 2);
  cr_assert_eq(rep, 5);
  cr_assert(strstr(tl_kernel_ptx(k), ".entry"), "config %zu has no PTX", index);
  if (index == 1) {
    snprintf(why, why_size, "fake check failure");
    return TL_ERR_COMPILE;
  }
  static const double t[] = {4.0, 1.0, 3.0, 9.0, 2.5, 7.0};
  *ms = t[index];
  return TL_OK;
}

/* Six configs: #1 fails its check, #3 does not compile (block_M 'x'), the
 * fastest of the others is #4 (2.5 ms). */
static const char TUNE_SRC[] = HEAD
    "@tilelang.autotune(configs=[{'block_M': 32}, {'block_M': 16}, {'block_N': 64}, {'block_M': 'x'},\n"
    "                             {'block_M': 16, 'threads': 64}, {'block_N': 32}], warmup=2, rep=5)\n" BODY;

static void tune_once(tl_tune_space *s, const char *problem, int measure, fake *f, tl_tune_result *r) {
  tl_compile_options co = {0};
  co.target = "sm_80";
  tl_tune_options o = {0};
  o.compile = &co;
  o.workers = 2;
  o.measure = measure ? fake_measure : NULL;
  o.user = f;
  o.problem = problem;
  f->caller = pthread_self();
  tl_status st = tl_kernel_tune(ctx, TUNE_SRC, strlen(TUNE_SRC), "k.py", s, &o, r);
  cr_assert_eq(st, TL_OK, "%s", tl_context_last_error(ctx));
  cr_assert_not(f->wrong_thread, "measure ran off the calling thread");
}

Test(tune, pool_skips_failures_and_keeps_the_fastest) {
  tl_tune_space *s = parse_ok(TUNE_SRC);
  fake f = {0};
  tl_tune_result r;
  tune_once(s, "A[64x256] B[64x256]", 1, &f, &r);
  cr_assert_eq(r.nconfigs, 6);
  cr_assert_eq(r.workers, 2);
  cr_assert_eq(f.calls, 5);
  cr_assert_eq(r.compiled, 5);
  cr_assert_eq(r.compile_failed, 1);
  cr_assert_eq(r.timed, 4);
  cr_assert_eq(r.measure_failed, 1);
  cr_assert_eq(r.configs[3].outcome, TL_TUNE_COMPILE_FAILED);
  cr_assert(strstr(r.configs[3].message, "k.py:"), "%s", r.configs[3].message);
  cr_assert_eq(r.configs[1].outcome, TL_TUNE_MEASURE_FAILED);
  cr_assert_str_eq(r.configs[1].message, "fake check failure");
  cr_assert_eq(r.configs[0].outcome, TL_TUNE_TIMED);
  cr_assert_float_eq(r.configs[5].ms, 7.0, 1e-12);
  cr_assert_eq(r.best, 4);
  cr_assert_float_eq(r.best_ms, 2.5, 1e-12);
  cr_assert_not_null(r.kernel);
  cr_assert_not(r.cache_hit);
  cr_assert_eq(strlen(r.cache_key), 32);
  cr_assert_gt(r.compile_cpu_ms, 0);
  /* the winner is config #4's kernel: the same PTX as compiling it alone */
  tl_define d[2] = {{"block_M", "16"}, {"threads", "64"}};
  tl_compile_options co = {0};
  co.target = "sm_80";
  tl_kernel *alone = NULL;
  cr_assert_eq(tl_kernel_compile(ctx, TUNE_SRC, strlen(TUNE_SRC), "k.py", d, 2, &co, &alone), TL_OK);
  cr_assert_str_eq(tl_kernel_ptx(alone), tl_kernel_ptx(r.kernel));
  tl_kernel_destroy(alone);
  tl_kernel_destroy(r.kernel);
  tl_tune_result_free(&r);
  tl_tune_space_destroy(s);
}

Test(tune, cache_answers_the_second_tune) {
  tl_tune_space *s = parse_ok(TUNE_SRC);
  fake f = {0};
  tl_tune_result r1, r2, r3;
  tune_once(s, "A[64x256] B[64x256]", 1, &f, &r1);
  char *ptx = strdup(tl_kernel_ptx(r1.kernel));
  char path[200];
  snprintf(path, sizeof path, "%s/%s.tlt", dir, r1.cache_key);
  cr_assert_eq(access(path, R_OK), 0, "no tune cache entry %s", path);
  f.calls = 0;
  tune_once(s, "A[64x256] B[64x256]", 1, &f, &r2);
  cr_assert(r2.cache_hit);
  cr_assert_eq(f.calls, 0);
  cr_assert_eq(r2.best, 4);
  cr_assert_float_eq(r2.best_ms, 2.5, 1e-12);
  cr_assert_str_eq(r2.cache_key, r1.cache_key);
  cr_assert_str_eq(tl_kernel_ptx(r2.kernel), ptx);
  cr_assert_lt(r2.total_ms, 1000.0);
  cr_assert_eq(r2.configs[0].outcome, TL_TUNE_PENDING);
  /* another problem (shapes of the arguments) misses */
  tune_once(s, "A[128x256] B[128x256]", 1, &f, &r3);
  cr_assert_not(r3.cache_hit);
  cr_assert_eq(f.calls, 5);
  cr_assert_str_neq(r3.cache_key, r1.cache_key);
  /* a corrupt entry is a miss, not a crash */
  FILE *fp = fopen(path, "w");
  fputs("tilelang-ptx tune 1\nbest 99\nms 1\nconfig x\n", fp);
  fclose(fp);
  tl_tune_result r4;
  f.calls = 0;
  tune_once(s, "A[64x256] B[64x256]", 1, &f, &r4);
  cr_assert_not(r4.cache_hit);
  cr_assert_eq(f.calls, 5);
  tl_tune_result *all[] = {&r1, &r2, &r3, &r4};
  for (int i = 0; i < 4; i++) {
    tl_kernel_destroy(all[i]->kernel);
    tl_tune_result_free(all[i]);
  }
  free(ptx);
  tl_tune_space_destroy(s);
}

Test(tune, dry_run_compiles_only) {
  tl_tune_space *s = parse_ok(TUNE_SRC);
  fake f = {0};
  tl_tune_result r;
  tune_once(s, NULL, 0, &f, &r);
  cr_assert_eq(f.calls, 0);
  cr_assert_eq(r.best, -1);
  cr_assert_null(r.kernel);
  cr_assert_eq(r.compiled, 5);
  cr_assert_eq(r.compile_failed, 1);
  cr_assert_eq(r.configs[0].outcome, TL_TUNE_COMPILED);
  cr_assert_str_eq(r.cache_key, "");
  tl_tune_result_free(&r);
  tl_tune_space_destroy(s);
}

Test(tune, load_failures_are_skipped) {
  tl_tune_space *s = parse_ok(TUNE_SRC);
  fake f = {0};
  f.caller = pthread_self();
  tl_compile_options co = {0};
  co.target = "sm_80";
  tl_tune_options o = {.compile = &co, .workers = 2, .measure = fake_measure, .user = &f, .load = true};
  tl_tune_result r;
  cr_assert_eq(tl_kernel_tune(ctx, TUNE_SRC, strlen(TUNE_SRC), "k.py", s, &o, &r), TL_OK);
  cr_assert_eq(f.calls, 0); /* no driver: every load fails, nothing is measured */
  cr_assert_eq(r.compiled, 5);
  cr_assert_eq(r.measure_failed, 5);
  cr_assert_eq(r.compile_failed, 1);
  cr_assert_eq(r.best, -1);
  cr_assert_null(r.kernel);
  cr_assert_eq(r.configs[0].outcome, TL_TUNE_MEASURE_FAILED);
  cr_assert(!strncmp(r.configs[0].message, "load: ", 6), "%s", r.configs[0].message);
  tl_tune_result_free(&r);
  tl_tune_space_destroy(s);
}

Test(tune, space_from_defines_and_bad_arguments) {
  tl_define a[2] = {{"block_M", "16"}, {"threads", "64"}}, b[1] = {{"block_N", "64"}};
  const tl_define *rows[2] = {a, b};
  size_t nk[2] = {2, 1};
  tl_tune_space *s = NULL;
  cr_assert_eq(tl_tune_space_from_defines(rows, nk, 2, &s), TL_OK);
  cr_assert_eq(tl_tune_space_count(s), 2);
  cr_assert_str_eq(tl_tune_space_text(s), "block_M=16 threads=64\nblock_N=64\n");
  cr_assert_str_eq(tl_tune_space_kernel(s), "");
  tl_tune_result r;
  tl_tune_options o = {0};
  cr_assert_eq(tl_kernel_tune(ctx, NULL, 0, "k.py", s, &o, &r), TL_ERR_INVALID_ARGUMENT);
  cr_assert_eq(tl_kernel_tune(ctx, TUNE_SRC, strlen(TUNE_SRC), "k.py", NULL, &o, &r), TL_ERR_INVALID_ARGUMENT);
  tl_tune_space_destroy(s);
  cr_assert_eq(tl_tune_space_from_defines(rows, nk, 0, &s), TL_ERR_INVALID_ARGUMENT);
  cr_assert_null(s);
}

/* nvJitLink (lib/Runtime/jitlink.c), the tuner's parallel PTX compiler: the
 * kernel's sm_90a PTX becomes an ELF cubin without a GPU; PTX the compiler
 * rejects is an error carrying nvJitLink's log.  Skips where the CUDA
 * toolkit's libnvJitLink is absent. */
Test(tune, jitlink_compiles_ptx_to_cubin) {
  if (!tl_rt_jitlink_available()) cr_skip_test("libnvJitLink not found (CUDA toolkit 12/13): skipped");
  const char *src = HEAD BODY;
  tl_compile_options co = {.target = "sm_90a"};
  tl_kernel *k = NULL;
  cr_assert_eq(tl_kernel_compile(ctx, src, strlen(src), "k.py", NULL, 0, &co, &k), TL_OK, "%s",
               tl_context_last_error(ctx));
  void *cubin = NULL;
  size_t size = 0;
  cr_assert_eq(tl_rt_jitlink_compile(ctx, tl_kernel_ptx(k), "main", "sm_90a", &cubin, &size), TL_OK, "%s",
               tl_context_last_error(ctx));
  cr_assert(size > 64 && memcmp(cubin,
                                "\x7f"
                                "ELF",
                                4) == 0,
            "an ELF image (%zu bytes)", size);
  free(cubin);
  const char *bad = ".version 8.0\n.target sm_90a\n.address_size 64\n.visible .entry main() { bogus.op; }\n";
  cr_assert_eq(tl_rt_jitlink_compile(ctx, bad, "main", "sm_90a", &cubin, &size), TL_ERR_CUDA);
  cr_assert_null(cubin);
  cr_assert(strstr(tl_context_last_error(ctx), "nvJitLink (-arch=sm_90a) failed for kernel 'main'"), "%s",
            tl_context_last_error(ctx));
  cr_assert(strstr(tl_context_last_error(ctx), "bogus"), "the log names the bad line: %s", tl_context_last_error(ctx));
  tl_kernel_destroy(k);
}
