#!/usr/bin/env bash
# Before/after timing of a change that alters a kernel's launch (its path, its threads or its parameters), where
# scripts/ptx-ab.sh cannot load both PTX texts behind one launch: two bundles (scripts/build-device.sh of the
# old tree and of the new), each `bin/tl-run --device=cuda --bench` of the same kernel, run alternately ROUNDS
# times on one GPU (old, new, old, new, ...); prints each run's time_ms and the medians and new/old.
# Separate processes, so clocks can differ between runs: the alternation and the median are what make it
# fair; a same-process anchor (cuBLAS, cuDNN, TileLang) stays the better figure where one exists.
#   scripts/ab-bundles.sh OLD_BUNDLE NEW_BUNDLE ROUNDS TL_RUN_ARGS...
# e.g. scripts/ab-bundles.sh /tmp/old/build-device /tmp/new/build-device 5 examples/flash_attention.py
# (kernel paths relative to each bundle, or absolute).  Exit 1 when a run fails or prints no time_ms.
set -uo pipefail
old=${1:?usage: ab-bundles.sh OLD_BUNDLE NEW_BUNDLE ROUNDS TL_RUN_ARGS...}
new=${2:?usage: ab-bundles.sh OLD_BUNDLE NEW_BUNDLE ROUNDS TL_RUN_ARGS...}
rounds=${3:?usage: ab-bundles.sh OLD_BUNDLE NEW_BUNDLE ROUNDS TL_RUN_ARGS...}
shift 3
declare -A times=([old]="" [new]="")
for ((r = 1; r <= rounds; r++)); do
  for side in old new; do
    dir=$old; [[ $side == new ]] && dir=$new
    out=$(cd "$dir" && TL_KERNEL_DIR=examples TL_CACHE=0 timeout 300 bin/tl-run --device=cuda --bench "$@" 2>&1)
    t=$(grep -oE "time_ms=[0-9.]+" <<<"$out" | tail -1 | cut -d= -f2)
    if [[ -z $t ]]; then echo "$side round $r: no time_ms"; tail -5 <<<"$out"; exit 1; fi
    echo "$side round $r: time_ms=$t"
    times[$side]+="$t "
  done
done
median() { tr ' ' '\n' <<<"$1" | grep -v '^$' | sort -g | awk '{a[NR]=$1} END {print (NR % 2) ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2}'; }
mo=$(median "${times[old]}") mn=$(median "${times[new]}")
awk -v o="$mo" -v n="$mn" 'BEGIN {printf "median old %.4f ms, new %.4f ms, new/old time %.3f (speed-up %.3f)\n", o, n, n/o, o/n}'
