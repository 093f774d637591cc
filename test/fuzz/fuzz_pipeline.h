/* The libFuzzer target's elaborate → lower → SIMT executor stage
 * (fuzz_pipeline.c), called by fuzz_roundtrip.c for every input. */
#ifndef TL_FUZZ_PIPELINE_H
#define TL_FUZZ_PIPELINE_H

#include <stddef.h>

#include "tilelang/core.h"

/* Parses src (size bytes; small factory shapes bound where the source names
 * them), lowers it for sm_80 and runs a small enough kernel on the CPU SIMT
 * executor.  Every failure is silent: only the sanitizers speak. */
void fuzz_pipeline(tl_context *ctx, const char *src, size_t size);

#endif
