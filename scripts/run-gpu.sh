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

for csv in "$OUT"/bench_*.csv; do
  [[ -f "$csv" ]] || continue
  echo; echo "$(basename "$csv"):"; cat "$csv"
done
echo
echo "GPU summary ($(date -u +%Y-%m-%dT%H:%M:%SZ), logs in $logs)"
printf '%-28s %-10s %8s\n' program result seconds
for i in "${!names[@]}"; do
  printf '%-28s %-10s %8s\n' "${names[$i]}" "${results[$i]}" "${times[$i]}"
done
exit $fail
