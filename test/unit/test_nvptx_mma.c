/* Unit tests of lib/NVPTX for the warp-level and asynchronous intrinsics of
 * the GEMM path (docs/simt-ir.md): T.ptx_ldmatrix, T.ptx_mma, T.ptx_cp_async,
 * T.ptx_commit_group, T.ptx_wait_group.  The SIMT modules are written by
 * hand (as SIMT text: already lowered, no tile ops, so nothing here depends
 * on lib/Lower) and parsed with the front end, then emitted with
 * tl_nvptx_emit.  Checks: the PTX holds the expected instructions
 * (ldmatrix.x{1,2,4}[.trans], mma.sync f16->f32 / f16->f16 / bf16->f32,
 * cp.async.{ca,cg} of 4/8/16 bytes with and without the zero-fill src-size,
 * commit/wait); it assembles with ptxas for sm_80 and sm_90a (a missing
 * ptxas fails: set TL_PTXAS); warp collectives carry `convergent`; planned
 * shared-memory offsets are honoured; a hand-written 128x128x32 GEMM main
 * loop keeps its fragments in registers (ptxas -v: no stack frame, no
 * spills; the register count is printed); bad operands are errors. */
#include <criterion/criterion.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "IR/tir.h"
#include "NVPTX/nvptx.h"
#include "test_util.h"

#define KDIR "test/GPU/kernels/"

/* ------------------------------------------------------------ helpers */
static tl_module *parse(const char *src, const tl_define *defs, size_t ndefs) {
  tl_module *m = tl_module_new();
  cr_assert_not_null(m);
  tl_diag d;
  tl_diag_init(&d);
  bool ok = tl_frontend_parse(m, &d, src, strlen(src), "<simt>", defs, ndefs);
  cr_assert(ok, "parse failed:\n%s", d.out.data ? d.out.data : "");
  tl_diag_free(&d);
  return m;
}

static tl_module *parse_file(const char *path, const tl_define *defs, size_t ndefs) {
  char *s = tl_test_read_file(path, NULL);
  tl_module *m = parse(s, defs, ndefs);
  free(s); /* the module keeps its own copy of the source */
  return m;
}

static const char *ptxas_path(void) {
  const char *p = getenv("TL_PTXAS");
  return p && *p ? p : "/usr/local/cuda/bin/ptxas";
}

/* Assembles ptx with ptxas -v for arch; fails on error or a missing ptxas.
 * Returns ptxas's output (malloc'd). */
static char *run_ptxas(const char *ptx, const char *arch) {
  const char *px = ptxas_path();
  cr_assert_eq(access(px, X_OK), 0, "ptxas not found at %s (set TL_PTXAS)", px);
  char path[] = "/tmp/tl_nvptx_mmaXXXXXX";
  int fd = mkstemp(path);
  cr_assert_geq(fd, 0);
  size_t len = strlen(ptx);
  cr_assert_eq(write(fd, ptx, len), (ssize_t)len);
  close(fd);
  char *cmd = NULL, outp[64];
  snprintf(outp, sizeof outp, "%s.log", path);
  cr_assert_geq(asprintf(&cmd, "'%s' -v -arch=%s '%s' -o /dev/null > '%s' 2>&1", px, arch, path, outp), 0);
  int rc = system(cmd);
  free(cmd);
  char *log = calloc(1, 16384);
  cr_assert_not_null(log);
  FILE *f = fopen(outp, "r");
  if (f) {
    size_t n = fread(log, 1, 16383, f);
    log[n] = 0;
    fclose(f);
  }
  unlink(path);
  unlink(outp);
  cr_assert(rc != -1 && WIFEXITED(rc) && WEXITSTATUS(rc) == 0, "ptxas -arch=%s failed:\n%s\n--- PTX ---\n%s", arch, log,
            ptx);
  return log;
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
  if (getenv("TL_NVPTX_TEST_DUMP")) fprintf(stderr, "==== %s PTX ====\n%s\n", target, r.ptx);
  tl_diag_free(&d);
  return r;
}

/* Emission must fail with a message containing `want`. */
static void emit_fails(const char *src, const char *want) {
  tl_module *m = parse(src, NULL, 0);
  tl_diag d;
  tl_diag_init(&d);
  tl_codegen_result r;
  memset(&r, 0, sizeof r);
  bool ok = tl_nvptx_emit(m, tl_target_lookup("sm_80"), &d, &r);
  cr_assert(!ok, "emit succeeded; expected an error containing '%s'", want);
  cr_assert(d.out.data && strstr(d.out.data, want), "diagnostics lack '%s':\n%s", want, d.out.data ? d.out.data : "");
  tl_codegen_result_free(&r);
  tl_diag_free(&d);
  tl_module_destroy(m);
}

static void has(const char *text, const char *what) {
  cr_assert(strstr(text, what), "output lacks '%s':\n%s", what, text);
}
static int count(const char *text, const char *what) {
  int n = 0;
  for (const char *p = strstr(text, what); p; p = strstr(p + 1, what)) n++;
  return n;
}

/* Emits m (built by make) for sm_80 (ptxas sm_80 and sm_90a) and sm_90a
 * (ptxas sm_90a), calling check(ptx, llvm_ir) for each. */
static void emit_both(tl_module *(*make)(const void *), const void *arg,
                      void (*check)(const char *ptx, const char *ir, const void *arg)) {
  const char *targets[2] = {"sm_80", "sm_90a"};
  for (int k = 0; k < 2; k++) {
    tl_module *m = make(arg);
    tl_codegen_result r = emit_ok(m, targets[k]);
    check(r.ptx, r.llvm_ir, arg);
    if (k == 0) free(run_ptxas(r.ptx, "sm_80"));
    free(run_ptxas(r.ptx, "sm_90a"));
    tl_codegen_result_free(&r);
    tl_module_destroy(m);
  }
}

/* ------------------------------------------------------ the mma tile */
typedef struct tile_case {
  const char *in, *acc;   /* dtypes */
  const char *copy_bytes; /* A's cp.async size */
  const char *b_rows;     /* B rows not zero-filled */
  const char *mma;        /* expected PTX mma spelling */
} tile_case;

static tl_module *make_tile(const void *arg) {
  const tile_case *c = arg;
  tl_define defs[4] = {
      {"in_dtype", c->in}, {"acc_dtype", c->acc}, {"copy_bytes", c->copy_bytes}, {"b_rows", c->b_rows}};
  return parse_file(KDIR "simt_mma_tile.py", defs, 4);
}

static void check_tile(const char *ptx, const char *ir, const void *arg) {
  const tile_case *c = arg;
  has(ptx, c->mma);
  has(ptx, "ldmatrix.sync.aligned.m8n8.x4.shared.b16");
  has(ptx, "ldmatrix.sync.aligned.m8n8.x2.trans.shared.b16");
  has(ptx, "cp.async.commit_group");
  has(ptx, "cp.async.wait_group 0");
  has(ptx, "bar.sync");
  int bytes = atoi(c->copy_bytes);
  char want[64];
  snprintf(want, sizeof want, "cp.async.%s.shared.global", bytes == 16 ? "cg" : "ca");
  has(ptx, want);
  snprintf(want, sizeof want, "], %d;", bytes);
  cr_assert_eq(count(ptx, want), bytes == 16 ? 1 : 16 / bytes, "A copies of %d bytes:\n%s", bytes, ptx);
  /* B's copy: zero-fill form with a run-time src-size unless every row is read */
  if (strcmp(c->b_rows, "16")) {
    cr_assert(strstr(ptx, "], 16, %r"), "no cp.async with a src-size register:\n%s", ptx);
  }
  /* no local memory: the fragments live in registers */
  cr_assert(!strstr(ptx, ".local"), "local memory used:\n%s", ptx);
  /* ldmatrix and mma calls are convergent */
  has(ir, "convergent");
}

Test(nvptx_mma, tile_f16_f32) {
  tile_case c = {"float16", "float32", "16", "16", "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32"};
  emit_both(make_tile, &c, check_tile);
}
Test(nvptx_mma, tile_bf16_f32) {
  tile_case c = {"bfloat16", "float32", "16", "16", "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32"};
  emit_both(make_tile, &c, check_tile);
}
Test(nvptx_mma, tile_f16_f16) {
  tile_case c = {"float16", "float16", "16", "16", "mma.sync.aligned.m16n8k16.row.col.f16.f16.f16.f16"};
  emit_both(make_tile, &c, check_tile);
}
Test(nvptx_mma, tile_copy8_zero_fill) {
  tile_case c = {"float16", "float32", "8", "12", "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32"};
  emit_both(make_tile, &c, check_tile);
}
Test(nvptx_mma, tile_copy4_zero_fill_bf16) {
  tile_case c = {"bfloat16", "float32", "4", "5", "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32"};
  emit_both(make_tile, &c, check_tile);
}

/* ------------------------------------------------ every ldmatrix form */
static const char *ldm_src =
    "import tilelang.language as T\n"
    "\n"
    "@T.prim_func\n"
    "def main(X: T.Tensor((512,), \"uint16\"), Y: T.Tensor((32, 48), \"uint16\")):\n"
    "    with T.Kernel(1, threads=32) as bx:\n"
    "        S = T.alloc_shared((512,), \"uint16\")\n"
    "        r = T.alloc_local((48,), \"uint16\")\n"
    "        tx = T.get_thread_binding(0)\n"
    "        T.ptx_cp_async(S, tx * 16, X, tx * 16, 16, True)\n"
    "        T.ptx_cp_async(S, tx * 16 + 8, X, tx * 16 + 8, 16, tx < 31)\n"
    "        T.ptx_commit_group()\n"
    "        T.ptx_wait_group(0)\n"
    "        T.sync_threads()\n"
    "        T.ptx_ldmatrix(r, 0, S, tx % 8 * 8, 1, False)\n"
    "        T.ptx_ldmatrix(r, 2, S, tx % 16 * 8, 2, False)\n"
    "        T.ptx_ldmatrix(r, 6, S, tx * 8, 4, False)\n"
    "        T.ptx_ldmatrix(r, 14, S, tx % 8 * 8 + 256, 1, True)\n"
    "        T.ptx_ldmatrix(r, 16, S, tx % 16 * 8 + 256, 2, True)\n"
    "        T.ptx_ldmatrix(r, 20, S, tx * 8 + 256, 4, True)\n"
    "        for i in T.unroll(28):\n"
    "            Y[tx, i] = r[i]\n";

static tl_module *make_ldm(const void *arg) {
  (void)arg;
  return parse(ldm_src, NULL, 0);
}
static void check_ldm(const char *ptx, const char *ir, const void *arg) {
  (void)arg;
  has(ptx, "ldmatrix.sync.aligned.m8n8.x1.shared.b16");
  has(ptx, "ldmatrix.sync.aligned.m8n8.x2.shared.b16");
  has(ptx, "ldmatrix.sync.aligned.m8n8.x4.shared.b16");
  has(ptx, "ldmatrix.sync.aligned.m8n8.x1.trans.shared.b16");
  has(ptx, "ldmatrix.sync.aligned.m8n8.x2.trans.shared.b16");
  has(ptx, "ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16");
  cr_assert_eq(count(ptx, "ldmatrix.sync"), 6);
  cr_assert_eq(count(ptx, "cp.async.cg.shared.global"), 2);
  cr_assert(!strstr(ptx, ".local"), "local memory used:\n%s", ptx);
  cr_assert_geq(count(ir, "convergent"), 1);
}
Test(nvptx_mma, ldmatrix_all_forms) { emit_both(make_ldm, NULL, check_ldm); }

/* --------------------------------------------- planned shared memory */
static tl_buffer *find_alloc(const tl_stmt *s, const char *name, int depth) {
  if (!s || depth > 50) return NULL;
  tl_buffer *b;
  switch (s->kind) {
  case TL_STMT_SEQ:
    for (int i = 0; i < s->u.seq.n; i++)
      if ((b = find_alloc(s->u.seq.stmts[i], name, depth + 1))) return b;
    return NULL;
  case TL_STMT_KERNEL: return find_alloc(s->u.kernel.body, name, depth + 1);
  case TL_STMT_FOR: return find_alloc(s->u.loop.body, name, depth + 1);
  case TL_STMT_ALLOC: return !strcmp(s->u.alloc.buffer->name, name) ? s->u.alloc.buffer : NULL;
  default: return NULL;
  }
}

Test(nvptx_mma, planned_shared_offsets) {
  tile_case c = {"float16", "float32", "16", "16", ""};
  /* unplanned: As (512 bytes) at 0, Bs (256 bytes) at 512 */
  tl_module *m = make_tile(&c);
  tl_codegen_result r = emit_ok(m, "sm_80");
  cr_assert_eq(m->funcs[0]->smem_bytes, 768);
  tl_codegen_result_free(&r);
  tl_module_destroy(m);
  /* planned: Bs at 0, As at 4096 (say, after a buffer of the planner's) */
  m = make_tile(&c);
  tl_buffer *As = find_alloc(m->funcs[0]->body, "As", 0), *Bs = find_alloc(m->funcs[0]->body, "Bs", 0);
  cr_assert(As && Bs);
  As->smem_planned = Bs->smem_planned = true;
  As->smem_offset = 4096;
  Bs->smem_offset = 0;
  r = emit_ok(m, "sm_80");
  cr_assert_eq(m->funcs[0]->smem_bytes, 4096 + 512);
  /* A's rows are read by ldmatrix at tl_smem + 4096 + ...; B's copy goes to offset 0 */
  has(r.ptx, "4096");
  free(run_ptxas(r.ptx, "sm_80"));
  tl_codegen_result_free(&r);
  tl_module_destroy(m);
  /* a planned offset that is not a multiple of the element size */
  m = make_tile(&c);
  As = find_alloc(m->funcs[0]->body, "As", 0);
  As->smem_planned = true;
  As->smem_offset = 3;
  tl_diag d;
  tl_diag_init(&d);
  memset(&r, 0, sizeof r);
  cr_assert(!tl_nvptx_emit(m, tl_target_lookup("sm_80"), &d, &r));
  has(d.out.data, "planned at byte offset 3");
  tl_diag_free(&d);
  tl_module_destroy(m);
}

/* ------------------------------------- a GEMM main loop in registers */
Test(nvptx_mma, gemm_fragments_in_registers) {
  const char *targets[2] = {"sm_80", "sm_90a"};
  for (int k = 0; k < 2; k++) {
    tl_module *m = parse_file(KDIR "simt_gemm.py", NULL, 0);
    tl_codegen_result r = emit_ok(m, targets[k]);
    /* 2 k16 slices x 4 x 8 mma per k-tile; 2 x (4 A + 4 B) ldmatrix.x4 */
    cr_assert_eq(count(r.ptx, "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32"), 64);
    cr_assert_eq(count(r.ptx, "ldmatrix.sync.aligned.m8n8.x4.shared.b16"), 8);
    cr_assert_eq(count(r.ptx, "ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16"), 8);
    cr_assert_geq(count(r.ptx, "cp.async.cg.shared.global"), 16);
    cr_assert(!strstr(r.ptx, ".local"), "local memory in the GEMM PTX");
    cr_assert_eq(m->funcs[0]->smem_bytes, 32768);
    for (int a = k; a < 2; a++) { /* sm_80 PTX: ptxas sm_80 and sm_90a; sm_90a PTX: sm_90a */
      const char *arch = targets[a];
      char *log = run_ptxas(r.ptx, arch);
      has(log, "0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads");
      const char *u = strstr(log, "Used ");
      int regs = u ? atoi(u + 5) : -1;
      cr_assert(regs > 128 && regs <= 255, "register count %d:\n%s", regs, log);
      fprintf(stderr, "gemm 128x128x32 / 128 threads, PTX for %s, ptxas -arch=%s: %d registers, no spills\n",
              targets[k], arch, regs);
      free(log);
    }
    tl_codegen_result_free(&r);
    tl_module_destroy(m);
  }
}

/* -------------------------------------------------------- error paths */
#define HEAD                                                                                                           \
  "import tilelang.language as T\n\n@T.prim_func\n"                                                                    \
  "def main(X: T.Tensor((256,), \"float16\"), Y: T.Tensor((256,), \"float32\")):\n"                                    \
  "    with T.Kernel(1, threads=32) as bx:\n"                                                                          \
  "        S = T.alloc_shared((256,), \"float16\")\n"                                                                  \
  "        a = T.alloc_local((8,), \"float16\")\n"                                                                     \
  "        b = T.alloc_local((4,), \"bfloat16\")\n"                                                                    \
  "        c = T.alloc_local((4,), \"float32\")\n"                                                                     \
  "        h = T.alloc_local((4,), \"float16\")\n"                                                                     \
  "        tx = T.get_thread_binding(0)\n"

Test(nvptx_mma, errors) {
  emit_fails(HEAD "        T.ptx_ldmatrix(a, 0, S, tx * 8, 3, False)\n", "num must be 1, 2 or 4");
  emit_fails(HEAD "        T.ptx_ldmatrix(c, 0, S, tx * 8, 1, False)\n", "must be a local buffer of a 16-bit dtype");
  emit_fails(HEAD "        T.ptx_ldmatrix(a, 0, X, tx * 8, 1, False)\n", "must be a shared buffer");
  emit_fails(HEAD "        T.ptx_ldmatrix(a, 0, S, tx * 8, tx, False)\n", "(num) must be a constant");
  emit_fails(HEAD "        T.ptx_mma(a, 0, b, 0, c, 0, \"m16n8k16\")\n", "must both be float16 or both bfloat16");
  emit_fails(HEAD "        T.ptx_mma(a, 0, a, 0, c, 0, \"m16n8k8\")\n",
             "shape \"m16n8k8\" with A float16, B float16 and C float32 is not an mma.sync form");
  emit_fails(HEAD "        T.ptx_mma(b, 0, b, 0, h, 0, \"m16n8k16\")\n", "accumulator 'h'");
  emit_fails(HEAD "        T.ptx_mma(a, 0, a, 0, Y, 0, \"m16n8k16\")\n", "must be a local buffer");
  emit_fails(HEAD "        T.ptx_cp_async(S, 0, X, 0, 12, True)\n", "bytes must be 4, 8 or 16");
  emit_fails(HEAD "        T.ptx_cp_async(a, 0, X, 0, 16, True)\n", "must be a shared buffer");
  emit_fails(HEAD "        T.ptx_cp_async(S, 0, S, 0, 16, True)\n", "must be a global tensor");
  emit_fails(HEAD "        T.ptx_cp_async(S, 0, Y, 0, 16, True)\n", "element sizes must agree");
  emit_fails(HEAD "        T.ptx_wait_group(tx)\n", "(n) must be a constant");
}
