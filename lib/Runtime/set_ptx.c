/* tl_kernel_set_ptx (include/tilelang/runtime.h): another build's PTX for a
 * compiled kernel, for timing two builds of one kernel in one process.
 *
 * The check: both texts must declare `.entry <name>(` with the same
 * parameter list, compared declaration by declaration with the parameter
 * names taken out (".param .align 128 .b8 main_param_3[128]" reads
 * ".param .align 128 .b8 [128]"); the launch packs k's parameters by k's
 * own metadata, so a list that differs would be read wrongly by the kernel.
 * PTX facts: the kernel-function parameter list syntax (PTX ISA §5.1.6.1
 * "Kernel Function Parameters", §11.1 .entry). */
#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#include "Runtime/kernel.h"
#include "Support/context.h"
#include "tilelang/runtime.h"

#define MAX_PARAMS 256
#define DECL_BYTES 160

/* The parameter declarations of `.entry name(...)` in ptx, names removed,
 * into decl[] (at most MAX_PARAMS); -1 when there is no such entry or its
 * list is malformed. */
static int entry_params(const char *ptx, const char *name, char (*decl)[DECL_BYTES]) {
  size_t nl = strlen(name);
  const char *p = ptx;
  while ((p = strstr(p, ".entry")) != NULL) {
    const char *q = p + 6;
    p = q;
    if (!isspace((unsigned char)*q)) continue;
    while (isspace((unsigned char)*q)) q++;
    if (strncmp(q, name, nl) != 0) continue;
    q += nl;
    while (isspace((unsigned char)*q)) q++;
    if (*q != '(') continue;
    q++;
    int n = 0;
    for (;;) {
      while (isspace((unsigned char)*q)) q++;
      if (*q == ')') return n;
      const char *e = q;
      while (*e && *e != ',' && *e != ')') e++;
      if (!*e || n >= MAX_PARAMS) return -1;
      /* tokens of [q, e): all but the last, then the last's "[N]" suffix */
      char buf[DECL_BYTES] = "";
      size_t at = 0;
      const char *t = q, *last = NULL, *last_end = NULL;
      while (t < e) {
        while (t < e && isspace((unsigned char)*t)) t++;
        if (t >= e) break;
        const char *te = t;
        while (te < e && !isspace((unsigned char)*te)) te++;
        if (last) {
          size_t len = (size_t)(last_end - last);
          if (at + len + 2 >= sizeof buf) return -1;
          memcpy(buf + at, last, len);
          at += len;
          buf[at++] = ' ';
        }
        last = t;
        last_end = te;
        t = te;
      }
      if (last) {
        const char *br = memchr(last, '[', (size_t)(last_end - last));
        if (br) {
          size_t len = (size_t)(last_end - br);
          if (at + len + 1 >= sizeof buf) return -1;
          memcpy(buf + at, br, len);
          at += len;
        }
      }
      while (at > 0 && buf[at - 1] == ' ') at--;
      buf[at] = 0;
      memcpy(decl[n++], buf, sizeof buf);
      q = *e == ',' ? e + 1 : e;
    }
  }
  return -1;
}

tl_status tl_kernel_set_ptx(tl_context *ctx, tl_kernel *k, const char *ptx) {
  if (!k) return tl_context_fail(ctx, TL_ERR_INVALID_ARGUMENT, "tl_kernel_set_ptx: argument 'k' is NULL");
  if (!ptx) return tl_context_fail(ctx, TL_ERR_INVALID_ARGUMENT, "tl_kernel_set_ptx: argument 'ptx' is NULL");
  if (!k->ptx || !*k->ptx)
    return tl_context_fail(ctx, TL_ERR_INVALID_ARGUMENT,
                           "tl_kernel_set_ptx: kernel '%s' has no PTX of its own (compiled with stop_after)",
                           k->name ? k->name : "?");
  for (int d = 0; k->slots && d < k->nslots; d++)
    if (k->slots[d].loaded)
      return tl_context_fail(ctx, TL_ERR_INVALID_ARGUMENT,
                             "tl_kernel_set_ptx: kernel '%s' is already loaded on cuda:%d (replace its PTX "
                             "before the first load or call)",
                             k->name, d);
  char(*mine)[DECL_BYTES] = calloc(MAX_PARAMS, DECL_BYTES);
  char(*theirs)[DECL_BYTES] = calloc(MAX_PARAMS, DECL_BYTES);
  char *copy = strdup(ptx);
  tl_status st = TL_OK;
  if (!mine || !theirs || !copy) {
    st = tl_context_fail(ctx, TL_ERR_NO_MEMORY, "out of memory");
    goto out;
  }
  int nm = entry_params(k->ptx, k->name, mine), nt = entry_params(ptx, k->name, theirs);
  if (nm < 0) {
    st = tl_context_fail(ctx, TL_ERR_INTERNAL, "tl_kernel_set_ptx: kernel '%s': its own PTX has no readable .entry",
                         k->name);
    goto out;
  }
  if (nt < 0) {
    st = tl_context_fail(ctx, TL_ERR_INVALID_ARGUMENT,
                         "tl_kernel_set_ptx: argument 'ptx': no `.entry %s(...)` with a readable parameter list",
                         k->name);
    goto out;
  }
  if (nt != nm) {
    st = tl_context_fail(ctx, TL_ERR_INVALID_ARGUMENT,
                         "tl_kernel_set_ptx: argument 'ptx': entry '%s' has %d parameters, expected %d (the "
                         "kernel's own)",
                         k->name, nt, nm);
    goto out;
  }
  for (int i = 0; i < nm; i++)
    if (strcmp(mine[i], theirs[i]) != 0) {
      st = tl_context_fail(ctx, TL_ERR_INVALID_ARGUMENT,
                           "tl_kernel_set_ptx: argument 'ptx': parameter %d of entry '%s' is `%s`, expected `%s`", i,
                           k->name, theirs[i], mine[i]);
      goto out;
    }
  free(k->ptx);
  k->ptx = copy;
  copy = NULL;
  free(k->cubin);
  k->cubin = NULL;
  k->cubin_size = 0;
out:
  free(copy);
  free(mine);
  free(theirs);
  return st;
}
