/* Parser of Python 3 source (TileLang files), statements: simple and
 * compound statements, blocks, and the entry point tl_parse_python.
 * Expressions are parsed by parser.c (see its algorithm note), f-strings by
 * parser_fstring.c, match statements by parser_match.c.
 *
 * Algorithm: recursive descent over the statement grammar; a block is an
 * indented suite (NEWLINE INDENT stmt+ DEDENT) or simple statements on the
 * header's line.  Statements are collected on the parser's pointer stack
 * and copied into the arena when their block ends.  Block nesting (and elif
 * chains) are bounded at 200 levels.  Every statement of Python 3.11
 * parses; the elaborator rejects what a kernel cannot use. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "Frontend/parser_impl.h"

static bool parse_statement(parser *p);

bool expect_colon(parser *p) {
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
bool parse_block(parser *p, const char *what, int header_line, tl_ast_block *out) {
  size_t mark = p->ptrs.len;
  if (++p->block_depth > MAX_NEST) {
    error_at(p, cur_loc(p), "nesting too deep");
    return false;
  }
  if (is_kind(p, TL_TOK_NEWLINE)) {
    advance(p);
    if (!is_kind(p, TL_TOK_INDENT)) {
      error_at(p, cur_loc(p), "expected an indented block after %s on line %d", what, header_line);
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

bool push_stmt(parser *p, tl_ast_stmt *s) { return s && push(p, s); }

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

/* One import statement per imported name; cont marks the ones after the
 * first of a statement. */
static bool push_import(parser *p, tl_loc loc, const char *mod, const char *name, const char *alias, int level,
                        bool cont) {
  tl_ast_stmt *s = mks(p, TL_AST_IMPORT, loc);
  if (!s) return false;
  s->u.import.module = mod;
  s->u.import.name = name;
  s->u.import.alias = alias;
  s->u.import.level = level;
  s->u.import.cont = cont;
  return push_stmt(p, s);
}

/* ['as' NAME] → the name, or NULL (and *ok false on error) */
static const char *parse_as_name(parser *p, bool *ok) {
  *ok = true;
  if (!is_kw(p, TL_KW_AS)) return NULL;
  advance(p);
  if (!is_kind(p, TL_TOK_NAME)) {
    expected(p, "name after 'as'");
    *ok = false;
    return NULL;
  }
  const char *r = cur(p)->text;
  advance(p);
  return r;
}

static bool parse_import(parser *p) {
  tl_loc loc = cur_loc(p);
  advance(p); /* import */
  for (bool cont = false;; cont = true) {
    const char *mod = parse_dotted(p);
    if (!mod) return false;
    bool ok;
    const char *alias = parse_as_name(p, &ok);
    if (!ok || !push_import(p, loc, mod, NULL, alias, 0, cont)) return false;
    if (!is_op(p, TL_OP_COMMA)) return true;
    advance(p);
  }
}

static bool parse_from(parser *p) {
  tl_loc loc = cur_loc(p);
  advance(p); /* from */
  int level = 0;
  while (is_op(p, TL_OP_DOT) || is_op(p, TL_OP_ELLIPSIS)) {
    level += is_op(p, TL_OP_DOT) ? 1 : 3;
    advance(p);
  }
  const char *mod = NULL;
  if (!level || !is_kw(p, TL_KW_IMPORT)) {
    mod = parse_dotted(p);
    if (!mod) return false;
  }
  if (!is_kw(p, TL_KW_IMPORT)) {
    expected(p, "'import'");
    return false;
  }
  advance(p);
  if (is_op(p, TL_OP_STAR)) {
    advance(p);
    return push_import(p, loc, mod, intern(p, "*"), NULL, level, false);
  }
  bool paren = is_op(p, TL_OP_LPAR);
  if (paren) advance(p);
  for (bool cont = false;; cont = true) {
    if (!is_kind(p, TL_TOK_NAME)) {
      expected(p, "name to import");
      return false;
    }
    const char *name = cur(p)->text;
    advance(p);
    bool ok;
    const char *alias = parse_as_name(p, &ok);
    if (!ok || !push_import(p, loc, mod, name, alias, level, cont)) return false;
    if (!is_op(p, TL_OP_COMMA)) break;
    advance(p);
    if (paren && is_op(p, TL_OP_RPAR)) break;
  }
  if (paren) {
    if (!is_op(p, TL_OP_RPAR)) {
      expected(p, "',' or ')'");
      return false;
    }
    advance(p);
  }
  return true;
}

static const char *aug_binop(int op) {
  static const char *const names[] = {"+", "-", "*", "/", "//", "%", "**", "@", "&", "|", "^", "<<", ">>"};
  if (op < TL_OP_PLUS_EQ || op > TL_OP_RSHIFT_EQ) return NULL;
  return names[op - TL_OP_PLUS_EQ];
}

/* The right-hand side of an assignment: a yield expression or star_expressions. */
static tl_ast_expr *parse_rhs(parser *p) { return is_kw(p, TL_KW_YIELD) ? parse_yield(p) : parse_testlist(p); }

/* The value after an assignment operator (=, +=, ...) at the current token. */
static tl_ast_expr *parse_assigned(parser *p) {
  advance(p);
  return parse_rhs(p);
}

/* A target that an annotation or augmented assignment may have: one name,
 * attribute or subscript. */
static bool is_single_target(const tl_ast_expr *e) {
  return e->kind == TL_AST_NAME || e->kind == TL_AST_ATTR || e->kind == TL_AST_SUBSCRIPT;
}

static bool parse_annassign(parser *p, tl_loc start, tl_ast_expr *e) {
  if (e->kind == TL_AST_TUPLE && !(e->flags & TL_AST_F_PARENS)) {
    error_at(p, e->loc, "only single target (not tuple) can be annotated");
    return false;
  }
  if (!is_single_target(e)) {
    error_at(p, e->loc, "illegal target for annotation");
    return false;
  }
  advance(p);
  tl_ast_expr *ann = parse_test(p);
  if (!ann) return false;
  tl_ast_expr *v = NULL;
  if (is_op(p, TL_OP_ASSIGN) && !(v = parse_assigned(p))) return false;
  tl_ast_stmt *s = mks(p, TL_AST_ANNASSIGN, start);
  if (!s) return false;
  s->u.ann.target = e;
  s->u.ann.annotation = ann;
  s->u.ann.value = v;
  return push_stmt(p, s);
}

static bool parse_expr_stmt(parser *p) {
  tl_loc start = cur_loc(p);
  tl_ast_expr *e = parse_rhs(p);
  if (!e) return false;
  const tl_token *t = cur(p);
  if (tok_is_op(t, TL_OP_COLON)) return parse_annassign(p, start, e);
  if (t->kind == TL_TOK_OP && aug_binop(t->sub)) {
    if (!is_single_target(e)) {
      error_at(p, e->loc, "illegal expression for augmented assignment");
      return false;
    }
    const char *op = intern(p, aug_binop(t->sub));
    if (!op) return false;
    tl_ast_expr *v = parse_assigned(p);
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
      tl_ast_expr *v = parse_assigned(p);
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

/* global / nonlocal NAME (',' NAME)* */
static bool parse_names_stmt(parser *p, tl_ast_stmt_kind kind) {
  tl_ast_stmt *s = mks(p, kind, cur_loc(p));
  if (!s) return false;
  advance(p);
  size_t mark = p->ptrs.len;
  for (;;) {
    if (!is_kind(p, TL_TOK_NAME)) {
      expected(p, "name");
      return false;
    }
    if (!push(p, (void *)cur(p)->text)) return false;
    advance(p);
    if (!is_op(p, TL_OP_COMMA)) break;
    advance(p);
  }
  s->u.names.names = (const char **)take(p, mark, &s->u.names.n);
  return !p->failed && push_stmt(p, s);
}

/* del targets; assert test[, msg]; raise [exc [from cause]] */
static bool parse_del_assert_raise(parser *p, tl_kw kw) {
  tl_ast_stmt *s = mks(p,
                       kw == TL_KW_DEL      ? TL_AST_DELETE
                       : kw == TL_KW_ASSERT ? TL_AST_ASSERT
                                            : TL_AST_RAISE,
                       cur_loc(p));
  if (!s) return false;
  advance(p);
  if (kw == TL_KW_DEL) {
    tl_ast_expr *t = parse_target_list(p);
    if (!t || !check_target(p, t, true)) return false;
    if (t->kind == TL_AST_TUPLE && !(t->flags & TL_AST_F_PARENS)) {
      s->u.del.n = t->u.list.n;
      s->u.del.targets = t->u.list.items;
    } else {
      s->u.del.n = 1;
      s->u.del.targets = tl_arena_alloc(p->a, sizeof(tl_ast_expr *));
      if (!s->u.del.targets) return oom(p), false;
      s->u.del.targets[0] = t;
    }
  } else if (kw == TL_KW_ASSERT) {
    if (!(s->u.assert_.test = parse_test(p))) return false;
    if (is_op(p, TL_OP_COMMA)) {
      advance(p);
      if (!(s->u.assert_.msg = parse_test(p))) return false;
    }
  } else if (can_start_expr(cur(p))) {
    if (!(s->u.raise.exc = parse_test(p))) return false;
    if (is_kw(p, TL_KW_FROM)) {
      advance(p);
      if (!(s->u.raise.cause = parse_test(p))) return false;
    }
  }
  return push_stmt(p, s);
}

static bool parse_simple_stmt(parser *p) {
  const tl_token *t = cur(p);
  if (t->kind == TL_TOK_KEYWORD) {
    switch (t->sub) {
    case TL_KW_PASS:
    case TL_KW_BREAK:
    case TL_KW_CONTINUE: {
      tl_ast_stmt *s = mks(p,
                           t->sub == TL_KW_PASS    ? TL_AST_PASS
                           : t->sub == TL_KW_BREAK ? TL_AST_BREAK
                                                   : TL_AST_CONTINUE,
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
    case TL_KW_GLOBAL: return parse_names_stmt(p, TL_AST_GLOBAL);
    case TL_KW_NONLOCAL: return parse_names_stmt(p, TL_AST_NONLOCAL);
    case TL_KW_DEL:
    case TL_KW_ASSERT:
    case TL_KW_RAISE: return parse_del_assert_raise(p, (tl_kw)t->sub);
    default:
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
    if (is_op(p, TL_OP_ASSIGN)) error_at(p, cur_loc(p), "invalid syntax: unexpected '='");
    else error_at(p, cur_loc(p), "invalid syntax: unexpected %s", describe(p, cur(p)));
    return false;
  }
  advance(p);
  return true;
}

/* ['else' ':' block] after a loop or try */
static bool parse_else(parser *p, tl_ast_block *out) {
  if (!is_kw(p, TL_KW_ELSE)) return true;
  int line = cur_loc(p).line;
  advance(p);
  return expect_colon(p) && parse_block(p, "'else' statement", line, out);
}

static bool parse_if(parser *p, const char *what) {
  tl_loc loc = cur_loc(p);
  advance(p); /* if / elif */
  tl_ast_expr *test = parse_namedexpr(p);
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

static bool parse_for(parser *p, tl_loc loc, bool is_async) {
  advance(p); /* for */
  tl_ast_expr *target = parse_target_list(p);
  if (!target || !check_target(p, target, true)) return false;
  if (!is_kw(p, TL_KW_IN)) {
    expected(p, "'in'");
    return false;
  }
  advance(p);
  tl_ast_expr *iter = parse_testlist(p);
  if (!iter || !expect_colon(p)) return false;
  tl_ast_stmt *s = mks(p, TL_AST_FOR, loc);
  if (!s) return false;
  s->u.loop.target = target;
  s->u.loop.iter = iter;
  s->u.loop.is_async = is_async;
  if (!parse_block(p, "'for' statement", loc.line, &s->u.loop.body)) return false;
  if (!parse_else(p, &s->u.loop.orelse)) return false;
  return push_stmt(p, s);
}

static bool parse_while(parser *p) {
  tl_loc loc = cur_loc(p);
  advance(p);
  tl_ast_expr *test = parse_namedexpr(p);
  if (!test || !expect_colon(p)) return false;
  tl_ast_stmt *s = mks(p, TL_AST_WHILE, loc);
  if (!s) return false;
  s->u.whiles.test = test;
  if (!parse_block(p, "'while' statement", loc.line, &s->u.whiles.body)) return false;
  if (!parse_else(p, &s->u.whiles.orelse)) return false;
  return push_stmt(p, s);
}

/* with a [as b], ... : / with (a [as b], ...): */
static bool parse_with(parser *p, tl_loc loc, bool is_async) {
  advance(p); /* with */
  size_t mark = p->ptrs.len;
  p->with_header = is_op(p, TL_OP_LPAR);
  p->nwith_items = 0;
  tl_ast_expr *first = parse_test(p);
  p->with_header = false;
  if (!first) return false;
  tl_ast_withitem *items = NULL;
  int n = 0;
  if (first->flags & TL_AST_F_WITHITEMS) {
    items = p->with_items;
    n = p->nwith_items;
  } else {
    tl_ast_expr *target = NULL;
    for (;;) {
      if (is_kw(p, TL_KW_AS)) {
        advance(p);
        target = parse_target(p);
        if (!target || !check_target(p, target, true)) return false;
      }
      if (!push(p, first) || !push(p, target)) return false;
      if (!is_op(p, TL_OP_COMMA)) break;
      advance(p);
      target = NULL;
      if (!(first = parse_test(p))) return false;
    }
    n = (int)((p->ptrs.len - mark) / 2);
    items = tl_arena_alloc(p->a, sizeof(tl_ast_withitem) * (size_t)n);
    if (!items) return oom(p), false;
    for (int i = 0; i < n; i++) {
      items[i].ctx = p->ptrs.data[mark + 2 * (size_t)i];
      items[i].target = p->ptrs.data[mark + 2 * (size_t)i + 1];
    }
    p->ptrs.len = mark;
  }
  if (!expect_colon(p)) return false;
  tl_ast_stmt *s = mks(p, TL_AST_WITH, loc);
  if (!s) return false;
  s->u.with.items = items;
  s->u.with.nitems = n;
  s->u.with.ctx = items[0].ctx;
  s->u.with.target = items[0].target;
  s->u.with.is_async = is_async;
  if (!parse_block(p, "'with' statement", loc.line, &s->u.with.body)) return false;
  return push_stmt(p, s);
}

/* try: block (except [*] [type [as name]]: block)* [else: block] [finally: block] */
static bool parse_try(parser *p) {
  tl_loc loc = cur_loc(p);
  advance(p);
  tl_ast_stmt *s = mks(p, TL_AST_TRY, loc);
  if (!s || !expect_colon(p) || !parse_block(p, "'try' statement", loc.line, &s->u.try_.body)) return false;
  TL_VEC(tl_ast_handler) hs = {0};
  bool ok = false;
  while (is_kw(p, TL_KW_EXCEPT)) {
    tl_ast_handler h = {0};
    h.loc = cur_loc(p);
    advance(p);
    if (is_op(p, TL_OP_STAR)) {
      s->u.try_.star = true;
      advance(p);
    }
    if (!is_op(p, TL_OP_COLON)) {
      h.type = parse_testlist(p);
      if (!h.type) goto done;
      if (is_kw(p, TL_KW_AS)) {
        advance(p);
        if (!is_kind(p, TL_TOK_NAME)) {
          expected(p, "name after 'as'");
          goto done;
        }
        h.name = cur(p)->text;
        advance(p);
      }
    }
    if (!expect_colon(p) || !parse_block(p, "'except' statement", h.loc.line, &h.body)) goto done;
    if (!tl_vec_push(&hs, h)) {
      oom(p);
      goto done;
    }
  }
  if (hs.len) {
    s->u.try_.handlers = tl_vec_to_arena_(p->a, hs.data, hs.len, sizeof(tl_ast_handler));
    if (!s->u.try_.handlers) {
      oom(p);
      goto done;
    }
    s->u.try_.nhandlers = (int)hs.len;
  }
  if (!parse_else(p, &s->u.try_.orelse)) goto done;
  if (is_kw(p, TL_KW_FINALLY)) {
    int line = cur_loc(p).line;
    advance(p);
    if (!expect_colon(p) || !parse_block(p, "'finally' statement", line, &s->u.try_.finalbody)) goto done;
  }
  if (!hs.len && !s->u.try_.finalbody.n) {
    expected(p, "'except' or 'finally' block");
    goto done;
  }
  ok = push_stmt(p, s);
done:
  tl_vec_free(&hs);
  return ok;
}

/* def NAME(params) [-> ann]: block; decorators are ptrs[dmark..]. */
static bool parse_def(parser *p, size_t dmark, tl_loc loc, bool is_async) {
  advance(p); /* def */
  if (!is_kind(p, TL_TOK_NAME)) {
    expected(p, "function name");
    return false;
  }
  tl_ast_stmt *s = mks(p, TL_AST_DEF, loc);
  if (!s) return false;
  s->u.def.name = cur(p)->text;
  s->u.def.name_loc = cur_loc(p);
  s->u.def.is_async = is_async;
  advance(p);
  if (!is_op(p, TL_OP_LPAR)) {
    expected(p, "'('");
    return false;
  }
  advance(p);
  size_t pmark = p->params.len;
  if (!parse_params(p, TL_OP_RPAR, true)) return false;
  advance(p); /* ) */
  size_t np = p->params.len - pmark;
  if (np) {
    s->u.def.params = tl_vec_to_arena_(p->a, p->params.data + pmark, np, sizeof(tl_ast_param));
    if (!s->u.def.params) {
      oom(p);
      return false;
    }
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

/* class NAME ['(' arguments ')']: block; decorators are ptrs[dmark..]. */
static bool parse_class(parser *p, size_t dmark) {
  tl_loc loc = cur_loc(p);
  advance(p); /* class */
  if (!is_kind(p, TL_TOK_NAME)) {
    expected(p, "class name");
    return false;
  }
  tl_ast_stmt *s = mks(p, TL_AST_CLASS, loc);
  if (!s) return false;
  s->u.cls.name = cur(p)->text;
  s->u.cls.name_loc = cur_loc(p);
  advance(p);
  if (is_op(p, TL_OP_LPAR)) {
    size_t mark = p->ptrs.len, kmark = p->kws.len;
    if (!parse_call_args(p)) return false;
    s->u.cls.bases = (tl_ast_expr **)take(p, mark, &s->u.cls.nbases);
    size_t nk = p->kws.len - kmark;
    if (nk) {
      s->u.cls.kw = tl_vec_to_arena_(p->a, p->kws.data + kmark, nk, sizeof(tl_ast_keyword));
      if (!s->u.cls.kw) return oom(p), false;
      s->u.cls.nkw = (int)nk;
    }
    p->kws.len = kmark;
  }
  if (!expect_colon(p)) return false;
  if (!parse_block(p, "class definition", loc.line, &s->u.cls.body)) return false;
  s->u.cls.decorators = (tl_ast_expr **)take(p, dmark, &s->u.cls.ndecorators);
  return !p->failed && push_stmt(p, s);
}

static bool parse_decorated(parser *p) {
  size_t dmark = p->ptrs.len;
  while (is_op(p, TL_OP_AT)) {
    advance(p);
    tl_ast_expr *e = parse_namedexpr(p);
    if (!e || !push(p, e)) return false;
    if (!is_kind(p, TL_TOK_NEWLINE)) {
      error_at(p, cur_loc(p), "invalid syntax: unexpected %s after decorator", describe(p, cur(p)));
      return false;
    }
    advance(p);
  }
  if (is_kw(p, TL_KW_CLASS)) return parse_class(p, dmark);
  tl_loc loc = cur_loc(p);
  if (is_kw(p, TL_KW_ASYNC) && tok_is_kw(peek(p, 1), TL_KW_DEF)) {
    advance(p);
    return parse_def(p, dmark, loc, true);
  }
  if (!is_kw(p, TL_KW_DEF)) {
    expected(p, "'def' or 'class' after decorator");
    return false;
  }
  return parse_def(p, dmark, loc, false);
}

/* 'match' is a soft keyword: a match statement when the next token can
 * only begin its subject (a name, literal, '{' ...); 'match(...)',
 * 'match[...]' and 'match - x' stay expressions. */
static bool at_match_stmt(parser *p) {
  const tl_token *t = cur(p);
  if (t->kind != TL_TOK_NAME || strcmp(t->text, "match") != 0) return false;
  const tl_token *n = peek(p, 1);
  switch (n->kind) {
  case TL_TOK_NAME:
  case TL_TOK_INT:
  case TL_TOK_FLOAT:
  case TL_TOK_STRING: return true;
  case TL_TOK_KEYWORD:
    return n->sub == TL_KW_NONE || n->sub == TL_KW_TRUE || n->sub == TL_KW_FALSE || n->sub == TL_KW_LAMBDA ||
           n->sub == TL_KW_AWAIT;
  case TL_TOK_OP: return n->sub == TL_OP_LBRACE || n->sub == TL_OP_ELLIPSIS;
  default: return false;
  }
}

static bool parse_statement(parser *p) {
  const tl_token *t = cur(p);
  if (t->kind == TL_TOK_INDENT) {
    error_at(p, t->loc, "unexpected indent");
    return false;
  }
  if (tok_is_op(t, TL_OP_AT)) return parse_decorated(p);
  if (at_match_stmt(p)) return parse_match(p);
  if (t->kind == TL_TOK_KEYWORD) {
    tl_loc loc = t->loc;
    switch (t->sub) {
    case TL_KW_DEF: return parse_def(p, p->ptrs.len, loc, false);
    case TL_KW_CLASS: return parse_class(p, p->ptrs.len);
    case TL_KW_IF: return parse_if(p, "'if' statement");
    case TL_KW_FOR: return parse_for(p, loc, false);
    case TL_KW_WHILE: return parse_while(p);
    case TL_KW_WITH: return parse_with(p, loc, false);
    case TL_KW_TRY: return parse_try(p);
    case TL_KW_ASYNC: {
      const tl_token *n = peek(p, 1);
      advance(p);
      if (tok_is_kw(n, TL_KW_DEF)) return parse_def(p, p->ptrs.len, loc, true);
      if (tok_is_kw(cur(p), TL_KW_FOR)) return parse_for(p, loc, true);
      if (tok_is_kw(cur(p), TL_KW_WITH)) return parse_with(p, loc, true);
      expected(p, "'def', 'for' or 'with' after 'async'");
      return false;
    }
    case TL_KW_ELSE:
    case TL_KW_ELIF:
    case TL_KW_EXCEPT:
    case TL_KW_FINALLY:
      error_at(p, t->loc, "invalid syntax: '%s' without a matching '%s'", tl_kw_spelling(t->sub),
               t->sub == TL_KW_EXCEPT || t->sub == TL_KW_FINALLY ? "try" : "if");
      return false;
    default: break;
    }
  }
  return parse_simple_stmts(p);
}

bool tl_parse_python(tl_arena *a, tl_intern *names, tl_diag *d, const char *source, size_t len, const char *filename,
                     tl_ast_module *out) {
  parser p = {.a = a, .names = names, .d = d, .file = filename};
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
