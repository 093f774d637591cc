/* Helpers shared by the Criterion unit tests (test/unit/test_*.c). */
#ifndef TL_TEST_UTIL_H
#define TL_TEST_UTIL_H

#include <criterion/criterion.h>
#include <dirent.h>
#include <dlpack/dlpack.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* C = alpha * A + B over a dynamic n (block 128, 128 threads): the kernel of the runtime tests that
 * count launches (test_launch_memo.c, test_multi_device.c), as TileLang source. */
#define TL_TEST_SAXPY_SRC                                                                                              \
  "import tilelang\n"                                                                                                  \
  "import tilelang.language as T\n"                                                                                    \
  "\n"                                                                                                                 \
  "@tilelang.jit\n"                                                                                                    \
  "def saxpy(block=128):\n"                                                                                            \
  "    n = T.dynamic(\"n\")\n"                                                                                         \
  "\n"                                                                                                                 \
  "    @T.prim_func\n"                                                                                                 \
  "    def main(A: T.Tensor((n,), \"float32\"), B: T.Tensor((n,), \"float32\"),\n"                                     \
  "             C: T.Tensor((n,), \"float32\"), alpha: T.float32):\n"                                                  \
  "        with T.Kernel(T.ceildiv(n, block), threads=128) as bx:\n"                                                   \
  "            for i in T.Parallel(block):\n"                                                                          \
  "                if bx * block + i < n:\n"                                                                           \
  "                    C[bx * block + i] = alpha * A[bx * block + i] + B[bx * block + i]\n"                            \
  "\n"                                                                                                                 \
  "    return main\n"

/* The whole file at path (relative to the repository root, where ctest runs
 * the tests), NUL-terminated, malloc'd; its length in *len when len is not
 * NULL.  Asserts that it can be read. */
static inline char *tl_test_read_file(const char *path, size_t *len) {
  FILE *f = fopen(path, "rb");
  cr_assert(f, "cannot open %s", path);
  fseek(f, 0, SEEK_END);
  long n = ftell(f);
  fseek(f, 0, SEEK_SET);
  char *s = malloc((size_t)n + 1);
  cr_assert(s && fread(s, 1, (size_t)n, f) == (size_t)n, "cannot read %s", path);
  s[n] = 0;
  fclose(f);
  if (len) *len = (size_t)n;
  return s;
}

/* s with the first occurrence of `from` replaced by `to` (asserted present),
 * malloc'd. */
static inline char *tl_test_replace_first(const char *s, const char *from, const char *to) {
  const char *p = strstr(s, from);
  cr_assert(p, "'%s' not found in the kernel", from);
  size_t a = (size_t)(p - s), nf = strlen(from), nt = strlen(to), ns = strlen(s);
  char *r = malloc(ns - nf + nt + 1);
  memcpy(r, s, a);
  memcpy(r + a, to, nt);
  memcpy(r + a + nt, p + nf, ns - a - nf + 1);
  return r;
}

/* A new directory for a cache test: mkdtemp of "/tmp/<prefix>-XXXXXX" into
 * dir (size n), made the kernel cache's directory ($TL_CACHE_DIR) with the
 * cache on ($TL_CACHE unset) and no GPU ($TL_CUDA_DRIVER names no file). */
static inline void tl_test_cache_dir(char *dir, size_t n, const char *prefix) {
  setenv("TL_CUDA_DRIVER", "/nonexistent/libcuda.so.1", 1);
  unsetenv("TL_CACHE");
  snprintf(dir, n, "/tmp/%s-XXXXXX", prefix);
  cr_assert_not_null(mkdtemp(dir));
  setenv("TL_CACHE_DIR", dir, 1);
}

/* Removes dir and the files in it (not subdirectories). */
static inline void tl_test_remove_dir(const char *dir) {
  DIR *d = opendir(dir);
  struct dirent *de;
  while (d && (de = readdir(d)))
    if (de->d_name[0] != '.') unlinkat(dirfd(d), de->d_name, 0);
  if (d) closedir(d);
  rmdir(dir);
}

/* A DLTensor of kDLCUDA device 0 at a made-up address (nothing
 * dereferences it: the fake driver or a driver-less call), dtype
 * (code, bits, 1 lane), ndim dims in shape (kept by pointer), compact. */
static inline void tl_test_cuda_tensor(DLTensor *t, uint64_t addr, int ndim, int64_t *shape, int code, int bits) {
  memset(t, 0, sizeof *t);
  t->data = (void *)(uintptr_t)addr;
  t->device.device_type = kDLCUDA;
  t->ndim = ndim;
  t->dtype.code = (uint8_t)code;
  t->dtype.bits = (uint8_t)bits;
  t->dtype.lanes = 1;
  t->shape = shape;
}

#endif
