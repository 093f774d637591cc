/* IR core: dtypes, scopes, the intrinsic table and the node constructors of
 * the tile IR (lib/IR/tir.h).
 *
 * Algorithm: every expression constructor applies TIR's type rules and then
 * folds constants locally (it looks only at its immediate operands, so no
 * constructor recurses).  Type rules: a constant operand takes the other
 * operand's dtype when that loses no kind (an int literal beside a float
 * expression becomes a float literal of that dtype) and, for an integer
 * constant of a wider dtype, when that dtype holds its value (`i + 2**31`
 * with i int32 is computed in int64, never with the constant truncated to
 * int32, as in TVM); otherwise int with float
 * casts the int side to the float; two ints of different widths widen to the
 * wider one; comparisons and logical operators yield bool; logical operators
 * take bools (other operands are compared != 0).  Integer folding computes in
 * 64 bits with overflow checks (on int64 overflow the node is kept) and wraps
 * the result to the dtype's width, as the GPU's integer instructions do.
 * Float folding computes in double and rounds to the dtype (round to nearest
 * even; f16 and bf16 by an explicit quantum computation, see
 * tl_round_to_dtype).  Trivial identities (x+0, x*1, x*0 for ints, x//1,
 * x%1) are applied; nothing is reassociated. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "IR/tir.h"
#include "IR/visit.h"

/* ================================================================ dtypes */

/* Canonical names: base names and each power-of-two lane count. */
#define TL_LANE_NAMES(b) b, b "x2", b "x4", b "x8", b "x16", b "x32", b "x64"
static const char *const dtype_names[][7] = {
    {TL_LANE_NAMES("int8")},        {TL_LANE_NAMES("int16")},   {TL_LANE_NAMES("int32")},
    {TL_LANE_NAMES("int64")},       {TL_LANE_NAMES("uint8")},   {TL_LANE_NAMES("uint16")},
    {TL_LANE_NAMES("uint32")},      {TL_LANE_NAMES("uint64")},  {TL_LANE_NAMES("float16")},
    {TL_LANE_NAMES("float32")},     {TL_LANE_NAMES("float64")}, {TL_LANE_NAMES("bfloat16")},
    {TL_LANE_NAMES("tfloat32")},    {TL_LANE_NAMES("bool")},    {TL_LANE_NAMES("float8_e4m3")},
    {TL_LANE_NAMES("float8_e5m2")}, {TL_LANE_NAMES("int4")},    {TL_LANE_NAMES("uint4")},
};
static const tl_dtype dtype_bases[] = {
    TL_DT(TL_TYPE_INT, 8),     TL_DT(TL_TYPE_INT, 16),   TL_DT(TL_TYPE_INT, 32),        TL_DT(TL_TYPE_INT, 64),
    TL_DT(TL_TYPE_UINT, 8),    TL_DT(TL_TYPE_UINT, 16),  TL_DT(TL_TYPE_UINT, 32),       TL_DT(TL_TYPE_UINT, 64),
    TL_DT(TL_TYPE_FLOAT, 16),  TL_DT(TL_TYPE_FLOAT, 32), TL_DT(TL_TYPE_FLOAT, 64),      TL_DT(TL_TYPE_BFLOAT, 16),
    TL_DT(TL_TYPE_TFLOAT, 32), TL_DT(TL_TYPE_BOOL, 8),   TL_DT(TL_TYPE_FLOAT8_E4M3, 8), TL_DT(TL_TYPE_FLOAT8_E5M2, 8),
    TL_DT(TL_TYPE_INT, 4),     TL_DT(TL_TYPE_UINT, 4),
};
#define NUM_BASES ((int)(sizeof dtype_bases / sizeof dtype_bases[0]))

static const struct {
  const char *alias;
  tl_dtype t;
} dtype_aliases[] = {
    {"half", TL_DT(TL_TYPE_FLOAT, 16)},
    {"float", TL_DT(TL_TYPE_FLOAT, 32)},
    {"double", TL_DT(TL_TYPE_FLOAT, 64)},
    {"float8_e4m3fn", TL_DT(TL_TYPE_FLOAT8_E4M3, 8)}, /* TileLang/PyTorch spell e4m3 so too */
};

static int lane_index(unsigned lanes) {
  for (int i = 0; i < 7; i++)
    if ((1u << i) == lanes) return i;
  return -1;
}

bool tl_dtype_parse(const char *name, tl_dtype *out) {
  if (!name) return false;
  size_t n = strlen(name);
  /* Split an optional lane suffix "x<digits>" (the base names contain no 'x'). */
  size_t base_len = n;
  unsigned lanes = 1;
  const char *x = strrchr(name, 'x');
  if (x) {
    const char *d = x + 1;
    if (*d < '1' || *d > '9' || strlen(d) > 2) return false;
    lanes = 0;
    for (; *d; d++) {
      if (*d < '0' || *d > '9') return false;
      lanes = lanes * 10 + (unsigned)(*d - '0');
    }
    if (lane_index(lanes) < 1) return false; /* x2 .. x64 */
    base_len = (size_t)(x - name);
  }
  tl_dtype t;
  bool found = false;
  for (int i = 0; i < NUM_BASES && !found; i++)
    if (strlen(dtype_names[i][0]) == base_len && !memcmp(dtype_names[i][0], name, base_len)) {
      t = dtype_bases[i];
      found = true;
    }
  for (size_t i = 0; i < sizeof dtype_aliases / sizeof dtype_aliases[0] && !found; i++)
    if (strlen(dtype_aliases[i].alias) == base_len && !memcmp(dtype_aliases[i].alias, name, base_len)) {
      t = dtype_aliases[i].t;
      found = true;
    }
  if (!found || (t.bits == 4 && lanes > 1)) return false; /* no vectors of packed 4-bit ints */
  t.lanes = (uint16_t)lanes;
  if (out) *out = t;
  return true;
}

const char *tl_dtype_name(tl_dtype t) {
  if (t.code == TL_TYPE_VOID) return "void";
  if (t.code == TL_TYPE_HANDLE) return "handle";
  int li = lane_index(t.lanes);
  if (li < 0) return "unknown";
  for (int i = 0; i < NUM_BASES; i++)
    if (dtype_bases[i].code == t.code && dtype_bases[i].bits == t.bits) return dtype_names[i][li];
  return "unknown";
}

int tl_dtype_bytes(tl_dtype t) {
  if (t.code == TL_TYPE_BOOL) return 1;
  int b = (t.bits + 7) / 8;
  return b < 1 ? 1 : b;
}

tl_dtype tl_dtype_storage(tl_dtype t, int *per) {
  bool i4 = t.bits == 4 && (t.code == TL_TYPE_INT || t.code == TL_TYPE_UINT);
  if (per) *per = i4 ? 2 : 1;
  if (i4) t.bits = 8;
  return t;
}

const char *tl_scope_name(tl_scope s) {
  switch (s) {
  case TL_SCOPE_GLOBAL: return "global";
  case TL_SCOPE_SHARED_DYN: return "shared.dyn";
  case TL_SCOPE_SHARED: return "shared";
  case TL_SCOPE_FRAGMENT: return "local.fragment";
  case TL_SCOPE_LOCAL: return "local";
  case TL_SCOPE_LOCAL_VAR: return "local.var";
  }
  return "unknown";
}

/* ============================================================ intrinsics */
const tl_intrinsic tl_intrinsics[TL_INTRIN_COUNT] = {
#define TL_INTRINSIC(id, nm, lo, hi, r, u, eff) [TL_INTRIN_##id] = {#nm, lo, hi, TL_RET_##r, u, eff},
#include "IR/intrinsics.def"
#undef TL_INTRINSIC
};
const int tl_num_intrinsics = TL_INTRIN_COUNT;

const char *tl_intrinsic_name(int op) { return op >= 0 && op < TL_INTRIN_COUNT ? tl_intrinsics[op].name : "?"; }

int tl_intrinsic_lookup(const char *name) {
  if (!name) return -1;
  for (int i = 0; i < tl_num_intrinsics; i++)
    if (!strcmp(tl_intrinsics[i].name, name)) return i;
  return -1;
}

/* ========================================================= float rounding */

/* Rounds v to a binary format with p significand bits (implicit bit
 * included), minimum normal exponent emin and maximum exponent emax; round
 * to nearest even, overflow to infinity, subnormals kept. */
static double round_format(double v, int p, int emin, int emax) {
  if (v == 0 || isnan(v) || isinf(v)) return v;
  int e;
  (void)frexp(v, &e); /* v = f * 2^e, 0.5 <= |f| < 1: leading bit weight 2^(e-1) */
  int E = e - 1;
  if (E < emin) E = emin;
  double q = ldexp(1.0, E - (p - 1)); /* the spacing of representable values */
  double r = rint(v / q) * q;         /* exact scaling; rint rounds to even */
  if (fabs(r) >= ldexp(1.0, emax + 1)) return v < 0 ? -INFINITY : INFINITY;
  return r;
}

/* The parameters of an 8-bit float format: p significand bits (implicit
 * bit included), mantissa field width, exponent bias, largest finite. */
static void fp8_format(tl_dtype t, int *p, int *bias, double *maxf) {
  bool e4 = t.code == TL_TYPE_FLOAT8_E4M3;
  *p = e4 ? 4 : 3;
  *bias = e4 ? 7 : 15;
  *maxf = e4 ? 448.0 : 57344.0;
}

uint8_t tl_fp8_encode(double v, tl_dtype t) {
  int p, bias;
  double maxf;
  fp8_format(t, &p, &bias, &maxf);
  if (isnan(v)) return 0x7f;
  uint8_t s = signbit(v) ? 0x80 : 0;
  int emin = 1 - bias, mbits = p - 1;
  /* round to nearest even with an unbounded exponent, then saturate
   * (both are monotone and maxf is representable: the order is free) */
  double a = isinf(v) ? maxf : round_format(fabs(v), p, emin, 4 * bias);
  if (a > maxf) a = maxf;
  if (a == 0) return s;
  int e;
  (void)frexp(a, &e);
  int E = e - 1;
  if (E < emin) /* subnormal: exponent field 0, the mantissa counts 2^(emin - mbits) */
    return s | (uint8_t)ldexp(a, mbits - emin);
  int m = (int)ldexp(a, mbits - E) - (1 << mbits);
  return s | (uint8_t)((E + bias) << mbits) | (uint8_t)m;
}

double tl_fp8_decode(uint8_t b, tl_dtype t) {
  int p, bias;
  double maxf;
  fp8_format(t, &p, &bias, &maxf);
  int mbits = p - 1, ebits = 7 - mbits;
  int e = (b >> mbits) & ((1 << ebits) - 1), m = b & ((1 << mbits) - 1);
  double v;
  if (t.code == TL_TYPE_FLOAT8_E4M3 && e == 15 && m == 7) return NAN;
  if (t.code == TL_TYPE_FLOAT8_E5M2 && e == 31) v = m ? NAN : INFINITY;
  else if (e == 0) v = ldexp((double)m, 1 - bias - mbits);
  else v = ldexp((double)((1 << mbits) + m), e - bias - mbits);
  return (b & 0x80) ? -v : v;
}

double tl_round_to_dtype(double v, tl_dtype t) {
  switch (t.code) {
  case TL_TYPE_FLOAT8_E4M3:
  case TL_TYPE_FLOAT8_E5M2: return tl_fp8_decode(tl_fp8_encode(v, t), t);
  case TL_TYPE_FLOAT:
    if (t.bits == 16) return round_format(v, 11, -14, 15);
    if (t.bits == 32) return round_format(v, 24, -126, 127);
    return v;
  case TL_TYPE_BFLOAT: return round_format(v, 8, -126, 127);
  case TL_TYPE_TFLOAT: return round_format(v, 11, -126, 127);
  default: return v;
  }
}

double tl_float_binop(tl_binop op, double a, double b, tl_dtype t) {
  if (t.code == TL_TYPE_FLOAT && t.bits == 64) {
    switch (op) {
    case TL_OP_ADD: return a + b;
    case TL_OP_SUB: return a - b;
    case TL_OP_MUL: return a * b;
    case TL_OP_DIV: return a / b;
    case TL_OP_FLOORDIV: return floor(a / b);
    case TL_OP_FLOORMOD: {
      double q = floor(a / b);
      double p = q * b;
      return a - p;
    }
    case TL_OP_POW: return pow(a, b);
    case TL_OP_MIN: return fmin(a, b);
    case TL_OP_MAX: return fmax(a, b);
    default: return NAN;
    }
  }
  float x = (float)a, y = (float)b, r;
  switch (op) {
  case TL_OP_ADD: r = x + y; break;
  case TL_OP_SUB: r = x - y; break;
  case TL_OP_MUL: r = x * y; break;
  case TL_OP_DIV: r = x / y; break;
  case TL_OP_FLOORDIV: r = floorf(x / y); break;
  case TL_OP_FLOORMOD: {
    float q = floorf(x / y);
    float p = q * y;
    r = x - p;
    break;
  }
  case TL_OP_POW: r = powf(x, y); break;
  case TL_OP_MIN: r = fminf(x, y); break;
  case TL_OP_MAX: r = fmaxf(x, y); break;
  default: return NAN;
  }
  return t.code == TL_TYPE_FLOAT && t.bits == 32 ? (double)r : tl_round_to_dtype(r, t);
}

bool tl_order_holds(tl_binop op, int ord) {
  switch (op) {
  case TL_OP_EQ: return ord == 0;
  case TL_OP_NE: return ord != 0;
  case TL_OP_LT: return ord < 0;
  case TL_OP_LE: return ord <= 0;
  case TL_OP_GT: return ord > 0;
  default: return ord >= 0;
  }
}

bool tl_float_compare(tl_binop op, double a, double b) {
  if (isnan(a) || isnan(b)) return op == TL_OP_NE; /* unordered: only != holds */
  return tl_order_holds(op, (a > b) - (a < b));
}

bool tl_int_compare(tl_binop op, int64_t a, int64_t b, bool is_unsigned) {
  uint64_t ua = (uint64_t)a, ub = (uint64_t)b;
  return tl_order_holds(op, is_unsigned ? (ua > ub) - (ua < ub) : (a > b) - (a < b));
}

/* ============================================================ allocation */

tl_module *tl_module_new(void) {
  tl_module *m = calloc(1, sizeof *m);
  if (!m) return NULL;
  tl_arena_init(&m->arena);
  tl_intern_init(&m->names, &m->arena);
  return m;
}

void tl_module_destroy(tl_module *m) {
  if (!m) return;
  tl_intern_free(&m->names);
  tl_arena_free(&m->arena);
  free(m);
}

tl_expr *tl_ir_expr(tl_module *m, tl_loc loc, tl_expr_kind k, tl_dtype t) {
  tl_expr *e = tl_arena_alloc(&m->arena, sizeof *e);
  if (!e) return NULL;
  e->kind = k;
  e->dtype = t;
  e->loc = loc;
  return e;
}

static tl_expr **copy_exprs(tl_module *m, int n, tl_expr **src) {
  if (n <= 0) return NULL;
  tl_expr **d = tl_arena_alloc(&m->arena, sizeof(tl_expr *) * (size_t)n);
  if (!d) return NULL;
  for (int i = 0; i < n; i++) d[i] = src ? src[i] : NULL;
  return d;
}

/* Wraps v to the width of integer dtype t (two's complement; bool → 0/1). */
static int64_t wrap_int(tl_dtype t, int64_t v) {
  if (t.code == TL_TYPE_BOOL) return v != 0;
  if (t.bits >= 64 || t.bits == 0) return v;
  uint64_t mask = (UINT64_C(1) << t.bits) - 1;
  uint64_t u = (uint64_t)v & mask;
  if (t.code == TL_TYPE_INT && (u >> (t.bits - 1)) & 1) u |= ~mask;
  return (int64_t)u;
}

tl_expr *tl_ir_int(tl_module *m, tl_loc loc, tl_dtype t, int64_t v) {
  if (tl_dtype_is_float(t)) return tl_ir_float(m, loc, t, (double)v);
  tl_expr *e = tl_ir_expr(m, loc, TL_EXPR_INT, t);
  if (e) e->u.ival = wrap_int(t, v);
  return e;
}

tl_expr *tl_ir_float(tl_module *m, tl_loc loc, tl_dtype t, double v) {
  tl_expr *e = tl_ir_expr(m, loc, TL_EXPR_FLOAT, t);
  if (e) e->u.fval = tl_round_to_dtype(v, t);
  return e;
}

tl_expr *tl_ir_string(tl_module *m, tl_loc loc, const char *s) {
  const char *is = tl_intern_str(&m->names, s ? s : "");
  if (!is) return NULL;
  tl_expr *e = tl_ir_expr(m, loc, TL_EXPR_STRING, TL_VOID);
  if (e) e->u.str = is;
  return e;
}

tl_expr *tl_ir_var(tl_module *m, tl_loc loc, tl_var *v) {
  if (!v) return NULL;
  tl_expr *e = tl_ir_expr(m, loc, TL_EXPR_VAR, v->dtype);
  if (e) e->u.var = v;
  return e;
}

tl_expr *tl_ir_buffer_ref(tl_module *m, tl_loc loc, tl_buffer *b) {
  if (!b) return NULL;
  tl_expr *e = tl_ir_expr(m, loc, TL_EXPR_BUFFER, TL_DT(TL_TYPE_HANDLE, 64));
  if (e) e->u.buffer = b;
  return e;
}

/* A zeroed node of size bytes in m's arena and *interned, name (dflt when
 * NULL) interned in m; NULL on OOM. */
static void *named_node(tl_module *m, const char *name, const char *dflt, size_t size, const char **interned) {
  *interned = tl_intern_str(&m->names, name ? name : dflt);
  return *interned ? tl_arena_alloc(&m->arena, size) : NULL;
}

tl_var *tl_ir_new_var(tl_module *m, tl_loc loc, const char *name, tl_dtype t, tl_var_kind kind) {
  const char *is;
  tl_var *v = named_node(m, name, "v", sizeof *v, &is);
  if (!v) return NULL;
  *v = (tl_var){.name = is, .dtype = t, .kind = kind, .loc = loc};
  return v;
}

tl_buffer *tl_ir_new_buffer(tl_module *m, tl_loc loc, const char *name, tl_dtype t, tl_scope scope, int ndim,
                            tl_expr **shape) {
  const char *is;
  tl_buffer *b = named_node(m, name, "buf", sizeof *b, &is);
  if (!b) return NULL;
  *b = (tl_buffer){.name = is, .dtype = t, .scope = scope, .ndim = ndim < 0 ? 0 : ndim, .loc = loc};
  if (b->ndim > 0 && !(b->shape = copy_exprs(m, b->ndim, shape))) return NULL;
  return b;
}

tl_stmt *tl_ir_stmt(tl_module *m, tl_loc loc, tl_stmt_kind kind) {
  tl_stmt *s = tl_arena_alloc(&m->arena, sizeof *s);
  if (!s) return NULL;
  s->kind = kind;
  s->loc = loc;
  return s;
}

void *tl_func_annot(const tl_primfunc *f, const void *key) {
  for (const tl_annot *a = f ? f->annots : NULL; a; a = a->next)
    if (a->key == key) return a->data;
  return NULL;
}

void *tl_func_annot_add(tl_module *m, tl_primfunc *f, const void *key, size_t size) {
  void *have = tl_func_annot(f, key);
  if (have) return have;
  tl_annot *a = tl_arena_alloc(&m->arena, sizeof *a);
  void *data = tl_arena_alloc(&m->arena, size ? size : 1);
  if (!a || !data) return NULL;
  memset(data, 0, size ? size : 1);
  *a = (tl_annot){.key = key, .size = size, .data = data, .next = f->annots};
  f->annots = a;
  return data;
}

void tl_ir_loop_init(tl_stmt *s, tl_loop_kind kind, int nvars, tl_var **vars, tl_expr **mins, tl_expr **extents) {
  s->u.loop.kind = kind;
  s->u.loop.nvars = nvars;
  s->u.loop.vars = vars;
  s->u.loop.mins = mins;
  s->u.loop.extents = extents;
  s->u.loop.num_stages = -1;
}

tl_stmt *tl_ir_seq(tl_module *m, tl_loc loc, int n, tl_stmt **stmts) {
  if (n == 1 && stmts) return stmts[0];
  tl_stmt *s = tl_ir_stmt(m, loc, TL_STMT_SEQ);
  if (!s) return NULL;
  if (n > 0) {
    s->u.seq.stmts = tl_arena_alloc(&m->arena, sizeof(tl_stmt *) * (size_t)n);
    if (!s->u.seq.stmts) return NULL;
    for (int i = 0; i < n; i++) s->u.seq.stmts[i] = stmts[i];
    s->u.seq.n = n;
  }
  return s;
}

tl_stmt *tl_ir_if(tl_module *m, tl_loc loc, tl_expr *cond, tl_stmt *then_s, tl_stmt *else_s) {
  tl_stmt *s = tl_ir_stmt(m, loc, TL_STMT_IF);
  if (!s) return NULL;
  s->u.ifs.cond = cond;
  s->u.ifs.then_s = then_s;
  s->u.ifs.else_s = else_s;
  return s;
}

tl_stmt *tl_ir_while(tl_module *m, tl_loc loc, tl_expr *cond, tl_stmt *body) {
  tl_stmt *s = tl_ir_stmt(m, loc, TL_STMT_WHILE);
  if (!s) return NULL;
  s->u.whiles.cond = cond;
  s->u.whiles.body = body;
  return s;
}

/* ============================================================== helpers */

static tl_stmt *find_kernel(const tl_stmt *s, int depth) {
  if (!s || depth > 400) return NULL;
  switch (s->kind) {
  case TL_STMT_KERNEL: return (tl_stmt *)s;
  case TL_STMT_SEQ:
    for (int i = 0; i < s->u.seq.n; i++) {
      tl_stmt *k = find_kernel(s->u.seq.stmts[i], depth + 1);
      if (k) return k;
    }
    return NULL;
  case TL_STMT_FOR: return find_kernel(s->u.loop.body, depth + 1);
  case TL_STMT_WHILE: return find_kernel(s->u.whiles.body, depth + 1);
  case TL_STMT_IF: {
    tl_stmt *k = find_kernel(s->u.ifs.then_s, depth + 1);
    return k ? k : find_kernel(s->u.ifs.else_s, depth + 1);
  }
  default: return NULL;
  }
}

tl_stmt *tl_ir_find_kernel(const tl_stmt *s) { return find_kernel(s, 0); }

/* The end of one planned shared.dyn buffer (0: not planned, or its size
 * not a constant of at most 2^40 bytes). */
static int64_t planned_end(const tl_buffer *b) {
  if (!b || b->scope != TL_SCOPE_SHARED_DYN || !b->smem_planned || b->smem_offset < 0) return 0;
  int64_t n = 1, d;
  for (int i = 0; i < b->ndim; i++) {
    if (!tl_expr_is_const_int(b->shape[i], &d) || d < 0 || (d && n > ((int64_t)1 << 40) / d)) return 0;
    n *= d;
  }
  int64_t eb = (int64_t)tl_dtype_bytes(b->dtype) * (b->dtype.lanes > 1 ? b->dtype.lanes : 1);
  if (n > ((int64_t)1 << 40) / eb || b->smem_offset > ((int64_t)1 << 40)) return 0;
  return b->smem_offset + n * eb;
}

typedef struct smem_end_visit {
  tl_visitor v;
  int64_t end;
} smem_end_visit;

static void smem_end_stmt(tl_visitor *v, const tl_stmt *s) {
  smem_end_visit *u = (smem_end_visit *)v;
  int64_t e = s->kind == TL_STMT_ALLOC ? planned_end(s->u.alloc.buffer) : 0;
  if (e > u->end) u->end = e;
}

int64_t tl_ir_planned_smem_end(const tl_stmt *s) {
  smem_end_visit u = {.v = {.stmt = smem_end_stmt}};
  tl_visit_stmt(&u.v, s);
  return u.end;
}

tl_dtype tl_dtype_compare_common(tl_dtype a, tl_dtype b) {
  tl_dtype r = a;
  if (tl_dtype_is_float(b) && !tl_dtype_is_float(a)) r = b;
  else if (tl_dtype_is_float(a) == tl_dtype_is_float(b) && b.bits > a.bits) r = b;
  else if (a.code == TL_TYPE_BOOL && b.code != TL_TYPE_BOOL) r = b;
  r.lanes = a.lanes > b.lanes ? a.lanes : b.lanes;
  return r;
}

bool tl_expr_is_const_int(const tl_expr *e, int64_t *v) {
  if (!e || e->kind != TL_EXPR_INT) return false;
  if (v) *v = e->u.ival;
  return true;
}

/* An integer expression as a sum of constant multiples of atoms (the
 * subexpressions that are not +, - or * by a constant) plus a constant. */
typedef struct lin_form {
  int n;
  const tl_expr *atom[32];
  int64_t coef[32];
  int64_t c;
} lin_form;

static bool linearize(const tl_expr *e, int64_t mult, lin_form *f, int depth) {
  int64_t v, t;
  if (!e || depth > 50 || !tl_dtype_is_int(e->dtype)) return false;
  if (tl_expr_is_const_int(e, &v)) {
    if (__builtin_mul_overflow(v, mult, &t) || __builtin_add_overflow(f->c, t, &f->c)) return false;
    return true;
  }
  if (e->kind == TL_EXPR_BINARY) {
    const tl_expr *a = e->u.bin.a, *b = e->u.bin.b;
    switch (e->u.bin.op) {
    case TL_OP_ADD: return linearize(a, mult, f, depth + 1) && linearize(b, mult, f, depth + 1);
    case TL_OP_SUB: return mult != INT64_MIN && linearize(a, mult, f, depth + 1) && linearize(b, -mult, f, depth + 1);
    case TL_OP_MUL:
      if (tl_expr_is_const_int(b, &v)) return !__builtin_mul_overflow(v, mult, &t) && linearize(a, t, f, depth + 1);
      if (tl_expr_is_const_int(a, &v)) return !__builtin_mul_overflow(v, mult, &t) && linearize(b, t, f, depth + 1);
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

/* The constant of f when its atoms cancel. */
static bool lin_const(const lin_form *f, int64_t *c) {
  for (int i = 0; i < f->n; i++)
    if (f->coef[i] != 0) return false;
  *c = f->c;
  return true;
}

bool tl_expr_const_difference(const tl_expr *hi, const tl_expr *lo, int64_t *c) {
  lin_form f;
  memset(&f, 0, sizeof f);
  return linearize(hi, 1, &f, 0) && linearize(lo, -1, &f, 0) && lin_const(&f, c);
}

bool tl_expr_affine_const(const tl_expr *e, int64_t *v) {
  if (tl_expr_is_const_int(e, v)) return true;
  lin_form f;
  memset(&f, 0, sizeof f);
  int64_t c;
  if (!linearize(e, 1, &f, 0) || !lin_const(&f, &c)) return false;
  if (e->dtype.bits < 64 && (c < INT32_MIN || c > INT32_MAX)) return false;
  if (v) *v = c;
  return true;
}

static bool is_const(const tl_expr *e) { return e->kind == TL_EXPR_INT || e->kind == TL_EXPR_FLOAT; }
static bool is_intlike(tl_dtype t) { return tl_dtype_is_int(t) || t.code == TL_TYPE_BOOL; }

static bool float_bits_equal(double a, double b) {
  uint64_t x, y;
  memcpy(&x, &a, sizeof x);
  memcpy(&y, &b, sizeof y);
  return x == y || (isnan(a) && isnan(b));
}

#define EQ_MAX_DEPTH 4096
static bool expr_equal_rec(const tl_expr *a, const tl_expr *b, int depth) {
  if (a == b) return true;
  if (!a || !b || depth > EQ_MAX_DEPTH) return false;
  if (a->kind != b->kind || !tl_dtype_eq(a->dtype, b->dtype)) return false;
  switch (a->kind) {
  case TL_EXPR_INT: return a->u.ival == b->u.ival;
  case TL_EXPR_FLOAT: return float_bits_equal(a->u.fval, b->u.fval);
  case TL_EXPR_STRING: return a->u.str == b->u.str || !strcmp(a->u.str, b->u.str);
  case TL_EXPR_VAR: return a->u.var == b->u.var;
  case TL_EXPR_BUFFER: return a->u.buffer == b->u.buffer;
  case TL_EXPR_BINARY:
    return a->u.bin.op == b->u.bin.op && expr_equal_rec(a->u.bin.a, b->u.bin.a, depth + 1) &&
           expr_equal_rec(a->u.bin.b, b->u.bin.b, depth + 1);
  case TL_EXPR_UNARY: return a->u.un.op == b->u.un.op && expr_equal_rec(a->u.un.a, b->u.un.a, depth + 1);
  case TL_EXPR_SELECT:
    return expr_equal_rec(a->u.sel.cond, b->u.sel.cond, depth + 1) &&
           expr_equal_rec(a->u.sel.t, b->u.sel.t, depth + 1) && expr_equal_rec(a->u.sel.f, b->u.sel.f, depth + 1);
  case TL_EXPR_CAST: return expr_equal_rec(a->u.cast.value, b->u.cast.value, depth + 1);
  case TL_EXPR_LOAD:
    if (a->u.load.buffer != b->u.load.buffer || a->u.load.n != b->u.load.n) return false;
    for (int i = 0; i < a->u.load.n; i++)
      if (!expr_equal_rec(a->u.load.indices[i], b->u.load.indices[i], depth + 1)) return false;
    return true;
  case TL_EXPR_CALL:
    if (a->u.call.op != b->u.call.op || a->u.call.n != b->u.call.n) return false;
    for (int i = 0; i < a->u.call.n; i++)
      if (!expr_equal_rec(a->u.call.args[i], b->u.call.args[i], depth + 1)) return false;
    return true;
  case TL_EXPR_RAMP:
    return expr_equal_rec(a->u.ramp.base, b->u.ramp.base, depth + 1) &&
           expr_equal_rec(a->u.ramp.stride, b->u.ramp.stride, depth + 1);
  case TL_EXPR_BROADCAST: return expr_equal_rec(a->u.bcast.value, b->u.bcast.value, depth + 1);
  }
  return false;
}

bool tl_expr_equal(const tl_expr *a, const tl_expr *b) { return expr_equal_rec(a, b, 0); }

/* ================================================================= casts */

/* Value of an integer constant as unsigned when its dtype is unsigned. */
static double int_const_to_double(const tl_expr *e) {
  if (e->dtype.code == TL_TYPE_UINT) {
    uint64_t u = (uint64_t)e->u.ival;
    if (e->dtype.bits < 64) u &= (UINT64_C(1) << e->dtype.bits) - 1;
    return (double)u;
  }
  return (double)e->u.ival;
}

/* Float → integer of dtype t, truncating toward zero; false when the value
 * is out of t's range (the GPU saturates there; we keep the cast). */
static bool float_to_int(double v, tl_dtype t, int64_t *out) {
  if (isnan(v)) return false;
  if (t.code == TL_TYPE_BOOL) {
    *out = v != 0;
    return true;
  }
  double tv = trunc(v);
  int bits = t.bits > 64 ? 64 : t.bits;
  if (t.code == TL_TYPE_UINT) {
    if (tv < 0 || tv >= ldexp(1.0, bits)) return false;
    *out = (int64_t)(uint64_t)tv;
    return true;
  }
  if (tv < -ldexp(1.0, bits - 1) || tv >= ldexp(1.0, bits - 1)) return false;
  *out = (int64_t)tv;
  return true;
}

static tl_expr *cast_node(tl_module *m, tl_loc loc, tl_dtype t, tl_expr *x) {
  tl_expr *e = tl_ir_expr(m, loc, TL_EXPR_CAST, t);
  if (e) e->u.cast.value = x;
  return e;
}

tl_expr *tl_ir_cast(tl_module *m, tl_loc loc, tl_dtype t, tl_expr *x) {
  if (!x) return NULL;
  if (tl_dtype_eq(t, x->dtype)) return x;
  if (x->kind == TL_EXPR_INT) {
    if (is_intlike(t)) {
      int64_t v = x->u.ival;
      if (x->dtype.code == TL_TYPE_UINT && x->dtype.bits < 64)
        v = (int64_t)((uint64_t)v & ((UINT64_C(1) << x->dtype.bits) - 1));
      return tl_ir_int(m, loc, t, v);
    }
    if (tl_dtype_is_float(t)) return tl_ir_float(m, loc, t, int_const_to_double(x));
  } else if (x->kind == TL_EXPR_FLOAT) {
    if (tl_dtype_is_float(t)) return tl_ir_float(m, loc, t, x->u.fval);
    int64_t v;
    if (is_intlike(t) && float_to_int(x->u.fval, t, &v)) return tl_ir_int(m, loc, t, v);
  }
  return cast_node(m, loc, t, x);
}

/* ========================================================== type rules */

typedef enum { CLS_BOOL, CLS_INT, CLS_FLOAT, CLS_OTHER } dclass;
static dclass class_of(tl_dtype t) {
  if (t.code == TL_TYPE_BOOL) return CLS_BOOL;
  if (tl_dtype_is_int(t)) return CLS_INT;
  if (tl_dtype_is_float(t)) return CLS_FLOAT;
  return CLS_OTHER;
}

/* The common dtype of two non-constant (or two constant) operands. */
static tl_dtype common_dtype(tl_dtype a, tl_dtype b) {
  dclass ca = class_of(a), cb = class_of(b);
  tl_dtype r;
  if (ca == CLS_OTHER || cb == CLS_OTHER) return a;
  if (ca == CLS_FLOAT && cb != CLS_FLOAT) r = a;
  else if (cb == CLS_FLOAT && ca != CLS_FLOAT) r = b;
  else if (ca == CLS_FLOAT) { /* both float */
    if (a.bits != b.bits) r = a.bits > b.bits ? a : b;
    else if (a.code == b.code) r = a;
    else r = TL_FLOAT32; /* f16 vs bf16, f32 vs tf32 */
    if (r.bits == 32 && r.code != TL_TYPE_FLOAT) r = TL_FLOAT32;
  } else if (ca == CLS_BOOL) r = b;
  else if (cb == CLS_BOOL) r = a;
  else if (a.bits != b.bits) r = a.bits > b.bits ? a : b;
  else r = a.code == TL_TYPE_UINT ? a : b; /* same width: unsigned wins */
  r.lanes = a.lanes > b.lanes ? a.lanes : b.lanes;
  return r;
}

/* Whether the value of integer constant c is representable in integer
 * dtype t (so that casting c to t keeps its value). */
static bool int_const_fits(const tl_expr *c, tl_dtype t) {
  int64_t v = c->u.ival;
  if (c->dtype.code == TL_TYPE_UINT && c->dtype.bits >= 64 && v < 0) /* >= 2^63 */
    return t.code == TL_TYPE_UINT && t.bits >= 64;
  if (t.code == TL_TYPE_BOOL) return v == 0 || v == 1;
  if (t.bits >= 64) return t.code == TL_TYPE_INT || v >= 0;
  if (t.code == TL_TYPE_UINT) return v >= 0 && v <= (int64_t)((UINT64_C(1) << t.bits) - 1);
  int64_t hi = (INT64_C(1) << (t.bits - 1)) - 1;
  return v >= -hi - 1 && v <= hi;
}

/* Brings *a and *b to one dtype by the TIR rules. */
static void unify(tl_module *m, tl_loc loc, tl_expr **a, tl_expr **b) {
  tl_expr *x = *a, *y = *b;
  if (tl_dtype_eq(x->dtype, y->dtype)) return;
  dclass cx = class_of(x->dtype), cy = class_of(y->dtype);
  if (cx == CLS_OTHER || cy == CLS_OTHER) return;
  bool kx = is_const(x), ky = is_const(y);
  if (kx != ky) {
    /* One constant: it takes the other's dtype unless it is a float beside
     * a non-float expression (then that expression becomes the float), or
     * an integer of a wider dtype whose value the other's dtype cannot hold
     * (`i + 4294967296`, `i + 2**31`: the expression is promoted, as in
     * TVM, instead of the constant being truncated). */
    tl_expr **c = kx ? a : b, **o = kx ? b : a;
    dclass cc = kx ? cx : cy, co = kx ? cy : cx;
    if (cc == CLS_FLOAT && co != CLS_FLOAT) {
      *o = tl_ir_cast(m, loc, (*c)->dtype, *o);
    } else if (cc == CLS_INT && co == CLS_INT && (*c)->dtype.bits > (*o)->dtype.bits &&
               !int_const_fits(*c, (*o)->dtype)) {
      tl_dtype t = common_dtype(x->dtype, y->dtype);
      *a = tl_ir_cast(m, loc, t, x);
      *b = tl_ir_cast(m, loc, t, y);
    } else {
      *c = tl_ir_cast(m, loc, (*o)->dtype, *c);
    }
    return;
  }
  tl_dtype t = common_dtype(x->dtype, y->dtype);
  *a = tl_ir_cast(m, loc, t, x);
  *b = tl_ir_cast(m, loc, t, y);
}

/* e as a bool: bools pass, other values compare != 0. */
static tl_expr *to_bool(tl_module *m, tl_loc loc, tl_expr *e) {
  if (!e || e->dtype.code == TL_TYPE_BOOL) return e;
  dclass c = class_of(e->dtype);
  if (c == CLS_OTHER) return e;
  if (e->kind == TL_EXPR_INT) return tl_ir_int(m, loc, TL_BOOL, e->u.ival != 0);
  if (e->kind == TL_EXPR_FLOAT && !isnan(e->u.fval)) return tl_ir_int(m, loc, TL_BOOL, e->u.fval != 0);
  tl_expr *zero = c == CLS_FLOAT ? tl_ir_float(m, loc, e->dtype, 0.0) : tl_ir_int(m, loc, e->dtype, 0);
  if (!zero) return NULL;
  return tl_ir_binary(m, loc, TL_OP_NE, e, zero);
}

/* ============================================================== folding */

static bool is_cmp(tl_binop op) { return op >= TL_OP_EQ && op <= TL_OP_GE; }

static bool signed_floordiv(int64_t a, int64_t b, int64_t *r) {
  if (b == 0 || (a == INT64_MIN && b == -1)) return false;
  int64_t q = a / b;
  if ((a % b != 0) && ((a < 0) != (b < 0))) q--;
  *r = q;
  return true;
}
static bool signed_floormod(int64_t a, int64_t b, int64_t *r) {
  if (b == 0) return false;
  if (b == -1) {
    *r = 0;
    return true;
  }
  int64_t q = a % b;
  if (q != 0 && ((q < 0) != (b < 0))) q += b;
  *r = q;
  return true;
}

/* A comparison or logical op, given the order of its operands (ord < 0,
 * 0, > 0: a < b, a == b, a > b, in the operands' signedness) and whether
 * each is nonzero. */
static bool fold_relation(tl_binop op, int ord, bool a, bool b, int64_t *r) {
  switch (op) {
  case TL_OP_AND: *r = a && b; return true;
  case TL_OP_OR: *r = a || b; return true;
  default:
    if (!is_cmp(op)) return false;
    *r = tl_order_holds(op, ord);
    return true;
  }
}

/* x & y, x | y or x ^ y (op one of them): the same bits signed or unsigned. */
static uint64_t bitwise(tl_binop op, uint64_t x, uint64_t y) {
  return op == TL_OP_BITAND ? x & y : op == TL_OP_BITOR ? x | y : x ^ y;
}

/* False: keep the node (tir.h). */
bool tl_int_binop_fold(tl_binop op, tl_dtype t, int64_t a, int64_t b, int64_t *r) {
  int bits = t.code == TL_TYPE_BOOL ? 8 : t.bits;
  if (t.code == TL_TYPE_UINT) {
    uint64_t mask = bits >= 64 ? UINT64_MAX : (UINT64_C(1) << bits) - 1;
    uint64_t x = (uint64_t)a & mask, y = (uint64_t)b & mask, z;
    if (is_cmp(op) || op == TL_OP_AND || op == TL_OP_OR) return fold_relation(op, (x > y) - (x < y), x, y, r);
    switch (op) {
    case TL_OP_ADD: z = x + y; break;
    case TL_OP_SUB: z = x - y; break;
    case TL_OP_MUL: z = x * y; break;
    case TL_OP_DIV:
    case TL_OP_FLOORDIV:
      if (!y) return false;
      z = x / y;
      break;
    case TL_OP_FLOORMOD:
      if (!y) return false;
      z = x % y;
      break;
    case TL_OP_POW:
      z = 1;
      while (y) {
        if (y & 1) z *= x;
        x *= x;
        y >>= 1;
      }
      break;
    case TL_OP_MIN: z = x < y ? x : y; break;
    case TL_OP_MAX: z = x > y ? x : y; break;
    case TL_OP_BITAND:
    case TL_OP_BITOR:
    case TL_OP_BITXOR: z = bitwise(op, x, y); break;
    case TL_OP_SHL:
      if (y >= (uint64_t)bits) return false;
      z = x << y;
      break;
    case TL_OP_SHR:
      if (y >= (uint64_t)bits) return false;
      z = x >> y;
      break;
    default: return false;
    }
    *r = (int64_t)z;
    return true;
  }
  if (is_cmp(op) || op == TL_OP_AND || op == TL_OP_OR) return fold_relation(op, (a > b) - (a < b), a, b, r);
  int64_t z;
  switch (op) {
  case TL_OP_ADD:
    if (__builtin_add_overflow(a, b, &z)) return false;
    break;
  case TL_OP_SUB:
    if (__builtin_sub_overflow(a, b, &z)) return false;
    break;
  case TL_OP_MUL:
    if (__builtin_mul_overflow(a, b, &z)) return false;
    break;
  case TL_OP_DIV:
    if (b == 0 || (a == INT64_MIN && b == -1)) return false;
    z = a / b;
    break;
  case TL_OP_FLOORDIV:
    if (!signed_floordiv(a, b, &z)) return false;
    break;
  case TL_OP_FLOORMOD:
    if (!signed_floormod(a, b, &z)) return false;
    break;
  case TL_OP_POW: {
    if (b < 0) return false;
    int64_t base = a, acc = 1;
    while (b) {
      if ((b & 1) && __builtin_mul_overflow(acc, base, &acc)) return false;
      b >>= 1;
      if (b && __builtin_mul_overflow(base, base, &base)) return false;
    }
    z = acc;
    break;
  }
  case TL_OP_MIN: z = a < b ? a : b; break;
  case TL_OP_MAX: z = a > b ? a : b; break;
  case TL_OP_BITAND:
  case TL_OP_BITOR:
  case TL_OP_BITXOR: z = (int64_t)bitwise(op, (uint64_t)a, (uint64_t)b); break;
  case TL_OP_SHL:
    if (b < 0 || b >= bits) return false;
    z = (int64_t)((uint64_t)a << b);
    break;
  case TL_OP_SHR:
    if (b < 0 || b >= bits) return false;
    z = a < 0 ? ~(~a >> b) : a >> b;
    break;
  default: return false;
  }
  *r = z;
  return true;
}

/* Float fold; *is_bool tells a comparison result. */
static bool fold_float(tl_binop op, double a, double b, double *r, bool *is_bool) {
  *is_bool = false;
  switch (op) {
  case TL_OP_ADD: *r = a + b; return true;
  case TL_OP_SUB: *r = a - b; return true;
  case TL_OP_MUL: *r = a * b; return true;
  case TL_OP_DIV:
    if (b == 0) return false;
    *r = a / b;
    return true;
  case TL_OP_FLOORDIV:
    if (b == 0) return false;
    *r = floor(a / b);
    return true;
  case TL_OP_FLOORMOD:
    if (b == 0) return false;
    *r = a - floor(a / b) * b;
    return true;
  case TL_OP_POW: *r = pow(a, b); return true;
  case TL_OP_MIN: *r = fmin(a, b); return true;
  case TL_OP_MAX: *r = fmax(a, b); return true;
  case TL_OP_EQ:
    *is_bool = true;
    *r = a == b;
    return true;
  case TL_OP_NE:
    *is_bool = true;
    *r = a != b;
    return true;
  case TL_OP_LT:
    *is_bool = true;
    *r = a < b;
    return true;
  case TL_OP_LE:
    *is_bool = true;
    *r = a <= b;
    return true;
  case TL_OP_GT:
    *is_bool = true;
    *r = a > b;
    return true;
  case TL_OP_GE:
    *is_bool = true;
    *r = a >= b;
    return true;
  default: return false;
  }
}

static bool const_is(const tl_expr *e, double v) {
  if (e->kind == TL_EXPR_INT) return e->dtype.code != TL_TYPE_BOOL && (double)e->u.ival == v;
  if (e->kind == TL_EXPR_FLOAT) return e->u.fval == v;
  return false;
}

tl_expr *tl_ir_binary(tl_module *m, tl_loc loc, tl_binop op, tl_expr *a, tl_expr *b) {
  if (!a || !b) return NULL;
  if (op == TL_OP_AND || op == TL_OP_OR) {
    a = to_bool(m, loc, a);
    b = to_bool(m, loc, b);
    if (!a || !b) return NULL;
    tl_expr *ca = a->kind == TL_EXPR_INT ? a : NULL, *cb = b->kind == TL_EXPR_INT ? b : NULL;
    if (ca && cb)
      return tl_ir_int(m, loc, TL_BOOL, op == TL_OP_AND ? (ca->u.ival && cb->u.ival) : (ca->u.ival || cb->u.ival));
    /* x and True → x, x and False → False, x or False → x, x or True → True */
    tl_expr *c = ca ? ca : cb, *o = ca ? b : a;
    if (c) {
      bool v = c->u.ival != 0;
      if (op == TL_OP_AND) return v ? o : c;
      return v ? c : o;
    }
  } else {
    /* Arithmetic on bools counts in int32. */
    bool bitwise = op == TL_OP_BITAND || op == TL_OP_BITOR || op == TL_OP_BITXOR;
    if (!is_cmp(op) && !bitwise && op != TL_OP_MIN && op != TL_OP_MAX) {
      if (a->dtype.code == TL_TYPE_BOOL) a = tl_ir_cast(m, loc, TL_INT32, a);
      if (b->dtype.code == TL_TYPE_BOOL) b = tl_ir_cast(m, loc, TL_INT32, b);
      if (!a || !b) return NULL;
    }
    unify(m, loc, &a, &b);
    if (!a || !b) return NULL;
  }
  tl_dtype t = a->dtype;
  tl_dtype rt = t;
  if (is_cmp(op) || op == TL_OP_AND || op == TL_OP_OR) {
    rt = TL_BOOL;
    rt.lanes = t.lanes;
  }
  bool ints = is_intlike(t) && tl_dtype_eq(a->dtype, b->dtype);
  bool floats = tl_dtype_is_float(t) && tl_dtype_eq(a->dtype, b->dtype);
  /* Both constant: fold. */
  if (a->kind == TL_EXPR_INT && b->kind == TL_EXPR_INT && ints) {
    int64_t r;
    if (tl_int_binop_fold(op, t, a->u.ival, b->u.ival, &r)) return tl_ir_int(m, loc, rt, r);
  } else if (a->kind == TL_EXPR_FLOAT && b->kind == TL_EXPR_FLOAT && floats) {
    double r;
    bool isb;
    if (fold_float(op, a->u.fval, b->u.fval, &r, &isb))
      return isb ? tl_ir_int(m, loc, rt, r != 0) : tl_ir_float(m, loc, rt, r);
  }
  /* Identities (one side constant). */
  bool arith = (ints && t.code != TL_TYPE_BOOL) || floats;
  if (arith) {
    switch (op) {
    case TL_OP_ADD:
      if (const_is(b, 0)) return a;
      if (const_is(a, 0)) return b;
      break;
    case TL_OP_SUB:
      if (const_is(b, 0)) return a;
      break;
    case TL_OP_MUL:
      if (const_is(b, 1)) return a;
      if (const_is(a, 1)) return b;
      if (ints && const_is(b, 0)) return b;
      if (ints && const_is(a, 0)) return a;
      break;
    case TL_OP_DIV:
      if (const_is(b, 1)) return a;
      break;
    case TL_OP_FLOORDIV:
      if (ints && const_is(b, 1)) return a;
      break;
    case TL_OP_FLOORMOD:
      if (ints && const_is(b, 1)) return tl_ir_int(m, loc, t, 0);
      break;
    default: break;
    }
  }
  tl_expr *e = tl_ir_expr(m, loc, TL_EXPR_BINARY, rt);
  if (!e) return NULL;
  e->u.bin.op = op;
  e->u.bin.a = a;
  e->u.bin.b = b;
  return e;
}

tl_expr *tl_ir_unary(tl_module *m, tl_loc loc, tl_unop op, tl_expr *a) {
  if (!a) return NULL;
  if (op == TL_OP_NOT) {
    a = to_bool(m, loc, a);
    if (!a) return NULL;
    if (a->kind == TL_EXPR_INT) return tl_ir_int(m, loc, TL_BOOL, !a->u.ival);
  } else {
    if (a->dtype.code == TL_TYPE_BOOL && op == TL_OP_NEG) {
      a = tl_ir_cast(m, loc, TL_INT32, a);
      if (!a) return NULL;
    }
    if (a->kind == TL_EXPR_INT) {
      int64_t v = a->u.ival;
      if (op == TL_OP_BITNOT) return tl_ir_int(m, loc, a->dtype, ~v);
      if (a->dtype.code == TL_TYPE_UINT) return tl_ir_int(m, loc, a->dtype, (int64_t)(0 - (uint64_t)v));
      if (v != INT64_MIN) return tl_ir_int(m, loc, a->dtype, -v);
    } else if (a->kind == TL_EXPR_FLOAT && op == TL_OP_NEG) {
      return tl_ir_float(m, loc, a->dtype, -a->u.fval);
    }
  }
  tl_expr *e = tl_ir_expr(m, loc, TL_EXPR_UNARY, a->dtype);
  if (!e) return NULL;
  e->u.un.op = op;
  e->u.un.a = a;
  return e;
}

tl_expr *tl_ir_select(tl_module *m, tl_loc loc, tl_expr *c, tl_expr *t, tl_expr *f) {
  if (!c || !t || !f) return NULL;
  c = to_bool(m, loc, c);
  if (!c) return NULL;
  unify(m, loc, &t, &f);
  if (!t || !f) return NULL;
  if (c->kind == TL_EXPR_INT) return c->u.ival ? t : f;
  tl_expr *e = tl_ir_expr(m, loc, TL_EXPR_SELECT, t->dtype);
  if (!e) return NULL;
  e->u.sel.cond = c;
  e->u.sel.t = t;
  e->u.sel.f = f;
  return e;
}

tl_expr *tl_ir_load(tl_module *m, tl_loc loc, tl_buffer *b, int n, tl_expr **idx) {
  if (!b) return NULL;
  for (int i = 0; i < n; i++)
    if (!idx || !idx[i]) return NULL;
  tl_expr *e = tl_ir_expr(m, loc, TL_EXPR_LOAD, b->dtype);
  if (!e) return NULL;
  e->u.load.buffer = b;
  e->u.load.n = n < 0 ? 0 : n;
  if (n > 0 && !(e->u.load.indices = copy_exprs(m, n, idx))) return NULL;
  return e;
}

/* Folds a call whose (unified) arguments are all constant; NULL: no fold. */
static tl_expr *fold_call(tl_module *m, tl_loc loc, int op, int n, tl_expr **args) {
  for (int i = 0; i < n; i++)
    if (!is_const(args[i])) return NULL;
  tl_expr *a = n > 0 ? args[0] : NULL, *b = n > 1 ? args[1] : NULL;
  if (op == TL_INTRIN_ABS && a) {
    if (a->kind == TL_EXPR_FLOAT) return tl_ir_float(m, loc, a->dtype, fabs(a->u.fval));
    if (a->dtype.code == TL_TYPE_UINT || a->u.ival >= 0) return a;
    if (a->u.ival != INT64_MIN) return tl_ir_int(m, loc, a->dtype, -a->u.ival);
    return NULL;
  }
  if (!a || !b || a->kind != TL_EXPR_INT || b->kind != TL_EXPR_INT || n != 2) return NULL;
  tl_dtype t = a->dtype;
  int64_t r;
  if (op == TL_INTRIN_CEILDIV) {
    /* ceil(a / b) = (a + b - 1) // b for b > 0, computed without overflow */
    if (t.code == TL_TYPE_UINT) {
      uint64_t mask = t.bits >= 64 ? UINT64_MAX : (UINT64_C(1) << t.bits) - 1;
      uint64_t x = (uint64_t)a->u.ival & mask, y = (uint64_t)b->u.ival & mask;
      if (!y) return NULL;
      return tl_ir_int(m, loc, t, (int64_t)(x / y + (x % y != 0)));
    }
    int64_t x = a->u.ival, y = b->u.ival;
    if (y == 0 || (x == INT64_MIN && y == -1)) return NULL;
    r = x / y;
    if (x % y != 0 && ((x < 0) == (y < 0))) r++;
    return tl_ir_int(m, loc, t, r);
  }
  if (op == TL_INTRIN_TRUNCDIV || op == TL_INTRIN_TRUNCMOD) {
    int64_t x = a->u.ival, y = b->u.ival;
    if (t.code == TL_TYPE_UINT) {
      if (!tl_int_binop_fold(op == TL_INTRIN_TRUNCDIV ? TL_OP_DIV : TL_OP_FLOORMOD, t, x, y, &r)) return NULL;
      return tl_ir_int(m, loc, t, r);
    }
    if (y == 0 || (x == INT64_MIN && y == -1)) return NULL;
    return tl_ir_int(m, loc, t, op == TL_INTRIN_TRUNCDIV ? x / y : x % y);
  }
  return NULL;
}

tl_expr *tl_ir_call(tl_module *m, tl_loc loc, int intrin, int n, tl_expr **args) {
  if (intrin < 0 || intrin >= tl_num_intrinsics || n < 0) return NULL;
  for (int i = 0; i < n; i++)
    if (!args || !args[i]) return NULL;
  /* Calls that have an expression form of their own. */
  if (n == 3 && intrin == TL_INTRIN_IF_THEN_ELSE) return tl_ir_select(m, loc, args[0], args[1], args[2]);
  if (n == 2 && (intrin == TL_INTRIN_MIN || intrin == TL_INTRIN_MAX || intrin == TL_INTRIN_FLOORDIV ||
                 intrin == TL_INTRIN_FLOORMOD)) {
    tl_binop op = intrin == TL_INTRIN_MIN        ? TL_OP_MIN
                  : intrin == TL_INTRIN_MAX      ? TL_OP_MAX
                  : intrin == TL_INTRIN_FLOORDIV ? TL_OP_FLOORDIV
                                                 : TL_OP_FLOORMOD;
    return tl_ir_binary(m, loc, op, args[0], args[1]);
  }
  tl_expr **cp = copy_exprs(m, n, args);
  if (n > 0 && !cp) return NULL;
  const tl_intrinsic *in = &tl_intrinsics[intrin];
  if (in->ret == TL_RET_DTYPE_ARG0 && n == 1 && cp[0]->kind == TL_EXPR_STRING) {
    tl_dtype t;
    if (tl_dtype_parse(cp[0]->u.str, &t) && t.lanes == 1) {
      if (tl_dtype_is_float(t)) {
        double v = INFINITY;
        if (intrin != TL_INTRIN_INFINITY) {
          /* largest finite value of the format */
          int p = t.code == TL_TYPE_BFLOAT                     ? 8
                  : (t.bits == 16 || t.code == TL_TYPE_TFLOAT) ? 11
                  : t.bits == 32                               ? 24
                                                               : 53;
          int emax = (t.bits == 16 && t.code == TL_TYPE_FLOAT) ? 15 : t.bits == 64 ? 1023 : 127;
          v = ldexp(2.0 - ldexp(1.0, 1 - p), emax);
          if (tl_dtype_is_fp8(t)) v = t.code == TL_TYPE_FLOAT8_E4M3 ? 448.0 : 57344.0;
          if (intrin == TL_INTRIN_MIN_VALUE) v = -v;
        }
        return tl_ir_float(m, loc, t, v);
      }
      if (is_intlike(t) && intrin != TL_INTRIN_INFINITY) {
        int64_t v;
        if (t.code == TL_TYPE_BOOL) v = intrin == TL_INTRIN_MAX_VALUE;
        else if (t.code == TL_TYPE_UINT)
          v = intrin == TL_INTRIN_MIN_VALUE ? 0 : (int64_t)(t.bits >= 64 ? UINT64_MAX : (UINT64_C(1) << t.bits) - 1);
        else if (intrin == TL_INTRIN_MAX_VALUE)
          v = t.bits >= 64 ? INT64_MAX : (int64_t)((UINT64_C(1) << (t.bits - 1)) - 1);
        else v = t.bits >= 64 ? INT64_MIN : -(int64_t)(UINT64_C(1) << (t.bits - 1));
        return tl_ir_int(m, loc, t, v);
      }
    }
  }
  if (in->ret == TL_RET_FLOAT_ARG0 && n > 0 && !tl_dtype_is_float(cp[0]->dtype) &&
      class_of(cp[0]->dtype) != CLS_OTHER) {
    cp[0] = tl_ir_cast(m, loc, TL_FLOAT32, cp[0]);
    if (!cp[0]) return NULL;
  }
  if (tl_intrinsics[intrin].unify && n > 1) {
    for (int i = 1; i < n; i++) {
      unify(m, loc, &cp[0], &cp[i]);
      if (!cp[0] || !cp[i]) return NULL;
    }
    for (int i = 1; i < n; i++) {
      cp[i] = tl_ir_cast(m, loc, cp[0]->dtype, cp[i]);
      if (!cp[i]) return NULL;
    }
  }
  tl_expr *f = fold_call(m, loc, intrin, n, cp);
  if (f) return f;
  if (intrin == TL_INTRIN_CEILDIV && n == 2 && const_is(cp[1], 1) && is_intlike(cp[0]->dtype)) return cp[0];
  tl_dtype t;
  switch (in->ret) {
  case TL_RET_ARG0: t = n > 0 ? cp[0]->dtype : TL_INT32; break;
  case TL_RET_ARG1: t = n > 1 ? cp[1]->dtype : TL_INT32; break;
  case TL_RET_ARG2: t = n > 2 ? cp[2]->dtype : TL_INT32; break;
  case TL_RET_INT32: t = TL_INT32; break;
  case TL_RET_BOOL: t = TL_BOOL; break;
  case TL_RET_FLOAT_ARG0: t = n > 0 ? cp[0]->dtype : TL_FLOAT32; break;
  case TL_RET_VOID: t = TL_VOID; break;
  case TL_RET_DTYPE_ARG0:
    if (!(n > 0 && cp[0]->kind == TL_EXPR_STRING && tl_dtype_parse(cp[0]->u.str, &t))) t = TL_FLOAT32;
    break;
  default: t = TL_INT32; break;
  }
  if (in->ret == TL_RET_BOOL && n > 0) t.lanes = cp[0]->dtype.lanes;
  tl_expr *e = tl_ir_expr(m, loc, TL_EXPR_CALL, t);
  if (!e) return NULL;
  e->u.call.op = intrin;
  e->u.call.n = n;
  e->u.call.args = cp;
  return e;
}
