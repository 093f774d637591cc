/* Parser of match statements (PEP 634, Python 3.10+): the subject, the
 * case blocks and their patterns (ast.h: tl_ast_pattern), with guards.
 *
 * Algorithm: recursive descent over the pattern grammar: patterns → an
 * open sequence (a comma) or one pattern; pattern → or_pattern ['as' NAME];
 * or_pattern → closed patterns separated by '|'; a closed pattern is
 * chosen by its first token: a literal (numbers, signed numbers and
 * complex sums, strings; None/True/False are singletons), a name (capture,
 * '_' wildcard, a dotted value, or a class pattern when '(' follows), a
 * group or sequence in ( ) or [ ], a mapping in { }.  Nesting is bounded by
 * the parser's recursion guard. */
#include <stdlib.h>
#include <string.h>

#include "Frontend/parser_impl.h"

static tl_ast_pattern *parse_pattern(parser *p);

static tl_ast_pattern *mkp(parser *p, tl_ast_pattern_kind k, tl_loc loc) {
  tl_ast_pattern *r = tl_arena_alloc(p->a, sizeof *r);
  if (!r) return oom(p);
  r->kind = k;
  r->loc = loc;
  return r;
}

static bool is_name(const tl_token *t, const char *s) { return t->kind == TL_TOK_NAME && !strcmp(t->text, s); }

/* *NAME or *_ in a sequence */
static tl_ast_pattern *parse_star_pattern(parser *p) {
  tl_ast_pattern *r = mkp(p, TL_PAT_STAR, cur_loc(p));
  advance(p);
  if (!r) return NULL;
  if (!is_kind(p, TL_TOK_NAME)) return expected(p, "name after '*' in a pattern");
  if (!is_name(cur(p), "_")) r->name = cur(p)->text;
  advance(p);
  return r;
}

/* Sequence items up to `close` (consumed) into r->items; *comma reports a
 * comma seen. */
static bool parse_pattern_items(parser *p, tl_ast_pattern *r, tl_op close, bool *comma) {
  size_t mark = p->ptrs.len;
  while (!is_op(p, close)) {
    tl_ast_pattern *it = is_op(p, TL_OP_STAR) ? parse_star_pattern(p) : parse_pattern(p);
    if (!it || !push(p, it)) return false;
    if (!is_op(p, TL_OP_COMMA)) break;
    *comma = true;
    advance(p);
  }
  if (!is_op(p, close)) return expected(p, close == TL_OP_RPAR ? "')'" : "']'"), false;
  advance(p);
  r->items = (tl_ast_pattern **)take(p, mark, &r->n);
  return !p->failed;
}

/* { key: pattern, ..., **rest } */
static tl_ast_pattern *parse_mapping_pattern(parser *p, tl_loc loc) {
  tl_ast_pattern *r = mkp(p, TL_PAT_MAPPING, loc);
  if (!r) return NULL;
  advance(p);
  size_t mark = p->ptrs.len;
  while (!is_op(p, TL_OP_RBRACE)) {
    if (is_op(p, TL_OP_POW)) {
      advance(p);
      if (!is_kind(p, TL_TOK_NAME)) return expected(p, "name after '**'");
      r->name = cur(p)->text;
      advance(p);
    } else {
      if (!enter(p)) return NULL;
      tl_ast_expr *k = parse_binary(p, 4);
      leave(p);
      if (!k) return NULL;
      if (!is_op(p, TL_OP_COLON)) return expected(p, "':'");
      advance(p);
      tl_ast_pattern *v = parse_pattern(p);
      if (!v || !push(p, k) || !push(p, v)) return NULL;
    }
    if (!is_op(p, TL_OP_COMMA)) break;
    advance(p);
  }
  if (!is_op(p, TL_OP_RBRACE)) return expected(p, "'}'");
  advance(p);
  int n2;
  void **kv = take(p, mark, &n2);
  if (p->failed) return NULL;
  r->n = n2 / 2;
  if (r->n) {
    r->keys = tl_arena_alloc(p->a, sizeof(tl_ast_expr *) * (size_t)r->n);
    r->items = tl_arena_alloc(p->a, sizeof(tl_ast_pattern *) * (size_t)r->n);
    if (!r->keys || !r->items) return oom(p);
    for (int i = 0; i < r->n; i++) {
      r->keys[i] = kv[2 * i];
      r->items[i] = kv[2 * i + 1];
    }
  }
  return r;
}

/* cls(patterns..., name=pattern...) after the class expression */
static tl_ast_pattern *parse_class_pattern(parser *p, tl_ast_expr *cls) {
  tl_ast_pattern *r = mkp(p, TL_PAT_CLASS, cls->loc);
  if (!r) return NULL;
  r->value = cls;
  advance(p); /* ( */
  size_t mark = p->ptrs.len;
  TL_VEC(void *) kws = {0};
  while (!is_op(p, TL_OP_RPAR)) {
    if (is_kind(p, TL_TOK_NAME) && tok_is_op(peek(p, 1), TL_OP_ASSIGN)) {
      const char *name = cur(p)->text;
      advance(p);
      advance(p);
      tl_ast_pattern *v = parse_pattern(p);
      if (!v || !tl_vec_push(&kws, (void *)name) || !tl_vec_push(&kws, v)) break;
    } else {
      tl_ast_pattern *v = parse_pattern(p);
      if (!v || !push(p, v)) break;
    }
    if (!is_op(p, TL_OP_COMMA)) break;
    advance(p);
  }
  if (!p->failed && !is_op(p, TL_OP_RPAR)) expected(p, "')'");
  if (!p->failed) advance(p);
  r->items = (tl_ast_pattern **)take(p, mark, &r->n);
  r->nkw = (int)(kws.len / 2);
  if (r->nkw && !p->failed) {
    r->kw_names = tl_arena_alloc(p->a, sizeof(const char *) * (size_t)r->nkw);
    r->kw_items = tl_arena_alloc(p->a, sizeof(tl_ast_pattern *) * (size_t)r->nkw);
    if (!r->kw_names || !r->kw_items) oom(p);
    for (int i = 0; !p->failed && i < r->nkw; i++) {
      r->kw_names[i] = kws.data[2 * i];
      r->kw_items[i] = kws.data[2 * i + 1];
    }
  }
  tl_vec_free(&kws);
  return p->failed ? NULL : r;
}

/* A name: capture, wildcard, dotted value, or class pattern. */
static tl_ast_pattern *parse_name_pattern(parser *p, tl_loc loc) {
  tl_ast_expr *e = mk(p, TL_AST_NAME, loc);
  if (!e) return NULL;
  e->u.name = cur(p)->text;
  advance(p);
  bool dotted = false;
  while (is_op(p, TL_OP_DOT)) {
    advance(p);
    if (!is_kind(p, TL_TOK_NAME)) return expected(p, "attribute name");
    tl_ast_expr *a = mk(p, TL_AST_ATTR, loc);
    if (!a) return NULL;
    a->u.attr.value = e;
    a->u.attr.name = cur(p)->text;
    a->u.attr.name_loc = cur_loc(p);
    advance(p);
    e = a;
    dotted = true;
  }
  if (is_op(p, TL_OP_LPAR)) return parse_class_pattern(p, e);
  if (dotted) {
    tl_ast_pattern *r = mkp(p, TL_PAT_VALUE, loc);
    if (r) r->value = e;
    return r;
  }
  tl_ast_pattern *r = mkp(p, TL_PAT_AS, loc);
  if (r && strcmp(e->u.name, "_") != 0) r->name = e->u.name;
  return r;
}

static tl_ast_pattern *parse_closed_pattern(parser *p) {
  const tl_token *t = cur(p);
  tl_loc loc = t->loc;
  if (t->kind == TL_TOK_NAME) return parse_name_pattern(p, loc);
  if (tok_is_kw(t, TL_KW_NONE) || tok_is_kw(t, TL_KW_TRUE) || tok_is_kw(t, TL_KW_FALSE)) {
    tl_ast_pattern *r = mkp(p, TL_PAT_SINGLETON, loc);
    if (!r) return NULL;
    r->value = mk(p,
                  tok_is_kw(t, TL_KW_NONE)   ? TL_AST_NONE
                  : tok_is_kw(t, TL_KW_TRUE) ? TL_AST_TRUE
                                             : TL_AST_FALSE,
                  loc);
    advance(p);
    return r->value ? r : NULL;
  }
  if (tok_is_op(t, TL_OP_LPAR) || tok_is_op(t, TL_OP_LSQB)) {
    bool paren = tok_is_op(t, TL_OP_LPAR), comma = false;
    advance(p);
    tl_ast_pattern *r = mkp(p, TL_PAT_SEQUENCE, loc);
    if (!r || !parse_pattern_items(p, r, paren ? TL_OP_RPAR : TL_OP_RSQB, &comma)) return NULL;
    if (paren && r->n == 1 && !comma && r->items[0]->kind != TL_PAT_STAR) return r->items[0];
    return r;
  }
  if (tok_is_op(t, TL_OP_LBRACE)) return parse_mapping_pattern(p, loc);
  /* literals: numbers (signed, complex sums) and strings */
  tl_ast_pattern *r = mkp(p, TL_PAT_VALUE, loc);
  if (!r) return NULL;
  r->value = parse_binary(p, 4);
  return r->value ? r : NULL;
}

/* or_pattern ['as' NAME] */
static tl_ast_pattern *parse_pattern(parser *p) {
  if (!enter(p)) return NULL;
  tl_loc loc = cur_loc(p);
  size_t mark = p->ptrs.len;
  tl_ast_pattern *r = NULL;
  for (;;) {
    tl_ast_pattern *c = parse_closed_pattern(p);
    if (!c || !push(p, c)) goto done;
    if (!is_op(p, TL_OP_PIPE)) break;
    advance(p);
  }
  if (p->ptrs.len - mark == 1) {
    r = p->ptrs.data[mark];
    p->ptrs.len = mark;
  } else {
    r = mkp(p, TL_PAT_OR, loc);
    if (!r) goto done;
    r->items = (tl_ast_pattern **)take(p, mark, &r->n);
  }
  if (is_kw(p, TL_KW_AS)) {
    advance(p);
    if (!is_kind(p, TL_TOK_NAME)) {
      r = expected(p, "name after 'as'");
      goto done;
    }
    tl_ast_pattern *a = mkp(p, TL_PAT_AS, loc);
    if (!a) {
      r = NULL;
      goto done;
    }
    a->sub = r;
    if (strcmp(cur(p)->text, "_") != 0) a->name = cur(p)->text;
    advance(p);
    r = a;
  }
done:
  leave(p);
  return p->failed ? NULL : r;
}

/* patterns: an open sequence (with a comma) or one pattern */
static tl_ast_pattern *parse_patterns(parser *p) {
  tl_loc loc = cur_loc(p);
  tl_ast_pattern *first = is_op(p, TL_OP_STAR) ? parse_star_pattern(p) : parse_pattern(p);
  if (!first) return NULL;
  if (!is_op(p, TL_OP_COMMA) && first->kind != TL_PAT_STAR) return first;
  size_t mark = p->ptrs.len;
  if (!push(p, first)) return NULL;
  while (is_op(p, TL_OP_COMMA)) {
    advance(p);
    if (is_op(p, TL_OP_COLON) || is_kw(p, TL_KW_IF)) break;
    tl_ast_pattern *it = is_op(p, TL_OP_STAR) ? parse_star_pattern(p) : parse_pattern(p);
    if (!it || !push(p, it)) return NULL;
  }
  tl_ast_pattern *r = mkp(p, TL_PAT_SEQUENCE, loc);
  if (!r) return NULL;
  r->items = (tl_ast_pattern **)take(p, mark, &r->n);
  return p->failed ? NULL : r;
}

bool parse_match(parser *p) {
  tl_loc loc = cur_loc(p);
  advance(p); /* match */
  tl_ast_expr *subject = parse_testlist(p);
  if (!subject || !expect_colon(p)) return false;
  if (!is_kind(p, TL_TOK_NEWLINE)) {
    expected(p, "newline after 'match ...:'");
    return false;
  }
  advance(p);
  if (!is_kind(p, TL_TOK_INDENT)) {
    error_at(p, cur_loc(p), "expected an indented block after 'match' statement on line %d", loc.line);
    return false;
  }
  advance(p);
  TL_VEC(tl_ast_match_case) cases = {0};
  bool ok = false;
  while (!is_kind(p, TL_TOK_DEDENT) && !is_kind(p, TL_TOK_EOF)) {
    if (!is_name(cur(p), "case")) {
      expected(p, "'case'");
      goto done;
    }
    int line = cur_loc(p).line;
    advance(p);
    tl_ast_match_case c = {0};
    if (!(c.pattern = parse_patterns(p))) goto done;
    if (is_kw(p, TL_KW_IF)) {
      advance(p);
      if (!(c.guard = parse_namedexpr(p))) goto done;
    }
    if (!expect_colon(p) || !parse_block(p, "'case' statement", line, &c.body)) goto done;
    if (!tl_vec_push(&cases, c)) {
      oom(p);
      goto done;
    }
  }
  if (is_kind(p, TL_TOK_DEDENT)) advance(p);
  tl_ast_stmt *s = mks(p, TL_AST_MATCH, loc);
  if (!s) goto done;
  s->u.match.subject = subject;
  s->u.match.ncases = (int)cases.len;
  s->u.match.cases = tl_vec_to_arena_(p->a, cases.data, cases.len, sizeof(tl_ast_match_case));
  if (cases.len && !s->u.match.cases) {
    oom(p);
    goto done;
  }
  ok = push_stmt(p, s);
done:
  tl_vec_free(&cases);
  return ok;
}
