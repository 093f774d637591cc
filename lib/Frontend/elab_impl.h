/* Internals of the elaborator shared by its files (internal to lib/Frontend):
 * the compile-time value model (val), scopes and the elaborator state
 * (elab), and the functions each file provides to the others (tl_el_
 * names behind short macros).  The files: elab_values.c (diagnostics,
 * values, -D definitions, scopes, conversions, constant arithmetic),
 * elab_expr.c (expressions, subscripts, calls), elab_stmt.c (statements,
 * allocations, loops, T.Kernel, tile ops, out_idx), elab_python.c
 * (comprehensions, f-strings, asserts, helper functions and lambdas, Python
 * builtins), elab_pycalls.c (list/dict methods, dict(k=v), star arguments
 * of itertools.product), elab_autotune.c (the @tilelang.autotune decorator),
 * elab_eager.c (the eager JIT style), elaborate.c (prim_funcs,
 * factories, the module, kernel selection and tl_frontend_parse; its first
 * comment describes the algorithm). */
#ifndef TL_ELAB_IMPL_H
#define TL_ELAB_IMPL_H

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "Frontend/ast.h"
#include "IR/tir.h"
#include "IR/visit.h"

#define MAX_DEPTH 200
#define MAX_CONST_LEN 100000 /* longest string / tuple built by constant * */

/* ================================================================ values */

typedef enum vkind {
  V_POISON, /* result of a failed definition: uses fail silently */
  V_NONE,
  V_BOOL,
  V_INT,
  V_FLOAT,
  V_STR,
  V_DTYPE,
  V_TUPLE,
  V_DICT,
  V_EXPR,       /* an IR expression */
  V_BUFFER,     /* a buffer (parameter or allocation) */
  V_BUFREF,     /* buffer[items]: a load, a region or a region corner */
  V_POLICY,     /* T.GemmWarpPolicy.X */
  V_NS,         /* a namespace: T, tilelang, T.GemmWarpPolicy, tilelang.jit */
  V_FUNC,       /* T.name (fname) or a Python builtin (builtin = true) */
  V_OPAQUE,     /* a host value (torch, numpy, a Python function) */
  V_PRIMFUNC,   /* an elaborated @T.prim_func */
  V_TENSORTYPE, /* T.Tensor(shape, dtype) */
  V_LAZY,       /* a module constant, evaluated on first use */
  V_PYFUNC,     /* a Python function or lambda run at compile time (elab_python.c) */
  V_LAYOUT      /* T.Layout(shape, fn): shape a tuple, fn a V_PYFUNC (elab_lang_ops.c) */
} vkind;

enum { NS_T, NS_TILELANG, NS_POLICY, NS_JIT };

typedef struct ritem {
  bool is_slice;
  tl_expr *min, *extent;
  tl_loc loc;
} ritem;

typedef struct val val;
typedef struct scope scope;
struct val {
  vkind k;
  bool is_list;            /* V_TUPLE: written as a list */
  bool is_obj;             /* V_DICT: an object whose attributes are the keys (elab_prelude.c) */
  bool builtin;            /* V_FUNC */
  const tl_define *origin; /* the -D that produced this value, or NULL */
  union {
    bool b;
    int64_t i;
    double f;
    const char *s; /* V_STR (NUL-terminated) */
    tl_dtype dt;
    struct {
      int n;
      val **items;
    } tup;
    struct {
      int n;
      val **keys, **vals;
      tl_loc *klocs, *vlocs;
    } dict;
    tl_expr *e;
    tl_buffer *buf;
    struct {
      tl_buffer *buf;
      int n;
      ritem *items;
      bool corner;
    } ref;
    int policy;
    int ns;
    const char *fname;
    struct {
      const char *desc;
      const char *module;
    } op;
    tl_primfunc *pf;
    struct {
      int ndim;
      tl_expr **dims;
      tl_dtype dt;
      tl_expr **strides; /* T.StridedTensor, else NULL */
    } tt;
    /* ast: the value's expression; or, with from, item index of the lazy
     * tuple `from` (a, b = ... at module level); or, with aug_op, `from`
     * aug_op ast (x += ast at module level) */
    struct {
      const tl_ast_expr *ast;
      val *cached;
      bool busy;
      val *from;
      int index;
      const char *aug_op;
      tl_loc aug_loc;
    } lazy;
    /* def (or lambda) and the scope it was defined in; macro: decorated
     * with @T.macro (its body is inlined where it is called, elab_macro.c) */
    struct {
      const tl_ast_stmt *def;
      const tl_ast_expr *lambda;
      scope *closure;
      bool macro;
    } py;
    struct {
      val *shape, *fn;
    } lay;
  } u;
  bool params_ok; /* V_PRIMFUNC: parameters elaborated without error */
};

/* Kinds of name bindings (what a redefinition check needs to know). */
enum { BK_CONST, BK_LET, BK_LOOP, BK_BLOCK, BK_PARAM, BK_TENSOR, BK_ALLOC };

typedef struct binding {
  val *v;
  tl_loc loc;
  int kind;
} binding;

struct scope {
  struct scope *parent;
  tl_map map;    /* interned name -> binding* */
  bool in_pf;    /* a scope of a prim_func body */
  bool captured; /* a compile-time function closes over it: its map lives to the end */
};

typedef TL_VEC(tl_stmt *) stmt_vec;

typedef struct elab {
  tl_module *m;
  tl_diag *d;
  tl_arena tmp; /* values, bindings: freed at the end */
  const char *file;
  const tl_define *defs;
  size_t ndefs;
  val **defvals; /* parsed -D values (lazily), per index */
  bool *def_used;
  scope *sc; /* current scope */
  scope *module_scope;
  scope *prelude;              /* the prelude's module scope once parsed (elab_prelude.c), or NULL */
  tl_primfunc *pf;             /* prim_func being elaborated, or NULL */
  tl_pass_configs jit_configs; /* the enclosing tilelang.jit's pass_configs */
  int nkernels;
  bool in_kernel;
  int depth;
  int nerr;
  bool oom;
  TL_VEC(tl_var *) dyn; /* all T.dynamic symbols, in declaration order */
  TL_VEC(tl_primfunc *) funcs;
  TL_VEC(const tl_ast_expr *) compile_calls; /* module-level NAME.compile(...) calls */
  const char *eager_kernel;                  /* the eager kernel being built (T.const looks up its bindings) */
  TL_VEC(scope *) kept;                      /* popped scopes that closures still use (freed at the end) */
  int quiet;                                 /* > 0: errors are not reported (module-level host conditions) */
  bool quiet_failed;                         /* an error was suppressed */
  struct tl_el_view *views;                  /* T.view / T.reshape buffers of the prim_func (elab_lang_ops.c) */
  /* The statement list that the prim_func statement being elaborated
   * appends to (NULL outside a prim_func body): a @T.macro called in it,
   * and a store or tile op in a helper it calls, emit their IR there,
   * before the statement itself. */
  stmt_vec *stmt_out;
  int helper_depth;    /* > 0: running a plain compile-time helper (names bind values, no lets) */
  int macro_depth;     /* > 0: inlining a @T.macro body */
  bool clashing_names; /* the prim_func being elaborated inlined a macro or bound a tuple_item let (elab_stmt.c):
                        * its IR names may clash, unique_names renames them */
  /* T.Kernel(..., threads=(x, y[, z])) being elaborated: the thread block's
   * dimensions (the IR kernel has x*y*z threads in one dimension, and
   * T.get_thread_binding(i) is the coordinate i of its thread index, x the
   * fastest, as CUDA linearizes threadIdx); nthread_dims 0 for an integer */
  tl_expr *thread_dims[3];
  int nthread_dims;
  /* Role branches on the thread index (elab_ws.c): the kernel's constant
   * thread count (0 when not constant), the thread range [role_lo, role_hi)
   * that the enclosing role branches leave, the lets bound to the thread
   * index (tx = T.get_thread_binding()). */
  int64_t kernel_threads, role_lo, role_hi;
  TL_VEC(tl_var *) tid_lets;
  /* The lets `name = value` of the prim_funcs whose value reads no memory
   * and calls nothing with effects: tl_var * → the value with such lets
   * replaced, for slice extents (tl_el_let_subst). */
  tl_map let_values;
  /* The lets of the T.Kernel being elaborated whose value reads the thread
   * index (tk = T.get_thread_binding(1)) or is another variable, for
   * elab_allreduce.c. */
  TL_VEC(const tl_stmt *) thread_lets;
  /* T.alloc_global allocations not yet placed: elab_kernel puts them at the
   * top of the kernel body (a kernel workspace, lib/IR/workspace.c) */
  struct {
    struct tl_stmt **data;
    size_t len, cap;
  } global_allocs;
  /* The known extern sources the prim_func has imported (T.import_source;
   * bit i: elab_extern.c's source i) */
  unsigned extern_sources;
} elab;

typedef TL_VEC(tl_operand) operand_vec;

static const tl_loc cmdline_loc = {"<command line>", 0, 0};

/* ================================================= shared functions */

#define err(...) tl_el_err(__VA_ARGS__)
#define err_val(...) tl_el_err_val(__VA_ARGS__)
#define oom(...) tl_el_oom(__VA_ARGS__)
#define talloc(...) tl_el_talloc(__VA_ARGS__)
#define malloc_ir(...) tl_el_malloc_ir(__VA_ARGS__)
#define chk(...) tl_el_chk(__VA_ARGS__)
#define tprintf(...) tl_el_tprintf(__VA_ARGS__)
#define mk(...) tl_el_mk(__VA_ARGS__)
#define mk_int(...) tl_el_mk_int(__VA_ARGS__)
#define mk_float(...) tl_el_mk_float(__VA_ARGS__)
#define mk_bool(...) tl_el_mk_bool(__VA_ARGS__)
#define mk_str(...) tl_el_mk_str(__VA_ARGS__)
#define mk_expr(...) tl_el_mk_expr(__VA_ARGS__)
#define mk_dtype(...) tl_el_mk_dtype(__VA_ARGS__)
#define mk_opaque(...) tl_el_mk_opaque(__VA_ARGS__)
#define mk_tuple(...) tl_el_mk_tuple(__VA_ARGS__)
#define type_name(...) tl_el_type_name(__VA_ARGS__)
#define describe(...) tl_el_describe(__VA_ARGS__)
#define is_ir(...) tl_el_is_ir(__VA_ARGS__)
#define is_num(...) tl_el_is_num(__VA_ARGS__)
#define as_i(...) tl_el_as_i(__VA_ARGS__)
#define as_f(...) tl_el_as_f(__VA_ARGS__)
#define truthy(...) tl_el_truthy(__VA_ARGS__)
#define find_define(...) tl_el_find_define(__VA_ARGS__)
#define parse_define(...) tl_el_parse_define(__VA_ARGS__)
#define push_scope(...) tl_el_push_scope(__VA_ARGS__)
#define pop_scope(...) tl_el_pop_scope(__VA_ARGS__)
#define lookup(...) tl_el_lookup(__VA_ARGS__)
#define dotted_name(...) tl_el_dotted_name(__VA_ARGS__)
#define bind(...) tl_el_bind(__VA_ARGS__)
#define intern(...) tl_el_intern(__VA_ARGS__)
#define lit_int(...) tl_el_lit_int(__VA_ARGS__)
#define to_expr(...) tl_el_to_expr(__VA_ARGS__)
#define to_int_expr(...) tl_el_to_int_expr(__VA_ARGS__)
#define dtype_like(...) tl_el_dtype_like(__VA_ARGS__)
#define to_dtype(...) tl_el_to_dtype(__VA_ARGS__)
#define to_const_int(...) tl_el_to_const_int(__VA_ARGS__)
#define overflow(...) tl_el_overflow(__VA_ARGS__)
#define const_equal(...) tl_el_const_equal(__VA_ARGS__)
#define const_compare(...) tl_el_const_compare(__VA_ARGS__)
#define binop(...) tl_el_binop(__VA_ARGS__)
#define unop(...) tl_el_unop(__VA_ARGS__)
#define in_list(...) tl_el_in_list(__VA_ARGS__)
#define tilelang_has_name(...) tl_el_tilelang_has_name(__VA_ARGS__)
#define mk_ns(...) tl_el_mk_ns(__VA_ARGS__)
#define force(...) tl_el_force(__VA_ARGS__)
#define eval_int(...) tl_el_eval_int(__VA_ARGS__)
#define find_kw(...) tl_el_find_kw(__VA_ARGS__)
#define check_kws(...) tl_el_check_kws(__VA_ARGS__)
#define check_arity(...) tl_el_check_arity(__VA_ARGS__)
#define get_arg(...) tl_el_get_arg(__VA_ARGS__)
#define eval_shape(...) tl_el_eval_shape(__VA_ARGS__)
#define to_arg_expr(...) tl_el_to_arg_expr(__VA_ARGS__)
#define stmt_name(...) tl_el_stmt_name(__VA_ARGS__)
#define eval(...) tl_el_eval(__VA_ARGS__)
#define make_seq(...) tl_el_make_seq(__VA_ARGS__)
#define assign_target(...) tl_el_assign_target(__VA_ARGS__)
#define elab_augassign(...) tl_el_elab_augassign(__VA_ARGS__)
#define set_out_idx(...) tl_el_set_out_idx(__VA_ARGS__)
#define pass_config_value(...) tl_el_pass_config_value(__VA_ARGS__)
#define pass_config_slot(...) tl_el_pass_config_slot(__VA_ARGS__)
#define poison_stmt_targets(...) tl_el_poison_stmt_targets(__VA_ARGS__)
#define elab_block(...) tl_el_elab_block(__VA_ARGS__)
#define elab_tile(...) tl_el_elab_tile(__VA_ARGS__)
#define check_new_name(...) tl_el_check_new_name(__VA_ARGS__)

void err(elab *E, tl_loc loc, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
void err_val(elab *E, tl_loc loc, const val *v, const char *fmt, ...) __attribute__((format(printf, 4, 5)));
void *oom(elab *E);
void *talloc(elab *E, size_t n);
void *malloc_ir(elab *E, size_t n);
tl_expr *chk(elab *E, tl_expr *e);
const char *tprintf(elab *E, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* A value in the temporary arena holding init (NULL on OOM, reported). */
val *mk_val(elab *E, val init);
val *mk(elab *E, vkind k);
val *mk_int(elab *E, int64_t i);
val *mk_float(elab *E, double f);
val *mk_bool(elab *E, bool b);
val *mk_str(elab *E, const char *s);
val *mk_expr(elab *E, tl_expr *e);
val *mk_dtype(elab *E, tl_dtype t);
val *mk_opaque(elab *E, const char *desc, const char *module);
/* An empty dict (n = 0) with room for cap entries; NULL on OOM (reported). */
val *mk_dict(elab *E, int cap);
val *mk_tuple(elab *E, int n, bool is_list);
const char *type_name(const val *v);
const char *describe(elab *E, const val *v);
bool is_ir(const val *v);
bool is_num(const val *v);
int64_t as_i(const val *v);
double as_f(const val *v);
bool truthy(const val *v, bool *out);
int find_define(const elab *E, const char *name);
val *parse_define(elab *E, int idx);
scope *push_scope(elab *E, bool in_pf);
void pop_scope(elab *E, scope *s);
binding *lookup(elab *E, const char *name, scope **where);
/* A decorator's dotted name root.a1...an (d, or the function d calls): the
 * root's name, the attributes in parts innermost-last (parts[*np - 1] is a1)
 * and their count in *np; NULL when d is no dotted name or has more than max
 * attributes. */
const char *dotted_name(const tl_ast_expr *d, const char **parts, int max, int *np);
bool bind(elab *E, scope *s, const char *name, val *v, tl_loc loc, int kind);
const char *intern(elab *E, const char *s);
tl_expr *lit_int(elab *E, tl_loc loc, int64_t v);
tl_expr *to_expr(elab *E, val *v, tl_loc loc);
tl_expr *to_int_expr(elab *E, val *v, tl_loc loc, const char *what);
bool dtype_like(const char *s);
bool to_dtype(elab *E, val *v, tl_loc loc, tl_dtype *out);
bool to_const_int(elab *E, val *v, tl_loc loc, const char *what, int64_t *out);
val *overflow(elab *E, tl_loc loc, val *a, val *b);
bool const_equal(const val *a, const val *b, int depth);
val *const_compare(elab *E, const char *op, val *a, val *b, tl_loc loc);
val *binop(elab *E, const char *op, val *a, val *b, tl_loc loc);
val *unop(elab *E, const char *op, val *a, tl_loc loc);
bool in_list(const char *const *list, const char *s);
/* TileLang's T.* functions that elab_lang_ops.c (and call_t:
 * align_up) give a meaning: T.align_up, T.view, T.reshape, T.alloc_global,
 * T.cumsum, T.transpose, T.im2col; NULL-terminated. */
/* T.Parallel's keywords (elab_pipelined.c): checks them; false after an error. */
bool tl_el_parallel_hints(elab *E, const tl_ast_expr *it, const char *fn);
/* T.copy's annotations= dict (keyword k of tile op op): sets attrs[i] / given[i] / by_ann[i] for the
 * coalesced_width and disable_tma it gives; false after a located error for a key or value it does not know
 * (elab_pipelined.c). */
bool tl_el_copy_annotations(elab *E, int op, const tl_ast_keyword *k, const char *fn, tl_expr **attrs, bool *given,
                            bool *by_ann);
/* A tile op's attribute ai from value v (its kind checked; elab_stmt.c); NULL after a located error. */
#define attr_value(...) tl_el_attr_value(__VA_ARGS__)
tl_expr *attr_value(elab *E, int op, int ai, val *v, tl_loc loc);
/* The T names of explicit warp specialisation that elab_ws.c elaborates. */
extern const char *const tl_el_ws_names[];
extern const char *const tl_el_lang_op_names[];
#define lang_op_names tl_el_lang_op_names
/* The statement T.<name>(...) of x when name is one of them (*handled):
 * its tile IR appended to out; false after a reported error. */
bool tl_el_lang_stmt(elab *E, const char *name, const tl_ast_expr *x, tl_loc loc, stmt_vec *out, bool *handled);
/* T.print(obj, msg, warp_group_id, warp_id) called as x (elab_print.c):
 * its T.debug_print statements appended to out; false after a reported error. */
bool tl_el_print(elab *E, const tl_ast_expr *x, tl_loc loc, stmt_vec *out);
/* TileLang's T.device_assert (elab_print.c): a T.device_assert_at statement
 * appended to out; false after a reported error. */
bool tl_el_device_assert(elab *E, const tl_ast_expr *x, tl_loc loc, stmt_vec *out);
/* let NAME = e emitted to out (elab_stmt.c): the variable's value (a
 * thread-index let noted); NULL after a reported error. */
val *tl_el_let_value(elab *E, const char *name, tl_expr *e, tl_loc loc, stmt_vec *out);
/* The tuple value v to assign to the tuple target t (elab_tuple.c): v itself,
 * or a copy whose items that read a buffer an earlier target stores into
 * are lets emitted to out first; NULL after a reported error. */
val *tl_el_freeze_tuple(elab *E, const tl_ast_expr *t, val *v, tl_loc vloc, stmt_vec *out);
/* Records let var = value in E->let_values when value is pure (no loads,
 * no calls with effects); false on OOM (reported). */
bool tl_el_note_let_value(elab *E, tl_var *var, tl_expr *value);
/* e with the recorded pure lets replaced by their values (e itself when
 * none is recorded; NULL on OOM or too deep an expression). */
tl_expr *tl_el_let_subst(elab *E, tl_expr *e);
/* T.view / T.reshape (name) called as x: the view, a buffer value. */
val *tl_el_call_view(elab *E, const char *name, const tl_ast_expr *x, const char *fn);
/* A view of buffer value sv (from a[0]) with shape a[1] and dtype a[2]
 * (either NULL: sv's), named for call x: what T.view does, and
 * T.Tensor(shape, dtype, X.data) (a tensor over X's data). */
val *tl_el_make_view(elab *E, const tl_ast_expr *x, const tl_ast_expr *const a[3], val *sv, const char *fn);
/* b[idx] (n indices) through the views: the buffer that holds the element
 * (b unless b is a T.view / T.reshape) with *n and *idx replaced by its
 * indices; NULL after a reported error. */
tl_buffer *tl_el_view_remap(elab *E, tl_loc loc, tl_buffer *b, int *n, tl_expr ***idx);
/* A tile op whose region operands include a view: T.copy becomes the
 * element loop it means (appended to out, *handled); any other op is an
 * error.  Not handled (no view operand): returns true. */
bool tl_el_view_tile(elab *E, int op, operand_vec *ops, tl_expr **attrs, tl_loc loc, stmt_vec *out, bool *handled);
/* The load b[idx] through the views (a view of another dtype assembles its
 * element's bits from the viewed elements); NULL after a reported error. */
tl_expr *tl_el_view_load(elab *E, tl_loc loc, tl_buffer *b, int n, tl_expr **idx);
/* The region operand of a buffer or buffer-region value (elab_stmt.c). */
#define region_from(...) tl_el_region_from(__VA_ARGS__)
bool region_from(elab *E, val *v, tl_operand *o, tl_loc loc);
/* True when TileLang exports T.<name> (tilelang_names.c). */
bool tilelang_has_name(const char *name);
val *mk_ns(elab *E, int ns);
val *force(elab *E, val *lz, tl_loc use);
tl_expr *eval_int(elab *E, const tl_ast_expr *x, const char *what);
const tl_ast_keyword *find_kw(const tl_ast_expr *x, const char *name);
bool check_kws(elab *E, const tl_ast_expr *x, const char *fn, const char *const *allowed);
bool check_arity(elab *E, const tl_ast_expr *x, const char *fn, int lo, int hi);
const tl_ast_expr *get_arg(elab *E, const tl_ast_expr *x, int i, const char *name, const char *fn, bool *bad);
/* Binds call x's arguments to the parameters names (NULL-terminated; each
 * positional or by keyword): checks the keywords and a count of at most the
 * number of names, then out[i] = argument i (positional i or keyword
 * names[i]), NULL when absent.  The first need (0 to 2) are required.  False
 * after a reported error (unknown or repeated keyword, too many arguments,
 * one given both ways, a required one missing). */
bool bind_args(elab *E, const tl_ast_expr *x, const char *fn, const char *const *names, int need,
               const tl_ast_expr **out);
bool eval_shape(elab *E, const tl_ast_expr *ast, int *ndim, tl_expr ***dims);
tl_expr *to_arg_expr(elab *E, val *v, tl_loc loc);
const char *stmt_name(tl_ast_stmt_kind k);
val *eval(elab *E, const tl_ast_expr *x);
tl_stmt *make_seq(elab *E, tl_loc loc, stmt_vec *v);
bool assign_target(elab *E, const tl_ast_expr *t, val *v, tl_loc vloc, stmt_vec *out);
bool elab_augassign(elab *E, const tl_ast_stmt *s, stmt_vec *out);
bool set_out_idx(elab *E, tl_primfunc *pf, val *v, const tl_ast_expr *ast);
bool pass_config_value(elab *E, const char *key, val *v, const tl_ast_expr *ast, bool *on);
bool *pass_config_slot(const char *key, tl_pass_configs *configs);
void poison_stmt_targets(elab *E, const tl_ast_stmt *s);
bool elab_block(elab *E, const tl_ast_block *b, stmt_vec *out);
bool elab_tile(elab *E, int op, const tl_ast_expr *x, tl_loc loc, stmt_vec *out);
bool check_new_name(elab *E, const char *name, tl_loc loc);
/* elab_ws.c: explicit warp specialisation (T.alloc_barrier, with T.ws, the
 * barrier statements, T.tma_copy). */
bool tl_el_alloc_barrier(elab *E, const tl_ast_expr *target, const tl_ast_expr *x, tl_loc loc, stmt_vec *out);
/* elab_lang_ops.c: `name = T.make_tensor(ptr, shape, dtype, strides)` (a global buffer over a device address). */
bool tl_el_make_tensor(elab *E, const tl_ast_expr *target, const tl_ast_expr *x, tl_loc loc, stmt_vec *out);
bool tl_el_ws_scope(elab *E, const tl_ast_stmt *s, stmt_vec *out);
/* elab_allreduce.c: with T.attr(T.comm_reducer(...), "reduce_scope", ...):
 * T.evaluate(T.tvm_thread_allreduce(...)) → T.thread_allreduce. */
bool tl_el_thread_allreduce(elab *E, const tl_ast_stmt *s, stmt_vec *out);
bool tl_el_ws_stmt(elab *E, const char *name, const tl_ast_expr *x, tl_loc loc, stmt_vec *out, bool *handled);
/* The flat element offset of b[ix...] (row-major, or b's strides): T.atomic_add's value form, T.ptx_cp_async. */
tl_expr *tl_el_flat_offset(elab *E, tl_loc loc, const tl_buffer *b, int n, tl_expr *const *ix);
/* TileLang's T.ptx_cp_async(dst_ptr, src_ptr, num_elems[, predicate]) (elab_cp_async.c): the statement
 * T.ptx_cp_async(dst, dst_off, src, src_off, bytes, pred). */
bool tl_el_ptx_cp_async(elab *E, const tl_ast_expr *x, tl_loc loc, stmt_vec *out);
/* An `if` on the thread index (tx < 128, tx >= 128 and tx < 256, ...): the
 * ranges of its branches (tl_el_role_begin: false when cond is no such test
 * or the kernel has no constant multiple of 128 threads), then the branches
 * as T.ws scopes when they hold tile work (tl_el_role_end). */
typedef struct tl_el_role {
  int64_t lo, hi;           /* the then-branch's threads */
  int64_t else_lo, else_hi; /* the else-branch's (empty: else_lo == else_hi) */
  int64_t outer_lo, outer_hi;
} tl_el_role;
bool tl_el_role_begin(elab *E, const tl_expr *cond, tl_el_role *r);
bool tl_el_role_end(elab *E, const tl_ast_stmt *s, const tl_el_role *r, tl_expr *cond, tl_stmt *th, tl_stmt *el,
                    stmt_vec *out);
void tl_el_note_tid_let(elab *E, tl_var *v, const tl_expr *value);
#define policy_names tl_el_policy_names
extern const char *policy_names[3];

/* elab_python.c: compile-time Python (comprehensions, f-strings, assert,
 * is/in, range/zip/enumerate/list/tuple/str/isinstance on constants). */
#define eval_comprehension(...) tl_el_eval_comprehension(__VA_ARGS__)
#define eval_fstring(...) tl_el_eval_fstring(__VA_ARGS__)
#define elab_assert(...) tl_el_elab_assert(__VA_ARGS__)
#define py_identity_or_membership(...) tl_el_py_identity_or_membership(__VA_ARGS__)
#define call_py_builtin(...) tl_el_call_py_builtin(__VA_ARGS__)
#define mk_pyfunc(...) tl_el_mk_pyfunc(__VA_ARGS__)
#define eval_define_text(...) tl_el_eval_define_text(__VA_ARGS__)
#define itertools_product(...) tl_el_itertools_product(__VA_ARGS__)
/* itertools.product(seq, ...) of constant sequences: a list of tuples. */
val *itertools_product(elab *E, val **a, const tl_ast_expr *x);
/* The value of -D name=text where text is a Python tuple or list display
 * of constants ("(64, 32)", "[1, 2]"); NULL with an error. */
val *eval_define_text(elab *E, const char *name, const char *text);
/* elab_pycalls.c: calls of compile-time Python beyond the builtins: list
 * append/extend, dict keys/values/items/get, dict(k=v, **m),
 * itertools.product(*seqs).  Each sets *handled when x was one of them (the
 * result, or NULL after an error); otherwise eval_call goes on. */
#define py_method_call(...) tl_el_py_method_call(__VA_ARGS__)
#define py_extra_call(...) tl_el_py_extra_call(__VA_ARGS__)
val *py_method_call(elab *E, const tl_ast_expr *x, bool *handled);
val *py_extra_call(elab *E, const tl_ast_expr *x, bool *handled);
/* elaborate.c: an import statement, bound in the current scope (module
 * level, and inside compile-time helper functions). */
#define do_import(...) tl_el_do_import(__VA_ARGS__)
void do_import(elab *E, const tl_ast_stmt *s);
/* elab_prelude.c: the prelude's value of an imported path (tilelang.cuda.intrinsics.TensorCoreIntrinEmitter, ...)
 * or NULL; its builtins __tl_object__ / __tl_scope__ (*handled false for any other call). */
val *tl_el_prelude_value(elab *E, const char *path);
val *tl_el_prelude_call(elab *E, const tl_ast_expr *x, bool *handled);
/* elab_autotune.c: the @tilelang.autotune decorator's configs (tune_space.h). */
struct tl_tune_space;
#define elab_autotune(...) tl_el_elab_autotune(__VA_ARGS__)
void elab_autotune(elab *E, const tl_ast_block *body, const char *kernel, struct tl_tune_space *out);
#define call_pyfunc(...) tl_el_call_pyfunc(__VA_ARGS__)
#define def_is_macro(...) tl_el_def_is_macro(__VA_ARGS__)
#define elab_expr_stmt(...) tl_el_elab_expr_stmt(__VA_ARGS__)
/* Whether def is decorated with @T.macro (T.macro, tilelang.language.macro,
 * or a `macro` imported from tilelang.language). */
bool def_is_macro(elab *E, const tl_ast_stmt *def);
/* T.get_thread_binding(dim) in a kernel with threads=(x, y[, z]), as an
 * expression over the kernel's one thread index; NULL (no error) when the
 * kernel's threads are an integer (elab_stmt.c). */
tl_expr *tl_el_thread_coord(elab *E, int64_t dim, tl_loc loc);
/* elab_names.c: renames the lets, loop variables and allocations of pf
 * that a @T.macro inlining made shadow a live IR name (NAME_1, ...). */
#define unique_names(...) tl_el_unique_names(__VA_ARGS__)
void unique_names(elab *E, tl_primfunc *pf);
/* An expression statement of a prim_func body (tile ops, T.* statements,
 * calls), appended to out. */
bool elab_expr_stmt(elab *E, const tl_ast_stmt *s, stmt_vec *out);

/* A compile-time Python function (def or lambda) closing over E->sc. */
val *mk_pyfunc(elab *E, const tl_ast_stmt *def, const tl_ast_expr *lambda);
/* Calls it with the arguments of call x (positional, keywords, defaults,
 * *args and **kwargs parameters), evaluated in the caller's scope and bound
 * in a fresh scope over the function's definition scope.  A plain function
 * runs its body as compile-time Python (names bind values, as Python does;
 * inside a prim_func body its stores and tile ops go to E->stmt_out).  A
 * @T.macro is inlined, with TileLang's meaning: it may only be called in a
 * prim_func body; each parameter bound to an IR expression other than a
 * variable gets a let (evaluated once); the body is elaborated as prim_func
 * statements appended to E->stmt_out; a 'return' as its last top-level
 * statement gives the call's value (None without one).  NULL after a
 * located error, with a note at the call. */
val *call_pyfunc(elab *E, val *fn, const tl_ast_expr *x);
/* The same with n positional argument values (no T.macro), called at loc. */
val *tl_el_call_pyfunc_values(elab *E, val *fn, int n, val **args, tl_loc loc);
/* T.annotate_layout({B: T.Layout(shape, fn)}) of a global buffer B (kv; k
 * and lv the key's and the layout's expressions): B's element idx lives at
 * the row-major position of fn(*idx) in the layout's output space, for every
 * later access of B in the prim_func (elab_lang_ops.c). */
bool tl_el_global_layout(elab *E, val *kv, const tl_ast_expr *k, const tl_ast_expr *lv);
/* A list/set/dict comprehension or generator expression over constants. */
val *eval_comprehension(elab *E, const tl_ast_expr *x);
/* An f-string of compile-time values (a V_STR). */
val *eval_fstring(elab *E, const tl_ast_expr *x);
/* elab_pipelined.c: T.Pipelined iterator it's order= / stage= / group=
 * checked against the elaborated loop and stored in it (tir.h's
 * loop.nsched/order/stage); num_stages defaults to max(stage) + 1.  False
 * after a located error. */
bool tl_el_pipelined_schedule(elab *E, const tl_ast_expr *it, tl_stmt *loop);
/* elab_persistent.c: `for ... in T.Persistent(domain, wave_size, index,
 * group_size=8)` (s) as a T.serial loop over waves with the coordinates
 * bound and the tile guarded; false after a located error. */
bool tl_el_persistent(elab *E, const tl_ast_stmt *s, stmt_vec *out);
/* elab_while.c: `while cond: body` (s) as a TL_STMT_WHILE; false after a located error. */
bool tl_el_while(elab *E, const tl_ast_stmt *s, stmt_vec *out);
/* elab_stmt.c: a nested block elaborated in a fresh scope into one statement (NULL after an error). */
tl_stmt *tl_el_body(elab *E, const tl_ast_block *b, tl_loc loc);
/* elab_stmt.c: the IR name of a new loop variable (NULL after a located
 * error), and a TL_STMT_FOR over arena-owned arrays (NULL on OOM). */
const char *tl_el_loop_var_name(elab *E, const char *name, tl_loc loc);
tl_stmt *tl_el_new_for(elab *E, tl_loc loc, tl_loop_kind lk, int nvars, tl_var **vars, tl_expr **mins, tl_expr **exts,
                       tl_expr *step, int num_stages, tl_stmt *body);
/* assert test[, msg]: a false constant condition is an error with msg. */
bool elab_assert(elab *E, const tl_ast_stmt *s);
/* a is b, a is not b, a in b, a not in b on compile-time values. */
val *py_identity_or_membership(elab *E, const char *op, val *a, val *b, tl_loc loc);
/* The builtins above (a: the n evaluated positional arguments of call x);
 * *handled false when fn is none of them. */
val *call_py_builtin(elab *E, const char *fn, val **a, int n, const tl_ast_expr *x, bool *handled);

/* elab_tvm.c: TVM's tirx / tvm.tir expression builders and tvm.DataType. */
/* v is the namespace tvm.tirx or tvm.tir (an import of it). */
bool tl_el_is_tvm_tir(const val *v);
/* v is tvm.DataType (or tilelang.DataType). */
bool tl_el_is_tvm_datatype(const val *v);
/* tirx.NAME: a function value named "tirx.NAME" when known, else an opaque value. */
val *tl_el_tirx_member(elab *E, const char *name);
/* The T function whose meaning tirx.NAME has (reinterpret, Cast, ...), else NULL. */
const char *tl_el_tirx_alias(const char *name);
/* tirx.NAME(...) called as x when tl_el_tirx_alias(NAME) is NULL (const, IntImm, bit operations). */
val *tl_el_call_tirx(elab *E, const char *name, const tl_ast_expr *x);
/* NAME is bitwise_and/or/xor/not or shift_left/right (T.NAME means the operator). */
bool tl_el_is_bit_op(const char *name);
/* T.NAME / tirx.NAME (fn, for messages) of a bit operation, called as x: the operator's value. */
val *tl_el_call_bit_op(elab *E, const char *name, const tl_ast_expr *x, const char *fn);
/* kr = T.thread_binding(0, ext, thread="threadIdx.d") called as x inside a T.Kernel: the thread coordinate d
 * (fn: "T.thread_binding", for messages). */
val *tl_el_thread_binding_value(elab *E, const tl_ast_expr *x, const char *fn);
/* tvm.DataType(dtype) called as x (fv the DataType value): the dtype. */
val *tl_el_call_datatype(elab *E, const val *fv, const tl_ast_expr *x);
/* T.call_extern / T.call_pure_extern / T.import_source: a located error
 * (CUDA C++ source is not compiled) and true; false for other names. */
bool tl_el_refuse_extern(elab *E, const char *name, tl_loc loc);
/* elab_extern.c: T.import_source(src) as a statement (x the call): notes a
 * known source, or a located error; T.call_extern(...) of a known device
 * function: its stores into out (docs/language.md "Known device functions"). */
bool tl_el_import_source(elab *E, const tl_ast_expr *x);
bool tl_el_call_extern(elab *E, const tl_ast_expr *x, tl_loc loc, stmt_vec *out);
/* FNV-1a 64 of s less its white space (how a known source is recognised). */
uint64_t tl_el_extern_fingerprint(const char *s);

/* elaborate.c / elab_stmt.c, for elab_eager.c */
#define elab_primfunc(...) tl_el_elab_primfunc(__VA_ARGS__)
#define add_func(...) tl_el_add_func(__VA_ARGS__)
#define param_hint(...) tl_el_param_hint(__VA_ARGS__)
#define factory_stmt(...) tl_el_factory_stmt(__VA_ARGS__)
#define jit_out_idx(...) tl_el_jit_out_idx(__VA_ARGS__)
#define jit_pass_configs(...) tl_el_jit_pass_configs(__VA_ARGS__)
#define t_callee(...) tl_el_t_callee(__VA_ARGS__)
/* Elaborates a @T.prim_func def in the current scope (out_idx from a
 * tilelang.jit decorator or an eager kernel's returns, or NULL). */
val *elab_primfunc(elab *E, const tl_ast_stmt *def, val *out_idx, const tl_ast_expr *out_ast);
bool add_func(elab *E, tl_primfunc *pf);
const char *param_hint(const tl_ast_param *p, const tl_ast_stmt *def);
/* One compile-time statement of a factory body; *returned when it returned. */
bool factory_stmt(elab *E, const tl_ast_stmt *s, const tl_ast_stmt *fdef, val *out_idx, const tl_ast_expr *out_ast,
                  bool *returned);
val *jit_out_idx(elab *E, const tl_ast_expr *jit, const tl_ast_expr **ast);
void jit_pass_configs(elab *E, const tl_ast_expr *jit);
/* "Kernel" for T.Kernel(...) (the T function a call names), or NULL. */
const char *t_callee(elab *E, const tl_ast_expr *x);

/* elab_eager.c: the eager JIT style (TileLang PR #2010). */
#define is_eager_kernel(...) tl_el_is_eager_kernel(__VA_ARGS__)
#define elab_eager(...) tl_el_elab_eager(__VA_ARGS__)
#define compile_binding(...) tl_el_compile_binding(__VA_ARGS__)
#define call_const(...) tl_el_call_const(__VA_ARGS__)
#define note_compile_call(...) tl_el_note_compile_call(__VA_ARGS__)
/* A @tilelang.jit def whose body opens T.Kernel itself (no nested prim_func). */
bool is_eager_kernel(elab *E, const tl_ast_stmt *def);
/* Builds the prim_func of an eager kernel: tensor parameters from the
 * annotations in its body, outputs from T.empty (returned ones set
 * out_idx), T.const symbols from -D or the file's NAME.compile(...). */
void elab_eager(elab *E, const tl_ast_stmt *def, const tl_ast_expr *jit);
/* The value of `name` given by a module-level kernel.compile(name=...) call
 * in the file, or NULL (quietly) when there is none. */
val *compile_binding(elab *E, const char *kernel, const char *name);
/* T.const("M, N, K"): the values of those symbols (-D or compile binding). */
val *call_const(elab *E, const char *fn, const tl_ast_expr *x);
/* Records a module-level statement NAME.compile(...) (read, not run). */
void note_compile_call(elab *E, const tl_ast_expr *value);

#endif
