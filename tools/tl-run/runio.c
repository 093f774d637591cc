/* tl-run's --input, --save, --int-range and progress line (runio.h), and
 * their binding to a run's parameters (run.h). */
#include "runio.h"

#include "../common/cli.h"
#include "device.h"
#include "elems.h"
#include "run.h"
#include "strided.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

/* ---------------------------------------------------------- --input */
bool tlr_input_split(char *arg, tlr_input *in) {
  char *eq = strchr(arg, '=');
  if (!eq || eq == arg || !eq[1]) return false;
  *eq = '\0';
  memset(in, 0, sizeof *in);
  in->name = arg;
  in->path = eq + 1;
  in->param = -1;
  return true;
}

int tlr_inputs_load(tlr_input *in, size_t *n) {
  size_t k = 0;
  for (size_t i = 0; i < *n; i++) { /* the last --input of a name wins */
    bool later = false;
    for (size_t j = i + 1; j < *n && !later; j++) later = !strcmp(in[i].name, in[j].name);
    if (!later) in[k++] = in[i];
  }
  *n = k;
  for (size_t i = 0; i < k; i++) {
    char why[256];
    bool unreadable;
    if (tlr_npy_read(in[i].path, &in[i].a, &unreadable, why, sizeof why)) continue;
    if (unreadable) {
      fprintf(stderr, "tl-run: error: cannot read '%s': %s\n", in[i].path, why);
      return 2;
    }
    fprintf(stderr, "<command line>: error: --input %s=%s: %s\n", in[i].name, in[i].path, why);
    return 1;
  }
  return 0;
}

void tlr_inputs_free(tlr_input *in, size_t n) {
  for (size_t i = 0; in && i < n; i++) tlr_npy_free(&in[i].a);
}

static void shape_text(char *out, size_t n, const int64_t *shape, int ndim) {
  size_t k = (size_t)snprintf(out, n, "[");
  for (int d = 0; d < ndim && k < n; d++) k += (size_t)snprintf(out + k, n - k, "%s%" PRId64, d ? "," : "", shape[d]);
  if (k < n) snprintf(out + k, n - k, "]");
}

bool tlr_input_check(const tlr_input *in, tl_dtype t, int ndim, const int64_t *shape) {
  const char *want = tlr_npy_descr(t);
  if (!tlr_npy_descr_matches(t, in->a.descr)) {
    char got[64];
    tlr_npy_describe(in->a.descr, got, sizeof got);
    fprintf(stderr, "<command line>: error: --input %s=%s: parameter '%s' is %s", in->name, in->path, in->name,
            tl_dtype_name(t));
    if (want)
      fprintf(stderr, " ('%s'%s)", want,
              t.code == TL_TYPE_BFLOAT || t.code == TL_TYPE_FLOAT8_E4M3 || t.code == TL_TYPE_FLOAT8_E5M2
                  ? ": its raw bits"
                  : "");
    else fputs(", which has no .npy dtype", stderr);
    fprintf(stderr, ", the file holds %s\n", got);
    return false;
  }
  bool same = in->a.ndim == ndim;
  for (int d = 0; same && d < ndim; d++) same = in->a.shape[d] == shape[d];
  if (!same) {
    char a[256], b[256];
    shape_text(a, sizeof a, shape, ndim);
    shape_text(b, sizeof b, in->a.shape, in->a.ndim);
    fprintf(stderr, "<command line>: error: --input %s=%s: parameter '%s' has shape %s, the file holds %s\n", in->name,
            in->path, in->name, a, b);
    return false;
  }
  return true;
}

/* ------------------------------------------------------ --int-range */
bool tlr_parse_int_range(const char *arg, int64_t range[2]) {
  const char *colon = strchr(arg, ':');
  if (!colon || colon == arg || !colon[1]) return false;
  char *e;
  errno = 0;
  long long lo = strtoll(arg, &e, 0);
  if (e != colon || errno) return false;
  long long hi = strtoll(colon + 1, &e, 0);
  if (*e || errno || lo > hi) return false;
  range[0] = lo;
  range[1] = hi;
  return true;
}

bool tlr_int_range_check(const int64_t range[2], const char *arg, const char *name, tl_dtype t) {
  if ((t.code != TL_TYPE_INT && t.code != TL_TYPE_UINT) || t.bits > 64 || t.bits < 1) return true;
  int64_t lo, hi;
  uint64_t uhi = 0;
  if (t.code == TL_TYPE_INT) {
    hi = t.bits == 64 ? INT64_MAX : (int64_t)((UINT64_C(1) << (t.bits - 1)) - 1);
    lo = -hi - 1;
  } else {
    lo = 0;
    uhi = t.bits == 64 ? UINT64_MAX : (UINT64_C(1) << t.bits) - 1;
    hi = uhi > (uint64_t)INT64_MAX ? INT64_MAX : (int64_t)uhi;
  }
  if (range[0] >= lo && range[1] <= hi) return true;
  fprintf(stderr, "<command line>: error: --int-range %s: input '%s' is %s, whose values lie in [", arg, name,
          tl_dtype_name(t));
  if (t.code == TL_TYPE_INT) fprintf(stderr, "%" PRId64 ", %" PRId64 "]\n", lo, hi);
  else fprintf(stderr, "0, %" PRIu64 "]\n", uhi);
  return false;
}

/* ------------------------------------------------------------ --save */
bool tlr_save(const char *dir, const char *tag, const char *name, tl_dtype t, const int64_t *shape, int ndim,
              const void *data, size_t elems) {
  const char *descr = tlr_npy_descr(t);
  if (!descr) {
    fprintf(stderr, "tl-run: error: --save: output '%s' is %s, which has no .npy dtype\n", name, tl_dtype_name(t));
    return false;
  }
  struct stat st;
  if (stat(dir, &st) != 0 && mkdir(dir, 0777) != 0 && errno != EEXIST) {
    fprintf(stderr, "tl-run: error: --save: cannot create the directory '%s': %s\n", dir, strerror(errno));
    return false;
  }
  size_t n = strlen(dir) + strlen(name) + strlen(tag) + 8;
  char *path = malloc(n);
  if (!path) {
    fputs("tl-run: error: out of memory\n", stderr);
    return false;
  }
  snprintf(path, n, "%s/%s%s%s.npy", dir, name, *tag ? "." : "", tag);
  bool ok = tlr_npy_write(path, descr, shape, ndim, data, elems * (size_t)tl_dtype_bytes(t));
  if (!ok) fprintf(stderr, "tl-run: error: --save: cannot write '%s': %s\n", path, strerror(errno));
  free(path);
  return ok;
}

/* ---------------------------------------------------------- progress */
static double now_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

void tlr_progress_begin(tlr_progress *p) {
  p->start = now_s();
  p->last = -1e9;
  p->open = p->shown = false;
}

void tlr_progress_step(void *user, int64_t done, int64_t total) {
  tlr_progress *p = user;
  double t = now_s(), el = t - p->start;
  bool last = done >= total;
  if (!p->forced && el < 2.0) return; /* short runs stay quiet */
  if (!last && t - p->last < (p->tty ? 0.1 : 1.0)) return;
  p->last = t;
  p->shown = true;
  fprintf(stderr, "%stl-run: progress: %" PRId64 "/%" PRId64 " blocks (%d%%), %.1f s elapsed", p->tty ? "\r" : "", done,
          total, (int)(100.0 * (double)done / (double)(total > 0 ? total : 1)), el);
  if (last) fputs(", done", stderr);
  else fprintf(stderr, ", ~%.1f s left", el / (double)done * (double)(total - done));
  fputs(p->tty && !last ? "\033[K" : p->tty ? "\033[K\n" : "\n", stderr);
  p->open = p->tty && !last;
  fflush(stderr);
}

void tlr_progress_end(tlr_progress *p) {
  if (p->open) fputc('\n', stderr);
  p->open = false;
}

/* ------------------------------------------------- binding the options */
/* Binds ro to the kernel's parameters in rs: each --input NAME to its
 * tensor input, --int-range checked against the integer inputs it draws;
 * false after printing the errors. */
bool tlr_bind_run_options(run_state *rs, run_opts *ro) {
  bool bad = false;
  rs->inputs = ro->inputs;
  rs->input_of = malloc(((size_t)rs->nparams + 1) * sizeof *rs->input_of);
  if (!rs->input_of) return false;
  for (int i = 0; i < rs->nparams; i++) rs->input_of[i] = -1;
  for (size_t j = 0; j < ro->ninputs; j++) {
    const tlr_input *in = &ro->inputs[j];
    int pi = 0;
    while (pi < rs->nparams && (!rs->p[pi].is_tensor || strcmp(rs->p[pi].name, in->name))) pi++;
    if (pi < rs->nparams && !rs->p[pi].is_output) {
      rs->input_of[pi] = (int)j;
      continue;
    }
    fprintf(stderr, "<command line>: error: --input %s=%s: ", in->name, in->path);
    if (pi < rs->nparams)
      fprintf(stderr,
              "'%s' is an out_idx output, which the call allocates (--out-idx=none "
              "makes every tensor an input)\n",
              in->name);
    else fprintf(stderr, "the kernel has no tensor parameter named '%s' (its tensor inputs:", in->name);
    for (int i = 0; pi == rs->nparams && i < rs->nparams; i++)
      if (rs->p[i].is_tensor && !rs->p[i].is_output) fprintf(stderr, " %s", rs->p[i].name);
    if (pi == rs->nparams) fputs(")\n", stderr);
    bad = true;
  }
  for (int i = 0; ro->int_range_arg && i < rs->nparams; i++)
    if (rs->p[i].is_tensor && !rs->p[i].is_output && rs->input_of[i] < 0 &&
        !tlr_int_range_check(ro->int_range, ro->int_range_arg, rs->p[i].name, rs->p[i].dtype))
      bad = true;
  rs->int_range = ro->int_range_arg ? ro->int_range : NULL;
  rs->save_dir = ro->save_dir;
  ro->state.forced = ro->progress > 0;
  ro->state.tty = isatty(STDERR_FILENO);
  rs->progress =
      rs->device == DEV_CPU && (ro->progress > 0 || (ro->progress == 0 && ro->state.tty)) ? &ro->state : NULL;
  return !bad && tlr_bind_ptr_tables(rs, ro);
}

/* --atol X / --rtol Y (tlr_set_tolerance): a finite number >= 0; false with *rc set on a bad one. */
static bool tolerance_option(bool atol, const char *arg, int *rc) {
  char *end = NULL;
  double v = strtod(arg, &end);
  if (!*arg || *end || !(v >= 0) || !isfinite(v)) {
    *rc = tl_cli_usage_error(atol ? "bad --atol '%s' (expected a number >= 0, such as 1e-3)"
                                  : "bad --rtol '%s' (expected a number >= 0, such as 1e-3)",
                             arg);
    return false;
  }
  tlr_set_tolerance(atol ? v : -1, atol ? -1 : v);
  return true;
}

/* Parses one of issue 32's options, --ptr-table, --atol or --rtol into ro; false with *rc set after a
 * usage error. */
bool tlr_run_option(int c, char *arg, run_opts *ro, int *rc) {
  switch (c) {
  case OPT_ATOL:
  case OPT_RTOL: return tolerance_option(c == OPT_ATOL, arg, rc);
  case OPT_INPUT:
    if (tlr_input_split(arg, &ro->inputs[ro->ninputs])) {
      ro->ninputs++;
      return true;
    }
    *rc = tl_cli_usage_error("malformed --input '%s': expected --input NAME=FILE.npy", arg);
    return false;
  case OPT_INT_RANGE:
    if (tlr_parse_int_range(arg, ro->int_range)) {
      ro->int_range_arg = arg;
      return true;
    }
    *rc = tl_cli_usage_error("bad --int-range '%s' (expected LO:HI, integers with LO <= HI)", arg);
    return false;
  case OPT_SAVE: ro->save_dir = arg; return true;
  case OPT_PTR_TABLE: return tlr_ptr_option(arg, ro, rc);
  default: ro->progress = c == OPT_PROGRESS ? 1 : -1; return true;
  }
}

/* --save's snapshot of a run's inputs (run_once): per non-output tensor,
 * its elements in row-major order before the run (NULL when the run makes
 * no written-input check: out_idx none, or not --save); false when out of
 * memory. */
bool tlr_snapshot_inputs(const run_state *rs, host_tensor *h, void **snap) {
  for (int i = 0; i < rs->nparams; i++) {
    const param_info *p = &rs->p[i];
    if (!p->is_tensor || p->is_output || !h[i].data) continue;
    size_t bytes = h[i].elems * (size_t)tl_dtype_bytes(p->dtype);
    if (!(snap[i] = malloc(bytes ? bytes : 1))) return false;
    if (h[i].t.strides) tlr_gather(snap[i], &h[i].t, (size_t)tl_dtype_bytes(p->dtype));
    else memcpy(snap[i], h[i].data, bytes);
  }
  return true;
}
