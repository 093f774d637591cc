/* The tile-IR verifier (lib/IR/tir.h: tl_verify_module).
 *
 * Role: checks every structural and semantic rule of the tile IR that does not
 * need layouts or a target: names and scopes, kernel structure, shapes, index
 * counts, loop extents, tile-op operand and attribute forms; each tile op's own
 * rule (shapes, scopes, dtypes) is the verify hook of its op-table entry
 * (ops.c).  It runs after parsing, after the builder, and after every pass
 * under --verify-each, so lowered IR (thread variables, vector loads, new
 * allocations) must pass too.
 *
 * Algorithm: one pre-order walk per function with a scope stack.  Entering a
 * SEQ, loop body, branch or kernel body pushes a mark; ALLOC and LET declare
 * for the rest of their block, loop and block variables for their body; the
 * stack pops to the mark on leaving.  Three hash maps make lookups O(1): a
 * name → definition map (for "redefinition of 'X'"), and live counts of
 * variables and buffers (for uses outside their scope).  A pre-pass records
 * which T.Kernel allocates each buffer, so that a use outside its scope can
 * say why.  Names are canonicalised through a private intern table, so the
 * check does not depend on how the IR's producer interned them.  Recursion is
 * bounded by TL_VERIFY_MAX_DEPTH (an error beyond it).  Each out-of-scope
 * buffer or variable is reported once. */
#include "IR/out_idx.h"
#include "IR/sync_grid.h"
#include "IR/tir.h"
#include "IR/visit.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define TL_VERIFY_MAX_DEPTH 1000

typedef struct scope_entry {
  const char *name; /* canonical, or NULL when not named (after a redefinition) */
  const tl_var *var;
  const tl_buffer *buf;
} scope_entry;

typedef struct vstate {
  tl_verify_ctx vc;
  tl_arena arena;
  tl_intern names;
  TL_VEC(scope_entry) stack;
  tl_map defs;                 /* canonical name → tl_loc* of its definition */
  tl_map var_live;             /* tl_var* → live count */
  tl_map buf_live;             /* tl_buffer* → live count */
  tl_map alloc_in;             /* tl_buffer* → kernel stmt that allocates it (NULL: none) */
  tl_map reported;             /* var/buffer → already reported out of scope */
  const tl_stmt *kernel;       /* innermost open kernel */
  const tl_stmt *first_kernel; /* first kernel of the function */
  const tl_stmt *body;         /* the function's body */
  bool oom, deep;
} vstate;

static void verr(vstate *vs, tl_loc loc, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void verr(vstate *vs, tl_loc loc, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  tl_diag_vreport(vs->vc.diag, TL_DIAG_ERROR, loc, fmt, ap);
  va_end(ap);
  vs->vc.errors++;
}

static void set_oom(vstate *vs) {
  if (!vs->oom) verr(vs, TL_LOC_NONE, "out of memory while verifying");
  vs->oom = true;
}

static tl_loc pick(tl_loc preferred, tl_loc fallback) { return preferred.file ? preferred : fallback; }

static bool is_index_dtype(tl_dtype t) { return tl_dtype_is_int(t); }
static bool is_shape_dtype(tl_dtype t) {
  return t.code == TL_TYPE_INT && (t.bits == 32 || t.bits == 64) && t.lanes == 1;
}

static const char *alloc_spelling(tl_scope s) {
  switch (s) {
  case TL_SCOPE_SHARED_DYN:
  case TL_SCOPE_SHARED: return "T.alloc_shared";
  case TL_SCOPE_FRAGMENT: return "T.alloc_fragment";
  case TL_SCOPE_LOCAL: return "T.alloc_local";
  case TL_SCOPE_LOCAL_VAR: return "T.alloc_var";
  case TL_SCOPE_GLOBAL: break;
  }
  return "T.alloc_global";
}

/* ------------------------------------------------------------ live counts */
static void count_add(vstate *vs, tl_map *m, const void *key, int delta) {
  if (!key) return;
  bool found = false;
  intptr_t n = (intptr_t)tl_map_get(m, key, &found);
  n += delta;
  if (n <= 0) {
    if (found) tl_map_remove(m, key);
  } else if (!tl_map_put(m, key, (void *)n)) {
    set_oom(vs);
  }
}
static bool is_live(const tl_map *m, const void *key) {
  bool found = false;
  tl_map_get(m, key, &found);
  return found;
}

/* Declares name (for var or buf) in the current scope. */
static void declare(vstate *vs, const char *name, tl_loc loc, const tl_var *var, const tl_buffer *buf) {
  const char *c = name ? tl_intern_str(&vs->names, name) : NULL;
  if (name && !c) set_oom(vs);
  if (c) {
    bool found = false;
    tl_loc *prev = tl_map_get(&vs->defs, c, &found);
    if (found) {
      verr(vs, loc, "redefinition of '%s'", c);
      tl_note(vs->vc.diag, prev ? *prev : TL_LOC_NONE, "previous definition of '%s' is here", c);
      c = NULL;
    } else {
      tl_loc *l = tl_arena_alloc(&vs->arena, sizeof *l);
      if (!l || !tl_map_put(&vs->defs, c, l)) {
        set_oom(vs);
        c = NULL;
      } else {
        *l = loc;
      }
    }
  }
  scope_entry e = {c, var, buf};
  if (!tl_vec_push(&vs->stack, e)) {
    set_oom(vs);
    return;
  }
  count_add(vs, &vs->var_live, var, 1);
  count_add(vs, &vs->buf_live, buf, 1);
}

static void pop_to(vstate *vs, size_t mark) {
  while (vs->stack.len > mark) {
    scope_entry e = tl_vec_pop(&vs->stack);
    if (e.name) tl_map_remove(&vs->defs, e.name);
    count_add(vs, &vs->var_live, e.var, -1);
    count_add(vs, &vs->buf_live, e.buf, -1);
  }
}

/* ---------------------------------------------------------------- uses */
static bool once(vstate *vs, const void *key) {
  if (is_live(&vs->reported, key)) return false;
  if (!tl_map_put(&vs->reported, key, (void *)1)) set_oom(vs);
  return true;
}

static int top_index(const tl_stmt *body, const tl_stmt *k);

static bool check_buffer_use(vstate *vs, const tl_buffer *b, tl_loc loc) {
  if (!b) {
    verr(vs, loc, "malformed IR: missing buffer");
    return false;
  }
  if (is_live(&vs->buf_live, b)) return true;
  bool found = false;
  const tl_stmt *k = tl_map_get(&vs->alloc_in, b, &found);
  /* a T.alloc_global of an earlier T.Kernel scope of the prim_func: the launch sequence's workspace
   * (lib/Lower/split_kernels.c gives it to every stage) */
  if (found && k && vs->kernel && b->scope == TL_SCOPE_GLOBAL && b->zero_per_launch && top_index(vs->body, k) >= 0 &&
      top_index(vs->body, k) < top_index(vs->body, vs->kernel))
    return true;
  if (!once(vs, b)) return false;
  if (!found)
    verr(vs, loc, "buffer '%s' is neither a parameter of '%s' nor allocated in it", b->name,
         vs->vc.func->name ? vs->vc.func->name : "?");
  else if (k != vs->kernel) verr(vs, loc, "'%s' is used outside the T.Kernel that allocates it", b->name);
  else verr(vs, loc, "'%s' is used outside the scope of its allocation", b->name);
  if (found) tl_note(vs->vc.diag, b->loc, "'%s' is allocated here", b->name);
  return false;
}

static bool check_var_use(vstate *vs, const tl_var *v, tl_loc loc) {
  if (!v) {
    verr(vs, loc, "malformed IR: missing variable");
    return false;
  }
  if (v->kind == TL_VAR_THREAD) return true; /* bound implicitly after lowering */
  if (is_live(&vs->var_live, v)) return true;
  if (!once(vs, v)) return false;
  if (v->kind == TL_VAR_DYNAMIC)
    verr(vs, loc, "dynamic dimension '%s' is not declared by '%s'", v->name,
         vs->vc.func->name ? vs->vc.func->name : "?");
  else verr(vs, loc, "variable '%s' is used outside its scope", v->name);
  return false;
}

static void check_index_count(vstate *vs, const tl_buffer *b, int n, tl_loc loc) {
  if (!b || n == b->ndim) return;
  verr(vs, loc, "'%s' has %d dimension%s but is indexed with %d ind%s", b->name, b->ndim, b->ndim == 1 ? "" : "s", n,
       n == 1 ? "ex" : "ices");
}

/* ----------------------------------------------------------- expressions */
static void check_expr(vstate *vs, const tl_expr *e, tl_loc at, int depth);

/* A T.make_tensor view (tl_buffer.data): a global buffer inside a T.Kernel
 * over a scalar 64-bit integer address, without an initial value. */
static void check_view(vstate *vs, const tl_buffer *b, tl_loc loc) {
  const tl_expr *a = b->data;
  if (b->scope != TL_SCOPE_GLOBAL) verr(vs, loc, "'%s': T.make_tensor makes a global buffer", b->name);
  else if (!vs->kernel) verr(vs, loc, "'%s': T.make_tensor must be inside a T.Kernel", b->name);
  if (!tl_dtype_is_int(a->dtype) || a->dtype.bits != 64 || a->dtype.lanes > 1)
    verr(vs, a->loc, "'%s': the address of T.make_tensor must be a scalar int64 or uint64, got %s", b->name,
         tl_dtype_name(a->dtype));
  if (b->init) verr(vs, loc, "'%s': a T.make_tensor view has no initial value", b->name);
  check_expr(vs, a, loc, 1);
}

static void check_index(vstate *vs, const tl_expr *e, tl_loc at, int depth, const char *what) {
  check_expr(vs, e, at, depth);
  if (e && e->kind != TL_EXPR_STRING && !is_index_dtype(e->dtype))
    verr(vs, pick(e->loc, at), "%s must be an integer, got %s", what, tl_dtype_name(e->dtype));
}

/* The guard of check_expr and check_stmt: a missing node (what: "expression"
 * or "statement") is malformed IR; nesting deeper than TL_VERIFY_MAX_DEPTH
 * is reported once per function and the walk goes no deeper.  True when
 * the node is to be checked. */
static bool enter(vstate *vs, const void *node, tl_loc loc, int depth, const char *what) {
  if (!node) {
    verr(vs, loc, "malformed IR: missing %s", what);
    return false;
  }
  if (depth <= TL_VERIFY_MAX_DEPTH) return true;
  if (!vs->deep) verr(vs, loc, "%s nesting exceeds %d levels", what, TL_VERIFY_MAX_DEPTH);
  vs->deep = true;
  return false;
}

/* T.device_assert_at(cond, msg, where): cond a scalar bool, msg and where
 * string literals (docs/language.md "T.device_assert"). */
static void check_device_assert(vstate *vs, const tl_expr *e, tl_loc loc) {
  tl_expr *const *a = e->u.call.args;
  if (a[0] && (a[0]->dtype.code != TL_TYPE_BOOL || a[0]->dtype.lanes != 1))
    verr(vs, loc, "T.device_assert_at: the condition must be a scalar bool, got %s", tl_dtype_name(a[0]->dtype));
  for (int i = 1; i < 3; i++)
    if (a[i] && a[i]->kind != TL_EXPR_STRING)
      verr(vs, loc, "T.device_assert_at: the %s must be a string literal", i == 1 ? "message" : "location");
}

static void check_expr(vstate *vs, const tl_expr *e, tl_loc at, int depth) {
  tl_loc loc = e ? pick(e->loc, at) : at;
  if (!enter(vs, e, loc, depth, "expression")) return;
  switch (e->kind) {
  case TL_EXPR_INT:
  case TL_EXPR_FLOAT: return;
  case TL_EXPR_STRING: verr(vs, loc, "a string cannot be used as a value here"); return;
  case TL_EXPR_VAR: check_var_use(vs, e->u.var, loc); return;
  case TL_EXPR_BINARY:
  case TL_EXPR_UNARY:
  case TL_EXPR_SELECT:
  case TL_EXPR_CAST:
  case TL_EXPR_RAMP:
  case TL_EXPR_BROADCAST: {
    const tl_expr *ops[3];
    for (int i = 0, n = tl_expr_operands(e, ops); i < n; i++) check_expr(vs, ops[i], loc, depth + 1);
    return;
  }
  case TL_EXPR_LOAD:
    if (!check_buffer_use(vs, e->u.load.buffer, loc)) return;
    check_index_count(vs, e->u.load.buffer, e->u.load.n, loc);
    for (int i = 0; i < e->u.load.n; i++)
      check_index(vs, e->u.load.indices ? e->u.load.indices[i] : NULL, loc, depth + 1, "an index");
    return;
  case TL_EXPR_CALL: {
    int op = e->u.call.op;
    if (op < 0 || op >= tl_num_intrinsics) {
      verr(vs, loc, "malformed IR: intrinsic index %d", op);
      return;
    }
    const tl_intrinsic *in = &tl_intrinsics[op];
    if (e->u.call.n < in->min_args || (in->max_args >= 0 && e->u.call.n > in->max_args)) {
      if (in->min_args == in->max_args)
        verr(vs, loc, "T.%s takes %d argument%s, got %d", in->name, in->min_args, in->min_args == 1 ? "" : "s",
             e->u.call.n);
      else verr(vs, loc, "T.%s takes %d to %d arguments, got %d", in->name, in->min_args, in->max_args, e->u.call.n);
    }
    for (int i = 0; i < e->u.call.n; i++) {
      const tl_expr *a = e->u.call.args ? e->u.call.args[i] : NULL;
      if (a && a->kind == TL_EXPR_STRING) continue; /* a dtype name: T.infinity("float16") */
      check_expr(vs, a, loc, depth + 1);
    }
    if (op == TL_INTRIN_DEVICE_ASSERT && e->u.call.n == 3 && e->u.call.args) check_device_assert(vs, e, loc);
    if (op == TL_INTRIN_REINTERPRET && e->u.call.n == 2 && e->u.call.args && e->u.call.args[1] &&
        !tl_reinterpret_ok(e->dtype, e->u.call.args[1]->dtype))
      verr(vs, loc, "T.reinterpret: %s has %d bits, %s has %d (they must agree; bool has no bits to reinterpret)",
           tl_dtype_name(e->u.call.args[1]->dtype), tl_dtype_bytes(e->u.call.args[1]->dtype) * 8,
           tl_dtype_name(e->dtype), tl_dtype_bytes(e->dtype) * 8);
    return;
  }
  case TL_EXPR_BUFFER: check_buffer_use(vs, e->u.buffer, loc); return;
  }
  verr(vs, loc, "malformed IR: expression kind %d", (int)e->kind);
}

/* ---------------------------------------------------------------- shapes */
/* The size limits that keep the compiler's and the executors' size and index
 * arithmetic inside int64: a global tensor whose constant dims
 * make more than 2^63 - 1 bytes, or an on-chip buffer (shared, fragment,
 * local) of more than 2^31 - 1 bytes (far beyond any GPU's shared memory or
 * register file), is an error at its declaration.  Dynamic dims are checked
 * at call time by the runtime. */
static void check_size(vstate *vs, const tl_buffer *b) {
  int64_t n = 1, v, bytes;
  bool ovf = false;
  for (int d = 0; d < b->ndim; d++)
    if (b->shape[d] && tl_expr_is_const_int(b->shape[d], &v) && v > 0) ovf |= __builtin_mul_overflow(n, v, &n);
  int64_t eb = (int64_t)tl_dtype_bytes(b->dtype) * (b->dtype.lanes > 1 ? b->dtype.lanes : 1);
  ovf |= __builtin_mul_overflow(n, eb, &bytes);
  bool global = b->scope == TL_SCOPE_GLOBAL;
  if (!ovf && (global || bytes <= INT32_MAX)) return;
  tl_strbuf dims = {0};
  for (int d = 0; d < b->ndim; d++) {
    if (b->shape[d] && tl_expr_is_const_int(b->shape[d], &v))
      tl_strbuf_printf(&dims, "%s%lld", d ? ", " : "", (long long)v);
    else tl_strbuf_printf(&dims, "%s?", d ? ", " : "");
  }
  if (global)
    verr(vs, b->loc,
         "tensor '%s' of shape (%s) and dtype %s is too large: its size in bytes "
         "overflows int64",
         b->name, dims.data ? dims.data : "", tl_dtype_name(b->dtype));
  else
    verr(vs, b->loc,
         "%s buffer '%s' of shape (%s) and dtype %s is too large: an on-chip buffer "
         "holds at most 2^31 - 1 bytes",
         tl_scope_name(b->scope), b->name, dims.data ? dims.data : "", tl_dtype_name(b->dtype));
  tl_strbuf_free(&dims);
}

static void check_shape(vstate *vs, const tl_buffer *b) {
  if (b->dtype.code == TL_TYPE_VOID || b->dtype.code == TL_TYPE_HANDLE || b->dtype.lanes == 0)
    verr(vs, b->loc, "buffer '%s' has no element type (%s)", b->name, tl_dtype_name(b->dtype));
  if (b->ndim < 0 || (b->ndim > 0 && !b->shape)) {
    verr(vs, b->loc, "malformed IR: buffer '%s' has no shape", b->name);
    return;
  }
  for (int d = 0; d < b->ndim; d++) {
    const tl_expr *e = b->shape[d];
    check_expr(vs, e, b->loc, 1);
    if (!e) continue;
    tl_loc loc = pick(e->loc, b->loc);
    int64_t v;
    if (!is_shape_dtype(e->dtype))
      verr(vs, loc, "shape dimension %d of '%s' must be an int32 or int64 expression, got %s", d, b->name,
           tl_dtype_name(e->dtype));
    else if (tl_expr_is_const_int(e, &v) && v <= 0)
      verr(vs, loc, "shape dimension %d of '%s' must be positive, got %lld", d, b->name, (long long)v);
  }
  if (b->strides)
    for (int d = 0; d < b->ndim; d++) check_index(vs, b->strides[d], b->loc, 1, "a stride");
  check_size(vs, b);
}

/* ---------------------------------------------------------------- tile ops */
static bool check_region(vstate *vs, const tl_stmt *s, const tl_operand *o) {
  const char *opn = tl_tile_ops[s->u.tile.op].name;
  const tl_region *r = &o->region;
  tl_loc loc = pick(o->loc, s->loc);
  if (!check_buffer_use(vs, r->buffer, loc)) return false;
  const tl_buffer *b = r->buffer;
  if (r->ndim == 0 && !r->extent && !r->min) return true; /* the whole buffer */
  bool ok = true;
  if (r->ndim != b->ndim) {
    check_index_count(vs, b, r->ndim, loc);
    ok = false;
  }
  int before = vs->vc.errors;
  for (int d = 0; d < r->ndim; d++) {
    const tl_expr *mn = r->min ? r->min[d] : NULL, *ex = r->extent ? r->extent[d] : NULL;
    if (mn) check_index(vs, mn, loc, 1, "a region start");
    if (!ex) {
      verr(vs, loc, "malformed IR: region of '%s' lacks extent %d", b->name, d);
      continue;
    }
    check_index(vs, ex, loc, 1, "a region extent");
    int64_t lo = 0, n, dimv;
    if (tl_expr_is_const_int(ex, &n) && n <= 0) {
      verr(vs, pick(ex->loc, loc), "T.%s: extent of dimension %d of '%s' must be positive, got %lld", opn, d, b->name,
           (long long)n);
      continue;
    }
    /* Out-of-bounds regions of global buffers are predicated; others are errors. */
    if (b->scope != TL_SCOPE_GLOBAL && d < b->ndim && b->shape && (!mn || tl_expr_is_const_int(mn, &lo)) &&
        tl_expr_is_const_int(ex, &n) && tl_expr_is_const_int(b->shape[d], &dimv)) {
      int64_t hi = 0;
      bool ovf = __builtin_add_overflow(lo, n, &hi);
      if (ovf)
        verr(vs, loc, "T.%s: region of '%s' is out of bounds in dimension %d (extent %lld)", opn, b->name, d,
             (long long)dimv);
      else if (lo < 0 || hi > dimv)
        verr(vs, loc, "T.%s: region %lld:%lld of '%s' is out of bounds in dimension %d (extent %lld)", opn,
             (long long)lo, (long long)hi, b->name, d, (long long)dimv);
    }
  }
  return ok && vs->vc.errors == before;
}

static bool check_tile(vstate *vs, const tl_stmt *s) {
  int op = s->u.tile.op;
  if (op < 0 || op >= TL_TILE_NUM_OPS) {
    verr(vs, s->loc, "malformed IR: tile op index %d", op);
    return false;
  }
  const tl_tile_op_info *info = &tl_tile_ops[op];
  bool ok = true;
  if (!vs->kernel) {
    verr(vs, s->loc, "T.%s must be inside a T.Kernel scope", info->name);
    ok = false;
  }
  int nargs = s->u.tile.nargs;
  size_t want = strlen(info->operands);
  bool pairs = info->operands[0] == 'D';
  if (nargs < 0 || (nargs > 0 && !s->u.tile.args)) {
    verr(vs, s->loc, "malformed IR: T.%s operands", info->name);
    return false;
  }
  if (pairs ? (nargs % 2 != 0) : ((size_t)nargs != want)) {
    if (pairs)
      verr(vs, s->loc, "T.%s expects (buffer, layout) pairs, got %d operand%s", info->name, nargs,
           nargs == 1 ? "" : "s");
    else verr(vs, s->loc, "T.%s expects %zu operand%s, got %d", info->name, want, want == 1 ? "" : "s", nargs);
    return false;
  }
  for (int i = 0; i < nargs; i++) {
    const tl_operand *o = &s->u.tile.args[i];
    char k = pairs ? (i % 2 == 0 ? 'R' : 'E') : info->operands[i];
    tl_loc loc = pick(o->loc, s->loc);
    if (k == 'R' && o->kind != TL_OPND_REGION) {
      verr(vs, loc, "T.%s: operand %d must be a buffer or a buffer region", info->name, i + 1);
      ok = false;
      continue;
    }
    if (k == 'E' && o->kind != TL_OPND_EXPR) {
      verr(vs, loc, "T.%s: operand %d must be a scalar expression, not a buffer region", info->name, i + 1);
      ok = false;
      continue;
    }
    if (o->kind == TL_OPND_REGION) {
      if (!check_region(vs, s, o)) ok = false;
    } else {
      int before = vs->vc.errors;
      if (pairs && o->expr && o->expr->kind == TL_EXPR_STRING) continue;
      check_expr(vs, o->expr, loc, 1);
      if (vs->vc.errors != before) ok = false;
    }
  }
  for (int i = 0; i < info->nattrs && s->u.tile.attrs; i++) {
    const tl_expr *e = s->u.tile.attrs[i];
    if (!e) continue;
    const tl_attr_info *a = &info->attrs[i];
    tl_loc loc = pick(e->loc, s->loc);
    int64_t v;
    bool is_c = e->kind == TL_EXPR_INT && tl_expr_is_const_int(e, &v);
    switch (a->kind) {
    case TL_ATTR_BOOL:
      if (!is_c) {
        verr(vs, loc, "T.%s: attribute '%s' must be True or False", info->name, a->name);
        ok = false;
      } else if (v != 0 && v != 1) {
        verr(vs, loc, "T.%s: attribute '%s' must be True or False, got %lld", info->name, a->name, (long long)v);
        ok = false;
      }
      break;
    case TL_ATTR_INT:
      if (!is_c) {
        verr(vs, loc, "T.%s: attribute '%s' must be a constant integer", info->name, a->name);
        ok = false;
      }
      break;
    case TL_ATTR_POLICY:
      if (!is_c || v < 0 || v > 2) {
        if (is_c)
          verr(vs, loc,
               "T.%s: attribute '%s' must be a T.GemmWarpPolicy (0 Square, 1 FullRow, 2 "
               "FullCol), got %lld",
               info->name, a->name, (long long)v);
        else verr(vs, loc, "T.%s: attribute '%s' must be a T.GemmWarpPolicy", info->name, a->name);
        ok = false;
      }
      break;
    case TL_ATTR_STRING:
      if (e->kind != TL_EXPR_STRING || !e->u.str) {
        verr(vs, loc, "T.%s: attribute '%s' must be a string", info->name, a->name);
        ok = false;
      }
      break;
    case TL_ATTR_EXPR: {
      int before = vs->vc.errors;
      check_expr(vs, e, loc, 1);
      if (vs->vc.errors != before) ok = false;
      break;
    }
    }
  }
  if (ok && info->verify) {
    int before = vs->vc.errors;
    info->verify(&vs->vc, s);
    ok = vs->vc.errors == before;
  }
  return ok;
}

/* ------------------------------------------------------------ statements */
static void check_stmt(vstate *vs, const tl_stmt *s, tl_loc at, int depth);

/* A nested body: its own scope. */
static void check_body(vstate *vs, const tl_stmt *s, tl_loc at, int depth) {
  size_t mark = vs->stack.len;
  if (s) check_stmt(vs, s, at, depth);
  pop_to(vs, mark);
}

/* Whether kernel k is the body itself or one of its top-level statements:
 * where several T.Kernel scopes of one prim_func may stand, each a stage
 * launched after the one before (lib/Lower/split_kernels.c). */
static bool top_level(const tl_stmt *body, const tl_stmt *k) { return top_index(body, k) >= 0; }

/* The position of k among the body's top-level statements (0 for the body itself), or -1. */
static int top_index(const tl_stmt *body, const tl_stmt *k) {
  if (body == k) return 0;
  if (!body || body->kind != TL_STMT_SEQ) return -1;
  for (int i = 0; i < body->u.seq.n && body->u.seq.stmts; i++)
    if (body->u.seq.stmts[i] == k) return i;
  return -1;
}

static void check_kernel(vstate *vs, const tl_stmt *s, int depth) {
  tl_loc loc = s->loc;
  if (vs->kernel) {
    verr(vs, loc, "nested T.Kernel is not supported");
    tl_note(vs->vc.diag, vs->kernel->loc, "the enclosing T.Kernel is here");
  } else if (vs->first_kernel && (!top_level(vs->body, s) || !top_level(vs->body, vs->first_kernel))) {
    verr(vs, loc,
         "several T.Kernel scopes in one prim_func must be statements of its body, one after "
         "another (not inside a loop or an if)");
    tl_note(vs->vc.diag, vs->first_kernel->loc, "the first T.Kernel is here");
  }
  if (!vs->first_kernel) vs->first_kernel = s;
  int ng = s->u.kernel.ngrid;
  if (ng < 1 || ng > 3) verr(vs, loc, "T.Kernel takes 1 to 3 grid dimensions, got %d", ng);
  if (ng < 0) ng = 0;
  if (ng > 3) ng = 3;
  for (int i = 0; i < ng; i++) {
    const tl_expr *g = s->u.kernel.grid[i];
    check_expr(vs, g, loc, 1);
    if (!g) continue;
    int64_t v;
    if (!is_index_dtype(g->dtype))
      verr(vs, pick(g->loc, loc), "T.Kernel: grid dimension %d must be an integer, got %s", i, tl_dtype_name(g->dtype));
    else if (tl_expr_is_const_int(g, &v) && v <= 0)
      verr(vs, pick(g->loc, loc), "T.Kernel: grid dimension %d must be positive, got %lld", i, (long long)v);
  }
  const tl_expr *t = s->u.kernel.threads;
  if (!t) {
    verr(vs, loc, "malformed IR: T.Kernel without threads");
  } else {
    tl_loc tloc = pick(t->loc, loc);
    int64_t v;
    if (!is_index_dtype(t->dtype) || !tl_expr_is_const_int(t, &v))
      verr(vs, tloc, "T.Kernel: threads must be a constant integer");
    else if (v <= 0) verr(vs, tloc, "T.Kernel: threads must be positive, got %lld", (long long)v);
    else if (v > 1024) verr(vs, tloc, "T.Kernel: threads must be at most 1024, got %lld", (long long)v);
  }
  const tl_stmt *saved = vs->kernel;
  vs->kernel = s;
  size_t mark = vs->stack.len;
  for (int i = 0; i < ng; i++) {
    const tl_var *bv = s->u.kernel.block_vars[i];
    if (bv) declare(vs, bv->name, pick(bv->loc, loc), bv, NULL);
  }
  check_body(vs, s->u.kernel.body, loc, depth + 1);
  pop_to(vs, mark);
  vs->kernel = saved;
}

static void check_for(vstate *vs, const tl_stmt *s, int depth) {
  tl_loc loc = s->loc;
  int nv = s->u.loop.nvars;
  if (nv < 1 || !s->u.loop.vars || !s->u.loop.extents) {
    verr(vs, loc, "malformed IR: loop without variables");
    return;
  }
  if (nv > 1 && s->u.loop.kind != TL_LOOP_PARALLEL) verr(vs, loc, "only T.Parallel loops take more than one variable");
  for (int i = 0; i < nv; i++) {
    if (s->u.loop.mins && s->u.loop.mins[i]) check_index(vs, s->u.loop.mins[i], loc, 1, "a loop start");
    check_index(vs, s->u.loop.extents[i], loc, 1, "a loop extent");
  }
  if (s->u.loop.step) {
    int64_t v;
    check_index(vs, s->u.loop.step, loc, 1, "a loop step");
    if (tl_expr_is_const_int(s->u.loop.step, &v) && v == 0)
      verr(vs, pick(s->u.loop.step->loc, loc), "a loop step must not be 0");
  }
  if (s->u.loop.kind == TL_LOOP_PIPELINED && s->u.loop.num_stages < -1)
    verr(vs, loc, "T.Pipelined: num_stages must be >= 0, got %d", s->u.loop.num_stages);
  /* a pipelined serial loop (pipeline_loop.c): one variable, no step, s >= 2 stages */
  if (s->u.loop.kind != TL_LOOP_PIPELINED && s->u.loop.num_stages >= 2 &&
      (s->u.loop.kind != TL_LOOP_SERIAL || nv != 1 || s->u.loop.step))
    verr(vs, loc, "num_stages=%d on a loop other than a one-variable T.serial without a step", s->u.loop.num_stages);
  size_t mark = vs->stack.len;
  for (int i = 0; i < nv; i++) {
    const tl_var *v = s->u.loop.vars[i];
    if (!v) {
      verr(vs, loc, "malformed IR: missing loop variable");
      continue;
    }
    declare(vs, v->name, pick(v->loc, loc), v, NULL);
  }
  check_body(vs, s->u.loop.body, loc, depth + 1);
  pop_to(vs, mark);
}

static void check_stmt(vstate *vs, const tl_stmt *s, tl_loc at, int depth) {
  tl_loc loc = s ? pick(s->loc, at) : at;
  if (!enter(vs, s, loc, depth, "statement")) return;
  switch (s->kind) {
  case TL_STMT_SEQ: {
    size_t mark = vs->stack.len;
    for (int i = 0; i < s->u.seq.n; i++) check_stmt(vs, s->u.seq.stmts ? s->u.seq.stmts[i] : NULL, loc, depth + 1);
    pop_to(vs, mark);
    return;
  }
  case TL_STMT_FOR: check_for(vs, s, depth); return;
  case TL_STMT_KERNEL: check_kernel(vs, s, depth); return;
  case TL_STMT_ALLOC: {
    const tl_buffer *b = s->u.alloc.buffer;
    if (!b) {
      verr(vs, loc, "malformed IR: allocation without a buffer");
      return;
    }
    /* a global allocation in a kernel is a kernel workspace (stream-K's, lib/Lower/Hopper/stream_k.c;
       * docs/simt-ir.md "Stream-K"): only lowering makes one, with a static shape */
    if (tl_buffer_is_view(b)) check_view(vs, b, loc);
    else if (b->scope == TL_SCOPE_GLOBAL && !vs->kernel)
      verr(vs, loc, "'%s': a global buffer (kernel workspace) must be allocated inside a T.Kernel", b->name);
    else if (b->scope == TL_SCOPE_GLOBAL) {
      for (int d = 0; d < b->ndim; d++) {
        int64_t v;
        if (!b->shape || !b->shape[d] || !tl_expr_is_const_int(b->shape[d], &v))
          verr(vs, loc, "'%s': a kernel workspace needs a static shape", b->name);
      }
    } else if (!vs->kernel) verr(vs, loc, "%s must be inside a T.Kernel scope", alloc_spelling(b->scope));
    check_shape(vs, b);
    if (b->init) check_expr(vs, b->init, loc, 1);
    declare(vs, b->name, loc, NULL, b);
    return;
  }
  case TL_STMT_STORE: {
    const tl_buffer *b = s->u.store.buffer;
    if (check_buffer_use(vs, b, loc)) check_index_count(vs, b, s->u.store.n, loc);
    for (int i = 0; i < s->u.store.n; i++)
      check_index(vs, s->u.store.indices ? s->u.store.indices[i] : NULL, loc, 1, "an index");
    check_expr(vs, s->u.store.value, loc, 1);
    return;
  }
  case TL_STMT_IF:
    check_expr(vs, s->u.ifs.cond, loc, 1);
    if (!s->u.ifs.then_s) verr(vs, loc, "malformed IR: if without a body");
    check_body(vs, s->u.ifs.then_s, loc, depth + 1);
    check_body(vs, s->u.ifs.else_s, loc, depth + 1);
    return;
  case TL_STMT_WHILE:
    check_expr(vs, s->u.whiles.cond, loc, 1);
    if (!s->u.whiles.body) verr(vs, loc, "malformed IR: while without a body");
    check_body(vs, s->u.whiles.body, loc, depth + 1);
    return;
  case TL_STMT_LET: {
    const tl_var *v = s->u.let.var;
    check_expr(vs, s->u.let.value, loc, 1);
    if (!v) {
      verr(vs, loc, "malformed IR: let without a variable");
      return;
    }
    declare(vs, v->name, pick(v->loc, loc), v, NULL);
    return;
  }
  case TL_STMT_EVAL: check_expr(vs, s->u.eval.value, loc, 1); return;
  case TL_STMT_TILE: check_tile(vs, s); return;
  }
  verr(vs, loc, "malformed IR: statement kind %d", (int)s->kind);
}

/* Pre-pass: which kernel allocates each buffer. */
static void find_allocs(vstate *vs, const tl_stmt *s, const tl_stmt *kernel, int depth) {
  if (!s || depth > TL_VERIFY_MAX_DEPTH) return;
  switch (s->kind) {
  case TL_STMT_SEQ:
    for (int i = 0; i < s->u.seq.n && s->u.seq.stmts; i++) find_allocs(vs, s->u.seq.stmts[i], kernel, depth + 1);
    return;
  case TL_STMT_FOR: find_allocs(vs, s->u.loop.body, kernel, depth + 1); return;
  case TL_STMT_WHILE: find_allocs(vs, s->u.whiles.body, kernel, depth + 1); return;
  case TL_STMT_KERNEL: find_allocs(vs, s->u.kernel.body, s, depth + 1); return;
  case TL_STMT_IF:
    find_allocs(vs, s->u.ifs.then_s, kernel, depth + 1);
    find_allocs(vs, s->u.ifs.else_s, kernel, depth + 1);
    return;
  case TL_STMT_ALLOC:
    if (s->u.alloc.buffer && !is_live(&vs->alloc_in, s->u.alloc.buffer) &&
        !tl_map_put(&vs->alloc_in, s->u.alloc.buffer, (void *)kernel))
      set_oom(vs);
    return;
  default: return;
  }
}

/* ---------------------------------------------------------------- function */
static void check_func(vstate *vs, const tl_primfunc *f) {
  vs->kernel = vs->first_kernel = NULL;
  vs->body = f->body;
  tl_loc floc = f->loc;
  if (f->ndynamic > 0 && !f->dynamic) verr(vs, floc, "malformed IR: dynamic symbols");
  for (int i = 0; i < f->ndynamic && f->dynamic; i++) {
    const tl_var *v = f->dynamic[i];
    if (!v) continue;
    if (!is_shape_dtype(v->dtype))
      verr(vs, pick(v->loc, floc), "dynamic dimension '%s' must be int32 or int64, got %s", v->name,
           tl_dtype_name(v->dtype));
    declare(vs, v->name, pick(v->loc, floc), v, NULL);
  }
  for (int i = 0; i < f->nparams && f->params; i++) {
    const tl_param *p = &f->params[i];
    if (p->kind == TL_PARAM_TENSOR) {
      const tl_buffer *b = p->buffer;
      if (!b) {
        verr(vs, floc, "malformed IR: parameter %d has no buffer", i);
        continue;
      }
      if (b->scope != TL_SCOPE_GLOBAL)
        verr(vs, pick(b->loc, floc), "parameter '%s' must be a global buffer, got %s", b->name,
             tl_scope_name(b->scope));
      check_shape(vs, b);
      declare(vs, b->name, pick(b->loc, floc), NULL, b);
    } else {
      const tl_var *v = p->var;
      if (!v) {
        verr(vs, floc, "malformed IR: parameter %d has no variable", i);
        continue;
      }
      if (v->dtype.lanes != 1 || v->dtype.code == TL_TYPE_VOID)
        verr(vs, pick(v->loc, floc), "scalar parameter '%s' has type %s", v->name, tl_dtype_name(v->dtype));
      declare(vs, v->name, pick(v->loc, floc), v, NULL);
    }
  }
  if (f->has_out_idx && f->nout > 0 && f->out_idx) { /* normalized: the rule holds and changes nothing */
    int64_t *given = malloc(sizeof(int64_t) * (size_t)f->nout);
    int *norm = malloc(sizeof(int) * (size_t)f->nout);
    size_t bad = 0;
    char msg[320];
    for (int i = 0; given && i < f->nout; i++) given[i] = f->out_idx[i];
    if (given && norm) {
      bool ok = tl_out_idx_normalize_func(f, given, (size_t)f->nout, norm, &bad, msg, sizeof msg);
      if (ok)
        for (int i = 0; i < f->nout && ok; i++)
          if (norm[i] != f->out_idx[i]) {
            snprintf(msg, sizeof msg, "out_idx %d is not normalized (%d)", f->out_idx[i], norm[i]);
            ok = false;
          }
      if (!ok) verr(vs, floc, "%s", msg);
    }
    free(given);
    free(norm);
  }
  find_allocs(vs, f->body, NULL, 0);
  if (f->body) check_stmt(vs, f->body, floc, 0);
  pop_to(vs, 0);
  vs->vc.errors += tl_verify_sync_grid(f, vs->vc.diag); /* where T.sync_grid() stands, what crosses it */
}

/* Applies op (tl_map_init, tl_map_free) to each per-function map. */
static void func_maps(vstate *vs, void (*op)(tl_map *)) {
  tl_map *maps[] = {&vs->defs, &vs->var_live, &vs->buf_live, &vs->alloc_in, &vs->reported};
  for (size_t i = 0; i < sizeof maps / sizeof *maps; i++) op(maps[i]);
}

int tl_verify_module(const tl_module *m, tl_diag *d) {
  if (!m || !d) return 0;
  vstate vs;
  memset(&vs, 0, sizeof vs);
  vs.vc.module = m;
  vs.vc.diag = d;
  tl_arena_init(&vs.arena);
  tl_intern_init(&vs.names, &vs.arena);
  for (int i = 0; i < m->nfuncs && m->funcs; i++) {
    const tl_primfunc *f = m->funcs[i];
    if (!f) continue;
    vs.vc.func = f;
    func_maps(&vs, tl_map_init);
    vs.deep = false;
    check_func(&vs, f);
    func_maps(&vs, tl_map_free);
  }
  tl_vec_free(&vs.stack);
  tl_intern_free(&vs.names);
  tl_arena_free(&vs.arena);
  return vs.vc.errors;
}
