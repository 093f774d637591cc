/* Unit tests of lib/Support: arena, vectors, string buffers, hash map,
 * interning, diagnostics rendering, the context object and whole-file
 * reading. */
#include <criterion/criterion.h>
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "Support/context.h"
#include "Support/file.h"
#include "Support/support.h"

/* ------------------------------------------------------------------ arena */
Test(arena, alignment_and_zeroing) {
  tl_arena a;
  tl_arena_init(&a);
  for (size_t i = 0; i < 5000; i++) {
    size_t sz = (i * 37) % 301 + (i % 7 == 0 ? 0 : 1);
    unsigned char *p = tl_arena_alloc(&a, sz);
    cr_assert_not_null(p);
    cr_assert_eq((uintptr_t)p % 16, 0, "allocation %zu not 16-byte aligned", i);
    for (size_t k = 0; k < sz; k++) cr_assert_eq(p[k], 0);
    memset(p, 0xAB, sz);
  }
  /* A request larger than a chunk. */
  unsigned char *big = tl_arena_alloc(&a, 1u << 20);
  cr_assert_not_null(big);
  cr_assert_eq((uintptr_t)big % 16, 0);
  for (size_t k = 0; k < (1u << 20); k += 4099) cr_assert_eq(big[k], 0);
  /* Small allocations after the big one still work and are distinct. */
  int *x = tl_arena_alloc(&a, sizeof(int));
  int *y = tl_arena_alloc(&a, sizeof(int));
  cr_assert(x != y);
  cr_assert(!a.oom);
  cr_assert_geq(a.total, (size_t)(1u << 20));
  tl_arena_free(&a);
  cr_assert_null(a.head);
}

Test(arena, huge_request_sets_oom) {
  tl_arena a;
  tl_arena_init(&a);
  cr_assert_null(tl_arena_alloc(&a, SIZE_MAX - 8));
  cr_assert(a.oom);
  tl_arena_free(&a);
}

Test(arena, strings) {
  tl_arena a;
  tl_arena_init(&a);
  char *s = tl_arena_strndup(&a, "hello world", 5);
  cr_assert_str_eq(s, "hello");
  cr_assert_str_eq(tl_arena_strdup(&a, "abc"), "abc");
  cr_assert_str_eq(tl_arena_printf(&a, "%d-%s", 42, "x"), "42-x");
  char *e = tl_arena_strndup(&a, "", 0);
  cr_assert_str_eq(e, "");
  tl_arena_free(&a);
}

/* ----------------------------------------------------------------- vector */
Test(vec, growth_many_elements) {
  TL_VEC(int) v = {0};
  for (int i = 0; i < 100000; i++) cr_assert(tl_vec_push(&v, i * 3));
  cr_assert_eq(v.len, 100000u);
  cr_assert_geq(v.cap, v.len);
  for (int i = 0; i < 100000; i++) cr_assert_eq(v.data[i], i * 3);
  cr_assert_eq(tl_vec_last(&v), 99999 * 3);
  cr_assert_eq(tl_vec_pop(&v), 99999 * 3);
  cr_assert_eq(v.len, 99999u);
  tl_vec_free(&v);
  cr_assert_null(v.data);
  cr_assert_eq(v.len, 0u);
  cr_assert_eq(v.cap, 0u);
}

Test(vec, reserve_overflow_fails) {
  TL_VEC(double) v = {0};
  cr_assert_not(tl_vec_reserve(&v, SIZE_MAX / 4));
  cr_assert_null(v.data);
  cr_assert(tl_vec_reserve(&v, 10));
  cr_assert_geq(v.cap, 10u);
  tl_vec_free(&v);
}

Test(vec, to_arena) {
  tl_arena a;
  tl_arena_init(&a);
  TL_VEC(long) v = {0};
  cr_assert_null(tl_vec_to_arena(&a, &v));
  for (long i = 0; i < 1000; i++) tl_vec_push(&v, -i);
  long *copy = tl_vec_to_arena(&a, &v);
  tl_vec_free(&v);
  cr_assert_not_null(copy);
  for (long i = 0; i < 1000; i++) cr_assert_eq(copy[i], -i);
  tl_arena_free(&a);
}

Test(strbuf, append_printf_take) {
  tl_strbuf s = {0};
  char *empty = tl_strbuf_take(&s);
  cr_assert_str_eq(empty, "");
  free(empty);
  tl_strbuf_append(&s, "ab");
  tl_strbuf_appendn(&s, "cdef", 2);
  tl_strbuf_printf(&s, "[%d:%s]", -7, "z");
  for (int i = 0; i < 1000; i++) tl_strbuf_append(&s, "0123456789");
  cr_assert_eq(s.len, 4 + 6 + 10000u);
  cr_assert_eq(strncmp(s.data, "abcd[-7:z]0123", 14), 0);
  char *t = tl_strbuf_take(&s);
  cr_assert_null(s.data);
  cr_assert_eq(s.len, 0u);
  cr_assert_eq(strlen(t), 10010u);
  free(t);
  tl_strbuf_free(&s);
}

/* --------------------------------------------------------------- hash map */
Test(map, insert_replace_remove_growth) {
  tl_map m;
  tl_map_init(&m);
  enum { N = 20000 };
  static char keys[N]; /* distinct addresses: consecutive bytes collide well */
  for (int i = 0; i < N; i++) cr_assert(tl_map_put(&m, &keys[i], (void *)(intptr_t)(i + 1)));
  cr_assert_eq(m.len, (size_t)N);
  cr_assert_leq(m.len * 4, m.cap * 3);
  for (int i = 0; i < N; i++) {
    bool found;
    cr_assert_eq((intptr_t)tl_map_get(&m, &keys[i], &found), i + 1);
    cr_assert(found);
  }
  /* Replace keeps the count. */
  for (int i = 0; i < N; i += 2) cr_assert(tl_map_put(&m, &keys[i], (void *)(intptr_t)-i));
  cr_assert_eq(m.len, (size_t)N);
  /* Remove every third and check the rest are still reachable. */
  for (int i = 0; i < N; i += 3) cr_assert(tl_map_remove(&m, &keys[i]));
  cr_assert_not(tl_map_remove(&m, &keys[0]));
  for (int i = 0; i < N; i++) {
    bool found;
    void *v = tl_map_get(&m, &keys[i], &found);
    if (i % 3 == 0) {
      cr_assert_not(found);
      cr_assert_null(v);
    } else {
      cr_assert(found, "key %d lost after removals", i);
      cr_assert_eq((intptr_t)v, i % 2 == 0 ? -i : i + 1);
    }
  }
  cr_assert_eq(m.len, (size_t)(N - (N + 2) / 3));
  tl_map_free(&m);
}

Test(map, null_values_and_collisions) {
  tl_map m;
  tl_map_init(&m);
  bool found = true;
  cr_assert_null(tl_map_get(&m, "x", &found));
  cr_assert_not(found);
  cr_assert_not(tl_map_put(&m, NULL, NULL));
  /* Fill a small table so that probe runs wrap and collide, then remove
   * from the middle of runs (backward-shift deletion). */
  int vals[12];
  for (int i = 0; i < 12; i++) cr_assert(tl_map_put(&m, &vals[i], i == 5 ? NULL : &vals[i]));
  cr_assert_null(tl_map_get(&m, &vals[5], &found));
  cr_assert(found);
  for (int round = 0; round < 12; round++) {
    cr_assert(tl_map_remove(&m, &vals[round]));
    for (int i = round + 1; i < 12; i++) {
      tl_map_get(&m, &vals[i], &found);
      cr_assert(found);
    }
  }
  cr_assert_eq(m.len, 0u);
  tl_map_free(&m);
}

Test(map, hash_bytes_fnv1a) {
  cr_assert_eq(tl_hash_bytes("", 0), 0xcbf29ce484222325ull);
  cr_assert_eq(tl_hash_bytes("a", 1), 0xaf63dc4c8601ec8cull);
  cr_assert_neq(tl_hash_bytes("ab", 2), tl_hash_bytes("ba", 2));
}

/* ------------------------------------------------------------- interning */
Test(intern, identity) {
  tl_arena a;
  tl_arena_init(&a);
  tl_intern t;
  tl_intern_init(&t, &a);
  const char *x = tl_intern_str(&t, "block_M");
  char buf[] = "block_M";
  cr_assert_eq(tl_intern_str(&t, buf), x);
  cr_assert_eq(tl_intern_n(&t, "block_Mxyz", 7), x);
  cr_assert_neq(tl_intern_str(&t, "block_N"), x);
  cr_assert_str_eq(x, "block_M");
  const char *e = tl_intern_str(&t, "");
  cr_assert_eq(tl_intern_n(&t, "zz", 0), e);
  /* Embedded NULs are part of the text. */
  const char *n1 = tl_intern_n(&t, "a\0b", 3), *n2 = tl_intern_n(&t, "a\0c", 3);
  cr_assert_neq(n1, n2);
  cr_assert_eq(tl_intern_n(&t, "a\0b", 3), n1);
  /* Many strings: growth keeps identities. */
  const char *ptrs[5000];
  for (int i = 0; i < 5000; i++) {
    char s[32];
    snprintf(s, sizeof s, "name_%d", i);
    ptrs[i] = tl_intern_str(&t, s);
  }
  for (int i = 0; i < 5000; i++) {
    char s[32];
    snprintf(s, sizeof s, "name_%d", i);
    cr_assert_eq(tl_intern_str(&t, s), ptrs[i]);
    cr_assert_str_eq(ptrs[i], s);
  }
  cr_assert_eq(tl_intern_str(&t, "block_M"), x);
  tl_intern_free(&t);
  tl_arena_free(&a);
}

/* ------------------------------------------------------------ diagnostics */
static const char SRC[] =
    "def f(M):\n"
    "\tx = 1 +  $\n"
    "    \ty = bad\n"
    "last";

Test(diag, caret_with_tabs) {
  tl_diag d;
  tl_diag_init(&d);
  cr_assert(tl_diag_add_source(&d, "k.py", SRC, sizeof SRC - 1));
  tl_error(&d, ((tl_loc){"k.py", 2, 11}), "unexpected character '%c'", '$');
  cr_assert_str_eq(d.out.data,
                   "k.py:2:11: error: unexpected character '$'\n"
                   "\tx = 1 +  $\n"
                   "\t         ^\n");
  cr_assert_eq(d.errors, 1);
  cr_assert_str_eq(d.first_message, "unexpected character '$'");
  cr_assert_str_eq(d.first_error.file, "k.py");
  cr_assert_eq(d.first_error.line, 2);
  cr_assert_eq(d.first_error.col, 11);
  tl_diag_free(&d);
}

Test(diag, mixed_spaces_tabs_and_notes) {
  tl_diag d;
  tl_diag_init(&d);
  tl_diag_add_source(&d, "k.py", SRC, sizeof SRC - 1);
  tl_error(&d, ((tl_loc){"k.py", 3, 10}), "name 'bad' is not defined");
  tl_note(&d, ((tl_loc){"k.py", 1, 7}), "parameter %s here", "M");
  tl_note(&d, ((tl_loc){"other.py", 4, 2}), "no source known");
  cr_assert_str_eq(d.out.data,
                   "k.py:3:10: error: name 'bad' is not defined\n"
                   "    \ty = bad\n"
                   "    \t    ^\n"
                   "k.py:1:7: note: parameter M here\n"
                   "def f(M):\n"
                   "      ^\n"
                   "other.py:4:2: note: no source known\n");
  cr_assert_eq(d.errors, 1);
  tl_diag_free(&d);
}

Test(diag, column_past_end_and_last_line) {
  tl_diag d;
  tl_diag_init(&d);
  tl_diag_add_source(&d, "k.py", SRC, sizeof SRC - 1);
  tl_error(&d, ((tl_loc){"k.py", 4, 99}), "unexpected end of file");
  cr_assert_str_eq(d.out.data,
                   "k.py:4:99: error: unexpected end of file\n"
                   "last\n"
                   "    ^\n");
  tl_diag_clear(&d);
  tl_error(&d, ((tl_loc){"k.py", 4, 5}), "eof");
  cr_assert_str_eq(d.out.data, "k.py:4:5: error: eof\nlast\n    ^\n");
  tl_diag_clear(&d);
  /* A line beyond the text prints no source line. */
  tl_error(&d, ((tl_loc){"k.py", 40, 1}), "far");
  cr_assert_str_eq(d.out.data, "k.py:40:1: error: far\n");
  tl_diag_free(&d);
}

/* A line directive starts a part of the text that is another file's lines from N on: an error there shows
 * that line; the file before the directive keeps its own lines; two parts of one file each show theirs. */
Test(diag, line_directive_parts) {
  static const char txt[] =
      "a = 1\n"
      "#@tl-line 10 h.py\n"
      "def h():\n"
      "    return $\n"
      "#@tl-line 40 h.py\n"
      "def g(): pass\n"
      "#@tl-line 3 k.py\n"
      "b = 2\n";
  tl_diag d;
  tl_diag_init(&d);
  cr_assert(tl_diag_add_source(&d, "k.py", txt, sizeof txt - 1));
  cr_assert(tl_diag_has_source(&d, "k.py"));
  cr_assert(!tl_diag_has_source(&d, "h.py"));
  tl_error(&d, ((tl_loc){"h.py", 11, 12}), "bad");
  tl_note(&d, ((tl_loc){"h.py", 40, 5}), "g");
  tl_note(&d, ((tl_loc){"k.py", 1, 1}), "a");
  tl_note(&d, ((tl_loc){"k.py", 3, 1}), "b");
  tl_note(&d, ((tl_loc){"h.py", 12, 1}), "past its part");
  cr_assert_str_eq(d.out.data,
                   "h.py:11:12: error: bad\n"
                   "    return $\n"
                   "           ^\n"
                   "h.py:40:5: note: g\n"
                   "def g(): pass\n"
                   "    ^\n"
                   "k.py:1:1: note: a\n"
                   "a = 1\n"
                   "^\n"
                   "k.py:3:1: note: b\n"
                   "b = 2\n"
                   "^\n"
                   "h.py:12:1: note: past its part\n");
  tl_diag_free(&d);
}

Test(diag, line_directive_parse) {
  long line = 0;
  const char *path = NULL;
  size_t n = 0;
  cr_assert_eq(tl_line_directive("# x", 3, &line, &path, &n), 0);
  cr_assert_eq(tl_line_directive("#@tl-line 7 a/b.py\r", 19, &line, &path, &n), 1);
  cr_assert_eq(line, 7);
  cr_assert_eq(n, 6);
  cr_assert(!memcmp(path, "a/b.py", 6));
  cr_assert_eq(tl_line_directive("#@tl-line x.py", 14, &line, &path, &n), -1);
  cr_assert_eq(tl_line_directive("#@tl-line 0 x.py", 16, &line, &path, &n), -1);
  cr_assert_eq(tl_line_directive("#@tl-line 5 ", 12, &line, &path, &n), -1);
}

Test(diag, crlf_line_endings) {
  static const char crlf[] = "a = 1\r\nb = $\r\n";
  tl_diag d;
  tl_diag_init(&d);
  tl_diag_add_source(&d, "w.py", crlf, sizeof crlf - 1);
  tl_error(&d, ((tl_loc){"w.py", 2, 5}), "bad");
  cr_assert_str_eq(d.out.data, "w.py:2:5: error: bad\nb = $\n    ^\n");
  tl_diag_free(&d);
}

Test(diag, command_line_and_no_file) {
  tl_diag d;
  tl_diag_init(&d);
  tl_error(&d, ((tl_loc){"<command line>", 0, 0}), "-D nosuch: no factory parameter named 'nosuch'");
  tl_error(&d, TL_LOC_NONE, "out of memory");
  tl_note(&d, TL_LOC_NONE, "a note");
  cr_assert_str_eq(d.out.data,
                   "<command line>: error: -D nosuch: no factory parameter named 'nosuch'\n"
                   "error: out of memory\n"
                   "note: a note\n");
  cr_assert_eq(d.errors, 2);
  cr_assert_str_eq(d.first_error.file, "<command line>");
  tl_diag_free(&d);
}

Test(diag, max_errors_keeps_counting) {
  tl_diag d;
  tl_diag_init(&d);
  cr_assert_eq(d.max_errors, 20);
  d.max_errors = 2;
  tl_error(&d, TL_LOC_NONE, "e1");
  tl_note(&d, TL_LOC_NONE, "n1");
  tl_error(&d, TL_LOC_NONE, "e2");
  tl_error(&d, TL_LOC_NONE, "e3");
  tl_note(&d, TL_LOC_NONE, "n3");
  tl_error(&d, TL_LOC_NONE, "e4");
  cr_assert_str_eq(d.out.data, "error: e1\nnote: n1\nerror: e2\n");
  cr_assert_eq(d.errors, 4);
  cr_assert_str_eq(d.first_message, "e1");
  tl_diag_free(&d);
}

Test(diag, long_message) {
  tl_diag d;
  tl_diag_init(&d);
  char *big = malloc(100001);
  memset(big, 'x', 100000);
  big[100000] = '\0';
  tl_error(&d, TL_LOC_NONE, "%s", big);
  cr_assert_eq(d.out.len, strlen("error: \n") + 100000);
  free(big);
  tl_diag_free(&d);
}

/* ---------------------------------------------------------------- context */
Test(context, lifecycle_and_errors) {
  cr_assert_eq(tl_context_create(NULL), TL_ERR_INVALID_ARGUMENT);
  tl_context *ctx = NULL;
  cr_assert_eq(tl_context_create(&ctx), TL_OK);
  cr_assert_str_eq(tl_context_last_error(ctx), "");
  cr_assert_str_eq(tl_context_last_error(NULL), "");
  cr_assert_eq(tl_context_error_count(ctx), 0);

  tl_context_begin(ctx);
  tl_diag_add_source(&ctx->diag, "k.py", SRC, sizeof SRC - 1);
  tl_error(&ctx->diag, ((tl_loc){"k.py", 2, 11}), "boom");
  cr_assert_eq(tl_context_end(ctx, TL_ERR_COMPILE), TL_ERR_COMPILE);
  cr_assert_str_eq(tl_context_last_error(ctx), "k.py:2:11: error: boom\n\tx = 1 +  $\n\t         ^\n");
  cr_assert_eq(tl_context_error_count(ctx), 1);
  const char *file;
  int line, col;
  tl_context_first_error_location(ctx, &file, &line, &col);
  cr_assert_str_eq(file, "k.py");
  cr_assert_eq(line, 2);
  cr_assert_eq(col, 11);
  tl_context_first_error_location(ctx, NULL, NULL, NULL);

  tl_context_begin(ctx);
  cr_assert_eq(tl_context_end(ctx, TL_OK), TL_OK);
  cr_assert_str_eq(tl_context_last_error(ctx), "");
  cr_assert_eq(tl_context_error_count(ctx), 0);
  tl_context_first_error_location(ctx, &file, &line, &col);
  cr_assert_null(file);
  cr_assert_eq(line, 0);

  tl_context_begin(ctx);
  cr_assert_eq(tl_context_fail(ctx, TL_ERR_IO, "cannot read '%s': %s", "x.py", "No such file"), TL_ERR_IO);
  tl_context_end(ctx, TL_ERR_IO);
  cr_assert_str_eq(tl_context_last_error(ctx), "cannot read 'x.py': No such file");
  cr_assert_eq(tl_context_error_count(ctx), 1);

  tl_context_begin(ctx);
  tl_context_end(ctx, TL_ERR_INTERNAL);
  cr_assert_str_eq(tl_context_last_error(ctx), "TL_ERR_INTERNAL");
  tl_context_destroy(ctx);
  tl_context_destroy(NULL);
  tl_free(NULL);
}

Test(context, status_names) {
  cr_assert_str_eq(tl_status_name(TL_OK), "TL_OK");
  cr_assert_str_eq(tl_status_name(TL_ERR_COMPILE), "TL_ERR_COMPILE");
  cr_assert_str_eq(tl_status_name(TL_ERR_INTERNAL), "TL_ERR_INTERNAL");
  cr_assert_str_eq(tl_status_name((tl_status)99), "TL_ERR_UNKNOWN");
}

/* ------------------------------------------------------------ file reading */
/* byte i of the test pattern: every value, NULs included */
static char pattern(size_t i) { return (char)(i * 131 + i / 251); }

Test(file, reads_regular_files_and_pipes_whole) {
  char path[] = "/tmp/tl_test_file_XXXXXX";
  int fd = mkstemp(path);
  cr_assert_geq(fd, 0);
  size_t n = 200000; /* over the 64 KiB first guess of a pipe: the buffer grows twice */
  char *want = malloc(n);
  cr_assert_not_null(want);
  for (size_t i = 0; i < n; i++) want[i] = pattern(i);
  cr_assert_eq(write(fd, want, n), (ssize_t)n);
  close(fd);
  char *got = NULL;
  size_t len = 0;
  cr_assert(tl_read_file(path, &got, &len));
  cr_assert_eq(len, n);
  cr_assert_eq(memcmp(got, want, n), 0);
  cr_assert_eq(got[n], '\0', "a NUL follows the data");
  free(got);
  /* a pipe (no size to guess from), read from its writer's child */
  int p[2];
  cr_assert_eq(pipe(p), 0);
  pid_t pid = fork();
  cr_assert_geq(pid, 0);
  if (pid == 0) {
    close(p[0]);
    for (size_t off = 0; off < n;) {
      ssize_t w = write(p[1], want + off, n - off);
      if (w <= 0) _exit(1);
      off += (size_t)w;
    }
    _exit(0);
  }
  close(p[1]);
  cr_assert(tl_read_fd(p[0], &got, &len));
  close(p[0]);
  cr_assert_eq(len, n);
  cr_assert_eq(memcmp(got, want, n), 0);
  free(got);
  /* an empty file: zero bytes, still a NUL-terminated buffer */
  cr_assert_eq(truncate(path, 0), 0);
  cr_assert(tl_read_file(path, &got, &len));
  cr_assert_eq(len, 0);
  cr_assert_eq(got[0], '\0');
  free(got);
  unlink(path);
  free(want);
}

Test(file, failures_set_errno_and_leave_outputs) {
  char *got = (char *)"untouched";
  size_t len = 7;
  errno = 0;
  cr_assert(!tl_read_file("/nonexistent/tl_test_file", &got, &len));
  cr_assert_eq(errno, ENOENT);
  errno = 0;
  cr_assert(!tl_read_file("/tmp", &got, &len));
  cr_assert_eq(errno, EISDIR);
  cr_assert_str_eq(got, "untouched");
  cr_assert_eq(len, 7);
}
