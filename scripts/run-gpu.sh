#!/usr/bin/env bash
# Runs every GPU test and benchmark of the bundle (build-device/, made by
# scripts/build-device.sh) with relative paths, on the GPU host.  Usage, from
# the repository root or from inside the bundle:
#   scripts/run-gpu.sh [BUNDLE_DIR]       (default: build-device, or . inside it)
# Each program's output goes to $OUT/gpu-logs/<name>.log (or
# BUNDLE/logs/<name>.log without $OUT); CSVs of the benchmarks go to $OUT.
# Exit codes: 0 pass, 77 skip (no driver/GPU), anything else fails.  A short
# table comes last; the script exits nonzero when any program failed.
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
[[ -n "${OUT:-}" ]] || export OUT=$PWD/logs

# The hand-written CUDA reference GEMM (reference/mma-gemm, copied by
# build-device.sh) is built with nvcc here, in the background while the
# tests run, and run after the benchmarks for the ratio of issue 6.
ref_pid=
nvcc_bin=$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)
if [[ -f reference/mma-gemm/mma_gemm.cu && -x "$nvcc_bin" ]]; then
  ( "$nvcc_bin" -O3 -std=c++17 -gencode=arch=compute_90a,code=sm_90a -Xptxas -v \
      reference/mma-gemm/mma_gemm.cu -lcublas -o reference/mma-gemm/mma_gemm_ref >"$logs/mma_gemm_build.log" 2>&1 ) &
  ref_pid=$!
fi

names=(); results=(); times=()
fail=0
run_one() {
  local name=$1; shift
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

for t in bin/test_*; do
  [[ -x "$t" ]] || continue
  run_one "$(basename "$t")" timeout 600 "$t"
done
for b in bin/bench_*; do
  [[ -x "$b" ]] || continue
  run_one "$(basename "$b")" timeout 600 "$b"
done

# examples/gemm.c: examples/gemm.py as written, then a 4096^3 configuration
if [[ -x bin/example_gemm ]]; then
  run_one example_gemm timeout 300 bin/example_gemm
  run_one example_gemm_4096 timeout 300 bin/example_gemm -D M=4096 -D N=4096 -D K=4096 \
    -D block_N=256 -D threads=256 -D num_stages=3
fi
if [[ -n "$ref_pid" ]]; then
  if wait "$ref_pid" && [[ -x reference/mma-gemm/mma_gemm_ref ]]; then
    run_one mma_gemm_ref timeout 400 reference/mma-gemm/mma_gemm_ref se_128x256x32_s4 se_256x128x32_s4 --reps 60
  else
    echo "== mma_gemm_ref: nvcc build failed (see $logs/mma_gemm_build.log)"; tail -5 "$logs/mma_gemm_build.log"
  fi
fi

for csv in "$OUT"/bench_*.csv; do
  [[ -f "$csv" ]] || continue
  echo; echo "$(basename "$csv"):"; cat "$csv"
done
# GEMM ratios (issue 6 acceptance 1): ours (bench_gemm.csv, f16 NN) against
# cuBLAS in our process, and against the hand-written reference, whose own
# cuBLAS figure from its process gives the reference's ratio.
if [[ -f "$OUT/bench_gemm.csv" ]]; then
  echo
  echo "GEMM f16 NN: ours vs cuBLAS (same process) and vs the CUDA mma.sync reference (same run)"
  printf '%-18s %9s %9s %7s %9s %9s %7s %9s\n' MxNxK ours_TF cuBLAS_TF ours/cB ref_TF refcB_TF ref/cB ours/ref
  for sz in 4096x4096x4096 8192x8192x8192 4096x11008x4096; do
    IFS=x read -r m n k <<<"$sz"
    line=$(awk -F, -v m="$m" -v n="$n" -v k="$k" '$1=="float16" && $2=="NN" && $3==m && $4==n && $5==k {print $8, $10}' "$OUT/bench_gemm.csv")
    read -r ours cub <<<"$line"
    ref=""; refcub=""
    if [[ -f "$logs/mma_gemm_ref.log" ]]; then
      # final table of mma_gemm: size kernel TFLOP/s best ratio rel maxabs
      refcub=$(awk -v s="$sz" '$1==s && $2=="cuBLAS" {print $3; exit}' "$logs/mma_gemm_ref.log")
      ref=$(awk -v s="$sz" '$1==s && $2!~/^cuBLAS/ && $3+0>best {best=$3+0} END {if (best) print best}' "$logs/mma_gemm_ref.log")
    fi
    awk -v s="$sz" -v o="${ours:-0}" -v c="${cub:-0}" -v r="${ref:-0}" -v rc="${refcub:-0}" 'BEGIN {
      printf "%-18s %9.1f %9.1f %7.3f %9.1f %9.1f %7.3f %9.3f\n", s, o, c, (c>0?o/c:0), r, rc, (rc>0?r/rc:0), (r>0?o/r:0) }'
  done
fi

echo
echo "GPU summary ($(date -u +%Y-%m-%dT%H:%M:%SZ), logs in $logs)"
printf '%-28s %-10s %8s\n' program result seconds
for i in "${!names[@]}"; do
  printf '%-28s %-10s %8s\n' "${names[$i]}" "${results[$i]}" "${times[$i]}"
done
exit $fail
