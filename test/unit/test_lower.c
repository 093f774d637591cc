/* Unit tests of lib/Lower (tile IR → SIMT IR): kernels are built with the C
 * builder API, lowered, and then (1) checked structurally on the printed SIMT
 * text (vector widths, predicates, no tile ops left) and (2) run by a tiny
 * per-thread interpreter of the SIMT subset the lowering emits, over every
 * block and thread, comparing the outputs with a direct evaluation of the
 * tile program's meaning.  Also: the PLAN layout is a bijection, and ops that
 * are not lowered yet are reported as such. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "IR/tir.h"
#include "Lower/lower.h"
#include "Lower/lower_internal.h"
#include "tilelang/ir.h"

/* ------------------------------------------------------------ mini SIMT */
#define MAXL 16
typedef struct val {
  int lanes;
  double x[MAXL];
} val;
typedef struct sim {
  tl_map mem; /* buffer → double* */
  tl_map env; /* var → double* (boxed) */
  int64_t tid, threads;
  int errors;
} sim;

static double *mem_of(sim *s, const tl_buffer *b) {
  double *p = tl_map_get(&s->mem, b, NULL);
  if (!p) {
    int64_t n = 1;
    for (int k = 0; k < b->ndim; k++) {
      int64_t d = 1;
      tl_expr_is_const_int(b->shape[k], &d);
      n *= d;
    }
    p = calloc((size_t)n + 1, sizeof(double));
    tl_map_put(&s->mem, b, p);
  }
  return p;
}

static val ev(sim *s, const tl_expr *e);

static double rnd(double v, tl_dtype t) {
  if (tl_dtype_is_float(t)) return tl_round_to_dtype(v, t);
  if (t.code == TL_TYPE_BOOL) return v != 0;
  return trunc(v);
}

static int64_t flat(sim *s, const tl_buffer *b, int n, tl_expr **idx, int lane, bool *oob) {
  int64_t f = 0;
  for (int k = 0; k < n; k++) {
    val v = ev(s, idx[k]);
    int64_t d = 1;
    tl_expr_is_const_int(b->shape[k], &d);
    int64_t i = (int64_t)v.x[v.lanes > 1 ? lane : 0];
    if (i < 0 || i >= d) *oob = true;
    f = f * d + i;
  }
  return f;
}

static val ev(sim *s, const tl_expr *e) {
  val r = {e->dtype.lanes, {0}};
  switch (e->kind) {
  case TL_EXPR_INT: r.x[0] = (double)e->u.ival; return r;
  case TL_EXPR_FLOAT: r.x[0] = e->u.fval; return r;
  case TL_EXPR_VAR: {
    double *p = tl_map_get(&s->env, e->u.var, NULL);
    if (!p) {
      s->errors++;
      return r;
    }
    r.x[0] = *p;
    return r;
  }
  case TL_EXPR_CALL: r.x[0] = (double)s->tid; return r; /* only get_thread_binding(0) */
  case TL_EXPR_RAMP: {
    val b = ev(s, e->u.ramp.base);
    for (int i = 0; i < r.lanes; i++) r.x[i] = b.x[0] + i;
    return r;
  }
  case TL_EXPR_BROADCAST: {
    val b = ev(s, e->u.bcast.value);
    for (int i = 0; i < r.lanes; i++) r.x[i] = b.x[0];
    return r;
  }
  case TL_EXPR_CAST: {
    val b = ev(s, e->u.cast.value);
    for (int i = 0; i < r.lanes; i++) r.x[i] = rnd(b.x[b.lanes > 1 ? i : 0], e->dtype);
    return r;
  }
  case TL_EXPR_LOAD: {
    double *p = mem_of(s, e->u.load.buffer);
    for (int i = 0; i < r.lanes; i++) {
      bool oob = false;
      int64_t f = flat(s, e->u.load.buffer, e->u.load.n, e->u.load.indices, i, &oob);
      if (oob) s->errors++;
      else r.x[i] = p[f];
    }
    return r;
  }
  case TL_EXPR_BINARY: {
    val a = ev(s, e->u.bin.a), b = ev(s, e->u.bin.b);
    for (int i = 0; i < r.lanes; i++) {
      double x = a.x[a.lanes > 1 ? i : 0], y = b.x[b.lanes > 1 ? i : 0], z = 0;
      switch (e->u.bin.op) {
      case TL_OP_ADD: z = x + y; break;
      case TL_OP_SUB: z = x - y; break;
      case TL_OP_MUL: z = x * y; break;
      case TL_OP_FLOORDIV: z = floor(x / y); break;
      case TL_OP_FLOORMOD: z = x - floor(x / y) * y; break;
      case TL_OP_LT: z = x < y; break;
      case TL_OP_LE: z = x <= y; break;
      case TL_OP_GE: z = x >= y; break;
      case TL_OP_GT: z = x > y; break;
      case TL_OP_EQ: z = x == y; break;
      case TL_OP_AND: z = x && y; break;
      case TL_OP_OR: z = x || y; break;
      case TL_OP_MIN: z = fmin(x, y); break;
      case TL_OP_MAX: z = fmax(x, y); break;
      default: s->errors++;
      }
      r.x[i] = tl_dtype_is_float(e->dtype) ? rnd(z, e->dtype) : z;
    }
    return r;
  }
  case TL_EXPR_SELECT: {
    val c = ev(s, e->u.sel.cond), a = ev(s, e->u.sel.t), b = ev(s, e->u.sel.f);
    for (int i = 0; i < r.lanes; i++)
      r.x[i] = c.x[c.lanes > 1 ? i : 0] ? a.x[a.lanes > 1 ? i : 0] : b.x[b.lanes > 1 ? i : 0];
    return r;
  }
  default: s->errors++; return r;
  }
}

static void bind(sim *s, const tl_var *v, double x) {
  double *p = tl_map_get(&s->env, v, NULL);
  if (!p) {
    p = malloc(sizeof *p);
    tl_map_put(&s->env, v, p);
  }
  *p = x;
}

static void run(sim *s, const tl_stmt *st) {
  if (!st) return;
  switch (st->kind) {
  case TL_STMT_SEQ:
    for (int i = 0; i < st->u.seq.n; i++) run(s, st->u.seq.stmts[i]);
    return;
  case TL_STMT_FOR: {
    double mn = st->u.loop.mins && st->u.loop.mins[0] ? ev(s, st->u.loop.mins[0]).x[0] : 0;
    double ext = ev(s, st->u.loop.extents[0]).x[0];
    if (st->u.loop.kind == TL_LOOP_VECTORIZED && st->u.loop.body->kind != TL_STMT_STORE) s->errors++;
    for (double i = mn; i < mn + ext; i++) {
      bind(s, st->u.loop.vars[0], i);
      run(s, st->u.loop.body);
    }
    return;
  }
  case TL_STMT_IF:
    if (ev(s, st->u.ifs.cond).x[0]) run(s, st->u.ifs.then_s);
    else run(s, st->u.ifs.else_s);
    return;
  case TL_STMT_LET: bind(s, st->u.let.var, ev(s, st->u.let.value).x[0]); return;
  case TL_STMT_ALLOC: {
    double *p = mem_of(s, st->u.alloc.buffer);
    int64_t n = 1;
    tl_expr_is_const_int(st->u.alloc.buffer->shape[0], &n);
    for (int64_t i = 0; i < n; i++) p[i] = NAN; /* fresh per thread */
    return;
  }
  case TL_STMT_STORE: {
    val v = ev(s, st->u.store.value);
    double *p = mem_of(s, st->u.store.buffer);
    int lanes = st->u.store.value->dtype.lanes;
    for (int i = 0; i < lanes; i++) {
      bool oob = false;
      int64_t f = flat(s, st->u.store.buffer, st->u.store.n, st->u.store.indices, i, &oob);
      if (oob) s->errors++;
      else p[f] = rnd(v.x[v.lanes > 1 ? i : 0], st->u.store.buffer->dtype);
    }
    return;
  }
  default: s->errors++; return;
  }
}

/* Runs the kernel of f over all blocks and threads. */
static void run_kernel(sim *s, const tl_primfunc *f) {
  const tl_stmt *k = f->body;
  while (k && k->kind == TL_STMT_SEQ && k->u.seq.n == 1) k = k->u.seq.stmts[0];
  cr_assert(k && k->kind == TL_STMT_KERNEL);
  int64_t g[3] = {1, 1, 1}, T;
  for (int i = 0; i < k->u.kernel.ngrid; i++) tl_expr_is_const_int(k->u.kernel.grid[i], &g[i]);
  tl_expr_is_const_int(k->u.kernel.threads, &T);
  for (int64_t z = 0; z < g[2]; z++)
    for (int64_t y = 0; y < g[1]; y++)
      for (int64_t x = 0; x < g[0]; x++)
        for (int64_t t = 0; t < T; t++) {
          int64_t bi[3] = {x, y, z};
          for (int i = 0; i < k->u.kernel.ngrid; i++) bind(s, k->u.kernel.block_vars[i], (double)bi[i]);
          s->tid = t;
          run(s, k->u.kernel.body);
        }
}

static void sim_free(sim *s) {
  for (size_t i = 0; i < s->mem.cap; i++)
    if (s->mem.slots[i].key) free(s->mem.slots[i].value);
  for (size_t i = 0; i < s->env.cap; i++)
    if (s->env.slots[i].key) free(s->env.slots[i].value);
  tl_map_free(&s->mem);
  tl_map_free(&s->env);
}

/* -------------------------------------------------------------- building */
static tl_context *ctx;
static tl_builder *b;
static tl_expr *I(int64_t v) { return tl_builder_int(b, v); }
static tl_expr *V(tl_var *v) { return tl_builder_var_ref(b, v); }
static tl_expr *mul(tl_expr *x, tl_expr *y) { return tl_builder_binary(b, TL_OP_MUL, x, y); }
static void copy(tl_buffer *src, tl_expr **smin, tl_expr **sext, int sn, tl_buffer *dst, tl_expr **dmin, tl_expr **dext,
                 int dn) {
  tl_tile_arg a[2];
  memset(a, 0, sizeof a);
  a[0].kind = a[1].kind = TL_TILE_ARG_REGION;
  a[0].region = (tl_region_arg){src, smin, sext, (size_t)sn};
  a[1].region = (tl_region_arg){dst, dmin, dext, (size_t)dn};
  tl_builder_tile_op(b, "copy", a, 2, NULL, 0);
}

static char *lower_and_print(tl_module *m, tl_diag *d, bool *ok) {
  tl_lower_options o = {.target = tl_target_lookup("sm_80"), .verify_each = true};
  *ok = tl_lower_module(m, &o, d);
  tl_strbuf sb = {0};
  tl_print_module(&sb, m);
  if (getenv("TL_TEST_SHOW")) fputs(sb.data, stderr);
  return tl_strbuf_take(&sb);
}

/* C = A + B (f32) through fragments, C in out dtype, M x N, tiles 32 x 128. */
static tl_module *build_add(int M, int N, tl_dtype out, tl_buffer **bufs) {
  tl_dtype f32 = TL_FLOAT32;
  cr_assert(tl_context_create(&ctx) == TL_OK);
  cr_assert(tl_builder_create(ctx, "main", &b) == TL_OK);
  tl_expr *sh[2] = {I(M), I(N)};
  tl_buffer *A = tl_builder_param_tensor(b, "A", f32, sh, 2);
  tl_buffer *B = tl_builder_param_tensor(b, "B", f32, sh, 2);
  tl_buffer *C = tl_builder_param_tensor(b, "C", out, sh, 2);
  tl_expr *g[2] = {I((N + 127) / 128), I((M + 31) / 32)};
  const char *nm[2] = {"bx", "by"};
  tl_var *bv[2];
  tl_builder_kernel_begin(b, g, 2, I(128), nm, bv);
  tl_expr *fs[2] = {I(32), I(128)};
  tl_buffer *Af = tl_builder_alloc(b, TL_SCOPE_FRAGMENT, "A_frag", f32, fs, 2);
  tl_buffer *Bf = tl_builder_alloc(b, TL_SCOPE_FRAGMENT, "B_frag", f32, fs, 2);
  tl_buffer *Cf = tl_builder_alloc(b, TL_SCOPE_FRAGMENT, "C_frag", out, fs, 2);
  tl_expr *mins[2] = {mul(V(bv[1]), I(32)), mul(V(bv[0]), I(128))};
  copy(A, mins, fs, 2, Af, NULL, NULL, 0);
  copy(B, mins, fs, 2, Bf, NULL, NULL, 0);
  const char *ln[2] = {"i", "j"};
  tl_var *lv[2];
  tl_builder_for_begin(b, TL_LOOP_PARALLEL, ln, fs, 2, 0, lv);
  tl_expr *ij[2] = {V(lv[0]), V(lv[1])};
  tl_builder_store(
      b, Cf, ij, 2,
      tl_builder_cast(b, out,
                      tl_builder_binary(b, TL_OP_ADD, tl_builder_load(b, Af, ij, 2), tl_builder_load(b, Bf, ij, 2))));
  tl_builder_for_end(b);
  copy(Cf, NULL, NULL, 0, C, mins, fs, 2);
  tl_builder_kernel_end(b);
  tl_module *m = NULL;
  cr_assert(tl_builder_finish(b, &m) == TL_OK, "%s", tl_context_last_error(ctx));
  bufs[0] = A, bufs[1] = B, bufs[2] = C;
  return m;
}

static void check_add(int M, int N, tl_dtype out, const char *must, const char *mustnot) {
  tl_buffer *bufs[3];
  tl_module *m = build_add(M, N, out, bufs);
  tl_diag d;
  tl_diag_init(&d);
  bool ok;
  char *text = lower_and_print(m, &d, &ok);
  cr_assert(ok, "%s", d.out.data ? d.out.data : "");
  cr_assert(!strstr(text, "T.copy") && !strstr(text, "T.Parallel") && !strstr(text, "alloc_fragment"), "%s", text);
  if (must) cr_assert(strstr(text, must), "expected '%s' in:\n%s", must, text);
  if (mustnot) cr_assert(!strstr(text, mustnot), "unexpected '%s' in:\n%s", mustnot, text);
  sim s = {0};
  tl_map_init(&s.mem);
  tl_map_init(&s.env);
  double *A = mem_of(&s, bufs[0]), *B = mem_of(&s, bufs[1]), *C = mem_of(&s, bufs[2]);
  for (int i = 0; i < M * N; i++) {
    A[i] = tl_round_to_dtype((double)((i * 37) % 101) / 7.0, TL_FLOAT32);
    B[i] = tl_round_to_dtype((double)((i * 11) % 53) / 3.0, TL_FLOAT32);
    C[i] = NAN;
  }
  run_kernel(&s, m->funcs[0]);
  cr_assert_eq(s.errors, 0, "simulation errors (out-of-bounds access or unknown construct)\n%s", text);
  for (int i = 0; i < M * N; i++) {
    double want = tl_round_to_dtype(tl_round_to_dtype(A[i] + B[i], TL_FLOAT32), out);
    cr_assert(C[i] == want, "C[%d] = %g, want %g", i, C[i], want);
  }
  sim_free(&s);
  free(text);
  tl_diag_free(&d);
  tl_module_destroy(m);
  tl_context_destroy(ctx);
}

Test(lower, elementwise_add_vectorized_no_guards) {
  check_add(64, 256, TL_FLOAT32, "T.Ramp(bx * 128 + T.get_thread_binding(0) % 32 * 4, 1, 4)", " if ");
}

Test(lower, elementwise_add_vectorized_loop) { check_add(64, 256, TL_FLOAT32, "T.vectorized(4)", NULL); }

Test(lower, add_cast_bf16_odd_sizes_guarded_scalar) {
  check_add(67, 131, TL_DT(TL_TYPE_BFLOAT, 16), "< 131", "T.Ramp");
}

Test(lower, add_partial_tiles_vector_rows) {
  /* N multiple of 4: vector accesses stay, rows and columns are guarded */
  check_add(45, 132, TL_FLOAT32, "T.Ramp", NULL);
}

/* 1-D copy through a local buffer with an odd length: vector + scalar tail. */
Test(lower, one_d_tail_and_local) {
  cr_assert(tl_context_create(&ctx) == TL_OK);
  cr_assert(tl_builder_create(ctx, "main", &b) == TL_OK);
  int n = 1003;
  tl_expr *sh[1] = {I(n)};
  tl_buffer *A = tl_builder_param_tensor(b, "A", TL_FLOAT32, sh, 1);
  tl_buffer *B = tl_builder_param_tensor(b, "B", TL_FLOAT16, sh, 1);
  tl_expr *g[1] = {I((n + 255) / 256)};
  const char *nm[1] = {"bx"};
  tl_var *bv[1];
  tl_builder_kernel_begin(b, g, 1, I(64), nm, bv);
  tl_expr *fs[1] = {I(256)};
  tl_buffer *F = tl_builder_alloc(b, TL_SCOPE_FRAGMENT, "F", TL_FLOAT32, fs, 1);
  tl_expr *mins[1] = {mul(V(bv[0]), I(256))};
  copy(A, mins, fs, 1, F, NULL, NULL, 0);
  copy(F, NULL, NULL, 0, B, mins, fs, 1);
  tl_builder_kernel_end(b);
  tl_module *m;
  cr_assert(tl_builder_finish(b, &m) == TL_OK, "%s", tl_context_last_error(ctx));
  tl_diag d;
  tl_diag_init(&d);
  bool ok;
  char *text = lower_and_print(m, &d, &ok);
  cr_assert(ok, "%s", d.out.data ? d.out.data : "");
  cr_assert(strstr(text, "+ 3 < 1003"), "%s", text);
  cr_assert(strstr(text, "T.Ramp"), "%s", text);
  sim s = {0};
  tl_map_init(&s.mem);
  tl_map_init(&s.env);
  double *a = mem_of(&s, A), *o = mem_of(&s, B);
  for (int i = 0; i < n; i++) a[i] = tl_round_to_dtype(i * 0.37 - 100, TL_FLOAT32), o[i] = NAN;
  run_kernel(&s, m->funcs[0]);
  cr_assert_eq(s.errors, 0, "%s", text);
  for (int i = 0; i < n; i++) cr_assert(o[i] == tl_round_to_dtype(a[i], TL_FLOAT16), "B[%d]", i);
  sim_free(&s);
  free(text);
  tl_diag_free(&d);
  tl_module_destroy(m);
  tl_context_destroy(ctx);
}

Test(lower, gemm_sr_form_staged) {
  cr_assert(tl_context_create(&ctx) == TL_OK);
  cr_assert(tl_builder_create(ctx, "main", &b) == TL_OK);
  tl_expr *sh[2] = {I(64), I(64)};
  tl_buffer *A = tl_builder_param_tensor(b, "A", TL_FLOAT16, sh, 2);
  tl_expr *g[1] = {I(1)};
  const char *nm[1] = {"bx"};
  tl_var *bv[1];
  tl_builder_kernel_begin(b, g, 1, I(128), nm, bv);
  tl_buffer *As = tl_builder_alloc(b, TL_SCOPE_SHARED_DYN, "A_s", TL_FLOAT16, sh, 2);
  tl_buffer *Cf = tl_builder_alloc(b, TL_SCOPE_FRAGMENT, "C_f", TL_FLOAT32, sh, 2);
  /* B in a fragment (the "sr" form): lowered through a shared copy of B
   * (issue 14, the gemm-stage pass) */
  tl_buffer *Bf = tl_builder_alloc(b, TL_SCOPE_FRAGMENT, "B_f", TL_FLOAT16, sh, 2);
  tl_tile_arg a[3];
  memset(a, 0, sizeof a);
  for (int i = 0; i < 3; i++) a[i].kind = TL_TILE_ARG_REGION;
  a[0].region.buffer = As;
  a[1].region.buffer = Bf;
  a[2].region.buffer = Cf;
  tl_builder_tile_op(b, "gemm", a, 3, NULL, 0);
  (void)A;
  tl_builder_kernel_end(b);
  tl_module *m;
  cr_assert(tl_builder_finish(b, &m) == TL_OK, "%s", tl_context_last_error(ctx));
  tl_diag d;
  tl_diag_init(&d);
  bool ok;
  char *text = lower_and_print(m, &d, &ok);
  cr_assert(ok, "%s", d.out.data ? d.out.data : "");
  cr_assert(
      text && strstr(text, "B_f_stage = T.alloc_shared((4096,), \"float16\")") && strstr(text, "T.ptx_ldmatrix(B_regs"),
      "%s", text ? text : "");
  free(text);
  tl_diag_free(&d);
  tl_module_destroy(m);
  tl_context_destroy(ctx);
}

/* The PLAN map is a bijection between elements and (thread, register) slots. */
Test(lower, plan_layout_bijection) {
  int64_t shapes[][2] = {{32, 128}, {8, 512}, {1, 4}, {3, 5}, {64, 64}, {1, 1000}};
  for (size_t c = 0; c < sizeof shapes / sizeof shapes[0]; c++)
    for (int64_t T = 32; T <= 256; T *= 2)
      for (int64_t v = 1; v <= 8; v *= 2) {
        int64_t E = shapes[c][0] * shapes[c][1];
        if (shapes[c][1] % v || E % v) continue;
        int64_t nvec = (E + T * v - 1) / (T * v), nregs = nvec * v;
        char *seen = calloc((size_t)(T * nregs), 1);
        for (int64_t f = 0; f < E; f++) {
          int64_t t = (f / v) % T, r = (f / (v * T)) * v + f % v;
          cr_assert(r < nregs && !seen[t * nregs + r]);
          seen[t * nregs + r] = 1;
          cr_assert_eq((r / v) * v * T + t * v + r % v, f); /* the inverse emitted */
        }
        free(seen);
      }
}
