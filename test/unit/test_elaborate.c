/* Unit tests of the elaborator (lib/Frontend/elaborate.c): factories and bare
 * prim_funcs become the expected IR (params, out_idx, kernel, regions with
 * corner extents, loops, lets, stores, tile-op attributes), -D bindings and
 * their errors with notes, Python constant semantics (floor division,
 * overflow), dynamic symbols, error locations, one error per fault
 * (poisoned names do not cascade), depth limits, and robustness on
 * truncated and mutated input (run under the sanitizers in CI). */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "IR/tir.h"
#include "Support/context.h"
#include "tilelang/ir.h"

typedef struct res {
  tl_module *m;
  tl_diag d;
  bool ok;
} res;

static res *run_n(const char *src, size_t len, const tl_define *defs, size_t ndefs) {
  res *r = calloc(1, sizeof *r);
  cr_assert_not_null(r);
  r->m = tl_module_new();
  cr_assert_not_null(r->m);
  tl_diag_init(&r->d);
  r->ok = tl_frontend_parse(r->m, &r->d, src, len, "t.py", defs, ndefs);
  return r;
}
static res *run(const char *src) { return run_n(src, strlen(src), NULL, 0); }
static res *run_d(const char *src, const tl_define *defs, size_t n) { return run_n(src, strlen(src), defs, n); }
static void done(res *r) {
  tl_diag_free(&r->d);
  tl_module_destroy(r->m);
  free(r);
}
static const char *diag_text(res *r) { return r->d.out.data ? r->d.out.data : ""; }

static void expect_error(const char *src, int line, int col, const char *msg) {
  res *r = run(src);
  cr_expect(!r->ok, "expected an error for:\n%s", src);
  cr_expect_eq(r->d.first_error.line, line, "line %d != %d; diag:\n%s", r->d.first_error.line, line, diag_text(r));
  cr_expect_eq(r->d.first_error.col, col, "col %d != %d; diag:\n%s", r->d.first_error.col, col, diag_text(r));
  cr_expect(r->d.first_message && strstr(r->d.first_message, msg), "message '%s' not in:\n%s", msg, diag_text(r));
  done(r);
}

static const char *GEMM =
    "import tilelang\n"
    "import tilelang.language as T\n"
    "\n"
    "@tilelang.jit(out_idx=-1)\n"
    "def matmul(M=1024, N=1024, K=1024, block_M=128, block_N=128, block_K=32,\n"
    "           dtype=\"float16\", accum_dtype=\"float32\"):\n"
    "    @T.prim_func\n"
    "    def main(A: T.Tensor((M, K), dtype), B: T.Tensor((K, N), dtype),\n"
    "             C: T.Tensor((M, N), dtype)):\n"
    "        with T.Kernel(T.ceildiv(N, block_N), T.ceildiv(M, block_M), threads=128) as (bx, by):\n"
    "            A_shared = T.alloc_shared((block_M, block_K), dtype)\n"
    "            B_shared = T.alloc_shared((block_K, block_N), dtype)\n"
    "            C_local = T.alloc_fragment((block_M, block_N), accum_dtype)\n"
    "            T.clear(C_local)\n"
    "            for ko in T.Pipelined(T.ceildiv(K, block_K), num_stages=3):\n"
    "                T.copy(A[by * block_M, ko * block_K], A_shared)\n"
    "                T.copy(B[ko * block_K, bx * block_N], B_shared)\n"
    "                T.gemm(A_shared, B_shared, C_local, transpose_B=False,\n"
    "                       policy=T.GemmWarpPolicy.FullRow)\n"
    "            T.copy(C_local, C[by * block_M, bx * block_N])\n"
    "    return main\n";

static int64_t cint(const tl_expr *e) {
  int64_t v = -999;
  cr_assert(tl_expr_is_const_int(e, &v), "not a constant");
  return v;
}

Test(elaborate, gemm_factory_ir) {
  res *r = run(GEMM);
  cr_assert(r->ok, "%s", diag_text(r));
  cr_assert_eq(r->m->nfuncs, 1);
  tl_primfunc *f = r->m->funcs[0];
  cr_expect_str_eq(f->name, "main");
  cr_assert_eq(f->nparams, 3);
  cr_expect(f->has_out_idx);
  cr_assert_eq(f->nout, 1);
  cr_expect_eq(f->out_idx[0], 2);
  tl_buffer *A = f->params[0].buffer;
  cr_expect_eq(A->scope, TL_SCOPE_GLOBAL);
  cr_expect(tl_dtype_eq(A->dtype, TL_FLOAT16));
  cr_expect_eq(cint(A->shape[0]), 1024);
  /* body: the kernel */
  const tl_stmt *k = f->body;
  if (k->kind == TL_STMT_SEQ) {
    cr_assert_eq(k->u.seq.n, 1);
    k = k->u.seq.stmts[0];
  }
  cr_assert_eq(k->kind, TL_STMT_KERNEL);
  cr_expect_eq(k->u.kernel.ngrid, 2);
  cr_expect_eq(cint(k->u.kernel.grid[0]), 8);
  cr_expect_eq(cint(k->u.kernel.threads), 128);
  cr_expect_str_eq(k->u.kernel.block_vars[1]->name, "by");
  const tl_stmt *body = k->u.kernel.body;
  cr_assert_eq(body->kind, TL_STMT_SEQ);
  cr_assert_eq(body->u.seq.n, 6);
  cr_expect_eq(body->u.seq.stmts[0]->kind, TL_STMT_ALLOC);
  cr_expect_eq(body->u.seq.stmts[2]->u.alloc.buffer->scope, TL_SCOPE_FRAGMENT);
  const tl_stmt *loop = body->u.seq.stmts[4];
  cr_assert_eq(loop->kind, TL_STMT_FOR);
  cr_expect_eq(loop->u.loop.kind, TL_LOOP_PIPELINED);
  cr_expect_eq(loop->u.loop.num_stages, 3);
  cr_expect_eq(cint(loop->u.loop.extents[0]), 32);
  const tl_stmt *lb = loop->u.loop.body;
  cr_assert_eq(lb->kind, TL_STMT_SEQ);
  const tl_stmt *copy = lb->u.seq.stmts[0];
  cr_assert_eq(copy->kind, TL_STMT_TILE);
  cr_expect_eq(copy->u.tile.op, TL_TILE_COPY);
  cr_assert_eq(copy->u.tile.nargs, 2);
  /* corner operand A[by * 128, ko * 32] takes A_shared's extents */
  const tl_region *ra = &copy->u.tile.args[0].region;
  cr_assert_eq(ra->ndim, 2);
  cr_expect_eq(cint(ra->extent[0]), 128);
  cr_expect_eq(cint(ra->extent[1]), 32);
  cr_expect_eq(copy->u.tile.args[0].loc.line, 16);
  const tl_stmt *gemm = lb->u.seq.stmts[2];
  cr_expect_eq(gemm->u.tile.op, TL_TILE_GEMM);
  int tb = tl_tile_op_attr_index(TL_TILE_GEMM, "transpose_B");
  int pol = tl_tile_op_attr_index(TL_TILE_GEMM, "policy");
  cr_expect_null(gemm->u.tile.attrs[tb], "default-valued attrs are stored NULL");
  cr_assert_not_null(gemm->u.tile.attrs[pol]);
  cr_expect_eq(cint(gemm->u.tile.attrs[pol]), TL_POLICY_FULL_ROW);
  done(r);
}

Test(elaborate, defines_bind_and_override) {
  tl_define d[] = {{"block_M", "32"}, {"block_M", "64"}, {"dtype", "bfloat16"}};
  res *r = run_d(GEMM, d, 3);
  cr_assert(r->ok, "%s", diag_text(r));
  tl_primfunc *f = r->m->funcs[0];
  cr_expect_eq(f->params[0].buffer->dtype.code, TL_TYPE_BFLOAT);
  const tl_stmt *k = f->body->kind == TL_STMT_SEQ ? f->body->u.seq.stmts[0] : f->body;
  cr_expect_eq(cint(k->u.kernel.grid[1]), 16);
  cr_expect_eq(cint(k->u.kernel.body->u.seq.stmts[0]->u.alloc.buffer->shape[0]), 64);
  done(r);
}

Test(elaborate, define_errors) {
  tl_define bad[] = {{"nosuch", "1"}};
  res *r = run_d(GEMM, bad, 1);
  cr_expect(!r->ok);
  cr_expect(strstr(diag_text(r),
                   "<command line>: error: -D nosuch: no factory parameter named "
                   "'nosuch'"),
            "%s", diag_text(r));
  done(r);

  tl_define str[] = {{"block_K", "abc"}};
  r = run_d(GEMM, str, 1);
  cr_expect(!r->ok);
  cr_expect_eq(r->d.first_error.line, 11, "%s", diag_text(r));
  cr_expect(strstr(diag_text(r), "shape dimension must be an integer, got string 'abc'"), "%s", diag_text(r));
  cr_expect(strstr(diag_text(r), "<command line>: note: 'block_K' was set by -D block_K=abc"), "%s", diag_text(r));
  done(r);

  tl_define dt[] = {{"accum_dtype", "'float19'"}};
  r = run_d(GEMM, dt, 1);
  cr_expect(strstr(diag_text(r), "unknown dtype 'float19'"), "%s", diag_text(r));
  cr_expect(strstr(diag_text(r), "note: 'accum_dtype' was set by -D accum_dtype='float19'"));
  done(r);

  tl_define big[] = {{"M", "99999999999999999999"}};
  r = run_d(GEMM, big, 1);
  cr_expect(!r->ok);
  cr_expect(strstr(diag_text(r), "integer out of range"), "%s", diag_text(r));
  done(r);
}

Test(elaborate, define_value_kinds) {
  const char *src2 =
      "import tilelang.language as T\n"
      "def k(a=0, b=0.0, c=False, d='x', e=None):\n"
      "    @T.prim_func\n"
      "    def main(A: T.Tensor((a, 4), 'float32')):\n"
      "        with T.Kernel(1, threads=128) as bx:\n"
      "            if c and d == 'hello' and e == None:\n"
      "                A[0, 0] = b\n"
      "    return main\n";
  tl_define d[] = {{"a", "-0x10"}, {"b", "2.5"}, {"c", "True"}, {"d", "\"hello\""}, {"e", "None"}, {"a", "0x10"}};
  res *r = run_d(src2, d, 6);
  cr_assert(r->ok, "%s", diag_text(r));
  tl_primfunc *f = r->m->funcs[0];
  cr_expect_eq(cint(f->params[0].buffer->shape[0]), 16);
  tl_strbuf sb = {0};
  tl_print_module(&sb, r->m);
  cr_expect(strstr(sb.data, "A[0, 0] = 2.5"), "%s", sb.data);
  tl_strbuf_free(&sb);
  done(r);
}

Test(elaborate, constant_semantics) {
  const char *src =
      "import tilelang.language as T\n"
      "A0 = -7 // 2\n"                               /* -4 */
      "A1 = -7 % 3\n"                                /* 2 */
      "A2 = 2 ** 10\n"                               /* 1024 */
      "A3 = 7 % -3\n"                                /* -2 */
      "A4 = (1 << 4) | 3\n"                          /* 19 */
      "A5 = max(3, 9, 4) - min(5, 2)\n"              /* 7 */
      "A6 = int(7 / 2)\n"                            /* 3 */
      "A7 = len((1, 2, 3)) + abs(-2)\n"              /* 5 */
      "A8 = (1, 2, 3)[-1] * 2 if 3 > 2 > 1 else 0\n" /* 6 */
      "@T.prim_func\n"
      "def main(X: T.Tensor((A0 + 10, A1, A2, A3 + 3, A4, A5, A6, A7, A8), 'float32')):\n"
      "    with T.Kernel(1, threads=128) as bx:\n"
      "        pass\n";
  res *r = run(src);
  cr_assert(r->ok, "%s", diag_text(r));
  tl_buffer *b = r->m->funcs[0]->params[0].buffer;
  int64_t want[] = {6, 2, 1024, 1, 19, 7, 3, 5, 6};
  cr_assert_eq(b->ndim, 9);
  for (int i = 0; i < 9; i++) cr_expect_eq(cint(b->shape[i]), want[i], "dim %d", i);
  done(r);
}

Test(elaborate, constant_errors) {
  expect_error(
      "import tilelang.language as T\n"
      "N = 9223372036854775807 + 1\n"
      "@T.prim_func\n"
      "def main(X: T.Tensor((N,), 'float32')):\n"
      "    pass\n",
      2, 25, "integer overflow");
  expect_error(
      "import tilelang.language as T\n"
      "N = 1 // 0\n"
      "@T.prim_func\n"
      "def main(X: T.Tensor((N,), 'float32')):\n"
      "    pass\n",
      2, 7, "integer division or modulo by zero");
  expect_error(
      "import tilelang.language as T\n"
      "N = 1 << 70\n"
      "@T.prim_func\n"
      "def main(X: T.Tensor((N,), 'float32')):\n"
      "    pass\n",
      2, 7, "integer overflow");
  expect_error(
      "import tilelang.language as T\n"
      "N = 'a' - 1\n"
      "@T.prim_func\n"
      "def main(X: T.Tensor((N,), 'float32')):\n"
      "    pass\n",
      2, 9, "unsupported operand types for -: 'str' and 'int'");
  expect_error(
      "import tilelang.language as T\n"
      "N = 128 / 2\n"
      "@T.prim_func\n"
      "def main(X: T.Tensor((N,), 'float32')):\n"
      "    pass\n",
      4, 23, "shape dimension must be an integer, got float 64");
}

Test(elaborate, kernel_errors) {
  expect_error(
      "import tilelang.language as T\n"
      "@T.prim_func\n"
      "def main(X: T.Tensor((4,), 'float32')):\n"
      "    with T.Kernel(1, 2, threads=128) as bx:\n"
      "        pass\n",
      4, 41, "T.Kernel has 2 grid dimensions but 'as' binds 1 name");
  expect_error(
      "import tilelang.language as T\n"
      "@T.prim_func\n"
      "def main(X: T.Tensor((4,), 'float32')):\n"
      "    with T.Kernel(1, threads='x') as bx:\n"
      "        pass\n",
      4, 30, "threads must be an integer");
  expect_error(
      "import tilelang.language as T\n"
      "@T.prim_func\n"
      "def main(X: T.Tensor((4,), 'float32')):\n"
      "    with T.Kernel(1) as bx:\n"
      "        with T.Kernel(1) as by:\n"
      "            pass\n",
      5, 9, "nested T.Kernel is not supported");
  expect_error(
      "import tilelang.language as T\n"
      "@T.prim_func\n"
      "def main(X: T.Tensor((4,), 'float32')):\n"
      "    with T.serial(4) as f:\n"
      "        pass\n",
      4, 10, "expected T.Kernel");
}

Test(elaborate, statement_errors) {
  expect_error(
      "import tilelang.language as T\n"
      "@T.prim_func\n"
      "def main(X: T.Tensor((4,), 'float32')):\n"
      "    with T.Kernel(1) as bx:\n"
      "        T.alloc_shared((4,), 'float32')\n",
      5, 9, "must be assigned to a name");
  expect_error(
      "import tilelang.language as T\n"
      "@T.prim_func\n"
      "def main(X: T.Tensor((4,), 'float32')):\n"
      "    with T.Kernel(1) as bx:\n"
      "        for i in T.Parallel(4):\n"
      "            i = 2\n",
      6, 13, "redefinition of 'i'");
  expect_error(
      "import tilelang.language as T\n"
      "@T.prim_func\n"
      "def main(X: T.Tensor((4,), 'float32')):\n"
      "    with T.Kernel(1) as bx:\n"
      "        while True:\n"
      "            pass\n",
      5, 15, "the condition of this 'while' loop is always true");
  expect_error(
      "import tilelang.language as T\n"
      "@T.prim_func\n"
      "def main(X: T.Tensor((4,), 'float32')):\n"
      "    with T.Kernel(1) as bx:\n"
      "        return\n",
      5, 9, "'return' is not supported in a @T.prim_func");
  expect_error(
      "import tilelang.language as T\n"
      "@T.prim_func\n"
      "def main(X: T.Tensor((4,), 'float32')):\n"
      "    with T.Kernel(1) as bx:\n"
      "        del bx\n",
      5, 9, "'del' is not supported in a @T.prim_func");
  expect_error(
      "import tilelang.language as T\n"
      "@T.prim_func\n"
      "def main(X: T.Tensor((4,), 'float32')):\n"
      "    T.func_attr({'global_symbol': 'main'})\n",
      4, 18, "unsupported function attribute 'global_symbol'");
  /* fast math: the value must be a bool; pass_configs must be a dict of string keys */
  expect_error(
      "import tilelang.language as T\n"
      "@T.prim_func\n"
      "def main(X: T.Tensor((4,), 'float32')):\n"
      "    T.func_attr({'tl.enable_fast_math': 'yes'})\n",
      4, 41, "\"tl.enable_fast_math\" must be True or False, got string 'yes'");
  expect_error(
      "import tilelang\n"
      "import tilelang.language as T\n"
      "@tilelang.jit(pass_configs={'tl.enable_fast_math': 2})\n"
      "def k(N=4):\n"
      "    @T.prim_func\n"
      "    def main(X: T.Tensor((N,), 'float32')):\n"
      "        pass\n"
      "    return main\n",
      3, 52, "\"tl.enable_fast_math\" must be True or False, got int 2");
  expect_error(
      "import tilelang\n"
      "import tilelang.language as T\n"
      "@tilelang.jit(pass_configs=[1])\n"
      "def k(N=4):\n"
      "    @T.prim_func\n"
      "    def main(X: T.Tensor((N,), 'float32')):\n"
      "        pass\n"
      "    return main\n",
      3, 28, "pass_configs must be a dict such as");
  expect_error(
      "import tilelang\n"
      "import tilelang.language as T\n"
      "@tilelang.jit(pass_configs={1: True})\n"
      "def k(N=4):\n"
      "    @T.prim_func\n"
      "    def main(X: T.Tensor((N,), 'float32')):\n"
      "        pass\n"
      "    return main\n",
      3, 29, "pass_configs keys must be strings, got int 1");
  expect_error(
      "import tilelang.language as T\n"
      "@T.prim_func\n"
      "def main(X: T.Tensor((4,), 'float32')):\n"
      "    with T.Kernel(1) as bx:\n"
      "        T.fill(X, 'zero')\n",
      5, 19, "expected a scalar value, got string 'zero'");
  expect_error(
      "import tilelang.language as T\n"
      "@T.prim_func\n"
      "def main(X: T.Tensor((4, 4), 'float16')):\n"
      "    with T.Kernel(1) as bx:\n"
      "        S = T.alloc_shared((4, 4), 'float16')\n"
      "        T.gemm(X, S, S, transpose_A=1)\n",
      6, 37, "'transpose_A' of T.gemm must be True or False, got int 1");
  expect_error(
      "import tilelang.language as T\n"
      "import torch\n"
      "@T.prim_func\n"
      "def main(X: T.Tensor((4,), 'float32')):\n"
      "    with T.Kernel(1) as bx:\n"
      "        X[0] = torch.exp(X[1])\n",
      6, 16, "'torch.exp' cannot be called in a kernel");
  expect_error(
      "import tilelang\n"
      "import tilelang.language as T\n"
      "@tilelang.jit\n"
      "def k(N=4):\n"
      "    @T.prim_func\n"
      "    def main(X: T.Tensor((N,), 'float32')):\n"
      "        pass\n",
      4, 5, "factory 'k' does not return its @T.prim_func");
}

Test(elaborate, one_error_per_fault) {
  /* The failed alloc poisons S: later uses do not report again. */
  res *r =
      run("import tilelang.language as T\n"
          "@T.prim_func\n"
          "def main(X: T.Tensor((4,), 'float32')):\n"
          "    with T.Kernel(1) as bx:\n"
          "        S = T.alloc_shared((4,), 'float91')\n"
          "        T.copy(X, S)\n"
          "        T.copy(S, X)\n"
          "        y = nosuch + S[0]\n");
  cr_expect(!r->ok);
  cr_expect_eq(r->d.errors, 2, "%s", diag_text(r));
  cr_expect_eq(r->d.first_error.line, 5);
  cr_expect(strstr(diag_text(r), "name 'nosuch' is not defined"), "%s", diag_text(r));
  done(r);
  /* A missing factory parameter is one error, however often it is used. */
  r =
      run("import tilelang.language as T\n"
          "def k(M, N=4):\n"
          "    @T.prim_func\n"
          "    def main(X: T.Tensor((M, N), 'float32'), Y: T.Tensor((M,), 'float32')):\n"
          "        with T.Kernel(M) as bx:\n"
          "            pass\n"
          "    return main\n");
  cr_expect_eq(r->d.errors, 1, "%s", diag_text(r));
  cr_expect(strstr(diag_text(r), "pass -D M=<int>"), "%s", diag_text(r));
  done(r);
}

Test(elaborate, out_idx_forms) {
  const char *src =
      "import tilelang\n"
      "import tilelang.language as T\n"
      "@tilelang.jit(out_idx=[-1, 0])\n"
      "def k(N=4):\n"
      "    @T.prim_func\n"
      "    def main(A: T.Tensor((N,), 'float32'), n: T.int32, C: T.Tensor((N,), 'float32')):\n"
      "        with T.Kernel(1) as bx:\n"
      "            C[bx] = A[bx] + T.Cast('float32', n)\n"
      "    return main\n";
  res *r = run(src);
  cr_assert(r->ok, "%s", diag_text(r));
  tl_primfunc *f = r->m->funcs[0];
  cr_assert_eq(f->nout, 2);
  cr_expect_eq(f->out_idx[0], 2);
  cr_expect_eq(f->out_idx[1], 0);
  cr_expect_eq(f->params[1].kind, TL_PARAM_SCALAR);
  cr_expect_eq(f->params[1].var->kind, TL_VAR_PARAM);
  done(r);
  r =
      run("import tilelang\n"
          "import tilelang.language as T\n"
          "@tilelang.jit(out_idx=None)\n"
          "def k(N=4):\n"
          "    @T.prim_func\n"
          "    def main(A: T.Tensor((N,), 'float32')):\n"
          "        pass\n"
          "    return main\n");
  cr_assert(r->ok, "%s", diag_text(r));
  cr_expect(!r->m->funcs[0]->has_out_idx);
  done(r);
  expect_error(
      "import tilelang\n"
      "import tilelang.language as T\n"
      "@tilelang.jit(out_idx=[0, 3])\n"
      "def k(N=4):\n"
      "    @T.prim_func\n"
      "    def main(A: T.Tensor((N,), 'float32')):\n"
      "        pass\n"
      "    return main\n",
      3, 27, "out_idx 3 is out of range for 1 parameter");
}

Test(elaborate, dynamic_symbols) {
  const char *src =
      "import tilelang.language as T\n"
      "n, m = T.dynamic('n, m')\n"
      "k = T.symbolic('k', 'int64')\n"
      "unused = T.dynamic('unused')\n"
      "@T.prim_func\n"
      "def main(A: T.Tensor((m, n), 'float32'), B: T.Tensor((k,), 'float32')):\n"
      "    with T.Kernel(T.ceildiv(m, 32)) as bx:\n"
      "        pass\n";
  res *r = run(src);
  cr_assert(r->ok, "%s", diag_text(r));
  tl_primfunc *f = r->m->funcs[0];
  cr_assert_eq(f->ndynamic, 3);
  cr_expect_str_eq(f->dynamic[0]->name, "n");
  cr_expect_str_eq(f->dynamic[1]->name, "m");
  cr_expect_str_eq(f->dynamic[2]->name, "k");
  cr_expect_eq(f->dynamic[2]->dtype.bits, 64);
  cr_expect_eq(f->dynamic[0]->kind, TL_VAR_DYNAMIC);
  done(r);
}

Test(elaborate, host_code_is_skipped) {
  const char *src =
      "import tilelang\n"
      "import tilelang.language as T\n"
      "import torch\n"
      "from tilelang import jit\n"
      "HOST = undefined_function()\n" /* never used: never evaluated */
      "def ref_program(A, B):\n"
      "    return A @ B\n"
      "@jit(out_idx=-1)\n"
      "def k(N=4, dtype=torch.float16):\n"
      "    \"\"\"docstring\"\"\"\n"
      "    @T.prim_func\n"
      "    def main(A: T.Tensor((N,), dtype), B: T.Tensor((N,), dtype)):\n"
      "        with T.Kernel(1) as bx:\n"
      "            T.copy(A, B)\n"
      "    return main\n"
      "if __name__ == '__main__':\n"
      "    kernel = k(8)\n"
      "    print(kernel)\n";
  res *r = run(src);
  cr_assert(r->ok, "%s", diag_text(r));
  cr_expect_eq(r->m->nfuncs, 1);
  cr_expect(tl_dtype_eq(r->m->funcs[0]->params[0].buffer->dtype, TL_FLOAT16));
  done(r);
}

Test(elaborate, depth_limits) {
  /* 300 nested unary minus: an error, not a crash. */
  size_t n = 300;
  char *src = malloc(200 + n);
  cr_assert_not_null(src);
  strcpy(src, "import tilelang.language as T\nN = ");
  size_t l = strlen(src);
  for (size_t i = 0; i < n; i++) src[l++] = '-';
  strcpy(src + l, "1\n@T.prim_func\ndef main(X: T.Tensor((N,), 'float32')):\n    pass\n");
  res *r = run(src);
  cr_expect(!r->ok);
  done(r);
  free(src);
}

Test(elaborate, roundtrip_through_api) {
  tl_context *ctx;
  cr_assert_eq(tl_context_create(&ctx), TL_OK);
  tl_module *a = NULL, *b = NULL;
  cr_assert_eq(tl_module_parse(ctx, GEMM, strlen(GEMM), "gemm.py", NULL, 0, &a), TL_OK, "%s",
               tl_context_last_error(ctx));
  char *t1 = NULL, *t2 = NULL;
  cr_assert_eq(tl_module_print(ctx, a, &t1), TL_OK);
  cr_assert_eq(tl_module_parse(ctx, t1, strlen(t1), "p.py", NULL, 0, &b), TL_OK, "%s\n%s", tl_context_last_error(ctx),
               t1);
  cr_assert_eq(tl_module_print(ctx, b, &t2), TL_OK);
  cr_expect_str_eq(t1, t2);
  cr_expect(tl_module_equal(a, b));
  cr_expect(strstr(t1, "T.copy(A[by * 128:by * 128 + 128, ko * 32:ko * 32 + 32], A_shared)"), "%s", t1);
  cr_expect(strstr(t1, "policy=T.GemmWarpPolicy.FullRow"), "%s", t1);
  tl_free(t1);
  tl_free(t2);
  tl_module_destroy(a);
  tl_module_destroy(b);
  tl_context_destroy(ctx);
}

/* Truncations and byte mutations of a valid kernel: never a crash or a
 * sanitizer report; every failure has a located first error. */
Test(elaborate, mutations_do_not_crash) {
  size_t len = strlen(GEMM);
  for (size_t cut = 0; cut <= len; cut += 7) {
    res *r = run_n(GEMM, cut, NULL, 0);
    done(r);
  }
  static const char repl[] = "0x(]:,.=+*-/ \n\tTA_'\"";
  char *buf = malloc(len + 1);
  cr_assert_not_null(buf);
  unsigned seed = 12345;
  for (int it = 0; it < 400; it++) {
    memcpy(buf, GEMM, len + 1);
    for (int k = 0; k < 2; k++) {
      seed = seed * 1103515245u + 12345u;
      size_t pos = (seed >> 8) % len;
      seed = seed * 1103515245u + 12345u;
      buf[pos] = repl[(seed >> 8) % (sizeof repl - 1)];
    }
    res *r = run_n(buf, len, NULL, 0);
    if (!r->ok) cr_expect(r->d.errors > 0, "failure without an error for:\n%s", buf);
    done(r);
  }
  free(buf);
}
