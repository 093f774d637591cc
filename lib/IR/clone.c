/* Module deep copy (tl_module_clone): an independent copy of a tile IR
 * module, so that one front-end run serves both lowering (which rewrites
 * its module in place) and the executors that need the tile IR as written
 * (the reference evaluator; lib/Driver).
 *
 * Algorithm: one recursive copy into the new module's arena with a map from
 * every old node (variable, buffer, expression, statement, location file
 * name) to its copy, entered before the node's children are copied, so that shared nodes stay shared and every variable and
 * buffer keeps one identity; names are interned again in the copy's table,
 * so that pointer equality of interned names holds within the copy.  The
 * copy shares nothing with the original and outlives it.
 * Requires: m as the front end makes it, or any module whose buffers carry
 * no layout (tl_buffer.layout belongs to lowering and is not copied: NULL in
 * the copy).  Guarantees: tl_module_equal(m, copy) and the same printed
 * text.  tl_stmt_clone_within runs the same copy inside one module, with
 * the caller's map deciding what is kept. */
#include <stddef.h>
#include <string.h>

#include "IR/tir.h"
#include "IR/visit.h"

typedef struct cloner {
  const tl_module *from;
  tl_module *to;
  tl_map done; /* old node → its copy */
  bool oom;
  bool fresh;  /* the last copy_of made a new copy */
  bool within; /* tl_stmt_clone_within: from == to, names and locations are kept */
} cloner;

static void *seen(cloner *c, const void *old) {
  bool found = false;
  void *v = tl_map_get(&c->done, old, &found);
  return found ? v : NULL;
}

static void *remember(cloner *c, const void *old, void *copy) {
  if (!copy || !tl_map_put(&c->done, old, copy)) {
    c->oom = true;
    return NULL;
  }
  return copy;
}

static void *alloc(cloner *c, size_t size) {
  void *p = tl_arena_alloc(&c->to->arena, size ? size : 1);
  if (!p) c->oom = true;
  return p;
}

static const char *name(cloner *c, const char *s) {
  if (!s || c->within) return s;
  const char *r = tl_intern_str(&c->to->names, s);
  if (!r) c->oom = true;
  return r;
}

/* Location file names point at the module's filename or interned text. */
static tl_loc loc(cloner *c, tl_loc l) {
  if (!l.file || c->within) return l;
  const char *f = seen(c, l.file);
  if (!f) f = remember(c, l.file, (void *)name(c, l.file));
  l.file = f;
  return l;
}

/* The copy of node old (size bytes, its tl_loc at byte loc_at) made so
 * far, or a new byte-for-byte copy, remembered, with its location remapped,
 * for the caller to fill in (c->fresh true); NULL for old NULL or on OOM. */
static void *copy_of(cloner *c, const void *old, size_t size, size_t loc_at) {
  c->fresh = false;
  if (!old) return NULL;
  void *r = seen(c, old);
  if (r) return r;
  if (!(r = alloc(c, size)) || !remember(c, old, r)) return NULL;
  memcpy(r, old, size);
  tl_loc *l = (tl_loc *)((char *)r + loc_at);
  *l = loc(c, *l);
  c->fresh = true;
  return r;
}
/* Sets r to copy_of node old, of the type r points to (tl_var, tl_buffer,
 * tl_expr, tl_stmt); true when the copy is new and is to be filled in. */
#define COPY_OF(c, old, r) ((r) = copy_of((c), (old), sizeof *(r), offsetof(__typeof__(*(r)), loc)), (c)->fresh)

static tl_expr *expr(cloner *c, const tl_expr *e);

static tl_expr **exprs(cloner *c, tl_expr *const *v, int n) {
  if (!v) return NULL;
  tl_expr **r = alloc(c, sizeof *r * (size_t)(n > 0 ? n : 1));
  for (int i = 0; r && i < n; i++) r[i] = expr(c, v[i]);
  return r;
}

static tl_var *var(cloner *c, const tl_var *v) {
  tl_var *r;
  if (COPY_OF(c, v, r)) r->name = name(c, v->name);
  return r;
}

static tl_buffer *buffer(cloner *c, const tl_buffer *b) {
  tl_buffer *r;
  if (!COPY_OF(c, b, r)) return r;
  r->name = name(c, b->name);
  r->layout = NULL;
  r->smem_renewed_in = NULL; /* lowering's, like the layout */
  r->shape = exprs(c, b->shape, b->ndim);
  r->strides = exprs(c, b->strides, b->ndim);
  r->init = expr(c, b->init);
  r->data = expr(c, b->data);
  return r;
}

static tl_expr *expr(cloner *c, const tl_expr *e) {
  tl_expr *r;
  if (!COPY_OF(c, e, r)) return r;
  switch (e->kind) {
  case TL_EXPR_INT:
  case TL_EXPR_FLOAT: break;
  case TL_EXPR_STRING: r->u.str = name(c, e->u.str); break;
  case TL_EXPR_VAR: r->u.var = var(c, e->u.var); break;
  case TL_EXPR_BINARY:
  case TL_EXPR_UNARY:
  case TL_EXPR_SELECT:
  case TL_EXPR_CAST:
  case TL_EXPR_RAMP:
  case TL_EXPR_BROADCAST: { /* r's operand fields still hold e's operands (copy_of) */
    tl_expr **slots[3];
    for (int i = 0, n = tl_expr_operand_slots(r, slots); i < n; i++) *slots[i] = expr(c, *slots[i]);
    break;
  }
  case TL_EXPR_LOAD:
    r->u.load.buffer = buffer(c, e->u.load.buffer);
    r->u.load.indices = exprs(c, e->u.load.indices, e->u.load.n);
    break;
  case TL_EXPR_CALL: r->u.call.args = exprs(c, e->u.call.args, e->u.call.n); break;
  case TL_EXPR_BUFFER: r->u.buffer = buffer(c, e->u.buffer); break;
  }
  return r;
}

static tl_stmt *stmt(cloner *c, const tl_stmt *s);

static void tile_args(cloner *c, tl_stmt *r, const tl_stmt *s) {
  int nargs = s->u.tile.nargs;
  if (s->u.tile.args) {
    r->u.tile.args = alloc(c, sizeof *r->u.tile.args * (size_t)(nargs > 0 ? nargs : 1));
    for (int i = 0; r->u.tile.args && i < nargs; i++) {
      const tl_operand *o = &s->u.tile.args[i];
      tl_operand *q = &r->u.tile.args[i];
      *q = *o;
      q->loc = loc(c, o->loc);
      q->expr = expr(c, o->expr);
      q->region.buffer = buffer(c, o->region.buffer);
      q->region.min = exprs(c, o->region.min, o->region.ndim);
      q->region.extent = exprs(c, o->region.extent, o->region.ndim);
    }
  }
  int op = s->u.tile.op;
  int nattrs = op >= 0 && op < TL_TILE_NUM_OPS ? tl_tile_ops[op].nattrs : 0;
  r->u.tile.attrs = exprs(c, s->u.tile.attrs, nattrs);
}

static tl_stmt *stmt(cloner *c, const tl_stmt *s) {
  tl_stmt *r;
  if (!COPY_OF(c, s, r)) return r;
  switch (s->kind) {
  case TL_STMT_SEQ:
    if (s->u.seq.stmts) {
      r->u.seq.stmts = alloc(c, sizeof(tl_stmt *) * (size_t)(s->u.seq.n > 0 ? s->u.seq.n : 1));
      for (int i = 0; r->u.seq.stmts && i < s->u.seq.n; i++) r->u.seq.stmts[i] = stmt(c, s->u.seq.stmts[i]);
    }
    break;
  case TL_STMT_FOR: {
    int n = s->u.loop.nvars;
    if (s->u.loop.vars) {
      r->u.loop.vars = alloc(c, sizeof(tl_var *) * (size_t)(n > 0 ? n : 1));
      for (int i = 0; r->u.loop.vars && i < n; i++) r->u.loop.vars[i] = var(c, s->u.loop.vars[i]);
    }
    r->u.loop.mins = exprs(c, s->u.loop.mins, n);
    r->u.loop.extents = exprs(c, s->u.loop.extents, n);
    r->u.loop.step = expr(c, s->u.loop.step);
    r->u.loop.body = stmt(c, s->u.loop.body);
    if (s->u.loop.nsched > 0) { /* the schedule (ints) */
      size_t nb = sizeof(int) * (size_t)s->u.loop.nsched;
      r->u.loop.order = alloc(c, nb);
      r->u.loop.stage = alloc(c, nb);
      if (r->u.loop.order) memcpy(r->u.loop.order, s->u.loop.order, nb);
      if (r->u.loop.stage) memcpy(r->u.loop.stage, s->u.loop.stage, nb);
    }
    break;
  }
  case TL_STMT_KERNEL:
    for (int i = 0; i < 3; i++) {
      r->u.kernel.grid[i] = expr(c, s->u.kernel.grid[i]);
      r->u.kernel.block_vars[i] = var(c, s->u.kernel.block_vars[i]);
    }
    r->u.kernel.threads = expr(c, s->u.kernel.threads);
    r->u.kernel.body = stmt(c, s->u.kernel.body);
    break;
  case TL_STMT_ALLOC: r->u.alloc.buffer = buffer(c, s->u.alloc.buffer); break;
  case TL_STMT_STORE:
    r->u.store.buffer = buffer(c, s->u.store.buffer);
    r->u.store.indices = exprs(c, s->u.store.indices, s->u.store.n);
    r->u.store.value = expr(c, s->u.store.value);
    break;
  case TL_STMT_IF:
    r->u.ifs.cond = expr(c, s->u.ifs.cond);
    r->u.ifs.then_s = stmt(c, s->u.ifs.then_s);
    r->u.ifs.else_s = stmt(c, s->u.ifs.else_s);
    break;
  case TL_STMT_WHILE:
    r->u.whiles.cond = expr(c, s->u.whiles.cond);
    r->u.whiles.body = stmt(c, s->u.whiles.body);
    break;
  case TL_STMT_LET:
    r->u.let.var = var(c, s->u.let.var);
    r->u.let.value = expr(c, s->u.let.value);
    break;
  case TL_STMT_EVAL: r->u.eval.value = expr(c, s->u.eval.value); break;
  case TL_STMT_TILE: tile_args(c, r, s); break;
  }
  return r;
}

static tl_primfunc *func(cloner *c, const tl_primfunc *f) {
  if (!f) return NULL;
  tl_primfunc *r = alloc(c, sizeof *r);
  if (!r) return NULL;
  *r = *f;
  r->name = name(c, f->name);
  r->loc = loc(c, f->loc);
  if (f->params) {
    r->params = alloc(c, sizeof *r->params * (size_t)(f->nparams > 0 ? f->nparams : 1));
    for (int i = 0; r->params && i < f->nparams; i++) {
      r->params[i] = f->params[i];
      r->params[i].buffer = buffer(c, f->params[i].buffer);
      r->params[i].var = var(c, f->params[i].var);
    }
  }
  if (f->dynamic) {
    r->dynamic = alloc(c, sizeof(tl_var *) * (size_t)(f->ndynamic > 0 ? f->ndynamic : 1));
    for (int i = 0; r->dynamic && i < f->ndynamic; i++) r->dynamic[i] = var(c, f->dynamic[i]);
  }
  if (f->out_idx) {
    r->out_idx = alloc(c, sizeof(int) * (size_t)(f->nout > 0 ? f->nout : 1));
    if (r->out_idx && f->nout > 0) memcpy(r->out_idx, f->out_idx, sizeof(int) * (size_t)f->nout);
  }
  tl_annot **tail = &r->annots; /* the annotations, in order (plain bytes) */
  *tail = NULL;
  for (const tl_annot *a = f->annots; a; a = a->next) {
    tl_annot *x = alloc(c, sizeof *x);
    void *data = alloc(c, a->size ? a->size : 1);
    if (!x || !data) break;
    memcpy(data, a->data, a->size);
    *x = (tl_annot){.key = a->key, .size = a->size, .data = data};
    *tail = x;
    tail = &x->next;
  }
  r->body = stmt(c, f->body);
  return r;
}

tl_module *tl_module_clone(const tl_module *m) {
  if (!m) return NULL;
  cloner c = {.from = m, .to = tl_module_new()};
  if (!c.to) return NULL;
  tl_map_init(&c.done);
  if (m->filename) {
    c.to->filename = tl_arena_strdup(&c.to->arena, m->filename);
    if (!c.to->filename || !remember(&c, m->filename, (void *)c.to->filename)) c.oom = true;
  }
  if (m->source) {
    size_t n = strlen(m->source);
    c.to->source = tl_arena_alloc(&c.to->arena, n + 1);
    if (c.to->source) memcpy(c.to->source, m->source, n + 1);
    else c.oom = true;
  }
  c.to->nfuncs = m->nfuncs;
  if (m->funcs) {
    c.to->funcs = alloc(&c, sizeof(tl_primfunc *) * (size_t)(m->nfuncs > 0 ? m->nfuncs : 1));
    for (int i = 0; c.to->funcs && i < m->nfuncs; i++) c.to->funcs[i] = func(&c, m->funcs[i]);
  }
  tl_map_free(&c.done);
  if (c.oom || c.to->arena.oom) {
    tl_module_destroy(c.to);
    return NULL;
  }
  return c.to;
}

tl_stmt *tl_stmt_clone_within(tl_module *m, const tl_stmt *s, tl_map *done) {
  if (!m || !s || !done) return NULL;
  cloner c = {.from = m, .to = m, .done = *done, .within = true};
  tl_stmt *r = stmt(&c, s);
  *done = c.done; /* the map may have grown */
  return c.oom || m->arena.oom ? NULL : r;
}
