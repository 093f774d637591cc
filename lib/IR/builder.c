/* The C builder API (include/tilelang/ir.h: tl_builder_*).
 *
 * Role: builds one PrimFunc from C calls into a fresh module, with the same
 * node constructors (tl_ir_*, which fold constants) that the front end uses,
 * so that a built module prints and compares like a parsed one.  The builder
 * checks the API contract (NULL handles, enum ranges, array lengths,
 * identifiers, unknown ops/keywords/intrinsics, scope nesting); the semantic
 * rules (shapes, scopes, dtypes of tile ops, names in scope...) are left to
 * the verifier, which tl_builder_finish runs.
 *
 * Algorithm: a stack of open scopes (root, T.Kernel, for, if/else), each with
 * a growable vector of the statements built so far; closing a scope wraps its
 * vector into a SEQ (tl_ir_seq) that becomes the body of the scope's
 * statement, which is appended to the enclosing scope.  The first misuse is
 * recorded as "tl_builder_CALL: argument 'ARG': expected ..., got ..." and
 * later calls keep going quietly (calls given NULL handles after an error do
 * nothing); tl_builder_finish reports it.  Built IR has no source locations
 * (file NULL). */
#include "IR/out_idx.h"
#include "IR/tir.h"
#include "Support/context.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define TL_BUILDER_MAX_NDIM 8

typedef TL_VEC(tl_stmt *) stmt_vec;

typedef enum frame_kind { F_ROOT, F_KERNEL, F_FOR, F_IF } frame_kind;
typedef struct frame {
  frame_kind kind;
  stmt_vec stmts;      /* statements of the open body */
  stmt_vec then_stmts; /* F_IF after tl_builder_else: the then-branch */
  bool in_else;
  tl_stmt *node; /* the statement being built (NULL after a bad begin) */
} frame;

struct tl_builder {
  tl_context *ctx;
  tl_module *m;
  tl_primfunc *f;
  char *error; /* first recorded misuse (malloc) */
  bool oom;
  TL_VEC(frame) frames;
  TL_VEC(tl_param) params;
  TL_VEC(tl_var *) dynamic;
  TL_VEC(int) out_idx;
  bool has_out_idx;
};

/* ---------------------------------------------------------------- errors */
static void berr(tl_builder *b, const char *fn, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void berr(tl_builder *b, const char *fn, const char *fmt, ...) {
  if (b->error) return;
  tl_strbuf sb = {0};
  tl_strbuf_printf(&sb, "%s: ", fn);
  va_list ap;
  va_start(ap, fmt);
  tl_strbuf_vprintf(&sb, fmt, ap);
  va_end(ap);
  b->error = tl_strbuf_take(&sb);
  if (!b->error) b->oom = true;
}

/* A handle argument: NULL after an earlier error is quiet; otherwise it is
 * the first misuse. */
static bool need(tl_builder *b, const char *fn, const void *p, const char *arg) {
  if (p) return true;
  if (!b->error && !b->oom) berr(b, fn, "argument '%s': expected a handle, got NULL", arg);
  return false;
}

static void *oomp(tl_builder *b, void *p) {
  if (!p) b->oom = true;
  return p;
}

static bool is_keyword(const char *s) {
  static const char *const kw[] = {"False",   "None",     "True",     "and",    "as",   "assert", "async",  "await",
                                   "break",   "class",    "continue", "def",    "del",  "elif",   "else",   "except",
                                   "finally", "for",      "from",     "global", "if",   "import", "in",     "is",
                                   "lambda",  "nonlocal", "not",      "or",     "pass", "raise",  "return", "try",
                                   "while",   "with",     "yield",    "T"};
  for (size_t i = 0; i < sizeof kw / sizeof kw[0]; i++)
    if (strcmp(s, kw[i]) == 0) return true;
  return false;
}

static bool is_identifier(const char *s) {
  if (!s || !*s) return false;
  if (!((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') || *s == '_')) return false;
  for (const char *p = s + 1; *p; p++)
    if (!((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9') || *p == '_')) return false;
  return !is_keyword(s);
}

static bool check_name(tl_builder *b, const char *fn, const char *arg, const char *name) {
  if (is_identifier(name)) return true;
  if (!name) berr(b, fn, "argument '%s': expected an identifier, got NULL", arg);
  else berr(b, fn, "argument '%s': expected an identifier (not a keyword), got '%s'", arg, name);
  return false;
}

/* A dtype the IR knows.  allow_lanes: vector dtypes allowed. */
static bool dtype_valid(tl_dtype t, bool allow_lanes) {
  if (t.lanes < 1 || t.lanes > 64 || (!allow_lanes && t.lanes != 1)) return false;
  switch (t.code) {
  case TL_TYPE_INT:
  case TL_TYPE_UINT: return t.bits == 8 || t.bits == 16 || t.bits == 32 || t.bits == 64;
  case TL_TYPE_FLOAT: return t.bits == 16 || t.bits == 32 || t.bits == 64;
  case TL_TYPE_BFLOAT: return t.bits == 16;
  case TL_TYPE_TFLOAT: return t.bits == 32;
  case TL_TYPE_FLOAT8_E4M3:
  case TL_TYPE_FLOAT8_E5M2: return t.bits == 8;
  case TL_TYPE_BOOL: return t.bits == 8;
  default: return false;
  }
}

static void dtype_err(tl_builder *b, const char *fn, const char *arg, tl_dtype t, const char *expected) {
  berr(b, fn, "argument '%s': expected %s, got {code=%u, bits=%u, lanes=%u}", arg, expected, (unsigned)t.code,
       (unsigned)t.bits, (unsigned)t.lanes);
}

static const char *intern(tl_builder *b, const char *s) { return oomp(b, (void *)tl_intern_str(&b->m->names, s)); }

/* Copies n handles into the arena, each required non-NULL. */
static tl_expr **copy_exprs_s(tl_builder *b, const char *fn, const char *arg, tl_expr *const *v, size_t n,
                              bool allow_string) {
  if (n == 0) return NULL;
  if (!v) {
    if (!b->error) berr(b, fn, "argument '%s': expected %zu handles, got NULL", arg, n);
    return NULL;
  }
  for (size_t i = 0; i < n; i++) {
    if (!v[i]) {
      if (!b->error) berr(b, fn, "argument '%s[%zu]': expected a handle, got NULL", arg, i);
      return NULL;
    }
    if (v[i]->kind == TL_EXPR_STRING && !allow_string) {
      berr(b, fn, "argument '%s[%zu]': a string cannot be used here", arg, i);
      return NULL;
    }
  }
  tl_expr **out = oomp(b, tl_arena_alloc(&b->m->arena, n * sizeof *out));
  if (out) memcpy(out, v, n * sizeof *out);
  return out;
}

static tl_expr **copy_exprs(tl_builder *b, const char *fn, const char *arg, tl_expr *const *v, size_t n) {
  return copy_exprs_s(b, fn, arg, v, n, false);
}

static bool not_string(tl_builder *b, const char *fn, const char *arg, const tl_expr *e) {
  if (e->kind != TL_EXPR_STRING) return true;
  berr(b, fn, "argument '%s': a string cannot be used here", arg);
  return false;
}

/* Appends a finished statement to the innermost open scope. */
static void append(tl_builder *b, tl_stmt *s) {
  if (!s) {
    b->oom = true;
    return;
  }
  frame *f = &tl_vec_last(&b->frames);
  if (!tl_vec_push(&f->stmts, s)) b->oom = true;
}

/* Wraps a statement vector into one statement (an empty SEQ for none). */
static tl_stmt *seq_of(tl_builder *b, stmt_vec *v) {
  tl_module *m = b->m;
  if (v->len == 0) return oomp(b, tl_ir_stmt(m, TL_LOC_NONE, TL_STMT_SEQ));
  tl_stmt **arr = oomp(b, tl_vec_to_arena(&m->arena, v));
  if (!arr) return NULL;
  return oomp(b, tl_ir_seq(m, TL_LOC_NONE, (int)v->len, arr));
}

static bool push_frame(tl_builder *b, frame_kind k, tl_stmt *node) {
  frame f;
  memset(&f, 0, sizeof f);
  f.kind = k;
  f.node = node;
  if (!tl_vec_push(&b->frames, f)) {
    b->oom = true;
    return false;
  }
  return true;
}

static void free_frame(frame *f) {
  tl_vec_free(&f->stmts);
  tl_vec_free(&f->then_stmts);
}

static const char *frame_name(frame_kind k) {
  switch (k) {
  case F_ROOT: return "the function body";
  case F_KERNEL: return "a T.Kernel";
  case F_FOR: return "a for loop";
  case F_IF: return "an if";
  }
  return "?";
}

/* Pops the innermost scope if it is of kind k; returns it through *out. */
static bool pop_frame(tl_builder *b, const char *fn, frame_kind k, frame *out) {
  frame *top = &tl_vec_last(&b->frames);
  if (top->kind != k) {
    if (top->kind == F_ROOT) berr(b, fn, "no open %s scope", frame_name(k) + (k == F_IF ? 3 : 2));
    else berr(b, fn, "the innermost open scope is %s, not %s", frame_name(top->kind), frame_name(k));
    return false;
  }
  *out = tl_vec_pop(&b->frames);
  return true;
}

/* Closes the innermost scope, which must be of kind k (else an error of
 * fn): the statements gathered in it become its node's body (a kernel's or
 * loop's body, an if's branches), and the node is appended to the enclosing
 * scope. */
static void end_frame(tl_builder *b, const char *fn, frame_kind k) {
  frame f;
  if (!b || !pop_frame(b, fn, k, &f)) return;
  if (f.node) {
    tl_stmt *body = seq_of(b, &f.stmts);
    if (k == F_KERNEL) {
      f.node->u.kernel.body = body;
    } else if (k == F_FOR) {
      f.node->u.loop.body = body;
    } else if (f.in_else) {
      f.node->u.ifs.then_s = seq_of(b, &f.then_stmts);
      f.node->u.ifs.else_s = body;
    } else {
      f.node->u.ifs.then_s = body;
    }
    append(b, f.node);
  }
  free_frame(&f);
}

/* ------------------------------------------------------------ lifecycle */
tl_status tl_builder_create(tl_context *ctx, const char *func_name, tl_builder **out) {
  if (!ctx) return TL_ERR_INVALID_ARGUMENT;
  tl_context_begin(ctx);
  if (!out)
    return tl_context_end(ctx, tl_context_fail(ctx, TL_ERR_INVALID_ARGUMENT,
                                               "tl_builder_create: argument 'out': expected a pointer, got NULL"));
  *out = NULL;
  if (!func_name) func_name = "main";
  if (!is_identifier(func_name))
    return tl_context_end(ctx, tl_context_fail(ctx, TL_ERR_INVALID_ARGUMENT,
                                               "tl_builder_create: argument 'func_name': expected an identifier "
                                               "(not a keyword), got '%s'",
                                               func_name));
  tl_builder *b = calloc(1, sizeof *b);
  if (!b) return tl_context_end(ctx, tl_context_fail(ctx, TL_ERR_NO_MEMORY, "out of memory"));
  b->ctx = ctx;
  b->m = tl_module_new();
  if (b->m) {
    b->f = tl_arena_alloc(&b->m->arena, sizeof *b->f);
    b->m->funcs = tl_arena_alloc(&b->m->arena, sizeof *b->m->funcs);
  }
  if (!b->m || !b->f || !b->m->funcs || !push_frame(b, F_ROOT, NULL) ||
      !(b->f->name = tl_intern_str(&b->m->names, func_name))) {
    tl_builder_destroy(b);
    return tl_context_end(ctx, tl_context_fail(ctx, TL_ERR_NO_MEMORY, "out of memory"));
  }
  b->f->loc = TL_LOC_NONE;
  b->m->funcs[0] = b->f;
  b->m->nfuncs = 1;
  *out = b;
  return tl_context_end(ctx, TL_OK);
}

void tl_builder_destroy(tl_builder *b) {
  if (!b) return;
  for (size_t i = 0; i < b->frames.len; i++) free_frame(&b->frames.data[i]);
  tl_vec_free(&b->frames);
  tl_vec_free(&b->params);
  tl_vec_free(&b->dynamic);
  tl_vec_free(&b->out_idx);
  free(b->error);
  tl_module_destroy(b->m);
  free(b);
}

tl_status tl_builder_finish(tl_builder *b, tl_module **out) {
  if (out) *out = NULL;
  if (!b) return TL_ERR_INVALID_ARGUMENT;
  tl_context *ctx = b->ctx;
  tl_context_begin(ctx);
  tl_status st = TL_OK;
  if (!out) {
    st = tl_context_fail(ctx, TL_ERR_INVALID_ARGUMENT,
                         "tl_builder_finish: argument 'out': expected a pointer, got NULL");
  } else if (b->oom) {
    st = tl_context_fail(ctx, TL_ERR_NO_MEMORY, "out of memory while building the module");
  } else if (b->error) {
    st = tl_context_fail(ctx, TL_ERR_INVALID_ARGUMENT, "%s", b->error);
  } else if (b->frames.len > 1) {
    size_t open = b->frames.len - 1;
    st = tl_context_fail(ctx, TL_ERR_INVALID_ARGUMENT, "tl_builder_finish: %zu scope%s left open (innermost: %s)", open,
                         open == 1 ? "" : "s", frame_name(tl_vec_last(&b->frames).kind));
  }
  if (st != TL_OK) {
    tl_builder_destroy(b);
    return tl_context_end(ctx, st);
  }
  tl_primfunc *f = b->f;
  tl_module *m = b->m;
  int np = (int)b->params.len;
  /* out_idx: the one rule (tl_out_idx_normalize) over the parameters */
  if (b->out_idx.len) {
    tl_out_idx_param *ps = calloc((size_t)np + 1, sizeof *ps);
    int64_t *given = calloc(b->out_idx.len, sizeof *given);
    size_t bad = 0;
    char msg[320];
    if (!ps || !given) {
      st = tl_context_fail(ctx, TL_ERR_NO_MEMORY, "out of memory while building the module");
    } else {
      for (int i = 0; i < np; i++) ps[i] = tl_out_idx_param_of(&b->params.data[i]);
      for (size_t i = 0; i < b->out_idx.len; i++) given[i] = b->out_idx.data[i];
      if (!tl_out_idx_normalize(ps, np, given, b->out_idx.len, b->out_idx.data, &bad, msg, sizeof msg))
        st = tl_context_fail(ctx, TL_ERR_INVALID_ARGUMENT, "tl_builder_set_out_idx: argument 'idx[%zu]': %s", bad, msg);
    }
    free(ps);
    free(given);
  }
  if (st == TL_OK) {
    f->nparams = np;
    f->params = np ? tl_vec_to_arena(&m->arena, &b->params) : NULL;
    f->ndynamic = (int)b->dynamic.len;
    f->dynamic = f->ndynamic ? tl_vec_to_arena(&m->arena, &b->dynamic) : NULL;
    f->has_out_idx = b->has_out_idx;
    f->nout = b->has_out_idx ? (int)b->out_idx.len : 0;
    f->out_idx = f->nout ? tl_vec_to_arena(&m->arena, &b->out_idx) : NULL;
    f->body = seq_of(b, &b->frames.data[0].stmts);
    if (b->oom || m->arena.oom || (np && !f->params) || (f->ndynamic && !f->dynamic) || (f->nout && !f->out_idx))
      st = tl_context_fail(ctx, TL_ERR_NO_MEMORY, "out of memory while building the module");
  }
  if (st == TL_OK && tl_verify_module(m, &ctx->diag) > 0) st = TL_ERR_COMPILE;
  if (st == TL_OK && !tl_widen_indices(m))
    st = tl_context_fail(ctx, TL_ERR_NO_MEMORY, "out of memory while building the module");
  if (st == TL_OK) {
    b->m = NULL; /* moved to the caller */
    *out = m;
  }
  tl_builder_destroy(b);
  return tl_context_end(ctx, st);
}

void tl_builder_set_out_idx(tl_builder *b, const int *idx, size_t n) {
  static const char fn[] = "tl_builder_set_out_idx";
  if (!b) return;
  b->out_idx.len = 0;
  b->has_out_idx = false;
  if (n == 0) return;
  if (!idx) {
    berr(b, fn, "argument 'idx': expected %zu indices, got NULL", n);
    return;
  }
  if (!tl_vec_reserve(&b->out_idx, n)) {
    b->oom = true;
    return;
  }
  for (size_t i = 0; i < n; i++) b->out_idx.data[b->out_idx.len++] = idx[i];
  b->has_out_idx = true;
}

/* ----------------------------------------------------------- expressions */
tl_expr *tl_builder_int(tl_builder *b, int64_t v) {
  if (!b) return NULL;
  if (v < INT32_MIN || v > INT32_MAX) {
    berr(b, "tl_builder_int", "argument 'v': expected an int32 value, got %" PRId64 " (use tl_builder_int_typed)", v);
    return NULL;
  }
  return oomp(b, tl_ir_int(b->m, TL_LOC_NONE, TL_INT32, v));
}

tl_expr *tl_builder_int_typed(tl_builder *b, tl_dtype t, int64_t v) {
  static const char fn[] = "tl_builder_int_typed";
  if (!b) return NULL;
  if (!dtype_valid(t, false) || !(tl_dtype_is_int(t) || t.code == TL_TYPE_BOOL)) {
    dtype_err(b, fn, "t", t, "a scalar integer or bool dtype");
    return NULL;
  }
  bool fits;
  if (t.code == TL_TYPE_BOOL) fits = v == 0 || v == 1;
  else if (t.code == TL_TYPE_UINT) fits = v >= 0 && (t.bits == 64 || v <= (int64_t)((UINT64_C(1) << t.bits) - 1));
  else fits = t.bits == 64 || (v >= -(INT64_C(1) << (t.bits - 1)) && v <= (INT64_C(1) << (t.bits - 1)) - 1);
  if (!fits) {
    berr(b, fn, "argument 'v': %" PRId64 " does not fit in %s", v, tl_dtype_name(t));
    return NULL;
  }
  return oomp(b, tl_ir_int(b->m, TL_LOC_NONE, t, v));
}

tl_expr *tl_builder_float(tl_builder *b, tl_dtype t, double v) {
  if (!b) return NULL;
  if (!dtype_valid(t, false) || !tl_dtype_is_float(t)) {
    dtype_err(b, "tl_builder_float", "t", t, "a scalar float dtype");
    return NULL;
  }
  return oomp(b, tl_ir_float(b->m, TL_LOC_NONE, t, v));
}

tl_expr *tl_builder_bool(tl_builder *b, bool v) {
  if (!b) return NULL;
  return oomp(b, tl_ir_int(b->m, TL_LOC_NONE, TL_BOOL, v ? 1 : 0));
}

tl_expr *tl_builder_string(tl_builder *b, const char *s) {
  if (!b) return NULL;
  if (!s) {
    berr(b, "tl_builder_string", "argument 's': expected a string, got NULL");
    return NULL;
  }
  return oomp(b, tl_ir_string(b->m, TL_LOC_NONE, s));
}

/* Is enum argument arg of fn (of C type `type`) within lo..hi?  Else
 * reported ("expected a TYPE (lo..hi), got v"). */
static bool enum_arg(tl_builder *b, const char *fn, const char *arg, const char *type, int v, int lo, int hi) {
  if (v >= lo && v <= hi) return true;
  berr(b, fn, "argument '%s': expected a %s (%d..%d), got %d", arg, type, lo, hi, v);
  return false;
}

tl_expr *tl_builder_var_ref(tl_builder *b, tl_var *v) {
  if (!b || !need(b, "tl_builder_var_ref", v, "v")) return NULL;
  return oomp(b, tl_ir_var(b->m, TL_LOC_NONE, v));
}

tl_expr *tl_builder_binary(tl_builder *b, tl_binop op, tl_expr *l, tl_expr *r) {
  static const char fn[] = "tl_builder_binary";
  if (!b) return NULL;
  if (!enum_arg(b, fn, "op", "tl_binop", (int)op, TL_OP_ADD, TL_OP_SHR)) return NULL;
  if (!need(b, fn, l, "l") || !need(b, fn, r, "r")) return NULL;
  if (!not_string(b, fn, "l", l) || !not_string(b, fn, "r", r)) return NULL;
  return oomp(b, tl_ir_binary(b->m, TL_LOC_NONE, op, l, r));
}

tl_expr *tl_builder_unary(tl_builder *b, tl_unop op, tl_expr *x) {
  static const char fn[] = "tl_builder_unary";
  if (!b) return NULL;
  if (!enum_arg(b, fn, "op", "tl_unop", (int)op, TL_OP_NEG, TL_OP_BITNOT)) return NULL;
  if (!need(b, fn, x, "x") || !not_string(b, fn, "x", x)) return NULL;
  return oomp(b, tl_ir_unary(b->m, TL_LOC_NONE, op, x));
}

tl_expr *tl_builder_select(tl_builder *b, tl_expr *cond, tl_expr *t, tl_expr *f) {
  static const char fn[] = "tl_builder_select";
  if (!b) return NULL;
  if (!need(b, fn, cond, "cond") || !need(b, fn, t, "t") || !need(b, fn, f, "f")) return NULL;
  if (!not_string(b, fn, "cond", cond) || !not_string(b, fn, "t", t) || !not_string(b, fn, "f", f)) return NULL;
  if (cond->dtype.code != TL_TYPE_BOOL) {
    berr(b, fn, "argument 'cond': expected a bool expression, got %s", tl_dtype_name(cond->dtype));
    return NULL;
  }
  return oomp(b, tl_ir_select(b->m, TL_LOC_NONE, cond, t, f));
}

tl_expr *tl_builder_cast(tl_builder *b, tl_dtype t, tl_expr *x) {
  static const char fn[] = "tl_builder_cast";
  if (!b) return NULL;
  if (!dtype_valid(t, true)) {
    dtype_err(b, fn, "t", t, "a valid dtype");
    return NULL;
  }
  if (!need(b, fn, x, "x") || !not_string(b, fn, "x", x)) return NULL;
  return oomp(b, tl_ir_cast(b->m, TL_LOC_NONE, t, x));
}

tl_expr *tl_builder_load(tl_builder *b, tl_buffer *buf, tl_expr *const *indices, size_t n) {
  static const char fn[] = "tl_builder_load";
  if (!b || !need(b, fn, buf, "buf")) return NULL;
  if (n > TL_BUILDER_MAX_NDIM) {
    berr(b, fn, "argument 'n': expected 0..%d, got %zu", TL_BUILDER_MAX_NDIM, n);
    return NULL;
  }
  tl_expr **idx = copy_exprs(b, fn, "indices", indices, n);
  if (n && !idx) return NULL;
  return oomp(b, tl_ir_load(b->m, TL_LOC_NONE, buf, (int)n, idx));
}

tl_expr *tl_builder_call(tl_builder *b, const char *name, tl_expr *const *args, size_t n) {
  static const char fn[] = "tl_builder_call";
  if (!b) return NULL;
  if (!name) {
    berr(b, fn, "argument 'name': expected an intrinsic name, got NULL");
    return NULL;
  }
  int op = tl_intrinsic_lookup(name);
  if (op < 0) {
    berr(b, fn, "argument 'name': unknown intrinsic 'T.%s'", name);
    return NULL;
  }
  const tl_intrinsic *in = &tl_intrinsics[op];
  if ((int64_t)n < in->min_args || (in->max_args >= 0 && (int64_t)n > in->max_args)) {
    if (in->min_args == in->max_args)
      berr(b, fn, "argument 'n': T.%s takes %d argument%s, got %zu", name, in->min_args, in->min_args == 1 ? "" : "s",
           n);
    else berr(b, fn, "argument 'n': T.%s takes %d to %d arguments, got %zu", name, in->min_args, in->max_args, n);
    return NULL;
  }
  /* Strings are allowed: T.infinity("float16") names a dtype. */
  tl_expr **a = copy_exprs_s(b, fn, "args", args, n, true);
  if (n && !a) return NULL;
  return oomp(b, tl_ir_call(b->m, TL_LOC_NONE, op, (int)n, a));
}

/* ------------------------------------------------------------ parameters */
static tl_buffer *new_buffer(tl_builder *b, const char *fn, const char *name, tl_dtype t, tl_scope scope,
                             tl_expr *const *shape, size_t ndim) {
  if (!check_name(b, fn, "name", name)) return NULL;
  if (!dtype_valid(t, true)) {
    dtype_err(b, fn, "t", t, "a valid dtype");
    return NULL;
  }
  if (ndim < 1 || ndim > TL_BUILDER_MAX_NDIM) {
    berr(b, fn, "argument 'ndim': expected 1..%d, got %zu", TL_BUILDER_MAX_NDIM, ndim);
    return NULL;
  }
  tl_expr **sh = copy_exprs(b, fn, "shape", shape, ndim);
  if (!sh) return NULL;
  const char *iname = intern(b, name);
  if (!iname) return NULL;
  return oomp(b, tl_ir_new_buffer(b->m, TL_LOC_NONE, iname, t, scope, (int)ndim, sh));
}

static void push_param(tl_builder *b, tl_param p) {
  if (!tl_vec_push(&b->params, p)) b->oom = true;
}

tl_buffer *tl_builder_param_tensor(tl_builder *b, const char *name, tl_dtype t, tl_expr *const *shape, size_t ndim) {
  if (!b) return NULL;
  tl_buffer *buf = new_buffer(b, "tl_builder_param_tensor", name, t, TL_SCOPE_GLOBAL, shape, ndim);
  if (!buf) return NULL;
  push_param(b, (tl_param){.kind = TL_PARAM_TENSOR, .buffer = buf});
  return buf;
}

tl_var *tl_builder_param_scalar(tl_builder *b, const char *name, tl_dtype t) {
  static const char fn[] = "tl_builder_param_scalar";
  if (!b || !check_name(b, fn, "name", name)) return NULL;
  if (!dtype_valid(t, false)) {
    dtype_err(b, fn, "t", t, "a scalar dtype");
    return NULL;
  }
  const char *iname = intern(b, name);
  tl_var *v = iname ? oomp(b, tl_ir_new_var(b->m, TL_LOC_NONE, iname, t, TL_VAR_PARAM)) : NULL;
  if (!v) return NULL;
  push_param(b, (tl_param){.kind = TL_PARAM_SCALAR, .var = v});
  return v;
}

tl_var *tl_builder_dynamic(tl_builder *b, const char *name) {
  static const char fn[] = "tl_builder_dynamic";
  if (!b || !check_name(b, fn, "name", name)) return NULL;
  const char *iname = intern(b, name);
  tl_var *v = iname ? oomp(b, tl_ir_new_var(b->m, TL_LOC_NONE, iname, TL_INT32, TL_VAR_DYNAMIC)) : NULL;
  if (v && !tl_vec_push(&b->dynamic, v)) b->oom = true;
  return v;
}

/* ---------------------------------------------------------------- kernel */
void tl_builder_kernel_begin(tl_builder *b, tl_expr *const *grid, size_t ngrid, tl_expr *threads,
                             const char *const *names, tl_var **vars_out) {
  static const char fn[] = "tl_builder_kernel_begin";
  static const char *const defaults[3] = {"bx", "by", "bz"};
  if (!b) return;
  if (vars_out)
    for (size_t i = 0; i < ngrid && i < 3; i++) vars_out[i] = NULL;
  tl_stmt *s = NULL;
  if (ngrid < 1 || ngrid > 3) {
    berr(b, fn, "argument 'ngrid': expected 1..3, got %zu", ngrid);
  } else {
    tl_expr **g = copy_exprs(b, fn, "grid", grid, ngrid);
    bool ok = g && need(b, fn, threads, "threads") && not_string(b, fn, "threads", threads);
    for (size_t i = 0; ok && names && i < ngrid; i++) {
      char arg[32];
      snprintf(arg, sizeof arg, "names[%zu]", i);
      ok = check_name(b, fn, arg, names[i]);
    }
    if (ok) s = oomp(b, tl_ir_stmt(b->m, TL_LOC_NONE, TL_STMT_KERNEL));
    if (s) {
      s->u.kernel.ngrid = (int)ngrid;
      s->u.kernel.threads = threads;
      for (size_t i = 0; i < ngrid; i++) {
        const char *nm = intern(b, names ? names[i] : defaults[i]);
        tl_var *v = nm ? oomp(b, tl_ir_new_var(b->m, TL_LOC_NONE, nm, TL_INT32, TL_VAR_BLOCK)) : NULL;
        s->u.kernel.grid[i] = g[i];
        s->u.kernel.block_vars[i] = v;
        if (vars_out) vars_out[i] = v;
      }
    }
  }
  push_frame(b, F_KERNEL, s);
}

void tl_builder_kernel_end(tl_builder *b) { end_frame(b, "tl_builder_kernel_end", F_KERNEL); }

/* ------------------------------------------------------------ allocation */
tl_buffer *tl_builder_alloc(tl_builder *b, tl_scope scope, const char *name, tl_dtype t, tl_expr *const *shape,
                            size_t ndim) {
  static const char fn[] = "tl_builder_alloc";
  if (!b) return NULL;
  if ((int)scope < (int)TL_SCOPE_SHARED_DYN || (int)scope > (int)TL_SCOPE_LOCAL_VAR) {
    berr(b, fn, "argument 'scope': expected a shared, fragment or local scope (%d..%d), got %d%s",
         (int)TL_SCOPE_SHARED_DYN, (int)TL_SCOPE_LOCAL_VAR, (int)scope, scope == TL_SCOPE_GLOBAL ? " (global)" : "");
    return NULL;
  }
  tl_buffer *buf = new_buffer(b, fn, name, t, scope, shape, ndim);
  if (!buf) return NULL;
  tl_stmt *s = oomp(b, tl_ir_stmt(b->m, TL_LOC_NONE, TL_STMT_ALLOC));
  if (!s) return NULL;
  s->u.alloc.buffer = buf;
  append(b, s);
  return buf;
}

/* ----------------------------------------------------------------- loops */
void tl_builder_for_begin(tl_builder *b, tl_loop_kind kind, const char *const *names, tl_expr *const *extents,
                          size_t nvars, int num_stages, tl_var **vars_out) {
  static const char fn[] = "tl_builder_for_begin";
  if (!b) return;
  if (vars_out)
    for (size_t i = 0; i < nvars && i < TL_BUILDER_MAX_NDIM; i++) vars_out[i] = NULL;
  tl_stmt *s = NULL;
  bool ok = true;
  if (!enum_arg(b, fn, "kind", "tl_loop_kind", (int)kind, TL_LOOP_SERIAL, TL_LOOP_VECTORIZED)) {
    ok = false;
  } else if (nvars < 1 || nvars > TL_BUILDER_MAX_NDIM) {
    berr(b, fn, "argument 'nvars': expected 1..%d, got %zu", TL_BUILDER_MAX_NDIM, nvars);
    ok = false;
  } else if (nvars > 1 && kind != TL_LOOP_PARALLEL) {
    berr(b, fn, "argument 'nvars': only T.Parallel takes more than one variable, got %zu", nvars);
    ok = false;
  } else if (!names) {
    berr(b, fn, "argument 'names': expected %zu names, got NULL", nvars);
    ok = false;
  }
  for (size_t i = 0; ok && i < nvars; i++) {
    char arg[32];
    snprintf(arg, sizeof arg, "names[%zu]", i);
    ok = check_name(b, fn, arg, names[i]);
  }
  tl_expr **ext = ok ? copy_exprs(b, fn, "extents", extents, nvars) : NULL;
  if (ext) {
    tl_module *m = b->m;
    tl_var **vars = oomp(b, tl_arena_alloc(&m->arena, nvars * sizeof *vars));
    tl_expr **mins = oomp(b, tl_arena_alloc(&m->arena, nvars * sizeof *mins));
    s = vars && mins ? oomp(b, tl_ir_stmt(m, TL_LOC_NONE, TL_STMT_FOR)) : NULL;
    if (s) {
      s->u.loop.kind = kind;
      s->u.loop.nvars = (int)nvars;
      s->u.loop.vars = vars;
      s->u.loop.mins = mins;
      s->u.loop.extents = ext;
      s->u.loop.step = NULL;
      s->u.loop.num_stages = kind == TL_LOOP_PIPELINED ? num_stages : -1;
      for (size_t i = 0; i < nvars; i++) {
        tl_dtype vt = tl_dtype_is_int(ext[i]->dtype) && ext[i]->dtype.lanes == 1 ? ext[i]->dtype : TL_INT32;
        const char *nm = intern(b, names[i]);
        vars[i] = nm ? oomp(b, tl_ir_new_var(m, TL_LOC_NONE, nm, vt, TL_VAR_LOOP)) : NULL;
        mins[i] = oomp(b, tl_ir_int(m, TL_LOC_NONE, vt, 0));
        if (vars_out) vars_out[i] = vars[i];
      }
    }
  }
  push_frame(b, F_FOR, s);
}

void tl_builder_for_end(tl_builder *b) { end_frame(b, "tl_builder_for_end", F_FOR); }

/* -------------------------------------------------------------------- if */
void tl_builder_if_begin(tl_builder *b, tl_expr *cond) {
  static const char fn[] = "tl_builder_if_begin";
  if (!b) return;
  tl_stmt *s = NULL;
  if (need(b, fn, cond, "cond") && not_string(b, fn, "cond", cond)) {
    s = oomp(b, tl_ir_if(b->m, TL_LOC_NONE, cond, NULL, NULL)); /* branches: end_frame */
  }
  push_frame(b, F_IF, s);
}

void tl_builder_else(tl_builder *b) {
  static const char fn[] = "tl_builder_else";
  if (!b) return;
  frame *top = &tl_vec_last(&b->frames);
  if (top->kind != F_IF) {
    if (top->kind == F_ROOT) berr(b, fn, "no open if scope");
    else berr(b, fn, "the innermost open scope is %s, not an if", frame_name(top->kind));
    return;
  }
  if (top->in_else) {
    berr(b, fn, "the innermost if already has an else branch");
    return;
  }
  top->then_stmts = top->stmts;
  memset(&top->stmts, 0, sizeof top->stmts);
  top->in_else = true;
}

void tl_builder_if_end(tl_builder *b) { end_frame(b, "tl_builder_if_end", F_IF); }

/* ----------------------------------------------------------------- store */
void tl_builder_store(tl_builder *b, tl_buffer *buf, tl_expr *const *indices, size_t n, tl_expr *value) {
  static const char fn[] = "tl_builder_store";
  if (!b || !need(b, fn, buf, "buf")) return;
  if (n > TL_BUILDER_MAX_NDIM) {
    berr(b, fn, "argument 'n': expected 0..%d, got %zu", TL_BUILDER_MAX_NDIM, n);
    return;
  }
  tl_expr **idx = copy_exprs(b, fn, "indices", indices, n);
  if (n && !idx) return;
  if (!need(b, fn, value, "value") || !not_string(b, fn, "value", value)) return;
  tl_stmt *s = oomp(b, tl_ir_stmt(b->m, TL_LOC_NONE, TL_STMT_STORE));
  if (!s) return;
  s->u.store.buffer = buf;
  s->u.store.n = (int)n;
  s->u.store.indices = idx;
  s->u.store.value = value;
  append(b, s);
}

/* -------------------------------------------------------------- tile ops */
/* Fills *r from a region argument; false after recording an error. */
static bool make_region(tl_builder *b, const char *fn, size_t ai, const tl_region_arg *ra, tl_region *r) {
  char arg[64];
  snprintf(arg, sizeof arg, "args[%zu].region.buffer", ai);
  if (!need(b, fn, ra->buffer, arg)) return false;
  tl_buffer *buf = ra->buffer;
  size_t n = ra->ndim;
  if (!ra->mins && !ra->extents && n == 0) n = (size_t)buf->ndim; /* the whole buffer */
  if (n < 1 || n > TL_BUILDER_MAX_NDIM) {
    snprintf(arg, sizeof arg, "args[%zu].region.ndim", ai);
    berr(b, fn, "argument '%s': expected 1..%d, got %zu", arg, TL_BUILDER_MAX_NDIM, n);
    return false;
  }
  if (!ra->extents && n != (size_t)buf->ndim) {
    snprintf(arg, sizeof arg, "args[%zu].region.extents", ai);
    berr(b, fn,
         "argument '%s': NULL (the buffer's shape) needs ndim equal to the %d dimension%s of "
         "'%s', got %zu",
         arg, buf->ndim, buf->ndim == 1 ? "" : "s", buf->name, n);
    return false;
  }
  tl_module *m = b->m;
  r->buffer = buf;
  r->ndim = (int)n;
  if (ra->mins) {
    snprintf(arg, sizeof arg, "args[%zu].region.mins", ai);
    if (!(r->min = copy_exprs(b, fn, arg, ra->mins, n))) return false;
  } else {
    r->min = oomp(b, tl_arena_alloc(&m->arena, n * sizeof *r->min));
    if (!r->min) return false;
    for (size_t d = 0; d < n; d++) {
      tl_dtype it = d < (size_t)buf->ndim && buf->shape[d] && tl_dtype_is_int(buf->shape[d]->dtype)
                        ? buf->shape[d]->dtype
                        : TL_INT32;
      if (!(r->min[d] = oomp(b, tl_ir_int(m, TL_LOC_NONE, it, 0)))) return false;
    }
  }
  if (ra->extents) {
    snprintf(arg, sizeof arg, "args[%zu].region.extents", ai);
    if (!(r->extent = copy_exprs(b, fn, arg, ra->extents, n))) return false;
  } else {
    r->extent = oomp(b, tl_arena_alloc(&m->arena, n * sizeof *r->extent));
    if (!r->extent) return false;
    memcpy(r->extent, buf->shape, n * sizeof *r->extent);
  }
  return true;
}

void tl_builder_tile_op(tl_builder *b, const char *op, const tl_tile_arg *args, size_t nargs,
                        const tl_tile_kwarg *kwargs, size_t nkwargs) {
  static const char fn[] = "tl_builder_tile_op";
  if (!b) return;
  if (!op) {
    berr(b, fn, "argument 'op': expected a tile op name, got NULL");
    return;
  }
  int idx = tl_tile_op_lookup(op);
  if (idx < 0) {
    berr(b, fn, "argument 'op': unknown tile op 'T.%s'", op);
    return;
  }
  const tl_tile_op_info *info = &tl_tile_ops[idx];
  if (nargs > 64) {
    berr(b, fn, "argument 'nargs': expected 0..64, got %zu", nargs);
    return;
  }
  if (nargs && !args) {
    berr(b, fn, "argument 'args': expected %zu operands, got NULL", nargs);
    return;
  }
  if (nkwargs && !kwargs) {
    berr(b, fn, "argument 'kwargs': expected %zu keywords, got NULL", nkwargs);
    return;
  }
  tl_module *m = b->m;
  tl_operand *ops = NULL;
  if (nargs) {
    ops = oomp(b, tl_arena_alloc(&m->arena, nargs * sizeof *ops));
    if (!ops) return;
  }
  for (size_t i = 0; i < nargs; i++) {
    const tl_tile_arg *a = &args[i];
    ops[i].loc = TL_LOC_NONE;
    if (a->kind == TL_TILE_ARG_REGION) {
      ops[i].kind = TL_OPND_REGION;
      if (!make_region(b, fn, i, &a->region, &ops[i].region)) return;
    } else if (a->kind == TL_TILE_ARG_EXPR) {
      char arg[48];
      snprintf(arg, sizeof arg, "args[%zu].expr", i);
      if (!need(b, fn, a->expr, arg)) return;
      ops[i].kind = TL_OPND_EXPR;
      ops[i].expr = a->expr;
    } else {
      berr(b, fn, "argument 'args[%zu].kind': expected TL_TILE_ARG_REGION or TL_TILE_ARG_EXPR, got %d", i,
           (int)a->kind);
      return;
    }
  }
  tl_expr **attrs = NULL;
  if (info->nattrs) {
    attrs = oomp(b, tl_arena_alloc(&m->arena, (size_t)info->nattrs * sizeof *attrs));
    if (!attrs) return;
  }
  for (size_t i = 0; i < nkwargs; i++) {
    const tl_tile_kwarg *kw = &kwargs[i];
    if (!kw->name) {
      berr(b, fn, "argument 'kwargs[%zu].name': expected a keyword, got NULL", i);
      return;
    }
    int ai = tl_tile_op_attr_index(idx, kw->name);
    if (ai < 0) {
      berr(b, fn, "argument 'kwargs[%zu].name': T.%s has no keyword '%s'", i, info->name, kw->name);
      return;
    }
    if (attrs[ai]) {
      berr(b, fn, "argument 'kwargs[%zu].name': keyword '%s' is given twice", i, kw->name);
      return;
    }
    char arg[48];
    snprintf(arg, sizeof arg, "kwargs[%zu].value", i);
    if (!need(b, fn, kw->value, arg)) return;
    tl_expr *v = kw->value;
    int64_t c;
    /* Booleans are given as ints; store them as bool constants, as parsed
     * source does (junk values are left for the verifier). */
    if (info->attrs[ai].kind == TL_ATTR_BOOL && v->kind == TL_EXPR_INT && v->dtype.code != TL_TYPE_BOOL &&
        tl_expr_is_const_int(v, &c) && (c == 0 || c == 1)) {
      v = oomp(b, tl_ir_int(m, TL_LOC_NONE, TL_BOOL, c));
      if (!v) return;
    }
    attrs[ai] = v;
  }
  tl_stmt *s = oomp(b, tl_ir_stmt(m, TL_LOC_NONE, TL_STMT_TILE));
  if (!s) return;
  s->u.tile.op = idx;
  s->u.tile.nargs = (int)nargs;
  s->u.tile.args = ops;
  s->u.tile.attrs = attrs;
  append(b, s);
}
