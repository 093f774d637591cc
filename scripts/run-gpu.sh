#!/usr/bin/env bash
# Runs every GPU test and benchmark of the bundle (build-device/, made by
# scripts/build-device.sh) with relative paths, on the GPU host.  Usage, from
# the repository root or from inside the bundle:
#   scripts/run-gpu.sh [BUNDLE_DIR]       (default: build-device, or . inside it)
# Each program's output goes to $OUT/gpu-logs/<name>.log (or
# BUNDLE/logs/<name>.log without $OUT); CSVs of the benchmarks go to $OUT.
# Exit codes: 0 pass, 77 skip (no driver/GPU), anything else fails.  A short
# table comes last; the script exits nonzero when any program failed.
# Issue 6 measurements come with it: bench_gemm (with the mma.sync
# reference timed interleaved in the same process, from the cubin built
# below; on an sm_90a device both of our paths, Hopper and mma.sync, next to
# cuBLAS), bench_compile, bench_launch (bin/bench_*), the Triton scripts
# (benchmarks/triton/gemm_triton.py, benchmarks/compile/triton_first_call.py;
# a SKIP line without python3/torch/Triton), tl-opt's whole-process time
# (benchmarks/compile/tl_opt_time.sh) and tl-run --tune on the 4096^3 GEMM (built-in table, and
# the 288-config @tilelang.autotune space twice: tune_autotune_288[_again]);
# their CSVs land in $OUT (plot them on the development machine with
# benchmarks/results/plot.sh).
# TL_GPU_ONLY=REGEX runs only the programs whose names match (bash =~), e.g.
#   TL_GPU_ONLY='bench_gemm|triton' scripts/run-gpu.sh
# so that a long batch can be split across several calls.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
if [[ $# -ge 1 ]]; then bundle=$1
elif [[ -d "$here/bin" && -d "$here/lib" ]]; then bundle=$here
else bundle=$here/../build-device
fi
cd "$bundle" || { echo "run-gpu: no bundle at $bundle" >&2; exit 2; }
if [[ -n "${OUT:-}" ]]; then logs=$OUT/gpu-logs; else logs=logs; fi
mkdir -p "$logs"
export TL_KERNEL_DIR=examples
# Compile-time and first-call figures are of real compiles: the kernel cache
# is off unless the caller sets TL_CACHE (test_kernel_cache sets its own).
export TL_CACHE=${TL_CACHE:-0}
[[ -n "${OUT:-}" ]] || export OUT=$PWD/logs

# The hand-written CUDA reference GEMM (reference/mma-gemm, copied by
# build-device.sh) is built with nvcc here, in the background while the
# tests run, twice: as its own program (mma_gemm_ref, run after the
# benchmarks with its own cuBLAS figure) and as a cubin that bench_gemm
# loads (TL_BENCH_REF_CUBIN) to time the reference interleaved with ours and
# cuBLAS in one process, the ratio of issue 6.
ref_pid=; cubin_pid=
ref_cubin=$PWD/reference/mma-gemm/mma_gemm.cubin
nvcc_bin=$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)
if [[ -f reference/mma-gemm/mma_gemm.cu && -x "$nvcc_bin" ]]; then
  ( "$nvcc_bin" -O3 -std=c++17 -gencode=arch=compute_90a,code=sm_90a -Xptxas -v \
      reference/mma-gemm/mma_gemm.cu -lcublas -o reference/mma-gemm/mma_gemm_ref >"$logs/mma_gemm_build.log" 2>&1 ) &
  ref_pid=$!
  rm -f "$ref_cubin"
  ( "$nvcc_bin" -O3 -std=c++17 -cubin -arch=sm_90a reference/mma-gemm/mma_gemm.cu -o "$ref_cubin" \
      >"$logs/mma_gemm_cubin_build.log" 2>&1 ) &
  cubin_pid=$!
fi

names=(); results=(); times=()
fail=0
run_one() {
  local name=$1; shift
  if [[ -n "${TL_GPU_ONLY:-}" && ! "$name" =~ ${TL_GPU_ONLY} ]]; then return 0; fi
  local t0 t1 rc
  t0=$(date +%s.%N)
  "$@" >"$logs/$name.log" 2>&1
  rc=$?
  t1=$(date +%s.%N)
  local res
  case $rc in
    0) res=PASS ;;
    77) res=SKIP ;;
    124|137) res="TIMEOUT"; fail=1 ;;
    *) res="FAIL($rc)"; fail=1 ;;
  esac
  names+=("$name"); results+=("$res"); times+=("$(awk -v a="$t0" -v b="$t1" 'BEGIN{printf "%.1f", b-a}')")
  echo "== $name: $res"
  tail -n 25 "$logs/$name.log"
}

# FlashAttention (issue 7): test_flash_attention writes its inputs and its
# best configuration's output here; benchmarks/attention/sdpa.py (after the
# benchmarks) checks them against PyTorch's SDPA, and times our kernel (through
# the Python package, one -D set, f16 and bf16) interleaved with SDPA's flash
# and cuDNN backends in its own process (bench_attention.csv).
fa_dump=$(mktemp -d "${TMPDIR:-/tmp}/tl_fa.XXXXXX")
export TL_FA_DUMP_DIR=$fa_dump
for t in bin/test_*; do
  [[ -x "$t" ]] || continue
  run_one "$(basename "$t")" timeout 600 "$t"
done
# bench_gemm times the reference from the cubin when it was built
if [[ -n "$cubin_pid" ]]; then
  if wait "$cubin_pid" && [[ -s "$ref_cubin" ]]; then
    export TL_BENCH_REF_CUBIN=$ref_cubin
  else
    echo "== mma_gemm.cubin: nvcc -cubin failed (see $logs/mma_gemm_cubin_build.log); bench_gemm runs without the reference"
    tail -5 "$logs/mma_gemm_cubin_build.log"
  fi
fi
for b in bin/bench_*; do
  [[ -x "$b" ]] || continue
  run_one "$(basename "$b")" timeout 600 "$b"
done
# the GEMM of TileLang's autotune example (B stored N x K, T.use_swizzle(10), C staged through shared memory:
# test/GPU/kernels/gemm_c_shared.py) against cuBLAS, f16 at four shapes and bf16 4096^3 (bench_gemm_c_shared.csv)
if [[ -x bin/bench_gemm ]]; then
  mkdir -p "$OUT/c_shared_bf16"
  run_one bench_gemm_c_shared env TL_BENCH_KERNEL=c_shared TL_BENCH_LAYOUTS=NT TL_BENCH_DTYPES=f16 \
    timeout 600 bin/bench_gemm 4096x4096x4096 8192x8192x8192 4096x11008x4096 2048x2048x2048
  run_one bench_gemm_c_shared_bf16 env TL_BENCH_KERNEL=c_shared TL_BENCH_LAYOUTS=NT TL_BENCH_DTYPES=bf16 \
    OUT="$OUT/c_shared_bf16" timeout 600 bin/bench_gemm 4096x4096x4096
fi

# examples/gemm.c: examples/gemm.py as written, then a 4096^3 configuration
if [[ -x bin/example_gemm ]]; then
  run_one example_gemm timeout 300 bin/example_gemm
  run_one example_gemm_4096 timeout 300 bin/example_gemm -D M=4096 -D N=4096 -D K=4096 \
    -D block_N=256 -D threads=256 -D num_stages=3
fi
# Triton (issue 6): the same GEMM shapes, and its first call next to ours
py=$(command -v python3 || true)
for s in benchmarks/triton/gemm_triton.py benchmarks/compile/triton_first_call.py; do
  n=$(basename "$s" .py)
  if [[ -z "$py" ]]; then
    echo "== $n: SKIP: no python3 on this host"; names+=("$n"); results+=(SKIP); times+=(0)
  elif [[ -f "$s" ]]; then
    run_one "$n" timeout 600 "$py" "$s"
  fi
done
# tl-opt --emit=ptx, the whole process (acceptance 2 is on a development
# machine; this is the GPU host's figure, default target = the GPU's)
if [[ -x bin/tl-opt && -f benchmarks/compile/tl_opt_time.sh ]]; then
  run_one tl_opt_time timeout 300 bash benchmarks/compile/tl_opt_time.sh bin/tl-opt examples/gemm.py examples/elementwise_add.py
fi
# tl-run --tune on the 4096^3 float16 GEMM of examples/gemm.py
if [[ -x bin/tl-run ]]; then
  run_one tune_gemm_4096 timeout 600 bin/tl-run --device=cuda --tune --bench -D M=4096 -D N=4096 -D K=4096 examples/gemm.py
  if [[ -f "$logs/tune_gemm_4096.log" ]]; then
    { echo "candidate,config,ms,tflops,result"
      awk '/^tune \[/ { idx=$2; gsub(/[\[\]]/, "", idx); cfg=$3; sub(/:$/, "", cfg)
             if ($5 == "ms") print idx "," cfg "," $4 "," $6 ",ok"; else { r=$4; sub(/:$/, "", r); print idx "," cfg ",,," r } }' "$logs/tune_gemm_4096.log"
    } >"$OUT/tune_gemm_4096.csv"
  fi
fi
# tl-run --tune of the 288-config @tilelang.autotune space of examples/tune/gemm_autotune.py at
# 4096^3 float16 (issue 16 acceptance 4: compile <= 10 s on the host's cores, the whole tune <= 60 s,
# a second tune <= 1 s): fresh kernel and tune caches, then the same tune again (a tune cache hit)
if [[ -x bin/tl-run && -f examples/tune/gemm_autotune.py ]]; then
  tune_cache=$(mktemp -d)
  # the compile alone (no driver loads, no timing) on every core, for the compile figure
  run_one tune_autotune_288_compile timeout 300 env TL_CACHE=0 bin/tl-run --tune-dry-run examples/tune/gemm_autotune.py
  [[ -f "$logs/tune_autotune_288_compile.log" ]] && grep -E '^tune: [0-9]+ configs' "$logs/tune_autotune_288_compile.log"
  for pass in 288 288_again; do
    run_one "tune_autotune_$pass" timeout 600 env TL_CACHE=1 TL_CACHE_DIR="$tune_cache" bin/tl-run --device=cuda --tune \
      examples/tune/gemm_autotune.py
    [[ -f "$logs/tune_autotune_$pass.log" ]] && grep -E '^tune: [0-9]+ configs|^tune: best' "$logs/tune_autotune_$pass.log"
  done
  rm -rf "$tune_cache"
fi

if [[ -n "$ref_pid" ]]; then
  if [[ -n "${TL_GPU_ONLY:-}" && ! mma_gemm_ref =~ ${TL_GPU_ONLY} ]]; then wait "$ref_pid"
  elif wait "$ref_pid" && [[ -x reference/mma-gemm/mma_gemm_ref ]]; then
    run_one mma_gemm_ref timeout 400 reference/mma-gemm/mma_gemm_ref se_128x256x32_s4 se_256x128x32_s4 --reps 60
  else
    echo "== mma_gemm_ref: nvcc build failed (see $logs/mma_gemm_build.log)"; tail -5 "$logs/mma_gemm_build.log"
  fi
fi

if [[ -f benchmarks/attention/sdpa.py ]]; then
  if command -v python3 >/dev/null; then
    run_one sdpa_attention timeout 600 python3 benchmarks/attention/sdpa.py --ours "$fa_dump" \
      --csv "$OUT/bench_attention.csv"
  else
    echo "== sdpa_attention: SKIP (no python3)"
  fi
fi
rm -rf "$fa_dump"

# The Python package (issue 17): examples/python on the GPU against PyTorch, TileLang's JIT GEMM test,
# non-default streams, CUDA-graph replay, host overhead of kernel(A, B) vs the C call (bench_launch.csv,
# written above).  SKIP (77) without python3/PyTorch.
if [[ -f test/GPU/python/run_python_gpu.sh ]]; then
  run_one python_gpu timeout 900 bash test/GPU/python/run_python_gpu.sh
  [[ -f "$logs/python_gpu.log" ]] && grep -E '^python-gpu: ' "$logs/python_gpu.log"
fi

for csv in "$OUT"/bench_*.csv "$OUT"/triton_first_call.csv "$OUT"/tune_gemm_4096.csv; do
  [[ -f "$csv" ]] || continue
  echo; echo "$(basename "$csv"):"; cat "$csv"
done
# GEMM ratios (issue 6 acceptance 1): ours (bench_gemm.csv, f16 NN) against
# cuBLAS in our process, and against the hand-written reference: preferably
# bench_gemm's own figure (columns 19-20 of bench_gemm.csv: ref_tflops,
# ours_over_ref; the reference timed interleaved with ours and cuBLAS in one
# process, whose cuBLAS then gives the reference's ratio too; ref_from
# "in-proc"), else the reference's own run (mma_gemm_ref.log, with its own
# cuBLAS figure; ref_from "own-run").
if [[ -f "$OUT/bench_gemm.csv" ]]; then
  echo
  echo "GEMM f16 NN: ours vs cuBLAS (same process) and vs the CUDA mma.sync reference (in-proc: same process, interleaved)"
  printf '%-18s %9s %9s %7s %9s %9s %7s %9s %9s %8s %s\n' MxNxK ours_TF cuBLAS_TF ours/cB ref_TF refcB_TF ref/cB ours/ref triton_TF ours/tri ref_from
  for sz in 4096x4096x4096 8192x8192x8192 4096x11008x4096; do
    IFS=x read -r m n k <<<"$sz"
    line=$(awk -F, -v m="$m" -v n="$n" -v k="$k" '$1=="float16" && $2=="NN" && $3==m && $4==n && $5==k {print $8, $10, ($19 != "" ? $19 : "-"), ($20 != "" ? $20 : "-")}' "$OUT/bench_gemm.csv")
    read -r ours cub inref inratio <<<"$line"
    ref=""; refcub=""; oref=""; from=""
    if [[ -n "${inref:-}" && "$inref" != "-" && -n "${inratio:-}" && "$inratio" != "-" ]]; then
      ref=$inref; refcub=$cub; oref=$inratio; from=in-proc
    elif [[ -f "$logs/mma_gemm_ref.log" ]]; then
      # final table of mma_gemm: size kernel TFLOP/s best ratio rel maxabs
      refcub=$(awk -v s="$sz" '$1==s && $2=="cuBLAS" {print $3; exit}' "$logs/mma_gemm_ref.log")
      ref=$(awk -v s="$sz" '$1==s && $2!~/^cuBLAS/ && $3+0>best {best=$3+0} END {if (best) print best}' "$logs/mma_gemm_ref.log")
      [[ -n "$ref" ]] && from=own-run
    fi
    tri=""
    if [[ -f "$OUT/bench_triton.csv" ]]; then
      tri=$(awk -F, -v m="$m" -v n="$n" -v k="$k" '$1=="float16" && $2=="NN" && $3==m && $4==n && $5==k {print $8}' "$OUT/bench_triton.csv")
    fi
    awk -v s="$sz" -v o="${ours:-0}" -v c="${cub:-0}" -v r="${ref:-0}" -v rc="${refcub:-0}" -v q="${oref:-}" \
        -v t="${tri:-0}" -v f="${from:--}" 'BEGIN {
      if (q == "") q = (r>0 ? o/r : 0)
      printf "%-18s %9.1f %9.1f %7.3f %9.1f %9.1f %7.3f %9.3f %9.1f %8.3f %s\n", s, o, c, (c>0?o/c:0), r, rc, (rc>0?r/rc:0), q, t, (t>0?o/t:0), f }'
  done
fi
# Every shape and dtype: ours / cuBLAS (acceptance 1: >= 0.5 everywhere;
# bf16 at the f16 ratio within 0.03), ours / Triton, and ours / the
# reference where bench_gemm timed it (column 20, ours_over_ref)
if [[ -f "$OUT/bench_gemm.csv" ]]; then
  echo
  echo "GEMM, every shape: ours/cuBLAS (same process), ours/Triton (Triton's run), ours/ref (same process, interleaved)"
  printf '%-9s %-3s %-18s %9s %9s %9s %8s %8s %8s\n' dtype lay MxNxK ours_TF cuBLAS_TF triton_TF ours/cB ours/tri ours/ref
  awk -F, 'FILENAME == ARGV[1] { if (FNR>1) tri[$1 FS $2 FS $3 FS $4 FS $5] = $8; next }
           FNR>1 { key = $1 FS $2 FS $3 FS $4 FS $5; t = (key in tri) ? tri[key] : 0
                   printf "%-9s %-3s %-18s %9.1f %9.1f %9.1f %8.3f %8.3f %8s\n", $1, $2, $3 "x" $4 "x" $5, $8, $10, t,
                          ($10 > 0 ? $8 / $10 : 0), (t > 0 ? $8 / t : 0), ($20 != "" ? $20 : "-") }' \
      "$( [[ -f "$OUT/bench_triton.csv" ]] && echo "$OUT/bench_triton.csv" || echo /dev/null)" "$OUT/bench_gemm.csv"
fi
# Both of our paths (issue 12), where bench_gemm timed two (a device whose
# default target is sm_90a): ours = the default compile (the Hopper path;
# ours_path, column 25, says whether its PTX has wgmma), mma = compiled with
# TL_COMPILE_DISABLE_WARP_SPECIALIZED (columns 26-33), each against cuBLAS
# timed interleaved in the same process; the geometric mean of ours/cuBLAS
# over the 4096^3 and 8192^3 rows (issue 12 acceptance 1)
if [[ -f "$OUT/bench_gemm.csv" ]] && awk -F, 'FNR>1 && $26 != "" {f=1} END {exit !f}' "$OUT/bench_gemm.csv"; then
  echo
  echo "GEMM, both of our paths: ours (default compile: Hopper path) and mma (mma.sync path) vs cuBLAS, one process, interleaved"
  printf '%-9s %-3s %-18s %-24s %-8s %9s %9s %8s %-24s %9s %8s %8s\n' dtype lay MxNxK config path ours_TF cuBLAS_TF ours/cB \
    mma_config mma_TF mma/cB ours/mma
  awk -F, 'FNR>1 { printf "%-9s %-3s %-18s %-24s %-8s %9.1f %9.1f %8.3f %-24s %9.1f %8.3f %8s\n", $1, $2, $3 "x" $4 "x" $5,
                          $6, ($25 != "" ? $25 : "-"), $8, $10, $11, ($26 != "" ? $26 : "-"), $28, $29,
                          ($33 != "" ? $33 : "-")
                 if ($4 == $3 && $5 == $3 && ($3 == 4096 || $3 == 8192) && $11 > 0) { lg += log($11); ng++
                   if (min == "" || $11 < min) min = $11 } }
           END { if (ng) printf "ours/cuBLAS at 4096^3 and 8192^3: geometric mean %.3f over %d rows, lowest %.3f (acceptance: >= 1.0, none below 0.95)\n",
                               exp(lg / ng), ng, min }' "$OUT/bench_gemm.csv"
fi
# Compile latency and launch overhead (acceptance 2 and 3)
if [[ -f "$OUT/bench_compile.csv" || -f "$OUT/bench_launch.csv" ]]; then
  echo
  echo "Latency (ms unless stated)"
  [[ -f "$OUT/bench_compile.csv" ]] && awk -F, '$3=="total" {printf "  compile %-16s %-7s in process, median: %8.2f\n", $1, $2, $5}
    $3=="load_module" {printf "  PTX -> module %-10s %-7s cache off, median: %8.2f\n", $1, $2, $5}
    $3=="first_call_total" {printf "  first call %-13s %-7s (context exists, cache off): %8.2f%s\n", $1, $2, $5, ($1 == "gemm" ? "  (acceptance: < 300 ms)" : "")}
    $3=="cached_compile" {printf "  compile %-16s %-7s kernel cache hit, in process, median: %8.3f\n", $1, $2, $5}
    $3=="first_call_warm_total" {printf "  first call %-13s %-7s (context exists, warm kernel + driver caches): %8.2f%s\n", $1, $2, $5, ($1 == "gemm" ? "  (issue 16: <= 5 ms)" : "")}' "$OUT/bench_compile.csv"
  [[ -f "$OUT/triton_first_call.csv" ]] && awk -F, 'NR>1 {printf "  Triton first call, %-6s cache (%sx%sx%s f16): %8.2f\n", $1, $2, $3, $4, $5}' "$OUT/triton_first_call.csv"
  [[ -f "$OUT/bench_tl_opt.csv" ]] && awk -F, 'NR>1 {printf "  tl-opt --emit=ptx %-28s whole process, median: %8.2f\n", $1, $3}' "$OUT/bench_tl_opt.csv"
  [[ -f "$OUT/bench_launch.csv" ]] && awk -F, 'NR>1 {printf "  launch %-8s (%2d params): tl_kernel_call %.3f us, bare cuLaunchKernel %.3f us, overhead %.3f us (issue 16: <= 0.5 us)\n", $1, $2, $5, $6, $7}' "$OUT/bench_launch.csv"
fi

echo
echo "GPU summary ($(date -u +%Y-%m-%dT%H:%M:%SZ), logs in $logs)"
printf '%-28s %-10s %8s\n' program result seconds
for i in "${!names[@]}"; do
  printf '%-28s %-10s %8s\n' "${names[$i]}" "${results[$i]}" "${times[$i]}"
done
exit $fail
