/* libFuzzer target: the parse → print → parse → print round trip, then
 * elaborate → lower → SIMT executor (fuzz_pipeline.c).
 *
 * For any input that parses, the canonical text must parse again, print to
 * the same bytes, and give a structurally equal module; anything else is a
 * bug and traps.  Then the input is lowered and, when small, run on the CPU
 * SIMT executor.  Inputs that do not parse, lower or run must simply fail
 * cleanly (the sanitizers catch crashes, leaks and undefined behaviour on
 * the way).  Inputs over 64 KiB are skipped to keep iterations fast. */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "fuzz_pipeline.h"
#include "tilelang/core.h"
#include "tilelang/ir.h"

#define MAX_INPUT (64 * 1024)

static void fail(const char *what, tl_context *ctx, const char *t1, const char *t2) {
  fprintf(stderr, "fuzz_roundtrip: %s\n", what);
  if (ctx) fprintf(stderr, "%s\n", tl_context_last_error(ctx));
  if (t1) fprintf(stderr, "--- first print ---\n%s", t1);
  if (t2) fprintf(stderr, "--- second print ---\n%s", t2);
  __builtin_trap();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size > MAX_INPUT) return 0;
  tl_context *ctx = NULL;
  if (tl_context_create(&ctx) != TL_OK) return 0;
  tl_module *m1 = NULL, *m2 = NULL;
  char *t1 = NULL, *t2 = NULL;
  /* An empty buffer still needs a valid pointer. */
  const char *src = size ? (const char *)data : "";
  tl_status s = tl_module_parse(ctx, src, size, "<fuzz>", NULL, 0, &m1);
  if (s == TL_OK) {
    if (tl_module_print(ctx, m1, &t1) != TL_OK) fail("printing a parsed module failed", ctx, 0, 0);
    if (tl_module_parse(ctx, t1, strlen(t1), "<printed>", NULL, 0, &m2) != TL_OK)
      fail("the printed text does not parse", ctx, t1, 0);
    if (tl_module_print(ctx, m2, &t2) != TL_OK) fail("printing the reparsed module failed", ctx, t1, 0);
    if (strcmp(t1, t2) != 0) fail("printing is not a fixed point", NULL, t1, t2);
    if (!tl_module_equal(m1, m2)) fail("the reparsed module is not equal", NULL, t1, t2);
  }
  tl_free(t1);
  tl_free(t2);
  tl_module_destroy(m1);
  tl_module_destroy(m2);
  if (s == TL_OK) fuzz_pipeline(ctx, src, size);
  tl_context_destroy(ctx);
  return 0;
}
