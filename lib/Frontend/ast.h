/* Syntax tree of Python 3 (through 3.11's grammar, as TileLang files are
 * written) (internal).  Produced by the parser (parser.c, parser_stmt.c,
 * parser_fstring.c, parser_match.c from lexer.c's tokens), dumped in
 * CPython's ast.dump form by ast_dump.c (tl-opt --emit=ast), consumed by the
 * elaborator (elaborate.c), which evaluates the factory and builds tile IR
 * and reports the constructs it reaches but cannot evaluate.
 * Nodes live in the module's arena; every node has the location of its
 * first token (for calls: the callee's first token; for binary operators:
 * the left operand's first token, with the operator's own location in
 * op_loc). */
#ifndef TL_AST_H
#define TL_AST_H

#include "Support/support.h"

typedef struct tl_ast_expr tl_ast_expr;
typedef struct tl_ast_stmt tl_ast_stmt;

typedef enum tl_ast_expr_kind {
  TL_AST_NAME,  /* .name */
  TL_AST_INT,   /* .ival (decimal, hex 0x, octal 0o, binary 0b, '_' separators) */
  TL_AST_FLOAT, /* .fval (1.5, 1e-3, .5, 2.) */
  TL_AST_STR,   /* .str (quotes removed, escapes \n \t \\ \' \" decoded) */
  TL_AST_TRUE,
  TL_AST_FALSE,
  TL_AST_NONE,
  TL_AST_ATTR,       /* .attr: value.name */
  TL_AST_SUBSCRIPT,  /* .sub: value[items] (items: exprs or SLICE nodes; a[i, j] has 2 items) */
  TL_AST_SLICE,      /* .slice: lo:hi[:step], each may be NULL (only inside subscripts) */
  TL_AST_CALL,       /* .call */
  TL_AST_BINOP,      /* .bin: + - * / // % ** & | ^ << >> (op is the token text) */
  TL_AST_UNARY,      /* .un: - + not ~ */
  TL_AST_COMPARE,    /* .cmp: a < b <= c (chained); ops: == != < <= > >= */
  TL_AST_BOOLOP,     /* .bin with op "and"/"or" */
  TL_AST_IFEXP,      /* .ifexp: body if test else orelse */
  TL_AST_TUPLE,      /* .list (parenthesised or bare a, b) */
  TL_AST_LIST,       /* .list */
  TL_AST_DICT,       /* .dict (a NULL key: the value is a **mapping unpacked) */
  TL_AST_SET,        /* .list: {a, b} */
  TL_AST_ELLIPSIS,   /* ... */
  TL_AST_BYTES,      /* .bytes: b'...' (decoded bytes) */
  TL_AST_IMAG,       /* .fval: the imaginary literal 2j */
  TL_AST_BIGINT,     /* .str: an integer literal over 2**63, as decimal digits */
  TL_AST_FSTRING,    /* .list: f-string (CPython's JoinedStr): STR and FORMATTED parts */
  TL_AST_FORMATTED,  /* .fmt: a replacement field {value!conv:spec} */
  TL_AST_STARRED,    /* .un (op "*"): *x in a call, display or target */
  TL_AST_NAMEDEXPR,  /* .bin (op ":="): l := r (l a NAME) */
  TL_AST_LAMBDA,     /* .lambda */
  TL_AST_AWAIT,      /* .un (op "await") */
  TL_AST_YIELD,      /* .un (op "yield"; x may be NULL) */
  TL_AST_YIELD_FROM, /* .un (op "yield from") */
  TL_AST_LISTCOMP,   /* .comp: [elt for ...] */
  TL_AST_SETCOMP,    /* .comp: {elt for ...} */
  TL_AST_GENEXP,     /* .comp: (elt for ...) */
  TL_AST_DICTCOMP    /* .comp: {elt: value for ...} */
} tl_ast_expr_kind;

/* Flags of an expression (tl_ast_expr.flags). */
enum {
  TL_AST_F_PARENS = 1,    /* written in parentheses (matters for a or (b or c), (x): int) */
  TL_AST_F_U_PREFIX = 2,  /* STR: written u'...' */
  TL_AST_F_TUPLE_SUB = 4, /* SUBSCRIPT: the index is a tuple even with one item (a[i,]) */
  TL_AST_F_WITHITEMS = 8  /* parser-internal: 'with (a as b, c):' items */
};

typedef struct tl_ast_comprehension tl_ast_comprehension;
typedef struct tl_ast_param tl_ast_param;

typedef struct tl_ast_keyword {
  const char *name;
  tl_loc loc;
  tl_ast_expr *value;
} tl_ast_keyword;

struct tl_ast_expr {
  tl_ast_expr_kind kind;
  unsigned flags; /* TL_AST_F_* */
  size_t slen;    /* STR: the length of .str (it may hold NUL bytes) */
  tl_loc loc;
  union {
    const char *name; /* interned */
    int64_t ival;
    double fval;
    const char *str; /* arena string */
    struct {
      tl_ast_expr *value;
      const char *name;
      tl_loc name_loc;
    } attr;
    struct {
      tl_ast_expr *value;
      int n;
      tl_ast_expr **items;
    } sub;
    struct {
      tl_ast_expr *lo, *hi, *step;
    } slice;
    struct {
      tl_ast_expr *func;
      int nargs;
      tl_ast_expr **args;
      int nkw;
      tl_ast_keyword *kw;
    } call;
    struct {
      const char *op;
      tl_loc op_loc;
      tl_ast_expr *l, *r;
    } bin; /* op interned */
    struct {
      const char *op;
      tl_ast_expr *x;
    } un;
    struct {
      int n;
      const char **ops;
      tl_loc *op_locs;
      tl_ast_expr **operands; /* n+1 */
    } cmp;
    struct {
      tl_ast_expr *test, *body, *orelse;
    } ifexp;
    struct {
      int n;
      tl_ast_expr **items;
    } list;
    struct {
      int n;
      tl_ast_expr **keys, **values;
    } dict;
    struct {
      const char *data;
      size_t n;
    } bytes;
    /* conversion: -1 none, else 's', 'r' or 'a'; spec: an FSTRING or NULL */
    struct {
      tl_ast_expr *value;
      int conversion;
      tl_ast_expr *spec;
    } fmt;
    struct {
      int nparams;
      tl_ast_param *params;
      tl_ast_expr *body;
    } lambda;
    struct {
      tl_ast_expr *elt, *value; /* value: DICTCOMP only */
      int ngens;
      tl_ast_comprehension *gens;
    } comp;
  } u;
};

/* One 'for target in iter if cond ...' clause of a comprehension. */
struct tl_ast_comprehension {
  tl_ast_expr *target, *iter;
  int nifs;
  tl_ast_expr **ifs;
  bool is_async;
};

typedef enum tl_ast_stmt_kind {
  TL_AST_EXPR_STMT, /* .expr */
  TL_AST_ASSIGN,    /* .assign: target = value (target: name, tuple/list of names,
                       subscript, attribute); a = b = c gives ntargets 2 */
  TL_AST_AUGASSIGN, /* .aug: target op= value (op "+", "-", "*", "/", ...) */
  TL_AST_ANNASSIGN, /* .ann: target: annotation [= value] */
  TL_AST_FOR,       /* .loop: for target in iter: body [else not supported] */
  TL_AST_WITH,      /* .with: with expr [as target]: body */
  TL_AST_IF,        /* .ifs: if test: body elif...: (nested IF in orelse) else: orelse */
  TL_AST_DEF,       /* .def */
  TL_AST_RETURN,    /* .ret (value may be NULL) */
  TL_AST_PASS,
  TL_AST_IMPORT, /* .import: import a.b [as c] / from a import b [as c] */
  TL_AST_WHILE,
  TL_AST_BREAK,
  TL_AST_CONTINUE,
  TL_AST_CLASS,    /* .cls */
  TL_AST_DELETE,   /* .del: del targets */
  TL_AST_RAISE,    /* .raise: raise [exc [from cause]] */
  TL_AST_TRY,      /* .try (try/except/else/finally, or except* when .try.star) */
  TL_AST_ASSERT,   /* .assert: assert test[, msg] */
  TL_AST_GLOBAL,   /* .names */
  TL_AST_NONLOCAL, /* .names */
  TL_AST_MATCH     /* .match */
} tl_ast_stmt_kind;

typedef struct tl_ast_block {
  int n;
  tl_ast_stmt **stmts;
} tl_ast_block;

/* The kind of a parameter, in the order they may appear. */
typedef enum tl_ast_param_kind {
  TL_AST_PARAM_POS,     /* a plain parameter (positional or keyword) */
  TL_AST_PARAM_POSONLY, /* before '/' */
  TL_AST_PARAM_VARARG,  /* *args */
  TL_AST_PARAM_KWONLY,  /* after '*' or '*args' */
  TL_AST_PARAM_KWARG    /* **kwargs */
} tl_ast_param_kind;

struct tl_ast_param {
  const char *name;
  tl_loc loc;
  tl_ast_expr *annotation;    /* NULL if none */
  tl_ast_expr *default_value; /* NULL if none */
  tl_ast_param_kind pkind;
};

/* except [type [as name]]: body */
typedef struct tl_ast_handler {
  tl_loc loc;
  tl_ast_expr *type; /* NULL for a bare 'except:' */
  const char *name;  /* NULL if none */
  tl_ast_block body;
} tl_ast_handler;

/* A pattern of a match statement (PEP 634). */
typedef struct tl_ast_pattern tl_ast_pattern;
typedef enum tl_ast_pattern_kind {
  TL_PAT_VALUE,     /* .value: a literal or dotted name compared with == */
  TL_PAT_SINGLETON, /* .value: None, True or False */
  TL_PAT_SEQUENCE,  /* .n/.items */
  TL_PAT_MAPPING,   /* .n/.keys/.items, .name: **rest or NULL */
  TL_PAT_CLASS,     /* .value: the class; .n/.items positional; .nkw/.kw_names/.kw_items */
  TL_PAT_STAR,      /* .name (NULL for *_) */
  TL_PAT_AS,        /* .sub (NULL: a capture or _), .name (NULL for _) */
  TL_PAT_OR         /* .n/.items */
} tl_ast_pattern_kind;
struct tl_ast_pattern {
  tl_ast_pattern_kind kind;
  tl_loc loc;
  tl_ast_expr *value;
  int n;
  tl_ast_pattern **items;
  tl_ast_expr **keys;
  int nkw;
  const char **kw_names;
  tl_ast_pattern **kw_items;
  tl_ast_pattern *sub;
  const char *name;
};
typedef struct tl_ast_match_case {
  tl_ast_pattern *pattern;
  tl_ast_expr *guard; /* NULL if none */
  tl_ast_block body;
} tl_ast_match_case;

/* One item of a with statement: ctx [as target]. */
typedef struct tl_ast_withitem {
  tl_ast_expr *ctx, *target;
} tl_ast_withitem;

struct tl_ast_stmt {
  tl_ast_stmt_kind kind;
  tl_loc loc;
  union {
    tl_ast_expr *expr;
    struct {
      int ntargets;
      tl_ast_expr **targets;
      tl_ast_expr *value;
    } assign;
    struct {
      tl_ast_expr *target;
      const char *op;
      tl_ast_expr *value;
    } aug;
    struct {
      tl_ast_expr *target, *annotation, *value;
    } ann;
    /* orelse: the for-else block; is_async: 'async for' */
    struct {
      tl_ast_expr *target, *iter;
      tl_ast_block body, orelse;
      bool is_async;
    } loop;
    struct {
      tl_ast_expr *test;
      tl_ast_block body, orelse;
    } whiles;
    /* ctx/target: the first item (also items[0]); nitems >= 1 */
    struct {
      tl_ast_expr *ctx;
      tl_ast_expr *target;
      tl_ast_block body;
      int nitems;
      tl_ast_withitem *items;
      bool is_async;
    } with;
    struct {
      tl_ast_expr *test;
      tl_ast_block body, orelse;
    } ifs;
    struct {
      const char *name;
      tl_loc name_loc;
      int ndecorators;
      tl_ast_expr **decorators;
      int nparams;
      tl_ast_param *params;
      tl_ast_expr *returns; /* -> annotation, or NULL */
      tl_ast_block body;
      bool is_async; /* async def */
    } def;
    tl_ast_expr *ret;
    /* One imported name; 'import a, b' gives two statements, the second
     * with .cont set (it continues the statement before it). */
    struct {
      const char *module; /* "tilelang.language"; NULL for 'from . import x' */
      const char *name;   /* from-import name ("*" for a star import), or NULL */
      const char *alias;  /* as-name, or NULL */
      int level;          /* leading dots of a relative from-import */
      bool cont;
    } import;
    struct {
      const char *name;
      tl_loc name_loc;
      int ndecorators;
      tl_ast_expr **decorators;
      int nbases;
      tl_ast_expr **bases;
      int nkw;
      tl_ast_keyword *kw;
      tl_ast_block body;
    } cls;
    struct {
      int n;
      tl_ast_expr **targets;
    } del;
    struct {
      tl_ast_expr *exc, *cause;
    } raise;
    struct {
      tl_ast_block body;
      int nhandlers;
      tl_ast_handler *handlers;
      tl_ast_block orelse, finalbody;
      bool star; /* except* (3.11) */
    } try_;
    struct {
      tl_ast_expr *test, *msg;
    } assert_;
    struct {
      int n;
      const char **names;
    } names;
    struct {
      tl_ast_expr *subject;
      int ncases;
      tl_ast_match_case *cases;
    } match;
  } u;
};

typedef struct tl_ast_module {
  tl_ast_block body;
} tl_ast_module;

/* Parses source into *out (nodes in arena a, identifiers and operator
 * strings interned in names).  Syntax errors go to d with their location
 * (the first error is at the fault: "expected ':'" at the end of a def
 * line, "'(' was never closed" at the opening parenthesis, "inconsistent
 * use of tabs and spaces in indentation" at the line, ...).  Returns false
 * when an error was reported.  Never reads past len. */
bool tl_parse_python(tl_arena *a, tl_intern *names, tl_diag *d, const char *source, size_t len, const char *filename,
                     tl_ast_module *out);

/* Writes the module as CPython 3.11's ast.dump(ast.parse(source)) does
 * (node kinds, fields and nesting; no positions), for the parser's
 * conformance tests (tl-opt --emit=ast). */
void tl_ast_dump_module(tl_strbuf *out, const tl_ast_module *m);

/* Writes v as Python's repr(float) does: the shortest digits that read
 * back as v, positional for exponents in [-4, 16), else 1e+16 / 1.5e-05;
 * inf, -inf, nan. */
void tl_ast_print_float(tl_strbuf *out, double v);

/* Prints an AST expression as source text (for messages). */
void tl_ast_print_expr(tl_strbuf *out, const tl_ast_expr *e);

#endif
