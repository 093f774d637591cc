/* GPU test of TileLang's language ops of issue 14 (T.atomic_max / _min /
 * _addx2 / _addx4, T.align_up, T.alloc_global, T.cumsum, T.cummax, T.transpose, T.view / T.reshape
 * (dtype-changing views too), T.reinterpret, T.im2col, float8 casts, T.make_tensor, T.sync_grid (issue 30) and
 * examples/convolution.py, examples/dequant_gemm.py, the known device functions of T.call_extern, the explicit
 * warp-specialisation and role-branch kernels): each kernel of test/Interp/ops (and
 * the convolution example) runs on the GPU through `tl-run --device=cuda
 * --check`, which compares every output element with the CPU reference
 * evaluator (tolerances as tl-run's: docs/testing.md "Numeric checks"), at the sizes of
 * TileLang's own tests.  The cases run TL_GPU_JOBS at a time (default: the CPU count, at most 8), each under
 * `timeout` (TL_GPU_CASE_TIMEOUT s, default 180: a hung kernel is that case's FAIL, not the whole test's hang).  tl-run is found as $TL_RUN, else next to this
 * program (the bundle's bin/), else in its parent directory (a build tree's
 * gpu-bin/..); the kernels in $TL_OPS_DIR (default test/Interp/ops) and
 * $TL_KERNEL_DIR (default examples).  Exit 0 pass, 1 fail, 77 no driver/GPU. */
#include <libgen.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "gpu_util.h"

typedef struct op_case {
  const char *dir; /* "ops" or "examples" */
  const char *file;
  const char *args;
} op_case;

static const op_case cases[] = {
    {"ops", "atomic_max_min.py", "--kernel=atomic_different_orders"},
    {"ops", "atomic_max_min.py", "--kernel=atomic_different_orders -D dtype=float16"},
    {"ops", "atomic_max_min.py", "--kernel=atomic_different_orders -D dtype=bfloat16"},
    {"ops", "atomic_max_min.py", "--kernel=atomic_different_orders -D dtype=int32"},
    {"ops", "atomic_max_min.py", "--kernel=atomic_tiles"},
    {"ops", "atomic_addx.py", "--kernel=atomic_addx2_program"},
    {"ops", "atomic_addx.py", "--kernel=atomic_addx2_program -D dtype=float32"},
    {"ops", "atomic_addx.py", "--kernel=atomic_addx2_mixed"},
    {"ops", "atomic_addx.py", "--kernel=atomic_addx4_program"},
    {"ops", "atomic_addx.py", "--kernel=atomic_addx4_rows"},
    {"ops", "align_up.py", "--dim n=1,7,8,100"},
    {"ops", "alloc_global.py", "--kernel=alloc_global_copy"},
    {"ops", "alloc_global.py", "--kernel=alloc_global_atomic"},
    {"ops", "alloc_global.py", "--kernel=alloc_global_elems"},
    {"ops", "cumsum.py", "--kernel=cumsum_tile"},
    {"ops", "cumsum.py", "--kernel=cumsum_tile -D dim=1"},
    {"ops", "cumsum.py", "--kernel=cumsum_tile -D dim=1 -D reverse=True"},
    {"ops", "cumsum.py", "--kernel=cumsum_tile -D M=192 -D N=160 -D block_N=32 -D reverse=True"},
    {"ops", "cumsum.py", "--kernel=cumsum_tile -D scope=fragment -D dim=1 -D reverse=True"},
    {"ops", "cumsum.py", "--kernel=cumsum_tile -D M=128 -D N=128 -D scope=fragment"},
    {"ops", "cumsum.py", "--kernel=cumsum_1d"},
    {"ops", "cumsum.py", "--kernel=cumsum_1d -D reverse=True -D scope=fragment"},
    {"ops", "cumsum.py", "--kernel=cumsum_ones"},
    {"ops", "cumsum.py", "--kernel=cumsum_tile -D op=cummax -D dim=1 -D reverse=True"},
    {"ops", "cumsum.py", "--kernel=cumsum_tile -D op=cummax -D scope=fragment"},
    {"ops", "cumsum.py", "--kernel=cumsum_tile -D op=cummax -D M=128 -D N=128 -D scope=shared_out -D dim=1"},
    {"ops", "cumsum.py", "--kernel=cummax_pattern"},
    {"ops", "transpose.py", "--kernel=tilelang_transpose"},
    {"ops", "transpose.py", "--kernel=tilelang_transpose -D M=256 -D N=256"},
    {"ops", "transpose.py", "--kernel=tilelang_transpose -D N=256 -D block_N=256"},
    {"ops", "transpose.py", "--kernel=transpose_square -D M=512"},
    {"ops", "transpose.py", "--kernel=transpose_iota"},
    {"ops", "reshape_view.py", "--kernel=reshape_global"},
    {"ops", "reshape_view.py", "--kernel=reshape_global -D N=2048 -D M=64 -D dtype=float16"},
    {"ops", "reshape_view.py", "--kernel=reshape_smem_1d_2_2d -D N=2048 -D M=64 -D dtype=float16"},
    {"ops", "reshape_view.py", "--kernel=reshape_smem_2d_2_1d"},
    {"ops", "reshape_view.py", "--kernel=reshape_fragment"},
    {"ops", "reshape_view.py", "--kernel=reshape_fragment -D N=2048 -D M=64 -D dtype=float16"},
    {"ops", "reshape_view.py", "--kernel=view_global"},
    {"ops", "reshape_view.py", "--kernel=view_elements"},
    {"ops", "reshape_view.py", "--kernel=reshape_fragment_iota"},
    {"ops", "reshape_view.py", "--kernel=view_dtype"},
    {"ops", "reshape_view.py", "--kernel=view_dtype -D N=2048 -D M=64 -D dtype=float16 -D new_dtype=float32"},
    {"ops", "reshape_view.py", "--kernel=view_dtype -D dtype=float32 -D new_dtype=int8"},
    {"ops", "reshape_view.py", "--kernel=view_dtype_round_trip"},
    {"ops", "reshape_view.py", "--kernel=view_dtype_one"},
    {"ops", "reinterpret.py", ""},
    {"ops", "reinterpret.py", "-D dtype=bfloat16 -D itype=uint16"},
    {"ops", "im2col.py", "--kernel=im2col_tiles"},
    {"ops", "im2col.py", "--kernel=im2col_tiles -D S=2 -D D=2 -D P=2 -D block_K=16"},
    {"ops", "fp8_cast.py", ""},
    {"ops", "fp8_cast.py", "-D dtype=float8_e5m2 -D scale=80000.0"},
    {"ops", "fp8_cast.py", "-D src=float16"},
    {"ops", "fp8_cast.py", "-D src=bfloat16 -D dtype=float8_e5m2"},
    /* the known device functions of T.call_extern (docs/language.md), inputs from tl-run's generator */
    {"ops", "call_extern.py", "--int-range 0:127"},
    {"ops", "call_extern.py", "-D n=2 -D sdtype=uint8 --int-range 0:255"},
    {"examples", "dequant_gemm.py", "-D w_dtype=float8_e4m3 -D M=256 -D N=512 -D K=512"},
    {"examples", "dequant_gemm.py", ""},
    {"examples", "dequant_gemm.py", "-D M=256 -D N=512 -D K=768 -D block_N=64 -D num_stages=2"},
    {"examples", "convolution.py", ""},
    {"examples", "convolution.py",
     "-D N=8 -D C=64 -D H=32 -D W=32 -D F=128 -D block_N=128 -D num_stages=3 "
     "-D threads=256"},
    /* the language of TileLang's examples (docs/language.md): several T.Kernel scopes, reducers, atomics
     * into shared memory, threads=(x, y), T.Tensor over another's data, guarded loads */
    {"ops", "multi_kernel.py", "--kernel=partial_then_combine"},
    {"ops", "multi_kernel.py", "--kernel=three_kernels"},
    {"ops", "multi_kernel.py", "--kernel=dynamic_two --dim n=1,100,1000"},
    {"ops", "multi_kernel.py", "--kernel=global_workspace"},
    {"ops", "reducer.py", "--kernel=rows"},
    {"ops", "reducer.py", "--kernel=rows -D op=max"},
    {"ops", "reducer.py", "--kernel=rows -D op=min"},
    {"ops", "reducer.py", "--kernel=wide"},
    {"ops", "reducer.py", "--kernel=gemm_rowmax"},
    {"ops", "reducer.py", "--kernel=per_row"},
    {"ops", "reducer.py", "--kernel=gemv"},
    {"ops", "reducer.py", "--kernel=gemv -D block_M=128 -D threads=256 -D num_stages=3"},
    {"ops", "atomic_shared.py", "--kernel=shared_pairs"},
    {"ops", "atomic_shared.py", "--kernel=histogram"},
    {"ops", "atomic_shared.py", "--kernel=shared_region"},
    {"ops", "atomic_shared.py", "--kernel=shared_max"},
    {"ops", "atomic_shared.py", "--kernel=corner_region"},
    {"ops", "thread_dims.py", ""},
    {"ops", "thread_dims.py", "-D N=96 -D K=160 -D BLOCK_N=8 -D reduce_threads=16"},
    {"ops", "tensor_data.py", ""},
    {"ops", "if_then_else_guard.py", ""},
    {"ops", "if_then_else_guard.py", "-D N=192 -D block=64 -D both=True"},
    {"ops", "pipelined_alloc.py", ""},
    {"ops", "pipelined_alloc.py", "-D hoisted=True"},
    {"ops", "pipelined_alloc.py", "-D num_stages=3 -D K=320"},
    /* issue 30: T.make_tensor over pointer tables of device addresses (tl-run --ptr-table fills them with the
     * device copies' slices), TileLang's sizes (batch sizes 16, 33, 64; K=128, N=96; 32x32x32 tiles); a
     * fragment stacked along a split dim (TileLang's mhc_pre_gemm_sqrsum) */
    {"ops", "make_tensor.py",
     "--out-idx=none --ptr-table A_ptrs=A_all --ptr-table B_ptrs=B_all --ptr-table C_ptrs=C_all -D K=128 -D N=96"},
    {"ops", "make_tensor.py",
     "--out-idx=none --ptr-table A_ptrs=A_all --ptr-table B_ptrs=B_all --ptr-table C_ptrs=C_all -D ws=1"},
    {"ops", "stacked_split.py", "--dim num_tokens=64,4096"},
    {"ops", "stacked_split.py", "--dim num_tokens=128 -D hc_hidden_size=1024"},
    /* T.sync_grid() (issue 30): each side one launch; a grid of 132 and of 1000 blocks (no co-residency needed) */
    {"ops", "sync_grid.py", "--kernel=grid_reverse"},
    {"ops", "sync_grid.py", "--kernel=grid_reverse -D N=64000 -D block=64"},
    {"ops", "sync_grid.py", "--kernel=persistent_partials"},
    {"ops", "sync_grid.py", "--kernel=persistent_partials -D sm_num=132 -D rows=1000 -D num_split=8 -D chunk=128"},
    {"ops", "sync_grid.py", "--kernel=thread_sides -D N=128000"},
    /* explicit warp specialisation and role branches (issue 30): T.ws scopes, T.alloc_barrier with
     * T.barrier_arrive / T.barrier_wait, branches on the warpgroup, uniform local buffers */
    {"ops", "warp_specialize.py", "--kernel=ws_ring"},
    {"ops", "warp_specialize.py", "--kernel=ws_halves"},
    {"ops", "warp_specialize.py", "--kernel=ws_gemm"},
    {"ops", "role_branches.py", "--kernel=rb_pair"},
    {"ops", "role_branches.py", "--kernel=rb_three"},
    {"ops", "role_branches.py", "--kernel=rb_wgmma"},
    {"ops", "role_uniform_var.py", "--kernel=ru_sparse --int-range 0:4"},
    {"ops", "role_uniform_var.py", "--kernel=ru_loop_scopes"},
    /* T.device_assert (issue 30): the asserts pass and the kernel runs */
    {"ops", "device_assert.py", ""},
    /* issue 30's constructs that had run on a GPU only inside TileLang's examples: T.print, T.gemm_sp, both
     * T.annotate_layout forms, the split-KV combine's row statistic read back in a 2-D T.Parallel, column
     * statistics, copied-in fragments read at other indices, T.Parallel beside T.get_thread_binding, the float8
     * 2xAcc promotion on sm_90a, fp4/int4 decoding, cp.async barrier rings, T.copy(annotations=) */
    {"ops", "print.py", ""},
    {"ops", "gemm_sp.py", "--int-range 0:5 --kernel=gemm_sp_tile"},
    {"ops", "annotate_layout.py", ""},
    {"ops", "annotate_layout.py", "-D use_gemm=True"},
    {"ops", "global_layout.py", ""},
    {"ops", "global_layout.py", "-D form=1"},
    {"ops", "split_kv_combine.py", ""},
    {"ops", "split_kv_combine.py", "-D num_split=3"},
    {"ops", "split_kv_combine.py", "-D form=1"},
    {"ops", "col_stats.py", ""},
    {"ops", "col_stats.py", "-D op=1 -D clear=0"},
    {"ops", "col_stats.py", "-D op=3 -D clear=0"},
    {"ops", "replicated_copy.py", ""},
    {"ops", "replicated_copy.py", "-D form=2 -D M=8 -D N=16"},
    {"ops", "replicated_vector.py", "-D form=1"},
    {"ops", "thread_range.py", "--kernel=mhc_pre_fuse"},
    {"ops", "thread_range.py", "--kernel=tr_small"},
    {"ops", "gemm_fp8_2xacc_hopper.py", ""},
    {"ops", "gemm_fp8_2xacc_hopper.py", "-D form=interval -D block_M=128 -D block_K=64 -D K=320 -D out_dtype=float32"},
    {"ops", "dequant_bits.py", ""},
    {"ops", "dequant_xfile.py", ""},
    {"ops", "cp_async_noinc.py", "--kernel=cpa_ring"},
    {"ops", "cp_async_noinc.py", "--kernel=cpa_gemm"},
    {"ops", "copy_annotations.py", ""},
    {"ops", "copy_annotations.py", "-D form=1"},
    /* sm_90a attention on more consumer threads than the kernel asks for (issue 31) */
    {"ops", "attention_widen.py", ""},
    {"ops", "attention_widen.py", "-D stats=True --out-idx=3,4"},
    {"ops", "attention_widen.py", "--pass-config=tl.disable_tma_lower"},
    {"ops", "attention_widen.py", "-D per_thread=True"},
};
/* Runs that must stop with an error (exit != 0, no check: PASS): a failing T.device_assert (thread 5) traps its
 * kernel (the driver reports CUDA_ERROR_ASSERT) */
static const op_case failing[] = {
    {"ops", "device_assert.py", "-D bad=5"},
};

static char tlrun[4096];

static int find_tl_run(const char *argv0) {
  const char *env = getenv("TL_RUN");
  if (env && *env) {
    snprintf(tlrun, sizeof tlrun, "%s", env);
    return access(tlrun, X_OK) == 0;
  }
  char self[4096];
  ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
  if (n <= 0) snprintf(self, sizeof self, "%s", argv0);
  else self[n] = 0;
  const char *dir = dirname(self);
  snprintf(tlrun, sizeof tlrun, "%s/tl-run", dir);
  if (access(tlrun, X_OK) == 0) return 1;
  snprintf(tlrun, sizeof tlrun, "%s/../tl-run", dir);
  return access(tlrun, X_OK) == 0;
}

/* One case's run: the child's pid and the file its output goes to. */
typedef struct running {
  pid_t pid;
  char log[64];
} running;

static int case_timeout = 180; /* s a case may run (TL_GPU_CASE_TIMEOUT): a hung kernel must not stop the rest */

/* Starts one case in the background (tl-run's output to a temporary file, under `timeout`); false when it
 * cannot start. */
static bool start_case(const op_case *c, const char *ops, running *r) {
  char cmd[8192];
  snprintf(cmd, sizeof cmd, "exec timeout -k 5 %d '%s' --device=cuda --check %s '%s/%s'", case_timeout, tlrun, c->args,
           strcmp(c->dir, "ops") ? kernel_dir() : ops, c->file);
  snprintf(r->log, sizeof r->log, "/tmp/tl_lang_ops_XXXXXX");
  int fd = mkstemp(r->log);
  if (fd < 0) return false;
  fflush(stdout);
  r->pid = fork();
  if (r->pid == 0) {
    dup2(fd, 1);
    dup2(fd, 2);
    close(fd);
    execl("/bin/sh", "sh", "-c", cmd, (char *)NULL);
    _exit(127);
  }
  close(fd);
  return r->pid > 0;
}

/* Waits for a started case and judges its output; true when it passes (must_fail: when it stops with an
 * error: exit != 0 and no check: PASS). */
static bool finish_case(const op_case *c, running *r, bool must_fail) {
  int st = -1;
  if (r->pid > 0) waitpid(r->pid, &st, 0);
  FILE *p = fopen(r->log, "r");
  char line[1024], last[1024] = "";
  int passes = 0, fails = 0;
  while (p && fgets(line, sizeof line, p)) {
    if (!strncmp(line, "check: PASS", 11)) passes++;
    if (strstr(line, "check: FAIL") || strstr(line, "error:")) fails++;
    if (strstr(line, "check:") || strstr(line, "error:")) snprintf(last, sizeof last, "%s", line);
  }
  if (p) fclose(p);
  unlink(r->log);
  bool exited0 = WIFEXITED(st) && WEXITSTATUS(st) == 0;
  bool timed_out = (WIFEXITED(st) && (WEXITSTATUS(st) == 124 || WEXITSTATUS(st) == 137)) ||
                   (WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL);
  if (timed_out) snprintf(last, sizeof last, "no end within %d s (TL_GPU_CASE_TIMEOUT): a hang\n", case_timeout);
  bool ok = must_fail ? !exited0 && !timed_out && passes == 0 : exited0 && passes > 0 && fails == 0;
  printf("%s %s %s%s: %s", ok ? "ok  " : "FAIL", c->file, c->args, must_fail ? " (must fail)" : "",
         last[0] ? last : "(no check line)\n");
  fflush(stdout);
  return ok;
}

/* Runs the cases, at most `jobs` at a time (each tl-run's CPU reference evaluation is single-threaded and
 * dominates; the GPU is shared, which correctness checks allow); prints the results in the table's order.
 * Returns the number of failures. */
static int run_cases(const op_case *cs, int n, const char *ops, bool must_fail, int jobs) {
  running *r = calloc((size_t)n, sizeof *r);
  if (!r) return n;
  int failures = 0, next = 0;
  for (int i = 0; i < n; i++) {
    while (next < n && next < i + jobs) {
      if (!start_case(&cs[next], ops, &r[next])) r[next].pid = -1;
      next++;
    }
    failures += !finish_case(&cs[i], &r[i], must_fail);
  }
  free(r);
  return failures;
}

int main(int argc, char **argv) {
  (void)argc;
  tl_context *ctx;
  if (tl_context_create(&ctx) != TL_OK) return 1;
  gpu_init(ctx); /* exit 77 without a GPU */
  if (!find_tl_run(argv[0])) {
    printf("FAIL: tl-run not found (set TL_RUN)\n");
    return 1;
  }
  const char *ops = ops_dir();
  int failures = 0, n = (int)(sizeof cases / sizeof cases[0]), nf = (int)(sizeof failing / sizeof failing[0]);
  const char *jenv = getenv("TL_GPU_JOBS");
  long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
  int jobs = jenv && atoi(jenv) > 0 ? atoi(jenv) : (int)(ncpu > 8 ? 8 : ncpu > 0 ? ncpu : 1);
  const char *tenv = getenv("TL_GPU_CASE_TIMEOUT");
  if (tenv && atoi(tenv) > 0) case_timeout = atoi(tenv);
  failures += run_cases(cases, n, ops, false, jobs);
  failures += run_cases(failing, nf, ops, true, jobs);
  printf("language ops on the GPU vs the reference evaluator: %d of %d pass\n", n + nf - failures, n + nf);
  tl_context_destroy(ctx);
  return failures ? 1 : 0;
}
