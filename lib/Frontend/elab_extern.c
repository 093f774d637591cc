/* Elaborator: T.import_source and T.call_extern of the device functions this
 * compiler knows (docs/language.md "Known device functions").
 *
 * TileLang's dequantize examples bring CUDA C++ into a kernel with
 * T.import_source(src) and call one of its functions with
 *     T.call_extern(name, T.access_ptr(src_local, "r"), T.access_ptr(dst_local, "w")[, N], dtype=...)
 * on per-thread local buffers.  This compiler compiles no CUDA C++.  Instead
 * it keeps, here, the one table of the device functions it knows: each entry
 * is the function's name, its signature (source bytes, destination dtype,
 * what N counts) and its meaning, written as tile-IR expressions of the
 * source bytes; a call elaborates into the stores of the destination
 * elements, so every later pass, both CPU models and the code generator see
 * ordinary loads, bit operations and stores.
 *
 * A source is known when it is one of TileLang's texts that define those
 * functions (recognised by a fingerprint: FNV-1a 64 of the text less its
 * white space, so a changed function is never taken for the known one) or
 * this project's marker `tilelang_ptx.extern:<key>` (what tilelang_ptx's
 * tilelang.quantize helpers return).  T.import_source(None) does nothing, as
 * in TileLang.  Refused, each a located error saying why: an unknown source,
 * a function name not in the table, a known function whose source the
 * prim_func has not imported, operands other than 1-D local buffers of the
 * entry's dtypes with room for what the call reads and writes.
 *
 * The meanings (bit i of a byte or word counts from its least significant
 * bit; the source is read as bytes, a 32-bit word being 4 bytes in memory
 * order, little-endian):
 *  - decode_fp4_to_bf16_twiddling(src, dst, N=8): for each group g < N, the
 *    bytes q0..q3 = src[4g..4g+3] hold 8 fp4 (e2m1) values in TileLang's
 *    twiddled order: output k < 4 comes from the 16-bit value h = q0<<8 | q1,
 *    output k >= 4 from h = q2<<8 | q3; for j = k % 4 the (sign, e1, e0, m)
 *    bits of the value are the bits (15,8,7,6), (12,5,4,3), (9,2,1,0),
 *    (14,11,10,13) of h; dst[8g + k] = the e2m1 value as bfloat16, exact:
 *    (-1)^s * (e ? 2^(e-1) * (1 + m/2) : m/2).
 *  - decode_i4u_to_f16(src, dst, N=8) / decode_i4s_to_f16: w = the word of
 *    src[0..3]; for i < N/2: dst[2i] = the nibble of w at bit 4i, dst[2i+1]
 *    the nibble at bit 16 + 4i, as float16 (the s variant subtracts 8). */
#include <string.h>

#include "Frontend/elab_impl.h"

#define U32 TL_DT(TL_TYPE_UINT, 32)

/* ------------------------------------------------------------ sources */

/* Known sources: bit i of E->extern_sources is kSources[i] imported. */
static const struct {
  const char *key;      /* the marker is "tilelang_ptx.extern:" key */
  uint64_t fingerprint; /* of TileLang's text (tl_el_extern_fingerprint) */
  const char *what;
} kSources[] = {
    {"fp4_to_bf16_twiddling", 0x9e356c8ecd68147eULL,
     "TileLang's fp4 -> bfloat16 twiddling decode (dequantize_gemm/quantize/mxfp.py)"},
    {"i4_to_f16", 0xd687458ba9c4d015ULL, "TileLang's int4 -> float16 LOP3 decode (dequantize_gemm/quantize/lop3.py)"},
};

enum { SRC_FP4_BF16 = 0, SRC_I4_F16 = 1, NSOURCES = 2 };

uint64_t tl_el_extern_fingerprint(const char *s) {
  uint64_t h = 0xcbf29ce484222325ULL;
  for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
    if (strchr(" \t\n\r\v\f", *p)) continue;
    h = (h ^ *p) * 0x100000001b3ULL;
  }
  return h;
}

/* The index of the known source text s, else -1. */
static int source_index(const char *s) {
  static const char marker[] = "tilelang_ptx.extern:";
  const char *b = s + strspn(s, " \t\n\r");
  size_t n = strlen(b);
  while (n && strchr(" \t\n\r", b[n - 1])) n--;
  uint64_t fp = tl_el_extern_fingerprint(s);
  for (int i = 0; i < NSOURCES; i++) {
    size_t k = strlen(kSources[i].key);
    if (fp == kSources[i].fingerprint) return i;
    if (n == sizeof marker - 1 + k && !strncmp(b, marker, sizeof marker - 1) &&
        !strncmp(b + sizeof marker - 1, kSources[i].key, k))
      return i;
  }
  return -1;
}

/* ----------------------------------------------- expression helpers */

static tl_expr *u32(elab *E, tl_loc loc, int64_t v) { return chk(E, tl_ir_int(E->m, loc, U32, v)); }

static tl_expr *bin(elab *E, tl_loc loc, tl_binop op, tl_expr *a, tl_expr *b) {
  return a && b ? chk(E, tl_ir_binary(E->m, loc, op, a, b)) : NULL;
}

/* Bit p of the uint32 h (0 or 1). */
static tl_expr *bit(elab *E, tl_loc loc, tl_expr *h, int p) {
  return bin(E, loc, TL_OP_BITAND, bin(E, loc, TL_OP_SHR, h, u32(E, loc, p)), u32(E, loc, 1));
}

/* ------------------------------------------------------- the functions */

/* dst[8g + k] of decode_fp4_to_bf16_twiddling; q: the group's 4 bytes (uint32). */
static tl_expr *fp4_bf16_twiddling(elab *E, tl_loc loc, tl_expr *const q[4], int k) {
  static const int pos[4][4] = {{15, 8, 7, 6}, {12, 5, 4, 3}, {9, 2, 1, 0}, {14, 11, 10, 13}};
  const int *p = pos[k % 4];
  int hi = k < 4 ? 0 : 2;
  tl_expr *h = bin(E, loc, TL_OP_BITOR, bin(E, loc, TL_OP_SHL, q[hi], u32(E, loc, 8)), q[hi + 1]);
  tl_expr *s = bit(E, loc, h, p[0]), *m = bit(E, loc, h, p[3]);
  tl_expr *e =
      bin(E, loc, TL_OP_BITOR, bin(E, loc, TL_OP_SHL, bit(E, loc, h, p[1]), u32(E, loc, 1)), bit(E, loc, h, p[2]));
  /* normal: exponent e - 1 + 127, mantissa m at bf16 bit 6; e == 0: m * 0.5 (0x3F00) */
  tl_expr *normal =
      bin(E, loc, TL_OP_BITOR, bin(E, loc, TL_OP_SHL, bin(E, loc, TL_OP_ADD, e, u32(E, loc, 126)), u32(E, loc, 7)),
          bin(E, loc, TL_OP_SHL, m, u32(E, loc, 6)));
  tl_expr *sub = bin(E, loc, TL_OP_MUL, m, u32(E, loc, 0x3F00));
  tl_expr *nz = bin(E, loc, TL_OP_NE, e, u32(E, loc, 0));
  tl_expr *mag = nz && normal && sub ? chk(E, tl_ir_select(E->m, loc, nz, normal, sub)) : NULL;
  tl_expr *bits = bin(E, loc, TL_OP_BITOR, bin(E, loc, TL_OP_SHL, s, u32(E, loc, 15)), mag);
  bits = bits ? chk(E, tl_ir_cast(E->m, loc, TL_DT(TL_TYPE_UINT, 16), bits)) : NULL;
  tl_expr *args[2] = {chk(E, tl_ir_string(E->m, loc, "bfloat16")), bits};
  return args[0] && bits ? chk(E, tl_ir_call(E->m, loc, TL_INTRIN_REINTERPRET, 2, args)) : NULL;
}

/* dst[k] of decode_i4{u,s}_to_f16: the nibble x of the word at bit 4(k/2) (+16 for odd k), as TileLang
 * computes it: the float16 1024 + x (bits 0x6400 | x) minus 1024 (1032 for the s variant), exact. */
static tl_expr *i4_f16(elab *E, tl_loc loc, tl_expr *const q[4], int k, bool is_signed) {
  int at = 4 * (k / 2) + (k % 2 ? 16 : 0);
  tl_expr *x = bin(E, loc, TL_OP_BITAND, bin(E, loc, TL_OP_SHR, q[at / 8], u32(E, loc, at % 8)), u32(E, loc, 15));
  x = bin(E, loc, TL_OP_BITOR, x, u32(E, loc, 0x6400));
  x = x ? chk(E, tl_ir_cast(E->m, loc, TL_DT(TL_TYPE_UINT, 16), x)) : NULL;
  tl_expr *args[2] = {chk(E, tl_ir_string(E->m, loc, "float16")), x};
  tl_expr *h = args[0] && x ? chk(E, tl_ir_call(E->m, loc, TL_INTRIN_REINTERPRET, 2, args)) : NULL;
  return bin(E, loc, TL_OP_SUB, h, chk(E, tl_ir_float(E->m, loc, TL_FLOAT16, is_signed ? 1032.0 : 1024.0)));
}
static tl_expr *i4u_f16(elab *E, tl_loc loc, tl_expr *const q[4], int k) { return i4_f16(E, loc, q, k, false); }
static tl_expr *i4s_f16(elab *E, tl_loc loc, tl_expr *const q[4], int k) { return i4_f16(E, loc, q, k, true); }

/* The known device functions.  N counts groups of 4 source bytes and
 * outs_per_group outputs (n_groups), or outputs of one group of 4 bytes. */
typedef struct extern_fn {
  const char *name;
  int source;    /* kSources index */
  tl_dtype dst;  /* destination dtype (the source: 8-bit integers) */
  bool n_groups; /* N counts groups; else N counts outputs of one group */
  int n_min, n_max, n_step, outs_per_group;
  tl_expr *(*elem)(elab *E, tl_loc loc, tl_expr *const q[4], int k);
} extern_fn;

static const extern_fn kFns[] = {
    {"decode_fp4_to_bf16_twiddling", SRC_FP4_BF16, TL_DT(TL_TYPE_BFLOAT, 16), true, 1, 16, 1, 8, fp4_bf16_twiddling},
    {"decode_i4u_to_f16", SRC_I4_F16, TL_DT(TL_TYPE_FLOAT, 16), false, 2, 8, 2, 8, i4u_f16},
    {"decode_i4s_to_f16", SRC_I4_F16, TL_DT(TL_TYPE_FLOAT, 16), false, 2, 8, 2, 8, i4s_f16},
};

static const extern_fn *find_fn(const char *name) {
  for (size_t i = 0; i < sizeof kFns / sizeof kFns[0]; i++)
    if (!strcmp(kFns[i].name, name)) return &kFns[i];
  return NULL;
}

/* ------------------------------------------------------------ statements */

bool tl_el_import_source(elab *E, const tl_ast_expr *x) {
  const char *fn = "T.import_source";
  bool bad = false;
  if (!check_kws(E, x, fn, (const char *const[]){"source", NULL}) || !check_arity(E, x, fn, 0, 1)) return false;
  const tl_ast_expr *a = get_arg(E, x, 0, "source", fn, &bad);
  if (bad) return false;
  val *v = a ? eval(E, a) : NULL;
  if (a && !v) return false;
  if (!v || v->k == V_NONE) return true; /* TileLang: nothing to import */
  if (v->k != V_STR) {
    err_val(E, a->loc, v, "%s takes the source text (a string) or None, got %s", fn, describe(E, v));
    return false;
  }
  int i = source_index(v->u.s);
  if (i < 0) { /* at the name, as T.NAME's other refusals */
    err(E, x->u.call.func->u.attr.name_loc,
        "%s is not supported for this source: this compiler does not compile CUDA C++; it knows the device "
        "functions of TileLang's dequantize helpers (fp4 -> bfloat16 twiddling, int4 -> float16 LOP3), and "
        "this text is none of them (fingerprint 0x%016llx)",
        fn, (unsigned long long)tl_el_extern_fingerprint(v->u.s));
    return false;
  }
  E->extern_sources |= 1u << i;
  return true;
}

/* The buffer and constant element offset of T.access_ptr(base, mode[, offset=]). */
static tl_buffer *access_ptr(elab *E, const tl_ast_expr *a, const char *fn, const char *role, int64_t *off) {
  const char *pfn = "T.access_ptr";
  if (!a || t_callee(E, a) == NULL || strcmp(t_callee(E, a), "access_ptr")) {
    err(E, a ? a->loc : (tl_loc){0}, "%s: the %s operand must be T.access_ptr(<local buffer>, ...)", fn, role);
    return NULL;
  }
  bool bad = false;
  if (!check_kws(E, a, pfn, (const char *const[]){"access_type", "offset", NULL}) || !check_arity(E, a, pfn, 1, 2))
    return NULL;
  const tl_ast_expr *b = get_arg(E, a, 0, NULL, pfn, &bad), *o = get_arg(E, a, -1, "offset", pfn, &bad);
  val *bv = b && !bad ? eval(E, b) : NULL;
  if (!bv) return NULL;
  *off = 0;
  tl_buffer *buf = NULL;
  if (bv->k == V_BUFFER) buf = bv->u.buf;
  else if (bv->k == V_BUFREF && bv->u.ref.n == 1 && !bv->u.ref.items[0].is_slice &&
           bv->u.ref.items[0].min->kind == TL_EXPR_INT) { /* buf[i]: the element's address */
    buf = bv->u.ref.buf;
    *off = bv->u.ref.items[0].min->u.ival;
  }
  if (!buf || buf->scope != TL_SCOPE_LOCAL || buf->ndim != 1 || buf->shape[0]->kind != TL_EXPR_INT) {
    err(E, b->loc, "%s: the %s operand must be a 1-D T.alloc_local buffer of constant size (or one element of it)", fn,
        role);
    return NULL;
  }
  if (o) {
    val *ov = eval(E, o);
    int64_t k;
    if (!ov || !to_const_int(E, ov, o->loc, "T.access_ptr's offset", &k)) return NULL;
    *off += k;
  }
  return buf;
}

/* N, the call's optional last argument (f's default 8), checked against f's range. */
static bool extern_n(elab *E, const tl_ast_expr *a, const extern_fn *f, tl_loc loc, int64_t *n) {
  *n = 8;
  val *v = a ? eval(E, a) : NULL;
  if (a && (!v || !to_const_int(E, v, a->loc, "N", n))) return false;
  if (*n < f->n_min || *n > f->n_max || (*n - f->n_min) % f->n_step) {
    err(E, a ? a->loc : loc, "T.call_extern('%s'): N = %lld is not supported (%d..%d%s)", f->name, (long long)*n,
        f->n_min, f->n_max, f->n_step > 1 ? ", even" : "");
    return false;
  }
  return true;
}

static bool check_room(elab *E, tl_loc loc, const char *fn, const char *role, tl_buffer *b, int64_t off, int64_t need) {
  int64_t size = b->shape[0]->u.ival;
  if (off >= 0 && off + need <= size) return true;
  err(E, loc, "%s: the %s operand '%s' needs elements %lld..%lld, and it has %lld", fn, role, b->name, (long long)off,
      (long long)(off + need - 1), (long long)size);
  return false;
}

static bool check_dtype(elab *E, tl_loc loc, const char *fn, const char *role, tl_buffer *b, bool bytes, tl_dtype t) {
  bool ok = bytes ? tl_dtype_is_int(b->dtype) && b->dtype.bits == 8 && b->dtype.lanes == 1 : tl_dtype_eq(b->dtype, t);
  if (ok) return true;
  err(E, loc, "%s: the %s operand '%s' is %s; it must be %s", fn, role, b->name, tl_dtype_name(b->dtype),
      bytes ? "int8 or uint8" : tl_dtype_name(t));
  return false;
}

/* The stores of one call of f: src bytes from so, dst elements from do_. */
static bool expand(elab *E, const extern_fn *f, tl_loc loc, tl_buffer *src, int64_t so, tl_buffer *dst, int64_t do_,
                   int64_t n, stmt_vec *out) {
  int64_t groups = f->n_groups ? n : 1, outs = f->n_groups ? f->outs_per_group : n;
  for (int64_t g = 0; g < groups; g++) {
    tl_expr *q[4];
    for (int b = 0; b < 4; b++) {
      tl_expr *idx = lit_int(E, loc, so + 4 * g + b);
      tl_expr *ld = idx ? chk(E, tl_ir_load(E->m, loc, src, 1, &idx)) : NULL;
      ld = ld ? chk(E, tl_ir_cast(E->m, loc, U32, ld)) : NULL;
      if (!(q[b] = bin(E, loc, TL_OP_BITAND, ld, u32(E, loc, 0xFF)))) return false;
    }
    for (int k = 0; k < outs; k++) {
      tl_expr *value = f->elem(E, loc, q, k), *idx = lit_int(E, loc, do_ + g * outs + k);
      tl_stmt *s = value && idx ? tl_ir_stmt(E->m, loc, TL_STMT_STORE) : NULL;
      tl_expr **ix = s ? malloc_ir(E, sizeof *ix) : NULL;
      if (!ix) return value && idx ? oom(E), false : false;
      ix[0] = idx;
      s->u.store.buffer = dst;
      s->u.store.n = 1;
      s->u.store.indices = ix;
      s->u.store.value = value;
      if (!tl_vec_push(out, s)) return oom(E), false;
    }
  }
  return true;
}

bool tl_el_call_extern(elab *E, const tl_ast_expr *x, tl_loc loc, stmt_vec *out) {
  const char *fn = "T.call_extern";
  if (!check_kws(E, x, fn, (const char *const[]){"dtype", NULL})) return false;
  int first = find_kw(x, "dtype") ? 0 : 1; /* T.call_extern(dtype, name, ...) without the keyword */
  if (!check_arity(E, x, fn, first + 3, first + 4)) return false;
  const tl_ast_expr *na = x->u.call.args[first];
  val *nv = eval(E, na);
  if (!nv) return false;
  if (nv->k != V_STR) {
    err_val(E, na->loc, nv, "%s: the function name must be a string, got %s", fn, describe(E, nv));
    return false;
  }
  const extern_fn *f = find_fn(nv->u.s);
  if (!f) {
    err(E, na->loc,
        "%s('%s') is not supported: this compiler does not compile CUDA C++, and '%s' is not one of the device "
        "functions it knows (decode_fp4_to_bf16_twiddling, decode_i4u_to_f16, decode_i4s_to_f16)",
        fn, nv->u.s, nv->u.s);
    return false;
  }
  if (!(E->extern_sources & (1u << f->source))) {
    err(E, na->loc, "%s('%s'): the prim_func has not imported its source (T.import_source of %s) before the call", fn,
        f->name, kSources[f->source].what);
    return false;
  }
  int64_t so, do_, n;
  tl_buffer *src = access_ptr(E, x->u.call.args[first + 1], fn, "source", &so);
  tl_buffer *dst = src ? access_ptr(E, x->u.call.args[first + 2], fn, "destination", &do_) : NULL;
  if (!dst || !extern_n(E, x->u.call.nargs > first + 3 ? x->u.call.args[first + 3] : NULL, f, loc, &n)) return false;
  tl_loc sl = x->u.call.args[first + 1]->loc, dl = x->u.call.args[first + 2]->loc;
  int64_t groups = f->n_groups ? n : 1, outs = f->n_groups ? n * f->outs_per_group : n;
  if (!check_dtype(E, sl, fn, "source", src, true, f->dst) ||
      !check_dtype(E, dl, fn, "destination", dst, false, f->dst) ||
      !check_room(E, sl, fn, "source", src, so, 4 * groups) || !check_room(E, dl, fn, "destination", dst, do_, outs))
    return false;
  return expand(E, f, loc, src, so, dst, do_, n, out);
}
