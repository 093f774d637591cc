/* split-kernels (tile IR, the first pass): a prim_func whose body holds
 * several T.Kernel scopes, one after another (the verifier's rule), becomes
 * one prim_func per scope, the stages of one launch sequence
 * (docs/language.md "Several T.Kernel scopes"):
 *
 *   - stage 0 keeps the function's name, stage k >= 1 is named
 *     "<name>_kernel_<k>" and stands right after stage k - 1 in m->funcs,
 *     with tl_primfunc.stage = k;
 *   - every stage has the function's parameters, dynamic symbols, out_idx
 *     and pass configs (so every entry point has the same kernel ABI and the
 *     runtime binds a call once for all of them), and one T.Kernel as body;
 *   - a stage takes no tensor maps: tl.disable_tma_lower is set on each
 *     (TMA descriptors are per entry, and the ABI is shared), and a
 *     T.alloc_global in such a function is refused at its line (a kernel
 *     workspace is one launch's).
 *
 * Requires: verified tile IR.  Guarantees: every prim_func has at most one
 * T.Kernel.  A function with one T.Kernel is left as it is. */
#include <stdio.h>
#include <string.h>

#include "Lower/lower_internal.h"

static int count_kernels(const tl_stmt *body) {
  if (!body) return 0;
  if (body->kind == TL_STMT_KERNEL) return 1;
  if (body->kind != TL_STMT_SEQ) return 0;
  int n = 0;
  for (int i = 0; i < body->u.seq.n; i++) n += body->u.seq.stmts[i]->kind == TL_STMT_KERNEL;
  return n;
}

/* The first T.alloc_global of s (a workspace at the top of a kernel body). */
static const tl_stmt *first_global_alloc(const tl_stmt *s) {
  if (!s) return NULL;
  if (s->kind == TL_STMT_ALLOC && s->u.alloc.buffer && s->u.alloc.buffer->scope == TL_SCOPE_GLOBAL) return s;
  if (s->kind == TL_STMT_KERNEL) return first_global_alloc(s->u.kernel.body);
  if (s->kind != TL_STMT_SEQ) return NULL;
  for (int i = 0; i < s->u.seq.n; i++) {
    const tl_stmt *a = first_global_alloc(s->u.seq.stmts[i]);
    if (a) return a;
  }
  return NULL;
}

bool tl_lower_split_kernels(tl_module *m, tl_primfunc *f, const tl_target *target, tl_diag *d) {
  (void)target;
  int n = count_kernels(f->body);
  if (n < 2) return true;
  const tl_stmt *body = f->body;
  for (int i = 0; i < body->u.seq.n; i++) {
    const tl_stmt *s = body->u.seq.stmts[i];
    if (s->kind != TL_STMT_KERNEL) {
      tl_error(d, s->loc, "a prim_func with several T.Kernel scopes holds nothing else at its top level");
      return false;
    }
    const tl_stmt *a = first_global_alloc(s);
    if (a) {
      tl_error(d, a->loc,
               "T.alloc_global in a prim_func with several T.Kernel scopes is not supported yet; pass the "
               "buffer as a tensor parameter");
      return false;
    }
  }
  int at = -1;
  for (int i = 0; i < m->nfuncs; i++)
    if (m->funcs[i] == f) at = i;
  if (at < 0) return true; /* not one of m's functions: nothing to insert into */
  tl_primfunc **funcs = tl_arena_alloc(&m->arena, sizeof(tl_primfunc *) * (size_t)(m->nfuncs + n - 1));
  tl_primfunc *st = tl_arena_alloc(&m->arena, sizeof(tl_primfunc) * (size_t)n);
  if (!funcs || !st) {
    tl_error(d, f->loc, "out of memory splitting the T.Kernel scopes");
    return false;
  }
  for (int k = 0; k < n; k++) {
    st[k] = *f;
    st[k].stage = k;
    st[k].body = body->u.seq.stmts[k];
    st[k].pass_configs.disable_tma_lower = true;
    if (f->nparams > 0) { /* each stage its own array (a pass may rewrite it), the same buffers and vars */
      st[k].params = tl_arena_alloc(&m->arena, sizeof(tl_param) * (size_t)f->nparams);
      if (st[k].params) memcpy(st[k].params, f->params, sizeof(tl_param) * (size_t)f->nparams);
    }
    if (f->ndynamic > 0) {
      st[k].dynamic = tl_arena_alloc(&m->arena, sizeof(tl_var *) * (size_t)f->ndynamic);
      if (st[k].dynamic) memcpy(st[k].dynamic, f->dynamic, sizeof(tl_var *) * (size_t)f->ndynamic);
    }
    if (k > 0) {
      char nm[256];
      snprintf(nm, sizeof nm, "%s_kernel_%d", f->name ? f->name : "main", k);
      st[k].name = tl_intern_str(&m->names, nm);
      st[k].loc = body->u.seq.stmts[k]->loc;
      for (int i = 0; st[k].name && i < m->nfuncs; i++)
        if (m->funcs[i]->name == st[k].name) { /* names are interned */
          tl_error(d, st[k].loc, "this T.Kernel's entry point would be named '%s', the name of another prim_func",
                   st[k].name);
          return false;
        }
    }
    if ((f->nparams > 0 && !st[k].params) || (f->ndynamic > 0 && !st[k].dynamic) || !st[k].name) {
      tl_error(d, f->loc, "out of memory splitting the T.Kernel scopes");
      return false;
    }
  }
  int j = 0;
  for (int i = 0; i < m->nfuncs; i++) {
    if (i != at) {
      funcs[j++] = m->funcs[i];
      continue;
    }
    for (int k = 0; k < n; k++) funcs[j++] = &st[k];
  }
  m->funcs = funcs;
  m->nfuncs = j;
  return true;
}
