/* Printer: the canonical text of the tile IR (docs/canonical-tir.md).
 *
 * Algorithm: a recursive walk that emits Python syntax.  Expressions are
 * printed with the fewest parentheses: each node has a Python precedence
 * level, and a child is parenthesised when its level is below what its
 * position needs (left operands of left-associative operators accept the
 * same level, right operands need a higher one; ** is right-associative and
 * takes a unary operand on its right; comparisons never chain).  Negative
 * literals count as unary minus.  Floats print in the shortest "%.{N}g"
 * that reads back (after rounding to the literal's dtype) to the same value.
 * Recursion is bounded by PRINT_MAX_DEPTH; deeper trees print "...". */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "IR/tir.h"

#define PRINT_MAX_DEPTH 4096

/* Python precedence levels (higher binds tighter). */
enum { P_OR = 1, P_AND, P_NOT, P_CMP, P_BOR, P_BXOR, P_BAND, P_SHIFT, P_ADD, P_MUL, P_UNARY, P_POW, P_ATOM };

/* Each binary operator's spelling (Python's, T.min / T.max as calls) and
 * precedence, indexed by tl_binop. */
static const struct {
  const char *text;
  int prec;
} binops[] = {
    [TL_OP_ADD] = {"+", P_ADD},    [TL_OP_SUB] = {"-", P_ADD},       [TL_OP_MUL] = {"*", P_MUL},
    [TL_OP_DIV] = {"/", P_MUL},    [TL_OP_FLOORDIV] = {"//", P_MUL}, [TL_OP_FLOORMOD] = {"%", P_MUL},
    [TL_OP_POW] = {"**", P_POW},   [TL_OP_MIN] = {"T.min", P_ATOM},  [TL_OP_MAX] = {"T.max", P_ATOM},
    [TL_OP_EQ] = {"==", P_CMP},    [TL_OP_NE] = {"!=", P_CMP},       [TL_OP_LT] = {"<", P_CMP},
    [TL_OP_LE] = {"<=", P_CMP},    [TL_OP_GT] = {">", P_CMP},        [TL_OP_GE] = {">=", P_CMP},
    [TL_OP_AND] = {"and", P_AND},  [TL_OP_OR] = {"or", P_OR},        [TL_OP_BITAND] = {"&", P_BAND},
    [TL_OP_BITOR] = {"|", P_BOR},  [TL_OP_BITXOR] = {"^", P_BXOR},   [TL_OP_SHL] = {"<<", P_SHIFT},
    [TL_OP_SHR] = {">>", P_SHIFT},
};
_Static_assert(sizeof binops / sizeof binops[0] == TL_OP_SHR + 1, "a row per tl_binop");

static bool binop_known(tl_binop op) { return (unsigned)op < sizeof binops / sizeof binops[0] && binops[op].text; }
static int binop_prec(tl_binop op) { return binop_known(op) ? binops[op].prec : P_ATOM; }
static const char *binop_text(tl_binop op) { return binop_known(op) ? binops[op].text : "?"; }

/* Shortest "%.Ng" of v that reads back to v after rounding to t; ".0" is
 * appended to integral spellings. */
static void format_float(char *buf, size_t size, double v, tl_dtype t) {
  for (int n = 1; n <= 17; n++) {
    snprintf(buf, size, "%.*g", n, v);
    double r = tl_round_to_dtype(strtod(buf, NULL), t);
    if (r == v && signbit(r) == signbit(v)) break;
  }
  if (!strpbrk(buf, ".eni")) {
    size_t l = strlen(buf);
    if (l + 3 <= size) memcpy(buf + l, ".0", 3);
  }
}

/* Precedence level of e as printed. */
static int expr_prec(const tl_expr *e) {
  switch (e->kind) {
  case TL_EXPR_INT:
    if (e->dtype.code == TL_TYPE_INT && e->dtype.bits == 32 && e->dtype.lanes == 1 && e->u.ival < 0) return P_UNARY;
    return P_ATOM;
  case TL_EXPR_FLOAT:
    if (e->dtype.code == TL_TYPE_FLOAT && e->dtype.bits == 32 && !isnan(e->u.fval) && signbit(e->u.fval))
      return P_UNARY;
    if (isinf(e->u.fval) && e->u.fval < 0) return P_UNARY;
    return P_ATOM;
  case TL_EXPR_BINARY: return binop_prec(e->u.bin.op);
  case TL_EXPR_UNARY: return e->u.un.op == TL_OP_NOT ? P_NOT : P_UNARY;
  default: return P_ATOM;
  }
}

static void print_expr_rec(tl_strbuf *out, const tl_expr *e, int depth);

/* Prints e, parenthesised when its level is below min_prec. */
static void print_child(tl_strbuf *out, const tl_expr *e, int min_prec, int depth) {
  if (e && expr_prec(e) < min_prec) {
    tl_strbuf_append(out, "(");
    print_expr_rec(out, e, depth + 1);
    tl_strbuf_append(out, ")");
  } else {
    print_expr_rec(out, e, depth + 1);
  }
}

static void print_args(tl_strbuf *out, int n, tl_expr *const *args, int depth) {
  for (int i = 0; i < n; i++) {
    if (i) tl_strbuf_append(out, ", ");
    print_expr_rec(out, args[i], depth + 1);
  }
}

/* T.head(args...), with ", lanes" after the arguments when lanes > 0. */
static void print_applied(tl_strbuf *out, const char *head, int n, tl_expr *const *args, int depth, int lanes) {
  tl_strbuf_printf(out, "T.%s(", head);
  print_args(out, n, args, depth);
  if (lanes > 0) tl_strbuf_printf(out, ", %d", lanes);
  tl_strbuf_append(out, ")");
}

static void print_float_lit(tl_strbuf *out, const tl_expr *e) {
  const char *dn = tl_dtype_name(e->dtype);
  double v = e->u.fval;
  bool f32 = e->dtype.code == TL_TYPE_FLOAT && e->dtype.bits == 32 && e->dtype.lanes == 1;
  if (isnan(v)) {
    tl_strbuf_printf(out, "T.%s(\"nan\")", dn);
  } else if (isinf(v)) {
    tl_strbuf_printf(out, "%sT.infinity(\"%s\")", v < 0 ? "-" : "", dn);
  } else {
    char buf[64];
    format_float(buf, sizeof buf, v, e->dtype);
    if (f32) tl_strbuf_append(out, buf);
    else tl_strbuf_printf(out, "T.%s(%s)", dn, buf);
  }
}

static void print_int_lit(tl_strbuf *out, const tl_expr *e) {
  tl_dtype t = e->dtype;
  if (t.code == TL_TYPE_BOOL) {
    tl_strbuf_append(out, e->u.ival ? "True" : "False");
  } else if (t.code == TL_TYPE_INT && t.bits == 32 && t.lanes == 1) {
    tl_strbuf_printf(out, "%lld", (long long)e->u.ival);
  } else if (t.code == TL_TYPE_UINT) {
    uint64_t u = (uint64_t)e->u.ival;
    if (t.bits < 64) u &= (UINT64_C(1) << t.bits) - 1;
    tl_strbuf_printf(out, "T.%s(%llu)", tl_dtype_name(t), (unsigned long long)u);
  } else {
    tl_strbuf_printf(out, "T.%s(%lld)", tl_dtype_name(t), (long long)e->u.ival);
  }
}

static void print_expr_rec(tl_strbuf *out, const tl_expr *e, int depth) {
  if (!e || depth > PRINT_MAX_DEPTH) {
    tl_strbuf_append(out, e ? "..." : "<null>");
    return;
  }
  switch (e->kind) {
  case TL_EXPR_INT: print_int_lit(out, e); break;
  case TL_EXPR_FLOAT: print_float_lit(out, e); break;
  case TL_EXPR_STRING: tl_strbuf_append_quoted(out, e->u.str); break;
  case TL_EXPR_VAR: tl_strbuf_append(out, e->u.var ? e->u.var->name : "<null>"); break;
  case TL_EXPR_BUFFER: tl_strbuf_append(out, e->u.buffer ? e->u.buffer->name : "<null>"); break;
  case TL_EXPR_BINARY: {
    tl_binop op = e->u.bin.op;
    int p = binop_prec(op);
    if (op == TL_OP_MIN || op == TL_OP_MAX) {
      tl_strbuf_printf(out, "%s(", binop_text(op));
      print_expr_rec(out, e->u.bin.a, depth + 1);
      tl_strbuf_append(out, ", ");
      print_expr_rec(out, e->u.bin.b, depth + 1);
      tl_strbuf_append(out, ")");
      break;
    }
    int lp, rp;
    if (op == TL_OP_POW) {
      lp = P_ATOM; /* power ::= primary ["**" u_expr] */
      rp = P_UNARY;
    } else if (p == P_CMP) {
      lp = rp = P_CMP + 1; /* no chaining */
    } else {
      lp = p;
      rp = p + 1;
    }
    print_child(out, e->u.bin.a, lp, depth);
    tl_strbuf_printf(out, " %s ", binop_text(op));
    print_child(out, e->u.bin.b, rp, depth);
    break;
  }
  case TL_EXPR_UNARY:
    switch (e->u.un.op) {
    case TL_OP_NEG:
      tl_strbuf_append(out, "-");
      print_child(out, e->u.un.a, P_UNARY, depth);
      break;
    case TL_OP_BITNOT:
      tl_strbuf_append(out, "~");
      print_child(out, e->u.un.a, P_UNARY, depth);
      break;
    case TL_OP_NOT:
      tl_strbuf_append(out, "not ");
      print_child(out, e->u.un.a, P_NOT, depth);
      break;
    }
    break;
  case TL_EXPR_SELECT: {
    tl_expr *const xs[3] = {e->u.sel.cond, e->u.sel.t, e->u.sel.f};
    print_applied(out, "if_then_else", 3, xs, depth, 0);
    break;
  }
  case TL_EXPR_CAST:
    tl_strbuf_printf(out, "T.Cast(\"%s\", ", tl_dtype_name(e->dtype));
    print_expr_rec(out, e->u.cast.value, depth + 1);
    tl_strbuf_append(out, ")");
    break;
  case TL_EXPR_LOAD:
    tl_strbuf_append(out, e->u.load.buffer ? e->u.load.buffer->name : "<null>");
    tl_strbuf_append(out, "[");
    print_args(out, e->u.load.n, e->u.load.indices, depth);
    tl_strbuf_append(out, "]");
    break;
  case TL_EXPR_CALL: {
    int op = e->u.call.op;
    const char *name = op >= 0 && op < tl_num_intrinsics ? tl_intrinsics[op].name : "unknown";
    print_applied(out, name, e->u.call.n, e->u.call.args, depth, 0);
    break;
  }
  case TL_EXPR_RAMP: {
    tl_expr *const xs[2] = {e->u.ramp.base, e->u.ramp.stride};
    print_applied(out, "Ramp", 2, xs, depth, e->dtype.lanes);
    break;
  }
  case TL_EXPR_BROADCAST: print_applied(out, "Broadcast", 1, &e->u.bcast.value, depth, e->dtype.lanes); break;
  }
}

void tl_print_expr(tl_strbuf *out, const tl_expr *e) { print_expr_rec(out, e, 0); }

/* ============================================================ statements */

static void indent(tl_strbuf *out, int level) {
  for (int i = 0; i < level; i++) tl_strbuf_append(out, "    ");
}

static void print_shape(tl_strbuf *out, int n, tl_expr *const *shape) {
  tl_strbuf_append(out, "(");
  print_args(out, n, shape, 0);
  tl_strbuf_append(out, n == 1 ? ",)" : ")");
}

static bool is_zero(const tl_expr *e) {
  int64_t v;
  return !e || (tl_expr_is_const_int(e, &v) && v == 0);
}
static bool is_one(const tl_expr *e) {
  int64_t v;
  return e && tl_expr_is_const_int(e, &v) && v == 1;
}

/* Prints lo + ext as an addition (folded when fold is set and both are
 * int32 constants: loop bounds fold, region slices print lo:lo + ext). */
static void print_sum(tl_strbuf *out, const tl_expr *lo, const tl_expr *ext, bool fold) {
  int64_t a, b, s;
  if (fold && tl_expr_is_const_int(lo, &a) && tl_expr_is_const_int(ext, &b) && !__builtin_add_overflow(a, b, &s) &&
      lo->dtype.code == TL_TYPE_INT && lo->dtype.bits == 32 && s >= INT32_MIN && s <= INT32_MAX) {
    tl_strbuf_printf(out, "%lld", (long long)s);
    return;
  }
  print_child(out, lo, P_ADD, 0);
  tl_strbuf_append(out, " + ");
  print_child(out, ext, P_ADD + 1, 0);
}

/* Whether the region covers its whole buffer. */
static bool region_is_whole(const tl_region *r) {
  const tl_buffer *b = r->buffer;
  if (!b || r->ndim != b->ndim) return false;
  for (int d = 0; d < r->ndim; d++) {
    if (r->min && !is_zero(r->min[d])) return false;
    if (r->extent && !tl_expr_equal(r->extent[d], b->shape[d])) return false;
  }
  return true;
}

static void print_region(tl_strbuf *out, const tl_region *r) {
  tl_strbuf_append(out, r->buffer ? r->buffer->name : "<null>");
  if (region_is_whole(r)) return;
  bool some_not_one = false;
  for (int d = 0; d < r->ndim; d++)
    if (!r->extent || !is_one(r->extent[d])) some_not_one = true;
  tl_strbuf_append(out, "[");
  for (int d = 0; d < r->ndim; d++) {
    if (d) tl_strbuf_append(out, ", ");
    const tl_expr *lo = r->min ? r->min[d] : NULL;
    const tl_expr *ext = r->extent ? r->extent[d] : (r->buffer && d < r->buffer->ndim ? r->buffer->shape[d] : NULL);
    if (some_not_one && is_one(ext)) {
      if (lo) print_expr_rec(out, lo, 0);
      else tl_strbuf_append(out, "0");
      continue;
    }
    if (is_zero(lo)) {
      tl_strbuf_append(out, "0:");
      print_expr_rec(out, ext, 0);
    } else {
      print_expr_rec(out, lo, 0);
      tl_strbuf_append(out, ":");
      print_sum(out, lo, ext, false);
    }
  }
  tl_strbuf_append(out, "]");
}

static void print_attr_value(tl_strbuf *out, const tl_attr_info *ai, const tl_expr *v) {
  int64_t iv;
  switch (ai->kind) {
  case TL_ATTR_BOOL:
    if (tl_expr_is_const_int(v, &iv)) {
      tl_strbuf_append(out, iv ? "True" : "False");
      return;
    }
    break;
  case TL_ATTR_POLICY:
    if (tl_expr_is_const_int(v, &iv) && iv >= 0 && iv <= 2) {
      static const char *const names[] = {"Square", "FullRow", "FullCol"};
      tl_strbuf_printf(out, "T.GemmWarpPolicy.%s", names[iv]);
      return;
    }
    break;
  default: break;
  }
  print_expr_rec(out, v, 0);
}

static void print_tile(tl_strbuf *out, const tl_stmt *s) {
  int op = s->u.tile.op;
  if (op < 0 || op >= TL_TILE_NUM_OPS) {
    tl_strbuf_append(out, "T.unknown_tile_op()");
    return;
  }
  const tl_tile_op_info *info = &tl_tile_ops[op];
  tl_strbuf_printf(out, "T.%s(", info->name);
  bool first = true;
  if (info->operands && info->operands[0] == 'D') {
    tl_strbuf_append(out, "{");
    for (int i = 0; i + 1 < s->u.tile.nargs; i += 2) {
      if (i) tl_strbuf_append(out, ", ");
      const tl_operand *k = &s->u.tile.args[i], *v = &s->u.tile.args[i + 1];
      if (k->kind == TL_OPND_REGION) tl_strbuf_append(out, k->region.buffer ? k->region.buffer->name : "<null>");
      else print_expr_rec(out, k->expr, 0);
      tl_strbuf_append(out, ": ");
      if (v->kind == TL_OPND_REGION) print_region(out, &v->region);
      else print_expr_rec(out, v->expr, 0);
    }
    tl_strbuf_append(out, "}");
    first = false;
  } else {
    for (int i = 0; i < s->u.tile.nargs; i++) {
      if (!first) tl_strbuf_append(out, ", ");
      first = false;
      const tl_operand *a = &s->u.tile.args[i];
      if (a->kind == TL_OPND_REGION) print_region(out, &a->region);
      else print_expr_rec(out, a->expr, 0);
    }
  }
  for (int i = 0; i < info->nattrs && s->u.tile.attrs; i++) {
    const tl_expr *v = s->u.tile.attrs[i];
    if (tl_attr_is_default(&info->attrs[i], v)) continue; /* not printed */
    if (!first) tl_strbuf_append(out, ", ");
    first = false;
    tl_strbuf_printf(out, "%s=", info->attrs[i].name);
    print_attr_value(out, &info->attrs[i], v);
  }
  tl_strbuf_append(out, ")");
}

static bool stmt_is_empty(const tl_stmt *s) { return !s || (s->kind == TL_STMT_SEQ && s->u.seq.n == 0); }

static void print_stmt(tl_strbuf *out, const tl_stmt *s, int level);

/* The body of a compound statement: "pass" when empty. */
static void print_body(tl_strbuf *out, const tl_stmt *s, int level) {
  if (stmt_is_empty(s)) {
    indent(out, level);
    tl_strbuf_append(out, "pass\n");
  } else {
    print_stmt(out, s, level);
  }
}

static const char *loop_func(tl_loop_kind k) {
  switch (k) {
  case TL_LOOP_SERIAL: return "T.serial";
  case TL_LOOP_PARALLEL: return "T.Parallel";
  case TL_LOOP_PIPELINED: return "T.Pipelined";
  case TL_LOOP_UNROLL: return "T.unroll";
  case TL_LOOP_VECTORIZED: return "T.vectorized";
  case TL_LOOP_THREAD: return "T.thread_binding";
  }
  return "T.serial";
}

static void print_for(tl_strbuf *out, const tl_stmt *s) {
  int nv = s->u.loop.nvars;
  tl_strbuf_append(out, "for ");
  for (int i = 0; i < nv; i++) {
    if (i) tl_strbuf_append(out, ", ");
    tl_strbuf_append(out, s->u.loop.vars[i] ? s->u.loop.vars[i]->name : "<null>");
  }
  tl_strbuf_printf(out, " in %s(", loop_func(s->u.loop.kind));
  for (int i = 0; i < nv; i++) {
    if (i) tl_strbuf_append(out, ", ");
    const tl_expr *lo = s->u.loop.mins ? s->u.loop.mins[i] : NULL;
    const tl_expr *ext = s->u.loop.extents ? s->u.loop.extents[i] : NULL;
    if (s->u.loop.kind != TL_LOOP_PARALLEL && (!is_zero(lo) || s->u.loop.step)) {
      if (lo) print_expr_rec(out, lo, 0);
      else tl_strbuf_append(out, "0");
      tl_strbuf_append(out, ", ");
      if (lo) print_sum(out, lo, ext, true);
      else print_expr_rec(out, ext, 0);
      if (s->u.loop.step) {
        tl_strbuf_append(out, ", ");
        print_expr_rec(out, s->u.loop.step, 0);
      }
    } else {
      print_expr_rec(out, ext, 0);
    }
  }
  if (s->u.loop.kind == TL_LOOP_PIPELINED && s->u.loop.num_stages >= 0)
    tl_strbuf_printf(out, ", num_stages=%d", s->u.loop.num_stages);
  if (s->u.loop.kind == TL_LOOP_SERIAL && s->u.loop.num_stages >= 2) /* made by the pipeline pass */
    tl_strbuf_printf(out, ", annotations={\"num_stages\": %d}", s->u.loop.num_stages);
  for (int w = 0; s->u.loop.kind == TL_LOOP_PIPELINED && w < 2 && s->u.loop.nsched > 0; w++) {
    const int *v = w ? s->u.loop.stage : s->u.loop.order;
    tl_strbuf_append(out, w ? ", stage=[" : ", order=[");
    for (int i = 0; i < s->u.loop.nsched; i++) tl_strbuf_printf(out, "%s%d", i ? ", " : "", v ? v[i] : 0);
    tl_strbuf_append(out, "]");
  }
  tl_strbuf_append(out, "):\n");
}

/* "with T.Kernel(grid, threads=N) as (bx, ...):" */
static void print_kernel_head(tl_strbuf *out, const tl_stmt *s, int level) {
  indent(out, level);
  tl_strbuf_append(out, "with T.Kernel(");
  print_args(out, s->u.kernel.ngrid, s->u.kernel.grid, 0);
  tl_strbuf_append(out, ", threads=");
  if (s->u.kernel.threads) print_expr_rec(out, s->u.kernel.threads, 0);
  else tl_strbuf_append(out, "128");
  tl_strbuf_append(out, ") as ");
  if (s->u.kernel.ngrid != 1) tl_strbuf_append(out, "(");
  for (int i = 0; i < s->u.kernel.ngrid; i++) {
    if (i) tl_strbuf_append(out, ", ");
    tl_var *v = s->u.kernel.block_vars[i];
    tl_strbuf_append(out, v ? v->name : "_");
  }
  if (s->u.kernel.ngrid != 1) tl_strbuf_append(out, ")");
  tl_strbuf_append(out, ":\n");
}

/* A T.make_tensor view's allocation, after "name = ":
 * T.make_tensor(addr, (shape), "dtype"[, strides=(...)]). */
static void print_make_tensor(tl_strbuf *out, const tl_buffer *b) {
  tl_strbuf_append(out, "T.make_tensor(");
  print_expr_rec(out, b->data, 0);
  tl_strbuf_append(out, ", ");
  print_shape(out, b->ndim, b->shape);
  tl_strbuf_printf(out, ", \"%s\"", tl_dtype_name(b->dtype));
  if (b->strides) {
    tl_strbuf_append(out, ", strides=");
    print_shape(out, b->ndim, b->strides);
  }
  tl_strbuf_append(out, ")\n");
}

static bool is_workspace_alloc(const tl_stmt *s) {
  return s && s->kind == TL_STMT_ALLOC && s->u.alloc.buffer && s->u.alloc.buffer->scope == TL_SCOPE_GLOBAL &&
         s->u.alloc.buffer->zero_per_launch;
}

/* A body of several T.Kernel scopes (a launch sequence, docs/language.md):
 * the T.alloc_global workspaces at the top of the scopes are printed before
 * them, as TileLang writes them, so that every scope sees their names when
 * the text is parsed back (the elaborator puts them into the first scope). */
static bool print_kernel_sequence(tl_strbuf *out, const tl_stmt *body, int level) {
  int nk = 0;
  for (int i = 0; body && body->kind == TL_STMT_SEQ && i < body->u.seq.n; i++)
    nk += body->u.seq.stmts[i]->kind == TL_STMT_KERNEL;
  if (nk < 2) return false;
  for (int i = 0; i < body->u.seq.n; i++) {
    const tl_stmt *k = body->u.seq.stmts[i], *kb = k->kind == TL_STMT_KERNEL ? k->u.kernel.body : NULL;
    int n = kb && kb->kind == TL_STMT_SEQ ? kb->u.seq.n : kb ? 1 : 0;
    for (int j = 0; j < n; j++) {
      const tl_stmt *x = kb->kind == TL_STMT_SEQ ? kb->u.seq.stmts[j] : kb;
      if (is_workspace_alloc(x)) print_stmt(out, x, level);
    }
  }
  for (int i = 0; i < body->u.seq.n; i++) {
    const tl_stmt *k = body->u.seq.stmts[i], *kb = k->kind == TL_STMT_KERNEL ? k->u.kernel.body : NULL;
    if (!kb) {
      print_stmt(out, k, level);
      continue;
    }
    print_kernel_head(out, k, level);
    int n = kb->kind == TL_STMT_SEQ ? kb->u.seq.n : 1, printed = 0;
    for (int j = 0; j < n; j++) {
      const tl_stmt *x = kb->kind == TL_STMT_SEQ ? kb->u.seq.stmts[j] : kb;
      if (is_workspace_alloc(x) || stmt_is_empty(x)) continue;
      print_stmt(out, x, level + 1);
      printed++;
    }
    if (!printed) {
      indent(out, level + 1);
      tl_strbuf_append(out, "pass\n");
    }
  }
  return true;
}

static void print_stmt(tl_strbuf *out, const tl_stmt *s, int level) {
  if (!s) return;
  if (level > PRINT_MAX_DEPTH) {
    indent(out, level);
    tl_strbuf_append(out, "...\n");
    return;
  }
  switch (s->kind) {
  case TL_STMT_SEQ:
    for (int i = 0; i < s->u.seq.n; i++) print_stmt(out, s->u.seq.stmts[i], level);
    return;
  case TL_STMT_FOR:
    indent(out, level);
    print_for(out, s);
    print_body(out, s->u.loop.body, level + 1);
    return;
  case TL_STMT_WHILE:
    indent(out, level);
    tl_strbuf_append(out, "while ");
    print_expr_rec(out, s->u.whiles.cond, 0);
    tl_strbuf_append(out, ":\n");
    print_body(out, s->u.whiles.body, level + 1);
    return;
  case TL_STMT_KERNEL: {
    print_kernel_head(out, s, level);
    print_body(out, s->u.kernel.body, level + 1);
    return;
  }
  case TL_STMT_ALLOC: {
    const tl_buffer *b = s->u.alloc.buffer;
    if (!b) return;
    indent(out, level);
    tl_strbuf_printf(out, "%s = ", b->name);
    const char *dn = tl_dtype_name(b->dtype);
    if (b->scope == TL_SCOPE_LOCAL_VAR) {
      tl_strbuf_printf(out, "T.alloc_var(\"%s\"", dn);
      if (b->init) {
        tl_strbuf_append(out, ", ");
        print_expr_rec(out, b->init, 0);
      }
      tl_strbuf_append(out, ")\n");
      return;
    }
    if (tl_buffer_is_view(b)) {
      print_make_tensor(out, b);
      return;
    }
    if (b->scope == TL_SCOPE_FRAGMENT && b->reducer) { /* T.alloc_reducer: its op and replication */
      static const char *const ops[] = {"?", "sum", "max", "min"}, *const reps[] = {"None", "\"all\"", "\"none\""};
      tl_strbuf_append(out, "T.alloc_reducer(");
      print_shape(out, b->ndim, b->shape);
      tl_strbuf_printf(out, ", \"%s\", op=\"%s\"", dn, ops[b->reducer <= TL_REDUCER_MIN ? b->reducer : 0]);
      if (b->reducer_rep)
        tl_strbuf_printf(out, ", replication=%s", reps[b->reducer_rep <= TL_REDUCER_REP_NONE ? b->reducer_rep : 0]);
      tl_strbuf_append(out, ")\n");
      return;
    }
    const char *fn = b->scope == TL_SCOPE_FRAGMENT ? "T.alloc_fragment"
                     : b->scope == TL_SCOPE_LOCAL  ? "T.alloc_local"
                     : b->scope == TL_SCOPE_GLOBAL ? (b->zero_per_launch ? "T.alloc_global" : "T.alloc_buffer")
                                                   : "T.alloc_shared";
    tl_strbuf_printf(out, "%s(", fn);
    print_shape(out, b->ndim, b->shape);
    tl_strbuf_printf(out, ", \"%s\"", dn);
    if (b->scope == TL_SCOPE_SHARED) tl_strbuf_append(out, ", scope=\"shared\"");
    else if (b->scope == TL_SCOPE_GLOBAL && !b->zero_per_launch) tl_strbuf_append(out, ", scope=\"global\"");
    tl_strbuf_append(out, ")\n");
    return;
  }
  case TL_STMT_STORE:
    indent(out, level);
    tl_strbuf_append(out, s->u.store.buffer ? s->u.store.buffer->name : "<null>");
    tl_strbuf_append(out, "[");
    print_args(out, s->u.store.n, s->u.store.indices, 0);
    tl_strbuf_append(out, "] = ");
    print_expr_rec(out, s->u.store.value, 0);
    tl_strbuf_append(out, "\n");
    return;
  case TL_STMT_IF: {
    const char *kw = "if";
    const tl_stmt *cur = s;
    for (int guard = 0; guard <= PRINT_MAX_DEPTH; guard++) {
      indent(out, level);
      tl_strbuf_printf(out, "%s ", kw);
      print_expr_rec(out, cur->u.ifs.cond, 0);
      tl_strbuf_append(out, ":\n");
      print_body(out, cur->u.ifs.then_s, level + 1);
      const tl_stmt *e = cur->u.ifs.else_s;
      if (e && e->kind == TL_STMT_SEQ && e->u.seq.n == 1) e = e->u.seq.stmts[0];
      if (stmt_is_empty(e)) return;
      if (e->kind == TL_STMT_IF) {
        kw = "elif";
        cur = e;
        continue;
      }
      indent(out, level);
      tl_strbuf_append(out, "else:\n");
      print_body(out, e, level + 1);
      return;
    }
    return;
  }
  case TL_STMT_LET:
    indent(out, level);
    tl_strbuf_append(out, s->u.let.var ? s->u.let.var->name : "<null>");
    /* a constant value gets its dtype as an annotation: `w = 0` would parse as a Python constant, not a let
     * (the printed text must parse back to the same IR) */
    if (s->u.let.value && (s->u.let.value->kind == TL_EXPR_INT || s->u.let.value->kind == TL_EXPR_FLOAT))
      tl_strbuf_printf(out, ": T.%s", tl_dtype_name(s->u.let.value->dtype));
    tl_strbuf_append(out, " = ");
    print_expr_rec(out, s->u.let.value, 0);
    tl_strbuf_append(out, "\n");
    return;
  case TL_STMT_EVAL:
    indent(out, level);
    print_expr_rec(out, s->u.eval.value, 0);
    tl_strbuf_append(out, "\n");
    return;
  case TL_STMT_TILE:
    indent(out, level);
    print_tile(out, s);
    tl_strbuf_append(out, "\n");
    return;
  }
}

static void print_func(tl_strbuf *out, const tl_primfunc *f) {
  tl_strbuf_printf(out, "@T.prim_func\ndef %s(", f->name ? f->name : "main");
  for (int i = 0; i < f->nparams; i++) {
    const tl_param *p = &f->params[i];
    if (i) tl_strbuf_append(out, ", ");
    if (p->kind == TL_PARAM_TENSOR && p->buffer) {
      tl_strbuf_printf(out, "%s: T.%s(", p->buffer->name, p->buffer->strides ? "StridedTensor" : "Tensor");
      print_shape(out, p->buffer->ndim, p->buffer->shape);
      if (p->buffer->strides) {
        tl_strbuf_append(out, ", ");
        print_shape(out, p->buffer->ndim, p->buffer->strides);
      }
      tl_strbuf_printf(out, ", \"%s\")", tl_dtype_name(p->buffer->dtype));
    } else if (p->var) {
      tl_strbuf_printf(out, "%s: T.%s", p->var->name, tl_dtype_name(p->var->dtype));
    }
  }
  tl_strbuf_append(out, "):\n");
  bool any = false;
  bool any_config = false;
  for (int c = 0; c < TL_PASS_CONFIG_COUNT; c++)
    any_config |= tl_pass_config_get(&f->pass_configs, c) || tl_pass_config_given(&f->pass_configs, c);
  if (f->has_out_idx || any_config) {
    tl_strbuf_append(out, "    T.func_attr({");
    const char *sep = "";
    if (f->has_out_idx) {
      tl_strbuf_append(out, "\"out_idx\": [");
      for (int i = 0; i < f->nout; i++) tl_strbuf_printf(out, "%s%d", i ? ", " : "", f->out_idx[i]);
      tl_strbuf_append(out, "]");
      sep = ", ";
    }
    for (int c = 0; c < TL_PASS_CONFIG_COUNT; c++) /* set, or given as False */
      if (tl_pass_config_get(&f->pass_configs, c) || tl_pass_config_given(&f->pass_configs, c)) {
        tl_strbuf_printf(out, "%s\"%s\": %s", sep, tl_pass_config_table[c].key,
                         tl_pass_config_value_text(c, tl_pass_config_get(&f->pass_configs, c)));
        sep = ", ";
      }
    tl_strbuf_append(out, "})\n");
    any = true;
  }
  if (!stmt_is_empty(f->body)) {
    if (!print_kernel_sequence(out, f->body, 1)) print_stmt(out, f->body, 1);
    any = true;
  }
  if (!any) tl_strbuf_append(out, "    pass\n");
}

void tl_print_module(tl_strbuf *out, const tl_module *m) {
  tl_strbuf_append(out, "import tilelang.language as T\n\n");
  /* Dynamic symbols of all functions, each name once, in declaration order
   * (two functions may each have their own variable of one name: the
   * module-level declaration the parser reads back is shared). */
  bool any = false;
  for (int fi = 0; fi < m->nfuncs; fi++) {
    const tl_primfunc *f = m->funcs[fi];
    for (int i = 0; i < f->ndynamic; i++) {
      const tl_var *v = f->dynamic[i];
      bool seen = false;
      for (int fj = 0; fj <= fi && !seen; fj++) {
        const tl_primfunc *g = m->funcs[fj];
        int lim = fj == fi ? i : g->ndynamic;
        for (int j = 0; j < lim && !seen; j++)
          seen = g->dynamic[j] == v || (v && g->dynamic[j] && !strcmp(g->dynamic[j]->name, v->name));
      }
      if (seen || !v) continue;
      tl_strbuf_printf(out, "%s = T.dynamic(\"%s\"", v->name, v->name);
      if (!(v->dtype.code == TL_TYPE_INT && v->dtype.bits == 32))
        tl_strbuf_printf(out, ", \"%s\"", tl_dtype_name(v->dtype));
      tl_strbuf_append(out, ")\n");
      any = true;
    }
  }
  if (any) tl_strbuf_append(out, "\n");
  for (int fi = 0; fi < m->nfuncs; fi++) {
    if (fi) tl_strbuf_append(out, "\n");
    print_func(out, m->funcs[fi]);
  }
}
