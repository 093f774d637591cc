/* tl-run's option values: the parsers of --seed / --schedule-seed, --dim,
 * --arg, --out-idx, --pass-config and --tune-workers (the long options and
 * the run loop are in tl-run.c). */
#include "options.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../common/cli.h"
#include "tilelang/runtime.h"

bool tlr_parse_i64(const char *s, int64_t *out) {
  if (!s || !*s) return false;
  errno = 0;
  char *end;
  long long v = strtoll(s, &end, 0);
  if (errno || *end) return false;
  *out = v;
  return true;
}

bool tlr_seed_option(bool schedule, const char *arg, uint64_t *seed, int *rc) {
  char *end;
  errno = 0;
  unsigned long long v = strtoull(arg, &end, 0);
  if (!*arg || *end || errno || arg[0] == '-') {
    *rc = tl_cli_usage_error(schedule ? "bad --schedule-seed '%s' (expected a non-negative integer)"
                                      : "bad --seed '%s' (expected a non-negative integer)",
                             arg);
    return false;
  }
  if (schedule) setenv("TL_SCHEDULE_SEED", arg, 1);
  else *seed = v;
  return true;
}

bool tlr_dim_option(char *optarg, dim_opt *dims, size_t *ndims, int *rc) {
  char *eq = strchr(optarg, '=');
  if (!eq || eq == optarg || !eq[1]) {
    *rc = tl_cli_usage_error("malformed --dim '%s': expected --dim NAME=VALUE[,VALUE...]", optarg);
    return false;
  }
  *eq = '\0';
  dim_opt *d = NULL;
  for (size_t i = 0; i < *ndims; i++)
    if (!strcmp(dims[i].name, optarg)) d = &dims[i]; /* the last --dim of a name wins */
  if (!d) d = &dims[(*ndims)++];
  d->name = optarg;
  free(d->vals);
  d->vals = calloc(strlen(eq + 1) + 1, sizeof(int64_t));
  d->n = 0;
  if (!d->vals) {
    *rc = EXIT_INPUT;
    return false;
  }
  for (char *tok = eq + 1; tok;) {
    char *comma = strchr(tok, ',');
    if (comma) *comma = '\0';
    int64_t v;
    bool okv = tlr_parse_i64(tok, &v) && v >= 0 && v <= INT32_MAX;
    if (comma) *comma = ',';
    tok = comma ? comma + 1 : NULL;
    if (!okv) {
      *eq = '=';
      *rc = tl_cli_usage_error(
          "bad --dim value in '%s': expected non-negative integers "
          "(NAME=V or NAME=V1,V2,...)",
          optarg);
      return false;
    }
    d->vals[d->n++] = v;
  }
  if (d->n == 0) {
    *eq = '=';
    *rc = tl_cli_usage_error("malformed --dim '%s': expected --dim NAME=VALUE[,VALUE...]", optarg);
    return false;
  }
  return true;
}

bool tlr_arg_option(char *optarg, arg_opt *sargs, size_t *nsargs, int *rc) {
  char *eq = strchr(optarg, '=');
  if (!eq || eq == optarg || !eq[1]) {
    *rc = tl_cli_usage_error("malformed --arg '%s': expected --arg NAME=VALUE", optarg);
    return false;
  }
  *eq = '\0';
  size_t i = 0;
  while (i < *nsargs && strcmp(sargs[i].name, optarg)) i++;
  if (i == *nsargs) (*nsargs)++;
  sargs[i].name = optarg;
  sargs[i].value = eq + 1;
  return true;
}

/* Parses "--out-idx" text: none, or a comma-separated list of ints. */
bool tlr_parse_out_idx(const char *s, tl_out_idx_mode *mode, int **idx, size_t *n) {
  if (!strcmp(s, "none")) {
    *mode = TL_OUT_IDX_NONE;
    return true;
  }
  size_t cap = strlen(s) + 1, k = 0;
  int *v = calloc(cap, sizeof(int));
  if (!v) return false;
  const char *p = s;
  while (*p) {
    char *end;
    errno = 0;
    long x = strtol(p, &end, 10);
    if (end == p || errno || x < -1000000 || x > 1000000 || (*end && *end != ',')) {
      free(v);
      return false;
    }
    v[k++] = (int)x;
    p = *end ? end + 1 : end;
    if (*end == ',' && !*p) {
      free(v);
      return false;
    }
  }
  if (k == 0) {
    free(v);
    return false;
  }
  *mode = TL_OUT_IDX_LIST;
  *idx = v;
  *n = k;
  return true;
}

/* --pass-config KEY or KEY=VALUE (TileLang's pass_configs dict; the
 * library's rule, tl_pass_config_apply: KEY alone or True sets the config,
 * False clears it or, for an attention schedule, gives it as False) into
 * *flags and *flags_false; false with *rc set after a usage error naming
 * what is wrong (an unknown key, a bad value). */
bool tlr_pass_config_option(const char *arg, unsigned *flags, unsigned *flags_false, int *rc) {
  size_t n = strcspn(arg, "=");
  char key[256];
  snprintf(key, sizeof key, "%.*s", (int)(n < sizeof key - 1 ? n : sizeof key - 1), arg);
  tl_context *pc = NULL;
  if (tl_context_create(&pc) != TL_OK) {
    *rc = tl_cli_usage_error("--pass-config '%s': out of memory", arg);
    return false;
  }
  bool ok = tl_pass_config_apply(pc, key, arg[n] ? arg + n + 1 : NULL, flags, flags_false) == TL_OK;
  if (!ok) {
    char msg[1024];
    snprintf(msg, sizeof msg, "--pass-config: %s", tl_context_last_error(pc));
    *rc = tl_cli_usage_error("%s", msg);
  }
  tl_context_destroy(pc);
  return ok;
}

/* --tune-workers N: compile threads of --tune (1..1024); false with *rc set
 * after a usage error. */
bool tlr_workers_option(const char *arg, int *workers, int *rc) {
  int64_t v;
  if (!tlr_parse_i64(arg, &v) || v < 1 || v > 1024) {
    *rc = tl_cli_usage_error("bad --tune-workers '%s' (expected an integer from 1 to 1024)", arg);
    return false;
  }
  *workers = (int)v;
  return true;
}
