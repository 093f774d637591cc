#!/usr/bin/env bash
# Compares the SIMT IR and the PTX of every kernel variant listed in
# scripts/baseline-variants.txt (sm_80 and sm_90a) between this tree's build and
# a baseline commit (default 823d91b, the last commit before the house
# refactor of issue 11).  The baseline tl-opt is built once, from a git
# worktree of that commit, in build-baseline/<commit>/ (or given by
# TL_BASELINE_TLOPT).  Exit 0 when every output is byte-identical, 1 when any
# differs (the differing variants are listed, with diffs under build-baseline/diff/).
# Standard error is compared too, so a variant both refuse must be refused alike.
# The PTX's .loc / .file lines (line information) are left out of the comparison.
#
# usage: scripts/compare-baseline.sh [--base REV] [--build DIR]
set -euo pipefail
export TL_CACHE=${TL_CACHE:-0}  # compiles are real and the user's kernel cache stays untouched
cd "$(dirname "$0")/.."
ROOT=$PWD
BASE=823d91b
BUILD=build
while [ $# -gt 0 ]; do
  case "$1" in
    --base) BASE=$2; shift 2 ;;
    --build) BUILD=$2; shift 2 ;;
    *) echo "usage: $0 [--base REV] [--build DIR]" >&2; exit 2 ;;
  esac
done
NEW=$ROOT/$BUILD/tl-opt
[ -x "$NEW" ] || { echo "error: $NEW not built (cmake --build $BUILD --target tl-opt)" >&2; exit 2; }

OLD=${TL_BASELINE_TLOPT:-}
if [ -z "$OLD" ]; then
  rev=$(git rev-parse --short=7 "$BASE")
  bdir=$ROOT/build-baseline/$rev
  OLD=$bdir/build/tl-opt
  if [ ! -x "$OLD" ]; then
    echo "building the baseline tl-opt at $rev in $bdir ..." >&2
    rm -rf "$bdir/src"; mkdir -p "$bdir"
    git worktree add --detach -f "$bdir/src" "$rev" >/dev/null
    cmake -S "$bdir/src" -B "$bdir/build" -DTL_BUILD_TESTS=OFF >/dev/null
    cmake --build "$bdir/build" -j "${JOBS:-$(nproc)}" --target tl-opt >/dev/null
    git worktree remove --force "$bdir/src" || true
  fi
fi

# The line information of the PTX (issue 32) is not compared: the .file / .loc
# directives, the $L__func_begin/$L__func_end/$L__tmp labels the backend puts
# around a function's debug range and the empty .debug_loc section (a baseline
# from before it has none of them; a refactor that moves no source line keeps
# them anyway, and ptx_determinism.sh compares whole texts).  What is left is
# the PTX of --no-line-info, byte for byte.
strip_lines() {
  sed -E -e '/^[[:space:]]*\.(loc|file)[[:space:]]/d' -e '/^\$L__(func_begin|func_end|tmp)[0-9]+:$/d' \
    -e '/^[[:space:]]*\.section[[:space:]]+\.debug_loc[[:space:]]*\{[[:space:]]*\}$/d'
}

out=$ROOT/build-baseline/diff
rm -rf "$out"; mkdir -p "$out"
n=0; bad=0
while IFS= read -r line; do
  line=${line%%#*}
  [ -z "${line// }" ] && continue
  read -r -a argv <<<"$line"
  file=${argv[0]}; defs=("${argv[@]:1}")
  for tgt in sm_80 sm_90a; do
    for emit in simt ptx; do
      n=$((n + 1))
      tag=$(echo "$file ${defs[*]:-} $tgt $emit" | tr -c 'A-Za-z0-9_.=\n' '_')
      "$OLD" --emit=$emit --target=$tgt "${defs[@]}" "$file" 2>"$out/$tag.olderr" | strip_lines >"$out/$tag.old" || true
      "$NEW" --emit=$emit --target=$tgt "${defs[@]}" "$file" 2>"$out/$tag.newerr" | strip_lines >"$out/$tag.new" || true
      # identical output, or the same diagnostics for a variant both refuse
      if cmp -s "$out/$tag.old" "$out/$tag.new" && cmp -s "$out/$tag.olderr" "$out/$tag.newerr"; then
        rm -f "$out/$tag".*
      else
        bad=$((bad + 1))
        diff "$out/$tag.old" "$out/$tag.new" >"$out/$tag.diff" || true
        echo "DIFF: $file ${defs[*]:-} --target=$tgt --emit=$emit ($(wc -l <"$out/$tag.diff") diff lines; $out/$tag.diff)"
      fi
    done
  done
done <scripts/baseline-variants.txt
echo "compare-baseline: $n outputs compared against $BASE, $bad differ"
[ "$bad" -eq 0 ]
