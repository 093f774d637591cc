/* Syntax tree of the Python subset that TileLang kernel files use (internal).
 * Produced by the parser (parser.c, from lexer.c's tokens), consumed by the
 * elaborator (elaborate.c), which evaluates the factory and builds tile IR.
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
  TL_AST_NAME,      /* .name */
  TL_AST_INT,       /* .ival (decimal, hex 0x, octal 0o, binary 0b, '_' separators) */
  TL_AST_FLOAT,     /* .fval (1.5, 1e-3, .5, 2.) */
  TL_AST_STR,       /* .str (quotes removed, escapes \n \t \\ \' \" decoded) */
  TL_AST_TRUE, TL_AST_FALSE, TL_AST_NONE,
  TL_AST_ATTR,      /* .attr: value.name */
  TL_AST_SUBSCRIPT, /* .sub: value[items] (items: exprs or SLICE nodes; a[i, j] has 2 items) */
  TL_AST_SLICE,     /* .slice: lo:hi[:step], each may be NULL (only inside subscripts) */
  TL_AST_CALL,      /* .call */
  TL_AST_BINOP,     /* .bin: + - * / // % ** & | ^ << >> (op is the token text) */
  TL_AST_UNARY,     /* .un: - + not ~ */
  TL_AST_COMPARE,   /* .cmp: a < b <= c (chained); ops: == != < <= > >= */
  TL_AST_BOOLOP,    /* .bin with op "and"/"or" */
  TL_AST_IFEXP,     /* .ifexp: body if test else orelse */
  TL_AST_TUPLE,     /* .list (parenthesised or bare a, b) */
  TL_AST_LIST,      /* .list */
  TL_AST_DICT       /* .dict */
} tl_ast_expr_kind;

typedef struct tl_ast_keyword { const char *name; tl_loc loc; tl_ast_expr *value; } tl_ast_keyword;

struct tl_ast_expr {
  tl_ast_expr_kind kind;
  tl_loc loc;
  union {
    const char *name;   /* interned */
    int64_t ival;
    double fval;
    const char *str;    /* arena string */
    struct { tl_ast_expr *value; const char *name; tl_loc name_loc; } attr;
    struct { tl_ast_expr *value; int n; tl_ast_expr **items; } sub;
    struct { tl_ast_expr *lo, *hi, *step; } slice;
    struct {
      tl_ast_expr *func;
      int nargs; tl_ast_expr **args;
      int nkw; tl_ast_keyword *kw;
    } call;
    struct { const char *op; tl_loc op_loc; tl_ast_expr *l, *r; } bin;  /* op interned */
    struct { const char *op; tl_ast_expr *x; } un;
    struct { int n; const char **ops; tl_loc *op_locs; tl_ast_expr **operands; /* n+1 */ } cmp;
    struct { tl_ast_expr *test, *body, *orelse; } ifexp;
    struct { int n; tl_ast_expr **items; } list;
    struct { int n; tl_ast_expr **keys, **values; } dict;
  } u;
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
  TL_AST_IMPORT,    /* .import: import a.b [as c] / from a import b [as c] */
  TL_AST_WHILE, TL_AST_BREAK, TL_AST_CONTINUE  /* parsed so the elaborator can reject them */
} tl_ast_stmt_kind;

typedef struct tl_ast_block { int n; tl_ast_stmt **stmts; } tl_ast_block;

typedef struct tl_ast_param {
  const char *name;
  tl_loc loc;
  tl_ast_expr *annotation;  /* NULL if none */
  tl_ast_expr *default_value; /* NULL if none */
} tl_ast_param;

struct tl_ast_stmt {
  tl_ast_stmt_kind kind;
  tl_loc loc;
  union {
    tl_ast_expr *expr;
    struct { int ntargets; tl_ast_expr **targets; tl_ast_expr *value; } assign;
    struct { tl_ast_expr *target; const char *op; tl_ast_expr *value; } aug;
    struct { tl_ast_expr *target, *annotation, *value; } ann;
    struct { tl_ast_expr *target, *iter; tl_ast_block body; } loop;
    struct { tl_ast_expr *test; tl_ast_block body; } whiles;
    struct { tl_ast_expr *ctx; tl_ast_expr *target; tl_ast_block body; } with;
    struct { tl_ast_expr *test; tl_ast_block body, orelse; } ifs;
    struct {
      const char *name;
      tl_loc name_loc;
      int ndecorators; tl_ast_expr **decorators;
      int nparams; tl_ast_param *params;
      tl_ast_expr *returns;   /* -> annotation, or NULL */
      tl_ast_block body;
    } def;
    tl_ast_expr *ret;
    struct {
      const char *module;   /* "tilelang.language" */
      const char *name;     /* from-import name, or NULL */
      const char *alias;    /* as-name, or NULL */
    } import;
  } u;
};

typedef struct tl_ast_module { tl_ast_block body; } tl_ast_module;

/* Parses source into *out (nodes in arena a, identifiers and operator
 * strings interned in names).  Syntax errors go to d with their location
 * (the first error is at the fault: "expected ':'" at the end of a def
 * line, "'(' was never closed" at the opening parenthesis, "inconsistent
 * use of tabs and spaces in indentation" at the line, ...).  Returns false
 * when an error was reported.  Never reads past len. */
bool tl_parse_python(tl_arena *a, tl_intern *names, tl_diag *d, const char *source,
                     size_t len, const char *filename, tl_ast_module *out);

/* Prints an AST expression as source text (for messages). */
void tl_ast_print_expr(tl_strbuf *out, const tl_ast_expr *e);

#endif
