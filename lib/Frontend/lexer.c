/* Tokenizer of Python 3 source (TileLang files).
 *
 * Algorithm: a hand-written scanner over the byte buffer, producing one token
 * per call.  Layout follows CPython's tokenizer: at the start of each logical
 * line (outside brackets) the indentation is measured twice, once with tabs
 * to the next multiple of 8 and once with tabs counting 1; both measures
 * must order the line the same way against the indentation stack, otherwise
 * the indentation is ambiguous ("inconsistent use of tabs and spaces").  A
 * deeper line pushes and yields INDENT, a shallower one pops and yields one
 * DEDENT per level (it must land on an outer level).  Blank and comment-only
 * lines yield nothing; newlines inside ( [ { and after a backslash are
 * joined.  A stack of open brackets gives "'(' was never closed" at EOF and
 * mismatch errors at the closer.  Numbers are accumulated with overflow
 * checks (larger integers keep their decimal digits; 2j is an imaginary
 * FLOAT); strings are decoded into the arena, except f-strings, whose body
 * is kept as written for parser_fstring.c.  Every error is recorded (not
 * reported) and the lexer then yields ERROR tokens only.  Linear time. */
#include "Frontend/lexer.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const kw_names[TL_KW_COUNT_] = {
    "False", "None",     "True",  "and",    "as",   "assert", "async",  "await",    "break",
    "class", "continue", "def",   "del",    "elif", "else",   "except", "finally",  "for",
    "from",  "global",   "if",    "import", "in",   "is",     "lambda", "nonlocal", "not",
    "or",    "pass",     "raise", "return", "try",  "while",  "with",   "yield",
};

static const char *const op_names[TL_OP_COUNT_] = {
    "(",  ")",  "[",  "]",  "{",  "}",  ":",   ",",  ";",   ".",  "...", "->", ":=", "=",   "+",   "-",
    "*",  "/",  "//", "%",  "**", "@",  "&",   "|",  "^",   "~",  "<<",  ">>", "<",  ">",   "<=",  ">=",
    "==", "!=", "+=", "-=", "*=", "/=", "//=", "%=", "**=", "@=", "&=",  "|=", "^=", "<<=", ">>=",
};

const char *tl_op_spelling(tl_op op) { return (unsigned)op < TL_OP_COUNT_ ? op_names[op] : "?"; }
const char *tl_kw_spelling(tl_kw kw) { return (unsigned)kw < TL_KW_COUNT_ ? kw_names[kw] : "?"; }

void tl_lexer_init(tl_lexer *lx, const char *src, size_t len, const char *file, tl_arena *a, tl_intern *names) {
  memset(lx, 0, sizeof *lx);
  lx->src = src ? src : "";
  lx->len = src ? len : 0;
  lx->file = file;
  lx->arena = a;
  lx->names = names;
  lx->line = 1;
  lx->at_line_start = true;
  if (!tl_vec_push(&lx->indents, (size_t)0) || !tl_vec_push(&lx->altindents, (size_t)0)) lx->oom = true;
}

void tl_lexer_free(tl_lexer *lx) {
  tl_vec_free(&lx->indents);
  tl_vec_free(&lx->altindents);
  tl_vec_free(&lx->brackets);
}

static tl_loc loc_at(const tl_lexer *lx, size_t pos) {
  size_t col = pos - lx->line_start + 1;
  return (tl_loc){lx->file, lx->line, col > (size_t)INT32_MAX ? INT32_MAX : (int)col};
}

void tl_lexer_init_nested(tl_lexer *lx, const char *src, size_t start, size_t end, int line, size_t line_start,
                          const char *file, tl_arena *a, tl_intern *names) {
  tl_lexer_init(lx, src, end, file, a, names);
  lx->pos = start;
  lx->line = line;
  lx->line_start = line_start;
  lx->at_line_start = false;
  lx->nested = true;
  if (!tl_vec_push(&lx->brackets, ((tl_lex_bracket){'{', loc_at(lx, start)}))) lx->oom = true;
}

static void fail(tl_lexer *lx, tl_loc loc, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void fail(tl_lexer *lx, tl_loc loc, const char *fmt, ...) {
  if (lx->failed) return;
  lx->failed = true;
  lx->err_loc = loc;
  va_list ap;
  va_start(ap, fmt);
  tl_strbuf sb = {0};
  tl_strbuf_vprintf(&sb, fmt, ap);
  va_end(ap);
  lx->err_msg = sb.data ? tl_arena_strndup(lx->arena, sb.data, sb.len) : NULL;
  if (!lx->err_msg) lx->err_msg = "out of memory";
  tl_strbuf_free(&sb);
}

/* Length of the valid UTF-8 sequence at p (1..4) and its code point, or 0
 * when the bytes there are not valid UTF-8. */
static int utf8_decode(const unsigned char *p, size_t avail, uint32_t *cp) {
  unsigned c = p[0];
  if (c < 0x80) {
    *cp = c;
    return 1;
  }
  int n;
  uint32_t v, min;
  if ((c & 0xE0) == 0xC0) {
    n = 2;
    v = c & 0x1F;
    min = 0x80;
  } else if ((c & 0xF0) == 0xE0) {
    n = 3;
    v = c & 0x0F;
    min = 0x800;
  } else if ((c & 0xF8) == 0xF0) {
    n = 4;
    v = c & 0x07;
    min = 0x10000;
  } else return 0;
  if ((size_t)n > avail) return 0;
  for (int i = 1; i < n; i++) {
    if ((p[i] & 0xC0) != 0x80) return 0;
    v = (v << 6) | (p[i] & 0x3F);
  }
  if (v < min || v > 0x10FFFF || (v >= 0xD800 && v <= 0xDFFF)) return 0;
  *cp = v;
  return n;
}

/* Reports the character at pos as invalid (NUL, control, non-ASCII, bad UTF-8). */
static void invalid_char(tl_lexer *lx, size_t pos) {
  const unsigned char *p = (const unsigned char *)lx->src + pos;
  uint32_t cp = 0;
  int n = utf8_decode(p, lx->len - pos, &cp);
  tl_loc loc = loc_at(lx, pos);
  if (n == 0) fail(lx, loc, "invalid character (byte 0x%02X is not valid UTF-8)", p[0]);
  else if (cp < 0x20 || cp == 0x7F) fail(lx, loc, "invalid character (U+%04" PRIX32 ")", cp);
  else fail(lx, loc, "invalid character '%.*s' (U+%04" PRIX32 ")", n, (const char *)p, cp);
}

/* Checks the byte at pos inside a string or comment: NUL and bad UTF-8 are
 * errors.  Returns the number of bytes to advance (0 on error). */
static size_t check_text_char(tl_lexer *lx, size_t pos) {
  unsigned char c = (unsigned char)lx->src[pos];
  if (c == 0) {
    invalid_char(lx, pos);
    return 0;
  }
  if (c < 0x80) return 1;
  uint32_t cp;
  int n = utf8_decode((const unsigned char *)lx->src + pos, lx->len - pos, &cp);
  if (n == 0) {
    invalid_char(lx, pos);
    return 0;
  }
  return (size_t)n;
}

/* Skips a comment from '#' to (not including) the newline. */
static void skip_comment(tl_lexer *lx) {
  while (lx->pos < lx->len && lx->src[lx->pos] != '\n' && !lx->failed) {
    if (lx->src[lx->pos] == '\r') {
      lx->pos++;
      continue;
    }
    size_t n = check_text_char(lx, lx->pos);
    lx->pos += n;
  }
}

static void newline(tl_lexer *lx) { /* at '\n' */
  lx->pos++;
  lx->line++;
  lx->line_start = lx->pos;
}

static bool is_id_start(int c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_'; }
static bool is_id_char(int c) { return is_id_start(c) || (c >= '0' && c <= '9'); }
static int digit_value(int c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return 99;
}

static void finish(tl_lexer *lx, tl_token *t, tl_tok_kind kind, size_t start) {
  t->kind = kind;
  t->len = lx->pos - start;
  t->end_line = lx->line;
  size_t col = lx->pos - lx->line_start + 1;
  t->end_col = col > (size_t)INT32_MAX ? INT32_MAX : (int)col;
  if (kind != TL_TOK_NEWLINE && kind != TL_TOK_INDENT && kind != TL_TOK_DEDENT && kind != TL_TOK_EOF)
    lx->line_has_tokens = true;
}

/* ------------------------------------------------------------- numbers */

/* Reads digits of the given radix with single '_' separators between
 * digits; accumulates into *v (sets *ovf on overflow of uint64).  Returns
 * the number of digits read; on a misplaced '_' sets *bad. */
static size_t read_digits(tl_lexer *lx, int radix, uint64_t *v, bool *ovf, bool *bad) {
  size_t n = 0;
  while (lx->pos < lx->len) {
    int c = (unsigned char)lx->src[lx->pos];
    if (c == '_') {
      if (n == 0 && radix == 10) break; /* the caller decides */
      if (lx->pos + 1 >= lx->len || digit_value((unsigned char)lx->src[lx->pos + 1]) >= radix) {
        *bad = true;
        return n;
      }
      lx->pos++;
      continue;
    }
    int d = digit_value(c);
    if (d >= radix) break;
    if (*v > (UINT64_MAX - (uint64_t)d) / (uint64_t)radix) *ovf = true;
    else *v = *v * (uint64_t)radix + (uint64_t)d;
    lx->pos++;
    n++;
  }
  return n;
}

/* The decimal digits of the integer literal src[start, lx->pos) (any radix,
 * '_' separators), for literals too large for int64 (arena string). */
static const char *big_decimal(tl_lexer *lx, size_t start) {
  const char *s = lx->src;
  int radix = 10;
  size_t i = start;
  if (s[i] == '0' && i + 1 < lx->pos && strchr("xXoObB", s[i + 1])) {
    char pc = s[i + 1];
    radix = (pc == 'x' || pc == 'X') ? 16 : (pc == 'o' || pc == 'O') ? 8 : 2;
    i += 2;
  }
  /* little-endian base-10 digits; each source digit multiplies and adds */
  size_t cap = (lx->pos - start) * 2 + 2, nd = 1;
  unsigned char *d = tl_arena_alloc(lx->arena, cap);
  char *out = tl_arena_alloc(lx->arena, cap + 1);
  if (!d || !out) return NULL;
  d[0] = 0;
  for (; i < lx->pos; i++) {
    if (s[i] == '_') continue;
    unsigned carry = (unsigned)digit_value((unsigned char)s[i]);
    for (size_t j = 0; j < nd; j++) {
      unsigned x = d[j] * (unsigned)radix + carry;
      d[j] = (unsigned char)(x % 10);
      carry = x / 10;
    }
    while (carry && nd < cap) {
      d[nd++] = (unsigned char)(carry % 10);
      carry /= 10;
    }
  }
  for (size_t j = 0; j < nd; j++) out[j] = (char)('0' + d[nd - 1 - j]);
  out[nd] = 0;
  return out;
}

static void lex_number(tl_lexer *lx, tl_token *t) {
  size_t start = lx->pos;
  tl_loc loc = t->loc;
  const char *s = lx->src;
  uint64_t v = 0;
  bool ovf = false, bad = false, is_float = false;
  if (s[start] == '0' && start + 1 < lx->len && strchr("xXoObB", s[start + 1]) && s[start + 1]) {
    char pc = s[start + 1];
    int radix = (pc == 'x' || pc == 'X') ? 16 : (pc == 'o' || pc == 'O') ? 8 : 2;
    lx->pos += 2;
    if (lx->pos < lx->len && s[lx->pos] == '_') lx->pos++; /* 0x_ff */
    size_t nd = read_digits(lx, radix, &v, &ovf, &bad);
    if (bad || nd == 0 || (lx->pos < lx->len && is_id_char((unsigned char)s[lx->pos]))) {
      fail(lx, loc, "invalid %s literal", radix == 16 ? "hexadecimal" : radix == 8 ? "octal" : "binary");
      return;
    }
  } else {
    size_t nd = 0;
    if (s[lx->pos] != '.') nd = read_digits(lx, 10, &v, &ovf, &bad);
    if (bad) {
      fail(lx, loc, "invalid decimal literal");
      return;
    }
    if (lx->pos < lx->len && s[lx->pos] == '.') {
      is_float = true;
      lx->pos++;
      uint64_t dummy = 0;
      bool o2 = false;
      size_t fd = 0;
      if (lx->pos < lx->len && s[lx->pos] >= '0' && s[lx->pos] <= '9') fd = read_digits(lx, 10, &dummy, &o2, &bad);
      if (bad || (nd == 0 && fd == 0)) {
        fail(lx, loc, "invalid decimal literal");
        return;
      }
    }
    if (lx->pos < lx->len && (s[lx->pos] == 'e' || s[lx->pos] == 'E')) {
      size_t save = lx->pos;
      lx->pos++;
      if (lx->pos < lx->len && (s[lx->pos] == '+' || s[lx->pos] == '-')) lx->pos++;
      uint64_t dummy = 0;
      bool o2 = false;
      size_t ed = 0;
      if (lx->pos < lx->len && s[lx->pos] >= '0' && s[lx->pos] <= '9') ed = read_digits(lx, 10, &dummy, &o2, &bad);
      if (bad || ed == 0) {
        lx->pos = save;
        fail(lx, loc, "invalid decimal literal");
        return;
      }
      is_float = true;
    }
    if (lx->pos < lx->len && (s[lx->pos] == 'j' || s[lx->pos] == 'J')) {
      lx->pos++;
      is_float = true;
      t->imag = true;
    }
    if (lx->pos < lx->len && is_id_char((unsigned char)s[lx->pos])) {
      fail(lx, loc, "invalid decimal literal");
      return;
    }
    if (!is_float && s[start] == '0') {
      for (size_t i = start; i < lx->pos; i++)
        if (s[i] != '0' && s[i] != '_') {
          fail(lx, loc,
               "leading zeros in decimal integer literals are not permitted; "
               "use an 0o prefix for octal integers");
          return;
        }
    }
  }
  if (is_float) {
    /* strtod on a copy without '_' (no fixed-size buffer). */
    size_t n = lx->pos - start;
    char *buf = tl_arena_alloc(lx->arena, n + 1);
    if (!buf) {
      lx->oom = true;
      fail(lx, loc, "out of memory");
      return;
    }
    size_t k = 0;
    for (size_t i = start; i < lx->pos; i++)
      if (s[i] != '_' && s[i] != 'j' && s[i] != 'J') buf[k++] = s[i];
    buf[k] = 0;
    t->fval = strtod(buf, NULL);
    finish(lx, t, TL_TOK_FLOAT, start);
    return;
  }
  if (ovf || v > (uint64_t)INT64_MAX + 1) {
    t->bigint = big_decimal(lx, start);
    if (!t->bigint) {
      lx->oom = true;
      fail(lx, loc, "out of memory");
      return;
    }
    t->ival = INT64_MAX;
    finish(lx, t, TL_TOK_INT, start);
    return;
  }
  if (v == (uint64_t)INT64_MAX + 1) {
    t->int_2_63 = true;
    t->ival = INT64_MAX; /* placeholder; the parser folds -(2**63) */
  } else {
    t->ival = (int64_t)v;
  }
  finish(lx, t, TL_TOK_INT, start);
}

/* ------------------------------------------------------------- strings */

static void put_utf8(char *out, size_t *k, uint32_t cp) {
  if (cp < 0x80) out[(*k)++] = (char)cp;
  else if (cp < 0x800) {
    out[(*k)++] = (char)(0xC0 | (cp >> 6));
    out[(*k)++] = (char)(0x80 | (cp & 0x3F));
  } else if (cp < 0x10000) {
    out[(*k)++] = (char)(0xE0 | (cp >> 12));
    out[(*k)++] = (char)(0x80 | ((cp >> 6) & 0x3F));
    out[(*k)++] = (char)(0x80 | (cp & 0x3F));
  } else {
    out[(*k)++] = (char)(0xF0 | (cp >> 18));
    out[(*k)++] = (char)(0x80 | ((cp >> 12) & 0x3F));
    out[(*k)++] = (char)(0x80 | ((cp >> 6) & 0x3F));
    out[(*k)++] = (char)(0x80 | (cp & 0x3F));
  }
}

/* Decodes the escape sequence at s[*pos] (a backslash; the byte after it
 * lies before end) into out[*k...], advancing both.  Returns NULL, or a
 * message format with one %c (the escape letter) for an invalid escape.
 * Line continuations are the caller's.  In bytes, \\u \\U \\N are not
 * escapes. */
const char *tl_lex_decode_escape(const char *s, size_t *pos, size_t end, bool bytes, char *out, size_t *k) {
  char e = s[*pos + 1];
  *pos += 2;
  switch (e) {
  case '\\': out[(*k)++] = '\\'; break;
  case '\'': out[(*k)++] = '\''; break;
  case '"': out[(*k)++] = '"'; break;
  case 'a': out[(*k)++] = '\a'; break;
  case 'b': out[(*k)++] = '\b'; break;
  case 'f': out[(*k)++] = '\f'; break;
  case 'n': out[(*k)++] = '\n'; break;
  case 'r': out[(*k)++] = '\r'; break;
  case 't': out[(*k)++] = '\t'; break;
  case 'v': out[(*k)++] = '\v'; break;
  case '0':
  case '1':
  case '2':
  case '3':
  case '4':
  case '5':
  case '6':
  case '7': {
    uint32_t v = (uint32_t)(e - '0');
    for (int i = 0; i < 2 && *pos < end && s[*pos] >= '0' && s[*pos] <= '7'; i++)
      v = v * 8 + (uint32_t)(s[(*pos)++] - '0');
    if (bytes) out[(*k)++] = (char)(v & 0xFF);
    else put_utf8(out, k, v);
    break;
  }
  case 'x':
  case 'u':
  case 'U': {
    if (bytes && e != 'x') goto keep;
    int nd = e == 'x' ? 2 : e == 'u' ? 4 : 8;
    uint32_t v = 0;
    for (int i = 0; i < nd; i++) {
      int d = *pos < end ? digit_value((unsigned char)s[*pos]) : 99;
      if (d >= 16) return "invalid \\%c escape in string literal";
      v = v * 16 + (uint32_t)d;
      (*pos)++;
    }
    if (v > 0x10FFFF || (v >= 0xD800 && v <= 0xDFFF)) return "invalid \\%c escape in string literal";
    if (bytes) out[(*k)++] = (char)v;
    else put_utf8(out, k, v);
    break;
  }
  case 'N':
    if (bytes) goto keep;
    return "\\%c{...} escapes are not supported";
  default:
  keep:
    /* unknown escape: kept as written (as Python does) */
    out[(*k)++] = '\\';
    (*pos)--;
    break;
  }
  return NULL;
}

/* lx->pos is at the opening quote; start is the first byte of the prefix. */
static void lex_string(tl_lexer *lx, tl_token *t, size_t start, bool raw, bool bytes) {
  const char *s = lx->src;
  tl_loc loc = t->loc;
  char q = s[lx->pos];
  bool triple = lx->pos + 2 < lx->len && s[lx->pos + 1] == q && s[lx->pos + 2] == q;
  lx->pos += triple ? 3 : 1;
  size_t body = lx->pos;
  /* Decoded text is never longer than the raw text: allocate once. */
  size_t cap = lx->len - body + 1;
  char *out = NULL;
  size_t k = 0;
  /* First pass: find the end (so we allocate only the body's size). */
  size_t end = body;
  {
    size_t p = body;
    bool found = false;
    while (p < lx->len) {
      char c = s[p];
      if (c == '\\') {
        p += (p + 1 < lx->len) ? 2 : 1;
        continue;
      }
      if (c == '\n' && !triple) break;
      if (c == q) {
        if (!triple) {
          found = true;
          break;
        }
        if (p + 2 < lx->len && s[p + 1] == q && s[p + 2] == q) {
          found = true;
          break;
        }
      }
      p++;
    }
    if (!found) {
      fail(lx, loc, triple ? "unterminated triple-quoted string literal" : "unterminated string literal");
      return;
    }
    end = p;
    cap = end - body + 1;
  }
  out = tl_arena_alloc(lx->arena, cap);
  if (!out) {
    lx->oom = true;
    fail(lx, loc, "out of memory");
    return;
  }
  while (lx->pos < end) {
    char c = s[lx->pos];
    if (c == '\n') {
      newline(lx);
      out[k++] = '\n';
      continue;
    }
    if (c == '\r' && lx->pos + 1 < end && s[lx->pos + 1] == '\n') {
      lx->pos++;
      continue;
    }
    if (c != '\\') {
      size_t n = check_text_char(lx, lx->pos);
      if (n == 0) return;
      memcpy(out + k, s + lx->pos, n);
      k += n;
      lx->pos += n;
      continue;
    }
    /* backslash */
    /* The first pass skipped the byte after every backslash, so it lies
     * before end. */
    size_t bs = lx->pos;
    char e = s[lx->pos + 1];
    if (raw) {
      out[k++] = '\\';
      lx->pos++;
      if (e == '\n') {
        newline(lx);
        out[k++] = '\n';
        continue;
      }
      if (e == 0 || (unsigned char)e >= 0x80) continue; /* checked as text next */
      out[k++] = e;
      lx->pos++;
      continue;
    }
    if (e == '\n') {
      lx->pos++;
      newline(lx);
      continue;
    } /* line continuation inside a string */
    if (e == '\r') {
      lx->pos += 2;
      if (lx->pos < end && s[lx->pos] == '\n') newline(lx);
      continue;
    }
    const char *msg = tl_lex_decode_escape(s, &lx->pos, end, bytes, out, &k);
    if (msg) {
      fail(lx, loc_at(lx, bs), msg, e);
      return;
    }
  }
  out[k] = 0;
  lx->pos = end + (triple ? 3 : 1);
  t->str = out;
  t->str_len = k;
  finish(lx, t, TL_TOK_STRING, start);
}

/* ------------------------------------------------------------- operators */

static bool match_op(const char *p, size_t avail, tl_op *op, size_t *n) {
  /* longest match first */
  for (size_t want = 3; want >= 1; want--) {
    if (want > avail) continue;
    for (int i = 0; i < TL_OP_COUNT_; i++) {
      const char *sp = op_names[i];
      if (sp[0] == p[0] && strlen(sp) == want && memcmp(sp, p, want) == 0) { /* first byte: no strlen per op */
        *op = (tl_op)i;
        *n = want;
        return true;
      }
    }
  }
  return false;
}

static void bracket_error(tl_lexer *lx, tl_loc loc, char close) {
  if (lx->brackets.len == 0) {
    fail(lx, loc, "unmatched '%c'", close);
    return;
  }
  tl_lex_bracket b = tl_vec_last(&lx->brackets);
  if (b.loc.line != loc.line)
    fail(lx, loc, "closing parenthesis '%c' does not match opening parenthesis '%c' on line %d", close, b.ch,
         b.loc.line);
  else fail(lx, loc, "closing parenthesis '%c' does not match opening parenthesis '%c'", close, b.ch);
}

/* ------------------------------------------------------------- layout */

/* A line directive (tl_line_directive, support.h): the next line is line N of file PATH, so diagnostics inside
 * a compile-time helper of another file that the Python package appends name that file and its lines.  Other
 * comments are nothing.  False (an error recorded) for a malformed directive. */
static bool line_directive(tl_lexer *lx, size_t hash, size_t end) {
  long line;
  const char *path;
  size_t plen;
  int r = tl_line_directive(lx->src + hash, end - hash, &line, &path, &plen);
  if (r == 0) return true;
  if (r < 0) {
    fail(lx, (tl_loc){lx->file, lx->line - 1, 1}, "malformed line directive (expected '#@tl-line LINE PATH')");
    return false;
  }
  const char *file = tl_arena_strndup(lx->arena, path, plen);
  if (!file) {
    lx->oom = true;
    fail(lx, (tl_loc){lx->file, lx->line - 1, 1}, "out of memory");
    return false;
  }
  lx->file = file;
  lx->line = (int)line;
  return true;
}

/* At the start of a line outside brackets: measures the indentation, skips
 * blank and comment lines, and queues INDENT / DEDENT tokens.  Returns false
 * on error. */
static bool do_indentation(tl_lexer *lx) {
  for (;;) {
    size_t col = 0, alt = 0;
    while (lx->pos < lx->len) {
      char c = lx->src[lx->pos];
      if (c == ' ') {
        col++;
        alt++;
      } else if (c == '\t') {
        col = (col / 8 + 1) * 8;
        alt++;
      } else if (c == '\f') {
        col = alt = 0;
      } else break;
      lx->pos++;
    }
    if (lx->pos >= lx->len) return true; /* EOF: handled by the caller */
    char c = lx->src[lx->pos];
    if (c == '#' || c == '\n' || (c == '\r' && lx->pos + 1 < lx->len && lx->src[lx->pos + 1] == '\n')) {
      size_t hash = lx->pos;
      if (c == '#') skip_comment(lx);
      if (lx->failed) return false;
      size_t end = lx->pos;
      if (lx->pos < lx->len && lx->src[lx->pos] == '\r') lx->pos++;
      if (lx->pos < lx->len) newline(lx);
      if (c == '#' && col == 0 && !line_directive(lx, hash, end)) return false;
      continue; /* blank line */
    }
    lx->at_line_start = false;
    tl_loc loc = loc_at(lx, lx->pos);
    size_t top = tl_vec_last(&lx->indents), alttop = tl_vec_last(&lx->altindents);
    if (col == top) {
      if (alt != alttop) {
        fail(lx, loc, "inconsistent use of tabs and spaces in indentation");
        return false;
      }
    } else if (col > top) {
      if (alt <= alttop) {
        fail(lx, loc, "inconsistent use of tabs and spaces in indentation");
        return false;
      }
      if (!tl_vec_push(&lx->indents, col) || !tl_vec_push(&lx->altindents, alt)) {
        lx->oom = true;
        fail(lx, loc, "out of memory");
        return false;
      }
      lx->pending_indent = true;
      lx->pending_loc = loc;
    } else {
      int n = 0;
      while (lx->indents.len > 1 && col < tl_vec_last(&lx->indents)) {
        lx->indents.len--;
        lx->altindents.len--;
        n++;
      }
      if (col != tl_vec_last(&lx->indents)) {
        fail(lx, loc, "unindent does not match any outer indentation level");
        return false;
      }
      if (alt != tl_vec_last(&lx->altindents)) {
        fail(lx, loc, "inconsistent use of tabs and spaces in indentation");
        return false;
      }
      lx->pending_dedents = n;
      lx->pending_loc = loc;
    }
    return true;
  }
}

static void simple(tl_lexer *lx, tl_token *t, tl_tok_kind k, tl_loc loc) {
  t->kind = k;
  t->loc = loc;
  t->end_line = loc.line;
  t->end_col = loc.col;
  t->start = lx->pos;
  t->len = 0;
}

/* A name, keyword or prefixed string literal (r'', b'', f'', u'', rb'' ...)
 * starting at start (an identifier character).  False when the lexer
 * failed. */
static bool lex_name_or_string(tl_lexer *lx, tl_token *t, size_t start) {
  const char *s = lx->src;
  while (lx->pos < lx->len && is_id_char((unsigned char)s[lx->pos])) lx->pos++;
  size_t n = lx->pos - start;
  /* string prefixes */
  if (n <= 2 && lx->pos < lx->len && (s[lx->pos] == '\'' || s[lx->pos] == '"')) {
    bool raw = false, fstr = false, bytes = false, ok = true;
    for (size_t i = start; i < lx->pos; i++) {
      char pc = s[i];
      if (pc == 'r' || pc == 'R') raw = true;
      else if (pc == 'f' || pc == 'F') fstr = true;
      else if (pc == 'b' || pc == 'B') bytes = true;
      else if ((pc == 'u' || pc == 'U') && n == 1) {
      } else ok = false;
    }
    if (ok && !(fstr && bytes)) {
      /* An f-string's body is kept undecoded (as a raw string); the
       * parser splits it into literal parts and replacement fields. */
      size_t body_start = lx->pos + 1;
      int body_line = lx->line;
      size_t body_line_start = lx->line_start;
      lex_string(lx, t, start, raw || fstr, bytes);
      if (lx->failed) return false;
      t->is_bytes = bytes;
      t->u_prefix = n == 1 && (s[start] == 'u' || s[start] == 'U');
      if (fstr) {
        bool triple =
            body_start + 1 < lx->len && s[body_start] == s[body_start - 1] && s[body_start + 1] == s[body_start - 1];
        t->fstr = true;
        t->fstr_raw = raw;
        t->body_start = body_start + (triple ? 2 : 0);
        t->body_end = lx->pos - (triple ? 3 : 1);
        t->body_line = body_line;
        t->body_line_start = body_line_start;
      }
      return true;
    }
  }
  t->text = tl_intern_n(lx->names, s + start, n);
  if (!t->text) {
    lx->oom = true;
    fail(lx, t->loc, "out of memory");
    return false;
  }
  t->kind = TL_TOK_NAME;
  for (int i = 0; i < TL_KW_COUNT_; i++)
    if (kw_names[i][0] == s[start] && strlen(kw_names[i]) == n && memcmp(kw_names[i], s + start, n) == 0) {
      t->kind = TL_TOK_KEYWORD;
      t->sub = i;
      break;
    }
  finish(lx, t, t->kind, start);
  return true;
}

void tl_lexer_next(tl_lexer *lx, tl_token *t) {
  memset(t, 0, sizeof *t);
  if (lx->oom && !lx->failed) fail(lx, loc_at(lx, lx->pos), "out of memory");
  for (;;) {
    if (lx->failed) {
      simple(lx, t, TL_TOK_ERROR, lx->err_loc);
      return;
    }
    if (lx->pending_dedents > 0) {
      lx->pending_dedents--;
      simple(lx, t, TL_TOK_DEDENT, lx->pending_loc);
      return;
    }
    if (lx->pending_indent) {
      lx->pending_indent = false;
      simple(lx, t, TL_TOK_INDENT, lx->pending_loc);
      return;
    }
    if (lx->at_line_start && lx->brackets.len == 0) {
      if (!do_indentation(lx)) continue;
      if (lx->pending_dedents > 0 || lx->pending_indent) continue;
    }
    /* skip blanks, comments, continuations */
    const char *s = lx->src;
    while (lx->pos < lx->len) {
      char c = s[lx->pos];
      if (c == ' ' || c == '\t' || c == '\f') {
        lx->pos++;
        continue;
      }
      if (c == '\r' && lx->pos + 1 < lx->len && s[lx->pos + 1] == '\n') {
        lx->pos++;
        continue;
      }
      if (c == '#') {
        skip_comment(lx);
        if (lx->failed) break;
        continue;
      }
      if (c == '\\') {
        size_t p = lx->pos + 1;
        if (p < lx->len && s[p] == '\r' && p + 1 < lx->len && s[p + 1] == '\n') p++;
        if (p < lx->len && s[p] == '\n') {
          lx->pos = p;
          newline(lx);
          continue;
        }
        if (p >= lx->len) {
          fail(lx, loc_at(lx, lx->pos), "unexpected end of file after line continuation character");
          break;
        }
        fail(lx, loc_at(lx, lx->pos), "unexpected character after line continuation character");
        break;
      }
      break;
    }
    if (lx->failed) continue;
    if (lx->pos >= lx->len) {
      tl_loc eof = loc_at(lx, lx->pos);
      if (lx->nested && lx->brackets.len == 1) {
        simple(lx, t, TL_TOK_EOF, eof);
        return;
      }
      if (lx->brackets.len > 0) {
        tl_lex_bracket b = tl_vec_last(&lx->brackets);
        fail(lx, b.loc, "'%c' was never closed", b.ch);
        lx->err_unclosed = true;
        continue;
      }
      if (lx->line_has_tokens) {
        lx->line_has_tokens = false;
        lx->at_line_start = true;
        simple(lx, t, TL_TOK_NEWLINE, eof);
        return;
      }
      if (lx->indents.len > 1) {
        lx->indents.len--;
        lx->altindents.len--;
        simple(lx, t, TL_TOK_DEDENT, eof);
        return;
      }
      simple(lx, t, TL_TOK_EOF, eof);
      return;
    }
    char c = s[lx->pos];
    size_t start = lx->pos;
    t->loc = loc_at(lx, start);
    t->start = start;
    if (c == '\n') {
      tl_loc nl = t->loc;
      newline(lx);
      if (lx->brackets.len > 0) continue;
      lx->at_line_start = true;
      if (lx->line_has_tokens) {
        lx->line_has_tokens = false;
        simple(lx, t, TL_TOK_NEWLINE, nl);
        t->end_col = nl.col + 1;
        return;
      }
      continue;
    }
    if (is_id_start((unsigned char)c)) {
      if (!lex_name_or_string(lx, t, start)) continue;
      return;
    }
    if ((c >= '0' && c <= '9') ||
        (c == '.' && lx->pos + 1 < lx->len && s[lx->pos + 1] >= '0' && s[lx->pos + 1] <= '9')) {
      lex_number(lx, t);
      if (lx->failed) continue;
      return;
    }
    if (c == '\'' || c == '"') {
      lex_string(lx, t, start, false, false);
      if (lx->failed) continue;
      return;
    }
    tl_op op;
    size_t n;
    if (match_op(s + start, lx->len - start, &op, &n)) {
      lx->pos += n;
      if (op == TL_OP_LPAR || op == TL_OP_LSQB || op == TL_OP_LBRACE) {
        if (!tl_vec_push(&lx->brackets, ((tl_lex_bracket){c, t->loc}))) {
          lx->oom = true;
          fail(lx, t->loc, "out of memory");
          continue;
        }
      } else if (op == TL_OP_RPAR || op == TL_OP_RSQB || op == TL_OP_RBRACE) {
        char want = op == TL_OP_RPAR ? '(' : op == TL_OP_RSQB ? '[' : '{';
        if (lx->brackets.len == 0 || tl_vec_last(&lx->brackets).ch != want) {
          bracket_error(lx, t->loc, c);
          continue;
        }
        lx->brackets.len--;
      }
      t->sub = op;
      t->text = tl_intern_str(lx->names, op_names[op]);
      if (!t->text) {
        lx->oom = true;
        fail(lx, t->loc, "out of memory");
        continue;
      }
      finish(lx, t, TL_TOK_OP, start);
      return;
    }
    invalid_char(lx, start);
  }
}
