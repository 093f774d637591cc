/* Printer of AST expressions as Python source text (tl_ast_print_expr), used
 * in diagnostics and in parser tests.
 *
 * Algorithm: a precedence-driven recursive printer.  Every node has a
 * binding level (Python's: ifexp < or < and < not < comparison < | < ^ < & <
 * shifts < + - < * / // % @ < unary < ** < primary); a child printed in a
 * context that requires a higher level is parenthesised.  Left-associative
 * operators require level+1 on their right operand, ** (right-associative)
 * on its left.  Tuples always print in parentheses.  Recursion is bounded:
 * below depth 2000 the printer writes "..." instead of descending (the
 * parser keeps trees shallower than that). */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "Frontend/ast.h"

enum {
  P_TEST = 1,
  P_OR,
  P_AND,
  P_NOT,
  P_CMP,
  P_BOR,
  P_BXOR,
  P_BAND,
  P_SHIFT,
  P_ARITH,
  P_TERM,
  P_UNARY,
  P_POW,
  P_PRIMARY
};

#define MAX_PRINT_DEPTH 2000

static int binop_prec(const char *op) {
  if (!strcmp(op, "|")) return P_BOR;
  if (!strcmp(op, "^")) return P_BXOR;
  if (!strcmp(op, "&")) return P_BAND;
  if (!strcmp(op, "<<") || !strcmp(op, ">>")) return P_SHIFT;
  if (!strcmp(op, "+") || !strcmp(op, "-")) return P_ARITH;
  if (!strcmp(op, "**")) return P_POW;
  return P_TERM; /* * / // % @ */
}

static int prec_of(const tl_ast_expr *e) {
  switch (e->kind) {
  case TL_AST_IFEXP: return P_TEST;
  case TL_AST_BOOLOP: return e->u.bin.op && !strcmp(e->u.bin.op, "or") ? P_OR : P_AND;
  case TL_AST_UNARY: return e->u.un.op && !strcmp(e->u.un.op, "not") ? P_NOT : P_UNARY;
  case TL_AST_COMPARE: return P_CMP;
  case TL_AST_BINOP: return binop_prec(e->u.bin.op ? e->u.bin.op : "?");
  case TL_AST_INT: return e->u.ival < 0 ? P_UNARY : P_PRIMARY;
  case TL_AST_FLOAT: return (e->u.fval < 0 || signbit(e->u.fval)) ? P_UNARY : P_PRIMARY;
  default: return P_PRIMARY;
  }
}

void tl_ast_print_float(tl_strbuf *out, double v) {
  if (isnan(v)) {
    tl_strbuf_append(out, "nan");
    return;
  }
  if (isinf(v)) {
    tl_strbuf_append(out, v < 0 ? "-inf" : "inf");
    return;
  }
  /* shortest round-tripping digits; positional notation for exponents in
   * [-4, 16) as Python's repr does */
  char buf[400];
  int prec = 1;
  for (; prec < 17; prec++) {
    snprintf(buf, sizeof buf, "%.*e", prec - 1, v);
    if (strtod(buf, NULL) == v) break;
  }
  snprintf(buf, sizeof buf, "%.*e", prec - 1, v);
  const char *ep = strchr(buf, 'e');
  int exp10 = ep ? atoi(ep + 1) : 0;
  if (exp10 >= -4 && exp10 < 16) {
    int decimals = prec - 1 - exp10;
    if (decimals < 1) decimals = 1;
    snprintf(buf, sizeof buf, "%.*f", decimals, v);
    size_t n = strlen(buf);
    while (n > 2 && buf[n - 1] == '0' && buf[n - 2] != '.') buf[--n] = 0;
  }
  tl_strbuf_append(out, buf);
}

static void pr(tl_strbuf *out, const tl_ast_expr *e, int need, int depth);

static void pr_list(tl_strbuf *out, int n, tl_ast_expr *const *items, int depth) {
  for (int i = 0; i < n; i++) {
    if (i) tl_strbuf_append(out, ", ");
    pr(out, items[i], P_TEST, depth);
  }
}

/* "l op r", the operands printed at precedence lneed and rneed. */
static void pr_infix(tl_strbuf *out, const tl_ast_expr *l, int lneed, const char *op, const tl_ast_expr *r, int rneed,
                     int depth) {
  pr(out, l, lneed, depth);
  tl_strbuf_printf(out, " %s ", op ? op : "?");
  pr(out, r, rneed, depth);
}

/* Comprehension clauses: " for t in it if c ..." */
static void pr_gens(tl_strbuf *out, const tl_ast_expr *e, int depth) {
  for (int i = 0; i < e->u.comp.ngens; i++) {
    const tl_ast_comprehension *g = &e->u.comp.gens[i];
    tl_strbuf_append(out, g->is_async ? " async for " : " for ");
    pr_infix(out, g->target, P_BOR, "in", g->iter, P_OR, depth);
    for (int j = 0; j < g->nifs; j++) {
      tl_strbuf_append(out, " if ");
      pr(out, g->ifs[j], P_OR, depth);
    }
  }
}

/* The kinds that kernels do not use: printed compactly (messages only). */
static void pr_more(tl_strbuf *out, const tl_ast_expr *e, int depth) {
  switch (e->kind) {
  case TL_AST_SET:
    tl_strbuf_append(out, "{");
    pr_list(out, e->u.list.n, e->u.list.items, depth);
    tl_strbuf_append(out, "}");
    break;
  case TL_AST_ELLIPSIS: tl_strbuf_append(out, "..."); break;
  case TL_AST_BYTES:
    tl_strbuf_append(out, "b");
    tl_strbuf_append_quoted(out, e->u.bytes.data);
    break;
  case TL_AST_IMAG:
    tl_ast_print_float(out, e->u.fval);
    tl_strbuf_append(out, "j");
    break;
  case TL_AST_BIGINT: tl_strbuf_append(out, e->u.str); break;
  case TL_AST_FSTRING: tl_strbuf_append(out, "f\"...\""); break;
  case TL_AST_FORMATTED:
    tl_strbuf_append(out, "{");
    pr(out, e->u.fmt.value, P_TEST, depth);
    tl_strbuf_append(out, "}");
    break;
  case TL_AST_STARRED:
    tl_strbuf_append(out, "*");
    pr(out, e->u.un.x, P_BOR, depth);
    break;
  case TL_AST_NAMEDEXPR: pr_infix(out, e->u.bin.l, P_PRIMARY, ":=", e->u.bin.r, P_TEST, depth); break;
  case TL_AST_LAMBDA:
    tl_strbuf_append(out, "lambda");
    for (int i = 0; i < e->u.lambda.nparams; i++)
      tl_strbuf_printf(out, "%s%s", i ? ", " : " ", e->u.lambda.params[i].name);
    tl_strbuf_append(out, ": ");
    pr(out, e->u.lambda.body, P_TEST, depth);
    break;
  case TL_AST_AWAIT:
  case TL_AST_YIELD:
  case TL_AST_YIELD_FROM:
    tl_strbuf_append(out, e->u.un.op);
    if (e->u.un.x) {
      tl_strbuf_append(out, " ");
      pr(out, e->u.un.x, P_TEST, depth);
    }
    break;
  case TL_AST_LISTCOMP:
  case TL_AST_SETCOMP:
  case TL_AST_GENEXP:
  case TL_AST_DICTCOMP:
    tl_strbuf_append(out, e->kind == TL_AST_LISTCOMP ? "[" : e->kind == TL_AST_GENEXP ? "(" : "{");
    pr(out, e->u.comp.elt, P_TEST, depth);
    if (e->u.comp.value) {
      tl_strbuf_append(out, ": ");
      pr(out, e->u.comp.value, P_TEST, depth);
    }
    pr_gens(out, e, depth);
    tl_strbuf_append(out, e->kind == TL_AST_LISTCOMP ? "]" : e->kind == TL_AST_GENEXP ? ")" : "}");
    break;
  default: tl_strbuf_append(out, "?"); break;
  }
}

static void pr(tl_strbuf *out, const tl_ast_expr *e, int need, int depth) {
  if (!e) {
    tl_strbuf_append(out, "<null>");
    return;
  }
  if (depth > MAX_PRINT_DEPTH) {
    tl_strbuf_append(out, "...");
    return;
  }
  depth++;
  int prec = prec_of(e);
  bool paren = prec < need;
  if (paren) tl_strbuf_append(out, "(");
  switch (e->kind) {
  case TL_AST_NAME: tl_strbuf_append(out, e->u.name ? e->u.name : "?"); break;
  case TL_AST_INT: tl_strbuf_printf(out, "%" PRId64, e->u.ival); break;
  case TL_AST_FLOAT: tl_ast_print_float(out, e->u.fval); break;
  case TL_AST_STR: tl_strbuf_append_quoted(out, e->u.str); break;
  case TL_AST_TRUE: tl_strbuf_append(out, "True"); break;
  case TL_AST_FALSE: tl_strbuf_append(out, "False"); break;
  case TL_AST_NONE: tl_strbuf_append(out, "None"); break;
  case TL_AST_ATTR:
    pr(out, e->u.attr.value, P_PRIMARY, depth);
    if (e->u.attr.value && e->u.attr.value->kind == TL_AST_INT) tl_strbuf_append(out, " ");
    tl_strbuf_append(out, ".");
    tl_strbuf_append(out, e->u.attr.name ? e->u.attr.name : "?");
    break;
  case TL_AST_SUBSCRIPT:
    pr(out, e->u.sub.value, P_PRIMARY, depth);
    tl_strbuf_append(out, "[");
    pr_list(out, e->u.sub.n, e->u.sub.items, depth);
    tl_strbuf_append(out, "]");
    break;
  case TL_AST_SLICE:
    if (e->u.slice.lo) pr(out, e->u.slice.lo, P_TEST, depth);
    tl_strbuf_append(out, ":");
    if (e->u.slice.hi) pr(out, e->u.slice.hi, P_TEST, depth);
    if (e->u.slice.step) {
      tl_strbuf_append(out, ":");
      pr(out, e->u.slice.step, P_TEST, depth);
    }
    break;
  case TL_AST_CALL:
    pr(out, e->u.call.func, P_PRIMARY, depth);
    tl_strbuf_append(out, "(");
    pr_list(out, e->u.call.nargs, e->u.call.args, depth);
    for (int i = 0; i < e->u.call.nkw; i++) {
      if (i || e->u.call.nargs) tl_strbuf_append(out, ", ");
      tl_strbuf_append(out, e->u.call.kw[i].name ? e->u.call.kw[i].name : "?");
      tl_strbuf_append(out, "=");
      pr(out, e->u.call.kw[i].value, P_TEST, depth);
    }
    tl_strbuf_append(out, ")");
    break;
  case TL_AST_BINOP: {
    bool pow = prec == P_POW;
    pr_infix(out, e->u.bin.l, pow ? P_PRIMARY : prec, e->u.bin.op, e->u.bin.r, pow ? P_UNARY : prec + 1, depth);
    break;
  }
  case TL_AST_BOOLOP: pr_infix(out, e->u.bin.l, prec, e->u.bin.op, e->u.bin.r, prec + 1, depth); break;
  case TL_AST_UNARY: {
    const char *op = e->u.un.op ? e->u.un.op : "?";
    if (prec == P_NOT) {
      tl_strbuf_append(out, "not ");
      pr(out, e->u.un.x, P_NOT, depth);
    } else {
      tl_strbuf_append(out, op);
      pr(out, e->u.un.x, P_UNARY, depth);
    }
    break;
  }
  case TL_AST_COMPARE:
    pr(out, e->u.cmp.operands[0], P_BOR, depth);
    for (int i = 0; i < e->u.cmp.n; i++) {
      tl_strbuf_printf(out, " %s ", e->u.cmp.ops[i] ? e->u.cmp.ops[i] : "?");
      pr(out, e->u.cmp.operands[i + 1], P_BOR, depth);
    }
    break;
  case TL_AST_IFEXP:
    pr_infix(out, e->u.ifexp.body, P_OR, "if", e->u.ifexp.test, P_OR, depth);
    tl_strbuf_append(out, " else ");
    pr(out, e->u.ifexp.orelse, P_TEST, depth);
    break;
  case TL_AST_TUPLE:
    tl_strbuf_append(out, "(");
    pr_list(out, e->u.list.n, e->u.list.items, depth);
    if (e->u.list.n == 1) tl_strbuf_append(out, ",");
    tl_strbuf_append(out, ")");
    break;
  case TL_AST_LIST:
    tl_strbuf_append(out, "[");
    pr_list(out, e->u.list.n, e->u.list.items, depth);
    tl_strbuf_append(out, "]");
    break;
  case TL_AST_DICT:
    tl_strbuf_append(out, "{");
    for (int i = 0; i < e->u.dict.n; i++) {
      if (i) tl_strbuf_append(out, ", ");
      pr(out, e->u.dict.keys[i], P_TEST, depth);
      tl_strbuf_append(out, ": ");
      pr(out, e->u.dict.values[i], P_TEST, depth);
    }
    tl_strbuf_append(out, "}");
    break;
  default: pr_more(out, e, depth); break;
  }
  if (paren) tl_strbuf_append(out, ")");
}

void tl_ast_print_expr(tl_strbuf *out, const tl_ast_expr *e) {
  if (!out) return;
  pr(out, e, P_TEST, 0);
}
