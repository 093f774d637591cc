/* tl-run: compile a TileLang kernel file, make inputs, run it on the GPU or
 * on the CPU SIMT executor, check it against the reference evaluator, time
 * it.
 *
 * Contract: docs/tools.md "The contract".  Options are parsed with getopt_long (before or
 * after FILE); FILE `-` or no FILE reads stdin ("<stdin>" in diagnostics).
 * Exit codes: 0 success; 1 the input is wrong, cannot be compiled or run, or
 * --check fails (diagnostics on stderr; -D, --dim and --arg errors
 * included); 2 usage error (unknown option, bad option value, unreadable
 * file).
 *
 * Algorithm.  (1) Pick the device (device.c): --device=cuda[:N] needs a
 * driver and a GPU (tl_device_check) and device N (default 0) to exist;
 * --device=auto falls back to the CPU with a note.  On the GPU the kernel is
 * compiled for device N's target (tl_device_target) unless --target says
 * otherwise, the inputs are allocated on device N (DLDevice kDLCUDA, N), so
 * the library loads and launches the kernel in N's primary context and
 * allocates the outputs there.
 * (2) Compile once (tl_kernel_compile; on the CPU only up to the SIMT IR),
 * with outputs poisoned (0xFF bytes: NaN in every float dtype, -1 / all
 * ones in integers) so that elements the kernel does not write show.
 * (3) For each combination of --dim values (one compilation for all): make
 * the inputs, run, print one line per output, and with --check run the
 * tile-level reference evaluator (TL_EXEC_REFERENCE) on identical inputs and
 * compare every element.  (4) --bench (CUDA only): tl_kernel_time, 10
 * warm-up launches, then the median of 100 CUDA-event timings; FLOPs from the
 * kernel's T.gemm ops (tl_kernel_gemm_flops).  (5) --tune (CUDA only): the
 * configurations are the file's @tilelang.autotune(configs=...) list
 * (tl_tune_space_parse), else, for T.gemm kernels whose factory has
 * block_M, block_N, block_K, threads and num_stages parameters (like
 * examples/gemm.py), the built-in candidates of tl_gemm_configs_target for
 * --target (else the device's) and the compile flags (the Hopper table on
 * sm_90a, the mma.sync table elsewhere) for the problem's M, N, K and input
 * dtype (M, N from the output's shape, K from the T.gemm FLOPs); policy and
 * swizzle_panel are bound only when the factory has such parameters.
 * tl_kernel_tune compiles them on --tune-workers threads (default: every
 * CPU) while this thread checks and times each as it arrives: run on the
 * inputs of the given configuration's run (made once, kept on the GPU),
 * compared with the given configuration's output (defaults and -D; the
 * decorator's first config when those do not compile) with the --check
 * tolerances (every element, every 61st above 4M elements), and timed
 * (median of rep launches after warmup: the decorator's, else 25 / 100);
 * failures are reported and skipped; a progress line on stderr; the
 * fastest is kept for the runs that follow and its -D bindings printed; the
 * winner is cached per problem (tl_kernel_tune), so a second --tune
 * returns at once.  --tune-dry-run compiles the configurations only (no
 * GPU) and prints the failures and the compile times.
 *
 * Input generator (documented, reproducible; never time-based): splitmix64
 * (Steele, Lea, Flood: "Fast splittable pseudorandom number generators",
 * OOPSLA 2014; the constants of Java's SplittableRandom) seeded with --seed
 * (default 0), one stream per run, consumed tensor by tensor in parameter
 * order, one 64-bit draw per element in row-major order.  A draw x gives:
 * floats: u = (x >> 11) * 2^-53 in [0, 1), value 2u - 1 in [-1, 1) rounded
 * to the dtype (nearest even); signed integers: -4 + (x mod 9) in [-4, 4];
 * unsigned: x mod 5 in [0, 4]; bool: x & 1.  --int-range LO:HI: integers
 * LO + (x mod (HI - LO + 1)).  An --input file (runio.c, npy.c) replaces
 * its tensor's values after the draws, so the other inputs do not move;
 * --save writes the outputs (and the inputs whose bytes the run changed)
 * as .npy files; a CPU run reports its blocks to the progress line
 * (tl_context_set_progress).
 *
 * Check tolerances (docs/testing.md "Numeric checks", by output dtype): |got - ref| <= atol +
 * rtol * |ref| with (atol, rtol) = (1e-4, 1e-4) for float32/float64/
 * tfloat32, (1e-2, 1e-2) for float16, (2e-2, 2e-2) for bfloat16; integers
 * and bool exactly.  A NaN where the reference has a number (an unwritten,
 * poisoned element) is a mismatch; NaN in both is a match.  --atol / --rtol set both for every floating
 * output (a kernel whose float32 output sums float16 intermediates: the GPU's summation order can move one
 * of them by an ulp).  The worst
 * element is the one whose |diff| exceeds its tolerance by the most.
 *
 * Only the public API is used. */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../common/cli.h"
#include "device.h"
#include "elems.h"
#include "options.h"
#include "run.h"
#include "runio.h"
#include "strided.h"
#include "tilelang/core.h"
#include "tilelang/ir.h"
#include "tilelang/runtime.h"

#define BENCH_WARMUP 10
#define BENCH_REPS 100
#define MAX_RUNS 4096

/* --seed N (the input generator's *seed) or, with schedule, --schedule-seed N
 * (sets TL_SCHEDULE_SEED, which the CPU executor reads: lib/Runtime/cpu.c).
 * N: a non-negative integer (decimal, 0x hex or 0 octal); false with *rc set
 * after a usage error. */
static void usage(FILE *f) {
  fputs(
      "usage: tl-run [options] [FILE]\n"
      "\n"
      "Compiles a TileLang kernel file (FILE, or stdin when FILE is '-' or missing),\n"
      "makes inputs, runs it and prints one line per output:\n"
      "  output NAME shape=[...] dtype=... sum=... abs_sum=...\n"
      "\n"
      "options:\n"
      "  -D NAME=VALUE         bind a factory parameter or module constant\n"
      "  --device=DEV          auto (default: cuda when a driver and GPU exist, else\n"
      "                        cpu with a note), cuda:N (CUDA device ordinal N: inputs,\n"
      "                        outputs and the launch on that device, compiled for its\n"
      "                        target unless --target), cuda (= cuda:0), cpu (the CPU\n"
      "                        SIMT executor)\n"
      "  --dim NAME=V[,V...]   value(s) of a dynamic dim; a list runs each value\n"
      "                        (all combinations) with one compilation\n"
      "  --arg NAME=VALUE      value of a scalar parameter (required for each)\n"
      "  --out-idx=LIST        -1 | 0,2 | none (default: the file's out_idx);\n"
      "                        with none every tensor parameter counts as output\n"
      "  --seed N              input generator seed (default 0; splitmix64; floats\n"
      "                        uniform in [-1, 1) rounded to the dtype, ints in [-4, 4])\n"
      "  --int-range LO:HI     integer inputs uniform in [LO, HI] instead (each input's\n"
      "                        dtype must hold them)\n"
      "  --input NAME=FILE     tensor input NAME from a NumPy .npy file (C order; its\n"
      "                        dtype and shape must be the parameter's; bfloat16 and\n"
      "                        float8 as their raw bits, uint16 / uint8); a dynamic\n"
      "                        dim without --dim takes the file's extent\n"
      "  --ptr-table NAME=TENSOR  fill the int64 table NAME (T.Tensor((G,), T.ptr)) with\n"
      "                        the addresses of TENSOR's G slices along its first dim\n"
      "                        (T.make_tensor's pointer tables; not printed or checked)\n"
      "  --save DIR            write every output (the out_idx tensors and the inputs\n"
      "                        the run changed) as DIR/NAME.npy (DIR/NAME.n=17.npy in\n"
      "                        a --dim list); DIR is created\n"
      "  --progress            (cpu) a progress line on stderr (blocks done / total,\n"
      "                        elapsed, time left) from the first block; by default\n"
      "                        only when stderr is a terminal and the run passes 2 s\n"
      "  --no-progress         no progress line\n"
      "  --schedule-seed N     (cpu) schedule every warp on its own and shuffle the\n"
      "                        schedule with seed N (0: the deterministic schedule;\n"
      "                        sets TL_SCHEDULE_SEED, which the CPU executor reads)\n"
      "  --check               compare every output element with the tile-level\n"
      "                        reference evaluator; prints 'check: PASS' or\n"
      "                        'check: FAIL' with the worst element (exit 1)\n"
      "  --atol X, --rtol Y    --check's tolerances for every floating output,\n"
      "                        |got - ref| <= X + Y |ref| (default by dtype: f32 1e-4,\n"
      "                        f16 1e-2, bf16 2e-2, fp8 0.125/0.25); integers exactly\n"
      "  --bench               (cuda) median of 100 timed launches after 10 warm-ups:\n"
      "                        prints time_ms= and, for T.gemm kernels, tflops=\n"
      "  --tune                (cuda, T.gemm kernels with block_M/block_N/block_K/\n"
      "                        threads/num_stages factory parameters) time the built-in\n"
      "                        tile configurations (a progress line on stderr), keep\n"
      "                        the fastest correct one for the run; with a\n"
      "                        @tilelang.autotune(configs=...) its configurations\n"
      "                        instead (compiled on every CPU, the winner cached)\n"
      "  --tune-dry-run        compile the --tune configurations only (no GPU):\n"
      "                        failures and compile times\n"
      "  --tune-workers=N      compile threads of --tune (default: every CPU)\n"
      "  --target=ARCH         sm_80, sm_86, sm_89, sm_90, sm_90a (as tl-opt)\n"
      "  --pass-config=KEY[=V] compile as with TileLang's pass config KEY set to V\n"
      "                        (True when omitted; False; 32 or 64 for\n"
      "                        tl.config_index_bitwidth): the keys of\n"
      "                        include/tilelang/pass_configs.def (README)\n"
      "  --remarks             say which path each T.Pipelined GEMM or attention loop took (as tl-opt)\n"
      "  --sms=N               plan persistent sm_90a GEMM and attention grids and stream-K for N SMs\n"
      "                        (as tl-opt)\n"
      "  --no-line-info, -g0   no source lines in the PTX (as tl-opt)\n"
      "  --kernel=NAME         run the factory or @T.prim_func of that Python name\n"
      "  --cache-info          say on stderr whether the compile hit the kernel cache:\n"
      "                        'tl-run: kernel cache: hit|miss|corrupt|off KEY' (the CPU\n"
      "                        executors compile to SIMT IR only: off; README)\n"
      "  --compile-only        compile to PTX as for the GPU (no GPU needed; fills the\n"
      "                        kernel cache) and exit without running\n"
      "  -h, --help            show this help and exit\n"
      "\n"
      "exit status: 0 success, 1 invalid input / failed run / failed check,\n"
      "2 usage error (bad option, unreadable file)\n",
      f);
}

/* --------------------------------------------------------- the kernel */
static void print_shape(FILE *f, const int64_t *shape, int ndim) {
  fputc('[', f);
  for (int d = 0; d < ndim; d++) fprintf(f, "%s%" PRId64, d ? "," : "", shape[d]);
  fputc(']', f);
}

/* The shape of tensor parameter p under the dynamic dim values symv into
 * shape; returns its element count, SIZE_MAX when that or its byte size
 * overflows (a (2**63-1, 16) tensor). */
static size_t shape_elems(const param_info *p, const int64_t *symv, int64_t *shape) {
  size_t n = 1;
  bool ovf = false;
  for (int d = 0; d < p->ndim; d++) {
    shape[d] = p->dim_sym[d] >= 0 ? symv[p->dim_sym[d]] : p->dims[d];
    ovf |= __builtin_mul_overflow(n, (size_t)(shape[d] > 0 ? shape[d] : 0), &n);
  }
  size_t bytes;
  if (ovf || __builtin_mul_overflow(n, (size_t)tl_dtype_bytes(p->dtype), &bytes) || bytes > SIZE_MAX / 2)
    return SIZE_MAX;
  return n;
}

/* Allocates and fills host copies of the inputs (every non-output tensor)
 * from a fresh generator stream.  Errors (printed): a shape whose size
 * overflows, out of memory. */
static bool make_inputs(run_state *rs, host_tensor *h, bool strided_ok) {
  uint64_t state = rs->seed;
  tlr_syms syms = {.n = rs->nsyms < 64 ? rs->nsyms : 64};
  for (int s = 0; s < syms.n; s++) syms.name[s] = rs->syms[s], syms.v[s] = rs->symv[s];
  for (int i = 0; i < rs->nparams; i++) {
    const param_info *p = &rs->p[i];
    if (!p->is_tensor || p->is_output) continue;
    h[i].elems = shape_elems(p, rs->symv, h[i].shape);
    size_t span = h[i].elems; /* (cuda: compact inputs only) */
    bool strided =
        h[i].elems != SIZE_MAX && strided_ok &&
        tlr_param_strides(rs->k, i, p->ndim, h[i].shape, (size_t)tl_dtype_bytes(p->dtype), &syms, h[i].strides, &span);
    if (h[i].elems == SIZE_MAX || span == SIZE_MAX) {
      fprintf(stderr, "tl-run: error: input '%s' of shape ", p->name);
      print_shape(stderr, h[i].shape, p->ndim);
      fprintf(stderr, " and dtype %s: its size in bytes overflows\n", tl_dtype_name(p->dtype));
      h[i].elems = 0;
      return false;
    }
    size_t bytes = span * (size_t)tl_dtype_bytes(p->dtype);
    h[i].data = aligned_alloc(64, (bytes + 63) / 64 * 64 + 64);
    if (!h[i].data) {
      fprintf(stderr, "tl-run: error: out of memory allocating input '%s' (%zu bytes)\n", p->name, bytes);
      return false;
    }
    tlr_fill_random(h[i].data, p->dtype, span, &state, rs->int_range); /* also under --input: the others' draws stay */
    memset(&h[i].t, 0, sizeof h[i].t);
    h[i].t.data = h[i].data;
    h[i].t.device.device_type = kDLCPU;
    h[i].t.ndim = p->ndim;
    h[i].t.dtype = tlr_dl_dtype(p->dtype);
    h[i].t.shape = h[i].shape;
    h[i].t.strides = strided ? h[i].strides : NULL;
    const tlr_input *in = rs->input_of && rs->input_of[i] >= 0 ? &rs->inputs[rs->input_of[i]] : NULL;
    if (in && !tlr_input_check(in, p->dtype, p->ndim, h[i].shape)) return false;
    if (in && strided) tlr_scatter(&h[i].t, in->a.data, (size_t)tl_dtype_bytes(p->dtype));
    else if (in) memcpy(h[i].data, in->a.data, h[i].elems * (size_t)tl_dtype_bytes(p->dtype));
  }
  return true;
}

static void free_host(host_tensor *h, int n) {
  for (int i = 0; h && i < n; i++) free(h[i].data);
  free(h);
}

static void results_free(results *r, int n) {
  for (int i = 0; r->data && i < n; i++) free(r->data[i]);
  free(r->data);
  free(r->elems);
  free(r->shape);
  free(r->written);
  memset(r, 0, sizeof *r);
}

static bool results_init(results *r, int n) {
  r->data = calloc((size_t)n + 1, sizeof *r->data);
  r->elems = calloc((size_t)n + 1, sizeof *r->elems);
  r->shape = calloc((size_t)n + 1, sizeof *r->shape);
  r->written = calloc((size_t)n + 1, sizeof *r->written);
  return r->data && r->elems && r->shape && r->written;
}

/* Copies a host DLTensor's data into r slot i. */
static bool keep_host(results *r, int i, const DLTensor *t, tl_dtype dt) {
  size_t n = 1;
  for (int d = 0; d < t->ndim && d < 8; d++) {
    r->shape[i][d] = t->shape[d];
    n *= (size_t)t->shape[d];
  }
  size_t bytes = n * (size_t)tl_dtype_bytes(dt);
  r->data[i] = malloc(bytes ? bytes : 1);
  if (!r->data[i]) return false;
  if (bytes && t->strides) tlr_gather(r->data[i], t, (size_t)tl_dtype_bytes(dt));
  else if (bytes) memcpy(r->data[i], (const char *)t->data + t->byte_offset, bytes);
  r->elems[i] = n;
  return true;
}

/* Prints the library's error of a kernel call: a line about a scalar
 * parameter ("argument 'alpha' (#2): value: ...", an --arg value out of the
 * dtype's range) as tl-run's own option error, "<command line>: error: --arg
 * alpha=2: value: ...", the others as they are. */
static void print_call_error(const run_state *rs, tl_status st) {
  const char *msg = tl_context_last_error(rs->ctx);
  if (st != TL_ERR_INVALID_ARGUMENT || !*msg) {
    tl_cli_print_library_error(rs->ctx, st);
    return;
  }
  while (*msg) {
    const char *eol = strchr(msg, '\n');
    int len = eol ? (int)(eol - msg) : (int)strlen(msg);
    int pi = 0;
    const char *rest = NULL;
    for (; pi < rs->nparams && !rest; pi++) {
      const param_info *p = &rs->p[pi];
      size_t nl = strlen(p->name);
      if (p->is_tensor || p->is_output || strncmp(msg, "argument '", 10) || strncmp(msg + 10, p->name, nl) ||
          strncmp(msg + 10 + nl, "' (#", 4))
        continue;
      rest = strstr(msg, "): ");
      if (rest && rest - msg < len) {
        rest += 3;
        const tl_arg *a = &rs->scalar_args[pi];
        fprintf(stderr, "<command line>: error: --arg %s=", p->name);
        if (a->kind == TL_ARG_FLOAT) { /* the shortest text that reads back as the value */
          char num[32];
          for (int prec = 6; prec <= 17; prec++) {
            snprintf(num, sizeof num, "%.*g", prec, a->v.f);
            if (strtod(num, NULL) == a->v.f) break;
          }
          fputs(num, stderr);
        } else {
          fprintf(stderr, "%" PRId64, a->v.i);
        }
        fprintf(stderr, ": %.*s\n", len - (int)(rest - msg), rest);
      } else {
        rest = NULL;
      }
    }
    if (!rest) fprintf(stderr, "%.*s\n", len, msg);
    msg += len + (eol != NULL);
  }
}

/* Keeps host copies of a run's outputs in r: the out_idx outputs (outs),
 * or with out_idx none every tensor (the host inputs h, or their CUDA
 * copies dev); with snap (--save: per input, its bytes before the run, or
 * NULL) also each input whose bytes the run changed, marked written. */
static tl_status collect(run_state *rs, results *r, host_tensor *h, DLManagedTensor **dev, DLManagedTensor **outs,
                         bool cuda, void **snap) {
  tl_context *ctx = rs->ctx;
  int nout = 0;
  const int *oidx = tl_kernel_out_idx(rs->k, &nout);
  for (int i = 0; i < rs->nparams; i++) {
    const param_info *p = &rs->p[i];
    if (!p->is_tensor || tlr_is_ptr_table(rs, i)) continue; /* a table's addresses differ in every run */
    const DLTensor *src = NULL;
    if (p->is_output) {
      for (int j = 0; j < nout; j++)
        if (oidx[j] == i && outs[j]) src = &outs[j]->dl_tensor;
    } else if (nout == 0 || (snap && snap[i])) { /* out_idx none: every tensor counts */
      src = cuda ? &dev[i]->dl_tensor : &h[i].t;
    }
    if (!src) continue;
    tl_status st = TL_OK;
    if (src->device.device_type == kDLCPU) {
      if (!keep_host(r, i, src, p->dtype)) st = TL_ERR_NO_MEMORY;
    } else {
      DLManagedTensor *tmp = NULL;
      DLDevice hd = {kDLCPU, 0};
      if ((st = tl_tensor_alloc(ctx, hd, src->ndim, src->shape, src->dtype, &tmp)) == TL_OK &&
          (st = tl_tensor_copy(ctx, &tmp->dl_tensor, src)) == TL_OK && !keep_host(r, i, &tmp->dl_tensor, p->dtype))
        st = TL_ERR_NO_MEMORY;
      if (st != TL_OK && st != TL_ERR_NO_MEMORY) tl_cli_print_library_error(ctx, st);
      if (tmp) tmp->deleter(tmp);
    }
    if (st != TL_OK) return st;
    if (nout > 0 && !p->is_output) { /* --save: keep it only when the run changed it */
      size_t bytes = r->elems[i] * (size_t)tl_dtype_bytes(p->dtype);
      r->written[i] = memcmp(r->data[i], snap[i], bytes) != 0;
      if (!r->written[i]) free(r->data[i]), r->data[i] = NULL;
    }
  }
  return TL_OK;
}

/* Runs the kernel once with executor exec (TL_EXEC_CPU, TL_EXEC_REFERENCE
 * or TL_EXEC_CUDA) on fresh inputs; fills r with the outputs. */
static tl_status run_once(run_state *rs, tl_executor exec, results *r, double *bench_ms) {
  tl_context *ctx = rs->ctx;
  int np = rs->nparams;
  tl_status st = TL_OK;
  host_tensor *h = calloc((size_t)np + 1, sizeof *h);
  DLManagedTensor **dev = calloc((size_t)np + 1, sizeof *dev);
  tl_arg *args = calloc((size_t)np + 1, sizeof *args);
  int nout = 0;
  tl_kernel_out_idx(rs->k, &nout);
  DLManagedTensor **outs = calloc((size_t)nout + 1, sizeof *outs);
  float *times = NULL;
  bool cuda = exec == TL_EXEC_CUDA, kept = cuda && rs->keep && rs->keep_ready && nout > 0;
  /* --save's written inputs: do_run's own run only (not the reference's, a --bench or --tune run) */
  bool snapping = rs->save_dir && exec != TL_EXEC_REFERENCE && !bench_ms && nout > 0 && !rs->keep;
  void **snap = snapping ? calloc((size_t)np + 1, sizeof *snap) : NULL;
  if (!h || !dev || !args || !outs || !results_init(r, np) || (snapping && !snap)) {
    fputs("tl-run: error: out of memory\n", stderr);
    st = TL_ERR_NO_MEMORY;
    goto out;
  }
  if (!kept && !make_inputs(rs, h, !cuda)) {
    st = TL_ERR_NO_MEMORY;
    goto out;
  }
  if (snap && !tlr_snapshot_inputs(rs, h, snap)) {
    fputs("tl-run: error: out of memory\n", stderr);
    st = TL_ERR_NO_MEMORY;
    goto out;
  }
  size_t na = 0;
  for (int i = 0; i < np; i++) {
    const param_info *p = &rs->p[i];
    if (p->is_output) continue;
    if (!p->is_tensor) {
      args[na++] = rs->scalar_args[i];
      continue;
    }
    if (kept) {
      args[na++] = tl_arg_tensor(&rs->keep[i]->dl_tensor);
    } else if (cuda) {
      DLDevice d = {kDLCUDA, rs->ordinal};
      if ((st = tl_tensor_alloc(ctx, d, p->ndim, h[i].shape, tlr_dl_dtype(p->dtype), &dev[i])) != TL_OK ||
          (st = tl_tensor_copy(ctx, &dev[i]->dl_tensor, &h[i].t)) != TL_OK) {
        tl_cli_print_library_error(ctx, st);
        goto out;
      }
      args[na++] = tl_arg_tensor(&dev[i]->dl_tensor);
    } else {
      args[na++] = tl_arg_tensor(&h[i].t);
    }
  }
  if (!kept && !tlr_fill_ptr_tables(rs, h, dev, cuda)) {
    st = TL_ERR_INVALID_ARGUMENT;
    goto out;
  }
  if (bench_ms) {
    times = calloc((size_t)rs->reps, sizeof *times);
    if (!times) {
      st = TL_ERR_NO_MEMORY;
      goto out;
    }
    st = tl_kernel_time(ctx, rs->k, args, na, NULL, rs->warmup, rs->reps, times, outs);
  } else {
    bool progress = exec == TL_EXEC_CPU && rs->progress;
    if (progress) tlr_progress_begin(rs->progress), tl_context_set_progress(ctx, tlr_progress_step, rs->progress);
    st = tl_kernel_call_on(ctx, rs->k, exec, args, na, NULL, outs);
    if (progress) tlr_progress_end(rs->progress), tl_context_set_progress(ctx, NULL, NULL);
    if (st == TL_OK) fputs(tl_context_warnings(ctx), stderr); /* the reference's: a read of an unwritten element */
  }
  if (st != TL_OK) {
    print_call_error(rs, st);
    goto out;
  }
  if (bench_ms) { /* median */
    int nr = rs->reps;
    for (int i = 1; i < nr; i++)
      for (int j = i; j > 0 && times[j - 1] > times[j]; j--) {
        float t = times[j];
        times[j] = times[j - 1];
        times[j - 1] = t;
      }
    *bench_ms = nr % 2 ? times[nr / 2] : 0.5 * ((double)times[nr / 2 - 1] + times[nr / 2]);
  }
  st = collect(rs, r, h, dev, outs, cuda, snap);
out:
  if (st == TL_OK && cuda && rs->keep && !kept && nout > 0) { /* --tune: later runs reuse the inputs */
    for (int i = 0; i < np; i++) rs->keep[i] = dev[i], dev[i] = NULL;
    rs->keep_ready = true;
  }
  for (int j = 0; outs && j < nout; j++)
    if (outs[j]) outs[j]->deleter(outs[j]);
  for (int i = 0; dev && i < np; i++)
    if (dev[i]) dev[i]->deleter(dev[i]);
  free(outs);
  free(dev);
  free(args);
  free(times);
  for (int i = 0; snap && i < np; i++) free(snap[i]);
  free(snap);
  free_host(h, np);
  return st;
}

/* Formats the multi-index of flat element i of a tensor. */
static void print_index(FILE *f, size_t i, const int64_t *shape, int ndim) {
  int64_t idx[8];
  for (int d = ndim - 1; d >= 0; d--) {
    int64_t s = shape[d] > 0 ? shape[d] : 1;
    idx[d] = (int64_t)(i % (size_t)s);
    i /= (size_t)s;
  }
  fputc('[', f);
  for (int d = 0; d < ndim; d++) fprintf(f, "%s%" PRId64, d ? ", " : "", idx[d]);
  fputc(']', f);
}

/* Compares device results with reference results; prints the verdict. */
static bool compare(run_state *rs, const results *got, const results *ref) {
  bool ok = true;
  int worst_p = -1;
  size_t worst_i = 0, nbad_total = 0, total = 0, nan_both = 0;
  double worst_excess = -1, worst_tol = 0;
  for (int i = 0; i < rs->nparams; i++) {
    const param_info *p = &rs->p[i];
    if (!got->data[i] || got->written[i]) continue;
    if (!ref->data[i] || ref->elems[i] != got->elems[i]) {
      printf("check: FAIL: the reference evaluator gave no output '%s' of the same size\n", p->name);
      return false;
    }
    double atol, rtol;
    tlr_tolerance(p->dtype, &atol, &rtol);
    for (size_t e = 0; e < got->elems[i]; e++) {
      double g = tlr_get_elem(got->data[i], p->dtype, e), x = tlr_get_elem(ref->data[i], p->dtype, e);
      total++;
      double tol = atol + rtol * fabs(x), excess;
      if (isnan(g) && isnan(x)) {
        nan_both++;
        continue;
      }
      if (isnan(g) || isnan(x)) excess = INFINITY;
      else if (isinf(g) || isinf(x)) excess = g == x ? 0 : INFINITY;
      else excess = fabs(g - x) - tol;
      if (excess > 0 || (excess == INFINITY)) {
        nbad_total++;
        ok = false;
        if (excess > worst_excess) {
          worst_excess = excess;
          worst_p = i;
          worst_i = e;
          worst_tol = tol;
        }
      }
    }
  }
  if (nan_both)
    fprintf(stderr,
            "tl-run: note: %zu output element(s) are NaN in both results (not written "
            "by the program itself?)\n",
            nan_both);
  if (ok) {
    printf("check: PASS\n");
    return true;
  }
  const param_info *p = &rs->p[worst_p];
  double g = tlr_get_elem(got->data[worst_p], p->dtype, worst_i);
  double x = tlr_get_elem(ref->data[worst_p], p->dtype, worst_i);
  printf("check: FAIL: %zu of %zu output elements differ; worst %s", nbad_total, total, p->name);
  print_index(stdout, worst_i, got->shape[worst_p], p->ndim);
  printf(" (flat %zu): got %.9g expected %.9g (|diff| %.3g, tolerance %.3g)%s\n", worst_i, g, x, fabs(g - x), worst_tol,
         isnan(g) ? " -- NaN: the element was not written (outputs are poisoned)" : "");
  return false;
}

/* One combination of dims: run, print, check, bench.  Returns the exit
 * code contribution (0 or EXIT_INPUT). */
static int do_run(run_state *rs) {
  tl_executor exec = rs->device == DEV_CUDA ? TL_EXEC_CUDA : TL_EXEC_CPU;
  results got = {0}, ref = {0};
  int rc = 0;
  if (run_once(rs, exec, &got, NULL) != TL_OK) {
    rc = EXIT_INPUT;
    goto out;
  }
  for (int i = 0; i < rs->nparams; i++) {
    const param_info *p = &rs->p[i];
    if (!got.data[i] || got.written[i]) continue;
    double sum = 0, asum = 0;
    for (size_t e = 0; e < got.elems[i]; e++) {
      double v = tlr_get_elem(got.data[i], p->dtype, e);
      sum += v;
      asum += fabs(v);
    }
    printf("output %s shape=", p->name);
    print_shape(stdout, got.shape[i], p->ndim);
    if (isnan(sum)) sum = NAN; /* print "nan", never "-nan" */
    if (isnan(asum)) asum = NAN;
    printf(" dtype=%s sum=%.6g abs_sum=%.6g\n", tl_dtype_name(p->dtype), sum, asum);
  }
  for (int i = 0; rs->save_dir && i < rs->nparams; i++) /* --save: the outputs and the inputs the run wrote */
    if (got.data[i] && !tlr_save(rs->save_dir, rs->tag, rs->p[i].name, rs->p[i].dtype, got.shape[i], rs->p[i].ndim,
                                 got.data[i], got.elems[i]))
      rc = EXIT_INPUT;
  if (rs->check) {
    if (run_once(rs, TL_EXEC_REFERENCE, &ref, NULL) != TL_OK) {
      fputs("tl-run: error: the reference evaluator failed\n", stderr);
      printf("check: FAIL: the reference evaluator could not run the kernel\n");
      rc = EXIT_INPUT;
      goto out;
    }
    if (!compare(rs, &got, &ref)) rc = EXIT_INPUT;
  }
  if (rs->bench) {
    results tmp = {0};
    double ms = 0;
    if (run_once(rs, TL_EXEC_CUDA, &tmp, &ms) != TL_OK) {
      results_free(&tmp, rs->nparams);
      rc = EXIT_INPUT;
      goto out;
    }
    results_free(&tmp, rs->nparams);
    double flops = 0;
    if (tl_kernel_gemm_flops(rs->ctx, rs->k, rs->syms, rs->symv, (size_t)rs->nsyms, &flops) != TL_OK) flops = 0;
    printf("time_ms=%.6g", ms);
    if (flops > 0 && ms > 0) printf(" tflops=%.4g", flops / (ms * 1e-3) / 1e12);
    printf("\n");
  }
out:
  fflush(stdout);
  results_free(&got, rs->nparams);
  results_free(&ref, rs->nparams);
  return rc;
}

/* ------------------------------------------------------------- --tune */
/* Compares the outputs of a and b element by element (every stride-th
 * element) with the --check tolerances; returns the number of mismatches
 * (NaN in a result counts). */
static size_t count_mismatches(const run_state *rs, const results *a, const results *b, size_t stride) {
  size_t bad = 0;
  for (int i = 0; i < rs->nparams; i++) {
    if (!a->data[i] && !b->data[i]) continue;
    if (!a->data[i] || !b->data[i] || a->elems[i] != b->elems[i]) return SIZE_MAX;
    double atol, rtol;
    tlr_tolerance(rs->p[i].dtype, &atol, &rtol);
    for (size_t e = 0; e < a->elems[i]; e += stride) {
      double x = tlr_get_elem(a->data[i], rs->p[i].dtype, e), y = tlr_get_elem(b->data[i], rs->p[i].dtype, e);
      if (!(fabs(x - y) <= atol + rtol * fabs(y))) bad++;
    }
  }
  return bad;
}

/* True when the factory accepts -D name (a parse with it and the user's
 * -D bindings does not report "no factory parameter named"). */
static bool factory_has(tl_context *ctx, const char *source, size_t len, const char *display, const tl_define *defines,
                        size_t ndefines, const char *name) {
  tl_define *d = calloc(ndefines + 1, sizeof *d);
  if (!d) return false;
  if (ndefines) memcpy(d, defines, ndefines * sizeof *d);
  d[ndefines].name = name;
  d[ndefines].value = "1";
  tl_module *m = NULL;
  tl_status s = tl_module_parse(ctx, source, len, display, d, ndefines + 1, &m);
  bool has = s == TL_OK || !strstr(tl_context_last_error(ctx), "no factory parameter named");
  tl_module_destroy(m);
  free(d);
  return has;
}

typedef struct tune_input {
  const char *source;
  size_t len;
  const char *display;
  const tl_define *defines;
  size_t ndefines;
  const tl_compile_options *co;
  tl_tune_space *space; /* the file's @tilelang.autotune, or NULL (the built-in table) */
  int workers;          /* --tune-workers (0: every CPU) */
  bool dry_run;         /* --tune-dry-run: compile the space only */
} tune_input;

/* The built-in table as a tune space (examples/gemm.py's knobs), for the
 * problem's M, N, K; NULL after printing why. */
static tl_tune_space *builtin_space(run_state *rs, const tune_input *in) {
  tl_context *ctx = rs->ctx;
  static const char *const knobs[5] = {"block_M", "block_N", "block_K", "threads", "num_stages"};
  for (int i = 0; i < 5; i++)
    if (!factory_has(ctx, in->source, in->len, in->display, in->defines, in->ndefines, knobs[i])) {
      fprintf(stderr,
              "tl-run: error: --tune: the kernel's factory has no parameter '%s' and the file no "
              "@tilelang.autotune (the built-in table needs block_M, block_N, block_K, threads and "
              "num_stages, as examples/gemm.py)\n",
              knobs[i]);
      return NULL;
    }
  size_t nknobs = 5;
  if (factory_has(ctx, in->source, in->len, in->display, in->defines, in->ndefines, "policy") &&
      factory_has(ctx, in->source, in->len, in->display, in->defines, in->ndefines, "swizzle_panel"))
    nknobs = 7;
  /* M, N from the output (the first out_idx output, else the last 2-D
   * tensor), K from the FLOPs; input dtype from the first tensor */
  int oi = -1, first_tensor = -1;
  for (int i = 0; i < rs->nparams; i++) {
    if (rs->p[i].is_tensor && first_tensor < 0) first_tensor = i;
    if (rs->p[i].is_tensor && rs->p[i].ndim == 2 && (rs->p[i].is_output || oi < 0 || !rs->p[oi].is_output)) oi = i;
  }
  double flops = 0;
  if (oi < 0 || first_tensor < 0 ||
      tl_kernel_gemm_flops(ctx, rs->k, rs->syms, rs->symv, (size_t)rs->nsyms, &flops) != TL_OK || flops <= 0) {
    fputs("tl-run: error: --tune: the kernel has no T.gemm with a 2-D output whose FLOPs are known\n", stderr);
    return NULL;
  }
  int64_t oshape[8];
  shape_elems(&rs->p[oi], rs->symv, oshape);
  int64_t M = oshape[0], N = oshape[1];
  int64_t K = M > 0 && N > 0 ? (int64_t)llround(flops / (2.0 * (double)M * (double)N)) : 0;
  tl_gemm_config cands[64];
  const char *tgt = tl_target_resolve(in->co->target);
  size_t nc = tl_gemm_configs_target(tgt, in->co->flags, M, N, K, rs->p[first_tensor].dtype, cands, 64);
  if (nc > 64) nc = 64;
  printf("tune: M=%" PRId64 " N=%" PRId64 " K=%" PRId64 " %s, target %s: %zu built-in candidate(s)\n", M, N, K,
         tl_dtype_name(rs->p[first_tensor].dtype), tgt, nc);
  tl_define defs[64][7], *rows[64];
  char storage[64][7][16];
  size_t nk[64];
  for (size_t c = 0; c < nc; c++) {
    tl_gemm_config_defines(&cands[c], defs[c], storage[c]);
    rows[c] = defs[c];
    nk[c] = nknobs;
  }
  tl_tune_space *s = NULL;
  if (!nc || tl_tune_space_from_defines((const tl_define *const *)rows, nk, nc, &s) != TL_OK)
    fputs("tl-run: error: --tune: no built-in candidate for this problem\n", stderr);
  return s;
}

/* What the measure callback needs: the given kernel's outputs (made on the
 * first call) are the trusted result the candidates must match. */
typedef struct tune_measure_state {
  run_state *rs;
  results base;
  bool tried, have_base; /* the given configuration was run / ran */
} tune_measure_state;

/* tl_tune_measure_fn: run the candidate on the (kept) inputs, compare with
 * the given configuration's output (the --check tolerances; every element,
 * or every 61st of an output over 4M elements: a prime stride reaches every
 * tile of every tile shape), then the median of rep timed launches. */
static tl_status tune_measure(void *user, tl_kernel *k, size_t index, int warmup, int rep, double *ms, char *why,
                              size_t why_size) {
  (void)index;
  tune_measure_state *t = user;
  run_state *rs = t->rs;
  if (!t->tried) {
    t->tried = true;
    t->have_base = run_once(rs, TL_EXEC_CUDA, &t->base, NULL) == TL_OK;
  }
  if (!t->have_base) {
    snprintf(why, why_size, "the given configuration failed to run, so nothing can be checked");
    return TL_ERR_CUDA;
  }
  tl_status s = tl_kernel_load(rs->ctx, k, rs->ordinal);
  if (s != TL_OK) {
    snprintf(why, why_size, "%s", tl_context_last_error(rs->ctx));
    return s;
  }
  tl_kernel *saved = rs->k;
  int sw = rs->warmup, sr = rs->reps;
  rs->k = k, rs->warmup = warmup, rs->reps = rep;
  results got = {0};
  s = run_once(rs, TL_EXEC_CUDA, &got, ms);
  rs->k = saved, rs->warmup = sw, rs->reps = sr;
  size_t stride = 1;
  for (int i = 0; i < rs->nparams; i++)
    if (got.elems && got.elems[i] > ((size_t)4 << 20)) stride = 61;
  size_t bad = s == TL_OK ? count_mismatches(rs, &got, &t->base, stride) : 0;
  results_free(&got, rs->nparams);
  if (s != TL_OK) snprintf(why, why_size, "the run failed: %s", tl_context_last_error(rs->ctx));
  else if (bad) snprintf(why, why_size, "%zu checked output element(s) differ from the given configuration's", bad);
  return s != TL_OK ? s : bad ? TL_ERR_COMPILE : TL_OK;
}

/* The problem's description for the tune cache: every parameter's name,
 * dtype and shape (dynamic dims bound) and the scalar arguments. */
static char *tune_problem(const run_state *rs) {
  size_t cap = 64 + (size_t)rs->nparams * 256, n = 0;
  char *s = malloc(cap);
  for (int i = 0; s && i < rs->nparams; i++) {
    const param_info *p = &rs->p[i];
    int64_t shape[8];
    n += (size_t)snprintf(s + n, cap - n, "%s:%s", p->name, tl_dtype_name(p->dtype));
    if (p->is_tensor) {
      shape_elems(p, rs->symv, shape);
      for (int d = 0; d < p->ndim; d++) n += (size_t)snprintf(s + n, cap - n, "%s%" PRId64, d ? "x" : "[", shape[d]);
      n += (size_t)snprintf(s + n, cap - n, "]%s;", p->is_output ? "out" : "");
    } else {
      const tl_arg *a = &rs->scalar_args[i];
      n += (size_t)snprintf(s + n, cap - n, "=%.17g;", a->kind == TL_ARG_FLOAT ? a->v.f : (double)a->v.i);
    }
    if (n >= cap - 1) break;
  }
  return s;
}

/* One line per configuration the tune reached, on stdout:
 *   tune [I/N] block_M=128,block_N=256,...: 0.5123 ms 268.3 TFLOP/s (best)
 *   tune [I/N] ...: skipped (compile: FILE:LINE:COL: error: ...)
 *   tune [I/N] ...: rejected: REASON        (run or check failed)
 *   tune [I/N] ...: compiled (41.2 ms CPU)  (--tune-dry-run)
 * (scripts/run-gpu.sh makes tune_gemm_4096.csv from these). */
static void print_tune_lines(const tl_tune_space *space, const tl_tune_result *r, double flops) {
  for (size_t c = 0; c < r->nconfigs; c++) {
    const tl_tune_config_result *x = &r->configs[c];
    if (x->outcome == TL_TUNE_PENDING) continue;
    size_t nd = 0;
    const tl_define *d = tl_tune_space_config(space, c, &nd);
    printf("tune [%zu/%zu] ", c + 1, r->nconfigs);
    for (size_t i = 0; i < nd; i++) printf("%s%s=%s", i ? "," : "", d[i].name, d[i].value);
    if (x->outcome == TL_TUNE_TIMED) {
      printf(": %.4f ms", x->ms);
      if (flops > 0) printf(" %.1f TFLOP/s", flops / (x->ms * 1e-3) / 1e12);
      printf("%s\n", (long)c == r->best ? " (best)" : "");
    } else if (x->outcome == TL_TUNE_COMPILED) {
      printf(": compiled (%.1f ms CPU)\n", x->compile_cpu_ms);
    } else {
      printf(x->outcome == TL_TUNE_COMPILE_FAILED ? ": skipped (compile: %s)\n" : ": rejected: %s\n",
             x->message ? x->message : "");
    }
  }
}

/* --tune: see the header comment, (5).  On success *kp (and rs->k) is the
 * fastest kernel; returns 0 or EXIT_INPUT. */
static int tune(run_state *rs, const tune_input *in, tl_kernel **kp) {
  tl_tune_space *own = in->space ? NULL : builtin_space(rs, in);
  const tl_tune_space *space = in->space ? in->space : own;
  if (!space) return EXIT_INPUT;
  tune_measure_state ms = {rs, {0}, false, false};
  tl_compile_options co = *in->co;
  co.stop_after = TL_STAGE_PTX;
  char *problem = tune_problem(rs);
  tl_tune_options o = {.compile = &co,
                       .defines = in->defines,
                       .ndefines = in->ndefines,
                       .workers = in->workers,
                       .measure = in->dry_run ? NULL : tune_measure,
                       .user = &ms,
                       .problem = problem,
                       .progress = true,
                       .load = !in->dry_run,
                       .device = rs->ordinal};
  tl_tune_result r;
  rs->keep = in->dry_run ? NULL : calloc((size_t)rs->nparams + 1, sizeof *rs->keep);
  tl_status s = tl_kernel_tune(rs->ctx, in->source, in->len, in->display, space, &o, &r);
  for (int i = 0; rs->keep && i < rs->nparams; i++)
    if (rs->keep[i]) rs->keep[i]->deleter(rs->keep[i]);
  free(rs->keep);
  rs->keep = NULL;
  rs->keep_ready = false;
  free(problem);
  results_free(&ms.base, rs->nparams);
  if (s != TL_OK) {
    tl_cli_print_library_error(rs->ctx, s);
    tl_tune_space_destroy(own);
    return EXIT_INPUT;
  }
  double flops = 0;
  if (tl_kernel_gemm_flops(rs->ctx, rs->k, rs->syms, rs->symv, (size_t)rs->nsyms, &flops) != TL_OK) flops = 0;
  print_tune_lines(space, &r, flops);
  char loads[96] = "";
  if (r.load_ms > 0)
    snprintf(loads, sizeof loads, " (PTX JIT by %s; loads %.0f ms summed)",
             r.jitlink ? "nvJitLink on the workers" : "the driver", r.load_ms);
  printf(
      "tune: %zu configs on %d compile workers: %zu compiled, %zu failed to compile, %zu timed, %zu failed "
      "the load, run or check; compile%s %.0f ms wall, %.1f ms CPU per config%s; total %.0f ms%s\n",
      r.nconfigs, r.workers, r.compiled, r.compile_failed, r.timed, r.measure_failed, r.load_ms > 0 ? " and load" : "",
      r.compile_wall_ms, r.compiled + r.compile_failed ? r.compile_cpu_ms / (double)(r.compiled + r.compile_failed) : 0,
      loads, r.total_ms, r.cache_hit ? " (tune cache hit)" : "");
  if (r.best >= 0) {
    size_t nd = 0;
    const tl_define *d = tl_tune_space_config(space, (size_t)r.best, &nd);
    printf("tune: best: config #%ld (%.4f ms", r.best, r.best_ms);
    if (flops > 0) printf(", %.1f TFLOP/s", flops / (r.best_ms * 1e-3) / 1e12);
    printf("):");
    for (size_t i = 0; i < nd; i++) printf(" -D %s=%s", d[i].name, d[i].value);
    printf("\n");
    rs->given = *kp; /* still named by rs->p and rs->syms; destroyed at exit */
    *kp = r.kernel;
    rs->k = r.kernel;
  } else if (!in->dry_run) {
    printf("tune: no configuration passed; keeping the given one\n");
  }
  fflush(stdout);
  tl_tune_result_free(&r);
  tl_tune_space_destroy(own);
  return 0;
}

/* A dynamic dim without a --dim takes its value from an --input file whose
 * parameter has it as a dim (the file's extent there, when the file has the
 * parameter's number of dims; the first such --input); added to dims[] (at
 * most cap entries). */
static void dims_from_inputs(const run_state *rs, const run_opts *ro, dim_opt *dims, size_t *ndims, size_t cap) {
  for (int si = 0; si < rs->nsyms; si++) {
    bool given = false;
    for (size_t i = 0; i < *ndims; i++) given |= !strcmp(dims[i].name, rs->syms[si]);
    for (size_t j = 0; !given && j < ro->ninputs && *ndims < cap; j++)
      for (int pi = 0; !given && pi < rs->nparams; pi++) {
        const param_info *p = &rs->p[pi];
        const tlr_npy *a = &ro->inputs[j].a;
        if (!p->is_tensor || p->is_output || strcmp(p->name, ro->inputs[j].name) || a->ndim != p->ndim) continue;
        for (int d = 0; d < p->ndim && !given; d++) {
          if (p->dim_sym[d] != si || a->shape[d] > INT32_MAX || !(dims[*ndims].vals = malloc(sizeof(int64_t))))
            continue;
          dims[*ndims].name = (char *)rs->syms[si];
          dims[*ndims].vals[0] = a->shape[d];
          dims[(*ndims)++].n = 1;
          given = true;
        }
      }
  }
}

/* The kernel's parameters into rs->p, its dynamic dims into rs->syms;
 * checks the --dim names (every dynamic dim needs one, or an --input that
 * gives it: dims_from_inputs; each must name one).  false after printing
 * the errors. */
static bool read_params(run_state *rs, tl_kernel *k, dim_opt *dims, size_t *pndims, size_t cap, const run_opts *ro) {
  bool bad = false;
  for (int i = 0; i < rs->nparams; i++) {
    param_info *p = &rs->p[i];
    p->name = tl_kernel_param_name(k, i);
    p->is_tensor = tl_kernel_param_is_tensor(k, i);
    p->is_output = tl_kernel_param_is_output(k, i);
    p->dtype = tl_kernel_param_dtype(k, i);
    p->ndim = tl_kernel_param_ndim(k, i);
    if (p->is_tensor && (p->ndim > 8 || p->dtype.lanes > 1)) {
      fprintf(stderr,
              "tl-run: error: parameter '%s': tl-run handles tensors of at most 8 dims "
              "and scalar element types\n",
              p->name);
      return false;
    }
    for (int d = 0; d < p->ndim; d++) {
      const char *sym = NULL;
      p->dim_sym[d] = -1;
      if (tl_kernel_param_dim(k, i, d, &p->dims[d], &sym)) continue;
      if (!sym) {
        if (!p->is_output) {
          fprintf(stderr,
                  "tl-run: error: parameter '%s' dim %d is an expression of dynamic "
                  "dims; tl-run needs input dims that are constants or single dims\n",
                  p->name, d);
          return false;
        }
        continue;
      }
      int si = 0;
      while (si < rs->nsyms && strcmp(rs->syms[si], sym)) si++;
      if (si == rs->nsyms) rs->syms[rs->nsyms++] = sym;
      p->dim_sym[d] = si;
    }
    int per = 1;
    tl_dtype store = tl_dtype_storage(p->dtype, &per);
    if (p->is_tensor && per > 1 && p->ndim > 0 && p->dim_sym[p->ndim - 1] < 0) {
      /* int4: tl-run makes, passes and compares the storage tensor (int8, last dim halved) */
      p->dtype = store;
      p->dims[p->ndim - 1] /= per;
    }
  }
  dims_from_inputs(rs, ro, dims, pndims, cap);
  size_t ndims = *pndims;
  for (size_t i = 0; i < ndims; i++) {
    int si = 0;
    while (si < rs->nsyms && strcmp(rs->syms[si], dims[i].name)) si++;
    if (si == rs->nsyms) {
      fprintf(stderr, "<command line>: error: --dim %s: the kernel has no dynamic dim named '%s'", dims[i].name,
              dims[i].name);
      if (rs->nsyms) {
        fputs(" (its dynamic dims:", stderr);
        for (int j = 0; j < rs->nsyms; j++) fprintf(stderr, " %s", rs->syms[j]);
        fputc(')', stderr);
      }
      fputc('\n', stderr);
      bad = true;
    }
  }
  for (int si = 0; si < rs->nsyms; si++) {
    bool found = false;
    for (size_t i = 0; i < ndims; i++) found |= !strcmp(dims[i].name, rs->syms[si]);
    if (!found) {
      fprintf(stderr, "<command line>: error: dynamic dim '%s' has no value; pass --dim %s=<int>\n", rs->syms[si],
              rs->syms[si]);
      bad = true;
    }
  }
  return !bad;
}

/* The scalar parameters' --arg values into rs->scalar_args (each needs
 * one, each must name one); false after printing the errors. */
static bool read_scalars(run_state *rs, const arg_opt *sargs, size_t nsargs) {
  bool bad = false;
  for (size_t i = 0; i < nsargs; i++) {
    int pi = 0;
    while (pi < rs->nparams && (rs->p[pi].is_tensor || strcmp(rs->p[pi].name, sargs[i].name))) pi++;
    if (pi == rs->nparams) {
      fprintf(stderr,
              "<command line>: error: --arg %s: the kernel has no scalar parameter named "
              "'%s'\n",
              sargs[i].name, sargs[i].name);
      bad = true;
    }
  }
  for (int pi = 0; pi < rs->nparams; pi++) {
    param_info *p = &rs->p[pi];
    if (p->is_tensor) continue;
    const char *val = NULL;
    for (size_t i = 0; i < nsargs; i++)
      if (!strcmp(sargs[i].name, p->name)) val = sargs[i].value;
    if (!val) {
      fprintf(stderr,
              "<command line>: error: scalar parameter '%s' (%s) has no value; pass "
              "--arg %s=<value>\n",
              p->name, tl_dtype_name(p->dtype), p->name);
      bad = true;
      continue;
    }
    if (tlr_is_float(p->dtype)) {
      char *end;
      errno = 0;
      double v = strtod(val, &end);
      if (end == val || *end || errno == EINVAL) {
        fprintf(stderr, "<command line>: error: --arg %s=%s: expected a number for %s\n", p->name, val,
                tl_dtype_name(p->dtype));
        bad = true;
      }
      rs->scalar_args[pi] = tl_arg_float(v);
    } else {
      int64_t v = 0;
      if (p->dtype.code == TL_TYPE_BOOL && (!strcmp(val, "True") || !strcmp(val, "true"))) v = 1;
      else if (p->dtype.code == TL_TYPE_BOOL && (!strcmp(val, "False") || !strcmp(val, "false"))) v = 0;
      else if (!tlr_parse_i64(val, &v)) {
        fprintf(stderr, "<command line>: error: --arg %s=%s: expected an integer for %s\n", p->name, val,
                tl_dtype_name(p->dtype));
        bad = true;
      }
      rs->scalar_args[pi] = tl_arg_int(v);
    }
  }
  return !bad;
}
/* (2) The compile of the given configuration.  With --tune the file's
 * @tilelang.autotune is read first into *space (NULL without one); when
 * the kernel does not compile with the -D bindings alone (a factory without
 * defaults for its tuned parameters) the first config's bindings are added. */
static tl_status compile_given(tl_context *ctx, const char *source, size_t len, const char *display,
                               const tl_define *defines, size_t ndefines, const tl_compile_options *co, bool tune_opt,
                               tl_tune_space **space, tl_kernel **k) {
  tl_status s = TL_OK;
  if (tune_opt && (s = tl_tune_space_parse(ctx, source, len, display, co->kernel, defines, ndefines, space)) != TL_OK)
    return s;
  s = tl_kernel_compile(ctx, source, len, display, defines, ndefines, co, k);
  if (s != TL_ERR_COMPILE || !*space) return s;
  size_t nc = 0;
  const tl_define *c = tl_tune_space_config(*space, 0, &nc);
  tl_define *d = calloc(ndefines + nc + 1, sizeof *d);
  if (!d) return TL_ERR_NO_MEMORY;
  if (ndefines) memcpy(d, defines, ndefines * sizeof *d);
  memcpy(d + ndefines, c, nc * sizeof *d);
  fputs(
      "tl-run: note: --tune: the kernel does not compile with the -D bindings alone; the given "
      "configuration is the @autotune config #0\n",
      stderr);
  s = tl_kernel_compile(ctx, source, len, display, d, ndefines + nc, co, k);
  free(d);
  return s;
}

/* The long options (getopt_long). */
enum {
  OPT_DEVICE = 256,
  OPT_DIM,
  OPT_ARG,
  OPT_OUT_IDX,
  OPT_SEED,
  OPT_CHECK,
  OPT_BENCH,
  OPT_TARGET,
  OPT_TUNE,
  OPT_SCHEDULE_SEED,
  OPT_KERNEL,
  OPT_REMARKS,
  OPT_PASS_CONFIG,
  OPT_SMS,
  OPT_CACHE_INFO,
  OPT_COMPILE_ONLY,
  OPT_TUNE_DRY_RUN,
  OPT_TUNE_WORKERS,
  OPT_NO_LINE_INFO
};
static const struct option longopts[] = {
    {"device", required_argument, NULL, OPT_DEVICE},
    {"dim", required_argument, NULL, OPT_DIM},
    {"arg", required_argument, NULL, OPT_ARG},
    {"out-idx", required_argument, NULL, OPT_OUT_IDX},
    {"seed", required_argument, NULL, OPT_SEED},
    {"schedule-seed", required_argument, NULL, OPT_SCHEDULE_SEED},
    {"check", no_argument, NULL, OPT_CHECK},
    {"bench", no_argument, NULL, OPT_BENCH},
    {"tune", no_argument, NULL, OPT_TUNE},
    {"target", required_argument, NULL, OPT_TARGET},
    {"kernel", required_argument, NULL, OPT_KERNEL},
    {"remarks", no_argument, NULL, OPT_REMARKS},
    {"sms", required_argument, NULL, OPT_SMS},
    {"pass-config", required_argument, NULL, OPT_PASS_CONFIG},
    {"cache-info", no_argument, NULL, OPT_CACHE_INFO},
    {"compile-only", no_argument, NULL, OPT_COMPILE_ONLY},
    {"tune-dry-run", no_argument, NULL, OPT_TUNE_DRY_RUN},
    {"tune-workers", required_argument, NULL, OPT_TUNE_WORKERS},
    {"input", required_argument, NULL, OPT_INPUT},
    {"ptr-table", required_argument, NULL, OPT_PTR_TABLE},
    {"save", required_argument, NULL, OPT_SAVE},
    {"int-range", required_argument, NULL, OPT_INT_RANGE},
    {"progress", no_argument, NULL, OPT_PROGRESS},
    {"no-progress", no_argument, NULL, OPT_NO_PROGRESS},
    {"no-line-info", no_argument, NULL, OPT_NO_LINE_INFO},
    {"atol", required_argument, NULL, OPT_ATOL},
    {"rtol", required_argument, NULL, OPT_RTOL},
    {"help", no_argument, NULL, 'h'},
    {NULL, 0, NULL, 0},
};

int main(int argc, char **argv) {
  tl_cli_tool_name = "tl-run";
  int rc = EXIT_USAGE;
  tlr_device device = {DEV_AUTO, 0, ""};
  const char *target = NULL, *in_path = NULL, *kernel_name = NULL;
  bool check = false, bench = false, tune_opt = false, cache_info = false, compile_only = false;
  bool dry_run = false;
  int tune_workers = 0;                                /* --tune-dry-run, --tune-workers */
  unsigned compile_flags = 0, compile_flags_false = 0; /* --pass-config */
  bool remarks = false;                                /* --remarks */
  bool no_line_info = false;                           /* --no-line-info, -g0 */
  int sms = 0;                                         /* --sms */
  uint64_t seed = 0;
  tl_out_idx_mode oi_mode = TL_OUT_IDX_FROM_FILE;
  int *oi = NULL;
  size_t noi = 0;
  tl_define *defines = calloc((size_t)argc + 1, sizeof *defines);
  dim_opt *dims = calloc((size_t)argc + 64, sizeof *dims); /* + the dims --input gives */
  arg_opt *sargs = calloc((size_t)argc + 1, sizeof *sargs);
  run_opts ro = {.inputs = calloc((size_t)argc + 1, sizeof *ro.inputs)};
  size_t ndefines = 0, ndims = 0, nsargs = 0;
  char *source = NULL;
  tl_context *ctx = NULL;
  tl_kernel *k = NULL;
  tl_tune_space *space = NULL;
  run_state rs;
  memset(&rs, 0, sizeof rs);
  if (!defines || !dims || !sargs || !ro.inputs) {
    fputs("tl-run: error: out of memory\n", stderr);
    rc = EXIT_INPUT;
    goto done;
  }

  opterr = 0;
  int c;
  while ((c = getopt_long(argc, argv, ":D:g::h", longopts, NULL)) != -1) {
    switch (c) {
    case 'D': {
      if (!tl_cli_split_define(optarg, &defines[ndefines])) {
        rc = tl_cli_usage_error("malformed -D '%s': expected -D NAME=VALUE", optarg);
        goto done;
      }
      ndefines++;
      break;
    }
    case 'h':
      usage(stdout);
      rc = 0;
      goto done;
    case OPT_DEVICE:
      if (!tlr_parse_device(optarg, &device)) {
        rc = tl_cli_usage_error(
            "unknown --device '%s' (expected auto, cuda, cuda:N with N a device ordinal, "
            "or cpu)",
            optarg);
        goto done;
      }
      break;
    case OPT_DIM:
      if (!tlr_dim_option(optarg, dims, &ndims, &rc)) goto done;
      break;
    case OPT_ARG:
      if (!tlr_arg_option(optarg, sargs, &nsargs, &rc)) goto done;
      break;
    case OPT_OUT_IDX:
      free(oi);
      oi = NULL;
      if (!tlr_parse_out_idx(optarg, &oi_mode, &oi, &noi)) {
        rc = tl_cli_usage_error("bad --out-idx '%s' (expected none or integers such as -1 or 0,2)", optarg);
        goto done;
      }
      break;
    case OPT_SEED:
    case OPT_SCHEDULE_SEED:
      if (!tlr_seed_option(c == OPT_SCHEDULE_SEED, optarg, &seed, &rc)) goto done;
      break;
    case OPT_CHECK: check = true; break;
    case OPT_BENCH: bench = true; break;
    case OPT_TUNE: tune_opt = true; break;
    case OPT_CACHE_INFO: cache_info = true; break;
    case OPT_COMPILE_ONLY: compile_only = true; break;
    case OPT_TUNE_DRY_RUN: tune_opt = dry_run = true; break;
    case OPT_TUNE_WORKERS:
      if (!tlr_workers_option(optarg, &tune_workers, &rc)) goto done;
      break;
    case OPT_REMARKS: remarks = true; break;           /* tl_compile_options.remarks */
    case OPT_NO_LINE_INFO: no_line_info = true; break; /* tl_compile_options.no_line_info */
    case 'g':
      if (!tl_cli_parse_g(optarg, &no_line_info)) goto done;
      break; /* rc: EXIT_USAGE */
    case OPT_SMS:
      if (!tl_cli_parse_sms(optarg, &sms)) goto done;
      break; /* rc: EXIT_USAGE */
    case OPT_PASS_CONFIG:
      if (!tlr_pass_config_option(optarg, &compile_flags, &compile_flags_false, &rc)) goto done;
      break;
    case OPT_KERNEL: kernel_name = optarg; break;
    case OPT_INPUT:
    case OPT_SAVE:
    case OPT_INT_RANGE:
    case OPT_PROGRESS:
    case OPT_NO_PROGRESS:
    case OPT_PTR_TABLE:
    case OPT_ATOL:
    case OPT_RTOL:
      if (!tlr_run_option(c, optarg, &ro, &rc)) goto done;
      break;
    case OPT_TARGET:
      if (!tl_cli_check_target(optarg)) {
        rc = EXIT_USAGE;
        goto done;
      }
      target = optarg;
      break;
    case ':': rc = tl_cli_usage_error("option '%s' requires an argument", tl_cli_bad_option(argc, argv)); goto done;
    default: rc = tl_cli_usage_error("unknown or malformed option '%s'", tl_cli_bad_option(argc, argv)); goto done;
    }
  }
  if (!tl_cli_single_input(argc, argv, &in_path)) {
    rc = EXIT_USAGE;
    goto done;
  }
  const char *display = NULL;
  size_t len = 0;
  if (!tl_cli_read_input("tl-run", in_path, &source, &len, &display)) {
    rc = EXIT_USAGE;
    goto done;
  }
  if ((rc = tlr_inputs_load(ro.inputs, &ro.ninputs)) != 0) goto done; /* --input's files */
  rc = EXIT_INPUT;
  tl_status s = tl_context_create(&ctx);
  if (s != TL_OK) {
    fprintf(stderr, "tl-run: error: %s\n", tl_status_name(s));
    goto done;
  }

  /* (1) device */
  if (!tlr_pick_device(ctx, compile_only || dry_run,
                       bench                  ? "--bench"
                       : tune_opt && !dry_run ? "--tune"
                                              : NULL,
                       &device))
    goto done;
  if (device.kind == DEV_CUDA && !target) target = tl_device_target(device.ordinal); /* that device's */

  /* (2) compile once */
  tl_compile_options co = {.target = target,
                           .sms = sms,
                           .out_idx_mode = oi_mode,
                           .out_idx = oi,
                           .n_out_idx = noi,
                           .flags = TL_COMPILE_POISON_OUTPUTS | compile_flags,
                           .flags_false = compile_flags_false,
                           .kernel = kernel_name,
                           .remarks = remarks,
                           .no_line_info = no_line_info,
                           .stop_after = device.kind == DEV_CUDA ? TL_STAGE_PTX : TL_STAGE_SIMT};
  s = compile_given(ctx, source, len, display, defines, ndefines, &co, tune_opt, &space, &k);
  if (s != TL_OK) {
    tl_cli_print_library_error(ctx, s);
    goto done;
  }
  fputs(tl_context_warnings(ctx), stderr); /* warnings, and --remarks */
  if (cache_info) tl_cli_print_cache_info(k);
  if (compile_only) {
    rc = EXIT_SUCCESS;
    goto done;
  }

  /* parameters, dynamic dims, scalars */
  rs.ctx = ctx;
  rs.k = k;
  rs.device = device.kind;
  rs.ordinal = device.ordinal;
  rs.seed = seed;
  rs.warmup = BENCH_WARMUP, rs.reps = BENCH_REPS;
  rs.check = check;
  rs.bench = bench;
  rs.nparams = tl_kernel_param_count(k);
  rs.p = calloc((size_t)rs.nparams + 1, sizeof *rs.p);
  rs.syms = calloc((size_t)rs.nparams * 8 + 1, sizeof *rs.syms);
  rs.symv = calloc((size_t)rs.nparams * 8 + 1, sizeof *rs.symv);
  rs.scalar_args = calloc((size_t)rs.nparams + 1, sizeof *rs.scalar_args);
  if (!rs.p || !rs.syms || !rs.symv || !rs.scalar_args) {
    fputs("tl-run: error: out of memory\n", stderr);
    goto done;
  }
  if (!read_params(&rs, k, dims, &ndims, (size_t)argc + 64, &ro) || !read_scalars(&rs, sargs, nsargs) ||
      !tlr_bind_run_options(&rs, &ro))
    goto done;

  /* (3) every combination of --dim values (--tune first, on the first values) */
  if (tune_opt) {
    for (int si = 0; si < rs.nsyms; si++)
      for (size_t i = 0; i < ndims; i++)
        if (!strcmp(dims[i].name, rs.syms[si])) rs.symv[si] = dims[i].vals[0];
    tune_input ti = {source, len, display, defines, ndefines, &co, space, tune_workers, dry_run};
    rc = tune(&rs, &ti, &k);
    if (rc != 0 || dry_run) goto done;
  }
  {
    int *which = calloc((size_t)rs.nsyms + 1, sizeof(int));
    int *dim_of = calloc((size_t)rs.nsyms + 1, sizeof(int));
    if (!which || !dim_of) {
      free(which);
      free(dim_of);
      goto done;
    }
    long nruns = 1;
    for (int si = 0; si < rs.nsyms; si++) {
      for (size_t i = 0; i < ndims; i++)
        if (!strcmp(dims[i].name, rs.syms[si])) dim_of[si] = (int)i;
      nruns *= dims[dim_of[si]].n;
      if (nruns > MAX_RUNS) break;
    }
    if (nruns > MAX_RUNS) {
      fprintf(stderr, "<command line>: error: --dim lists give more than %d runs\n", MAX_RUNS);
      free(which);
      free(dim_of);
      goto done;
    }
    int fail = 0;
    for (long r = 0; r < nruns; r++) {
      for (int si = 0; si < rs.nsyms; si++) rs.symv[si] = dims[dim_of[si]].vals[which[si]];
      for (int si = 0, n = 0; nruns > 1 && si < rs.nsyms && n < (int)sizeof rs.tag; si++) /* --save's file tag */
        n += snprintf(rs.tag + n, sizeof rs.tag - (size_t)n, "%s%s=%" PRId64, si ? "." : "", rs.syms[si], rs.symv[si]);
      if (nruns > 1) {
        printf("run");
        for (int si = 0; si < rs.nsyms; si++) printf(" %s=%" PRId64, rs.syms[si], rs.symv[si]);
        printf("\n");
      }
      if (do_run(&rs) != 0) fail = 1;
      for (int si = rs.nsyms - 1; si >= 0; si--) { /* odometer, last dim fastest */
        if (++which[si] < dims[dim_of[si]].n) break;
        which[si] = 0;
      }
    }
    free(which);
    free(dim_of);
    rc = fail ? EXIT_INPUT : 0;
  }

done:
  free(rs.p);
  free(rs.syms);
  free(rs.symv);
  free(rs.scalar_args);
  free(rs.input_of), free(rs.ptr_of);
  tlr_inputs_free(ro.inputs, ro.ninputs);
  free(ro.inputs);
  tl_kernel_destroy(k);
  tl_kernel_destroy(rs.given);
  tl_tune_space_destroy(space);
  tl_context_destroy(ctx);
  free(source);
  free(defines);
  for (size_t i = 0; dims && i < ndims; i++) free(dims[i].vals);
  free(dims);
  free(sargs);
  free(oi);
  return rc;
}
