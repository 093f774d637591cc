/* Unit tests of lib/NVPTX: SIMT IR built directly with the tl_ir_*
 * constructors → tl_nvptx_emit → PTX text, checked for the expected
 * directives and instructions and assembled with ptxas for sm_80 and
 * sm_90a (a missing ptxas fails the test: set TL_PTXAS to its path when it
 * is not /usr/local/cuda/bin/ptxas).  Also: the target table, error paths
 * (tile op left, unsupported intrinsic, missing libdevice), and the
 * emission time of a small kernel (printed). */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "IR/tir.h"
#include "NVPTX/nvptx.h"
#include "Support/Hopper/path.h"
#include "tilelang/runtime.h"

/* ------------------------------------------------------------ IR helpers */
#define LOC TL_LOC_NONE
static tl_dtype F32 = {TL_TYPE_FLOAT, 32, 1};
static tl_dtype F64 = {TL_TYPE_FLOAT, 64, 1};
static tl_dtype F16 = {TL_TYPE_FLOAT, 16, 1};
static tl_dtype BF16 = {TL_TYPE_BFLOAT, 16, 1};
static tl_dtype I32 = {TL_TYPE_INT, 32, 1};
static tl_dtype U16 = {TL_TYPE_UINT, 16, 1};
static tl_dtype BOOLT = {TL_TYPE_BOOL, 8, 1};

static tl_module *M;
static tl_expr *ci(int64_t v) { return tl_ir_int(M, LOC, I32, v); }
static tl_expr *cf(double v) { return tl_ir_float(M, LOC, F32, v); }
static tl_expr *var(tl_var *v) { return tl_ir_var(M, LOC, v); }
static tl_expr *bin(tl_binop op, tl_expr *a, tl_expr *b) { return tl_ir_binary(M, LOC, op, a, b); }
static tl_expr *cast(tl_dtype t, tl_expr *x) { return tl_ir_cast(M, LOC, t, x); }
static tl_expr *call(const char *name, int n, tl_expr *a, tl_expr *b, tl_expr *c) {
  tl_expr *args[3] = {a, b, c};
  int op = tl_intrinsic_lookup(name);
  cr_assert_geq(op, 0, "intrinsic %s", name);
  return tl_ir_call(M, LOC, op, n, args);
}
static tl_expr *tid(void) { return call("get_thread_binding", 1, ci(0), NULL, NULL); }
static tl_expr *ld1(tl_buffer *b, tl_expr *i) { return tl_ir_load(M, LOC, b, 1, &i); }
static tl_expr *ld2(tl_buffer *b, tl_expr *i, tl_expr *j) {
  tl_expr *ix[2] = {i, j};
  return tl_ir_load(M, LOC, b, 2, ix);
}
static tl_expr *ramp(tl_expr *base, int lanes) {
  tl_expr *e = tl_arena_alloc(&M->arena, sizeof *e);
  e->kind = TL_EXPR_RAMP;
  e->dtype = base->dtype;
  e->dtype.lanes = (uint16_t)lanes;
  e->u.ramp.base = base;
  e->u.ramp.stride = ci(1);
  return e;
}
/* A vector load A[..., ramp] of dtype elem x lanes (built by hand). */
static tl_expr *vload(tl_buffer *b, tl_expr *idx, int lanes) {
  tl_expr *e = tl_arena_alloc(&M->arena, sizeof *e);
  e->kind = TL_EXPR_LOAD;
  e->dtype = b->dtype;
  e->dtype.lanes = (uint16_t)lanes;
  e->u.load.buffer = b;
  e->u.load.n = 1;
  e->u.load.indices = tl_arena_alloc(&M->arena, sizeof(tl_expr *));
  e->u.load.indices[0] = idx;
  return e;
}
static tl_expr *vbin(tl_binop op, tl_expr *a, tl_expr *b) {
  tl_expr *e = tl_arena_alloc(&M->arena, sizeof *e);
  e->kind = TL_EXPR_BINARY;
  e->dtype = a->dtype;
  e->u.bin.op = op;
  e->u.bin.a = a;
  e->u.bin.b = b;
  return e;
}
static tl_stmt *store(tl_buffer *b, int n, tl_expr *i, tl_expr *j, tl_expr *v) {
  tl_stmt *s = tl_ir_stmt(M, LOC, TL_STMT_STORE);
  s->u.store.buffer = b;
  s->u.store.n = n;
  s->u.store.indices = tl_arena_alloc(&M->arena, 2 * sizeof(tl_expr *));
  s->u.store.indices[0] = i;
  s->u.store.indices[1] = j;
  s->u.store.value = v;
  return s;
}
static tl_stmt *if_(tl_expr *c, tl_stmt *t, tl_stmt *e) {
  tl_stmt *s = tl_ir_stmt(M, LOC, TL_STMT_IF);
  s->u.ifs.cond = c;
  s->u.ifs.then_s = t;
  s->u.ifs.else_s = e;
  return s;
}
static tl_stmt *let(tl_var *v, tl_expr *e) {
  tl_stmt *s = tl_ir_stmt(M, LOC, TL_STMT_LET);
  s->u.let.var = v;
  s->u.let.value = e;
  return s;
}
static tl_stmt *seq(int n, tl_stmt **s) { return tl_ir_seq(M, LOC, n, s); }
static tl_stmt *loop(tl_loop_kind k, tl_var *v, tl_expr *ext, tl_stmt *body) {
  tl_stmt *s = tl_ir_stmt(M, LOC, TL_STMT_FOR);
  s->u.loop.kind = k;
  s->u.loop.nvars = 1;
  s->u.loop.vars = tl_arena_alloc(&M->arena, sizeof(tl_var *));
  s->u.loop.vars[0] = v;
  s->u.loop.mins = tl_arena_alloc(&M->arena, sizeof(tl_expr *));
  s->u.loop.mins[0] = ci(0);
  s->u.loop.extents = tl_arena_alloc(&M->arena, sizeof(tl_expr *));
  s->u.loop.extents[0] = ext;
  s->u.loop.num_stages = -1;
  s->u.loop.body = body;
  return s;
}
static tl_stmt *alloc_stmt(tl_buffer *b) {
  tl_stmt *s = tl_ir_stmt(M, LOC, TL_STMT_ALLOC);
  s->u.alloc.buffer = b;
  return s;
}
static tl_stmt *eval(tl_expr *e) {
  tl_stmt *s = tl_ir_stmt(M, LOC, TL_STMT_EVAL);
  s->u.eval.value = e;
  return s;
}
static tl_buffer *buf1(const char *name, tl_dtype t, tl_scope sc, tl_expr *n0) {
  return tl_ir_new_buffer(M, LOC, name, t, sc, 1, &n0);
}
static tl_buffer *buf2(const char *name, tl_dtype t, tl_scope sc, tl_expr *n0, tl_expr *n1) {
  tl_expr *sh[2] = {n0, n1};
  return tl_ir_new_buffer(M, LOC, name, t, sc, 2, sh);
}

/* The function main(params...) { with T.Kernel(grid, threads) as bx: body } */
typedef struct fb {
  tl_primfunc *f;
  tl_param params[8];
  int np;
  tl_var *dyn[4];
  int nd;
  tl_var *bx;
} fb;
static void fb_begin(fb *b) {
  M = tl_module_new();
  cr_assert_not_null(M);
  memset(b, 0, sizeof *b);
  b->f = tl_arena_alloc(&M->arena, sizeof *b->f);
  b->f->name = tl_intern_str(&M->names, "main");
  b->bx = tl_ir_new_var(M, LOC, "bx", I32, TL_VAR_BLOCK);
}
static void fb_tensor(fb *b, tl_buffer *t) {
  b->params[b->np].kind = TL_PARAM_TENSOR;
  b->params[b->np++].buffer = t;
}
static tl_var *fb_scalar(fb *b, const char *name, tl_dtype t) {
  tl_var *v = tl_ir_new_var(M, LOC, name, t, TL_VAR_PARAM);
  b->params[b->np].kind = TL_PARAM_SCALAR;
  b->params[b->np++].var = v;
  return v;
}
static tl_var *fb_dynamic(fb *b, const char *name) {
  return b->dyn[b->nd++] = tl_ir_new_var(M, LOC, name, I32, TL_VAR_DYNAMIC);
}
static tl_module *fb_end(fb *b, tl_expr *grid, int threads, tl_stmt *body) {
  tl_primfunc *f = b->f;
  f->nparams = b->np;
  f->params = tl_arena_alloc(&M->arena, sizeof(tl_param) * (size_t)(b->np ? b->np : 1));
  memcpy(f->params, b->params, sizeof(tl_param) * (size_t)b->np);
  f->ndynamic = b->nd;
  f->dynamic = tl_arena_alloc(&M->arena, sizeof(tl_var *) * 4);
  memcpy(f->dynamic, b->dyn, sizeof(tl_var *) * (size_t)b->nd);
  tl_stmt *k = tl_ir_stmt(M, LOC, TL_STMT_KERNEL);
  k->u.kernel.ngrid = 1;
  k->u.kernel.grid[0] = grid;
  k->u.kernel.block_vars[0] = b->bx;
  k->u.kernel.threads = ci(threads);
  k->u.kernel.body = body;
  f->body = k;
  M->nfuncs = 1;
  M->funcs = tl_arena_alloc(&M->arena, sizeof(tl_primfunc *));
  M->funcs[0] = f;
  return M;
}

/* ------------------------------------------------------------ kernels */
/* C[i] = A[i] + B[i], i = bx*256 + tid, guarded by i < n (n static). */
static tl_module *k_add_scalar(void) {
  fb b;
  fb_begin(&b);
  int n = 1000003;
  tl_buffer *A = buf1("A", F32, TL_SCOPE_GLOBAL, ci(n)), *B = buf1("B", F32, TL_SCOPE_GLOBAL, ci(n));
  tl_buffer *C = buf1("C", F32, TL_SCOPE_GLOBAL, ci(n));
  fb_tensor(&b, A), fb_tensor(&b, B), fb_tensor(&b, C);
  tl_var *i = tl_ir_new_var(M, LOC, "i", I32, TL_VAR_LET);
  tl_stmt *s[2] = {let(i, bin(TL_OP_ADD, bin(TL_OP_MUL, var(b.bx), ci(256)), tid())),
                   if_(bin(TL_OP_LT, var(i), ci(n)),
                       store(C, 1, var(i), NULL, bin(TL_OP_ADD, ld1(A, var(i)), ld1(B, var(i)))), NULL)};
  return fb_end(&b, ci((n + 255) / 256), 256, seq(2, s));
}

/* 4-wide: C[ramp(4*(bx*256+tid), 4)] = A[...] + B[...] over n = 1 << 20. */
static tl_module *k_add_vec4(void) {
  fb b;
  fb_begin(&b);
  int n = 1 << 20;
  tl_buffer *A = buf1("A", F32, TL_SCOPE_GLOBAL, ci(n)), *B = buf1("B", F32, TL_SCOPE_GLOBAL, ci(n));
  tl_buffer *C = buf1("C", F32, TL_SCOPE_GLOBAL, ci(n));
  fb_tensor(&b, A), fb_tensor(&b, B), fb_tensor(&b, C);
  tl_var *i = tl_ir_new_var(M, LOC, "i", I32, TL_VAR_LET);
  tl_stmt *s[2] = {
      let(i, bin(TL_OP_MUL, bin(TL_OP_ADD, bin(TL_OP_MUL, var(b.bx), ci(256)), tid()), ci(4))),
      store(C, 1, ramp(var(i), 4), NULL, vbin(TL_OP_ADD, vload(A, ramp(var(i), 4), 4), vload(B, ramp(var(i), 4), 4)))};
  return fb_end(&b, ci(n / 1024), 256, seq(2, s));
}

/* Math and casts: X f32[n] → Z f32, H f16, Bf bf16, I int32, W f64. */
static tl_module *k_math(void) {
  fb b;
  fb_begin(&b);
  tl_var *n = fb_dynamic(&b, "n");
  tl_buffer *X = buf1("X", F32, TL_SCOPE_GLOBAL, var(n)), *Z = buf1("Z", F32, TL_SCOPE_GLOBAL, var(n));
  tl_buffer *H = buf1("H", F16, TL_SCOPE_GLOBAL, var(n)), *Bf = buf1("Bf", BF16, TL_SCOPE_GLOBAL, var(n));
  tl_buffer *I = buf1("I", I32, TL_SCOPE_GLOBAL, var(n)), *W = buf1("W", F64, TL_SCOPE_GLOBAL, var(n));
  tl_buffer *Q = buf1("Q", BOOLT, TL_SCOPE_GLOBAL, var(n));
  fb_tensor(&b, X), fb_tensor(&b, Z), fb_tensor(&b, H), fb_tensor(&b, Bf), fb_tensor(&b, I);
  fb_tensor(&b, W), fb_tensor(&b, Q);
  tl_var *i = tl_ir_new_var(M, LOC, "i", I32, TL_VAR_LET);
  tl_var *v = tl_ir_new_var(M, LOC, "v", F32, TL_VAR_LET);
  tl_var *h = tl_ir_new_var(M, LOC, "h", F16, TL_VAR_LET);
  tl_var *bf = tl_ir_new_var(M, LOC, "bf", BF16, TL_VAR_LET);
  tl_expr *x = var(v);
  tl_expr *z = bin(TL_OP_ADD, call("exp", 1, x, NULL, NULL), call("tanh", 1, x, NULL, NULL));
  z = bin(TL_OP_ADD, z, call("erf", 1, x, NULL, NULL));
  z = bin(TL_OP_ADD, z, call("round", 1, x, NULL, NULL));
  z = bin(TL_OP_ADD, z, call("pow", 2, call("abs", 1, x, NULL, NULL), cf(1.5), NULL));
  z = bin(TL_OP_ADD, z, call("sigmoid", 1, x, NULL, NULL));
  z = bin(TL_OP_ADD, z, call("fma", 3, x, x, cf(2.0)));
  z = bin(TL_OP_ADD, z, call("__exp", 1, x, NULL, NULL));
  z = bin(TL_OP_ADD, z, bin(TL_OP_MAX, call("sqrt", 1, x, NULL, NULL), call("rsqrt", 1, x, NULL, NULL)));
  z = bin(TL_OP_ADD, z, call("floor", 1, call("log2", 1, x, NULL, NULL), NULL, NULL));
  tl_expr *iv = cast(I32, bin(TL_OP_MUL, x, cf(100.0)));
  iv = bin(TL_OP_ADD, bin(TL_OP_FLOORDIV, iv, ci(7)), bin(TL_OP_FLOORMOD, iv, ci(-5)));
  tl_expr *hv = bin(TL_OP_MUL, var(h), var(h));                           /* native f16 */
  hv = bin(TL_OP_ADD, hv, cast(F16, call("exp", 1, var(h), NULL, NULL))); /* via f32 */
  tl_expr *bv = bin(TL_OP_ADD, bin(TL_OP_MUL, var(bf), var(bf)), cast(BF16, var(i)));
  tl_expr *wv = bin(TL_OP_ADD, call("exp", 1, cast(F64, x), NULL, NULL), cast(F64, var(i)));
  tl_stmt *body[] = {
      let(v, ld1(X, var(i))),
      let(h, cast(F16, x)),
      let(bf, cast(BF16, cast(F64, x))),
      store(Z, 1, var(i), NULL, z),
      store(H, 1, var(i), NULL, hv),
      store(Bf, 1, var(i), NULL, bv),
      store(I, 1, var(i), NULL, iv),
      store(W, 1, var(i), NULL, wv),
      store(Q, 1, var(i), NULL, bin(TL_OP_AND, bin(TL_OP_GT, x, cf(0.5)), call("isfinite", 1, x, NULL, NULL))),
  };
  tl_stmt *s[2] = {let(i, bin(TL_OP_ADD, bin(TL_OP_MUL, var(b.bx), ci(128)), tid())),
                   if_(bin(TL_OP_LT, var(i), var(n)), seq(9, body), NULL)};
  tl_expr *grid = call("ceildiv", 2, var(n), ci(128), NULL);
  return fb_end(&b, grid, 128, seq(2, s));
}

/* Dynamic dim + scalar param, shared.dyn + local + unroll/serial loops +
 * barrier: B[bx, t] = alpha * sum_k S[(t + k) % 64] where S = A[bx, :]. */
static tl_module *k_dyn_scalar(void) {
  fb b;
  fb_begin(&b);
  tl_var *m = fb_dynamic(&b, "m");
  tl_buffer *A = buf2("A", F32, TL_SCOPE_GLOBAL, var(m), ci(64));
  tl_buffer *B = buf2("B", F32, TL_SCOPE_GLOBAL, var(m), ci(64));
  fb_tensor(&b, A), fb_tensor(&b, B);
  tl_var *alpha = fb_scalar(&b, "alpha", F32);
  tl_var *flag = fb_scalar(&b, "flag", BOOLT);
  tl_buffer *S = buf1("S", F32, TL_SCOPE_SHARED_DYN, ci(64));
  tl_buffer *S2 = buf1("S2", U16, TL_SCOPE_SHARED_DYN, ci(3));
  tl_buffer *L = buf1("L", F32, TL_SCOPE_LOCAL, ci(4));
  tl_buffer *acc = buf1("acc", F32, TL_SCOPE_LOCAL_VAR, ci(1));
  acc->init = cf(0.0);
  tl_var *k = tl_ir_new_var(M, LOC, "k", I32, TL_VAR_LOOP);
  tl_var *j = tl_ir_new_var(M, LOC, "j", I32, TL_VAR_LOOP);
  tl_expr *t = tid();
  tl_stmt *ub[] = {store(L, 1, var(j), NULL, ld1(S, bin(TL_OP_FLOORMOD, bin(TL_OP_ADD, t, var(j)), ci(64))))};
  tl_stmt *sb[] = {store(acc, 1, ci(0), NULL, bin(TL_OP_ADD, ld1(acc, ci(0)), ld1(L, var(k))))};
  tl_stmt *body[] = {
      alloc_stmt(S),
      alloc_stmt(S2),
      alloc_stmt(L),
      alloc_stmt(acc),
      store(S, 1, t, NULL, ld2(A, var(b.bx), t)),
      if_(bin(TL_OP_LT, t, ci(3)), store(S2, 1, t, NULL, cast(U16, t)), NULL),
      eval(call("sync_threads", 0, NULL, NULL, NULL)),
      loop(TL_LOOP_UNROLL, j, ci(4), seq(1, ub)),
      loop(TL_LOOP_SERIAL, k, ci(4), seq(1, sb)),
      if_(var(flag), store(B, 2, var(b.bx), t, bin(TL_OP_MUL, var(alpha), ld1(acc, ci(0)))),
          store(B, 2, var(b.bx), t, cast(F32, ld1(S2, ci(1))))),
  };
  return fb_end(&b, var(m), 64, seq(10, body));
}

/* Conversions with double rounding traps: D f64, Iv i32 → bf16(D), bf16(Iv),
 * f16(D), int8(D) (saturating), round(f32(D)), Iv // 3 + Iv % -3 * 1000. */
static tl_module *k_conv(void) {
  fb b;
  fb_begin(&b);
  tl_var *n = fb_dynamic(&b, "n");
  tl_dtype S8 = {TL_TYPE_INT, 8, 1};
  tl_buffer *D = buf1("D", F64, TL_SCOPE_GLOBAL, var(n)), *Iv = buf1("Iv", I32, TL_SCOPE_GLOBAL, var(n));
  tl_buffer *B1 = buf1("B1", BF16, TL_SCOPE_GLOBAL, var(n)), *B2 = buf1("B2", BF16, TL_SCOPE_GLOBAL, var(n));
  tl_buffer *H1 = buf1("H1", F16, TL_SCOPE_GLOBAL, var(n)), *C8 = buf1("C8", S8, TL_SCOPE_GLOBAL, var(n));
  tl_buffer *R = buf1("R", F32, TL_SCOPE_GLOBAL, var(n)), *FD = buf1("FD", I32, TL_SCOPE_GLOBAL, var(n));
  fb_tensor(&b, D), fb_tensor(&b, Iv), fb_tensor(&b, B1), fb_tensor(&b, B2), fb_tensor(&b, H1);
  fb_tensor(&b, C8), fb_tensor(&b, R), fb_tensor(&b, FD);
  tl_var *i = tl_ir_new_var(M, LOC, "i", I32, TL_VAR_LET);
  tl_expr *d = ld1(D, var(i)), *iv = ld1(Iv, var(i));
  tl_stmt *body[] = {
      store(B1, 1, var(i), NULL, cast(BF16, d)),
      store(B2, 1, var(i), NULL, cast(BF16, iv)),
      store(H1, 1, var(i), NULL, cast(F16, d)),
      store(C8, 1, var(i), NULL, cast(S8, d)),
      store(R, 1, var(i), NULL, call("round", 1, cast(F32, d), NULL, NULL)),
      store(FD, 1, var(i), NULL,
            bin(TL_OP_ADD, bin(TL_OP_FLOORDIV, iv, ci(3)), bin(TL_OP_MUL, bin(TL_OP_FLOORMOD, iv, ci(-3)), ci(1000)))),
  };
  tl_stmt *s[2] = {let(i, bin(TL_OP_ADD, bin(TL_OP_MUL, var(b.bx), ci(128)), tid())),
                   if_(bin(TL_OP_LT, var(i), var(n)), seq(6, body), NULL)};
  return fb_end(&b, call("ceildiv", 2, var(n), ci(128), NULL), 128, seq(2, s));
}

/* Warp shuffles (f32, f64, f16) and T.max_value / T.min_value. */
static tl_module *k_shfl(void) {
  fb b;
  fb_begin(&b);
  tl_buffer *X = buf1("X", F32, TL_SCOPE_GLOBAL, ci(32)), *Y = buf1("Y", F64, TL_SCOPE_GLOBAL, ci(32));
  tl_buffer *H = buf1("H", F16, TL_SCOPE_GLOBAL, ci(32));
  fb_tensor(&b, X), fb_tensor(&b, Y), fb_tensor(&b, H);
  tl_var *v = tl_ir_new_var(M, LOC, "v", F32, TL_VAR_LET);
  tl_expr *x = var(v);
  tl_expr *r = bin(TL_OP_ADD, x, call("shfl_xor", 2, x, ci(16), NULL));
  r = bin(TL_OP_MAX, r, call("min_value", 1, tl_ir_string(M, LOC, "float32"), NULL, NULL));
  tl_expr *d = cast(F64, x);
  d = bin(TL_OP_ADD, d, call("shfl_down", 3, d, ci(1), ci(16)));
  tl_expr *h = cast(F16, x);
  h = call("shfl_sync", 3, tl_ir_int(M, LOC, (tl_dtype){TL_TYPE_UINT, 32, 1}, 0xFFFFFFFF), h, ci(0));
  tl_stmt *s[4] = {let(v, ld1(X, tid())), store(X, 1, tid(), NULL, r), store(Y, 1, tid(), NULL, d),
                   store(H, 1, tid(), NULL, h)};
  return fb_end(&b, ci(1), 32, seq(4, s));
}

/* ------------------------------------------------------------ checks */
static const char *ptxas_path(void) {
  const char *p = getenv("TL_PTXAS");
  return p && *p ? p : "/usr/local/cuda/bin/ptxas";
}

/* Assembles ptx with ptxas for arch; fails the test on error or when
 * ptxas is missing. */
static void check_ptxas(const char *ptx, const char *arch) {
  const char *px = ptxas_path();
  cr_assert_eq(access(px, X_OK), 0, "ptxas not found at %s (set TL_PTXAS)", px);
  char path[] = "/tmp/tl_nvptx_testXXXXXX";
  int fd = mkstemp(path);
  cr_assert_geq(fd, 0);
  size_t len = strlen(ptx);
  cr_assert_eq(write(fd, ptx, len), (ssize_t)len);
  close(fd);
  char *cmd = NULL, outp[64];
  snprintf(outp, sizeof outp, "%s.log", path);
  cr_assert_geq(asprintf(&cmd, "'%s' -arch=%s '%s' -o /dev/null > '%s' 2>&1", px, arch, path, outp), 0);
  int rc = system(cmd);
  free(cmd);
  char log[4096] = "";
  FILE *f = fopen(outp, "r");
  if (f) {
    size_t n = fread(log, 1, sizeof log - 1, f);
    log[n] = 0;
    fclose(f);
  }
  unlink(path);
  unlink(outp);
  cr_assert(rc != -1 && WIFEXITED(rc) && WEXITSTATUS(rc) == 0, "ptxas -arch=%s failed:\n%s\n--- PTX ---\n%s", arch, log,
            ptx);
}

static tl_codegen_result emit_ok(tl_module *m, const char *target) {
  const tl_target *t = tl_target_lookup(target);
  cr_assert_not_null(t);
  tl_diag d;
  tl_diag_init(&d);
  tl_codegen_result r;
  bool ok = tl_nvptx_emit(m, t, &d, &r);
  cr_assert(ok, "emit for %s failed:\n%s", target, d.out.data ? d.out.data : "");
  cr_assert_not_null(r.ptx);
  cr_assert_not_null(r.llvm_ir);
  if (getenv("TL_NVPTX_TEST_DUMP"))
    fprintf(stderr, "==== %s LLVM IR ====\n%s\n==== %s PTX ====\n%s\n", target, r.llvm_ir, target, r.ptx);
  tl_diag_free(&d);
  return r;
}

/* Emits for sm_80 (ptxas sm_80 and sm_90a) and sm_90a (ptxas sm_90a); calls
 * check(ptx) on both. */
static void emit_both_named(const char *kname, tl_module *(*make)(void),
                            void (*check)(const char *ptx, const char *target)) {
  const char *targets[2] = {"sm_80", "sm_90a"};
  for (int k = 0; k < 2; k++) {
    tl_module *m = make();
    tl_codegen_result r = emit_ok(m, targets[k]);
    cr_assert(strstr(r.ptx, ".entry main"), "no .entry main:\n%s", r.ptx);
    cr_assert(strstr(r.ptx, ".maxntid"), "no .maxntid:\n%s", r.ptx);
    char tline[32];
    snprintf(tline, sizeof tline, ".target %s", targets[k]);
    cr_assert(strstr(r.ptx, tline), "no %s", tline);
    if (check) check(r.ptx, targets[k]);
    const char *dir = getenv("TL_NVPTX_TEST_PTX_DIR"); /* keep the PTX (GPU checks) */
    if (dir && kname) {
      char *path = NULL;
      cr_assert_geq(asprintf(&path, "%s/%s_%s.ptx", dir, kname, targets[k]), 0);
      FILE *pf = fopen(path, "w");
      cr_assert_not_null(pf, "cannot write %s", path);
      fputs(r.ptx, pf);
      fclose(pf);
      free(path);
    }
    if (k == 0) check_ptxas(r.ptx, "sm_80");
    check_ptxas(r.ptx, "sm_90a");
    tl_codegen_result_free(&r);
    tl_module_destroy(m);
  }
}

#define emit_both(make, check) emit_both_named(#make, make, check)

static void has(const char *ptx, const char *what) { cr_assert(strstr(ptx, what), "PTX lacks '%s':\n%s", what, ptx); }

static void check_add_scalar(const char *ptx, const char *target) {
  (void)target;
  has(ptx, ".maxntid 256, 1, 1");
  has(ptx, "ld.global.nc.f32");
  has(ptx, "add.rn.f32");
  has(ptx, "st.global.f32");
  has(ptx, "%ctaid.x");
  has(ptx, "%tid.x");
}
static void check_add_vec4(const char *ptx, const char *target) {
  (void)target;
  has(ptx, "ld.global.nc.v4.f32");
  has(ptx, "st.global.v4.f32");
}
static void check_math(const char *ptx, const char *target) {
  has(ptx, "cvt.rn.f16.f32");
  has(ptx, "cvt.rn.bf16.f32");
  has(ptx, "mul.rn.f16"); /* native half multiply */
  has(ptx, "ex2.approx"); /* exp through libdevice / fast exp */
  has(ptx, "fma.rn.f32");
  has(ptx, "cvt.rzi.s32.f32");
  has(ptx, "sqrt.rn.f32");
  has(ptx, "max.f32");
  if (!strcmp(target, "sm_90a")) has(ptx, "mul.rn.bf16");
  else cr_assert(!strstr(ptx, "mul.rn.bf16"), "bf16 multiply on %s", target);
}
static void check_dyn(const char *ptx, const char *target) {
  (void)target;
  has(ptx, ".param .f32 main_param_2");
  has(ptx, ".param .u32 main_param_4");
  has(ptx, ".extern .shared .align 16 .b8 tl_smem[]");
  has(ptx, "bar.sync");
  has(ptx, "ld.shared.f32");
}

Test(nvptx, target_table) {
  const tl_target *t = tl_target_lookup("sm_80");
  cr_assert_not_null(t);
  cr_assert_eq(t->sm, 80);
  cr_assert(!t->native_bf16_arith);
  t = tl_target_lookup("sm_90a");
  cr_assert_not_null(t);
  cr_assert(t->arch_specific);
  cr_assert_eq(t->ptx_version, 80);
  cr_assert_eq(t->max_smem_per_block, 227 * 1024);
  cr_assert_not_null(tl_target_lookup("sm_86"));
  cr_assert_not_null(tl_target_lookup("sm_89"));
  cr_assert_not_null(tl_target_lookup("sm_90"));
  cr_assert_null(tl_target_lookup("sm_70"));
  cr_assert_null(tl_target_lookup(NULL));
}

/* The capability flags (lib/Support/target.c, PTX ISA Target ISA notes):
 * Ampere/Ada have cp.async, ldmatrix and the sm_80 mma.sync shapes; sm_90
 * adds TMA and clusters; only sm_90a has wgmma and setmaxnreg. */
Test(nvptx, target_capabilities) {
  static const char *const names[] = {"sm_80", "sm_86", "sm_89", "sm_90", "sm_90a"};
  static const int ptx[] = {70, 71, 78, 80, 80};
  static const int smem[] = {166912, 101376, 101376, 232448, 232448};
  for (int i = 0; i < 5; i++) {
    const tl_target *t = tl_target_lookup(names[i]);
    cr_assert_not_null(t);
    cr_expect_str_eq(t->name, names[i]);
    cr_expect_eq(t->ptx_version, ptx[i], "%s", names[i]);
    cr_expect_eq(t->max_smem_per_block, smem[i], "%s", names[i]);
    cr_expect(t->cp_async && t->ldmatrix, "%s", names[i]);
    cr_expect(t->mma_shapes & TL_MMA_M16N8K16_F16, "%s", names[i]);
    cr_expect(t->mma_shapes & TL_MMA_M16N8K16_BF16, "%s", names[i]);
    cr_expect_eq(!!(t->mma_shapes & TL_MMA_M16N8K32_E4M3), t->sm >= 89, "%s", names[i]); /* fp8 mma: sm_89 */
    cr_expect_eq(t->tma, t->sm >= 90, "%s", names[i]);
    cr_expect_eq(t->clusters, t->sm >= 90, "%s", names[i]);
    cr_expect_eq(t->atomic_add_bf16x2, t->sm >= 90, "%s", names[i]);
    cr_expect_eq(t->wgmma, i == 4, "%s", names[i]);
    cr_expect_eq(t->setmaxnreg, i == 4, "%s", names[i]);
  }
}

Test(nvptx, target_names_from_the_table) {
  cr_expect_str_eq(tl_target_names(), "sm_80, sm_86, sm_89, sm_90 or sm_90a");
  cr_expect_str_eq(tl_target_list(), tl_target_names());
  cr_expect(tl_target_supported("sm_89") && !tl_target_supported("sm_100") && !tl_target_supported(NULL));
  /* the default without a device is the table's; "auto" (NULL) resolves to the device's, a name to itself */
  cr_expect_str_eq(tl_target_default()->name, "sm_80");
  cr_expect_str_eq(tl_target_resolve(NULL), tl_device_default_target());
  cr_expect_str_eq(tl_target_resolve("sm_90a"), "sm_90a");
}

Test(nvptx, pass_config_keys) {
  cr_expect_eq(tl_pass_config_index("tl.enable_fast_math"), TL_PC_FAST_MATH);
  cr_expect_eq(tl_pass_config_index("tl.disable_wgmma"), TL_PC_DISABLE_WGMMA);
  cr_expect_eq(tl_pass_config_index("tl.disable_tma_lower"), TL_PC_DISABLE_TMA_LOWER);
  cr_expect_eq(tl_pass_config_index("tl.config_index_bitwidth"), TL_PC_INDEX_BITWIDTH_64);
  cr_expect_eq(tl_pass_config_index("tl.enable_magic"), -1);
  cr_expect_eq(tl_pass_config_index(NULL), -1);
  tl_pass_configs c = {0};
  *tl_pass_config_field(&c, TL_PC_DISABLE_TMA_LOWER) = true;
  cr_expect(c.disable_tma_lower && !c.disable_wgmma && !c.disable_warp_specialized);
  cr_expect(tl_pass_config_get(&c, TL_PC_DISABLE_TMA_LOWER) && !tl_pass_config_get(&c, TL_PC_DISABLE_WGMMA));
  *tl_pass_config_field(&c, TL_PC_INDEX_BITWIDTH_64) = true;
  cr_expect(c.index_bitwidth_64);
  cr_expect_str_eq(tl_pass_config_value_text(TL_PC_INDEX_BITWIDTH_64, true), "64");
  cr_expect_str_eq(tl_pass_config_value_text(TL_PC_DISABLE_WGMMA, false), "False");
  cr_expect(!tl_pass_config_get(&c, TL_PASS_CONFIG_COUNT));
  cr_expect_null(tl_pass_config_field(&c, TL_PASS_CONFIG_COUNT));
  /* the kinds: only the attention schedules remember a given False */
  tl_pass_config_mark_given(&c, TL_PC_DISABLE_WGMMA);
  cr_expect(!tl_pass_config_any_schedule_given(&c));
  tl_pass_config_mark_given(&c, TL_PC_ATTENTION_OVERLAP);
  cr_expect(tl_pass_config_any_schedule_given(&c) && tl_pass_config_given(&c, TL_PC_ATTENTION_OVERLAP));
  cr_expect_eq(TL_COMPILE_ATTENTION_SCHEDULE,
               TL_COMPILE_ATTENTION_PINGPONG | TL_COMPILE_ATTENTION_OVERLAP | TL_COMPILE_ATTENTION_PERSISTENT);
  /* the flag bits are the public ABI: unchanged by the table */
  cr_expect_eq(TL_COMPILE_FAST_MATH, 1u << 2);
  cr_expect_eq(TL_COMPILE_DISABLE_WGMMA, 1u << 3);
  cr_expect_eq(TL_COMPILE_ATTENTION_PERSISTENT, 1u << 10);
  bool on = false;
  cr_expect(tl_pass_config_parse_value(TL_PC_INDEX_BITWIDTH_64, "64", &on) && on);
  cr_expect(!tl_pass_config_parse_value(TL_PC_INDEX_BITWIDTH_64, "True", &on));
  cr_expect(tl_pass_config_parse_value(TL_PC_DISABLE_WGMMA, "false", &on) && !on);
  cr_expect(!tl_pass_config_parse_value(TL_PC_DISABLE_WGMMA, "64", &on));
}

/* one Hopper-path predicate for the lowering and the tile-config tables */
Test(nvptx, hopper_path_decision) {
  tl_pass_configs pc = {0};
  cr_expect_null(tl_hopper_path_refusal(tl_target_lookup("sm_90a"), &pc));
  cr_expect_str_eq(tl_hopper_path_refusal(tl_target_lookup("sm_90"), &pc), "the target has no wgmma (sm_90a has)");
  cr_expect_str_eq(tl_hopper_path_refusal(tl_target_lookup("sm_80"), &pc), "the target has no wgmma/TMA");
  pc = tl_pass_configs_from_flags(TL_COMPILE_DISABLE_TMA_LOWER);
  cr_expect_str_eq(tl_hopper_path_refusal(tl_target_lookup("sm_90a"), &pc), "tl.disable_tma_lower is set");
  cr_expect(tl_gemm_configs_use_hopper("sm_90a", 0) && !tl_gemm_configs_use_hopper("sm_90", 0));
  cr_expect(!tl_gemm_configs_use_hopper("sm_90a", TL_COMPILE_DISABLE_WARP_SPECIALIZED));
}

Test(nvptx, add_scalar) { emit_both(k_add_scalar, check_add_scalar); }
Test(nvptx, add_vec4) { emit_both(k_add_vec4, check_add_vec4); }
Test(nvptx, math_and_casts) { emit_both(k_math, check_math); }
Test(nvptx, dynamic_dim_scalar_param_shared) {
  emit_both(k_dyn_scalar, check_dyn);
  tl_module *m = k_dyn_scalar();
  tl_codegen_result r = emit_ok(m, "sm_80");
  /* S: 64 f32 at 0, S2: 3 u16 at 256 → 262 bytes */
  cr_assert_eq(m->funcs[0]->smem_bytes, 262);
  tl_codegen_result_free(&r);
  tl_module_destroy(m);
}

static void check_shfl(const char *ptx, const char *target) {
  (void)target;
  has(ptx, "shfl.sync.bfly.b32");
  has(ptx, "shfl.sync.down.b32");
  has(ptx, "shfl.sync.idx.b32");
  has(ptx, "0fFF7FFFFF"); /* -FLT_MAX */
}
static void check_conv(const char *ptx, const char *target) {
  has(ptx, "cvt.rn.f16.f64");
  has(ptx, "cvt.rzi.s16.f64"); /* fptosi.sat.i8: clamp, then convert */
  if (!strcmp(target, "sm_80")) has(ptx, "cvt.rn.bf16.f32");
}
Test(nvptx, conversions) { emit_both(k_conv, check_conv); }
Test(nvptx, warp_shuffle_and_limits) { emit_both(k_shfl, check_shfl); }

Test(nvptx, other_targets) {
  const char *names[] = {"sm_86", "sm_89", "sm_90"};
  for (int k = 0; k < 3; k++) {
    tl_module *m = k_math();
    tl_codegen_result r = emit_ok(m, names[k]);
    check_ptxas(r.ptx, names[k]);
    tl_codegen_result_free(&r);
    tl_module_destroy(m);
  }
}

/* Errors come back as diagnostics, never as an abort. */
Test(nvptx, errors) {
  const tl_target *t = tl_target_lookup("sm_80");
  /* a tile op left in the IR */
  tl_module *m = k_add_scalar();
  tl_stmt *tile = tl_ir_stmt(M, (tl_loc){"k.py", 3, 5}, TL_STMT_TILE);
  tile->u.tile.op = TL_TILE_REDUCE_MAX;
  tl_stmt *s[2] = {tile, m->funcs[0]->body->u.kernel.body};
  m->funcs[0]->body->u.kernel.body = seq(2, s);
  tl_diag d;
  tl_diag_init(&d);
  tl_codegen_result r;
  cr_assert(!tl_nvptx_emit(m, t, &d, &r));
  cr_assert_null(r.ptx);
  cr_assert(strstr(d.out.data, "k.py:3:5: error: T.reduce_max reached code generation"), "%s", d.out.data);
  tl_diag_free(&d);
  tl_module_destroy(m);

  /* libdevice missing */
  m = k_math();
  tl_diag_init(&d);
  tl_nvptx_options o = {.libdevice_path = "/nonexistent/libdevice.10.bc"};
  cr_assert(!tl_nvptx_emit_ex(m, t, &o, &d, &r));
  cr_assert(strstr(d.out.data, "cannot read libdevice"), "%s", d.out.data);
  tl_diag_free(&d);
  tl_module_destroy(m);

  /* too many threads */
  m = k_add_scalar();
  m->funcs[0]->body->u.kernel.threads = ci(2048);
  tl_diag_init(&d);
  cr_assert(!tl_nvptx_emit(m, t, &d, &r));
  cr_assert(strstr(d.out.data, "threads=2048"), "%s", d.out.data);
  tl_diag_free(&d);
  tl_module_destroy(m);
}

static double now_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

Test(nvptx, emission_time) {
  const tl_target *t = tl_target_lookup("sm_90a");
  for (int round = 0; round < 2; round++) {
    tl_module *(*mk[2])(void) = {k_add_vec4, k_math};
    const char *nm[2] = {"add_vec4", "math (libdevice)"};
    for (int k = 0; k < 2; k++) {
      double best = 1e9;
      tl_codegen_result r;
      for (int it = 0; it < 5; it++) {
        tl_module *m = mk[k]();
        tl_diag d;
        tl_diag_init(&d);
        double t0 = now_ms();
        cr_assert(tl_nvptx_emit(m, t, &d, &r));
        double dt = now_ms() - t0;
        if (dt < best) best = dt;
        if (it < 4) tl_codegen_result_free(&r);
        tl_diag_free(&d);
        tl_module_destroy(m);
      }
      if (round == 1)
        fprintf(stderr, "emission %s sm_90a: best of 5 %.2f ms (build %.2f, link %.2f, O3 %.2f, PTX %.2f)\n", nm[k],
                best, r.ms_build, r.ms_link, r.ms_opt, r.ms_emit);
      tl_codegen_result_free(&r);
    }
  }
}
