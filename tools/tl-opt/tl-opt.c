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
 * ptxas is embedded too when ptxas is there.  --analyze: parse, then print
 * the work counts of tl_module_analyze instead of the IR. */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../common/cli.h"
#include "tilelang/core.h"
#include "tilelang/ir.h"
#include "tilelang/runtime.h"

enum { EXIT_INPUT = 1, EXIT_USAGE = 2 };

static const char *const EMITS[] = {"ast", "tir", "simt", "llvm", "ptx", "c"};

/* Is stage in the comma-separated list? */
static bool listed(const char *list, const char *stage) {
  size_t n = strlen(stage);
  for (const char *p = list; p && *p;) {
    const char *e = strchr(p, ',');
    size_t len = e ? (size_t)(e - p) : strlen(p);
    if (len == n && strncmp(p, stage, n) == 0) return true;
    p = e ? e + 1 : NULL;
  }
  return false;
}

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
      "  --target=ARCH         sm_80, sm_86, sm_89, sm_90, sm_90a (default: the\n                        GPU's arch "
      "when a driver and GPU exist, else sm_80)\n"
      "  --kernel=NAME         compile the factory or @T.prim_func of that Python name\n"
      "                        (default: the file's kernels whose parameters have values)\n"
      "  --verify-each         run the IR verifier after every stage\n"
      "  --remarks             say on stderr which path each T.Pipelined GEMM or attention loop took\n"
      "                        (sm_90a: TMA + wgmma + warp specialization, or cp.async +\n"
      "                        mma.sync) and why\n"
      "  --sms=N               plan persistent sm_90a GEMM and attention grids (and stream-K) for N SMs\n"
      "                        instead of the target's (132 on sm_90a)\n"
      "  --no-line-info, -g0   no source lines in the PTX (by default each statement's file:line:col\n"
      "                        is a .loc directive; -g, -g1, -gline-tables-only keep them)\n"
      "  --print-after-all[=MODE]\n"
      "                        print each stage (or each --passes pass) to stderr under a\n"
      "                        '// ----- after <pass> -----' header; MODE changed (the\n"
      "                        default, as LLVM's -print-changed): a stage whose IR is the\n"
      "                        previous dump's prints only '// ----- after <pass>: no\n"
      "                        change (omitted) -----'; all: every dump in full (LLVM's\n"
      "                        -print-after-all); quiet: changed dumps only, no omitted lines\n"
      "  --print-changed[=quiet]  --print-after-all=changed (=quiet: --print-after-all=quiet)\n"
      "  --print-after=P1,...  the same for the named stages only (after layout-inference\n"
      "                        the layouts it set follow as '# ' comments)\n"
      "  --dump-layouts[=FMT]  print the layout of every buffer after layout-inference instead\n"
      "                        of the IR: FMT text (default) to stdout or -o FILE; svg: one\n"
      "                        picture per fragment and shared buffer into -o DIR (required),\n"
      "                        the text to stdout\n"
      "  --dump-layouts-full   every element in the dump (default: a window of large buffers)\n"
      "  --analyze             print the work of one launch instead of the IR, one key=value\n"
      "                        per line: flops (2*M*N*K per T.gemm), global_bytes (read +\n"
      "                        write), global_read_bytes, global_write_bytes, gemms, blocks\n"
      "                        (docs/tools.md, \"Work analysis\")\n"
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
    for (size_t i = 0; i < tl_pass_count() && !known; i++) known = strcmp(tl_pass_at(i)->name, name) == 0;
    if (!known || n == max) {
      fprintf(stderr, "tl-opt: error: %s '%s'; known passes:\n", known ? "too many passes at" : "unknown pass", name);
      list_passes(stderr);
      return -1;
    }
    names[n++] = name;
  }
  if (n == 0) tl_cli_usage_error("--passes%s needs at least one pass name", "");
  return n > 0 ? n : -1;
}

/* --print-after-all's modes (--print-changed is DUMP_CHANGED). */
enum { DUMP_OFF, DUMP_CHANGED, DUMP_ALL, DUMP_QUIET };

/* The dumps of --print-after-all: the previous dump's text (what "changed"
 * compares with), and for the compile stages the --emit level they stop at. */
typedef struct dumper {
  int mode;
  char *prev;       /* malloc'd; NULL before the first dump */
  const char *emit; /* the stages: up to this one (the "llvm" and "ptx" stages only when asked for) */
  bool done;
  const char *only; /* --print-after's list: only these stages print, in full; NULL: every stage */
} dumper;

/* Prints stage's text to stderr under its header, or (changed and quiet
 * modes) a one-line note / nothing when it is the previous dump's text. */
static void dump(dumper *d, const char *stage, const char *text) {
  bool same = d->prev && strcmp(d->prev, text) == 0;
  if (d->only) {
    if (listed(d->only, stage)) fprintf(stderr, "// ----- after %s -----\n%s", stage, text);
  } else if (!same || d->mode == DUMP_ALL) {
    fprintf(stderr, "// ----- after %s -----\n", stage);
    fputs(text, stderr);
  } else if (d->mode == DUMP_CHANGED) {
    fprintf(stderr, "// ----- after %s: no change (omitted) -----\n", stage);
  }
  if (!same) {
    free(d->prev);
    d->prev = strdup(text);
  }
}

/* --print-after-all with --passes: each pass's result. */
static void print_pass(void *user, const char *pass, const char *text) { dump(user, pass, text); }

static int in_list(const char *s, const char *const *list, size_t n) {
  for (size_t i = 0; i < n; i++)
    if (strcmp(s, list[i]) == 0) return (int)i;
  return -1;
}

static bool write_all(FILE *f, const char *text) {
  size_t n = strlen(text);
  return fwrite(text, 1, n, f) == n;
}

/* --print-after-all: each stage, up to the --emit level. */
static void print_stage(void *user, const char *stage, const char *text) {
  dumper *sp = user;
  if (sp->done) return;
  if (strcmp(stage, "llvm") == 0 && strcmp(sp->emit, "simt") == 0) return;
  if (strcmp(stage, "ptx") == 0 && strcmp(sp->emit, "ptx") != 0) return;
  dump(sp, stage, text);
  if (strcmp(stage, sp->emit) == 0) sp->done = true;
}

/* Parses --print-after-all's MODE (NULL: changed) or --print-changed's
 * (NULL: changed, or quiet) into *mode; false with *rc set after a usage
 * error. */
static bool dump_option(bool changed_opt, const char *arg, int *mode, int *rc) {
  if (!arg || !strcmp(arg, "changed")) *mode = DUMP_CHANGED;
  else if (!strcmp(arg, "quiet")) *mode = DUMP_QUIET;
  else if (!changed_opt && !strcmp(arg, "all")) *mode = DUMP_ALL;
  else {
    *rc = changed_opt ? tl_cli_usage_error("bad --print-changed mode '%s' (expected quiet)", arg)
                      : tl_cli_usage_error("bad --print-after-all mode '%s' (expected changed, all or quiet)", arg);
    return false;
  }
  return true;
}

/* What the command line asks for, after the options are parsed. */
typedef struct tl_opt_job {
  const char *emit, *target, *kernel;
  bool verify_each;
  int print_after_all; /* DUMP_* */
  bool cache_info;
  const char *const *passes;
  int npasses;
  const tl_define *defines;
  size_t ndefines;
  int sms;                 /* --sms */
  bool remarks;            /* --remarks */
  const char *print_after; /* --print-after=LIST: comma-separated stage names, or NULL */
  int dump_layouts;        /* 0: no; 1: text; 2: svg into svg_dir */
  bool dump_full;
  const char *svg_dir;
  bool no_line_info; /* --no-line-info, -g0 */
  bool analyze;      /* --analyze: the work counts (tl_module_analyze) instead of the IR */
} tl_opt_job;

/* --analyze: the counts of tl_module_analyze, one "key=value" line each. */
static tl_status analyze_text(tl_context *ctx, const tl_module *m, char **text) {
  tl_analysis a;
  tl_status s = tl_module_analyze(ctx, m, NULL, NULL, 0, &a);
  if (s != TL_OK) return s;
  char buf[512];
  snprintf(buf, sizeof buf,
           "flops=%llu\nglobal_bytes=%llu\nglobal_read_bytes=%llu\nglobal_write_bytes=%llu\ngemms=%llu\nblocks=%llu\n",
           (unsigned long long)a.flops, (unsigned long long)a.global_bytes, (unsigned long long)a.global_read_bytes,
           (unsigned long long)a.global_write_bytes, (unsigned long long)a.gemms, (unsigned long long)a.blocks);
  return (*text = strdup(buf)) ? TL_OK : TL_ERR_NO_MEMORY;
}

/* Parses the source and produces the text to print (*text, tl_free'd by the
 * caller; *m / *kernel keep what it was made from). */
static tl_status produce(tl_context *ctx, const tl_opt_job *job, const char *source, size_t len, const char *display,
                         tl_module **m, tl_kernel **kernel, char **text) {
  const tl_define *defines = job->defines;
  size_t ndefines = job->ndefines;
  tl_status s;
  dumper dd = {job->print_after_all, NULL, job->emit, false, job->print_after};
  if (job->npasses > 0) {
    /* The named passes only, on the parsed text, at its own IR level. */
    tl_pass_options po = {0};
    po.target = tl_target_resolve(job->target);
    po.verify_each = job->verify_each;
    po.remarks = job->remarks;
    if (job->print_after_all) po.after_pass = print_pass, po.user = &dd;
    s = tl_module_parse_kernel(ctx, source, len, display, job->kernel, defines, ndefines, m);
    if (s == TL_OK) fputs(tl_context_warnings(ctx), stderr); /* kernels skipped, ... */
    char *before = NULL;                                     /* what the first pass is compared with */
    if (s == TL_OK && job->print_after_all && (s = tl_module_print(ctx, *m, &before)) == TL_OK)
      dd.prev = strdup(before);
    tl_free(before);
    if (s == TL_OK) s = tl_module_run_passes(ctx, *m, job->passes, (size_t)job->npasses, &po);
    if (s == TL_OK) s = tl_module_print(ctx, *m, text);
  } else if (strcmp(job->emit, "ast") == 0) {
    s = tl_python_ast_dump(ctx, source, len, display, text);
  } else if (strcmp(job->emit, "tir") == 0) {
    s = tl_module_parse_kernel(ctx, source, len, display, job->kernel, defines, ndefines, m);
    if (s == TL_OK) fputs(tl_context_warnings(ctx), stderr); /* kernels skipped, ... */
    if (s == TL_OK && job->verify_each) s = tl_module_verify(ctx, *m);
    if (s == TL_OK) s = tl_module_print(ctx, *m, text);
    if (s == TL_OK && job->print_after_all) dump(&dd, "parse", *text);
    if (s == TL_OK && job->dump_layouts) { /* the layouts instead of the IR */
      tl_free(*text);
      *text = NULL;
      tl_layout_dump_options lo = {job->dump_full, job->dump_layouts == 2 ? job->svg_dir : NULL};
      s = tl_module_dump_layouts(ctx, *m, tl_target_resolve(job->target), &lo, text);
    }
    if (s == TL_OK && job->analyze) { /* the counts instead of the IR */
      tl_free(*text);
      *text = NULL;
      s = analyze_text(ctx, *m, text);
    }
  } else {
    /* Lower and generate code through the compile API; stages print as
     * they finish when --print-after-all is given. */
    tl_compile_options co = {0};
    co.target = job->target;
    co.verify_each = job->verify_each;
    co.kernel = job->kernel;
    co.sms = job->sms;
    co.remarks = job->remarks;
    co.no_line_info = job->no_line_info;
    co.stop_after = strcmp(job->emit, "simt") == 0 ? TL_STAGE_SIMT : TL_STAGE_PTX; /* c: PTX, then exported */
    /* The LLVM IR text is produced only when it is printed. */
    if (strcmp(job->emit, "llvm") == 0) co.flags |= TL_COMPILE_KEEP_LLVM_IR;
    if (job->print_after_all) {
      co.after_stage = print_stage;
      co.after_stage_user = &dd;
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
  free(dd.prev);
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

/* The options that do not go together, and the -o DIR that --dump-layouts=svg
 * needs (the library creates it when missing, once lowering succeeded); 0, or
 * the exit status. */
static int check_job(const tl_opt_job *job, const char *out_path) {
  if (job->npasses > 0 && strcmp(job->emit, "tir") != 0 && strcmp(job->emit, "simt") != 0)
    return tl_cli_usage_error("--emit=%s cannot follow --passes (which prints the IR: tir or simt)", job->emit);
  if (strcmp(job->emit, "c") == 0 && (!out_path || strcmp(out_path, "-") == 0))
    return tl_cli_usage_error("--emit=%s writes two files: give -o DIR or -o NAME.c", job->emit);
  if (job->dump_layouts && (job->npasses > 0 || strcmp(job->emit, "tir") != 0))
    return tl_cli_usage_error("--dump-layouts%s prints the layouts instead of the IR: it takes no --passes or --emit",
                              "");
  if (job->analyze && (job->npasses > 0 || strcmp(job->emit, "tir") != 0 || job->dump_layouts))
    return tl_cli_usage_error(
        "--analyze prints the work counts instead of the IR: it takes no --passes, --emit or "
        "--dump-layouts%s",
        "");
  if (job->dump_layouts == 2 && (!out_path || strcmp(out_path, "-") == 0))
    return tl_cli_usage_error("--dump-layouts=svg writes files: name their directory with -o DIR%s", "");
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
    fprintf(stderr, "tl-opt: error: %s\n",
            *tl_context_last_error(ctx) ? tl_context_last_error(ctx) : tl_status_name(s));
    return s == TL_ERR_IO ? EXIT_USAGE : EXIT_INPUT;
  }
  if (cubin && !eo.cubin_embedded)
    fprintf(stderr,
            "tl-opt: note: no cubin embedded (ptxas was not found or failed): the export carries the PTX only\n");
  return 0;
}

/* The long options (getopt_long). */
enum {
  OPT_EMIT = 256,
  OPT_TARGET,
  OPT_VERIFY_EACH,
  OPT_PRINT_AFTER_ALL,
  OPT_PASSES,
  OPT_KERNEL,
  OPT_REMARKS,
  OPT_CACHE_INFO,
  OPT_SMS,
  OPT_PRINT_AFTER,
  OPT_DUMP_LAYOUTS,
  OPT_DUMP_LAYOUTS_FULL,
  OPT_PRINT_CHANGED,
  OPT_NO_LINE_INFO,
  OPT_EXPORT_NAME,
  OPT_ANALYZE
};
enum { MAX_PASSES = 64 };
static const struct option longopts[] = {
    {"emit", required_argument, NULL, OPT_EMIT},
    {"target", required_argument, NULL, OPT_TARGET},
    {"passes", required_argument, NULL, OPT_PASSES},
    {"kernel", required_argument, NULL, OPT_KERNEL},
    {"verify-each", no_argument, NULL, OPT_VERIFY_EACH},
    {"print-after-all", optional_argument, NULL, OPT_PRINT_AFTER_ALL},
    {"print-changed", optional_argument, NULL, OPT_PRINT_CHANGED},
    {"remarks", no_argument, NULL, OPT_REMARKS},
    {"cache-info", no_argument, NULL, OPT_CACHE_INFO},
    {"sms", required_argument, NULL, OPT_SMS},
    {"print-after", required_argument, NULL, OPT_PRINT_AFTER},
    {"dump-layouts", optional_argument, NULL, OPT_DUMP_LAYOUTS},
    {"dump-layouts-full", no_argument, NULL, OPT_DUMP_LAYOUTS_FULL},
    {"no-line-info", no_argument, NULL, OPT_NO_LINE_INFO},
    {"export-name", required_argument, NULL, OPT_EXPORT_NAME},
    {"analyze", no_argument, NULL, OPT_ANALYZE},
    {"help", no_argument, NULL, 'h'},
    {NULL, 0, NULL, 0},
};

int main(int argc, char **argv) {
  tl_cli_tool_name = "tl-opt";
  const char *emit = "tir", *target = NULL, *out_path = NULL, *in_path = NULL, *kernel_name = NULL, *export_name = NULL;
  bool verify_each = false, cache_info = false;
  int print_after_all = DUMP_OFF;
  int sms = 0;
  bool remarks = false, dump_full = false, no_line_info = false, analyze = false;
  const char *print_after = NULL;
  int dump_layouts = 0;
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
  while ((c = getopt_long(argc, argv, ":D:o:g::h", longopts, NULL)) != -1) {
    switch (c) {
    case 'D': /* split NAME=VALUE in place: argv strings are writable */
      if (!tl_cli_split_define(optarg, &defines[ndefines++])) {
        rc = tl_cli_usage_error("malformed -D '%s': expected -D NAME=VALUE", optarg);
        goto done;
      }
      break;
    case 'o': out_path = optarg; break;
    case OPT_REMARKS: remarks = true; break; /* tl_compile_options.remarks, tl_pass_options.remarks */
    case OPT_SMS:
      if (!tl_cli_parse_sms(optarg, &sms)) goto done; /* rc is EXIT_USAGE while parsing options */
      break;
    case OPT_NO_LINE_INFO: no_line_info = true; break; /* tl_compile_options.no_line_info */
    case 'g':
      if (!tl_cli_parse_g(optarg, &no_line_info)) goto done;
      break; /* rc is EXIT_USAGE */
    case 'h':
      usage(stdout);
      rc = 0;
      goto done;
    case OPT_EMIT:
      if (in_list(optarg, EMITS, sizeof EMITS / sizeof *EMITS) < 0) {
        rc = tl_cli_usage_error("unknown --emit level '%s' (expected ast, tir, simt, llvm, ptx or c)", optarg);
        goto done;
      }
      emit = optarg;
      break;
    case OPT_TARGET:
      if (!tl_cli_check_target(optarg)) goto done; /* rc is EXIT_USAGE while parsing options */
      target = optarg;
      break;
    case OPT_PASSES:
      if (strcmp(optarg, "help") == 0) {
        list_passes(stdout);
        rc = 0;
        goto done;
      }
      if ((npasses = split_passes(optarg, passes, MAX_PASSES)) < 0) goto done; /* rc is EXIT_USAGE */
      break;
    case OPT_PRINT_AFTER:
      print_after = optarg;
      if (print_after_all == DUMP_OFF) print_after_all = DUMP_ALL; /* the same hooks, filtered */
      break;
    case OPT_DUMP_LAYOUTS:
      dump_layouts = !optarg || strcmp(optarg, "text") == 0 ? 1 : strcmp(optarg, "svg") == 0 ? 2 : 0;
      if (!dump_layouts) {
        rc = tl_cli_usage_error("unknown --dump-layouts format '%s' (expected text or svg)", optarg);
        goto done;
      }
      break;
    case OPT_DUMP_LAYOUTS_FULL: dump_full = true; break;
    case OPT_VERIFY_EACH: verify_each = true; break;
    case OPT_KERNEL: kernel_name = optarg; break;
    case OPT_PRINT_AFTER_ALL:
    case OPT_PRINT_CHANGED:
      if (!dump_option(c == OPT_PRINT_CHANGED, optarg, &print_after_all, &rc)) goto done;
      break;
    case OPT_CACHE_INFO: cache_info = true; break;
    case OPT_EXPORT_NAME: export_name = optarg; break;
    case OPT_ANALYZE: analyze = true; break;
    case ':': rc = tl_cli_usage_error("option '%s' requires an argument", tl_cli_bad_option(argc, argv)); goto done;
    default:
      /* Also a long option given a value it does not take ("--help=x"). */
      rc = tl_cli_usage_error("unknown or malformed option '%s'", tl_cli_bad_option(argc, argv));
      goto done;
    }
  }
  if (dump_full && !dump_layouts) dump_layouts = 1;
  tl_opt_job job = {emit,
                    target,
                    kernel_name,
                    verify_each,
                    print_after_all,
                    cache_info,
                    passes,
                    npasses,
                    defines,
                    ndefines,
                    sms,
                    remarks,
                    print_after,
                    dump_layouts,
                    dump_full,
                    dump_layouts == 2 ? out_path : NULL,
                    no_line_info,
                    analyze};
  if ((rc = check_job(&job, out_path)) != 0) goto done;
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
  else rc = write_result(dump_layouts == 2 ? NULL : out_path, text);

done:
  tl_free(text);
  tl_module_destroy(m);
  tl_kernel_destroy(kernel);
  tl_context_destroy(ctx);
  free(source);
  free(defines);
  return rc;
}
