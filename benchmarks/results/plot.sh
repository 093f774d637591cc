#!/usr/bin/env bash
# Draws the GEMM results of one GPU run as a PNG with gnuplot (on the
# development machine; the GPU host has no gnuplot): TFLOP/s by shape for
# ours, cuBLAS (both from bench_gemm.csv, one process) and Triton
# (bench_triton.csv, benchmarks/triton/gemm_triton.py, same run), one panel
# per dtype and layout (float16/bfloat16 x NN/NT).  Where bench_gemm timed
# both of our paths (sm_90a: ours is the Hopper path, column 28 mma_tflops
# the mma.sync path), a bar "ours (mma.sync)" too.
# Usage: benchmarks/results/plot.sh [DIR] [OUT.png]
#   DIR: where the CSVs are (default: benchmarks/results/latest); a missing
#        bench_triton.csv leaves the Triton bars out.
#   OUT.png: default DIR/gemm_tflops.png.  The joined data is left in
#        DIR/gemm_plot.dat.
# Needs gnuplot (gnuplot-nox, scripts/install-deps.sh); no test uses it.
set -euo pipefail
dir=${1:-benchmarks/results/latest}
png=${2:-$dir/gemm_tflops.png}
gemm=$dir/bench_gemm.csv
tri=$dir/bench_triton.csv
if ! command -v gnuplot >/dev/null 2>&1; then
  echo "plot.sh: gnuplot not found (apt-get install gnuplot-nox)" >&2
  exit 1
fi
if [[ ! -f "$gemm" ]]; then
  echo "plot.sh: no $gemm" >&2
  exit 1
fi
[[ -f "$tri" ]] || tri=/dev/null
dat=$dir/gemm_plot.dat
# one block per dtype/layout (separated by two blank lines, for gnuplot's
# `index`): shape ours cublas triton mma (0 where not timed)
awk -F, '
  FILENAME == ARGV[1] { if (FNR > 1) t[$1 FS $2 FS $3 FS $4 FS $5] = $8; next }
  FNR > 1 {
    key = $1 FS $2; k5 = $1 FS $2 FS $3 FS $4 FS $5
    if (!(key in seen)) { seen[key] = ++nb; name[nb] = key }
    row[key] = row[key] sprintf("%s %.1f %.1f %.1f %.1f\n", $3 "x" $4 "x" $5, $8 + 0, $10 + 0,
                                (k5 in t) ? t[k5] : 0, $28 + 0)
  }
  END {
    order[1] = "float16,NN"; order[2] = "float16,NT"; order[3] = "bfloat16,NN"; order[4] = "bfloat16,NT"
    for (i = 1; i <= 4; i++) {
      k = order[i]; gsub(",", FS, k)
      printf "# %s\n", order[i]
      if (k in row) printf "%s", row[k]; else printf "none 0 0 0 0\n"
      printf "\n\n"
    }
  }' "$tri" "$gemm" >"$dat"
# the fifth bar (and "ours" named for the Hopper path) only where bench_gemm
# timed both of our paths
ours_title=ours; mma_plot=
if awk -F, 'FNR>1 && $26 != "" {f=1} END {exit !f}' "$gemm"; then
  ours_title="ours (Hopper path)"
  mma_plot=', "" index i using 5 title "ours (mma.sync)" lc rgb "#2ca02c"'
fi
title="GEMM TFLOP/s"
[[ -f "$dir/RUN.txt" ]] && title="$title — $(head -1 "$dir/RUN.txt")"
gnuplot <<GP
set terminal pngcairo size 1600,1000 font ",10" noenhanced
set output "$png"
set multiplot layout 2,2 title "$title"
set style data histograms
set style histogram clustered gap 1
set style fill solid 0.85 border -1
set boxwidth 0.9
set ylabel "TFLOP/s"
set yrange [0:*]
set offsets 0, 0, graph 0.1, 0
set grid ytics
set xtics rotate by -30 scale 0
set key top left
names = "float16-NN float16-NT bfloat16-NN bfloat16-NT"
do for [i=0:3] {
  set title word(names, i+1)
  plot "$dat" index i using 2:xtic(1) title "$ours_title" lc rgb "#1f77b4", \
       "" index i using 3 title "cuBLAS" lc rgb "#7f7f7f", \
       "" index i using 4 title "Triton" lc rgb "#ff7f0e"$mma_plot
}
unset multiplot
GP
echo "plot.sh: wrote $png (data $dat)"
