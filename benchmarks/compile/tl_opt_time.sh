#!/usr/bin/env bash
# Whole-process time of `tl-opt --emit=ptx FILE` (issue 6, acceptance 2: under
# 50 ms for examples/gemm.py with the default target on a development
# machine): process start, dynamic loading of libtilelang (and LLVM),
# parse, lowering, LLVM, PTX, writing the output.  Median of RUNS runs (30
# by default, >= 20) after 3 untimed ones, timed with bash's $EPOCHREALTIME
# around each run (no extra process inside the interval); with hyperfine
# installed (scripts/install-deps.sh does not install it) its median is
# printed too.
# Usage: benchmarks/compile/tl_opt_time.sh [TL_OPT] [FILE...]
#   TL_OPT default: build/tl-opt, else bin/tl-opt (the GPU bundle), else tl-opt on PATH
#   FILE default: examples/gemm.py examples/elementwise_add.py
#   RUNS=N in the environment changes the number of runs; TL_OPT_ARGS adds
#   options (e.g. --target=sm_90a).
# Output: a table and $OUT/bench_tl_opt.csv (or ./bench_tl_opt.csv).
set -uo pipefail
tlopt=${1:-}
if [[ -z "$tlopt" ]]; then
  for c in build/tl-opt bin/tl-opt "$(command -v tl-opt || true)"; do
    [[ -n "$c" && -x "$c" ]] && { tlopt=$c; break; }
  done
fi
[[ $# -ge 1 ]] && shift
if [[ -z "$tlopt" || ! -x "$tlopt" ]]; then
  echo "tl_opt_time: no tl-opt found (pass its path)" >&2
  exit 2
fi
files=("$@")
[[ ${#files[@]} -gt 0 ]] || files=(examples/gemm.py examples/elementwise_add.py)
runs=${RUNS:-30}
(( runs >= 20 )) || runs=20
read -r -a extra <<<"${TL_OPT_ARGS:-}"
outdir=${OUT:-.}
csv=$outdir/bench_tl_opt.csv
echo "file,args,median_ms,min_ms,max_ms,runs,host" >"$csv"
host="$(uname -n | tr ',' ' ') $(nproc)cpu"
printf 'tl_opt_time: %s, %d runs each, host %s\n' "$tlopt" "$runs" "$host"
printf '%-32s %10s %10s %10s\n' file median_ms min_ms max_ms
for f in "${files[@]}"; do
  if ! "$tlopt" --emit=ptx "${extra[@]}" "$f" -o /dev/null; then
    echo "tl_opt_time: tl-opt failed on $f" >&2
    exit 1
  fi
  for _ in 1 2; do "$tlopt" --emit=ptx "${extra[@]}" "$f" -o /dev/null; done
  times=()
  for ((i = 0; i < runs; i++)); do
    t0=$EPOCHREALTIME
    "$tlopt" --emit=ptx "${extra[@]}" "$f" -o /dev/null
    t1=$EPOCHREALTIME
    times+=("$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.3f", (b - a) * 1000 }')")
  done
  read -r med mn mx < <(printf '%s\n' "${times[@]}" | sort -g | awk '
    { v[NR] = $1 } END { m = NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2;
                         printf "%.2f %.2f %.2f\n", m, v[1], v[NR] }')
  printf '%-32s %10s %10s %10s\n' "$f" "$med" "$mn" "$mx"
  echo "$f,${TL_OPT_ARGS:-},$med,$mn,$mx,$runs,$host" >>"$csv"
  if command -v hyperfine >/dev/null 2>&1; then
    hyperfine -N -w 3 -r "$runs" --export-json /tmp/tl_opt_hf.$$.json \
      "$tlopt --emit=ptx ${TL_OPT_ARGS:-} $f -o /dev/null" >/dev/null 2>&1 &&
      python3 -c "import json,sys; r=json.load(open(sys.argv[1]))['results'][0]; print('  hyperfine median %.2f ms (mean %.2f)' % (r['median']*1e3, r['mean']*1e3))" /tmp/tl_opt_hf.$$.json
    rm -f /tmp/tl_opt_hf.$$.json
  fi
done
echo "csv: $csv"
