/* Helpers shared by the command-line tools (tl-opt, tl-run): reading a whole
 * input, reporting a failed library call, naming a rejected option.  They
 * implement parts of the tool contract of docs/tools.md "The contract" that both tools share. */
#ifndef TL_TOOLS_CLI_H
#define TL_TOOLS_CLI_H

#include <stdbool.h>
#include <stddef.h>

#include "tilelang/core.h"
#include "tilelang/ir.h"
#include "tilelang/runtime.h"

/* Reads the tool's whole input (docs/tools.md "The contract"): the file at path, or stdin when
 * path is NULL or "-".  *out gets a malloc'd buffer of *out_len bytes
 * (binary-safe, not NUL-terminated; the caller frees it) and *display the name
 * for diagnostics ("<stdin>" or path).  On failure prints
 * "TOOL: error: cannot read 'NAME': <strerror>" and returns false. */
bool tl_cli_read_input(const char *tool, const char *path, char **out, size_t *out_len, const char **display);

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

/* Validates a --target value (tl_target_supported); on failure prints
 * "TOOL: error: unknown --target 'X' (expected ...)" and the --help hint to
 * stderr and returns false (a usage error, exit 2).  The tool name comes from
 * tl_cli_tool_name. */
bool tl_cli_check_target(const char *name);

/* Parses a --sms value (the SM count persistent sm_90a GEMMs plan for,
 * tl_compile_options.sms) into *sms: 1..100000; otherwise prints a usage
 * error as tl_cli_check_target does and returns false. */
bool tl_cli_parse_sms(const char *arg, int *sms);

/* Parses -g's argument (the short option "g::": NULL for a bare -g) as clang
 * users write it: -g0 turns line information off (*no_line_info = true),
 * -g, -g1 and -gline-tables-only leave it on (the default); anything else
 * prints a usage error as tl_cli_check_target does and returns false. */
bool tl_cli_parse_g(const char *arg, bool *no_line_info);

/* The positional arguments after getopt_long: at most one input file.  Sets
 * *in_path (unchanged when there is none); with more than one prints a usage
 * error and returns false. */
bool tl_cli_single_input(int argc, char **argv, const char **in_path);

/* Prints "TOOL: error: <fmt with arg>" and the --help hint to stderr;
 * returns 2, the usage-error exit status (docs/tools.md "The contract"). */
int tl_cli_usage_error(const char *fmt, const char *arg) __attribute__((format(printf, 1, 0)));

/* --cache-info: prints "TOOL: kernel cache: hit|miss|corrupt|off KEY" for
 * k's compile (tl_kernel_cache_result) to stderr. */
void tl_cli_print_cache_info(const tl_kernel *k);

/* The tool's name in messages ("tl-opt"); set once in main. */
extern const char *tl_cli_tool_name;

#endif
