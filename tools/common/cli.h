/* Helpers shared by the command-line tools (tl-opt, tl-run): reading a whole
 * input, reporting a failed library call, naming a rejected option.  They
 * implement parts of the tool contract of DESIGN §10 that both tools share. */
#ifndef TL_TOOLS_CLI_H
#define TL_TOOLS_CLI_H

#include <stdbool.h>
#include <stddef.h>

#include "tilelang/core.h"
#include "tilelang/ir.h"

/* Reads the tool's whole input (DESIGN §10): the file at path, or stdin when
 * path is NULL or "-".  *out gets a malloc'd buffer of *out_len bytes
 * (binary-safe, not NUL-terminated; the caller frees it) and *display the name
 * for diagnostics ("<stdin>" or path).  On failure prints
 * "TOOL: error: cannot read 'NAME': <strerror>" and returns false. */
bool tl_cli_read_input(const char *tool, const char *path, char **out, size_t *out_len,
                       const char **display);

/* Splits a -D argument "NAME=VALUE" in place into *out (pointers into arg);
 * false when there is no '=' or the name is empty. */
bool tl_cli_split_define(char *arg, tl_define *out);

/* Prints the library's message for a failed call on ctx (the rendered
 * diagnostics, or the status name when there is none) to stderr, ending in a
 * newline. */
void tl_cli_print_library_error(tl_context *ctx, tl_status s);

/* The option getopt_long just rejected, as the user spelled it ("--bogus",
 * "-x"); static storage. */
const char *tl_cli_bad_option(int argc, char **argv);

#endif
