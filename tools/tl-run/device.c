/* tl-run's --device option (device.h): parsing auto / cpu / cuda / cuda:N
 * and resolving it against the machine (tl_device_check, tl_device_count)
 * before the compile, with tl-run's messages. */
#include "device.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tilelang/runtime.h"

bool tlr_parse_device(const char *arg, tlr_device *d) {
  memset(d, 0, sizeof *d);
  if (!strcmp(arg, "auto")) d->kind = DEV_AUTO;
  else if (!strcmp(arg, "cpu")) d->kind = DEV_CPU;
  else if (!strcmp(arg, "cuda")) d->kind = DEV_CUDA;
  else if (!strncmp(arg, "cuda:", 5)) {
    const char *n = arg + 5;
    char *end;
    long v = strtol(n, &end, 10);
    if (*n < '0' || *n > '9' || *end || v > 65535) return false;
    d->kind = DEV_CUDA;
    d->ordinal = (int)v;
  } else {
    return false;
  }
  snprintf(d->text, sizeof d->text, "%s", arg);
  return true;
}

/* The explicit ordinal exists (an error printed when not). */
static bool ordinal_exists(tl_context *ctx, const tlr_device *d) {
  int n = 0;
  if (tl_device_count(ctx, &n) != TL_OK || d->ordinal < n) return true; /* (no driver: said elsewhere) */
  fprintf(stderr, "<command line>: error: --device=%s: no CUDA device %d (this machine has %d CUDA device%s: ", d->text,
          d->ordinal, n, n == 1 ? "" : "s");
  if (n == 1) fprintf(stderr, "cuda:0)\n");
  else fprintf(stderr, "cuda:0 to cuda:%d)\n", n - 1);
  return false;
}

bool tlr_pick_device(tl_context *ctx, bool compile_only, const char *timed, tlr_device *d) {
  const char *opt = d->text[0] ? d->text : "cuda";
  if (compile_only) { /* the GPU's compile, without a GPU */
    d->kind = DEV_CUDA;
    return tl_device_check(NULL) != TL_OK || ordinal_exists(ctx, d);
  }
  if (d->kind != DEV_CPU) {
    tl_status s = tl_device_check(ctx);
    if (s != TL_OK) {
      const char *why = tl_context_last_error(ctx);
      if (d->kind == DEV_CUDA || timed) { /* --bench / --tune run on the GPU only: no CPU fallback note */
        if (timed)
          fprintf(stderr, "tl-run: error: %s needs the CUDA device: no CUDA GPU available (%s)\n", timed,
                  *why ? why : tl_status_name(s));
        else
          fprintf(stderr, "tl-run: error: --device=%s: no CUDA GPU available (%s)\n", opt,
                  *why ? why : tl_status_name(s));
        return false;
      }
      fprintf(stderr, "tl-run: note: no CUDA GPU found (%s); running on the CPU SIMT executor\n",
              *why ? why : tl_status_name(s));
      d->kind = DEV_CPU;
    } else {
      d->kind = DEV_CUDA;
      if (!ordinal_exists(ctx, d)) return false;
    }
  }
  if (timed && d->kind != DEV_CUDA) {
    fprintf(stderr,
            "<command line>: error: %s needs the CUDA device (the CPU executors are not "
            "timed)\n",
            timed);
    return false;
  }
  return true;
}
