/* tl-opt: parse a TileLang kernel file and print it at a chosen IR level,
 * or run chosen lowering passes on tile IR / SIMT IR text and print the result.
 *
 * Contract: docs/tools.md "The contract".  Options are parsed with getopt_long (options may
 * come before or after FILE); FILE `-` or no FILE reads stdin, named
 * "<stdin>" in diagnostics.  Exit codes: 0 success; 1 the input is wrong
 * (diagnostics from the library on stderr, `-D` binding errors included);
 * 2 usage error (unknown option, bad option value, malformed -D, unreadable
 * input file, unwritable output file).  `-o OUT` is written only on
 * success; `-o -` is stdout.
 *
 * Only the public API is used.  --emit=tir (the default): parse (which
 * binds -D definitions, folds and verifies), optionally verify again
 * (--verify-each), print canonical tile IR.  --emit=simt|llvm|ptx: the
 * whole pipeline through the compile API (tl_kernel_compile), stopped after
 * that stage.  --passes=a,b,...: parse (tile IR or SIMT IR text, which the
 * same parser reads), run the named lowering passes in that order
 * (tl_module_run_passes) and print the IR they leave; --emit may then only
 * be tir or simt (both mean "print the IR"), and an unknown pass name is a
 * usage error that lists the known passes.  --emit=c: compile to PTX, then
 * export the kernel as C (tl_kernel_export_c; docs/aot.md): -o DIR writes
 * DIR/NAME.h and DIR/NAME.c (NAME: --export-name, else FILE's stem), -o
 * PATH.c writes PATH.c and PATH.h; with an explicit --target a cubin from
 * ptxas is embedded too when ptxas is there. */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "tilelang/core.h"
#include "tilelang/ir.h"
#include "tilelang/runtime.h"
#include "../common/cli.h"

enum { EXIT_INPUT = 1, EXIT_USAGE = 2 };

static const char *const EMITS[] = {"ast", "tir", "simt", "llvm", "ptx", "c"};

static void usage(FILE *f) {
  fputs(
      "usage: tl-opt [options] [FILE]\n"
      "\n"
      "Parses a TileLang kernel file (FILE, or stdin when FILE is '-' or missing)\n"
      "and prints it at the requested IR level.\n"
      "\n"
      "options:\n"
      "  -D NAME=VALUE         bind a factory parameter or module constant\n"
      "                        (also -DNAME=VALUE; the last -D of a name wins)\n"
      "  -o OUT                write the result to OUT ('-' = stdout), only on success\n"
      "  --emit=LEVEL          ast (the parsed Python, as CPython's ast.dump), tir (default:\n"
      "                        canonical tile IR), simt, llvm, ptx, c (export the kernel as\n"
      "                        C: -o DIR or -o NAME.c required; docs/aot.md)\n"
      "  --export-name=NAME    (--emit=c) the C name of the exported kernel and its files\n"
      "                        (default: FILE's stem)\n"
      "  --passes=P1,P2,...    run only these lowering passes, in this order, on\n"
      "                        FILE (tile IR, or SIMT IR for the SIMT-level\n"
      "                        passes) and print the result (--emit=llvm|ptx\n"
      "                        are not allowed with it); --passes=help lists\n"
      "                        the passes, their IR level and contract\n"
      "  --target=ARCH         sm_80, sm_86, sm_89, sm_90, sm_90a (default: the\n                        GPU's arch when a driver and GPU exist, else sm_80)\n"
      "  --kernel=NAME         compile the factory or @T.prim_func of that Python name\n"
      "                        (default: the file's kernels whose parameters have values)\n"
      "  --verify-each         run the IR verifier after every stage\n"
      "  --remarks             say on stderr which path each T.Pipelined GEMM or attention loop took\n"
      "                        (sm_90a: TMA + wgmma + warp specialization, or cp.async +\n"
      "                        mma.sync) and why (also: TL_REMARKS=1 in the environment)\n"
      "  --sms=N               plan persistent sm_90a GEMM and attention grids (and stream-K) for N SMs\n"
      "                        instead of the target's (132 on sm_90a)\n"
      "  --print-after-all     print each stage (or each --passes pass) to stderr under a\n"
      "                        '// ----- after <pass> -----' header\n"
      "  --cache-info          (simt, llvm, ptx) say on stderr whether the compile hit the\n"
      "                        kernel cache: 'tl-opt: kernel cache: hit|miss|corrupt|off KEY'\n"
      "                        (TL_CACHE_DIR, TL_CACHE=0, TL_CACHE_MAX_MB: README)\n"
      "  -h, --help            show this help and exit\n"
      "\n"
      "exit status: 0 success, 1 invalid input (diagnostics on stderr),\n"
      "2 usage error (bad option, unreadable file)\n",
      f);
}

/* --passes=help: the registry, one pass a line. */
static void list_passes(FILE *f) {
  for (size_t i = 0; i < tl_pass_count(); i++) {
    const tl_pass_info *p = tl_pass_at(i);
    fprintf(f, "%-17s %-4s  %s\n", p->name, p->ir_level, p->contract);
  }
}

/* Splits the --passes list (in place: argv strings are writable) into
 * names[]; each must be a registered pass.  Returns the number of names,
 * or -1 after a usage error. */
static int split_passes(char *list, const char **names, int max) {
  int n = 0;
  for (char *p = list;; p = NULL) {
    char *name = strtok(p, ",");
    if (!name) break;
    bool known = false;
    for (size_t i = 0; i < tl_pass_count() && !known; i++)
      known = strcmp(tl_pass_at(i)->name, name) == 0;
    if (!known || n == max) {
      fprintf(stderr, "tl-opt: error: %s '%s'; known passes:\n",
              known ? "too many passes at" : "unknown pass", name);
      list_passes(stderr);
      return -1;
    }
    names[n++] = name;
  }
  if (n == 0) tl_cli_usage_error("--passes%s needs at least one pass name", "");
  return n > 0 ? n : -1;
}

/* --print-after-all with --passes: each pass's result to stderr. */
static void print_pass(void *user, const char *pass, const char *text) {
  (void)user;
  fprintf(stderr, "// ----- after %s -----\n", pass);
  fputs(text, stderr);
}

static int in_list(const char *s, const char *const *list, size_t n) {
  for (size_t i = 0; i < n; i++)
    if (strcmp(s, list[i]) == 0) return (int)i;
  return -1;
}

static bool write_all(FILE *f, const char *text) {
  size_t n = strlen(text);
  return fwrite(text, 1, n, f) == n;
}

/* --print-after-all: each stage to stderr under a header, up to the --emit
 * level (the "llvm" and "ptx" stages only when they were asked for). */
typedef struct stage_printer { const char *emit; bool done; } stage_printer;

static void print_stage(void *user, const char *stage, const char *text) {
  stage_printer *sp = user;
  if (sp->done) return;
  if (strcmp(stage, "llvm") == 0 && strcmp(sp->emit, "simt") == 0) return;
  if (strcmp(stage, "ptx") == 0 && strcmp(sp->emit, "ptx") != 0) return;
  fprintf(stderr, "// ----- after %s -----\n", stage);
  fputs(text, stderr);
  if (strcmp(stage, sp->emit) == 0) sp->done = true;
}

/* What the command line asks for, after the options are parsed. */
typedef struct tl_opt_job {
  const char *emit, *target, *kernel;
  bool verify_each, print_after_all, cache_info;
  const char *const *passes;
  int npasses;
  const tl_define *defines;
  size_t ndefines;
  int sms;      /* --sms */
  bool remarks; /* --remarks */
} tl_opt_job;

/* Parses the source and produces the text to print (*text, tl_free'd by the
 * caller; *m / *kernel keep what it was made from). */
static tl_status produce(tl_context *ctx, const tl_opt_job *job, const char *source, size_t len,
                         const char *display, tl_module **m, tl_kernel **kernel, char **text) {
  const tl_define *defines = job->defines;
  size_t ndefines = job->ndefines;
  tl_status s;
  if (job->npasses > 0) {
    /* The named passes only, on the parsed text, at its own IR level. */
    tl_pass_options po = {0};
    po.target = tl_target_resolve(job->target);
    po.verify_each = job->verify_each;
    po.remarks = job->remarks;
    if (job->print_after_all) po.after_pass = print_pass;
    s = tl_module_parse_kernel(ctx, source, len, display, job->kernel, defines, ndefines, m);
    if (s == TL_OK) fputs(tl_context_warnings(ctx), stderr); /* kernels skipped, ... */
    if (s == TL_OK) s = tl_module_run_passes(ctx, *m, job->passes, (size_t)job->npasses, &po);
    if (s == TL_OK) s = tl_module_print(ctx, *m, text);
  } else if (strcmp(job->emit, "ast") == 0) {
    s = tl_python_ast_dump(ctx, source, len, display, text);
  } else if (strcmp(job->emit, "tir") == 0) {
    s = tl_module_parse_kernel(ctx, source, len, display, job->kernel, defines, ndefines, m);
    if (s == TL_OK) fputs(tl_context_warnings(ctx), stderr); /* kernels skipped, ... */
    if (s == TL_OK && job->verify_each) s = tl_module_verify(ctx, *m);
    if (s == TL_OK) s = tl_module_print(ctx, *m, text);
    if (s == TL_OK && job->print_after_all) {
      fputs("// ----- after parse -----\n", stderr);
      fputs(*text, stderr);
    }
  } else {
    /* Lower and generate code through the compile API; stages print as
     * they finish when --print-after-all is given. */
    stage_printer sp = {job->emit, false};
    tl_compile_options co = {0};
    co.target = job->target;
    co.verify_each = job->verify_each;
    co.kernel = job->kernel;
    co.sms = job->sms;
    co.remarks = job->remarks;
    co.stop_after = strcmp(job->emit, "simt") == 0 ? TL_STAGE_SIMT : TL_STAGE_PTX; /* c: PTX, then exported */
    /* The LLVM IR text is produced only when it is printed. */
    if (strcmp(job->emit, "llvm") == 0) co.flags |= TL_COMPILE_KEEP_LLVM_IR;
    if (job->print_after_all) {
      co.after_stage = print_stage;
      co.after_stage_user = &sp;
    }
    s = tl_kernel_compile(ctx, source, len, display, defines, ndefines, &co, kernel);
    if (s == TL_OK) fputs(tl_context_warnings(ctx), stderr);
    if (s == TL_OK && job->cache_info) tl_cli_print_cache_info(*kernel);
    if (s == TL_OK) {
      const char *t = strcmp(job->emit, "simt") == 0   ? tl_kernel_simt_ir(*kernel)
                      : strcmp(job->emit, "llvm") == 0 ? tl_kernel_llvm_ir(*kernel)
                                                       : tl_kernel_ptx(*kernel);
      if (!(*text = strdup(t ? t : ""))) s = TL_ERR_NO_MEMORY;
    }
  }
  return s;
}

/* Writes the result to OUT ('-' or none: stdout); 0, or the exit status. */
static int write_result(const char *out_path, const char *text) {
  if (!out_path || strcmp(out_path, "-") == 0) {
    if (!write_all(stdout, text) || fflush(stdout) != 0) {
      fprintf(stderr, "tl-opt: error: cannot write to stdout: %s\n", strerror(errno));
      return EXIT_INPUT;
    }
  } else {
    FILE *f = fopen(out_path, "wb");
    if (!f) {
      fprintf(stderr, "tl-opt: error: cannot write '%s': %s\n", out_path, strerror(errno));
      return EXIT_USAGE;
    }
    bool ok = write_all(f, text);
    int e = errno;
    if (fclose(f) != 0 && ok) {
      ok = false;
      e = errno;
    }
    if (!ok) {
      fprintf(stderr, "tl-opt: error: cannot write '%s': %s\n", out_path, strerror(e));
      remove(out_path);
      return EXIT_USAGE;
    }
  }
  return 0;
}

/* --emit against the other options: 0, or the usage error's exit status. */
static int check_emit(const char *emit, int npasses, const char *out_path) {
  if (npasses > 0 && strcmp(emit, "tir") != 0 && strcmp(emit, "simt") != 0)
    return tl_cli_usage_error("--emit=%s cannot follow --passes (which prints the IR: tir or simt)", emit);
  if (strcmp(emit, "c") == 0 && (!out_path || strcmp(out_path, "-") == 0))
    return tl_cli_usage_error("--emit=%s writes two files: give -o DIR or -o NAME.c", emit);
  return 0;
}

/* --emit=c: the export of kernel k (docs/aot.md) to -o OUT: OUT.c (and OUT.h) when OUT ends in ".c", else the
 * directory OUT (made when missing) with NAME.h and NAME.c, NAME = --export-name, else the input file's stem
 * ("kernel" for stdin) with every character that is not a letter, digit or '_' made '_'.  With an explicit
 * --target a cubin is embedded when ptxas runs (a note says so when it does not).  0 or the exit status. */
static int export_c(tl_context *ctx, tl_kernel *k, const char *out, const char *in_path, const char *export_name,
                    bool cubin) {
  char name[256], h_path[4096], c_path[4096];
  size_t n = strlen(out);
  const char *stem_src = export_name;
  bool to_file = n > 2 && strcmp(out + n - 2, ".c") == 0;
  char stem[256];
  if (!stem_src) {
    const char *base = to_file ? out : in_path && strcmp(in_path, "-") != 0 ? in_path : "kernel";
    const char *slash = strrchr(base, '/');
    snprintf(stem, sizeof stem, "%s", slash ? slash + 1 : base);
    char *dot = strrchr(stem, '.');
    if (dot && dot != stem) *dot = 0;
    for (char *p = stem; *p; p++)
      if (!((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9'))) *p = '_';
    if (stem[0] >= '0' && stem[0] <= '9') memmove(stem + 1, stem, strlen(stem) + 1), stem[0] = '_';
    stem_src = stem;
  }
  snprintf(name, sizeof name, "%s", stem_src);
  if (to_file) {
    snprintf(c_path, sizeof c_path, "%s", out);
    snprintf(h_path, sizeof h_path, "%.*sh", (int)(n - 1), out);
  } else {
    if (mkdir(out, 0777) != 0 && errno != EEXIST) {
      fprintf(stderr, "tl-opt: error: cannot make the directory '%s': %s\n", out, strerror(errno));
      return EXIT_USAGE;
    }
    snprintf(h_path, sizeof h_path, "%s/%s.h", out, name);
    snprintf(c_path, sizeof c_path, "%s/%s.c", out, name);
  }
  tl_export_options eo = {0};
  eo.name = name;
  eo.source = in_path && strcmp(in_path, "-") != 0 ? in_path : NULL;
  eo.cubin = cubin;
  tl_status s = tl_kernel_export_c(ctx, k, h_path, c_path, &eo);
  if (s != TL_OK) {
    fprintf(stderr, "tl-opt: error: %s\n", *tl_context_last_error(ctx) ? tl_context_last_error(ctx) : tl_status_name(s));
    return s == TL_ERR_IO ? EXIT_USAGE : EXIT_INPUT;
  }
  if (cubin && !eo.cubin_embedded)
    fprintf(stderr, "tl-opt: note: no cubin embedded (ptxas was not found or failed): the export carries the PTX only\n");
  return 0;
}

int main(int argc, char **argv) {
  tl_cli_tool_name = "tl-opt";
  enum { OPT_EMIT = 256, OPT_TARGET, OPT_VERIFY_EACH, OPT_PRINT_AFTER_ALL, OPT_PASSES, OPT_KERNEL, OPT_REMARKS,
         OPT_CACHE_INFO, OPT_SMS, OPT_EXPORT_NAME };
  enum { MAX_PASSES = 64 };
  static const struct option longopts[] = {
      {"emit", required_argument, NULL, OPT_EMIT},
      {"target", required_argument, NULL, OPT_TARGET},
      {"passes", required_argument, NULL, OPT_PASSES},
      {"kernel", required_argument, NULL, OPT_KERNEL},
      {"verify-each", no_argument, NULL, OPT_VERIFY_EACH},
      {"print-after-all", no_argument, NULL, OPT_PRINT_AFTER_ALL},
      {"remarks", no_argument, NULL, OPT_REMARKS},
      {"cache-info", no_argument, NULL, OPT_CACHE_INFO},
      {"sms", required_argument, NULL, OPT_SMS},
      {"export-name", required_argument, NULL, OPT_EXPORT_NAME},
      {"help", no_argument, NULL, 'h'},
      {NULL, 0, NULL, 0},
  };
  const char *emit = "tir", *target = NULL, *out_path = NULL, *in_path = NULL, *kernel_name = NULL,
             *export_name = NULL;
  bool verify_each = false, print_after_all = false, cache_info = false;
  int sms = 0;
  bool remarks = false;
  const char *passes[MAX_PASSES];
  int npasses = 0;
  tl_define *defines = calloc((size_t)argc + 1, sizeof *defines);
  size_t ndefines = 0;
  int rc = EXIT_USAGE;
  char *source = NULL, *text = NULL;
  tl_context *ctx = NULL;
  tl_module *m = NULL;
  tl_kernel *kernel = NULL;
  if (!defines) {
    fputs("tl-opt: error: out of memory\n", stderr);
    return EXIT_INPUT;
  }

  opterr = 0;
  int c;
  while ((c = getopt_long(argc, argv, ":D:o:h", longopts, NULL)) != -1) {
    switch (c) {
      case 'D': {
        /* Split NAME=VALUE in place: argv strings are writable. */
        if (!tl_cli_split_define(optarg, &defines[ndefines])) {
          rc = tl_cli_usage_error("malformed -D '%s': expected -D NAME=VALUE", optarg);
          goto done;
        }
        ndefines++;
        break;
      }
      case 'o':
        out_path = optarg;
        break;
      case OPT_REMARKS: /* tl_compile_options.remarks, tl_pass_options.remarks */
        remarks = true;
        break;
      case OPT_SMS:
        if (!tl_cli_parse_sms(optarg, &sms)) goto done; /* rc is EXIT_USAGE while parsing options */
        break;
      case 'h':
        usage(stdout);
        rc = 0;
        goto done;
      case OPT_EMIT:
        if (in_list(optarg, EMITS, sizeof EMITS / sizeof *EMITS) < 0) {
          rc = tl_cli_usage_error("unknown --emit level '%s' (expected ast, tir, simt, llvm, ptx or c)",
                           optarg);
          goto done;
        }
        emit = optarg;
        break;
      case OPT_TARGET:
        if (!tl_cli_check_target(optarg)) {
          rc = EXIT_USAGE;
          goto done;
        }
        target = optarg;
        break;
      case OPT_PASSES:
        if (strcmp(optarg, "help") == 0) {
          list_passes(stdout);
          rc = 0;
          goto done;
        }
        if ((npasses = split_passes(optarg, passes, MAX_PASSES)) < 0) {
          rc = EXIT_USAGE;
          goto done;
        }
        break;
      case OPT_VERIFY_EACH:
        verify_each = true;
        break;
      case OPT_KERNEL:
        kernel_name = optarg;
        break;
      case OPT_PRINT_AFTER_ALL:
        print_after_all = true;
        break;
      case OPT_CACHE_INFO: cache_info = true; break;
      case OPT_EXPORT_NAME: export_name = optarg; break;
      case ':':
        rc = tl_cli_usage_error("option '%s' requires an argument", tl_cli_bad_option(argc, argv));
        goto done;
      default:
        /* Also a long option given a value it does not take ("--help=x"). */
        rc = tl_cli_usage_error("unknown or malformed option '%s'", tl_cli_bad_option(argc, argv));
        goto done;
    }
  }
  if ((rc = check_emit(emit, npasses, out_path)) != 0) goto done;
  rc = EXIT_USAGE;
  if (!tl_cli_single_input(argc, argv, &in_path)) {
    rc = EXIT_USAGE;
    goto done;
  }
  const char *display = NULL;
  size_t len = 0;
  if (!tl_cli_read_input("tl-opt", in_path, &source, &len, &display)) {
    rc = EXIT_USAGE;
    goto done;
  }

  tl_opt_job job = {emit,           target,  kernel_name, verify_each, print_after_all,
                    cache_info,     passes,  npasses,     defines,     ndefines, sms, remarks};
  tl_status s = tl_context_create(&ctx);
  if (s != TL_OK) {
    fprintf(stderr, "tl-opt: error: %s\n", tl_status_name(s));
    rc = EXIT_INPUT;
    goto done;
  }
  s = produce(ctx, &job, source, len, display, &m, &kernel, &text);
  if (s != TL_OK) {
    tl_cli_print_library_error(ctx, s);
    rc = EXIT_INPUT;
    goto done;
  }

  if (strcmp(emit, "c") == 0) rc = export_c(ctx, kernel, out_path, in_path, export_name, target != NULL);
  else rc = write_result(out_path, text);

done:
  tl_free(text);
  tl_module_destroy(m);
  tl_kernel_destroy(kernel);
  tl_context_destroy(ctx);
  free(source);
  free(defines);
  return rc;
}
