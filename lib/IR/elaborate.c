/* elaborate.c — the TileLang front end's elaborator: evaluates a parsed
 * kernel file (lib/IR/ast.h) and builds tile IR (lib/IR/tir.h).
 *
 * Role: tl_frontend_parse = tl_parse_python + this.  Everything that needs
 * the source text is checked here: names, arity, keywords, value kinds, -D
 * bindings.  Shapes, scopes, dtypes of tile ops etc. are the verifier's.
 *
 * Algorithm: a small interpreter over compile-time values (`val`: None,
 * bool, int, float, str, dtype, tuple/list, dict, IR expression, buffer,
 * buffer subscript, gemm policy, namespaces such as `T`, opaque host values)
 * with Python semantics for constant arithmetic (int64 with overflow
 * errors, true and floor division).  Names live in a chain of scopes (module
 * → factory → prim_func blocks).  The module is processed in two phases:
 * (1) imports, module constants (overridden by -D) and classification of
 * module-level defs (factory: decorated with tilelang.jit or containing a
 * @T.prim_func; bare @T.prim_func; other defs are host code and skipped);
 * (2) each factory is run (parameters from -D or defaults) until it returns
 * its prim_func, and each bare prim_func is elaborated.  Inside a prim_func,
 * statements become IR: compile-time values stay values (no IR), other
 * expressions become IR through the folding tl_ir_* constructors.  Values
 * remember the -D definition they came from, so that a wrong-kind value is
 * reported where it is used, with a note naming the -D.
 *
 * Errors: one per faulty statement; a name whose definition failed is
 * bound to a "poison" value, so later uses fail silently instead of
 * cascading.  Recursion over expressions and blocks is limited to depth
 * MAX_DEPTH. */
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "IR/visit.h"
#include "IR/ast.h"
#include "IR/tir.h"

#define MAX_DEPTH 200
#define MAX_CONST_LEN 100000 /* longest string / tuple built by constant * */

/* ================================================================ values */

typedef enum vkind {
  V_POISON,     /* result of a failed definition: uses fail silently */
  V_NONE, V_BOOL, V_INT, V_FLOAT, V_STR, V_DTYPE, V_TUPLE, V_DICT,
  V_EXPR,       /* an IR expression */
  V_BUFFER,     /* a buffer (parameter or allocation) */
  V_BUFREF,     /* buffer[items]: a load, a region or a region corner */
  V_POLICY,     /* T.GemmWarpPolicy.X */
  V_NS,         /* a namespace: T, tilelang, T.GemmWarpPolicy, tilelang.jit */
  V_FUNC,       /* T.name (fname) or a Python builtin (builtin = true) */
  V_OPAQUE,     /* a host value (torch, numpy, a Python function) */
  V_PRIMFUNC,   /* an elaborated @T.prim_func */
  V_TENSORTYPE, /* T.Tensor(shape, dtype) */
  V_LAZY        /* a module constant, evaluated on first use */
} vkind;

enum { NS_T, NS_TILELANG, NS_POLICY, NS_JIT };

typedef struct ritem {
  bool is_slice;
  tl_expr *min, *extent;
  tl_loc loc;
} ritem;

typedef struct val val;
struct val {
  vkind k;
  bool is_list;   /* V_TUPLE: written as a list */
  bool builtin;   /* V_FUNC */
  const tl_define *origin; /* the -D that produced this value, or NULL */
  union {
    bool b;
    int64_t i;
    double f;
    const char *s;                /* V_STR (NUL-terminated) */
    tl_dtype dt;
    struct { int n; val **items; } tup;
    struct { int n; val **keys, **vals; tl_loc *klocs, *vlocs; } dict;
    tl_expr *e;
    tl_buffer *buf;
    struct { tl_buffer *buf; int n; ritem *items; bool corner; } ref;
    int policy;
    int ns;
    const char *fname;
    struct { const char *desc; const char *module; } op;
    tl_primfunc *pf;
    struct { int ndim; tl_expr **dims; tl_dtype dt; } tt;
    struct { const tl_ast_expr *ast; val *cached; bool busy; } lazy;
  } u;
  bool params_ok; /* V_PRIMFUNC: parameters elaborated without error */
};

/* Kinds of name bindings (what a redefinition check needs to know). */
enum { BK_CONST, BK_LET, BK_LOOP, BK_BLOCK, BK_PARAM, BK_TENSOR, BK_ALLOC };

typedef struct binding { val *v; tl_loc loc; int kind; } binding;

typedef struct scope {
  struct scope *parent;
  tl_map map;     /* interned name -> binding* */
  bool in_pf;     /* a scope of a prim_func body */
} scope;

typedef struct elab {
  tl_module *m;
  tl_diag *d;
  tl_arena tmp;            /* values, bindings: freed at the end */
  const char *file;
  const tl_define *defs;
  size_t ndefs;
  val **defvals;           /* parsed -D values (lazily), per index */
  bool *def_used;
  scope *sc;               /* current scope */
  scope *module_scope;
  tl_primfunc *pf;         /* prim_func being elaborated, or NULL */
  bool jit_fast_math;      /* the enclosing tilelang.jit's pass_configs ask for fast math */
  int nkernels;
  bool in_kernel;
  int depth;
  int nerr;
  bool oom;
  TL_VEC(tl_var *) dyn;    /* all T.dynamic symbols, in declaration order */
  TL_VEC(tl_primfunc *) funcs;
} elab;

typedef TL_VEC(tl_stmt *) stmt_vec;
typedef TL_VEC(tl_operand) operand_vec;

static const tl_loc cmdline_loc = {"<command line>", 0, 0};

/* ========================================================= diagnostics */

static void err(elab *E, tl_loc loc, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void err(elab *E, tl_loc loc, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  tl_diag_vreport(E->d, TL_DIAG_ERROR, loc, fmt, ap);
  va_end(ap);
  E->nerr++;
}

static void note_origin(elab *E, const val *v) {
  if (v && v->origin)
    tl_note(E->d, cmdline_loc, "'%s' was set by -D %s=%s", v->origin->name, v->origin->name,
            v->origin->value ? v->origin->value : "");
}

/* An error about value v, followed by the note naming its -D. */
static void err_val(elab *E, tl_loc loc, const val *v, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
static void err_val(elab *E, tl_loc loc, const val *v, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  tl_diag_vreport(E->d, TL_DIAG_ERROR, loc, fmt, ap);
  va_end(ap);
  E->nerr++;
  note_origin(E, v);
}

static void *oom(elab *E) {
  if (!E->oom) {
    E->oom = true;
    err(E, TL_LOC_NONE, "out of memory");
  }
  return NULL;
}

static void *talloc(elab *E, size_t n) {
  void *p = tl_arena_alloc(&E->tmp, n ? n : 1);
  return p ? p : oom(E);
}
static void *malloc_ir(elab *E, size_t n) {
  void *p = tl_arena_alloc(&E->m->arena, n ? n : 1);
  return p ? p : oom(E);
}
/* Checks an IR constructor's result (NULL only on OOM). */
static tl_expr *chk(elab *E, tl_expr *e) { return e ? e : oom(E); }

static const char *tprintf(elab *E, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static const char *tprintf(elab *E, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  char *s = NULL;
  int n = vasprintf(&s, fmt, ap);
  va_end(ap);
  if (n < 0 || !s) {
    oom(E);
    return "";
  }
  char *r = tl_arena_strdup(&E->tmp, s);
  free(s);
  return r ? r : (oom(E), "");
}

/* ================================================================ values */

static val *mk(elab *E, vkind k) {
  val *v = talloc(E, sizeof *v);
  if (v) v->k = k;
  return v;
}
static val *mk_int(elab *E, int64_t i) {
  val *v = mk(E, V_INT);
  if (v) v->u.i = i;
  return v;
}
static val *mk_float(elab *E, double f) {
  val *v = mk(E, V_FLOAT);
  if (v) v->u.f = f;
  return v;
}
static val *mk_bool(elab *E, bool b) {
  val *v = mk(E, V_BOOL);
  if (v) v->u.b = b;
  return v;
}
static val *mk_str(elab *E, const char *s) {
  val *v = mk(E, V_STR);
  if (!v) return NULL;
  v->u.s = tl_arena_strdup(&E->tmp, s ? s : "");
  return v->u.s ? v : oom(E);
}
static val *mk_expr(elab *E, tl_expr *e) {
  if (!e) return NULL;
  val *v = mk(E, V_EXPR);
  if (v) v->u.e = e;
  return v;
}
static val *mk_dtype(elab *E, tl_dtype t) {
  val *v = mk(E, V_DTYPE);
  if (v) v->u.dt = t;
  return v;
}
static val *mk_opaque(elab *E, const char *desc, const char *module) {
  val *v = mk(E, V_OPAQUE);
  if (!v) return NULL;
  v->u.op.desc = desc;
  v->u.op.module = module;
  return v;
}
static val *mk_tuple(elab *E, int n, bool is_list) {
  val *v = mk(E, V_TUPLE);
  if (!v) return NULL;
  v->is_list = is_list;
  v->u.tup.n = n;
  if (n > 0 && !(v->u.tup.items = talloc(E, sizeof(val *) * (size_t)n))) return NULL;
  return v;
}

static const char *policy_names[3] = {"Square", "FullRow", "FullCol"};

/* Python type name of a value (for "unsupported operand types"). */
static const char *type_name(const val *v) {
  switch (v->k) {
  case V_NONE: return "NoneType";
  case V_BOOL: return "bool";
  case V_INT: return "int";
  case V_FLOAT: return "float";
  case V_STR: return "str";
  case V_DTYPE: return "dtype";
  case V_TUPLE: return v->is_list ? "list" : "tuple";
  case V_DICT: return "dict";
  case V_EXPR: return "PrimExpr";
  case V_BUFFER: return "Buffer";
  case V_BUFREF: return "BufferRegion";
  case V_POLICY: return "GemmWarpPolicy";
  case V_NS: return "module";
  case V_FUNC: return "function";
  case V_OPAQUE: return "object";
  case V_PRIMFUNC: return "PrimFunc";
  case V_TENSORTYPE: return "Tensor";
  default: return "value";
  }
}

/* "string 'abc'", "float 1.5", "buffer 'A'", ... for messages. */
static const char *describe(elab *E, const val *v) {
  switch (v->k) {
  case V_NONE: return "None";
  case V_BOOL: return v->u.b ? "bool True" : "bool False";
  case V_INT: return tprintf(E, "int %lld", (long long)v->u.i);
  case V_FLOAT: return tprintf(E, "float %g", v->u.f);
  case V_STR: return tprintf(E, "string '%.100s'", v->u.s);
  case V_DTYPE: return tprintf(E, "dtype %s", tl_dtype_name(v->u.dt));
  case V_TUPLE: return v->is_list ? "a list" : "a tuple";
  case V_DICT: return "a dict";
  case V_EXPR: return tprintf(E, "an expression of type %s", tl_dtype_name(v->u.e->dtype));
  case V_BUFFER: return tprintf(E, "buffer '%s'", v->u.buf->name);
  case V_BUFREF: return tprintf(E, "a region of buffer '%s'", v->u.ref.buf->name);
  case V_POLICY: return tprintf(E, "T.GemmWarpPolicy.%s", policy_names[v->u.policy]);
  case V_NS:
    return v->u.ns == NS_T ? "module 'T'"
           : v->u.ns == NS_POLICY ? "T.GemmWarpPolicy"
           : v->u.ns == NS_JIT ? "tilelang.jit" : "module 'tilelang'";
  case V_FUNC: return v->builtin ? tprintf(E, "function '%s'", v->u.fname)
                                 : tprintf(E, "function 'T.%s'", v->u.fname);
  case V_OPAQUE: return tprintf(E, "'%s'", v->u.op.desc);
  case V_PRIMFUNC: return tprintf(E, "prim_func '%s'", v->u.pf->name);
  case V_TENSORTYPE: return "a tensor type";
  default: return "a value";
  }
}

static bool is_ir(const val *v) {
  return v->k == V_EXPR || v->k == V_BUFREF ||
         (v->k == V_BUFFER && v->u.buf->scope == TL_SCOPE_LOCAL_VAR);
}
static bool is_num(const val *v) { return v->k == V_INT || v->k == V_BOOL || v->k == V_FLOAT; }
static int64_t as_i(const val *v) { return v->k == V_BOOL ? (int64_t)v->u.b : v->u.i; }
static double as_f(const val *v) { return v->k == V_FLOAT ? v->u.f : (double)as_i(v); }

/* Truthiness of a compile-time value; false when v is not a constant. */
static bool truthy(const val *v, bool *out) {
  int64_t c;
  switch (v->k) {
  case V_NONE: *out = false; return true;
  case V_BOOL: *out = v->u.b; return true;
  case V_INT: *out = v->u.i != 0; return true;
  case V_FLOAT: *out = v->u.f != 0; return true;
  case V_STR: *out = v->u.s[0] != 0; return true;
  case V_TUPLE: *out = v->u.tup.n != 0; return true;
  case V_DICT: *out = v->u.dict.n != 0; return true;
  case V_DTYPE: case V_POLICY: case V_PRIMFUNC: case V_NS: case V_FUNC:
    *out = true;
    return true;
  case V_EXPR:
    if (tl_expr_is_const_int(v->u.e, &c)) { *out = c != 0; return true; }
    if (v->u.e->kind == TL_EXPR_FLOAT) { *out = v->u.e->u.fval != 0; return true; }
    return false;
  default: return false;
  }
}

/* ====================================================== -D definitions */

static int find_define(const elab *E, const char *name) {
  for (size_t i = E->ndefs; i-- > 0;)
    if (E->defs[i].name && !strcmp(E->defs[i].name, name)) return (int)i;
  return -1;
}

static bool all_of(const char *s, const char *set) {
  for (; *s; s++)
    if (!strchr(set, *s)) return false;
  return true;
}

/* Parses "-D name=value" text as Python would read a literal; bare words
 * are strings. */
static val *parse_define(elab *E, int idx) {
  if (E->defvals[idx]) return E->defvals[idx];
  const tl_define *def = &E->defs[idx];
  const char *t = def->value ? def->value : "";
  size_t n = strlen(t);
  val *v = NULL;
  if (!strcmp(t, "True") || !strcmp(t, "False")) {
    v = mk_bool(E, t[0] == 'T');
  } else if (!strcmp(t, "None")) {
    v = mk(E, V_NONE);
  } else if (n >= 2 && (t[0] == '\'' || t[0] == '"') && t[n - 1] == t[0]) {
    char *s = tl_arena_strndup(&E->tmp, t + 1, n - 2);
    if (!s) return oom(E);
    v = mk(E, V_STR);
    if (v) v->u.s = s;
  } else {
    const char *p = t;
    bool neg = false;
    if (*p == '-' || *p == '+') neg = *p++ == '-';
    int base = 10;
    const char *digits = p;
    if (p[0] == '0' && (p[1] == 'x' || p[1] == 'X')) base = 16, digits = p + 2;
    else if (p[0] == '0' && (p[1] == 'o' || p[1] == 'O')) base = 8, digits = p + 2;
    else if (p[0] == '0' && (p[1] == 'b' || p[1] == 'B')) base = 2, digits = p + 2;
    bool isint = *digits != 0;
    for (const char *q = digits; *q && isint; q++) {
      int dv = isdigit((unsigned char)*q) ? *q - '0'
               : isxdigit((unsigned char)*q) ? (tolower((unsigned char)*q) - 'a' + 10) : 99;
      if (*q == '_') continue;
      if (dv >= base) isint = false;
    }
    if (isint) {
      uint64_t acc = 0;
      bool over = false;
      for (const char *q = digits; *q; q++) {
        if (*q == '_') continue;
        int dv = isdigit((unsigned char)*q) ? *q - '0' : (tolower((unsigned char)*q) - 'a' + 10);
        if (acc > (UINT64_MAX - (uint64_t)dv) / (uint64_t)base) over = true;
        acc = acc * (uint64_t)base + (uint64_t)dv;
      }
      if (over || acc > (uint64_t)INT64_MAX + (neg ? 1u : 0u)) {
        err(E, cmdline_loc, "-D %s=%s: integer out of range", def->name, t);
        E->defvals[idx] = mk(E, V_POISON);
        return E->defvals[idx];
      }
      v = mk_int(E, neg ? (acc == (uint64_t)INT64_MAX + 1 ? INT64_MIN : -(int64_t)acc)
                        : (int64_t)acc);
    } else if (n > 0 && all_of(t, "0123456789+-.eE_") && strpbrk(t, "0123456789")) {
      char *end = NULL;
      errno = 0;
      double f = strtod(t, &end);
      if (end && *end == 0) v = mk_float(E, f);
      else v = mk_str(E, t);
    } else {
      v = mk_str(E, t);
    }
  }
  if (!v) return NULL;
  v->origin = def;
  E->defvals[idx] = v;
  return v;
}

/* ================================================================ scopes */

static scope *push_scope(elab *E, bool in_pf) {
  scope *s = talloc(E, sizeof *s);
  if (!s) return NULL;
  tl_map_init(&s->map);
  s->parent = E->sc;
  s->in_pf = in_pf;
  E->sc = s;
  return s;
}
static void pop_scope(elab *E, scope *s) {
  tl_map_free(&s->map);
  E->sc = s->parent;
}

static binding *lookup(elab *E, const char *name, scope **where) {
  for (scope *s = E->sc; s; s = s->parent) {
    binding *b = tl_map_get(&s->map, name, NULL);
    if (b) {
      if (where) *where = s;
      return b;
    }
  }
  return NULL;
}

static bool bind(elab *E, scope *s, const char *name, val *v, tl_loc loc, int kind) {
  binding *b = talloc(E, sizeof *b);
  if (!b) return false;
  b->v = v;
  b->loc = loc;
  b->kind = kind;
  if (!tl_map_put(&s->map, name, b)) return oom(E), false;
  return true;
}

static const char *intern(elab *E, const char *s) {
  const char *r = tl_intern_str(&E->m->names, s);
  return r ? r : oom(E);
}

/* ============================================================ conversions */

static tl_expr *lit_int(elab *E, tl_loc loc, int64_t v) {
  tl_dtype t = (v >= INT32_MIN && v <= INT32_MAX) ? TL_INT32 : TL_INT64;
  return chk(E, tl_ir_int(E->m, loc, t, v));
}

static tl_expr *load_var0(elab *E, tl_loc loc, tl_buffer *b) {
  tl_expr *zero = lit_int(E, loc, 0);
  if (!zero) return NULL;
  return chk(E, tl_ir_load(E->m, loc, b, 1, &zero));
}

/* A scalar IR expression for value v used at loc. */
static tl_expr *to_expr(elab *E, val *v, tl_loc loc) {
  if (!v || v->k == V_POISON) return NULL;
  switch (v->k) {
  case V_INT: return lit_int(E, loc, v->u.i);
  case V_BOOL: return chk(E, tl_ir_int(E->m, loc, TL_BOOL, v->u.b));
  case V_FLOAT: return chk(E, tl_ir_float(E->m, loc, TL_FLOAT32, v->u.f));
  case V_EXPR: return v->u.e;
  case V_BUFFER:
    if (v->u.buf->scope == TL_SCOPE_LOCAL_VAR) return load_var0(E, loc, v->u.buf);
    err(E, loc, "buffer '%s' cannot be used as a scalar value; index it (%s[...])",
        v->u.buf->name, v->u.buf->name);
    return NULL;
  case V_BUFREF: {
    int n = v->u.ref.n;
    tl_expr **idx = malloc_ir(E, sizeof(tl_expr *) * (size_t)(n ? n : 1));
    if (!idx) return NULL;
    for (int i = 0; i < n; i++) {
      if (v->u.ref.items[i].is_slice) {
        err(E, v->u.ref.items[i].loc,
            "a slice of buffer '%s' cannot be used as a scalar value", v->u.ref.buf->name);
        return NULL;
      }
      idx[i] = v->u.ref.items[i].min;
    }
    tl_expr *ld = chk(E, tl_ir_load(E->m, loc, v->u.ref.buf, n, idx));
    /* a vector load of the SIMT IR: the last index is a T.Ramp */
    if (ld && n > 0 && idx[n - 1]->dtype.lanes > 1) ld->dtype.lanes = idx[n - 1]->dtype.lanes;
    return ld;
  }
  case V_OPAQUE:
    err(E, loc, "'%s' cannot be used in a kernel (it is a host value, not TileLang)",
        v->u.op.desc);
    return NULL;
  default:
    err_val(E, loc, v, "expected a scalar value, got %s", describe(E, v));
    return NULL;
  }
}

/* An integer IR expression ("what must be an integer, got ..."). */
static tl_expr *to_int_expr(elab *E, val *v, tl_loc loc, const char *what) {
  if (!v || v->k == V_POISON) return NULL;
  if (v->k == V_INT) return lit_int(E, loc, v->u.i);
  if (v->k == V_EXPR || v->k == V_BUFREF ||
      (v->k == V_BUFFER && v->u.buf->scope == TL_SCOPE_LOCAL_VAR)) {
    tl_expr *e = to_expr(E, v, loc);
    if (!e) return NULL;
    if (!tl_dtype_is_int(e->dtype)) {
      err_val(E, loc, v, "%s must be an integer, got an expression of type %s", what,
              tl_dtype_name(e->dtype));
      return NULL;
    }
    return e;
  }
  if (v->k == V_OPAQUE) return to_expr(E, v, loc);
  err_val(E, loc, v, "%s must be an integer, got %s", what, describe(E, v));
  return NULL;
}

static bool dtype_like(const char *s) {
  static const char *const pre[] = {"float", "int", "uint", "bfloat", "tfloat", "bool", "half",
                                    "double"};
  for (size_t i = 0; i < sizeof pre / sizeof pre[0]; i++)
    if (!strncmp(s, pre[i], strlen(pre[i]))) return true;
  return false;
}

static bool to_dtype(elab *E, val *v, tl_loc loc, tl_dtype *out) {
  if (!v || v->k == V_POISON) return false;
  if (v->k == V_DTYPE) {
    *out = v->u.dt;
    return true;
  }
  if (v->k == V_STR) {
    if (tl_dtype_parse(v->u.s, out)) return true;
    err_val(E, loc, v, "unknown dtype '%.100s'", v->u.s);
    return false;
  }
  if (v->k == V_OPAQUE) {
    err(E, loc, "'%s' is not a dtype TileLang knows", v->u.op.desc);
    return false;
  }
  err_val(E, loc, v, "expected a dtype, got %s", describe(E, v));
  return false;
}

/* A constant int from v ("what must be an integer constant"). */
static bool to_const_int(elab *E, val *v, tl_loc loc, const char *what, int64_t *out) {
  if (!v || v->k == V_POISON) return false;
  if (v->k == V_INT) {
    *out = v->u.i;
    return true;
  }
  if (v->k == V_EXPR && tl_expr_is_const_int(v->u.e, out) && tl_dtype_is_int(v->u.e->dtype))
    return true;
  err_val(E, loc, v, "%s must be an integer constant, got %s", what, describe(E, v));
  return false;
}

/* ================================================ constant arithmetic */

static bool map_binop(const char *op, tl_binop *out) {
  static const struct { const char *s; tl_binop op; } t[] = {
      {"+", TL_OP_ADD}, {"-", TL_OP_SUB}, {"*", TL_OP_MUL}, {"/", TL_OP_DIV},
      {"//", TL_OP_FLOORDIV}, {"%", TL_OP_FLOORMOD}, {"**", TL_OP_POW}, {"&", TL_OP_BITAND},
      {"|", TL_OP_BITOR}, {"^", TL_OP_BITXOR}, {"<<", TL_OP_SHL}, {">>", TL_OP_SHR},
      {"==", TL_OP_EQ}, {"!=", TL_OP_NE}, {"<", TL_OP_LT}, {"<=", TL_OP_LE}, {">", TL_OP_GT},
      {">=", TL_OP_GE}, {"and", TL_OP_AND}, {"or", TL_OP_OR}};
  for (size_t i = 0; i < sizeof t / sizeof t[0]; i++)
    if (!strcmp(t[i].s, op)) {
      *out = t[i].op;
      return true;
    }
  return false;
}

static val *type_error(elab *E, tl_loc loc, const char *op, val *a, val *b) {
  err(E, loc, "unsupported operand types for %s: '%s' and '%s'", op, type_name(a),
      type_name(b));
  note_origin(E, a);
  if (!a->origin || a->origin != b->origin) note_origin(E, b);
  return NULL;
}

static val *overflow(elab *E, tl_loc loc, val *a, val *b) {
  err(E, loc, "integer overflow in constant expression");
  note_origin(E, a);
  if (b && b->origin != a->origin) note_origin(E, b);
  return NULL;
}

static val *const_int_binop(elab *E, const char *op, val *a, val *b, tl_loc loc) {
  int64_t x = as_i(a), y = as_i(b), r = 0;
  if (!strcmp(op, "+")) {
    if (__builtin_add_overflow(x, y, &r)) return overflow(E, loc, a, b);
  } else if (!strcmp(op, "-")) {
    if (__builtin_sub_overflow(x, y, &r)) return overflow(E, loc, a, b);
  } else if (!strcmp(op, "*")) {
    if (__builtin_mul_overflow(x, y, &r)) return overflow(E, loc, a, b);
  } else if (!strcmp(op, "/")) {
    if (y == 0) return err(E, loc, "division by zero"), NULL;
    return mk_float(E, (double)x / (double)y);
  } else if (!strcmp(op, "//") || !strcmp(op, "%")) {
    if (y == 0) return err(E, loc, "integer division or modulo by zero"), NULL;
    if (x == INT64_MIN && y == -1) {
      if (op[0] == '%') return mk_int(E, 0);
      return overflow(E, loc, a, b);
    }
    int64_t q = x / y, m = x % y;
    if (m != 0 && ((m < 0) != (y < 0))) q--, m += y;
    r = op[0] == '%' ? m : q;
  } else if (!strcmp(op, "**")) {
    if (y < 0) return mk_float(E, pow((double)x, (double)y));
    int64_t base = x, acc = 1;
    while (y > 0) {
      if (y & 1)
        if (__builtin_mul_overflow(acc, base, &acc)) return overflow(E, loc, a, b);
      y >>= 1;
      if (y && __builtin_mul_overflow(base, base, &base)) return overflow(E, loc, a, b);
    }
    r = acc;
  } else if (!strcmp(op, "&") || !strcmp(op, "|") || !strcmp(op, "^")) {
    r = op[0] == '&' ? (x & y) : op[0] == '|' ? (x | y) : (x ^ y);
    if (a->k == V_BOOL && b->k == V_BOOL) return mk_bool(E, r != 0);
  } else if (!strcmp(op, "<<")) {
    if (y < 0) return err(E, loc, "negative shift count"), NULL;
    if (x == 0) return mk_int(E, 0);
    if (y >= 63) return overflow(E, loc, a, b);
    r = (int64_t)((uint64_t)x << y);
    if ((r >> y) != x) return overflow(E, loc, a, b);
  } else if (!strcmp(op, ">>")) {
    if (y < 0) return err(E, loc, "negative shift count"), NULL;
    r = y >= 64 ? (x < 0 ? -1 : 0) : (x >> y);
  } else {
    return type_error(E, loc, op, a, b);
  }
  return mk_int(E, r);
}

static val *const_float_binop(elab *E, const char *op, val *a, val *b, tl_loc loc) {
  double x = as_f(a), y = as_f(b);
  if (!strcmp(op, "+")) return mk_float(E, x + y);
  if (!strcmp(op, "-")) return mk_float(E, x - y);
  if (!strcmp(op, "*")) return mk_float(E, x * y);
  if (!strcmp(op, "/") || !strcmp(op, "//") || !strcmp(op, "%")) {
    if (y == 0) return err(E, loc, "float division by zero"), NULL;
    if (op[0] == '/' && op[1] == 0) return mk_float(E, x / y);
    double m = fmod(x, y);
    if (m != 0 && ((m < 0) != (y < 0))) m += y;
    if (op[0] == '%') return mk_float(E, m);
    return mk_float(E, floor(x / y));
  }
  if (!strcmp(op, "**")) return mk_float(E, pow(x, y));
  return type_error(E, loc, op, a, b);
}

static bool dtype_of_const(const val *v, tl_dtype *t) {
  if (v->k == V_DTYPE) return *t = v->u.dt, true;
  if (v->k == V_STR) return tl_dtype_parse(v->u.s, t);
  return false;
}

/* Equality of two constants (Python ==), depth-limited for tuples. */
static bool const_equal(const val *a, const val *b, int depth) {
  if (depth > MAX_DEPTH) return false;
  if (is_num(a) && is_num(b)) {
    if (a->k == V_FLOAT || b->k == V_FLOAT) return as_f(a) == as_f(b);
    return as_i(a) == as_i(b);
  }
  if (a->k == V_STR && b->k == V_STR) return !strcmp(a->u.s, b->u.s);
  if ((a->k == V_DTYPE || b->k == V_DTYPE) && (a->k == V_STR || a->k == V_DTYPE) &&
      (b->k == V_STR || b->k == V_DTYPE)) {
    tl_dtype x, y;
    if (!dtype_of_const(a, &x) || !dtype_of_const(b, &y)) return false;
    return tl_dtype_eq(x, y);
  }
  if (a->k == V_NONE || b->k == V_NONE) return a->k == b->k;
  if (a->k == V_POLICY && b->k == V_POLICY) return a->u.policy == b->u.policy;
  if (a->k == V_TUPLE && b->k == V_TUPLE) {
    if (a->u.tup.n != b->u.tup.n || a->is_list != b->is_list) return false;
    for (int i = 0; i < a->u.tup.n; i++)
      if (!const_equal(a->u.tup.items[i], b->u.tup.items[i], depth + 1)) return false;
    return true;
  }
  if (a->k == V_BUFFER && b->k == V_BUFFER) return a->u.buf == b->u.buf;
  return a == b;
}

static val *const_compare(elab *E, const char *op, val *a, val *b, tl_loc loc) {
  if (!strcmp(op, "==")) return mk_bool(E, const_equal(a, b, 0));
  if (!strcmp(op, "!=")) return mk_bool(E, !const_equal(a, b, 0));
  int c;
  if (is_num(a) && is_num(b)) {
    if (a->k == V_FLOAT || b->k == V_FLOAT) {
      double x = as_f(a), y = as_f(b);
      if (isnan(x) || isnan(y)) return mk_bool(E, false);
      c = x < y ? -1 : x > y;
    } else {
      int64_t x = as_i(a), y = as_i(b);
      c = x < y ? -1 : x > y;
    }
  } else if (a->k == V_STR && b->k == V_STR) {
    c = strcmp(a->u.s, b->u.s);
  } else {
    err(E, loc, "'%s' not supported between '%s' and '%s'", op, type_name(a), type_name(b));
    note_origin(E, a);
    note_origin(E, b);
    return NULL;
  }
  bool r = !strcmp(op, "<") ? c < 0 : !strcmp(op, "<=") ? c <= 0 : !strcmp(op, ">") ? c > 0 : c >= 0;
  return mk_bool(E, r);
}

static bool is_compare(const char *op) {
  return !strcmp(op, "==") || !strcmp(op, "!=") || !strcmp(op, "<") || !strcmp(op, "<=") ||
         !strcmp(op, ">") || !strcmp(op, ">=");
}

/* a OP b for any two values: constants fold in Python semantics, IR values
 * build IR.  Opaque host values stay opaque outside kernels. */
static val *binop(elab *E, const char *op, val *a, val *b, tl_loc loc) {
  if (!a || !b || a->k == V_POISON || b->k == V_POISON) return NULL;
  if (a->k == V_OPAQUE || b->k == V_OPAQUE) {
    if (E->pf) {
      val *o = a->k == V_OPAQUE ? a : b;
      err(E, loc, "'%s' cannot be used in a kernel (it is a host value, not TileLang)",
          o->u.op.desc);
      return NULL;
    }
    return a->k == V_OPAQUE ? a : b;
  }
  if (is_ir(a) || is_ir(b)) {
    tl_binop bop;
    if (!map_binop(op, &bop)) return type_error(E, loc, op, a, b);
    tl_expr *x = to_expr(E, a, loc);
    if (!x) return NULL;
    tl_expr *y = to_expr(E, b, loc);
    if (!y) return NULL;
    return mk_expr(E, chk(E, tl_ir_binary(E->m, loc, bop, x, y)));
  }
  if (is_compare(op)) return const_compare(E, op, a, b, loc);
  val *r = NULL;
  if (is_num(a) && is_num(b)) {
    r = (a->k == V_FLOAT || b->k == V_FLOAT) ? const_float_binop(E, op, a, b, loc)
                                            : const_int_binop(E, op, a, b, loc);
  } else if (a->k == V_STR && b->k == V_STR && !strcmp(op, "+")) {
    r = mk_str(E, tprintf(E, "%s%s", a->u.s, b->u.s));
  } else if (((a->k == V_STR || a->k == V_TUPLE) && (b->k == V_INT || b->k == V_BOOL)) &&
             !strcmp(op, "*")) {
    int64_t times = as_i(b);
    size_t unit = a->k == V_STR ? strlen(a->u.s) : (size_t)a->u.tup.n;
    if (times < 0) times = 0;
    if (unit && (uint64_t)times > MAX_CONST_LEN / unit) {
      err(E, loc, "constant sequence too long");
      return NULL;
    }
    if (a->k == V_STR) {
      char *s = talloc(E, unit * (size_t)times + 1);
      if (!s) return NULL;
      for (int64_t i = 0; i < times; i++) memcpy(s + unit * (size_t)i, a->u.s, unit);
      r = mk(E, V_STR);
      if (r) r->u.s = s;
    } else {
      r = mk_tuple(E, (int)(unit * (size_t)times), a->is_list);
      if (r)
        for (int64_t i = 0; i < times; i++)
          memcpy(r->u.tup.items + unit * (size_t)i, a->u.tup.items, unit * sizeof(val *));
    }
  } else if (a->k == V_TUPLE && b->k == V_TUPLE && !strcmp(op, "+")) {
    if ((size_t)a->u.tup.n + (size_t)b->u.tup.n > MAX_CONST_LEN) {
      err(E, loc, "constant sequence too long");
      return NULL;
    }
    r = mk_tuple(E, a->u.tup.n + b->u.tup.n, a->is_list);
    if (r) {
      if (a->u.tup.n) memcpy(r->u.tup.items, a->u.tup.items, sizeof(val *) * (size_t)a->u.tup.n);
      if (b->u.tup.n)
        memcpy(r->u.tup.items + a->u.tup.n, b->u.tup.items, sizeof(val *) * (size_t)b->u.tup.n);
    }
  } else {
    return type_error(E, loc, op, a, b);
  }
  if (r && !r->origin) r->origin = a->origin ? a->origin : b->origin;
  return r;
}

static val *unop(elab *E, const char *op, val *a, tl_loc loc) {
  if (!a || a->k == V_POISON) return NULL;
  if (a->k == V_OPAQUE) return binop(E, op, a, a, loc);
  if (!strcmp(op, "not")) {
    bool t;
    if (truthy(a, &t)) return mk_bool(E, !t);
    tl_expr *x = to_expr(E, a, loc);
    return x ? mk_expr(E, chk(E, tl_ir_unary(E->m, loc, TL_OP_NOT, x))) : NULL;
  }
  if (is_ir(a)) {
    tl_expr *x = to_expr(E, a, loc);
    if (!x) return NULL;
    if (!strcmp(op, "+")) return mk_expr(E, x);
    return mk_expr(E, chk(E, tl_ir_unary(E->m, loc, op[0] == '~' ? TL_OP_BITNOT : TL_OP_NEG, x)));
  }
  val *r = NULL;
  if (a->k == V_FLOAT && op[0] != '~') {
    r = mk_float(E, op[0] == '-' ? -a->u.f : a->u.f);
  } else if (a->k == V_INT || a->k == V_BOOL) {
    int64_t x = as_i(a);
    if (op[0] == '-') {
      if (x == INT64_MIN) return overflow(E, loc, a, NULL);
      r = mk_int(E, -x);
    } else if (op[0] == '~') {
      r = mk_int(E, ~x);
    } else {
      r = mk_int(E, x);
    }
  } else {
    err_val(E, loc, a, "bad operand type for unary %s: '%s'", op, type_name(a));
    return NULL;
  }
  if (r) r->origin = a->origin;
  return r;
}

/* ============================================================ expressions */

static val *eval(elab *E, const tl_ast_expr *x);
static val *atomic_add_value(elab *E, const tl_ast_expr *x, const char *fn);

static const char *const t_functions[] = {
    "prim_func", "Tensor", "Buffer", "dynamic", "symbolic", "Kernel", "alloc_shared",
    "alloc_fragment", "alloc_local", "alloc_var", "Parallel", "Pipelined", "serial", "unroll",
    "vectorized", "func_attr", "Cast", "infinity", "ceildiv", "if_then_else", "Select", "max",
    "min", "Ramp", "Broadcast", "thread_binding", NULL};
static const char *const py_builtins[] = {"min", "max", "abs", "int", "float", "bool", "len",
                                          "range", "print", NULL};

static bool in_list(const char *const *list, const char *s) {
  for (; *list; list++)
    if (!strcmp(*list, s)) return true;
  return false;
}

static val *mk_func(elab *E, const char *name, bool builtin) {
  val *v = mk(E, V_FUNC);
  if (!v) return NULL;
  v->u.fname = name;
  v->builtin = builtin;
  return v;
}

static val *mk_ns(elab *E, int ns) {
  val *v = mk(E, V_NS);
  if (v) v->u.ns = ns;
  return v;
}

/* T.<name>, reported at name_loc when unknown. */
static val *t_member(elab *E, const char *name, tl_loc name_loc) {
  tl_dtype dt;
  if (tl_dtype_parse(name, &dt)) return mk_dtype(E, dt);
  if (!strcmp(name, "GemmWarpPolicy")) return mk_ns(E, NS_POLICY);
  if (in_list(t_functions, name) || tl_tile_op_lookup(name) >= 0 ||
      tl_intrinsic_lookup(name) >= 0)
    return mk_func(E, name, false);
  if (dtype_like(name)) err(E, name_loc, "unknown dtype 'T.%s'", name);
  else err(E, name_loc, "unknown name 'T.%s'", name);
  return NULL;
}

static val *force(elab *E, val *lz, tl_loc use) {
  if (lz->u.lazy.cached) return lz->u.lazy.cached->k == V_POISON ? NULL : lz->u.lazy.cached;
  if (lz->u.lazy.busy) {
    err(E, use, "circular definition of a module constant");
    return NULL;
  }
  lz->u.lazy.busy = true;
  scope *sc = E->sc;
  tl_primfunc *pf = E->pf;
  int depth = E->depth;
  E->sc = E->module_scope;
  E->pf = NULL;
  val *v = eval(E, lz->u.lazy.ast);
  E->sc = sc;
  E->pf = pf;
  E->depth = depth;
  lz->u.lazy.busy = false;
  lz->u.lazy.cached = v ? v : mk(E, V_POISON);
  return v;
}

static val *eval_name(elab *E, const tl_ast_expr *x) {
  binding *b = lookup(E, x->u.name, NULL);
  if (b) {
    val *v = b->v;
    if (v && v->k == V_LAZY && !(v = force(E, v, x->loc))) return NULL;
    if (!v || v->k == V_POISON) return NULL;
    if (v->k == V_EXPR && v->u.e->kind == TL_EXPR_VAR) {
      val *c = mk_expr(E, chk(E, tl_ir_var(E->m, x->loc, v->u.e->u.var)));
      if (c) c->origin = v->origin;
      return c;
    }
    return v;
  }
  if (in_list(py_builtins, x->u.name)) return mk_func(E, x->u.name, true);
  err(E, x->loc, "name '%s' is not defined", x->u.name);
  return NULL;
}

static val *get_attr(elab *E, val *v, const char *name, tl_loc name_loc) {
  switch (v->k) {
  case V_NS:
    if (v->u.ns == NS_T) return t_member(E, name, name_loc);
    if (v->u.ns == NS_TILELANG) {
      if (!strcmp(name, "language")) return mk_ns(E, NS_T);
      if (!strcmp(name, "jit")) return mk_ns(E, NS_JIT);
      return mk_opaque(E, tprintf(E, "tilelang.%s", name), "tilelang");
    }
    if (v->u.ns == NS_POLICY) {
      for (int i = 0; i < 3; i++)
        if (!strcmp(name, policy_names[i])) {
          val *p = mk(E, V_POLICY);
          if (p) p->u.policy = i;
          return p;
        }
      err(E, name_loc, "unknown GemmWarpPolicy '%s' (expected Square, FullRow or FullCol)", name);
      return NULL;
    }
    break;
  case V_OPAQUE: {
    const char *mod = v->u.op.module;
    if (mod && !strcmp(mod, "math") && !strcmp(v->u.op.desc, "math")) {
      if (!strcmp(name, "pi")) return mk_float(E, M_PI);
      if (!strcmp(name, "e")) return mk_float(E, M_E);
      if (!strcmp(name, "tau")) return mk_float(E, 2 * M_PI);
      if (!strcmp(name, "inf")) return mk_float(E, INFINITY);
      if (!strcmp(name, "nan")) return mk_float(E, NAN);
    }
    tl_dtype dt;
    if (mod && !strcmp(mod, "torch") && !strcmp(v->u.op.desc, "torch") &&
        tl_dtype_parse(name, &dt))
      return mk_dtype(E, dt);
    return mk_opaque(E, tprintf(E, "%s.%s", v->u.op.desc, name), mod);
  }
  case V_BUFFER: {
    tl_buffer *b = v->u.buf;
    if (!strcmp(name, "dtype")) return mk_dtype(E, b->dtype);
    if (!strcmp(name, "ndim")) return mk_int(E, b->ndim);
    if (!strcmp(name, "shape")) {
      val *t = mk_tuple(E, b->ndim, false);
      if (!t) return NULL;
      for (int i = 0; i < b->ndim; i++) {
        int64_t c;
        t->u.tup.items[i] = tl_expr_is_const_int(b->shape[i], &c) ? mk_int(E, c)
                                                                   : mk_expr(E, b->shape[i]);
        if (!t->u.tup.items[i]) return NULL;
      }
      return t;
    }
    break;
  }
  case V_EXPR:
    if (!strcmp(name, "dtype")) return mk_dtype(E, v->u.e->dtype);
    break;
  case V_DTYPE:
    if (!strcmp(name, "bits")) return mk_int(E, v->u.dt.bits);
    if (!strcmp(name, "lanes")) return mk_int(E, v->u.dt.lanes);
    break;
  default: break;
  }
  err_val(E, name_loc, v, "'%s' object has no attribute '%s'", type_name(v), name);
  return NULL;
}

/* ----------------------------------------------------------- subscripts */

static tl_expr *eval_int(elab *E, const tl_ast_expr *x, const char *what) {
  val *v = eval(E, x);
  return v ? to_int_expr(E, v, x->loc, what) : NULL;
}

static tl_expr *extent_sub(elab *E, tl_loc loc, tl_expr *hi, tl_expr *lo);

static val *subscript_buffer(elab *E, tl_buffer *b, const tl_ast_expr *x) {
  int n = x->u.sub.n;
  val *r = mk(E, V_BUFREF);
  if (!r) return NULL;
  r->u.ref.buf = b;
  r->u.ref.n = n;
  r->u.ref.corner = true;
  if (!(r->u.ref.items = talloc(E, sizeof(ritem) * (size_t)(n ? n : 1)))) return NULL;
  for (int d = 0; d < n; d++) {
    const tl_ast_expr *it = x->u.sub.items[d];
    ritem *ri = &r->u.ref.items[d];
    ri->loc = it->loc;
    if (it->kind != TL_AST_SLICE) {
      if (!(ri->min = eval_int(E, it, "a buffer index"))) return NULL;
      if (!(ri->extent = lit_int(E, it->loc, 1))) return NULL;
      continue;
    }
    ri->is_slice = true;
    r->u.ref.corner = false;
    if (it->u.slice.step) {
      err(E, it->u.slice.step->loc, "slices with a step are not supported in buffer regions");
      return NULL;
    }
    tl_expr *lo = it->u.slice.lo ? eval_int(E, it->u.slice.lo, "a slice bound")
                                 : lit_int(E, it->loc, 0);
    if (!lo) return NULL;
    ri->min = lo;
    const tl_ast_expr *hi = it->u.slice.hi;
    if (!hi) {
      if (d >= b->ndim) {
        err(E, it->loc, "too many indices for %d-dimensional buffer '%s'", b->ndim, b->name);
        return NULL;
      }
      ri->extent = extent_sub(E, it->loc, b->shape[d], lo);
    } else if (hi->kind == TL_AST_BINOP && !strcmp(hi->u.bin.op, "+")) {
      /* lo:lo + X has extent X when the left operand is lo itself. */
      tl_expr *l = eval_int(E, hi->u.bin.l, "a slice bound");
      if (!l) return NULL;
      tl_expr *rr = eval_int(E, hi->u.bin.r, "a slice bound");
      if (!rr) return NULL;
      if (tl_expr_equal(l, lo)) {
        ri->extent = rr;
      } else {
        tl_expr *h = chk(E, tl_ir_binary(E->m, hi->loc, TL_OP_ADD, l, rr));
        if (!h) return NULL;
        ri->extent = extent_sub(E, hi->loc, h, lo);
      }
    } else {
      tl_expr *h = eval_int(E, hi, "a slice bound");
      if (!h) return NULL;
      ri->extent = extent_sub(E, hi->loc, h, lo);
    }
    if (!ri->extent) return NULL;
  }
  return r;
}

/* hi - lo for slice extents: when both are affine in the same atoms and
 * the difference is a constant ((bx + 1) * 128 - bx * 128), that constant;
 * otherwise the folded subtraction. */
typedef struct lin_form { int n; const tl_expr *atom[32]; int64_t coef[32]; int64_t c; } lin_form;

static bool linearize(const tl_expr *e, int64_t mult, lin_form *f, int depth) {
  int64_t v, t;
  if (depth > 50 || !tl_dtype_is_int(e->dtype)) return false;
  if (tl_expr_is_const_int(e, &v)) {
    if (__builtin_mul_overflow(v, mult, &t) || __builtin_add_overflow(f->c, t, &f->c)) return false;
    return true;
  }
  if (e->kind == TL_EXPR_BINARY) {
    const tl_expr *a = e->u.bin.a, *b = e->u.bin.b;
    switch (e->u.bin.op) {
    case TL_OP_ADD: return linearize(a, mult, f, depth + 1) && linearize(b, mult, f, depth + 1);
    case TL_OP_SUB:
      return mult != INT64_MIN && linearize(a, mult, f, depth + 1) &&
             linearize(b, -mult, f, depth + 1);
    case TL_OP_MUL:
      if (tl_expr_is_const_int(b, &v))
        return !__builtin_mul_overflow(v, mult, &t) && linearize(a, t, f, depth + 1);
      if (tl_expr_is_const_int(a, &v))
        return !__builtin_mul_overflow(v, mult, &t) && linearize(b, t, f, depth + 1);
      break;
    default: break;
    }
  }
  for (int i = 0; i < f->n; i++)
    if (tl_expr_equal(f->atom[i], e)) return !__builtin_add_overflow(f->coef[i], mult, &f->coef[i]);
  if (f->n == 32) return false;
  f->atom[f->n] = e;
  f->coef[f->n++] = mult;
  return true;
}

static tl_expr *extent_sub(elab *E, tl_loc loc, tl_expr *hi, tl_expr *lo) {
  lin_form f;
  memset(&f, 0, sizeof f);
  if (tl_dtype_eq(hi->dtype, lo->dtype) && linearize(hi, 1, &f, 0) && linearize(lo, -1, &f, 0)) {
    bool cst = true;
    for (int i = 0; i < f.n; i++) cst &= f.coef[i] == 0;
    if (cst && (hi->dtype.bits == 64 || (f.c >= INT32_MIN && f.c <= INT32_MAX)))
      return chk(E, tl_ir_int(E->m, loc, hi->dtype, f.c));
  }
  return chk(E, tl_ir_binary(E->m, loc, TL_OP_SUB, hi, lo));
}

static bool tuple_index(elab *E, const tl_ast_expr *ix, int n, bool clamp, int64_t *out) {
  val *v = eval(E, ix);
  int64_t i;
  if (!v || !to_const_int(E, v, ix->loc, "a tuple index", &i)) return false;
  if (i < 0) i += n;
  if (clamp) {
    if (i < 0) i = 0;
    if (i > n) i = n;
  } else if (i < 0 || i >= n) {
    err(E, ix->loc, "tuple index out of range");
    return false;
  }
  *out = i;
  return true;
}

static val *tensor_type(elab *E, const tl_ast_expr *shape, const tl_ast_expr *dtype, tl_loc loc);

static val *eval_subscript(elab *E, const tl_ast_expr *x) {
  val *base = eval(E, x->u.sub.value);
  if (!base) return NULL;
  int n = x->u.sub.n;
  switch (base->k) {
  case V_BUFFER: return subscript_buffer(E, base->u.buf, x);
  case V_TUPLE: {
    if (n != 1) {
      err(E, x->loc, "a tuple takes one index");
      return NULL;
    }
    const tl_ast_expr *it = x->u.sub.items[0];
    int len = base->u.tup.n;
    if (it->kind == TL_AST_SLICE) {
      if (it->u.slice.step) {
        err(E, it->u.slice.step->loc, "tuple slices with a step are not supported");
        return NULL;
      }
      int64_t lo = 0, hi = len;
      if (it->u.slice.lo && !tuple_index(E, it->u.slice.lo, len, true, &lo)) return NULL;
      if (it->u.slice.hi && !tuple_index(E, it->u.slice.hi, len, true, &hi)) return NULL;
      if (hi < lo) hi = lo;
      val *t = mk_tuple(E, (int)(hi - lo), base->is_list);
      if (t && hi > lo) memcpy(t->u.tup.items, base->u.tup.items + lo, sizeof(val *) * (size_t)(hi - lo));
      return t;
    }
    int64_t i;
    if (!tuple_index(E, it, len, false, &i)) return NULL;
    return base->u.tup.items[i];
  }
  case V_DICT: {
    if (n != 1) break;
    val *k = eval(E, x->u.sub.items[0]);
    if (!k) return NULL;
    for (int i = 0; i < base->u.dict.n; i++)
      if (const_equal(base->u.dict.keys[i], k, 0)) return base->u.dict.vals[i];
    err(E, x->u.sub.items[0]->loc, "key not found in dict");
    return NULL;
  }
  case V_FUNC:
    if (!base->builtin && (!strcmp(base->u.fname, "Tensor") || !strcmp(base->u.fname, "Buffer")) &&
        n == 2 && x->u.sub.items[0]->kind != TL_AST_SLICE)
      return tensor_type(E, x->u.sub.items[0], x->u.sub.items[1], x->loc);
    break;
  case V_OPAQUE:
    if (E->pf) return to_expr(E, base, x->loc) ? NULL : NULL;
    return base;
  default: break;
  }
  err_val(E, x->loc, base, "'%s' object is not subscriptable", type_name(base));
  return NULL;
}

/* ----------------------------------------------------------------- calls */

static const tl_ast_keyword *find_kw(const tl_ast_expr *x, const char *name) {
  for (int i = 0; i < x->u.call.nkw; i++)
    if (x->u.call.kw[i].name && !strcmp(x->u.call.kw[i].name, name)) return &x->u.call.kw[i];
  return NULL;
}

/* Every keyword of call x must be in allowed (NULL-terminated). */
static bool check_kws(elab *E, const tl_ast_expr *x, const char *fn, const char *const *allowed) {
  for (int i = 0; i < x->u.call.nkw; i++) {
    const tl_ast_keyword *k = &x->u.call.kw[i];
    if (!k->name || !allowed || !in_list(allowed, k->name)) {
      err(E, k->loc, "unknown keyword '%s' for %s", k->name ? k->name : "**", fn);
      return false;
    }
    for (int j = 0; j < i; j++)
      if (x->u.call.kw[j].name && !strcmp(x->u.call.kw[j].name, k->name)) {
        err(E, k->loc, "keyword argument '%s' repeated", k->name);
        return false;
      }
  }
  return true;
}

static const char *takes_text(elab *E, int lo, int hi) {
  if (lo == hi) return tprintf(E, "%d argument%s", lo, lo == 1 ? "" : "s");
  if (hi < 0) return tprintf(E, "at least %d argument%s", lo, lo == 1 ? "" : "s");
  return tprintf(E, "%d to %d arguments", lo, hi);
}

static bool check_arity(elab *E, const tl_ast_expr *x, const char *fn, int lo, int hi) {
  int n = x->u.call.nargs;
  if (n < lo || (hi >= 0 && n > hi)) {
    err(E, x->loc, "%s takes %s, got %d", fn, takes_text(E, lo, hi), n);
    return false;
  }
  return true;
}

/* Argument number i (positional) or keyword name; NULL when absent.  *bad is
 * set when both are given. */
static const tl_ast_expr *get_arg(elab *E, const tl_ast_expr *x, int i, const char *name,
                                  const char *fn, bool *bad) {
  const tl_ast_keyword *k = name ? find_kw(x, name) : NULL;
  if (i >= 0 && i < x->u.call.nargs) {
    if (k) {
      err(E, k->loc, "%s got multiple values for argument '%s'", fn, name);
      *bad = true;
      return NULL;
    }
    return x->u.call.args[i];
  }
  return k ? k->value : NULL;
}

/* A shape: an int, an int expression, or a tuple/list of them. */
static bool eval_shape(elab *E, const tl_ast_expr *ast, int *ndim, tl_expr ***dims) {
  const char *what = "shape dimension";
  if (ast->kind == TL_AST_TUPLE || ast->kind == TL_AST_LIST) {
    int n = ast->u.list.n;
    tl_expr **d = malloc_ir(E, sizeof(tl_expr *) * (size_t)(n ? n : 1));
    if (!d) return false;
    for (int i = 0; i < n; i++)
      if (!(d[i] = eval_int(E, ast->u.list.items[i], what))) return false;
    *ndim = n;
    *dims = d;
    return true;
  }
  val *v = eval(E, ast);
  if (!v) return false;
  if (v->k == V_TUPLE) {
    int n = v->u.tup.n;
    tl_expr **d = malloc_ir(E, sizeof(tl_expr *) * (size_t)(n ? n : 1));
    if (!d) return false;
    for (int i = 0; i < n; i++)
      if (!(d[i] = to_int_expr(E, v->u.tup.items[i], ast->loc, what))) return false;
    *ndim = n;
    *dims = d;
    return true;
  }
  tl_expr **d = malloc_ir(E, sizeof(tl_expr *));
  if (!d || !(d[0] = to_int_expr(E, v, ast->loc, what))) return false;
  *ndim = 1;
  *dims = d;
  return true;
}

static val *tensor_type(elab *E, const tl_ast_expr *shape, const tl_ast_expr *dtype, tl_loc loc) {
  val *r = mk(E, V_TENSORTYPE);
  if (!r) return NULL;
  if (!eval_shape(E, shape, &r->u.tt.ndim, &r->u.tt.dims)) return NULL;
  r->u.tt.dt = TL_FLOAT32;
  if (dtype) {
    val *dv = eval(E, dtype);
    if (!dv || !to_dtype(E, dv, dtype->loc, &r->u.tt.dt)) return NULL;
  }
  (void)loc;
  return r;
}

/* Converts an intrinsic / tile-op argument: scalars, buffers, strings. */
static tl_expr *to_arg_expr(elab *E, val *v, tl_loc loc) {
  if (!v) return NULL;
  if (v->k == V_BUFFER && v->u.buf->scope != TL_SCOPE_LOCAL_VAR)
    return chk(E, tl_ir_buffer_ref(E->m, loc, v->u.buf));
  if (v->k == V_STR) return chk(E, tl_ir_string(E->m, loc, v->u.s));
  if (v->k == V_DTYPE) return chk(E, tl_ir_string(E->m, loc, tl_dtype_name(v->u.dt)));
  return to_expr(E, v, loc);
}

static val *call_intrinsic(elab *E, int idx, const tl_ast_expr *x, const char *fn) {
  const tl_intrinsic *in = &tl_intrinsics[idx];
  if (!check_kws(E, x, fn, NULL)) return NULL;
  if (!check_arity(E, x, fn, in->min_args, in->max_args)) return NULL;
  int n = x->u.call.nargs;
  tl_expr **args = malloc_ir(E, sizeof(tl_expr *) * (size_t)(n ? n : 1));
  if (!args) return NULL;
  for (int i = 0; i < n; i++) {
    val *v = eval(E, x->u.call.args[i]);
    if (!v || !(args[i] = to_arg_expr(E, v, x->u.call.args[i]->loc))) return NULL;
  }
  return mk_expr(E, chk(E, tl_ir_call(E->m, x->loc, idx, n, args)));
}

/* Evaluates the positional arguments of x (no keywords allowed). */
static val **eval_args(elab *E, const tl_ast_expr *x, const char *fn) {
  if (!check_kws(E, x, fn, NULL)) return NULL;
  int n = x->u.call.nargs;
  val **a = talloc(E, sizeof(val *) * (size_t)(n ? n : 1));
  if (!a) return NULL;
  for (int i = 0; i < n; i++)
    if (!(a[i] = eval(E, x->u.call.args[i]))) return NULL;
  return a;
}

/* min / max over values (Python semantics on constants, IR otherwise). */
static val *minmax(elab *E, bool is_max, val **a, int n, const tl_ast_expr *x) {
  bool any_ir = false;
  for (int i = 0; i < n; i++) {
    if (a[i]->k == V_OPAQUE) return binop(E, "+", a[i], a[i], x->loc);
    if (is_ir(a[i])) any_ir = true;
    else if (!is_num(a[i])) {
      err_val(E, x->u.call.args[i]->loc, a[i], "%s expects numbers, got %s",
              is_max ? "max" : "min", describe(E, a[i]));
      return NULL;
    }
  }
  if (!any_ir) {
    val *best = a[0];
    for (int i = 1; i < n; i++) {
      val *c = const_compare(E, is_max ? ">" : "<", a[i], best, x->loc);
      if (!c) return NULL;
      if (c->u.b) best = a[i];
    }
    return best;
  }
  tl_expr *acc = to_expr(E, a[0], x->u.call.args[0]->loc);
  for (int i = 1; acc && i < n; i++) {
    tl_expr *e = to_expr(E, a[i], x->u.call.args[i]->loc);
    if (!e) return NULL;
    acc = chk(E, tl_ir_binary(E->m, x->loc, is_max ? TL_OP_MAX : TL_OP_MIN, acc, e));
  }
  return mk_expr(E, acc);
}

static val *call_builtin(elab *E, const char *fn, const tl_ast_expr *x) {
  if (!strcmp(fn, "range")) {
    err(E, x->loc, "range() can only be used as the iterator of a for loop");
    return NULL;
  }
  val **a = eval_args(E, x, fn);
  if (!a) return NULL;
  int n = x->u.call.nargs;
  if (!strcmp(fn, "print")) return mk(E, V_NONE);
  if (!strcmp(fn, "min") || !strcmp(fn, "max")) {
    if (n == 1 && a[0]->k == V_TUPLE && a[0]->u.tup.n > 0) {
      /* min(iterable) */
      tl_ast_expr fake = *x;
      fake.u.call.nargs = a[0]->u.tup.n;
      const tl_ast_expr **args = talloc(E, sizeof(tl_ast_expr *) * (size_t)fake.u.call.nargs);
      if (!args) return NULL;
      for (int i = 0; i < fake.u.call.nargs; i++) args[i] = x->u.call.args[0];
      fake.u.call.args = (tl_ast_expr **)args;
      return minmax(E, fn[1] == 'a', a[0]->u.tup.items, a[0]->u.tup.n, &fake);
    }
    if (!check_arity(E, x, fn, 2, -1)) return NULL;
    return minmax(E, fn[1] == 'a', a, n, x);
  }
  if (!check_arity(E, x, fn, 1, 1)) return NULL;
  val *v = a[0];
  tl_loc al = x->u.call.args[0]->loc;
  if (v->k == V_OPAQUE) return binop(E, "+", v, v, x->loc);
  if (!strcmp(fn, "len")) {
    if (v->k == V_TUPLE) return mk_int(E, v->u.tup.n);
    if (v->k == V_STR) return mk_int(E, (int64_t)strlen(v->u.s));
    if (v->k == V_DICT) return mk_int(E, v->u.dict.n);
    if (v->k == V_BUFFER && v->u.buf->ndim > 0) {
      int64_t c;
      if (tl_expr_is_const_int(v->u.buf->shape[0], &c)) return mk_int(E, c);
      return mk_expr(E, v->u.buf->shape[0]);
    }
    err_val(E, al, v, "object of type '%s' has no len()", type_name(v));
    return NULL;
  }
  if (!strcmp(fn, "abs")) {
    if (v->k == V_INT || v->k == V_BOOL) {
      if (as_i(v) == INT64_MIN) return overflow(E, x->loc, v, NULL);
      return mk_int(E, as_i(v) < 0 ? -as_i(v) : as_i(v));
    }
    if (v->k == V_FLOAT) return mk_float(E, fabs(v->u.f));
    tl_expr *e = to_expr(E, v, al);
    if (!e) return NULL;
    return mk_expr(E, chk(E, tl_ir_call(E->m, x->loc, tl_intrinsic_lookup("abs"), 1, &e)));
  }
  if (!strcmp(fn, "bool")) {
    bool t;
    if (truthy(v, &t)) return mk_bool(E, t);
    tl_expr *e = to_expr(E, v, al);
    return e ? mk_expr(E, chk(E, tl_ir_cast(E->m, x->loc, TL_BOOL, e))) : NULL;
  }
  if (!strcmp(fn, "int")) {
    if (v->k == V_INT || v->k == V_BOOL) return mk_int(E, as_i(v));
    if (v->k == V_FLOAT) {
      if (!isfinite(v->u.f) || v->u.f >= 9.2233720368547758e18 || v->u.f < -9.2233720368547758e18) {
        err_val(E, al, v, "cannot convert float %g to an integer", v->u.f);
        return NULL;
      }
      return mk_int(E, (int64_t)v->u.f);
    }
    if (v->k == V_STR) {
      char *end = NULL;
      errno = 0;
      long long r = strtoll(v->u.s, &end, 10);
      if (errno || !end || end == v->u.s || *end) {
        err_val(E, al, v, "invalid literal for int(): '%.100s'", v->u.s);
        return NULL;
      }
      return mk_int(E, r);
    }
    tl_expr *e = to_expr(E, v, al);
    return e ? mk_expr(E, chk(E, tl_ir_cast(E->m, x->loc, TL_INT32, e))) : NULL;
  }
  /* float */
  if (is_num(v)) return mk_float(E, as_f(v));
  if (v->k == V_STR) {
    char *end = NULL;
    double f = strtod(v->u.s, &end);
    if (!end || end == v->u.s || *end) {
      err_val(E, al, v, "could not convert string to float: '%.100s'", v->u.s);
      return NULL;
    }
    return mk_float(E, f);
  }
  tl_expr *e = to_expr(E, v, al);
  return e ? mk_expr(E, chk(E, tl_ir_cast(E->m, x->loc, TL_FLOAT32, e))) : NULL;
}

/* math.<fn>(constants) at compile time. */
static val *call_math(elab *E, const char *fn, const tl_ast_expr *x) {
  val **a = eval_args(E, x, tprintf(E, "math.%s", fn));
  if (!a) return NULL;
  int n = x->u.call.nargs;
  static const char *const one[] = {"sqrt", "log2", "log10", "exp", "ceil", "floor", "fabs",
                                    "sin", "cos", "tan", "tanh", "exp2", NULL};
  bool unary = in_list(one, fn);
  bool known = unary || !strcmp(fn, "log") || !strcmp(fn, "pow");
  if (!known) {
    if (E->pf) {
      err(E, x->loc, "'math.%s' cannot be used in a kernel", fn);
      return NULL;
    }
    return mk_opaque(E, tprintf(E, "math.%s(...)", fn), "math");
  }
  int lo = unary ? 1 : !strcmp(fn, "log") ? 1 : 2, hi = unary ? 1 : 2;
  if (!check_arity(E, x, tprintf(E, "math.%s", fn), lo, hi)) return NULL;
  for (int i = 0; i < n; i++)
    if (!is_num(a[i])) {
      err_val(E, x->u.call.args[i]->loc, a[i],
              "math.%s needs a numeric constant, got %s (use T.%s in kernels)", fn,
              describe(E, a[i]), fn);
      return NULL;
    }
  double v = as_f(a[0]), r;
  if (!strcmp(fn, "sqrt")) r = sqrt(v);
  else if (!strcmp(fn, "log2")) r = log2(v);
  else if (!strcmp(fn, "log10")) r = log10(v);
  else if (!strcmp(fn, "exp")) r = exp(v);
  else if (!strcmp(fn, "exp2")) r = exp2(v);
  else if (!strcmp(fn, "fabs")) r = fabs(v);
  else if (!strcmp(fn, "sin")) r = sin(v);
  else if (!strcmp(fn, "cos")) r = cos(v);
  else if (!strcmp(fn, "tan")) r = tan(v);
  else if (!strcmp(fn, "tanh")) r = tanh(v);
  else if (!strcmp(fn, "log")) r = n == 2 ? log(v) / log(as_f(a[1])) : log(v);
  else if (!strcmp(fn, "pow")) r = pow(v, as_f(a[1]));
  else {
    r = !strcmp(fn, "ceil") ? ceil(v) : floor(v);
    if (!isfinite(r) || r >= 9.2233720368547758e18 || r < -9.2233720368547758e18) {
      err(E, x->loc, "math.%s result out of range", fn);
      return NULL;
    }
    return mk_int(E, (int64_t)r);
  }
  return mk_float(E, r);
}

/* T.float16(1.5), T.int64(5), T.float32("nan"), T.float16(x). */
static val *typed_literal(elab *E, tl_dtype dt, const tl_ast_expr *x) {
  const char *fn = tprintf(E, "T.%s", tl_dtype_name(dt));
  if (!check_kws(E, x, fn, NULL) || !check_arity(E, x, fn, 1, 1)) return NULL;
  const tl_ast_expr *ax = x->u.call.args[0];
  val *v = eval(E, ax);
  if (!v) return NULL;
  if (tl_dtype_is_float(dt)) {
    if (is_num(v)) return mk_expr(E, chk(E, tl_ir_float(E->m, x->loc, dt, as_f(v))));
    if (v->k == V_STR) {
      const char *s = v->u.s;
      double f;
      if (!strcmp(s, "nan")) f = NAN;
      else if (!strcmp(s, "inf") || !strcmp(s, "+inf") || !strcmp(s, "infinity")) f = INFINITY;
      else if (!strcmp(s, "-inf") || !strcmp(s, "-infinity")) f = -INFINITY;
      else {
        char *end = NULL;
        f = strtod(s, &end);
        if (!end || end == s || *end) {
          err_val(E, ax->loc, v, "%s expects a number, got %s", fn, describe(E, v));
          return NULL;
        }
      }
      return mk_expr(E, chk(E, tl_ir_float(E->m, x->loc, dt, f)));
    }
  } else if (dt.code == TL_TYPE_BOOL) {
    bool t;
    if (v->k != V_STR && v->k != V_EXPR && truthy(v, &t))
      return mk_expr(E, chk(E, tl_ir_int(E->m, x->loc, TL_BOOL, t)));
  } else if (tl_dtype_is_int(dt) && (v->k == V_INT || v->k == V_BOOL)) {
    int64_t i = as_i(v);
    bool ok;
    if (dt.code == TL_TYPE_UINT)
      ok = i >= 0 && (dt.bits >= 63 || i < (INT64_C(1) << dt.bits));
    else
      ok = dt.bits >= 64 || (i >= -(INT64_C(1) << (dt.bits - 1)) && i < (INT64_C(1) << (dt.bits - 1)));
    if (!ok) {
      err_val(E, ax->loc, v, "%lld does not fit in %s", (long long)i, tl_dtype_name(dt));
      return NULL;
    }
    return mk_expr(E, chk(E, tl_ir_int(E->m, x->loc, dt, i)));
  }
  if (v->k == V_STR || v->k == V_NONE || v->k == V_TUPLE || v->k == V_DTYPE) {
    err_val(E, ax->loc, v, "%s expects a number, got %s", fn, describe(E, v));
    return NULL;
  }
  tl_expr *e = to_expr(E, v, ax->loc);
  return e ? mk_expr(E, chk(E, tl_ir_cast(E->m, x->loc, dt, e))) : NULL;
}

static val *call_dynamic(elab *E, const char *fn, const tl_ast_expr *x) {
  static const char *const kws[] = {"dtype", NULL};
  bool bad = false;
  if (!check_kws(E, x, fn, kws) || !check_arity(E, x, fn, 1, 2)) return NULL;
  const tl_ast_expr *dta = get_arg(E, x, 1, "dtype", fn, &bad);
  if (bad) return NULL;
  val *nv = eval(E, x->u.call.args[0]);
  if (!nv) return NULL;
  if (nv->k != V_STR) {
    err_val(E, x->u.call.args[0]->loc, nv, "%s expects a name string, got %s", fn, describe(E, nv));
    return NULL;
  }
  tl_dtype dt = TL_INT32;
  if (dta) {
    val *dv = eval(E, dta);
    if (!dv || !to_dtype(E, dv, dta->loc, &dt)) return NULL;
    if (!tl_dtype_is_int(dt)) {
      err(E, dta->loc, "a dynamic dimension must have an integer dtype, got %s", tl_dtype_name(dt));
      return NULL;
    }
  }
  /* "m, n" declares two symbols. */
  val *names[64];
  int count = 0;
  const char *p = nv->u.s;
  while (*p) {
    while (*p == ',' || isspace((unsigned char)*p)) p++;
    if (!*p) break;
    const char *st = p;
    while (*p && *p != ',' && !isspace((unsigned char)*p)) p++;
    if (count == 64) {
      err(E, x->u.call.args[0]->loc, "too many symbols in one %s call", fn);
      return NULL;
    }
    char *nm = tl_arena_strndup(&E->tmp, st, (size_t)(p - st));
    if (!nm) return oom(E);
    bool okname = isalpha((unsigned char)nm[0]) || nm[0] == '_';
    for (const char *q = nm; *q; q++)
      if (!isalnum((unsigned char)*q) && *q != '_') okname = false;
    if (!okname) {
      err(E, x->u.call.args[0]->loc, "'%s' is not a valid symbol name", nm);
      return NULL;
    }
    const char *in = intern(E, nm);
    if (!in) return NULL;
    tl_var *var = tl_ir_new_var(E->m, x->loc, in, dt, TL_VAR_DYNAMIC);
    if (!var) return oom(E);
    if (!tl_vec_push(&E->dyn, var)) return oom(E);
    if (!(names[count++] = mk_expr(E, chk(E, tl_ir_var(E->m, x->loc, var))))) return NULL;
  }
  if (count == 0) {
    err(E, x->u.call.args[0]->loc, "%s needs at least one symbol name", fn);
    return NULL;
  }
  if (count == 1) return names[0];
  val *t = mk_tuple(E, count, false);
  if (t) memcpy(t->u.tup.items, names, sizeof(val *) * (size_t)count);
  return t;
}

static val *call_t(elab *E, const char *name, const tl_ast_expr *x) {
  const char *fn = tprintf(E, "T.%s", name);
  bool bad = false;
  if (!strcmp(name, "Tensor") || !strcmp(name, "Buffer")) {
    static const char *const kws[] = {"shape", "dtype", NULL};
    if (!check_kws(E, x, fn, kws) || !check_arity(E, x, fn, 0, 2)) return NULL;
    const tl_ast_expr *sh = get_arg(E, x, 0, "shape", fn, &bad);
    const tl_ast_expr *dt = bad ? NULL : get_arg(E, x, 1, "dtype", fn, &bad);
    if (bad) return NULL;
    if (!sh) {
      err(E, x->loc, "%s needs a shape", fn);
      return NULL;
    }
    return tensor_type(E, sh, dt, x->loc);
  }
  if (!strcmp(name, "dynamic") || !strcmp(name, "symbolic")) return call_dynamic(E, fn, x);
  if (!strcmp(name, "Cast")) {
    if (!check_kws(E, x, fn, NULL) || !check_arity(E, x, fn, 2, 2)) return NULL;
    val *dv = eval(E, x->u.call.args[0]);
    tl_dtype dt;
    if (!dv || !to_dtype(E, dv, x->u.call.args[0]->loc, &dt)) return NULL;
    val *v = eval(E, x->u.call.args[1]);
    tl_expr *e = v ? to_expr(E, v, x->u.call.args[1]->loc) : NULL;
    return e ? mk_expr(E, chk(E, tl_ir_cast(E->m, x->loc, dt, e))) : NULL;
  }
  if (!strcmp(name, "Ramp") || !strcmp(name, "Broadcast")) {
    /* vector expressions of the SIMT IR (docs/simt-ir.md), as printed:
     * T.Ramp(base, stride, lanes), T.Broadcast(value, lanes) */
    bool ramp = name[0] == 'R';
    if (!check_kws(E, x, fn, NULL) || !check_arity(E, x, fn, ramp ? 3 : 2, ramp ? 3 : 2))
      return NULL;
    int nv = ramp ? 2 : 1;
    tl_expr *ops[2] = {NULL, NULL};
    for (int i = 0; i < nv; i++) {
      val *v = eval(E, x->u.call.args[i]);
      if (!v) return NULL;
      ops[i] = ramp ? to_int_expr(E, v, x->u.call.args[i]->loc,
                                  i ? "the stride of T.Ramp" : "the base of T.Ramp")
                    : to_expr(E, v, x->u.call.args[i]->loc);
      if (!ops[i]) return NULL;
    }
    val *lv = eval(E, x->u.call.args[nv]);
    int64_t lanes;
    if (!lv || !to_const_int(E, lv, x->u.call.args[nv]->loc, "the lane count", &lanes))
      return NULL;
    if (lanes < 2 || lanes > 64 || ops[0]->dtype.lanes != 1) {
      err(E, x->u.call.args[nv]->loc, "%s needs a scalar operand and 2 to 64 lanes, got %lld",
          fn, (long long)lanes);
      return NULL;
    }
    if (ramp && !tl_dtype_eq(ops[1]->dtype, ops[0]->dtype))
      ops[1] = chk(E, tl_ir_cast(E->m, x->loc, ops[0]->dtype, ops[1]));
    tl_expr *e = malloc_ir(E, sizeof *e);
    if (!e || (ramp && !ops[1])) return NULL;
    memset(e, 0, sizeof *e);
    e->kind = ramp ? TL_EXPR_RAMP : TL_EXPR_BROADCAST;
    e->dtype = ops[0]->dtype;
    e->dtype.lanes = (uint16_t)lanes;
    e->loc = x->loc;
    if (ramp) {
      e->u.ramp.base = ops[0];
      e->u.ramp.stride = ops[1];
    } else {
      e->u.bcast.value = ops[0];
    }
    return mk_expr(E, e);
  }
  if (!strcmp(name, "infinity")) {
    if (!check_kws(E, x, fn, NULL) || !check_arity(E, x, fn, 1, 1)) return NULL;
    val *dv = eval(E, x->u.call.args[0]);
    tl_dtype dt;
    if (!dv || !to_dtype(E, dv, x->u.call.args[0]->loc, &dt)) return NULL;
    if (!tl_dtype_is_float(dt)) {
      err(E, x->u.call.args[0]->loc, "T.infinity needs a float dtype, got %s", tl_dtype_name(dt));
      return NULL;
    }
    return mk_expr(E, chk(E, tl_ir_float(E->m, x->loc, dt, INFINITY)));
  }
  if (!strcmp(name, "ceildiv")) {
    val **a = eval_args(E, x, fn);
    if (!a || !check_arity(E, x, fn, 2, 2)) return NULL;
    for (int i = 0; i < 2; i++)
      if (!is_ir(a[i]) && a[i]->k != V_INT && a[i]->k != V_BOOL) {
        err_val(E, x->u.call.args[i]->loc, a[i], "T.ceildiv expects integers, got %s",
                describe(E, a[i]));
        return NULL;
      }
    if (!is_ir(a[0]) && !is_ir(a[1])) {
      int64_t p = as_i(a[0]), q = as_i(a[1]);
      if (q == 0) {
        err(E, x->loc, "T.ceildiv: division by zero");
        return NULL;
      }
      if (p == INT64_MIN && q == -1) return overflow(E, x->loc, a[0], a[1]);
      int64_t r = p / q;
      if (p % q != 0 && ((p > 0) == (q > 0))) r++;
      return mk_int(E, r);
    }
    tl_expr *args[2];
    for (int i = 0; i < 2; i++)
      if (!(args[i] = to_expr(E, a[i], x->u.call.args[i]->loc))) return NULL;
    tl_expr **ar = malloc_ir(E, sizeof args);
    if (!ar) return NULL;
    memcpy(ar, args, sizeof args);
    return mk_expr(E, chk(E, tl_ir_call(E->m, x->loc, tl_intrinsic_lookup("ceildiv"), 2, ar)));
  }
  if (!strcmp(name, "max") || !strcmp(name, "min")) {
    val **a = eval_args(E, x, fn);
    if (!a || !check_arity(E, x, fn, 2, -1)) return NULL;
    return minmax(E, name[1] == 'a', a, x->u.call.nargs, x);
  }
  if (!strcmp(name, "if_then_else") || !strcmp(name, "Select")) {
    if (!check_kws(E, x, fn, NULL) || !check_arity(E, x, fn, 3, 3)) return NULL;
    val *c = eval(E, x->u.call.args[0]);
    if (!c) return NULL;
    bool t;
    if (!is_ir(c) && truthy(c, &t)) return eval(E, x->u.call.args[t ? 1 : 2]);
    val *a = eval(E, x->u.call.args[1]);
    val *b = a ? eval(E, x->u.call.args[2]) : NULL;
    if (!b) return NULL;
    tl_expr *ce = to_expr(E, c, x->u.call.args[0]->loc);
    tl_expr *ae = ce ? to_expr(E, a, x->u.call.args[1]->loc) : NULL;
    tl_expr *be = ae ? to_expr(E, b, x->u.call.args[2]->loc) : NULL;
    return be ? mk_expr(E, chk(E, tl_ir_select(E->m, x->loc, ce, ae, be))) : NULL;
  }
  if (!strcmp(name, "Kernel")) {
    err(E, x->loc, "T.Kernel can only be used in a 'with' statement");
    return NULL;
  }
  if (!strcmp(name, "Parallel") || !strcmp(name, "Pipelined") || !strcmp(name, "serial") ||
      !strcmp(name, "unroll") || !strcmp(name, "vectorized") || !strcmp(name, "thread_binding")) {
    err(E, x->loc, "%s can only be used as the iterator of a for loop", fn);
    return NULL;
  }
  if (!strncmp(name, "alloc_", 6)) {
    err(E, x->loc, "the result of %s must be assigned to a name", fn);
    return NULL;
  }
  if (!strcmp(name, "func_attr")) {
    err(E, x->loc, "T.func_attr can only be used as a statement");
    return NULL;
  }
  if (!strcmp(name, "prim_func")) {
    err(E, x->loc, "T.prim_func can only be used as a decorator");
    return NULL;
  }
  if (!strcmp(name, "atomic_add")) return atomic_add_value(E, x, fn);
  if (tl_tile_op_lookup(name) >= 0) {
    err(E, x->loc, "%s is a statement and has no value", fn);
    return NULL;
  }
  int idx = tl_intrinsic_lookup(name);
  if (idx >= 0) return call_intrinsic(E, idx, x, fn);
  err(E, x->loc, "unknown name '%s'", fn);
  return NULL;
}

/* T.atomic_add(dst[i, ...], value, return_prev=True) used as a value
 * (TileLang's scalar form with return_prev): the old contents of one global
 * element.  It becomes the SIMT intrinsic directly (docs/simt-ir.md
 * "Atomics"): T.ptx_atomic_add(dst, flat offset, T.Cast(dst.dtype, value),
 * True).  Without return_prev=True there is no value to use. */
static val *atomic_add_value(elab *E, const tl_ast_expr *x, const char *fn) {
  static const char *const kws[] = {"return_prev", "memory_order", NULL};
  if (!check_kws(E, x, fn, kws) || !check_arity(E, x, fn, 2, 2)) return NULL;
  bool rp = false;
  for (int i = 0; i < x->u.call.nkw; i++) {
    const tl_ast_keyword *k = &x->u.call.kw[i];
    val *v = eval(E, k->value);
    if (!v) return NULL;
    if (!strcmp(k->name, "return_prev")) {
      if (is_ir(v) || !truthy(v, &rp)) {
        err(E, k->loc, "%s: return_prev must be a constant", fn);
        return NULL;
      }
    } else if (v->k != V_STR || strcmp(v->u.s, "relaxed") != 0) {
      err(E, k->loc, "%s: only memory_order=\"relaxed\" is supported for the value form", fn);
      return NULL;
    }
  }
  if (!rp) {
    err(E, x->loc, "%s is a statement and has no value (pass return_prev=True to use the old value)", fn);
    return NULL;
  }
  val *d = eval(E, x->u.call.args[0]);
  val *v = d ? eval(E, x->u.call.args[1]) : NULL;
  if (!v) return NULL;
  tl_expr *de = is_ir(d) ? to_expr(E, d, x->u.call.args[0]->loc) : NULL;
  if (!de || de->kind != TL_EXPR_LOAD || de->dtype.lanes != 1 || de->u.load.buffer->scope != TL_SCOPE_GLOBAL) {
    err(E, x->u.call.args[0]->loc, "%s with return_prev=True needs one element of a global tensor, e.g. C[i, j]", fn);
    return NULL;
  }
  tl_expr *ve = to_expr(E, v, x->u.call.args[1]->loc);
  if (!ve) return NULL;
  if (ve->dtype.lanes != 1) {
    err(E, x->u.call.args[1]->loc, "%s: the value must be a scalar, got %s", fn, tl_dtype_name(ve->dtype));
    return NULL;
  }
  tl_buffer *b = de->u.load.buffer;
  tl_expr *off = NULL;
  for (int k = 0; k < de->u.load.n; k++) {
    tl_expr *ix = de->u.load.indices[k];
    if (b->strides && k < b->ndim) {
      tl_expr *t = chk(E, tl_ir_binary(E->m, x->loc, TL_OP_MUL, ix, b->strides[k]));
      off = off ? chk(E, tl_ir_binary(E->m, x->loc, TL_OP_ADD, off, t)) : t;
    } else if (off && k < b->ndim) {
      off = chk(E, tl_ir_binary(E->m, x->loc, TL_OP_ADD,
                                chk(E, tl_ir_binary(E->m, x->loc, TL_OP_MUL, off, b->shape[k])), ix));
    } else {
      off = ix;
    }
    if (!off) return NULL;
  }
  tl_dtype et = b->dtype;
  et.lanes = 1;
  tl_expr *args[4] = {chk(E, tl_ir_buffer_ref(E->m, x->loc, b)), off, chk(E, tl_ir_cast(E->m, ve->loc, et, ve)),
                      chk(E, tl_ir_int(E->m, x->loc, TL_BOOL, 1))};
  if (!args[0] || !args[1] || !args[2] || !args[3]) return NULL;
  int in = tl_intrinsic_lookup("ptx_atomic_add");
  return in < 0 ? NULL : mk_expr(E, chk(E, tl_ir_call(E->m, x->loc, in, 4, args)));
}

/* What a Python construct that kernels cannot use is called in messages. */
static const char *construct_name(tl_ast_expr_kind k) {
  switch (k) {
  case TL_AST_SET: return "set displays";
  case TL_AST_ELLIPSIS: return "'...'";
  case TL_AST_BYTES: return "bytes literals";
  case TL_AST_IMAG: return "complex literals";
  case TL_AST_BIGINT: return "integer literals of 2**63 or more";
  case TL_AST_FSTRING: case TL_AST_FORMATTED: return "f-strings";
  case TL_AST_STARRED: return "star expressions";
  case TL_AST_NAMEDEXPR: return "assignment expressions (':=')";
  case TL_AST_LAMBDA: return "'lambda'";
  case TL_AST_AWAIT: return "'await'";
  case TL_AST_YIELD: case TL_AST_YIELD_FROM: return "'yield'";
  case TL_AST_LISTCOMP: return "list comprehensions";
  case TL_AST_SETCOMP: return "set comprehensions";
  case TL_AST_GENEXP: return "generator expressions";
  case TL_AST_DICTCOMP: return "dict comprehensions";
  default: return "this expression";
  }
}

static const char *stmt_name(tl_ast_stmt_kind k) {
  switch (k) {
  case TL_AST_CLASS: return "'class'";
  case TL_AST_DELETE: return "'del'";
  case TL_AST_RAISE: return "'raise'";
  case TL_AST_TRY: return "'try'";
  case TL_AST_ASSERT: return "'assert'";
  case TL_AST_GLOBAL: return "'global'";
  case TL_AST_NONLOCAL: return "'nonlocal'";
  case TL_AST_MATCH: return "'match'";
  default: return "this statement";
  }
}

/* Star arguments (f(*a), f(**k)) are not evaluated yet. */
static bool check_plain_args(elab *E, const tl_ast_expr *x) {
  for (int i = 0; i < x->u.call.nargs; i++)
    if (x->u.call.args[i]->kind == TL_AST_STARRED) {
      err(E, x->u.call.args[i]->loc, "star arguments ('*args') are not supported here");
      return false;
    }
  for (int i = 0; i < x->u.call.nkw; i++)
    if (!x->u.call.kw[i].name) {
      err(E, x->u.call.kw[i].loc, "star arguments ('**kwargs') are not supported here");
      return false;
    }
  return true;
}

static val *eval_call(elab *E, const tl_ast_expr *x) {
  const tl_ast_expr *f = x->u.call.func;
  if (!check_plain_args(E, x)) return NULL;
  if (f->kind == TL_AST_ATTR && !strcmp(f->u.attr.name, "astype")) {
    val *obj = eval(E, f->u.attr.value);
    if (!obj) return NULL;
    if (is_ir(obj) || is_num(obj)) {
      if (!check_kws(E, x, "astype", NULL) || !check_arity(E, x, "astype", 1, 1)) return NULL;
      val *dv = eval(E, x->u.call.args[0]);
      tl_dtype dt;
      if (!dv || !to_dtype(E, dv, x->u.call.args[0]->loc, &dt)) return NULL;
      tl_expr *e = to_expr(E, obj, f->u.attr.value->loc);
      return e ? mk_expr(E, chk(E, tl_ir_cast(E->m, x->loc, dt, e))) : NULL;
    }
    if (obj->k != V_OPAQUE) {
      err_val(E, f->u.attr.name_loc, obj, "'%s' object has no attribute 'astype'", type_name(obj));
      return NULL;
    }
  }
  val *fv = eval(E, f);
  if (!fv) return NULL;
  switch (fv->k) {
  case V_FUNC: return fv->builtin ? call_builtin(E, fv->u.fname, x) : call_t(E, fv->u.fname, x);
  case V_DTYPE: return typed_literal(E, fv->u.dt, x);
  case V_OPAQUE:
    if (fv->u.op.module && !strcmp(fv->u.op.module, "math") && !strncmp(fv->u.op.desc, "math.", 5) &&
        !strchr(fv->u.op.desc + 5, '.') && !strchr(fv->u.op.desc, '('))
      return call_math(E, fv->u.op.desc + 5, x);
    if (E->pf) {
      err(E, x->loc, "'%s' cannot be called in a kernel (it is a host function, not TileLang)",
          fv->u.op.desc);
      return NULL;
    }
    return mk_opaque(E, tprintf(E, "%s(...)", fv->u.op.desc), fv->u.op.module);
  case V_NS:
    if (fv->u.ns == NS_JIT && !E->pf) return mk_opaque(E, "tilelang.jit(...)", "tilelang");
    break;
  case V_PRIMFUNC:
    if (!E->pf) return mk_opaque(E, tprintf(E, "%s(...)", fv->u.pf->name), NULL);
    break;
  default: break;
  }
  err_val(E, x->loc, fv, "%s is not callable", describe(E, fv));
  return NULL;
}

static val *eval_compare(elab *E, const tl_ast_expr *x) {
  val *acc = NULL;
  val *l = eval(E, x->u.cmp.operands[0]);
  if (!l) return NULL;
  for (int i = 0; i < x->u.cmp.n; i++) {
    val *r = eval(E, x->u.cmp.operands[i + 1]);
    if (!r) return NULL;
    val *c = binop(E, x->u.cmp.ops[i], l, r, x->u.cmp.op_locs[i]);
    if (!c) return NULL;
    if (!acc) {
      acc = c;
    } else {
      bool t;
      if (!is_ir(acc) && truthy(acc, &t)) {
        if (!t) return acc;
        acc = c;
      } else {
        acc = binop(E, "and", acc, c, x->u.cmp.op_locs[i]);
        if (!acc) return NULL;
      }
    }
    if (!is_ir(acc)) {
      bool t;
      if (truthy(acc, &t) && !t) return acc; /* short-circuit a < b < c */
    }
    l = r;
  }
  return acc;
}

static val *eval_inner(elab *E, const tl_ast_expr *x) {
  switch (x->kind) {
  case TL_AST_NAME: return eval_name(E, x);
  case TL_AST_INT: return mk_int(E, x->u.ival);
  case TL_AST_FLOAT: return mk_float(E, x->u.fval);
  case TL_AST_STR: return mk_str(E, x->u.str);
  case TL_AST_TRUE: return mk_bool(E, true);
  case TL_AST_FALSE: return mk_bool(E, false);
  case TL_AST_NONE: return mk(E, V_NONE);
  case TL_AST_ATTR: {
    val *v = eval(E, x->u.attr.value);
    return v ? get_attr(E, v, x->u.attr.name, x->u.attr.name_loc) : NULL;
  }
  case TL_AST_SUBSCRIPT: return eval_subscript(E, x);
  case TL_AST_SLICE:
    err(E, x->loc, "a slice can only be used inside a subscript");
    return NULL;
  case TL_AST_CALL: return eval_call(E, x);
  case TL_AST_BINOP: {
    val *a = eval(E, x->u.bin.l);
    val *b = a ? eval(E, x->u.bin.r) : NULL;
    return b ? binop(E, x->u.bin.op, a, b, x->u.bin.op_loc) : NULL;
  }
  case TL_AST_BOOLOP: {
    bool is_and = !strcmp(x->u.bin.op, "and");
    val *a = eval(E, x->u.bin.l);
    if (!a) return NULL;
    bool t;
    if (!is_ir(a) && a->k != V_OPAQUE && truthy(a, &t)) {
      if (t != is_and) return a; /* Python: the deciding operand */
      return eval(E, x->u.bin.r);
    }
    val *b = eval(E, x->u.bin.r);
    return b ? binop(E, x->u.bin.op, a, b, x->u.bin.op_loc) : NULL;
  }
  case TL_AST_UNARY: {
    val *a = eval(E, x->u.un.x);
    return a ? unop(E, x->u.un.op, a, x->loc) : NULL;
  }
  case TL_AST_COMPARE: return eval_compare(E, x);
  case TL_AST_IFEXP: {
    val *c = eval(E, x->u.ifexp.test);
    if (!c) return NULL;
    bool t;
    if (!is_ir(c) && truthy(c, &t)) return eval(E, t ? x->u.ifexp.body : x->u.ifexp.orelse);
    val *a = eval(E, x->u.ifexp.body);
    val *b = a ? eval(E, x->u.ifexp.orelse) : NULL;
    if (!b) return NULL;
    tl_expr *ce = to_expr(E, c, x->u.ifexp.test->loc);
    tl_expr *ae = ce ? to_expr(E, a, x->u.ifexp.body->loc) : NULL;
    tl_expr *be = ae ? to_expr(E, b, x->u.ifexp.orelse->loc) : NULL;
    return be ? mk_expr(E, chk(E, tl_ir_select(E->m, x->loc, ce, ae, be))) : NULL;
  }
  case TL_AST_TUPLE:
  case TL_AST_LIST: {
    val *t = mk_tuple(E, x->u.list.n, x->kind == TL_AST_LIST);
    if (!t) return NULL;
    for (int i = 0; i < x->u.list.n; i++)
      if (!(t->u.tup.items[i] = eval(E, x->u.list.items[i]))) return NULL;
    return t;
  }
  case TL_AST_DICT: {
    int n = x->u.dict.n;
    for (int i = 0; i < n; i++)
      if (!x->u.dict.keys[i]) {
        err(E, x->u.dict.values[i]->loc, "dictionary unpacking ('**') is not supported here");
        return NULL;
      }
    val *d = mk(E, V_DICT);
    if (!d) return NULL;
    d->u.dict.n = n;
    size_t sz = (size_t)(n ? n : 1);
    if (!(d->u.dict.keys = talloc(E, sizeof(val *) * sz)) ||
        !(d->u.dict.vals = talloc(E, sizeof(val *) * sz)) ||
        !(d->u.dict.klocs = talloc(E, sizeof(tl_loc) * sz)) ||
        !(d->u.dict.vlocs = talloc(E, sizeof(tl_loc) * sz)))
      return NULL;
    for (int i = 0; i < n; i++) {
      if (!(d->u.dict.keys[i] = eval(E, x->u.dict.keys[i]))) return NULL;
      if (!(d->u.dict.vals[i] = eval(E, x->u.dict.values[i]))) return NULL;
      d->u.dict.klocs[i] = x->u.dict.keys[i]->loc;
      d->u.dict.vlocs[i] = x->u.dict.values[i]->loc;
    }
    return d;
  }
  default:
    err(E, x->loc, "%s are not supported here", construct_name(x->kind));
    return NULL;
  }
  err(E, x->loc, "unsupported expression");
  return NULL;
}

static val *eval(elab *E, const tl_ast_expr *x) {
  if (!x || E->oom) return NULL;
  if (E->depth >= MAX_DEPTH) {
    err(E, x->loc, "expression nested too deeply (limit %d)", MAX_DEPTH);
    return NULL;
  }
  E->depth++;
  val *v = eval_inner(E, x);
  E->depth--;
  if (v && v->k == V_POISON) return NULL;
  return v;
}

/* ============================================================ statements */

static bool elab_block(elab *E, const tl_ast_block *b, stmt_vec *out);

static bool emit(elab *E, stmt_vec *out, tl_stmt *s) {
  if (!s) return oom(E), false;
  if (!tl_vec_push(out, s)) return oom(E), false;
  return true;
}

static tl_stmt *make_seq(elab *E, tl_loc loc, stmt_vec *v) {
  tl_stmt **arr = NULL;
  if (v->len) {
    arr = malloc_ir(E, sizeof(tl_stmt *) * v->len);
    if (!arr) return NULL;
    memcpy(arr, v->data, sizeof(tl_stmt *) * v->len);
  }
  tl_stmt *s = tl_ir_seq(E->m, loc, (int)v->len, arr);
  return s ? s : oom(E);
}

/* Elaborates a nested block in a fresh scope into one statement. */
static tl_stmt *elab_body(elab *E, const tl_ast_block *b, tl_loc loc) {
  if (!push_scope(E, true)) return NULL;
  scope *s = E->sc;
  stmt_vec v = {0};
  bool ok = elab_block(E, b, &v);
  pop_scope(E, s);
  tl_stmt *r = ok ? make_seq(E, loc, &v) : NULL;
  tl_vec_free(&v);
  return r;
}

/* A new IR name (let, alloc, loop variable) may not hide another IR name of
 * the same prim_func. */
static bool check_new_name(elab *E, const char *name, tl_loc loc) {
  scope *where;
  binding *b = lookup(E, name, &where);
  if (!b || !where->in_pf || b->kind == BK_CONST) return true;
  err(E, loc, "redefinition of '%s'", name);
  if (b->loc.file) tl_note(E->d, b->loc, "previous definition of '%s' is here", name);
  return false;
}

/* Marks name as failed so later uses stay silent. */
static void poison(elab *E, const tl_ast_expr *target) {
  if (!target) return;
  if (target->kind == TL_AST_NAME) {
    if (lookup(E, target->u.name, NULL)) return; /* keep an existing definition */
    val *p = mk(E, V_POISON);
    if (p) bind(E, E->sc, target->u.name, p, target->loc, BK_CONST);
  } else if (target->kind == TL_AST_TUPLE || target->kind == TL_AST_LIST) {
    for (int i = 0; i < target->u.list.n; i++) poison(E, target->u.list.items[i]);
  }
}

static tl_expr *store_value(elab *E, tl_buffer *b, tl_expr *v, tl_loc loc) {
  if (tl_dtype_eq(v->dtype, b->dtype) || v->kind == TL_EXPR_STRING) return v;
  tl_dtype t = b->dtype;
  if (v->dtype.lanes > 1) { /* a vector store of the SIMT IR */
    t.lanes = v->dtype.lanes;
    if (tl_dtype_eq(v->dtype, t)) return v;
  }
  return chk(E, tl_ir_cast(E->m, loc, t, v));
}

static bool emit_store(elab *E, stmt_vec *out, tl_loc loc, tl_buffer *b, int n, tl_expr **idx,
                       tl_expr *value) {
  value = store_value(E, b, value, loc);
  if (!value) return false;
  tl_stmt *s = tl_ir_stmt(E->m, loc, TL_STMT_STORE);
  if (!s) return oom(E), false;
  s->u.store.buffer = b;
  s->u.store.n = n;
  s->u.store.indices = idx;
  s->u.store.value = value;
  return emit(E, out, s);
}

/* The indices of a subscript target A[i, j] (no slices). */
static bool target_indices(elab *E, const tl_ast_expr *t, tl_buffer **b, int *n, tl_expr ***idx) {
  val *base = eval(E, t->u.sub.value);
  if (!base) return false;
  if (base->k != V_BUFFER) {
    err_val(E, t->u.sub.value->loc, base, "cannot assign to an item of %s", describe(E, base));
    return false;
  }
  *b = base->u.buf;
  *n = t->u.sub.n;
  *idx = malloc_ir(E, sizeof(tl_expr *) * (size_t)(*n ? *n : 1));
  if (!*idx) return false;
  for (int i = 0; i < *n; i++) {
    const tl_ast_expr *it = t->u.sub.items[i];
    if (it->kind == TL_AST_SLICE) {
      err(E, it->loc, "cannot assign to a slice of buffer '%s'; use T.copy or T.fill",
          (*b)->name);
      return false;
    }
    if (!((*idx)[i] = eval_int(E, it, "a buffer index"))) return false;
  }
  return true;
}

static bool assign_name(elab *E, const tl_ast_expr *t, val *v, tl_loc vloc, stmt_vec *out,
                        const tl_dtype *annot) {
  const char *name = t->u.name;
  scope *where;
  binding *b = lookup(E, name, &where);
  bool in_pf = E->pf != NULL;
  if (b && where->in_pf) {
    switch (b->kind) {
    case BK_ALLOC:
      if (b->v->k == V_BUFFER && b->v->u.buf->scope == TL_SCOPE_LOCAL_VAR) {
        tl_expr *e = to_expr(E, v, vloc);
        tl_expr *zero = e ? lit_int(E, t->loc, 0) : NULL;
        tl_expr **idx = zero ? malloc_ir(E, sizeof(tl_expr *)) : NULL;
        if (!idx) return false;
        idx[0] = zero;
        return emit_store(E, out, t->loc, b->v->u.buf, 1, idx, e);
      }
      break;
    case BK_PARAM:
      err(E, t->loc, "cannot assign to scalar parameter '%s'", name);
      return false;
    case BK_CONST:
      if (!is_ir(v) && !annot) { /* rebinding a compile-time name */
        b->v = v;
        b->loc = t->loc;
        return true;
      }
      break;
    default: break;
    }
    if (b->kind != BK_CONST) {
      err(E, t->loc, "redefinition of '%s'", name);
      if (b->loc.file) tl_note(E->d, b->loc, "previous definition of '%s' is here", name);
      return false;
    }
  }
  if (!in_pf || (!is_ir(v) && !annot)) {
    /* compile-time binding (no IR) */
    return bind(E, E->sc, name, v, t->loc, BK_CONST);
  }
  if (v->k == V_BUFREF && !annot) {
    bool sl = false;
    for (int i = 0; i < v->u.ref.n; i++) sl |= v->u.ref.items[i].is_slice;
    if (sl) return bind(E, E->sc, name, v, t->loc, BK_CONST); /* a region alias */
  }
  if (v->k == V_BUFFER && !annot) return bind(E, E->sc, name, v, t->loc, BK_CONST);
  tl_expr *e = to_expr(E, v, vloc);
  if (!e) return false;
  if (annot && !tl_dtype_eq(*annot, e->dtype) && !(e = chk(E, tl_ir_cast(E->m, vloc, *annot, e))))
    return false;
  tl_var *var = tl_ir_new_var(E->m, t->loc, name, e->dtype, TL_VAR_LET);
  if (!var) return oom(E), false;
  tl_stmt *s = tl_ir_stmt(E->m, t->loc, TL_STMT_LET);
  if (!s) return oom(E), false;
  s->u.let.var = var;
  s->u.let.value = e;
  val *vv = mk_expr(E, chk(E, tl_ir_var(E->m, t->loc, var)));
  if (!vv) return false;
  return emit(E, out, s) && bind(E, E->sc, name, vv, t->loc, BK_LET);
}

static bool assign_target(elab *E, const tl_ast_expr *t, val *v, tl_loc vloc, stmt_vec *out) {
  if (E->depth >= MAX_DEPTH) {
    err(E, t->loc, "assignment target nested too deeply");
    return false;
  }
  switch (t->kind) {
  case TL_AST_NAME: return assign_name(E, t, v, vloc, out, NULL);
  case TL_AST_TUPLE:
  case TL_AST_LIST: {
    if (v->k != V_TUPLE) {
      err_val(E, t->loc, v, "cannot unpack %s into %d names", describe(E, v), t->u.list.n);
      return false;
    }
    if (v->u.tup.n != t->u.list.n) {
      err_val(E, t->loc, v, "expected %d values to unpack, got %d", t->u.list.n, v->u.tup.n);
      return false;
    }
    E->depth++;
    bool ok = true;
    for (int i = 0; ok && i < t->u.list.n; i++)
      ok = assign_target(E, t->u.list.items[i], v->u.tup.items[i], vloc, out);
    E->depth--;
    return ok;
  }
  case TL_AST_SUBSCRIPT: {
    if (!E->pf) {
      err(E, t->loc, "item assignment is only supported on buffers inside a @T.prim_func");
      return false;
    }
    tl_buffer *b;
    int n;
    tl_expr **idx;
    if (!target_indices(E, t, &b, &n, &idx)) return false;
    tl_expr *e = to_expr(E, v, vloc);
    return e && emit_store(E, out, t->loc, b, n, idx, e);
  }
  default:
    err(E, t->loc, "cannot assign to this expression");
    return false;
  }
}

static bool elab_augassign(elab *E, const tl_ast_stmt *s, stmt_vec *out) {
  const tl_ast_expr *t = s->u.aug.target;
  const char *op = s->u.aug.op;
  if (t->kind == TL_AST_NAME) {
    scope *where;
    binding *b = lookup(E, t->u.name, &where);
    if (!b) {
      err(E, t->loc, "name '%s' is not defined", t->u.name);
      return false;
    }
    if (b->v && b->v->k == V_LAZY && !force(E, b->v, t->loc)) return false;
    if (b->v && b->v->k == V_LAZY) b->v = b->v->u.lazy.cached;
    if (!b->v || b->v->k == V_POISON) return false;
    if (b->kind == BK_PARAM && where->in_pf) {
      err(E, t->loc, "cannot assign to scalar parameter '%s'", t->u.name);
      return false;
    }
    if (b->v->k == V_BUFFER && b->v->u.buf->scope == TL_SCOPE_LOCAL_VAR) {
      val *r = eval(E, s->u.aug.value);
      val *nv = r ? binop(E, op, b->v, r, t->loc) : NULL;
      tl_expr *e = nv ? to_expr(E, nv, t->loc) : NULL;
      tl_expr *zero = e ? lit_int(E, t->loc, 0) : NULL;
      tl_expr **idx = zero ? malloc_ir(E, sizeof(tl_expr *)) : NULL;
      if (!idx) return false;
      idx[0] = zero;
      return emit_store(E, out, t->loc, b->v->u.buf, 1, idx, e);
    }
    if (b->kind == BK_LET || b->kind == BK_LOOP || b->kind == BK_BLOCK) {
      err(E, t->loc, "cannot assign to '%s': it is immutable; use T.alloc_var", t->u.name);
      return false;
    }
    if (b->kind == BK_CONST && !is_ir(b->v) && b->v->k != V_BUFFER) {
      val *r = eval(E, s->u.aug.value);
      val *nv = r ? binop(E, op, b->v, r, t->loc) : NULL;
      if (!nv) return false;
      if (is_ir(nv) && E->pf) {
        err(E, t->loc, "cannot assign to '%s': it is a compile-time constant; use T.alloc_var",
            t->u.name);
        return false;
      }
      if (!where->in_pf && E->pf) return bind(E, E->sc, t->u.name, nv, t->loc, BK_CONST);
      b->v = nv;
      return true;
    }
    err(E, t->loc, "cannot assign to '%s'", t->u.name);
    return false;
  }
  if (t->kind == TL_AST_SUBSCRIPT && E->pf) {
    tl_buffer *b;
    int n;
    tl_expr **idx;
    if (!target_indices(E, t, &b, &n, &idx)) return false;
    tl_expr *cur = chk(E, tl_ir_load(E->m, t->loc, b, n, idx));
    val *cv = mk_expr(E, cur);
    val *r = cv ? eval(E, s->u.aug.value) : NULL;
    val *nv = r ? binop(E, op, cv, r, t->loc) : NULL;
    tl_expr *e = nv ? to_expr(E, nv, t->loc) : NULL;
    return e && emit_store(E, out, t->loc, b, n, idx, e);
  }
  err(E, t->loc, "cannot assign to this expression");
  return false;
}

/* ------------------------------------------------------------- alloc */

static bool elab_alloc(elab *E, const tl_ast_expr *target, const char *fname,
                       const tl_ast_expr *x, tl_loc loc, stmt_vec *out) {
  const char *fn = tprintf(E, "T.%s", fname);
  if (target->kind != TL_AST_NAME) {
    err(E, target->loc, "the result of %s must be assigned to a plain name", fn);
    return false;
  }
  bool bad = false;
  tl_scope sc;
  int ndim = 1;
  tl_expr **dims = NULL;
  tl_dtype dt;
  tl_expr *init = NULL;
  if (!strcmp(fname, "alloc_var")) {
    static const char *const kws[] = {"dtype", "init", NULL};
    if (!check_kws(E, x, fn, kws) || !check_arity(E, x, fn, 0, 2)) return false;
    const tl_ast_expr *da = get_arg(E, x, 0, "dtype", fn, &bad);
    const tl_ast_expr *ia = bad ? NULL : get_arg(E, x, 1, "init", fn, &bad);
    if (bad) return false;
    if (!da) {
      err(E, x->loc, "%s needs a dtype", fn);
      return false;
    }
    val *dv = eval(E, da);
    if (!dv || !to_dtype(E, dv, da->loc, &dt)) return false;
    if (ia) {
      val *iv = eval(E, ia);
      if (!iv || !(init = to_expr(E, iv, ia->loc))) return false;
      if (!tl_dtype_eq(init->dtype, dt) && !(init = chk(E, tl_ir_cast(E->m, ia->loc, dt, init))))
        return false;
    }
    sc = TL_SCOPE_LOCAL_VAR;
    if (!(dims = malloc_ir(E, sizeof(tl_expr *))) || !(dims[0] = lit_int(E, loc, 1))) return false;
  } else {
    bool shared = !strcmp(fname, "alloc_shared"), frag = !strcmp(fname, "alloc_fragment");
    if (!shared && !frag && strcmp(fname, "alloc_local")) {
      err(E, x->loc, "unknown allocation %s", fn);
      return false;
    }
    static const char *const kws[] = {"shape", "dtype", "scope", NULL};
    if (!check_kws(E, x, fn, kws) || !check_arity(E, x, fn, 0, 3)) return false;
    const tl_ast_expr *sa = get_arg(E, x, 0, "shape", fn, &bad);
    const tl_ast_expr *da = bad ? NULL : get_arg(E, x, 1, "dtype", fn, &bad);
    const tl_ast_expr *ca = bad ? NULL : get_arg(E, x, 2, "scope", fn, &bad);
    if (bad) return false;
    if (!sa || !da) {
      err(E, x->loc, "%s needs a shape and a dtype", fn);
      return false;
    }
    sc = shared ? TL_SCOPE_SHARED_DYN : frag ? TL_SCOPE_FRAGMENT : TL_SCOPE_LOCAL;
    if (!eval_shape(E, sa, &ndim, &dims)) return false;
    val *dv = eval(E, da);
    if (!dv || !to_dtype(E, dv, da->loc, &dt)) return false;
    if (ca) {
      val *cv = eval(E, ca);
      if (!cv) return false;
      const char *want = shared ? "shared.dyn or shared" : tl_scope_name(sc);
      if (cv->k != V_STR) {
        err_val(E, ca->loc, cv, "scope of %s must be a string (%s), got %s", fn, want,
                describe(E, cv));
        return false;
      }
      if (shared && !strcmp(cv->u.s, "shared")) sc = TL_SCOPE_SHARED;
      else if (strcmp(cv->u.s, tl_scope_name(sc))) {
        err_val(E, ca->loc, cv, "unsupported scope '%.100s' for %s (expected %s)", cv->u.s, fn,
                want);
        return false;
      }
    }
  }
  const char *name = target->u.name;
  if (!check_new_name(E, name, target->loc)) return false;
  tl_buffer *b = tl_ir_new_buffer(E->m, target->loc, name, dt, sc, ndim, dims);
  if (!b) return oom(E), false;
  b->init = init;
  tl_stmt *s = tl_ir_stmt(E->m, loc, TL_STMT_ALLOC);
  if (!s) return oom(E), false;
  s->u.alloc.buffer = b;
  val *bv = mk(E, V_BUFFER);
  if (!bv) return false;
  bv->u.buf = b;
  return emit(E, out, s) && bind(E, E->sc, name, bv, target->loc, BK_ALLOC);
}

/* The T.<name> function a call's callee names, without reporting errors
 * for other callees; NULL when the callee is not a T function. */
static const char *t_callee(elab *E, const tl_ast_expr *x) {
  if (x->kind != TL_AST_CALL) return NULL;
  const tl_ast_expr *f = x->u.call.func;
  if (f->kind != TL_AST_ATTR) return NULL;
  /* Resolve f.value quietly: a name bound to T, or tilelang.language. */
  const tl_ast_expr *base = f->u.attr.value;
  if (base->kind == TL_AST_NAME) {
    binding *b = lookup(E, base->u.name, NULL);
    if (!b || !b->v || b->v->k != V_NS || b->v->u.ns != NS_T) return NULL;
  } else if (base->kind == TL_AST_ATTR && base->u.attr.value->kind == TL_AST_NAME &&
             !strcmp(base->u.attr.name, "language")) {
    binding *b = lookup(E, base->u.attr.value->u.name, NULL);
    if (!b || !b->v || b->v->k != V_NS || b->v->u.ns != NS_TILELANG) return NULL;
  } else {
    return NULL;
  }
  return f->u.attr.name;
}

/* ------------------------------------------------------------- loops */

static bool elab_for(elab *E, const tl_ast_stmt *s, stmt_vec *out) {
  const tl_ast_expr *it = s->u.loop.iter, *tg = s->u.loop.target;
  const char *kind = NULL;
  bool builtin_range = false;
  if (it->kind == TL_AST_CALL) {
    kind = t_callee(E, it);
    if (!kind && it->u.call.func->kind == TL_AST_NAME && !strcmp(it->u.call.func->u.name, "range") &&
        !lookup(E, "range", NULL)) {
      kind = "serial";
      builtin_range = true;
    }
    if (!kind) {
      val *fv = eval(E, it->u.call.func);
      if (!fv) return false;
      if (fv->k == V_FUNC && !fv->builtin) kind = fv->u.fname;
      else if (fv->k == V_FUNC && !strcmp(fv->u.fname, "range")) kind = "serial", builtin_range = true;
    }
  }
  tl_loop_kind lk;
  if (kind && !strcmp(kind, "Parallel")) lk = TL_LOOP_PARALLEL;
  else if (kind && !strcmp(kind, "Pipelined")) lk = TL_LOOP_PIPELINED;
  else if (kind && !strcmp(kind, "serial")) lk = TL_LOOP_SERIAL;
  else if (kind && !strcmp(kind, "unroll")) lk = TL_LOOP_UNROLL;
  else if (kind && !strcmp(kind, "vectorized")) lk = TL_LOOP_VECTORIZED;
  else if (kind && !strcmp(kind, "thread_binding")) lk = TL_LOOP_THREAD;
  else {
    err(E, it->loc,
        "unsupported loop iterator; expected T.Parallel, T.Pipelined, T.serial, T.unroll or range");
    return false;
  }
  const char *fn = builtin_range ? "range" : tprintf(E, "T.%s", kind);
  int nargs = it->u.call.nargs;
  /* Loop variables. */
  int nvars = 1;
  const tl_ast_expr *const *names = &tg;
  if (tg->kind == TL_AST_TUPLE || tg->kind == TL_AST_LIST) {
    nvars = tg->u.list.n;
    names = (const tl_ast_expr *const *)tg->u.list.items;
  }
  for (int i = 0; i < nvars; i++)
    if (names[i]->kind != TL_AST_NAME) {
      err(E, names[i]->loc, "a loop variable must be a plain name");
      return false;
    }
  if (lk != TL_LOOP_PARALLEL && nvars != 1) {
    err(E, tg->loc, "%s binds one loop variable, got %d", fn, nvars);
    return false;
  }
  int num_stages = -1;
  tl_expr *step = NULL;
  int ne = lk == TL_LOOP_PARALLEL ? nargs : 1;
  tl_expr **mins = malloc_ir(E, sizeof(tl_expr *) * (size_t)(ne ? ne : 1));
  tl_expr **exts = malloc_ir(E, sizeof(tl_expr *) * (size_t)(ne ? ne : 1));
  if (!mins || !exts) return false;
  if (lk == TL_LOOP_PARALLEL) {
    if (!check_kws(E, it, fn, NULL) || !check_arity(E, it, fn, 1, -1)) return false;
    if (nvars != nargs) {
      err(E, tg->loc, "T.Parallel has %d extent%s but %d loop variable%s", nargs,
          nargs == 1 ? "" : "s", nvars, nvars == 1 ? "" : "s");
      return false;
    }
    for (int i = 0; i < nargs; i++) {
      if (!(exts[i] = eval_int(E, it->u.call.args[i], "a loop extent"))) return false;
      if (!(mins[i] = lit_int(E, it->u.call.args[i]->loc, 0))) return false;
    }
  } else {
    if (lk == TL_LOOP_PIPELINED) {
      static const char *const kws[] = {"num_stages", "order", "stage", "sync", "group", NULL};
      if (!check_kws(E, it, fn, kws)) return false;
      for (int i = 0; i < it->u.call.nkw; i++) {
        const tl_ast_keyword *k = &it->u.call.kw[i];
        if (strcmp(k->name, "num_stages")) {
          err(E, k->loc, "'%s' of T.Pipelined is not supported yet", k->name);
          return false;
        }
        val *nv = eval(E, k->value);
        int64_t ns;
        if (!nv || !to_const_int(E, nv, k->value->loc, "num_stages", &ns)) return false;
        if (ns < 0) {
          err(E, k->value->loc, "T.Pipelined: num_stages must be >= 0, got %lld", (long long)ns);
          return false;
        }
        if (ns > 1000000) {
          err(E, k->value->loc, "T.Pipelined: num_stages %lld is too large", (long long)ns);
          return false;
        }
        num_stages = (int)ns;
      }
      if (!check_arity(E, it, fn, 1, 2)) return false;
    } else if (lk == TL_LOOP_THREAD) {
      /* T.thread_binding([lo,] ext[, thread="threadIdx.x"]) (SIMT IR) */
      static const char *const kws[] = {"thread", NULL};
      if (!check_kws(E, it, fn, kws) || !check_arity(E, it, fn, 1, 2)) return false;
      const tl_ast_keyword *tk = find_kw(it, "thread");
      if (tk) {
        val *tv = eval(E, tk->value);
        if (!tv) return false;
        if (tv->k != V_STR || strcmp(tv->u.s, "threadIdx.x")) {
          err(E, tk->value->loc, "T.thread_binding: only thread=\"threadIdx.x\" is supported");
          return false;
        }
      }
    } else {
      if (!check_kws(E, it, fn, NULL) || !check_arity(E, it, fn, 1, 3)) return false;
    }
    tl_expr *lo, *hi;
    if (nargs == 1) {
      lo = lit_int(E, it->loc, 0);
      hi = eval_int(E, it->u.call.args[0], "a loop extent");
    } else {
      lo = eval_int(E, it->u.call.args[0], "a loop bound");
      hi = lo ? eval_int(E, it->u.call.args[1], "a loop bound") : NULL;
    }
    if (!lo || !hi) return false;
    if (nargs == 3) {
      val *sv = eval(E, it->u.call.args[2]);
      if (!sv || !(step = to_int_expr(E, sv, it->u.call.args[2]->loc, "a loop step"))) return false;
      int64_t c;
      if (tl_expr_is_const_int(step, &c)) {
        if (c == 0) {
          err(E, it->u.call.args[2]->loc, "loop step must not be zero");
          return false;
        }
        if (c == 1) step = NULL;
      }
    }
    mins[0] = lo;
    int64_t c;
    exts[0] = (tl_expr_is_const_int(lo, &c) && c == 0)
                  ? hi : chk(E, tl_ir_binary(E->m, it->loc, TL_OP_SUB, hi, lo));
    if (!exts[0]) return false;
  }
  tl_var **vars = malloc_ir(E, sizeof(tl_var *) * (size_t)nvars);
  if (!vars) return false;
  for (int i = 0; i < nvars; i++) {
    if (!check_new_name(E, names[i]->u.name, names[i]->loc)) return false;
    for (int j = 0; j < i; j++)
      if (names[j]->u.name == names[i]->u.name) {
        err(E, names[i]->loc, "duplicate loop variable '%s'", names[i]->u.name);
        return false;
      }
    tl_dtype dt = exts[i]->dtype.code == TL_TYPE_INT && exts[i]->dtype.bits == 64 ? TL_INT64 : TL_INT32;
    if (!(vars[i] = tl_ir_new_var(E->m, names[i]->loc, names[i]->u.name, dt, TL_VAR_LOOP)))
      return oom(E), false;
  }
  if (!push_scope(E, true)) return false;
  scope *sc = E->sc;
  bool ok = true;
  for (int i = 0; ok && i < nvars; i++) {
    val *vv = mk_expr(E, chk(E, tl_ir_var(E->m, names[i]->loc, vars[i])));
    ok = vv && bind(E, sc, names[i]->u.name, vv, names[i]->loc, BK_LOOP);
  }
  stmt_vec body = {0};
  if (ok) ok = elab_block(E, &s->u.loop.body, &body);
  pop_scope(E, sc);
  tl_stmt *b = ok ? make_seq(E, s->loc, &body) : NULL;
  tl_vec_free(&body);
  if (!b) return false;
  tl_stmt *f = tl_ir_stmt(E->m, s->loc, TL_STMT_FOR);
  if (!f) return oom(E), false;
  f->u.loop.kind = lk;
  f->u.loop.nvars = nvars;
  f->u.loop.vars = vars;
  f->u.loop.mins = mins;
  f->u.loop.extents = exts;
  f->u.loop.step = step;
  f->u.loop.num_stages = num_stages;
  f->u.loop.body = b;
  return emit(E, out, f);
}

/* ------------------------------------------------------------ T.Kernel */

static bool elab_kernel(elab *E, const tl_ast_stmt *s, stmt_vec *out) {
  const tl_ast_expr *x = s->u.with.ctx, *tg = s->u.with.target;
  if (E->in_kernel) {
    err(E, s->loc, "nested T.Kernel is not supported");
    return false;
  }
  if (++E->nkernels > 1) {
    err(E, s->loc, "only one T.Kernel per prim_func is supported");
    return false;
  }
  static const char *const kws[] = {"threads", NULL};
  if (!check_kws(E, x, "T.Kernel", kws)) return false;
  int n = x->u.call.nargs;
  if (n < 1 || n > 3) {
    err(E, x->loc, "T.Kernel takes 1 to 3 grid dimensions, got %d", n);
    return false;
  }
  tl_stmt *k = tl_ir_stmt(E->m, s->loc, TL_STMT_KERNEL);
  if (!k) return oom(E), false;
  k->u.kernel.ngrid = n;
  for (int i = 0; i < n; i++)
    if (!(k->u.kernel.grid[i] = eval_int(E, x->u.call.args[i], "a grid dimension"))) return false;
  const tl_ast_keyword *tk = find_kw(x, "threads");
  if (tk) {
    val *tv = eval(E, tk->value);
    if (!tv) return false;
    if (tv->k == V_TUPLE) {
      err(E, tk->value->loc, "threads must be an integer (lists of thread dimensions are not "
                             "supported)");
      return false;
    }
    if (!(k->u.kernel.threads = to_int_expr(E, tv, tk->value->loc, "threads"))) return false;
  } else if (!(k->u.kernel.threads = lit_int(E, x->loc, 128))) {
    return false;
  }
  static const char *const dflt[3] = {"bx", "by", "bz"};
  const tl_ast_expr *names[3] = {NULL, NULL, NULL};
  if (tg) {
    int nn = 1;
    if (tg->kind == TL_AST_TUPLE || tg->kind == TL_AST_LIST) {
      nn = tg->u.list.n;
      for (int i = 0; i < nn && i < 3; i++) names[i] = tg->u.list.items[i];
    } else {
      names[0] = tg;
    }
    if (nn != n) {
      err(E, tg->loc, "T.Kernel has %d grid dimension%s but 'as' binds %d name%s", n,
          n == 1 ? "" : "s", nn, nn == 1 ? "" : "s");
      return false;
    }
    for (int i = 0; i < n; i++)
      if (names[i]->kind != TL_AST_NAME) {
        err(E, names[i]->loc, "a block index must be bound to a plain name");
        return false;
      }
  }
  for (int i = 0; i < n; i++) {
    const char *nm = names[i] ? names[i]->u.name : intern(E, dflt[i]);
    tl_loc l = names[i] ? names[i]->loc : x->loc;
    if (!nm) return false;
    if (names[i] && !check_new_name(E, nm, l)) return false;
    for (int j = 0; j < i; j++)
      if (names[j] && names[i] && names[j]->u.name == nm) {
        err(E, l, "duplicate block index name '%s'", nm);
        return false;
      }
    if (!(k->u.kernel.block_vars[i] = tl_ir_new_var(E->m, l, nm, TL_INT32, TL_VAR_BLOCK)))
      return oom(E), false;
  }
  if (!push_scope(E, true)) return false;
  scope *sc = E->sc;
  bool ok = true;
  for (int i = 0; ok && i < n; i++) {
    if (!names[i]) continue;
    val *vv = mk_expr(E, chk(E, tl_ir_var(E->m, names[i]->loc, k->u.kernel.block_vars[i])));
    ok = vv && bind(E, sc, names[i]->u.name, vv, names[i]->loc, BK_BLOCK);
  }
  stmt_vec body = {0};
  E->in_kernel = true;
  if (ok) ok = elab_block(E, &s->u.with.body, &body);
  E->in_kernel = false;
  pop_scope(E, sc);
  tl_stmt *b = ok ? make_seq(E, s->loc, &body) : NULL;
  tl_vec_free(&body);
  if (!b) return false;
  k->u.kernel.body = b;
  return emit(E, out, k);
}

/* ------------------------------------------------------------ tile ops */

static bool region_from(elab *E, val *v, tl_operand *o, tl_loc loc) {
  o->kind = TL_OPND_REGION;
  o->loc = loc;
  tl_region *r = &o->region;
  if (v->k == V_BUFFER) {
    tl_buffer *b = v->u.buf;
    r->buffer = b;
    r->ndim = b->ndim;
    if (b->ndim > 0) {
      r->min = malloc_ir(E, sizeof(tl_expr *) * (size_t)b->ndim);
      r->extent = malloc_ir(E, sizeof(tl_expr *) * (size_t)b->ndim);
      if (!r->min || !r->extent) return false;
      for (int d = 0; d < b->ndim; d++) {
        if (!(r->min[d] = lit_int(E, loc, 0))) return false;
        r->extent[d] = b->shape[d];
      }
    }
    return true;
  }
  int n = v->u.ref.n;
  r->buffer = v->u.ref.buf;
  r->ndim = n;
  r->min = malloc_ir(E, sizeof(tl_expr *) * (size_t)(n ? n : 1));
  r->extent = malloc_ir(E, sizeof(tl_expr *) * (size_t)(n ? n : 1));
  if (!r->min || !r->extent) return false;
  for (int d = 0; d < n; d++) {
    r->min[d] = v->u.ref.items[d].min;
    r->extent[d] = v->u.ref.items[d].extent;
  }
  return true;
}

/* T.annotate_layout({buf: layout, ...}): (region, layout-name) pairs. */
static bool layout_pairs(elab *E, const tl_ast_expr *a, operand_vec *ops) {
  if (a->kind != TL_AST_DICT) {
    err(E, a->loc, "T.annotate_layout expects a dict {buffer: layout}");
    return false;
  }
  for (int i = 0; i < a->u.dict.n; i++) {
    const tl_ast_expr *k = a->u.dict.keys[i], *lv = a->u.dict.values[i];
    val *kv = eval(E, k);
    if (!kv) return false;
    if (kv->k != V_BUFFER) {
      err_val(E, k->loc, kv, "T.annotate_layout keys must be buffers, got %s", describe(E, kv));
      return false;
    }
    tl_operand ko = {0}, vo = {0};
    if (!region_from(E, kv, &ko, k->loc)) return false;
    vo.kind = TL_OPND_EXPR;
    vo.loc = lv->loc;
    const char *lname = NULL;
    if (lv->kind == TL_AST_STR) {
      lname = lv->u.str;
    } else if (lv->kind == TL_AST_CALL) {
      const tl_ast_expr *f = lv->u.call.func;
      lname = f->kind == TL_AST_ATTR ? f->u.attr.name : f->kind == TL_AST_NAME ? f->u.name : NULL;
    }
    if (!lname) {
      err(E, lv->loc, "unsupported layout; expected a layout constructor call such as "
                      "make_swizzled_layout(buf)");
      return false;
    }
    if (!(vo.expr = chk(E, tl_ir_string(E->m, lv->loc, lname)))) return false;
    if (!tl_vec_push(ops, ko) || !tl_vec_push(ops, vo)) return oom(E), false;
  }
  return true;
}

static tl_expr *attr_value(elab *E, int op, int ai, val *v, tl_loc loc) {
  const tl_tile_op_info *info = &tl_tile_ops[op];
  const tl_attr_info *a = &info->attrs[ai];
  switch (a->kind) {
  case TL_ATTR_BOOL:
    if (v->k != V_BOOL) {
      err_val(E, loc, v, "'%s' of T.%s must be True or False, got %s", a->name, info->name,
              describe(E, v));
      return NULL;
    }
    if (v->u.b == (a->default_int != 0)) return NULL;
    return chk(E, tl_ir_int(E->m, loc, TL_BOOL, v->u.b));
  case TL_ATTR_INT: {
    int64_t i;
    if (v->k != V_INT) {
      err_val(E, loc, v, "'%s' of T.%s must be an integer constant, got %s", a->name,
              info->name, describe(E, v));
      return NULL;
    }
    i = v->u.i;
    if (i == a->default_int) return NULL;
    return lit_int(E, loc, i);
  }
  case TL_ATTR_POLICY:
    if (v->k != V_POLICY) {
      err_val(E, loc, v, "'%s' of T.%s must be a T.GemmWarpPolicy, got %s", a->name, info->name,
              describe(E, v));
      return NULL;
    }
    if (v->u.policy == a->default_int) return NULL;
    return lit_int(E, loc, v->u.policy);
  case TL_ATTR_STRING:
    if (v->k != V_STR) {
      err_val(E, loc, v, "'%s' of T.%s must be a string, got %s", a->name, info->name,
              describe(E, v));
      return NULL;
    }
    if (a->default_str && !strcmp(a->default_str, v->u.s)) return NULL;
    return chk(E, tl_ir_string(E->m, loc, v->u.s));
  default:
    return to_arg_expr(E, v, loc);
  }
}

/* Keyword names of the positional operands (TileLang's parameter names). */
static const char *operand_name(int op, int i) {
  static const char *const names[TL_TILE_NUM_OPS][3] = {
      [TL_TILE_COPY] = {"src", "dst"},
      [TL_TILE_GEMM] = {"A", "B", "C"},
      [TL_TILE_FILL] = {"buffer", "value"},
      [TL_TILE_CLEAR] = {"buffer"},
      [TL_TILE_REDUCE_MAX] = {"buffer", "out"},
      [TL_TILE_REDUCE_MIN] = {"buffer", "out"},
      [TL_TILE_REDUCE_SUM] = {"buffer", "out"},
      [TL_TILE_REDUCE_ABSSUM] = {"buffer", "out"},
      [TL_TILE_REDUCE_ABSMAX] = {"buffer", "out"},
      [TL_TILE_ATOMIC_ADD] = {"dst", "value"},
      [TL_TILE_USE_SWIZZLE] = {"panel_size"},
      [TL_TILE_ANNOTATE_LAYOUT] = {"layout_map"},
      [TL_TILE_ASYNC_COPY] = {"src", "dst"},
  };
  if (op < 0 || op >= TL_TILE_NUM_OPS || i < 0 || i >= 3) return NULL;
  return names[op][i];
}

static bool elab_tile(elab *E, int op, const tl_ast_expr *x, tl_loc loc, stmt_vec *out) {
  const tl_tile_op_info *info = &tl_tile_ops[op];
  const char *fn = tprintf(E, "T.%s", info->name);
  int nops = (int)strlen(info->operands), nargs = x->u.call.nargs, nattrs = info->nattrs;
  bool pairs = info->operands[0] == 'D';
  operand_vec ops = {0};
  tl_expr **attrs = nattrs ? malloc_ir(E, sizeof(tl_expr *) * (size_t)nattrs) : NULL;
  bool *given = nattrs ? talloc(E, sizeof(bool) * (size_t)nattrs) : NULL;
  bool ok = !nattrs || (attrs && given);
  /* Operands may also be passed by keyword (T.use_swizzle(panel_size=10)). */
  const tl_ast_expr *opnd[8] = {NULL};
  const tl_ast_keyword *opkw[8] = {NULL};
  int nkwops = 0;
  for (int i = 0; i < nops && i < 8; i++) {
    if (i < nargs) {
      opnd[i] = x->u.call.args[i];
      continue;
    }
    const char *on = operand_name(op, i);
    const tl_ast_keyword *k = on ? find_kw(x, on) : NULL;
    if (k) {
      opnd[i] = k->value;
      opkw[i] = k;
      nkwops++;
    }
  }
  if (ok && nargs + nkwops < nops) {
    err(E, x->loc, "%s takes %d positional argument%s, got %d", fn, nops, nops == 1 ? "" : "s",
        nargs);
    ok = false;
  }
  if (ok && nargs > nops + nattrs) {
    if (nattrs)
      err(E, x->loc, "%s takes at most %d positional arguments (%d operands and %d attributes), "
                     "got %d", fn, nops + nattrs, nops, nattrs, nargs);
    else
      err(E, x->loc, "%s takes %d positional argument%s, got %d", fn, nops,
          nops == 1 ? "" : "s", nargs);
    ok = false;
  }
  /* Operands. */
  bool corner[8] = {false};
  if (ok && !pairs && nops > 8) {
    err(E, x->loc, "internal error: %s has too many operands", fn);
    ok = false;
  }
  for (int i = 0; ok && i < nops; i++) {
    const tl_ast_expr *a = opnd[i];
    char c = info->operands[i];
    if (pairs) {
      ok = layout_pairs(E, a, &ops);
      break;
    }
    val *v = eval(E, a);
    if (!v) {
      ok = false;
      break;
    }
    tl_operand o = {0};
    bool region = v->k == V_BUFREF || (v->k == V_BUFFER && v->u.buf->scope != TL_SCOPE_LOCAL_VAR);
    if (c == 'X' && v->k == V_BUFREF && v->u.ref.corner) region = false;
    if (c == 'R' && v->k == V_BUFFER) region = true;
    if (c == 'E') region = false;
    if (region) {
      ok = region_from(E, v, &o, a->loc);
      corner[i] = v->k == V_BUFREF && v->u.ref.corner;
    } else if (c == 'R') {
      err_val(E, a->loc, v, "operand %d of %s must be a buffer or a buffer region, got %s", i + 1,
              fn, describe(E, v));
      ok = false;
    } else {
      o.kind = TL_OPND_EXPR;
      o.loc = a->loc;
      ok = (o.expr = to_expr(E, v, a->loc)) != NULL;
    }
    if (ok && !tl_vec_push(&ops, o)) {
      oom(E);
      ok = false;
    }
  }
  /* Corner-only operands (all single indices): T.copy takes the other
   * operand's extents, right-aligned, leading dims 1; others keep extent 1. */
  for (size_t i = 0; ok && !pairs && op == TL_TILE_COPY && i < ops.len; i++) {
    if (!corner[i]) continue;
    tl_operand *o = &ops.data[i], *other = NULL;
    for (size_t j = 0; j < ops.len && !other; j++)
      if (j != i && !corner[j] && ops.data[j].kind == TL_OPND_REGION) other = &ops.data[j];
    if (!other) continue;
    int d = o->region.ndim, k = other->region.ndim;
    for (int t = 0; t < d; t++) {
      int src = k - d + t;
      if (src >= 0) o->region.extent[t] = other->region.extent[src];
    }
  }
  /* Attributes: extra positional arguments, then keywords. */
  for (int i = nops; ok && i < nargs; i++) {
    const tl_ast_expr *a = x->u.call.args[i];
    int ai = i - nops;
    val *v = eval(E, a);
    if (!v) {
      ok = false;
      break;
    }
    if ((v->k == V_BUFFER || v->k == V_BUFREF) && info->attrs[ai].kind != TL_ATTR_EXPR) {
      err(E, x->loc, "%s takes %d positional argument%s, got %d", fn, nops, nops == 1 ? "" : "s",
          nargs);
      ok = false;
      break;
    }
    given[ai] = true;
    int before = E->nerr;
    attrs[ai] = attr_value(E, op, ai, v, a->loc);
    if (E->nerr != before) ok = false;
  }
  for (int i = 0; ok && i < x->u.call.nkw; i++) {
    const tl_ast_keyword *k = &x->u.call.kw[i];
    bool is_opnd = false;
    for (int j = 0; j < nops && j < 8; j++) is_opnd |= opkw[j] == k;
    if (is_opnd) continue;
    for (int j = 0; j < nargs && j < nops; j++)
      if (k->name && operand_name(op, j) && !strcmp(operand_name(op, j), k->name)) {
        err(E, k->loc, "%s got multiple values for '%s'", fn, k->name);
        ok = false;
      }
    if (!ok) break;
    int ai = k->name ? tl_tile_op_attr_index(op, k->name) : -1;
    if (ai < 0) {
      err(E, k->loc, "unknown keyword '%s' for %s", k->name ? k->name : "**", fn);
      ok = false;
      break;
    }
    if (given[ai]) {
      err(E, k->loc, "%s got multiple values for '%s'", fn, k->name);
      ok = false;
      break;
    }
    given[ai] = true;
    val *v = eval(E, k->value);
    if (!v) {
      ok = false;
      break;
    }
    int before = E->nerr;
    attrs[ai] = attr_value(E, op, ai, v, k->value->loc);
    if (E->nerr != before) ok = false;
  }
  if (!ok) {
    tl_vec_free(&ops);
    return false;
  }
  tl_stmt *s = tl_ir_stmt(E->m, loc, TL_STMT_TILE);
  if (!s) {
    tl_vec_free(&ops);
    return oom(E), false;
  }
  s->u.tile.op = op;
  s->u.tile.nargs = (int)ops.len;
  s->u.tile.args = ops.len ? malloc_ir(E, sizeof(tl_operand) * ops.len) : NULL;
  if (ops.len && !s->u.tile.args) {
    tl_vec_free(&ops);
    return false;
  }
  if (ops.len) memcpy(s->u.tile.args, ops.data, sizeof(tl_operand) * ops.len);
  s->u.tile.attrs = attrs;
  tl_vec_free(&ops);
  return emit(E, out, s);
}

/* ---------------------------------------------------------- out_idx */

/* Sets pf's out_idx from v (int, list of ints, None), normalized. */
static bool set_out_idx(elab *E, tl_primfunc *pf, val *v, const tl_ast_expr *ast) {
  if (!v) return false;
  if (v->k == V_NONE) {
    pf->has_out_idx = false;
    pf->nout = 0;
    pf->out_idx = NULL;
    return true;
  }
  int n = 1;
  val *const *items = &v;
  if (v->k == V_TUPLE) {
    n = v->u.tup.n;
    items = v->u.tup.items;
  } else if (v->k != V_INT) {
    err_val(E, ast->loc, v, "out_idx must be an int, a list of ints or None, got %s",
            describe(E, v));
    return false;
  }
  int *idx = n ? malloc_ir(E, sizeof(int) * (size_t)n) : NULL;
  if (n && !idx) return false;
  for (int i = 0; i < n; i++) {
    tl_loc l = (v->k == V_TUPLE && (ast->kind == TL_AST_LIST || ast->kind == TL_AST_TUPLE) &&
                ast->u.list.n == n) ? ast->u.list.items[i]->loc : ast->loc;
    if (items[i]->k != V_INT) {
      err_val(E, l, items[i], "out_idx entries must be integers, got %s", describe(E, items[i]));
      return false;
    }
    int64_t k = items[i]->u.i;
    if (k < -(int64_t)pf->nparams || k >= pf->nparams) {
      err_val(E, l, items[i], "out_idx %lld is out of range for %d parameter%s", (long long)k,
              pf->nparams, pf->nparams == 1 ? "" : "s");
      return false;
    }
    idx[i] = (int)(k < 0 ? k + pf->nparams : k);
  }
  pf->has_out_idx = n > 0;
  pf->nout = n;
  pf->out_idx = n ? idx : NULL;
  return true;
}

/* "tl.enable_fast_math": v must be a bool (or 0/1); sets *on. */
static bool fast_math_value(elab *E, val *v, const tl_ast_expr *ast, bool *on) {
  if (!v) return false;
  if (v->k != V_BOOL && !(v->k == V_INT && (v->u.i == 0 || v->u.i == 1))) {
    err_val(E, ast->loc, v, "\"tl.enable_fast_math\" must be True or False, got %s", describe(E, v));
    return false;
  }
  *on = v->k == V_BOOL ? v->u.b : v->u.i != 0;
  return true;
}

static bool elab_func_attr(elab *E, const tl_ast_expr *x) {
  if (!check_kws(E, x, "T.func_attr", NULL) || !check_arity(E, x, "T.func_attr", 1, 1))
    return false;
  const tl_ast_expr *a = x->u.call.args[0];
  if (a->kind != TL_AST_DICT) {
    err(E, a->loc, "T.func_attr expects a dict of attributes");
    return false;
  }
  for (int i = 0; i < a->u.dict.n; i++) {
    val *k = eval(E, a->u.dict.keys[i]);
    if (!k) return false;
    bool is_out = k->k == V_STR && !strcmp(k->u.s, "out_idx");
    bool is_fast = k->k == V_STR && !strcmp(k->u.s, "tl.enable_fast_math");
    if (!is_out && !is_fast) {
      if (k->k == V_STR)
        err(E, a->u.dict.keys[i]->loc,
            "unsupported function attribute '%.100s' (only \"out_idx\" and \"tl.enable_fast_math\" are "
            "understood)", k->u.s);
      else
        err_val(E, a->u.dict.keys[i]->loc, k, "function attribute names must be strings, got %s",
                describe(E, k));
      return false;
    }
    val *v = eval(E, a->u.dict.values[i]);
    if (is_fast) {
      if (!fast_math_value(E, v, a->u.dict.values[i], &E->pf->fast_math)) return false;
    } else if (!v || !set_out_idx(E, E->pf, v, a->u.dict.values[i])) {
      return false;
    }
  }
  return true;
}

/* ------------------------------------------------------ statement list */

static bool elab_expr_stmt(elab *E, const tl_ast_stmt *s, stmt_vec *out) {
  const tl_ast_expr *x = s->u.expr;
  if (x->kind == TL_AST_STR) return true; /* docstring */
  if (x->kind == TL_AST_CALL) {
    const char *tn = t_callee(E, x);
    if (tn) {
      int op = tl_tile_op_lookup(tn);
      if (op >= 0) return elab_tile(E, op, x, s->loc, out);
      if (!strcmp(tn, "func_attr")) return elab_func_attr(E, x);
    }
    val *v = eval(E, x);
    if (!v) return false;
    if (v->k == V_NONE) return true;
    if (v->k == V_EXPR) {
      tl_stmt *st = tl_ir_stmt(E->m, s->loc, TL_STMT_EVAL);
      if (!st) return oom(E), false;
      st->u.eval.value = v->u.e;
      return emit(E, out, st);
    }
  } else if (!eval(E, x)) {
    return false;
  }
  err(E, x->loc, "this expression statement has no effect");
  return false;
}

static bool elab_if(elab *E, const tl_ast_stmt *s, stmt_vec *out) {
  val *c = eval(E, s->u.ifs.test);
  if (!c) return false;
  bool t;
  if (!is_ir(c) && truthy(c, &t)) /* compile-time condition: only the taken branch */
    return elab_block(E, t ? &s->u.ifs.body : &s->u.ifs.orelse, out);
  tl_expr *ce = to_expr(E, c, s->u.ifs.test->loc);
  if (!ce) return false;
  tl_stmt *th = elab_body(E, &s->u.ifs.body, s->loc);
  if (!th) return false;
  tl_stmt *el = NULL;
  if (s->u.ifs.orelse.n) {
    const tl_ast_stmt *first = s->u.ifs.orelse.stmts[0];
    if (!(el = elab_body(E, &s->u.ifs.orelse, first->loc))) return false;
  }
  tl_stmt *is = tl_ir_stmt(E->m, s->loc, TL_STMT_IF);
  if (!is) return oom(E), false;
  is->u.ifs.cond = ce;
  is->u.ifs.then_s = th;
  is->u.ifs.else_s = el;
  return emit(E, out, is);
}

static bool elab_stmt(elab *E, const tl_ast_stmt *s, stmt_vec *out) {
  switch (s->kind) {
  case TL_AST_EXPR_STMT: return elab_expr_stmt(E, s, out);
  case TL_AST_ASSIGN: {
    const tl_ast_expr *value = s->u.assign.value;
    const char *tn = t_callee(E, value);
    if (tn && (!strcmp(tn, "alloc_shared") || !strcmp(tn, "alloc_fragment") ||
               !strcmp(tn, "alloc_local") || !strcmp(tn, "alloc_var"))) {
      if (s->u.assign.ntargets != 1) {
        err(E, s->loc, "the result of T.%s must be assigned to exactly one name", tn);
        return false;
      }
      return elab_alloc(E, s->u.assign.targets[0], tn, value, s->loc, out);
    }
    val *v = eval(E, value);
    if (!v) return false;
    for (int i = 0; i < s->u.assign.ntargets; i++)
      if (!assign_target(E, s->u.assign.targets[i], v, value->loc, out)) return false;
    return true;
  }
  case TL_AST_AUGASSIGN: return elab_augassign(E, s, out);
  case TL_AST_ANNASSIGN: {
    const tl_ast_expr *t = s->u.ann.target;
    if (t->kind != TL_AST_NAME) {
      err(E, t->loc, "an annotated assignment needs a plain name");
      return false;
    }
    val *av = eval(E, s->u.ann.annotation);
    tl_dtype dt;
    if (!av || !to_dtype(E, av, s->u.ann.annotation->loc, &dt)) return false;
    if (!s->u.ann.value) {
      err(E, t->loc, "a declaration needs a value; use T.alloc_var for a mutable scalar");
      return false;
    }
    val *v = eval(E, s->u.ann.value);
    return v && assign_name(E, t, v, s->u.ann.value->loc, out, &dt);
  }
  case TL_AST_FOR: return elab_for(E, s, out);
  case TL_AST_WITH: {
    const tl_ast_expr *c = s->u.with.ctx;
    const char *tn = t_callee(E, c);
    if (!tn && c->kind == TL_AST_CALL) {
      val *fv = eval(E, c->u.call.func);
      if (!fv) return false;
      if (fv->k == V_FUNC && !fv->builtin) tn = fv->u.fname;
    }
    if (!tn || strcmp(tn, "Kernel")) {
      err(E, c->loc, "unsupported 'with' statement; expected T.Kernel(...)");
      return false;
    }
    return elab_kernel(E, s, out);
  }
  case TL_AST_IF: return elab_if(E, s, out);
  case TL_AST_PASS: return true;
  case TL_AST_RETURN:
    err(E, s->loc, "'return' is not supported in a @T.prim_func");
    return false;
  case TL_AST_DEF:
    err(E, s->loc, "nested functions are not supported in a @T.prim_func");
    return false;
  case TL_AST_IMPORT:
    err(E, s->loc, "'import' is not supported in a @T.prim_func; import at module level");
    return false;
  case TL_AST_WHILE:
    err(E, s->loc, "'while' loops are not supported; use T.serial or range");
    return false;
  case TL_AST_BREAK:
    err(E, s->loc, "'break' is not supported in a @T.prim_func");
    return false;
  case TL_AST_CONTINUE:
    err(E, s->loc, "'continue' is not supported in a @T.prim_func");
    return false;
  default:
    err(E, s->loc, "%s is not supported in a @T.prim_func", stmt_name(s->kind));
    return false;
  }
  err(E, s->loc, "unsupported statement");
  return false;
}

static void poison_stmt_targets(elab *E, const tl_ast_stmt *s) {
  if (s->kind == TL_AST_ASSIGN)
    for (int i = 0; i < s->u.assign.ntargets; i++) poison(E, s->u.assign.targets[i]);
  else if (s->kind == TL_AST_ANNASSIGN)
    poison(E, s->u.ann.target);
}

static bool elab_block(elab *E, const tl_ast_block *b, stmt_vec *out) {
  if (E->depth >= MAX_DEPTH) {
    if (b->n) err(E, b->stmts[0]->loc, "statements nested too deeply (limit %d)", MAX_DEPTH);
    return false;
  }
  E->depth++;
  bool ok = true;
  for (int i = 0; i < b->n && !E->oom; i++) {
    if (!elab_stmt(E, b->stmts[i], out)) {
      ok = false;
      poison_stmt_targets(E, b->stmts[i]);
    }
  }
  E->depth--;
  return ok && !E->oom;
}

/* ============================================================ prim_func */

/* Marks the dynamic symbols an IR tree uses. */
typedef struct dyn_uses { tl_visitor v; tl_map *used; } dyn_uses;
static void mark_dynamic(tl_visitor *v, const tl_expr *e) {
  if (e->kind == TL_EXPR_VAR && e->u.var && e->u.var->kind == TL_VAR_DYNAMIC)
    tl_map_put(((dyn_uses *)v)->used, e->u.var, (void *)1);
}

static bool collect_dynamic(elab *E, tl_primfunc *pf) {
  tl_map used;
  tl_map_init(&used);
  dyn_uses u = {{mark_dynamic, NULL, NULL, false, 0}, &used};
  for (int i = 0; i < pf->nparams; i++) {
    const tl_buffer *b = pf->params[i].kind == TL_PARAM_TENSOR ? pf->params[i].buffer : NULL;
    for (int d = 0; b && d < b->ndim; d++) tl_visit_expr(&u.v, b->shape[d]);
  }
  tl_visit_stmt(&u.v, pf->body);
  int n = 0;
  for (size_t i = 0; i < E->dyn.len; i++)
    if (tl_map_get(&used, E->dyn.data[i], NULL)) n++;
  pf->ndynamic = n;
  pf->dynamic = n ? malloc_ir(E, sizeof(tl_var *) * (size_t)n) : NULL;
  n = 0;
  for (size_t i = 0; pf->dynamic && i < E->dyn.len; i++)
    if (tl_map_get(&used, E->dyn.data[i], NULL)) pf->dynamic[n++] = E->dyn.data[i];
  tl_map_free(&used);
  return !(pf->ndynamic && !pf->dynamic);
}

/* Elaborates a @T.prim_func def in the current scope.  out_idx (with its
 * AST) comes from a tilelang.jit decorator, or NULL. */
static val *elab_primfunc(elab *E, const tl_ast_stmt *def, val *out_idx,
                          const tl_ast_expr *out_ast) {
  tl_primfunc *pf = malloc_ir(E, sizeof *pf);
  if (!pf) return NULL;
  pf->name = def->u.def.name;
  pf->loc = def->loc;
  pf->fast_math = E->jit_fast_math;
  tl_primfunc *saved_pf = E->pf;
  int saved_nk = E->nkernels;
  bool saved_ik = E->in_kernel;
  E->pf = pf;
  E->nkernels = 0;
  E->in_kernel = false;
  bool params_ok = true;
  scope *sc = push_scope(E, true);
  if (!sc) {
    E->pf = saved_pf;
    return NULL;
  }
  int np = def->u.def.nparams;
  pf->params = np ? malloc_ir(E, sizeof(tl_param) * (size_t)np) : NULL;
  for (int i = 0; i < np && !E->oom; i++) {
    const tl_ast_param *p = &def->u.def.params[i];
    bool dup = false;
    for (int j = 0; j < i; j++) dup |= def->u.def.params[j].name == p->name;
    if (dup) {
      err(E, p->loc, "duplicate parameter '%s'", p->name);
      params_ok = false;
      continue;
    }
    if (p->default_value) {
      err(E, p->default_value->loc, "parameters of a @T.prim_func cannot have default values");
      params_ok = false;
    }
    if (!p->annotation) {
      err(E, p->loc, "parameter '%s' needs a type annotation: T.Tensor(shape, dtype) or a scalar "
                     "dtype such as T.int32", p->name);
      params_ok = false;
      bind(E, sc, p->name, mk(E, V_POISON), p->loc, BK_PARAM);
      continue;
    }
    val *av = eval(E, p->annotation);
    tl_dtype dt;
    if (av && av->k == V_TENSORTYPE) {
      tl_buffer *b = tl_ir_new_buffer(E->m, p->loc, p->name, av->u.tt.dt, TL_SCOPE_GLOBAL,
                                      av->u.tt.ndim, av->u.tt.dims);
      val *bv = b ? mk(E, V_BUFFER) : oom(E);
      if (bv) {
        bv->u.buf = b;
        pf->params[pf->nparams].kind = TL_PARAM_TENSOR;
        pf->params[pf->nparams++].buffer = b;
        bind(E, sc, p->name, bv, p->loc, BK_TENSOR);
        continue;
      }
    } else if (av && (av->k == V_DTYPE || av->k == V_STR) && to_dtype(E, av, p->annotation->loc, &dt)) {
      tl_var *var = tl_ir_new_var(E->m, p->loc, p->name, dt, TL_VAR_PARAM);
      val *vv = var ? mk_expr(E, chk(E, tl_ir_var(E->m, p->loc, var))) : oom(E);
      if (vv) {
        pf->params[pf->nparams].kind = TL_PARAM_SCALAR;
        pf->params[pf->nparams++].var = var;
        bind(E, sc, p->name, vv, p->loc, BK_PARAM);
        continue;
      }
    } else if (av && av->k != V_DTYPE && av->k != V_STR) {
      err_val(E, p->annotation->loc, av,
              "parameter annotation must be T.Tensor(shape, dtype), T.Buffer(shape, dtype) or a "
              "scalar dtype, got %s", describe(E, av));
    }
    params_ok = false;
    bind(E, sc, p->name, mk(E, V_POISON), p->loc, BK_PARAM);
  }
  if (params_ok && out_idx) set_out_idx(E, pf, out_idx, out_ast);
  stmt_vec body = {0};
  elab_block(E, &def->u.def.body, &body); /* also after parameter errors: independent faults */
  pf->body = make_seq(E, def->loc, &body);
  tl_vec_free(&body);
  if (pf->body) collect_dynamic(E, pf);
  pop_scope(E, sc);
  E->pf = saved_pf;
  E->nkernels = saved_nk;
  E->in_kernel = saved_ik;
  val *v = mk(E, V_PRIMFUNC);
  if (!v) return NULL;
  v->u.pf = pf;
  v->params_ok = params_ok;
  return v;
}

static bool add_func(elab *E, tl_primfunc *pf) {
  for (size_t i = 0; i < E->funcs.len; i++)
    if (E->funcs.data[i] == pf) return true;
  if (!tl_vec_push(&E->funcs, pf)) return oom(E), false;
  return true;
}

/* ============================================================== factory */

/* Guesses what kind of value a factory parameter holds from its uses
 * (for the "pass -D M=<int>" hint).  0 unknown, 1 int, 2 str. */
static int scan_expr(const tl_ast_expr *x, const char *name, int depth);

static bool is_name(const tl_ast_expr *x, const char *name) {
  return x && x->kind == TL_AST_NAME && x->u.name == name;
}

static int scan_call(const tl_ast_expr *x, const char *name, int depth) {
  const tl_ast_expr *f = x->u.call.func;
  const char *fn = f->kind == TL_AST_ATTR ? f->u.attr.name : f->kind == TL_AST_NAME ? f->u.name : "";
  static const char *const shaped[] = {"Tensor", "Buffer", "alloc_shared", "alloc_fragment",
                                       "alloc_local", NULL};
  static const char *const intargs[] = {"Kernel", "ceildiv", "Parallel", "Pipelined", "serial",
                                        "unroll", "range", NULL};
  if (in_list(shaped, fn) && x->u.call.nargs >= 1) {
    const tl_ast_expr *sh = x->u.call.args[0];
    if (is_name(sh, name)) return 1;
    if (sh->kind == TL_AST_TUPLE || sh->kind == TL_AST_LIST)
      for (int i = 0; i < sh->u.list.n; i++)
        if (is_name(sh->u.list.items[i], name)) return 1;
    if (x->u.call.nargs >= 2 && is_name(x->u.call.args[1], name)) return 2;
  }
  if (in_list(intargs, fn))
    for (int i = 0; i < x->u.call.nargs; i++)
      if (is_name(x->u.call.args[i], name)) return 1;
  if ((!strcmp(fn, "alloc_var") || !strcmp(fn, "Cast")) && x->u.call.nargs >= 1 &&
      is_name(x->u.call.args[0], name))
    return 2;
  for (int i = 0; i < x->u.call.nkw; i++)
    if (x->u.call.kw[i].name && !strcmp(x->u.call.kw[i].name, "dtype") &&
        is_name(x->u.call.kw[i].value, name))
      return 2;
  int r = scan_expr(f, name, depth + 1);
  for (int i = 0; !r && i < x->u.call.nargs; i++) r = scan_expr(x->u.call.args[i], name, depth + 1);
  for (int i = 0; !r && i < x->u.call.nkw; i++) r = scan_expr(x->u.call.kw[i].value, name, depth + 1);
  return r;
}

static int scan_expr(const tl_ast_expr *x, const char *name, int depth) {
  if (!x || depth > MAX_DEPTH) return 0;
  int r = 0;
  switch (x->kind) {
  case TL_AST_CALL: return scan_call(x, name, depth);
  case TL_AST_BINOP:
    if (is_name(x->u.bin.l, name) || is_name(x->u.bin.r, name)) return 1;
    r = scan_expr(x->u.bin.l, name, depth + 1);
    return r ? r : scan_expr(x->u.bin.r, name, depth + 1);
  case TL_AST_BOOLOP:
    r = scan_expr(x->u.bin.l, name, depth + 1);
    return r ? r : scan_expr(x->u.bin.r, name, depth + 1);
  case TL_AST_UNARY: return scan_expr(x->u.un.x, name, depth + 1);
  case TL_AST_COMPARE:
    for (int i = 0; !r && i <= x->u.cmp.n; i++) r = scan_expr(x->u.cmp.operands[i], name, depth + 1);
    return r;
  case TL_AST_ATTR: return scan_expr(x->u.attr.value, name, depth + 1);
  case TL_AST_SUBSCRIPT:
    for (int i = 0; !r && i < x->u.sub.n; i++) {
      if (is_name(x->u.sub.items[i], name)) return 1;
      r = scan_expr(x->u.sub.items[i], name, depth + 1);
    }
    return r;
  case TL_AST_SLICE:
    if (is_name(x->u.slice.lo, name) || is_name(x->u.slice.hi, name)) return 1;
    r = scan_expr(x->u.slice.lo, name, depth + 1);
    return r ? r : scan_expr(x->u.slice.hi, name, depth + 1);
  case TL_AST_IFEXP:
    r = scan_expr(x->u.ifexp.test, name, depth + 1);
    if (!r) r = scan_expr(x->u.ifexp.body, name, depth + 1);
    return r ? r : scan_expr(x->u.ifexp.orelse, name, depth + 1);
  case TL_AST_TUPLE:
  case TL_AST_LIST:
    for (int i = 0; !r && i < x->u.list.n; i++) r = scan_expr(x->u.list.items[i], name, depth + 1);
    return r;
  default: return 0;
  }
}

static int scan_block(const tl_ast_block *b, const char *name, int depth) {
  if (depth > MAX_DEPTH) return 0;
  int r = 0;
  for (int i = 0; !r && i < b->n; i++) {
    const tl_ast_stmt *s = b->stmts[i];
    switch (s->kind) {
    case TL_AST_EXPR_STMT: r = scan_expr(s->u.expr, name, depth + 1); break;
    case TL_AST_ASSIGN: r = scan_expr(s->u.assign.value, name, depth + 1); break;
    case TL_AST_AUGASSIGN: r = scan_expr(s->u.aug.value, name, depth + 1); break;
    case TL_AST_ANNASSIGN: r = scan_expr(s->u.ann.value, name, depth + 1); break;
    case TL_AST_FOR:
      r = scan_expr(s->u.loop.iter, name, depth + 1);
      if (!r) r = scan_block(&s->u.loop.body, name, depth + 1);
      break;
    case TL_AST_WITH:
      r = scan_expr(s->u.with.ctx, name, depth + 1);
      if (!r) r = scan_block(&s->u.with.body, name, depth + 1);
      break;
    case TL_AST_IF:
      r = scan_expr(s->u.ifs.test, name, depth + 1);
      if (!r) r = scan_block(&s->u.ifs.body, name, depth + 1);
      if (!r) r = scan_block(&s->u.ifs.orelse, name, depth + 1);
      break;
    case TL_AST_WHILE: r = scan_block(&s->u.whiles.body, name, depth + 1); break;
    case TL_AST_DEF:
      for (int j = 0; !r && j < s->u.def.nparams; j++)
        r = scan_expr(s->u.def.params[j].annotation, name, depth + 1);
      if (!r) r = scan_block(&s->u.def.body, name, depth + 1);
      break;
    default: break;
    }
  }
  return r;
}

static const char *param_hint(const tl_ast_param *p, const tl_ast_stmt *def) {
  if (p->annotation && p->annotation->kind == TL_AST_NAME) {
    const char *a = p->annotation->u.name;
    if (!strcmp(a, "int")) return "<int>";
    if (!strcmp(a, "float")) return "<float>";
    if (!strcmp(a, "str")) return "<str>";
    if (!strcmp(a, "bool")) return "<bool>";
  }
  int k = scan_block(&def->u.def.body, p->name, 0);
  return k == 1 ? "<int>" : k == 2 ? "<str>" : "<value>";
}

/* Does the decorator name T.prim_func (syntactically)? */
static bool is_primfunc_decorator(const tl_ast_expr *d) {
  if (d->kind == TL_AST_CALL) d = d->u.call.func;
  return (d->kind == TL_AST_ATTR && !strcmp(d->u.attr.name, "prim_func")) ||
         (d->kind == TL_AST_NAME && !strcmp(d->u.name, "prim_func"));
}

static bool block_has_primfunc(const tl_ast_block *b, int depth) {
  if (depth > MAX_DEPTH) return false;
  for (int i = 0; i < b->n; i++) {
    const tl_ast_stmt *s = b->stmts[i];
    if (s->kind == TL_AST_DEF)
      for (int j = 0; j < s->u.def.ndecorators; j++)
        if (is_primfunc_decorator(s->u.def.decorators[j])) return true;
    if (s->kind == TL_AST_IF && (block_has_primfunc(&s->u.ifs.body, depth + 1) ||
                                 block_has_primfunc(&s->u.ifs.orelse, depth + 1)))
      return true;
  }
  return false;
}

enum { DEC_OTHER, DEC_JIT, DEC_PRIMFUNC };

/* Classifies a decorator quietly (no errors for unknown decorators). */
static int classify_decorator(elab *E, const tl_ast_expr *d) {
  const tl_ast_expr *f = d->kind == TL_AST_CALL ? d->u.call.func : d;
  const char *parts[4];
  int np = 0;
  while (f->kind == TL_AST_ATTR) {
    if (np == 4) return DEC_OTHER;
    parts[np++] = f->u.attr.name;
    f = f->u.attr.value;
  }
  if (f->kind != TL_AST_NAME) return DEC_OTHER;
  binding *b = lookup(E, f->u.name, NULL);
  if (!b || !b->v || b->v->k != V_NS) return DEC_OTHER;
  int ns = b->v->u.ns;
  /* parts are innermost-last: walk from the root outwards */
  for (int i = np - 1; i >= 0; i--) {
    if (ns == NS_TILELANG && !strcmp(parts[i], "language")) ns = NS_T;
    else if (ns == NS_TILELANG && !strcmp(parts[i], "jit")) ns = NS_JIT;
    else if (ns == NS_T && !strcmp(parts[i], "prim_func") && i == 0) return DEC_PRIMFUNC;
    else return DEC_OTHER;
  }
  return ns == NS_JIT ? DEC_JIT : DEC_OTHER;
}

/* Runs compile-time statements of a factory body.  Returns true when a
 * `return` was executed. */
static bool factory_block(elab *E, const tl_ast_block *b, const tl_ast_stmt *fdef, val *out_idx,
                          const tl_ast_expr *out_ast, bool *returned);

static bool factory_stmt(elab *E, const tl_ast_stmt *s, const tl_ast_stmt *fdef, val *out_idx,
                         const tl_ast_expr *out_ast, bool *returned) {
  stmt_vec none = {0};
  bool ok = true;
  switch (s->kind) {
  case TL_AST_ASSIGN: {
    val *v = eval(E, s->u.assign.value);
    if (!v) {
      poison_stmt_targets(E, s);
      return false;
    }
    for (int i = 0; ok && i < s->u.assign.ntargets; i++)
      ok = assign_target(E, s->u.assign.targets[i], v, s->u.assign.value->loc, &none);
    if (!ok) poison_stmt_targets(E, s);
    break;
  }
  case TL_AST_ANNASSIGN:
    if (s->u.ann.value) {
      val *v = eval(E, s->u.ann.value);
      ok = v && assign_target(E, s->u.ann.target, v, s->u.ann.value->loc, &none);
    }
    break;
  case TL_AST_AUGASSIGN: ok = elab_augassign(E, s, &none); break;
  case TL_AST_IF: {
    val *c = eval(E, s->u.ifs.test);
    bool t;
    if (!c) return false;
    if (!truthy(c, &t) || is_ir(c)) {
      err_val(E, s->u.ifs.test->loc, c, "a condition in a factory must be a compile-time constant");
      return false;
    }
    return factory_block(E, t ? &s->u.ifs.body : &s->u.ifs.orelse, fdef, out_idx, out_ast,
                         returned);
  }
  case TL_AST_DEF: {
    bool pf = false;
    for (int j = 0; j < s->u.def.ndecorators; j++)
      if (classify_decorator(E, s->u.def.decorators[j]) == DEC_PRIMFUNC) pf = true;
    val *v;
    if (pf) {
      v = elab_primfunc(E, s, NULL, NULL);
    } else {
      v = mk_opaque(E, tprintf(E, "%s", s->u.def.name), NULL);
    }
    if (!v) return false;
    return bind(E, E->sc, s->u.def.name, v, s->u.def.name_loc, BK_CONST);
  }
  case TL_AST_RETURN: {
    *returned = true;
    if (!s->u.ret) {
      err(E, s->loc, "factory '%s' must return its @T.prim_func", fdef->u.def.name);
      return false;
    }
    val *v = eval(E, s->u.ret);
    if (!v) return false;
    if (v->k != V_PRIMFUNC) {
      err_val(E, s->u.ret->loc, v, "factory '%s' must return its @T.prim_func, got %s",
              fdef->u.def.name, describe(E, v));
      return false;
    }
    if (out_idx && v->params_ok) set_out_idx(E, v->u.pf, out_idx, out_ast);
    return add_func(E, v->u.pf);
  }
  case TL_AST_IMPORT: break; /* handled like module imports below */
  case TL_AST_EXPR_STMT:
  case TL_AST_PASS: break;   /* docstrings, host side effects */
  case TL_AST_FOR:
  case TL_AST_WHILE:
  case TL_AST_WITH:
  case TL_AST_BREAK:
  case TL_AST_CONTINUE:
    err(E, s->loc, "this statement is not supported in a factory body (only in a @T.prim_func)");
    return false;
  default:
    err(E, s->loc, "%s is not supported in a factory body yet", stmt_name(s->kind));
    return false;
  }
  tl_vec_free(&none);
  return ok;
}

static void do_import(elab *E, const tl_ast_stmt *s);

static bool factory_block(elab *E, const tl_ast_block *b, const tl_ast_stmt *fdef, val *out_idx,
                          const tl_ast_expr *out_ast, bool *returned) {
  if (E->depth >= MAX_DEPTH) {
    if (b->n) err(E, b->stmts[0]->loc, "statements nested too deeply (limit %d)", MAX_DEPTH);
    return false;
  }
  E->depth++;
  bool ok = true;
  for (int i = 0; i < b->n && !*returned && !E->oom; i++) {
    if (b->stmts[i]->kind == TL_AST_IMPORT) do_import(E, b->stmts[i]);
    else if (!factory_stmt(E, b->stmts[i], fdef, out_idx, out_ast, returned)) ok = false;
  }
  E->depth--;
  return ok;
}

/* The value of a tilelang.jit(...) decorator's out_idx (evaluated in the
 * module scope), or NULL. */
static val *jit_out_idx(elab *E, const tl_ast_expr *jit, const tl_ast_expr **ast) {
  if (!jit || jit->kind != TL_AST_CALL) return NULL;
  const tl_ast_keyword *k = find_kw(jit, "out_idx");
  if (!k) return NULL;
  *ast = k->value;
  return eval(E, k->value);
}

/* A tilelang.jit(...) decorator's pass_configs (a dict evaluated in the
 * module scope): "tl.enable_fast_math" sets E->jit_fast_math; TileLang's
 * configs that select what this compiler never does (TMA, wgmma, warp
 * specialization) are accepted and have no effect; other keys are errors. */
static void jit_pass_configs(elab *E, const tl_ast_expr *jit) {
  E->jit_fast_math = false;
  if (!jit || jit->kind != TL_AST_CALL) return;
  const tl_ast_keyword *k = find_kw(jit, "pass_configs");
  if (!k) return;
  const tl_ast_expr *a = k->value;
  if (a->kind != TL_AST_DICT) {
    err(E, a->loc, "pass_configs must be a dict literal such as {\"tl.enable_fast_math\": True}");
    return;
  }
  static const char *const no_effect[] = {"tl.disable_tma_lower", "tl.disable_warp_specialized",
                                          "tl.disable_wgmma", NULL};
  for (int i = 0; i < a->u.dict.n; i++) {
    val *key = eval(E, a->u.dict.keys[i]);
    if (!key) return;
    if (key->k != V_STR) {
      err_val(E, a->u.dict.keys[i]->loc, key, "pass_configs keys must be strings, got %s", describe(E, key));
      return;
    }
    val *v = eval(E, a->u.dict.values[i]);
    if (!strcmp(key->u.s, "tl.enable_fast_math")) {
      if (!fast_math_value(E, v, a->u.dict.values[i], &E->jit_fast_math)) return;
      continue;
    }
    bool ok = false;
    for (int j = 0; no_effect[j]; j++) ok |= !strcmp(key->u.s, no_effect[j]);
    if (!ok) {
      err(E, a->u.dict.keys[i]->loc,
          "unsupported pass config '%.100s' (understood: \"tl.enable_fast_math\"; without effect here: "
          "\"tl.disable_tma_lower\", \"tl.disable_warp_specialized\", \"tl.disable_wgmma\")", key->u.s);
      return;
    }
  }
}

static void elab_factory(elab *E, const tl_ast_stmt *def, const tl_ast_expr *jit) {
  scope *saved = E->sc;
  E->sc = E->module_scope;
  const tl_ast_expr *oast = NULL;
  val *oi = jit_out_idx(E, jit, &oast);
  jit_pass_configs(E, jit);
  int np = def->u.def.nparams;
  val **pv = talloc(E, sizeof(val *) * (size_t)(np ? np : 1));
  if (!pv) {
    E->sc = saved;
    return;
  }
  for (int i = 0; i < np; i++) {
    const tl_ast_param *p = &def->u.def.params[i];
    int di = find_define(E, p->name);
    if (di >= 0) {
      pv[i] = parse_define(E, di);
    } else if (p->default_value) {
      pv[i] = eval(E, p->default_value);
    } else {
      err(E, p->loc, "factory parameter '%s' has no value; pass -D %s=%s", p->name, p->name,
          param_hint(p, def));
      pv[i] = NULL;
    }
    if (!pv[i]) pv[i] = mk(E, V_POISON);
  }
  scope *sc = push_scope(E, false);
  if (!sc) {
    E->sc = saved;
    return;
  }
  for (int i = 0; i < np; i++)
    bind(E, sc, def->u.def.params[i].name, pv[i], def->u.def.params[i].loc, BK_CONST);
  bool returned = false;
  factory_block(E, &def->u.def.body, def, oi, oast, &returned);
  if (!returned && !E->oom)
    err(E, def->u.def.name_loc, "factory '%s' does not return its @T.prim_func",
        def->u.def.name);
  pop_scope(E, sc);
  E->sc = saved;
  E->jit_fast_math = false;
}

/* =============================================================== module */

static val *module_value(elab *E, const char *path) {
  if (!strcmp(path, "tilelang")) return mk_ns(E, NS_TILELANG);
  if (!strcmp(path, "tilelang.language")) return mk_ns(E, NS_T);
  if (!strcmp(path, "tilelang.jit")) return mk_ns(E, NS_JIT);
  const char *dot = strchr(path, '.');
  const char *mod = dot ? tl_arena_strndup(&E->tmp, path, (size_t)(dot - path))
                        : tl_arena_strdup(&E->tmp, path);
  const char *desc = tl_arena_strdup(&E->tmp, path);
  if (!mod || !desc) return oom(E);
  return mk_opaque(E, desc, mod);
}

static void do_import(elab *E, const tl_ast_stmt *s) {
  const char *module = s->u.import.module ? s->u.import.module : "";
  const char *name = s->u.import.name, *alias = s->u.import.alias;
  const char *bindname, *path;
  if (!name) {
    if (alias) {
      bindname = alias;
      path = module;
    } else {
      const char *dot = strchr(module, '.');
      bindname = path = dot ? tl_arena_strndup(&E->tmp, module, (size_t)(dot - module)) : module;
      if (!bindname) return (void)oom(E);
    }
  } else {
    if (!strcmp(name, "*")) return; /* from x import *: nothing we can name */
    bindname = alias ? alias : name;
    path = tprintf(E, "%s.%s", module, name);
  }
  const char *in = intern(E, bindname);
  val *v = in ? module_value(E, path) : NULL;
  if (v) bind(E, E->sc, in, v, s->loc, BK_CONST);
}

typedef struct pending {
  const tl_ast_stmt *def;
  bool factory;
  const tl_ast_expr *jit;
} pending;
typedef TL_VEC(pending) pending_vec;

static bool mentions_dunder_name(const tl_ast_expr *x, int depth) {
  if (!x || depth > MAX_DEPTH) return false;
  switch (x->kind) {
  case TL_AST_NAME: return !strcmp(x->u.name, "__name__");
  case TL_AST_COMPARE:
    for (int i = 0; i <= x->u.cmp.n; i++)
      if (mentions_dunder_name(x->u.cmp.operands[i], depth + 1)) return true;
    return false;
  case TL_AST_BOOLOP:
    return mentions_dunder_name(x->u.bin.l, depth + 1) || mentions_dunder_name(x->u.bin.r, depth + 1);
  case TL_AST_UNARY: return mentions_dunder_name(x->u.un.x, depth + 1);
  default: return false;
  }
}

static void mark_define(elab *E, const char *name) {
  for (size_t i = 0; i < E->ndefs; i++)
    if (E->defs[i].name && !strcmp(E->defs[i].name, name)) E->def_used[i] = true;
}

static void module_assign_name(elab *E, const tl_ast_expr *t, const tl_ast_expr *value, val *v) {
  int di = find_define(E, t->u.name);
  if (di >= 0) {
    mark_define(E, t->u.name);
    v = parse_define(E, di);
  } else if (!v) {
    v = mk(E, V_LAZY);
    if (v) v->u.lazy.ast = value;
  }
  if (v) bind(E, E->module_scope, t->u.name, v, t->loc, BK_CONST);
}

static void module_block(elab *E, const tl_ast_block *b, pending_vec *defs, int depth) {
  if (depth > MAX_DEPTH) {
    if (b->n) err(E, b->stmts[0]->loc, "statements nested too deeply (limit %d)", MAX_DEPTH);
    return;
  }
  for (int i = 0; i < b->n && !E->oom; i++) {
    const tl_ast_stmt *s = b->stmts[i];
    switch (s->kind) {
    case TL_AST_IMPORT: do_import(E, s); break;
    case TL_AST_ASSIGN:
      for (int j = 0; j < s->u.assign.ntargets; j++) {
        const tl_ast_expr *t = s->u.assign.targets[j];
        if (t->kind == TL_AST_NAME) {
          module_assign_name(E, t, s->u.assign.value, NULL);
        } else if (t->kind == TL_AST_TUPLE || t->kind == TL_AST_LIST) {
          val *v = eval(E, s->u.assign.value);
          if (!v) break;
          stmt_vec none = {0};
          if (assign_target(E, t, v, s->u.assign.value->loc, &none)) {
            for (int k = 0; k < t->u.list.n; k++)
              if (t->u.list.items[k]->kind == TL_AST_NAME &&
                  find_define(E, t->u.list.items[k]->u.name) >= 0)
                module_assign_name(E, t->u.list.items[k], NULL, NULL);
          }
          tl_vec_free(&none);
        }
      }
      break;
    case TL_AST_ANNASSIGN:
      if (s->u.ann.value && s->u.ann.target->kind == TL_AST_NAME)
        module_assign_name(E, s->u.ann.target, s->u.ann.value, NULL);
      break;
    case TL_AST_AUGASSIGN: {
      stmt_vec none = {0};
      elab_augassign(E, s, &none);
      tl_vec_free(&none);
      break;
    }
    case TL_AST_IF: {
      if (mentions_dunder_name(s->u.ifs.test, 0)) break; /* if __name__ == "__main__": host */
      val *c = eval(E, s->u.ifs.test);
      bool t;
      if (c && !is_ir(c) && truthy(c, &t))
        module_block(E, t ? &s->u.ifs.body : &s->u.ifs.orelse, defs, depth + 1);
      break;
    }
    case TL_AST_DEF: {
      const tl_ast_expr *jit = NULL;
      bool is_pf = false, is_jit = false;
      for (int j = 0; j < s->u.def.ndecorators; j++) {
        int k = classify_decorator(E, s->u.def.decorators[j]);
        if (k == DEC_PRIMFUNC) is_pf = true;
        if (k == DEC_JIT) is_jit = true, jit = s->u.def.decorators[j];
      }
      bool factory = !is_pf && (is_jit || block_has_primfunc(&s->u.def.body, 0));
      bind(E, E->module_scope, s->u.def.name,
           mk_opaque(E, tprintf(E, "%s", s->u.def.name), NULL), s->u.def.name_loc, BK_CONST);
      if (is_pf || factory) {
        pending p = {s, factory, jit};
        if (!tl_vec_push(defs, p)) oom(E);
        if (factory)
          for (int j = 0; j < s->u.def.nparams; j++) mark_define(E, s->u.def.params[j].name);
      }
      break;
    }
    default: break; /* host code: loops, expression statements, ... */
    }
  }
}

bool tl_frontend_parse(tl_module *m, tl_diag *d, const char *source, size_t len,
                       const char *filename, const tl_define *defs, size_t ndefs) {
  if (!m || !d || (!source && len)) return false;
  const char *fname = (filename && filename == m->filename)
                          ? m->filename : tl_arena_strdup(&m->arena, filename ? filename : "<input>");
  if (!fname) {
    tl_error(d, TL_LOC_NONE, "out of memory");
    return false;
  }
  if (!m->filename) m->filename = fname;
  const char *text = (source && source == m->source) ? m->source
                     : tl_arena_strndup(&m->arena, source ? source : "", len);
  if (!text) {
    tl_error(d, TL_LOC_NONE, "out of memory");
    return false;
  }
  if (!m->source) m->source = (char *)text;
  bool have_src = false;
  for (size_t i = 0; i < d->sources.len; i++)
    if (d->sources.data[i].name && !strcmp(d->sources.data[i].name, fname)) have_src = true;
  if (!have_src) tl_diag_add_source(d, fname, text, len);

  tl_ast_module ast;
  memset(&ast, 0, sizeof ast);
  if (!tl_parse_python(&m->arena, &m->names, d, text, len, fname, &ast)) return false;

  elab E;
  memset(&E, 0, sizeof E);
  E.m = m;
  E.d = d;
  E.file = fname;
  E.defs = defs;
  E.ndefs = defs ? ndefs : 0;
  tl_arena_init(&E.tmp);
  bool ok = false;
  pending_vec pend = {0};
  if (E.ndefs) {
    E.defvals = talloc(&E, sizeof(val *) * E.ndefs);
    E.def_used = talloc(&E, sizeof(bool) * E.ndefs);
    if (!E.defvals || !E.def_used) goto done;
  }
  scope *ms = push_scope(&E, false);
  if (!ms) goto done;
  E.module_scope = ms;

  /* Phase 1: imports, module constants, classification of defs. */
  module_block(&E, &ast.body, &pend, 0);
  for (size_t i = 0; i < E.ndefs; i++) {
    if (!E.defs[i].name || E.def_used[i] || find_define(&E, E.defs[i].name) != (int)i) continue;
    err(&E, cmdline_loc, "-D %s: no factory parameter named '%s'", E.defs[i].name,
        E.defs[i].name);
  }
  /* Phase 2: run factories, elaborate bare prim_funcs. */
  for (size_t i = 0; i < pend.len && !E.oom; i++) {
    const pending *p = &pend.data[i];
    if (p->factory) {
      elab_factory(&E, p->def, p->jit);
    } else {
      E.sc = ms;
      const tl_ast_expr *oast = NULL;
      val *oi = jit_out_idx(&E, p->jit, &oast);
      val *v = elab_primfunc(&E, p->def, oi, oast);
      if (v) add_func(&E, v->u.pf);
    }
  }
  if (!E.nerr && !E.oom && E.funcs.len == 0)
    err(&E, (tl_loc){fname, 1, 1},
        "no kernel found: expected a @T.prim_func or a factory function returning one");
  if (!E.oom && E.funcs.len) {
    int n0 = m->nfuncs;
    tl_primfunc **arr = malloc_ir(&E, sizeof(tl_primfunc *) * ((size_t)n0 + E.funcs.len));
    if (arr) {
      if (n0) memcpy(arr, m->funcs, sizeof(tl_primfunc *) * (size_t)n0);
      memcpy(arr + n0, E.funcs.data, sizeof(tl_primfunc *) * E.funcs.len);
      m->funcs = arr;
      m->nfuncs = n0 + (int)E.funcs.len;
    }
  }
  ok = E.nerr == 0 && !E.oom;
done:
  while (E.sc) pop_scope(&E, E.sc);
  tl_vec_free(&pend);
  tl_vec_free(&E.dyn);
  tl_vec_free(&E.funcs);
  tl_arena_free(&E.tmp);
  return ok;
}
