/* Unit tests of the disk cache of compiled kernels (lib/Runtime/cache.c and
 * its use in tl_kernel_compile, compile.c): the key's invariance (comments,
 * whitespace, host code, the file's path) and its sensitivity to every
 * component; a hit restores everything a miss made (the serialised kernels
 * compare equal byte for byte, the CPU SIMT executor runs a hit kernel);
 * corrupt and truncated entries recompile with a warning; the switches
 * (TL_CACHE=0, tl_compile_options.cache, stages that bypass it); LRU
 * eviction; eight processes compiling one key at once; a full directory
 * (a 4 KB tmpfs where this process may mount, else RLIMIT_FSIZE) and a
 * read-only one (a read-only bind mount as root, else mode 0500) degrade to
 * compiling without storing, with one warning.  Every test works in
 * its own mkdtemp directory (TL_CACHE_DIR), never the user's cache. */
#include <criterion/criterion.h>
#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "Runtime/cache.h"
#include "Runtime/kernel.h"
#include "test_util.h"
#include "tilelang/tilelang.h"

static tl_context *ctx;
static char dir[64];

static void setup(void) {
  unsetenv("TL_CACHE_MAX_MB");
  tl_test_cache_dir(dir, sizeof dir, "tl-cache-test");
  cr_assert_eq(tl_context_create(&ctx), TL_OK);
}
static void teardown(void) {
  tl_context_destroy(ctx);
  tl_test_remove_dir(dir);
}

TestSuite(cache, .init = setup, .fini = teardown);

static const char SRC[] =
    "import tilelang\n"
    "import tilelang.language as T\n"
    "\n"
    "@tilelang.jit(out_idx=-1)\n"
    "def add(M=64, N=256, block_M=32, block_N=128, dtype=\"float32\"):\n"
    "    @T.prim_func\n"
    "    def main(A: T.Tensor((M, N), dtype), B: T.Tensor((M, N), dtype), C: T.Tensor((M, N), dtype)):\n"
    "        with T.Kernel(T.ceildiv(N, block_N), T.ceildiv(M, block_M), threads=128) as (bx, by):\n"
    "            A_frag = T.alloc_fragment((block_M, block_N), dtype)\n"
    "            B_frag = T.alloc_fragment((block_M, block_N), dtype)\n"
    "            T.copy(A[by * block_M, bx * block_N], A_frag)\n"
    "            T.copy(B[by * block_M, bx * block_N], B_frag)\n"
    "            for i, j in T.Parallel(block_M, block_N):\n"
    "                A_frag[i, j] = A_frag[i, j] + B_frag[i, j]\n"
    "            T.copy(A_frag, C[by * block_M, bx * block_N])\n"
    "    return main\n";

/* SRC with comments, other whitespace and host code: the same kernel. */
static const char SRC_RESTYLED[] =
    "# a comment the key must not see\n"
    "import tilelang\n"
    "import tilelang.language as T\n"
    "import sys\n"
    "\n\n"
    "def host_helper(x):\n"
    "    return x * 2  # host code\n"
    "\n"
    "@tilelang.jit(out_idx=-1)\n"
    "def add(M=64, N=256, block_M=32, block_N=128, dtype=\"float32\"):   # trailing\n"
    "    @T.prim_func\n"
    "    def main(A: T.Tensor((M, N), dtype),\n"
    "             B: T.Tensor((M, N), dtype),\n"
    "             C: T.Tensor((M, N), dtype)):\n"
    "        with T.Kernel(T.ceildiv(N, block_N), T.ceildiv(M, block_M), threads=128) as (bx, by):\n"
    "            A_frag = T.alloc_fragment((block_M, block_N), dtype)\n"
    "\n"
    "            B_frag = T.alloc_fragment((block_M,   block_N), dtype)\n"
    "            T.copy(A[by * block_M, bx * block_N], A_frag)\n"
    "            T.copy(B[by * block_M, bx * block_N], B_frag)  # load B\n"
    "            for i, j in T.Parallel(block_M, block_N):\n"
    "                A_frag[i, j] = A_frag[i, j] + B_frag[i, j]\n"
    "            T.copy(A_frag, C[by * block_M, bx * block_N])\n"
    "    return main\n"
    "\n"
    "if __name__ == \"__main__\":\n"
    "    print(host_helper(3), sys.argv)\n";

static tl_compile_options opts_for(const char *target) {
  tl_compile_options co = {0};
  co.target = target;
  return co;
}

static tl_kernel *compile_src(const char *src, const char *file, const tl_define *d, size_t nd,
                              const tl_compile_options *co) {
  tl_kernel *k = NULL;
  tl_status s = tl_kernel_compile(ctx, src, strlen(src), file, d, nd, co, &k);
  cr_assert_eq(s, TL_OK, "%s", tl_context_last_error(ctx));
  return k;
}

static int count_files(const char *suffix) {
  DIR *d = opendir(dir);
  int n = 0;
  struct dirent *de;
  while (d && (de = readdir(d))) {
    size_t a = strlen(de->d_name), b = strlen(suffix);
    if (de->d_name[0] != '.' && (!*suffix ? 1 : a >= b && !strcmp(de->d_name + a - b, suffix))) n++;
  }
  if (d) closedir(d);
  return n;
}

static void entry_file(const tl_kernel *k, char *path, size_t n) {
  snprintf(path, n, "%s/%s.tlk", dir, tl_kernel_cache_key(k));
}

Test(cache, miss_then_hit_restores_the_whole_kernel) {
  tl_compile_options co = opts_for("sm_80");
  tl_kernel *a = compile_src(SRC, "a.py", NULL, 0, &co);
  cr_assert_eq(tl_kernel_cache_result(a), TL_CACHE_RESULT_MISS);
  cr_assert_eq(strlen(tl_kernel_cache_key(a)), 32);
  cr_assert_eq(count_files(".tlk"), 1);
  tl_kernel *b = compile_src(SRC, "a.py", NULL, 0, &co);
  cr_assert_eq(tl_kernel_cache_result(b), TL_CACHE_RESULT_HIT);
  cr_assert_str_eq(tl_kernel_cache_key(a), tl_kernel_cache_key(b));
  cr_assert_str_eq(tl_kernel_ptx(a), tl_kernel_ptx(b));
  cr_assert_str_eq(tl_kernel_simt_ir(a), tl_kernel_simt_ir(b));
  cr_assert_str_eq(tl_kernel_target(b), "sm_80");
  cr_assert_str_eq(tl_kernel_name(b), "main");
  cr_assert_str_eq(tl_kernel_llvm_ir(b), "");
  /* every field the entry holds (signature, launch programs, smem, maps) */
  tl_cache_key key;
  memset(&key, 0, sizeof key);
  uint8_t *ea, *eb;
  size_t na, nb;
  cr_assert(tl_cache_encode(a, &key, &ea, &na));
  cr_assert(tl_cache_encode(b, &key, &eb, &nb));
  cr_assert_eq(na, nb);
  cr_assert_eq(memcmp(ea, eb, na), 0);
  free(ea);
  free(eb);
  int n = 0;
  cr_assert_eq(tl_kernel_out_idx(b, &n)[0], 2);
  cr_assert_eq(n, 1);
  cr_assert_eq(tl_kernel_param_alignment(b, 0), tl_kernel_param_alignment(a, 0));

  /* the CPU SIMT executor lowers a hit kernel's tile IR again when asked */
  float A[64 * 256], B[64 * 256];
  for (int i = 0; i < 64 * 256; i++) A[i] = (float)(i % 97) * 0.5f, B[i] = (float)(i % 13) - 6.0f;
  int64_t shape[2] = {64, 256};
  DLTensor ta = {A, {kDLCPU, 0}, 2, {kDLFloat, 32, 1}, shape, NULL, 0};
  DLTensor tb = {B, {kDLCPU, 0}, 2, {kDLFloat, 32, 1}, shape, NULL, 0};
  tl_arg args[2] = {tl_arg_tensor(&ta), tl_arg_tensor(&tb)};
  DLManagedTensor *out[1] = {NULL};
  cr_assert_eq(tl_kernel_call_on(ctx, b, TL_EXEC_CPU, args, 2, NULL, out), TL_OK, "%s", tl_context_last_error(ctx));
  const float *c = out[0]->dl_tensor.data;
  for (int i = 0; i < 64 * 256; i++) cr_assert_eq(c[i], A[i] + B[i], "element %d", i);
  out[0]->deleter(out[0]);
  tl_kernel_destroy(a);
  tl_kernel_destroy(b);
}

Test(cache, comments_whitespace_host_code_and_path_do_not_change_the_key) {
  tl_compile_options co = opts_for("sm_80");
  co.no_line_info = true; /* with line information the PTX names the file and its lines */
  tl_kernel *a = compile_src(SRC, "/some/where/a.py", NULL, 0, &co);
  tl_kernel *b = compile_src(SRC_RESTYLED, "other/dir/b.py", NULL, 0, &co);
  cr_assert_str_eq(tl_kernel_cache_key(a), tl_kernel_cache_key(b));
  cr_assert_eq(tl_kernel_cache_result(b), TL_CACHE_RESULT_HIT);
  /* a -D that binds the default value is the same bound IR */
  tl_define d[1] = {{"M", "64"}};
  tl_kernel *c = compile_src(SRC, "a.py", d, 1, &co);
  cr_assert_eq(tl_kernel_cache_result(c), TL_CACHE_RESULT_HIT);
  tl_kernel_destroy(a);
  tl_kernel_destroy(b);
  tl_kernel_destroy(c);
}

/* With line information (the default) the PTX's .file and .loc name the
 * file and the lines, so the restyled file (other lines, another path) and
 * the same text at another path miss; the same file hits; no_line_info is
 * another key. */
Test(cache, line_information_keys_on_the_file_and_its_text) {
  tl_compile_options co = opts_for("sm_80");
  tl_kernel *a = compile_src(SRC, "/some/where/a.py", NULL, 0, &co);
  tl_kernel *a2 = compile_src(SRC, "/some/where/a.py", NULL, 0, &co);
  tl_kernel *b = compile_src(SRC_RESTYLED, "/some/where/a.py", NULL, 0, &co);
  tl_kernel *c = compile_src(SRC, "other/dir/a.py", NULL, 0, &co);
  cr_assert_eq(tl_kernel_cache_result(a2), TL_CACHE_RESULT_HIT);
  cr_assert_eq(tl_kernel_cache_result(b), TL_CACHE_RESULT_MISS);
  cr_assert_eq(tl_kernel_cache_result(c), TL_CACHE_RESULT_MISS);
  cr_assert(strstr(tl_kernel_ptx(a), ".file") && strstr(tl_kernel_ptx(a), "/some/where/a.py"));
  cr_assert(strstr(tl_kernel_ptx(c), "other/dir/a.py"));
  co.no_line_info = true;
  tl_kernel *d = compile_src(SRC, "/some/where/a.py", NULL, 0, &co);
  cr_assert_eq(tl_kernel_cache_result(d), TL_CACHE_RESULT_MISS);
  cr_assert_null(strstr(tl_kernel_ptx(d), ".loc"));
  tl_kernel_destroy(a);
  tl_kernel_destroy(a2);
  tl_kernel_destroy(b);
  tl_kernel_destroy(c);
  tl_kernel_destroy(d);
}

Test(cache, every_option_is_in_the_key) {
  tl_compile_options base = opts_for("sm_80");
  tl_kernel *k0 = compile_src(SRC, "a.py", NULL, 0, &base);
  const char *key0 = tl_kernel_cache_key(k0);
  enum { N = 7 };
  tl_kernel *ks[N];
  tl_define d[1] = {{"M", "128"}};
  int oi[1] = {1};
  for (int v = 0; v < N; v++) {
    tl_compile_options co = base;
    const tl_define *defs = NULL;
    size_t nd = 0;
    switch (v) {
    case 0: defs = d, nd = 1; break; /* a -D */
    case 1: co.out_idx_mode = TL_OUT_IDX_LIST, co.out_idx = oi, co.n_out_idx = 1; break;
    case 2: co.out_idx_mode = TL_OUT_IDX_NONE; break;
    case 3: co.flags = TL_COMPILE_DISABLE_WGMMA; break; /* a pass config */
    case 4: co.flags = TL_COMPILE_FAST_MATH; break;
    case 5: co.target = "sm_90a"; break;
    case 6: co.kernel = "add"; break;
    }
    ks[v] = compile_src(SRC, "a.py", defs, nd, &co);
    cr_assert_eq(tl_kernel_cache_result(ks[v]), TL_CACHE_RESULT_MISS, "variant %d hit", v);
    cr_assert_str_neq(tl_kernel_cache_key(ks[v]), key0, "variant %d", v);
    for (int w = 0; w < v; w++) cr_assert_str_neq(tl_kernel_cache_key(ks[v]), tl_kernel_cache_key(ks[w]));
  }
  /* POISON_OUTPUTS acts at call time: the same entry */
  tl_compile_options co = base;
  co.flags = TL_COMPILE_POISON_OUTPUTS;
  tl_kernel *p = compile_src(SRC, "a.py", NULL, 0, &co);
  cr_assert_eq(tl_kernel_cache_result(p), TL_CACHE_RESULT_HIT);
  tl_kernel_destroy(p);
  for (int v = 0; v < N; v++) tl_kernel_destroy(ks[v]);
  tl_kernel_destroy(k0);
}

Test(cache, every_identity_component_is_in_the_key) {
  int oi[2] = {1, 2};
  tl_cache_inputs base = {"ir",
                          "sm_80",
                          0,
                          0,
                          NULL,
                          0,
                          NULL,
                          "tilelang-ptx 0.1.0",
                          "LLVM 19.1.7",
                          "/cuda/libdevice.10.bc size=1 mtime=2",
                          NULL,
                          0,
                          0,
                          NULL,
                          NULL};
  tl_cache_key k0, k;
  cr_assert(tl_cache_key_of(&base, &k0));
  cr_assert(tl_cache_key_of(&base, &k));
  cr_assert_eq(memcmp(&k0, &k, sizeof k), 0, "the key is a function of its inputs");
  for (int v = 0; v < 16; v++) {
    tl_cache_inputs in = base;
    switch (v) {
    case 0: in.tile_ir = "ir "; break;
    case 1: in.target = "sm_90a"; break;
    case 2: in.flags = 8; break;
    case 3: in.out_idx_mode = 2; break;
    case 4: in.out_idx = oi, in.n_out_idx = 1; break;
    case 5: in.out_idx = oi + 1, in.n_out_idx = 1; break;
    case 6: in.kernel = "main"; break;
    case 7: in.compiler = "tilelang-ptx 0.1.1"; break;
    case 8: in.llvm = "LLVM 19.1.8"; break;
    case 9: in.libdevice = "/cuda/libdevice.10.bc size=1 mtime=3"; break;
    case 10: in.passes = ""; break; /* none differs from the default */
    case 11: in.passes = "default<O3>"; break;
    case 12: in.sms = 3; break;                                    /* tl_compile_options.sms */
    case 13: in.flags_false = TL_COMPILE_ATTENTION_OVERLAP; break; /* tl_compile_options.flags_false */
    case 14: in.line_file = "a.py"; break;                         /* line information: the file's name ... */
    case 15: in.line_source = "x = 1\n"; break;                    /* ... and its text */
    }
    cr_assert(tl_cache_key_of(&in, &k));
    cr_assert_neq(memcmp(&k0, &k, sizeof k), 0, "component %d is not in the key", v);
  }
  /* fields do not run into each other */
  tl_cache_inputs x = base, y = base;
  x.target = "sm_8", x.tile_ir = "0ir";
  y.target = "sm_80", y.tile_ir = "ir";
  tl_cache_key kx, ky;
  cr_assert(tl_cache_key_of(&x, &kx) && tl_cache_key_of(&y, &ky));
  cr_assert_neq(memcmp(&kx, &ky, sizeof kx), 0);
  char hex[33];
  tl_cache_key_hex(&k0, hex);
  cr_assert_eq(strlen(hex), 32);
  cr_assert_eq(strspn(hex, "0123456789abcdef"), 32);
}

/* Rewrites byte `at` of the entry file (at < 0: truncates it to -at bytes). */
static void damage(const char *path, long at) {
  struct stat sb;
  cr_assert_eq(stat(path, &sb), 0);
  if (at < 0) {
    cr_assert_eq(truncate(path, -at), 0);
    return;
  }
  int fd = open(path, O_RDWR);
  cr_assert(fd >= 0);
  uint8_t b;
  cr_assert_eq(pread(fd, &b, 1, at), 1);
  b ^= 0x5a;
  cr_assert_eq(pwrite(fd, &b, 1, at), 1);
  close(fd);
}

Test(cache, corrupt_or_truncated_entries_recompile_with_a_warning) {
  tl_compile_options co = opts_for("sm_80");
  tl_kernel *a = compile_src(SRC, "a.py", NULL, 0, &co);
  char path[256];
  entry_file(a, path, sizeof path);
  struct stat sb;
  cr_assert_eq(stat(path, &sb), 0);
  long cases[4] = {sb.st_size - 3 /* in the payload */, 20 /* the key */, -(sb.st_size - 100), -10};
  const char *why[4] = {"checksum mismatch", "another key", "truncated", "truncated header"};
  for (int i = 0; i < 4; i++) {
    damage(path, cases[i]);
    tl_kernel *b = compile_src(SRC, "a.py", NULL, 0, &co);
    cr_assert_eq(tl_kernel_cache_result(b), TL_CACHE_RESULT_CORRUPT, "case %d", i);
    const char *w = tl_context_warnings(ctx);
    cr_assert(strstr(w, "warning: kernel cache entry") && strstr(w, why[i]), "case %d: %s", i, w);
    cr_assert_str_eq(tl_kernel_ptx(b), tl_kernel_ptx(a));
    tl_kernel_destroy(b);
    /* recompiled and stored over it: the next compile hits */
    tl_kernel *c = compile_src(SRC, "a.py", NULL, 0, &co);
    cr_assert_eq(tl_kernel_cache_result(c), TL_CACHE_RESULT_HIT, "case %d", i);
    cr_assert_str_eq(tl_context_warnings(ctx), "");
    tl_kernel_destroy(c);
  }
  tl_kernel_destroy(a);
}

Test(cache, switches_and_stages_that_bypass_it) {
  tl_compile_options co = opts_for("sm_80");
  setenv("TL_CACHE", "0", 1);
  tl_kernel *k = compile_src(SRC, "a.py", NULL, 0, &co);
  cr_assert_eq(tl_kernel_cache_result(k), TL_CACHE_RESULT_OFF);
  cr_assert_str_eq(tl_kernel_cache_key(k), "");
  cr_assert_eq(count_files(""), 0);
  tl_kernel_destroy(k);
  unsetenv("TL_CACHE");
  for (int v = 0; v < 4; v++) {
    tl_compile_options o = co;
    if (v == 0) o.cache = TL_CACHE_USE_OFF;
    if (v == 1) o.stop_after = TL_STAGE_SIMT;
    if (v == 2) o.flags = TL_COMPILE_KEEP_LLVM_IR;
    if (v == 3) o.remarks = true;
    k = compile_src(SRC, "a.py", NULL, 0, &o);
    cr_assert_eq(tl_kernel_cache_result(k), TL_CACHE_RESULT_OFF, "variant %d", v);
    cr_assert_eq(count_files(""), 0, "variant %d wrote the cache", v);
    tl_kernel_destroy(k);
  }
  k = compile_src(SRC, "a.py", NULL, 0, &co);
  cr_assert_eq(tl_kernel_cache_result(k), TL_CACHE_RESULT_MISS);
  tl_kernel_destroy(k);
  co.cache = TL_CACHE_USE_REFRESH;
  k = compile_src(SRC, "a.py", NULL, 0, &co);
  cr_assert_eq(tl_kernel_cache_result(k), TL_CACHE_RESULT_MISS, "refresh does not read");
  tl_kernel_destroy(k);
  cr_assert_eq(count_files(".tlk"), 1);
}

Test(cache, directory_and_cap_from_the_environment) {
  setenv("TL_CACHE_DIR", "/x/y", 1);
  char *d = tl_cache_dir();
  cr_assert_str_eq(d, "/x/y");
  free(d);
  unsetenv("TL_CACHE_DIR");
  setenv("XDG_CACHE_HOME", "/xdg", 1);
  d = tl_cache_dir();
  cr_assert_str_eq(d, "/xdg/tilelang-ptx");
  free(d);
  unsetenv("XDG_CACHE_HOME");
  setenv("HOME", "/home/u", 1);
  d = tl_cache_dir();
  cr_assert_str_eq(d, "/home/u/.cache/tilelang-ptx");
  free(d);
  setenv("TL_CACHE", "0", 1);
  cr_assert_null(tl_cache_dir());
  setenv("TL_CACHE", "1", 1);
  d = tl_cache_dir();
  cr_assert_not_null(d);
  free(d);
  setenv("TL_CACHE_DIR", dir, 1); /* teardown cleans it */
  cr_assert_eq(tl_cache_max_bytes(), (uint64_t)TL_CACHE_DEFAULT_MAX_MB << 20);
  setenv("TL_CACHE_MAX_MB", "3", 1);
  cr_assert_eq(tl_cache_max_bytes(), 3u << 20);
  setenv("TL_CACHE_MAX_MB", "lots", 1);
  cr_assert_eq(tl_cache_max_bytes(), (uint64_t)TL_CACHE_DEFAULT_MAX_MB << 20);
}

/* A file of `bytes` bytes named name in dir, last used `age` seconds ago. */
static void make_file(const char *name, size_t bytes, long age) {
  char path[256];
  snprintf(path, sizeof path, "%s/%s", dir, name);
  FILE *f = fopen(path, "wb");
  cr_assert_not_null(f);
  for (size_t i = 0; i < bytes; i++) fputc('x', f);
  fclose(f);
  struct timespec t[2];
  clock_gettime(CLOCK_REALTIME, &t[0]);
  t[0].tv_sec -= age;
  t[1] = t[0];
  cr_assert_eq(utimensat(AT_FDCWD, path, t, 0), 0);
}

static bool exists(const char *name) {
  char path[256];
  snprintf(path, sizeof path, "%s/%s", dir, name);
  return access(path, F_OK) == 0;
}

Test(cache, eviction_deletes_the_least_recently_used) {
  const size_t MB = 1u << 20;
  make_file("e1.tlk", MB, 500); /* oldest */
  make_file("e2.tlk", MB, 400);
  make_file("e3.tlk", MB, 300);
  make_file("e4.tlk", MB, 200);
  make_file("e5.tlk", MB, 100);         /* newest */
  make_file("x.tlk.tmp.1.2", 10, 7200); /* a dead writer's: removed */
  make_file("y.tlk.tmp.3.4", 10, 10);   /* a live writer's: kept */
  make_file("notes.txt", 3 * MB, 900);  /* not an entry: never touched */
  cr_assert_eq(tl_cache_evict(dir, 8 * MB), 0, "under the cap: nothing");
  cr_assert(exists("e1.tlk"));
  /* 5 MiB > 4 MiB: delete oldest-first down to 3 MiB */
  cr_assert_eq(tl_cache_evict(dir, 4 * MB), 2);
  cr_assert(!exists("e1.tlk") && !exists("e2.tlk"));
  cr_assert(exists("e3.tlk") && exists("e4.tlk") && exists("e5.tlk"));
  cr_assert(!exists("x.tlk.tmp.1.2") && exists("y.tlk.tmp.3.4") && exists("notes.txt"));
}

Test(cache, a_hit_refreshes_the_lru_clock_and_a_store_evicts) {
  tl_compile_options co = opts_for("sm_80");
  tl_kernel *a = compile_src(SRC, "a.py", NULL, 0, &co);
  char path[256];
  entry_file(a, path, sizeof path);
  struct timespec old[2] = {{1000, 0}, {1000, 0}};
  cr_assert_eq(utimensat(AT_FDCWD, path, old, 0), 0);
  tl_kernel *b = compile_src(SRC, "a.py", NULL, 0, &co);
  cr_assert_eq(tl_kernel_cache_result(b), TL_CACHE_RESULT_HIT);
  struct stat sb;
  cr_assert_eq(stat(path, &sb), 0);
  cr_assert_gt(sb.st_mtim.tv_sec, 1000);
  /* a 1 MiB cap and a 1 MiB stale file: storing a new entry evicts it */
  make_file("old.tlk", 1u << 20, 1000);
  setenv("TL_CACHE_MAX_MB", "1", 1);
  tl_define d[1] = {{"M", "32"}};
  tl_kernel *c = compile_src(SRC, "a.py", d, 1, &co);
  cr_assert_eq(tl_kernel_cache_result(c), TL_CACHE_RESULT_MISS);
  cr_assert(!exists("old.tlk"));
  cr_assert_eq(count_files(".tlk"), 2);
  tl_kernel_destroy(a);
  tl_kernel_destroy(b);
  tl_kernel_destroy(c);
}

Test(cache, eight_processes_compiling_one_key_leave_one_valid_entry) {
  int go[2];
  cr_assert_eq(pipe(go), 0);
  pid_t pids[8];
  for (int i = 0; i < 8; i++) {
    pids[i] = fork();
    cr_assert(pids[i] >= 0);
    if (pids[i] == 0) {
      char c;
      close(go[1]);
      if (read(go[0], &c, 1) != 0) _exit(3); /* starts when the pipe closes */
      tl_context *cx = NULL;
      tl_compile_options co = opts_for("sm_80");
      tl_kernel *k = NULL;
      if (tl_context_create(&cx) != TL_OK) _exit(4);
      tl_status s = tl_kernel_compile(cx, SRC, strlen(SRC), "a.py", NULL, 0, &co, &k);
      int r = tl_kernel_cache_result(k);
      _exit(s != TL_OK ? 1 : r == TL_CACHE_RESULT_MISS || r == TL_CACHE_RESULT_HIT ? 0 : 2);
    }
  }
  close(go[0]);
  close(go[1]); /* all start at once */
  for (int i = 0; i < 8; i++) {
    int st = 0;
    cr_assert_eq(waitpid(pids[i], &st, 0), pids[i]);
    cr_assert(WIFEXITED(st) && WEXITSTATUS(st) == 0, "process %d: status %d", i, st);
  }
  cr_assert_eq(count_files(".tlk"), 1);
  cr_assert_eq(count_files(""), 1, "no temporary file is left");
  tl_compile_options co = opts_for("sm_80");
  tl_kernel *k = compile_src(SRC, "a.py", NULL, 0, &co);
  cr_assert_eq(tl_kernel_cache_result(k), TL_CACHE_RESULT_HIT);
  tl_kernel_destroy(k);
}

/* Compiles SRC with -D M=m through the cache and checks it against a
 * cache-off compile: a miss with the same PTX; *warnings gets
 * tl_context_warnings (strdup'd). */
static void compile_miss_like_off(const char *m, char **warnings) {
  tl_define d[1] = {{"M", m}};
  tl_compile_options co = opts_for("sm_80"), off = opts_for("sm_80");
  off.cache = TL_CACHE_USE_OFF;
  tl_kernel *ref = compile_src(SRC, "a.py", d, 1, &off);
  tl_kernel *k = compile_src(SRC, "a.py", d, 1, &co);
  *warnings = strdup(tl_context_warnings(ctx));
  cr_assert_eq(tl_kernel_cache_result(k), TL_CACHE_RESULT_MISS, "M=%s", m);
  cr_assert_str_eq(tl_kernel_ptx(k), tl_kernel_ptx(ref), "M=%s", m);
  tl_kernel_destroy(k);
  tl_kernel_destroy(ref);
}

Test(cache, a_full_directory_degrades_to_no_cache_with_one_warning) {
  /* a full disk: a 4 KB tmpfs filled up (root), else a file size limit (EFBIG: the same failing write) */
  bool mounted = mount("tmpfs", dir, "tmpfs", 0, "size=4k") == 0;
  const char *err = "No space left on device";
  if (mounted) {
    char filler[300], block[512] = {0};
    snprintf(filler, sizeof filler, "%s/filler", dir);
    int fd = open(filler, O_WRONLY | O_CREAT, 0600);
    cr_assert(fd >= 0);
    while (write(fd, block, sizeof block) == (ssize_t)sizeof block) {}
    close(fd);
  } else {
    signal(SIGXFSZ, SIG_IGN);
    struct rlimit rl = {64, 64};
    cr_assert_eq(setrlimit(RLIMIT_FSIZE, &rl), 0);
    err = "File too large";
  }
  char *w1, *w2;
  compile_miss_like_off("64", &w1);
  compile_miss_like_off("128", &w2);
  cr_assert(strstr(w1, "warning: kernel cache: cannot store into") && strstr(w1, dir) && strstr(w1, err), "%s", w1);
  cr_assert_str_eq(w2, "", "one warning per process");
  cr_assert_eq(count_files(".tlk"), 0);
  cr_assert_eq(count_files(""), mounted ? 1 : 0, "no temporary file is left");
  free(w1);
  free(w2);
  if (mounted) cr_assert_eq(umount2(dir, MNT_DETACH), 0);
}

Test(cache, a_read_only_directory_serves_hits_and_degrades_with_one_warning) {
  tl_compile_options co = opts_for("sm_80");
  tl_kernel *a = compile_src(SRC, "a.py", NULL, 0, &co); /* stored while writable */
  tl_kernel_destroy(a);
  /* read-only: a read-only bind mount (root ignores mode bits), else mode 0500 */
  bool mounted = mount(dir, dir, NULL, MS_BIND, NULL) == 0;
  if (mounted) cr_assert_eq(mount(NULL, dir, NULL, MS_REMOUNT | MS_BIND | MS_RDONLY, NULL), 0);
  else cr_assert_eq(chmod(dir, 0500), 0);
  a = compile_src(SRC, "a.py", NULL, 0, &co);
  cr_assert_eq(tl_kernel_cache_result(a), TL_CACHE_RESULT_HIT, "reads still work");
  tl_kernel_destroy(a);
  char *w1, *w2;
  compile_miss_like_off("128", &w1);
  compile_miss_like_off("32", &w2);
  cr_assert(strstr(w1, "warning: kernel cache: cannot store into") &&
                strstr(w1, mounted ? "Read-only file system" : "Permission denied"),
            "%s", w1);
  cr_assert_str_eq(w2, "", "one warning per process");
  cr_assert_eq(count_files(""), 1, "only the entry stored before");
  free(w1);
  free(w2);
  if (mounted) cr_assert_eq(umount2(dir, MNT_DETACH), 0);
  else chmod(dir, 0700);
}

/* Several T.Kernel scopes (issue 30): the entry keeps the later launch
 * stages (entry, grid, threads, shared memory), a hit restores them, and the
 * CPU SIMT executor runs a hit's stages in order (its tile IR lowered again). */
Test(cache, launch_stages_survive_a_hit) {
  static const char two[] =
      "import tilelang.language as T\n"
      "@T.prim_func\n"
      "def two(A: T.Tensor((256,), \"int32\"), T1: T.Tensor((256,), \"int32\"), B: T.Tensor((256,), \"int32\")):\n"
      "    T.func_attr({\"out_idx\": [2]})\n"
      "    with T.Kernel(2, threads=128) as bx:\n"
      "        for i in T.Parallel(128):\n"
      "            T1[bx * 128 + i] = A[bx * 128 + i] * 3\n"
      "    with T.Kernel(4, threads=64) as bx:\n"
      "        for i in T.Parallel(64):\n"
      "            B[bx * 64 + i] = T1[255 - (bx * 64 + i)] + 1\n";
  tl_compile_options co = opts_for("sm_80");
  tl_kernel *a = compile_src(two, "two.py", NULL, 0, &co);
  cr_assert_eq(tl_kernel_cache_result(a), TL_CACHE_RESULT_MISS);
  tl_kernel *b = compile_src(two, "two.py", NULL, 0, &co);
  cr_assert_eq(tl_kernel_cache_result(b), TL_CACHE_RESULT_HIT);
  cr_assert_eq(b->sig.nstages, 1);
  cr_assert_str_eq(b->sig.stages[0].entry, "two_kernel_1");
  int64_t v = 0;
  cr_assert(tl_rx_is_const(&b->sig.stages[0].grid[0], &v) && v == 4);
  cr_assert(tl_rx_is_const(&b->sig.stages[0].threads, &v) && v == 64);
  cr_assert(strstr(tl_kernel_ptx(b), ".entry two_kernel_1("));
  int32_t A[256], T1[256];
  for (int i = 0; i < 256; i++) A[i] = i - 100, T1[i] = 0;
  int64_t shape[1] = {256};
  DLTensor ta = {A, {kDLCPU, 0}, 1, {kDLInt, 32, 1}, shape, NULL, 0};
  DLTensor tt = {T1, {kDLCPU, 0}, 1, {kDLInt, 32, 1}, shape, NULL, 0};
  tl_arg args[2] = {tl_arg_tensor(&ta), tl_arg_tensor(&tt)};
  DLManagedTensor *out[1] = {NULL};
  cr_assert_eq(tl_kernel_call_on(ctx, b, TL_EXEC_CPU, args, 2, NULL, out), TL_OK, "%s", tl_context_last_error(ctx));
  const int32_t *o = out[0]->dl_tensor.data;
  for (int i = 0; i < 256; i++) cr_assert_eq(o[i], (255 - i - 100) * 3 + 1, "element %d", i);
  out[0]->deleter(out[0]);
  tl_kernel_destroy(a);
  tl_kernel_destroy(b);
}

/* A kernel from the cache has only its tile IR; the CPU executor lowers it
 * again (tl_rt_kernel_lower_simt), with the SM count the kernel was compiled
 * for (tl_compile_options.sms, or device 0's count put there by the
 * runtime), not the target's default: the persistent grid of a 4096^3
 * Hopper GEMM (512 tiles) stays min(512, 5) blocks. */
Test(cache, a_relowered_hit_keeps_the_sm_count) {
  static const char gemm[] =
      "import tilelang.language as T\n"
      "@T.prim_func\n"
      "def gemm(A: T.Tensor((4096, 4096), \"float16\"), B: T.Tensor((4096, 4096), \"float16\"),\n"
      "         C: T.Tensor((4096, 4096), \"float16\")):\n"
      "    with T.Kernel(16, 32, threads=256) as (bx, by):\n"
      "        A_s = T.alloc_shared((128, 64), \"float16\")\n"
      "        B_s = T.alloc_shared((64, 256), \"float16\")\n"
      "        acc = T.alloc_fragment((128, 256), \"float32\")\n"
      "        T.clear(acc)\n"
      "        for k in T.Pipelined(64, num_stages=3):\n"
      "            T.copy(A[by * 128, k * 64], A_s)\n"
      "            T.copy(B[k * 64, bx * 256], B_s)\n"
      "            T.gemm(A_s, B_s, acc)\n"
      "        T.copy(acc, C[by * 128, bx * 256])\n";
  tl_compile_options co = opts_for("sm_90a");
  co.sms = 5;
  tl_kernel *a = compile_src(gemm, "gemm.py", NULL, 0, &co);
  cr_assert_eq(tl_kernel_cache_result(a), TL_CACHE_RESULT_MISS);
  cr_assert(strstr(tl_kernel_simt_ir(a), "T.Kernel(5,"), "%.400s", tl_kernel_simt_ir(a));
  tl_kernel *b = compile_src(gemm, "gemm.py", NULL, 0, &co);
  cr_assert_eq(tl_kernel_cache_result(b), TL_CACHE_RESULT_HIT);
  cr_assert_null(b->simt_module);
  cr_assert_eq(tl_rt_kernel_lower_simt(ctx, b), TL_OK, "%s", tl_context_last_error(ctx));
  cr_assert_not_null(b->simt_module);
  tl_strbuf s = {0};
  tl_print_module(&s, b->simt_module);
  cr_assert(s.data && strstr(s.data, "T.Kernel(5,") && !strstr(s.data, "T.Kernel(132,"), "%.600s",
            s.data ? s.data : "(null)");
  tl_strbuf_free(&s);
  tl_kernel_destroy(a);
  tl_kernel_destroy(b);
}
