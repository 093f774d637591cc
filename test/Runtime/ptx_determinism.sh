#!/usr/bin/env bash
# PTX determinism (issue 16): the kernel cache's key stands for a PTX text,
# so the same input must give byte-identical PTX in every process (no
# pointer-keyed iteration order, no timestamps; the CUDA driver's JIT cache
# keys on the text too).  Every example (*.py in each DIR) is compiled by 3
# separate tl-opt processes with the cache off, for sm_80 and sm_90a, and
# the three PTX texts are compared byte for byte.  A target the example
# refuses (tl-opt fails in every process alike) is skipped; a difference
# or a failure in only some processes fails the test.  With --variants FILE
# (scripts/baseline-variants.txt: FILE [-D NAME=VALUE]... a line, paths
# relative to the current directory) each listed variant is checked too, so
# that the examples whose factories need -D values (examples/python) and the
# shapes and configurations the GPU tests use are covered.
# Usage: ptx_determinism.sh TL_OPT [--variants FILE] DIR...
set -uo pipefail
tlopt=$1
shift
variants=
if [[ "${1:-}" == --variants ]]; then variants=$2; shift 2; fi
export TL_CACHE=0
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
checked=0 failed=0
# check NAME FILE [ARGS...]: 3 processes, both targets
check() {
  local base=$1 f=$2
  shift 2
  for t in sm_80 sm_90a; do
    local name="$base@$t" ok=0
    for i in 1 2 3; do
      "$tlopt" --emit=ptx --target=$t "$@" "$f" -o "$tmp/$i.ptx" 2>/dev/null && ok=$((ok + 1))
    done
    if ((ok == 0)); then echo "skip  $name (does not compile for $t)"; continue; fi
    if ((ok != 3)) || ! cmp -s "$tmp/1.ptx" "$tmp/2.ptx" || ! cmp -s "$tmp/1.ptx" "$tmp/3.ptx"; then
      echo "FAIL  $name: the PTX differs between processes ($ok of 3 compiled)"
      failed=$((failed + 1))
    else
      checked=$((checked + 1))
    fi
    rm -f "$tmp"/*.ptx
  done
}
for d in "$@"; do
  for f in "$d"/*.py; do check "$(basename "$f" .py)" "$f"; done
done
if [[ -n "$variants" ]]; then
  while IFS= read -r line; do
    line=${line%%#*}
    [[ -z "${line// }" ]] && continue
    read -r -a argv <<<"$line"
    check "${argv[*]}" "${argv[0]}" "${argv[@]:1}"
  done <"$variants"
fi
echo "ptx_determinism: $checked identical, $failed differ"
((failed == 0 && checked > 0))
