/* Parser of Python 3 source (TileLang files), expressions: tokens from
 * lexer.c → the syntax tree of ast.h.  Statements and the entry point
 * tl_parse_python are in parser_stmt.c, f-string bodies in
 * parser_fstring.c, match statements in parser_match.c; parser_impl.h
 * holds the shared state.
 *
 * Algorithm: recursive descent with one function per precedence level, as in
 * Python's grammar: lambda < ifexp < or < and < not < comparison (chained) <
 * | < ^ < & < shifts < + - < * / // % @ < unary + - ~ < ** < await <
 * primary (attribute, call, subscript) < atom.  Left-associative levels are
 * loops; ** recurses into the unary level for its right operand
 * (right-associative, 2**-1).  Displays ( [ { parse their first item and
 * then decide: a comprehension ('for' follows), a tuple/list/set/dict, a
 * parenthesised expression.  Tokens come lazily from the lexer through a
 * 4-token lookahead buffer.  Variable-length child lists are collected on
 * parser-owned scratch stacks (pointers, keywords, parameters, locations)
 * and copied into the arena when the node is finished; nesting is LIFO, so
 * each node owns the top of the stack between its mark and the current
 * length.  Recursion that the input drives is bounded: parenthesis/unary/
 * ifexp nesting and block nesting are limited to 200 levels, and the depth
 * of the built expression tree (including left-associative chains) to 1000,
 * all reported as "nesting too deep".  The first error stops the parse (one
 * error per parse); a lexical error is reported when the parser reaches its
 * ERROR token, and an error inside brackets that span lines is replaced by
 * "'(' was never closed" when the bracket indeed stays open until the end of
 * the file.  Every construct of the grammar parses; the elaborator decides
 * which ones a kernel may use.  Linear time. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "Frontend/parser_impl.h"

/* ------------------------------------------------------------ errors */

/* Describes a token for messages ("')'", "end of line", ...), in the arena. */
const char *describe(parser *p, const tl_token *t) {
  switch (t->kind) {
  case TL_TOK_EOF: return "end of file";
  case TL_TOK_NEWLINE: return "end of line";
  case TL_TOK_INDENT: return "indent";
  case TL_TOK_DEDENT: return "unindent";
  case TL_TOK_STRING: return "string literal";
  case TL_TOK_ERROR: return "invalid token";
  default: break;
  }
  size_t n = t->len;
  const char *src = p->lx.src + t->start;
  if (n > 40) {
    const char *s = tl_arena_printf(p->a, "'%.37s...'", src);
    return s ? s : "token";
  }
  const char *s = tl_arena_printf(p->a, "'%.*s'", (int)n, src);
  return s ? s : "token";
}

static void report_lexer_error(parser *p) {
  tl_error(p->d, p->lx.err_loc, "%s", p->lx.err_msg ? p->lx.err_msg : "invalid token");
}

/* Reports the (single) syntax error of this parse.  When the current token
 * is a lexical error, that error is reported instead (it is at or before
 * the fault).  When brackets are open and the error is on a later line than
 * the innermost one, the rest of the file is scanned: a bracket still open
 * at the end is the real fault. */
static void verror(parser *p, tl_loc loc, const char *fmt, va_list ap) {
  if (p->failed) return;
  p->failed = true;
  if (cur(p)->kind == TL_TOK_ERROR) {
    report_lexer_error(p);
    return;
  }
  if (p->lx.brackets.len > 0 && tl_vec_last(&p->lx.brackets).loc.line < loc.line) {
    tl_token t;
    do tl_lexer_next(&p->lx, &t);
    while (t.kind != TL_TOK_EOF && t.kind != TL_TOK_ERROR);
    if (t.kind == TL_TOK_ERROR && p->lx.err_unclosed) {
      report_lexer_error(p);
      return;
    }
  }
  tl_diag_vreport(p->d, TL_DIAG_ERROR, loc, fmt, ap);
}

void *error_at(parser *p, tl_loc loc, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  verror(p, loc, fmt, ap);
  va_end(ap);
  return NULL;
}

void *oom(parser *p) { return error_at(p, cur_loc(p), "out of memory"); }

/* "expected X, got Y" at the current token. */
void *expected(parser *p, const char *what) {
  return error_at(p, cur_loc(p), "expected %s, got %s", what, describe(p, cur(p)));
}

/* ------------------------------------------------------------ depth */

bool enter(parser *p) {
  p->depth++;
  p->ast_depth++;
  if (p->depth > MAX_NEST || p->ast_depth > MAX_AST_DEPTH) {
    error_at(p, cur_loc(p), "nesting too deep");
    return false;
  }
  return true;
}
void leave(parser *p) {
  p->depth--;
  p->ast_depth--;
}
/* ------------------------------------------------------------ nodes */

tl_ast_expr *mk(parser *p, tl_ast_expr_kind k, tl_loc loc) {
  tl_ast_expr *e = tl_arena_alloc(p->a, sizeof *e);
  if (!e) return oom(p);
  e->kind = k;
  e->loc = loc;
  return e;
}
tl_ast_stmt *mks(parser *p, tl_ast_stmt_kind k, tl_loc loc) {
  tl_ast_stmt *s = tl_arena_alloc(p->a, sizeof *s);
  if (!s) return oom(p);
  s->kind = k;
  s->loc = loc;
  return s;
}
const char *intern(parser *p, const char *s) {
  const char *r = tl_intern_str(p->names, s);
  if (!r) oom(p);
  return r;
}

bool push(parser *p, void *x) {
  if (!tl_vec_push(&p->ptrs, x)) {
    oom(p);
    return false;
  }
  return true;
}
/* Copies ptrs[mark..] into the arena and pops them; *n gets the count. */
void **take(parser *p, size_t mark, int *n) {
  size_t cnt = p->ptrs.len - mark;
  *n = 0;
  if (cnt > (size_t)INT32_MAX) {
    error_at(p, cur_loc(p), "too many items");
    return NULL;
  }
  void **r = NULL;
  if (cnt) {
    r = tl_vec_to_arena_(p->a, p->ptrs.data + mark, cnt, sizeof(void *));
    if (!r) {
      oom(p);
      return NULL;
    }
  }
  p->ptrs.len = mark;
  *n = (int)cnt;
  return r;
}

/* ------------------------------------------------------------ expressions */

bool can_start_expr(const tl_token *t) {
  switch (t->kind) {
  case TL_TOK_NAME:
  case TL_TOK_INT:
  case TL_TOK_FLOAT:
  case TL_TOK_STRING:
  case TL_TOK_ERROR: return true;
  case TL_TOK_OP:
    return t->sub == TL_OP_LPAR || t->sub == TL_OP_LSQB || t->sub == TL_OP_LBRACE || t->sub == TL_OP_MINUS ||
           t->sub == TL_OP_PLUS || t->sub == TL_OP_TILDE || t->sub == TL_OP_STAR || t->sub == TL_OP_ELLIPSIS;
  case TL_TOK_KEYWORD:
    return t->sub == TL_KW_TRUE || t->sub == TL_KW_FALSE || t->sub == TL_KW_NONE || t->sub == TL_KW_NOT ||
           t->sub == TL_KW_LAMBDA || t->sub == TL_KW_AWAIT || t->sub == TL_KW_YIELD;
  default: return false;
  }
}

static tl_ast_expr *parse_factor(parser *p);

/* A finished node with n items taken from ptrs[mark..] into .list. */
/* A node of kind k with one operand (u.un: UNARY, AWAIT, STARRED, YIELD_FROM)
 * at loc; NULL when op or x is NULL (an error already reported) or on OOM. */
static tl_ast_expr *mk_unary(parser *p, tl_ast_expr_kind k, tl_loc loc, const char *op, tl_ast_expr *x) {
  if (!op || !x) return NULL;
  tl_ast_expr *e = mk(p, k, loc);
  if (!e) return NULL;
  e->u.un.op = op;
  e->u.un.x = x;
  return e;
}

/* A node of kind k with two operands (u.bin: BINOP, BOOLOP, NAMEDEXPR) at
 * loc, its operator op at oploc; NULL on OOM. */
static tl_ast_expr *mk_binary(parser *p, tl_ast_expr_kind k, tl_loc loc, const char *op, tl_loc oploc, tl_ast_expr *l,
                              tl_ast_expr *r) {
  tl_ast_expr *e = mk(p, k, loc);
  if (!e) return NULL;
  e->u.bin.op = op, e->u.bin.op_loc = oploc;
  e->u.bin.l = l, e->u.bin.r = r;
  return e;
}

/* A prefix operator op at the current token: its operand, parsed one level
 * deeper by operand, in a node of kind k. */
static tl_ast_expr *parse_prefixed(parser *p, tl_ast_expr_kind k, const char *op, tl_ast_expr *(*operand)(parser *)) {
  tl_loc loc = cur_loc(p);
  advance(p);
  if (!enter(p)) return NULL;
  tl_ast_expr *x = operand(p);
  leave(p);
  return mk_unary(p, k, loc, op, x);
}

/* bitwise_or: the loosest binary level. */
static tl_ast_expr *parse_bitor(parser *p) { return parse_binary(p, 0); }

static tl_ast_expr *mk_list(parser *p, tl_ast_expr_kind k, tl_loc loc, size_t mark) {
  tl_ast_expr *e = mk(p, k, loc);
  if (!e) return NULL;
  e->u.list.items = (tl_ast_expr **)take(p, mark, &e->u.list.n);
  return p->failed ? NULL : e;
}

/* for_if_clauses after the element(s) of a comprehension; cur is 'for' or
 * 'async'.  Builds kind's node with elt (and value for dicts). */
static tl_ast_expr *parse_comprehension(parser *p, tl_ast_expr_kind kind, tl_loc loc, tl_ast_expr *elt,
                                        tl_ast_expr *value) {
  TL_VEC(tl_ast_comprehension) gens = {0};
  tl_ast_expr *e = NULL;
  while (is_kw(p, TL_KW_FOR) || (is_kw(p, TL_KW_ASYNC) && tok_is_kw(peek(p, 1), TL_KW_FOR))) {
    tl_ast_comprehension g = {0};
    if (is_kw(p, TL_KW_ASYNC)) {
      g.is_async = true;
      advance(p);
    }
    advance(p); /* for */
    g.target = parse_target_list(p);
    if (!g.target || !check_target(p, g.target, true)) goto done;
    if (!is_kw(p, TL_KW_IN)) {
      expected(p, "'in'");
      goto done;
    }
    advance(p);
    if (!enter(p)) goto done;
    g.iter = parse_boolop(p, TL_KW_OR);
    leave(p);
    if (!g.iter) goto done;
    size_t mark = p->ptrs.len;
    while (is_kw(p, TL_KW_IF)) {
      advance(p);
      if (!enter(p)) goto done;
      tl_ast_expr *c = parse_boolop(p, TL_KW_OR);
      leave(p);
      if (!c || !push(p, c)) goto done;
    }
    g.ifs = (tl_ast_expr **)take(p, mark, &g.nifs);
    if (p->failed || !tl_vec_push(&gens, g)) {
      oom(p);
      goto done;
    }
  }
  e = mk(p, kind, loc);
  if (!e) goto done;
  e->u.comp.elt = elt;
  e->u.comp.value = value;
  e->u.comp.ngens = (int)gens.len;
  e->u.comp.gens = tl_vec_to_arena_(p->a, gens.data, gens.len, sizeof(tl_ast_comprehension));
  if (!e->u.comp.gens) e = oom(p);
done:
  tl_vec_free(&gens);
  return p->failed ? NULL : e;
}

static bool at_comp_for(parser *p) {
  return is_kw(p, TL_KW_FOR) || (is_kw(p, TL_KW_ASYNC) && tok_is_kw(peek(p, 1), TL_KW_FOR));
}

/* Items of a display after its first item (pushed) up to `close`
 * (consumed). */
static bool parse_items(parser *p, tl_op close, const char *closer) {
  for (;;) {
    if (is_op(p, close)) break;
    if (!is_op(p, TL_OP_COMMA)) {
      error_at(p, cur_loc(p), "expected ',' or '%s', got %s", closer, describe(p, cur(p)));
      return false;
    }
    advance(p);
    if (is_op(p, close)) break;
    tl_ast_expr *e = parse_star_named(p);
    if (!e || !push(p, e)) return false;
  }
  advance(p);
  return true;
}

/* One string token into the running concatenation: literal text goes to
 * *text, f-string parts to ptrs. */
static bool string_part(parser *p, tl_strbuf *text, size_t mark) {
  const tl_token *t = cur(p);
  if (t->fstr) return parse_fstring_part(p, text, mark);
  tl_strbuf_appendn(text, t->str, t->str_len);
  advance(p);
  return true;
}

/* Adjacent string literals: one STR, BYTES or (with any f-string) FSTRING. */
static tl_ast_expr *parse_string(parser *p) {
  const tl_token *t = cur(p);
  tl_loc loc = t->loc;
  bool bytes = t->is_bytes, u = t->u_prefix, f = false;
  size_t mark = p->ptrs.len;
  tl_strbuf text = {0};
  while (is_kind(p, TL_TOK_STRING)) {
    if (cur(p)->is_bytes != bytes) {
      tl_strbuf_free(&text);
      return error_at(p, cur_loc(p), "cannot mix bytes and nonbytes literals");
    }
    f |= cur(p)->fstr;
    if (!string_part(p, &text, mark)) {
      tl_strbuf_free(&text);
      return NULL;
    }
  }
  const char *s = text.oom ? NULL : tl_arena_strndup(p->a, text.data ? text.data : "", text.len);
  size_t n = text.len;
  tl_strbuf_free(&text);
  if (!s) return oom(p);
  tl_ast_expr *e;
  if (f) {
    if (n) {
      tl_ast_expr *c = mk(p, TL_AST_STR, loc);
      if (!c || !push(p, c)) return NULL;
      c->u.str = s;
      c->slen = n;
    }
    return mk_list(p, TL_AST_FSTRING, loc, mark);
  }
  e = mk(p, bytes ? TL_AST_BYTES : TL_AST_STR, loc);
  if (!e) return NULL;
  if (bytes) {
    e->u.bytes.data = s;
    e->u.bytes.n = n;
  } else {
    e->u.str = s;
    e->slen = n;
    if (u) e->flags |= TL_AST_F_U_PREFIX;
  }
  return e;
}

/* 'with (a as b, c):' — the items of the parenthesised group after 'with'
 * (first is parsed; cur is 'as' or ','); ptrs holds ctx/target pairs from
 * mark.  When ':' follows the ')', the items go to p->with_items and a
 * flagged TUPLE is returned; otherwise the group must be an expression. */
static tl_ast_expr *parse_with_group(parser *p, tl_loc loc, tl_ast_expr *first) {
  size_t mark = p->ptrs.len;
  bool any_as = false;
  tl_ast_expr *ctx = first;
  for (;;) {
    tl_ast_expr *target = NULL;
    if (is_kw(p, TL_KW_AS)) {
      advance(p);
      any_as = true;
      target = parse_target(p);
      if (!target || !check_target(p, target, true)) return NULL;
    }
    if (!push(p, ctx) || !push(p, target)) return NULL;
    if (!is_op(p, TL_OP_COMMA)) break;
    advance(p);
    if (is_op(p, TL_OP_RPAR)) break;
    if (!(ctx = parse_test(p))) return NULL;
  }
  if (!is_op(p, TL_OP_RPAR)) return expected(p, "',' or ')'");
  advance(p);
  size_t n = (p->ptrs.len - mark) / 2;
  if (!is_op(p, TL_OP_COLON)) {
    if (any_as) return expected(p, "':'");
    /* an expression after all: the tuple of the contexts */
    for (size_t i = 0; i < n; i++) p->ptrs.data[mark + i] = p->ptrs.data[mark + 2 * i];
    p->ptrs.len = mark + n;
    tl_ast_expr *t = mk_list(p, TL_AST_TUPLE, loc, mark);
    if (t) t->flags |= TL_AST_F_PARENS;
    return t;
  }
  p->with_items = tl_arena_alloc(p->a, sizeof(tl_ast_withitem) * n);
  if (!p->with_items) return oom(p);
  for (size_t i = 0; i < n; i++) {
    p->with_items[i].ctx = p->ptrs.data[mark + 2 * i];
    p->with_items[i].target = p->ptrs.data[mark + 2 * i + 1];
  }
  p->nwith_items = (int)n;
  p->ptrs.len = mark;
  tl_ast_expr *t = mk(p, TL_AST_TUPLE, loc);
  if (t) t->flags |= TL_AST_F_WITHITEMS;
  return t;
}

/* ( ... ): (), (yield), (x), (x,), (x := 1), (x for ...), (a, *b) */
static tl_ast_expr *parse_paren(parser *p, tl_loc loc) {
  bool with_header = p->with_header;
  p->with_header = false;
  advance(p);
  if (is_op(p, TL_OP_RPAR)) {
    advance(p);
    return mk(p, TL_AST_TUPLE, loc);
  }
  tl_ast_expr *first;
  if (is_kw(p, TL_KW_YIELD)) {
    first = parse_yield(p);
    if (!first) return NULL;
    if (!is_op(p, TL_OP_RPAR)) return expected(p, "')'");
    advance(p);
    first->flags |= TL_AST_F_PARENS;
    return first;
  }
  first = parse_star_named(p);
  if (!first) return NULL;
  if (with_header && (is_kw(p, TL_KW_AS) || is_op(p, TL_OP_COMMA) || is_op(p, TL_OP_RPAR)) &&
      first->kind != TL_AST_STARRED) {
    if (!is_op(p, TL_OP_RPAR) || tok_is_op(peek(p, 1), TL_OP_COLON)) return parse_with_group(p, loc, first);
  }
  if (is_op(p, TL_OP_RPAR) && first->kind != TL_AST_STARRED) { /* parenthesised expression */
    advance(p);
    first->flags |= TL_AST_F_PARENS;
    return first;
  }
  if (at_comp_for(p)) {
    tl_ast_expr *g = parse_comprehension(p, TL_AST_GENEXP, loc, first, NULL);
    if (!g) return NULL;
    if (!is_op(p, TL_OP_RPAR)) return expected(p, "')'");
    advance(p);
    return g;
  }
  size_t mark = p->ptrs.len;
  if (!push(p, first)) return NULL;
  if (!is_op(p, TL_OP_COMMA) && !is_op(p, TL_OP_RPAR)) return expected(p, "',' or ')'");
  if (!parse_items(p, TL_OP_RPAR, ")")) return NULL;
  return mk_list(p, TL_AST_TUPLE, loc, mark);
}

/* A list, set or dict comprehension whose element(s) were parsed: its
 * for_if_clauses, then the closing bracket `close` (what: its text in the
 * error when it is missing). */
static tl_ast_expr *closed_comprehension(parser *p, tl_ast_expr_kind kind, tl_loc loc, tl_ast_expr *elt,
                                         tl_ast_expr *value, tl_op close, const char *what) {
  tl_ast_expr *c = parse_comprehension(p, kind, loc, elt, value);
  if (!c) return NULL;
  if (!is_op(p, close)) return expected(p, what);
  advance(p);
  return c;
}

/* [ ... ]: a list or a list comprehension */
static tl_ast_expr *parse_list(parser *p, tl_loc loc) {
  advance(p);
  size_t mark = p->ptrs.len;
  if (!is_op(p, TL_OP_RSQB)) {
    tl_ast_expr *first = parse_star_named(p);
    if (!first) return NULL;
    if (at_comp_for(p)) {
      return closed_comprehension(p, TL_AST_LISTCOMP, loc, first, NULL, TL_OP_RSQB, "']'");
    }
    if (!push(p, first)) return NULL;
    if (!parse_items(p, TL_OP_RSQB, "]")) return NULL;
  } else {
    advance(p);
  }
  return mk_list(p, TL_AST_LIST, loc, mark);
}

/* Dict display items after '{' (the first key or **mapping parsed by the
 * caller and pushed as key/value pairs). */
static tl_ast_expr *finish_dict(parser *p, tl_loc loc, size_t mark) {
  while (!is_op(p, TL_OP_RBRACE)) {
    if (!is_op(p, TL_OP_COMMA)) return expected(p, "',' or '}'");
    advance(p);
    if (is_op(p, TL_OP_RBRACE)) break;
    tl_ast_expr *k = NULL, *v;
    if (is_op(p, TL_OP_POW)) {
      advance(p);
      if (!enter(p)) return NULL;
      v = parse_binary(p, 0);
      leave(p);
    } else {
      k = parse_test(p);
      if (!k) return NULL;
      if (!is_op(p, TL_OP_COLON)) return expected(p, "':'");
      advance(p);
      v = parse_test(p);
    }
    if (!v || !push(p, k) || !push(p, v)) return NULL;
  }
  advance(p);
  tl_ast_expr *e = mk(p, TL_AST_DICT, loc);
  if (!e) return NULL;
  int n2;
  tl_ast_expr **kv = (tl_ast_expr **)take(p, mark, &n2);
  if (p->failed) return NULL;
  int n = n2 / 2;
  e->u.dict.n = n;
  if (n) {
    e->u.dict.keys = tl_arena_alloc(p->a, sizeof(tl_ast_expr *) * (size_t)n);
    e->u.dict.values = tl_arena_alloc(p->a, sizeof(tl_ast_expr *) * (size_t)n);
    if (!e->u.dict.keys || !e->u.dict.values) return oom(p);
    for (int i = 0; i < n; i++) {
      e->u.dict.keys[i] = kv[2 * i];
      e->u.dict.values[i] = kv[2 * i + 1];
    }
  }
  return e;
}

/* { ... }: dict, set, dict or set comprehension */
static tl_ast_expr *parse_brace(parser *p, tl_loc loc) {
  advance(p);
  size_t mark = p->ptrs.len;
  if (is_op(p, TL_OP_RBRACE)) return finish_dict(p, loc, mark); /* {} */
  if (is_op(p, TL_OP_POW)) {
    advance(p);
    if (!enter(p)) return NULL;
    tl_ast_expr *v = parse_binary(p, 0);
    leave(p);
    if (!v || !push(p, NULL) || !push(p, v)) return NULL;
    return finish_dict(p, loc, mark);
  }
  tl_ast_expr *first = parse_star_named(p);
  if (!first) return NULL;
  if (is_op(p, TL_OP_COLON)) {
    advance(p);
    tl_ast_expr *v = parse_test(p);
    if (!v) return NULL;
    if (at_comp_for(p)) {
      return closed_comprehension(p, TL_AST_DICTCOMP, loc, first, v, TL_OP_RBRACE, "'}'");
    }
    if (!push(p, first) || !push(p, v)) return NULL;
    return finish_dict(p, loc, mark);
  }
  if (at_comp_for(p)) {
    return closed_comprehension(p, TL_AST_SETCOMP, loc, first, NULL, TL_OP_RBRACE, "'}'");
  }
  if (!push(p, first)) return NULL;
  if (!parse_items(p, TL_OP_RBRACE, "}")) return NULL;
  return mk_list(p, TL_AST_SET, loc, mark);
}

static tl_ast_expr *parse_atom(parser *p) {
  const tl_token *t = cur(p);
  tl_loc loc = t->loc;
  tl_ast_expr *e;
  switch (t->kind) {
  case TL_TOK_NAME:
    e = mk(p, TL_AST_NAME, loc);
    if (e) e->u.name = t->text;
    advance(p);
    return e;
  case TL_TOK_INT:
    if (t->int_2_63 || t->bigint) {
      e = mk(p, TL_AST_BIGINT, loc);
      if (e) e->u.str = t->bigint ? t->bigint : "9223372036854775808";
    } else {
      e = mk(p, TL_AST_INT, loc);
      if (e) e->u.ival = t->ival;
    }
    advance(p);
    return e;
  case TL_TOK_FLOAT:
    e = mk(p, t->imag ? TL_AST_IMAG : TL_AST_FLOAT, loc);
    if (e) e->u.fval = t->fval;
    advance(p);
    return e;
  case TL_TOK_STRING: return parse_string(p);
  case TL_TOK_KEYWORD:
    if (t->sub == TL_KW_TRUE || t->sub == TL_KW_FALSE || t->sub == TL_KW_NONE) {
      e = mk(p, t->sub == TL_KW_TRUE ? TL_AST_TRUE : t->sub == TL_KW_FALSE ? TL_AST_FALSE : TL_AST_NONE, loc);
      advance(p);
      return e;
    }
    return expected(p, "expression");
  case TL_TOK_OP: break;
  default: return expected(p, "expression");
  }
  switch (t->sub) {
  case TL_OP_LPAR: return parse_paren(p, loc);
  case TL_OP_LSQB: return parse_list(p, loc);
  case TL_OP_LBRACE: return parse_brace(p, loc);
  case TL_OP_ELLIPSIS: advance(p); return mk(p, TL_AST_ELLIPSIS, loc);
  default: return expected(p, "expression");
  }
}

/* Names seen so far in one keyword-argument or parameter list: a linear scan
 * of the first 16, a hash map beyond them (no quadratic behaviour on long
 * lists). */
typedef struct dup_checker {
  const char *small[16];
  size_t n;
  tl_map map;
  bool used;
} dup_checker;
/* True when name (interned) was seen before in this list; else records it. */
static bool dup_seen(parser *p, dup_checker *dc, const char *name) {
  for (size_t i = 0; i < dc->n; i++)
    if (dc->small[i] == name) return true;
  if (dc->used) {
    bool found = false;
    tl_map_get(&dc->map, name, &found);
    if (found) return true;
  }
  if (dc->n < 16) {
    dc->small[dc->n++] = name;
    return false;
  }
  if (!dc->used) {
    tl_map_init(&dc->map);
    dc->used = true;
  }
  if (!tl_map_put(&dc->map, name, (void *)1)) oom(p);
  return false;
}
static void dup_free(dup_checker *dc) {
  if (dc->used) tl_map_free(&dc->map);
}

/* Adds keyword argument kw (false when its value failed to parse, or on OOM). */
static bool push_keyword(parser *p, tl_ast_keyword kw) {
  if (!kw.value) return false;
  if (tl_vec_push(&p->kws, kw)) return true;
  oom(p);
  return false;
}

/* One call argument: *x, **x, name=value, or an expression (a generator
 * expression when it is the only argument). */
static bool parse_call_arg(parser *p, dup_checker *dc, size_t kmark, bool *unpacked_kw) {
  const tl_token *t = cur(p);
  if (tok_is_op(t, TL_OP_POW)) {
    tl_ast_keyword kw = {NULL, t->loc, NULL};
    advance(p);
    kw.value = parse_test(p);
    *unpacked_kw = true;
    return push_keyword(p, kw);
  }
  if (t->kind == TL_TOK_NAME && tok_is_op(peek(p, 1), TL_OP_ASSIGN)) {
    tl_ast_keyword kw = {t->text, t->loc, NULL};
    if (dup_seen(p, dc, kw.name)) {
      error_at(p, kw.loc, "keyword argument repeated: %s", kw.name);
      return false;
    }
    advance(p);
    advance(p);
    kw.value = parse_test(p);
    return push_keyword(p, kw);
  }
  bool star = tok_is_op(t, TL_OP_STAR); /* *args may follow keywords */
  if (*unpacked_kw && !star) {
    error_at(p, t->loc, "positional argument follows keyword argument unpacking");
    return false;
  }
  if (p->kws.len > kmark && !star) {
    error_at(p, t->loc, "positional argument follows keyword argument");
    return false;
  }
  tl_loc aloc = t->loc;
  tl_ast_expr *a = parse_star_named(p);
  if (!a) return false;
  if (at_comp_for(p)) {
    a = parse_comprehension(p, TL_AST_GENEXP, aloc, a, NULL);
    if (!a) return false;
  }
  if (is_op(p, TL_OP_ASSIGN)) {
    error_at(p, aloc, "expression cannot contain assignment, perhaps you meant \"==\"?");
    return false;
  }
  return push(p, a); /* starred arguments sit among the positional ones */
}

bool parse_call_args(parser *p) {
  advance(p); /* ( */
  size_t kmark = p->kws.len;
  dup_checker dc = {0};
  bool ok = false, unpacked_kw = false;
  while (!is_op(p, TL_OP_RPAR)) {
    if (!parse_call_arg(p, &dc, kmark, &unpacked_kw)) goto done;
    if (is_op(p, TL_OP_COMMA)) {
      advance(p);
      continue;
    }
    if (!is_op(p, TL_OP_RPAR)) {
      expected(p, "',' or ')'");
      goto done;
    }
  }
  advance(p);
  ok = true;
done:
  dup_free(&dc);
  return ok && !p->failed;
}

/* Call arguments after the callee; cur is '('. */
static tl_ast_expr *parse_call(parser *p, tl_ast_expr *func, tl_loc start) {
  size_t mark = p->ptrs.len, kmark = p->kws.len;
  if (!parse_call_args(p)) return NULL;
  tl_ast_expr *e = mk(p, TL_AST_CALL, start);
  if (!e) return NULL;
  e->u.call.func = func;
  e->u.call.args = (tl_ast_expr **)take(p, mark, &e->u.call.nargs);
  size_t nk = p->kws.len - kmark;
  if (nk) {
    e->u.call.kw = tl_vec_to_arena_(p->a, p->kws.data + kmark, nk, sizeof(tl_ast_keyword));
    if (!e->u.call.kw) return oom(p);
    e->u.call.nkw = (int)nk;
  }
  p->kws.len = kmark;
  return p->failed ? NULL : e;
}

/* A subscript item: an expression, *expr, or a slice lo:hi[:step]. */
static tl_ast_expr *parse_slice_item(parser *p) {
  tl_loc start = cur_loc(p);
  tl_ast_expr *lo = NULL;
  if (!is_op(p, TL_OP_COLON)) {
    lo = parse_star_named(p);
    if (!lo || !is_op(p, TL_OP_COLON)) return lo;
  }
  advance(p);
  tl_ast_expr *e = mk(p, TL_AST_SLICE, start);
  if (!e) return NULL;
  e->u.slice.lo = lo;
  if (!is_op(p, TL_OP_COLON) && can_start_expr(cur(p))) {
    e->u.slice.hi = parse_test(p);
    if (!e->u.slice.hi) return NULL;
  }
  if (is_op(p, TL_OP_COLON)) {
    advance(p);
    if (can_start_expr(cur(p))) {
      e->u.slice.step = parse_test(p);
      if (!e->u.slice.step) return NULL;
    }
  }
  return e;
}

static tl_ast_expr *parse_subscript(parser *p, tl_ast_expr *value, tl_loc start) {
  advance(p); /* [ */
  size_t mark = p->ptrs.len;
  bool tuple = false;
  for (;;) {
    tl_ast_expr *it = parse_slice_item(p);
    if (!it || !push(p, it)) return NULL;
    if (it->kind == TL_AST_STARRED) tuple = true;
    if (is_op(p, TL_OP_COMMA)) {
      advance(p);
      tuple = true;
      if (is_op(p, TL_OP_RSQB)) break;
      continue;
    }
    if (is_op(p, TL_OP_RSQB)) break;
    return expected(p, "',' or ']'");
  }
  advance(p);
  tl_ast_expr *e = mk(p, TL_AST_SUBSCRIPT, start);
  if (!e) return NULL;
  e->u.sub.value = value;
  e->u.sub.items = (tl_ast_expr **)take(p, mark, &e->u.sub.n);
  if (tuple) e->flags |= TL_AST_F_TUPLE_SUB;
  return p->failed ? NULL : e;
}

/* One more level of a left-associative chain. */
static bool chain_step(parser *p) {
  if (++p->ast_depth > MAX_AST_DEPTH) {
    error_at(p, cur_loc(p), "nesting too deep");
    return false;
  }
  return true;
}

static tl_ast_expr *parse_primary(parser *p) {
  tl_loc start = cur_loc(p);
  tl_ast_expr *e = parse_atom(p);
  int saved = p->ast_depth;
  while (e) {
    if (is_op(p, TL_OP_DOT)) {
      if (!chain_step(p)) return NULL;
      advance(p);
      const tl_token *t = cur(p);
      if (t->kind != TL_TOK_NAME) return expected(p, "attribute name");
      tl_ast_expr *a = mk(p, TL_AST_ATTR, start);
      if (!a) return NULL;
      a->u.attr.value = e;
      a->u.attr.name = t->text;
      a->u.attr.name_loc = t->loc;
      advance(p);
      e = a;
    } else if (is_op(p, TL_OP_LPAR)) {
      if (!chain_step(p)) return NULL;
      e = parse_call(p, e, start);
    } else if (is_op(p, TL_OP_LSQB)) {
      if (!chain_step(p)) return NULL;
      e = parse_subscript(p, e, start);
    } else {
      break;
    }
  }
  p->ast_depth = saved;
  return e;
}

/* await_primary: ['await'] primary */
static tl_ast_expr *parse_await(parser *p) {
  if (!is_kw(p, TL_KW_AWAIT)) return parse_primary(p);
  return parse_prefixed(p, TL_AST_AWAIT, "await", parse_primary);
}

static tl_ast_expr *parse_power(parser *p) {
  tl_loc start = cur_loc(p);
  tl_ast_expr *base = parse_await(p);
  if (!base || !is_op(p, TL_OP_POW)) return base;
  tl_loc oploc = cur_loc(p);
  const char *op = cur(p)->text;
  advance(p);
  if (!enter(p)) return NULL;
  tl_ast_expr *r = parse_factor(p);
  leave(p);
  return r ? mk_binary(p, TL_AST_BINOP, start, op, oploc, base, r) : NULL;
}

static tl_ast_expr *parse_factor(parser *p) {
  const tl_token *t = cur(p);
  if (!(tok_is_op(t, TL_OP_MINUS) || tok_is_op(t, TL_OP_PLUS) || tok_is_op(t, TL_OP_TILDE))) return parse_power(p);
  tl_loc loc = t->loc;
  const char *op = t->text;
  if (t->sub == TL_OP_MINUS) {
    /* -9223372036854775808: the only way to write INT64_MIN */
    const tl_token *n = peek(p, 1);
    if (n->kind == TL_TOK_INT && n->int_2_63) {
      const tl_token *after = peek(p, 2);
      if (!tok_is_op(after, TL_OP_POW) && !tok_is_op(after, TL_OP_DOT) && !tok_is_op(after, TL_OP_LPAR) &&
          !tok_is_op(after, TL_OP_LSQB)) {
        advance(p);
        advance(p);
        tl_ast_expr *e = mk(p, TL_AST_INT, loc);
        if (e) e->u.ival = INT64_MIN;
        return e;
      }
    }
  }
  return parse_prefixed(p, TL_AST_UNARY, op, parse_factor);
}

/* Binary levels: 0 |, 1 ^, 2 &, 3 << >>, 4 + -, 5 * / // % @ */
static bool level_has(int level, const tl_token *t) {
  if (t->kind != TL_TOK_OP) return false;
  switch (level) {
  case 0: return t->sub == TL_OP_PIPE;
  case 1: return t->sub == TL_OP_CARET;
  case 2: return t->sub == TL_OP_AMP;
  case 3: return t->sub == TL_OP_LSHIFT || t->sub == TL_OP_RSHIFT;
  case 4: return t->sub == TL_OP_PLUS || t->sub == TL_OP_MINUS;
  default:
    return t->sub == TL_OP_STAR || t->sub == TL_OP_SLASH || t->sub == TL_OP_DSLASH || t->sub == TL_OP_PERCENT ||
           t->sub == TL_OP_AT;
  }
}

tl_ast_expr *parse_binary(parser *p, int level) {
  tl_loc start = cur_loc(p);
  tl_ast_expr *l = level < 5 ? parse_binary(p, level + 1) : parse_factor(p);
  int saved = p->ast_depth;
  while (l && level_has(level, cur(p))) {
    if (!chain_step(p)) return NULL;
    tl_loc oploc = cur_loc(p);
    const char *op = cur(p)->text;
    advance(p);
    tl_ast_expr *r = level < 5 ? parse_binary(p, level + 1) : parse_factor(p);
    if (!r) return NULL;
    l = mk_binary(p, TL_AST_BINOP, start, op, oploc, l, r);
    if (!l) return NULL;
  }
  p->ast_depth = saved;
  return l;
}

/* The comparison operator at the current token (NULL if none) and how
 * many tokens it spans. */
static const char *compare_op(parser *p, int *ntok) {
  const tl_token *t = cur(p);
  *ntok = 1;
  if (t->kind == TL_TOK_OP) {
    switch (t->sub) {
    case TL_OP_LT:
    case TL_OP_GT:
    case TL_OP_LE:
    case TL_OP_GE:
    case TL_OP_EQ:
    case TL_OP_NE: return t->text;
    default: return NULL;
    }
  }
  if (tok_is_kw(t, TL_KW_IN)) return "in";
  if (tok_is_kw(t, TL_KW_NOT) && tok_is_kw(peek(p, 1), TL_KW_IN)) {
    *ntok = 2;
    return "not in";
  }
  if (tok_is_kw(t, TL_KW_IS)) {
    if (tok_is_kw(peek(p, 1), TL_KW_NOT)) {
      *ntok = 2;
      return "is not";
    }
    return "is";
  }
  return NULL;
}

static tl_ast_expr *parse_comparison(parser *p) {
  tl_loc start = cur_loc(p);
  tl_ast_expr *first = parse_binary(p, 0);
  int ntok;
  if (!first || !compare_op(p, &ntok)) return first;
  size_t mark = p->ptrs.len, lmark = p->locs.len;
  if (!push(p, first)) return NULL;
  const char *op;
  while ((op = compare_op(p, &ntok)) != NULL) {
    const char *iop = intern(p, op);
    if (!iop) return NULL;
    if (!tl_vec_push(&p->locs, cur_loc(p))) return oom(p);
    for (int i = 0; i < ntok; i++) advance(p);
    tl_ast_expr *r = parse_binary(p, 0);
    if (!r || !push(p, (void *)iop) || !push(p, r)) return NULL;
  }
  tl_ast_expr *e = mk(p, TL_AST_COMPARE, start);
  if (!e) return NULL;
  int total;
  void **v = take(p, mark, &total);
  if (p->failed) return NULL;
  int n = total / 2;
  e->u.cmp.n = n;
  e->u.cmp.ops = tl_arena_alloc(p->a, sizeof(const char *) * (size_t)n);
  e->u.cmp.operands = tl_arena_alloc(p->a, sizeof(tl_ast_expr *) * (size_t)(n + 1));
  e->u.cmp.op_locs = tl_vec_to_arena_(p->a, p->locs.data + lmark, (size_t)n, sizeof(tl_loc));
  if (!e->u.cmp.ops || !e->u.cmp.operands || !e->u.cmp.op_locs) return oom(p);
  p->locs.len = lmark;
  e->u.cmp.operands[0] = v[0];
  for (int i = 0; i < n; i++) {
    e->u.cmp.ops[i] = v[1 + 2 * i];
    e->u.cmp.operands[i + 1] = v[2 + 2 * i];
  }
  return e;
}

static tl_ast_expr *parse_not(parser *p) {
  if (!is_kw(p, TL_KW_NOT)) return parse_comparison(p);
  return parse_prefixed(p, TL_AST_UNARY, intern(p, "not"), parse_not);
}

tl_ast_expr *parse_boolop(parser *p, tl_kw kw) {
  tl_loc start = cur_loc(p);
  tl_ast_expr *l = kw == TL_KW_OR ? parse_boolop(p, TL_KW_AND) : parse_not(p);
  int saved = p->ast_depth;
  while (l && is_kw(p, kw)) {
    if (!chain_step(p)) return NULL;
    tl_loc oploc = cur_loc(p);
    const char *op = cur(p)->text;
    advance(p);
    tl_ast_expr *r = kw == TL_KW_OR ? parse_boolop(p, TL_KW_AND) : parse_not(p);
    if (!r) return NULL;
    l = mk_binary(p, TL_AST_BOOLOP, start, op, oploc, l, r);
    if (!l) return NULL;
  }
  p->ast_depth = saved;
  return l;
}

/* lambda [params]: body */
static tl_ast_expr *parse_lambda(parser *p) {
  tl_loc loc = cur_loc(p);
  advance(p);
  size_t pmark = p->params.len;
  if (!parse_params(p, TL_OP_COLON, false)) return NULL;
  advance(p); /* : */
  tl_ast_expr *e = mk(p, TL_AST_LAMBDA, loc);
  if (!e) return NULL;
  size_t np = p->params.len - pmark;
  if (np) {
    e->u.lambda.params = tl_vec_to_arena_(p->a, p->params.data + pmark, np, sizeof(tl_ast_param));
    if (!e->u.lambda.params) return oom(p);
    e->u.lambda.nparams = (int)np;
  }
  p->params.len = pmark;
  e->u.lambda.body = parse_test(p);
  return e->u.lambda.body ? e : NULL;
}

/* expression: lambda | or_test ['if' or_test 'else' expression] */
tl_ast_expr *parse_test(parser *p) {
  if (!enter(p)) return NULL;
  tl_loc start = cur_loc(p);
  if (is_kw(p, TL_KW_LAMBDA)) {
    tl_ast_expr *l = parse_lambda(p);
    leave(p);
    return l;
  }
  tl_ast_expr *e = parse_boolop(p, TL_KW_OR);
  if (e && is_kw(p, TL_KW_IF)) {
    advance(p);
    tl_ast_expr *test = parse_boolop(p, TL_KW_OR);
    tl_ast_expr *orelse = NULL;
    if (test) {
      if (!is_kw(p, TL_KW_ELSE)) {
        expected(p, "'else' in conditional expression");
      } else {
        advance(p);
        orelse = parse_test(p);
      }
    }
    tl_ast_expr *r = orelse ? mk(p, TL_AST_IFEXP, start) : NULL;
    if (r) {
      r->u.ifexp.test = test;
      r->u.ifexp.body = e;
      r->u.ifexp.orelse = orelse;
    }
    e = r;
  }
  leave(p);
  return e;
}

tl_ast_expr *parse_namedexpr(parser *p) {
  tl_ast_expr *e = parse_test(p);
  if (!e || !is_op(p, TL_OP_WALRUS)) return e;
  if (e->kind != TL_AST_NAME || (e->flags & TL_AST_F_PARENS))
    return error_at(p, e->loc, "cannot use assignment expressions with this target");
  tl_loc oploc = cur_loc(p);
  advance(p);
  tl_ast_expr *v = parse_test(p);
  return v ? mk_binary(p, TL_AST_NAMEDEXPR, e->loc, ":=", oploc, e, v) : NULL;
}

tl_ast_expr *parse_star_named(parser *p) {
  if (!is_op(p, TL_OP_STAR)) return parse_namedexpr(p);
  return parse_prefixed(p, TL_AST_STARRED, "*", parse_bitor);
}

tl_ast_expr *parse_yield(parser *p) {
  tl_loc loc = cur_loc(p);
  advance(p); /* yield */
  tl_ast_expr *e;
  if (is_kw(p, TL_KW_FROM)) {
    advance(p);
    return mk_unary(p, TL_AST_YIELD_FROM, loc, "yield from", parse_test(p));
  }
  e = mk(p, TL_AST_YIELD, loc);
  if (!e) return NULL;
  e->u.un.op = "yield";
  if (can_start_expr(cur(p))) {
    e->u.un.x = parse_testlist(p);
    if (!e->u.un.x) return NULL;
  }
  return e;
}

/* item (',' item)* [','] with items parsed by item: a TUPLE when there is a
 * comma, else the one item. */
static tl_ast_expr *parse_comma_tuple(parser *p, tl_ast_expr *(*item)(parser *)) {
  tl_loc start = cur_loc(p);
  tl_ast_expr *first = item(p);
  if (!first || !is_op(p, TL_OP_COMMA)) return first;
  size_t mark = p->ptrs.len;
  if (!push(p, first)) return NULL;
  while (is_op(p, TL_OP_COMMA)) {
    advance(p);
    if (!can_start_expr(cur(p))) break;
    tl_ast_expr *e = item(p);
    if (!e || !push(p, e)) return NULL;
  }
  return mk_list(p, TL_AST_TUPLE, start, mark);
}

/* star_expressions: a TUPLE when there is a comma. */
tl_ast_expr *parse_testlist(parser *p) { return parse_comma_tuple(p, tl_pp_parse_star_named); }

/* One target of a target list: '*' target or a target at the '|' level
 * (so that 'in' ends it). */
tl_ast_expr *parse_target(parser *p) {
  if (!enter(p)) return NULL;
  tl_ast_expr *e;
  if (is_op(p, TL_OP_STAR)) {
    tl_loc loc = cur_loc(p);
    advance(p);
    e = mk_unary(p, TL_AST_STARRED, loc, "*", parse_bitor(p));
  } else {
    e = parse_binary(p, 0);
  }
  leave(p);
  return e;
}

/* A target list (for loops, comprehensions, del): a comma gives a TUPLE. */
tl_ast_expr *parse_target_list(parser *p) { return parse_comma_tuple(p, tl_pp_parse_target); }

/* Checks an assignment target: name, attribute, subscript, or a tuple /
 * list of targets (with at most one starred one).  (Tuple nesting is
 * bounded by the parse depth limit.) */
bool check_target(parser *p, const tl_ast_expr *e, bool allow_tuple) {
  switch (e->kind) {
  case TL_AST_NAME:
  case TL_AST_ATTR:
  case TL_AST_SUBSCRIPT: return true;
  case TL_AST_STARRED:
    if (!allow_tuple) break;
    return check_target(p, e->u.un.x, true);
  case TL_AST_TUPLE:
  case TL_AST_LIST:
    if (!allow_tuple) break;
    for (int i = 0; i < e->u.list.n; i++)
      if (!check_target(p, e->u.list.items[i], true)) return false;
    return true;
  default: break;
  }
  const char *what = "expression";
  switch (e->kind) {
  case TL_AST_INT:
  case TL_AST_FLOAT:
  case TL_AST_STR:
  case TL_AST_BYTES:
  case TL_AST_IMAG:
  case TL_AST_BIGINT:
  case TL_AST_ELLIPSIS: what = "literal"; break;
  case TL_AST_FSTRING: what = "f-string expression"; break;
  case TL_AST_TRUE: what = "True"; break;
  case TL_AST_FALSE: what = "False"; break;
  case TL_AST_NONE: what = "None"; break;
  case TL_AST_CALL: what = "function call"; break;
  case TL_AST_TUPLE: what = "tuple"; break;
  case TL_AST_LIST: what = "list"; break;
  case TL_AST_DICT: what = "dict literal"; break;
  case TL_AST_SET: what = "set display"; break;
  case TL_AST_COMPARE: what = "comparison"; break;
  case TL_AST_IFEXP: what = "conditional expression"; break;
  case TL_AST_LAMBDA: what = "lambda"; break;
  case TL_AST_STARRED: what = "starred"; break;
  case TL_AST_LISTCOMP: what = "list comprehension"; break;
  case TL_AST_SETCOMP: what = "set comprehension"; break;
  case TL_AST_DICTCOMP: what = "dict comprehension"; break;
  case TL_AST_GENEXP: what = "generator expression"; break;
  case TL_AST_NAMEDEXPR: what = "named expression"; break;
  case TL_AST_AWAIT: what = "await expression"; break;
  case TL_AST_YIELD:
  case TL_AST_YIELD_FROM: what = "yield expression"; break;
  default: break;
  }
  if (!allow_tuple && (e->kind == TL_AST_TUPLE || e->kind == TL_AST_LIST))
    error_at(p, e->loc, "'%s' is an illegal target here", what);
  else error_at(p, e->loc, "cannot assign to %s", what);
  return false;
}

/* ------------------------------------------------------------ parameters */

/* One parameter name [: annotation] [= default] of the given kind. */
static bool parse_param(parser *p, dup_checker *dc, tl_ast_param_kind kind, bool annotations, bool *seen_default) {
  const tl_token *t = cur(p);
  if (t->kind != TL_TOK_NAME) {
    expected(p, "parameter name");
    return false;
  }
  tl_ast_param prm = {t->text, t->loc, NULL, NULL, kind};
  if (dup_seen(p, dc, prm.name)) {
    error_at(p, prm.loc, "duplicate argument '%s' in function definition", prm.name);
    return false;
  }
  advance(p);
  if (annotations && is_op(p, TL_OP_COLON)) {
    advance(p);
    prm.annotation = is_op(p, TL_OP_STAR) && kind == TL_AST_PARAM_VARARG ? parse_star_named(p) : parse_test(p);
    if (!prm.annotation) return false;
  }
  if (kind != TL_AST_PARAM_VARARG && kind != TL_AST_PARAM_KWARG && is_op(p, TL_OP_ASSIGN)) {
    advance(p);
    prm.default_value = parse_test(p);
    if (!prm.default_value) return false;
    if (kind != TL_AST_PARAM_KWONLY) *seen_default = true;
  } else if (*seen_default && (kind == TL_AST_PARAM_POS || kind == TL_AST_PARAM_POSONLY)) {
    error_at(p, prm.loc, "parameter without a default follows parameter with a default");
    return false;
  }
  if (!tl_vec_push(&p->params, prm)) {
    oom(p);
    return false;
  }
  return true;
}

bool parse_params(parser *p, tl_op close, bool annotations) {
  bool seen_default = false, kwonly = false, ok = false;
  size_t pmark = p->params.len;
  dup_checker dc = {0};
  while (!is_op(p, close)) {
    const tl_token *t = cur(p);
    tl_ast_param_kind kind = kwonly ? TL_AST_PARAM_KWONLY : TL_AST_PARAM_POS;
    if (tok_is_op(t, TL_OP_SLASH)) {
      if (kwonly || p->params.len == pmark) {
        error_at(p, t->loc, "'/' must be ahead of '*' and follow a parameter");
        goto done;
      }
      for (size_t i = pmark; i < p->params.len; i++) {
        if (p->params.data[i].pkind == TL_AST_PARAM_POSONLY) {
          error_at(p, t->loc, "'/' may appear only once");
          goto done;
        }
        p->params.data[i].pkind = TL_AST_PARAM_POSONLY;
      }
      advance(p);
    } else if (tok_is_op(t, TL_OP_STAR)) {
      if (kwonly) {
        error_at(p, t->loc, "'*' argument may appear only once");
        goto done;
      }
      kwonly = true;
      advance(p);
      if (!is_op(p, TL_OP_COMMA) && !parse_param(p, &dc, TL_AST_PARAM_VARARG, annotations, &seen_default)) goto done;
    } else if (tok_is_op(t, TL_OP_POW)) {
      advance(p);
      if (!parse_param(p, &dc, TL_AST_PARAM_KWARG, annotations, &seen_default)) goto done;
      if (is_op(p, TL_OP_COMMA)) advance(p);
      if (!is_op(p, close)) {
        error_at(p, cur_loc(p), "arguments cannot follow var-keyword argument");
        goto done;
      }
      break;
    } else if (!parse_param(p, &dc, kind, annotations, &seen_default)) {
      goto done;
    }
    if (is_op(p, TL_OP_COMMA)) {
      advance(p);
      continue;
    }
    if (!is_op(p, close)) {
      expected(p, close == TL_OP_RPAR ? "',' or ')'" : "',' or ':'");
      goto done;
    }
  }
  ok = true;
done:
  dup_free(&dc);
  return ok && !p->failed;
}
