/* Elaborator, part 1 (see elaborate.c for the algorithm): diagnostics,
 * compile-time values and their description in messages, -D definitions,
 * scopes and name bindings, conversions of values to IR and dtypes, and
 * constant arithmetic with Python semantics (int64 overflow checks, true
 * and floor division). */
#include "Frontend/elab_impl.h"

/* ========================================================= diagnostics */

/* Reports an error unless quiet (then only marks the failure); whether it
 * was reported. */
static bool verr(elab *E, tl_loc loc, const char *fmt, va_list ap) {
  if (E->quiet) { /* evaluating host code that no kernel needs: failures are silent */
    E->quiet_failed = true;
    return false;
  }
  tl_diag_vreport(E->d, TL_DIAG_ERROR, loc, fmt, ap);
  E->nerr++;
  return true;
}

void err(elab *E, tl_loc loc, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  verr(E, loc, fmt, ap);
  va_end(ap);
}

static void note_origin(elab *E, const val *v) {
  if (v && v->origin && !E->quiet)
    tl_note(E->d, cmdline_loc, "'%s' was set by -D %s=%s", v->origin->name, v->origin->name,
            v->origin->value ? v->origin->value : "");
}

/* An error about value v, followed by the note naming its -D. */
void err_val(elab *E, tl_loc loc, const val *v, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  bool shown = verr(E, loc, fmt, ap);
  va_end(ap);
  if (shown) note_origin(E, v);
}

void *oom(elab *E) {
  if (!E->oom) {
    E->oom = true;
    err(E, TL_LOC_NONE, "out of memory");
  }
  return NULL;
}

void *talloc(elab *E, size_t n) {
  void *p = tl_arena_alloc(&E->tmp, n ? n : 1);
  return p ? p : oom(E);
}
void *malloc_ir(elab *E, size_t n) {
  void *p = tl_arena_alloc(&E->m->arena, n ? n : 1);
  return p ? p : oom(E);
}
/* Checks an IR constructor's result (NULL only on OOM). */
tl_expr *chk(elab *E, tl_expr *e) { return e ? e : oom(E); }

const char *tprintf(elab *E, const char *fmt, ...) {
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

val *mk_val(elab *E, val init) {
  val *v = talloc(E, sizeof *v);
  if (v) *v = init;
  return v;
}
val *mk(elab *E, vkind k) { return mk_val(E, (val){.k = k}); }
val *mk_int(elab *E, int64_t i) { return mk_val(E, (val){.k = V_INT, .u.i = i}); }
val *mk_float(elab *E, double f) { return mk_val(E, (val){.k = V_FLOAT, .u.f = f}); }
val *mk_bool(elab *E, bool b) { return mk_val(E, (val){.k = V_BOOL, .u.b = b}); }
val *mk_str(elab *E, const char *s) {
  const char *copy = tl_arena_strdup(&E->tmp, s ? s : "");
  return copy ? mk_val(E, (val){.k = V_STR, .u.s = copy}) : oom(E);
}
val *mk_expr(elab *E, tl_expr *e) { return e ? mk_val(E, (val){.k = V_EXPR, .u.e = e}) : NULL; }
val *mk_dtype(elab *E, tl_dtype t) { return mk_val(E, (val){.k = V_DTYPE, .u.dt = t}); }
val *mk_opaque(elab *E, const char *desc, const char *module) {
  return mk_val(E, (val){.k = V_OPAQUE, .u.op = {desc, module}});
}
val *mk_dict(elab *E, int cap) {
  val *d = mk(E, V_DICT);
  size_t sz = (size_t)(cap > 0 ? cap : 1);
  if (!d || !(d->u.dict.keys = talloc(E, sizeof(val *) * sz)) || !(d->u.dict.vals = talloc(E, sizeof(val *) * sz)) ||
      !(d->u.dict.klocs = talloc(E, sizeof(tl_loc) * sz)) || !(d->u.dict.vlocs = talloc(E, sizeof(tl_loc) * sz)))
    return NULL;
  return d;
}
val *mk_tuple(elab *E, int n, bool is_list) {
  val *v = mk(E, V_TUPLE);
  if (!v) return NULL;
  v->is_list = is_list;
  v->u.tup.n = n;
  if (n > 0 && !(v->u.tup.items = talloc(E, sizeof(val *) * (size_t)n))) return NULL;
  return v;
}

const char *policy_names[3] = {"Square", "FullRow", "FullCol"};

/* Python type name of a value (for "unsupported operand types"). */
const char *type_name(const val *v) {
  switch (v->k) {
  case V_NONE: return "NoneType";
  case V_BOOL: return "bool";
  case V_INT: return "int";
  case V_FLOAT: return "float";
  case V_STR: return "str";
  case V_DTYPE: return "dtype";
  case V_TUPLE: return v->is_list ? "list" : "tuple";
  case V_DICT: return v->is_obj ? "object" : "dict";
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
const char *describe(elab *E, const val *v) {
  switch (v->k) {
  case V_NONE: return "None";
  case V_BOOL: return v->u.b ? "bool True" : "bool False";
  case V_INT: return tprintf(E, "int %lld", (long long)v->u.i);
  case V_FLOAT: return tprintf(E, "float %g", v->u.f);
  case V_STR: return tprintf(E, "string '%.100s'", v->u.s);
  case V_DTYPE: return tprintf(E, "dtype %s", tl_dtype_name(v->u.dt));
  case V_TUPLE: return v->is_list ? "a list" : "a tuple";
  case V_DICT: return v->is_obj ? "an object" : "a dict";
  case V_EXPR: return tprintf(E, "an expression of type %s", tl_dtype_name(v->u.e->dtype));
  case V_BUFFER: return tprintf(E, "buffer '%s'", v->u.buf->name);
  case V_BUFREF: return tprintf(E, "a region of buffer '%s'", v->u.ref.buf->name);
  case V_POLICY: return tprintf(E, "T.GemmWarpPolicy.%s", policy_names[v->u.policy]);
  case V_NS:
    return v->u.ns == NS_T        ? "module 'T'"
           : v->u.ns == NS_POLICY ? "T.GemmWarpPolicy"
           : v->u.ns == NS_JIT    ? "tilelang.jit"
                                  : "module 'tilelang'";
  case V_FUNC: return v->builtin ? tprintf(E, "function '%s'", v->u.fname) : tprintf(E, "function 'T.%s'", v->u.fname);
  case V_OPAQUE: return tprintf(E, "'%s'", v->u.op.desc);
  case V_PRIMFUNC: return tprintf(E, "prim_func '%s'", v->u.pf->name);
  case V_TENSORTYPE: return "a tensor type";
  case V_LAYOUT: return "a T.Layout";
  case V_PYFUNC: return v->u.py.def ? tprintf(E, "function '%s'", v->u.py.def->u.def.name) : "a lambda";
  default: return "a value";
  }
}

bool is_ir(const val *v) {
  return v->k == V_EXPR || v->k == V_BUFREF || (v->k == V_BUFFER && v->u.buf->scope == TL_SCOPE_LOCAL_VAR);
}
bool is_num(const val *v) { return v->k == V_INT || v->k == V_BOOL || v->k == V_FLOAT; }
int64_t as_i(const val *v) { return v->k == V_BOOL ? (int64_t)v->u.b : v->u.i; }
double as_f(const val *v) { return v->k == V_FLOAT ? v->u.f : (double)as_i(v); }

/* Truthiness of a compile-time value; false when v is not a constant. */
bool truthy(const val *v, bool *out) {
  int64_t c;
  switch (v->k) {
  case V_NONE: *out = false; return true;
  case V_BOOL: *out = v->u.b; return true;
  case V_INT: *out = v->u.i != 0; return true;
  case V_FLOAT: *out = v->u.f != 0; return true;
  case V_STR: *out = v->u.s[0] != 0; return true;
  case V_TUPLE: *out = v->u.tup.n != 0; return true;
  case V_DICT: *out = v->u.dict.n != 0; return true;
  case V_DTYPE:
  case V_POLICY:
  case V_PRIMFUNC:
  case V_NS:
  case V_FUNC: *out = true; return true;
  case V_EXPR:
    if (tl_expr_is_const_int(v->u.e, &c)) {
      *out = c != 0;
      return true;
    }
    if (v->u.e->kind == TL_EXPR_FLOAT) {
      *out = v->u.e->u.fval != 0;
      return true;
    }
    return false;
  default: return false;
  }
}

/* ====================================================== -D definitions */

int find_define(const elab *E, const char *name) {
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
val *parse_define(elab *E, int idx) {
  if (E->defvals[idx]) return E->defvals[idx];
  const tl_define *def = &E->defs[idx];
  const char *t = def->value ? def->value : "";
  size_t n = strlen(t);
  val *v = NULL;
  if (!strcmp(t, "True") || !strcmp(t, "False")) {
    v = mk_bool(E, t[0] == 'T');
  } else if (!strcmp(t, "None")) {
    v = mk(E, V_NONE);
  } else if (t[0] == '(' || t[0] == '[') {
    v = eval_define_text(E, def->name, t); /* a tuple or list: (64, 32) */
    if (!v) v = mk(E, V_POISON);
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
      int dv = isdigit((unsigned char)*q)    ? *q - '0'
               : isxdigit((unsigned char)*q) ? (tolower((unsigned char)*q) - 'a' + 10)
                                             : 99;
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
      v = mk_int(E, neg ? (acc == (uint64_t)INT64_MAX + 1 ? INT64_MIN : -(int64_t)acc) : (int64_t)acc);
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

scope *push_scope(elab *E, bool in_pf) {
  scope *s = talloc(E, sizeof *s);
  if (!s) return NULL;
  tl_map_init(&s->map);
  s->parent = E->sc;
  s->in_pf = in_pf;
  E->sc = s;
  return s;
}
void pop_scope(elab *E, scope *s) {
  if (!s->captured || !tl_vec_push(&E->kept, s)) tl_map_free(&s->map);
  E->sc = s->parent;
}

binding *lookup(elab *E, const char *name, scope **where) {
  for (scope *s = E->sc; s; s = s->parent) {
    binding *b = tl_map_get(&s->map, name, NULL);
    if (b) {
      if (where) *where = s;
      return b;
    }
  }
  return NULL;
}

bool bind(elab *E, scope *s, const char *name, val *v, tl_loc loc, int kind) {
  binding *b = talloc(E, sizeof *b);
  if (!b) return false;
  b->v = v;
  b->loc = loc;
  b->kind = kind;
  if (!tl_map_put(&s->map, name, b)) return oom(E), false;
  return true;
}

const char *intern(elab *E, const char *s) {
  const char *r = tl_intern_str(&E->m->names, s);
  return r ? r : oom(E);
}

/* ============================================================ conversions */

tl_expr *lit_int(elab *E, tl_loc loc, int64_t v) {
  tl_dtype t = (v >= INT32_MIN && v <= INT32_MAX) ? TL_INT32 : TL_INT64;
  return chk(E, tl_ir_int(E->m, loc, t, v));
}

static tl_expr *load_var0(elab *E, tl_loc loc, tl_buffer *b) {
  tl_expr *zero = lit_int(E, loc, 0);
  if (!zero) return NULL;
  return chk(E, tl_ir_load(E->m, loc, b, 1, &zero));
}

/* A scalar IR expression for value v used at loc. */
tl_expr *to_expr(elab *E, val *v, tl_loc loc) {
  if (!v || v->k == V_POISON) return NULL;
  switch (v->k) {
  case V_INT: return lit_int(E, loc, v->u.i);
  case V_BOOL: return chk(E, tl_ir_int(E->m, loc, TL_BOOL, v->u.b));
  case V_FLOAT: return chk(E, tl_ir_float(E->m, loc, TL_FLOAT32, v->u.f));
  case V_EXPR: return v->u.e;
  case V_BUFFER:
    if (v->u.buf->scope == TL_SCOPE_LOCAL_VAR) return load_var0(E, loc, v->u.buf);
    err(E, loc, "buffer '%s' cannot be used as a scalar value; index it (%s[...])", v->u.buf->name, v->u.buf->name);
    return NULL;
  case V_BUFREF: {
    int n = v->u.ref.n;
    tl_expr **idx = malloc_ir(E, sizeof(tl_expr *) * (size_t)(n ? n : 1));
    if (!idx) return NULL;
    for (int i = 0; i < n; i++) {
      if (v->u.ref.items[i].is_slice) {
        err(E, v->u.ref.items[i].loc, "a slice of buffer '%s' cannot be used as a scalar value", v->u.ref.buf->name);
        return NULL;
      }
      idx[i] = v->u.ref.items[i].min;
    }
    tl_expr *ld = tl_el_view_load(E, loc, v->u.ref.buf, n, idx); /* through T.view / T.reshape */
    /* a vector load of the SIMT IR: the last index is a T.Ramp */
    if (ld && n > 0 && idx[n - 1]->dtype.lanes > 1) ld->dtype.lanes = idx[n - 1]->dtype.lanes;
    return ld;
  }
  case V_OPAQUE:
    err(E, loc, "'%s' cannot be used in a kernel (it is a host value, not TileLang)", v->u.op.desc);
    return NULL;
  default: err_val(E, loc, v, "expected a scalar value, got %s", describe(E, v)); return NULL;
  }
}

/* An integer IR expression ("what must be an integer, got ..."). */
tl_expr *to_int_expr(elab *E, val *v, tl_loc loc, const char *what) {
  if (!v || v->k == V_POISON) return NULL;
  if (v->k == V_INT) return lit_int(E, loc, v->u.i);
  if (v->k == V_EXPR || v->k == V_BUFREF || (v->k == V_BUFFER && v->u.buf->scope == TL_SCOPE_LOCAL_VAR)) {
    tl_expr *e = to_expr(E, v, loc);
    if (!e) return NULL;
    if (!tl_dtype_is_int(e->dtype)) {
      err_val(E, loc, v, "%s must be an integer, got an expression of type %s", what, tl_dtype_name(e->dtype));
      return NULL;
    }
    return e;
  }
  if (v->k == V_OPAQUE) return to_expr(E, v, loc);
  err_val(E, loc, v, "%s must be an integer, got %s", what, describe(E, v));
  return NULL;
}

bool dtype_like(const char *s) {
  static const char *const pre[] = {"float", "int", "uint", "bfloat", "tfloat", "bool", "half", "double"};
  for (size_t i = 0; i < sizeof pre / sizeof pre[0]; i++)
    if (!strncmp(s, pre[i], strlen(pre[i]))) return true;
  return false;
}

bool to_dtype(elab *E, val *v, tl_loc loc, tl_dtype *out) {
  if (!v || v->k == V_POISON) return false;
  if (v->k == V_DTYPE) {
    *out = v->u.dt;
    return true;
  }
  if (v->k == V_STR) {
    if (tl_dtype_parse(v->u.s, out)) return true;
    if (tilelang_has_name(v->u.s)) /* a dtype TileLang has (float8_e4m3fnuz, float4_e2m1fn, ...) */
      err_val(E, loc, v, "dtype '%.100s' is not supported yet", v->u.s);
    else err_val(E, loc, v, "unknown dtype '%.100s'", v->u.s);
    return false;
  }
  if (v->k == V_OPAQUE) {
    err(E, loc, "'%s' is not a dtype TileLang knows", v->u.op.desc);
    return false;
  }
  err_val(E, loc, v, "expected a dtype, got %s", describe(E, v));
  return false;
}

/* Is s one of the names of the NULL-terminated list? */
bool in_list(const char *const *list, const char *s) {
  for (; *list; list++)
    if (!strcmp(*list, s)) return true;
  return false;
}

/* A constant int from v ("what must be an integer constant"). */
bool to_const_int(elab *E, val *v, tl_loc loc, const char *what, int64_t *out) {
  if (!v || v->k == V_POISON) return false;
  if (v->k == V_INT) {
    *out = v->u.i;
    return true;
  }
  if (v->k == V_EXPR && tl_expr_is_const_int(v->u.e, out) && tl_dtype_is_int(v->u.e->dtype)) return true;
  err_val(E, loc, v, "%s must be an integer constant, got %s", what, describe(E, v));
  return false;
}

/* ================================================ constant arithmetic */

static bool map_binop(const char *op, tl_binop *out) {
  static const struct {
    const char *s;
    tl_binop op;
  } t[] = {{"+", TL_OP_ADD},      {"-", TL_OP_SUB},  {"*", TL_OP_MUL},    {"/", TL_OP_DIV},   {"//", TL_OP_FLOORDIV},
           {"%", TL_OP_FLOORMOD}, {"**", TL_OP_POW}, {"&", TL_OP_BITAND}, {"|", TL_OP_BITOR}, {"^", TL_OP_BITXOR},
           {"<<", TL_OP_SHL},     {">>", TL_OP_SHR}, {"==", TL_OP_EQ},    {"!=", TL_OP_NE},   {"<", TL_OP_LT},
           {"<=", TL_OP_LE},      {">", TL_OP_GT},   {">=", TL_OP_GE},    {"and", TL_OP_AND}, {"or", TL_OP_OR}};
  for (size_t i = 0; i < sizeof t / sizeof t[0]; i++)
    if (!strcmp(t[i].s, op)) {
      *out = t[i].op;
      return true;
    }
  return false;
}

/* &, |, ^, <<, >>: TIR defines them on integers (and bools for &, |, ^) only. */
static bool is_bit_op(tl_binop op) {
  return op == TL_OP_BITAND || op == TL_OP_BITOR || op == TL_OP_BITXOR || op == TL_OP_SHL || op == TL_OP_SHR;
}

static bool int_or_bool(tl_dtype t) { return tl_dtype_is_int(t) || t.code == TL_TYPE_BOOL; }

static val *type_error(elab *E, tl_loc loc, const char *op, val *a, val *b) {
  err(E, loc, "unsupported operand types for %s: '%s' and '%s'", op, type_name(a), type_name(b));
  note_origin(E, a);
  if (!a->origin || a->origin != b->origin) note_origin(E, b);
  return NULL;
}

val *overflow(elab *E, tl_loc loc, val *a, val *b) {
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
bool const_equal(const val *a, const val *b, int depth) {
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

val *const_compare(elab *E, const char *op, val *a, val *b, tl_loc loc) {
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
  return !strcmp(op, "==") || !strcmp(op, "!=") || !strcmp(op, "<") || !strcmp(op, "<=") || !strcmp(op, ">") ||
         !strcmp(op, ">=");
}

/* a OP b for any two values: constants fold in Python semantics, IR values
 * build IR.  Opaque host values stay opaque outside kernels. */
/* Two typed integer operands, one a constant (T.uint16(4), tirx.const(4, "uint16")), meet as in TVM's
 * BinaryOpMatchTypes: the narrower is widened, and of one width the unsigned wins (`x_u8 << T.uint16(4)` is
 * uint16).  tl_ir_binary gives a constant the other operand's dtype, which is TVM's rule for a Python int
 * (a V_INT operand, not passed here); two constants or two non-constants it already widens. */
static bool widen_typed_ints(elab *E, tl_loc loc, tl_expr **x, tl_expr **y) {
  tl_dtype a = (*x)->dtype, b = (*y)->dtype;
  bool ia = a.code == TL_TYPE_INT || a.code == TL_TYPE_UINT, ib = b.code == TL_TYPE_INT || b.code == TL_TYPE_UINT;
  if (!ia || !ib || a.lanes != b.lanes || tl_dtype_eq(a, b) ||
      ((*x)->kind == TL_EXPR_INT) == ((*y)->kind == TL_EXPR_INT))
    return true;
  tl_dtype t = a.bits != b.bits ? (a.bits > b.bits ? a : b) : (a.code == TL_TYPE_UINT ? a : b);
  if (!tl_dtype_eq(a, t)) *x = chk(E, tl_ir_cast(E->m, loc, t, *x));
  if (!tl_dtype_eq(b, t)) *y = chk(E, tl_ir_cast(E->m, loc, t, *y));
  return *x && *y;
}

val *binop(elab *E, const char *op, val *a, val *b, tl_loc loc) {
  if (!a || !b || a->k == V_POISON || b->k == V_POISON) return NULL;
  if (a->k == V_OPAQUE || b->k == V_OPAQUE) {
    if (E->pf) {
      val *o = a->k == V_OPAQUE ? a : b;
      err(E, loc, "'%s' cannot be used in a kernel (it is a host value, not TileLang)", o->u.op.desc);
      return NULL;
    }
    return a->k == V_OPAQUE ? a : b;
  }
  if (!strcmp(op, "is") || !strcmp(op, "is not") || !strcmp(op, "in") || !strcmp(op, "not in"))
    return py_identity_or_membership(E, op, a, b, loc);
  if (is_ir(a) || is_ir(b)) {
    tl_binop bop;
    if (!map_binop(op, &bop)) return type_error(E, loc, op, a, b);
    tl_expr *x = to_expr(E, a, loc);
    if (!x) return NULL;
    tl_expr *y = to_expr(E, b, loc);
    if (!y) return NULL;
    if (is_ir(a) && is_ir(b) && !widen_typed_ints(E, loc, &x, &y)) return NULL;
    if (is_bit_op(bop) && (!int_or_bool(x->dtype) || !int_or_bool(y->dtype))) {
      err(E, loc, "unsupported operand types for %s: %s and %s (bit operations take integers)", op,
          tl_dtype_name(x->dtype), tl_dtype_name(y->dtype));
      return NULL;
    }
    return mk_expr(E, chk(E, tl_ir_binary(E->m, loc, bop, x, y)));
  }
  if (is_compare(op)) return const_compare(E, op, a, b, loc);
  val *r = NULL;
  if (is_num(a) && is_num(b)) {
    r = (a->k == V_FLOAT || b->k == V_FLOAT) ? const_float_binop(E, op, a, b, loc) : const_int_binop(E, op, a, b, loc);
  } else if (a->k == V_STR && b->k == V_STR && !strcmp(op, "+")) {
    r = mk_str(E, tprintf(E, "%s%s", a->u.s, b->u.s));
  } else if (((a->k == V_STR || a->k == V_TUPLE) && (b->k == V_INT || b->k == V_BOOL)) && !strcmp(op, "*")) {
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
      if (b->u.tup.n) memcpy(r->u.tup.items + a->u.tup.n, b->u.tup.items, sizeof(val *) * (size_t)b->u.tup.n);
    }
  } else {
    return type_error(E, loc, op, a, b);
  }
  if (r && !r->origin) r->origin = a->origin ? a->origin : b->origin;
  return r;
}

val *unop(elab *E, const char *op, val *a, tl_loc loc) {
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
    if (op[0] == '~' && !int_or_bool(x->dtype)) {
      err(E, loc, "bad operand type for unary ~: %s (bit operations take integers)", tl_dtype_name(x->dtype));
      return NULL;
    }
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
