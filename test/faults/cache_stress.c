/* The kernel cache under crashes and concurrency (issue 33): P processes x T
 * threads (default 8 x 4) compile the same and different kernels (six
 * bindings of examples/elementwise_add.py, picked at random per compile; one
 * compile in four refreshes its entry, so that stores are frequent) into one
 * fresh TL_CACHE_DIR for S seconds (default 60) while the parent SIGKILLs a
 * random process every 20-200 ms (and starts a new one), so that processes
 * die anywhere: mid-compile, mid-store, mid-load.  Meanwhile the parent
 * damages a random entry in place every 250 ms (a byte flipped in the
 * payload, or the file truncated: what a crash of the machine between the
 * rename and the write-back could leave; a killed process cannot, the store
 * renames a complete temporary file).
 *
 * Every compile must succeed with PTX byte-identical to the cache-off
 * compile of its variant (a damaged entry served would differ: 0
 * mismatches); damaged entries must be seen as corrupt, replaced and warned
 * about.  At the end, with all processes gone, each variant compiles from
 * the cache (a hit, or one corrupt entry replaced and then a hit) with
 * identical PTX.  Prints
 *   cache stress: P processes x T threads, S s: N compiles (H hits, M misses,
 *   C corrupt entries replaced), K processes killed, D entries damaged,
 *   0 mismatches, 0 failures; F temporary files left by killed writers
 * and exits 0 when every check held.  Usage: cache_stress [SECONDS [PROCS
 * [THREADS]]] from the repository root. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "tilelang/runtime.h"

/* the kernel: examples/elementwise_add.py, six bindings of N and dtype */
#define KERNEL_FILE "examples/elementwise_add.py"

enum { NVAR = 6, MAXP = 64 };
static const char *const k_n[NVAR] = {"256", "256", "384", "384", "512", "512"};
static const char *const k_dtype[NVAR] = {"\"float32\"", "\"float16\"", "\"float32\"",
                                          "\"float16\"", "\"float32\"", "\"float16\""};
static char *g_ref[NVAR]; /* cache-off PTX of each variant (inherited by the children) */

typedef struct shared {
  unsigned long long compiles, hits, misses, corrupt, mismatches, failures;
  char first_problem[512];
} shared;
static shared *g_sh;

static tl_status compile_variant(tl_context *ctx, int v, tl_cache_use use, tl_kernel **k) {
  tl_define d[3] = {{"M", "64"}, {"N", k_n[v]}, {"dtype", k_dtype[v]}};
  tl_compile_options o = {0};
  o.target = "sm_80";
  o.cache = use;
  return tl_kernel_compile_file(ctx, KERNEL_FILE, d, 3, &o, k);
}

static void problem(const char *fmt, const char *a, int v) {
  char buf[512];
  snprintf(buf, sizeof buf, fmt, a, v);
  if (!__atomic_load_n(&g_sh->first_problem[0], __ATOMIC_RELAXED))
    snprintf(g_sh->first_problem, sizeof g_sh->first_problem, "%s", buf);
}

/* One compile through the cache, checked against the reference. */
static int check_one(tl_context *ctx, int v, tl_cache_use use) {
  tl_kernel *k = NULL;
  tl_status st = compile_variant(ctx, v, use, &k);
  __atomic_fetch_add(&g_sh->compiles, 1, __ATOMIC_RELAXED);
  if (st != TL_OK) {
    __atomic_fetch_add(&g_sh->failures, 1, __ATOMIC_RELAXED);
    problem("compile failed: %s (variant %d)", tl_context_last_error(ctx), v);
    return -1;
  }
  int r = tl_kernel_cache_result(k);
  __atomic_fetch_add(r == TL_CACHE_RESULT_HIT       ? &g_sh->hits
                     : r == TL_CACHE_RESULT_CORRUPT ? &g_sh->corrupt
                                                    : &g_sh->misses,
                     1, __ATOMIC_RELAXED);
  if (r == TL_CACHE_RESULT_CORRUPT && !strstr(tl_context_warnings(ctx), "kernel cache entry")) {
    __atomic_fetch_add(&g_sh->failures, 1, __ATOMIC_RELAXED);
    problem("a corrupt entry without a warning: %s (variant %d)", tl_context_warnings(ctx), v);
  }
  if (r != TL_CACHE_RESULT_CORRUPT && tl_context_warnings(ctx)[0]) {
    __atomic_fetch_add(&g_sh->failures, 1, __ATOMIC_RELAXED);
    problem("an unexpected warning: %s (variant %d)", tl_context_warnings(ctx), v);
  }
  if (strcmp(tl_kernel_ptx(k), g_ref[v]) != 0) {
    __atomic_fetch_add(&g_sh->mismatches, 1, __ATOMIC_RELAXED);
    problem("PTX differs from the cache-off compile (%s, variant %d)", r == TL_CACHE_RESULT_HIT ? "a hit" : "a compile",
            v);
  }
  tl_kernel_destroy(k);
  return r;
}

static void *worker(void *arg) {
  unsigned seed = (unsigned)(uintptr_t)arg;
  tl_context *ctx = NULL;
  if (tl_context_create(&ctx) != TL_OK) _exit(3);
  for (;;) { /* until SIGKILL; one compile in four stores over its entry (more stores for the kills to hit) */
    unsigned r = (unsigned)rand_r(&seed);
    check_one(ctx, (int)(r % NVAR), r / NVAR % 4 ? TL_CACHE_USE_DEFAULT : TL_CACHE_USE_REFRESH);
  }
  return NULL;
}

static pid_t spawn(int threads, unsigned seed) {
  pid_t pid = fork();
  if (pid != 0) return pid;
  if (nice(5) < 0) {} /* the parent's kills stay on time */
  pthread_t t[64];
  for (int i = 0; i < threads && i < 64; i++)
    pthread_create(&t[i], NULL, worker, (void *)(uintptr_t)(seed * 131u + (unsigned)i));
  for (;;) pause();
}

static double now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

/* Damages a random entry of dir in place: a payload byte flipped or the file truncated. */
static bool damage_one(const char *dir, unsigned *seed) {
  DIR *d = opendir(dir);
  char names[256][64];
  int n = 0;
  struct dirent *de;
  while (d && (de = readdir(d)) && n < 256) {
    size_t l = strlen(de->d_name);
    if (l > 4 && !strcmp(de->d_name + l - 4, ".tlk") && l < 64) memcpy(names[n++], de->d_name, l + 1);
  }
  if (d) closedir(d);
  if (!n) return false;
  char path[512];
  snprintf(path, sizeof path, "%s/%s", dir, names[rand_r(seed) % (unsigned)n]);
  struct stat sb;
  int fd = open(path, O_RDWR);
  bool ok = fd >= 0 && fstat(fd, &sb) == 0 && sb.st_size > 64;
  if (ok && rand_r(seed) % 2) {
    off_t at = 48 + (off_t)(rand_r(seed) % (unsigned)(sb.st_size - 48));
    unsigned char c;
    ok = pread(fd, &c, 1, at) == 1;
    c ^= 0x20;
    ok = ok && pwrite(fd, &c, 1, at) == 1;
  } else if (ok) {
    ok = ftruncate(fd, (off_t)(rand_r(seed) % (unsigned)sb.st_size)) == 0;
  }
  if (fd >= 0) close(fd);
  return ok;
}

static int remove_one(const char *path, const struct stat *sb, int flag, struct FTW *f) {
  (void)sb, (void)flag, (void)f;
  remove(path); /* best effort: a temporary directory */
  return 0;
}

static int count_tmp(const char *dir) {
  DIR *d = opendir(dir);
  int n = 0;
  struct dirent *de;
  while (d && (de = readdir(d)))
    if (strstr(de->d_name, ".tmp.")) n++;
  if (d) closedir(d);
  return n;
}

int main(int argc, char **argv) {
  double seconds = argc > 1 ? atof(argv[1]) : 60;
  int procs = argc > 2 ? atoi(argv[2]) : 8, threads = argc > 3 ? atoi(argv[3]) : 4;
  if (procs < 1 || procs > MAXP || threads < 1 || threads > 64 || !(seconds > 0)) {
    fprintf(stderr, "usage: cache_stress [SECONDS [PROCS(1-64) [THREADS(1-64)]]]\n");
    return 2;
  }
  char dir[] = "/tmp/tl-cache-stress-XXXXXX";
  if (!mkdtemp(dir)) return 2;
  setenv("TL_CACHE_DIR", dir, 1);
  unsetenv("TL_CACHE");
  setenv("TL_CUDA_DRIVER", "/nonexistent/libcuda.so.1", 1); /* compiles only */
  g_sh = mmap(NULL, sizeof *g_sh, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  if (g_sh == MAP_FAILED) return 2;
  memset(g_sh, 0, sizeof *g_sh);
  tl_context *ctx = NULL;
  if (tl_context_create(&ctx) != TL_OK) return 2;
  for (int v = 0; v < NVAR; v++) {
    tl_kernel *k = NULL;
    if (compile_variant(ctx, v, TL_CACHE_USE_OFF, &k) != TL_OK) {
      fprintf(stderr, "cache_stress: variant %d: %s\n", v, tl_context_last_error(ctx));
      return 2;
    }
    g_ref[v] = strdup(tl_kernel_ptx(k));
    for (int w = 0; w < v; w++)
      if (!strcmp(g_ref[w], g_ref[v])) fprintf(stderr, "cache_stress: variants %d and %d give one PTX\n", w, v);
    tl_kernel_destroy(k);
  }
  unsigned seed = 12345;
  pid_t pid[MAXP];
  for (int p = 0; p < procs; p++) pid[p] = spawn(threads, (unsigned)p + 1);
  unsigned long long kills = 0, damaged = 0, spawned = (unsigned long long)procs;
  double end = now() + seconds, next_damage = now() + 0.25;
  while (now() < end) {
    usleep(20000 + rand_r(&seed) % 180000);
    int p = (int)(rand_r(&seed) % (unsigned)procs);
    kill(pid[p], SIGKILL);
    int status = 0;
    waitpid(pid[p], &status, 0);
    if (!(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL)) {
      __atomic_fetch_add(&g_sh->failures, 1, __ATOMIC_RELAXED);
      problem("a worker process ended by itself (status %s%d)", "", status);
    }
    kills++;
    pid[p] = spawn(threads, (unsigned)(++spawned));
    if (now() >= next_damage) {
      damaged += damage_one(dir, &seed);
      next_damage = now() + 0.25;
    }
  }
  for (int p = 0; p < procs; p++) {
    kill(pid[p], SIGKILL);
    waitpid(pid[p], NULL, 0);
  }
  /* after the storm: every variant from the cache, identical */
  int final_bad = 0;
  for (int v = 0; v < NVAR; v++) {
    int r = check_one(ctx, v, TL_CACHE_USE_DEFAULT);
    if (r == TL_CACHE_RESULT_CORRUPT || r == TL_CACHE_RESULT_MISS) r = check_one(ctx, v, TL_CACHE_USE_DEFAULT);
    if (r != TL_CACHE_RESULT_HIT) {
      final_bad++;
      fprintf(stderr, "cache_stress: variant %d is not a hit after it was stored (result %d)\n", v, r);
    }
  }
  int tmp = count_tmp(dir);
  printf(
      "cache stress: %d processes x %d threads, %.0f s: %llu compiles (%llu hits, %llu misses, %llu corrupt "
      "entries replaced), %llu processes killed, %llu entries damaged, %llu mismatches, %llu failures; %d "
      "temporary files left by killed writers\n",
      procs, threads, seconds, g_sh->compiles, g_sh->hits, g_sh->misses, g_sh->corrupt, kills, damaged,
      g_sh->mismatches, g_sh->failures, tmp);
  if (g_sh->first_problem[0]) printf("first problem: %s\n", g_sh->first_problem);
  bool ok = !g_sh->mismatches && !g_sh->failures && !final_bad && g_sh->hits > 0 && kills > 0 &&
            (damaged == 0 || g_sh->corrupt > 0);
  nftw(dir, remove_one, 8, FTW_DEPTH | FTW_PHYS); /* the directory and what is left in it */
  for (int v = 0; v < NVAR; v++) free(g_ref[v]);
  tl_context_destroy(ctx);
  munmap(g_sh, sizeof *g_sh);
  return ok ? 0 : 1;
}
