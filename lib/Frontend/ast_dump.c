/* Dump of the syntax tree in the form of CPython 3.11's
 * ast.dump(ast.parse(source)) (tl_ast_dump_module): node kinds, fields in
 * CPython's order, optional fields left out when absent, lists always
 * shown, constants as Python's repr.  It checks the parser against CPython
 * (test/IR/grammar, tl-opt --emit=ast).
 *
 * Algorithm: a recursive printer that maps our node kinds to CPython's
 * classes: chained and/or become one BoolOp (unless parenthesised),
 * a[i, j] gets a Tuple slice, 'import a, b' (two of our statements, the
 * second marked cont) becomes one Import, parameters are regrouped into
 * CPython's arguments node, and the expression context (Load/Store/Del) is
 * passed down from the statement that owns a target.  Depth is bounded by
 * the parser's limits. */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "Frontend/ast.h"

typedef tl_strbuf sb;
enum { LOAD, STORE, DEL };
static const char *const ctx_names[] = {"Load()", "Store()", "Del()"};

static void expr(sb *o, const tl_ast_expr *e, int ctx);
static void block(sb *o, const tl_ast_block *b);

static void put(sb *o, const char *s) { tl_strbuf_append(o, s); }

/* Python's repr of a str (quote choice and escapes as unicode_repr). */
static void repr_str(sb *o, const char *s, size_t n, bool bytes) {
  bool sq = memchr(s, '\'', n) != NULL, dq = memchr(s, '"', n) != NULL;
  char q = sq && !dq ? '"' : '\'';
  if (bytes) put(o, "b");
  tl_strbuf_appendn(o, &q, 1);
  for (size_t i = 0; i < n; i++) {
    unsigned char c = (unsigned char)s[i];
    if (c == (unsigned char)q || c == '\\') tl_strbuf_printf(o, "\\%c", c);
    else if (c == '\n') put(o, "\\n");
    else if (c == '\r') put(o, "\\r");
    else if (c == '\t') put(o, "\\t");
    else if (c < 0x20 || c == 0x7F || (bytes && c >= 0x80)) tl_strbuf_printf(o, "\\x%02x", c);
    else if (c == 0xC2 && i + 1 < n && (unsigned char)s[i + 1] <= 0xA0) {
      /* U+0080..U+00A0 are not printable */
      tl_strbuf_printf(o, "\\x%02x", (unsigned char)s[++i] & 0xFF);
    } else if (c == 0xC2 && i + 1 < n && (unsigned char)s[i + 1] == 0xAD) {
      put(o, "\\xad");
      i++;
    } else tl_strbuf_appendn(o, (const char *)&s[i], 1);
  }
  tl_strbuf_appendn(o, &q, 1);
}

/* Python's repr of a float, or of a complex with a zero real part (2j). */
static void repr_float(sb *o, double v, bool imag) {
  tl_strbuf t = {0};
  tl_ast_print_float(&t, v);
  size_t n = t.len;
  if (imag && n > 2 && !strcmp(t.data + n - 2, ".0")) n -= 2;
  tl_strbuf_appendn(o, t.data ? t.data : "", n);
  if (imag) put(o, "j");
  tl_strbuf_free(&t);
}

static void list_begin(sb *o, const char *field, bool *first) {
  if (!*first) put(o, ", ");
  *first = false;
  tl_strbuf_printf(o, "%s=[", field);
}

static void exprs(sb *o, const char *field, int n, tl_ast_expr *const *items, int ctx, bool *first) {
  list_begin(o, field, first);
  for (int i = 0; i < n; i++) {
    if (i) put(o, ", ");
    if (items[i]) expr(o, items[i], ctx);
    else put(o, "None");
  }
  put(o, "]");
}

/* ", field=" before an optional or required field */
static void field(sb *o, const char *name, bool *first) {
  if (!*first) put(o, ", ");
  *first = false;
  tl_strbuf_printf(o, "%s=", name);
}

/* A required expression field: ", name=" and e. */
static void expr_field(sb *o, const char *name, const tl_ast_expr *e, int ctx, bool *first) {
  field(o, name, first);
  expr(o, e, ctx);
}

static void opt_expr(sb *o, const char *name, const tl_ast_expr *e, int ctx, bool *first) {
  if (e) expr_field(o, name, e, ctx, first);
}

/* One expression field of a node: required (printed even when NULL) or
 * optional (left out when NULL). */
typedef struct xfield {
  const char *name;
  const tl_ast_expr *e;
  int ctx;
  bool opt;
} xfield;

/* A node "cls(f1=..., f2=...)" whose fields are all expressions. */
static void node(sb *o, const char *cls, int n, const xfield *fs) {
  bool f = true;
  tl_strbuf_printf(o, "%s(", cls);
  for (int i = 0; i < n; i++) {
    if (fs[i].opt) opt_expr(o, fs[i].name, fs[i].e, fs[i].ctx, &f);
    else expr_field(o, fs[i].name, fs[i].e, fs[i].ctx, &f);
  }
  put(o, ")");
}

static const char *binop_name(const char *op) {
  static const char *const t[][2] = {
      {"+", "Add"},       {"-", "Sub"},     {"*", "Mult"},       {"@", "MatMult"}, {"/", "Div"},        {"%", "Mod"},
      {"**", "Pow"},      {"<<", "LShift"}, {">>", "RShift"},    {"|", "BitOr"},   {"^", "BitXor"},     {"&", "BitAnd"},
      {"//", "FloorDiv"}, {"==", "Eq"},     {"!=", "NotEq"},     {"<", "Lt"},      {"<=", "LtE"},       {">", "Gt"},
      {">=", "GtE"},      {"is", "Is"},     {"is not", "IsNot"}, {"in", "In"},     {"not in", "NotIn"}, {"and", "And"},
      {"or", "Or"},       {"~", "Invert"},  {"not", "Not"}};
  for (size_t i = 0; i < sizeof t / sizeof t[0]; i++)
    if (op && !strcmp(op, t[i][0])) return t[i][1];
  return "?";
}

/* and/or chains: operands of the same operator, left-nested, not parenthesised */
static void boolop_values(sb *o, const tl_ast_expr *e, const char *op, bool top) {
  if (e->kind == TL_AST_BOOLOP && !strcmp(e->u.bin.op, op) && (top || !(e->flags & TL_AST_F_PARENS))) {
    boolop_values(o, e->u.bin.l, op, false);
    put(o, ", ");
    expr(o, e->u.bin.r, LOAD);
    return;
  }
  expr(o, e, LOAD);
}

static void args_node(sb *o, int n, const tl_ast_param *ps);

static void comprehensions(sb *o, int n, const tl_ast_comprehension *g, bool *first) {
  list_begin(o, "generators", first);
  for (int i = 0; i < n; i++) {
    if (i) put(o, ", ");
    put(o, "comprehension(");
    bool f = true;
    expr_field(o, "target", g[i].target, STORE, &f);
    expr_field(o, "iter", g[i].iter, LOAD, &f);
    exprs(o, "ifs", g[i].nifs, g[i].ifs, LOAD, &f);
    tl_strbuf_printf(o, ", is_async=%d)", g[i].is_async ? 1 : 0);
  }
  put(o, "]");
}

static void keywords(sb *o, int n, const tl_ast_keyword *kw, bool *first) {
  list_begin(o, "keywords", first);
  for (int i = 0; i < n; i++) {
    if (i) put(o, ", ");
    put(o, "keyword(");
    if (kw[i].name) tl_strbuf_printf(o, "arg='%s', ", kw[i].name);
    put(o, "value=");
    expr(o, kw[i].value, LOAD);
    put(o, ")");
  }
  put(o, "]");
}

static void constant(sb *o, const tl_ast_expr *e) {
  put(o, "Constant(value=");
  switch (e->kind) {
  case TL_AST_INT: tl_strbuf_printf(o, "%" PRId64, e->u.ival); break;
  case TL_AST_BIGINT: put(o, e->u.str); break;
  case TL_AST_FLOAT: repr_float(o, e->u.fval, false); break;
  case TL_AST_IMAG: repr_float(o, e->u.fval, true); break;
  case TL_AST_STR: repr_str(o, e->u.str, e->slen ? e->slen : strlen(e->u.str), false); break;
  case TL_AST_BYTES: repr_str(o, e->u.bytes.data, e->u.bytes.n, true); break;
  case TL_AST_TRUE: put(o, "True"); break;
  case TL_AST_FALSE: put(o, "False"); break;
  case TL_AST_NONE: put(o, "None"); break;
  default: put(o, "Ellipsis"); break;
  }
  if (e->kind == TL_AST_STR && (e->flags & TL_AST_F_U_PREFIX)) put(o, ", kind='u'");
  put(o, ")");
}

/* Expressions with a list of items or a comprehension. */
static void expr_compound(sb *o, const tl_ast_expr *e, int ctx) {
  bool f = true;
  switch (e->kind) {
  case TL_AST_TUPLE:
  case TL_AST_LIST:
    put(o, e->kind == TL_AST_TUPLE ? "Tuple(" : "List(");
    exprs(o, "elts", e->u.list.n, e->u.list.items, ctx, &f);
    tl_strbuf_printf(o, ", ctx=%s)", ctx_names[ctx]);
    return;
  case TL_AST_SET:
    put(o, "Set(");
    exprs(o, "elts", e->u.list.n, e->u.list.items, LOAD, &f);
    break;
  case TL_AST_FSTRING:
    put(o, "JoinedStr(");
    exprs(o, "values", e->u.list.n, e->u.list.items, LOAD, &f);
    break;
  case TL_AST_DICT:
    put(o, "Dict(");
    exprs(o, "keys", e->u.dict.n, e->u.dict.keys, LOAD, &f);
    exprs(o, "values", e->u.dict.n, e->u.dict.values, LOAD, &f);
    break;
  case TL_AST_CALL:
    put(o, "Call(func=");
    expr(o, e->u.call.func, LOAD);
    f = false;
    exprs(o, "args", e->u.call.nargs, e->u.call.args, LOAD, &f);
    keywords(o, e->u.call.nkw, e->u.call.kw, &f);
    break;
  case TL_AST_COMPARE:
    put(o, "Compare(left=");
    expr(o, e->u.cmp.operands[0], LOAD);
    put(o, ", ops=[");
    for (int i = 0; i < e->u.cmp.n; i++) tl_strbuf_printf(o, "%s%s()", i ? ", " : "", binop_name(e->u.cmp.ops[i]));
    f = false;
    put(o, "]");
    exprs(o, "comparators", e->u.cmp.n, e->u.cmp.operands + 1, LOAD, &f);
    break;
  default: { /* comprehensions */
    const char *nm = e->kind == TL_AST_LISTCOMP  ? "ListComp"
                     : e->kind == TL_AST_SETCOMP ? "SetComp"
                     : e->kind == TL_AST_GENEXP  ? "GeneratorExp"
                                                 : "DictComp";
    tl_strbuf_printf(o, "%s(%s=", nm, e->kind == TL_AST_DICTCOMP ? "key" : "elt");
    expr(o, e->u.comp.elt, LOAD);
    f = false;
    opt_expr(o, "value", e->u.comp.value, LOAD, &f);
    comprehensions(o, e->u.comp.ngens, e->u.comp.gens, &f);
    break;
  }
  }
  put(o, ")");
}

static void expr(sb *o, const tl_ast_expr *e, int ctx) {
  bool f = false;
  switch (e->kind) {
  case TL_AST_NAME: tl_strbuf_printf(o, "Name(id='%s', ctx=%s)", e->u.name, ctx_names[ctx]); return;
  case TL_AST_INT:
    if (e->u.ival == INT64_MIN) {
      put(o, "UnaryOp(op=USub(), operand=Constant(value=9223372036854775808))");
      return;
    }
    /* fall through */
  case TL_AST_BIGINT:
  case TL_AST_FLOAT:
  case TL_AST_IMAG:
  case TL_AST_STR:
  case TL_AST_BYTES:
  case TL_AST_TRUE:
  case TL_AST_FALSE:
  case TL_AST_NONE:
  case TL_AST_ELLIPSIS: constant(o, e); return;
  case TL_AST_ATTR:
    put(o, "Attribute(value=");
    expr(o, e->u.attr.value, LOAD);
    tl_strbuf_printf(o, ", attr='%s', ctx=%s)", e->u.attr.name, ctx_names[ctx]);
    return;
  case TL_AST_SUBSCRIPT:
    put(o, "Subscript(value=");
    expr(o, e->u.sub.value, LOAD);
    put(o, ", slice=");
    if (e->u.sub.n == 1 && !(e->flags & TL_AST_F_TUPLE_SUB)) {
      expr(o, e->u.sub.items[0], LOAD);
    } else {
      bool g = true;
      put(o, "Tuple(");
      exprs(o, "elts", e->u.sub.n, e->u.sub.items, LOAD, &g);
      put(o, ", ctx=Load())");
    }
    tl_strbuf_printf(o, ", ctx=%s)", ctx_names[ctx]);
    return;
  case TL_AST_SLICE:
    node(o, "Slice", 3,
         (xfield[]){{"lower", e->u.slice.lo, LOAD, true},
                    {"upper", e->u.slice.hi, LOAD, true},
                    {"step", e->u.slice.step, LOAD, true}});
    return;
  case TL_AST_BINOP:
    put(o, "BinOp(left=");
    expr(o, e->u.bin.l, LOAD);
    tl_strbuf_printf(o, ", op=%s()", binop_name(e->u.bin.op));
    expr_field(o, "right", e->u.bin.r, LOAD, &f);
    put(o, ")");
    return;
  case TL_AST_BOOLOP:
    tl_strbuf_printf(o, "BoolOp(op=%s(), values=[", binop_name(e->u.bin.op));
    boolop_values(o, e, e->u.bin.op, true);
    put(o, "])");
    return;
  case TL_AST_UNARY:
    tl_strbuf_printf(o, "UnaryOp(op=%s(), operand=",
                     !strcmp(e->u.un.op, "-")   ? "USub"
                     : !strcmp(e->u.un.op, "+") ? "UAdd"
                                                : binop_name(e->u.un.op));
    expr(o, e->u.un.x, LOAD);
    put(o, ")");
    return;
  case TL_AST_IFEXP:
    node(o, "IfExp", 3,
         (xfield[]){{"test", e->u.ifexp.test, LOAD, false},
                    {"body", e->u.ifexp.body, LOAD, false},
                    {"orelse", e->u.ifexp.orelse, LOAD, false}});
    return;
  case TL_AST_FORMATTED:
    put(o, "FormattedValue(value=");
    expr(o, e->u.fmt.value, LOAD);
    tl_strbuf_printf(o, ", conversion=%d", e->u.fmt.conversion);
    opt_expr(o, "format_spec", e->u.fmt.spec, LOAD, &f);
    put(o, ")");
    return;
  case TL_AST_STARRED:
    put(o, "Starred(value=");
    expr(o, e->u.un.x, ctx);
    tl_strbuf_printf(o, ", ctx=%s)", ctx_names[ctx]);
    return;
  case TL_AST_NAMEDEXPR:
    node(o, "NamedExpr", 2, (xfield[]){{"target", e->u.bin.l, STORE, false}, {"value", e->u.bin.r, LOAD, false}});
    return;
  case TL_AST_LAMBDA:
    put(o, "Lambda(args=");
    args_node(o, e->u.lambda.nparams, e->u.lambda.params);
    expr_field(o, "body", e->u.lambda.body, LOAD, &f);
    put(o, ")");
    return;
  case TL_AST_AWAIT:
  case TL_AST_YIELD:
  case TL_AST_YIELD_FROM:
    node(o,
         e->kind == TL_AST_AWAIT   ? "Await"
         : e->kind == TL_AST_YIELD ? "Yield"
                                   : "YieldFrom",
         1, (xfield[]){{"value", e->u.un.x, LOAD, true}});
    return;
  default: expr_compound(o, e, ctx); return;
  }
}

static void arg_node(sb *o, const tl_ast_param *p) {
  tl_strbuf_printf(o, "arg(arg='%s'", p->name);
  if (p->annotation) {
    put(o, ", annotation=");
    expr(o, p->annotation, LOAD);
  }
  put(o, ")");
}

/* arguments(posonlyargs, args, vararg?, kwonlyargs, kw_defaults, kwarg?, defaults) */
static void args_group(sb *o, const char *name, int n, const tl_ast_param *ps, tl_ast_param_kind k, bool *first) {
  list_begin(o, name, first);
  bool any = false;
  for (int i = 0; i < n; i++) {
    if (ps[i].pkind != k) continue;
    if (any) put(o, ", ");
    any = true;
    arg_node(o, &ps[i]);
  }
  put(o, "]");
}

static void args_node(sb *o, int n, const tl_ast_param *ps) {
  bool f = true;
  put(o, "arguments(");
  args_group(o, "posonlyargs", n, ps, TL_AST_PARAM_POSONLY, &f);
  args_group(o, "args", n, ps, TL_AST_PARAM_POS, &f);
  for (int i = 0; i < n; i++)
    if (ps[i].pkind == TL_AST_PARAM_VARARG) {
      put(o, ", vararg=");
      arg_node(o, &ps[i]);
    }
  args_group(o, "kwonlyargs", n, ps, TL_AST_PARAM_KWONLY, &f);
  list_begin(o, "kw_defaults", &f);
  bool any = false;
  for (int i = 0; i < n; i++) {
    if (ps[i].pkind != TL_AST_PARAM_KWONLY) continue;
    if (any) put(o, ", ");
    any = true;
    if (ps[i].default_value) expr(o, ps[i].default_value, LOAD);
    else put(o, "None");
  }
  put(o, "]");
  for (int i = 0; i < n; i++)
    if (ps[i].pkind == TL_AST_PARAM_KWARG) {
      put(o, ", kwarg=");
      arg_node(o, &ps[i]);
    }
  list_begin(o, "defaults", &f);
  any = false;
  for (int i = 0; i < n; i++) {
    if ((ps[i].pkind != TL_AST_PARAM_POS && ps[i].pkind != TL_AST_PARAM_POSONLY) || !ps[i].default_value) continue;
    if (any) put(o, ", ");
    any = true;
    expr(o, ps[i].default_value, LOAD);
  }
  put(o, "])");
}

static void pattern(sb *o, const tl_ast_pattern *p);

static void patterns(sb *o, const char *name, int n, tl_ast_pattern *const *ps, bool *first) {
  list_begin(o, name, first);
  for (int i = 0; i < n; i++) {
    if (i) put(o, ", ");
    pattern(o, ps[i]);
  }
  put(o, "]");
}

static void pattern(sb *o, const tl_ast_pattern *p) {
  bool f = true;
  switch (p->kind) {
  case TL_PAT_VALUE:
  case TL_PAT_SINGLETON:
    if (p->kind == TL_PAT_VALUE) {
      put(o, "MatchValue(value=");
      expr(o, p->value, LOAD);
    } else {
      tl_strbuf_printf(o, "MatchSingleton(value=%s",
                       p->value->kind == TL_AST_NONE   ? "None"
                       : p->value->kind == TL_AST_TRUE ? "True"
                                                       : "False");
    }
    break;
  case TL_PAT_SEQUENCE:
  case TL_PAT_OR:
    put(o, p->kind == TL_PAT_OR ? "MatchOr(" : "MatchSequence(");
    patterns(o, "patterns", p->n, p->items, &f);
    break;
  case TL_PAT_MAPPING:
    put(o, "MatchMapping(");
    exprs(o, "keys", p->n, p->keys, LOAD, &f);
    patterns(o, "patterns", p->n, p->items, &f);
    if (p->name) tl_strbuf_printf(o, ", rest='%s'", p->name);
    break;
  case TL_PAT_CLASS:
    put(o, "MatchClass(cls=");
    expr(o, p->value, LOAD);
    f = false;
    patterns(o, "patterns", p->n, p->items, &f);
    put(o, ", kwd_attrs=[");
    for (int i = 0; i < p->nkw; i++) tl_strbuf_printf(o, "%s'%s'", i ? ", " : "", p->kw_names[i]);
    put(o, "]");
    patterns(o, "kwd_patterns", p->nkw, p->kw_items, &f);
    break;
  case TL_PAT_STAR:
    put(o, "MatchStar(");
    if (p->name) tl_strbuf_printf(o, "name='%s'", p->name);
    break;
  case TL_PAT_AS:
    put(o, "MatchAs(");
    if (p->sub) {
      put(o, "pattern=");
      pattern(o, p->sub);
      f = false;
    }
    if (p->name) tl_strbuf_printf(o, "%sname='%s'", f ? "" : ", ", p->name);
    break;
  }
  put(o, ")");
}

static void body_field(sb *o, const char *name, const tl_ast_block *b, bool *first) {
  field(o, name, first);
  block(o, b);
}

/* Import / ImportFrom from statements [i, i + k) (one Python statement) */
static int import_stmt(sb *o, const tl_ast_stmt *const *ss, int i, int n) {
  const tl_ast_stmt *s = ss[i];
  bool from = s->u.import.name != NULL;
  if (from) {
    put(o, "ImportFrom(");
    if (s->u.import.module) tl_strbuf_printf(o, "module='%s', ", s->u.import.module);
    put(o, "names=[");
  } else {
    put(o, "Import(names=[");
  }
  int k = i;
  do {
    const tl_ast_stmt *t = ss[k];
    if (k > i) put(o, ", ");
    tl_strbuf_printf(o, "alias(name='%s'", from ? t->u.import.name : t->u.import.module);
    if (t->u.import.alias) tl_strbuf_printf(o, ", asname='%s'", t->u.import.alias);
    put(o, ")");
    k++;
  } while (k < n && ss[k]->kind == TL_AST_IMPORT && ss[k]->u.import.cont);
  put(o, "]");
  if (from) tl_strbuf_printf(o, ", level=%d", s->u.import.level);
  put(o, ")");
  return k;
}

static void stmt_compound(sb *o, const tl_ast_stmt *s);

static void stmt(sb *o, const tl_ast_stmt *s) {
  bool f = false;
  switch (s->kind) {
  case TL_AST_EXPR_STMT:
    put(o, "Expr(value=");
    expr(o, s->u.expr, LOAD);
    break;
  case TL_AST_ASSIGN:
    put(o, "Assign(");
    f = true;
    exprs(o, "targets", s->u.assign.ntargets, s->u.assign.targets, STORE, &f);
    expr_field(o, "value", s->u.assign.value, LOAD, &f);
    break;
  case TL_AST_AUGASSIGN:
    put(o, "AugAssign(target=");
    expr(o, s->u.aug.target, STORE);
    tl_strbuf_printf(o, ", op=%s()", binop_name(s->u.aug.op));
    expr_field(o, "value", s->u.aug.value, LOAD, &f);
    break;
  case TL_AST_ANNASSIGN:
    put(o, "AnnAssign(target=");
    expr(o, s->u.ann.target, STORE);
    expr_field(o, "annotation", s->u.ann.annotation, LOAD, &f);
    opt_expr(o, "value", s->u.ann.value, LOAD, &f);
    tl_strbuf_printf(o, ", simple=%d",
                     s->u.ann.target->kind == TL_AST_NAME && !(s->u.ann.target->flags & TL_AST_F_PARENS));
    break;
  case TL_AST_RETURN: node(o, "Return", 1, (xfield[]){{"value", s->u.ret, LOAD, true}}); return;
  case TL_AST_PASS: put(o, "Pass("); break;
  case TL_AST_BREAK: put(o, "Break("); break;
  case TL_AST_CONTINUE: put(o, "Continue("); break;
  case TL_AST_DELETE:
    put(o, "Delete(");
    f = true;
    exprs(o, "targets", s->u.del.n, s->u.del.targets, DEL, &f);
    break;
  case TL_AST_RAISE:
    node(o, "Raise", 2, (xfield[]){{"exc", s->u.raise.exc, LOAD, true}, {"cause", s->u.raise.cause, LOAD, true}});
    return;
  case TL_AST_ASSERT:
    node(o, "Assert", 2, (xfield[]){{"test", s->u.assert_.test, LOAD, false}, {"msg", s->u.assert_.msg, LOAD, true}});
    return;
  case TL_AST_GLOBAL:
  case TL_AST_NONLOCAL:
    put(o, s->kind == TL_AST_GLOBAL ? "Global(names=[" : "Nonlocal(names=[");
    for (int i = 0; i < s->u.names.n; i++) tl_strbuf_printf(o, "%s'%s'", i ? ", " : "", s->u.names.names[i]);
    put(o, "]");
    break;
  default: stmt_compound(o, s); return;
  }
  put(o, ")");
}

static void handlers(sb *o, const tl_ast_stmt *s, bool *first) {
  list_begin(o, "handlers", first);
  for (int i = 0; i < s->u.try_.nhandlers; i++) {
    const tl_ast_handler *h = &s->u.try_.handlers[i];
    if (i) put(o, ", ");
    put(o, "ExceptHandler(");
    bool f = true;
    opt_expr(o, "type", h->type, LOAD, &f);
    if (h->name) tl_strbuf_printf(o, "%sname='%s'", f ? "" : ", ", h->name), f = false;
    body_field(o, "body", &h->body, &f);
    put(o, ")");
  }
  put(o, "]");
}

static void stmt_compound(sb *o, const tl_ast_stmt *s) {
  bool f = false;
  switch (s->kind) {
  case TL_AST_FOR:
    put(o, s->u.loop.is_async ? "AsyncFor(target=" : "For(target=");
    expr(o, s->u.loop.target, STORE);
    expr_field(o, "iter", s->u.loop.iter, LOAD, &f);
    body_field(o, "body", &s->u.loop.body, &f);
    body_field(o, "orelse", &s->u.loop.orelse, &f);
    break;
  case TL_AST_WHILE:
  case TL_AST_IF:
    put(o, s->kind == TL_AST_WHILE ? "While(test=" : "If(test=");
    expr(o, s->kind == TL_AST_WHILE ? s->u.whiles.test : s->u.ifs.test, LOAD);
    body_field(o, "body", s->kind == TL_AST_WHILE ? &s->u.whiles.body : &s->u.ifs.body, &f);
    body_field(o, "orelse", s->kind == TL_AST_WHILE ? &s->u.whiles.orelse : &s->u.ifs.orelse, &f);
    break;
  case TL_AST_WITH:
    put(o, s->u.with.is_async ? "AsyncWith(items=[" : "With(items=[");
    for (int i = 0; i < s->u.with.nitems; i++) {
      put(o, i ? ", withitem(context_expr=" : "withitem(context_expr=");
      expr(o, s->u.with.items[i].ctx, LOAD);
      bool g = false;
      opt_expr(o, "optional_vars", s->u.with.items[i].target, STORE, &g);
      put(o, ")");
    }
    put(o, "]");
    body_field(o, "body", &s->u.with.body, &f);
    break;
  case TL_AST_DEF:
    tl_strbuf_printf(o, "%s(name='%s', args=", s->u.def.is_async ? "AsyncFunctionDef" : "FunctionDef", s->u.def.name);
    args_node(o, s->u.def.nparams, s->u.def.params);
    body_field(o, "body", &s->u.def.body, &f);
    exprs(o, "decorator_list", s->u.def.ndecorators, s->u.def.decorators, LOAD, &f);
    opt_expr(o, "returns", s->u.def.returns, LOAD, &f);
    break;
  case TL_AST_CLASS:
    tl_strbuf_printf(o, "ClassDef(name='%s'", s->u.cls.name);
    exprs(o, "bases", s->u.cls.nbases, s->u.cls.bases, LOAD, &f);
    keywords(o, s->u.cls.nkw, s->u.cls.kw, &f);
    body_field(o, "body", &s->u.cls.body, &f);
    exprs(o, "decorator_list", s->u.cls.ndecorators, s->u.cls.decorators, LOAD, &f);
    break;
  case TL_AST_TRY:
    put(o, s->u.try_.star ? "TryStar(" : "Try(");
    f = true;
    body_field(o, "body", &s->u.try_.body, &f);
    handlers(o, s, &f);
    body_field(o, "orelse", &s->u.try_.orelse, &f);
    body_field(o, "finalbody", &s->u.try_.finalbody, &f);
    break;
  case TL_AST_MATCH:
    put(o, "Match(subject=");
    expr(o, s->u.match.subject, LOAD);
    put(o, ", cases=[");
    for (int i = 0; i < s->u.match.ncases; i++) {
      const tl_ast_match_case *c = &s->u.match.cases[i];
      put(o, i ? ", match_case(pattern=" : "match_case(pattern=");
      pattern(o, c->pattern);
      bool g = false;
      opt_expr(o, "guard", c->guard, LOAD, &g);
      body_field(o, "body", &c->body, &g);
      put(o, ")");
    }
    put(o, "]");
    break;
  default: put(o, "?("); break;
  }
  put(o, ")");
}

static void block(sb *o, const tl_ast_block *b) {
  put(o, "[");
  for (int i = 0; i < b->n;) {
    if (i) put(o, ", ");
    if (b->stmts[i]->kind == TL_AST_IMPORT) {
      i = import_stmt(o, (const tl_ast_stmt *const *)b->stmts, i, b->n);
    } else {
      stmt(o, b->stmts[i]);
      i++;
    }
  }
  put(o, "]");
}

void tl_ast_dump_module(tl_strbuf *out, const tl_ast_module *m) {
  if (!out || !m) return;
  put(out, "Module(body=");
  block(out, &m->body);
  put(out, ", type_ignores=[])");
}
