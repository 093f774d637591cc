/* Ahead-of-time export (lib/Runtime; docs/aot.md): tl_kernel_export_c writes a compiled kernel as NAME.h and
 * NAME.c, which run it with the CUDA driver API alone.
 *
 * Role: everything a call of the kernel needs, turned into C data: the PTX (and optionally a cubin from
 * ptxas) as byte arrays, the signature (each parameter's name, DLPack dtype, dims and strides as the
 * integer programs of expr.c with their printed text, alignment, output or not), the dynamic dims, the grid,
 * block and shared memory; then the runtime every exported file carries (aot_prelude.inc, after the
 * argument texts of arg_messages.h, both embedded into the library at build time by cmake/embed_text.py),
 * and the exported functions.  The messages' texts are the same definitions bind.c and call.c print, and
 * the few texts that come from library functions (dtype names, expressions) are computed here by those
 * functions, so an exported kernel refuses a bad argument with the words tl_kernel_call uses.
 * Kernels with tensor maps or workspaces (sm_90a TMA, stream-K) are refused (TL_ERR_UNSUPPORTED). */
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "Runtime/kernel.h"
#include "Support/context.h"
#include "Support/target.h"

extern const char *const tl_aot_messages_text[]; /* gen/aot_text.c */
extern const char *const tl_aot_prelude_text[];

#define AOT_MAX_PARAMS 200 /* the prelude's per-call arrays */
#define AOT_MAX_OUT_NDIM 8

/* ------------------------------------------------------ text helpers */
static void c_string(tl_strbuf *s, const char *t) {
  tl_strbuf_append(s, "\"");
  for (const unsigned char *p = (const unsigned char *)t; *p; p++) {
    if (*p == '\\' || *p == '"') tl_strbuf_printf(s, "\\%c", *p);
    else if (*p == '\n') tl_strbuf_append(s, "\\n");
    else if (*p == '?') tl_strbuf_append(s, "\\?");
    else if (*p < 32 || *p > 126) tl_strbuf_printf(s, "\\%03o", *p);
    else tl_strbuf_printf(s, "%c", *p);
  }
  tl_strbuf_append(s, "\"");
}

/* bytes as a C array (no string literal: C99 compilers need not take literals past 4095 characters) */
static void c_bytes(tl_strbuf *s, const char *name, const unsigned char *b, size_t n, bool nul) {
  tl_strbuf_printf(s, "static const unsigned char %s[%zu] = {", name, n + (nul ? 1 : 0));
  for (size_t i = 0; i < n; i++) tl_strbuf_printf(s, "%s%u,", i % 24 ? "" : "\n    ", b[i]);
  if (nul) tl_strbuf_append(s, "0");
  tl_strbuf_append(s, "};\n");
}

static bool is_identifier(const char *n) {
  if (!n || !*n || isdigit((unsigned char)*n)) return false;
  for (const char *p = n; *p; p++)
    if (!isalnum((unsigned char)*p) && *p != '_') return false;
  return true;
}

static void emit_lines(tl_strbuf *s, const char *const *lines) {
  for (size_t i = 0; lines[i]; i++) tl_strbuf_append(s, lines[i]);
}

/* ------------------------------------------------------ the signature as C data */
static void emit_prog(tl_strbuf *s, const tl_rt_sig *sig, const tl_rx_prog *p, const char *ops_name, tl_strbuf *init) {
  tl_strbuf_printf(s, "static const tlaot_op %s[%d] = {", ops_name, p->n > 0 ? p->n : 1);
  for (int i = 0; i < p->n; i++)
    tl_strbuf_printf(s, "%s{%d, %d, %d, INT64_C(%lld)}", i ? ", " : "", p->ops[i].kind, p->ops[i].op,
                     (int)p->ops[i].index, (long long)p->ops[i].value);
  if (p->n == 0) tl_strbuf_append(s, "{0, 0, 0, 0}");
  tl_strbuf_append(s, "};\n");
  tl_strbuf text = {0};
  tl_rx_print(&text, p, sig);
  tl_strbuf_printf(init, "{%d, %s, ", p->n, ops_name);
  c_string(init, text.data ? text.data : "");
  tl_strbuf_append(init, "}");
  tl_strbuf_free(&text);
}

static int scalar_kind(tl_dtype t) {
  if (t.lanes > 1) return -1;
  if (t.code == TL_TYPE_INT) return 0;
  if (t.code == TL_TYPE_UINT) return 1;
  if (t.code == TL_TYPE_BOOL) return 2;
  if (t.code == TL_TYPE_FLOAT && t.bits == 64) return 3;
  if ((t.code == TL_TYPE_FLOAT || t.code == TL_TYPE_TFLOAT) && t.bits == 32) return 4;
  if (t.code == TL_TYPE_FLOAT && t.bits == 16) return 5;
  if (t.code == TL_TYPE_BFLOAT && t.bits == 16) return 6;
  return -1;
}

static int match_kind(tl_dtype t) {
  if (tl_dtype_is_fp8(t)) return 1;
  if (t.code == TL_TYPE_BOOL) return 2;
  if (t.code == TL_TYPE_TFLOAT) return 3;
  return 0;
}

/* The parameters' programs and the tlaot_param table. */
static void emit_params(tl_strbuf *s, const tl_rt_sig *sig) {
  tl_strbuf table = {0};
  for (int pi = 0; pi < sig->nparams; pi++) {
    const tl_rt_param *p = &sig->params[pi];
    char nm[64];
    tl_strbuf dims = {0}, strides = {0};
    for (int d = 0; d < p->ndim; d++) {
      snprintf(nm, sizeof nm, "tlaot_p%d_d%d", pi, d);
      emit_prog(s, sig, &p->dims[d].prog, nm, &dims);
      tl_strbuf_append(&dims, d + 1 < p->ndim ? ", " : "");
      if (p->strides) {
        snprintf(nm, sizeof nm, "tlaot_p%d_s%d", pi, d);
        emit_prog(s, sig, &p->strides[d].prog, nm, &strides);
        tl_strbuf_append(&strides, d + 1 < p->ndim ? ", " : "");
      }
    }
    if (p->ndim > 0) tl_strbuf_printf(s, "static const tlaot_prog tlaot_p%d_dims[] = {%s};\n", pi, dims.data);
    if (p->strides && p->ndim > 0)
      tl_strbuf_printf(s, "static const tlaot_prog tlaot_p%d_strides[] = {%s};\n", pi, strides.data);
    tl_strbuf_free(&dims);
    tl_strbuf_free(&strides);
    DLDataType dl = tl_rt_dl_dtype(p->dtype);
    tl_strbuf st = {0};
    if (p->is_tensor) tl_rt_param_shape_text(&st, p, sig);
    tl_strbuf_printf(&table, "    {\"%s\", %d, %d, %d, %u, %u, %u, %d, ", p->name, p->is_tensor, p->is_output,
                     p->unused, dl.code, dl.bits, dl.lanes, match_kind(p->dtype));
    c_string(&table, tl_dtype_name(p->dtype));
    tl_strbuf_printf(&table, ", %d, %d, ", tl_dtype_bytes(p->dtype), p->is_tensor ? p->ndim : 0);
    if (p->is_tensor && p->ndim > 0) tl_strbuf_printf(&table, "tlaot_p%d_dims, ", pi);
    else tl_strbuf_append(&table, "NULL, ");
    if (p->strides && p->ndim > 0) tl_strbuf_printf(&table, "tlaot_p%d_strides, ", pi);
    else tl_strbuf_append(&table, "NULL, ");
    tl_strbuf_printf(&table, "%d, ", p->align);
    c_string(&table, st.data ? st.data : "");
    tl_strbuf_printf(&table, ", %d},\n", p->is_tensor ? 0 : scalar_kind(p->dtype));
    tl_strbuf_free(&st);
  }
  tl_strbuf_printf(s, "static const tlaot_param tlaot_params[%d] = {\n%s};\n", sig->nparams > 0 ? sig->nparams : 1,
                   table.data ? table.data : "    {0}\n");
  tl_strbuf_free(&table);
}

/* The names the dtype check gives DLPack dtypes (bind.c's own function, tabulated). */
static void emit_dtype_names(tl_strbuf *s) {
  static const unsigned codes[] = {kDLInt, kDLUInt, kDLFloat, kDLBfloat, 6};
  static const unsigned bits[] = {1, 4, 8, 16, 32, 64};
  static const unsigned lanes[] = {1, 2, 4, 8, 16};
  tl_strbuf_append(s,
                   "static const char *tlaot_dl_name(unsigned code, unsigned bits, unsigned lanes) {\n"
                   "  static const struct { unsigned char code, bits; unsigned short lanes; const char *name; } "
                   "t[] = {\n");
  for (size_t c = 0; c < sizeof codes / sizeof *codes; c++)
    for (size_t b = 0; b < sizeof bits / sizeof *bits; b++)
      for (size_t l = 0; l < sizeof lanes / sizeof *lanes; l++) {
        DLDataType d = {(uint8_t)codes[c], (uint8_t)bits[b], (uint16_t)lanes[l]};
        char buf[96];
        tl_rt_dl_dtype_text(d, buf, sizeof buf);
        if (strncmp(buf, "dlpack(", 7) != 0)
          tl_strbuf_printf(s, "      {%u, %u, %u, \"%s\"},\n", codes[c], bits[b], lanes[l], buf);
      }
  tl_strbuf_append(s,
                   "  };\n  for (size_t i = 0; i < sizeof t / sizeof *t; i++)\n"
                   "    if (t[i].code == code && t[i].bits == bits && t[i].lanes == lanes) return t[i].name;\n"
                   "  return NULL;\n}\n\n");
}

/* ------------------------------------------------------ the exported API */
static void param_decl(tl_strbuf *s, const tl_rt_param *p) {
  if (p->is_tensor) tl_strbuf_printf(s, "%sDLTensor *%s", p->is_output ? "" : "const ", p->name);
  else tl_strbuf_printf(s, "%s %s", scalar_kind(p->dtype) <= 2 ? "int64_t" : "double", p->name);
}

static void signature(tl_strbuf *s, const char *name, const tl_rt_sig *sig) {
  tl_strbuf_printf(s, "int %s(", name);
  for (int pi = 0; pi < sig->nparams; pi++) {
    param_decl(s, &sig->params[pi]);
    tl_strbuf_append(s, ", ");
  }
  tl_strbuf_append(s, "void *stream)");
}

static void emit_header(tl_strbuf *s, const tl_kernel *k, const char *name, const char *source, bool cubin) {
  const tl_rt_sig *sig = &k->sig;
  char up[256];
  size_t i = 0;
  for (; name[i] && i + 1 < sizeof up; i++) up[i] = (char)toupper((unsigned char)name[i]);
  up[i] = 0;
  tl_strbuf_printf(s,
                   "/* %s.h: the TileLang kernel '%s'%s%s,\n * exported ahead of time by tilelang-ptx (tl-opt "
                   "--emit=c; docs/aot.md) for %s.\n * Build: cc %s.c your_program.c -lcuda (C99 or later, POSIX "
                   "threads; <dlpack/dlpack.h> on the\n * include path; nothing else).\n *\n * ",
                   name, k->name, source ? " of " : "", source ? source : "", k->target, name);
  signature(s, name, sig);
  tl_strbuf_append(s, ";\n *\n");
  for (int pi = 0; pi < sig->nparams; pi++) {
    const tl_rt_param *p = &sig->params[pi];
    tl_strbuf t = {0};
    if (p->is_tensor) tl_rt_param_shape_text(&t, p, sig);
    else tl_strbuf_append(&t, tl_dtype_name(p->dtype));
    tl_strbuf_printf(s, " *   %-8s (#%d) %s%s%s\n", p->name, pi, t.data ? t.data : "",
                     p->is_tensor ? ", CUDA memory, contiguous" : " scalar",
                     p->is_output ? "; an output (out_idx)" : "");
    tl_strbuf_free(&t);
  }
  tl_strbuf_append(
      s, " *   stream   a CUstream of the primary context of the tensors' device (NULL: the legacy default stream)\n");
  if (sig->nout > 0)
    tl_strbuf_append(
        s,
        " * An output (out_idx) is a tensor to write into (checked as the inputs are), or one whose data is\n"
        " * NULL and whose shape points at room for ndim int64_t: the call allocates it (below) and fills\n"
        " * in data, shape, dtype, device and ndim (strides NULL, byte_offset 0).\n");
  tl_strbuf_printf(
      s,
      " * Launches grid x block on `stream` and returns at once (TLAOT_OK), or returns an error code\n"
      " * (TLAOT_ERR_*, the values of libtilelang's tl_status) with its text in %s_last_error() and launches\n"
      " * nothing.  Every argument is checked first, as libtilelang's tl_kernel_call checks it and with its texts:\n"
      " * dtype, ndim, static dims, dynamic dims bound consistently, contiguity, device type and id (and that\n"
      " * each pointer is memory of that device), non-null data, alignment.  Positions (#i) count every\n"
      " * parameter above.  The module is loaded on a device's primary context on the first call there (once\n"
      " * per device, thread-safe), %s.  Calls may come from any thread.\n"
      " * Outputs the call allocates come from the allocator of %s_set_allocator, else cuMemAlloc_v2 (free them\n"
      " * with cuMemFree); on a failed call nothing stays allocated. */\n",
      name, cubin ? "from the embedded cubin on a device of its architecture, else from the PTX" : "from the PTX",
      name);
  tl_strbuf_printf(
      s,
      "#ifndef %s_H_\n#define %s_H_\n\n#include <stddef.h>\n#include <stdint.h>\n\n#include <dlpack/dlpack.h>\n\n"
      "#ifdef __cplusplus\nextern \"C\" {\n#endif\n\n"
      "#ifndef TLAOT_COMMON_\n#define TLAOT_COMMON_\n"
      "enum { TLAOT_OK = 0, TLAOT_ERR_INVALID_ARGUMENT = 1, TLAOT_ERR_NO_MEMORY = 4, TLAOT_ERR_NO_DEVICE = 5,\n"
      "       TLAOT_ERR_CUDA = 6, TLAOT_ERR_UNSUPPORTED = 7 };\n"
      "/* alloc returns `bytes` of device memory of CUDA device `device` usable on `stream` (NULL on failure),\n"
      " * called with that device's primary context current; free releases what alloc gave. */\n"
      "typedef void *(*tlaot_alloc_fn)(void *user, size_t bytes, int device, void *stream);\n"
      "typedef void (*tlaot_free_fn)(void *user, void *ptr, size_t bytes, int device, void *stream);\n"
      "#endif\n\n",
      up, up);
  signature(s, name, sig);
  tl_strbuf_printf(
      s,
      ";\n/* The text of the calling thread's last failed call of %s (\"\" after a good one). */\n"
      "const char *%s_last_error(void);\n"
      "/* Loads the module on CUDA device `device` now (else the first call does); TLAOT_OK or an error. */\n"
      "int %s_load(int device);\n"
      "/* The allocator of the outputs the calls allocate (NULL, NULL: cuMemAlloc_v2); set it before "
      "calls start. */\n"
      "void %s_set_allocator(tlaot_alloc_fn alloc, tlaot_free_fn free_fn, void *user);\n"
      "/* Unloads the modules and releases the primary contexts (no launch may be pending). */\n"
      "void %s_unload(void);\n\n",
      name, name, name, name, name);
  for (int pi = 0; pi < sig->nparams; pi++)
    if (sig->params[pi].is_tensor)
      tl_strbuf_printf(s, "#define %s_%s_NDIM %d\n", up, sig->params[pi].name, sig->params[pi].ndim);
  tl_strbuf_append(s, "\n#ifdef __cplusplus\n}\n#endif\n\n#endif\n");
}

/* The exported functions of NAME.c (locals prefixed tlaot_: parameters keep their own names). */
static void emit_api(tl_strbuf *s, const char *name, const tl_rt_sig *sig) {
  int np = sig->nparams, ns = sig->nsyms;
  tl_strbuf_append(s,
                   "static tlaot_state tlaot_st = {PTHREAD_MUTEX_INITIALIZER, 0, 0, 0, {{0}}};\n"
                   "static TLAOT_TLS char tlaot_errbuf[TLAOT_ERR_BYTES];\n"
                   "static tlaot_allocator_cb tlaot_alloc;\n\n");
  signature(s, name, sig);
  tl_strbuf_printf(s,
                   " {\n  const DLTensor *tlaot_t[%d];\n  DLTensor *tlaot_outs[%d];\n"
                   "  int64_t tlaot_ival[%d], tlaot_scalarv[%d], tlaot_symv[%d], tlaot_out_shape[%d];\n"
                   "  double tlaot_fval[%d];\n  unsigned char tlaot_bound[%d];\n"
                   "  int tlaot_bound_by[%d], tlaot_bound_dim[%d];\n  uint64_t tlaot_slots[%d];\n"
                   "  void *tlaot_kargs[%d];\n  size_t tlaot_out_bytes[%d];\n  tlaot_err tlaot_e;\n"
                   "  tlaot_bind tlaot_b;\n  int tlaot_i;\n",
                   np + 1, np + 1, np + 1, np + 1, ns + 1, (np + 1) * AOT_MAX_OUT_NDIM, np + 1, ns + 1, ns + 1, ns + 1,
                   np + ns + 1, np + ns + 1, np + 1);
  tl_strbuf_append(s,
                   "  memset(tlaot_t, 0, sizeof tlaot_t), memset(tlaot_outs, 0, sizeof tlaot_outs);\n"
                   "  memset(tlaot_ival, 0, sizeof tlaot_ival), memset(tlaot_scalarv, 0, sizeof tlaot_scalarv);\n"
                   "  memset(tlaot_symv, 0, sizeof tlaot_symv), memset(tlaot_out_shape, 0, sizeof tlaot_out_shape);\n"
                   "  memset(tlaot_fval, 0, sizeof tlaot_fval), memset(tlaot_bound, 0, sizeof tlaot_bound);\n"
                   "  memset(tlaot_bound_by, 0, sizeof tlaot_bound_by);\n"
                   "  memset(tlaot_bound_dim, 0, sizeof tlaot_bound_dim), memset(tlaot_slots, 0, sizeof tlaot_slots);\n"
                   "  memset(tlaot_out_bytes, 0, sizeof tlaot_out_bytes), memset(&tlaot_b, 0, sizeof tlaot_b);\n");
  for (int pi = 0; pi < np; pi++) {
    const tl_rt_param *p = &sig->params[pi];
    if (p->is_tensor) tl_strbuf_printf(s, "  tlaot_t[%d] = %s;\n", pi, p->name);
    if (p->is_output) tl_strbuf_printf(s, "  tlaot_outs[%d] = %s;\n", pi, p->name);
    if (!p->is_tensor)
      tl_strbuf_printf(s, "  tlaot_%s[%d] = %s;\n", scalar_kind(p->dtype) <= 2 ? "ival" : "fval", pi, p->name);
  }
  tl_strbuf_printf(
      s,
      "  for (tlaot_i = 0; tlaot_i < %d; tlaot_i++) tlaot_kargs[tlaot_i] = &tlaot_slots[tlaot_i];\n"
      "  tlaot_e.buf = tlaot_errbuf, tlaot_e.len = 0, tlaot_e.n = 0;\n  tlaot_errbuf[0] = 0;\n"
      "  tlaot_b.sig = &tlaot_the_sig, tlaot_b.e = &tlaot_e, tlaot_b.t = tlaot_t, tlaot_b.ival = tlaot_ival;\n"
      "  tlaot_b.fval = tlaot_fval, tlaot_b.symv = tlaot_symv, tlaot_b.bound = tlaot_bound;\n"
      "  tlaot_b.bound_by = tlaot_bound_by, tlaot_b.bound_dim = tlaot_bound_dim, tlaot_b.scalarv = tlaot_scalarv;\n"
      "  tlaot_b.slots = tlaot_slots, tlaot_b.out_shape = tlaot_out_shape, tlaot_b.out_bytes = tlaot_out_bytes;\n"
      "  return tlaot_call(&tlaot_the_sig, &tlaot_st, &tlaot_b, tlaot_outs, &tlaot_alloc, (tlaot_CUstream)stream,\n"
      "                    tlaot_kargs);\n}\n\n",
      np + ns);
  tl_strbuf_printf(s,
                   "const char *%s_last_error(void) { return tlaot_errbuf; }\n\n"
                   "int %s_load(int device) {\n  tlaot_err e;\n  tlaot_slot *s;\n"
                   "  e.buf = tlaot_errbuf, e.len = 0, e.n = 0;\n  tlaot_errbuf[0] = 0;\n"
                   "  return tlaot_slot_get(&tlaot_the_sig, &tlaot_st, device, &s, &e);\n}\n\n"
                   "void %s_set_allocator(tlaot_alloc_fn alloc, tlaot_free_fn free_fn, void *user) {\n"
                   "  tlaot_alloc.alloc = alloc, tlaot_alloc.free = free_fn, tlaot_alloc.user = user;\n}\n\n"
                   "void %s_unload(void) { tlaot_unload(&tlaot_st); }\n",
                   name, name, name, name);
}

/* The tlaot_sig of the kernel: launch programs, symbols, images. */
static void emit_sig(tl_strbuf *s, const tl_kernel *k, const tl_target *t, bool cubin, int cubin_sm) {
  const tl_rt_sig *sig = &k->sig;
  tl_strbuf grid = {0}, thr = {0};
  for (int g = 0; g < 3; g++) {
    char nm[32];
    snprintf(nm, sizeof nm, "tlaot_grid%d", g);
    if (g < sig->ngrid) emit_prog(s, sig, &sig->grid[g], nm, &grid);
    else tl_strbuf_append(&grid, "{0, NULL, \"\"}");
    tl_strbuf_append(&grid, g < 2 ? ", " : "");
  }
  emit_prog(s, sig, &sig->threads, "tlaot_threads", &thr);
  tl_strbuf_append(s, "static const char *const tlaot_syms[] = {");
  for (int i = 0; i < sig->nsyms; i++) tl_strbuf_printf(s, "\"%s\", ", sig->sym_names[i]);
  tl_strbuf_append(s, "NULL};\nstatic const unsigned char tlaot_sym64[] = {");
  for (int i = 0; i < sig->nsyms; i++) tl_strbuf_printf(s, "%d, ", sig->sym_int64 && sig->sym_int64[i] ? 1 : 0);
  tl_strbuf_printf(s,
                   "0};\nstatic const tlaot_sig tlaot_the_sig = {\"%s\", \"%s\", %d, %d, %d, tlaot_params, %d, "
                   "tlaot_syms, tlaot_sym64, %d, {%s}, %s, INT64_C(%lld), (const char *)tlaot_ptx, %s, %s, %d};\n\n",
                   k->name, k->target, t ? t->sm : 0, t && t->arch_specific, sig->nparams, sig->nsyms, sig->ngrid,
                   grid.data, thr.data, (long long)sig->smem_bytes, cubin ? "tlaot_cubin" : "NULL",
                   cubin ? "sizeof tlaot_cubin" : "0", cubin_sm);
  tl_strbuf_free(&grid);
  tl_strbuf_free(&thr);
}

/* ------------------------------------------------------ ptxas */
/* A cubin of ptx for target t by ptxas (malloc'd into *out), or false when there is no ptxas or it fails. */
static bool run_ptxas(const char *ptx, const tl_target *t, unsigned char **out, size_t *n) {
  const char *ptxas = getenv("TL_PTXAS");
  char in_path[] = "/tmp/tl-aot-XXXXXX", out_path[64];
  bool ok = false;
  if (!ptxas || !*ptxas) ptxas = access("/usr/local/cuda/bin/ptxas", X_OK) == 0 ? "/usr/local/cuda/bin/ptxas" : "ptxas";
  int fd = mkstemp(in_path);
  if (fd < 0) return false;
  size_t len = strlen(ptx);
  bool wrote = write(fd, ptx, len) == (ssize_t)len;
  close(fd);
  snprintf(out_path, sizeof out_path, "%s.cubin", in_path);
  char arch[32];
  snprintf(arch, sizeof arch, "-arch=%s", t->name);
  pid_t pid = wrote ? fork() : -1;
  if (pid == 0) {
    int null = open("/dev/null", O_WRONLY);
    if (null >= 0) dup2(null, 1), dup2(null, 2);
    execlp(ptxas, ptxas, arch, "-o", out_path, in_path, (char *)NULL);
    _exit(127);
  }
  int status = 0;
  if (pid > 0 && waitpid(pid, &status, 0) == pid && WIFEXITED(status) && WEXITSTATUS(status) == 0) {
    FILE *f = fopen(out_path, "rb");
    if (f && fseek(f, 0, SEEK_END) == 0) {
      long sz = ftell(f);
      if (sz > 0 && fseek(f, 0, SEEK_SET) == 0 && (*out = malloc((size_t)sz)) != NULL) {
        ok = fread(*out, 1, (size_t)sz, f) == (size_t)sz;
        *n = (size_t)sz;
        if (!ok) free(*out), *out = NULL;
      }
    }
    if (f) fclose(f);
  }
  unlink(in_path);
  unlink(out_path);
  return ok;
}

/* ------------------------------------------------------ files */
static tl_status write_file(tl_context *ctx, const char *path, const tl_strbuf *s) {
  FILE *f = fopen(path, "wb");
  if (!f) return tl_context_fail(ctx, TL_ERR_IO, "cannot write '%s': %s", path, strerror(errno));
  bool ok = fwrite(s->data, 1, s->len, f) == s->len;
  if (fclose(f) != 0) ok = false;
  if (!ok) {
    remove(path);
    return tl_context_fail(ctx, TL_ERR_IO, "cannot write '%s': %s", path, strerror(errno));
  }
  return TL_OK;
}

static tl_status check_exportable(tl_context *ctx, const tl_kernel *k, const char *name) {
  const tl_rt_sig *sig = &k->sig;
  if (!is_identifier(name) || strlen(name) > 200)
    return tl_context_fail(ctx, TL_ERR_INVALID_ARGUMENT, "tl_kernel_export_c: the name '%s' is not a C identifier",
                           name);
  if (!k->ptx || !*k->ptx)
    return tl_context_fail(ctx, TL_ERR_INVALID_ARGUMENT, "tl_kernel_export_c: kernel '%s' has no PTX", k->name);
  if (sig->ntma > 0 || sig->nws > 0)
    return tl_context_fail(ctx, TL_ERR_UNSUPPORTED,
                           "tl_kernel_export_c: kernel '%s' (target %s) uses %s, which the export does not carry yet; "
                           "export it for an mma.sync target (sm_80) or with tl.disable_tma_lower",
                           k->name, k->target, sig->ntma > 0 ? "TMA tensor maps" : "kernel workspaces");
  if (sig->nparams > AOT_MAX_PARAMS)
    return tl_context_fail(ctx, TL_ERR_UNSUPPORTED, "tl_kernel_export_c: kernel '%s' has more than %d parameters",
                           k->name, AOT_MAX_PARAMS);
  for (int pi = 0; pi < sig->nparams; pi++) {
    const tl_rt_param *p = &sig->params[pi];
    if (!p->is_tensor && scalar_kind(p->dtype) < 0)
      return tl_context_fail(ctx, TL_ERR_UNSUPPORTED,
                             "tl_kernel_export_c: scalar parameter '%s' of dtype %s is not "
                             "exported",
                             p->name, tl_dtype_name(p->dtype));
    if (p->is_tensor && tl_dtype_is_int4(p->dtype))
      return tl_context_fail(ctx, TL_ERR_UNSUPPORTED,
                             "tl_kernel_export_c: tensor parameter '%s' of dtype %s (packed two per byte) is not "
                             "exported yet",
                             p->name, tl_dtype_name(p->dtype));
    if (p->is_output && p->ndim > AOT_MAX_OUT_NDIM)
      return tl_context_fail(ctx, TL_ERR_UNSUPPORTED, "tl_kernel_export_c: output '%s' has more than %d dims", p->name,
                             AOT_MAX_OUT_NDIM);
    if (!is_identifier(p->name) || strcmp(p->name, "stream") == 0 || strncmp(p->name, "tlaot_", 6) == 0)
      return tl_context_fail(ctx, TL_ERR_UNSUPPORTED, "tl_kernel_export_c: parameter '%s' is not a C identifier",
                             p->name);
  }
  return TL_OK;
}

static const char *base_name(const char *path) {
  const char *b = strrchr(path, '/');
  return b ? b + 1 : path;
}

/* sig: k's signature with opts' out_idx as its outputs (*params: the copied parameters, to free). */
static tl_status other_outputs(tl_context *ctx, const tl_kernel *k, const tl_export_options *opts, tl_rt_sig *sig,
                               tl_rt_param **params) {
  int np = k->sig.nparams, *norm = calloc((size_t)np + 1, sizeof *norm), bad = -1;
  char *err = NULL;
  *params = malloc(sizeof **params * ((size_t)np + 1));
  if (!norm || !*params) {
    free(norm);
    return tl_context_fail(ctx, TL_ERR_NO_MEMORY, "out of memory");
  }
  if (opts->n_out_idx > (size_t)np ||
      !tl_rt_normalize_out_idx(&k->sig, opts->out_idx, opts->n_out_idx, norm, &err, &bad)) {
    tl_status st = tl_context_fail(ctx, TL_ERR_INVALID_ARGUMENT, "tl_kernel_export_c: out_idx: %s",
                                   err ? err : "more entries than parameters");
    free(err);
    free(norm);
    return st;
  }
  memcpy(*params, k->sig.params, sizeof **params * (size_t)np);
  for (int i = 0; i < np; i++) (*params)[i].is_output = false;
  for (size_t j = 0; j < opts->n_out_idx; j++) (*params)[norm[j]].is_output = true;
  free(norm);
  sig->params = *params;
  sig->nout = (int)opts->n_out_idx;
  if (!tl_rt_check_solvable(sig, &err, NULL)) {
    tl_status st = tl_context_fail(ctx, TL_ERR_INVALID_ARGUMENT, "tl_kernel_export_c: %s", err ? err : "out of memory");
    free(err);
    return st;
  }
  return TL_OK;
}

static tl_status export_files(tl_context *ctx, const tl_kernel *k, const char *name, const char *h_path,
                              const char *c_path, tl_export_options *opts);

tl_status tl_kernel_export_c(tl_context *ctx, const tl_kernel *k, const char *h_path, const char *c_path,
                             tl_export_options *opts) {
  if (!ctx) return TL_ERR_INVALID_ARGUMENT;
  tl_context_begin(ctx);
  if (!k) return tl_context_null_arg(ctx, "tl_kernel_export_c", "k");
  if (!h_path) return tl_context_null_arg(ctx, "tl_kernel_export_c", "h_path");
  if (!c_path) return tl_context_null_arg(ctx, "tl_kernel_export_c", "c_path");
  const char *name = opts && opts->name ? opts->name : k->name;
  tl_kernel kk = *k; /* a shallow copy whose signature may take other outputs (never locked or freed) */
  tl_rt_param *params = NULL;
  tl_status st = TL_OK;
  if (opts && opts->has_out_idx) st = other_outputs(ctx, k, opts, &kk.sig, &params);
  if (st == TL_OK) st = check_exportable(ctx, &kk, name);
  if (st == TL_OK) st = export_files(ctx, &kk, name, h_path, c_path, opts);
  free(params);
  return tl_context_end(ctx, st);
}

/* The files of kernel k (its signature as exported). */
static tl_status export_files(tl_context *ctx, const tl_kernel *k, const char *name, const char *h_path,
                              const char *c_path, tl_export_options *opts) {
  tl_status st = TL_OK;
  const tl_target *t = tl_target_lookup(k->target);
  unsigned char *cubin = NULL;
  size_t ncubin = 0;
  bool with_cubin = opts && opts->cubin && t && run_ptxas(k->ptx, t, &cubin, &ncubin);
  if (opts) opts->cubin_embedded = with_cubin;

  tl_strbuf h = {0}, c = {0};
  emit_header(&h, k, name, opts ? opts->source : NULL, with_cubin);
  tl_strbuf_printf(&c,
                   "/* %s.c: the TileLang kernel '%s', exported by tilelang-ptx for %s; %s.h is the contract. "
                   "Generated: do not edit. */\n#include \"%s\"\n\n",
                   name, k->name, k->target, name, base_name(h_path));
  emit_lines(&c, tl_aot_messages_text);
  tl_strbuf_append(&c, "\n");
  emit_lines(&c, tl_aot_prelude_text);
  tl_strbuf_append(&c, "\n");
  emit_dtype_names(&c);
  c_bytes(&c, "tlaot_ptx", (const unsigned char *)k->ptx, strlen(k->ptx), true);
  if (with_cubin) c_bytes(&c, "tlaot_cubin", cubin, ncubin, false);
  free(cubin);
  emit_params(&c, &k->sig);
  emit_sig(&c, k, t, with_cubin, t ? t->sm : 0);
  emit_api(&c, name, &k->sig);
  if (h.oom || c.oom) st = tl_context_fail(ctx, TL_ERR_NO_MEMORY, "out of memory");
  if (st == TL_OK) st = write_file(ctx, h_path, &h);
  if (st == TL_OK) st = write_file(ctx, c_path, &c);
  tl_strbuf_free(&h);
  tl_strbuf_free(&c);
  return st;
}
