/* Elaborator: the parts of TVM's Python API that TileLang's kernels and their
 * compile-time helpers call (see elaborate.c for the algorithm):
 *   - the TIR expression builders of `from tvm import tirx` / `tvm.tir`
 *     (tirx.const, tirx.reinterpret, tirx.Cast, tirx.Select, tirx.bitwise_and,
 *     tirx.shift_right, ...), with TVM's meaning (python/tvm/tir/op.py,
 *     expr.py): each builds the same tile-IR expression as the operator or
 *     the T.* function of the same meaning; TileLang's T.bitwise_* and
 *     T.shift_* are the same functions;
 *   - tvm.DataType(dtype) (also tilelang.DataType): the dtype itself, whose
 *     .bits and .lanes the elaborator knows;
 *   - TVMScript's frame form of T.thread_binding, assigned inside a T.Kernel.
 * A name of those namespaces that is not listed here stays an opaque value
 * (tirx.PrimExpr in a parameter annotation is harmless); calling one is a
 * located "not supported yet".  T.call_extern and T.import_source take CUDA
 * C++ source, which this compiler cannot compile: as statements they are
 * elab_extern.c's (the device functions it knows); elsewhere, and
 * T.call_pure_extern anywhere, a located error says so. */
#include "Frontend/elab_impl.h"

/* tirx.NAME with the T function (or operator) that gives its meaning. */
static const struct {
  const char *name, *t_name, *op;
} kTirx[] = {
    {"const", NULL, NULL},
    {"IntImm", NULL, NULL},
    {"FloatImm", NULL, NULL},
    {"reinterpret", "reinterpret", NULL},
    {"Cast", "Cast", NULL},
    {"Select", "Select", NULL},
    {"if_then_else", "if_then_else", NULL},
    {"max", "max", NULL},
    {"min", "min", NULL},
    {"bitwise_and", NULL, "&"},
    {"bitwise_or", NULL, "|"},
    {"bitwise_xor", NULL, "^"},
    {"bitwise_not", NULL, "~"},
    {"shift_left", NULL, "<<"},
    {"shift_right", NULL, ">>"},
};

static int tirx_index(const char *name) {
  for (size_t i = 0; i < sizeof kTirx / sizeof kTirx[0]; i++)
    if (!strcmp(kTirx[i].name, name)) return (int)i;
  return -1;
}

bool tl_el_is_tvm_tir(const val *v) {
  if (v->k != V_OPAQUE || !v->u.op.desc) return false;
  const char *d = v->u.op.desc;
  if (!strncmp(d, "tilelang.", 9)) d += 9;
  return !strcmp(d, "tvm.tirx") || !strcmp(d, "tvm.tir");
}

bool tl_el_is_tvm_datatype(const val *v) {
  if (v->k != V_OPAQUE || !v->u.op.desc) return false;
  const char *d = v->u.op.desc;
  return !strcmp(d, "tvm.DataType") || !strcmp(d, "tilelang.DataType") || !strcmp(d, "tilelang.tvm.DataType");
}

val *tl_el_tirx_member(elab *E, const char *name) {
  if (tirx_index(name) >= 0) {
    val *f = mk(E, V_FUNC);
    if (f) f->u.fname = tprintf(E, "tirx.%s", name);
    return f;
  }
  return mk_opaque(E, tprintf(E, "tvm.tirx.%s", name), "tvm");
}

bool tl_el_is_bit_op(const char *name) {
  int i = tirx_index(name);
  return i >= 0 && kTirx[i].op;
}

/* tirx.const(value, dtype=None) / tirx.IntImm(dtype, value) / FloatImm:
 * a literal of dtype (None: int32 for an int, float32 for a float). */
static val *typed_const(elab *E, const char *name, const tl_ast_expr *x, const char *fn) {
  static const char *const const_params[] = {"value", "dtype", NULL};
  static const char *const imm_params[] = {"dtype", "value", NULL};
  bool imm = name[0] != 'c';
  const tl_ast_expr *a[2];
  if (!bind_args(E, x, fn, imm ? imm_params : const_params, imm ? 2 : 1, a)) return NULL;
  const tl_ast_expr *vx = a[imm ? 1 : 0], *dx = a[imm ? 0 : 1];
  val *v = eval(E, vx);
  if (!v) return NULL;
  tl_dtype dt = v->k == V_FLOAT ? TL_FLOAT32 : v->k == V_BOOL ? TL_BOOL : TL_INT32;
  val *dv = dx ? eval(E, dx) : NULL;
  if (dx && (!dv || (dv->k != V_NONE && !to_dtype(E, dv, dx->loc, &dt)))) return NULL;
  if (!is_num(v)) {
    err_val(E, vx->loc, v, "%s expects a number, got %s", fn, describe(E, v));
    return NULL;
  }
  if (tl_dtype_is_float(dt)) return mk_expr(E, chk(E, tl_ir_float(E->m, x->loc, dt, as_f(v))));
  if (v->k == V_FLOAT) {
    err(E, vx->loc, "%s: the float %g is not a value of %s", fn, v->u.f, tl_dtype_name(dt));
    return NULL;
  }
  int64_t i = as_i(v);
  if (dt.code == TL_TYPE_BOOL) return mk_expr(E, chk(E, tl_ir_int(E->m, x->loc, dt, i != 0)));
  bool ok = dt.code == TL_TYPE_UINT
                ? i >= 0 && (dt.bits >= 63 || i < (INT64_C(1) << dt.bits))
                : dt.bits >= 64 || (i >= -(INT64_C(1) << (dt.bits - 1)) && i < (INT64_C(1) << (dt.bits - 1)));
  if (!tl_dtype_is_int(dt) || !ok) {
    err_val(E, vx->loc, v, "%s: %lld is not a value of %s", fn, (long long)i, tl_dtype_name(dt));
    return NULL;
  }
  return mk_expr(E, chk(E, tl_ir_int(E->m, x->loc, dt, i)));
}

/* bitwise_and(x, y) ... shift_right(x, y), bitwise_not(x): the operator. */
val *tl_el_call_bit_op(elab *E, const char *name, const tl_ast_expr *x, const char *fn) {
  const char *op = kTirx[tirx_index(name)].op;
  int n = op[0] == '~' ? 1 : 2;
  if (!check_kws(E, x, fn, NULL) || !check_arity(E, x, fn, n, n)) return NULL;
  val *a = eval(E, x->u.call.args[0]);
  if (!a) return NULL;
  if (n == 1) return unop(E, op, a, x->loc);
  val *b = eval(E, x->u.call.args[1]);
  return b ? binop(E, op, a, b, x->loc) : NULL;
}

const char *tl_el_tirx_alias(const char *name) {
  int i = tirx_index(name);
  return i >= 0 ? kTirx[i].t_name : NULL;
}

val *tl_el_call_tirx(elab *E, const char *name, const tl_ast_expr *x) {
  const char *fn = tprintf(E, "tirx.%s", name);
  if (kTirx[tirx_index(name)].op) return tl_el_call_bit_op(E, name, x, fn);
  return typed_const(E, name, x, fn);
}

val *tl_el_call_datatype(elab *E, const val *fv, const tl_ast_expr *x) {
  const char *fn = fv->u.op.desc;
  if (!check_kws(E, x, fn, NULL) || !check_arity(E, x, fn, 1, 1)) return NULL;
  val *v = eval(E, x->u.call.args[0]);
  tl_dtype dt;
  return v && to_dtype(E, v, x->u.call.args[0]->loc, &dt) ? mk_dtype(E, dt) : NULL;
}

bool tl_el_refuse_extern(elab *E, const char *name, tl_loc loc) {
  bool source = !strcmp(name, "import_source");
  if (!source && strcmp(name, "call_extern") && strcmp(name, "call_pure_extern")) return false;
  if (!strcmp(name, "call_pure_extern"))
    err(E, loc,
        "T.call_pure_extern is not supported yet: it calls an external function (CUDA C++), and this compiler "
        "does not compile CUDA C++ (write the function in TileLang, or take the program's path without it)");
  else
    err(E, loc,
        "T.%s is not supported yet outside a statement: this compiler does not compile CUDA C++; it takes only "
        "the device functions it knows, as the statement T.call_extern(name, T.access_ptr(src, \"r\"), "
        "T.access_ptr(dst, \"w\"), ...) after their T.import_source (docs/language.md)",
        name);
  return true;
}

/* kr = T.thread_binding([lo,] ext, thread="threadIdx.x|y|z") inside a T.Kernel (TVMScript's frame form, an
 * assignment that enters the loop, as TileLang's gemv examples write it beside T.Kernel(threads=(x, y))): the
 * thread coordinate of that dimension, as T.get_thread_binding(d); lo must be 0 and ext the kernel's extent
 * of that dimension (the launch binds the same thread index). */
val *tl_el_thread_binding_value(elab *E, const tl_ast_expr *x, const char *fn) {
  static const char *const kws[] = {"thread", NULL};
  if (!E->in_kernel) {
    err(E, x->loc, "%s can only be used as the iterator of a for loop, or assigned inside a T.Kernel", fn);
    return NULL;
  }
  if (!check_kws(E, x, fn, kws) || !check_arity(E, x, fn, 1, 2)) return NULL;
  const tl_ast_keyword *tk = find_kw(x, "thread");
  val *tv = tk ? eval(E, tk->value) : NULL;
  int d = tv && tv->k == V_STR && !strncmp(tv->u.s, "threadIdx.", 10) && tv->u.s[10] >= 'x' && tv->u.s[10] <= 'z' &&
                  !tv->u.s[11]
              ? tv->u.s[10] - 'x'
              : -1;
  if (d < 0) {
    err(E, tk ? tk->value->loc : x->loc,
        "%s as a value needs thread=\"threadIdx.x\", \"threadIdx.y\" or \"threadIdx.z\"", fn);
    return NULL;
  }
  int n = x->u.call.nargs;
  int64_t lo = 0, ext, want = E->nthread_dims ? 1 : (d ? 1 : E->kernel_threads);
  if (E->nthread_dims && d < E->nthread_dims)
    want = E->thread_dims[d]->kind == TL_EXPR_INT ? E->thread_dims[d]->u.ival : 0;
  if ((n == 2 && !to_const_int(E, eval(E, x->u.call.args[0]), x->u.call.args[0]->loc, "the start", &lo)) ||
      !to_const_int(E, eval(E, x->u.call.args[n - 1]), x->u.call.args[n - 1]->loc, "the extent", &ext))
    return NULL;
  if (lo != 0 || ext != want || want <= 0) {
    err(E, x->loc, "%s(%lld, %lld, thread=\"%s\") as a value must span the kernel's threadIdx.%c (0, %lld)", fn,
        (long long)lo, (long long)ext, tv->u.s, 'x' + d, (long long)want);
    return NULL;
  }
  if (E->nthread_dims) return mk_expr(E, tl_el_thread_coord(E, d, x->loc));
  tl_expr *zero = lit_int(E, x->loc, 0);
  return zero ? mk_expr(E, chk(E, tl_ir_call(E->m, x->loc, TL_INTRIN_GET_THREAD_BINDING, 1, &zero))) : NULL;
}
