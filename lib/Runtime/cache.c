/* The disk cache of compiled kernels (lib/Runtime/cache.h): the key, the
 * entry format, atomic stores, checked loads and least-recently-used
 * eviction.
 *
 * Role: lets tl_kernel_compile (compile.c) skip lowering and code
 * generation when another process already compiled the same kernel.
 * Algorithm: XXH3-128 over tagged fields for the key; entries are a fixed
 * header and a little serialised payload (u32/i64 in host byte order,
 * strings length-prefixed), written to "<key>.tlk.tmp.<pid>.<n>" and
 * renamed to "<key>.tlk"; eviction lists "*.tlk", sorts by mtime and
 * unlinks the oldest.  Several threads and processes may use one
 * directory at once; a process killed mid-store leaves at most a temporary
 * file (never a partial entry), which eviction removes after an hour.  The
 * only process-wide state: whether a failed store was warned about (a full
 * or read-only directory warns once, then compiles go on without storing). */
#include "Runtime/cache.h"

#include <dirent.h>
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <xxhash.h>

#include "Driver/backend.h"
#include "Support/context.h"
#include "Support/file.h"

#ifndef TL_PROJECT_VERSION
#define TL_PROJECT_VERSION "unknown"
#endif

static const char kMagic[8] = {'T', 'L', 'K', 'C', 'A', 'C', 'H', 'E'};
#define HEADER_BYTES 48 /* magic 8, format 4, reserved 4, key 16, length 8, checksum 8 */

/* ------------------------------------------------------------------ key */
static void feed(XXH3_state_t *st, const char *tag, const void *data, size_t n) {
  uint64_t len = n;
  XXH3_128bits_update(st, tag, strlen(tag) + 1);
  XXH3_128bits_update(st, &len, sizeof len);
  if (n) XXH3_128bits_update(st, data, n);
}
static void feed_str(XXH3_state_t *st, const char *tag, const char *s) { feed(st, tag, s ? s : "", s ? strlen(s) : 0); }
static void feed_i64(XXH3_state_t *st, const char *tag, int64_t v) { feed(st, tag, &v, sizeof v); }

bool tl_cache_key_of(const tl_cache_inputs *in, tl_cache_key *key) {
  XXH3_state_t *st = XXH3_createState();
  if (!st) return false;
  XXH3_128bits_reset(st);
  feed_i64(st, "format", TL_CACHE_FORMAT);
  feed_str(st, "compiler", in->compiler);
  feed_str(st, "llvm", in->llvm);
  feed_str(st, "libdevice", in->libdevice);
  feed_str(st, in->passes ? "passes" : "passes(default)", in->passes);
  feed_str(st, "target", in->target);
  feed_i64(st, "flags", in->flags);
  feed_i64(st, "out_idx_mode", in->out_idx_mode);
  feed_i64(st, "n_out_idx", (int64_t)in->n_out_idx);
  for (size_t i = 0; in->out_idx && i < in->n_out_idx; i++) feed_i64(st, "out_idx", in->out_idx[i]);
  feed_str(st, "kernel", in->kernel);
  feed_str(st, "tile_ir", in->tile_ir);
  if (in->sms) feed_i64(st, "sms", in->sms); /* keys of the default stay as they were */
  if (in->flags_false) feed_i64(st, "flags_false", in->flags_false);
  if (in->line_file || in->line_source) { /* line information: the lines and the path are in the PTX */
    feed_str(st, "line_file", in->line_file);
    feed_str(st, "line_source", in->line_source);
  }
  XXH128_hash_t h = XXH3_128bits_digest(st);
  XXH128_canonical_t c;
  XXH128_canonicalFromHash(&c, h);
  XXH3_freeState(st);
  memcpy(key->bytes, c.digest, sizeof key->bytes);
  return true;
}

void tl_cache_key_hex(const tl_cache_key *k, char hex[33]) {
  for (int i = 0; i < 16; i++) snprintf(hex + 2 * i, 3, "%02x", k->bytes[i]);
}

/* ----------------------------------------------------------- identities */
void tl_cache_file_identity(const char *path, char *buf, size_t n) {
  struct stat sb;
  if (!path || stat(path, &sb) != 0) {
    snprintf(buf, n, "%s (absent)", path ? path : "");
    return;
  }
  snprintf(buf, n, "%s size=%lld mtime=%lld.%09ld", path, (long long)sb.st_size, (long long)sb.st_mtim.tv_sec,
           sb.st_mtim.tv_nsec);
}

/* The binary holding this code (libtilelang.so, or the executable it is
 * linked into): a rebuilt compiler gets new keys even at the same version. */
void tl_cache_compiler_identity(char *buf, size_t n) {
  Dl_info info;
  char file[600], exe[512];
  memset(&info, 0, sizeof info);
  const char *path = dladdr((void *)&tl_cache_compiler_identity, &info) ? info.dli_fname : NULL;
  if (!path || path[0] != '/') { /* linked into the executable: dladdr may give argv[0] */
    ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    path = n > 0 ? (exe[n] = 0, exe) : path;
  }
  if (path) tl_cache_file_identity(path, file, sizeof file);
  else snprintf(file, sizeof file, "(unknown binary)");
  snprintf(buf, n, "tilelang-ptx %s; %s", TL_PROJECT_VERSION, file);
}

void tl_cache_llvm_identity(char *buf, size_t n) { tl_backend_for(NULL)->version(buf, n); }

/* ------------------------------------------------------------ directory */
char *tl_cache_dir(void) {
  const char *off = getenv("TL_CACHE");
  if (off && !strcmp(off, "0")) return NULL;
  const char *d = getenv("TL_CACHE_DIR");
  if (d && *d) return strdup(d);
  char buf[4096];
  const char *x = getenv("XDG_CACHE_HOME");
  const char *home = getenv("HOME");
  if (x && *x) snprintf(buf, sizeof buf, "%s/tilelang-ptx", x);
  else if (home && *home) snprintf(buf, sizeof buf, "%s/.cache/tilelang-ptx", home);
  else return NULL;
  return strdup(buf);
}

uint64_t tl_cache_max_bytes(void) {
  const char *s = getenv("TL_CACHE_MAX_MB");
  char *end = NULL;
  unsigned long long mb = s ? strtoull(s, &end, 10) : 0;
  if (!s || end == s || *end || mb == 0 || mb > (1ull << 40)) mb = TL_CACHE_DEFAULT_MAX_MB;
  return (uint64_t)mb << 20;
}

/* mkdir -p of dir (0700: entries are this user's). */
static bool make_dirs(const char *dir) {
  char path[4096];
  if (snprintf(path, sizeof path, "%s", dir) >= (int)sizeof path) return false;
  for (char *p = path + 1; *p; p++)
    if (*p == '/') {
      *p = 0;
      if (mkdir(path, 0700) != 0 && errno != EEXIST) return false;
      *p = '/';
    }
  return mkdir(path, 0700) == 0 || errno == EEXIST;
}

static void entry_path(const char *dir, const tl_cache_key *key, char *buf, size_t n) {
  char hex[33];
  tl_cache_key_hex(key, hex);
  snprintf(buf, n, "%s/%s.tlk", dir, hex);
}

/* -------------------------------------------------------------- writing */
static void put(tl_strbuf *b, const void *p, size_t n) { tl_strbuf_appendn(b, (const char *)p, n); }
static void put_u32(tl_strbuf *b, uint32_t v) { put(b, &v, sizeof v); }
static void put_i64(tl_strbuf *b, int64_t v) { put(b, &v, sizeof v); }
static void put_str(tl_strbuf *b, const char *s) {
  uint32_t n = s ? (uint32_t)strlen(s) : 0;
  put_u32(b, n);
  if (n) put(b, s, n);
}
static void put_dtype(tl_strbuf *b, tl_dtype t) {
  put_u32(b, (uint32_t)t.code | (uint32_t)t.bits << 8 | (uint32_t)t.lanes << 16);
}
static void put_prog(tl_strbuf *b, const tl_rx_prog *p) {
  put_u32(b, (uint32_t)p->n);
  for (int i = 0; i < p->n; i++) {
    put_u32(b, (uint32_t)p->ops[i].kind | (uint32_t)p->ops[i].op << 8);
    put_i64(b, p->ops[i].index);
    put_i64(b, p->ops[i].value);
  }
}

static void put_sig(tl_strbuf *b, const tl_rt_sig *s) {
  put_u32(b, (uint32_t)s->nparams);
  for (int i = 0; i < s->nparams; i++) {
    const tl_rt_param *p = &s->params[i];
    put_str(b, p->name);
    put_u32(b, (uint32_t)p->is_tensor | (uint32_t)p->is_output << 1 | (uint32_t)p->unused << 2 |
                   (uint32_t)(p->strides != NULL) << 3);
    put_dtype(b, p->dtype);
    put_u32(b, (uint32_t)p->align);
    put_u32(b, (uint32_t)(p->is_tensor ? p->ndim : 0));
    for (int d = 0; p->is_tensor && d < p->ndim; d++) put_prog(b, &p->dims[d].prog);
    for (int d = 0; p->is_tensor && p->strides && d < p->ndim; d++) put_prog(b, &p->strides[d].prog);
  }
  put_u32(b, (uint32_t)s->nsyms);
  for (int i = 0; i < s->nsyms; i++) put_str(b, s->sym_names[i]);
  put_u32(b, (uint32_t)s->nout);
  for (int i = 0; i < s->nout; i++) put_u32(b, (uint32_t)s->out_idx[i]);
  put_u32(b, (uint32_t)s->ngrid);
  for (int g = 0; g < 3; g++) put_prog(b, &s->grid[g]);
  put_prog(b, &s->threads);
  put_i64(b, s->smem_bytes);
  put_u32(b, (uint32_t)s->ntma);
  for (int i = 0; i < s->ntma; i++) {
    const tl_rt_tma *m = &s->tma[i];
    put_u32(b, (uint32_t)m->param);
    put_u32(b, (uint32_t)m->rank);
    put_u32(b, (uint32_t)m->swizzle);
    for (int d = 0; d < TL_TMA_MAX_RANK; d++) put_u32(b, m->box[d]);
  }
  put_u32(b, (uint32_t)s->nws);
  for (int i = 0; i < s->nws; i++) {
    put_i64(b, s->ws_bytes[i]);
    put_u32(b, s->ws_zero[i] ? 1u : 0u);
  }
  put_u32(b, (uint32_t)s->nstages);
  for (int i = 0; i < s->nstages; i++) {
    const tl_rt_stage *st = &s->stages[i];
    put_str(b, st->entry);
    put_u32(b, (uint32_t)st->ngrid);
    for (int g = 0; g < 3; g++) put_prog(b, &st->grid[g]);
    put_prog(b, &st->threads);
    put_i64(b, st->smem_bytes);
  }
}

bool tl_cache_encode(const tl_kernel *k, const tl_cache_key *key, uint8_t **out, size_t *len) {
  tl_strbuf pay = {0};
  put_str(&pay, k->name);
  put_str(&pay, k->target);
  put_str(&pay, k->ptx);
  put_str(&pay, k->simt_ir);
  put_sig(&pay, &k->sig);
  if (pay.oom) {
    tl_strbuf_free(&pay);
    return false;
  }
  size_t n = HEADER_BYTES + pay.len;
  uint8_t *e = malloc(n);
  if (!e) {
    tl_strbuf_free(&pay);
    return false;
  }
  uint32_t fmt = TL_CACHE_FORMAT, reserved = 0;
  uint64_t plen = pay.len, sum = XXH3_64bits(pay.data, pay.len);
  memcpy(e, kMagic, 8);
  memcpy(e + 8, &fmt, 4);
  memcpy(e + 12, &reserved, 4);
  memcpy(e + 16, key->bytes, 16);
  memcpy(e + 32, &plen, 8);
  memcpy(e + 40, &sum, 8);
  if (pay.len) memcpy(e + HEADER_BYTES, pay.data, pay.len);
  tl_strbuf_free(&pay);
  *out = e;
  *len = n;
  return true;
}

/* -------------------------------------------------------------- reading */
typedef struct reader {
  const uint8_t *p, *end;
  bool bad;
} reader;

static bool get(reader *r, void *dst, size_t n) {
  if (r->bad || (size_t)(r->end - r->p) < n) {
    r->bad = true;
    memset(dst, 0, n);
    return false;
  }
  memcpy(dst, r->p, n);
  r->p += n;
  return true;
}
static uint32_t get_u32(reader *r) {
  uint32_t v;
  get(r, &v, sizeof v);
  return v;
}
static int64_t get_i64(reader *r) {
  int64_t v;
  get(r, &v, sizeof v);
  return v;
}
/* A count at most max (else the entry is bad). */
static int get_count(reader *r, uint32_t max) {
  uint32_t n = get_u32(r);
  if (n > max) r->bad = true;
  return r->bad ? 0 : (int)n;
}
static char *get_str(reader *r) {
  uint32_t n = get_u32(r);
  if (r->bad || (size_t)(r->end - r->p) < n) {
    r->bad = true;
    return NULL;
  }
  char *s = malloc((size_t)n + 1);
  if (!s) {
    r->bad = true;
    return NULL;
  }
  memcpy(s, r->p, n);
  s[n] = 0;
  r->p += n;
  return s;
}
static tl_dtype get_dtype(reader *r) {
  uint32_t v = get_u32(r);
  return (tl_dtype){(uint8_t)(v & 0xff), (uint8_t)(v >> 8 & 0xff), (uint16_t)(v >> 16)};
}
static void get_prog(reader *r, tl_rx_prog *p) {
  int n = get_count(r, 1u << 16);
  if (r->bad) return;
  if (!(p->ops = calloc((size_t)n + 1, sizeof *p->ops))) {
    r->bad = true;
    return;
  }
  p->n = n;
  for (int i = 0; i < n && !r->bad; i++) {
    uint32_t ko = get_u32(r);
    p->ops[i].kind = (uint8_t)(ko & 0xff);
    p->ops[i].op = (uint8_t)(ko >> 8 & 0xff);
    p->ops[i].index = (int32_t)get_i64(r);
    p->ops[i].value = get_i64(r);
  }
}

/* A count (at most max) and a zeroed array of that many elements of elem
 * bytes (one more: never NULL); NULL with r->bad on a bad count or OOM. */
static void *get_counted(reader *r, uint32_t max, size_t elem, int *n) {
  *n = get_count(r, max);
  void *p = r->bad ? NULL : calloc((size_t)*n + 1, elem);
  if (!p) r->bad = true;
  return p;
}

static void get_params(reader *r, tl_rt_sig *s) {
  int n = get_count(r, 1u << 16);
  if (r->bad || !(s->params = calloc((size_t)n + 1, sizeof *s->params))) {
    r->bad = true;
    return;
  }
  s->nparams = n;
  for (int i = 0; i < n && !r->bad; i++) {
    tl_rt_param *p = &s->params[i];
    p->name = get_str(r);
    uint32_t bits = get_u32(r);
    p->is_tensor = bits & 1;
    p->is_output = bits >> 1 & 1;
    p->unused = bits >> 2 & 1;
    bool strided = bits >> 3 & 1;
    p->dtype = get_dtype(r);
    p->align = (int)get_u32(r);
    int nd;
    if (!(p->dims = get_counted(r, 64, sizeof *p->dims, &nd))) return;
    p->ndim = nd;
    for (int d = 0; d < nd && !r->bad; d++) get_prog(r, &p->dims[d].prog);
    if (strided && !r->bad && !(p->strides = calloc((size_t)nd + 1, sizeof *p->strides))) r->bad = true;
    for (int d = 0; strided && d < nd && !r->bad; d++) get_prog(r, &p->strides[d].prog);
  }
}

static void get_sig(reader *r, tl_rt_sig *s) {
  get_params(r, s);
  int ns, no, nt, nst;
  if (!(s->sym_names = get_counted(r, 1u << 16, sizeof(char *), &ns))) return;
  s->nsyms = ns;
  for (int i = 0; i < ns && !r->bad; i++) s->sym_names[i] = get_str(r);
  if (!(s->out_idx = get_counted(r, (uint32_t)s->nparams, sizeof(int), &no))) return;
  s->nout = no;
  for (int i = 0; i < no; i++) {
    s->out_idx[i] = (int)get_u32(r);
    if (s->out_idx[i] < 0 || s->out_idx[i] >= s->nparams) r->bad = true;
  }
  s->ngrid = get_count(r, 3);
  for (int g = 0; g < 3; g++) get_prog(r, &s->grid[g]);
  get_prog(r, &s->threads);
  s->smem_bytes = get_i64(r);
  if (!(s->tma = get_counted(r, 1024, sizeof *s->tma, &nt))) return;
  s->ntma = nt;
  for (int i = 0; i < nt && !r->bad; i++) {
    tl_rt_tma *m = &s->tma[i];
    m->param = (int)get_u32(r);
    m->rank = (int)get_u32(r);
    m->swizzle = (int)get_u32(r);
    for (int d = 0; d < TL_TMA_MAX_RANK; d++) m->box[d] = get_u32(r);
    if (m->param < 0 || m->param >= s->nparams || m->rank < 1 || m->rank > TL_TMA_MAX_RANK) r->bad = true;
  }
  s->nws = get_count(r, TL_WORKSPACE_MAX);
  for (int i = 0; i < s->nws && !r->bad; i++) {
    s->ws_bytes[i] = get_i64(r);
    uint32_t z = get_u32(r);
    s->ws_zero[i] = z == 1;
    if (s->ws_bytes[i] <= 0 || z > 1) r->bad = true;
  }
  if (!(s->stages = get_counted(r, 1024, sizeof *s->stages, &nst))) return;
  s->nstages = nst;
  for (int i = 0; i < nst && !r->bad; i++) {
    tl_rt_stage *st = &s->stages[i];
    st->entry = get_str(r);
    st->ngrid = get_count(r, 3);
    for (int g = 0; g < 3; g++) get_prog(r, &st->grid[g]);
    get_prog(r, &st->threads);
    st->smem_bytes = get_i64(r);
    if (!st->entry || !*st->entry || st->ngrid < 1 || st->smem_bytes < 0) r->bad = true;
  }
}

bool tl_cache_decode(const uint8_t *data, size_t len, const tl_cache_key *key, tl_kernel *k, const char **why) {
  uint32_t fmt;
  uint64_t plen, sum;
  if (len < HEADER_BYTES) return *why = "truncated header", false;
  if (memcmp(data, kMagic, 8) != 0) return *why = "bad magic", false;
  memcpy(&fmt, data + 8, 4);
  if (fmt != TL_CACHE_FORMAT) return *why = "another entry format", false;
  if (memcmp(data + 16, key->bytes, 16) != 0) return *why = "another key", false;
  memcpy(&plen, data + 32, 8);
  memcpy(&sum, data + 40, 8);
  if (plen != len - HEADER_BYTES) return *why = "truncated (length mismatch)", false;
  if (XXH3_64bits(data + HEADER_BYTES, (size_t)plen) != sum) return *why = "checksum mismatch", false;
  reader r = {data + HEADER_BYTES, data + len, false};
  k->name = get_str(&r);
  k->target = get_str(&r);
  k->ptx = get_str(&r);
  k->simt_ir = get_str(&r);
  get_sig(&r, &k->sig);
  if (r.bad || r.p != r.end) return *why = "malformed payload", false;
  if (!(k->llvm_ir = strdup(""))) return *why = "out of memory", false;
  return true;
}

/* ------------------------------------------------------------ load/store */
tl_cache_lookup tl_cache_load(const char *dir, const tl_cache_key *key, tl_kernel *k, const char **why) {
  char path[4200];
  entry_path(dir, key, path, sizeof path);
  char *data = NULL;
  size_t got = 0;
  if (!tl_read_file(path, &data, &got)) return TL_CACHE_LOOKUP_MISS; /* none, or cannot read it: compile */
  bool ok = tl_cache_decode((const uint8_t *)data, got, key, k, why);
  free(data);
  if (!ok) return TL_CACHE_LOOKUP_CORRUPT;
  utimensat(AT_FDCWD, path, NULL, 0); /* the LRU clock: now */
  return TL_CACHE_LOOKUP_HIT;
}

bool tl_cache_store(const char *dir, const tl_cache_key *key, const tl_kernel *k, uint64_t max_bytes) {
  uint8_t *e = NULL;
  size_t n = 0;
  if (!make_dirs(dir) || !tl_cache_encode(k, key, &e, &n)) return false;
  char path[4200];
  entry_path(dir, key, path, sizeof path);
  bool ok = tl_cache_write_atomic(path, e, n);
  free(e);
  if (ok) tl_cache_evict(dir, max_bytes);
  return ok;
}

bool tl_cache_write_file(const char *dir, const char *name, const void *data, size_t n) {
  char path[4200];
  if (!make_dirs(dir) || (size_t)snprintf(path, sizeof path, "%s/%s", dir, name) >= sizeof path) return false;
  return tl_cache_write_atomic(path, data, n);
}

bool tl_cache_write_atomic(const char *path, const void *data, size_t n) {
  const uint8_t *e = data;
  char tmp[4300];
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  snprintf(tmp, sizeof tmp, "%s.tmp.%ld.%lx", path, (long)getpid(),
           (unsigned long)ts.tv_nsec ^ (unsigned long)(uintptr_t)e);
  int fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
  bool ok = fd >= 0;
  size_t done = 0;
  while (ok && done < n) {
    ssize_t w = write(fd, e + done, n - done);
    if (w <= 0) ok = false;
    else done += (size_t)w;
  }
  if (fd >= 0 && close(fd) != 0) ok = false;
  if (ok) ok = rename(tmp, path) == 0;
  int err = errno; /* the failure's, for the caller's warning */
  if (!ok && fd >= 0) unlink(tmp);
  errno = err;
  return ok;
}

static int g_store_warned; /* a failed store was warned about (once per process) */

void tl_cache_store_or_warn(tl_context *ctx, const char *dir, const tl_cache_key *key, const tl_kernel *k,
                            uint64_t max_bytes) {
  errno = 0;
  if (tl_cache_store(dir, key, k, max_bytes)) return;
  int err = errno ? errno : ENOMEM;
  if (__atomic_exchange_n(&g_store_warned, 1, __ATOMIC_RELAXED)) return;
  tl_diag_report(&ctx->diag, TL_DIAG_WARNING, TL_LOC_NONE,
                 "kernel cache: cannot store into '%s' (%s): compiling without storing (a full or read-only "
                 "directory; this warning is given once per process)",
                 dir, strerror(err));
}

/* ------------------------------------------------------------- eviction */
typedef struct entry_info {
  char *name;
  uint64_t size;
  struct timespec mtime;
} entry_info;

static int by_mtime(const void *a, const void *b) {
  const entry_info *x = a, *y = b;
  if (x->mtime.tv_sec != y->mtime.tv_sec) return x->mtime.tv_sec < y->mtime.tv_sec ? -1 : 1;
  if (x->mtime.tv_nsec != y->mtime.tv_nsec) return x->mtime.tv_nsec < y->mtime.tv_nsec ? -1 : 1;
  return strcmp(x->name, y->name);
}

static bool ends_with(const char *s, const char *suffix) {
  size_t a = strlen(s), b = strlen(suffix);
  return a >= b && !strcmp(s + a - b, suffix);
}

int tl_cache_evict(const char *dir, uint64_t max_bytes) {
  DIR *d = opendir(dir);
  if (!d) return 0;
  TL_VEC(entry_info) es = {0};
  uint64_t total = 0;
  time_t now = time(NULL);
  struct dirent *de;
  while ((de = readdir(d))) {
    struct stat sb;
    if (fstatat(dirfd(d), de->d_name, &sb, AT_SYMLINK_NOFOLLOW) != 0 || !S_ISREG(sb.st_mode)) continue;
    if (strstr(de->d_name, ".tlk.tmp.") || strstr(de->d_name, ".tlt.tmp.")) { /* a writer that died mid-store */
      if (now - sb.st_mtim.tv_sec > 3600) unlinkat(dirfd(d), de->d_name, 0);
      continue;
    }
    if (!ends_with(de->d_name, ".tlk")) continue;
    entry_info e = {strdup(de->d_name), (uint64_t)sb.st_size, sb.st_mtim};
    if (!e.name || !tl_vec_push(&es, e)) {
      free(e.name);
      continue;
    }
    total += e.size;
  }
  int removed = 0;
  if (total > max_bytes && es.len) {
    qsort(es.data, es.len, sizeof *es.data, by_mtime);
    for (size_t i = 0; i < es.len && total > max_bytes / 4 * 3; i++)
      if (unlinkat(dirfd(d), es.data[i].name, 0) == 0 || errno == ENOENT) {
        total -= es.data[i].size;
        removed++;
      }
  }
  for (size_t i = 0; i < es.len; i++) free(es.data[i].name);
  tl_vec_free(&es);
  closedir(d);
  return removed;
}
