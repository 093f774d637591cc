/* The disk cache of compiled kernels (internal; lib/Runtime/cache.c).
 *
 * Key: a 128-bit XXH3 hash (libxxhash) of every input that decides the PTX
 * and the launch metadata: the canonical tile IR text after binding (the
 * printed module of tl_compiler_parse: comments, whitespace, host code and
 * the file's path are not in it), the resolved target, the compile flags
 * that reach code generation, out_idx (mode and list), the kernel name
 * option, the compiler's version and the identity of the binary holding it,
 * LLVM's version, the libdevice file's identity (path, size, mtime) and
 * $TL_LLVM_PASSES.  Fields are fed tagged and length-prefixed, so that no two
 * different inputs concatenate to the same byte stream.
 *
 * Value: one file per key, <dir>/<32 hex digits>.tlk, format version
 * TL_CACHE_FORMAT: a 48-byte header (magic "TLKCACHE", format, the 16-byte
 * key, payload length, XXH3-64 of the payload), then the payload: the entry
 * name, target, PTX, SIMT IR text and the whole tl_rt_sig (parameters,
 * dims, out_idx, grid/threads programs, dynamic shared memory, tensor maps,
 * kernel workspace sizes and per-launch zeroing).
 * Writes go to a temporary file in the same directory and are renamed over
 * the entry (atomic on POSIX), so concurrent processes see either no entry
 * or a whole one; a reader checks magic, key, length and checksum.
 * Eviction: after each store, when the entries exceed the cap
 * ($TL_CACHE_MAX_MB mebibytes, default 1024), the least recently used ones
 * (mtime, refreshed on every hit) are deleted until the total is at most
 * 3/4 of the cap. */
#ifndef TL_RUNTIME_CACHE_H
#define TL_RUNTIME_CACHE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "Runtime/kernel.h"

#define TL_CACHE_FORMAT                                                                                                \
  4u /* 2: the kernel workspaces (stream-K) after the tensor maps; 3: and whether each is
                            * zeroed per launch (T.alloc_global); 4: the later launch stages after them (entry,
                            * grid, threads, shared memory: several T.Kernel scopes) */
#define TL_CACHE_DEFAULT_MAX_MB 1024

typedef struct tl_cache_key {
  uint8_t bytes[16];
} tl_cache_key;

/* What the key is made of (borrowed strings; NULL counts as ""). */
typedef struct tl_cache_inputs {
  const char *tile_ir; /* the printed tile module after binding */
  const char *target;  /* resolved target name */
  unsigned flags;      /* TL_COMPILE_* that reach code generation */
  int out_idx_mode;
  const int *out_idx;
  size_t n_out_idx;
  const char *kernel;    /* tl_compile_options.kernel */
  const char *compiler;  /* compiler version and build identity */
  const char *llvm;      /* LLVM version */
  const char *libdevice; /* libdevice path, size, mtime */
  const char *passes;    /* $TL_LLVM_PASSES, or NULL */
  int sms;               /* tl_compile_options.sms (0: the target's; not fed then) */
  unsigned flags_false;  /* tl_compile_options.flags_false (0: not fed) */
  /* Line information (tl_compile_options.no_line_info false): the PTX names
   * the file and the statements' lines, so the key covers the file's name
   * and its whole text (NULL: no line information, not fed) */
  const char *line_file;
  const char *line_source;
} tl_cache_inputs;

/* The key of in into *key; false on OOM. */
bool tl_cache_key_of(const tl_cache_inputs *in, tl_cache_key *key);
/* Writes the key's 32 lowercase hex digits and a NUL into hex[33]. */
void tl_cache_key_hex(const tl_cache_key *k, char hex[33]);

/* The identity strings of this process's compiler (version, the binary's
 * path, size and mtime), LLVM and the libdevice file at path, into buf
 * (size n). */
void tl_cache_compiler_identity(char *buf, size_t n);
void tl_cache_llvm_identity(char *buf, size_t n);
void tl_cache_file_identity(const char *path, char *buf, size_t n);

/* The cache directory: $TL_CACHE_DIR, else $XDG_CACHE_HOME/tilelang-ptx,
 * else $HOME/.cache/tilelang-ptx; NULL when $TL_CACHE is "0" or none can be
 * named.  malloc'd. */
char *tl_cache_dir(void);
/* The cap in bytes ($TL_CACHE_MAX_MB mebibytes, default
 * TL_CACHE_DEFAULT_MAX_MB; 0 or unparsable: the default). */
uint64_t tl_cache_max_bytes(void);

/* Serialises the cacheable part of k (name, target, PTX, SIMT IR text,
 * signature) as an entry with key `key` into *out (malloc'd, *len bytes);
 * false on OOM. */
bool tl_cache_encode(const tl_kernel *k, const tl_cache_key *key, uint8_t **out, size_t *len);
/* Parses an entry into k (a new kernel from tl_rt_kernel_new: fills name,
 * target, ptx, simt_ir, llvm_ir = "", sig).  false when the entry is
 * truncated, corrupt (checksum), of another format or of another key, with
 * a static reason in *why; k may then be partly filled (destroy it). */
bool tl_cache_decode(const uint8_t *data, size_t len, const tl_cache_key *key, tl_kernel *k, const char **why);

/* Result of tl_cache_load. */
typedef enum tl_cache_lookup { TL_CACHE_LOOKUP_MISS, TL_CACHE_LOOKUP_HIT, TL_CACHE_LOOKUP_CORRUPT } tl_cache_lookup;
/* Reads the entry of key in dir into k; on a hit refreshes its mtime (the
 * LRU clock).  CORRUPT (with *why) for an entry that does not decode; the
 * caller recompiles and stores over it. */
tl_cache_lookup tl_cache_load(const char *dir, const tl_cache_key *key, tl_kernel *k, const char **why);
/* Stores k under key in dir (created if missing) atomically, then evicts
 * down to max_bytes.  false on any I/O error (the cache is best-effort: the
 * compile still succeeds). */
bool tl_cache_store(const char *dir, const tl_cache_key *key, const tl_kernel *k, uint64_t max_bytes);
/* tl_cache_store; when it fails (a full disk, a read-only or uncreatable
 * directory), the first failure of the process adds a warning to ctx naming
 * dir and the error; later ones are silent.  Never fails the compile. */
void tl_cache_store_or_warn(tl_context *ctx, const char *dir, const tl_cache_key *key, const tl_kernel *k,
                            uint64_t max_bytes);
/* Writes n bytes to path atomically: a temporary file "<path>.tmp.<pid>.<n>"
 * in the same directory, renamed over path (POSIX rename), removed on
 * failure.  false on any I/O error.  tl_cache_write_file does so for
 * <dir>/<name>, creating dir if missing (the tuner's result files,
 * lib/Runtime/tune.c). */
bool tl_cache_write_atomic(const char *path, const void *data, size_t n);
bool tl_cache_write_file(const char *dir, const char *name, const void *data, size_t n);
/* Deletes least recently used entries of dir (and temporary files older
 * than an hour) until the entries total at most 3/4 of max_bytes, when they
 * exceed max_bytes.  Returns how many entries it deleted. */
int tl_cache_evict(const char *dir, uint64_t max_bytes);

#endif
