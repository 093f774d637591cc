/* Parser of the Python subset that TileLang kernel files use: tokens from
 * lexer.c → the syntax tree of ast.h (tl_parse_python).
 *
 * Algorithm: recursive descent with one function per precedence level, as in
 * Python's grammar: ifexp < or < and < not < comparison (chained) < | < ^ <
 * & < shifts < + - < * / // % @ < unary + - ~ < ** < primary (attribute,
 * call, subscript) < atom.  Left-associative levels are loops; ** recurses
 * into the unary level for its right operand (right-associative, 2**-1).
 * Tokens come lazily from the lexer through a 4-token lookahead buffer.
 * Variable-length child lists are collected on parser-owned scratch stacks
 * (pointers, keywords, parameters, locations) and copied into the arena when
 * the node is finished; nesting is LIFO, so each node owns the top of the
 * stack between its mark and the current length.  Recursion that the input
 * drives is bounded: parenthesis/unary/ifexp nesting and block nesting are
 * limited to 200 levels, and the depth of the built expression tree
 * (including left-associative chains) to 1000, all reported as "nesting too
 * deep".  The first error stops the parse (one error per parse); a lexical
 * error is reported when the parser reaches its ERROR token, and an error
 * inside brackets that span lines is replaced by "'(' was never closed" when
 * the bracket indeed stays open until the end of the file.  Linear time. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "IR/ast.h"
#include "IR/lexer.h"

#define MAX_NEST 200
#define MAX_AST_DEPTH 1000

typedef struct parser {
  tl_lexer lx;
  tl_token la[4];
  int nla;
  tl_token prev;
  tl_arena *a;
  tl_intern *names;
  tl_diag *d;
  const char *file;
  bool failed;
  int depth;       /* recursive expression nesting */
  int ast_depth;   /* estimated depth of the expression tree being built */
  int block_depth; /* nested blocks (and elif chains) */
  TL_VEC(void *) ptrs;
  TL_VEC(tl_ast_keyword) kws;
  TL_VEC(tl_ast_param) params;
  TL_VEC(tl_loc) locs;
} parser;

/* ------------------------------------------------------------ tokens */

static void fill(parser *p, int k) {
  while (p->nla <= k) tl_lexer_next(&p->lx, &p->la[p->nla++]);
}
static const tl_token *cur(parser *p) {
  fill(p, 0);
  return &p->la[0];
}
static const tl_token *peek(parser *p, int k) {
  fill(p, k);
  return &p->la[k];
}
static void advance(parser *p) {
  fill(p, 0);
  p->prev = p->la[0];
  for (int i = 1; i < p->nla; i++) p->la[i - 1] = p->la[i];
  p->nla--;
}
static tl_loc cur_loc(parser *p) { return cur(p)->loc; }
static tl_loc prev_end(parser *p) {
  return (tl_loc){p->file, p->prev.end_line, p->prev.end_col};
}
static bool tok_is_op(const tl_token *t, tl_op op) {
  return t->kind == TL_TOK_OP && t->sub == (int)op;
}
static bool tok_is_kw(const tl_token *t, tl_kw kw) {
  return t->kind == TL_TOK_KEYWORD && t->sub == (int)kw;
}
static bool is_op(parser *p, tl_op op) { return tok_is_op(cur(p), op); }
static bool is_kw(parser *p, tl_kw kw) { return tok_is_kw(cur(p), kw); }
static bool is_kind(parser *p, tl_tok_kind k) { return cur(p)->kind == k; }

/* ------------------------------------------------------------ errors */

/* Describes a token for messages ("')'", "end of line", ...), in the arena. */
static const char *describe(parser *p, const tl_token *t) {
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

static void *error_at(parser *p, tl_loc loc, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static void *error_at(parser *p, tl_loc loc, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  verror(p, loc, fmt, ap);
  va_end(ap);
  return NULL;
}

static void *oom(parser *p) {
  return error_at(p, cur_loc(p), "out of memory");
}

/* "expected X, got Y" at the current token. */
static void *expected(parser *p, const char *what) {
  return error_at(p, cur_loc(p), "expected %s, got %s", what, describe(p, cur(p)));
}

static void *unsupported_kw(parser *p) {
  const tl_token *t = cur(p);
  return error_at(p, t->loc, "'%s' is not supported in kernel files", tl_kw_spelling(t->sub));
}

static bool is_unsupported_kw(const tl_token *t) {
  if (t->kind != TL_TOK_KEYWORD) return false;
  switch (t->sub) {
  case TL_KW_CLASS: case TL_KW_GLOBAL: case TL_KW_NONLOCAL: case TL_KW_LAMBDA:
  case TL_KW_TRY: case TL_KW_EXCEPT: case TL_KW_FINALLY: case TL_KW_ASYNC:
  case TL_KW_AWAIT: case TL_KW_YIELD: case TL_KW_DEL: case TL_KW_ASSERT:
  case TL_KW_RAISE:
    return true;
  default:
    return false;
  }
}

/* ------------------------------------------------------------ depth */

static bool enter(parser *p) {
  p->depth++;
  p->ast_depth++;
  if (p->depth > MAX_NEST || p->ast_depth > MAX_AST_DEPTH) {
    error_at(p, cur_loc(p), "nesting too deep");
    return false;
  }
  return true;
}
static void leave(parser *p) {
  p->depth--;
  p->ast_depth--;
}
/* One more level of a left-associative chain. */
static bool chain_step(parser *p) {
  if (++p->ast_depth > MAX_AST_DEPTH) {
    error_at(p, cur_loc(p), "nesting too deep");
    return false;
  }
  return true;
}

/* ------------------------------------------------------------ nodes */

static tl_ast_expr *mk(parser *p, tl_ast_expr_kind k, tl_loc loc) {
  tl_ast_expr *e = tl_arena_alloc(p->a, sizeof *e);
  if (!e) return oom(p);
  e->kind = k;
  e->loc = loc;
  return e;
}
static tl_ast_stmt *mks(parser *p, tl_ast_stmt_kind k, tl_loc loc) {
  tl_ast_stmt *s = tl_arena_alloc(p->a, sizeof *s);
  if (!s) return oom(p);
  s->kind = k;
  s->loc = loc;
  return s;
}
static const char *intern(parser *p, const char *s) {
  const char *r = tl_intern_str(p->names, s);
  if (!r) oom(p);
  return r;
}

static bool push(parser *p, void *x) {
  if (!tl_vec_push(&p->ptrs, x)) {
    oom(p);
    return false;
  }
  return true;
}
/* Copies ptrs[mark..] into the arena and pops them; *n gets the count. */
static void **take(parser *p, size_t mark, int *n) {
  size_t cnt = p->ptrs.len - mark;
  *n = 0;
  if (cnt > (size_t)INT32_MAX) {
    error_at(p, cur_loc(p), "too many items");
    return NULL;
  }
  void **r = NULL;
  if (cnt) {
    r = tl_vec_to_arena_(p->a, p->ptrs.data + mark, cnt, sizeof(void *));
    if (!r) { oom(p); return NULL; }
  }
  p->ptrs.len = mark;
  *n = (int)cnt;
  return r;
}

/* Duplicate-name checks (keyword arguments, parameters): a linear scan for
 * short lists, a map once a list is long (linear overall). */
/* Names seen so far in one keyword-argument or parameter list: a linear scan
 * of the first 16, a hash map beyond them (no quadratic behaviour on long
 * lists). */
typedef struct dup_checker { const char *small[16]; size_t n; tl_map map; bool used; } dup_checker;
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

/* ------------------------------------------------------------ expressions */

static tl_ast_expr *parse_test(parser *p);
static tl_ast_expr *parse_factor(parser *p);

static bool can_start_expr(const tl_token *t) {
  switch (t->kind) {
  case TL_TOK_NAME: case TL_TOK_INT: case TL_TOK_FLOAT: case TL_TOK_STRING: case TL_TOK_ERROR:
    return true;
  case TL_TOK_OP:
    return t->sub == TL_OP_LPAR || t->sub == TL_OP_LSQB || t->sub == TL_OP_LBRACE ||
           t->sub == TL_OP_MINUS || t->sub == TL_OP_PLUS || t->sub == TL_OP_TILDE ||
           t->sub == TL_OP_STAR || t->sub == TL_OP_ELLIPSIS;
  case TL_TOK_KEYWORD:
    return t->sub == TL_KW_TRUE || t->sub == TL_KW_FALSE || t->sub == TL_KW_NONE ||
           t->sub == TL_KW_NOT || t->sub == TL_KW_LAMBDA || t->sub == TL_KW_AWAIT ||
           t->sub == TL_KW_YIELD;
  default:
    return false;
  }
}

/* A comma-separated list of items after an opening bracket up to `close`;
 * pushes them; the caller consumed the opener. `first` (may be NULL) is an
 * already parsed first item.  Returns false on error. */
static bool parse_items(parser *p, tl_op close, const char *closer, const char *comp_msg) {
  bool first = true;
  while (!is_op(p, close)) {
    tl_ast_expr *e = parse_test(p);
    if (!e || !push(p, e)) return false;
    if (first && is_kw(p, TL_KW_FOR)) {
      error_at(p, cur_loc(p), "%s", comp_msg);
      return false;
    }
    first = false;
    if (is_op(p, TL_OP_COMMA)) { advance(p); continue; }
    if (!is_op(p, close)) {
      error_at(p, cur_loc(p), "expected ',' or '%s', got %s", closer, describe(p, cur(p)));
      return false;
    }
  }
  advance(p);
  return true;
}

static tl_ast_expr *parse_string(parser *p) {
  const tl_token *t = cur(p);
  tl_ast_expr *e = mk(p, TL_AST_STR, t->loc);
  if (!e) return NULL;
  const char *s = t->str;
  size_t n = t->str_len;
  advance(p);
  if (is_kind(p, TL_TOK_STRING)) {  /* implicit concatenation */
    tl_strbuf sb = {0};
    tl_strbuf_appendn(&sb, s, n);
    while (is_kind(p, TL_TOK_STRING)) {
      tl_strbuf_appendn(&sb, cur(p)->str, cur(p)->str_len);
      advance(p);
    }
    s = sb.oom ? NULL : tl_arena_strndup(p->a, sb.data ? sb.data : "", sb.len);
    tl_strbuf_free(&sb);
    if (!s) return oom(p);
  }
  e->u.str = s;
  return e;
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
    if (t->int_2_63) return error_at(p, loc, "integer literal too large");
    e = mk(p, TL_AST_INT, loc);
    if (e) e->u.ival = t->ival;
    advance(p);
    return e;
  case TL_TOK_FLOAT:
    e = mk(p, TL_AST_FLOAT, loc);
    if (e) e->u.fval = t->fval;
    advance(p);
    return e;
  case TL_TOK_STRING:
    return parse_string(p);
  case TL_TOK_KEYWORD:
    if (t->sub == TL_KW_TRUE || t->sub == TL_KW_FALSE || t->sub == TL_KW_NONE) {
      e = mk(p, t->sub == TL_KW_TRUE ? TL_AST_TRUE : t->sub == TL_KW_FALSE ? TL_AST_FALSE
                                                                          : TL_AST_NONE,
             loc);
      advance(p);
      return e;
    }
    if (is_unsupported_kw(t)) return unsupported_kw(p);
    return expected(p, "expression");
  case TL_TOK_OP:
    break;
  default:
    return expected(p, "expression");
  }
  switch (t->sub) {
  case TL_OP_LPAR: {
    advance(p);
    if (is_op(p, TL_OP_RPAR)) {
      advance(p);
      return mk(p, TL_AST_TUPLE, loc);
    }
    tl_ast_expr *first = parse_test(p);
    if (!first) return NULL;
    if (is_op(p, TL_OP_RPAR)) {  /* parenthesised expression */
      advance(p);
      return first;
    }
    if (is_kw(p, TL_KW_FOR)) return error_at(p, cur_loc(p), "generator expressions are not supported");
    if (!is_op(p, TL_OP_COMMA)) return expected(p, "',' or ')'");
    advance(p);
    size_t mark = p->ptrs.len;
    if (!push(p, first)) return NULL;
    if (!parse_items(p, TL_OP_RPAR, ")", "generator expressions are not supported")) return NULL;
    e = mk(p, TL_AST_TUPLE, loc);
    if (!e) return NULL;
    e->u.list.items = (tl_ast_expr **)take(p, mark, &e->u.list.n);
    return p->failed ? NULL : e;
  }
  case TL_OP_LSQB: {
    advance(p);
    size_t mark = p->ptrs.len;
    if (!parse_items(p, TL_OP_RSQB, "]", "list comprehensions are not supported")) return NULL;
    e = mk(p, TL_AST_LIST, loc);
    if (!e) return NULL;
    e->u.list.items = (tl_ast_expr **)take(p, mark, &e->u.list.n);
    return p->failed ? NULL : e;
  }
  case TL_OP_LBRACE: {
    advance(p);
    size_t mark = p->ptrs.len;
    bool first = true;
    while (!is_op(p, TL_OP_RBRACE)) {
      if (is_op(p, TL_OP_POW))
        return error_at(p, cur_loc(p), "dictionary unpacking is not supported");
      tl_ast_expr *k = parse_test(p);
      if (!k) return NULL;
      if (!is_op(p, TL_OP_COLON)) {
        if (first && (is_op(p, TL_OP_COMMA) || is_op(p, TL_OP_RBRACE) || is_kw(p, TL_KW_FOR)))
          return error_at(p, loc, "set literals are not supported");
        return expected(p, "':'");
      }
      advance(p);
      tl_ast_expr *v = parse_test(p);
      if (!v) return NULL;
      if (first && is_kw(p, TL_KW_FOR))
        return error_at(p, cur_loc(p), "dict comprehensions are not supported");
      first = false;
      if (!push(p, k) || !push(p, v)) return NULL;
      if (is_op(p, TL_OP_COMMA)) { advance(p); continue; }
      if (!is_op(p, TL_OP_RBRACE)) return expected(p, "',' or '}'");
    }
    advance(p);
    e = mk(p, TL_AST_DICT, loc);
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
  case TL_OP_STAR:
  case TL_OP_POW:
    return error_at(p, loc, "star expressions are not supported");
  case TL_OP_ELLIPSIS:
    return error_at(p, loc, "'...' is not supported");
  default:
    return expected(p, "expression");
  }
}

/* Call arguments after the callee; cur is '('. */
static tl_ast_expr *parse_call(parser *p, tl_ast_expr *func, tl_loc start) {
  advance(p);
  size_t mark = p->ptrs.len, kmark = p->kws.len;
  dup_checker dc = {0};
  tl_ast_expr *e = NULL;
  while (!is_op(p, TL_OP_RPAR)) {
    const tl_token *t = cur(p);
    if (tok_is_op(t, TL_OP_STAR) || tok_is_op(t, TL_OP_POW)) {
      error_at(p, t->loc, "star arguments are not supported");
      goto done;
    }
    if (t->kind == TL_TOK_NAME && tok_is_op(peek(p, 1), TL_OP_ASSIGN)) {
      tl_ast_keyword kw = {t->text, t->loc, NULL};
      if (dup_seen(p, &dc, kw.name)) {
        error_at(p, kw.loc, "keyword argument repeated: %s", kw.name);
        goto done;
      }
      advance(p);
      advance(p);
      kw.value = parse_test(p);
      if (!kw.value) goto done;
      if (!tl_vec_push(&p->kws, kw)) { oom(p); goto done; }
    } else {
      if (p->kws.len > kmark) {
        error_at(p, t->loc, "positional argument follows keyword argument");
        goto done;
      }
      tl_loc aloc = t->loc;
      tl_ast_expr *a = parse_test(p);
      if (!a) goto done;
      if (is_kw(p, TL_KW_FOR)) {
        error_at(p, cur_loc(p), "generator expressions are not supported");
        goto done;
      }
      if (is_op(p, TL_OP_ASSIGN)) {
        error_at(p, aloc, "expression cannot contain assignment, perhaps you meant \"==\"?");
        goto done;
      }
      if (!push(p, a)) goto done;
    }
    if (is_op(p, TL_OP_COMMA)) { advance(p); continue; }
    if (!is_op(p, TL_OP_RPAR)) {
      expected(p, "',' or ')'");
      goto done;
    }
  }
  advance(p);
  e = mk(p, TL_AST_CALL, start);
  if (!e) goto done;
  e->u.call.func = func;
  e->u.call.args = (tl_ast_expr **)take(p, mark, &e->u.call.nargs);
  {
    size_t nk = p->kws.len - kmark;
    if (nk) {
      e->u.call.kw = tl_vec_to_arena_(p->a, p->kws.data + kmark, nk, sizeof(tl_ast_keyword));
      if (!e->u.call.kw) { oom(p); goto done; }
      e->u.call.nkw = (int)nk;
    }
    p->kws.len = kmark;
  }
done:
  dup_free(&dc);
  return p->failed ? NULL : e;
}

/* A subscript item: an expression or a slice lo:hi[:step]. */
static tl_ast_expr *parse_slice_item(parser *p) {
  tl_loc start = cur_loc(p);
  tl_ast_expr *lo = NULL;
  if (!is_op(p, TL_OP_COLON)) {
    lo = parse_test(p);
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
  advance(p);  /* [ */
  size_t mark = p->ptrs.len;
  for (;;) {
    tl_ast_expr *it = parse_slice_item(p);
    if (!it || !push(p, it)) return NULL;
    if (is_op(p, TL_OP_COMMA)) {
      advance(p);
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
  return p->failed ? NULL : e;
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

static tl_ast_expr *parse_power(parser *p) {
  tl_loc start = cur_loc(p);
  tl_ast_expr *base = parse_primary(p);
  if (!base || !is_op(p, TL_OP_POW)) return base;
  tl_loc oploc = cur_loc(p);
  const char *op = cur(p)->text;
  advance(p);
  if (!enter(p)) return NULL;
  tl_ast_expr *r = parse_factor(p);
  leave(p);
  if (!r) return NULL;
  tl_ast_expr *e = mk(p, TL_AST_BINOP, start);
  if (!e) return NULL;
  e->u.bin.op = op;
  e->u.bin.op_loc = oploc;
  e->u.bin.l = base;
  e->u.bin.r = r;
  return e;
}

static tl_ast_expr *parse_factor(parser *p) {
  const tl_token *t = cur(p);
  if (!(tok_is_op(t, TL_OP_MINUS) || tok_is_op(t, TL_OP_PLUS) || tok_is_op(t, TL_OP_TILDE)))
    return parse_power(p);
  tl_loc loc = t->loc;
  const char *op = t->text;
  if (t->sub == TL_OP_MINUS) {
    /* -9223372036854775808: the only way to write INT64_MIN */
    const tl_token *n = peek(p, 1);
    if (n->kind == TL_TOK_INT && n->int_2_63) {
      const tl_token *after = peek(p, 2);
      if (!tok_is_op(after, TL_OP_POW) && !tok_is_op(after, TL_OP_DOT) &&
          !tok_is_op(after, TL_OP_LPAR) && !tok_is_op(after, TL_OP_LSQB)) {
        advance(p);
        advance(p);
        tl_ast_expr *e = mk(p, TL_AST_INT, loc);
        if (e) e->u.ival = INT64_MIN;
        return e;
      }
    }
  }
  advance(p);
  if (!enter(p)) return NULL;
  tl_ast_expr *x = parse_factor(p);
  leave(p);
  if (!x) return NULL;
  tl_ast_expr *e = mk(p, TL_AST_UNARY, loc);
  if (!e) return NULL;
  e->u.un.op = op;
  e->u.un.x = x;
  return e;
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
    return t->sub == TL_OP_STAR || t->sub == TL_OP_SLASH || t->sub == TL_OP_DSLASH ||
           t->sub == TL_OP_PERCENT || t->sub == TL_OP_AT;
  }
}

static tl_ast_expr *parse_binary(parser *p, int level) {
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
    tl_ast_expr *e = mk(p, TL_AST_BINOP, start);
    if (!e) return NULL;
    e->u.bin.op = op;
    e->u.bin.op_loc = oploc;
    e->u.bin.l = l;
    e->u.bin.r = r;
    l = e;
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
    case TL_OP_LT: case TL_OP_GT: case TL_OP_LE: case TL_OP_GE: case TL_OP_EQ: case TL_OP_NE:
      return t->text;
    default:
      return NULL;
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
  tl_loc loc = cur_loc(p);
  advance(p);
  if (!enter(p)) return NULL;
  tl_ast_expr *x = parse_not(p);
  leave(p);
  if (!x) return NULL;
  tl_ast_expr *e = mk(p, TL_AST_UNARY, loc);
  if (!e) return NULL;
  e->u.un.op = intern(p, "not");
  e->u.un.x = x;
  return e->u.un.op ? e : NULL;
}

static tl_ast_expr *parse_boolop(parser *p, tl_kw kw) {
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
    tl_ast_expr *e = mk(p, TL_AST_BOOLOP, start);
    if (!e) return NULL;
    e->u.bin.op = op;
    e->u.bin.op_loc = oploc;
    e->u.bin.l = l;
    e->u.bin.r = r;
    l = e;
  }
  p->ast_depth = saved;
  return l;
}

/* test: or_test ['if' or_test 'else' test] */
static tl_ast_expr *parse_test(parser *p) {
  if (!enter(p)) return NULL;
  tl_loc start = cur_loc(p);
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

/* testlist: test (',' test)* [','] → a TUPLE when there is a comma. */
static tl_ast_expr *parse_testlist(parser *p) {
  tl_loc start = cur_loc(p);
  tl_ast_expr *first = parse_test(p);
  if (!first || !is_op(p, TL_OP_COMMA)) return first;
  size_t mark = p->ptrs.len;
  if (!push(p, first)) return NULL;
  while (is_op(p, TL_OP_COMMA)) {
    advance(p);
    if (!can_start_expr(cur(p))) break;
    tl_ast_expr *e = parse_test(p);
    if (!e || !push(p, e)) return NULL;
  }
  tl_ast_expr *t = mk(p, TL_AST_TUPLE, start);
  if (!t) return NULL;
  t->u.list.items = (tl_ast_expr **)take(p, mark, &t->u.list.n);
  return p->failed ? NULL : t;
}

/* A target list (for loops): targets at the '|' level so that 'in' ends
 * them; a comma gives a TUPLE. */
static tl_ast_expr *parse_target_list(parser *p) {
  tl_loc start = cur_loc(p);
  if (!enter(p)) return NULL;
  tl_ast_expr *first = parse_binary(p, 0);
  leave(p);
  if (!first || !is_op(p, TL_OP_COMMA)) return first;
  size_t mark = p->ptrs.len;
  if (!push(p, first)) return NULL;
  while (is_op(p, TL_OP_COMMA)) {
    advance(p);
    if (!can_start_expr(cur(p))) break;
    if (!enter(p)) return NULL;
    tl_ast_expr *e = parse_binary(p, 0);
    leave(p);
    if (!e || !push(p, e)) return NULL;
  }
  tl_ast_expr *t = mk(p, TL_AST_TUPLE, start);
  if (!t) return NULL;
  t->u.list.items = (tl_ast_expr **)take(p, mark, &t->u.list.n);
  return p->failed ? NULL : t;
}

/* Checks an assignment target: name, attribute, subscript, or a tuple /
 * list of targets.  (Tuple nesting is bounded by the parse depth limit.) */
static bool check_target(parser *p, const tl_ast_expr *e, bool allow_tuple) {
  switch (e->kind) {
  case TL_AST_NAME: case TL_AST_ATTR: case TL_AST_SUBSCRIPT:
    return true;
  case TL_AST_TUPLE: case TL_AST_LIST:
    if (!allow_tuple) break;
    for (int i = 0; i < e->u.list.n; i++)
      if (!check_target(p, e->u.list.items[i], true)) return false;
    return true;
  default:
    break;
  }
  const char *what = "expression";
  switch (e->kind) {
  case TL_AST_INT: case TL_AST_FLOAT: case TL_AST_STR: what = "literal"; break;
  case TL_AST_TRUE: what = "True"; break;
  case TL_AST_FALSE: what = "False"; break;
  case TL_AST_NONE: what = "None"; break;
  case TL_AST_CALL: what = "function call"; break;
  case TL_AST_TUPLE: what = "tuple"; break;
  case TL_AST_LIST: what = "list"; break;
  case TL_AST_DICT: what = "dict literal"; break;
  case TL_AST_COMPARE: what = "comparison"; break;
  case TL_AST_IFEXP: what = "conditional expression"; break;
  default: break;
  }
  if (!allow_tuple && (e->kind == TL_AST_TUPLE || e->kind == TL_AST_LIST))
    error_at(p, e->loc, "'%s' is an illegal target here", what);
  else
    error_at(p, e->loc, "cannot assign to %s", what);
  return false;
}

/* ------------------------------------------------------------ statements */

static bool parse_statement(parser *p);

static bool expect_colon(parser *p) {
  if (is_op(p, TL_OP_COLON)) {
    advance(p);
    return true;
  }
  error_at(p, prev_end(p), "expected ':'");
  return false;
}

/* A suite after ':' — an indented block, or simple statements on the same
 * line.  `what` names the header for messages ("'def' statement"). */
static bool parse_simple_stmts(parser *p);
static bool parse_block(parser *p, const char *what, int header_line, tl_ast_block *out) {
  size_t mark = p->ptrs.len;
  if (++p->block_depth > MAX_NEST) {
    error_at(p, cur_loc(p), "nesting too deep");
    return false;
  }
  if (is_kind(p, TL_TOK_NEWLINE)) {
    advance(p);
    if (!is_kind(p, TL_TOK_INDENT)) {
      error_at(p, cur_loc(p), "expected an indented block after %s on line %d", what,
               header_line);
      return false;
    }
    advance(p);
    while (!is_kind(p, TL_TOK_DEDENT) && !is_kind(p, TL_TOK_EOF)) {
      if (!parse_statement(p)) return false;
    }
    if (is_kind(p, TL_TOK_DEDENT)) advance(p);
  } else {
    if (!parse_simple_stmts(p)) return false;
  }
  p->block_depth--;
  out->stmts = (tl_ast_stmt **)take(p, mark, &out->n);
  return !p->failed;
}

static bool push_stmt(parser *p, tl_ast_stmt *s) { return s && push(p, s); }

/* dotted name: NAME ('.' NAME)* → interned "a.b.c" */
static const char *parse_dotted(parser *p) {
  if (!is_kind(p, TL_TOK_NAME)) {
    expected(p, "module name");
    return NULL;
  }
  if (!tok_is_op(peek(p, 1), TL_OP_DOT)) {
    const char *r = cur(p)->text;
    advance(p);
    return r;
  }
  tl_strbuf sb = {0};
  tl_strbuf_append(&sb, cur(p)->text);
  advance(p);
  while (is_op(p, TL_OP_DOT)) {
    advance(p);
    if (!is_kind(p, TL_TOK_NAME)) {
      tl_strbuf_free(&sb);
      expected(p, "name after '.'");
      return NULL;
    }
    tl_strbuf_append(&sb, ".");
    tl_strbuf_append(&sb, cur(p)->text);
    advance(p);
  }
  const char *r = sb.oom ? NULL : tl_intern_n(p->names, sb.data, sb.len);
  tl_strbuf_free(&sb);
  if (!r) oom(p);
  return r;
}

static bool parse_import(parser *p) {
  tl_loc loc = cur_loc(p);
  advance(p);  /* import */
  for (;;) {
    const char *mod = parse_dotted(p);
    if (!mod) return false;
    const char *alias = NULL;
    if (is_kw(p, TL_KW_AS)) {
      advance(p);
      if (!is_kind(p, TL_TOK_NAME)) { expected(p, "name after 'as'"); return false; }
      alias = cur(p)->text;
      advance(p);
    }
    tl_ast_stmt *s = mks(p, TL_AST_IMPORT, loc);
    if (!s) return false;
    s->u.import.module = mod;
    s->u.import.alias = alias;
    if (!push_stmt(p, s)) return false;
    if (!is_op(p, TL_OP_COMMA)) return true;
    advance(p);
  }
}

static bool parse_from(parser *p) {
  tl_loc loc = cur_loc(p);
  advance(p);  /* from */
  if (is_op(p, TL_OP_DOT) || is_op(p, TL_OP_ELLIPSIS)) {
    error_at(p, cur_loc(p), "relative imports are not supported");
    return false;
  }
  const char *mod = parse_dotted(p);
  if (!mod) return false;
  if (!is_kw(p, TL_KW_IMPORT)) { expected(p, "'import'"); return false; }
  advance(p);
  if (is_op(p, TL_OP_STAR)) {
    error_at(p, cur_loc(p), "'from ... import *' is not supported");
    return false;
  }
  bool paren = is_op(p, TL_OP_LPAR);
  if (paren) advance(p);
  for (;;) {
    if (!is_kind(p, TL_TOK_NAME)) { expected(p, "name to import"); return false; }
    const char *name = cur(p)->text, *alias = NULL;
    advance(p);
    if (is_kw(p, TL_KW_AS)) {
      advance(p);
      if (!is_kind(p, TL_TOK_NAME)) { expected(p, "name after 'as'"); return false; }
      alias = cur(p)->text;
      advance(p);
    }
    tl_ast_stmt *s = mks(p, TL_AST_IMPORT, loc);
    if (!s) return false;
    s->u.import.module = mod;
    s->u.import.name = name;
    s->u.import.alias = alias;
    if (!push_stmt(p, s)) return false;
    if (!is_op(p, TL_OP_COMMA)) break;
    advance(p);
    if (paren && is_op(p, TL_OP_RPAR)) break;
  }
  if (paren) {
    if (!is_op(p, TL_OP_RPAR)) { expected(p, "',' or ')'"); return false; }
    advance(p);
  }
  return true;
}

static const char *aug_binop(int op) {
  static const char *const names[] = {"+", "-", "*", "/", "//", "%", "**", "@",
                                      "&", "|", "^", "<<", ">>"};
  if (op < TL_OP_PLUS_EQ || op > TL_OP_RSHIFT_EQ) return NULL;
  return names[op - TL_OP_PLUS_EQ];
}

static bool parse_expr_stmt(parser *p) {
  tl_loc start = cur_loc(p);
  tl_ast_expr *e = parse_testlist(p);
  if (!e) return false;
  const tl_token *t = cur(p);
  if (tok_is_op(t, TL_OP_COLON)) {
    if (e->kind == TL_AST_TUPLE) {
      error_at(p, e->loc, "only single target (not tuple) can be annotated");
      return false;
    }
    if (e->kind != TL_AST_NAME && e->kind != TL_AST_ATTR && e->kind != TL_AST_SUBSCRIPT) {
      error_at(p, e->loc, "illegal target for annotation");
      return false;
    }
    advance(p);
    tl_ast_expr *ann = parse_test(p);
    if (!ann) return false;
    tl_ast_expr *v = NULL;
    if (is_op(p, TL_OP_ASSIGN)) {
      advance(p);
      v = parse_testlist(p);
      if (!v) return false;
    }
    tl_ast_stmt *s = mks(p, TL_AST_ANNASSIGN, start);
    if (!s) return false;
    s->u.ann.target = e;
    s->u.ann.annotation = ann;
    s->u.ann.value = v;
    return push_stmt(p, s);
  }
  if (t->kind == TL_TOK_OP && aug_binop(t->sub)) {
    if (e->kind != TL_AST_NAME && e->kind != TL_AST_ATTR && e->kind != TL_AST_SUBSCRIPT) {
      error_at(p, e->loc, "illegal expression for augmented assignment");
      return false;
    }
    const char *op = intern(p, aug_binop(t->sub));
    if (!op) return false;
    advance(p);
    tl_ast_expr *v = parse_testlist(p);
    if (!v) return false;
    tl_ast_stmt *s = mks(p, TL_AST_AUGASSIGN, start);
    if (!s) return false;
    s->u.aug.target = e;
    s->u.aug.op = op;
    s->u.aug.value = v;
    return push_stmt(p, s);
  }
  if (tok_is_op(t, TL_OP_ASSIGN)) {
    size_t mark = p->ptrs.len;
    if (!push(p, e)) return false;
    while (is_op(p, TL_OP_ASSIGN)) {
      advance(p);
      tl_ast_expr *v = parse_testlist(p);
      if (!v || !push(p, v)) return false;
    }
    tl_ast_expr *value = tl_vec_pop(&p->ptrs);
    for (size_t i = mark; i < p->ptrs.len; i++)
      if (!check_target(p, p->ptrs.data[i], true)) return false;
    tl_ast_stmt *s = mks(p, TL_AST_ASSIGN, start);
    if (!s) return false;
    s->u.assign.value = value;
    s->u.assign.targets = (tl_ast_expr **)take(p, mark, &s->u.assign.ntargets);
    return !p->failed && push_stmt(p, s);
  }
  tl_ast_stmt *s = mks(p, TL_AST_EXPR_STMT, start);
  if (!s) return false;
  s->u.expr = e;
  return push_stmt(p, s);
}

static bool parse_simple_stmt(parser *p) {
  const tl_token *t = cur(p);
  if (t->kind == TL_TOK_KEYWORD) {
    switch (t->sub) {
    case TL_KW_PASS: case TL_KW_BREAK: case TL_KW_CONTINUE: {
      tl_ast_stmt *s = mks(p, t->sub == TL_KW_PASS ? TL_AST_PASS
                              : t->sub == TL_KW_BREAK ? TL_AST_BREAK : TL_AST_CONTINUE,
                           t->loc);
      advance(p);
      return push_stmt(p, s);
    }
    case TL_KW_RETURN: {
      tl_ast_stmt *s = mks(p, TL_AST_RETURN, t->loc);
      if (!s) return false;
      advance(p);
      if (can_start_expr(cur(p))) {
        s->u.ret = parse_testlist(p);
        if (!s->u.ret) return false;
      }
      return push_stmt(p, s);
    }
    case TL_KW_IMPORT: return parse_import(p);
    case TL_KW_FROM: return parse_from(p);
    default:
      if (is_unsupported_kw(t)) {
        unsupported_kw(p);
        return false;
      }
      if (!can_start_expr(t)) {
        error_at(p, t->loc, "invalid syntax: unexpected %s", describe(p, t));
        return false;
      }
      break;
    }
  }
  return parse_expr_stmt(p);
}

/* simple_stmt (';' simple_stmt)* [';'] NEWLINE */
static bool parse_simple_stmts(parser *p) {
  for (;;) {
    if (!parse_simple_stmt(p)) return false;
    if (!is_op(p, TL_OP_SEMI)) break;
    advance(p);
    if (is_kind(p, TL_TOK_NEWLINE)) break;
  }
  if (!is_kind(p, TL_TOK_NEWLINE)) {
    if (is_op(p, TL_OP_ASSIGN))
      error_at(p, cur_loc(p), "invalid syntax: unexpected '='");
    else
      error_at(p, cur_loc(p), "invalid syntax: unexpected %s", describe(p, cur(p)));
    return false;
  }
  advance(p);
  return true;
}

static bool parse_if(parser *p, const char *what) {
  tl_loc loc = cur_loc(p);
  advance(p);  /* if / elif */
  tl_ast_expr *test = parse_test(p);
  if (!test || !expect_colon(p)) return false;
  tl_ast_stmt *s = mks(p, TL_AST_IF, loc);
  if (!s) return false;
  s->u.ifs.test = test;
  if (!parse_block(p, what, loc.line, &s->u.ifs.body)) return false;
  if (is_kw(p, TL_KW_ELIF)) {
    size_t mark = p->ptrs.len;
    if (++p->block_depth > MAX_NEST) {
      error_at(p, cur_loc(p), "nesting too deep");
      return false;
    }
    if (!parse_if(p, "'elif' statement")) return false;
    p->block_depth--;
    s->u.ifs.orelse.stmts = (tl_ast_stmt **)take(p, mark, &s->u.ifs.orelse.n);
    if (p->failed) return false;
  } else if (is_kw(p, TL_KW_ELSE)) {
    int line = cur_loc(p).line;
    advance(p);
    if (!expect_colon(p)) return false;
    if (!parse_block(p, "'else' statement", line, &s->u.ifs.orelse)) return false;
  }
  return push_stmt(p, s);
}

static bool parse_for(parser *p) {
  tl_loc loc = cur_loc(p);
  advance(p);
  tl_ast_expr *target = parse_target_list(p);
  if (!target || !check_target(p, target, true)) return false;
  if (!is_kw(p, TL_KW_IN)) { expected(p, "'in'"); return false; }
  advance(p);
  tl_ast_expr *iter = parse_testlist(p);
  if (!iter || !expect_colon(p)) return false;
  tl_ast_stmt *s = mks(p, TL_AST_FOR, loc);
  if (!s) return false;
  s->u.loop.target = target;
  s->u.loop.iter = iter;
  if (!parse_block(p, "'for' statement", loc.line, &s->u.loop.body)) return false;
  if (is_kw(p, TL_KW_ELSE)) {
    error_at(p, cur_loc(p), "'else' after a 'for' loop (for-else) is not supported");
    return false;
  }
  return push_stmt(p, s);
}

static bool parse_while(parser *p) {
  tl_loc loc = cur_loc(p);
  advance(p);
  tl_ast_expr *test = parse_test(p);
  if (!test || !expect_colon(p)) return false;
  tl_ast_stmt *s = mks(p, TL_AST_WHILE, loc);
  if (!s) return false;
  s->u.whiles.test = test;
  if (!parse_block(p, "'while' statement", loc.line, &s->u.whiles.body)) return false;
  if (is_kw(p, TL_KW_ELSE)) {
    error_at(p, cur_loc(p), "'else' after a 'while' loop (while-else) is not supported");
    return false;
  }
  return push_stmt(p, s);
}

static bool parse_with(parser *p) {
  tl_loc loc = cur_loc(p);
  advance(p);
  tl_ast_expr *ctx = parse_test(p);
  if (!ctx) return false;
  tl_ast_expr *target = NULL;
  if (is_kw(p, TL_KW_AS)) {
    advance(p);
    if (!enter(p)) return false;
    target = parse_binary(p, 0);
    leave(p);
    if (!target || !check_target(p, target, true)) return false;
  }
  if (is_op(p, TL_OP_COMMA)) {
    error_at(p, cur_loc(p), "several context managers in one 'with' statement are not supported");
    return false;
  }
  if (!expect_colon(p)) return false;
  tl_ast_stmt *s = mks(p, TL_AST_WITH, loc);
  if (!s) return false;
  s->u.with.ctx = ctx;
  s->u.with.target = target;
  if (!parse_block(p, "'with' statement", loc.line, &s->u.with.body)) return false;
  return push_stmt(p, s);
}

static bool parse_params(parser *p) {
  bool seen_default = false;
  dup_checker dc = {0};
  bool ok = false;
  while (!is_op(p, TL_OP_RPAR)) {
    const tl_token *t = cur(p);
    if (tok_is_op(t, TL_OP_STAR)) {
      if (peek(p, 1)->kind == TL_TOK_NAME)
        error_at(p, t->loc, "'*args' parameters are not supported");
      else
        error_at(p, t->loc, "keyword-only parameters ('*') are not supported");
      goto done;
    }
    if (tok_is_op(t, TL_OP_POW)) {
      error_at(p, t->loc, "'**kwargs' parameters are not supported");
      goto done;
    }
    if (tok_is_op(t, TL_OP_SLASH)) {
      error_at(p, t->loc, "positional-only parameters ('/') are not supported");
      goto done;
    }
    if (t->kind != TL_TOK_NAME) {
      expected(p, "parameter name");
      goto done;
    }
    tl_ast_param prm = {t->text, t->loc, NULL, NULL};
    if (dup_seen(p, &dc, prm.name)) {
      error_at(p, prm.loc, "duplicate argument '%s' in function definition", prm.name);
      goto done;
    }
    advance(p);
    if (is_op(p, TL_OP_COLON)) {
      advance(p);
      prm.annotation = parse_test(p);
      if (!prm.annotation) goto done;
    }
    if (is_op(p, TL_OP_ASSIGN)) {
      advance(p);
      prm.default_value = parse_test(p);
      if (!prm.default_value) goto done;
      seen_default = true;
    } else if (seen_default) {
      error_at(p, prm.loc, "parameter without a default follows parameter with a default");
      goto done;
    }
    if (!tl_vec_push(&p->params, prm)) { oom(p); goto done; }
    if (is_op(p, TL_OP_COMMA)) { advance(p); continue; }
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

/* def NAME(params) [-> ann]: block; decorators are ptrs[dmark..]. */
static bool parse_def(parser *p, size_t dmark) {
  tl_loc loc = cur_loc(p);
  advance(p);  /* def */
  if (!is_kind(p, TL_TOK_NAME)) { expected(p, "function name"); return false; }
  tl_ast_stmt *s = mks(p, TL_AST_DEF, loc);
  if (!s) return false;
  s->u.def.name = cur(p)->text;
  s->u.def.name_loc = cur_loc(p);
  advance(p);
  if (!is_op(p, TL_OP_LPAR)) { expected(p, "'('"); return false; }
  advance(p);
  size_t pmark = p->params.len;
  if (!parse_params(p)) return false;
  size_t np = p->params.len - pmark;
  if (np) {
    s->u.def.params = tl_vec_to_arena_(p->a, p->params.data + pmark, np, sizeof(tl_ast_param));
    if (!s->u.def.params) { oom(p); return false; }
    s->u.def.nparams = (int)np;
  }
  p->params.len = pmark;
  if (is_op(p, TL_OP_ARROW)) {
    advance(p);
    s->u.def.returns = parse_test(p);
    if (!s->u.def.returns) return false;
  }
  if (!expect_colon(p)) return false;
  if (!parse_block(p, "'def' statement", loc.line, &s->u.def.body)) return false;
  s->u.def.decorators = (tl_ast_expr **)take(p, dmark, &s->u.def.ndecorators);
  return !p->failed && push_stmt(p, s);
}

static bool parse_statement(parser *p) {
  const tl_token *t = cur(p);
  if (t->kind == TL_TOK_INDENT) {
    error_at(p, t->loc, "unexpected indent");
    return false;
  }
  if (tok_is_op(t, TL_OP_AT)) {
    size_t dmark = p->ptrs.len;
    while (is_op(p, TL_OP_AT)) {
      advance(p);
      tl_ast_expr *e = parse_test(p);
      if (!e || !push(p, e)) return false;
      if (!is_kind(p, TL_TOK_NEWLINE)) {
        error_at(p, cur_loc(p), "invalid syntax: unexpected %s after decorator",
                 describe(p, cur(p)));
        return false;
      }
      advance(p);
    }
    if (is_kw(p, TL_KW_CLASS)) { unsupported_kw(p); return false; }
    if (!is_kw(p, TL_KW_DEF)) { expected(p, "'def' after decorator"); return false; }
    return parse_def(p, dmark);
  }
  if (t->kind == TL_TOK_KEYWORD) {
    switch (t->sub) {
    case TL_KW_DEF: return parse_def(p, p->ptrs.len);
    case TL_KW_IF: return parse_if(p, "'if' statement");
    case TL_KW_FOR: return parse_for(p);
    case TL_KW_WHILE: return parse_while(p);
    case TL_KW_WITH: return parse_with(p);
    case TL_KW_ELSE: case TL_KW_ELIF:
      error_at(p, t->loc, "invalid syntax: '%s' without a matching 'if'",
               tl_kw_spelling(t->sub));
      return false;
    default: break;
    }
  }
  return parse_simple_stmts(p);
}

bool tl_parse_python(tl_arena *a, tl_intern *names, tl_diag *d, const char *source,
                     size_t len, const char *filename, tl_ast_module *out) {
  parser p;
  memset(&p, 0, sizeof p);
  p.a = a;
  p.names = names;
  p.d = d;
  p.file = filename;
  tl_lexer_init(&p.lx, source, len, filename, a, names);
  if (out) memset(out, 0, sizeof *out);
  size_t mark = 0;
  while (!p.failed && !is_kind(&p, TL_TOK_EOF)) {
    if (!parse_statement(&p)) break;
  }
  if (!p.failed && out) out->body.stmts = (tl_ast_stmt **)take(&p, mark, &out->body.n);
  if (!p.failed && a->oom) oom(&p);
  bool ok = !p.failed;
  tl_lexer_free(&p.lx);
  tl_vec_free(&p.ptrs);
  tl_vec_free(&p.kws);
  tl_vec_free(&p.params);
  tl_vec_free(&p.locs);
  return ok;
}
