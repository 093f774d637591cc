/* tl-run's --device option (issue 18): where a run goes -- the CUDA device
 * of an ordinal (--device=cuda:N, `cuda` being cuda:0), the CPU SIMT
 * executor, or auto -- parsed, and checked against the machine before
 * anything is compiled.  Used by tl-run.c only. */
#ifndef TL_RUN_DEVICE_H
#define TL_RUN_DEVICE_H

#include <stdbool.h>

#include "tilelang/core.h"

enum { DEV_AUTO, DEV_CUDA, DEV_CPU };

typedef struct tlr_device {
  int kind;      /* DEV_AUTO, DEV_CUDA, DEV_CPU */
  int ordinal;   /* the CUDA device (DEV_CUDA; 0 unless --device=cuda:N) */
  char text[32]; /* the option as given ("cuda:1"), for messages; "" for the default */
} tlr_device;

/* Parses --device's value: auto, cpu, cuda, or cuda:N with N a decimal
 * ordinal (0..65535).  false when the value is none of these (the caller
 * reports the usage error). */
bool tlr_parse_device(const char *arg, tlr_device *d);

/* Resolves d before the compile: DEV_AUTO becomes cuda (ordinal 0) when
 * tl_device_check finds a GPU, else cpu with a note on stderr; an explicit
 * cuda needs a GPU (an error naming the option), and its ordinal must exist
 * ("<command line>: error: --device=cuda:3: no CUDA device 3 (this machine
 * has 2 CUDA devices: cuda:0 to cuda:1)").  compile_only: the GPU's
 * compile without a GPU (kind cuda; the ordinal is checked only when a
 * driver answers).  timed: "--bench" / "--tune" when given (they need the
 * GPU), else NULL.  false after printing the error. */
bool tlr_pick_device(tl_context *ctx, bool compile_only, const char *timed, tlr_device *d);

#endif
