/* Helpers shared by the command-line tools (see cli.h): whole-input reading
 * (file or stdin, with lib/Support/file.c, which the tools compile in), -D
 * splitting, library error printing, getopt_long's rejected option. */
#include "cli.h"

#include "Support/file.h"
#include "tilelang/runtime.h"

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

bool tl_cli_read_input(const char *tool, const char *path, char **out, size_t *out_len, const char **display) {
  bool from_stdin = !path || strcmp(path, "-") == 0;
  *display = from_stdin ? "<stdin>" : path;
  int fd = from_stdin ? STDIN_FILENO : open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0 || !tl_read_fd(fd, out, out_len)) {
    int e = errno;
    if (fd >= 0 && !from_stdin) close(fd);
    fprintf(stderr, "%s: error: cannot read '%s': %s\n", tool, *display, strerror(e));
    return false;
  }
  if (!from_stdin) close(fd);
  return true;
}

bool tl_cli_split_define(char *arg, tl_define *out) {
  char *eq = strchr(arg, '=');
  if (!eq || eq == arg) return false;
  *eq = '\0';
  out->name = arg;
  out->value = eq + 1;
  return true;
}

void tl_cli_print_library_error(tl_context *ctx, tl_status s) {
  const char *msg = tl_context_last_error(ctx);
  if (!*msg) msg = tl_status_name(s);
  size_t n = strlen(msg);
  fputs(msg, stderr);
  if (n == 0 || msg[n - 1] != '\n') fputc('\n', stderr);
}

const char *tl_cli_bad_option(int argc, char **argv) {
  static char shortopt[3];
  if (optind >= 1 && optind - 1 < argc && strncmp(argv[optind - 1], "--", 2) == 0) return argv[optind - 1];
  if (optopt > 0 && optopt < 128) {
    shortopt[0] = '-';
    shortopt[1] = (char)optopt;
    shortopt[2] = '\0';
    return shortopt;
  }
  return optind >= 1 && optind - 1 < argc ? argv[optind - 1] : "?";
}

const char *tl_cli_tool_name = "tl";

int tl_cli_usage_error(const char *fmt, const char *arg) {
  fprintf(stderr, "%s: error: ", tl_cli_tool_name);
  fprintf(stderr, fmt, arg);
  fprintf(stderr, "\ntry '%s --help' for more information\n", tl_cli_tool_name);
  return 2;
}

bool tl_cli_check_target(const char *name) {
  if (tl_target_supported(name)) return true;
  char fmt[160];
  snprintf(fmt, sizeof fmt, "unknown --target '%%s' (expected %s)", tl_target_list());
  tl_cli_usage_error(fmt, name);
  return false;
}

bool tl_cli_parse_sms(const char *arg, int *sms) {
  char *end = NULL;
  long v = strtol(arg, &end, 10);
  if (!*arg || *end || v < 1 || v > 100000) {
    tl_cli_usage_error("--sms needs an SM count of 1 to 100000, got '%s'", arg);
    return false;
  }
  *sms = (int)v;
  return true;
}

bool tl_cli_single_input(int argc, char **argv, const char **in_path) {
  for (int i = optind; i < argc; i++) {
    if (*in_path) {
      tl_cli_usage_error("more than one input file ('%s')", argv[i]);
      return false;
    }
    *in_path = argv[i];
  }
  return true;
}

void tl_cli_print_cache_info(const tl_kernel *k) {
  static const char *const names[] = {"off", "miss", "hit", "corrupt"};
  tl_cache_result r = tl_kernel_cache_result(k);
  const char *key = tl_kernel_cache_key(k);
  fprintf(stderr, "%s: kernel cache: %s%s%s\n", tl_cli_tool_name, (unsigned)r < 4 ? names[r] : "?",
          key && *key ? " " : "", key ? key : "");
}

bool tl_cli_parse_g(const char *arg, bool *no_line_info) {
  if (!arg || strcmp(arg, "1") == 0 || strcmp(arg, "line-tables-only") == 0) {
    *no_line_info = false;
    return true;
  }
  if (strcmp(arg, "0") == 0) {
    *no_line_info = true;
    return true;
  }
  tl_cli_usage_error("unknown option '-g%s' (expected -g0, -g, -g1 or -gline-tables-only)", arg);
  return false;
}
