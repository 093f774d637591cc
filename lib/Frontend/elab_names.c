/* Elaborator: IR names of a prim_func made unique after @T.macro inlining.
 *
 * A macro's body is elaborated in its own scope (its free names are those of
 * its definition, as in TileLang), so the lets, loop variables and
 * allocations it declares may have the names of IR names live where it is
 * called, or of those of an earlier call of the same macro in the same
 * block.  The tile IR allows no shadowing (lib/IR/verify.c), so the later
 * declaration is renamed NAME_1, NAME_2, ... (the first suffix used nowhere
 * in the function).  Runs only on prim_funcs that inlined a macro; a
 * prim_func without one has no such clash (the elaborator reports
 * redefinitions itself), so its IR is unchanged.
 *
 * The elaborator's own lets (a tuple assignment's tuple_item, elab_stmt.c) are
 * renamed the same way.
 *
 * Algorithm: a pre-pass collects every declared name; then a walk in
 * statement order with a stack of live declarations (the verifier's scopes:
 * a loop's and a kernel's variables for their body, a let and an allocation
 * for the rest of their sequence, branches in their own scope) renames a
 * declaration whose name is live.  Recursion is bounded by MAX_DEPTH. */
#include "Frontend/elab_impl.h"

typedef struct namer {
  elab *E;
  tl_map all;  /* interned name -> 1: every name declared in the function */
  tl_map live; /* interned name -> live count */
  TL_VEC(const char *) stack;
} namer;

static void collect(namer *n, const tl_stmt *s, int depth);

static void note_name(namer *n, const char *name) {
  const char *c = name ? tl_intern_str(&n->E->m->names, name) : NULL;
  if (c && !tl_map_put(&n->all, c, (void *)1)) oom(n->E);
}

static void collect(namer *n, const tl_stmt *s, int depth) {
  if (!s || depth > MAX_DEPTH) return;
  switch (s->kind) {
  case TL_STMT_SEQ:
    for (int i = 0; i < s->u.seq.n; i++) collect(n, s->u.seq.stmts[i], depth + 1);
    break;
  case TL_STMT_FOR:
    for (int i = 0; i < s->u.loop.nvars; i++) note_name(n, s->u.loop.vars[i]->name);
    collect(n, s->u.loop.body, depth + 1);
    break;
  case TL_STMT_KERNEL:
    for (int i = 0; i < s->u.kernel.ngrid; i++)
      if (s->u.kernel.block_vars[i]) note_name(n, s->u.kernel.block_vars[i]->name);
    collect(n, s->u.kernel.body, depth + 1);
    break;
  case TL_STMT_ALLOC: note_name(n, s->u.alloc.buffer->name); break;
  case TL_STMT_LET: note_name(n, s->u.let.var->name); break;
  case TL_STMT_IF:
    collect(n, s->u.ifs.then_s, depth + 1);
    collect(n, s->u.ifs.else_s, depth + 1);
    break;
  case TL_STMT_WHILE: collect(n, s->u.whiles.body, depth + 1); break;
  default: break;
  }
}

/* Declares *name (renaming it when a live name has it) for the current scope. */
static void declare(namer *n, const char **name) {
  elab *E = n->E;
  const char *c = *name ? tl_intern_str(&E->m->names, *name) : NULL;
  if (!c) return;
  bool found = false;
  tl_map_get(&n->live, c, &found);
  if (found) {
    const char *cand = c;
    for (int k = 1; k < 100000; k++) {
      cand = tl_intern_str(&E->m->names, tprintf(E, "%s_%d", c, k));
      if (!cand) return (void)oom(E);
      bool used = false;
      tl_map_get(&n->all, cand, &used);
      if (!used) break;
    }
    if (!tl_map_put(&n->all, cand, (void *)1)) return (void)oom(E);
    *name = c = cand;
  }
  if (!tl_map_put(&n->live, c, (void *)1) || !tl_vec_push(&n->stack, c)) oom(E);
}

static void pop_to(namer *n, size_t mark) {
  while (n->stack.len > mark) tl_map_remove(&n->live, tl_vec_pop(&n->stack));
}

static void walk(namer *n, tl_stmt *s, int depth) {
  if (!s || depth > MAX_DEPTH || n->E->oom) return;
  size_t mark = n->stack.len;
  switch (s->kind) {
  case TL_STMT_SEQ:
    for (int i = 0; i < s->u.seq.n; i++) walk(n, s->u.seq.stmts[i], depth + 1);
    pop_to(n, mark);
    break;
  case TL_STMT_FOR:
    for (int i = 0; i < s->u.loop.nvars; i++) declare(n, &s->u.loop.vars[i]->name);
    walk(n, s->u.loop.body, depth + 1);
    pop_to(n, mark);
    break;
  case TL_STMT_KERNEL:
    for (int i = 0; i < s->u.kernel.ngrid; i++)
      if (s->u.kernel.block_vars[i]) declare(n, &s->u.kernel.block_vars[i]->name);
    walk(n, s->u.kernel.body, depth + 1);
    pop_to(n, mark);
    break;
  case TL_STMT_ALLOC: declare(n, &s->u.alloc.buffer->name); break; /* rest of the sequence */
  case TL_STMT_LET: declare(n, &s->u.let.var->name); break;
  case TL_STMT_IF:
    walk(n, s->u.ifs.then_s, depth + 1);
    pop_to(n, mark);
    walk(n, s->u.ifs.else_s, depth + 1);
    pop_to(n, mark);
    break;
  case TL_STMT_WHILE:
    walk(n, s->u.whiles.body, depth + 1);
    pop_to(n, mark);
    break;
  default: break;
  }
}

void tl_el_unique_names(elab *E, tl_primfunc *pf) {
  namer n = {.E = E};
  tl_map_init(&n.all);
  tl_map_init(&n.live);
  for (int i = 0; i < pf->ndynamic; i++) note_name(&n, pf->dynamic[i]->name);
  for (int i = 0; i < pf->nparams; i++)
    note_name(&n, pf->params[i].kind == TL_PARAM_TENSOR ? pf->params[i].buffer->name : pf->params[i].var->name);
  collect(&n, pf->body, 0);
  for (int i = 0; i < pf->ndynamic; i++) declare(&n, &pf->dynamic[i]->name);
  for (int i = 0; i < pf->nparams; i++) {
    if (pf->params[i].kind == TL_PARAM_TENSOR) declare(&n, &pf->params[i].buffer->name);
    else declare(&n, &pf->params[i].var->name);
  }
  walk(&n, pf->body, 0);
  tl_vec_free(&n.stack);
  tl_map_free(&n.all);
  tl_map_free(&n.live);
}
