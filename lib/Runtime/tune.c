/* The autotuner (include/tilelang/runtime.h tl_kernel_tune): compile every
 * configuration of a tune space in parallel, check and time each on the
 * calling thread as it arrives, keep the fastest, and remember it on disk.
 *
 * Algorithm.  A pool of W worker threads (W = opts->workers, else the
 * online CPUs, at most the number of configs) takes config indices in
 * order from a shared counter; each worker has its own tl_context and
 * compiles with the caller's compile options and the bindings
 * opts->defines followed by the config's (the last binding of a name
 * wins), then appends the index to a completion queue (mutex + condition
 * variable).  The calling thread pops indices in completion order and runs
 * opts->measure on each compiled kernel (GPU work stays on one thread);
 * it keeps the fastest kernel and destroys the others at once.  Failures
 * (compile, load, launch, check) are recorded and skipped.  The progress
 * line (stderr) is redrawn after every event on a terminal, else printed at
 * most once a second and at the end; the time left is the larger of the
 * compile backlog (configs left × mean compile time / W) and the timing
 * backlog (configs left to time × mean measure time).
 * Tune cache: key = tl_cache_key_of (cache.h) over a tagged text of
 * everything listed in runtime.h; value = a small text file
 * "<key>.tlt" in the kernel cache's directory naming the winner's index,
 * time and config line (the line is compared on load, so a stale or
 * foreign entry is a miss).  No function-static mutable state. */
#include <inttypes.h>
#include <math.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "Runtime/cache.h"
#include "Runtime/driver.h"
#include "Runtime/kernel.h"
#include "Support/context.h"
#include "tilelang/ir.h"
#include "tilelang/runtime.h"

#define DEFAULT_WARMUP 25
#define DEFAULT_REP 100

static double now_ms(clockid_t c) {
  struct timespec ts;
  clock_gettime(c, &ts);
  return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec * 1e-6;
}

/* The shared state of one tune. */
typedef struct pool {
  const char *source;
  size_t len;
  const char *filename;
  const tl_tune_space *space;
  const tl_tune_options *opts;
  tl_tune_result *res;
  tl_kernel **kernels; /* per config, compiled and not yet measured */
  pthread_mutex_t mu;
  pthread_cond_t cv;
  size_t next;  /* next config to compile */
  size_t *done; /* completion queue of config indices */
  size_t ndone;
  double first_start, last_end;
  double compile_ms_sum; /* wall-clock compile times of the configs taken so far */
  bool use_jitlink;      /* loads compile PTX with nvJitLink first (jitlink.c) */
} pool;

/* The bindings of config i after opts->defines into a malloc'd array (*n). */
static tl_define *config_defines(const tl_tune_options *o, const tl_tune_space *s, size_t i, size_t *n) {
  size_t nc = 0;
  const tl_define *c = tl_tune_space_config(s, i, &nc);
  tl_define *d = calloc(o->ndefines + nc + 1, sizeof *d);
  if (!d) return NULL;
  if (o->ndefines) memcpy(d, o->defines, o->ndefines * sizeof *d);
  if (nc) memcpy(d + o->ndefines, c, nc * sizeof *d);
  *n = o->ndefines + nc;
  return d;
}

/* The first line of msg, malloc'd. */
/* The first line of msg that is an error diagnostic (": error: "), else its
 * first line: a compile's text may start with warnings before the error
 * that made it fail. */
static char *first_line(const char *msg) {
  for (const char *l = msg; l && *l;) {
    const char *nl = strchr(l, '\n');
    const char *err = strstr(l, ": error: ");
    if (err && (!nl || err < nl)) {
      msg = l;
      break;
    }
    l = nl ? nl + 1 : NULL;
  }
  const char *nl = strchr(msg, '\n');
  size_t n = nl ? (size_t)(nl - msg) : strlen(msg);
  char *s = malloc(n + 1);
  if (s) {
    memcpy(s, msg, n);
    s[n] = 0;
  }
  return s;
}

/* Compiles config i with ctx into p->kernels[i] or a failure message. */
static void compile_one(pool *p, tl_context *ctx, size_t i) {
  tl_tune_config_result *r = &p->res->configs[i];
  size_t nd = 0;
  tl_define *d = config_defines(p->opts, p->space, i, &nd);
  double t0 = now_ms(CLOCK_MONOTONIC), c0 = now_ms(CLOCK_THREAD_CPUTIME_ID);
  tl_kernel *k = NULL;
  tl_status s =
      d ? tl_kernel_compile(ctx, p->source, p->len, p->filename, d, nd, p->opts->compile, &k) : TL_ERR_NO_MEMORY;
  double t1 = now_ms(CLOCK_MONOTONIC);
  free(d);
  r->compile_ms = t1 - t0;
  r->compile_cpu_ms = now_ms(CLOCK_THREAD_CPUTIME_ID) - c0;
  if (s != TL_OK) {
    r->outcome = TL_TUNE_COMPILE_FAILED;
    const char *e = ctx ? tl_context_last_error(ctx) : "";
    r->message = first_line(*e ? e : tl_status_name(s));
    tl_kernel_destroy(k);
    k = NULL;
  } else {
    r->outcome = TL_TUNE_COMPILED;
  }
  if (k && p->opts->load) {
    /* The driver compiles PTX one module at a time (jitlink.c says how
     * that was measured); nvJitLink compiles on this worker in parallel
     * with the others, and the driver then loads the cubin.  Without
     * nvJitLink, with $TL_TUNE_JIT=driver, or when it fails on this
     * kernel, the driver's JIT serves. */
    if (p->use_jitlink) (void)tl_rt_kernel_jitlink(ctx, k, p->opts->device);
    s = tl_kernel_load(ctx, k, p->opts->device);
    r->load_ms = now_ms(CLOCK_MONOTONIC) - t1;
    t1 += r->load_ms;
    if (s != TL_OK) {
      r->outcome = TL_TUNE_MEASURE_FAILED;
      const char *e = tl_context_last_error(ctx);
      tl_strbuf m = {0};
      tl_strbuf_printf(&m, "load: %s", *e ? e : tl_status_name(s));
      r->message = first_line(m.data && !m.oom ? m.data : "load failed");
      tl_strbuf_free(&m);
      tl_kernel_destroy(k);
      k = NULL;
    }
  }
  pthread_mutex_lock(&p->mu);
  p->kernels[i] = k;
  p->done[p->ndone++] = i;
  if (t1 > p->last_end) p->last_end = t1;
  pthread_cond_signal(&p->cv);
  pthread_mutex_unlock(&p->mu);
}

static void *worker(void *arg) {
  pool *p = arg;
  tl_context *ctx = NULL;
  tl_context_create(&ctx); /* NULL on OOM: every compile then fails with TL_ERR_NO_MEMORY */
  for (;;) {
    pthread_mutex_lock(&p->mu);
    size_t i = p->next < p->res->nconfigs ? p->next++ : SIZE_MAX;
    pthread_mutex_unlock(&p->mu);
    if (i == SIZE_MAX) break;
    if (ctx) compile_one(p, ctx, i);
    else {
      pthread_mutex_lock(&p->mu);
      p->res->configs[i].outcome = TL_TUNE_COMPILE_FAILED;
      p->res->configs[i].message = first_line("out of memory (no compiler context)");
      p->done[p->ndone++] = i;
      pthread_cond_signal(&p->cv);
      pthread_mutex_unlock(&p->mu);
    }
  }
  tl_context_destroy(ctx);
  return NULL;
}

/* ------------------------------------------------------------ progress */
typedef struct progress {
  bool on, tty;
  double start, last_print, measure_ms;
  size_t measured; /* measure calls made */
} progress;

/* Prints the progress line (final: always, with a newline). */
static void show(progress *pg, const pool *p, size_t compiled_or_failed, bool final) {
  if (!pg->on) return;
  const tl_tune_result *r = p->res;
  double t = now_ms(CLOCK_MONOTONIC);
  if (!final && !pg->tty && t - pg->last_print < 1000) return;
  pg->last_print = t;
  size_t n = r->nconfigs, failed = r->compile_failed + r->measure_failed;
  double elapsed = t - pg->start;
  double per_compile = compiled_or_failed ? p->compile_ms_sum / (double)compiled_or_failed : 0;
  double compile_left = (double)(n - compiled_or_failed) * per_compile / (r->workers ? r->workers : 1);
  size_t to_time = p->opts->measure ? n - r->timed - failed : 0;
  double time_left = pg->measured ? (double)to_time * pg->measure_ms / (double)pg->measured : 0;
  double left = compile_left > time_left ? compile_left : time_left;
  char best[64] = "none yet";
  if (r->best >= 0) snprintf(best, sizeof best, "%.4f ms (#%ld)", r->best_ms, r->best);
  fprintf(stderr, "%stune: compiled %zu/%zu, timed %zu/%zu, failed %zu, best %s, %.1f s elapsed, ~%.1f s left%s",
          pg->tty ? "\r" : "", compiled_or_failed, n, r->timed, n, failed, best, elapsed / 1e3,
          final ? 0.0 : left / 1e3, pg->tty ? (final ? "\033[K\n" : "\033[K") : "\n");
  fflush(stderr);
}

/* Reports a skipped config on stderr (progress on). */
static void report_skip(progress *pg, const tl_tune_space *s, size_t i, const char *what, const char *why) {
  if (!pg->on) return;
  size_t nc = 0;
  const tl_define *c = tl_tune_space_config(s, i, &nc);
  fprintf(stderr, "%stune: config #%zu (", pg->tty ? "\r\033[K" : "", i);
  for (size_t j = 0; j < nc; j++) fprintf(stderr, "%s%s=%s", j ? " " : "", c[j].name, c[j].value);
  fprintf(stderr, ") skipped: %s: %s\n", what, why ? why : "");
}

/* ---------------------------------------------------------- tune cache */
/* Line i of the space's text (config i), into a malloc'd string. */
static char *config_line(const tl_tune_space *s, size_t i) {
  const char *t = tl_tune_space_text(s);
  for (size_t k = 0; k < i && t; k++) {
    t = strchr(t, '\n');
    if (t) t++;
  }
  return t ? first_line(t) : NULL;
}

/* Device `device`'s name, compute capability and SM count (or "no device"). */
static void device_identity(int device, char *buf, size_t n) {
  const tl_driver *d = tl_driver_get(NULL);
  tl_CUdevice dev;
  char name[256] = "";
  int major = 0, minor = 0, sms = 0;
  if (!d || device < 0 || device >= tl_driver_device_count() || d->cuDeviceGet(&dev, device) != TL_CUDA_SUCCESS) {
    snprintf(buf, n, "no device");
    return;
  }
  if (d->cuDeviceGetName) d->cuDeviceGetName(name, (int)sizeof name - 1, dev);
  d->cuDeviceGetAttribute(&major, TL_CU_DEV_ATTR_CC_MAJOR, dev);
  d->cuDeviceGetAttribute(&minor, TL_CU_DEV_ATTR_CC_MINOR, dev);
  d->cuDeviceGetAttribute(&sms, TL_CU_DEV_ATTR_MULTIPROCESSOR_COUNT, dev);
  snprintf(buf, n, "%s cc%d.%d sms%d", name, major, minor, sms);
}

/* The tune cache key of this call into hex; false when the cache is off. */
static bool tune_key(const char *source, size_t len, const tl_tune_space *s, const tl_tune_options *o, int warmup,
                     int rep, char hex[33]) {
  tl_compile_options none;
  memset(&none, 0, sizeof none);
  const tl_compile_options *co = o->compile ? o->compile : &none;
  tl_strbuf t = {0};
  tl_strbuf_printf(&t, "tune 1\nsource %zu\n", len);
  tl_strbuf_appendn(&t, source, len);
  tl_strbuf_printf(&t, "\nkernel-option %s\nkernel %s\nspace\n%s\ndefines %zu\n", co->kernel ? co->kernel : "",
                   tl_tune_space_kernel(s), tl_tune_space_text(s), o->ndefines);
  for (size_t i = 0; i < o->ndefines; i++)
    tl_strbuf_printf(&t, "%s=%s\n", o->defines[i].name ? o->defines[i].name : "",
                     o->defines[i].value ? o->defines[i].value : "");
  char dev[400];
  device_identity(o->device, dev, sizeof dev);
  tl_strbuf_printf(&t, "warmup %d rep %d\nproblem %s\ndevice %s\n", warmup, rep, o->problem ? o->problem : "", dev);
  char compiler[1024];
  tl_cache_compiler_identity(compiler, sizeof compiler);
  tl_cache_inputs in = {0};
  in.tile_ir = t.data ? t.data : "";
  in.target = tl_target_resolve(co->target);
  in.flags = co->flags;
  in.out_idx_mode = (int)co->out_idx_mode;
  in.out_idx = co->out_idx;
  in.n_out_idx = co->out_idx_mode == TL_OUT_IDX_LIST ? co->n_out_idx : 0;
  in.kernel = co->kernel;
  in.compiler = compiler;
  tl_cache_key key;
  bool ok = !t.oom && tl_cache_key_of(&in, &key);
  tl_strbuf_free(&t);
  if (ok) tl_cache_key_hex(&key, hex);
  return ok;
}

/* Reads the entry hex in dir: the winner's index and time; false on a
 * miss (no entry, unreadable, or not matching the space). */
static bool tune_cache_load(const char *dir, const char *hex, const tl_tune_space *s, long *best, double *ms) {
  char path[4200];
  snprintf(path, sizeof path, "%s/%s.tlt", dir, hex);
  FILE *f = fopen(path, "r");
  if (!f) return false;
  char line[8192], cfg[8192] = "";
  long idx = -1;
  double t = 0;
  bool ok = fgets(line, sizeof line, f) && !strcmp(line, "tilelang-ptx tune 1\n") &&
            fscanf(f, "best %ld\nms %lf\n", &idx, &t) == 2 && fgets(cfg, sizeof cfg, f) && !strncmp(cfg, "config ", 7);
  fclose(f);
  if (!ok || idx < 0 || (size_t)idx >= tl_tune_space_count(s) || !(t > 0)) return false;
  cfg[strcspn(cfg, "\n")] = 0;
  char *want = config_line(s, (size_t)idx);
  ok = want && !strcmp(want, cfg + 7);
  free(want);
  if (ok) {
    *best = idx;
    *ms = t;
  }
  return ok;
}

static void tune_cache_store(const char *dir, const char *hex, const tl_tune_space *s, long best, double ms) {
  char *cfg = config_line(s, (size_t)best);
  tl_strbuf t = {0};
  tl_strbuf_printf(&t, "tilelang-ptx tune 1\nbest %ld\nms %.17g\nconfig %s\n", best, ms, cfg ? cfg : "");
  char name[64];
  snprintf(name, sizeof name, "%s.tlt", hex);
  if (cfg && !t.oom) tl_cache_write_file(dir, name, t.data, t.len); /* best effort */
  free(cfg);
  tl_strbuf_free(&t);
}

/* The cache-hit path: compile the winner alone.  false: treat as a miss. */
static bool from_cache(tl_context *ctx, const char *source, size_t len, const char *filename, const tl_tune_space *s,
                       const tl_tune_options *o, long best, double ms, tl_tune_result *r) {
  size_t nd = 0;
  tl_define *d = config_defines(o, s, (size_t)best, &nd);
  tl_kernel *k = NULL;
  double t0 = now_ms(CLOCK_MONOTONIC);
  tl_status st = d ? tl_kernel_compile(ctx, source, len, filename, d, nd, o->compile, &k) : TL_ERR_NO_MEMORY;
  free(d);
  if (st != TL_OK) {
    tl_kernel_destroy(k);
    return false;
  }
  r->configs[best].outcome = TL_TUNE_TIMED;
  r->configs[best].ms = ms;
  r->configs[best].compile_ms = now_ms(CLOCK_MONOTONIC) - t0;
  r->best = best;
  r->best_ms = ms;
  r->kernel = k;
  r->cache_hit = true;
  r->compiled = 1;
  return true;
}

/* --------------------------------------------------------------- tune */
/* Measures config i (compiled: p->kernels[i]) and keeps it when fastest. */
static void measure_one(pool *p, progress *pg, size_t i, int warmup, int rep) {
  tl_tune_result *r = p->res;
  tl_kernel *k = p->kernels[i];
  p->kernels[i] = NULL;
  char why[512] = "";
  double ms = 0, t0 = now_ms(CLOCK_MONOTONIC);
  tl_status s = p->opts->measure(p->opts->user, k, i, warmup, rep, &ms, why, sizeof why);
  pg->measure_ms += now_ms(CLOCK_MONOTONIC) - t0;
  pg->measured++;
  if (s != TL_OK || !(ms > 0)) {
    r->configs[i].outcome = TL_TUNE_MEASURE_FAILED;
    r->configs[i].message = first_line(*why ? why : s != TL_OK ? tl_status_name(s) : "no time measured");
    r->measure_failed++;
    report_skip(pg, p->space, i, "measure", r->configs[i].message);
    tl_kernel_destroy(k);
    return;
  }
  r->configs[i].outcome = TL_TUNE_TIMED;
  r->configs[i].ms = ms;
  r->timed++;
  if (r->best < 0 || ms < r->best_ms) {
    tl_kernel_destroy(r->kernel);
    r->kernel = k;
    r->best = (long)i;
    r->best_ms = ms;
  } else {
    tl_kernel_destroy(k);
  }
}

/* Runs the pool and the measurements; false when no worker could start. */
static bool run_pool(pool *p, int warmup, int rep, progress *pg) {
  tl_tune_result *r = p->res;
  size_t n = r->nconfigs;
  pthread_t *th = calloc((size_t)r->workers, sizeof *th);
  if (!th) return false;
  int started = 0;
  p->first_start = now_ms(CLOCK_MONOTONIC);
  for (int w = 0; w < r->workers; w++)
    if (pthread_create(&th[started], NULL, worker, p) == 0) started++;
  if (!started) {
    free(th);
    return false;
  }
  r->workers = started;
  /* Configurations are measured in their order, each as soon as it and those before it are compiled: the
   * first measured is then the first that compiled (the reference a measure callback may compare the others
   * against), whatever order the workers finish in. */
  bool *ready = calloc(n ? n : 1, sizeof *ready);
  size_t seen = 0, taken = 0;
  while (taken < n) {
    pthread_mutex_lock(&p->mu);
    for (;;) {
      if (!ready) { /* out of memory: completion order */
        while (taken == p->ndone) pthread_cond_wait(&p->cv, &p->mu);
        break;
      }
      while (seen < p->ndone) ready[p->done[seen++]] = true;
      if (ready[taken]) break;
      pthread_cond_wait(&p->cv, &p->mu);
    }
    size_t i = ready ? taken : p->done[taken];
    taken++;
    pthread_mutex_unlock(&p->mu);
    tl_tune_config_result *c = &r->configs[i];
    r->compile_cpu_ms += c->compile_cpu_ms;
    p->compile_ms_sum += c->compile_ms;
    r->load_ms += c->load_ms;
    if (c->outcome == TL_TUNE_COMPILE_FAILED) {
      r->compile_failed++;
      report_skip(pg, p->space, i, "compile", c->message);
    } else if (c->outcome == TL_TUNE_MEASURE_FAILED) { /* its load failed */
      r->compiled++;
      r->measure_failed++;
      report_skip(pg, p->space, i, "measure", c->message);
    } else {
      r->compiled++;
      if (p->opts->measure) measure_one(p, pg, i, warmup, rep);
      else tl_kernel_destroy(p->kernels[i]), p->kernels[i] = NULL;
    }
    show(pg, p, taken, false);
  }
  for (int w = 0; w < started; w++) pthread_join(th[w], NULL);
  free(th);
  free(ready);
  r->compile_wall_ms = p->last_end - p->first_start;
  return true;
}

tl_status tl_kernel_tune(tl_context *ctx, const char *source, size_t len, const char *filename,
                         const tl_tune_space *space, const tl_tune_options *opts, tl_tune_result *out) {
  if (!ctx) return TL_ERR_INVALID_ARGUMENT;
  if (out) memset(out, 0, sizeof *out);
  if (!source || !space || !opts || !out) {
    tl_context_begin(ctx);
    const char *what = !source ? "source" : !space ? "space" : !opts ? "opts" : "out";
    return tl_context_null_arg(ctx, "tl_kernel_tune", what);
  }
  size_t n = tl_tune_space_count(space);
  if (!n) {
    tl_context_begin(ctx);
    return tl_context_end(ctx,
                          tl_context_fail(ctx, TL_ERR_INVALID_ARGUMENT, "tl_kernel_tune: the space has no config"));
  }
  double start = now_ms(CLOCK_MONOTONIC);
  int warmup = opts->warmup > 0                   ? opts->warmup
               : tl_tune_space_warmup(space) >= 0 ? tl_tune_space_warmup(space)
                                                  : DEFAULT_WARMUP;
  int rep = opts->rep > 0 ? opts->rep : tl_tune_space_rep(space) > 0 ? tl_tune_space_rep(space) : DEFAULT_REP;
  out->nconfigs = n;
  out->best = -1;
  out->configs = calloc(n, sizeof *out->configs);
  if (!out->configs) return TL_ERR_NO_MEMORY;
  long online = sysconf(_SC_NPROCESSORS_ONLN);
  int workers = opts->workers > 0 ? opts->workers : online > 0 ? (int)online : 1;
  out->workers = (size_t)workers > n ? (int)n : workers;

  /* the tune cache */
  char *dir = opts->measure && opts->cache != TL_CACHE_USE_OFF ? tl_cache_dir() : NULL;
  if (dir && tune_key(source, len, space, opts, warmup, rep, out->cache_key)) {
    long best;
    double ms;
    if (opts->cache != TL_CACHE_USE_REFRESH && tune_cache_load(dir, out->cache_key, space, &best, &ms) &&
        from_cache(ctx, source, len, filename, space, opts, best, ms, out)) {
      free(dir);
      out->total_ms = now_ms(CLOCK_MONOTONIC) - start;
      return TL_OK;
    }
  } else {
    out->cache_key[0] = 0;
  }

  pool p = {.source = source, .len = len, .filename = filename, .space = space, .opts = opts, .res = out};
  const char *jit = getenv("TL_TUNE_JIT");
  p.use_jitlink = opts->load && !(jit && strcmp(jit, "driver") == 0) && tl_rt_jitlink_available();
  out->jitlink = p.use_jitlink;
  p.kernels = calloc(n, sizeof *p.kernels);
  p.done = calloc(n, sizeof *p.done);
  progress pg = {opts->progress, opts->progress && isatty(2), start, 0, 0, 0};
  bool ok = p.kernels && p.done && pthread_mutex_init(&p.mu, NULL) == 0;
  if (ok && pthread_cond_init(&p.cv, NULL) != 0) {
    pthread_mutex_destroy(&p.mu);
    ok = false;
  }
  if (ok) {
    ok = run_pool(&p, warmup, rep, &pg);
    pthread_cond_destroy(&p.cv);
    pthread_mutex_destroy(&p.mu);
  }
  free(p.kernels);
  free(p.done);
  if (!ok) {
    free(dir);
    tl_tune_result_free(out);
    tl_context_begin(ctx);
    return tl_context_end(ctx,
                          tl_context_fail(ctx, TL_ERR_NO_MEMORY, "tl_kernel_tune: cannot start the compile workers"));
  }
  show(&pg, &p, n, true);
  if (dir && out->cache_key[0] && out->best >= 0) tune_cache_store(dir, out->cache_key, space, out->best, out->best_ms);
  free(dir);
  out->total_ms = now_ms(CLOCK_MONOTONIC) - start;
  return TL_OK;
}

void tl_tune_result_free(tl_tune_result *r) {
  if (!r) return;
  for (size_t i = 0; r->configs && i < r->nconfigs; i++) free(r->configs[i].message);
  free(r->configs);
  memset(r, 0, sizeof *r);
}
