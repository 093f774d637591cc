/* Old PTX against new PTX of one kernel, timed interleaved in one process
 * (the guide's before/after rule; issues 15 and 16 ask it of every kernel
 * whose PTX a change alters).
 *
 *   ptx_ab [-D name=value]... [--kernel NAME] [--target T] [--out-idx LIST|none]
 *          [--rounds N] [--reps R] [--warmup W] [--label TEXT] FILE.py OLD.ptx [NEW.ptx]
 *
 * Compiles FILE.py (as tl-run would, out_idx from the file unless given),
 * then makes two kernels of it: "old" with OLD.ptx and "new" with NEW.ptx,
 * or this compiler's own PTX when NEW.ptx is not given
 * (tl_kernel_set_ptx: the parameter lists must match).  Inputs: every
 * non-output tensor of constant shape gets values drawn once, uniform in
 * [-1, 1) for float dtypes and in [0, 7] for integers, copied to the GPU;
 * scalars are refused (kernels with scalar or dynamic-shape parameters are
 * not this program's).  Each round times old then new (the order alternates
 * by round) with tl_kernel_time (warmup, then reps launches between CUDA
 * events) and takes each side's median; the summary is the median over
 * rounds of new/old and of each side.  Both sides' outputs are compared
 * element by element after the first round (max |new - old|, reported, not
 * judged: builds may round differently).
 * Output, one line: "ptx_ab LABEL: old X ms, new Y ms, new/old R (rounds: r1 r2 ...), max|diff| D".
 * Exit 0 after timing, 1 on a failed compile/load/launch, 2 on bad usage,
 * 77 without a CUDA driver or GPU. */
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../test/GPU/gpu_util.h" /* to_small_float / from_small_float */
#include "tilelang/tilelang.h"

#define MAX_DEFS 32
#define MAX_PARAMS 64

static char *slurp(const char *path) {
  FILE *f = fopen(path, "rb");
  if (!f) return NULL;
  fseek(f, 0, SEEK_END);
  long n = ftell(f);
  fseek(f, 0, SEEK_SET);
  char *b = n >= 0 ? malloc((size_t)n + 1) : NULL;
  if (b && fread(b, 1, (size_t)n, f) != (size_t)n) {
    free(b);
    b = NULL;
  }
  if (b) b[n] = 0;
  fclose(f);
  return b;
}

static int cmp_float(const void *a, const void *b) {
  float x = *(const float *)a, y = *(const float *)b;
  return (x > y) - (x < y);
}
static double median_f(float *v, int n) {
  qsort(v, (size_t)n, sizeof *v, cmp_float);
  return n % 2 ? v[n / 2] : 0.5 * ((double)v[n / 2 - 1] + v[n / 2]);
}
/* Element e of a host buffer of DLPack dtype t as a double. */
static double get(const void *p, DLDataType t, size_t e) {
  if (t.code == kDLFloat && t.bits == 32) return ((const float *)p)[e];
  if (t.code == kDLFloat && t.bits == 64) return ((const double *)p)[e];
  if (t.code == kDLFloat && t.bits == 16) return from_small_float(((const uint16_t *)p)[e], 10, 5);
  if (t.code == kDLBfloat && t.bits == 16) return from_small_float(((const uint16_t *)p)[e], 7, 8);
  if (t.bits == 8) return t.code == kDLInt ? (double)((const int8_t *)p)[e] : (double)((const uint8_t *)p)[e];
  if (t.bits == 16) return t.code == kDLInt ? (double)((const int16_t *)p)[e] : (double)((const uint16_t *)p)[e];
  if (t.bits == 32) return t.code == kDLInt ? (double)((const int32_t *)p)[e] : (double)((const uint32_t *)p)[e];
  return t.code == kDLInt ? (double)((const int64_t *)p)[e] : (double)((const uint64_t *)p)[e];
}
static void put(void *p, DLDataType t, size_t e, double x) {
  if (t.code == kDLFloat && t.bits == 32) ((float *)p)[e] = (float)x;
  else if (t.code == kDLFloat && t.bits == 64) ((double *)p)[e] = x;
  else if (t.code == kDLFloat && t.bits == 16) ((uint16_t *)p)[e] = (uint16_t)to_small_float(x, 10, 5);
  else if (t.code == kDLBfloat && t.bits == 16) ((uint16_t *)p)[e] = (uint16_t)to_small_float(x, 7, 8);
  else if (t.bits == 8) ((uint8_t *)p)[e] = (uint8_t)x;
  else if (t.bits == 16) ((uint16_t *)p)[e] = (uint16_t)x;
  else if (t.bits == 32) ((uint32_t *)p)[e] = (uint32_t)x;
  else ((uint64_t *)p)[e] = (uint64_t)x;
}

static DLDataType dl_of(tl_dtype d) {
  const char *n = tl_dtype_name(d);
  DLDataType t = {kDLFloat, (uint8_t)(tl_dtype_bytes(d) * 8), 1};
  if (!strcmp(n, "bfloat16")) t.code = kDLBfloat;
  else if (!strncmp(n, "float8", 6)) t.code = kDLUInt; /* fp8 crosses as 8-bit integers */
  else if (!strncmp(n, "uint", 4) || !strcmp(n, "bool")) t.code = kDLUInt;
  else if (!strncmp(n, "int", 3)) t.code = kDLInt;
  return t;
}

typedef struct side {
  tl_kernel *k;
  DLManagedTensor *outs[MAX_PARAMS];
} side;

static void usage(void) {
  fputs(
      "usage: ptx_ab [-D name=value]... [--kernel NAME] [--target T] [--out-idx LIST|none] [--rounds N]\n"
      "              [--reps R] [--warmup W] [--label TEXT] FILE.py OLD.ptx [NEW.ptx]\n",
      stderr);
}

int main(int argc, char **argv) {
  tl_define defs[MAX_DEFS];
  int ndefs = 0, rounds = 7, reps = 50, warmup = 10;
  const char *kernel = NULL, *target = NULL, *label = NULL, *out_idx = NULL;
  static const struct option lo[] = {
      {"kernel", required_argument, NULL, 'k'},  {"target", required_argument, NULL, 't'},
      {"rounds", required_argument, NULL, 'r'},  {"reps", required_argument, NULL, 'n'},
      {"warmup", required_argument, NULL, 'w'},  {"label", required_argument, NULL, 'l'},
      {"out-idx", required_argument, NULL, 'o'}, {NULL, 0, NULL, 0}};
  int c;
  while ((c = getopt_long(argc, argv, "D:", lo, NULL)) != -1) {
    switch (c) {
    case 'D': {
      char *eq = strchr(optarg, '=');
      if (!eq || ndefs >= MAX_DEFS) {
        fprintf(stderr, "ptx_ab: -D %s: expected name=value (at most %d)\n", optarg, MAX_DEFS);
        return 2;
      }
      *eq = 0;
      defs[ndefs].name = optarg;
      defs[ndefs++].value = eq + 1;
      break;
    }
    case 'k': kernel = optarg; break;
    case 't': target = optarg; break;
    case 'r': rounds = atoi(optarg); break;
    case 'n': reps = atoi(optarg); break;
    case 'w': warmup = atoi(optarg); break;
    case 'l': label = optarg; break;
    case 'o': out_idx = optarg; break;
    default: usage(); return 2;
    }
  }
  if (argc - optind < 2 || argc - optind > 3 || rounds < 1 || reps < 1 || warmup < 0) {
    usage();
    return 2;
  }
  const char *file = argv[optind], *old_path = argv[optind + 1],
             *new_path = argc - optind == 3 ? argv[optind + 2] : NULL;
  if (!label) label = file;
  tl_context *ctx = NULL;
  if (tl_context_create(&ctx) != TL_OK) return 1;
  if (tl_device_check(ctx) != TL_OK) {
    printf("SKIP: ptx_ab needs a CUDA GPU: %s\n", tl_context_last_error(ctx));
    tl_context_destroy(ctx);
    return 77;
  }
  char *old_ptx = slurp(old_path), *new_ptx = new_path ? slurp(new_path) : NULL;
  if (!old_ptx || (new_path && !new_ptx)) {
    fprintf(stderr, "ptx_ab: cannot read %s\n", !old_ptx ? old_path : new_path);
    return 2;
  }
  tl_compile_options o = {0};
  o.target = target;
  o.kernel = kernel;
  int oi[MAX_PARAMS], noi = 0;
  if (out_idx && !strcmp(out_idx, "none")) {
    o.out_idx_mode = TL_OUT_IDX_NONE;
  } else if (out_idx) {
    for (char *s = (char *)out_idx; *s && noi < MAX_PARAMS;) {
      oi[noi++] = (int)strtol(s, &s, 10);
      while (*s == ',') s++;
    }
    o.out_idx_mode = TL_OUT_IDX_LIST;
    o.out_idx = oi;
    o.n_out_idx = (size_t)noi;
  }
  side sd[2] = {0};
  int rc = 1;
  DLManagedTensor *in[MAX_PARAMS] = {0};
  tl_arg args[MAX_PARAMS];
  size_t na = 0;
  double *ratios = calloc((size_t)rounds, sizeof *ratios), *t_old = calloc((size_t)rounds, sizeof *t_old),
         *t_new = calloc((size_t)rounds, sizeof *t_new);
  float *ms = calloc((size_t)reps, sizeof *ms);
  if (!ratios || !t_old || !t_new || !ms) goto out;
  for (int s = 0; s < 2; s++) {
    if (tl_kernel_compile_file(ctx, file, defs, (size_t)ndefs, &o, &sd[s].k) != TL_OK) {
      fprintf(stderr, "ptx_ab: compiling %s: %s\n", file, tl_context_last_error(ctx));
      goto out;
    }
    const char *ptx = s == 0 ? old_ptx : new_ptx;
    if (ptx && tl_kernel_set_ptx(ctx, sd[s].k, ptx) != TL_OK) {
      fprintf(stderr, "ptx_ab: %s PTX: %s\n", s == 0 ? "old" : "new", tl_context_last_error(ctx));
      goto out;
    }
  }
  tl_kernel *k = sd[0].k;
  int np = tl_kernel_param_count(k);
  if (np > MAX_PARAMS) goto out;
  for (int i = 0; i < np; i++) {
    if (tl_kernel_param_is_output(k, i)) continue;
    if (!tl_kernel_param_is_tensor(k, i)) {
      fprintf(stderr, "ptx_ab: parameter '%s' is a scalar: not supported here\n", tl_kernel_param_name(k, i));
      goto out;
    }
    int nd = tl_kernel_param_ndim(k, i);
    int64_t shape[8];
    size_t n = 1;
    for (int d = 0; d < nd && d < 8; d++) {
      if (!tl_kernel_param_dim(k, i, d, &shape[d], NULL)) {
        fprintf(stderr, "ptx_ab: tensor '%s' has a dynamic dim %d: bind it with -D\n", tl_kernel_param_name(k, i), d);
        goto out;
      }
      n *= (size_t)shape[d];
    }
    DLDataType t = dl_of(tl_kernel_param_dtype(k, i));
    void *host = malloc(n * (t.bits / 8) + 1);
    if (!host) goto out;
    bool flt = t.code == kDLFloat || t.code == kDLBfloat;
    for (size_t e = 0; e < n; e++) put(host, t, e, flt ? rng_uniform() : floor((rng_uniform() + 1) * 4));
    DLTensor h = {host, {kDLCPU, 0}, nd, t, shape, NULL, 0};
    DLDevice dev = {kDLCUDA, 0};
    tl_status st = tl_tensor_alloc(ctx, dev, nd, shape, t, &in[i]);
    if (st == TL_OK) st = tl_tensor_copy(ctx, &in[i]->dl_tensor, &h);
    free(host);
    if (st != TL_OK) {
      fprintf(stderr, "ptx_ab: input '%s': %s\n", tl_kernel_param_name(k, i), tl_context_last_error(ctx));
      goto out;
    }
    args[na++] = tl_arg_tensor(&in[i]->dl_tensor);
  }
  int nout = 0;
  tl_kernel_out_idx(k, &nout);
  double maxdiff = -1;
  for (int r = 0; r < rounds; r++) {
    double med[2];
    for (int q = 0; q < 2; q++) {
      int s = (r % 2) ? 1 - q : q;
      for (int j = 0; j < nout; j++)
        if (sd[s].outs[j]) {
          sd[s].outs[j]->deleter(sd[s].outs[j]);
          sd[s].outs[j] = NULL;
        }
      if (tl_kernel_time(ctx, sd[s].k, args, na, NULL, warmup, reps, ms, sd[s].outs) != TL_OK) {
        fprintf(stderr, "ptx_ab: timing the %s PTX: %s\n", s ? "new" : "old", tl_context_last_error(ctx));
        goto out;
      }
      med[s] = median_f(ms, reps);
    }
    t_old[r] = med[0];
    t_new[r] = med[1];
    ratios[r] = med[1] / med[0];
    if (r == 0) { /* outputs (out_idx, else every tensor written in place is an input: skipped) */
      maxdiff = 0;
      for (int j = 0; j < nout; j++) {
        DLTensor *a = &sd[0].outs[j]->dl_tensor, *b = &sd[1].outs[j]->dl_tensor;
        size_t n = 1;
        for (int d = 0; d < a->ndim; d++) n *= (size_t)a->shape[d];
        DLManagedTensor *ha = NULL, *hb = NULL;
        DLDevice cpu = {kDLCPU, 0};
        if (tl_tensor_alloc(ctx, cpu, a->ndim, a->shape, a->dtype, &ha) == TL_OK &&
            tl_tensor_alloc(ctx, cpu, b->ndim, b->shape, b->dtype, &hb) == TL_OK &&
            tl_tensor_copy(ctx, &ha->dl_tensor, a) == TL_OK && tl_tensor_copy(ctx, &hb->dl_tensor, b) == TL_OK)
          for (size_t e = 0; e < n; e++) {
            double d = fabs(get(ha->dl_tensor.data, a->dtype, e) - get(hb->dl_tensor.data, b->dtype, e));
            if (d > maxdiff || isnan(d)) maxdiff = isnan(d) ? INFINITY : d;
          }
        if (ha) ha->deleter(ha);
        if (hb) hb->deleter(hb);
      }
    }
  }
  printf("ptx_ab %s: new/old per round:", label);
  for (int r = 0; r < rounds; r++) printf(" %.4f", ratios[r]);
  /* median_d sorts its array: the per-round pairs are printed above */
  printf(
      "; old %.4f ms, new %.4f ms (medians over %d rounds of %d launches); median new/old %.4f; "
      "max|new - old| of the outputs %g\n",
      median(t_old, rounds), median(t_new, rounds), rounds, reps, median(ratios, rounds), maxdiff);
  rc = 0;
out:
  for (int s = 0; s < 2; s++) {
    for (int j = 0; j < MAX_PARAMS; j++)
      if (sd[s].outs[j]) sd[s].outs[j]->deleter(sd[s].outs[j]);
    tl_kernel_destroy(sd[s].k);
  }
  for (int i = 0; i < MAX_PARAMS; i++)
    if (in[i]) in[i]->deleter(in[i]);
  free(ratios);
  free(t_old);
  free(t_new);
  free(ms);
  free(old_ptx);
  free(new_ptx);
  tl_context_destroy(ctx);
  return rc;
}
