#!/usr/bin/env bash
# Before/after timing of the kernels a compiler change alters (the guide: "a
# before/after comparison loads the old PTX and the new in one process,
# interleaved"), in two steps:
#   scripts/ptx-ab.sh make OLD_TLOPT NEW_TLOPT DIR [VARIANTS] [TARGET]
#       (development machine) emits --target=TARGET (default sm_90a) PTX of every
#       variant of VARIANTS (default scripts/baseline-variants.txt: FILE [-D ...] a
#       line) with both tl-opt binaries and keeps, under DIR, the pairs that differ:
#       DIR/NNN.old.ptx, DIR/NNN.new.ptx and a line "NNN TARGET FILE [-D ...]" in
#       DIR/cases.txt; identical pairs are only counted.
#   scripts/ptx-ab.sh run DIR [PTX_AB]
#       (GPU host, from the repository root or the bundle, where the kernel files
#       lie at the same relative paths) runs PTX_AB (default bin/ptx_ab, else
#       build-device/bin/ptx_ab) on every pair: the NEW compiler's build of the
#       kernel supplies the launch (grid, threads, shared memory, parameters), so
#       the pairs must come from changes that keep those (ptx_ab refuses a
#       parameter list that differs; it reports the outputs' largest difference).
# The OLD/NEW tl-opt must accept --emit=ptx --target=T [-D ...] FILE.
set -uo pipefail
mode=${1:-}
case "$mode" in
  make)
    old=$2 new=$3 dir=$4 variants=${5:-scripts/baseline-variants.txt} target=${6:-sm_90a}
    mkdir -p "$dir"; : >"$dir/cases.txt"
    n=0 same=0 differ=0
    while IFS= read -r line; do
      line=${line%%#*}
      [[ -z "${line// }" ]] && continue
      read -r -a argv <<<"$line"
      n=$((n + 1)); id=$(printf '%03d' "$n")
      if ! "$old" --emit=ptx --target="$target" "${argv[@]:1}" "${argv[0]}" >"$dir/$id.old.ptx" 2>/dev/null ||
         ! "$new" --emit=ptx --target="$target" "${argv[@]:1}" "${argv[0]}" >"$dir/$id.new.ptx" 2>/dev/null; then
        rm -f "$dir/$id".*.ptx; continue            # a variant one side refuses: nothing to time
      fi
      if cmp -s "$dir/$id.old.ptx" "$dir/$id.new.ptx"; then
        same=$((same + 1)); rm -f "$dir/$id".*.ptx
      else
        differ=$((differ + 1)); echo "$id $target $line" >>"$dir/cases.txt"
      fi
    done <"$variants"
    echo "ptx-ab make: $n variants at $target: $differ differ (kept in $dir), $same identical"
    ;;
  run)
    dir=$2 bin=${3:-}
    [[ -z "$bin" ]] && { [[ -x bin/ptx_ab ]] && bin=bin/ptx_ab || bin=build-device/bin/ptx_ab; }
    fail=0
    while read -r id target file rest; do
      [[ -z "$id" ]] && continue
      # shellcheck disable=SC2086
      "$bin" --target="$target" --label="$file $rest" $rest "$file" "$dir/$id.old.ptx" "$dir/$id.new.ptx" || fail=1
    done <"$dir/cases.txt"
    exit $fail
    ;;
  *) echo "usage: $0 make OLD_TLOPT NEW_TLOPT DIR [VARIANTS] [TARGET] | run DIR [PTX_AB]" >&2; exit 2 ;;
esac
