/* Helpers shared by the command-line tools (tl-opt, tl-run): reading a whole
 * input, reporting a failed library call, naming a rejected option.  They
 * implement parts of the tool contract of DESIGN §10 that both tools share. */
#ifndef TL_TOOLS_CLI_H
#define TL_TOOLS_CLI_H

#include <stdbool.h>
#include <stddef.h>

#include "tilelang/core.h"

/* Reads all of fd into a malloc'd buffer (*out, *out_len bytes; binary-safe,
 * not NUL-terminated); false with errno set on failure (ENOMEM or the read
 * error).  The caller frees *out. */
bool tl_cli_read_all(int fd, char **out, size_t *out_len);

/* Prints the library's message for a failed call on ctx (the rendered
 * diagnostics, or the status name when there is none) to stderr, ending in a
 * newline. */
void tl_cli_print_library_error(tl_context *ctx, tl_status s);

/* The option getopt_long just rejected, as the user spelled it ("--bogus",
 * "-x"); static storage. */
const char *tl_cli_bad_option(int argc, char **argv);

#endif
