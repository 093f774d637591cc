/* Parser of f-string bodies (PEP 498, as in Python 3.11): splits the body of
 * an f-string token into literal text and replacement fields
 * {expression[=][!conversion][:format_spec]} and builds CPython's
 * JoinedStr / FormattedValue structure (ast.h: FSTRING, FORMATTED).
 *
 * Algorithm: one left-to-right scan over the token's source bytes, tracking
 * line and column.  Literal text is decoded (escapes, '{{' and '}}') into
 * the caller's pending text, which becomes a STR part when a field starts.
 * A field's expression ends at the first '}', ':', '!' or '=' outside
 * brackets and strings that is not part of an operator (==, !=, <=, >=);
 * it is parsed by a nested parser whose lexer runs over those source bytes
 * (so locations are exact and newlines are joined as inside brackets).  A
 * format spec is itself an f-string body ending at the field's '}', parsed
 * recursively (bounded by the parser's nesting limit).  Linear time. */
#include <stdlib.h>
#include <string.h>

#include "Frontend/parser_impl.h"

typedef struct fscan {
  parser *p;
  const char *src;
  size_t pos, end;
  int line;
  size_t line_start;
  bool raw;
  tl_loc tok_loc;
} fscan;

static tl_loc fs_loc(const fscan *f, size_t pos) {
  size_t col = pos - f->line_start + 1;
  return (tl_loc){f->tok_loc.file, f->line, col > (size_t)INT32_MAX ? INT32_MAX : (int)col};
}

static void fs_newline(fscan *f, size_t nl_pos) {
  f->line++;
  f->line_start = nl_pos + 1;
}

/* Moves the pending text into a STR part on ptrs. */
static bool flush_text(parser *p, tl_strbuf *text, tl_loc loc) {
  if (!text->len) return true;
  if (text->oom) return oom(p), false;
  tl_ast_expr *c = mk(p, TL_AST_STR, loc);
  if (!c) return false;
  c->u.str = tl_arena_strndup(p->a, text->data, text->len);
  if (!c->u.str) return oom(p), false;
  c->slen = text->len;
  text->len = 0;
  return push(p, c);
}

/* The end of a field's expression starting at f->pos (not moved). */
static size_t expr_end(fscan *f) {
  int depth = 0;
  size_t i = f->pos;
  while (i < f->end) {
    char c = f->src[i];
    char n = i + 1 < f->end ? f->src[i + 1] : 0;
    if (c == '\'' || c == '"') {
      size_t j = i + 1;
      while (j < f->end && f->src[j] != c) j++;
      i = j + 1;
      continue;
    }
    if (c == '(' || c == '[' || c == '{') depth++;
    else if ((c == ')' || c == ']') && depth > 0) depth--;
    else if (c == '}' && depth > 0) depth--;
    else if (depth == 0) {
      if (c == '}' || c == ':') return i;
      if ((c == '!' || c == '=' || c == '<' || c == '>') && n == '=') {
        i += 2;
        continue;
      }
      if (c == '!' || c == '=') return i;
    }
    i++;
  }
  return f->end;
}

/* Parses src[start, end) as the expression of a field with a nested parser. */
static tl_ast_expr *parse_field_expr(fscan *f, size_t start, size_t end) {
  parser *p = f->p;
  size_t k = start;
  while (k < end && (f->src[k] == ' ' || f->src[k] == '\t' || f->src[k] == '\n')) k++;
  if (k == end) return error_at(p, fs_loc(f, start), "f-string: empty expression not allowed");
  parser q;
  memset(&q, 0, sizeof q);
  q.a = p->a;
  q.names = p->names;
  q.d = p->d;
  q.file = f->tok_loc.file;
  q.depth = p->depth;
  q.ast_depth = p->ast_depth;
  tl_lexer_init_nested(&q.lx, f->src, start, end, f->line, f->line_start, f->tok_loc.file, p->a, p->names);
  tl_ast_expr *e = is_kw(&q, TL_KW_YIELD) ? parse_yield(&q) : parse_testlist(&q);
  if (e && !is_kind(&q, TL_TOK_EOF)) e = expected(&q, "'}'");
  if (q.failed) p->failed = true;
  tl_lexer_free(&q.lx);
  tl_vec_free(&q.ptrs);
  tl_vec_free(&q.kws);
  tl_vec_free(&q.params);
  tl_vec_free(&q.locs);
  return p->failed ? NULL : e;
}

static bool fs_body(fscan *f, tl_strbuf *text, bool in_spec);

/* A replacement field; f->pos is just after its '{'. */
static tl_ast_expr *fs_field(fscan *f, tl_strbuf *text, tl_loc loc) {
  parser *p = f->p;
  size_t start = f->pos, e_end = expr_end(f);
  /* lines inside the expression: the nested lexer counts them; we follow */
  tl_ast_expr *value = parse_field_expr(f, start, e_end);
  if (!value) return NULL;
  for (size_t i = start; i < e_end; i++)
    if (f->src[i] == '\n') fs_newline(f, i);
  f->pos = e_end;
  int conversion = -1;
  bool debug = false;
  if (f->pos < f->end && f->src[f->pos] == '=') {
    debug = true;
    f->pos++;
    while (f->pos < f->end && (f->src[f->pos] == ' ' || f->src[f->pos] == '\t')) f->pos++;
    tl_strbuf_appendn(text, f->src + start, f->pos - start);
  }
  if (f->pos < f->end && f->src[f->pos] == '!') {
    char c = f->pos + 1 < f->end ? f->src[f->pos + 1] : 0;
    if (c != 's' && c != 'r' && c != 'a')
      return error_at(p, fs_loc(f, f->pos), "f-string: invalid conversion character: expected 's', 'r', or 'a'");
    conversion = c;
    f->pos += 2;
  }
  tl_ast_expr *spec = NULL;
  if (f->pos < f->end && f->src[f->pos] == ':') {
    tl_loc sloc = fs_loc(f, f->pos);
    f->pos++;
    size_t mark = p->ptrs.len;
    tl_strbuf stext = {0};
    if (!enter(p)) return NULL;
    bool ok = fs_body(f, &stext, true) && flush_text(p, &stext, sloc);
    leave(p);
    tl_strbuf_free(&stext);
    if (!ok) return NULL;
    spec = mk(p, TL_AST_FSTRING, sloc);
    if (!spec) return NULL;
    spec->u.list.items = (tl_ast_expr **)take(p, mark, &spec->u.list.n);
  }
  if (f->pos >= f->end || f->src[f->pos] != '}')
    return error_at(p, fs_loc(f, f->pos < f->end ? f->pos : f->end), "f-string: expecting '}'");
  f->pos++;
  if (debug && conversion < 0 && !spec) conversion = 'r';
  tl_ast_expr *fv = mk(p, TL_AST_FORMATTED, loc);
  if (!fv) return NULL;
  fv->u.fmt.value = value;
  fv->u.fmt.conversion = conversion;
  fv->u.fmt.spec = spec;
  return fv;
}

/* Literal text and fields up to f->end (or, in a format spec, to its
 * closing '}', not consumed); parts go to ptrs, pending text to *text. */
static bool fs_body(fscan *f, tl_strbuf *text, bool in_spec) {
  parser *p = f->p;
  while (f->pos < f->end && !p->failed) {
    char c = f->src[f->pos];
    if (c == '{') {
      if (!in_spec && f->pos + 1 < f->end && f->src[f->pos + 1] == '{') {
        tl_strbuf_append(text, "{");
        f->pos += 2;
        continue;
      }
      /* the text before the field (and a debug field's 'expr=') is one part */
      tl_loc loc = fs_loc(f, f->pos);
      f->pos++;
      tl_ast_expr *fv = fs_field(f, text, loc);
      if (!fv || !flush_text(p, text, f->tok_loc) || !push(p, fv)) return false;
      continue;
    }
    if (c == '}') {
      if (in_spec) return true;
      if (f->pos + 1 < f->end && f->src[f->pos + 1] == '}') {
        tl_strbuf_append(text, "}");
        f->pos += 2;
        continue;
      }
      error_at(p, fs_loc(f, f->pos), "f-string: single '}' is not allowed");
      return false;
    }
    if (c == '\n') fs_newline(f, f->pos);
    if (c == '\\' && !f->raw && f->pos + 1 < f->end) {
      char e = f->src[f->pos + 1];
      if (e == '\n') {
        fs_newline(f, f->pos + 1);
        f->pos += 2;
        continue;
      }
      char buf[8];
      size_t k = 0, at = f->pos;
      const char *msg = tl_lex_decode_escape(f->src, &f->pos, f->end, false, buf, &k);
      if (msg) {
        error_at(p, fs_loc(f, at), msg, e);
        return false;
      }
      tl_strbuf_appendn(text, buf, k);
      continue;
    }
    if (c == '\r' && f->pos + 1 < f->end && f->src[f->pos + 1] == '\n') {
      f->pos++;
      continue;
    }
    tl_strbuf_appendn(text, &c, 1);
    f->pos++;
  }
  if (in_spec && !p->failed) {
    error_at(p, fs_loc(f, f->end), "f-string: expecting '}'");
    return false;
  }
  return !p->failed;
}

bool parse_fstring_part(parser *p, tl_strbuf *text, size_t mark) {
  (void)mark;
  const tl_token *t = cur(p);
  fscan f = {p, p->lx.src, t->body_start, t->body_end, t->body_line, t->body_line_start, t->fstr_raw, t->loc};
  /* the body begins after the prefix and quotes on the token's line */
  advance(p);
  return fs_body(&f, text, false);
}
