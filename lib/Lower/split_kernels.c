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
 *     (TMA descriptors are per entry, and the ABI is shared);
 *   - the T.alloc_global workspaces of all the scopes (TileLang's
 *     flash_decoding allocates its partial results so, before the scopes)
 *     stand at the top of every stage's kernel body, the same buffers in the
 *     same order: every entry takes the same workspace pointers, which the
 *     runtime zeroes once per call, so a later stage reads what an earlier
 *     one wrote.
 *
 * First, a T.Kernel with T.sync_grid() at the top level of its body becomes
 * one T.Kernel per side of its barriers (split_grid.c), so a grid barrier is
 * a boundary between two stages (docs/language.md "Grid barrier").
 *
 * Requires: verified tile IR.  Guarantees: every prim_func has at most one
 * T.Kernel and no T.sync_grid().  A function with one T.Kernel and no
 * barrier is left as it is. */
#include <stdio.h>
#include <stdlib.h>
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

static bool is_workspace_alloc(const tl_stmt *s) {
  return s && s->kind == TL_STMT_ALLOC && s->u.alloc.buffer && s->u.alloc.buffer->scope == TL_SCOPE_GLOBAL &&
         s->u.alloc.buffer->zero_per_launch;
}

/* Kernel k with the workspace allocations ws[0..nws) at the top of its body
 * (in place of its own, which stand at its top: the elaborator puts them
 * there); NULL on OOM. */
static tl_stmt *with_workspaces(tl_module *m, const tl_stmt *k, tl_stmt **ws, int nws) {
  const tl_stmt *b = k->u.kernel.body;
  int nb = b && b->kind == TL_STMT_SEQ ? b->u.seq.n : b ? 1 : 0;
  tl_stmt **xs = tl_arena_alloc(&m->arena, sizeof(tl_stmt *) * (size_t)(nws + nb + 1));
  tl_stmt *r = tl_ir_stmt(m, k->loc, TL_STMT_KERNEL);
  if (!xs || !r) return NULL;
  int n = 0;
  for (int i = 0; i < nws; i++) xs[n++] = ws[i];
  for (int i = 0; i < nb; i++) {
    tl_stmt *x = b->kind == TL_STMT_SEQ ? b->u.seq.stmts[i] : (tl_stmt *)b;
    if (!is_workspace_alloc(x)) xs[n++] = x;
  }
  r->u.kernel = k->u.kernel;
  return (r->u.kernel.body = tl_ir_seq(m, k->loc, n, xs)) ? r : NULL;
}

bool tl_lower_split_kernels(tl_module *m, tl_primfunc *f, const tl_target *target, tl_diag *d) {
  (void)target;
  if (!tl_lower_split_sync_grid(m, f, d)) return false; /* T.sync_grid() → consecutive T.Kernel scopes */
  int n = count_kernels(f->body);
  if (n < 2) return true;
  const tl_stmt *body = f->body;
  TL_VEC(tl_stmt *) ws = {0}; /* the T.alloc_global workspaces of every scope, in order */
  for (int i = 0; i < body->u.seq.n; i++) {
    const tl_stmt *s = body->u.seq.stmts[i];
    if (s->kind != TL_STMT_KERNEL) {
      tl_error(d, s->loc, "a prim_func with several T.Kernel scopes holds nothing else at its top level");
      tl_vec_free(&ws);
      return false;
    }
    const tl_stmt *kb = s->u.kernel.body;
    for (int j = 0; kb && j < (kb->kind == TL_STMT_SEQ ? kb->u.seq.n : 1); j++) {
      tl_stmt *x = kb->kind == TL_STMT_SEQ ? kb->u.seq.stmts[j] : (tl_stmt *)kb;
      if (is_workspace_alloc(x) && !tl_vec_push(&ws, x)) {
        tl_vec_free(&ws);
        tl_error(d, f->loc, "out of memory splitting the T.Kernel scopes");
        return false;
      }
    }
  }
  int at = -1;
  for (int i = 0; i < m->nfuncs; i++)
    if (m->funcs[i] == f) at = i;
  if (at < 0) { /* not one of m's functions: nothing to insert into */
    tl_vec_free(&ws);
    return true;
  }
  tl_primfunc **funcs = tl_arena_alloc(&m->arena, sizeof(tl_primfunc *) * (size_t)(m->nfuncs + n - 1));
  tl_primfunc *st = tl_arena_alloc(&m->arena, sizeof(tl_primfunc) * (size_t)n);
  if (!funcs || !st) {
    tl_error(d, f->loc, "out of memory splitting the T.Kernel scopes");
    tl_vec_free(&ws);
    return false;
  }
  for (int k = 0; k < n; k++) {
    st[k] = *f;
    st[k].stage = k;
    st[k].body = ws.len ? with_workspaces(m, body->u.seq.stmts[k], ws.data, (int)ws.len) : body->u.seq.stmts[k];
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
          tl_vec_free(&ws);
          return false;
        }
    }
    if ((f->nparams > 0 && !st[k].params) || (f->ndynamic > 0 && !st[k].dynamic) || !st[k].name || !st[k].body) {
      tl_error(d, f->loc, "out of memory splitting the T.Kernel scopes");
      tl_vec_free(&ws);
      return false;
    }
  }
  tl_vec_free(&ws);
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
