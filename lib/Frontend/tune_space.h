/* The configuration space of a kernel's @tilelang.autotune decorator
 * (internal to lib/Frontend; the public face is tl_tune_space_* in
 * include/tilelang/ir.h, the tuner that uses it lib/Runtime/tune.c).
 *
 * tl_frontend_autotune runs the elaborator's module phase (imports, lazy
 * module constants, classification of defs) and then, instead of building
 * kernels, evaluates the decorator's configs= (a list of dicts, or a
 * function of no arguments returning one) and warmup= / rep= as
 * compile-time Python (elab_autotune.c).  Each config becomes -D bindings
 * of the factory's parameters: the value as the text a -D would carry
 * ("128", "True", "'float16'", "1.5", "(64, 32)"). */
#ifndef TL_IR_TUNE_SPACE_H
#define TL_IR_TUNE_SPACE_H

#include "IR/tir.h"
#include "Support/support.h"
#include "tilelang/ir.h"

struct tl_tune_space {
  tl_arena arena;     /* owns every string and array below */
  bool found;         /* the kernel has an @autotune decorator */
  const char *kernel; /* the decorated factory's Python name */
  int warmup, rep;    /* the decorator's warmup= / rep=, -1 when absent */
  size_t n;           /* number of configs */
  size_t *nkeys;      /* per config: number of bindings */
  tl_define **defs;   /* per config: the bindings (name, -D value text) */
  const char *text;   /* every config, one "k=v k=v" line each (the cache key's part) */
};

/* Parses source as tl_frontend_parse_kernel does up to the classification
 * of defs, then fills *out (zeroed by the caller, its arena initialised)
 * from the @tilelang.autotune decorator of the kernel named `kernel` (NULL:
 * the first decorated def).  out->found stays false when there is none.
 * Errors (located, in d): a bad decorator, configs that are not a list of
 * dicts of constants, a key that is not a factory parameter, an empty
 * list.  Returns false when any error was reported. */
bool tl_frontend_autotune(tl_module *m, tl_diag *d, const char *source, size_t len, const char *filename,
                          const tl_define *defs, size_t ndefs, const char *kernel, struct tl_tune_space *out);

#endif
