/* tl-run's .npy reader and writer (npy.h).  The header is parsed as the
 * small dict NumPy writes: the three keys in any order, single or double
 * quotes, spaces anywhere between tokens; anything else is refused with the
 * reason.  Little-endian hosts only (tl-run's targets are x86-64 and
 * aarch64 Linux): '<' is native. */
#include "npy.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define NPY_MAGIC "\x93NUMPY"

static const char *skip_ws(const char *p, const char *end) {
  while (p < end && (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r')) p++;
  return p;
}

/* The value after key (quoted) in the header [h, end): a pointer to its
 * first character, or NULL when the key is absent. */
static const char *find_key(const char *h, const char *end, const char *key) {
  size_t kl = strlen(key);
  for (const char *p = h; p + kl + 2 <= end; p++) {
    if ((*p != '\'' && *p != '"') || memcmp(p + 1, key, kl) || p[kl + 1] != *p) continue;
    const char *q = skip_ws(p + kl + 2, end);
    if (q < end && *q == ':') return skip_ws(q + 1, end);
  }
  return NULL;
}

/* Item size in bytes of a descr such as '<f4' ('|b1', '<V2'): 0 when it is
 * not a plain one. */
static size_t descr_itemsize(const char *d) {
  if (!strchr("<>|=", d[0]) || !strchr("fiubV", d[1]) || !d[2]) return 0;
  char *e;
  unsigned long n = strtoul(d + 2, &e, 10);
  return *e || n == 0 || n > 16 ? 0 : (size_t)n;
}

static bool fail(char *why, size_t n, const char *msg) {
  snprintf(why, n, "%s", msg);
  return false;
}

/* Parses the header dict [h, end) into a (descr, ndim, shape, elems). */
static bool parse_header(const char *h, const char *end, tlr_npy *a, char *why, size_t wn) {
  const char *v = find_key(h, end, "descr");
  if (!v) return fail(why, wn, "the header has no 'descr'");
  if (*v == '[') return fail(why, wn, "a structured dtype (tl-run takes arrays of numbers)");
  if (*v != '\'' && *v != '"') return fail(why, wn, "the header's 'descr' is not a string");
  const char *q = memchr(v + 1, *v, (size_t)(end - v - 1));
  if (!q || q - v - 1 >= (ptrdiff_t)sizeof a->descr) return fail(why, wn, "the header's 'descr' is malformed");
  memcpy(a->descr, v + 1, (size_t)(q - v - 1));
  a->descr[q - v - 1] = '\0';
  if (!descr_itemsize(a->descr)) {
    snprintf(why, wn, "dtype '%s' (tl-run takes numbers: f, i, u, b and the raw V kinds)", a->descr);
    return false;
  }
  v = find_key(h, end, "shape");
  if (!v || *v != '(') return fail(why, wn, "the header has no 'shape' tuple");
  a->ndim = 0;
  a->elems = 1;
  for (v = skip_ws(v + 1, end); v < end && *v != ')';) {
    char *e;
    errno = 0;
    long long n = strtoll(v, &e, 10);
    if (e == v || errno || n < 0 || a->ndim == TLR_NPY_MAX_DIMS)
      return fail(why, wn, "the header's 'shape' is malformed");
    if (__builtin_mul_overflow(a->elems, (size_t)n, &a->elems)) return fail(why, wn, "the array's size overflows");
    a->shape[a->ndim++] = n;
    v = skip_ws(e, end);
    if (v < end && *v == ',') v = skip_ws(v + 1, end);
  }
  if (v >= end) return fail(why, wn, "the header's 'shape' is malformed");
  v = find_key(h, end, "fortran_order");
  if (!v) return fail(why, wn, "the header has no 'fortran_order'");
  int big_dims = 0;
  for (int d = 0; d < a->ndim; d++) big_dims += a->shape[d] > 1;
  if (!strncmp(v, "True", 4) && big_dims > 1)
    return fail(why, wn, "a Fortran-order array (save np.ascontiguousarray(a) instead)");
  if (strncmp(v, "True", 4) && strncmp(v, "False", 5))
    return fail(why, wn, "the header's 'fortran_order' is malformed");
  return true;
}

bool tlr_npy_read(const char *path, tlr_npy *a, bool *unreadable, char *why, size_t wn) {
  memset(a, 0, sizeof *a);
  *unreadable = false;
  FILE *f = fopen(path, "rb");
  if (!f) {
    *unreadable = true;
    return fail(why, wn, strerror(errno));
  }
  unsigned char pre[12];
  char *hdr = NULL;
  bool ok = false;
  size_t got = fread(pre, 1, 10, f);
  if (got < 10 || memcmp(pre, NPY_MAGIC, 6) || pre[6] < 1 || pre[6] > 3) {
    if (ferror(f)) *unreadable = true, snprintf(why, wn, "%s", strerror(errno));
    else fail(why, wn, "not a NumPy .npy file (no \\x93NUMPY magic of version 1, 2 or 3)");
    goto out;
  }
  size_t hlen = (size_t)pre[8] | (size_t)pre[9] << 8;
  if (pre[6] > 1) {
    if (fread(pre + 10, 1, 2, f) != 2) {
      fail(why, wn, "the .npy header is cut short");
      goto out;
    }
    hlen |= (size_t)pre[10] << 16 | (size_t)pre[11] << 24;
  }
  if (hlen > ((size_t)1 << 24) || !(hdr = malloc(hlen + 1)) || fread(hdr, 1, hlen, f) != hlen) {
    fail(why, wn, "the .npy header is cut short");
    goto out;
  }
  if (!parse_header(hdr, hdr + hlen, a, why, wn)) goto out;
  size_t isz = descr_itemsize(a->descr), bytes;
  if (__builtin_mul_overflow(a->elems, isz, &bytes)) {
    fail(why, wn, "the array's size overflows");
    goto out;
  }
  a->data = malloc(bytes ? bytes : 1);
  if (!a->data) {
    fail(why, wn, "out of memory");
    goto out;
  }
  size_t n = fread(a->data, 1, bytes, f);
  int extra = fgetc(f);
  if (n != bytes || extra != EOF) {
    snprintf(why, wn, "the data is %s than the header's shape and dtype say (%zu bytes)",
             n != bytes ? "shorter" : "longer", bytes);
    goto out;
  }
  ok = true;
out:
  free(hdr);
  fclose(f);
  if (!ok) tlr_npy_free(a);
  return ok;
}

void tlr_npy_free(tlr_npy *a) {
  free(a->data);
  a->data = NULL;
}

const char *tlr_npy_descr(tl_dtype t) {
  if (t.lanes > 1) return NULL;
  static const char *const ints[4][2] = {{"|i1", "|u1"}, {"<i2", "<u2"}, {"<i4", "<u4"}, {"<i8", "<u8"}};
  int w = t.bits == 8 ? 0 : t.bits == 16 ? 1 : t.bits == 32 ? 2 : t.bits == 64 ? 3 : -1;
  switch (t.code) {
  case TL_TYPE_FLOAT:
  case TL_TYPE_TFLOAT: return t.bits == 16 ? "<f2" : t.bits == 32 ? "<f4" : t.bits == 64 ? "<f8" : NULL;
  case TL_TYPE_BFLOAT: return "<u2";
  case TL_TYPE_FLOAT8_E4M3:
  case TL_TYPE_FLOAT8_E5M2: return "|u1";
  case TL_TYPE_BOOL: return "|b1";
  case TL_TYPE_INT: return w < 0 ? NULL : ints[w][0];
  case TL_TYPE_UINT: return w < 0 ? NULL : ints[w][1];
  default: return NULL;
  }
}

/* descr with '=' read as '<' and a one-byte item's '<' as '|'. */
static void normalize(const char *d, char out[16]) {
  snprintf(out, 16, "%s", d);
  if (out[0] == '=') out[0] = '<';
  if (descr_itemsize(out) == 1 && out[0] == '<') out[0] = '|';
}

bool tlr_npy_descr_matches(tl_dtype t, const char *descr) {
  const char *want = tlr_npy_descr(t);
  if (!want) return false;
  char got[16], w[16];
  normalize(descr, got);
  normalize(want, w);
  if (!strcmp(got, w)) return true;
  if (t.code == TL_TYPE_BFLOAT) return !strcmp(got, "<V2") || !strcmp(got, "|V2");
  if (t.code == TL_TYPE_FLOAT8_E4M3 || t.code == TL_TYPE_FLOAT8_E5M2) return !strcmp(got, "|V1");
  return false;
}

void tlr_npy_describe(const char *descr, char *out, size_t n) {
  static const struct {
    const char *d, *name;
  } names[] = {
      {"<f2", "float16"}, {"<f4", "float32"}, {"<f8", "float64"}, {"|i1", "int8"},
      {"<i2", "int16"},   {"<i4", "int32"},   {"<i8", "int64"},   {"|u1", "uint8"},
      {"<u2", "uint16"},  {"<u4", "uint32"},  {"<u8", "uint64"},  {"|b1", "bool"},
  };
  char d[16];
  normalize(descr, d);
  for (size_t i = 0; i < sizeof names / sizeof *names; i++)
    if (!strcmp(d, names[i].d)) {
      snprintf(out, n, "%s ('%s')", names[i].name, descr);
      return;
    }
  snprintf(out, n, "'%s'%s", descr, descr[0] == '>' && descr_itemsize(descr) > 1 ? " (big-endian)" : "");
}

bool tlr_npy_write(const char *path, const char *descr, const int64_t *shape, int ndim, const void *data,
                   size_t bytes) {
  char dict[64 + 24 * TLR_NPY_MAX_DIMS];
  size_t n = (size_t)snprintf(dict, sizeof dict, "{'descr': '%s', 'fortran_order': False, 'shape': (", descr);
  for (int d = 0; d < ndim && d < TLR_NPY_MAX_DIMS; d++)
    n += (size_t)snprintf(dict + n, sizeof dict - n, "%s%lld", d ? ", " : "", (long long)shape[d]);
  n += (size_t)snprintf(dict + n, sizeof dict - n, "%s), }", ndim == 1 ? "," : "");
  /* magic, version, 2-byte length (version 1.0), the dict, spaces, '\n': a multiple of 64 */
  size_t total = (10 + n + 1 + 63) / 64 * 64, hlen = total - 10;
  unsigned char pre[10] = {
      0x93, 'N', 'U', 'M', 'P', 'Y', 1, 0, (unsigned char)(hlen & 255), (unsigned char)(hlen >> 8)};
  FILE *f = fopen(path, "wb");
  if (!f) return false;
  bool ok = fwrite(pre, 1, 10, f) == 10 && fwrite(dict, 1, n, f) == n;
  for (size_t i = n; ok && i + 1 < hlen; i++) ok = fputc(' ', f) != EOF;
  ok = ok && fputc('\n', f) != EOF && (bytes == 0 || fwrite(data, 1, bytes, f) == bytes);
  int e = errno;
  if (fclose(f) != 0 && ok) ok = false, e = errno;
  if (!ok) {
    remove(path);
    errno = e;
  }
  return ok;
}
