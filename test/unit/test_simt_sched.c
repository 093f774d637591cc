/* Unit tests of the SIMT executor's warp scheduler and asynchronous-pipeline
 * model (lib/Interp/simt_sched.c, simt_mbar.c, simt_race.c; issue 11,
 * acceptance 2, CPU side):
 *  1. the three kernels of test/GPU/kernels (mbarrier_ring.py: 1 producer +
 *     2 consumer warps, 3-stage full/empty mbarrier ring filled by
 *     cp.async.bulk, written back with bulk stores; mbarrier_ring_stores.py:
 *     the ring filled by ordinary stores + fence.proxy.async +
 *     arrive.expect_tx / complete_tx; named_barrier.py: bar.sync 1, 64 over
 *     two warps while two others run on) compute B[i] == A[i] * 2 + 1 for
 *     every one of the 8192 elements, under the default schedule and under
 *     20 seeded ones (tl_simt_options.schedule_seed 1..20);
 *  2. planted faults, each reported at its statement's line with the
 *     message naming what is wrong: a missing consumer arrive (deadlock
 *     naming the mbarrier, its phase and the blocked warps at their lines), a
 *     missing wait and a read of bulk-copied data before the wait (race at
 *     the reading statement), a bulk store of ordinary stores without
 *     fence.proxy.async (proxy error), a bulk store's source overwritten
 *     with no bulk wait_group (error at the overwriting store), an arrive before the stores it should
 *     release (race), a missing bar.sync 1, 64 (race), bar.sync 1 with a
 *     count no warp set completes (deadlock naming barrier 1), and an
 *     mbarrier used without the T.sync_threads() after its init;
 *  3. an existing example kernel (examples/gemm.py lowered) gives identical
 *     output under the deterministic lockstep schedule and seeded per-warp
 *     schedules;
 *  4. small inline kernels: bar.arrive by one warp + bar.sync by another
 *     (right values under 21 schedules; without the bar.sync an
 *     uninitialised read by default and a race under some seed), and the
 *     mbarrier / named-barrier / bulk-copy protocol errors (an arrival with
 *     none pending, init twice, a wait on no mbarrier, a non-uint64
 *     mbarrier, bar.sync by a partial warp, a bulk size not a multiple of
 *     16), and a warp-uniform barrier id (1 + warp) with its race and
 *     lane-dependent-id variants. */
#include <criterion/criterion.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "IR/tir.h"
#include "Interp/interp.h"
#include "Lower/lower.h"
#include "test_util.h"

#define N 8192

/* 1-based line of the first line of s containing `what`. */
static int line_of(const char *s, const char *what) {
  const char *p = strstr(s, what);
  cr_assert(p, "'%s' not found in the kernel", what);
  int line = 1;
  for (const char *q = s; q < p; q++) line += *q == '\n';
  return line;
}

static tl_module *parse(const char *src, const char *name) {
  tl_module *m = tl_module_new();
  tl_diag d;
  tl_diag_init(&d);
  bool ok = tl_frontend_parse(m, &d, src, strlen(src), name, NULL, 0);
  cr_assert(ok, "%s: %s", name, d.out.data ? d.out.data : "");
  tl_diag_free(&d);
  return m;
}

static void make_input(float *A) {
  uint64_t s = 12345;
  for (int i = 0; i < N; i++) {
    s ^= s << 13;
    s ^= s >> 7;
    s ^= s << 17;
    A[i] = (float)((double)(s >> 11) / 9007199254740992.0 * 200.0 - 100.0);
  }
}

/* Runs src on A -> B with the schedule seed; returns success, diagnostics in *out (caller frees). */
static bool run(const char *src, const char *name, uint64_t seed, float *A, float *B, char **out, tl_loc *first) {
  tl_module *m = parse(src, name);
  for (int i = 0; i < N; i++) B[i] = -12345.0f;
  tl_interp_arg args[2];
  memset(args, 0, sizeof args);
  args[0].is_tensor = args[1].is_tensor = true;
  args[0].data = A;
  args[1].data = B;
  args[0].ndim = args[1].ndim = 1;
  args[0].shape[0] = args[1].shape[0] = N;
  tl_simt_options o = {.check_races = true, .schedule_seed = seed};
  tl_diag d;
  tl_diag_init(&d);
  bool ok = tl_simt_exec(m, 0, args, 2, NULL, 0, &o, &d);
  *out = strdup(d.out.data ? d.out.data : "");
  if (first) *first = d.first_error;
  tl_diag_free(&d);
  tl_module_destroy(m);
  return ok;
}

static void kernel_case(const char *file) {
  char path[256];
  snprintf(path, sizeof path, "test/GPU/kernels/%s", file);
  char *src = tl_test_read_file(path, NULL);
  float *A = malloc(sizeof(float) * N), *B = malloc(sizeof(float) * N);
  make_input(A);
  for (uint64_t seed = 0; seed <= 20; seed++) {
    char *diag;
    bool ok = run(src, file, seed, A, B, &diag, NULL);
    cr_assert(ok, "%s, schedule seed %llu: %s", file, (unsigned long long)seed, diag);
    for (int i = 0; i < N; i++) {
      float want = A[i] * 2.0f + 1.0f;
      cr_assert(B[i] == want, "%s, schedule seed %llu: B[%d] = %.9g, want %.9g", file, (unsigned long long)seed, i,
                (double)B[i], (double)want);
    }
    free(diag);
  }
  free(A);
  free(B);
  free(src);
}

Test(simt_sched, mbarrier_ring) { kernel_case("mbarrier_ring.py"); }
Test(simt_sched, mbarrier_ring_stores) { kernel_case("mbarrier_ring_stores.py"); }
Test(simt_sched, named_barrier) { kernel_case("named_barrier.py"); }

/* Kernel `file` with `from` replaced by `to` fails under the default
 * schedule with every string of msgs in the diagnostics, the first error at
 * the line of the (modified) kernel that contains `at`; under seeds 1..5 it
 * fails too. */
static void fault_case(const char *file, const char *from, const char *to, const char *at, const char *const *msgs) {
  char path[256];
  snprintf(path, sizeof path, "test/GPU/kernels/%s", file);
  char *orig = tl_test_read_file(path, NULL);
  char *src = tl_test_replace_first(orig, from, to);
  int line = line_of(src, at);
  float *A = malloc(sizeof(float) * N), *B = malloc(sizeof(float) * N);
  make_input(A);
  char *diag;
  tl_loc first;
  bool ok = run(src, file, 0, A, B, &diag, &first);
  cr_assert(!ok, "%s: expected a failure:\n%s", file, diag);
  for (int i = 0; msgs[i]; i++) cr_assert(strstr(diag, msgs[i]), "diagnostics lack '%s':\n%s", msgs[i], diag);
  cr_assert_eq(first.line, line, "error at line %d, expected %d:\n%s", first.line, line, diag);
  free(diag);
  for (uint64_t seed = 1; seed <= 5; seed++) {
    ok = run(src, file, seed, A, B, &diag, NULL);
    cr_assert(!ok, "%s, schedule seed %llu: expected a failure", file, (unsigned long long)seed);
    free(diag);
  }
  free(A);
  free(B);
  free(src);
  free(orig);
}

Test(simt_sched, missing_arrive_deadlocks) {
  const char *msgs[] = {
      "deadlock: every warp of the block is blocked",
      "warp 0 (threads 0-31) at mbarrier_ring.py:",
      "waits on mbarrier 'bars'[3] (shared byte offset",
      "for the phase of parity 0 to complete (phase 0 in progress, parity 0: 64 of 64 arrivals pending",
      "warp 1 (threads 32-63) at mbarrier_ring.py:",
      "waits on mbarrier 'bars'[0]",
      "warp 2 (threads 64-95)",
      NULL};
  fault_case("mbarrier_ring.py", "                T.ptx_mbarrier_arrive(bars, 3 + i % 3)\n", "",
             "T.ptx_mbarrier_wait(bars, 3 + i % 3", msgs);
}

Test(simt_sched, missing_wait_races) {
  const char *msgs[] = {
      "data race on shared memory: thread 32 reads 'A_s'[0], written by the T.ptx_cp_async_bulk "
      "of thread 0 before a wait observed its mbarrier 'bars'[0] complete phase 0",
      NULL};
  fault_case("mbarrier_ring.py", "                T.ptx_mbarrier_wait(bars, i % 3, i // 3 % 2)\n", "",
             "O_s[c * 128 + j * 32 + lane] = A_s", msgs);
}

Test(simt_sched, read_before_wait_races) {
  const char *msgs[] = {"data race on shared memory: thread 32 reads 'A_s'[0], written by the T.ptx_cp_async_bulk",
                        NULL};
  fault_case("mbarrier_ring.py",
             "                T.ptx_mbarrier_wait(bars, i % 3, i // 3 % 2)\n"
             "                for j in T.unroll(4):\n"
             "                    O_s[c * 128 + j * 32 + lane] = A_s[i % 3 * 256 + c * 128 + j * 32 + lane] * "
             "T.float32(2) + T.float32(1)\n",
             "                x = A_s[i % 3 * 256 + c * 128 + lane]\n"
             "                T.ptx_mbarrier_wait(bars, i % 3, i // 3 % 2)\n"
             "                for j in T.unroll(4):\n"
             "                    O_s[c * 128 + j * 32 + lane] = A_s[i % 3 * 256 + c * 128 + j * 32 + lane] * "
             "x * T.float32(0) + T.float32(2) * A_s[i % 3 * 256 + c * 128 + j * 32 + lane] + T.float32(1)\n",
             "x = A_s[", msgs);
}

Test(simt_sched, bulk_store_without_proxy_fence) {
  const char *msgs[] = {
      "proxy ordering: T.ptx_cp_async_bulk_store of thread 32 reads 'O_s'[0] through the async "
      "proxy, but thread 32 wrote it with an ordinary store and executed no "
      "T.ptx_fence_proxy_async() after that store",
      NULL};
  fault_case("mbarrier_ring.py", "                T.ptx_fence_proxy_async()\n", "", "T.ptx_cp_async_bulk_store(", msgs);
}

Test(simt_sched, bulk_store_source_overwritten_before_wait) {
  const char *msgs[] = {
      "thread 32 writes 'O_s'[0] while the T.ptx_cp_async_bulk_store of thread 32 (bulk group 0) "
      "may still read it: no T.ptx_bulk_wait_group of that thread covers the group",
      NULL};
  fault_case("mbarrier_ring.py", "                    T.ptx_bulk_wait_group(0)\n", "",
             "O_s[c * 128 + j * 32 + lane] = A_s", msgs);
}

Test(simt_sched, arrive_before_stores_races) {
  const char *msgs[] = {"data race on shared memory: thread 32 reads 'A_s'[0], written by thread 0", NULL};
  fault_case("mbarrier_ring_stores.py",
             "                for j in T.unroll(8):\n"
             "                    A_s[i % 3 * 256 + j * 32 + lane] = A[bx * 4096 + i * 256 + j * 32 + lane]\n"
             "                T.ptx_fence_proxy_async()\n"
             "                T.ptx_mbarrier_arrive_expect_tx(bars, i % 3, 32)\n",
             "                T.ptx_mbarrier_arrive_expect_tx(bars, i % 3, 32)\n"
             "                for j in T.unroll(8):\n"
             "                    A_s[i % 3 * 256 + j * 32 + lane] = A[bx * 4096 + i * 256 + j * 32 + lane]\n"
             "                T.ptx_fence_proxy_async()\n",
             "B[bx * 4096 + i * 256 + c * 128", msgs);
}

Test(simt_sched, missing_named_barrier_races) {
  const char *msgs[] = {"data race on shared memory: thread 32 reads 'S'[0], written by thread 0", NULL};
  fault_case("named_barrier.py",
             "                T.ptx_bar_sync(1, 64)\n        else:", "        else:", "S[(1 - warp) * 128", msgs);
}

Test(simt_sched, named_barrier_count_deadlocks) {
  const char *msgs[] = {"deadlock", "waits on barrier 1 (96 threads, 64 arrived)", "warp 2 (threads 64-95) has exited",
                        "warp 3 (threads 96-127) has exited", NULL};
  fault_case("named_barrier.py", "T.ptx_bar_sync(1, 64)", "T.ptx_bar_sync(1, 96)", "T.ptx_bar_sync(1, 96)", msgs);
}

Test(simt_sched, mbarrier_init_needs_sync) {
  const char *msgs[] = {
      "T.ptx_mbarrier_wait: thread 32 uses mbarrier 'bars'[0] before its initialisation by "
      "thread 0 is visible (a T.sync_threads() after T.ptx_mbarrier_init is missing)",
      NULL};
  fault_case("mbarrier_ring.py", "        T.sync_threads()\n", "", "T.ptx_mbarrier_wait(bars, i % 3", msgs);
}

/* An existing lowered example: the seeded per-warp schedules give exactly the lockstep result. */
Test(simt_sched, gemm_example_under_seeds) {
  char *src = tl_test_read_file("examples/gemm.py", NULL);
  tl_define defs[] = {{"M", "64"}, {"N", "64"}, {"K", "64"}};
  tl_module *m = tl_module_new();
  tl_diag d;
  tl_diag_init(&d);
  bool ok = tl_frontend_parse(m, &d, src, strlen(src), "gemm.py", defs, 3);
  tl_lower_options lo = {.target = tl_target_lookup("sm_80"), .verify_each = true};
  ok = ok && tl_lower_module(m, &lo, &d);
  cr_assert(ok, "%s", d.out.data ? d.out.data : "");
  tl_diag_free(&d);
  uint16_t A[64 * 64], B[64 * 64], C0[64 * 64], C[64 * 64];
  for (int i = 0; i < 64 * 64; i++) {
    A[i] = (uint16_t)(0x3C00 + (i * 37) % 512); /* f16 in [1, 2) */
    B[i] = (uint16_t)(0xBC00 + (i * 11) % 256);
  }
  for (uint64_t seed = 0; seed <= 3; seed++) {
    tl_interp_arg args[3];
    memset(args, 0, sizeof args);
    uint16_t *bufs[3] = {A, B, seed ? C : C0};
    for (int k = 0; k < 3; k++) {
      args[k].is_tensor = true;
      args[k].data = bufs[k];
      args[k].ndim = 2;
      args[k].shape[0] = args[k].shape[1] = 64;
    }
    tl_simt_options o = {.check_races = true, .schedule_seed = seed};
    tl_diag_init(&d);
    ok = tl_simt_exec(m, 0, args, 3, NULL, 0, &o, &d);
    cr_assert(ok, "seed %llu: %s", (unsigned long long)seed, d.out.data ? d.out.data : "");
    tl_diag_free(&d);
    if (seed)
      cr_assert(!memcmp(C, C0, sizeof C), "seed %llu: C differs from the lockstep run", (unsigned long long)seed);
  }
  tl_module_destroy(m);
  free(src);
}

/* ------------------------------------------------ small inline kernels */
#define SMALL_HEAD                                                                                                     \
  "import tilelang.language as T\n"                                                                                    \
  "@T.prim_func\n"                                                                                                     \
  "def main(A: T.Tensor((8192,), \"float32\"), B: T.Tensor((8192,), \"float32\")):\n"                                  \
  "    with T.Kernel(1, threads=64) as bx:\n"                                                                          \
  "        S = T.alloc_shared((64,), \"float32\")\n"                                                                   \
  "        bars = T.alloc_shared((2,), \"uint64\")\n"                                                                  \
  "        tx = T.get_thread_binding(0)\n"

static void expect_small_fault(const char *src, int line, const char *msg) {
  float *A = malloc(sizeof(float) * N), *B = malloc(sizeof(float) * N);
  make_input(A);
  char *diag;
  tl_loc first;
  cr_assert(!run(src, "small.py", 0, A, B, &diag, &first), "expected a failure with '%s'", msg);
  cr_assert(strstr(diag, msg), "diagnostics lack '%s':\n%s", msg, diag);
  cr_assert_eq(first.line, line, "error at line %d, expected %d:\n%s", first.line, line, diag);
  free(diag);
  free(A);
  free(B);
}

/* bar.arrive by the producing warp, bar.sync by the consuming one: B[0..31] = 2 A[32..63] + 1. */
static const char *arrive_src = SMALL_HEAD
    "        if T.get_thread_binding(0) >= 32:\n"
    "            S[tx] = A[tx]\n"
    "            T.ptx_bar_arrive(1, 64)\n"
    "        else:\n"
    "            T.ptx_bar_sync(1, 64)\n"
    "            B[tx] = S[tx + 32] * T.float32(2) + T.float32(1)\n";

Test(simt_sched, bar_arrive_then_sync) {
  float *A = malloc(sizeof(float) * N), *B = malloc(sizeof(float) * N);
  make_input(A);
  for (uint64_t seed = 0; seed <= 20; seed++) {
    char *diag;
    cr_assert(run(arrive_src, "arrive.py", seed, A, B, &diag, NULL), "seed %llu: %s", (unsigned long long)seed, diag);
    for (int i = 0; i < 32; i++)
      cr_assert(B[i] == A[i + 32] * 2.0f + 1.0f, "seed %llu: B[%d]", (unsigned long long)seed, i);
    cr_assert(B[32] == -12345.0f);
    free(diag);
  }
  free(A);
  free(B);
  /* without the consumer's bar.sync: under the default schedule warp 0 reads first (nothing wrote the
     bytes yet); under the seeds where warp 1 stores first, the read is a race */
  char *bad = tl_test_replace_first(arrive_src, "            T.ptx_bar_sync(1, 64)\n", "");
  expect_small_fault(bad, 12, "read of uninitialised shared memory: thread 0 reads 'S'[32], which nothing wrote");
  int races = 0;
  A = malloc(sizeof(float) * N);
  B = malloc(sizeof(float) * N);
  make_input(A);
  for (uint64_t seed = 1; seed <= 20; seed++) {
    char *diag;
    cr_assert(!run(bad, "bad.py", seed, A, B, &diag, NULL), "seed %llu: expected a failure", (unsigned long long)seed);
    races += strstr(diag, "data race on shared memory: thread 0 reads 'S'[32], written by thread 32") != NULL;
    free(diag);
  }
  cr_assert(races > 0, "no seed ran warp 1 first");
  free(A);
  free(B);
  free(bad);
}

Test(simt_sched, mbarrier_protocol_errors) {
  /* more arrivals in a phase than its count (the phase waits for its tx-count) */
  expect_small_fault(SMALL_HEAD
                     "        if T.get_thread_binding(0) == 0:\n"
                     "            T.ptx_mbarrier_init(bars, 0, 1)\n"
                     "        T.sync_threads()\n"
                     "        if T.get_thread_binding(0) < 2:\n"
                     "            T.ptx_mbarrier_arrive_expect_tx(bars, 0, 16)\n",
                     12, "mbarrier 'bars'[0]: thread 1 arrives, but no arrival of phase 0 is pending (count 1)");
  /* init twice */
  expect_small_fault(SMALL_HEAD
                     "        if T.get_thread_binding(0) == 0:\n"
                     "            T.ptx_mbarrier_init(bars, 1, 1)\n"
                     "            T.ptx_mbarrier_init(bars, 1, 2)\n",
                     10, "mbarrier 'bars'[1] is initialised a second time in this block");
  /* not an mbarrier */
  expect_small_fault(SMALL_HEAD "        T.ptx_mbarrier_wait(bars, 1, 0)\n", 8,
                     "T.ptx_mbarrier_wait: 'bars'[1] is not an initialised mbarrier (T.ptx_mbarrier_init)");
  /* an mbarrier must be a uint64 element */
  expect_small_fault(SMALL_HEAD "        T.ptx_mbarrier_init(S, 0, 1)\n", 8,
                     "mbarrier buffer 'S' must have dtype uint64, not float32");
  /* a named barrier by part of a warp */
  expect_small_fault(SMALL_HEAD
                     "        if T.get_thread_binding(0) < 16:\n"
                     "            T.ptx_bar_sync(1, 32)\n",
                     9, "bar.sync/bar.arrive executed by a partial warp: 16 of 32 lanes of warp 0 are active");
  /* a bulk copy of a size that is not a multiple of 16 */
  expect_small_fault(SMALL_HEAD
                     "        if T.get_thread_binding(0) == 0:\n"
                     "            T.ptx_mbarrier_init(bars, 0, 1)\n"
                     "            T.ptx_cp_async_bulk(S, 0, A, 0, 8, bars, 0)\n",
                     10, "T.ptx_cp_async_bulk: the byte count must be a positive multiple of 16, not 8");
  /* an element offset of 2^62 (x 4 bytes: past int64) is out of bounds, not wrapped to byte 0 (issue 15's
     fuzzer: k * -2^63 in a pipelined copy's index; UBSan's signed overflow before) */
  expect_small_fault(SMALL_HEAD
                     "        if T.get_thread_binding(0) == 0:\n"
                     "            T.ptx_mbarrier_init(bars, 0, 1)\n"
                     "            T.ptx_cp_async_bulk(S, 0, A, T.int64(4611686018427387904), 16, bars, 0)\n",
                     10,
                     "T.ptx_cp_async_bulk: out-of-bounds copy from global buffer 'A': 16 bytes at element "
                     "4611686018427387904 of ");
}

/* A warp-uniform barrier id (1 + warp): each warp meets its own lanes; the neighbour lane's value is read
   after the barrier.  Without it the read races; a lane-dependent id is an error. */
static const char *warp_bar_src = SMALL_HEAD
    "        S[tx] = A[tx]\n"
    "        T.ptx_bar_sync(1 + tx // 32, 32)\n"
    "        B[tx] = S[tx ^ 1] * T.float32(2) + T.float32(1)\n";

Test(simt_sched, warp_uniform_barrier_id) {
  float *A = malloc(sizeof(float) * N), *B = malloc(sizeof(float) * N);
  make_input(A);
  for (uint64_t seed = 0; seed <= 20; seed++) {
    char *diag;
    cr_assert(run(warp_bar_src, "warpbar.py", seed, A, B, &diag, NULL), "seed %llu: %s", (unsigned long long)seed,
              diag);
    for (int i = 0; i < 64; i++)
      cr_assert(B[i] == A[i ^ 1] * 2.0f + 1.0f, "seed %llu: B[%d]", (unsigned long long)seed, i);
    free(diag);
  }
  free(A);
  free(B);
  char *bad = tl_test_replace_first(warp_bar_src, "        T.ptx_bar_sync(1 + tx // 32, 32)\n", "");
  expect_small_fault(bad, 9, "data race on shared memory: thread 0 reads 'S'[1], written by thread 1 with no");
  free(bad);
  bad = tl_test_replace_first(warp_bar_src, "1 + tx // 32", "1 + tx % 2");
  expect_small_fault(bad, 9, "T.ptx_bar_sync: argument 1 differs between the lanes of warp 0 (1 and 2)");
  free(bad);
}
