/* tl-run's --ptr-table NAME=TENSOR: fills the int64 tensor parameter NAME
 * (a T.Tensor((G,), T.ptr), the pointer table of T.make_tensor) with the
 * addresses of the G equal slices of tensor parameter TENSOR along its
 * first dimension, in every run: the host inputs' addresses for the CPU
 * executors, the device copies' for CUDA.  Tables are neither printed nor
 * checked (their values are addresses, different in each run). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../common/cli.h"
#include "run.h"

bool tlr_ptr_option(char *arg, run_opts *ro, int *rc) {
  char *eq = strchr(arg, '=');
  if (!eq || eq == arg || !eq[1]) {
    *rc = tl_cli_usage_error("malformed --ptr-table '%s': expected --ptr-table NAME=TENSOR", arg);
    return false;
  }
  if (ro->nptrs >= TLR_MAX_PTR_TABLES) {
    *rc = tl_cli_usage_error("too many --ptr-table options (at most 16): %s", arg);
    return false;
  }
  *eq = 0;
  ro->ptrs[ro->nptrs].name = arg;
  ro->ptrs[ro->nptrs++].tensor = eq + 1;
  return true;
}

static int param_named(const run_state *rs, const char *name) {
  for (int i = 0; i < rs->nparams; i++)
    if (rs->p[i].is_tensor && !strcmp(rs->p[i].name, name)) return i;
  return -1;
}

bool tlr_bind_ptr_tables(run_state *rs, const run_opts *ro) {
  if (ro->nptrs == 0) return true;
  if (!(rs->ptr_of = malloc(((size_t)rs->nparams + 1) * sizeof *rs->ptr_of))) return false;
  for (int i = 0; i < rs->nparams; i++) rs->ptr_of[i] = -1;
  for (int j = 0; j < ro->nptrs; j++) {
    const char *n = ro->ptrs[j].name, *t = ro->ptrs[j].tensor;
    int pi = param_named(rs, n), ti = param_named(rs, t);
    const char *why = pi < 0                                       ? "the kernel has no tensor parameter NAME"
                      : ti < 0                                     ? "the kernel has no tensor parameter TENSOR"
                      : rs->p[pi].is_output || rs->p[ti].is_output ? "an out_idx output is allocated by the call"
                      : rs->p[pi].ndim != 1 || rs->p[pi].dtype.code != TL_TYPE_INT || rs->p[pi].dtype.bits != 64
                          ? "NAME must be a 1-D int64 tensor (T.Tensor((G,), T.ptr))"
                      : pi == ti ? "NAME and TENSOR are the same tensor"
                                 : NULL;
    if (why) {
      fprintf(stderr, "<command line>: error: --ptr-table %s=%s: %s\n", n, t, why);
      return false;
    }
    rs->ptr_of[pi] = ti;
  }
  return true;
}

bool tlr_fill_ptr_tables(const run_state *rs, host_tensor *h, DLManagedTensor **dev, bool cuda) {
  for (int i = 0; rs->ptr_of && i < rs->nparams; i++) {
    int t = rs->ptr_of[i];
    if (t < 0) continue;
    int64_t g = h[i].shape[0];
    size_t bytes = h[t].elems * (size_t)tl_dtype_bytes(rs->p[t].dtype);
    if (g <= 0 || bytes % (size_t)g || h[t].t.strides) {
      fprintf(stderr, "tl-run: error: --ptr-table %s=%s: %zu bytes do not split into %lld equal compact slices\n",
              rs->p[i].name, rs->p[t].name, bytes, (long long)g);
      return false;
    }
    char *base = cuda ? dev[t]->dl_tensor.data : h[t].data;
    int64_t *tab = h[i].data;
    for (int64_t k = 0; k < g; k++) tab[k] = (int64_t)(intptr_t)(base + (size_t)k * (bytes / (size_t)g));
    if (!cuda) continue;
    tl_status st = tl_tensor_copy(rs->ctx, &dev[i]->dl_tensor, &h[i].t);
    if (st != TL_OK) {
      tl_cli_print_library_error(rs->ctx, st);
      return false;
    }
  }
  return true;
}
