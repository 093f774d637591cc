#!/usr/bin/env bash
# Round trip of every kernel file in the repository (issue 2, point 2): for each
# .py under the given directories that tl-opt accepts, `tl-opt F | tl-opt -`
# must print exactly what `tl-opt F` prints, and the output must be canonical
# (no comments, a bare @T.prim_func, no factory).  Files that are meant to be
# rejected (the error tests) must fail with exit 1 and a diagnostic.
# Usage: roundtrip.sh TL_OPT DIR...
set -uo pipefail
tlopt=$1; shift
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
ok=0 rejected=0 bad=0
while IFS= read -r f; do
  "$tlopt" "$f" >"$tmp/a" 2>"$tmp/err"; rc=$?
  if [[ $rc -ne 0 ]]; then
    if [[ $rc -eq 1 ]] && grep -q "error:" "$tmp/err"; then rejected=$((rejected + 1)); continue; fi
    echo "FAIL $f: exit $rc"; cat "$tmp/err"; bad=$((bad + 1)); continue
  fi
  if ! "$tlopt" - <"$tmp/a" >"$tmp/b" 2>"$tmp/err"; then
    echo "FAIL $f: printed text does not parse:"; cat "$tmp/err"; bad=$((bad + 1)); continue
  fi
  if ! cmp -s "$tmp/a" "$tmp/b"; then
    echo "FAIL $f: print(parse(print(x))) != print(x)"; diff "$tmp/a" "$tmp/b" | head; bad=$((bad + 1)); continue
  fi
  if grep -q '#' "$tmp/a" || grep -q '@tilelang.jit' "$tmp/a" || ! grep -q '^@T.prim_func$' "$tmp/a"; then
    echo "FAIL $f: output is not canonical"; bad=$((bad + 1)); continue
  fi
  ok=$((ok + 1))
done < <(find "$@" -name '*.py' -not -path '*/Inputs/*' | sort)
echo "round trip: $ok files identical, $rejected rejected with a diagnostic, $bad failures"
[[ $bad -eq 0 && $ok -gt 0 ]]
