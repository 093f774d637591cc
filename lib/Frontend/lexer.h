/* Tokenizer of Python 3 source (internal; used by the parser, parser*.c).
 * Produces one token per call (lazily, so that a syntax error earlier in the
 * file is reported before a lexical error later in it), including the
 * layout tokens NEWLINE, INDENT and DEDENT.  A lexical error is not reported
 * to a diagnostics engine: the lexer records its message and location and
 * returns TL_TOK_ERROR tokens from then on; the parser reports it when it
 * meets the token (one error per parse). */
#ifndef TL_LEXER_H
#define TL_LEXER_H

#include "Support/support.h"

typedef enum tl_tok_kind {
  TL_TOK_EOF,
  TL_TOK_NEWLINE,
  TL_TOK_INDENT,
  TL_TOK_DEDENT,
  TL_TOK_NAME,    /* .text interned */
  TL_TOK_KEYWORD, /* .sub = tl_kw, .text interned */
  TL_TOK_INT,     /* .ival (.int_2_63: the literal is exactly 2**63, only valid after '-') */
  TL_TOK_FLOAT,   /* .fval */
  TL_TOK_STRING,  /* .str / .str_len (decoded, in the arena, NUL-terminated) */
  TL_TOK_OP,      /* .sub = tl_op, .text interned spelling */
  TL_TOK_ERROR    /* the lexer failed: see tl_lexer.err_msg / err_loc */
} tl_tok_kind;

/* Keywords of Python 3 ('match', 'case', '_' and 'type' are soft keywords: NAME tokens). */
typedef enum tl_kw {
  TL_KW_FALSE,
  TL_KW_NONE,
  TL_KW_TRUE,
  TL_KW_AND,
  TL_KW_AS,
  TL_KW_ASSERT,
  TL_KW_ASYNC,
  TL_KW_AWAIT,
  TL_KW_BREAK,
  TL_KW_CLASS,
  TL_KW_CONTINUE,
  TL_KW_DEF,
  TL_KW_DEL,
  TL_KW_ELIF,
  TL_KW_ELSE,
  TL_KW_EXCEPT,
  TL_KW_FINALLY,
  TL_KW_FOR,
  TL_KW_FROM,
  TL_KW_GLOBAL,
  TL_KW_IF,
  TL_KW_IMPORT,
  TL_KW_IN,
  TL_KW_IS,
  TL_KW_LAMBDA,
  TL_KW_NONLOCAL,
  TL_KW_NOT,
  TL_KW_OR,
  TL_KW_PASS,
  TL_KW_RAISE,
  TL_KW_RETURN,
  TL_KW_TRY,
  TL_KW_WHILE,
  TL_KW_WITH,
  TL_KW_YIELD,
  TL_KW_COUNT_
} tl_kw;

/* Operators and delimiters. */
typedef enum tl_op {
  TL_OP_LPAR,
  TL_OP_RPAR,
  TL_OP_LSQB,
  TL_OP_RSQB,
  TL_OP_LBRACE,
  TL_OP_RBRACE,
  TL_OP_COLON,
  TL_OP_COMMA,
  TL_OP_SEMI,
  TL_OP_DOT,
  TL_OP_ELLIPSIS,
  TL_OP_ARROW,
  TL_OP_WALRUS,
  TL_OP_ASSIGN,
  TL_OP_PLUS,
  TL_OP_MINUS,
  TL_OP_STAR,
  TL_OP_SLASH,
  TL_OP_DSLASH,
  TL_OP_PERCENT,
  TL_OP_POW,
  TL_OP_AT,
  TL_OP_AMP,
  TL_OP_PIPE,
  TL_OP_CARET,
  TL_OP_TILDE,
  TL_OP_LSHIFT,
  TL_OP_RSHIFT,
  TL_OP_LT,
  TL_OP_GT,
  TL_OP_LE,
  TL_OP_GE,
  TL_OP_EQ,
  TL_OP_NE,
  /* augmented assignments, in the order of their binary operators above */
  TL_OP_PLUS_EQ,
  TL_OP_MINUS_EQ,
  TL_OP_STAR_EQ,
  TL_OP_SLASH_EQ,
  TL_OP_DSLASH_EQ,
  TL_OP_PERCENT_EQ,
  TL_OP_POW_EQ,
  TL_OP_AT_EQ,
  TL_OP_AMP_EQ,
  TL_OP_PIPE_EQ,
  TL_OP_CARET_EQ,
  TL_OP_LSHIFT_EQ,
  TL_OP_RSHIFT_EQ,
  TL_OP_COUNT_
} tl_op;

typedef struct tl_token {
  tl_tok_kind kind;
  int sub;               /* tl_kw or tl_op */
  tl_loc loc;            /* first byte */
  int end_line, end_col; /* just past the last byte */
  size_t start, len;     /* source bytes */
  const char *text;      /* NAME, KEYWORD, OP: interned spelling (NULL on OOM) */
  int64_t ival;
  bool int_2_63;
  double fval;
  const char *str;
  size_t str_len;
  bool is_bytes;      /* STRING: b'...' */
  bool u_prefix;      /* STRING: u'...' */
  bool imag;          /* FLOAT: an imaginary literal (2j); .fval is its value */
  const char *bigint; /* INT: an integer literal over 2**63 as decimal digits (arena), else NULL */
  /* STRING with fstr: an f-string; .str is its body undecoded; the body is
   * src[body_start, body_end), beginning on line body_line (whose first byte
   * is at body_line_start); fstr_raw: also an r-string. */
  bool fstr, fstr_raw;
  size_t body_start, body_end, body_line_start;
  int body_line;
} tl_token;

typedef struct tl_lex_bracket {
  char ch;
  tl_loc loc;
} tl_lex_bracket;

typedef struct tl_lexer {
  const char *src;
  size_t len, pos, line_start;
  int line;
  const char *file;
  tl_arena *arena;
  tl_intern *names;
  TL_VEC(size_t) indents, altindents; /* indentation stack (columns) */
  TL_VEC(tl_lex_bracket) brackets;    /* open ( [ { */
  int pending_dedents;
  bool pending_indent;
  tl_loc pending_loc;   /* location of pending INDENT/DEDENT */
  bool at_line_start;   /* next token begins a logical line */
  bool line_has_tokens; /* a NEWLINE is owed */
  bool failed;
  bool nested;       /* an f-string replacement field (tl_lexer_init_nested) */
  bool err_unclosed; /* the error is "'(' was never closed" */
  bool oom;
  const char *err_msg; /* arena string */
  tl_loc err_loc;
} tl_lexer;

void tl_lexer_init(tl_lexer *lx, const char *src, size_t len, const char *file, tl_arena *a, tl_intern *names);
/* A lexer for the expression of an f-string's replacement field:
 * src[start, end), which begins on line `line` whose first byte is at
 * line_start.  The text is lexed as inside brackets (newlines are joined)
 * and its end is EOF (no NEWLINE). */
void tl_lexer_init_nested(tl_lexer *lx, const char *src, size_t start, size_t end, int line, size_t line_start,
                          const char *file, tl_arena *a, tl_intern *names);
void tl_lexer_free(tl_lexer *lx);
/* Decodes the escape sequence at s[*pos] (a backslash; s[*pos + 1] lies
 * before end) into out at *k, advancing *pos and *k (out needs room for 4
 * bytes).  Returns NULL, or a printf format with one %c (the escape's
 * letter) describing an invalid escape.  bytes: \u, \U, \N are kept as
 * written and \x gives one byte. */
const char *tl_lex_decode_escape(const char *s, size_t *pos, size_t end, bool bytes, char *out, size_t *k);
/* The next token in *out.  After EOF it keeps returning EOF; after an error,
 * ERROR. */
void tl_lexer_next(tl_lexer *lx, tl_token *out);

/* Spelling of an operator / keyword. */
const char *tl_op_spelling(tl_op op);
const char *tl_kw_spelling(tl_kw kw);

#endif
