/* The work analysis of the tile IR (internal; the public face is
 * tl_module_analyze in include/tilelang/ir.h, whose comment gives the
 * counting rules): FLOPs of T.gemm, global-memory traffic, T.gemm
 * executions and blocks of one launch, counted on a function as written.
 * One owner: the C API, tl-opt --analyze, tilelang.tools.Analyzer (through
 * the C API) and tl_kernel_gemm_flops (lib/Runtime/cpu.c: tl-run's tflops=
 * and --tune) all count here. */
#ifndef TL_ANALYZE_H
#define TL_ANALYZE_H

#include "IR/tir.h"

/* Values of dynamic dims and scalar parameters by name (names[i] =
 * values[i]; borrowed), for kernels whose trip counts read them. */
typedef struct tl_analyze_dims {
  const char *const *names;
  const int64_t *values;
  size_t n;
} tl_analyze_dims;

/* Adds the counts of one launch of f to *acc.  global: count the global
 * traffic and every kernel's blocks too (false: FLOPs and T.gemm
 * executions only -- and the blocks of kernels with a T.gemm -- so that a
 * loop or grid that only moves data needs no known size: tl_kernel_gemm_flops).
 * dims may be NULL.
 * A trip count, grid dimension or region extent needed for a count that is
 * not a compile-time constant, a count past 2^64 - 1, or SIMT IR (a loop
 * bound to the thread index) is a located error reported to d; returns
 * false after reporting one (*acc then holds partial counts). */
bool tl_analyze_func(const tl_primfunc *f, const tl_analyze_dims *dims, bool global, tl_diag *d, tl_analysis *acc);

#endif
