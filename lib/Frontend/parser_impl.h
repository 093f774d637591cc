/* Internals of the Python parser shared by its files (internal to lib/Frontend):
 * parser.c (tokens, errors, node helpers, expressions), parser_stmt.c
 * (statements and the entry point tl_parse_python), parser_fstring.c
 * (f-string bodies) and parser_match.c (match statements and patterns).
 * The parser state, the lookahead helpers (inline) and the functions each
 * file exports to the others (tl_pp_ names behind short macros). */
#ifndef TL_PARSER_IMPL_H
#define TL_PARSER_IMPL_H

#include <stdarg.h>

#include "Frontend/ast.h"
#include "Frontend/lexer.h"

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
  /* 'with (' ...: the next parenthesised atom may hold with-items
   * (a as b, c); when it does and ':' follows, parse_paren returns a TUPLE
   * flagged TL_AST_F_WITHITEMS and leaves the items here. */
  bool with_header;
  int nwith_items;
  tl_ast_withitem *with_items;
} parser;

/* ------------------------------------------------------------ tokens */

static inline void fill(parser *p, int k) {
  while (p->nla <= k) tl_lexer_next(&p->lx, &p->la[p->nla++]);
}
static inline const tl_token *cur(parser *p) {
  fill(p, 0);
  return &p->la[0];
}
static inline const tl_token *peek(parser *p, int k) {
  fill(p, k);
  return &p->la[k];
}
static inline void advance(parser *p) {
  fill(p, 0);
  p->prev = p->la[0];
  for (int i = 1; i < p->nla; i++) p->la[i - 1] = p->la[i];
  p->nla--;
}
static inline tl_loc cur_loc(parser *p) { return cur(p)->loc; }
static inline tl_loc prev_end(parser *p) { return (tl_loc){p->file, p->prev.end_line, p->prev.end_col}; }
static inline bool tok_is_op(const tl_token *t, tl_op op) { return t->kind == TL_TOK_OP && t->sub == (int)op; }
static inline bool tok_is_kw(const tl_token *t, tl_kw kw) { return t->kind == TL_TOK_KEYWORD && t->sub == (int)kw; }
static inline bool is_op(parser *p, tl_op op) { return tok_is_op(cur(p), op); }
static inline bool is_kw(parser *p, tl_kw kw) { return tok_is_kw(cur(p), kw); }
static inline bool is_kind(parser *p, tl_tok_kind k) { return cur(p)->kind == k; }

/* ------------------------------------------------------------ shared helpers (parser.c) */

#define describe(...) tl_pp_describe(__VA_ARGS__)
#define error_at(...) tl_pp_error_at(__VA_ARGS__)
#define expected(...) tl_pp_expected(__VA_ARGS__)
#define oom(...) tl_pp_oom(__VA_ARGS__)
#define enter(...) tl_pp_enter(__VA_ARGS__)
#define leave(...) tl_pp_leave(__VA_ARGS__)
#define mk(...) tl_pp_mk(__VA_ARGS__)
#define mks(...) tl_pp_mks(__VA_ARGS__)
#define intern(...) tl_pp_intern(__VA_ARGS__)
#define push(...) tl_pp_push(__VA_ARGS__)
#define take(...) tl_pp_take(__VA_ARGS__)
#define can_start_expr(...) tl_pp_can_start_expr(__VA_ARGS__)
#define parse_test(...) tl_pp_parse_test(__VA_ARGS__)
#define parse_namedexpr(...) tl_pp_parse_namedexpr(__VA_ARGS__)
#define parse_star_named(...) tl_pp_parse_star_named(__VA_ARGS__)
#define parse_testlist(...) tl_pp_parse_testlist(__VA_ARGS__)
#define parse_binary(...) tl_pp_parse_binary(__VA_ARGS__)
#define parse_boolop(...) tl_pp_parse_boolop(__VA_ARGS__)
#define parse_target_list(...) tl_pp_parse_target_list(__VA_ARGS__)
#define parse_target(...) tl_pp_parse_target(__VA_ARGS__)
#define parse_yield(...) tl_pp_parse_yield(__VA_ARGS__)
#define parse_params(...) tl_pp_parse_params(__VA_ARGS__)
#define parse_call_args(...) tl_pp_parse_call_args(__VA_ARGS__)
#define check_target(...) tl_pp_check_target(__VA_ARGS__)
#define parse_fstring_part(...) tl_pp_parse_fstring_part(__VA_ARGS__)
#define parse_match(...) tl_pp_parse_match(__VA_ARGS__)
#define parse_block(...) tl_pp_parse_block(__VA_ARGS__)
#define expect_colon(...) tl_pp_expect_colon(__VA_ARGS__)
#define push_stmt(...) tl_pp_push_stmt(__VA_ARGS__)

/* Describes a token for messages ("')'", "end of line", ...), in the arena. */
const char *describe(parser *p, const tl_token *t);
/* Reports the (single) syntax error of this parse; returns NULL. */
void *error_at(parser *p, tl_loc loc, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
/* "expected X, got Y" at the current token; returns NULL. */
void *expected(parser *p, const char *what);
void *oom(parser *p);
/* Recursion guards ("nesting too deep"). */
bool enter(parser *p);
void leave(parser *p);
tl_ast_expr *mk(parser *p, tl_ast_expr_kind k, tl_loc loc);
tl_ast_stmt *mks(parser *p, tl_ast_stmt_kind k, tl_loc loc);
const char *intern(parser *p, const char *s);
/* The pointer scratch stack: push, and take ptrs[mark..] into the arena. */
bool push(parser *p, void *x);
void **take(parser *p, size_t mark, int *n);
bool can_start_expr(const tl_token *t);

/* Expressions (Python's grammar names in comments). */
tl_ast_expr *parse_test(parser *p);              /* expression (incl. lambda) */
tl_ast_expr *parse_namedexpr(parser *p);         /* named_expression: test [':=' test] */
tl_ast_expr *parse_star_named(parser *p);        /* '*' bitwise_or | named_expression */
tl_ast_expr *parse_testlist(parser *p);          /* star_expressions: a TUPLE when there is a comma */
tl_ast_expr *parse_binary(parser *p, int level); /* level 0: bitwise_or */
tl_ast_expr *parse_boolop(parser *p, tl_kw kw);  /* TL_KW_OR: disjunction */
tl_ast_expr *parse_target_list(parser *p);       /* star_targets (for, comprehensions, del) */
tl_ast_expr *parse_target(parser *p);            /* one star_target */
tl_ast_expr *parse_yield(parser *p);             /* yield [from] expr; cur is 'yield' */
/* Parameters up to `close` (')' for def, ':' for lambda; not consumed),
 * pushed on p->params; annotations only when `annotations`. */
bool parse_params(parser *p, tl_op close, bool annotations);
/* Call arguments after '(' up to and including ')': positional ones
 * pushed on ptrs from pmark, keywords on kws. */
bool parse_call_args(parser *p);
/* Checks an assignment target (del targets when del). */
bool check_target(parser *p, const tl_ast_expr *e, bool allow_tuple);

/* parser_fstring.c: the parts of an f-string token (cur is the token; it
 * is consumed), appended to the strbuf of pending literal text / the ptrs
 * stack of finished parts. */
bool parse_fstring_part(parser *p, tl_strbuf *text, size_t mark);

/* parser_match.c: a match statement; cur is the soft keyword 'match'. */
bool parse_match(parser *p);

/* parser_stmt.c */
bool parse_block(parser *p, const char *what, int header_line, tl_ast_block *out);
bool expect_colon(parser *p);
bool push_stmt(parser *p, tl_ast_stmt *s);

#endif
