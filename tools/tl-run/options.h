/* tl-run's option values (options.c): each parser takes the option's text
 * and returns false with *rc set to the exit status after printing a usage
 * error that names the option and what was expected. */
#ifndef TL_RUN_OPTIONS_H
#define TL_RUN_OPTIONS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "tilelang/runtime.h"

/* tl-run's exit statuses besides 0: a failed check or run, a usage error. */
enum { EXIT_INPUT = 1, EXIT_USAGE = 2 };

/* --dim NAME=V[,V...]: the values of a dynamic dim (the last --dim of a name wins; vals owned, freed by the caller). */
typedef struct dim_opt {
  char *name;
  int64_t *vals;
  int n;
} dim_opt;
typedef struct arg_opt {
  char *name;
  char *value;
} arg_opt;

/* s as a whole int64 (base prefixes allowed); false on any trailing text or overflow. */
bool tlr_parse_i64(const char *s, int64_t *out);
/* --seed N (into *seed) or --schedule-seed N (into $TL_SCHEDULE_SEED). */
bool tlr_seed_option(bool schedule, const char *arg, uint64_t *seed, int *rc);
/* --dim NAME=V[,V...] into dims (argc + 64 entries); optarg is modified and kept. */
bool tlr_dim_option(char *optarg, dim_opt *dims, size_t *ndims, int *rc);
/* --arg NAME=VALUE into sargs (the last of a name wins); optarg is modified and kept. */
bool tlr_arg_option(char *optarg, arg_opt *sargs, size_t *nsargs, int *rc);
/* --out-idx: none, or comma-separated ints into *idx (malloc'd, n entries); false on malformed text (no message). */
bool tlr_parse_out_idx(const char *s, tl_out_idx_mode *mode, int **idx, size_t *n);
/* --pass-config KEY[=VALUE] into the flag words (tl_pass_config_apply's rule). */
bool tlr_pass_config_option(const char *arg, unsigned *flags, unsigned *flags_false, int *rc);
/* --tune-workers N (1..1024). */
bool tlr_workers_option(const char *arg, int *workers, int *rc);

#endif
